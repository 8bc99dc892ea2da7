"""Reference twins of the moving order statistics (``axisops.moving_order``) and of
their gradients: obviously right, slow, NumPy only.

Every window is materialised: the axis is moved to the end, ``window - 1``
missing elements are put in front of it, and ``sliding_window_view`` gives each
position its trailing window. Each window's values that are not NaN are sorted
by ``numpy.argsort(kind="stable")`` (so -0.0 and +0.0 tie, and equal values keep
the lower index first), in the input's own dtype (integers exact), then:

* median: the middle value of an odd count (that element's value), ``(a + b) /
  2`` in float64 of the two middle ones of an even count;
* quantile: ``idx = q * (c - 1)``, ``lo = floor(idx)``: ``v[lo]`` where ``idx``
  is whole, else ``v[lo] + (v[lo + 1] - v[lo]) * (idx - lo)`` in float64;
* rank: bottleneck's ``move_rank`` of the latest element: ``2 * (0.5 * (2 * less
  + equal - 1) / (c - 1) - 0.5)``, 0 for one value, NaN for a NaN latest element.

Fewer than ``min_count`` values: NaN. Float inputs keep their dtype (rounded once
from float64), integer and bool inputs give float64.

The gradients put ``g`` back at the elements chosen: all of it at the median of
an odd count, half at each middle element of an even one; ``g * (1 - frac)`` at
``v[lo]`` and ``g * frac`` at ``v[lo + 1]`` for a quantile; summed over the
outputs in float64, zero where the output is NaN; in ``x``'s float dtype
(float64 for integers and bool).

>>> moving_median(np.array([3., 1., np.nan, 4.]), 2, min_count=1)
array([3., 2., 1., 4.])
>>> moving_rank(np.array([1, 3, 2, 2]), 3, min_count=1)
array([ 0. ,  1. ,  0. , -0.5])
"""
from __future__ import annotations

import math
import numbers
import operator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["moving_median", "moving_quantile", "moving_rank", "grad_moving_median",
           "grad_moving_quantile"]

_SUPPORTED = tuple(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64))


def _int(op, name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an int, got {value!r}")
    return int(value)


def _check(op, x, window, axis, min_count):
    x = np.asarray(x)
    if x.dtype not in _SUPPORTED:
        raise TypeError(f"{op}: unsupported dtype {x.dtype}")
    window = _int(op, "window", window)
    if window < 1:
        raise ValueError(f"{op}: window must be an int >= 1, got {window}")
    min_count = window if min_count is None else _int(op, "min_count", min_count)
    if not 1 <= min_count <= window:
        raise ValueError(f"{op}: min_count must be in [1, window], got {min_count}")
    if axis is None or isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(axis, x.ndim)
    return x, window, min_count, axis % x.ndim


def _check_q(op, q):
    v = q[()] if isinstance(q, np.ndarray) and q.ndim == 0 else q
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{op}: q must be a real number, got {q!r}")
    v = float(v)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{op}: q must be in [0, 1], got {q!r}")
    return v


def _windows(x, window, axis):
    """(values, valid, first index): of shape ``x.shape`` (axis last) +
    ``(window,)``; the index along the axis of each window's first element."""
    a = np.moveaxis(x, axis, -1)
    n = a.shape[-1]
    pad = a.shape[:-1] + (window - 1,)
    values = np.concatenate([np.zeros(pad, a.dtype), a], axis=-1)
    valid = np.concatenate([np.zeros(pad, bool),
                            ~np.isnan(a) if a.dtype.kind == "f" else np.ones(a.shape, bool)],
                           axis=-1)
    first = np.arange(n) - window + 1
    if n == 0:
        return np.zeros(a.shape + (window,), a.dtype), np.zeros(a.shape + (window,), bool), first
    return (sliding_window_view(values, window, axis=-1),
            sliding_window_view(valid, window, axis=-1), first)


def _result_dtype(x):
    return x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)


def _picks(op, x, window, axis, min_count, q, median):
    """Per output (axis last): the value in float64 and the picks ``(a, b, wb)``
    (indices along the axis, -1 where none; the second's weight)."""
    x, window, min_count, axis = _check(op, x, window, axis, min_count)
    values, valid, first = _windows(x, window, axis)
    shape = values.shape[:-1]
    out = np.full(shape, np.nan)
    pa = np.full(shape, -1, np.int64)
    pb = np.full(shape, -1, np.int64)
    wb = np.zeros(shape)
    for idx in np.ndindex(shape):
        keep = np.flatnonzero(valid[idx])
        c = keep.size
        if c < min_count or c == 0:
            continue
        w = values[idx][keep]
        order = keep[np.argsort(w, kind="stable")]
        v = values[idx][order]
        if median:
            lo = (c - 1) // 2
            frac = 0.0 if c % 2 else 0.5
        else:
            pos = q * (c - 1.0)
            lo = math.floor(pos)
            frac = pos - lo
        a = np.float64(v[lo])
        pa[idx] = first[idx[-1]] + order[lo]
        if frac == 0.0:
            out[idx] = a
            continue
        b = np.float64(v[lo + 1])
        pb[idx] = first[idx[-1]] + order[lo + 1]
        wb[idx] = frac
        with np.errstate(invalid="ignore", over="ignore"):
            out[idx] = (a + b) / 2.0 if median else a + (b - a) * frac
    return x, axis, out, pa, pb, wb


def _finish(out, x, axis):
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(np.moveaxis(out.astype(_result_dtype(x)), -1, axis))


def moving_median(x, window, axis=-1, *, min_count=None):
    """Median of the values of each trailing window."""
    x, axis, out, *_ = _picks("moving_median", x, window, axis, min_count, 0.5, True)
    return _finish(out, x, axis)


def moving_quantile(x, window, q, axis=-1, *, min_count=None):
    """Linear ``q``-quantile of the values of each trailing window (pandas')."""
    q = _check_q("moving_quantile", q)
    x, axis, out, *_ = _picks("moving_quantile", x, window, axis, min_count, q, False)
    return _finish(out, x, axis)


def moving_rank(x, window, axis=-1, *, min_count=None):
    """bottleneck's ``move_rank``: the latest element's rank in its window, in [-1, 1]."""
    x, window, min_count, axis = _check("moving_rank", x, window, axis, min_count)
    values, valid, _ = _windows(x, window, axis)
    shape = values.shape[:-1]
    out = np.full(shape, np.nan)
    for idx in np.ndindex(shape):
        ok = valid[idx]
        c = int(ok.sum())
        if c < min_count or not ok[-1]:
            continue
        if c == 1:
            out[idx] = 0.0
            continue
        w = values[idx][ok]
        last = values[idx][-1]
        less = int((w < last).sum())
        equal = int((w == last).sum())
        r = 0.5 * (2.0 * less + equal - 1.0)
        r = r / (c - 1.0)
        out[idx] = 2.0 * (r - 0.5)
    return _finish(out, x, axis)


def _grad(op, g, x, window, axis, min_count, q, median):
    x0 = np.asarray(x)
    g = np.asarray(g)
    if g.shape != x0.shape:
        raise ValueError(f"{op}: g has shape {g.shape}, expected {x0.shape}")
    x, axis, out, pa, pb, wb = _picks(op, x0, window, axis, min_count, q, median)
    ga = np.moveaxis(g.astype(np.float64), axis, -1)
    dx = np.zeros(ga.shape)
    for idx in np.ndindex(out.shape):  # in C order: the same sums every time
        if np.isnan(out[idx]):
            continue
        lane = idx[:-1]
        dx[lane + (pa[idx],)] += ga[idx] * (1.0 - wb[idx])
        if pb[idx] >= 0:
            dx[lane + (pb[idx],)] += ga[idx] * wb[idx]
    return _finish(dx, x, axis)


def grad_moving_median(g, x, window, axis=-1, *, min_count=None):
    """Gradient of :func:`moving_median`: ``g`` at the middle element (half at each
    of the two middle ones of an even count)."""
    return _grad("grad.moving_median", g, x, window, axis, min_count, 0.5, True)


def grad_moving_quantile(g, x, window, q, axis=-1, *, min_count=None):
    """Gradient of :func:`moving_quantile`: ``g * (1 - frac)`` at ``v[lo]`` and
    ``g * frac`` at ``v[lo + 1]``."""
    q = _check_q("grad.moving_quantile", q)
    return _grad("grad.moving_quantile", g, x, window, axis, min_count, q, False)

"""Reference twins of the moving-window reductions (see :mod:`axisops.reference`).

Every window is materialised: the axis is moved to the end, ``window - 1``
missing elements are put in front of it, and ``sliding_window_view`` gives each
position its trailing window; a mask says which elements are values (not NaN,
not padding). Then each window is reduced with plain NumPy:

* sums and means: ``np.sum`` of the values in float64 (+inf and -inf together
  give NaN), divided by the count for the mean;
* variances: the two-pass ``np.var`` of the values in float64 (NaN where
  ``count - ddof <= 0`` or an infinity is in the window);
* extremes: ``np.max``/``np.min`` of the values in the input's own dtype, and the
  last position holding a value equal to it (ties: the latest, -0.0 == +0.0);
  the value given is that element's.

Below ``min_count`` values: NaN (index -1). Float inputs keep their dtype (each
result rounded once from float64), integer and bool inputs give float64, indices
int64. ``window`` must be an int >= 1 and ``min_count`` None or an int in
``[1, window]``; complex, object and dates are a ``TypeError``.

>>> moving_sum(np.array([1., 2., np.nan, 4.]), 2, min_count=1)
array([1., 3., 2., 4.])
>>> moving_argmax(np.array([[3, 1, 3, 0]]), 3, min_count=1)
array([[0, 0, 2, 2]])
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._common import SUPPORTED_DTYPES, _axes

__all__ = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min", "moving_argmax", "moving_argmin"]


def _check(op, x, window, axis, min_count):
    x = np.asarray(x)
    if x.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{op}: unsupported dtype {x.dtype}")
    if isinstance(window, (bool, np.bool_)) or not isinstance(window, (int, np.integer)):
        raise TypeError(f"{op}: window must be an int >= 1, got {window!r}")
    if window < 1:
        raise ValueError(f"{op}: window must be an int >= 1, got {window}")
    if min_count is None:
        min_count = window
    elif isinstance(min_count, (bool, np.bool_)) or not isinstance(min_count, (int, np.integer)):
        raise TypeError(f"{op}: min_count must be an int, got {min_count!r}")
    elif not 1 <= min_count <= window:
        raise ValueError(f"{op}: min_count must be in [1, window], got {min_count}")
    if axis is None or isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    (axis,) = _axes(operator.index(axis), x.ndim, op)
    return x, int(window), int(min_count), axis


def _windows(x, window, axis):
    """(values, valid), both of shape ``x.shape`` (axis last) + ``(window,)``."""
    a = np.moveaxis(x, axis, -1)
    pad_shape = a.shape[:-1] + (window - 1,)
    values = np.concatenate([np.zeros(pad_shape, a.dtype), a], axis=-1)
    valid = np.concatenate([np.zeros(pad_shape, bool),
                            ~np.isnan(a) if a.dtype.kind == "f" else np.ones(a.shape, bool)],
                           axis=-1)
    return (sliding_window_view(values, window, axis=-1),
            sliding_window_view(valid, window, axis=-1))


def _result_dtype(x):
    return x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)


def _finish(out, x, axis, dtype):
    return np.ascontiguousarray(np.moveaxis(np.asarray(out).astype(dtype), -1, axis))


def _sums(op, x, window, axis, min_count, mean):
    x, window, min_count, axis = _check(op, x, window, axis, min_count)
    values, valid = _windows(x, window, axis)
    count = valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.where(valid, values.astype(np.float64), 0.0).sum(axis=-1)
        out = total / count if mean else total
    out = np.where(count >= min_count, out, np.nan)
    return _finish(out, x, axis, _result_dtype(x))


def moving_sum(x, window, axis=-1, *, min_count=None):
    """Sum of the values of each trailing window."""
    return _sums("moving_sum", x, window, axis, min_count, mean=False)


def moving_mean(x, window, axis=-1, *, min_count=None):
    """Mean of the values of each trailing window."""
    return _sums("moving_mean", x, window, axis, min_count, mean=True)


def _variance(op, x, window, axis, min_count, ddof, root):
    x, window, min_count, axis = _check(op, x, window, axis, min_count)
    values, valid = _windows(x, window, axis)
    count = valid.sum(axis=-1)
    v = np.where(valid, values.astype(np.float64), np.nan)
    out = np.full(count.shape, np.nan)
    for idx in np.ndindex(count.shape):  # two passes, window by window
        c = count[idx]
        if c < min_count or c - ddof <= 0:
            continue
        w = v[idx][valid[idx]]
        if not np.isfinite(w).all():
            continue
        mean = w.sum() / c
        out[idx] = ((w - mean) ** 2).sum() / (c - ddof)
    if root:
        out = np.sqrt(out)
    return _finish(out, x, axis, _result_dtype(x))


def moving_var(x, window, axis=-1, *, min_count=None, ddof=0):
    """Variance of the values of each trailing window (two passes)."""
    return _variance("moving_var", x, window, axis, min_count, ddof, root=False)


def moving_std(x, window, axis=-1, *, min_count=None, ddof=0):
    """Standard deviation of the values of each trailing window."""
    return _variance("moving_std", x, window, axis, min_count, ddof, root=True)


def _extreme(op, x, window, axis, min_count, largest):
    """(values, indices) of the moving extremes."""
    x, window, min_count, axis = _check(op, x, window, axis, min_count)
    values, valid = _windows(x, window, axis)
    count = valid.sum(axis=-1)
    res = _result_dtype(x)
    index = np.full(count.shape, -1, np.int64)
    vals = np.full(count.shape, np.nan, res)
    for idx in np.ndindex(count.shape):
        if count[idx] < min_count:
            continue
        w, ok = values[idx], valid[idx]
        target = w[ok].max() if largest else w[ok].min()
        last = np.nonzero(ok & (w == target))[0][-1]   # the latest of the ties
        index[idx] = idx[-1] - (window - 1) + last      # absolute index along the axis
        vals[idx] = w[last]                             # the element itself, bit for bit
    return _finish(vals, x, axis, res), _finish(index, x, axis, np.int64)


def moving_max(x, window, axis=-1, *, min_count=None):
    """Maximum of the values of each trailing window."""
    return _extreme("moving_max", x, window, axis, min_count, True)[0]


def moving_min(x, window, axis=-1, *, min_count=None):
    """Minimum of the values of each trailing window."""
    return _extreme("moving_min", x, window, axis, min_count, False)[0]


def moving_argmax(x, window, axis=-1, *, min_count=None):
    """Absolute index along the axis of each trailing window's maximum (the latest
    of ties), -1 below ``min_count``."""
    return _extreme("moving_argmax", x, window, axis, min_count, True)[1]


def moving_argmin(x, window, axis=-1, *, min_count=None):
    """Absolute index along the axis of each trailing window's minimum."""
    return _extreme("moving_argmin", x, window, axis, min_count, False)[1]

"""CUDA kernels of the moving windows (``axisops.moving``) and their gradients: a
thread per output element walks its own window, a thread per input element
gathers the outputs whose windows cover it; no atomics, no shared memory.

Output ``j`` of a lane reads the elements ``[max(0, j - window + 1), j]`` of it;
element ``k`` is read by the outputs ``[k, min(k + window - 1, n - 1)]``.

* ``moving_sums``: the window's finite elements added in index order in float64,
  its elements that are not NaN counted, +inf and -inf counted apart (the CPU's
  rule: +inf or -inf as they say, NaN with both); NaN below ``min_count``; the
  mean divides once by the count. Each window is summed afresh, so a result is
  the exact sum to one rounding per element of the window (no running sum, no
  drift), equal to the CPU's running sums to rounding, not bit for bit.
* ``moving_vars``: two passes over the window in float64: the mean of its finite
  elements less a shift (the window's first finite value: data far from 0 loses
  no digits, and a window of equal values has deviations of exactly 0, so a
  variance of exactly 0 as on the CPU), then the sum of the squared deviations
  from it; NaN below ``min_count``, at ``count - ddof <= 0`` or with an infinity
  in the window.
* ``moving_extremes``: the window walked in index order, comparing in the
  input's own dtype (bool as uint8, float16 natively): an element that is not
  NaN and is greater (smaller) than or equal to the best so far takes over, so
  ties go to the latest; the value is that element's (bits) and the index its
  absolute position along the axis; NaN / -1 below ``min_count``. The CPU's
  values and indices.
* ``moving_moments``: per output, the gradients' inputs: the count of elements
  that are not NaN, the mean of the finite ones and the forward variance or
  standard deviation (as ``moving_vars``), each in float64.
* ``moving_linear_grad``: a thread per input element adds, in output order, the
  weights ``g_j`` (``g_j / count_j``) of the outputs that cover it and are not
  NaN, skipping a NaN weight and counting infinities apart, then reads the sum as
  ``numpy.nan_to_num`` does (the CPU's reversed moving sum); 0 at a NaN of x.
* ``moving_var_grad``: ``sum_j H_j (x_k - mean_j)`` over the live outputs ``j``
  that cover element ``k``, in output order, with ``H_j = 2 g_j / (count_j -
  ddof)`` or ``g_j / (std_j (count_j - ddof))`` (0 where ``std_j`` is 0): the
  CPU's gradient, computed directly instead of as two reversed sums, so to
  rounding; an infinite or NaN ``x_k`` gets 0 (every window holding an infinity
  has a NaN variance, which gives nothing back).
* ``moving_extreme_grad``: the sum from +0.0, in output order, of ``g_j`` over the
  outputs that cover the element and whose arg-extreme it is: the CPU's
  ``np.add.at`` in C order, bit for bit.

Geometry (``G_*``, one int64 array, from ``axisops._layout.ScanView``): offset,
inner, inner stride, n, n stride, the numbers of outer and mid dimensions,
divisor records of inner, mid and n, then the outer and the mid dimension
records (``axisops.cuda._device.dims``). Output (thread) ``e`` is C order of
``(outer, n, mid, inner)``, which is C order of x's shape; the gradients' ``g``,
counts, means, forwards and indices are C-ordered arrays of that shape too.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numba import cuda, float64

from ._jit import kernel
from .kernels import _divmod, _unravel

__all__ = ["moving_sums", "moving_vars", "moving_extremes", "moving_moments",
           "moving_linear_grad", "moving_var_grad", "moving_extreme_grad", "signatures"]

G_OFFSET, G_INNER, G_INNER_STRIDE, G_N, G_N_STRIDE, G_NO, G_NM = 0, 1, 2, 3, 4, 5, 6
#: Divisor records of inner, mid and n; the dimension records.
G_INNER_REC, G_MID_REC, G_N_REC, G_DIMS = 7, 10, 13, 16

#: The largest finite float64: what ``numpy.nan_to_num`` makes of +inf.
_BIG = float(np.finfo(np.float64).max)


@cuda.jit(device=True, inline=True)
def _position(e, geo):
    """(input offset of the lane's first element, C position of its first element,
    step between positions of the lane in C order, j: e's position along the axis)."""
    q, i = _divmod(e, geo, G_INNER_REC)
    q, mi = _divmod(q, geo, G_MID_REC)
    ou, j = _divmod(q, geo, G_N_REC)
    no = geo[G_NO]
    src = (geo[G_OFFSET] + _unravel(ou, geo, G_DIMS, no)
           + _unravel(mi, geo, G_DIMS + 4 * no, geo[G_NM]) + i * geo[G_INNER_STRIDE])
    step = geo[G_MID_REC] * geo[G_INNER]
    return src, e - j * step, step, j


@cuda.jit(device=True, inline=True)
def _sums(base, src, stride, a, b, zero):
    """(not NaN, finite, +inf, -inf counts, sum of the finite ones in float64, the
    first finite value or 0) of elements [a, b] of a lane."""
    count = 0
    finite = 0
    pinf = 0
    ninf = 0
    acc = zero
    first = zero
    for k in range(a, b + 1):
        v = base[src + k * stride] + zero
        if math.isfinite(v):
            if finite == 0:
                first = v
            finite += 1
            count += 1
            acc += v
        elif v == v:
            count += 1
            if v > 0:
                pinf += 1
            else:
                ninf += 1
    return count, finite, pinf, ninf, acc, first


@cuda.jit(device=True, inline=True)
def _moments(base, src, stride, a, b, zero):
    """(count, finite, +inf, -inf, mean of the finite elements, their M2) of
    elements [a, b] of a lane: two passes, the values less the first finite one."""
    count, finite, pinf, ninf, _, shift = _sums(base, src, stride, a, b, zero)
    if finite == 0:
        return count, finite, pinf, ninf, zero, zero
    total = zero
    for k in range(a, b + 1):
        v = base[src + k * stride] + zero
        if math.isfinite(v):
            total += v - shift
    mean = total / finite
    m2 = zero
    for k in range(a, b + 1):
        v = base[src + k * stride] + zero
        if math.isfinite(v):
            d = (v - shift) - mean
            m2 += d * d
    return count, finite, pinf, ninf, mean + shift, m2


@cuda.jit(device=True, inline=True)
def _variance(count, finite, m2, min_count, ddof, root):
    """The forward's output from the moments: NaN below min_count, at count - ddof
    <= 0, or with an infinity in the window."""
    dof = count - ddof
    if count < min_count or dof <= 0 or finite != count:
        return math.nan
    v = m2 / dof
    return math.sqrt(v) if root else v


# ----------------------------------------------------------------------- forwards


@kernel
def moving_sums(base, geo, window, min_count, mean, zero, out):
    """Moving sums (means with *mean*) into ``out`` (flat, C order of x's shape, of
    the result's float dtype); *zero* is a float64 0."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    src, _, _, j = _position(e, geo)
    count, _, pinf, ninf, acc, _ = _sums(base, src, geo[G_N_STRIDE], max(0, j - window + 1), j,
                                         zero)
    if count < min_count:
        out[e] = math.nan
        return
    if pinf:
        acc += math.inf
    if ninf:
        acc -= math.inf
    out[e] = acc / count if mean else acc


@kernel
def moving_vars(base, geo, window, min_count, ddof, root, zero, out):
    """Moving variances (standard deviations with *root*) into ``out`` (flat, C
    order of x's shape, of the result's float dtype)."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    src, _, _, j = _position(e, geo)
    count, finite, _, _, _, m2 = _moments(base, src, geo[G_N_STRIDE], max(0, j - window + 1),
                                          j, zero)
    out[e] = _variance(count, finite, m2, min_count, ddof, root)


@kernel
def moving_extremes(base, geo, window, min_count, invert, want_values, out, want_index, idx):
    """Moving maxima (minima with *invert*): ``out`` (flat, C order of x's shape, of
    the result's float dtype) the values and/or ``idx`` (int64) the absolute
    indices, each written only when wanted (an output not wanted is a one-element
    array). Ties go to the latest element."""
    e = cuda.grid(1)
    size = idx.size if want_index else out.size
    if e >= size:
        return
    src, _, _, j = _position(e, geo)
    stride = geo[G_N_STRIDE]
    best = base[src + j * stride]
    at = -1
    count = 0
    for k in range(max(0, j - window + 1), j + 1):
        v = base[src + k * stride]
        if v == v:
            count += 1
            if at < 0 or ((v <= best) if invert else (v >= best)):
                best = v
                at = k
    if count < min_count:
        if want_values:
            out[e] = math.nan
        if want_index:
            idx[e] = -1
        return
    if want_values:
        out[e] = best
    if want_index:
        idx[e] = at


# ---------------------------------------------------------------------- gradients


@kernel
def moving_moments(base, geo, window, min_count, ddof, root, zero, counts, means, forward):
    """Per output (flat, C order, float64): the count of elements that are not NaN,
    the mean of the finite ones (0 with none) and the forward variance or standard
    deviation (*root*) with *min_count* and *ddof*."""
    e = cuda.grid(1)
    if e >= counts.size:
        return
    src, _, _, j = _position(e, geo)
    count, finite, _, _, mean, m2 = _moments(base, src, geo[G_N_STRIDE],
                                             max(0, j - window + 1), j, zero)
    counts[e] = count
    means[e] = mean
    forward[e] = _variance(count, finite, m2, min_count, ddof, root)


@kernel
def moving_linear_grad(base, geo, window, min_count, mean, g, counts, out):
    """grad.moving_sum (grad.moving_mean with *mean*): ``out`` (flat, C order, g's
    float dtype) the sum over the outputs ``j`` covering the element with
    ``counts[j] >= min_count`` of ``g[j]`` (over ``counts[j]``), in output order,
    NaN weights skipped, infinities counted apart and the total read as
    ``numpy.nan_to_num``; 0 where x is NaN. ``g`` and ``counts`` are float64."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    src, first, step, k = _position(e, geo)
    x = base[src + k * geo[G_N_STRIDE]]
    if x != x:
        out[e] = 0
        return
    acc = float64(0.0)
    pinf = 0
    ninf = 0
    for j in range(k, min(k + window, geo[G_N])):
        c = counts[first + j * step]
        if c < min_count:
            continue
        w = g[first + j * step]
        if mean:
            w = w / c
        if math.isfinite(w):
            acc += w
        elif w == w:
            if w > 0:
                pinf += 1
            else:
                ninf += 1
    if pinf and ninf:
        acc = 0.0
    elif pinf:
        acc = _BIG
    elif ninf:
        acc = -_BIG
    elif acc != acc:
        acc = 0.0
    out[e] = acc


@kernel
def moving_var_grad(base, geo, window, ddof, root, g, counts, means, forward, zero, out):
    """grad.moving_var (grad.moving_std with *root*): ``out`` (flat, C order, g's
    float dtype) ``sum_j H_j (x_k - mean_j)`` over the outputs ``j`` covering the
    element whose forward is finite (and > 0 with *root*), in output order, a NaN
    term skipped; 0 where x is infinite or NaN. ``g``, ``counts``,
    ``means`` and ``forward`` are float64 (:func:`moving_moments`)."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    src, first, step, k = _position(e, geo)
    x = base[src + k * geo[G_N_STRIDE]] + zero
    if not math.isfinite(x):
        out[e] = 0
        return
    acc = zero
    for j in range(k, min(k + window, geo[G_N])):
        p = first + j * step
        f = forward[p]
        if not math.isfinite(f) or (root and f <= 0):
            continue
        if root:
            h = g[p] / (f * (counts[p] - ddof))
        else:
            h = 2 * g[p] / (counts[p] - ddof)
        t = h * (x - means[p])
        if t == t:
            acc += t
    out[e] = acc


@kernel
def moving_extreme_grad(geo, window, g, idx, out):
    """grad.moving_max/min: ``out`` (flat, C order, g's float dtype) the sum from
    +0.0 in float64 of ``g[j]`` (float64) over the outputs ``j`` covering the
    element whose index ``idx[j]`` is its position, in output order."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    _, first, step, k = _position(e, geo)
    acc = float64(0.0)
    for j in range(k, min(k + window, geo[G_N])):
        p = first + j * step
        if idx[p] == k:
            acc += g[p]
    out[e] = acc


# --------------------------------------------------------------------- signatures

#: The dtypes the kernels read (bool as uint8).
DTYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64]


def result_dtype(dtype: np.dtype) -> np.dtype:
    """The values' dtype of the moving windows of *dtype*: floats keep theirs,
    every other gives float64."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def signatures() -> Iterator[tuple[str, Any, tuple]]:
    """(name, Python function, argument types) of every specialisation the launchers
    of :mod:`axisops.cuda.moving` and :mod:`axisops.cuda.moving_grad` make."""
    from numba import from_dtype, types

    def arr(dtype):
        return types.Array(from_dtype(np.dtype(dtype)), 1, "C")

    i64, f64, boolean = types.int64, types.float64, types.boolean
    geo = arr(np.int64)
    for dt in DTYPES:
        name = np.dtype(dt).name
        res = result_dtype(np.dtype(dt))
        yield (f"moving_sums {name}", moving_sums.py_func,
               (arr(dt), geo, i64, i64, boolean, f64, arr(res)))
        yield (f"moving_vars {name}", moving_vars.py_func,
               (arr(dt), geo, i64, i64, f64, boolean, f64, arr(res)))
        # values (indices unused) and indices (values unused, a float64 array)
        yield (f"moving_extremes {name}", moving_extremes.py_func,
               (arr(dt), geo, i64, i64, boolean, boolean, arr(res), boolean, arr(np.int64)))
        if res != np.float64:
            yield (f"moving_extremes {name} indices", moving_extremes.py_func,
                   (arr(dt), geo, i64, i64, boolean, boolean, arr(np.float64), boolean,
                    arr(np.int64)))
        yield (f"moving_moments {name}", moving_moments.py_func,
               (arr(dt), geo, i64, i64, f64, boolean, f64, arr(np.float64), arr(np.float64),
                arr(np.float64)))
        for out in (np.float16, np.float32, np.float64):
            o = np.dtype(out).name
            yield (f"moving_linear_grad {name}->{o}", moving_linear_grad.py_func,
                   (arr(dt), geo, i64, i64, boolean, arr(np.float64), arr(np.float64), arr(out)))
            yield (f"moving_var_grad {name}->{o}", moving_var_grad.py_func,
                   (arr(dt), geo, i64, f64, boolean, arr(np.float64), arr(np.float64),
                    arr(np.float64), arr(np.float64), f64, arr(out)))
    for out in (np.float16, np.float32, np.float64):
        yield (f"moving_extreme_grad {np.dtype(out).name}", moving_extreme_grad.py_func,
               (geo, i64, arr(np.float64), arr(np.int64), arr(out)))

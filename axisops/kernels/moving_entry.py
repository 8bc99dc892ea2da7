"""Compiled entries of the small moving window along contiguous rows
(``axisops._fast.moving``): a C-ordered ``(rows, n)`` array, every row one walk
of one block (``n`` at most ``entry.MOVING_BLOCK_MIN``, so the plan cuts no row
into blocks either), in one call with no scratch but a few rows.

The arithmetic is the planned kernels' (``kernels.moving``, no fast-math), step
for step, so the bits are the same:

* sums and means: a row with no NaN or infinity is ``_finite_sums``' three
  passes (the float64 deltas, the running sums with ``STREAMS`` rows' chains
  interleaved, the outputs divided by the window's count), read in place
  rather than from a copy; any other row is the plan's own ``_sum_lane``;
* extremes and their positions: each row goes to the plan's own
  ``_extreme_walk``, in place (the plan walks a copy of the same elements).

What it saves is the generic kernel's fixed cost: its geometry, its copies of
each walk and half a dozen scratch arrays (moving_mean, window 8, of a (16, 64)
float32 array: the entry 3.0 -> 0.8 us on an AMD EPYC Zen 5).
"""
from __future__ import annotations

import numpy as np
from numba import from_dtype, njit, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload

from .._jit import compiled, factory, helper, kernel, part_range
from .common import deinterleave
from .entry import MOVING_BLOCK_MIN
from .moving import CHUNK, _extreme_walk, _sum_lane

#: ``moving._WORK_PER_ELEMENT``: the plan's units of work per element
WORK_PER_ELEMENT = 4
#: Rows whose running sums are chained together (``moving.STREAMS``)
STREAMS = 4

_U = np.uint64  # loop bounds: Numba's wrap-around test on signed indices blocks vectorising


@helper
def _finite(row):
    """Whether *row* has neither NaN nor an infinity."""
    bad = 0
    for j in range(_U(0), _U(row.size)):
        v = row[j]
        bad += 0 if v - v == 0 else 1
    return bad == 0


@helper
def _no_nan(row):
    """Whether *row* has no NaN."""
    bad = 0
    for j in range(_U(0), _U(row.size)):
        v = row[j]
        bad += 0 if v == v else 1
    return bad == 0


@helper(inline=True)
def _deltas(row, n, w, d):
    """``d[k]``: the element entering the window at k less the one leaving it (the
    element alone while the window fills), in float64 (``moving._deltas``)."""
    for k in range(_U(0), _U(min(w, n))):
        d[k] = np.float64(row[k])
    if w < n:  # slices: ``row[k - w]`` with unsigned k kept the loop scalar (0.5 ns an element)
        entering = row[w:n]
        leaving = row[:n - w]
        out = d[w:n]
        for k in range(_U(0), _U(n - w)):
            out[k] = np.float64(entering[k]) - np.float64(leaving[k])


@helper(inline=True)
def _emit(s, n, w, min_count, mean, o):
    """The outputs *o* of one row from its running sums *s* (``moving._emit_sums``
    with ``first = 0``): the count of window k is ``min(k + 1, w)``."""
    for k in range(min(w - 1, n)):
        count = k + 1
        o[k] = np.nan if count < min_count else (s[k] / count if mean else s[k])
    for k in range(_U(w - 1), _U(n)):
        o[k] = s[k] / w if mean else s[k]


@njit(cache=True, nogil=True)
def moving_sum_rows(x, window, min_count, mean, out):
    """moving_sum or (*mean*) moving_mean of C-ordered *x* along its last axis (of
    ``n <= MOVING_BLOCK_MIN`` elements) into *out* (x's shape, C-ordered; x's float
    dtype, float64 for integers); ``1 <= min_count <= min(window, n)``."""
    n = x.shape[-1]
    rows = x.size // n
    _sum_rows(x.reshape((rows, n)), min(window, n), min_count, mean, out.reshape((rows, n)),
              np.empty((STREAMS, n)), np.empty(STREAMS, np.int64), np.empty(0, np.float64))


@helper
def _sum_rows(xs, w, min_count, mean, outs, s, group, like):
    """The body of :func:`moving_sum_rows` (no reference counting: a row's view
    costs nothing), *w* the fitted window, *s*, *group* and *like* its scratch."""
    rows, n = xs.shape
    taken = 0
    for r in range(rows):
        if not _finite(xs[r]):
            _sum_lane(xs[r], 0, 0, 0, n, w, min_count, mean, None, like, outs[r], 0, 1)
            continue
        group[taken] = r
        taken += 1
        if taken < STREAMS:
            continue
        taken = 0
        for q in range(STREAMS):
            _deltas(xs[group[q]], n, w, s[q])
        d0 = s[0]
        d1 = s[1]
        d2 = s[2]
        d3 = s[3]
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for k in range(_U(0), _U(n)):  # four chains interleaved
            a0 += d0[k]
            d0[k] = a0
            a1 += d1[k]
            d1[k] = a1
            a2 += d2[k]
            d2[k] = a2
            a3 += d3[k]
            d3[k] = a3
        for q in range(STREAMS):
            _emit(s[q], n, w, min_count, mean, outs[group[q]])
    d = s[0]
    for q in range(taken):  # the rows left, alone
        _deltas(xs[group[q]], n, w, d)
        acc = 0.0
        for k in range(_U(0), _U(n)):
            acc += d[k]
            d[k] = acc
        _emit(d, n, w, min_count, mean, outs[group[q]])


@njit(cache=True, nogil=True)
def moving_extreme_rows(x, window, min_count, invert, values, out_v, out_i):
    """moving_max, or (*invert*) moving_min, of C-ordered *x* along its last axis
    (of ``n <= MOVING_BLOCK_MIN`` elements): the values into *out_v* (x's shape,
    C-ordered; x's float dtype, float64 for integers) where *values*, else the
    int64 positions into *out_i* (x's shape); ``1 <= min_count <= min(window, n)``."""
    n = x.shape[-1]
    w = min(window, n)
    cap = w + CHUNK  # moving_extreme_kernel's scratch
    _extreme_rows(x.reshape(x.size), n, w, min_count, invert, values, out_v.reshape(out_v.size),
                  out_i.reshape(out_i.size), np.empty((2, cap), x.dtype),
                  np.empty((2, cap), np.int64), np.empty(0, x.dtype))


@helper
def _extreme_rows(base, n, w, min_count, invert, values, flat_v, flat_i, ws, wi, like):
    """The body of :func:`moving_extreme_rows` (no reference counting), *w* the
    fitted window, *ws*, *wi* and *like* its scratch."""
    for p in range(0, base.size, n):
        _extreme_walk(base, p, n, 0, w, min_count, invert, None, like, ws, wi, values, flat_v,
                      not values, flat_i, p, 1, 0, _no_nan(base[p:p + n]))


@njit(cache=True, nogil=True)
def _rows_taken(x, window, axis, min_count, limit):
    """The count of a window (*min_count*, None meaning *window*) where the row
    entries take *x* (C-ordered) along *axis* (a Python int) on the calling
    thread, *limit* being ``_jit.PARALLEL_MIN_WORK``; else 0 (the caller's other
    ways: another axis, a large array, every output NaN, the plan's errors)."""
    ndim = x.ndim
    if not -ndim <= axis < ndim or (axis + ndim) % ndim != ndim - 1:
        return 0
    n = x.shape[-1]
    count = window if min_count is None else min_count
    if x.size == 0 or x.size * WORK_PER_ELEMENT >= limit or n > MOVING_BLOCK_MIN \
            or not 1 <= count <= window or count > n:
        return 0
    return count


@njit(cache=True, nogil=True)
def rows_count(x, window, axis, min_count):
    """:func:`_rows_taken` whatever *x*'s size: where the row loops take a large
    array too, split between threads (:func:`sum_rows_kernel`,
    :func:`extreme_rows_kernel`)."""
    return _rows_taken(x, window, axis, min_count, np.int64(1) << np.int64(62))


@kernel(nrt=True)  # its scratch; the loops run in helpers, without reference counting
def sum_rows_kernel(part, parts, flat, n, w, min_count, mean, out):
    """:func:`moving_sum_rows`' rows ``[lo, hi)`` of share *part* of the flat C-ordered
    rows of *n* elements in *flat*, into the flat *out*; *w* the fitted window."""
    lo, hi = part_range(flat.size // n, part, parts)
    _sum_rows(flat[lo * n:hi * n].reshape((hi - lo, n)), w, min_count, mean,
              out[lo * n:hi * n].reshape((hi - lo, n)), np.empty((STREAMS, n)),
              np.empty(STREAMS, np.int64), np.empty(0, np.float64))


@kernel(nrt=True)
def extreme_rows_kernel(part, parts, flat, n, w, min_count, invert, values, flat_v, flat_i):
    """:func:`moving_extreme_rows` of share *part* of the rows, as
    :func:`sum_rows_kernel` (the outputs *flat_v* where *values*, else *flat_i*)."""
    lo, hi = part_range(flat.size // n, part, parts)
    cap = w + CHUNK
    _extreme_rows(flat[lo * n:hi * n], n, w, min_count, invert, values,
                  flat_v[lo * n:hi * n] if values else flat_v,
                  flat_i if values else flat_i[lo * n:hi * n], np.empty((2, cap), flat.dtype),
                  np.empty((2, cap), np.int64), np.empty(0, flat.dtype))


@njit(cache=True, nogil=True)
def sum_rows_entry(x, window, axis, min_count, limit, mean, out):
    """:func:`moving_sum_rows` of the call :func:`_rows_taken` takes, into *out*;
    False (*out* untouched) for one it does not."""
    count = _rows_taken(x, window, axis, min_count, limit)
    if count:
        moving_sum_rows(x, window, count, mean, out)
    return count != 0


@njit(cache=True, nogil=True)
def extreme_rows_entry(x, window, axis, min_count, limit, invert, out):
    """:func:`moving_extreme_rows`' values, as :func:`sum_rows_entry`."""
    count = _rows_taken(x, window, axis, min_count, limit)
    if count:
        moving_extreme_rows(x, window, count, invert, True, out, np.empty(0, np.int64))
    return count != 0


@njit(cache=True, nogil=True)
def arg_rows_entry(x, window, axis, min_count, limit, invert, out):
    """:func:`moving_extreme_rows`' positions, as :func:`sum_rows_entry`."""
    count = _rows_taken(x, window, axis, min_count, limit)
    if count:
        moving_extreme_rows(x, window, count, invert, False, np.empty(0, np.float64), out)
    return count != 0


# ------------------------------------------------- the call of a public function's wrapper


@intrinsic
def _as_c(typingctx, arr):
    """*arr* (of any layout) typed as a writeable, C-contiguous, aligned array: the
    same data model; the caller has checked its strides and address, and only
    reads it (typed writeable, it runs the very specialisations of the row loops
    that the planned path's entries run)."""
    result = types.Array(arr.dtype, arr.ndim, "C")

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, result, args[0])

    return result(arr), codegen


@njit(inline="always")
def _layout(x, ndim, copy_max):
    """1 where *x* (of *ndim* dimensions, 1 or 2) is C-contiguous and aligned, 2
    where it is a 2-D F-contiguous (and not C) aligned one of at most *copy_max*
    elements (a transposed table: its rows are copied), else 0."""
    if x.ctypes.data % x.itemsize != 0:
        return 0
    item = x.itemsize
    if ndim == 1:
        return 1 if x.shape[0] <= 1 or x.strides[0] == item else 0
    rows = x.shape[0]
    cols = x.shape[ndim - 1]
    if (cols == 1 or x.strides[ndim - 1] == item) and (rows == 1 or x.strides[0] == cols * item):
        return 1
    if (rows == 1 or x.strides[0] == item) and (cols == 1 or x.strides[ndim - 1] == rows * item) \
            and x.size <= copy_max:
        return 2
    return 0


def _c_copy(x):
    """A C-ordered copy of a 2-D F-ordered *x*, read in memory order (compiled code
    only; a 1-D x has no such copy: the call never asks for one)."""


@overload(_c_copy)
def _c_copy_impl(x):
    if x.ndim != 2:
        return lambda x: np.empty(x.shape, x.dtype)

    def impl(x):
        rows = np.empty(x.shape, x.dtype)
        deinterleave(_as_c(x.T), rows)
        return rows
    return impl


@factory
def row_call(kind: str, dtype_str: str, ndim: int, flag: bool, copy_max: int):
    """``call(x, window, axis, min_count, limit, out)``, compiled for the most
    general *ndim*-dimensional array x of *dtype_str* (any strides, read-only,
    unaligned): moving_sum or moving_mean (*kind* "sum", *flag* the mean),
    moving_max or moving_min (*kind* "extreme", *flag* the min), moving_argmax or
    moving_argmin (*kind* "arg") of x along *axis* as :func:`sum_rows_entry` and
    its twins give them, into *out* (C-ordered, x's shape); False where they do
    not take the call or x's layout (C-contiguous and aligned, or a 2-D F-ordered
    table of at most *copy_max* elements, whose rows are copied first). The public
    functions' wrappers call it first (``axisops._fast.MOVING_CALLS``), with
    *window* in [1, 2**62] and *min_count* None or in [1, window]: the Python of
    the planned route (checks, look-ups, a copy) cost as much as the row loops of a
    (4, 256) float32 moving_mean (1.2 of 2.5 us, AMD EPYC Zen 4). *out* comes from
    the caller: an array made here and returned cost 0.45 us to box, NumPy's
    ``empty`` 0.3."""
    dtype = np.dtype(dtype_str)
    res = np.dtype(np.int64) if kind == "arg" else \
        dtype if dtype.kind == "f" else np.dtype(np.float64)
    KIND = kind
    FLAG = flag
    NDIM = ndim
    COPY_MAX = copy_max
    i64 = types.int64
    arr = types.Array(from_dtype(dtype), ndim, "A", readonly=True, aligned=False)
    result = types.Array(from_dtype(res), ndim, "C")

    @compiled(types.boolean(arr, i64, i64, types.Optional(i64), i64, result), nogil=True)
    def call(x, window, axis, min_count, limit, out):
        layout = _layout(x, NDIM, COPY_MAX)
        if layout == 0:
            return False
        count = _rows_taken(x, window, axis, min_count, limit)
        if count == 0:
            return False
        xs = _as_c(x) if layout == 1 else _c_copy(x)
        if KIND == "sum":
            moving_sum_rows(xs, window, count, FLAG, out)
        elif KIND == "extreme":
            moving_extreme_rows(xs, window, count, FLAG, True, out, np.empty(0, np.int64))
        else:
            moving_extreme_rows(xs, window, count, FLAG, False, np.empty(0, np.float64), out)
        return True

    return call

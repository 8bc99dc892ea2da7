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
from numba import njit

from .._jit import helper, kernel, part_range
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
    for k in range(_U(w), _U(n)):
        d[k] = np.float64(row[k]) - np.float64(row[k - w])


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

"""Compiled entries of the small median and quantile (``axisops._fast_order``): the
lanes of a C-ordered ``(lanes, n)`` array, each selected and finished in one call.

A lane's order keys (:func:`axisops.kernels.order.order_key`) are copied into
scratch and the one or two places NumPy's formula names are found by
*quickselect* (median of three, Hoare's partition; after ``2 log2(n) + 8`` rounds
the rest is heap-sorted, so the worst case stays ``O(n log n)``): for short lanes
cheaper than the radix select of the planned path, which clears and scans 2048
counts per pass. The second place of a pair (``r + 1``) is the least key above
the first. A key is one element's bits, except the zero key (-0.0 and +0.0):
there the element is the ``o``-th zero of the lane in lane order, ``o`` the place
less the keys below, as the stable order has it. The arithmetic is NumPy's in
the element's dtype (the mean of two middle elements; ``_lerp`` with a weight
given as a Python float), so results are the planned path's, bit for bit.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.cpython.unsafe.numbers import viewer
from numba.extending import overload

from .._jit import factory, helper
from .order import key_bits, key_masks, order_key


def _element(bits, like):
    """The element of *like*'s dtype whose bits are *bits* (unsigned, of its width
    or wider: Numba widens unsigned arithmetic)."""


@overload(_element, inline="always")
def _element_impl(bits, like):
    target = like  # the Numba type the bits are viewed as
    if like.bitwidth == 64:
        return lambda bits, like: viewer(np.uint64(bits), target)
    if like.bitwidth == 32:
        return lambda bits, like: viewer(np.uint32(bits), target)
    return None


def _as(v, like):
    """*v* converted to *like*'s dtype (a float64 weight cast as NumPy casts it)."""


@overload(_as, inline="always")
def _as_impl(v, like):
    target = {32: np.float32, 64: np.float64}[like.bitwidth] if isinstance(
        like, types.Float) else np.float64
    return lambda v, like: target(v)


@helper
def _sift(keys, lo, start, end):
    root = start
    while True:
        child = 2 * root + 1
        if child > end:
            return
        if child + 1 <= end and keys[lo + child] < keys[lo + child + 1]:
            child += 1
        if keys[lo + root] < keys[lo + child]:
            keys[lo + root], keys[lo + child] = keys[lo + child], keys[lo + root]
            root = child
        else:
            return


@helper
def _heap_sort(keys, lo, hi):
    """Sort ``keys[lo:hi + 1]`` in place (quickselect's worst-case fallback)."""
    count = hi - lo + 1
    for start in range((count - 2) // 2, -1, -1):
        _sift(keys, lo, start, count - 1)
    for end in range(count - 1, 0, -1):
        keys[lo], keys[lo + end] = keys[lo + end], keys[lo]
        _sift(keys, lo, 0, end - 1)


@helper
def _partition(keys, lo, hi):
    """Hoare's partition of ``keys[lo:hi + 1]`` about the median of three; returns
    the pivot's final place."""
    mid = (lo + hi) >> 1
    if keys[mid] < keys[lo]:
        keys[mid], keys[lo] = keys[lo], keys[mid]
    if keys[hi] < keys[mid]:
        keys[hi], keys[mid] = keys[mid], keys[hi]
        if keys[mid] < keys[lo]:
            keys[mid], keys[lo] = keys[lo], keys[mid]
    pivot = keys[mid]
    keys[hi], keys[mid] = keys[mid], keys[hi]
    i = lo
    j = hi - 1
    while True:
        while i < hi and keys[i] < pivot:
            i += 1
        while j >= lo and pivot < keys[j]:
            j -= 1
        if i >= j:
            break
        keys[i], keys[j] = keys[j], keys[i]
        i += 1
        j -= 1
    keys[i], keys[hi] = keys[hi], keys[i]
    return i


@helper
def quick_select(keys, n, r):
    """The key at place *r* of the sorted ``keys[:n]``; afterwards no key before
    place *r* is greater and none after it is less."""
    lo = 0
    hi = n - 1
    rounds = 8
    m = n
    while m > 1:
        rounds += 2
        m >>= 1
    while lo < hi:
        if rounds == 0:
            _heap_sort(keys, lo, hi)
            break
        rounds -= 1
        p = _partition(keys, lo, hi)
        if p == r:
            break
        if p < r:
            lo = p + 1
        else:
            hi = p - 1
    return keys[r]


@helper
def _least_above(keys, n, r):
    """The least of ``keys[r + 1:n]`` (after :func:`quick_select` of place *r*: the
    key at place ``r + 1``)."""
    best = keys[r + 1]
    for j in range(r + 2, n):
        if keys[j] < best:
            best = keys[j]
    return best


@helper
def _at_place(lane, keys, n, key, place, masks, floating, like):
    """The element of *lane* at *place* of its stable order, whose key is *key*."""
    if not floating or key != masks[1]:  # masks[1]: the zero key of a float
        return _element(key_bits(key, masks, False), like)
    less = 0
    for j in range(n):
        less += keys[j] < key
    o = place - less
    mag = masks[4]
    for j in range(n):
        if (lane[j] & mag) == 0:
            if o == 0:
                return _element(lane[j], like)
            o -= 1
    return _element(lane[0], like)  # not reached: the zero key has o + 1 zeros


@helper
def _lane_keys(lane, n, masks, floating, keys):
    """Keys of ``lane[:n]`` into *keys*; the number of NaN (key ``top``; an
    integer's ``top`` is its greatest value)."""
    top = masks[0]
    nans = 0
    for j in range(n):
        k = order_key(lane[j], masks, False)
        keys[j] = k
        nans += k == top
    return nans if floating else 0


@helper
def lane_statistic(lane, n, keys, masks, floating, skip_nan, median, q, like):
    """``(statistic, ok)`` of ``lane[:n]`` (the elements' bits; *like* a scalar of
    their dtype): with *median*, NumPy's (nan)median, the middle element or the mean
    of the two (in the dtype for floats, in float64 for integers); else NumPy's
    (nan)quantile of a float lane at the Python float *q*, method ``linear``:
    ``_lerp`` of the elements at the places below and above the virtual index
    ``(c - 1) q`` (``c`` the lane's count of values), its weight cast to the dtype
    as NumPy casts a weak scalar's. NaN for a plain lane holding NaN; not *ok* for
    a lane of NaN only with *skip_nan*."""
    nans = _lane_keys(lane, n, masks, floating, keys)
    if nans and not skip_nan:
        return _as(np.nan, like), True
    c = n - nans
    if c == 0:
        return _as(np.nan, like), False
    if median:
        r = (c - 1) // 2
        gamma = 0.0
    else:
        v = np.float64(c - 1) * q
        low = np.floor(v)
        gamma = v - low
        r = min(np.int64(low), c - 1)
    key = quick_select(keys, n, r)
    a = _at_place(lane, keys, n, key, r, masks, floating, like)
    if median and c % 2:
        # NumPy's mean of one element: a sum from +0.0 (-0.0 gives +0.0)
        return _as(0.0, like) + _as(a, like), True
    if r + 1 < c:
        b = _at_place(lane, keys, n, _least_above(keys, n, r), r + 1, masks, floating, like)
    else:  # NumPy's places at or past the last: the last element twice
        b = a
    if median:  # NumPy's mean: from +0.0, in the dtype (floats) or float64, over 2
        return (_as(0.0, like) + _as(a, like) + _as(b, like)) / _as(2.0, like), True
    diff = b - a
    if gamma >= 0.5:
        return b - diff * _as(1.0 - gamma, like), True
    return a + diff * _as(gamma, like), True


@factory
def entries(dtype_str: str):
    """``(one, lanes)`` for C-contiguous 1-D arrays of *dtype_str* (the masks and
    types are constants of the machine code: a tuple argument cost 0.8 us of
    Numba's dispatch per call), each the median (*median*) or the quantile at *q*
    (:func:`lane_statistic`).

    ``one(x, skip_nan, median, q)`` returns the statistic of the whole of *x*, NaN
    where a ``skip_nan`` lane is NaN only (the caller then takes the planned path,
    which warns); ``lanes(x, n, skip_nan, median, q, out)`` writes lane ``l``
    (``x[l n:(l + 1) n]``) into ``out[l]`` and returns False at a lane of NaN only."""
    dtype = np.dtype(dtype_str)
    BITS = np.dtype(f"u{dtype.itemsize}").type
    MASKS = key_masks(dtype)
    LIKE = dtype.type(0)
    FLOATING = dtype.kind == "f"

    @njit(cache=True, nogil=True)
    def one(x, skip_nan, median, q):
        keys = np.empty(x.size, BITS)
        return lane_statistic(x.view(BITS), x.size, keys, MASKS, FLOATING, skip_nan, median, q,
                              LIKE)[0]

    @njit(cache=True, nogil=True)
    def lanes(x, n, skip_nan, median, q, out):
        bits = x.view(BITS)
        keys = np.empty(n, BITS)
        for i in range(out.size):
            value, ok = lane_statistic(bits[i * n:(i + 1) * n], n, keys, MASKS, FLOATING,
                                       skip_nan, median, q, LIKE)
            if not ok:
                return False
            out[i] = value
        return True

    return one, lanes

"""Compiled entries of the small order statistics (``axisops._fast_order``): the
median and quantile of the lanes of a C-ordered ``(lanes, n)`` array, each
selected and finished in one call; the finish of a small sort by NumPy
(:func:`sort_finisher`) and a small ``top_k`` (:func:`top_k_entry`) along the last
axis of a 1-D or 2-D array.

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
from .order import _insertion_sort, _restore_specials, key_bits, key_masks, narrow_key, order_key
from .rows import _finish_row
from .simd_select import compress_range


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
    c, r, gamma = _place(n, _lane_keys(lane, n, masks, floating, keys), skip_nan, median, q)
    if c <= 0:
        return _as(np.nan, like), c < 0
    key = quick_select(keys, n, r)
    a = _at_place(lane, keys, n, key, r, masks, floating, like)
    if median and c % 2:
        return _combine(a, a, True, True, gamma, like), True
    if r + 1 < c:
        b = _at_place(lane, keys, n, _least_above(keys, n, r), r + 1, masks, floating, like)
    else:  # NumPy's places at or past the last: the last element twice
        b = a
    return _combine(a, b, False, median, gamma, like), True


@helper
def sorted_statistic(srt, lane, n, masks, floating, skip_nan, median, q, like):
    """:func:`lane_statistic` of ``lane[:n]`` from ``srt``, its elements' bits as
    NumPy's sort orders them (NaN last; -0.0 and +0.0 in any order among
    themselves): the same places read off directly, a zero there taken again from
    the lane in lane order (:func:`_sorted_at`)."""
    nans = 0
    if floating:
        while nans < n and _element(srt[n - 1 - nans], like) != _element(srt[n - 1 - nans],
                                                                          like):
            nans += 1
    c, r, gamma = _place(n, nans, skip_nan, median, q)
    if c <= 0:
        return _as(np.nan, like), c < 0
    a = _sorted_at(srt, lane, n, r, masks, floating, like)
    if median and c % 2:
        return _combine(a, a, True, True, gamma, like), True
    b = _sorted_at(srt, lane, n, r + 1, masks, floating, like) if r + 1 < c else a
    return _combine(a, b, False, median, gamma, like), True


@helper
def _sorted_at(srt, lane, n, place, masks, floating, like):
    """The element at *place* of the stable order of ``lane[:n]``, given ``srt``
    (see :func:`sorted_statistic`): ``srt[place]``, or for a zero the ``o``-th zero
    of the lane in lane order, ``o`` the place less the elements below zero."""
    mag = masks[4]
    if not floating or (srt[place] & mag) != 0:
        return _element(srt[place], like)
    below = place
    while below > 0 and (srt[below - 1] & mag) == 0:
        below -= 1
    o = place - below
    for j in range(n):
        if (lane[j] & mag) == 0:
            if o == 0:
                return _element(lane[j], like)
            o -= 1
    return _element(srt[place], like)  # not reached: the lane has the zeros srt has


@helper(inline=True)
def _place(n, nans, skip_nan, median, q):
    """(count, place, weight) of a lane of *n* elements, *nans* of them NaN: the
    count of values ``c``, the median's lower middle place (weight 0) or the place
    below the quantile's virtual index ``(c - 1) q`` and its fraction; a count of
    -1 for a plain lane holding NaN (its statistic NaN) and 0 for a lane of NaN
    only (NaN, handed back with *skip_nan*)."""
    if nans and not skip_nan:
        return -1, 0, 0.0
    c = n - nans
    if c == 0:
        return 0, 0, 0.0
    if median:
        return c, (c - 1) // 2, 0.0
    v = np.float64(c - 1) * q
    low = np.floor(v)
    return c, min(np.int64(low), c - 1), v - low


@helper(inline=True)
def _combine(a, b, odd_median, median, gamma, like):
    """NumPy's arithmetic on the elements *a* and *b* at the two places: the mean
    of one element (*odd_median*) or two, from +0.0 (-0.0 gives +0.0), in the
    dtype (floats) or float64; else ``_lerp`` at *gamma*."""
    if odd_median:
        return _as(0.0, like) + _as(a, like)
    if median:
        return (_as(0.0, like) + _as(a, like) + _as(b, like)) / _as(2.0, like)
    diff = b - a
    if gamma >= 0.5:
        return b - diff * _as(1.0 - gamma, like)
    return a + diff * _as(gamma, like)


@factory
def entries(dtype_str: str):
    """``(one, lanes)`` for C-contiguous 1-D arrays of *dtype_str* (the masks and
    types are constants of the machine code: a tuple argument cost 0.8 us of
    Numba's dispatch per call), each the median (*median*) or the quantile at *q*
    (:func:`lane_statistic`).

    ``one(x, skip_nan, median, q)`` returns the statistic of the whole of *x*, NaN
    where a ``skip_nan`` lane is NaN only (the caller then takes the planned path,
    which warns); ``lanes(x, n, skip_nan, median, q, out)`` writes lane ``l``
    (``x[l n:(l + 1) n]``) into ``out[l]`` and returns False at a lane of NaN only;
    ``sorted_lanes(s, x, n, skip_nan, median, q, out)`` the same from ``s``, x's
    lanes sorted by NumPy (:func:`sorted_statistic`)."""
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

    @njit(cache=True, nogil=True)
    def sorted_lanes(s, x, n, skip_nan, median, q, out):
        srt = s.view(BITS)
        bits = x.view(BITS)
        for i in range(out.size):
            value, ok = sorted_statistic(srt[i * n:(i + 1) * n], bits[i * n:(i + 1) * n], n,
                                         MASKS, FLOATING, skip_nan, median, q, LIKE)
            if not ok:
                return False
            out[i] = value
        return True

    return one, lanes, sorted_lanes


def _as_rows(a):
    """*a* as 2-D rows: itself, or a 1-D array as one row (compiled code only)."""


@overload(_as_rows, inline="always")
def _as_rows_impl(a):
    if a.ndim == 2:
        return lambda a: a
    if a.ndim == 1:
        return lambda a: a.reshape(1, a.size)
    return None


def _c_rows(a):
    """The 2-D bits *a* as C-ordered rows: itself, or (F-ordered: a transposed
    table) a C-ordered copy, read in memory order (a strided row's keys are one
    scalar load each; compiled code only)."""


@overload(_c_rows, inline="always")
def _c_rows_impl(a):
    if a.layout == "C":
        return lambda a: a

    def impl(a):
        rows = np.empty(a.shape, a.dtype)
        _transposed_copy(a.T, rows)
        return rows
    return impl


@helper
def _transposed_copy(src, rows):
    """``rows[t, j] = src[j, t]`` (``src`` C-ordered: read in memory order)."""
    for j in range(src.shape[0]):
        for t in range(src.shape[1]):
            rows[t, j] = src[j, t]


@helper
def _finish_rows(rows, source, masks, descending):
    """``kernels.rows.rows_finisher``'s finish of the rows NumPy sorted (``rows``:
    C-ordered bits) whose lanes are the rows of ``source`` (bits, any layout: a
    transposed table's rows are strided)."""
    n = rows.shape[1]
    for t in range(rows.shape[0]):
        nans, restore = _finish_row(rows, t, n, masks, descending)
        if restore:
            _restore_specials(source[t], 0, 1, n, masks, rows[t], nans)


@factory
def sort_finisher(dtype_str: str):
    """``finish(out, x, descending)``: ``out`` (C-ordered, 1-D or 2-D, of
    *dtype_str*), a copy of ``x`` (C- or F-ordered) that ``ndarray.sort`` sorted
    along its last axis, made the one order (``rows_finisher``'s finish). The
    arrays are taken as they are and viewed as bits here: two views in Python
    cost as much as the finish of a (4, 256) float32 sort."""
    dtype = np.dtype(dtype_str)
    BITS = np.dtype(f"u{dtype.itemsize}").type
    MASKS = key_masks(dtype)

    @njit(cache=True, nogil=True)
    def finish(out, x, descending):
        _finish_rows(_as_rows(out.view(BITS)), _as_rows(x.view(BITS)), MASKS, descending)

    return finish


#: :func:`_top_k_rows` takes the least key of each block of this many keys: the
#: k-th least of those bounds the lane's first k.
TOP_K_BLOCK = 16


@helper
def _row_keys(row, n, masks, descending, keys, mins):
    """The keys of ``row[:n]`` into ``keys`` and the least of each block of
    :data:`TOP_K_BLOCK` into ``mins`` (the last block's from the keys it has)."""
    blocks = (n + TOP_K_BLOCK - 1) // TOP_K_BLOCK
    for b in range(blocks):
        mins[b] = masks[0]
    if descending:
        for j in range(np.uint64(0), np.uint64(n)):
            keys[j] = narrow_key(row[j], masks, True)
    else:
        for j in range(np.uint64(0), np.uint64(n)):
            keys[j] = narrow_key(row[j], masks, False)
    for b in range(blocks):
        least = masks[0]
        for j in range(np.uint64(b * TOP_K_BLOCK), np.uint64(min(n, (b + 1) * TOP_K_BLOCK))):
            least = min(least, keys[j])
        mins[b] = least
    return blocks


#: :func:`_kth_least_of` counts for each of at most this many values how many do
#: not exceed it; beyond, it takes k passes of selects.
KTH_COUNTED = 32


@helper
def _kth_least_of(vals, count, k, top):
    """The *k*-th least of ``vals[:count]`` (``0 < k <= count``): the least value
    that at least k values do not exceed, by a count per value (a few dozen
    values), else by the least value above the last one found and how many equal
    it (at most k passes of selects, as ``kernels.order._kth_least``)."""
    if count <= KTH_COUNTED:
        best = top
        for i in range(count):
            v = vals[i]
            c = 0
            for j in range(count):
                c += vals[j] <= v
            best = min(best, v if c >= k else top)
        return best
    least = top
    for j in range(count):
        least = min(least, vals[j])
    seen = 0
    for j in range(count):
        seen += vals[j] == least
    while seen < k:
        above = top
        for j in range(count):
            v = vals[j]
            above = min(above, v if v > least else top)
        least = above
        for j in range(count):
            seen += vals[j] == least
    return least


@helper(inline=True)
def _pack(b, j, masks, descending):
    return (np.uint64(narrow_key(b, masks, descending)) << np.uint64(32)) | np.uint64(j)


@helper
def _packed_keys(row, n, masks, descending, packed, mins):
    """Each key of ``row[:n]`` packed above its position into ``packed`` (distinct:
    they sort as the stable order) and the least of each block of
    :data:`TOP_K_BLOCK` into ``mins``; returns the number of blocks. A whole block
    is one loop of a constant count (vectors; a loop to ``n`` and one per block
    for the minima took three times as long)."""
    full = n // TOP_K_BLOCK
    for b in range(full):
        start = b * TOP_K_BLOCK
        least = _ALL
        if descending:
            for w in range(np.uint64(0), np.uint64(TOP_K_BLOCK)):
                v = _pack(row[start + w], start + w, masks, True)
                packed[start + w] = v
                least = min(least, v)
        else:
            for w in range(np.uint64(0), np.uint64(TOP_K_BLOCK)):
                v = _pack(row[start + w], start + w, masks, False)
                packed[start + w] = v
                least = min(least, v)
        mins[b] = least
    if full * TOP_K_BLOCK == n:
        return full
    least = _ALL
    for j in range(full * TOP_K_BLOCK, n):
        v = _pack(row[j], j, masks, descending)
        packed[j] = v
        least = min(least, v)
    mins[full] = least
    return full + 1


_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_LOW = np.uint64(0xFFFFFFFF)


@helper
def _top_k_packed_rows(x, k, masks, descending, sorted_, values, indices, packed, mins, cand):
    """:func:`_top_k_rows` for keys of up to 32 bits, packed above their positions
    (one array to select and sort; the candidates kept 16 at a time by a vector
    compress, :func:`~axisops.kernels.simd_select.compress_range`)."""
    n = x.shape[1]
    full = n // TOP_K_BLOCK
    for t in range(x.shape[0]):
        row = x[t]
        blocks = _packed_keys(row, n, masks, descending, packed, mins)
        bound = _kth_least_of(mins, blocks, k, _ALL) if blocks >= k else _ALL
        c = 0
        for b in range(blocks):
            if mins[b] <= bound:
                if b < full:
                    c += compress_range(packed, b * TOP_K_BLOCK, cand, c, np.uint64(0), bound)
                else:
                    for j in range(b * TOP_K_BLOCK, n):
                        cand[c] = packed[j]
                        c += packed[j] <= bound
        _sort_packed(cand, c)
        if not sorted_:  # in lane order, as the planned path gives them
            for j in range(k):
                cand[j] &= _LOW
            _sort_packed(cand, k)
        for j in range(k):
            at = cand[j] & _LOW
            values[t, j] = row[at]
            indices[t, j] = at


@helper
def _sort_packed(keys, n):
    """Insertion sort of ``keys[:n]``."""
    for i in range(1, n):
        v = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > v:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = v


@helper
def _top_k_rows(x, k, masks, descending, sorted_, values, indices, keys, mins, chosen, pay):
    """The first *k* (``0 < k < n``) of each row of *x* (bits, any layout) in the
    stable order: their bits into ``values`` and positions into ``indices``, in
    that order when *sorted_*, else in lane order. A row's keys and the least of
    each block of :data:`TOP_K_BLOCK` are found in one vectorised pass; the k-th
    least of those (at least k keys do not exceed it) bounds the candidates, which
    the blocks holding one give in lane order; they are sorted by key, stably
    (an insertion sort: a few dozen), and the first k taken. A row of fewer
    than k blocks: every key is a candidate."""
    n = x.shape[1]
    top = masks[0]
    for t in range(x.shape[0]):
        row = x[t]
        blocks = _row_keys(row, n, masks, descending, keys, mins)
        bound = _kth_least_of(mins, blocks, k, top) if blocks >= k else top
        c = 0
        for b in range(blocks):
            if mins[b] <= bound:
                for j in range(b * TOP_K_BLOCK, min(n, (b + 1) * TOP_K_BLOCK)):
                    kj = keys[j]
                    chosen[c] = kj
                    pay[c] = j
                    c += kj <= bound
        _insertion_sort(chosen, pay, 0, c)  # in lane order: stable
        if not sorted_:  # in lane order, as the planned path gives them
            _insertion_sort(pay, chosen, 0, k)
        for j in range(k):
            values[t, j] = row[pay[j]]
            indices[t, j] = pay[j]


@factory
def top_k_entry(dtype_str: str):
    """``top_k(x, k, descending, sorted_, values, indices)``: ``top_k`` of the 1-D or
    2-D ``x`` (C- or F-ordered) of *dtype_str* along its last axis, ``0 < k < n``,
    into the C-ordered ``values`` and ``indices`` (int32 or int64) of shape
    ``x.shape[:-1] + (k,)`` (:func:`_top_k_rows`; *descending* for the largest)."""
    dtype = np.dtype(dtype_str)
    BITS = np.dtype(f"u{dtype.itemsize}").type
    MASKS = key_masks(dtype)

    @njit(cache=True, nogil=True)
    def top_k_packed(x, k, descending, sorted_, values, indices):
        n = x.shape[-1]
        packed = np.empty(n, np.uint64)
        mins = np.empty((n + TOP_K_BLOCK - 1) // TOP_K_BLOCK, np.uint64)
        cand = np.empty(n + TOP_K_BLOCK, np.uint64)  # room for a whole block's compress
        _top_k_packed_rows(_c_rows(_as_rows(x.view(BITS))), k, MASKS, descending, sorted_,
                           _as_rows(values.view(BITS)), _as_rows(indices), packed, mins, cand)

    @njit(cache=True, nogil=True)
    def top_k(x, k, descending, sorted_, values, indices):
        n = x.shape[-1]
        keys = np.empty(n, BITS)
        mins = np.empty((n + TOP_K_BLOCK - 1) // TOP_K_BLOCK, BITS)
        chosen = np.empty(n + 1, BITS)  # candidates (and one written past them)
        pay = np.empty(n + 1, np.int64)
        _top_k_rows(_c_rows(_as_rows(x.view(BITS))), k, MASKS, descending, sorted_,
                    _as_rows(values.view(BITS)), _as_rows(indices), keys, mins, chosen, pay)

    return top_k_packed if dtype.itemsize <= 4 else top_k

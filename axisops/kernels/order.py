"""Order-statistics kernels: sort, select and rank lanes on ordered integer keys.

Every element is first turned into an unsigned *key* of its own width that sorts
as NumPy sorts (:func:`order_key`): for floats -inf < numbers < +inf < NaN, with
-0.0 given +0.0's key so that the two tie, and every NaN (any sign, any payload)
the greatest key; integers their bits with the sign bit flipped; dates NaT last.
A descending order is the same key reversed for every element but NaN/NaT, which
stay last. With that, the family needs three operations on a lane of keys, each
written once:

* **a stable sort** (:func:`sort_lane`): insertion sort of short lanes, else an
  LSD radix sort of 8-bit digits (all digit histograms counted in one pass;
  digits every key shares are skipped), carrying a payload (positions, or the
  elements' own bits so that a sort gives back -0.0 and NaN payloads as they
  came). A radix sort is stable, so ties keep the lower index first in either
  direction.
* **a selection** (:func:`select_rank`): the key at place ``r`` of that order by
  MSD radix select, a histogram of the top digit and then only the bucket that
  holds place ``r`` (copied out, so each further digit reads only it), plus the
  number of keys below it and equal to it; the element itself is then the
  ``(r - less)``-th key equal to it in lane order (:func:`nth_position`): the
  element at place ``r`` of the *stable* order, bit for bit.
* counting (NaN per lane; ranks by tie group after a sort).

The kernels walk lanes of a ``ScanView`` (``axisops._layout``): task ``t`` is
lane ``(o, m, i)``, its elements ``base[p + j * n_stride]``. Each part of the
tasks allocates its own scratch (hence ``nrt=True``), so every result depends on
its lane only, never on the number of threads.
"""
from __future__ import annotations

import numpy as np
from numba.extending import overload

from .._jit import helper, kernel, part_range
from .common import block_offset, block_size
from .simd import LANES, min_max_rows, min_max_rows_by
from .simd_select import compress_range, row_sum, sort_rows_in_registers

#: Lanes up to this length are sorted by insertion (a radix sort's histograms
#: cost more than its passes save below it), and selected by sorting them.
INSERTION_MAX = 48
#: Runs a merge sort starts from (sorted by insertion), and the longest lane it
#: sorts (a radix sort's 2048-bucket histograms pay from there).
RUN = 16
MERGE_MAX = 256
#: More target places than this in one lane: sort it once instead of selecting each.
SELECT_MAX = 12
#: Bits of a radix select's digit: 2048 buckets (16 KiB of counts) stay in L1.
RADIX = 11
#: Bits of a radix sort's digit (measured: 8-bit digits, four passes for 32-bit keys
#: instead of three, sorted 1M float32 in 6.4 ms against 5.5, argsort 20.8 against 13).
SORT_RADIX = 11
#: A radix select's pass over this many keys or fewer takes digits of
#: ``SMALL_DIGIT`` bits (256 counts to clear and scan instead of 2048).
SMALL_DIGIT_COUNT = 1024
SMALL_DIGIT = 8
#: Interleaved histograms of the first selection pass (a run of equal digits
#: would otherwise wait on its own counter's last increment).
HISTOGRAMS = 4


def key_masks(dtype: np.dtype) -> tuple:
    """The constants of :func:`order_key` for *dtype* (as a tuple of its width's
    unsigned type): ``(top, sign, negmask, flip, mag, nonzero, expo, dshift, dtop,
    zero, one, shift)``."""
    bits = np.dtype(f"u{dtype.itemsize}")
    t = bits.type
    width = 8 * bits.itemsize
    top = (1 << width) - 1
    sign = 1 << (width - 1)
    kind = dtype.kind
    floating = kind == "f"
    dates = kind in "mM"
    negmask = top if floating else 0
    flip = sign if kind in "fimM" else 0
    expo = {2: 0x7C00, 4: 0x7F800000, 8: 0x7FF0000000000000}[dtype.itemsize] if floating else top
    nonzero = 0 if floating else 1
    dshift = 1 if dates else 0
    dtop = top - 1 if floating or dates else top
    return tuple(t(v) for v in (top, sign, negmask, flip, top ^ sign, nonzero, expo, dshift,
                                dtop, 0, 1, width - 1))


# ----------------------------------------------------------------------------- keys


@helper(inline=True)
def order_key(b, masks, descending):
    """The unsigned key of bit pattern *b* (an unsigned int of the element's width,
    *masks* from :func:`key_masks`): keys compare as NumPy orders the elements.
    Selects only, no branch: a loop of these vectorises.

    Floats: a negative number's bits reversed, a positive one's with the sign bit
    set, so keys grow with the value; -0.0 takes +0.0's key; every NaN ``top``.
    Signed integers and dates: the sign bit flipped (dates then less one, so NaT,
    the least int64, wraps to ``top``); unsigned and bool: the bits. Descending:
    ``dtop - key``, NaN and NaT still ``top``."""
    top, sign, negmask, flip, mag, nonzero, expo, dshift, dtop, zero, _, shift = masks
    k = b ^ (((zero - (b >> shift)) & negmask) | flip)
    m = b & mag
    k = sign if (m | nonzero) == zero else k - dshift
    if descending:
        k = dtop - k
    return top if m > expo else k


def _as_type_of(v, like):
    """*v* as an integer of *like*'s type (compiled code only)."""


@overload(_as_type_of, inline="always")
def _as_type_of_impl(v, like):
    kind = like

    def impl(v, like):
        return kind(v)
    return impl


@helper(inline=True)
def narrow_key(b, masks, descending):
    """:func:`order_key` as an integer of the key's own width (Numba computes on
    64 bits): a least key of 32-bit keys found 16 at a time, not 8 (``vpminud``)."""
    return _as_type_of(order_key(b, masks, descending), masks[0])


@helper(inline=True)
def key_bits(k, masks, descending):
    """The bits of the element whose ascending (or *descending*) key is *k* (not NaN
    or NaT; the zero key gives +0.0)."""
    negmask, flip, dshift, dtop, one, shift = (masks[2], masks[3], masks[7], masks[8],
                                               masks[10], masks[11])
    if descending:
        k = dtop - k
    k = k + dshift
    return k ^ ((((k >> shift) - one) & negmask) | flip)


@helper
def lane_keys(base, p, n_stride, n, masks, descending, keys):
    """Keys of the lane ``base[p + j * n_stride]`` (j < n) into ``keys[:n]``;
    returns how many are NaN/NaT (key ``top``; none for integers)."""
    top = masks[0]
    nans = 0
    if n_stride == 1:  # a loop LLVM vectorises: a slice, no index to wrap if negative
        lane = base[p:p + n]
        for j in range(n):
            k = order_key(lane[j], masks, descending)
            keys[j] = k
            nans += k == top
    else:
        for j in range(n):
            k = order_key(base[p + j * n_stride], masks, descending)
            keys[j] = k
            nans += k == top
    floating = masks[5] == masks[9]
    dates = masks[7] != masks[9]
    return nans if floating or dates else 0  # an integer's key may be top


#: Lanes whose elements lie ``n_stride`` apart (an axis that is not the last) are
#: read ``LANES`` neighbours at a time into a block of keys (each element of the
#: axis one run of adjacent elements: a cache line, not one line per element),
#: up to lanes of this length (a block of 65536 keys per lane is 4 MiB of uint32).
BLOCK_MAX = 1 << 16


@helper
def blocked(n, n_stride, inner, inner_stride):
    """Whether the lanes are read by :func:`lane_keys_blocked` in blocks."""
    return n_stride != 1 and inner_stride == 1 and inner >= 2 and n <= BLOCK_MAX


@helper
def lane_keys_blocked(base, p, n_stride, n, masks, descending, keys, cache, cached, i, inner,
                      inner_stride):
    """:func:`lane_keys` of lane *i* of its group (at *p*), through ``cache``
    (LANES, n + LANES): the bits of ``LANES`` neighbouring lanes, filled when lane
    *i* is not in the block that starts at *cached*, through a tile of 16 x 16 in
    its last ``LANES`` columns (runs read, runs written: 16 rows of one column at a
    time wrote each key to a line of its own, 3x slower; a cache of n columns only
    is filled that way). The keys are made from the cached row, a loop LLVM
    vectorises: made in the tile's scalar loop, they cost 3x the copy (the median
    of (1024, 1024) float64 along axis 0: 3.5 ms of copy, now 1.1; 1 thread, AMD
    EPYC Zen 5). Returns ``(nans, cached)``."""
    if not blocked(n, n_stride, inner, inner_stride):
        return lane_keys(base, p, n_stride, n, masks, descending, keys), cached
    lane = i % LANES
    p0 = p - lane
    if p0 != cached:
        width = min(LANES, inner - (i - lane))
        if cache.shape[1] >= n + LANES:
            for j0 in range(0, n, LANES):
                span = min(LANES, n - j0)
                for jj in range(span):
                    at = p0 + (j0 + jj) * n_stride
                    for w in range(width):
                        cache[w, n + jj] = base[at + w]
                for w in range(width):
                    for jj in range(span):
                        cache[w, j0 + jj] = cache[w, n + jj]
        else:
            for j in range(n):
                for w in range(width):
                    cache[w, j] = base[p0 + j * n_stride + w]
        cached = p0
    return lane_keys(cache[lane], 0, 1, n, masks, descending, keys), cached


@helper(inline=True)
def _digit(k, shift, mask):
    return np.int64((np.uint64(k) >> np.uint64(shift)) & np.uint64(mask))


# ---------------------------------------------------------------------------- sorts


@helper
def _insertion_sort(keys, pay, lo, hi):
    """Stable insertion sort of ``keys[lo:hi]`` with their payload."""
    for i in range(lo + 1, hi):
        k = keys[i]
        v = pay[i]
        j = i - 1
        while j >= lo and keys[j] > k:
            keys[j + 1] = keys[j]
            pay[j + 1] = pay[j]
            j -= 1
        keys[j + 1] = k
        pay[j + 1] = v


@helper
def _merge_sort(keys, pay, n, keys2, pay2):
    """Stable bottom-up merge sort of ``keys[:n]`` with their payload (runs of
    ``RUN`` by insertion first); the result ends in ``keys``/``pay``."""
    for lo in range(0, n, RUN):
        _insertion_sort(keys, pay, lo, min(lo + RUN, n))
    src_k, src_p, dst_k, dst_p = keys, pay, keys2, pay2
    swapped = False
    width = RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            w = lo
            while i < mid and j < hi:  # selects, no branch on the data
                ki = src_k[i]
                kj = src_k[j]
                right = kj < ki  # equal keys: the left run's first (stable)
                dst_k[w] = kj if right else ki
                dst_p[w] = src_p[j] if right else src_p[i]
                j += right
                i += not right
                w += 1
            while i < mid:
                dst_k[w] = src_k[i]
                dst_p[w] = src_p[i]
                i += 1
                w += 1
            while j < hi:
                dst_k[w] = src_k[j]
                dst_p[w] = src_p[j]
                j += 1
                w += 1
        src_k, dst_k = dst_k, src_k
        src_p, dst_p = dst_p, src_p
        swapped = not swapped
        width *= 2
    if swapped:
        for j in range(n):
            keys[j] = keys2[j]
            pay[j] = pay2[j]


@helper
def sort_lane(keys, pay, n, keys2, pay2, counts, nbytes, carry):
    """Stable sort of ``keys[:n]`` in place with their payload ``pay[:n]`` (``keys2``,
    ``pay2``: scratch of the same length; ``counts`` int64 (8, 2048)). Without
    *carry* the payload is not needed: pass the key arrays again as ``pay`` and
    ``pay2``. Insertion sort of short lanes, merge sort up to ``MERGE_MAX``, else an
    LSD radix sort of ``SORT_RADIX``-bit digits, skipping digits every key shares."""
    if n <= INSERTION_MAX:
        _insertion_sort(keys, pay, 0, n)
        return
    if n <= MERGE_MAX:
        _merge_sort(keys, pay, n, keys2, pay2)
        return
    _radix_sort(keys, pay, n, keys2, pay2, counts, 0, 8 * nbytes, carry)


@helper
def _radix_sort(keys, pay, n, keys2, pay2, counts, low, width, carry):
    """LSD radix sort of ``keys[:n]`` on their bits ``[low, low + width)`` (see
    :func:`sort_lane`)."""
    digits = (width + SORT_RADIX - 1) // SORT_RADIX
    for d in range(digits):
        for b in range(1 << SORT_RADIX):
            counts[d, b] = 0
    mask = (1 << SORT_RADIX) - 1
    for j in range(n):
        k = keys[j]
        for d in range(digits):
            counts[d, _digit(k, low + SORT_RADIX * d, mask)] += 1
    src_k, src_p, dst_k, dst_p = keys, pay, keys2, pay2
    swapped = False
    for d in range(digits):
        shift = low + SORT_RADIX * d
        if counts[d, _digit(src_k[0], shift, mask)] == n:
            continue  # every key has this digit: the pass would copy
        total = 0
        for b in range(1 << SORT_RADIX):  # counts become the first slot of each bucket
            c = counts[d, b]
            counts[d, b] = total
            total += c
        if carry:
            for j in range(n):
                k = src_k[j]
                b = _digit(k, shift, mask)
                s = counts[d, b]
                counts[d, b] = s + 1
                dst_k[s] = k
                dst_p[s] = src_p[j]
        else:
            for j in range(n):
                k = src_k[j]
                b = _digit(k, shift, mask)
                s = counts[d, b]
                counts[d, b] = s + 1
                dst_k[s] = k
        src_k, dst_k = dst_k, src_k
        src_p, dst_p = dst_p, src_p
        swapped = not swapped
    if swapped:
        for j in range(n):
            keys[j] = keys2[j]
        if carry:
            for j in range(n):
                pay[j] = pay2[j]


@helper(nrt=True)
def _packing_scratch(scratch, part, parts, n):
    """Two uint64 buffers of *n* for :func:`sort_positions`: a row of the caller's
    ``scratch`` (rows, 2 * n) when it has one for each part (NumPy allocates large
    arrays on huge pages: a fresh 8 MiB buffer from here faulted 2048 pages, 2 ms
    of an 18 ms argsort of 1M float32), else new ones."""
    if parts <= scratch.shape[0] and scratch.shape[1] >= 2 * n:
        buf = scratch
        row = part
    else:
        buf = np.empty((1, 2 * n), np.uint64)
        row = 0
    return buf[row, :n], buf[row, n:2 * n]


@helper(inline=True, nrt=True)
def _sort_scratch(base, scratch, part, parts, n, positions):
    """Scratch for sorting a lane's keys, with their *positions*
    (:func:`sort_positions`) or alone (:func:`sort_lane`): ``(keys2, pay, pay2,
    packed, packed2, counts)``, each only as large as its use (fresh pages of a
    large block cost a fault each)."""
    packing = positions and base.itemsize <= 4 and n > MERGE_MAX
    keys2 = np.empty(1 if packing else n, base.dtype)
    pay = np.empty(n if positions else 1, np.int64)
    pay2 = np.empty(n if positions and not packing else 1, np.int64)
    packed, packed2 = _packing_scratch(scratch, part, parts, n if packing else 1)
    counts = np.empty((8, 1 << RADIX) if n > MERGE_MAX else (1, 1), np.int64)
    return keys2, pay, pay2, packed, packed2, counts


@helper
def sort_positions(keys, pay, n, keys2, pay2, packed, packed2, counts, nbytes):
    """:func:`sort_lane` of ``keys[:n]`` carrying their positions ``0..n-1`` into
    ``pay``. Keys of up to 32 bits in a long lane are packed with their position
    into one uint64 (``packed``, ``packed2``: scratch of n) and sorted on the key's
    bits alone: 8 bytes moved per element and pass instead of 12 (a radix sort is
    stable, the positions come in order)."""
    if nbytes > 4 or n <= MERGE_MAX:
        for j in range(n):
            pay[j] = j
        sort_lane(keys, pay, n, keys2, pay2, counts, nbytes, True)
        return
    low = np.uint64(0xFFFFFFFF)
    for j in range(n):
        packed[j] = (np.uint64(keys[j]) << np.uint64(32)) | np.uint64(j)
    _radix_sort(packed, packed, n, packed2, packed2, counts, 32, 8 * nbytes, False)
    for j in range(n):
        v = packed[j]
        keys[j] = v >> np.uint64(32)
        pay[j] = v & low


# ------------------------------------------------------------------------ selection


@helper
def _differing_bits(src, count):
    """How many low bits the keys ``src[:count]`` do not all share (one
    vectorised pass: their OR against their AND): a radix select skips the digits
    above, which would each cost a pass that keeps every key (int64 of a small
    range, dates)."""
    ones = src[0]
    zeros = src[0]
    for j in range(count):
        ones |= src[j]
        zeros &= src[j]
    d = np.uint64(ones ^ zeros)
    bits = 0
    while d != np.uint64(0):
        d >>= np.uint64(1)
        bits += 1
    return bits


@helper
def _keep_bucket(src, count, work, shift, bits, bucket, width):
    """The keys of ``src[:count]`` whose digit at *shift* (of *bits*) is *bucket*
    into ``work``, in order (``work`` may be ``src``: a key is written no later
    than it was read). The keys share the bits above the digit, so the bucket is
    a range of keys: a row of ``LANES`` at a time by a vectorised compress (a
    branch on each key, mispredicted where the bucket holds a quarter of the keys,
    as the first float64 digit of normal data does, cost most of a select)."""
    k0 = src[0]
    above = shift + bits  # in uint64: Numba gives float64 for uint64 mixed with int64
    prefix = np.uint64(0)
    if above < width:
        prefix = (np.uint64(k0) >> np.uint64(above)) << np.uint64(above)
    lo = _as_type_of(prefix | (np.uint64(bucket) << np.uint64(shift)), k0)
    span = _as_type_of((np.uint64(1) << np.uint64(shift)) - np.uint64(1), k0)
    _keep_range(src, count, work, lo, span)


def _keep_range(src, count, dst, lo, span):
    """The keys of ``src[:count]`` with ``key - lo <= span`` (wrapping) into
    ``dst`` in order (compiled code only)."""


@overload(_keep_range, inline="always")
def _keep_range_impl(src, count, dst, lo, span):
    if src.dtype.bitwidth in (32, 64):  # a compress of 16 keys a row
        def rows(src, count, dst, lo, span):
            n_rows = count // LANES
            w = 0
            for r in range(n_rows):
                w += compress_range(src, r * LANES, dst, w, lo, span)
            for j in range(n_rows * LANES, count):
                k = src[j]
                if _as_type_of(k - lo, span) <= span:
                    dst[w] = k
                    w += 1
        return rows

    def keys(src, count, dst, lo, span):  # LLVM aborted on a compress of 16-bit keys
        w = 0
        for j in range(count):
            k = src[j]
            if _as_type_of(k - lo, span) <= span:
                dst[w] = k
                w += 1
    return keys


@helper
def select_rank(keys, n, r, work, hist, nbytes):
    """``(key, less, equal)``: the key at place *r* (0-based) of the sorted
    ``keys[:n]``, how many keys are below it and how many equal it; by MSD radix
    select of 11-bit digits, 8-bit ones over ``SMALL_DIGIT_COUNT`` keys or fewer
    (``work``: scratch of n keys; ``hist``: int64 (HISTOGRAMS, 2048)). Each pass
    counts the digits of the candidates, keeps the bucket that holds place *r*
    (copied out in lane order, :func:`_keep_bucket`) and goes on below it;
    once ``INSERTION_MAX`` candidates or fewer remain, they are sorted instead
    (each further pass would clear and scan 2048 counts for a handful of keys)."""
    src = keys
    count = n
    less = 0
    width = 8 * nbytes
    unresolved = width  # the low bits not yet chosen by a digit
    while True:
        if count > INSERTION_MAX:  # digits start at the highest bit where keys differ
            unresolved = min(unresolved, _differing_bits(src, count))
            if unresolved == 0:  # all equal
                return src[0], less, count
        # a few keys: a digit of fewer bits (a histogram to clear and scan for each)
        bits = min(RADIX if count > SMALL_DIGIT_COUNT else SMALL_DIGIT, unresolved)
        shift = unresolved - bits
        if count <= INSERTION_MAX:
            for j in range(count):
                work[j] = src[j]
            _insertion_sort(work, work, 0, count)
            key = work[r]
            first = r
            while first > 0 and work[first - 1] == key:
                first -= 1
            last = r + 1
            while last < count and work[last] == key:
                last += 1
            return key, less + first, last - first
        size_ = 1 << bits
        mask = size_ - 1
        # interleaved counts only where a run of equal digits could wait on one
        histograms = HISTOGRAMS if count >= 4096 else 1
        for h in range(histograms):
            for b in range(size_):
                hist[h, b] = 0
        stop = count - count % histograms
        for j in range(0, stop, histograms):
            for h in range(histograms):
                hist[h, _digit(src[j + h], shift, mask)] += 1
        for j in range(stop, count):
            hist[0, _digit(src[j], shift, mask)] += 1
        below = 0
        bucket = 0
        first = 0  # skip runs of LANES buckets whose counts all lie below place r
        while first + LANES <= size_:  # (bucket by bucket: 1 us of a 1024-key select)
            c = row_sum(hist, 0, first)
            for h in range(1, histograms):
                c += row_sum(hist, h, first)
            if below + c > r:
                break
            below += c
            first += LANES
        for b in range(first, size_):
            c = hist[0, b]
            for h in range(1, histograms):
                c += hist[h, b]
            if below + c > r:
                bucket = b
                break
            below += c
        r -= below
        less += below
        size = hist[0, bucket]
        for h in range(1, histograms):
            size += hist[h, bucket]
        if size != count:  # keep only the bucket (in lane order)
            _keep_bucket(src, count, work, shift, bits, bucket, width)
            src = work
            count = size
        if count == 1 or shift == 0:
            return src[0], less, count
        unresolved = shift


@helper
def next_key(keys, n, key, top):
    """``(k, equal)``: the least key above *key* in ``keys[:n]`` and how many equal
    it (the caller knows there is one). Two passes of selects, no branch: half the
    keys are above *key*, a branch on it would be mispredicted half the time."""
    best = top
    for j in range(n):
        k = keys[j]
        best = min(best, k if k > key else top)
    equal = 0
    for j in range(n):
        equal += keys[j] == best
    return best, equal


@helper
def nth_position(keys, n, key, occurrence):
    """The position of the *occurrence*-th (0-based) key equal to *key*."""
    seen = 0
    for j in range(n):
        if keys[j] == key:
            if seen == occurrence:
                return j
            seen += 1
    return -1


# -------------------------------------------------------------------------- kernels


@helper(inline=True)
def _group_start(o, m, offset, outer_shape, outer_strides, mid_shape, mid_strides):
    """The offset of lane group (o, m) (no division for one outer dimension and none
    or one between the axis and the last)."""
    if outer_shape.size == 1:
        off = offset + o * outer_strides[0]
    else:
        off = offset + block_offset(o, outer_shape, outer_strides)
    if mid_shape.size == 1:
        return off + m * mid_strides[0]
    if mid_shape.size > 1:
        return off + block_offset(m, mid_shape, mid_strides)
    return off


@helper(inline=True)
def _lane(t, lo, o, m, i, start, mids, inner, offset, outer_shape, outer_strides, mid_shape,
          mid_strides):
    """``(o, m, i, start)`` of lane *t* (``o, m, i`` its place in the (outer, mid,
    inner) lanes, ``start`` its group's offset), from lane ``t - 1``'s: lanes are
    walked in order, dividing only at the first."""
    if t == lo:
        i = t % inner
        g = t // inner
        o = g // mids
        m = g - o * mids
    else:
        i += 1
        if i < inner:
            return o, m, i, start
        i = 0
        m += 1
        if m == mids:
            m = 0
            o += 1
    return o, m, i, _group_start(o, m, offset, outer_shape, outer_strides, mid_shape, mid_strides)


@helper(inline=True, nrt=True)
def _part_lanes(part, parts, base, outer_shape, n, n_stride, mid_shape, inner, inner_stride,
                keyed=True):
    """What a lane kernel starts from: ``(lo, hi, mids, keys, cache)``: this part's
    lanes ``[lo, hi)``, the lanes between the axis and the last (a lane's places in
    an output of layout (outer, length, mid, inner) lie ``mids * inner`` apart), a
    lane's keys and the block of its neighbours' keys (:func:`lane_keys_blocked`),
    both empty unless *keyed*.

    Inlined by Numba: as a call (arrays that a call returns, not allocations the
    kernel sees), the median along the rows of a (1024, 1024) float32 ran 15 %
    slower, a partition 8 % (one thread, AMD EPYC Zen 5)."""
    mids = block_size(mid_shape)
    lo, hi = part_range(block_size(outer_shape) * mids * inner, part, parts)
    keys = np.empty(n if keyed else 0, base.dtype)
    cache = np.empty((LANES, n + LANES if keyed and blocked(n, n_stride, inner, inner_stride)
                      else 0), base.dtype)
    return lo, hi, mids, keys, cache


#: :func:`_next_lane`'s walk before the first lane: ``(o, m, i, start, cached)``.
FIRST_WALK = (0, 0, 0, 0, -1)


@helper(inline=True)
def _walk_lane(t, lo, walk, offset, outer_shape, outer_strides, mid_shape, mid_strides, mids,
               inner, inner_stride):
    """Lane *t* of lanes walked in order from *lo* (``walk`` as lane ``t - 1`` left
    it, ``FIRST_WALK`` at the first): ``(walk, p)``, its offset *p* in ``base``."""
    o, m, i, start, cached = walk
    o, m, i, start = _lane(t, lo, o, m, i, start, mids, inner, offset, outer_shape,
                           outer_strides, mid_shape, mid_strides)
    return (o, m, i, start, cached), start + i * inner_stride


@helper(inline=True)
def _next_lane(t, lo, walk, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
               mid_strides, mids, inner, inner_stride, masks, descending, keys, cache):
    """:func:`_walk_lane` to lane *t*, its keys into ``keys`` (:func:`lane_keys_blocked`):
    ``(walk, p, nans)``."""
    walk, p = _walk_lane(t, lo, walk, offset, outer_shape, outer_strides, mid_shape,
                         mid_strides, mids, inner, inner_stride)
    o, m, i, start, cached = walk
    nans, cached = lane_keys_blocked(base, p, n_stride, n, masks, descending, keys, cache,
                                     cached, i, inner, inner_stride)
    return (o, m, i, start, cached), p, nans


@helper(inline=True)
def _out_first(walk, length, mids, inner):
    """The place of a lane's first element in an output of layout (outer, *length*,
    mid, inner) (the next ``mids * inner`` further)."""
    return (walk[0] * length * mids + walk[1]) * inner + walk[2]


@helper
def _restore_specials(base, p, n_stride, n, masks, keys, nans):
    """After a sort of keys alone turned back into bits (:func:`key_bits`), put
    back the elements a key does not tell apart, in lane order: the zeros (the
    block of +0.0s holds -0.0s too) and the NaNs (the last *nans*, payloads kept)."""
    sign, mag, nonzero, zero = masks[1], masks[4], masks[5], masks[9]
    if masks[7] != zero:  # dates: every NaT is the one bit pattern
        for j in range(n - nans, n):
            keys[j] = sign
        return
    if nonzero != zero:
        return  # integers: keys are one to one
    negative_zero = False
    for j in range(n):
        negative_zero |= base[p + j * n_stride] == sign
    if not negative_zero and nans == 0:
        return
    z = 0
    while z < n - nans and (keys[z] & mag) != zero:
        z += 1
    w = n - nans
    for j in range(n):
        b = base[p + j * n_stride]
        m = b & mag
        if m == zero and negative_zero:
            keys[z] = b
            z += 1
        elif m > masks[6]:
            keys[w] = b
            w += 1


@kernel(nrt=True)
def sort_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                mid_strides, inner, inner_stride, masks, descending, want_values, values,
                want_positions, positions, scratch):
    """Stable sort of every lane: ``values`` (flat, the layout (outer, n, mid,
    inner), the elements' bits) or ``positions`` (the same layout, any int dtype)
    of the sorted order. Values sort the keys alone and turn them back into bits."""
    lo, hi, mids, keys, cache = _part_lanes(part, parts, base, outer_shape, n, n_stride,
                                            mid_shape, inner, inner_stride)
    nbytes = base.itemsize
    keys2, pay, pay2, packed, packed2, counts = _sort_scratch(base, scratch, part, parts, n,
                                                              want_positions)
    step = mids * inner
    walk = FIRST_WALK
    for t in range(lo, hi):
        walk, p, nans = _next_lane(t, lo, walk, base, offset, outer_shape, outer_strides, n,
                                   n_stride, mid_shape, mid_strides, mids, inner, inner_stride,
                                   masks, descending, keys, cache)
        q = _out_first(walk, n, mids, inner)
        if want_positions:
            sort_positions(keys, pay, n, keys2, pay2, packed, packed2, counts, nbytes)
            for j in range(n):
                positions[q + j * step] = pay[j]
            continue
        sort_lane(keys, keys, n, keys2, keys2, counts, nbytes, False)
        for j in range(n - nans):
            keys[j] = key_bits(keys[j], masks, descending)
        _restore_specials(base, p, n_stride, n, masks, keys, nans)
        if want_values:
            for j in range(n):
                values[q + j * step] = keys[j]


#: ``top_k`` of at most this many keeps them in order while it reads the lane (a
#: later key displaces one only when it is better than the k-th so far: rare after
#: the first few, so the loop is a compare per key), instead of selecting.
SMALL_K = 32


@helper
def _best_k(keys, n, k, chosen, pay):
    """The first *k* of ``keys[:n]`` in the stable order, into ``chosen[:k]`` and
    their positions into ``pay[:k]`` (in order)."""
    for j in range(k):  # the first k, sorted
        chosen[j] = keys[j]
        pay[j] = j
    _insertion_sort(chosen, pay, 0, k)
    worst = chosen[k - 1]
    for j in range(k, n):
        kj = keys[j]
        if kj < worst:  # better than the k-th (an equal one comes later: not better)
            q = k - 1
            while q > 0 and chosen[q - 1] > kj:
                chosen[q] = chosen[q - 1]
                pay[q] = pay[q - 1]
                q -= 1
            chosen[q] = kj
            pay[q] = j
            worst = chosen[k - 1]


#: ``top_k`` of a lane of at least ``FILTER_RATIO * k`` blocks first finds a key
#: that at least *k* of its keys do not exceed: the k-th least of its blocks'
#: least keys (or of its chunks', where there are ``FILTER_RATIO * k`` chunks), in
#: one vectorised read of the lane; then it reads again, key by key, only the
#: blocks whose least key does not exceed that bound. A chunk is ``CHUNK``
#: elements along the lane, as ``FILTER_BLOCK`` rows of ``CHUNK_WIDTH``; its
#: blocks are their columns, so that the least keys of a chunk's blocks are one
#: vertical minimum of its rows (of contiguous blocks, LLVM vectorised the loop over
#: the blocks, with gathers: 0.55 ms for 1M float32 where this takes 0.1).
FILTER_BLOCK = 16
CHUNK_WIDTH = 64
CHUNK = FILTER_BLOCK * CHUNK_WIDTH
FILTER_RATIO = 4


@helper
def _block_minima(base, p, n, n_stride, masks, descending, mins, mins2):
    """The least key of each block of the lane ``base[p + j * n_stride]`` (see
    :data:`FILTER_BLOCK`) into ``mins[0]`` (block ``c * CHUNK_WIDTH + w``: column
    *w* of chunk *c*; an empty one gets the greatest key), each chunk's into
    ``mins2[0]``; returns the number of chunks."""
    top = masks[0]
    chunks = (n + CHUNK - 1) // CHUNK
    for c in range(chunks):
        start = c * CHUNK
        size = min(CHUNK, n - start)
        rows = size // CHUNK_WIDTH
        least = mins[0, c * CHUNK_WIDTH:(c + 1) * CHUNK_WIDTH]
        for w in range(CHUNK_WIDTH):
            least[w] = top
        if n_stride == 1:  # vectors of keys a row
            chunk = base[p + start:p + start + size]  # indices >= 0: no wraparound
            for r in range(rows):
                for w in range(CHUNK_WIDTH):
                    least[w] = min(least[w], narrow_key(chunk[r * CHUNK_WIDTH + w], masks,
                                                        descending))
        else:
            for r in range(rows):
                q = p + (start + r * CHUNK_WIDTH) * n_stride
                for w in range(CHUNK_WIDTH):
                    least[w] = min(least[w], narrow_key(base[q + w * n_stride], masks,
                                                        descending))
        for w in range(size - rows * CHUNK_WIDTH):
            j = start + rows * CHUNK_WIDTH + w
            least[w] = min(least[w], narrow_key(base[p + j * n_stride], masks, descending))
        m = top
        for w in range(CHUNK_WIDTH):
            m = min(m, least[w])
        mins2[0, c] = m
    return chunks


@helper
def _block_minima_across(base, p0, n, n_stride, width, masks, descending, mins, mins2, acc):
    """:func:`_block_minima` of *width* (at most ``LANES``) neighbouring lanes, lane
    ``w`` at ``p0 + w``, into ``mins[w]`` and ``mins2[w]``: each element of the axis
    is one run of adjacent elements, a vector of keys (``acc``: scratch
    (CHUNK_WIDTH, LANES))."""
    top = masks[0]
    chunks = (n + CHUNK - 1) // CHUNK
    for c in range(chunks):
        start = c * CHUNK
        end = min(start + CHUNK, n)
        for b in range(CHUNK_WIDTH):
            for w in range(LANES):
                acc[b, w] = top
        for j in range(start, end):
            b = (j - start) % CHUNK_WIDTH
            q = p0 + j * n_stride
            if width == LANES:
                keys = base[q:q + LANES]
                for w in range(LANES):
                    acc[b, w] = min(acc[b, w], narrow_key(keys[w], masks, descending))
            else:
                for w in range(width):
                    acc[b, w] = min(acc[b, w], narrow_key(base[q + w], masks, descending))
        for w in range(width):
            m = top
            for b in range(CHUNK_WIDTH):
                mins[w, c * CHUNK_WIDTH + b] = acc[b, w]
                m = min(m, acc[b, w])
            mins2[w, c] = m
    return chunks


@helper
def _kth_least(vals, row, count, k, masks, work, hist, nbytes):
    """The *k*-th least of ``vals[row, :count]`` (``k <= count``): up to
    ``SMALL_K`` by the least key above the last one found and how many equal it,
    at most k passes of selects, no branch (kept in order as they were read, as
    :func:`_best_k` does, a top_k 10 along the rows of a (1024, 1024) float32 took
    1.24 ms, this 0.89), else by :func:`select_rank` of a copy (``work``: scratch of
    2 * count)."""
    if k <= SMALL_K:
        top = masks[0]
        least = top
        for j in range(count):
            least = min(least, vals[row, j])
        seen = 0
        for j in range(count):
            seen += vals[row, j] == least
        while seen < k:
            above = top
            for j in range(count):
                v = vals[row, j]
                above = min(above, v if v > least else top)
            least = above
            for j in range(count):
                seen += vals[row, j] == least
        return least
    for j in range(count):
        work[count + j] = vals[row, j]
    return select_rank(work[count:2 * count], count, k - 1, work, hist, nbytes)[0]


@helper
def _filter_bound(mins, mins2, row, chunks, k, masks, work, hist, nbytes):
    """A key that at least *k* keys of the lane do not exceed, from its block and
    chunk minima (:func:`_block_minima`; at least k blocks)."""
    if chunks >= FILTER_RATIO * k:
        return _kth_least(mins2, row, chunks, k, masks, work, hist, nbytes)
    return _kth_least(mins, row, chunks * CHUNK_WIDTH, k, masks, work, hist, nbytes)


@helper
def _filtered_best_k(base, p, n, n_stride, masks, descending, mins, mins2, row, chunks, bound,
                     k, chosen, pay):
    """The first *k* of the lane (:func:`_best_k`) from the keys not above *bound*
    of the blocks whose least key does not exceed it (:func:`_block_minima`), read
    block by block: kept in order of key, then position (the stable order)."""
    filled = 0
    for c in range(chunks):
        if mins2[row, c] > bound:
            continue
        start = c * CHUNK
        size = min(CHUNK, n - start)
        for w in range(min(CHUNK_WIDTH, size)):
            if mins[row, c * CHUNK_WIDTH + w] > bound:
                continue
            for j in range(start + w, start + size, CHUNK_WIDTH):
                kj = narrow_key(base[p + j * n_stride], masks, descending)
                if kj > bound or (filled == k and (kj > chosen[k - 1] or (
                        kj == chosen[k - 1] and j > pay[k - 1]))):
                    continue
                q = filled if filled < k else k - 1
                while q > 0 and (chosen[q - 1] > kj or (chosen[q - 1] == kj and pay[q - 1] > j)):
                    chosen[q] = chosen[q - 1]
                    pay[q] = pay[q - 1]
                    q -= 1
                chosen[q] = kj
                pay[q] = j
                filled += filled < k


@helper
def _filtered_keys(base, p, n, n_stride, masks, descending, mins, mins2, row, chunks, bound,
                   keys, pos, columns):
    """The keys not above *bound* of the blocks whose least key does not exceed it
    (:func:`_block_minima`), in lane order, into ``keys`` and their positions into
    ``pos``; returns how many (``columns``: scratch of ``CHUNK_WIDTH``)."""
    filled = 0
    for c in range(chunks):
        if mins2[row, c] > bound:
            continue
        count = 0
        for w in range(CHUNK_WIDTH):
            columns[count] = w
            count += mins[row, c * CHUNK_WIDTH + w] <= bound
        end = min(c * CHUNK + CHUNK, n)
        for first in range(c * CHUNK, end, CHUNK_WIDTH):
            for x in range(count):
                j = first + columns[x]
                if j >= end:
                    break
                kj = narrow_key(base[p + j * n_stride], masks, descending)
                if kj <= bound:
                    keys[filled] = kj
                    pos[filled] = j
                    filled += 1
    return filled


@helper
def _candidate_blocks(mins, row, blocks, bound):
    """How many of the blocks ``mins[row, :blocks]`` have a key not above *bound*."""
    c = 0
    for b in range(blocks):
        c += mins[row, b] <= bound
    return c
@helper
def _first_k_selected(keys, pos, count, k, chosen, pay, work, hist, nbytes):
    """The first *k* of ``keys[:count]`` (in lane order, at positions ``pos``, or
    ``0..count-1`` where ``pos`` is empty), in lane order, into ``chosen``/``pay``: a
    radix select of the k-th, then every key below it and the first equal ones."""
    key, less, _ = select_rank(keys, count, k - 1, work, hist, nbytes)
    ties = k - less  # the first `ties` keys equal to `key` are in
    c = 0
    for j in range(count):
        kj = keys[j]
        if kj < key or (kj == key and ties > 0):
            if kj == key:
                ties -= 1
            chosen[c] = kj
            pay[c] = pos[j] if pos.size else j
            c += 1


@kernel(nrt=True)
def top_k_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                 mid_strides, inner, inner_stride, masks, descending, k, sorted_, values,
                 positions):
    """The first *k* of every lane in the (stable) order: their bits into
    ``values`` and positions into ``positions`` (flat, layout (outer, k, mid,
    inner)); in that order when *sorted_*, else in lane order.

    Lanes of ``FILTER_RATIO * k`` blocks or more are filtered (see
    :data:`FILTER_BLOCK`): neighbouring lanes along an axis that is not the last,
    ``LANES`` at a time; the others are read into keys whole."""
    filtering = n > INSERTION_MAX and k < n and n // FILTER_BLOCK >= FILTER_RATIO * k
    across = filtering and n_stride != 1 and inner_stride == 1 and inner >= 2
    lo, hi, mids, keys, cache = _part_lanes(part, parts, base, outer_shape, n, n_stride,
                                            mid_shape, inner, inner_stride, not filtering)
    nbytes = base.itemsize
    # scratch only as large as its use: fresh pages of a large block cost a fault each
    chunks_max = (n + CHUNK - 1) // CHUNK if filtering else 0
    mins = np.empty((LANES if across else 1, chunks_max * CHUNK_WIDTH), base.dtype)
    mins2 = np.empty((LANES if across else 1, chunks_max), base.dtype)
    acc = np.empty((CHUNK_WIDTH, LANES) if across else (1, 1), base.dtype)
    columns = np.empty(CHUNK_WIDTH, np.int64)
    large = n > INSERTION_MAX and SMALL_K < k < n
    work = np.empty(2 * chunks_max * CHUNK_WIDTH if filtering and large else n if large else 1,
                    base.dtype)
    found = np.empty(0, base.dtype)  # a filtered lane's keys (grown as needed)
    found_at = np.empty(0, np.int64)
    no_positions = np.empty(0, np.int64)
    chosen = np.empty(k, base.dtype)
    chosen2 = np.empty(k, base.dtype)
    short = min(n, INSERTION_MAX)
    pay = np.empty(max(k, short), np.int64)
    pay2 = np.empty(max(k, short), np.int64)
    hist = np.empty((HISTOGRAMS, 1 << RADIX) if n > INSERTION_MAX else (1, 1), np.int64)
    counts = np.empty((8, 1 << RADIX) if k > MERGE_MAX else (1, 1), np.int64)
    step = mids * inner
    walk = FIRST_WALK
    grouped = -1  # the first of the neighbouring lanes in `mins`
    chunks = 0
    for t in range(lo, hi):
        if filtering:
            walk, p = _walk_lane(t, lo, walk, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, mids, inner, inner_stride)
            row = 0
            if across:
                i = walk[2]
                row = i % LANES
                if p - row != grouped:
                    grouped = p - row
                    chunks = _block_minima_across(base, grouped, n, n_stride,
                                                  min(LANES, inner - (i - row)), masks,
                                                  descending, mins, mins2, acc)
            else:
                chunks = _block_minima(base, p, n, n_stride, masks, descending, mins, mins2)
            bound = _filter_bound(mins, mins2, row, chunks, k, masks, work, hist, nbytes)
            if k <= SMALL_K:
                _filtered_best_k(base, p, n, n_stride, masks, descending, mins, mins2, row,
                                 chunks, bound, k, chosen, pay)
                if not sorted_:  # in lane order
                    _insertion_sort(pay, chosen, 0, k)
            else:
                room = _candidate_blocks(mins, row, chunks * CHUNK_WIDTH, bound) * FILTER_BLOCK
                if room > found.size:
                    found = np.empty(room, base.dtype)
                    found_at = np.empty(room, np.int64)
                    if room > work.size:
                        work = np.empty(room, base.dtype)
                count = _filtered_keys(base, p, n, n_stride, masks, descending, mins, mins2, row,
                                       chunks, bound, found, found_at, columns)
                _first_k_selected(found, found_at, count, k, chosen, pay, work, hist, nbytes)
                if sorted_:
                    sort_lane(chosen, pay, k, chosen2, pay2, counts, nbytes, True)
        else:
            walk, p, _ = _next_lane(t, lo, walk, base, offset, outer_shape, outer_strides, n,
                                    n_stride, mid_shape, mid_strides, mids, inner, inner_stride,
                                    masks, descending, keys, cache)
            if n <= INSERTION_MAX:  # a short lane: sorted whole
                for j in range(n):
                    pay[j] = j
                _insertion_sort(keys, pay, 0, n)
                if not sorted_:  # the k chosen in lane order, as a long lane gives them
                    _insertion_sort(pay, keys, 0, k)
            else:
                if k == n:  # all of them
                    for j in range(n):
                        chosen[j] = keys[j]
                        pay[j] = j
                elif k <= SMALL_K:
                    _best_k(keys, n, k, chosen, pay)
                    if not sorted_:  # in lane order
                        _insertion_sort(pay, chosen, 0, k)
                else:
                    _first_k_selected(keys, no_positions, n, k, chosen, pay, work, hist, nbytes)
                if sorted_ and (k > SMALL_K or k == n):
                    sort_lane(chosen, pay, k, chosen2, pay2, counts, nbytes, True)
        q = _out_first(walk, k, mids, inner)
        for j in range(k):
            values[q] = base[p + pay[j] * n_stride]
            positions[q] = pay[j]
            q += step


@kernel(nrt=True)
def partition_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                     mid_shape, mid_strides, inner, inner_stride, masks, kth, want_values, values,
                     want_positions, positions):
    """Every lane partitioned about place *kth* of the stable order: the elements
    before that place in lane order, then it, then the others in lane order
    (flat outputs, layout (outer, n, mid, inner))."""
    lo, hi, mids, keys, cache = _part_lanes(part, parts, base, outer_shape, n, n_stride,
                                            mid_shape, inner, inner_stride)
    nbytes = base.itemsize
    work = np.empty(n, base.dtype)
    hist = np.empty((HISTOGRAMS, 1 << RADIX) if n > INSERTION_MAX else (1, 1), np.int64)
    step = mids * inner
    walk = FIRST_WALK
    for t in range(lo, hi):
        walk, p, _ = _next_lane(t, lo, walk, base, offset, outer_shape, outer_strides, n,
                                n_stride, mid_shape, mid_strides, mids, inner, inner_stride,
                                masks, False, keys, cache)
        key, less, _ = select_rank(keys, n, kth, work, hist, nbytes)
        ties = kth - less  # equal keys before the chosen one
        first = _out_first(walk, n, mids, inner)
        before = first
        after = first + (kth + 1) * step
        for j in range(n):
            kj = keys[j]
            if kj < key or (kj == key and ties > 0):
                if kj == key:
                    ties -= 1
                q = before
                before += step
            elif kj == key and ties == 0:
                ties = -1
                q = first + kth * step
            else:
                q = after
                after += step
            if want_values:
                values[q] = base[p + j * n_stride]
            if want_positions:
                positions[q] = j


#: Lanes at least this long are selected from a bracket found by sampling
#: (:func:`bracket_keys`), read from the input without a copy of their keys. A
#: radix select's first digit of a float64 key is the sign and the top ten
#: exponent bits: place 0.9 of a normal sample sits in the bucket of [0.5, 2), a
#: quarter of the lane, copied out by a branch mispredicted at every other key
#: (1M float64: 3.6 ms for place 0.1, 0.86 for the median); and a copy of a long
#: lane's keys in fresh scratch faulted a page per 4 KiB (2 ms of 8 MiB).
BRACKET_MIN = 8192


@helper
def sample_size(n):
    """Keys sampled from a lane of *n* for :func:`bracket_keys`: about ``n^(2/3)``
    (Floyd and Rivest's choice: the bracket holds ``3 / sqrt(s)`` of the lane), a
    power of two from 512 to 16384."""
    s = 512
    while s < 16384 and s * s * s < n * n:
        s *= 2
    return s


#: Keys of a lane made and scanned at a time by :func:`bracket_scan` (a vectorised
#: loop over them, then a compress of each row of ``LANES``).
SCAN_BLOCK = 256


@helper(inline=True)
def sample_position(i, stride):
    """Where :func:`bracket_keys` samples its *i*-th key: in the *i*-th stretch of
    *stride* keys, at an offset hashed from *i* (Fibonacci hashing)."""
    h = (np.uint64(i) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    return i * stride + np.int64(h % np.uint64(stride))


@helper
def bracket_keys(base, p, n, n_stride, masks, low, high, sample, work, hist, nbytes):
    """``(ok, lo_key, hi_key, expected)``: two keys of the lane ``base[p + j * n_stride]``
    sampled so that places *low* to *high* of its stable order lie between them
    with near certainty (not *ok*: the places lie too far apart for a bracket to
    pay), and about how many keys lie from one to the other.

    ``sample`` (of :func:`sample_size`) gets one key from each of its stretches of
    the lane, at a hashed offset (a periodic lane cannot line up with it);
    ``work`` (at least as long) and ``hist`` are :func:`select_rank`'s scratch."""
    top = masks[0]
    s = sample.size
    stride = n // s
    # a sampled place within 3.5 standard deviations (sqrt(s) / 2 at the median)
    margin = 2 + (7 * np.int64(np.sqrt(s))) // 4
    i_low = (low * s) // n - margin
    i_high = (high * s + n - 1) // n + margin
    lo_key = _as_type_of(0, top)
    hi_key = top
    if (i_high - i_low) * 8 > s:  # the places lie far apart: a bracket of many keys
        return False, lo_key, hi_key, 0
    for i in range(s):
        sample[i] = order_key(base[p + sample_position(i, stride) * n_stride], masks, False)
    if i_low >= 0:
        lo_key = select_rank(sample, s, i_low, work, hist, nbytes)[0]
    if i_high < s:
        hi_key = select_rank(sample, s, i_high, work, hist, nbytes)[0]
    return True, lo_key, hi_key, (i_high - i_low + 1) * (n // s + 1)


@helper
def bracket_scan(base, p, n, n_stride, masks, lo_key, hi_key, block, inside, copy):
    """``(below, m, nans, copied)`` of the lane ``base[p + j * n_stride]``: how many
    keys lie below *lo_key*, how many from it to *hi_key* (the bracket), how many
    are NaN/NaT; the bracket's keys in lane order into ``inside`` (if *copy*, as
    long as they fit with ``LANES`` to spare: *copied* tells whether all did).

    The lane's keys are made ``SCAN_BLOCK`` at a time into ``block`` and counted by
    vectorised loops; a bracket's share is a few hundredths, copied a row of
    ``LANES`` at a time by a compress (copied key by key behind a branch, 1M
    float32 took 1.15 ms, the whole scan now about a third of that)."""
    top = masks[0]
    span = _as_type_of(hi_key - lo_key, top)
    room = inside.size - LANES
    below = 0
    upto = 0
    nans = 0
    w = 0
    copied = copy
    for j0 in range(0, n, SCAN_BLOCK):
        size = min(SCAN_BLOCK, n - j0)
        if n_stride == 1:  # a slice: indices >= 0, no wraparound to stop the vectoriser
            chunk = base[p + j0:p + j0 + size]
            for j in range(size):  # keys and three counts of compares: vectorised
                k = narrow_key(chunk[j], masks, False)
                block[j] = k
                below += k < lo_key
                upto += k <= hi_key
                nans += k == top
        else:
            for j in range(size):
                k = narrow_key(base[p + (j0 + j) * n_stride], masks, False)
                block[j] = k
                below += k < lo_key
                upto += k <= hi_key
                nans += k == top
        if not copied:
            continue
        rows = size // LANES
        for r in range(rows):
            if w > room:
                copied = False
                break
            w += compress_range(block, r * LANES, inside, w, lo_key, span)
        for j in range(rows * LANES, size):
            k = block[j]
            if _as_type_of(k - lo_key, top) <= span:  # lo_key <= k <= hi_key
                if w == inside.size:
                    copied = False
                    break
                inside[w] = k
                w += 1
    floating = masks[5] == masks[9]
    dates = masks[7] != masks[9]
    nans = nans if floating or dates else 0  # an integer's key may be top
    return below, upto - below, nans, copied and w == upto - below


@helper
def nth_in_lane(base, p, n, n_stride, masks, key, occurrence):
    """:func:`nth_position` in the lane ``base[p + j * n_stride]``, its keys made as read."""
    seen = 0
    for j in range(n):
        if order_key(base[p + j * n_stride], masks, False) == key:
            if seen == occurrence:
                return j
            seen += 1
    return -1


@helper
def select_places(keys, count, below, full, places, row, t, want_positions, masks, base, p, n,
                  n_stride, work, hist, nbytes, values, positions):
    """The elements at ``places[row]`` of lane *t* (``base[p + j * n_stride]``, j < n)
    into ``values[t]`` (bits) and, if *want_positions*, their positions into
    ``positions[t]`` (a value that its key does not give, a zero's or a NaN's, is
    found by position too), selected from ``keys[:count]``: all the lane's keys in
    lane order (*full*), or a bracket of them with *below* keys under it
    (:func:`bracket_scan`)."""
    top, zero_key = masks[0], masks[1]
    floating = masks[5] == masks[9]
    key = keys[0]
    less = -1
    equal = 0
    at = -1
    for s in range(places.shape[1]):
        r = places[row, s]
        if less >= 0 and less <= r < less + equal:
            pass
        elif less >= 0 and r == less + equal:
            less += equal
            key, equal = next_key(keys, count, key, top)
            at = -1
        else:
            key, less, equal = select_rank(keys, count, r - below, work, hist, nbytes)
            less += below
            at = -1
        if not want_positions and key != top and not (floating and key == zero_key):
            values[t, s] = key_bits(key, masks, False)
            continue
        # the (r - less)-th key equal to `key`, going on from the last one found
        if not full:
            j = nth_in_lane(base, p, n, n_stride, masks, key, r - less)
        elif at >= 0 and s > 0 and places[row, s - 1] == r - 1:
            j = at + 1
            while keys[j] != key:
                j += 1
        else:
            j = nth_position(keys, n, key, r - less)
        at = j
        positions[t, s] = j
        values[t, s] = base[p + j * n_stride]


@kernel(nrt=True)
def select_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                  mid_strides, inner, inner_stride, masks, places, want_positions, values,
                  positions, nans):
    """The elements at the given places of every lane's stable ascending order.

    ``places`` is int64 (1 or lanes, m), best ascending along its rows (a row per
    lane, or one row for all); ``values`` (lanes, m) gets their bits, ``positions``
    (lanes, m) their positions along the lane if *want_positions* (else a value
    comes from its key, and only a zero's sign needs its position), ``nans``
    (lanes,) the lane's count of NaN/NaT. Up to ``SELECT_MAX`` places a lane is
    selected place by place (neighbouring places cost a pass each); more places,
    or a short lane, and it is sorted once. A lane of ``BRACKET_MIN`` or more
    selects from the keys of a sampled bracket of its places
    (:func:`bracket_keys`, :func:`bracket_scan`), or from all its keys when the
    sample misses."""
    nbytes = base.itemsize
    count = places.shape[1]
    shared = places.shape[0] == 1
    # several places apart in a lane of a few thousand: one sort costs less than a
    # selection each
    sorting = count > SELECT_MAX or n <= INSERTION_MAX or (count > 2 and n <= 16384)
    bracketing = not sorting and n >= BRACKET_MIN
    # a bracketing lane's keys are made as it is read (scratch of n only if a sample misses)
    lo, hi, mids, keys, cache = _part_lanes(part, parts, base, outer_shape, n, n_stride,
                                            mid_shape, inner, inner_stride, not bracketing)
    sample = np.empty(sample_size(n) if bracketing else 0, base.dtype)
    inside = np.empty(0, base.dtype)
    block = np.empty(SCAN_BLOCK if bracketing else 0, base.dtype)
    work = np.empty(sample.size if bracketing else n, base.dtype)
    hist = np.empty((HISTOGRAMS, 1 << RADIX) if n > INSERTION_MAX else (1, 1), np.int64)
    pay = np.empty(n if sorting else 1, np.int64)
    pay2 = np.empty(n if sorting else 1, np.int64)
    counts = np.empty((8, 1 << RADIX) if sorting and n > MERGE_MAX else (1, 1), np.int64)
    walk = FIRST_WALK
    for t in range(lo, hi):
        row = 0 if shared else t
        if bracketing:
            walk, p = _walk_lane(t, lo, walk, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, mids, inner, inner_stride)
            low = places[row, 0]
            high = low
            for s in range(1, count):
                low = min(low, places[row, s])
                high = max(high, places[row, s])
            ok, lo_key, hi_key, expected = bracket_keys(base, p, n, n_stride, masks, low, high,
                                                         sample, work, hist, nbytes)
            if ok:
                if inside.size < 2 * expected + 4 * LANES:
                    inside = np.empty(2 * expected + 4 * LANES, base.dtype)
                below, m, lane_nans, copied = bracket_scan(base, p, n, n_stride, masks, lo_key,
                                                           hi_key, block, inside, True)
                nans[t] = lane_nans
                if below <= low and below + m > high:  # the places lie in the bracket
                    if not copied:  # more keys than expected (ties): again, with room
                        inside = np.empty(m + 4 * LANES, base.dtype)
                        bracket_scan(base, p, n, n_stride, masks, lo_key, hi_key, block, inside,
                                     True)
                    if m > work.size:
                        work = np.empty(m, base.dtype)
                    select_places(inside, m, below, False, places, row, t, want_positions,
                                  masks, base, p, n, n_stride, work, hist, nbytes, values,
                                  positions)
                    continue
            if keys.size < n:  # the sample missed: every key
                keys = np.empty(n, base.dtype)
                work = np.empty(n, base.dtype)
            nans[t] = lane_keys(base, p, n_stride, n, masks, False, keys)
        else:
            walk, p, lane_nans = _next_lane(t, lo, walk, base, offset, outer_shape,
                                            outer_strides, n, n_stride, mid_shape, mid_strides,
                                            mids, inner, inner_stride, masks, False, keys, cache)
            nans[t] = lane_nans
        if sorting:
            for j in range(n):
                pay[j] = j
            sort_lane(keys, pay, n, work, pay2, counts, nbytes, True)
            for s in range(count):
                j = pay[places[row, s]]
                positions[t, s] = j
                values[t, s] = base[p + j * n_stride]
            continue
        select_places(keys, n, 0, True, places, row, t, want_positions, masks, base, p, n,
                      n_stride, work, hist, nbytes, values, positions)


@kernel
def count_nan_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                     mid_shape, mid_strides, inner, inner_stride, masks, nans):
    """How many NaN/NaT each lane holds, into ``nans`` (lanes,)."""
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    top = masks[0]
    lo, hi = part_range(lanes, part, parts)
    o = m = i = start = 0
    for t in range(lo, hi):
        o, m, i, start = _lane(t, lo, o, m, i, start, mids, inner, offset, outer_shape,
                               outer_strides, mid_shape, mid_strides)
        p = start + i * inner_stride
        c = 0
        if n_stride == 1:  # vectorised
            for j in range(n):
                c += order_key(base[p + j], masks, False) == top
        else:
            for j in range(n):
                c += order_key(base[p + j * n_stride], masks, False) == top
        nans[t] = c


@helper
def _rank_ties(keys, pos, valid, n, method, out, first, step):
    """Ranks of a sorted lane (``keys`` and their positions ``pos``; the first
    *valid* are numbers, the rest NaN) into ``out[first + pos * step]``, ties by
    *method* (0 average, 1 min, 2 max, 3 dense, 4 ordinal: see
    :func:`axisops.kernels.rank.rank_kernel`).

    No branch on the data: ties are counted first (a vectorised pass); without
    any, every method's rank is the place. Else a group's start (min, dense,
    average) is carried forwards and its end (max, average) backwards; an average
    is the min rank written forwards, then ``0.5 * (min + max)`` backwards (the
    same bits as ``0.5 * (start + 1 + end)``: sums of integers are exact)."""
    for j in range(valid, n):
        out[first + pos[j] * step] = np.nan
    ties = 0
    for j in range(1, valid):
        ties += keys[j] == keys[j - 1]
    if ties == 0 or method == 4:
        for j in range(valid):
            out[first + pos[j] * step] = j + 1.0
        return
    if method != 2:
        start = 0
        dense = 0
        for j in range(valid):
            new = j == 0 or keys[j] != keys[j - 1]
            start = j if new else start
            dense += new
            out[first + pos[j] * step] = float(dense) if method == 3 else start + 1.0
        if method != 0:
            return
    end = valid
    for j in range(valid - 1, -1, -1):
        last = j == valid - 1 or keys[j + 1] != keys[j]
        end = j + 1 if last else end
        q = first + pos[j] * step
        out[q] = float(end) if method == 2 else 0.5 * (out[q] + end)


# ------------------------------------------------------- short lanes, 16 at a time

#: Lanes sorted together by one sorting network, each comparator a vector
#: min/max across them (lanes are the SIMD lanes: a 512-bit register holds 16
#: 32-bit keys), and the longest lane sorted that way.
NETWORK_MAX = 512
#: The longest lane selected by sorting it in a network (a radix select wins above).
SELECT_NETWORK_MAX = 256
#: What :func:`network_kernel` writes.
SORTED, FIRST_K, PLACES, RANKS = 0, 1, 2, 3


def network_pairs(size: int) -> np.ndarray:
    """Batcher's odd-even merge sort for *size* (a power of two) elements: its
    comparators ``(a, b)``, ``a < b``, in an order that sorts (int64 (c, 2))."""
    out = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        out.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return np.array(out, np.int64).reshape(-1, 2)


@helper
def _network(keys, pos, pairs):
    """Sort each column of ``keys`` (size, LANES) by the comparators *pairs*,
    ties by ``pos`` (so the order is the stable one), ``pos`` moving along; each
    comparator one vector operation on every lane (``simd.min_max_rows_by``)."""
    for c in range(pairs.shape[0]):
        min_max_rows_by(keys, pos, pairs[c, 0], pairs[c, 1])


_sort_rows_8 = sort_rows_in_registers(network_pairs(8), 8)
_sort_rows_16 = sort_rows_in_registers(network_pairs(16), 16)
_sort_rows_32 = sort_rows_in_registers(network_pairs(32), 32)


@helper
def _network_keys(keys, pairs):
    """:func:`_network` of the keys alone (equal keys are not told apart): blocks
    of 8, 16 or 32 rows by the whole network in registers (a full sort, whatever
    *pairs* prunes), longer ones by a loop over *pairs*."""
    size = keys.shape[0]
    if size == 16:
        _sort_rows_16(keys)
    elif size == 8:
        _sort_rows_8(keys)
    elif size == 32:
        _sort_rows_32(keys)
    else:
        for c in range(pairs.shape[0]):
            min_max_rows(keys, pairs[c, 0], pairs[c, 1])


@helper
def _read_block(base, starts, used, n, n_stride, masks, descending, keys, counts, specials,
                adjacent):
    """The keys of the block's lanes (at ``starts[:used]``) into the columns of
    ``keys`` (size, LANES), the rows after *n* and the columns after *used* the
    greatest key; per lane, NaN/NaT into ``counts`` and NaN/NaT plus -0.0 (bits
    a key does not keep) into ``specials``. *adjacent*: the ``LANES`` lanes are
    neighbours in memory (``starts[lane] = starts[0] + lane``), so that row *j*
    of the block is one run of the input, read as a vector."""
    top, sign = masks[0], masks[1]
    size = keys.shape[0]
    if adjacent:
        p0 = starts[0]
        for lane in range(LANES):
            counts[lane] = 0
            specials[lane] = 0
        for j in range(n):
            row = p0 + j * n_stride
            for lane in range(LANES):
                b = base[row + lane]
                kk = order_key(b, masks, descending)
                keys[j, lane] = kk
                counts[lane] += kk == top
                specials[lane] += b == sign
        for lane in range(LANES):
            specials[lane] += counts[lane]
        for j in range(n, size):
            for lane in range(LANES):
                keys[j, lane] = top
        return
    for lane in range(LANES):
        if lane < used:
            p = starts[lane]
            c = 0
            z = 0
            for j in range(n):
                b = base[p + j * n_stride]
                kk = order_key(b, masks, descending)
                keys[j, lane] = kk
                c += kk == top
                z += b == sign
            counts[lane] = c
            specials[lane] = c + z
            for j in range(n, size):
                keys[j, lane] = top
        else:
            for j in range(size):
                keys[j, lane] = top


@helper
def _write_sorted_values(base, starts, firsts, used, n, n_stride, masks, descending, keys,
                         counts, specials, values, step, column, adjacent):
    """The sorted keys of the block (keys alone: :func:`_network_keys`) as bits into
    ``values`` (lane *l*'s first at ``firsts[l]``, the next *step* further; rows of
    *adjacent* lanes as vectors); a lane with NaN/NaT or -0.0 has those put back
    in lane order (``column``: scratch of n)."""
    floating = masks[5] == masks[9]
    dates = masks[7] != masks[9]
    if adjacent:
        q0 = firsts[0]
        for j in range(n):
            row = q0 + j * step
            for lane in range(LANES):
                values[row + lane] = key_bits(keys[j, lane], masks, descending)
    for lane in range(used):
        special = (floating or dates) and specials[lane] != 0
        if adjacent and not special:
            continue
        q = firsts[lane]
        if not special:
            for j in range(n):
                values[q + j * step] = key_bits(keys[j, lane], masks, descending)
            continue
        for j in range(n):
            column[j] = key_bits(keys[j, lane], masks, descending)
        _restore_specials(base, starts[lane], n_stride, n, masks, column, counts[lane])
        for j in range(n):
            values[q + j * step] = column[j]


@kernel(nrt=True)
def network_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                   mid_strides, inner, inner_stride, masks, descending, pairs, mode, k, places,
                   values, positions, nans, ranks):
    """Short lanes, ``LANES`` at a time: each block's keys laid out (size, LANES)
    with the lanes as columns, padded to a power of two with the greatest key
    (after every real one: ties go by position), sorted by one network, then
    written by *mode*:

    * ``SORTED``/``FIRST_K``: the first *k* (n for a sort) in order, bits into
      ``values`` and/or positions into ``positions`` (each empty if unwanted;
      layout (outer, k, mid, inner));
    * ``PLACES``: the elements at ``places`` ((1 or lanes, m)) into ``values``
      and ``positions`` (flat (lanes, m)), NaN counts into ``nans``;
    * ``RANKS``: float64 ranks (``k`` the method of :func:`axisops.kernels.rank.rank_kernel`) into
      ``ranks`` (layout (outer, n, mid, inner)).
    """
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    size = 1
    while size < n:
        size *= 2
    keys_alone = mode == SORTED and positions.size == 0  # values: no positions needed
    keys = np.empty((size, LANES), base.dtype)
    pos = np.empty((1 if keys_alone else size, LANES), np.int32)
    column = np.empty(n if keys_alone else 0, base.dtype)
    starts = np.empty(LANES, np.int64)
    firsts = np.empty(LANES, np.int64)
    counts = np.empty(LANES, np.int64)
    specials = np.empty(LANES, np.int64)
    step = mids * inner
    blocks = (lanes + LANES - 1) // LANES
    lo, hi = part_range(blocks, part, parts)
    o = m = i = start = 0
    for blk in range(lo, hi):
        t0 = blk * LANES
        used = min(LANES, lanes - t0)
        for lane in range(used):
            t = t0 + lane
            o, m, i, start = _lane(t, t0 if lane == 0 else t0 - 1, o, m, i, start, mids, inner,
                                   offset, outer_shape, outer_strides, mid_shape, mid_strides)
            starts[lane] = start + i * inner_stride
            firsts[lane] = ((o * (k if mode == FIRST_K else n) * mids + m) * inner + i)
        adjacent = (used == LANES and inner_stride == 1 and starts[LANES - 1] == starts[0] + LANES - 1
                    and firsts[LANES - 1] == firsts[0] + LANES - 1)
        _read_block(base, starts, used, n, n_stride, masks, descending, keys, counts, specials,
                    adjacent)
        if keys_alone:
            _network_keys(keys, pairs)
            _write_sorted_values(base, starts, firsts, used, n, n_stride, masks, descending, keys,
                                 counts, specials, values, step, column, adjacent)
            continue
        for j in range(size):
            for lane in range(LANES):
                pos[j, lane] = j
        _network(keys, pos, pairs)
        for lane in range(used):
            p = starts[lane]
            if mode == PLACES:
                t = t0 + lane
                row = 0 if places.shape[0] == 1 else t
                nans[t] = counts[lane]
                width = places.shape[1]
                for s in range(width):
                    j = pos[places[row, s], lane]
                    positions[t * width + s] = j
                    values[t * width + s] = base[p + j * n_stride]
            elif mode == RANKS:
                valid = n - counts[lane] if masks[5] == masks[9] or masks[7] != masks[9] else n
                _rank_ties(keys[:, lane], pos[:, lane], valid, n, k, ranks, firsts[lane], step)
            else:
                q = firsts[lane]
                for j in range(k if mode == FIRST_K else n):
                    at = pos[j, lane]
                    if values.size:
                        values[q] = base[p + at * n_stride]
                    if positions.size:
                        positions[q] = at
                    q += step

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

from .._jit import helper, kernel, part_range
from .common import block_offset, block_size

#: How the bits of an element are ordered (see :func:`order_key`).
UNSIGNED, SIGNED, FLOAT, DATE = 0, 1, 2, 3
#: Lanes up to this length are sorted by insertion (a radix sort's histograms
#: cost more than its passes save below it).
INSERTION_MAX = 32
#: More target places than this in one lane: sort it once instead of selecting each.
SELECT_MAX = 12


# ----------------------------------------------------------------------------- keys


@helper(inline=True)
def order_key(b, kind, descending, top, sign, mag, expo, one):
    """The unsigned key of bit pattern *b* (an unsigned int of the element's width;
    the masks are of the same type): keys compare as NumPy orders the elements."""
    if kind == FLOAT:
        m = b & mag
        if m > expo:
            return top  # NaN, either sign, any payload
        if m == 0:
            k = sign  # -0.0 ties +0.0
        elif b & sign:
            k = b ^ top
        else:
            k = b | sign
    elif kind == SIGNED:
        k = b ^ sign
    elif kind == DATE:
        k = (b ^ sign) - one  # NaT (the least int64) wraps to the greatest key
        if k == top:
            return top
    else:
        k = b
    if descending:
        if kind == FLOAT or kind == DATE:
            return top - one - k  # every key but NaN's is below top
        return k ^ top
    return k


@helper
def lane_keys(base, p, n_stride, n, kind, descending, top, sign, mag, expo, one, keys):
    """Keys of the lane ``base[p + j * n_stride]`` (j < n) into ``keys[:n]``;
    returns how many are NaN/NaT (key ``top`` of a float or date)."""
    nans = 0
    for j in range(n):
        k = order_key(base[p + j * n_stride], kind, descending, top, sign, mag, expo, one)
        keys[j] = k
        if k == top:
            nans += 1
    if kind == FLOAT or kind == DATE:
        return nans
    return 0


@helper(inline=True)
def _digit(k, shift):
    return np.int64((np.uint64(k) >> np.uint64(shift)) & np.uint64(255))


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
def sort_lane(keys, pay, n, keys2, pay2, counts, nbytes):
    """Stable sort of ``keys[:n]`` carrying ``pay[:n]``, in place (``keys2``,
    ``pay2`` are scratch of the same length; ``counts`` an int64 (8, 256))."""
    if n <= INSERTION_MAX:
        _insertion_sort(keys, pay, 0, n)
        return
    for d in range(nbytes):
        for b in range(256):
            counts[d, b] = 0
    for j in range(n):
        k = keys[j]
        for d in range(nbytes):
            counts[d, _digit(k, 8 * d)] += 1
    src_k, src_p, dst_k, dst_p = keys, pay, keys2, pay2
    swapped = False
    for d in range(nbytes):
        if counts[d, _digit(src_k[0], 8 * d)] == n:
            continue  # every key has this digit: the pass would copy
        total = 0
        for b in range(256):  # counts become the first slot of each bucket
            c = counts[d, b]
            counts[d, b] = total
            total += c
        for j in range(n):
            k = src_k[j]
            b = _digit(k, 8 * d)
            s = counts[d, b]
            counts[d, b] = s + 1
            dst_k[s] = k
            dst_p[s] = src_p[j]
        src_k, dst_k = dst_k, src_k
        src_p, dst_p = dst_p, src_p
        swapped = not swapped
    if swapped:
        for j in range(n):
            keys[j] = keys2[j]
            pay[j] = pay2[j]


# ------------------------------------------------------------------------ selection


@helper
def select_rank(keys, n, r, work, hist, nbytes):
    """``(key, less, equal)``: the key at place *r* (0-based) of the sorted
    ``keys[:n]``, how many keys are below it and how many equal it; by MSD radix
    select (``work`` is scratch of n keys, ``hist`` an int64 (256,))."""
    src = keys
    count = n
    less = 0
    shift = 8 * (nbytes - 1)
    while True:
        for b in range(256):
            hist[b] = 0
        for j in range(count):
            hist[_digit(src[j], shift)] += 1
        below = 0
        bucket = 0
        for b in range(256):
            if below + hist[b] > r:
                bucket = b
                break
            below += hist[b]
        r -= below
        less += below
        size = hist[bucket]
        if size != count:  # keep only the bucket (in lane order)
            w = 0
            for j in range(count):
                k = src[j]
                if _digit(k, shift) == bucket:
                    work[w] = k
                    w += 1
            src = work
            count = size
        if count == 1 or shift == 0:
            return src[0], less, count
        shift -= 8


@helper
def next_key(keys, n, key):
    """``(k, equal)``: the least key above *key* in ``keys[:n]`` and how many equal
    it (the caller knows there is one)."""
    best = key
    found = False
    equal = 0
    for j in range(n):
        k = keys[j]
        if k > key:
            if not found or k < best:
                best = k
                equal = 1
                found = True
            elif k == best:
                equal += 1
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
def _lane_start(t, mids, inner, offset, outer_shape, outer_strides, mid_shape, mid_strides,
                inner_stride):
    """(first element p, o, m, i) of lane *t*."""
    i = t % inner
    g = t // inner
    o = g // mids
    m = g - o * mids
    p = (offset + block_offset(o, outer_shape, outer_strides)
         + block_offset(m, mid_shape, mid_strides) + i * inner_stride)
    return p, o, m, i


@kernel(nrt=True)
def sort_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                mid_strides, inner, inner_stride, kind, descending, top, sign, mag, expo, one,
                want_values, values, want_positions, positions):
    """Stable sort of every lane: ``values`` (flat, the layout (outer, n, mid,
    inner), the elements' bits) and/or ``positions`` (the same layout, any int
    dtype) of the sorted order."""
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    nbytes = base.itemsize
    keys = np.empty(n, base.dtype)
    keys2 = np.empty(n, base.dtype)
    pay = np.empty(n, np.int64)
    pay2 = np.empty(n, np.int64)
    counts = np.empty((8, 256), np.int64)
    step = mids * inner
    lo, hi = part_range(lanes, part, parts)
    for t in range(lo, hi):
        p, o, m, i = _lane_start(t, mids, inner, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, inner_stride)
        lane_keys(base, p, n_stride, n, kind, descending, top, sign, mag, expo, one, keys)
        for j in range(n):
            pay[j] = j
        sort_lane(keys, pay, n, keys2, pay2, counts, nbytes)
        q = (o * n * mids + m) * inner + i
        for j in range(n):
            if want_values:
                values[q] = base[p + pay[j] * n_stride]
            if want_positions:
                positions[q] = pay[j]
            q += step


@kernel(nrt=True)
def top_k_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                 mid_strides, inner, inner_stride, kind, descending, top, sign, mag, expo, one,
                 k, sorted_, values, positions):
    """The first *k* of every lane in the (stable) order: their bits into
    ``values`` and positions into ``positions`` (flat, layout (outer, k, mid,
    inner)); in that order when *sorted_*, else in lane order."""
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    nbytes = base.itemsize
    keys = np.empty(n, base.dtype)
    work = np.empty(n, base.dtype)
    chosen = np.empty(k, base.dtype)
    chosen2 = np.empty(k, base.dtype)
    pay = np.empty(k, np.int64)
    pay2 = np.empty(k, np.int64)
    hist = np.empty(256, np.int64)
    counts = np.empty((8, 256), np.int64)
    step = mids * inner
    lo, hi = part_range(lanes, part, parts)
    for t in range(lo, hi):
        p, o, m, i = _lane_start(t, mids, inner, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, inner_stride)
        lane_keys(base, p, n_stride, n, kind, descending, top, sign, mag, expo, one, keys)
        if k == n:  # all of them
            for j in range(n):
                chosen[j] = keys[j]
                pay[j] = j
        else:
            key, less, _ = select_rank(keys, n, k - 1, work, hist, nbytes)
            ties = k - less  # the first `ties` keys equal to `key` are in
            c = 0
            for j in range(n):
                kj = keys[j]
                if kj < key or (kj == key and ties > 0):
                    if kj == key:
                        ties -= 1
                    chosen[c] = kj
                    pay[c] = j
                    c += 1
        if sorted_:
            sort_lane(chosen, pay, k, chosen2, pay2, counts, nbytes)
        q = (o * k * mids + m) * inner + i
        for j in range(k):
            values[q] = base[p + pay[j] * n_stride]
            positions[q] = pay[j]
            q += step


@kernel(nrt=True)
def partition_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                     mid_shape, mid_strides, inner, inner_stride, kind, top, sign, mag, expo, one,
                     kth, want_values, values, want_positions, positions):
    """Every lane partitioned about place *kth* of the stable order: the elements
    before that place in lane order, then it, then the others in lane order
    (flat outputs, layout (outer, n, mid, inner))."""
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    nbytes = base.itemsize
    keys = np.empty(n, base.dtype)
    work = np.empty(n, base.dtype)
    hist = np.empty(256, np.int64)
    step = mids * inner
    lo, hi = part_range(lanes, part, parts)
    for t in range(lo, hi):
        p, o, m, i = _lane_start(t, mids, inner, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, inner_stride)
        lane_keys(base, p, n_stride, n, kind, False, top, sign, mag, expo, one, keys)
        key, less, _ = select_rank(keys, n, kth, work, hist, nbytes)
        ties = kth - less  # equal keys before the chosen one
        first = (o * n * mids + m) * inner + i
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


@kernel(nrt=True)
def select_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                  mid_strides, inner, inner_stride, kind, top, sign, mag, expo, one, places,
                  values, positions, nans):
    """The elements at the given places of every lane's stable ascending order.

    ``places`` is int64 (1 or lanes, m), ascending along its rows (a row per lane,
    or one row for all); ``values`` (lanes, m) gets their bits, ``positions``
    (lanes, m) their positions along the lane, ``nans`` (lanes,) the lane's count
    of NaN/NaT. Up to ``SELECT_MAX`` places a lane is selected place by place
    (neighbouring places cost a pass each), beyond that it is sorted once."""
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    nbytes = base.itemsize
    count = places.shape[1]
    shared = places.shape[0] == 1
    keys = np.empty(n, base.dtype)
    work = np.empty(n, base.dtype)
    hist = np.empty(256, np.int64)
    sorting = count > SELECT_MAX
    pay = np.empty(n if sorting else 0, np.int64)
    pay2 = np.empty(n if sorting else 0, np.int64)
    counts = np.empty((8, 256), np.int64)
    lo, hi = part_range(lanes, part, parts)
    for t in range(lo, hi):
        p, _, _, _ = _lane_start(t, mids, inner, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, inner_stride)
        nans[t] = lane_keys(base, p, n_stride, n, kind, False, top, sign, mag, expo, one, keys)
        row = 0 if shared else t
        if sorting:
            for j in range(n):
                pay[j] = j
            sort_lane(keys, pay, n, work, pay2, counts, nbytes)
            for s in range(count):
                j = pay[places[row, s]]
                positions[t, s] = j
                values[t, s] = base[p + j * n_stride]
            continue
        key = keys[0]
        less = -1
        equal = 0
        at = -1
        for s in range(count):
            r = places[row, s]
            if less >= 0 and less <= r < less + equal:
                pass
            elif less >= 0 and r == less + equal:
                less += equal
                key, equal = next_key(keys, n, key)
                at = -1
            else:
                key, less, equal = select_rank(keys, n, r, work, hist, nbytes)
                at = -1
            # the (r - less)-th key equal to `key`, going on from the last one found
            if at >= 0 and s > 0 and places[row, s - 1] == r - 1:
                j = at + 1
                while keys[j] != key:
                    j += 1
            else:
                j = nth_position(keys, n, key, r - less)
            at = j
            positions[t, s] = j
            values[t, s] = base[p + j * n_stride]


@kernel
def count_nan_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                     mid_shape, mid_strides, inner, inner_stride, kind, top, sign, mag, expo,
                     one, nans):
    """How many NaN/NaT each lane holds, into ``nans`` (lanes,)."""
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    lo, hi = part_range(lanes, part, parts)
    for t in range(lo, hi):
        p, _, _, _ = _lane_start(t, mids, inner, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, inner_stride)
        c = 0
        for j in range(n):
            if order_key(base[p + j * n_stride], kind, False, top, sign, mag, expo, one) == top:
                c += 1
        nans[t] = c


@kernel(nrt=True)
def rank_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                mid_strides, inner, inner_stride, kind, top, sign, mag, expo, one, method, out):
    """Ranks from 1 of every lane (``out`` flat float64, layout (outer, n, mid,
    inner)); ties by *method* (0 average, 1 min, 2 max, 3 dense, 4 ordinal); a
    NaN gets NaN and is not counted."""
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    nbytes = base.itemsize
    keys = np.empty(n, base.dtype)
    keys2 = np.empty(n, base.dtype)
    pay = np.empty(n, np.int64)
    pay2 = np.empty(n, np.int64)
    counts = np.empty((8, 256), np.int64)
    step = mids * inner
    lo, hi = part_range(lanes, part, parts)
    for t in range(lo, hi):
        p, o, m, i = _lane_start(t, mids, inner, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, inner_stride)
        nans = lane_keys(base, p, n_stride, n, kind, False, top, sign, mag, expo, one, keys)
        for j in range(n):
            pay[j] = j
        sort_lane(keys, pay, n, keys2, pay2, counts, nbytes)
        first = (o * n * mids + m) * inner + i
        valid = n - nans
        for j in range(valid, n):
            out[first + pay[j] * step] = np.nan
        start = 0
        dense = 0
        while start < valid:
            end = start + 1
            while end < valid and keys[end] == keys[start]:
                end += 1
            dense += 1
            for j in range(start, end):
                if method == 0:
                    r = 0.5 * (start + 1 + end)
                elif method == 1:
                    r = start + 1.0
                elif method == 2:
                    r = float(end)
                elif method == 3:
                    r = float(dense)
                else:
                    r = j + 1.0
                out[first + pay[j] * step] = r
            start = end

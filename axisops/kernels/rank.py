"""Ranks of lanes (``axisops.rank``): each element's key
(:func:`axisops.kernels.order.order_key`) packed with its position ``j`` into one
uint64, ``key << k | j`` (``k`` the bits of a position), so that a sort of the
packed values alone is the stable order of the keys, positions and all.

* Where NumPy sorts uint64 with SIMD (x86-simd-sort), lanes of 16 and more in
  arrays of 1000 elements and more: :func:`pack_rank_lanes` packs a chunk of lanes
  into rows, NumPy sorts them in place, :func:`finish_rank_lanes` ranks them
  (``axisops.order._rank_numpy_lanes`` drives the three).
* Elsewhere, lanes over ``MERGE_MAX``: :func:`rank_kernel` radix sorts the packed
  values on the key's bits (LSD, 8- or 11-bit digits, at most ``k + MARGIN_BITS``
  bits of the key less the lane's least); shorter lanes sort positions
  (``sort_positions``); many short lanes go to the sorting network
  (``order.network_kernel``) in :func:`axisops.order.rank`.

A key too wide for the bits left over (float64 and 64-bit integers; the radix
path's margin) is packed without its low bits; runs of values equal in the bits
kept are then sorted again on the whole keys (:func:`_fix_runs`; random data has
few). The ranks are written in one pass over the sorted order when no two keys
tie (a vectorised count), else by branch-free scans (a group's start forwards,
its end backwards: :func:`_write_ranks`).
"""
from __future__ import annotations

import numpy as np

from .._jit import helper, kernel, part_range
from .common import block_size
from .order import (
    FIRST_WALK,
    INSERTION_MAX,
    LANES,
    MERGE_MAX,
    _group_start,
    _next_lane,
    _out_first,
    _packing_scratch,
    _part_lanes,
    _rank_ties,
    _sort_scratch,
    _walk_lane,
    blocked,
    lane_keys,
    order_key,
    sort_positions,
)
from .simd import (
    pair_counts,
    pair_counts_by,
    pair_counts_columns,
    pair_counts_columns_by,
    transpose_tile,
)

#: Lanes up to this length are sorted on 8-bit digits (256 counts to clear and sum
#: per pass), longer ones on 11-bit digits (2048): measured (1 thread, AMD EPYC
#: Zen 5) on rows of 1024 float32, four 8-bit passes beat three 11-bit ones,
#: whose counts cost as much as the elements.
SMALL_DIGITS_MAX = 1 << 14
#: Bits of a key sorted beyond the bits of a position: keys that agree in them are
#: sorted again on the rest (:func:`_fix_runs`). Float keys spend their top bits on
#: sign and exponent, most of which a lane's values share, so this many more keep
#: such runs rare in random data (rows of 1024: 24 bits, three 8-bit passes, not
#: seven for float64).
MARGIN_BITS = 14


@helper(inline=True)
def _bit_length(v):
    """The bits of the uint64 *v* up to its highest set bit (0 for 0)."""
    bits = 0
    for half in (32, 16, 8, 4, 2, 1):
        high = v >> np.uint64(half)
        if high != 0:
            bits += half
            v = high
    return bits + (v != 0)


@helper(inline=True)
def _key_range(keys, n, valid, masks):
    """The least and greatest of a lane's keys ``keys[:n]`` but its NaN/NaT (``top``;
    *valid* of them are numbers)."""
    top = masks[0]
    least = top
    most = masks[9]
    if valid == n:  # vectorised
        for j in range(n):
            least = min(least, keys[j])
            most = max(most, keys[j])
    else:
        for j in range(n):
            kj = keys[j]
            least = min(least, kj)
            most = max(most, kj if kj != top else least)
    return least, most


@helper(inline=True)
def _position_bits(n):
    """The bits of a position in a lane of *n* (at least one)."""
    k = 1
    while (1 << k) < n:
        k += 1
    return k


@helper
def _radix_packed(src, dst, n, counts, low, width, bits):
    """LSD radix sort of ``src[:n]`` (uint64) on their bits ``[low, low + width)`` in
    digits of *bits* (``counts``: int64 (digits, 2 ** bits) at least), skipping
    digits that every value shares; returns whether the result is in ``dst``
    (else ``src``)."""
    digits = (width + bits - 1) // bits
    size = 1 << bits
    mask = np.uint64(size - 1)
    for d in range(digits):
        for b in range(size):
            counts[d, b] = 0
    for j in range(n):
        v = src[j]
        for d in range(digits):
            counts[d, (v >> np.uint64(low + bits * d)) & mask] += 1
    swapped = False
    for d in range(digits):
        shift = np.uint64(low + bits * d)
        if counts[d, (src[0] >> shift) & mask] == n:
            continue  # every value has this digit: the pass would copy
        total = 0
        for b in range(size):  # counts become the first slot of each bucket
            c = counts[d, b]
            counts[d, b] = total
            total += c
        for j in range(n):
            v = src[j]
            b = (v >> shift) & mask
            s = counts[d, b]
            counts[d, b] = s + 1
            dst[s] = v
        src, dst = dst, src
        swapped = not swapped
    return swapped


@helper(nrt=True)
def _fix_run(s, a, b, keys, least, k, drop, counts):
    """Sort ``s[a:b]`` (packed values whose kept bits of ``key - least`` are all
    equal, in position order) on their whole keys (``keys``, in lane order),
    stably; returns how many of them tie with the one before."""
    m = b - a
    pm = np.uint64((1 << k) - 1)
    if m <= INSERTION_MAX:  # in place, comparing the whole keys
        for i in range(a + 1, b):
            v = s[i]
            kv = keys[v & pm]
            j = i - 1
            while j >= a and keys[s[j] & pm] > kv:
                s[j + 1] = s[j]
                j -= 1
            s[j + 1] = v
    else:  # each repacked as ``low bits of key - least << k | position`` and sorted
        low = np.uint64((1 << drop) - 1)
        kk = np.uint64(k)
        tmp = np.empty(m, np.uint64)
        for i in range(m):
            p = s[a + i] & pm
            tmp[i] = (((np.uint64(keys[p]) - np.uint64(least)) & low) << kk) | p
        tmp2 = np.empty(m, np.uint64)
        bits = 8 if m <= SMALL_DIGITS_MAX else 11
        res = tmp2 if _radix_packed(tmp, tmp2, m, counts, k, drop, bits) else tmp
        top = s[a] & ~pm
        for i in range(m):
            s[a + i] = top | (res[i] & pm)
    ties = 0
    for i in range(a + 1, b):
        ties += keys[s[i] & pm] == keys[s[i - 1] & pm]
    return ties


@helper
def _fix_runs(s, valid, keys, least, k, drop, counts):
    """:func:`_fix_run` of every run of ``s[:valid]`` longer than one; returns how
    many values tie with the one before (whole keys)."""
    kk = np.uint64(k)
    ties = 0
    a = 0
    for j in range(1, valid + 1):
        if j == valid or (s[j] >> kk) != (s[j - 1] >> kk):
            if j - a > 1:
                ties += _fix_run(s, a, j, keys, least, k, drop, counts)
            a = j
    return ties


@helper(inline=True)
def _tied(s, j, kk, pm, drop, keys):
    """Whether sorted value *j* ties with value ``j - 1`` (their whole keys equal)."""
    same = (s[j] >> kk) == (s[j - 1] >> kk)
    if drop != 0 and same:  # the kept bits tie: compare the whole keys
        same = keys[s[j] & pm] == keys[s[j - 1] & pm]
    return same


#: Fewer ties than one in this many values: :func:`_write_ranks` writes average
#: and max ranks as places, then ranks each group of ties again (a branch mostly
#: not taken), not by two branch-free scans.
FEW_TIES = 16


#: Rows up to this long are written over once in order before their places are
#: scattered: the row's lines come in by the prefetcher, not one miss per write
#: (1M float64 in rows of 1024: 1.1 -> 0.8 ns an element, 1 thread, AMD EPYC Zen 5).
TOUCH_MAX = 1 << 13


@helper(inline=True)
def _write_places(s, valid, n, pm, out, first, step):
    """``out[first + p * step] = j + 1`` for each sorted packed value ``s[j]`` (j <
    *valid*) of position ``p = s[j] & pm`` (in a lane of *n*): ranks that are
    places."""
    if step == 1:  # a lane of the output's rows: no multiply, the places counted in floats
        row = out[first:]
        if valid == n and n <= TOUCH_MAX:  # (no NaN ranked already)
            for j in range(n):  # vectorised: its lines fetched in order, not at random
                row[j] = 0.0
        r = 1.0
        for j in range(valid):
            row[np.int64(s[j] & pm)] = r
            r += 1.0
    else:
        for j in range(valid):
            out[first + np.int64(s[j] & pm) * step] = j + 1.0


@helper
def _write_ranks(s, valid, n, k, drop, keys, ties, method, out, first, step, work):
    """Ranks of the sorted packed values ``s[:valid]`` of a lane of *n* (*ties*: how
    many values tie with the one before, in their kept bits; the NaN's ranks
    already written) into ``out[first + position * step]``,
    ties by *method* (see :func:`rank_kernel`); ``work``: uint64 scratch of
    *valid*."""
    kk = np.uint64(k)
    pm = np.uint64((1 << k) - 1)
    if ties == 0 or method == 4:  # ranks are places
        _write_places(s, valid, n, pm, out, first, step)
        return
    if (method == 0 or method == 2) and ties * FEW_TIES < valid:
        # the places, then each group of ties (rare) ranked again
        _write_places(s, valid, n, pm, out, first, step)
        j = 1
        while j < valid:
            if _tied(s, j, kk, pm, drop, keys):
                b = j + 1
                while b < valid and _tied(s, b, kk, pm, drop, keys):
                    b += 1
                r = 0.5 * (j + b) if method == 0 else float(b)  # group [j - 1, b)
                for g in range(j - 1, b):
                    out[first + np.int64(s[g] & pm) * step] = r
                j = b
            j += 1
        return
    if method != 2:  # forwards: the group's start (min, average) or count (dense)
        start = 0
        dense = 0
        for j in range(valid):
            new = j == 0 or not _tied(s, j, kk, pm, drop, keys)
            start = j if new else start
            dense += new
            if method == 0:
                work[j] = start
            else:
                out[first + np.int64(s[j] & pm) * step] = (start + 1.0 if method == 1
                                                           else float(dense))
        if method != 0:
            return
    end = valid
    for j in range(valid - 1, -1, -1):  # backwards: the group's end (max, average)
        last = j == valid - 1 or not _tied(s, j + 1, kk, pm, drop, keys)
        end = j + 1 if last else end
        r = float(end) if method == 2 else 0.5 * (np.int64(work[j]) + 1 + end)
        out[first + np.int64(s[j] & pm) * step] = r


@helper
def _rank_packed(keys, n, valid, masks, method, out, first, step, packed, packed2, counts):
    """Ranks of a long lane of keys (``keys[:n]`` in lane order, *valid* of them not
    NaN: key ``top``) into ``out[first + j * step]``: see the module's docstring."""
    top = masks[0]
    if valid == 0:
        for j in range(n):
            out[first + j * step] = np.nan
        return
    least, most = _key_range(keys, n, valid, masks)
    k = _position_bits(n)
    kk = np.uint64(k)
    span = np.uint64(most - least)
    need = 0  # the bits of a key less the lane's least, that tell the keys apart
    while need < 64 and (span >> np.uint64(need)) != 0:
        need += 1
    bits = 8 if n <= SMALL_DIGITS_MAX else 11
    passes = (k + MARGIN_BITS + bits - 1) // bits
    width = min(need, 64 - k, passes * bits)
    drop = need - width
    dd = np.uint64(drop)
    low = np.uint64(least)
    if valid == n:
        for j in range(n):
            packed[j] = (((np.uint64(keys[j]) - low) >> dd) << kk) | np.uint64(j)
    else:  # NaN take no part: written here, and left out of the sort
        w = 0
        for j in range(n):
            kj = keys[j]
            if kj == top:
                out[first + j * step] = np.nan
            else:
                packed[w] = (((np.uint64(kj) - low) >> dd) << kk) | np.uint64(j)
                w += 1
    if _radix_packed(packed, packed2, valid, counts, k, width, bits):
        s, work = packed2, packed
    else:
        s, work = packed, packed2
    ties = 0
    for j in range(1, valid):  # vectorised
        ties += (s[j] >> kk) == (s[j - 1] >> kk)
    if drop != 0 and ties != 0:  # the keys that agree in the bits kept, sorted on the rest
        ties = _fix_runs(s, valid, keys, least, k, drop, counts)
    _write_ranks(s, valid, n, k, drop, keys, ties, method, out, first, step, work)


@kernel(nrt=True)
def rank_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape,
                mid_strides, inner, inner_stride, masks, method, out, scratch):
    """Ranks from 1 of every lane (``out`` flat float64, layout (outer, n, mid,
    inner)); ties by *method* (0 average, 1 min, 2 max, 3 dense, 4 ordinal); a
    NaN gets NaN and is not counted. ``scratch``: uint64 (parts, 2n) for lanes
    over ``MERGE_MAX`` (else anything). Lanes read in blocks of ``LANES``
    neighbours (an axis that is not the last) have their ranks gathered in a block
    too and written a row of ``LANES`` at a time (one lane's ranks lie a row of
    the output apart: each its own cache line)."""
    lo, hi, mids, keys, cache = _part_lanes(part, parts, base, outer_shape, n, n_stride,
                                            mid_shape, inner, inner_stride)
    nbytes = base.itemsize
    step = mids * inner
    floating = masks[5] == masks[9]
    short = n <= MERGE_MAX
    keys2, pay, pay2, packed_s, packed2_s, counts = _sort_scratch(base, scratch, part, parts,
                                                                  n if short else 0, True)
    packed, packed2 = _packing_scratch(scratch, part, parts, 0 if short else n)
    counts = np.empty((8, 2048) if not short else (1, 1), np.int64)
    by_block = blocked(n, n_stride, inner, inner_stride)
    ranks = np.empty(n * LANES if by_block else 0, np.float64)
    walk = FIRST_WALK
    done = 0  # the lanes of the current block ranked into ``ranks``
    for t in range(lo, hi):
        walk, _, nans = _next_lane(t, lo, walk, base, offset, outer_shape, outer_strides, n,
                                   n_stride, mid_shape, mid_strides, mids, inner, inner_stride,
                                   masks, False, keys, cache)
        valid = n - nans if floating else n
        first = _out_first(walk, n, mids, inner)
        i = walk[2]
        lane = i % LANES
        if by_block:  # rank into column ``lane`` of ranks (n, LANES)
            if t == lo or lane == 0:
                done = lane
            target, at, stride = ranks, lane, LANES
        else:
            target, at, stride = out, first, step
        if short:
            sort_positions(keys, pay, n, keys2, pay2, packed_s, packed2_s, counts, nbytes)
            _rank_ties(keys, pay, valid, n, method, target, at, stride)
        else:
            _rank_packed(keys, n, valid, masks, method, target, at, stride, packed, packed2,
                         counts)
        if by_block and (lane == LANES - 1 or i == inner - 1 or t == hi - 1):
            q0 = first - lane
            for j in range(n):  # the block's rows: runs of adjacent outputs
                for w in range(done, lane + 1):
                    out[q0 + j * step + w] = ranks[j * LANES + w]


# ------------------------------------------------------ lanes sorted by NumPy

#: Rows shorter than this are packed without their least key (see
#: :func:`pack_rank_lanes`): for 16 float64 the lane-by-lane pass took 3.5 of 7 ms.
ROWS_LEAST_MIN = 256
#: Rows up to this long are finished by one loop over a chunk where they can be
#: (:func:`_finish_rows`).
FLAT_FINISH_MAX = 32
#: A packed NaN: after every number (whose packed values stay below 2 ** 63).
NAN_PACKED = np.uint64(0xFFFFFFFFFFFFFFFF)


@kernel
def pack_rank_lanes(first, last, chunk, meta, keys, cache, rows, base, offset, outer_shape,
                    outer_strides, n, n_stride, mid_shape, mid_strides, inner, inner_stride,
                    masks, descending, out):
    """Lanes ``[first, last)`` packed into the rows of ``chunk`` (uint64 (last - first,
    n)) for NumPy to sort: ``(key - least) >> drop << k | position`` (``least``
    the lane's least key, ``k`` the bits of a position, *drop* the low bits that do
    not fit in 63 - k; keys *descending* for :func:`finish_argsort_lanes`), a NaN
    ``NAN_PACKED << k | position`` (after every number) and its rank NaN at once
    into ``out`` (layout (outer, n, mid, inner); empty: no ranks); ``meta`` (uint64 (last - first, 3)) gets each
    lane's ``(least, drop, valid)`` (*valid*: its numbers). ``keys``, ``cache``:
    scratch of :func:`axisops.kernels.order.lane_keys_blocked` (without
    reference counting, the kernel's views of rows cost nothing: allocated by the
    caller). ``rows``: see below, empty unless the lanes are the rows of a
    C-contiguous array."""
    mids = block_size(mid_shape)
    step = mids * inner
    top = masks[0]
    floating = masks[5] == masks[9]
    k = _position_bits(n)
    kk = np.uint64(k)
    width = 8 * base.itemsize
    if rows.size and (width + k <= 63 or n < ROWS_LEAST_MIN):
        # rows of a C-contiguous input: one loop over the chunk that LLVM
        # vectorises (``rows``: the positions of a chunk, lane after lane), where a
        # lane of 16 would stay scalar. The keys are not less their lane's least
        # (a pass per lane): those too wide lose their low bits (runs sorted again
        # once NumPy has sorted); a NaN's key, top, sorts last by itself.
        drop = max(0, width + k - 63)
        dd = np.uint64(drop)
        flat = chunk.reshape(-1)
        size = (last - first) * n
        src = base[offset + first * n:offset + first * n + size]  # a slice: no index to wrap
        for e in range(size):  # vectorised (base[p0 + e] was not: rows of 64 1.3 -> ns an element)
            key = np.uint64(order_key(src[e], masks, descending))
            flat[e] = ((key >> dd) << kk) | rows[e]
        for r in range(last - first):
            meta[r, 0] = 0
            meta[r, 1] = drop
            meta[r, 2] = n + 1  # not known yet: counted once sorted
        return
    walk = FIRST_WALK
    if n < ROWS_LEAST_MIN and not blocked(n, n_stride, inner, inner_stride):
        # short lanes elsewhere: the same, lane by lane, read in place
        drop = max(0, width + k - 63)
        dd = np.uint64(drop)
        for t in range(first, last):
            walk, p = _walk_lane(t, first, walk, offset, outer_shape, outer_strides, mid_shape,
                                 mid_strides, mids, inner, inner_stride)
            r = t - first
            for j in range(n):
                key = np.uint64(order_key(base[p + j * n_stride], masks, descending))
                chunk[r, j] = ((key >> dd) << kk) | np.uint64(j)
            meta[r, 0] = 0
            meta[r, 1] = drop
            meta[r, 2] = n + 1
        return
    for t in range(first, last):
        walk, _, nans = _next_lane(t, first, walk, base, offset, outer_shape, outer_strides, n,
                                   n_stride, mid_shape, mid_strides, mids, inner, inner_stride,
                                   masks, descending, keys, cache)
        row = chunk[t - first]
        if width + k <= 63:  # keys fit whole: no least key, NaN (top) sorts last itself
            for j in range(n):  # vectorised
                row[j] = (np.uint64(keys[j]) << kk) | np.uint64(j)
            meta[t - first, 0] = 0
            meta[t - first, 1] = 0
            meta[t - first, 2] = n + 1
            continue
        valid = n - nans if floating else n
        least, most = _key_range(keys, n, valid, masks)
        span = np.uint64(most - least) if valid else np.uint64(0)
        drop = max(0, _bit_length(span) - (63 - k))
        dd = np.uint64(drop)
        low = np.uint64(least)
        if valid == n:
            for j in range(n):
                row[j] = (((np.uint64(keys[j]) - low) >> dd) << kk) | np.uint64(j)
        else:
            q = _out_first(walk, n, mids, inner)
            for j in range(n):
                kj = keys[j]
                nan = kj == top
                row[j] = ((NAN_PACKED << kk) if nan else ((np.uint64(kj) - low) >> dd) << kk
                          ) | np.uint64(j)
                if nan and out.size:
                    out[q + j * step] = np.nan
        meta[t - first, 0] = low
        meta[t - first, 1] = drop
        meta[t - first, 2] = valid


@helper
def _finish_rows(first, last, chunk, meta, rows, n, masks, out):
    """:func:`finish_rank_lanes` of rows packed by one loop over the chunk, when no
    key ties with its neighbour in a lane and none is NaN (random data): ranks
    are places, written by one loop over the chunk. Returns False (nothing
    written) otherwise. Lanes of 16 spent 25 ns each lane by lane, 19 this way;
    rows of 1024 took 1.1 ms per 1M lane by lane, 1.9 this way."""
    if meta[0, 2] != n + 1:
        return False
    k = _position_bits(n)
    kk = np.uint64(k)
    pm = np.uint64((1 << k) - 1)
    top = np.uint64(masks[0]) >> np.uint64(meta[0, 1])
    flat = chunk.reshape(-1)
    size = (last - first) * n
    bad = 0
    for e in range(1, size):  # vectorised: ties within a lane, NaN (floats)
        v = flat[e] >> kk
        bad += (rows[e] != 0) & (v == (flat[e - 1] >> kk))
    if masks[5] == masks[9]:
        for e in range(size):
            bad += (flat[e] >> kk) == top
    if bad:
        return False
    q0 = first * n  # rows: lane t's ranks at t * n
    for e in range(size):
        out[q0 + e - np.int64(rows[e]) + np.int64(flat[e] & pm)] = np.float64(rows[e]) + 1.0
    return True


@kernel
def finish_rank_lanes(first, last, chunk, meta, keys, work, counts, ranks, rows, base, offset,
                      outer_shape, outer_strides, n, n_stride, mid_shape, mid_strides, inner,
                      inner_stride, masks, method, out):
    """The ranks of lanes ``[first, last)`` from their packed values sorted by NumPy
    (:func:`pack_rank_lanes`) into ``out``; runs of values whose keys agree in the
    bits kept (when some were dropped) sorted on their whole keys first, read again
    from ``base``. Lanes along another axis than the last have their ranks gathered
    by blocks of ``LANES`` neighbours (``ranks``: float64 (n * LANES), empty if
    not) and written a row of the block at a time. Scratch: ``keys`` (n), ``work``
    uint64 (n), ``counts`` int64 (8, 2048); ``rows`` as for :func:`pack_rank_lanes`."""
    mids = block_size(mid_shape)
    step = mids * inner
    by_block = ranks.size != 0
    lanes_first = n > LANES_FIRST_MIN
    if rows.size and n <= FLAT_FINISH_MAX and _finish_rows(first, last, chunk, meta, rows, n,
                                                           masks, out):
        return
    k = _position_bits(n)
    kk = np.uint64(k)
    walk = FIRST_WALK
    done = 0
    for t in range(first, last):
        walk, p = _walk_lane(t, first, walk, offset, outer_shape, outer_strides, mid_shape,
                             mid_strides, mids, inner, inner_stride)
        s = chunk[t - first]
        least = meta[t - first, 0]
        drop = np.int64(meta[t - first, 1])
        valid = np.int64(meta[t - first, 2])
        q = _out_first(walk, n, mids, inner)
        i = walk[2]
        lane = i % LANES
        if by_block:
            if t == first or lane == 0:
                done = lane
            target, at, stride = (ranks, lane * n, 1) if lanes_first else (ranks, lane, LANES)
            if valid < n:  # NaN ranks went to out with the packing: keep them
                for j in range(n):
                    ranks[at + j * stride] = out[q + j * step]
        else:
            target, at, stride = out, q, step
        if valid > n:  # packed with NaN: they are the last (key top), ranked NaN
            valid = n
            if masks[5] == masks[9]:  # floats (an integer's key top is a number)
                top = np.uint64(masks[0]) >> np.uint64(drop)
                while valid > 0 and (s[valid - 1] >> kk) == top:
                    valid -= 1
            for j in range(valid, n):
                target[at + np.int64(s[j] & np.uint64((1 << k) - 1)) * stride] = np.nan
        ties = 0
        for j in range(1, valid):  # vectorised
            ties += (s[j] >> kk) == (s[j - 1] >> kk)
        if drop != 0 and ties != 0:  # agree in the bits kept: sorted on the whole keys
            lane_keys(base, p, n_stride, n, masks, False, keys)
            ties = _fix_runs(s, valid, keys, least, k, drop, counts)
        _write_ranks(s, valid, n, k, drop, keys, ties, method, target, at, stride, work)
        if by_block and (lane == LANES - 1 or i == inner - 1 or t == last - 1):
            q0 = q - lane
            if lanes_first:
                _flush_lanes_first(ranks, n, done, lane, out, q0, step)
            else:
                for j in range(n):  # the block's rows: runs of adjacent outputs
                    for w in range(done, lane + 1):
                        out[q0 + j * step + w] = ranks[j * LANES + w]


#: Lanes longer than this, ranked in blocks of ``LANES`` neighbours, have each its
#: ranks in a row of the block (``LANES``, n), not a column of (n, ``LANES``): a
#: lane's ranks are scattered over its own row, which stays in cache, not over
#: the whole block, then written out by transposed tiles (:func:`_flush_lanes_first`).
LANES_FIRST_MIN = 1 << 12
_transpose = transpose_tile()


@helper
def _flush_lanes_first(ranks, n, done, lane, out, q0, step):
    """The ranks of lanes ``[done, lane]`` of a block, row w of ``ranks`` (``LANES``,
    n) flat, into ``out[q0 + j * step + w]``: tiles of ``LANES`` places transposed in
    registers when the block is whole, else element by element."""
    j0 = 0
    if done == 0 and lane == LANES - 1:
        while j0 + LANES <= n:
            _transpose(out, q0 + j0 * step, step, ranks, j0, n)
            j0 += LANES
    for j in range(j0, n):
        for w in range(done, lane + 1):
            out[q0 + j * step + w] = ranks[w * n + j]


@kernel
def finish_argsort_lanes(first, last, chunk, meta, keys, counts, positions, base, offset,
                         outer_shape, outer_strides, n, n_stride, mid_shape, mid_strides, inner,
                         inner_stride, masks, descending):
    """``argsort`` of lanes ``[first, last)`` of 64-bit keys from their packed values
    sorted by NumPy (:func:`pack_rank_lanes`, keys *descending* or not): runs whose
    keys agree in the bits kept sorted on their whole keys (:func:`_fix_runs`, the
    keys read again from ``base``), then each lane's positions into
    ``positions[t - first]`` (int64; may be ``chunk`` viewed as int64). NaN sort
    last in position order by their packing."""
    mids = block_size(mid_shape)
    k = _position_bits(n)
    kk = np.uint64(k)
    pm = np.uint64((1 << k) - 1)
    floating = masks[5] == masks[9]
    walk = FIRST_WALK
    for t in range(first, last):
        walk, p = _walk_lane(t, first, walk, offset, outer_shape, outer_strides, mid_shape,
                             mid_strides, mids, inner, inner_stride)
        r = t - first
        s = chunk[r]
        drop = np.int64(meta[r, 1])
        if drop != 0:  # equal kept bits may hide different keys
            valid = np.int64(meta[r, 2])
            if valid > n:  # packed without the least key: NaN (top) last, skipped
                valid = n
                top = np.uint64(masks[0]) >> np.uint64(drop)
                while floating and valid > 0 and (s[valid - 1] >> kk) == top:
                    valid -= 1
            ties = 0
            for j in range(1, valid):  # vectorised
                ties += (s[j] >> kk) == (s[j - 1] >> kk)
            if ties != 0:
                lane_keys(base, p, n_stride, n, masks, descending, keys)
                _fix_runs(s, valid, keys, meta[r, 0], k, drop, counts)
        out = positions[r]
        for j in range(n):  # vectorised
            out[j] = np.int64(s[j] & pm)


# ------------------------------------------------------ short lanes, by counting

#: Rows up to this long are ranked by counting, not sorted (:func:`pair_rank_kernel`;
#: half as long for 64-bit keys, half as many to a vector). 1 thread, AMD EPYC
#: Zen 5, 1M elements, counting against NumPy's sort: float32 rows of 48 2.2 ms
#: against 3.1, of 64 2.8 against 2.1; float64 rows of 24 2.9 against 3.2, of 32
#: 3.0 against 2.7.
PAIRS_MAX = 48
#: Lanes along another axis up to this long are ranked by counting
#: (:func:`pair_rank_columns`): 1M float32 in lanes of 64, 3.9 ms against 5.4 by
#: the sort, float64 6.2 against 6.4; of 96, 5.4 against 5.6 (1 thread, AMD EPYC
#: Zen 5).
COLUMN_PAIRS_MAX = 64
#: The same for dense ranks, which count twice (the keys before each equal to it,
#: then the first of each value): rows of 32 float32 2.3 ms against 2.5 by the
#: sort, of 48 3.2 against 2.2; lanes of 48 along axis 0 float64 6.1 against 7.7,
#: of 64 7.1 against 6.4 (1M elements, 1 thread, AMD EPYC Zen 5).
DENSE_PAIRS_MAX = 32
DENSE_COLUMN_PAIRS_MAX = 48


_ordinal_counts = pair_counts_by("ordinal")
_dense_counts = pair_counts_by("dense")
_ordinal_columns = pair_counts_columns_by("ordinal")
_dense_columns = pair_counts_columns_by("dense")
#: Keys counted at a time by :func:`pair_rank_kernel` (whole rows): its keys and
#: counts stay in L1.
PAIRS_CHUNK = 2048


@helper(inline=True)
def _counted_ranks(below, upto, keys, m, method, top, nans, dst):
    """Ranks ``dst[:m]`` from the counts of keys below and up to each key (average
    ``0.5 * (below + upto + 1)``, the same bits as the sorted path's ``0.5 * (min +
    max)``; min; max), or ``below`` as :func:`axisops.kernels.simd.pair_counts_by`
    counts it (ordinal, dense); NaN where the key is *top* (when *nans*)."""
    if method == 0:
        for e in range(m):  # vectorised
            dst[e] = 0.5 * (np.float64(below[e]) + np.float64(upto[e]) + 1.0)
    elif method == 1 or method == 4:  # ordinal: ``below`` counts the keys before
        for e in range(m):
            dst[e] = np.float64(below[e]) + 1.0
    elif method == 2:
        for e in range(m):
            dst[e] = np.float64(upto[e])
    else:  # dense: ``below`` counts the distinct keys up to it
        for e in range(m):
            dst[e] = np.float64(below[e])
    if nans:
        for e in range(m):
            dst[e] = np.nan if keys[e] == top else dst[e]


@kernel(nrt=True)
def pair_rank_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                     mid_shape, mid_strides, inner, inner_stride, masks, method, out):
    """Ranks of short lanes (up to ``PAIRS_MAX``) that are the rows of a C-contiguous
    array (lane t at ``offset + t * n``, its ranks at ``t * n``), by counting, no
    sort: for each element the keys below it and up to it
    (:func:`axisops.kernels.simd.pair_counts`: n broadcasts and compares per
    ``LANES`` elements; ordinal and dense ranks by
    :func:`axisops.kernels.simd.pair_counts_by`), the rank from them
    (:func:`_counted_ranks`); a NaN NaN. A chunk of ``PAIRS_CHUNK`` keys
    at a time, each step one loop over the chunk (keys, counts, ranks): lane by
    lane, rows of 16 took 32 ns each, most of it the calls and loops of a lane."""
    lanes = block_size(outer_shape) * block_size(mid_shape) * inner
    lo, hi = part_range(lanes, part, parts)
    top = masks[0]
    missing = masks[5] == masks[9] or masks[7] != masks[9]
    per = max(1, PAIRS_CHUNK // n)
    keys = np.zeros(per * n + LANES, base.dtype)
    counts = np.empty((2, keys.size), base.dtype)
    below = counts[0]
    upto = counts[1]
    for r0 in range(lo, hi, per):
        rows = min(per, hi - r0)
        m = rows * n
        src = base[offset + r0 * n:offset + r0 * n + m]
        nans = 0
        for e in range(m):  # vectorised
            k = order_key(src[e], masks, False)
            keys[e] = k
            nans += k == top
        if method == 4:
            _ordinal_counts(keys, rows, n, counts)
        elif method == 3:
            _dense_counts(keys, rows, n, counts)
        else:
            pair_counts(keys, rows, n, counts)
        _counted_ranks(below, upto, keys, m, method, top, missing and nans != 0,
                       out[r0 * n:r0 * n + m])


@kernel(nrt=True)
def pair_rank_columns(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                      mid_shape, mid_strides, inner, inner_stride, masks, method, out):
    """:func:`pair_rank_kernel` of short lanes along an axis that is not the last,
    neighbours adjacent (``inner_stride`` 1): ``LANES`` neighbouring lanes a task,
    read a row of neighbours at a time (one vector load per element of the axis)
    into a block of keys, counted side by side
    (:func:`axisops.kernels.simd.pair_counts_columns`: a vector load, no
    broadcast, per pair of places) and their ranks written a row of neighbours at a
    time: no lane is gathered or sorted."""
    mids = block_size(mid_shape)
    per = (inner + LANES - 1) // LANES
    lo, hi = part_range(block_size(outer_shape) * mids * per, part, parts)
    top = masks[0]
    missing = masks[5] == masks[9] or masks[7] != masks[9]
    step = mids * inner
    keys = np.zeros((n, LANES), base.dtype)
    counts = np.empty((2 * n, LANES), base.dtype)
    for t in range(lo, hi):
        g = t // per
        i0 = (t - g * per) * LANES
        o = g // mids
        m = g - o * mids
        p = _group_start(o, m, offset, outer_shape, outer_strides, mid_shape, mid_strides) + i0
        q = (o * n * mids + m) * inner + i0
        width = min(LANES, inner - i0)
        nans = 0
        for j in range(n):
            src = base[p + j * n_stride:p + j * n_stride + width]
            row = keys[j]
            for w in range(width):  # vectorised
                k = order_key(src[w], masks, False)
                row[w] = k
                nans += k == top
        if method == 4:
            _ordinal_columns(keys, n, counts)
        elif method == 3:
            _dense_columns(keys, n, counts)
        else:
            pair_counts_columns(keys, n, counts)
        for j in range(n):
            _counted_ranks(counts[j], counts[n + j], keys[j], width, method, top,
                           missing and nans != 0, out[q + j * step:q + j * step + width])

"""Selection of a few places of short lanes, ``LANES`` lanes at a time, by a
*selection network*: the comparators of :func:`axisops.kernels.order.network_pairs`
that can move a key onto a wanted place (:func:`selection_pairs`), on the keys
alone, each comparator one vector min/max over the lanes; blocks of up to 32
rows are sorted whole with every row in a register.

The median and the quantiles need the elements at one or two places of a lane's
stable order, not their positions, and a key gives its element back bit for bit
(:func:`axisops.kernels.order.key_bits`), except where keys tie elements that
differ: -0.0 and +0.0 share a key, and so do all NaN. In a block holding either
(counted while it is read), a lane whose wanted key is the zero key or NaN's
finds the element by position: the ``(r - less)``-th of that key in lane order,
``less`` the lane's keys below it, as the stable order has it.

Against ``network_kernel``'s ``PLACES`` (a sort with positions), 1 thread, AMD
EPYC Zen 5, the selection of the medians of (65536, 16) float32 along the rows
took 1.1 ms instead of 4.5: the rows of a block read as vectors (loaded, or
gathered when the lanes are rows), not element by element into columns (1.8 ms
of it); the lanes' starts counted on, not walked by ``order._lane`` (1.3 ms); the
network in registers; no positions.
"""
from __future__ import annotations

import numpy as np

from .._jit import helper, kernel, part_range
from .common import block_size
from .order import _lane, _network_keys, _read_block, key_bits, narrow_key, network_pairs, order_key
from .simd import LANES
from .simd_select import gather_row, load_row


def selection_pairs(size: int, low: int, high: int) -> np.ndarray:
    """The comparators of Batcher's network for *size* keys that places *low* to
    *high* depend on (int64 (c, 2), in the network's order): walked from the last,
    a comparator is kept when it touches a wire that a kept one (or a wanted
    place) reads afterwards; the others cannot change a wanted place."""
    wanted = set(range(low, high + 1))
    kept = []
    for a, b in network_pairs(size)[::-1]:
        if a in wanted or b in wanted:
            kept.append((a, b))
            wanted.update((int(a), int(b)))
    return np.array(kept[::-1], np.int64).reshape(-1, 2)


#: Blocks of up to this many rows are sorted whole, in registers (32 rows of 16
#: keys: 32 zmm registers of 32-bit keys, twice that of 64-bit spill a little).
REGISTER_ROWS = 32
@helper
def _element_at(base, p, n, n_stride, masks, key, place):
    """The bits of the element at *place* of the stable order of the lane
    ``base[p + j * n_stride]``, whose key is *key*: the ``(place - less)``-th
    element of that key in lane order."""
    less = 0
    for j in range(n):
        less += order_key(base[p + j * n_stride], masks, False) < key
    o = place - less
    for j in range(n):
        b = base[p + j * n_stride]
        if order_key(b, masks, False) == key:
            if o == 0:
                return b
            o -= 1
    return base[p]  # not reached: place is a place of the lane


@helper(inline=True)
def _simple_starts(t0, used, offset, outer_shape, outer_strides, inner, inner_stride, starts):
    """Where lanes ``t0`` to ``t0 + used - 1`` start when they are laid out (outer,
    inner) with at most one outer dimension and none between the axis and the
    last (the common layouts: rows of a matrix, its columns). The general walk
    (``order._lane``) cost 20 ns a lane here, 1.3 ms of a (65536, 16) median."""
    o = t0 // inner
    i = t0 - o * inner
    step = outer_strides[0] if outer_shape.size == 1 else 0
    for lane in range(used):
        starts[lane] = offset + o * step + i * inner_stride
        i += 1
        if i == inner:
            i = 0
            o += 1


@helper
def _keys_in_place(flat, count, size, masks):
    """The first *count* bits of ``flat`` become their keys and the rest up to
    *size* the greatest key (one loop LLVM vectorises: the block as flat);
    returns ``(nans, negative_zeros)`` among them."""
    top, sign = masks[0], masks[1]
    nans = 0
    negative_zeros = 0
    for q in range(count):
        b = flat[q]
        k = narrow_key(b, masks, False)
        flat[q] = k
        nans += k == top
        negative_zeros += b == sign
    for q in range(count, size):
        flat[q] = top
    return nans, negative_zeros


@helper
def _read_rows(base, starts, n, n_stride, masks, keys, counts):
    """The keys of ``LANES`` lanes evenly apart (lane *l* at ``starts[l]``) into the
    columns of ``keys`` (size, LANES), the rows after *n* the greatest key, each
    lane's NaN/NaT count into ``counts``: each row one vector, loaded where the
    lanes are neighbours, gathered otherwise, then all made keys at once.
    Returns whether a key may stand for other bits (NaN, -0.0; dates' NaT)."""
    top = masks[0]
    step = starts[1] - starts[0]
    p0 = starts[0]
    if step == 1:
        for j in range(n):
            load_row(keys, j, base, p0 + j * n_stride)
    else:
        for j in range(n):
            gather_row(keys, j, base, p0 + j * n_stride, step)
    flat = keys.reshape(-1)
    nans, negative_zeros = _keys_in_place(flat, n * LANES, keys.shape[0] * LANES, masks)
    for lane in range(LANES):
        counts[lane] = 0
    if nans:
        for j in range(n):
            for lane in range(LANES):
                counts[lane] += keys[j, lane] == top
    floating = masks[5] == masks[9]
    dates = masks[7] != masks[9]
    if not (floating or dates):
        for lane in range(LANES):  # an integer's key may be top
            counts[lane] = 0
        return False
    return nans + negative_zeros > 0


@kernel(nrt=True)
def select_network_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                          mid_shape, mid_strides, inner, inner_stride, masks, pairs, places,
                          values, nans):
    """The elements at ``places`` ((1 or lanes, m) int64, all within the places
    *pairs* were chosen for, :func:`selection_pairs`) of every lane's stable
    ascending order, as bits into ``values`` (flat (lanes, m)); each lane's NaN
    count into ``nans``. Lanes are walked ``LANES`` at a time, their keys a block
    (size, LANES) padded to the network's size with the greatest key: read a row
    at a time as vectors (:func:`_read_rows`) where the block's lanes lie evenly
    apart, else by ``order._read_block``."""
    mids = block_size(mid_shape)
    lanes = block_size(outer_shape) * mids * inner
    size = 1
    while size < n:
        size *= 2
    top, zero_key = masks[0], masks[1]
    special_keys = masks[5] == masks[9] or masks[7] != masks[9]  # floats and dates
    keys = np.empty((size, LANES), base.dtype)
    starts = np.empty(LANES, np.int64)
    counts = np.empty(LANES, np.int64)
    specials = np.empty(LANES, np.int64)
    width = places.shape[1]
    shared = places.shape[0] == 1
    blocks = (lanes + LANES - 1) // LANES
    lo, hi = part_range(blocks, part, parts)
    o = m = i = start = 0
    simple = mid_shape.size == 0 and outer_shape.size <= 1
    for blk in range(lo, hi):
        t0 = blk * LANES
        used = min(LANES, lanes - t0)
        if simple:
            _simple_starts(t0, used, offset, outer_shape, outer_strides, inner, inner_stride,
                           starts)
        else:
            for lane in range(used):
                o, m, i, start = _lane(t0 + lane, t0 if lane == 0 else t0 - 1, o, m, i, start,
                                       mids, inner, offset, outer_shape, outer_strides,
                                       mid_shape, mid_strides)
                starts[lane] = start + i * inner_stride
        even = used == LANES
        for lane in range(2, used):
            even &= starts[lane] - starts[lane - 1] == starts[1] - starts[0]
        if even:
            special = _read_rows(base, starts, n, n_stride, masks, keys, counts)
        else:
            adjacent = (used == LANES and inner_stride == 1
                        and starts[LANES - 1] == starts[0] + LANES - 1)
            _read_block(base, starts, used, n, n_stride, masks, False, keys, counts, specials,
                        adjacent)
            special = special_keys
        _network_keys(keys, pairs)
        for lane in range(used):
            t = t0 + lane
            nans[t] = counts[lane]
            row = 0 if shared else t
            for s in range(width):
                r = places[row, s]
                k = keys[r, lane]
                if special and special_keys and (k == zero_key or k == top):
                    values[t * width + s] = _element_at(base, starts[lane], n, n_stride, masks,
                                                        k, r)
                else:
                    values[t * width + s] = key_bits(k, masks, False)

"""CUDA kernels of the order statistics (``axisops.order``, ``axisops.moving_order``)
and their gradients.

Every lane is first copied (by the launcher) into a C-contiguous ``(lanes, n)``
array of the elements' *bits* (an unsigned integer of their width; bool as
uint8), so the kernels index a lane as ``bits[off + lane * n + j]``. An element's
order key is the CPU's :func:`axisops.kernels.order.order_key` formula on those
bits, with the same masks (:func:`axisops.kernels.order.key_masks`, passed as a
tuple): NaN last (any sign, any payload), -0.0 the key of +0.0, descending as
``dtop - key`` with NaN still last. Keys are widened to uint64 in shared memory.
Ties are broken by position everywhere, so every order is the CPU's stable one,
and every result is a function of its lane alone (the same bits every run).

* ``tile_sort``: a block per tile of ``tile`` (a power of two, at most
  :data:`SHARED_MAX`) consecutive elements of a lane, (key, position) pairs in
  shared memory padded to a power of two with the greatest key (and positions
  after every real one), a bitonic sort of the pairs; a lane up to ``SHARED_MAX``
  long is one tile, sorted whole.
* ``merge_lanes``: one pass of a merge sort of longer lanes: runs of ``width``
  merged in pairs, a thread per element finding its place by a binary search in
  the other run (pairs are distinct, so no tie rule is needed beyond the pair).
* ``gather_sorted``: the first ``count`` places of sorted lanes: the elements'
  bits and/or positions (through ``posmap`` when the sorted lanes were a
  selection of another lane's elements).
* ``places_sorted``: the elements at given places of sorted lanes, and each
  lane's NaN count.
* ``radix_select``: a block per lane: the key at a place by MSD radix select
  (a histogram of 8-bit digits with shared-memory atomics of integer counts,
  the bucket holding the place, then the next digit among those keys), then the
  place's element as the ``r``-th key equal to it in lane order (a count per
  thread's contiguous chunk and a prefix over the chunks); the lane's NaN count.
* ``compact``: a block per lane: the elements before a place of the stable
  order in lane order, then the element at it, then the others in lane order
  (the CPU's ``partition`` layout; its first ``k`` are ``top_k``'s unsorted).
* ``rank_sorted``: a block per lane of sorted pairs: ranks by the CPU's tie
  rules (the tie group by binary searches, the dense rank by a prefix of group
  heads over the chunks), NaN for NaN.
* ``put_lanes``, ``add_lanes``: gradients: ``g`` put at distinct positions (a
  thread per element), or added at given indices in index order (a thread per
  lane: the CPU's ``np.add.at`` order, no atomics); an index out of range sets a
  flag.
* ``moving_select``, ``moving_ranks``, ``moving_pick_grad``: the moving order
  statistics, a thread per output element that walks its trailing window: the
  element at a place of the window's stable order found by counting, for each
  candidate, the window's values below it (and equal before it): O(window**2)
  compares per output (fine for windows up to a few hundred; a block per lane
  segment would be the next step). Values compared in the input's dtype (float16
  natively, exact), the arithmetic in float64 as on the CPU (the quantile's
  product through ``dmul_rn``, never fused into an FMA). The gradient is a thread
  per input element gathering, in output order, the shares of the outputs whose
  picks it is: first those as the lower pick, then as the upper one (the CPU's two
  ``np.add.at`` passes), in float64.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numba import cuda, float64, int32, int64, uint64

from ._device import simulated
from ._jit import kernel
from .moving_kernels import G_N, G_N_STRIDE
from .moving_kernels import _position as _moving_position

__all__ = ["SHARED_MAX", "MAX_THREADS", "tile_sort", "merge_lanes", "gather_sorted",
           "places_sorted", "radix_select", "compact", "rank_sorted", "put_lanes", "add_lanes",
           "moving_select", "moving_ranks", "moving_pick_grad", "signatures"]

#: The longest lane sorted in one block's shared memory (and a tile of longer
#: ones): 2048 (key, position) pairs, 24 KiB. Small under the simulator, whose
#: threads are Python threads, so that its tests reach the long-lane kernels.
SHARED_MAX = 32 if simulated() else 2048
#: The most threads a block-per-lane kernel is launched with (its shared arrays).
MAX_THREADS = 256
_TOP64 = np.uint64(0xFFFFFFFFFFFFFFFF)
#: moving_select's modes (``axisops.kernels.moving_order``'s).
MEDIAN, QUANTILE = 0, 1

if simulated():
    @cuda.jit(device=True, inline=True)
    def _mul_rn(a, b):
        return a * b
else:  # a product the compiler may not fuse with the addition after it
    from numba.cuda import libdevice

    @cuda.jit(device=True, inline=True)
    def _mul_rn(a, b):
        return libdevice.dmul_rn(a, b)


# ----------------------------------------------------------------------------- keys


@cuda.jit(device=True, inline=True)
def _key(b, masks, descending):
    """``axisops.kernels.order.order_key`` on the device, widened to uint64."""
    top = masks[0]
    sign = masks[1]
    negmask = masks[2]
    flip = masks[3]
    mag = masks[4]
    nonzero = masks[5]
    expo = masks[6]
    dshift = masks[7]
    dtop = masks[8]
    zero = masks[9]
    shift = masks[11]
    m = b & mag
    if m > expo:  # NaN (never for integers: their expo is top)
        return uint64(top)
    k = b ^ ((negmask if (b >> shift) != zero else zero) | flip)
    if (m | nonzero) == zero:
        k = sign
    else:
        k = k - dshift
    if descending:
        k = dtop - k
    return uint64(k)


@cuda.jit(device=True, inline=True)
def _less(ka, pa, kb, pb):
    """(key, position) pair a before pair b."""
    return ka < kb or (ka == kb and pa < pb)


@cuda.jit(device=True, inline=True)
def _bitonic(skeys, spos, size, tid, threads):
    """Sort ``size`` (a power of two) pairs in shared memory, ascending; every
    thread of the block calls it."""
    k = 2
    while k <= size:
        j = k >> 1
        while j > 0:
            for i in range(tid, size, threads):
                partner = i ^ j
                if partner > i:
                    ki = skeys[i]
                    kp = skeys[partner]
                    pi = spos[i]
                    pp = spos[partner]
                    after = _less(kp, pp, ki, pi)
                    if after if (i & k) == 0 else not after:
                        skeys[i] = kp
                        skeys[partner] = ki
                        spos[i] = pp
                        spos[partner] = pi
            cuda.syncthreads()
            j >>= 1
        k <<= 1


@cuda.jit(device=True, inline=True)
def _chunk(n, tid, threads):
    """The contiguous chunk [lo, hi) of a lane of *n* that thread *tid* walks."""
    size = (n + threads - 1) // threads
    lo = min(n, tid * size)
    return lo, min(n, lo + size)


# ---------------------------------------------------------------------------- sorts


@kernel
def tile_sort(bits, off, n, tile, masks, descending, keys_out, pos_out):
    """Sort each tile of *tile* elements of every lane (a block per tile) by
    (key, position): ``keys_out`` (uint64) and ``pos_out`` (int64, positions along
    the lane), both (lanes, n) flat."""
    skeys = cuda.shared.array(SHARED_MAX, uint64)
    spos = cuda.shared.array(SHARED_MAX, int32)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    tiles = (n + tile - 1) // tile
    lane = cuda.blockIdx.x // tiles
    start = (cuda.blockIdx.x - lane * tiles) * tile
    count = min(tile, n - start)
    size = 1
    while size < count:
        size *= 2
    row = off + lane * n + start
    for i in range(tid, size, threads):
        if i < count:
            skeys[i] = _key(bits[row + i], masks, descending)
        else:
            skeys[i] = _TOP64
        spos[i] = start + i
    cuda.syncthreads()
    _bitonic(skeys, spos, size, tid, threads)
    out = lane * n + start
    for i in range(tid, count, threads):
        keys_out[out + i] = skeys[i]
        pos_out[out + i] = spos[i]


@kernel
def merge_lanes(keys, pos, n, width, keys_out, pos_out):
    """One merge pass over every lane: runs of *width* merged in pairs (a thread
    per element)."""
    e = cuda.grid(1)
    if e >= keys.size:
        return
    lane = e // n
    row = lane * n
    i = e - row
    lo = i - i % (2 * width)
    mid = min(lo + width, n)
    hi = min(lo + 2 * width, n)
    key = keys[e]
    p = pos[e]
    if i < mid:  # how many of the right run come before it
        a = mid
        b = hi
        first = mid
        mine = i - lo
    else:
        a = lo
        b = mid
        first = lo
        mine = i - mid
    while a < b:
        c = (a + b) >> 1
        if _less(keys[row + c], pos[row + c], key, p):
            a = c + 1
        else:
            b = c
    place = lo + mine + (a - first)
    keys_out[row + place] = key
    pos_out[row + place] = p


@kernel
def gather_sorted(bits, off, n, pos, count, mapped, posmap, want_values, values,
                  want_positions, positions):
    """The first *count* places of every sorted lane (``pos`` (lanes, n)): their
    bits into ``values`` and positions (``posmap[lane, p]`` when *mapped*) into
    ``positions``, both (lanes, count) flat."""
    e = cuda.grid(1)
    lanes = pos.size // n if n else 0
    if e >= lanes * count:
        return
    lane = e // count
    j = e - lane * count
    p = pos[lane * n + j]
    if want_values:
        values[e] = bits[off + lane * n + p]
    if want_positions:
        positions[e] = posmap[lane * n + p] if mapped else p


@kernel
def places_sorted(bits, off, n, keys, pos, places, shared, top, floating, values, positions,
                  nans):
    """The elements at ``places`` ((1 or lanes, m) flat by ``shared``) of every
    sorted lane: bits into ``values``, positions into ``positions`` ((lanes, m));
    ``nans`` each lane's count of NaN (keys equal to *top*, floats only)."""
    e = cuda.grid(1)
    lanes = nans.size
    m = values.size // lanes if lanes else 0
    if e >= lanes * m:
        return
    lane = e // m
    s = e - lane * m
    row = 0 if shared else lane
    p = pos[lane * n + places[row * m + s]]
    positions[e] = p
    values[e] = bits[off + lane * n + p]
    if s == 0:
        count = 0
        if floating:
            a = 0
            b = n
            while a < b:
                c = (a + b) >> 1
                if keys[lane * n + c] < top:
                    a = c + 1
                else:
                    b = c
            count = n - a
        nans[lane] = count


# -------------------------------------------------------------------------- selection


@kernel
def radix_select(bits, off, n, masks, descending, width, places, shared, floating, values,
                 positions, nans):
    """A block per lane: the elements at ``places`` ((1 or lanes, m)) of the lane's
    stable order (ascending or *descending* keys of *width* bits): bits into
    ``values``, positions into ``positions`` ((lanes, m) flat); ``nans`` the
    lane's NaN count (floats)."""
    hist = cuda.shared.array(256, int32)
    counts = cuda.shared.array(MAX_THREADS, int64)
    state = cuda.shared.array(4, int64)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    lane = cuda.blockIdx.x
    row = off + lane * n
    m = values.size // nans.size
    top = uint64(masks[0])
    if tid == 0:
        state[2] = 0
    cuda.syncthreads()
    if floating:
        c = 0
        for i in range(tid, n, threads):
            c += _key(bits[row + i], masks, False) == top
        cuda.atomic.add(state, 2, c)
    cuda.syncthreads()
    if tid == 0:
        nans[lane] = state[2]
    lo, hi = _chunk(n, tid, threads)
    for s in range(m):
        r = places[(0 if shared else lane) * m + s]
        prefix = uint64(0)
        shift = width - 8
        while shift >= 0:
            for b in range(tid, 256, threads):
                hist[b] = 0
            cuda.syncthreads()
            up = shift + 8
            for i in range(tid, n, threads):
                k = _key(bits[row + i], masks, descending)
                if up >= width or (k >> uint64(up)) == (prefix >> uint64(up)):
                    cuda.atomic.add(hist, int64((k >> uint64(shift)) & uint64(255)), 1)
            cuda.syncthreads()
            if tid == 0:
                below = 0
                for b in range(256):
                    c = hist[b]
                    if r < below + c:
                        state[0] = b
                        state[1] = r - below
                        break
                    below += c
            cuda.syncthreads()
            prefix |= uint64(state[0]) << uint64(shift)
            r = state[1]
            cuda.syncthreads()
            shift -= 8
        # the r-th key equal to prefix in lane order
        c = 0
        for i in range(lo, hi):
            c += _key(bits[row + i], masks, descending) == prefix
        counts[tid] = c
        cuda.syncthreads()
        before = 0
        for t in range(tid):
            before += counts[t]
        if before <= r < before + counts[tid]:
            seen = before
            for i in range(lo, hi):
                if _key(bits[row + i], masks, descending) == prefix:
                    if seen == r:
                        positions[lane * m + s] = i
                        values[lane * m + s] = bits[row + i]
                        break
                    seen += 1
        cuda.syncthreads()


@kernel
def compact(bits, off, n, masks, descending, at, place, count, want_values, values,
            want_positions, positions):
    """A block per lane: with ``at[lane]`` the position of the element at *place*
    of the stable order (-1: every element is before), the elements before it in
    the order in lane order at ``[0, place)``, it at *place*, the others in lane
    order after it; only outputs below *count* written ((lanes, count) flat)."""
    counts = cuda.shared.array(MAX_THREADS, int64)
    later = cuda.shared.array(MAX_THREADS, int64)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    lane = cuda.blockIdx.x
    row = off + lane * n
    pat = at[lane]
    pivot = _key(bits[row + pat], masks, descending) if pat >= 0 else uint64(0)
    lo, hi = _chunk(n, tid, threads)
    c = 0
    for i in range(lo, hi):
        if pat < 0 or _less(_key(bits[row + i], masks, descending), i, pivot, pat):
            c += 1
    counts[tid] = c
    later[tid] = (hi - lo) - c - (1 if lo <= pat < hi else 0)
    cuda.syncthreads()
    b = 0
    a = 0
    for t in range(tid):
        b += counts[t]
        a += later[t]
    a += place + 1
    for i in range(lo, hi):
        if pat < 0 or _less(_key(bits[row + i], masks, descending), i, pivot, pat):
            q = b
            b += 1
        elif i == pat:
            q = place
        else:
            q = a
            a += 1
        if q < count:
            if want_values:
                values[lane * count + q] = bits[row + i]
            if want_positions:
                positions[lane * count + q] = i


# ------------------------------------------------------------------------------ ranks


@kernel
def rank_sorted(keys, pos, n, top, floating, method, out):
    """A block per sorted lane: float64 ranks from 1 into ``out`` ((lanes, n) flat,
    in position order); ties by *method* (0 average, 1 min, 2 max, 3 dense, 4
    ordinal, the CPU's codes), NaN for NaN (keys equal to *top*, floats)."""
    counts = cuda.shared.array(MAX_THREADS, int64)
    state = cuda.shared.array(1, int64)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    row = cuda.blockIdx.x * n
    if tid == 0:
        valid = n
        if floating:
            a = 0
            b = n
            while a < b:
                c = (a + b) >> 1
                if keys[row + c] < top:
                    a = c + 1
                else:
                    b = c
            valid = a
        state[0] = valid
    cuda.syncthreads()
    valid = state[0]
    lo, hi = _chunk(valid, tid, threads)
    c = 0
    for p in range(lo, hi):
        if p == 0 or keys[row + p] != keys[row + p - 1]:
            c += 1
    counts[tid] = c
    cuda.syncthreads()
    dense = 0
    for t in range(tid):
        dense += counts[t]
    for p in range(lo, hi):
        key = keys[row + p]
        if p == 0 or key != keys[row + p - 1]:
            dense += 1
        if method == 0 or method == 1 or method == 2:
            a = 0
            b = p
            while a < b:  # the group's first place
                m = (a + b) >> 1
                if keys[row + m] < key:
                    a = m + 1
                else:
                    b = m
            begin = a
            a = p + 1
            b = valid
            while a < b:  # past its last
                m = (a + b) >> 1
                if keys[row + m] <= key:
                    a = m + 1
                else:
                    b = m
            end = a
            if method == 0:
                r = 0.5 * (begin + 1 + end)
            elif method == 1:
                r = begin + 1.0
            else:
                r = float64(end)
        elif method == 3:
            r = float64(dense)
        else:
            r = p + 1.0
        out[row + pos[row + p]] = r
    for p in range(valid + tid, n, threads):
        out[row + pos[row + p]] = math.nan


# -------------------------------------------------------------------------- gradients


@kernel
def put_lanes(g, pos, n, out):
    """``out[lane, pos[lane, j]] = g[lane, j]`` ((lanes, n) flat; distinct
    positions per lane), a thread per element."""
    e = cuda.grid(1)
    if e >= g.size:
        return
    lane = e // n
    out[lane * n + pos[e]] = g[e]


@kernel
def add_lanes(g, idx, k, n, bad, out):
    """A thread per lane: ``out[lane]`` zeroed, then ``g[lane, j]`` added at
    ``idx[lane, j]`` for j in order (``np.add.at``'s order); an index outside
    ``[0, n)`` sets ``bad[0]`` and adds nothing."""
    lane = cuda.grid(1)
    if lane * n >= out.size:
        return
    row = lane * n
    for i in range(n):
        out[row + i] = 0
    for j in range(k):
        i = idx[lane * k + j]
        if i < 0 or i >= n:
            bad[0] = 1
            continue
        out[row + i] = out[row + i] + g[lane * k + j]


# ----------------------------------------------------------------- moving windows


@cuda.jit(device=True, inline=True)
def _window_pick(base, src, stride, lo, hi, count, place):
    """The position in ``[lo, hi]`` of the element at *place* of the window's
    stable order of its values that are not NaN (its *count* of them)."""
    for i in range(lo, hi + 1):
        v = base[src + i * stride]
        if v != v:
            continue
        below = 0
        for j in range(lo, hi + 1):
            w = base[src + j * stride]
            if w < v or (w == v and j < i):
                below += 1
        if below == place:
            return i
    return hi


@kernel
def moving_select(base, geo, window, min_count, mode, q, out, want_picks, pick_a, pick_b,
                  weight):
    """moving_median (*mode* MEDIAN) or moving_quantile (QUANTILE) into ``out``
    (flat, C order of x's shape, the result's float dtype); with *want_picks* also
    the absolute positions of the lower and upper elements (-1 for none) and the
    upper one's weight (the CPU's ``picks``)."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    src, _, _, j = _moving_position(e, geo)
    stride = geo[G_N_STRIDE]
    lo = max(0, j - window + 1)
    count = 0
    for i in range(lo, j + 1):
        v = base[src + i * stride]
        if v == v:
            count += 1
    if count < min_count or count == 0:
        out[e] = math.nan
        if want_picks:
            pick_a[e] = -1
            pick_b[e] = -1
            weight[e] = 0.0
        return
    if mode == MEDIAN:
        kth = (count - 1) >> 1
        frac = 0.0 if count & 1 else 0.5
    else:
        idx = q * (count - 1.0)
        kth = int64(idx)
        frac = idx - kth
    at = _window_pick(base, src, stride, lo, j, count, kth)
    a = float64(base[src + at * stride])
    if frac == 0.0:
        out[e] = a
        if want_picks:
            pick_a[e] = at
            pick_b[e] = -1
            weight[e] = 0.0
        return
    at2 = _window_pick(base, src, stride, lo, j, count, kth + 1)
    b = float64(base[src + at2 * stride])
    if mode == MEDIAN:
        out[e] = (a + b) / 2.0
    else:
        out[e] = a + _mul_rn(b - a, frac)
    if want_picks:
        pick_a[e] = at
        pick_b[e] = at2
        weight[e] = frac


@kernel
def moving_ranks(base, geo, window, min_count, out):
    """moving_rank (bottleneck's ``move_rank``) into ``out`` (flat, C order of x's
    shape, the result's float dtype)."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    src, _, _, j = _moving_position(e, geo)
    stride = geo[G_N_STRIDE]
    latest = base[src + j * stride]
    count = 0
    less = 0
    equal = 0
    for i in range(max(0, j - window + 1), j + 1):
        v = base[src + i * stride]
        if v == v:
            count += 1
            if v < latest:
                less += 1
            elif v == latest:
                equal += 1
    if count < min_count or latest != latest:
        out[e] = math.nan
    elif count == 1:
        out[e] = 0.0
    else:
        v = 0.5 * (2.0 * less + equal - 1.0)
        v = v / (count - 1.0)
        out[e] = 2.0 * (v - 0.5)


@kernel
def moving_pick_grad(geo, window, g, values, pick_a, pick_b, weight, out):
    """grad.moving_median/quantile: per input element (``out`` flat, C order, the
    result dtype), in float64 from +0.0: ``g[j] * (1 - w[j])`` of the live outputs
    (``values`` not NaN) whose lower pick it is, in output order, then ``g[j] *
    w[j]`` of those whose upper pick it is (``g`` float64, C order)."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    _, first, step, k = _moving_position(e, geo)
    hi = min(k + window, geo[G_N])
    acc = float64(0.0)
    for j in range(k, hi):
        p = first + j * step
        v = values[p]
        if v == v and pick_a[p] == k:
            acc += _mul_rn(g[p], 1.0 - weight[p])
    for j in range(k, hi):
        p = first + j * step
        v = values[p]
        if v == v and pick_b[p] == k:
            acc += _mul_rn(g[p], weight[p])
    out[e] = acc


# --------------------------------------------------------------------- signatures

#: The bit widths of the element dtypes (bool and the 1-byte types as uint8).
BITS = (np.uint8, np.uint16, np.uint32, np.uint64)
#: The dtypes the moving kernels read (bool as uint8).
MOVING_DTYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                 np.uint64, np.float16, np.float32, np.float64]


def signatures() -> Iterator[tuple[str, Any, tuple]]:
    """(name, Python function, argument types) of the specialisations the launchers
    of :mod:`axisops.cuda.order`, :mod:`axisops.cuda.moving_order` and
    :mod:`axisops.cuda.order_grad` make."""
    from numba import from_dtype, types

    def arr(dtype):
        return types.Array(from_dtype(np.dtype(dtype)), 1, "C")

    i64, f64, boolean, u64 = types.int64, types.float64, types.boolean, types.uint64
    for bt in BITS:
        name = np.dtype(bt).name
        b = arr(bt)
        masks = types.UniTuple(from_dtype(np.dtype(bt)), 12)
        keys, pos = arr(np.uint64), arr(np.int64)
        yield (f"tile_sort {name}", tile_sort.py_func,
               (b, i64, i64, i64, masks, boolean, keys, pos))
        for index in (np.int64, np.int32):
            yield (f"gather_sorted {name} {np.dtype(index).name}", gather_sorted.py_func,
                   (b, i64, i64, pos, i64, boolean, pos, boolean, b, boolean, arr(index)))
            yield (f"compact {name} {np.dtype(index).name}", compact.py_func,
                   (b, i64, i64, masks, boolean, pos, i64, i64, boolean, b, boolean,
                    arr(index)))
        yield (f"places_sorted {name}", places_sorted.py_func,
               (b, i64, i64, keys, pos, pos, boolean, u64, boolean, b, pos, pos))
        yield (f"radix_select {name}", radix_select.py_func,
               (b, i64, i64, masks, boolean, i64, pos, boolean, boolean, b, pos, pos))
    yield ("merge_lanes", merge_lanes.py_func,
           (arr(np.uint64), arr(np.int64), i64, i64, arr(np.uint64), arr(np.int64)))
    yield ("rank_sorted", rank_sorted.py_func,
           (arr(np.uint64), arr(np.int64), i64, u64, boolean, i64, arr(np.float64)))
    geo = arr(np.int64)
    for dt in MOVING_DTYPES:
        name = np.dtype(dt).name
        res = np.dtype(dt) if np.dtype(dt).kind == "f" else np.dtype(np.float64)
        yield (f"moving_select {name}", moving_select.py_func,
               (arr(dt), geo, i64, i64, i64, f64, arr(res), boolean, arr(np.int64),
                arr(np.int64), arr(np.float64)))
        if res != np.float64:
            yield (f"moving_select {name} picks", moving_select.py_func,
                   (arr(dt), geo, i64, i64, i64, f64, arr(np.float64), boolean, arr(np.int64),
                    arr(np.int64), arr(np.float64)))
        yield (f"moving_ranks {name}", moving_ranks.py_func,
               (arr(dt), geo, i64, i64, arr(res)))
    for out in (np.float16, np.float32, np.float64):
        o = np.dtype(out).name
        f = arr(np.float64)
        yield (f"moving_pick_grad {o}", moving_pick_grad.py_func,
               (geo, i64, f, f, arr(np.int64), arr(np.int64), f, arr(out)))
        yield (f"put_lanes {o}", put_lanes.py_func, (arr(out), arr(np.int64), i64, arr(out)))
        yield (f"add_lanes {o}", add_lanes.py_func,
               (arr(out), arr(np.int64), i64, i64, arr(np.int64), arr(out)))

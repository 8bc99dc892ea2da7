"""Lanes as rows for NumPy's sorts, and NumPy's sorted rows made the one order.

Where NumPy sorts with x86-simd-sort (``axisops.order._SIMD_SORTED``), the
value sorts, the packed argsorts and ``top_k`` of many hand rows to
``ndarray.sort``/``partition``/``argsort`` (they release the GIL) a few hundred
KiB at a time; these kernels make the rows and finish them:

* :func:`lanes_to_rows`: lanes along any axis into rows, as bits, as order keys
  packed above their positions (keys of up to 32 bits: sorted as integers, the
  stable order), or as order keys; neighbouring lanes through a 16 x 16 tile.
  :func:`rows_to_lanes` writes rows back to lanes (or the positions of packed
  rows).
* :func:`numpy_sorted_rows` (and the per-dtype :func:`rows_finisher` of small
  calls): NumPy's sort is not stable and does not keep bits (its AVX-512 sort
  gives -0.0 for each of two equal zeros and writes NaNs back as the one quiet
  NaN): descending lanes reversed before their NaNs, zeros and NaN payloads put
  back in lane order where a lane has them.
* :func:`numpy_argsorted_rows`: NumPy's AVX-512 argsort of 64-bit keys
  (``top_k``'s k sorted) made stable (each run of equal keys ordered by
  position); :func:`first_k_by_bound`: the first k of a lane given its k-th key.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .._jit import factory, helper, kernel
from .common import block_size
from .order import (
    INSERTION_MAX,
    _group_start,
    _insertion_sort,
    _lane,
    _restore_specials,
    key_masks,
    order_key,
)
from .simd import LANES
from .simd import c_rows as _c_rows
from .simd import transpose_tiles as _transpose_tiles


@kernel
def numpy_sorted_rows(lo, hi, rows, base, offset, outer_shape, outer_strides, n, n_stride,
                      mid_shape, mid_strides, inner, inner_stride, masks, descending):
    """Finish lanes ``[lo, hi)`` sorted by NumPy (called by
    ``axisops.order._sort_rows`` on a few hundred KiB of rows at a time, not
    through ``_jit.run``; ``rows[t - lo]``: lane t's bits as ``ndarray.sort`` left
    them, ascending, NaN last, equal elements in any order) into the one order: a
    *descending* lane reversed before its NaNs, and a float lane with two zeros
    or more, or a NaN, given them back in lane order from ``base``: NumPy's
    AVX-512 sort keeps neither (its min/max instructions return -0.0 for each of
    two equal zeros; NaNs are written back as the one quiet NaN). Integer lanes:
    only reversed (ascending ones need nothing)."""
    mids = block_size(mid_shape)
    o = m = i = start = 0
    for t in range(lo, hi):
        nans, restore = _finish_row(rows, t - lo, n, masks, descending)
        if restore:
            o, m, i, start = _lane(t, t, o, m, i, start, mids, inner, offset, outer_shape,
                                   outer_strides, mid_shape, mid_strides)
            _restore_specials(base, start + i * inner_stride, n_stride, n, masks, rows[t - lo],
                              nans)


@helper
def _finish_row(rows, r, n, masks, descending):
    """:func:`numpy_sorted_rows` of row *r* of ``rows`` but the restoring (indexed
    in place: a view of each row of 16 cost as much as the rest): the row reversed
    before its NaNs if *descending*; returns its NaN count and whether its zeros
    and NaNs need putting back (two zeros or more, or a NaN, of a float)."""
    mag, zero, expo = masks[4], masks[9], masks[6]
    floating = masks[5] == zero
    nans = 0
    while floating and nans < n and (rows[r, n - 1 - nans] & mag) > expo:  # NaN last
        nans += 1
    valid = n - nans
    zeros = 0
    if floating and n <= 64:  # a short row: counted, vectorised (a search mispredicts)
        for j in range(n):
            zeros += (rows[r, j] & mag) == zero
    elif floating:  # the zeros, a block of the ascending row: two binary searches
        key = order_key(zero, masks, False)
        zeros = (_keys_below(rows, r, valid, key + masks[10], masks)
                 - _keys_below(rows, r, valid, key, masks))
    if descending:
        for j in range(valid // 2):
            rows[r, j], rows[r, valid - 1 - j] = rows[r, valid - 1 - j], rows[r, j]
    return nans, zeros >= 2 or nans > 0


@helper
def _keys_below(rows, r, hi, key, masks):
    """How many of ``rows[r, :hi]`` (ascending in the order) have a key below *key*."""
    lo = 0
    while lo < hi:
        mid = (lo + hi) // 2
        if order_key(rows[r, mid], masks, False) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@factory
def rows_packer(dtype_str: str):
    """``pack(rows, packed, descending)``: the C-contiguous ``rows`` (lanes, n) of
    *dtype_str*'s bits (up to 32) as order keys packed above positions into
    ``packed`` (:func:`lanes_to_rows`' ``ROW_PACKED``), the masks constants of the
    machine code (for small argsorts)."""
    masks = key_masks(np.dtype(dtype_str))

    @njit(cache=True, nogil=True)
    def pack(rows, packed, descending):
        for t in range(rows.shape[0]):
            row = rows[t]
            out = packed[t]
            if descending:
                for j in range(row.size):
                    out[j] = _row_value(row[j], j, masks, True, ROW_PACKED)
            else:
                for j in range(row.size):
                    out[j] = _row_value(row[j], j, masks, False, ROW_PACKED)

    return pack


@factory
def rows_finisher(dtype_str: str):
    """``finish(rows, source, descending)``: :func:`numpy_sorted_rows` of the
    C-contiguous ``rows`` (lanes, n) whose lanes are the rows of ``source`` (their
    bits, C-contiguous), the masks constants of the machine code: for a small sort
    the planned kernel's arguments (the walker's geometry, the masks' tuple) cost
    more of Numba's dispatch than the finish itself."""
    masks = key_masks(np.dtype(dtype_str))

    @njit(cache=True, nogil=True)
    def finish(rows, source, descending):
        n = rows.shape[1]
        for t in range(rows.shape[0]):
            nans, restore = _finish_row(rows, t, n, masks, descending)
            if restore:
                _restore_specials(source[t], 0, 1, n, masks, rows[t], nans)

    return finish


#: Lanes along an axis that is not the last are copied to and from rows
#: ``COPY_LANES`` neighbours at a time, element j of each in turn: lane by lane,
#: each element was a cache line of its own, and with the axis's stride a
#: multiple of 4 KiB those lines shared one set of the cache and evicted each
#: other (argsort of (256, 64, 64) float32 along axis 0: 17 ms to write the
#: positions, 1 thread, AMD EPYC Zen 5).
COPY_LANES = LANES  # 16: a tile of simd.transpose_tile


@helper(inline=True)
def _lane_run(t, hi, inner, mids):
    """Lane *t*'s group ``(o, m)``, place ``i`` and how many lanes from it (at most
    ``COPY_LANES``, before *hi*) are neighbours along the inner axes."""
    i = t % inner
    g = t // inner
    return g // mids, g % mids, i, min(COPY_LANES, inner - i, hi - t)


#: What :func:`lanes_to_rows` writes: the elements' bits, their order keys packed
#: above their positions (keys of up to 32 bits), or their order keys.
ROW_BITS, ROW_PACKED, ROW_KEYS = 0, 1, 2


@helper(inline=True)
def _row_value(b, j, masks, descending, what):
    if what == ROW_PACKED:
        return (np.uint64(order_key(b, masks, descending)) << np.uint64(32)) | np.uint64(j)
    if what == ROW_KEYS:
        return order_key(b, masks, descending)
    return b


@kernel(nrt=True)  # its tile
def lanes_to_rows(lo, hi, rows, base, offset, outer_shape, outer_strides, n, n_stride,
                  mid_shape, mid_strides, inner, inner_stride, masks, descending, what):
    """Lanes ``[lo, hi)`` into ``rows[t - lo]``, *what* of each element
    (``ROW_BITS``, ``ROW_PACKED``: ``rows`` uint64, sorted as integers the packed
    lanes are the stable order, positions breaking the ties, as
    ``axisops.order._argsort_packed`` uses them; ``ROW_KEYS``). Neighbouring lanes
    are read ``COPY_LANES`` at a time."""
    mids = block_size(mid_shape)
    tile = np.empty((COPY_LANES, COPY_LANES), rows.dtype)
    t = lo
    while t < hi:
        o, m, i, width = _lane_run(t, hi, inner, mids)
        p = _group_start(o, m, offset, outer_shape, outer_strides, mid_shape,
                         mid_strides) + i * inner_stride
        r = t - lo
        if width == 1 and n_stride == 1:  # a row: vectorised (one loop for each what)
            row = rows[r]
            if what == ROW_PACKED:
                for j in range(n):
                    row[j] = _row_value(base[p + j], j, masks, descending, ROW_PACKED)
            elif what == ROW_KEYS:
                for j in range(n):
                    row[j] = _row_value(base[p + j], j, masks, descending, ROW_KEYS)
            else:
                for j in range(n):
                    row[j] = base[p + j]
        else:  # through a tile of 16 x 16: rows of lanes read as runs, written as runs
            start = 0
            if what == ROW_BITS and width == COPY_LANES and inner_stride == 1 \
                    and _c_rows(rows):  # the tile transposed in registers
                start = _transpose_tiles(rows, r * rows.shape[1], 1, rows.shape[1], base, p,
                                         n_stride, n_stride, n)
            for j0 in range(start, n, COPY_LANES):
                span = min(COPY_LANES, n - j0)
                if what == ROW_PACKED:  # one loop for each what (the constant folded in)
                    _fill_tile(tile, base, p, j0, span, n_stride, width, inner_stride, masks,
                               descending, ROW_PACKED)
                elif what == ROW_KEYS:
                    _fill_tile(tile, base, p, j0, span, n_stride, width, inner_stride, masks,
                               descending, ROW_KEYS)
                else:
                    _fill_tile(tile, base, p, j0, span, n_stride, width, inner_stride, masks,
                               descending, ROW_BITS)
                for w in range(width):
                    for jj in range(span):
                        rows[r + w, j0 + jj] = tile[w, jj]
        t += width


@helper(inline=True)
def _fill_tile(tile, base, p, j0, span, n_stride, width, inner_stride, masks, descending, what):
    """``tile[w, jj]``: *what* of element ``j0 + jj`` of lane *w* of a run of
    neighbouring lanes at *p* (:func:`lanes_to_rows`)."""
    for jj in range(span):
        at = p + (j0 + jj) * n_stride
        for w in range(width):
            tile[w, jj] = _row_value(base[at + w * inner_stride], j0 + jj, masks, descending, what)


@kernel
def rows_to_lanes(lo, hi, rows, out, outer_shape, n, mid_shape, inner, low):
    """``rows[t - lo]`` into lane t of ``out`` (flat, layout (outer, n, mid, inner))
    for lanes ``[lo, hi)``, ``COPY_LANES`` neighbours at a time; with *low*, only
    the low 32 bits of each (the positions of packed lanes). (Through a tile as
    :func:`lanes_to_rows` reads, this ran 2-3x slower.)"""
    mids = block_size(mid_shape)
    step = mids * inner
    mask = np.uint64(0xFFFFFFFF)
    tiles = not low and _c_rows(rows)
    row_step = rows.shape[1]
    t = lo
    while t < hi:
        o, m, i, width = _lane_run(t, hi, inner, mids)
        q = (o * n * mids + m) * inner + i
        r = t - lo
        start = 0
        if tiles and width == COPY_LANES:  # whole tiles transposed in registers
            start = _transpose_tiles(out, q, step, step, rows, r * row_step, 1, row_step, n)
        for j in range(start, n):
            at = q + j * step
            for w in range(width):
                if low:
                    out[at + w] = np.uint64(rows[r + w, j]) & mask
                else:
                    out[at + w] = rows[r + w, j]
        t += width


@kernel
def first_k_by_bound(keys, bounds, k, chosen):
    """The positions of each row's first *k* keys in the stable order, in lane
    order, into ``chosen[:, :k]`` (rows, k + 1: the last column is scratch): those
    below the row's k-th least key ``bounds[r]``, and the first of those equal to
    it (the stable order takes equal keys by position). Without a branch on the
    keys: each position is written, the place advanced only past a chosen one (a
    branch on keys below the bound mispredicted for a quarter of them)."""
    n = keys.shape[1]
    for r in range(keys.shape[0]):
        row = keys[r]
        out = chosen[r]
        bound = bounds[r]
        below = 0
        for j in range(n):  # vectorised
            below += row[j] < bound
        equal = k - below
        w = 0
        for j in range(n):
            key = row[j]
            take = (key < bound) | ((key == bound) & (equal > 0))
            equal -= (key == bound) & take
            out[w] = j
            w += take
            if w == k:
                break


@kernel(nrt=True)  # Numba's sort of a long run
def numpy_argsorted_rows(positions, rows, in_order, masks, descending):
    """Finish positions from NumPy's argsort (``positions`` (lanes, n), any int
    dtype: each lane's ascending order, NaN last, equal elements in any order; its
    AVX-512 argsort is not stable) into the stable one order: a *descending* lane
    reversed before its NaNs, then every run of equal keys given its positions in
    increasing order (an insertion sort of a short run, Numba's sort of a long
    one). The keys in order are read from ``in_order`` (lanes, n) where given (the
    lanes' bits sorted by NumPy: a lane longer than the cache is read in order, not
    gathered), else gathered from ``rows`` (lanes, n), the lanes' bits. Called by
    ``axisops.order._top_k_keyed_lanes`` on a chunk, not through ``_jit.run``."""
    lanes, n = positions.shape
    top, zero = masks[0], masks[9]
    missing = masks[5] == zero or masks[7] != zero  # floats, dates: an integer's key may be top
    gather = in_order.shape[0] == 0
    for t in range(lanes):
        row = positions[t]
        bits = rows[t]
        ordered = in_order[0 if gather else t]
        nans = 0
        while missing and nans < n and order_key(
                bits[row[n - 1 - nans]] if gather else ordered[n - 1 - nans], masks, False) == top:
            nans += 1
        valid = n - nans
        if descending:
            for j in range(valid // 2):
                row[j], row[valid - 1 - j] = row[valid - 1 - j], row[j]
        start = 0
        previous = order_key(bits[row[0]], masks, False)
        for j in range(1, n + 1):
            if j == n:
                key = ~previous
            elif gather:
                key = order_key(bits[row[j]], masks, False)
            else:  # lane order: descending lanes were reversed, the keys were not
                at = j if not descending or j >= valid else valid - 1 - j
                key = order_key(ordered[at], masks, False)
            if key == previous:
                continue
            if j - start > INSERTION_MAX:
                row[start:j].sort()
            elif j - start >= 2:
                _insertion_sort(row, row, start, j)
            start = j
            previous = key

"""Sliding-window kernels: unfold (im2col) and fold (col2im).

Every problem is lifted to three spatial dimensions (1-D and 2-D get leading
dimensions of size 1), so one kernel serves 1, 2 and 3 dimensions. ``geo`` is
an int64 array of shape (6, 3), one column per spatial dimension, with rows
``S`` (input size), ``L`` (window positions), ``k`` (kernel size), ``D``
(dilation), ``T`` (stride) and ``P`` (padding before). Window position ``l``
and kernel offset ``k`` read input position ``i = l*T - P + k*D``; a position
outside ``[0, S)`` is padding.

The input of ``unfold`` (and the result of ``fold``) is walked with element
strides ``xs = (n, c, s1, s2, s3)``, so any layout, ``channels_last`` included, is
read in place. OneFlow's Unfold maps each output element back to one input
position (seed 001); here whole runs along the last dimension are moved at once,
with the valid range of ``l3`` computed up front instead of a test per element.

``fold`` is the inverse transform done as a gather: each task owns a row of the
result (``(n, c, i1, i2)``, or ``(n, i1, i2)`` with channels last) and adds into it
every column entry whose window covers it, in increasing kernel index. No two
tasks write the same element, so there are no atomics, and each element's sum
is taken in the same order whatever the number of threads (OneFlow's fold
scatters with atomic adds, whose order varies).
"""
from __future__ import annotations

from numba import uint64

from .._jit import helper, kernel, part_range
from .simd import LANES, transpose_tile

#: a tile's columns four at a time (see simd.transpose_tile)
_TILE_COLUMNS = [transpose_tile(first, 4) for first in range(0, LANES, 4)]
_tile0, _tile1, _tile2, _tile3 = _TILE_COLUMNS

__all__ = ["unfold_rows", "unfold_channels_last", "fold_rows", "fold_planes", "fold_channels_last"]


@helper(inline=True)
def _valid(size, stride, shift, count):
    """[lo, hi): the window positions l < count with 0 <= l*stride + shift < size."""
    lo = max(0, -(shift // stride))
    hi = min(count, (size - 1 - shift) // stride + 1)
    return lo, max(lo, hi)


@helper(inline=True)
def _source(num, stride, count):
    """The window position l with l*stride == num and 0 <= l < count, or -1."""
    if num < 0:
        return -1
    l = num // stride
    return l if l * stride == num and l < count else -1


# ----------------------------------------------------------------------- unfold


@helper(inline=True)
def _unfold_run(out, dst, base, src, x_step, lo, hi, count, fill):
    """out[dst + l] for l < count: base[src + l*x_step] on [lo, hi), the fill elsewhere."""
    for l in range(lo):
        out[uint64(dst + l)] = fill
    if x_step == 1:
        for l in range(lo, hi):
            out[uint64(dst + l)] = base[uint64(src + l)]
    else:
        for l in range(lo, hi):
            out[uint64(dst + l)] = base[uint64(src + l * x_step)]
    for l in range(hi, count):
        out[uint64(dst + l)] = fill


@helper(inline=True)  # inlined: the kernel's parfor passes make these loops faster
def _unfold_planes(out, base, xo, t, geo, kernel_size, positions, xs4, xs2, xs3, fill, count):
    """unfold_rows' planes t .. t + count - 1 (*count* 1, or LANES planes whose
    channels are adjacent in memory, at xo): each (kernel offset, l1, l2) run of
    every plane, for LANES planes a tile of LANES positions x LANES channels at a
    time, transposed in registers (simd.transpose_tile; plane by plane the runs
    read one element of every LANES, 1.5x slower)."""
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k2n, k3n = geo[2, 1], geo[2, 2]
    d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
    t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
    p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
    plane = kernel_size * positions  # from one plane's output to the next one's
    step = t3 * xs4
    for kk in range(kernel_size):
        k1 = kk // (k2n * k3n)
        k2 = (kk // k3n) % k2n
        k3 = kk % k3n
        shift3 = k3 * d3 - p3
        lo, hi = _valid(s3, t3, shift3, l3n)
        row0 = (t * kernel_size + kk) * positions
        for l1 in range(l1n):
            i1 = l1 * t1 - p1 + k1 * d1
            for l2 in range(l2n):
                i2 = l2 * t2 - p2 + k2 * d2
                dst = row0 + (l1 * l2n + l2) * l3n
                if i1 < 0 or i1 >= s1 or i2 < 0 or i2 >= s2:
                    for e in range(count):
                        _unfold_run(out, dst + e * plane, base, 0, 0, 0, 0, l3n, fill)
                    continue
                src = xo + i1 * xs2 + i2 * xs3 + shift3 * xs4
                if count == 1:
                    _unfold_run(out, dst, base, src, step, lo, hi, l3n, fill)
                    continue
                # the row's tiles, a quarter of the planes at a time (see simd.transpose_tile)
                for quarter in range(4):
                    l = lo
                    while l < hi and hi - lo >= LANES:
                        q = min(l, hi - LANES)  # the last tile overlaps the one before
                        if quarter == 0:
                            _tile0(out, dst + q, plane, base, src + q * step, step)
                        elif quarter == 1:
                            _tile1(out, dst + q, plane, base, src + q * step, step)
                        elif quarter == 2:
                            _tile2(out, dst + q, plane, base, src + q * step, step)
                        else:
                            _tile3(out, dst + q, plane, base, src + q * step, step)
                        l = q + LANES
                for e in range(LANES):
                    d = dst + e * plane
                    for q in range(lo):
                        out[uint64(d + q)] = fill
                    for q in range(l, hi):
                        out[uint64(d + q)] = base[uint64(src + e + q * step)]
                    for q in range(hi, l3n):
                        out[uint64(d + q)] = fill


@kernel(parfor_passes=True)
def unfold_rows(part, parts, base, offset, xs, geo, batch, channels, fill, out):
    """im2col in PyTorch's layout: ``out`` is C-contiguous (N, C, K1, K2, K3, L1, L2, L3).

    One task per (n, c) plane; each (kernel offset, l1, l2) row of L3 positions
    is one strided run of the input with padding at its ends.
    """
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    # strides as locals: a store to out may alias xs's memory as far as LLVM
    # knows, which would reload them in the inner loops and stop vectorisation
    xs0, xs1, xs2, xs3, xs4 = xs[0], xs[1], xs[2], xs[3], xs[4]
    kernel_size = k1n * k2n * k3n
    positions = l1n * l2n * l3n
    # channels adjacent in memory (a view of channels-last memory): blocks of LANES
    # planes, whose runs come from one tile of positions x channels (_unfold_planes)
    tiles = xs1 == 1 and channels >= LANES
    task_lo, task_hi = part_range(batch * channels, part, parts)
    for t in range(task_lo, task_hi):
        n = t // channels
        c = t - n * channels
        xo = offset + n * xs0 + c * xs1
        count = 1
        if tiles and c - c % LANES + LANES <= channels:
            if c % LANES:  # the block's first plane does the block
                continue
            count = LANES
        _unfold_planes(out, base, xo, t, geo, kernel_size, positions, xs4, xs2, xs3, fill, count)


@kernel(parfor_passes=True)
def unfold_channels_last(part, parts, base, offset, xs, geo, batch, channels, fill, out):
    """im2col with channels last: ``out`` is C-contiguous (N, L1, L2, L3, K1, K2, K3, C).

    One task per (n, l1, l2); each (l3, kernel offset) is a run of C channels.
    """
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
    t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
    p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
    # strides as locals: a store to out may alias xs's memory as far as LLVM
    # knows, which would reload them in the inner loops and stop vectorisation
    xs0, xs1, xs2, xs3, xs4 = xs[0], xs[1], xs[2], xs[3], xs[4]
    kernel_size = k1n * k2n * k3n
    task_lo, task_hi = part_range(batch * l1n * l2n, part, parts)
    for t in range(task_lo, task_hi):
        n = t // (l1n * l2n)
        l1 = (t // l2n) % l1n
        l2 = t % l2n
        xo = offset + n * xs0
        for l3 in range(l3n):
            dst0 = ((t * l3n + l3) * kernel_size) * channels
            for kk in range(kernel_size):
                k1 = kk // (k2n * k3n)
                k2 = (kk // k3n) % k2n
                k3 = kk % k3n
                i1 = l1 * t1 - p1 + k1 * d1
                i2 = l2 * t2 - p2 + k2 * d2
                i3 = l3 * t3 - p3 + k3 * d3
                dst = dst0 + kk * channels
                if 0 <= i1 < s1 and 0 <= i2 < s2 and 0 <= i3 < s3:
                    src = xo + i1 * xs2 + i2 * xs3 + i3 * xs4
                    _unfold_run(out, dst, base, src, xs1, 0, channels, channels, fill)
                else:
                    _unfold_run(out, dst, base, 0, 0, 0, 0, channels, fill)


# ------------------------------------------------------------------------- fold


@helper(inline=True)
def _fold_run(out, dst, out_step, cols, src, c_step, lo, hi):
    """out[dst + l*out_step] += cols[src + l*c_step] for l in [lo, hi)."""
    if out_step == 1 and c_step == 1:
        for l in range(lo, hi):
            out[uint64(dst + l)] += cols[uint64(src + l)]
    else:
        for l in range(lo, hi):
            out[uint64(dst + l * out_step)] += cols[uint64(src + l * c_step)]


@kernel(parfor_passes=True)
def fold_rows(part, parts, cols, offset, cs, geo, batch, channels, out):
    """col2im in PyTorch's layout: ``out`` (C-contiguous (N, C, S1, S2, S3), zeroed
    here) gathers ``cols[n, c*K + k, l]`` (element strides ``cs``: n, row, l).

    One task per output row (n, c, i1, i2); the kernel offsets whose windows
    cover the row are found by inverting ``i = l*T - P + k*D``.
    """
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
    t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
    p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
    # strides as locals: a store to out may alias cs's memory as far as LLVM
    # knows, which would reload them in the inner loops and stop vectorisation
    cs0, cs1, cs2 = cs[0], cs[1], cs[2]
    kernel_size = k1n * k2n * k3n
    task_lo, task_hi = part_range(batch * channels * s1 * s2, part, parts)
    for t in range(task_lo, task_hi):
        nc = t // (s1 * s2)
        i1 = (t // s2) % s1
        i2 = t % s2
        n = nc // channels
        c = nc - n * channels
        dst = t * s3
        for i3 in range(s3):
            out[uint64(dst + i3)] = 0
        for k1 in range(k1n):
            l1 = _source(i1 + p1 - k1 * d1, t1, l1n)
            if l1 < 0:
                continue
            for k2 in range(k2n):
                l2 = _source(i2 + p2 - k2 * d2, t2, l2n)
                if l2 < 0:
                    continue
                for k3 in range(k3n):
                    kk = (k1 * k2n + k2) * k3n + k3
                    shift3 = k3 * d3 - p3
                    lo, hi = _valid(s3, t3, shift3, l3n)
                    src = (offset + n * cs0 + (c * kernel_size + kk) * cs1
                           + (l1 * l2n + l2) * l3n * cs2)
                    _fold_run(out, dst + shift3, t3, cols, src, cs2, lo, hi)


@kernel(parfor_passes=True)
def fold_planes(part, parts, cols, offset, cs, geo, batch, channels, out):
    """col2im in PyTorch's layout, one task per (n, c) plane: the same sums, in the
    same order (increasing kernel index for every element), as :func:`fold_rows`,
    with the loops turned so that each column row is read once, front to back
    (on the (8, 576, 3136) bench: 3.8 ms median against 4.3 by rows). Used when
    there are enough planes to keep the cores busy."""
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
    t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
    p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
    # strides as locals: a store to out may alias cs's memory as far as LLVM
    # knows, which would reload them in the inner loops and stop vectorisation
    cs0, cs1, cs2 = cs[0], cs[1], cs[2]
    kernel_size = k1n * k2n * k3n
    plane = s1 * s2 * s3
    task_lo, task_hi = part_range(batch * channels, part, parts)
    for t in range(task_lo, task_hi):
        n = t // channels
        c = t - n * channels
        dst0 = t * plane
        for e in range(plane):
            out[uint64(dst0 + e)] = 0
        for kk in range(kernel_size):
            k1 = kk // (k2n * k3n)
            k2 = (kk // k3n) % k2n
            k3 = kk % k3n
            shift1, shift2, shift3 = k1 * d1 - p1, k2 * d2 - p2, k3 * d3 - p3
            lo1, hi1 = _valid(s1, t1, shift1, l1n)
            lo2, hi2 = _valid(s2, t2, shift2, l2n)
            lo, hi = _valid(s3, t3, shift3, l3n)
            row = offset + n * cs0 + (c * kernel_size + kk) * cs1
            for l1 in range(lo1, hi1):
                i1 = l1 * t1 + shift1
                for l2 in range(lo2, hi2):
                    i2 = l2 * t2 + shift2
                    src = row + (l1 * l2n + l2) * l3n * cs2
                    _fold_run(out, dst0 + (i1 * s2 + i2) * s3 + shift3, t3, cols, src, cs2,
                              lo, hi)


@kernel(parfor_passes=True)
def fold_channels_last(part, parts, cols, offset, cs, geo, batch, channels, out):
    """col2im with channels last: ``out`` (C-contiguous (N, S1, S2, S3, C), zeroed here)
    gathers ``cols[n, l, k*C + c]`` (element strides ``cs``: n, l, column).

    One task per output row (n, i1, i2) of S3 * C elements.
    """
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
    t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
    p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
    # strides as locals: a store to out may alias cs's memory as far as LLVM
    # knows, which would reload them in the inner loops and stop vectorisation
    cs0, cs1, cs2 = cs[0], cs[1], cs[2]
    task_lo, task_hi = part_range(batch * s1 * s2, part, parts)
    for t in range(task_lo, task_hi):
        n = t // (s1 * s2)
        i1 = (t // s2) % s1
        i2 = t % s2
        dst = t * s3 * channels
        for e in range(s3 * channels):
            out[uint64(dst + e)] = 0
        for k1 in range(k1n):
            l1 = _source(i1 + p1 - k1 * d1, t1, l1n)
            if l1 < 0:
                continue
            for k2 in range(k2n):
                l2 = _source(i2 + p2 - k2 * d2, t2, l2n)
                if l2 < 0:
                    continue
                for k3 in range(k3n):
                    kk = (k1 * k2n + k2) * k3n + k3
                    shift3 = k3 * d3 - p3
                    lo, hi = _valid(s3, t3, shift3, l3n)
                    row = offset + n * cs0 + (l1 * l2n + l2) * l3n * cs1 + kk * channels * cs2
                    for l3 in range(lo, hi):
                        _fold_run(out, dst + (l3 * t3 + shift3) * channels, 1, cols,
                                  row + l3 * cs1, cs2, 0, channels)

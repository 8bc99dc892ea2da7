"""Pooling kernels: max and average over each window, read where it lies.

The geometry is ``axisops.kernels.window``'s: every problem lifted to three
spatial dimensions, ``geo`` an int64 (6, 3) array of rows ``S`` (input size),
``L`` (window positions), ``k`` (kernel size), ``D`` (dilation), ``T``
(stride) and ``P`` (padding before), and the input walked with element strides
``xs = (n, c, s1, s2, s3)`` (channels last is only other strides). Window
position ``l`` and kernel offset ``k`` read input position ``l*T - P + k*D``; a
position outside ``[0, S)`` is padding, which never wins a max and counts in a
mean only with ``include_pad``.

* max: the greatest element of the window, a NaN winning (the first NaN, as
  ``argmax``), ties to the first in window order (C order of the kernel
  offsets); its index is the flat position ``(i1 * S2 + i2) * S3 + i3`` in its
  (n, c) plane, PyTorch's ``return_indices``;
* mean: the sum of the window's elements in window order, divided by the window's
  size (clipped to the padded input, PyTorch's ``count_include_pad=True``) or by
  its elements inside the input.

Tasks are (n, c) planes (channels first: each output's window is a few short
strided runs) or (n, l1, l2) rows of outputs (channels last: every step is a
contiguous run of C channels, vectorised across them). Each output is written
by one task, in the same order on any number of threads.
"""
from __future__ import annotations

import numpy as np

from .._jit import factory, helper, kernel, part_range
from .window import _valid


@helper(inline=True)
def _span(l, stride, pad, size, kernel, dilation):
    """(first kernel offset, end) of the offsets whose position is inside [0, size)."""
    start = l * stride - pad
    k0 = 0
    if start < 0:
        k0 = (-start + dilation - 1) // dilation
    k1 = kernel
    last = size - 1 - start
    if last < 0:
        k1 = 0
    else:
        k1 = min(kernel, last // dilation + 1)
    return k0, max(k0, k1)


@helper(inline=True)
def _padded_count(l, stride, pad, pad_end, size, kernel, dilation):
    """The window's elements inside the padded input (``count_include_pad``; its
    first element always is)."""
    start = l * stride - pad
    return min(kernel, (size + pad_end - 1 - start) // dilation + 1)


@factory
def pool_planes(average: bool, with_index: bool = True):
    """The kernel of max (``average=False``) or mean pooling, a task per (n, c)
    plane: ``out`` and ``idx`` are C-contiguous (N, C, L1, L2, L3).

    A row of outputs (n, c, l1, l2, :) is taken at once: for each kernel offset
    (k1, k2, k3) in window order, every output l3 whose window reads inside the
    input at that offset takes its element (a strided run of the input), so each
    output still sees its window's elements in window order, with no division
    per element (the valid l3 of each k3, and each l3's count, are worked out once
    per call)."""
    AVERAGE = average
    INDEX = not average and with_index

    @kernel
    def pool(part, parts, base, offset, xs, geo, pad_end, batch, channels, include_pad, acc,
             out, idx):
        s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
        l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
        k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
        d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
        t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
        p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
        xs0, xs1, xs2, xs3, xs4 = xs[0], xs[1], xs[2], xs[3], xs[4]
        lowest = acc[0]  # max values only: below every element (-inf, the integer minimum)
        positions = l1n * l2n * l3n
        # per kernel offset k3: the outputs l3 in [lo3, hi3) whose element is inside
        lo3 = np.empty(k3n, np.int64)
        hi3 = np.empty(k3n, np.int64)
        for k3 in range(k3n):
            lo3[k3], hi3[k3] = _valid(s3, t3, k3 * d3 - p3, l3n)
        count3 = np.empty(l3n, np.int64)  # each l3's elements along dimension 3
        for l3 in range(l3n):
            a3, b3 = _span(l3, t3, p3, s3, k3n, d3)
            count3[l3] = (_padded_count(l3, t3, p3, pad_end[2], s3, k3n, d3) if include_pad
                          else b3 - a3)
        sums = np.empty(l3n if AVERAGE else 0, acc.dtype)
        task_lo, task_hi = part_range(batch * channels, part, parts)
        for t in range(task_lo, task_hi):
            n = t // channels
            c = t - n * channels
            xo = offset + n * xs0 + c * xs1
            o = t * positions
            for l1 in range(l1n):
                a1, b1 = _span(l1, t1, p1, s1, k1n, d1)
                for l2 in range(l2n):
                    a2, b2 = _span(l2, t2, p2, s2, k2n, d2)
                    row = out[o:o + l3n]
                    at_row = idx[o:o + l3n] if INDEX else idx[:0]
                    if AVERAGE:
                        sums[:] = 0
                    else:
                        row[:] = lowest
                        at_row[:] = -1
                    for k1 in range(a1, b1):
                        i1 = l1 * t1 - p1 + k1 * d1
                        for k2 in range(a2, b2):
                            i2 = l2 * t2 - p2 + k2 * d2
                            q = xo + i1 * xs2 + i2 * xs3
                            for k3 in range(k3n):
                                shift = k3 * d3 - p3
                                src = q + shift * xs4
                                step = t3 * xs4
                                if AVERAGE:
                                    for l3 in range(lo3[k3], hi3[k3]):
                                        sums[l3] += base[src + l3 * step]
                                else:  # selects, not branches: the loop vectorises
                                    for l3 in range(lo3[k3], hi3[k3]):
                                        v = base[src + l3 * step]
                                        b = row[l3]
                                        row[l3] = v if (v > b) | ((v != v) & (b == b)) else b
                    if INDEX:  # a second pass: the first element of each window equal
                        # to its maximum (the first NaN where the maximum is NaN)
                        for k1 in range(a1, b1):
                            i1 = l1 * t1 - p1 + k1 * d1
                            for k2 in range(a2, b2):
                                i2 = l2 * t2 - p2 + k2 * d2
                                q = xo + i1 * xs2 + i2 * xs3
                                for k3 in range(k3n):
                                    shift = k3 * d3 - p3
                                    src = q + shift * xs4
                                    step = t3 * xs4
                                    at0 = (i1 * s2 + i2) * s3 + shift
                                    for l3 in range(lo3[k3], hi3[k3]):
                                        v = base[src + l3 * step]
                                        b = row[l3]
                                        a = at_row[l3]
                                        hit = (a < 0) & ((v == b) | ((v != v) & (b != b)))
                                        at_row[l3] = at0 + l3 * t3 if hit else a
                    if AVERAGE:
                        if include_pad:
                            c12 = (_padded_count(l1, t1, p1, pad_end[0], s1, k1n, d1)
                                   * _padded_count(l2, t2, p2, pad_end[1], s2, k2n, d2))
                        else:
                            c12 = (b1 - a1) * (b2 - a2)
                        for l3 in range(l3n):
                            row[l3] = sums[l3] / (c12 * count3[l3])
                    o += l3n

    return pool


@factory
def pool_channels_last(average: bool, with_index: bool = True):
    """The kernel of max or mean pooling with channels last, a task per (n, l1, l2):
    ``out`` and ``idx`` are C-contiguous (N, L1, L2, L3, C); each window step is a
    run of C channels, compared (with selects) or added across the channels at
    once; the max's index, where asked, is a second pass: the first element of
    each window equal to its maximum (the first NaN where the maximum is NaN)."""
    AVERAGE = average
    INDEX = not average and with_index

    @kernel
    def pool(part, parts, base, offset, xs, geo, pad_end, batch, channels, include_pad, acc,
             out, idx):
        s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
        l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
        k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
        d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
        t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
        p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
        xs0, xs1, xs2, xs3, xs4 = xs[0], xs[1], xs[2], xs[3], xs[4]
        lowest = acc[0]  # max: below every element (-inf, the integer minimum)
        sums = np.empty(channels if AVERAGE else 0, acc.dtype)
        task_lo, task_hi = part_range(batch * l1n * l2n, part, parts)
        for t in range(task_lo, task_hi):
            n = t // (l1n * l2n)
            l1 = (t // l2n) % l1n
            l2 = t % l2n
            xo = offset + n * xs0
            a1, b1 = _span(l1, t1, p1, s1, k1n, d1)
            a2, b2 = _span(l2, t2, p2, s2, k2n, d2)
            for l3 in range(l3n):
                a3, b3 = _span(l3, t3, p3, s3, k3n, d3)
                o = (t * l3n + l3) * channels
                row = out[o:o + channels]
                if AVERAGE:
                    sums[:] = 0
                else:
                    row[:] = lowest
                for k1 in range(a1, b1):
                    i1 = l1 * t1 - p1 + k1 * d1
                    for k2 in range(a2, b2):
                        i2 = l2 * t2 - p2 + k2 * d2
                        for k3 in range(a3, b3):
                            i3 = l3 * t3 - p3 + k3 * d3
                            q = xo + i1 * xs2 + i2 * xs3 + i3 * xs4
                            if AVERAGE:
                                if xs1 == 1:
                                    seg = base[q:q + channels]
                                    for c in range(channels):
                                        sums[c] += seg[c]
                                else:
                                    for c in range(channels):
                                        sums[c] += base[q + c * xs1]
                            elif xs1 == 1:
                                seg = base[q:q + channels]
                                for c in range(channels):
                                    v = seg[c]
                                    b = row[c]
                                    row[c] = v if (v > b) | ((v != v) & (b == b)) else b
                            else:
                                for c in range(channels):
                                    v = base[q + c * xs1]
                                    b = row[c]
                                    row[c] = v if (v > b) | ((v != v) & (b == b)) else b
                if INDEX:
                    at_row = idx[o:o + channels]
                    at_row[:] = -1
                    for k1 in range(a1, b1):
                        i1 = l1 * t1 - p1 + k1 * d1
                        for k2 in range(a2, b2):
                            i2 = l2 * t2 - p2 + k2 * d2
                            for k3 in range(a3, b3):
                                i3 = l3 * t3 - p3 + k3 * d3
                                q = xo + i1 * xs2 + i2 * xs3 + i3 * xs4
                                at = (i1 * s2 + i2) * s3 + i3
                                for c in range(channels):
                                    v = base[q + c * xs1]
                                    b = row[c]
                                    a = at_row[c]
                                    hit = (a < 0) & ((v == b) | ((v != v) & (b != b)))
                                    at_row[c] = at if hit else a
                if AVERAGE:
                    if include_pad:
                        count = (_padded_count(l1, t1, p1, pad_end[0], s1, k1n, d1)
                                 * _padded_count(l2, t2, p2, pad_end[1], s2, k2n, d2)
                                 * _padded_count(l3, t3, p3, pad_end[2], s3, k3n, d3))
                    else:
                        count = (b1 - a1) * (b2 - a2) * (b3 - a3)
                    if count & (count - 1) == 0:  # a power of two: its reciprocal is exact
                        scale = 1.0 / count
                        for c in range(channels):
                            row[c] = sums[c] * scale
                    else:
                        for c in range(channels):
                            row[c] = sums[c] / count

    return pool


@kernel
def unpool_add(part, parts, g, idx, planes, positions, plane_size, out):
    """``out[p, idx[p, o]] += g[p, o]`` for each plane p in output order o: the
    scatter-add of max pooling's gradient, a task per plane (no two tasks write
    one element, and each element's sum runs in output order)."""
    lo, hi = part_range(planes, part, parts)
    for p in range(lo, hi):
        dst = p * plane_size
        src = p * positions
        for o in range(positions):
            out[dst + idx[src + o]] += g[src + o]


@kernel
def avg_unpool(part, parts, g, geo, pad_end, planes, include_pad, out):
    """The gradient of mean pooling, a fold: each output's ``g`` divided by its
    window's count and added to the window's elements inside the input, in output
    order and window order, a task per plane; ``g`` (planes, L) and ``out``
    (planes, S) C-contiguous."""
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]  # 1: avg_pool has no dilation
    t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
    p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
    positions = l1n * l2n * l3n
    size = s1 * s2 * s3
    lo, hi = part_range(planes, part, parts)
    for p in range(lo, hi):
        o = p * positions
        dst = p * size
        for l1 in range(l1n):
            a1, b1 = _span(l1, t1, p1, s1, k1n, 1)
            for l2 in range(l2n):
                a2, b2 = _span(l2, t2, p2, s2, k2n, 1)
                for l3 in range(l3n):
                    a3, b3 = _span(l3, t3, p3, s3, k3n, 1)
                    if include_pad:
                        count = (_padded_count(l1, t1, p1, pad_end[0], s1, k1n, d1)
                                 * _padded_count(l2, t2, p2, pad_end[1], s2, k2n, d2)
                                 * _padded_count(l3, t3, p3, pad_end[2], s3, k3n, d3))
                    else:
                        count = (b1 - a1) * (b2 - a2) * (b3 - a3)
                    share = g[o] / count
                    for k1 in range(a1, b1):
                        r1 = (l1 * t1 - p1 + k1) * s2
                        for k2 in range(a2, b2):
                            q = dst + (r1 + l2 * t2 - p2 + k2) * s3
                            for k3 in range(a3, b3):
                                out[q + l3 * t3 - p3 + k3] += share
                    o += 1

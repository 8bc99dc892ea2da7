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

The kernels:

* :func:`max_pool_rows`: max pooling, a task per row of outputs, (n, c, l1, l2)
  or with channels last (n, l1, l2), reduced separably (a factory: one kernel
  per layout and ``return_indices``);
* :func:`avg_pool_planes`: mean pooling with channels first, a task per (n, c)
  plane, each row of outputs summed a strided run of the input at a time;
* :func:`avg_pool_channels_last`: mean pooling with channels last, a task per
  (n, l1, l2) row of outputs, every step a contiguous run of C channels,
  vectorised across them;
* :func:`unpool_add` and :func:`avg_unpool`: the gradients (``axisops.grad``).

Each output is written by one task, in the same order on any number of
threads. The forward kernels read every element through
:func:`~axisops.kernels.common.load`: float16 in place as its bit patterns,
looked up in the float32 table of their values (``axisops._dtypes.float16_table``;
Numba has no float16), bool as its bytes, any other dtype as it is; a mean's
sums are in the dtype of the ``like`` argument (float32 for float16 and
float32, else float64).
"""
from __future__ import annotations

import numpy as np
from numba import uint64

from .._jit import factory, helper, kernel, part_range
from .common import load
from .simd import LANES, transpose_tiles
from .window import _valid


@helper(inline=True)
def _span(l, stride, pad, size, kernel, dilation):
    """(first kernel offset, end) of the offsets whose position is inside [0, size)."""
    start = l * stride - pad
    if dilation == 1:  # without the divisions (~25 cycles each, twice per row of outputs)
        k0 = max(0, -start)
        return k0, max(k0, min(kernel, size - start))
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


@kernel(nrt=True)
def avg_pool_planes(part, parts, base, offset, xs, geo, pad_end, batch, channels, include_pad,
                    table, like, out):
    """Mean pooling with channels first, a task per (n, c) plane: ``out``
    C-contiguous (N, C, L1, L2, L3), the sums in ``like``'s dtype (each element
    read through :func:`~axisops.kernels.common.load`: float16 bits through the
    float32 *table*).

    A row of outputs (n, c, l1, l2, :) is taken at once: for each kernel offset
    (k1, k2, k3) in window order, every output l3 whose window reads inside the
    input at that offset adds its element (a strided run of the input), so each
    output still sees its window's elements in window order, with no division
    per element (the valid l3 of each k3, and each l3's count, are worked out once
    per call); each sum is divided once."""
    k3n, l3n = geo[2, 2], geo[1, 2]
    _avg_pool_planes_body(part, parts, base, offset, xs, geo, pad_end, batch, channels,
                          include_pad, table, like, out, np.empty(k3n, np.int64),
                          np.empty(k3n, np.int64), np.empty(l3n, np.int64),
                          np.empty(l3n, like.dtype))


@helper
def _avg_pool_planes_body(part, parts, base, offset, xs, geo, pad_end, batch, channels,
                          include_pad, table, like, out, lo3, hi3, count3, sums):
    """:func:`avg_pool_planes`' loops, without reference counting (each view its
    loops take cost two atomic operations with it), on the scratch it allocates:
    per kernel offset k3 the outputs [lo3, hi3) that read inside, each l3's
    element count along dimension 3, a row's sums."""
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
    t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
    p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
    xs0, xs1, xs2, xs3, xs4 = xs[0], xs[1], xs[2], xs[3], xs[4]
    positions = l1n * l2n * l3n
    # per kernel offset k3: the outputs l3 in [lo3, hi3) whose element is inside
    for k3 in range(k3n):
        lo3[k3], hi3[k3] = _valid(s3, t3, k3 * d3 - p3, l3n)
    # two taps side by side per output, every output reading both (2x2 stride 2 and
    # the like): both in one loop, which vectorises (a tap per loop read strided
    # elements one by one); the same adds per output, in the same order
    pairs = (k3n == 2 and t3 == 2 and d3 == 1 and p3 == 0 and xs4 == 1
             and lo3[0] == 0 and lo3[1] == 0 and hi3[0] == l3n and hi3[1] == l3n)
    # count3: each l3's elements along dimension 3
    for l3 in range(l3n):
        a3, b3 = _span(l3, t3, p3, s3, k3n, d3)
        count3[l3] = (_padded_count(l3, t3, p3, pad_end[2], s3, k3n, d3) if include_pad
                      else b3 - a3)
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
                sums[:] = 0
                for k1 in range(a1, b1):
                    i1 = l1 * t1 - p1 + k1 * d1
                    for k2 in range(a2, b2):
                        i2 = l2 * t2 - p2 + k2 * d2
                        q = xo + i1 * xs2 + i2 * xs3
                        if pairs:
                            _add_pairs(sums, base, q, l3n, table, like)
                            continue
                        for k3 in range(k3n):
                            src = q + (k3 * d3 - p3) * xs4
                            step = t3 * xs4
                            for l3 in range(lo3[k3], hi3[k3]):
                                sums[l3] += load(base[src + l3 * step], table, like)
                if include_pad:
                    c12 = (_padded_count(l1, t1, p1, pad_end[0], s1, k1n, d1)
                           * _padded_count(l2, t2, p2, pad_end[1], s2, k2n, d2))
                else:
                    c12 = (b1 - a1) * (b2 - a2)
                row = out[o:o + l3n]
                for l3 in range(l3n):
                    row[l3] = sums[l3] / (c12 * count3[l3])
                o += l3n


@helper(inline=True)
def _add_pairs(sums, base, q, n, table, like):
    """``sums[l] += x[q + 2 l]``, then ``+= x[q + 2 l + 1]``, for l < n: two taps
    per output in window order, in one loop (interleaved loads, vectorised)."""
    u = np.uint64  # unsigned offsets: no wrap-around test per element
    at = u(q)
    for l in range(u(0), u(n)):
        s = sums[l] + load(base[at + l + l], table, like)
        sums[l] = s + load(base[at + l + l + u(1)], table, like)


@helper(inline=True)
def _first_max(b, v):
    """Whether the maximum so far *b* stays against the next element *v*: it is at
    least *v*, or a NaN (the first NaN wins, ties go to the first)."""
    return (b >= v) | (b != b)


@helper(inline=True)
def _pick(keep, a, b, ity):
    """*a* where *keep*, else *b*, in *ity*: a mask, not a branch (an int select
    driven by a float comparison did not vectorise)."""
    a = ity(a)
    b = ity(b)
    return ity(b ^ ((a ^ b) & -ity(keep)))


@helper(inline=True)
def _max3(hv, hx, s0, s1, s2, step, h0, h1, h2, moves, table, like, index):
    """``hv[i]``: the first maximum of ``s0[i * step]``, ``s1[..]``, ``s2[..]``, and
    with *index* ``hx[i]`` where it is (``h0``, ``h1`` or ``h2`` plus ``i * moves``).
    Two elements are passed as ``s0, s1, s1`` (a repeat never wins a tie), one as
    ``s0, s0, s0``. Every array is indexed by the loop's counter, and *step* is a
    constant where the caller passes one, so that the loop vectorises."""
    ity = hx.dtype.type
    for i in range(hv.size):
        v0 = load(s0[i * step], table, like)
        v1 = load(s1[i * step], table, like)
        v2 = load(s2[i * step], table, like)
        k01 = _first_max(v0, v1)
        m = v0 if k01 else v1
        k = _first_max(m, v2)
        hv[i] = m if k else v2
        if index:
            d = i * moves
            hx[i] = _pick(k, _pick(k01, h0 + d, h1 + d, ity), h2 + d, ity)


@helper(inline=True)
def _more(hv, hx, seg, step, here, moves, table, like, index):
    """``hv[i]``, a maximum so far, against ``seg[i * step]`` (at ``here + i *
    moves``), as :func:`_max3`."""
    ity = hx.dtype.type
    for i in range(hv.size):
        v = load(seg[i * step], table, like)
        b = hv[i]
        keep = _first_max(b, v)
        hv[i] = b if keep else v
        if index:
            hx[i] = _pick(keep, hx[i], here + i * moves, ity)


@helper(inline=True)
def _rows3(row, ax, h0, h1, h2, x0, x1, x2, index):
    """``row``: the first maximum of three reduced rows, ``ax`` its index (with
    *index*; worked out in the dtype of ``x0`` and stored in ``ax``'s), as
    :func:`_max3`."""
    ity = x0.dtype.type
    for j in range(row.size):
        v0 = h0[j]
        v1 = h1[j]
        v2 = h2[j]
        k01 = _first_max(v0, v1)
        m = v0 if k01 else v1
        k = _first_max(m, v2)
        row[j] = m if k else v2
        if index:
            ax[j] = _pick(k, _pick(k01, x0[j], x1[j], ity), x2[j], ity)


@helper(inline=True)
def _rows_more(row, ax, h, x, index):
    """``row``, the maxima so far, against one more reduced row (as :func:`_rows3`)."""
    ity = ax.dtype.type
    for j in range(row.size):
        v = h[j]
        b = row[j]
        keep = _first_max(b, v)
        row[j] = b if keep else v
        if index:
            ax[j] = _pick(keep, ax[j], x[j], ity)


@helper(inline=True)
def _deinterleave(evens, odds, base, q, total):
    """``evens[j] = base[q + 2 j]``, ``odds[j] = base[q + 2 j + 1]`` for the *total*
    elements from *q*: one loop over pairs, which LLVM compiles to loads and
    shuffles (three taps read at stride 2 from three slices did not: 1.3 ns an
    output, against 0.13 at stride 1)."""
    u = np.uint64
    at = u(q)
    pairs = u(total) // u(2)
    for j in range(u(0), pairs):
        evens[j] = base[at + j + j]
        odds[j] = base[at + j + j + u(1)]
    if total % 2:
        evens[pairs] = base[at + pairs + pairs]


@helper(inline=True)
def _tap(evens, odds, k, n):
    """The *n* elements ``base[q + 2 i + k]`` (i < n) of a row split by
    :func:`_deinterleave`."""
    half = k // 2
    return evens[half:half + n] if k % 2 == 0 else odds[half:half + n]


@helper(inline=True)
def _scan(base, q, step, count, table, like):
    """(first maximum, its k) of ``base[q + k * step]`` for k < *count*."""
    best = load(base[q], table, like)
    at = 0
    for k in range(1, count):
        v = load(base[q + k * step], table, like)
        keep = _first_max(best, v)
        best = best if keep else v
        at = at if keep else k
    return best, at


@factory
def _max_pool_body(channels_last: bool, with_index: bool):
    """The loops of :func:`max_pool_rows`, a helper per layout and ``return_indices``
    (:func:`max_pool_planes` runs the channels-last one on blocks of planes)."""
    return max_pool_rows(channels_last, with_index).body


@factory
def max_pool_rows(channels_last: bool, with_index: bool):
    """The kernel of max pooling, a task per row of outputs: (n, c, l1, l2) with
    channels first (``out`` and ``idx`` C-contiguous (N, C, L1, L2, L3)), (n, l1,
    l2) with channels last (C-contiguous (N, L1, L2, L3, C), each position's C
    channels together).

    Separable: each input row (i1, i2) the window reads is first reduced along
    dimension 3, each output l3 getting the first maximum over its kernel
    offsets k3 (and where it is), into a small cache of rows that the task's
    next rows of outputs reuse (with stride 2, half of a 3-row window's input
    rows); then each output takes the first maximum of those rows in (k1, k2)
    order: the first maximum of the window in C order of the kernel offsets, as
    the window read whole gives. Up to three elements (or rows) are compared in
    one loop (:func:`_max3`), with selects and masks, not branches: the loops
    vectorise, across the channels (channels last) or along a row (channels
    first, for strides 1 and 2; other strides and the windows cut by the
    padding are read one output at a time). The indices are worked out in
    ``ilike``'s dtype (int32 where a plane's positions fit, as many lanes as
    float32's) and written out as int64.
    """
    CL = channels_last
    INDEX = with_index
    VARIANT = f"{'cl' if CL else 'cf'}{'_index' if INDEX else ''}"

    def body(part, parts, base, offset, xs, geo, batch, channels, table, like, ilike, out, idx,
             a3s, b3s, hv, hx, ax, tags, order, evens, odds):
        """The kernel's loops, without reference counting (its views handed to the
        inlined helpers cost two atomic operations each with it: 60 % of a (1, 16,
        8, 8) image's max pool, perf on an AMD EPYC); the kernel allocates the
        scratch it takes: each output l3's kernel offsets (a3s, b3s), the cache of
        reduced rows (hv, hx, tags), the outputs' indices (ax), a window's slots
        in order, a row split into its even and odd elements (evens, odds: channels
        first, stride 2)."""
        s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
        l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
        k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
        d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
        t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
        p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
        xs0, xs1, xs2, xs3, xs4 = xs[0], xs[1], xs[2], xs[3], xs[4]
        width = channels if CL else 1  # elements per output position in a row
        row_len = l3n * width
        # each output l3's kernel offsets [a3, b3) inside the input; those of
        # [full_lo, full_hi) have them all
        full_lo, full_hi = l3n, l3n
        for l3 in range(l3n):
            a3s[l3], b3s[l3] = _span(l3, t3, p3, s3, k3n, d3)
            if a3s[l3] == 0 and b3s[l3] == k3n:
                full_hi = l3 + 1
                if full_lo == l3n:
                    full_lo = l3
        if full_lo == l3n:
            full_lo = full_hi = 0
        kb, kc = min(1, k3n - 1), min(2, k3n - 1)
        # the cache of reduced input rows: row (i1, i2) in slot (i1 % r1, i2 % r2),
        # tagged with (plane or n, i1, i2); a window's rows never share a slot
        r1 = (k1n - 1) * d1 + 1
        r2 = (k2n - 1) * d2 + 1
        rows_per_plane = l1n * l2n
        task_lo, task_hi = part_range(batch * (1 if CL else channels) * rows_per_plane,
                                      part, parts)
        step = t3 * xs4
        for t in range(task_lo, task_hi):
            plane = t // rows_per_plane
            row_of_plane = t // l2n
            l1 = row_of_plane % l1n if l1n > 1 else 0  # integer divisions cost ~25 cycles
            l2 = t - row_of_plane * l2n
            if CL:
                xo = offset + plane * xs0
            else:
                n = plane // channels
                xo = offset + n * xs0 + (plane - n * channels) * xs1
            o = t * row_len
            row = out[o:o + row_len]
            a1, b1 = _span(l1, t1, p1, s1, k1n, d1)
            a2, b2 = _span(l2, t2, p2, s2, k2n, d2)
            count = (b1 - a1) * (b2 - a2)
            r = 0
            for k1 in range(a1, b1):
                i1 = l1 * t1 - p1 + k1 * d1
                for k2 in range(a2, b2):
                    i2 = l2 * t2 - p2 + k2 * d2
                    slot = ((i1 % r1) * r2 if r1 > 1 else 0) + (i2 % r2 if r2 > 1 else 0)
                    tag = (plane * s1 + i1) * s2 + i2
                    order[r] = slot
                    r += 1
                    if count == 1:  # reduced straight into the outputs
                        hvr = row
                        hxr = ax
                    elif tags[slot] == tag:
                        continue
                    else:
                        tags[slot] = tag
                        hvr = hv[slot]
                        hxr = hx[slot] if INDEX else ax
                    src = xo + i1 * xs2 + i2 * xs3
                    at0 = (i1 * s2 + i2) * s3
                    if CL:
                        for l3 in range(l3n):
                            a3, b3 = a3s[l3], b3s[l3]
                            j = l3 * width
                            hvs = hvr[j:j + width]  # indexed by the loop's c: it vectorises
                            hxs = hxr[j:j + width] if INDEX else hxr[:0]
                            i3 = l3 * t3 - p3
                            q = src + i3 * xs4
                            here = at0 + i3
                            if xs1 == 1:
                                qa = q + a3 * d3 * xs4
                                qb = q + min(a3 + 1, b3 - 1) * d3 * xs4
                                qc = q + min(a3 + 2, b3 - 1) * d3 * xs4
                                _max3(hvs, hxs, base[qa:qa + width], base[qb:qb + width],
                                      base[qc:qc + width], 1, here + a3 * d3,
                                      here + min(a3 + 1, b3 - 1) * d3,
                                      here + min(a3 + 2, b3 - 1) * d3, 0, table, like, INDEX)
                                for k3 in range(a3 + 3, b3):
                                    qk = q + k3 * d3 * xs4
                                    _more(hvs, hxs, base[qk:qk + width], 1, here + k3 * d3, 0,
                                          table, like, INDEX)
                            else:
                                for c in range(width):
                                    v, k = _scan(base, q + a3 * d3 * xs4 + c * xs1, d3 * xs4,
                                                 b3 - a3, table, like)
                                    hvs[c] = v
                                    if INDEX:
                                        hxs[c] = here + (a3 + k) * d3
                    else:
                        # the outputs whose windows the padding cuts, and any stride
                        # but 1 and 2, one at a time
                        fast = full_lo < full_hi and 1 <= step <= 2
                        l3 = 0
                        while l3 < l3n:
                            if fast and l3 == full_lo:  # the vectorised loop's, below
                                l3 = full_hi
                                continue
                            a3, b3 = a3s[l3], b3s[l3]
                            i3 = l3 * t3 - p3 + a3 * d3
                            v, k = _scan(base, src + i3 * xs4, d3 * xs4, b3 - a3, table, like)
                            hvr[l3] = v
                            if INDEX:
                                hxr[l3] = at0 + i3 + k * d3
                            l3 += 1
                        if fast:
                            span = (full_hi - full_lo - 1) * step + 1
                            i3 = full_lo * t3 - p3
                            q = src + i3 * xs4
                            here = at0 + i3
                            qa, qb, qc = q, q + kb * d3 * xs4, q + kc * d3 * xs4
                            hvs = hvr[full_lo:full_hi]
                            hxs = hxr[full_lo:full_hi] if INDEX else hxr[:0]
                            if step == 2 and d3 == 1 and t3 == 2:
                                # a row split in two, then read at stride 1
                                m = full_hi - full_lo
                                _deinterleave(evens, odds, base, q, 2 * (m - 1) + k3n)
                                _max3(hvs, hxs, _tap(evens, odds, 0, m), _tap(evens, odds, kb, m),
                                      _tap(evens, odds, kc, m), 1, here, here + kb, here + kc,
                                      t3, table, like, INDEX)
                                for k3 in range(3, k3n):
                                    _more(hvs, hxs, _tap(evens, odds, k3, m), 1, here + k3, t3,
                                          table, like, INDEX)
                            else:
                                if step == 1:
                                    _max3(hvs, hxs, base[qa:qa + span], base[qb:qb + span],
                                          base[qc:qc + span], 1, here, here + kb * d3,
                                          here + kc * d3, t3, table, like, INDEX)
                                else:
                                    _max3(hvs, hxs, base[qa:qa + span], base[qb:qb + span],
                                          base[qc:qc + span], 2, here, here + kb * d3,
                                          here + kc * d3, t3, table, like, INDEX)
                                for k3 in range(3, k3n):
                                    qk = q + k3 * d3 * xs4
                                    _more(hvs, hxs, base[qk:qk + span], step, here + k3 * d3,
                                          t3, table, like, INDEX)
            at_row = idx[o:o + row_len] if INDEX else idx[:0]
            if count > 1:
                sa, sb, sc = order[0], order[1], order[min(2, count - 1)]
                if not INDEX:
                    _rows3(row, ax, hv[sa], hv[sb], hv[sc], ax, ax, ax, False)
                    for r in range(3, count):
                        _rows_more(row, ax, hv[order[r]], ax, False)
                elif count <= 3:  # the indices straight into the int64 outputs
                    _rows3(row, at_row, hv[sa], hv[sb], hv[sc], hx[sa], hx[sb], hx[sc], True)
                else:
                    _rows3(row, ax, hv[sa], hv[sb], hv[sc], hx[sa], hx[sb], hx[sc], True)
                    for r in range(3, count):
                        _rows_more(row, ax, hv[order[r]], hx[order[r]], True)
            if INDEX and (count == 1 or count > 3):
                for j in range(row_len):
                    at_row[j] = ax[j]


    body.__qualname__ = f"max_pool_rows_body_{VARIANT}"  # a name per variant
    body = helper(body)

    @kernel(nrt=True, variant=VARIANT)
    def pool(part, parts, base, offset, xs, geo, batch, channels, table, like, ilike, out, idx):
        l3n = geo[1, 2]
        width = channels if CL else 1
        row_len = l3n * width
        slots = ((geo[2, 0] - 1) * geo[3, 0] + 1) * ((geo[2, 1] - 1) * geo[3, 1] + 1)
        tags = np.full(slots, -1, np.int64)
        body(part, parts, base, offset, xs, geo, batch, channels, table, like, ilike, out, idx,
             np.empty(l3n, np.int64), np.empty(l3n, np.int64),
             np.empty((slots, row_len), like.dtype),
             np.empty((slots if INDEX else 0, row_len), ilike.dtype),
             np.empty(row_len if INDEX else 0, ilike.dtype), tags, np.empty(slots, np.int64),
             np.empty(0 if CL else l3n + geo[2, 2], base.dtype),
             np.empty(0 if CL else l3n + geo[2, 2], base.dtype))

    pool.body = body
    return pool


#: Channels-first planes of at most this many elements are pooled by
#: :func:`max_pool_planes`, :data:`PLANE_BLOCK` side by side.
SMALL_PLANE = 4096
PLANE_BLOCK = 64
PLANE_BYTES = 1 << 17


@helper(inline=True)
def _planes_to_rows(rows, base, at, size, m):
    """rows[pos * m + p] = base[at + p * size + pos] for p < m, pos < size: *m*
    neighbouring planes of *size* elements side by side, a plane a column; whole
    16 x 16 tiles transposed in registers, the rest one element at a time."""
    g = 0
    while g + LANES <= m:
        done = transpose_tiles(rows, g, m, m, base, at + g * size, 1, size, size)
        for p in range(g, g + LANES):
            for pos in range(done, size):
                rows[pos * m + p] = base[at + p * size + pos]
        g += LANES
    for p in range(g, m):
        for pos in range(size):
            rows[pos * m + p] = base[at + p * size + pos]


@helper(inline=True)
def _rows_to_planes(out, at, rows, size, m):
    """out[at + p * size + pos] = rows[pos * m + p]: :func:`_planes_to_rows` undone."""
    g = 0
    while g + LANES <= m:
        done = transpose_tiles(out, at + g * size, 1, size, rows, g, m, m, size)
        for p in range(g, g + LANES):
            for pos in range(done, size):
                out[at + p * size + pos] = rows[pos * m + p]
        g += LANES
    for p in range(g, m):
        for pos in range(size):
            out[at + p * size + pos] = rows[pos * m + p]


@helper(inline=True)
def _block_in(b, block, planes, rows, base, offset, size, xs, plane_row, row):
    """Block *b*'s planes into *rows* (:func:`_planes_to_rows`), and *xs* the
    element strides (n, c, s1, s2, s3) of the block read as one channels-last image
    of its m planes (*plane_row* = S2 * S3 and *row* = S3 positions); (p0, m): its
    first plane and how many it has."""
    p0 = b * block
    m = min(block, planes - p0)
    _planes_to_rows(rows, base, offset + p0 * size, size, m)
    xs[0], xs[1], xs[2], xs[3], xs[4] = 0, 1, plane_row * m, row * m, m
    return p0, m


@helper(inline=True)
def _plane_block(size, itemsize, planes):
    """Planes per block: as many as fit :data:`PLANE_BYTES`, in whole tiles, one
    tile at least and :data:`PLANE_BLOCK` at most."""
    fit = PLANE_BYTES // (size * itemsize) // LANES * LANES
    return min(PLANE_BLOCK, max(LANES, fit), planes)


@kernel(nrt=True)
def avg_pool_small_planes(part, parts, base, offset, geo, pad_end, planes, include_pad, table,
                          like, out):
    """Mean pooling of small channels-first planes laid out as for
    :func:`max_pool_planes`, a block of planes at a time: transposed into one
    channels-last image, pooled by :func:`avg_pool_channels_last`'s loops across
    the planes, transposed back. The same sums in the same order, divided once:
    the bits of :func:`avg_pool_planes`, whose cost per row of outputs of each
    plane (~60 ns) the block's planes share."""
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    size = s1 * s2 * s3
    positions = geo[1, 0] * geo[1, 1] * geo[1, 2]
    block = _plane_block(size, base.itemsize, planes)
    lo, hi = part_range((planes + block - 1) // block, part, parts)
    rows_in = np.empty(size * block, base.dtype)
    rows_out = np.empty(positions * block, out.dtype)
    sums = np.empty(block, like.dtype)
    qs = np.empty(geo[2, 0] * geo[2, 1] * geo[2, 2], np.int64)
    xs = np.empty(5, np.int64)
    for b in range(lo, hi):
        p0, m = _block_in(b, block, planes, rows_in, base, offset, size, xs, s2 * s3, s3)
        _avg_pool_channels_last_body(0, 1, rows_in, 0, xs, geo, pad_end, 1, m, include_pad,
                                     table, like, rows_out, sums[:m], qs)
        _rows_to_planes(out, p0 * positions, rows_out, positions, m)


@factory
def max_pool_planes(with_index: bool):
    """Max pooling of small channels-first planes (C-contiguous planes of ``size``
    elements, plane k at ``offset + k * size``), a task per block of up to
    :data:`PLANE_BLOCK` planes: the block is transposed into channels-last rows
    (its planes side by side), pooled by the channels-last loops of
    :func:`max_pool_rows`, vectorised across the planes, and transposed back.

    The row kernel pays its bookkeeping (cache slots, spans, five loops) per row
    of outputs of each plane: ~75 ns a row, most of the time for images of a few
    dozen positions (a (16, 16, 4, 4) image 41 us, torch 9); here a block's
    planes share it. Same maxima and indices: the channels-last loops take the
    same first maximum in window order, and a plane's index is its own.
    """
    INDEX = with_index
    body = _max_pool_body(True, INDEX)

    @kernel(nrt=True, variant="index" if INDEX else "")
    def pool(part, parts, base, offset, geo, planes, table, like, ilike, out, idx):
        s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
        l3n = geo[1, 2]
        size = s1 * s2 * s3
        positions = geo[1, 0] * geo[1, 1] * l3n
        block = _plane_block(size, base.itemsize, planes)
        blocks = (planes + block - 1) // block
        lo, hi = part_range(blocks, part, parts)
        slots = ((geo[2, 0] - 1) * geo[3, 0] + 1) * ((geo[2, 1] - 1) * geo[3, 1] + 1)
        rows_in = np.empty(size * block, base.dtype)
        rows_out = np.empty(positions * block, out.dtype)
        rows_idx = np.empty(positions * block if INDEX else 0, np.int64)
        row_len = l3n * block
        a3s, b3s = np.empty(l3n, np.int64), np.empty(l3n, np.int64)
        hv = np.empty((slots, row_len), like.dtype)
        hx = np.empty((slots if INDEX else 0, row_len), ilike.dtype)
        ax = np.empty(row_len if INDEX else 0, ilike.dtype)
        tags = np.empty(slots, np.int64)
        order = np.empty(slots, np.int64)
        xs = np.empty(5, np.int64)
        no_split = np.empty(0, base.dtype)
        for b in range(lo, hi):
            p0, m = _block_in(b, block, planes, rows_in, base, offset, size, xs, s2 * s3, s3)
            tags[:] = -1  # the cache's tags name rows of the previous block too
            body(0, 1, rows_in, 0, xs, geo, 1, m, table, like, ilike, rows_out, rows_idx,
                 a3s, b3s, hv, hx, ax, tags, order, no_split, no_split)
            _rows_to_planes(out, p0 * positions, rows_out, positions, m)
            if INDEX:
                _rows_to_planes(idx, p0 * positions, rows_idx, positions, m)

    return pool


@helper(inline=True)
def _add4(sums, s0, s1, s2, s3, table):
    """``sums[c]`` plus four elements, one after the other (one loop, vectorised
    across the channels), each read in the sums' dtype (:func:`load`)."""
    for c in range(sums.size):
        sums[c] = ((((sums[c] + load(s0[c], table, sums)) + load(s1[c], table, sums))
                    + load(s2[c], table, sums)) + load(s3[c], table, sums))


@helper(inline=True)
def _mean4(row, s0, s1, s2, s3, scale, table):
    """``row[c]``: the sum of four elements from zero, one after the other, times
    *scale* (a power of two's reciprocal), in ``row``'s dtype."""
    zero = row.dtype.type(0)
    for c in range(row.size):
        row[c] = (((((zero + load(s0[c], table, row)) + load(s1[c], table, row))
                    + load(s2[c], table, row)) + load(s3[c], table, row)) * scale)


@helper(inline=True)
def _mean4_run(out, o, base, q0, q1, q2, q3, step, count, channels, scale, table, like):
    """:func:`_mean4` of *count* outputs of *channels* each from ``out[o]`` on, the
    windows' four elements at q0..q3 for the first and *step* further on for each
    next one (without the views and the set-up of one output at a time), read in
    *like*'s dtype as :func:`_mean4` reads them in its row's."""
    zero = like.dtype.type(0)
    for r in range(count):
        d = o + r * channels
        e = r * step
        for c in range(channels):
            out[uint64(d + c)] = (((((zero + load(base[uint64(q0 + e + c)], table, like))
                                     + load(base[uint64(q1 + e + c)], table, like))
                                    + load(base[uint64(q2 + e + c)], table, like))
                                   + load(base[uint64(q3 + e + c)], table, like)) * scale)


@helper(inline=True)
def _add1(sums, s0, table):
    """``sums[c]`` plus one element."""
    for c in range(sums.size):
        sums[c] += load(s0[c], table, sums)


@kernel(nrt=True)
def avg_pool_channels_last(part, parts, base, offset, xs, geo, pad_end, batch, channels,
                           include_pad, table, like, out):
    """Mean pooling with channels last, a task per row of outputs (n, l1, l2):
    ``out`` C-contiguous (N, L1, L2, L3, C), the sums in ``like``'s dtype (float16
    bits read through the float32 *table*, as :func:`avg_pool_planes`). Each
    output's C sums take the window's elements in window order, four of them per
    loop across the channels (:func:`_add4`: the same additions in the same order
    as one at a time), and are divided once (multiplied by the reciprocal of a
    power of two, exact)."""
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    _avg_pool_channels_last_body(part, parts, base, offset, xs, geo, pad_end, batch, channels,
                                 include_pad, table, like, out, np.empty(channels, like.dtype),
                                 np.empty(k1n * k2n * k3n, np.int64))


@helper
def _avg_pool_channels_last_body(part, parts, base, offset, xs, geo, pad_end, batch, channels,
                                 include_pad, table, like, out, sums, qs):
    """:func:`avg_pool_channels_last`' loops, without reference counting (as
    :func:`_avg_pool_planes_body`), on its scratch: an output's C sums, a window's
    elements in window order (qs)."""
    s1, s2, s3 = geo[0, 0], geo[0, 1], geo[0, 2]
    l1n, l2n, l3n = geo[1, 0], geo[1, 1], geo[1, 2]
    k1n, k2n, k3n = geo[2, 0], geo[2, 1], geo[2, 2]
    d1, d2, d3 = geo[3, 0], geo[3, 1], geo[3, 2]
    t1, t2, t3 = geo[4, 0], geo[4, 1], geo[4, 2]
    p1, p2, p3 = geo[5, 0], geo[5, 1], geo[5, 2]
    xs0, xs1, xs2, xs3, xs4 = xs[0], xs[1], xs[2], xs[3], xs[4]
    task_lo, task_hi = part_range(batch * l1n * l2n, part, parts)
    for t in range(task_lo, task_hi):
        n = t // (l1n * l2n)
        l1 = (t // l2n) % l1n
        l2 = t % l2n
        xo = offset + n * xs0
        a1, b1 = _span(l1, t1, p1, s1, k1n, d1)
        a2, b2 = _span(l2, t2, p2, s2, k2n, d2)
        if include_pad:
            c12 = (_padded_count(l1, t1, p1, pad_end[0], s1, k1n, d1)
                   * _padded_count(l2, t2, p2, pad_end[1], s2, k2n, d2))
        else:
            c12 = (b1 - a1) * (b2 - a2)
        # the positions whose window lies inside along dimension 3, when their window
        # has four elements and a power of two's count: one loop over their outputs
        # (no set-up per output: (1, 256, 256, 16) float32 2x2 stride 2, 286 -> 77 us CPU)
        w3a, w3b = 0, 0
        c3 = c12 * k3n
        if xs1 == 1 and (b1 - a1) * (b2 - a2) * k3n == 4 and c3 & (c3 - 1) == 0:
            lo_a, hi_a = _valid(s3, t3, -p3, l3n)
            lo_b, hi_b = _valid(s3, t3, (k3n - 1) * d3 - p3, l3n)
            w3a, w3b = max(lo_a, lo_b), min(hi_a, hi_b)
        if w3a < w3b:
            m = 0
            for k1 in range(a1, b1):
                i1 = l1 * t1 - p1 + k1 * d1
                for k2 in range(a2, b2):
                    i2 = l2 * t2 - p2 + k2 * d2
                    for k3 in range(k3n):
                        qs[m] = xo + i1 * xs2 + i2 * xs3 + (w3a * t3 - p3 + k3 * d3) * xs4
                        m += 1
            _mean4_run(out, (t * l3n + w3a) * channels, base, qs[0], qs[1], qs[2], qs[3],
                       t3 * xs4, w3b - w3a, channels, sums.dtype.type(1.0 / c3), table, out)
        for l3 in range(l3n):
            if w3a <= l3 < w3b:
                continue
            a3, b3 = _span(l3, t3, p3, s3, k3n, d3)
            m = 0
            for k1 in range(a1, b1):
                i1 = l1 * t1 - p1 + k1 * d1
                for k2 in range(a2, b2):
                    i2 = l2 * t2 - p2 + k2 * d2
                    for k3 in range(a3, b3):
                        qs[m] = xo + i1 * xs2 + i2 * xs3 + (l3 * t3 - p3 + k3 * d3) * xs4
                        m += 1
            if include_pad:
                count = c12 * _padded_count(l3, t3, p3, pad_end[2], s3, k3n, d3)
            else:
                count = c12 * (b3 - a3)
            o = (t * l3n + l3) * channels
            row = out[o:o + channels]
            # a power of two's reciprocal is exact: the product in the sums' dtype
            # is the quotient
            pow2 = count & (count - 1) == 0
            scale = sums.dtype.type(1.0 / count)
            if xs1 == 1 and m == 4 and pow2:  # the sums straight into the outputs
                q0, q1, q2, q3 = qs[0], qs[1], qs[2], qs[3]
                _mean4(row, base[q0:q0 + channels], base[q1:q1 + channels],
                       base[q2:q2 + channels], base[q3:q3 + channels], scale, table)
                continue
            sums[:] = 0
            if xs1 == 1:
                g = 0
                while g + 4 <= m:
                    q0, q1, q2, q3 = qs[g], qs[g + 1], qs[g + 2], qs[g + 3]
                    _add4(sums, base[q0:q0 + channels], base[q1:q1 + channels],
                          base[q2:q2 + channels], base[q3:q3 + channels], table)
                    g += 4
                for r in range(g, m):
                    q0 = qs[r]
                    _add1(sums, base[q0:q0 + channels], table)
            else:
                for g in range(m):
                    q0 = qs[g]
                    for c in range(channels):
                        sums[c] += load(base[q0 + c * xs1], table, sums)
            if pow2:
                for c in range(channels):
                    row[c] = sums[c] * scale
            else:
                for c in range(channels):
                    row[c] = sums[c] / count


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

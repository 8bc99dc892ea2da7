"""Gather and scatter kernels: take, take_along_axis, gather_nd, scatter.

The picture is ONNX Runtime's Gather (seed 004): the input is split into
``(outer, n, rest)`` — the dimensions before the axis, the axis, the dimensions
after it — and an index picks one of the ``n`` slices. ``rest`` is walked as
``(mid, inner)``: ``mid`` dimensions by unravelling, ``inner`` (the last one) by a
plain strided loop. Every offset is int64, so arrays of more than 2**31 elements
(broadcast views, say) index correctly.

Indices are always int64 here (the caller converts other dtypes once) and are
*not* trusted: each kernel resolves every index with the ``mode`` (raise, wrap,
clip, fill) and never reads or writes outside the array. An index that is out of
range under ``raise`` sets a flag of its task; the caller then finds the first
bad index and raises. Checking inside the kernel costs one compare per index
and saves the separate validation pass over the indices that a NumPy check would
make (for ``take_along_axis`` the indices are the largest input).

Gathers move bits: they run on the same-width integer view of any dtype (one
kernel per element width). ``scatter`` combines values, so it runs on int64,
float32 or float64 (the caller converts the rest), and it is partitioned by
*destination*: a task owns a set of output lanes ``(o, m, inner block)`` and applies
every update that lands in them, in the C order of the indices. No two tasks
write the same element, so there are no atomics, and every element sees its
updates in the same order whatever the number of threads: float sums are
bit-identical from run to run. When there are too few lanes to keep the cores
busy (a 1-D scatter), each lane is split further by destination range
(``parts``); every task then reads all the lane's updates and applies those that
fall in its range, which changes only the time, never the result.
"""
from __future__ import annotations

from numba import uint64

from .._jit import helper, kernel, part_range
from .common import block_offset, block_size

__all__ = ["MODE_RAISE", "MODE_WRAP", "MODE_CLIP", "MODE_FILL",
           "OP_ASSIGN", "OP_ADD", "OP_MUL", "OP_MAX", "OP_MIN",
           "take_rows", "take_along", "scatter_lanes", "segment_exclusive_products"]

MODE_RAISE, MODE_WRAP, MODE_CLIP, MODE_FILL = 0, 1, 2, 3
#: take_along_axis blocks of fewer inner lanes than this gather lane by lane along
#: the axis instead of row by row (a call per row of 4 lanes cost 55 ns: (16K, 4)
#: float32 along axis 0 took 0.90 ms against torch's 0.056)
FEW_LANES = 16
OP_ASSIGN, OP_ADD, OP_MUL, OP_MAX, OP_MIN = 0, 1, 2, 3, 4


@helper(inline=True)
def _resolve(i, n, mode):
    """The position index *i* reads along an axis of *n* (> 0), or -1 for none.

    wrap: ``i mod n``; clip: clipped to ``[0, n-1]``; raise and fill: ``[-n, n)``
    counts from the end, anything else is -1 (an error or the fill value).
    """
    if mode == MODE_WRAP:
        return i % n
    if mode == MODE_CLIP:
        return 0 if i < 0 else (n - 1 if i >= n else i)
    if i < 0:
        i += n
    return i if 0 <= i < n else -1


# ------------------------------------------------------------------------- take
#
# Array positions are converted to uint64 where they are used: Numba checks
# every signed index for a negative value (Python's wrap-around), which stops
# LLVM from vectorising the loops (a 1024-element row copy ran 6x slower).
# Every position here is >= 0 by construction.


@helper
def _copy_row(out, dst, base, src, mid_shape, mid_strides, inner, inner_stride):
    """out[dst : dst + mids*inner] = the (mid, inner) block of base at src."""
    mids = block_size(mid_shape)
    for mm in range(mids):
        s = src + block_offset(mm, mid_shape, mid_strides)
        d = dst + mm * inner
        if inner_stride == 1:
            for k in range(inner):
                out[uint64(d + k)] = base[uint64(s + k)]
        else:
            for k in range(inner):
                out[uint64(d + k)] = base[uint64(s + k * inner_stride)]


@helper(inline=True)
def _copy_four_rows(out, dst, base, s0, s1, s2, s3, inner):
    """out[dst : dst + 4*inner] = four contiguous rows of base, at s0..s3.

    Four source streams in one loop keep more memory requests in flight than
    one row after another (measured on rows of 4 KiB: 3.4 ms against 4.1 for
    pairs and 4.6 for single rows)."""
    for k in range(inner):
        out[uint64(dst + k)] = base[uint64(s0 + k)]
        out[uint64(dst + inner + k)] = base[uint64(s1 + k)]
        out[uint64(dst + 2 * inner + k)] = base[uint64(s2 + k)]
        out[uint64(dst + 3 * inner + k)] = base[uint64(s3 + k)]


@kernel
def take_rows(part, parts, base, offset, outer_shape, outer_strides, idx, idx_outer, m, n, n_shape, n_strides,
              mid_shape, mid_strides, inner, inner_stride, jchunk, mode, fill, bad, out):
    """``out[o, j, rest] = x[o, idx[o*idx_outer + j], rest]`` (``take`` and ``gather_nd``).

    The axis may be a block of dimensions (``n_shape``, ``n_strides``; ``n`` is its
    size) that a flat index unravels over: ``take(axis=None)`` of a view that is
    not one strided run, or ``gather_nd``'s indexed dimensions. ``idx_outer`` is 0
    when every outer slice uses the same indices (``take``), or ``m`` when each has
    its own (``gather_nd``'s batch dimensions). Tasks are ``(o, block of jchunk
    indices)``; ``bad[task]`` is set for an out-of-range index under ``raise``.
    """
    outer = block_size(outer_shape)
    rowlen = block_size(mid_shape) * inner
    chunks = (m + jchunk - 1) // jchunk
    one_dim = n_shape.size == 1
    n_stride = n_strides[0]
    rows_contiguous = one_dim and rowlen == inner and inner_stride == 1 and rowlen > 1
    task_lo, task_hi = part_range(outer * chunks, part, parts)
    for t in range(task_lo, task_hi):
        o = t // chunks
        c = t - o * chunks
        xo = offset + block_offset(o, outer_shape, outer_strides)
        j = c * jchunk
        j_end = min(m, (c + 1) * jchunk)
        if rowlen == 1 and one_dim:
            # single elements: one tight loop over the chunk (a check per index and
            # a branch per element kept 256K random gathers at 3.5 ns each, 3.3x
            # NumPy's np.take)
            if _gather_run(out, o * m + j, 1, base, xo, n_stride, 0, idx, o * idx_outer + j, 1,
                           j_end - j, n, mode, fill):
                bad[t] = 1
            continue
        if (one_dim and rowlen == inner and inner_stride != 1 and inner < FEW_LANES
                and _all_in_range(idx, o * idx_outer + j, 1, j_end - j, n)):
            # short strided rows (the transpose of a few long ones): lane by lane over
            # the chunk, no call per row (4 lanes of (4, 16K).T: 155 -> 27 us for 16K rows)
            first = o * idx_outer + j
            dst = (o * m + j) * rowlen
            for e in range(inner):
                src = xo + e * inner_stride
                for jj in range(j_end - j):
                    out[uint64(dst + jj * rowlen + e)] = base[uint64(src + idx[uint64(first + jj)] * n_stride)]
            continue
        while j < j_end:
            if rows_contiguous and j + 4 <= j_end:
                first = o * idx_outer + j
                i0 = _resolve(idx[uint64(first)], n, mode)
                i1 = _resolve(idx[uint64(first + 1)], n, mode)
                i2 = _resolve(idx[uint64(first + 2)], n, mode)
                i3 = _resolve(idx[uint64(first + 3)], n, mode)
                if min(min(i0, i1), min(i2, i3)) >= 0:
                    _copy_four_rows(out, (o * m + j) * rowlen, base, xo + i0 * n_stride,
                                    xo + i1 * n_stride, xo + i2 * n_stride, xo + i3 * n_stride,
                                    inner)
                    j += 4
                    continue
            i = _resolve(idx[uint64(o * idx_outer + j)], n, mode)
            dst = (o * m + j) * rowlen
            j += 1
            if i < 0:
                if mode == MODE_RAISE:
                    bad[t] = 1
                for e in range(rowlen):
                    out[uint64(dst + e)] = fill
                continue
            src = xo + (i * n_stride if one_dim else block_offset(i, n_shape, n_strides))
            if rowlen == 1:
                out[uint64(dst)] = base[uint64(src)]
            else:
                _copy_row(out, dst, base, src, mid_shape, mid_strides, inner, inner_stride)


# -------------------------------------------------------------- take_along_axis


@helper
def _all_in_range(idx, isrc, istep, count, n):
    """Whether ``idx[isrc + k*istep]`` is in ``[0, n)`` for every k < count (a
    vectorised min/max; the loops after it then need no check per element)."""
    low = idx[uint64(isrc)]
    high = low
    if istep == 1:
        for k in range(count):
            v = idx[uint64(isrc + k)]
            low = min(low, v)
            high = max(high, v)
    else:
        for k in range(count):
            v = idx[uint64(isrc + k * istep)]
            low = min(low, v)
            high = max(high, v)
    return low >= 0 and high < n


@helper
def _gather_run(out, dst, dstep, base, src, n_stride, x_step, idx, isrc, istep, count, n, mode,
                fill):
    """``out[dst + k*dstep] = x[src + idx[isrc + k*istep] * n_stride + k*x_step]`` for k <
    count; returns the number of out-of-range indices under raise.

    A run is a block of inner lanes of one row, or (when inner == 1) a stretch of
    one lane along the axis. A run whose indices are all in ``[0, n)`` (checked
    first, vectorised) is gathered without a check per element; otherwise each
    index is resolved, and out-of-range ones read position 0 (valid: n > 0) whose
    value is then replaced.
    """
    if _all_in_range(idx, isrc, istep, count, n):
        if dstep == 1 and istep == 1 and x_step == 1:
            for k in range(count):  # the common case, unit steps spelled out for LLVM
                out[uint64(dst + k)] = base[uint64(src + idx[uint64(isrc + k)] * n_stride + k)]
        else:
            for k in range(count):
                i = idx[uint64(isrc + k * istep)]
                out[uint64(dst + k * dstep)] = base[uint64(src + i * n_stride + k * x_step)]
        return 0
    nbad = 0
    if mode == MODE_RAISE or mode == MODE_FILL:
        for k in range(count):
            i = idx[uint64(isrc + k * istep)]
            i = i + n if i < 0 else i
            ok = (i >= 0) & (i < n)
            v = base[uint64(src + (i if ok else 0) * n_stride + k * x_step)]
            out[uint64(dst + k * dstep)] = v if ok else fill
            nbad += not ok
    else:
        for k in range(count):
            i = _resolve(idx[uint64(isrc + k * istep)], n, mode)
            out[uint64(dst + k * dstep)] = base[uint64(src + i * n_stride + k * x_step)]
    return nbad if mode == MODE_RAISE else 0


@kernel
def take_along(part, parts, base, offset, outer_shape, x_outer_strides, i_outer_strides, n, x_n_stride,
               idx, i_offset, m, i_m_stride, mid_shape, x_mid_strides, i_mid_strides,
               inner, x_inner_stride, i_inner_stride, block, jchunk, mode, fill, bad, out):
    """``out[o, j, mm, k] = x[o, idx[o, j, mm, k], mm, k]`` (``take_along_axis``).

    ``out`` is C-contiguous ``(outer, m, mid, inner)``; ``x`` and ``idx`` are walked
    with their own strides over the same dimensions (0 where broadcast). Tasks
    are ``(o, mm, block of inner lanes, chunk of j)`` and run over j inside the
    block: the block's part of x (n rows of ``block`` elements) stays in cache
    for all of them, where whole rows would gather from n cache lines per output
    line (measured on (64, 512, 1024) float32, axis 1: 64-element blocks took
    half the time of whole rows).
    """
    outer = block_size(outer_shape)
    mids = block_size(mid_shape)
    kblocks = (inner + block - 1) // block
    chunks = (m + jchunk - 1) // jchunk
    per_o = mids * kblocks * chunks
    row = mids * inner
    task_lo, task_hi = part_range(outer * per_o, part, parts)
    for t in range(task_lo, task_hi):
        o = t // per_o
        r = t - o * per_o
        mm = r // (kblocks * chunks)
        r -= mm * (kblocks * chunks)
        kb = r // chunks
        c = r - kb * chunks
        k0 = kb * block
        xs = (offset + block_offset(o, outer_shape, x_outer_strides)
              + block_offset(mm, mid_shape, x_mid_strides) + k0 * x_inner_stride)
        isrc = (i_offset + block_offset(o, outer_shape, i_outer_strides)
                + block_offset(mm, mid_shape, i_mid_strides) + k0 * i_inner_stride)
        dst = o * m * row + mm * inner + k0
        j0 = c * jchunk
        j1 = min(m, j0 + jchunk)
        if inner == 1:  # one lane: a stretch along the axis
            nbad = _gather_run(out, dst + j0, 1, base, xs, x_n_stride, 0, idx,
                               isrc + j0 * i_m_stride, i_m_stride, j1 - j0, n, mode, fill)
        else:
            count = min(inner, k0 + block) - k0
            nbad = 0
            if count < FEW_LANES:  # each lane a stretch along the axis: no call per row
                for k in range(count):
                    nbad += _gather_run(out, dst + j0 * row + k, row, base,
                                        xs + k * x_inner_stride, x_n_stride, 0, idx,
                                        isrc + j0 * i_m_stride + k * i_inner_stride, i_m_stride,
                                        j1 - j0, n, mode, fill)
            else:
                for j in range(j0, j1):
                    nbad += _gather_run(out, dst + j * row, 1, base, xs, x_n_stride,
                                        x_inner_stride, idx, isrc + j * i_m_stride,
                                        i_inner_stride, count, n, mode, fill)
        if nbad:
            bad[t] = 1


# ---------------------------------------------------------------------- scatter


@helper
def _rows_in_range(idx, isrc, row_step, istep, rows, count, n):
    """Whether ``idx[isrc + j*row_step + k*istep]`` is in ``[0, n)`` for every
    j < rows, k < count: one min/max over the rows of a lane."""
    low = idx[uint64(isrc)]
    high = low
    for j in range(rows):
        q = isrc + j * row_step
        for k in range(count):
            v = idx[uint64(q + k * istep)]
            low = min(low, v)
            high = max(high, v)
    return low >= 0 and high < n


@helper
def _scatter_run(out, dst, dstep, n_stride, idx, isrc, istep, upd, usrc, ustep, count, n, lo, hi,
                 op, mode):
    """Apply ``count`` updates (a block of inner lanes of one row, or a stretch of one
    lane when inner == 1) whose destination is in [lo, hi).

    Returns the number of out-of-range indices under ``raise``. max/min take an
    update that is greater (smaller) or NaN, so NaN propagates and ties keep the
    value already there.
    """
    nbad = 0
    if op <= OP_ADD and lo == 0 and hi == n and _all_in_range(idx, isrc, istep, count, n):
        # every index in range (negative ones too: _all_in_range resolves nothing, so
        # it says no for them): a loop without the per-element tests (an assignment
        # of (64, 1000) float32 along axis 1 took 88 us through them, torch 18)
        if op == OP_ADD:
            if dstep == 1 and istep == 1 and ustep == 1:  # the common case, spelled out
                for k in range(count):
                    out[uint64(dst + idx[uint64(isrc + k)] * n_stride + k)] += \
                        upd[uint64(usrc + k)]
            else:
                for k in range(count):
                    out[uint64(dst + idx[uint64(isrc + k * istep)] * n_stride + k * dstep)] += \
                        upd[uint64(usrc + k * ustep)]
        else:  # OP_ASSIGN: in order, so the last update of a destination stays
            for k in range(count):
                out[uint64(dst + idx[uint64(isrc + k * istep)] * n_stride + k * dstep)] = \
                    upd[uint64(usrc + k * ustep)]
        return 0
    for k in range(count):
        i = _resolve(idx[uint64(isrc + k * istep)], n, mode)
        if i < lo or i >= hi:
            if i < 0 and mode == MODE_RAISE:
                nbad += 1
            continue
        d = uint64(dst + i * n_stride + k * dstep)
        v = upd[uint64(usrc + k * ustep)]
        if op == OP_ADD:
            out[d] += v
        elif op == OP_MUL:
            out[d] *= v
        elif op == OP_MAX:
            if v > out[d] or v != v:
                out[d] = v
        elif op == OP_MIN:
            if v < out[d] or v != v:
                out[d] = v
        else:
            out[d] = v
    return nbad


@kernel
def scatter_lanes(part, parts, out, outer_shape, o_outer_strides, i_outer_strides, u_outer_strides,
                  n, o_n_stride, idx, i_offset, m, i_m_stride, upd, u_offset, u_m_stride,
                  mid_shape, o_mid_strides, i_mid_strides, u_mid_strides,
                  inner, o_inner_stride, i_inner_stride, u_inner_stride,
                  block, dest_parts, op, mode, bad):
    """``out[o, idx[o, j, mm, k], mm, k] (op)= upd[o, j, mm, k]`` for j in order.

    Tasks are ``(o, mm, block of inner lanes, destination part)``: each owns its
    output lanes (see the module docstring), so the result does not depend on
    the number of threads or of destination parts.
    """
    outer = block_size(outer_shape)
    mids = block_size(mid_shape)
    kblocks = (inner + block - 1) // block
    t0, t1 = part_range(outer * mids * kblocks * dest_parts, part, parts)
    for t in range(t0, t1):
        lane = t // dest_parts
        p = t - lane * dest_parts
        lo = p * n // dest_parts
        hi = (p + 1) * n // dest_parts
        o = lane // (mids * kblocks)
        r = lane - o * (mids * kblocks)
        mm = r // kblocks
        kb = r - mm * kblocks
        k0 = kb * block
        oo = (block_offset(o, outer_shape, o_outer_strides)
              + block_offset(mm, mid_shape, o_mid_strides) + k0 * o_inner_stride)
        io = (i_offset + block_offset(o, outer_shape, i_outer_strides)
              + block_offset(mm, mid_shape, i_mid_strides) + k0 * i_inner_stride)
        uo = (u_offset + block_offset(o, outer_shape, u_outer_strides)
              + block_offset(mm, mid_shape, u_mid_strides) + k0 * u_inner_stride)
        if inner == 1:  # one lane: all its updates in one run
            nbad = _scatter_run(out, oo, 0, o_n_stride, idx, io, i_m_stride, upd, uo, u_m_stride,
                                m, n, lo, hi, op, mode)
        else:
            count = min(inner, k0 + block) - k0
            nbad = 0
            if (count < FEW_LANES and op == OP_ADD and lo == 0 and hi == n
                    and _rows_in_range(idx, io, i_m_stride, i_inner_stride, m, count, n)):
                # many short rows, all in range: one loop, no call per row (a
                # (262144, 4) int32 scatter add along axis 0 spent 80 ns per update
                # in the calls, one row of four at a time)
                for j in range(m):
                    ib = io + j * i_m_stride
                    ub = uo + j * u_m_stride
                    for k in range(count):
                        out[uint64(oo + idx[uint64(ib + k * i_inner_stride)] * o_n_stride
                                   + k * o_inner_stride)] += upd[uint64(ub + k * u_inner_stride)]
            else:
                for j in range(m):
                    nbad += _scatter_run(out, oo, o_inner_stride, o_n_stride, idx,
                                         io + j * i_m_stride, i_inner_stride, upd,
                                         uo + j * u_m_stride, u_inner_stride, count, n, lo, hi,
                                         op, mode)
        if nbad:
            bad[t] = 1


# -------------------------------------------------------------------- gradients


@helper
def segment_exclusive_products(values, starts, one, out):
    """``out[p]`` = the product of the other values of p's segment, without division.

    Segment s is ``values[starts[s]:starts[s+1]]``; a prefix product forward and a
    suffix product backward, so zeros and infinities are exact (the gradient of
    ``scatter(..., reduce="mul")``; serial: a gradient of a product is rarely large).
    """
    for s in range(starts.size - 1):
        a, b = starts[s], starts[s + 1]
        acc = one
        for p in range(a, b):
            out[p] = acc
            acc = acc * values[p]
        acc = one
        for p in range(b - 1, a - 1, -1):
            out[p] = out[p] * acc
            acc = acc * values[p]

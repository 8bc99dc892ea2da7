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

from numba import njit, prange

from .._jit import helper, kernel
from .common import block_offset, block_size

__all__ = ["MODE_RAISE", "MODE_WRAP", "MODE_CLIP", "MODE_FILL",
           "OP_ASSIGN", "OP_ADD", "OP_MUL", "OP_MAX", "OP_MIN",
           "take_rows", "take_along", "scatter_lanes"]

MODE_RAISE, MODE_WRAP, MODE_CLIP, MODE_FILL = 0, 1, 2, 3
OP_ASSIGN, OP_ADD, OP_MUL, OP_MAX, OP_MIN = 0, 1, 2, 3, 4


@helper
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


@njit(cache=True)
def _copy_row(out, dst, base, src, mid_shape, mid_strides, inner, inner_stride):
    """out[dst : dst + mids*inner] = the (mid, inner) block of base at src."""
    mids = block_size(mid_shape)
    for mm in range(mids):
        s = src + block_offset(mm, mid_shape, mid_strides)
        d = dst + mm * inner
        if inner_stride == 1:
            for k in range(inner):
                out[d + k] = base[s + k]
        else:
            for k in range(inner):
                out[d + k] = base[s + k * inner_stride]


@kernel
def take_rows(base, offset, outer_shape, outer_strides, idx, idx_outer, m, n, n_shape, n_strides,
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
    for t in prange(outer * chunks):
        o = t // chunks
        c = t - o * chunks
        xo = offset + block_offset(o, outer_shape, outer_strides)
        for j in range(c * jchunk, min(m, (c + 1) * jchunk)):
            i = _resolve(idx[o * idx_outer + j], n, mode)
            dst = (o * m + j) * rowlen
            if i < 0:
                if mode == MODE_RAISE:
                    bad[t] = 1
                for e in range(rowlen):
                    out[dst + e] = fill
                continue
            src = xo + (i * n_stride if one_dim else block_offset(i, n_shape, n_strides))
            if rowlen == 1:
                out[dst] = base[src]
            else:
                _copy_row(out, dst, base, src, mid_shape, mid_strides, inner, inner_stride)


# -------------------------------------------------------------- take_along_axis


@njit(cache=True)
def _gather_row(out, dst, base, src, n_stride, x_inner_stride, idx, isrc, i_inner_stride,
                inner, n, mode, fill):
    """out[dst + k] = x[src + idx[isrc + k*is] * n_stride + k*xs]; returns the bad count.

    Out-of-range indices read position 0 (always valid: n > 0) and the value is
    then replaced, which keeps the common loop free of branches.
    """
    nbad = 0
    if mode == MODE_RAISE or mode == MODE_FILL:
        for k in range(inner):
            i = idx[isrc + k * i_inner_stride]
            i = i + n if i < 0 else i
            ok = 0 <= i < n
            v = base[src + (i if ok else 0) * n_stride + k * x_inner_stride]
            out[dst + k] = v if ok else fill
            nbad += not ok
    else:
        for k in range(inner):
            i = _resolve(idx[isrc + k * i_inner_stride], n, mode)
            out[dst + k] = base[src + i * n_stride + k * x_inner_stride]
    return nbad if mode == MODE_RAISE else 0


@kernel
def take_along(base, offset, outer_shape, x_outer_strides, i_outer_strides, n, x_n_stride,
               idx, i_offset, m, i_m_stride, mid_shape, x_mid_strides, i_mid_strides,
               inner, x_inner_stride, i_inner_stride, jchunk, mode, fill, bad, out):
    """``out[o, j, mm, k] = x[o, idx[o, j, mm, k], mm, k]`` (``take_along_axis``).

    ``out`` is C-contiguous ``(outer, m, mid, inner)``; ``x`` and ``idx`` are walked
    with their own strides over the same dimensions (0 where broadcast). Tasks
    are ``(o, block of jchunk positions along the axis)``.
    """
    outer = block_size(outer_shape)
    mids = block_size(mid_shape)
    chunks = (m + jchunk - 1) // jchunk
    for t in prange(outer * chunks):
        o = t // chunks
        c = t - o * chunks
        xo = offset + block_offset(o, outer_shape, x_outer_strides)
        io = i_offset + block_offset(o, outer_shape, i_outer_strides)
        nbad = 0
        for j in range(c * jchunk, min(m, (c + 1) * jchunk)):
            dst = (o * m + j) * mids * inner
            ij = io + j * i_m_stride
            for mm in range(mids):
                xs = xo + block_offset(mm, mid_shape, x_mid_strides)
                isrc = ij + block_offset(mm, mid_shape, i_mid_strides)
                nbad += _gather_row(out, dst + mm * inner, base, xs, x_n_stride, x_inner_stride,
                                    idx, isrc, i_inner_stride, inner, n, mode, fill)
        if nbad:
            bad[t] = 1


# ---------------------------------------------------------------------- scatter


@njit(cache=True)
def _scatter_row(out, dst, n_stride, o_inner_stride, idx, isrc, i_inner_stride, upd, usrc,
                 u_inner_stride, k0, k1, n, lo, hi, op, mode):
    """Apply one row of updates (lanes k0..k1) whose destination is in [lo, hi).

    Returns the number of out-of-range indices under ``raise``. max/min take an
    update that is greater (smaller) or NaN, so NaN propagates and ties keep the
    value already there.
    """
    nbad = 0
    for k in range(k0, k1):
        i = _resolve(idx[isrc + k * i_inner_stride], n, mode)
        if i < lo or i >= hi:
            if i < 0 and mode == MODE_RAISE:
                nbad += 1
            continue
        d = dst + i * n_stride + k * o_inner_stride
        v = upd[usrc + k * u_inner_stride]
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
def scatter_lanes(out, outer_shape, o_outer_strides, i_outer_strides, u_outer_strides,
                  n, o_n_stride, idx, i_offset, m, i_m_stride, upd, u_offset, u_m_stride,
                  mid_shape, o_mid_strides, i_mid_strides, u_mid_strides,
                  inner, o_inner_stride, i_inner_stride, u_inner_stride,
                  block, parts, op, mode, bad):
    """``out[o, idx[o, j, mm, k], mm, k] (op)= upd[o, j, mm, k]`` for j in order.

    Tasks are ``(o, mm, block of inner lanes, destination part)``: each owns its
    output lanes (see the module docstring), so the result does not depend on
    the number of threads or of parts.
    """
    outer = block_size(outer_shape)
    mids = block_size(mid_shape)
    kblocks = (inner + block - 1) // block
    for t in prange(outer * mids * kblocks * parts):
        lane = t // parts
        p = t - lane * parts
        lo = p * n // parts
        hi = (p + 1) * n // parts
        o = lane // (mids * kblocks)
        r = lane - o * (mids * kblocks)
        mm = r // kblocks
        kb = r - mm * kblocks
        oo = block_offset(o, outer_shape, o_outer_strides) + block_offset(mm, mid_shape, o_mid_strides)
        io = (i_offset + block_offset(o, outer_shape, i_outer_strides)
              + block_offset(mm, mid_shape, i_mid_strides))
        uo = (u_offset + block_offset(o, outer_shape, u_outer_strides)
              + block_offset(mm, mid_shape, u_mid_strides))
        k0 = kb * block
        k1 = min(inner, k0 + block)
        nbad = 0
        for j in range(m):
            nbad += _scatter_row(out, oo, o_n_stride, o_inner_stride, idx, io + j * i_m_stride,
                                 i_inner_stride, upd, uo + j * u_m_stride, u_inner_stride,
                                 k0, k1, n, lo, hi, op, mode)
        if nbad:
            bad[t] = 1

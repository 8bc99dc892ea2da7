"""Reduction kernels over a ``ReductionView`` (see ``axisops._layout``).

Work is split into tasks ``(outer o, inner block b, chunk c)``. A chunk is a fixed
run of ``chunk_len`` elements of the flattened reduced block; each task writes its
partial result to ``partial[o, c, i]`` and the caller combines the chunks in order.
The chunking depends only on the shape, never on the thread count, so every
result is bit-identical whatever the number of threads. Each output element is
computed by one task, in one fixed order.

Two loop orders (``row``):

* row order, for a reduced axis slower in memory than ``inner``: the task sweeps
  rows ``x[o, j, i0:i1]`` forward and keeps one running value per ``i`` (the
  loop LLVM vectorises across ``i``);
* lane order, otherwise: each output element scans its own reduced elements.

Arg-reductions compare integer *keys*: integers compare as themselves (or
bit-inverted for a minimum), floats as an order-preserving integer map of their
bit pattern in which every NaN is the greatest key and -0.0 equals +0.0. Integer
compares need no NaN branches, vectorise, and work for float16 too.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from .._jit import factory, helper, kernel
from .common import block_offset, block_size

KEY_INT_MAX, KEY_INT_MIN, KEY_FLOAT_MAX, KEY_FLOAT_MIN = 0, 1, 2, 3
OP_SUM, OP_PROD = 0, 1
#: elements per block when a lane-order arg-reduction looks for a new maximum
_ARG_BLOCK = 256


@factory
def value_kernel(acc_dtype: str, float16_input: bool):
    """Sum/product kernel accumulating in *acc_dtype*.

    float16 inputs are read as uint16 bit patterns through a 65536-entry float32
    table (Numba has no float16 arithmetic).
    """
    ACC = np.dtype(acc_dtype).type
    F16 = float16_input

    @kernel(reassociate=True)
    def reduce_values(base, offset, outer_shape, outer_strides, inner, inner_stride,
                      red_shape, red_strides, n, n_stride, chunk_len, inner_block,
                      row, op, f16_table, partial):
        outer = partial.shape[0]
        chunks = partial.shape[1]
        total = n * block_size(red_shape)
        blocks = (inner + inner_block - 1) // inner_block if row else inner
        for task in prange(outer * blocks * chunks):
            c = task % chunks
            b = (task // chunks) % blocks
            o = task // (chunks * blocks)
            p_outer = offset + block_offset(o, outer_shape, outer_strides)
            t_end = min((c + 1) * chunk_len, total)
            ident = ACC(1) if op == OP_PROD else ACC(0)
            if row:
                i0 = b * inner_block
                i1 = min(i0 + inner_block, inner)
                acc = partial[o, c]
                for i in range(i0, i1):
                    acc[i] = ident
                t = c * chunk_len
                while t < t_end:
                    r = t // n
                    j0 = t - r * n
                    j1 = min(n, j0 + (t_end - t))
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    for j in range(j0, j1):
                        p = p_red + j * n_stride
                        if op == OP_PROD:
                            for i in range(i0, i1):
                                if F16:
                                    acc[i] *= ACC(f16_table[base[p + i * inner_stride]])
                                else:
                                    acc[i] *= ACC(base[p + i * inner_stride])
                        else:
                            for i in range(i0, i1):
                                if F16:
                                    acc[i] += ACC(f16_table[base[p + i * inner_stride]])
                                else:
                                    acc[i] += ACC(base[p + i * inner_stride])
                    t += j1 - j0
            else:
                p_inner = p_outer + b * inner_stride
                s = ident
                t = c * chunk_len
                while t < t_end:
                    r = t // n
                    j0 = t - r * n
                    j1 = min(n, j0 + (t_end - t))
                    p = p_inner + block_offset(r, red_shape, red_strides)
                    if op == OP_PROD:
                        for j in range(j0, j1):
                            if F16:
                                s *= ACC(f16_table[base[p + j * n_stride]])
                            else:
                                s *= ACC(base[p + j * n_stride])
                    else:
                        for j in range(j0, j1):
                            if F16:
                                s += ACC(f16_table[base[p + j * n_stride]])
                            else:
                                s += ACC(base[p + j * n_stride])
                    t += j1 - j0
                partial[o, c, b] = s

    return reduce_values


@helper
def _key(b, kind, shift, mask, expo):
    """Order-preserving integer key of one element (see the module docstring)."""
    if kind == KEY_INT_MAX:
        return b
    if kind == KEY_INT_MIN:
        return ~b
    k = b ^ ((b >> shift) & mask)
    if k == -1:  # -0.0: equal to +0.0
        k = 0
    if kind == KEY_FLOAT_MIN:
        k = ~k
    if (b & mask) > expo:  # NaN, whatever its sign: the greatest key
        k = mask
    return k


@factory
def arg_kernel(key_kind: int, view_dtype: str):
    """First-index arg-maximum of the keys of a ``view_dtype`` (integer) buffer."""
    dt = np.dtype(view_dtype)
    KT = dt.type
    KIND = key_kind
    SHIFT = KT(dt.itemsize * 8 - 1)
    if dt.kind == "i":
        MASK = KT(np.iinfo(dt).max)
        EXPO = KT({1: 0, 2: 0x7C00, 4: 0x7F800000, 8: 0x7FF0000000000000}[dt.itemsize])
    else:
        MASK = KT(0)
        EXPO = KT(0)
    KMIN = KT(np.iinfo(dt).min)
    if KIND == KEY_FLOAT_MIN or KIND == KEY_FLOAT_MAX:
        KMIN = KT(-np.iinfo(dt).max - 1)
    elif KIND == KEY_INT_MIN:
        KMIN = ~KT(np.iinfo(dt).max)

    @kernel
    def reduce_arg(base, offset, outer_shape, outer_strides, inner, inner_stride,
                   red_shape, red_strides, n, n_stride, chunk_len, inner_block,
                   row, best_keys, best_index):
        outer = best_keys.shape[0]
        chunks = best_keys.shape[1]
        total = n * block_size(red_shape)
        blocks = (inner + inner_block - 1) // inner_block if row else inner
        for task in prange(outer * blocks * chunks):
            c = task % chunks
            b = (task // chunks) % blocks
            o = task // (chunks * blocks)
            p_outer = offset + block_offset(o, outer_shape, outer_strides)
            t_start = c * chunk_len
            t_end = min(t_start + chunk_len, total)
            if row:
                i0 = b * inner_block
                i1 = min(i0 + inner_block, inner)
                keys = best_keys[o, c]
                index = best_index[o, c]
                for i in range(i0, i1):
                    keys[i] = KMIN
                    index[i] = t_start
                t = t_start
                while t < t_end:
                    r = t // n
                    j0 = t - r * n
                    j1 = min(n, j0 + (t_end - t))
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    for j in range(j0, j1):
                        p = p_red + j * n_stride
                        tj = r * n + j
                        for i in range(i0, i1):
                            k = _key(base[p + i * inner_stride], KIND, SHIFT, MASK, EXPO)
                            better = k > keys[i]
                            keys[i] = k if better else keys[i]
                            index[i] = tj if better else index[i]
                    t += j1 - j0
            else:
                p_inner = p_outer + b * inner_stride
                best = KMIN
                best_at = t_start
                t = t_start
                while t < t_end:
                    r = t // n
                    j0 = t - r * n
                    j1 = min(n, j0 + (t_end - t))
                    p = p_inner + block_offset(r, red_shape, red_strides)
                    jb = j0
                    while jb < j1:
                        je = min(jb + _ARG_BLOCK, j1)
                        m = KMIN
                        for j in range(jb, je):
                            m = max(m, _key(base[p + j * n_stride], KIND, SHIFT, MASK, EXPO))
                        if m > best:
                            best = m
                            for j in range(jb, je):
                                if _key(base[p + j * n_stride], KIND, SHIFT, MASK, EXPO) == m:
                                    best_at = r * n + j
                                    break
                        jb = je
                    t += j1 - j0
                best_keys[o, c, b] = best
                best_index[o, c, b] = best_at

    return reduce_arg

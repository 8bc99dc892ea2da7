"""Explicit vector code on order keys (kernels.common.order_key): the extreme
scans (cummax/cummin) and the arg-reductions of four interleaved lanes, in LLVM
vector IR through Numba intrinsics (see :mod:`axisops.kernels.simd` for why
Numba's loops need them).

A running maximum is a chain through every element, which no loop vectoriser
takes apart; scalar, a step costs some ten instructions (the key, its compare,
the running key, two selects, two stores), 1 ns per element on an AMD EPYC
Zen 5. Here a block of ``LANES`` adjacent elements is scanned in one vector: the
prefix maximum of its keys in log2 steps (each a shift of the vector by whole
groups and a maximum), then the running key of the blocks before it on top. An
element takes over exactly where its key equals the running key after it (its
key is ``>=`` the running key before it: PyTorch's rule, the later of equal keys
wins), and each output's index is the last take at or before it: a second
prefix scan, of the takes' positions in the block, which carries the taken
element's bits along. Results are those of the scalar loop, bit for bit.

``group`` lanes scan side by side: 1 for a contiguous lane, 4 for four lanes
interleaved in memory (``x[4 * j + k]`` for lane k, a (N, 4) array along axis 0
or its transpose along axis 1), whose shifts move whole rows of four.

Numba caches a kernel on disk keyed by its own module's source: after a change
here, clear ``kernels/__pycache__`` of the kernels that call this.
"""
from __future__ import annotations

import functools

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .simd import LANES


def _data(context, builder, arrty, arr, at=None):
    """The data pointer of *arr*, or a pointer to its element *at* (an int64 value)."""
    data = context.make_array(arrty)(context, builder, arr).data
    return data if at is None else builder.gep(data, [at])


def _shifted(builder, v, fill, by):
    """*v* moved up by *by* lanes, its lowest *by* lanes taken from *fill* (down,
    its highest, for a negative *by*)."""
    mask = [i - by if 0 <= i - by < LANES else LANES + i for i in range(LANES)]
    return builder.shuffle_vector(v, fill, ir.Constant(ir.VectorType(ir.IntType(32), LANES), mask))


def _last_group(builder, v, group):
    """The last *group* lanes of *v*, repeated over the vector (the state a block
    hands to the next)."""
    mask = [LANES - group + i % group for i in range(LANES)]
    return builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), LANES), mask))


def _load_group(builder, ptr, elem, group):
    """The *group* elements at *ptr*, repeated over a vector of LANES."""
    small = ir.VectorType(elem, group)
    v = builder.load(builder.bitcast(ptr, small.as_pointer()), align=elem.width // 8)
    mask = [i % group for i in range(LANES)]
    return builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), LANES), mask))


def _store_group(builder, v, ptr, elem, group):
    """The last *group* lanes of *v* stored at *ptr*."""
    small = ir.VectorType(elem, group)
    mask = [LANES - group + i for i in range(group)]
    part = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), group), mask))
    builder.store(part, builder.bitcast(ptr, small.as_pointer()), align=elem.width // 8)


def _smax(builder, a, b):
    return builder.select(builder.icmp_signed(">", a, b), a, b)


def _order_keys(builder, x, fm, fo, xm, ex, top):
    """``order_key`` (kernels.common) of every lane of *x*, the masks and *top* vectors."""
    s = builder.ashr(x, ir.Constant(x.type, x.type.element.width - 1))
    k = builder.add(builder.xor(x, builder.and_(s, fm)), builder.and_(s, fo))
    k = builder.xor(k, xm)
    return builder.select(builder.icmp_signed(">", builder.and_(x, fm), ex), top, k)


def _splat(context, builder, value, ty, like, vec):
    """The Numba value *value* of type *ty*, cast to *like*, in every lane of *vec*."""
    value = context.cast(builder, value, ty, like)
    undef = ir.Constant(vec, ir.Undefined)
    one = builder.insert_element(undef, value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, undef, ir.Constant(ir.VectorType(ir.IntType(32), LANES), None))


def _store_rows(builder, v, ptr, at, apart, group):
    """Lane k of each of the LANES / group rows of *v* stored at ``ptr[at + k *
    apart:]`` (*at*, *apart* int64 values): the transpose of interleaved lanes."""
    rows = LANES // group
    small = ir.VectorType(v.type.element, rows)
    for k in range(group):
        part = builder.shuffle_vector(
            v, v, ir.Constant(ir.VectorType(ir.IntType(32), rows), [r * group + k for r in range(rows)]))
        at_k = builder.add(at, builder.mul(apart, ir.Constant(at.type, k)))
        builder.store(part, builder.bitcast(builder.gep(ptr, [at_k]), small.as_pointer()),
                      align=v.type.element.width // 8)


@functools.cache
def extreme_blocks(group: int, apart: bool = False, store: bool = True):
    """An intrinsic ``f(base, r, values, indices, w, wl, j0, blocks, keys, bits, index,
    fmask, fone, xmask, expo)``: *blocks* blocks of LANES elements of the 1-D
    ``base`` (signed integers: the bits of any dtype), the first at ``base[r]``,
    scanned as *group* interleaved lanes whose running (key, bits, index) are
    ``keys[:group]``, ``bits[:group]``, ``index[:group]`` (read, then updated);
    the running values' bits go to ``values[w:w + LANES * blocks]`` and their
    int64 indices (the first block's rows at *j0*) to ``indices`` at the same
    places, or, *apart*, lane k's to ``w + k * wl`` on (one run per lane: the
    outputs of four lanes in C order); without *store*, the state only (a chunk's
    total: ``values`` and ``indices`` are not touched). The masks are
    ``order_key``'s (kernels.common). Unchecked: every array is contiguous and
    long enough."""
    steps = []
    by = group
    while by < LANES:
        steps.append(by)
        by *= 2

    @intrinsic
    def scan_blocks(typingctx, base, r, values, indices, w, wl, j0, blocks, keys, bits, index,
                    fmask, fone, xmask, expo):
        ints = (r, w, wl, j0, blocks)
        masks = (fmask, fone, xmask, expo)
        if not (isinstance(base, types.Array) and base.ndim == 1
                and isinstance(base.dtype, types.Integer) and base.dtype.signed
                and all(isinstance(a, types.Array) and a.ndim == 1
                        for a in (values, indices, keys, bits, index))
                and values.dtype == base.dtype and bits.dtype == base.dtype
                and keys.dtype == base.dtype and indices.dtype == types.int64
                and index.dtype == types.int64
                and all(isinstance(a, types.Integer) for a in ints + masks)):
            return None
        sig = types.none(base, r, values, indices, w, wl, j0, blocks, keys, bits, index,
                         fmask, fone, xmask, expo)

        def codegen(context, builder, sig, args):
            width = sig.args[0].dtype.bitwidth
            elem = ir.IntType(width)
            vec = ir.VectorType(elem, LANES)
            i32, i64 = ir.IntType(32), ir.IntType(64)
            v32 = ir.VectorType(i32, LANES)
            v64 = ir.VectorType(i64, LANES)
            align = width // 8

            def int64(k):
                return context.cast(builder, args[k], sig.args[k], types.int64)

            def splat(k):  # mask argument k in every lane
                return _splat(context, builder, args[k], sig.args[k], sig.args[0].dtype, vec)

            r0, w0, wl, first, count = int64(1), int64(4), int64(5), int64(6), int64(7)
            fm, fo, xm, ex = splat(11), splat(12), splat(13), splat(14)
            lowest = ir.Constant(vec, -(1 << (width - 1)))
            top = ir.Constant(vec, (1 << (width - 1)) - 1)
            none = ir.Constant(v32, -1)
            rows = ir.Constant(v32, [i // group for i in range(LANES)])
            base_p = _data(context, builder, sig.args[0], args[0])
            values_p = _data(context, builder, sig.args[2], args[2])
            indices_p = _data(context, builder, sig.args[3], args[3])
            keys_p = _data(context, builder, sig.args[8], args[8])
            bits_p = _data(context, builder, sig.args[9], args[9])
            index_p = _data(context, builder, sig.args[10], args[10])
            # the running state, repeated over the vector; allocas that LLVM keeps in registers
            k_state = cgutils.alloca_once(builder, vec)
            v_state = cgutils.alloca_once(builder, vec)
            i_state = cgutils.alloca_once(builder, v64)
            builder.store(_load_group(builder, keys_p, elem, group), k_state)
            builder.store(_load_group(builder, bits_p, elem, group), v_state)
            builder.store(_load_group(builder, index_p, i64, group), i_state)
            per_block = ir.Constant(i64, LANES)
            with cgutils.for_range(builder, count) as loop:
                at = builder.mul(loop.index, per_block)
                x = builder.load(builder.bitcast(builder.gep(base_p, [builder.add(r0, at)]),
                                                 vec.as_pointer()), align=align)
                key = _order_keys(builder, x, fm, fo, xm, ex, top)
                run = key
                for by in steps:
                    run = _smax(builder, run, _shifted(builder, run, lowest, by))
                run = _smax(builder, run, builder.load(k_state))
                # the last take at or before each lane, with its bits
                pos = builder.select(builder.icmp_signed("==", key, run), rows, none)
                val = x
                for by in steps:
                    p2 = _shifted(builder, pos, none, by)
                    later = builder.icmp_signed(">", p2, pos)
                    pos = builder.select(later, p2, pos)
                    val = builder.select(later, _shifted(builder, val, val, by), val)
                taken = builder.icmp_signed(">=", pos, ir.Constant(v32, 0))
                row0 = builder.add(first, builder.mul(loop.index, ir.Constant(i64, LANES // group)))
                row0v = builder.shuffle_vector(
                    builder.insert_element(ir.Constant(v64, ir.Undefined), row0, ir.Constant(i32, 0)),
                    ir.Constant(v64, ir.Undefined), ir.Constant(v32, None))
                idx = builder.select(taken, builder.add(builder.sext(pos, v64), row0v),
                                     builder.load(i_state))
                val = builder.select(taken, val, builder.load(v_state))
                if not store:
                    pass
                elif apart:
                    out = builder.add(w0, builder.mul(loop.index, ir.Constant(i64, LANES // group)))
                    _store_rows(builder, val, values_p, out, wl, group)
                    _store_rows(builder, idx, indices_p, out, wl, group)
                else:
                    out = builder.add(w0, at)
                    builder.store(val, builder.bitcast(builder.gep(values_p, [out]),
                                                       vec.as_pointer()), align=align)
                    builder.store(idx, builder.bitcast(builder.gep(indices_p, [out]),
                                                       v64.as_pointer()), align=8)
                builder.store(_last_group(builder, run, group), k_state)
                builder.store(_last_group(builder, val, group), v_state)
                builder.store(_last_group(builder, idx, group), i_state)
            _store_group(builder, builder.load(k_state), keys_p, elem, group)
            _store_group(builder, builder.load(v_state), bits_p, elem, group)
            _store_group(builder, builder.load(i_state), index_p, i64, group)
            return context.get_dummy_value()
        return sig, codegen
    return scan_blocks


@intrinsic
def max_keys4(typingctx, base, r, blocks, fmask, fone, xmask, expo, top):
    """The greatest ``order_key`` (kernels.common; *top* a NaN's key) of each of four
    lanes interleaved in memory (lane k: ``base[r + 4 * j + k]``) over ``4 * blocks``
    rows, as a tuple of four: LANES elements per vector maximum, folded at the end
    (the loop vectoriser takes no interleaved lanes whose stride is not a constant)."""
    scalars = (r, blocks, fmask, fone, xmask, expo, top)
    if not (isinstance(base, types.Array) and base.ndim == 1
            and isinstance(base.dtype, types.Integer) and base.dtype.signed
            and all(isinstance(a, types.Integer) for a in scalars)):
        return None
    sig = types.UniTuple(base.dtype, 4)(base, r, blocks, fmask, fone, xmask, expo, top)

    def codegen(context, builder, sig, args):
        dtype = sig.args[0].dtype
        width = dtype.bitwidth
        elem = ir.IntType(width)
        vec = ir.VectorType(elem, LANES)
        fm, fo, xm, ex, top_ = (_splat(context, builder, args[k], sig.args[k], dtype, vec)
                                for k in range(3, 8))
        r0 = context.cast(builder, args[1], sig.args[1], types.int64)
        count = context.cast(builder, args[2], sig.args[2], types.int64)
        base_p = _data(context, builder, sig.args[0], args[0])
        acc = cgutils.alloca_once(builder, vec)
        builder.store(ir.Constant(vec, -(1 << (width - 1))), acc)
        with cgutils.for_range(builder, count) as loop:
            at = builder.add(r0, builder.mul(loop.index, ir.Constant(ir.IntType(64), LANES)))
            x = builder.load(builder.bitcast(builder.gep(base_p, [at]), vec.as_pointer()),
                             align=width // 8)
            builder.store(_smax(builder, builder.load(acc),
                                _order_keys(builder, x, fm, fo, xm, ex, top_)), acc)
        m = builder.load(acc)
        by = LANES // 2
        while by >= 4:  # fold the upper half of the rows onto the lower
            m = _smax(builder, m, _shifted(builder, m, m, -by))
            by //= 2
        items = [builder.extract_element(m, ir.Constant(ir.IntType(32), k)) for k in range(4)]
        return context.make_tuple(builder, sig.return_type, items)
    return sig, codegen

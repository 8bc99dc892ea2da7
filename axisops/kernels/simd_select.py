"""Explicit vector operations of the selection kernels (LLVM vector IR through
Numba intrinsics; see :mod:`axisops.kernels.simd` for why Numba's loops need
them).

:func:`compress_range` keeps the keys of a row of ``LANES`` that lie in a range,
packed, by LLVM's portable ``masked.compressstore``: one ``vpcompressd`` or two
``vpcompressq`` with AVX-512, conditional stores elsewhere (correct, slower).

Numba caches a kernel on disk keyed by its own module's source: after a change
here, clear ``kernels/__pycache__`` of the kernels that call these.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .simd import LANES, _is_block, _row_pointer


def _is_keys(arr) -> bool:
    return (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C"
            and arr.dtype in types.unsigned_domain)


def _splat(builder, value, ty, elem):
    """*value* (of Numba integer type *ty*) in every element of a ``<LANES x elem>``."""
    if ty.bitwidth > elem.width:
        value = builder.trunc(value, elem)
    elif ty.bitwidth < elem.width:
        value = builder.zext(value, elem)
    vector = ir.VectorType(elem, LANES)
    undef = ir.Constant(vector, ir.Undefined)
    value = builder.insert_element(undef, value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(value, undef,
                                  ir.Constant(ir.VectorType(ir.IntType(32), LANES), None))


@intrinsic
def compress_range(typingctx, src, j, dst, w, lo, span):
    """Of the ``LANES`` keys ``src[j:j + LANES]`` (unsigned), those with
    ``key - lo <= span`` (wrapping: ``lo <= key <= lo + span``) stored in order
    from ``dst[w]`` on; returns how many (int64). Unchecked: ``src`` must hold
    ``j + LANES`` keys, and ``dst`` room for as many as are kept."""
    if not (_is_keys(src) and _is_keys(dst) and src.dtype == dst.dtype
            and isinstance(j, types.Integer) and isinstance(w, types.Integer)
            and isinstance(lo, types.Integer) and isinstance(span, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        width = sig.args[0].dtype.bitwidth
        elem = ir.IntType(width)
        vector = ir.VectorType(elem, LANES)
        src_data = context.make_array(sig.args[0])(context, builder, args[0]).data
        dst_data = context.make_array(sig.args[2])(context, builder, args[2]).data
        at = context.cast(builder, args[1], sig.args[1], types.int64)
        v = builder.load(builder.bitcast(builder.gep(src_data, [at]), vector.as_pointer()),
                         align=width // 8)
        low = _splat(builder, args[4], sig.args[4], elem)
        span_ = _splat(builder, args[5], sig.args[5], elem)
        mask = builder.icmp_unsigned("<=", builder.sub(v, low), span_)
        out = builder.gep(dst_data, [context.cast(builder, args[3], sig.args[3], types.int64)])
        fnty = ir.FunctionType(ir.VoidType(), [vector, out.type, mask.type])
        fn = cgutils.get_or_insert_function(builder.module, fnty,
                                            f"llvm.masked.compressstore.v{LANES}i{width}")
        builder.call(fn, [v, out, mask])
        return builder.zext(builder.ctpop(builder.bitcast(mask, ir.IntType(LANES))),
                            ir.IntType(64))
    return types.int64(src, j, dst, w, lo, span), codegen


def _is_flat(arr) -> bool:
    return (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout in "CA"
            and isinstance(arr.dtype, types.Integer))


def _flat_data(context, builder, arrty, arr):
    return context.make_array(arrty)(context, builder, arr).data


@intrinsic
def load_row(typingctx, keys, j, src, at):
    """Row *j* of the block *keys* (C-contiguous (rows, LANES)) becomes the
    ``LANES`` adjacent elements ``src[at:at + LANES]`` (one vector load and store;
    *src* 1-D, its elements of the keys' width; unchecked)."""
    if not (_is_block(keys) and _is_flat(src) and src.dtype.bitwidth == keys.dtype.bitwidth
            and isinstance(j, types.Integer) and isinstance(at, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        width = sig.args[0].dtype.bitwidth
        vector = ir.VectorType(ir.IntType(width), LANES)
        dst = _row_pointer(context, builder, sig.args[0], args[0],
                           context.cast(builder, args[1], sig.args[1], types.int64), width)
        at_ = context.cast(builder, args[3], sig.args[3], types.int64)
        src_p = builder.gep(_flat_data(context, builder, sig.args[2], args[2]), [at_])
        v = builder.load(builder.bitcast(src_p, vector.as_pointer()), align=width // 8)
        builder.store(v, dst, align=width // 8)
        return context.get_dummy_value()
    return types.none(keys, j, src, at), codegen


@intrinsic
def gather_row(typingctx, keys, j, src, at, stride):
    """Row *j* of the block *keys* becomes ``src[at + lane * stride]`` for each of
    its ``LANES`` lanes (lane *lane* of the block is a run of *src* that starts
    *stride* after the one before; unchecked), loaded into one vector and stored
    as one."""
    if not (_is_block(keys) and _is_flat(src) and src.dtype.bitwidth == keys.dtype.bitwidth
            and isinstance(j, types.Integer) and isinstance(at, types.Integer)
            and isinstance(stride, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        width = sig.args[0].dtype.bitwidth
        elem = ir.IntType(width)
        vector = ir.VectorType(elem, LANES)
        i64 = ir.IntType(64)
        dst = _row_pointer(context, builder, sig.args[0], args[0],
                           context.cast(builder, args[1], sig.args[1], types.int64), width)
        data = _flat_data(context, builder, sig.args[2], args[2])
        at_ = context.cast(builder, args[3], sig.args[3], types.int64)
        step = context.cast(builder, args[4], sig.args[4], types.int64)
        # lane by lane into a vector (not llvm.masked.gather: its signature changed
        # between LLVM versions, and the upgrade of the old one tripped an assertion)
        v = ir.Constant(vector, ir.Undefined)
        for lane in range(LANES):
            offset = builder.add(at_, builder.mul(step, ir.Constant(i64, lane)))
            value = builder.load(builder.gep(data, [offset]), align=width // 8)
            v = builder.insert_element(v, value, ir.Constant(ir.IntType(32), lane))
        builder.store(v, dst, align=width // 8)
        return context.get_dummy_value()
    return types.none(keys, j, src, at, stride), codegen


def sort_rows_in_registers(pairs: Iterable[Any], size: int):
    """An intrinsic ``f(keys)`` that sorts the columns of the block *keys* (C
    (at least *size*, LANES), unsigned) by the comparators *pairs* ((a, b), a < b) of a network
    for *size* rows, with every row held in registers: the rows loaded once, the
    comparators as unsigned min/max of values, the rows stored once (a loop over
    the comparators loads and stores two rows each: 1 thread, AMD EPYC Zen 5, the
    selection of the median of (65536, 16) float32 took 1.70 ms that way, 1.09
    this way; (32768, 32) 1.85 and 1.02)."""
    pairs = [(int(a), int(b)) for a, b in pairs]

    @intrinsic
    def sort_rows(typingctx, keys):
        if not (_is_block(keys) and keys.dtype in types.unsigned_domain):
            return None

        def codegen(context, builder, sig, args):
            width = sig.args[0].dtype.bitwidth
            pointers = [_row_pointer(context, builder, sig.args[0], args[0],
                                     ir.Constant(ir.IntType(64), r), width) for r in range(size)]
            rows = [builder.load(p, align=width // 8) for p in pointers]
            for a, b in pairs:
                less = builder.icmp_unsigned("<", rows[b], rows[a])
                rows[a], rows[b] = (builder.select(less, rows[b], rows[a]),
                                    builder.select(less, rows[a], rows[b]))
            for p, row in zip(pointers, rows):
                builder.store(row, p, align=width // 8)
            return context.get_dummy_value()
        return types.none(keys), codegen
    return sort_rows


@intrinsic
def row_sum(typingctx, counts, h, start):
    """``counts[h, start:start + LANES].sum()`` of a C-contiguous 2-D int64 array
    (one vector load and a reduction; unchecked)."""
    if not (isinstance(counts, types.Array) and counts.ndim == 2 and counts.layout == "C"
            and counts.dtype == types.int64 and isinstance(h, types.Integer)
            and isinstance(start, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        vector = ir.VectorType(i64, LANES)
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        row_length = builder.extract_value(ary.shape, 1)
        at = builder.add(builder.mul(context.cast(builder, args[1], sig.args[1], types.int64),
                                     row_length),
                         context.cast(builder, args[2], sig.args[2], types.int64))
        v = builder.load(builder.bitcast(builder.gep(ary.data, [at]), vector.as_pointer()),
                         align=8)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [vector]),
                                            f"llvm.vector.reduce.add.v{LANES}i64")
        return builder.call(fn, [v])
    return types.int64(counts, h, start), codegen

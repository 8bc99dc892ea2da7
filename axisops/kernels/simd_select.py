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

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .simd import LANES


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

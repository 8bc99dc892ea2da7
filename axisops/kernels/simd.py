"""Explicit vector operations for the kernels: LLVM vector IR through Numba
intrinsics.

Numba runs LLVM's loop vectoriser but not its SLP vectoriser
(``NUMBA_SLP_VECTORIZE`` is 0 by default), and the loop vectoriser leaves a loop
of 16 lanes scalar when it would need a run-time check that two rows of one
array do not overlap: a sorting network written as ``for lane in range(16)``
over rows ``a`` and ``b`` of a block compiled to 16 scalar compare-and-moves per
comparator. Here a comparator is one ``<LANES x iN>`` load of each row, an
unsigned compare, two selects and two stores; LLVM lowers the vector to the
widest registers the CPU has (one zmm for 16 32-bit keys with AVX-512, two ymm
with AVX2), so the same code serves both.

Rows are rows of a C-contiguous 2-D block whose second dimension is ``LANES``
(the caller allocates it so: nothing is checked at run time).
"""
from __future__ import annotations

import functools

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .._jit import helper

#: Elements in a row of a block: the lanes sorted together.
LANES = 16


def _row_pointer(context, builder, arrty, arr, row, width):
    """A ``<LANES x iwidth>*`` to row *row* of the C-contiguous 2-D *arr*."""
    data = context.make_array(arrty)(context, builder, arr).data
    at = builder.mul(row, ir.Constant(row.type, LANES))
    vector = ir.VectorType(ir.IntType(width), LANES)
    return builder.bitcast(builder.gep(data, [at]), vector.as_pointer())


def _is_block(arr) -> bool:
    return (isinstance(arr, types.Array) and arr.ndim == 2 and arr.layout == "C"
            and isinstance(arr.dtype, types.Integer))


@intrinsic
def min_max_rows(typingctx, keys, a, b):
    """Rows *a* and *b* of the block *keys* become their lane-wise unsigned
    minimum and maximum (one comparator of a sorting network on every lane)."""
    if not (_is_block(keys) and isinstance(a, types.Integer) and isinstance(b, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        width = sig.args[0].dtype.bitwidth
        align = width // 8
        pa = _row_pointer(context, builder, sig.args[0], args[0],
                          context.cast(builder, args[1], sig.args[1], types.int64), width)
        pb = _row_pointer(context, builder, sig.args[0], args[0],
                          context.cast(builder, args[2], sig.args[2], types.int64), width)
        va = builder.load(pa, align=align)
        vb = builder.load(pb, align=align)
        less = builder.icmp_unsigned("<", vb, va)
        builder.store(builder.select(less, vb, va), pa, align=align)
        builder.store(builder.select(less, va, vb), pb, align=align)
        return context.get_dummy_value()
    return types.none(keys, a, b), codegen


@intrinsic
def min_max_rows_by(typingctx, keys, pos, a, b):
    """:func:`min_max_rows` ordering equal keys by *pos* (a block of the same
    shape, signed), which moves with its keys: the stable order where *pos*
    holds each key's position in its lane."""
    if not (_is_block(keys) and _is_block(pos) and isinstance(a, types.Integer)
            and isinstance(b, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        kw = sig.args[0].dtype.bitwidth
        pw = sig.args[1].dtype.bitwidth
        ra = context.cast(builder, args[2], sig.args[2], types.int64)
        rb = context.cast(builder, args[3], sig.args[3], types.int64)
        ka_p = _row_pointer(context, builder, sig.args[0], args[0], ra, kw)
        kb_p = _row_pointer(context, builder, sig.args[0], args[0], rb, kw)
        pa_p = _row_pointer(context, builder, sig.args[1], args[1], ra, pw)
        pb_p = _row_pointer(context, builder, sig.args[1], args[1], rb, pw)
        ka = builder.load(ka_p, align=kw // 8)
        kb = builder.load(kb_p, align=kw // 8)
        pa = builder.load(pa_p, align=pw // 8)
        pb = builder.load(pb_p, align=pw // 8)
        swap = builder.or_(builder.icmp_unsigned("<", kb, ka),
                           builder.and_(builder.icmp_unsigned("==", kb, ka),
                                        builder.icmp_signed("<", pb, pa)))
        builder.store(builder.select(swap, kb, ka), ka_p, align=kw // 8)
        builder.store(builder.select(swap, ka, kb), kb_p, align=kw // 8)
        builder.store(builder.select(swap, pb, pa), pa_p, align=pw // 8)
        builder.store(builder.select(swap, pa, pb), pb_p, align=pw // 8)
        return context.get_dummy_value()
    return types.none(keys, pos, a, b), codegen


def _is_flat(arr) -> bool:
    return isinstance(arr, types.Array) and arr.ndim == 1


@functools.cache
def transpose_tile(first: int = 0, count: int = LANES, optional: bool = False):
    """An intrinsic ``f(out, dst, dst_stride, src, at, src_stride)``: ``out[dst + c *
    dst_stride + r] = src[at + r * src_stride + c]`` for r < ``LANES`` and the
    columns c in [first, first + count): a square tile of ``LANES`` runs of
    ``LANES`` elements of *src* written transposed into runs of *out* (both 1-D,
    of one element width; unchecked). Sixteen vector loads, the transpose in four
    stages of two-vector shuffles (stage d swaps bit d of the row with bit d of
    the column; LLVM drops those whose rows are not stored), a vector store per
    column; the scalar loop moved one element at a time.

    Columns a multiple of 4 KiB apart share their cache set: storing all sixteen
    at once was 3x slower on an AMD EPYC Zen 5 than with the columns 64 bytes
    further apart, four at a time (and the tile loaded four times) 1.8x.

    With *optional*, ``f`` takes arrays of any two element widths and returns
    whether it moved the tile: False, doing nothing, where the widths differ (a
    kernel compiled for several ``what``s of its rows can call it in each and
    keep its scalar loop for the others); and arrays of any dimensions, indexed as
    their flat memory from their first element (the caller has checked that they
    are C-contiguous: Numba cannot reshape an array of unknown layout)."""
    @intrinsic
    def transpose(typingctx, out, dst, dst_stride, src, at, src_stride):
        ints = (dst, dst_stride, at, src_stride)
        numbers = (types.Integer, types.Float)
        flat = (lambda a: isinstance(a, types.Array)) if optional else _is_flat
        if not (flat(out) and flat(src) and isinstance(out.dtype, numbers)
                and isinstance(src.dtype, numbers)
                and all(isinstance(a, types.Integer) for a in ints)):
            return None
        same = out.dtype.bitwidth == src.dtype.bitwidth
        if not (same or optional):
            return None

        def codegen(context, builder, sig, args):
            if not same:
                return context.get_constant(types.boolean, False)
            width = sig.args[0].dtype.bitwidth
            elem = context.get_data_type(sig.args[0].dtype)
            vector = ir.VectorType(elem, LANES)
            i64 = ir.IntType(64)

            def int64(k):
                return context.cast(builder, args[k], sig.args[k], types.int64)

            def flat(k):
                data = context.make_array(sig.args[k])(context, builder, args[k]).data
                return builder.bitcast(data, elem.as_pointer())

            src_data, out_data = flat(3), flat(0)
            at_, step = int64(4), int64(5)
            rows = []
            for r in range(LANES):
                p = builder.gep(src_data, [builder.add(at_, builder.mul(step, ir.Constant(i64, r)))])
                rows.append(builder.load(builder.bitcast(p, vector.as_pointer()), align=width // 8))
            d = 1
            while d < LANES:
                masks = (ir.Constant(ir.VectorType(ir.IntType(32), LANES),
                                     [c if c & d == 0 else LANES + c - d for c in range(LANES)]),
                         ir.Constant(ir.VectorType(ir.IntType(32), LANES),
                                     [c + d if c & d == 0 else LANES + c for c in range(LANES)]))
                for i in range(LANES):
                    if i & d == 0:
                        a, b = rows[i], rows[i + d]
                        rows[i] = builder.shuffle_vector(a, b, masks[0])
                        rows[i + d] = builder.shuffle_vector(a, b, masks[1])
                d *= 2
            dst0, dstep = int64(1), int64(2)
            for c in range(first, first + count):
                p = builder.gep(out_data, [builder.add(dst0, builder.mul(dstep, ir.Constant(i64, c)))])
                builder.store(rows[c], builder.bitcast(p, vector.as_pointer()), align=width // 8)
            if optional:
                return context.get_constant(types.boolean, True)
            return context.get_dummy_value()
        result = types.boolean if optional else types.none
        return result(out, dst, dst_stride, src, at, src_stride), codegen
    return transpose


#: :func:`transpose_tile` four columns at a time (columns 4 KiB apart share a cache
#: set: see its note), optional: a kernel compiled for rows of another width than
#: its lanes keeps its scalar loop. Call all four for a whole tile.
TILE_QUARTERS = tuple(transpose_tile(first, 4, optional=True) for first in range(0, LANES, 4))
_tile0, _tile1, _tile2, _tile3 = TILE_QUARTERS


@helper(inline=True)
def transpose_tiles(out, dst, dst_step, dst_stride, src, at, src_step, src_stride, count):
    """Whole tiles of a run of ``count`` positions of ``LANES`` neighbouring lanes,
    transposed in registers: tile e (e = 0, ``LANES``, ...) is
    ``out[dst + e * dst_step + c * dst_stride + r] = src[at + e * src_step + r *
    src_stride + c]`` (:data:`TILE_QUARTERS`, four columns at a time). Returns how
    many positions it moved (a multiple of ``LANES``; 0 where the element widths
    differ): the caller's scalar loop does the rest. Lanes to rows: the positions
    run along ``out``'s rows (``dst_step`` 1, ``src_step == src_stride``); rows to
    lanes: along ``src``'s (``src_step`` 1, ``dst_step == dst_stride``)."""
    done = 0
    while done + LANES <= count and _tile0(out, dst + done * dst_step, dst_stride, src,
                                           at + done * src_step, src_stride):
        _tile1(out, dst + done * dst_step, dst_stride, src, at + done * src_step, src_stride)
        _tile2(out, dst + done * dst_step, dst_stride, src, at + done * src_step, src_stride)
        _tile3(out, dst + done * dst_step, dst_stride, src, at + done * src_step, src_stride)
        done += LANES
    return done


@helper(inline=True)
def c_rows(rows):
    """Whether the 2-D *rows* are C-contiguous (``flags`` would need Numba's runtime),
    as :data:`TILE_QUARTERS` index them."""
    item = rows.itemsize
    return rows.strides[1] == item and rows.strides[0] == rows.shape[1] * item


def _is_row(arr) -> bool:
    return (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C"
            and isinstance(arr.dtype, types.Integer))


@intrinsic
def pair_counts(typingctx, keys, rows, n, counts):
    """For each of *rows* lanes of *n* keys lying one after another in ``keys``
    (unsigned, lane r at ``r * n``; ``keys`` padded by ``LANES`` at least), and
    each key i of the lane: how many keys j of its lane have ``keys[j] < keys[i]``
    and how many ``keys[j] <= keys[i]``, into rows 0 and 1 of ``counts``
    (C-contiguous (2, keys.size), the keys' integer type: n must fit in it):
    ``LANES`` i at a time, each j one broadcast, two compares and two masked adds.
    A lane whose length is not a multiple of ``LANES`` spills into the next one's
    counts, which that lane then overwrites (the last into the padding): one loop
    over every lane of a chunk, no call per lane (for ``rank`` of short rows,
    ``kernels.rank.pair_rank_kernel``)."""
    if not (_is_row(keys) and isinstance(rows, types.Integer) and isinstance(n, types.Integer)
            and _is_block(counts) and counts.dtype.bitwidth == keys.dtype.bitwidth):
        return None

    def codegen(context, builder, sig, args):
        width = sig.args[0].dtype.bitwidth
        align = width // 8
        ity = ir.IntType(width)
        vty = ir.VectorType(ity, LANES)
        karr = context.make_array(sig.args[0])(context, builder, args[0])
        carr = context.make_array(sig.args[3])(context, builder, args[3])
        size = karr.nitems
        lanes = context.cast(builder, args[1], sig.args[1], types.int64)
        count = context.cast(builder, args[2], sig.args[2], types.int64)
        i64 = ir.IntType(64)
        ones = ir.Constant(vty, [1] * LANES)
        blocks = builder.udiv(builder.add(count, ir.Constant(i64, LANES - 1)),
                              ir.Constant(i64, LANES))
        with cgutils.for_range(builder, lanes) as lane:
            a = builder.mul(lane.index, count)
            with cgutils.for_range(builder, blocks) as outer:
                b0 = builder.add(a, builder.mul(outer.index, ir.Constant(i64, LANES)))
                vptr = builder.bitcast(builder.gep(karr.data, [b0]), vty.as_pointer())
                v = builder.load(vptr, align=align)
                acc = [cgutils.alloca_once_value(builder, ir.Constant(vty, None))
                       for _ in range(2)]
                with cgutils.for_range(builder, count) as inner:
                    at = builder.add(a, inner.index)
                    s = _splat(builder, builder.load(builder.gep(karr.data, [at])), ity)
                    for c, op in zip(acc, ("<", "<=")):  # a masked add
                        now = builder.load(c)
                        builder.store(builder.select(builder.icmp_unsigned(op, s, v),
                                                     builder.add(now, ones), now), c)
                for row, c in enumerate(acc):
                    at = builder.add(builder.mul(ir.Constant(i64, row), size), b0)
                    out = builder.bitcast(builder.gep(carr.data, [at]), vty.as_pointer())
                    builder.store(builder.load(c), out, align=align)
        return context.get_dummy_value()
    return types.none(keys, rows, n, counts), codegen


def _splat(builder, value, ity):
    """*value* (of *ity*) in every one of ``LANES`` lanes."""
    vty = ir.VectorType(ity, LANES)
    one = builder.insert_element(ir.Constant(vty, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(vty, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES))


@intrinsic
def pair_counts_columns(typingctx, keys, n, counts):
    """:func:`pair_counts` of ``LANES`` lanes side by side: lane w is column w of
    the first *n* rows of the block ``keys`` (C-contiguous (rows, ``LANES``),
    unsigned); row i of ``counts`` (C-contiguous (2 * rows, ``LANES``), the keys'
    integer type) gets, in each column, how many of the column's keys are below
    its key i, row ``rows + i`` how many are up to it: a vector load per j, two
    compares and two masked adds, no broadcast (lanes along an axis that is not
    the last, read a row of neighbours at a time: ``kernels.rank.pair_rank_columns``)."""
    if not (_is_block(keys) and isinstance(n, types.Integer) and _is_block(counts)
            and counts.dtype.bitwidth == keys.dtype.bitwidth):
        return None

    def codegen(context, builder, sig, args):
        width = sig.args[0].dtype.bitwidth
        align = width // 8
        vty = ir.VectorType(ir.IntType(width), LANES)
        karr = context.make_array(sig.args[0])(context, builder, args[0])
        carr = context.make_array(sig.args[2])(context, builder, args[2])
        rows = builder.extract_value(karr.shape, 0)
        count = context.cast(builder, args[1], sig.args[1], types.int64)
        i64 = ir.IntType(64)
        ones = ir.Constant(vty, [1] * LANES)

        def row(data, r):
            at = builder.mul(r, ir.Constant(i64, LANES))
            return builder.bitcast(builder.gep(data, [at]), vty.as_pointer())

        with cgutils.for_range(builder, count) as outer:
            v = builder.load(row(karr.data, outer.index), align=align)
            acc = [cgutils.alloca_once_value(builder, ir.Constant(vty, None)) for _ in range(2)]
            with cgutils.for_range(builder, count) as inner:
                s = builder.load(row(karr.data, inner.index), align=align)
                for c, op in zip(acc, ("<", "<=")):  # a masked add
                    now = builder.load(c)
                    builder.store(builder.select(builder.icmp_unsigned(op, s, v),
                                                 builder.add(now, ones), now), c)
            builder.store(builder.load(acc[0]), row(carr.data, outer.index), align=align)
            builder.store(builder.load(acc[1]), row(carr.data, builder.add(rows, outer.index)),
                          align=align)
        return context.get_dummy_value()
    return types.none(keys, n, counts), codegen


def _span(builder, lo, hi, body) -> None:
    """``body(j)`` for j in [lo, hi) (int64 values; none when hi <= lo)."""
    with cgutils.for_range(builder, builder.sub(hi, lo)) as loop:
        body(builder.add(lo, loop.index))


def _count_into(builder, acc, mask, ones) -> None:
    """``acc += 1`` in the lanes where *mask* is set (a masked add)."""
    now = builder.load(acc)
    builder.store(builder.select(mask, builder.add(now, ones), now), acc)


@functools.cache
def pair_counts_by(kind: str):
    """:func:`pair_counts` for the ranks that tell ties apart: an intrinsic
    ``f(keys, rows, n, counts)`` with the layout of :func:`pair_counts` that writes
    into row 0 of ``counts``, for each key i of a lane,

    * ``kind="ordinal"``: how many keys j of its lane come before it in the stable
      order (``keys[j] < keys[i]``, or equal with ``j < i``): its ordinal rank less
      one. The j of lower place than the ``LANES`` keys at hand count with ``<=``,
      those above with ``<``, the ``LANES`` between with both tests;
    * ``kind="dense"``: how many distinct keys of its lane are up to it: its dense
      rank. First row 1 gets, for each key, how many equal keys come before it in
      its lane; then only the first of each value (none before it) is counted, a
      branch per j (rarely not taken: few ties).
    """
    @intrinsic
    def counts_by(typingctx, keys, rows, n, counts):
        if not (_is_row(keys) and isinstance(rows, types.Integer)
                and isinstance(n, types.Integer) and _is_block(counts)
                and counts.dtype.bitwidth == keys.dtype.bitwidth):
            return None

        def codegen(context, builder, sig, args):
            width = sig.args[0].dtype.bitwidth
            align = width // 8
            ity = ir.IntType(width)
            vty = ir.VectorType(ity, LANES)
            i64 = ir.IntType(64)
            pty = ir.VectorType(i64, LANES)
            karr = context.make_array(sig.args[0])(context, builder, args[0])
            carr = context.make_array(sig.args[3])(context, builder, args[3])
            size = karr.nitems
            lanes = context.cast(builder, args[1], sig.args[1], types.int64)
            count = context.cast(builder, args[2], sig.args[2], types.int64)
            ones = ir.Constant(vty, [1] * LANES)
            zero = ir.Constant(ity, 0)
            iota = ir.Constant(pty, list(range(LANES)))
            sixteen = ir.Constant(i64, LANES)
            blocks = builder.udiv(builder.add(count, ir.Constant(i64, LANES - 1)), sixteen)

            def key(at):
                return builder.load(builder.gep(karr.data, [at]))

            def vector(data, at):
                return builder.bitcast(builder.gep(data, [at]), vty.as_pointer())

            def blockwise(a, out_row, body):
                """body(v, bo, acc) for each block of ``LANES`` keys of the lane at
                *a*, the counts stored into row *out_row* of ``counts``."""
                with cgutils.for_range(builder, blocks) as outer:
                    bo = builder.mul(outer.index, sixteen)
                    b0 = builder.add(a, bo)
                    v = builder.load(vector(karr.data, b0), align=align)
                    acc = cgutils.alloca_once_value(builder, ir.Constant(vty, None))
                    body(v, bo, acc)
                    at = builder.add(builder.mul(ir.Constant(i64, out_row), size), b0)
                    builder.store(builder.load(acc), vector(carr.data, at), align=align)

            def before(j, bo):
                """Lanes whose place (bo + lane) is above j."""
                return builder.icmp_unsigned("<", _splat(builder, j, i64),
                                             builder.add(_splat(builder, bo, i64), iota))

            with cgutils.for_range(builder, lanes) as lane:
                a = builder.mul(lane.index, count)

                def mixed_end(bo):
                    end = builder.add(bo, sixteen)
                    return builder.select(builder.icmp_unsigned("<", end, count), end, count)

                if kind == "ordinal":
                    def body(v, bo, acc):
                        def low(j):
                            s = _splat(builder, key(builder.add(a, j)), ity)
                            _count_into(builder, acc, builder.icmp_unsigned("<=", s, v), ones)

                        def between(j):
                            s = _splat(builder, key(builder.add(a, j)), ity)
                            m = builder.or_(builder.icmp_unsigned("<", s, v),
                                            builder.and_(builder.icmp_unsigned("==", s, v),
                                                         before(j, bo)))
                            _count_into(builder, acc, m, ones)

                        def high(j):
                            s = _splat(builder, key(builder.add(a, j)), ity)
                            _count_into(builder, acc, builder.icmp_unsigned("<", s, v), ones)

                        end = mixed_end(bo)
                        _span(builder, ir.Constant(i64, 0), bo, low)
                        _span(builder, bo, end, between)
                        _span(builder, end, count, high)
                    blockwise(a, 0, body)
                else:
                    def duplicates(v, bo, acc):
                        def low(j):
                            s = _splat(builder, key(builder.add(a, j)), ity)
                            _count_into(builder, acc, builder.icmp_unsigned("==", s, v), ones)

                        def between(j):
                            s = _splat(builder, key(builder.add(a, j)), ity)
                            m = builder.and_(builder.icmp_unsigned("==", s, v), before(j, bo))
                            _count_into(builder, acc, m, ones)

                        _span(builder, ir.Constant(i64, 0), bo, low)
                        _span(builder, bo, mixed_end(bo), between)

                    def distinct(v, bo, acc):
                        def each(j):
                            at = builder.add(a, j)
                            dup = builder.load(builder.gep(carr.data, [builder.add(size, at)]))
                            with cgutils.if_likely(builder, builder.icmp_unsigned("==", dup, zero)):
                                s = _splat(builder, key(at), ity)
                                _count_into(builder, acc, builder.icmp_unsigned("<=", s, v), ones)
                        _span(builder, ir.Constant(i64, 0), count, each)

                    blockwise(a, 1, duplicates)
                    blockwise(a, 0, distinct)
            return context.get_dummy_value()
        return types.none(keys, rows, n, counts), codegen
    return counts_by


@functools.cache
def pair_counts_columns_by(kind: str):
    """:func:`pair_counts_by` of lanes side by side, with the layout of
    :func:`pair_counts_columns`: row i of ``counts`` gets each column's ordinal
    rank less one (``kind="ordinal"``: the j < i counted with ``<=``, the others
    with ``<``) or dense rank (``kind="dense"``: rows ``rows + j`` first get how many
    equal keys come before key j, then only the keys with none are counted)."""
    @intrinsic
    def columns_by(typingctx, keys, n, counts):
        if not (_is_block(keys) and isinstance(n, types.Integer) and _is_block(counts)
                and counts.dtype.bitwidth == keys.dtype.bitwidth):
            return None

        def codegen(context, builder, sig, args):
            width = sig.args[0].dtype.bitwidth
            align = width // 8
            vty = ir.VectorType(ir.IntType(width), LANES)
            karr = context.make_array(sig.args[0])(context, builder, args[0])
            carr = context.make_array(sig.args[2])(context, builder, args[2])
            rows = builder.extract_value(karr.shape, 0)
            count = context.cast(builder, args[1], sig.args[1], types.int64)
            i64 = ir.IntType(64)
            ones = ir.Constant(vty, [1] * LANES)
            none = ir.Constant(vty, None)

            def row(data, r):
                at = builder.mul(r, ir.Constant(i64, LANES))
                return builder.bitcast(builder.gep(data, [at]), vty.as_pointer())

            def load(data, r):
                return builder.load(row(data, r), align=align)

            def each_i(out_row, body):
                with cgutils.for_range(builder, count) as outer:
                    i = outer.index
                    v = load(karr.data, i)
                    acc = cgutils.alloca_once_value(builder, none)
                    body(i, v, acc)
                    builder.store(builder.load(acc), row(carr.data, out_row(i)), align=align)

            def counting(op, v, acc):
                def body(j):
                    _count_into(builder, acc, builder.icmp_unsigned(op, load(karr.data, j), v),
                                ones)
                return body

            zero = ir.Constant(i64, 0)
            if kind == "ordinal":
                def ordinal(i, v, acc):
                    _span(builder, zero, i, counting("<=", v, acc))
                    _span(builder, i, count, counting("<", v, acc))
                each_i(lambda i: i, ordinal)
            else:
                def duplicates(i, v, acc):
                    _span(builder, zero, i, counting("==", v, acc))

                def distinct(i, v, acc):
                    def body(j):
                        first = builder.icmp_unsigned("==", load(carr.data, builder.add(rows, j)),
                                                      none)
                        m = builder.and_(builder.icmp_unsigned("<=", load(karr.data, j), v), first)
                        _count_into(builder, acc, m, ones)
                    _span(builder, zero, count, body)
                each_i(lambda i: builder.add(rows, i), duplicates)
                each_i(lambda i: i, distinct)
            return context.get_dummy_value()
        return types.none(keys, n, counts), codegen
    return columns_by

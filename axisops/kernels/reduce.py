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

Unit strides get their own loops over contiguous slices, which LLVM vectorises.

Arg-reductions compare integer *keys* (``common.order_key``): integers compare as
themselves (their sign bit flipped if unsigned, every bit flipped for a minimum),
floats as an order-preserving integer map of their bit pattern in which every NaN
is the greatest key and -0.0 equals +0.0. Integer compares need no NaN branches,
vectorise, and work for float16 too; one kernel per element width serves every
dtype and both directions.

What vectorises (read with ``inspect_asm`` on an AMD EPYC, AVX2, numba 0.68;
count ``ymm``/``zmm`` and the instructions named; compile into a fresh
``NUMBA_CACHE_DIR``, cached code cannot be inspected):

* A loop over a contiguous slice whose body is loads, integer max/min, compares
  and selects: one vector instruction per operation (``vpmaxsd``, ``vpminsd``,
  ``vpmaxud``, ``vpcmpgtd``) in the lane width of the data, unrolled four times.
* A reduction to a scalar (max, min, an OR of compares) vectorises; so does a
  reduction to a *position* (``first = min(first, q if hit else n)``) whose
  position is cast to the data's width (``same_type(q, zero)``, relative to a
  block): with Numba's 64-bit ``q`` it kept 64-bit lanes and ran 2-3x slower than
  testing a block with an OR and then looking element by element, and that in
  turn mispredicts at every element before the match (:func:`_find_bits`). AVX2
  has no 64-bit minimum: 64-bit data keep the tested blocks.
* A shift ``b >> k`` of a narrow integer does NOT stay narrow: Numba types the
  result as int64, and unless LLVM sees ``k`` as a constant in the same function
  every element is sign-extended to 64 bits, shifted (``vpsrlvq``) and packed back
  (``vpmovsxdq``, ``vshufps``): 2.7x slower for float32 keys. Write a sign mask as
  a select (``mask if b < 0 else 0``) or avoid the key (:func:`_float_run_extreme`).
* 64-bit integer max/min have no AVX2 instruction (a compare and a blend each):
  for float64 one reduction of keys beats three of raw bits
  (:func:`_block_range_keys`). AVX-512 has ``vpmaxsq``.
* On an AVX-512 Xeon (``benchmarks/vector_probe.py``, run on the GPU check's
  host) LLVM does use 512-bit registers: the lane-order arg kernel and both
  value kernels have ``zmm`` instructions; the row-order arg kernel and
  ``scan.scan_values`` stay on ``ymm``. There argmax of 1M float32 is 1.4x
  NumPy's hand-written AVX-512 loop, max 1.1x, the tall sums 0.5-0.6x.
* Float sums vectorise only with ``reassoc`` (:func:`_leaf_sum`); a float product
  along a row is *scaled* (see below): vector loops of multiplies in float64 and
  of integer operations on the bits, about 0.12 ns an element for float32 and
  0.3 for float64 (Zen 4, one thread; PyTorch's float32 product, which
  reassociates in float32, 0.05; the index-order chain 1.3).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64
from numba.extending import overload

from .._dtypes import key_masks
from .._jit import factory, helper, kernel, part_range
from .common import block_offset, block_size, load, order_key, same_type
from .simd import LANES
from .simd_keys import max_keys4

OP_SUM, OP_PROD = 0, 1
COMBINE_CASCADE, COMBINE_ORDERED, COMBINE_ANY = 0, 1, 2
#: what ``reduce_arg`` writes (see :func:`arg_kernel`)
KEYS_ONLY, WITH_INDEX, AS_VALUES = 0, 1, 2
#: elements searched at once when looking for the first position of a maximum
#: (64-bit elements: tested at once, see _find_bits_tested)
_FIND_BLOCK = 256
_TESTED_BLOCK = 128


@helper(inline=True)  # it returns views: it must take its caller's flags (see _jit)
def _geometry(geo):
    """A view's geometry packed in one int64 array, unpacked.

    ``geo`` is one kernel argument instead of eleven, which Numba would unbox one
    by one on every call: offset, inner, inner_stride, n, n_stride, chunk_len,
    inner_block, the number of outer dimensions ``no`` and of reduced ones ``nr``,
    then outer_shape, outer_strides (``no`` each), red_shape, red_strides (``nr``
    each).
    """
    no = geo[7]
    nr = geo[8]
    k = 9 + 2 * no
    return (geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6],
            geo[9:9 + no], geo[9 + no:k], geo[k:k + nr], geo[k + nr:k + 2 * nr])


@helper
def _task(task, blocks, chunks):
    """(outer o, inner block b, chunk c) of a task number; chunks vary fastest."""
    return task // (chunks * blocks), (task // chunks) % blocks, task % chunks


@helper
def _run(t, t_end, n):
    """Row r of the reduced block holding flat position t, and the part [j0, j1) of
    that row's n elements that lies before t_end."""
    r = t // n
    j0 = t - r * n
    return r, j0, min(n, j0 + (t_end - t))


# ----------------------------------------------------------------- sums and products
#
# Float sums are *cascaded*. The elements of each output are cut into leaves, and
# the leaf sums are combined by a binary counter per output: level k holds the sum
# of 2**k leaves, and pushing a leaf merges the full levels below it, as carrying
# does in binary addition; the partial last leaf and the levels are then added
# from the smallest up. A leaf is
#
# * in lane order, LEAF elements of one output's run (cut at multiples of LEAF),
#   summed by ``_leaf_sum``: a loop LLVM vectorises with 32 interleaved partial
#   sums (float32, AVX2), each over 16 elements, added in a tree;
# * in row order, LEAF_ROWS rows of outputs, added eight at a time in a tree of
#   three levels (vectorised across the outputs).
#
# An element so goes through some 16 + 5 (lane order) or 3 + 8 (row order)
# roundings in its leaf and 2 * log2(leaves) above it, where the sequential sum
# it replaces took one per element before it; chunks (``axisops.reduce``) are
# added in a pairwise tree. The shape alone fixes the order (and the compiled
# loop, within a leaf), never the number of threads.
#
# Float products are never reassociated: each output's product runs in index
# order, as NumPy's sequential product does, so it has NumPy's bits and is never
# less finite (partial products, interleaved or per chunk, overflow and underflow
# on their own: inf * 0). Products of several outputs run side by side instead.
# Integer sums and products wrap, so their order is free and LLVM vectorises
# them as it likes.

#: Elements of a lane-order leaf (see :func:`_leaf_sum`).
LEAF = 512
#: Rows of outputs in a row-order leaf (summed eight at a time, in a tree).
LEAF_ROWS = 64


@helper(inline=True)
def _row_update(acc, base, p, stride, op, table):
    """acc[i] (+ or *)= x[p + i * stride] for every i of the block *acc*."""
    m = acc.size
    if stride == 1:
        row = base[p:p + m]
        if op == OP_PROD:
            for i in range(m):
                acc[i] *= load(row[i], table, acc)
        else:
            for i in range(m):
                acc[i] += load(row[i], table, acc)
    elif op == OP_PROD:
        for i in range(m):
            acc[i] *= load(base[p + i * stride], table, acc)
    else:
        for i in range(m):
            acc[i] += load(base[p + i * stride], table, acc)


@helper(inline=True)
def _row_update8(acc, base, p, row_stride, stride, op, table):
    """_row_update for eight rows at once, one pass over *acc*; each lane still takes
    the rows in order (a product must, and for integers the order is free)."""
    m = acc.size
    if stride != 1:
        for k in range(8):
            _row_update(acc, base, p + k * row_stride, stride, op, table)
        return
    r0 = base[p:p + m]
    r1 = base[p + row_stride:p + row_stride + m]
    r2 = base[p + 2 * row_stride:p + 2 * row_stride + m]
    r3 = base[p + 3 * row_stride:p + 3 * row_stride + m]
    r4 = base[p + 4 * row_stride:p + 4 * row_stride + m]
    r5 = base[p + 5 * row_stride:p + 5 * row_stride + m]
    r6 = base[p + 6 * row_stride:p + 6 * row_stride + m]
    r7 = base[p + 7 * row_stride:p + 7 * row_stride + m]
    if op == OP_PROD:
        for i in range(m):
            a = acc[i] * load(r0[i], table, acc)
            a = a * load(r1[i], table, acc)
            a = a * load(r2[i], table, acc)
            a = a * load(r3[i], table, acc)
            a = a * load(r4[i], table, acc)
            a = a * load(r5[i], table, acc)
            a = a * load(r6[i], table, acc)
            acc[i] = a * load(r7[i], table, acc)
    else:
        for i in range(m):
            acc[i] += ((load(r0[i], table, acc) + load(r1[i], table, acc))
                       + (load(r2[i], table, acc) + load(r3[i], table, acc))) + (
                (load(r4[i], table, acc) + load(r5[i], table, acc))
                + (load(r6[i], table, acc) + load(r7[i], table, acc)))


@helper
def _lane_products8(acc, j0, j1, base, p, lane_stride, stride, table):
    """acc[k] *= x[p + k * lane_stride + j * stride] for j in [j0, j1) in order, k < 8:
    eight independent chains of multiplies, so that none waits for its last
    result (one chain runs at a third of the speed on these machines)."""
    a0 = acc[0]
    a1 = acc[1]
    a2 = acc[2]
    a3 = acc[3]
    a4 = acc[4]
    a5 = acc[5]
    a6 = acc[6]
    a7 = acc[7]
    q = p + j0 * stride
    for _ in range(j1 - j0):
        a0 *= load(base[q], table, acc)
        a1 *= load(base[q + lane_stride], table, acc)
        a2 *= load(base[q + 2 * lane_stride], table, acc)
        a3 *= load(base[q + 3 * lane_stride], table, acc)
        a4 *= load(base[q + 4 * lane_stride], table, acc)
        a5 *= load(base[q + 5 * lane_stride], table, acc)
        a6 *= load(base[q + 6 * lane_stride], table, acc)
        a7 *= load(base[q + 7 * lane_stride], table, acc)
        q += stride
    acc[0] = a0
    acc[1] = a1
    acc[2] = a2
    acc[3] = a3
    acc[4] = a4
    acc[5] = a5
    acc[6] = a6
    acc[7] = a7


@helper
def _lane_products4(acc, j0, j1, base, p, lane_stride, stride, table):
    """:func:`_lane_products8` for four outputs (a table of four rows: their chains
    side by side, where each ran alone)."""
    a0 = acc[0]
    a1 = acc[1]
    a2 = acc[2]
    a3 = acc[3]
    q = p + j0 * stride
    for _ in range(j1 - j0):
        a0 *= load(base[q], table, acc)
        a1 *= load(base[q + lane_stride], table, acc)
        a2 *= load(base[q + 2 * lane_stride], table, acc)
        a3 *= load(base[q + 3 * lane_stride], table, acc)
        q += stride
    acc[0] = a0
    acc[1] = a1
    acc[2] = a2
    acc[3] = a3


@helper
def _lane_update(s, j0, j1, base, p, stride, op, table, like):
    """s (+ or *)= x[p + j * stride] for j in [j0, j1), in order; returns s."""
    if stride == 1:
        seg = base[p + j0:p + j1]
        if op == OP_PROD:
            for k in range(j1 - j0):
                s *= load(seg[k], table, like)
        else:
            for k in range(j1 - j0):
                s += load(seg[k], table, like)
    elif op == OP_PROD:
        for j in range(j0, j1):
            s *= load(base[p + j * stride], table, like)
    else:
        for j in range(j0, j1):
            s += load(base[p + j * stride], table, like)
    return s


# Float products along rows in memory are *scaled* (COMBINE_ORDERED in lane order,
# runs of SCALED_MIN_RUN elements or more). A block of the run is multiplied in
# float64 into SCALED_SLOTS products: of eight float32 (or float16) elements each
# (pairs and quads of them exact in range: within 2**+-596), or of two float64
# ones. Each product is split by integer operations on its bits into a mantissa in
# [1, 2) with its sign and an exponent, the exponents summed apart; the mantissas
# are multiplied in a tree into SCALED_LANES lanes, each of which keeps a running
# mantissa (its exponent moved out every few blocks). A product of the fill is
# rounded correctly unless it left the normal range, and then it is a zero, a
# subnormal, an infinity or a NaN, which the split sees: such a block is taken
# element by element (:func:`_scaled_slowly`; also where an element is a zero, an
# infinity or a NaN). So no partial product overflows or underflows, the loops are
# plain vector loops without branches (the index-order chain of multiplies ran at
# 1.3 ns an element), and the result is rounded once from the mantissa and the
# exponent: it overflows or underflows only where the exact product does, a
# float32 product is the exact one correctly rounded but for about n * 2**-53 of
# relative error, a float64 one within n ulp as a sequential product. The order is
# fixed by the run's length: the same bits on every call and thread count. Runs
# that are shorter or strided, and reductions in row order (outputs side by side),
# multiply in index order as NumPy does (chains of several outputs interleaved).
SCALED_SLOTS = 256
SCALED_LANES = 64
SCALED_MIN_RUN = 1024
#: float64 scratch of a scaled product: the block (float32: pairs of the input
#: first), the mantissas, the lanes
SCALED_SCRATCH = 5 * SCALED_SLOTS + SCALED_LANES
_EXPONENT = 0x7FF  # float64's exponent field, its bias and its sign-and-mantissa bits
_BIAS = 1023
_KEEP = np.int64(-0x7FF0000000000001)
_ONE = np.int64(_BIAS << 52)


def _narrow(like):
    """Whether *like*'s float dtype is narrower than float64 (a compile-time constant)."""


@overload(_narrow)
def _narrow_impl(like):
    narrow = like.dtype.bitwidth < 64
    return lambda like: narrow


@helper
def _scaled_fill(part, table, like, block, count):
    """block[q] = the product in float64 of the elements q + k * SCALED_SLOTS of
    *part* (count of them, or fewer: the rest read as 1), k < 8 for a narrow *like*
    (pairs and quads exact in range), else k < 2."""
    S = SCALED_SLOTS
    half = 4 * S if _narrow(like) else S  # pairs of elements half a block apart
    if half > S and count == 2 * half:
        # the pairs, quads and eights below in one pass, in their order: the three
        # passes stored 14 KiB for a block of 8 KiB (a float32 product of 262144
        # elements 33 -> 26 us, AMD EPYC Zen 4; the conversions are what is left:
        # a vcvtps2pd on zmm registers takes two cycles there)
        for q in range(S):
            block[q] = (((_wide(part, q, table, like) * _wide(part, q + 4 * S, table, like))
                         * (_wide(part, q + 2 * S, table, like) * _wide(part, q + 6 * S, table, like)))
                        * ((_wide(part, q + S, table, like) * _wide(part, q + 5 * S, table, like))
                           * (_wide(part, q + 3 * S, table, like) * _wide(part, q + 7 * S, table, like))))
        return
    if count == 2 * half:
        for q in range(half):
            block[q] = (np.float64(load(part[q], table, like))
                        * np.float64(load(part[q + half], table, like)))
    else:  # the last block
        for q in range(half):
            block[q] = _padded(part, q, count, table, like) * _padded(part, q + half, count,
                                                                     table, like)
    if half > S:  # float32 quads, then eights
        for q in range(2 * S):
            block[q] = block[q] * block[q + 2 * S]
        for q in range(S):
            block[q] = block[q] * block[q + S]


@helper(inline=True)
def _wide(part, q, table, like):
    """Element q of *part* in float64."""
    return np.float64(load(part[q], table, like))


@helper(inline=True)
def _padded(part, q, count, table, like):
    """Element q of *part* in float64, or 1 past its *count* elements."""
    return np.float64(load(part[q], table, like)) if q < count else 1.0


@helper
def _scaled_split(block, mant):
    """mant[q] = the mantissa in [1, 2), with its sign, of each of the SCALED_SLOTS
    values of *block*; returns the sum of their exponents and whether one is a zero,
    a subnormal, an infinity or a NaN (then *mant* is not finished: see
    :func:`_scaled_slowly`). Sums in registers: a loop that updated an array per slot
    ran at 1.8 cycles a value, stores bound (AMD EPYC Zen 4). Apart from
    :func:`_lane_exponents`, so that this hot loop's trip count stays a constant."""
    bits = block[:SCALED_SLOTS].view(np.int64)
    mbits = mant.view(np.int64)
    e = 0
    odd = False
    for q in range(SCALED_SLOTS):
        b = bits[q]
        ef = (b >> 52) & _EXPONENT
        e += ef
        odd |= (ef == 0) | (ef == _EXPONENT)
        mbits[q] = (b & _KEEP) | _ONE
    return e - _BIAS * SCALED_SLOTS, odd


@helper
def _scaled_slowly(part, table, like, mant, state, i):
    """Output i's scaled product times the elements of *part*, one by one, and
    *mant* all ones: a block in which a product of the fill was a zero, a subnormal,
    an infinity or a NaN (a product that underflowed among them: each element is
    taken alone). A zero, an infinity or a NaN goes into output i's product of such
    values (``state[2, i]``)."""
    m = state[0, i]
    e = state[1, i]
    special = state[2, i]
    for q in range(part.size):
        v = np.float64(load(part[q], table, like))
        if v == 0 or v - v != 0:
            special *= v
        else:
            vm, ve = math.frexp(v)
            m, me = math.frexp(m * vm)
            e += ve + me
    state[0, i] = m
    state[1, i] = e
    state[2, i] = special
    for q in range(SCALED_SLOTS):
        mant[q] = 1.0


@helper
def _scaled_run(seg, table, like, scratch, state, i):
    """Output i's scaled product (``state[:, i]``: mantissa in [0.5, 1), exponent,
    product of the zeros, infinities and NaN) times the elements of the contiguous
    run *seg* (see above), read as *like*'s dtype; *scratch* holds SCALED_SCRATCH
    float64."""
    block = scratch[:4 * SCALED_SLOTS]
    mant = scratch[4 * SCALED_SLOTS:5 * SCALED_SLOTS]
    lanes = scratch[5 * SCALED_SLOTS:5 * SCALED_SLOTS + SCALED_LANES]
    lane_bits = lanes.view(np.int64)
    step = 8 * SCALED_SLOTS if _narrow(like) else 2 * SCALED_SLOTS
    for q in range(SCALED_LANES):
        lanes[q] = 1.0
    e = 0
    count = 0
    for b0 in range(0, seg.size, step):
        nb = min(step, seg.size - b0)
        part = seg[b0:b0 + nb]
        _scaled_fill(part, table, like, block, nb)
        eb, odd = _scaled_split(block, mant)
        if odd:
            _scaled_slowly(part, table, like, mant, state, i)
            eb = 0
        e += eb
        for q in range(SCALED_SLOTS // 2):  # a tree of mantissas, below 2**4
            mant[q] = mant[q] * mant[q + SCALED_SLOTS // 2]
        for q in range(SCALED_LANES):
            lanes[q] = lanes[q] * (mant[q] * mant[q + SCALED_LANES])
        count += 1
        if count % 8 == 0:  # the lanes stay below 2**33 in between
            e += _lane_exponents(lane_bits, SCALED_LANES)
    h = SCALED_LANES  # the lanes' product in a tree (64 of them within 2**2112: split twice)
    while h > 1:
        h //= 2
        for q in range(h):
            lanes[q] = lanes[q] * lanes[q + h]
        if h == 8:
            e += _lane_exponents(lane_bits, h)
    m, me = math.frexp(state[0, i] * lanes[0])
    state[0, i] = m
    state[1, i] += e + me


@helper
def _lane_exponents(lane_bits, count):
    """Move the exponents of the first *count* lanes (their bits) out: each keeps
    its mantissa in [1, 2); returns the sum of the exponents."""
    e = 0
    for q in range(count):
        b = lane_bits[q]
        e += ((b >> 52) & _EXPONENT) - _BIAS
        lane_bits[q] = (b & _KEEP) | _ONE
    return e


@helper
def _scaled_start(state, i):
    """Output i's scaled product set to 1 (0.5 * 2**1, nothing special)."""
    state[0, i] = 0.5
    state[1, i] = 1
    state[2, i] = 1


@helper
def _scaled_value(state, i):
    """Output i's scaled product rounded once, in float64 (exact for a float32
    result, which rounds once more when stored)."""
    e = min(max(state[1, i], -4000.0), 4000.0)
    v = math.ldexp(state[0, i], int(e))
    special = state[2, i]
    if special != 1:  # a product of zeros, infinities or NaN is never 1
        v = (1.0 if state[0, i] > 0 else -1.0) * special
    return v


@helper
def _push(levels, leaf, count):
    """Push the sums *leaf* (one per lane) as leaf number *count* of the cascade
    ``levels`` (levels, lanes); *leaf* is used up."""
    m = leaf.size
    k = 0
    while (count >> k) & 1:
        below = levels[k, :m]
        for i in range(m):
            leaf[i] = below[i] + leaf[i]
        k += 1
    top = levels[k, :m]
    for i in range(m):  # a loop: an array-to-array slice assignment compiles a shape
        top[i] = leaf[i]  # check that costs 1.4 s per kernel


@helper
def _cascade_total(levels, count, out, has_tail):
    """out[i] = the cascade's total: *out* holds the partial last leaf if *has_tail*
    (else nothing), to which the full levels are added from the smallest up."""
    m = out.size
    first = not has_tail
    for k in range(levels.shape[0]):
        if (count >> k) & 1:
            lev = levels[k, :m]
            if first:
                for i in range(m):
                    out[i] = lev[i]
                first = False
            else:
                for i in range(m):
                    out[i] = lev[i] + out[i]
    if first:
        out[:] = 0


@helper(reassociate=True)
def _leaf_sum(seg, table, like):
    """Sum of a contiguous leaf *seg* of at most LEAF elements, in *like*'s dtype.

    The one place a float sum is reassociated, and only within a leaf: LLVM keeps
    one partial sum per SIMD lane and unrolled copy (32 for float32 with AVX2),
    each over LEAF / 32 elements, and adds them in a tree. A sequential loop streams
    from memory fastest (an explicit tree of eight rows of a leaf reads 30-45% slower
    from DRAM, measured), and the error stays bounded by the leaf's length. The
    order is that of the compiled code, so the same on every call.
    """
    s = like.dtype.type(0)
    for k in range(seg.size):
        s += load(seg[k], table, like)
    return s


@helper(inline=True)
def _row_sum8(acc, base, p, row_stride, stride, table):
    """acc[i] += the sum, in a tree, of x[p + k * row_stride + i * stride], k < 8."""
    m = acc.size
    if stride != 1:
        for i in range(m):
            q = p + i * stride
            acc[i] += ((load(base[q], table, acc) + load(base[q + row_stride], table, acc))
                       + (load(base[q + 2 * row_stride], table, acc)
                          + load(base[q + 3 * row_stride], table, acc))) + (
                (load(base[q + 4 * row_stride], table, acc) + load(base[q + 5 * row_stride], table, acc))
                + (load(base[q + 6 * row_stride], table, acc) + load(base[q + 7 * row_stride], table, acc)))
        return
    _row_update8(acc, base, p, row_stride, stride, OP_SUM, table)


@factory
def value_kernel(row_order: bool, combine: int):
    """The sum/product kernel of one loop order and one way to combine: COMBINE_CASCADE
    (float sums, see above), COMBINE_ORDERED (float products: scaled along runs in
    memory, else in index order per output) or COMBINE_ANY (integers: any order gives the same result).

    Both are constants, as in :func:`arg_kernel`: each compiled kernel holds one loop
    order and one way only."""
    # one plain constant per branch: Numba prunes ``if CONSTANT:`` before compiling,
    # not ``if A and B:`` (the four loops in one kernel tripled its compile time)
    CASCADE = combine == COMBINE_CASCADE
    ROW_CASCADE = row_order and CASCADE
    LANE_CASCADE = not row_order and CASCADE
    ROW_PLAIN = row_order and not CASCADE
    ORDERED = combine == COMBINE_ORDERED
    LANE_ORDERED = not row_order and ORDERED

    @kernel(nrt=True, variant=f"{'row' if row_order else 'lane'}{combine}")
    def reduce_values(part, parts, base, geo, op, table, partial):
        """Sums (``op=OP_SUM``) or products of a ``ReductionView`` into ``partial``.

        ``geo`` is the view's geometry (see :func:`_geometry`); ``partial``
        (outer, chunks, inner) has the accumulator dtype; ``table`` is None, or the
        float16 -> float32 table when ``base`` holds float16 bits. The kernel
        allocates the cascade's scratch and runs :func:`body` on it.
        """
        inner, n_stride, chunk_len, inner_block = geo[1], geo[4], geo[5], geo[6]  # see _geometry
        width = max(1, min(inner, inner_block))
        depth = 2  # levels for every leaf count up to chunk_len (a leaf has one element or more)
        while CASCADE and (1 << depth) <= chunk_len:
            depth += 1
        scaled = LANE_ORDERED and n_stride == 1 and geo[3] >= SCALED_MIN_RUN
        body(part, parts, base, geo, op, table, partial,
             np.empty((depth if CASCADE else 0, width), partial.dtype),
             np.empty(LEAF if CASCADE and n_stride != 1 else 0, base.dtype),
             np.empty(SCALED_SCRATCH if scaled else 0, np.float64),
             np.empty((3, width if scaled else 0), np.float64))

    def body(part, parts, base, geo, op, table, partial, levels, gathered, scratch, state):
        """:func:`reduce_values`' loops, compiled without reference counting as
        the other kernels' bodies are (a view made with it costs two atomic
        operations; no time was measured to move here: a float32 sum of 64K
        elements in a row ran 3.3 us in the kernel before and after, AMD EPYC
        Zen 4). *levels* is the cascade's, *gathered* a strided leaf's copy,
        *scratch* and *state* a scaled product's (empty where runs are not scaled)."""
        (offset, inner, inner_stride, n, n_stride, chunk_len, inner_block,
         outer_shape, outer_strides, red_shape, red_strides) = _geometry(geo)
        outer = partial.shape[0]
        chunks = partial.shape[1]
        total = n * block_size(red_shape)
        blocks = (inner + inner_block - 1) // inner_block
        task_lo, task_hi = part_range(outer * blocks * chunks, part, parts)
        like = partial[0, 0, :0]  # the accumulator dtype, for _leaf_sum
        for task in range(task_lo, task_hi):
            o, b, c = _task(task, blocks, chunks)
            p_outer = offset + block_offset(o, outer_shape, outer_strides)
            t_end = min((c + 1) * chunk_len, total)
            i0 = b * inner_block
            block = partial[o, c, i0:min(i0 + inner_block, inner)]
            p_outer += i0 * inner_stride
            t = c * chunk_len
            if ROW_CASCADE:
                acc = block  # the leaf being summed; at the end, the last (partial) one
                acc[:] = 0
                count = 0
                fill = 0
                while t < t_end:
                    r, j0, j1 = _run(t, t_end, n)
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    j = j0
                    while j < j1:
                        je = min(j1, j + LEAF_ROWS - fill)
                        fill += je - j
                        while j + 8 <= je:
                            _row_sum8(acc, base, p_red + j * n_stride, n_stride, inner_stride, table)
                            j += 8
                        while j < je:
                            _row_update(acc, base, p_red + j * n_stride, inner_stride, OP_SUM, table)
                            j += 1
                        if fill == LEAF_ROWS:
                            _push(levels, acc, count)
                            count += 1
                            fill = 0
                            acc[:] = 0
                    t += j1 - j0
                _cascade_total(levels, count, block, fill > 0)
            elif LANE_CASCADE:
                # lane order: each output i of the block sums its own run of every row,
                # in leaves of LEAF elements (cut at multiples of LEAF along the run)
                count = 0
                if t_end - t <= min(n, LEAF) and n_stride == 1 and t % n == 0:
                    # one contiguous leaf per output: its sum is the result
                    p_red = p_outer + block_offset(t // n, red_shape, red_strides)
                    for i in range(block.size):
                        p = p_red + i * inner_stride
                        block[i] = _leaf_sum(base[p:p + t_end - t], table, like)
                    continue
                while t < t_end:
                    r, j0, j1 = _run(t, t_end, n)
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    after = count
                    for i in range(block.size):
                        p = p_red + i * inner_stride
                        k = count
                        ja = j0
                        while ja < j1:
                            jb = min(j1, (ja // LEAF + 1) * LEAF)
                            if n_stride == 1:
                                s = _leaf_sum(base[p + ja:p + jb], table, like)
                            else:  # gathered first, so that the leaf's loop vectorises
                                for j in range(ja, jb):
                                    gathered[j - ja] = base[p + j * n_stride]
                                s = _leaf_sum(gathered[:jb - ja], table, like)
                            # push s as leaf k of output i's cascade
                            lv = 0
                            while (k >> lv) & 1:
                                s = levels[lv, i] + s
                                lv += 1
                            levels[lv, i] = s
                            k += 1
                            ja = jb
                        after = k
                    count = after
                    t += j1 - j0
                _cascade_total(levels, count, block, False)
            elif ROW_PLAIN:
                block[:] = 1 if op == OP_PROD else 0
                while t < t_end:
                    r, j0, j1 = _run(t, t_end, n)
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    j = j0
                    while j + 8 <= j1:
                        _row_update8(block, base, p_red + j * n_stride, n_stride, inner_stride, op, table)
                        j += 8
                    while j < j1:
                        _row_update(block, base, p_red + j * n_stride, inner_stride, op, table)
                        j += 1
                    t += j1 - j0
            elif LANE_ORDERED and scratch.size > 0:  # scaled products of runs in memory
                for i in range(block.size):
                    _scaled_start(state, i)
                while t < t_end:
                    r, j0, j1 = _run(t, t_end, n)
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    for i in range(block.size):
                        p = p_red + i * inner_stride
                        _scaled_run(base[p + j0:p + j1], table, block, scratch, state, i)
                    t += j1 - j0
                for i in range(block.size):
                    block[i] = _scaled_value(state, i)
            else:
                block[:] = 1 if op == OP_PROD else 0
                while t < t_end:
                    r, j0, j1 = _run(t, t_end, n)
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    i = 0
                    if ORDERED:  # eight (or four) outputs' chains of multiplies side by side
                        while i + 8 <= block.size:
                            _lane_products8(block[i:i + 8], j0, j1, base, p_red + i * inner_stride,
                                            inner_stride, n_stride, table)
                            i += 8
                        if i + 4 <= block.size:
                            _lane_products4(block[i:i + 4], j0, j1, base, p_red + i * inner_stride,
                                            inner_stride, n_stride, table)
                            i += 4
                    while i < block.size:
                        block[i] = _lane_update(block[i], j0, j1, base, p_red + i * inner_stride,
                                                n_stride, op, table, block)
                        i += 1
                    t += j1 - j0

    body.__qualname__ = f"reduce_values_body_{'row' if row_order else 'lane'}{combine}"
    body = helper(body)
    return reduce_values


@njit(cache=True, nogil=True)
def pairwise_fold(part, out):
    """out[o, i] = the k sums part[o, :, i] added in a pairwise tree, as
    ``part[:, :h] + part[:, h:2 * h]`` (h = k // 2) halving k level by level would,
    an odd one out carried after the pairs (the same pairs, the same operand
    order): a folded sum's last step (``reduce._folded_sum_plan``) and the chunk
    sums' (``reduce._pairwise_chunks``) in one call instead of a NumPy add per
    level (six for four outputs: ~5 us)."""
    outer, k, inner = part.shape
    v = np.empty(k, part.dtype)
    for o in range(outer):
        for i in range(inner):
            for g in range(k):
                v[g] = part[o, g, i]
            m = k
            while m > 1:
                h = m // 2
                for g in range(h):
                    v[g] = v[g] + v[g + h]
                if m % 2:
                    v[h] = v[2 * h]
                m = h + m % 2
            out[o, i] = v[0]


# ------------------------------------------------------------------ arg-reductions
#
# One kernel per element width and loop order serves max, min, argmax and argmin
# of every dtype of that width: the elements are read as signed integers of their
# width and compared through ``order_key`` (kernels.common), whose masks are
# arguments: a float's order, an unsigned integer's (its sign bit flipped), a
# minimum's (every bit flipped). Keys are compared with ``>``, so the first of
# equal keys wins; every NaN is the greatest key. The masks are named as in
# ``order_key``: ``fmask`` (all bits but the sign for floats, else 0), ``fone``
# (1 for floats, else 0), ``xmask`` (the bits flipped), ``expo`` (the exponent
# bits of a float's infinity, else 0) and ``top`` (the greatest key).


@helper(inline=True)
def _row_arg(keys, index, base, p, stride, at, shift, fmask, fone, xmask, expo, top):
    """Running first arg-max per i of the keys of x[p + i * stride]; *at* is the row's index."""
    m = keys.size
    if stride == 1:
        row = base[p:p + m]
        for i in range(m):
            key = order_key(row[i], shift, fmask, fone, xmask, expo, top)
            better = key > keys[i]
            keys[i] = key if better else keys[i]
            index[i] = at if better else index[i]
    else:
        for i in range(m):
            key = order_key(base[p + i * stride], shift, fmask, fone, xmask, expo, top)
            better = key > keys[i]
            keys[i] = key if better else keys[i]
            index[i] = at if better else index[i]


@helper(inline=True)
def _row_arg4(keys, index, base, p, row_stride, stride, at, shift, fmask, fone, xmask, expo, top):
    """_row_arg for the four rows at, at+1, at+2, at+3: one pass over keys and index."""
    m = keys.size
    if stride != 1:
        for k in range(4):
            _row_arg(keys, index, base, p + k * row_stride, stride, at + k, shift, fmask, fone,
                     xmask, expo, top)
        return
    r0 = base[p:p + m]
    r1 = base[p + row_stride:p + row_stride + m]
    r2 = base[p + 2 * row_stride:p + 2 * row_stride + m]
    r3 = base[p + 3 * row_stride:p + 3 * row_stride + m]
    for i in range(m):
        best = keys[i]
        best_at = index[i]
        k = order_key(r0[i], shift, fmask, fone, xmask, expo, top)
        better = k > best
        best = k if better else best
        best_at = at if better else best_at
        k = order_key(r1[i], shift, fmask, fone, xmask, expo, top)
        better = k > best
        best = k if better else best
        best_at = at + 1 if better else best_at
        k = order_key(r2[i], shift, fmask, fone, xmask, expo, top)
        better = k > best
        best = k if better else best
        best_at = at + 2 if better else best_at
        k = order_key(r3[i], shift, fmask, fone, xmask, expo, top)
        better = k > best
        keys[i] = k if better else best
        index[i] = at + 3 if better else best_at


@helper
def _run_max_key(base, p, stride, j0, j1, lowest, shift, fmask, fone, xmask, expo, top):
    """Greatest key of x[p + j * stride] for j in [j0, j1): a strided run (contiguous
    runs take :func:`_float_run_extreme` or :func:`_int_run_extreme`)."""
    m = lowest
    if fone == 0:  # integers: the key is b ^ xmask (fmask = expo = 0)
        for j in range(j0, j1):
            m = max(m, same_type(base[p + j * stride] ^ xmask, m))
        return m
    for j in range(j0, j1):
        m = max(m, order_key(base[p + j * stride], shift, fmask, fone, xmask, expo, top))
    return m


@helper
def _run_find_key(base, p, stride, j0, j1, m, shift, fmask, fone, xmask, expo, top):
    """First j in [j0, j1) of a strided run whose key is *m* (which the caller knows
    is there)."""
    j = j0
    if fone == 0:  # integers: the key is b ^ xmask, so look for the bits m ^ xmask
        bits = same_type(m ^ xmask, m)
        while j < j1 - 1 and base[p + j * stride] != bits:
            j += 1
        return j
    while j < j1 - 1 and order_key(base[p + j * stride], shift, fmask, fone, xmask, expo, top) != m:
        j += 1
    return j


#: Rows of four strided lanes whose greatest keys one pass takes before they are
#: compared with the best so far (see :func:`_run_extreme4`).
_LANES4_BLOCK = 256


@helper(inline=True)  # inlined: the kernel's masks are constants there, which LLVM folds
def _run_max_key4(base, p, lane_stride, stride, j0, j1, lowest, shift, fmask, fone, xmask, expo,
                  top):
    """Greatest keys of the four strided runs x[p + k * lane_stride + j * stride],
    k < 4, j in [j0, j1), in one pass: four independent chains."""
    m0 = m1 = m2 = m3 = lowest
    q = p + j0 * stride
    for _ in range(j1 - j0):
        m0 = max(m0, order_key(base[q], shift, fmask, fone, xmask, expo, top))
        m1 = max(m1, order_key(base[q + lane_stride], shift, fmask, fone, xmask, expo, top))
        m2 = max(m2, order_key(base[q + 2 * lane_stride], shift, fmask, fone, xmask, expo, top))
        m3 = max(m3, order_key(base[q + 3 * lane_stride], shift, fmask, fone, xmask, expo, top))
        q += stride
    return m0, m1, m2, m3


@helper(inline=True)
def _lanes4_extreme(keys, index, at, base, p, lane_stride, stride, j0, j1, lowest, shift, fmask,
                    fone, xmask, expo, top, with_index):
    """Fold the strided runs [j0, j1) of the four lanes keys[:4] (at x[p + k *
    lane_stride]) into keys (and into index, the first position, *at* + j, when
    *with_index*): four lanes side by side read each row once where four lane
    passes read every cache line four times (a (N/4, 4) array along axis 0).

    In blocks of _LANES4_BLOCK rows: the block's greatest keys first (no positions
    in the loop), then, for a lane whose block beats its best, the first row of
    that key in the block, which is still in the cache."""
    interleaved = lane_stride == 1 and stride == 4  # rows of four adjacent lanes
    for b0 in range(j0, j1, _LANES4_BLOCK):
        b1 = min(b0 + _LANES4_BLOCK, j1)
        if interleaved:  # a vector of rows at a time (kernels.simd_keys), then the rest
            vectors = (b1 - b0) * 4 // LANES
            m0, m1, m2, m3 = max_keys4(base, p + b0 * 4, vectors, fmask, fone, xmask, expo, top)
            t0, t1, t2, t3 = _run_max_key4(base, p, lane_stride, stride, b0 + vectors * LANES // 4,
                                           b1, lowest, shift, fmask, fone, xmask, expo, top)
            m0, m1, m2, m3 = max(m0, t0), max(m1, t1), max(m2, t2), max(m3, t3)
        else:
            m0, m1, m2, m3 = _run_max_key4(base, p, lane_stride, stride, b0, b1, lowest, shift,
                                           fmask, fone, xmask, expo, top)
        for k in range(4):
            m = m0 if k == 0 else m1 if k == 1 else m2 if k == 2 else m3
            if m > keys[k]:
                keys[k] = m
                if with_index:
                    index[k] = at + _run_find_key(base, p + k * lane_stride, stride, b0, b1, m,
                                                  shift, fmask, fone, xmask, expo, top)


#: Elements of a contiguous run that one vector pass takes before its extreme is
#: compared with the best so far (see :func:`_float_run_extreme`).
_SCAN_BLOCK = 1024


@helper
def _find_bits(seg, mode, value, mask):
    """First k with: mode 0, ``(b & mask) > value`` (a NaN); mode 1, ``b == value``;
    mode 2, ``(b & mask) == 0`` (a zero of either sign). The caller knows there is one.

    Block by block of ``_FIND_BLOCK``, each searched whole without a branch (the
    least position of a match in 32-bit lanes, :func:`_first_where`; 64-bit bits:
    :func:`_find_bits_tested`), the first block with a match ending the search:
    one branch per block, where testing each block with
    an OR first and then looking element by element mispredicted once per
    element up to the match (an argmax of (512, 128) float32 along axis 1: 41 ->
    17 us with the rest of :func:`_float_run_extreme`, AMD EPYC Zen 3).
    """
    m = seg.size
    if seg.itemsize == 8:
        return _find_bits_tested(seg, mode, value, mask)
    for k in range(0, m, _FIND_BLOCK):
        hi = min(k + _FIND_BLOCK, m)
        at = _first_where(seg, k, hi, mode, value, mask, np.int32(0))
        if at < hi:
            return at
    return m - 1


@helper
def _find_bits_tested(seg, mode, value, mask):
    """:func:`_find_bits` of 64-bit bits: each block of ``_TESTED_BLOCK`` tested as
    a whole first (an OR of compares), then looked through element by element:
    AVX2 has no 64-bit integer minimum, and a least position in 64-bit lanes
    (compare and blend) lost to this (argmax along rows of (64, 4096) float64:
    48-54 us against 69-83, AMD EPYC Zen 3)."""
    m = seg.size
    for k in range(0, m, _TESTED_BLOCK):
        blk = seg[k:min(k + _TESTED_BLOCK, m)]
        hit = False
        if mode == 0:
            for q in range(blk.size):
                hit |= same_type(blk[q] & mask, value) > value
        elif mode == 1:
            for q in range(blk.size):
                hit |= blk[q] == value
        else:
            for q in range(blk.size):
                hit |= same_type(blk[q] & mask, value) == 0
        if hit:
            for q in range(blk.size):
                b = blk[q]
                if mode == 0:
                    if same_type(b & mask, value) > value:
                        return k + q
                elif mode == 1:
                    if b == value:
                        return k + q
                elif same_type(b & mask, value) == 0:
                    return k + q
    return m - 1


@helper(inline=True)
def _first_where(seg, lo, hi, mode, value, mask, zero):
    """The first k in [lo, hi) where ``seg[k]`` matches as :func:`_find_bits` says, *hi*
    if none: the least relative position of a match, kept in the integer type of
    *zero* (as wide as the bits: 64-bit positions beside 32-bit bits halved the
    vector lanes), a loop without a branch that LLVM vectorises."""
    end = same_type(hi - lo, zero)
    at = end
    if mode == 0:
        for q in range(hi - lo):
            b = seg[uint64(lo + q)]
            at = min(at, same_type(q, zero) if same_type(b & mask, value) > value else end)
    elif mode == 1:
        for q in range(hi - lo):
            at = min(at, same_type(q, zero) if seg[uint64(lo + q)] == value else end)
    else:
        for q in range(hi - lo):
            b = seg[uint64(lo + q)]
            at = min(at, same_type(q, zero) if same_type(b & mask, value) == 0 else end)
    return lo + np.int64(at)


@helper(inline=True)
def _raw_key(b, fmask):
    """``b ^ fmask`` where the float bits *b* are negative as an integer: a signed
    key that sorts the floats in order, except that positive NaNs sort above +inf,
    negative NaNs below -inf and -0.0 just below +0.0. The mask is a select, not
    ``b >> (bits - 1)``: Numba widens shifts to int64, which unpacks narrow vector
    lanes. The map is an involution: it also turns a raw key back into bits."""
    zero = same_type(0, b)
    return same_type(b ^ (fmask if b < zero else zero), b)


@helper
def _block_range_bits(blk, ulike, fmask, expo):
    """(whether a NaN is there, greatest raw key, least raw key) of a block of
    8-, 16- or 32-bit float bits, from three plain integer reductions of the bits
    (each one vector instruction per element): the signed greatest and least and
    the unsigned greatest (``ulike`` is an unsigned integer of the bits' width).

    As signed integers the positive floats sort in order above every negative
    one, and the negatives in reverse; so the greatest float is the signed
    greatest if that is not negative, else the signed least, and the least float
    is the unsigned greatest if there is a negative, else the signed least. A NaN
    is a signed greatest above ``expo`` or an unsigned greatest above ``expo``
    with the sign bit.
    """
    zero = same_type(0, expo)
    nan_neg = same_type(expo | same_type(~fmask, expo), ulike)  # the sign bit and expo
    smax = blk[0]
    smin = smax
    umax = same_type(smax, ulike)
    for q in range(blk.size):
        b = blk[q]
        smax = max(smax, b)
        smin = min(smin, b)
        umax = max(umax, same_type(b, ulike))
    greatest = smax if smax >= zero else smin
    least = same_type(umax, zero) if smin < zero else smin
    return (smax > expo or umax > nan_neg), _raw_key(greatest, fmask), _raw_key(least, fmask)


@helper
def _block_range_keys(blk, fmask, expo):
    """:func:`_block_range_bits` for 64-bit floats: each element's raw key first,
    then their greatest and least. AVX2 has no 64-bit integer max or min, so three
    reductions of the bits cost more than one of keys (float64 max of 1M elements
    354 against 271 us)."""
    hi = _raw_key(blk[0], fmask)
    lo = hi
    for q in range(blk.size):
        raw = _raw_key(blk[q], fmask)
        hi = max(hi, raw)
        lo = min(lo, raw)
    return (hi > expo or lo < same_type(~expo, expo)), hi, lo


@helper
def _float_run_extreme(seg, ulike, fmask, xmask, expo, top, with_index):
    """(``order_key`` of the extreme, its first position) of a contiguous run of
    float bits: the maximum if ``xmask`` is 0, the minimum if -1; the position is 0
    unless *with_index*. ``ulike`` is an unsigned integer of the bits' width.

    One pass, block by block (:func:`_block_range_bits`, or
    :func:`_block_range_keys` for 64-bit floats). A block that holds a NaN ends the
    pass (the first NaN is the answer for argmax and argmin alike); a block whose
    extreme beats the best so far is remembered, and the position is looked for in
    that block only. Where the extreme is a zero of either sign the first zero of
    the run is looked for instead (-0.0 and +0.0 have one key).

    (The earlier form mapped every element to its key with a shift, which Numba
    widened to 64-bit lanes: 2.7x slower for float32 on AVX2 than this one.)
    """
    wide = seg.itemsize == 8
    n = seg.size
    best = same_type(0, expo)
    best_at = -1
    for k0 in range(0, n, _SCAN_BLOCK):
        blk = seg[k0:min(k0 + _SCAN_BLOCK, n)]
        if wide:
            nan, hi, lo = _block_range_keys(blk, fmask, expo)
        else:
            nan, hi, lo = _block_range_bits(blk, ulike, fmask, expo)
        if nan:  # the greatest key for argmax and argmin alike
            return top, (k0 + _find_bits(blk, 0, expo, fmask)) if with_index else 0
        ext = hi if xmask == 0 else lo
        if best_at < 0 or (ext > best if xmask == 0 else ext < best):
            best = ext
            best_at = k0
    return _found(seg, best, best_at, fmask, xmask, with_index)


@helper
def _found(seg, best, best_at, fmask, xmask, with_index):
    """(``order_key``, first position) of the run's extreme, whose raw key *best* was
    found in the block starting at *best_at* (the end of :func:`_float_run_extreme`
    and :func:`_float_run_nanextreme`). A zero of either sign has key 0, and the
    first zero of the run is its position; otherwise the position is looked for
    in that block only."""
    if best == 0 or best == -1:  # the extreme is a zero of either sign: key 0
        return same_type(xmask, best), _find_bits(seg, 2, best, fmask) if with_index else 0
    # order_key of the bits is the raw key, plus one below zero (-0.0 meets +0.0)
    key = same_type(same_type(best + (1 if best < 0 else 0), best) ^ xmask, best)
    if not with_index:
        return key, 0
    blk = seg[best_at:min(best_at + _SCAN_BLOCK, seg.size)]
    return key, best_at + _find_bits(blk, 1, _raw_key(best, fmask), fmask)


@helper
def _nan_block_extreme(blk, fmask, expo, sentinel, greatest):
    """The greatest (least) raw key of a block of float bits among the elements that
    are not NaN, *sentinel* if all are: an integer select and max (min) per
    element, which vectorise (a float ``v > m`` select does not without fast-math)."""
    ext = sentinel
    if greatest:
        for q in range(blk.size):
            b = blk[q]
            ext = max(ext, _raw_key(b, fmask) if same_type(b & fmask, b) <= expo else sentinel)
    else:
        for q in range(blk.size):
            b = blk[q]
            ext = min(ext, _raw_key(b, fmask) if same_type(b & fmask, b) <= expo else sentinel)
    return ext


@helper
def _float_run_nanextreme(seg, fmask, xmask, expo, lowest, top, with_index):
    """:func:`_float_run_extreme` skipping NaN (nanmax, nanmin, nanargmax, nanargmin):
    ``(lowest, 0)`` where every element is NaN, else the extreme's ``order_key``
    and its first position, block by block as there."""
    greatest = xmask == 0
    sentinel = lowest if greatest else top
    n = seg.size
    best = same_type(0, expo)
    best_at = -1
    for k0 in range(0, n, _SCAN_BLOCK):
        blk = seg[k0:min(k0 + _SCAN_BLOCK, n)]
        ext = _nan_block_extreme(blk, fmask, expo, sentinel, greatest)
        if ext == sentinel:  # NaN only
            continue
        if best_at < 0 or (ext > best if greatest else ext < best):
            best = ext
            best_at = k0
    if best_at < 0:
        return lowest, 0
    return _found(seg, best, best_at, fmask, xmask, with_index)


@helper
def _int_run_extreme(seg, xmask, lowest, with_index):
    """(key ``b ^ xmask``, first position) of the greatest key of a contiguous run
    of integer bits, as :func:`_float_run_extreme` does: block by block, the
    position looked for in the block that holds the extreme."""
    n = seg.size
    best = lowest
    best_at = 0
    for k0 in range(0, n, _SCAN_BLOCK):
        blk = seg[k0:min(k0 + _SCAN_BLOCK, n)]
        hi = lowest
        for q in range(blk.size):
            hi = max(hi, same_type(blk[q] ^ xmask, hi))
        if hi > best or k0 == 0:
            best = hi
            best_at = k0
    if not with_index:
        return best, 0
    blk = seg[best_at:min(best_at + _SCAN_BLOCK, n)]
    bits = same_type(best ^ xmask, best)
    return best, best_at + _find_bits(blk, 1, bits, bits)


@helper(inline=True)
def _row_max(keys, base, p, stride, shift, fmask, fone, xmask, expo, top):
    """keys[i] = max(keys[i], key of x[p + i * stride]): extremes without positions."""
    m = keys.size
    if stride == 1:
        row = base[p:p + m]
        for i in range(m):
            keys[i] = max(keys[i], order_key(row[i], shift, fmask, fone, xmask, expo, top))
    else:
        for i in range(m):
            keys[i] = max(keys[i], order_key(base[p + i * stride], shift, fmask, fone, xmask,
                                             expo, top))


@helper(inline=True)
def _row_max4(keys, base, p, row_stride, stride, shift, fmask, fone, xmask, expo, top):
    m = keys.size
    if stride != 1:
        for k in range(4):
            _row_max(keys, base, p + k * row_stride, stride, shift, fmask, fone, xmask, expo, top)
        return
    r0 = base[p:p + m]
    r1 = base[p + row_stride:p + row_stride + m]
    r2 = base[p + 2 * row_stride:p + 2 * row_stride + m]
    r3 = base[p + 3 * row_stride:p + 3 * row_stride + m]
    for i in range(m):
        a = max(order_key(r0[i], shift, fmask, fone, xmask, expo, top),
                order_key(r1[i], shift, fmask, fone, xmask, expo, top))
        b = max(order_key(r2[i], shift, fmask, fone, xmask, expo, top),
                order_key(r3[i], shift, fmask, fone, xmask, expo, top))
        keys[i] = max(keys[i], max(a, b))


@factory
def arg_kernel(bits_dtype: str, floats: bool, row_order: bool, skip_nan: bool = False):
    """Greatest key, and in WITH_INDEX mode its first position, of a buffer of
    ``bits_dtype`` (int8 to int64): max, min, argmax and argmin of every dtype of
    that width and kind (*floats*, or integers and bool), by the masks (see above).

    Only ``xmask`` (the direction, and an unsigned type's sign flip) is a run-time
    value; the other masks follow from the width and kind and are the kernel's
    constants, which LLVM folds: for integers ``order_key`` becomes ``b ^ xmask``,
    one instruction per element (with those masks as run-time values the integer
    loops ran 2x (int32) to 6x (uint8) slower).

    ``mode`` (a run-time value tested outside the inner loops: one compiled kernel
    serves all three) is KEYS_ONLY, WITH_INDEX (the first position of the greatest
    key into ``best_index``, untouched otherwise) or AS_VALUES: the keys, once
    found, are turned back into the values' bits in place (``key_bits``), which a
    ``max`` or ``min`` in one chunk per output returns as they are. The loop
    order is a constant of the kernel (the ``row`` argument is then unused):
    each compiled kernel holds one order only, which halves a first call's
    compile time.

    ``skip_nan`` (floats only: nanmax, nanmin, nanargmax, nanargmin) gives a NaN the
    key ``LOWEST`` instead of ``TOP``: below every number, so it never wins, and an
    output whose elements are all NaN keeps ``LOWEST`` (which no number has: -inf's
    key is above it), which ``key_bits`` turns into a NaN. Contiguous runs then take
    :func:`_float_run_nanextreme` (the blocked pass of the plain kernel stops at the
    first NaN).
    """
    dt = np.dtype(bits_dtype)
    KT = dt.type
    ROW = row_order  # a constant: Numba prunes the other loop order before compiling
    SHIFT = KT(dt.itemsize * 8 - 1)
    TOP = KT(np.iinfo(dt).max)
    LOWEST = KT(np.iinfo(dt).min)  # no key is below it
    NAN_KEY = LOWEST if skip_nan else TOP  # the key of a NaN (see above)
    SKIP_FLOATS = floats and skip_nan  # contiguous runs: _float_run_nanextreme
    UZERO = np.dtype(f"u{dt.itemsize}").type(0)  # the unsigned type of that width
    FLOATS = floats
    FMASK, FONE, _, EXPO = key_masks(np.dtype(f"{'f' if floats else 'i'}{dt.itemsize}"), dt,
                                     invert=False)

    @kernel(variant=f"{'f' if floats else 'i'}{dt.itemsize}_{'row' if ROW else 'lane'}"
                    f"{'_nan' if skip_nan else ''}")
    def reduce_arg(part, parts, base, geo, mode, best_keys, best_index):
        """``geo`` is the view's geometry (see :func:`_geometry`) followed by
        ``xmask``: one argument for Numba to unbox, not two."""
        (offset, inner, inner_stride, n, n_stride, chunk_len, inner_block,
         outer_shape, outer_strides, red_shape, red_strides) = _geometry(geo)
        xmask = KT(geo[geo.size - 1])
        fmask = FMASK  # constants: see above
        fone = FONE
        expo = EXPO
        with_index = mode == WITH_INDEX
        outer = best_keys.shape[0]
        chunks = best_keys.shape[1]
        total = n * block_size(red_shape)
        blocks = (inner + inner_block - 1) // inner_block
        task_lo, task_hi = part_range(outer * blocks * chunks, part, parts)
        for task in range(task_lo, task_hi):
            o, b, c = _task(task, blocks, chunks)
            p_outer = offset + block_offset(o, outer_shape, outer_strides)
            t_start = c * chunk_len
            t_end = min(t_start + chunk_len, total)
            i0 = b * inner_block
            i1 = min(i0 + inner_block, inner)
            keys = best_keys[o, c, i0:i1]
            index = best_index[o, c, i0:i1]
            keys[:] = LOWEST
            if with_index:
                index[:] = t_start
            p_outer += i0 * inner_stride
            if ROW:
                t = t_start
                while t < t_end:
                    r, j0, j1 = _run(t, t_end, n)
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    j = j0
                    while j + 4 <= j1:
                        if with_index:
                            _row_arg4(keys, index, base, p_red + j * n_stride, n_stride, inner_stride,
                                      r * n + j, SHIFT, fmask, fone, xmask, expo, NAN_KEY)
                        else:
                            _row_max4(keys, base, p_red + j * n_stride, n_stride, inner_stride,
                                      SHIFT, fmask, fone, xmask, expo, NAN_KEY)
                        j += 4
                    for j in range(j, j1):  # noqa: B020 (j goes on from the unrolled loop)
                        if with_index:
                            _row_arg(keys, index, base, p_red + j * n_stride, inner_stride,
                                     r * n + j, SHIFT, fmask, fone, xmask, expo, NAN_KEY)
                        else:
                            _row_max(keys, base, p_red + j * n_stride, inner_stride,
                                     SHIFT, fmask, fone, xmask, expo, NAN_KEY)
                    t += j1 - j0
            else:
                # lane order: each output i of the block scans its own run of every row;
                # a contiguous run takes one blocked vector pass (see _float_run_extreme)
                contiguous = n_stride == 1
                t = t_start
                while t < t_end:
                    r, j0, j1 = _run(t, t_end, n)
                    p_red = p_outer + block_offset(r, red_shape, red_strides)
                    i4 = 0
                    if not contiguous:  # strided runs: four lanes per pass (see _lanes4_extreme)
                        while i4 + 4 <= keys.size:
                            _lanes4_extreme(keys[i4:i4 + 4], index[i4:i4 + 4], r * n,
                                            base, p_red + i4 * inner_stride, inner_stride, n_stride,
                                            j0, j1, LOWEST, SHIFT, fmask, fone, xmask, expo,
                                            NAN_KEY, with_index)
                            i4 += 4
                    for i in range(i4, keys.size):
                        p = p_red + i * inner_stride
                        if contiguous:
                            seg = base[p + j0:p + j1]
                            if SKIP_FLOATS:  # constants: the other branches are pruned
                                m, at = _float_run_nanextreme(seg, fmask, xmask, expo, LOWEST, TOP,
                                                              with_index)
                            elif FLOATS:
                                m, at = _float_run_extreme(seg, UZERO, fmask, xmask, expo, NAN_KEY,
                                                           with_index)
                            else:
                                m, at = _int_run_extreme(seg, xmask, LOWEST, with_index)
                            if m > keys[i]:
                                keys[i] = m
                                if with_index:
                                    index[i] = r * n + j0 + at
                            continue
                        m = KT(_run_max_key(base, p, n_stride, j0, j1, LOWEST, SHIFT, fmask, fone,
                                            xmask, expo, NAN_KEY))
                        if m > keys[i]:
                            keys[i] = m
                            if with_index:
                                index[i] = r * n + _run_find_key(base, p, n_stride, j0, j1, m, SHIFT,
                                                                 fmask, fone, xmask, expo, NAN_KEY)
                    t += j1 - j0
            if mode == AS_VALUES:  # this task's keys are final
                for i in range(keys.size):
                    keys[i] = key_bits(keys[i], fmask, xmask, NAN_KEY, expo)

    return reduce_arg


@helper
def key_bits(k, fmask, xmask, top, expo):
    """The bits of the element whose ``order_key`` is *k* (its inverse; the masks as
    there, ``top`` the greatest key): a NaN (the key ``top`` of a float) comes back
    as the default NaN, a zero as +0.0."""
    if fmask != 0 and k == top:  # the default NaN: the exponent's bits and the
        # mantissa's highest (half of the lowest bit above the mantissa)
        return same_type(expo | same_type(same_type(same_type(fmask ^ expo, k) + 1, k) >> 1, k), k)
    k = same_type(k ^ xmask, k)
    # a float's negative key is minus its magnitude: k - 1 is the magnitude's bits
    # flipped, and flipping them back (fmask) keeps the sign bit
    return same_type(same_type(k - 1, k) ^ fmask, k) if fmask != 0 and k < 0 else k


@njit(cache=True, nogil=True)
def best_of_chunks(keys, index, best, at):
    """best[o, i] = the greatest of the chunks' keys ``keys[o, :, i]``, at[o, i] = the
    index found in the first chunk that holds it (chunks are in index order): an
    arg-reduction of rows cut into chunks finished in one call, where
    ``keys.argmax(axis=1)`` and a ``take_along_axis`` of the index took 6 us
    (argmax of (1, 262144) float32, 28.5 -> 22 us, AMD EPYC Zen 4)."""
    outer, chunks, inner = keys.shape
    for o in range(outer):
        for i in range(inner):
            m = keys[o, 0, i]
            c_best = 0
            for c in range(1, chunks):
                if keys[o, c, i] > m:
                    m = keys[o, c, i]
                    c_best = c
            best[o, i] = m
            at[o, i] = index[o, c_best, i]


@njit(cache=True, nogil=True)
def bits_of_best_chunks(keys, fmask, xmask, top, expo, out):
    """out[o, i] = the bits of the element whose key is the greatest of the chunks'
    keys ``keys[o, :, i]`` (see :func:`key_bits`): a ``max``/``min`` of rows cut into
    chunks finished in one call (``keys.max(axis=1)`` and a conversion took 3-4 us)."""
    outer, chunks, inner = keys.shape
    for o in range(outer):
        for i in range(inner):
            m = keys[o, 0, i]
            for c in range(1, chunks):
                m = max(m, keys[o, c, i])
            out[o, i] = key_bits(m, fmask, xmask, top, expo)

"""Scan kernels over a ``ScanView`` (see ``axisops._layout``).

A scan runs along ``n`` for every *lane* ``(o, m, i)``: ``o`` walks the outer
dimensions, ``m`` the middle ones and ``i`` the innermost, so the output, a fresh
C-contiguous array of shape ``(outer, n, mid, inner)``, is written row by row.

Work is split into tasks ``(lane group g = (o, m), inner block b, chunk c)``.
A chunk is a fixed run of ``chunk_len`` scan steps, fixed by the shape and never
by the thread count, so results are bit-identical for any number of threads. With
one chunk a task scans its lanes from the start. With several (a long axis and
too few lanes to keep the cores busy), the kernel runs three phases:

A. every chunk but the last folds its elements into one summary per lane;
B. the summaries are combined in order into each chunk's carry-in;
C. every chunk scans its elements again, starting from its carry-in.

Phase C reads the input a second time, which beats scanning and then fixing the
output up (that reads and writes the output twice). The running state of a task
lives in ``carry[g, c, i0:i1]``, so row-order scans keep their accumulators in a
small cache-resident block.

Two loop orders, as in the reductions: *row order* when ``inner`` has at least
``ROW_MIN_LANES`` lanes (each step updates a block of lanes from one contiguous
output row, which LLVM vectorises), and *lane order* otherwise (each lane scans
its own run serially).

Extreme scans (``cummax``/``cummin``) compare the order-preserving integer keys
of ``kernels.reduce`` on the integer bit view of any dtype; the key map is
chosen by run-time masks so that one kernel per element width serves every
dtype, both directions and float16 (see :func:`.common.order_key`). The running state is
(key, value bits, index); an element takes over when its key is ``>=`` the running
key, which is exactly PyTorch's rule: ties pass to the later element, a NaN
(the greatest key) takes over from anything and only a NaN takes over from it.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import factory, helper, kernel, part_range
from .common import block_offset, load, order_key
from .reduce import OP_PROD, OP_SUM, _row_update, _task
from .simd import LANES
from .simd_keys import extreme_blocks
from .vmath import EXP_MIN, exp_block, log_block

#: cummax/cummin of LANES elements at once (see kernels.simd_keys): a contiguous
#: lane, four lanes interleaved into interleaved outputs, and into a run each
_extreme_blocks1 = extreme_blocks(1)
_extreme_blocks4 = extreme_blocks(4)
_extreme_blocks4_apart = extreme_blocks(4, True)
#: the same without outputs: a chunk's state at its end (phase A)
_extreme_state1 = extreme_blocks(1, store=False)
_extreme_state4 = extreme_blocks(4, store=False)

#: The three phases of a chunked scan (see the module docstring); an unchunked
#: scan runs PHASE_SCAN only.
PHASE_TOTALS, PHASE_CARRIES, PHASE_SCAN = 0, 1, 2
#: With fewer lanes than this a task scans each lane on its own (its state in
#: registers) instead of stepping rows of lanes, where a row of four lanes costs
#: a call per step (measured on (2M, 4) float32 along axis 0, one thread: cummax
#: 43 -> 3.7 ns per element, cumsum 11 -> 1.7).
ROW_MIN_LANES = 16
# Lanes of fewer than ROW_MIN_LANES steps, one per group (rows along the last axis),
# are scanned by one loop over the groups (_short_lanes_scan); longer ones by the
# task loop, whose contiguous-slice loops are faster per step (a row of 1000 int32:
# cumsum 2.2x, cummax 1.3x).

__all__ = ["OP_SUM", "OP_PROD", "PHASE_TOTALS", "PHASE_CARRIES", "PHASE_SCAN", "scan_values", "scan_logaddexp", "extreme_kernel",
           "cumprod_vjp", "cumprod_vjp_scaled", "scaled_exclusive_products", "logcumsumexp_vjp", "scatter_add_lanes"]


@helper
def _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape, mid_strides):
    """Element offset of lane group g = (o, m) and its outer index o and middle index m."""
    o = g // mids
    m = g - o * mids
    p = offset + block_offset(o, outer_shape, outer_strides) + block_offset(m, mid_shape, mid_strides)
    return p, o, m


@helper
def _position(j, n, reverse):
    """Index along the axis of scan step j."""
    return n - 1 - j if reverse else j


# --------------------------------------------------------------- sums and products


@helper
def _row_scan(acc, orow, base, p, stride, op, exclusive, table):
    """One scan step for a block of lanes: acc (+ or *)= x[p + i*stride]; orow = acc
    (the value before the step when *exclusive*)."""
    m = acc.size
    if stride == 1:
        row = base[p:p + m]
        if op == OP_PROD:
            if exclusive:
                for i in range(m):
                    a = acc[i]
                    orow[i] = a
                    acc[i] = a * load(row[i], table, acc)
            else:
                for i in range(m):
                    a = acc[i] * load(row[i], table, acc)
                    acc[i] = a
                    orow[i] = a
        elif exclusive:
            for i in range(m):
                a = acc[i]
                orow[i] = a
                acc[i] = a + load(row[i], table, acc)
        else:
            for i in range(m):
                a = acc[i] + load(row[i], table, acc)
                acc[i] = a
                orow[i] = a
    else:
        for i in range(m):
            a = acc[i]
            v = load(base[p + i * stride], table, acc)
            b = a * v if op == OP_PROD else a + v
            acc[i] = b
            orow[i] = a if exclusive else b


@helper
def _lane_scan(s, olane, base, p, stride, j0, j1, n, op, exclusive, reverse, table, like):
    """Scan steps [j0, j1) of one lane from running value s into olane; returns s."""
    if reverse:
        for j in range(j0, j1):
            q = n - 1 - j
            v = load(base[p + q * stride], table, like)
            t = s * v if op == OP_PROD else s + v
            olane[q] = s if exclusive else t
            s = t
    elif stride == 1 and not exclusive:
        seg = base[p + j0:p + j1]
        out = olane[j0:j1]
        if op == OP_PROD:
            for k in range(seg.size):
                s = s * load(seg[k], table, like)
                out[k] = s
        else:
            for k in range(seg.size):
                s = s + load(seg[k], table, like)
                out[k] = s
    else:
        for q in range(j0, j1):
            v = load(base[p + q * stride], table, like)
            t = s * v if op == OP_PROD else s + v
            olane[q] = s if exclusive else t
            s = t
    return s


@helper
def _lanes4_scan(acc, out4, base, p, lane_stride, stride, j0, j1, n, op, exclusive, reverse,
                 write, table):
    """Scan steps [j0, j1) of the four strided lanes acc[:4] (at x[p + k * lane_stride])
    side by side into out4[q, k] (the running values only, not written, unless
    *write*): each row is read once where four lane passes read every cache line
    four times, and the four chains of adds or multiplies overlap. Each lane's
    order is its own scan's, so the bits are those of :func:`_lane_scan`."""
    s0 = acc[0]
    s1 = acc[1]
    s2 = acc[2]
    s3 = acc[3]
    ls = np.uint64(lane_stride)  # unsigned positions: see _lanes4_extreme
    for j in range(j0, j1):
        q = n - 1 - j if reverse else j
        r = np.uint64(p + q * stride)
        v0 = load(base[r], table, acc)
        v1 = load(base[r + ls], table, acc)
        v2 = load(base[r + ls + ls], table, acc)
        v3 = load(base[r + ls + ls + ls], table, acc)
        t0 = s0 * v0 if op == OP_PROD else s0 + v0
        t1 = s1 * v1 if op == OP_PROD else s1 + v1
        t2 = s2 * v2 if op == OP_PROD else s2 + v2
        t3 = s3 * v3 if op == OP_PROD else s3 + v3
        if write:
            u = np.uint64(q)
            out4[u, 0] = s0 if exclusive else t0
            out4[u, 1] = s1 if exclusive else t1
            out4[u, 2] = s2 if exclusive else t2
            out4[u, 3] = s3 if exclusive else t3
        s0 = t0
        s1 = t1
        s2 = t2
        s3 = t3
    acc[0] = s0
    acc[1] = s1
    acc[2] = s2
    acc[3] = s3


@helper
def _lane_fold(s, base, p, stride, j0, j1, n, op, reverse, table, like):
    """Fold scan steps [j0, j1) of one lane into s (in increasing position order;
    a contiguous run of a sum in eight interleaved partial sums)."""
    q0 = n - j1 if reverse else j0
    q1 = n - j0 if reverse else j1
    if stride == 1 and op == OP_SUM:
        return s + _sum8(base[p + q0:p + q1], table, like)
    for q in range(q0, q1):
        v = load(base[p + q * stride], table, like)
        s = s * v if op == OP_PROD else s + v
    return s


@helper
def _short_lanes_scan(g0, g1, mids, base, offset, outer_shape, outer_strides, n, n_stride,
                      mid_shape, mid_strides, op, exclusive, reverse, table, like, flat):
    """Scan the one-lane groups [g0, g1) from the start into *flat*, the output's flat
    view (lane (o, m) at ``o * n * mids + m``, step q ``mids`` further each).

    Rows along the last axis (many groups, a few steps each): one loop over the
    groups, the running value in a register. The per-lane slices and index
    arithmetic of the task loop cost more than a short row's own work, and so does
    a call per row: a coalesced last axis (one outer dimension, no middle ones)
    gets a loop of its own without the division and the call of ``_lane_start``
    (a row of four float32: 2.3 ns per element against 8.3 with them).
    """
    identity = like.dtype.type(1 if op == OP_PROD else 0)  # of the accumulator's type
    if mids == 1 and outer_shape.size == 1:
        step = outer_strides[0]
        for g in range(g0, g1):
            _short_run_scan(identity, offset + g * step, g * n, 1, n, n_stride, op, exclusive,
                            reverse, base, table, like, flat)
    else:
        for g in range(g0, g1):
            p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape,
                                  mid_strides)
            _short_run_scan(identity, p, o * n * mids + m, mids, n, n_stride, op, exclusive,
                            reverse, base, table, like, flat)


@helper(inline=True)
def _short_run_scan(s, p, w, w_stride, n, n_stride, op, exclusive, reverse, base, table, like,
                    flat):
    """One short lane from running value s: input at p (stride n_stride), output at
    w (stride w_stride) of *flat*."""
    for j in range(n):
        q = n - 1 - j if reverse else j
        v = load(base[p + q * n_stride], table, like)
        t = s * v if op == OP_PROD else s + v
        flat[w + q * w_stride] = s if exclusive else t
        s = t


@helper
def _sum8(seg, table, like):
    """Sum of a contiguous run in eight interleaved partial sums, added up in a fixed
    tree: vectorisable without fast-math, and the same bits on every run."""
    z = like.dtype.type(0)
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = z
    m = seg.size - seg.size % 8
    for k in range(0, m, 8):
        s0 += load(seg[k], table, like)
        s1 += load(seg[k + 1], table, like)
        s2 += load(seg[k + 2], table, like)
        s3 += load(seg[k + 3], table, like)
        s4 += load(seg[k + 4], table, like)
        s5 += load(seg[k + 5], table, like)
        s6 += load(seg[k + 6], table, like)
        s7 += load(seg[k + 7], table, like)
    for k in range(m, seg.size):
        s0 += load(seg[k], table, like)
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@helper
def _quad_groups_scan(part, parts, phase, base, offset, step, n, n_stride, chunk_len, op,
                      exclusive, table, carry, out):
    """Phase A or C of :func:`scan_values` for one-lane groups whose starts are *step*
    apart (no middle dimensions, one outer one), four groups side by side: the
    lanes of a transposed table, each strided, read row by row once instead of
    once per lane (taken when that leaves a task for every thread). Tasks are (quad of groups, chunk); a quad of fewer than four
    groups (the last) scans its lanes one by one. Every lane's order is its own
    scan's (phase A folds in increasing position order, as :func:`_lane_fold`)."""
    groups = out.shape[0]
    chunks = carry.shape[1]
    quads = (groups + 3) // 4  # the caller made sure there is a task for every thread
    identity = 1 if op == OP_PROD else 0
    task_lo, task_hi = part_range(quads * chunks, part, parts)
    for task in range(task_lo, task_hi):
        q4 = task // chunks
        c = task - q4 * chunks
        g0 = 4 * q4
        g1 = min(g0 + 4, groups)
        j1 = min((c + 1) * chunk_len, n)
        if phase == PHASE_TOTALS:
            if c == chunks - 1:
                continue
            acc = carry[g0:g1, c + 1, 0]
            acc[:] = identity
        else:
            acc = carry[g0:g1, c, 0]
            if chunks == 1:
                acc[:] = identity
        p = offset + g0 * step
        # (a contiguous lane's total is _lane_fold's, whose sums take eight partial sums:
        # the bits of a lane that a split call scans on its own)
        if g1 - g0 == 4 and (phase != PHASE_TOTALS or n_stride != 1):
            _lanes4_scan(acc, out[g0:g1, :, 0, 0].T, base, p, step, n_stride, c * chunk_len, j1,
                         n, op, exclusive, False, phase != PHASE_TOTALS, table)
            continue
        for g in range(g0, g1):
            if phase == PHASE_TOTALS:
                acc[g - g0] = _lane_fold(acc[g - g0], base, p + (g - g0) * step, n_stride,
                                         c * chunk_len, j1, n, op, False, table, acc)
            else:
                acc[g - g0] = _lane_scan(acc[g - g0], out[g, :, 0, 0], base, p + (g - g0) * step,
                                         n_stride, c * chunk_len, j1, n, op, exclusive, False,
                                         table, acc)


@kernel
def scan_values(part, parts, phase, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape, mid_strides,
                inner, inner_stride, chunk_len, inner_block, op, exclusive, reverse, table,
                carry, out):
    """Cumulative sums (``op=OP_SUM``) or products of a ``ScanView`` into ``out``.

    ``out`` (outer, n, mid, inner) and ``carry`` (outer * mid, chunks, inner) have
    the accumulator dtype; ``table`` is None, or the float16 -> float32 table when
    ``base`` holds float16 bits. No fast-math: compiled with ``reassoc``, long float
    products of a blocked scan came out NaN where the serial product is finite.
    """
    mids = out.shape[2]
    groups = out.shape[0] * mids
    chunks = carry.shape[1]
    blocks = (inner + inner_block - 1) // inner_block
    tasks = groups * blocks * chunks
    identity = 1 if op == OP_PROD else 0
    row = inner >= ROW_MIN_LANES
    # one-lane groups side by side in memory (a transposed table's rows): four at a
    # time; and float rows of 16 or more (shorter ones: _short_lanes_scan), whose four
    # chains of adds or multiplies overlap where one lane waits for each result
    # (cumprod of (4, 16K) float32 along axis 1 48 -> 18 us, cumsum 33 -> 20, (16K, 16)
    # 438 -> 138 and 413 -> 155, AMD EPYC Zen 5; an integer lane's adds wait for
    # nothing: int32 cumsum of (4, 16K) took 10% longer four at a time)
    floats = out.dtype.type(0.5) != 0
    quads = (inner == 1 and mids == 1 and outer_shape.size == 1
             and (n_stride != 1 or (floats and n >= ROW_MIN_LANES))
             and groups >= 4 and not reverse and (groups + 3) // 4 * chunks >= parts)
    if quads and phase != PHASE_CARRIES:
        _quad_groups_scan(part, parts, phase, base, offset, outer_strides[0], n, n_stride,
                          chunk_len, op, exclusive, table, carry, out)
    elif phase == PHASE_TOTALS:
        task_lo, task_hi = part_range(tasks, part, parts)
        for task in range(task_lo, task_hi):  # A: the total of every chunk but the last
            g, b, c = _task(task, blocks, chunks)
            if c == chunks - 1:
                continue
            p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape, mid_strides)
            i0 = b * inner_block
            acc = carry[g, c + 1, i0:min(i0 + inner_block, inner)]
            acc[:] = identity
            j1 = min((c + 1) * chunk_len, n)
            if row:
                for j in range(c * chunk_len, j1):
                    q = _position(j, n, reverse)
                    _row_update(acc, base, p + q * n_stride + i0 * inner_stride, inner_stride, op, table)
            else:
                i4 = 0
                if n_stride != 1 and not reverse:  # strided: four lanes side by side, in
                    # increasing position order as _lane_fold adds them
                    while i4 + 4 <= acc.size:
                        _lanes4_scan(acc[i4:i4 + 4], out[0, :, 0, 0:4], base,
                                     p + (i0 + i4) * inner_stride, inner_stride, n_stride,
                                     c * chunk_len, j1, n, op, False, reverse, False, table)
                        i4 += 4
                for i in range(i4, acc.size):
                    acc[i] = _lane_fold(acc[i], base, p + (i0 + i) * inner_stride, n_stride,
                                        c * chunk_len, j1, n, op, reverse, table, acc)
    elif phase == PHASE_CARRIES:
        task_lo, task_hi = part_range(groups, part, parts)
        for g in range(task_lo, task_hi):  # B: carry-in of chunk c = carry-in of c-1 (+) total of c-1
            carry[g, 0, :] = identity
            for c in range(2, chunks):
                prev = carry[g, c - 1]
                cur = carry[g, c]
                for i in range(inner):
                    cur[i] = prev[i] * cur[i] if op == OP_PROD else prev[i] + cur[i]
    elif chunks == 1 and inner == 1 and n < ROW_MIN_LANES:  # C for one-lane groups: rows along the last axis
        task_lo, task_hi = part_range(tasks, part, parts)
        _short_lanes_scan(task_lo, task_hi, mids, base, offset, outer_shape, outer_strides, n,
                          n_stride, mid_shape, mid_strides, op, exclusive, reverse, table,
                          carry[0, 0], out.reshape(out.size))
    else:
        task_lo, task_hi = part_range(tasks, part, parts)
        for task in range(task_lo, task_hi):  # C: scan every chunk from its carry-in
            g, b, c = _task(task, blocks, chunks)
            p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape, mid_strides)
            i0 = b * inner_block
            i1 = min(i0 + inner_block, inner)
            acc = carry[g, c, i0:i1]
            if chunks == 1:
                acc[:] = identity
            j1 = min((c + 1) * chunk_len, n)
            if row:
                for j in range(c * chunk_len, j1):
                    q = _position(j, n, reverse)
                    _row_scan(acc, out[o, q, m, i0:i1], base, p + q * n_stride + i0 * inner_stride,
                              inner_stride, op, exclusive, table)
            else:
                i4 = 0
                if n_stride != 1:  # strided lanes: four side by side (see _lanes4_scan)
                    while i4 + 4 <= acc.size:
                        _lanes4_scan(acc[i4:i4 + 4], out[o, :, m, i0 + i4:i0 + i4 + 4], base,
                                     p + (i0 + i4) * inner_stride, inner_stride, n_stride,
                                     c * chunk_len, j1, n, op, exclusive, reverse, True, table)
                        i4 += 4
                for i in range(i4, acc.size):
                    acc[i] = _lane_scan(acc[i], out[o, :, m, i0 + i], base, p + (i0 + i) * inner_stride,
                                        n_stride, c * chunk_len, j1, n, op, exclusive, reverse,
                                        table, acc)


# ------------------------------------------------------------------ log-sum-exp


#: Steps of one lane that :func:`_lane_logaddexp` takes in one block
_LSE_BLOCK = 64
#: The widest range of a block's finite terms taken from its greatest value: exp of
#: anything 708 below it is subnormal in float64 (precision lost, then 0)
_LSE_RANGE = 600.0


@helper(nrt=True)
def _lane_logaddexp(s, base, p, stride, j0, j1, n, reverse, table, like, olane, write):
    """logcumsumexp steps [j0, j1) of one lane from running value *s* (into olane[q]
    when *write*); returns s.

    One lane is one chain of ``log1p(exp(.))`` steps, each waiting ~100 cycles for
    the last (22 ns per element on an AMD EPYC). A block of _LSE_BLOCK steps whose
    elements and start are finite (no NaN, no infinity: those take the step rule of
    :func:`_log_add_exp`) is computed from its greatest value m instead:
    ``y_k = m + log(exp(s - m) + sum_{i <= k} exp(x_i - m))``, every term at most 1
    and one of them 1, so the sum is in [1, _LSE_BLOCK + 1] and its exps and logs
    are independent of one another: the block's exps and logs run as SIMD loops
    (:mod:`.vmath`, within an ulp or two each), only the running sum between them
    is a chain (18-25 -> 5-6 ns an element a pass, AMD EPYC Zen 4). A block whose finite
    terms span more than _LSE_RANGE goes step by step too: exp of the least would
    lose its precision below the greatest (a first step of -1e300 came out -inf).
    The error stays within the serial step's bound, ~eps per term; the blocks are
    fixed by the lane's positions, so the bits are too. A run of fewer steps goes
    step by step."""
    j = j0
    # distinct C-contiguous rows, so that the vmath loops run as SIMD loops
    scratch = np.empty((5, _LSE_BLOCK if j1 - j >= _LSE_BLOCK else 0))
    terms = scratch[0]
    sums = scratch[1]
    spare = scratch[2]
    powers = scratch[3]
    values = scratch[4]
    while j1 - j >= _LSE_BLOCK:
        jb = j + _LSE_BLOCK
        m = s
        lo = s if s > -np.inf else np.inf  # the least finite term (-inf adds exactly 0)
        bad = False
        for t in range(j, jb):
            v = load(base[p + (n - 1 - t if reverse else t) * stride], table, like)
            values[t - j] = v
            m = max(m, v)
            lo = min(lo, v) if v > -np.inf else lo
            bad |= v != v or v == np.inf
        if bad or not math.isfinite(m) or s == np.inf or m - lo > _LSE_RANGE:
            for t in range(j, jb):
                q = n - 1 - t if reverse else t
                s = _log_add_exp(s, values[t - j])
                if write:
                    olane[q] = s
        else:
            for k in range(_LSE_BLOCK):
                terms[k] = values[k] - m
            exp_block(terms, sums, spare, _LSE_BLOCK)
            total = math.exp(s - m)
            for k in range(_LSE_BLOCK):
                total += sums[k]
                sums[k] = total
            log_block(sums, terms, spare, powers, _LSE_BLOCK)
            # the exact values never fall below the last one nor below their own
            # element (the step rule's max + log1p(..) >= max holds it by
            # construction): held there, a rounding that crossed is undone (a log of
            # an exp an ulp off put 0 - 2.8e-17 after a 0)
            for k in range(_LSE_BLOCK):
                s = max(m + terms[k], s, values[k])
                terms[k] = s
            if write:
                for t in range(j, jb):
                    olane[n - 1 - t if reverse else t] = terms[t - j]
        j = jb
    for t in range(j, j1):
        q = n - 1 - t if reverse else t
        s = _log_add_exp(s, load(base[p + q * stride], table, like))
        if write:
            olane[q] = s
    return s


@helper
def _log_add_exp(acc, x):
    """log(exp(acc) + exp(x)) as PyTorch's ``_log_add_exp_helper``: NaN propagates;
    equal infinities give themselves; otherwise max + log1p(exp(min - max))."""
    if acc != acc or x != x:
        return acc + x
    mx = max(acc, x)
    mn = min(acc, x)
    if mn == mx and not math.isfinite(mn):
        return x
    return mx + math.log1p(math.exp(mn - mx))


@helper(nrt=True, unchecked_division=True)  # the divisor 1 + exp(d) >= 1
def _rows_logaddexp(acc, base, p, n_stride, inner_stride, j0, j1, n, reverse, table, out, o, m,
                    i0, write):
    """logcumsumexp steps [j0, j1) of the lanes *acc* side by side (a block of
    inner lanes, row order), into ``out[o, q, m, i0:]`` when *write*.

    Each step is :func:`_log_add_exp` on every lane at once, as SIMD loops: the
    lanes' ``d = min - max``, their exps and the logs of ``u = 1 + exp(d)`` by
    :mod:`.vmath`, then ``max + log1p(exp(d))`` with log1p as
    ``log(u) - ((u - 1) - exp(d)) / u`` (the rounding of u undone), and the NaN
    and infinity rules as selects. A step where some lane's d is below
    ``vmath.EXP_MIN`` (an exp that is subnormal) takes those lanes by the step
    rule itself."""
    w = acc.size
    scratch = np.empty((7, w))
    xs = scratch[0]
    ds = scratch[1]
    ex = scratch[2]
    us = scratch[3]
    spare = scratch[4]
    powers = scratch[5]
    res = scratch[6]
    for j in range(j0, j1):
        q = _position(j, n, reverse)
        pq = p + q * n_stride + i0 * inner_stride
        tiny = False
        for i in range(w):
            x = load(base[pq + i * inner_stride], table, acc)
            xs[i] = x
            a = acc[i]
            d = min(a, x) - max(a, x)
            d = d if d == d else 0.0  # NaN, or equal infinities: the selects below
            tiny |= (d < EXP_MIN) & (d > -np.inf)
            ds[i] = d
        exp_block(ds, ex, spare, w)
        for i in range(w):
            us[i] = 1.0 + ex[i]
        log_block(us, ds, spare, powers, w)
        for i in range(w):
            a = acc[i]
            x = xs[i]
            u = us[i]
            mx = max(a, x)
            mn = min(a, x)
            r = max(mx + (ds[i] - ((u - 1.0) - ex[i]) / u), mx)  # log1p >= 0, as the step's
            r = x if (mn == mx) & (mn - mn != 0.0) else r  # equal infinities
            res[i] = a + x if (a != a) | (x != x) else r
        if tiny:
            for i in range(w):
                a = acc[i]
                x = xs[i]
                if min(a, x) - max(a, x) < EXP_MIN:
                    res[i] = _log_add_exp(a, x)
        for i in range(w):
            acc[i] = res[i]
        if write:
            row = out[o, q, m, i0:i0 + w]
            for i in range(w):
                row[i] = res[i]


@kernel
def scan_logaddexp(part, parts, phase, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape, mid_strides,
                   inner, inner_stride, chunk_len, inner_block, reverse, table, carry, out):
    """``log(cumsum(exp(x)))`` of a ``ScanView``, stably, into ``out``.

    ``carry`` holds the accumulators (float64); ``out`` the result dtype (float32
    or float64; float16 results are written as float32 and rounded by the caller).
    """
    mids = out.shape[2]
    groups = out.shape[0] * mids
    chunks = carry.shape[1]
    blocks = (inner + inner_block - 1) // inner_block
    tasks = groups * blocks * chunks
    if phase == PHASE_TOTALS:
        task_lo, task_hi = part_range(tasks, part, parts)
        for task in range(task_lo, task_hi):  # A
            g, b, c = _task(task, blocks, chunks)
            if c == chunks - 1:
                continue
            p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape, mid_strides)
            i0 = b * inner_block
            acc = carry[g, c + 1, i0:min(i0 + inner_block, inner)]
            acc[:] = -np.inf
            if acc.size < ROW_MIN_LANES:  # few lanes: each in blocks of independent steps
                for i in range(acc.size):
                    acc[i] = _lane_logaddexp(acc[i], base, p + (i0 + i) * inner_stride, n_stride,
                                             c * chunk_len, min((c + 1) * chunk_len, n), n,
                                             reverse, table, acc, acc, False)
                continue
            _rows_logaddexp(acc, base, p, n_stride, inner_stride, c * chunk_len,
                            min((c + 1) * chunk_len, n), n, reverse, table, out, o, m, i0, False)
    elif phase == PHASE_CARRIES:
        task_lo, task_hi = part_range(groups, part, parts)
        for g in range(task_lo, task_hi):  # B
            carry[g, 0, :] = -np.inf
            for c in range(2, chunks):
                for i in range(inner):
                    carry[g, c, i] = _log_add_exp(carry[g, c - 1, i], carry[g, c, i])
    elif chunks == 1 and inner == 1 and n < ROW_MIN_LANES:  # C for rows along the last axis
        task_lo, task_hi = part_range(tasks, part, parts)
        _short_lanes_logaddexp(task_lo, task_hi, mids, base, offset, outer_shape, outer_strides,
                               n, n_stride, mid_shape, mid_strides, reverse, table, carry[0, 0],
                               out.reshape(out.size))
    else:
        task_lo, task_hi = part_range(tasks, part, parts)
        for task in range(task_lo, task_hi):  # C
            g, b, c = _task(task, blocks, chunks)
            p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape, mid_strides)
            i0 = b * inner_block
            i1 = min(i0 + inner_block, inner)
            acc = carry[g, c, i0:i1]
            if chunks == 1:
                acc[:] = -np.inf
            if acc.size < ROW_MIN_LANES:  # few lanes: each in blocks of independent steps
                for i in range(acc.size):
                    acc[i] = _lane_logaddexp(acc[i], base, p + (i0 + i) * inner_stride, n_stride,
                                             c * chunk_len, min((c + 1) * chunk_len, n), n,
                                             reverse, table, acc, out[o, :, m, i0 + i], True)
                continue
            _rows_logaddexp(acc, base, p, n_stride, inner_stride, c * chunk_len,
                            min((c + 1) * chunk_len, n), n, reverse, table, out, o, m, i0, True)


@helper
def _short_lanes_logaddexp(g0, g1, mids, base, offset, outer_shape, outer_strides, n, n_stride,
                           mid_shape, mid_strides, reverse, table, like, flat):
    """logcumsumexp of the one-lane groups [g0, g1) into *flat*, as
    :func:`_short_lanes_scan` sums them (the running value in *like*'s dtype)."""
    if mids == 1 and outer_shape.size == 1:
        step = outer_strides[0]
        for g in range(g0, g1):
            _short_run_logaddexp(offset + g * step, g * n, 1, n, n_stride, reverse, base, table,
                                 like, flat)
    else:
        for g in range(g0, g1):
            p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape,
                                  mid_strides)
            _short_run_logaddexp(p, o * n * mids + m, mids, n, n_stride, reverse, base, table,
                                 like, flat)


@helper(inline=True)
def _short_run_logaddexp(p, w, w_stride, n, n_stride, reverse, base, table, like, flat):
    s = like.dtype.type(-np.inf)
    for j in range(n):
        q = n - 1 - j if reverse else j
        s = _log_add_exp(s, load(base[p + q * n_stride], table, like))
        flat[w + q * w_stride] = s


# ------------------------------------------------------------- cummax and cummin


@helper
def _row_extreme(keys, prev_bits, prev_index, obits, oindex, base, p, stride, at, shift, fmask,
                 fone, xmask, expo, top):
    """One step of the extreme scan for a block of lanes.

    The running keys live in *keys*; the running values and indices are the
    previous output row (*prev_bits*, *prev_index*), and this step's go to
    *obits*, *oindex* (which may be the same arrays: an in-place update). The
    ``max`` of the keys, rather than a select, lets LLVM vectorise the loop.
    """
    m = keys.size
    if stride == 1:
        row = base[p:p + m]
        for i in range(m):
            b = row[i]
            k = order_key(b, shift, fmask, fone, xmask, expo, top)
            take = k >= keys[i]
            keys[i] = max(k, keys[i])
            obits[i] = b if take else prev_bits[i]
            oindex[i] = at if take else prev_index[i]
    else:
        for i in range(m):
            b = base[p + i * stride]
            k = order_key(b, shift, fmask, fone, xmask, expo, top)
            take = k >= keys[i]
            keys[i] = max(k, keys[i])
            obits[i] = b if take else prev_bits[i]
            oindex[i] = at if take else prev_index[i]


@factory
def extreme_kernel(bits_dtype: str):
    """The cummax/cummin kernel for one element width (``bits_dtype`` int8..int64).

    Arguments after the view: the key masks (see :func:`.common.order_key`), then ``keys``,
    ``bits``, ``index`` (outer * mid, chunks, inner; ``index`` of the index dtype)
    scratch for the running state, and the outputs ``values`` (bits dtype) and ``indices`` (int32 or
    int64), both (outer, n, mid, inner).
    """
    KT = np.dtype(bits_dtype).type
    SHIFT = KT(np.dtype(bits_dtype).itemsize * 8 - 1)
    LOWEST = KT(np.iinfo(bits_dtype).min)
    TOP = KT(np.iinfo(bits_dtype).max)

    @kernel(variant=f"w{np.dtype(bits_dtype).itemsize}")  # a name per width: see _jit.kernel
    def scan_extreme(part, parts, phase, base, offset, outer_shape, outer_strides, n, n_stride, mid_shape, mid_strides,
                     inner, inner_stride, chunk_len, inner_block, fmask, fone, xmask, expo,
                     keys, bits, index, values, indices):
        mids = values.shape[2]
        groups = values.shape[0] * mids
        chunks = keys.shape[1]
        blocks = (inner + inner_block - 1) // inner_block
        tasks = groups * blocks * chunks
        none_bits = values[0, 0, 0, 0:0]
        none_index = indices[0, 0, 0, 0:0]
        flat_values = values.reshape(values.size)
        flat_indices = indices.reshape(indices.size)
        # one-lane groups side by side in memory, four at a time (see _quad_groups_scan)
        quads = (inner == 1 and mids == 1 and outer_shape.size == 1 and n_stride != 1
                 and groups >= 4 and (groups + 3) // 4 * chunks >= parts)
        if quads and phase != PHASE_CARRIES:
            task_lo, task_hi = part_range((groups + 3) // 4 * chunks, part, parts)
            for task in range(task_lo, task_hi):
                q4 = task // chunks
                c = task - q4 * chunks
                g0 = 4 * q4
                g1 = min(g0 + 4, groups)
                if phase == PHASE_TOTALS and c == chunks - 1:
                    continue
                s = c + 1 if phase == PHASE_TOTALS else c  # where the state lives
                k = keys[g0:g1, s, 0]
                kb = bits[g0:g1, s, 0]
                ki = index[g0:g1, s, 0]
                if phase == PHASE_TOTALS or chunks == 1 or c == 0:
                    k[:] = LOWEST
                    kb[:] = 0
                    ki[:] = 0
                j1 = min((c + 1) * chunk_len, n)
                p = offset + g0 * outer_strides[0]
                if g1 - g0 == 4:
                    _lanes4_extreme(k, kb, ki, flat_values, flat_indices, g0 * n, n, 1, base, p,
                                    outer_strides[0], n_stride, c * chunk_len, j1, SHIFT, fmask,
                                    fone, xmask, expo, TOP, phase != PHASE_TOTALS)
                    continue
                for g in range(g0, g1):
                    write = phase != PHASE_TOTALS
                    _lane_extreme(k[g - g0:g - g0 + 1], kb[g - g0:g - g0 + 1], ki[g - g0:g - g0 + 1],
                                  values[g, :, 0, 0] if write else none_bits,
                                  indices[g, :, 0, 0] if write else none_index,
                                  base, p + (g - g0) * outer_strides[0], n_stride, c * chunk_len, j1,
                                  SHIFT, fmask, fone, xmask, expo, TOP)
        elif phase == PHASE_TOTALS:
            task_lo, task_hi = part_range(tasks, part, parts)
            for task in range(task_lo, task_hi):  # A: the state at the end of every chunk but the last
                g, b, c = _task(task, blocks, chunks)
                if c == chunks - 1:
                    continue
                p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape,
                                      mid_strides)
                i0 = b * inner_block
                i1 = min(i0 + inner_block, inner)
                k = keys[g, c + 1, i0:i1]
                kb = bits[g, c + 1, i0:i1]
                ki = index[g, c + 1, i0:i1]
                k[:] = LOWEST
                kb[:] = 0
                ki[:] = 0
                j1 = min((c + 1) * chunk_len, n)
                if inner >= ROW_MIN_LANES:
                    for j in range(c * chunk_len, j1):
                        _row_extreme(k, kb, ki, kb, ki, base, p + j * n_stride + i0 * inner_stride,
                                     inner_stride, j, SHIFT, fmask, fone, xmask, expo, TOP)
                else:
                    i4 = 0
                    if n_stride != 1:  # strided lanes: four side by side
                        while i4 + 4 <= i1 - i0:
                            _lanes4_extreme(k[i4:i4 + 4], kb[i4:i4 + 4], ki[i4:i4 + 4],
                                            flat_values, flat_indices, 0, 0, 0, base,
                                            p + (i0 + i4) * inner_stride, inner_stride, n_stride,
                                            c * chunk_len, j1, SHIFT, fmask, fone, xmask, expo,
                                            TOP, False)
                            i4 += 4
                    for i in range(i4, i1 - i0):
                        _lane_extreme(k[i:i + 1], kb[i:i + 1], ki[i:i + 1], none_bits, none_index,
                                      base, p + (i0 + i) * inner_stride, n_stride, c * chunk_len, j1,
                                      SHIFT, fmask, fone, xmask, expo, TOP)
        elif phase == PHASE_CARRIES:
            task_lo, task_hi = part_range(groups, part, parts)
            for g in range(task_lo, task_hi):  # B: a chunk's state takes over when its key is >=
                keys[g, 0, :] = LOWEST
                for c in range(2, chunks):
                    for i in range(inner):
                        if keys[g, c, i] < keys[g, c - 1, i]:
                            keys[g, c, i] = keys[g, c - 1, i]
                            bits[g, c, i] = bits[g, c - 1, i]
                            index[g, c, i] = index[g, c - 1, i]
        elif chunks == 1 and inner == 1 and n < ROW_MIN_LANES:  # C for one-lane groups: rows along the last axis
            task_lo, task_hi = part_range(tasks, part, parts)
            _short_lanes_extreme(task_lo, task_hi, mids, base, offset, outer_shape, outer_strides,
                                 n, n_stride, mid_shape, mid_strides, SHIFT, fmask, fone, xmask,
                                 expo, TOP, LOWEST, values.reshape(values.size),
                                 indices.reshape(indices.size))
        else:
            task_lo, task_hi = part_range(tasks, part, parts)
            for task in range(task_lo, task_hi):  # C
                g, b, c = _task(task, blocks, chunks)
                p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape,
                                      mid_strides)
                i0 = b * inner_block
                i1 = min(i0 + inner_block, inner)
                k = keys[g, c, i0:i1]
                kb = bits[g, c, i0:i1]
                ki = index[g, c, i0:i1]
                if chunks == 1 or c == 0:
                    k[:] = LOWEST
                    kb[:] = 0
                    ki[:] = 0
                j1 = min((c + 1) * chunk_len, n)
                if inner >= ROW_MIN_LANES:
                    prev_bits = kb
                    prev_index = ki
                    for j in range(c * chunk_len, j1):
                        obits = values[o, j, m, i0:i1]
                        oindex = indices[o, j, m, i0:i1]
                        _row_extreme(k, prev_bits, prev_index, obits, oindex, base,
                                     p + j * n_stride + i0 * inner_stride, inner_stride, j, SHIFT,
                                     fmask, fone, xmask, expo, TOP)
                        prev_bits = obits
                        prev_index = oindex
                else:
                    i4 = 0
                    if n_stride != 1:  # strided lanes: four side by side
                        while i4 + 4 <= i1 - i0:
                            _lanes4_extreme(k[i4:i4 + 4], kb[i4:i4 + 4], ki[i4:i4 + 4],
                                            flat_values, flat_indices,
                                            ((o * n) * mids + m) * inner + i0 + i4, 1, mids * inner,
                                            base, p + (i0 + i4) * inner_stride, inner_stride, n_stride,
                                            c * chunk_len, j1, SHIFT, fmask, fone, xmask, expo,
                                            TOP, True)
                            i4 += 4
                    for i in range(i4, i1 - i0):
                        _lane_extreme(k[i:i + 1], kb[i:i + 1], ki[i:i + 1], values[o, :, m, i0 + i],
                                      indices[o, :, m, i0 + i], base, p + (i0 + i) * inner_stride,
                                      n_stride, c * chunk_len, j1, SHIFT, fmask, fone, xmask, expo,
                                      TOP)

    return scan_extreme


@helper
def _short_lanes_extreme(g0, g1, mids, base, offset, outer_shape, outer_strides, n, n_stride,
                         mid_shape, mid_strides, shift, fmask, fone, xmask, expo, top, lowest,
                         values, indices):
    """cummax/cummin of the one-lane groups [g0, g1) into the flat outputs, as
    :func:`_short_lanes_scan` sums them."""
    if mids == 1 and outer_shape.size == 1:
        step = outer_strides[0]
        for g in range(g0, g1):
            _short_run_extreme(offset + g * step, g * n, 1, n, n_stride, shift, fmask, fone,
                               xmask, expo, top, lowest, base, values, indices)
    else:
        for g in range(g0, g1):
            p, o, m = _lane_start(g, mids, offset, outer_shape, outer_strides, mid_shape,
                                  mid_strides)
            _short_run_extreme(p, o * n * mids + m, mids, n, n_stride, shift, fmask, fone,
                               xmask, expo, top, lowest, base, values, indices)


@helper(inline=True)
def _short_run_extreme(p, w, w_stride, n, n_stride, shift, fmask, fone, xmask, expo, top, lowest,
                       base, values, indices):
    """One short lane's running extreme and its index (see :func:`_short_lanes_scan`)."""
    k = lowest
    v = base[p]
    at = 0
    for j in range(n):
        b = base[p + j * n_stride]
        kb = order_key(b, shift, fmask, fone, xmask, expo, top)
        take = kb >= k
        k = max(kb, k)
        v = b if take else v
        at = j if take else at
        values[w + j * w_stride] = v
        indices[w + j * w_stride] = at


@helper(inline=True)
def _step_extreme(b, k, v, at, j, shift, fmask, fone, xmask, expo, top):
    """One lane's running (key, value bits, index) after element *b* at step *j*."""
    kb = order_key(b, shift, fmask, fone, xmask, expo, top)
    take = kb >= k
    return max(kb, k), b if take else v, j if take else at


@helper
def _lanes4_extreme(keys, bits, index, ovalues, oindices, w, w_lane, w_stride, base, p,
                    lane_stride, stride, j0, j1, shift, fmask, fone, xmask, expo, top, write):
    """:func:`_lane_extreme` of the four strided lanes keys[:4] (at x[p + k *
    lane_stride]) side by side into the flat outputs at w + k * w_lane + j * w_stride
    (only the state unless *write*): each row read once, four chains overlapping.

    Positions are unsigned: a signed index costs a wraparound test per element, and
    this loop is bound by its instructions (cummax of (16K, 4) float32 along axis 0
    130 -> 87 us on an AMD EPYC)."""
    if lane_stride == 1 and stride == 4 and (not write or w_stride == 1
                                             or (w_stride == 4 and w_lane == 1)):
        # four lanes interleaved in memory: LANES // 4 rows per vector (kernels.simd_keys)
        blocks = (j1 - j0) // (LANES // 4)
        if blocks > 0:
            if not write:
                _extreme_state4(base, p + j0 * stride, ovalues, oindices, 0, 0, j0, blocks, keys,
                                bits, index, fmask, fone, xmask, expo)
            elif w_stride == 1:
                _extreme_blocks4_apart(base, p + j0 * stride, ovalues, oindices, w + j0, w_lane, j0,
                                       blocks, keys, bits, index, fmask, fone, xmask, expo)
            else:
                _extreme_blocks4(base, p + j0 * stride, ovalues, oindices, w + j0 * 4, 0, j0,
                                 blocks, keys, bits, index, fmask, fone, xmask, expo)
            j0 += blocks * (LANES // 4)
    k0, k1, k2, k3 = keys[0], keys[1], keys[2], keys[3]
    v0, v1, v2, v3 = bits[0], bits[1], bits[2], bits[3]
    a0, a1, a2, a3 = index[0], index[1], index[2], index[3]
    ls = np.uint64(lane_stride)
    wl = np.uint64(w_lane)
    r = np.uint64(p + j0 * stride)
    o = np.uint64(w + j0 * w_stride)
    for j in range(j0, j1):
        k0, v0, a0 = _step_extreme(base[r], k0, v0, a0, j, shift, fmask, fone, xmask, expo, top)
        k1, v1, a1 = _step_extreme(base[r + ls], k1, v1, a1, j, shift, fmask, fone, xmask, expo,
                                   top)
        k2, v2, a2 = _step_extreme(base[r + ls + ls], k2, v2, a2, j, shift, fmask, fone, xmask,
                                   expo, top)
        k3, v3, a3 = _step_extreme(base[r + ls + ls + ls], k3, v3, a3, j, shift, fmask, fone,
                                   xmask, expo, top)
        if write:
            ovalues[o] = v0
            ovalues[o + wl] = v1
            ovalues[o + wl + wl] = v2
            ovalues[o + wl + wl + wl] = v3
            oindices[o] = a0
            oindices[o + wl] = a1
            oindices[o + wl + wl] = a2
            oindices[o + wl + wl + wl] = a3
        r += np.uint64(stride)
        o += np.uint64(w_stride)
    keys[0], keys[1], keys[2], keys[3] = k0, k1, k2, k3
    bits[0], bits[1], bits[2], bits[3] = v0, v1, v2, v3
    index[0], index[1], index[2], index[3] = a0, a1, a2, a3


@helper
def _lane_extreme(keys, bits, index, ovalues, oindices, base, p, stride, j0, j1, shift, fmask,
                  fone, xmask, expo, top):
    """Scan steps [j0, j1) of one lane, the running state in registers and back in
    ``keys[0], bits[0], index[0]``; the state only (no output) when ``ovalues`` is empty."""
    if stride == 1 and j1 - j0 >= LANES and ovalues.size == 0:  # the state only
        blocks = (j1 - j0) // LANES
        _extreme_state1(base, p + j0, ovalues, oindices, 0, 0, j0, blocks, keys, bits, index,
                        fmask, fone, xmask, expo)
        j0 += blocks * LANES
    elif (stride == 1 and j1 - j0 >= LANES and ovalues.size > 0
            and ovalues.strides[0] == ovalues.itemsize and oindices.strides[0] == oindices.itemsize):
        # LANES steps at once (kernels.simd_keys); the state goes through keys, bits, index
        blocks = (j1 - j0) // LANES
        _extreme_blocks1(base, p + j0, ovalues, oindices, j0, 0, j0, blocks, keys, bits, index,
                         fmask, fone, xmask, expo)
        j0 += blocks * LANES
    k = keys[0]
    v = bits[0]
    at = index[0]
    if stride == 1 and ovalues.size > 0:  # the common case, on contiguous slices
        seg = base[p + j0:p + j1]
        ov = ovalues[j0:j1]
        oi = oindices[j0:j1]
        for t in range(seg.size):
            b = seg[t]
            kb = order_key(b, shift, fmask, fone, xmask, expo, top)
            take = kb >= k
            k = max(kb, k)
            v = b if take else v
            at = j0 + t if take else at
            ov[t] = v
            oi[t] = at
    else:
        write = ovalues.size > 0
        for j in range(j0, j1):
            b = base[p + j * stride]
            kb = order_key(b, shift, fmask, fone, xmask, expo, top)
            take = kb >= k
            k = max(kb, k)
            v = b if take else v
            at = j if take else at
            if write:
                ovalues[j] = v
                oindices[j] = at
    keys[0] = k
    bits[0] = v
    index[0] = at


# ------------------------------------------------------------------- gradients
#
# The vector-Jacobian products work on C-contiguous (outer, n, inner) arrays of
# one float dtype (the caller makes them): tasks are (outer o, inner block), and
# each lane is walked along n by one task, in a fixed order, so the results do
# not depend on the thread count.

_GRAD_BLOCK = 1024


@helper
def _grad_lanes(task, blocks, inner):
    """(outer o, first lane, end lane) of a gradient task: blocks of _GRAD_BLOCK lanes."""
    o = task // blocks
    i0 = (task - o * blocks) * _GRAD_BLOCK
    return o, i0, min(i0 + _GRAD_BLOCK, inner)


@helper
def _normalized(m, e, half):
    """(m, e) rescaled so that |m| is in [0.5, 1) (0, inf and NaN as they are), with
    the same value m * 2**e; *half* is 0.5 of m's type. Exact: powers of two."""
    a = abs(m)
    if a >= 1 and a != math.inf:
        return m * half, e + 1
    while a < half and a > 0:
        m = m + m
        a = a + a
        e -= 1
    return m, e


@helper
def _scaled_sum(am, ae, bm, be, pow2, half):
    """a + b of two numbers held as mantissa * 2**exponent (see cumprod_vjp)."""
    if am == 0:
        return bm, be
    if bm == 0:
        return am, ae
    if ae < be:
        am, ae, bm, be = bm, be, am, ae
    d = ae - be  # b is 2**d times smaller: below the last bit of a once d > the table
    b = bm * pow2[d] if d < pow2.size else half - half
    return _normalized(am + b, ae, half)


@kernel(nrt=True)
def cumprod_vjp(part, parts, x, g, exclusive, reverse, tiny, out, rescue):
    """Gradient of a cumulative product without dividing: dx_k = P_k * S_k.

    In scan order, ``P_k`` is the product of the elements before step k and
    ``S_k = g_k + x_{k+1} S_{k+1}`` (inclusive; ``S_k = g_{k+1} + x_{k+1} S_{k+1}``
    with ``S_{n-1} = 0`` and ``S_{n-2} = g_{n-1}`` when exclusive). Zeros in x need
    no special case, and a factor is multiplied in only where the sum has terms,
    so an infinity gives inf * 0 only where the product itself has it.

    P and S are plain running values: ``grad.cumprod`` runs
    :func:`cumprod_vjp_scaled` again on the lanes whose result is not a normal
    float (inf, NaN, 0 or subnormal), where one of them may have left the range
    on its own, and on the lanes this kernel flags in *rescue* (outer, inner):
    where P or S was subnormal on the way (nonzero and below *tiny*, the smallest
    normal), which keeps few bits of precision even where the result is normal.
    """
    outer, n, inner = x.shape
    blocks = (inner + _GRAD_BLOCK - 1) // _GRAD_BLOCK
    task_lo, task_hi = part_range(outer * blocks if n > 0 else 0, part, parts)
    for task in range(task_lo, task_hi):
        o, i0, i1 = _grad_lanes(task, blocks, inner)
        xs = x[o]
        gs = g[o]
        os = out[o]
        q = _position(0, n, reverse)
        os[q, i0:i1] = 1
        for j in range(1, n):
            qp = q
            q = _position(j, n, reverse)
            for i in range(i0, i1):
                p = os[qp, i] * xs[qp, i]
                os[q, i] = p
                if p != 0 and abs(p) < tiny:
                    rescue[o, i] = 1
        s = np.zeros(i1 - i0, out.dtype)
        for j in range(n - 1, -1, -1):
            q = _position(j, n, reverse)
            qn = _position(j + 1, n, reverse)
            if j == n - 1:  # S = g_{n-1}; T = 0, the empty sum
                for i in range(i0, i1):
                    s[i - i0] = 0 if exclusive else gs[q, i]
            elif exclusive and j == n - 2:  # T = g_{n-1}: x_{n-1} is in no exclusive output
                for i in range(i0, i1):
                    s[i - i0] = gs[qn, i]
            else:
                for i in range(i0, i1):
                    s[i - i0] = (gs[qn, i] if exclusive else gs[q, i]) + xs[qn, i] * s[i - i0]
            for i in range(i0, i1):
                v = s[i - i0]
                if v != 0 and abs(v) < tiny:
                    rescue[o, i] = 1
                os[q, i] = os[q, i] * v


@kernel(nrt=True)
def cumprod_vjp_scaled(part, parts, xm, xe, gm, ge, pow2, exclusive, reverse, om, oe):
    """:func:`cumprod_vjp` for the lanes where a plain product left the float range.

    Every number is a mantissa and an exponent: ``xm, xe = frexp(x)`` and
    ``gm, ge = frexp(g)`` (C-contiguous (outer, n, inner) arrays), and the result
    is ``om * 2**oe`` (the caller's ``ldexp`` rounds it once). The mantissas stay
    in [0.5, 1) after each step, so neither P nor S overflows or underflows on
    its own where the gradient is in range (``x = [1e-30, 1e-30, 1e30, 1e30]`` in
    float32: ``P * S`` would give inf for a gradient of 1e30). *pow2* holds
    2**-k in the mantissas' dtype. Each step rounds as the plain product would.
    """
    outer, n, inner = xm.shape
    half = xm.dtype.type(0.5)
    blocks = (inner + _GRAD_BLOCK - 1) // _GRAD_BLOCK
    task_lo, task_hi = part_range(outer * blocks if n > 0 else 0, part, parts)
    for task in range(task_lo, task_hi):
        o, i0, i1 = _grad_lanes(task, blocks, inner)
        q = _position(0, n, reverse)
        for i in range(i0, i1):
            om[o, q, i] = 1
            oe[o, q, i] = 0
        for j in range(1, n):  # P
            qp = q
            q = _position(j, n, reverse)
            for i in range(i0, i1):
                m, e = _normalized(om[o, qp, i] * xm[o, qp, i], oe[o, qp, i] + xe[o, qp, i], half)
                om[o, q, i] = m
                oe[o, q, i] = e
        sm = np.zeros(i1 - i0, om.dtype)
        se = np.zeros(i1 - i0, np.int64)
        for j in range(n - 1, -1, -1):  # S, and P * S
            q = _position(j, n, reverse)
            qn = _position(j + 1, n, reverse)
            for i in range(i0, i1):
                k = i - i0
                if j == n - 1:  # S = g_{n-1}; T = 0, the empty sum
                    if exclusive:
                        sm[k] = 0
                        se[k] = 0
                    else:
                        sm[k] = gm[o, q, i]
                        se[k] = ge[o, q, i]
                elif exclusive and j == n - 2:  # T = g_{n-1}: x_{n-1} is in no exclusive output
                    sm[k] = gm[o, qn, i]
                    se[k] = ge[o, qn, i]
                else:
                    tm, te = _normalized(xm[o, qn, i] * sm[k], xe[o, qn, i] + se[k], half)
                    gq = qn if exclusive else q
                    sm[k], se[k] = _scaled_sum(gm[o, gq, i], ge[o, gq, i], tm, te, pow2, half)
                m, e = _normalized(om[o, q, i] * sm[k], oe[o, q, i] + se[k], half)
                om[o, q, i] = m
                oe[o, q, i] = e


@kernel
def scaled_exclusive_products(part, parts, xm, xe, reverse, mant, expo):
    """The product of the elements before each one (after it, if *reverse*) of every
    row of a (rows, n) float array given as ``xm, xe = frexp(x)``, as
    ``mant * 2**expo``: the P pass of :func:`cumprod_vjp_scaled`, for ``grad.prod``.

    The mantissa stays in [0.5, 1) (or 0, inf, NaN) and the exponent is counted
    apart, so no running product overflows or underflows however long the row;
    ``grad.prod`` multiplies two such products and rounds once with ``ldexp``.
    """
    rows, n = xm.shape
    half = xm.dtype.type(0.5)
    lo, hi = part_range(rows, part, parts)
    for r in range(lo, hi):
        m = xm.dtype.type(1)
        e = 0
        for k in range(n):
            j = n - 1 - k if reverse else k
            mant[r, j] = m
            expo[r, j] = e
            m, e = _normalized(m * xm[r, j], e + xe[r, j], half)


@helper
def _exp_diff(a, b):
    """exp(a - b), taken as 1 where a == b (also for equal infinities)."""
    return 1.0 if a == b else math.exp(a - b)


@kernel(nrt=True)
def logcumsumexp_vjp(part, parts, x, y, g, out):
    """Gradient of ``y = logcumsumexp(x)``: dx_k = exp(x_k - y_k) * Q_k with
    ``Q_k = g_k + exp(y_k - y_{k+1}) Q_{k+1}``; every factor is at most 1, since y
    is non-decreasing and x_k <= y_k, so nothing overflows."""
    outer, n, inner = x.shape
    blocks = (inner + _GRAD_BLOCK - 1) // _GRAD_BLOCK
    task_lo, task_hi = part_range(outer * blocks, part, parts)
    for task in range(task_lo, task_hi):
        o, i0, i1 = _grad_lanes(task, blocks, inner)
        q = np.zeros(i1 - i0, out.dtype)
        for j in range(n - 1, -1, -1):
            for i in range(i0, i1):
                if j == n - 1:
                    q[i - i0] = g[o, j, i]
                else:
                    q[i - i0] = g[o, j, i] + _exp_diff(y[o, j, i], y[o, j + 1, i]) * q[i - i0]
                out[o, j, i] = _exp_diff(x[o, j, i], y[o, j, i]) * q[i - i0]


@kernel
def scatter_add_lanes(part, parts, index, g, out):
    """out[o, index[o, j, i], i] += g[o, j, i], for j in increasing order in every lane.

    ``out`` must hold zeros; every index must be in [0, out.shape[1]).
    """
    outer, n, inner = g.shape
    blocks = (inner + _GRAD_BLOCK - 1) // _GRAD_BLOCK
    task_lo, task_hi = part_range(outer * blocks, part, parts)
    for task in range(task_lo, task_hi):
        o, i0, i1 = _grad_lanes(task, blocks, inner)
        for j in range(n):
            for i in range(i0, i1):
                out[o, index[o, j, i], i] += g[o, j, i]

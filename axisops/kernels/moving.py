"""Moving-window kernels over a ``ScanView`` (see ``axisops._layout``).

Each output is the reduction of the ``window`` elements ending at its position
along the axis (fewer at the start). The input is walked as ``(outer, n, mid,
inner)`` lanes, and the output is a fresh C-contiguous array of that shape.

Tasks are ``(lane group g = (o, m), lane i, axis block c)``: a block is a fixed run
of ``block_len`` positions along the axis, fixed by the shape and the window and
never by the thread count. A task starts from nothing: it reads the ``window - 1``
elements before its block (its *anchor*), then slides to the end of its block.
Every walk is first copied out as a contiguous row (its NaN or non-finite
elements counted on the way), so that every pass over it reads with stride 1
from cache, whatever the input's strides: a lane-order task copies its walks
one by one (``STREAMS`` of them for the sums), a row-order task (contiguous
lanes, the axis further: the axis of a C array that is not the last)
``COPY_LANES`` lanes at once, each position one short contiguous run, and puts
the results back the same way (strided walks read in place cost 3x as much:
every element its own cache line).
So every output depends only on its own block's walk, and the bits are the same
for any split of the tasks between threads; and the running sums are re-anchored
(recomputed from scratch) at every block start, so they never drift over a long
axis.

* Sums and means (:func:`moving_sum_kernel`) keep a running sum of the finite
  elements in float64 (``acc += new - old``), a count of the elements that are
  not NaN, and counts of +inf and -inf apart (so an infinity that leaves the
  window leaves no NaN behind).
* Variances (:func:`moving_var_kernel`) keep the count, mean and sum of squared
  deviations (M2) of the finite elements less a shift (the task's first finite
  value: data far from 0 loses no digits), updated Welford-style: an element
  added (``d = x - mean; mean += d / n; M2 += d * (x - mean)``), removed (the
  inverse), or both at once while the count stays (``mean += (a - b) / n;
  M2 += (a - b) * ((a - mean') + (b - mean))``); never a sum of squares minus a
  squared sum. Where every finite value in the window is the same (a run as
  long as the window's count: pandas' rule), the state is reset to that value
  and an M2 of 0, so such windows give exactly 0 and leave no residue. Where
  one step changes M2 by more than 2**20 times what is left (a huge value
  leaving: its rounding error would dwarf the true M2), the window's mean and M2
  are computed afresh by two passes (O(window), only then). A window holding an
  infinity gives NaN, as ``numpy.var``.
* Extremes (:func:`moving_extreme_kernel`) by van Herk/Gil-Werman blocks: a
  walk is cut into blocks of ``window`` positions; a backward pass over each
  block keeps its suffix extrema, a forward pass its prefix extremum, and a
  window (which spans at most two blocks) is the suffix of the block before
  joined to the prefix of its own: three compares per element whatever the
  window, no queue to pop (Lemire's monotone wedge, used before, cost 2-3x as
  much on random data: its pops are unpredictable branches). Ties go to the
  latest element (bottleneck's rule); a NaN never wins; a walk with no NaN runs
  chains with no check for it, its backward and forward chains in one loop. A
  contiguous walk with no NaN and a window of at most ``SMALL_WINDOW`` reads each
  window directly instead, in ``window`` vectorised passes of selects over a
  chunk of outputs (4x faster at window 5 than the blocks' chains).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import helper, kernel, part_range
from .common import block_offset, block_size, load
from .simd import c_rows as _c_rows
from .simd import transpose_tiles as _transpose_tiles


@helper
def _task_lane(task, lanes, blocks, mids, offset, outer_shape, outer_strides, mid_shape,
               mid_strides, inner_stride, block_len, n, window):
    """(first input element p, o, m, lane i, block [j0, j1), anchor start js) of *task*."""
    c = task % blocks
    t = task // blocks
    i = t % lanes
    g = t // lanes
    o = g // mids
    m = g - o * mids
    p = (offset + block_offset(o, outer_shape, outer_strides)
         + block_offset(m, mid_shape, mid_strides) + i * inner_stride)
    j0 = c * block_len
    j1 = min(j0 + block_len, n)
    return p, o, m, i, j0, j1, max(0, j0 - window + 1)


# --------------------------------------------------------------------- sums and means


@helper
def _sum_emit(acc, count, pinf, ninf, min_count, mean):
    """The output of one window: NaN below min_count; infinities as counted."""
    if count < min_count:
        return np.nan
    s = acc
    if pinf:
        s += np.inf
    if ninf:
        s -= np.inf  # +inf and -inf together: NaN
    return s / count if mean else s


@helper
def _sum_lane(base, p, js, j0, j1, window, min_count, mean, table, like, flat, start,
              step):
    """Moving sums (means) of positions [j0, j1) of one lane, anchored at js, into
    ``flat[start + j * step]``."""
    acc = 0.0
    count = 0
    pinf = 0
    ninf = 0
    jw = min(js + window, j1)
    for j in range(js, jw):  # the anchor (and the first, partial windows): adds only
        a = load(base[p + j], table, like)
        if a - a == 0.0:
            acc += a
            count += 1
        elif a == a:
            count += 1
            if a > 0:
                pinf += 1
            else:
                ninf += 1
        if j >= j0:
            flat[start + j * step] = _sum_emit(acc, count, pinf, ninf, min_count, mean)
    for j in range(jw, j1):  # the window slides: one in, one out
        a = load(base[p + j], table, like)
        b = load(base[p + j - window], table, like)
        if a - a == 0.0 and b - b == 0.0:
            acc += a - b
        else:
            if a - a == 0.0:
                acc += a
                count += 1
            elif a == a:
                count += 1
                if a > 0:
                    pinf += 1
                else:
                    ninf += 1
            if b - b == 0.0:
                acc -= b
                count -= 1
            elif b == b:
                count -= 1
                if b > 0:
                    pinf -= 1
                else:
                    ninf -= 1
        flat[start + j * step] = _sum_emit(acc, count, pinf, ninf, min_count, mean)


@helper
def _deltas(base, q, window, k0, k1, table, like, d):
    """``d[k - k0]`` for the relative positions k in [k0, k1) of a finite walk whose
    first element is ``base[q]`` (contiguous): the element entering the window
    less the one leaving it (the element alone while the window fills), in
    float64."""
    kf = min(max(k0, window), k1)  # the first position where an element leaves
    head = base[q + k0:q + kf]
    for t in range(kf - k0):
        d[t] = load(head[t], table, like)
    new = base[q + kf:q + k1]
    old = base[q + kf - window:q + k1 - window]
    tail = d[kf - k0:k1 - k0]
    for t in range(k1 - kf):
        tail[t] = load(new[t], table, like) - load(old[t], table, like)


@helper
def _emit_sums(s, k0, k1, first, window, min_count, mean, flat, start, step):
    """Outputs of the relative positions k in [max(k0, first), k1) of a walk from
    its running sums ``s[k - k0]``: ``flat[start + k * step]``; the window's count
    is ``min(k + 1, window)``."""
    lo = max(k0, first)
    if lo >= k1:
        return
    if lo >= window - 1:  # full windows: one divisor
        if step == 1:
            o = flat[start + lo:start + k1]
            src = s[lo - k0:k1 - k0]
            if mean:
                for t in range(k1 - lo):
                    o[t] = src[t] / window
            else:
                for t in range(k1 - lo):
                    o[t] = src[t]
        else:
            for k in range(lo, k1):
                v = s[k - k0]
                flat[start + k * step] = v / window if mean else v
        return
    for k in range(lo, k1):
        count = min(k + 1, window)
        v = s[k - k0]
        flat[start + k * step] = np.nan if count < min_count else (v / count if mean else v)


#: Positions of a walk done at a time by the finite path: its deltas, running sums
#: and outputs each a pass over a scratch row of this many float64 (in L1).
CHUNK = 512
#: loop bounds: Numba's wrap-around test on signed indices keeps loops scalar
_U = np.uint64


@helper
def _finite_sums(base, qs, lens, firsts, window, min_count, mean, table, like,
                 flat, starts, step, walks, scratch):
    """Moving sums (means) of ``walks`` (<= STREAMS) finite walks: walk s starts at
    ``base[qs[s]]`` (the first element of its anchor), has ``lens[s]`` positions and
    writes those from ``firsts[s]`` on to ``flat[starts[s] + k * step]``.

    Each chunk of positions is three passes: the deltas (vectorised), the running
    sums (``acc += delta``: the walks' dependency chains interleaved when there are
    STREAMS of them), the outputs (vectorised). The arithmetic is ``_sum_lane``'s."""
    common = lens[0]
    for s in range(walks):
        common = min(common, lens[s])
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    if walks == STREAMS:
        for k0 in range(0, common, CHUNK):
            k1 = min(k0 + CHUNK, common)
            m = k1 - k0
            for s in range(STREAMS):
                _deltas(base, qs[s], window, k0, k1, table, like, scratch[s])
            d0 = scratch[0]
            d1 = scratch[1]
            d2 = scratch[2]
            d3 = scratch[3]
            for t in range(m):
                a0 += d0[t]
                d0[t] = a0
                a1 += d1[t]
                d1[t] = a1
                a2 += d2[t]
                d2[t] = a2
                a3 += d3[t]
                d3[t] = a3
            for s in range(STREAMS):
                _emit_sums(scratch[s], k0, k1, firsts[s], window, min_count, mean, flat,
                           starts[s], step)
    else:
        common = 0
    for s in range(walks):  # what is left of each walk, alone
        acc = a0 if s == 0 else a1 if s == 1 else a2 if s == 2 else a3
        d = scratch[s]
        for k0 in range(common, lens[s], CHUNK):
            k1 = min(k0 + CHUNK, lens[s])
            _deltas(base, qs[s], window, k0, k1, table, like, d)
            for t in range(k1 - k0):
                acc += d[t]
                d[t] = acc
            _emit_sums(d, k0, k1, firsts[s], window, min_count, mean, flat, starts[s], step)


# ------------------------------------------------------------- walks copied as rows


#: Walks of one lane-order task of the sums: their dependency chains interleaved
#: where all of them are finite.
STREAMS = 4
#: Lanes one row-order task copies out at a time (contiguous lanes, the axis
#: further: every position of the walks is one short contiguous run).
COPY_LANES = 16  # a tile of simd.transpose_tile


@helper
def _row_order(inner, inner_stride, n_stride):
    """Whether the lanes are walked as rows: contiguous inner lanes, the axis further."""
    return inner > 1 and inner_stride == 1 and abs(n_stride) > 1


@helper
def _bad(v, table, like, nan_only):
    """1 where the element *v* is NaN (``nan_only``) or not finite, else 0."""
    a = load(v, table, like)
    if nan_only:
        return 0 if a == a else 1
    return 0 if a - a == 0 else 1


@helper
def _gather(base, p, stride, js, length, table, like, nan_only, dst):
    """Positions [js, js + length) of a lane (first element ``base[p]``) copied into
    ``dst[:length]`` as they are; returns how many are NaN (``nan_only``) or not
    finite."""
    bad = 0
    if stride == 1:
        seg = base[p + js:p + js + length]
        for k in range(length):
            v = seg[k]
            dst[k] = v
            bad += _bad(v, table, like, nan_only)
    else:
        for k in range(length):
            v = base[p + (js + k) * stride]
            dst[k] = v
            bad += _bad(v, table, like, nan_only)
    return bad


@helper
def _adjacent_walks(where, info, walks):
    """Whether ``walks`` walks of a lane-order task are ``STREAMS`` neighbouring
    lanes (first elements one apart) over the same positions: ``_copy_lanes`` then
    copies them out together, reading each position's lanes at once, instead of
    one strided pass per lane (moving_mean of a (262144, 4).T float32 along axis 1
    AMD EPYC Zen 4: see ``_copy_four``)."""
    if walks != STREAMS:
        return False
    for s in range(1, STREAMS):
        if where[0, s] != where[0, 0] + s or where[1, s] != where[1, 0] \
                or info[1, s] != info[1, 0]:
            return False
    return True


@helper
def _rows_task(task, lane_blocks, blocks, mids, offset, outer_shape, outer_strides,
               mid_shape, mid_strides, inner, n, block_len, window):
    """(first input element p of lane i0, o, m, i0, lanes, j0, j1, js) of a row-order
    task: ``COPY_LANES`` contiguous lanes and an axis block."""
    c = task % blocks
    t = task // blocks
    b = t % lane_blocks
    g = t // lane_blocks
    o = g // mids
    m = g - o * mids
    i0 = b * COPY_LANES
    p = offset + block_offset(o, outer_shape, outer_strides) + block_offset(m, mid_shape,
                                                                            mid_strides) + i0
    j0 = c * block_len
    j1 = min(j0 + block_len, n)
    return p, o, m, i0, min(COPY_LANES, inner - i0), j0, j1, max(0, j0 - window + 1)


@helper
def _copy_four(base, p, n_stride, js, length, dst):
    """``_copy_lanes`` of four lanes: the rows by name, and for four lanes that are
    the whole row of the axis (``n_stride`` 4) one contiguous segment read at
    constant offsets with unsigned positions, which LLVM deinterleaves with vector
    shuffles (a (16384, 4).T float32 block: 56 -> 6 us, AMD EPYC Zen 4)."""
    r0 = dst[0]
    r1 = dst[1]
    r2 = dst[2]
    r3 = dst[3]
    if n_stride == 4:
        seg = base[p + js * 4:p + (js + length) * 4]
        for k in range(_U(0), _U(length)):
            r0[k] = seg[4 * k]
            r1[k] = seg[4 * k + _U(1)]
            r2[k] = seg[4 * k + _U(2)]
            r3[k] = seg[4 * k + _U(3)]
        return
    for k in range(length):
        q = p + (js + k) * n_stride
        r0[k] = base[q]
        r1[k] = base[q + 1]
        r2[k] = base[q + 2]
        r3[k] = base[q + 3]


@helper
def _put_four(src, k0, k1, flat, start):
    """``_put_lanes`` of four lanes into outputs four apart (the whole row of the
    axis): one contiguous segment written at constant offsets."""
    r0 = src[0]
    r1 = src[1]
    r2 = src[2]
    r3 = src[3]
    seg = flat[start + k0 * 4:start + k1 * 4]
    for t in range(_U(0), _U(k1 - k0)):
        k = t + _U(k0)
        seg[4 * t] = r0[k]
        seg[4 * t + _U(1)] = r1[k]
        seg[4 * t + _U(2)] = r2[k]
        seg[4 * t + _U(3)] = r3[k]


@helper
def _copy_lanes(base, p, n_stride, js, length, lanes, table, like, nan_only, dst, bad):
    """``dst[l, k] = base[p + (js + k) * n_stride + l]``: the walks [js, js + length)
    of ``lanes`` contiguous lanes, each made a contiguous row; ``bad[l]`` counts
    lane l's elements that are NaN (``nan_only``) or not finite (counted along the
    rows afterwards, vectorised)."""
    if lanes == 4:
        _copy_four(base, p, n_stride, js, length, dst)
    else:
        start = 0
        if lanes == COPY_LANES and _c_rows(dst):  # whole tiles transposed in registers
            start = _transpose_tiles(dst, 0, 1, dst.shape[1], base, p + js * n_stride,
                                     n_stride, n_stride, length)
        for k in range(start, length):
            q = p + (js + k) * n_stride
            row = base[q:q + lanes]
            for lane in range(lanes):
                dst[lane, k] = row[lane]
    for lane in range(lanes):
        seg = dst[lane, :length]
        count = 0
        for k in range(length):
            count += _bad(seg[k], table, like, nan_only)
        bad[lane] = count


@helper
def _put_lanes(src, k0, k1, lanes, flat, start, step):
    """``flat[start + k * step + l] = src[l, k]`` for k in [k0, k1): rows of
    copied-out walks back into the lanes of the output."""
    if lanes == 4 and step == 4:
        _put_four(src, k0, k1, flat, start)
        return
    if lanes == COPY_LANES and _c_rows(src):  # whole tiles transposed in registers
        k0 += _transpose_tiles(flat, start + k0 * step, step, step, src, k0, 1, src.shape[1],
                               k1 - k0)
    for k in range(k0, k1):
        q = start + k * step
        row = flat[q:q + lanes]
        for lane in range(lanes):
            row[lane] = src[lane, k]


#: (The sums, variances and extremes below each take their tasks' walks as
#: contiguous rows: copied out first, their NaN or non-finite elements counted on
#: the way, so that every pass over a walk reads with stride 1, from cache.)


@helper
def _sum_walks(rows, width, walks, bad, lens, firsts, window, min_count, mean, table, like,
               flat, starts, step, group, scratch):
    """Moving sums (means) of ``walks`` copied-out walks (row s of ``rows``, with
    ``bad[s]`` non-finite elements, ``lens[s]`` positions, outputs from
    ``firsts[s]`` on into ``flat[starts[s] + k * step]``): the finite ones STREAMS
    at a time by ``_finite_sums``, the others one by one by ``_sum_lane``.
    ``group`` is a (4, STREAMS) int64 scratch."""
    rows_flat = rows.reshape(rows.size)
    taken = 0
    for s in range(walks):
        if bad[s]:
            _sum_lane(rows_flat, s * width, 0, firsts[s], lens[s], window, min_count, mean,
                      table, like, flat, starts[s], step)
            continue
        group[0, taken] = s * width
        group[1, taken] = lens[s]
        group[2, taken] = firsts[s]
        group[3, taken] = starts[s]
        taken += 1
        if taken == STREAMS:
            _finite_sums(rows_flat, group[0], group[1], group[2], window, min_count, mean,
                         table, like, flat, group[3], step, taken, scratch)
            taken = 0
    if taken:
        _finite_sums(rows_flat, group[0], group[1], group[2], window, min_count, mean,
                     table, like, flat, group[3], step, taken, scratch)


@kernel(nrt=True)
def moving_sum_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                      mid_shape, mid_strides, inner, inner_stride, window, min_count, block_len,
                      mean, table, out):
    """Moving sums (``mean=False``) or means of a ``ScanView`` into ``out`` (outer,
    n, mid, inner) of float32 or float64; ``table`` as ``kernels.common.load``."""
    mids = block_size(mid_shape)
    blocks = (n + block_len - 1) // block_len
    groups = block_size(outer_shape) * mids
    like = np.empty(0, np.float64)
    flat = out.reshape(out.size)
    step = mids * inner  # out[o, j + 1, m, i] - out[o, j, m, i] in flat
    width = min(n, block_len + window - 1)
    scratch = np.empty((STREAMS, CHUNK))
    group = np.empty((4, STREAMS), np.int64)
    if _row_order(inner, inner_stride, n_stride):  # lanes copied out, walked, put back
        lane_blocks = (inner + COPY_LANES - 1) // COPY_LANES
        held = min(COPY_LANES, inner)  # rows of scratch (fresh pages fault in: only the used)
        rows = np.empty((held, width), base.dtype)
        res = np.empty((held, width), out.dtype)
        info = np.empty((4, COPY_LANES), np.int64)  # bad, lens, firsts, starts
        lo, hi = part_range(groups * lane_blocks * blocks, part, parts)
        for task in range(lo, hi):
            p, o, m, i0, lanes, j0, j1, js = _rows_task(task, lane_blocks, blocks, mids, offset,
                                                        outer_shape, outer_strides, mid_shape,
                                                        mid_strides, inner, n, block_len, window)
            _copy_lanes(base, p, n_stride, js, j1 - js, lanes, table, like, False, rows, info[0])
            for lane in range(lanes):
                info[1, lane] = j1 - js
                info[2, lane] = j0 - js
                info[3, lane] = lane * width
            _sum_walks(rows, width, lanes, info[0], info[1], info[2], window, min_count, mean,
                       table, like, res.reshape(res.size), info[3], 1, group, scratch)
            _put_lanes(res, j0 - js, j1 - js, lanes, flat,
                       ((o * n + js) * mids + m) * inner + i0, step)
        return
    lanes_all = groups * inner
    units = lanes_all * blocks
    rows = np.empty((STREAMS, width), base.dtype)
    info = np.empty((4, STREAMS), np.int64)
    where = np.empty((2, STREAMS), np.int64)  # first elements, first positions
    lo, hi = part_range((units + STREAMS - 1) // STREAMS, part, parts)
    for task in range(lo, hi):
        walks = 0
        for u in range(task * STREAMS, min(task * STREAMS + STREAMS, units)):
            # the walks of a task: neighbouring lanes over one block (u's lane fastest)
            w = (u % lanes_all) * blocks + u // lanes_all
            p, o, m, i, j0, j1, js = _task_lane(w, inner, blocks, mids, offset, outer_shape,
                                                outer_strides, mid_shape, mid_strides,
                                                inner_stride, block_len, n, window)
            where[0, walks] = p
            where[1, walks] = js
            info[1, walks] = j1 - js
            info[2, walks] = j0 - js
            info[3, walks] = ((o * n + js) * mids + m) * inner + i
            walks += 1
        if _adjacent_walks(where, info, walks):
            # four neighbouring lanes (a transposed tall table's rows): copied out at once
            _copy_lanes(base, where[0, 0], n_stride, where[1, 0], info[1, 0], STREAMS, table,
                        like, False, rows, info[0])
        else:
            for s in range(walks):
                info[0, s] = _gather(base, where[0, s], n_stride, where[1, s], info[1, s],
                                     table, like, False, rows[s])
        _sum_walks(rows, width, walks, info[0], info[1], info[2], window, min_count, mean, table,
                   like, flat, info[3], step, group, scratch)


# ------------------------------------------------------------------------- variances


@helper
def _var_emit(count, finite, m2, min_count, ddof, root):
    """The output of one window: NaN below min_count, at count - ddof <= 0, or
    with an infinity in the window."""
    dof = count - ddof
    if count < min_count or dof <= 0 or finite != count:
        return np.nan
    v = max(m2, 0.0) / dof
    return math.sqrt(v) if root else v


#: A running M2 is computed afresh when one step changed it by more than this
#: many times what is left (a huge value leaving the window would leave its
#: rounding error behind: ~2**-52 of the change, then dwarfing the true M2).
_RECOMPUTE_RATIO = 2.0 ** 20


@helper
def _var_window(base, p, lo, hi, shift, table, like):
    """(mean, M2) of the finite values at positions [lo, hi) less *shift*, by two
    passes."""
    n = 0
    total = 0.0
    for k in range(lo, hi):
        v = load(base[p + k], table, like)
        if v - v == 0.0:
            total += v - shift
            n += 1
    mean = total / n if n else 0.0
    m2 = 0.0
    for k in range(lo, hi):
        v = load(base[p + k], table, like)
        if v - v == 0.0:
            d = (v - shift) - mean
            m2 += d * d
    return mean, m2


@helper
def _var_lane(base, p, js, j0, j1, window, min_count, ddof, root, table, like, flat,
              start, step):
    """Moving variances (standard deviations) of positions [j0, j1) of one lane, into
    ``flat[start + j * step]``."""
    count = 0    # elements that are not NaN
    finite = 0   # of which finite: the ones in mean and m2
    mean = 0.0
    m2 = 0.0
    inv = 0.0    # 1 / finite
    same = 0     # the latest finite values equal to the last one, in a row
    last = 0.0
    shift = np.nan  # the task's first finite value: every value is taken less it
    jw = min(js + window, j1)
    for j in range(js, j1):
        raw = load(base[p + j], table, like)
        fa = raw - raw == 0.0
        if fa and shift != shift:
            shift = raw
        a = raw - shift
        fb = False
        b = 0.0
        if j >= jw:
            b = load(base[p + j - window], table, like)
            fb = b - b == 0.0
            count -= 1 if b == b else 0
            b -= shift
        count += 1 if raw == raw else 0
        if fa and fb:  # one in, one out: the count stays
            d = a - b
            old = mean
            mean = old + d * inv
            change = d * ((a - mean) + (b - old))
            m2 += change
            if abs(change) > _RECOMPUTE_RATIO * m2:  # cancellation: the window afresh
                mean, m2 = _var_window(base, p, j - window + 1, j + 1, shift, table,
                                       like)
        elif fa:  # one in
            finite += 1
            inv = 1.0 / finite
            d = a - mean
            mean += d * inv
            m2 += d * (a - mean)
        elif fb:  # one out
            finite -= 1
            if finite == 0:
                mean = 0.0
                m2 = 0.0
                inv = 0.0
            else:
                inv = 1.0 / finite
                d = b - mean
                mean -= d * inv
                change = d * (b - mean)
                m2 -= change
                if abs(change) > _RECOMPUTE_RATIO * m2:  # cancellation: the window afresh
                    mean, m2 = _var_window(base, p, j - window + 1, j + 1, shift,
                                           table, like)
        if fa:
            same = same + 1 if raw == last else 1
            last = raw
        if same >= finite and finite > 0:  # every finite value in the window is `last`:
            mean = last - shift             # exact again (a variance of 0, not a residue)
            m2 = 0.0
        if j >= j0:
            flat[start + j * step] = _var_emit(count, finite, m2, min_count, ddof, root)


@helper
def _emit_vars(s, k0, k1, first, window, min_count, ddof, root, flat, start, step):
    """Outputs of the relative positions k in [max(k0, first), k1) of a finite walk
    from its M2s ``s[k - k0]`` (``_var_emit`` with the window's count
    ``min(k + 1, window)``, all of it finite)."""
    lo = max(k0, first)
    if lo >= k1:
        return
    if lo >= window - 1 and window - ddof > 0:  # full windows: one divisor
        dof = window - ddof
        if step == 1:
            o = flat[start + lo:start + k1]
            src = s[lo - k0:k1 - k0]
            if root:
                for t in range(k1 - lo):
                    o[t] = math.sqrt(max(src[t], 0.0) / dof)
            else:
                for t in range(k1 - lo):
                    o[t] = max(src[t], 0.0) / dof
        else:
            for k in range(lo, k1):
                v = max(s[k - k0], 0.0) / dof
                flat[start + k * step] = math.sqrt(v) if root else v
        return
    for k in range(lo, k1):
        count = min(k + 1, window)
        flat[start + k * step] = _var_emit(count, count, s[k - k0], min_count, ddof, root)


@helper
def _loaded(base, q, count, table, like, dst):
    """``dst[t] = load(base[q + t])`` for t in [0, count)."""
    src = base[q:q + count]
    for t in range(count):
        dst[t] = load(src[t], table, like)


@helper
def _var_steps(ra, rb, s, t0, t1, shift, inv, finite, mean, m2, same, last):
    """Steps [t0, t1) of a full finite window (``_var_lane``'s one in, one out):
    ``ra[t]``/``rb[t]`` the elements entering and leaving, the M2s into ``s[t]``.
    Returns ``(t, mean, m2, same, last)`` at the first step whose change to M2
    calls for the window afresh (its M2 not stored, its run not counted), or
    ``t1``. The caller does that step: the hot loop stays free of the call."""
    for t in range(t0, t1):
        raw = ra[t]
        a = raw - shift
        b = rb[t] - shift
        d = a - b
        old = mean
        mean = old + d * inv
        change = d * ((a - mean) + (b - old))
        m2 += change
        if abs(change) > _RECOMPUTE_RATIO * m2:
            return t, mean, m2, same, last
        same = same + 1 if raw == last else 1
        last = raw
        if same >= finite:
            mean = last - shift
            m2 = 0.0
        s[t] = m2
    return t1, mean, m2, same, last


@helper
def _finite_var(base, q, length, first, window, min_count, ddof, root, table, like,
                flat, start, step, s, ra, rb):
    """Moving variances (standard deviations) of one finite walk (as
    ``_finite_sums``'s walks): ``_var_lane``'s arithmetic with no NaN or infinity to
    branch on, the M2s of a chunk into ``s`` and the outputs from them in a
    vectorised pass."""
    shift = load(base[q], table, like)
    mean = 0.0
    m2 = 0.0
    inv = 0.0
    finite = 0
    same = 0
    last = 0.0
    for k0 in range(0, length, CHUNK):
        k1 = min(k0 + CHUNK, length)
        for k in range(k0, min(k1, window)):  # the window fills: one in
            raw = load(base[q + k], table, like)
            a = raw - shift
            finite += 1
            inv = 1.0 / finite
            d = a - mean
            mean += d * inv
            m2 += d * (a - mean)
            same = same + 1 if raw == last else 1
            last = raw
            if same >= finite:
                mean = last - shift
                m2 = 0.0
            s[k - k0] = m2
        kf = max(k0, window)
        if kf < k1:  # one in, one out: the elements read as float64 first (vectorised)
            _loaded(base, q + kf, k1 - kf, table, like, ra)
            _loaded(base, q + kf - window, k1 - kf, table, like, rb)
        t = 0
        while kf + t < k1:
            t, mean, m2, same, last = _var_steps(ra, rb, s[kf - k0:], t, k1 - kf, shift, inv,
                                                 finite, mean, m2, same, last)
            if kf + t < k1:  # cancellation at step t: the window afresh, then the step's end
                k = kf + t
                mean, m2 = _var_window(base, q, k - window + 1, k + 1, shift, table,
                                       like)
                same = same + 1 if ra[t] == last else 1
                last = ra[t]
                if same >= finite:
                    mean = last - shift
                    m2 = 0.0
                s[k - k0] = m2
                t += 1
        _emit_vars(s, k0, k1, first, window, min_count, ddof, root, flat, start, step)


@kernel(nrt=True)
def moving_var_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                      mid_shape, mid_strides, inner, inner_stride, window, min_count, block_len,
                      ddof, root, table, out):
    """Moving variances (``root=False``) or standard deviations of a ``ScanView``
    into ``out`` (outer, n, mid, inner) of float32 or float64."""
    mids = block_size(mid_shape)
    blocks = (n + block_len - 1) // block_len
    groups = block_size(outer_shape) * mids
    like = np.empty(0, np.float64)
    flat = out.reshape(out.size)
    step = mids * inner  # out[o, j + 1, m, i] - out[o, j, m, i] in flat
    width = min(n, block_len + window - 1)
    scratch = np.empty((3, CHUNK + 16))  # rows not 4 KiB apart: no false store-load aliasing
    if _row_order(inner, inner_stride, n_stride):  # lanes copied out, walked, put back
        lane_blocks = (inner + COPY_LANES - 1) // COPY_LANES
        held = min(COPY_LANES, inner)  # rows of scratch (fresh pages fault in: only the used)
        rows = np.empty((held, width), base.dtype)
        res = np.empty((held, width), out.dtype)
        bad = np.empty(COPY_LANES, np.int64)
        rows_flat = rows.reshape(rows.size)
        res_flat = res.reshape(res.size)
        lo, hi = part_range(groups * lane_blocks * blocks, part, parts)
        for task in range(lo, hi):
            p, o, m, i0, lanes, j0, j1, js = _rows_task(task, lane_blocks, blocks, mids, offset,
                                                        outer_shape, outer_strides, mid_shape,
                                                        mid_strides, inner, n, block_len, window)
            _copy_lanes(base, p, n_stride, js, j1 - js, lanes, table, like, False, rows, bad)
            for lane in range(lanes):
                _var_walk(rows_flat, lane * width, j1 - js, j0 - js, window, min_count, ddof,
                          root, table, like, res_flat, lane * width, 1, bad[lane], scratch)
            _put_lanes(res, j0 - js, j1 - js, lanes, flat,
                       ((o * n + js) * mids + m) * inner + i0, step)
        return
    row = np.empty(width, base.dtype)
    lo, hi = part_range(groups * inner * blocks, part, parts)
    for task in range(lo, hi):
        p, o, m, i, j0, j1, js = _task_lane(task, inner, blocks, mids, offset, outer_shape,
                                            outer_strides, mid_shape, mid_strides, inner_stride,
                                            block_len, n, window)
        bad = _gather(base, p, n_stride, js, j1 - js, table, like, False, row)
        _var_walk(row, 0, j1 - js, j0 - js, window, min_count, ddof, root, table, like, flat,
                  ((o * n + js) * mids + m) * inner + i, step, bad, scratch)


@helper
def _var_walk(rows, q, length, first, window, min_count, ddof, root, table, like, flat, start,
              step, bad, scratch):
    """The moving variances of one copied-out walk (``rows[q:q + length]``, with
    *bad* non-finite elements) into ``flat[start + k * step]`` from ``first`` on."""
    if bad == 0:
        _finite_var(rows, q, length, first, window, min_count, ddof, root, table, like, flat,
                    start, step, scratch[0], scratch[1], scratch[2])
    else:
        _var_lane(rows, q, 0, first, length, window, min_count, ddof, root, table, like, flat,
                  start, step)


# -------------------------------------------------------------------------- extremes


#: Windows up to this long, on a contiguous walk with no NaN, not taken by the
#: doubling (since the positions go there too: windows of 1 and 2, and positions of
#: windows from ``DOUBLING_POSITIONS_BELOW``, never this short), are reduced
#: directly: ``window`` passes of selects over a chunk of outputs, vectorised (the
#: blocks' chains cost ~40 cycles per element at window 5 on random data).
SMALL_WINDOW = 12
#: Windows wider than this, on a walk with no NaN, are found by doubling
#: (``_extreme_walk_doubling``: vectorised passes), their positions too (as int32
#: offsets into a chunk: int64 ones beside float32 values kept the passes scalar)
DOUBLING_FROM = 2
#: Positions by doubling only for windows below this (their int32 offsets)
DOUBLING_POSITIONS_BELOW = 1 << 30


@helper
def _extreme_walk_small(base, q, length, first, window, min_count, invert, table, like, cv,
                        ci, values, flat_v, indices, flat_i, start, step, origin):
    """``_extreme_walk_doubling``'s outputs, of a contiguous walk (stride 1) for a window of at
    most SMALL_WINDOW: each output's window read directly, oldest to latest (a
    later element wins ties), a chunk of outputs at a time in ``cv``/``ci``."""
    for k in range(first, min(window - 1, length)):  # partial windows at the start
        v = load(base[q], table, like)
        vk = 0
        for kk in range(1, k + 1):
            y = load(base[q + kk], table, like)
            take = (y <= v) if invert else (y >= v)
            v = y if take else v
            vk = kk if take else vk
        o = start + k * step
        if k + 1 >= min_count:
            if values:
                flat_v[o] = v
            if indices:
                flat_i[o] = origin + vk
        else:
            if values:
                flat_v[o] = np.nan
            if indices:
                flat_i[o] = -1
    size = cv.size
    for c0 in range(max(first, window - 1), length, size):
        c1 = min(c0 + size, length)
        m = c1 - c0
        oldest = base[q + c0 - window + 1:q + c1 - window + 1]
        for t in range(m):
            cv[t] = load(oldest[t], table, like)
            ci[t] = c0 - window + 1 + t
        for d in range(window - 2, -1, -1):
            src = base[q + c0 - d:q + c1 - d]
            at = c0 - d
            if indices:
                for t in range(m):
                    y = load(src[t], table, like)
                    take = (y <= cv[t]) if invert else (y >= cv[t])
                    cv[t] = y if take else cv[t]
                    ci[t] = at + t if take else ci[t]
            else:
                for t in range(m):
                    y = load(src[t], table, like)
                    cv[t] = y if ((y <= cv[t]) if invert else (y >= cv[t])) else cv[t]
        if step == 1:
            if values:
                ov = flat_v[start + c0:start + c1]
                for t in range(m):
                    ov[t] = cv[t]
            if indices:
                oi = flat_i[start + c0:start + c1]
                for t in range(m):
                    oi[t] = origin + ci[t]
        else:
            for t in range(m):
                o = start + (c0 + t) * step
                if values:
                    flat_v[o] = cv[t]
                if indices:
                    flat_i[o] = origin + ci[t]


@helper
def _extreme_walk_doubling(base, q, length, first, window, min_count, invert, table, like,
                           ws, wi, values, flat_v, indices, flat_i, start, step, origin):
    """``_extreme_walk``'s outputs of a contiguous walk (stride 1) with no NaN, by
    doubling: the extrema of runs of 2, 4, ... ``span`` elements (the largest power of
    two up to the window), each level from the one before in one vectorised pass,
    and the window ending at k the later of two runs of ``span`` that cover it. The
    later element wins every tie, as in van Herk/Gil-Werman's blocks, so each output
    is the latest extreme of its window, their bits (a -0.0 or a +0.0 among equal
    zeros) and their position; but every pass is a select over a chunk, where the
    blocks' two chains of dependent compares ran a branch per element ((1024, 1024)
    float32, window 20: 6.4 -> 0.34 ms on an AMD EPYC Zen 5, 1 thread; the direct
    windows of width 12 took 0.75). ``ws``: two rows of more than the fitted window
    (a chunk of outputs' windows, a level and the next; the callers add ``CHUNK``);
    ``wi``: their int64 twin, whose rows hold the positions (where *indices*) as
    int32 offsets into the chunk: int64 positions beside float32 values kept the
    passes scalar (0.4-0.56 ns an element), int32 ones vectorise."""
    # the partial windows at the start: a running extremum (the later on ties)
    v = load(base[q], table, like)
    vk = 0
    for k in range(min(window - 1, length)):
        y = load(base[q + k], table, like)
        take = (y <= v) if invert else (y >= v)
        v = y if take else v
        vk = k if take else vk
        if k >= first:
            o = start + k * step
            full = k + 1 >= min_count
            if values:
                flat_v[o] = v if full else np.nan
            if indices:
                flat_i[o] = origin + vk if full else -1
    span = 1
    while span * 2 <= window:
        span *= 2
    h = _U(window - span)  # the second run of a window starts this far into it
    most = ws.shape[1] - window + 1  # outputs per chunk: their windows fill a row
    pos = wi.view(np.int32)  # two rows of (at least) ws's width
    for c0 in range(max(first, window - 1), length, most):
        c1 = min(c0 + most, length)
        a = c0 - window + 1  # the first window's first element
        size = c1 - a
        src = base[q + a:q + c1]
        cv = ws[0]
        for t in range(_U(0), _U(size)):
            cv[t] = load(src[t], table, like)
        if indices:
            ci = pos[0]
            for t in range(_U(0), _U(size)):
                ci[t] = np.int32(t)
        run = 1
        level = 0
        while run < span:  # row 1 - level: the extreme of the run of 2 * run from t
            cv, nv = ws[level], ws[1 - level]  # two rows, not one in place: vectorised
            r = _U(run)  # unsigned: a signed t + run is checked for wrapping around
            if indices:
                _doubled_with_positions(cv, nv, pos[level], pos[1 - level], r,
                                        _U(size - 2 * run + 1), invert)
            else:
                for t in range(_U(0), _U(size - 2 * run + 1)):
                    y = cv[t + r]
                    nv[t] = y if ((y <= cv[t]) if invert else (y >= cv[t])) else cv[t]
            run *= 2
            level = 1 - level
        cv = ws[level]
        if indices:  # the last level into the other rows, then out
            _doubled_with_positions(cv, ws[1 - level], pos[level], pos[1 - level], h,
                                    _U(c1 - c0), invert)
            _put_with_positions(ws[1 - level], pos[1 - level], _U(c1 - c0), values, flat_v,
                                flat_i, start + c0 * step, step, origin + a)
        elif step == 1:
            ov = flat_v[start + c0:start + c1]
            for t in range(_U(0), _U(c1 - c0)):
                y = cv[t + h]
                ov[t] = y if ((y <= cv[t]) if invert else (y >= cv[t])) else cv[t]
        else:
            for t in range(_U(0), _U(c1 - c0)):
                y = cv[t + h]
                flat_v[start + (c0 + t) * step] = \
                    y if ((y <= cv[t]) if invert else (y >= cv[t])) else cv[t]


@helper
def _doubled_with_positions(cv, nv, ci, ni, r, count, invert):
    """One level of ``_extreme_walk_doubling`` with positions: ``nv[t], ni[t]`` the
    extreme of ``cv[t]`` and ``cv[t + r]`` (the later on ties) and its offset, for
    t < *count*. Every load is made before the selects: a load under a select
    made it a branch (0.59 against 0.12-0.16 ns an element, AMD EPYC Zen 4)."""
    for t in range(_U(0), count):
        y = cv[t + r]
        x = cv[t]
        later = ci[t + r]
        earlier = ci[t]
        take = (y <= x) if invert else (y >= x)
        nv[t] = y if take else x
        ni[t] = later if take else earlier


@helper
def _put_with_positions(nv, ni, count, values, flat_v, flat_i, start, step, at):
    """Outputs t < *count* of ``_extreme_walk_doubling`` with positions, at ``start + t
    * step``: the value ``nv[t]`` (where *values*) and the position ``at + ni[t]``.
    Contiguous outputs in loops of their own: the last level written with a stride
    ran its selects as branches (5 ns an element on random data)."""
    if step == 1:
        oi = flat_i[start:start + count]
        for t in range(_U(0), count):
            oi[t] = at + ni[t]
        if values:
            ov = flat_v[start:start + count]
            for t in range(_U(0), count):
                ov[t] = nv[t]
        return
    for t in range(_U(0), count):
        o = start + np.int64(t) * step
        if values:
            flat_v[o] = nv[t]
        flat_i[o] = at + ni[t]


@helper
def _extreme_walk_finite(base, q, length, first, window, min_count, invert, table,
                         like, ws, wi, values, flat_v, indices, flat_i, start, step, origin):
    """``_extreme_walk`` of a walk with no NaN: no check for none in the chains,
    the count of a window is ``min(k + 1, window)``, and each block's backward
    (suffix) and forward (prefix) chains run in one loop, so that their latencies
    overlap."""
    block = 0
    for b0 in range(0, length, window):
        b1 = min(b0 + window, length)
        row = block & 1
        block += 1
        sv = ws[row]
        si = wi[row]
        pv = ws[1 - row]  # the previous block's suffixes
        pi = wi[1 - row]
        s = load(base[q + b1 - 1], table, like)
        sk = b1 - 1
        p = load(base[q + b0], table, like)
        pk = b0
        joined = min(b1, b0 + window - 1) if b0 > 0 else b0  # windows from the block before
        for t in range(b1 - b0):
            kb = b1 - 1 - t  # backward: the suffix extrema, for the next block's windows
            xb = load(base[q + kb], table, like)
            take = (xb < s) if invert else (xb > s)
            s = xb if take else s
            sk = kb if take else sk
            sv[kb - b0] = s
            si[kb - b0] = sk
            k = b0 + t  # forward: the prefix extremum, joined to the block before's suffix
            x = load(base[q + k], table, like)
            take = (x <= p) if invert else (x >= p)
            p = x if take else p
            pk = k if take else pk
            if k < first:
                continue
            v = p
            vk = pk
            if k < joined:
                e = pv[t + 1]
                ek = pi[t + 1]  # loaded first: the selects below stay selects, not branches
                later = (v <= e) if invert else (v >= e)
                v = v if later else e
                vk = pk if later else ek
            o = start + k * step
            if min(k + 1, window) >= min_count:
                if values:
                    flat_v[o] = v
                if indices:
                    flat_i[o] = origin + vk
            else:
                if values:
                    flat_v[o] = np.nan
                if indices:
                    flat_i[o] = -1


@helper
def _extreme_walk(base, q, length, first, window, min_count, invert, table, like,
                  ws, wi, values, flat_v, indices, flat_i, start, step, origin, finite):
    """Moving maxima (minima when *invert*) of one walk by van Herk/Gil-Werman
    blocks: the walk (``base[q + k]``, k in [0, length)) is cut into blocks
    of ``window`` positions; a backward pass over each block keeps its suffix
    extrema (``ws``/``wi`` rows ``b % 2``), a forward pass its prefix extremum, and
    the window ending at k is the suffix from ``k - window + 1`` in the block before
    joined to the prefix up to k. Three compares per element whatever the window.
    Ties go to the later element, NaN never wins (it wins
    only over an empty start: none), and a running count of the values that are
    not NaN gives ``min_count``. Outputs from position ``first`` on, to
    ``flat_v``/``flat_i[start + k * step]`` (each when *values*/*indices*), indices
    absolute: ``origin + k``."""
    if finite and window > DOUBLING_FROM and (not indices or window < DOUBLING_POSITIONS_BELOW):
        _extreme_walk_doubling(base, q, length, first, window, min_count, invert, table, like,
                               ws, wi, values, flat_v, indices, flat_i, start, step, origin)
        return
    if finite and window <= SMALL_WINDOW:
        _extreme_walk_small(base, q, length, first, window, min_count, invert, table, like,
                            ws[0], wi[0], values, flat_v, indices, flat_i, start, step, origin)
        return
    if finite:
        _extreme_walk_finite(base, q, length, first, window, min_count, invert, table,
                             like, ws, wi, values, flat_v, indices, flat_i, start, step, origin)
        return
    count = 0
    block = 0
    for b0 in range(0, length, window):
        b1 = min(b0 + window, length)
        row = block & 1
        sv = ws[row]
        si = wi[row]
        pv = ws[1 - row]  # the previous block's suffixes
        pi = wi[1 - row]
        # backward: suffix extrema of this block (for the next block's windows)
        s = load(base[q + b1 - 1], table, like)
        sk = b1 - 1
        sv[b1 - 1 - b0] = s
        si[b1 - 1 - b0] = sk
        for k in range(b1 - 2, b0 - 1, -1):
            x = load(base[q + k], table, like)
            take = ((x < s) if invert else (x > s)) or s != s
            s = x if take else s
            sk = k if take else sk
            sv[k - b0] = s
            si[k - b0] = sk
        # forward: prefix extrema joined to the previous block's suffixes
        p = load(base[q + b0], table, like)
        pk = b0
        for k in range(b0, b1):
            x = load(base[q + k], table, like)
            if k > b0:
                take = ((x <= p) if invert else (x >= p)) or p != p
                p = x if take else p
                pk = k if take else pk
            count += 1 if x == x else 0
            if k >= window:
                y = load(base[q + (k - window)], table, like)
                count -= 1 if y == y else 0
            if k < first:
                continue
            v = p
            vk = pk
            w0 = k - window + 1
            if w0 > 0 and w0 < b0:  # the window starts in the block before
                e = pv[w0 - b0 + window]
                later = ((v <= e) if invert else (v >= e)) or e != e
                v = v if later else e
                vk = pk if later else pi[w0 - b0 + window]
            o = start + k * step
            if count >= min_count:
                if values:
                    flat_v[o] = v
                if indices:
                    flat_i[o] = origin + vk
            else:
                if values:
                    flat_v[o] = np.nan
                if indices:
                    flat_i[o] = -1
        block += 1


@kernel(nrt=True)
def moving_extreme_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                          mid_shape, mid_strides, inner, inner_stride, window, min_count,
                          block_len, invert, table, like, want_values, values, want_indices,
                          indices):
    """Moving maxima (``invert=False``) or minima of a ``ScanView``: ``values``
    (outer, n, mid, inner) of float32/float64 and/or ``indices`` (int64, the same
    shape); an output not wanted is a (1, 1, 1, 1) array, never written. ``like``
    is a zero-size array of the dtype elements are compared in (the input's own;
    float32 for float16 bits)."""
    mids = block_size(mid_shape)
    blocks = (n + block_len - 1) // block_len
    groups = block_size(outer_shape) * mids
    cap = min(window, max(n, 1)) + CHUNK  # a window and a chunk of outputs
    ws = np.empty((2, cap), like.dtype)  # two blocks' suffix extrema
    wi = np.empty((2, cap), np.int64)
    flat_v = values.reshape(values.size)
    flat_i = indices.reshape(indices.size)
    step = mids * inner  # out[o, j + 1, m, i] - out[o, j, m, i] in flat
    width = min(n, block_len + window - 1)
    if _row_order(inner, inner_stride, n_stride):  # lanes copied out, walked, put back
        lane_blocks = (inner + COPY_LANES - 1) // COPY_LANES
        held = min(COPY_LANES, inner)  # rows of scratch (fresh pages fault in: only the used)
        rows = np.empty((held, width), base.dtype)
        res_v = np.empty((held, width) if want_values else (1, 1), values.dtype)
        res_i = np.empty((held, width) if want_indices else (1, 1), np.int64)
        bad = np.empty(COPY_LANES, np.int64)
        rows_flat = rows.reshape(rows.size)
        res_v_flat = res_v.reshape(res_v.size)
        res_i_flat = res_i.reshape(res_i.size)
        lo, hi = part_range(groups * lane_blocks * blocks, part, parts)
        for task in range(lo, hi):
            p, o, m, i0, lanes, j0, j1, js = _rows_task(task, lane_blocks, blocks, mids, offset,
                                                        outer_shape, outer_strides, mid_shape,
                                                        mid_strides, inner, n, block_len, window)
            _copy_lanes(base, p, n_stride, js, j1 - js, lanes, table, like, True, rows, bad)
            for lane in range(lanes):
                q = lane * width
                _extreme_walk(rows_flat, q, j1 - js, j0 - js, window, min_count, invert, table,
                              like, ws, wi, want_values, res_v_flat, want_indices, res_i_flat,
                              q, 1, js, bad[lane] == 0)
            start = ((o * n + js) * mids + m) * inner + i0
            if want_values:
                _put_lanes(res_v, j0 - js, j1 - js, lanes, flat_v, start, step)
            if want_indices:
                _put_lanes(res_i, j0 - js, j1 - js, lanes, flat_i, start, step)
        return
    row = np.empty(width, base.dtype)
    lo, hi = part_range(groups * inner * blocks, part, parts)
    for task in range(lo, hi):
        p, o, m, i, j0, j1, js = _task_lane(task, inner, blocks, mids, offset, outer_shape,
                                            outer_strides, mid_shape, mid_strides, inner_stride,
                                            block_len, n, window)
        bad = _gather(base, p, n_stride, js, j1 - js, table, like, True, row)
        _extreme_walk(row, 0, j1 - js, j0 - js, window, min_count, invert, table, like, ws, wi,
                      want_values, flat_v, want_indices, flat_i,
                      ((o * n + js) * mids + m) * inner + i, step, js, bad == 0)

"""Moving-window kernels over a ``ScanView`` (see ``axisops._layout``).

Each output is the reduction of the ``window`` elements ending at its position
along the axis (fewer at the start). The input is walked as ``(outer, n, mid,
inner)`` lanes, and the output is a fresh C-contiguous array of that shape.

Tasks are ``(lane group g = (o, m), lane i, axis block c)``: a block is a fixed run
of ``block_len`` positions along the axis, fixed by the shape and the window and
never by the thread count. A task starts from nothing: it reads the ``window - 1``
elements before its block (its *anchor*), then slides to the end of its block.
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
* Extremes (:func:`moving_extreme_kernel`) keep a monotone wedge (Lemire's
  ascending-minima deque) of positions in a ring buffer: each element is pushed
  once and popped at most once, so the cost per element does not grow with the
  window. Elements that tie the newcomer are popped, so the front is the latest
  of equal extremes (bottleneck's rule); a NaN is never pushed.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import helper, kernel, part_range
from .common import block_offset, block_size, load


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
def _sum_lane(base, p, stride, js, j0, j1, window, min_count, mean, table, like, ol):
    """Moving sums (means) of positions [j0, j1) of one lane, anchored at js."""
    acc = 0.0
    count = 0
    pinf = 0
    ninf = 0
    jw = min(js + window, j1)
    for j in range(js, jw):  # the anchor (and the first, partial windows): adds only
        a = load(base[p + j * stride], table, like)
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
            ol[j] = _sum_emit(acc, count, pinf, ninf, min_count, mean)
    for j in range(jw, j1):  # the window slides: one in, one out
        a = load(base[p + j * stride], table, like)
        b = load(base[p + (j - window) * stride], table, like)
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
        ol[j] = _sum_emit(acc, count, pinf, ninf, min_count, mean)


#: Lanes of one row-order task: running values for this many contiguous lanes at once
#: (a few kB of state, in L1).
ROW_LANES = 256
#: (lane, block) walks interleaved by one lane-order task where all of them are finite,
#: so that their running sums' dependency chains overlap.
STREAMS = 4


@helper
def _row_order(inner, inner_stride, n_stride):
    """Whether the lanes are walked as rows: contiguous inner lanes, the axis further."""
    return inner > 1 and inner_stride == 1 and abs(n_stride) > 1


@helper
def _nonfinite(base, p, stride, js, j1, table, like):
    """Number of elements of positions [js, j1) of a lane that are not finite."""
    bad = 0
    if stride == 1:
        seg = base[p + js:p + j1]
        for k in range(seg.size):
            a = load(seg[k], table, like)
            bad += 0 if a - a == 0.0 else 1
    else:
        for j in range(js, j1):
            a = load(base[p + j * stride], table, like)
            bad += 0 if a - a == 0.0 else 1
    return bad


@helper
def _sum_fill(base, p, stride, js, j0, jw, min_count, mean, table, like, ol):
    """The adds-only start of a finite walk (positions [js, jw)); returns the sum."""
    acc = 0.0
    for j in range(js, jw):
        acc += load(base[p + j * stride], table, like)
        if j >= j0:
            count = j - js + 1
            ol[j] = np.nan if count < min_count else (acc / count if mean else acc)
    return acc


@helper
def _sum_slide(base, p, stride, window, k0, k1, acc, mean, table, like, ol):
    """Positions [k0, k1) of a finite walk whose window is full; returns the sum."""
    back = window * stride
    for j in range(k0, k1):
        q = p + j * stride
        acc += load(base[q], table, like) - load(base[q - back], table, like)
        ol[j] = acc / window if mean else acc
    return acc


@helper
def _sum_slide4(base, p0, p1, p2, p3, stride, window, k0, k1, acc0, acc1, acc2, acc3,
                mean, table, like, o0, o1, o2, o3):
    """``_sum_slide`` of four finite walks at once (relative positions [k0, k1) of
    each; their outputs ``o*`` start at the same relative position)."""
    back = window * stride
    for k in range(k0, k1):
        d = k * stride
        acc0 += load(base[p0 + d], table, like) - load(base[p0 + d - back], table, like)
        acc1 += load(base[p1 + d], table, like) - load(base[p1 + d - back], table, like)
        acc2 += load(base[p2 + d], table, like) - load(base[p2 + d - back], table, like)
        acc3 += load(base[p3 + d], table, like) - load(base[p3 + d - back], table, like)
        if mean:
            o0[k] = acc0 / window
            o1[k] = acc1 / window
            o2[k] = acc2 / window
            o3[k] = acc3 / window
        else:
            o0[k] = acc0
            o1[k] = acc1
            o2[k] = acc2
            o3[k] = acc3
    return acc0, acc1, acc2, acc3


@helper
def _sum_rows(base, p, n_stride, lanes, js, j0, j1, window, min_count, mean, table, like,
              acc, cnt, pinf, ninf, orows):
    """Moving sums of ``lanes`` contiguous lanes at once (row order): positions
    [j0, j1) anchored at js, each lane's state in ``acc``/``cnt``/``pinf``/``ninf``
    and every step a select, the same arithmetic as ``_sum_lane`` lane by lane."""
    for i in range(lanes):
        acc[i] = 0.0
        cnt[i] = 0.0
        pinf[i] = 0.0
        ninf[i] = 0.0
    jw = min(js + window, j1)
    for j in range(js, j1):
        q = p + j * n_stride
        xa = base[q:q + lanes]
        xb = base[q - window * n_stride:q - window * n_stride + lanes] if j >= jw else xa
        out = j >= j0
        slide = j >= jw
        orow = orows[max(j, j0)]
        for i in range(lanes):
            a = load(xa[i], table, like)
            b = load(xb[i], table, like) if slide else np.nan
            fa = a - a == 0.0
            fb = b - b == 0.0
            s = acc[i] + ((a if fa else 0.0) - (b if fb else 0.0))
            acc[i] = s
            c = cnt[i] + ((1.0 if a == a else 0.0) - (1.0 if b == b else 0.0))
            cnt[i] = c
            u = pinf[i] + ((1.0 if a == np.inf else 0.0) - (1.0 if b == np.inf else 0.0))
            pinf[i] = u
            v = ninf[i] + ((1.0 if a == -np.inf else 0.0) - (1.0 if b == -np.inf else 0.0))
            ninf[i] = v
            if out:
                # as _sum_emit: +inf then -inf added (their NaN's bits, not a constant's)
                s = (s + (np.inf if u > 0.0 else 0.0)) - (np.inf if v > 0.0 else 0.0)
                if mean:
                    s = s / (c if c >= 1.0 else 1.0)
                orow[i] = np.nan if c < min_count else s


@kernel
def moving_sum_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                      mid_shape, mid_strides, inner, inner_stride, window, min_count, block_len,
                      mean, table, out):
    """Moving sums (``mean=False``) or means of a ``ScanView`` into ``out`` (outer,
    n, mid, inner) of float32 or float64; ``table`` as ``kernels.common.load``."""
    mids = block_size(mid_shape)
    blocks = (n + block_len - 1) // block_len
    groups = block_size(outer_shape) * mids
    like = np.empty(0, np.float64)
    if _row_order(inner, inner_stride, n_stride):
        lane_blocks = (inner + ROW_LANES - 1) // ROW_LANES
        width = min(inner, ROW_LANES)
        acc = np.empty(width)
        cnt = np.empty(width)
        pinf = np.empty(width)
        ninf = np.empty(width)
        lo, hi = part_range(groups * lane_blocks * blocks, part, parts)
        for task in range(lo, hi):
            c = task % blocks
            t = task // blocks
            b = t % lane_blocks
            g = t // lane_blocks
            o = g // mids
            m = g - o * mids
            i0 = b * ROW_LANES
            i1 = min(i0 + ROW_LANES, inner)
            p = (offset + block_offset(o, outer_shape, outer_strides)
                 + block_offset(m, mid_shape, mid_strides) + i0)
            j0 = c * block_len
            j1 = min(j0 + block_len, n)
            _sum_rows(base, p, n_stride, i1 - i0, max(0, j0 - window + 1), j0, j1, window,
                      min_count, mean, table, like, acc, cnt, pinf, ninf, out[o, :, m, i0:i1])
        return
    units = groups * inner * blocks
    lo, hi = part_range((units + STREAMS - 1) // STREAMS, part, parts)
    ps = np.empty(STREAMS, np.int64)
    j0s = np.empty(STREAMS, np.int64)
    j1s = np.empty(STREAMS, np.int64)
    jss = np.empty(STREAMS, np.int64)
    os_ = np.empty(STREAMS, np.int64)
    ms = np.empty(STREAMS, np.int64)
    is_ = np.empty(STREAMS, np.int64)
    accs = np.empty(STREAMS)
    for task in range(lo, hi):
        u0 = task * STREAMS
        u1 = min(u0 + STREAMS, units)
        finite = 0
        for u in range(u0, u1):
            k = u - u0
            p, o, m, i, j0, j1, js = _task_lane(u, inner, blocks, mids, offset, outer_shape,
                                                outer_strides, mid_shape, mid_strides,
                                                inner_stride, block_len, n, window)
            ps[k], os_[k], ms[k], is_[k], j0s[k], j1s[k], jss[k] = p, o, m, i, j0, j1, js
            if _nonfinite(base, p, n_stride, js, j1, table, like) == 0:
                finite += 1
        if finite == STREAMS:  # four finite walks: interleaved after their adds-only starts
            kmin = n
            for k in range(STREAMS):
                jw = min(jss[k] + window, j1s[k])
                accs[k] = _sum_fill(base, ps[k], n_stride, jss[k], j0s[k], jw, min_count,
                                    mean, table, like, out[os_[k], :, ms[k], is_[k]])
                kmin = min(kmin, j1s[k] - jw)
            # relative step k of walk s is its position jw_s + k
            r = np.empty(STREAMS, np.int64)
            for k in range(STREAMS):
                r[k] = min(jss[k] + window, j1s[k])
            a0, a1, a2, a3 = _sum_slide4(
                base, ps[0] + r[0] * n_stride, ps[1] + r[1] * n_stride,
                ps[2] + r[2] * n_stride, ps[3] + r[3] * n_stride, n_stride, window, 0, kmin,
                accs[0], accs[1], accs[2], accs[3], mean, table, like,
                out[os_[0], r[0]:, ms[0], is_[0]], out[os_[1], r[1]:, ms[1], is_[1]],
                out[os_[2], r[2]:, ms[2], is_[2]], out[os_[3], r[3]:, ms[3], is_[3]])
            accs[0], accs[1], accs[2], accs[3] = a0, a1, a2, a3
            for k in range(STREAMS):
                _sum_slide(base, ps[k], n_stride, window, r[k] + kmin, j1s[k], accs[k], mean,
                           table, like, out[os_[k], :, ms[k], is_[k]])
            continue
        for k in range(u1 - u0):
            ol = out[os_[k], :, ms[k], is_[k]]
            if finite == u1 - u0 or _nonfinite(base, ps[k], n_stride, jss[k], j1s[k], table,
                                               like) == 0:
                jw = min(jss[k] + window, j1s[k])
                acc = _sum_fill(base, ps[k], n_stride, jss[k], j0s[k], jw, min_count, mean,
                                table, like, ol)
                _sum_slide(base, ps[k], n_stride, window, jw, j1s[k], acc, mean, table, like, ol)
            else:
                _sum_lane(base, ps[k], n_stride, jss[k], j0s[k], j1s[k], window, min_count,
                          mean, table, like, ol)


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
def _var_window(base, p, stride, lo, hi, shift, table, like):
    """(mean, M2) of the finite values at positions [lo, hi) less *shift*, by two
    passes."""
    n = 0
    total = 0.0
    for k in range(lo, hi):
        v = load(base[p + k * stride], table, like)
        if v - v == 0.0:
            total += v - shift
            n += 1
    mean = total / n if n else 0.0
    m2 = 0.0
    for k in range(lo, hi):
        v = load(base[p + k * stride], table, like)
        if v - v == 0.0:
            d = (v - shift) - mean
            m2 += d * d
    return mean, m2


@helper
def _var_lane(base, p, stride, js, j0, j1, window, min_count, ddof, root, table, like, ol):
    """Moving variances (standard deviations) of positions [j0, j1) of one lane."""
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
        raw = load(base[p + j * stride], table, like)
        fa = raw - raw == 0.0
        if fa and shift != shift:
            shift = raw
        a = raw - shift
        fb = False
        b = 0.0
        if j >= jw:
            b = load(base[p + (j - window) * stride], table, like)
            fb = b - b == 0.0
            count -= 1 if b == b else 0
            b -= shift
        count += 1 if raw == raw else 0
        if fa and fb:  # one in, one out: the count stays
            d = a - b
            old = mean
            mean = old + d * inv
            step = d * ((a - mean) + (b - old))
            m2 += step
            if abs(step) > _RECOMPUTE_RATIO * m2:  # cancellation: the window afresh
                mean, m2 = _var_window(base, p, stride, j - window + 1, j + 1, shift, table,
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
                step = d * (b - mean)
                m2 -= step
                if abs(step) > _RECOMPUTE_RATIO * m2:  # cancellation: the window afresh
                    mean, m2 = _var_window(base, p, stride, j - window + 1, j + 1, shift,
                                           table, like)
        if fa:
            same = same + 1 if raw == last else 1
            last = raw
        if same >= finite and finite > 0:  # every finite value in the window is `last`:
            mean = last - shift             # exact again (a variance of 0, not a residue)
            m2 = 0.0
        if j >= j0:
            ol[j] = _var_emit(count, finite, m2, min_count, ddof, root)


@kernel
def moving_var_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                      mid_shape, mid_strides, inner, inner_stride, window, min_count, block_len,
                      ddof, root, table, out):
    """Moving variances (``root=False``) or standard deviations of a ``ScanView``
    into ``out`` (outer, n, mid, inner) of float32 or float64."""
    mids = block_size(mid_shape)
    blocks = (n + block_len - 1) // block_len
    tasks = block_size(outer_shape) * mids * inner * blocks
    like = np.empty(0, np.float64)
    lo, hi = part_range(tasks, part, parts)
    for task in range(lo, hi):
        p, o, m, i, j0, j1, js = _task_lane(task, inner, blocks, mids, offset, outer_shape,
                                            outer_strides, mid_shape, mid_strides, inner_stride,
                                            block_len, n, window)
        _var_lane(base, p, n_stride, js, j0, j1, window, min_count, ddof, root, table, like,
                  out[o, :, m, i])


# -------------------------------------------------------------------------- extremes


@helper
def _extreme_lane(base, p, stride, js, j0, j1, window, min_count, invert, table, rv, ri,
                  values, ov, indices, oi):
    """Moving maxima (minima when *invert*) of positions [j0, j1) of one lane: the
    values into ``ov`` and/or the absolute indices into ``oi`` (each written only
    when *values* / *indices*). ``rv``/``ri`` are the wedge's ring buffers (values in the compare
    dtype, positions), of a power-of-two size at least ``min(window, n)``."""
    mask = rv.size - 1
    head = 0
    tail = 0
    count = 0
    for j in range(js, j1):
        if j - window >= js:  # the element leaving the window
            k = j - window
            if tail > head and ri[head & mask] == k:
                head += 1
            b = load(base[p + k * stride], table, rv)
            count -= 1 if b == b else 0
        a = load(base[p + j * stride], table, rv)
        if a == a:
            count += 1
            while tail > head:  # pop the elements the newcomer beats or ties
                last = rv[(tail - 1) & mask]
                if (last < a) if invert else (last > a):
                    break
                tail -= 1
            rv[tail & mask] = a
            ri[tail & mask] = j
            tail += 1
        if j >= j0:
            if count >= min_count:
                if values:
                    ov[j] = rv[head & mask]
                if indices:
                    oi[j] = ri[head & mask]
            else:
                if values:
                    ov[j] = np.nan
                if indices:
                    oi[j] = -1


@kernel
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
    tasks = block_size(outer_shape) * mids * inner * blocks
    cap = 1
    while cap < min(window, max(n, 1)):
        cap *= 2
    rv = np.empty(cap, like.dtype)
    ri = np.empty(cap, np.int64)
    lo, hi = part_range(tasks, part, parts)
    for task in range(lo, hi):
        p, o, m, i, j0, j1, js = _task_lane(task, inner, blocks, mids, offset, outer_shape,
                                            outer_strides, mid_shape, mid_strides, inner_stride,
                                            block_len, n, window)
        ov = values[o, :, m, i] if want_values else values[0, :, 0, 0]
        oi = indices[o, :, m, i] if want_indices else indices[0, :, 0, 0]
        _extreme_lane(base, p, n_stride, js, j0, j1, window, min_count, invert, table, rv, ri,
                      want_values, ov, want_indices, oi)

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
  and an M2 of 0, so such windows give exactly 0 and leave no residue. A window
  holding an infinity gives NaN, as ``numpy.var``.
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


@kernel
def moving_sum_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                      mid_shape, mid_strides, inner, inner_stride, window, min_count, block_len,
                      mean, table, out):
    """Moving sums (``mean=False``) or means of a ``ScanView`` into ``out`` (outer,
    n, mid, inner) of float32 or float64; ``table`` as ``kernels.common.load``."""
    mids = block_size(mid_shape)
    blocks = (n + block_len - 1) // block_len
    tasks = block_size(outer_shape) * mids * inner * blocks
    like = np.empty(0, np.float64)
    lo, hi = part_range(tasks, part, parts)
    for task in range(lo, hi):
        p, o, m, i, j0, j1, js = _task_lane(task, inner, blocks, mids, offset, outer_shape,
                                            outer_strides, mid_shape, mid_strides, inner_stride,
                                            block_len, n, window)
        _sum_lane(base, p, n_stride, js, j0, j1, window, min_count, mean, table, like,
                  out[o, :, m, i])


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
            m2 += d * ((a - mean) + (b - old))
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
                m2 -= d * (b - mean)
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

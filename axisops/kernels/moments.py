"""Means and variances of real floats, each output's count, sum and squared
deviations in one call (``axisops.missing``'s fused path).

The reduction is a :class:`axisops._layout.ReductionView` whose reduced elements
are one run per output (``red_shape`` empty): output ``o`` is ``(q, i)`` = (outer
index, lane), its run ``n`` elements ``n_stride`` apart. Each run is cut into
leaves of :data:`LEAF` elements (at multiples of LEAF); a leaf's sum is one
vectorised loop (:func:`_leaf_sums`, a NaN read as 0 and not counted with
``skip``) and the leaf sums are added in a binary-counter cascade as the sum
kernels add theirs (``kernels.reduce``), so the error stays bounded by the leaf's
length and the tree's depth. The variance takes two passes over the run: the
mean, then the squared deviations from it (never a difference of large sums).

Tasks are outputs (:func:`moments_rows`), or, for outputs too few to share
between threads, the leaves of every output (:func:`leaf_sums`, twice, with the
cascade run by :func:`cascade_rows` between): the leaves and the cascade are the
same either way. Which is taken depends on the shape only (``axisops._moments``),
never on the number of threads: each kernel's compiled leaf loop is its own, and
LLVM may vectorise the two differently (it did on an AMD EPYC with AVX-512).
"""
from __future__ import annotations

import numpy as np

from .._jit import factory, helper, kernel, part_range
from .common import block_offset

#: Elements of a leaf (the sum kernels' lane-order leaf).
LEAF = 512
#: Cascade levels: enough for 2**40 leaves.
_LEVELS = 40


@factory
def _leaf_kernels(skip: bool):
    SKIP = skip

    @helper(reassociate=True)
    def leaf_sum(seg, like):
        """(sum, count) of a contiguous leaf, in *like*'s dtype; a NaN skipped with
        ``skip`` (a select: the loop stays vectorised), else added."""
        s = like.dtype.type(0)
        c = 0
        for k in range(seg.size):
            v = seg[k]
            if SKIP:
                ok = v == v
                s += v if ok else like.dtype.type(0)
                c += 1 if ok else 0
            else:
                s += v
        return s, (c if SKIP else seg.size)

    @helper(reassociate=True)
    def leaf_squares(seg, mean, like):
        """Sum of ``(v - mean) ** 2`` over a contiguous leaf, in *like*'s dtype (NaN
        skipped with ``skip``)."""
        s = like.dtype.type(0)
        for k in range(seg.size):
            d = seg[k] - mean
            if SKIP:
                s += d * d if d == d else like.dtype.type(0)
            else:
                s += d * d
        return s

    return leaf_sum, leaf_squares


@helper
def _push(levels, count, s):
    """Push leaf sum *s* as leaf number *count* of the cascade *levels*."""
    k = 0
    while (count >> k) & 1:
        s = levels[k] + s
        k += 1
    levels[k] = s


@helper
def _total(levels, count):
    """The cascade's total: its full levels added from the smallest up."""
    s = levels[0] * 0
    first = True
    for k in range(_LEVELS):
        if (count >> k) & 1:
            if first:
                s = levels[k]
                first = False
            else:
                s = levels[k] + s
    return s


@helper(inline=True)  # it returns a view: inlined, it takes its caller's flags (see _jit)
def _leaf(base, p, n_stride, j0, j1, buf):
    """Elements ``j0:j1`` of a run as a contiguous array (gathered into *buf* when
    the run is strided)."""
    if n_stride == 1:
        return base[p + j0:p + j1]
    for j in range(j0, j1):
        buf[j - j0] = base[p + j * n_stride]
    return buf[:j1 - j0]


@helper
def _run_start(o, offset, outer_shape, outer_strides, inner, inner_stride):
    q = o // inner
    return offset + block_offset(q, outer_shape, outer_strides) + (o - q * inner) * inner_stride


@factory
def moments_rows(skip: bool, second: bool):
    """Each output's count and mean (``second=False``) or count and sum of squared
    deviations from its mean (``second=True``), a task per output."""
    leaf_sum, leaf_squares = _leaf_kernels(skip)
    SECOND = second

    VARIANT = f"{'nan' if skip else 'all'}_{'second' if second else 'first'}"

    def body(part, parts, base, offset, outer_shape, outer_strides, inner, inner_stride, n,
             n_stride, counts, out, levels, buf):
        """The kernel's loops, without reference counting: each leaf's view cost two
        atomic operations with it (60 % of nanstd of (4096, 64) float32 along axis
        1, perf on an AMD EPYC); *levels* and *buf* are the scratch it allocates."""
        like = out[:0]
        lo, hi = part_range(out.size, part, parts)
        for o in range(lo, hi):
            p = _run_start(o, offset, outer_shape, outer_strides, inner, inner_stride)
            c = 0
            leaves = 0
            for j0 in range(0, n, LEAF):
                s, k = leaf_sum(_leaf(base, p, n_stride, j0, min(n, j0 + LEAF), buf), like)
                _push(levels, leaves, s)
                leaves += 1
                c += k
            mean = out.dtype.type(np.float64(_total(levels, leaves)) / c) if c else \
                out.dtype.type(np.nan)
            counts[o] = c
            if SECOND:
                leaves = 0
                for j0 in range(0, n, LEAF):
                    s = leaf_squares(_leaf(base, p, n_stride, j0, min(n, j0 + LEAF), buf), mean,
                                     like)
                    _push(levels, leaves, s)
                    leaves += 1
                out[o] = _total(levels, leaves)
            else:
                out[o] = mean

    body.__qualname__ = f"moments_rows_body_{VARIANT}"  # a name per variant
    body = helper(body)

    @kernel(nrt=True, variant=VARIANT)
    def moments(part, parts, base, offset, outer_shape, outer_strides, inner, inner_stride, n,
                n_stride, counts, out):
        body(part, parts, base, offset, outer_shape, outer_strides, inner, inner_stride, n,
             n_stride, counts, out, np.empty(_LEVELS, out.dtype),
             np.empty(LEAF if n_stride != 1 else 0, base.dtype))

    return moments


@factory
def leaf_sums(skip: bool, second: bool):
    """The leaves' (sum, count), or with ``second`` their sums of squared deviations
    from ``means[o]``, a task per leaf of every output: ``sums[o, leaf]``."""
    leaf_sum, leaf_squares = _leaf_kernels(skip)
    SECOND = second

    @kernel(nrt=True)
    def leaves(part, parts, base, offset, outer_shape, outer_strides, inner, inner_stride, n,
               n_stride, means, counts, sums):
        per = sums.shape[1]
        like = sums[0, :0]
        buf = np.empty(LEAF if n_stride != 1 else 0, base.dtype)
        lo, hi = part_range(sums.size, part, parts)
        for t in range(lo, hi):
            o = t // per
            leaf = t - o * per
            p = _run_start(o, offset, outer_shape, outer_strides, inner, inner_stride)
            j0 = leaf * LEAF
            seg = _leaf(base, p, n_stride, j0, min(n, j0 + LEAF), buf)
            if SECOND:
                sums[o, leaf] = leaf_squares(seg, means[o], like)
            else:
                s, k = leaf_sum(seg, like)
                sums[o, leaf] = s
                counts[o, leaf] = k

    return leaves


@kernel(nrt=True)
def cascade_rows(part, parts, sums, out):
    """out[o] = the cascade total of the leaf sums ``sums[o, :]`` (in leaf order)."""
    levels = np.empty(_LEVELS, sums.dtype)
    lo, hi = part_range(out.size, part, parts)
    for o in range(lo, hi):
        for leaf in range(sums.shape[1]):
            _push(levels, leaf, sums[o, leaf])
        out[o] = _total(levels, sums.shape[1])

"""The fused path of ``nanmean``, ``var``, ``std``, ``nanvar`` and ``nanstd`` for
real float32/float64 data (``axisops.kernels.moments``): count, sum and squared
deviations of every output in one kernel call, instead of a count, a sum, NumPy
temporaries for the deviations and a second sum (four passes and three arrays).

It takes a reduction whose reduced elements are one run per output (the reduced
axes coalesce: the last axes of a C-contiguous array, ``axis=None`` of a
contiguous one, any run of a strided view); any other layout is copied into that
form when it is small (up to :data:`SMALL` elements), and left to the composed
path otherwise (where its outputs are adjacent in memory the sum kernels' row
order reads it faster than runs would).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import _jit
from ._layout import needs_copy, reduction_view, restore_kept_order
from ._plan import base_maker
from .kernels import moments as K

#: Elements below which any layout is copied into runs (the copy is cheap there).
SMALL = 1 << 16


def plan(x: np.ndarray, axes: tuple[int, ...], out_shape, res: np.dtype, *, skip: bool,
         variance: bool, ddof=0, root: bool = False):
    """The fused plan for arrays described like *x* (a callable of x), or None where
    this path does not apply: dtypes other than float32/float64 reduced in their
    own dtype, empty reductions, layouts without runs beyond :data:`SMALL`."""
    if x.dtype not in (np.float32, np.float64) or res != x.dtype or x.size == 0 \
            or needs_copy(x) or not axes:
        return None
    view = reduction_view(x, axes, keep_order=False)
    copy = view.red_shape.size > 0 or view.row_order
    if copy and x.size > SMALL:
        return None
    kept = [d for d in range(x.ndim) if d not in axes]
    if copy:  # the reduced axes moved last, in a C-contiguous copy: one run per output
        order = kept + list(axes)
        rows = (math.prod(x.shape[d] for d in kept), math.prod(x.shape[d] for d in axes))
        view = reduction_view(np.empty(rows, x.dtype), (1,), keep_order=False)
    geometry = (view.offset, view.outer_shape, view.outer_strides, view.inner, view.inner_stride,
                view.n, view.n_stride)
    outputs = view.outer * view.inner
    n = view.n
    work = outputs * n
    few = outputs < 4  # too few outputs to share: the leaves of each are the tasks
    rows_kernel = _jit.planned_call(K.moments_rows(skip, variance))
    warning = "Degrees of freedom <= 0 for slice" if variance else "Mean of empty slice"

    make_base = None if copy else base_maker(x)
    restore = not copy and list(view.kept_order) != sorted(view.kept_order)
    scalar = len(out_shape) == 0

    def run(x):
        if copy:
            x = np.ascontiguousarray(np.transpose(x, order)).reshape(rows)
        # the copy's writable base runs the entry point compiled for a read-only one:
        # the flag changes no data model (see _jit.planned_call)
        base = x.reshape(-1) if make_base is None else make_base(x)
        # By shape only, never by the thread count: the two kernels inline the same
        # leaf loop each in its own context, and LLVM may vectorise it differently
        # (on an AMD EPYC with AVX-512, nanmean of float32 differed in the last bit
        # between one and two threads when the pool decided)
        if few and work >= _jit.PARALLEL_MIN_WORK:
            counts, out = _by_leaves(base, geometry, outputs, n, x.dtype, skip, variance)
        else:
            counts = np.empty(outputs, np.int64)
            out = np.empty(outputs, x.dtype)
            rows_kernel(work, base, *geometry, counts, out)
        if scalar:  # NumPy scalars: the same arithmetic without array overheads
            c = int(counts[0])
            if (c - ddof if variance else c) <= 0:
                warnings.warn(warning, RuntimeWarning, stacklevel=4)
                return res.type(np.nan)
            v = res.type(np.float64(out[0]) / (c - ddof)) if variance else out[0]
            return np.sqrt(v) if root else v
        if variance:
            dof = counts - ddof
            empty = dof <= 0
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.true_divide(out, dof).astype(res, copy=False)
        else:
            empty = counts == 0
        if empty.any():
            warnings.warn(warning, RuntimeWarning, stacklevel=4)
            out[empty] = np.nan
        if root:
            out = np.sqrt(out)
        if restore:
            out = restore_kept_order(out, x.shape, view, out_shape)
        return out.reshape(out_shape)

    return run


def _by_leaves(base, geometry, outputs: int, n: int, dtype, skip: bool, variance: bool):
    """(counts, means or sums of squared deviations) with a task per leaf, for
    outputs too few to share between threads; the same leaves and cascade as
    :func:`kernels.moments.moments_rows`, so the same bits."""
    per = -(-n // K.LEAF)
    work = outputs * n
    sums = np.empty((outputs, per), dtype)
    counts = np.zeros((outputs, per), np.int64)
    means = np.empty(outputs, dtype)
    _jit.run(K.leaf_sums(skip, False), work, base, *geometry, means, counts, sums)
    total = np.empty(outputs, dtype)
    _jit.run(K.cascade_rows, outputs * per, sums, total)
    c = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means[:] = total.astype(np.float64) / c  # the kernel's division, rounded once
    if not variance:
        return c, means
    _jit.run(K.leaf_sums(skip, True), work, base, *geometry, means, counts, sums)
    _jit.run(K.cascade_rows, outputs * per, sums, total)
    return c, total

"""Gradients of the moving windows on dask arrays (see :mod:`axisops.grad.moving`):
``grad.moving_sum``, ``grad.moving_mean``, ``grad.moving_var``,
``grad.moving_std``, ``grad.moving_max``, ``grad.moving_min``, lazy, with the
NumPy path's checks (raised while the graph is built).

The gradient is chunked as ``x`` (``g`` rechunked to it where they differ; a NumPy
``g`` or ``x`` is cut so). A task makes one chunk ``[a, b)`` along ``axis`` by the
NumPy path's gradient on slabs of ``g`` and ``x`` from ``a - (window - 1)`` to
``b + (window - 1)`` (clipped to the axis): element ``k`` gets the outputs ``j`` in
``[k, k + window - 1]`` (the halo after), and each of those outputs' counts, means
and arg-extrema read the ``window - 1`` elements before ``j`` (the halo before).
So every term is the whole array's.

* ``grad.moving_max``/``grad.moving_min``: the scatter-add at the moving
  arg-extremum adds each element's terms in the same order from 0: the NumPy
  path's bits.
* ``grad.moving_sum``/``grad.moving_mean``: a reversed moving sum, re-anchored by
  the NumPy path on a grid of ``B = max(16384, 8 * window)`` positions counted from
  the end of the axis. As the forward sums (:mod:`axisops.dask.moving`), a chunk
  reads on to the end of the grid block after the one holding ``b`` (to the end of
  the axis when that is nearer than ``B``) where that halo is at most twice the
  largest chunk: the NumPy path's bits (so always when the largest chunk along the
  axis is at least ``B``); elsewhere the halo of ``window - 1`` and the NumPy
  path's values to rounding.
* ``grad.moving_var``/``grad.moving_std``: the NumPy path takes each lane less
  its mean over the whole axis (which cancels in the gradient); a slab is taken
  less its own mean, so the values are the NumPy path's to rounding.

Memory per task: the chunks its slabs are cut from (its own and those of the
halos, several only when the window is longer than a chunk) and its result.

>>> import dask.array as da, numpy as np, axisops
>>> x = da.from_array(np.array([1., 3., np.nan, 2., 4.]), chunks=2)
>>> axisops.grad.moving_max(da.ones_like(x), x, 2, min_count=1).compute()
array([1., 2., 0., 1., 1.])
"""
from __future__ import annotations

import functools
import itertools
import warnings
from collections.abc import Sequence

import numpy as np

from .. import _dtypes
from .. import grad as _np_grad
from .._axes import normalize_axis
from .._dispatch import numpy_function
from ..moving import check_window
from .moving import (
    HALO_BLOCKS,
    NO_DDOF,
    Range,
    _da,
    block_len,
    crop,
    empty_like_call,
    empty_result,
    slab_graph,
)
from .window import _offsets

SERVES = "axisops.grad"
__all__ = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min"]

_NUMPY = {name: numpy_function(getattr(_np_grad, name)) for name in __all__}


def moving_sum(g, x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.grad.moving_sum`: a reversed moving sum of ``g``."""
    return _lazy_grad("moving_sum", g, x, window, axis, min_count)


def moving_mean(g, x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.grad.moving_mean`."""
    return _lazy_grad("moving_mean", g, x, window, axis, min_count)


def moving_var(g, x, window, axis=-1, *, min_count=None, ddof=0):
    """Lazy :func:`axisops.grad.moving_var` (the NumPy path's values to rounding)."""
    return _lazy_grad("moving_var", g, x, window, axis, min_count, ddof)


def moving_std(g, x, window, axis=-1, *, min_count=None, ddof=0):
    """Lazy :func:`axisops.grad.moving_std` (the NumPy path's values to rounding)."""
    return _lazy_grad("moving_std", g, x, window, axis, min_count, ddof)


def moving_max(g, x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.grad.moving_max`: the NumPy path's bits."""
    return _lazy_grad("moving_max", g, x, window, axis, min_count)


def moving_min(g, x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.grad.moving_min`: the NumPy path's bits."""
    return _lazy_grad("moving_min", g, x, window, axis, min_count)


def reads_around(chunks: Sequence[int], window: int, exact: bool) -> list[Range]:
    """What each chunk's gradient reads: ``window - 1`` elements either side; with
    *exact* on to the NumPy path's reversed block grid after it where that halo is
    at most :data:`~axisops.dask.moving.HALO_BLOCKS` times the largest chunk."""
    offsets = _offsets(chunks)
    n = offsets[-1]
    grid = block_len(window)
    budget = HALO_BLOCKS * max(chunks, default=0)
    out = []
    for a, b in itertools.pairwise(offsets):
        lo, hi = max(0, a - window + 1), min(n, b + window - 1)
        if exact:
            rest = n - b
            aligned = n if rest < grid else n - (rest // grid - 1) * grid
            if aligned - b <= max(budget, hi - b):
                hi = aligned
        out.append((lo, hi))
    return out


def _lazy_grad(name, g, x, window, axis, min_count, ddof=NO_DDOF):
    from dask.base import tokenize

    da = _da()
    op = f"grad.{name}"
    if not isinstance(g, da.Array):
        g = np.asarray(g)
    if not isinstance(x, da.Array):
        x = _dtypes.as_array(x)
    options: dict = {"min_count": min_count}
    if ddof is not NO_DDOF:
        options["ddof"] = ddof
    func = _NUMPY[name]
    if tuple(g.shape) != tuple(x.shape):  # the NumPy path's error, in its order
        func(np.broadcast_to(np.empty((), g.dtype), g.shape),
             np.broadcast_to(np.empty((), x.dtype), x.shape), window, axis, **options)
        raise AssertionError(f"{op}: the NumPy path took g of shape {tuple(g.shape)} "
                             f"for x of shape {tuple(x.shape)}")  # pragma: no cover
    res = empty_like_call(func, [tuple(x.shape)] * 2, [g.dtype, x.dtype], window, axis,
                          **options)
    window, min_count = check_window(op, window, min_count)
    axis = normalize_axis(axis, x.ndim, op)
    options["min_count"] = min_count
    chunks = x.chunks if isinstance(x, da.Array) else g.chunks
    g, x = (a.rechunk(chunks) if isinstance(a, da.Array) else da.from_array(a, chunks=chunks)
            for a in (g, x))
    if x.size == 0:
        return empty_result(x, res)
    reads = reads_around(chunks[axis], window, name in ("moving_sum", "moving_mean"))
    token = tokenize(g, x, op, window, axis, sorted(options.items()))
    task = functools.partial(_grad_block, name=name, window=window, axis=axis,
                             options=options, dtype=res)
    return slab_graph(f"axisops-grad-{name.replace('_', '-')}", token, [g, x], axis, reads,
                      task, res)


def _grad_block(g, x, *, name, window, axis, options, dtype, lo, skip, size):
    """The NumPy path's gradient on one pair of slabs, the chunk kept."""
    with warnings.catch_warnings():  # a lane of the slab without a finite value (the
        # NumPy path says so of a lane of the whole axis only): its mean is taken as 0
        warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
        out = _NUMPY[name](g, x, window, axis, **options)
    out = crop(out, axis, skip, size)
    return out.astype(dtype, copy=False)

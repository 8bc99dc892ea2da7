"""axisops on ``dask.array.Array``: lazy graphs whose per-chunk work is axisops' kernels.

``axisops._dispatch`` sends a call whose first array is a dask array here. Each
operator builds a graph and computes nothing: the shapes, dtypes and errors that
do not depend on values are checked while it is built (with the NumPy path's
exceptions), and no kernel is compiled until the graph runs. Results are dask
arrays; their chunks follow the input's where the shape allows.

* Reductions (:mod:`axisops.dask.reduce`): dask's tree reduction with axisops'
  kernels per chunk and per combine. ``argmax``/``argmin`` carry (value, global
  index) records and combine them by the contract's NaN and tie rule, so the
  result does not depend on the chunking or the tree; tuple axes and
  ``axis=None`` included.
* Scans (:mod:`axisops.dask.scan`): each chunk is scanned by axisops, and a chain
  of small per-chunk summaries gives each chunk its carry; ``cummax``/``cummin``
  carry (value, global index) with PyTorch's rule.
* Gathers and scatter (:mod:`axisops.dask.gather`, gradients in
  :mod:`axisops.dask.gather_grad`): ``take``, ``take_along_axis``, ``gather_nd``
  with chunked (or NumPy) indices, ``scatter`` with every ``reduce``: each chunk
  of indices is routed once to the chunks of ``x`` it hits, and a task holds a
  chunk of ``x`` or of indices; the NumPy path's bits. Their gradients are lazy
  scatter-adds (``grad.scatter`` is composed as on NumPy).
* Gradients (:mod:`axisops.dask.grad`) of the reductions and scans: ``sum``,
  ``mean``, ``max``, ``min`` (the NumPy path's bits), ``prod``, ``cumprod`` (chains
  of per-chunk products, no division, exponents carried apart), ``cumsum``,
  ``logcumsumexp`` (lazy scans and carries; to rounding), ``cummax``, ``cummin``
  (``g`` added per run of the forward's indices, in the NumPy path's order).
* Sliding windows (:mod:`axisops.dask.window`, gradients in
  :mod:`axisops.dask.window_grad`): ``unfold``, ``fold``, ``grad.unfold``,
  ``grad.fold`` across chunk borders, each task one block of the result from the
  chunks its windows read (a halo of the next ones); ``fold`` is the NumPy path's
  bits.
* Pooling (:mod:`axisops.dask.pool`, gradients in :mod:`axisops.dask.pool_grad`):
  ``max_pool``, ``avg_pool``, ``grad.max_pool``, ``grad.avg_pool``, each task one
  block of the result from the chunks its windows read (a halo of the footprint),
  by the NumPy path on that slab: its values, indices and sums, bit for bit.
* Moving windows (:mod:`axisops.dask.moving`, gradients in
  :mod:`axisops.dask.moving_grad`): the eight ``moving_*`` and their six
  gradients, each task one chunk of the result by the NumPy path on a slab of it
  and a halo of ``window - 1`` elements before (the gradients: either side); the
  extremes and absolute indices bit for bit, the sums the NumPy path's bits where
  the halo reaches back to its block grid (always when a chunk along the axis
  holds ``max(16384, 8 * window)`` positions), else to rounding.

* The missing-value operators (:mod:`axisops.dask.missing`) and their gradients
  (:mod:`axisops.dask.missing_grad`, composed of the lazy pieces above); dates
  and times (:mod:`axisops.dask.dates`): the lazy int64 operators on their keys,
  NaT as NaN.
* Order statistics (:mod:`axisops.dask.order`, gradients in
  :mod:`axisops.dask.order_grad`, moving ones in :mod:`axisops.dask.moving_order`):
  ``sort``, ``argsort``, ``partition``, ``argpartition``, ``rank`` per block, the
  axis in one chunk (else a ``ValueError`` naming ``x.rechunk({axis: -1})``);
  ``top_k`` exact along a chunked axis by a tree of candidate sets with global
  indices; ``kthvalue``, ``median``, ``nanmedian``, ``quantile``, ``nanquantile``
  exact along chunked axes (tuple axes too) by a lazy selection by counting: pass
  by pass histograms of 16-bit digits of the elements' order keys, then of their
  positions, summed over the chunks, never gathering an axis; the moving ones and
  every gradient with the NumPy path's bits.

Every public function and gradient has a lazy version here.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _dispatch
from . import dates as _dates
from . import gather as _gather
from . import gather_grad as _gather_grad
from . import grad as _grad
from . import missing as _missing
from . import missing_grad as _missing_grad
from . import moving as _moving
from . import moving_grad as _moving_grad
from . import moving_order as _moving_order
from . import order as _order
from . import order_grad as _order_grad
from . import pool as _pool
from . import pool_grad as _pool_grad
from . import reduce as _reduce
from . import scan as _scan
from . import window as _window
from . import window_grad as _window_grad

#: The modules of lazy operators. Each names the public module whose functions it
#: implements in ``SERVES`` (default: ``axisops.<its own name>``) and lists them in
#: ``__all__``.
MODULES = (_reduce, _scan, _gather, _grad, _gather_grad, _window, _window_grad, _missing,
           _missing_grad, _pool, _pool_grad, _moving, _moving_grad, _order, _order_grad,
           _moving_order)


def _serves(module) -> str:
    return getattr(module, "SERVES", f"axisops.{module.__name__.rsplit('.', 1)[1]}")


#: The dask implementation of each NumPy-path function, by (module, name).
OPERATORS: dict[tuple[str, str], Callable[..., Any]] = {
    (_serves(module), name): getattr(module, name)
    for module in MODULES for name in module.__all__
}


def call(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` on dask arrays: its lazy version where there is one."""
    numpy_func = _dispatch.numpy_function(func)
    if args and _dates.handles(numpy_func, args[0]):  # NaT as NaN (dask.dates)
        return _dates.OPERATORS[numpy_func.__name__](*args, **kwargs)
    lazy = OPERATORS.get((numpy_func.__module__, numpy_func.__name__))
    if lazy is not None:
        return lazy(*args, **kwargs)
    return numpy_func(*args, **kwargs)

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
* Gathers (:mod:`axisops.dask.gather`): ``take`` and ``take_along_axis`` with
  chunked (or NumPy) indices, one chunk of ``x`` and one of the indices per task.

Operators not listed in :data:`OPERATORS` still take the NumPy path, which
computes the dask array first.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _dispatch
from . import gather as _gather
from . import reduce as _reduce
from . import scan as _scan

#: The dask implementation of each NumPy-path function, by name.
OPERATORS: dict[str, Callable[..., Any]] = {
    **{name: getattr(_reduce, name) for name in _reduce.__all__},
    **{name: getattr(_scan, name) for name in _scan.__all__},
    **{name: getattr(_gather, name) for name in _gather.__all__},
}


def call(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` on dask arrays: its lazy version where there is one."""
    numpy_func = _dispatch.numpy_function(func)
    if numpy_func.__module__ in ("axisops.reduce", "axisops.scan", "axisops.gather"):
        lazy = OPERATORS.get(numpy_func.__name__)
        if lazy is not None:
            return lazy(*args, **kwargs)
    return numpy_func(*args, **kwargs)

"""Moving order statistics of dask arrays across chunk borders: ``moving_median``,
``moving_quantile``, ``moving_rank`` (see :mod:`axisops.dask`; gradients in
:mod:`axisops.dask.order_grad`).

As the other moving windows (:mod:`axisops.dask.moving`, whose graph builder this
reuses): one task per chunk of the result (chunked as the input), each running
the NumPy path (:mod:`axisops.moving_order`) on its chunk along ``axis`` and a halo
of the ``window - 1`` elements before it (cut from as many chunks as hold them),
keeping its chunk's part. Every output of the NumPy path is an exact function of
its window (no running state), so the results are the NumPy path's bits for any
chunking. Nothing is computed, and no kernel compiled, while the graph is built;
the NumPy path's errors are raised then.

Memory per task: its chunk, the chunks its halo is cut from (several only where
the window is longer than a chunk) and its result block.

>>> import dask.array as da, numpy as np, axisops
>>> x = da.from_array(np.array([4., 1., np.nan, 5., 2., 7.]), chunks=2)
>>> axisops.moving_median(x, 3, min_count=1).compute()
array([4. , 2.5, 2.5, 3. , 3.5, 5. ])
"""
from __future__ import annotations

import functools

import numpy as np

from .. import moving_order as _np_moving_order
from .._axes import normalize_axis
from .._dispatch import numpy_function
from ..moving import check_window
from .moving import crop, empty_like_call, empty_result, reads_before, slab_graph

SERVES = "axisops.moving_order"
__all__ = ["moving_median", "moving_quantile", "moving_rank"]

_NUMPY = {name: numpy_function(getattr(_np_moving_order, name)) for name in __all__}


def moving_median(x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_median`: the NumPy path's bits."""
    return _lazy("moving_median", x, window, (), axis, min_count)


def moving_quantile(x, window, q, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_quantile`: the NumPy path's bits."""
    return _lazy("moving_quantile", x, window, (q,), axis, min_count)


def moving_rank(x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_rank`: the NumPy path's bits."""
    return _lazy("moving_rank", x, window, (), axis, min_count)


def _lazy(op, x, window, extra, axis, min_count):
    from dask.base import tokenize

    res = empty_like_call(_NUMPY[op], [tuple(x.shape)], [x.dtype], window, *extra, axis,
                          min_count=min_count)
    if extra:
        extra = (_np_moving_order.check_quantile(extra[0], op),)
    window, min_count = check_window(op, window, min_count)
    axis = normalize_axis(axis, x.ndim, op)
    if x.size == 0:
        return empty_result(x, res)
    reads = reads_before(x.chunks[axis], window, exact=False)
    token = tokenize(x, op, window, extra, axis, min_count)
    task = functools.partial(_forward_block, op=op, window=window, extra=extra, axis=axis,
                             min_count=min_count)
    return slab_graph(f"axisops-{op.replace('_', '-')}", token, [x], axis, reads, task, res)


def _forward_block(slab, *, op, window, extra, axis, min_count, lo, skip, size):
    out = _NUMPY[op](slab, window, *extra, axis, min_count=min_count)
    return crop(np.asarray(out), axis, skip, size)

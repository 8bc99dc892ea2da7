"""Moving-window reductions of dask arrays across chunk borders: ``moving_sum``,
``moving_mean``, ``moving_var``, ``moving_std``, ``moving_max``, ``moving_min``,
``moving_argmax``, ``moving_argmin`` (see :mod:`axisops.dask`; gradients in
:mod:`axisops.dask.moving_grad`).

The graph is built by hand, one task per chunk of the result (the result's chunks
are the input's), and each task runs the NumPy path (:mod:`axisops.moving`) on a
slab of the lanes of its chunk: the chunk along ``axis`` and a halo of elements
before it, cut out of the chunks that hold them (several when the halo is longer
than a chunk), then keeps its chunk's part of the result. Nothing is computed, and
no kernel compiled, while the graph is built; the NumPy path's errors are raised
then (its own checks, run on an empty array of ``x``'s dtype).

**Halos.** A block ``[a, b)`` of the axis needs the ``window - 1`` elements before
it (clipped at the start of the axis): every output's window is then whole in the
slab, so counts, ``min_count``, the maxima and minima and their indices are
exact. ``moving_argmax``/``moving_argmin`` add the slab's offset, so indices are
absolute along the axis (-1 kept).

**The sums, means and variances** are running float64 sums that the NumPy path
re-anchors on a fixed grid of blocks of ``B = max(16384, 8 * window)`` positions
of the whole axis (each walked from the ``window - 1`` elements before it): the
bits of an output depend on where its block's walk started. A slab that starts
at a multiple of ``B`` is walked on the same grid, and every block of it but the
first is anchored inside it, so its outputs from the next multiple of ``B`` on
are the NumPy path's walk, bit for bit. So a block ``[a, b)`` reads from the
start of the grid block before the one holding ``a`` (from 0 when ``a < B``):
the NumPy path's bits, with a halo under ``2 B``. That longer halo is taken
where it is at most :data:`HALO_BLOCKS` (two) times the largest chunk along the
axis, so always when that chunk holds at least ``B`` positions (the whole result
is then the NumPy path's bits, as it is for one chunk); elsewhere (chunks much
shorter than ``B``, past the first ones) the block reads the plain halo of
``window - 1`` elements and its sums are the NumPy path's to rounding (the same
windows, walked from another start: differences of a few ulps of the magnitude
of the values walked). A chunk whose slab starts at the axis' start is always
bit-exact. (A slab cannot start at ``a - (window - 1)`` on the grid: the NumPy
path re-anchors every ``B`` positions from the start of what it is given.)

**Memory per task**: its input chunk, the chunks its halo is cut from, and its
result block; the slab is the block and at most two of the largest chunks before
it, or the block and ``window - 1`` elements (several chunks only when the window
is longer than a chunk). No task gathers a whole axis unless a chunk already
holds it. The longer halo costs walking those elements again (at most twice the
work of the whole result).

>>> import dask.array as da, numpy as np, axisops
>>> a = np.array([4., 1., np.nan, 5., 2., 7.])
>>> x = da.from_array(a, chunks=2)
>>> m = axisops.moving_max(x, 3, min_count=1)
>>> m.chunks
((2, 2, 2),)
>>> m.compute()
array([4., 4., 4., 5., 5., 7.])
>>> axisops.moving_argmin(x, 3, min_count=1).compute()
array([0, 1, 1, 1, 4, 4])
"""
from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import moving as _np_moving
from .._axes import normalize_axis
from .._dispatch import numpy_function
from .window import Pieces, _assemble, _nested, _offsets, _pieces, _slices

__all__ = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min", "moving_argmax", "moving_argmin"]

#: The NumPy path of each function here.
_NUMPY = {name: numpy_function(getattr(_np_moving, name)) for name in __all__}

#: Those whose results are running sums re-anchored on the NumPy path's block grid.
_RUNNING = frozenset({"moving_sum", "moving_mean", "moving_var", "moving_std"})

#: A block reads the NumPy path's block grid (see the module's docstring) where that
#: halo is at most this many times the block's own length.
HALO_BLOCKS = 2

#: ``ddof`` not given: the function is not a variance.
NO_DDOF: Any = object()

#: (start, stop) of a block of the axis.
Range = tuple[int, int]


def _da():
    import dask.array as da

    return da


def moving_sum(x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_sum` of a dask array."""
    return _lazy("moving_sum", x, window, axis, min_count)


def moving_mean(x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_mean` of a dask array."""
    return _lazy("moving_mean", x, window, axis, min_count)


def moving_var(x, window, axis=-1, *, min_count=None, ddof=0):
    """Lazy :func:`axisops.moving_var` of a dask array."""
    return _lazy("moving_var", x, window, axis, min_count, ddof)


def moving_std(x, window, axis=-1, *, min_count=None, ddof=0):
    """Lazy :func:`axisops.moving_std` of a dask array."""
    return _lazy("moving_std", x, window, axis, min_count, ddof)


def moving_max(x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_max` of a dask array: the NumPy path's bits."""
    return _lazy("moving_max", x, window, axis, min_count)


def moving_min(x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_min` of a dask array: the NumPy path's bits."""
    return _lazy("moving_min", x, window, axis, min_count)


def moving_argmax(x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_argmax` of a dask array: absolute indices."""
    return _lazy("moving_argmax", x, window, axis, min_count)


def moving_argmin(x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.moving_argmin` of a dask array: absolute indices."""
    return _lazy("moving_argmin", x, window, axis, min_count)


# ----------------------------------------------------------------- the checks


def empty_like_call(func: Callable[..., Any], shapes: Sequence[tuple[int, ...]],
                    dtypes: Sequence[np.dtype], *args, **kwargs) -> np.dtype:
    """The result dtype of the NumPy path *func* on arrays of *shapes* and *dtypes*
    (its errors, with its messages): called on zero-size arrays of the same number of
    dimensions (0-d arrays stay 0-d: every axis of them is an error), so no kernel
    runs and nothing is computed."""
    arrays = [np.empty(tuple(0 for _ in s) if s else (), d) for s, d in zip(shapes, dtypes)]
    out = func(*arrays, *args, **kwargs)
    return np.asarray(out).dtype


def block_len(window: int) -> int:
    """The NumPy path's block of the axis (see :mod:`axisops.moving`)."""
    return max(_np_moving._BLOCK_MIN, _np_moving._BLOCK_WINDOWS * window)


def _checked(op, x, window, axis, min_count, ddof):
    """(window, min_count, axis, result dtype, options), after the NumPy path's checks."""
    options: dict[str, Any] = {"min_count": min_count}
    if ddof is not NO_DDOF:
        options["ddof"] = ddof
    res = empty_like_call(_NUMPY[op], [tuple(x.shape)], [x.dtype], window, axis, **options)
    window, min_count = _np_moving.check_window(op, window, min_count)
    axis = normalize_axis(axis, x.ndim, op)
    options["min_count"] = min_count
    return window, min_count, axis, res, options


# --------------------------------------------------------------------- blocks


def reads_before(chunks: Sequence[int], window: int, exact: bool) -> list[Range]:
    """The part of the axis each block (chunk) reads: from its halo's start to its end.
    *exact*: from the grid block before its own where that halo is at most
    :data:`HALO_BLOCKS` times the largest chunk (see the module's docstring)."""
    grid = block_len(window)
    budget = HALO_BLOCKS * max(chunks, default=0)
    out = []
    for a, b in itertools.pairwise(_offsets(chunks)):
        lo = max(0, a - window + 1)
        if exact:
            aligned = 0 if a < grid else (a // grid - 1) * grid
            if a - aligned <= max(budget, a - lo):
                lo = aligned
        out.append((lo, b))
    return out


def slab_graph(stem: str, token: str, arrays: Sequence[Any], axis: int,
               reads: Sequence[Range], task: Callable[..., np.ndarray], dtype: np.dtype):
    """A dask array chunked as ``arrays[0]`` (the others chunked the same): its chunk
    ``[a, b)`` along *axis* (the *k*-th) is ``task(*slabs, lo=lo, skip=a - lo,
    size=b - a)``, with ``slabs`` the parts ``reads[k] = (lo, hi)`` of *arrays*
    along *axis* (and the chunk's own block along the other axes)."""
    from dask.highlevelgraph import HighLevelGraph

    first = arrays[0]
    name = f"{stem}-{token}"
    offsets = _offsets(first.chunks[axis])
    along = [_pieces(first.chunks[axis], lo, hi) for lo, hi in reads]
    dsk: dict[Any, Any] = {}
    for index in itertools.product(*(range(n) for n in first.numblocks)):
        k = index[axis]
        lo = reads[k][0]
        pieces: list[Pieces] = [[(c, slice(None))] for c in index]
        pieces[axis] = along[k]
        call = functools.partial(_slab_task, task=task, slices=_slices(pieces), lo=lo,
                                 skip=offsets[k] - lo, size=offsets[k + 1] - offsets[k])
        args = [_nested(pieces, functools.partial(_key, a.name)) for a in arrays]
        key = (name, *index)
        dsk[key] = (call, *args)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=list(arrays))
    return _da().Array(graph, name, first.chunks, dtype=dtype,
                       meta=np.empty((0,) * first.ndim, dtype))


def _key(name: str, at: tuple[int, ...]) -> tuple:
    return (name, *at)


def _slab_task(*blocks, task, slices, lo, skip, size):
    """One chunk of the result from the nested *blocks* of each array."""
    return task(*(_assemble(b, slices) for b in blocks), lo=lo, skip=skip, size=size)


def crop(out: np.ndarray, axis: int, skip: int, size: int) -> np.ndarray:
    """Positions ``[skip, skip + size)`` of *out* along *axis*: a copy where it is a
    part (no view holding the slab's result)."""
    if skip == 0 and out.shape[axis] == size:
        return out
    return out[(slice(None),) * axis + (slice(skip, skip + size),)].copy()


def empty_result(x, dtype):
    """The result of a zero-size *x*: chunked as *x*, nothing to compute."""
    return x.map_blocks(functools.partial(_empty, dtype=dtype), dtype=dtype,
                        meta=np.empty((0,) * x.ndim, dtype))


def _empty(block, dtype):
    return np.empty(block.shape, dtype)


# ------------------------------------------------------------------- forward


def _lazy(op, x, window, axis, min_count, ddof=NO_DDOF):
    from dask.base import tokenize

    window, min_count, axis, res, options = _checked(op, x, window, axis, min_count, ddof)
    if x.size == 0:
        return empty_result(x, res)
    reads = reads_before(x.chunks[axis], window, op in _RUNNING)
    token = tokenize(x, op, window, axis, sorted(options.items()))
    task = functools.partial(_forward_block, op=op, window=window, axis=axis, options=options)
    return slab_graph(f"axisops-{op.replace('_', '-')}", token, [x], axis, reads, task, res)


def _forward_block(slab, *, op, window, axis, options, lo, skip, size):
    """The NumPy path on one slab, the block kept; indices made absolute."""
    out = crop(_NUMPY[op](slab, window, axis, **options), axis, skip, size)
    if lo and op in ("moving_argmax", "moving_argmin"):
        np.add(out, lo, out=out, where=out >= 0)
    return out

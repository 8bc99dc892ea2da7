"""Gathers and scatter of dask arrays with chunked indices (see :mod:`axisops.dask`).

No operator here gathers an axis into one task. Each chunk of indices is routed
once (resolved on the whole axis with the mode, then split by the chunk of ``x``
each index falls in; see :mod:`axisops.dask._pointers`), and then

* ``take_along_axis``: per chunk of ``x`` along the axis, a task picks that
  chunk's hits with axisops' kernel; one task places the picked values into the
  result chunk, which is chunked as ``indices`` (on the other axes as ``x``).
  A task so holds one chunk of ``x``, or one chunk of indices and its values.
* ``take``: the same with slices; NumPy indices are routed while the graph is
  built, so only the chunks of ``x`` that are hit get a task.
* ``gather_nd``: tuples are routed by the chunk of the indexed dimensions they
  fall in; rows of the remaining dimensions are picked per chunk of those.
* ``scatter``: the result is chunked as ``x``. Every chunk of ``x`` steps through
  the routed updates that write into it in C order of the indices, scattering
  them with axisops' kernel about a chunk's worth at a time, so values equal the
  NumPy path's, bit for bit, for every ``reduce`` (float16 accumulates in
  float32 and is rounded once).

Values are the NumPy path's, bit for bit. Indices are checked when the chunk is
computed: ``mode="raise"`` raises the NumPy path's ``IndexError`` with the
index's position in the whole index array (the first out of range in its chunk;
NumPy indices are checked while the graph is built).

>>> import dask.array as da, numpy as np, axisops
>>> x = da.from_array(np.arange(12).reshape(3, 4), chunks=2)
>>> axisops.take_along_axis(x, da.from_array(np.array([[3, 0], [1, 1], [-1, 2]]), chunks=1),
...                         axis=1).compute()
array([[ 3,  0],
       [ 5,  5],
       [11, 10]])
>>> axisops.take(x, [5, -1], axis=1, mode="wrap").compute()
array([[ 1,  3],
       [ 5,  7],
       [ 9, 11]])
>>> axisops.scatter(x, da.from_array(np.array([[0, 0, 3]]), chunks=2), 100, 1,
...                 reduce="add").compute()
array([[200,   1,   2, 103],
       [  4,   5,   6,   7],
       [  8,   9,  10,  11]])
>>> axisops.gather_nd(x, np.array([[2, 3], [0, 1]])).compute()
array([11,  1])
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from .. import _complex, _dtypes
from .. import gather as _np_gather
from .._axes import normalize_axis
from .._indices import as_index_array
from ..kernels import gather as _kernels
from . import _pointers as P

__all__ = ["take", "take_along_axis", "gather_nd", "scatter"]



def _da():
    import dask.array as da

    return da


def take(x, indices, axis=None, *, mode="raise", fill_value=0):
    """Lazy :func:`axisops.take` of a dask array (NumPy or dask indices)."""
    da = _da()
    op = "take"
    _check_data(x.dtype, op)
    _check_mode(mode, op)
    if not isinstance(indices, da.Array):
        indices = np.asarray(indices)
    _check_indices(indices, op)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = normalize_axis(axis, x.ndim, op)
    n = x.shape[axis]
    fill = _fill(fill_value, x.dtype, op) if mode == "fill" else None
    if n == 0 and mode != "fill" and indices.size:
        raise IndexError(f"{op}: cannot take from an empty axis {axis}")
    shape = x.shape[:axis] + tuple(indices.shape) + x.shape[axis + 1:]
    if isinstance(indices, da.Array):
        out = _take_chunked(x, indices, axis, mode, fill, op)
    else:  # routed now: only the chunks of x that are hit get a task
        where = P.resolved(indices, n, mode, op).reshape(-1)
        out = _take_known(x, where, axis, fill, op)
    return out if out.shape == shape else out.reshape(shape)


def _take_known(x, where: np.ndarray, axis: int, fill, op: str):
    from dask.base import tokenize

    piece = max(1, *x.chunks[axis]) if x.chunks[axis] else 1
    sizes = [min(piece, where.size - s) for s in range(0, where.size, piece)] or [0]
    chunks = (*x.chunks[:axis], tuple(sizes), *x.chunks[axis + 1:])
    bounds = _offsets(x.chunks[axis])
    name = f"{op}-{tokenize(x, where, axis, fill)}"
    others = _other_blocks(x, axis)
    dsk: dict = {}
    start = 0
    for p, size in enumerate(sizes):
        parts = P.split(where[start:start + size], bounds) if size else []
        start += size
        hit = [(k, part) for k, part in enumerate(parts) if part[0].size]
        for b in others:
            picks = []
            for k, part in hit:
                key = (f"pick-{name}", p, *b, k)
                dsk[key] = (partial(P.pick_slices, part=part, axis=axis), (x.name, *_at(b, axis, k)))
                picks.append(key)
            shape = _block_shape(chunks, _at(b, axis, p))
            dsk[_key(name, *_at(b, axis, p))] = (
                partial(P.place_slices, [part for _, part in hit], shape=shape, dtype=x.dtype,
                        fill=fill, axis=axis), picks)
    return _array(name, dsk, [x], chunks, x.dtype)


def _take_chunked(x, indices, axis: int, mode: str, fill, op: str):
    from dask.base import tokenize

    flat = indices.reshape(-1)
    bounds = _offsets(x.chunks[axis])
    chunks = (*x.chunks[:axis], flat.chunks[0], *x.chunks[axis + 1:])
    name = f"{op}-{tokenize(x, flat, axis, mode, fill)}"
    route, part = f"route-{name}", f"part-{name}"
    dsk: dict = {}
    offsets = _offsets(flat.chunks[0])
    for j in range(flat.numblocks[0]):
        dsk[_key(route, j)] = (partial(P.route_along, bounds=bounds, mode=mode, op=op,
                                   origin=(int(offsets[j]),), unravel=tuple(indices.shape)),
                           (flat.name, j))
        for k in range(len(bounds) - 1):
            dsk[_key(part, j, k)] = (P.part_of, (route, j), k)
    for b in _other_blocks(x, axis):
        for j in range(flat.numblocks[0]):
            parts, picks = [], []
            for k in range(len(bounds) - 1):
                key = (f"pick-{name}", j, *b, k)
                dsk[key] = (partial(P.pick_slices, axis=axis), (x.name, *_at(b, axis, k)),
                            (part, j, k))
                parts.append((part, j, k))
                picks.append(key)
            where = _at(b, axis, j)
            dsk[_key(name, *where)] = (partial(P.place_slices, shape=_block_shape(chunks, where),
                                           dtype=x.dtype, fill=fill, axis=axis), parts, picks)
    return _array(name, dsk, [x, flat], chunks, x.dtype)


def take_along_axis(x, indices, axis, *, mode="raise", fill_value=0):
    """Lazy :func:`axisops.take_along_axis` of a dask array with chunked indices."""
    from dask.base import tokenize

    da = _da()
    op = "take_along_axis"
    _check_data(x.dtype, op)
    _check_mode(mode, op)
    indices = indices if isinstance(indices, da.Array) else np.asarray(indices)
    _check_indices(indices, op)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"{op}: with axis=None indices must be 1-D, got {indices.ndim} "
                             "dimensions")
        x, axis = x.reshape(-1), 0
    axis = normalize_axis(axis, x.ndim, op)
    if indices.ndim != x.ndim:
        raise ValueError(f"{op}: indices must have x's number of dimensions ({x.ndim}), got "
                         f"{indices.ndim}")
    x, indices = _aligned(x, indices, axis, op)
    n = x.shape[axis]
    fill = _fill(fill_value, x.dtype, op) if mode == "fill" else None
    if n == 0 and mode != "fill" and indices.size:
        raise IndexError(f"{op}: cannot take from an empty axis {axis}")
    if _wide(x.dtype) and n:
        return _lanes_along(x, indices, axis, mode, fill, op)
    along = max(1, *x.chunks[axis])
    if not isinstance(indices, da.Array):
        indices = da.from_array(indices, chunks=tuple(
            c if d != axis else along for d, c in enumerate(x.chunks)))
    indices = indices.rechunk(tuple(c if d != axis else indices.chunks[d]
                                    for d, c in enumerate(x.chunks)))
    if n == 0:  # mode="fill": every index misses
        return da.full(indices.shape, fill, dtype=x.dtype, chunks=indices.chunks)
    bounds = _offsets(x.chunks[axis])
    name = f"{op}-{tokenize(x, indices, axis, mode, fill)}"
    route, pick = f"route-{name}", f"pick-{name}"
    offsets = [_offsets(c) for c in indices.chunks]
    dsk: dict = {}
    for j in np.ndindex(*indices.numblocks):
        origin = tuple(int(offsets[d][i]) for d, i in enumerate(j))
        shape = _block_shape(indices.chunks, j)
        dsk[_key(route, *j)] = (partial(P.route_along, bounds=bounds, mode=mode, op=op,
                                        origin=origin, flat=axis + 1, merged=True),
                                (indices.name, *j))
        # Picks and the place read the routing whole rather than through getitem
        # tasks: a task costs the scheduler about a millisecond, and the routing
        # (one byte and four per index) is shipped once to each worker that picks.
        picks = []
        for k in range(len(bounds) - 1):
            dsk[_key(pick, *j, k)] = (partial(P.pick_flat, k=k),
                                      (x.name, *_at(_drop(j, axis), axis, k)), (route, *j))
            picks.append((pick, *j, k))
        dsk[_key(name, *j)] = (partial(P.place_merged, shape=shape, dtype=x.dtype, fill=fill),
                               (route, *j), picks)
    return _array(name, dsk, [x, indices], indices.chunks, x.dtype)


def gather_nd(x, indices, *, batch_dims=0):
    """Lazy :func:`axisops.gather_nd` of a dask array (NumPy or dask indices)."""
    from dask.base import tokenize

    da = _da()
    op = "gather_nd"
    _check_data(x.dtype, op)
    if not isinstance(indices, da.Array):
        indices = np.asarray(indices)
    _check_indices(indices, op)
    b, dims, _ = _np_gather._nd_shapes(x.shape, _stand_in(indices), batch_dims, op)
    q = len(dims)
    if not isinstance(indices, da.Array):
        indices = da.from_array(indices, chunks=(*x.chunks[:b], *(-1,) * (indices.ndim - b)))
    indices = indices.rechunk((*x.chunks[:b], *indices.chunks[b:-1], -1))
    grid = x.numblocks[b:b + q]
    rest = x.numblocks[b + q:]
    dim_bounds = tuple(_offsets(x.chunks[b + t]) for t in range(q))
    chunks = (*indices.chunks[:-1], *x.chunks[b + q:])
    name = f"{op}-{tokenize(x, indices, b)}"
    route, part, pick = f"route-{name}", f"part-{name}", f"pick-{name}"
    offsets = [_offsets(c) for c in indices.chunks]
    dsk: dict = {}
    for j in np.ndindex(*indices.numblocks[:-1]):
        origin = tuple(int(offsets[d][i]) for d, i in enumerate(j))
        batch = _block_shape(indices.chunks[:b], j[:b])
        dsk[_key(route, *j)] = (partial(P.route_nd, dim_bounds=dim_bounds, batch_shape=batch, op=op,
                                    origin=origin), (indices.name, *j, 0))
        out_rows = math.prod(_block_shape(indices.chunks[:-1], j))
        for k in range(math.prod(grid)):
            dsk[_key(part, *j, k)] = (P.part_of, (route, *j), k)
        for r in np.ndindex(*rest):
            columns = math.prod(_block_shape(x.chunks[b + q:], r))
            picks, parts = [], []
            for k, at in enumerate(np.ndindex(*grid)):
                x_rows = math.prod(batch) * math.prod(_block_shape(x.chunks[b:b + q], at))
                dsk[_key(pick, *j, *r, k)] = (partial(P.pick_rows, rows=x_rows, columns=columns),
                                          (x.name, *j[:b], *at, *r), (part, *j, k))
                picks.append((pick, *j, *r, k))
                parts.append((part, *j, k))
            dsk[_key(name, *j, *r)] = (partial(P.place_rows, shape=_block_shape(chunks, (*j, *r)),
                                           rows=out_rows, columns=columns, dtype=x.dtype),
                                   parts, picks)
    return _array(name, dsk, [x, indices], chunks, x.dtype)


def scatter(x, indices, updates, axis, *, reduce=None):
    """Lazy :func:`axisops.scatter` of a dask array (NumPy or dask indices and updates)."""
    indices, updates, axis = _scatter_args(x, indices, updates, axis, reduce, "scatter")
    return scatter_graph(x, indices, updates, axis, reduce)


def scatter_graph(x, indices, updates, axis: int, reduce, *, mode: str = "raise",
                  op: str = "scatter", work=None):
    """The scatter of checked arguments: ``updates`` chunked as ``x`` outside
    *axis* (within its extent), ``indices`` chunked as ``updates`` or of size 1
    (one chunk) where it broadcasts to them. *work* is the dtype the chunks of
    ``x`` combine in (float32 for float16 add and mul by default); indices are
    resolved with *mode* (a miss under ``"fill"`` writes nothing)."""
    from dask.base import tokenize

    if work is None:
        work = np.dtype(np.float32) if x.dtype == np.float16 and reduce in ("add", "mul") \
            else x.dtype
    bounds = _offsets(x.chunks[axis])
    name = f"{op}-{tokenize(x, indices, updates, axis, reduce, mode, work)}"
    route, state = f"route-{name}", f"state-{name}"
    offsets = [_offsets(c) for c in updates.chunks]
    spread = [indices.shape[d] == 1 and updates.shape[d] != 1 for d in range(x.ndim)]
    dsk: dict = {}
    for j in np.ndindex(*updates.numblocks):
        origin = tuple(int(offsets[d][i]) for d, i in enumerate(j))
        x_shapes = [_block_shape(x.chunks, _at(_drop(j, axis), axis, k))
                    for k in range(len(bounds) - 1)]
        index_block = tuple(0 if spread[d] else i for d, i in enumerate(j))
        dsk[_key(route, *j)] = (partial(P.route_scatter, bounds=bounds, op=op, origin=origin,
                                        axis=axis, x_shapes=x_shapes, dtype=x.dtype, mode=mode),
                                (indices.name, *index_block), (updates.name, *j))
    # One task per (chunk of x, index chunk along the axis), in a chain: the first
    # starts from the chunk of x, the last gives the result. Each reads its
    # routing whole, not through a getitem task per part (a task costs the
    # scheduler about a millisecond; a routing is shipped once to a worker).
    steps = updates.numblocks[axis]
    for xb in np.ndindex(*x.numblocks):
        k = xb[axis]
        if any(xb[d] >= updates.numblocks[d] for d in range(x.ndim) if d != axis):
            dsk[_key(name, *xb)] = (P.identity, (x.name, *xb))  # no index writes here
            continue
        previous = (x.name, *xb)
        for i in range(steps):
            key = _key(name, *xb) if i == steps - 1 else (state, *xb, i)
            dsk[key] = (partial(P.scatter_step, k=k, reduce=reduce, work=work, start=i == 0,
                                finish=x.dtype if i == steps - 1 else None),
                        previous, (route, *_at(_drop(xb, axis), axis, i)))
            previous = key
    return _array(name, dsk, [x, indices, updates], x.chunks, x.dtype)


def _scatter_args(x, indices, updates, axis, reduce, op):
    """(indices, updates, axis): checked as the NumPy path checks them, as dask
    arrays chunked alike (as ``x`` outside ``axis``, within indices' extent)."""
    da = _da()
    if not isinstance(indices, da.Array):
        indices = np.asarray(indices)
    if reduce not in _np_gather._REDUCES:  # before the dtype checks, as the NumPy path
        raise ValueError(f"{op}: reduce must be None, 'add', 'mul', 'max' or 'min', got {reduce!r}")
    is_array = isinstance(updates, (da.Array, np.ndarray))
    check = _stand_in(updates) if is_array else updates
    x_dtype = x.dtype
    if x_dtype.kind == "c":  # the NumPy path checks each part as a real scatter
        _complex.check(x_dtype, op)
        if reduce in ("max", "min"):
            _dtypes.check_dtype(x_dtype, op)
        x_dtype = _complex.part_dtype(x_dtype)
        if np.iscomplexobj(check):
            if not np.can_cast(_dtype_of(check), x.dtype, "same_kind"):
                raise TypeError(f"{op}: cannot cast updates from {_dtype_of(check)} to {x.dtype}")
            check = np.real(check)
    moved = _np_gather._moves_bits(x_dtype)
    if moved and reduce is not None:
        raise TypeError(f"{op}: reduce={reduce!r} combines values; {x_dtype} is only moved "
                        "(reduce=None)")
    if moved:
        _check_data(x_dtype, op)
    stand = np.broadcast_to(np.zeros((), x_dtype), x.shape)
    axis = _np_gather._scatter_args(stand, _stand_in(indices), check, axis, reduce, op,
                                    moved=moved)[3]
    chunks = tuple(indices.chunks[d] if isinstance(indices, da.Array) and d == axis else
                   max(1, *x.chunks[d]) if d == axis else
                   _truncated(x.chunks[d], indices.shape[d]) for d in range(x.ndim))
    if not isinstance(indices, da.Array):
        if x.shape[axis] == 0 and indices.size:
            P.resolved(indices, 0, "raise", op)
        indices = da.from_array(indices, chunks=chunks)
    shape = tuple(indices.shape)
    if not isinstance(updates, da.Array):
        updates = np.asarray(updates)
        if updates.ndim == 0:
            updates = da.full(shape, updates, dtype=updates.dtype, chunks=chunks)
        else:
            updates = da.from_array(updates)
    if updates.shape != shape:
        if updates.ndim == len(shape) and all(u >= s for u, s in zip(updates.shape, shape)):
            updates = updates[tuple(slice(0, s) for s in shape)]
        else:
            updates = da.broadcast_to(updates, shape)
    return indices.rechunk(chunks), updates.rechunk(chunks), axis


def _dtype_of(a) -> np.dtype:
    return a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype


# ------------------------------------------------------------------ helpers


def _check_data(dtype: np.dtype, op: str) -> None:
    if _np_gather._moves_bits(dtype):  # moved as its bits, by the NumPy path's moves
        _np_gather.lanes(dtype)  # (an element of 0 bytes: TypeError)
    elif dtype.kind == "c":
        _complex.check(dtype, op)
    else:
        _np_gather._as_data(np.empty(0, dtype), op)


def _check_mode(mode, op: str) -> None:
    _np_gather._mode(mode, op)  # the NumPy path's ValueError


def _check_indices(indices, op: str) -> None:
    if isinstance(indices, np.ndarray):  # host indices: the NumPy path's errors
        as_index_array(indices, op)
    elif indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be of an integer dtype, got {indices.dtype}")


def _fill(fill_value, dtype: np.dtype, op: str) -> np.ndarray:
    """fill_value as a 0-d array of *dtype*, checked as the NumPy path checks it."""
    if _np_gather._moves_bits(dtype):
        return _np_gather._fill_of(fill_value, dtype, op)
    return _np_gather._fill(fill_value, dtype, _kernels.MODE_FILL, op)


def _wide(dtype: np.dtype) -> bool:
    """Whether *dtype* moves as several lanes (see ``gather.lanes``): the routing
    kernels of take_along_axis move one integer per element, so those gathers run
    on the lanes view (:func:`_lanes_along`)."""
    return _np_gather._moves_bits(dtype) and dtype.itemsize not in (1, 2, 4, 8)


def _lanes_along(x, indices, axis: int, mode: str, fill, op: str):
    """take_along_axis of a dtype of several lanes: of the lanes view of every chunk
    (one more axis, one chunk), the indices given that axis, after a check of the
    indices themselves (so that an ``IndexError`` names their own positions);
    ``fill``'s lanes written where they differ (``mode="fill"``)."""
    da = _da()
    dtype = x.dtype
    lane, count = _np_gather.lanes(dtype)
    n = x.shape[axis]
    if not isinstance(indices, da.Array):
        indices = da.from_array(np.asarray(indices), chunks=tuple(
            c if d != axis else max(1, *x.chunks[axis]) for d, c in enumerate(x.chunks)))
    if mode == "raise":
        indices = indices.map_blocks(_checked_block, n=n, op=op, dtype=indices.dtype)
    bits = fill.reshape(1).view(lane) if fill is not None else None
    alike = bits is None or bool((bits == bits[0]).all())
    view = x.map_blocks(_np_gather.lanes_view, lane, dtype=lane, new_axis=x.ndim,
                        chunks=(*x.chunks, (count,)))
    res = take_along_axis(view, indices[..., None], axis, mode=mode,
                          fill_value=bits[0] if bits is not None and alike else lane.type(0))
    out = res.rechunk({res.ndim - 1: -1}).map_blocks(_from_lanes_block, dtype, dtype=dtype,
                                                      drop_axis=res.ndim - 1)
    if not alike:
        outside = (indices >= n) if indices.dtype.kind == "u" else (indices >= n) | (indices < -n)
        out = da.where(da.broadcast_to(outside, out.shape), fill, out)
    return out


def _checked_block(indices: np.ndarray, *, n: int, op: str, block_info=None) -> np.ndarray:
    """A chunk of indices, after the NumPy path's ``IndexError`` for the first outside
    ``[-n, n)`` (its position in the whole index array)."""
    bad = _np_gather._outside(indices, n)
    if bad.any():
        origin = tuple(lo for lo, _ in block_info[0]["array-location"]) if block_info else ()
        P.raise_out_of_range(indices, bad, -n, n, op, origin)
    return indices


def _from_lanes_block(block: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return _np_gather.from_lanes(np.ascontiguousarray(block), dtype)


def _stand_in(a) -> np.ndarray:
    """A zero-stride NumPy array of *a*'s shape and dtype, for the NumPy path's checks."""
    return np.broadcast_to(np.zeros((), a.dtype), tuple(a.shape))


def _aligned(x, indices, axis: int, op: str):
    """x and indices on the other axes: equal, broadcast (a 1), or x's leading part
    where indices are shorter (the NumPy path's rules)."""
    da = _da()
    x_shape, i_shape = list(x.shape), list(indices.shape)
    lead = []
    for d in range(x.ndim):
        if d == axis or x_shape[d] == i_shape[d]:
            lead.append(slice(None))
        elif i_shape[d] == 1:
            i_shape[d] = x_shape[d]
            lead.append(slice(None))
        elif x_shape[d] == 1:
            x_shape[d] = i_shape[d]
            lead.append(slice(None))
        elif i_shape[d] < x_shape[d]:
            x_shape[d] = i_shape[d]
            lead.append(slice(0, i_shape[d]))
        else:
            raise ValueError(f"{op}: indices of shape {tuple(indices.shape)} do not fit x of "
                             f"shape {tuple(x.shape)} along axis {d}")
    x = da.broadcast_to(x[tuple(lead)], tuple(x_shape))
    target = tuple(i_shape)
    if isinstance(indices, da.Array):
        indices = da.broadcast_to(indices, target)
    else:
        indices = np.broadcast_to(indices, target)
    return x, indices


def _offsets(chunks) -> np.ndarray:
    """Where each chunk starts, and the total last."""
    return np.concatenate(([0], np.cumsum(chunks, dtype=np.int64))).astype(np.int64)


def _truncated(chunks: tuple[int, ...], extent: int) -> tuple[int, ...]:
    """*chunks* cut to their first *extent* elements."""
    out = []
    for c in chunks:
        if extent <= 0:
            break
        out.append(min(c, extent))
        extent -= c
    return tuple(out) or (0,)


def _block_shape(chunks, where) -> tuple[int, ...]:
    return tuple(int(c[i]) for c, i in zip(chunks, where, strict=True))


def _other_blocks(x, axis: int):
    """The block indices of x on every axis but *axis*."""
    return list(np.ndindex(*_drop(x.numblocks, axis)))


def _drop(where, axis: int) -> tuple:
    return tuple(where[:axis]) + tuple(where[axis + 1:])


def _at(where, axis: int, k: int) -> tuple:
    """*where* (without *axis*) with *k* put at *axis*."""
    return (*where[:axis], k, *where[axis:])


def _key(*parts) -> tuple:
    """A task's key (a function, so the star needs no newer Python's subscript syntax)."""
    return parts


def _array(name: str, dsk: dict, dependencies, chunks, dtype):
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    graph = HighLevelGraph.from_collections(name, dsk, dependencies=dependencies)
    return da.Array(graph, name, chunks=chunks, dtype=dtype,
                    meta=np.empty((0,) * len(chunks), dtype))

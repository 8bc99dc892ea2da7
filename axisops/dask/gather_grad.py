"""Gradients of the gathers and of scatter on dask arrays (see :mod:`axisops.dask`).

The gradient of a gather is a scatter-add of ``g`` into zeros of ``x``'s shape:
:func:`axisops.dask.gather.scatter_graph`, which steps through the updates of
each chunk of the result in C order of the indices, so the sums are the NumPy
path's, bit for bit (float16 accumulates in float32, rounded once). The result
is chunked as ``g`` outside the axis, and along it in chunks as long as ``g``'s.
``grad.take_along_axis`` sums over the dimensions where the forward broadcast
``x`` with dask's sum (equal to the NumPy path's to rounding there).

``grad.scatter`` is built as the NumPy path builds it, from lazy scatters and
gathers; with ``reduce="mul"`` each update's product of the other factors of its
destination comes from one task per chunk of ``x`` holding the updates that write
into it (prefix and suffix products, no division, as on NumPy).

>>> import dask.array as da, numpy as np, axisops
>>> g = da.from_array(np.array([1., 2., 3.]), chunks=2)
>>> axisops.grad.take(g, da.from_array(np.array([0, 2, 0]), chunks=2), (4,)).compute()
array([4., 0., 2., 0.])
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from .. import _complex
from .._axes import normalize_axis
from . import _pointers as P
from . import gather as _gather

SERVES = "axisops.grad"
__all__ = ["take", "take_along_axis", "gather_nd", "scatter"]


def _da():
    import dask.array as da

    return da


def _g_dtypes(g, op):
    """(gradient dtype, working dtype) of a gather's gradient, as the NumPy path."""
    if g.dtype.kind not in "biufc":
        raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
    dtype = g.dtype if g.dtype.kind == "f" else np.dtype(np.float64)
    return dtype, (np.dtype(np.float32) if dtype == np.float16 else dtype)


def _check_g(g, expected, op):
    if tuple(g.shape) != tuple(expected):
        raise ValueError(f"{op}: g has shape {tuple(g.shape)}, expected the forward's output "
                         f"shape {tuple(expected)}")


def _lazy(a, chunks=None):
    da = _da()
    if isinstance(a, da.Array):
        return a
    return da.from_array(np.asarray(a), chunks=chunks if chunks is not None else "auto")


def _componentwise(run, g):
    """A gradient of complex ``g``: the real gradient of each part, recombined."""
    return run(g.real) + 1j * run(g.imag)


def _added(g, indices, x_shape, axis: int, mode: str, op: str):
    """``g`` scatter-added along *axis* into zeros of *x_shape* (chunked as ``g``
    outside the axis), ``indices`` broadcasting to ``g``."""
    da = _da()
    dtype, work = _g_dtypes(g, op)
    n = x_shape[axis]
    along = max(1, *g.chunks[axis]) if g.chunks[axis] else 1
    chunks = tuple(along if d == axis else g.chunks[d] for d in range(len(x_shape)))
    zeros = da.zeros(x_shape, dtype=dtype, chunks=chunks)
    if n == 0 or g.size == 0:  # no index reads anything: checked as the NumPy path
        if n == 0 and mode != "fill" and indices.size:
            raise IndexError(f"{op}: cannot take from an empty axis {axis}")
        return zeros
    indices = indices.rechunk(tuple(g.chunks[d] if indices.shape[d] == g.shape[d] else -1
                                    for d in range(g.ndim)))
    return _gather.scatter_graph(zeros, indices, g, axis, "add", mode=mode, op=op, work=work)


def take(g, indices, x_shape, axis=None, mode="raise"):
    """Lazy :func:`axisops.grad.take`: ``g`` scatter-added at the indices."""
    da = _da()
    op = "grad.take"
    x_shape = tuple(int(s) for s in x_shape)
    _gather._check_mode(mode, op)
    indices = indices if isinstance(indices, da.Array) else np.asarray(indices)
    _gather._check_indices(indices, op)
    if g.dtype.kind == "c":
        return _componentwise(lambda part: take(part, indices, x_shape, axis, mode), g)
    flat_shape = x_shape
    if axis is None:
        flat_shape, axis = (math.prod(x_shape),), 0
        expected = tuple(indices.shape)
    else:
        axis = normalize_axis(axis, len(x_shape), op)
        expected = x_shape[:axis] + tuple(indices.shape) + x_shape[axis + 1:]
    _check_g(g, expected, op)
    _g_dtypes(g, op)
    m = math.prod(indices.shape)
    lead, trail = flat_shape[:axis], flat_shape[axis + 1:]
    g = g.reshape(lead + (m,) + trail)
    if not isinstance(indices, da.Array) and mode == "raise" and flat_shape[axis]:
        P.resolved(indices, flat_shape[axis], mode, op)  # NumPy indices: checked now
    laid = _lazy(indices).reshape(-1).reshape((1,) * len(lead) + (m,) + (1,) * len(trail))
    return _added(g, laid, flat_shape, axis, mode, op).reshape(x_shape)


def take_along_axis(g, indices, x_shape, axis, mode="raise"):
    """Lazy :func:`axisops.grad.take_along_axis`: ``g`` scatter-added at the indices."""
    da = _da()
    op = "grad.take_along_axis"
    x_shape = tuple(int(s) for s in x_shape)
    _gather._check_mode(mode, op)
    indices = indices if isinstance(indices, da.Array) else np.asarray(indices)
    _gather._check_indices(indices, op)
    if g.dtype.kind == "c":
        return _componentwise(lambda part: take_along_axis(part, indices, x_shape, axis, mode), g)
    shape = x_shape
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"{op}: with axis=None indices must be 1-D, got {indices.ndim} "
                             "dimensions")
        shape, axis = (math.prod(x_shape),), 0
    axis = normalize_axis(axis, len(shape), op)
    if indices.ndim != len(shape):
        raise ValueError(f"{op}: indices must have x's {len(shape)} dimensions, got "
                         f"{indices.ndim}")
    # the forward's result shape, and where it broadcast x (summed) or used its leading part
    out_shape, broadcast = [], []
    for d, (s, i) in enumerate(zip(shape, indices.shape, strict=True)):
        if d == axis or s == i or i == 1:
            out_shape.append(i if d == axis else s)
        elif s == 1:
            out_shape.append(i)
            broadcast.append(d)
        elif i < s:
            out_shape.append(i)
        else:
            raise ValueError(f"{op}: indices of shape {tuple(indices.shape)} do not fit x of "
                             f"shape {shape} along axis {d}")
    _check_g(g, out_shape, op)
    _g_dtypes(g, op)
    if not isinstance(indices, da.Array) and mode == "raise" and shape[axis]:
        P.resolved(indices, shape[axis], mode, op)
    target = tuple(shape[axis] if d == axis else out_shape[d] for d in range(len(shape)))
    acc = _added(g, _lazy(indices), target, axis, mode, op)
    if broadcast:
        acc = acc.sum(axis=tuple(broadcast), keepdims=True, dtype=acc.dtype)
    if acc.shape != shape:  # the forward used x's leading part: the rest gets 0
        acc = da.pad(acc, [(0, s - a) for s, a in zip(shape, acc.shape, strict=True)])
    return acc.reshape(x_shape)


def gather_nd(g, indices, x_shape, batch_dims=0):
    """Lazy :func:`axisops.grad.gather_nd`: each slice of ``g`` added back where it
    came from (a scatter-add along the flattened indexed dimensions)."""
    da = _da()
    op = "grad.gather_nd"
    x_shape = tuple(int(s) for s in x_shape)
    indices = indices if isinstance(indices, da.Array) else np.asarray(indices)
    _gather._check_indices(indices, op)
    if g.dtype.kind == "c":
        return _componentwise(lambda part: gather_nd(part, indices, x_shape, batch_dims), g)
    from .. import gather as _np_gather

    b, dims, out_shape = _np_gather._nd_shapes(x_shape, _gather._stand_in(indices), batch_dims,
                                               op)
    _check_g(g, out_shape, op)
    _g_dtypes(g, op)
    q = len(dims)
    batch, rest = x_shape[:b], x_shape[b + q:]
    m = math.prod(indices.shape[b:-1])
    flat = _flat_tuples(_lazy(indices), dims, op).reshape(batch + (m,))
    laid = flat.reshape(batch + (m,) + (1,) * len(rest))
    g = g.reshape(batch + (m,) + rest)
    return _added(g, laid, batch + (math.prod(dims),) + rest, b, "raise", op).reshape(x_shape)


def _flat_tuples(indices, dims, op):
    """Each index tuple as one flat index over *dims* (C order), checked per chunk."""
    da = _da()
    indices = indices.rechunk({indices.ndim - 1: -1})
    offsets = [_gather._offsets(c) for c in indices.chunks]

    def block(a, block_info=None):
        where = block_info[0]["chunk-location"]
        origin = tuple(int(offsets[d][i]) for d, i in enumerate(where))
        return _flat_block(a, dims=dims, op=op, origin=origin)

    return da.map_blocks(block, indices, drop_axis=indices.ndim - 1, dtype=np.int64,
                         meta=np.empty((0,) * (indices.ndim - 1), np.int64))


def _flat_block(a, *, dims, op, origin=()):
    tuples = P.checked_tuples(a, dims, op, origin)
    flat = np.zeros(tuples.shape[0], np.int64)
    for t, d in enumerate(dims):
        flat = flat * d + tuples[:, t]
    return flat.reshape(a.shape[:-1])


def scatter(g, x, indices, updates, axis, reduce=None):
    """Lazy :func:`axisops.grad.scatter`: ``(grad_x, grad_updates)``, built from
    lazy scatters and gathers as the NumPy path builds it."""
    da = _da()
    op = "grad.scatter"
    x = _lazy(x)
    if any(getattr(a, "dtype", np.dtype(float)).kind == "c" for a in (g, x, updates)):
        return _complex_scatter(g, x, indices, updates, axis, reduce)
    given_shape = np.shape(updates) if not isinstance(updates, da.Array) else updates.shape
    if x.dtype.kind not in "biuf":
        _gather._check_data(x.dtype, op)
    idx, upd, axis = _gather._scatter_args(x, indices, updates, axis, reduce, op)
    _check_g(g, x.shape, op)
    dtype, work = _g_dtypes(g, op)
    g = _lazy(g).astype(work)
    n = x.shape[axis]
    idx = idx.map_blocks(_nonnegative, n=n, dtype=np.int64)
    lead = tuple(slice(None) if d == axis else slice(0, s) for d, s in enumerate(idx.shape))

    def at_destinations(a):  # a (x's shape) read at each update's destination
        return _gather.take_along_axis(a[lead], idx, axis)

    def where(mask, a):
        return da.where(mask, a, 0)

    if reduce is None:
        position = da.arange(math.prod(idx.shape), dtype=np.int64, chunks=max(
            1, math.prod(c[0] for c in idx.chunks))).reshape(idx.shape).rechunk(idx.chunks)
        last = _gather.scatter(da.full(x.shape, -1, dtype=np.int64, chunks=x.chunks), idx, position,
                               axis, reduce="max")
        grad_x = where(last < 0, g)
        grad_u = where(at_destinations(last) == position, at_destinations(g))
    elif reduce == "add":
        grad_x = g
        grad_u = at_destinations(g)
    elif reduce == "mul":
        u = upd.astype(x.dtype).astype(work)
        grad_x = g * _gather.scatter(da.ones(x.shape, dtype=work, chunks=x.chunks), idx, u, axis,
                                     reduce="mul")
        grad_u = at_destinations(g) * at_destinations(x.astype(work)) * _others(
            x.astype(work), idx, u, axis)
    else:
        result = _gather.scatter(x, idx, upd, axis, reduce=reduce)
        from_x = _same(x, result)
        from_u = _same(upd.astype(x.dtype), at_destinations(result))
        count = _gather.scatter(from_x.astype(work), idx, from_u.astype(work), axis, reduce="add")
        share = g / count
        grad_x = where(from_x, share)
        grad_u = where(from_u, at_destinations(share))
    return grad_x.astype(dtype), _to_shape(grad_u.astype(work), given_shape).astype(dtype)


def _nonnegative(block, n):
    block = block.astype(np.int64)
    return np.where(block < 0, block + n, block)


def _same(a, b):
    """Elementwise equality, NaN equal to NaN (as the NumPy path)."""
    da = _da()
    if a.dtype.kind == "f":
        return (a == b) | (da.isnan(a) & da.isnan(b))
    return a == b


def _to_shape(grad, shape):
    """grad_updates of indices' shape back to the shape ``updates`` had."""
    da = _da()
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    if len(shape) == grad.ndim and all(s >= t for s, t in zip(shape, grad.shape)):
        return da.pad(grad, [(0, s - t) for s, t in zip(shape, grad.shape)])
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead)), dtype=grad.dtype) if lead else grad
    ones = tuple(d for d, s in enumerate(shape) if s == 1 and grad.shape[d] != 1)
    return (grad.sum(axis=ones, keepdims=True, dtype=grad.dtype) if ones else grad).reshape(shape)


def _others(x, idx, u, axis):
    """For every update, the product of the other updates of its destination (in C
    order, without division): one task per chunk of ``x`` holds the updates that
    write into it (see :func:`axisops.dask._pointers.exclusive_products`)."""
    from dask.base import tokenize

    op = "grad.scatter"
    bounds = _gather._offsets(x.chunks[axis])
    chunks = len(bounds) - 1
    name = f"grad-scatter-others-{tokenize(x, idx, u, axis)}"
    route, part, group, piece = (f"{p}-{name}" for p in ("route", "part", "group", "piece"))
    offsets = [_gather._offsets(c) for c in idx.chunks]
    dsk: dict = {}
    for j in np.ndindex(*idx.numblocks):
        origin = tuple(int(offsets[d][i]) for d, i in enumerate(j))
        rest = _gather._drop(j, axis)
        x_shapes = [_gather._block_shape(x.chunks, _gather._at(rest, axis, k))
                    for k in range(chunks)]
        dsk[_gather._key(route, *j)] = (partial(P.route_scatter, bounds=bounds, op=op, origin=origin,
                                    axis=axis, x_shapes=x_shapes, dtype=u.dtype, positions=True),
                            (idx.name, *j), (u.name, *j))
        for k in range(chunks):
            dsk[_gather._key(part, *j, k)] = (P.part_of, (route, *j), k)
    for xb in np.ndindex(*x.numblocks):
        if any(xb[d] >= idx.numblocks[d] for d in range(x.ndim) if d != axis):
            continue
        rest, k = _gather._drop(xb, axis), xb[axis]
        dsk[_gather._key(group, *xb)] = (P.exclusive_products, [(part, *_gather._at(rest, axis, i), k)
                                                    for i in range(idx.numblocks[axis])])
        for i in range(idx.numblocks[axis]):
            dsk[_gather._key(piece, *xb, i)] = (P.part_of, (group, *xb), i)
    for j in np.ndindex(*idx.numblocks):
        rest = _gather._drop(j, axis)
        dsk[_gather._key(name, *j)] = (
            partial(P.place_flat, shape=_gather._block_shape(idx.chunks, j), dtype=u.dtype),
            [(part, *j, k) for k in range(chunks)],
            [(piece, *_gather._at(rest, axis, k), j[axis]) for k in range(chunks)])
    return _gather._array(name, dsk, [x, idx, u], idx.chunks, u.dtype)


def _complex_scatter(g, x, indices, updates, axis, reduce):
    """grad.scatter with complex numbers, as the NumPy path: None, add, max and min
    (no order: TypeError) are linear in ``g`` and independent of the values, so
    each part of ``g`` goes through the real gradient; mul conjugates."""
    da = _da()
    op = "grad.scatter"
    u_dtype = updates.dtype if hasattr(updates, "dtype") else np.asarray(updates).dtype
    res = np.result_type(x.dtype, g.dtype, u_dtype)
    _complex.check(res, op)
    if reduce in ("max", "min"):
        from .. import _dtypes

        _dtypes.check_dtype(res, op)
    part = _complex.part_dtype(res)
    if reduce != "mul":
        shape = updates.shape if hasattr(updates, "shape") else np.shape(updates)
        zeros_u = da.zeros(shape, dtype=part) if len(shape) else np.zeros((), part)
        zeros_x = da.zeros(x.shape, dtype=part, chunks=x.chunks)
        re = scatter(g.real, zeros_x, indices, zeros_u, axis, reduce)
        im = scatter(g.imag, zeros_x, indices, zeros_u, axis, reduce)
        return re[0] + 1j * im[0], re[1] + 1j * im[1]
    _check_g(g, x.shape, op)
    given_shape = updates.shape if hasattr(updates, "shape") else np.shape(updates)
    x = x.astype(res)
    idx, upd, axis = _gather._scatter_args(x, indices, updates, axis, reduce, op)
    idx = idx.map_blocks(_nonnegative, n=x.shape[axis], dtype=np.int64)
    u = upd.astype(res)
    g = _lazy(g).astype(res)
    lead = tuple(slice(None) if d == axis else slice(0, s) for d, s in enumerate(idx.shape))

    def at_destinations(a):
        return _gather.take_along_axis(a[lead], idx, axis)

    products = _gather.scatter(da.ones(x.shape, dtype=res, chunks=x.chunks), idx, u, axis,
                               reduce="mul")
    grad_x = g * da.conj(products)
    grad_u = at_destinations(g) * da.conj(at_destinations(x) * _others(x, idx, u, axis))
    return grad_x, _to_shape(grad_u, given_shape)

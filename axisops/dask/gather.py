"""Gathers of dask arrays along an axis with chunked indices (see :mod:`axisops.dask`).

``take_along_axis(x, indices, axis)`` never gathers the axis into one task. The
result is chunked as ``indices`` (rechunked to ``x``'s chunks on the other axes).
For every chunk of ``x`` along the axis, one task per index chunk gathers, with
axisops' kernel, the indices that fall into that chunk (the others read position
0 and are marked as misses); the per-chunk results are merged in a chain, each
index taking the value of the chunk it falls in. A task so holds one chunk of
``x`` and one of ``indices``. Indices are resolved with the mode on the whole
axis first (``"wrap"``, ``"clip"``, negative indices, ``"fill"`` for misses), so
the values are the NumPy path's, bit for bit. ``take`` is ``take_along_axis`` with
the indices laid along the axis.

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
"""
from __future__ import annotations

import string

import numpy as np

from .. import _complex, _dtypes
from .. import gather as _np_gather
from .._axes import normalize_axis
from .._dispatch import numpy_function

__all__ = ["take", "take_along_axis"]

_TAKE_ALONG = numpy_function(_np_gather.take_along_axis)
_MODES = ("raise", "wrap", "clip", "fill")


def _da():
    import dask.array as da

    return da


def take(x, indices, axis=None, *, mode="raise", fill_value=0):
    """Lazy :func:`axisops.take` of a dask array (NumPy or dask indices)."""
    da = _da()
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = normalize_axis(axis, x.ndim, "take")
    if not isinstance(indices, da.Array):  # one small chunk; broadcast lazily below
        indices = np.asarray(indices)
        _check_indices(indices, "take")
        indices = da.from_array(indices, chunks=-1)
    _check_indices(indices, "take")
    shape = tuple(indices.shape)
    flat = indices.reshape(-1)
    laid = flat.reshape((1,) * axis + (flat.shape[0],) + (1,) * (x.ndim - axis - 1))
    out = take_along_axis(x, laid, axis, mode=mode, fill_value=fill_value, op="take")
    return out.reshape(x.shape[:axis] + shape + x.shape[axis + 1:])


def take_along_axis(x, indices, axis, *, mode="raise", fill_value=0, op="take_along_axis"):
    """Lazy :func:`axisops.take_along_axis` of a dask array with chunked indices."""
    da = _da()
    if x.dtype.kind == "c":
        _complex.check(x.dtype, op)
    else:
        _dtypes.check_dtype(x.dtype, op)
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {', '.join(map(repr, _MODES))}, "
                         f"got {mode!r}")
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
    if not isinstance(indices, da.Array):  # broadcast lazily, per task, not into the graph
        indices = da.from_array(indices, chunks=-1)
    x, indices = _aligned(x, indices, axis, op)
    n = x.shape[axis]
    fill = np.asarray(fill_value).astype(x.dtype) if mode == "fill" else None
    if n == 0 and mode != "fill" and indices.size:
        raise IndexError(f"{op}: cannot take from an empty axis {axis}")
    indices = indices.rechunk(tuple(c if d != axis else indices.chunks[d]
                                    for d, c in enumerate(x.chunks)))
    letters = string.ascii_lowercase[:x.ndim]
    x_ind = letters[:axis] + "z" + letters[axis + 1:]
    record = np.dtype([("v", x.dtype), ("hit", bool)])
    merged = None
    offset = 0
    for k, size in enumerate(x.chunks[axis]):
        x_k = x.blocks[(slice(None),) * axis + (k,)]
        part = da.blockwise(_gather_part, letters, x_k, x_ind, indices, letters,
                            axis=axis, offset=offset, size=size, n=n, mode=mode, op=op,
                            record=record, dtype=record, concatenate=True,
                            meta=np.empty((0,) * x.ndim, record))
        merged = part if merged is None else da.map_blocks(_merge, merged, part, dtype=record)
        offset += size
    if merged is None:  # an empty axis with mode="fill": every index misses
        return da.full(indices.shape, fill, dtype=x.dtype, chunks=indices.chunks)
    return merged.map_blocks(_values, fill=fill, dtype=x.dtype,
                             meta=np.empty((0,) * x.ndim, x.dtype))


def _check_indices(indices, op: str) -> None:
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be of an integer dtype, got {indices.dtype}")


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


def _resolved(indices: np.ndarray, n: int, mode: str, op: str) -> np.ndarray:
    """Indices as positions in ``[0, n)`` (-1 for a miss with ``"fill"``)."""
    i = indices.astype(np.int64) if indices.dtype != np.uint64 else indices
    if mode == "wrap":
        return (i % n).astype(np.int64) if n else np.zeros(i.shape, np.int64)
    if mode == "clip":
        return np.clip(i, 0, max(n - 1, 0)).astype(np.int64)
    inside = (i >= -n) & (i < n) if indices.dtype != np.uint64 else i < n
    if mode == "raise" and not inside.all():
        bad = indices[~inside].flat[0]
        raise IndexError(f"{op}: index {bad} is out of range [-{n}, {n})")
    i = i.astype(np.int64)
    return np.where(inside, np.where(i < 0, i + n, i), -1)


def _gather_part(x_block, index_block, axis, offset, size, n, mode, op, record):
    """The indices that fall into this chunk of x, gathered by axisops; misses marked."""
    where = _resolved(index_block, n, mode, op)
    hit = (where >= offset) & (where < offset + size)
    local = np.where(hit, where - offset, 0)
    out = np.empty(index_block.shape, record)
    out["hit"] = hit
    if x_block.shape[axis]:
        out["v"] = _TAKE_ALONG(x_block, local, axis)
    else:
        out["v"] = 0
    return out


def _merge(merged: np.ndarray, part: np.ndarray) -> np.ndarray:
    return np.where(part["hit"], part, merged)


def _values(records: np.ndarray, fill) -> np.ndarray:
    if fill is None:
        return records["v"]
    return np.where(records["hit"], records["v"], fill)

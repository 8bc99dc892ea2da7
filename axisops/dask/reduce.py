"""Reductions and arg-reductions of dask arrays (see :mod:`axisops.dask`).

Value reductions are ``dask.array.reduction`` trees: each chunk is reduced by
axisops in the accumulator dtype (float32 for float16, int64 for small ints, as
the NumPy path), partial results are combined by axisops too, and the last step
casts to the result dtype once. ``mean`` is that sum divided by the count, which
the shape gives.

Arg-reductions first turn every chunk into records ``(value, global index)`` with
the reduced dimensions of size one (``map_blocks`` knows where each chunk sits),
then reduce the records in a tree. Two records compare by the contract's rule — a
NaN beats any number, a greater value (smaller for argmin) beats a lesser, and
between equals the smaller global index wins (the greater with
``select_last_index``) — which is associative and commutative, so the winner is
the same for every chunking and every tree. The global index is into the C-ordered
block of the reduced axes, as the NumPy path's.

>>> import dask.array as da, numpy as np, axisops
>>> x = da.from_array(np.array([[3, 9, 9], [9, 1, 9]]), chunks=1)
>>> axisops.argmax(x, axis=(0, 1)).compute()            # the first 9 in C order
np.int64(1)
>>> axisops.argmax(x, axis=None, select_last_index=True).compute()
np.int64(5)
"""
from __future__ import annotations

import math
import warnings
from functools import partial
from typing import Any

import numpy as np

from .. import _dtypes
from .. import missing as _np_missing
from .. import reduce as _np_reduce
from .._axes import normalize_axes, reduced_shape
from .._dispatch import numpy_function

__all__ = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "unravel"]

_SUM = numpy_function(_np_reduce.sum)
_PROD = numpy_function(_np_reduce.prod)
_MAX = numpy_function(_np_reduce.max)
_MIN = numpy_function(_np_reduce.min)
_ARGMAX = numpy_function(_np_reduce.argmax)
_ARGMIN = numpy_function(_np_reduce.argmin)
_UNRAVEL = numpy_function(_np_reduce.unravel)
#: The chunk step of each arg-reduction (the nan twins give -1 for a chunk of NaN).
_ARGS = {"argmax": _ARGMAX, "argmin": _ARGMIN,
         "nanargmax": numpy_function(_np_missing.nanargmax),
         "nanargmin": numpy_function(_np_missing.nanargmin)}


def _da():
    import dask.array as da

    return da


def _meta(ndim: int, dtype) -> np.ndarray:
    return np.empty((0,) * ndim, dtype)


# ------------------------------------------------------------------ value reductions

def sum(x, axis=None, *, keepdims=False, dtype=None):
    """Lazy :func:`axisops.sum` of a dask array."""
    return _value("sum", x, axis, keepdims, dtype)


def prod(x, axis=None, *, keepdims=False, dtype=None):
    """Lazy :func:`axisops.prod` of a dask array."""
    return _value("prod", x, axis, keepdims, dtype)


def mean(x, axis=None, *, keepdims=False, dtype=None):
    """Lazy :func:`axisops.mean` of a dask array: the sum in the accumulator dtype,
    divided once by the count."""
    axes = normalize_axes(axis, x.ndim, "mean")
    res, acc = _dtypes.value_dtypes("mean", x.dtype, dtype)
    count = math.prod(x.shape[d] for d in axes)
    total = _value("sum", x, axes, keepdims, acc)
    if count == 0:
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
    return (total / count if count else total * np.nan).astype(res)


def max(x, axis=None, *, keepdims=False):
    """Lazy :func:`axisops.max` of a dask array (NaN propagates)."""
    return _extreme("max", _MAX, x, axis, keepdims)


def min(x, axis=None, *, keepdims=False):
    """Lazy :func:`axisops.min` of a dask array (NaN propagates)."""
    return _extreme("min", _MIN, x, axis, keepdims)


def _value(op: str, x, axis, keepdims: bool, dtype):
    da = _da()
    axes = normalize_axes(axis, x.ndim, op)
    res, acc = _dtypes.value_dtypes(op, x.dtype, dtype)
    reduce = _SUM if op == "sum" else _PROD
    chunk = partial(_reduced, reduce=reduce, acc=acc)
    aggregate = partial(_reduced, reduce=reduce, acc=acc, result=res)
    return da.reduction(x, chunk, aggregate, axis=axes, keepdims=keepdims, dtype=res,
                        combine=chunk, concatenate=True,
                        meta=_meta(len(reduced_shape(x.shape, axes, keepdims)), res))


def _reduced(block, axis, keepdims, reduce, acc=None, result=None):
    """A chunk's (or a combine's) reduction by axisops in the accumulator dtype *acc*;
    cast to *result* at the end.

    Module-level, with ``functools.partial`` for the options: a task ships the
    function's name, not its code (closures are pickled by value). No parameter
    is called ``dtype``: ``dask.array.reduction`` would pass its own."""
    out = np.asarray(reduce(block, axis=axis, keepdims=keepdims, dtype=acc) if acc else
                     reduce(block, axis=axis, keepdims=keepdims))
    return out if result is None else _scalar_or_array(out.astype(result))


def _extreme(op: str, func, x, axis, keepdims: bool, chunk=None, aggregate=None):
    """A tree of *func* (max, min; their nan twins pass their own *chunk* and
    *aggregate* steps, see ``axisops.dask.missing``)."""
    da = _da()
    axes = normalize_axes(axis, x.ndim, op)
    _dtypes.check_dtype(x.dtype, op)
    if any(x.shape[d] == 0 for d in axes):
        name = op.removeprefix("nan")
        raise ValueError(f"{op}: zero-size array to reduction operation {name} which has no "
                         "identity")
    chunk = chunk or partial(_reduced, reduce=func)
    aggregate = aggregate or partial(_reduced, reduce=func, result=x.dtype)
    return da.reduction(x, chunk, aggregate, axis=axes, keepdims=keepdims, dtype=x.dtype,
                        combine=chunk, concatenate=True,
                        meta=_meta(len(reduced_shape(x.shape, axes, keepdims)), x.dtype))


# ------------------------------------------------------------------- arg-reductions

def argmax(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64):
    """Lazy :func:`axisops.argmax` of a dask array: global indices, any chunking."""
    return _arg("argmax", x, axis, keepdims, select_last_index, index_dtype)


def argmin(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64):
    """Lazy :func:`axisops.argmin` of a dask array: global indices, any chunking."""
    return _arg("argmin", x, axis, keepdims, select_last_index, index_dtype)


def _arg(op: str, x, axis, keepdims: bool, select_last: bool, index_dtype):
    da = _da()
    axes = normalize_axes(axis, x.ndim, op)
    _dtypes.check_dtype(x.dtype, op)
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    red_shape = tuple(x.shape[d] for d in axes)
    count = math.prod(red_shape)
    if count == 0:
        raise ValueError(f"{op}: attempt to get {op} of an empty sequence")
    _dtypes.check_index_fits(count, index_dtype, op)
    record = np.dtype([("v", x.dtype), ("i", np.int64)])
    chunks = tuple((1,) * len(c) if d in axes else c for d, c in enumerate(x.chunks))
    records = x.map_blocks(_records, op=op, axes=axes, red_shape=red_shape,
                           select_last=bool(select_last), record=record, chunks=chunks,
                           dtype=record, meta=_meta(x.ndim, record))
    combine = partial(_best, greater=op == "argmax", last=bool(select_last))
    # The last combine also takes the indices out, so no task follows it (dask's
    # own arg-reductions have the same two layers: a task costs ~1 ms).
    aggregate = partial(_best_index, greater=op == "argmax", last=bool(select_last),
                        index_dtype=index_dtype)
    ndim = len(reduced_shape(x.shape, axes, keepdims))
    # dtype is the records' (dask gives it to the steps before the last one); the
    # result's dtype comes from meta.
    return da.reduction(records, _as_is, aggregate, axis=axes, keepdims=keepdims,
                        dtype=record, combine=combine, concatenate=True,
                        meta=_meta(ndim, index_dtype))


def _as_is(records: np.ndarray, axis, keepdims: bool) -> np.ndarray:
    """The reduction's chunk step: a chunk's records are reduced already (fused
    with :func:`_records` into one task)."""
    return records


def _best_index(recs: np.ndarray, axis, keepdims: bool, greater: bool, last: bool,
                index_dtype) -> Any:
    """The winning record's global index (see :func:`_best`)."""
    return _scalar_or_array(_best(recs, axis, keepdims, greater, last)["i"].astype(index_dtype))


def _scalar_or_array(a: np.ndarray) -> Any:
    """A NumPy scalar for a 0-d result, as the NumPy path returns."""
    return a[()] if a.ndim == 0 else a


def _records(block, op, axes, red_shape, select_last, record, block_info=None):
    """One chunk's best (value, global index) per kept position, reduced dims kept;
    for nanargmax/nanargmin a chunk of NaN only gives a NaN value (no number here)."""
    location = block_info[0]["array-location"]
    skip = op.startswith("nan")
    options = {"all_nan_index": -1} if skip else {}
    local = np.asarray(_ARGS[op](block, axis=axes, keepdims=True, select_last_index=select_last,
                                 **options))
    none = local < 0 if skip else None
    if none is not None:
        local = np.where(none, 0, local)
    value = np.take_along_axis(_flatten_axes(block, axes), _flatten_axes(local, axes), -1)
    per_axis = np.unravel_index(local, tuple(block.shape[d] for d in axes))
    global_index = np.ravel_multi_index(
        tuple(i + location[d][0] for i, d in zip(per_axis, axes)), red_shape)
    out = np.empty(local.shape, record)
    out["v"] = value.reshape(local.shape) if none is None else np.where(none, np.nan,
                                                                         value.reshape(local.shape))
    out["i"] = global_index
    return out


def _flatten_axes(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """*a* with *axes* (in that order) moved to the end and flattened in C order."""
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = np.transpose(a, kept + list(axes))
    return moved.reshape(tuple(a.shape[d] for d in kept) + (-1,))


def _best(recs: np.ndarray, axis, keepdims: bool, greater: bool, last: bool,
          skip_nan: bool = False) -> Any:
    """The winning record over *axis* by the contract's rule (see the module); with
    *skip_nan* (nanargmax, nanargmin) any number beats a NaN record, which wins only
    where all are NaN."""
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(d % recs.ndim for d in axes)
    flat = _flatten_axes(recs, axes)
    v, i = flat["v"], flat["i"]
    if v.dtype.kind == "f":
        nan = np.isnan(v)
        fill = -np.inf if greater else np.inf
        finite = np.where(nan, fill, v)
    else:
        nan = np.zeros(v.shape, bool)
        finite = v
    best = finite.max(axis=-1, keepdims=True) if greater else finite.min(axis=-1, keepdims=True)
    if skip_nan:
        candidate = ((finite == best) & ~nan) | nan.all(axis=-1, keepdims=True)
    else:
        candidate = np.where(nan.any(axis=-1, keepdims=True), nan, finite == best)
    if last:
        index = np.where(candidate, i, -1).max(axis=-1)
    else:
        index = np.where(candidate, i, np.iinfo(np.int64).max).min(axis=-1)
    pick = np.argmax((i == index[..., None]) & candidate, axis=-1)
    winner = np.take_along_axis(flat, pick[..., None], -1)[..., 0]
    kept_shape = tuple(s for d, s in enumerate(recs.shape) if d not in axes)
    winner = winner.reshape(kept_shape)
    if keepdims:
        winner = np.expand_dims(winner, axes)
    return winner


def unravel(idx, shape, axis):
    """Lazy :func:`axisops.unravel` of a dask index array: one dask array per reduced
    axis, chunked as *idx* (an index out of range raises when computed)."""
    shape = tuple(int(s) for s in shape)
    axes = normalize_axes(axis, len(shape), "unravel")
    if idx.dtype.kind not in "iu":
        _UNRAVEL(np.zeros(0, idx.dtype), shape, axis)  # the NumPy path's TypeError
    return tuple(idx.map_blocks(_one_axis_of, shape=shape, axes=axes, k=k, dtype=np.int64,
                                meta=_meta(idx.ndim, np.int64)) for k in range(len(axes)))


def _one_axis_of(block: np.ndarray, shape, axes, k: int) -> np.ndarray:
    return np.asarray(_UNRAVEL(block, shape, axes)[k])

"""Scans of dask arrays (see :mod:`axisops.dask`).

A scan along a chunked axis is three steps, each a layer of tasks:

1. every chunk is scanned by axisops on its own (in parallel);
2. every chunk's *summary* is taken — its total (cumsum, cumprod) or the last
   (value, global index) of its running extreme (cummax, cummin) — and the
   summaries are combined in order along the axis into each chunk's *carry*: a
   chain of small tasks, one slice per chunk;
3. every chunk's local scan is combined with its carry (in parallel).

So no task holds more than one chunk, whatever the length of the axis. ``reverse``
runs the chain from the last chunk; ``exclusive`` scans each chunk exclusively and
carries the totals of the chunks before it. ``cummax``/``cummin`` carry (value,
global index) and a later element takes over when it is ``>=`` the carry (``<=``
for cummin, a NaN always), PyTorch's rule, so indices match the NumPy path's.
Float sums and products are associated differently from one chunk to the whole
axis (within rounding, as the contract allows); moves and indices are exact.

>>> import dask.array as da, numpy as np, axisops
>>> x = da.from_array(np.array([1., 3., 3., np.nan, 2., 5.]), chunks=2)
>>> values, indices = axisops.cummax(x)
>>> indices.compute()
array([0, 1, 2, 3, 3, 3])
>>> axisops.cumsum(x[:3], exclusive=True, reverse=True).compute()
array([6., 3., 0.])
"""
from __future__ import annotations

import numpy as np

from .. import _complex, _dtypes
from .. import scan as _np_scan
from .._axes import normalize_axis
from .._dispatch import numpy_function
from ..scan import ValuesIndices

__all__ = ["cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"]

_CUMSUM = numpy_function(_np_scan.cumsum)
_CUMPROD = numpy_function(_np_scan.cumprod)
_LOGCUMSUMEXP = numpy_function(_np_scan.logcumsumexp)
_CUMMAX = numpy_function(_np_scan.cummax)
_CUMMIN = numpy_function(_np_scan.cummin)


def _da():
    import dask.array as da

    return da


def _flat(x, axis, op: str):
    """(x, axis): the flattened array for ``axis=None``, else the normalised axis."""
    if axis is None:
        return x.reshape(-1), 0
    return x, normalize_axis(axis, x.ndim, op)


def _blocks_along(x, axis: int) -> list:
    """The chunks of *x* along *axis*, each a dask array spanning the other axes."""
    return [x.blocks[(slice(None),) * axis + (k,)] for k in range(x.numblocks[axis])]


def _slice(a, axis: int, index: int):
    return a[(slice(None),) * axis + (slice(index, index + 1 if index != -1 else None),)]


# ------------------------------------------------------------------ cumsum, cumprod

def cumsum(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.cumsum` of a dask array."""
    return _accumulate("cumsum", x, axis, dtype, exclusive, reverse)


def cumprod(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.cumprod` of a dask array."""
    return _accumulate("cumprod", x, axis, dtype, exclusive, reverse)


def logcumsumexp(x, axis=None):
    """Lazy :func:`axisops.logcumsumexp` of a dask array (carries combined with
    ``numpy.logaddexp``)."""
    return _accumulate("logcumsumexp", x, axis, None, False, False)


def _accumulate(op: str, x, axis, dtype, exclusive: bool, reverse: bool):
    da = _da()
    if x.ndim == 0:
        x = x.reshape(1)
        zero_d = True
    else:
        zero_d = False
    x, axis = _flat(x, axis, op)
    if op == "logcumsumexp":
        _dtypes.check_dtype(x.dtype, op)
        res = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        identity: float = -np.inf

        def scan(block, axis, dtype=None, exclusive=False, reverse=False):
            return _LOGCUMSUMEXP(block, axis)

        combine = np.logaddexp
    else:
        res = _result_dtype(op, x.dtype, dtype)
        scan = _CUMSUM if op == "cumsum" else _CUMPROD
        combine = np.add if op == "cumsum" else np.multiply
        identity = 0 if op == "cumsum" else 1

    def local(block):
        return scan(block, axis, dtype=res, exclusive=exclusive, reverse=reverse)

    def total(block):
        whole = scan(block, axis, dtype=res, reverse=reverse)
        return whole[(slice(None),) * axis + ((slice(0, 1) if reverse else slice(-1, None)),)] \
            if block.shape[axis] else np.full(_one(block.shape, axis), identity, res)

    blocks = _blocks_along(x, axis)
    order = range(len(blocks) - 1, -1, -1) if reverse else range(len(blocks))
    scanned = [None] * len(blocks)
    carry = None
    for k in order:
        block = blocks[k]
        part = block.map_blocks(local, dtype=res, meta=np.empty((0,) * x.ndim, res))
        if carry is not None:  # the chunk first: its chunks are the result's
            part = da.map_blocks(_with_carry, part, carry, combine=combine, dtype=res)
        scanned[k] = part
        summary = block.map_blocks(total, dtype=res, chunks=_one_chunks(block.chunks, axis),
                                   meta=np.empty((0,) * x.ndim, res))
        carry = summary if carry is None else da.map_blocks(combine, carry, summary, dtype=res)
    out = da.concatenate(scanned, axis=axis) if scanned else x.astype(res)
    return out.reshape(()) if zero_d else out


def _with_carry(block: np.ndarray, carry: np.ndarray, combine) -> np.ndarray:
    return combine(carry, block)


def _result_dtype(op: str, x_dtype, dtype) -> np.dtype:
    """The NumPy path's result dtype and errors, from NumPy's rules alone."""
    if _complex.is_complex(x_dtype) or _complex.is_complex(dtype):
        return _complex.result_dtype(op, x_dtype, dtype)
    _dtypes.check_dtype(x_dtype, op)
    return _dtypes.sum_dtypes(x_dtype, dtype, op)[0]


def _one(shape, axis: int) -> tuple[int, ...]:
    return tuple(1 if d == axis else s for d, s in enumerate(shape))


def _one_chunks(chunks, axis: int) -> tuple:
    return tuple((1,) * len(c) if d == axis else c for d, c in enumerate(chunks))


# ------------------------------------------------------------------ cummax, cummin

def cummax(x, axis=None, *, index_dtype=np.int64):
    """Lazy :func:`axisops.cummax` of a dask array: ``(values, indices)``, global indices."""
    return _extreme("cummax", x, axis, index_dtype)


def cummin(x, axis=None, *, index_dtype=np.int64):
    """Lazy :func:`axisops.cummin` of a dask array: ``(values, indices)``, global indices."""
    return _extreme("cummin", x, axis, index_dtype)


def _extreme(op: str, x, axis, index_dtype):
    da = _da()
    _dtypes.check_dtype(x.dtype, op)
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    if x.ndim == 0:
        return ValuesIndices(x.copy(), da.zeros((), dtype=index_dtype))
    x, axis = _flat(x, axis, op)
    _dtypes.check_index_fits(max(x.shape[axis] - 1, 0), index_dtype, op)
    scan = _CUMMAX if op == "cummax" else _CUMMIN
    record = np.dtype([("v", x.dtype), ("i", np.int64)])
    offsets = np.cumsum((0,) + x.chunks[axis][:-1])

    def local(block, offset):
        values, indices = scan(block, axis)
        out = np.empty(block.shape, record)
        out["v"] = values
        out["i"] = indices + offset
        return out

    def combine(carry, records):
        return _take_over(carry, records, op == "cummax")

    blocks = _blocks_along(x, axis)
    scanned = []
    carry = None
    for k, block in enumerate(blocks):
        part = block.map_blocks(local, int(offsets[k]), dtype=record,
                                meta=np.empty((0,) * x.ndim, record))
        if carry is not None:  # the chunk first: its chunks are the result's
            part = da.map_blocks(_with_carry, part, carry, combine=combine, dtype=record)
        scanned.append(part)
        if block.shape[axis]:
            carry = _slice(part, axis, -1)
    records = da.concatenate(scanned, axis=axis)
    values = records.map_blocks(lambda r: r["v"], dtype=x.dtype)
    indices = records.map_blocks(lambda r: r["i"].astype(index_dtype), dtype=index_dtype)
    return ValuesIndices(values, indices)


def _take_over(carry: np.ndarray, records: np.ndarray, greater: bool) -> np.ndarray:
    """Each record where it takes over from the carry (PyTorch's rule: ``>=`` for
    cummax, ``<=`` for cummin, a NaN always), else the carry."""
    new, old = records["v"], carry["v"]
    if new.dtype.kind == "f":
        takes = np.isnan(new) | (~np.isnan(old) & ((new >= old) if greater else (new <= old)))
    else:
        takes = (new >= old) if greater else (new <= old)
    return np.where(takes, records, np.broadcast_to(carry, records.shape))

"""Scans of dask arrays (see :mod:`axisops.dask`).

A scan along a chunked axis is three layers of tasks:

1. every chunk's *summary*, in parallel: its total (axisops' ``sum`` or ``prod``;
   the last element of its scan for ``logcumsumexp``), or for cummax/cummin the
   last (value, global index) of its running extreme — its extreme and the last
   index of it (``argmax``/``argmin`` with ``select_last_index``, which is also
   where the last NaN is);
2. the summaries combined in order along the axis into each chunk's *carry*: a
   chain of small tasks, one slice per chunk;
3. every chunk scanned by axisops with its carry combined in, in parallel.

So the data is read twice and written once, and no task holds more than one
chunk, whatever the length of the axis. The layers are built directly (not one
per chunk), so building a graph of thousands of chunks takes milliseconds. ``reverse``
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

from functools import partial

import numpy as np

from .. import _complex, _dtypes
from .. import reduce as _np_reduce
from .. import scan as _np_scan
from .._axes import normalize_axis
from .._dispatch import numpy_function
from ..scan import ValuesIndices

__all__ = ["cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"]

_SUM = numpy_function(_np_reduce.sum)
_PROD = numpy_function(_np_reduce.prod)
_CUMSUM = numpy_function(_np_scan.cumsum)
_CUMPROD = numpy_function(_np_scan.cumprod)
_LOGCUMSUMEXP = numpy_function(_np_scan.logcumsumexp)
_MAX = numpy_function(_np_reduce.max)
_MIN = numpy_function(_np_reduce.min)
_ARGMAX = numpy_function(_np_reduce.argmax)
_ARGMIN = numpy_function(_np_reduce.argmin)
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
    if x.ndim == 0:
        x = x.reshape(1)
        zero_d = True
    else:
        zero_d = False
    x, axis = _flat(x, axis, op)
    if op == "logcumsumexp":
        _dtypes.check_dtype(x.dtype, op)
        res = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        combine = np.logaddexp
        summary = partial(_last_of_scan, axis=axis, res=res)
        scan = partial(_logcumsumexp, axis=axis)
    else:
        res = _result_dtype(op, x.dtype, dtype)
        combine = np.add if op == "cumsum" else np.multiply
        total = _SUM if op == "cumsum" else _PROD
        summary = partial(_total, reduce=total, axis=axis, res=res)
        scan = partial(_CUMSUM if op == "cumsum" else _CUMPROD, axis=axis, dtype=res,
                       exclusive=exclusive, reverse=reverse)
    out = _carried(op, x, axis, summary, combine, partial(_scanned, scan=scan, combine=combine),
                   res, reverse)
    return out.reshape(()) if zero_d else out


def _carried(op: str, x, axis: int, summary, combine, finish, dtype, reverse: bool):
    """The three layers of a scan (see the module's docstring): *summary* of every
    chunk (one slice along *axis*), the chain of carries (*combine* of the carry
    and the next summary, in order along the axis, from the end with *reverse*),
    and *finish* of every chunk with its carry (None for the first) and its index
    along the axis."""
    from dask.base import tokenize

    from .gather import _array, _key

    summaries = x.map_blocks(summary, chunks=_one_chunks(x.chunks, axis), dtype=dtype,
                             meta=np.empty((0,) * x.ndim, dtype))
    name = f"{op}-{tokenize(x, axis, summary, finish, reverse)}"
    carry = f"carry-{name}"
    count = x.numblocks[axis]
    order = list(range(count - 1, -1, -1) if reverse else range(count))
    others = [b for b in np.ndindex(*x.numblocks[:axis], *x.numblocks[axis + 1:])]
    dsk: dict = {}
    for b in others:
        def at(k, b=b):
            return (*b[:axis], k, *b[axis:])

        previous = None  # the key of the carry into the chunk at hand
        for n, k in enumerate(order):
            dsk[_key(name, *at(k))] = (finish, (x.name, *at(k)), previous, k)
            if n + 1 < count:
                summary_key = (summaries.name, *at(k))
                if previous is None:
                    previous = summary_key
                else:
                    key = (carry, *at(k))
                    dsk[key] = (combine, previous, summary_key)
                    previous = key
    return _array(name, dsk, [x, summaries], x.chunks, dtype)


def _total(block: np.ndarray, reduce, axis: int, res) -> np.ndarray:
    return np.asarray(reduce(block, axis=axis, keepdims=True, dtype=res))


def _logcumsumexp(block: np.ndarray, axis: int, **_) -> np.ndarray:
    return _LOGCUMSUMEXP(block, axis)


def _last_of_scan(block: np.ndarray, axis: int, res) -> np.ndarray:
    if not block.shape[axis]:
        return np.full(_one(block.shape, axis), -np.inf, res)
    whole = _LOGCUMSUMEXP(block, axis)
    return whole[(slice(None),) * axis + (slice(-1, None),)]


def _scanned(block: np.ndarray, carry, k: int, scan, combine) -> np.ndarray:
    """The scan of a chunk, its carry combined in (carry first)."""
    out = scan(block)
    if carry is None or not out.size:
        return out
    with np.errstate(invalid="ignore"):  # -inf + -inf in logaddexp: -inf, as NumPy's scan
        return combine(carry, out, out=out)


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
    record = np.dtype([("v", x.dtype), ("i", np.int64)])
    offsets = tuple(int(o) for o in np.cumsum((0,) + x.chunks[axis][:-1]))
    greater = op == "cummax"
    summary = partial(_extreme_summary, axis=axis, greater=greater, record=record,
                      offsets=offsets)
    finish = partial(_extreme_scanned, axis=axis, greater=greater, record=record,
                     offsets=offsets)
    records = _carried(op, x, axis, summary, partial(_chain_extreme, greater=greater), finish,
                       record, False)
    values = records.map_blocks(_field, field="v", dtype=x.dtype)
    indices = records.map_blocks(_field, field="i", index_dtype=index_dtype, dtype=index_dtype)
    return ValuesIndices(values, indices)


def _extreme_summary(block, axis, greater, record, offsets, block_info=None):
    """A chunk's last running (value, global index): its extreme, and the last index
    of it (the last NaN if any: argmax/argmin with select_last_index); index -1
    for an empty chunk, which passes the carry on."""
    k = block_info[0]["chunk-location"][axis]
    out = np.empty(_one(block.shape, axis), record)
    if not block.shape[axis]:
        out["i"] = -1
        return out
    extreme = _MAX if greater else _MIN
    arg = _ARGMAX if greater else _ARGMIN
    out["v"] = extreme(block, axis=axis, keepdims=True)
    out["i"] = arg(block, axis=axis, keepdims=True, select_last_index=True) + offsets[k]
    return out


def _chain_extreme(carry, summary, greater):
    if summary.size and summary["i"].flat[0] < 0:
        return carry
    if carry.size and carry["i"].flat[0] < 0:
        return summary
    return _take_over(carry, summary, greater)


def _extreme_scanned(block, carry, k, axis, greater, record, offsets):
    """A chunk's running (value, global index) records, its carry combined in."""
    values, indices = (_CUMMAX if greater else _CUMMIN)(block, axis)
    out = np.empty(block.shape, record)
    out["v"] = values
    out["i"] = indices
    out["i"] += offsets[k]
    if carry is None or not out.size or carry["i"].flat[0] < 0:
        return out
    return _take_over(carry, out, greater)


def _field(records, field, index_dtype=None):
    values = records[field]
    return values.astype(index_dtype) if index_dtype is not None else values.copy()


def _take_over(carry: np.ndarray, records: np.ndarray, greater: bool) -> np.ndarray:
    """Each record where it takes over from the carry (PyTorch's rule: ``>=`` for
    cummax, ``<=`` for cummin, a NaN always), else the carry."""
    new, old = records["v"], carry["v"]
    if new.dtype.kind == "f":
        takes = np.isnan(new) | (~np.isnan(old) & ((new >= old) if greater else (new <= old)))
    else:
        takes = (new >= old) if greater else (new <= old)
    return np.where(takes, records, np.broadcast_to(carry, records.shape))

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
from .. import missing as _np_missing
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
#: Each sum or product scan's chunk total and chunk scan.
_TOTAL_AND_SCAN = {
    "cumsum": (_SUM, _CUMSUM), "cumprod": (_PROD, _CUMPROD),
    "nancumsum": (numpy_function(_np_missing.nansum), numpy_function(_np_missing.nancumsum)),
    "nancumprod": (numpy_function(_np_missing.nanprod), numpy_function(_np_missing.nancumprod)),
}


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
    else:  # cumsum, cumprod and their NaN-skipping twins (a NaN chunk's total is 0 or 1)
        plain = op.removeprefix("nan")
        res = _result_dtype(plain, x.dtype, dtype)
        combine = np.add if plain == "cumsum" else np.multiply
        total, chunk_scan = _TOTAL_AND_SCAN[op]
        summary = partial(_total, reduce=total, axis=axis, res=res)
        scan = partial(chunk_scan, axis=axis, dtype=res, exclusive=exclusive, reverse=reverse)
    out = _carried(op, x, axis, summary, combine, partial(_scanned, scan=scan, combine=combine),
                   res, reverse)
    return out.reshape(()) if zero_d else out


def _carried(op: str, x, axis: int, summary, combine, finish, dtype, reverse: bool,
             parts: int = 0):
    """The three layers of a scan (see the module's docstring): ``summary(chunk, k)``
    of every chunk k (one slice along *axis*), the chain of carries (*combine* of
    the carry and the next summary, in order along the axis, from the end with
    *reverse*), and ``finish(chunk, carry, k)`` of every chunk (carry None for the
    first). With *parts*, finish gives a tuple of that many chunks of *dtype*
    (a sequence of dtypes): one dask array each."""
    from operator import getitem

    from dask.base import tokenize

    from .gather import _array, _key

    name = f"{op}-{tokenize(x, axis, summary, finish, reverse)}"
    summaries, carry = f"summary-{name}", f"carry-{name}"
    count = x.numblocks[axis]
    order = list(range(count - 1, -1, -1) if reverse else range(count))
    whole = f"whole-{name}" if parts else name
    dsk: dict = {}
    for b in np.ndindex(*x.numblocks[:axis], *x.numblocks[axis + 1:]):
        def at(k, b=b):
            return (*b[:axis], k, *b[axis:])

        previous = None  # the key of the carry into the chunk at hand
        for n, k in enumerate(order):
            dsk[_key(whole, *at(k))] = (finish, (x.name, *at(k)), previous, k)
            for p in range(parts):
                dsk[_key(f"{name}-{p}", *at(k))] = (getitem, (whole, *at(k)), p)
            if n + 1 < count:
                summary_key = (summaries, *at(k))
                dsk[summary_key] = (summary, (x.name, *at(k)), k)
                if previous is None:
                    previous = summary_key
                else:
                    key = (carry, *at(k))
                    dsk[key] = (combine, previous, summary_key)
                    previous = key
    if not parts:
        return _array(name, dsk, [x], x.chunks, dtype)
    return tuple(_array(f"{name}-{p}", dsk, [x], x.chunks, dtype[p]) for p in range(parts))


def _total(block: np.ndarray, k: int, reduce, axis: int, res) -> np.ndarray:
    return np.asarray(reduce(block, axis=axis, keepdims=True, dtype=res))


def _logcumsumexp(block: np.ndarray, axis: int, **_) -> np.ndarray:
    return _LOGCUMSUMEXP(block, axis)


def _last_of_scan(block: np.ndarray, k: int, axis: int, res) -> np.ndarray:
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
    offsets = tuple(int(o) for o in np.cumsum((0,) + x.chunks[axis][:-1]))
    greater = op == "cummax"
    summary = partial(_extreme_summary, axis=axis, greater=greater, offsets=offsets)
    finish = partial(_extreme_scanned, axis=axis, greater=greater, offsets=offsets,
                     index_dtype=index_dtype)
    values, indices = _carried(op, x, axis, summary, partial(_chain_extreme, greater=greater),
                               finish, (x.dtype, index_dtype), False, parts=2)
    return ValuesIndices(values, indices)


def _extreme_summary(block, k, axis, greater, offsets):
    """A chunk's last running (value, global index): its extreme, and the last index
    of it (the last NaN if any: argmax/argmin with select_last_index); None for
    an empty chunk, which passes the carry on."""
    if not block.shape[axis]:
        return None
    value = (_MAX if greater else _MIN)(block, axis=axis, keepdims=True)
    index = (_ARGMAX if greater else _ARGMIN)(block, axis=axis, keepdims=True,
                                              select_last_index=True)
    return np.asarray(value), index + offsets[k]


def _chain_extreme(carry, summary, greater):
    if summary is None:
        return carry
    if carry is None:
        return summary
    return _take_over(carry, summary, greater, inplace=False)


def _extreme_scanned(block, carry, k, axis, greater, offsets, index_dtype):
    """A chunk's running (values, global indices), its carry combined in."""
    values, indices = (_CUMMAX if greater else _CUMMIN)(block, axis)
    if offsets[k]:
        indices += offsets[k]
    if carry is not None and values.size:
        values, indices = _take_over(carry, (values, indices), greater, inplace=True)
    return values, indices.astype(index_dtype, copy=False)


def _take_over(carry, running, greater: bool, inplace: bool):
    """The running (values, indices) where they take over from the carry (PyTorch's
    rule: ``>=`` for cummax, ``<=`` for cummin, a NaN always), else the carry's."""
    (old, old_i), (new, new_i) = carry, running
    with np.errstate(invalid="ignore"):
        keep = (new < old) if greater else (new > old)  # the carry stays
    if new.dtype.kind == "f":
        keep &= ~np.isnan(new)
        keep |= np.isnan(old) & ~np.isnan(new)
    if inplace:
        np.copyto(new, np.broadcast_to(old, new.shape), where=keep)
        np.copyto(new_i, np.broadcast_to(old_i, new_i.shape), where=keep)
        return new, new_i
    return np.where(keep, old, new), np.where(keep, old_i, new_i)

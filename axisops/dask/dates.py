"""Dates and times on dask arrays: the lazy int64 operators on their keys.

The NumPy path's rules (``axisops._dates``), composed of lazy pieces: a
``datetime64``/``timedelta64`` dask array is seen as its int64 counts
(``Array.view``), NaT the least int64.

* orderings (``max``, ``min``, ``argmax``, ``argmin``, ``cummax``, ``cummin`` and
  the ``nan`` twins of the reductions): the lazy int64 operator on the keys ``b``,
  or on ``b - 1`` where NaT must be the greatest key (``_dates._shifted``), the 1
  added back to values; ``nanargmax``/``nanargmin`` find all-NaT slices by the
  extreme of the keys (the NaT key wins only there) and give ``all_nan_index`` or
  the NumPy path's ``ValueError`` when the graph runs;
* sums of ``timedelta64`` (``sum``, ``mean``, ``cumsum``, their ``nan`` twins)
  and ``count`` of either: lazy int64 sums of the counts with NaT read as 0, NaT
  where a NaT propagates, means divided as NumPy divides a ``timedelta64``.

Every other operator of a date keeps the dask path's ``TypeError``.

>>> import dask.array as da, numpy as np, axisops
>>> t = da.from_array(np.array(["2020-01-02", "NaT", "2020-01-05"], "datetime64[D]"), chunks=2)
>>> axisops.nanargmax(t).compute(), axisops.max(t).compute()
(np.int64(2), np.datetime64('NaT','D'))
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dates, _dtypes
from .._axes import normalize_axes
from . import missing as _missing
from . import reduce as _reduce
from . import scan as _scan
from .reduce import _da, _meta, _scalar_or_array

__all__ = ["OPERATORS", "handles"]


def handles(func, x) -> bool:
    """Whether the call of the NumPy-path function *func* on *x* (a dask array) is a
    date's, served here."""
    kind = getattr(getattr(x, "dtype", None), "kind", "")
    name = func.__name__
    return kind in "mM" and func.__module__ in _SERVES and (
        name in _ORDERINGS or name == "count" or (kind == "m" and name in _SUMS))


_SERVES = ("axisops.reduce", "axisops.scan", "axisops.missing")


def _view(a, dtype, add: int = 0):
    """The dask array *a* seen as *dtype* of the same item size, *add* added to its
    int64 counts, wrapping (``Array.view`` takes no 0-d array)."""
    dtype = np.dtype(dtype)
    return a.map_blocks(_viewed, as_dtype=dtype, add=add, dtype=dtype,
                        meta=_meta(a.ndim, dtype))


def _viewed(block, as_dtype: np.dtype, add: int):
    out = np.asarray(block).view(as_dtype) if as_dtype.kind == "i" else np.asarray(block)
    if add:
        with np.errstate(over="ignore"):  # NaT - 1 wraps to the greatest key, and back
            out = out + np.int64(add)
    return _scalar_or_array(out.view(as_dtype))


def _keys(x, op: str):
    """The int64 keys of dates *x* for *op* (``b - 1`` where NaT must be greatest)."""
    return _view(x, np.int64, -1 if _dates._shifted(op) else 0)


def _values(keys, op: str, dtype: np.dtype):
    """Dates of *dtype* from their keys (the 1 added back where it was taken)."""
    return _view(keys, dtype, 1 if _dates._shifted(op) else 0)


def _sentinel(op: str) -> int:
    """The key of NaT for *op*."""
    return _dates._TOP if _dates._shifted(op) else _dates.NAT


# ------------------------------------------------------------------------ orderings

def _extreme(op: str):
    def extreme(x, axis=None, *, keepdims=False):
        base = op.removeprefix("nan")
        keys = getattr(_reduce, base)(_keys(x, op), axis, keepdims=keepdims)
        if op.startswith("nan"):  # an all-NaT slice: NaN's warning, when it runs
            keys = keys.map_blocks(_warn_all_nat, sentinel=_sentinel(op), dtype=np.int64)
        return _values(keys, op, x.dtype)

    extreme.__name__ = op
    extreme.__doc__ = f"Lazy :func:`axisops.{op}` of a dask array of dates (NaT as NaN)."
    return extreme


def _warn_all_nat(keys, sentinel: int):
    if (np.asarray(keys) == sentinel).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    return keys


def _arg(op: str):
    def arg(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64,
            all_nan_index=None):
        skip = op.startswith("nan")
        if skip:
            _dtypes.check_all_nan_index(all_nan_index, op)
        elif all_nan_index is not None:
            raise TypeError(f"{op}() got an unexpected keyword argument 'all_nan_index'")
        axes = normalize_axes(axis, x.ndim, op)
        if math.prod(x.shape[d] for d in axes) == 0:
            raise ValueError(f"{op}: attempt to get {op} of an empty sequence")
        base = op.removeprefix("nan")
        keys = _keys(x, op)
        index = getattr(_reduce, base)(keys, axes, keepdims=keepdims,
                                       select_last_index=select_last_index,
                                       index_dtype=index_dtype)
        if not skip:
            return index
        extreme = "max" if base == "argmax" else "min"
        all_nat = getattr(_reduce, extreme)(keys, axes, keepdims=keepdims) == _sentinel(op)
        if all_nan_index is None:  # -1 marks them until _missing.raise_all_nan raises
            return _missing.raise_all_nan(_da().where(all_nat, -1, index.astype(np.int64)),
                                          op, index.dtype)
        return _da().where(all_nat, all_nan_index, index).astype(index.dtype)

    arg.__name__ = op
    arg.__doc__ = f"Lazy :func:`axisops.{op}` of a dask array of dates (NaT as NaN)."
    return arg


def _cum_extreme(op: str):
    def cum(x, axis=None, *, index_dtype=np.int64):
        values, indices = getattr(_scan, op)(_keys(x, op), axis, index_dtype=index_dtype)
        return _scan.ValuesIndices(_values(values, op, x.dtype), indices)

    cum.__name__ = op
    cum.__doc__ = f"Lazy :func:`axisops.{op}` of a dask array of dates (NaT propagates)."
    return cum


# -------------------------------------------------------------- sums of durations

def _nat(x):
    """(the int64 counts with NaT read as 0, where NaT is)."""
    b = _view(x, np.int64)
    nat = b == _dates.NAT
    return _da().where(nat, 0, b), nat


def count(x, axis=None, *, keepdims=False):
    """Lazy :func:`axisops.count` of a dask array of dates: the elements not NaT."""
    return _reduce.sum(_view(x, np.int64) != _dates.NAT, axis, keepdims=keepdims,
                       dtype=np.int64)


def _sum(op: str):
    def total(x, axis=None, *, keepdims=False, dtype=None):
        skip = op.startswith("nan")
        axes = normalize_axes(axis, x.ndim, op)
        counts, nat = _nat(x)
        out = _reduce.sum(counts, axes, keepdims=keepdims)
        if not skip:  # NaT propagates (NumPy's rule)
            out = _da().where(_reduce.max(nat, axes, keepdims=keepdims), _dates.NAT, out)
        if op.endswith("mean"):
            n = _reduce.sum(~nat if skip else _da().ones_like(nat), axes, keepdims=keepdims,
                            dtype=np.int64)
            out = _da().map_blocks(_divided, out, n, unit=x.dtype, dtype=x.dtype,
                                   meta=_meta(out.ndim, x.dtype))
        else:
            out = _view(out, x.dtype)
        if dtype is not None and np.dtype(dtype) != x.dtype:
            out = out.astype(dtype)
        return out

    total.__name__ = op
    total.__doc__ = f"Lazy :func:`axisops.{op}` of a dask array of durations (NaT as NaN)."
    return total


def _divided(total, n, unit: np.dtype):
    """A mean of durations as NumPy divides a ``timedelta64`` (``axisops._dates``)."""
    total = np.asarray(total).view(unit)
    n = np.asarray(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.where(n > 0, total / np.maximum(n, 1), np.timedelta64("NaT"))
    if (n == 0).any():
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    return _scalar_or_array(np.asarray(out).astype(unit))


def _cumsum(op: str):
    def cumsum(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
        counts, nat = _nat(x)
        out = _scan.cumsum(counts, axis, exclusive=exclusive, reverse=reverse)
        if not op.startswith("nan"):  # NaT from the first NaT on
            seen = _scan.cumsum(nat.astype(np.int64), axis, exclusive=exclusive,
                                reverse=reverse) > 0
            out = _da().where(seen, _dates.NAT, out)
        return _view(out, x.dtype)

    cumsum.__name__ = op
    cumsum.__doc__ = f"Lazy :func:`axisops.{op}` of a dask array of durations (NaT as NaN)."
    return cumsum


_ORDERINGS = {
    **{op: _extreme(op) for op in ("max", "min", "nanmax", "nanmin")},
    **{op: _arg(op) for op in ("argmax", "argmin", "nanargmax", "nanargmin")},
    **{op: _cum_extreme(op) for op in ("cummax", "cummin")},
}
_SUMS = {
    **{op: _sum(op) for op in ("sum", "mean", "nansum", "nanmean")},
    **{op: _cumsum(op) for op in ("cumsum", "nancumsum")},
}
#: The date operators, by the public function's name.
OPERATORS = {**_ORDERINGS, **_SUMS, "count": count}

"""The missing-value operators on dask arrays (see :mod:`axisops.dask` and
:mod:`axisops.missing`), lazily, each a tree of small tasks over the chunks:

* ``nansum``/``nanprod``: the chunks' NaN-skipping sums (products) in the
  accumulator dtype, combined by the same operator (a chunk of NaN only gives the
  identity); ``count``: the chunks' counts added as int64; ``nanmean``: the two
  trees, divided once at the end (NaN with NumPy's warning where a count is 0).
* ``nanmax``/``nanmin``: the chunks' extremes combined by the same operator; the
  warning for an all-NaN slice comes from the last step only, so an all-NaN chunk
  next to full ones says nothing.
* ``nanargmax``/``nanargmin``: records (value, global index) per chunk, a NaN
  value meaning "no number here"; two records compare as ``argmax``'s do among
  numbers, and any number beats a NaN record. The last step raises for an
  all-NaN slice, or gives ``all_nan_index`` there.
* ``var``/``std`` and their nan forms: records (count, mean, M2) per chunk,
  merged by Chan's formula (``M2 = sum M2_i + sum n_i (mean_i - mean)^2``), in
  float64 (complex128 means); never a difference of large sums.
* ``nancumsum``/``nancumprod``: the scans of :mod:`axisops.dask.scan`, each chunk's
  total the NaN-skipping one.

>>> import dask.array as da, numpy as np, axisops
>>> x = da.from_array(np.array([[np.nan, 2., 7.], [np.nan, np.nan, np.nan]]), chunks=1)
>>> axisops.nanargmax(x, axis=1, all_nan_index=-1).compute()
array([ 2, -1])
>>> float(axisops.nanvar(x).compute())
6.25
"""
from __future__ import annotations

import math
import warnings
from functools import partial

import numpy as np

from .. import _dtypes
from .. import missing as _np_missing
from .. import reduce as _np_reduce
from .._axes import normalize_axes, reduced_shape
from .._dispatch import numpy_function
from . import scan as _scan
from .reduce import _as_is, _best, _da, _meta, _records, _reduced, _scalar_or_array
from .reduce import _extreme as _reduce_extreme

SERVES = "axisops.missing"
__all__ = ["nansum", "nanprod", "nanmean", "count", "nanmax", "nanmin", "nanargmax", "nanargmin",
           "var", "std", "nanvar", "nanstd", "nancumsum", "nancumprod"]

_NANSUM = numpy_function(_np_missing.nansum)
_NANPROD = numpy_function(_np_missing.nanprod)
_COUNT = numpy_function(_np_missing.count)
_NANMAX = numpy_function(_np_missing.nanmax)
_NANMIN = numpy_function(_np_missing.nanmin)


# ------------------------------------------------------------------ sums and counts

def nansum(x, axis=None, *, keepdims=False, dtype=None):
    """Lazy :func:`axisops.nansum` of a dask array."""
    return _value("nansum", x, axis, keepdims, dtype)


def nanprod(x, axis=None, *, keepdims=False, dtype=None):
    """Lazy :func:`axisops.nanprod` of a dask array."""
    return _value("nanprod", x, axis, keepdims, dtype)


def _value(op: str, x, axis, keepdims: bool, dtype):
    da = _da()
    axes = normalize_axes(axis, x.ndim, op)
    if x.dtype.kind not in "fc":
        _dtypes.check_dtype(x.dtype, op)
    res, acc = _dtypes.value_dtypes(op[3:], x.dtype, dtype)
    reduce = _NANSUM if op == "nansum" else _NANPROD
    chunk = partial(_reduced, reduce=reduce, acc=acc)
    aggregate = partial(_reduced, reduce=reduce, acc=acc, result=res)
    return da.reduction(x, chunk, aggregate, axis=axes, keepdims=keepdims, dtype=res,
                        combine=chunk, concatenate=True,
                        meta=_meta(len(reduced_shape(x.shape, axes, keepdims)), res))


def count(x, axis=None, *, keepdims=False):
    """Lazy :func:`axisops.count` of a dask array (int64)."""
    da = _da()
    axes = normalize_axes(axis, x.ndim, "count")
    if x.dtype.kind != "c":
        _dtypes.check_dtype(x.dtype, "count")
    int64 = np.dtype(np.int64)
    chunk = partial(_reduced, reduce=_COUNT)
    combine = partial(_reduced, reduce=_NANSUM, acc=int64)
    aggregate = partial(_reduced, reduce=_NANSUM, acc=int64, result=int64)
    return da.reduction(x, chunk, aggregate, axis=axes, keepdims=keepdims, dtype=int64,
                        combine=combine, concatenate=True,
                        meta=_meta(len(reduced_shape(x.shape, axes, keepdims)), int64))


def nanmean(x, axis=None, *, keepdims=False, dtype=None):
    """Lazy :func:`axisops.nanmean` of a dask array: the NaN-skipping sum and the
    count, divided once."""
    axes = normalize_axes(axis, x.ndim, "nanmean")
    if x.dtype.kind not in "fc":
        _dtypes.check_dtype(x.dtype, "nanmean")
        from .reduce import mean

        return mean(x, axes, keepdims=keepdims, dtype=dtype)
    res = _dtypes.value_dtypes("mean", x.dtype, dtype)[0]
    acc = res if res.kind == "c" else _dtypes.kernel_accumulator(res)
    total = nansum(x, axes, keepdims=keepdims, dtype=acc)
    counts = count(x, axes, keepdims=keepdims)
    return _da().map_blocks(_divided, total, counts, res=res, empty="Mean of empty slice",
                            dtype=res, meta=_meta(total.ndim, res))


def _divided(total, counts, res, empty: str):
    """total / counts as the NumPy path divides (see ``axisops.missing._divided``)."""
    return _scalar_or_array(np.asarray(_np_missing._divided(np.asarray(total),
                                                            np.asarray(counts), res, empty)))


# ----------------------------------------------------------------------- extremes

def nanmax(x, axis=None, *, keepdims=False):
    """Lazy :func:`axisops.nanmax` of a dask array."""
    return _extreme("nanmax", _NANMAX, x, axis, keepdims)


def nanmin(x, axis=None, *, keepdims=False):
    """Lazy :func:`axisops.nanmin` of a dask array."""
    return _extreme("nanmin", _NANMIN, x, axis, keepdims)


def _extreme(op: str, func, x, axis, keepdims: bool):
    return _reduce_extreme(op, func, x, axis, keepdims, chunk=partial(_quietly, reduce=func),
                           aggregate=partial(_extreme_aggregate, reduce=func, result=x.dtype))


def _quietly(block, axis, keepdims, reduce):
    """A chunk's (or a combine's) extreme: an all-NaN chunk is no news yet."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(reduce(block, axis=axis, keepdims=keepdims))


def _extreme_aggregate(block, axis, keepdims, reduce, result):
    out = _quietly(block, axis, keepdims, reduce).astype(result)
    if out.dtype.kind == "f" and np.isnan(out).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    return _scalar_or_array(out)


# ------------------------------------------------------------------- arg-extremes

def nanargmax(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64,
              all_nan_index=None):
    """Lazy :func:`axisops.nanargmax` of a dask array: global indices, any chunking."""
    return _arg("nanargmax", x, axis, keepdims, select_last_index, index_dtype, all_nan_index)


def nanargmin(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64,
              all_nan_index=None):
    """Lazy :func:`axisops.nanargmin` of a dask array: global indices, any chunking."""
    return _arg("nanargmin", x, axis, keepdims, select_last_index, index_dtype, all_nan_index)


def _arg(op, x, axis, keepdims, select_last, index_dtype, all_nan_index):
    if x.dtype.kind != "f":  # no NaN: the plain twin
        _dtypes.check_dtype(x.dtype, op)
        from .reduce import argmax, argmin

        plain = argmax if op == "nanargmax" else argmin
        return plain(x, axis, keepdims=keepdims, select_last_index=select_last,
                     index_dtype=index_dtype)
    da = _da()
    axes = normalize_axes(axis, x.ndim, op)
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    _dtypes.check_all_nan_index(all_nan_index, op, index_dtype)
    red_shape = tuple(x.shape[d] for d in axes)
    total = math.prod(red_shape)
    if total == 0:
        raise ValueError(f"{op}: attempt to get {op} of an empty sequence")
    _dtypes.check_index_fits(total, index_dtype, op)
    record = np.dtype([("v", x.dtype), ("i", np.int64)])
    chunks = tuple((1,) * len(c) if d in axes else c for d, c in enumerate(x.chunks))
    greater = op == "nanargmax"
    records = x.map_blocks(_records, op=op, axes=axes, red_shape=red_shape,
                           select_last=bool(select_last), record=record, chunks=chunks,
                           dtype=record, meta=_meta(x.ndim, record))
    combine = partial(_best, greater=greater, last=bool(select_last), skip_nan=True)
    # Without all_nan_index, -1 marks an all-NaN slice until a blockwise step, which
    # knows where its block lies, raises naming the output position.
    raising = all_nan_index is None
    aggregate = partial(_best_index, greater=greater, last=bool(select_last),
                        index_dtype=np.int64 if raising else index_dtype,
                        all_nan_index=-1 if raising else all_nan_index)
    ndim = len(reduced_shape(x.shape, axes, keepdims))
    index = da.reduction(records, _as_is, aggregate, axis=axes, keepdims=keepdims,
                         dtype=record, combine=combine, concatenate=True,
                         meta=_meta(ndim, np.int64 if raising else index_dtype))
    return raise_all_nan(index, op, index_dtype) if raising else index


def _best_index(recs, axis, keepdims, greater, last, index_dtype, all_nan_index):
    winner = _best(recs, axis, keepdims, greater, last, skip_nan=True)
    index = np.asarray(winner["i"]).astype(index_dtype)
    all_nan = np.isnan(np.asarray(winner["v"]))
    if all_nan.any():
        index = np.where(all_nan, all_nan_index, index).astype(index_dtype)
    return _scalar_or_array(index)


def raise_all_nan(index, op: str, index_dtype):
    """The lazy int64 *index* of nanargmax/nanargmin, -1 at all-NaN slices, in
    *index_dtype*; where a -1 is, its block raises the NumPy path's ``ValueError``
    naming that output position (the first of its block: which block's error dask
    reports first depends on the schedule)."""
    return index.map_blocks(_checked, op=op, index_dtype=np.dtype(index_dtype),
                            dtype=index_dtype, meta=_meta(index.ndim, index_dtype))


def _checked(index, op: str, index_dtype: np.dtype, block_info=None):
    index = np.asarray(index)
    bad = index < 0
    if bad.any():
        where = np.argwhere(bad)[0] if bad.ndim else ()
        start = [lo for lo, _ in block_info[0]["array-location"]] if block_info else []
        raise _np_reduce.all_nan_error(op, tuple(int(w) + s for w, s in zip(where, start))
                                       if start else tuple(int(w) for w in where))
    return _scalar_or_array(index.astype(index_dtype))


# ------------------------------------------------------------------------ variance

def var(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """Lazy :func:`axisops.var` of a dask array (Chan's combine of the chunks)."""
    return _variance("var", x, axis, keepdims, dtype, ddof)


def std(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """Lazy :func:`axisops.std` of a dask array."""
    return _variance("std", x, axis, keepdims, dtype, ddof)


def nanvar(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """Lazy :func:`axisops.nanvar` of a dask array."""
    return _variance("nanvar", x, axis, keepdims, dtype, ddof)


def nanstd(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """Lazy :func:`axisops.nanstd` of a dask array."""
    return _variance("nanstd", x, axis, keepdims, dtype, ddof)


def _variance(op, x, axis, keepdims, dtype, ddof):
    da = _da()
    ddof = _dtypes.check_ddof(ddof, op)
    axes = normalize_axes(axis, x.ndim, op)
    cplx, _, _, res = _np_missing.variance_dtypes(op, x.dtype, dtype)
    record = np.dtype([("n", np.float64), ("mean", np.complex128 if cplx else np.float64),
                       ("m2", np.float64)])
    skip = op.startswith("nan") and x.dtype.kind in "fc"
    chunk = partial(_moments, skip=skip, record=record)
    aggregate = partial(_variance_of, ddof=ddof, res=res, root=op.endswith("std"))
    ndim = len(reduced_shape(x.shape, axes, keepdims))
    return da.reduction(x, chunk, aggregate, axis=axes, keepdims=keepdims, dtype=record,
                        combine=_merged, concatenate=True, meta=_meta(ndim, res))


def _moments(block, axis, keepdims, skip, record):
    """A chunk's (count, mean, M2) per output, the reduced dimensions kept."""
    xa = np.asarray(block).astype(record["mean"])
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if skip:
        valid = ~np.isnan(xa)
        n = valid.sum(axis=axes, keepdims=True).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(valid, xa, 0).sum(axis=axes, keepdims=True) / n
        dev = np.where(valid, xa - mean, 0)
    else:
        n = np.full(np.sum(xa, axis=axes, keepdims=True).shape,
                    math.prod(xa.shape[d] for d in axes), np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = xa.sum(axis=axes, keepdims=True) / n
        dev = xa - mean
    out = np.empty(n.shape, record)
    out["n"] = n
    out["mean"] = np.where(n > 0, mean, 0)
    out["m2"] = (dev * np.conj(dev)).real.sum(axis=axes, keepdims=True)
    return out if keepdims else out.reshape(tuple(s for d, s in enumerate(n.shape)
                                                  if d not in axes))


def _merged(recs, axis, keepdims):
    """Chan's merge of the records over *axis*."""
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    n_i, mean_i, m2_i = recs["n"], recs["mean"], recs["m2"]
    n = n_i.sum(axis=axes, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, (n_i * mean_i).sum(axis=axes, keepdims=True) / n, 0)
    d = mean_i - mean
    m2 = m2_i.sum(axis=axes, keepdims=True) + (n_i * (d * np.conj(d)).real).sum(
        axis=axes, keepdims=True)
    out = np.empty(n.shape, recs.dtype)
    out["n"], out["mean"], out["m2"] = n, mean, m2
    return out if keepdims else out.reshape(tuple(s for k, s in enumerate(n.shape)
                                                  if k not in axes))


def _variance_of(recs, axis, keepdims, ddof, res, root):
    merged = _merged(recs, axis, keepdims)
    dof = merged["n"] - ddof
    out = _np_missing._divided(merged["m2"], dof, np.dtype(np.float64),
                               "Degrees of freedom <= 0 for slice")
    if root:
        out = np.sqrt(out)
    return _scalar_or_array(np.asarray(out).astype(res))


# ----------------------------------------------------------------------- scans

def nancumsum(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.nancumsum` of a dask array."""
    if x.dtype.kind not in "fc":
        _dtypes.check_dtype(x.dtype, "nancumsum")
    return _scan._accumulate("nancumsum", x, axis, dtype, exclusive, reverse)


def nancumprod(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.nancumprod` of a dask array."""
    if x.dtype.kind not in "fc":
        _dtypes.check_dtype(x.dtype, "nancumprod")
    return _scan._accumulate("nancumprod", x, axis, dtype, exclusive, reverse)

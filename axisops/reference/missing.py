"""Reference twins of the missing-value operators (see :mod:`axisops.reference`):
NumPy's own nan-functions, with the contract's decisions written out.

* float16 accumulates in float32 and is rounded once, as the plain twins here do.
* ``nanargmax``/``nanargmin`` take tuple axes, ``select_last_index`` and
  ``index_dtype`` as ``argmax``; an all-NaN slice raises ``ValueError``, or gives
  ``all_nan_index`` there when that is an int.
* ``count`` is the number of elements that ``np.isnan`` does not flag, as int64.
* ``nancumsum``/``nancumprod`` are the plain scans of ``x`` with NaN replaced by the
  identity (so ``exclusive`` and ``reverse`` follow ``cumsum``).
* ``var``/``std`` and their nan forms: ``np.var``'s two passes, in float64 for
  float16 and float32 (NumPy's own would round the mean of float16 in float16).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ._common import _as_input, _axes, _blocks, _out_shape
from .reduce import _index_dtype, argmax, argmin, max, min, prod, sum
from .reduce import mean as _mean
from .scan import cumprod, cumsum


def _filled(x, fill):
    return np.where(np.isnan(x), fill, x) if x.dtype.kind in "fc" else x


def nansum(x, axis=None, *, keepdims=False, dtype=None):
    """Sum with NaN as 0: ``sum`` of the filled array.

    >>> nansum([1., np.nan, 2.])
    np.float64(3.0)
    """
    x = _as_input(x, "nansum", complex_ok=True)
    return sum(_filled(x, 0).astype(x.dtype), axis, keepdims=keepdims, dtype=dtype)


def nanprod(x, axis=None, *, keepdims=False, dtype=None):
    """Product with NaN as 1.

    >>> nanprod([2., np.nan, 3.])
    np.float64(6.0)
    """
    x = _as_input(x, "nanprod", complex_ok=True)
    return prod(_filled(x, 1).astype(x.dtype), axis, keepdims=keepdims, dtype=dtype)


def count(x, axis=None, *, keepdims=False):
    """Elements that are not NaN, int64.

    >>> count([[1., np.nan], [np.nan, np.nan]], axis=1)
    array([1, 0])
    """
    x = _as_input(x, "count", complex_ok=True)
    axes = _axes(axis, x.ndim, "count")
    valid = ~np.isnan(x) if x.dtype.kind in "fc" else np.ones(x.shape, bool)
    return np.asarray(np.sum(valid, axis=axes, keepdims=keepdims, dtype=np.int64))[()]


def nanmean(x, axis=None, *, keepdims=False, dtype=None):
    """``np.nanmean`` (float16 accumulated in float32): NaN with a warning for an
    all-NaN slice.

    >>> nanmean([[1., np.nan, 3.]], axis=1)
    array([2.])
    """
    x = _as_input(x, "nanmean", complex_ok=True)
    if x.dtype.kind not in "fc":
        return _mean(x, axis, keepdims=keepdims, dtype=dtype)
    axes = _axes(axis, x.ndim, "nanmean")
    res = np.mean(np.zeros(1, x.dtype), dtype=dtype).dtype
    n = count(x, axes, keepdims=keepdims)
    total = np.sum(_filled(x, 0).astype(np.result_type(res, np.float32)), axis=axes,
                   keepdims=keepdims, dtype=np.result_type(res, np.float32))
    if np.any(np.asarray(n) == 0):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.true_divide(total, n)
    return np.asarray(out).astype(res)[()]


def _variance(op, x, axis, keepdims, dtype, ddof, skip):
    x = _as_input(x, op, complex_ok=True)
    axes = _axes(axis, x.ndim, op)
    res = np.mean(np.zeros(1, x.dtype), dtype=dtype).dtype
    skip = skip and x.dtype.kind in "fc"
    work = np.complex128 if res.kind == "c" else np.float64
    xa = x.astype(work)
    if skip:
        n = count(x, axes, keepdims=True)
        mean = np.sum(_filled(xa, 0), axis=axes, keepdims=True) / np.maximum(n, 1)
    else:
        n = np.asarray(math.prod(x.shape[a] for a in axes))
        mean = np.mean(xa, axis=axes, keepdims=True) if xa.size else np.zeros_like(xa)
    dev = xa - mean
    sq = (dev * np.conj(dev)).real
    ss = np.sum(_filled(sq, 0) if skip else sq, axis=axes, keepdims=keepdims)
    dof = np.asarray(n - ddof, np.float64)
    if skip and not keepdims:
        dof = dof.reshape(np.shape(ss))
    if np.any(dof <= 0):
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(dof > 0, ss / np.where(dof > 0, dof, 1), np.nan)
    real = np.zeros(1, res).real.dtype
    return np.asarray(out).astype(real)[()]


def var(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """``np.var``, two-pass in float64.

    >>> var([[1., 3., 5.]], axis=1)
    array([2.66666667])
    """
    return _variance("var", x, axis, keepdims, dtype, ddof, skip=False)


def std(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """The square root of ``var``.

    >>> std([3., 5.])
    np.float64(1.0)
    """
    return np.sqrt(var(x, axis, keepdims=keepdims, dtype=dtype, ddof=ddof))[()]


def nanvar(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """``np.nanvar``, two-pass in float64.

    >>> nanvar([1., np.nan, 3.])
    np.float64(1.0)
    """
    return _variance("nanvar", x, axis, keepdims, dtype, ddof, skip=True)


def nanstd(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """The square root of ``nanvar``.

    >>> nanstd([1., np.nan, 3.])
    np.float64(1.0)
    """
    return np.sqrt(nanvar(x, axis, keepdims=keepdims, dtype=dtype, ddof=ddof))[()]


def _nan_extreme(plain, op, x, axis, keepdims):
    x = _as_input(x, op)
    if x.dtype.kind != "f":
        return plain(x, axis, keepdims=keepdims)
    axes = _axes(axis, x.ndim, op)
    if math.prod(x.shape[a] for a in axes) == 0:
        raise ValueError(f"{op}: zero-size array to reduction operation")
    func = np.nanmax if op == "nanmax" else np.nanmin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.asarray(func(x, axis=axes, keepdims=keepdims))
    if np.isnan(out).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    return out[()]


def nanmax(x, axis=None, *, keepdims=False):
    """``np.nanmax``: NaN with a warning for an all-NaN slice.

    >>> nanmax([[1., np.nan, 3.]], axis=1)
    array([3.])
    """
    return _nan_extreme(max, "nanmax", x, axis, keepdims)


def nanmin(x, axis=None, *, keepdims=False):
    """``np.nanmin``.

    >>> nanmin([[1., np.nan, 3.]], axis=1)
    array([1.])
    """
    return _nan_extreme(min, "nanmin", x, axis, keepdims)


def _nan_arg(op, x, axis, keepdims, select_last_index, index_dtype, all_nan_index):
    x = _as_input(x, op)
    if x.dtype.kind != "f":  # no NaN: the plain twin
        plain = argmax if op == "nanargmax" else argmin
        return plain(x, axis, keepdims=keepdims, select_last_index=select_last_index,
                     index_dtype=index_dtype)
    index_dtype = _index_dtype(index_dtype, op)
    axes = _axes(axis, x.ndim, op)
    n = math.prod(x.shape[a] for a in axes)
    if n == 0:
        raise ValueError(f"attempt to get {op} of an empty sequence")
    if n - 1 > np.iinfo(index_dtype).max:
        raise OverflowError(f"{op}: indices up to {n - 1} do not fit {index_dtype}")
    blocks, _, n = _blocks(x, axes)
    nan = np.isnan(blocks)
    all_nan = nan.all(axis=-1)
    key = np.where(nan, -np.inf, blocks if op == "nanargmax" else -blocks)
    # the first (last) greatest key among the elements that are not NaN; a slice
    # of NaN only points at its first element until all_nan_index says otherwise
    hit = ((key == np.max(key, axis=-1, keepdims=True)) & ~nan) | all_nan[..., None]
    if select_last_index:
        idx = n - 1 - np.argmax(hit[..., ::-1], axis=-1)
    else:
        idx = np.argmax(hit, axis=-1)
    out_shape = _out_shape(x.shape, axes, keepdims)
    idx = np.asarray(idx).reshape(out_shape)
    all_nan = np.asarray(all_nan).reshape(out_shape)
    if all_nan.any():
        if all_nan_index is None:
            raise ValueError(f"{op}: All-NaN slice encountered")
        idx = np.where(all_nan, all_nan_index, idx)
    return idx.astype(index_dtype)[()]


def nanargmax(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64,
              all_nan_index=None):
    """Index of the maximum among the elements that are not NaN.

    >>> nanargmax([[np.nan, 7., 2.], [np.nan, np.nan, np.nan]], axis=1, all_nan_index=-1)
    array([ 1, -1])
    """
    return _nan_arg("nanargmax", x, axis, keepdims, select_last_index, index_dtype,
                    all_nan_index)


def nanargmin(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64,
              all_nan_index=None):
    """Index of the minimum among the elements that are not NaN.

    >>> nanargmin([[np.nan, 7., 2.], [5., np.nan, 1.]], axis=1)
    array([2, 2])
    """
    return _nan_arg("nanargmin", x, axis, keepdims, select_last_index, index_dtype,
                    all_nan_index)


def nancumsum(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """``cumsum`` of x with NaN as 0.

    >>> nancumsum([2., np.nan, 3.])
    array([2., 2., 5.])
    """
    x = _as_input(x, "nancumsum", complex_ok=True)
    return cumsum(_filled(x, 0).astype(x.dtype), axis, dtype=dtype, exclusive=exclusive,
                  reverse=reverse)


def nancumprod(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """``cumprod`` of x with NaN as 1.

    >>> nancumprod([2., np.nan, 3.])
    array([2., 2., 6.])
    """
    x = _as_input(x, "nancumprod", complex_ok=True)
    return cumprod(_filled(x, 1).astype(x.dtype), axis, dtype=dtype, exclusive=exclusive,
                   reverse=reverse)

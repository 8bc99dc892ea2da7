"""The missing-value operators on CUDA arrays (see :mod:`axisops.cuda`), with the
NumPy path's (:mod:`axisops.missing`) checks, dtypes, warnings and errors.

* ``nansum``, ``nanprod``, ``nancumsum``, ``nancumprod``: the reductions' and
  scans' own kernels, a NaN read as the identity in the same pass
  (``kernels.OP_NANSUM``, ``OP_NANPROD``);
* ``nanmax``, ``nanmin``, ``nanargmax``, ``nanargmin``: the arg-reduction kernels
  with a NaN as no candidate; an all-NaN output is found on the device (a flag
  lowered to its position) and gets NaN with NumPy's RuntimeWarning, or
  ``all_nan_index``, or the NumPy path's ValueError naming its position;
* ``count``: a byte per element (not NaN), added up by the int64 sum;
* ``nanmean``: the NaN-skipping sum (in the NumPy path's accumulator dtype)
  divided once by the count, in float64 (``missing_kernels.ratio_c``);
* ``var``, ``std``, ``nanvar``, ``nanstd``: two passes, as the NumPy path: the
  mean (sum divided by the count, rounded to the accumulator dtype), then the sum
  of the squared deviations ``|x - mean|**2`` (``squared_deviation``) divided by
  ``n - ddof``, NaN with NumPy's RuntimeWarning where that is not positive.

Integers and bool have no NaN: each nan operator is then its plain twin. The sums
are the device's (chunked, in a fixed order: within the float bound of the
NumPy path's cascaded sums); the extremes, indices, counts and integer results are
the NumPy path's bits. Empty inputs run the NumPy path on a host stand-in of
zeros (its values, dtypes and warnings) and copy the result to the device.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _complex, _dtypes
from .. import missing as _missing
from .._axes import normalize_axes, reduced_shape
from .._dispatch import numpy_function
from . import _device as D
from . import kernels as K
from . import missing_kernels as MK
from . import reduce as _reduce
from . import scan as _scan
from .reduce import _result, value_of
from .reduce_grad import records, spread

NUMPY_MODULE = "axisops.missing"
__all__ = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod", "count", "var", "std"]


def nansum(x, axis=None, *, keepdims=False, dtype=None):
    """:func:`axisops.nansum` on the device."""
    return value_of("nansum", D.device_array(x), axis, keepdims, dtype)


def nanprod(x, axis=None, *, keepdims=False, dtype=None):
    """:func:`axisops.nanprod` on the device: float products in index order."""
    return value_of("nanprod", D.device_array(x), axis, keepdims, dtype)


def count(x, axis=None, *, keepdims=False):
    """:func:`axisops.count` on the device: int64."""
    return count_of(D.device_array(x), axis, keepdims)


def nanmean(x, axis=None, *, keepdims=False, dtype=None):
    """:func:`axisops.nanmean` on the device."""
    d = D.device_array(x)
    op = "nanmean"
    if d.dtype.kind not in "fc":
        _dtypes.check_dtype(d.dtype, op)
        return value_of("mean", d, axis, keepdims, dtype)
    if _complex.is_complex(d.dtype) or _complex.is_complex(dtype):
        res = _complex.result_dtype("mean", d.dtype, dtype)
    else:
        res = _dtypes.mean_dtypes(d.dtype, dtype)[0]
    acc = _dtypes.kernel_accumulator(res) if res.kind == "f" else res
    axes = normalize_axes(axis, d.ndim, op)
    if d.size == 0:
        return _stand_in(_missing.nanmean, d, axes, keepdims=keepdims, dtype=dtype)
    total = value_of("nansum", d, axes, keepdims, acc)
    counts = count_of(d, axes, keepdims)
    return _ratio(d, total, counts, 0, res, "Mean of empty slice")


def var(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """:func:`axisops.var` on the device: two passes."""
    return _variance("var", x, axis, keepdims, dtype, ddof)


def std(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """:func:`axisops.std` on the device: the square root of ``var``."""
    return _variance("std", x, axis, keepdims, dtype, ddof)


def nanvar(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """:func:`axisops.nanvar` on the device: two passes, NaN skipped."""
    return _variance("nanvar", x, axis, keepdims, dtype, ddof)


def nanstd(x, axis=None, *, keepdims=False, dtype=None, ddof=0):
    """:func:`axisops.nanstd` on the device."""
    return _variance("nanstd", x, axis, keepdims, dtype, ddof)


def nanmax(x, axis=None, *, keepdims=False):
    """:func:`axisops.nanmax` on the device (the CPU path's bits)."""
    return _nan_extreme("nanmax", x, axis, keepdims, False, None, None)


def nanmin(x, axis=None, *, keepdims=False):
    """:func:`axisops.nanmin` on the device."""
    return _nan_extreme("nanmin", x, axis, keepdims, False, None, None)


def nanargmax(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64,
              all_nan_index=None):
    """:func:`axisops.nanargmax` on the device."""
    return _nan_extreme("nanargmax", x, axis, keepdims, select_last_index, index_dtype,
                        all_nan_index)


def nanargmin(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64,
              all_nan_index=None):
    """:func:`axisops.nanargmin` on the device."""
    return _nan_extreme("nanargmin", x, axis, keepdims, select_last_index, index_dtype,
                        all_nan_index)


def nancumsum(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """:func:`axisops.nancumsum` on the device."""
    return _scan._values("nancumsum", x, axis, dtype, exclusive, reverse)


def nancumprod(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """:func:`axisops.nancumprod` on the device: float products in index order."""
    return _scan._values("nancumprod", x, axis, dtype, exclusive, reverse)


# ------------------------------------------------------------------------ helpers


def count_of(d: D.DeviceArray, axis, keepdims: bool):
    """count of *d* (int64, a result of *d*'s kind): its not-NaN bytes added up."""
    op = "count"
    axes = normalize_axes(axis, d.ndim, op)
    if d.dtype.kind != "c":
        _dtypes.check_dtype(d.dtype, op)
    out_shape = reduced_shape(d.shape, axes, keepdims)
    if d.dtype.kind not in "fc" or d.size == 0:  # every element counts
        whole = math.prod(d.shape[k] for k in axes)
        return _upload(d, np.full(out_shape, whole, np.int64))
    src = D.operand(d)
    mask = d.scratch((d.size,), np.int8)
    geo = [src.offset, d.ndim, *D.dims(d.shape, src.strides)]
    D.launch(K.valid_c, d, d.size, src.base, D.to_device_constants(geo), mask)
    return value_of("sum", _like(d, mask, d.shape), axes, keepdims, np.int64)


def _nan_extreme(op, x, axis, keepdims, select_last, index_dtype, all_nan_index):
    d = D.device_array(x)
    _dtypes.check_dtype(d.dtype, op)
    _dtypes.check_all_nan_index(all_nan_index, op)
    return _reduce._extreme(op[3:], x, axis, keepdims, select_last, index_dtype,
                            skip=d.dtype.kind == "f", all_nan_index=all_nan_index)


def _variance(op: str, x, axis, keepdims: bool, dtype, ddof):
    ddof = _dtypes.check_ddof(ddof, op)
    d = D.device_array(x)
    skip = op.startswith("nan") and d.dtype.kind in "fc"
    _, _, acc, out_dtype = _missing.variance_dtypes(op, d.dtype, dtype)
    axes = normalize_axes(axis, d.ndim, op)
    if d.size == 0:
        return _stand_in(getattr(_missing, op), d, axes, keepdims=keepdims, dtype=dtype,
                         ddof=ddof)
    whole = math.prod(d.shape[k] for k in axes)
    summed = "nansum" if skip else "sum"
    xa = d if d.dtype == acc else _like(d, D.converted(d, D.operand(d), d.shape, acc).base,
                                       d.shape)
    counts = count_of(d, axes, True) if skip else None
    total = value_of(summed, xa, axes, True, None)
    with warnings.catch_warnings():  # a count of 0 (all NaN): NaN, silently as NumPy
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = _ratio(d, total, counts, 0, acc, None, whole)
    # the squared deviations from the mean, in acc's (part) dtype, C order
    part = _complex.part_dtype(acc) if acc.kind == "c" else acc
    sq = d.scratch((d.size,), part)
    xs, ms = D.operand(xa), D.operand(D.device_array(mean))
    nd, recs = records(d.shape, xs.strides, spread(ms.strides, d.ndim, axes, True))
    D.launch(MK.squared_deviation, d, d.size,
             D.to_device_constants([xs.offset, ms.offset, 0, nd, *recs]), d.size, xs.base,
             ms.base, sq)
    ss = value_of(summed, _like(d, sq, d.shape), axes, keepdims, None)
    out = _ratio(d, ss, counts, ddof, out_dtype, "Degrees of freedom <= 0 for slice", whole)
    if op.endswith("std"):
        flat = _flat(out)
        if flat.size:
            zero = np.float64(0) if out_dtype == np.float64 else np.float32(0)
            D.launch(MK.root_c, d, flat.size, flat, zero)
    return out


def _ratio(d: D.DeviceArray, total, counts, ddof, res: np.dtype, warning: str | None,
           whole: int = 0):
    """``total / (n - ddof)`` in *res* (a result of *d*'s kind and *total*'s shape),
    ``n`` the int64 *counts* (None: *whole*), NaN with the RuntimeWarning *warning*
    where that is not positive."""
    result, flat = _result(d, D.device_array(total).shape, res)
    if flat.size == 0:
        return result
    per_output = counts is not None
    if per_output:
        c = _flat(counts)
        bad = D.flag(d)
    else:
        c = D.to_device_constants([0])
        bad = d.scratch((1,), np.int64)
    D.launch(MK.ratio_c, d, flat.size, _flat(total), c, per_output, int(whole), float(ddof),
             bad, flat)
    if warning is not None:
        empty = D.is_set(bad, d, release=True) if per_output else whole - ddof <= 0
        if empty:
            warnings.warn(warning, RuntimeWarning, stacklevel=4)
    return result


def _flat(result):
    """The flat Numba view of a fresh C-contiguous device result."""
    a = D.device_array(result).array
    return a.reshape(math.prod(a.shape)) if a.ndim != 1 else a


def _like(d: D.DeviceArray, flat, shape) -> D.DeviceArray:
    """A C-ordered device array *flat* of *shape*, seen as one of *d*'s kind (its
    reductions' results are then of the input's type)."""
    array = flat.reshape(shape) if tuple(shape) != tuple(flat.shape) else flat
    return D.DeviceArray(array, tuple(shape), tuple(int(s) for s in array.strides),
                         np.dtype(flat.dtype), d.kind, d.owner, d.stream)


def _upload(d: D.DeviceArray, host: np.ndarray):
    """A host array as a result of *d*'s type on its device."""
    result, flat = _result(d, host.shape, host.dtype)
    if host.size:
        D.as_bytes(flat).copy_to_device(
            host.reshape(-1).view(np.uint8) if host.dtype == np.bool_ else host.reshape(-1),
            stream=d.stream)
    return result


def _stand_in(func, d: D.DeviceArray, *args, **kwargs):
    """*func*'s NumPy path on a host array of *d*'s shape and dtype holding zeros (an
    empty input: its dtypes, shapes, values and warnings), copied to the device."""
    host = np.asarray(numpy_function(func)(np.zeros(d.shape, d.dtype), *args, **kwargs))
    return _upload(d, host)

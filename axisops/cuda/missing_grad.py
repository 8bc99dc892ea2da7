"""Gradients of the missing-value operators on CUDA arrays: ``axisops.grad.nansum,
nanmean, nanprod, nanmax, nanmin, nancumsum, nancumprod, var, std, nanvar,
nanstd`` when ``g`` is a CUDA array (see :mod:`axisops.cuda`), computed as
:mod:`axisops.grad.missing` computes them, from the device operations:

* ``nansum``, ``nancumsum``: the plain twin's device gradient, then 0 at each NaN
  of ``x`` (``missing_kernels.zero_at_nan``);
* ``nanprod``, ``nancumprod``: the plain twin's device gradient of ``x`` with each
  NaN read as 1 (``nan_to_fill``), then 0 at each NaN;
* ``nanmean``: ``g`` over the device count (converted to the division's dtype as
  NumPy converts it), broadcast, 0 at each NaN, in one kernel (``nanmean_share``);
* ``nanmax``, ``nanmin``: grad.max's tie split from the device nanmax
  (``g / max(count, 1)`` at the elements equal to it, 0 elsewhere: a NaN equals
  nothing, an all-NaN slice gets zeros);
* ``var``, ``std``, ``nanvar``, ``nanstd``: the mean in float64 (complex128) by the
  device (nan)mean, the forward's std by the device forward, then
  ``2 g (x - mean) / (n - ddof)`` or ``g (x - mean) / ((n - ddof) std)`` per
  element in the work dtype, rounded once (``deviation_grad``), 0 at each NaN.

Integer and bool ``x`` have no NaN: each is then its plain twin's gradient.
``x`` may be a CUDA array or a host array (uploaded); results are arrays of
``g``'s type on its device and stream.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtypes
from ..grad import reduce as _grad_reduce
from . import _device as D
from . import missing as _missing
from . import missing_kernels as MK
from . import reduce as _reduce
from . import reduce_grad as _reduce_grad
from . import scan_grad as _scan_grad
from .reduce import _result
from .reduce_grad import records, secondary, spread

NUMPY_MODULE = "axisops.grad"
__all__ = ["nansum", "nanmean", "nanprod", "nanmax", "nanmin", "nancumsum", "nancumprod",
           "var", "std", "nanvar", "nanstd"]


def nansum(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.nansum` on the device."""
    d = D.device_array(g)
    x_host, xd = _x(d, x)
    return _zeroed(d, _reduce_grad.sum(g, x_host.shape, axis, keepdims), xd)


def nanmean(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.nanmean` on the device: ``g / count``, 0 at each NaN."""
    d = D.device_array(g)
    x_host, xd = _x(d, x)
    x_shape, axes, _ = _grad_reduce._expand(d.host_zeros(), x_host.shape, axis, keepdims,
                                            "grad.nanmean")
    res = d.dtype if d.dtype.kind in "fc" else np.dtype(np.float64)
    result, flat = _result(d, x_shape, res)
    size = math.prod(x_shape)
    if size == 0:
        return result
    # NumPy divides in res (float16 in float32), the count converted to res first
    work = np.dtype(np.float32) if res == np.float16 else res
    counts = D.device_array(_missing.count_of(xd, axes, True))
    cs = D.converted(d, D.operand(counts), counts.shape, res)
    if res != work:
        cs = D.converted(d, cs, counts.shape, work)
    xs, gs = D.operand(xd), D.operand(d)
    nd, recs = records(x_shape, xs.strides, spread(cs.strides, len(x_shape), axes, True),
                       spread(gs.strides, len(x_shape), axes, keepdims))
    D.launch(MK.nanmean_share, d, size,
             D.to_device_constants([xs.offset, cs.offset, gs.offset, nd, *recs]), size,
             xs.base, cs.base, gs.base, xd.dtype.kind in "fc", work.type(0), flat)
    return result


def nanprod(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.nanprod` on the device: grad.prod with each NaN read as 1."""
    d = D.device_array(g)
    _, xd = _x(d, x)
    return _zeroed(d, _reduce_grad.prod(g, _ones_at_nan(d, xd), axis, keepdims), xd)


def nanmax(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.nanmax` on the device: the tie split, 0 at NaN."""
    return _extreme(g, x, axis, keepdims, "nanmax")


def nanmin(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.nanmin` on the device."""
    return _extreme(g, x, axis, keepdims, "nanmin")


def nancumsum(g, x, axis=None, exclusive=False, reverse=False):
    """:func:`axisops.grad.nancumsum` on the device."""
    d = D.device_array(g)
    x_host, xd = _x(d, x)
    return _zeroed(d, _scan_grad.cumsum(g, x_host.shape, axis, exclusive, reverse), xd)


def nancumprod(g, x, axis=None, exclusive=False, reverse=False):
    """:func:`axisops.grad.nancumprod` on the device: grad.cumprod with each NaN read
    as 1."""
    d = D.device_array(g)
    _, xd = _x(d, x)
    return _zeroed(d, _scan_grad.cumprod(g, _ones_at_nan(d, xd), axis, exclusive, reverse), xd)


def var(g, x, axis=None, keepdims=False, ddof=0):
    """:func:`axisops.grad.var` on the device."""
    return _variance(g, x, axis, keepdims, ddof, "var")


def std(g, x, axis=None, keepdims=False, ddof=0):
    """:func:`axisops.grad.std` on the device."""
    return _variance(g, x, axis, keepdims, ddof, "std")


def nanvar(g, x, axis=None, keepdims=False, ddof=0):
    """:func:`axisops.grad.nanvar` on the device."""
    return _variance(g, x, axis, keepdims, ddof, "nanvar")


def nanstd(g, x, axis=None, keepdims=False, ddof=0):
    """:func:`axisops.grad.nanstd` on the device."""
    return _variance(g, x, axis, keepdims, ddof, "nanstd")


# ------------------------------------------------------------------------ helpers


def _x(d: D.DeviceArray, x) -> tuple[np.ndarray, D.DeviceArray]:
    """(host stand-in, device array) of ``x``: a CUDA array, or a host array uploaded
    to ``g``'s device."""
    x_host, xd = secondary(x)
    return x_host, xd if xd is not None else D.upload(d, x_host)


def _zeroed(d: D.DeviceArray, result, xd: D.DeviceArray):
    """*result* (a fresh C-ordered device array of x's shape) with 0 at each NaN of x."""
    if xd.dtype.kind not in "fc" or xd.size == 0:
        return result
    flat = D.as_bytes(_missing._flat(result))
    xs = D.operand(xd)
    geo = [xs.offset, xd.ndim, *D.dims(xd.shape, xs.strides)]
    D.launch(MK.zero_at_nan, d, xd.size, xs.base, D.to_device_constants(geo), flat)
    return result


def _ones_at_nan(d: D.DeviceArray, xd: D.DeviceArray):
    """x with each NaN read as 1 (a C-ordered device copy), or x itself without NaN."""
    if xd.dtype.kind not in "fc" or xd.size == 0:
        return xd.owner
    xs = D.operand(xd)
    out = d.scratch((xd.size,), xd.dtype)
    geo = [xs.offset, xd.ndim, *D.dims(xd.shape, xs.strides)]
    D.launch(MK.nan_to_fill, d, xd.size, xs.base, D.to_device_constants(geo), 1, out)
    return out.reshape(xd.shape) if xd.ndim != 1 else out


def _extreme(g, x, axis, keepdims, op):
    x_host, xd = secondary(x)
    if x_host.dtype.kind != "f":  # no NaN: the plain twin's gradient
        plain = _reduce_grad.max if op == "nanmax" else _reduce_grad.min
        return plain(g, x, axis, keepdims)
    forward = _missing.nanmax if op == "nanmax" else _missing.nanmin
    return _reduce_grad._extreme(g, x if xd is None else xd.owner, axis, keepdims, forward,
                                 f"grad.{op}", masked=True)


def _variance(g, x, axis, keepdims, ddof, op):
    d = D.device_array(g)
    x_host, xd = _x(d, x)
    name = f"grad.{op}"
    skip = op.startswith("nan") and xd.dtype.kind in "fc"
    x_shape, axes, _ = _grad_reduce._expand(d.host_zeros(), x_host.shape, axis, keepdims, name)
    ddof = _dtypes.check_ddof(ddof, op)
    root = op.endswith("std")
    if xd.dtype.kind == "c":
        dtype = xd.dtype
    else:  # the forward's result dtype
        _dtypes.check_dtype(xd.dtype, op)
        dtype = _dtypes.mean_dtypes(xd.dtype, None)[0]
    out, flat = _result(d, x_shape, dtype)
    size = math.prod(x_shape)
    if size == 0:
        return out
    work = np.dtype(np.complex128 if dtype.kind == "c" else np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = (_missing.nanmean if skip else _reduce.mean)(xd.owner, axes, keepdims=True,
                                                            dtype=work)
    whole = math.prod(x_shape[k] for k in axes)
    counts = D.device_array(_missing.count_of(xd, axes, True)) if skip else None
    ms = D.operand(D.device_array(mean))
    xs, gs = D.operand(xd), D.operand(d)
    nd, recs = records(x_shape, xs.strides, spread(ms.strides, len(x_shape), axes, True),
                       spread(gs.strides, len(x_shape), axes, keepdims))
    std_base = ms.base
    if root:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            std_base = D.operand(D.device_array(
                getattr(_missing, op)(xd.owner, axes, keepdims=True, ddof=ddof))).base
    counts_base = D.operand(counts).base if skip else D.to_device_constants([0])
    D.launch(MK.deviation_grad, d, size,
             D.to_device_constants([xs.offset, ms.offset, gs.offset, nd, *recs]), size,
             xs.base, ms.base, std_base, counts_base, gs.base, skip, whole, float(ddof), root,
             skip, work.type(0), D.as_bytes(flat))
    return out

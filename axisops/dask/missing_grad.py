"""Lazy gradients of the missing-value operators on dask arrays (see
:mod:`axisops.grad.missing`): each is composed of lazy pieces -- the plain twin's
lazy gradient (``grad.sum``, ``grad.prod``, ``grad.cumsum``, ``grad.cumprod``), the
lazy nan reductions, and dask's elementwise operations -- so nothing is computed
while the graph is built, and the values are the NumPy path's (to rounding)."""
from __future__ import annotations

import numpy as np

import axisops

from .. import _dtypes
from .._axes import normalize_axes, reduced_shape
from .reduce import _da

SERVES = "axisops.grad"
__all__ = ["nansum", "nanmean", "nanprod", "nanmax", "nanmin", "nancumsum", "nancumprod",
           "var", "std", "nanvar", "nanstd"]


def _kept(g, x, axis, keepdims, op):
    """(axes, g in keepdims form) after the NumPy path's shape check."""
    axes = normalize_axes(axis, x.ndim, op)
    expected = reduced_shape(x.shape, axes, keepdims)
    if tuple(g.shape) != tuple(expected):
        raise ValueError(f"{op}: g has shape {tuple(g.shape)}, expected the forward's output "
                         f"shape {tuple(expected)}")
    return axes, g.reshape(reduced_shape(x.shape, axes, True))


def _zero_at_nan(out, x):
    if x.dtype.kind not in "fc":
        return out
    return _da().where(_da().isnan(x), 0, out).astype(out.dtype)


def _ones_at_nan(x):
    if x.dtype.kind not in "fc":
        return x
    return _da().where(_da().isnan(x), 1, x).astype(x.dtype)


def nansum(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.nansum`."""
    return _zero_at_nan(axisops.grad.sum(g, x.shape, axis, keepdims), x)


def nanprod(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.nanprod`."""
    return _zero_at_nan(axisops.grad.prod(g, _ones_at_nan(x), axis, keepdims), x)


def nanmean(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.nanmean`."""
    da = _da()
    g = da.asarray(g)
    axes, gk = _kept(g, x, axis, keepdims, "grad.nanmean")
    dtype = gk.dtype if gk.dtype.kind in "fc" else np.dtype(np.float64)
    counts = axisops.count(x, axes, keepdims=True)
    scaled = (gk / counts).astype(dtype)
    return _zero_at_nan(da.broadcast_to(scaled, x.shape).astype(dtype), x)


def nanmax(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.nanmax`."""
    return _extreme_grad(g, x, axis, keepdims, "nanmax")


def nanmin(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.nanmin`."""
    return _extreme_grad(g, x, axis, keepdims, "nanmin")


def _extreme_grad(g, x, axis, keepdims, op):
    da = _da()
    if x.dtype.kind != "f":
        plain = axisops.grad.max if op == "nanmax" else axisops.grad.min
        return plain(g, x, axis, keepdims)
    g = da.asarray(g)
    axes, gk = _kept(g, x, axis, keepdims, f"grad.{op}")
    if any(x.shape[d] == 0 for d in axes):
        raise ValueError(f"grad.{op}: the forward reduces an empty set, so there is no gradient")
    dtype = gk.dtype if gk.dtype.kind == "f" else np.result_type(gk.dtype, x.dtype, np.float16)
    extreme = getattr(axisops, op)(x, axes, keepdims=True)
    hit = x == extreme  # never at a NaN, nowhere in an all-NaN slice
    count = hit.sum(axis=axes, keepdims=True)
    share = gk.astype(dtype) / da.maximum(count, 1)
    return da.where(hit, share, 0).astype(dtype)


def nancumsum(g, x, axis=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.grad.nancumsum`."""
    return _zero_at_nan(axisops.grad.cumsum(g, x.shape, axis, exclusive, reverse), x)


def nancumprod(g, x, axis=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.grad.nancumprod`."""
    return _zero_at_nan(axisops.grad.cumprod(g, _ones_at_nan(x), axis, exclusive, reverse), x)


def var(g, x, axis=None, keepdims=False, ddof=0):
    """Lazy :func:`axisops.grad.var`."""
    return _variance_grad(g, x, axis, keepdims, ddof, "var")


def std(g, x, axis=None, keepdims=False, ddof=0):
    """Lazy :func:`axisops.grad.std`."""
    return _variance_grad(g, x, axis, keepdims, ddof, "std")


def nanvar(g, x, axis=None, keepdims=False, ddof=0):
    """Lazy :func:`axisops.grad.nanvar`."""
    return _variance_grad(g, x, axis, keepdims, ddof, "nanvar")


def nanstd(g, x, axis=None, keepdims=False, ddof=0):
    """Lazy :func:`axisops.grad.nanstd`."""
    return _variance_grad(g, x, axis, keepdims, ddof, "nanstd")


def _variance_grad(g, x, axis, keepdims, ddof, op):
    da = _da()
    g = da.asarray(g)
    axes, gk = _kept(g, x, axis, keepdims, f"grad.{op}")
    skip = op.startswith("nan") and x.dtype.kind in "fc"
    if x.dtype.kind == "c":
        dtype = x.dtype
    else:
        _dtypes.check_dtype(x.dtype, op)
        dtype = _dtypes.mean_dtypes(x.dtype, None)[0]
    work = np.complex128 if x.dtype.kind == "c" else np.float64
    xa = x.astype(work)
    if skip:
        counts = axisops.count(x, axes, keepdims=True)
        mean = axisops.nansum(xa, axes, keepdims=True) / counts
    else:
        counts = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
        mean = xa.mean(axis=axes, keepdims=True)
    scale = gk.astype(work) / (counts - ddof)
    if op.endswith("std"):
        out = scale * (xa - mean) / getattr(axisops, op)(x, axes, keepdims=True, ddof=ddof)
    else:
        out = 2 * scale * (xa - mean)
    out = out.astype(dtype)
    return _zero_at_nan(out, x) if skip else out

"""Gradients of dask arrays (see :mod:`axisops.dask`): those whose work is a
broadcast or a scan, built from the lazy operators; the others take the NumPy path.

>>> import dask.array as da, numpy as np, axisops
>>> g = da.from_array(np.array([1., 2.]), chunks=1)
>>> axisops.grad.mean(g, (2, 3), axis=1).compute()
array([[0.33333333, 0.33333333, 0.33333333],
       [0.66666667, 0.66666667, 0.66666667]])
"""
from __future__ import annotations

import math

import numpy as np

from .._axes import normalize_axes, normalize_axis, reduced_shape
from . import scan as _scan

__all__ = ["sum", "mean", "cumsum"]


def _expanded(g, x_shape, axis, keepdims: bool, op: str):
    """(x_shape, axes, g in keepdims form), checked as the NumPy path checks."""
    x_shape = tuple(int(n) for n in x_shape)
    axes = normalize_axes(axis, len(x_shape), op)
    expected = reduced_shape(x_shape, axes, keepdims)
    if tuple(g.shape) != expected:
        raise ValueError(f"{op}: g has shape {tuple(g.shape)}, expected the forward's output "
                         f"shape {expected}")
    return x_shape, axes, g.reshape(reduced_shape(x_shape, axes, True))


def sum(g, x_shape, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.sum`: ``g`` broadcast to ``x_shape``."""
    import dask.array as da

    x_shape, _, g = _expanded(g, x_shape, axis, keepdims, "grad.sum")
    return da.broadcast_to(g, x_shape)


def mean(g, x_shape, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.mean`: ``g`` divided by the count, broadcast."""
    import dask.array as da

    x_shape, axes, g = _expanded(g, x_shape, axis, keepdims, "grad.mean")
    count = math.prod(x_shape[d] for d in axes)
    if g.dtype.kind not in "fc":
        g = g.astype(np.float64)
    return da.broadcast_to(g / count if count else g, x_shape)


def cumsum(g, x_shape, axis=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.grad.cumsum`: the scan of ``g`` the other way."""
    x_shape = tuple(int(n) for n in x_shape)
    if axis is None:
        expected = (math.prod(x_shape),) if x_shape else ()
    else:
        axis = normalize_axis(axis, len(x_shape), "grad.cumsum")
        expected = x_shape
    if tuple(g.shape) != expected:
        raise ValueError(f"grad.cumsum: g has shape {tuple(g.shape)}, expected the forward's "
                         f"output shape {expected}")
    out = _scan.cumsum(g, axis, dtype=g.dtype, exclusive=exclusive, reverse=not reverse)
    return out.reshape(x_shape)

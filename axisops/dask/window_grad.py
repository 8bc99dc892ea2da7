"""Gradients of the sliding windows on dask arrays (see :mod:`axisops.dask`):
``grad.unfold`` is a lazy :func:`~axisops.dask.window.fold` of ``g`` and
``grad.fold`` a lazy :func:`~axisops.dask.window.unfold`, with the NumPy path's
checks and dtypes (a non-float ``g`` gives float64; float16 sums in float32).

>>> import dask.array as da, numpy as np, axisops
>>> g = da.ones((1, 4, 4), chunks=(1, 4, 2))
>>> axisops.grad.unfold(g, (1, 1, 3, 3), 2).compute()[0, 0]   # windows covering each
array([[1., 2., 1.],
       [2., 4., 2.],
       [1., 2., 1.]])
"""
from __future__ import annotations

import numpy as np

from .. import _complex
from ..window import unfold_shape
from . import window as _window

SERVES = "axisops.grad"
__all__ = ["unfold", "fold"]


def unfold(g, x_shape, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
    """Lazy :func:`axisops.grad.unfold`: a fold of ``g`` into ``x_shape``."""
    op = "grad.unfold"
    if _complex.is_complex(g.dtype):  # the NumPy path folds the parts: the same bits
        _complex.check(g.dtype, op)
    x_shape = tuple(int(s) for s in x_shape)
    geo, expected = unfold_shape(x_shape, kernel_size, dilation, padding, stride,
                                 channels_last, op=op)
    if tuple(g.shape) != tuple(expected):
        raise ValueError(f"{op}: g has shape {tuple(g.shape)}, expected the forward's output "
                         f"shape {tuple(expected)}")
    if g.dtype.kind not in "biufc":
        raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
    dtype = g.dtype if g.dtype.kind in "fc" else np.dtype(np.float64)
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    spatial = x_shape[-geo.d - 1:-1] if channels_last else x_shape[-geo.d:]
    out = _window.fold(g.astype(work), spatial, kernel_size, dilation=dilation, padding=padding,
                       stride=stride, channels_last=channels_last)
    return out.astype(dtype)


def fold(g, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
    """Lazy :func:`axisops.grad.fold`: an unfold of ``g``."""
    if g.dtype.kind not in "biufc":
        raise TypeError(f"grad.fold: unsupported dtype {g.dtype} for g")
    dtype = g.dtype if g.dtype.kind in "fc" else np.dtype(np.float64)
    return _window.lazy_unfold(g.astype(dtype), kernel_size, dilation, padding, stride,
                               channels_last, "grad.fold")

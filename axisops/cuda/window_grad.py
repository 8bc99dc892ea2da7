"""Gradients of the sliding windows on CUDA arrays: ``grad.unfold`` and ``grad.fold``.

The adjoints of each other, as on the CPU (``axisops.grad``): the gradient of
``unfold`` is a ``fold`` of ``g`` into ``x_shape``, the gradient of ``fold`` an
``unfold`` of ``g``; both run :mod:`axisops.cuda.window`'s launchers, with the CPU
gradients' semantics:

* the result is in ``g``'s dtype when that is a float dtype and in float64
  otherwise; ``grad.unfold`` of float16 adds in float32 and rounds once (the CPU
  path's fold of ``g`` in float32, then the cast), bool and integers are converted
  to float64 on the way (as the CPU path's ``g.astype(float64)``, in the kernel);
  ``grad.fold`` of a float ``g`` moves its bits;
* complex ``g`` goes by its two real parts (the CPU path's
  ``_complex.componentwise``), in the complex dtype;
* the checks and errors are the CPU functions': ``unfold_shape`` with the
  gradient's name, and ``grad._common._gather_g``'s shape check on a zero-stride float64
  stand-in of ``g``'s shape (its memory is never read; the dtype check cannot
  fail for a device dtype).
"""
from __future__ import annotations

import numpy as np

from .. import window as _np_window
from ..grad import _common as _grad_common
from . import _device as D
from .window import fold_dtype, sums, windows

NUMPY_MODULE = "axisops.grad"

__all__ = ["unfold", "fold"]


def unfold(g, x_shape, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
    """:func:`axisops.grad.unfold` on the device: a fold of ``g`` into ``x_shape``."""
    op = "grad.unfold"
    d = D.device_array(g)
    x_shape = _grad_common._shape(x_shape)
    geo, expected = _np_window.unfold_shape(x_shape, kernel_size, dilation, padding, stride,
                                            channels_last, op=op)
    _grad_common._gather_g(np.broadcast_to(np.zeros((), np.float64), d.shape), expected, op)
    spatial = x_shape[-geo.d - 1:-1] if channels_last else x_shape[-geo.d:]
    xb = x_shape if len(x_shape) == geo.d + 2 else (1, *x_shape)
    channels = xb[-1] if channels_last else xb[1]
    dtype = _result_dtype(d.dtype)
    acc = fold_dtype(dtype)
    return sums(d, geo, spatial, xb[0], channels, channels_last, x_shape, dtype, acc)


def fold(g, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
    """:func:`axisops.grad.fold` on the device: an unfold of ``g``."""
    d = D.device_array(g)
    return windows("grad.fold", d, kernel_size, dilation, padding, stride, channels_last,
                   _result_dtype(d.dtype))


def _result_dtype(dtype: np.dtype) -> np.dtype:
    """The gradients' dtype: ``g``'s for float and complex (whose parts are float),
    float64 otherwise."""
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)

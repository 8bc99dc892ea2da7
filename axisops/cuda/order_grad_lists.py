"""``axisops.grad.order.quantile_of_list`` and ``nanquantile_of_list`` on CUDA
arrays (the form in which :mod:`axisops.torch`'s operator schema carries ``q``):
:mod:`axisops.cuda.order_grad`'s quantile gradients."""
from __future__ import annotations

import numpy as np

from . import order_grad as _grad

NUMPY_MODULE = "axisops.grad.order"

__all__ = ["quantile_of_list", "nanquantile_of_list"]


def quantile_of_list(g, x, q, scalar_q, axis=None, method="linear", keepdims=False):
    """:func:`axisops.grad.order.quantile_of_list` on the device."""
    return _grad.quantile(g, x, q[0] if scalar_q else np.array(q, np.float64), axis,
                          method=method, keepdims=keepdims)


def nanquantile_of_list(g, x, q, scalar_q, axis=None, method="linear", keepdims=False):
    """:func:`axisops.grad.order.nanquantile_of_list` on the device."""
    return _grad.nanquantile(g, x, q[0] if scalar_q else np.array(q, np.float64), axis,
                             method=method, keepdims=keepdims)

"""Gradients of the moving windows on CUDA arrays: ``grad.moving_sum``,
``moving_mean``, ``moving_var``, ``moving_std``, ``moving_max``, ``moving_min``
(see :mod:`axisops.grad.moving` for what they are), deterministic without
atomics: a thread per input element gathers the outputs whose windows cover it,
in output order (:mod:`axisops.cuda.moving_kernels`).

* ``grad.moving_sum``, ``grad.moving_mean``: the counts of each window first
  (``moving_moments``), then per element the weights ``g_j`` (``g_j / count_j``)
  of the covering outputs that are not NaN, added in float64, NaN weights
  skipped and infinities read as the CPU's ``nan_to_num`` of its reversed moving
  sum reads them. Equal to the CPU's reversed running sums to rounding.
* ``grad.moving_var``, ``grad.moving_std``: each window's count, mean and forward
  (``moving_moments``, two passes), then ``sum_j H_j (x_k - mean_j)`` per element,
  directly (the CPU splits it in two reversed sums on ``x`` less its lane mean):
  equal to rounding, often more accurate.
* ``grad.moving_max``, ``grad.moving_min``: the device arg-extremes (the CPU's
  indices), then per element the sum from +0.0 of the ``g_j`` whose index is it,
  in output order in float64: the CPU's ``np.add.at``, bit for bit.

The result has x's shape and ``g``'s float dtype (float64 for integer and bool
``g``), rounded once from float64; 0 at each NaN of ``x``. The checks are the
NumPy path's, in its order, on stand-ins of the arrays' shapes and dtypes.
``g`` and ``x`` may each be a CUDA array or a host array (uploaded to the other's
device); ``g`` is read as a C-ordered float64 copy on the device.
"""
from __future__ import annotations

import numpy as np

from ..grad import _common as _grad_common
from . import _device as D
from . import moving as _moving
from . import moving_kernels as MK
from .reduce import _result

NUMPY_MODULE = "axisops.grad"

__all__ = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min"]


def moving_sum(g, x, window, axis=-1, *, min_count=None):
    """:func:`axisops.grad.moving_sum` on the device."""
    return _gradient("grad.moving_sum", g, x, window, axis, min_count)


def moving_mean(g, x, window, axis=-1, *, min_count=None):
    """:func:`axisops.grad.moving_mean` on the device."""
    return _gradient("grad.moving_mean", g, x, window, axis, min_count)


def moving_var(g, x, window, axis=-1, *, min_count=None, ddof=0):
    """:func:`axisops.grad.moving_var` on the device."""
    return _gradient("grad.moving_var", g, x, window, axis, min_count, ddof)


def moving_std(g, x, window, axis=-1, *, min_count=None, ddof=0):
    """:func:`axisops.grad.moving_std` on the device."""
    return _gradient("grad.moving_std", g, x, window, axis, min_count, ddof)


def moving_max(g, x, window, axis=-1, *, min_count=None):
    """:func:`axisops.grad.moving_max` on the device: the CPU's bits."""
    return _gradient("grad.moving_max", g, x, window, axis, min_count)


def moving_min(g, x, window, axis=-1, *, min_count=None):
    """:func:`axisops.grad.moving_min` on the device: the CPU's bits."""
    return _gradient("grad.moving_min", g, x, window, axis, min_count)


def _arrays(g, x) -> tuple[D.DeviceArray, D.DeviceArray]:
    """(g, x) as device arrays on the device of the first that is one."""
    if D.is_cuda_array(g):
        gd = D.device_array(g)
        return gd, D.device_array(x) if D.is_cuda_array(x) else D.upload(gd, np.asarray(x))
    xd = D.device_array(x)
    return D.upload(xd, np.asarray(g)), xd


def _gradient(op: str, g, x, window, axis, min_count, ddof=_moving._NO_DDOF):
    gd, xd = _arrays(g, x)
    window, min_count, axis, ddof = _moving.checked(op, xd, window, axis, min_count, ddof,
                                                    grad=True)
    _, dtype, _ = _grad_common._gather_g(D.zeros_stand_in(gd.shape, gd.dtype), xd.shape, op)
    result, out = _result(gd, xd.shape, dtype)
    if xd.size == 0:
        return result
    kind = op[len("grad.moving_"):]
    base, geo = _moving.geometry(xd, axis)
    g64 = D.converted(gd, D.operand(gd), gd.shape, np.float64, c_order=True).base
    zero = np.float64(0)
    if kind in ("max", "min"):
        indices = gd.scratch((xd.size,), np.int64)
        D.launch(MK.moving_extremes, gd, xd.size, base, geo, window, min_count, kind == "min",
                 False, gd.scratch((1,), np.float64), True, indices)
        D.launch(MK.moving_extreme_grad, gd, xd.size, geo, window, g64, indices, out)
        return result
    counts, means, forward = (gd.scratch((xd.size,), np.float64) for _ in range(3))
    root = kind == "std"
    D.launch(MK.moving_moments, gd, xd.size, base, geo, window, min_count,
             ddof, root, zero, counts, means, forward)
    if kind in ("sum", "mean"):
        D.launch(MK.moving_linear_grad, gd, xd.size, base, geo, window, min_count,
                 kind == "mean", g64, counts, out)
    else:
        D.launch(MK.moving_var_grad, gd, xd.size, base, geo, window, ddof,
                 root, g64, counts, means, forward, zero, out)
    return result

"""Gradients of pooling on CUDA arrays: ``grad.max_pool`` and ``grad.avg_pool``,
gathers without atomics (:mod:`axisops.cuda.pool_kernels`).

The CPU path (``axisops.grad.pool``) adds into each (n, c) plane in output order;
here a thread per input element walks the windows that read it in that same
order and adds the same terms, so the results are the NumPy path's bits on every
run:

* ``grad.max_pool``: first a thread per index checks it (``max_pool_check``):
  outside its plane is the NumPy path's ``IndexError`` (its message from a host
  copy of the indices); each index must also be a position its own window reads,
  as every ``max_pool`` index is. Then a thread per input element adds ``g`` of
  the outputs whose window reads it and whose index is its position, from +0.0 in
  float32 (float16 ``g``, rounded once on the store) or float64. Indices that
  are not in their windows (MaxUnpool with indices from elsewhere) take the
  deterministic scatter-add of :mod:`axisops.cuda.scatter` instead, which applies
  each position's terms in C order of the indices: output order in each plane,
  the CPU's order too.
* ``grad.avg_pool``: a thread per input element adds ``g / count`` (a float64, as
  the CPU's share) of each window that reads it, in output order, rounding to the
  accumulator after each addition as the CPU's fold into its float32 (float64)
  array does; a float16 result is the float32 sum cast once.

The checks are the NumPy path's: ``grad.pool._checked_g`` on a zero stand-in of
``g``'s shape and dtype (``PoolGeometry``, the float check, the pooled shape),
then the indices' dtype and shape with the CPU function's messages. ``g`` and the
indices are read in C order (copied on the device first when strided); the
indices as int64 (converted on the device when of another integer dtype).
"""
from __future__ import annotations

import math

import numpy as np

from ..grad import _common as _grad_common
from ..grad import pool as _grad_pool
from . import _device as D
from . import gather_kernels as GK
from . import kernels as K
from . import pool_kernels as PK
from .gather import _flat_positions
from .gather_grad import _finish, _flat, _zeros
from .pool import geometry
from .reduce import _result
from .scatter import scatter_into

NUMPY_MODULE = "axisops.grad"

__all__ = ["max_pool", "avg_pool"]


def max_pool(g, indices, x_shape, kernel_size, *, stride=None, dilation=1, padding=0,
             ceil_mode=False, channels_last=False):
    """:func:`axisops.grad.max_pool` on the device: a gather per input element of the
    ``g`` whose index is its position, in output order."""
    op = "grad.max_pool"
    gd = D.device_array(g)
    _, pg = _grad_pool._checked_g(op, D.zeros_stand_in(gd.shape, gd.dtype), x_shape,
                                  kernel_size, stride, dilation, padding, ceil_mode,
                                  channels_last)
    x_shape = _grad_common._shape(x_shape)
    idx = D.device_array(indices) if D.is_cuda_array(indices) else None
    host = None if idx is not None else np.asarray(indices)
    i_dtype, i_shape = (idx.dtype, idx.shape) if idx is not None else (host.dtype, host.shape)
    if i_dtype.kind not in "iu":
        raise TypeError(f"grad.max_pool: indices must be integers, got dtype {i_dtype}")
    if i_shape != gd.shape:
        raise ValueError(f"grad.max_pool: indices have shape {i_shape}, expected the "
                         f"pooled shape {gd.shape}")
    plane = math.prod(pg.spatial)
    if host is not None:
        idx = D.upload(gd, host)
    dtype, acc = gd.dtype, PK.grad_dtype(gd.dtype)
    if not gd.size:
        return _empty(gd, x_shape, dtype, acc)
    positions = _positions(gd, idx, plane)
    g_strides = pg.strides(_c_order(pg.out_shape))[1]
    flags = gd.scratch((2,), np.int64)
    flags.copy_to_device(np.zeros(2, np.int64), stream=gd.stream)
    D.launch(PK.max_pool_check, gd, gd.size, positions, geometry(pg, 0, g_strides, pg.out_shape),
             pg.channels_last, flags)
    found = D.to_host(flags, gd)
    if found[0]:  # the NumPy path's message, from the indices as they came
        values = host if host is not None else D.to_host(D.in_c_order(idx).array, gd)
        low, high = values.min(), values.max()
        where = int(low) if low < 0 else int(high)
        raise IndexError(f"grad.max_pool: index {where} is out of range for a plane of {plane} "
                         "spatial positions")
    g_c = _flat(D.in_c_order(gd))
    if found[1]:  # an index its window does not read: the scatter-add
        return _scattered(gd, g_c, positions, pg, x_shape, dtype, acc, plane)
    result, out = _result(gd, x_shape, dtype)
    x_geo = geometry(pg, 0, g_strides, x_shape)
    D.launch(PK.max_pool_grad, gd, out.size, g_c, positions, x_geo, pg.channels_last,
             acc.type(0), out)
    return result


def avg_pool(g, x_shape, kernel_size, *, stride=None, padding=0, ceil_mode=False,
             channels_last=False, count_include_pad=True):
    """:func:`axisops.grad.avg_pool` on the device: a gather per input element of the
    shares of the windows that read it, in output order."""
    op = "grad.avg_pool"
    gd = D.device_array(g)
    _, pg = _grad_pool._checked_g(op, D.zeros_stand_in(gd.shape, gd.dtype), x_shape,
                                  kernel_size, stride, 1, padding, ceil_mode, channels_last)
    x_shape = _grad_common._shape(x_shape)
    dtype, acc = gd.dtype, PK.grad_dtype(gd.dtype)
    result, out = _result(gd, x_shape, dtype)
    if not out.size:
        return result
    g_c = _flat(D.in_c_order(gd))
    target = out if acc == dtype else gd.scratch((out.size,), acc)
    x_geo = geometry(pg, 0, pg.strides(_c_order(pg.out_shape))[1], x_shape)
    D.launch(PK.avg_pool_grad, gd, out.size, g_c, x_geo, pg.channels_last,
             bool(count_include_pad), np.float64(0), target)
    return _finish(gd, target, out, result)


def _positions(gd: D.DeviceArray, idx: D.DeviceArray, plane: int):
    """The indices as a flat C-ordered int64 device array: as they are, converted on
    the device (``astype``), or for uint64 ``min(i, plane)`` (a value past int64
    must not turn negative: ``unsigned_positions``)."""
    if idx.dtype == np.uint64:
        return _flat_positions(D.in_c_order(idx), plane, K.MODE_RAISE, gd)
    return D.converted(idx, D.operand(idx), idx.shape, np.int64, c_order=True).base


def _empty(gd: D.DeviceArray, x_shape, dtype: np.dtype, acc: np.dtype):
    """The gradient when ``g`` is empty: zeros of ``x_shape`` (empty as well)."""
    target, result, out = _zeros(gd, x_shape, dtype, acc)
    return _finish(gd, target, out, result)


def _scattered(gd: D.DeviceArray, g_c, positions, pg, x_shape, dtype: np.dtype,
               acc: np.dtype, plane: int):
    """``out[n, c, idx] += g`` in C order of the indices (the CPU's per-plane output
    order), by :func:`axisops.cuda.scatter.scatter_into`, into zeros in *acc*."""
    target, result, out = _zeros(gd, x_shape, dtype, acc)
    lead = pg.batch
    length = math.prod(pg.positions)
    if pg.channels_last:  # (N, L, C) into (N, S, C)
        shape = [lead, length, pg.channels]
        out_strides = [plane * pg.channels, pg.channels, 1]
    else:                 # (N * C, L, 1) into (N * C, S, 1)
        shape = [lead * pg.channels, length, 1]
        out_strides = [plane, 1, 1]
    strides = [shape[1] * shape[2], shape[2], 1]
    scatter_into(gd, target, out_strides, shape, 1, positions, strides, g_c, 0, strides, plane,
                 GK.OP_ADD, K.MODE_RAISE)
    return _finish(gd, target, out, result)


def _c_order(shape) -> np.ndarray:
    """A stand-in of *shape* with C-contiguous element strides (one-byte elements;
    its memory is never read): what ``PoolGeometry.strides`` takes for the C-ordered
    ``g`` and indices."""
    from numpy.lib.stride_tricks import as_strided

    from .._layout import c_strides

    return as_strided(np.zeros(1, np.int8), tuple(shape), tuple(c_strides(shape)))

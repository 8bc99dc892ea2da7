"""Gradients of the scans on CUDA arrays: ``axisops.grad.cumsum, cumprod, cummax,
cummin, logcumsumexp`` when ``g`` is a CUDA array (see :mod:`axisops.cuda`).

The checks and errors are the NumPy path's own (``grad.scan._scan_g``, the dtype and
index checks, on host stand-ins), then:

* ``cumsum``: the device :func:`axisops.cuda.scan.cumsum` of ``g`` the other way
  (tiled on a long axis: a float sum may be reassociated); a bool ``g`` is
  counted in int64 and any count is True, as the NumPy path's bool sum;
* ``cumprod`` and ``logcumsumexp``: a thread per lane runs the CPU kernel's two
  passes along the axis (``grad_kernels.cumprod_lanes``, ``logcumsumexp_lanes``):
  no division, zeros exact, the exponent-apart recomputation of a lane that
  leaves the normal floats; logcumsumexp's forward is computed again in the same
  thread, as the CPU's is;
* ``cummax``/``cummin``: a thread per lane adds ``g`` at the forward's indices in
  index order (the CPU's bits); an index outside ``[0, n)`` is found on the
  device (the first in C order, by ``atomic.min``) and raised with the CPU's
  ``IndexError``; the indices may be on the device or on the host, of any
  integer dtype (uint64 past int64 is out of range, never negative).

A thread walks its whole lane, as the CPU's kernels do (their order is the
result's rounding): an axis much longer than the number of lanes runs on few
threads. ``x`` and ``indices`` may be CUDA or host arrays (uploaded); results are
arrays of ``g``'s type on its device and stream.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _complex, _dtypes
from .._layout import c_strides
from ..grad import _common as _grad_common
from ..grad import scan as _grad_scan
from . import _device as D
from . import grad_kernels as GK
from . import kernels as K
from . import scan as _scan
from .gather import _indices_on_device
from .reduce import _result
from .reduce_grad import max_exponent, real_part, records, secondary, work_constants

NUMPY_MODULE = "axisops.grad"
__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]


def cumsum(g, x_shape, axis=None, exclusive=False, reverse=False):
    """:func:`axisops.grad.cumsum` on the device: the cumulative sum of ``g`` the
    other way."""
    d = D.device_array(g)
    x_shape, axis, _ = _grad_scan._scan_g(d.host_zeros(), x_shape, axis, "grad.cumsum")
    if d.dtype != np.bool_:
        res = _scan.cumsum(g, axis, dtype=d.dtype, exclusive=exclusive, reverse=not reverse)
        return res if tuple(res.shape) == x_shape else res.reshape(x_shape)
    # a bool sum is True once any term is: count, then compare
    counts = _scan.cumsum(g, axis, dtype=np.int64, exclusive=exclusive, reverse=not reverse)
    result, flat = _result(d, x_shape, np.bool_)
    if flat.size:
        D.launch(GK.nonzero_c, d, flat.size, D.device_array(counts).array.reshape(flat.size),
                 flat.view(np.uint8))
    return result


def cumprod(g, x, axis=None, exclusive=False, reverse=False):
    """:func:`axisops.grad.cumprod` on the device: exact with zeros (no division)."""
    op = "grad.cumprod"
    d = D.device_array(g)
    x_host, x_dev = secondary(x)
    g_host = d.host_zeros()
    complex_ = _grad_common._is_complex(g_host, x_host)
    if not complex_:
        _dtypes.check_dtype(x_host.dtype, op)
    x_shape, axis, _ = _grad_scan._scan_g(g_host, x_host.shape, axis, op)
    if complex_:
        res = np.result_type(x_host.dtype, d.dtype, np.complex64)
        _complex.check(res, op)
    else:
        res = np.result_type(x_host.dtype, d.dtype, np.float16)
    result, flat = _result(d, x_shape, res)
    size = math.prod(x_shape)
    if size == 0:
        return result
    work = np.dtype(np.float32) if res == np.float16 else res
    xd = x_dev or D.upload(d, x_host)
    xs = D.converted(d, D.operand(xd), x_shape, work, c_order=axis is None)
    gs = D.converted(d, D.operand(d), d.shape, work)
    out = flat if work == res else d.scratch((size,), work)
    geo, lanes = _lanes(d, x_shape, axis, xs, gs)
    if complex_:
        D.launch(GK.cumprod_lanes_complex, d, lanes, geo, lanes, xs.base, gs.base, bool(exclusive),
                 bool(reverse), work.type(1), out)
    else:
        D.launch(GK.cumprod_lanes, d, lanes, geo, lanes, xs.base, gs.base, bool(exclusive),
                 bool(reverse), work_constants(work, d), max_exponent(work), _powers(work, d), out)
    if out is not flat:
        D.launch(K.cast, d, size, out, flat)
    return result


def logcumsumexp(g, x, axis=None):
    """:func:`axisops.grad.logcumsumexp` on the device (the forward computed again
    in each lane's thread)."""
    op = "grad.logcumsumexp"
    d = D.device_array(g)
    x_host, x_dev = secondary(x)
    _dtypes.check_dtype(x_host.dtype, op)
    x_shape, axis, _ = _grad_scan._scan_g(d.host_zeros(), x_host.shape, axis, op)
    res = x_host.dtype if x_host.dtype.kind == "f" else np.dtype(np.float64)
    work = np.dtype(np.float32) if res == np.float16 else res
    if d.dtype.kind == "c":  # the NumPy path converts g to a real dtype: NumPy's warning
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=3)
    result, flat = _result(d, x_shape, res)
    size = math.prod(x_shape)
    if size == 0:
        return result
    xd = x_dev or D.upload(d, x_host)
    xs = D.converted(d, D.operand(xd), x_shape, work, c_order=axis is None)
    gs = D.converted(d, real_part(d) if d.dtype.kind == "c" else D.operand(d), d.shape, work)
    out = flat if work == res else d.scratch((size,), work)
    geo, lanes = _lanes(d, x_shape, axis, xs, gs)
    D.launch(GK.logcumsumexp_lanes, d, lanes, geo, lanes, xs.base, gs.base, out)
    if out is not flat:
        D.launch(K.cast, d, size, out, flat)
    return result


def cummax(g, indices, x_shape, axis=None):
    """:func:`axisops.grad.cummax` on the device: ``g`` summed at the forward's
    indices, in index order."""
    return _extreme(g, indices, x_shape, axis, "grad.cummax")


def cummin(g, indices, x_shape, axis=None):
    """:func:`axisops.grad.cummin` on the device."""
    return _extreme(g, indices, x_shape, axis, "grad.cummin")


def _extreme(g, indices, x_shape, axis, op):
    d = D.device_array(g)
    x_shape, axis, _ = _grad_scan._scan_g(d.host_zeros(), x_shape, axis, op)
    idx = _indices_on_device(d, indices, op)
    if idx.shape != d.shape:
        raise ValueError(f"{op}: indices has shape {idx.shape}, expected g's shape {d.shape}")
    n = math.prod(x_shape) if axis is None else x_shape[axis]
    res = np.dtype(np.int64) if d.dtype == np.bool_ else d.dtype
    work = np.dtype(np.float32) if res == np.float16 else res
    result, flat = _result(d, x_shape, res)
    size = math.prod(x_shape)
    if size == 0:
        return result
    index = D.operand(idx)  # C order: an element's offset is its position
    positions = index
    if idx.dtype == np.uint64:  # as int64, every value past n as n (out of range)
        positions = D.Operand(d.scratch((size,), np.int64), 0, index.strides, np.dtype(np.int64))
        D.launch(K.unsigned_positions, d, size, index.base, n, False, positions.base)
    out = flat if work == res else d.scratch((size,), work)
    geo, lanes = _lanes(d, x_shape, axis, positions, D.operand(d))
    none_bad = int(np.iinfo(np.int64).max)
    bad = D.flag(d, none_bad)
    D.launch(GK.scatter_lanes, d, lanes, geo, lanes, positions.base, D.operand(d).base, bad, out)
    first = D.flag_value(bad, d, none_bad, release=True)  # waits for the kernel
    if first < size:
        value = D.to_host(index.base[first:first + 1], d)[0]
        where = tuple(int(w) for w in np.unravel_index(first, idx.shape))
        raise IndexError(f"{op}: index {value} at position {where} of indices is out of range "
                         f"[0, {n})")
    if out is not flat:
        D.launch(K.cast, d, size, out, flat)
    return result


# ------------------------------------------------------------------------ helpers


def _lanes(d: D.DeviceArray, x_shape, axis, a: D.Operand, b: D.Operand):
    """(geometry on the device, lanes) of a scan gradient along *axis* of an array of
    *x_shape*: operand a (``x``, or the indices) has x's shape, b is ``g`` (x's
    shape, or 1-D for ``axis=None``), c the C-ordered result. For ``axis=None`` a
    must be C-ordered (:func:`~axisops.cuda.reduce_grad.converted` makes it so)."""
    if axis is None:
        size = math.prod(x_shape)
        shape, axis = (size,), 0
        a_strides = [1]
        b_strides = b.strides if b.strides else [0]  # a 0-d g: one element
    else:
        shape, a_strides, b_strides = tuple(x_shape), a.strides, b.strides
    n = shape[axis]
    c = c_strides(shape)
    other = [k for k in range(len(shape)) if k != axis]
    nd, recs = records([shape[k] for k in other], [a_strides[k] for k in other],
                       [b_strides[k] for k in other], [c[k] for k in other])
    geo = [n, a_strides[axis], b_strides[axis], c[axis], a.offset, b.offset, 0, nd, *recs]
    return D.to_device_constants(geo), math.prod(shape) // n


_POWERS: dict[tuple, object] = {}


def _powers(dtype: np.dtype, d: D.DeviceArray):
    """The CPU's table of ``2**-k`` in *dtype* (``grad.scan._powers_of_half``) on the device."""

    key = (np.dtype(dtype).str, D.current_device())
    table = _POWERS.get(key)
    if table is None:
        from numba import cuda

        table = _POWERS[key] = cuda.to_device(_grad_scan._powers_of_half(dtype))  # kept: synchronous
    return table

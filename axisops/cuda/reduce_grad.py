"""Gradients of the reductions on CUDA arrays: ``axisops.grad.sum, mean, prod, max,
min`` when ``g`` is a CUDA array (see :mod:`axisops.cuda`).

The checks and errors are the NumPy path's own (``grad.reduce._expand`` and the dtype
checks, run on host stand-ins that hold one zero), then:

* ``sum`` and ``mean`` broadcast ``g`` over the reduced axes with a thread per
  element of the result (``kernels.copy_c`` on ``g`` seen with zero strides; the
  mean divides as it copies, by the count converted to ``g``'s dtype as NumPy
  does, each complex part apart): the NumPy path's bits;
* ``max``/``min``: the forward's extreme (the device :func:`axisops.cuda.reduce.max`),
  a byte per element ``x == extreme``, their count per slice (the device
  ``sum``), then ``(g / count) * hit`` in float64 (complex128: NumPy's complex
  division, by parts) rounded once: the NumPy path's bits, NaN slices NaN;
* ``prod``: a thread per output of the forward walks its elements in index order
  (``grad_kernels.prod_rows``): products before and after each element, no
  division, and the CPU's exponent-apart recomputation where a running product
  leaves the normal floats, so zeros are exact and a finite gradient stays finite.

``x`` (``prod``, ``max``, ``min``) may be a CUDA array or a host array, uploaded.
Results are arrays of ``g``'s type on its device and stream. The helpers here
(operands, geometry records, conversions) serve :mod:`axisops.cuda.scan_grad` too.
"""
from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import numpy as np

from .. import _complex, _dtypes
from .._layout import c_strides, coalesce
from ..grad import _common as _grad_common
from ..grad import reduce as _grad_reduce
from . import _device as D
from . import grad_kernels as GK
from . import kernels as K
from . import reduce as _reduce
from .reduce import _result

NUMPY_MODULE = "axisops.grad"
__all__ = ["sum", "mean", "prod", "max", "min"]


def sum(g, x_shape, axis=None, keepdims=False):
    """:func:`axisops.grad.sum` on the device: ``g`` broadcast to ``x_shape``."""
    d = D.device_array(g)
    x_shape, axes, _ = _grad_reduce._expand(d.host_zeros(), x_shape, axis, keepdims, "grad.sum")
    result, flat = _result(d, x_shape, d.dtype)
    size = math.prod(x_shape)
    if size:
        src = D.operand(d)
        geo = [src.offset, len(x_shape),
               *D.dims(x_shape, spread(src.strides, len(x_shape), axes, keepdims))]
        D.launch(K.copy_c, d, size, src.base, D.to_device_constants(geo), D.as_bytes(flat))
    return result


def mean(g, x_shape, axis=None, keepdims=False):
    """:func:`axisops.grad.mean` on the device: ``g / count`` broadcast to ``x_shape``."""
    d = D.device_array(g)
    x_shape, axes, _ = _grad_reduce._expand(d.host_zeros(), x_shape, axis, keepdims, "grad.mean")
    res = d.dtype if d.dtype.kind in "fc" else np.dtype(np.float64)
    result, flat = _result(d, x_shape, res)
    size = math.prod(x_shape)
    if size == 0:  # also every count of 0 (a reduced axis of length 0)
        return result
    src = D.converted(d, D.operand(d), d.shape, res)
    part = _complex.part_dtype(res) if res.kind == "c" else res
    # NumPy converts the count to g's dtype, then divides (float16: in float32)
    count = part.type(math.prod(x_shape[k] for k in axes))
    if part == np.float16:
        count = np.float32(count)
    geo = [src.offset, len(x_shape),
           *D.dims(x_shape, spread(src.strides, len(x_shape), axes, keepdims))]
    kernel = GK.divide_parts_c if res.kind == "c" else GK.divide_c
    D.launch(kernel, d, size, src.base, D.to_device_constants(geo), count, flat)
    return result


def prod(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.prod` on the device: ``g`` times the product of the other
    elements, in index order, without division."""
    op = "grad.prod"
    d = D.device_array(g)
    x_host, x_dev = secondary(x)
    g_host = d.host_zeros()
    complex_ = _grad_common._is_complex(g_host, x_host)
    if not complex_:
        _dtypes.check_dtype(x_host.dtype, op)
    x_shape, axes, _ = _grad_reduce._expand(g_host, x_host.shape, axis, keepdims, op)
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
    xs = D.converted(d, D.operand(x_dev or D.upload(d, x_host)), x_shape, work)
    gs = D.converted(d, D.operand(d), d.shape, work)
    g_strides = spread(gs.strides, len(x_shape), axes, keepdims)
    out = flat if work == res else d.scratch((size,), work)
    out_strides = c_strides(x_shape)
    kept = [k for k in range(len(x_shape)) if k not in axes]
    nk, kept_records = records([x_shape[k] for k in kept], [xs.strides[k] for k in kept],
                               [g_strides[k] for k in kept], [out_strides[k] for k in kept])
    nr, red_records = records([x_shape[k] for k in axes], [xs.strides[k] for k in axes],
                              [0] * len(axes), [out_strides[k] for k in axes])
    count = math.prod(x_shape[k] for k in axes)
    rows = size // count
    geo = D.to_device_constants([count, xs.offset, gs.offset, 0, nk, *kept_records, nr,
                                 *red_records])
    if complex_:
        D.launch(GK.prod_rows_complex, d, rows, geo, rows, xs.base, gs.base, work.type(1), out)
    else:
        D.launch(GK.prod_rows, d, rows, geo, rows, xs.base, gs.base, work_constants(work, d),
                 max_exponent(work), out)
    if out is not flat:
        D.launch(K.cast, d, size, out, flat)
    return result


def max(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.max` on the device: ``g`` split evenly between tied maxima."""
    return _extreme(g, x, axis, keepdims, _reduce.max, "grad.max")


def min(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.min` on the device: ``g`` split evenly between tied minima."""
    return _extreme(g, x, axis, keepdims, _reduce.min, "grad.min")


def _extreme(g, x, axis, keepdims, forward, op, masked=False):
    """max/min's gradient; *masked* (nanmax/nanmin, *forward* their device forward,
    which may warn): ``g / max(count, 1)`` at the hits, 0 elsewhere."""
    d = D.device_array(g)
    x_host, x_dev = secondary(x)
    if not masked:
        _dtypes.check_dtype(x_host.dtype, op)
    x_shape, axes, _ = _grad_reduce._expand(d.host_zeros(), x_host.shape, axis, keepdims, op)
    if builtins.any(x_shape[k] == 0 for k in axes):
        raise ValueError(f"{op}: the forward reduces an empty set, so there is no gradient")
    size = math.prod(x_shape)
    if size == 0:
        return _result(d, x_shape, np.result_type(d.dtype, x_host.dtype, np.float16))[0]
    res = d.dtype if d.dtype.kind == "f" else np.result_type(d.dtype, x_host.dtype, np.float16)
    xd = x_dev or D.upload(d, x_host)
    with warnings.catch_warnings():  # nanmax's all-NaN slices: zeros here, no warning
        warnings.simplefilter("ignore", RuntimeWarning)
        extreme = D.device_array(forward(xd.owner, axes, keepdims=True))
    xs, es = D.operand(xd), D.operand(extreme)
    nd, recs = records(x_shape, xs.strides, es.strides)
    hit_owner, hit = d.empty(x_shape, np.int8)
    hit = hit.reshape(size)
    D.launch(GK.mark_equal, d, size, D.to_device_constants([xs.offset, es.offset, 0, nd, *recs]),
             size, xs.base, es.base, hit)
    count = D.operand(D.device_array(_reduce.sum(hit_owner, axes, keepdims=True)))  # int64
    # an integer g is divided in float64 (its conversion to res first is exact there)
    gs = D.operand(d)
    if d.dtype.kind in "biu":  # masked: converted to the result dtype first, as there
        gs = D.converted(d, gs, d.shape, res if masked else np.float64)
    nd, recs = records(x_shape, spread(gs.strides, len(x_shape), axes, keepdims), count.strides)
    result, flat = _result(d, x_shape, res)
    kernel = GK.split_ties_complex if res.kind == "c" else GK.split_ties
    D.launch(kernel, d, size, D.to_device_constants([gs.offset, count.offset, 0, nd, *recs]), size,
             gs.base, count.base, hit, bool(masked), flat)
    return result


# ------------------------------------------------------------------------ helpers


def real_part(d: D.DeviceArray) -> D.Operand:
    """The real parts of a complex array, as an operand of its part dtype (a view)."""
    src = D.operand(d)
    part = _complex.part_dtype(d.dtype)
    return D.Operand(src.base.view(part), 2 * src.offset, [2 * s for s in src.strides], part)


def spread(strides, ndim: int, axes, keepdims: bool) -> list[int]:
    """The strides of ``g`` (the forward's result) over the forward input's
    dimensions: 0 along the reduced axes, so that it broadcasts."""
    it = iter(strides)
    out = []
    for k in range(ndim):
        if k in axes:
            if keepdims:
                next(it)
            out.append(0)
        else:
            out.append(next(it))
    return out


def secondary(value) -> tuple[np.ndarray, D.DeviceArray | None]:
    """(a host array to check, the device array) of an argument after ``g``: a CUDA
    array's stand-in and itself, or a host value as NumPy reads it and None (it is
    uploaded by :func:`upload` once the checks pass)."""
    if D.is_cuda_array(value):
        dev = D.device_array(value)
        return dev.host_zeros(), dev
    return _dtypes.as_array(value), None


def records(shape, *strides) -> tuple[int, list[int]]:
    """(ndim, records): ``(size, magic, shift, stride_a, stride_b, stride_c)`` per
    dimension, neighbouring dimensions merged where every operand allows it."""
    merged, lists = coalesce(list(shape), *strides)
    lists += [[0] * len(merged)] * (3 - len(lists))
    out: list[int] = []
    for k, n in enumerate(merged):
        out += [n, *D.divisor(n)[1:], lists[0][k], lists[1][k], lists[2][k]]
    return len(merged), out


_WORK: dict[tuple, Any] = {}


def work_constants(dtype: np.dtype, d: D.DeviceArray) -> Any:
    """``grad_kernels``' constants of a real work dtype on the device (C_ONE, ...)."""
    key = (np.dtype(dtype).str, D.current_device())
    array = _WORK.get(key)
    if array is None:
        info = np.finfo(dtype)
        host = np.array([1, 0.5, info.smallest_normal, info.max, np.inf], dtype)
        from numba import cuda

        array = _WORK[key] = cuda.to_device(host)  # kept: synchronous
    return array


def max_exponent(dtype: np.dtype) -> int:
    """The largest frexp exponent of a finite number of *dtype* (float32: 128)."""
    return int(np.finfo(dtype).maxexp)

"""Gathers of CUDA arrays (see :mod:`axisops.cuda`): so far ``take``.

``take`` launches a thread per output element with multiply-shift index
arithmetic (ONNX Runtime's ``fast_divmod``, 64-bit); ``mode="raise"`` is checked on
the device, where every thread that reads an index out of range lowers one flag to
that index's position, so the error names the first bad index in C order, with the
CPU path's message. Indices may be on the device or on the host (uploaded). A
result that reads nothing (an empty result, an empty axis) is the NumPy path's,
computed on a zero-stride stand-in of ``x`` and uploaded, so its checks and
errors are the NumPy path's too.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _complex, _dtypes
from .. import gather as _np_gather
from .._dispatch import numpy_function
from .._layout import coalesce
from . import _device as D
from . import kernels as K
from .reduce import _result

__all__ = ["take"]

_NP_TAKE = numpy_function(_np_gather.take)


def take(x, indices, axis=None, *, mode="raise", fill_value=0):
    """:func:`axisops.take` on the device."""
    op = "take"
    d = D.device_array(x)
    if d.dtype.kind == "c":
        _complex.check(d.dtype, op)
    else:
        _dtypes.check_dtype(d.dtype, op)
    code = _np_gather._mode(mode, op)
    idx = _indices_on_device(d, indices, op)
    outer, n_dims, rest, n_axes = _np_gather.take_dims(d.shape, axis, op)
    n = math.prod(n_dims)
    out_shape = outer + idx.shape + rest
    fill = _np_gather._fill(fill_value, d.dtype, code, op)
    if math.prod(out_shape) == 0 or n == 0:
        # reads nothing: the NumPy path on a stand-in gives the checks and the result
        host_idx = idx.array.copy_to_host() if idx.size else np.zeros(idx.shape, idx.dtype)
        stand = np.broadcast_to(np.zeros((), d.dtype), d.shape)
        host = np.asarray(_NP_TAKE(stand, host_idx, axis, mode=mode, fill_value=fill_value))
        result, flat = _result(d, out_shape, d.dtype)
        if host.size:
            flat.copy_to_device(np.ascontiguousarray(host).reshape(-1), stream=d.stream)
        return result
    seen = D.bool_as_bytes(d)
    base, offset = D.flat_base(seen)
    itemsize = d.dtype.itemsize
    strides = [s // itemsize if k > 1 else 0 for s, k in zip(d.strides, d.shape)]
    outer_shape, (outer_strides,) = coalesce(list(outer), strides[:len(outer)])
    n_shape, (n_strides,) = coalesce(list(n_dims), strides[n_axes])
    rest_shape, (rest_strides,) = coalesce(list(rest), strides[len(strides) - len(rest):])
    geo = [offset, len(outer_shape), len(n_shape), len(rest_shape),
           *D.divisor(math.prod(rest)), *D.divisor(idx.size),
           *D.dims(outer_shape, outer_strides), *D.dims(n_shape, n_strides),
           *D.dims(rest_shape, rest_strides)]
    positions = _flat_positions(idx, n, code, d)
    result, flat = _result(d, out_shape, d.dtype)
    out = flat.view(np.uint8) if d.dtype == np.bool_ else flat
    bad = d.scratch((1,), np.int64)
    bad.copy_to_device(np.array([np.iinfo(np.int64).max]), stream=d.stream)
    block = D.threads_per_block()
    K.take_elements[D.grid(out.size, block), block, d.stream](
        base, D.to_device_constants(geo, d.stream), positions, n, code,
        seen.dtype.type(fill.view(seen.dtype)[()]), bad, out)
    if code == K.MODE_RAISE:
        first = int(bad.copy_to_host(stream=d.stream)[0])  # waits for the kernel
        if first < idx.size:
            value = idx.array.reshape(idx.size)[first:first + 1].copy_to_host()[0]
            where = tuple(int(w) for w in np.unravel_index(first, idx.shape))
            raise IndexError(f"{op}: index {value} at position {where} of indices is out of "
                             f"range [{-n}, {n})")
    return result


# ------------------------------------------------------------------------ helpers


def _indices_on_device(d: D.DeviceArray, indices, op: str) -> D.DeviceArray:
    """*indices* as a C-contiguous :class:`DeviceArray` on *d*'s device: a device
    array as it is (copied if strided), a host array uploaded; integers only."""
    from numba import cuda

    if D.is_cuda_array(indices):
        i = D.device_array(indices)
        if i.dtype.kind not in "iu":
            raise TypeError(f"{op}: indices must be integers, got {i.dtype}")
        return D.in_c_order(i)
    host = np.ascontiguousarray(np.asarray(indices))
    if host.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got {host.dtype}")
    array = cuda.to_device(host, stream=d.stream)
    return D.DeviceArray(array, host.shape, host.strides, host.dtype, "numba", array, d.stream)


def _flat_positions(idx: D.DeviceArray, n: int, code: int, d: D.DeviceArray) -> Any:
    """The flat indices the kernel reads: uint64 ones converted to int64 first (a
    value past int64 must not turn negative)."""
    flat = idx.array.reshape(idx.size) if idx.array.ndim != 1 else idx.array
    if idx.dtype != np.uint64:
        return flat
    out = d.scratch((idx.size,), np.int64)
    block = D.threads_per_block()
    K.unsigned_positions[D.grid(idx.size, block), block, d.stream](
        flat, n, code == K.MODE_WRAP, out)
    return out

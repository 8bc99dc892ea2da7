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
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _complex, _dtypes
from .. import gather as _np_gather
from .._axes import normalize_axis
from .._dispatch import numpy_function
from .._indices import as_index_array, check_in_range
from .._layout import c_strides, coalesce
from .._plan import PlanCache
from . import _device as D
from . import gather_kernels as GK
from . import kernels as K
from .reduce import _result

__all__ = ["take", "take_along_axis", "gather_nd"]

_NUMPY = {"take": numpy_function(_np_gather.take),
          "take_along_axis": numpy_function(_np_gather.take_along_axis),
          "gather_nd": numpy_function(_np_gather.gather_nd)}


def take(x, indices, axis=None, *, mode="raise", fill_value=0):
    """:func:`axisops.take` on the device."""
    return _take("take", x, indices, axis, mode, fill_value)


def _take(op, x, indices, axis, mode, fill_value):
    """take, or take_along_axis with ``axis=None`` (the same gather, named *op*)."""
    d = D.device_array(x)
    key, idx = _plan_key(op, d, indices, axis, mode, fill_value)
    plan = _PLANS.get(key)
    if plan is None:
        plan, idx = _take_plan(op, d, indices, axis, mode, fill_value)
        _PLANS.put(key, plan)
    if plan.empty:
        return _numpy_on_stand_in(op, d, idx, plan.out_shape, axis, mode=mode,
                                  fill_value=fill_value)
    return _gathered(op, d, idx, plan, K.take_elements, _raise_first)


def take_along_axis(x, indices, axis, *, mode="raise", fill_value=0):
    """:func:`axisops.take_along_axis` on the device: a thread per output element."""
    op = "take_along_axis"
    d = D.device_array(x)
    key, idx = _plan_key(op, d, indices, axis, mode, fill_value)
    plan = _PLANS.get(key)
    if plan is None:
        made = _along_plan(op, d, x, indices, axis, mode, fill_value)
        if not isinstance(made, tuple):  # axis=None: a take, which planned itself
            return made
        plan, idx = made
        _PLANS.put(key, plan)
    if plan.empty:
        return _numpy_on_stand_in(op, d, idx, plan.out_shape, axis, mode=mode,
                                  fill_value=fill_value)
    return _gathered(op, d, idx, plan, GK.take_along, _raise_checked)


@dataclass(frozen=True)
class _Plan:
    """What a gather derives from its inputs' shapes, strides and dtypes and its
    options: the result's shape, the kernel's geometry on the device, the axis
    length, the mode's code and the fill (x's bits), or ``empty`` for a result that
    reads nothing of x. It holds no device memory of a call (its indices are the
    call's own)."""

    out_shape: tuple[int, ...]
    empty: bool
    geo: Any = None
    n: int = 0
    code: int = 0
    fill: Any = None


#: Plans by (operator, x's and the indices' shapes, strides and dtypes, axis, mode,
#: fill, device): a warm call checks nothing again and uploads no geometry.
_PLANS = PlanCache()


def _plan_key(op, d: D.DeviceArray, indices, axis, mode, fill_value):
    """(the plan key of a call, its indices as a C-ordered device array), or (None,
    None) where the call is planned every time: host indices (uploaded), indices
    of another kind than integers, or options that are not plain values."""
    if not D.is_cuda_array(indices) or type(mode) is not str or \
            (axis is not None and type(axis) is not int):
        return None, None
    if mode == "fill" and type(fill_value) not in (int, float, bool):
        return None, None
    i = D.device_array(indices)
    if i.dtype.kind not in "iu":
        return None, None
    key = D.call_key(op, d, i.shape, i.strides, i.dtype, axis, mode,
                     (type(fill_value), fill_value) if mode == "fill" else None)
    return key, D.in_c_order(i)


def _gathered(op, d: D.DeviceArray, idx: D.DeviceArray, plan: _Plan, kernel, check):
    """The planned gather: a thread per output element, the indices checked on the
    device (``mode="raise"``: *check* raises the NumPy path's error)."""
    base, _ = D.flat_base(D.bool_as_bytes(d))
    positions = _flat_positions(idx, plan.n, plan.code, d)
    result, flat = _result(d, plan.out_shape, d.dtype)
    bad = D.flag(d, _NO_BAD_INDEX)
    D.launch(kernel, d, flat.size, base, plan.geo, positions, plan.n, plan.code, plan.fill, bad,
             D.as_bytes(flat))
    if plan.code == K.MODE_RAISE:
        check(op, d, idx, plan.n, D.flag_value(bad, d, _NO_BAD_INDEX, True))  # waits for the kernel
    return result


#: The flag's cleared value: take lowers it to the first bad index's position;
#: take_along_axis sets it to anything else.
_NO_BAD_INDEX = int(np.iinfo(np.int64).max)


def _raise_first(op, d, idx, n, first) -> None:
    """take's ``IndexError`` naming the first bad index, whose position the kernel
    left in the flag."""
    if first < idx.size:
        value = D.to_host(idx.array.reshape(idx.size)[first:first + 1], d)[0]
        where = tuple(int(w) for w in np.unravel_index(first, idx.shape))
        raise IndexError(f"{op}: index {value} at position {where} of indices is out of "
                         f"range [{-n}, {n})")


def _raise_checked(op, d, idx, n, flag) -> None:
    """take_along_axis's ``IndexError``: the indices read back and checked on the host
    where the kernel met a bad one."""
    if flag != _NO_BAD_INDEX:
        check_in_range(D.to_host(idx.array, d), n, op, negative=True)


def _take_plan(op, d, indices, axis, mode, fill_value) -> tuple[_Plan, D.DeviceArray]:
    """(the plan of a take, the indices on the device), after the NumPy path's checks
    in its order."""
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
        return _Plan(out_shape, True), idx
    src = D.operand(d)
    offset, strides = src.offset, src.strides
    outer_shape, (outer_strides,) = coalesce(list(outer), strides[:len(outer)])
    n_shape, (n_strides,) = coalesce(list(n_dims), strides[n_axes])
    rest_shape, (rest_strides,) = coalesce(list(rest), strides[len(strides) - len(rest):])
    geo = [offset, len(outer_shape), len(n_shape), len(rest_shape),
           *D.divisor(math.prod(rest)), *D.divisor(idx.size),
           *D.dims(outer_shape, outer_strides), *D.dims(n_shape, n_strides),
           *D.dims(rest_shape, rest_strides)]
    return _Plan(out_shape, False, D.to_device_constants(geo), n, code,
                 src.dtype.type(fill.view(src.dtype)[()])), idx


def _along_plan(op, d, x, indices, axis, mode, fill_value):
    """(the plan of a take_along_axis, the indices on the device), after the NumPy
    path's checks in its order; or the result itself with ``axis=None`` (a take of
    the flattened x)."""
    if d.dtype.kind == "c":
        _complex.check(d.dtype, op)
    else:
        _dtypes.check_dtype(d.dtype, op)
    idx = _indices_on_device(d, indices, op)
    code = _np_gather._mode(mode, op)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None indices must be 1-D, "
                             f"got {idx.ndim} dimensions")
        return _take(op, x, idx.owner if idx.kind != "numba" else idx.array, None, mode,
                     fill_value)
    if idx.ndim != d.ndim:
        raise ValueError(f"take_along_axis: indices must have x's {d.ndim} dimensions, "
                         f"got {idx.ndim}")
    axis = normalize_axis(axis, d.ndim, op)
    n = d.shape[axis]
    out_shape = _np_gather._along_shape(d.shape, idx.shape, axis)
    fill = _np_gather._fill(fill_value, d.dtype, code, op)
    if math.prod(out_shape) == 0 or (n == 0 and code != K.MODE_FILL):
        return _Plan(out_shape, True), idx
    src = D.operand(d)
    offset, xs = src.offset, src.strides
    istr = [s if k > 1 else 0 for s, k in zip(c_strides(idx.shape), idx.shape)]
    outer, (x_outer, i_outer) = coalesce(list(out_shape[:axis]), xs[:axis], istr[:axis])
    rest, (x_rest, i_rest) = coalesce(list(out_shape[axis + 1:]), xs[axis + 1:],
                                      istr[axis + 1:])
    geo = [offset, len(outer), len(rest), xs[axis], istr[axis],
           *D.divisor(math.prod(rest)), *D.divisor(out_shape[axis]),
           *GK.dims_multi(outer, x_outer, i_outer), *GK.dims_multi(rest, x_rest, i_rest)]
    return _Plan(out_shape, False, D.to_device_constants(geo), n, code,
                 src.dtype.type(fill.view(src.dtype)[()])), idx


def gather_nd(x, indices, *, batch_dims=0):
    """:func:`axisops.gather_nd` on the device: a thread per output element, which
    resolves its tuple's components and reads one element."""
    op = "gather_nd"
    d = D.device_array(x)
    if d.dtype.kind == "c":
        _complex.check(d.dtype, op)
    else:
        _dtypes.check_dtype(d.dtype, op)
    idx = _indices_on_device(d, indices, op)
    b, dims, out_shape = _np_gather._nd_shapes(d.shape, idx.stand_in(), batch_dims, op)
    q = len(dims)
    if math.prod(out_shape) == 0:  # the tuples are still checked, as on the CPU
        return _numpy_on_stand_in(op, d, idx, out_shape, batch_dims=batch_dims)
    src = D.operand(d)
    base, offset, xs = src.base, src.offset, src.strides
    rest = d.shape[b + q:]
    rows_per_batch = math.prod(idx.shape[b:-1])
    geo = [offset, b, len(rest), *D.divisor(math.prod(rest)), *D.divisor(rows_per_batch),
           *D.dims(d.shape[:b], xs[:b]), *D.dims(rest, xs[b + q:])]
    for k in range(q):
        geo += [dims[k], xs[b + k]]
    positions = _flat_positions(idx, max(dims), K.MODE_RAISE, d)
    result, flat = _result(d, out_shape, d.dtype)
    out = D.as_bytes(flat)
    bad = D.flag(d)
    D.launch(GK.gather_tuples, d, out.size, base, D.to_device_constants(geo), positions, q, bad,
             out)
    if D.is_set(bad, d, release=True):
        _np_gather._raise_first_tuple_error(D.to_host(idx.array, d), dims, op)
    return result


# ------------------------------------------------------------------------ helpers


def _numpy_on_stand_in(op, d, idx, out_shape, *args, **kwargs):
    """A gather that reads nothing of ``x``: the NumPy path on a zero-stride stand-in
    (its checks of the index values and its errors), the result uploaded."""
    host_idx = D.to_host(idx.array, d) if idx.size else np.zeros(idx.shape, idx.dtype)
    stand = d.host_zeros()
    host = np.asarray(_NUMPY[op](stand, host_idx, *args, **kwargs))
    result, flat = _result(d, out_shape, d.dtype)
    if host.size:
        flat.copy_to_device(np.ascontiguousarray(host).reshape(-1), stream=d.stream)
    return result


def _indices_on_device(d: D.DeviceArray, indices, op: str) -> D.DeviceArray:
    """*indices* as a C-contiguous :class:`DeviceArray` on *d*'s device: a device
    array as it is (copied if strided), a host array uploaded; integers only,
    with ``as_index_array``'s error."""
    if D.is_cuda_array(indices):
        i = D.device_array(indices)
        if i.dtype.kind not in "iu":
            raise TypeError(f"{op}: indices must be integers, got {i.dtype}")
        return D.in_c_order(i)
    return D.upload(d, as_index_array(indices, op))


def _flat_positions(idx: D.DeviceArray, n: int, code: int, d: D.DeviceArray) -> Any:
    """The flat indices the kernel reads: uint64 ones converted to int64 first (a
    value past int64 must not turn negative)."""
    flat = idx.array.reshape(idx.size) if idx.array.ndim != 1 else idx.array
    if idx.dtype != np.uint64:
        return flat
    out = d.scratch((idx.size,), np.int64)
    D.launch(K.unsigned_positions, d, idx.size, flat, n, code == K.MODE_WRAP, out)
    return out

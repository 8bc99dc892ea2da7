"""Sliding windows of CUDA arrays: ``unfold`` (im2col) and ``fold`` (col2im).

Both are gathers, a thread per output element (:mod:`axisops.cuda.window_kernels`):
``unfold`` writes each column entry from the input element its window reads (or a
zero for padding); ``fold`` gives each image element the sum of the column entries
that cover it, added in increasing kernel index — the CPU path's order — so the
results are the NumPy path's bits for every dtype, run after run (no atomics).

Decisions:

* The checks are the NumPy path's own: ``axisops.window.unfold_shape`` and the
  helpers ``_geometry`` and ``_per_dim``, run on the host from the shapes (the
  device memory is never read), then ``_fold_plan``'s shape checks with its
  messages. Every geometry the kernels see is lifted to three dimensions by the
  CPU path's ``_Geometry.array``.
* ``unfold`` moves bits: each dtype travels as the integer of its width (bool as
  int8, float16 as int16, complex64 as int64, complex128 as two int64), so NaN
  payloads and -0.0 survive. Inputs of any strides are read in place (the base
  from the lowest address, element strides, as ``axisops.cuda._device.flat_base``).
* ``fold`` adds as the CPU does: float16 in float32 rounded once on the store,
  float32 and float64 in their own dtype, integers in int64 wrapped to their
  width (uint64 as int64 bits), bool as the logical or; complex numbers as their
  two real parts (a thread per part), as ``axisops._complex.componentwise``.
* An empty result is an empty device array of the result's type; an empty input
  with a non-empty ``unfold`` (all padding) reads nothing, so the kernel gets a
  one-element stand-in base.

The gradients (:mod:`axisops.cuda.window_grad`) reuse :func:`windows` and
:func:`sums` with their conversions (integers to float64 on the way).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _complex, _dtypes
from .. import window as _np_window
from .._plan import PlanCache
from . import _device as D
from . import window_kernels as K
from .reduce import _result

__all__ = ["unfold", "fold"]


def unfold(x, kernel_size, *, dilation=1, padding=0, stride=1, channels_last=False):
    """:func:`axisops.unfold` on the device: a thread per column entry, bits moved."""
    d = D.device_array(x)
    check_dtype(d.dtype, "unfold")
    return windows("unfold", d, kernel_size, dilation, padding, stride, channels_last, d.dtype)


def fold(cols, output_size, kernel_size, *, dilation=1, padding=0, stride=1,
         channels_last=False):
    """:func:`axisops.fold` on the device: a thread per image element gathers its
    column entries in increasing kernel index (the NumPy path's bits)."""
    d = D.device_array(cols)
    check_dtype(d.dtype, "fold")
    geo, size, batch, channels, shape = fold_shape(d.shape, output_size, kernel_size, dilation,
                                                   padding, stride, channels_last)
    return sums(d, geo, size, batch, channels, channels_last, shape, d.dtype,
                fold_dtype(d.dtype))


# ----------------------------------------------------------------------- checks


def check_dtype(dtype: np.dtype, op: str) -> None:
    """The NumPy path's dtype check: complex64/complex128, or bool, int, uint, float."""
    if dtype.kind == "c":
        _complex.check(dtype, op)
    else:
        _dtypes.check_dtype(dtype, op)


def fold_shape(shape, output_size, kernel_size, dilation, padding, stride, channels_last):
    """(geometry, output_size, batch, channels, result shape) of ``fold`` for columns
    of *shape*, with ``axisops.window._fold_plan``'s checks and errors, in its order."""
    geo = _np_window._geometry("fold", kernel_size, dilation, padding, stride)
    size = _np_window._per_dim("fold", "output_size", output_size, geo.d, low=0)
    positions = geo.positions("fold", size)
    count, total = geo.kernel_count, math.prod(positions)
    shape = tuple(shape)
    if len(shape) not in (2, 3):
        want = "(N, L, K*C) or (L, K*C)" if channels_last else "(N, C*K, L) or (C*K, L)"
        raise ValueError(f"fold: expected cols of shape {want} with K = {count} and L = {total} "
                         f"for output_size {size}, got shape {shape}")
    batched = len(shape) == 3
    cb = shape if batched else (1, *shape)
    width, length = (cb[2], cb[1]) if channels_last else (cb[1], cb[2])
    if width % count or length != total:
        want = "(N, L, K*C)" if channels_last else "(N, C*K, L)"
        raise ValueError(f"fold: expected cols of shape {want} with K = {count} and L = {total} "
                         f"for output_size {size}, got shape {shape}")
    batch, channels = cb[0], width // count
    out = (batch, *size, channels) if channels_last else (batch, channels, *size)
    _np_window.check_result_size("fold", out)
    return geo, size, batch, channels, out if batched else out[1:]


def fold_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype fold adds *dtype* in (the CPU path's): float16 in float32, floats
    and complex parts in their own, the rest in int64."""
    if dtype.kind == "c":
        return _complex.part_dtype(dtype)
    if dtype.kind == "f":
        return np.dtype(np.float32) if dtype == np.float16 else dtype
    return np.dtype(np.int64)


# ------------------------------------------------------------------------ unfold


def windows(op: str, d: D.DeviceArray, kernel_size, dilation, padding, stride, channels_last,
            dtype: np.dtype) -> Any:
    """``unfold`` of *d* (its dtype checked) into a result of *dtype*: *d*'s own
    (bits moved), or float64 for a bool or integer *d* (converted, ``grad.fold``);
    *op* names the function in errors. The plan (checks, geometry on the device) is
    kept per description of the call."""
    try:
        key = D.call_key(op, d, np.dtype(dtype), _np_window._option_key(kernel_size),
                         _np_window._option_key(dilation), _np_window._option_key(padding),
                         _np_window._option_key(stride), _np_window._flag_key(channels_last))
    except TypeError:  # an option given another way: planned every time
        key = None
    plan = _UNFOLD_PLANS.plan(key, _unfold_plan, op, d, kernel_size, dilation, padding, stride,
                              channels_last, dtype)
    result, flat = _result(d, plan.shape, plan.dtype)
    if flat.size == 0:
        return result
    base, _ = _base(d, plan.read)
    out = flat.view(plan.write) if flat.dtype != plan.write else flat
    K.unfold_elements[plan.grid, plan.block, d.stream](
        base, plan.geo, plan.parts - 1, plan.channels_last, plan.fill, out)
    return result


@dataclass(frozen=True)
class _UnfoldPlan:
    shape: tuple[int, ...]
    dtype: np.dtype
    read: Any = None   # np.dtype; None for an empty result, which launches nothing
    write: Any = None
    parts: int = 1
    fill: Any = None
    channels_last: bool = False
    geo: Any = None
    grid: int = 1
    block: int = 1


#: unfold's plans by (operator, shape, strides, dtype, result dtype, options, device).
_UNFOLD_PLANS = PlanCache()


def _unfold_plan(op, d: D.DeviceArray, kernel_size, dilation, padding, stride, channels_last,
                 dtype) -> _UnfoldPlan:
    dtype = np.dtype(dtype)
    geo, shape = _np_window.unfold_shape(d.shape, kernel_size, dilation, padding, stride,
                                         channels_last, op)
    if math.prod(shape) == 0:
        return _UnfoldPlan(tuple(shape), dtype)
    k = geo.d
    batched = d.ndim == k + 2
    itemsize = d.dtype.itemsize
    strides = [s // itemsize if n > 1 else 0 for s, n in zip(d.strides, d.shape)]
    shape_b, strides_b = ((d.shape, strides) if batched
                          else ((1, *d.shape), [0, *strides]))
    if channels_last:  # as (N, C, *spatial)
        shape_b = (shape_b[0], shape_b[-1], *shape_b[1:-1])
        strides_b = [strides_b[0], strides_b[-1], *strides_b[1:-1]]
    lift = 3 - k
    spatial = shape_b[2:]
    g = geo.array(spatial, geo.positions(op, spatial))  # rows S, L, k, D, T, P
    if dtype == d.dtype:  # a move of bits
        read = np.dtype(f"i{min(itemsize, 8)}")
        parts = 2 if itemsize == 16 else 1
        write, fill = read, read.type(0)
    else:                 # bool and integers to float64
        read = np.dtype(np.uint8) if d.dtype == np.bool_ else d.dtype
        parts = 1
        write, fill = dtype, dtype.type(0)
    offset = D.base_offset(d)
    s_n, s_c, *s_spatial = strides_b
    xs = [s_n, s_c, *([0] * lift), *s_spatial]
    # output dimensions, innermost first (n is the last quotient)
    ks, ls = list(g[2]), list(g[1])
    c = shape_b[1]
    inner = ([c, *ks[::-1], *ls[::-1]] if channels_last else [*ls[::-1], *ks[::-1], c])
    values = [offset, *xs, *g[0], *g[4], *g[3], *g[5]]
    for size in inner:
        values += D.divisor(size)
    assert len(values) == K.U_LEN
    block = D.threads_per_block()
    size = math.prod(shape) * dtype.itemsize // write.itemsize  # the threads: out's elements
    return _UnfoldPlan(tuple(shape), dtype, read, write, parts, fill, bool(channels_last),
                       D.to_device_constants(values), D.grid(size, block), block)


# -------------------------------------------------------------------------- fold


def sums(d: D.DeviceArray, geo, size, batch: int, channels: int, channels_last, shape,
         dtype: np.dtype, acc: np.dtype) -> Any:
    """``fold`` of the columns *d* (checked: *geo*, *size*, *batch*, *channels* and
    the result *shape* from :func:`fold_shape` or ``unfold_shape``) into a result of
    *dtype*, adding in *acc* (float dtypes), or in int64 wrapped to *dtype*."""
    dtype, acc = np.dtype(dtype), np.dtype(acc)
    result, flat = _result(d, shape, dtype)
    if flat.size == 0:
        return result
    positions = geo.positions("fold", size)
    g = geo.array(size, positions)  # rows S, L, k, D, T, P
    itemsize = d.dtype.itemsize
    strides = [s // itemsize if n > 1 else 0 for s, n in zip(d.strides, d.shape)]
    if d.ndim == 2:
        strides = [0, *strides]
    complex_ = d.dtype.kind == "c"
    if complex_:
        read = _complex.part_dtype(d.dtype)
    elif d.dtype == np.bool_:
        read = np.dtype(np.uint8)
    elif d.dtype == np.uint64 and acc.kind != "f":
        read = np.dtype(np.int64)  # sums wrap to the same bits
    else:
        read = d.dtype
    base, offset = _base(d, read)
    inner = ([channels, *g[0][::-1]] if channels_last else [*g[0][::-1], channels])
    values = [offset, *strides, geo.kernel_count, channels, *g[1], *g[2], *g[3], *g[5]]
    for v in [*g[4], *inner]:
        values += D.divisor(v)
    assert len(values) == K.F_LEN
    geo_d = D.to_device_constants(values)
    block = D.threads_per_block()
    if acc.kind == "f":
        out = flat.view(acc) if complex_ else flat
        K.fold_values[D.grid(out.size, block), block, d.stream](
            base, geo_d, int(complex_), bool(channels_last), acc.type(0), out)
        return result
    if dtype == np.bool_:
        out, mask, half = flat.view(np.uint8), -1, 0
    elif dtype == np.uint64:
        out, mask, half = flat.view(np.int64), -1, 0
    else:
        bits = 8 * dtype.itemsize
        out = flat
        mask = -1 if bits == 64 else (1 << bits) - 1
        half = 1 << (bits - 1) if dtype.kind == "i" and bits < 64 else 0
    K.fold_integers[D.grid(out.size, block), block, d.stream](
        base, geo_d, bool(channels_last), np.int64(0), np.int64(mask), np.int64(half),
        dtype == np.bool_, out)
    return result


def _base(d: D.DeviceArray, read: np.dtype) -> tuple[Any, int]:
    """(*d*'s flat base seen as *read*, the element offset of ``d[0, ..., 0]``); a
    one-element stand-in for an empty *d* (the kernels read nothing of it)."""
    if d.size == 0:
        return d.scratch((1,), read), 0
    base, offset = D.flat_base(d)
    return (base.view(read) if base.dtype != read else base), offset

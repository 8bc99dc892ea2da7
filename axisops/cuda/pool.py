"""Pooling of CUDA arrays: ``max_pool`` and ``avg_pool``, a thread per output
element (:mod:`axisops.cuda.pool_kernels`).

Each thread walks its window in window order, as the CPU kernels
(``axisops.kernels.pool``) do, so the results are the NumPy path's bits, run
after run (no atomics, no reassociation):

* ``max_pool``: the first element of the window, then any greater one or the
  first NaN over a number (ties to the first in window order); the index is the
  flat position in the (n, c) plane (int64). Every dtype is compared as it is
  (bool as uint8, float16 natively: the CPU's float16 to float32 and back gives
  the same values).
* ``avg_pool``: the sum in window order from zero in the CPU kernel's
  accumulator, divided once by the window's count in float64 and stored in the
  CPU's out dtype (float32 for float16 and float32, float64 otherwise); a
  float16 result is that float32 cast once more (``kernels.cast``), as the CPU
  casts its float32 out. The accumulator is the CPU kernels'
  (:func:`axisops.cuda.pool_kernels.mean_dtypes`): float32 for float16 and
  float32, else float64, in either layout.

The checks are the NumPy path's own, on the host from the shape and dtype:
``axisops.window._check_number`` and ``axisops.pool.PoolGeometry`` (which also
gives the geometry, lifted to three dimensions, and the element strides of the
input read in place from a stand-in of its shape and strides).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import pool as _np_pool
from .. import window as _np_window
from .._plan import PlanCache
from . import _device as D
from . import kernels as K
from . import pool_kernels as PK
from .reduce import _result

__all__ = ["max_pool", "avg_pool"]


def max_pool(x, kernel_size, *, stride=None, dilation=1, padding=0, ceil_mode=False,
             channels_last=False, return_indices=False):
    """:func:`axisops.max_pool` on the device: a thread per output element."""
    d = D.device_array(x)
    plan = _planned("max_pool", d, kernel_size, stride, dilation, padding, ceil_mode,
                    channels_last)
    result, flat = _result(d, plan.out_shape, d.dtype)
    indices, at = _result(d, plan.out_shape, np.int64) if return_indices else (None, None)
    if flat.size:
        base, _ = D.flat_base(D.bool_as_bytes(d))
        D.launch(PK.max_pool_elements, d, flat.size, base, plan.geo, plan.channels_last,
                 bool(return_indices), D.as_bytes(flat),
                 at if at is not None else d.scratch((1,), np.int64))
    return (result, indices) if return_indices else result


def avg_pool(x, kernel_size, *, stride=None, padding=0, ceil_mode=False, channels_last=False,
             count_include_pad=True):
    """:func:`axisops.avg_pool` on the device: a thread per output element adds its
    window in window order and divides once."""
    d = D.device_array(x)
    plan = _planned("avg_pool", d, kernel_size, stride, 1, padding, ceil_mode, channels_last)
    dtype = _np_pool._result_dtype(d.dtype, False)
    result, flat = _result(d, plan.out_shape, dtype)
    if not flat.size:
        return result
    base, _ = D.flat_base(D.bool_as_bytes(d))
    acc, work = PK.mean_dtypes(base.dtype, plan.channels_last)
    out = flat if work == dtype else d.scratch((flat.size,), work)
    D.launch(PK.avg_pool_elements, d, flat.size, base, plan.geo, plan.channels_last,
             bool(count_include_pad), acc.type(0), out)
    if out is not flat:
        D.launch(K.cast, d, flat.size, out, flat)
    return result


@dataclass(frozen=True)
class _Plan:
    """What a pooling call derives from the input's shape, strides and dtype and
    its options: the result's shape and the kernels' geometry on the device."""

    out_shape: tuple[int, ...]
    channels_last: bool
    geo: Any


#: Plans by (operator, shape, strides, dtype, options, device): a warm call
#: checks nothing again and uploads nothing (see ``axisops._plan``).
_PLANS = PlanCache()


def _planned(op, d: D.DeviceArray, kernel_size, stride, dilation, padding, ceil_mode,
             channels_last) -> _Plan:
    try:
        key = D.call_key(op, d, _np_window._option_key(kernel_size),
                         None if stride is None else _np_window._option_key(stride),
                         _np_window._option_key(dilation), _np_window._option_key(padding),
                         _np_window._flag_key(ceil_mode), _np_window._flag_key(channels_last))
    except TypeError:  # an option given another way: checked every time
        key = None
    return _PLANS.plan(key, _make_plan, op, d, kernel_size, stride, dilation, padding,
                       ceil_mode, channels_last)


def _make_plan(op, d, kernel_size, stride, dilation, padding, ceil_mode, channels_last):
    _np_window._check_number(d.dtype, op)
    pg = _np_pool.PoolGeometry(op, d.shape, kernel_size, stride, dilation, padding,
                               bool(ceil_mode), bool(channels_last))
    if not math.prod(pg.out_shape):  # no thread: no geometry (its divisors would be 0)
        return _Plan(pg.out_shape, pg.channels_last, None)
    return _Plan(pg.out_shape, pg.channels_last,
                 geometry(pg, D.base_offset(d), pg.strides(d.stand_in())[1], pg.out_shape))


def geometry(pg: _np_pool.PoolGeometry, offset: int, strides, shape) -> Any:
    """The kernels' geometry (``pool_kernels.G_*``) of *pg*: *offset* and the five
    element *strides* ``(n, c, s1, s2, s3)`` of what they read, and the records of
    *shape* (the pooled shape, or x's for the gradients), whose elements are the
    threads."""
    g = pg.array()  # rows S, L, k, D, T, P
    batched = shape if pg.batched else (1, *shape)
    n_c = (batched[-1], *batched[1:-1][::-1]) if pg.channels_last \
        else (*batched[2:][::-1], batched[1])
    lift = [1] * (3 - pg.d)
    dims = (n_c[0], *n_c[1:1 + pg.d], *lift) if pg.channels_last \
        else (*n_c[:pg.d], *lift, n_c[-1])
    values = [int(offset), *(int(s) for s in strides)]
    for row in (0, 1, 2, 3, 4, 5):
        values += [int(v) for v in g[row]]
    values += [int(v) for v in pg.pad_end()]
    for size in dims:
        values += D.divisor(size)
    for row in (4, 3):
        for v in g[row]:
            values += D.divisor(int(v))
    values += D.divisor(int(g[0][2])) + D.divisor(int(g[0][1]))
    assert len(values) == PK.G_LEN
    return D.to_device_constants(values)

"""The moving order statistics on CUDA arrays: ``moving_median``,
``moving_quantile``, ``moving_rank`` (see :mod:`axisops.moving_order` for the
semantics), a thread per output element that walks its own trailing window
(:mod:`axisops.cuda.order_kernels`).

Each output counts its window's values that are not NaN, then finds the element
at the place it needs (the median's one or two middle places, the quantile's
``floor(q * (count - 1))`` and the next) by counting, for each candidate in
window order, the values below it and the equal ones before it: the stable order
of the CPU, so an odd median is that element's bits (-0.0 or +0.0 as the CPU
picks it). O(window**2) compares per output, from cache: meant for windows up
to a few hundred (the CPU's O(log window) sliding structure does not fit a GPU
thread; a block per lane segment is the next step for longer windows). The
values are compared in the input's own dtype (integers exactly, float16 as
float16, bool as bytes), the mean, the interpolation (its product never fused
into an FMA) and the rank in float64, rounded once to the result dtype: the
CPU's bits. ``moving_rank`` counts the values below and equal to the latest one
(bottleneck's formula, in the CPU's order of operations).

The checks are the NumPy path's (``check_quantile``, ``moving.check_window``,
``moving.check_dtype``, the axis), in its order, with its messages.
"""
from __future__ import annotations

import numpy as np

from .. import moving as _np_moving
from .. import moving_order as _np_moving_order
from .._axes import normalize_axis
from . import _device as D
from . import moving as _moving
from . import order_kernels as OK
from .reduce import _result

NUMPY_MODULE = "axisops.moving_order"

__all__ = ["moving_median", "moving_quantile", "moving_rank"]


def moving_median(x, window, axis=-1, *, min_count=None):
    """:func:`axisops.moving_median` on the device: the CPU's bits."""
    return _forward("moving_median", x, window, axis, min_count, 0.5)


def moving_quantile(x, window, q, axis=-1, *, min_count=None):
    """:func:`axisops.moving_quantile` on the device: the CPU's bits."""
    q = _np_moving_order.check_quantile(q, "moving_quantile")
    return _forward("moving_quantile", x, window, axis, min_count, q)


def moving_rank(x, window, axis=-1, *, min_count=None):
    """:func:`axisops.moving_rank` on the device: the CPU's bits."""
    return _forward("moving_rank", x, window, axis, min_count, 0.5)


def checked(op: str, d: D.DeviceArray, window, axis, min_count) -> tuple[int, int, int]:
    """(window fitted to the axis, min_count, axis) after the NumPy path's checks."""
    window, min_count = _np_moving.check_window(op, window, min_count)
    _np_moving.check_dtype(d.dtype, op)
    if axis is None or isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    axis = normalize_axis(axis, d.ndim, op)
    if d.size:
        window = min(window, d.shape[axis])
    return window, min_count, axis


def picks(d: D.DeviceArray, window: int, axis: int, min_count: int, median: bool, q: float):
    """Device arrays (flat, C order of x's shape) of the float64 values and, per
    output, the positions along the axis of the lower and upper elements chosen
    (-1 for none) and the upper one's weight (``axisops.moving_order.picks``)."""
    base, geo = _moving.geometry(d, axis)
    size = d.size
    values = d.scratch((size,), np.float64)
    a, b = d.scratch((size,), np.int64), d.scratch((size,), np.int64)
    w = d.scratch((size,), np.float64)
    D.launch(OK.moving_select, d, size, base, geo, window, min_count,
             OK.MEDIAN if median else OK.QUANTILE, float(q), values, True, a, b, w)
    return values, a, b, w


def _forward(op: str, x, window, axis, min_count, q: float):
    d = D.device_array(x)
    window, min_count, axis = checked(op, d, window, axis, min_count)
    res = d.dtype if d.dtype.kind == "f" else np.dtype(np.float64)
    result, flat = _result(d, d.shape, res)
    if d.size == 0:
        return result
    base, geo = _moving.geometry(d, axis)
    if op == "moving_rank":
        D.launch(OK.moving_ranks, d, d.size, base, geo, window, min_count, flat)
        return result
    unused = d.scratch((1,), np.int64)
    D.launch(OK.moving_select, d, d.size, base, geo, window, min_count,
             OK.MEDIAN if op == "moving_median" else OK.QUANTILE, float(q), flat, False,
             unused, unused, d.scratch((1,), np.float64))
    return result

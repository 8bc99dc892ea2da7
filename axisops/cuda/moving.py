"""The moving windows on CUDA arrays: ``moving_sum``, ``moving_mean``,
``moving_var``, ``moving_std``, ``moving_max``, ``moving_min``, ``moving_argmax``,
``moving_argmin`` (see :mod:`axisops.moving` for the semantics), a thread per
output element that walks its own trailing window
(:mod:`axisops.cuda.moving_kernels`).

Why a thread per output and not the CPU's running sums and van Herk/Gil-Werman
blocks per lane: a lane's walk is serial along the axis (a long axis with few
lanes leaves the GPU idle) and the running state (a block's suffix extrema, up
to ``window`` positions per thread) does not fit a GPU thread; a thread per output has every element's worth of
parallelism, reads neighbouring addresses from neighbouring threads (along the
axis or across lanes), needs no state, and depends on nothing in the CPU kernels
but the documented semantics. It costs ``O(window)`` per output: a window of
1000 over a million float64 elements is a billion reads, mostly from cache
(estimated at milliseconds on a current GPU; not yet timed on one).

* ``moving_max``, ``moving_min``, ``moving_argmax``, ``moving_argmin``: the
  window in index order, each element that is not NaN and ties or beats the best
  taking over: ties to the latest, compared in the input's own dtype (integers
  exactly). The CPU's values and indices, bit for bit.
* ``moving_sum``, ``moving_mean``: the finite elements of each window added
  afresh in float64 in index order (infinities counted apart, as the CPU does),
  divided once by the count for the mean, rounded once to the result dtype.
  Equal to the CPU's running, block-re-anchored sums to float64 rounding, not
  bit for bit (each window's sum has one rounding per element of that window;
  the CPU's carries the rounding of every addition and removal since its block
  started), and the same bits on every run.
* ``moving_var``, ``moving_std``: two passes per window in float64 (the mean of
  the values less the window's first finite value, then the squared deviations
  from it), never a difference of sums; a window of equal values gives exactly 0
  as on the CPU; the CPU's Welford updates equal this to rounding.

The checks are the NumPy path's own (``axisops.moving.check_window``,
``check_dtype``, ``_dtypes.check_ddof``, the axis), in the same order, with its
messages; the geometry is ``axisops._layout.scan_view`` of a stand-in of the
input's shape and strides, read in place.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _dtypes
from .. import moving as _np_moving
from .._axes import normalize_axis
from .._layout import scan_view
from .._plan import PlanCache
from . import _device as D
from . import moving_kernels as MK
from .reduce import _result

__all__ = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min", "moving_argmax", "moving_argmin"]


def moving_sum(x, window, axis=-1, *, min_count=None):
    """:func:`axisops.moving_sum` on the device: each window summed in float64."""
    return _moving("moving_sum", x, window, axis, min_count)


def moving_mean(x, window, axis=-1, *, min_count=None):
    """:func:`axisops.moving_mean` on the device."""
    return _moving("moving_mean", x, window, axis, min_count)


def moving_var(x, window, axis=-1, *, min_count=None, ddof=0):
    """:func:`axisops.moving_var` on the device: two passes per window."""
    return _moving("moving_var", x, window, axis, min_count, ddof)


def moving_std(x, window, axis=-1, *, min_count=None, ddof=0):
    """:func:`axisops.moving_std` on the device."""
    return _moving("moving_std", x, window, axis, min_count, ddof)


def moving_max(x, window, axis=-1, *, min_count=None):
    """:func:`axisops.moving_max` on the device: the CPU's bits."""
    return _moving("moving_max", x, window, axis, min_count)


def moving_min(x, window, axis=-1, *, min_count=None):
    """:func:`axisops.moving_min` on the device: the CPU's bits."""
    return _moving("moving_min", x, window, axis, min_count)


def moving_argmax(x, window, axis=-1, *, min_count=None):
    """:func:`axisops.moving_argmax` on the device: the CPU's indices."""
    return _moving("moving_argmax", x, window, axis, min_count)


def moving_argmin(x, window, axis=-1, *, min_count=None):
    """:func:`axisops.moving_argmin` on the device: the CPU's indices."""
    return _moving("moving_argmin", x, window, axis, min_count)


# ------------------------------------------------------------------------ helpers

#: ``ddof`` of the operators that take none (None is a ``ddof`` to refuse).
_NO_DDOF: Any = object()



def checked(op: str, d: D.DeviceArray, window, axis, min_count, ddof=_NO_DDOF,
            grad: bool = False) -> tuple[int, int, int, float]:
    """(window, min_count, axis, ddof as a float, 0 for the operators without one)
    after the NumPy path's checks, in its order (the forwards'
    ``axisops.moving._moving`` and ``_plan``, or with *grad* the gradients'
    ``axisops.grad.moving._variance`` and ``_prepare``, whose ``ddof`` check comes
    first)."""
    variance = ddof is not _NO_DDOF
    if grad and variance:
        ddof = _dtypes.check_ddof(ddof, op)
    window, min_count = _np_moving.check_window(op, window, min_count)
    if variance and not grad:
        ddof = _dtypes.check_ddof(ddof, op)
    _np_moving.check_dtype(d.dtype, op)
    if grad:
        if axis is None or isinstance(axis, (tuple, list)):
            raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    elif axis is None:
        raise TypeError(f"{op}: axis must be a single int, got None")
    return window, min_count, normalize_axis(axis, d.ndim, op), \
        float(ddof) if variance else 0.0


def geometry(d: D.DeviceArray, axis: int) -> tuple[Any, Any]:
    """(flat base of *d*, bool read as bytes; the kernels' geometry ``G_*`` of its
    ``ScanView`` along *axis*, on the device)."""
    view = scan_view(d.stand_in(), axis)
    values = [view.offset, view.inner, view.inner_stride, view.n, view.n_stride,
              view.outer_shape.size, view.mid_shape.size, *D.divisor(view.inner),
              *D.divisor(view.mid), *D.divisor(view.n),
              *D.dims(view.outer_shape.tolist(), view.outer_strides.tolist()),
              *D.dims(view.mid_shape.tolist(), view.mid_strides.tolist())]
    base, _ = D.flat_base(D.bool_as_bytes(d))
    return base, D.to_device_constants([int(v) for v in values])


def _moving(op: str, x, window, axis, min_count, ddof=_NO_DDOF):
    d = D.device_array(x)
    key = None
    if type(window) is int and type(axis) is int and (min_count is None
                                                      or type(min_count) is int) \
            and (ddof is _NO_DDOF or type(ddof) in (int, float)):
        key = D.call_key(op, d, window, axis, min_count,
                         None if ddof is _NO_DDOF else (type(ddof), ddof))
    plan = _PLANS.plan(key, _plan, op, d, window, axis, min_count, ddof)
    result, flat = _result(d, d.shape, plan.res)
    if d.size == 0:
        return result
    base, _ = D.flat_base(D.bool_as_bytes(d))
    kind = plan.kind
    if kind in ("sum", "mean"):
        D.launch(MK.moving_sums, d, d.size, base, plan.geo, plan.window, plan.min_count,
                 kind == "mean", _ZERO, flat)
    elif kind in ("var", "std"):
        D.launch(MK.moving_vars, d, d.size, base, plan.geo, plan.window, plan.min_count,
                 plan.ddof, kind == "std", _ZERO, flat)
    else:
        arg = kind.startswith("arg")
        if arg:
            values, indices = d.scratch((1,), np.float64), flat
        else:
            values, indices = flat, d.scratch((1,), np.int64)
        D.launch(MK.moving_extremes, d, d.size, base, plan.geo, plan.window, plan.min_count,
                 kind.endswith("min"), not arg, values, arg, indices)
    return result


_ZERO = np.float64(0)


@dataclass(frozen=True)
class _Plan:
    kind: str
    res: np.dtype
    window: int
    min_count: int
    ddof: float
    geo: Any = None


#: Plans by (operator, shape, strides, dtype, window, axis, min_count, ddof, device):
#: a warm call checks nothing again and rebuilds no geometry.
_PLANS = PlanCache()


def _plan(op: str, d: D.DeviceArray, window, axis, min_count, ddof) -> _Plan:
    window, min_count, axis, ddof = checked(op, d, window, axis, min_count, ddof)
    kind = op[len("moving_"):]
    res = np.dtype(np.int64) if kind.startswith("arg") else MK.result_dtype(d.dtype)
    if d.size == 0:
        return _Plan(kind, res, window, min_count, ddof)
    return _Plan(kind, res, window, min_count, ddof, geometry(d, axis)[1])

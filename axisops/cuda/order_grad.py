"""Gradients of the order statistics on CUDA arrays: ``grad.sort``, ``top_k``,
``kthvalue``, ``partition``, ``median``, ``nanmedian``, ``quantile``,
``nanquantile``, ``moving_median``, ``moving_quantile`` (see
:mod:`axisops.grad.order` and :mod:`axisops.grad.moving_order`), deterministic
without atomics, the CPU path's bits:

* ``grad.sort``, ``grad.partition``: the device forward's positions (the stable
  ``argsort``/``argpartition``), then ``g`` (converted to the result dtype) put
  at them, a thread per element (``put_lanes``: distinct positions per lane).
* ``grad.top_k``, ``grad.kthvalue``: ``g`` added at the given indices, a thread
  per lane in index order (``add_lanes``, ``np.add.at``'s order); an index out
  of range sets a flag, and the NumPy path raises its error from host copies.
* ``grad.median`` and the quantiles: the places and weights of
  ``axisops.order.chosen_elements`` computed on the host, the elements at those
  places selected on the device (a lane's first NaN is the one at place
  ``n - nans``), then ``g`` (the reduced result, brought to the host) times the
  weights in the result dtype, as the CPU computes them, added on the device at
  the positions in the CPU's order (``add_lanes``).
* ``grad.moving_median``, ``grad.moving_quantile``: the device forward's picks,
  then a thread per input element adds, from +0.0 in float64, the shares of the
  live outputs whose picks it is, in output order, lower picks first
  (``moving_pick_grad``), rounded once.

The checks are the NumPy path's, in its order, on stand-ins of the shapes and
dtypes. ``g`` and ``x`` may each be a CUDA array or a host array (uploaded to
the other's device).
"""
from __future__ import annotations

import math

import numpy as np

from .. import moving_order as _np_moving_order
from .. import order as _np_order
from .._axes import normalize_axis
from ..grad import order as _grad_order
from ..grad._common import _shape
from . import _device as D
from . import moving as _moving_module
from . import order as _order
from . import order_kernels as OK
from .moving_grad import _arrays
from .moving_order import checked as _moving_checked
from .moving_order import picks as _moving_picks
from .reduce import _result

NUMPY_MODULE = "axisops.grad"

__all__ = ["sort", "top_k", "kthvalue", "partition", "median", "nanmedian", "quantile",
           "nanquantile", "moving_median", "moving_quantile"]


def sort(g, x, axis=-1, *, descending=False):
    """:func:`axisops.grad.sort` on the device."""
    gd, xd = _arrays(g, x)
    a = _order._one_axis(xd, axis, "argsort", dates=True)
    descending = _np_order._flag(descending, "descending", "argsort")
    return _permuted("grad.sort", gd, xd, a,
                     lambda L: _order._sort_pairs(L, descending)[1])


def partition(g, x, kth, axis=-1):
    """:func:`axisops.grad.partition` on the device."""
    gd, xd = _arrays(g, x)
    a = _order._one_axis(xd, axis, "argpartition", dates=True)
    places = _np_order._places(kth, _order._length(xd, a), "argpartition")

    def positions(L):
        pos = gd.scratch((L.lanes * L.n,), np.int64)
        _order.partition_positions(L, places, None, pos)
        return pos

    return _permuted("grad.partition", gd, xd, a, positions)


def _permuted(op: str, gd, xd, a, positions):
    """*g* sent back through the lane permutation ``positions(lanes)`` of a sort or
    partition of *x* along *a* (its arguments already checked)."""
    _grad_order._check_g(D.zeros_stand_in(gd.shape, gd.dtype), _out_shape(xd, a), op)
    dtype = _grad_order._float_dtype(D.zeros_stand_in((), gd.dtype), xd.dtype, op)
    result, flat = _result(gd, xd.shape, dtype)
    if xd.size == 0:
        return result
    pos = positions(_order._lanes(xd, _order._axes(xd, a)))
    return _put(gd, xd, a, pos, dtype, result, flat)


def top_k(g, indices, x_shape, axis=-1):
    """:func:`axisops.grad.top_k` on the device."""
    return _at_indices("grad.top_k", g, indices, x_shape, axis, keepdims=True)


def kthvalue(g, indices, x_shape, axis=-1, keepdims=False):
    """:func:`axisops.grad.kthvalue` on the device."""
    return _at_indices("grad.kthvalue", g, indices, x_shape, axis, keepdims=keepdims)


def median(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.median` on the device."""
    return _split("grad.median", g, x, None, axis, "linear", keepdims, skip_nan=False)


def nanmedian(g, x, axis=None, keepdims=False):
    """:func:`axisops.grad.nanmedian` on the device."""
    return _split("grad.nanmedian", g, x, None, axis, "linear", keepdims, skip_nan=True)


def quantile(g, x, q, axis=None, *, method="linear", keepdims=False):
    """:func:`axisops.grad.quantile` on the device."""
    return _split("grad.quantile", g, x, q, axis, method, keepdims, skip_nan=False)


def nanquantile(g, x, q, axis=None, *, method="linear", keepdims=False):
    """:func:`axisops.grad.nanquantile` on the device."""
    return _split("grad.nanquantile", g, x, q, axis, method, keepdims, skip_nan=True)


def moving_median(g, x, window, axis=-1, *, min_count=None):
    """:func:`axisops.grad.moving_median` on the device: the CPU's bits."""
    return _moving("grad.moving_median", g, x, window, axis, min_count, None)


def moving_quantile(g, x, window, q, axis=-1, *, min_count=None):
    """:func:`axisops.grad.moving_quantile` on the device: the CPU's bits."""
    q = _np_moving_order.check_quantile(q, "grad.moving_quantile")
    return _moving("grad.moving_quantile", g, x, window, axis, min_count, q)


# ------------------------------------------------------------------------ helpers


def _out_shape(d: D.DeviceArray, a) -> tuple:
    return (d.size,) if a is None else d.shape


def _lanes_of(gd: D.DeviceArray, axes, dtype):
    """(flat, offset): *gd*'s lanes along *axes* in C order, converted to *dtype*."""
    base, off, _, _ = _order.lane_copy(gd, axes, dtype)
    return base, off


def _put(gd, xd, a, pos, dtype, result, flat):
    """``g`` put at the sorted lanes' positions ``pos``, then in x's layout."""
    axes = _order._axes(xd, a)
    g_base, g_off = _lanes_of(gd, tuple(range(gd.ndim)) if a is None else axes, dtype)
    if g_off:
        g_base = g_base[g_off:]
    n = _order._length(xd, a)
    lanes = xd.size // n
    target = flat if a is None or a == xd.ndim - 1 or lanes == 1 else gd.scratch(
        (xd.size,), dtype)
    D.launch(OK.put_lanes, gd, xd.size, g_base[:xd.size], pos, n, target)
    if target is not flat:
        _from_lanes(gd, target, xd.shape, axes, flat)
    return result


def _from_lanes(d: D.DeviceArray, src, shape, axes, out) -> None:
    """``out`` (flat, C order of *shape*) from lanes along *axes* (flat (lanes, n))."""
    kept = [i for i in range(len(shape)) if i not in axes]
    _order.unpermute(d, src, tuple(shape), kept + list(axes), out)


def _at_indices(op: str, g, indices, x_shape, axis, keepdims: bool):
    gd, idd = _arrays(g, indices)
    x_shape = _shape(x_shape)
    if idd.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got {idd.dtype}")
    if gd.shape != idd.shape:
        raise ValueError(f"{op}: g has shape {gd.shape} and indices {idd.shape}: expected "
                         "the same")
    work_shape = (int(np.prod(x_shape, dtype=np.int64)),) if axis is None else x_shape
    a = 0 if axis is None else normalize_axis(axis, len(x_shape), op)
    n = work_shape[a]
    shape = idd.shape
    if axis is None:
        shape = (math.prod(shape),)
    elif not keepdims:
        shape = shape[:a] + (1,) + shape[a:]
    expected = work_shape[:a] + (shape[a],) + work_shape[a + 1:]
    if len(shape) != len(work_shape) or shape != expected or shape[a] > n:
        raise ValueError(f"{op}: indices of shape {shape} do not fit x_shape {x_shape} "
                         f"along axis {axis}")
    dtype = _grad_order._float_dtype(D.zeros_stand_in((), gd.dtype), None, op)
    result, flat = _result(gd, x_shape, dtype)
    if flat.size == 0:
        return result
    k = shape[a]
    lanes = flat.size // n
    # the lanes of g as given: the axis itself, or none (kthvalue without keepdims: a
    # lane of one), or all of them (axis None: the flattened lane)
    own = tuple(range(gd.ndim)) if axis is None else (a,) if keepdims else ()
    g_base, g_off = _lanes_of(gd, own, dtype)
    i_base, i_off = _lanes_of(idd, own, np.int64)
    direct = a == len(work_shape) - 1 or lanes == 1
    target = flat if direct else gd.scratch((flat.size,), dtype)
    bad = D.flag(gd)
    D.launch(OK.add_lanes, gd, lanes, g_base[g_off:g_off + lanes * k] if k else g_base,
             i_base[i_off:i_off + lanes * k] if k else i_base, k, n, bad, target)
    if D.is_set(bad, gd, release=True):  # the NumPy path's IndexError, from host copies
        _grad_order._at_indices(op, _order._host(gd), _order._host(idd), x_shape, axis,
                                keepdims)
    if not direct:
        _from_lanes(gd, target, work_shape, (a,), flat)
    return result


def _split(op: str, g, x, q, axis, method, keepdims, skip_nan: bool):
    """``axisops.grad.order._split`` with the selection on the device."""
    gd, xd = _arrays(g, x)
    keepdims = bool(keepdims)
    median = q is None
    q = _np_order.check_quantile(op, xd.dtype, 0.5 if median else q, method)
    axes, kept_shape, keep_shape = _order.reduced(xd, axis, op)
    _grad_order._check_g(D.zeros_stand_in(gd.shape, gd.dtype),
                         q.shape + (keep_shape if keepdims else kept_shape), op)
    dtype = _grad_order._float_dtype(D.zeros_stand_in((), gd.dtype), xd.dtype, op)
    result, flat = _result(gd, xd.shape, dtype)
    n = math.prod(xd.shape[i] for i in axes)
    lanes = xd.size // n if n else 0
    qf = np.asarray(q, np.float64).reshape(-1) if median else q.reshape(-1)
    if flat.size == 0 or qf.size == 0 or lanes == 0:
        if flat.size:
            flat.copy_to_device(np.zeros(flat.size, dtype), stream=gd.stream)
        return result
    L = _order._lanes(xd, axes)
    if skip_nan and xd.dtype.kind == "f":
        counts = n - _order.nan_counts(L)
    else:
        counts = np.full(lanes, n)
    places, share = _np_order.chosen_places(counts, qf, method)
    floating = xd.dtype.kind == "f"
    if floating and not skip_nan:  # and each lane's first NaN: place n - nans
        nans = _order.nan_counts(L)
        first = np.minimum(n - nans, n - 1)[:, None]
        places = np.concatenate([np.broadcast_to(places, (lanes, places.shape[1])), first], 1)
    _, positions, nans = _order.select_host(L, places, xd.dtype)
    weights, bad = _np_order.chosen_weights(share, counts, nans, skip_nan, floating)
    if bad is not None:
        first_nan = positions[:, -1]
        positions = positions[:, :-1].copy()
        if bad.any():
            positions[bad] = first_nan[bad, None]
    Q = positions.shape[1] // 2
    g2 = _order._host(gd).astype(dtype).reshape((Q, lanes)).T
    w = weights.astype(dtype)
    shares = np.empty((lanes, 2 * Q), dtype)
    for col in range(2 * Q):
        shares[:, col] = g2[:, col % Q] * w[:, col]
    direct = lanes == 1 or list(axes) == list(range(xd.ndim - len(axes), xd.ndim))
    target = flat if direct else gd.scratch((flat.size,), dtype)
    bad_flag = D.flag(gd)
    D.launch(OK.add_lanes, gd, lanes, D.upload(gd, shares.reshape(-1)).array,
             D.upload(gd, np.ascontiguousarray(positions, np.int64).reshape(-1)).array,
             2 * Q, n, bad_flag, target)
    if not direct:
        _from_lanes(gd, target, xd.shape, axes, flat)
    return result


def _moving(op: str, g, x, window, axis, min_count, q):
    gd, xd = _arrays(g, x)
    window, min_count, axis = _moving_checked(op, xd, window, axis, min_count)
    if gd.shape != xd.shape:
        raise ValueError(f"{op}: g has shape {gd.shape}, expected the forward's output shape "
                         f"{xd.shape}")
    if gd.dtype.kind not in "biuf":
        raise TypeError(f"{op}: unsupported dtype {gd.dtype} for g")
    dtype = xd.dtype if xd.dtype.kind == "f" else np.dtype(np.float64)
    result, out = _result(gd, xd.shape, dtype)
    if xd.size == 0:
        return result
    values, a, b, w = _moving_picks(xd, window, axis, min_count, q is None,
                                    0.5 if q is None else q)
    _, geo = _moving_module.geometry(xd, axis)
    g64 = D.converted(gd, D.operand(gd), gd.shape, np.float64, c_order=True)
    g_flat = g64.base[g64.offset:g64.offset + xd.size] if g64.offset else g64.base
    D.launch(OK.moving_pick_grad, gd, xd.size, geo, window, g_flat, values, a, b, w, out)
    return result

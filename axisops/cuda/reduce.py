"""Reductions and arg-reductions of CUDA arrays (see :mod:`axisops.cuda`).

The checks, result dtypes and errors are the NumPy path's (the same helpers); the
plan — the view's geometry on the device, the loop order, the chunking, the
launch shapes — depends only on the shape, strides, dtype and options, and is
made once per (plan, device). Results are arrays of the input's type on its
device, 0-d where the NumPy path gives a scalar.
"""
from __future__ import annotations

import builtins
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _dtypes
from .._axes import normalize_axes, reduced_shape
from .._layout import c_strides, reduction_view
from .._plan import PlanCache
from . import _device as D
from . import kernels as K

__all__ = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "unravel"]


def sum(x, axis=None, *, keepdims=False, dtype=None):
    """:func:`axisops.sum` on the device."""
    return _value("sum", x, axis, keepdims, dtype)


def prod(x, axis=None, *, keepdims=False, dtype=None):
    """:func:`axisops.prod` on the device: float products in index order."""
    return _value("prod", x, axis, keepdims, dtype)


def mean(x, axis=None, *, keepdims=False, dtype=None):
    """:func:`axisops.mean` on the device: the sum divided once by the count."""
    return _value("mean", x, axis, keepdims, dtype)


def max(x, axis=None, *, keepdims=False):
    """:func:`axisops.max` on the device (NaN propagates; the CPU path's bits)."""
    return _extreme("max", x, axis, keepdims, False, None)


def min(x, axis=None, *, keepdims=False):
    """:func:`axisops.min` on the device."""
    return _extreme("min", x, axis, keepdims, False, None)


def argmax(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64):
    """:func:`axisops.argmax` on the device."""
    return _extreme("argmax", x, axis, keepdims, select_last_index, index_dtype)


def argmin(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64):
    """:func:`axisops.argmin` on the device."""
    return _extreme("argmin", x, axis, keepdims, select_last_index, index_dtype)


# ----------------------------------------------------------------------- planning

#: Threads a launch should have before a long reduced axis is cut into chunks,
#: and the fewest elements a chunk may have (small under the simulator, so that
#: its small tests take every path).
def _target_threads() -> int:
    return 64 if D.simulated() else 1 << 17


def _min_chunk() -> int:
    return 4 if D.simulated() else 2048


@dataclass
class _Plan:
    rows: bool            # the loop order (see kernels)
    outputs: int
    chunks: int
    chunk_len: int
    block: int
    geo: Any              # device geometry of the view
    out_geo: Any          # device geometry of the outputs' places in the result
    #: one chunk, and the outputs in the view's order are the result's C order:
    #: the reducing kernel can write the result itself, without a finishing launch
    direct: bool = False


_PLANS: dict[tuple, _Plan] = {}


def _plan(d: D.DeviceArray, axes: tuple[int, ...], keepdims: bool, keep_order: bool,
          ordered: bool) -> _Plan:
    key = (d.shape, d.strides, d.dtype.str, axes, keepdims, keep_order, ordered,
           D.current_device())
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _make_plan(d, axes, keepdims, keep_order, ordered)
    return plan


def _make_plan(d, axes, keepdims, keep_order, ordered) -> _Plan:
    view = reduction_view(d.stand_in(), axes, keep_order=keep_order)
    outputs = view.outer * view.inner
    total = view.reduced_count
    block = D.threads_per_block()
    # rows: outputs adjacent in memory, or reductions too short for a block each,
    # or a float product (one thread per output keeps index order)
    rows = ordered or view.row_order or total < 2 * block
    if ordered:
        chunks = 1
    elif rows:
        busy = D.grid(outputs, block) * block
        chunks = builtins.max(1, builtins.min(-(-_target_threads() // busy),
                                              total // _min_chunk()))
    else:
        chunks = builtins.max(1, builtins.min(-(-_target_threads() // (outputs * block)),
                                              total // (_min_chunk() * block)))
    chunk_len = builtins.max(1, -(-total // chunks))
    chunks = builtins.max(1, -(-total // chunk_len))
    geo = [view.offset, view.inner, view.inner_stride, view.n, view.n_stride,
           view.outer_shape.size, view.red_shape.size, *D.divisor(view.inner),
           *D.divisor(view.n), *D.dims(view.outer_shape.tolist(), view.outer_strides.tolist()),
           *D.dims(view.red_shape.tolist(), view.red_strides.tolist())]
    assert len(geo) == K.RED_DIMS + 4 * (view.outer_shape.size + view.red_shape.size)
    out_shape = reduced_shape(d.shape, axes, keepdims)
    out_strides = c_strides(out_shape)
    kept_axes = [k for k in range(d.ndim) if k not in axes]
    place = {k: (k if keepdims else kept_axes.index(k)) for k in kept_axes}
    order = view.kept_order
    out_geo = [len(order), *D.dims([d.shape[k] for k in order],
                                   [out_strides[place[k]] for k in order])]
    return _Plan(rows, outputs, chunks, chunk_len, block, D.to_device_constants(geo),
                 D.to_device_constants(out_geo), chunks == 1 and list(order) == sorted(order))


# ------------------------------------------------------------------- the reductions


#: The value reductions' kernel op codes (the nan ones skip NaN in the same pass).
_CODES = {"sum": K.OP_SUM, "mean": K.OP_SUM, "prod": K.OP_PROD, "nansum": K.OP_NANSUM,
          "nanprod": K.OP_NANPROD}


def _value(op: str, x, axis, keepdims: bool, dtype):
    return value_of(op, D.device_array(x), axis, keepdims, dtype)


def value_of(op: str, d: D.DeviceArray, axis, keepdims: bool, dtype):
    """sum, prod, mean, nansum or nanprod of *d* (results of *d*'s kind): the value
    kernels, a NaN read as the identity by the nan ones (integers and bool, which
    have no NaN, run the plain twin's code)."""
    key = _call_key(op, d, axis, keepdims, dtype)
    vp = _VALUE_PLANS.get(key)
    if vp is None:
        vp = _VALUE_PLANS.put(key, _value_plan(op, d, axis, keepdims, dtype))
    if vp.plan is None:  # an empty reduction, or NaN to fill before an integer sum
        return _value_unplanned(op, d, vp, keepdims)
    plan = vp.plan
    base, _ = D.flat_base(D.bool_as_bytes(d))
    if vp.direct:  # one launch: the reducing kernel writes the result
        result, flat = _result(d, vp.out_shape, vp.res)
        _launch(plan, K.value_rows, K.value_lanes, d.stream,
                base, plan.geo, plan.chunk_len, vp.code, vp.zero, vp.ident,
                flat.reshape(1, plan.outputs))
        return result
    partial = d.scratch((plan.chunks, plan.outputs), vp.acc)
    _launch(plan, K.value_rows, K.value_lanes, d.stream,
            base, plan.geo, plan.chunk_len, vp.code, vp.zero, vp.ident, partial)
    result, flat = _result(d, vp.out_shape, vp.res)
    K.value_finish[vp.finish_grid, plan.block, d.stream](
        partial, vp.code, vp.divide_in, vp.mean, plan.out_geo, flat)
    return result


@dataclass(frozen=True)
class _ValuePlan:
    """What a value reduction derives from the input's description and its options
    (the kernels' plan None where it does not run them as they are)."""

    res: np.dtype
    acc: np.dtype
    axes: tuple[int, ...]
    out_shape: tuple[int, ...]
    count: int
    code: int
    plan: _Plan | None = None
    zero: Any = None
    ident: Any = None
    divide_in: Any = None
    mean: bool = False
    finish_grid: int = 1
    direct: bool = False  # the plan's direct, the result in the accumulator's dtype, no mean


#: Value reductions' plans by (operator, shape, strides, dtype, axis, keepdims,
#: dtype=, device): a warm call re-derives nothing (``axisops._plan``).
_VALUE_PLANS = PlanCache()


def _call_key(op: str, d: D.DeviceArray, axis, keepdims, dtype, *rest) -> tuple | None:
    """The plan key of a reduction's call, or None where an option is not a plain
    value (checked every time, as the NumPy path's plans do)."""
    if not (axis is None or type(axis) is int or (type(axis) is tuple
                                                  and all(type(a) is int for a in axis))):
        return None
    if type(keepdims) is not bool or not (dtype is None or isinstance(dtype, (np.dtype, type))):
        return None
    return D.call_key(op, d, axis, keepdims, dtype, *rest)


def _value_plan(op: str, d: D.DeviceArray, axis, keepdims: bool, dtype) -> _ValuePlan:
    axes = normalize_axes(axis, d.ndim, op)
    res, acc = _dtypes.value_dtypes(op, d.dtype, dtype)
    out_shape = reduced_shape(d.shape, axes, keepdims)
    count = math.prod(d.shape[k] for k in axes)
    code = _CODES[op] if d.dtype.kind in "fc" else _CODES[op.removeprefix("nan")]
    if (op in ("nansum", "nanprod") and d.dtype.kind == "f" and acc.kind in "iu") \
            or count == 0 or d.size == 0:
        return _ValuePlan(res, acc, axes, out_shape, count, code)
    product = code in (K.OP_PROD, K.OP_NANPROD)
    ordered = product and acc.kind in "fc"
    plan = _plan(d, axes, keepdims, False, ordered)
    zero = acc.type(0)
    return _ValuePlan(res, acc, axes, out_shape, count, code, plan, zero,
                      acc.type(1) if product else zero,
                      acc.type(count) if op == "mean" else zero,  # complex: count + 0j
                      op == "mean", D.grid(plan.outputs, plan.block),
                      plan.direct and res == acc and op != "mean")


def _value_unplanned(op: str, d: D.DeviceArray, vp: _ValuePlan, keepdims: bool):
    """The value reductions the plan does not run: NaN filled before an integer sum
    (an integer copy, reduced as the plain twin), or nothing to reduce."""
    product = vp.code in (K.OP_PROD, K.OP_NANPROD)
    if vp.count == 0 or d.size == 0:
        return _filled(d, vp.out_shape, vp.res, "prod" if product else op, vp.count)
    filled = nan_filled(d, vp.acc, int(op == "nanprod"))  # NaN has no integer value
    plan = _plan(filled, vp.axes, keepdims, False, False)  # integers: in any order
    code = _CODES[op.removeprefix("nan")]
    zero = vp.acc.type(0)
    base, _ = D.flat_base(filled)
    partial = d.scratch((plan.chunks, plan.outputs), vp.acc)
    _launch(plan, K.value_rows, K.value_lanes, d.stream,
            base, plan.geo, plan.chunk_len, code, zero, vp.acc.type(1) if product else zero,
            partial)
    result, flat = _result(d, vp.out_shape, vp.res)
    K.value_finish[D.grid(plan.outputs, plan.block), plan.block, d.stream](
        partial, code, zero, False, plan.out_geo, flat)
    return result


def nan_filled(d: D.DeviceArray, dtype, fill: int) -> D.DeviceArray:
    """*d* converted to an integer *dtype* (a C-ordered copy), each NaN read as *fill*
    first, as the NumPy path replaces it before an integer ``dtype=``."""
    from . import missing_kernels as MK

    src = D.operand(d)
    out = d.scratch((builtins.max(d.size, 1),), dtype)
    if d.size:
        geo = [src.offset, d.ndim, *D.dims(d.shape, src.strides)]
        D.launch(MK.nan_to_fill, d, d.size, src.base, D.to_device_constants(geo), fill, out)
    array = out[:d.size].reshape(d.shape) if d.ndim != 1 else out[:d.size]
    return D.DeviceArray(array, d.shape, tuple(int(s) for s in array.strides), np.dtype(dtype),
                         d.kind, d.owner, d.stream)


def _extreme(op: str, x, axis, keepdims: bool, select_last: bool, index_dtype,
             skip: bool = False, all_nan_index=None):
    """max/min/argmax/argmin, or with *skip* their nan twins (named ``"nan" + op``
    in the all-NaN error) with NaN as no candidate: an all-NaN output is NaN with
    NumPy's RuntimeWarning, or ``all_nan_index``, or the NumPy path's ValueError."""
    d = D.device_array(x)
    key = None
    if type(select_last) is bool and (index_dtype is None or isinstance(index_dtype,
                                                                        (np.dtype, type))) \
            and (all_nan_index is None or type(all_nan_index) is int):
        key = _call_key(op, d, axis, keepdims, None, select_last, index_dtype, bool(skip),
                        all_nan_index)
    ep = _EXTREME_PLANS.get(key)
    if ep is None:
        ep = _EXTREME_PLANS.put(key, _extreme_plan(op, d, axis, keepdims, select_last,
                                                   index_dtype, skip, all_nan_index))
    if ep.plan is None:  # an empty array: an empty result
        return _result(d, ep.out_shape, ep.res)[0]
    plan = ep.plan
    seen = D.bool_as_bytes(d)
    base, _ = D.flat_base(seen)
    if ep.direct is not None:  # one launch: the reducing kernel writes the result
        result, flat = _result(d, ep.out_shape, ep.res)
        out = (flat.view(np.uint8) if ep.res == np.bool_ else flat).reshape(1, plan.outputs)
        indices = ep.direct == "indices"
        part_v = d.scratch((1, plan.outputs), seen.dtype) if indices else out
        part_i = out if indices else d.scratch((1, plan.outputs), np.int64)
        _launch(plan, K.extreme_rows, K.extreme_lanes, d.stream,
                base, plan.geo, plan.chunk_len, ep.greater, ep.last, ep.skip, part_v, part_i)
        return result
    part_v = d.scratch((plan.chunks, plan.outputs), seen.dtype)
    part_i = d.scratch((plan.chunks, plan.outputs), np.int64)
    _launch(plan, K.extreme_rows, K.extreme_lanes, d.stream,
            base, plan.geo, plan.chunk_len, ep.greater, ep.last, ep.skip, part_v, part_i)
    result, flat = _result(d, ep.out_shape, ep.res)
    out = flat.view(np.uint8) if ep.res == np.bool_ else flat  # bool max/min: the bytes
    # without skip every output has a candidate: the flag is never written, and a
    # cached constant stands in for it (no upload per call)
    bad = D.flag(d, _NO_POSITION) if ep.skip else ep.no_flag
    K.extreme_finish[ep.finish_grid, plan.block, d.stream](
        part_v, part_i, ep.greater, ep.last, ep.skip, ep.want_index, ep.nan, ep.missing,
        plan.out_geo, bad, out)
    if ep.skip:
        first = D.flag_value(bad, d, _NO_POSITION, release=True)  # waits for the kernels
        if first != _NO_POSITION:
            if ep.want_index and all_nan_index is None:
                where = tuple(int(i) for i in np.unravel_index(first, ep.out_shape))
                raise ValueError(f"nan{op}: All-NaN slice encountered (at output position "
                                 f"{where}); pass all_nan_index=-1 (or another int) to get "
                                 "that index instead")
            if not ep.want_index:
                warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
    return result


@dataclass(frozen=True)
class _ExtremePlan:
    """What max/min/argmax/argmin (and their nan twins) derive from the input's
    description and their options (the kernels' plan None for an empty array)."""

    out_shape: tuple[int, ...]
    res: np.dtype
    want_index: bool
    plan: _Plan | None = None
    greater: bool = False
    last: bool = False
    skip: bool = False
    nan: Any = None
    missing: int = 0
    finish_grid: int = 1
    no_flag: Any = None
    #: the reducing kernel writes the result itself (see _Plan.direct): the indices
    #: (int64, no NaN to skip) or the values (integers and bool: no NaN or -0.0 for
    #: the finish to normalise); None where a finishing launch is needed
    direct: str | None = None


#: Extreme reductions' plans by (operator, shape, strides, dtype, axis, keepdims,
#: select_last_index, index_dtype, skip, all_nan_index, device).
_EXTREME_PLANS = PlanCache()


def _extreme_plan(op: str, d: D.DeviceArray, axis, keepdims: bool, select_last, index_dtype,
                  skip, all_nan_index) -> _ExtremePlan:
    """The checks of :func:`_extreme` (the NumPy path's, in its order) and its plan."""
    axes = normalize_axes(axis, d.ndim, op)
    if not skip:
        _dtypes.check_dtype(d.dtype, op)
    want_index = op in ("argmax", "argmin")
    if want_index:
        index_dtype = _dtypes.check_index_dtype(index_dtype, op)
        if skip:
            _dtypes.check_all_nan_index(all_nan_index, "nan" + op, index_dtype)
    out_shape = reduced_shape(d.shape, axes, keepdims)
    count = math.prod(d.shape[k] for k in axes)
    if count == 0:
        if want_index:
            raise ValueError(f"{op}: attempt to get {op} of an empty sequence")
        name = "maximum" if op == "max" else "minimum"
        raise ValueError(f"{op}: zero-size array to reduction operation {name} which has no "
                         "identity")
    if want_index:
        _dtypes.check_index_fits(count, index_dtype, op)
    res = np.dtype(index_dtype) if want_index else d.dtype
    if d.size == 0:
        return _ExtremePlan(out_shape, res, want_index)
    plan = _plan(d, axes, keepdims, want_index, False)
    seen = D.bool_as_bytes(d).dtype
    skip = bool(skip) and d.dtype.kind == "f"
    direct = None
    if plan.direct and not skip:
        if want_index and res == np.int64:
            direct = "indices"
        elif not want_index and seen.kind in "iu":
            direct = "values"
    return _ExtremePlan(out_shape, res, want_index, plan, op in ("max", "argmax"),
                        bool(select_last), skip,
                        seen.type(np.nan) if seen.kind == "f" else seen.type(0),
                        0 if all_nan_index is None else int(all_nan_index),
                        D.grid(plan.outputs, plan.block), D.to_device_constants([_NO_POSITION]),
                        direct)


#: The all-NaN flag's value while no output is all NaN (``atomic.min`` lowers it).
_NO_POSITION = np.iinfo(np.int64).max


# ------------------------------------------------------------------------ helpers


def _launch(plan: _Plan, rows_kernel, lanes_kernel, stream, *args) -> None:
    """The plan's loop order: a thread per output (blocks of outputs) or a block per
    output, times its chunks (grid y)."""
    if plan.rows:
        rows_kernel[(D.grid(plan.outputs, plan.block), plan.chunks), plan.block, stream](*args)
    else:
        lanes_kernel[(plan.outputs, plan.chunks), plan.block, stream](*args)


def _result(d: D.DeviceArray, shape, dtype) -> tuple[Any, Any]:
    """(result of the input's type, a flat Numba view of it)."""
    result, array = d.empty(shape, dtype)
    size = math.prod(shape)
    return result, array.reshape(size) if array.ndim != 1 else array


def _filled(d: D.DeviceArray, shape, dtype: np.dtype, op: str, count: int):
    """The result of a reduction over no elements (or of an empty array): 0, 1, or
    NaN for a mean over nothing (with NumPy's warning), copied to the device."""
    if op == "mean" and count == 0:
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=3)
        host = np.full(shape, complex(np.nan, np.nan) if dtype.kind == "c" else np.nan, dtype)
    else:
        host = np.full(shape, 1 if op == "prod" else 0, dtype)
    result, flat = _result(d, shape, dtype)
    if host.size:
        flat.copy_to_device(host.reshape(-1), stream=d.stream)
    return result


def unravel(idx, shape, axis):
    """:func:`axisops.unravel` on the device: a thread per index writes its
    coordinates in the reduced block; one int64 array of ``idx``'s shape (a 0-d
    array for a 0-d ``idx``) per reduced axis. An index out of range sets a flag,
    and the NumPy path raises its error from a host copy."""
    from .. import reduce as _np_reduce
    from .._dispatch import numpy_function

    d = D.device_array(idx)
    block = _np_reduce._unravel_block(shape, axis, d.dtype)
    if not block:
        return ()
    c = D.in_c_order(d)
    flat = c.array.reshape(c.size) if c.array.ndim != 1 else c.array
    coords = d.scratch((len(block), d.size), np.int64)
    bad = D.flag(d)
    if d.size:
        geo = [len(block), *D.dims(block, [1] * len(block))]
        D.launch(K.unravel_c, d, d.size, flat, D.to_device_constants(geo), math.prod(block), bad,
                 coords)
        if D.is_set(bad, d, release=True):
            numpy_function(_np_reduce.unravel)(D.to_host(c.array, d), shape, axis)
    out = []
    for row in range(len(block)):
        result, target = _result(d, d.shape, np.int64)
        if d.size:
            target.copy_to_device(coords[row], stream=d.stream)
        out.append(result)
    return tuple(out)

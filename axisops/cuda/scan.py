"""Scans of CUDA arrays (see :mod:`axisops.cuda`): the NumPy path's checks, dtypes
and results; a thread per lane, and a long axis with few lanes cut into tiles
(tile totals, a scan of them per lane, each tile from its carry-in)."""
from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _dtypes
from .._axes import normalize_axis
from .._layout import scan_view
from .._plan import PlanCache
from ..scan import ValuesIndices
from . import _device as D
from . import kernels as K
from .reduce import _result, nan_filled

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]


def cumsum(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """:func:`axisops.cumsum` on the device."""
    return _values("cumsum", x, axis, dtype, exclusive, reverse)


def cumprod(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """:func:`axisops.cumprod` on the device: float products in index order."""
    return _values("cumprod", x, axis, dtype, exclusive, reverse)


def logcumsumexp(x, axis=None):
    """:func:`axisops.logcumsumexp` on the device: float64 accumulation, each output
    rounded once as on the CPU (float16 through float32)."""
    return _values("logcumsumexp", x, axis, None, False, False)


def cummax(x, axis=None, *, index_dtype=np.int64):
    """:func:`axisops.cummax` on the device: ``(values, indices)``, PyTorch's rule."""
    return _extreme("cummax", x, axis, index_dtype, True)


def cummin(x, axis=None, *, index_dtype=np.int64):
    """:func:`axisops.cummin` on the device."""
    return _extreme("cummin", x, axis, index_dtype, False)


# ----------------------------------------------------------------------- planning


def _target_threads() -> int:
    return 64 if D.simulated() else 1 << 17


def _min_tile() -> int:
    return 3 if D.simulated() else 512


@dataclass
class _Plan:
    lanes: int
    tiles: int
    tile_len: int
    block: int
    geo: Any
    blocked: bool  # a block per (lane, tile): the axis is contiguous and long


_PLANS: dict[tuple, _Plan] = {}


def _plan(d: D.DeviceArray, axis: int, ordered: bool, may_block: bool) -> _Plan:
    key = (d.shape, d.strides, d.dtype.str, axis, ordered, may_block, D.current_device())
    plan = _PLANS.get(key)
    if plan is None:
        view = scan_view(d.stand_in(), axis)
        lanes = view.outer * view.mid * view.inner
        block = D.threads_per_block()
        # A thread per lane reads its own run when the axis is the contiguous one, so
        # neighbouring threads are a row apart: a block per row reads it coalesced.
        blocked = (may_block and not ordered and view.inner == 1 and view.n_stride == 1
                   and view.n >= 2 * block)
        per_tile = block if blocked else 1  # threads working on one tile
        tiles = 1
        if not ordered and lanes * per_tile < _target_threads():
            tiles = builtins.max(1, builtins.min(-(-_target_threads() // (lanes * per_tile)),
                                                 view.n // (_min_tile() * per_tile)))
        tile_len = builtins.max(1, -(-view.n // tiles))
        tiles = builtins.max(1, -(-view.n // tile_len))
        geo = [view.offset, view.inner, view.inner_stride, view.n, view.n_stride,
               view.outer_shape.size, view.mid_shape.size, *D.divisor(view.inner),
               *D.divisor(view.mid), *D.divisor(lanes),
               *D.dims(view.outer_shape.tolist(), view.outer_strides.tolist()),
               *D.dims(view.mid_shape.tolist(), view.mid_strides.tolist())]
        plan = _PLANS[key] = _Plan(lanes, tiles, tile_len, block,
                                   D.to_device_constants(geo), blocked)
    return plan


def _prepared(op: str, x, axis) -> tuple[D.DeviceArray, int, tuple[int, ...]]:
    """(input, axis, result shape): ``axis=None`` scans the C-ordered flattening
    (a copy on the device unless the input is C-contiguous)."""
    d = D.device_array(x)
    if axis is None:
        shape = d.shape if d.ndim == 0 else (d.size,)
        return _flattened(d), 0, shape
    return d, normalize_axis(axis, d.ndim, op), d.shape


def _flattened(d: D.DeviceArray) -> D.DeviceArray:
    c = D.in_c_order(d)
    flat = c.array.reshape(c.size) if c.ndim != 1 else c.array
    return D.DeviceArray(flat, (d.size,), (d.dtype.itemsize,), d.dtype, d.kind, d.owner,
                         d.stream)


# ------------------------------------------------------------------------- scans


def _values(op: str, x, axis, dtype, exclusive: bool, reverse: bool):
    key = None
    if type(axis) is int and type(exclusive) is bool and type(reverse) is bool \
            and (dtype is None or isinstance(dtype, (np.dtype, type))):
        d = D.device_array(x)
        key = D.call_key(op, d, axis, dtype, exclusive, reverse)
        vp = _VALUE_PLANS.get(key)
        if vp is not None:
            return _scanned(d, vp)
    return _values_planned(op, x, axis, dtype, exclusive, reverse, key)


@dataclass(frozen=True)
class _ValuesPlan:
    """A value scan as :func:`_values_planned` worked it out for one description of
    a call (kept only for the plain path: no bool result, no NaN filled first)."""

    res: np.dtype
    acc: np.dtype
    plan: _Plan
    kernel: Any
    code: int
    exclusive: bool
    reverse: bool
    zero: Any
    ident: Any
    via_float32: bool  # logcumsumexp of float16: rounded through float32


#: Value scans' plans by (operator, shape, strides, dtype, axis, dtype=, exclusive,
#: reverse, device): a warm call re-derives nothing.
_VALUE_PLANS = PlanCache()


def _values_planned(op: str, x, axis, dtype, exclusive: bool, reverse: bool, key):
    d, axis, shape = _prepared(op, x, axis)
    if op == "logcumsumexp":
        _dtypes.check_dtype(d.dtype, op)
        res = d.dtype if d.dtype.kind == "f" else np.dtype(np.float64)
        acc = np.dtype(np.float64)
    else:
        res, acc = _dtypes.value_dtypes(op, d.dtype, dtype)
        if res == np.bool_:
            return _logical(op, d, axis, shape, exclusive, reverse)
        if op.startswith("nan") and d.dtype.kind == "f" and acc.kind in "iu":
            d = nan_filled(d, acc, int(op == "nancumprod"))  # NaN has no integer value
            key = None  # the filled copy is scanned: nothing to keep for x
        if d.dtype.kind not in "fc":  # no NaN to skip: the plain twin's code
            op = op.removeprefix("nan")
    if d.size == 0:
        return _result(d, shape, res)[0]
    product = op in ("cumprod", "nancumprod")
    ordered = product and acc.kind in "fc"
    plan = _plan(d, axis, ordered, op != "logcumsumexp")
    code = {"cumsum": K.OP_SUM, "cumprod": K.OP_PROD, "logcumsumexp": K.OP_LOGADDEXP,
            "nancumsum": K.OP_NANSUM, "nancumprod": K.OP_NANPROD}[op]
    vp = _ValuesPlan(res, acc, plan, K.scan_logaddexp if op == "logcumsumexp" else K.scan_values,
                     code, bool(exclusive), bool(reverse), acc.type(0),
                     acc.type(-np.inf) if op == "logcumsumexp" else acc.type(product),
                     op == "logcumsumexp" and res == np.float16)
    if key is not None and shape == d.shape:
        _VALUE_PLANS.put(key, vp)
    return _scanned(d, vp, shape)


def _scanned(d: D.DeviceArray, vp: _ValuesPlan, shape=None):
    """The planned value scan of *d* (of result *shape*, d's by default)."""
    plan = vp.plan
    result, flat = _result(d, d.shape if shape is None else shape, vp.res)
    base, _ = D.flat_base(D.bool_as_bytes(d))
    carry = d.scratch((plan.tiles, plan.lanes), vp.acc)
    out = d.scratch((d.size,), np.float32) if vp.via_float32 else flat
    _phases(plan, d.stream, vp.kernel, K.scan_values_block, base, plan.geo, plan.tile_len,
            vp.code, vp.exclusive, vp.reverse, vp.zero, vp.ident, carry, out)
    if out is not flat:
        _round_to(out, flat, d)
    return result


def _logical(op: str, d: D.DeviceArray, axis, shape, exclusive: bool, reverse: bool):
    """cumsum (an or-scan) or cumprod (an and-scan) with ``dtype=bool``: the running
    count of the nonzero (zero) elements, by the int64 scan, then whether it is
    nonzero (still zero). Bits: exact. The nan twins: a NaN is the identity (False
    for the or-scan, True for the and-scan, which a NaN already is)."""
    result, flat = _result(d, shape, np.bool_)
    if d.size == 0:
        return result
    src = D.operand(d)
    geo = [src.offset, d.ndim, *D.dims(d.shape, src.strides)]
    counts = d.scratch(d.shape, np.int64)
    any_scan = op in ("cumsum", "nancumsum")
    D.launch(K.truth_c, d, d.size, src.base, D.to_device_constants(geo), any_scan,
             op == "nancumsum", counts.reshape(d.size))
    scanned = _values("cumsum", counts, None if d.ndim == 0 else axis, np.int64, exclusive,
                      reverse)
    D.launch(K.test_c, d, d.size, scanned.reshape(d.size), any_scan, D.as_bytes(flat))
    return result


def _extreme(op: str, x, axis, index_dtype, greater: bool):
    if type(axis) is int and isinstance(index_dtype, (np.dtype, type)):
        d = D.device_array(x)
        key: tuple | None = D.call_key(op, d, axis, index_dtype)
        planned = _EXTREME_PLANS.get(key)
        if planned is not None:
            kept_dtype, kept_plan = planned
            return _extremes_of(d, d.shape, kept_dtype, kept_plan, greater)
    else:
        key = None
    d, axis, shape = _prepared(op, x, axis)
    _dtypes.check_dtype(d.dtype, op)
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    if d.ndim:
        _dtypes.check_index_fits(d.shape[axis], index_dtype, op)
    plan = _plan(d, axis, False, True) if d.size else None
    if key is not None and shape == d.shape:
        _EXTREME_PLANS.put(key, (index_dtype, plan))
    return _extremes_of(d, shape, index_dtype, plan, greater)


#: cummax/cummin's (index dtype, kernels' plan) by (operator, shape, strides, dtype,
#: axis, index_dtype, device).
_EXTREME_PLANS = PlanCache()


def _extremes_of(d: D.DeviceArray, shape, index_dtype, plan: _Plan | None, greater: bool):
    values, flat_v = _result(d, shape, d.dtype)
    indices, flat_i = _result(d, shape, index_dtype)
    if plan is not None:
        seen = D.bool_as_bytes(d)
        base, _ = D.flat_base(seen)
        carry_v = d.scratch((plan.tiles, plan.lanes), seen.dtype)
        carry_i = d.scratch((plan.tiles, plan.lanes), np.int64)
        out_v = flat_v.view(np.uint8) if d.dtype == np.bool_ else flat_v
        _phases(plan, d.stream, K.scan_extreme, K.scan_extreme_block, base, plan.geo,
                plan.tile_len, greater, carry_v, carry_i, out_v, flat_i)
    return ValuesIndices(values, indices)


def _phases(plan: _Plan, stream, kernel, block_kernel, base, geo, tile_len, *rest) -> None:
    """Tile totals and their scan when the axis is tiled, then the scan itself:
    with a thread per (lane, tile), or a block per (lane, tile) (*block_kernel*);
    the carries between tiles take a thread per lane either way."""
    block = plan.block
    tiled = block_kernel if plan.blocked else kernel
    every = plan.lanes * plan.tiles if plan.blocked else D.grid(plan.lanes * plan.tiles, block)
    if plan.tiles > 1:
        tiled[every, block, stream](base, geo, tile_len, 0, *rest)
        kernel[D.grid(plan.lanes, block), block, stream](base, geo, tile_len, 1, *rest)
    tiled[every, block, stream](base, geo, tile_len, 2, *rest)


def _round_to(src, dst, d: D.DeviceArray) -> None:
    D.launch(K.cast, d, src.size, src, dst)

"""``scatter`` of CUDA arrays (see :mod:`axisops.cuda`): deterministic, no atomics.

The result starts as a C-contiguous copy of ``x`` in the working dtype (``x``'s;
float32 for float16 with a ``reduce``, rounded once at the end, as on the CPU).
The updates of one destination are applied in C order of ``indices``, starting
from ``x``'s value, so every run gives the NumPy path's bits (float ``"add"``
included). Two ways, by shape (:mod:`axisops.cuda.gather_kernels`):

* lanes that share their indices (an expanded index tensor, a broadcast one, the
  gradient of ``take``): the indices along the axis are sorted by destination
  once, and a thread per (sorted index, lane) applies the run of equal
  destinations it heads, neighbouring threads in neighbouring lanes;
* many lanes (positions of ``indices`` outside ``axis``): a thread per lane walks
  its updates along the axis;
* few long lanes: the updates are sorted by destination (a stable merge sort on
  the device) and a thread per destination applies its run in order.

The NumPy path's checks run first, on host stand-ins of the arrays (shapes and
dtypes; the index values only where the CPU reads them to check an empty axis);
an index out of range sets a flag in the kernel, and the error is the NumPy
path's, raised from a host copy of the indices. Complex ``"mul"`` multiplies in
the NumPy path's order, but a GPU compiler may fuse a complex product's multiply
and add: its last bits can differ from the CPU's. Updates are uploaded from the
host (only what broadcasting needs), and device updates of another dtype are
cast by their own library (PyTorch's ``to``, CuPy's ``astype``; a Numba device
array through the host), as the NumPy path casts them (``same_kind``).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _complex, _dtypes
from .. import gather as _np_gather
from .._indices import check_in_range
from .._layout import c_strides, coalesce
from .._plan import PlanCache
from . import _device as D
from . import gather_kernels as GK
from . import kernels as K
from .gather import _flat_positions, _indices_on_device
from .reduce import _result

__all__ = ["scatter"]
NUMPY_MODULE = "axisops.gather"

_REDUCES = {None: GK.OP_ASSIGN, "add": GK.OP_ADD, "mul": GK.OP_MUL, "max": GK.OP_MAX,
            "min": GK.OP_MIN}


def enough_lanes() -> int:
    """Lanes from which a thread per lane keeps the device busy (fewer, longer
    lanes are sorted by destination instead)."""
    return D.resident_threads()


def scatter(x, indices, updates, axis, *, reduce=None):
    """:func:`axisops.scatter` on the device."""
    op = "scatter"
    d = D.device_array(x)
    dt = d.dtype
    key, i_dev, u_dev = _checks_key(d, indices, updates, axis, reduce)
    kept = _CHECKED.get(key)
    if kept is None:
        idx, u_dev, axis, shared_shape = checked(op, d, indices, updates, axis, reduce,
                                                 shared=True)
        _CHECKED.put(key, (axis, shared_shape))
    else:  # the same description passed every check before: only the indices to fetch
        axis, shared_shape = kept
        idx = D.in_c_order(i_dev) if shared_shape is None else \
            _indices_on_device(d, _pattern(indices, axis, shared_shape), op)
    code = _REDUCES[reduce]
    if dt == np.bool_:  # or and and are max and min of 0 and 1
        code = {GK.OP_ADD: GK.OP_MAX, GK.OP_MUL: GK.OP_MIN}.get(code, code)
    work = np.dtype(np.float32) if dt == np.float16 and reduce is not None else dt
    result, flat = _result(d, d.shape, dt)
    moved = np.dtype(np.uint8) if dt == np.bool_ else dt
    out = flat.view(moved) if moved != dt else flat
    target = out if work == dt else d.scratch((d.size,), work)
    if d.size:
        _copy_into(d, target)
    if idx.size:
        shape = shared_shape or idx.shape
        i_strides = c_strides(idx.shape) if shared_shape is None else \
            [1 if a == axis else 0 for a in range(len(shape))]
        upd, u_offset, u_strides = _updates(d, updates, u_dev, shape, moved)
        positions = _flat_positions(idx, d.shape[axis], K.MODE_RAISE, d)
        o_strides = c_strides(d.shape)[:len(shape)]
        if scatter_into(d, target, o_strides, shape, axis, positions, i_strides,
                        upd, u_offset, u_strides, d.shape[axis], code, K.MODE_RAISE):
            host = D.to_host(idx.array, d)
            if shared_shape is not None:  # the pattern as the indices were: broadcast
                host = np.broadcast_to(host.reshape([-1 if a == axis else 1 for a in
                                                     range(len(shape))]), shape)
            check_in_range(host, d.shape[axis], op, negative=True)
    if work != dt:
        D.launch(K.cast, d, d.size, target, out)
    return result


#: The outcome of :func:`checked` by description of a scatter's arguments (x's,
#: the indices' and the updates' shapes, strides and dtypes, all on the device;
#: axis, reduce, device): the NumPy path's checks are of shapes and dtypes only, so
#: a warm call skips them (not for an empty x, whose check reads index values).
_CHECKED = PlanCache()


def _checks_key(d: D.DeviceArray, indices, updates, axis, reduce):
    """(key for :data:`_CHECKED` or None, the indices and the updates as device
    arrays when they are ones)."""
    if not (D.is_cuda_array(indices) and D.is_cuda_array(updates)) or d.size == 0 \
            or type(axis) is not int or not (reduce is None or type(reduce) is str):
        return None, None, None
    i, u = D.device_array(indices), D.device_array(updates)
    return D.call_key("scatter", d, i.shape, i.strides, i.dtype, u.shape, u.strides, u.dtype,
                      axis, reduce), i, u


def _pattern(indices, axis: int, shared_shape):
    """The indices a kept check said to read: all of them, or where every lane reads
    the same ones (*shared_shape*), the 1-D pattern along *axis*."""
    if shared_shape is None:
        return indices
    return indices[tuple(slice(None) if a == axis else 0 for a in range(len(shared_shape)))]


def checked(op: str, d: D.DeviceArray, indices, updates, axis, reduce, shared: bool = False):
    """(indices on the device, device updates or None, axis, shape): the NumPy
    path's checks of a scatter of *d*, in its order, on host stand-ins of the
    arrays. *shape* is None, or, with *shared* when every lane reads the same
    indices (their strides are 0 but along *axis*: an expanded tensor, a NumPy
    broadcast), the indices' shape: the indices returned are then only the 1-D
    pattern along the axis (no copy of the expansion is made)."""
    dt = d.dtype
    if dt.kind == "c":  # as the NumPy path: checked, then the parts' checks
        _complex.check(dt, op)
        if reduce in ("max", "min"):
            _dtypes.check_dtype(dt, op)
    on_device = D.is_cuda_array(indices)
    raw: Any = D.device_array(indices) if on_device else np.asarray(indices)
    u_dev = D.device_array(updates) if D.is_cuda_array(updates) else None
    part = np.dtype(dt.char.lower()) if dt.kind == "c" else dt  # the parts' dtype
    x_stand = D.zeros_stand_in(d.shape, part)
    host = None
    if d.size == 0 and math.prod(raw.shape):  # the NumPy path reads them: an empty axis
        host = D.to_host(raw.array, d) if on_device else raw
    i_stand = host if host is not None else D.zeros_stand_in(raw.shape, raw.dtype)
    if u_dev is not None:
        u_kind = u_dev.dtype if u_dev.dtype.kind != "c" else np.dtype(u_dev.dtype.char.lower())
        u_check: Any = D.zeros_stand_in(u_dev.shape, u_kind)
    elif dt.kind == "c" and type(updates) not in (bool, int, float):
        u_check = np.asarray(updates)
        if u_check.dtype.kind == "c":
            u_check = u_check.real
    else:
        u_check = updates
    _, _, _, axis = _np_gather._scatter_args(x_stand, i_stand, u_check, axis, reduce, op)
    shape = tuple(int(k) for k in raw.shape)
    count = 1
    for k in shape:
        count *= k
    if shared and count and shape[axis] < count and all(
            st == 0 or k == 1 for a, (st, k) in enumerate(zip(raw.strides, shape)) if a != axis):
        pattern = tuple(slice(None) if a == axis else 0 for a in range(len(shape)))
        source = indices[pattern] if on_device else np.ascontiguousarray(raw[pattern])
        return _indices_on_device(d, source, op), u_dev, axis, shape
    return _indices_on_device(d, indices, op), u_dev, axis, None


def _copy_into(d: D.DeviceArray, target) -> None:
    """``x`` in C order into the flat *target* (converted to its dtype)."""
    src = D.operand(d)
    geo = D.kept_constants(("copy", d.shape, d.strides, d.dtype),
                           lambda: [src.offset, d.ndim, *D.dims(d.shape, src.strides)])
    D.launch(K.copy_c, d, d.size, src.base, geo, target)


def _updates(d: D.DeviceArray, updates, u_dev, shape, moved: np.dtype):
    """(flat base, element offset, element strides over *shape*) of the updates in
    ``x``'s dtype (*moved*: bool as bytes): their leading part when larger than
    *shape*, stride 0 where they broadcast."""
    dt = d.dtype
    if u_dev is None:
        u = _np_gather._as_updates(updates, dt, "scatter")
        if (u.shape != shape and u.ndim == len(shape)
                and all(a >= s for a, s in zip(u.shape, shape))):
            u = u[tuple(slice(0, s) for s in shape)]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            host = u.astype(dt)
        u_dev = D.upload(d, host.view(moved) if moved != dt else host)
    elif u_dev.dtype != dt:
        u_dev = as_dtype(u_dev, dt)
    src = D.operand(u_dev)
    skip = len(shape) - u_dev.ndim  # broadcast: missing dimensions get stride 0
    strides = [0 if k < skip else src.strides[k - skip] for k in range(len(shape))]
    return src.base, src.offset, strides


def as_dtype(a: D.DeviceArray, dtype: np.dtype) -> D.DeviceArray:
    """*a* converted to *dtype* on its device, as NumPy's ``astype``: a new
    C-contiguous Numba array, read in place and converted in one pass
    (``_device.converted``)."""
    dtype = np.dtype(dtype)
    c = D.converted(a, D.operand(a), a.shape, dtype, c_order=True)
    out = c.base[:a.size].reshape(a.shape)
    return D.DeviceArray(out, a.shape, tuple(int(s) for s in out.strides), dtype, a.kind,
                         a.owner, a.stream)


def scatter_into(d: D.DeviceArray, target, out_strides, shape, axis: int, positions,
                 i_strides, upd, u_offset: int, u_strides, n: int, code: int,
                 mode: int) -> bool:
    """Apply the updates of *shape* to the flat *target* (the working dtype):
    update ``p = (q, j, r)`` (C order, *axis* the j) combines with ``target[q .
    out_strides + resolve(indices[p]) * out_strides[axis] + r . out_strides]`` by
    *code*; *positions* are the flat indices read with *i_strides*, *upd* the flat
    updates read from *u_offset* with *u_strides* (stride 0 where either
    broadcasts; an out stride 0 sums over that dimension). True when an index was
    out of range under ``raise`` (nothing is applied in that case by the sorted
    way; the caller raises). The NumPy path's scatter, also under the gradients
    of the gathers (``mode`` as the forward's)."""
    shape = list(shape)
    lanes = math.prod(shape) // shape[axis] if shape[axis] else 0
    # lanes own their destinations unless the output is broadcast across them
    own = all(s != 0 or k == 1 for a, (s, k) in enumerate(zip(out_strides, shape)) if a != axis)
    bad = D.flag(d)
    shared = lanes > 1 and all(s == 0 for a, s in enumerate(i_strides) if a != axis)
    if own and shared:
        _by_shared_runs(d, target, out_strides, shape, axis, positions, i_strides[axis], upd,
                        u_offset, u_strides, n, code, mode, bad)
    elif own and (lanes >= enough_lanes() or shape[axis] == 1):
        _by_lanes(d, target, out_strides, shape, axis, positions, i_strides, upd, u_offset,
                  u_strides, n, code, mode, bad)
    else:
        _by_runs(d, target, out_strides, shape, axis, positions, i_strides, upd, u_offset,
                 u_strides, n, code, mode, bad)
    return D.is_set(bad, d, release=True)


def _by_lanes(d, target, o_strides, shape, axis, positions, i_strides, upd, u_offset,
              u_strides, n, code, mode, bad) -> None:
    """A thread per lane of *shape* outside *axis* (``gather_kernels.scatter_lanes``)."""
    lanes = math.prod(shape) // shape[axis]

    def geometry():
        outer, (o_outer, i_outer, u_outer) = coalesce(shape[:axis], o_strides[:axis],
                                                      i_strides[:axis], u_strides[:axis])
        rest, (o_rest, i_rest, u_rest) = coalesce(shape[axis + 1:], o_strides[axis + 1:],
                                                  i_strides[axis + 1:], u_strides[axis + 1:])
        return [u_offset, len(outer), len(rest), shape[axis], o_strides[axis], i_strides[axis],
                u_strides[axis], lanes, *D.divisor(math.prod(rest)),
                *GK.dims_multi(outer, o_outer, i_outer, u_outer),
                *GK.dims_multi(rest, o_rest, i_rest, u_rest)]

    geo = D.kept_constants(("scatter lanes", tuple(shape), axis, tuple(o_strides),
                            tuple(i_strides), tuple(u_strides), u_offset), geometry)
    kernel = GK.scatter_lanes_complex if upd.dtype.kind == "c" else GK.scatter_lanes
    D.launch(kernel, d, lanes, target, geo, positions, upd, n, code, mode, bad)


def _by_runs(d, target, o_strides, shape, axis, positions, i_strides, upd, u_offset,
             u_strides, n, code, mode, bad) -> None:
    """Sorted by destination, a thread per run (``scatter_keys``, ``merge_pass``,
    ``scatter_runs``)."""
    keys, order = destinations(d, o_strides, shape, axis, positions, i_strides, n, mode, bad)
    if keys is None:
        return  # an index out of range under raise: the caller raises
    total = math.prod(shape)
    run_geo = [u_offset, len(shape), *D.dims(shape, u_strides)]
    kernel = GK.scatter_runs_complex if upd.dtype.kind == "c" else GK.scatter_runs
    D.launch(kernel, d, total, target, D.to_device_constants(run_geo), keys, order, upd, code)


def _by_shared_runs(d, target, o_strides, shape, axis, positions, i_axis_stride, upd, u_offset,
                    u_strides, n, code, mode, bad) -> None:
    """Every lane reads the same indices (strides 0 outside *axis*: an expanded
    index tensor, the gradient of ``take``): the m indices are sorted by
    destination once, and a thread per (sorted position, lane), lanes fastest,
    applies the run it heads in order (``scatter_shared_runs``)."""
    m = shape[axis]
    keys, order = destinations(d, [o_strides[axis]], [m], 0, positions, [i_axis_stride], n, mode,
                               bad)
    if keys is None:
        return  # an index out of range under raise: the caller raises
    lane_shape = [k for a, k in enumerate(shape) if a != axis]
    lane_o = [s for a, s in enumerate(o_strides) if a != axis]
    lane_u = [s for a, s in enumerate(u_strides) if a != axis]
    lane_shape, (lane_o, lane_u) = coalesce(lane_shape, lane_o, lane_u)
    lanes = math.prod(lane_shape)
    geo = [u_offset, u_strides[axis], len(lane_shape), *D.divisor(lanes),
           *GK.dims_multi(lane_shape, lane_o, lane_u)]
    kernel = GK.scatter_shared_runs_complex if upd.dtype.kind == "c" else GK.scatter_shared_runs
    D.launch(kernel, d, m * lanes, target, D.to_device_constants(geo), keys, order, upd, code)


def destinations(d, o_strides, shape, axis, positions, i_strides, n, mode, bad,
                 sort: bool = True):
    """(keys, order): each update's flat destination (-1 for none) and, sorted by
    destination (stable: C order within one), the updates' positions; with
    *sort* False the keys in the updates' C order and no order. (None, None)
    when an index was out of range under raise."""
    shape = list(shape)
    outer, (o_outer, i_outer) = coalesce(shape[:axis], o_strides[:axis], i_strides[:axis])
    rest, (o_rest, i_rest) = coalesce(shape[axis + 1:], o_strides[axis + 1:],
                                      i_strides[axis + 1:])
    total = math.prod(shape)
    geo = [shape[axis], o_strides[axis], i_strides[axis], len(outer), len(rest),
           *D.divisor(math.prod(rest)), *D.divisor(shape[axis]),
           *GK.dims_multi(outer, o_outer, i_outer), *GK.dims_multi(rest, o_rest, i_rest)]
    block = D.threads_per_block()
    blocks = D.grid(total, block)
    keys = d.scratch((total,), np.int64)
    GK.scatter_keys[blocks, block, d.stream](D.to_device_constants(geo), positions, n,
                                             mode, bad, keys)
    if mode == K.MODE_RAISE and D.is_set(bad, d):
        return None, None
    if not sort:
        return keys, None
    order = d.scratch((total,), np.int64)
    GK.iota[blocks, block, d.stream](order)
    keys_out, order_out = d.scratch((total,), np.int64), d.scratch((total,), np.int64)
    # tiles of one block sorted in shared memory, then merged in pairs: log2(block)
    # fewer passes over the keys than merging from single elements
    GK.sort_tiles[blocks, block, d.stream](keys, order, keys_out, order_out)
    keys, keys_out, order, order_out = keys_out, keys, order_out, order
    width = block
    while width < total:
        GK.merge_pass[blocks, block, d.stream](keys, order, width, keys_out, order_out)
        keys, keys_out, order, order_out = keys_out, keys, order_out, order
        width *= 2
    return keys, order

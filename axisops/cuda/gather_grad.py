"""Gradients of the gathers and of scatter on CUDA arrays: ``grad.take``,
``grad.take_along_axis``, ``grad.gather_nd``, ``grad.scatter`` (see
:mod:`axisops.cuda`).

Each is the device scatter-add (:func:`axisops.cuda.scatter.scatter_into`) of
``g`` into zeros, deterministic and without atomics: repeated indices add up in
C order of ``indices``, as on the CPU, so the results are the NumPy path's bits.
One exception, to rounding: where ``take_along_axis`` broadcast ``x`` (a 1 in
``x`` against a longer ``indices`` dimension), the CPU sums the broadcast copies
afterwards with NumPy, and the device adds them into the same destination in C
order instead.

Dtypes and checks are the NumPy path's: a float ``g`` keeps its dtype (float16
accumulates in float32, rounded once), others become float64; complex ``g`` adds
as complex numbers (the same additions as its two parts). The checks run on the
host from shapes; index values are checked on the device (a flag), and the
NumPy path's error is raised from a host copy of the indices.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _complex, _dtypes
from .. import gather as _np_gather
from .._indices import check_in_range
from .._layout import c_strides
from ..grad import gather as _grad_gather
from . import _device as D
from . import gather_kernels as GK
from . import kernels as K
from . import scatter as _scatter
from .gather import _flat_positions, _indices_on_device
from .reduce import _result
from .scatter import as_dtype, scatter_into

__all__ = ["take", "take_along_axis", "gather_nd", "scatter"]
NUMPY_MODULE = "axisops.grad"


def take(g, indices, x_shape, axis=None, mode="raise"):
    """:func:`axisops.grad.take` on the device."""
    op = "grad.take"
    gd = D.device_array(g)
    x_shape = _shape(x_shape)
    idx = _indices_on_device(gd, indices, op)
    code = _np_gather._mode(mode, op)
    outer_dims, n_dims, rest_dims, _ = _np_gather.take_dims(x_shape, axis, op)
    outer, n, rest = math.prod(outer_dims), math.prod(n_dims), math.prod(rest_dims)
    dtype, work = g_dtypes(gd, outer_dims + idx.shape + rest_dims, op)
    _check_values(idx, n, code, op, g_reads=bool(gd.size and n))
    target, result, out = _zeros(gd, x_shape, dtype, work)
    if gd.size and n:
        m = idx.size
        u = _updates(gd, work)
        if scatter_into(gd, target, [n * rest, rest, 1], [outer, m, rest], 1,
                        _flat_positions(idx, n, code, gd), [0, 1, 0], u.array.reshape(u.size),
                        0, [m * rest, rest, 1], n, GK.OP_ADD, code):
            check_in_range(D.to_host(idx.array, gd), n, op, negative=True)
    return _finish(gd, target, out, result)


def take_along_axis(g, indices, x_shape, axis, mode="raise"):
    """:func:`axisops.grad.take_along_axis` on the device."""
    op = "grad.take_along_axis"
    gd = D.device_array(g)
    x_shape = _shape(x_shape)
    idx = _indices_on_device(gd, indices, op)
    code = _np_gather._mode(mode, op)
    shape, axis, out_shape = _grad_gather._along_shapes(x_shape, idx.shape, axis, op)
    dtype, work = g_dtypes(gd, out_shape, op)
    n = shape[axis]
    _check_values(idx, n, code, op, g_reads=bool(gd.size and n))
    target, result, out = _zeros(gd, x_shape, dtype, work)
    if gd.size and n:
        u = _updates(gd, work)
        # x's strides over the forward's result: 0 where x was broadcast (the
        # copies add into one element), its own where only the leading part was read
        o_strides = [0 if s == 1 and k != 1 else c for s, k, c in
                     zip(shape, out_shape, c_strides(shape))]
        i_strides = [0 if k == 1 else c for k, c in zip(idx.shape, c_strides(idx.shape))]
        if scatter_into(gd, target, o_strides, out_shape, axis, _flat_positions(idx, n, code, gd),
                        i_strides, u.array.reshape(u.size), 0, c_strides(out_shape), n,
                        GK.OP_ADD, code):
            check_in_range(D.to_host(idx.array, gd), n, op, negative=True)
    return _finish(gd, target, out, result)


def gather_nd(g, indices, x_shape, batch_dims=0):
    """:func:`axisops.grad.gather_nd` on the device."""
    op = "grad.gather_nd"
    gd = D.device_array(g)
    x_shape = _shape(x_shape)
    idx = _indices_on_device(gd, indices, op)
    b, dims, out_shape = _np_gather._nd_shapes(x_shape, idx.stand_in(), batch_dims, op)
    q = len(dims)
    rows = idx.size // q
    flat = gd.scratch((rows,), np.int64)
    if rows:  # every tuple is checked first, as on the CPU
        geo = [v for k in range(q) for v in (dims[k], c_strides(dims)[k])]
        bad = D.flag(gd)
        D.launch(GK.flat_tuples, gd, rows, _flat_positions(idx, max(dims), K.MODE_RAISE, gd),
                 D.to_device_constants(geo), q, bad, flat)
        if D.is_set(bad, gd, release=True):
            _np_gather._raise_first_tuple_error(D.to_host(idx.array, gd), dims, op)
    dtype, work = g_dtypes(gd, out_shape, op)
    batch, n = math.prod(x_shape[:b]), math.prod(dims)
    rest, m = math.prod(x_shape[b + q:]), math.prod(idx.shape[b:-1])
    target, result, out = _zeros(gd, x_shape, dtype, work)
    if gd.size:
        u = _updates(gd, work)
        scatter_into(gd, target, [n * rest, rest, 1], [batch, m, rest], 1, flat, [m, 1, 0],
                     u.array.reshape(u.size), 0, [m * rest, rest, 1], n, GK.OP_ADD, K.MODE_RAISE)
    return _finish(gd, target, out, result)


def scatter(g, x, indices, updates, axis, reduce=None):
    """:func:`axisops.grad.scatter` on the device: ``(grad_x, grad_updates)``.

    Each update's destination is computed once (``gather_kernels.scatter_keys``);
    by ``reduce``, as the NumPy path: ``None`` finds the last update of each
    destination by a device scatter-max of the updates' positions; ``"add"`` reads
    ``g`` at the destinations; ``"max"``/``"min"`` count the elements equal to the
    forward's result with a device scatter-add and share ``g`` among them;
    ``"mul"`` multiplies the other factors of each destination, sorted by
    destination, with no division. ``grad_updates`` is summed where the forward
    broadcast ``updates`` (with the device's reduction: to rounding) and zero
    outside the leading part it used."""
    op = "grad.scatter"
    gd = D.device_array(g)
    if any(_is_complex(a) for a in (g, x, updates)):
        return _complex_scatter(gd, x, indices, updates, axis, reduce)
    d = _on_device(gd, x)
    x_obj = x if D.is_cuda_array(x) else d.array
    given_shape = tuple(int(s) for s in np.shape(updates)) if not D.is_cuda_array(updates) \
        else D.device_array(updates).shape
    idx, u_dev, axis, _ = _scatter.checked(op, d, indices, updates, axis, reduce)
    if gd.dtype.kind == "c":
        raise TypeError(f"{op}: unsupported dtype {gd.dtype} for g")
    dtype, work = g_dtypes(gd, d.shape, op)
    n, size, total = d.shape[axis], d.size, idx.size

    def launch(kernel, count, *args):
        if count:
            D.launch(kernel, gd, count, *args)

    def scratch(count, dtype=work):
        return gd.scratch((count,), dtype)

    x_strides, i_strides = c_strides(d.shape)[:idx.ndim], c_strides(idx.shape)
    keys = order = None
    positions = _flat_positions(idx, n, K.MODE_RAISE, gd) if total else None
    if total:
        bad = D.flag(gd)
        keys, order = _scatter.destinations(gd, x_strides, idx.shape, axis, positions, i_strides,
                                            n, K.MODE_RAISE, bad, sort=reduce == "mul")
        if keys is None:
            check_in_range(D.to_host(idx.array, gd), n, op, negative=True)
    g_w = _flat(_updates(gd, work) if gd.dtype != work else D.in_c_order(gd))
    grad_x, grad_u = scratch(size), scratch(total)

    def scatter_add(target, values, code, dtype=work):  # values: flat, C order of indices
        if total:
            _scatter.scatter_into(gd, target, x_strides, idx.shape, axis, positions, i_strides,
                                  values, 0, i_strides, n, code, K.MODE_RAISE)

    if reduce is None:
        last = scratch(size, np.int64)
        launch(GK.fill, size, last, -1)
        rank = scratch(total, np.int64)
        launch(GK.iota, total, rank)
        scatter_add(last, rank, GK.OP_MAX)
        launch(GK.kept_x, size, g_w, last, grad_x)
        launch(GK.won_update, total, g_w, last, keys, grad_u)
    elif reduce == "add":
        launch(K.cast, size, g_w, grad_x)
        launch(GK.at_keys, total, g_w, keys, grad_u)
    else:
        moved = np.dtype(np.uint8) if d.dtype == np.bool_ else d.dtype
        u_c = _updates_in_c_order(d, updates, u_dev, idx.shape, moved)
        if reduce == "mul":
            # x read in place and converted in one pass
            x_w = D.converted(gd, D.operand(d), d.shape, work, c_order=True).base
            u_w, product = scratch(total), scratch(size)
            launch(K.cast, total, u_c, u_w)
            launch(GK.fill, size, product, work.type(1))
            scatter_add(product, u_w, GK.OP_MUL)
            launch(GK.times, size, g_w, product, grad_x)
            launch(GK.product_grads, total, g_w, x_w, keys, order, u_w, work.type(1), grad_u)
        else:  # max, min: g shared by x's element and the updates equal to the result
            x_c = _flat(D.bool_as_bytes(D.in_c_order(d)))
            result = D.device_array(_scatter.scatter(x_obj, idx.array, updates, axis,
                                                     reduce=reduce))
            r = _flat(D.bool_as_bytes(result))
            from_x, from_u, count = scratch(size), scratch(total), scratch(size)
            launch(GK.same_mask, size, x_c, r, from_x)
            launch(GK.same_at_keys, total, u_c, r, keys, from_u)
            launch(K.cast, size, from_x, count)
            scatter_add(count, from_u, GK.OP_ADD)
            launch(GK.shares_x, size, g_w, from_x, count, grad_x)
            launch(GK.shares_updates, total, g_w, from_u, count, keys, grad_u)
    gx_result, gx_out = _result(gd, d.shape, dtype)
    launch(K.cast, size, grad_x, gx_out)
    return gx_result, _updates_gradient(gd, grad_u, idx.shape, given_shape, dtype, work)


def _complex_scatter(gd: D.DeviceArray, x, indices, updates, axis, reduce):
    """:func:`axisops.grad.scatter` with complex numbers, as the NumPy path's
    ``_complex_scatter_grad``: None and add (linear in ``g``, the values of ``x``
    and the updates unused) are the real gradient of each part of ``g``; mul is
    ``g * conj(the product of the other factors)`` per destination, sorted by
    destination, the products in the NumPy path's order."""
    op = "grad.scatter"
    x_dtype = D.device_array(x).dtype if D.is_cuda_array(x) else np.asarray(x).dtype
    u_dtype = D.device_array(updates).dtype if D.is_cuda_array(updates) else \
        np.asarray(updates).dtype
    x_shape = D.device_array(x).shape if D.is_cuda_array(x) else np.shape(x)
    u_shape = D.device_array(updates).shape if D.is_cuda_array(updates) else np.shape(updates)
    res = np.result_type(x_dtype, gd.dtype, u_dtype)
    _complex.check(res, op)
    if reduce in ("max", "min"):
        _dtypes.check_dtype(res, op)  # complex numbers have no order: TypeError
    part = _complex.part_dtype(res)
    if reduce != "mul":
        zeros_x = D.zeros_view(gd, x_shape, part)
        zeros_u = D.zeros_stand_in(u_shape, part)  # only its shape and dtype
        if gd.dtype.kind == "c":
            re_g, im_g = (D.complex_part(gd, imag).array for imag in (False, True))
        else:
            re_g, im_g = gd.array, D.zeros_view(gd, gd.shape, gd.dtype)
        re = scatter(re_g, zeros_x, indices, zeros_u, axis, reduce)
        im = scatter(im_g, zeros_x, indices, zeros_u, axis, reduce)
        return _combined(gd, re[0], im[0]), _combined(gd, re[1], im[1])
    if tuple(gd.shape) != tuple(x_shape):
        raise ValueError(f"{op}: g has shape {gd.shape}, expected the forward's output shape "
                         f"{tuple(x_shape)}")
    # scatter's own checks, on bytes, as the NumPy path's scatter_destinations
    stand = D.DeviceArray(gd.array, tuple(x_shape), (0,) * len(x_shape), np.dtype(np.int8),
                          gd.kind, gd.owner, gd.stream)
    idx, u_dev, axis, _ = _scatter.checked("scatter", stand, indices, np.zeros((), np.int8),
                                           axis, "add")
    size, total, n = math.prod(x_shape), idx.size, x_shape[axis]
    x_strides, i_strides = c_strides(x_shape)[:idx.ndim], c_strides(idx.shape)
    as_res = D.DeviceArray(gd.array, tuple(x_shape), (0,) * len(x_shape), res, gd.kind,
                           gd.owner, gd.stream)
    g_c = _flat(as_dtype(gd, res) if gd.dtype != res else D.in_c_order(gd))
    x_c = _flat(as_dtype(_on_device(gd, x), res))
    products = gd.scratch((size,), res)
    if size:
        D.launch(GK.fill, gd, size, products, res.type(1))
    grad_u = gd.scratch((total,), res)
    if total:
        u_dev = D.device_array(updates) if D.is_cuda_array(updates) else None
        u_c = _updates_in_c_order(as_res, updates, u_dev, idx.shape, res)
        bad = D.flag(gd)
        keys, order = _scatter.destinations(gd, x_strides, idx.shape, axis,
                                            _flat_positions(idx, n, K.MODE_RAISE, gd), i_strides,
                                            n, K.MODE_RAISE, bad)
        if keys is None:
            check_in_range(D.to_host(idx.array, gd), n, "scatter", negative=True)
        D.launch(GK.complex_product_grads, gd, total, g_c, x_c, keys, order, u_c, res.type(1),
                 grad_u, products)
    result, out = _result(gd, tuple(x_shape), res)
    if size:
        D.launch(GK.times_conj, gd, size, g_c, products, out)
    return result, _updates_gradient(gd, grad_u, idx.shape, u_shape, res, res)


def _combined(gd: D.DeviceArray, re, im):
    """One complex result of ``g``'s type from the device results of the two parts."""
    r, i = D.device_array(re), D.device_array(im)
    result, out = _result(gd, r.shape, _complex._COMPLEX_OF[r.dtype])
    if out.size:
        D.launch(GK.combine_parts, gd, out.size, _flat(D.in_c_order(r)), _flat(D.in_c_order(i)),
                 out)
    return result


# ------------------------------------------------------------------------ helpers


def _shape(x_shape) -> tuple[int, ...]:
    return tuple(int(s) for s in x_shape)


def g_dtypes(gd: D.DeviceArray, expected, op: str) -> tuple[np.dtype, np.dtype]:
    """(gradient dtype, working dtype) of ``g``, checked against the forward's output
    shape as the NumPy path's ``grad._common._gather_g`` does (complex ``g`` is its own)."""
    if gd.shape != tuple(expected):
        raise ValueError(f"{op}: g has shape {gd.shape}, expected the forward's output shape "
                         f"{tuple(expected)}")
    if gd.dtype.kind not in "biufc":
        raise TypeError(f"{op}: unsupported dtype {gd.dtype} for g")
    dtype = gd.dtype if gd.dtype.kind in "fc" else np.dtype(np.float64)
    return dtype, np.dtype(np.float32) if dtype == np.float16 else dtype


def _check_values(idx: D.DeviceArray, n: int, code: int, op: str, g_reads: bool) -> None:
    """The NumPy path's checks of indices no kernel reads: into an empty axis, or
    with nothing to add (from a host copy; these are the small cases)."""
    if idx.size and (n == 0 or not g_reads):
        host = D.to_host(idx.array, idx)
        _np_gather._check_empty_axis(host, n, code, op)
        if not g_reads:
            _np_gather._check_unseen(host, n, code, op)


def _zeros(gd: D.DeviceArray, shape, dtype: np.dtype, work: np.dtype):
    """(target in *work*, result of ``g``'s type in *dtype*, the result's flat array):
    the target is the result itself unless the two dtypes differ."""
    result, out = _result(gd, shape, dtype)
    target = out if work == dtype else gd.scratch((math.prod(shape),), work)
    if target.size:
        D.launch(GK.fill, gd, target.size, target, work.type(0))
    return target, result, out


def _updates(gd: D.DeviceArray, work: np.dtype) -> D.DeviceArray:
    """``g`` in C order, converted to float64 if it is not a float (float16 stays:
    the kernels add it into float32)."""
    if gd.dtype.kind in "fc":
        return D.in_c_order(gd)
    return as_dtype(gd, work)


def _finish(gd: D.DeviceArray, target, out, result):
    if target is not out and out.size:  # float16: rounded once
        D.launch(K.cast, gd, out.size, target, out)
    return result


def _flat(a: D.DeviceArray):
    """The flat Numba array of a C-contiguous :class:`DeviceArray`."""
    return a.array.reshape(a.size) if a.array.ndim != 1 else a.array


def _is_complex(a) -> bool:
    if D.is_cuda_array(a):
        return D.device_array(a).dtype.kind == "c"
    return np.asarray(a).dtype.kind == "c"


def _on_device(gd: D.DeviceArray, a) -> D.DeviceArray:
    """*a* as a :class:`DeviceArray` on ``g``'s device (a host array uploaded)."""
    return D.device_array(a) if D.is_cuda_array(a) else D.upload(gd, np.asarray(a))


def _updates_in_c_order(d: D.DeviceArray, updates, u_dev, shape, moved: np.dtype):
    """The forward's updates in ``x``'s dtype (*moved*), one per index, flat in C
    order (their leading part, or broadcast, as the forward read them)."""
    base, offset, strides = _scatter._updates(d, updates, u_dev, shape, moved)
    total = math.prod(shape)
    out = d.scratch((total,), moved)
    if total:
        geo = [offset, len(shape), *D.dims(shape, strides)]
        D.launch(K.copy_c, d, total, base, D.to_device_constants(geo),
                 out)
    return out


def _updates_gradient(gd: D.DeviceArray, grad_u, shape, given_shape, dtype: np.dtype,
                      work: np.dtype):
    """*grad_u* (flat, *work*, one per index of *shape*) as a result of ``g``'s type
    and *dtype* in the shape the updates had: summed over the dimensions the
    forward broadcast them along, zero outside the leading part it read."""
    shape, given_shape = tuple(shape), tuple(given_shape)
    total = math.prod(given_shape)
    if given_shape != shape and len(given_shape) == len(shape) and all(
            s >= t for s, t in zip(given_shape, shape)):
        full = gd.scratch((total,), work)
        geo = [len(shape), *D.dims(given_shape, c_strides(shape)), *shape]
        if total:
            D.launch(GK.pad_leading, gd, total, grad_u, D.to_device_constants(geo), full)
        grad_u = full
    elif given_shape != shape:
        from .reduce import sum as _sum

        lead = len(shape) - len(given_shape)
        axes = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(given_shape)
                                          if s == 1 and shape[lead + k] != 1)
        summed = _sum(grad_u.reshape(shape), axis=axes)
        grad_u = D.device_array(summed).array.reshape(total)
    result, out = _result(gd, given_shape, dtype)
    if total:
        D.launch(K.cast, gd, total, grad_u, out)
    return result

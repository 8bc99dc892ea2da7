"""Gradients of the order statistics on dask arrays (see :mod:`axisops.grad.order`
and :mod:`axisops.grad.moving_order`): ``grad.sort``, ``grad.partition``,
``grad.top_k``, ``grad.kthvalue``, ``grad.median``, ``grad.nanmedian``,
``grad.quantile``, ``grad.nanquantile``, ``grad.moving_median``,
``grad.moving_quantile``; lazy, with the NumPy path's checks (raised while the
graph is built), the NumPy path's bits.

* ``grad.sort``, ``grad.partition``: the NumPy path per block, the axis in one
  chunk (``ValueError`` naming the rechunk otherwise, as the forward); ``g`` is
  rechunked to ``x``'s chunks.
* ``grad.top_k``, ``grad.kthvalue``: a scatter-add of ``g`` at the (global)
  ``indices``. The result, of shape ``x_shape``, is chunked as ``g`` on the other
  axes and by dask's ``"auto"`` along the axis (all axes for ``axis=None``); each
  of its blocks takes ``g`` and ``indices`` of its lanes (whole along the small
  ``k`` axis) and adds those whose index falls in it, in the NumPy path's order
  (``np.add.at`` in C order of ``indices``), so the sums of repeated indices are
  its bits. An index out of range raises ``IndexError`` when computed (the
  message names the index and the range, not its position).
* ``grad.median``, ``grad.nanmedian``, ``grad.quantile``, ``grad.nanquantile``: the
  positions of the chosen elements (the lower and upper ones of each quantile;
  a plain lane holding NaN: its first NaN) by the selection by counting of
  :mod:`axisops.dask.order` (keys, then positions among equal keys: the places
  of the stable order, as ``axisops.order.chosen_elements``), the weights by the
  NumPy path's formulas; then each block of the result adds ``g``'s shares at the
  positions inside it in the NumPy path's order. Memory per task: a chunk of
  ``x`` (its keys) and the histograms, as the forward.
* ``grad.moving_median``, ``grad.moving_quantile``: as
  :mod:`axisops.dask.moving_grad`: each chunk by the NumPy path's gradient on
  slabs of ``g`` and ``x`` reaching ``window - 1`` elements either side (the
  outputs whose windows hold the chunk's elements, and those windows): every
  term, and the order of the sums, is the whole array's.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from .. import _dtypes
from .. import grad as _np_grad
from .. import moving_order as _np_moving_order
from .._axes import normalize_axes, normalize_axis
from .._dispatch import numpy_function
from ..grad._common import _shape
from ..grad.order import _float_dtype
from ..moving import check_window
from ..order import _places
from .moving import empty_like_call, empty_result, slab_graph
from .moving_grad import reads_around
from .order import (
    Lanes,
    Places,
    _c_strides,
    _da,
    _meta,
    _positions,
    check_quantile_args,
    select,
    whole_axis,
)

SERVES = "axisops.grad"
__all__ = ["sort", "partition", "top_k", "kthvalue", "median", "nanmedian", "quantile",
           "nanquantile", "moving_median", "moving_quantile"]

_NUMPY = {name: numpy_function(getattr(_np_grad, name)) for name in __all__}


def _as_dask(a, chunks=None):
    da = _da()
    if isinstance(a, da.Array):
        return a if chunks is None else a.rechunk(chunks)
    a = np.asarray(a)
    return da.from_array(a, chunks=-1 if chunks is None else chunks)


def _check_g(g_shape, expected, op: str) -> None:
    if tuple(g_shape) != tuple(expected):
        raise ValueError(f"{op}: g has shape {tuple(g_shape)}, expected the forward's output "
                         f"shape {tuple(expected)}")


# ------------------------------------------------------------- sort, partition


def sort(g, x, axis=-1, *, descending=False):
    """Lazy :func:`axisops.grad.sort`: the axis in one chunk."""
    from .order import _axis_of, _flag

    op = "grad.sort"
    a = _axis_of(x, axis, "argsort", dates=True)
    descending = _flag(descending, "descending", "argsort")
    return _per_block(op, "sort", g, x, a, {"descending": descending})


def partition(g, x, kth, axis=-1):
    """Lazy :func:`axisops.grad.partition`: the axis in one chunk."""
    from .order import _axis_of

    op = "grad.partition"
    a = _axis_of(x, axis, "argpartition", dates=True)
    _places(kth, int(math.prod(x.shape)) if a is None else int(x.shape[a]), "argpartition")
    return _per_block(op, "partition", g, x, a, {"kth": kth})


def _per_block(op, name, g, x, a, options):
    da = _da()
    x = _as_dask(x)
    expected = (int(math.prod(x.shape)),) if a is None else tuple(x.shape)
    _check_g(np.shape(g) if not isinstance(g, da.Array) else g.shape, expected, op)
    g_dtype = g.dtype if isinstance(g, da.Array) else np.asarray(g).dtype
    dtype = _float_dtype(np.empty(0, g_dtype), x.dtype, op)
    _, axis = whole_axis(x, a, op)
    func = functools.partial(_grad_call, name=name, axis=None if a is None else axis,
                             options=tuple(options.items()), dtype=dtype)
    ind = tuple(f"i{d}" for d in range(x.ndim))
    if a is None:
        g = _as_dask(g, -1)
        return da.blockwise(func, ind, g, ("z",), x, ind, concatenate=True, dtype=dtype,
                            meta=_meta(x.ndim, dtype))
    g = _as_dask(g, x.chunks)
    return da.blockwise(func, ind, g, ind, x, ind, dtype=dtype, meta=_meta(x.ndim, dtype))


def _grad_call(g, x, *, name, axis, options, dtype):
    return np.asarray(_NUMPY[name](g, x, axis=axis, **dict(options))).astype(dtype, copy=False)


# ------------------------------------------------------------------ top_k, kthvalue


def top_k(g, indices, x_shape, axis=-1):
    """Lazy :func:`axisops.grad.top_k`: a scatter-add at the global indices."""
    return _at_indices("grad.top_k", g, indices, x_shape, axis, keepdims=True)


def kthvalue(g, indices, x_shape, axis=-1, keepdims=False):
    """Lazy :func:`axisops.grad.kthvalue`: a scatter-add at the global indices."""
    return _at_indices("grad.kthvalue", g, indices, x_shape, axis, keepdims=keepdims)


def _at_indices(op, g, indices, x_shape, axis, keepdims):
    da = _da()
    from dask.array.core import normalize_chunks

    g = _as_dask(g)
    indices = _as_dask(indices)
    x_shape = _shape(x_shape)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got {indices.dtype}")
    if g.shape != indices.shape:
        raise ValueError(f"{op}: g has shape {g.shape} and indices {indices.shape}: expected "
                         "the same")
    work_shape = (int(np.prod(x_shape, dtype=np.int64)),) if axis is None else x_shape
    a = 0 if axis is None else normalize_axis(axis, len(x_shape), op)
    n = work_shape[a]
    if axis is None:
        g, indices = g.reshape(-1), indices.reshape(-1)
    elif not keepdims:
        g, indices = da.expand_dims(g, a), da.expand_dims(indices, a)
    expected = work_shape[:a] + (indices.shape[a],) + work_shape[a + 1:]
    if indices.ndim != len(work_shape) or indices.shape != expected or indices.shape[a] > n:
        raise ValueError(f"{op}: indices of shape {indices.shape} do not fit x_shape {x_shape} "
                         f"along axis {axis}")
    dtype = _float_dtype(np.empty(0, g.dtype), None, op)
    ndim = len(x_shape)
    ind = tuple(f"i{d}" for d in range(ndim))
    if axis is None:
        chunks = normalize_chunks("auto", x_shape, dtype=dtype)
        g, indices = g.rechunk(-1), indices.rechunk(-1)
        coords = [da.arange(s, chunks=(chunks[d],), dtype=np.int64)
                  for d, s in enumerate(x_shape)]
        args: list = [g, ("z",), indices, ("z",)]
        for d, c in enumerate(coords):
            args += [c, (ind[d],)]
        func = functools.partial(_scatter_flat, n=n, op=op, dtype=dtype,
                                 strides=tuple(_c_strides(x_shape)))
        return da.blockwise(func, ind, *args, concatenate=True, dtype=dtype,
                            meta=_meta(ndim, dtype))
    chunks = tuple(g.chunks[d] if d != a else "auto" for d in range(ndim))
    chunks = normalize_chunks(chunks, x_shape, dtype=dtype)
    g = g.rechunk(tuple(-1 if d == a else c for d, c in enumerate(g.chunks)))
    indices = indices.rechunk(g.chunks)
    along = da.arange(n, chunks=(chunks[a],), dtype=np.int64)
    lane_ind = tuple("z" if d == a else i for d, i in enumerate(ind))
    func = functools.partial(_scatter_axis, axis=a, n=n, op=op, dtype=dtype)
    return da.blockwise(func, ind, g, lane_ind, indices, lane_ind, along, (ind[a],),
                        concatenate=True, dtype=dtype, meta=_meta(ndim, dtype))


def _check_range(idx: np.ndarray, n: int, op: str) -> None:
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx[(idx < 0) | (idx >= n)][0]
        raise IndexError(f"{op}: index {int(bad)} is out of range [0, {n})")


def _scatter_axis(g, idx, along, *, axis, n, op, dtype):
    """One block of the result: ``g`` added at the indices inside it, in the NumPy
    path's order."""
    _check_range(idx, n, op)
    lo, size = int(along[0]), along.size
    out = np.zeros(g.shape[:axis] + (size,) + g.shape[axis + 1:], dtype)
    if g.size:
        lanes = np.moveaxis(out, axis, -1)
        ii = np.moveaxis(idx.astype(np.intp), axis, -1) - lo
        gg = np.moveaxis(g.astype(dtype), axis, -1)
        inside = (ii >= 0) & (ii < size)
        grids = np.indices(ii.shape[:-1], sparse=True)
        rows = [np.broadcast_to(r[..., None], ii.shape)[inside] for r in grids]
        np.add.at(lanes, (*rows, ii[inside]), gg[inside])
    return out


def _scatter_flat(g, idx, *coords, n, op, dtype, strides):
    _check_range(idx, n, op)
    shape = tuple(c.size for c in coords)
    out = np.zeros(math.prod(shape), dtype)
    if g.size:
        pos = _positions(coords, strides)
        at = np.minimum(np.searchsorted(pos, idx), pos.size - 1)
        found = pos[at] == idx
        np.add.at(out, at[found], g.astype(dtype)[found])
    return out.reshape(shape)


# ------------------------------------------------------------- medians, quantiles


def median(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.median`."""
    return _split("grad.median", g, x, None, axis, "linear", keepdims, skip_nan=False)


def nanmedian(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.nanmedian`."""
    return _split("grad.nanmedian", g, x, None, axis, "linear", keepdims, skip_nan=True)


def quantile(g, x, q, axis=None, *, method="linear", keepdims=False):
    """Lazy :func:`axisops.grad.quantile`."""
    return _split("grad.quantile", g, x, q, axis, method, keepdims, skip_nan=False)


def nanquantile(g, x, q, axis=None, *, method="linear", keepdims=False):
    """Lazy :func:`axisops.grad.nanquantile`."""
    return _split("grad.nanquantile", g, x, q, axis, method, keepdims, skip_nan=True)


def _split(op, g, x, q, axis, method, keepdims, skip_nan):
    da = _da()
    x = _as_dask(x)
    keepdims = bool(keepdims)
    qa = check_quantile_args(op, x, 0.5 if q is None else q, method)
    axes = normalize_axes(axis, x.ndim, op)
    kept_shape = tuple(int(s) for d, s in enumerate(x.shape) if d not in axes)
    keep_shape = tuple(1 if d in axes else int(s) for d, s in enumerate(x.shape))
    g_shape = g.shape if isinstance(g, da.Array) else np.shape(g)
    _check_g(g_shape, qa.shape + (keep_shape if keepdims else kept_shape), op)
    g = _as_dask(g)
    dtype = _float_dtype(np.empty(0, g.dtype), x.dtype, op)
    n = int(math.prod(x.shape[d] for d in axes))
    if x.size == 0 or qa.size == 0:
        return da.zeros(x.shape, dtype, chunks=x.chunks)
    lanes = Lanes(x, axes)
    places = Places("grad", n, x.dtype, skip_nan=skip_nan, method=method, q=q)
    state, _ = select(lanes, places, positions=True, fetch=False)
    lead = qa.ndim
    if keepdims:
        g = g.squeeze(axis=tuple(lead + d for d in axes))
    if lead == 0:
        g = g[None]
    g = da.moveaxis(g, 0, -1).rechunk(lanes.y.chunks[:lanes.nk] + (-1,))
    func = functools.partial(_put_block, places=places, nk=lanes.nk,
                             strides=lanes.strides, dtype=dtype)
    out = da.blockwise(func, lanes.kept_ind + lanes.red_ind, state, lanes.kept_ind + ("m",),
                       g, lanes.kept_ind + ("q",), *lanes.coord_args(), concatenate=True,
                       dtype=dtype, meta=_meta(x.ndim, dtype))
    if lanes.perm != tuple(range(x.ndim)):
        out = out.transpose(tuple(int(d) for d in np.argsort(lanes.perm)))
    return out


def _put_block(state, g, *coords, places, nk, strides, dtype):
    kept = state.shape[:nk]
    lanes = math.prod(kept)
    st = state.reshape(lanes, -1)
    positions = st["pos"]
    w = places.weights(st["nans"][:, 0]).astype(dtype)
    Q = positions.shape[1] // 2
    g2 = g.reshape(lanes, Q).astype(dtype)
    pos = _positions(coords, strides)
    out = np.zeros((lanes, pos.size), dtype)
    rows = np.arange(lanes)
    for c in range(2 * Q):
        at = np.minimum(np.searchsorted(pos, positions[:, c]), pos.size - 1)
        found = pos[at] == positions[:, c]
        out[rows[found], at[found]] += g2[found, c % Q] * w[found, c]
    return out.reshape(kept + tuple(c.size for c in coords))


# ---------------------------------------------------------------- moving windows


def moving_median(g, x, window, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.grad.moving_median`: the NumPy path's bits."""
    return _moving("moving_median", g, x, window, (), axis, min_count)


def moving_quantile(g, x, window, q, axis=-1, *, min_count=None):
    """Lazy :func:`axisops.grad.moving_quantile`: the NumPy path's bits."""
    _np_moving_order.check_quantile(q, "grad.moving_quantile")
    return _moving("moving_quantile", g, x, window, (q,), axis, min_count)


def _moving(name, g, x, window, extra, axis, min_count):
    from dask.base import tokenize

    da = _da()
    op = f"grad.{name}"
    if not isinstance(g, da.Array):
        g = np.asarray(g)
    if not isinstance(x, da.Array):
        x = _dtypes.as_array(x)
    func = _NUMPY[name]
    if tuple(g.shape) != tuple(x.shape):  # the NumPy path's error, in its order
        func(np.broadcast_to(np.empty((), g.dtype), g.shape),
             np.broadcast_to(np.empty((), x.dtype), x.shape), window, *extra, axis,
             min_count=min_count)
        raise AssertionError(f"{op}: the NumPy path took g of shape {tuple(g.shape)} "
                             f"for x of shape {tuple(x.shape)}")  # pragma: no cover
    res = empty_like_call(func, [tuple(x.shape)] * 2, [g.dtype, x.dtype], window, *extra,
                          axis, min_count=min_count)
    window, min_count = check_window(op, window, min_count)
    axis = normalize_axis(axis, x.ndim, op)
    chunks = x.chunks if isinstance(x, da.Array) else g.chunks
    g, x = (a.rechunk(chunks) if isinstance(a, da.Array) else da.from_array(a, chunks=chunks)
            for a in (g, x))
    if x.size == 0:
        return empty_result(x, res)
    reads = reads_around(chunks[axis], window, exact=False)
    token = tokenize(g, x, op, window, extra, axis, min_count)
    task = functools.partial(_moving_block, name=name, window=window, extra=extra, axis=axis,
                             min_count=min_count, dtype=res)
    return slab_graph(f"axisops-grad-{name.replace('_', '-')}", token, [g, x], axis, reads,
                      task, res)


def _moving_block(g, x, *, name, window, extra, axis, min_count, dtype, lo, skip, size):
    from .moving import crop

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = _NUMPY[name](g, x, window, *extra, axis, min_count=min_count)
    return crop(np.asarray(out), axis, skip, size).astype(dtype, copy=False)

"""The order statistics on CUDA arrays: ``sort``, ``argsort``, ``top_k``,
``partition``, ``argpartition``, ``kthvalue``, ``median``, ``nanmedian``,
``quantile``, ``nanquantile``, ``rank`` (see :mod:`axisops.order` for the
semantics), with the CPU path's results bit for bit
(:mod:`axisops.cuda.order_kernels`).

The lanes are first copied into a C-contiguous ``(lanes, n)`` array of the
elements' bits (``kernels.copy_c``; no copy when they already are: the axis
last and contiguous), lanes in C order of the other axes, a lane's elements in C
order of its axes (several axes of a median or quantile, as the CPU merges
them). Every key is the CPU's order key, ties go by position, so every order is
the CPU's stable one. Results are written as ``(lanes, m)`` and, where the axis
is not the last, copied into the result's layout.

* ``sort``, ``argsort``, ``rank``, ``partition`` with several ``kth``: every lane
  sorted by (key, position): up to ``SHARED_MAX`` (2048) elements a lane in one
  block's shared memory (bitonic), longer lanes as tiles of that length, then
  merge passes in global scratch; then the elements' own bits (so -0.0 and NaN
  payloads come back as they were) and/or positions gathered, or ranks by the
  CPU's tie rules.
* ``kthvalue``, the places of ``median``/``quantile``: a lane up to
  ``SHARED_MAX`` sorted in shared memory and the places read; a longer lane by
  radix select (8-bit digits, integer histograms in shared memory), never sorted.
* ``partition``/``argpartition`` with one ``kth``: the element at that place
  selected as above, then a block per lane writes the elements before it in
  the stable order in lane order, it, and the rest in lane order (the CPU's
  layout). ``top_k``: a short lane sorted and its first ``k`` taken; unsorted
  (``sorted=False``) or a long lane, the first ``k`` of the partition about place
  ``k`` (in lane order, as the CPU gives them), sorted afterwards when asked.
* ``median``, ``nanmedian``, ``quantile``, ``nanquantile``: the places NumPy's
  formulas name are computed on the host (they depend on the lanes' NaN counts
  for the ``nan`` twins, counted on the device), the elements at them selected on
  the device, and the selected ``(lanes, m)`` values brought to the host, where
  the CPU path's own NumPy arithmetic (means, ``_lerp``) runs on them; the result
  is sent to the device in the input's type (a 0-d array where NumPy gives a
  scalar). The arithmetic is NumPy's, so the values and dtypes are the CPU's.
  Zero-size inputs and an integer ``q`` (which NumPy answers in integers) are
  answered by NumPy on a host copy, as the CPU path hands them to NumPy.

The checks are the NumPy path's own helpers, in its order, on the shapes and
dtypes (stand-ins that hold zeros), before any launch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _dtypes
from .. import order as _np_order
from .._axes import normalize_axes, normalize_axis
from ..scan import ValuesIndices
from . import _device as D
from . import kernels as K
from . import order_kernels as OK
from .reduce import _result

NUMPY_MODULE = "axisops.order"

__all__ = ["sort", "argsort", "top_k", "partition", "argpartition", "kthvalue", "median",
           "nanmedian", "quantile", "nanquantile", "rank", "quantile_of_list",
           "nanquantile_of_list"]

_INT64 = np.dtype(np.int64)


# ------------------------------------------------------------------ the operators


def sort(x, axis=-1, *, descending=False):
    """:func:`axisops.sort` on the device."""
    d = D.device_array(x)
    a = _one_axis(d, axis, "sort", dates=True)
    descending = _np_order._flag(descending, "descending", "sort")
    return _sorted(d, a, descending, values=True)


def argsort(x, axis=-1, *, descending=False, index_dtype=np.int64):
    """:func:`axisops.argsort` on the device."""
    d = D.device_array(x)
    a = _one_axis(d, axis, "argsort", dates=True)
    descending = _np_order._flag(descending, "descending", "argsort")
    index_dtype = _index_dtype(index_dtype, d, a, "argsort")
    return _sorted(d, a, descending, values=False, index_dtype=index_dtype)


def top_k(x, k, axis=-1, *, mode="largest", sorted=True, index_dtype=np.int64):
    """:func:`axisops.top_k` on the device."""
    d = D.device_array(x)
    a = _one_axis(d, axis, "top_k", dates=True)
    n = _length(d, a)
    k = _np_order._count(k, "k", 0, n, "top_k")
    if mode not in ("largest", "smallest"):
        raise ValueError(f"top_k: mode must be 'largest' or 'smallest', got {mode!r}")
    sorted = _np_order._flag(sorted, "sorted", "top_k")
    index_dtype = _index_dtype(index_dtype, d, a, "top_k")
    descending = mode == "largest"
    values, v_flat, v_target, v_done = _laid_out(d, a, k, d.dtype)
    indices, _, i_target, i_done = _laid_out(d, a, k, index_dtype)
    if v_flat.size == 0:
        return ValuesIndices(values, indices)
    L = _lanes(d, _axes(d, a))
    if sorted and (n <= OK.SHARED_MAX or k == n):
        _, pos = _sort_pairs(L, descending)
        _gather(L, pos, k, _bits_view(v_target), i_target)
    elif not sorted or k == 0:
        _first_k(L, k, descending, _bits_view(v_target), i_target)
    else:  # a long lane: the k chosen in lane order, then sorted
        chosen = L.d.scratch((L.lanes * k,), L.bits.dtype)
        where = L.d.scratch((L.lanes * k,), np.int64)
        _first_k(L, k, descending, chosen, where)
        C = _Lanes(L.d, chosen, 0, L.lanes, k, L.masks, L.floating)
        _, pos = _sort_pairs(C, descending)
        D.launch(OK.gather_sorted, d, L.lanes * k, chosen, 0, k, pos, k, True, where, True,
                 _bits_view(v_target), True, i_target)
    v_done()
    i_done()
    return ValuesIndices(values, indices)


def partition(x, kth, axis=-1):
    """:func:`axisops.partition` on the device."""
    d = D.device_array(x)
    a = _one_axis(d, axis, "partition", dates=True)
    places = _np_order._places(kth, _length(d, a), "partition")
    return _partitioned(d, a, places, values=True)


def argpartition(x, kth, axis=-1, *, index_dtype=np.int64):
    """:func:`axisops.argpartition` on the device."""
    d = D.device_array(x)
    a = _one_axis(d, axis, "argpartition", dates=True)
    places = _np_order._places(kth, _length(d, a), "argpartition")
    index_dtype = _index_dtype(index_dtype, d, a, "argpartition")
    return _partitioned(d, a, places, values=False, index_dtype=index_dtype)


def kthvalue(x, k, axis=-1, *, keepdims=False, index_dtype=np.int64):
    """:func:`axisops.kthvalue` on the device."""
    d = D.device_array(x)
    flat = axis is None
    a = _one_axis(d, axis, "kthvalue", dates=True)
    n = _length(d, a)
    k = _np_order._count(k, "k", 1, n, "kthvalue")
    keepdims = _np_order._flag(keepdims, "keepdims", "kthvalue")
    index_dtype = _index_dtype(index_dtype, d, a, "kthvalue")
    if flat:
        shape: tuple = (1,) * d.ndim if keepdims else ()
    else:
        shape = d.shape[:a] + ((1,) if keepdims else ()) + d.shape[a + 1:]
    values, v_flat = _result(d, shape, d.dtype)
    indices, i_flat = _result(d, shape, index_dtype)
    if v_flat.size == 0:
        return ValuesIndices(values, indices)
    L = _lanes(d, _axes(d, a))
    # the lanes' C order is the result's (the axis gone, or of length one)
    _select(L, np.array([[k - 1]], np.int64), False, _bits_view(v_flat), i_flat)
    return ValuesIndices(values, indices)


def median(x, axis=None, *, keepdims=False):
    """:func:`axisops.median` on the device: the middle elements selected on the
    device, averaged by NumPy on the host."""
    return _median("median", x, axis, keepdims, skip_nan=False)


def nanmedian(x, axis=None, *, keepdims=False):
    """:func:`axisops.nanmedian` on the device."""
    return _median("nanmedian", x, axis, keepdims, skip_nan=True)


def quantile(x, q, axis=None, *, method="linear", keepdims=False):
    """:func:`axisops.quantile` on the device: the elements selected on the device,
    interpolated by NumPy on the host."""
    return _quantile("quantile", x, q, axis, method, keepdims, skip_nan=False)


def nanquantile(x, q, axis=None, *, method="linear", keepdims=False):
    """:func:`axisops.nanquantile` on the device."""
    return _quantile("nanquantile", x, q, axis, method, keepdims, skip_nan=True)


def quantile_of_list(x, q, scalar_q, axis=None, method="linear", keepdims=False):
    """:func:`axisops.order.quantile_of_list` on the device."""
    return quantile(x, q[0] if scalar_q else np.array(q, np.float64), axis, method=method,
                    keepdims=keepdims)


def nanquantile_of_list(x, q, scalar_q, axis=None, method="linear", keepdims=False):
    """:func:`axisops.order.nanquantile_of_list` on the device."""
    return nanquantile(x, q[0] if scalar_q else np.array(q, np.float64), axis, method=method,
                       keepdims=keepdims)


def rank(x, axis=-1, *, method="average"):
    """:func:`axisops.rank` on the device."""
    d = D.device_array(x)
    a = _one_axis(d, axis, "rank", dates=False)
    if method not in _np_order._RANK_METHODS:
        raise ValueError(f"rank: method must be one of {', '.join(_np_order._RANK_METHODS)}, "
                         f"got {method!r}")
    n = _length(d, a)
    out, flat, target, done = _laid_out(d, a, n, np.float64)
    if flat.size == 0:
        return out
    L = _lanes(d, _axes(d, a))
    keys, pos = _sort_pairs(L, False)
    OK.rank_sorted[L.lanes, _threads(), d.stream](keys, pos, n, np.uint64(L.masks[0]),
                                                 L.floating,
                                                 _np_order._RANK_METHODS[method], target)
    done()
    return out


# ------------------------------------------------------------------------ checks


def _one_axis(d: D.DeviceArray, axis, op: str, dates: bool) -> int | None:
    """``axisops.order._one_lane_axis``'s checks: the axis (None: the flattened
    array)."""
    _np_order._check_dtype(d.dtype, op, dates)
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be an int or None, got {axis!r}")
    return normalize_axis(axis, d.ndim, op)


def _length(d: D.DeviceArray, a: int | None) -> int:
    return d.size if a is None else d.shape[a]


def _index_dtype(index_dtype, d: D.DeviceArray, a: int | None, op: str) -> np.dtype:
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    _dtypes.check_index_fits(_length(d, a), index_dtype, op)
    return index_dtype


def _axes(d: D.DeviceArray, a: int | None) -> tuple[int, ...]:
    return tuple(range(d.ndim)) if a is None else (a,)


# ------------------------------------------------------------------------- lanes


@dataclass
class _Lanes:
    """The lanes of an input as the kernels read them."""

    d: D.DeviceArray
    bits: Any            # flat unsigned device array: lane t, element j at off + t * n + j
    off: int
    lanes: int
    n: int
    masks: tuple         # axisops.kernels.order.key_masks of the input's dtype
    floating: bool       # whether keys equal to masks[0] are NaN (NaT)


def _uint(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def lane_copy(d: D.DeviceArray, axes, dtype=None) -> tuple[Any, int, int, int]:
    """(flat array, offset, lanes, n): *d* with its other axes first and *axes* last,
    in C order (the elements' bits, or converted to *dtype*); no copy where *d*
    already is so."""
    kept = [i for i in range(d.ndim) if i not in axes]
    perm = kept + list(axes)
    n = math.prod(d.shape[i] for i in axes)
    lanes = d.size // n if n else 0
    src = D.operand(d)
    target = _uint(d.dtype) if dtype is None else np.dtype(dtype)
    base = src.base
    if dtype is None and src.dtype != target:
        base = D.view_as(base, target)
    shape = [d.shape[i] for i in perm]
    op = D.Operand(base, src.offset, [src.strides[i] for i in perm],
                   target if dtype is None else src.dtype)
    c = D.converted(d, op, shape, target, c_order=True)
    return c.base, c.offset, lanes, n


def _lanes(d: D.DeviceArray, axes) -> _Lanes:
    from ..kernels import order as CK

    bits, off, lanes, n = lane_copy(d, axes)
    return _Lanes(d, bits, off, lanes, n, CK.key_masks(d.dtype), d.dtype.kind in "fmM")


def _threads() -> int:
    return min(D.threads_per_block(), OK.MAX_THREADS)


def _bits_view(array):
    """A flat device array of an element dtype seen as its unsigned bits."""
    return D.view_as(array, _uint(array.dtype))


def _laid_out(d: D.DeviceArray, a: int | None, m: int, dtype) -> tuple[Any, Any, Any, Any]:
    """``(result, flat, target, finish)`` of a result with *m* along axis *a* (None:
    1-D of *m*): the kernels write ``(lanes, m)`` in C order into *target*, which
    ``finish()`` copies into the result's layout unless *target* is the result."""
    dtype = np.dtype(dtype)
    if a is None:
        shape: tuple = (m,)
        kept: tuple = ()
        a = 0
    else:
        shape = d.shape[:a] + (m,) + d.shape[a + 1:]
        kept = d.shape[:a] + d.shape[a + 1:]
    result, flat = _result(d, shape, dtype)
    lanes = math.prod(kept)
    if lanes <= 1 or m <= 1 or a == len(kept) or flat.size == 0:
        return result, flat, flat, _nothing
    target = d.scratch((lanes * m,), dtype)
    perm = [i for i in range(len(shape)) if i != a] + [a]

    def finish():
        unpermute(d, target, shape, perm, flat)

    return result, flat, target, finish


def _nothing() -> None:
    return None


def unpermute(d: D.DeviceArray, src, shape, perm, out) -> None:
    """``out`` (flat, C order of *shape*) from ``src`` (flat, C order of *shape*'s
    dimensions in the order *perm*)."""
    from .._layout import c_strides

    cs = c_strides([shape[i] for i in perm])
    strides = [0] * len(shape)
    for place, i in enumerate(perm):
        strides[i] = cs[place] if shape[i] > 1 else 0
    size = math.prod(shape)
    if src.dtype == np.bool_:
        src, out = src.view(np.uint8), out.view(np.uint8)
    geo = [0, len(shape), *D.dims(shape, strides)]
    D.launch(K.copy_c, d, size, src, D.to_device_constants(geo), out)


# ----------------------------------------------------------------------- the work


def _sort_pairs(L: _Lanes, descending: bool) -> tuple[Any, Any]:
    """(keys uint64, positions int64), (lanes, n) flat: every lane sorted by (key,
    position)."""
    n = L.n
    size = L.lanes * n
    tile = min(OK.SHARED_MAX, 1 << max(0, (n - 1).bit_length()))
    tiles = -(-n // tile)
    keys = L.d.scratch((size,), np.uint64)
    pos = L.d.scratch((size,), np.int64)
    OK.tile_sort[L.lanes * tiles, _threads(), L.d.stream](L.bits, L.off, n, tile, L.masks,
                                                         descending, keys, pos)
    width = tile
    if width < n:
        keys2 = L.d.scratch((size,), np.uint64)
        pos2 = L.d.scratch((size,), np.int64)
        while width < n:
            D.launch(OK.merge_lanes, L.d, size, keys, pos, n, width, keys2, pos2)
            keys, keys2, pos, pos2 = keys2, keys, pos2, pos
            width *= 2
    return keys, pos


def _unused(L: _Lanes, dtype) -> Any:
    return L.d.scratch((1,), dtype)


def _gather(L: _Lanes, pos, count: int, values, positions) -> None:
    """The first *count* places of the sorted lanes into ``values`` (bits) and/or
    ``positions`` (None: not wanted)."""
    want_v, want_p = values is not None, positions is not None
    D.launch(OK.gather_sorted, L.d, L.lanes * count, L.bits, L.off, L.n, pos, count, False, pos,
             want_v, values if want_v else _unused(L, L.bits.dtype), want_p,
             positions if want_p else _unused(L, np.int64))


def _select(L: _Lanes, places: np.ndarray, descending: bool, values=None, positions=None):
    """(values bits, positions int64, nans): the elements at *places* ((1 or lanes,
    m) int64, host) of every lane's stable order, (lanes, m) flat on the device,
    and each lane's NaN count."""
    m = places.shape[1]
    shared = places.shape[0] == 1
    flat_places = np.ascontiguousarray(places, np.int64).reshape(-1)
    if shared:
        device_places = D.to_device_constants(flat_places)
    else:
        device_places = D.upload(L.d, flat_places).array
    if values is None:
        values = L.d.scratch((max(L.lanes * m, 1),), L.bits.dtype)
    if positions is None:
        positions = L.d.scratch((max(L.lanes * m, 1),), np.int64)
    nans = L.d.scratch((L.lanes,), np.int64)
    if L.n <= OK.SHARED_MAX:
        keys, pos = _sort_pairs(L, descending)
        D.launch(OK.places_sorted, L.d, L.lanes * m, L.bits, L.off, L.n, keys, pos,
                 device_places, shared, np.uint64(L.masks[0]), L.floating, values, positions,
                 nans)
    else:
        OK.radix_select[L.lanes, _threads(), L.d.stream](
            L.bits, L.off, L.n, L.masks, descending, 8 * L.bits.dtype.itemsize, device_places,
            shared, L.floating, values, positions, nans)
    return values, positions, nans


def _compact(L: _Lanes, at, place: int, count: int, descending: bool, values, positions):
    want_v, want_p = values is not None, positions is not None
    OK.compact[L.lanes, _threads(), L.d.stream](
        L.bits, L.off, L.n, L.masks, descending, at, place, count, want_v,
        values if want_v else _unused(L, L.bits.dtype), want_p,
        positions if want_p else _unused(L, np.int64))


def _first_k(L: _Lanes, k: int, descending: bool, values, positions) -> None:
    """The first *k* of every lane's order, in lane order ((lanes, k) flat)."""
    if k == 0:
        return
    if k == L.n:
        at = D.upload(L.d, np.full(L.lanes, -1, np.int64)).array
    else:
        _, at, _ = _select(L, np.array([[k]], np.int64), descending)
    _compact(L, at, k, k, descending, values, positions)


def partition_positions(L: _Lanes, places: list[int], values=None, positions=None) -> None:
    """The CPU's partition of every lane about *places* (one: the partition layout;
    several: the sorted lane): bits into ``values``, positions into ``positions``
    ((lanes, n) flat; None: not wanted)."""
    if len(places) != 1:
        _, pos = _sort_pairs(L, False)
        _gather(L, pos, L.n, values, positions)
        return
    _, at, _ = _select(L, np.array([places], np.int64), False)
    _compact(L, at, places[0], L.n, False, values, positions)


def _sorted(d: D.DeviceArray, a, descending: bool, *, values: bool, index_dtype=_INT64):
    n = _length(d, a)
    out, flat, target, done = _laid_out(d, a, n, d.dtype if values else index_dtype)
    if flat.size == 0:
        return out
    L = _lanes(d, _axes(d, a))
    _, pos = _sort_pairs(L, descending)
    _gather(L, pos, n, _bits_view(target) if values else None, None if values else target)
    done()
    return out


def _partitioned(d: D.DeviceArray, a, places: list[int], *, values: bool, index_dtype=_INT64):
    n = _length(d, a)
    out, flat, target, done = _laid_out(d, a, n, d.dtype if values else index_dtype)
    if flat.size == 0:
        return out
    L = _lanes(d, _axes(d, a))
    partition_positions(L, places, _bits_view(target) if values else None,
                        None if values else target)
    done()
    return out


# ----------------------------------------------------------- medians and quantiles


def reduced(d: D.DeviceArray, axis, op: str) -> tuple[tuple, tuple, tuple]:
    """(axes, kept_shape, keep_shape) as ``axisops.order._reduced_lanes``."""
    axes = normalize_axes(axis, d.ndim, op)
    keep_shape = tuple(1 if i in axes else s for i, s in enumerate(d.shape))
    kept_shape = tuple(s for i, s in enumerate(d.shape) if i not in axes)
    return axes, kept_shape, keep_shape


def select_host(L: _Lanes, places: np.ndarray, dtype: np.dtype):
    """:func:`_select` brought to the host: (values (lanes, m) of *dtype*, positions,
    nans)."""
    values, positions, nans = _select(L, places, False)
    m = places.shape[1]
    v = D.to_host(values, L.d)[:L.lanes * m].view(dtype).reshape(L.lanes, m)
    p = D.to_host(positions, L.d)[:L.lanes * m].reshape(L.lanes, m)
    return v, p, D.to_host(nans, L.d)


def nan_counts(L: _Lanes) -> np.ndarray:
    """Each lane's NaN count (host)."""
    return select_host(L, np.zeros((1, 1), np.int64), L.d.dtype)[2]


def to_device(d: D.DeviceArray, host) -> Any:
    """A host result (array or NumPy scalar) on *d*'s device, of *d*'s type."""
    host = np.asarray(host).copy()  # C order; a 0-d array stays 0-d
    result, flat = _result(d, host.shape, host.dtype)
    if host.size:
        flat.copy_to_device(host.reshape(-1), stream=d.stream)
        d.stream.synchronize()
    return result


def _host(d: D.DeviceArray) -> np.ndarray:
    """*d* copied to the host (for what NumPy answers itself)."""
    c = D.in_c_order(d)
    return D.to_host(c.array, d).reshape(d.shape)


def _median(op: str, x, axis, keepdims, skip_nan: bool):
    d = D.device_array(x)
    _np_order._check_dtype(d.dtype, op, dates=False)
    keepdims = _np_order._flag(keepdims, "keepdims", op)
    if d.size == 0:
        fn = np.nanmedian if skip_nan else np.median  # NumPy's answer and warnings
        return to_device(d, fn(_host(d), axis=axis, keepdims=keepdims))
    axes, kept_shape, keep_shape = reduced(d, axis, op)
    L = _lanes(d, axes)
    skip_nan = skip_nan and d.dtype.kind == "f"
    counts = L.n - nan_counts(L) if skip_nan else np.array([L.n])
    places, _ = _np_order.quantile_places(counts, None, "linear", skip_nan)
    values, _, nans = select_host(L, places, d.dtype)
    result = _np_order.quantile_from_selected(values, counts, nans, None, "linear", d.dtype,
                                              skip_nan=skip_nan, stacklevel=3)
    return to_device(d, _np_order._finish(result, kept_shape, keep_shape, (), keepdims))


def _quantile(op: str, x, q, axis, method, keepdims, skip_nan: bool):
    d = D.device_array(x)
    weak_q = type(q) in (int, float)
    q_given = q
    q = _np_order.check_quantile(op, d.dtype, q, method)
    keepdims = _np_order._flag(keepdims, "keepdims", op)
    _np_order.check_interpolable(op, d.dtype, method)
    if d.size == 0 or q.size == 0 or q.dtype.kind != "f":
        fn = np.nanquantile if skip_nan else np.quantile
        return to_device(d, fn(_host(d), q_given, axis=axis, method=method, keepdims=keepdims))
    axes, kept_shape, keep_shape = reduced(d, axis, op)
    L = _lanes(d, axes)
    skip_nan = skip_nan and d.dtype.kind == "f"
    qf = q.reshape(-1)
    counts = L.n - nan_counts(L) if skip_nan else np.array([L.n])
    places, gamma = _np_order.quantile_places(counts, qf, method, skip_nan)
    values, _, nans = select_host(L, places, d.dtype)
    result = _np_order.quantile_from_selected(values, counts, nans, qf, method, d.dtype,
                                              skip_nan=skip_nan, weak_q=weak_q,
                                              whole=q.ndim == 0 and not kept_shape,
                                              gamma=gamma, stacklevel=3)
    return to_device(d, _np_order._finish(result, kept_shape, keep_shape, q.shape, keepdims))

"""The compiled call path of the small median and quantile, sort and top_k.

``order.median``, ``nanmedian``, ``quantile`` and ``nanquantile`` ask here first. A
NumPy array of float32 or float64 (the medians: int32 and int64 too) that is
C-contiguous and aligned, reduced along its last axis or all of them
(``axis=None``), without ``keepdims``, with at most :data:`MAX_SIZE` elements in
lanes of at most :data:`MAX_LANE` (and
for the quantiles a Python float ``q`` and the method ``linear``), is reduced by
one compiled entry (``kernels.order_entry``: quickselect on the order keys, then
NumPy's arithmetic in the entry). Everything else returns None and takes the
planned path, which also raises every error and warning (an axis out of range, an
empty array, a lane of NaN only: the entries hand those back).

``order.sort`` and ``order.top_k`` ask :func:`sort` and :func:`top_k` first: a
NumPy array of 1 or 2 dimensions, C-ordered (or a 2-D F-ordered one: a
transposed table), along its last axis (``axis=None`` of a 1-D one), of at most
:data:`SORT_MAX_BYTES` (F-ordered: :data:`SORT_MAX_F`), of a dtype NumPy sorts
with SIMD, lanes of at least ``NUMPY_SORT_MIN``, is sorted by ``ndarray.sort``
of a copy and finished by one compiled entry (``order_entry.sort_finisher``);
``top_k`` of ``k <= SMALL_K`` of float32, float64, int32 or int64, at most
:data:`TOP_K_MAX` elements in lanes of at least ``TOP_K_BLOCK * k``, by one
entry (``order_entry.top_k_entry``). Each
answer is the planned path's, bit for bit; the planned path cost 3-9 us of
Python and Numba's dispatch of its general kernels on a 1K-element call.
"""
from __future__ import annotations

import numpy as np

from . import _jit
from .kernels.order import SMALL_K
from .kernels.order_entry import TOP_K_BLOCK, entries, sort_finisher, top_k_entry

#: Largest input: the planned path splits larger ones between threads, and there
#: its radix select is as fast as quickselect.
MAX_SIZE = 1 << 16
#: Longest lane: the planned path selects longer ones from a sampled bracket
#: (``kernels.order.BRACKET_MIN``), without the copy of a lane's keys that the
#: entry makes (1 thread, AMD EPYC Zen 5: the 0.1 quantile of 32768 float64
#: took 0.32 ms here, 0.074 there; at 8192, 0.013 here and 0.054 there).
MAX_LANE = 1 << 13



class _Entries:
    """The compiled entries of one dtype and the type of their results."""

    __slots__ = ("one", "lanes", "sorted_lanes", "finish", "result")

    def __init__(self, dtype: np.dtype):
        self.one, self.lanes, self.sorted_lanes = entries(dtype.str)
        self.finish = None  # sorted_lanes' compiled function, made at its first call
        self.result = dtype.type if dtype.kind == "f" else np.float64


_MEDIAN_TYPES = {np.dtype(t): _Entries(np.dtype(t))
                 for t in (np.float32, np.float64, np.int32, np.int64)}
_QUANTILE_TYPES = {d: e for d, e in _MEDIAN_TYPES.items() if d.kind == "f"}


def _taken(x, axis, types):
    """(the entries of *x*'s dtype, x C-ordered) if they take *x* reduced along
    *axis* (None or the last), else (None, x). A 2-D F-ordered x (a transposed
    table) is copied into C order first: a lane's statistic depends on its values
    only, and a copy of a few thousand elements costs less than the planned
    path's strided lanes ((256, 4).T float32 along axis 1: 17.6 us planned)."""
    if type(x) is not np.ndarray:
        return None, x
    e = types.get(x.dtype)
    if e is None or not 0 < x.size <= MAX_SIZE:
        return None, x
    if not x.flags.c_contiguous:
        if x.ndim != 2 or not x.flags.f_contiguous or axis is None:
            return None, x
        x = np.ascontiguousarray(x)
    if (x.size if axis is None or x.ndim == 0 else x.shape[-1]) > MAX_LANE:
        return None, x
    if axis is None or (axis == -1 and type(axis) is int):
        return e, x
    return (e if type(axis) is int and axis == x.ndim - 1 else None), x


def _statistic(e: _Entries, x: np.ndarray, axis, skip_nan: bool, median: bool, q: float):
    if x.ndim == 1 or axis is None:
        value = e.one(x if x.ndim == 1 else x.reshape(-1), skip_nan, median, q)
        if value != value and skip_nan:
            return None  # maybe a lane of NaN only: the planned path warns
        return e.result(value)
    out = np.empty(x.shape[:-1], e.result)
    n = x.shape[-1]
    if id(x.dtype) in _SORTS and n >= _sort_min[0] and x.flags.aligned:
        # lanes NumPy sorts with SIMD: its sort of a copy, the places read off (a
        # (4, 256) float32 median 4.8 -> 3.3 us, AMD EPYC Zen 4: quickselect
        # mispredicts a branch a key)
        s = x.copy()
        s.sort()
        args = (s.reshape(-1), x.reshape(-1), n, skip_nan, median, q, out.reshape(-1))
        finish = e.finish
        if finish is None:  # without Numba's dispatch: the types are always these
            finish = e.finish = _jit.entry_point(e.sorted_lanes, args, readonly=(1,))
        return out if finish(*args) else None
    return out if e.lanes(x.reshape(-1), n, skip_nan, median, q, out.reshape(-1)) else None


def median(x, axis, keepdims, skip_nan: bool):
    """NumPy's (nan)median of *x* by the compiled entry, or None."""
    if keepdims is not False:
        return None
    e, x = _taken(x, axis, _MEDIAN_TYPES)
    return None if e is None else _statistic(e, x, axis, skip_nan, True, 0.5)


def quantile(x, q, axis, method, keepdims, skip_nan: bool):
    """NumPy's (nan)quantile of *x* at a Python float *q* by the compiled entry, or
    None."""
    if type(q) is not float or method != "linear" or keepdims is not False \
            or not 0.0 <= q <= 1.0:
        return None
    e, x = _taken(x, axis, _QUANTILE_TYPES)
    return None if e is None else _statistic(e, x, axis, skip_nan, False, q)


#: The largest sort taken: the planned path sorts a C-ordered array of up to
#: this many bytes the same way (one chunk: a copy, ``ndarray.sort``, the
#: finish), larger ones a chunk at a time between threads.
SORT_MAX_BYTES = 1 << 18
#: The largest F-ordered sort taken (elements), sorted as a C-ordered copy (1
#: thread, AMD EPYC Zen 5, float32 (N/4, 4).T along axis 1: 1K 8.4 -> 2.2 us, 8K
#: 19 -> 13, 64K 123 -> 116).
SORT_MAX_F = 1 << 16
#: The largest top_k taken (elements; F-ordered: :data:`TOP_K_MAX_F`, copied to C
#: order in the entry). Beyond, the planned kernel's filter, which reads only the
#: blocks that may hold one of the k, is faster (1 thread, AMD EPYC Zen 5, k = 10
#: of float32 (4, N/4): 1K 9.2 -> 2.4 us, 16K 12.2 -> 6.9, 64K 19.9 -> 21.2;
#: (N/4, 4).T: 8K 13.0 -> 10.0, 16K 16.4 -> 18.3).
TOP_K_MAX = 1 << 14
TOP_K_MAX_F = 1 << 13

#: id(dtype) -> (the finish entry, whether an ascending sort needs it: floats),
#: filled by :func:`take_sorts` with the dtypes NumPy sorts with SIMD.
_SORTS: dict[int, tuple] = {}
#: id(dtype) -> the top_k entry.
_TOP_K = {id(np.dtype(t)): top_k_entry(np.dtype(t).str)
          for t in (np.float32, np.float64, np.int32, np.int64)}
#: The least lane of a sort taken (``order.NUMPY_SORT_MIN``).
_sort_min = [1 << 62]


def take_sorts(dtypes, least: int) -> None:
    """Take the sorts of *dtypes* (those ``ndarray.sort`` sorts with SIMD on this
    CPU; ``order._SIMD_SORTED``), lanes of *least* elements and more."""
    _sort_min[0] = least
    for d in dtypes:
        if d.kind in "fiu":
            _SORTS[id(d)] = (sort_finisher(d.str), d.kind == "f")


def _last_of_small(ndim: int, axis) -> bool:
    """Whether *axis* is the last axis of an array of 1 or 2 dimensions (None: a
    1-D array): the small sort and top_k entries take those."""
    if axis is None:
        return ndim == 1
    return type(axis) is int and (axis == -1 or axis == ndim - 1) and 0 < ndim < 3


def sort(x, axis, descending):
    """NumPy's sort of a copy of *x*, finished into the one order, or None."""
    if type(x) is not np.ndarray or type(descending) is not bool:
        return None
    e = _SORTS.get(id(x.dtype))
    if e is None:
        return None
    ndim = x.ndim
    if not _last_of_small(ndim, axis):
        return None
    if x.shape[-1] < _sort_min[0]:
        return None
    flags = x.flags
    if flags.c_contiguous:
        if x.nbytes > SORT_MAX_BYTES:
            return None
    elif ndim != 2 or not flags.f_contiguous or x.size > SORT_MAX_F:
        return None
    if not flags.aligned:
        return None
    out = x.copy()  # C order
    out.sort(axis=-1)
    if descending or e[1]:
        e[0](out, x, descending)
    return out


def top_k(x, k, axis, mode, sorted_, index_dtype):
    """``(values, indices)`` of :func:`axisops.top_k` by the compiled entry, or None."""
    if type(x) is not np.ndarray or type(k) is not int or type(sorted_) is not bool:
        return None
    f = _TOP_K.get(id(x.dtype))
    if f is None:
        return None
    ndim = x.ndim
    if not _last_of_small(ndim, axis):
        return None
    shape = x.shape
    if not 0 < k <= SMALL_K or shape[-1] < TOP_K_BLOCK * k or x.size > TOP_K_MAX:
        return None
    if mode == "largest":
        descending = True
    elif mode == "smallest":
        descending = False
    else:
        return None
    if index_dtype is np.int64:
        index_type = np.int64
    elif index_dtype is np.int32:
        index_type = np.int32
    else:
        return None
    flags = x.flags
    if not flags.c_contiguous and (ndim != 2 or not flags.f_contiguous
                                   or x.size > TOP_K_MAX_F):
        return None
    if not flags.aligned:
        return None
    out_shape = (k,) if ndim == 1 else (shape[0], k)
    values = np.empty(out_shape, x.dtype)
    indices = np.empty(out_shape, index_type)
    f(x, k, descending, sorted_, values, indices)
    return values, indices

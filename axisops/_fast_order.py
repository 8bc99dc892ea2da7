"""The compiled call path of the small median and quantile.

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
"""
from __future__ import annotations

import numpy as np

from .kernels.order_entry import entries

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

    __slots__ = ("one", "lanes", "result")

    def __init__(self, dtype: np.dtype):
        self.one, self.lanes = entries(dtype.str)
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
    return out if e.lanes(x.reshape(-1), x.shape[-1], skip_nan, median, q, out.reshape(-1)) \
        else None


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

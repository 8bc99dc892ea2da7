"""Reference twins of the scans (see :mod:`axisops.reference`)."""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from ._common import AxisError, _as_input, _result_dtype
from .reduce import _index_dtype

# ----------------------------------------------------------------------------- scans

class ScanResult(tuple):
    """``(values, indices)`` of :func:`cummax`/:func:`cummin`, as ``torch.return_types``."""

    __slots__ = ()

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return f"ScanResult(values={self[0]!r}, indices={self[1]!r})"


def _scan_axis(axis, ndim, op):
    """The scanned axis as a non-negative int, or ``None`` for the flattened array.

    >>> _scan_axis(-1, 3, "cumsum"), _scan_axis(None, 0, "cumsum")
    (2, None)
    """
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be an int or None (a scan runs along one axis), "
                        f"got {axis!r}")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: axis must be an int or None, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim)
    return a % ndim


def _scan_shape(shape, axis):
    """Shape of a scan's output: *shape*, or ``(size,)`` flattened (``()`` stays 0-d)."""
    if axis is None and len(shape) >= 1:
        return (math.prod(shape),)
    return tuple(shape)


def _lanes(x, axis):
    """*x* as a 2-D array ``(lanes, n)`` whose rows are the scanned lanes."""
    if axis is None:
        return x.reshape(1, x.size)
    moved = np.moveaxis(x, axis, -1)
    n = x.shape[axis]
    return moved.reshape(math.prod(moved.shape[:-1]), n)


def _unlanes(lanes, shape, axis):
    """Inverse of :func:`_lanes`: a C-contiguous array of the scan's output shape."""
    if axis is None:
        return np.array(lanes.reshape(_scan_shape(shape, None)), order="C")
    moved_shape = tuple(n for d, n in enumerate(shape) if d != axis) + (shape[axis],)
    return np.array(np.moveaxis(lanes.reshape(moved_shape), -1, axis), order="C")


def _directed(scan, lanes, exclusive, reverse, identity):
    """``scan`` (an inclusive forward scan along axis 1) made exclusive and/or reversed.

    Reverse scans the flipped lanes and flips back; exclusive shifts the inclusive
    scan right by one and puts *identity* first (ONNX CumSum).
    """
    if reverse:
        lanes = lanes[:, ::-1]
    out = scan(lanes)
    if exclusive:
        out = np.concatenate([np.full((out.shape[0], 1 if out.shape[1] else 0), identity, out.dtype),
                              out[:, :-1]], axis=1)
    return out[:, ::-1] if reverse else out


def _accumulate(op, x, axis, dtype, exclusive, reverse):
    """cumsum/cumprod: NumPy's result dtype, 64-bit integer and float32 (for float16)
    accumulators, each output cast to the result dtype once."""
    probe = {"cumsum": np.cumsum, "cumprod": np.cumprod}[op]
    x = _as_input(x, op, complex_ok=True)
    axis = _scan_axis(axis, x.ndim, op)
    res = _result_dtype(probe, x.dtype, dtype, op)
    if res.kind == "b":
        acc = res
        ufunc = np.logical_or if op == "cumsum" else np.logical_and
        scan = lambda a: ufunc.accumulate(a, axis=1)  # noqa: E731
    else:
        acc = {"i": np.dtype(np.int64), "u": np.dtype(np.uint64)}.get(
            res.kind, np.dtype(np.float32) if res == np.float16 else res)
        scan = lambda a: probe(a, axis=1, dtype=acc)  # noqa: E731 - a serial accumulation
    identity = 0 if op == "cumsum" else 1
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # nan -> int casts, overflow
        lanes = _lanes(x, axis).astype(acc)
        out = _directed(scan, lanes, exclusive, reverse, identity).astype(res)
    return _unlanes(out, x.shape, axis)


def cumsum(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """Cumulative sum along *axis* (``None``: the flattened array), as ``np.cumsum``.

    *exclusive* leaves each element out of its own sum and *reverse* sums from the
    end, as ONNX CumSum. Integers wrap as NumPy's do; float16 accumulates in float32.

    >>> cumsum([[1, 2, 3], [4, 5, 6]], axis=1)
    array([[ 1,  3,  6],
           [ 4,  9, 15]])
    >>> cumsum([1, 2, 3], exclusive=True), cumsum([1, 2, 3], reverse=True)
    (array([0, 1, 3]), array([6, 5, 3]))
    >>> cumsum([1, 2, 3], exclusive=True, reverse=True)
    array([5, 3, 0])
    >>> cumsum(np.array([200, 100], np.uint8), dtype=np.uint8)
    array([200,  44], dtype=uint8)
    >>> float(cumsum(np.ones(5000, np.float16))[-1])
    5000.0
    >>> cumsum([False, True, False], dtype=bool)
    array([False,  True,  True])
    >>> cumsum(np.float32(2.5)), cumsum(np.float32(2.5), exclusive=True)
    (array(2.5, dtype=float32), array(0., dtype=float32))
    """
    return _accumulate("cumsum", x, axis, dtype, exclusive, reverse)


def cumprod(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """Cumulative product along *axis*; see :func:`cumsum` (identity 1).

    >>> cumprod([[1, 2, 3], [4, 5, 6]], axis=0)
    array([[ 1,  2,  3],
           [ 4, 10, 18]])
    >>> cumprod([2.0, 3.0, 4.0], exclusive=True, reverse=True)
    array([12.,  4.,  1.])
    """
    return _accumulate("cumprod", x, axis, dtype, exclusive, reverse)


def _cum_extreme(op, x, axis, index_dtype):
    """cummax/cummin by the torch rule, written without a loop over the axis.

    The running state starts at element 0, and element ``j`` takes over (value and
    index) when ``isnan(x[j]) or (not isnan(cur) and x[j] >= cur)`` (``<=`` for
    cummin). Before the first NaN the running value is the prefix maximum ``M``
    (``np.maximum.accumulate``, which propagates NaN), and ``j`` takes over exactly
    when ``x[j] == M[j]``; from the first NaN on, ``M`` is NaN, nothing equals it
    and exactly the NaNs take over. So the index at ``j`` is the last ``k <= j``
    with ``isnan(x[k]) or x[k] == M[k]``, and the values are the elements at the
    indices (bit for bit: the -0.0 or 0.0, the NaN payload that was taken).
    """
    x = _as_input(x, op)
    index_dtype = _index_dtype(index_dtype, op)
    axis = _scan_axis(axis, x.ndim, op)
    n = x.size if axis is None else x.shape[axis]
    if n - 1 > np.iinfo(index_dtype).max:
        raise OverflowError(f"{op}: indices up to {n - 1} do not fit {index_dtype}")
    lanes = _lanes(x, axis)
    ufunc = np.maximum if op == "cummax" else np.minimum
    running = ufunc.accumulate(lanes, axis=1)
    with np.errstate(invalid="ignore"):
        takes_over = lanes == running
        if lanes.dtype.kind == "f":
            takes_over |= np.isnan(lanes)
    positions = np.where(takes_over, np.arange(n, dtype=np.int64), 0)
    idx = np.maximum.accumulate(positions, axis=1) if n else positions
    vals = np.take_along_axis(lanes, idx, axis=1)
    return ScanResult(_unlanes(vals, x.shape, axis),
                      _unlanes(idx.astype(index_dtype), x.shape, axis))


def cummax(x, axis=None, *, index_dtype=np.int64):
    """Running maximum and its index along *axis*, exactly as ``torch.cummax``.

    Returns ``(values, indices)``. A tie takes over the index (the last of equal
    values wins); a NaN becomes the running value and stays, and each later NaN
    takes over the index.

    >>> cummax([1, 3, 2, 3, 0])
    ScanResult(values=array([1, 3, 3, 3, 3]), indices=array([0, 1, 1, 3, 3]))
    >>> v, i = cummax([1.0, np.nan, 5.0, np.nan, 2.0])
    >>> v, i
    (array([ 1., nan, nan, nan, nan]), array([0, 1, 1, 3, 3]))
    >>> cummax([-0.0, 0.0]).values, cummax([0.0, -0.0]).values
    (array([-0.,  0.]), array([ 0., -0.]))
    >>> cummax(np.float32(4.0), index_dtype=np.int32)
    ScanResult(values=array(4., dtype=float32), indices=array(0, dtype=int32))
    """
    return _cum_extreme("cummax", x, axis, index_dtype)


def cummin(x, axis=None, *, index_dtype=np.int64):
    """Running minimum and its index along *axis*, exactly as ``torch.cummin``.

    >>> cummin([[3, 1, 1, 2]], axis=1).indices
    array([[0, 1, 2, 2]])
    """
    return _cum_extreme("cummin", x, axis, index_dtype)


def logcumsumexp(x, axis=None):
    """``log(cumsum(exp(x)))`` along *axis*, stably, as ``torch.logcumsumexp``.

    Computed in float64 and rounded once to the result dtype: float dtypes keep
    theirs, bool and integers give float64. ``np.logaddexp.accumulate`` is
    torch's ``_log_add_exp_helper`` step for step (a NaN gives NaN; two equal
    infinities give that infinity; otherwise ``max + log1p(exp(min - max))``),
    and the first output is ``x[0]`` in both (torch starts from ``-inf``).

    >>> logcumsumexp([0.0, 0.0, np.log(2.0)])
    array([0.        , 0.69314718, 1.38629436])
    >>> logcumsumexp([-np.inf, -np.inf, 1000.0, np.inf, 1.0])
    array([ -inf,  -inf, 1000.,   inf,   inf])
    >>> logcumsumexp(np.array([1, 2], np.int8)).dtype
    dtype('float64')
    """
    x = _as_input(x, "logcumsumexp")
    axis = _scan_axis(axis, x.ndim, "logcumsumexp")
    res = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    lanes = _lanes(x, axis).astype(np.float64)
    with np.errstate(all="ignore"):
        out = np.logaddexp.accumulate(lanes, axis=1) if lanes.shape[1] else lanes
    return _unlanes(out.astype(res), x.shape, axis)

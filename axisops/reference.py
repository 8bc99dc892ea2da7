"""NumPy twins of the reductions, the scans and their gradients: the test oracle.

Every function here has the public signature of its namesake in :mod:`axisops`
and is written with plain NumPy, for clarity rather than speed: a reduction over
several axes moves them to the end and reshapes, an arg-reduction with
``select_last_index`` flips the block, a scan runs along the rows of a
``(lanes, n)`` view, a gradient is written from its definition.
This module imports only NumPy, so it can check the library without sharing any
of its code.

Decisions written down here (the contract, ``API.md``, leaves them open):

* ``axis`` out of range raises ``numpy.exceptions.AxisError``, also ``axis=0`` on a
  0-d array (NumPy's ``np.sum`` and ``np.argmax`` accept that as a legacy quirk,
  ``np.mean`` does not; the contract says out of range is an error).
* float16 accumulates in float32 and the result is rounded to float16 once
  (``np.sum`` of float16 accumulates in float16; ``np.mean`` already uses float32).
* ``argmax``/``argmin`` with ``axis=()`` reduce an empty set of axes: the block of
  reduced axes has one element, so every index is 0 (the contract's formula
  with ``moveaxis`` + ``reshape`` gives exactly that).
* ``index_dtype=int32`` raises ``OverflowError`` when the reduced block has more
  elements than int32 can index (a check on the shape, made before reducing).
* Gradients are returned in ``numpy.result_type(g, x)`` (``g``'s dtype for sum and
  mean), with ``x``'s shape. ``grad.max``/``grad.min`` follow ``torch.amax``'s
  backward formula literally, ``(g / count) * mask`` with
  ``mask = (x == max)``: ties share the gradient evenly, and a slice whose
  maximum is NaN has an all-False mask, so its whole gradient is NaN.
* Scans take one ``axis`` (an int, negative from the end) or ``None``, the
  flattened C-order array (a 1-D result of ``x.size``); a tuple or list ``axis`` is
  a ``TypeError``. A 0-d input with ``axis=None`` is a one-element scan that keeps
  its 0-d shape (``cumsum(x) == x``, exclusive gives the identity, ``cummax`` gives
  ``(x, 0)``); ``axis=0`` or ``-1`` on it is an ``AxisError``. Results are
  C-contiguous arrays, never NumPy scalars; zero-size inputs give zero-size results.
* ``cumsum``/``cumprod`` have ``np.cumsum``'s/``np.cumprod``'s result dtype (int8 and
  bool give int64, uint8 uint64, float16 float16). Integers accumulate in int64
  (uint64 for unsigned results) and each output wraps to the result dtype, as
  NumPy's do; float16 accumulates in float32 and each output is rounded once (a
  float16 cumsum of 5000 ones ends at 5000). ``dtype=bool`` is the logical or (and)
  accumulation. ``exclusive``/``reverse`` follow ONNX CumSum (exclusive: the
  identity first; reverse: from the end; both: ``sum over k > j``).
* ``cummax``/``cummin`` return ``(values, indices)`` by torch's rule: element ``j``
  takes over (value and index) when ``isnan(x[j]) or (not isnan(cur) and
  x[j] >= cur)`` (``<=`` for cummin). Ties go to the last; the values are the
  elements taken, bit for bit (``cummax([-0., 0.])`` is ``[-0., 0.]``); bool orders
  ``False < True``. ``index_dtype`` is int32 or int64 (else ``TypeError``), and
  int32 raises ``OverflowError`` when the scanned axis has more than ``2**31``
  elements, checked on the shape before scanning.
* ``logcumsumexp`` is torch's: each step is ``log_add_exp(x_j, acc)`` from ``-inf``
  (NaN gives NaN, equal infinities give that infinity, else
  ``max + log1p(exp(min - max))``), computed in float64 and rounded once; float
  dtypes keep theirs, bool and ints give float64.
* Scan gradients take ``g`` of the forward output's shape (``(size,)`` for
  ``axis=None`` on ``ndim >= 1``), else ``ValueError``, and return ``x``'s shape.
  ``grad.cumsum`` is the cumsum of ``g`` the other way (same ``exclusive``) in
  ``g``'s dtype; ``grad.cumprod`` is ``P_k * S_k`` from the definition (no
  division, exact with zeros) in ``result_type(x, g, float16)``;
  ``grad.cummax``/``grad.cummin`` scatter-add ``g`` at the indices in ``g``'s dtype
  (integer indices of ``g``'s shape in ``[0, n)``: ``TypeError``, ``ValueError``,
  ``IndexError`` naming the first bad one); ``grad.logcumsumexp`` is
  ``sum_{j>=k} g_j exp(x_k - y_j)`` with the factor 1 where ``x_k == y_j`` (so
  ``-inf`` prefixes pass ``g`` through), in logcumsumexp's result dtype.

Examples
--------
>>> import numpy as np
>>> from axisops import reference as ref
>>> x = np.array([[3, 1, 3], [0, 5, 2]])
>>> ref.sum(x, axis=1)
array([7, 7])
>>> ref.argmax(x, axis=1, select_last_index=True)
array([2, 1])
>>> idx = ref.argmax(x, axis=(0, 1))
>>> idx, ref.unravel(idx, x.shape, (0, 1))
(np.int64(4), (np.int64(1), np.int64(1)))
>>> ref.argmax(np.array([1.0, np.nan, 7.0, np.nan]))
np.int64(1)
>>> ref.grad.max(np.ones(2), x.astype(float), axis=1)
array([[0.5, 0. , 0.5],
       [0. , 1. , 0. ]])
>>> ref.grad.prod(np.ones(1), np.array([[0.0, 2.0, 3.0]]), axis=1)
array([[6., 0., 0.]])
>>> ref.cumsum(x, axis=1, exclusive=True)
array([[0, 3, 4],
       [0, 0, 5]])
>>> ref.cummax(x, axis=1)
ScanResult(values=array([[3, 3, 3],
       [0, 5, 5]]), indices=array([[0, 0, 2],
       [0, 1, 1]]))
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

try:  # NumPy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover - older NumPy
    AxisError = np.AxisError  # type: ignore[attr-defined]

__all__ = [
    "sum", "prod", "mean", "max", "min", "argmax", "argmin", "unravel",
    "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "ScanResult", "grad",
    "SUPPORTED_DTYPES",
]

#: The dtypes the contract supports, in a fixed order.
SUPPORTED_DTYPES = tuple(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64,
))


# --------------------------------------------------------------------------- helpers

def _as_input(x, op):
    """``np.asarray(x)``; ``TypeError`` naming *op* for a dtype outside the contract."""
    x = np.asarray(x)
    if x.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{op}: unsupported dtype {x.dtype}")
    return x


def _axes(axis, ndim, op):
    """Reduced axes as a sorted tuple of non-negative ints.

    >>> _axes(None, 3, "sum"), _axes(-1, 3, "sum"), _axes((2, 0), 3, "sum"), _axes((), 3, "sum")
    ((0, 1, 2), (2,), (0, 2), ())
    """
    if axis is None:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in items:
        try:
            a = operator.index(a)
        except TypeError:
            raise TypeError(f"{op}: axis must be an int, a tuple of ints or None, "
                            f"got {type(a).__name__}") from None
        if not -ndim <= a < ndim:
            raise AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {axis!r}")
    return tuple(sorted(out))


def _out_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _blocks(x, axes):
    """View *x* as ``(*kept, n)``: the reduced axes moved last, in C order, and merged."""
    kept = tuple(n for d, n in enumerate(x.shape) if d not in axes)
    n = math.prod(x.shape[a] for a in axes)
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    return moved.reshape(kept + (n,)), kept, n


def _unblocks(b, shape, axes):
    """Inverse of :func:`_blocks` for an array of shape ``(*kept, n)``."""
    kept = tuple(n for d, n in enumerate(shape) if d not in axes)
    moved = b.reshape(kept + tuple(shape[a] for a in axes))
    return np.moveaxis(moved, tuple(range(len(shape) - len(axes), len(shape))), axes)


def _result_dtype(probe_func, x_dtype, dtype, op):
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype not in SUPPORTED_DTYPES:
            raise TypeError(f"{op}: unsupported dtype {dtype}")
    return probe_func(np.zeros(1, x_dtype), dtype=dtype).dtype


def _accumulated(func, x, axes, keepdims, dtype, op):
    """``func`` (np.sum / np.prod / np.mean) with float16 accumulated in float32."""
    res = _result_dtype(func, x.dtype, dtype, op)
    acc = np.dtype(np.float32) if res == np.float16 else res
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # empty means, inf - inf, overflow
        out = func(x, axis=axes, keepdims=keepdims, dtype=acc)
        return np.asarray(out).astype(res, copy=False)[()]


# ------------------------------------------------------------------------ reductions

def sum(x, axis=None, *, keepdims=False, dtype=None):
    """Sum over *axis*, as ``np.sum`` (float16 accumulated in float32).

    >>> sum(np.arange(6, dtype=np.int8).reshape(2, 3), axis=(0, 1))
    np.int64(15)
    >>> sum(np.full(3, 100, np.uint8), dtype=np.uint8)
    np.uint8(44)
    """
    x = _as_input(x, "sum")
    return _accumulated(np.sum, x, _axes(axis, x.ndim, "sum"), keepdims, dtype, "sum")


def prod(x, axis=None, *, keepdims=False, dtype=None):
    """Product over *axis*, as ``np.prod`` (float16 accumulated in float32).

    >>> prod([[1, 2], [3, 4]], axis=0)
    array([3, 8])
    """
    x = _as_input(x, "prod")
    return _accumulated(np.prod, x, _axes(axis, x.ndim, "prod"), keepdims, dtype, "prod")


def mean(x, axis=None, *, keepdims=False, dtype=None):
    """Mean over *axis*, as ``np.mean`` (ints and bool give float64; empty gives NaN).

    >>> mean([[1, 2], [3, 4]], axis=1)
    array([1.5, 3.5])
    """
    x = _as_input(x, "mean")
    return _accumulated(np.mean, x, _axes(axis, x.ndim, "mean"), keepdims, dtype, "mean")


def _extreme(func, op, x, axis, keepdims):
    x = _as_input(x, op)
    axes = _axes(axis, x.ndim, op)  # NumPy raises ValueError over an empty axis
    return np.asarray(func(x, axis=axes, keepdims=keepdims))[()]


def max(x, axis=None, *, keepdims=False):
    """Maximum over *axis*, as ``np.max`` (NaN propagates).

    >>> max([[1, 5], [7, 2]], axis=1)
    array([5, 7])
    """
    return _extreme(np.max, "max", x, axis, keepdims)


def min(x, axis=None, *, keepdims=False):
    """Minimum over *axis*, as ``np.min`` (NaN propagates).

    >>> min([[1, 5], [7, 2]], axis=0)
    array([1, 2])
    """
    return _extreme(np.min, "min", x, axis, keepdims)


def _index_dtype(index_dtype, op):
    try:
        d = np.dtype(index_dtype)
    except TypeError:
        d = None
    if d not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"{op}: index_dtype must be int32 or int64, got {index_dtype!r}")
    return d


def _arg(func, op, x, axis, keepdims, select_last_index, index_dtype):
    x = _as_input(x, op)
    index_dtype = _index_dtype(index_dtype, op)
    axes = _axes(axis, x.ndim, op)
    n = math.prod(x.shape[a] for a in axes)
    if n == 0:
        raise ValueError(f"attempt to get {op} of an empty sequence")
    if n - 1 > np.iinfo(index_dtype).max:
        raise OverflowError(f"{op}: indices up to {n - 1} do not fit {index_dtype}")
    blocks, kept, n = _blocks(x, axes)
    if select_last_index:
        idx = n - 1 - func(blocks[..., ::-1], axis=-1)
    else:
        idx = func(blocks, axis=-1)
    idx = np.asarray(idx).reshape(_out_shape(x.shape, axes, keepdims))
    return idx.astype(index_dtype)[()]


def argmax(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64):
    """Index of the maximum over *axis*; a tuple *axis* indexes the C-ordered block.

    Ties and NaN: the first (the last with *select_last_index*) wins, a NaN beats
    every number.

    >>> argmax([[1, 9, 9], [4, 4, 0]], axis=1)
    array([1, 0])
    >>> argmax([[1, 9, 9], [4, 4, 0]], axis=1, select_last_index=True, index_dtype=np.int32)
    array([2, 1], dtype=int32)
    >>> argmax(np.arange(24).reshape(2, 3, 4) % 7, axis=(0, 2))
    array([5, 2, 4])
    """
    return _arg(np.argmax, "argmax", x, axis, keepdims, select_last_index, index_dtype)


def argmin(x, axis=None, *, keepdims=False, select_last_index=False, index_dtype=np.int64):
    """Index of the minimum over *axis*; see :func:`argmax`.

    >>> argmin([[3.0, np.nan, 0.0, np.nan]], axis=1, select_last_index=True)
    array([3])
    """
    return _arg(np.argmin, "argmin", x, axis, keepdims, select_last_index, index_dtype)


def unravel(idx, shape, axis):
    """Split a tuple-axis arg-reduction index into one index per reduced axis.

    Returns a tuple with one int64 array per reduced axis (sorted), each with
    *idx*'s shape; for an int *axis* that is ``(idx,)``.

    >>> unravel(np.array([5, 0]), (2, 2, 3), (0, 2))
    (array([1, 0]), array([2, 0]))
    """
    shape = tuple(operator.index(n) for n in shape)
    idx = np.asarray(idx)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"unravel: indices must be integers, got {idx.dtype}")
    axes = _axes(axis, len(shape), "unravel")
    dims = tuple(shape[a] for a in axes)
    if idx.size and (idx.min() < 0 or idx.max() >= math.prod(dims)):
        raise IndexError(f"unravel: index out of range [0, {math.prod(dims)})")
    if not dims:
        return ()
    return tuple(np.asarray(i, dtype=np.int64)[()] for i in np.unravel_index(idx, dims))


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
    x = _as_input(x, op)
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


# ------------------------------------------------------------------------- gradients

def _expand(g, x_shape, axes, keepdims, op):
    """*g* with the reduced axes as size-1 dimensions (``ValueError`` on a bad shape)."""
    g = np.asarray(g)
    want = _out_shape(x_shape, axes, keepdims)
    if g.shape != want:
        raise ValueError(f"grad.{op}: g has shape {g.shape}, expected {want}")
    return g.reshape(_out_shape(x_shape, axes, True))


def _scan_g(g, x_shape, axis, op):
    """*g* as an array of the scan's output shape (``ValueError`` otherwise)."""
    g = _as_input(g, f"grad.{op}")
    want = _scan_shape(x_shape, axis)
    if g.shape != want:
        raise ValueError(f"grad.{op}: g has shape {g.shape}, expected {want}")
    return g


class grad:
    """Reference vector-Jacobian products of the reductions and scans (``axisops.grad``)."""

    @staticmethod
    def sum(g, x_shape, axis=None, keepdims=False):
        """``g`` broadcast back over the reduced axes.

        >>> grad.sum(np.array([1.0, 2.0]), (2, 3), axis=1)
        array([[1., 1., 1.],
               [2., 2., 2.]])
        """
        x_shape = tuple(operator.index(n) for n in x_shape)
        axes = _axes(axis, len(x_shape), "grad.sum")
        g = _expand(g, x_shape, axes, keepdims, "sum")
        return np.array(np.broadcast_to(g, x_shape))

    @staticmethod
    def mean(g, x_shape, axis=None, keepdims=False):
        """``g / n`` broadcast back over the reduced axes (``n`` reduced elements).

        >>> grad.mean(np.array(1.0), (2, 2))
        array([[0.25, 0.25],
               [0.25, 0.25]])
        """
        x_shape = tuple(operator.index(n) for n in x_shape)
        axes = _axes(axis, len(x_shape), "grad.mean")
        g = _expand(g, x_shape, axes, keepdims, "mean")
        n = math.prod(x_shape[a] for a in axes)
        res = np.result_type(g.dtype, np.float16)
        with np.errstate(all="ignore"):
            out = g.astype(np.float64) / n if n else g.astype(np.float64)
        return np.array(np.broadcast_to(out.astype(res), x_shape))

    @staticmethod
    def prod(g, x, axis=None, keepdims=False):
        """``g`` times the product of the *other* elements, without dividing.

        Exact with zeros: the product of the others is the exclusive prefix product
        times the exclusive suffix product.

        >>> grad.prod(np.array(1.0), np.array([2.0, 0.0, 0.0]))
        array([0., 0., 0.])
        >>> grad.prod(np.array(1.0), np.array([2.0, 0.0, 5.0]))
        array([ 0., 10.,  0.])
        """
        x = _as_input(x, "grad.prod")
        axes = _axes(axis, x.ndim, "grad.prod")
        g = _expand(g, x.shape, axes, keepdims, "prod")
        res = np.result_type(g.dtype, x.dtype)
        acc = np.float32 if res == np.float16 else res
        if x.size == 0:
            return np.zeros(x.shape, res)
        blocks, kept, n = _blocks(x.astype(acc), axes)
        ones = np.ones(kept + (1,), acc)
        with np.errstate(all="ignore"):
            before = np.cumprod(np.concatenate([ones, blocks[..., :-1]], -1), -1)
            after = np.cumprod(np.concatenate([ones, blocks[..., :0:-1]], -1), -1)[..., ::-1]
            others = _unblocks(before * after, x.shape, axes)
            out = g.astype(acc) * others
        return np.array(out, dtype=res, order="C")  # (ascontiguousarray makes 0-d 1-d)

    @staticmethod
    def max(g, x, axis=None, keepdims=False):
        """``g`` split evenly between the elements equal to the maximum (``torch.amax``).

        >>> grad.max(np.array(1.0), np.array([2.0, np.nan, 1.0]))
        array([nan, nan, nan])
        """
        return grad._extreme(np.max, "max", g, x, axis, keepdims)

    @staticmethod
    def min(g, x, axis=None, keepdims=False):
        """``g`` split evenly between the elements equal to the minimum (``torch.amin``).

        >>> grad.min(np.array(6.0), np.array([1.0, 4.0, 1.0, 1.0]))
        array([2., 0., 2., 2.])
        """
        return grad._extreme(np.min, "min", g, x, axis, keepdims)

    @staticmethod
    def _extreme(func, op, g, x, axis, keepdims):
        x = _as_input(x, f"grad.{op}")
        axes = _axes(axis, x.ndim, f"grad.{op}")
        g = _expand(g, x.shape, axes, keepdims, op)
        res = np.result_type(g.dtype, x.dtype)
        acc = np.float32 if res == np.float16 else res
        mask = x == func(x, axis=axes, keepdims=True)  # ValueError over an empty axis
        count = np.sum(mask, axis=axes, keepdims=True)
        with np.errstate(all="ignore"):
            out = (g.astype(acc) / count.astype(acc)) * mask
        return np.array(out, dtype=res, order="C")  # (ascontiguousarray makes 0-d 1-d)

    # ------------------------------------------------------------------- scans

    @staticmethod
    def cumsum(g, x_shape, axis=None, exclusive=False, reverse=False):
        """The cumulative sum of ``g`` in the opposite direction (same *exclusive*).

        In ``g``'s dtype (float16 accumulated in float32), with ``x_shape``.

        >>> grad.cumsum(np.array([1.0, 2.0, 3.0]), (3,))
        array([6., 5., 3.])
        >>> grad.cumsum(np.array([1.0, 2.0, 3.0]), (3,), exclusive=True, reverse=True)
        array([0., 1., 3.])
        >>> grad.cumsum(np.arange(6.0), [2, 3])
        array([[15., 15., 14.],
               [12.,  9.,  5.]])
        """
        x_shape = tuple(operator.index(n) for n in x_shape)
        axis = _scan_axis(axis, len(x_shape), "grad.cumsum")
        g = _scan_g(g, x_shape, axis, "cumsum")
        out = cumsum(g.reshape(x_shape), axis, dtype=g.dtype, exclusive=exclusive,
                     reverse=not reverse)
        return out.reshape(x_shape)

    @staticmethod
    def cumprod(g, x, axis=None, exclusive=False, reverse=False):
        """From the definition, without dividing: exact with zeros in ``x``.

        Along a lane (forward, inclusive) ``dx_k = P_k * S_k`` with the exclusive
        prefix product ``P_k = prod_{i<k} x_i`` and
        ``S_k = sum_{j>=k} g_j * prod_{k<i<=j} x_i``; exclusive:
        ``S_k = sum_{j>k} g_j * prod_{k<i<j} x_i``; reverse is the same on the
        flipped lane. ``S_k`` is summed in nested form, ``g_k + x_{k+1} (g_{k+1} +
        x_{k+2} (...))``, so a factor multiplies only the terms that contain it: with
        infinities in ``x`` that gives inf where the expanded sum would add inf and
        inf * 0. A double loop over the lane, in the result dtype
        ``result_type(x, g, float16)`` (float16 in float32).

        >>> grad.cumprod(np.ones(3), np.array([2.0, 0.0, 5.0]))
        array([ 1., 12.,  0.])
        >>> grad.cumprod(np.ones(3), np.array([2.0, 3.0, 5.0]), exclusive=True)
        array([4., 2., 0.])
        """
        x = _as_input(x, "grad.cumprod")
        axis = _scan_axis(axis, x.ndim, "grad.cumprod")
        g = _scan_g(g, x.shape, axis, "cumprod")
        res = np.result_type(x.dtype, g.dtype, np.float16)
        acc = np.dtype(np.float32) if res == np.float16 else res
        xl = _lanes(x, axis).astype(acc)
        gl = _lanes(g.reshape(x.shape), axis).astype(acc)
        if reverse:
            xl, gl = xl[:, ::-1], gl[:, ::-1]
        m, n = xl.shape
        out = np.zeros((m, n), acc)
        with np.errstate(all="ignore"):
            before = np.ones((m, n), acc)            # P_k
            for k in range(1, n):
                before[:, k] = before[:, k - 1] * xl[:, k - 1]
            for k in range(n):
                # S_k in nested (Horner) form, innermost first: inclusive
                # g_k + x_{k+1} (g_{k+1} + x_{k+2} (...)); exclusive
                # g_{k+1} + x_{k+1} (g_{k+2} + x_{k+2} (...)).
                first, shift = (k + 1, 0) if exclusive else (k, 1)
                total = np.zeros(m, acc)
                for j in range(n - 1, first - 1, -1):
                    total = gl[:, j] if j == n - 1 else gl[:, j] + xl[:, j + shift] * total
                out[:, k] = before[:, k] * total
        if reverse:
            out = out[:, ::-1]
        return _unlanes(out.astype(res), x.shape, axis).reshape(x.shape)

    @staticmethod
    def cummax(g, indices, x_shape, axis=None):
        """``zeros(x_shape)`` with ``g`` added at *indices* along *axis* (Paddle, torch).

        >>> v, i = cummax(np.array([1.0, 3.0, 2.0, 3.0]))
        >>> grad.cummax(np.array([1.0, 2.0, 4.0, 8.0]), i, (4,))
        array([1., 6., 0., 8.])
        """
        return grad._scatter_add("cummax", g, indices, x_shape, axis)

    @staticmethod
    def cummin(g, indices, x_shape, axis=None):
        """As :meth:`cummax`: ``g`` scatter-added at the indices of the running minima.

        >>> grad.cummin(np.ones((1, 3)), np.array([[0, 0, 2]]), (1, 3), axis=1)
        array([[2., 0., 1.]])
        """
        return grad._scatter_add("cummin", g, indices, x_shape, axis)

    @staticmethod
    def _scatter_add(op, g, indices, x_shape, axis):
        x_shape = tuple(operator.index(n) for n in x_shape)
        axis = _scan_axis(axis, len(x_shape), f"grad.{op}")
        g = _scan_g(g, x_shape, axis, op)
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise TypeError(f"grad.{op}: indices must be integers, got {indices.dtype}")
        if indices.shape != g.shape:
            raise ValueError(f"grad.{op}: indices have shape {indices.shape}, "
                             f"expected g's shape {g.shape}")
        n = math.prod(x_shape) if axis is None else x_shape[axis]
        bad = (indices < 0) | (indices >= n)
        if np.any(bad):
            pos = tuple(int(i) for i in np.argwhere(bad)[0])
            raise IndexError(f"grad.{op}: index {indices[pos]} at position {pos} is out "
                             f"of range [0, {n})")
        res = g.dtype
        acc = {"i": np.dtype(np.int64), "u": np.dtype(np.uint64),
               "f": np.dtype(np.float32) if res == np.float16 else res}.get(res.kind, res)
        gl = _lanes(g.reshape(x_shape), axis).astype(acc)
        il = _lanes(indices.reshape(x_shape), axis).astype(np.int64)
        out = np.zeros(gl.shape, acc)
        rows = np.broadcast_to(np.arange(gl.shape[0])[:, None], il.shape)
        with np.errstate(all="ignore"):
            np.add.at(out, (rows, il), gl)  # serial, in the order of j along each lane
        return _unlanes(out.astype(res), x_shape, axis).reshape(x_shape)

    @staticmethod
    def logcumsumexp(g, x, axis=None):
        """``dx_k = sum_{j>=k} g_j * exp(x_k - y_j)`` with ``y = logcumsumexp(x)``.

        The factor ``exp(x_k - y_j)`` is 1 where ``x_k == y_j`` (also both ``-inf``
        or both ``+inf``), so a ``-inf`` prefix passes ``g`` straight through; a NaN
        in a lane makes the lane's gradient NaN. Computed in float64 by a double
        loop and rounded once: float dtypes keep theirs, bool and ints give float64.

        >>> grad.logcumsumexp(np.array([1.0, 1.0]), np.array([0.0, 0.0]))
        array([1.5, 0.5])
        >>> grad.logcumsumexp(np.array([2.0, 3.0]), np.array([-np.inf, 1.0]))
        array([2., 3.])
        """
        x = _as_input(x, "grad.logcumsumexp")
        axis = _scan_axis(axis, x.ndim, "grad.logcumsumexp")
        g = _scan_g(g, x.shape, axis, "logcumsumexp")
        res = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        xl = _lanes(x, axis).astype(np.float64)
        gl = _lanes(g.reshape(x.shape), axis).astype(np.float64)
        m, n = xl.shape
        out = np.zeros((m, n))
        with np.errstate(all="ignore"):
            yl = np.logaddexp.accumulate(xl, axis=1) if n else xl
            for k in range(n):
                for j in range(k, n):
                    same = xl[:, k] == yl[:, j]
                    out[:, k] += gl[:, j] * np.where(same, 1.0, np.exp(xl[:, k] - yl[:, j]))
        return _unlanes(out.astype(res), x.shape, axis).reshape(x.shape)

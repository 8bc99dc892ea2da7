"""NumPy twins of the reductions, scans, gathers, scatter, unfold, fold and their gradients:
the test oracle.

Every function here has the public signature of its namesake in :mod:`axisops`
and is written with plain NumPy, for clarity rather than speed: a reduction over
several axes moves them to the end and reshapes, an arg-reduction with
``select_last_index`` flips the block, a scan runs along the rows of a
``(lanes, n)`` view, unfold and fold loop over kernel offsets and output positions
with ``np.ndindex``, a gradient is written from its definition.
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
* Gathers and scatter (``take``, ``take_along_axis``, ``gather_nd``, ``scatter``) take
  indices of any integer dtype (a uint64 above ``2**63`` is just out of range; float
  and bool indices are a ``TypeError``), resolved one at a time as Python ints.
  Every index is checked, also where the result is empty because another dimension
  is 0: an ``IndexError`` names the first bad one in C order of the indices as given,
  its position and ``[-n, n)``, exactly as ``axisops._indices.check_in_range`` does.
  ``mode``: ``"raise"``, ``"wrap"`` (``i % n``), ``"clip"`` (to ``[0, n-1]``, as NumPy)
  or ``"fill"``; indices into an empty axis are an ``IndexError`` except with
  ``"fill"``. ``fill_value`` is a real number; for an integer or bool x it must be
  exactly a value of x's dtype (compared as Python numbers; NaN is no int), for a
  float x it is rounded to x's dtype unless a finite value overflows to inf; it is
  looked at only with ``"fill"``. Results are new C-contiguous
  arrays of x's dtype (0-d stays 0-d).
* ``take_along_axis`` meets sizes off the axis by NumPy's broadcasting (a 1 on either
  side) or, where indices are smaller and not 1, uses the leading part of ``x``
  (torch.gather). ``gather_nd`` is ONNX GatherND with ``1 <= q <= x.ndim - batch_dims``.
* ``scatter`` combines ``updates`` (indices' shape, larger: the leading part, or
  broadcast; cast to x's dtype by ``same_kind``) one position at a time in C order of
  the indices: last write wins, ``"add"``/``"mul"`` in x's dtype (integers wrap,
  float16 in float32 rounded once, bool or/and), ``"max"``/``"min"`` keep a NaN and,
  on a tie, the value already there.
* Their gradients are in ``g``'s dtype (integer and bool ``g`` give float64; float16
  accumulates in float32), summed sequentially in C order; ``grad.scatter`` follows
  ``torch.scatter_reduce(include_self=True)`` except that ``reduce=None`` gives the
  overwritten updates 0 and NaN counts as equal to NaN for ``"max"``/``"min"``.
* ``unfold``/``fold``: ``kernel_size`` is an int (2-D) or 1 to 3 ints >= 1 (bad
  length or value: ``ValueError``, entries that are not ints: ``TypeError``);
  ``dilation`` and ``stride`` an int or one per spatial dim, >= 1, ``output_size``
  the same >= 0, ``padding`` an int, one int per dim or one ``(begin, end)`` pair per
  dim, >= 0 (anything else, non-ints included: ``ValueError``). A padded size
  smaller than the dilated kernel is a ``ValueError`` naming the dim and both sizes.
  ``x`` has ``d + 2`` or ``d + 1`` (unbatched) dimensions, ``cols`` 3 or 2; a wrong
  ``L`` or a channel size not divisible by ``K`` is a ``ValueError`` showing the
  expected shape. ``fold`` adds in increasing kernel index from 0 in cols' dtype
  (float16 in float32, rounded once; integers wrap; bool: or). ``grad.unfold`` is a
  fold, ``grad.fold`` an unfold, in g's dtype (integer and bool ``g``: float64).

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
>>> ref.take(x, [2, -1], axis=1, mode="wrap"), ref.take_along_axis(x, np.array([[1], [0]]), 1)
(array([[3, 3],
       [2, 2]]), array([[1],
       [0]]))
>>> ref.scatter(x, np.array([[0, 0, 2]]), np.array([[10, 20, 30]]), axis=1, reduce="add")
array([[33,  1, 33],
       [ 0,  5,  2]])
"""
from __future__ import annotations

import builtins
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
    "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "ScanResult",
    "take", "take_along_axis", "gather_nd", "scatter", "unfold", "fold", "grad",
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


# ----------------------------------------------------------------- gather and scatter

_MODES = ("raise", "wrap", "clip", "fill")
_REDUCES = (None, "add", "mul", "max", "min")


def _gather_axis(axis, ndim, op, *, none=True):
    """One axis as a non-negative int; ``None`` stays ``None`` where *none* allows it.

    >>> _gather_axis(-1, 3, "take"), _gather_axis(None, 0, "take")
    (2, None)
    """
    if axis is None:
        if none:
            return None
        raise TypeError(f"{op}: axis must be an int, got None")
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: axis must be an int, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim)
    return a % ndim


def _as_indices(indices, op):
    """``np.asarray(indices)``, which must be of an integer dtype (``TypeError``)."""
    a = np.asarray(indices)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got {a.dtype}")
    return a


def _check_range(indices, low, high, op):
    """``IndexError`` naming the first index (C order) outside ``[low, high)``.

    The message is ``axisops._indices.check_in_range``'s, written again here.

    >>> _check_range(np.array([[0, 2], [7, -9]]), -5, 5, "take")
    Traceback (most recent call last):
    ...
    IndexError: take: index 7 at position (1, 0) of indices is out of range [-5, 5)
    """
    for pos in np.ndindex(indices.shape):
        if not low <= int(indices[pos]) < high:
            raise IndexError(f"{op}: index {indices[pos]} at position {pos} of indices "
                             f"is out of range [{low}, {high})")


def _mode(mode, op):
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {', '.join(map(repr, _MODES))}, "
                         f"got {mode!r}")
    return mode


def _fill_value(fill_value, dtype, op):
    """*fill_value* as a scalar of *dtype*: rounded for a float dtype, exact otherwise.

    For an integer or bool dtype the comparison is exact (Python numbers), so 1.5 or
    NaN is no int; for a float dtype the value is rounded (0.1 is float32's 0.1),
    but a finite value that overflows to inf is a ``ValueError``.

    >>> _fill_value(-1, np.dtype(np.int8), "take"), _fill_value(True, np.dtype(np.float16), "take")
    (np.int8(-1), np.float16(1.0))
    >>> _fill_value(300, np.dtype(np.uint8), "take")
    Traceback (most recent call last):
    ...
    ValueError: take: fill_value 300 cannot be represented in uint8
    """
    v = np.asarray(fill_value)
    if v.ndim != 0 or v.dtype.kind not in "biuf":
        raise ValueError(f"{op}: fill_value must be a real number, got {fill_value!r}")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # nan -> int, overflow
        cast = v.astype(dtype)
    a, b = cast.item(), v.item()
    if dtype.kind == "f":
        if math.isinf(a) and not math.isinf(b):
            raise ValueError(f"{op}: fill_value {fill_value!r} cannot be represented in {dtype}")
    elif a != b:
        raise ValueError(f"{op}: fill_value {fill_value!r} cannot be represented in {dtype}")
    return cast[()]


def _resolve(indices, n, mode, op):
    """Each index as a position in ``[0, n)``, and whether it is used (not filled).

    ``raise``: ``[-n, n)`` or ``IndexError``; ``wrap``: Python's ``i % n``;
    ``clip``: ``min(max(i, 0), n - 1)``; ``fill``: ``[-n, n)`` and the rest unused.
    A non-empty *indices* on an empty axis is an ``IndexError`` in every mode but
    ``fill``. Returns two arrays of *indices*' shape: int64 positions and bools.

    >>> _resolve(np.array([-1, 5, 2]), 3, "wrap", "take")
    (array([2, 2, 2]), array([ True,  True,  True]))
    >>> _resolve(np.array([-7, 5, 2], np.int8), 3, "clip", "take")[0]
    array([0, 2, 2])
    >>> _resolve(np.array([-4, -3, 3]), 3, "fill", "take")
    (array([0, 0, 0]), array([False,  True, False]))
    """
    if mode == "raise":
        _check_range(indices, -n, n, op)
    if n == 0 and indices.size and mode in ("wrap", "clip"):
        raise IndexError(f"{op}: cannot index an empty axis (mode={mode!r})")
    pos = np.zeros(indices.shape, np.int64)
    used = np.ones(indices.shape, bool)
    for p in np.ndindex(indices.shape):
        i = int(indices[p])  # a Python int: uint64 above 2**63 stays what it is
        if mode == "wrap":
            pos[p] = i % n
        elif mode == "clip":
            pos[p] = builtins.min(builtins.max(i, 0), n - 1)
        elif -n <= i < n:
            pos[p] = i % n
        else:
            used[p] = False
    return pos, used


def take(x, indices, axis=None, *, mode="raise", fill_value=0):
    """Elements of *x* at *indices* along *axis*, as ``np.take`` and ONNX Gather.

    The result has shape ``x.shape[:axis] + indices.shape + x.shape[axis+1:]``;
    ``axis=None`` takes from the C-ordered flattened array. One index at a time,
    each copying a whole ``x.shape[:axis] + x.shape[axis+1:]`` block.

    >>> x = np.array([[1, 2, 3], [4, 5, 6]])
    >>> take(x, [[2, -1], [0, 0]], axis=1)
    array([[[3, 3],
            [1, 1]],
    <BLANKLINE>
           [[6, 6],
            [4, 4]]])
    >>> take(x, 4), take(x, [7, -8], mode="wrap"), take(x, [7, -8], mode="clip")
    (array(5), array([2, 5]), array([6, 1]))
    >>> take(x, [1, 3], axis=0, mode="fill", fill_value=-1)
    array([[ 4,  5,  6],
           [-1, -1, -1]])
    >>> take(x, [0, 2], axis=0)
    Traceback (most recent call last):
    ...
    IndexError: take: index 2 at position (1,) of indices is out of range [-2, 2)
    """
    op = "take"
    x = _as_input(x, op)
    indices = _as_indices(indices, op)
    axis = _gather_axis(axis, x.ndim, op)
    mode = _mode(mode, op)
    fill = _fill_value(fill_value, x.dtype, op) if mode == "fill" else None
    src, ax = (x.reshape(-1), 0) if axis is None else (x, axis)
    pos, used = _resolve(indices, src.shape[ax], mode, op)
    lead = (slice(None),) * ax
    out = np.empty(src.shape[:ax] + indices.shape + src.shape[ax + 1:], x.dtype)
    for p in np.ndindex(indices.shape):
        out[lead + p] = src[lead + (pos[p],)] if used[p] else fill
    return out


def _along_shape(x_shape, i_shape, ax, op):
    """Result shape of :func:`take_along_axis` (``ValueError`` where the sizes cannot meet).

    Off the axis a size of *indices* equal to *x*'s, or 1, gives *x*'s; a size 1 in
    *x* gives *indices*'; a smaller size of *indices* gives its own (the leading
    part of *x*, as ``torch.gather``).

    >>> _along_shape((4, 1, 5, 6), (1, 3, 2, 9), 3, "take_along_axis")
    (4, 3, 2, 9)
    """
    shape = []
    for d, (xi, ii) in enumerate(zip(x_shape, i_shape)):
        if d == ax:
            shape.append(ii)
        elif ii == xi or ii == 1:
            shape.append(xi)
        elif xi == 1 or ii < xi:
            shape.append(ii)
        else:
            raise ValueError(f"{op}: indices have size {ii} in dimension {d}, where x has "
                             f"{xi} (expected at most {xi}, or 1 on either side)")
    return tuple(shape)


def _along_positions(x_shape, i_shape, ax, shape):
    """Yield ``(p, ip, xp)``: each result position (C order), the position of its
    index in *indices*, and of its element in *x* with the axis coordinate left 0."""
    for p in np.ndindex(*shape):
        ip = tuple(0 if d != ax and i_shape[d] == 1 else c for d, c in enumerate(p))
        xp = tuple(0 if d == ax or x_shape[d] == 1 else c for d, c in enumerate(p))
        yield p, ip, xp


def _along_args(x_shape, indices, axis, op):
    """(x's shape as taken, the axis) for take_along_axis and its gradient."""
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"{op}: with axis=None indices must be 1-D, got {indices.ndim}-D")
        return (math.prod(x_shape),), 0
    if indices.ndim != len(x_shape):
        raise ValueError(f"{op}: indices have {indices.ndim} dimensions, expected x's "
                         f"{len(x_shape)}")
    return tuple(x_shape), _gather_axis(axis, len(x_shape), op)


def take_along_axis(x, indices, axis, *, mode="raise", fill_value=0):
    """``out[p] = x[p with p[axis] = indices[p]]``: ``np.take_along_axis``, ``torch.gather``.

    *indices* has ``x.ndim`` dimensions (1 with ``axis=None``, the flattened *x*).
    Off the axis the sizes meet as NumPy broadcasts (a 1 on either side), or a
    smaller size of *indices* uses only the leading part of *x* (torch, ONNX
    GatherElements). A loop over the result's positions.

    >>> x = np.array([[10, 11, 12], [20, 21, 22]])
    >>> take_along_axis(x, np.array([[2, 0], [-1, 1]]), axis=1)
    array([[12, 10],
           [22, 21]])
    >>> take_along_axis(x, np.array([[2, 0]]), axis=1)        # one row of indices for both
    array([[12, 10],
           [22, 20]])
    >>> take_along_axis(x, np.array([[1, 0]]), axis=0)        # the leading two columns
    array([[20, 11]])
    >>> take_along_axis(x, np.array([[3, -4], [0, -1]]), axis=1, mode="fill", fill_value=-1)
    array([[-1, -1],
           [20, 22]])
    """
    op = "take_along_axis"
    x = _as_input(x, op)
    indices = _as_indices(indices, op)
    x_shape, ax = _along_args(x.shape, indices, axis, op)
    mode = _mode(mode, op)
    fill = _fill_value(fill_value, x.dtype, op) if mode == "fill" else None
    src = x.reshape(x_shape)
    shape = _along_shape(x_shape, indices.shape, ax, op)
    pos, used = _resolve(indices, x_shape[ax], mode, op)
    out = np.empty(shape, x.dtype)
    for p, ip, xp in _along_positions(x_shape, indices.shape, ax, shape):
        out[p] = src[xp[:ax] + (pos[ip],) + xp[ax + 1:]] if used[ip] else fill
    return out


def _nd_args(x_shape, indices, batch_dims, op):
    """Check gather_nd's shapes; return ``(batch_dims, q)`` and ``IndexError`` on a bad index."""
    try:
        b = operator.index(batch_dims)
    except TypeError:
        raise TypeError(f"{op}: batch_dims must be an int, got "
                        f"{type(batch_dims).__name__}") from None
    if indices.ndim < 1:
        raise ValueError(f"{op}: indices must have at least 1 dimension")
    top = builtins.min(len(x_shape), indices.ndim)
    if not 0 <= b < top:
        raise ValueError(f"{op}: batch_dims must be in [0, {top}), "
                         f"got {b}")
    if tuple(x_shape[:b]) != indices.shape[:b]:
        raise ValueError(f"{op}: the batch dimensions of x {tuple(x_shape[:b])} and of "
                         f"indices {indices.shape[:b]} differ")
    q = indices.shape[-1]
    if not 1 <= q <= len(x_shape) - b:
        raise ValueError(f"{op}: indices.shape[-1] must be in [1, {len(x_shape) - b}], got {q}")
    for pos in np.ndindex(indices.shape):
        n = x_shape[b + pos[-1]]
        if not -n <= int(indices[pos]) < n:
            raise IndexError(f"{op}: index {indices[pos]} at position {pos} of indices "
                             f"is out of range [{-n}, {n})")
    return b, q


def _nd_source(p, indices, x_shape, b, q):
    """Where the slice for ``indices[p]`` starts in *x*: the batch position and the tuple."""
    return p[:b] + tuple(int(indices[p + (t,)]) % x_shape[b + t] for t in range(q))


def gather_nd(x, indices, *, batch_dims=0):
    """Slices of *x* at the index tuples in the last dimension of *indices* (ONNX GatherND).

    The first *batch_dims* dimensions of *x* and *indices* are shared; each
    ``indices[p]`` (``q`` components) indexes the next ``q`` dimensions of
    ``x[p[:batch_dims]]``. Result shape ``indices.shape[:-1] + x.shape[batch_dims+q:]``.

    >>> x = np.arange(12).reshape(2, 3, 2)
    >>> gather_nd(x, [[1, -1], [0, 0]])
    array([[10, 11],
           [ 0,  1]])
    >>> gather_nd(x, [[[2, 1]], [[0, 0]]], batch_dims=1)
    array([[5],
           [6]])
    >>> gather_nd(x, [[0, 3]])
    Traceback (most recent call last):
    ...
    IndexError: gather_nd: index 3 at position (0, 1) of indices is out of range [-3, 3)
    """
    op = "gather_nd"
    x = _as_input(x, op)
    indices = _as_indices(indices, op)
    b, q = _nd_args(x.shape, indices, batch_dims, op)
    out = np.empty(indices.shape[:-1] + x.shape[b + q:], x.dtype)
    for p in np.ndindex(indices.shape[:-1]):
        out[p] = x[_nd_source(p, indices, x.shape, b, q)]
    return out


def _as_updates(updates, x_dtype, op):
    """``np.asarray(updates)``, except that a Python bool, int or float is weakly typed
    (NumPy 2's NEP 50): it takes x's dtype when its kind may (bool into anything, int
    into ints and floats, float into floats), an int that does not fit is a
    ``ValueError``; anything else keeps its own dtype for the ``same_kind`` check."""
    kind = {bool: "b", int: "i", float: "f"}.get(type(updates))
    if kind is None:
        return np.asarray(updates)
    if kind == "i" and x_dtype.kind in "iu":
        info = np.iinfo(x_dtype)
        if not info.min <= updates <= info.max:
            raise ValueError(f"{op}: update {updates} does not fit {x_dtype}")
    if kind == "b" or (kind == "i" and x_dtype.kind in "iuf") or (kind == "f" and x_dtype.kind == "f"):
        with np.errstate(over="ignore"):
            return np.asarray(updates, dtype=x_dtype)
    return np.asarray(updates)


def _scatter_args(x_shape, indices, updates, axis, reduce, x_dtype, op):
    """Check scatter's arguments; return ``(axis, the updates used, one per index)``."""
    axis = _gather_axis(axis, len(x_shape), op, none=False)
    if not (reduce is None or (isinstance(reduce, str) and reduce in _REDUCES)):
        raise ValueError(f"{op}: reduce must be None, 'add', 'mul', 'max' or 'min', "
                         f"got {reduce!r}")
    if indices.ndim != len(x_shape):
        raise ValueError(f"{op}: indices have {indices.ndim} dimensions, expected x's "
                         f"{len(x_shape)}")
    for d, (xi, ii) in enumerate(zip(x_shape, indices.shape)):
        if d != axis and ii > xi:
            raise ValueError(f"{op}: indices have size {ii} in dimension {d}, more than "
                             f"x's {xi}")
    if updates.shape == indices.shape:
        used = updates
    elif updates.ndim == indices.ndim and all(u >= i for u, i in zip(updates.shape,
                                                                    indices.shape)):
        used = updates[tuple(slice(0, i) for i in indices.shape)]
    else:
        try:
            used = np.broadcast_to(updates, indices.shape)
        except ValueError:
            raise ValueError(f"{op}: updates of shape {updates.shape} do not fit indices of "
                             f"shape {indices.shape}") from None
    if not np.can_cast(updates.dtype, x_dtype, "same_kind"):
        raise TypeError(f"{op}: cannot cast updates from {updates.dtype} to {x_dtype}")
    _check_range(indices, -x_shape[axis], x_shape[axis], op)
    return axis, used


def _destinations(indices, axis, n):
    """``{destination: [positions of indices]}``, each list in C order of *indices*."""
    groups = {}
    for p in np.ndindex(indices.shape):
        dest = p[:axis] + (int(indices[p]) % n,) + p[axis + 1:]
        groups.setdefault(dest, []).append(p)
    return groups


def _takes_over(reduce, cur, v):
    """Whether update *v* replaces the value *cur* (max/min: NaN sticks, ties keep *cur*)."""
    if reduce is None:
        return True
    if cur != cur:  # NaN already there
        return False
    if v != v:
        return True
    return v > cur if reduce == "max" else v < cur


def scatter(x, indices, updates, axis, *, reduce=None):
    """A copy of *x* with *updates* combined in along *axis* at *indices* (ONNX ScatterElements).

    Position ``p`` of *indices* writes ``updates[p]`` to ``p`` with ``p[axis]``
    replaced by ``indices[p]``, one position at a time in C order: ``reduce=None``
    lets the last write win; ``"add"``/``"mul"`` combine in x's dtype (integers
    wrap; float16 in float32, rounded once at the end; bool: or/and); ``"max"``/
    ``"min"`` let a NaN stick and keep the value already there on a tie (bool:
    or/and). *updates* has indices' shape, or is larger (its leading part is
    used), or broadcasts to it; it casts to x's dtype by ``same_kind``.

    >>> x = np.zeros((2, 3))
    >>> scatter(x, np.array([[2, 0, 2]]), np.array([[1.0, 2.0, 3.0]]), axis=1)
    array([[2., 0., 3.],
           [0., 0., 0.]])
    >>> scatter(x, np.array([[2, 0, 2]]), np.array([[1.0, 2.0, 3.0]]), axis=1, reduce="add")
    array([[2., 0., 4.],
           [0., 0., 0.]])
    >>> scatter(np.array([1, 5], np.int8), np.array([0, 0, 1]), np.int8(100), 0, reduce="mul")
    array([ 16, -12], dtype=int8)
    >>> scatter(np.array([0.0, 1.0]), np.array([0, 1]), [np.nan, -1.0], 0, reduce="max")
    array([nan,  1.])
    """
    op = "scatter"
    x = _as_input(x, op)
    indices = _as_indices(indices, op)
    updates = _as_updates(updates, x.dtype, op)
    axis, used = _scatter_args(x.shape, indices, updates, axis, reduce, x.dtype, op)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # float64 -> float16 overflow
        used = used.astype(x.dtype)
    groups = _destinations(indices, axis, x.shape[axis])
    kind = x.dtype.kind
    if kind == "f":
        acc = np.float32 if x.dtype == np.float16 else x.dtype.type
        cur_of = lambda d: acc(x[d])  # noqa: E731
        val_of = lambda p: acc(used[p])  # noqa: E731
    else:  # Python ints (wrapped after each step) and bools
        cur_of = lambda d: x[d].item()  # noqa: E731
        val_of = lambda p: used[p].item()  # noqa: E731
    out = np.array(x, order="C")
    with np.errstate(all="ignore"):
        for d, ps in groups.items():
            cur = cur_of(d)
            for p in ps:  # sequentially, in C order of indices
                v = val_of(p)
                if kind == "b":
                    cur = {None: v, "add": cur or v, "mul": cur and v, "max": cur or v,
                           "min": cur and v}[reduce]
                elif reduce == "add":
                    cur = _wrap(cur + v, x.dtype)
                elif reduce == "mul":
                    cur = _wrap(cur * v, x.dtype)
                elif _takes_over(reduce, cur, v):
                    cur = v
            out[d] = cur
    return out


def _wrap(v, dtype):
    """An integer wrapped into *dtype*'s range (two's complement); floats as they are."""
    if dtype.kind not in "iu":
        return v
    bits = 8 * dtype.itemsize
    low = -(1 << (bits - 1)) if dtype.kind == "i" else 0
    return (v - low) % (1 << bits) + low


# ------------------------------------------------------------------- sliding windows

def _kernel(kernel_size, op):
    """*kernel_size* as a tuple of 1 to 3 ints >= 1; an int ``k`` means ``(k, k)``.

    Bad length or values: ``ValueError``; entries that are not ints: ``TypeError``.

    >>> _kernel(3, "unfold"), _kernel([2], "unfold"), _kernel((1, 2, 3), "unfold")
    ((3, 3), (2,), (1, 2, 3))
    >>> _kernel((2, 2.0), "unfold")
    Traceback (most recent call last):
    ...
    TypeError: unfold: kernel_size must be an int or a tuple of 1 to 3 ints, got (2, 2.0)
    """
    items = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 2
    if not 1 <= len(items) <= 3:
        raise ValueError(f"{op}: kernel_size must have 1, 2 or 3 entries (one per spatial "
                         f"dimension), got {kernel_size!r}")
    out = []
    for k in items:
        try:
            k = operator.index(k)
        except TypeError:
            raise TypeError(f"{op}: kernel_size must be an int or a tuple of 1 to 3 ints, "
                            f"got {kernel_size!r}") from None
        if k < 1:
            raise ValueError(f"{op}: kernel_size entries must be >= 1, got {kernel_size!r}")
        out.append(k)
    return tuple(out)


def _per_dim(value, d, name, low, op):
    """An int (the same for all *d* dims) or *d* ints, each ``>= low``; else ``ValueError``.

    >>> _per_dim(2, 3, "stride", 1, "unfold"), _per_dim((1, 4), 2, "stride", 1, "unfold")
    ((2, 2, 2), (1, 4))
    """
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,) * d
    msg = f"{op}: {name} must be an int >= {low} or {d} such ints, got {value!r}"
    if len(items) != d:
        raise ValueError(msg)
    out = []
    for v in items:
        try:
            v = operator.index(v)
        except TypeError:
            raise ValueError(msg) from None
        if v < low:
            raise ValueError(msg)
        out.append(v)
    return tuple(out)


def _padding(padding, d, op):
    """*padding* as *d* ``(begin, end)`` pairs: from an int, *d* ints or *d* pairs, all >= 0.

    >>> _padding(1, 2, "fold"), _padding((1, 2), 2, "fold"), _padding([(0, 1)], 1, "fold")
    (((1, 1), (1, 1)), ((1, 1), (2, 2)), ((0, 1),))
    """
    if not isinstance(padding, (tuple, list)):
        (p,) = _per_dim(padding, 1, "padding", 0, op)
        return ((p, p),) * d
    if len(padding) == d and all(isinstance(p, (tuple, list)) for p in padding):
        msg = f"{op}: padding must be an int >= 0, {d} such ints or {d} (begin, end) pairs, " \
              f"got {padding!r}"
        if not all(len(p) == 2 for p in padding):
            raise ValueError(msg)
        return tuple(_per_dim(tuple(p), 2, "padding", 0, op) for p in padding)
    return tuple((p, p) for p in _per_dim(padding, d, "padding", 0, op))


def _window_args(kernel_size, dilation, padding, stride, op):
    """``(kernel, dilation, pads, stride)``: tuples of one entry per spatial dim."""
    kernel = _kernel(kernel_size, op)
    d = len(kernel)
    return (kernel, _per_dim(dilation, d, "dilation", 1, op), _padding(padding, d, op),
            _per_dim(stride, d, "stride", 1, op))


def _positions(sizes, kernel, dilation, pads, stride, op):
    """Output positions per spatial dim, ``(S + pb + pe - dil*(k-1) - 1) // stride + 1``.

    ``ValueError`` where the padded size is smaller than the dilated kernel.

    >>> _positions((5, 4), (3, 2), (1, 2), ((0, 0), (1, 0)), (2, 1), "unfold")
    (2, 3)
    """
    out = []
    for i, (s, k, dl, (pb, pe), st) in enumerate(zip(sizes, kernel, dilation, pads, stride)):
        padded, span = s + pb + pe, dl * (k - 1) + 1
        if padded < span:
            raise ValueError(f"{op}: in spatial dimension {i} the padded size {padded} is "
                             f"smaller than the dilated kernel size {span}")
        out.append((padded - span) // st + 1)
    return tuple(out)


def _windows(kernel, dilation, stride, positions):
    """Yield ``(k, l, where)``: each kernel offset (C order), each output position (C
    order), and the slice of the padded spatial dims the window reads there."""
    for k, offset in enumerate(np.ndindex(*kernel)):
        for l, pos in enumerate(np.ndindex(*positions)):
            yield k, l, tuple(p * st + o * dl for p, o, st, dl in zip(pos, offset, stride,
                                                                       dilation))


def unfold(x, kernel_size, *, dilation=1, padding=0, stride=1, channels_last=False):
    """Sliding windows of *x* as columns (im2col), as ``torch.nn.functional.unfold`` in 1-3 D.

    *x* is ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` with ``len(kernel_size)``
    spatial dims (an int *kernel_size* means 2); with *channels_last*
    ``(N, *spatial, C)`` or ``(*spatial, C)``. The result is ``(N, C*K, L)``, row
    ``c*K + k`` and column ``l`` (``K = prod(kernel_size)``, kernel offsets and the
    ``L`` output positions in C order); with *channels_last* ``(N, L, K*C)``, column
    ``k*C + c``; unbatched without ``N``. Padding reads 0 (False). A loop over kernel
    offsets and output positions, copying one ``(N, C)`` block each.

    >>> x = np.arange(9).reshape(1, 3, 3)
    >>> unfold(x, 2)
    array([[0, 1, 3, 4],
           [1, 2, 4, 5],
           [3, 4, 6, 7],
           [4, 5, 7, 8]])
    >>> unfold(np.array([[1, 2, 3]]), (2,), padding=[(1, 0)])
    array([[0, 1, 2],
           [1, 2, 3]])
    >>> unfold(np.arange(8).reshape(1, 4, 2), (2,), stride=2, channels_last=True)
    array([[[0, 1, 2, 3],
            [4, 5, 6, 7]]])
    >>> unfold(np.ones((2, 3)), (4,))
    Traceback (most recent call last):
    ...
    ValueError: unfold: in spatial dimension 0 the padded size 3 is smaller than the dilated kernel size 4
    """
    return _unfold(x, kernel_size, dilation, padding, stride, channels_last, "unfold")


def _unfold(x, kernel_size, dilation, padding, stride, channels_last, op):
    x = _as_input(x, op)
    kernel, dilation, pads, stride = _window_args(kernel_size, dilation, padding, stride, op)
    d = len(kernel)
    if x.ndim not in (d + 1, d + 2):
        layout = ("(N, *spatial, C) or (*spatial, C)" if channels_last
                  else "(N, C, *spatial) or (C, *spatial)")
        raise ValueError(f"{op}: x must have {d + 2} or {d + 1} dimensions {layout} for a "
                         f"{d}-D kernel, got shape {x.shape}")
    xb = x if x.ndim == d + 2 else x[None]
    if channels_last:
        xb = np.moveaxis(xb, -1, 1)
    n, c = xb.shape[:2]
    positions = _positions(xb.shape[2:], kernel, dilation, pads, stride, op)
    padded = np.pad(xb, ((0, 0), (0, 0)) + pads)  # zeros (False for bool)
    K, L = math.prod(kernel), math.prod(positions)
    out = np.zeros((n, c, K, L), x.dtype)
    for k, l, where in _windows(kernel, dilation, stride, positions):
        out[:, :, k, l] = padded[(slice(None), slice(None)) + where]
    out = out.transpose(0, 3, 2, 1).reshape(n, L, K * c) if channels_last else \
        out.reshape(n, c * K, L)
    return np.array(out if x.ndim == d + 2 else out[0], order="C")


def fold(cols, output_size, kernel_size, *, dilation=1, padding=0, stride=1,
         channels_last=False):
    """Sum the columns of :func:`unfold` back into ``(N, C, *output_size)`` (col2im).

    *cols* is ``(N, C*K, L)`` or unbatched ``(C*K, L)``; with *channels_last*
    ``(N, L, K*C)`` or ``(L, K*C)``, giving ``(N, *output_size, C)``. *output_size*
    is an int or one int >= 0 per spatial dim. Each element is the sum of the
    entries whose window covers it, added in increasing kernel index ``k``
    (a loop over ``k`` outside the loop over positions; for one ``k`` a position
    is covered at most once), from 0, in cols' dtype: integers wrap, float16
    accumulates in float32 and is rounded once, bool is the logical or.

    >>> fold(np.ones((4, 4)), (3, 3), 2)
    array([[[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]]])
    >>> fold(np.array([[0, 200, 1], [100, 1, 0]], np.uint8), 2, (2,), padding=1)
    array([[44,  2]], dtype=uint8)
    >>> fold(np.ones((2, 4)), 3, (2,))
    Traceback (most recent call last):
    ...
    ValueError: fold: cols must have shape (N, C*2, 2) or (C*2, 2), got (2, 4)
    """
    op = "fold"
    cols = _as_input(cols, op)
    kernel, dilation, pads, stride = _window_args(kernel_size, dilation, padding, stride, op)
    d = len(kernel)
    size = _per_dim(output_size, d, "output_size", 0, op)
    positions = _positions(size, kernel, dilation, pads, stride, op)
    K, L = math.prod(kernel), math.prod(positions)
    want = (f"(N, {L}, {K}*C) or ({L}, {K}*C)" if channels_last
            else f"(N, C*{K}, {L}) or (C*{K}, {L})")
    if cols.ndim not in (2, 3):
        raise ValueError(f"{op}: cols must have shape {want}, got {cols.shape}")
    cb = cols if cols.ndim == 3 else cols[None]
    n = cb.shape[0]
    lax, cax = (1, 2) if channels_last else (2, 1)
    if cb.shape[lax] != L or cb.shape[cax] % K:
        raise ValueError(f"{op}: cols must have shape {want}, got {cols.shape}")
    c = cb.shape[cax] // K
    c4 = cb.reshape(n, L, K, c).transpose(0, 3, 2, 1) if channels_last else \
        cb.reshape(n, c, K, L)
    acc = np.dtype(np.float32) if cols.dtype == np.float16 else cols.dtype
    padded = np.zeros((n, c) + tuple(s + pb + pe for s, (pb, pe) in zip(size, pads)), acc)
    with np.errstate(all="ignore"):  # inf - inf, float32 -> float16 overflow; ints wrap
        for k, l, where in _windows(kernel, dilation, stride, positions):
            target = (slice(None), slice(None)) + where
            if acc.kind == "b":
                padded[target] |= c4[:, :, k, l]
            else:
                padded[target] += c4[:, :, k, l].astype(acc)
        out = padded[(slice(None), slice(None)) + tuple(slice(pb, pb + s) for s, (pb, _)
                                                         in zip(size, pads))].astype(cols.dtype)
    if channels_last:
        out = np.moveaxis(out, 1, -1)
    return np.array(out if cols.ndim == 3 else out[0], order="C")


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
    """Reference vector-Jacobian products of the reductions, scans, gathers, scatter,
    unfold and fold (``axisops.grad``)."""

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

    # ------------------------------------------------------- gather and scatter

    @staticmethod
    def _g(g, want, op):
        """*g* as a float array of the forward result's shape *want*, and its accumulator.

        Float ``g`` keeps its dtype (float16 accumulates in float32); integer and
        bool ``g`` become float64. Other dtypes: ``TypeError``; another shape:
        ``ValueError``.
        """
        g = np.asarray(g)
        if g.dtype.kind not in "biuf":
            raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
        if g.dtype.kind != "f":
            g = g.astype(np.float64)
        if g.shape != tuple(want):
            raise ValueError(f"{op}: g has shape {g.shape}, expected {tuple(want)}")
        acc = np.dtype(np.float32) if g.dtype == np.float16 else g.dtype
        return g, acc

    @staticmethod
    def take(g, indices, x_shape, axis=None, mode="raise"):
        """``zeros(x_shape)`` with ``g`` added at the indices :func:`take` read.

        Wrapped and clipped indices are resolved as the forward resolves them; with
        ``mode="fill"`` the positions that read the fill value add nothing.
        Sequential additions in C order of the index positions.

        >>> grad.take(np.array([1.0, 2.0, 4.0]), np.array([2, -1, 0]), (3,))
        array([4., 0., 3.])
        >>> grad.take(np.ones((2, 2)), np.array([0, 5]), (2, 3), axis=1, mode="fill")
        array([[1., 0., 0.],
               [1., 0., 0.]])
        >>> grad.take(np.ones(2, np.int8), np.array([7, 7]), (2, 2), mode="wrap")
        array([[0., 0.],
               [0., 2.]])
        """
        op = "grad.take"
        x_shape = tuple(operator.index(n) for n in x_shape)
        indices = _as_indices(indices, op)
        axis = _gather_axis(axis, len(x_shape), op)
        mode = _mode(mode, op)
        src, ax = ((math.prod(x_shape),), 0) if axis is None else (x_shape, axis)
        g, acc = grad._g(g, src[:ax] + indices.shape + src[ax + 1:], op)
        pos, used = _resolve(indices, src[ax], mode, op)
        ga = g.astype(acc)
        out = np.zeros(src, acc)
        lead = (slice(None),) * ax
        with np.errstate(all="ignore"):  # inf - inf
            for p in np.ndindex(indices.shape):
                if used[p]:
                    out[lead + (pos[p],)] += ga[lead + p]
            return out.astype(g.dtype).reshape(x_shape)

    @staticmethod
    def take_along_axis(g, indices, x_shape, axis, mode="raise"):
        """``zeros(x_shape)`` with each ``g[p]`` added where :func:`take_along_axis` read it.

        Where ``x`` was broadcast (a size 1 meeting a larger size of *indices*) the
        contributions add up; where only a leading part was read the rest stays 0.

        >>> grad.take_along_axis(np.ones((2, 2)), np.array([[1, 1], [0, 1]]), (2, 3), 1)
        array([[0., 2., 0.],
               [1., 1., 0.]])
        >>> grad.take_along_axis(np.ones((1, 3)), np.array([[0, 1, 0]]), (2, 1), 0)
        array([[2.],
               [1.]])
        """
        op = "grad.take_along_axis"
        x_shape = tuple(operator.index(n) for n in x_shape)
        indices = _as_indices(indices, op)
        src, ax = _along_args(x_shape, indices, axis, op)
        mode = _mode(mode, op)
        shape = _along_shape(src, indices.shape, ax, op)
        g, acc = grad._g(g, shape, op)
        pos, used = _resolve(indices, src[ax], mode, op)
        ga = g.astype(acc)
        out = np.zeros(src, acc)
        with np.errstate(all="ignore"):
            for p, ip, xp in _along_positions(src, indices.shape, ax, shape):
                if used[ip]:
                    out[xp[:ax] + (pos[ip],) + xp[ax + 1:]] += ga[p]
            return out.astype(g.dtype).reshape(x_shape)

    @staticmethod
    def gather_nd(g, indices, x_shape, batch_dims=0):
        """``zeros(x_shape)`` with each slice ``g[p]`` added where :func:`gather_nd` read it.

        >>> grad.gather_nd(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1], [1]]), (2, 2))
        array([[0., 0.],
               [4., 6.]])
        """
        op = "grad.gather_nd"
        x_shape = tuple(operator.index(n) for n in x_shape)
        indices = _as_indices(indices, op)
        b, q = _nd_args(x_shape, indices, batch_dims, op)
        g, acc = grad._g(g, indices.shape[:-1] + x_shape[b + q:], op)
        ga = g.astype(acc)
        out = np.zeros(x_shape, acc)
        with np.errstate(all="ignore"):
            for p in np.ndindex(indices.shape[:-1]):
                out[_nd_source(p, indices, x_shape, b, q)] += ga[p]
            return out.astype(g.dtype)

    @staticmethod
    def scatter(g, x, indices, updates, axis, reduce=None):
        """``(grad_x, grad_updates)`` of :func:`scatter`, by torch's ``scatter_reduce`` rules.

        Per destination ``d`` and the updates ``u_1 .. u_k`` written to it (C order):

        * ``None``: ``grad_x[d] = 0`` if ``k > 0``; the last update gets ``g[d]``,
          the overwritten ones 0 (the derivative of last-wins; torch gives all ``g[d]``).
        * ``"add"``: ``grad_x = g``; every update gets ``g[d]``.
        * ``"mul"``: ``grad_x[d] = g[d] * (u_1 * ... * u_k)``; ``u_j`` gets
          ``g[d] * x[d] * prod(u_i, i != j)``: products, never a division.
        * ``"max"``/``"min"``: ``g[d]`` split evenly between ``x[d]`` and the
          updates equal to the result (NaN equals NaN), the rest 0.

        ``grad_updates`` has updates' shape: summed over dimensions that were
        broadcast, 0 outside the leading part that was used. Both in ``g``'s dtype
        (float16 computed in float32; integer or bool ``g`` give float64).

        >>> x, idx = np.array([1.0, 5.0]), np.array([0, 0, 1])
        >>> grad.scatter(np.array([1.0, 10.0]), x, idx, np.array([2.0, 3.0, 4.0]), 0, "mul")
        (array([ 6., 40.]), array([ 3.,  2., 50.]))
        >>> grad.scatter(np.array([1.0, 10.0]), x, idx, np.array([2.0, 3.0, 5.0]), 0, "max")
        (array([0., 5.]), array([0., 1., 5.]))
        >>> grad.scatter(np.array([1.0, 10.0]), x, idx, np.array(7.0), 0)
        (array([0., 0.]), array(11.))
        """
        op = "grad.scatter"
        x = _as_input(x, op)
        indices = _as_indices(indices, op)
        updates = _as_updates(updates, x.dtype, op)
        axis, used = _scatter_args(x.shape, indices, updates, axis, reduce, x.dtype, op)
        g, acc = grad._g(g, x.shape, op)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            u_x = used.astype(x.dtype)          # the updates as the forward combined them
            u, xa, ga = u_x.astype(acc), x.astype(acc), g.astype(acc)
        result = scatter(x, indices, updates, axis, reduce=reduce) if reduce in (
            "max", "min") else None
        gx = np.array(ga, order="C")
        gu = np.zeros(indices.shape, acc)
        same = lambda a, b: a == b or (a != a and b != b)  # noqa: E731 - NaN equals NaN
        with np.errstate(all="ignore"):
            for d, ps in _destinations(indices, axis, x.shape[axis]).items():
                if reduce is None:
                    gx[d] = 0
                    gu[ps[-1]] = ga[d]
                elif reduce == "add":
                    for p in ps:
                        gu[p] = ga[d]
                elif reduce == "mul":
                    everything = acc.type(1)
                    for p in ps:
                        everything = everything * u[p]
                    gx[d] = ga[d] * everything
                    for p in ps:
                        others = acc.type(1)
                        for p2 in ps:
                            if p2 != p:
                                others = others * u[p2]
                        gu[p] = ga[d] * xa[d] * others
                else:
                    r = result[d]
                    winners = [p for p in ps if same(u_x[p], r)]
                    x_wins = same(x[d], r)
                    share = ga[d] / acc.type(len(winners) + x_wins)
                    gx[d] = share if x_wins else 0
                    for p in winners:
                        gu[p] = share
            return gx.astype(g.dtype), grad._to_updates(gu, updates.shape).astype(g.dtype)

    @staticmethod
    def _to_updates(gu, shape):
        """The gradient of the updates used (indices' shape) as updates' own *shape*."""
        if gu.shape == shape:
            return gu
        if len(shape) == gu.ndim and all(s >= n for s, n in zip(shape, gu.shape)):
            out = np.zeros(shape, gu.dtype)
            out[tuple(slice(0, n) for n in gu.shape)] = gu
            return out
        lead = gu.ndim - len(shape)  # broadcast: sum the new and the stretched dimensions
        summed = gu.sum(axis=tuple(range(lead)))
        stretched = tuple(d for d, s in enumerate(shape) if s == 1 and summed.shape[d] != 1)
        return np.array(summed.sum(axis=stretched, keepdims=True).reshape(shape))

    # ---------------------------------------------------------- sliding windows

    @staticmethod
    def _window_g(g, op):
        """*g* as a float array (integer and bool ``g`` become float64; else ``TypeError``)."""
        g = np.asarray(g)
        if g.dtype.kind not in "biuf":
            raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
        return g if g.dtype.kind == "f" else g.astype(np.float64)

    @staticmethod
    def unfold(g, x_shape, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
        """The gradient of :func:`unfold`: :func:`fold` of *g* onto x's spatial shape.

        *g* must have the shape unfold gives for an *x* of shape *x_shape*
        (``ValueError`` otherwise). In g's dtype (float16 accumulated in float32);
        integer and bool ``g`` give float64.

        >>> grad.unfold(np.ones((4, 4)), (1, 3, 3), 2)
        array([[[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]]])
        >>> grad.unfold(np.ones((2, 4), np.int32), (1, 3), (2,), padding=1)
        array([[2., 2., 2.]])
        """
        op = "grad.unfold"
        g = grad._window_g(g, op)
        x_shape = tuple(operator.index(n) for n in x_shape)
        kernel, dilation, pads, stride = _window_args(kernel_size, dilation, padding, stride, op)
        d = len(kernel)
        if len(x_shape) not in (d + 1, d + 2):
            raise ValueError(f"{op}: x_shape must have {d + 2} or {d + 1} dimensions for a "
                             f"{d}-D kernel, got {x_shape}")
        spatial = x_shape[-d - 1:-1] if channels_last else x_shape[-d:]
        c = x_shape[-1] if channels_last else x_shape[-d - 1]
        K = math.prod(kernel)
        L = math.prod(_positions(spatial, kernel, dilation, pads, stride, op))
        want = ((L, K * c) if channels_last else (c * K, L))
        want = x_shape[:1] + want if len(x_shape) == d + 2 else want
        if g.shape != want:
            raise ValueError(f"{op}: g has shape {g.shape}, expected {want}")
        return fold(g, spatial, kernel, dilation=dilation, padding=pads, stride=stride,
                    channels_last=channels_last).reshape(x_shape)

    @staticmethod
    def fold(g, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
        """The gradient of :func:`fold`: :func:`unfold` of *g* (fold's output shape).

        In g's dtype; integer and bool ``g`` give float64.

        >>> grad.fold(np.arange(4.0).reshape(1, 4), (2,), padding=((0, 1),))
        array([[0., 1., 2., 3.],
               [1., 2., 3., 0.]])
        """
        g = grad._window_g(g, "grad.fold")
        return _unfold(g, kernel_size, dilation, padding, stride, channels_last, "grad.fold")

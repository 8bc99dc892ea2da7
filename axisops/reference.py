"""NumPy twins of the reductions and their gradients: the test oracle.

Every function here has the public signature of its namesake in :mod:`axisops`
and is written with plain NumPy, for clarity rather than speed: a reduction over
several axes moves them to the end and reshapes, an arg-reduction with
``select_last_index`` flips the block, a gradient is written from its definition.
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
    "sum", "prod", "mean", "max", "min", "argmax", "argmin", "unravel", "grad",
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


# ------------------------------------------------------------------------- gradients

def _expand(g, x_shape, axes, keepdims, op):
    """*g* with the reduced axes as size-1 dimensions (``ValueError`` on a bad shape)."""
    g = np.asarray(g)
    want = _out_shape(x_shape, axes, keepdims)
    if g.shape != want:
        raise ValueError(f"grad.{op}: g has shape {g.shape}, expected {want}")
    return g.reshape(_out_shape(x_shape, axes, True))


class grad:
    """Reference vector-Jacobian products of the reductions (``axisops.grad``)."""

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

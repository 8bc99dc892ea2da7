"""Reference twins of the reductions and arg-reductions (see :mod:`axisops.reference`)."""
from __future__ import annotations

import math
import operator

import numpy as np

from ._common import _accumulated, _as_input, _axes, _blocks, _out_shape

# ------------------------------------------------------------------------ reductions

def sum(x, axis=None, *, keepdims=False, dtype=None):
    """Sum over *axis*, as ``np.sum`` (float16 accumulated in float32).

    >>> sum(np.arange(6, dtype=np.int8).reshape(2, 3), axis=(0, 1))
    np.int64(15)
    >>> sum(np.full(3, 100, np.uint8), dtype=np.uint8)
    np.uint8(44)
    """
    x = _as_input(x, "sum", complex_ok=True)
    return _accumulated(np.sum, x, _axes(axis, x.ndim, "sum"), keepdims, dtype, "sum")


def prod(x, axis=None, *, keepdims=False, dtype=None):
    """Product over *axis*, as ``np.prod`` (float16 accumulated in float32).

    >>> prod([[1, 2], [3, 4]], axis=0)
    array([3, 8])
    """
    x = _as_input(x, "prod", complex_ok=True)
    return _accumulated(np.prod, x, _axes(axis, x.ndim, "prod"), keepdims, dtype, "prod")


def mean(x, axis=None, *, keepdims=False, dtype=None):
    """Mean over *axis*, as ``np.mean`` (ints and bool give float64; empty gives NaN).

    >>> mean([[1, 2], [3, 4]], axis=1)
    array([1.5, 3.5])
    """
    x = _as_input(x, "mean", complex_ok=True)
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
    blocks, _, n = _blocks(x, axes)
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

"""Helpers the reference twins of every family share: input, axes and dtype checks."""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

try:  # NumPy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover - older NumPy
    AxisError = np.AxisError  # type: ignore[attr-defined,misc]


#: The dtypes the contract supports, in a fixed order.
SUPPORTED_DTYPES = tuple(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64,
))


# --------------------------------------------------------------------------- helpers

#: complex64 and complex128: for sums, products, their scans, moves and windows.
COMPLEX_DTYPES = (np.dtype(np.complex64), np.dtype(np.complex128))


def _as_input(x, op, complex_ok=False):
    """``np.asarray(x)``; ``TypeError`` naming *op* for a dtype outside the contract
    (complex is in it where *complex_ok*)."""
    x = np.asarray(x)
    if x.dtype not in SUPPORTED_DTYPES and not (complex_ok and x.dtype in COMPLEX_DTYPES):
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
        if dtype not in SUPPORTED_DTYPES + COMPLEX_DTYPES:
            raise TypeError(f"{op}: unsupported dtype {dtype}")
    if np.dtype(x_dtype).kind == "c" and dtype is not None and dtype.kind != "c":
        raise TypeError(f"{op}: dtype={dtype} would discard the imaginary part")
    return probe_func(np.zeros(1, x_dtype), dtype=dtype).dtype


def _accumulated(func, x, axes, keepdims, dtype, op):
    """``func`` (np.sum / np.prod / np.mean) with float16 accumulated in float32."""
    res = _result_dtype(func, x.dtype, dtype, op)
    acc = np.dtype(np.float32) if res == np.float16 else res
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # empty means, inf - inf, overflow
        out = func(x, axis=axes, keepdims=keepdims, dtype=acc)
        return np.asarray(out).astype(res, copy=False)[()]

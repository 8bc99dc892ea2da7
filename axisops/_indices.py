"""Checks on index arrays that users pass in, made before any kernel trusts them.

Kernels index memory with these values unchecked, so every public function that
takes indices runs them through here first: a float or bool array is a
``TypeError``; an index outside the valid range an ``IndexError`` that names the
first bad index (in C order), where it is, and the valid range.
"""
from __future__ import annotations

import numpy as np

from ._dtypes import is_int


def as_index_array(indices, op: str, name: str = "indices") -> np.ndarray:
    """``numpy.asarray(indices)``, which must have an integer dtype (signed or unsigned).

    >>> as_index_array([1, 2], "take").dtype
    dtype('int64')
    >>> as_index_array(np.array([1.0]), "take")
    Traceback (most recent call last):
    ...
    TypeError: take: indices must be integers, got float64
    """
    a = np.asarray(indices)
    if a.dtype.kind not in "iu":
        if a.dtype == object and a.size and all(is_int(v) for v in a.flat):
            _beyond_int64(a, op, name)
        raise TypeError(f"{op}: {name} must be integers, got {a.dtype}")
    return a


def _beyond_int64(a: np.ndarray, op: str, name: str) -> None:
    """``IndexError`` naming the first int of the object array *a* outside int64's
    range: NumPy holds Python ints as objects only where one does not fit 64 bits,
    and no axis is that long."""
    for first, value in enumerate(a.flat):
        if not -2 ** 63 <= int(value) < 2 ** 63:
            where = tuple(int(w) for w in np.unravel_index(first, a.shape))
            raise IndexError(f"{op}: index {value} at position {where} of {name} is out of "
                             "range (beyond int64: no axis is that long)")


def check_in_range(indices: np.ndarray, n: int, op: str, *, negative: bool = False,
                   name: str = "indices") -> None:
    """``IndexError`` unless every index is in ``[0, n)`` (``[-n, n)`` with *negative*).

    >>> check_in_range(np.array([[0, 2], [3, 1]]), 3, "grad.cummax")
    Traceback (most recent call last):
    ...
    IndexError: grad.cummax: index 3 at position (1, 0) of indices is out of range [0, 3)
    """
    if indices.size == 0:
        return
    low = -n if negative else 0
    bad = indices >= n
    if indices.dtype.kind == "i":  # unsigned indices are never below the bound
        bad |= indices < low
    if not bad.any():
        return
    first = int(np.argmax(bad.reshape(-1)))
    where = np.unravel_index(first, indices.shape)
    value = indices.reshape(-1)[first]
    raise IndexError(f"{op}: index {value} at position {tuple(int(w) for w in where)} of {name} "
                     f"is out of range [{low}, {n})")

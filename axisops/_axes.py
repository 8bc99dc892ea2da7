"""Axis normalisation, result shapes and the errors every operator shares.

All public functions go through :func:`normalize_axes` (several axes allowed) or
:func:`normalize_axis` (exactly one axis), so that an out-of-range axis is always a
``numpy.exceptions.AxisError`` and a repeated axis always a ``ValueError``.
"""
from __future__ import annotations

import operator

import numpy as np

try:  # NumPy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover - older NumPy
    AxisError = np.AxisError  # type: ignore[attr-defined,misc]


def _one_axis(axis, ndim: int, op: str) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(
            f"{op}: axis must be an int, a tuple of ints or None, got {type(axis).__name__}"
        ) from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim)
    return a % ndim if ndim else a


def normalize_axes(axis, ndim: int, op: str) -> tuple[int, ...]:
    """Return the reduced axes as a sorted tuple of non-negative ints.

    ``None`` means every axis; an int or a tuple of ints is checked for range
    (``AxisError``) and repetition (``ValueError``).

    >>> normalize_axes(-1, 3, "sum")
    (2,)
    >>> normalize_axes(None, 2, "sum")
    (0, 1)
    >>> normalize_axes((2, 0), 3, "sum")
    (0, 2)
    """
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = [_one_axis(a, ndim, op) for a in axis]
        if len(set(axes)) != len(axes):
            raise ValueError(f"{op}: repeated axis in {tuple(axis)!r}")
        return tuple(sorted(axes))
    return (_one_axis(axis, ndim, op),)


def normalize_axis(axis, ndim: int, op: str) -> int:
    """Return one axis as a non-negative int (``AxisError`` when out of range).

    >>> normalize_axis(-1, 4, "cumsum")
    3
    """
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int here, got {axis!r}")
    return _one_axis(axis, ndim, op)


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """Shape of a reduction's result.

    >>> reduced_shape((2, 3, 4), (0, 2), False)
    (3,)
    >>> reduced_shape((2, 3, 4), (0, 2), True)
    (1, 3, 1)
    """
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)

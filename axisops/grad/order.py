"""Gradients of the order statistics: sort, top_k, kthvalue, partition, median,
nanmedian, quantile, nanquantile (``argsort``, ``argpartition`` and ``rank`` have
none: they are piecewise constant).

Signatures, by the contract's rule (``g`` first, then what the forward must save,
then the forward's own arguments)::

    grad.sort(g, x, axis=-1, *, descending=False)
    grad.top_k(g, indices, x_shape, axis=-1)
    grad.kthvalue(g, indices, x_shape, axis=-1, keepdims=False)
    grad.partition(g, x, kth, axis=-1)
    grad.median(g, x, axis=None, keepdims=False)
    grad.nanmedian(g, x, axis=None, keepdims=False)
    grad.quantile(g, x, q, axis=None, *, method="linear", keepdims=False)
    grad.nanquantile(g, x, q, axis=None, *, method="linear", keepdims=False)

Each puts ``g`` back at the elements the forward chose, as PyTorch's autograd
does: a sort's and a partition's through their stable positions (``argsort``,
``argpartition``: among equal elements, the one of the lower index takes the
lower place), ``top_k``'s and ``kthvalue``'s at the indices they returned. An
interpolated quantile splits ``g`` between its two elements by NumPy's weights
(``1 - gamma`` and ``gamma``; an even-length median half and half), a method that
takes one element gives it all. A plain median or quantile of a lane holding NaN
(whose result is NaN) gives all of ``g`` to the lane's first NaN; an all-NaN lane
of the ``nan`` twins gets nothing.

The result has ``x``'s shape; its dtype is ``numpy.result_type(g, x)`` where ``x``
is a float array, else ``g``'s float dtype (float64 for an integer ``g``), as the
gradients of ``max``/``min``.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _dtypes
from .. import order as _order
from .._axes import normalize_axes, normalize_axis
from .._dispatch import dispatched
from ..missing import _doc
from ..typing import Array, ArrayLike, Axis, Shape
from ._common import _shape

__all__ = ["sort", "top_k", "kthvalue", "partition", "median", "nanmedian", "quantile",
           "nanquantile"]


def _float_dtype(g: np.ndarray, x_dtype: np.dtype | None, op: str) -> np.dtype:
    if g.dtype.kind not in "biuf":
        raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
    gd = g.dtype if g.dtype.kind == "f" else np.dtype(np.float64)
    if x_dtype is not None and x_dtype.kind == "f":
        return np.result_type(gd, x_dtype)
    return gd


def _check_g(g: np.ndarray, expected: tuple, op: str) -> None:
    if g.shape != tuple(expected):
        raise ValueError(f"{op}: g has shape {g.shape}, expected the forward's output shape "
                         f"{tuple(expected)}")


def _put(g: np.ndarray, positions: np.ndarray, shape: tuple, axis: int, dtype) -> np.ndarray:
    """Zeros of *shape* with ``g`` put at ``positions`` along *axis* (distinct
    positions per lane)."""
    out = np.zeros(shape, dtype)
    if out.size and g.size:
        np.put_along_axis(out, positions.astype(np.intp, copy=False), g.astype(dtype), axis)
    return out


@dispatched
def sort(g: ArrayLike, x: ArrayLike, axis: int | None = -1, *, descending: bool = False) -> Array:
    """Gradient of ``axisops.sort``: ``g`` put back through the stable ``argsort``.

    Parameters
    ----------
    g : array_like
        Gradient of the sorted result (its shape).
    x : array_like
        The forward's input.
    axis : int or None, optional
        The forward's ``axis``. Default -1.
    descending : bool, optional
        The forward's ``descending``.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape.

    Raises
    ------
    ValueError
        If ``g``'s shape is not the forward's result's.
    TypeError, numpy.exceptions.AxisError
        As the forward.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.sort(np.array([1., 2., 3.]), np.array([5., 4., 6.]))
    array([2., 1., 3.])
    """
    op = "grad.sort"
    x = _dtypes.as_array(x)
    g = np.asarray(g)
    idx = _order.argsort(x, axis, descending=descending)
    _check_g(g, idx.shape, op)
    dtype = _float_dtype(g, x.dtype, op)
    flat_axis = 0 if axis is None else normalize_axis(axis, x.ndim, op)
    return _put(g, idx, idx.shape, flat_axis, dtype).reshape(x.shape)


@dispatched
def partition(g: ArrayLike, x: ArrayLike, kth: int | Sequence[int], axis: int | None = -1) -> Array:
    """Gradient of ``axisops.partition``: ``g`` put back through ``argpartition``.

    Parameters
    ----------
    g : array_like
        Gradient of the partitioned result (its shape).
    x : array_like
        The forward's input.
    kth : int or sequence of ints
        The forward's ``kth``.
    axis : int or None, optional
        The forward's ``axis``. Default -1.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape.

    Raises
    ------
    ValueError
        If ``g``'s shape is not the forward's result's, or ``kth`` is out of range.
    TypeError, numpy.exceptions.AxisError
        As the forward.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.partition(np.array([1., 2., 3.]), np.array([5., 4., 6.]), 0)
    array([2., 1., 3.])
    """
    op = "grad.partition"
    x = _dtypes.as_array(x)
    g = np.asarray(g)
    idx = _order.argpartition(x, kth, axis)
    _check_g(g, idx.shape, op)
    dtype = _float_dtype(g, x.dtype, op)
    flat_axis = 0 if axis is None else normalize_axis(axis, x.ndim, op)
    return _put(g, idx, idx.shape, flat_axis, dtype).reshape(x.shape)


_AT_INDICES_DOC = """Gradient of ``axisops.{name}``: ``g`` put at the forward's ``indices``.

    Parameters
    ----------
    g : array_like
        Gradient of the forward's ``values``.
    indices : array_like
        The forward's ``indices`` (``g``'s shape).
    x_shape : tuple of ints
        The forward's input shape.
    axis : int or None, optional
        The forward's ``axis``. Default -1.{keepdims_param}

    Returns
    -------
    numpy.ndarray
        Of shape ``x_shape``, in ``g``'s float dtype.

    Raises
    ------
    ValueError
        If ``g`` and ``indices`` differ in shape or do not fit ``x_shape``.
    IndexError
        If an index is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.{name}(np.array([1., 2.]), np.array([2, 0]), {example}
    """


@dispatched
@_doc(_AT_INDICES_DOC, name="top_k", keepdims_param="",
      example="(4,))\n    array([2., 0., 1., 0.])")
def top_k(g: ArrayLike, indices: ArrayLike, x_shape: Shape, axis: int | None = -1) -> Array:
    return _at_indices("grad.top_k", g, indices, x_shape, axis, keepdims=True)


@dispatched
@_doc(_AT_INDICES_DOC, name="kthvalue", keepdims_param="\n    keepdims : bool, optional\n"
      "        The forward's ``keepdims``.", example="(2, 3), axis=1)\n"
      "    array([[0., 0., 1.],\n           [2., 0., 0.]])")
def kthvalue(g: ArrayLike, indices: ArrayLike, x_shape: Shape, axis: int | None = -1,
             keepdims: bool = False) -> Array:
    return _at_indices("grad.kthvalue", g, indices, x_shape, axis, keepdims=keepdims)


def _at_indices(op: str, g, indices, x_shape, axis, keepdims: bool) -> np.ndarray:
    g = np.asarray(g)
    indices = np.asarray(indices)
    x_shape = _shape(x_shape)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got {indices.dtype}")
    if g.shape != indices.shape:
        raise ValueError(f"{op}: g has shape {g.shape} and indices {indices.shape}: expected "
                         "the same")
    work_shape = (int(np.prod(x_shape, dtype=np.int64)),) if axis is None else x_shape
    a = 0 if axis is None else normalize_axis(axis, len(x_shape), op)
    n = work_shape[a]
    if axis is None:  # the flattened lane: () or ones (kthvalue), (k,) (top_k)
        g, indices = g.reshape(-1), indices.reshape(-1)
    elif not keepdims:
        g, indices = np.expand_dims(g, a), np.expand_dims(indices, a)
    expected = work_shape[:a] + (indices.shape[a],) + work_shape[a + 1:]
    if indices.ndim != len(work_shape) or indices.shape != expected or indices.shape[a] > n:
        raise ValueError(f"{op}: indices of shape {indices.shape} do not fit x_shape {x_shape} "
                         f"along axis {axis}")
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        bad = np.argwhere((indices < 0) | (indices >= n))[0]
        raise IndexError(f"{op}: index {int(indices[tuple(bad)])} at position {tuple(bad)} is "
                         f"out of range [0, {n})")
    dtype = _float_dtype(g, None, op)
    out = np.zeros(work_shape, dtype)
    if g.size:  # a scatter-add: indices given twice add up
        lanes = np.moveaxis(out, a, -1)
        idx = np.moveaxis(indices.astype(np.intp), a, -1)
        grids: tuple[np.ndarray, ...] = np.indices(idx.shape[:-1], sparse=True)
        rows = [r[..., None] for r in grids]
        np.add.at(lanes, (*rows, idx),
                  np.moveaxis(g.astype(dtype), a, -1))
    return out.reshape(x_shape)


_MEDIAN_DOC = """Gradient of ``axisops.{name}``: ``g`` split between the elements it read.

    {what}

    Parameters
    ----------
    g : array_like
        Gradient of the forward's result (its shape).
    x : array_like
        The forward's input.{q_param}
    axis : int, tuple of ints or None, optional
        The forward's ``axis``. Default None.{method_param}
    keepdims : bool, optional
        The forward's ``keepdims``.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape.

    Raises
    ------
    ValueError
        If ``g``'s shape is not the forward's result's; as the forward.
    TypeError, numpy.exceptions.AxisError
        As the forward.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.{name}(np.float64(1.0), np.array([4., 1., 3., 2.]){q_arg})
    array([{result}])
    """
_MEDIAN_WHAT = ("The middle element gets all of ``g``; of two middle elements (an even "
                "count) each gets half, the lower place going to the lower index among "
                "equal ones.")
_QUANTILE_WHAT = ("The two elements a quantile interpolates get ``g`` times NumPy's "
                  "weights (``1 - gamma`` and ``gamma``); methods that take one element "
                  "give it all of ``g``.")
_Q_PARAM = """
    q : float or array_like of floats
        The forward's ``q``."""
_METHOD_PARAM = """
    method : str, optional
        The forward's ``method``. Default "linear"."""


@dispatched
@_doc(_MEDIAN_DOC, name="median", what=_MEDIAN_WHAT + " A lane holding NaN gives all of "
      "``g`` to its first NaN.", q_param="", method_param="", q_arg="",
      result="0. , 0. , 0.5, 0.5")
def median(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    return _split("grad.median", g, x, None, axis, "linear", keepdims, skip_nan=False)


@dispatched
@_doc(_MEDIAN_DOC, name="nanmedian", what=_MEDIAN_WHAT + " NaN gets nothing (nor does an "
      "all-NaN lane).", q_param="", method_param="", q_arg="", result="0. , 0. , 0.5, 0.5")
def nanmedian(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    return _split("grad.nanmedian", g, x, None, axis, "linear", keepdims, skip_nan=True)


@dispatched
@_doc(_MEDIAN_DOC, name="quantile", what=_QUANTILE_WHAT + " A lane holding NaN gives all "
      "of ``g`` to its first NaN.", q_param=_Q_PARAM, method_param=_METHOD_PARAM,
      q_arg=", 0.25", result="0.  , 0.25, 0.  , 0.75")
def quantile(g: ArrayLike, x: ArrayLike, q: float | ArrayLike, axis: Axis = None, *, method: str = "linear",
             keepdims: bool = False) -> Array:
    return _split("grad.quantile", g, x, q, axis, method, keepdims, skip_nan=False)


@dispatched
@_doc(_MEDIAN_DOC, name="nanquantile", what=_QUANTILE_WHAT + " NaN gets nothing (nor does "
      "an all-NaN lane).", q_param=_Q_PARAM, method_param=_METHOD_PARAM, q_arg=", 0.25",
      result="0.  , 0.25, 0.  , 0.75")
def nanquantile(g: ArrayLike, x: ArrayLike, q: float | ArrayLike, axis: Axis = None, *, method: str = "linear",
                keepdims: bool = False) -> Array:
    return _split("grad.nanquantile", g, x, q, axis, method, keepdims, skip_nan=True)


def quantile_of_list(g, x, q, scalar_q, axis=None, method="linear", keepdims=False):
    """:func:`quantile` with ``q`` as a list (``axisops.torch``'s operator schema)."""
    return quantile(g, x, q[0] if scalar_q else np.array(q, np.float64), axis, method=method,
                    keepdims=keepdims)


def nanquantile_of_list(g, x, q, scalar_q, axis=None, method="linear", keepdims=False):
    """:func:`nanquantile` as :func:`quantile_of_list`."""
    return nanquantile(g, x, q[0] if scalar_q else np.array(q, np.float64), axis,
                       method=method, keepdims=keepdims)


def _split(op: str, g, x, q, axis, method, keepdims, skip_nan: bool) -> np.ndarray:
    x = _dtypes.as_array(x)
    g = np.asarray(g)
    keepdims = bool(keepdims)
    y, a, kept_shape, keep_shape, positions, weights, q_shape = _order.chosen_elements(
        op, x, q, axis, method, skip_nan)
    _check_g(g, q_shape + (keep_shape if keepdims else kept_shape), op)
    dtype = _float_dtype(g, x.dtype, op)
    n = y.shape[a]
    lanes = y.size // n if n else 0
    out = np.zeros((lanes, n), dtype)
    if positions is not None and lanes:
        Q = positions.shape[1] // 2
        g2 = g.astype(dtype).reshape((Q, lanes)).T  # (lanes, Q)
        rows = np.arange(lanes)
        w = weights.astype(dtype)
        for c in range(2 * Q):
            out[rows, positions[:, c]] += g2[:, c % Q] * w[:, c]
    # back from (lanes, n) to x's layout: y's lanes are x's kept axes in order
    moved = out.reshape(kept_shape + (n,))
    if y is x:  # one reduced axis: the lanes are x along it
        return np.moveaxis(moved, -1, a).copy()  # C order, 0-d kept
    axes = normalize_axes(axis, x.ndim, op)
    kept = [d for d in range(x.ndim) if d not in axes]
    full = moved.reshape(kept_shape + tuple(x.shape[d] for d in axes))
    return np.transpose(full, np.argsort(kept + list(axes))).copy()

"""Gradients of the reductions: sum, mean, prod, max, min.

See :mod:`axisops.grad` for the conventions every gradient follows.
"""


from __future__ import annotations

import math

import numpy as np

from .. import _complex, _dtypes
from .. import reduce as _reduce
from .._axes import normalize_axes, reduced_shape
from .._dispatch import dispatched
from .._jit import run
from ..kernels import scan as _scan_kernels
from ..typing import Array, ArrayLike, Axis, Shape
from ._common import _exclusive_products, _is_complex, _normal

__all__ = ['sum', 'mean', 'prod', 'max', 'min']


@dispatched
def sum(g: ArrayLike, x_shape: Shape, axis: Axis = None, keepdims: bool = False) -> Array:
    """Gradient of :func:`axisops.sum`: ``g`` broadcast back over the reduced axes.

    Every element of ``x`` enters one element of the forward's result with
    weight 1 and gets that element's gradient; the values of ``x`` do not
    matter, only its shape.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.sum(x, axis, keepdims=keepdims)``, of that result's shape:
        ``x_shape`` without the reduced axes, or with them as length 1 where
        ``keepdims`` (0-d where every axis was reduced without ``keepdims``).
    x_shape : tuple of ints
        Shape of the forward's input ``x``.
    axis : int, tuple of ints or None, optional
        The axes the forward summed over, as given to it (negative ones count
        from the end); ``()`` means none. Default None: every axis.
    keepdims : bool, optional
        Whether the forward kept the reduced axes with length 1; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``: a new array of shape ``x_shape`` in
        ``g``'s dtype.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result, or ``axis`` names
        an axis twice.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x_shape``.
    TypeError
        If ``axis`` is not an int, a tuple of ints or None.

    See Also
    --------
    axisops.sum : The forward operator.
    axisops.grad.mean : The gradient of the mean.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.sum(np.array([1., 2.]), (2, 3), axis=1)
    array([[1., 1., 1.],
           [2., 2., 2.]])
    >>> axisops.grad.sum(np.array(5.), (2, 2))       # the forward summed every axis
    array([[5., 5.],
           [5., 5.]])
    """
    x_shape, _, g = _expand(g, x_shape, axis, keepdims, "grad.sum")
    return np.array(np.broadcast_to(g, x_shape))


@dispatched
def mean(g: ArrayLike, x_shape: Shape, axis: Axis = None, keepdims: bool = False) -> Array:
    """Gradient of :func:`axisops.mean`: ``g / count`` over the reduced axes.

    ``count`` is the number of elements each mean was taken over (the product
    of the reduced axes' lengths): every element of ``x`` enters one mean with
    weight ``1 / count``. The values of ``x`` do not matter, only its shape.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.mean(x, axis, keepdims=keepdims)``, of that result's shape:
        ``x_shape`` without the reduced axes, or with them as length 1 where
        ``keepdims`` (0-d where every axis was reduced without ``keepdims``).
    x_shape : tuple of ints
        Shape of the forward's input ``x``.
    axis : int, tuple of ints or None, optional
        The axes the forward averaged over, as given to it (negative ones count
        from the end); ``()`` means none. Default None: every axis.
    keepdims : bool, optional
        Whether the forward kept the reduced axes with length 1; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``: a new array of shape ``x_shape``, in
        ``g``'s dtype where that is a float dtype and in float64 otherwise.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result, or ``axis`` names
        an axis twice.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x_shape``.
    TypeError
        If ``axis`` is not an int, a tuple of ints or None.

    See Also
    --------
    axisops.mean : The forward operator.
    axisops.grad.sum : The gradient of the sum.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.mean(np.array(3.), (3,))
    array([1., 1., 1.])
    >>> axisops.grad.mean(np.array([3., 6.]), (2, 3), axis=1)   # means of 3 elements
    array([[1., 1., 1.],
           [2., 2., 2.]])
    """
    if _is_complex(g):  # linear: the parts of g
        return _complex.componentwise(lambda part: mean(part, x_shape, axis, keepdims), np.asarray(g))
    x_shape, axes, g = _expand(g, x_shape, axis, keepdims, "grad.mean")
    count = int(np.prod([x_shape[d] for d in axes], dtype=np.int64))
    if g.dtype.kind != "f":
        g = g.astype(np.float64)
    return np.array(np.broadcast_to(g / count if count else g, x_shape))


@dispatched
def prod(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Gradient of :func:`axisops.prod`: ``g`` times the product of the *other* elements.

    Computed from prefix and suffix products, never by dividing by ``x``, so zeros
    in ``x`` are exact: with one zero only that element gets a gradient, with two
    or more none does. Where a prefix or suffix product is not a normal float
    (it may have overflowed or underflowed on its own), that row is computed
    again with exponents kept apart (``kernels.scan.scaled_exclusive_products``)
    and rounded once, so the gradient is finite wherever its true value is:
    ``x = [1e30, 1e30, 1e-30, 1e-30]`` in float32 gets ``[1e-30, 1e-30, 1e30,
    1e30]``, not NaN.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.prod(x, axis, keepdims=keepdims)``, of that result's shape:
        ``x.shape`` without the reduced axes, or with them as length 1 where
        ``keepdims`` (0-d where every axis was reduced without ``keepdims``).
    x : array_like
        The forward's input, of a bool, integer or float dtype.
    axis : int, tuple of ints or None, optional
        The axes the forward multiplied over, as given to it (negative ones
        count from the end); ``()`` means none. Default None: every axis.
    keepdims : bool, optional
        Whether the forward kept the reduced axes with length 1; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of ``x``'s shape, in
        ``numpy.result_type(x, g, numpy.float16)`` (a float dtype: float64 for
        int64 or float64 operands); float16 is computed in float32.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result, or ``axis`` names
        an axis twice.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x``.
    TypeError
        If ``x``'s dtype is not bool, integer or float, or ``axis`` is not an
        int, a tuple of ints or None.

    See Also
    --------
    axisops.prod : The forward operator.
    axisops.grad.cumprod : The gradient of the cumulative product.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.prod(np.array(1.), np.array([2., 0., 5.]))
    array([ 0., 10.,  0.])
    >>> x = np.array([[2., 3., 4.], [0., 0., 5.]])   # two zeros: no gradient
    >>> axisops.grad.prod(np.array([1., 1.]), x, axis=1)
    array([[12.,  8.,  6.],
           [ 0.,  0.,  0.]])
    """
    if _is_complex(g, x):
        return _complex_prod_grad(g, x, axis, keepdims)
    x = _dtypes.as_array(x)
    _dtypes.check_dtype(x.dtype, "grad.prod")
    x_shape, axes, g = _expand(g, x.shape, axis, keepdims, "grad.prod")
    dtype = np.result_type(x.dtype, g.dtype, np.float16)
    if x.size == 0:
        return np.zeros(x_shape, dtype)
    work = np.float32 if dtype == np.float16 else dtype  # float16 multiplies in float32
    kept = [d for d in range(x.ndim) if d not in axes]
    # move the reduced axes to the end and flatten them: (rows, R)
    moved = np.array(np.transpose(x, kept + list(axes)), dtype=work, order="C")
    rows = moved.reshape(-1, math.prod(x.shape[d] for d in axes))
    ones = np.ones((rows.shape[0], 1), work)
    g_moved = np.transpose(np.broadcast_to(g.astype(work), x_shape), kept + list(axes)).reshape(rows.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # such rows are redone
        before = np.cumprod(np.concatenate([ones, rows[:, :-1]], axis=1), axis=1)
        after = np.cumprod(np.concatenate([ones, rows[:, :0:-1]], axis=1), axis=1)[:, ::-1]
        res = g_moved * (before * after)
    bad = np.flatnonzero(~np.all(_normal(before) & _normal(after), axis=1))
    if bad.size:
        # rows where a running product may have left the float range on its own:
        # again with exponents apart (see scaled_exclusive_products), rounded once
        xm, xe = np.frexp(rows[bad])
        xe = xe.astype(np.int64)
        before_m, after_m = np.empty_like(xm), np.empty_like(xm)
        before_e, after_e = np.empty(xm.shape, np.int64), np.empty(xm.shape, np.int64)
        run(_scan_kernels.scaled_exclusive_products, xm.size, xm, xe, False, before_m, before_e)
        run(_scan_kernels.scaled_exclusive_products, xm.size, xm, xe, True, after_m, after_e)
        res[bad] = np.ldexp(g_moved[bad] * (before_m * after_m), before_e + after_e)
    res = np.asarray(res).reshape(moved.shape)
    return np.transpose(res, tuple(int(d) for d in np.argsort(kept + list(axes)))).astype(dtype)


@dispatched
def max(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Gradient of :func:`axisops.max`, split evenly between tied maxima (``torch.amax``).

    Each element of ``x`` equal to the maximum of its slice gets ``g / count``,
    ``count`` the number of such elements in the slice (``-0.0`` and ``+0.0``
    are equal); every other element gets 0.

    As in PyTorch, a slice whose maximum is NaN gets a NaN gradient.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.max(x, axis, keepdims=keepdims)``, of that result's shape:
        ``x.shape`` without the reduced axes, or with them as length 1 where
        ``keepdims`` (0-d where every axis was reduced without ``keepdims``).
    x : array_like
        The forward's input, of a bool, integer or float dtype.
    axis : int, tuple of ints or None, optional
        The axes the forward reduced, as given to it (negative ones count from
        the end). Default None: every axis.
    keepdims : bool, optional
        Whether the forward kept the reduced axes with length 1; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of ``x``'s shape: in ``g``'s dtype
        where that is a float dtype, else in
        ``numpy.result_type(g, x, numpy.float16)`` (float64 for int64 ``g``).

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result, ``axis`` names an
        axis twice, or a reduced axis has length 0 (the forward reduced an empty
        set and has no gradient).
    numpy.exceptions.AxisError
        If an axis is out of range for ``x``.
    TypeError
        If ``x``'s dtype is not bool, integer or float, or ``axis`` is not an
        int, a tuple of ints or None.

    See Also
    --------
    axisops.max : The forward operator.
    axisops.grad.min : The gradient of the minimum.
    axisops.grad.cummax : The gradient of the running maximum.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.max(np.array(6.), np.array([1., 4., 4., 2.]))
    array([0., 3., 3., 0.])
    >>> axisops.grad.max(np.ones(2), np.array([[1., np.nan], [2., 0.]]), axis=1)
    array([[nan, nan],
           [ 1.,  0.]])
    """
    return _extreme_grad(g, x, axis, keepdims, _reduce.max, "grad.max")


@dispatched
def min(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Gradient of :func:`axisops.min`, split evenly between tied minima (``torch.amin``).

    Each element of ``x`` equal to the minimum of its slice gets ``g / count``,
    ``count`` the number of such elements in the slice (``-0.0`` and ``+0.0``
    are equal); every other element gets 0. As in PyTorch, a slice whose
    minimum is NaN gets a NaN gradient.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.min(x, axis, keepdims=keepdims)``, of that result's shape:
        ``x.shape`` without the reduced axes, or with them as length 1 where
        ``keepdims`` (0-d where every axis was reduced without ``keepdims``).
    x : array_like
        The forward's input, of a bool, integer or float dtype.
    axis : int, tuple of ints or None, optional
        The axes the forward reduced, as given to it (negative ones count from
        the end). Default None: every axis.
    keepdims : bool, optional
        Whether the forward kept the reduced axes with length 1; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of ``x``'s shape: in ``g``'s dtype
        where that is a float dtype, else in
        ``numpy.result_type(g, x, numpy.float16)`` (float64 for int64 ``g``).

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result, ``axis`` names an
        axis twice, or a reduced axis has length 0 (the forward reduced an empty
        set and has no gradient).
    numpy.exceptions.AxisError
        If an axis is out of range for ``x``.
    TypeError
        If ``x``'s dtype is not bool, integer or float, or ``axis`` is not an
        int, a tuple of ints or None.

    See Also
    --------
    axisops.min : The forward operator.
    axisops.grad.max : The gradient of the maximum.
    axisops.grad.cummin : The gradient of the running minimum.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.min(np.array(1.), np.array([3., 1., 2.]))
    array([0., 1., 0.])
    >>> axisops.grad.min(np.array([2., 2.]), np.array([[1., 5.], [1., 3.]]), axis=0)
    array([[1., 0.],
           [1., 2.]])
    """
    return _extreme_grad(g, x, axis, keepdims, _reduce.min, "grad.min")


def _extreme_grad(g, x, axis, keepdims, forward, op):
    x = _dtypes.as_array(x)
    _dtypes.check_dtype(x.dtype, op)
    x_shape, axes, g = _expand(g, x.shape, axis, keepdims, op)
    if any(x_shape[d] == 0 for d in axes):
        raise ValueError(f"{op}: the forward reduces an empty set, so there is no gradient")
    if x.size == 0:
        return np.zeros(x_shape, np.result_type(g.dtype, x.dtype, np.float16))
    extreme = np.asarray(forward(x, axes, keepdims=True))
    hit = x == extreme  # NaN never equals: a NaN slice gets 0/0, NaN, like torch
    count = np.add.reduce(hit, axis=axes, keepdims=True)
    dtype = np.result_type(g.dtype, x.dtype, np.float16) if g.dtype.kind != "f" else g.dtype
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray((g.astype(dtype) / count) * hit, dtype=dtype)


def _expand(g, x_shape, axis, keepdims, op):
    """Check ``g`` against the forward's output shape and give it keepdims form."""
    x_shape = tuple(int(n) for n in x_shape)
    axes = normalize_axes(axis, len(x_shape), op)
    g = np.asarray(g)
    expected = reduced_shape(x_shape, axes, keepdims)
    if g.shape != expected:
        raise ValueError(f"{op}: g has shape {g.shape}, expected the forward's output shape {expected}")
    return x_shape, axes, g.reshape(reduced_shape(x_shape, axes, True))


# ------------------------------------------------------------------ complex numbers
# PyTorch's convention: for y = f(x) holomorphic, the gradient with respect to x is
# conj(dy/dx) * g. The linear gradients (sums, moves) act on the parts of g (see
# axisops._complex); the products' gradients below are NumPy loops, in index order.


def _complex_prod_grad(g, x, axis, keepdims):
    x = _dtypes.as_array(x)
    x_shape, axes, g = _expand(g, x.shape, axis, keepdims, "grad.prod")
    res = np.result_type(x.dtype, g.dtype, np.complex64)
    _complex.check(res, "grad.prod")
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x.astype(res), kept + list(axes))
    # explicit sizes: -1 cannot be inferred for an empty kept part
    rows = moved.reshape(math.prod(moved.shape[:len(kept)]), math.prod(moved.shape[len(kept):]))
    others = _exclusive_products(rows) * _exclusive_products(rows[:, ::-1])[:, ::-1]
    others = np.transpose(others.reshape(moved.shape), np.argsort(kept + list(axes)))
    return np.conj(others) * np.broadcast_to(g, x_shape)

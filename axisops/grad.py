"""Vector-Jacobian products of the axisops operators.

Each function takes the gradient ``g`` of the forward's output first, then what
the forward must save (``x_shape`` where the gradient does not depend on the
values, ``x`` itself where it does), then the forward's own arguments, and
returns the gradient with respect to ``x`` with ``x``'s shape (also where the
forward flattened it, ``axis=None``). ``argmax`` and ``argmin`` have no gradient.

Every function here is named after the operator of :mod:`axisops` whose
gradient it is (``axisops.grad.cummax`` is the gradient of ``axisops.cummax``).
``cummax`` and ``cummin`` save the forward's ``indices`` instead of ``x``;
``scatter`` returns a tuple, the gradients with respect to ``x`` and to
``updates``. The options (``axis``, ``keepdims``, ``mode``, ...) must be those
of the forward call.

>>> import numpy as np
>>> import axisops
>>> axisops.grad.max(np.ones(2), np.array([[1., 3., 3.], [2., 0., 1.]]), axis=1)
array([[0. , 0.5, 0.5],
       [1. , 0. , 0. ]])
"""
from __future__ import annotations

import math

import numpy as np

from . import _complex, _dtypes, _indices
from . import gather as _gather
from . import reduce as _reduce
from . import scan as _scan
from . import window as _window
from ._axes import normalize_axes, normalize_axis, reduced_shape
from ._dispatch import dispatched
from ._jit import run
from .kernels import gather as _gather_kernels
from .kernels import scan as _scan_kernels
from .typing import Array, ArrayLike, Axis, GatherMode, ScatterReduce, Shape, Size

__all__ = ["sum", "mean", "prod", "max", "min",
           "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
           "take", "take_along_axis", "gather_nd", "scatter", "unfold", "fold"]


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


# ----------------------------------------------------------------------- scans


@dispatched
def cumsum(g: ArrayLike, x_shape: Shape, axis: int | None = None, exclusive: bool = False,
           reverse: bool = False) -> Array:
    """Gradient of :func:`axisops.cumsum`: the cumulative sum of ``g`` the other way.

    Returned in ``g``'s dtype (float16 accumulates in float32), with ``x``'s shape.

    ``dx_k`` is the sum of ``g_j`` over the outputs ``j`` that ``x_k`` entered:
    a cumulative sum of ``g`` in the opposite direction to the forward's,
    exclusive where the forward's was. The values of ``x`` do not matter, only
    its shape.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.cumsum(x, axis, exclusive=exclusive, reverse=reverse)``, of
        that result's shape: ``x_shape``, or ``(prod(x_shape),)`` for
        ``axis=None`` (0-d for a 0-d ``x``).
    x_shape : tuple of ints
        Shape of the forward's input ``x``.
    axis : int or None, optional
        The axis the forward scanned (negative counts from the end). Default
        None: the forward scanned the flattened ``x``.
    exclusive : bool, optional
        Whether the forward's scan was exclusive (each output leaves out its own
        element); must be the forward's. Default False.
    reverse : bool, optional
        Whether the forward scanned from the end of the axis; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of shape ``x_shape``, in ``g``'s
        dtype.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x_shape``.
    TypeError
        If ``axis`` is not a single int or None, or ``g``'s dtype is not bool,
        integer or float.

    See Also
    --------
    axisops.cumsum : The forward operator.
    axisops.grad.sum : The gradient of the sum.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.cumsum(np.array([1., 2., 3.]), (3,))
    array([6., 5., 3.])
    >>> axisops.grad.cumsum(np.array([1., 2., 3.]), (3,), exclusive=True)
    array([5., 3., 0.])
    >>> axisops.grad.cumsum(np.ones(4), (2, 2))   # the forward scanned the flattened x
    array([[4., 3.],
           [2., 1.]])
    """
    x_shape, axis, g = _scan_g(g, x_shape, axis, "grad.cumsum")
    res = _scan.cumsum(g, axis, dtype=g.dtype, exclusive=exclusive, reverse=not reverse)
    return res.reshape(x_shape)


@dispatched
def cumprod(g: ArrayLike, x: ArrayLike, axis: int | None = None, exclusive: bool = False,
            reverse: bool = False) -> Array:
    """Gradient of :func:`axisops.cumprod`, exact with zeros in ``x`` (no division).

    ``dx_k`` is the product of the elements before ``k`` times
    ``sum over j >= k of g_j * (product of x_i for k < i <= j)``, computed by a
    forward and a backward pass along the axis. The result dtype is
    ``result_type(x, g, float16)``; float16 is computed in float32.

    Where a running product or sum is not a normal float (it may have
    overflowed or underflowed on its own), that lane is computed again with
    mantissas and exponents kept apart and rounded once, so the gradient is
    finite wherever its true value is.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.cumprod(x, axis, exclusive=exclusive, reverse=reverse)``, of
        that result's shape: ``x.shape``, or ``(x.size,)`` for ``axis=None``
        (0-d for a 0-d ``x``).
    x : array_like
        The forward's input, of a bool, integer or float dtype.
    axis : int or None, optional
        The axis the forward scanned (negative counts from the end). Default
        None: the forward scanned the flattened ``x``.
    exclusive : bool, optional
        Whether the forward's scan was exclusive (each output leaves out its own
        element); must be the forward's. Default False.
    reverse : bool, optional
        Whether the forward scanned from the end of the axis; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of ``x``'s shape, in
        ``numpy.result_type(x, g, numpy.float16)`` (a float dtype: float64 for
        int64 or float64 operands).

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x``.
    TypeError
        If ``x``'s dtype is not bool, integer or float, or ``axis`` is not a
        single int or None.

    See Also
    --------
    axisops.cumprod : The forward operator.
    axisops.grad.prod : The gradient of the product.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.cumprod(np.ones(3), np.array([2., 0., 5.]))   # y = [2, 0, 0]
    array([ 1., 12.,  0.])
    >>> axisops.grad.cumprod(np.ones(3), np.array([2., 3., 4.]))   # y = [2, 6, 24]
    array([16., 10.,  6.])
    """
    if _is_complex(g, x):
        return _complex_cumprod_grad(g, x, axis, exclusive, reverse)
    x = _dtypes.as_array(x)
    _dtypes.check_dtype(x.dtype, "grad.cumprod")
    x_shape, axis, g = _scan_g(g, x.shape, axis, "grad.cumprod")
    dtype = np.result_type(x.dtype, g.dtype, np.float16)
    work = np.float32 if dtype == np.float16 else dtype
    x3, g3 = _lanes(x, axis, work), _lanes(g, axis, work)
    out, (lane_o, lane_i) = _plain_cumprod_grad(x3, g3, exclusive, reverse, work)
    if lane_o.size:
        xs, gs = x3[lane_o, :, lane_i][..., None], g3[lane_o, :, lane_i][..., None]
        xm, xe = np.frexp(xs)
        gm, ge = np.frexp(gs)
        om, oe = np.empty(xs.shape, work), np.empty(xs.shape, np.int64)
        run(_scan_kernels.cumprod_vjp_scaled, om.size, xm, xe.astype(np.int64), gm,
            ge.astype(np.int64), _powers_of_half(work), bool(exclusive), bool(reverse), om, oe)
        out[lane_o, :, lane_i] = np.ldexp(om, oe)[..., 0]
    return out.astype(dtype, copy=False).reshape(x_shape)


def _plain_cumprod_grad(x3, g3, exclusive, reverse, work):
    """``cumprod_vjp`` on (outer, n, inner) lanes of *work* dtype: (the plain
    gradient, the (outer, inner) indices of the lanes to compute again with
    mantissas and exponents apart (see ``cumprod_vjp_scaled``): where a result is
    not a normal float, or a running product or sum passed through subnormals)."""
    out = np.empty(x3.shape, work)
    rescue = np.zeros((x3.shape[0], x3.shape[2]), np.uint8)
    run(_scan_kernels.cumprod_vjp, out.size, x3, g3, bool(exclusive), bool(reverse),
        np.finfo(work).smallest_normal, out, rescue)
    return out, np.nonzero(~np.all(_normal(out), axis=1) | (rescue != 0))


def _normal(a: np.ndarray) -> np.ndarray:
    """Where *a* is a normal float: finite, and neither 0 nor subnormal (what a
    running product that underflowed becomes)."""
    magnitude = np.abs(a)
    info = np.finfo(a.dtype)
    return (magnitude >= info.smallest_normal) & (magnitude <= info.max)


def _powers_of_half(dtype) -> np.ndarray:
    """2**-k in *dtype* for every k down to its smallest subnormal (then 0)."""
    info = np.finfo(dtype)
    count = -int(np.log2(float(info.smallest_subnormal))) + 2
    return np.ldexp(np.ones(count, dtype), -np.arange(count))


@dispatched
def cummax(g: ArrayLike, indices: ArrayLike, x_shape: Shape, axis: int | None = None) -> Array:
    """Gradient of :func:`axisops.cummax`: ``g`` summed at the positions in ``indices``.

    Paddle's and PyTorch's backward, a scatter-add along the axis, done lane by
    lane in order (deterministic). ``indices`` is the forward's, of ``g``'s shape,
    each in ``[0, n)``. Returned in ``g``'s dtype (float16 summed in float32).

    Each element of ``x`` gets the sum of ``g`` over the outputs whose running
    maximum it was; the values of ``x`` do not matter beyond the ``indices``
    the forward returned.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to ``values``, the first result of
        ``axisops.cummax(x, axis)``, of its shape: ``x_shape``, or
        ``(prod(x_shape),)`` for ``axis=None`` (0-d for a 0-d ``x``).
    indices : array_like of ints
        The forward's ``indices`` (any integer dtype), of ``g``'s shape, each in
        ``[0, n)``, ``n`` the length of the scanned axis (of the flattened
        ``x`` for ``axis=None``).
    x_shape : tuple of ints
        Shape of the forward's input ``x``.
    axis : int or None, optional
        The axis the forward scanned (negative counts from the end). Default
        None: the forward scanned the flattened ``x``.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of shape ``x_shape``, in ``g``'s
        dtype (int64 for bool ``g``).

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result, or ``indices``'
        shape is not ``g``'s.
    IndexError
        If an index is outside ``[0, n)`` (negative indices are not accepted).
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x_shape``.
    TypeError
        If ``indices`` is not of an integer dtype, or ``axis`` is not a single
        int or None.

    See Also
    --------
    axisops.cummax : The forward operator.
    axisops.grad.cummin : The gradient of the running minimum.
    axisops.grad.max : The gradient of the maximum.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> values, indices = axisops.cummax(np.array([1., 3., 2., 3.]))
    >>> indices
    array([0, 1, 1, 3])
    >>> axisops.grad.cummax(np.array([1., 10., 100., 1000.]), indices, (4,))
    array([   1.,  110.,    0., 1000.])
    """
    return _extreme_scan_grad(g, indices, x_shape, axis, "grad.cummax")


@dispatched
def cummin(g: ArrayLike, indices: ArrayLike, x_shape: Shape, axis: int | None = None) -> Array:
    """Gradient of :func:`axisops.cummin`: ``g`` summed at the positions in ``indices``.

    Paddle's and PyTorch's backward, a scatter-add along the axis, done lane by
    lane in order (deterministic): each element of ``x`` gets the sum of ``g``
    over the outputs whose running minimum it was. Returned in ``g``'s dtype
    (float16 summed in float32).

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to ``values``, the first result of
        ``axisops.cummin(x, axis)``, of its shape: ``x_shape``, or
        ``(prod(x_shape),)`` for ``axis=None`` (0-d for a 0-d ``x``).
    indices : array_like of ints
        The forward's ``indices`` (any integer dtype), of ``g``'s shape, each in
        ``[0, n)``, ``n`` the length of the scanned axis (of the flattened
        ``x`` for ``axis=None``).
    x_shape : tuple of ints
        Shape of the forward's input ``x``.
    axis : int or None, optional
        The axis the forward scanned (negative counts from the end). Default
        None: the forward scanned the flattened ``x``.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of shape ``x_shape``, in ``g``'s
        dtype (int64 for bool ``g``).

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result, or ``indices``'
        shape is not ``g``'s.
    IndexError
        If an index is outside ``[0, n)`` (negative indices are not accepted).
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x_shape``.
    TypeError
        If ``indices`` is not of an integer dtype, or ``axis`` is not a single
        int or None.

    See Also
    --------
    axisops.cummin : The forward operator.
    axisops.grad.cummax : The gradient of the running maximum.
    axisops.grad.min : The gradient of the minimum.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> values, indices = axisops.cummin(np.array([3., 1., 2.]))
    >>> indices
    array([0, 1, 1])
    >>> axisops.grad.cummin(np.array([1., 2., 4.]), indices, (3,))
    array([1., 6., 0.])
    """
    return _extreme_scan_grad(g, indices, x_shape, axis, "grad.cummin")


@dispatched
def logcumsumexp(g: ArrayLike, x: ArrayLike, axis: int | None = None) -> Array:
    """Gradient of :func:`axisops.logcumsumexp`: ``dx_k = sum over j >= k of g_j exp(x_k - y_j)``.

    Computed by one backward pass whose factors never exceed 1 (stable for large
    inputs). A factor ``exp(x_k - y_j)`` is taken as 1 where ``x_k == y_j``, also
    for equal infinities, so a ``-inf`` prefix passes ``g`` through (PyTorch's
    formula gives NaN there); a NaN in a lane makes the lane's gradient NaN. The
    result has ``x``'s float dtype (float64 for integers); float16 is computed in
    float32.

    Here ``y`` is the forward's result, which the gradient computes again from
    ``x``.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.logcumsumexp(x, axis)``, of that result's shape: ``x.shape``,
        or ``(x.size,)`` for ``axis=None`` (0-d for a 0-d ``x``).
    x : array_like
        The forward's input, of a bool, integer or float dtype.
    axis : int or None, optional
        The axis the forward scanned (negative counts from the end). Default
        None: the forward scanned the flattened ``x``.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of ``x``'s shape, in ``x``'s dtype
        where that is a float dtype and in float64 otherwise (``g``'s dtype does
        not matter).

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x``.
    TypeError
        If ``x``'s dtype is not bool, integer or float, or ``axis`` is not a
        single int or None.

    See Also
    --------
    axisops.logcumsumexp : The forward operator.
    axisops.grad.cumsum : The gradient of the cumulative sum.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.logcumsumexp(np.array([1., 1.]), np.array([0., 0.]))
    array([1.5, 0.5])
    >>> axisops.grad.logcumsumexp(np.array([1., 1.]), np.array([-np.inf, 0.]))
    array([1., 1.])
    """
    x = _dtypes.as_array(x)
    _dtypes.check_dtype(x.dtype, "grad.logcumsumexp")
    x_shape, axis, g = _scan_g(g, x.shape, axis, "grad.logcumsumexp")
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    work = np.float32 if dtype == np.float16 else dtype
    x3 = _lanes(x, axis, work)
    y3 = _scan.logcumsumexp(x3, 1)  # (outer, n, inner) in the work dtype, like x3
    out = np.empty(x3.shape, work)
    run(_scan_kernels.logcumsumexp_vjp, out.size, x3, y3, _lanes(g, axis, work), out)
    return out.astype(dtype, copy=False).reshape(x_shape)


def _scan_g(g, x_shape, axis, op):
    """Check ``g`` against a scan's output shape; return (x_shape, axis, g).

    For ``axis=None`` the forward scanned the flattened array, so ``g`` is 1-D (0-d
    for a 0-d ``x``); the gradients scan it flat and reshape the result to ``x_shape``.
    """
    x_shape = tuple(int(n) for n in x_shape)
    g = np.asarray(g)
    if axis is None:
        expected = (math.prod(x_shape),) if x_shape else ()
    else:
        axis = normalize_axis(axis, len(x_shape), op)
        expected = x_shape
    if g.shape != expected:
        raise ValueError(f"{op}: g has shape {g.shape}, expected the forward's output shape {expected}")
    return x_shape, axis, g


def _lanes(a, axis, dtype):
    """*a* as a C-contiguous ``(outer, n, inner)`` array of *dtype* scanned along *axis*
    (``None``: the flattened array)."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if axis is None:
        return a.reshape(1, a.size, 1)
    return a.reshape(math.prod(a.shape[:axis]), a.shape[axis], math.prod(a.shape[axis + 1:]))


def _extreme_scan_grad(g, indices, x_shape, axis, op):
    x_shape, axis, g = _scan_g(g, x_shape, axis, op)
    indices = _indices.as_index_array(indices, op)
    if indices.shape != g.shape:
        raise ValueError(f"{op}: indices has shape {indices.shape}, expected g's shape {g.shape}")
    n = math.prod(x_shape) if axis is None else x_shape[axis]
    _indices.check_in_range(indices, n, op)
    dtype = np.dtype(np.int64) if g.dtype == np.bool_ else g.dtype
    work = np.float32 if dtype == np.float16 else dtype
    g3 = _lanes(g, axis, work)
    out = np.zeros(g3.shape, work)
    run(_scan_kernels.scatter_add_lanes, out.size, _lanes(indices, axis, np.int64), g3, out)
    return out.astype(dtype, copy=False).reshape(x_shape)


# ----------------------------------------------------------- gather and scatter


@dispatched
def take(g: ArrayLike, indices: ArrayLike, x_shape: Shape, axis: int | None = None,
         mode: GatherMode = "raise") -> Array:
    """Gradient of :func:`axisops.take`: ``g`` scatter-added at the indices.

    Repeated indices add up, in C order of ``indices`` (the same bits for any
    number of threads). With ``mode="wrap"`` or ``"clip"`` the gradient goes to
    the element taken; with ``"fill"`` out-of-range positions took no element and
    contribute nothing. Non-float ``g`` is converted to float64; float16
    accumulates in float32.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.take(x, indices, axis, mode=mode)``, of that result's shape:
        ``x_shape[:axis] + indices.shape + x_shape[axis+1:]``, or
        ``indices.shape`` for ``axis=None``; a bool, integer or float dtype.
    indices : array_like of ints
        The forward's indices (any integer dtype and shape); negative indices
        count from the end.
    x_shape : tuple of ints
        Shape of the forward's input ``x``.
    axis : int or None, optional
        The axis the forward took along (negative counts from the end). Default
        None: the forward took from the flattened ``x``.
    mode : {"raise", "wrap", "clip", "fill"}, optional
        The forward's handling of indices outside ``[-n, n)``; must be the
        forward's. Default "raise".

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of shape ``x_shape``, in ``g``'s
        dtype where that is a float dtype and in float64 otherwise.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result, or ``mode`` is not
        one of the four.
    IndexError
        With ``mode="raise"``, if an index is outside ``[-n, n)``, ``n`` the
        length of the axis; with any mode but ``"fill"``, if the axis is empty
        and ``indices`` is not.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x_shape``.
    TypeError
        If ``indices`` is not of an integer dtype, ``g``'s dtype is not bool,
        integer or float, or ``axis`` is not a single int or None.

    See Also
    --------
    axisops.take : The forward operator.
    axisops.grad.take_along_axis : The gradient of the per-element gather.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.take(np.array([1., 2., 3.]), [0, 2, 0], (3,))
    array([4., 0., 2.])
    >>> axisops.grad.take(np.ones((2, 2)), [1, 5], (2, 3), axis=1, mode="fill")
    array([[0., 1., 0.],
           [0., 1., 0.]])
    """
    if _is_complex(g):  # linear: the parts of g
        return _complex.componentwise(lambda part: take(part, indices, x_shape, axis, mode), np.asarray(g))
    op = "grad.take"
    x_shape = _shape(x_shape)
    indices = _indices.as_index_array(indices, op)
    mode_code = _gather._mode(mode, op)
    outer_dims, n_dims, rest_dims, _ = _gather.take_dims(x_shape, axis, op)
    outer, n, rest = math.prod(outer_dims), math.prod(n_dims), math.prod(rest_dims)
    g, dtype, work = _gather_g(g, outer_dims + indices.shape + rest_dims, op)
    _gather._check_empty_axis(indices, n, mode_code, op)
    out = np.zeros((outer, n, rest), work)
    if not (g.size and n):
        _gather._check_unseen(indices, n, mode_code, op)
    else:
        m = indices.size
        idx = np.broadcast_to(_gather._int64(indices, n, mode_code).reshape(1, m, 1), (outer, m, rest))
        if _gather._scatter_into(out, idx, g.reshape(outer, m, rest), 1, _gather_kernels.OP_ADD,
                                 mode_code):
            _indices.check_in_range(indices, n, op, negative=True)
    return out.astype(dtype, copy=False).reshape(x_shape)


@dispatched
def take_along_axis(g: ArrayLike, indices: ArrayLike, x_shape: Shape, axis: int | None,
                    mode: GatherMode = "raise") -> Array:
    """Gradient of :func:`axisops.take_along_axis`: ``g`` scatter-added at the indices.

    Where the forward broadcast ``x`` (a 1 in ``x`` meeting a larger ``indices``
    dimension) the contributions are summed; where it used only the leading part
    of ``x`` the rest gets 0. Modes as in :func:`take`.

    Repeated indices add up; non-float ``g`` is converted to float64 and
    float16 accumulates in float32.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.take_along_axis(x, indices, axis, mode=mode)``, of that
        result's shape: ``indices.shape``, except that a dimension other than
        ``axis`` where ``indices`` has 1 and ``x`` more has ``x``'s size; a
        bool, integer or float dtype.
    indices : array_like of ints
        The forward's indices (any integer dtype), of ``len(x_shape)``
        dimensions (1-D for ``axis=None``); negative indices count from the end.
    x_shape : tuple of ints
        Shape of the forward's input ``x``.
    axis : int or None
        The axis the forward took along (negative counts from the end); None:
        the forward took from the flattened ``x``.
    mode : {"raise", "wrap", "clip", "fill"}, optional
        The forward's handling of indices outside ``[-n, n)``; must be the
        forward's. Default "raise".

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of shape ``x_shape``, in ``g``'s
        dtype where that is a float dtype and in float64 otherwise.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result; ``indices`` has
        not ``len(x_shape)`` dimensions (not 1 for ``axis=None``), or a
        dimension that neither matches, broadcasts with nor fits in ``x``'s;
        or ``mode`` is not one of the four.
    IndexError
        With ``mode="raise"``, if an index is outside ``[-n, n)``, ``n`` the
        length of the axis; with any mode but ``"fill"``, if the axis is empty
        and ``indices`` is not.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x_shape``.
    TypeError
        If ``indices`` is not of an integer dtype, ``g``'s dtype is not bool,
        integer or float, or ``axis`` is not a single int or None.

    See Also
    --------
    axisops.take_along_axis : The forward operator.
    axisops.grad.take : The gradient of take.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.take_along_axis(np.array([[1., 2.]]), np.array([[1, 1]]), (1, 3), axis=1)
    array([[0., 3., 0.]])
    >>> g = np.array([[1., 2.], [3., 4.]])   # x of shape (1, 3) was broadcast to 2 rows
    >>> axisops.grad.take_along_axis(g, np.array([[0, 2], [2, 2]]), (1, 3), axis=1)
    array([[1., 0., 9.]])
    """
    if _is_complex(g):  # linear: the parts of g
        return _complex.componentwise(
            lambda part: take_along_axis(part, indices, x_shape, axis, mode), np.asarray(g))
    op = "grad.take_along_axis"
    x_shape = _shape(x_shape)
    indices = _indices.as_index_array(indices, op)
    mode_code = _gather._mode(mode, op)
    shape, axis, out_shape = _along_shapes(x_shape, indices.shape, axis, op)
    g, dtype, work = _gather_g(g, out_shape, op)
    n = shape[axis]
    _gather._check_empty_axis(indices, n, mode_code, op)
    acc_shape = out_shape[:axis] + (n,) + out_shape[axis + 1:]
    acc = np.zeros(acc_shape, work)
    if not (g.size and n):
        _gather._check_unseen(indices, n, mode_code, op)
    else:
        idx = np.broadcast_to(_gather._int64(indices, n, mode_code), out_shape)
        if _gather._scatter_into(acc, idx, g, axis, _gather_kernels.OP_ADD, mode_code):
            _indices.check_in_range(indices, n, op, negative=True)
    broadcast = tuple(d for d, s in enumerate(shape) if s == 1 and acc_shape[d] != 1)
    if broadcast:
        acc = acc.sum(axis=broadcast, keepdims=True)
    if acc.shape != shape:  # only the leading part was used
        full = np.zeros(shape, work)
        full[tuple(slice(0, s) for s in acc.shape)] = acc
        acc = full
    return acc.astype(dtype, copy=False).reshape(x_shape)


@dispatched
def gather_nd(g: ArrayLike, indices: ArrayLike, x_shape: Shape, batch_dims: int = 0) -> Array:
    """Gradient of :func:`axisops.gather_nd`: each slice of ``g`` added back where it came from.

    Slices gathered more than once get the sum of their gradients; slices not
    gathered get 0. Non-float ``g`` is converted to float64; float16
    accumulates in float32.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.gather_nd(x, indices, batch_dims=batch_dims)``, of that
        result's shape: ``indices.shape[:-1] + x_shape[batch_dims + q:]``, ``q``
        the length of the index tuples (``indices.shape[-1]``); a bool, integer
        or float dtype.
    indices : array_like of ints
        The forward's indices (any integer dtype): tuples of ``q`` indices along
        the last dimension; negative indices count from the end.
    x_shape : tuple of ints
        Shape of the forward's input ``x``.
    batch_dims : int, optional
        The number of leading dimensions ``x`` and ``indices`` share; must be
        the forward's. Default 0.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of shape ``x_shape``, in ``g``'s
        dtype where that is a float dtype and in float64 otherwise.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result; ``indices`` is
        0-d; ``batch_dims`` is not in ``[0, min(len(x_shape), indices.ndim))``;
        the batch dimensions of ``x_shape`` and ``indices`` differ; or ``q`` is
        not in ``[1, len(x_shape) - batch_dims]``.
    IndexError
        If an index is outside ``[-d, d)``, ``d`` the length of its dimension.
    TypeError
        If ``indices`` is not of an integer dtype, ``batch_dims`` is not an int,
        or ``g``'s dtype is not bool, integer or float.

    See Also
    --------
    axisops.gather_nd : The forward operator.
    axisops.grad.take : The gradient of take.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.gather_nd(np.array([1., 2., 3.]), [[0, 1], [1, 0], [0, 1]], (2, 2))
    array([[0., 4.],
           [2., 0.]])
    >>> g = np.array([[1., 2.], [3., 4.]])   # row 2 of batch 0, row 0 of batch 1
    >>> axisops.grad.gather_nd(g, [[2], [0]], (2, 3, 2), batch_dims=1)
    array([[[0., 0.],
            [0., 0.],
            [1., 2.]],
    <BLANKLINE>
           [[3., 4.],
            [0., 0.],
            [0., 0.]]])
    """
    if _is_complex(g):  # linear: the parts of g
        return _complex.componentwise(
            lambda part: gather_nd(part, indices, x_shape, batch_dims), np.asarray(g))
    op = "grad.gather_nd"
    x_shape = _shape(x_shape)
    indices = _indices.as_index_array(indices, op)
    b, dims, out_shape, flat = _gather._nd_plan(x_shape, indices, batch_dims, op)
    g, dtype, work = _gather_g(g, out_shape, op)
    batch, n = math.prod(x_shape[:b]), math.prod(dims)
    rest, m = math.prod(x_shape[b + len(dims):]), math.prod(indices.shape[b:-1])
    out = np.zeros((batch, n, rest), work)
    if g.size:
        idx = np.broadcast_to(flat.reshape(batch, m, 1), (batch, m, rest))
        _gather._scatter_into(out, idx, g.reshape(batch, m, rest), 1, _gather_kernels.OP_ADD,
                              _gather_kernels.MODE_RAISE)
    return out.astype(dtype, copy=False).reshape(x_shape)


@dispatched
def scatter(g: ArrayLike, x: ArrayLike, indices: ArrayLike, updates: ArrayLike, axis: int,
            reduce: ScatterReduce = None) -> tuple[Array, Array]:
    """Gradient of :func:`axisops.scatter`: ``(grad_x, grad_updates)``.

    ``grad_updates`` has ``updates``' shape (summed where the forward broadcast
    it, 0 outside the leading part it used). By ``reduce``:

    * ``None``: ``x``'s elements that were overwritten get 0; each destination's
      gradient goes to the update that won (the last in C order), the overwritten
      updates get 0 (``torch.scatter`` gives every update the destination's
      gradient; this is the derivative of last-wins).
    * ``"add"``: ``grad_x = g``, each update gets its destination's ``g``.
    * ``"mul"``: products of the other factors, without division, so zeros are exact.
    * ``"max"``/``"min"``: as ``torch.scatter_reduce(include_self=True)``: ``g`` split
      evenly between ``x``'s element and every update equal to the result (NaN
      counts as equal to NaN).

    An inf or NaN in ``x`` or ``updates`` gives inf or NaN gradients, without
    warnings.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.scatter(x, indices, updates, axis, reduce=reduce)``, of ``x``'s
        shape; a bool, integer or float dtype.
    x : array_like
        The forward's input, of a bool, integer or float dtype.
    indices : array_like of ints
        The forward's indices (any integer dtype), of ``x``'s number of
        dimensions; negative indices count from the end.
    updates : array_like
        The forward's updates, as given to it: of ``indices``' shape, larger
        (its leading part was used) or broadcastable to it.
    axis : int
        The axis the forward scattered along (negative counts from the end).
    reduce : {None, "add", "mul", "max", "min"}, optional
        How the forward combined the updates with ``x``; must be the forward's.
        Default None: the last update written wins.

    Returns
    -------
    grad_x : numpy.ndarray
        The gradient with respect to ``x``, of ``x``'s shape.
    grad_updates : numpy.ndarray
        The gradient with respect to ``updates``, of the shape ``updates`` had
        (0-d for a scalar). Both are in ``g``'s dtype where that is a float
        dtype and in float64 otherwise; float16 is computed in float32.

    Raises
    ------
    ValueError
        If ``g``'s shape is not ``x``'s; ``reduce`` is not one of the five;
        ``indices`` has not ``x``'s number of dimensions or is larger than ``x``
        outside ``axis``; or ``updates`` neither matches, contains, nor
        broadcasts to ``indices``' shape.
    IndexError
        If an index is outside ``[-n, n)``, ``n`` the length of ``axis``.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x``.
    TypeError
        If ``x``'s dtype is not bool, integer or float; ``indices`` is not of an
        integer dtype; ``axis`` is None or a bool; ``updates`` cannot be cast to
        ``x``'s dtype (``same_kind``); or ``g``'s dtype is not bool, integer or
        float.

    See Also
    --------
    axisops.scatter : The forward operator.
    axisops.grad.take_along_axis : The gradient of the matching gather.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.array([1., 5., 2.])
    >>> gx, gu = axisops.grad.scatter(np.ones(3), x, [0, 0], [4., 3.], 0, reduce="mul")
    >>> gx, gu
    (array([12.,  1.,  1.]), array([3., 4.]))
    >>> axisops.grad.scatter(np.ones(3), x, [0, 0], [4., 3.], 0)   # the last write wins
    (array([0., 1., 1.]), array([0., 1.]))
    >>> axisops.grad.scatter(np.ones(3), x, [0, 0], [4., 4.], 0, reduce="max")  # a tie
    (array([0., 1., 1.]), array([0.5, 0.5]))
    """
    if _is_complex(g, x, updates):
        return _complex_scatter_grad(g, x, indices, updates, axis, reduce)
    op = "grad.scatter"
    given_shape = np.shape(updates)
    x, indices, upd, axis = _gather._scatter_args(x, indices, updates, axis, reduce, op)
    g, dtype, work = _gather_g(g, x.shape, op)
    n = x.shape[axis]
    _indices.check_in_range(indices, n, op, negative=True)
    idx = _gather._int64(indices, n, _gather_kernels.MODE_RAISE)
    idx = np.where(idx < 0, idx + n, idx)
    lead = tuple(slice(None) if d == axis else slice(0, s) for d, s in enumerate(indices.shape))

    def at_destinations(a):  # a (x's shape) read at each update's destination
        return _gather.take_along_axis(a[lead], idx, axis)

    # inf and NaN in x or updates give inf and NaN gradients, without warnings
    with np.errstate(all="ignore"):
        if reduce is None:
            position = np.arange(indices.size, dtype=np.int64).reshape(indices.shape)
            last = _gather.scatter(np.full(x.shape, -1, np.int64), idx, position, axis, reduce="max")
            grad_x = np.where(last < 0, g, 0)
            grad_u = np.where(at_destinations(last) == position, at_destinations(g), 0)
        elif reduce == "add":
            grad_x = g.copy()
            grad_u = at_destinations(g)
        elif reduce == "mul":
            grad_x, grad_u = _scatter_mul_grad(g, x, idx, upd, axis, work)
        else:
            result = _gather.scatter(x, idx, upd, axis, reduce=reduce)
            from_x = _same(x, result)
            from_u = _same(upd.astype(x.dtype), at_destinations(result))
            count = _gather.scatter(from_x.astype(work), idx, from_u.astype(work), axis, reduce="add")
            share = g / count  # count >= 1: the result is x's element or one of the updates
            grad_x = np.where(from_x, share, 0)
            grad_u = np.where(from_u, at_destinations(share), 0)
        return (np.asarray(grad_x, dtype=work).astype(dtype, copy=False),
                _to_shape(np.asarray(grad_u, dtype=work), given_shape).astype(dtype, copy=False))


def _along_shapes(x_shape, indices_shape, axis, op):
    """(the shape taken along, axis, the forward's result shape) of
    ``take_along_axis``'s gradient, checked: ``axis=None`` takes along the
    flattened ``x`` with 1-D indices."""
    ndim = len(indices_shape)
    shape = x_shape
    if axis is None:
        if ndim != 1:
            raise ValueError(f"{op}: with axis=None indices must be 1-D, got {ndim} dimensions")
        shape, axis = (math.prod(x_shape),), 0
    if ndim != len(shape):
        raise ValueError(f"{op}: indices must have x's {len(shape)} dimensions, got {ndim}")
    axis = normalize_axis(axis, len(shape), op)
    return shape, axis, _gather._along_shape(shape, tuple(indices_shape), axis)


def _shape(x_shape) -> tuple[int, ...]:
    return tuple(int(s) for s in x_shape)


def _gather_g(g, expected, op):
    """(g in its working dtype, gradient dtype, working dtype), ``g`` checked against
    the forward's output shape. Non-float ``g`` becomes float64; float16 works in float32."""
    g = np.asarray(g)
    if g.shape != tuple(expected):
        raise ValueError(f"{op}: g has shape {g.shape}, expected the forward's output shape "
                         f"{tuple(expected)}")
    if g.dtype.kind not in "biuf":
        raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
    dtype = g.dtype if g.dtype.kind == "f" else np.dtype(np.float64)
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    return g.astype(work, copy=False), dtype, work


def _same(a, b):
    """a == b, with NaN equal to NaN."""
    eq = a == b
    if a.dtype.kind == "f":
        eq |= np.isnan(a) & np.isnan(b)
    return eq


def _scatter_mul_grad(g, x, idx, upd, axis, work):
    """grad.scatter for reduce="mul": the products of the other factors of each
    destination, from prefix and suffix products within its group of updates."""
    u = upd.astype(x.dtype).astype(work)
    grad_x = g * _gather.scatter(np.ones(x.shape, work), idx, u, axis, reduce="mul")
    coords = list(np.indices(idx.shape, sparse=True))
    coords[axis] = idx
    dest = np.ravel_multi_index(np.broadcast_arrays(*coords), x.shape).reshape(-1)
    order = np.argsort(dest, kind="stable")  # C order within each destination
    sorted_dest = dest[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_dest[1:] != sorted_dest[:-1], [True])))
    others = np.empty(dest.size, work)
    _gather_kernels.segment_exclusive_products(u.reshape(-1)[order], starts, work.type(1), others)
    exclusive = np.empty(dest.size, work)
    exclusive[order] = others
    x_flat = np.ascontiguousarray(x, dtype=work).reshape(-1)
    grad_u = g.reshape(-1)[dest] * x_flat[dest] * exclusive
    return grad_x, grad_u.reshape(idx.shape)


def _to_shape(grad, shape):
    """A gradient of indices' shape back to the shape ``updates`` had: summed over
    broadcast dimensions, or zero-padded where only the leading part was used."""
    if grad.shape == tuple(shape):
        return grad
    if len(shape) == grad.ndim and all(s >= t for s, t in zip(shape, grad.shape)):
        full = np.zeros(shape, grad.dtype)
        full[tuple(slice(0, t) for t in grad.shape)] = grad
        return full
    lead = grad.ndim - len(shape)
    grad = np.asarray(grad.sum(axis=tuple(range(lead)))) if lead else grad
    ones = tuple(d for d, s in enumerate(shape) if s == 1 and grad.shape[d] != 1)
    return np.asarray(grad.sum(axis=ones, keepdims=True) if ones else grad).reshape(shape)


# ------------------------------------------------------------- sliding windows


@dispatched
def unfold(g: ArrayLike, x_shape: Shape, kernel_size: Size, dilation: Size = 1,
           padding: Size = 0, stride: Size = 1, channels_last: bool = False) -> Array:
    """Gradient of :func:`axisops.unfold`: a :func:`axisops.fold` of ``g`` into ``x_shape``.

    Every element of ``x`` gets the sum of ``g`` over the window positions that read
    it (in increasing kernel index, deterministic); padding gets nothing.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.unfold(x, kernel_size, ...)``, of that result's shape:
        ``(N, C*K, L)``, or ``(N, L, K*C)`` with ``channels_last``, without
        ``N`` for an unbatched ``x`` (``K = prod(kernel_size)``, ``L`` the
        number of window positions); a bool, integer or float dtype.
    x_shape : tuple of ints
        Shape of the forward's input ``x``: ``(N, C, *spatial)`` or
        ``(C, *spatial)``; with ``channels_last`` ``(N, *spatial, C)`` or
        ``(*spatial, C)``.
    kernel_size : int or tuple of ints
        The forward's window size: 1 to 3 entries, one per spatial dimension;
        an int ``k`` means ``(k, k)``.
    dilation : int or tuple of ints, optional
        The forward's spacing of the window's elements: an int for every
        spatial dimension, or one per dimension. Default 1.
    padding : int, tuple of ints or tuple of (begin, end) pairs, optional
        The forward's zero padding of every spatial dimension. Default 0.
    stride : int or tuple of ints, optional
        The forward's step between window positions. Default 1.
    channels_last : bool, optional
        Whether the forward's ``x`` had its channels last; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of shape ``x_shape``, in ``g``'s
        dtype where that is a float dtype and in float64 otherwise.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result; ``x_shape`` has
        neither ``d + 1`` nor ``d + 2`` dimensions for a kernel of ``d``
        spatial dimensions; the kernel does not fit in the padded input; or
        ``kernel_size``, ``dilation``, ``stride`` or ``padding`` has the wrong
        number of entries or an entry too small (``kernel_size``, ``dilation``
        and ``stride`` at least 1, ``padding`` at least 0).
    TypeError
        If ``kernel_size`` is not an int or a tuple of ints, or ``g``'s dtype is
        not bool, integer or float.

    See Also
    --------
    axisops.unfold : The forward operator.
    axisops.fold : The adjoint operation this gradient computes.
    axisops.grad.fold : The gradient of fold.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.unfold(np.ones((1, 4, 4)), (1, 1, 3, 3), 2)   # windows covering each
    array([[[[1., 2., 1.],
             [2., 4., 2.],
             [1., 2., 1.]]]])
    """
    if _is_complex(g):  # linear: the parts of g
        return _complex.componentwise(
            lambda part: unfold(part, x_shape, kernel_size, dilation, padding, stride,
                                channels_last), np.asarray(g))
    op = "grad.unfold"
    x_shape = _shape(x_shape)
    geo, expected = _window.unfold_shape(x_shape, kernel_size, dilation, padding, stride,
                                         channels_last, op=op)
    spatial = x_shape[-geo.d - 1:-1] if channels_last else x_shape[-geo.d:]
    g, dtype, _ = _gather_g(g, expected, op)
    out = _window.fold(g, spatial, kernel_size, dilation=dilation, padding=padding, stride=stride,
                       channels_last=channels_last)
    return out.astype(dtype, copy=False).reshape(x_shape)


@dispatched
def fold(g: ArrayLike, kernel_size: Size, dilation: Size = 1, padding: Size = 0,
         stride: Size = 1, channels_last: bool = False) -> Array:
    """Gradient of :func:`axisops.fold`: an :func:`axisops.unfold` of ``g`` (fold's output shape).

    Each column entry of the forward's input gets the gradient of the element of
    the result it was added to; entries that fell on padding get 0. The
    forward's ``output_size`` is ``g``'s spatial shape, so it is not passed.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.fold(cols, output_size, kernel_size, ...)``, of that result's
        shape: ``(N, C, *output_size)``, or ``(N, *output_size, C)`` with
        ``channels_last``, without ``N`` if unbatched; a bool, integer or float
        dtype.
    kernel_size : int or tuple of ints
        The forward's window size: 1 to 3 entries, one per spatial dimension;
        an int ``k`` means ``(k, k)``.
    dilation : int or tuple of ints, optional
        The forward's spacing of the window's elements: an int for every
        spatial dimension, or one per dimension. Default 1.
    padding : int, tuple of ints or tuple of (begin, end) pairs, optional
        The forward's zero padding of every spatial dimension. Default 0.
    stride : int or tuple of ints, optional
        The forward's step between window positions. Default 1.
    channels_last : bool, optional
        Whether the forward's layout was channels last; must be the forward's.
        Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``cols``, of its shape: ``(N, C*K, L)``,
        or ``(N, L, K*C)`` with ``channels_last``, without ``N`` if unbatched;
        in ``g``'s dtype where that is a float dtype and in float64 otherwise.

    Raises
    ------
    ValueError
        If ``g`` has neither ``d + 1`` nor ``d + 2`` dimensions for a kernel of
        ``d`` spatial dimensions; the kernel does not fit in the padded ``g``;
        or ``kernel_size``, ``dilation``, ``stride`` or ``padding`` has the
        wrong number of entries or an entry too small (``kernel_size``,
        ``dilation`` and ``stride`` at least 1, ``padding`` at least 0).
    TypeError
        If ``kernel_size`` is not an int or a tuple of ints, or ``g``'s dtype is
        not bool, integer or float.

    See Also
    --------
    axisops.fold : The forward operator.
    axisops.unfold : The adjoint operation this gradient computes.
    axisops.grad.unfold : The gradient of unfold.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.fold(np.arange(4.).reshape(1, 2, 2), (2, 1))   # unbatched, C=1, 2 windows
    array([[0., 1.],
           [2., 3.]])
    >>> axisops.grad.fold(np.arange(9.).reshape(1, 3, 3), 2)   # each column: one 2x2 window
    array([[0., 1., 3., 4.],
           [1., 2., 4., 5.],
           [3., 4., 6., 7.],
           [4., 5., 7., 8.]])
    """
    if _is_complex(g):  # linear: the parts of g
        return _complex.componentwise(
            lambda part: fold(part, kernel_size, dilation, padding, stride, channels_last),
            np.asarray(g))
    g = np.asarray(g)
    if g.dtype.kind not in "biuf":
        raise TypeError(f"grad.fold: unsupported dtype {g.dtype} for g")
    dtype = g.dtype if g.dtype.kind == "f" else np.dtype(np.float64)
    return _window._unfold("grad.fold", g.astype(dtype, copy=False), kernel_size, dilation,
                           padding, stride, channels_last)


# ------------------------------------------------------------------ complex numbers
# PyTorch's convention: for y = f(x) holomorphic, the gradient with respect to x is
# conj(dy/dx) * g. The linear gradients (sums, moves) act on the parts of g (see
# axisops._complex); the products' gradients below are NumPy loops, in index order.


def _is_complex(*values) -> bool:
    return any(np.iscomplexobj(v) for v in values)


def _exclusive_products(a: np.ndarray) -> np.ndarray:
    """Along axis 1, the product of the elements before each one (in order)."""
    out = np.ones_like(a)
    if a.shape[1] > 1:
        out[:, 1:] = np.cumprod(a[:, :-1], axis=1)
    return out


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


def _complex_cumprod_grad(g, x, axis, exclusive, reverse):
    x = _dtypes.as_array(x)
    x_shape, axis, g = _scan_g(g, x.shape, axis, "grad.cumprod")
    res = np.result_type(x.dtype, g.dtype, np.complex64)
    _complex.check(res, "grad.cumprod")
    x3, g3 = _lanes(x, axis, res), _lanes(g, axis, res)
    if reverse:
        x3, g3 = x3[:, ::-1], g3[:, ::-1]
    n = x3.shape[1]
    # y_i = prod_{j <= i} x_j (exclusive: j < i); dy_i/dx_k = L_k * P(k+1..i), L_k the
    # product before k, so the gradient is conj(L_k) * S_k with S_k = sum over i of
    # g_i * conj(P(k+1..i)), a recurrence from the end: S_k = h_k + conj(x_{k+1}) S_{k+1}
    # (h_k = g_k; exclusive: g_{k+1}, the product reaching y_{k+1} without x_{k+1}).
    s = np.zeros_like(g3)
    for k in range(n - 1, -1, -1):
        h = g3[:, k] if not exclusive else (g3[:, k + 1] if k + 1 < n else 0)
        s[:, k] = h + (np.conj(x3[:, k + 1]) * s[:, k + 1] if k + 1 < n else 0)
    out = np.conj(_exclusive_products(x3)) * s
    if reverse:
        out = out[:, ::-1]
    return np.ascontiguousarray(out).reshape(x_shape)


def _complex_scatter_grad(g, x, indices, updates, axis, reduce):
    op = "grad.scatter"
    x = _dtypes.as_array(x)
    res = np.result_type(x.dtype, np.asarray(g).dtype, np.asarray(updates).dtype)
    _complex.check(res, op)
    if reduce in ("max", "min"):
        _dtypes.check_dtype(res, op)  # complex numbers have no order: TypeError
    if reduce != "mul":  # linear in g and independent of x and the updates' values
        zeros_u = np.zeros(np.shape(updates), _complex.part_dtype(res))
        zeros_x = np.zeros(x.shape, _complex.part_dtype(res))
        re = scatter(np.real(g), zeros_x, indices, zeros_u, axis, reduce)
        im = scatter(np.imag(g), zeros_x, indices, zeros_u, axis, reduce)
        return _complex.combine(re[0], im[0]), _complex.combine(re[1], im[1])
    # mul: y_d = x_d * prod of the updates u_k sent to d, in C order of the indices
    g = np.asarray(g, res)
    if g.shape != x.shape:
        raise ValueError(f"{op}: g has shape {g.shape}, expected the forward's output shape "
                         f"{x.shape}")
    where = _gather.scatter_destinations(x.shape, indices, axis)
    idx_shape = where[0].shape
    dest = np.ravel_multi_index(where, x.shape).reshape(-1)
    u = _gather.leading_updates(updates, idx_shape, res).reshape(-1)
    order = np.argsort(dest, kind="stable")  # per destination, C order of the indices
    d_sorted, u_sorted = dest[order], u[order]
    starts = np.flatnonzero(np.r_[True, d_sorted[1:] != d_sorted[:-1]])
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, d_sorted.size]))
    rank = np.arange(d_sorted.size) - starts[group]
    # products of the updates before and after each one in its destination's run
    before = np.ones_like(u_sorted)
    after = np.ones_like(u_sorted)
    total = np.ones(starts.size, res)
    for r in range(int(rank.max(initial=-1)) + 1):
        at = rank == r
        before[at] = total[group[at]]
        total[group[at]] *= u_sorted[at]
    ends = np.r_[starts[1:], d_sorted.size] - 1
    rank_from_end = ends[group] - np.arange(d_sorted.size)
    running = np.ones(starts.size, res)
    for r in range(int(rank_from_end.max(initial=-1)) + 1):
        at = rank_from_end == r
        after[at] = running[group[at]]
        running[group[at]] *= u_sorted[at]
    flat_x = x.astype(res).reshape(-1)
    flat_g = g.reshape(-1)
    gu_sorted = flat_g[d_sorted] * np.conj(flat_x[d_sorted] * before * after)
    gu = np.empty_like(gu_sorted)
    gu[order] = gu_sorted
    all_updates = np.ones(x.size, res)
    all_updates[d_sorted[starts]] = total
    gx = (flat_g * np.conj(all_updates)).reshape(x.shape)
    return gx, _to_shape(gu.reshape(idx_shape), np.shape(updates))

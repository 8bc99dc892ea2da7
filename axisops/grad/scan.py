"""Gradients of the scans: cumsum, cumprod, cummax, cummin, logcumsumexp.

See :mod:`axisops.grad` for the conventions every gradient follows.
"""


from __future__ import annotations

import math

import numpy as np

from .. import _complex, _dtypes, _indices
from .. import scan as _scan
from .._axes import normalize_axis
from .._dispatch import dispatched
from .._jit import run
from ..kernels import scan as _scan_kernels
from ..typing import Array, ArrayLike, Shape
from ._common import _exclusive_products, _is_complex, _normal

__all__ = ['cumsum', 'cumprod', 'cummax', 'cummin', 'logcumsumexp']


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


# ------------------------------------------------------------------ complex numbers
# PyTorch's convention: for y = f(x) holomorphic, the gradient with respect to x is
# conj(dy/dx) * g. The linear gradients (sums, moves) act on the parts of g (see
# axisops._complex); the products' gradients below are NumPy loops, in index order.


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

"""Vector-Jacobian products of the axisops operators.

Each function takes the gradient ``g`` of the forward's output first, then what
the forward must save (``x_shape`` where the gradient does not depend on the
values, ``x`` itself where it does), then the forward's own arguments, and
returns the gradient with respect to ``x`` with ``x``'s shape (also where the
forward flattened it, ``axis=None``). ``argmax`` and ``argmin`` have no gradient.

>>> import numpy as np
>>> from axisops import grad
>>> grad.max(np.ones(2), np.array([[1., 3., 3.], [2., 0., 1.]]), axis=1)
array([[0. , 0.5, 0.5],
       [1. , 0. , 0. ]])
"""
from __future__ import annotations

import math

import numpy as np

from . import _dtypes, _indices
from . import reduce as _reduce
from . import scan as _scan
from ._axes import normalize_axes, normalize_axis, reduced_shape
from ._jit import run
from .kernels import scan as _scan_kernels

__all__ = ["sum", "mean", "prod", "max", "min",
           "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]


def sum(g, x_shape, axis=None, keepdims=False):
    """Gradient of :func:`axisops.sum`: ``g`` broadcast back over the reduced axes.

    >>> sum(np.array([1., 2.]), (2, 3), axis=1)
    array([[1., 1., 1.],
           [2., 2., 2.]])
    """
    x_shape, axes, g = _expand(g, x_shape, axis, keepdims, "grad.sum")
    return np.array(np.broadcast_to(g, x_shape))


def mean(g, x_shape, axis=None, keepdims=False):
    """Gradient of :func:`axisops.mean`: ``g / count`` over the reduced axes.

    >>> mean(np.array(3.), (3,))
    array([1., 1., 1.])
    """
    x_shape, axes, g = _expand(g, x_shape, axis, keepdims, "grad.mean")
    count = int(np.prod([x_shape[d] for d in axes], dtype=np.int64))
    if g.dtype.kind != "f":
        g = g.astype(np.float64)
    return np.array(np.broadcast_to(g / count if count else g, x_shape))


def prod(g, x, axis=None, keepdims=False):
    """Gradient of :func:`axisops.prod`: ``g`` times the product of the *other* elements.

    Computed from prefix and suffix products, never by dividing by ``x``, so zeros
    in ``x`` are exact: with one zero only that element gets a gradient, with two
    or more none does.

    >>> prod(np.array(1.), np.array([2., 0., 5.]))
    array([ 0., 10.,  0.])
    """
    x = _dtypes.as_array(x)
    _dtypes.check_dtype(x.dtype, "grad.prod")
    x_shape, axes, g = _expand(g, x.shape, axis, keepdims, "grad.prod")
    dtype = np.result_type(x.dtype, g.dtype, np.float16)
    if x.size == 0:
        return np.zeros(x_shape, dtype)
    work = np.float32 if dtype == np.float16 else dtype  # float16 multiplies in float32
    kept = [d for d in range(x.ndim) if d not in axes]
    # move the reduced axes to the end and flatten them: (kept..., R)
    moved = np.transpose(x, kept + list(axes)).reshape([x.shape[d] for d in kept] + [-1]).astype(work)
    ones = np.ones(moved.shape[:-1] + (1,), work)
    before = np.cumprod(np.concatenate([ones, moved[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, moved[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = (before * after).reshape([x.shape[d] for d in kept] + [x.shape[d] for d in axes])
    others = np.transpose(others, np.argsort(kept + list(axes)))
    return np.asarray(np.broadcast_to(g.astype(work), x_shape) * others).astype(dtype)


def max(g, x, axis=None, keepdims=False):
    """Gradient of :func:`axisops.max`, split evenly between tied maxima (``torch.amax``).

    As in PyTorch, a slice whose maximum is NaN gets a NaN gradient.

    >>> max(np.array(6.), np.array([1., 4., 4., 2.]))
    array([0., 3., 3., 0.])
    """
    return _extreme_grad(g, x, axis, keepdims, _reduce.max, "grad.max")


def min(g, x, axis=None, keepdims=False):
    """Gradient of :func:`axisops.min`, split evenly between tied minima (``torch.amin``).

    >>> min(np.array(1.), np.array([3., 1., 2.]))
    array([0., 1., 0.])
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


def cumsum(g, x_shape, axis=None, exclusive=False, reverse=False):
    """Gradient of :func:`axisops.cumsum`: the cumulative sum of ``g`` the other way.

    Returned in ``g``'s dtype (float16 accumulates in float32), with ``x``'s shape.

    >>> cumsum(np.array([1., 2., 3.]), (3,))
    array([6., 5., 3.])
    >>> cumsum(np.array([1., 2., 3.]), (3,), exclusive=True)
    array([5., 3., 0.])
    """
    x_shape, axis, g = _scan_g(g, x_shape, axis, "grad.cumsum")
    res = _scan.cumsum(g, axis, dtype=g.dtype, exclusive=exclusive, reverse=not reverse)
    return res.reshape(x_shape)


def cumprod(g, x, axis=None, exclusive=False, reverse=False):
    """Gradient of :func:`axisops.cumprod`, exact with zeros in ``x`` (no division).

    ``dx_k`` is the product of the elements before ``k`` times
    ``sum over j >= k of g_j * (product of x_i for k < i <= j)``, computed by a
    forward and a backward pass along the axis. The result dtype is
    ``result_type(x, g, float16)``; float16 is computed in float32.

    >>> cumprod(np.ones(3), np.array([2., 0., 5.]))   # y = [2, 0, 0]
    array([ 1., 12.,  0.])
    """
    x = _dtypes.as_array(x)
    _dtypes.check_dtype(x.dtype, "grad.cumprod")
    x_shape, axis, g = _scan_g(g, x.shape, axis, "grad.cumprod")
    dtype = np.result_type(x.dtype, g.dtype, np.float16)
    work = np.float32 if dtype == np.float16 else dtype
    x3, g3 = _lanes(x, axis, work), _lanes(g, axis, work)
    out = np.empty(x3.shape, work)
    run(_scan_kernels.cumprod_vjp, out.size, x3, g3, bool(exclusive), bool(reverse), out)
    return out.astype(dtype, copy=False).reshape(x_shape)


def cummax(g, indices, x_shape, axis=None):
    """Gradient of :func:`axisops.cummax`: ``g`` summed at the positions in ``indices``.

    Paddle's and PyTorch's backward, a scatter-add along the axis, done lane by
    lane in order (deterministic). ``indices`` is the forward's, of ``g``'s shape,
    each in ``[0, n)``. Returned in ``g``'s dtype (float16 summed in float32).

    >>> values, indices = _scan.cummax(np.array([1., 3., 2., 3.]))
    >>> cummax(np.array([1., 10., 100., 1000.]), indices, (4,))
    array([   1.,  110.,    0., 1000.])
    """
    return _extreme_scan_grad(g, indices, x_shape, axis, "grad.cummax")


def cummin(g, indices, x_shape, axis=None):
    """Gradient of :func:`axisops.cummin`: ``g`` summed at the positions in ``indices``.

    >>> values, indices = _scan.cummin(np.array([3., 1., 2.]))
    >>> cummin(np.array([1., 2., 4.]), indices, (3,))
    array([1., 6., 0.])
    """
    return _extreme_scan_grad(g, indices, x_shape, axis, "grad.cummin")


def logcumsumexp(g, x, axis=None):
    """Gradient of :func:`axisops.logcumsumexp`: ``dx_k = sum over j >= k of g_j exp(x_k - y_j)``.

    Computed by one backward pass whose factors never exceed 1 (stable for large
    inputs). A factor ``exp(x_k - y_j)`` is taken as 1 where ``x_k == y_j``, also
    for equal infinities, so a ``-inf`` prefix passes ``g`` through (PyTorch's
    formula gives NaN there); a NaN in a lane makes the lane's gradient NaN. The
    result has ``x``'s float dtype (float64 for integers); float16 is computed in
    float32.

    >>> logcumsumexp(np.array([1., 1.]), np.array([0., 0.]))
    array([1.5, 0.5])
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

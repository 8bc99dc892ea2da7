"""Vector-Jacobian products of the axisops operators.

Each function takes the gradient ``g`` of the forward's output first, then what
the forward must save (``x_shape`` where the gradient does not depend on the
values, ``x`` itself where it does), then the forward's own arguments, and
returns the gradient with respect to ``x`` with ``x``'s shape. ``argmax`` and
``argmin`` have no gradient.

>>> import numpy as np
>>> from axisops import grad
>>> grad.max(np.ones(2), np.array([[1., 3., 3.], [2., 0., 1.]]), axis=1)
array([[0. , 0.5, 0.5],
       [1. , 0. , 0. ]])
"""
from __future__ import annotations

import numpy as np

from . import _dtypes
from . import reduce as _reduce
from ._axes import normalize_axes, reduced_shape

__all__ = ["sum", "mean", "prod", "max", "min"]


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

"""Gradients of pooling: ``max_pool`` (a scatter-add at its indices) and
``avg_pool`` (a fold of each output's share).

See :mod:`axisops.grad` for the conventions every gradient follows. Both are
deterministic: a task per ``(n, c)`` plane adds into it in output order (and
window order), so the bits do not depend on the number of threads. MaxUnpool is
``grad.max_pool`` itself: the values put back at their indices, zeros elsewhere.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes
from .. import pool as _pool
from .._dispatch import dispatched
from .._jit import run
from ..kernels import pool as K
from ..typing import Array, ArrayLike, Padding, Shape, Size
from ._common import _shape

__all__ = ["max_pool", "avg_pool"]


@dispatched
def max_pool(g: ArrayLike, indices: ArrayLike, x_shape: Shape, kernel_size: Size, *,
             stride: Size | None = None, dilation: Size = 1, padding: Padding = 0,
             ceil_mode: bool = False, channels_last: bool = False) -> Array:
    """Gradient of :func:`axisops.max_pool`: ``g`` added at the forward's indices.

    Each element of ``x`` gets the sum of ``g`` over the outputs whose maximum it
    was, added in output order (deterministic); also MaxUnpool (``g`` the pooled
    values).

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the pooled values, of their shape; a
        float dtype.
    indices : array_like
        The forward's ``return_indices`` result, of ``g``'s shape (integers).
    x_shape : tuple of ints
        Shape of the forward's input.
    kernel_size, stride, dilation, padding, ceil_mode, channels_last
        The forward's options.

    Returns
    -------
    numpy.ndarray
        Of ``x_shape``, in ``g``'s dtype.

    Raises
    ------
    TypeError
        If ``g`` is not of a float dtype or ``indices`` not of an integer dtype.
    ValueError
        If ``g`` or ``indices`` do not have the pooled shape, or the options are
        invalid for ``x_shape`` (as :func:`axisops.max_pool`).
    IndexError
        If an index is outside its plane's spatial positions.

    Examples
    --------
    >>> import numpy as np, axisops
    >>> x = np.array([[[1., 5., 2., 0.], [3., 4., 9., 9.]]])
    >>> v, i = axisops.max_pool(x, 2, return_indices=True)
    >>> axisops.grad.max_pool(np.ones_like(v), i, x.shape, 2)
    array([[[0., 1., 0., 0.],
            [0., 0., 1., 0.]]])
    """
    g, pg = _checked_g("grad.max_pool", g, x_shape, kernel_size, stride, dilation, padding,
                       ceil_mode, channels_last)
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"grad.max_pool: indices must be integers, got dtype {indices.dtype}")
    if indices.shape != g.shape:
        raise ValueError(f"grad.max_pool: indices have shape {indices.shape}, expected the "
                         f"pooled shape {g.shape}")
    plane = math.prod(pg.spatial)
    if indices.size and (indices.min() < 0 or indices.max() >= plane):
        bad = int(indices.min()) if indices.min() < 0 else int(indices.max())
        raise IndexError(f"grad.max_pool: index {bad} is out of range for a plane of {plane} "
                         "spatial positions")
    gp, planes, positions = _planes(g, pg)
    ip = _planes(indices.astype(np.int64, copy=False), pg)[0]
    acc = _accumulator(g.dtype)
    out = np.zeros(planes * plane, acc)
    run(K.unpool_add, g.size, gp.astype(acc, copy=False), ip, planes, positions, plane, out)
    return _from_planes(out, pg, x_shape, g.dtype)


@dispatched
def avg_pool(g: ArrayLike, x_shape: Shape, kernel_size: Size, *, stride: Size | None = None,
             padding: Padding = 0, ceil_mode: bool = False, channels_last: bool = False,
             count_include_pad: bool = True) -> Array:
    """Gradient of :func:`axisops.avg_pool`: each output's ``g``, divided by its
    window's count, added to the window's elements (a fold, deterministic).

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the pooled means, of their shape; a
        float dtype.
    x_shape : tuple of ints
        Shape of the forward's input.
    kernel_size, stride, padding, ceil_mode, channels_last, count_include_pad
        The forward's options.

    Returns
    -------
    numpy.ndarray
        Of ``x_shape``, in ``g``'s dtype.

    Raises
    ------
    TypeError
        If ``g`` is not of a float dtype.
    ValueError
        If ``g`` does not have the pooled shape, or the options are invalid for
        ``x_shape`` (as :func:`axisops.avg_pool`).

    Examples
    --------
    >>> import numpy as np, axisops
    >>> axisops.grad.avg_pool(np.ones((1, 1, 2)), (1, 1, 4), (1, 2))
    array([[[0.5, 0.5, 0.5, 0.5]]])
    """
    g, pg = _checked_g("grad.avg_pool", g, x_shape, kernel_size, stride, 1, padding, ceil_mode,
                       channels_last)
    gp, planes, _ = _planes(g, pg)
    acc = _accumulator(g.dtype)
    out = np.zeros(planes * math.prod(pg.spatial), acc)
    run(K.avg_unpool, out.size, gp.astype(acc, copy=False), pg.array(), pg.pad_end(), planes,
        bool(count_include_pad), out)
    return _from_planes(out, pg, x_shape, g.dtype)


def _checked_g(op, g, x_shape, kernel_size, stride, dilation, padding, ceil_mode, channels_last):
    g = _dtypes.as_array(g)
    if g.dtype.kind != "f":
        raise TypeError(f"{op}: g must be of a float dtype, got {g.dtype}")
    x_shape = _shape(x_shape)
    pg = _pool.PoolGeometry(op, x_shape, kernel_size, stride, dilation, padding,
                            bool(ceil_mode), bool(channels_last))
    if g.shape != pg.out_shape:
        raise ValueError(f"{op}: g has shape {g.shape}, expected the pooled shape "
                         f"{pg.out_shape} of x_shape {x_shape}")
    return g, pg


def _accumulator(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _planes(a: np.ndarray, pg) -> tuple[np.ndarray, int, int]:
    """*a* of the pooled shape as C-contiguous (planes, positions), planes (n, c)."""
    batched = a if pg.batched else a[None]
    if pg.channels_last:
        batched = np.moveaxis(batched, -1, 1)
    planes = pg.batch * pg.channels
    positions = math.prod(pg.positions)
    return np.ascontiguousarray(batched).reshape(-1), planes, positions


def _from_planes(out: np.ndarray, pg, x_shape, dtype: np.dtype) -> np.ndarray:
    """The (planes, spatial) sums as an array of ``x_shape`` in *dtype*."""
    res = out.reshape((pg.batch, pg.channels) + tuple(pg.spatial))
    if pg.channels_last:
        res = np.moveaxis(res, 1, -1)
    res = res.reshape(tuple(x_shape))
    return np.ascontiguousarray(res, dtype=dtype)

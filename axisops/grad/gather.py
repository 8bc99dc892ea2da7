"""Gradients of the gathers and scatter: take, take_along_axis, gather_nd, scatter.

See :mod:`axisops.grad` for the conventions every gradient follows.

Dates, durations, bytes, str and structured values move (``axisops.take`` and the
rest take every fixed-width dtype) but have no derivative: ``g`` must be numeric and
``grad.scatter``'s ``x`` a number, else a ``TypeError`` (the moves inside these
gradients run on ``g``'s numbers).
"""


from __future__ import annotations

import math

import numpy as np

from .. import _complex, _dtypes, _indices
from .. import gather as _gather
from .._axes import normalize_axis
from .._dispatch import dispatched
from ..kernels import gather as _gather_kernels
from ..typing import Array, ArrayLike, GatherMode, ScatterReduce, Shape
from ._common import _gather_g, _is_complex, _shape

__all__ = ['take', 'take_along_axis', 'gather_nd', 'scatter']


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


# ------------------------------------------------------------------ complex numbers
# PyTorch's convention: for y = f(x) holomorphic, the gradient with respect to x is
# conj(dy/dx) * g. The linear gradients (sums, moves) act on the parts of g (see
# axisops._complex); the products' gradients below are NumPy loops, in index order.


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

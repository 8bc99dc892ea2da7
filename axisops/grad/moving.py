"""Gradients of the moving-window reductions: moving_sum, moving_mean, moving_var,
moving_std, moving_max, moving_min (``moving_argmax``/``moving_argmin`` have none).

Signatures, by the contract's rule (``g`` first, then what the forward must save,
then the forward's own arguments): every one saves ``x`` itself, since where its
NaN are (and for the variances and extremes its values) decides the gradient::

    grad.moving_sum(g, x, window, axis=-1, *, min_count=None)
    grad.moving_mean(g, x, window, axis=-1, *, min_count=None)
    grad.moving_var(g, x, window, axis=-1, *, min_count=None, ddof=0)
    grad.moving_std(g, x, window, axis=-1, *, min_count=None, ddof=0)
    grad.moving_max(g, x, window, axis=-1, *, min_count=None)
    grad.moving_min(g, x, window, axis=-1, *, min_count=None)

Output ``j`` reads the elements ``k`` in ``[j - window + 1, j]``, so element ``k``
gets the outputs ``j`` in ``[k, k + window - 1]``: a *reversed* moving sum.

* moving_sum: ``dx_k = sum_j G_j`` with ``G_j = g_j`` (``g_j / count_j`` for
  moving_mean), a reversed moving sum;
* moving_var: ``dx_k = sum_j H_j (x_k - mean_j)`` with ``H_j = 2 g_j / (count_j -
  ddof)``, i.e. ``x_k * R(H) - R(H * mean)`` with ``R`` the reversed moving sum,
  on ``x`` less its lane's mean (the variance does not change; the two sums then
  cancel little); moving_std: ``H_j = g_j / (std_j (count_j - ddof))``, 0 where
  ``std_j`` is 0 (as ``torch.std``'s backward);
* moving_max/moving_min: a scatter-add of ``g_j`` at the moving arg-extremum
  (``moving_argmax``: ties go to the latest element, all of ``g_j`` to it).

A position whose forward output is NaN (too few values for ``min_count``,
``count - ddof <= 0``, an infinity in a variance's window) contributes nothing,
and a NaN element of ``x`` gets 0. Sums run in float64 through ``moving_sum``
itself (re-anchored, the same bits on any thread count); a NaN in ``g`` is
skipped by it, as ``moving_sum`` skips NaN. The result has ``x``'s shape and
``g``'s float dtype (float64 for integer and bool ``g``).
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes
from .. import moving as _moving
from .._axes import normalize_axis
from .._dispatch import dispatched
from ..missing import _doc
from ..typing import Array, ArrayLike
from ._common import _gather_g

__all__ = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min"]

_GRAD_DOC = """Gradient of ``axisops.{name}``: {what}.

    Positions whose forward output is NaN contribute nothing; NaN elements of
    ``x`` get 0.

    Parameters
    ----------
    g : array_like
        Gradient of the forward's result, of ``x``'s shape.
    x : array_like
        The forward's input.
    window : int
        The forward's ``window``.
    axis : int, optional
        The forward's ``axis``. Default -1.
    min_count : int or None, optional
        The forward's ``min_count``.{ddof}

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape, in ``g``'s float dtype (float64 for integer ``g``).

    Raises
    ------
    ValueError
        If ``g``'s shape is not ``x``'s, or ``window``/``min_count`` is out of range.
    TypeError
        If a dtype or an option is not one the forward takes.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.{name}(np.ones(4), np.array([1., 3., np.nan, 2.]), 2, min_count=1)
    array([{result}])
    """

_DDOF = """
    ddof : int or float, optional
        The forward's ``ddof``. Default 0."""


@dispatched
@_doc(_GRAD_DOC, name="moving_sum", what="the reversed moving sum of ``g``", ddof="",
      result="2., 2., 0., 1.")
def moving_sum(g: ArrayLike, x: ArrayLike, window: int, axis: int = -1, *,
               min_count: int | None = None) -> Array:
    return _linear("grad.moving_sum", g, x, window, axis, min_count, mean=False)


@dispatched
@_doc(_GRAD_DOC, name="moving_mean", what="the reversed moving sum of ``g`` over the counts",
      ddof="", result="1.5, 1.5, 0. , 1. ")
def moving_mean(g: ArrayLike, x: ArrayLike, window: int, axis: int = -1, *,
                min_count: int | None = None) -> Array:
    return _linear("grad.moving_mean", g, x, window, axis, min_count, mean=True)


@dispatched
@_doc(_GRAD_DOC, name="moving_var", what="``2 (x_k - mean_j) / (count_j - ddof)`` times "
      "``g_j``, summed over the windows holding each element", ddof=_DDOF,
      result="-1.,  1.,  0.,  0.")
def moving_var(g: ArrayLike, x: ArrayLike, window: int, axis: int = -1, *,
               min_count: int | None = None, ddof: float = 0) -> Array:
    return _variance("grad.moving_var", g, x, window, axis, min_count, ddof, root=False)


@dispatched
@_doc(_GRAD_DOC, name="moving_std", what="``(x_k - mean_j) / (std_j (count_j - ddof))`` "
      "times ``g_j``, summed over the windows holding each element (0 where std_j is 0)",
      ddof=_DDOF, result="-0.5,  0.5,  0. ,  0. ")
def moving_std(g: ArrayLike, x: ArrayLike, window: int, axis: int = -1, *,
               min_count: int | None = None, ddof: float = 0) -> Array:
    return _variance("grad.moving_std", g, x, window, axis, min_count, ddof, root=True)


@dispatched
@_doc(_GRAD_DOC, name="moving_max", what="a scatter-add of ``g`` at the moving argmax "
      "(ties: the latest element)", ddof="", result="1., 2., 0., 1.")
def moving_max(g: ArrayLike, x: ArrayLike, window: int, axis: int = -1, *,
               min_count: int | None = None) -> Array:
    return _extreme("grad.moving_max", g, x, window, axis, min_count, _moving.moving_argmax)


@dispatched
@_doc(_GRAD_DOC, name="moving_min", what="a scatter-add of ``g`` at the moving argmin "
      "(ties: the latest element)", ddof="", result="2., 1., 0., 1.")
def moving_min(g: ArrayLike, x: ArrayLike, window: int, axis: int = -1, *,
               min_count: int | None = None) -> Array:
    return _extreme("grad.moving_min", g, x, window, axis, min_count, _moving.moving_argmin)


# --------------------------------------------------------------------------- helpers


def _prepare(op, g, x, window, axis, min_count):
    """(g in float64, result dtype, x, window, min_count, axis, counts, NaN mask)."""
    x = _dtypes.as_array(x)
    window, min_count = _moving.check_window(op, window, min_count)
    _moving.check_dtype(x.dtype, op)
    if axis is None or isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    axis = normalize_axis(axis, x.ndim, op)
    g, dtype, _ = _gather_g(g, x.shape, op)
    nan = np.isnan(x) if x.dtype.kind == "f" else None
    valid = np.ones(x.shape) if nan is None else (~nan).astype(np.float64)
    counts = np.nan_to_num(_moving.moving_sum(valid, window, axis, min_count=1))
    return g.astype(np.float64), dtype, x, window, min_count, axis, counts, nan


def _reversed_sum(a: np.ndarray, window: int, axis: int) -> np.ndarray:
    """``out_k = sum of a_j for j in [k, k + window - 1]`` along *axis*."""
    flipped = np.flip(a, axis)
    return np.ascontiguousarray(np.flip(_moving.moving_sum(flipped, window, axis, min_count=1),
                                        axis))


def _finished(dx: np.ndarray, nan, dtype) -> np.ndarray:
    if nan is not None:
        dx[nan] = 0
    return dx.astype(dtype, copy=False)


def _linear(op, g, x, window, axis, min_count, mean):
    g, dtype, x, window, min_count, axis, counts, nan = _prepare(op, g, x, window, axis,
                                                                 min_count)
    live = counts >= min_count
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = np.where(live, g / counts if mean else g, 0.0)
    return _finished(np.nan_to_num(_reversed_sum(weights, window, axis), nan=0.0)
                     if x.size else weights, nan, dtype)


def _variance(op, g, x, window, axis, min_count, ddof, root):
    ddof = _dtypes.check_ddof(ddof, op)
    g, dtype, x, window, min_count, axis, counts, nan = _prepare(op, g, x, window, axis,
                                                                 min_count)
    if x.size == 0:
        return np.zeros(x.shape, dtype)
    xs = x.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        lane_mean = np.nan_to_num(np.nanmean(np.where(np.isfinite(xs), xs, np.nan), axis=axis,
                                             keepdims=True))
        xs = xs - lane_mean
        forward = (_moving.moving_std if root else _moving.moving_var)(
            xs, window, axis, min_count=min_count, ddof=ddof)
        mean = _moving.moving_mean(xs, window, axis, min_count=1)
        live = np.isfinite(forward)
        if root:
            live &= forward > 0
            h = np.where(live, g / (forward * (counts - ddof)), 0.0)
        else:
            h = np.where(live, 2 * g / (counts - ddof), 0.0)
        hm = np.where(live, h * mean, 0.0)
        dx = xs * _reversed_sum(h, window, axis) - _reversed_sum(hm, window, axis)
    # an infinite element: every window holding it has a NaN variance, which gives
    # nothing back (inf times the reversed sum's residue would be inf or NaN)
    dx[np.isinf(xs)] = 0
    return _finished(dx, nan, dtype)


def _extreme(op, g, x, window, axis, min_count, arg):
    g, dtype, x, window, min_count, axis, _, _ = _prepare(op, g, x, window, axis, min_count)
    if x.size == 0:
        return np.zeros(x.shape, dtype)
    index = arg(x, window, axis, min_count=min_count)
    n = x.shape[axis]
    ix = np.moveaxis(index, axis, -1).reshape(-1, n)
    gx = np.moveaxis(g, axis, -1).reshape(-1, n)
    rows = np.broadcast_to(np.arange(ix.shape[0])[:, None], ix.shape)
    hit = ix >= 0
    out = np.zeros(ix.shape)
    np.add.at(out, (rows[hit], ix[hit]), gx[hit])  # in C order: the same sums every run
    dx = np.moveaxis(out.reshape(np.moveaxis(index, axis, -1).shape), -1, axis)
    return np.ascontiguousarray(dx).astype(dtype, copy=False)

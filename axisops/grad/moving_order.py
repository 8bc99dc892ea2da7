"""Gradients of the moving order statistics: moving_median and moving_quantile
(``moving_rank`` has none: it is piecewise constant).

Signatures, by the contract's rule (``g`` first, then what the forward must save,
then the forward's own arguments): both save ``x`` itself, since its order
decides which elements were chosen::

    grad.moving_median(g, x, window, axis=-1, *, min_count=None)
    grad.moving_quantile(g, x, window, q, axis=-1, *, min_count=None)

Each output's ``g`` goes back to the elements the forward chose, as PyTorch's
autograd of ``median``/``quantile`` does: all of it to the middle element of an
odd count, half to each of the two middle elements of an even one (the median);
``g * (1 - frac)`` to ``v[lo]`` and ``g * frac`` to ``v[lo + 1]`` (the quantile,
``frac = idx - lo``; all to ``v[lo]`` where ``idx`` is whole). Between equal
values, the element with the lower index is the lower one in the order (the
forward's stable order). The kernel of the forward emits, per output, the two
positions chosen and the second's weight (one body, a flag); the shares are
then summed per element in float64, in C order of the outputs (``np.add.at``:
the same sums on every run and thread count), and rounded once.

A position whose forward output is NaN (too few values for ``min_count``, or
an interpolation between infinities) contributes nothing, and a NaN element of
``x`` is never chosen, so it gets 0; a NaN in ``g`` reaches the elements it was
given to. The result has ``x``'s shape and ``x``'s float dtype (float64 for
integer and bool ``x``).
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes
from .. import moving_order as _order
from .._axes import normalize_axis
from .._dispatch import dispatched
from ..missing import _doc
from ..moving import check_dtype, check_window
from ..typing import Array, ArrayLike

__all__ = ["moving_median", "moving_quantile"]

_GRAD_DOC = """Gradient of ``axisops.{name}``: {what}.

    Between equal values the element with the lower index is the lower one in
    the window's order. Positions whose forward output is NaN contribute
    nothing; NaN elements of ``x`` get 0.

    Parameters
    ----------
    g : array_like
        Gradient of the forward's result, of ``x``'s shape.
    x : array_like
        The forward's input.
    window : int
        The forward's ``window``.{q}
    axis : int, optional
        The forward's ``axis``. Default -1.
    min_count : int or None, optional
        The forward's ``min_count``.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape, in ``x``'s float dtype (float64 for integer and bool ``x``).

    Raises
    ------
    ValueError
        If ``g``'s shape is not ``x``'s, or ``window``/``min_count``{q_range} is out of
        range.
    TypeError
        If a dtype or an option is not one the forward takes.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops.grad.moving_order as gmo
    >>> gmo.{call}
    array([{result}])
    """


@dispatched
@_doc(_GRAD_DOC, name="moving_median", what="``g`` back at each window's middle element "
      "(half at each of the two middle ones of an even count)", q="", q_range="",
      call="moving_median(np.ones(4), np.array([1., 3., np.nan, 2.]), 2, min_count=1)",
      result="1.5, 1.5, 0. , 1. ")
def moving_median(g: ArrayLike, x: ArrayLike, window: int, axis: int = -1, *,
                  min_count: int | None = None) -> Array:
    return _gradient("grad.moving_median", g, x, window, axis, min_count, None)


@dispatched
@_doc(_GRAD_DOC, name="moving_quantile", what="``g * (1 - frac)`` back at ``v[lo]`` and "
      "``g * frac`` at ``v[lo + 1]`` of each window", q="""
    q : float
        The forward's ``q``.""", q_range=" or ``q``",
      call="moving_quantile(np.ones(4), np.array([1., 3., np.nan, 2.]), 2, 0.25, "
           "min_count=1)",
      result="1.75, 1.25, 0.  , 1.  ")
def moving_quantile(g: ArrayLike, x: ArrayLike, window: int, q: float, axis: int = -1, *,
                    min_count: int | None = None) -> Array:
    q = _order.check_quantile(q, "grad.moving_quantile")
    return _gradient("grad.moving_quantile", g, x, window, axis, min_count, q)


def _gradient(op, g, x, window, axis, min_count, q):
    x = _dtypes.as_array(x)
    window, min_count = check_window(op, window, min_count)
    check_dtype(x.dtype, op)
    if axis is None or isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    axis = normalize_axis(axis, x.ndim, op)
    g = np.asarray(g)
    if g.shape != x.shape:
        raise ValueError(f"{op}: g has shape {g.shape}, expected the forward's output shape "
                         f"{x.shape}")
    if g.dtype.kind not in "biuf":
        raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    if x.size == 0:
        return np.zeros(x.shape, dtype)
    forward = "moving_median" if q is None else "moving_quantile"
    values, a, b, wb = _order.picks(forward, x, window, axis, min_count,
                                    0.5 if q is None else q)
    n = x.shape[axis]
    live = ~np.isnan(values)
    gs = g.astype(np.float64, copy=False)
    # lanes along the last axis, in C order of the outputs
    a = np.moveaxis(a, axis, -1).reshape(-1, n)
    b = np.moveaxis(b, axis, -1).reshape(-1, n)
    wb = np.moveaxis(wb, axis, -1).reshape(-1, n)
    gs = np.moveaxis(gs, axis, -1).reshape(-1, n)
    live = np.moveaxis(live, axis, -1).reshape(-1, n)
    rows = np.broadcast_to(np.arange(a.shape[0])[:, None], a.shape)
    out = np.zeros(a.shape)
    np.add.at(out, (rows[live], a[live]), (gs * (1.0 - wb))[live])
    second = live & (b >= 0)
    np.add.at(out, (rows[second], b[second]), (gs * wb)[second])
    moved = np.moveaxis(x, axis, -1).shape
    dx = np.moveaxis(out.reshape(moved), -1, axis)
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(dx).astype(dtype, copy=False)

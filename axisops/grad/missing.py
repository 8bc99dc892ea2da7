"""Gradients of the missing-value operators: nansum, nanmean, nanprod, nanmax,
nanmin, nancumsum, nancumprod, var, std, nanvar, nanstd.

Each is its plain twin's gradient with the skipped NaN positions given 0 (as
PyTorch's ``nansum``/``nanmean`` backward does), and takes ``x`` (where a NaN is
needs the values). The variances are ``2 (x - mean) / (N - ddof)`` times ``g``
(``N`` the count of the elements that are not NaN for ``nanvar``), the standard
deviations that over ``2 std``, as ``torch.var``'s and ``torch.std``'s backward.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtypes
from .. import missing as _missing
from .._dispatch import dispatched
from ..missing import _doc
from ..typing import Array, ArrayLike, Axis
from .reduce import _expand
from .reduce import max as _grad_max
from .reduce import min as _grad_min
from .reduce import prod as _grad_prod
from .reduce import sum as _grad_sum
from .scan import cumprod as _grad_cumprod
from .scan import cumsum as _grad_cumsum

__all__ = ["nansum", "nanmean", "nanprod", "nanmax", "nanmin", "nancumsum", "nancumprod",
           "var", "std", "nanvar", "nanstd"]


def _nan_positions(x: np.ndarray):
    """Where *x* is NaN (None for dtypes without NaN)."""
    return np.isnan(x) if x.dtype.kind in "fc" else None


def _zero_at(out: np.ndarray, nan) -> np.ndarray:
    if nan is None or not nan.any():
        return out
    out = np.array(out)
    out[nan] = 0
    return out


_LINEAR_DOC = """Gradient of ``axisops.{name}``: {what}, 0 where ``x`` is NaN.

    Parameters
    ----------
    g : array_like
        Gradient of the forward's result, of its shape.
    x : array_like
        The forward's input.
    axis : int, tuple of ints or None, optional
        The forward's ``axis``.
    keepdims : bool, optional
        The forward's ``keepdims``.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape, in {dtype}.

    Raises
    ------
    ValueError
        If ``g``'s shape is not the forward's result's.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.{name}(np.ones(2), np.array([[1., np.nan], [3., 5.]]), axis=1)
    {example}
    """


@dispatched
@_doc(_LINEAR_DOC, name="nansum", what="``g`` broadcast over the reduced axes",
      dtype="``g``'s dtype", example="array([[1., 0.],\n           [1., 1.]])")
def nansum(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    x = _dtypes.as_array(x)
    return _zero_at(_grad_sum(g, x.shape, axis, keepdims), _nan_positions(x))


@dispatched
@_doc(_LINEAR_DOC, name="nanmean", what="``g`` over the count, broadcast",
      dtype="``g``'s float dtype (float64 for integer ``g``)",
      example="array([[1. , 0. ],\n           [0.5, 0.5]])")
def nanmean(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    x = _dtypes.as_array(x)
    x_shape, axes, gk = _expand(g, x.shape, axis, keepdims, "grad.nanmean")
    dtype = gk.dtype if gk.dtype.kind in "fc" else np.dtype(np.float64)
    counts = np.asarray(_missing.count(x, axes, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.true_divide(gk, counts, dtype=dtype) if gk.size else gk.astype(dtype)
    return _zero_at(np.broadcast_to(scaled, x_shape).astype(dtype), _nan_positions(x))


@dispatched
@_doc(_LINEAR_DOC, name="nanprod", what="``grad.prod`` with each NaN read as 1",
      dtype="``grad.prod``'s dtype", example="array([[1., 0.],\n           [5., 3.]])")
def nanprod(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    x = _dtypes.as_array(x)
    nan = _nan_positions(x)
    ones = np.where(nan, 1, x).astype(x.dtype) if nan is not None else x
    return _zero_at(_grad_prod(g, ones, axis, keepdims), nan)


_EXTREME_DOC = """Gradient of ``axisops.{name}``: ``g`` split evenly between the
    elements equal to the {what} (as ``grad.{plain}``), 0 at every NaN and over
    an all-NaN slice.

    Parameters
    ----------
    g : array_like
        Gradient of the forward's result, of its shape.
    x : array_like
        The forward's input.
    axis : int, tuple of ints or None, optional
        The forward's ``axis``.
    keepdims : bool, optional
        The forward's ``keepdims``.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape, in ``grad.{plain}``'s dtype.

    Raises
    ------
    ValueError
        If ``g``'s shape is not the forward's result's, or a reduced axis has
        length 0.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.{name}(np.ones(2), np.array([[{a}, np.nan, {b}], [np.nan] * 3]), axis=1)
    array([[0.5, 0. , 0.5],
           [0. , 0. , 0. ]])
    """


@dispatched
@_doc(_EXTREME_DOC, name="nanmax", plain="max", what="maximum", a="3.", b="3.")
def nanmax(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    return _nan_extreme_grad(g, x, axis, keepdims, "nanmax")


@dispatched
@_doc(_EXTREME_DOC, name="nanmin", plain="min", what="minimum", a="-1.", b="-1.")
def nanmin(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    return _nan_extreme_grad(g, x, axis, keepdims, "nanmin")


def _nan_extreme_grad(g, x, axis, keepdims, op):
    x = _dtypes.as_array(x)
    if x.dtype.kind != "f":  # no NaN: the plain twin's gradient
        return (_grad_max if op == "nanmax" else _grad_min)(g, x, axis, keepdims)
    name = f"grad.{op}"
    x_shape, axes, gk = _expand(g, x.shape, axis, keepdims, name)
    if any(x_shape[d] == 0 for d in axes):
        raise ValueError(f"{name}: the forward reduces an empty set, so there is no gradient")
    dtype = gk.dtype if gk.dtype.kind == "f" else np.result_type(gk.dtype, x.dtype, np.float16)
    if x.size == 0:
        return np.zeros(x_shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        extreme = np.asarray(getattr(_missing, op)(x, axes, keepdims=True))
    hit = x == extreme  # never at a NaN; nowhere in an all-NaN slice
    count = np.add.reduce(hit, axis=axes, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = gk.astype(dtype) / np.maximum(count, 1)
    return np.where(hit, share, 0).astype(dtype)


_SCAN_DOC = """Gradient of ``axisops.{name}``: ``grad.{plain}`` {how}, 0 where ``x`` is NaN.

    Parameters
    ----------
    g : array_like
        Gradient of the forward's result, of its shape.
    x : array_like
        The forward's input.
    axis : int or None, optional
        The forward's ``axis``.
    exclusive, reverse : bool, optional
        The forward's options.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape, in ``grad.{plain}``'s dtype.

    Raises
    ------
    ValueError
        If ``g``'s shape is not the forward's result's.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.{name}(np.ones(3), np.array([2., np.nan, 3.]))
    array([{example}])
    """


@dispatched
@_doc(_SCAN_DOC, name="nancumsum", plain="cumsum", how="(a cumsum of ``g`` the other way)",
      example="3., 0., 1.")
def nancumsum(g: ArrayLike, x: ArrayLike, axis: int | None = None, exclusive: bool = False,
              reverse: bool = False) -> Array:
    x = _dtypes.as_array(x)
    return _zero_at(_grad_cumsum(g, x.shape, axis, exclusive, reverse), _nan_positions(x))


@dispatched
@_doc(_SCAN_DOC, name="nancumprod", plain="cumprod", how="with each NaN read as 1",
      example="5., 0., 2.")
def nancumprod(g: ArrayLike, x: ArrayLike, axis: int | None = None, exclusive: bool = False,
               reverse: bool = False) -> Array:
    x = _dtypes.as_array(x)
    nan = _nan_positions(x)
    ones = np.where(nan, 1, x).astype(x.dtype) if nan is not None else x
    return _zero_at(_grad_cumprod(g, ones, axis, exclusive, reverse), nan)


_VAR_DOC = """Gradient of ``axisops.{name}``: {formula} times ``g``{skipping}.

    ``N`` counts the {counted}. ``ddof`` at or above ``N`` gives NaN, as the
    forward does.

    Parameters
    ----------
    g : array_like
        Gradient of the forward's result, of its shape.
    x : array_like
        The forward's input.
    axis : int, tuple of ints or None, optional
        The forward's ``axis``.
    keepdims : bool, optional
        The forward's ``keepdims``.
    ddof : int or float, optional
        The forward's ``ddof``.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape, in the forward's result dtype (``x``'s own for complex).

    Raises
    ------
    ValueError
        If ``g``'s shape is not the forward's result's.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.{name}(np.ones(1), np.array([[1., 3., {third}]]), axis=1)
    array([[{example}]])
    """


@dispatched
@_doc(_VAR_DOC, name="var", formula="``2 (x - mean) / (N - ddof)``", skipping="",
      counted="reduced elements", third="5.", example="-1.33333333,  0.        ,  1.33333333")
def var(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False,
        ddof: float = 0) -> Array:
    return _variance_grad(g, x, axis, keepdims, ddof, "var")


@dispatched
@_doc(_VAR_DOC, name="std", formula="``(x - mean) / ((N - ddof) std)``", skipping="",
      counted="reduced elements", third="5.", example="-0.40824829,  0.        ,  0.40824829")
def std(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False,
        ddof: float = 0) -> Array:
    return _variance_grad(g, x, axis, keepdims, ddof, "std")


@dispatched
@_doc(_VAR_DOC, name="nanvar", formula="``2 (x - mean) / (N - ddof)``",
      skipping=", 0 where ``x`` is NaN", counted="elements that are not NaN", third="np.nan",
      example="-1.,  1.,  0.")
def nanvar(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False,
           ddof: float = 0) -> Array:
    return _variance_grad(g, x, axis, keepdims, ddof, "nanvar")


@dispatched
@_doc(_VAR_DOC, name="nanstd", formula="``(x - mean) / ((N - ddof) std)``",
      skipping=", 0 where ``x`` is NaN", counted="elements that are not NaN", third="np.nan",
      example="-0.5,  0.5,  0. ")
def nanstd(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False,
           ddof: float = 0) -> Array:
    return _variance_grad(g, x, axis, keepdims, ddof, "nanstd")


def _variance_grad(g, x, axis, keepdims, ddof, op):
    x = _dtypes.as_array(x)
    name = f"grad.{op}"
    skip = op.startswith("nan") and x.dtype.kind in "fc"
    x_shape, axes, gk = _expand(g, x.shape, axis, keepdims, name)
    forward = getattr(_missing, op)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = np.asarray(forward(x, axes, keepdims=True, ddof=ddof))
    ddof = _dtypes.check_ddof(ddof, name)  # checked by the forward; a huge int as a float
    dtype = x.dtype if x.dtype.kind == "c" else result.dtype
    work = np.complex128 if dtype.kind == "c" else np.float64
    xa = x.astype(work)
    if skip:
        counts = np.asarray(_missing.count(x, axes, keepdims=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.nansum(xa, axis=axes, keepdims=True) / counts
    else:
        counts = np.asarray(np.prod([x_shape[d] for d in axes], dtype=np.int64))
        mean = np.mean(xa, axis=axes, keepdims=True) if xa.size else xa.sum(axes, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = gk.astype(work) / (counts - ddof)
        if op.endswith("std"):
            out = scale * (xa - mean) / result
        else:
            out = 2 * scale * (xa - mean)
    return _zero_at(np.asarray(out).astype(dtype), _nan_positions(x) if skip else None)

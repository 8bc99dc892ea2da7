"""Missing values: the NaN-skipping operators, count, variance and standard deviation.

The ``nan`` operators are their plain twins reading a NaN as missing: ``nansum``,
``nanprod``, ``nancumsum`` and ``nancumprod`` run the very kernels of ``sum``,
``prod``, ``cumsum`` and ``cumprod``, whose loads read a NaN as the identity (a
select per element, which keeps the loops vectorised: ``kernels.common.load``);
``nanmax``, ``nanmin``, ``nanargmax`` and ``nanargmin`` the arg-reduction kernel
with a NaN's key below every number (``kernels.reduce.arg_kernel``); ``count``
the sum kernel reading each element as 1 or 0. Integers and bool have no NaN:
each ``nan`` operator is then its plain twin. Complex numbers skip an element
whose real or imaginary part is NaN, as ``numpy.isnan`` says.

Decisions where NumPy leaves a choice (see the contract, *Missing values*):

* all-NaN slices: ``nansum`` 0, ``nanprod`` 1, ``nanmean``, ``nanvar``,
  ``nanstd``, ``nanmax`` and ``nanmin`` NaN with NumPy's ``RuntimeWarning``;
  ``nanargmax``/``nanargmin`` raise ``ValueError`` naming the first all-NaN
  output position, or return ``all_nan_index`` there when it is an int;
* ``nanmean`` divides the NaN-skipping sum (in the accumulator dtype, cascaded
  as ``sum``) by the count, in float64 and rounded once to the result dtype, as
  NumPy's ``nanmean`` divides;
* ``var`` and ``std`` are two-pass: the mean first, then the sum of squared
  deviations from it (never a difference of large sums), each sum cascaded;
  ``ddof`` at or above the count gives NaN with NumPy's ``RuntimeWarning``.

``nanmean`` and the variances of float32/float64 data run fused where their
reduced elements form one run per output (or the input is small enough to copy
into runs): count, sum and squared deviations in one kernel call
(``axisops._moments``); elsewhere they are composed of the kernels above.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import _complex, _dtypes, _fast, _moments
from ._axes import normalize_axes, reduced_shape
from ._dispatch import dispatched
from ._plan import PlanCache, array_key, axis_key
from .reduce import _arg_reduction, _value_reduction
from .scan import _sum_or_prod
from .typing import Array, ArrayLike, ArrayOrScalar, Axis, DTypeLike

__all__ = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod", "count", "var", "std"]

#: Plans of the composed operators here (nanmean, the variances; see ``axisops._plan``).
_PLANS = PlanCache()


def _doc(template: str, **fields: str):
    """Give a function the docstring *template* filled with *fields* (twins share one)."""
    def wrap(func):
        func.__doc__ = template.format(**fields)
        return func
    return wrap


# ----------------------------------------------------------------- sums and products

_SUM_DOC = """{Name} over the given axes, NaN skipped, as ``numpy.{name}``.

    A NaN counts as {identity} (the {what}'s identity), so an all-NaN slice gives
    {identity}. Integers and bool have no NaN: the result is ``{plain}``'s.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to reduce; negative ones count from the end. ``None`` (the default)
        reduces every axis, ``()`` none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    dtype : dtype, optional
        Accumulator and result dtype, as NumPy's ``dtype=``.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        NumPy's result dtype and shape; a NumPy scalar where that shape is ``()``.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex dtype, or ``axis`` is
        not an int, a tuple of ints or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice.

    See Also
    --------
    {plain} : The same, NaN propagating.
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([[2., np.nan], [np.nan, np.nan]]), axis=1)
    array([2., {identity}.])
    """


@dispatched(scalar=_fast.scalar_call("nansum", "not keepdims and dtype is None", ", f[2]"))
@_doc(_SUM_DOC, Name="Sum", name="nansum", plain="sum", identity="0", what="sum")
def nansum(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
           dtype: DTypeLike | None = None) -> ArrayOrScalar:
    return _value_reduction("nansum", x, axis, keepdims, dtype)


@dispatched(scalar=_fast.scalar_call("nanprod", "not keepdims and dtype is None", ", f[2]"))
@_doc(_SUM_DOC, Name="Product", name="nanprod", plain="prod", identity="1", what="product")
def nanprod(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
            dtype: DTypeLike | None = None) -> ArrayOrScalar:
    return _value_reduction("nanprod", x, axis, keepdims, dtype)


@dispatched
def count(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> ArrayOrScalar:
    """Number of elements that are not NaN over the given axes, as int64.

    The count ``nanmean`` divides by (xarray's ``count``). Integers and bool have
    no NaN: every element counts. A complex element with a NaN part does not.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to reduce. ``None`` (the default) reduces every axis, ``()`` none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        int64 counts, of ``x``'s shape without the reduced axes.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex dtype.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice.

    See Also
    --------
    nanmean : Mean of the elements counted here.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.count(np.array([[1., np.nan, 3.], [np.nan, np.nan, 0.]]), axis=1)
    array([2, 1])
    """
    return _value_reduction("count", x, axis, keepdims, None)


@dispatched(scalar=_fast.scalar_call("nanmean", "not keepdims and dtype is None", ", f[2], 0"))
def nanmean(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
            dtype: DTypeLike | None = None) -> ArrayOrScalar:
    """Mean over the given axes, NaN skipped, as ``numpy.nanmean``.

    The NaN-skipping sum divided by the count of the other elements; an all-NaN
    slice gives NaN with NumPy's ``RuntimeWarning``. Integers and bool: ``mean``.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to reduce. ``None`` (the default) reduces every axis, ``()`` none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    dtype : dtype, optional
        Accumulator and result dtype, as NumPy's ``dtype=``.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        NumPy's result dtype (float64 for integers) and shape.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex dtype.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice.

    See Also
    --------
    count : The number of elements each mean divides by.
    axisops.grad.nanmean : Gradient of ``nanmean``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.nanmean(np.array([[1., np.nan, 3.], [np.nan, 4., np.nan]]), axis=1)
    array([2., 4.])
    """
    if type(x) is np.ndarray and not keepdims and dtype is None:  # one compiled entry
        res = _fast.moments("nanmean", x, axis, 0)
        if res is not None:
            return res
    return _planned("nanmean", _nanmean_plan, x, axis, keepdims, dtype)


def _planned(op: str, make_plan, x, axis, *options):
    """Run the plan of *op* for arrays described like *x*, making it first if new
    (the dtypes and axes are worked out once per kind of call: see ``axisops._plan``)."""
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    try:
        key = (op, *array_key(x), axis_key(axis), *options)
    except TypeError:
        key = None
    return _PLANS.plan(key, make_plan, op, x, axis, *options)(x)


def _nanmean_plan(op: str, x: np.ndarray, axis, keepdims: bool, dtype):
    if x.dtype.kind == "m":  # durations: NaT skipped (see axisops._dates)
        return lambda x: _value_reduction("nanmean", x, axis, keepdims, dtype)
    if x.dtype.kind not in "fc":
        _dtypes.check_dtype(x.dtype, op)
        return lambda x: _value_reduction("mean", x, axis, keepdims, dtype)
    if _complex.is_complex(x.dtype) or _complex.is_complex(dtype):
        res = _complex.result_dtype("mean", x.dtype, dtype)
    else:
        res = _dtypes.mean_dtypes(x.dtype, dtype)[0]
    acc = _dtypes.kernel_accumulator(res) if res.kind == "f" else res
    axes = normalize_axes(axis, x.ndim, op)
    fused = _moments.plan(x, axes, reduced_shape(x.shape, axes, keepdims), res, skip=True,
                          variance=False)
    if fused is not None:
        return fused

    def plan(x):
        total = _value_reduction("nansum", x, axes, keepdims, acc)
        counts = _value_reduction("count", x, axes, keepdims, None)
        return _divided(total, counts, res, "Mean of empty slice")

    return plan


def _divided(total, counts, res: np.dtype, empty_warning: str):
    """total / counts, as NumPy's nan-functions divide (in float64 for float32
    sums, rounded once), NaN with *empty_warning* where a count is not positive;
    a NumPy scalar for 0-d."""
    if np.ndim(total) == 0 and np.ndim(counts) == 0:  # NumPy scalars divide cheaply
        if counts <= 0:
            warnings.warn(empty_warning, RuntimeWarning, stacklevel=4)
            return res.type(np.nan)
        return res.type(total / counts)
    empty = np.asarray(counts) <= 0
    if not empty.any():
        return np.true_divide(total, counts).astype(res, copy=False)
    warnings.warn(empty_warning, RuntimeWarning, stacklevel=4)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(empty, np.nan, np.true_divide(total, counts))
    return np.asarray(out).astype(res, copy=False)


# ----------------------------------------------------------------------- variance

_VAR_DOC = """{Title} over the given axes{skipping}, as ``numpy.{name}``.

    Two passes: the mean first, then the sum of squared deviations from it
    (absolute values squared for complex numbers), each a cascaded sum, divided
    by ``N - ddof`` where N counts the {counted}; never a difference of large
    sums. ``ddof`` at or above N gives NaN with NumPy's ``RuntimeWarning``.{std_note}

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to reduce. ``None`` (the default) reduces every axis, ``()`` none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    dtype : dtype, optional
        Accumulator and result dtype, as NumPy's ``dtype=``.
    ddof : int or float, optional
        Delta degrees of freedom. Default 0.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        NumPy's result dtype (float64 for integers; the real dtype for complex).

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex dtype, or ``ddof`` is
        not a number.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice.

    See Also
    --------
    {see_also}
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([[1., 3., {third}], [2., 2., 2.]]), axis=1)
    array([{result}])
    """


@dispatched(scalar=_fast.scalar_call("var", "not keepdims and dtype is None and type(ddof) is int and 0 <= ddof < 65536", ", f[2], ddof"))
@_doc(_VAR_DOC, Title="Variance", name="var", skipping="", counted="reduced elements",
      std_note="", see_also="std : Its square root.\n    nanvar : The same, NaN skipped.",
      third="5.", result="2.66666667, 0.        ")
def var(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
        dtype: DTypeLike | None = None, ddof: float = 0) -> ArrayOrScalar:
    return _variance("var", x, axis, keepdims, dtype, ddof, root=False)


@dispatched(scalar=_fast.scalar_call("std", "not keepdims and dtype is None and type(ddof) is int and 0 <= ddof < 65536", ", f[2], ddof"))
@_doc(_VAR_DOC, Title="Standard deviation", name="std", skipping="", counted="reduced elements",
      std_note=" The square root of ``var``.",
      see_also="var : Its square.\n    nanstd : The same, NaN skipped.",
      third="5.", result="1.63299316, 0.        ")
def std(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
        dtype: DTypeLike | None = None, ddof: float = 0) -> ArrayOrScalar:
    return _variance("std", x, axis, keepdims, dtype, ddof, root=True)


@dispatched(scalar=_fast.scalar_call("nanvar", "not keepdims and dtype is None and type(ddof) is int and 0 <= ddof < 65536", ", f[2], ddof"))
@_doc(_VAR_DOC, Title="Variance", name="nanvar", skipping=", NaN skipped",
      counted="elements that are not NaN", std_note="",
      see_also="nanstd : Its square root.\n    var : The same, NaN propagating.",
      third="np.nan", result="1., 0.")
def nanvar(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
           dtype: DTypeLike | None = None, ddof: float = 0) -> ArrayOrScalar:
    return _variance("nanvar", x, axis, keepdims, dtype, ddof, root=False)


@dispatched(scalar=_fast.scalar_call("nanstd", "not keepdims and dtype is None and type(ddof) is int and 0 <= ddof < 65536", ", f[2], ddof"))
@_doc(_VAR_DOC, Title="Standard deviation", name="nanstd", skipping=", NaN skipped",
      counted="elements that are not NaN", std_note=" The square root of ``nanvar``.",
      see_also="nanvar : Its square.\n    std : The same, NaN propagating.",
      third="np.nan", result="1., 0.")
def nanstd(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
           dtype: DTypeLike | None = None, ddof: float = 0) -> ArrayOrScalar:
    return _variance("nanstd", x, axis, keepdims, dtype, ddof, root=True)


def _variance(op: str, x, axis, keepdims: bool, dtype, ddof, root: bool):
    ddof = _dtypes.check_ddof(ddof, op)
    if type(x) is np.ndarray and not keepdims and dtype is None:  # one compiled entry
        res = _fast.moments(op, x, axis, ddof)
        if res is not None:
            return res
    return _planned(op, _variance_plan, x, axis, keepdims, dtype, ddof)


def variance_dtypes(op: str, x_dtype: np.dtype, dtype) -> tuple[bool, np.dtype, np.dtype,
                                                                 np.dtype]:
    """(complex?, the mean's dtype, its accumulator, the result's dtype) of the
    variances of *x_dtype* with ``dtype=`` *dtype* (the real part's dtype for
    complex numbers), ``TypeError`` naming *op* for dtypes they do not take. Every
    array type's variance works them out here."""
    if _complex.is_complex(x_dtype) or _complex.is_complex(dtype):
        res = _complex.result_dtype("mean", x_dtype, dtype)
        return True, res, res, _complex.part_dtype(res)
    _dtypes.check_dtype(x_dtype, op)
    res = _dtypes.mean_dtypes(x_dtype, dtype)[0]
    return False, res, _dtypes.kernel_accumulator(res), res


def _variance_plan(op: str, x: np.ndarray, axis, keepdims: bool, dtype, ddof):
    skip = op.startswith("nan") and x.dtype.kind in "fc"
    cplx, res, acc, out_dtype = variance_dtypes(op, x.dtype, dtype)
    axes = normalize_axes(axis, x.ndim, op)
    summed = "nansum" if skip else "sum"
    whole = math.prod(x.shape[d] for d in axes)
    root = op.endswith("std")
    squeeze = reduced_shape(x.shape, axes, keepdims)
    if not cplx:
        fused = _moments.plan(x, axes, squeeze, res, skip=skip, variance=True, ddof=ddof,
                              root=root)
        if fused is not None:
            return fused

    def plan(x):
        xa = x.astype(acc, copy=False)
        n = _value_reduction("count", x, axes, True, None) if skip else whole
        total = _value_reduction(summed, xa, axes, True, None)
        with np.errstate(invalid="ignore", divide="ignore"):  # a count of 0: NaN
            dev = xa - (total / n).astype(acc, copy=False)
        sq = dev.real * dev.real + dev.imag * dev.imag if cplx else dev * dev
        ss = _value_reduction(summed, sq, axes, keepdims, None)
        dof = np.reshape(n, squeeze) - ddof if skip else whole - ddof
        out = _divided(ss, dof, out_dtype, "Degrees of freedom <= 0 for slice")
        return np.sqrt(out) if root else out

    return plan


# ------------------------------------------------------------------- orderings

_EXTREME_DOC = """{Title} over the given axes, NaN skipped, as ``numpy.{name}``.

    An all-NaN slice gives NaN with NumPy's ``RuntimeWarning``. Integers and bool
    have no NaN: the result is ``{plain}``'s (a zero extreme comes back as +0.0,
    as ``{plain}`` says).

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to reduce. ``None`` (the default) reduces every axis, ``()`` none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        In ``x``'s dtype, of ``x``'s shape without the reduced axes.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype (complex numbers have no
        order), or ``axis`` is not an int, a tuple of ints or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice, or a reduced axis has length 0.

    See Also
    --------
    {plain} : The same, NaN propagating.
    nanarg{plain} : Where the {what} is.
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([[1., np.nan, 3.], [np.nan, 2., np.nan]]), axis=1)
    array([{result}, 2.])
    """


@dispatched(scalar=_fast.scalar_call("nanmax", "not keepdims"))
@_doc(_EXTREME_DOC, Title="Maximum", name="nanmax", plain="max", what="maximum", result="3.")
def nanmax(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> ArrayOrScalar:
    return _arg_reduction("nanmax", x, axis, keepdims, False, np.int64)


@dispatched(scalar=_fast.scalar_call("nanmin", "not keepdims"))
@_doc(_EXTREME_DOC, Title="Minimum", name="nanmin", plain="min", what="minimum", result="1.")
def nanmin(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> ArrayOrScalar:
    return _arg_reduction("nanmin", x, axis, keepdims, False, np.int64)


_ARG_DOC = """Index of the {what} over one axis or several, NaN skipped, as ``numpy.{name}``.

    Ties give the first index, or the last with ``select_last_index=True``, among
    the elements that are not NaN. An all-NaN slice raises ``ValueError`` naming
    its position, as NumPy raises, unless ``all_nan_index`` is an int, which is
    given there instead (-1 is the usual choice: xarray's and pandas' users need a
    result). Tuple axes, ``select_last_index`` and ``index_dtype`` as ``{plain}``.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axis or axes to reduce. Default None: the index into the flattened array.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    select_last_index : bool, optional
        Give the last index of the ties instead of the first. Default False.
    index_dtype : {{int32, int64}}, optional
        dtype of the indices. Default int64.
    all_nan_index : int or None, optional
        The index to give for an all-NaN slice; None (the default) raises there.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        The indices, of ``index_dtype``.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype, ``index_dtype`` is not
        int32 or int64, or ``all_nan_index`` is not an int or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice, a reduced axis has length 0, or a slice
        is all NaN and ``all_nan_index`` is None.
    OverflowError
        If ``index_dtype`` is int32 and the reduced block has more than 2**31
        elements.

    See Also
    --------
    {plain} : The same, a NaN winning.
    nan{short} : The {what} itself.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.array([[np.nan, {a}, {b}], [np.nan, np.nan, np.nan]])
    >>> axisops.{name}(x, axis=1, all_nan_index=-1)
    array([ 1, -1])
    """


@dispatched(scalar=_fast.scalar_call("nanargmax", "not keepdims and not select_last_index and index_dtype is int64 and all_nan_index is None"))
@_doc(_ARG_DOC, what="maximum", name="nanargmax", plain="argmax", short="max", a="7.", b="2.")
def nanargmax(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
              select_last_index: bool = False, index_dtype: DTypeLike = np.int64,
              all_nan_index: int | None = None) -> ArrayOrScalar:
    return _arg_reduction("nanargmax", x, axis, keepdims, select_last_index, index_dtype,
                          all_nan_index)


@dispatched(scalar=_fast.scalar_call("nanargmin", "not keepdims and not select_last_index and index_dtype is int64 and all_nan_index is None"))
@_doc(_ARG_DOC, what="minimum", name="nanargmin", plain="argmin", short="min", a="2.", b="7.")
def nanargmin(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
              select_last_index: bool = False, index_dtype: DTypeLike = np.int64,
              all_nan_index: int | None = None) -> ArrayOrScalar:
    return _arg_reduction("nanargmin", x, axis, keepdims, select_last_index, index_dtype,
                          all_nan_index)


# ----------------------------------------------------------------------- scans

_SCAN_DOC = """Cumulative {what} along an axis, NaN skipped, as ``numpy.{name}``.

    A NaN counts as {identity}, so the running {what} carries over it. Integers and
    bool have no NaN: the result is ``{plain}``'s. ``exclusive`` and ``reverse`` as
    ``{plain}``.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int or None, optional
        Axis to scan. Default None: the flattened array.
    dtype : dtype, optional
        Accumulator and result dtype, as NumPy's ``dtype=``.
    exclusive : bool, optional
        Each output leaves out its own element. Default False.
    reverse : bool, optional
        Scan from the end. Default False.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape (flattened for ``axis=None``) and NumPy's result dtype.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex dtype.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim``.

    See Also
    --------
    {plain} : The same, NaN propagating.
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([2., np.nan, 3.]))
    array([2., 2., {result}.])
    """


@dispatched
@_doc(_SCAN_DOC, what="sum", name="nancumsum", plain="cumsum", identity="0", result="5")
def nancumsum(x: ArrayLike, axis: int | None = None, *, dtype: DTypeLike | None = None,
              exclusive: bool = False, reverse: bool = False) -> Array:
    return _sum_or_prod("nancumsum", None, x, axis, dtype, exclusive, reverse)


@dispatched
@_doc(_SCAN_DOC, what="product", name="nancumprod", plain="cumprod", identity="1", result="6")
def nancumprod(x: ArrayLike, axis: int | None = None, *, dtype: DTypeLike | None = None,
               exclusive: bool = False, reverse: bool = False) -> Array:
    return _sum_or_prod("nancumprod", None, x, axis, dtype, exclusive, reverse)

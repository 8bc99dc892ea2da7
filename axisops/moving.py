"""Moving-window reductions along one axis: moving_sum, moving_mean, moving_var,
moving_std, moving_max, moving_min, moving_argmax, moving_argmin.

Each output is the reduction of the *trailing* window: the ``window`` elements
ending at its position along ``axis`` (fewer at the start of the axis), as
bottleneck's ``move_*`` and pandas' ``rolling(window, min_periods)``. NaN inside
a window is skipped; a position whose window holds fewer than ``min_count``
values that are not NaN (default ``window``) gives NaN (and index -1). No window
is materialised: memory is that of the result.

How (see ``axisops.kernels.moving`` for the loops):

* The axis is cut into fixed blocks of ``max(16384, 8 * window)`` positions
  (fixed by the shape and the window, never by the thread count); each task is
  one lane and one block, and starts afresh from the ``window - 1`` elements
  before its block. So the running sums are re-anchored at every block start
  (recomputed from scratch, never left to drift over a long axis), and every
  result has the same bits for any number of threads.
* moving_sum/moving_mean: a running float64 sum of the finite elements
  (``acc += new - old``), the count of the elements that are not NaN, and the
  counts of +inf and -inf apart.
* moving_var/moving_std: the count, mean and M2 (sum of squared deviations) of
  the finite elements less a shift (the first finite value of the task, so data
  far from 0 loses no digits), updated Welford-style as elements enter and leave
  the window (one element in and one out at once while the count stays), in
  float64; never a sum of squares minus a squared sum. Where every value in the
  window is the same, the state is reset to it: exactly 0, no residue (pandas'
  rule; bottleneck leaves ~1e-8 in such a standard deviation).
* moving_max/moving_min and their arg twins: van Herk/Gil-Werman blocks of
  ``window`` positions, each window the suffix extremum of the block before
  joined to the prefix extremum of its own: three compares per element,
  whatever the window.

Decisions where the contract is silent:

* ``window`` is an int >= 1 (a NumPy integer too; a bool, float or anything else
  is a ``TypeError``, below 1 a ``ValueError``). A window longer than the axis is
  allowed (bottleneck refuses it), of any size (2**62 too): every position then
  has a partial window, all NaN with the default ``min_count``; it costs what a
  window of the axis's length costs.
* ``min_count`` is None (meaning ``window``) or an int in ``[1, window]``
  (bottleneck's range; pandas' ``min_periods=0`` is refused with a
  ``ValueError``).
* ``axis`` is one int (bottleneck's ``move_*`` take one axis); None or a tuple
  is a ``TypeError``, out of range (any axis of a 0-d array) an ``AxisError``.
* dtypes: bool, integers and floats. Complex numbers are refused by all eight
  (``TypeError``), as by bottleneck and pandas: they have no order, and a moving
  complex sum is ``moving_sum`` of the two parts. Object, dates, strings: the
  same ``TypeError``.
* Float results keep the input's dtype, integer and bool inputs give float64;
  the sums, means and variances of every dtype are computed in float64 and
  rounded once (float16 and float32 included: more than the contract's float32
  for float16, at the same speed in scalar loops).
* Infinities count as values (for ``min_count``): a window's sum is +inf or
  -inf as its infinities say, NaN with both; a window holding an infinity has a
  NaN variance (as ``numpy.var``); +-inf are ordinary extremes.
* ``ddof`` is a number (a float too, as NumPy's), the variance divides by
  ``count - ddof``; ``count - ddof <= 0`` gives NaN. No ``RuntimeWarning`` for
  NaN outputs, as bottleneck and pandas: NaN is the expected result there.
* Ties in moving_max/moving_min and their arg twins go to the latest element
  (bottleneck's rule), -0.0 and +0.0 included (the value is that element's, bit
  for bit). Integers are compared in their own dtype (exact beyond 2**53) and the
  winner converted to float64. ``moving_argmax`` gives the absolute index along
  ``axis`` (int64), so ``take_along_axis(x, i, axis)`` is ``moving_max`` where
  ``i >= 0``; bottleneck's ``move_argmax`` gives ``position - index`` as float.
* Results are new C-contiguous arrays of ``x``'s shape, never NumPy scalars; a
  zero-size input gives a zero-size result.
"""
from __future__ import annotations

import operator

import numpy as np

from . import _alloc, _dtypes, _fast
from ._axes import normalize_axis
from ._dispatch import dispatched
from ._jit import planned_call
from ._layout import scan_view
from ._plan import PlanCache, array_key, axis_key, base_maker, viewed
from .kernels import moving as K
from .missing import _doc
from .typing import Array, ArrayLike

__all__ = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min", "moving_argmax", "moving_argmin"]

#: The shortest block of the axis one task slides over (see the module docstring).
_BLOCK_MIN = 1 << 14
#: The largest window the kernels are given: no axis is longer (no array is larger),
#: so a larger window, or min_count, means the same (see fitted_window).
_MAX_WINDOW = 2 ** 62
#: Blocks are at least this many windows long: re-reading the anchor costs at most
#: 1/8 of a block.
_BLOCK_WINDOWS = 8
#: Units of parallel work per element (``_jit.PARALLEL_MIN_WORK`` counts a scan's
#: elements; a moving window costs a few times a scan's step).
_WORK_PER_ELEMENT = 4
#: Plans of every function here (see ``axisops._plan``).
_PLANS = PlanCache()

_SUPPORTED = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64))

_PARAMETERS = """x : array_like
        Input of a bool, integer or float dtype, any strides.
    window : int
        Number of elements in each window (>= 1; longer than the axis is allowed).
    axis : int, optional
        The axis to slide along; negative values count from the end. Default -1.
    min_count : int or None, optional
        Fewest values that are not NaN a window needs for a result, in
        ``[1, window]``. Default None: ``window``."""

_ERRORS = """TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        dates, ...), ``window`` or ``min_count`` is not an int, or ``axis`` is not
        a single int.{ddof_error}
    ValueError
        If ``window`` < 1, or ``min_count`` is not in ``[1, window]``.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim``."""

_SUM_DOC = """Moving {what} along an axis, NaN skipped, as bottleneck's ``move_{short}``.

    Each output is the {what} of the values that are not NaN among the ``window``
    elements ending at its position (fewer at the start of the axis): pandas'
    ``rolling(window, min_periods=min_count).{short}()``. A window with fewer than
    ``min_count`` such values gives NaN. The running sum is kept in float64 and
    recomputed from scratch at fixed blocks of the axis, so it never drifts.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape; float inputs keep their dtype, others give float64.

    Raises
    ------
    {errors}

    See Also
    --------
    {twin} : The moving {twin_what}.
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([1., 2., np.nan, 4., 5.]), 3, min_count=2)
    array([{result}])
    """

_VAR_DOC = """Moving {what} along an axis, NaN skipped, as bottleneck's ``move_{short}``.

    Each output is the {what} of the values that are not NaN among the ``window``
    elements ending at its position, dividing the sum of squared deviations by
    ``count - ddof``: pandas' ``rolling(window, min_periods=min_count).{short}(ddof)``
    (whose ``ddof`` defaults to 1; here to 0, as NumPy's and bottleneck's). A window
    with fewer than ``min_count`` such values, with ``count - ddof <= 0``, or with an
    infinity gives NaN. The mean and squared deviations are updated Welford-style
    in float64 as elements enter and leave, restarted at fixed blocks of the axis.{root}

    Parameters
    ----------
    {parameters}
    ddof : int or float, optional
        Delta degrees of freedom. Default 0.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape; float inputs keep their dtype, others give float64.

    Raises
    ------
    {errors}

    See Also
    --------
    {twin} : The moving {twin_what}.
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([1., 3., np.nan, 7.]), 2, min_count=1)
    array([{result}])
    """

_EXTREME_DOC = """Moving {what} along an axis, NaN skipped, as bottleneck's ``move_{short}``.

    Each output is the {what} of the values that are not NaN among the ``window``
    elements ending at its position; a window with fewer than ``min_count`` of them
    gives NaN. Van Herk/Gil-Werman blocks keep the cost per element the same
    whatever the window. The value is the winning element's (integers are compared exactly in
    their own dtype, then converted to float64).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape; float inputs keep their dtype, others give float64.

    Raises
    ------
    {errors}

    See Also
    --------
    moving_arg{short} : Where the {what} is.
    {twin} : The moving {twin_what}.
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([4., 1., np.nan, 5., 2.]), 2, min_count=1)
    array([{result}])
    """

_ARG_DOC = """Index of the moving {what} along an axis, NaN skipped.

    For each position, the absolute index along ``axis`` of the {what} of the
    values that are not NaN among the ``window`` elements ending there, so that
    ``take_along_axis(x, i, axis)`` is ``moving_{short}`` wherever ``i >= 0``; -1 where
    the window has fewer than ``min_count`` such values. Ties give the latest
    index, as bottleneck's ``move_arg{short}`` (which counts back from the window's
    end, as a float; this counts from the start of the axis).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    numpy.ndarray
        int64 indices, of ``x``'s shape.

    Raises
    ------
    {errors}

    See Also
    --------
    moving_{short} : The {what} itself.
    {twin} : The index of the moving {twin_what}.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([4., 1., np.nan, 5., 5.]), 2)
    array([{result}])
    """

_COMMON = {"parameters": _PARAMETERS, "errors": _ERRORS.format(ddof_error="")}
_VAR_COMMON = {"parameters": _PARAMETERS, "errors": _ERRORS.format(
    ddof_error=" Also if ``ddof`` is not a number.")}


@dispatched(moving=_fast.MOVING_CALLS["moving_sum"])
@_doc(_SUM_DOC, what="sum", short="sum", name="moving_sum", twin="moving_mean",
      twin_what="mean", result="nan,  3.,  3.,  6.,  9.", **_COMMON)
def moving_sum(x: ArrayLike, window: int, axis: int = -1, *,
               min_count: int | None = None) -> Array:
    return _moving("moving_sum", x, window, axis, min_count)


@dispatched(moving=_fast.MOVING_CALLS["moving_mean"])
@_doc(_SUM_DOC, what="mean", short="mean", name="moving_mean", twin="moving_sum",
      twin_what="sum", result="nan, 1.5, 1.5, 3. , 4.5", **_COMMON)
def moving_mean(x: ArrayLike, window: int, axis: int = -1, *,
                min_count: int | None = None) -> Array:
    return _moving("moving_mean", x, window, axis, min_count)


@dispatched
@_doc(_VAR_DOC, what="variance", short="var", name="moving_var", twin="moving_std",
      twin_what="standard deviation", root="", result="0., 1., 0., 0.", **_VAR_COMMON)
def moving_var(x: ArrayLike, window: int, axis: int = -1, *, min_count: int | None = None,
               ddof: float = 0) -> Array:
    return _moving("moving_var", x, window, axis, min_count, ddof)


@dispatched
@_doc(_VAR_DOC, what="standard deviation", short="std", name="moving_std", twin="moving_var",
      twin_what="variance", root=" The square root of ``moving_var``.",
      result="0., 1., 0., 0.", **_VAR_COMMON)
def moving_std(x: ArrayLike, window: int, axis: int = -1, *, min_count: int | None = None,
               ddof: float = 0) -> Array:
    return _moving("moving_std", x, window, axis, min_count, ddof)


@dispatched(moving=_fast.MOVING_CALLS["moving_max"])
@_doc(_EXTREME_DOC, what="maximum", short="max", name="moving_max", twin="moving_min",
      twin_what="minimum", result="4., 4., 1., 5., 5.", **_COMMON)
def moving_max(x: ArrayLike, window: int, axis: int = -1, *,
               min_count: int | None = None) -> Array:
    return _moving("moving_max", x, window, axis, min_count)


@dispatched(moving=_fast.MOVING_CALLS["moving_min"])
@_doc(_EXTREME_DOC, what="minimum", short="min", name="moving_min", twin="moving_max",
      twin_what="maximum", result="4., 1., 1., 5., 2.", **_COMMON)
def moving_min(x: ArrayLike, window: int, axis: int = -1, *,
               min_count: int | None = None) -> Array:
    return _moving("moving_min", x, window, axis, min_count)


@dispatched(moving=_fast.MOVING_CALLS["moving_argmax"])
@_doc(_ARG_DOC, what="maximum", short="max", name="moving_argmax", twin="moving_argmin",
      twin_what="minimum", result="-1,  0, -1, -1,  4", **_COMMON)
def moving_argmax(x: ArrayLike, window: int, axis: int = -1, *,
                  min_count: int | None = None) -> Array:
    return _moving("moving_argmax", x, window, axis, min_count)


@dispatched(moving=_fast.MOVING_CALLS["moving_argmin"])
@_doc(_ARG_DOC, what="minimum", short="min", name="moving_argmin", twin="moving_argmax",
      twin_what="maximum", result="-1,  1, -1, -1,  4", **_COMMON)
def moving_argmin(x: ArrayLike, window: int, axis: int = -1, *,
                  min_count: int | None = None) -> Array:
    return _moving("moving_argmin", x, window, axis, min_count)


# ------------------------------------------------------------------------ the plans


def check_window(op: str, window, min_count) -> tuple[int, int]:
    """``(window, min_count)`` as ints, ``min_count`` None meaning ``window``;
    ``TypeError`` for anything but an int (a bool included), ``ValueError`` out of
    range; both at most 2**62 (a larger one means the same). Shared with the
    gradients and every array type's front end."""
    window = _integer(op, "window", window, "an int >= 1")
    if window < 1:
        raise ValueError(f"{op}: window must be an int >= 1, got {window}")
    if min_count is None:
        min_count = window
    else:
        min_count = _integer(op, "min_count", min_count,
                             f"an int in [1, window={window}] or None")
        if not 1 <= min_count <= window:
            raise ValueError(f"{op}: min_count must be an int in [1, window={window}] or "
                             f"None, got {min_count}")
    # No axis is longer than _MAX_WINDOW: a larger window or min_count reads and
    # gives what this one does (see fitted_window), and fits an int64 everywhere.
    return min(window, _MAX_WINDOW), min(min_count, _MAX_WINDOW)


def fitted_window(window: int, min_count: int, n: int) -> tuple[int, int] | None:
    """``(window, min_count)`` for an axis of *n* >= 1 elements: a window longer than
    the axis reads what a window of *n* reads (the axis up to each position), so it
    is taken as *n* (a window of 2**62 then costs what the axis costs, and every
    offset fits an int64); None where ``min_count > n``: no window can hold
    ``min_count`` values, and every output is NaN (index -1)."""
    if min_count > n:
        return None
    return min(window, n), min_count


def _integer(op: str, name: str, value, expected: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be {expected}, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be {expected}, got {value!r}") from None


def check_dtype(dtype: np.dtype, op: str) -> None:
    """``TypeError`` naming *op* for a dtype the moving windows do not take."""
    if dtype in _SUPPORTED:
        return
    if dtype.kind == "c":
        raise TypeError(f"{op}: unsupported dtype {dtype}: the moving windows do not take "
                        "complex numbers (they have no order; for a moving sum or mean, "
                        "take the real and imaginary parts apart)")
    raise TypeError(f"{op}: unsupported dtype {dtype} (expected bool, int, uint or float16, "
                    "float32, float64)")


def _moving(op: str, x, window, axis, min_count, ddof=None):
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    elif (ddof is None and type(window) is int and type(axis) is int and 1 <= window <= _MAX_WINDOW
          and (min_count is None or (type(min_count) is int and 1 <= min_count <= window))
          and (out := _fast.moving_rows(op, x, window, axis, min_count)) is not None):
        return out  # the common call: contiguous rows, one compiled entry
    elif (x.size and type(window) is int and type(axis) is int and window >= 1
          and (min_count is None or (type(min_count) is int and 1 <= min_count <= window))
          and (ddof is None or type(ddof) is int) and -x.ndim <= axis < x.ndim
          and x.dtype in _SUPPORTED):
        # the common call, valid (every error is the plan's): one compiled entry
        out = _fast.moving(op, x, window, axis, min_count, 0 if ddof is None else ddof)
        if out is not None:
            return out
    window, min_count = check_window(op, window, min_count)
    if ddof is not None:  # the variances
        ddof = _dtypes.check_ddof(ddof, op)
        ddof = float(ddof)
    try:
        key = (op, *array_key(x), axis_key(axis), window, min_count, ddof)
    except TypeError:
        key = None
    return _PLANS.plan(key, _plan, op, x, axis, window, min_count, ddof)(x)


def _plan(op: str, x: np.ndarray, axis, window: int, min_count: int, ddof: float | None):
    """The plan of *op* for arrays described like *x* (see ``axisops._plan``)."""
    check_dtype(x.dtype, op)
    if axis is None:
        raise TypeError(f"{op}: axis must be a single int, got None")
    axis = normalize_axis(axis, x.ndim, op)
    kind = op[len("moving_"):]
    arg = kind.startswith("arg")
    floating = x.dtype.kind == "f"
    res = np.dtype(np.int64) if arg else x.dtype if floating else np.dtype(np.float64)
    if x.size == 0:
        return lambda x: np.empty(x.shape, res)
    fitted = fitted_window(window, min_count, x.shape[axis])
    if fitted is None:
        fill = -1 if arg else np.nan
        return lambda x: np.full(x.shape, fill, res)
    window, min_count = fitted
    # float16 results are rounded once from float64 (never float64 -> float32 -> float16)
    work_dtype = np.dtype(np.float64) if res == np.float16 else res
    view = scan_view(x, axis)
    block_len = max(_BLOCK_MIN, _BLOCK_WINDOWS * window)
    make_base = base_maker(x)
    table = None
    compare = x.dtype
    if x.dtype == np.float16:  # read as bits, looked up in float32
        make_base, table, compare = viewed(make_base, np.uint16), _dtypes.float16_table(), \
            np.dtype(np.float32)
    elif x.dtype == np.bool_:
        make_base, compare = viewed(make_base, np.uint8), np.dtype(np.uint8)
    geometry = (view.offset, view.outer_shape, view.outer_strides, view.n, view.n_stride,
                view.mid_shape, view.mid_strides, view.inner, view.inner_stride, window,
                min_count, block_len)
    out_shape, shape, work = view.out_shape, x.shape, x.size * _WORK_PER_ELEMENT
    if kind in ("sum", "mean"):
        options: tuple = (kind == "mean", table)
        kern = K.moving_sum_kernel
    elif kind in ("var", "std"):
        options = (float(ddof or 0), kind == "std", table)
        kern = K.moving_var_kernel
    else:
        return _extreme_plan(kind, make_base, geometry, table, compare, work_dtype, res,
                             out_shape, shape, work)
    empty = _alloc.empty_function(out_shape, work_dtype)
    call = planned_call(kern)

    def plan(x):
        out = empty(out_shape, work_dtype)
        call(work, make_base(x), *geometry, *options, out)
        return _finished(out, res, shape)

    return plan


def _extreme_plan(kind, make_base, geometry, table, compare, work_dtype, res, out_shape,
                  shape, work):
    """The plan of the moving extremes and their indices: one kernel, which writes
    the values, the indices, or both."""
    arg = kind.startswith("arg")
    invert = kind.endswith("min")
    like = np.empty(0, compare)
    unused = (1, 1, 1, 1)
    values_dtype = np.dtype(np.float64) if arg else work_dtype
    empty_values = _alloc.empty_function(unused if arg else out_shape, values_dtype)
    empty_indices = _alloc.empty_function(out_shape if arg else unused, np.int64)
    call = planned_call(K.moving_extreme_kernel)

    def plan(x):
        values = empty_values(unused if arg else out_shape, values_dtype)
        indices = empty_indices(out_shape if arg else unused, np.int64)
        call(work, make_base(x), *geometry, invert, table, like, not arg, values, arg, indices)
        return _finished(indices if arg else values, res, shape)

    return plan


def _finished(out: np.ndarray, res: np.dtype, shape) -> np.ndarray:
    """The kernel's output in the result dtype (float16 rounded once) and shape."""
    if out.dtype != res:
        with np.errstate(over="ignore"):
            out = out.astype(res)
    return out.reshape(shape)

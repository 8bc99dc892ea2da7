"""Moving order statistics along one axis: moving_median, moving_quantile,
moving_rank.

Each output is an order statistic of the *trailing* window: the ``window``
elements ending at its position along ``axis`` (fewer at the start of the axis),
with the rules of the other moving windows (``axisops.moving``): NaN inside a
window is skipped; a position whose window holds fewer than ``min_count`` values
that are not NaN (default ``window``) gives NaN. No window is materialised:
memory is that of the result and a few windows of scratch per thread.

* ``moving_median``: the median of the window's values, as bottleneck's
  ``move_median`` and pandas' ``rolling().median()``: the middle value of an odd
  count (that element's value, bit for bit), the mean ``(a + b) / 2`` of the two
  middle values of an even count.
* ``moving_quantile``: pandas' ``rolling(window, min_periods).quantile(q,
  interpolation="linear")``: with the ``c`` values sorted ``v[0..c-1]``, ``idx =
  q * (c - 1)`` and ``lo = floor(idx)``, ``v[lo]`` where ``idx`` is whole, else
  ``v[lo] + (v[lo + 1] - v[lo]) * (idx - lo)``.
* ``moving_rank``: bottleneck's ``move_rank``: the rank of the window's *latest*
  element among the window's values, ties averaged, scaled to [-1, 1]: with
  ``less`` values below it, ``equal`` equal to it (itself included) and ``c``
  values in all, ``2 * (0.5 * (2 * less + equal - 1) / (c - 1) - 0.5)``, in that
  order of operations (bottleneck's bits for float64); 0.0 for a window of one
  value; NaN where the latest element is NaN.

How (see ``axisops.kernels.moving_order`` for the loops): the axis is cut into
fixed blocks of ``max(16384, 8 * chunk)`` positions, one task per lane and
block (fixed by the shape and the window, never by the thread count; every
output is an exact function of its window, so the bits are the same on any
number of threads). A task cuts its walk into chunks of ``chunk = max(window,
64)`` positions, sorts spans of about 2048 positions once (a stable LSD radix
sort of the keys' top 24 bits packed with the positions, runs of equal
prefixes then ordered by the full keys), and gives each pair of neighbouring
chunks its rank space (the span's order restricted to the pair), in which each
window, which spans at most the two chunks, is a bitmap of ranks: a word
pointer moved to the word holding the k-th rank present, and a branch-free
select in it, for the medians and quantiles (O(1) per output, typically);
popcounts of the bitmap's words (and of blocks of 4096 ranks) for the ranks.
bottleneck's ``move_rank`` is O(window) per element, pandas' skip lists
O(log window) with a larger constant.

Decisions where the contract is silent:

* ``window``, ``min_count`` and ``axis`` are checked exactly as by the other
  moving windows (``axisops.moving.check_window``): ``window`` an int >= 1
  (longer than the axis allowed), ``min_count`` None or an int in ``[1,
  window]``, ``axis`` one int; the same dtypes (bool, integers, floats; complex,
  object and dates are a ``TypeError``).
* ``q`` is a real number in [0, 1]: a Python or NumPy int or float (a 0-d
  array too); a bool, a string, a complex number or an array of several
  values is a ``TypeError``; out of [0, 1] (NaN included) a ``ValueError``.
* Order: NumPy's, -inf < numbers < +inf; -0.0 and +0.0 are equal, and among
  equal values the element with the lower index is the lower in the order
  (a stable sort), which decides which element's bits a median of an odd
  count gives (-0.0 or +0.0) and which element a gradient goes to.
* Integers are compared exactly in their own dtype (int64 and uint64 beyond
  2**53 too), the values chosen converted to float64 afterwards; float16 is
  compared in float32 (exactly); every interpolation, mean and rank is computed
  in float64 and rounded once to the result dtype (float32 included: the rank
  of a float32 input is float64's rounded, where bottleneck computes in float32).
* Infinities are values: ``(-inf + inf) / 2`` and pandas' ``v[lo] + (v[lo + 1] -
  v[lo]) * frac`` with two equal infinities are NaN, as there (pandas' formula,
  kept); the rank of an infinity counts the equal infinities as ties.
* Results are new C-contiguous arrays of ``x``'s shape; a zero-size input gives
  a zero-size result. No ``RuntimeWarning`` for NaN outputs.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _alloc, _dtypes
from ._axes import normalize_axis
from ._dispatch import dispatched
from ._jit import planned_call
from ._layout import scan_view
from ._plan import PlanCache, array_key, axis_key, base_maker, viewed
from .kernels import moving_order as K
from .missing import _doc
from .moving import check_dtype, check_window, fitted_window
from .typing import Array, ArrayLike

__all__ = ["moving_median", "moving_quantile", "moving_rank"]

#: The shortest block of the axis one task slides over, and how many chunks
#: (see the module docstring) a block is at least.
_BLOCK_MIN = 1 << 14
_BLOCK_CHUNKS = 8
#: Positions sorted at once (at least two chunks): a radix sort's 256 buckets per
#: digit cost little over this many keys, which stay in L1/L2.
_SPAN = 2048
#: Units of parallel work per element (a scan's step is 1; a sort, a merge and a
#: pointer per element cost many).
_WORK_PER_ELEMENT = 16
_PLANS = PlanCache()

_PARAMETERS = """x : array_like
        Input of a bool, integer or float dtype, any strides.
    window : int
        Number of elements in each window (>= 1; longer than the axis is allowed).{q}
    axis : int, optional
        The axis to slide along; negative values count from the end. Default -1.
    min_count : int or None, optional
        Fewest values that are not NaN a window needs for a result, in
        ``[1, window]``. Default None: ``window``."""

_Q = """
    q : float
        The quantile, a real number in [0, 1]."""

_ERRORS = """TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        dates, ...), ``window`` or ``min_count`` is not an int, or ``axis`` is not
        a single int.{q_type}
    ValueError
        If ``window`` < 1, or ``min_count`` is not in ``[1, window]``.{q_value}
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim``."""

_DOC = """{title}

    {body}

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
    {see_also}

    Examples
    --------
    >>> import numpy as np
    >>> import axisops.moving_order as mo
    >>> x = np.array([3., 1., np.nan, 4., 1., 5., 9.])
    >>> mo.{call}
    array([{result}])
    """

_MEDIAN_BODY = """Each output is the median of the values that are not NaN among the
    ``window`` elements ending at its position (fewer at the start of the axis):
    the middle value of an odd count (that element's value, bit for bit), the
    mean of the two middle values of an even count, computed in float64 and
    rounded once, as bottleneck's ``move_median`` and pandas'
    ``rolling(window, min_periods=min_count).median()``. A window with fewer
    than ``min_count`` such values gives NaN. O(log window) per element."""

_QUANTILE_BODY = """Each output is the ``q``-quantile of the values that are not NaN among
    the ``window`` elements ending at its position, interpolated linearly as
    pandas' ``rolling(window, min_periods=min_count).quantile(q)``: with the
    ``c`` values sorted ``v[0..c-1]`` and ``idx = q * (c - 1)``, ``v[lo] +
    (v[lo + 1] - v[lo]) * (idx - lo)`` for ``lo = floor(idx)`` (``v[lo]`` where
    ``idx`` is whole), in float64, rounded once. A window with fewer than
    ``min_count`` such values gives NaN. O(log window) per element."""

_RANK_BODY = """Each output is the rank of the latest element of its window (the
    element at that position) among the window's values that are not NaN, ties
    averaged and scaled to [-1, 1] (-1 the smallest, 1 the largest, 0 the
    middle), as bottleneck's ``move_rank``: ``2 * (0.5 * (2 * less + equal - 1)
    / (count - 1) - 0.5)``. A window of one value gives 0.0; a NaN latest
    element, or fewer than ``min_count`` values, gives NaN. At most 63 word
    popcounts and ``window / 2048`` block counts per element (bottleneck's is
    O(window))."""


def _common(q=False):
    return {"parameters": _PARAMETERS.format(q=_Q if q else ""),
            "errors": _ERRORS.format(
                q_type=" Also if ``q`` is not a real number." if q else "",
                q_value=" Also if ``q`` is not in [0, 1]." if q else "")}


@dispatched
@_doc(_DOC, title="Moving median along an axis, NaN skipped, as bottleneck's ``move_median``.",
      body=_MEDIAN_BODY, call="moving_median(x, 3, min_count=1)",
      result="3. , 2. , 2. , 2.5, 2.5, 4. , 5. ",
      see_also="moving_quantile : Any quantile of the windows.\n    "
               "axisops.grad.moving_median : Gradient of ``moving_median``.", **_common())
def moving_median(x: ArrayLike, window: int, axis: int = -1, *,
                  min_count: int | None = None) -> Array:
    return _moving("moving_median", x, window, axis, min_count)


@dispatched
@_doc(_DOC, title="Moving quantile along an axis, NaN skipped, as pandas' "
      "``rolling().quantile``.", body=_QUANTILE_BODY,
      call="moving_quantile(x, 3, 0.25, min_count=1)",
      result="3.  , 1.5 , 1.5 , 1.75, 1.75, 2.5 , 3.  ",
      see_also="moving_median : The quantile 0.5 (as the mean of the middle two).\n    "
               "axisops.grad.moving_quantile : Gradient of ``moving_quantile``.",
      **_common(q=True))
def moving_quantile(x: ArrayLike, window: int, q: float, axis: int = -1, *,
                    min_count: int | None = None) -> Array:
    return _moving("moving_quantile", x, window, axis, min_count,
                   check_quantile(q, "moving_quantile"))


@dispatched
@_doc(_DOC, title="Moving rank of the latest element along an axis, as bottleneck's "
      "``move_rank``.", body=_RANK_BODY, call="moving_rank(x, 3, min_count=1)",
      result=" 0., -1., nan,  1., -1.,  1.,  1.",
      see_also="moving_median : The middle of each window.", **_common())
def moving_rank(x: ArrayLike, window: int, axis: int = -1, *,
                min_count: int | None = None) -> Array:
    return _moving("moving_rank", x, window, axis, min_count)


# ------------------------------------------------------------------------ the plans


def check_quantile(q, op: str) -> float:
    """*q* as a float in [0, 1]: a Python or NumPy real number (a 0-d array too);
    ``TypeError`` for anything else (a bool, a string, a complex number, an
    array of several values), ``ValueError`` out of [0, 1] or NaN."""
    value = q
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{op}: q must be a real number in [0, 1], got {q!r}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{op}: q must be in [0, 1], got {q!r}")
    return value


def plan_geometry(window: int) -> tuple[int, int, int]:
    """``(chunk, group, block_len)`` of a (fitted) window, fixed by the window
    alone: chunks of at least the window, sorted ``group`` at a time."""
    chunk = max(window, K.CHUNK_MIN)
    return chunk, max(2, _SPAN // chunk), max(_BLOCK_MIN, _BLOCK_CHUNKS * chunk)


def _moving(op: str, x, window, axis, min_count, q=0.5):
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    window, min_count = check_window(op, window, min_count)
    try:
        key = (op, *array_key(x), axis_key(axis), window, min_count, q, False)
    except TypeError:
        key = None
    return _PLANS.plan(key, _plan, op, x, axis, window, min_count, q, False)(x)


def picks(op: str, x: np.ndarray, window: int, axis: int, min_count: int, q: float = 0.5):
    """``(values, a, b, weight)`` of moving_median (``op`` "moving_median") or
    moving_quantile for the gradients: the values in float64 and, per output,
    the absolute positions along *axis* of the element at the lower place of
    the window's order and of the one above it (-1 where none) and the second's
    weight; all of ``x``'s shape. Arguments already checked."""
    try:
        key = (op, *array_key(x), axis_key(axis), window, min_count, q, True)
    except TypeError:
        key = None
    return _PLANS.plan(key, _plan, op, x, axis, window, min_count, q, True)(x)


def _plan(op: str, x: np.ndarray, axis, window: int, min_count: int, q: float, want: bool):
    """The plan of *op* for arrays described like *x* (see ``axisops._plan``);
    with *want*, the plan of :func:`picks`."""
    check_dtype(x.dtype, op)
    if axis is None or isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    axis = normalize_axis(axis, x.ndim, op)
    floating = x.dtype.kind == "f"
    res = np.dtype(np.float64) if want or not floating else x.dtype
    shape = x.shape
    fitted = fitted_window(window, min_count, x.shape[axis]) if x.size else None
    if fitted is None:
        def nothing(x):
            values = np.full(shape, np.nan, res)
            if not want:
                return values
            return (values, np.full(shape, -1, np.int64), np.full(shape, -1, np.int64),
                    np.zeros(shape))
        return nothing
    window, min_count = fitted
    work_dtype = np.dtype(np.float64) if res == np.float16 else res
    view = scan_view(x, axis)
    chunk, group, block_len = plan_geometry(window)
    make_base = base_maker(x)
    table = None
    compare = x.dtype
    if x.dtype == np.float16:  # read as bits, looked up in float32
        make_base, table, compare = viewed(make_base, np.uint16), _dtypes.float16_table(), \
            np.dtype(np.float32)
    elif x.dtype == np.bool_:
        make_base, compare = viewed(make_base, np.uint8), np.dtype(np.uint8)
    # sort keys: a float's magnitude flipped where negative, then every key biased
    # to be unsigned (see kernels.moving_order._key)
    if compare.kind == "f":
        bits = 8 * compare.itemsize
        mask, bias = (1 << (bits - 1)) - 1, 1 << (bits - 1)
    else:
        mask, bias = 0, (1 << (8 * compare.itemsize - 1)) if compare.kind == "i" else 0
    mode = {"moving_median": K.MEDIAN, "moving_quantile": K.QUANTILE,
            "moving_rank": K.RANK}[op]
    like = np.empty(0, compare)
    geometry = (view.offset, view.outer_shape, view.outer_strides, view.n, view.n_stride,
                view.mid_shape, view.mid_strides, view.inner, view.inner_stride, window,
                min_count, block_len, chunk, group, mode, float(q), np.int64(mask),
                np.uint64(bias), compare.itemsize, table, like)
    out_shape, work = view.out_shape, x.size * _WORK_PER_ELEMENT
    unused = (1, 1, 1, 1)
    picked = out_shape if want else unused
    empty = _alloc.empty_function(out_shape, work_dtype)
    empty_picks = _alloc.empty_function(picked, np.int64)
    empty_weights = _alloc.empty_function(picked, np.float64)
    call = planned_call(K.moving_order_kernel)

    def plan(x):
        out = empty(out_shape, work_dtype)
        a = empty_picks(picked, np.int64)
        b = empty_picks(picked, np.int64)
        weight = empty_weights(picked, np.float64)
        call(work, make_base(x), *geometry, out, want, a, b, weight)
        if want:
            return (out.reshape(shape), a.reshape(shape), b.reshape(shape),
                    weight.reshape(shape))
        return _finished(out, res, shape)

    return plan


def _finished(out: np.ndarray, res: np.dtype, shape) -> np.ndarray:
    """The kernel's output in the result dtype (float16 rounded once) and shape."""
    if out.dtype != res:
        with np.errstate(over="ignore"):
            out = out.astype(res)
    return out.reshape(shape)

"""Order statistics along an axis: sort, argsort, top_k, partition, argpartition,
kthvalue, median, nanmedian, quantile, nanquantile, rank.

One order for all of them, NumPy's: -inf < numbers < +inf < NaN (NaT last for
dates), -0.0 and +0.0 equal; NaN last in both directions; every order stable
(ties keep the lower index first, descending too). The kernels
(:mod:`axisops.kernels.order`) turn each element into an unsigned key of its own
width that sorts in that order, and then either sort a lane (radix), select the
element at a place of its stable order (radix select: a histogram of the top
byte, then only the bucket that holds the place), or rank it. The median and the
quantiles need only the one or two elements at the places NumPy's formulas
name, so they select those and never sort; the arithmetic that follows (the
mean of the two middle elements, NumPy's ``_lerp`` with its weights) is NumPy's
own, on the selected elements, so results are NumPy's values and dtypes.

Decisions where the contract is silent:

* ``axis`` of ``sort``, ``argsort``, ``top_k``, ``partition``, ``argpartition``,
  ``kthvalue`` and ``rank`` is one int or None (the flattened array in C order, a
  1-D result, as NumPy's ``sort(axis=None)``); a tuple is a ``TypeError``, out of
  range an ``AxisError`` (also any int axis of a 0-d array). ``median``,
  ``nanmedian``, ``quantile`` and ``nanquantile`` take what NumPy takes (None, an
  int, a tuple; several axes are merged into one lane in C order of the axes as
  given sorted).
* dtypes: bool, integers and floats for every operator; datetime64 and
  timedelta64 (NaT last, as NaN) for the sorts, ``top_k``, the partitions and
  ``kthvalue``. Complex (no order), object and strings: ``TypeError``.
* ``kthvalue`` with ``axis=None`` gives 0-d arrays (and with ``keepdims`` a
  shape of ones); its ``k`` and ``top_k``'s are ints (a bool is a ``TypeError``),
  out of range a ``ValueError``. ``partition``'s ``kth`` is an int or a sequence
  of ints, negative from the end, out of range a ``ValueError``; with one place
  the lane is the elements before it in the stable order (in lane order), then
  it, then the rest (in lane order); with several, the sorted lane.
* ``index_dtype`` is int32 or int64 (``TypeError`` otherwise); int32 that cannot
  index the axis is an ``OverflowError``.
* A plain ``median``/``quantile`` of a lane holding NaN is NaN (NumPy's rule);
  the ``nan`` twins warn ``All-NaN slice encountered`` once per call that meets
  such a lane. Zero-size inputs to the four give exactly NumPy's results (they
  are handed to NumPy, warnings included).
* Results are new C-contiguous arrays (NumPy scalars where NumPy gives scalars:
  the median and quantiles of a whole array).
"""
from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _alloc, _dtypes, _fast_order, _jit
from ._axes import normalize_axes, normalize_axis
from ._dispatch import dispatched
from ._layout import scan_view
from ._plan import PlanCache, array_key, base_maker, viewed
from .kernels import order as K
from .kernels import rank as _rank_kernels
from .kernels import rows as KR
from .kernels.select_network import select_network_kernel, selection_pairs
from .missing import _doc
from .scan import ValuesIndices
from .typing import Array, ArrayLike, ArrayOrScalar, Axis, DTypeLike

__all__ = ["sort", "argsort", "top_k", "partition", "argpartition", "kthvalue", "median",
           "nanmedian", "quantile", "nanquantile", "rank"]

_NUMBERS = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64))
#: Units of parallel work per element (a sort reads and writes each element a few times).
_WORK_PER_ELEMENT = 8
_INT64 = np.dtype(np.int64)
_RANK_METHODS = {"average": 0, "min": 1, "max": 2, "dense": 3, "ordinal": 4}
#: NumPy's quantile methods: the virtual index of each, and which take one element.
_DISCRETE = frozenset({"inverted_cdf", "closest_observation", "lower", "higher", "nearest"})
_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
            "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
            "normal_unbiased", "lower", "higher", "midpoint", "nearest")


# ------------------------------------------------------------------ the public functions

_SORT_DOC = """{title}

    The order is NumPy's: -inf < numbers < +inf < NaN (NaT last for dates), -0.0
    and +0.0 equal, and it is stable: equal elements keep their input order, so
    ties give the lower index first. ``descending=True`` lists the numbers from the
    largest down, then the NaNs (NaN is last in both directions), still stable:
    not a reversed ascending sort. {how}

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float, datetime64 or timedelta64 dtype.
    axis : int or None, optional
        The axis to sort along; None sorts the flattened array. Default -1.
    descending : bool, optional
        Largest first (NaN still last). Default False.{extra_param}

    Returns
    -------
    numpy.ndarray
        {returns}

    Raises
    ------
    TypeError
        For complex, object or string input, a tuple ``axis``{extra_error}.
    numpy.exceptions.AxisError
        If ``axis`` is out of range.

    See Also
    --------
    {twin} : {twin_what}
    top_k : The first ``k`` of the same order.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([3., np.nan, -1., 3., 0.]), descending=True)
    {result}
    """


@dispatched
@_doc(_SORT_DOC, name="sort", title="Sorted copy of an array along an axis, stable, NaN last.",
      how="The elements come back bit for bit (-0.0 stays -0.0; NaN payloads kept).",
      extra_param="", returns="Of ``x``'s shape and dtype (1-D for ``axis=None``).",
      extra_error="", twin="argsort", twin_what="The positions of the same order.",
      result="array([ 3.,  3.,  0., -1., nan])")
def sort(x: ArrayLike, axis: int | None = -1, *, descending: bool = False) -> Array:
    fast = _fast_order.sort(x, axis, descending)
    if fast is not None:
        return fast
    x, axis = _one_lane_axis(x, axis, "sort", dates=True)
    descending = _flag(descending, "descending", "sort")
    return _sorted(x, axis, descending, values=True)


@dispatched
@_doc(_SORT_DOC, name="argsort", title="Positions that sort an array along an axis, stable, "
      "NaN last.", how="``take_along_axis(x, argsort(x, axis), axis)`` is ``sort(x, axis)``.",
      extra_param="\n    index_dtype : dtype, optional\n        int32 or int64. Default int64.",
      returns="Positions along ``axis``, of ``x``'s shape (1-D for ``axis=None``).",
      extra_error=", an ``index_dtype`` other than int32 or int64.\n    OverflowError\n"
      "        If int32 cannot index the axis", twin="sort", twin_what="The sorted values.",
      result="array([0, 3, 4, 2, 1])")
def argsort(x: ArrayLike, axis: int | None = -1, *, descending: bool = False,
            index_dtype: DTypeLike = np.int64) -> Array:
    x, axis = _one_lane_axis(x, axis, "argsort", dates=True)
    descending = _flag(descending, "descending", "argsort")
    index_dtype = _index_dtype(index_dtype, x, axis, "argsort")
    return _sorted(x, axis, descending, values=False, index_dtype=index_dtype)


#: Fewer lanes than this, long and strided in a 2-D table, are copied into rows
#: by ``top_k`` (its lane walk reads a strided lane element by element).
FEW_STRIDED_LANES = 16


@dispatched
def top_k(x: ArrayLike, k: int, axis: int | None = -1, *, mode: str = "largest",
          sorted: bool = True, index_dtype: DTypeLike = np.int64) -> ValuesIndices:
    """The ``k`` largest (or smallest) elements along an axis and their positions.

    ``numpy.top_k`` and the Array API's: ``sort(x, descending=True)`` cut to ``k``
    along ``axis``, and the positions of those elements. NaN is last in both
    modes (so it is among the largest only when fewer than ``k`` numbers remain),
    ties give the lower index first. The ``k`` elements are found by a radix
    select of the ``k``-th, never by sorting the lane; only they are sorted.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float, datetime64 or timedelta64 dtype.
    k : int
        How many, ``0 <= k <= n`` (n the length of the axis).
    axis : int or None, optional
        The axis; None takes the flattened array. Default -1.
    mode : {"largest", "smallest"}, optional
        Which end of the order. Default "largest".
    sorted : bool, optional
        In order (True, default), or in the order of their positions (False).
    index_dtype : dtype, optional
        int32 or int64. Default int64.

    Returns
    -------
    ValuesIndices
        ``(values, indices)``, of ``x``'s shape with ``k`` along ``axis``.

    Raises
    ------
    TypeError
        For complex, object or string input, a non-int ``k``, a tuple ``axis``.
    ValueError
        If ``k`` is out of range or ``mode`` unknown.
    numpy.exceptions.AxisError
        If ``axis`` is out of range.

    See Also
    --------
    kthvalue : The ``k``-th smallest alone.
    axisops.grad.top_k : Gradient of ``top_k``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.top_k(np.array([1., 5., np.nan, 5., 3.]), 3)
    ValuesIndices(values=array([5., 5., 3.]), indices=array([1, 3, 4]))
    """
    fast = _fast_order.top_k(x, k, axis, mode, sorted, index_dtype)
    if fast is not None:
        return ValuesIndices(*fast)
    x, axis = _one_lane_axis(x, axis, "top_k", dates=True)
    n = x.shape[axis]
    k = _count(k, "k", 0, n, "top_k")
    if mode not in ("largest", "smallest"):
        raise ValueError(f"top_k: mode must be 'largest' or 'smallest', got {mode!r}")
    sorted = _flag(sorted, "sorted", "top_k")
    index_dtype = _index_dtype(index_dtype, x, axis, "top_k")
    if x.ndim == 2 and axis == 1 and x.shape[0] < FEW_STRIDED_LANES and not x.flags.c_contiguous:
        # a few long lanes across memory (a transposed table): read as rows, the
        # copy a fifth of the strided walk ((4, 256K) float32 F-ordered, k = 10:
        # 3.3 -> 0.45 ms, AMD EPYC Zen 5; torch.topk 0.6-1.5)
        x = np.ascontiguousarray(x)
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    values = np.empty(shape, x.dtype)
    indices = np.empty(shape, index_dtype)
    if values.size and _top_k_by_numpy(x, axis, k):
        _top_k_positions(x, axis, k, mode == "largest", sorted, indices)
        return ValuesIndices(np.take_along_axis(x, indices, axis), indices)
    # a network for short lanes, or many of a longer one's (a few are kept as it is read)
    if values.size and (k > K.SMALL_K or n <= 64) and _short_lanes(x, axis):
        _network(x, axis, mode == "largest", K.FIRST_K, k,
                 values=values.reshape(-1).view(_bits(x.dtype)), positions=indices.reshape(-1))
        if not sorted:  # in lane order, as a long lane gives them
            order = np.argsort(indices, axis=axis, kind="stable")
            values = np.take_along_axis(values, order, axis)
            indices = np.take_along_axis(indices, order, axis)
    elif values.size:
        args = _lane_args(x, axis, mode == "largest")
        _run(K.top_k_kernel, x.size, *args, k, sorted,
             values.reshape(-1).view(_bits(x.dtype)), indices.reshape(-1))
    return ValuesIndices(values, indices)


_PARTITION_DOC = """{title}

    As ``numpy.{name}``: along each lane, the element at each place ``kth`` is the
    one a stable sort puts there (NumPy's order: NaN last, -0.0 equal to +0.0),
    every element before it is not greater and every one after it not smaller.
    With one ``kth``, the others keep their input order on each side (found by a
    radix select, no sort); with several, the lane is sorted.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float, datetime64 or timedelta64 dtype.
    kth : int or sequence of ints
        Places, negative counting from the end.
    axis : int or None, optional
        The axis; None takes the flattened array. Default -1.{extra_param}

    Returns
    -------
    numpy.ndarray
        {returns}

    Raises
    ------
    TypeError
        For complex, object or string input, a ``kth`` that is not ints, a tuple
        ``axis``.
    ValueError
        If a ``kth`` is out of range.
    numpy.exceptions.AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([7, 1, 5, 3, 9, 2]), 2)
    {result}
    """


@dispatched
@_doc(_PARTITION_DOC, name="partition", title="Partially sorted copy: each ``kth`` element "
      "in its sorted place.", extra_param="", returns="Of ``x``'s shape and dtype.",
      result="array([1, 2, 3, 7, 5, 9])")
def partition(x: ArrayLike, kth: int | Sequence[int], axis: int | None = -1) -> Array:
    x, axis = _one_lane_axis(x, axis, "partition", dates=True)
    places = _places(kth, x.shape[axis], "partition")
    return _partitioned(x, axis, places, values=True)


@dispatched
@_doc(_PARTITION_DOC, name="argpartition", title="Positions that partition an array about "
      "each ``kth`` place.", extra_param="\n    index_dtype : dtype, optional\n        "
      "int32 or int64. Default int64.", returns="Positions along ``axis``, of ``x``'s shape.",
      result="array([1, 5, 3, 0, 2, 4])")
def argpartition(x: ArrayLike, kth: int | Sequence[int], axis: int | None = -1, *, index_dtype: DTypeLike = np.int64) -> Array:
    x, axis = _one_lane_axis(x, axis, "argpartition", dates=True)
    places = _places(kth, x.shape[axis], "argpartition")
    index_dtype = _index_dtype(index_dtype, x, axis, "argpartition")
    return _partitioned(x, axis, places, values=False, index_dtype=index_dtype)


@dispatched
def kthvalue(x: ArrayLike, k: int, axis: int | None = -1, *, keepdims: bool = False,
             index_dtype: DTypeLike = np.int64) -> ValuesIndices:
    """The ``k``-th smallest element along an axis and its position, as ``torch.kthvalue``.

    The element at place ``k - 1`` (``k`` counts from 1) of the stable ascending
    order (NaN last, -0.0 equal to +0.0): among equal elements the one of the
    lower index comes first. Found by radix select, without sorting.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float, datetime64 or timedelta64 dtype.
    k : int
        ``1 <= k <= n`` (n the length of the axis).
    axis : int or None, optional
        The axis; None takes the flattened array (0-d results). Default -1.
    keepdims : bool, optional
        Keep ``axis`` as a dimension of size one. Default False.
    index_dtype : dtype, optional
        int32 or int64. Default int64.

    Returns
    -------
    ValuesIndices
        ``(values, indices)``: the elements (``x``'s dtype) and their positions.

    Raises
    ------
    TypeError
        For complex, object or string input, a non-int ``k``, a tuple ``axis``.
    ValueError
        If ``k`` is out of range.
    numpy.exceptions.AxisError
        If ``axis`` is out of range.

    See Also
    --------
    top_k : The ``k`` smallest or largest at once.
    axisops.grad.kthvalue : Gradient of ``kthvalue``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.kthvalue(np.array([[3, 1, 2], [0, 5, 5]]), 2, axis=1)
    ValuesIndices(values=array([2, 5]), indices=array([2, 1]))
    """
    flat = axis is None
    ndim_in = np.ndim(x)
    x, axis = _one_lane_axis(x, axis, "kthvalue", dates=True)
    n = x.shape[axis]
    k = _count(k, "k", 1, n, "kthvalue")
    keepdims = _flag(keepdims, "keepdims", "kthvalue")
    index_dtype = _index_dtype(index_dtype, x, axis, "kthvalue")
    places = np.array([[k - 1]], np.int64)
    values, positions, _ = _select(x, axis, places, want_positions=True)
    if flat:
        shape = (1,) * ndim_in if keepdims else ()
    else:
        shape = x.shape[:axis] + ((1,) if keepdims else ()) + x.shape[axis + 1:]
    return ValuesIndices(values.reshape(shape), positions.astype(index_dtype).reshape(shape))


_MEDIAN_DOC = """{title}

    Equal to ``numpy.{name}``: values, dtype, tuple axes and ``keepdims``.{nan}
    The one or two middle elements of each lane are found by radix select (never
    a sort), then averaged as NumPy averages them.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype.
    axis : int, tuple of ints or None, optional
        The axes to reduce; None reduces all. Default None.
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one. Default False.

    Returns
    -------
    numpy.ndarray or scalar
        float64 for integer and bool input, else ``x``'s dtype.

    Raises
    ------
    TypeError
        For complex, dates, object or string input.
    numpy.exceptions.AxisError
        If an axis is out of range.
    ValueError
        If an axis is repeated.

    See Also
    --------
    {name_q} : Any quantile.
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([[4., np.nan, 1., 2.], [3., 5., 7., 9.]]), axis=1)
    {result}
    """


@dispatched
@_doc(_MEDIAN_DOC, name="median", name_q="quantile", title="Median along the given axes, as "
      "``numpy.median``.", nan=" A lane holding NaN gives NaN.", result="array([nan,  6.])")
def median(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> ArrayOrScalar:
    return _median("median", x, axis, keepdims, skip_nan=False)


@dispatched
@_doc(_MEDIAN_DOC, name="nanmedian", name_q="nanquantile", title="Median along the given "
      "axes, NaN skipped, as ``numpy.nanmedian``.", nan=" NaN is skipped; an all-NaN lane "
      "gives NaN with NumPy's ``RuntimeWarning``.", result="array([2., 6.])")
def nanmedian(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> ArrayOrScalar:
    return _median("nanmedian", x, axis, keepdims, skip_nan=True)


_QUANTILE_DOC = """{title}

    Equal to ``numpy.{name}``: values, dtypes, tuple axes, ``keepdims``, ``q`` a
    scalar or a 1-D array (a leading axis of the result), and all thirteen
    methods (``linear``, the other eight of Hyndman and Fan, ``lower``,
    ``higher``, ``midpoint``, ``nearest``).{nan} Only the one or two elements
    each quantile needs are found (radix select), never a sort of the lane; no
    limit on the size.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype.
    q : float or array_like of floats
        Quantiles in [0, 1], a scalar or 1-D.
    axis : int, tuple of ints or None, optional
        The axes to reduce; None reduces all. Default None.
    method : str, optional
        NumPy's method name. Default "linear".
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one. Default False.

    Returns
    -------
    numpy.ndarray or scalar
        NumPy's dtype: the input's for the methods that take one element, float
        otherwise (float64 for integers and for a ``q`` that is a NumPy array).

    Raises
    ------
    TypeError
        For complex, dates, object or string input.
    ValueError
        If ``q`` is outside [0, 1] or not 1-D, or ``method`` unknown; if an axis is
        repeated.
    numpy.exceptions.AxisError
        If an axis is out of range.

    See Also
    --------
    {name_m} : The median.
    axisops.grad.{name} : Gradient of ``{name}``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.{name}(np.array([1., 2., np.nan, 4.]), [0.25, 0.5])
    {result}
    """


@dispatched
@_doc(_QUANTILE_DOC, name="quantile", name_m="median", title="Quantiles along the given axes, "
      "as ``numpy.quantile``.", nan=" A lane holding NaN gives NaN.",
      result="array([nan, nan])")
def quantile(x: ArrayLike, q: float | ArrayLike, axis: Axis = None, *,
             method: str = "linear", keepdims: bool = False) -> ArrayOrScalar:
    return _quantile("quantile", x, q, axis, method, keepdims, skip_nan=False)


@dispatched
@_doc(_QUANTILE_DOC, name="nanquantile", name_m="nanmedian", title="Quantiles along the given "
      "axes, NaN skipped, as ``numpy.nanquantile``.", nan=" NaN is skipped; an all-NaN lane "
      "gives NaN with NumPy's ``RuntimeWarning``.", result="array([1.5, 2. ])")
def nanquantile(x: ArrayLike, q: float | ArrayLike, axis: Axis = None, *,
                method: str = "linear", keepdims: bool = False) -> ArrayOrScalar:
    return _quantile("nanquantile", x, q, axis, method, keepdims, skip_nan=True)


@dispatched
def rank(x: ArrayLike, axis: int | None = -1, *, method: str = "average") -> Array:
    """Ranks along an axis, as ``scipy.stats.rankdata``, NaN given NaN.

    Ranks count from 1 in the one order (-0.0 equal to +0.0); equal elements
    share a rank by ``method``: ``average`` (their mean place), ``min``, ``max``,
    ``dense`` (1, 2, ... over the distinct values), ``ordinal`` (their places in
    the stable order). A NaN gets NaN and is not counted, as bottleneck's
    ``nanrankdata``. One stable sort per lane of its keys packed with their
    positions (NumPy's SIMD sort of uint64 where it has one, else a radix sort or,
    for many short lanes, a sorting network).

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype.
    axis : int or None, optional
        The axis; None ranks the flattened array (a 1-D result). Default -1.
    method : {"average", "min", "max", "dense", "ordinal"}, optional
        How ties are ranked. Default "average".

    Returns
    -------
    numpy.ndarray
        float64 ranks of ``x``'s shape.

    Raises
    ------
    TypeError
        For complex, dates, object or string input, a tuple ``axis``.
    ValueError
        If ``method`` is unknown.
    numpy.exceptions.AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.rank(np.array([3., 1., np.nan, 3., 2.]))
    array([3.5, 1. , nan, 3.5, 2. ])
    """
    x, axis = _one_lane_axis(x, axis, "rank", dates=False)
    if method not in _RANK_METHODS:
        raise ValueError(f"rank: method must be one of {', '.join(_RANK_METHODS)}, "
                         f"got {method!r}")
    # from the pool from 64 KiB, as the scratch: a (4096, 16) float32 took 0.18 ms
    # or 0.055 by whether malloc's heap had just been trimmed
    out = _alloc.empty(x.shape, np.float64, _SCRATCH_POOLED)
    if out.size and _ranks_by_counting(x, axis, method):
        _run(_rank_kernels.pair_rank_kernel, x.size, *_lane_args(x, axis),
             _RANK_METHODS[method], out.reshape(-1))
    elif out.size and _ranks_by_counting_columns(x, axis, method):
        _run(_rank_kernels.pair_rank_columns, x.size, *_lane_args(x, axis),
             _RANK_METHODS[method], out.reshape(-1))
    elif out.size and _ranks_by_numpy(x, axis):
        n = x.shape[axis]
        _run(_rank_numpy_lanes, x.size, x.size // n, n, _lane_args(x, axis),
             _RANK_METHODS[method], out.reshape(-1))
    elif out.size and _short_lanes(x, axis):
        _network(x, axis, False, K.RANKS, _RANK_METHODS[method], ranks=out.reshape(-1))
    elif out.size:
        args = _lane_args(x, axis)
        _run(_rank_kernels.rank_kernel, x.size, *args, _RANK_METHODS[method], out.reshape(-1),
             _rank_scratch(x, axis))
    return out


# --------------------------------------------------------------------- arguments


def _check_dtype(dtype: np.dtype, op: str, dates: bool) -> None:
    if dtype in _NUMBERS or (dates and dtype.kind in "mM"):
        return
    if dtype.kind == "c":
        raise TypeError(f"{op}: unsupported dtype {dtype}: complex numbers have no order")
    allowed = "bool, int, uint, float16/32/64" + (", datetime64, timedelta64" if dates else "")
    raise TypeError(f"{op}: unsupported dtype {dtype} (expected {allowed})")


def _one_lane_axis(x, axis, op: str, dates: bool) -> tuple[np.ndarray, int]:
    """*x* as an array and its one axis (None: the flattened array, axis 0)."""
    x = _dtypes.as_array(x)
    _check_dtype(x.dtype, op, dates)
    if axis is None:
        return x.reshape(-1), 0
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be an int or None, got {axis!r}")
    return x, normalize_axis(axis, x.ndim, op)


def _flag(value, name: str, op: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be a bool, got {value!r}")
    return bool(value)


def _count(value, name: str, low: int, high: int, op: str) -> int:
    if not _dtypes.is_int(value):
        raise TypeError(f"{op}: {name} must be an int, got {value!r}")
    value = operator.index(value)
    if not low <= value <= high:
        raise ValueError(f"{op}: {name} must be in [{low}, {high}] for an axis of {high}, "
                         f"got {value}")
    return value


def _index_dtype(index_dtype, x: np.ndarray, axis: int, op: str) -> np.dtype:
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    _dtypes.check_index_fits(x.shape[axis], index_dtype, op)
    return index_dtype


def _places(kth, n: int, op: str) -> list[int]:
    """``kth`` as sorted distinct places in ``[0, n)``."""
    places = set()
    for k in kth_list(kth, op):
        if not -n <= k < n:
            raise ValueError(f"{op}: kth(={k}) out of bounds ({n})")
        places.add(k % n)
    return sorted(places)


# ------------------------------------------------------------------------- the kernels


def _bits(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def _lane_args(x: np.ndarray, axis: int, descending: bool | None = None) -> tuple:
    """The kernels' leading arguments for the lanes of *x* along *axis*: its base as
    bits, the ``ScanView`` geometry, the key's masks [and *descending*]. The
    geometry depends on the shape, strides and dtype only: it is planned once
    (a (1000,) median spent 11 of its 30 us building it)."""
    key = (*array_key(x), axis)
    plan = _LANE_PLANS.get(key)
    if plan is None:
        view = scan_view(x, axis)
        geometry = (view.offset, view.outer_shape, view.outer_strides, view.n, view.n_stride,
                    view.mid_shape, view.mid_strides, view.inner, view.inner_stride,
                    _masks(x.dtype))
        plan = _LANE_PLANS.put(key, (viewed(base_maker(x), _bits(x.dtype)), geometry))
    make_base, geometry = plan
    head = (make_base(x), *geometry)
    return head if descending is None else (*head, descending)


#: ``_lane_args``' plans: (make the base as bits, the geometry and masks).
_LANE_PLANS = PlanCache()


@functools.cache
def _masks(dtype: np.dtype) -> tuple:
    return K.key_masks(dtype)


def _run(kern, size: int, *args) -> None:
    _jit.run(kern, size * _WORK_PER_ELEMENT, *args)


def _sorted(x: np.ndarray, axis: int, descending: bool, *, values: bool,
            index_dtype=_INT64) -> np.ndarray:
    out = np.empty(x.shape, x.dtype if values else index_dtype)
    if out.size == 0:
        return out
    if values and _numpy_sorts(x, axis):
        return _sorted_by_numpy(x, out, axis, descending)
    if not values and _packed_argsorts(x, axis):
        return _argsort_packed(x, out, axis, descending)
    if not values and _numpy_argsorts(x, axis):
        return _argsorted_by_numpy(x, out, axis, descending)
    flat = out.reshape(-1)
    unused_values = np.empty(0, _bits(x.dtype))
    unused_positions = np.empty(0, np.int64)
    if _short_lanes(x, axis):
        _network(x, axis, descending, K.SORTED, x.shape[axis],
                 values=flat.view(_bits(x.dtype)) if values else unused_values,
                 positions=unused_positions if values else flat)
        return out
    args = _lane_args(x, axis, descending)
    if values:
        _run(K.sort_kernel, x.size, *args, True, flat.view(_bits(x.dtype)), False,
             unused_positions, _NO_SCRATCH)
    else:
        _run(K.sort_kernel, x.size, *args, False, unused_values, True, flat,
             _packing_scratch(x, axis))
    return out


def _simd_sorted_dtypes() -> frozenset:
    """The dtypes NumPy sorts with x86-simd-sort on this CPU (AVX2 or AVX-512
    quicksorts of 32- and 64-bit keys; 16-bit ones need AVX-512 ICL): along a
    contiguous last axis they sort rows of 16 and more 1.3-6x faster than our
    radix sorts and networks (1 thread, AMD EPYC Zen 5: rows of 128 float32
    0.66 ms per 1M elements where the network took 2.1), the one case where a
    peer's kernel is the better engine."""
    wide = {"int32", "uint32", "int64", "uint64", "float32", "float64"}
    names = wide if _cpu_has("AVX2") or _cpu_has("AVX512_SKX") else set()
    if _cpu_has("AVX512_ICL") or _cpu_has("AVX512_SPR"):
        names |= {"int16", "uint16"}
    return frozenset(np.dtype(d) for d in names)


def _cpu_has(feature: str) -> bool:
    """Whether NumPy found *feature* on this CPU (its names: AVX2, AVX512_SKX...)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as cpu
    except ImportError:  # pragma: no cover - NumPy < 2
        return False
    return bool(cpu.get(feature))


_SIMD_SORTED = _simd_sorted_dtypes()
#: Rows shorter than this are sorted 16 at a time by our networks (rows of 4:
#: 1.3-1.8x NumPy's per-row sorts).
NUMPY_SORT_MIN = 16
_fast_order.take_sorts(_SIMD_SORTED, NUMPY_SORT_MIN)


def _numpy_sorts(x: np.ndarray, axis: int) -> bool:
    """Whether :func:`sort` of *x* along *axis* is NumPy's sort of rows, finished:
    lanes of 16 and more of the dtypes NumPy sorts with SIMD, along any axis (along
    another than the last, copied into rows 16 neighbours at a time and back).
    1 thread, AMD EPYC Zen 5, against NumPy's own sort along the axis: (1024,
    1024) float32 along axis 0 1.2x where our radix sort was 0.7x, lanes of 128
    and 256 along axis 0 2.6-7.6x where our networks of 16 lanes were 0.8-5.9x
    (a network of 16 lanes of 64-bit keys also ran 4-6x slower on arrays of 8 MiB
    than of 4, not understood)."""
    return x.shape[axis] >= NUMPY_SORT_MIN and x.dtype in _SIMD_SORTED




def _sorted_by_numpy(x: np.ndarray, out: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """:func:`sort` of *x* along *axis* by NumPy's sort of rows, finished into the one
    order (``kernels.rows.numpy_sorted_rows``: descending lanes reversed before
    their NaN, signed zeros and NaN payloads put back in lane order where NumPy's
    sort lost them); rows split between threads as the kernels' lanes are. Lanes
    along another axis are copied into rows a chunk at a time and back."""
    n = x.shape[axis]
    finish = descending or x.dtype.kind == "f"
    if axis == x.ndim - 1 and x.nbytes <= _SORT_CHUNK_BYTES and x.flags.c_contiguous:
        rows = out.reshape(-1, n)  # one chunk, here
        np.copyto(out, x)
        rows.sort(axis=-1)
        if finish:
            bits = _bits(x.dtype)
            KR.rows_finisher(x.dtype.str)(rows.view(bits), x.reshape(-1, n).view(bits),
                                         descending)
        return out
    args = _lane_args(x, axis, descending)
    if axis != x.ndim - 1:
        view = scan_view(x, axis)
        flat = out.reshape(-1).view(_bits(x.dtype))
        _run(_sort_lanes, x.size, x.size // n, n, x.dtype, args, finish,
             (flat, view.outer_shape, n, view.mid_shape, view.inner, False))
        return out
    rows = out.reshape(-1, n)
    try:  # copied in by the chunk, while in cache
        source = np.reshape(x, (-1, n), copy=False)
    except ValueError:  # not a view of rows
        out[...] = x
        source = rows
    _run(_sort_rows, x.size, source, rows, args if finish else ())
    return out


def _sort_lanes(part: int, parts: int, lanes: int, n: int, dtype: np.dtype, args: tuple,
                finish: bool, target: tuple) -> None:
    """Share *part* of *parts* of :func:`_sorted_by_numpy` along an axis that is not
    the last, a chunk of lanes at a time: copied into rows, sorted by NumPy,
    finished, written to ``target`` (``rows_to_lanes``' output and geometry)."""
    most, chunks = _chunks(lanes, part, parts, n * dtype.itemsize)
    rows = np.empty((most, n), dtype)
    bits = rows.view(_bits(dtype))
    for first, last in chunks:
        KR.lanes_to_rows(first, last, bits, *args, KR.ROW_BITS)
        rows[:last - first].sort(axis=-1)
        if finish:
            KR.numpy_sorted_rows(first, last, bits, *args)
        KR.rows_to_lanes(first, last, bits, *target)


#: Rows are copied, sorted and finished this many bytes at a time (in cache).
_SORT_CHUNK_BYTES = 1 << 18


def _chunks(count: int, part: int, parts: int, row_bytes: int,
            chunk_bytes: int = _SORT_CHUNK_BYTES) -> tuple[int, list[tuple[int, int]]]:
    """Share *part* of *parts* of *count* rows (or lanes) of *row_bytes* each, in
    chunks of about *chunk_bytes*: ``(most, [(first, last), ...])``, *most* the
    rows of the largest chunk (the scratch to allocate)."""
    lo, hi = _jit.part_range(count, part, parts)
    step = max(1, chunk_bytes // row_bytes)
    return min(step, hi - lo), [(first, min(hi, first + step)) for first in range(lo, hi, step)]


def _sort_rows(part: int, parts: int, source: np.ndarray, rows: np.ndarray,
               args: tuple) -> None:
    """Share *part* of *parts* of :func:`_sorted_by_numpy`, a chunk of rows at a time:
    copied from *source* into *rows*, NumPy's sort of them (it releases the GIL),
    then the finish (``args``: the kernel's, none when nothing is to be done)."""
    bits = rows.view(_bits(rows.dtype))
    for first, last in _chunks(rows.shape[0], part, parts, rows.shape[1] * rows.itemsize)[1]:
        chunk = rows[first:last]
        if source is not rows:
            chunk[...] = source[first:last]
        chunk.sort(axis=-1)
        if args:
            KR.numpy_sorted_rows(first, last, bits[first:last], *args)


def _numpy_argsorts(x: np.ndarray, axis: int) -> bool:
    """Whether :func:`argsort` of 64-bit keys along *axis* is NumPy's sort of the
    keys packed with their positions (:func:`_argsorted_by_numpy`): where NumPy
    sorts uint64 with SIMD, lanes of ``NUMPY_ARGSORT_MIN`` and more, or of 16 and
    more in arrays of ``NUMPY_ARGSORT_SIZE`` elements and more (below, the chunks'
    few calls cost more than they save: (20, 50) along axis 0 25 us against 13 by
    the network). Keys of up to 32 bits go packed whole (:func:`_packed_argsorts`)."""
    n = x.shape[axis]
    if not (_RANK_NUMPY and x.dtype in _ARGSORTED_64 and n >= NUMPY_SORT_MIN):
        return False
    return n >= NUMPY_ARGSORT_MIN or x.size >= NUMPY_ARGSORT_SIZE


NUMPY_ARGSORT_MIN = 256
NUMPY_ARGSORT_SIZE = 8192
_ARGSORTED_64 = frozenset(np.dtype(d) for d in ("int64", "uint64", "float64"))


def _argsorted_by_numpy(x: np.ndarray, out: np.ndarray, axis: int,
                        descending: bool) -> np.ndarray:
    """:func:`argsort` of 64-bit keys by NumPy's sort of uint64: each key (less its
    lane's least, for lanes of ``ROWS_LEAST_MIN`` and more) packed above its
    position without the low bits that do not fit, runs equal in the bits kept
    sorted again on their whole keys (``kernels.rank``: :func:`rank`'s packing,
    ``finish_argsort_lanes``), a chunk of lanes at a time, split between threads.
    1 thread, AMD EPYC Zen 5, against ``np.argsort`` (not stable): 1M float64
    1.8x, (1024, 1024) float64 and int64 along the last axis 2.5x, rows of 256
    2.6-3x, where NumPy's AVX-512 argsort and a pass that made it stable took
    0.5-0.8x; rows of 16-128 1.4-1.8x faster than our networks and merge sorts."""
    n = x.shape[axis]
    target = ()
    if axis != x.ndim - 1:  # else the positions straight into the rows of ``out``
        view = scan_view(x, axis)
        target = (out.reshape(-1), view.outer_shape, n, view.mid_shape, view.inner, False)
    _run(_rank_numpy_lanes, x.size, x.size // n, n, _lane_args(x, axis), ARGSORTED,
         out.reshape(-1), descending, target)
    return out


def _packed_argsorts(x: np.ndarray, axis: int) -> bool:
    """Whether :func:`argsort` of *x* packs each key of up to 32 bits with its
    position into a uint64 and has NumPy sort those (SIMD where it sorts uint64):
    a stable argsort at the speed of NumPy's sort of 64-bit integers, along any
    axis (1 thread, AMD EPYC Zen 5, float32: rows of 1024 2.2x NumPy's argsort,
    where our radix sort was 1.1x; (256, 64, 64) along axis 0 4.6x, was 0.8x;
    lanes of 16 and 32 1.3-1.7x, where our networks were 0.7x)."""
    n = x.shape[axis]
    return _PACKED_ARGSORT and x.itemsize <= 4 and NUMPY_SORT_MIN <= n < 1 << 32


_PACKED_ARGSORT = np.dtype(np.uint64) in _SIMD_SORTED


def _argsort_packed(x: np.ndarray, out: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """:func:`argsort` by NumPy's sort of packed keys and positions
    (``kernels.rows.lanes_to_rows``), a chunk of lanes at a time, rows split between
    threads."""
    n = x.shape[axis]
    if axis == x.ndim - 1 and 8 * x.size <= _SORT_CHUNK_BYTES and x.flags.c_contiguous:
        packed = np.empty((x.size // n, n), np.uint64)  # one chunk, here
        KR.rows_packer(x.dtype.str)(x.reshape(-1, n).view(_bits(x.dtype)), packed, descending)
        packed.sort(axis=-1)
        np.bitwise_and(packed, _LOW_32, out=packed)
        out.reshape(-1, n)[...] = packed
        return out
    view = scan_view(x, axis)
    target = (out.reshape(-1), view.outer_shape, n, view.mid_shape, view.inner, True)
    _run(_argsort_packed_lanes, x.size, x.size // n, n, _lane_args(x, axis, descending),
         target, axis == x.ndim - 1)
    return out


def _argsort_packed_lanes(part: int, parts: int, lanes: int, n: int, args: tuple, target: tuple,
                          last: bool) -> None:
    """Share *part* of *parts* of :func:`_argsort_packed`: each chunk of lanes packed,
    sorted by NumPy, its positions written out (rows of the output along the last
    axis, else through ``rows_to_lanes``)."""
    most, chunks = _chunks(lanes, part, parts, 8 * n)
    packed = np.empty((most, n), np.uint64)
    rows = target[0].reshape(-1, n)
    for first, last_lane in chunks:
        chunk = packed[:last_lane - first]
        KR.lanes_to_rows(first, last_lane, chunk, *args, KR.ROW_PACKED)
        chunk.sort(axis=-1)
        if last:
            np.bitwise_and(chunk, _LOW_32, out=chunk)
            rows[first:last_lane] = chunk
        else:
            KR.rows_to_lanes(first, last_lane, chunk, *target)


_LOW_32 = np.uint64(0xFFFFFFFF)


def _top_k_by_numpy(x: np.ndarray, axis: int, k: int) -> bool:
    """Whether :func:`top_k` of *x* selects by NumPy's partition: more than
    ``SMALL_K`` and more than a ``FILTER_RATIO`` block share of the lane (fewer
    are found while the lane is read, or by its blocks' minima), where NumPy
    sorts uint64 with SIMD; keys of up to 32 bits packed with their positions
    (:func:`_top_k_packed_lanes`), wider ones through their k-th key
    (:func:`_top_k_keyed_lanes`; short lanes of those stay with the networks). 1 thread,
    AMD EPYC Zen 5, against torch.topk: k=256 of rows of 1024 float32 1.35x ->
    5.6x, int32 with ties 0.76x -> 5.0x; k=100000 of 1M float32 2.5x -> 7.7x;
    float64 rows 1.0x -> 1.4x."""
    n = x.shape[axis]
    return (_PACKED_ARGSORT and NUMPY_SORT_MIN <= n < 1 << 32 and k > K.SMALL_K
            and k * K.FILTER_RATIO * K.FILTER_BLOCK > n
            and (x.itemsize <= 4 or not _short_lanes(x, axis)))


def _top_k_positions(x: np.ndarray, axis: int, k: int, largest: bool, sorted_: bool,
                     indices: np.ndarray) -> None:
    """The positions of :func:`top_k` into *indices*, a chunk of lanes at a time
    split between threads: keys of up to 32 bits packed with their positions
    (:func:`_top_k_packed_lanes`), wider ones through their k-th key
    (:func:`_top_k_keyed_lanes`)."""
    n = x.shape[axis]
    packs = x.itemsize <= 4
    view = scan_view(x, axis)
    target = (indices.reshape(-1), view.outer_shape, k, view.mid_shape, view.inner, packs)
    _run(_top_k_packed_lanes if packs else _top_k_keyed_lanes, x.size, x.size // n, n, k,
         _lane_args(x, axis, largest), target, sorted_)


def _top_k_keyed_lanes(part: int, parts: int, lanes: int, n: int, k: int, args: tuple,
                       target: tuple, sorted_: bool) -> None:
    """Share *part* of *parts* of :func:`_top_k_positions` for keys too wide to pack:
    each lane's order keys, NumPy's partition finds the k-th, the lane's first k in
    the stable order are taken in lane order (``kernels.rows.first_k_by_bound``:
    those below it and the first of those equal to it), then sorted by NumPy's
    argsort of their keys made stable (``numpy_argsorted_rows``)."""
    most, chunks = _chunks(lanes, part, parts, 8 * n)
    keys = np.empty((most, n), np.uint64)
    spare = np.empty_like(keys)
    chosen = np.empty((most, k + 1), np.int64)
    for first, last in chunks:
        rows, bounds, picked = keys[:last - first], spare[:last - first], chosen[:last - first]
        KR.lanes_to_rows(first, last, rows, *args, KR.ROW_KEYS)
        np.copyto(bounds, rows)
        bounds.partition(k - 1, axis=-1)  # k = n too: the greatest key is the bound
        KR.first_k_by_bound(rows, np.ascontiguousarray(bounds[:, k - 1]), k, picked)
        picked = picked[:, :k]
        if sorted_:
            picked_keys = np.take_along_axis(rows, picked, axis=-1)
            order = np.argsort(picked_keys, axis=-1)
            KR.numpy_argsorted_rows(order, picked_keys, _NO_ROWS, _KEY_MASKS, False)
            picked = np.take_along_axis(picked, order, axis=-1)
        KR.rows_to_lanes(first, last, picked, *target)


def _top_k_packed_lanes(part: int, parts: int, lanes: int, n: int, k: int, args: tuple,
                        target: tuple, sorted_: bool) -> None:
    """Share *part* of *parts* of :func:`_top_k_positions` for keys of up to 32 bits:
    each lane's keys (descending ones for the largest) packed above their
    positions, NumPy's partition at the k-th (packed keys are distinct: the k least
    are exactly the stable order's first k), the k sorted (or their positions, for
    lane order)."""
    most, chunks = _chunks(lanes, part, parts, 8 * n)
    packed = np.empty((most, n), np.uint64)
    for first, last in chunks:
        chunk = packed[:last - first]
        KR.lanes_to_rows(first, last, chunk, *args, KR.ROW_PACKED)
        if k < n:
            chunk.partition(k - 1, axis=-1)
        best = chunk[:, :k]
        if not sorted_:
            np.bitwise_and(best, _LOW_32, out=best)  # by position: lane order
        best.sort(axis=-1)
        KR.rows_to_lanes(first, last, best, *target)


_NO_ROWS = np.empty((0, 1), np.uint64)
#: Order keys are their own keys (uint64's masks).
_KEY_MASKS = K.key_masks(np.dtype(np.uint64))


def _partitioned(x: np.ndarray, axis: int, places: list[int], *, values: bool,
                 index_dtype=_INT64) -> np.ndarray:
    if len(places) != 1:  # a sorted lane is partitioned about every place
        return _sorted(x, axis, False, values=values, index_dtype=index_dtype)
    out = np.empty(x.shape, x.dtype if values else index_dtype)
    if out.size == 0:
        return out
    args = _lane_args(x, axis)
    flat = out.reshape(-1)
    if values:
        _run(K.partition_kernel, x.size, *args, places[0], True, flat.view(_bits(x.dtype)),
             False, np.empty(0, np.int64))
    else:
        _run(K.partition_kernel, x.size, *args, places[0], False,
             np.empty(0, _bits(x.dtype)), True, flat)
    return out


def _select(x: np.ndarray, axis: int, places: np.ndarray, want_positions: bool = False):
    """``(values, positions, nans)`` of every lane of *x* along *axis* (lanes in C
    order of the other axes): the elements at *places* ((1 or lanes, m) int64) of
    the stable ascending order, their positions, and each lane's NaN count."""
    args = _lane_args(x, axis)
    lanes = x.size // x.shape[axis] if x.shape[axis] else 0
    m = places.shape[1]
    values = np.empty((lanes, m), _bits(x.dtype))
    positions = np.empty((lanes, m), np.int64)
    nans = np.empty(lanes, np.int64)
    if lanes and m and not want_positions and _short_lanes(x, axis, K.SELECT_NETWORK_MAX):
        # the values alone: a network of the comparators that reach the places, on keys
        places = np.ascontiguousarray(places, np.int64)
        size = 1 << (x.shape[axis] - 1).bit_length()
        _run(select_network_kernel, x.size, *args,
             _selection_pairs(size, int(places.min()), int(places.max())), places,
             values.reshape(-1), nans)
    elif lanes and m and _short_lanes(x, axis, K.SELECT_NETWORK_MAX):
        _network(x, axis, False, K.PLACES, 0, places=np.ascontiguousarray(places, np.int64),
                 values=values.reshape(-1), positions=positions.reshape(-1), nans=nans)
    elif lanes and m:
        _run(K.select_kernel, x.size, *args, np.ascontiguousarray(places, np.int64),
             want_positions, values, positions, nans)
    return values.view(x.dtype), positions, nans


_NO_SCRATCH = np.empty((0, 0), np.uint64)


def _packing_scratch(x: np.ndarray, axis: int) -> np.ndarray:
    """Scratch for the argsort of long lanes of up to 32-bit keys: a row of 2n uint64
    per thread (``kernels.order._packing_scratch``), allocated here where NumPy puts
    a large block on huge pages."""
    n = x.shape[axis]
    if x.itemsize > 4 or n <= K.MERGE_MAX:
        return _NO_SCRATCH
    return np.empty((_jit.thread_limit(), 2 * n), np.uint64)


def _ranks_by_counting(x: np.ndarray, axis: int, method: str) -> bool:
    """Whether :func:`rank` counts, for each element, the keys below and up to it
    (``kernels.rank.pair_rank_kernel``): rows of a C-contiguous array up to
    ``PAIRS_MAX`` long (``DENSE_PAIRS_MAX`` for dense ranks; half that for 64-bit
    keys), any method (no sort: NumPy's sort of rows of 16 costs about 30 ns a
    row). 1 thread, AMD EPYC Zen 5, against bottleneck's nanrankdata: (65536, 16)
    float32 2.6-2.8x, float64 3-4x, where NumPy's sort of the packed rows gave
    1.5-1.8x; rows of 32 float32 2.4x (was 1.5x), float64 1.9x (1.3x); rows of 64
    lose to the sort. The limits: ``kernels.rank``."""
    n = x.shape[axis]
    longest = (_rank_kernels.DENSE_PAIRS_MAX if method == "dense"
               else _rank_kernels.PAIRS_MAX) // (2 if x.itemsize > 4 else 1)
    return n <= longest and axis == x.ndim - 1 and x.flags.c_contiguous


def _ranks_by_counting_columns(x: np.ndarray, axis: int, method: str) -> bool:
    """Whether :func:`rank` counts as :func:`_ranks_by_counting` does, ``LANES``
    neighbouring lanes at a time (``kernels.rank.pair_rank_columns``): lanes up to
    ``COLUMN_PAIRS_MAX`` long (``DENSE_COLUMN_PAIRS_MAX`` for dense ranks) along an
    axis that is not the last, whose neighbours are adjacent."""
    n = x.shape[axis]
    longest = (_rank_kernels.DENSE_COLUMN_PAIRS_MAX if method == "dense"
               else _rank_kernels.COLUMN_PAIRS_MAX)
    if n > longest or axis == x.ndim - 1:
        return False
    args = _lane_args(x, axis)
    return args[5] != 1 and args[9] == 1 and args[8] >= 2


def _ranks_by_numpy(x: np.ndarray, axis: int) -> bool:
    """Whether :func:`rank` has NumPy sort its lanes' keys packed with their
    positions (``kernels.rank.pack_rank_lanes``): where NumPy sorts uint64 with
    SIMD (x86-simd-sort), lanes of ``RANK_NUMPY_MIN`` and more in arrays of
    ``RANK_NUMPY_MIN_SIZE`` elements and more (below, its few calls and scratch
    cost more than they save: (10, 20) 16 us against 11 by the network)."""
    return _RANK_NUMPY and x.shape[axis] >= RANK_NUMPY_MIN and x.size >= RANK_NUMPY_MIN_SIZE


_RANK_NUMPY = np.dtype(np.uint64) in _SIMD_SORTED
#: :func:`_rank_numpy_lanes`' method for an argsort.
ARGSORTED = -1
RANK_NUMPY_MIN = 16
RANK_NUMPY_MIN_SIZE = 1000
#: Lanes are packed, sorted and ranked this many bytes of packed values at a time.
_RANK_CHUNK_BYTES = 1 << 20


def _rank_numpy_lanes(part: int, parts: int, lanes: int, n: int, args: tuple, method: int,
                      flat: np.ndarray, descending: bool = False, target: tuple = ()) -> None:
    """Share *part* of *parts* of :func:`rank` by NumPy's sort: a chunk of lanes
    packed, sorted in place, ranked into *flat*; with *method* ``ARGSORTED``, the
    argsort of 64-bit keys (*descending* or not): the positions written to *flat*,
    rows of the output, or through the chunk to ``rows_to_lanes``' *target*."""
    base, n_stride, inner, inner_stride = args[0], args[5], args[8], args[9]
    blocked = n_stride != 1 and inner_stride == 1 and inner >= 2 and n <= K.BLOCK_MAX
    # lanes read in blocks of LANES neighbours: a chunk of whole blocks (each block
    # is read from the input once; (65536, 16) float64 along axis 0 read it 8 times
    # over in chunks of 2 lanes)
    most, chunks = _chunks(lanes, part, parts, 8 * n,
                           max(_RANK_CHUNK_BYTES, K.LANES * 8 * n) if blocked
                           else _RANK_CHUNK_BYTES)
    # the scratch from the pool of buffers: fresh pages cost a fault each (a (1M,)
    # float32 spent 6 of its 14 ms mapping its scratch, a (4096, 16) float32 along
    # axis 0 0.33 of 0.66 ms)
    packed = _scratch((most, n), np.uint64)
    meta = np.empty((packed.shape[0], 3), np.uint64)
    keys = _scratch((n,), base.dtype)
    cache = _scratch((K.LANES, n + K.LANES if blocked else 0), base.dtype)  # and its tile
    work = _scratch((n,), np.uint64)
    counts = _scratch((8, 1 << K.RADIX), np.int64)
    ranks = _scratch((n * K.LANES if inner >= 2 and n <= K.BLOCK_MAX else 0,), np.float64)
    # short rows of a C-contiguous input: packed by one loop over a chunk with the
    # positions read from ``rows`` (long lanes are packed lane by lane: a pattern
    # of 1M positions cost 3.5 ms to make and read for a (1M,) float32)
    contiguous_rows = (n < _rank_kernels.ROWS_LEAST_MIN and n_stride == 1 and inner == 1
                       and _is_rows(args))
    rows = _row_positions(n, packed.shape[0]) if contiguous_rows else _NO_POSITIONS
    for first, last in chunks:
        chunk = packed[:last - first]
        _rank_kernels.pack_rank_lanes(first, last, chunk, meta, keys, cache, rows, *args,
                                      descending, _NO_RANKS if method == ARGSORTED else flat)
        chunk.sort(axis=-1)
        if method == ARGSORTED:
            positions = chunk.view(np.int64) if target else flat.reshape(-1, n)[first:last]
            _rank_kernels.finish_argsort_lanes(first, last, chunk, meta, keys, counts,
                                               positions, *args, descending)
            if target:
                KR.rows_to_lanes(first, last, positions, *target)
            continue
        _rank_kernels.finish_rank_lanes(first, last, chunk, meta, keys, work, counts, ranks,
                                        rows, *args, method, flat)


_NO_POSITIONS = np.empty(0, np.uint64)
#: Scratch of this many bytes and more comes from the pool (``_alloc``).
_SCRATCH_POOLED = 1 << 16


@functools.lru_cache(maxsize=16)
def _row_positions(n: int, rows: int) -> np.ndarray:
    """0, 1, ..., n - 1 repeated *rows* times (read-only, made once: a chunk's 1 MiB
    made afresh cost a call on rows of 64 0.1 ms)."""
    positions = np.tile(np.arange(n, dtype=np.uint64), rows)
    positions.flags.writeable = False
    return positions


def _scratch(shape: tuple, dtype) -> np.ndarray:
    return _alloc.empty(shape, dtype, _SCRATCH_POOLED)


def _is_rows(args: tuple) -> bool:
    """Whether the lanes of :func:`_lane_args`'s *args* lie one after another (lane
    ``t`` at ``offset + t * n``): C-contiguous rows."""
    outer_shape, outer_strides, n, n_stride, mid_shape = args[2:7]
    if n_stride != 1 or mid_shape.size:
        return False
    expected = n
    for d in range(outer_shape.size - 1, -1, -1):
        if outer_shape[d] != 1 and outer_strides[d] != expected:
            return False
        expected *= outer_shape[d]
    return True


def _rank_scratch(x: np.ndarray, axis: int) -> np.ndarray:
    """Scratch for :func:`rank`'s long lanes: a row of 2n uint64 per thread (values
    packed with positions, any width: ``kernels.rank``), allocated here for the
    huge pages as in :func:`_packing_scratch`."""
    n = x.shape[axis]
    if n <= K.MERGE_MAX:
        return _NO_SCRATCH
    return _scratch((_jit.thread_limit(), 2 * n), np.uint64)


def _short_lanes(x: np.ndarray, axis: int, longest: int = K.NETWORK_MAX) -> bool:
    """Whether *x*'s lanes along *axis* are sorted ``LANES`` at a time by a network
    (:func:`axisops.kernels.order.network_kernel`): short (up to *longest*), and
    enough of them."""
    n = x.shape[axis]
    return 2 <= n <= longest and x.size // n >= K.LANES // 2


@functools.cache
def _pairs(size: int) -> np.ndarray:
    return K.network_pairs(size)


@functools.cache
def _selection_pairs(size: int, low: int, high: int) -> np.ndarray:
    return selection_pairs(size, low, high)


_NO_PLACES = np.zeros((1, 1), np.int64)
_NO_COUNTS = np.empty(0, np.int64)
_NO_RANKS = np.empty(0, np.float64)


def _network(x: np.ndarray, axis: int, descending: bool, mode: int, k: int, *, values=None,
             positions=None, places=_NO_PLACES, nans=_NO_COUNTS, ranks=_NO_RANKS) -> None:
    n = x.shape[axis]
    size = 1 << (n - 1).bit_length()
    if values is None:
        values = np.empty(0, _bits(x.dtype))
    if positions is None:
        positions = np.empty(0, np.int64)
    _run(K.network_kernel, x.size, *_lane_args(x, axis, descending), _pairs(size), mode, k,
         places, values, positions, nans, ranks)


def _nan_counts(x: np.ndarray, axis: int) -> np.ndarray:
    args = _lane_args(x, axis)
    lanes = x.size // x.shape[axis]
    nans = np.empty(lanes, np.int64)
    _jit.run(K.count_nan_kernel, x.size, *args, nans)
    return nans


# ------------------------------------------------------------ medians and quantiles


def _reduced_lanes(x: np.ndarray, axis, op: str) -> tuple[np.ndarray, int, tuple, tuple]:
    """``(y, lane_axis, kept_shape, keepdims_shape)``: *x* with the reduced axes as
    one axis of *y* (no copy for one axis), the shape of the rest and the result's
    shape with ``keepdims``."""
    axes = normalize_axes(axis, x.ndim, op)
    keep_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
    if len(axes) == 1:
        a = axes[0]
        return x, a, x.shape[:a] + x.shape[a + 1:], keep_shape
    kept = [d for d in range(x.ndim) if d not in axes]
    y = np.transpose(x, kept + list(axes))
    kept_shape = tuple(x.shape[d] for d in kept)
    y = y.reshape(kept_shape + (-1,))
    return y, y.ndim - 1, kept_shape, keep_shape


def _finish(result: np.ndarray, kept_shape: tuple, keep_shape: tuple, q_shape: tuple,
            keepdims: bool):
    """The result (q leading) in its final shape; a NumPy scalar where NumPy gives one."""
    result = result.reshape(q_shape + (keep_shape if keepdims else kept_shape))
    return result[()] if result.ndim == 0 and not keepdims else result


def _median(op: str, x, axis, keepdims, skip_nan: bool):
    fast = _fast_order.median(x, axis, keepdims, skip_nan)
    if fast is not None:
        return fast
    x = _dtypes.as_array(x)
    _check_dtype(x.dtype, op, dates=False)
    keepdims = _flag(keepdims, "keepdims", op)
    if x.size == 0:
        return (np.nanmedian if skip_nan else np.median)(x, axis=axis, keepdims=keepdims)
    y, a, kept_shape, keep_shape = _reduced_lanes(x, axis, op)
    skip_nan = skip_nan and x.dtype.kind == "f"
    n = y.shape[a]
    counts = n - _nan_counts(y, a) if skip_nan else np.array([n])
    places, _ = quantile_places(counts, None, "linear", skip_nan)
    values, _, nans = _select(y, a, places)
    result = quantile_from_selected(values, counts, nans, None, "linear", x.dtype,
                                    skip_nan=skip_nan, stacklevel=3)
    return _finish(result, kept_shape, keep_shape, (), keepdims)


def _quantile(op: str, x, q, axis, method, keepdims, skip_nan: bool):
    fast = _fast_order.quantile(x, q, axis, method, keepdims, skip_nan)
    if fast is not None:
        return fast
    x = _dtypes.as_array(x)
    weak_q = type(q) in (int, float)
    q_given = q
    q = check_quantile(op, x.dtype, q, method)
    keepdims = _flag(keepdims, "keepdims", op)
    check_interpolable(op, x.dtype, method)
    if x.size == 0 or q.size == 0 or q.dtype.kind != "f":
        # NumPy's own answer: an empty result, or an integer q (0 or 1), with which NumPy
        # takes the element itself (for 'linear') and computes in integers
        fn = np.nanquantile if skip_nan else np.quantile
        return fn(x, q_given, axis=axis, method=method, keepdims=keepdims)
    y, a, kept_shape, keep_shape = _reduced_lanes(x, axis, op)
    skip_nan = skip_nan and x.dtype.kind == "f"
    n = y.shape[a]
    qf = q.reshape(-1)
    counts = n - _nan_counts(y, a) if skip_nan else np.array([n])
    places, gamma = quantile_places(counts, qf, method, skip_nan)
    values, _, nans = _select(y, a, places)
    result = quantile_from_selected(values, counts, nans, qf, method, x.dtype,
                                    skip_nan=skip_nan, weak_q=weak_q,
                                    whole=q.ndim == 0 and not kept_shape, gamma=gamma,
                                    stacklevel=3)
    return _finish(result, kept_shape, keep_shape, q.shape, keepdims)


def check_quantile(op: str, dtype: np.dtype, q, method: str) -> np.ndarray:
    """``q`` as an array, after the checks of a median's or quantile's arguments in
    the NumPy path's order: the dtype, ``q`` (a scalar or 1-D, in [0, 1]), the
    method. Every array type's path calls it (and :func:`check_interpolable`)."""
    _check_dtype(dtype, op, dates=False)
    q = np.asanyarray(q)
    if q.ndim > 1:
        raise ValueError(f"{op}: q must be a scalar or 1-D, got shape {q.shape}")
    if q.size and not (np.all(q >= 0) and np.all(q <= 1)):
        raise ValueError(f"{op}: quantiles must be in the range [0, 1]")
    if method not in _METHODS:
        raise ValueError(f"{op}: {method!r} is not a valid method; use one of "
                         f"{', '.join(_METHODS)}")
    return q


def check_interpolable(op: str, dtype: np.dtype, method: str) -> None:
    """The ``TypeError`` of a quantile of bool input by a method that interpolates."""
    if dtype == np.bool_ and method not in _DISCRETE:
        raise TypeError(f"{op}: bool input cannot be interpolated (method {method!r}); cast it "
                        "to an integer or float dtype, or use a method that takes one element "
                        "(inverted_cdf, closest_observation, lower, higher, nearest)")


def _lower_upper(method: str, counts: np.ndarray, qf: np.ndarray) -> tuple[Any, Any, Any]:
    """``(lower, upper, gamma)``, (lanes or 1, Q): the places below and above each
    quantile's virtual index in lanes of *counts* elements (0, an all-NaN lane, read
    as 1), the same place twice for the methods that take one element, and NumPy's
    weight (None for those)."""
    c = np.maximum(counts, 1)[:, None]
    index, gamma = _virtual_index(method, c, qf[None, :])
    if method in _DISCRETE:
        lower = upper = np.clip(index, 0, c - 1)
    else:
        lower, upper = _neighbours(index, c)
    return lower, upper, gamma


def quantile_places(counts: np.ndarray, qf: np.ndarray | None, method: str,
                    skip_nan: bool) -> tuple[np.ndarray, Any]:
    """``(places, gamma)``: which places of each lane's stable order a median
    (*qf* None) or the quantiles *qf* (1-D float) read, as (lanes or 1, m) ints,
    and NumPy's interpolation weights (None where nothing is interpolated; give
    them to :func:`quantile_from_selected`).

    *counts*: the elements that count in each lane, (lanes,) for the ``nan``
    twins of float input (*skip_nan* True: ``n`` less the lane's NaN), else one
    value, ``n``, shape (1,). The median's places are the middle one (``n`` odd)
    or two (``m`` 2 per lane with *skip_nan*); a quantile's the one element per
    quantile of the methods that take one (``m`` Q), else the places below, then
    above, each virtual index (``m`` 2Q)."""
    if qf is None:
        if skip_nan:
            c = np.where(counts == 0, 1, counts)
            return np.stack([(c - 1) // 2, c // 2], axis=1), None
        n = int(counts[0])
        return np.array([[(n - 1) // 2] if n % 2 else [n // 2 - 1, n // 2]], np.int64), None
    lower, upper, gamma = _lower_upper(method, counts, qf)
    if method in _DISCRETE:
        return lower, gamma
    return np.concatenate([lower, upper], axis=1), gamma


def quantile_from_selected(values: np.ndarray, counts: np.ndarray, nans: np.ndarray,
                           qf: np.ndarray | None, method: str, dtype: np.dtype, *,
                           skip_nan: bool, weak_q: bool = False, whole: bool = False,
                           gamma=None, stacklevel: int = 2) -> np.ndarray:
    """The median (*qf* None) or quantiles of each lane from the elements selected
    at :func:`quantile_places`' places, by NumPy's arithmetic: (Q, lanes), Q 1 for
    the median, in NumPy's dtype (put it in shape with :func:`_finish`).

    *values*: the selected elements, host (lanes, m) of the input's *dtype*;
    *counts* and *skip_nan* as for :func:`quantile_places`; *nans*: each lane's NaN
    count, (lanes,) (read for float input without *skip_nan*: a lane holding NaN
    gives NaN); *weak_q*: ``q`` was a Python number (NumPy's weak weights in
    ``_lerp``); *whole*: a scalar ``q`` of one lane of the whole array (whose NaN
    NumPy gives in *dtype*: then a (1,) result); *gamma*: :func:`quantile_places`'
    weights (computed from *counts* when None). An all-NaN lane with *skip_nan*
    warns NumPy's ``All-NaN slice encountered`` (*stacklevel* as seen by the
    caller) and gives NaN."""
    floating = dtype.kind == "f"
    if qf is None:
        if not skip_nan:
            result = _mean_of_columns(values)
            if floating:
                result[nans > 0] = np.nan
            return result[None, :]
        empty = counts == 0
        c = np.where(empty, 1, counts)
        odd = (c % 2) == 1
        pairs = values.copy()
        pairs[odd, 1] = pairs[odd, 0]
        # NumPy: the mean of the one middle element (a sum from +0.0: -0.0 gives +0.0),
        # or of the two
        result = np.asarray(np.where(odd, np.mean(values[:, :1], axis=1),
                                     np.mean(pairs, axis=1))).astype(
            np.mean(values[:1], axis=1).dtype, copy=False)
        if empty.any():
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=stacklevel + 1)
            result[empty] = np.nan
        return result[None, :]
    lanes = values.shape[0]
    if method in _DISCRETE:
        result = values  # (lanes, Q)
    else:
        if gamma is None:
            _, _, gamma = _lower_upper(method, counts, qf)
        Q = qf.size
        result = _lerp(values[:, :Q], values[:, Q:], gamma, weak_q, dtype)
    result = np.asarray(result)
    if result.shape[0] != lanes:
        result = np.broadcast_to(result, (lanes,) + result.shape[1:])
    result = np.ascontiguousarray(result.T)  # (Q, lanes)
    if floating:
        if skip_nan:
            empty = counts == 0
            if empty.any():
                warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=stacklevel + 1)
                result[:, empty] = np.nan
        elif whole and nans[0] > 0:
            # NumPy's one quantile of one lane holding NaN is that NaN element: x's dtype
            result = np.full(1, np.nan, dtype)
        else:
            result[:, nans > 0] = np.nan
    return result


def _mean_of_columns(values: np.ndarray) -> np.ndarray:
    """``np.mean(values, axis=1)`` of a few columns, as NumPy computes it: a sum
    from +0.0 in the float dtype (float32 for float16, float64 for integers and
    bool), column by column, over the count, back to float16 for float16 (the
    reduction over a short axis of 65536 rows took 0.7 ms, this 0.05). A sum
    that is not finite is NumPy's, whose warnings it gives."""
    dtype = values.dtype
    acc = np.dtype(np.float32 if dtype == np.float16 else dtype if dtype.kind == "f"
                   else np.float64)
    total = np.zeros(values.shape[0], acc)
    with np.errstate(all="ignore"):
        for c in range(values.shape[1]):
            np.add(total, values[:, c], out=total, casting="unsafe")
    if not np.isfinite(total).all():  # NumPy's own, for its warnings (overflow, inf - inf)
        return np.mean(values, axis=1)
    total /= values.shape[1]
    return total.astype(dtype) if dtype == np.float16 else total


def _virtual_index(method: str, n: np.ndarray, q: np.ndarray) -> tuple[Any, Any]:
    """NumPy's virtual index of each quantile for lanes of *n* values (integer
    places for the methods that take one element), and the interpolation weight
    (``numpy.lib._function_base_impl``'s ``_QuantileMethods`` and ``_get_gamma``)."""
    # NumPy multiplies q by a Python int n (weak: n takes q's dtype)
    n = n.astype(q.dtype) if q.dtype.kind == "f" else n
    if method == "inverted_cdf":
        return _boundaries(n * q - 1, lambda g, i: g == 0), None
    if method == "closest_observation":
        return _boundaries(n * q - 1 - 0.5, lambda g, i: (g == 0) & (np.floor(i) % 2 == 1)), None
    if method == "lower":
        return np.floor((n - 1) * q).astype(np.intp), None
    if method == "higher":
        return np.ceil((n - 1) * q).astype(np.intp), None
    if method == "nearest":
        return np.around((n - 1) * q).astype(np.intp), None
    if method == "linear":
        v = (n - 1) * q
    elif method == "averaged_inverted_cdf":
        v = n * q - 1
    elif method == "midpoint":
        v = 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))
    else:
        alpha, beta = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5),
                       "weibull": (0, 0), "median_unbiased": (1 / 3.0, 1 / 3.0),
                       "normal_unbiased": (3 / 8.0, 3 / 8.0)}[method]
        v = n * q + (alpha + q * (1 - alpha - beta)) - 1
    v = np.asanyarray(v)
    gamma = np.asanyarray(v - np.floor(v))
    if method == "averaged_inverted_cdf":
        gamma = np.where(gamma == 0, 0.5, 1.0)
    elif method == "midpoint":
        gamma = np.where(v % 1 == 0, 0.0, 0.5)
    return v, np.asanyarray(gamma, dtype=v.dtype)


def _boundaries(index, condition):
    previous = np.floor(index)
    gamma = index - previous
    res = np.where(condition(gamma, index), previous, previous + 1).astype(np.intp)
    res[res < 0] = 0
    return res


def _neighbours(v: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy's ``_get_indexes``: the places below and above each virtual index, as
    non-negative places (NumPy's -1, the last, given as ``n - 1``)."""
    previous = np.floor(v)
    nxt = previous + 1
    above = v >= n - 1
    last = np.broadcast_to(n - 1, v.shape).astype(np.float64)
    previous = np.where(above, last, previous)
    nxt = np.where(above, last, nxt)
    below = v < 0
    previous = np.where(below, 0, previous)
    nxt = np.where(below, 0, nxt)
    return previous.astype(np.intp), nxt.astype(np.intp)


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray, weak: bool, dtype: np.dtype):
    """NumPy's ``_lerp(a, b, t)`` on the selected elements, in NumPy's dtypes: with a
    ``q`` given as a Python number NumPy's weight is a Python float (weak: cast to
    ``a``'s float dtype), else a float64 array."""
    diff = b - a
    if weak and dtype.kind == "f":
        t_low, t_high = t.astype(dtype), (1 - t).astype(dtype)
    else:
        t_low, t_high = t, 1 - t
    result = np.asanyarray(np.add(a, diff * t_low))
    np.subtract(b, diff * t_high, out=result, where=t >= 0.5, casting="unsafe",
                dtype=type(result.dtype))
    return result


# ------------------------------------------- for the other array types and gradients


def quantile_of_list(x, q, scalar_q, axis=None, method="linear", keepdims=False):
    """:func:`quantile` with ``q`` given as a list and whether it was one Python
    number (the form in which ``axisops.torch``'s operator schema carries it)."""
    return quantile(x, q[0] if scalar_q else np.array(q, np.float64), axis, method=method,
                    keepdims=keepdims)


def nanquantile_of_list(x, q, scalar_q, axis=None, method="linear", keepdims=False):
    """:func:`nanquantile` as :func:`quantile_of_list`."""
    return nanquantile(x, q[0] if scalar_q else np.array(q, np.float64), axis, method=method,
                       keepdims=keepdims)


def kth_list(kth, op: str) -> list[int]:
    """``kth`` of a partition as a list of ints (``TypeError`` for anything else)."""
    values = [kth] if np.ndim(kth) == 0 else list(np.asarray(kth).reshape(-1))
    if not all(_dtypes.is_int(k) for k in values):
        raise TypeError(f"{op}: kth must be an int or a sequence of ints, got {kth!r}")
    return [int(k) for k in values]


def chosen_elements(op: str, x: np.ndarray, q, axis, method: str, skip_nan: bool):
    """Which elements a median or quantile reads, for its gradient.

    Returns ``(lanes, positions, weights, out_shape, keep_shape, q_shape)``:
    ``lanes`` the reduced lanes as a (lanes, n) array's layout
    ``(y, lane_axis, kept_shape, order)`` (see :func:`_reduced_lanes`), ``positions``
    (lanes, 2Q) the places along each lane of the elements interpolated (lower
    ones first, then upper ones), ``weights`` (lanes or 1, 2Q) their shares of ``g``
    (``1 - gamma`` and ``gamma``; 1 and 0 for the methods that take one element),
    with a plain lane holding NaN given all of ``g`` at its first NaN and an
    all-NaN lane of a ``nan`` twin nothing. ``q`` None means the median."""
    median = q is None
    q = check_quantile(op, x.dtype, 0.5 if median else q, method)
    y, a, kept_shape, keep_shape = _reduced_lanes(x, axis, op)
    n = y.shape[a]
    lanes = y.size // n if n else int(np.prod(kept_shape, dtype=np.int64))
    qf = np.asarray(q, np.float64).reshape(-1) if median else q.reshape(-1)
    if n == 0 or qf.size == 0 or lanes == 0:
        return y, a, kept_shape, keep_shape, None, None, q.shape
    floating = x.dtype.kind == "f"
    if skip_nan and floating:
        counts = n - _nan_counts(y, a)
    else:
        counts = np.full(lanes, n)
    places, share = chosen_places(counts, qf, method)
    _, positions, nans = _select(y, a, places, want_positions=True)
    weights, bad = chosen_weights(share, counts, nans, skip_nan, floating)
    if bad is not None and bad.any():
        lane_view = np.moveaxis(y, a, -1).reshape(lanes, n)
        first_nan = np.argmax(np.isnan(lane_view[bad]), axis=1)
        positions[bad] = first_nan[:, None]
    return y, a, kept_shape, keep_shape, positions, weights, q.shape


def chosen_places(counts: np.ndarray, qf: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """``(places, share)`` of a median's or quantiles' gradient: the places of each
    lane's stable order (lanes or 1, 2Q) of the lower elements of the quantiles
    *qf*, then the upper ones (the same element twice for the methods that take
    one), and the lower ones' shares of ``g`` (lanes or 1, Q; ``1 - gamma``, 1 for
    those methods). *counts*: the elements that count in each lane, (lanes,) or
    (1,) (0, an all-NaN lane, read as 1). A plain lane holding NaN gives ``g`` to
    its first NaN instead (see :func:`chosen_weights`)."""
    lower, upper, gamma = _lower_upper(method, counts, qf)
    if method in _DISCRETE:
        share = np.ones(lower.shape)
    else:
        share = 1 - np.asarray(gamma, np.float64)
    return np.concatenate([lower, upper], axis=1), share


def chosen_weights(share: np.ndarray, counts: np.ndarray, nans: np.ndarray, skip_nan: bool,
                   floating: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``(weights, bad)``: the shares of ``g`` (lanes, 2Q) of the elements at
    :func:`chosen_places`' places, by NumPy's rules on NaN: with *skip_nan* an
    all-NaN lane (*counts* 0) gets nothing; a plain float lane holding NaN
    (*nans*: each lane's NaN count) gives all of ``g`` to the one element its
    positions' first half must name, its first NaN (``bad``: those lanes, None
    for non-float input or *skip_nan*)."""
    lanes = nans.shape[0]
    weights = np.concatenate([share, 1 - share], axis=1) * np.ones((lanes, 1))
    bad = None
    if floating:
        if skip_nan:
            weights[counts == 0] = 0
        else:
            bad = nans > 0
            if bad.any():
                half = weights.shape[1] // 2
                weights[bad] = 0
                weights[np.ix_(bad.nonzero()[0], np.arange(half))] = 1
    return weights, bad

"""Gather and scatter along an axis: take, take_along_axis, gather_nd, scatter.

Every function validates its arguments, views the arrays in place (no copy for
any strides; see ``axisops._layout``), converts the indices to int64 once, and
runs one kernel from ``axisops.kernels.gather``. Kernels check every index as they
use it and never touch memory outside the arrays; an out-of-range index under
``mode="raise"`` is reported by the kernel and turned into an ``IndexError`` here
that names the first bad index in C order, where it is, and the valid range.

All of that but the values is a *plan* (see ``axisops._plan``), made by the first
call with a given description of the arrays (shape, strides, dtype, alignment)
and options, and reused: a repeated call checks only what depends on values
(the indices, ``fill_value``, a Python-number update) and runs the kernel.

Decisions the contract leaves open, written down here:

* Results are always new C-contiguous arrays of ``x``'s dtype, never NumPy
  scalars (a 0-d result is a 0-d array).
* ``mode="clip"`` clips to ``[0, n-1]`` as NumPy does, so a negative index gives
  the first element; ``"wrap"`` is ``i mod n``; ``"fill"`` reads ``fill_value`` for
  every index outside ``[-n, n)``. ``fill_value`` is rounded to a float ``x``'s
  dtype (``ValueError`` if a finite value overflows) and must be exactly a value
  of an integer or bool ``x``'s dtype; it is only looked at with ``"fill"``.
  Taking from an empty axis raises ``IndexError`` except with ``"fill"``.
* uint64 indices above the int64 range are simply out of range (wrapped and
  clipped exactly with ``"wrap"``/``"clip"``).
* ``take_along_axis(x, indices, None)`` takes from the flattened ``x`` with 1-D
  indices, as NumPy's does.
* ``gather_nd`` needs ``1 <= indices.shape[-1] <= x.ndim - batch_dims``, as ONNX.
* ``scatter``'s ``updates`` may have ``indices``' shape, be larger in every
  dimension (its leading part is used, as torch's ``src``), or broadcast to it (a
  scalar); they are cast to ``x``'s dtype with ``casting="same_kind"``. For each
  destination, ``x``'s element comes first and then the updates in C order of the
  indices: ``None`` keeps the last; ``"add"``/``"mul"`` combine in that order in
  ``x``'s dtype (integers wrap; float16 accumulates in float32, rounded once);
  ``"max"``/``"min"`` propagate NaN and keep the earlier value on ties. For bool,
  add is or, mul is and. So float32 ``"add"`` equals ``np.add.at`` bit for bit.
* Complex ``x`` (complex64, complex128): every gather, and ``scatter`` with
  ``None``/``"add"``, run the real kernels on the real and imaginary parts (the
  same bits as moving or adding complex numbers); ``fill_value`` may be complex.
  ``scatter`` with ``"mul"`` applies the updates in the same order with NumPy's
  ``multiply.at`` (single-threaded); ``"max"``/``"min"`` refuse complex numbers.
* Every fixed-width dtype moves (the contract): dates, bytes, str, void and
  structured dtypes (not objects, nor structured dtypes holding them) move as
  their bits (see :func:`lanes`): an item size of 1, 2, 4 or 8 bytes as one unsigned
  integer, any other as a row of the widest unsigned integers dividing it (a view
  with one more axis, which every index takes whole). ``fill_value`` is a value of
  x's dtype (0: zero bits); ``scatter``'s updates are cast with ``astype`` (NumPy's
  assignment), and a ``reduce`` other than None is a ``TypeError``. longdouble and
  clongdouble stay refused, as by every family.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from . import _alloc, _complex, _dates, _dtypes, _fast
from ._axes import normalize_axis
from ._dispatch import dispatched
from ._indices import as_index_array, check_in_range
from ._jit import planned_call, run
from ._layout import c_strides, coalesce, many_short_rows, strided_base
from ._layout import int64_vector as _vec
from ._plan import PlanCache, array_key, axis_key, base_maker
from .kernels import gather as K
from .typing import Array, ArrayLike, GatherMode, ScatterReduce

__all__ = ["take", "take_along_axis", "gather_nd", "scatter"]

_MODES = {"raise": K.MODE_RAISE, "wrap": K.MODE_WRAP, "clip": K.MODE_CLIP, "fill": K.MODE_FILL}
_REDUCES = {None: K.OP_ASSIGN, "add": K.OP_ADD, "mul": K.OP_MUL, "max": K.OP_MAX, "min": K.OP_MIN}
#: Elements a gather task copies (at least one index): enough to amortise the
#: task's set-up, small enough to balance the threads.
_TASK_ELEMENTS = 1 << 15
#: Bytes of a row's inner lanes that one take_along_axis or scatter task owns.
#: Measured on (64, 512, 1024) float32 along axis 1 (2 cores): take_along_axis
#: took 170/103/61/55/53 ms with blocks of 64/128/256/512/4096 bytes (per-run
#: set-up and short strided runs cost more than the cache misses they save);
#: scatter "add" 134/103/83/80/81 ms with 128/256/512/1024/4096, so a scatter
#: task keeps its destinations (n rows of 1 KiB) in the core's cache.
_GATHER_BLOCK_BYTES = 4096
_SCATTER_BLOCK_BYTES = 1024
#: Destination parts per scatter lane: one. The kernel can split a lane's
#: destinations between threads (the same result, see ``kernels.gather``), but
#: every part reads all of the lane's updates and skips the others' with a branch
#: that random destinations mispredict half the time. Measured on an AMD EPYC,
#: two threads with two parts against the lane on one: scatter add of 1M int32
#: updates into a 1-D array 41.7 against 17.8 ms, (262144, 4) along axis 0 59.7
#: against 22.1 ms (earlier: (4, 256K) int32 along axis 1 12.9 ms, torch 0.5).
_ONE_DESTINATION_PART = 1
#: With fewer lanes than this, long axes are split too (gathers) or lanes are
#: split by destination range (scatter) to keep the cores busy.
_MIN_TASKS = 16
#: Plans of every function here (see ``axisops._plan``), and checked fill values.
_PLANS = PlanCache()
_FILLS = PlanCache(256)


@dispatched
def take(x: ArrayLike, indices: ArrayLike, axis: int | None = None, *,
         mode: GatherMode = "raise", fill_value: complex | np.generic = 0) -> Array:
    """Take elements along an axis, as ``numpy.take`` and ONNX Gather.

    Indices may be negative, in ``[-n, n)`` for an axis of length ``n``; ``mode``
    says what becomes of the others. The result is a new C-contiguous array, never
    a NumPy scalar (a 0-d result is a 0-d array).

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    indices : array_like of int
        Any integer dtype and shape; negative indices count from the end.
    axis : int or None, optional
        The axis to take along; negative values count from the end. Default None:
        take from the flattened array.
    mode : {"raise", "wrap", "clip", "fill"}, optional
        Out-of-range indices (outside ``[-n, n)``): ``IndexError``; wrapped mod
        ``n``; clipped to ``[0, n-1]`` (negative ones too, as NumPy); or read as
        ``fill_value``. Default ``"raise"``. Taking from an empty axis raises
        ``IndexError`` except with ``"fill"``.
    fill_value : scalar, optional
        The value of out-of-range positions with ``mode="fill"``. Default 0.
        Rounded to a float ``x``'s dtype (``ValueError`` if a finite value
        overflows); must be exactly a value of an integer or bool ``x``'s dtype.
        Only looked at with ``"fill"``.

    Returns
    -------
    numpy.ndarray
        Shape ``x.shape[:axis] + indices.shape + x.shape[axis+1:]`` (``indices.shape``
        for ``axis=None``), ``x``'s dtype.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex64/complex128 dtype (object,
        strings, ...), ``indices`` are not integers (float or bool), or ``axis`` is not
        a single int or None.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim``.
    ValueError
        If ``mode`` is not one of the four, or, with ``mode="fill"``,
        ``fill_value`` cannot be represented in ``x``'s dtype.
    IndexError
        With ``mode="raise"``, if an index is outside ``[-n, n)`` (the message
        names the first in C order, its position and the range); with any mode but
        ``"fill"``, if an index points into an empty axis.

    See Also
    --------
    take_along_axis : Take at per-element indices along an axis.
    gather_nd : Gather slices at index tuples.
    axisops.grad.take : Gradient of ``take``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.array([[1, 2, 3], [4, 5, 6]])
    >>> axisops.take(x, [2, -3], axis=1)
    array([[3, 1],
           [6, 4]])
    >>> axisops.take(x, [[0, 5]], axis=None)
    array([[1, 6]])
    >>> axisops.take(x, [1, 3], axis=1, mode="fill", fill_value=-1)
    array([[ 2, -1],
           [ 5, -1]])
    >>> axisops.take(x, [3], axis=1)
    Traceback (most recent call last):
    ...
    IndexError: take: index 3 at position (0,) of indices is out of range [-3, 3)
    """
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    elif mode == "raise" and x.size:  # the common call: one compiled entry
        out = _fast.take(x, indices, axis)
        if out is not None:
            return out
    i = _key_array(indices)
    try:
        key = ("take", *array_key(x), *array_key(i), axis_key(axis), mode)
    except (AttributeError, TypeError):
        key = None
    plan = _PLANS.plan(key, _take_plan, "take", x, indices if i is None else i, axis, mode)
    return plan(x, i, fill_value)


@dispatched
def take_along_axis(x: ArrayLike, indices: ArrayLike, axis: int | None, *,
                    mode: GatherMode = "raise", fill_value: complex | np.generic = 0) -> Array:
    """Take values along an axis at per-element indices.

    As ``np.take_along_axis``, ``torch.gather`` and ONNX GatherElements. The
    result is a new C-contiguous array of ``x``'s dtype.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    indices : array_like of int
        Any integer dtype; negative indices count from the end. ``indices`` has
        ``x.ndim`` dimensions. Along ``axis`` it may have any length. Every other
        dimension of ``indices`` may equal ``x``'s; be 1, or meet a 1 in ``x``,
        and broadcast as NumPy does; or be smaller than ``x``'s (but not 1), and
        use only the leading part of ``x`` as PyTorch and ONNX do.
    axis : int or None
        The axis to take along; negative values count from the end. ``None``
        takes from the flattened ``x`` with 1-D indices.
    mode : {"raise", "wrap", "clip", "fill"}, optional
        What becomes of indices outside ``[-n, n)``, as in :func:`take`. Default
        ``"raise"``.
    fill_value : scalar, optional
        The value of out-of-range positions with ``mode="fill"``, as in
        :func:`take`. Default 0.

    Returns
    -------
    numpy.ndarray
        ``x``'s dtype; along ``axis`` the length of ``indices``, elsewhere the sizes
        above.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex64/complex128 dtype (object,
        strings, ...), ``indices`` are not integers (float or bool), or ``axis`` is not
        a single int or None.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim``.
    ValueError
        If ``indices`` does not have ``x.ndim`` dimensions (1 for ``axis=None``),
        a dimension of ``indices`` neither matches, broadcasts with, nor fits in
        ``x``'s, ``mode`` is not one of the four, or, with ``mode="fill"``,
        ``fill_value`` cannot be represented in ``x``'s dtype.
    IndexError
        With ``mode="raise"``, if an index is outside ``[-n, n)`` (the message
        names the first in C order, its position and the range); with any mode but
        ``"fill"``, if an index points into an empty axis.

    See Also
    --------
    take : Take elements along an axis.
    scatter : Write updates along an axis at per-element indices.
    axisops.grad.take_along_axis : Gradient of ``take_along_axis``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.array([[10, 30, 20], [60, 40, 50]])
    >>> axisops.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    array([[10, 20, 30],
           [40, 50, 60]])
    >>> axisops.take_along_axis(x, np.array([[2], [0]]), axis=1)  # one per row
    array([[20],
           [60]])
    >>> axisops.take_along_axis(x, np.array([[-1, 0]]), axis=0)  # leading part, negative index
    array([[60, 30]])
    """
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    elif mode == "raise" and x.size:  # the common call: one compiled entry
        out = _fast.take_along(x, indices, axis)
        if out is not None:
            return out
    i = _key_array(indices)
    try:
        key = ("take_along_axis", *array_key(x), *array_key(i), axis_key(axis), mode)
    except (AttributeError, TypeError):
        key = None
    return _PLANS.plan(key, _along_plan, x, indices if i is None else i, axis, mode)(x, i, fill_value)


@dispatched
def gather_nd(x: ArrayLike, indices: ArrayLike, *, batch_dims: int = 0) -> Array:
    """Gather slices at index tuples: ONNX GatherND, ``batch_dims`` included.

    The last dimension of ``indices`` holds tuples of ``q`` indices into the
    ``q`` dimensions of ``x`` after the first ``batch_dims`` (which ``x`` and
    ``indices`` share); each tuple picks the slice ``x[b..., i0, ..., iq-1]``.
    Negative indices count from the end of their dimension.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    indices : array_like of int
        Any integer dtype, at least 1-D; the last dimension, of length ``q`` with
        ``1 <= q <= x.ndim - batch_dims`` (as ONNX), holds the index tuples.
    batch_dims : int, optional
        The number of leading dimensions that ``x`` and ``indices`` share, in
        ``[0, min(x.ndim, indices.ndim))``. Default 0.

    Returns
    -------
    numpy.ndarray
        Shape ``indices.shape[:-1] + x.shape[batch_dims + q:]``, ``x``'s dtype.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex64/complex128 dtype (object,
        strings, ...), ``indices`` are not integers (float or bool), or ``batch_dims``
        is not an int (a bool included).
    ValueError
        If ``indices`` is 0-d, ``batch_dims`` is out of its range, the batch
        dimensions of ``x`` and ``indices`` differ, or ``q`` is out of its range.
    IndexError
        If an index is outside ``[-d, d)`` for its dimension of length ``d`` (the
        message names the first in C order, its position and the range).

    See Also
    --------
    take : Take elements along an axis.
    take_along_axis : Take at per-element indices along an axis.
    axisops.grad.gather_nd : Gradient of ``gather_nd``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.arange(12).reshape(2, 3, 2)
    >>> axisops.gather_nd(x, [[0, 1], [1, -1]])
    array([[ 2,  3],
           [10, 11]])
    >>> axisops.gather_nd(x, [[2], [0]], batch_dims=1)  # row 2 of batch 0, row 0 of batch 1
    array([[4, 5],
           [6, 7]])
    """
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    elif (batch_dims == 0 and type(batch_dims) is int and x.ndim and x.shape[0]
          and type(indices) is np.ndarray and indices.ndim and indices.shape[-1] == 1):
        # tuples of one index: take of rows, through its compiled entry
        out = _fast.take_tuples(x, indices)
        if out is not None:
            return out
    i = _key_array(indices)
    try:
        key = ("gather_nd", *array_key(x), *array_key(i), axis_key(batch_dims))
    except (AttributeError, TypeError):
        key = None
    return _PLANS.plan(key, _gather_nd_plan, x, indices if i is None else i, batch_dims)(x, i)


@dispatched
def scatter(x: ArrayLike, indices: ArrayLike, updates: ArrayLike, axis: int, *,
            reduce: ScatterReduce = None) -> Array:
    """``x`` with ``updates`` written along ``axis`` at ``indices``.

    As ONNX ScatterElements, ``torch.scatter`` and
    ``torch.scatter_reduce(..., include_self=True)``. For every position ``p`` of
    ``indices`` (in C order), the destination is ``p`` with ``p[axis]`` replaced by
    ``indices[p]``; ``updates[p]`` is written there (``reduce=None``: the last one
    wins) or combined with what is there (``"add"``, ``"mul"``, ``"max"``,
    ``"min"``). The result is the same, bit for bit, for any number of threads,
    also for float ``"add"`` with repeated indices.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides; never modified.
    indices : array_like of int
        ``x.ndim`` dimensions, each no larger than ``x``'s except along ``axis``;
        values in ``[-n, n)``, ``n = x.shape[axis]`` (``IndexError`` otherwise).
    updates : array_like
        ``indices``' shape, or larger (its leading part is used), or broadcastable
        to it; cast to ``x``'s dtype (``same_kind``). A Python number is weakly
        typed, as in NumPy 2: an int must fit an integer ``x``'s dtype.
    axis : int
        The axis to write along; negative values count from the end.
    reduce : {None, "add", "mul", "max", "min"}, optional
        How an update combines with what is at its destination: ``x``'s element
        comes first, then the updates in C order of ``indices``. ``None`` (the
        default) keeps the last; ``"add"`` and ``"mul"`` combine in that order in
        ``x``'s dtype (integers wrap; float16 accumulates in float32, rounded
        once; for bool, add is or and mul is and); ``"max"`` and ``"min"``
        propagate NaN and keep the earlier value on ties.

    Returns
    -------
    numpy.ndarray
        A new C-contiguous array of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex64/complex128 dtype (object,
        strings, ...; complex with ``reduce`` max or min: complex numbers have no
        order), ``indices`` are not integers (float or bool), ``axis`` is not an int
        (None and bools included), or ``updates`` cannot be cast to ``x``'s dtype with
        ``casting="same_kind"`` (floats into an integer ``x``, say).
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim``.
    ValueError
        If ``reduce`` is not one of the five, ``indices`` does not have ``x.ndim``
        dimensions or is larger than ``x`` in a dimension other than ``axis``,
        ``updates`` neither match, contain, nor broadcast to ``indices``' shape,
        or a Python int update does not fit an integer ``x``'s dtype.
    IndexError
        If an index is outside ``[-n, n)`` (the message names the first in C
        order, its position and the range).

    See Also
    --------
    take_along_axis : The gather at per-element indices along an axis.
    axisops.grad.scatter : Gradient of ``scatter``, for ``x`` and ``updates``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.scatter(np.zeros(4), [1, 3, 1], [1., 2., 3.], 0, reduce="add")
    array([0., 4., 0., 2.])
    >>> axisops.scatter(np.zeros(4), [1, 3, 1], [1., 2., 3.], 0)  # the last write wins
    array([0., 3., 0., 2.])
    >>> axisops.scatter(np.ones((2, 3), int), [[2, 0]], [[7, 8]], 1, reduce="max")
    array([[8, 1, 7],
           [1, 1, 1]])
    """
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    elif x.size and (reduce is None or type(reduce) is str) and reduce in _REDUCES:
        # the common call: one compiled entry
        out = _fast.scatter(x, indices, updates, axis, _REDUCES[reduce])
        if out is not None:
            return out
    if not x.dtype.isnative and x.dtype.kind in "iuf":
        # the kernels combine values in native byte order: work there, answer in x's dtype
        native = scatter(x.astype(x.dtype.newbyteorder("=")), indices, updates, axis, reduce=reduce)
        return native.astype(x.dtype)
    indices, updates, key = _scatter_key(x, indices, updates, axis, reduce)
    return _PLANS.plan(key, _scatter_plan, x, indices, updates, axis, reduce)(x, indices, updates)


# ------------------------------------------------------------------------ plans
#
# A plan (see ``axisops._plan``) is made by the first call with its key and does
# every check that depends only on shapes, strides, dtypes and options, in the
# order the functions have always made them; what a plan does per call is only
# what depends on values: fill_value, the indices (checked by the kernels as
# they use them, and by NumPy where a result is empty), Python-number updates.


def _key_array(a):
    """*a* as a NumPy array for a plan key (``numpy.asarray``, as the checks do), or
    None when that raises: the call then goes the validating way, which reports it
    in its place."""
    if type(a) is np.ndarray:
        return a
    try:
        return np.asarray(a)
    except Exception:
        return None


def _complex_gather_plan(op, x, indices, axis, mode):
    """take/take_along_axis of complex numbers: the real gathers on the two parts
    (``fill_value`` split the same way; see ``axisops._complex``)."""
    _complex.check(x.dtype, op)
    gather = take if op == "take" else take_along_axis

    def plan(x, i, fill_value):
        idx = indices if i is None else i
        return _complex.componentwise(
            lambda part, fill: gather(part, idx, axis, mode=mode, fill_value=fill), x, fill_value)

    return plan


def _moves_bits(dtype: np.dtype) -> bool:
    """Whether the moves move *dtype* as its bits (see :func:`lanes`): dates, bytes,
    str, void and structured dtypes; never a dtype holding objects (references:
    ``check_dtype`` refuses them). Numbers keep their families' rules (longdouble
    and clongdouble are refused, as by every family)."""
    return dtype.kind in "mMSUV" and not dtype.hasobject


def lanes(dtype: np.dtype, strides=()) -> tuple[np.dtype, int]:
    """(lane dtype, lanes per element): how a move sees an element of *dtype*.

    An item size of 1, 2, 4 or 8 bytes is one unsigned integer of that width. Any
    other is a row of the widest unsigned integers (8, 4, 2 or 1 bytes) that divide
    the item size and every byte stride in *strides*: ``S3`` is 3 ``uint8``, ``U3``
    (12 bytes) 3 ``uint32``, ``S16`` 2 ``uint64``. Item size 0 is a ``TypeError``.
    """
    w = dtype.itemsize
    if w in (1, 2, 4, 8):
        return np.dtype(f"u{w}"), 1
    if w == 0:
        raise TypeError(f"unsupported dtype {dtype}: an element of 0 bytes has nothing to move")
    k = next(k for k in (8, 4, 2, 1) if w % k == 0 and all(s % k == 0 for s in strides))
    return np.dtype(f"u{k}"), w // k


def lanes_view(x: np.ndarray, lane: np.dtype) -> np.ndarray:
    """*x* (any strides) seen as *lane* integers with one more, last, axis of its
    element's lanes: a view (an element's bytes are contiguous in any array)."""
    return x[..., None].view(lane)


def from_lanes(res: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A C-contiguous result of lanes (see :func:`lanes_view`) seen as *dtype*."""
    return res.view(dtype)[..., 0]


def _fill_of(fill_value, dtype: np.dtype, op: str) -> np.ndarray:
    """``fill_value`` of a bits-moved gather as a 0-d array of *dtype*: 0 (zero
    bits), or a value of x's dtype (dates: see ``axisops._dates``)."""
    if _dates.is_date(dtype):
        return np.asarray(_dates.fill_bits(fill_value, dtype, op)).view(dtype)
    if type(fill_value) is int and fill_value == 0:
        return np.zeros((), dtype)
    try:
        value = np.array(fill_value, dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{op}: fill_value {fill_value!r} is not a value of {dtype}") from exc
    if value.shape != ():
        raise TypeError(f"{op}: fill_value {fill_value!r} is not a value of {dtype}")
    return value


def _outside(indices: np.ndarray, n: int) -> np.ndarray:
    """Where *indices* fall outside ``[-n, n)`` (what ``mode="fill"`` fills)."""
    bad = indices >= n
    if indices.dtype.kind == "i":
        bad |= indices < -n
    return bad


def _bits_gather_plan(op, x, indices, axis, mode):
    """take/take_along_axis of a dtype moved as its bits (see :func:`_moves_bits`):
    the gather of its lanes (see :func:`lanes`), one lane being an element or the
    lanes a trailing axis that every index takes whole.

    ``fill_value`` fills each lane with its own part of the value's bits: the
    kernels' scalar fill where the lanes are alike (zero bits, say), else zero and
    the out-of-range positions written afterwards (``numpy.copyto``)."""
    gather = take if op == "take" else take_along_axis
    dtype = x.dtype
    lane, count = lanes(dtype, x.strides)
    if count == 1:
        def plan(x, i, fill_value):
            fill = _fill_of(fill_value, dtype, op).view(lane)[()] if mode == "fill" else 0
            return gather(x.view(lane), i, axis, mode=mode, fill_value=fill).view(dtype)

        return plan
    # the checks of the numbers' path, in its order, on x's own dimensions
    indices = as_index_array(indices, op)
    mode_code = _mode(mode, op)
    flat = axis is None
    if op == "take_along_axis":
        if flat and indices.ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None indices must be 1-D, "
                             f"got {indices.ndim} dimensions")
        if not flat and indices.ndim != x.ndim:
            raise ValueError(f"take_along_axis: indices must have x's {x.ndim} dimensions, "
                             f"got {indices.ndim}")
    a = None if flat else normalize_axis(axis, x.ndim, op)
    if flat:
        out_shape = indices.shape
        n = x.size
    elif op == "take":
        out_shape = x.shape[:a] + indices.shape + x.shape[a + 1:]
        n = x.shape[a]
    else:
        out_shape = _along_shape(x.shape, indices.shape, a)
        n = x.shape[a]
    along = op == "take_along_axis" and not flat
    lead = (1,) * (0 if flat or along else a)
    trail = () if flat or along else (1,) * (x.ndim - a - 1)

    def plan(x, i, fill_value):
        fill = _fill_of(fill_value, dtype, op) if mode_code == K.MODE_FILL else None
        bits = fill.reshape(1).view(lane) if fill is not None else None
        alike = bits is None or bool((bits == bits[0]).all())
        kernel_fill = bits[0] if bits is not None and alike else lane.type(0)
        view = lanes_view(x, lane)
        if flat:
            res = take_block(op, view, i, 0, x.ndim, mode, kernel_fill)
        elif along:
            try:
                res = take_along_axis(view, i[..., None], a, mode=mode, fill_value=kernel_fill)
            except IndexError:  # raised again naming the position in i, not in i[..., None]
                check_in_range(i, n, op, negative=True)
                raise
        else:
            res = take(view, i, a, mode=mode, fill_value=kernel_fill)
        out = from_lanes(res, dtype)
        if not alike:
            where = _outside(i, n).reshape(lead + i.shape + trail)
            if where.any():
                np.copyto(out, fill, where=np.broadcast_to(where, out_shape))
        return out

    return plan


def take_block(op, x, indices, start: int, stop: int, mode, fill_value):
    """``take`` along the block of dimensions ``[start, stop)`` of *x*, walked in
    place as one flattened axis, the dimensions after it kept: shape
    ``x.shape[:start] + indices.shape + x.shape[stop:]``. (``take`` with
    ``axis=None`` of a :func:`lanes_view`, and ``unfold`` of lanes.)"""
    i = _key_array(indices)
    try:
        key = ("take_block", op, *array_key(x), *array_key(i), start, stop, mode)
    except (AttributeError, TypeError):
        key = None
    plan = _PLANS.plan(key, _take_plan, op, x, indices if i is None else i, None, mode,
                       (start, stop))
    return plan(x, i, fill_value)


def _complex_scatter_plan(x, indices, updates, axis, reduce):
    """scatter of complex numbers: None and add on the two parts; mul with NumPy's
    ``multiply.at`` (a complex product is not componentwise), applying the updates
    of a destination in C order of ``indices`` as the real kernels do."""
    _complex.check(x.dtype, "scatter")
    if reduce in ("max", "min"):
        _dtypes.check_dtype(x.dtype, "scatter")  # no order: TypeError
    if reduce != "mul":
        return lambda x, indices, updates: _complex.componentwise(
            lambda part, u: scatter(part, indices, u, axis, reduce=reduce), x, updates)

    def plan(x, indices, updates):
        where = scatter_destinations(x.shape, indices, axis)
        out = np.array(x, copy=True)
        np.multiply.at(out, where, leading_updates(updates, where[0].shape, x.dtype))
        return out

    return plan


def scatter_destinations(x_shape: tuple[int, ...], indices, axis) -> tuple[np.ndarray, ...]:
    """Where each index of a scatter along *axis* writes: one index array of
    ``indices``' shape per axis of ``x``, after every check of ``scatter`` (run on
    bytes, so the errors are the real path's)."""
    scatter(np.zeros(x_shape, np.int8), indices, np.zeros((), np.int8), axis, reduce="add")
    idx = np.asarray(indices)
    a = normalize_axis(axis, len(x_shape), "scatter")
    where = [np.broadcast_to(np.arange(s).reshape([-1 if d == k else 1 for d in range(idx.ndim)]),
                             idx.shape) for k, s in enumerate(idx.shape)]
    where[a] = idx % x_shape[a] if x_shape[a] else idx
    return tuple(where)


def leading_updates(updates, shape: tuple[int, ...], dtype) -> np.ndarray:
    """*updates* as an array of *shape*: broadcast, or its leading part where it is
    larger (the rule of ``scatter``'s kernels)."""
    u = np.asarray(updates, dtype)
    if u.ndim == len(shape) and all(a >= b for a, b in zip(u.shape, shape)):
        u = u[tuple(slice(0, b) for b in shape)]
    return np.broadcast_to(u, shape)


def _take_plan(op, x, indices, axis, mode, block=None):
    """The plan of take (and of take_along_axis with ``axis=None``) for arrays described
    like *x* and *indices*; with *block* ``(start, stop)``, of :func:`take_block`."""
    if _moves_bits(x.dtype):
        return _bits_gather_plan(op, x, indices, axis, mode)
    if _complex.is_complex(x.dtype):
        return _complex_gather_plan(op, x, indices, axis, mode)
    x = _as_data(x, op)
    indices = as_index_array(indices, op)
    mode_code = _mode(mode, op)
    if block is None:
        outer, n_dims, rest, axis_strides = take_dims(x.shape, axis, op)
    else:
        start, stop = block
        outer, n_dims, rest = x.shape[:start], x.shape[start:stop], x.shape[stop:]
        axis_strides = slice(start, stop)
    n = math.prod(n_dims)
    out_shape = outer + indices.shape + rest
    fill_bits = _fill_checker(x.dtype, mode_code, op)
    if math.prod(out_shape) == 0 or (n == 0 and mode_code != K.MODE_FILL):
        return _checks_only_plan(x.dtype, n, mode_code, fill_bits, out_shape, op)
    _, offset, strides = strided_base(x)
    outer_shape, (outer_strides,) = coalesce(outer, strides[:len(outer)])
    n_shape, (n_strides,) = coalesce(n_dims, strides[axis_strides])
    if not n_shape:  # a single element
        n_shape, n_strides = [1], [0]
    flat_index = _flat_int64(indices, n, mode_code)
    gather = _rows_plan(x, offset, outer_shape, outer_strides, 0, indices.size, n, n_shape,
                        n_strides, rest, strides[len(strides) - len(rest):], mode_code)

    def plan(x, indices, fill_value):
        idx = indices if flat_index is None else flat_index(indices)
        out = gather(x, idx, fill_bits(fill_value))
        if out is None:
            check_in_range(indices, n, op, negative=True)
        return out.reshape(out_shape)

    return plan


def take_dims(shape, axis, op: str) -> tuple[tuple, tuple, tuple, slice]:
    """``take``'s split of *shape*: (outer dims, the dims indices count along, the
    rest, the slice of those dims' strides); ``axis=None`` counts along every
    dim (the flattened array, walked in place).

    >>> take_dims((2, 3, 4), -2, "take")
    ((2,), (3,), (4,), slice(1, 2, None))
    >>> take_dims((2, 3), None, "take")
    ((), (2, 3), (), slice(0, 2, None))
    """
    if axis is None:
        return (), tuple(shape), (), slice(0, len(shape))
    axis = normalize_axis(axis, len(shape), op)
    return tuple(shape[:axis]), tuple(shape[axis:axis + 1]), tuple(shape[axis + 1:]), \
        slice(axis, axis + 1)


def _along_plan(x, indices, axis, mode):
    """The plan of take_along_axis for arrays described like *x* and *indices*:
    through the moved arrays for many short rows (see ``_short_rows``)."""
    if _moves_bits(x.dtype):
        return _bits_gather_plan("take_along_axis", x, indices, axis, mode)
    if _complex.is_complex(x.dtype):
        return _complex_gather_plan("take_along_axis", x, indices, axis, mode)
    plan = _along_plan_direct(x, indices, axis, mode)
    a = _short_rows(x, indices, axis)
    if a is None:
        return plan
    moved = _along_plan_direct(np.moveaxis(x, a, 0), np.moveaxis(indices, a, 0), 0, mode)

    def moved_plan(x, i, fill_value):
        try:
            res = moved(np.moveaxis(x, a, 0), np.moveaxis(i, a, 0), fill_value)
        except IndexError:  # raised again in x's own order, naming x's positions
            return plan(x, i, fill_value)
        return np.ascontiguousarray(np.moveaxis(res, 0, a))

    return moved_plan


def _short_rows(x, indices, axis):
    """The axis, when take_along_axis or scatter should run on the moved arrays.

    Along a short last axis (fewer than 16, the dimensions after it of size 1)
    of at least 256 elements, each row is a task of its own: 61 ns per element
    for take_along_axis along axis 1 of (16K, 4) float32. Moved to the front, the
    axis becomes rows of many lanes; the result is copied back. Every element
    is the same move (or, for scatter, the same updates applied in the same
    order per destination), so the bits are the same.
    """
    if type(x) is not np.ndarray or type(indices) is not np.ndarray or type(axis) is not int:
        return None
    if x.ndim < 2 or indices.ndim != x.ndim or not -x.ndim <= axis < x.ndim:
        return None
    axis %= x.ndim
    if indices.shape != x.shape or not many_short_rows(x.shape, axis):
        return None
    return axis


def _along_plan_direct(x, indices, axis, mode):
    """The plan of take_along_axis, walking the arrays in their own order."""
    op = "take_along_axis"
    x = _as_data(x, op)
    indices = as_index_array(indices, op)
    mode_code = _mode(mode, op)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None indices must be 1-D, "
                             f"got {indices.ndim} dimensions")
        # 1-D indices into the flattened x: exactly take's, which needs no flat copy
        return _take_plan(op, x, indices, None, mode)
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices must have x's {x.ndim} dimensions, "
                         f"got {indices.ndim}")
    axis = normalize_axis(axis, x.ndim, op)
    n = x.shape[axis]
    out_shape = _along_shape(x.shape, indices.shape, axis)
    fill_bits = _fill_checker(x.dtype, mode_code, op)
    if math.prod(out_shape) == 0 or (n == 0 and mode_code != K.MODE_FILL):
        return _checks_only_plan(x.dtype, n, mode_code, fill_bits, out_shape, op)
    to_int64 = _int64_maker(indices, n, mode_code)
    idx = to_int64(indices)  # only looked at here: a plan keeps no array it was made from
    _, offset, xs = strided_base(x)
    _, ioffset, istr = strided_base(idx)
    make_ibase = base_maker(idx)
    # Strides over the result's shape: 0 where an array is broadcast along a dimension.
    xs = [0 if x.shape[d] == 1 else s for d, s in enumerate(xs)]
    istr = [0 if indices.shape[d] == 1 else s for d, s in enumerate(istr)]
    cs = c_strides(out_shape)
    outer, (x_outer, i_outer, _) = coalesce(out_shape[:axis], xs[:axis], istr[:axis], cs[:axis])
    rest, (x_rest, i_rest, _) = coalesce(out_shape[axis + 1:], xs[axis + 1:], istr[axis + 1:],
                                         cs[axis + 1:])
    inner, x_inner, i_inner = (rest[-1], x_rest[-1], i_rest[-1]) if rest else (1, 0, 0)
    m = out_shape[axis]
    outers, mids = math.prod(outer), math.prod(rest[:-1])
    block = max(1, _GATHER_BLOCK_BYTES // x.itemsize) if inner > 1 else 1
    lanes = outers * mids * -(-inner // block)
    jchunk = m if lanes >= _MIN_TASKS else max(1, -(-m // _MIN_TASKS))
    # but never less than about _TASK_ELEMENTS // 8 elements a task: (8, 16, 8) along
    # axis 1 made 128 tasks of one row of 8 lanes (58 us a call, torch 2.7)
    jchunk = min(m, max(jchunk, -(-(_TASK_ELEMENTS // 8) // min(inner, block))))
    tasks = lanes * -(-m // jchunk)
    dtype, bits = x.dtype, _bits(x.dtype)
    size = outers * m * mids * inner
    make_base, alloc = _bits_base(x, bits), _alloc.empty_function((size,), bits)
    head = (offset, _vec(outer), _vec(x_outer), _vec(i_outer), n, xs[axis] if n > 1 else 0)
    tail = (ioffset, m, istr[axis], _vec(rest[:-1]), _vec(x_rest[:-1]), _vec(i_rest[:-1]),
            inner, x_inner, i_inner, block, jchunk, mode_code)
    call = planned_call(K.take_along)

    def plan(x, indices, fill_value):
        fill = fill_bits(fill_value)
        ibase = make_ibase(to_int64(indices))
        bad = np.zeros(tasks, np.uint8)
        out = alloc((size,), bits)
        call(size, make_base(x), *head, ibase, *tail, fill, bad, out)
        if np.count_nonzero(bad):
            check_in_range(indices, n, op, negative=True)
        return out.view(dtype).reshape(out_shape)

    return plan


def _gather_nd_plan(x, indices, batch_dims):
    """The plan of gather_nd for arrays described like *x* and *indices*.

    Complex *x*: gathered as its two parts (see ``axisops._complex``).

    Tuples of one index (``indices.shape[-1] == 1``) go to the kernel as they are:
    it checks them as it uses them. Longer tuples are checked and flattened by
    NumPy first (see :func:`_flat_tuples`).
    """
    if _moves_bits(x.dtype):  # a move of bits: the gather of the lanes (see lanes())
        lane, count = lanes(x.dtype, x.strides)
        if count == 1:
            return lambda x, i: gather_nd(x.view(lane), indices if i is None else i,
                                          batch_dims=batch_dims).view(x.dtype)
        _nd_shapes(x.shape, as_index_array(indices, "gather_nd"), batch_dims, "gather_nd")
        return lambda x, i: from_lanes(gather_nd(lanes_view(x, lane), indices if i is None else i,
                                                 batch_dims=batch_dims), x.dtype)
    if _complex.is_complex(x.dtype):
        _complex.check(x.dtype, "gather_nd")
        return lambda x, i: _complex.componentwise(
            lambda part: gather_nd(part, indices if i is None else i, batch_dims=batch_dims), x)
    op = "gather_nd"
    x = _as_data(x, op)
    indices = as_index_array(indices, op)
    b, dims, out_shape = _nd_shapes(x.shape, indices, batch_dims, op)
    q, rest = len(dims), x.shape[b + len(dims):]
    if math.prod(out_shape) == 0:
        def checks_only(x, indices):
            _flat_tuples(indices, dims, op)
            return np.empty(out_shape, x.dtype)
        return checks_only
    _, offset, strides = strided_base(x)
    m = math.prod(indices.shape[b:-1])
    # The batch dimensions are walked by unravelling (not coalesced): the index
    # rows are in C order of them.
    n_shape, (n_strides,) = coalesce(dims, strides[b:b + q])
    if not n_shape:
        n_shape, n_strides = [1], [0]
    if q == 1:  # (an empty dims[0] makes every index out of range: the kernel reports it)
        flat_index = _flat_int64(indices, dims[0], K.MODE_RAISE)
    else:
        def flat_index(indices):
            return _flat_tuples(indices, dims, op).reshape(-1)
    gather = _rows_plan(x, offset, list(x.shape[:b]), list(strides[:b]), m, m, math.prod(dims),
                        n_shape, n_strides, rest, strides[b + q:], K.MODE_RAISE)
    zero = _fill_checker(x.dtype, K.MODE_RAISE, op)(0)

    def plan(x, indices):
        out = gather(x, indices if flat_index is None else flat_index(indices), zero)
        if out is None:  # only one-index tuples reach the kernel unchecked
            _raise_first_tuple_error(indices, dims, op)
        return out.reshape(out_shape)

    return plan


def _scatter_key(x, indices, updates, axis, reduce):
    """(indices, updates, plan key) of a scatter call.

    Array-likes become arrays for the key; a Python number stays one, its type is
    in the key and its value is checked by the plan at every call. None when a
    conversion raises or the options cannot be part of a key.
    """
    try:
        if type(indices) is not np.ndarray:
            indices = np.asarray(indices)
        kind = type(updates)
        if kind is not bool and kind is not int and kind is not float:
            if kind is not np.ndarray:
                updates = np.asarray(updates)
            kind = array_key(updates)
        return indices, updates, ("scatter", x.shape, x.strides, x.dtype, x.flags.aligned,
                                  indices.shape, indices.strides, indices.dtype,
                                  indices.flags.aligned, kind, axis_key(axis), reduce)
    except Exception:
        return indices, updates, None


def _scatter_plan(x, indices, updates, axis, reduce):
    """The plan of scatter: through the moved arrays for many short rows (see
    ``_short_rows``; per destination the updates still come in the same order)."""
    if _moves_bits(x.dtype) and reduce is None:  # a move of bits
        return _bits_scatter_plan(x, axis)
    if _moves_bits(x.dtype) and reduce in _REDUCES:
        raise TypeError(f"scatter: reduce={reduce!r} combines values; {x.dtype} is only moved "
                        "(reduce=None)")
    if _complex.is_complex(x.dtype):
        return _complex_scatter_plan(x, indices, updates, axis, reduce)
    plan = _scatter_plan_direct(x, indices, updates, axis, reduce)
    a = _short_rows(x, indices, axis)
    if a is None or type(updates) is not np.ndarray or updates.shape != indices.shape:
        return plan
    moved = _scatter_plan_direct(np.moveaxis(x, a, 0), np.moveaxis(indices, a, 0),
                                 np.moveaxis(updates, a, 0), 0, reduce)

    def moved_plan(x, indices, updates):
        try:
            res = moved(np.moveaxis(x, a, 0), np.moveaxis(indices, a, 0), np.moveaxis(updates, a, 0))
        except IndexError:  # raised again in x's own order, naming x's positions
            return plan(x, indices, updates)
        return np.ascontiguousarray(np.moveaxis(res, 0, a))

    return moved_plan


def _bits_scatter_plan(x, axis):
    """scatter with ``reduce=None`` of a dtype moved as its bits (see
    :func:`_moves_bits`): the scatter of its lanes (see :func:`lanes`), every index
    given the element's lanes (a broadcast view). Updates are cast to x's dtype as
    NumPy's assignment casts (``astype``)."""
    dtype = x.dtype
    lane, count = lanes(dtype, x.strides)

    def plan(x, indices, updates):
        x, idx, upd, a = _scatter_args(x, indices, updates, axis, None, "scatter", moved=True)
        if count == 1:
            return scatter(x.view(lane), idx, upd.view(lane), a).view(dtype)
        shape = idx.shape + (count,)
        try:
            res = scatter(lanes_view(x, lane), np.broadcast_to(idx[..., None], shape),
                          lanes_view(upd, lane), a)
        except IndexError:  # raised again naming the position in idx, not in its lanes
            check_in_range(idx, x.shape[a], "scatter", negative=True)
            raise
        return from_lanes(res, dtype)

    return plan


def _scatter_plan_direct(x, indices, updates, axis, reduce):
    """The plan of scatter for arrays (or a Python number *updates*) described like these.

    ``updates`` are converted to the kernel's dtype as they are given, before any
    broadcasting (fewer elements to convert; broadcast dimensions get stride 0).
    """
    op = "scatter"
    number = type(updates) in (bool, int, float)
    x, indices, _, axis = _scatter_args(x, indices, updates, axis, reduce, op)
    n, dt = x.shape[axis], x.dtype
    work, bits, flip = _scatter_dtypes(dt, reduce)
    make_out = _scatter_out(x, work, bits, flip)
    finish = _scatter_finish(dt, work, flip)
    if not indices.size:
        def nothing_to_scatter(x, indices, updates):
            if number:
                _as_updates(updates, dt, op)
            return finish(make_out(x))
        return nothing_to_scatter
    op_code = _REDUCES[reduce]
    if dt == np.bool_:  # or and and are max and min of 0 and 1
        op_code = {K.OP_ADD: K.OP_MAX, K.OP_MUL: K.OP_MIN}.get(op_code, op_code)
    u = _as_updates(updates, dt, op)
    lead = None  # as _scatter_updates: the leading part of larger updates, else broadcast
    if (u.shape != indices.shape and u.ndim == indices.ndim
            and all(a >= s for a, s in zip(u.shape, indices.shape))):
        lead = tuple(slice(0, s) for s in indices.shape)
    convert = _updates_converter(u.dtype, dt, work, bits, flip, lead)
    to_int64 = _int64_maker(indices, n, K.MODE_RAISE)
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # the calls report their own
        warnings.simplefilter("ignore")
        idx, upd = to_int64(indices), convert(u)  # looked at here only, never kept
    _, ioffset, istr = strided_base(idx)
    _, uoffset, ustr = strided_base(upd)
    make_ibase, make_ubase = base_maker(idx), base_maker(upd)
    skip = indices.ndim - upd.ndim  # broadcast: missing and length-1 dimensions get stride 0
    ustr = [0 if d < skip or upd.shape[d - skip] == 1 else ustr[d - skip]
            for d in range(indices.ndim)]
    lanes, go = _scatter_runner(x.shape, work.itemsize, indices.shape, axis, istr, ustr,
                                planned=True)
    work_size = indices.size

    def plan(x, indices, updates):
        if number:
            updates = _as_updates(updates, dt, op)
        out = make_out(x)
        ibase = make_ibase(to_int64(indices))
        ubase = make_ubase(convert(updates))
        parts = _ONE_DESTINATION_PART
        bad = np.zeros(lanes * parts, np.uint8)
        go(out.reshape(-1), ibase, ioffset, ubase, uoffset, parts, op_code, K.MODE_RAISE, bad,
           work_size)
        if np.count_nonzero(bad):
            check_in_range(indices, n, op, negative=True)
        return finish(out)

    return plan


def _checks_only_plan(dtype, n, mode, fill_bits, out_shape, op):
    """The plan of a gather that reads nothing (an empty result, or an empty axis,
    which every index is out of): the values are checked, as NumPy does."""
    def plan(x, indices, fill_value):
        fill_bits(fill_value)
        _check_empty_axis(indices, n, mode, op)
        _check_unseen(indices, n, mode, op)
        return np.empty(out_shape, dtype)

    return plan


def _rows_plan(x, offset, outer_shape, outer_strides, idx_outer, m, n, n_shape, n_strides,
               rest, rest_strides, mode):
    """``take_rows`` for arrays described like *x*: a function of (x, flat int64
    indices, fill bits) giving the flat result, or None when an index was out of
    range under raise."""
    rest_shape, (rest_str,) = coalesce(rest, rest_strides)
    inner, inner_stride = (rest_shape[-1], rest_str[-1]) if rest_shape else (1, 0)
    rowlen = math.prod(rest_shape)
    outers = math.prod(outer_shape)
    jchunk = max(1, min(m, _TASK_ELEMENTS // max(rowlen, 1)))
    tasks = outers * -(-m // jchunk)
    dtype, bits = x.dtype, _bits(x.dtype)
    size = outers * m * rowlen
    make_base, alloc = _bits_base(x, bits), _alloc.empty_function((size,), bits)
    head = (offset, _vec(outer_shape), _vec(outer_strides))
    tail = (idx_outer, m, n, _vec(n_shape), _vec(n_strides), _vec(rest_shape[:-1]),
            _vec(rest_str[:-1]), inner, inner_stride, jchunk, mode)
    raising, same = mode == K.MODE_RAISE, dtype == bits
    call = planned_call(K.take_rows)

    def gather(x, idx, fill):
        bad = np.zeros(tasks, np.uint8)
        out = alloc((size,), bits)
        call(size, make_base(x), *head, idx, *tail, fill, bad, out)
        if raising and np.count_nonzero(bad):
            return None
        return out if same else out.view(dtype)

    return gather


def _bits_base(x: np.ndarray, bits: np.dtype):
    """``base_maker`` for arrays described like *x*, its base seen as *bits*."""
    make = base_maker(x)
    if x.dtype == bits:
        return make
    return lambda y: make(y).view(bits)


def _flat_int64(indices: np.ndarray, n: int, mode: int):
    """A function giving, for indices described like *indices*, their C-ordered
    int64 values as a 1-D array (see :func:`_int64`): a view when they are C-contiguous
    int64, and None when they are that array already."""
    if indices.dtype == np.int64:
        if indices.ndim == 1 and indices.flags.c_contiguous:
            return None
        if indices.flags.c_contiguous:
            return lambda i: i.reshape(-1)
        return lambda i: np.ascontiguousarray(i).reshape(-1)
    if indices.dtype == np.uint64:
        return lambda i: np.ascontiguousarray(_int64(i, n, mode)).reshape(-1)
    return lambda i: i.astype(np.int64, order="C").reshape(-1)


def _int64_maker(indices: np.ndarray, n: int, mode: int):
    """:func:`_int64` for arrays described like *indices* (nothing to do for int64)."""
    if indices.dtype == np.int64:
        return lambda i: i
    if indices.dtype == np.uint64:
        return lambda i: _int64(i, n, mode)
    return lambda i: i.astype(np.int64)


def _fill_checker(dtype: np.dtype, mode: int, op: str):
    """A function of ``fill_value`` giving the kernels' fill (*dtype*'s bits as a
    same-width integer scalar), checked as :func:`_fill` does: a constant unless
    mode is fill. Python numbers that passed are remembered (with the sign of a
    float zero, so -0.0 is not 0.0)."""
    bits = _bits(dtype)
    if mode != K.MODE_FILL:
        zero = np.zeros((), dtype).view(bits)[()]
        return lambda fill_value: zero

    def check(fill_value):
        kind = type(fill_value)
        if kind is int or kind is bool or kind is float:
            key = (dtype, kind, fill_value, math.copysign(1.0, fill_value) if kind is float else 0)
            value = _FILLS.get(key)
            if value is None:
                value = _FILLS.put(key, _fill(fill_value, dtype, mode, op).view(bits)[()])
            return value
        return _fill(fill_value, dtype, mode, op).view(bits)[()]

    return check


# --------------------------------------------------------------------- helpers


def _as_data(x, op):
    x = _dtypes.as_array(x)
    _dtypes.check_dtype(x.dtype, op)
    if x.dtype.kind == "f" and x.itemsize > 8:
        raise TypeError(f"{op}: unsupported dtype {x.dtype} (the floats axisops takes are "
                        "float16, float32 and float64)")
    return x


def _mode(mode, op) -> int:
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"{op}: mode must be 'raise', 'wrap', 'clip' or 'fill', "
                         f"got {mode!r}") from None


def _fill(fill_value, dtype: np.dtype, mode: int, op: str) -> np.ndarray:
    """``fill_value`` as a 0-d array of *dtype* (zero unless mode is fill).

    Rounded for a float dtype (a finite value that overflows is an error); exact
    for integers and bool, compared as Python numbers (so 1.5, NaN or 2**63 are
    no int64).
    """
    if mode != K.MODE_FILL:
        return np.zeros((), dtype)
    if dtype.kind == "c":  # whole complex values (Dask, CUDA); this path fills each part
        return np.asarray(fill_value).astype(dtype)
    value = np.asarray(fill_value)
    ok = value.shape == () and value.dtype.kind in "biuf"
    if ok:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cast = value.astype(dtype)
        a, b = cast.item(), value.item()
        if dtype.kind == "f":
            ok = not (math.isinf(a) and not math.isinf(b))
        else:
            ok = a == b
    if not ok:
        raise ValueError(f"{op}: fill_value {fill_value!r} cannot be represented in {dtype}")
    return cast


def _check_unseen(indices, n, mode, op):
    """Indices that no kernel will read (the result is empty because another
    dimension is 0) are still checked, as NumPy does."""
    if mode == K.MODE_RAISE and indices.size:
        check_in_range(indices, n, op, negative=True)


def _check_empty_axis(indices, n, mode, op):
    """An index into an empty axis exists only as a fill."""
    if n == 0 and indices.size and mode != K.MODE_FILL:
        check_in_range(indices, n, op, negative=True)


def _int64(indices: np.ndarray, n: int, mode: int) -> np.ndarray:
    """*indices* as int64, resolving the uint64 values that int64 cannot hold."""
    if indices.dtype == np.uint64 and indices.size and n > 0:
        if mode == K.MODE_WRAP:
            indices = indices % np.uint64(n)
        elif mode == K.MODE_CLIP:
            indices = np.minimum(indices, np.uint64(n - 1))
        else:  # n itself is out of range: filled, or reported
            indices = np.minimum(indices, np.uint64(n))
    return indices.astype(np.int64, copy=False)


def _bits(dtype: np.dtype) -> np.dtype:
    """The signed integer dtype of the same width: gathers move bits."""
    return np.dtype(f"i{dtype.itemsize}")


def _along_shape(x_shape, i_shape, axis) -> tuple[int, ...]:
    """The result shape of take_along_axis (see its docstring for the rules)."""
    shape = []
    for d, (xn, im) in enumerate(zip(x_shape, i_shape)):
        if d == axis or im == xn or xn == 1 or (im < xn and im != 1):
            shape.append(im)
        elif im == 1:
            shape.append(xn)
        else:
            raise ValueError(f"take_along_axis: indices has size {im} in dimension {d}, which "
                             f"neither matches, broadcasts with, nor fits in x's {xn}")
    return tuple(shape)


def _nd_plan(x_shape, indices, batch_dims, op):
    """Check gather_nd's arguments; (batch_dims, indexed dims, result shape, flat indices).

    The flat indices (int64, shape ``indices.shape[:-1]``) number each tuple's
    slice in C order over the indexed dimensions.
    """
    b, dims, out_shape = _nd_shapes(x_shape, indices, batch_dims, op)
    return b, dims, out_shape, _flat_tuples(indices, dims, op)


def _nd_shapes(x_shape, indices, batch_dims, op):
    """Check gather_nd's arguments but the index values; (batch_dims, indexed dims,
    result shape)."""
    if isinstance(batch_dims, (bool, np.bool_)) or not isinstance(batch_dims, (int, np.integer)):
        raise TypeError(f"{op}: batch_dims must be an int, got {batch_dims!r}")
    b, ndim = int(batch_dims), len(x_shape)
    if indices.ndim < 1:
        raise ValueError(f"{op}: indices must have at least 1 dimension (the index tuples)")
    if not 0 <= b < min(ndim, indices.ndim):
        raise ValueError(f"{op}: batch_dims must be in [0, {min(ndim, indices.ndim)}) "
                         f"for x of {ndim} and indices of {indices.ndim} dimensions, got {b}")
    if tuple(x_shape[:b]) != indices.shape[:b]:
        raise ValueError(f"{op}: the {b} batch dimensions of x {tuple(x_shape[:b])} and of "
                         f"indices {indices.shape[:b]} must be equal")
    q = indices.shape[-1]
    if not 1 <= q <= ndim - b:
        raise ValueError(f"{op}: the last dimension of indices (the tuple length) must be "
                         f"in [1, {ndim - b}] for x of {ndim} dimensions and batch_dims={b}, "
                         f"got {q}")
    dims = tuple(x_shape[b:b + q])
    return b, dims, indices.shape[:-1] + tuple(x_shape[b + q:])


def _flat_tuples(indices: np.ndarray, dims, op) -> np.ndarray:
    """Each index tuple as one flat index over *dims* (C order), checked first.

    The tuples are few next to the slices they pick, so NumPy does this, with one
    comparison for every component at once and one product for the flat index.
    """
    unsigned = indices.dtype.kind == "u"
    limits = np.asarray(dims, dtype=np.uint64 if unsigned else np.int64)
    bad = indices >= limits
    if not unsigned:
        bad |= indices < -limits
    if bad.any():
        _raise_first_tuple_error(indices, dims, op)
    work = _int64(indices, max(dims) if dims else 1, K.MODE_RAISE)
    if work.size:  # every component is in [-d, d), so d > 0: negative ones count from the end
        work = work % np.asarray(dims, np.int64)
    return np.ascontiguousarray(work @ np.asarray(c_strides(dims), np.int64))


def _raise_first_tuple_error(indices, dims, op):
    """IndexError naming the first component (C order) outside its dimension's range."""
    flat = indices.reshape(-1, len(dims))
    limits = np.asarray(dims, dtype=np.uint64 if indices.dtype.kind == "u" else np.int64)
    bad = flat >= limits
    if indices.dtype.kind == "i":
        bad |= flat < -limits
    first = int(np.argmax(bad.reshape(-1)))
    tuple_no, t = divmod(first, len(dims))
    where = np.unravel_index(first, indices.shape)
    d = dims[t]
    raise IndexError(f"{op}: index {flat[tuple_no, t]} at position "
                     f"{tuple(int(w) for w in where)} of indices is out of range [{-d}, {d})")


def _scatter_args(x, indices, updates, axis, reduce, op, moved=False):
    """Check scatter's arguments; (x, indices, updates of indices' shape, axis).

    Index values are checked later, by the kernel, except on an empty axis. With
    *moved*, ``x`` is of a dtype moved as its bits (see :func:`_moves_bits`) and
    ``updates`` are cast to it with ``astype``.
    """
    x = _dtypes.as_array(x) if moved else _as_data(x, op)
    indices = as_index_array(indices, op)
    if reduce not in _REDUCES:
        raise ValueError(f"{op}: reduce must be None, 'add', 'mul', 'max' or 'min', got {reduce!r}")
    if axis is None or isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"{op}: axis must be an int, got {axis!r}")
    if indices.ndim != x.ndim:
        raise ValueError(f"{op}: indices must have x's {x.ndim} dimensions, got {indices.ndim}")
    axis = normalize_axis(axis, x.ndim, op)
    for d in range(x.ndim):
        if d != axis and indices.shape[d] > x.shape[d]:
            raise ValueError(f"{op}: indices has size {indices.shape[d]} in dimension {d}, "
                             f"larger than x's {x.shape[d]}")
    if moved:
        updates = _shaped_updates(_moved_updates(updates, x.dtype, op), indices.shape, op)
    else:
        updates = _scatter_updates(updates, indices.shape, x.dtype, op)
    if x.shape[axis] == 0 and indices.size:
        check_in_range(indices, 0, op, negative=True)
    return x, indices, updates, axis


def _scatter_updates(updates, shape, dtype: np.dtype, op) -> np.ndarray:
    """*updates* as an array of *shape* (a view: leading part or broadcast), in *dtype*'s kind."""
    updates = _as_updates(updates, dtype, op)
    if updates.dtype.kind not in "biuf" or not np.can_cast(updates.dtype, dtype, "same_kind"):
        raise TypeError(f"{op}: cannot cast updates from {updates.dtype} to {dtype}")
    return _shaped_updates(updates, shape, op)


def _moved_updates(updates, dtype: np.dtype, op) -> np.ndarray:
    """*updates* as an array of *dtype*, a dtype moved as its bits: cast as NumPy's
    assignment casts, else ``TypeError`` (an object never passes)."""
    u = np.asarray(updates)
    if u.dtype == dtype:
        return u
    if u.dtype.hasobject and u.dtype.kind != "O":
        raise TypeError(f"{op}: cannot cast updates from {u.dtype} to {dtype}")
    try:
        return u.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{op}: cannot cast updates from {u.dtype} to {dtype}") from exc


def _shaped_updates(updates: np.ndarray, shape, op) -> np.ndarray:
    """*updates* as an array of *shape*: its leading part, or broadcast."""
    if updates.shape != shape:
        if updates.ndim == len(shape) and all(u >= s for u, s in zip(updates.shape, shape)):
            updates = updates[tuple(slice(0, s) for s in shape)]
        else:
            try:
                updates = np.broadcast_to(updates, shape)
            except ValueError:
                raise ValueError(f"{op}: updates of shape {updates.shape} neither match, "
                                 f"contain, nor broadcast to indices' shape {shape}") from None
    return updates


def _as_updates(updates, dtype: np.dtype, op) -> np.ndarray:
    """``np.asarray(updates)``, with a Python number weakly typed as in NumPy 2 (NEP 50):
    ``scatter(uint8_x, i, 5, 0)`` works as ``np.add.at`` does. A Python bool fits any
    dtype, an int any integer or float dtype (if its value fits an integer one), a
    float any float dtype."""
    kind = {bool: "b", int: "i", float: "f"}.get(type(updates))
    if kind is None:
        return np.asarray(updates)
    if kind == "i" and dtype.kind in "iu" and not (
            np.iinfo(dtype).min <= updates <= np.iinfo(dtype).max):
        raise ValueError(f"{op}: update {updates} does not fit {dtype}")
    if kind == "b" or (kind == "i" and dtype.kind in "iuf") or (kind == "f" and dtype.kind == "f"):
        with np.errstate(over="ignore"):
            return np.asarray(updates, dtype=dtype)
    return np.asarray(updates)  # the same_kind check reports it


def _scatter_dtypes(dt: np.dtype, reduce):
    """(work, bits, flip): the dtype the scatter kernel combines *dt* in, the
    same-width integer dtype whose bits stand for *dt*'s (or None), and the sign bit
    to flip for max and min (or None).

    The kernel runs on int64, float32 or float64 only (three compilations): small
    integers are widened (sums and products wrap to the same bits when cast back,
    max and min are unchanged), uint64 is seen as int64 (with its sign bit flipped
    for max and min, which keeps the order), bool as int64 with add as max (or) and
    mul as min (and), float16 in float32 (rounded once at the end).
    ``reduce=None`` moves bits: float16 as its int16 bit pattern.
    """
    if dt.kind == "f" and dt.itemsize >= 4:
        work = dt
    elif dt == np.float16 and reduce is not None:
        work = np.dtype(np.float32)
    else:
        work = np.dtype(np.int64)
    bits: np.dtype | None = None
    flip = None
    if work.kind == "i":
        if dt == np.float16:
            bits = np.dtype(np.int16)
        elif dt == np.uint64:
            bits = np.dtype(np.int64)
            if reduce in ("max", "min"):
                flip = np.int64(np.iinfo(np.int64).min)
    return work, bits, flip


def _scatter_out(x: np.ndarray, work: np.dtype, bits, flip):
    """A function giving, for arrays described like *x*, the scatter's output before
    the updates: a new C-contiguous copy in *work* (see :func:`_scatter_dtypes`)."""
    shape = x.shape
    empty = _alloc.empty_function(shape, work)

    def make(x):
        xv = x if bits is None else x.view(bits)
        if empty is np.empty:  # small: one call
            out = xv.astype(work, order="C")
        else:  # from the pool
            out = empty(shape, work)
            np.copyto(out, xv, casting="unsafe")
        if flip is not None:
            out ^= flip
        return out

    return make


def _updates_converter(u_dtype: np.dtype, dt: np.dtype, work: np.dtype, bits, flip, lead):
    """A function taking updates of *u_dtype* (as given: not broadcast) to the kernel's
    *work* dtype: their leading part when *lead* slices it, cast to ``x``'s dtype *dt*
    first (max(x, 300) of int8 is max(x, 44); same_kind: 1e300 -> float16 is inf,
    silently), then *dt*'s bits or values in *work*, flipped as ``x`` is."""
    cast = u_dtype != dt
    quiet = dt.kind == "f"  # only a cast to a float may overflow (integers wrap silently)
    widen = (bits if bits is not None else dt) != work

    def convert(u):
        if lead is not None:
            u = u[lead]
        if cast and quiet:
            with np.errstate(over="ignore", invalid="ignore"):
                u = u.astype(dt)
        elif cast:
            u = u.astype(dt)
        if bits is not None:
            u = u.view(bits)
        if widen:
            u = u.astype(work)
        if flip is not None:
            u = u ^ flip
        return u

    return convert


def _scatter_finish(dt: np.dtype, work: np.dtype, flip):
    """A function turning the kernel's output (in *work*) into the result in *dt*."""
    if work == dt and flip is None:
        return lambda res: res

    def finish(res):
        if flip is not None:
            res ^= flip
        if res.dtype == dt:
            return res
        if dt == np.float16 and work.kind == "i":
            return res.astype(np.int16).view(np.float16)
        if dt == np.uint64:
            return res.view(np.uint64)
        if dt == np.bool_:
            return res != 0
        if dt.kind != "f":  # integers wrap silently
            return res.astype(dt)
        with np.errstate(over="ignore"):
            return res.astype(dt)

    return finish


def _scatter_runner(out_shape, itemsize: int, shape, axis: int, istr, ustr,
                    planned: bool = False):
    """(lanes, go): the geometry of ``scatter_lanes`` for a C-contiguous output of
    *out_shape* (items of *itemsize* bytes) and indices and updates of *shape* with
    element strides *istr* and *ustr*. ``go(out, ibase, ioffset, ubase, uoffset,
    parts, op, mode, bad, work)`` runs the kernel; *bad* has ``lanes * parts``
    flags. *planned*: a plan's runner, whose arguments' types never change
    (``_jit.planned_call``: OpenMP's threads where they pay)."""
    cs = c_strides(out_shape)
    outer, (o_outer, i_outer, u_outer) = coalesce(shape[:axis], cs[:axis], istr[:axis], ustr[:axis])
    rest, (o_rest, i_rest, u_rest) = coalesce(shape[axis + 1:], cs[axis + 1:], istr[axis + 1:],
                                              ustr[axis + 1:])
    inner, o_inner, i_inner, u_inner = ((rest[-1], o_rest[-1], i_rest[-1], u_rest[-1])
                                        if rest else (1, 0, 0, 0))
    block = max(1, _SCATTER_BLOCK_BYTES // itemsize) if inner > 1 else 1
    lanes = math.prod(outer) * math.prod(rest[:-1]) * -(-inner // block)
    head = (_vec(outer), _vec(o_outer), _vec(i_outer), _vec(u_outer), out_shape[axis], cs[axis])
    m, i_m, u_m = shape[axis], istr[axis], ustr[axis]
    tail = (_vec(rest[:-1]), _vec(o_rest[:-1]), _vec(i_rest[:-1]), _vec(u_rest[:-1]), inner,
            o_inner, i_inner, u_inner, block)
    kern = K.scatter_lanes
    call = planned_call(kern) if planned else functools.partial(run, kern)

    def go(out, ibase, ioffset, ubase, uoffset, parts, op, mode, bad, work):
        call(work, out, *head, ibase, ioffset, m, i_m, ubase, uoffset, u_m, *tail, parts,
             op, mode, bad)

    return lanes, go


def _scatter_into(out, idx, upd, axis, op, mode) -> bool:
    """Run ``scatter_lanes`` into the C-contiguous *out*; True when an index was
    out of range under raise. *idx* and *upd* have the same shape, at most *out*'s
    outside *axis*; bool work (add as or, mul as and) is mapped by the caller."""
    ibase, ioffset, istr = strided_base(idx)
    ubase, uoffset, ustr = strided_base(upd)
    lanes, go = _scatter_runner(out.shape, out.itemsize, idx.shape, axis, istr, ustr)
    parts = _ONE_DESTINATION_PART
    bad = np.zeros(lanes * parts, np.uint8)
    go(out.reshape(-1), ibase, ioffset, ubase, uoffset, parts, op, mode, bad, idx.size)
    return bool(np.count_nonzero(bad))

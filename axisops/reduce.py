"""Reductions and arg-reductions along any axes.

Every function here validates its arguments, builds a ``ReductionView`` of the
input (no copy), runs one kernel from ``axisops.kernels.reduce`` and shapes the
result. Results follow NumPy: same values (float sums to within their rounding
error, which is at most NumPy's: see ``kernels.reduce``; float products bit for
bit, in index order), same dtypes, and a NumPy scalar where NumPy returns one.

Complex numbers (complex64, complex128; see ``axisops._complex``): ``sum`` and
``mean`` run the real kernels on the real and imaginary parts, so they are as
accurate as float sums; ``prod`` is NumPy's own complex product (a complex product
is not componentwise), single-threaded, with NumPy's bits. Decision: a real
``dtype=`` for a complex input is a ``TypeError`` (NumPy warns and drops the
imaginary part). ``max``, ``min``, ``argmax`` and ``argmin`` refuse complex numbers
(``TypeError``), as PyTorch does: they have no order.
"""
from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from . import _complex, _dates, _dtypes, _fast
from ._axes import normalize_axes, reduced_shape
from ._dispatch import dispatched
from ._jit import planned_run
from ._layout import ReductionView, needs_copy, reduction_view, restore_kept_order
from ._plan import PlanCache, array_key, axis_key, base_maker, readable_copy, viewed
from .kernels import reduce as K
from .kernels.common import count_valid, skip_nan
from .typing import ArrayLike, ArrayOrScalar, Axis, DTypeLike, Shape

__all__ = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "unravel"]

#: Reduced elements per chunk. A reduction over more than ``2 * _CHUNK`` elements
#: is split into chunks that run in parallel and are combined in order; the split
#: depends only on the shape, so results do not depend on the thread count.
_CHUNK = 1 << 15
#: Widest block of ``inner`` one row-order task keeps running values for.
_INNER_BLOCK = 2048
#: Outputs one lane-order task scans, row by row of the reduced block.
_LANE_BLOCK = 64
#: Reduced runs this short are swept as rows of outputs whatever the strides.
_SHORT_RUN = 16
#: Fewer outputs than this along the nearest kept axis: each scans its own run
#: (four side by side in the extremes' kernel). Max and min without positions
#: took rows from four outputs, which paid on AMD Zen 5 before the four-lane scan:
#: now the max of a (262144, 4) float32 array along axis 0 takes 118 us as lanes,
#: 514 as rows (one thread, AMD EPYC Zen 4).
_FEW_LANES = 8
#: Elements of a reduction per unit of ``_jit.PARALLEL_MIN_WORK``: a reduction
#: reads each element once and does little with it, so the pool's wake-up pays
#: later than for a scan. Measured on an AMD EPYC (2 vCPUs), float32, one thread
#: against two: sum of 256K elements 48 against 172 us, of 1M 112 against 143, of
#: 4M 800 against 508; argmax of (1024, 1024) along axis 1 371 against 215, of
#: 256K 64 against 189; cumsum of 256K already 364 against 332.
_ELEMENTS_PER_WORK = 8
#: A float sum along one contiguous axis with fewer outputs than this after it is
#: folded (see :func:`_fold`), from this many elements up, into about this many lanes.
_FOLD_MAX_INNER = 16
_FOLD_MIN_SIZE = 1 << 16
_FOLD_LANES = 512
#: Plans of every function here (see ``axisops._plan``).
_PLANS = PlanCache()


@dispatched(scalar=_fast.scalar_call("sum", "not keepdims and dtype is None", ", f[2]"))
def sum(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
           dtype: DTypeLike | None = None) -> ArrayOrScalar:
    """Sum of array elements over the given axes, as ``numpy.sum``.

    The result has NumPy's dtype and NumPy's value, float sums to within their
    rounding error, which is at most NumPy's (they are cascaded: see the contract's
    section on accuracy). The order of the additions depends on the shape only, so
    the result is the same, bit for bit, for every :func:`thread_limit`.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to sum over; negative ones count from the end. ``None`` (the
        default) sums every axis, ``()`` none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    dtype : dtype, optional
        Result and accumulator dtype. Default None: NumPy's (int64 for small
        signed ints and bool, uint64 for small unsigned ints). float16 accumulates
        in float32.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        The sums, of ``x``'s shape without the reduced axes (with them as length 1
        for ``keepdims``); a NumPy scalar where that shape is ``()``, as NumPy gives.

    Raises
    ------
    TypeError
        If ``x`` or ``dtype`` is not of a bool, integer, float or complex64/complex128
        dtype (object, strings, ...), a real ``dtype`` for a complex ``x`` (it would
        drop the imaginary part), or ``axis`` is not an int, a tuple of ints or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice.

    See Also
    --------
    mean : Arithmetic mean over the given axes.
    prod : Product over the given axes.
    cumsum : Cumulative sum along an axis.
    axisops.grad.sum : Gradient of ``sum``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.arange(6).reshape(2, 3)
    >>> axisops.sum(x, axis=0)
    array([3, 5, 7])
    >>> axisops.sum(x, axis=(0, 1), keepdims=True)
    array([[15]])
    """
    return _value_reduction("sum", x, axis, keepdims, dtype)


@dispatched(scalar=_fast.scalar_call("prod", "not keepdims and dtype is None", ", f[2]"))
def prod(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
            dtype: DTypeLike | None = None) -> ArrayOrScalar:
    """Product of array elements over the given axes, as ``numpy.prod``.

    Integer products wrap around exactly as NumPy's do. A float product along a
    row in memory of 1024 elements or more is multiplied in float64 with the
    exponents kept apart and rounded once: it overflows or underflows only where
    the exact product does, and a float32 one is the exact product correctly
    rounded. Other float products multiply in index order, NumPy's sequential
    product bit for bit (see docs/contract.md, *Products*).

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to multiply over; negative ones count from the end. ``None`` (the
        default) multiplies over every axis, ``()`` over none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    dtype : dtype, optional
        Result and accumulator dtype. Default None: NumPy's (int64 for small
        signed ints and bool, uint64 for small unsigned ints). float16 accumulates
        in float32.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        The products (1 over an empty set), of ``x``'s shape without the reduced
        axes (with them as length 1 for ``keepdims``); a NumPy scalar where that
        shape is ``()``, as NumPy gives.

    Raises
    ------
    TypeError
        If ``x`` or ``dtype`` is not of a bool, integer, float or complex64/complex128
        dtype (object, strings, ...), a real ``dtype`` for a complex ``x`` (it would
        drop the imaginary part), or ``axis`` is not an int, a tuple of ints or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice.

    See Also
    --------
    sum : Sum over the given axes.
    cumprod : Cumulative product along an axis.
    axisops.grad.prod : Gradient of ``prod``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.prod(np.array([[1., 2.], [3., 4.]]), axis=1)
    array([ 2., 12.])
    """
    return _value_reduction("prod", x, axis, keepdims, dtype)


@dispatched(scalar=_fast.scalar_call("mean", "not keepdims and dtype is None", ", f[2]"))
def mean(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
            dtype: DTypeLike | None = None) -> ArrayOrScalar:
    """Arithmetic mean over the given axes, as ``numpy.mean``.

    Integer and bool inputs give float64; float16 accumulates in float32 and
    returns float16. The mean is the (cascaded) sum divided once by the number of
    elements. The mean of an empty set is NaN with a ``RuntimeWarning``.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to average over; negative ones count from the end. ``None`` (the
        default) averages over every axis, ``()`` over none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    dtype : dtype, optional
        Result dtype, as ``numpy.mean``'s ``dtype``. Default None: float64 for
        bool and integer inputs, ``x``'s own dtype for floats.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        The means, of ``x``'s shape without the reduced axes (with them as length
        1 for ``keepdims``); a NumPy scalar where that shape is ``()``, as NumPy
        gives.

    Raises
    ------
    TypeError
        If ``x`` or ``dtype`` is not of a bool, integer, float or complex64/complex128
        dtype (object, strings, ...), a real ``dtype`` for a complex ``x`` (it would
        drop the imaginary part), or ``axis`` is not an int, a tuple of ints or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice.

    Warns
    -----
    RuntimeWarning
        "Mean of empty slice", when the means are taken over an empty set (they
        are NaN).

    See Also
    --------
    sum : Sum over the given axes.
    axisops.grad.mean : Gradient of ``mean``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.mean(np.array([[1, 2], [3, 5]]), axis=0)
    array([2. , 3.5])
    """
    return _value_reduction("mean", x, axis, keepdims, dtype)


@dispatched(scalar=_fast.scalar_call("max", "not keepdims"))
def max(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> ArrayOrScalar:
    """Maximum over the given axes, as ``numpy.max``; NaN propagates.

    Raises ``ValueError`` for a reduction over an empty set. The values and dtype
    are NumPy's, except that a maximum that is a float zero comes back as +0.0
    whatever the sign of the zeros it was taken from (they compare equal), and a
    NaN as the default NaN.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to reduce; negative ones count from the end. ``None`` (the default)
        reduces every axis, ``()`` none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        The maxima, in ``x``'s dtype, of ``x``'s shape without the reduced axes
        (with them as length 1 for ``keepdims``); a NumPy scalar where that shape
        is ``()``, as NumPy gives.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        strings, ...), or ``axis`` is not an int, a tuple of ints or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice, or a reduced axis has length 0 (a maximum
        of an empty set has no identity).

    See Also
    --------
    min : Minimum over the given axes.
    argmax : Index of the maximum.
    cummax : Running maximum along an axis.
    axisops.grad.max : Gradient of ``max``, split evenly between ties.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.max(np.array([[1., 5.], [np.nan, 2.]]), axis=1)
    array([ 5., nan])
    """
    return _arg_reduction("max", x, axis, keepdims, False, np.int64)


@dispatched(scalar=_fast.scalar_call("min", "not keepdims"))
def min(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> ArrayOrScalar:
    """Minimum over the given axes, as ``numpy.min``; NaN propagates.

    The same rules as :func:`max`: a reduction over an empty set raises
    ``ValueError``; a minimum that is a float zero comes back as +0.0 whatever the
    sign of the zeros it was taken from, and a NaN as the default NaN.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axes to reduce; negative ones count from the end. ``None`` (the default)
        reduces every axis, ``()`` none.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        The minima, in ``x``'s dtype, of ``x``'s shape without the reduced axes
        (with them as length 1 for ``keepdims``); a NumPy scalar where that shape
        is ``()``, as NumPy gives.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        strings, ...), or ``axis`` is not an int, a tuple of ints or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice, or a reduced axis has length 0 (a minimum
        of an empty set has no identity).

    See Also
    --------
    max : Maximum over the given axes.
    argmin : Index of the minimum.
    cummin : Running minimum along an axis.
    axisops.grad.min : Gradient of ``min``, split evenly between ties.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.min(np.array([[1, 5], [4, 2]]), axis=0)
    array([1, 2])
    """
    return _arg_reduction("min", x, axis, keepdims, False, np.int64)


@dispatched(scalar=_fast.scalar_call("argmax", "not keepdims and not select_last_index and index_dtype is int64"))
def argmax(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
           select_last_index: bool = False, index_dtype: DTypeLike = np.int64) -> ArrayOrScalar:
    """Index of the maximum over one axis or several, as ``numpy.argmax``.

    Ties give the first index, or the last with ``select_last_index=True`` (ONNX
    ArgMax). A NaN counts as the maximum: the first NaN wins (the last with
    ``select_last_index``). With a tuple ``axis`` the index is into the C-ordered
    block of the reduced axes, taken in increasing order; ``axisops.unravel``
    turns it back into one index per axis. ``axis=None`` indexes the flattened
    array.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axis or axes to reduce; negative ones count from the end. Default None:
        every axis, the index into the flattened array.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    select_last_index : bool, optional
        Give the last index of the ties (and of the NaNs) instead of the first.
        Default False.
    index_dtype : {int32, int64}, optional
        dtype of the indices. Default int64. int32 that cannot hold them (a
        reduced block of more than 2**31 elements) raises ``OverflowError``.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        The indices, of ``index_dtype``, of ``x``'s shape without the reduced axes
        (with them as length 1 for ``keepdims``); a NumPy scalar where that shape
        is ``()``, as NumPy gives.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        strings, ...), ``axis`` is not an int, a tuple of ints or None, or
        ``index_dtype`` is not int32 or int64.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice, or a reduced axis has length 0 (no
        maximum to point to).
    OverflowError
        If ``index_dtype`` is int32 and the reduced block has more than 2**31
        elements.

    See Also
    --------
    unravel : One index per reduced axis from a tuple-axis index.
    argmin : Index of the minimum.
    max : Maximum over the given axes.
    axisops.grad.max : Gradient of ``max`` (``argmax`` has none).

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.array([[1, 7, 7], [9, 0, 9]])
    >>> axisops.argmax(x, axis=1)
    array([1, 0])
    >>> axisops.argmax(x, axis=1, select_last_index=True)
    array([2, 2])
    >>> axisops.argmax(x, axis=(0, 1))
    np.int64(3)
    """
    return _arg_reduction("argmax", x, axis, keepdims, select_last_index, index_dtype)


@dispatched(scalar=_fast.scalar_call("argmin", "not keepdims and not select_last_index and index_dtype is int64"))
def argmin(x: ArrayLike, axis: Axis = None, *, keepdims: bool = False,
           select_last_index: bool = False, index_dtype: DTypeLike = np.int64) -> ArrayOrScalar:
    """Index of the minimum over one axis or several, as ``numpy.argmin``.

    Same rules as :func:`argmax`: first index on ties (last with
    ``select_last_index``), a NaN counts as the minimum. With a tuple ``axis`` the
    index is into the C-ordered block of the reduced axes (see :func:`unravel`);
    ``axis=None`` indexes the flattened array.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int, tuple of ints or None, optional
        Axis or axes to reduce; negative ones count from the end. Default None:
        every axis, the index into the flattened array.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    select_last_index : bool, optional
        Give the last index of the ties (and of the NaNs) instead of the first.
        Default False.
    index_dtype : {int32, int64}, optional
        dtype of the indices. Default int64. int32 that cannot hold them (a
        reduced block of more than 2**31 elements) raises ``OverflowError``.

    Returns
    -------
    numpy.ndarray or NumPy scalar
        The indices, of ``index_dtype``, of ``x``'s shape without the reduced axes
        (with them as length 1 for ``keepdims``); a NumPy scalar where that shape
        is ``()``, as NumPy gives.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        strings, ...), ``axis`` is not an int, a tuple of ints or None, or
        ``index_dtype`` is not int32 or int64.
    numpy.exceptions.AxisError
        If an axis is out of range for ``x.ndim``.
    ValueError
        If ``axis`` names an axis twice, or a reduced axis has length 0 (no
        minimum to point to).
    OverflowError
        If ``index_dtype`` is int32 and the reduced block has more than 2**31
        elements.

    See Also
    --------
    unravel : One index per reduced axis from a tuple-axis index.
    argmax : Index of the maximum.
    min : Minimum over the given axes.
    axisops.grad.min : Gradient of ``min`` (``argmin`` has none).

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.argmin(np.array([3., np.nan, 1., np.nan]))
    np.int64(1)
    """
    return _arg_reduction("argmin", x, axis, keepdims, select_last_index, index_dtype)


@dispatched
def unravel(idx: ArrayLike, shape: Shape, axis: Axis) -> tuple[ArrayOrScalar, ...]:
    """Turn a tuple-axis ``argmax``/``argmin`` index into one index array per axis.

    The index that :func:`argmax` or :func:`argmin` gives for a tuple ``axis``
    points into the C-ordered block of the reduced axes; this splits it, as
    ``numpy.unravel_index`` over that block.

    Parameters
    ----------
    idx : array_like of int
        The indices, of any integer dtype, each in ``[0, size)`` where ``size`` is
        the number of elements of the reduced block.
    shape : sequence of ints
        The shape of the array that was reduced.
    axis : int, tuple of ints or None
        The axes it was reduced over (as given to ``argmax``; ``None`` means all).

    Returns
    -------
    tuple of numpy.ndarray or NumPy scalars
        One index array (or scalar, for a scalar ``idx``) of ``idx``'s shape per
        reduced axis, in increasing axis order; ``()`` for ``axis=()``.

    Raises
    ------
    TypeError
        If ``idx`` is not of an integer dtype (float and bool included), or
        ``axis`` is not an int, a tuple of ints or None.
    numpy.exceptions.AxisError
        If an axis is out of range for ``len(shape)``.
    ValueError
        If ``axis`` names an axis twice.
    IndexError
        If an index is outside ``[0, size)`` (it names the first such index and
        the reduced block).

    See Also
    --------
    argmax : Index of the maximum over one axis or several.
    argmin : Index of the minimum over one axis or several.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.arange(24).reshape(2, 3, 4)
    >>> i = axisops.argmax(x, axis=(0, 2))
    >>> axisops.unravel(i, x.shape, (0, 2))
    (array([1, 1, 1]), array([3, 3, 3]))
    """
    idx = np.asarray(idx)
    block = _unravel_block(shape, axis, idx.dtype)
    count = math.prod(block)
    if idx.size and (idx.min() < 0 or idx.max() >= count):
        bad = idx.reshape(-1)[np.argmax((idx.reshape(-1) < 0) | (idx.reshape(-1) >= count))]
        raise IndexError(f"unravel: index {bad} is out of range [0, {count}) for the reduced block {block}")
    return tuple(np.unravel_index(idx, block)) if block else ()


# --------------------------------------------------------------------------- helpers


def _unravel_block(shape, axis, idx_dtype) -> tuple[int, ...]:
    """The reduced block that :func:`unravel` splits indices of *idx_dtype* over,
    after its checks (also those of the CUDA path)."""
    shape = tuple(int(n) for n in shape)
    axes = normalize_axes(axis, len(shape), "unravel")
    if np.dtype(idx_dtype).kind not in "iu":
        raise TypeError(f"unravel: indices must be integers, got {np.dtype(idx_dtype)}")
    return tuple(shape[d] for d in axes)


def _scalar_or_array(res: np.ndarray):
    return res[()] if res.ndim == 0 else res


def _chunking(total: int) -> tuple[int, int]:
    """(number of chunks, chunk length) for a reduced block of *total* elements."""
    if total <= 2 * _CHUNK:
        return 1, builtins.max(total, 1)
    return -(-total // _CHUNK), _CHUNK


def _row_order(view: ReductionView) -> bool:
    """Whether the kernel sweeps rows of ``inner`` outputs (else each output scans
    its own run; see ``kernels.reduce``): when ``inner`` is nearer in memory than
    the reduced axis, as ``view.row_order`` says, and also when the reduced runs
    are so short that a loop per output costs more than a strided row (measured
    on (4M, 4) float32 along axis 1). Never changes a result."""
    if view.inner <= 1:
        return False
    if view.reduced_count <= _SHORT_RUN:
        return True
    if view.inner < _FEW_LANES:
        return False
    return view.row_order


def _inner_block(view: ReductionView, chunks: int, parallel: bool = True) -> int:
    """How many ``inner`` outputs one task handles (never changes any result)."""
    widest = _INNER_BLOCK if _row_order(view) else _LANE_BLOCK
    tasks_without_blocks = view.outer * chunks
    if tasks_without_blocks >= 8 or not parallel:
        return builtins.min(view.inner, widest)
    # few tasks otherwise: split inner so that every core has work (on one thread
    # the narrower blocks only cost: sum of (1024, 2048) float32 along axis 0 took
    # 303 us in blocks of 256 against 257 us whole, argmax 736 against 587 us)
    return builtins.max(1, builtins.min(widest, -(-view.inner // 8)))


def _geometries(view: ReductionView, chunk_len: int, chunks: int) -> tuple[tuple, tuple]:
    """The kernel's geometry arguments for a call split between threads and for one
    on the calling thread (see :func:`_inner_block`)."""
    return (_kernel_args(view, chunk_len, _inner_block(view, chunks)),
            _kernel_args(view, chunk_len, _inner_block(view, chunks, parallel=False)))


def _kernel_args(view: ReductionView, chunk_len: int, inner_block: int) -> tuple:
    """The view's geometry as the kernels take it: one int64 array (see
    ``kernels.reduce._geometry``)."""
    head = [view.offset, view.inner, view.inner_stride, view.n, view.n_stride, chunk_len,
            inner_block, view.outer_shape.size, view.red_shape.size]
    geo = np.concatenate([np.asarray(head, np.int64), view.outer_shape, view.outer_strides,
                          view.red_shape, view.red_strides]).astype(np.int64)
    geo.flags.writeable = False
    return (geo,)


def _value_reduction(op: str, x, axis, keepdims: bool, dtype):
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    elif not keepdims and dtype is None:  # the common call: one compiled entry
        res = _fast.value(op, x, axis)
        if res is not None:
            return res
    try:
        key = (op, *array_key(x), axis_key(axis), keepdims, dtype)
    except TypeError:
        key = None
    return _PLANS.plan(key, _value_plan, op, x, axis, keepdims, dtype)(x)


def _complex_value_plan(op: str, x: np.ndarray, axis, keepdims: bool, dtype):
    """sum/mean of complex numbers: the real kernels on the two parts; prod: NumPy's
    own complex product (not componentwise), in NumPy's order and bits."""
    axes = normalize_axes(axis, x.ndim, op)
    res = _complex.result_dtype(op, x.dtype, dtype)
    if op == "prod":
        return lambda x: _scalar_or_array(np.prod(x, axis=axes, dtype=res, keepdims=keepdims))

    def plan(x):
        z = x.astype(res, copy=False)
        return _complex.componentwise(
            lambda part: _value_reduction(op, part, axes, keepdims, None), z)

    return plan


#: The NaN-skipping value reductions and their plain twins (see ``axisops.nan``).
_NAN_TWINS = {"nansum": "sum", "nanprod": "prod"}


def _value_plan(op: str, x: np.ndarray, axis, keepdims: bool, dtype):
    """The plan of sum/prod/mean, their NaN-skipping twins nansum/nanprod and
    count (of the elements that are not NaN) for arrays described like *x* (see
    ``_plan``). The NaN-skipping ones run the same kernels, whose loads read a NaN
    as the sum's or product's identity (``kernels.common.skip_nan``) or, for
    count, every element as 1 or 0 (``count_valid``)."""
    if needs_copy(x):
        return lambda x: _value_reduction(op, readable_copy(x), axis, keepdims, dtype)
    plain = _NAN_TWINS.get(op, op)
    if (x.dtype.kind == "m" and op in ("sum", "mean", "nansum", "nanmean", "count")) or (
            x.dtype.kind == "M" and op == "count"):  # durations add up; NaT as NaN
        return _dates.timedelta_sum_plan(op, _value_reduction, axis, keepdims, dtype)
    if op != plain and x.dtype.kind not in "fc":  # no NaN to skip
        _dtypes.check_dtype(x.dtype, op)
        return _value_plan(plain, x, axis, keepdims, dtype)
    if op == "count":
        return _count_plan(x, axis, keepdims)
    if _complex.is_complex(x.dtype) or _complex.is_complex(dtype):
        if op != plain:  # a NaN in either part skips the element, as NumPy's isnan says
            fill = 0 if plain == "sum" else 1
            return lambda x: _value_reduction(plain, np.where(np.isnan(x), fill, x), axis,
                                              keepdims, dtype)
        return _complex_value_plan(op, x, axis, keepdims, dtype)
    _dtypes.check_dtype(x.dtype, op)
    axes = normalize_axes(axis, x.ndim, op)
    count = math.prod(x.shape[d] for d in axes)
    if op == "mean":
        res_dtype, acc_dtype = _dtypes.mean_dtypes(x.dtype, dtype)
    else:
        res_dtype, acc_dtype = _dtypes.sum_dtypes(x.dtype, dtype, plain)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    if op != plain and acc_dtype.kind != "f":
        # NaN has no integer value: replaced by the identity before converting
        fill = 0 if plain == "sum" else 1
        return lambda x: _value_reduction(plain, np.where(np.isnan(x), fill, x), axes,
                                          keepdims, dtype)
    if res_dtype.kind == "b":
        # NumPy's add/multiply on booleans are logical or/and of the elements
        extreme = "max" if op == "sum" else "min"
        return lambda x: _scalar_or_array(np.asarray(
            _arg_reduction(extreme, x.astype(bool, copy=False), axes, keepdims, False, np.int64),
            dtype=bool))
    if count == 0 or x.size == 0:
        return lambda x: _scalar_or_array(_empty_value_reduction(plain, out_shape, res_dtype, count))
    default_acc = (_dtypes.mean_dtypes(x.dtype, None) if op == "mean"
                   else _dtypes.sum_dtypes(x.dtype, None, op))[1]
    if acc_dtype.kind == "f" and acc_dtype != default_acc:
        # A dtype= that asks for another float accumulator: x converted first (as
        # NumPy converts each element before adding it), so the kernel is compiled per
        # accumulator, not per pair of input and accumulator (as the scans do)
        return lambda x: _value_reduction(op, x.astype(acc_dtype), axes, keepdims, dtype)

    if plain != "prod" and x.dtype == acc_dtype == res_dtype and acc_dtype.kind == "f":
        fold = _fold(x, axes)
        if fold is not None:
            return _folded_sum_plan(op, out_shape, *fold)
        if x.ndim == 2 and x.flags.f_contiguous and len(axes) == 1:
            # a transposed table (a tall table's columns): folded as its C-contiguous x.T,
            # the same elements per output in the same order (sum of (4, 256K) F-ordered
            # float32 along axis 1: 308 -> 61 us on an AMD EPYC, one thread)
            fold = _fold(x.T, (1 - axes[0],))
            if fold is not None:
                folded = _folded_sum_plan(op, out_shape, *fold)
                return lambda x: folded(x.T)

    view = reduction_view(x, axes, keep_order=False)
    if acc_dtype.kind != "f":
        combine = K.COMBINE_ANY  # integers wrap: any order gives the same result
    elif plain == "prod":
        combine = K.COMBINE_ORDERED
    else:
        combine = K.COMBINE_CASCADE
    if combine == K.COMBINE_ORDERED:
        # a float product is unsplit (scaled along rows in memory, else in index
        # order): chunks' products rounded alone could overflow or underflow
        chunks, chunk_len = 1, builtins.max(view.reduced_count, 1)
    else:
        chunks, chunk_len = _chunking(view.reduced_count)
    partial_shape = (view.outer, chunks, view.inner)
    table = None
    make_base = base_maker(x)
    if x.dtype == np.float16:
        table = _dtypes.float16_table()
        make_base = viewed(make_base, np.uint16)
    elif x.dtype == np.bool_:
        make_base = viewed(make_base, np.uint8)
    # integers accumulate in int64 whether signed or not, uint64 read as int64: a
    # first uint64 call after an int64 one compiles nothing
    kernel_acc = _dtypes.kernel_accumulator(acc_dtype)
    if kernel_acc.kind == "i" and x.dtype == np.uint64:
        make_base = viewed(make_base, np.int64)
    if op != plain:  # a NaN reads as the identity
        table = skip_nan(table, 0.0 if plain == "sum" else 1.0)
    split, whole = _geometries(view, chunk_len, chunks)
    rest = (K.OP_PROD if plain == "prod" else K.OP_SUM, table)
    kern, work, x_shape = K.value_kernel(_row_order(view), combine), _work(x.size), x.shape
    in_order = list(view.kept_order) == sorted(view.kept_order)
    direct = chunks == 1 and res_dtype == acc_dtype and op != "mean" and in_order
    # a float mean in one chunk: the kernel's sums divided in place are the result
    # (the general finish copied, divided and restored the order: a mean of 1000
    # float64 took 20 us against the sum's 8)
    direct_mean = (chunks == 1 and op == "mean" and res_dtype == acc_dtype == kernel_acc
                   and acc_dtype.kind == "f" and in_order)
    acc_type = acc_dtype.type  # the divisor as NumPy converts a Python int for the ufunc
    scalar = len(out_shape) == 0
    # a float sum or mean of several lanes cut into chunks: the chunks' pairwise tree
    # written into the result at once (finish took 2 us of a sum of (4, 262144)
    # float32 along axis 1; a lane alone is NumPy's sum of its chunks, as finish adds)
    folded = (chunks > 1 and view.inner > 1 and in_order and op in ("sum", "nansum", "mean")
              and res_dtype == acc_dtype == kernel_acc and acc_dtype.kind == "f")
    lanes_shape = (view.outer, view.inner)

    def finish(partial):
        if chunks == 1:
            acc = partial[:, 0, :]
        elif plain == "prod":  # integers only: float products have one chunk
            acc = partial.prod(axis=1, dtype=acc_dtype)
        else:
            acc = _pairwise_chunks(partial)
        acc = acc.astype(res_dtype, copy=False) if res_dtype.kind in "iu" else acc
        if op == "mean":  # as NumPy: divide the sum (wrapped to an integer dtype if asked) in place
            acc = np.true_divide(acc, count, out=np.array(acc), casting="unsafe")
        res = restore_kept_order(acc.astype(res_dtype, copy=False), x_shape, view, out_shape)
        return _scalar_or_array(res)

    call = planned_run(kern)

    def plan(x):
        partial = np.empty(partial_shape, kernel_acc)
        call(work, make_base(x), split, whole, *rest, partial)
        if kernel_acc != acc_dtype:
            partial = partial.view(acc_dtype)
        if direct:  # the kernel's output is the result
            return partial.reshape(out_shape)[()] if scalar else partial.reshape(out_shape)
        if direct_mean:
            if scalar:  # a NumPy scalar divides without a ufunc call's set-up
                return partial[0, 0, 0] / acc_type(count)
            res = partial.reshape(out_shape)
            np.true_divide(res, count, out=res)
            return res
        if folded:
            res = np.empty(out_shape, acc_dtype)
            K.pairwise_fold(partial, res.reshape(lanes_shape))
            if op == "mean":
                np.true_divide(res, count, out=res)
            return res
        return finish(partial)

    return plan


def _work(size: int) -> int:
    """A reduction's work in ``_jit.PARALLEL_MIN_WORK``'s units (see
    :data:`_ELEMENTS_PER_WORK`)."""
    return size // _ELEMENTS_PER_WORK


def _fold(x: np.ndarray, axes: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """(outer, n, inner, k) when a float sum of *x* over *axes* is better taken with
    its reduced axis folded: one axis of n elements with fewer than
    :data:`_FOLD_MAX_INNER` outputs after it, contiguous, large. The kernel then sums
    ``(outer, n // k, k * inner)`` along its middle axis, :data:`_FOLD_LANES` or so
    outputs side by side (enough that a call split between threads still gives
    each task a block of 64 lanes: see :func:`_inner_block`), and the k partial
    sums of each output are added in a pairwise tree (see :func:`_folded_sum_plan`). A row of four or eight outputs
    left the row-order kernel's vector loop a few lanes wide: sum of (262144, 4)
    float32 along axis 0 took 560 us, torch 310; of (8, 16384, 8) along axis 1
    460 us, torch 78."""
    if len(axes) != 1 or not x.flags.c_contiguous or x.size < _FOLD_MIN_SIZE:
        return None
    a = axes[0]
    inner = math.prod(x.shape[a + 1:])
    n = x.shape[a]
    if not 1 < inner < _FOLD_MAX_INNER:
        return None
    k = 1
    while k * 2 * inner <= _FOLD_LANES:
        k *= 2
    if n < 16 * k:
        return None
    return x.size // (n * inner), n, inner, k


def _folded_sum_plan(op: str, out_shape, outer: int, n: int, inner: int, k: int):
    """The plan of a float sum or mean folded as :func:`_fold` says: the same
    numbers as the kernel's cascade would add, in another fixed order (the shape
    alone fixes it; never the threads). Each of the ``k * inner`` lanes is a
    cascade over ``n // k`` elements; lane ``g * inner + i`` holds output i's
    elements ``g, g + k, ...``; the k lanes of an output are added in a pairwise
    tree, and the ``n % k`` rows left over last."""
    m = n - n % k
    summed = "nansum" if op == "nansum" else "sum"

    def plan(x):
        x3 = x.reshape(outer, n, inner)
        main = x3[:, :m].reshape(outer, m // k, k * inner)
        part = _value_reduction(summed, main, 1, False, None).reshape(outer, k, inner)
        total = np.empty((outer, inner), part.dtype)
        K.pairwise_fold(part, total)
        if m < n:
            total = total + _value_reduction(summed, x3[:, m:], 1, False, None)
        if op == "mean":
            total = np.true_divide(total, n, out=total)
        return total.reshape(out_shape)

    return plan


def _count_plan(x: np.ndarray, axis, keepdims: bool):
    """The plan of ``count``: elements that are not NaN, as int64. Floats: a sum of
    ones and zeros by the sum kernel (``kernels.common.count_valid``), in float64,
    exact to 2**53; integers and bool: the number of reduced elements."""
    op = "count"
    axes = normalize_axes(axis, x.ndim, op)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    if x.dtype.kind == "c":
        return lambda x: _scalar_or_array(np.asarray(
            np.sum(~np.isnan(x), axis=axes, keepdims=keepdims, dtype=np.int64)))
    _dtypes.check_dtype(x.dtype, op)
    count = math.prod(x.shape[d] for d in axes)
    if x.dtype.kind != "f" or x.size == 0:
        return lambda x: _scalar_or_array(np.full(out_shape, count, np.int64))
    view = reduction_view(x, axes, keep_order=False)
    chunks, chunk_len = _chunking(view.reduced_count)
    make_base, table = base_maker(x), None
    if x.dtype == np.float16:
        table = _dtypes.float16_table()
        make_base = viewed(make_base, np.uint16)
    split, whole = _geometries(view, chunk_len, chunks)
    rest = (K.OP_SUM, count_valid(table))
    kern = K.value_kernel(_row_order(view), K.COMBINE_CASCADE)
    work, x_shape, partial_shape = _work(x.size), x.shape, (view.outer, chunks, view.inner)
    call = planned_run(kern)

    def plan(x):
        partial = np.empty(partial_shape, np.float64)
        call(work, make_base(x), split, whole, *rest, partial)
        total = partial[:, 0, :] if chunks == 1 else partial.sum(axis=1)
        res = restore_kept_order(total.astype(np.int64), x_shape, view, out_shape)
        return _scalar_or_array(res)

    return plan


def _pairwise_chunks(partial: np.ndarray) -> np.ndarray:
    """Sum of (outer, chunks, inner) chunk sums over the chunks, in a pairwise tree
    fixed by their number (NumPy's ``sum(axis=1)`` adds them in order when
    ``inner > 1``; with one lane it is NumPy's pairwise sum, and one call). Several
    lanes take one compiled call, not a NumPy add per level (a sum of (4, 262144)
    float32 along axis 1: 4.4 -> 2.0 us)."""
    if partial.shape[2] == 1:
        return partial.sum(axis=1)
    out = np.empty((partial.shape[0], partial.shape[2]), partial.dtype)
    K.pairwise_fold(partial, out)
    return out


def _empty_value_reduction(op, out_shape, res_dtype, count):
    if op == "prod":
        return np.ones(out_shape, res_dtype)
    if op == "mean" and count == 0 and math.prod(out_shape) > 0:
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=5)
        return np.full(out_shape, np.nan, res_dtype)
    return np.zeros(out_shape, res_dtype)


def _arg_reduction(op: str, x, axis, keepdims: bool, select_last: bool, index_dtype,
                   all_nan_index=None):
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    elif (not keepdims and not select_last and index_dtype is np.int64
          and all_nan_index is None):  # the common call: one compiled entry
        res = _fast.arg(op, x, axis)
        if res is not None:
            return res
    try:
        key = (op, *array_key(x), axis_key(axis), keepdims, select_last, index_dtype,
               all_nan_index)
    except TypeError:
        key = None
    return _PLANS.plan(key, _arg_plan, op, x, axis, keepdims, select_last, index_dtype,
                       all_nan_index)(x)


def _arg_plan(op: str, x: np.ndarray, axis, keepdims: bool, select_last: bool, index_dtype,
              all_nan_index=None):
    """The plan of max/min/argmax/argmin and of their NaN-skipping twins
    nanmax/nanmin/nanargmax/nanargmin for arrays described like *x*."""
    if needs_copy(x):
        return lambda x: _arg_reduction(op, readable_copy(x), axis, keepdims, select_last,
                                        index_dtype, all_nan_index)
    if _dates.is_date(x.dtype):  # the int64 keys, NaT as the NaN (see axisops._dates)
        return _dates.arg_plan(op, _arg_reduction, axis, keepdims, select_last, index_dtype,
                               all_nan_index)
    _dtypes.check_dtype(x.dtype, op)
    skip_nan = op.startswith("nan")
    if skip_nan:
        _dtypes.check_all_nan_index(all_nan_index, op)
        if x.dtype.kind != "f":  # no NaN to skip: the plain twin
            return _arg_plan(op[3:], x, axis, keepdims, select_last, index_dtype)
        op = op[3:]
    axes = normalize_axes(axis, x.ndim, op)
    count = math.prod(x.shape[d] for d in axes)
    want_index = op.startswith("arg")
    if want_index:
        index_dtype = _dtypes.check_index_dtype(index_dtype, op)
        if skip_nan:  # (op has lost its "nan")
            _dtypes.check_all_nan_index(all_nan_index, "nan" + op, index_dtype)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    if count == 0:
        if want_index:
            raise ValueError(f"{op}: attempt to get {op} of an empty sequence")
        name = "maximum" if op == "max" else "minimum"
        raise ValueError(f"{op}: zero-size array to reduction operation {name} which has no identity")
    if want_index:
        _dtypes.check_index_fits(count, index_dtype, op)
    if x.size == 0:
        empty_dtype = index_dtype if want_index else x.dtype
        return lambda x: _scalar_or_array(np.empty(out_shape, empty_dtype))
    seen = x
    if select_last:
        # Reversing every reduced axis maps the C-order index t to count-1-t and
        # turns "last of the ties" into "first of the ties". The reversed view
        # walks the same memory, so the base is made from x itself.
        seen = x[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))]

    view = reduction_view(seen, axes, keep_order=want_index)
    chunks, chunk_len = _chunking(view.reduced_count)
    view_dtype = _dtypes.bits_view_dtype(x.dtype)
    masks = _dtypes.key_masks(x.dtype, view_dtype, invert=op in ("min", "argmin"))
    kern = K.arg_kernel(view_dtype.str, x.dtype.kind == "f", _row_order(view),
                        skip_nan)
    split, whole = (_with_xmask(g, masks[2])
                    for g in _geometries(view, chunk_len, chunks))
    keys_shape = (view.outer, chunks, view.inner)
    index_shape = (view.outer, chunks, view.inner if want_index else 0)
    make_base = viewed(base_maker(x), view_dtype)
    work, dtype, x_shape = _work(x.size), x.dtype, x.shape
    to_values = _values_from_keys(dtype, view_dtype, masks, skip_nan)
    lowest = np.iinfo(view_dtype).min  # the key of an all-NaN output (skip_nan)
    name = "nan" + op if skip_nan else op
    in_order = list(view.kept_order) == sorted(view.kept_order)

    mode = K.WITH_INDEX if want_index else K.AS_VALUES if chunks == 1 else K.KEYS_ONLY

    def finish(keys, index):
        all_nan = None
        if chunks > 1 and want_index:  # the greatest key of the chunks, the first chunk's index of it
            best_keys = np.empty((keys.shape[0], keys.shape[2]), keys.dtype)
            best_index = np.empty(best_keys.shape, np.int64)
            K.best_of_chunks(keys, index, best_keys, best_index)
        if not want_index:  # in one chunk the kernel wrote the values' bits
            res = keys[:, 0, :].view(dtype) if chunks == 1 else to_values(keys)
            if skip_nan and np.isnan(res).any():  # only an all-NaN output is NaN
                warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=6)
        else:
            best = index[:, 0, :] if chunks == 1 else best_index
            if select_last:
                best = (count - 1) - best
            res = best.astype(index_dtype, copy=False)
            if skip_nan:
                all_nan = (keys[:, 0, :] if chunks == 1 else best_keys) == lowest
        if in_order:
            res = res.reshape(out_shape)
        else:
            res = restore_kept_order(res, x_shape, view, out_shape)
        if all_nan is not None and all_nan.any():
            all_nan = restore_kept_order(all_nan, x_shape, view, out_shape)
            res = _all_nan_indices(name, res, all_nan, all_nan_index)
        return res[()] if res.ndim == 0 else res

    # the kernel's output is the result as it is: the index array (the common
    # argmax), or in one chunk the values' bits (max/min)
    direct = (want_index and chunks == 1 and in_order and not select_last
              and index_dtype == np.int64 and not skip_nan)
    direct_values = not want_index and chunks == 1 and in_order and not skip_nan
    scalar = len(out_shape) == 0
    # the nan twins in one chunk: the kernel's values, or its indices where no output
    # is all NaN, as they are (finish only for an all-NaN output's index)
    direct_nan = skip_nan and chunks == 1 and in_order and not select_last
    index_type = np.dtype(index_dtype).type if want_index else None
    # max/min write no index: one empty array serves every call
    no_index = None if want_index else np.empty(index_shape, np.int64)

    call = planned_run(kern)

    def plan(x):
        keys = np.empty(keys_shape, view_dtype)
        index = np.empty(index_shape, np.int64) if no_index is None else no_index
        call(work, make_base(x), split, whole, mode, keys, index)
        if direct:
            return index.reshape(out_shape)[()] if scalar else index.reshape(out_shape)
        if direct_values:
            res = keys.view(dtype).reshape(out_shape)
            return res[()] if scalar else res
        if direct_nan:
            if want_index:
                if scalar:
                    if keys[0, 0, 0] != lowest:
                        return index_type(index[0, 0, 0])
                elif not (keys == lowest).any():
                    return index.reshape(out_shape).astype(index_dtype, copy=False)
                return finish(keys, index)  # an all-NaN output: its index or the error
            res = keys.view(dtype).reshape(out_shape)
            if scalar:
                res = res[()]
                if res != res:  # only an all-NaN output is NaN
                    warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=5)
                return res
            if np.isnan(res).any():
                warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=5)
            return res
        return finish(keys, index)

    return plan


def all_nan_error(op: str, where: tuple[int, ...]) -> ValueError:
    """nanargmax/nanargmin's error for an all-NaN slice at output position *where*."""
    return ValueError(f"{op}: All-NaN slice encountered (at output position {where}); "
                      "pass all_nan_index=-1 (or another int) to get that index instead")


def _all_nan_indices(op: str, res: np.ndarray, all_nan: np.ndarray, all_nan_index):
    """nanargmax/nanargmin's result where some outputs had only NaN (*all_nan*, of
    the result's shape): ``ValueError`` naming the first such position, as NumPy
    raises, or *all_nan_index* there."""
    if all_nan_index is None:
        raise all_nan_error(op, tuple(int(i) for i in np.argwhere(all_nan)[0])
                            if all_nan.ndim else ())
    res = np.array(res)
    res[all_nan] = all_nan_index
    return res


def _with_xmask(geometry: tuple, xmask) -> tuple:
    """An arg-reduction kernel's geometry: the view's, then the key mask ``xmask``
    (the kernel's other masks are its constants)."""
    geo = np.append(geometry[0], np.int64(xmask))
    geo.flags.writeable = False
    return (geo,)


def _values_from_keys(dtype: np.dtype, keys_dtype: np.dtype, masks: tuple,
                      skip_nan: bool = False):
    """The function that turns the kernels' order-preserving keys of the chunks,
    (outer, chunks, inner), into the values of *dtype* of the greatest (see
    ``kernels.common.order_key``; *masks* as made by ``_dtypes.key_masks``;
    ``kernels.reduce.key_bits``): a float extreme that is a zero
    comes back as +0.0 whatever the sign of the zeros it was taken from (they
    compare equal), and a NaN as the default NaN. A NaN's key is the greatest, or
    with *skip_nan* the least (see ``kernels.reduce.arg_kernel``)."""
    fmask, _, xmask, expo = masks
    info = np.iinfo(keys_dtype)
    top = keys_dtype.type(info.min if skip_nan else info.max)

    def values(keys):
        bits = np.empty((keys.shape[0], keys.shape[2]), keys_dtype)
        K.bits_of_best_chunks(keys, fmask, xmask, top, expo, bits)
        return bits.view(dtype)

    return values

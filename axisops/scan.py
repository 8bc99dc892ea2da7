"""Scans along one axis: cumsum, cumprod, cummax, cummin, logcumsumexp.

Every function validates its arguments, builds a ``ScanView`` of the input (no
copy), runs one kernel from ``axisops.kernels.scan`` into a fresh C-contiguous
result and returns it. Long axes with few lanes are split into fixed blocks that
are scanned in parallel (see the kernels' docstring); the split depends on the
shape only, so every result is the same for any number of threads.

Decisions the contract leaves open, written down here:

* ``axis=None`` scans the flattened (C-order) array and returns a 1-D result,
  except for a 0-d input, which gives a 0-d result: a scan of one element. An
  array whose flattened elements are not equally spaced in memory is copied once
  for ``axis=None`` (a single axis is always walked in place).
* ``axis=0`` on a 0-d array is out of range (``AxisError``), as for the reductions.
* Results are always arrays, never NumPy scalars.
* ``exclusive`` on a 0-d input gives the identity (0 or 1), as a one-element
  ONNX CumSum does.
* Complex numbers: ``cumsum`` scans the real and imaginary parts with the real
  kernels; ``cumprod`` is NumPy's complex product in index order (single-threaded);
  a real ``dtype=`` for a complex input is a ``TypeError``. ``cummax``, ``cummin``
  and ``logcumsumexp`` refuse complex numbers (``TypeError``), as PyTorch does.
"""
from __future__ import annotations

import builtins
from typing import NamedTuple

import numpy as np

from . import _alloc, _complex, _dates, _dtypes, _fast, _jit
from ._axes import normalize_axis
from ._dispatch import dispatched
from ._jit import entry_point, run
from ._jit import runs_in_parallel as chunks_pay
from ._layout import ScanView, needs_copy, scan_view
from ._plan import PlanCache, array_key, axis_key, base_maker, readable_copy, viewed
from .kernels import scan as K
from .kernels.common import skip_nan
from .typing import Array, ArrayLike, DTypeLike

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "ValuesIndices"]

#: Scan steps times lanes per chunk of a long scan (see ``_split``).
_CHUNK = 1 << 16
#: Widest block of ``inner`` lanes one row-order task scans.
_INNER_BLOCK = 2048
#: With fewer tasks than this, blocks get narrower and long axes are chunked.
_MIN_TASKS = 8
#: cummax/cummin cut lanes into chunks only below this many tasks: an extreme is
#: exact, so unlike a sum its result never depends on the cut, which may then
#: follow the speed alone.
_EXTREME_MIN_TASKS = 4
#: logcumsumexp cuts lanes into chunks only below this many tasks: a chunk's
#: total costs as much as its scan (an exp and a log per element), so chunks make
#: two passes of one; two lanes or more share the threads in one pass each, and
#: each lane's result is its exact chain of steps: (4, 262144) float32 along axis
#: 1 18.3 -> 12.6 ms on two threads in the quick sweep (torch 10.9-11.5), AMD EPYC
#: Zen 3. Depends on the shape only, as _split.
_LSE_MIN_TASKS = 2
#: Plans of every function here (see ``axisops._plan``).
_PLANS = PlanCache()


class ValuesIndices(NamedTuple):
    """The result of :func:`cummax` and :func:`cummin`: running extremes and their indices.

    A named tuple: unpack it as ``values, indices = axisops.cummax(x)``, or read
    its fields by name, as the result of ``torch.cummax``.

    Attributes
    ----------
    values : numpy.ndarray
        The running extremes, in the input's dtype.
    indices : numpy.ndarray
        Where along the scanned axis each of ``values`` was found.

    See Also
    --------
    cummax : Running maximum and its indices.
    cummin : Running minimum and its indices.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> r = axisops.cummax(np.array([2, 1, 3]))
    >>> isinstance(r, axisops.ValuesIndices)
    True
    >>> r.values
    array([2, 2, 3])
    >>> values, indices = r
    >>> indices
    array([0, 0, 2])
    """

    values: np.ndarray
    indices: np.ndarray


@dispatched
def cumsum(x: ArrayLike, axis: int | None = None, *, dtype: DTypeLike | None = None,
              exclusive: bool = False, reverse: bool = False) -> Array:
    """Cumulative sum along an axis, as ``numpy.cumsum`` and ONNX CumSum.

    Long axes with few lanes are split into fixed blocks that are scanned in
    parallel; the split depends on the shape only, so the result is the same,
    bit for bit, for any number of threads.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int or None, optional
        The axis to scan; negative values count from the end. Default None: scan
        the flattened array.
    dtype : dtype, optional
        Result dtype. Default None: NumPy's (int64 for small signed ints and bool,
        uint64 for small unsigned ints). Integers accumulate in 64 bits and wrap
        to the result dtype exactly as NumPy's do; float16 accumulates in float32
        and each output is rounded once; ``dtype=bool`` is a logical or-scan. A
        ``dtype`` whose accumulator differs from ``x``'s own (``int32`` data summed
        as ``float64``, say) converts ``x`` once before the scan.
    exclusive : bool, optional
        Each output leaves out its own element (ONNX CumSum ``exclusive``): the
        first output is 0. Default False.
    reverse : bool, optional
        Scan from the end of the axis (ONNX CumSum ``reverse``). Default False.

    Returns
    -------
    numpy.ndarray
        C-contiguous, of ``x``'s shape (1-D for ``axis=None``, but 0-d for a 0-d
        ``x``); always an array, never a NumPy scalar.

    Raises
    ------
    TypeError
        If ``x`` or ``dtype`` is not of a bool, integer, float or complex64/complex128
        dtype (object, strings, ...), a real ``dtype`` for a complex ``x`` (it would
        drop the imaginary part), or ``axis`` is not a single int or None (a tuple or
        list of axes included).
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim`` (any int axis for a 0-d ``x``).

    See Also
    --------
    cumprod : Cumulative product along an axis.
    logcumsumexp : ``log(cumsum(exp(x)))``, computed stably.
    sum : Sum over the given axes.
    axisops.grad.cumsum : Gradient of ``cumsum``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.cumsum(np.array([[1, 2, 3], [4, 5, 6]]), axis=1)
    array([[ 1,  3,  6],
           [ 4,  9, 15]])
    >>> axisops.cumsum(np.array([1., 2., 3.]), exclusive=True, reverse=True)
    array([5., 3., 0.])
    >>> float(axisops.cumsum(np.ones(5000, np.float16))[-1])   # np.cumsum: 2048.0
    5000.0
    """
    return _sum_or_prod("cumsum", K.OP_SUM, x, axis, dtype, exclusive, reverse)


@dispatched
def cumprod(x: ArrayLike, axis: int | None = None, *, dtype: DTypeLike | None = None,
               exclusive: bool = False, reverse: bool = False) -> Array:
    """Cumulative product along an axis, as ``numpy.cumprod`` (ONNX CumProd options).

    Same dtypes and options as :func:`cumsum`; integer products wrap as NumPy's
    do, ``dtype=bool`` is a logical and-scan, the identity is 1. A float product
    runs in index order along the whole axis, as NumPy's sequential product.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer, float or complex dtype, any strides.
    axis : int or None, optional
        The axis to scan; negative values count from the end. Default None: scan
        the flattened array.
    dtype : dtype, optional
        Result dtype. Default None: NumPy's (int64 for small signed ints and bool,
        uint64 for small unsigned ints). Integers accumulate in 64 bits and wrap
        to the result dtype; float16 accumulates in float32 and each output is
        rounded once; ``dtype=bool`` is a logical and-scan.
    exclusive : bool, optional
        Each output leaves out its own element: the first output is 1. Default
        False.
    reverse : bool, optional
        Scan from the end of the axis. Default False.

    Returns
    -------
    numpy.ndarray
        C-contiguous, of ``x``'s shape (1-D for ``axis=None``, but 0-d for a 0-d
        ``x``); always an array, never a NumPy scalar.

    Raises
    ------
    TypeError
        If ``x`` or ``dtype`` is not of a bool, integer, float or complex64/complex128
        dtype (object, strings, ...), a real ``dtype`` for a complex ``x`` (it would
        drop the imaginary part), or ``axis`` is not a single int or None (a tuple or
        list of axes included).
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim`` (any int axis for a 0-d ``x``).

    See Also
    --------
    cumsum : Cumulative sum along an axis.
    prod : Product over the given axes.
    axisops.grad.cumprod : Gradient of ``cumprod``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.cumprod(np.array([[1., 2.], [3., 4.]]), axis=0)
    array([[1., 2.],
           [3., 8.]])
    >>> axisops.cumprod(np.array([2, 3, 4]), exclusive=True)
    array([1, 2, 6])
    """
    return _sum_or_prod("cumprod", K.OP_PROD, x, axis, dtype, exclusive, reverse)


@dispatched
def cummax(x: ArrayLike, axis: int | None = None, *,
           index_dtype: DTypeLike = np.int64) -> ValuesIndices:
    """Running maximum along an axis and where it was found, as ``torch.cummax``.

    An element that ties the running maximum takes it over (the last of equal
    values wins; -0.0 and +0.0 are equal); a NaN becomes the running value and
    stays, and each later NaN takes over the index. ``values`` are the elements
    taken, bit for bit, in ``x``'s dtype.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int or None, optional
        The axis to scan; negative values count from the end. Default None: scan
        the flattened array.
    index_dtype : {int32, int64}, optional
        dtype of ``indices``. Default int64. int32 that cannot index the axis
        raises ``OverflowError``.

    Returns
    -------
    ValuesIndices
        The named tuple ``(values, indices)`` of two C-contiguous arrays of
        ``x``'s shape (1-D for ``axis=None``, but 0-d for a 0-d ``x``):
        ``values``, the running maxima in ``x``'s dtype, and ``indices``, the
        position along the axis where each was found, of ``index_dtype``.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        strings, ...), ``axis`` is not a single int or None (a tuple or list of
        axes included), or ``index_dtype`` is not int32 or int64.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim`` (any int axis for a 0-d ``x``).
    OverflowError
        If ``index_dtype`` is int32 and the scanned axis has more than 2**31
        elements.

    See Also
    --------
    cummin : Running minimum and its indices.
    max : Maximum over the given axes.
    ValuesIndices : The type of the result.
    axisops.grad.cummax : Gradient of ``cummax``, from its indices.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> r = axisops.cummax(np.array([1., 3., 2., 3., np.nan, 5., np.nan]))
    >>> r.values
    array([ 1.,  3.,  3.,  3., nan, nan, nan])
    >>> r.indices
    array([0, 1, 1, 3, 4, 4, 6])
    """
    return _extreme("cummax", x, axis, index_dtype, invert=False)


@dispatched
def cummin(x: ArrayLike, axis: int | None = None, *,
           index_dtype: DTypeLike = np.int64) -> ValuesIndices:
    """Running minimum along an axis and where it was found, as ``torch.cummin``.

    The same rules as :func:`cummax`: ties pass to the later element, NaN wins.
    ``values`` are the elements taken, bit for bit, in ``x``'s dtype.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int or None, optional
        The axis to scan; negative values count from the end. Default None: scan
        the flattened array.
    index_dtype : {int32, int64}, optional
        dtype of ``indices``. Default int64. int32 that cannot index the axis
        raises ``OverflowError``.

    Returns
    -------
    ValuesIndices
        The named tuple ``(values, indices)`` of two C-contiguous arrays of
        ``x``'s shape (1-D for ``axis=None``, but 0-d for a 0-d ``x``):
        ``values``, the running minima in ``x``'s dtype, and ``indices``, the
        position along the axis where each was found, of ``index_dtype``.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        strings, ...), ``axis`` is not a single int or None (a tuple or list of
        axes included), or ``index_dtype`` is not int32 or int64.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim`` (any int axis for a 0-d ``x``).
    OverflowError
        If ``index_dtype`` is int32 and the scanned axis has more than 2**31
        elements.

    See Also
    --------
    cummax : Running maximum and its indices.
    min : Minimum over the given axes.
    ValuesIndices : The type of the result.
    axisops.grad.cummin : Gradient of ``cummin``, from its indices.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> values, indices = axisops.cummin(np.array([[4, 2, 2, 5, 1]]), axis=1, index_dtype=np.int32)
    >>> values, indices
    (array([[4, 2, 2, 2, 1]]), array([[0, 1, 2, 2, 4]], dtype=int32))
    """
    return _extreme("cummin", x, axis, index_dtype, invert=True)


@dispatched
def logcumsumexp(x: ArrayLike, axis: int | None = None) -> Array:
    """``log(cumsum(exp(x)))`` along an axis, computed stably, as ``torch.logcumsumexp``.

    Large inputs stay finite; a prefix of ``-inf`` gives ``-inf``; ``+inf`` gives
    ``+inf``; NaN propagates. Accumulates in float64 and rounds each output once
    to the result dtype: ``x``'s float dtype, or float64 for bool and integers.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int or None, optional
        The axis to scan; negative values count from the end. Default None: scan
        the flattened array.

    Returns
    -------
    numpy.ndarray
        C-contiguous, of ``x``'s shape (1-D for ``axis=None``, but 0-d for a 0-d
        ``x``), of ``x``'s float dtype or float64; always an array, never a NumPy
        scalar.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype (complex, object,
        strings, ...), or ``axis`` is not a single int or None (a tuple or list
        of axes included).
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x.ndim`` (any int axis for a 0-d ``x``).

    See Also
    --------
    cumsum : Cumulative sum along an axis.
    axisops.grad.logcumsumexp : Gradient of ``logcumsumexp``.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.logcumsumexp(np.array([0., 0., 1000., -np.inf]))
    array([0.00000000e+00, 6.93147181e-01, 1.00000000e+03, 1.00000000e+03])
    >>> axisops.logcumsumexp(np.array([-np.inf, -np.inf, 0.]))
    array([-inf, -inf,   0.])
    """
    return _logcumsumexp(x, axis, reverse=False)


# --------------------------------------------------------------------------- helpers


def _planned(op: str, make_plan, x, axis, *options):
    """Run the plan of *op* for arrays described like *x*, making it first if new."""
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    try:
        key = (op, *array_key(x), axis_key(axis), *options)
    except TypeError:
        key = None
    return _PLANS.plan(key, _any_plan, op, make_plan, x, axis, *options)(x)


def _any_plan(op: str, make_plan, x: np.ndarray, axis, *options):
    """*make_plan*'s plan, or one through a readable copy."""
    if needs_copy(x):
        return lambda x: _planned(op, make_plan, readable_copy(x), axis, *options)
    return make_plan(op, x, axis, *options)


def _prepare(op: str, x: np.ndarray, axis):
    """(x, axis, result shape, flatten): the input as an array scanned along one
    axis; *flatten* is whether each call must flatten its input (``axis=None``)."""
    _dtypes.check_dtype(x.dtype, op)
    if axis is None:
        shape = x.shape if x.ndim == 0 else (x.size,)
        return x.reshape(-1), 0, shape, True
    return x, normalize_axis(axis, x.ndim, op), x.shape, False


def _split(view: ScanView, ordered: bool = False,
           chunk_below: int = _MIN_TASKS) -> tuple[int, int, int]:
    """(inner block, chunks, chunk length): how the work is split into tasks;
    *ordered* keeps each lane's steps in one task (one chunk); long lanes are cut
    into chunks only where there are fewer than *chunk_below* tasks.

    Depends on the shape only, never on the thread count, so results don't either.
    """
    groups = view.outer * view.mid
    block = 1
    if view.inner > 1:
        block = builtins.min(view.inner, _INNER_BLOCK)
        if groups * -(-view.inner // block) < _MIN_TASKS:  # few tasks: narrower blocks
            block = builtins.min(block, builtins.max(256, -(-view.inner // _MIN_TASKS)))
    tasks = groups * -(-view.inner // block)
    chunk_len = builtins.max(16, _CHUNK // block)
    if tasks < chunk_below and view.n >= 2 * chunk_len and not ordered:
        return block, -(-view.n // chunk_len), chunk_len
    return block, 1, builtins.max(view.n, 1)


def _view_args(view: ScanView, block: int, chunk_len: int) -> tuple:
    return (view.offset, view.outer_shape, view.outer_strides, view.n, view.n_stride,
            view.mid_shape, view.mid_strides, view.inner, view.inner_stride, chunk_len, block)


def _run_phases(kern, work: int, chunks: int, *args, address: int = 0, site: int = 0) -> None:
    """Run a scan kernel: with several chunks, the chunk totals, their carries
    (a short serial pass) and the scan from the carries; else the scan alone.
    With the kernel's *address* (``_omp.prepare``), a phase goes to OpenMP's
    threads where its own calibration says so, else to the pool's :func:`run`
    (*site*: the plan's, see ``_jit.run``)."""
    def phase(code: int) -> None:
        if not (address and _jit._omp_call(kern, work, address, (code, *args), code, site)):
            run(kern, work, code, *args, site=site)

    if chunks > 1:
        phase(K.PHASE_TOTALS)
        run(kern, 0, K.PHASE_CARRIES, *args)
    phase(K.PHASE_SCAN)


def _planned_phases(kern):
    """:func:`_run_phases` for a plan, whose key fixes the type of every argument.

    A large call splits its phases between OpenMP's threads where their
    calibration says so (``_jit._omp_call``, each phase timed apart; waking them
    costs ~1.5 us, the pool's threads 30-50), else as :func:`_run_phases`. An
    unchunked call on the calling thread (every small scan) goes straight to the
    kernel's compiled function for those types, found at its first such call,
    without Numba's dispatch (as ``_jit.planned_run`` does for reductions)."""
    entry = None
    address = None
    site = next(_jit._SITES)

    def call(work: int, chunks: int, *args) -> None:
        nonlocal entry, address
        if _jit._omp_split(work):
            if address is None:
                address = _jit._omp_module().prepare(kern, (0, 1, K.PHASE_SCAN, *args))
            if address:
                _run_phases(kern, work, chunks, *args, address=address, site=site)
                return
        if chunks > 1 or chunks_pay(work):
            _run_phases(kern, work, chunks, *args, site=site)
            return
        if entry is None:
            entry = entry_point(kern, (0, 1, K.PHASE_SCAN, *args))
        entry(0, 1, K.PHASE_SCAN, *args)

    return call


def _numeric_base(x: np.ndarray):
    """(how to get the base of arrays like *x*, table) for kernels that read values:
    float16 as bits and a table, bool as uint8."""
    make_base = base_maker(x)
    if x.dtype == np.float16:
        return viewed(make_base, np.uint16), _dtypes.float16_table()
    if x.dtype == np.bool_:
        return viewed(make_base, np.uint8), None
    return make_base, None


def _sum_or_prod(op, op_code, x, axis, dtype, exclusive, reverse):
    if type(x) is np.ndarray and dtype is None and exclusive is False and reverse is False:
        out = _fast.scan(op, x, axis)  # the common call: one compiled entry
        if out is not None:
            return out
    return _planned(op, _sum_or_prod_plan, x, axis, dtype, exclusive, reverse)


def _complex_scan_plan(op, x, axis, dtype, exclusive, reverse):
    """cumsum of complex numbers: the real kernels on the two parts; cumprod:
    NumPy's own complex product in index order (not componentwise)."""
    if axis is not None:
        axis = normalize_axis(axis, x.ndim, op)
    res = _complex.result_dtype(op, x.dtype, dtype)
    if op == "cumsum":
        return lambda x: _complex.componentwise(
            lambda part: cumsum(part, axis, exclusive=exclusive, reverse=reverse),
            x.astype(res, copy=False))

    def plan(x):
        z = x.astype(res, copy=False).reshape(-1) if axis is None else x.astype(res, copy=False)
        a = 0 if axis is None else axis
        if reverse:
            z = np.flip(z, a)
        out = np.cumprod(z, axis=a)
        if exclusive:  # shift by one along the axis, starting from 1
            out = np.concatenate([np.ones_like(np.take(out, [0], a)),
                                  np.take(out, np.arange(out.shape[a] - 1), a)], axis=a) \
                if out.shape[a] else out
        out = np.ascontiguousarray(np.flip(out, a) if reverse else out)
        return out.reshape(()) if x.ndim == 0 else out  # a 0-d x gives a 0-d result

    return plan


def _sum_or_prod_plan(op, x, axis, dtype, exclusive, reverse):
    """The plan of cumsum/cumprod, and of their NaN-skipping twins nancumsum and
    nancumprod (a NaN read as the identity by the same kernel: see
    ``kernels.common.skip_nan``), for arrays described like *x*."""
    skip = op.startswith("nan")
    if x.dtype.kind == "m" and op in ("cumsum", "nancumsum"):  # durations; NaT as NaN
        return lambda x: _dates.timedelta_cumsum(op, cumsum, x, axis, exclusive, reverse)
    if skip:
        plain = op[3:]
        if x.dtype.kind not in "fc":  # no NaN to skip
            _dtypes.check_dtype(x.dtype, op)
            return _sum_or_prod_plan(plain, x, axis, dtype, exclusive, reverse)
        if x.dtype.kind == "c":  # a NaN in either part skips the element, as np.isnan says
            fill = 0 if plain == "cumsum" else 1
            return lambda x: _sum_or_prod(plain, None, np.where(np.isnan(x), fill, x), axis,
                                          dtype, exclusive, reverse)
        op = plain
    if _complex.is_complex(x.dtype) or _complex.is_complex(dtype):
        return _complex_scan_plan(op, x, axis, dtype, exclusive, reverse)
    x, axis, shape, flatten = _prepare(op, x, axis)
    res_dtype, acc_dtype = _dtypes.sum_dtypes(x.dtype, dtype, op)
    if x.size == 0:
        return lambda x: np.zeros(shape, res_dtype)
    kernel_acc = _dtypes.kernel_accumulator(acc_dtype)
    convert = None
    if res_dtype == np.bool_:  # a logical scan of the elements' truth values
        convert = np.dtype(np.bool_)
    elif kernel_acc != _dtypes.kernel_accumulator(_dtypes.sum_dtypes(x.dtype, None, op)[1]):
        # A dtype= that changes the accumulator: convert once, so that the kernel is
        # compiled per input dtype (with its own accumulator) and not per pair.
        convert = acc_dtype
    if skip and convert is not None and convert.kind != "f":
        # NaN has no integer or bool value: replaced by the identity before converting
        fill = 1 if op == "cumprod" else 0
        return lambda x: _sum_or_prod(op, None, np.where(np.isnan(x), fill, x), axis, dtype,
                                      exclusive, reverse)
    if convert is not None:
        x = x.astype(convert, copy=False)
    view = scan_view(x, axis)
    # A float product runs in index order along the whole axis: a chunk's carry-in
    # times its own running product could overflow or underflow where NumPy's
    # sequential product doesn't (inf * 0 = NaN).
    block, chunks, chunk_len = _split(view, ordered=op == "cumprod" and acc_dtype.kind == "f")
    base_of, table = _numeric_base(x)
    if kernel_acc.kind == "i" and x.dtype == np.uint64:
        base_of = viewed(base_of, np.int64)
    if skip and x.dtype.kind == "f":  # a NaN reads as the identity
        table = skip_nan(table, 1.0 if op == "cumprod" else 0.0)
    args = (*_view_args(view, block, chunk_len), K.OP_PROD if op == "cumprod" else K.OP_SUM,
            bool(exclusive), bool(reverse), table)
    carry_shape = (view.outer * view.mid, chunks, view.inner)
    out_shape, work = view.out_shape, x.size
    empty = _alloc.empty_function(out_shape, kernel_acc)
    call = _planned_phases(K.scan_values)

    def plan(x):
        if flatten:
            x = x.reshape(-1)
        if convert is not None:
            x = x.astype(convert, copy=False)
        out = empty(out_shape, kernel_acc)
        carry = np.empty(carry_shape, kernel_acc)
        call(work, chunks, base_of(x), *args, carry, out)
        return _rounded(out.view(acc_dtype), res_dtype).reshape(shape)

    return plan


def _logcumsumexp(x, axis, reverse):
    return _planned("logcumsumexp", _logcumsumexp_plan, x, axis, reverse)


def _logcumsumexp_plan(op, x, axis, reverse):
    x, axis, shape, flatten = _prepare(op, x, axis)
    convert = None if x.dtype.kind == "f" else np.dtype(np.float64)
    res_dtype = convert or x.dtype
    if x.size == 0:
        return lambda x: np.zeros(shape, res_dtype)
    if convert is not None:
        x = x.astype(convert)
    view = scan_view(x, axis)
    block, chunks, chunk_len = _split(view, chunk_below=_LSE_MIN_TASKS)
    base_of, table = _numeric_base(x)
    args = (*_view_args(view, block, chunk_len), bool(reverse), table)
    carry_shape = (view.outer * view.mid, chunks, view.inner)
    out_shape, work = view.out_shape, x.size
    out_dtype = np.float32 if res_dtype == np.float16 else res_dtype
    empty = _alloc.empty_function(out_shape, out_dtype)
    call = _planned_phases(K.scan_logaddexp)

    def plan(x):
        if flatten:
            x = x.reshape(-1)
        if convert is not None:
            x = x.astype(convert)
        out = empty(out_shape, out_dtype)
        carry = np.empty(carry_shape, np.float64)
        call(work, chunks, base_of(x), *args, carry, out)
        return _rounded(out, res_dtype).reshape(shape)

    return plan


def _rounded(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """*out* in the result dtype. A float32 accumulator beyond float16's range
    becomes inf, as a float16 scan would, without the cast's overflow warning."""
    if out.dtype == dtype:
        return out
    with np.errstate(over="ignore"):
        return out.astype(dtype)


def _extreme(op, x, axis, index_dtype, invert):
    if type(x) is np.ndarray and index_dtype is np.int64:
        found = _fast.cum_extreme(op, x, axis)  # the common call: one compiled entry
        if found is not None:
            return ValuesIndices(*found)
    return _planned(op, _extreme_plan, x, axis, index_dtype, invert)


def _extreme_plan(op, x, axis, index_dtype, invert):
    """The plan of cummax/cummin for arrays described like *x*."""
    if _dates.is_date(x.dtype):  # the int64 keys, NaT as the NaN (see axisops._dates)
        return lambda x: ValuesIndices(*_dates.cum_extreme(
            op, lambda k, a, index_dtype: _extreme(op, k, a, index_dtype, invert), x, axis,
            index_dtype))
    x, axis, shape, flatten = _prepare(op, x, axis)
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    if x.ndim:
        _dtypes.check_index_fits(x.shape[axis], index_dtype, op)
    dtype = x.dtype
    if x.size == 0:
        return lambda x: ValuesIndices(np.empty(shape, dtype), np.empty(shape, index_dtype))
    view = scan_view(x, axis)
    # enough lanes to share between threads: one pass each, no chunks (whose
    # totals pass made a split call slower than a serial one: (1024, 1024)
    # float32 along axis 0, 1356 us on two threads against 738 on one)
    block, chunks, chunk_len = _split(view, chunk_below=_EXTREME_MIN_TASKS)
    bits = _dtypes.bits_view_dtype(x.dtype)
    kern = K.extreme_kernel(bits.str)
    make_base = base_maker(x)
    masks = _dtypes.key_masks(x.dtype, bits, invert)
    # Selecting extremes is exact, so unlike a float sum the result does not depend
    # on how the axis is cut: a call that runs on one thread scans each lane in one
    # pass instead of two (totals, then the scan), which chunks exist for.
    splits = {True: (chunks, (view.outer * view.mid, chunks, view.inner),
                     (*_view_args(view, block, chunk_len), *masks)),
              False: (1, (view.outer * view.mid, 1, view.inner),
                      (*_view_args(view, block, builtins.max(view.n, 1)), *masks))}
    out_shape, work = view.out_shape, x.size
    empty = _alloc.empty_function(out_shape, np.int64)
    call = _planned_phases(kern)

    # The kernel writes int64 indices whatever index_dtype asks (int32 converted
    # after): one compilation per element width, not two
    narrow = index_dtype != np.int64

    def plan(x):
        if flatten:
            x = x.reshape(-1)
        chunks, lanes, args = splits[chunks_pay(work)]
        keys, state_bits = np.empty(lanes, bits), np.empty(lanes, bits)
        state_index = np.empty(lanes, np.int64)
        values = empty(out_shape, bits)
        indices = empty(out_shape, np.int64)
        call(work, chunks, make_base(x).view(bits), *args, keys, state_bits, state_index,
             values, indices)
        if narrow:
            indices = indices.astype(index_dtype)
        return ValuesIndices(values.view(dtype).reshape(shape), indices.reshape(shape))

    return plan

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
"""
from __future__ import annotations

import builtins
import math
from typing import NamedTuple

import numpy as np

from . import _alloc, _dtypes
from ._axes import normalize_axis
from ._jit import run
from ._layout import ScanView, scan_view
from .kernels import scan as K
from .reduce import _float16_table

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "ValuesIndices"]

#: Scan steps times lanes per chunk of a long scan (see ``_plan``).
_CHUNK = 1 << 16
#: Widest block of ``inner`` lanes one row-order task scans.
_INNER_BLOCK = 2048
#: With fewer tasks than this, blocks get narrower and long axes are chunked.
_MIN_TASKS = 8


class ValuesIndices(NamedTuple):
    """The result of :func:`cummax` and :func:`cummin`: running extremes and their indices."""

    values: np.ndarray
    indices: np.ndarray


def cumsum(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """Cumulative sum along an axis, as ``numpy.cumsum`` and ONNX CumSum.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int or None
        The axis to scan; ``None`` scans the flattened array.
    dtype : dtype, optional
        Result dtype; by default NumPy's (int64 for small signed ints and bool,
        uint64 for small unsigned ints). Integers accumulate in 64 bits and wrap
        to the result dtype exactly as NumPy's do; float16 accumulates in float32
        and each output is rounded once; ``dtype=bool`` is a logical or-scan. A
        ``dtype`` whose accumulator differs from ``x``'s own (``int32`` data summed
        as ``float64``, say) converts ``x`` once before the scan.
    exclusive : bool
        Each output leaves out its own element (ONNX CumSum ``exclusive``): the
        first output is 0.
    reverse : bool
        Scan from the end of the axis (ONNX CumSum ``reverse``).

    Returns
    -------
    numpy.ndarray
        C-contiguous, of ``x``'s shape (1-D for ``axis=None``).

    Examples
    --------
    >>> import numpy as np, axisops
    >>> axisops.cumsum(np.array([[1, 2, 3], [4, 5, 6]]), axis=1)
    array([[ 1,  3,  6],
           [ 4,  9, 15]])
    >>> axisops.cumsum(np.array([1., 2., 3.]), exclusive=True, reverse=True)
    array([5., 3., 0.])
    >>> float(axisops.cumsum(np.ones(5000, np.float16))[-1])   # np.cumsum: 2048.0
    5000.0
    """
    return _sum_or_prod("cumsum", K.OP_SUM, x, axis, dtype, exclusive, reverse)


def cumprod(x, axis=None, *, dtype=None, exclusive=False, reverse=False):
    """Cumulative product along an axis, as ``numpy.cumprod`` (ONNX CumProd options).

    Same dtypes and options as :func:`cumsum`; integer products wrap as NumPy's
    do, ``dtype=bool`` is a logical and-scan, the identity is 1.

    Examples
    --------
    >>> import numpy as np, axisops
    >>> axisops.cumprod(np.array([[1., 2.], [3., 4.]]), axis=0)
    array([[1., 2.],
           [3., 8.]])
    >>> axisops.cumprod(np.array([2, 3, 4]), exclusive=True)
    array([1, 2, 6])
    """
    return _sum_or_prod("cumprod", K.OP_PROD, x, axis, dtype, exclusive, reverse)


def cummax(x, axis=None, *, index_dtype=np.int64):
    """Running maximum along an axis and where it was found, as ``torch.cummax``.

    An element that ties the running maximum takes it over (the last of equal
    values wins; -0.0 and +0.0 are equal); a NaN becomes the running value and
    stays, and each later NaN takes over the index. ``values`` are the elements
    taken, bit for bit, in ``x``'s dtype.

    Parameters
    ----------
    x : array_like
        Input of a bool, integer or float dtype, any strides.
    axis : int or None
        The axis to scan; ``None`` scans the flattened array.
    index_dtype : int32 or int64
        dtype of ``indices``; int32 that cannot index the axis raises ``OverflowError``.

    Returns
    -------
    ValuesIndices
        The named tuple ``(values, indices)``.

    Examples
    --------
    >>> import numpy as np, axisops
    >>> r = axisops.cummax(np.array([1., 3., 2., 3., np.nan, 5., np.nan]))
    >>> r.values
    array([ 1.,  3.,  3.,  3., nan, nan, nan])
    >>> r.indices
    array([0, 1, 1, 3, 4, 4, 6])
    """
    return _extreme("cummax", x, axis, index_dtype, invert=False)


def cummin(x, axis=None, *, index_dtype=np.int64):
    """Running minimum along an axis and where it was found, as ``torch.cummin``.

    The same rules as :func:`cummax`: ties pass to the later element, NaN wins.

    Examples
    --------
    >>> import numpy as np, axisops
    >>> values, indices = axisops.cummin(np.array([[4, 2, 2, 5, 1]]), axis=1, index_dtype=np.int32)
    >>> values, indices
    (array([[4, 2, 2, 2, 1]]), array([[0, 1, 2, 2, 4]], dtype=int32))
    """
    return _extreme("cummin", x, axis, index_dtype, invert=True)


def logcumsumexp(x, axis=None):
    """``log(cumsum(exp(x)))`` along an axis, computed stably, as ``torch.logcumsumexp``.

    Large inputs stay finite; a prefix of ``-inf`` gives ``-inf``; ``+inf`` gives
    ``+inf``; NaN propagates. Accumulates in float64 and rounds each output once
    to the result dtype: ``x``'s float dtype, or float64 for bool and integers.

    Examples
    --------
    >>> import numpy as np, axisops
    >>> axisops.logcumsumexp(np.array([0., 0., 1000., -np.inf]))
    array([0.00000000e+00, 6.93147181e-01, 1.00000000e+03, 1.00000000e+03])
    >>> axisops.logcumsumexp(np.array([-np.inf, -np.inf, 0.]))
    array([-inf, -inf,   0.])
    """
    return _logcumsumexp(x, axis, reverse=False)


# --------------------------------------------------------------------------- helpers


def _prepare(op: str, x, axis):
    """(x, axis, result shape): the input as an array scanned along one axis."""
    x = _dtypes.as_array(x)
    _dtypes.check_dtype(x.dtype, op)
    if axis is None:
        shape = x.shape if x.ndim == 0 else (x.size,)
        return x.reshape(-1), 0, shape
    return x, normalize_axis(axis, x.ndim, op), x.shape


def _plan(view: ScanView) -> tuple[int, int, int]:
    """(inner block, chunks, chunk length): how the work is split into tasks.

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
    if tasks < _MIN_TASKS and view.n >= 2 * chunk_len:
        return block, -(-view.n // chunk_len), chunk_len
    return block, 1, builtins.max(view.n, 1)


def _view_args(view: ScanView, block: int, chunk_len: int) -> tuple:
    return (view.offset, view.outer_shape, view.outer_strides, view.n, view.n_stride,
            view.mid_shape, view.mid_strides, view.inner, view.inner_stride, chunk_len, block)


def _run_phases(kern, work: int, chunks: int, *args) -> None:
    """Run a scan kernel: with several chunks, the chunk totals, their carries
    (a short serial pass) and the scan from the carries; else the scan alone."""
    if chunks > 1:
        run(kern, work, K.PHASE_TOTALS, *args)
        run(kern, 0, K.PHASE_CARRIES, *args)
    run(kern, work, K.PHASE_SCAN, *args)


def _numeric_base(view: ScanView, dtype: np.dtype):
    """(base, table) for kernels that read values: float16 as bits and a table, bool as uint8."""
    if dtype == np.float16:
        return view.base.view(np.uint16), _float16_table()
    if dtype == np.bool_:
        return view.base.view(np.uint8), None
    return view.base, None


def _sum_or_prod(op, op_code, x, axis, dtype, exclusive, reverse):
    x, axis, shape = _prepare(op, x, axis)
    res_dtype, acc_dtype = _dtypes.sum_dtypes(x.dtype, dtype, op)
    if x.size == 0:
        return np.zeros(shape, res_dtype)
    if res_dtype == np.bool_:  # a logical scan of the elements' truth values
        x = x.astype(np.bool_, copy=False)
    elif acc_dtype != _dtypes.sum_dtypes(x.dtype, None, op)[1]:
        # A dtype= that changes the accumulator: convert once, so that the kernel is
        # compiled per input dtype (with its own accumulator) and not per pair.
        x = x.astype(acc_dtype)
    view = scan_view(x, axis)
    block, chunks, chunk_len = _plan(view)
    out = _alloc.empty(view.out_shape, acc_dtype)
    carry = np.empty((view.outer * view.mid, chunks, view.inner), acc_dtype)
    base, table = _numeric_base(view, x.dtype)
    _run_phases(K.scan_values, x.size, chunks, base, *_view_args(view, block, chunk_len), op_code,
                bool(exclusive), bool(reverse), table, carry, out)
    return _rounded(out, res_dtype).reshape(shape)


def _logcumsumexp(x, axis, reverse):
    x, axis, shape = _prepare("logcumsumexp", x, axis)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    res_dtype = x.dtype
    if x.size == 0:
        return np.zeros(shape, res_dtype)
    view = scan_view(x, axis)
    block, chunks, chunk_len = _plan(view)
    out = _alloc.empty(view.out_shape, np.float32 if res_dtype == np.float16 else res_dtype)
    carry = np.empty((view.outer * view.mid, chunks, view.inner), np.float64)
    base, table = _numeric_base(view, x.dtype)
    _run_phases(K.scan_logaddexp, x.size, chunks, base, *_view_args(view, block, chunk_len),
                bool(reverse), table, carry, out)
    return _rounded(out, res_dtype).reshape(shape)


def _rounded(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """*out* in the result dtype. A float32 accumulator beyond float16's range
    becomes inf, as a float16 scan would, without the cast's overflow warning."""
    if out.dtype == dtype:
        return out
    with np.errstate(over="ignore"):
        return out.astype(dtype)


def _key_masks(dtype: np.dtype, bits: np.dtype, invert: bool) -> tuple:
    """(fmask, fone, xmask, expo) of ``kernels.scan._key`` for *dtype* seen as *bits*."""
    t = bits.type
    info = np.iinfo(bits)
    flip = -1 if invert else 0
    if dtype.kind == "f":
        expo = {2: 0x7C00, 4: 0x7F800000, 8: 0x7FF0000000000000}[dtype.itemsize]
        return t(info.max), t(1), t(flip), t(expo)
    sign = info.min if dtype.kind in "ub" else 0  # unsigned order = signed order of b ^ sign
    return t(0), t(0), t(sign ^ flip), t(0)


def _extreme(op, x, axis, index_dtype, invert):
    x, axis, shape = _prepare(op, x, axis)
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    if x.ndim:
        _dtypes.check_index_fits(x.shape[axis], index_dtype, op)
    if x.size == 0:
        return ValuesIndices(np.empty(shape, x.dtype), np.empty(shape, index_dtype))
    view = scan_view(x, axis)
    block, chunks, chunk_len = _plan(view)
    bits = np.dtype(f"i{x.dtype.itemsize}")
    lanes = (view.outer * view.mid, chunks, view.inner)
    keys, state_bits, state_index = np.empty(lanes, bits), np.empty(lanes, bits), np.empty(lanes, index_dtype)
    values = _alloc.empty(view.out_shape, bits)
    indices = _alloc.empty(view.out_shape, index_dtype)
    kern = K.extreme_kernel(bits.str)
    _run_phases(kern, x.size, chunks, view.base.view(bits), *_view_args(view, block, chunk_len),
                *_key_masks(x.dtype, bits, invert), keys, state_bits, state_index, values, indices)
    return ValuesIndices(values.view(x.dtype).reshape(shape), indices.reshape(shape))

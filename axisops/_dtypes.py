"""Which dtypes each operator takes, and the accumulator and result dtypes.

Result dtypes are NumPy's own: they are asked of NumPy on a one-element array, so
they follow whatever the installed NumPy does (``np.sum`` of int8 is int64, of
uint8 uint64, ``np.mean`` of ints float64, ...). Accumulators are wider where
NumPy's are: float16 accumulates in float32.
"""
from __future__ import annotations

import numpy as np

from . import _complex

SUPPORTED_KINDS = "biuf"  # bool, signed, unsigned, float

#: An integer type of the same width for every supported dtype: arg-reductions
#: compare these bit patterns (see ``kernels.reduce``), so a kernel never needs
#: float16 arithmetic, which Numba lacks.
_BITS_VIEW = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def as_array(x) -> np.ndarray:
    """``numpy.asarray`` that keeps views (no copy) and never returns a scalar."""
    return np.asarray(x)


def check_dtype(dtype: np.dtype, op: str) -> None:
    """Raise ``TypeError`` naming *op* for dtypes outside the contract (complex, object, ...)."""
    if dtype.kind == "c":
        raise TypeError(f"{op}: unsupported dtype {dtype}: {op} does not take complex numbers "
                        "(they have no order; sums, products, their scans, gathers, scatter, "
                        "unfold and fold do take them)")
    if dtype.kind not in SUPPORTED_KINDS or dtype.fields is not None:
        raise TypeError(f"{op}: unsupported dtype {dtype} (expected bool, int, uint or float)")


def value_dtypes(op: str, x_dtype: np.dtype, dtype) -> tuple[np.dtype, np.dtype]:
    """(result, accumulator) dtypes of sum, prod, mean, cumsum and cumprod from the
    dtypes alone, with the NumPy path's rules and errors; complex numbers
    accumulate in their own dtype (for the paths that add and multiply them as
    complex: Dask's combine steps, the CUDA kernels).

    >>> value_dtypes("mean", np.dtype(np.int8), None)
    (dtype('float64'), dtype('float64'))
    >>> value_dtypes("sum", np.dtype(np.complex64), None)
    (dtype('complex64'), dtype('complex64'))
    """
    if _complex.is_complex(x_dtype) or _complex.is_complex(dtype):
        res = _complex.result_dtype(op, x_dtype, dtype)
        return res, res
    check_dtype(x_dtype, op)
    if op == "mean":
        return mean_dtypes(x_dtype, dtype)
    return sum_dtypes(x_dtype, dtype, op)


def sum_dtypes(x_dtype: np.dtype, dtype, op: str) -> tuple[np.dtype, np.dtype]:
    """(result dtype, accumulator dtype) of ``sum``/``prod`` with NumPy's rules.

    >>> sum_dtypes(np.dtype(np.int8), None, "sum")
    (dtype('int64'), dtype('int64'))
    >>> sum_dtypes(np.dtype(np.float16), None, "sum")
    (dtype('float16'), dtype('float32'))
    """
    if dtype is not None:
        dtype = np.dtype(dtype)
        check_dtype(dtype, op)
    probe = np.zeros(1, x_dtype)
    res = (np.prod if op == "prod" else np.sum)(probe, dtype=dtype).dtype
    return res, _accumulator(res)


def mean_dtypes(x_dtype: np.dtype, dtype) -> tuple[np.dtype, np.dtype]:
    """(result dtype, accumulator dtype) of ``mean``: ints and bool give float64.

    >>> mean_dtypes(np.dtype(np.int32), None)
    (dtype('float64'), dtype('float64'))
    """
    if dtype is not None:
        dtype = np.dtype(dtype)
        check_dtype(dtype, "mean")
    res = np.mean(np.zeros(1, x_dtype), dtype=dtype).dtype
    return res, _accumulator(res)


def _accumulator(res: np.dtype) -> np.dtype:
    # Integer sums wrap modulo 2**bits exactly as NumPy's do when accumulated in 64
    # bits and cast at the end (addition and multiplication are ring maps), so every
    # signed result accumulates in int64 and every unsigned one in uint64.
    if res.kind == "f":
        return np.dtype(np.float32) if res.itemsize <= 4 else np.dtype(np.float64)
    if res.kind == "u":
        return np.dtype(np.uint64)
    return np.dtype(np.int64)


def kernel_accumulator(acc: np.dtype) -> np.dtype:
    """The dtype a sum or product kernel accumulates *acc* in: integer sums and
    products wrap modulo 2**64 alike in int64 and uint64, so both run as int64 (one
    compilation; the result is viewed as *acc*).

    >>> kernel_accumulator(np.dtype(np.uint64))
    dtype('int64')
    """
    return np.dtype(np.int64) if acc.kind in "iu" else acc


def bits_view_dtype(dtype: np.dtype) -> np.dtype:
    """The signed integer dtype of *dtype*'s width, as which the arg-reduction and
    cummax/cummin kernels read its elements (their order comes from :func:`key_masks`)."""
    return np.dtype(_BITS_VIEW[dtype.itemsize])


def key_masks(dtype: np.dtype, bits: np.dtype, invert: bool) -> tuple:
    """(fmask, fone, xmask, expo) of ``kernels.common.order_key`` for *dtype* seen as
    *bits* (the signed integer dtype of its width), for a maximum or (*invert*) a minimum."""
    t = bits.type
    info = np.iinfo(bits)
    flip = -1 if invert else 0
    if dtype.kind == "f":
        expo = {2: 0x7C00, 4: 0x7F800000, 8: 0x7FF0000000000000}[dtype.itemsize]
        return t(info.max), t(1), t(flip), t(expo)
    sign = info.min if dtype.kind in "ub" else 0  # unsigned order = signed order of b ^ sign
    return t(0), t(0), t(sign ^ flip), t(0)


def check_index_dtype(index_dtype, op: str) -> np.dtype:
    """``int32`` or ``int64``, else ``TypeError``."""
    try:
        d = np.dtype(index_dtype)
    except TypeError:
        d = None
    if d not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"{op}: index_dtype must be int32 or int64, got {index_dtype!r}")
    return d


def is_int(v) -> bool:
    """Whether *v* is an int (Python's or NumPy's), a bool not counted."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def check_all_nan_index(value, op: str, index_dtype=None) -> None:
    """``all_nan_index`` of nanargmax/nanargmin: an int (not a bool) or None, else
    ``TypeError``; with *index_dtype* (checked), ``OverflowError`` where the int does
    not fit it (as an index that does not fit, whether or not a slice is all NaN)."""
    if value is None:
        return
    if not is_int(value):
        raise TypeError(f"{op}: all_nan_index must be an int or None, got {value!r}")
    if index_dtype is not None:
        info = np.iinfo(index_dtype)
        if not info.min <= int(value) <= info.max:
            raise OverflowError(f"{op}: all_nan_index {value} does not fit index_dtype "
                                f"{np.dtype(index_dtype)}")


def check_ddof(ddof, op: str):
    """``ddof`` of the variances: a real number (not a bool), else ``TypeError``;
    returned as the kernels take it: an int beyond int64's range as a float (it is
    at or above any count, giving NaN, or a huge negative divisor either way).
    """
    if isinstance(ddof, bool) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: ddof must be a number, got {ddof!r}")
    if isinstance(ddof, int) and not -2 ** 62 <= ddof <= 2 ** 62:
        return float(ddof)
    return ddof


def check_index_fits(count: int, index_dtype: np.dtype, op: str) -> None:
    """``OverflowError`` when indices up to ``count - 1`` do not fit *index_dtype*."""
    if count - 1 > np.iinfo(index_dtype).max:
        raise OverflowError(
            f"{op}: indices up to {count - 1} do not fit index_dtype {index_dtype}; use int64"
        )


_FLOAT16_TABLE = None


def float16_table() -> np.ndarray:
    """float32 value of every float16 bit pattern (Numba has no float16: kernels
    read float16 arrays as uint16 bits and look them up here), made once.

    >>> float16_table()[np.float16(1.5).view(np.uint16)]
    np.float32(1.5)
    """
    global _FLOAT16_TABLE
    if _FLOAT16_TABLE is None:
        _FLOAT16_TABLE = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    return _FLOAT16_TABLE

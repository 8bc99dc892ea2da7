"""Dates and times: ``datetime64`` and ``timedelta64`` through the int64 kernels.

A date or a duration is an int64 count of its unit, and NaT is the least int64.
The operators see that view (no copy where only bits move) and give results of
the input's dtype:

* moves (``take``, ``take_along_axis``, ``gather_nd``, ``scatter`` with
  ``reduce=None``, ``unfold``): the bits moved (``gather._bits_gather_plan``, which
  moves every fixed-width dtype so: see ``gather.lanes``); ``unfold`` pads with zero
  bits (1970-01-01, a zero duration), not NaT: padding is bits, as for numbers.
  ``fold`` adds ``timedelta64`` (NaT read as 0, NaT wherever one was added) and
  refuses ``datetime64``; gradients refuse dates (no derivative);
* orderings, with NaT as the contract's NaN: NaT must be the greatest key where
  it propagates through a maximum (``max``, ``argmax``, ``cummax``) and where a
  minimum skips it (``nanmin``, ``nanargmin``), and the least elsewhere. ``b - 1``
  (wrapping) maps NaT to the greatest int64 and keeps the order of every other
  value, so those run on ``b - 1`` (one pass to make it) and add the 1 back; the
  others run on ``b`` itself;
* sums of ``timedelta64`` (``sum``, ``mean``, ``cumsum``, and their ``nan`` twins,
  ``count``): the int64 sums of the values with NaT read as 0, NaT where a NaT
  propagates (NumPy's rule for the plain ones), means divided as NumPy divides a
  ``timedelta64``.

Decision (the contract is silent): ``fill_value`` of a date ``take`` with
``mode="fill"`` is a value of x's dtype (or anything ``numpy.asarray`` turns
into one exactly, NaT included), else ``TypeError``.
"""
from __future__ import annotations

import warnings

import numpy as np

NAT = np.iinfo(np.int64).min
_TOP = np.iinfo(np.int64).max


def is_date(dtype: np.dtype) -> bool:
    return dtype.kind in "mM"


def bits(x: np.ndarray) -> np.ndarray:
    """The int64 view of a date array (any strides: same item size)."""
    return x.view(np.int64)


def fill_bits(fill_value, dtype: np.dtype, op: str) -> np.int64:
    """``fill_value`` as the int64 of a value of *dtype* (see the module)."""
    if isinstance(fill_value, (int, np.integer)) and not isinstance(fill_value, bool) \
            and fill_value == 0:
        return np.int64(0)
    value = np.asarray(fill_value)
    if value.dtype.kind != dtype.kind:
        kind = "datetime64" if dtype.kind == "M" else "timedelta64"
        raise TypeError(f"{op}: fill_value for a {dtype} array must be a {kind} value (NaT "
                        f"included) or 0, got {fill_value!r}")
    converted = value.astype(dtype)
    if not (converted == value or np.isnat(value)):
        raise TypeError(f"{op}: fill_value {fill_value!r} is not a value of {dtype}")
    return np.int64(converted.view(np.int64)[()])


def _shifted(op: str) -> bool:
    """Whether *op* runs on ``b - 1`` (NaT the greatest key; see the module)."""
    base = op[3:] if op.startswith("nan") else op
    greatest = base in ("max", "argmax", "cummax")
    return greatest != op.startswith("nan")


def arg_plan(op: str, reduce, axis, keepdims: bool, select_last: bool, index_dtype,
             all_nan_index):
    """The plan of max, min, argmax, argmin and their nan twins on dates; *reduce* is
    ``reduce._arg_reduction`` (called on the int64 keys)."""
    skip = op.startswith("nan")
    base = op[3:] if skip else op
    shift = _shifted(op)
    want_index = base.startswith("arg")
    sentinel = _TOP if shift else NAT  # the key of NaT
    extreme = "max" if base in ("max", "argmax") else "min"

    def plan(x):
        keys = bits(x) - 1 if shift else bits(x)  # int64 arithmetic wraps: NaT -> _TOP
        if not want_index:
            v = np.asarray(reduce(base, keys, axis, keepdims, False, np.int64))
            if skip and (v == sentinel).any():
                warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=5)
            out = (v + 1 if shift else v).view(x.dtype)
            return out[()] if out.ndim == 0 else out
        idx = reduce(base, keys, axis, keepdims, select_last, index_dtype)
        if skip:
            all_nat = np.asarray(reduce(extreme, keys, axis, keepdims, False, np.int64)) == sentinel
            if all_nat.any():
                from .reduce import _all_nan_indices

                idx = _all_nan_indices(op, np.asarray(idx), all_nat, all_nan_index)
                return idx[()] if idx.ndim == 0 else idx
        return idx

    return plan


def cum_extreme(op: str, scan, x: np.ndarray, axis, index_dtype):
    """cummax/cummin of dates (NaT propagates); *scan* is the int64 scan."""
    shift = _shifted(op)
    keys = bits(x) - 1 if shift else bits(x)
    values, indices = scan(keys, axis, index_dtype=index_dtype)
    values = (values + 1 if shift else values).view(x.dtype)
    return values, indices


def timedelta_sum_plan(op: str, value_reduction, axis, keepdims: bool, dtype):
    """sum, mean, nansum, nanmean and count of ``timedelta64`` (see the module)."""
    skip = op.startswith("nan")
    base = op[3:] if skip else op

    def plan(x):
        b = bits(x)
        nat = b == NAT
        if op == "count":
            return value_reduction("sum", ~nat, axis, keepdims, np.int64)
        total = np.asarray(value_reduction("sum", np.where(nat, 0, b), axis, keepdims, None))
        if base == "mean":
            n = np.asarray(value_reduction("sum", ~nat if skip else np.ones_like(nat), axis,
                                           keepdims, np.int64))
        if not skip:
            total = np.where(np.asarray(value_reduction("max", nat, axis, keepdims, None)), NAT,
                             total)
        out = total.astype(np.int64).view(x.dtype)
        if base == "mean":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out = np.where(n > 0, out / np.maximum(n, 1), np.timedelta64("NaT"))
            if (n == 0).any():
                warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=5)
            out = np.asarray(out).astype(x.dtype)
        if dtype is not None and np.dtype(dtype) != x.dtype:
            out = out.astype(dtype)
        return out[()] if out.ndim == 0 else out

    return plan


def timedelta_cumsum(op: str, cumsum, x: np.ndarray, axis, exclusive: bool, reverse: bool):
    """cumsum (NaT from the first NaT on) and nancumsum (NaT read as 0) of timedelta64."""
    b = bits(x)
    nat = b == NAT
    out = cumsum(np.where(nat, 0, b), axis, exclusive=exclusive, reverse=reverse)
    if not op.startswith("nan"):
        seen = cumsum(nat.astype(np.int64), axis, exclusive=exclusive, reverse=reverse) > 0
        out = np.where(seen, NAT, out)
    return np.ascontiguousarray(out).view(x.dtype)

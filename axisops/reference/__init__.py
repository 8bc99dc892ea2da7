"""NumPy twins of the reductions, scans, gathers, scatter, unfold, fold and their gradients:
the test oracle.

Every function here has the public signature of its namesake in :mod:`axisops`
and is written with plain NumPy, for clarity rather than speed: a reduction over
several axes moves them to the end and reshapes, an arg-reduction with
``select_last_index`` flips the block, a scan runs along the rows of a
``(lanes, n)`` view, unfold and fold loop over kernel offsets and output positions
with ``np.ndindex``, a gradient is written from its definition.
One module per family, beside the operators it checks: ``reduce``, ``scan``,
``gather``, ``window``, ``missing`` (the NaN-skipping operators, count, var, std), ``moving`` (the moving
windows), their gradients in ``grad``, the helpers they share in
``_common``; this package re-exports every twin.

This package imports only NumPy, so it can check the library without sharing any
of its code.

Decisions written down here (the contract, ``API.md``, leaves them open):

* ``axis`` out of range raises ``numpy.exceptions.AxisError``, also ``axis=0`` on a
  0-d array (NumPy's ``np.sum`` and ``np.argmax`` accept that as a legacy quirk,
  ``np.mean`` does not; the contract says out of range is an error).
* float16 accumulates in float32 and the result is rounded to float16 once
  (``np.sum`` of float16 accumulates in float16; ``np.mean`` already uses float32).
* ``argmax``/``argmin`` with ``axis=()`` reduce an empty set of axes: the block of
  reduced axes has one element, so every index is 0 (the contract's formula
  with ``moveaxis`` + ``reshape`` gives exactly that).
* ``index_dtype=int32`` raises ``OverflowError`` when the reduced block has more
  elements than int32 can index (a check on the shape, made before reducing).
* Gradients are returned in ``numpy.result_type(g, x)`` (``g``'s dtype for sum and
  mean), with ``x``'s shape. ``grad.max``/``grad.min`` follow ``torch.amax``'s
  backward formula literally, ``(g / count) * mask`` with
  ``mask = (x == max)``: ties share the gradient evenly, and a slice whose
  maximum is NaN has an all-False mask, so its whole gradient is NaN.
* Scans take one ``axis`` (an int, negative from the end) or ``None``, the
  flattened C-order array (a 1-D result of ``x.size``); a tuple or list ``axis`` is
  a ``TypeError``. A 0-d input with ``axis=None`` is a one-element scan that keeps
  its 0-d shape (``cumsum(x) == x``, exclusive gives the identity, ``cummax`` gives
  ``(x, 0)``); ``axis=0`` or ``-1`` on it is an ``AxisError``. Results are
  C-contiguous arrays, never NumPy scalars; zero-size inputs give zero-size results.
* ``cumsum``/``cumprod`` have ``np.cumsum``'s/``np.cumprod``'s result dtype (int8 and
  bool give int64, uint8 uint64, float16 float16). Integers accumulate in int64
  (uint64 for unsigned results) and each output wraps to the result dtype, as
  NumPy's do; float16 accumulates in float32 and each output is rounded once (a
  float16 cumsum of 5000 ones ends at 5000). ``dtype=bool`` is the logical or (and)
  accumulation. ``exclusive``/``reverse`` follow ONNX CumSum (exclusive: the
  identity first; reverse: from the end; both: ``sum over k > j``).
* ``cummax``/``cummin`` return ``(values, indices)`` by torch's rule: element ``j``
  takes over (value and index) when ``isnan(x[j]) or (not isnan(cur) and
  x[j] >= cur)`` (``<=`` for cummin). Ties go to the last; the values are the
  elements taken, bit for bit (``cummax([-0., 0.])`` is ``[-0., 0.]``); bool orders
  ``False < True``. ``index_dtype`` is int32 or int64 (else ``TypeError``), and
  int32 raises ``OverflowError`` when the scanned axis has more than ``2**31``
  elements, checked on the shape before scanning.
* ``logcumsumexp`` is torch's: each step is ``log_add_exp(x_j, acc)`` from ``-inf``
  (NaN gives NaN, equal infinities give that infinity, else
  ``max + log1p(exp(min - max))``), computed in float64 and rounded once; float
  dtypes keep theirs, bool and ints give float64.
* Scan gradients take ``g`` of the forward output's shape (``(size,)`` for
  ``axis=None`` on ``ndim >= 1``), else ``ValueError``, and return ``x``'s shape.
  ``grad.cumsum`` is the cumsum of ``g`` the other way (same ``exclusive``) in
  ``g``'s dtype; ``grad.cumprod`` is ``P_k * S_k`` from the definition (no
  division, exact with zeros) in ``result_type(x, g, float16)``;
  ``grad.cummax``/``grad.cummin`` scatter-add ``g`` at the indices in ``g``'s dtype
  (integer indices of ``g``'s shape in ``[0, n)``: ``TypeError``, ``ValueError``,
  ``IndexError`` naming the first bad one); ``grad.logcumsumexp`` is
  ``sum_{j>=k} g_j exp(x_k - y_j)`` with the factor 1 where ``x_k == y_j`` (so
  ``-inf`` prefixes pass ``g`` through), in logcumsumexp's result dtype.
* Gathers and scatter (``take``, ``take_along_axis``, ``gather_nd``, ``scatter``) take
  indices of any integer dtype (a uint64 above ``2**63`` is just out of range; float
  and bool indices are a ``TypeError``), resolved one at a time as Python ints.
  Every index is checked, also where the result is empty because another dimension
  is 0: an ``IndexError`` names the first bad one in C order of the indices as given,
  its position and ``[-n, n)``, exactly as ``axisops._indices.check_in_range`` does.
  ``mode``: ``"raise"``, ``"wrap"`` (``i % n``), ``"clip"`` (to ``[0, n-1]``, as NumPy)
  or ``"fill"``; indices into an empty axis are an ``IndexError`` except with
  ``"fill"``. ``fill_value`` is a real number; for an integer or bool x it must be
  exactly a value of x's dtype (compared as Python numbers; NaN is no int), for a
  float x it is rounded to x's dtype unless a finite value overflows to inf; it is
  looked at only with ``"fill"``. Results are new C-contiguous
  arrays of x's dtype (0-d stays 0-d).
* ``take_along_axis`` meets sizes off the axis by NumPy's broadcasting (a 1 on either
  side) or, where indices are smaller and not 1, uses the leading part of ``x``
  (torch.gather). ``gather_nd`` is ONNX GatherND with ``1 <= q <= x.ndim - batch_dims``.
* ``scatter`` combines ``updates`` (indices' shape, larger: the leading part, or
  broadcast; cast to x's dtype by ``same_kind``) one position at a time in C order of
  the indices: last write wins, ``"add"``/``"mul"`` in x's dtype (integers wrap,
  float16 in float32 rounded once, bool or/and), ``"max"``/``"min"`` keep a NaN and,
  on a tie, the value already there.
* Their gradients are in ``g``'s dtype (integer and bool ``g`` give float64; float16
  accumulates in float32), summed sequentially in C order; ``grad.scatter`` follows
  ``torch.scatter_reduce(include_self=True)`` except that ``reduce=None`` gives the
  overwritten updates 0 and NaN counts as equal to NaN for ``"max"``/``"min"``.
* ``unfold``/``fold``: ``kernel_size`` is an int (2-D) or 1 to 3 ints >= 1 (bad
  length or value: ``ValueError``, entries that are not ints: ``TypeError``);
  ``dilation`` and ``stride`` an int or one per spatial dim, >= 1, ``output_size``
  the same >= 0, ``padding`` an int, one int per dim or one ``(begin, end)`` pair per
  dim, >= 0 (anything else, non-ints included: ``ValueError``). A padded size
  smaller than the dilated kernel is a ``ValueError`` naming the dim and both sizes.
  ``x`` has ``d + 2`` or ``d + 1`` (unbatched) dimensions, ``cols`` 3 or 2; a wrong
  ``L`` or a channel size not divisible by ``K`` is a ``ValueError`` showing the
  expected shape. ``fold`` adds in increasing kernel index from 0 in cols' dtype
  (float16 in float32, rounded once; integers wrap; bool: or). ``grad.unfold`` is a
  fold, ``grad.fold`` an unfold, in g's dtype (integer and bool ``g``: float64).

Examples
--------
>>> import numpy as np
>>> from axisops import reference as ref
>>> x = np.array([[3, 1, 3], [0, 5, 2]])
>>> ref.sum(x, axis=1)
array([7, 7])
>>> ref.argmax(x, axis=1, select_last_index=True)
array([2, 1])
>>> idx = ref.argmax(x, axis=(0, 1))
>>> idx, ref.unravel(idx, x.shape, (0, 1))
(np.int64(4), (np.int64(1), np.int64(1)))
>>> ref.argmax(np.array([1.0, np.nan, 7.0, np.nan]))
np.int64(1)
>>> ref.grad.max(np.ones(2), x.astype(float), axis=1)
array([[0.5, 0. , 0.5],
       [0. , 1. , 0. ]])
>>> ref.grad.prod(np.ones(1), np.array([[0.0, 2.0, 3.0]]), axis=1)
array([[6., 0., 0.]])
>>> ref.cumsum(x, axis=1, exclusive=True)
array([[0, 3, 4],
       [0, 0, 5]])
>>> ref.cummax(x, axis=1)
ScanResult(values=array([[3, 3, 3],
       [0, 5, 5]]), indices=array([[0, 0, 2],
       [0, 1, 1]]))
>>> ref.take(x, [2, -1], axis=1, mode="wrap"), ref.take_along_axis(x, np.array([[1], [0]]), 1)
(array([[3, 3],
       [2, 2]]), array([[1],
       [0]]))
>>> ref.scatter(x, np.array([[0, 0, 2]]), np.array([[10, 20, 30]]), axis=1, reduce="add")
array([[33,  1, 33],
       [ 0,  5,  2]])
"""
from __future__ import annotations

from ._common import SUPPORTED_DTYPES
from .gather import gather_nd, scatter, take, take_along_axis
from .grad import grad
from .missing import (
    count,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
    std,
    var,
)
from .moving import (
    moving_argmax,
    moving_argmin,
    moving_max,
    moving_mean,
    moving_min,
    moving_std,
    moving_sum,
    moving_var,
)
from .moving_order import moving_median, moving_quantile, moving_rank
from .order import (
    argpartition,
    argsort,
    kthvalue,
    median,
    nanmedian,
    nanquantile,
    partition,
    quantile,
    rank,
    sort,
    top_k,
)
from .reduce import argmax, argmin, max, mean, min, prod, sum, unravel
from .scan import ScanResult, cummax, cummin, cumprod, cumsum, logcumsumexp
from .window import _kernel, fold, unfold  # noqa: F401  (_kernel: the tests check its errors)

__all__ = [
    "sum", "prod", "mean", "max", "min", "argmax", "argmin", "unravel",
    "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "ScanResult",
    "take", "take_along_axis", "gather_nd", "scatter", "unfold", "fold", "grad",
    "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
    "nanargmax", "nanargmin", "nancumsum", "nancumprod", "count", "var", "std",
    "moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max", "moving_min",
    "moving_argmax", "moving_argmin",
    "sort", "argsort", "top_k", "partition", "argpartition", "kthvalue", "median", "nanmedian",
    "quantile", "nanquantile", "rank", "moving_median", "moving_quantile", "moving_rank",
    "SUPPORTED_DTYPES",
]

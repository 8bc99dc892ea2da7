"""Reference twins of the order statistics: sorting, selection, quantiles, ranks and
their gradients (see :mod:`axisops.reference`).

Every lane is handled on its own with plain NumPy: the axis is moved last and the
array viewed as ``(lanes, n)`` (``axis=None``: one lane, the flattened C-order
array). The one order is built from NumPy's stable sort and nothing else:

* ``np.argsort(lane, kind="stable")`` is the ascending order: -inf < numbers <
  +inf < NaN (NaT last for dates), -0.0 equal to +0.0, equal elements in input order.
* Each element gets a *dense key* (its group number in that order: equal elements
  share one, NaN/NaT share the last); the descending order is the stable argsort of
  ``-key`` with NaN/NaT moved past everything (``key = n + 1``). So NaN is last in
  both directions and ties keep the lower index first in both directions: the
  descending order is not the ascending one reversed.

Decisions written down here (the contract leaves them open):

* dtypes: bool, int8..int64, uint8..uint64, float16/32/64 for every twin;
  datetime64/timedelta64 also for ``sort``, ``argsort``, ``top_k``, ``partition``,
  ``argpartition``, ``kthvalue``. Anything else (complex, object, str, dates for the
  quantiles and ``rank``): ``TypeError`` naming the operator.
* ``axis`` of the sorting, selecting and ranking twins is one int (negative from the
  end) or ``None`` (the flattened C-order array, a 1-D result; a 0-d input is one
  element). A tuple or list: ``TypeError``; out of range, also any int on a 0-d
  input: ``numpy.exceptions.AxisError``.
* ``index_dtype`` is int32 or int64 (a dtype, a type or a string); anything else is a
  ``TypeError``; int32 where the lane has more than ``2**31`` elements is an
  ``OverflowError`` (a check of the shape).
* Values are the input's elements themselves, bit for bit (``sort([0., -0.])`` is
  ``[0., -0.]``). Results are new C-contiguous ndarrays, never views of the input.
* ``top_k``: ``k`` an int (a bool or float is a ``TypeError``) with ``0 <= k <= n``
  (``ValueError``); ``mode`` ``"largest"`` or ``"smallest"`` (``ValueError``); values
  and indices are the first ``k`` of the stable descending (ascending) order; the twin
  always returns them sorted (``sorted=False`` allows another order of the same ``k``).
* ``partition``/``argpartition``: ``kth`` an int or a 1-D sequence of ints, negative
  from the end; out of range: ``ValueError``; a bool or a float: ``TypeError`` (the
  contract's rule for index inputs; NumPy raises ``ValueError`` for a bool). The twin returns the fully sorted lane (the stable
  argsort), which is one valid partition; tests of the library check properties.
* ``kthvalue``: ``k`` an int (``TypeError`` otherwise), ``1 <= k <= n``
  (``ValueError``); the element at place ``k - 1`` of the stable ascending order and
  its index. ``keepdims`` keeps the axis as 1; ``axis=None`` gives 0-d ndarrays (with
  ``keepdims``, every axis as 1) and the flat index. Never NumPy scalars.
* ``median``, ``nanmedian``, ``quantile``, ``nanquantile`` call NumPy: the values, the
  dtypes, NumPy scalars for 0-d results (arrays made C-contiguous), the warnings and the errors (``q`` outside
  [0, 1], unknown method: ``ValueError``; plain ``quantile`` over an empty axis:
  NumPy's ``IndexError``) are NumPy's. A bool input with a method that
  interpolates is a ``TypeError`` naming the operator (NumPy's own is about
  subtracting booleans); the methods that pick an element keep NumPy's bool result.
* ``rank``: ``scipy.stats.rankdata`` of the non-NaN values of each lane (ranks from
  1, ties by ``method``: ``average``, ``min``, ``max``, ``dense``, ``ordinal`` in the
  stable order; another method: ``ValueError``); NaN gets NaN; float64 always.

Gradients (``grad_*``; ``argsort``, ``argpartition`` and ``rank`` have none, and
``partition``'s goes through the library's own ``argpartition``, so it has no twin):

* Returned with ``x``'s shape (``x_shape``) in ``np.result_type(g, x)`` for a float
  ``x``, else in ``g``'s dtype; ``g`` must have the forward output's shape
  (``ValueError``). For the quantile family an integer or bool ``g`` gives float64
  (the weights split it), and the sum is made in float64 and rounded once.
* ``grad_sort``: ``g`` put back through the stable argsort. ``grad_top_k`` and
  ``grad_kthvalue``: ``g`` added at ``indices`` along the axis into zeros of
  ``x_shape`` (``indices`` integers in ``[0, n)``: ``TypeError``, ``IndexError``).
* ``grad_median``, ``grad_nanmedian``, ``grad_quantile``, ``grad_nanquantile``: the
  reduced axes are merged in C order (as NumPy does); in each lane with ``m`` values
  (the non-NaN ones for the nan-variants, all for the plain ones) NumPy's virtual
  index for the method gives a previous place ``lo``, a next place ``hi`` and a weight
  ``gamma`` (NumPy's ``_compute_virtual_index``, ``_get_indexes``, ``_get_gamma``,
  clamped to ``[0, m - 1]``): the element at stable place ``lo`` gets
  ``g * (1 - gamma)``, the one at ``hi`` gets ``g * gamma`` (all of ``g`` where
  ``lo == hi``). A plain lane holding a NaN gives all its ``g`` to its first NaN (in
  index order); an all-NaN lane of a nan-variant gets nothing. ``q`` may have any
  shape (``g`` then has ``q.shape`` in front); the contributions add.

>>> sort(np.array([2.0, np.nan, -0.0, 0.0, -1.0]), descending=True)
array([ 2., -0.,  0., -1., nan])
>>> argsort(np.array([1, 3, 1, 3]), descending=True)
array([1, 3, 0, 2])
>>> top_k(np.array([[1, 5, 5, 2]]), 2)
ValuesIndices(values=array([[5, 5]]), indices=array([[1, 2]]))
>>> rank(np.array([3.0, np.nan, 1.0, 3.0]), method="min")
array([ 2., nan,  1.,  2.])
>>> grad_median(np.float64(1.0), np.array([4.0, 1.0, 3.0, 2.0]))
array([0. , 0. , 0.5, 0.5])
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from ._common import SUPPORTED_DTYPES, AxisError, _axes, _blocks, _out_shape

__all__ = [
    "sort", "argsort", "top_k", "partition", "argpartition", "kthvalue",
    "median", "nanmedian", "quantile", "nanquantile", "rank",
    "grad_sort", "grad_top_k", "grad_kthvalue", "grad_median", "grad_nanmedian",
    "grad_quantile", "grad_nanquantile", "QUANTILE_METHODS", "RANK_METHODS", "ValuesIndices",
    "quantile_weights",
]

#: NumPy's thirteen quantile methods (the interpolating ones marked True).
QUANTILE_METHODS = {
    "inverted_cdf": False, "averaged_inverted_cdf": True, "closest_observation": False,
    "interpolated_inverted_cdf": True, "hazen": True, "weibull": True, "linear": True,
    "median_unbiased": True, "normal_unbiased": True, "lower": False, "higher": False,
    "midpoint": True, "nearest": False,
}
RANK_METHODS = ("average", "min", "max", "dense", "ordinal")
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


class ValuesIndices(NamedTuple):
    """``(values, indices)`` of :func:`top_k` and :func:`kthvalue`."""

    values: np.ndarray
    indices: np.ndarray


# --------------------------------------------------------------------------- checks

def _input(x, op, dates):
    """``np.asarray(x)``; ``TypeError`` naming *op* outside the supported dtypes."""
    x = np.asarray(x)
    if x.dtype in SUPPORTED_DTYPES or (dates and x.dtype.kind in "Mm"):
        return x
    raise TypeError(f"{op}: unsupported dtype {x.dtype}")


def _one_axis(axis, ndim, op):
    """``None`` or one non-negative axis."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be an int or None, got {axis!r}")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: axis must be an int or None, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim)
    return a % ndim


def _index_dtype(index_dtype, n, op):
    try:
        dt = np.dtype(index_dtype)
    except TypeError:
        raise TypeError(f"{op}: index_dtype must be int32 or int64, got {index_dtype!r}") from None
    if dt not in _INDEX_DTYPES:
        raise TypeError(f"{op}: index_dtype must be int32 or int64, got {dt}")
    if dt == np.int32 and n - 1 > np.iinfo(np.int32).max:
        raise OverflowError(f"{op}: int32 cannot index an axis of {n} elements")
    return dt


def _int(k, name, op):
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an int, got {k!r}")
    return int(k)


def _missing(a):
    """Where *a* holds NaN (floats) or NaT (dates)."""
    if a.dtype.kind == "f":
        return np.isnan(a)
    if a.dtype.kind in "Mm":
        return np.isnat(a)
    return np.zeros(a.shape, bool)


# --------------------------------------------------------------------------- lanes

def _lanes(x, axis):
    """*x* as ``(lanes, n)`` with *axis* last (``None``: one lane of every element),
    and a function that turns a ``(lanes, m)`` array back (the axis of length m)."""
    if axis is None:
        a = x.reshape(1, x.size)
        return a, lambda r: np.ascontiguousarray(r.reshape(r.shape[-1]))
    moved = np.moveaxis(x, axis, -1)
    lead = moved.shape[:-1]
    a = moved.reshape(math.prod(lead), moved.shape[-1])

    def back(r):
        return np.ascontiguousarray(np.moveaxis(r.reshape(lead + (r.shape[-1],)), -1, axis))
    return a, back


def _dense_keys(a):
    """int64 keys of a ``(lanes, n)`` array: equal elements (-0.0 == +0.0) share one,
    the keys grow with the stable ascending order, NaN/NaT get ``n + 1``."""
    order = np.argsort(a, axis=-1, kind="stable")
    s = np.take_along_axis(a, order, axis=-1)
    miss = _missing(s)
    new = np.ones(s.shape, bool)
    if s.shape[-1] > 1:
        new[:, 1:] = s[:, 1:] != s[:, :-1]
    keys_sorted = np.cumsum(new, axis=-1)
    keys_sorted[miss] = s.shape[-1] + 1
    keys = np.empty(a.shape, np.int64)
    np.put_along_axis(keys, order, keys_sorted, axis=-1)
    return keys


def _order(a, descending):
    """The stable order of each lane of a ``(lanes, n)`` array (NaN last both ways)."""
    if not descending:
        return np.argsort(a, axis=-1, kind="stable")
    keys = _dense_keys(a)
    key = np.where(keys == a.shape[-1] + 1, keys, -keys)
    return np.argsort(key, axis=-1, kind="stable")


# --------------------------------------------------------------------------- sorting

def sort(x, axis=-1, *, descending=False):
    """The elements of each lane in the stable order (NaN last both ways)."""
    x = _input(x, "sort", dates=True)
    a, back = _lanes(x, _one_axis(axis, x.ndim, "sort"))
    return back(np.take_along_axis(a, _order(a, bool(descending)), axis=-1))


def argsort(x, axis=-1, *, descending=False, index_dtype=np.int64):
    """The indices of the stable order of each lane."""
    x = _input(x, "argsort", dates=True)
    a, back = _lanes(x, _one_axis(axis, x.ndim, "argsort"))
    dt = _index_dtype(index_dtype, a.shape[-1], "argsort")
    return back(_order(a, bool(descending)).astype(dt))


def top_k(x, k, axis=-1, *, mode="largest", sorted=True, index_dtype=np.int64):
    """``(values, indices)`` of the first *k* of the stable descending (``"largest"``)
    or ascending (``"smallest"``) order of each lane."""
    x = _input(x, "top_k", dates=True)
    a, back = _lanes(x, _one_axis(axis, x.ndim, "top_k"))
    n = a.shape[-1]
    k = _int(k, "k", "top_k")
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k must be in [0, {n}], got {k}")
    if mode not in ("largest", "smallest"):
        raise ValueError(f"top_k: mode must be 'largest' or 'smallest', got {mode!r}")
    dt = _index_dtype(index_dtype, n, "top_k")
    idx = _order(a, mode == "largest")[:, :k]
    return ValuesIndices(back(np.take_along_axis(a, idx, axis=-1)), back(idx.astype(dt)))


def _kth(kth, n, op):
    """*kth* as a list of non-negative places in ``[0, n)``."""
    k = np.asarray(kth)
    if k.dtype == np.bool_:
        raise TypeError(f"{op}: kth must be an int or a sequence of ints, got booleans")
    if k.size == 0 and k.ndim == 1:
        return []
    if k.dtype.kind not in "iu":
        raise TypeError(f"{op}: kth must be an int or a sequence of ints, got {kth!r}")
    if k.ndim > 1:
        raise ValueError(f"{op}: kth must be an int or a 1-D sequence, got {k.ndim}-D")
    out = []
    for v in k.reshape(-1).tolist():
        if not -n <= v < n:
            raise ValueError(f"{op}: kth={v} out of bounds for an axis of {n}")
        out.append(v % n)
    return out


def partition(x, kth, axis=-1):
    """A partition of each lane around the places *kth*: the twin gives the stable
    sort, which is one (the library may order each side otherwise)."""
    x = _input(x, "partition", dates=True)
    a, back = _lanes(x, _one_axis(axis, x.ndim, "partition"))
    _kth(kth, a.shape[-1], "partition")
    return back(np.take_along_axis(a, _order(a, False), axis=-1))


def argpartition(x, kth, axis=-1, *, index_dtype=np.int64):
    """Indices of :func:`partition`'s result (the twin: the stable argsort)."""
    x = _input(x, "argpartition", dates=True)
    a, back = _lanes(x, _one_axis(axis, x.ndim, "argpartition"))
    _kth(kth, a.shape[-1], "argpartition")
    dt = _index_dtype(index_dtype, a.shape[-1], "argpartition")
    return back(_order(a, False).astype(dt))


def kthvalue(x, k, axis=-1, *, keepdims=False, index_dtype=np.int64):
    """``(values, indices)``: the element at place ``k - 1`` of the stable ascending
    order of each lane (``k`` from 1) and its index."""
    x = _input(x, "kthvalue", dates=True)
    ax = _one_axis(axis, x.ndim, "kthvalue")
    a, back = _lanes(x, ax)
    n = a.shape[-1]
    k = _int(k, "k", "kthvalue")
    if not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be in [1, {n}], got {k}")
    dt = _index_dtype(index_dtype, n, "kthvalue")
    idx = _order(a, False)[:, k - 1:k]
    vals, idx = back(np.take_along_axis(a, idx, axis=-1)), back(idx.astype(dt))
    if ax is None:
        shape = (1,) * x.ndim if keepdims else ()
    else:
        shape = _out_shape(x.shape, (ax,), bool(keepdims))
    return ValuesIndices(vals.reshape(shape).copy(order="C"), idx.reshape(shape).copy(order="C"))


def rank(x, axis=-1, *, method="average"):
    """``scipy.stats.rankdata`` of the non-NaN values of each lane (NaN gets NaN)."""
    x = _input(x, "rank", dates=False)
    a, back = _lanes(x, _one_axis(axis, x.ndim, "rank"))
    if method not in RANK_METHODS:
        raise ValueError(f"rank: method must be one of {RANK_METHODS}, got {method!r}")
    out = np.full(a.shape, np.nan)
    order = _order(a, False)
    for i in range(a.shape[0]):
        lane = a[i]
        m = int((~_missing(lane)).sum())
        o = order[i, :m]                    # the values in the stable order
        s = lane[o]
        new = np.ones(m, bool)
        new[1:] = s[1:] != s[:-1]
        group = np.cumsum(new) - 1          # dense group of each place, from 0
        starts = np.flatnonzero(new)        # first place of each group
        ends = np.append(starts[1:], m) - 1  # last place of each group
        places = np.arange(m)
        r = {"ordinal": places + 1.0,
             "min": starts[group] + 1.0,
             "max": ends[group] + 1.0,
             "average": (starts[group] + ends[group]) / 2.0 + 1.0,
             "dense": group + 1.0}[method]
        out[i, o] = r
    return back(out)


# --------------------------------------------------------------------------- quantiles

def _stat_input(x, op):
    return _input(x, op, dates=False)


def _c_order(r):
    """NumPy's result, an ndarray made C-contiguous (NumPy may keep the input's
    layout), a NumPy scalar as it is."""
    return r.copy(order="C") if isinstance(r, np.ndarray) and not r.flags.c_contiguous else r


def _numpy_quantile(func, x, q, axis, method, keepdims):
    if x.dtype == np.bool_ and QUANTILE_METHODS.get(method, False):
        # NumPy cannot subtract booleans: its own TypeError, named
        raise TypeError(f"{func.__name__}: bool input cannot be interpolated")
    return _c_order(func(x, q, axis=axis, method=method, keepdims=keepdims))


def median(x, axis=None, *, keepdims=False):
    """``np.median``."""
    return _c_order(np.median(_stat_input(x, "median"), axis=axis, keepdims=keepdims))


def nanmedian(x, axis=None, *, keepdims=False):
    """``np.nanmedian``."""
    return _c_order(np.nanmedian(_stat_input(x, "nanmedian"), axis=axis, keepdims=keepdims))


def quantile(x, q, axis=None, *, method="linear", keepdims=False):
    """``np.quantile``."""
    return _numpy_quantile(np.quantile, _stat_input(x, "quantile"), q, axis, method, keepdims)


def nanquantile(x, q, axis=None, *, method="linear", keepdims=False):
    """``np.nanquantile``."""
    return _numpy_quantile(np.nanquantile, _stat_input(x, "nanquantile"), q, axis, method,
                           keepdims)


# --------------------------------------------------------------------------- gradients

def _grad_dtype(g, x_dtype, split=False):
    dt = np.result_type(g.dtype, x_dtype) if np.dtype(x_dtype).kind == "f" else g.dtype
    if split and dt.kind != "f":
        dt = np.dtype(np.float64)
    return np.dtype(dt)


def _check_g(g, shape, op):
    if g.shape != tuple(shape):
        raise ValueError(f"{op}: g has shape {g.shape}, expected {tuple(shape)}")


def grad_sort(g, x, axis=-1, *, descending=False):
    """``g`` put back through the stable argsort."""
    x = _input(x, "grad_sort", dates=False)
    g = np.asarray(g)
    ax = _one_axis(axis, x.ndim, "grad_sort")
    a, back = _lanes(x, ax)
    _check_g(g, (x.size,) if ax is None else x.shape, "grad_sort")
    gl, _ = _lanes(g, 0 if ax is None else ax)
    out = np.zeros(a.shape, _grad_dtype(g, x.dtype))
    np.put_along_axis(out, _order(a, bool(descending)), gl, axis=-1)
    return back(out).reshape(x.shape).copy(order="C")


def _scatter(g, indices, x_shape, ax, op):
    """Add each ``g`` at its index along *ax* (``None``: flat) into zeros of *x_shape*,
    *g* and *indices* having the axis (of any length) in place."""
    x_shape = tuple(x_shape)
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got {indices.dtype}")
    n = math.prod(x_shape) if ax is None else x_shape[ax]
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        bad = np.flatnonzero((indices < 0) | (indices >= n))[0]
        raise IndexError(f"{op}: index {indices.reshape(-1)[bad]} at {bad} is out of [0, {n})")
    out = np.zeros(x_shape, g.dtype)
    if ax is None:
        np.add.at(out.reshape(-1), indices.reshape(-1).astype(np.intp), g.reshape(-1))
        return out
    moved = np.moveaxis(out, ax, -1)                    # a view: written through
    gi, ii = np.moveaxis(g, ax, -1), np.moveaxis(indices, ax, -1)
    for lane in np.ndindex(moved.shape[:-1]):
        np.add.at(moved[lane], ii[lane].astype(np.intp), gi[lane])
    return out


def grad_top_k(g, indices, x_shape, axis=-1):
    """``g`` added at ``indices`` along *axis* into zeros of *x_shape*."""
    g, indices = np.asarray(g), np.asarray(indices)
    ax = _one_axis(axis, len(tuple(x_shape)), "grad_top_k")
    _check_g(g, indices.shape, "grad_top_k")
    return _scatter(g, indices, x_shape, ax, "grad_top_k")


def grad_kthvalue(g, indices, x_shape, axis=-1, keepdims=False):
    """``g`` put at ``indices`` along *axis* into zeros of *x_shape*."""
    g, indices = np.asarray(g), np.asarray(indices)
    x_shape = tuple(x_shape)
    ax = _one_axis(axis, len(x_shape), "grad_kthvalue")
    if ax is None:
        want = (1,) * len(x_shape) if keepdims else ()
    else:
        want = _out_shape(x_shape, (ax,), bool(keepdims))
    _check_g(g, want, "grad_kthvalue")
    _check_g(indices, want, "grad_kthvalue")
    if ax is None:
        return _scatter(g.reshape(1), indices.reshape(1), x_shape, None, "grad_kthvalue")
    if not keepdims:
        g, indices = np.expand_dims(g, ax), np.expand_dims(indices, ax)
    return _scatter(g, indices, x_shape, ax, "grad_kthvalue")


def _discrete(index, condition):
    """NumPy's ``_discrete_interpolation_to_boundaries``."""
    previous = np.floor(index)
    gamma = index - previous
    res = np.where(condition(gamma, index), previous, previous + 1).astype(np.intp)
    return np.maximum(res, 0)


def _virtual_index(m, q, method):
    """NumPy's virtual index of ``q`` (a 0-d array of q's dtype) in ``m`` values."""
    def hf(alpha, beta):
        return m * q + (alpha + q * (1 - alpha - beta)) - 1
    return np.asanyarray({
        "inverted_cdf": lambda: _discrete(m * q - 1, lambda g, _: g == 0),
        "averaged_inverted_cdf": lambda: m * q - 1,
        "closest_observation": lambda: _discrete(
            m * q - 1 - 0.5, lambda g, i: (g == 0) & (np.floor(i) % 2 == 1)),
        "interpolated_inverted_cdf": lambda: hf(0, 1),
        "hazen": lambda: hf(0.5, 0.5),
        "weibull": lambda: hf(0, 0),
        "linear": lambda: (m - 1) * q,
        "median_unbiased": lambda: hf(1 / 3.0, 1 / 3.0),
        "normal_unbiased": lambda: hf(3 / 8.0, 3 / 8.0),
        "lower": lambda: np.floor((m - 1) * q).astype(np.intp),
        "higher": lambda: np.ceil((m - 1) * q).astype(np.intp),
        "midpoint": lambda: 0.5 * (np.floor((m - 1) * q) + np.ceil((m - 1) * q)),
        "nearest": lambda: np.around((m - 1) * q).astype(np.intp),
    }[method]())


def quantile_weights(m, q, method="linear"):
    """``[(place, weight), ...]``: how the quantile *q* of *m* sorted values (m >= 1)
    weighs the values at those places of the stable order (one or two places,
    weights adding to 1), as NumPy computes it.

    >>> quantile_weights(4, np.asarray(0.5))
    [(1, 0.5), (2, 0.5)]
    >>> quantile_weights(5, np.asarray(1.0), "hazen")
    [(4, 1.0)]
    """
    vi = _virtual_index(m, np.asanyarray(q), method)
    if vi.dtype.kind in "iu":                      # an element, no interpolation
        return [(min(max(int(vi), 0), m - 1), 1.0)]
    v = float(vi)
    if v >= m - 1:
        return [(m - 1, 1.0)]
    if v < 0:
        return [(0, 1.0)]
    lo = math.floor(v)
    gamma = vi - np.floor(vi)
    if method == "averaged_inverted_cdf":
        gamma = 0.5 if gamma == 0 else 1.0
    elif method == "midpoint":
        gamma = 0.0 if vi % 1 == 0 else 0.5
    gamma = float(gamma)
    if gamma == 0.0:
        return [(lo, 1.0)]
    if gamma == 1.0:
        return [(lo + 1, 1.0)]
    return [(lo, 1.0 - gamma), (lo + 1, gamma)]


def _grad_quantile(op, g, x, q, axis, method, keepdims, skip_nan):
    x = _stat_input(x, op)
    g = np.asarray(g)
    if method not in QUANTILE_METHODS:
        raise ValueError(f"{op}: unknown method {method!r}")
    qa = np.asanyarray(q)
    if qa.size and not (qa.min() >= 0 and qa.max() <= 1):
        raise ValueError(f"{op}: q must be in [0, 1]")
    axes = _axes(axis, x.ndim, op)
    b, kept, _ = _blocks(x, axes)
    _check_g(g, qa.shape + _out_shape(x.shape, axes, bool(keepdims)), op)
    gq = g.reshape((qa.size,) + kept).astype(np.float64)
    acc = np.zeros(b.shape, np.float64)
    qs = [qa.reshape(-1)[j][()] for j in range(qa.size)]
    qs = [np.asanyarray(v) for v in qs]
    for lane in np.ndindex(kept):
        values = b[lane]
        miss = _missing(values)
        if not skip_nan and miss.any():
            acc[lane + (int(np.flatnonzero(miss)[0]),)] += gq[(slice(None),) + lane].sum()
            continue
        order = np.argsort(values, kind="stable")     # NaN last
        m = int((~miss).sum())
        if m == 0:
            continue
        for j, qv in enumerate(qs):
            for place, w in quantile_weights(m, qv, method):
                acc[lane + (int(order[place]),)] += gq[(j,) + lane] * w
    kept_shape = tuple(n_ for d, n_ in enumerate(x.shape) if d not in axes)
    moved = acc.reshape(kept_shape + tuple(x.shape[a] for a in axes))
    out = np.moveaxis(moved, tuple(range(x.ndim - len(axes), x.ndim)), axes)
    return out.astype(_grad_dtype(g, x.dtype, split=True), order="C")


def grad_median(g, x, axis=None, keepdims=False):
    """Gradient of :func:`median`: the middle element (even length: half to each of
    the two middle ones); a lane with a NaN: its first NaN."""
    return _grad_quantile("grad_median", g, x, 0.5, axis, "linear", keepdims, False)


def grad_nanmedian(g, x, axis=None, keepdims=False):
    """Gradient of :func:`nanmedian` (the median of the non-NaN values)."""
    return _grad_quantile("grad_nanmedian", g, x, 0.5, axis, "linear", keepdims, True)


def grad_quantile(g, x, q, axis=None, *, method="linear", keepdims=False):
    """Gradient of :func:`quantile`: ``g`` split between the two elements interpolated."""
    return _grad_quantile("grad_quantile", g, x, q, axis, method, keepdims, False)


def grad_nanquantile(g, x, q, axis=None, *, method="linear", keepdims=False):
    """Gradient of :func:`nanquantile`."""
    return _grad_quantile("grad_nanquantile", g, x, q, axis, method, keepdims, True)


"""Properties of the scans that must hold for any input (Hypothesis).

Each property is checked on small random arrays of random dtype and shape (NaN,
±inf and ±0.0 allowed for floats, some views non-contiguous or reversed) along a
random axis or the flattened array.
"""
from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from cases import drawn_dtypes, mismatch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import axisops

DTYPES = drawn_dtypes([np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint16, np.uint64,
                       np.float16, np.float32, np.float64])
INT_DTYPES = drawn_dtypes([np.bool_, np.int8, np.int16, np.int64, np.uint8, np.uint16, np.uint32,
                           np.uint64])
SETTINGS = settings(max_examples=50, deadline=None)
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@st.composite
def arrays(draw, min_dims=1, max_dims=4, dtypes=DTYPES, min_side=0, elements=None):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims,
                                  min_side=min_side, max_side=5))
    if elements is None and dtype.kind == "f":
        elements = st.floats(width=8 * dtype.itemsize, allow_nan=False, allow_infinity=False,
                             min_value=-100, max_value=100) | st.sampled_from(
                                 [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0])
    x = draw(hnp.arrays(dtype, shape, elements=elements))
    # sometimes a non-contiguous view of the same values
    if x.ndim >= 2 and draw(st.booleans()):
        x = np.ascontiguousarray(np.swapaxes(x, 0, -1)).swapaxes(0, -1)
    if draw(st.booleans()):
        x = x[(slice(None, None, -1),) * x.ndim]
    return x


@st.composite
def array_and_axis(draw, **kw):
    """An array and an axis (possibly negative), or None (the flattened array)."""
    x = draw(arrays(**kw))
    axis = draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    return x, axis


def _scanned(x, axis):
    """(x as the forward sees it, the axis it scans): flattened for axis=None."""
    return (x.reshape(-1), 0) if axis is None else (x, axis)


def _bits(a):
    a = np.asarray(a)
    return a.view(_UINT[a.itemsize]) if a.dtype.kind == "f" else a


@SETTINGS
@given(array_and_axis(), st.sampled_from(["cummax", "cummin"]))
def test_cum_extreme_values_are_the_running_extreme(xa, op):
    """NaN-free, the running max (min) of the prefix; from the first NaN on, NaN
    (``np.maximum.accumulate`` propagates NaN in exactly that way)."""
    x, axis = xa
    values, _ = getattr(axisops, op)(x, axis)
    flat, ax = _scanned(x, axis)
    ufunc = np.maximum if op == "cummax" else np.minimum
    assert mismatch(values, ufunc.accumulate(flat, axis=ax)) is None


@SETTINGS
@given(array_and_axis(), st.sampled_from(["cummax", "cummin"]),
       st.sampled_from([np.int32, np.int64]))
def test_cum_extreme_indices_pick_the_values(xa, op, index_dtype):
    """``take_along_axis(x, indices) == values`` bit for bit; indices never decrease
    along the axis, and ``0 <= indices[j] <= j``."""
    x, axis = xa
    values, indices = getattr(axisops, op)(x, axis, index_dtype=index_dtype)
    assert indices.dtype == index_dtype and values.dtype == x.dtype
    flat, ax = _scanned(x, axis)
    assert values.shape == indices.shape == flat.shape
    taken = np.take_along_axis(flat, indices.astype(np.intp), axis=ax)
    assert np.array_equal(_bits(taken), _bits(values))
    if flat.size == 0:
        return
    j = np.arange(flat.shape[ax]).reshape([-1 if d == ax % flat.ndim else 1
                                           for d in range(flat.ndim)])
    assert np.all(indices >= 0) and np.all(indices <= j)
    assert np.all(np.diff(indices.astype(np.int64), axis=ax) >= 0)
    # the element at the index is the extreme itself: it ties (or is) the running value
    with np.errstate(invalid="ignore"):
        ufunc = np.maximum if op == "cummax" else np.minimum
        assert mismatch(taken, ufunc.accumulate(flat, axis=ax)) is None


@SETTINGS
@given(array_and_axis(dtypes=INT_DTYPES), st.sampled_from(["cumsum", "cumprod"]))
def test_integer_scans_equal_numpy(xa, op):
    """Integers (and bool) wrap exactly as NumPy's, in NumPy's result dtype."""
    x, axis = xa
    got = getattr(axisops, op)(x, axis)
    with np.errstate(over="ignore"):
        want = getattr(np, op)(x, axis=axis)
    assert mismatch(got, want) is None


@SETTINGS
@given(array_and_axis(), st.sampled_from(["cumsum", "cumprod"]), st.booleans())
def test_reverse_is_the_flipped_scan(xa, op, exclusive):
    """``scan(x, reverse=True) == flip(scan(flip(x)))`` along the axis (the same
    additions in the same order, so exactly, floats included)."""
    x, axis = xa
    flat, ax = _scanned(x, axis)
    f = getattr(axisops, op)
    with np.errstate(all="ignore"):
        got = f(x, axis, reverse=True, exclusive=exclusive)
        want = np.flip(f(np.flip(flat, ax), ax, exclusive=exclusive), ax)
    assert mismatch(got, want) is None


@SETTINGS
@given(array_and_axis(), st.sampled_from(["cumsum", "cumprod"]), st.booleans())
def test_exclusive_is_inclusive_shifted(xa, op, reverse):
    """The exclusive scan is the inclusive one moved by one step, the identity first."""
    x, axis = xa
    flat, ax = _scanned(x, axis)
    f = getattr(axisops, op)
    with np.errstate(all="ignore"):
        inc = f(x, axis, reverse=reverse)
        exc = f(x, axis, exclusive=True, reverse=reverse)
    assert exc.dtype == inc.dtype and exc.shape == inc.shape
    n = flat.shape[ax]
    if n == 0:
        return
    if reverse:
        inc, exc = np.flip(inc, ax), np.flip(exc, ax)
    first = np.take(exc, [0], axis=ax)
    assert np.all(first == (0 if op == "cumsum" else 1))
    assert mismatch(np.take(exc, range(1, n), axis=ax), np.take(inc, range(n - 1), axis=ax)) is None


@SETTINGS
@given(array_and_axis(dtypes=[np.float64, np.float32],
                      elements=st.floats(-50, 50, width=32)))
def test_logcumsumexp_ends_at_logsumexp(xa):
    x, axis = xa
    flat, ax = _scanned(x, axis)
    y = axisops.logcumsumexp(x, axis)
    assert y.dtype == x.dtype and y.shape == flat.shape
    if flat.shape[ax] == 0:
        return
    last = np.take(y, [-1], axis=ax).astype(np.float64)
    want = np.log(np.sum(np.exp(flat.astype(np.float64)), axis=ax, keepdims=True))
    eps = float(np.finfo(x.dtype).eps)
    np.testing.assert_allclose(last, want, rtol=0, atol=(flat.shape[ax] + 4) * eps * 60)
    # and it never decreases along the axis, nor falls below x itself
    assert np.all(np.diff(y, axis=ax) >= 0)
    assert np.all(y >= flat)


@SETTINGS
@given(array_and_axis(dtypes=[np.int64], elements=st.integers(-1000, 1000)),
       st.booleans(), st.booleans(), st.data())
def test_grad_cumsum_is_the_adjoint(xa, exclusive, reverse, data):
    """``<cumsum(x), g> == <x, grad.cumsum(g)>``, exactly on integers."""
    x, axis = xa
    flat, _ = _scanned(x, axis)
    g = data.draw(hnp.arrays(np.int64, flat.shape, elements=st.integers(-1000, 1000)))
    lhs = np.sum(axisops.cumsum(x, axis, exclusive=exclusive, reverse=reverse) * g)
    dx = axisops.grad.cumsum(g, x.shape, axis, exclusive=exclusive, reverse=reverse)
    assert dx.shape == x.shape and dx.dtype == g.dtype
    assert lhs == np.sum(x * dx)


@SETTINGS
@given(array_and_axis(dtypes=[np.float64, np.float32]), st.sampled_from(["cummax", "cummin"]))
def test_grad_cum_extreme_conserves_g(xa, op):
    """The scatter-add moves every g_j to one place: lane sums are kept (finite g)."""
    x, axis = xa
    _, indices = getattr(axisops, op)(x, axis)
    g = np.arange(indices.size, dtype=np.float64).reshape(indices.shape) % 7 - 3
    dx = getattr(axisops.grad, op)(g, indices, x.shape, axis)
    assert dx.shape == x.shape and dx.dtype == g.dtype
    flat_dx, ax = _scanned(dx, axis)
    np.testing.assert_array_equal(np.sum(flat_dx, axis=ax), np.sum(g, axis=ax))

"""Properties of the reductions that must hold for any input (Hypothesis).

Each property is checked on small random arrays of random dtype and shape, with
NaN and infinities allowed for floats, and on random axes.
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
SETTINGS = settings(max_examples=50, deadline=None)


@st.composite
def arrays(draw, min_dims=1, max_dims=4, dtypes=DTYPES, min_side=1):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims,
                                  min_side=min_side, max_side=4))
    if dtype.kind == "f":
        elements = st.floats(width=8 * dtype.itemsize, allow_nan=False, allow_infinity=False,
                             min_value=-100, max_value=100) | st.sampled_from(
                                 [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0])
    else:
        elements = None
    x = draw(hnp.arrays(dtype, shape, elements=elements))
    # sometimes a non-contiguous view of the same values
    if x.ndim >= 2 and draw(st.booleans()):
        x = np.ascontiguousarray(np.swapaxes(x, 0, -1)).swapaxes(0, -1)
    if draw(st.booleans()):
        x = x[(slice(None, None, -1),) * x.ndim]
    return x


@st.composite
def array_and_axes(draw, **kw):
    """An array and a tuple of distinct axes (possibly negative, in any order)."""
    x = draw(arrays(**kw))
    picked = draw(st.lists(st.integers(0, x.ndim - 1), unique=True, max_size=x.ndim))
    axis = tuple(a - x.ndim if draw(st.booleans()) else a for a in picked)
    return x, axis


@st.composite
def array_and_axis(draw, **kw):
    x = draw(arrays(**kw))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    return x, axis


def _norm(axis, ndim):
    return tuple(sorted(a % ndim for a in axis))


@SETTINGS
@given(array_and_axis(), st.sampled_from(["max", "min"]), st.booleans())
def test_take_along_argmax_is_max(xa, op, last):
    x, axis = xa
    idx = getattr(axisops, "arg" + op)(x, axis, keepdims=True, select_last_index=last)
    taken = np.take_along_axis(x, idx, axis)
    assert mismatch(taken, getattr(axisops, op)(x, axis, keepdims=True)) is None


@SETTINGS
@given(array_and_axes(), st.sampled_from(["argmax", "argmin"]), st.booleans())
def test_tuple_axis_argmax_is_argmax_of_moved_block(xa, op, last):
    x, axis = xa
    red = _norm(axis, x.ndim)
    kept = tuple(n for d, n in enumerate(x.shape) if d not in red)
    n = int(np.prod([x.shape[d] for d in red], dtype=np.int64))
    block = np.moveaxis(x, red, tuple(range(x.ndim - len(red), x.ndim))).reshape(kept + (n,))
    if last:
        want = n - 1 - getattr(np, op)(block[..., ::-1], axis=-1)
    else:
        want = getattr(np, op)(block, axis=-1)
    got = getattr(axisops, op)(x, axis, select_last_index=last)
    assert mismatch(got, np.asarray(want, dtype=np.int64)) is None


@SETTINGS
@given(array_and_axes(), st.sampled_from(["argmax", "argmin"]))
def test_unravel_round_trip(xa, op):
    x, axis = xa
    red = _norm(axis, x.ndim)
    idx = getattr(axisops, op)(x, axis, keepdims=True)
    parts = axisops.unravel(idx, x.shape, axis)
    assert isinstance(parts, tuple) and len(parts) == len(red)
    if red:
        dims = tuple(x.shape[d] for d in red)
        np.testing.assert_array_equal(np.ravel_multi_index(parts, dims), idx)
        full = list(np.indices(idx.shape, sparse=True))
        for d, p in zip(red, parts):
            full[d] = p
        want = getattr(axisops, op[3:])(x, axis, keepdims=True)
        assert mismatch(x[tuple(full)], want) is None


INT_LIKE = [np.int8, np.int64, np.uint16, np.bool_]


@pytest.mark.parametrize("op,dtypes", [("sum", INT_LIKE + [np.float64]), ("prod", INT_LIKE)])
@SETTINGS
@given(data=st.data())
def test_tuple_reduction_equals_sequential(op, dtypes, data):
    """Float products are left out: where they under- or overflow depends on the order."""
    x, axis = data.draw(array_and_axes(dtypes=dtypes))
    f = getattr(axisops, op)
    y = x
    for d in sorted(_norm(axis, x.ndim), reverse=True):
        y = f(y, d)
    got = f(x, axis)
    if not axis:
        y = f(x, ())  # an empty tuple reduces nothing, but still converts the dtype
    if np.asarray(got).dtype.kind == "f":
        # nanmax: a NaN in x must not make atol NaN (which would demand equal bits)
        scale = np.nanmax(np.abs(x), initial=1) if x.size else 1
        np.testing.assert_allclose(got, y, rtol=1e-9, atol=1e-9 * scale * x.size, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, y)  # integers wrap, exactly, in any order


@SETTINGS
@given(array_and_axes(), st.sampled_from(["sum", "prod", "mean", "max", "min",
                                           "argmax", "argmin"]))
def test_keepdims_shape_rules(xa, op):
    x, axis = xa
    red = _norm(axis, x.ndim)
    f = getattr(axisops, op)
    with np.errstate(all="ignore"):
        kept = np.asarray(f(x, axis, keepdims=True))
        dropped = np.asarray(f(x, axis))
    assert kept.shape == tuple(1 if d in red else n for d, n in enumerate(x.shape))
    assert dropped.shape == tuple(n for d, n in enumerate(x.shape) if d not in red)
    assert kept.dtype == dropped.dtype
    assert mismatch(kept.reshape(dropped.shape), dropped) is None
    with np.errstate(all="ignore"):
        full = np.asarray(f(x, None, keepdims=True))
    assert full.shape == (1,) * x.ndim

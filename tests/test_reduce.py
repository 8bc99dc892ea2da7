"""Reductions and arg-reductions against the NumPy oracle, ``axisops.reference``.

Every operator runs over every edge case of ``tests/cases.py`` for every kind of
axis, with and without ``keepdims`` (and, for the arg-reductions, with
``select_last_index`` and ``index_dtype=int32``). Each call checks value, dtype and
shape, or that both sides raise alike; each case checks that the input is unchanged.
One test per (operator, case) reports every failing combination at once.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from cases import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    AxisError,
    axes,
    bad_axes,
    case_params,
    cases,
    changed,
    compare_outcomes,
    dtype_params,
    mismatch,
    order_sensitive,
    outcome,
    snapshot,
)

import axisops
from axisops import reference as ref

VALUE_OPS = ("sum", "prod", "mean")
EXTREME_OPS = ("max", "min")
ARG_OPS = ("argmax", "argmin")
OPS = VALUE_OPS + EXTREME_OPS + ARG_OPS

CASES = case_params()

#: Extra keyword sets for the arg-reductions (run with each keepdims).
ARG_OPTIONS = (
    {},
    {"select_last_index": True},
    {"index_dtype": np.int32},
    {"select_last_index": True, "index_dtype": np.int32},
)


def _axes_tuple(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    a = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(i % ndim for i in a))


def value_bound(op, x, axis, keepdims, want, dtype=None):
    """How far a float sum/prod/mean may be from the reference (reassociation).

    A sum of ``n`` terms computed in any order differs from another order by at
    most ``~n * eps * sum(|x|)`` (``eps`` of the accumulator); a product by
    ``~n * eps`` relative. Results rounded to float16 get one float16 ulp more,
    and an input rounded to a float16 ``dtype`` one more per element.
    """
    want = np.asarray(want)
    if want.dtype.kind != "f":
        return None
    x = np.asarray(x)
    n = math.prod(x.shape[a] for a in _axes_tuple(axis, x.ndim))
    acc = np.float32 if want.dtype == np.float16 else want.dtype
    eps = float(np.finfo(acc).eps)
    eps_out = float(np.finfo(want.dtype).eps)
    rel = 2 * eps_out
    with np.errstate(all="ignore"):
        if op == "prod":
            return (rel + 2 * (n + 2) * eps + (n * eps_out if dtype == np.float16 else 0)) \
                * np.abs(want.astype(np.float64))
        s = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims)
        if op == "mean":
            s = s / max(n, 1)
        in_eps = eps_out if np.dtype(want.dtype) == np.float16 else 0.0
        if dtype is not None and np.dtype(dtype) == np.float16:
            in_eps = eps_out
        return rel * np.abs(want.astype(np.float64)) + ((n + 2) * eps + in_eps) * s


def check_call(op, x, axis, kwargs, *, name=""):
    """Compare ``axisops.<op>`` with ``reference.<op>``; return a message or None."""
    want = outcome(getattr(ref, op), x, axis, **kwargs)
    got = outcome(getattr(axisops, op), x, axis, **kwargs)
    msg = compare_outcomes(got, want)
    if msg is None and want[0] == "ok":
        bound = None
        if op in VALUE_OPS:
            bound = value_bound(op, x, axis, kwargs.get("keepdims", False), want[1],
                                kwargs.get("dtype"))
            if bound is not None and order_sensitive(name):
                # overflow makes the float result order-dependent: dtype and shape only
                g, w = np.asarray(got[1]), np.asarray(want[1])
                return _message(op, axis, kwargs, mismatch(np.zeros(g.shape, g.dtype),
                                                           np.zeros(w.shape, w.dtype)))
        msg = mismatch(got[1], want[1], bound)
    return _message(op, axis, kwargs, msg)


def _message(op, axis, kwargs, msg):
    if msg is None:
        return None
    return f"{op}(x, axis={axis!r}, {', '.join(f'{k}={v!r}' for k, v in kwargs.items())}): {msg}"


def run_all_axes(op, x, name):
    failures = []
    options = ARG_OPTIONS if op in ARG_OPS else ({},)
    for axis in axes(x.ndim):
        for keepdims in (False, True):
            for extra in options:
                msg = check_call(op, x, axis, {"keepdims": keepdims, **extra}, name=name)
                if msg:
                    failures.append(msg)
    return failures


def report(failures, limit=25):
    if failures:
        more = f"\n... and {len(failures) - limit} more" if len(failures) > limit else ""
        pytest.fail(f"{len(failures)} failing calls:\n" + "\n".join(failures[:limit]) + more)


@pytest.mark.parametrize("name,x", CASES)
@pytest.mark.parametrize("op", OPS)
def test_matches_reference(op, name, x):
    """Every case, every axis, keepdims both ways: value, dtype, shape, or same error."""
    before = snapshot(x)
    failures = run_all_axes(op, x, name)
    if msg := changed(x, before):
        failures.append(msg)
    report(failures)


# ------------------------------------------------------------------ dtype argument

DTYPE_ARGS = (None, np.int32, np.int64, np.uint64, np.float16, np.float32, np.float64)
#: By default each input meets one requested dtype, so that every pair of classes
#: (integer or float input; integer, float16 or float request; narrowing and
#: widening) occurs once: every pair compiles kernels of its own (a few seconds each
#: from a cold cache, for each loop order). Every pair of DTYPE_ARGS runs under the
#: exhaustive switch.
CLASS_DTYPE_ARGS = {"bool": np.float16, "int8": np.uint64, "uint16": np.float64,
                    "int64": np.int32, "float16": np.int32, "float32": np.float16,
                    "float64": np.float32}
DTYPE_INPUTS = [pytest.param(a, id=n) for n, a in cases(
    dtypes=(np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32, np.float64),
    max_ndim=3, views=False) if n.split("-", 1)[1] in ("2d", "3d", "0d", "empty-2d")]


@pytest.mark.parametrize("x", DTYPE_INPUTS)
@pytest.mark.parametrize("op", VALUE_OPS)
def test_dtype_argument(op, x, exhaustive):
    dtypes = DTYPE_ARGS if exhaustive else (None, CLASS_DTYPE_ARGS[x.dtype.name])
    if op == "mean":
        dtypes = tuple(d for d in dtypes if d is None or np.dtype(d).kind == "f")
    failures = []
    for dtype in dtypes:
        if x.dtype.kind == "f" and dtype is not None and np.dtype(dtype).kind == "u":
            continue  # casting a negative float to an unsigned int is undefined in C
        for axis in (None, 0, -1, ()) + (((0, -1),) if x.ndim >= 2 else ()):
            if x.ndim == 0 and axis not in (None, ()):
                continue
            msg = check_call(op, x, axis, {"dtype": dtype})
            if msg:
                failures.append(msg)
    report(failures)


@pytest.mark.parametrize("op", VALUE_OPS)
def test_int_wraps_in_requested_dtype(op):
    x = np.array([100, 100, 100], dtype=np.uint8)
    want = {"sum": 44, "prod": 64, "mean": None}[op]
    if want is None:
        assert axisops.mean(x, dtype=np.float32).dtype == np.float32
        return
    got = getattr(axisops, op)(x, dtype=np.uint8)
    assert np.asarray(got).dtype == np.uint8 and got == want


@pytest.mark.parametrize("op", VALUE_OPS)
@pytest.mark.parametrize("dtype", ["not a dtype", np.dtype("U3")])
def test_bad_dtype_argument(op, dtype):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError):
        getattr(ref, op)(x, dtype=dtype)
    with pytest.raises(TypeError):
        getattr(axisops, op)(x, dtype=dtype)


# ------------------------------------------------------------ errors, all operators

@pytest.mark.parametrize("op", EXTREME_OPS + ARG_OPS)  # complex numbers have no order
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_is_type_error_naming_op(op, dtype):
    x = np.ones((2, 3), dtype=dtype)
    with pytest.raises(TypeError, match=op):
        getattr(axisops, op)(x)
    with pytest.raises(TypeError, match=op):
        getattr(axisops, op)(x, axis=1)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("x", [np.array([1, "a"], dtype=object), np.array(["ab", "c"]),
                               np.array([1, 2], dtype="datetime64[D]")],
                         ids=["object", "str", "datetime64"])
def test_other_dtypes_are_type_errors(op, x):
    if x.dtype.kind == "M" and op in EXTREME_OPS + ARG_OPS:  # dates are ordered (test_dates.py)
        got = getattr(axisops, op)(x)
        assert got == getattr(np, op)(x) and np.asarray(got).dtype == np.asarray(getattr(np, op)(x)).dtype
        return
    with pytest.raises(TypeError, match=op):
        getattr(axisops, op)(x)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("ndim", [0, 1, 3])
def test_bad_axes(op, ndim):
    x = np.arange(math.prod((2, 3, 4)[:ndim]), dtype=np.float32).reshape((2, 3, 4)[:ndim])
    failures = []
    for axis, exc in bad_axes(ndim):
        for f in (getattr(ref, op), getattr(axisops, op)):
            kind, value = outcome(f, x, axis)
            ok = kind == "raised" and isinstance(value, exc)
            if ok and exc is ValueError:
                ok = not isinstance(value, AxisError)  # a repeated axis is not out of range
            if not ok:
                failures.append(f"{f.__module__}.{op}(shape {x.shape}, axis={axis!r}): "
                                f"{_describe(kind, value)}, expected {exc.__name__}")
    report(failures)


def _describe(kind, value):
    return f"raised {type(value).__name__}({value})" if kind == "raised" else f"returned {value!r}"


@pytest.mark.parametrize("op", EXTREME_OPS + ARG_OPS)
@pytest.mark.parametrize("shape,axis", [
    ((0,), None), ((0,), 0), ((0, 3), 0), ((3, 0), 1), ((3, 0), -1), ((3, 0), None),
    ((2, 0, 4), (0, 1)), ((2, 0, 4), (1, 2)), ((0, 3), (0, 1)),
])
def test_empty_axis_without_identity_is_value_error(op, shape, axis):
    x = np.zeros(shape, dtype=np.float32)
    with pytest.raises(ValueError):
        getattr(ref, op)(x, axis)
    with pytest.raises(ValueError):
        getattr(axisops, op)(x, axis)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape,axis", [((3, 0), 0), ((0, 3), 1), ((2, 0, 4), (0, 2)),
                                         ((0, 3), ())])
def test_empty_result_over_non_empty_axis(op, shape, axis):
    x = np.zeros(shape, dtype=np.int16)
    report([m for m in [check_call(op, x, axis, {}), check_call(op, x, axis, {"keepdims": True})]
            if m])


@pytest.mark.parametrize("op", VALUE_OPS)
def test_empty_sum_prod_mean_give_identity(op):
    x = np.zeros((0, 3), dtype=np.float64)
    want = {"sum": 0.0, "prod": 1.0, "mean": np.nan}[op]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # NumPy warns on the mean of nothing; either way is fine
        got = getattr(axisops, op)(x, axis=0)
    assert mismatch(got, np.full(3, want)) is None


@pytest.mark.parametrize("op", OPS)
def test_python_inputs(op):
    failures = []
    for x in ([[1, 5, 2], [7, 0, 7]], [1.5, -2.0], 3, 2.5, True, [[True, False]]):
        for axis in (None, -1) if np.ndim(x) else (None,):
            msg = check_call(op, x, axis, {})
            if msg:
                failures.append(f"x={x!r}: {msg}")
    report(failures)


# --------------------------------------------------------------- arg-reductions

@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize("index_dtype", [np.float64, np.int16, np.int8, np.uint32, np.uint64,
                                         bool, "int8", "nope", None, object])
def test_bad_index_dtype(op, index_dtype):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError):
        getattr(ref, op)(x, index_dtype=index_dtype)
    with pytest.raises(TypeError):
        getattr(axisops, op)(x, axis=1, index_dtype=index_dtype)


@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize("index_dtype", [np.int32, "int32", np.dtype("int32"), np.int64,
                                         "int64", int])
def test_index_dtype_spellings(op, index_dtype):
    x = np.array([[3, 1, 3], [0, 5, 5]], dtype=np.int16)
    for axis in (None, 1, (0, 1)):
        got = getattr(axisops, op)(x, axis=axis, index_dtype=index_dtype)
        want = getattr(ref, op)(x, axis=axis, index_dtype=index_dtype)
        assert mismatch(got, want) is None, (axis, got, want)
        assert np.asarray(got).dtype == np.dtype(index_dtype)


HUGE = 2**31 + 1  # one more element than an int32 index can address


@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize("shape,axis", [
    ((HUGE,), None), ((HUGE,), 0), ((2, HUGE), 1), ((2**16, 2**15 + 1), (0, 1)),
    ((2**16, 2**15 + 1), None),
])
def test_int32_index_overflow(op, shape, axis):
    """A reduced block with more than 2**31 elements cannot be indexed with int32.

    The arrays are stride-0 broadcasts, so nothing is allocated; the element that
    decides ``argmin(select_last_index=True)`` sits past index 2**31 - 1, so the
    result cannot fit whether the check is made on the shape or on the result.
    """
    base = np.zeros(1, dtype=np.int8)
    x = np.broadcast_to(base, shape)
    with pytest.raises(OverflowError):
        ref.argmin(x, axis, select_last_index=True, index_dtype=np.int32)
    with pytest.raises(OverflowError):
        getattr(axisops, op)(x, axis, select_last_index=True, index_dtype=np.int32)


@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_first_or_last_wins(op, dtype):
    x = np.array([[1, np.nan, np.inf, np.nan, -np.inf],
                  [np.nan, 0, 0, 0, np.nan],
                  [5, 5, -5, -5, 5]], dtype=dtype)
    f = getattr(axisops, op)
    np.testing.assert_array_equal(f(x, axis=1), [1, 0, 0 if op == "argmax" else 2])
    np.testing.assert_array_equal(f(x, axis=1, select_last_index=True),
                                  [3, 4, 4 if op == "argmax" else 3])
    np.testing.assert_array_equal(f(x.T, axis=0), [1, 0, 0 if op == "argmax" else 2])
    assert f(x) == 1 and f(x, select_last_index=True) == 9
    assert f(x, axis=(0, 1)) == 1


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_mean_into_an_integer_dtype_divides_as_numpy(dtype, rng):
    # a mean asked for in int64 divides the int64 sum and casts back, as NumPy
    # does (the fast path for float means must not take it: ONNX ReduceMean's
    # dtype-keeping test caught that it did)
    x = (rng.standard_normal((16, 64)) * 100).astype(dtype)
    for axis in (None, 1):
        got = axisops.mean(x, axis=axis, dtype=np.int64)
        want = np.mean(x, axis=axis, dtype=np.int64)
        assert np.asarray(got).dtype == np.int64 and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)


def _long_runs(dtype, rng):
    """Rows of 3000 elements (three of the kernels' 1024-element scan blocks) whose
    extreme, NaN or zero sits in a later block than the first: the blocked pass
    over a contiguous run must carry the best block and the first NaN across."""
    n = 3000
    rows = []
    top = 100 if np.dtype(dtype).itemsize == 1 else 1000
    base = rng.integers(-top + 1, top, n).astype(dtype)
    rows.append(base)                               # plain values
    r = base.copy()
    r[2500] = top
    r[1100] = top
    rows.append(r)                                  # a tie across blocks: the first wins
    if np.dtype(dtype).kind == "f":
        r = base.copy()
        r[2100] = np.nan
        r[2900] = np.nan
        rows.append(r)                              # a NaN in the third block
        r = base.copy()
        r[1500] = -np.nan
        rows.append(r)                              # a negative NaN
        r = -np.abs(base) - 1
        r[2800] = 0.0
        r[300] = -0.0
        rows.append(r)                              # the maximum a zero of either sign
        r = np.abs(base) + 1
        r[2200] = -0.0
        r[1900] = 0.0
        rows.append(r)                              # the minimum a zero of either sign
        r = base.copy()
        r[1200] = np.inf
        r[2600] = -np.inf
        rows.append(r)
        r = -np.abs(base) - 1
        rows.append(r)                              # every value negative
    return np.stack(rows)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "uint64"])
def test_long_contiguous_runs_find_the_first_extreme(dtype, rng):
    x = _long_runs(dtype, rng)
    for op in ARG_OPS:
        got = getattr(axisops, op)(x, axis=1)
        assert got.dtype == np.int64 and got.shape == (x.shape[0],)
        np.testing.assert_array_equal(got, getattr(np, op)(x, axis=1), err_msg=op)
        for row, want in zip(x, getattr(np, op)(x, axis=1)):
            assert getattr(axisops, op)(row) == want
    for op in EXTREME_OPS:
        got, want = getattr(axisops, op)(x, axis=1), getattr(np, op)(x, axis=1)
        assert got.dtype == x.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want, err_msg=op)


@pytest.mark.parametrize("op", EXTREME_OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_propagates(op, dtype):
    x = np.array([[1, np.nan, 3], [np.inf, -np.inf, 0]], dtype=dtype)
    got = getattr(axisops, op)(x, axis=1)
    want = getattr(np, op)(x, axis=1)
    assert np.isnan(got[0]) and got[1] == want[1]
    assert np.isnan(getattr(axisops, op)(x))


@pytest.mark.parametrize("dtype", dtype_params(ALL_DTYPES))
def test_tuple_axis_argmax_is_moved_and_reshaped(dtype, rng):
    from cases import values
    x = values(dtype, (3, 4, 2, 5), rng, "ties")
    for ax in [(0, 2), (1, 3), (0, 1, 3), (3, 0), (-1, 1)]:
        norm = sorted(a % 4 for a in ax)
        kept = [s for d, s in enumerate(x.shape) if d not in norm]
        moved = np.moveaxis(x, norm, range(-len(norm), 0)).reshape(*kept, -1)
        for op in ARG_OPS:
            got = getattr(axisops, op)(x, axis=ax)
            np.testing.assert_array_equal(got, getattr(np, op)(moved, -1), err_msg=f"{op} {ax}")


@pytest.mark.parametrize("x", [pytest.param(a, id=n) for n, a in cases(
    dtypes=(np.int16, np.float32, np.bool_)) if a.size and a.ndim])
def test_unravel(x):
    failures = []
    for axis in axes(x.ndim):
        for keepdims in (False, True):
            norm = _axes_tuple(axis, x.ndim)
            idx = axisops.argmax(x, axis, keepdims=keepdims)
            got = outcome(axisops.unravel, idx, x.shape, axis)
            want = outcome(ref.unravel, idx, x.shape, axis)
            msg = compare_outcomes(got, want)
            where = f"unravel(argmax(x, {axis!r}, keepdims={keepdims}), {x.shape}, {axis!r})"
            if msg:
                failures.append(f"{where}: {msg}")
                continue
            if not isinstance(got[1], tuple) or len(got[1]) != len(norm):
                failures.append(f"{where}: expected a tuple of {len(norm)} arrays, got {got[1]!r}")
                continue
            for i, (g, w) in enumerate(zip(got[1], want[1])):
                if msg := mismatch(g, w):
                    failures.append(f"{where}[{i}]: {msg}")
            # the unravelled indices pick out the maximum
            if keepdims and norm:
                full = list(np.indices(np.shape(idx), sparse=True))
                for a, i in zip(norm, got[1]):
                    full[a] = i
                if msg := mismatch(x[tuple(full)], ref.max(x, axis, keepdims=True)):
                    failures.append(f"{where}: x at the indices is not the max: {msg}")
    report(failures)


def test_unravel_int_axis_and_dtypes():
    idx = np.array([[2, 0]], dtype=np.int32)
    got = axisops.unravel(idx, (2, 3, 4), 1)
    assert isinstance(got, tuple) and len(got) == 1
    np.testing.assert_array_equal(got[0], idx)
    got = axisops.unravel(np.uint8(7), (2, 3, 4), (-1, 1))
    assert [int(i) for i in got] == [1, 3]


# ------------------------------------------------------------- thread determinism

def _large(shape, dtype, seed, near_one=False):
    """Random values spread over 20 binades (so reassociation shows in the last bits);
    with *near_one*, factors within 1e-3 of 1 whose long products neither overflow
    nor underflow; ints in [-50, 50)."""
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind != "f":
        return r.integers(-50, 50, size=shape).astype(dtype)
    if near_one:
        return (1 + (r.random(shape) - 0.5) * 2e-3).astype(dtype)
    x = r.standard_normal(shape) * np.exp2(r.integers(-8, 12, size=shape))
    return x.astype(dtype)


LARGE = [
    ((3, 70000), np.float32), ((70000, 3), np.float32), ((5, 300, 7), np.float32),
    ((200003,), np.float32), ((70000, 3), np.float64), ((3, 70000), np.int64),
    ((150000, 2), np.float16),
]


def _large_axes(ndim):
    return [None, *range(ndim), *((0, ndim - 1),)] if ndim > 1 else [None, 0]


@pytest.mark.parametrize("shape,axis", [((70001, 4), 0), ((8, 9000, 8), 1), ((16387, 3), 0)])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_folded_sums_along_an_axis_with_few_outputs_after_it(shape, axis, op, rng):
    # few outputs after a long contiguous axis: the sum is folded into many lanes
    # (axisops.reduce._fold), some rows left over; as accurate as the cascade
    x = rng.standard_normal(shape).astype(np.float32)
    got = getattr(axisops, op)(x, axis=axis)
    exact = np.sum(x.astype(np.float64), axis=axis)
    scale = np.sum(np.abs(x.astype(np.float64)), axis=axis)
    if op == "mean":
        exact, scale = exact / shape[axis], scale / shape[axis]
    assert got.dtype == np.float32 and got.shape == exact.shape
    assert np.all(np.abs(got - exact) <= 4 * np.finfo(np.float32).eps * scale)
    kept = getattr(axisops, op)(x, axis=axis, keepdims=True)
    assert kept.shape == getattr(np, op)(x, axis=axis, keepdims=True).shape
    np.testing.assert_array_equal(kept.reshape(got.shape), got)
    # integers are not folded: their sum is exact, their mean NumPy's float64
    # (the first fold divided an int64 sum in place: the size sweep caught it)
    xi = rng.integers(-1000, 1000, shape).astype(np.int32)
    want = getattr(np, op)(xi, axis=axis)
    got = getattr(axisops, op)(xi, axis=axis)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("op", ["sum", "mean", "nansum"])
def test_folded_sums_of_a_transposed_table_are_those_of_its_transpose(op, rng):
    # a 2-D F-ordered array is folded as its C-ordered transpose: the same bits
    x = rng.standard_normal((70001, 4)).astype(np.float32)
    x[5, 1] = np.nan if op == "nansum" else x[5, 1]
    f = x.T  # (4, 70001), F-contiguous
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    want = getattr(axisops, op)(x, axis=0)
    for axis, keepdims, shape in [(1, False, (4,)), (-1, True, (4, 1))]:
        got = getattr(axisops, op)(f, axis=axis, keepdims=keepdims)
        assert got.dtype == np.float32 and got.shape == shape
        np.testing.assert_array_equal(got.reshape(4), want)
    exact = np.sum(np.nan_to_num(x).astype(np.float64), axis=0)
    if op == "mean":
        exact /= x.shape[0]
    scale = np.sum(np.abs(np.nan_to_num(x)), axis=0)
    assert np.all(np.abs(want - exact) <= 4 * np.finfo(np.float32).eps * scale)


@pytest.mark.parametrize("shape,dtype", LARGE, ids=[f"{s}-{np.dtype(d).name}" for s, d in LARGE])
def test_thread_count_does_not_change_bits(shape, dtype, num_threads):
    if len(num_threads.counts) < 2:
        pytest.skip("Numba has a single thread here")
    x = _large(shape, dtype, 1)
    calls = [(op, axis, kw) for op in OPS for axis in _large_axes(x.ndim)
             for kw in ([{}, {"select_last_index": True}] if op in ARG_OPS else [{}])]
    results = {}
    for n in num_threads.counts:
        num_threads.set(n)
        results[n] = [np.asarray(getattr(axisops, op)(x, axis, **kw)) for op, axis, kw in calls]
    failures = []
    base = num_threads.counts[0]
    for n in num_threads.counts[1:]:
        for (op, axis, kw), a, b in zip(calls, results[base], results[n]):
            if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                failures.append(f"{op}(x {shape} {np.dtype(dtype).name}, axis={axis!r}, {kw}): "
                                f"{base} and {n} threads differ")
    report(failures)


@pytest.mark.parametrize("shape,dtype", LARGE, ids=[f"{s}-{np.dtype(d).name}" for s, d in LARGE])
def test_large_matches_reference(shape, dtype):
    """The chunked and parallel kernels agree with the oracle, on plain and strided views."""
    failures = []
    for op in OPS:
        x = _large(shape, dtype, 2, near_one=op == "prod")
        for view in (x, x[::-1], x.T):
            for axis in _large_axes(view.ndim):
                if msg := check_call(op, view, axis, {}):
                    failures.append(msg)
    report(failures)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint64"])
def test_strided_lanes_four_at_a_time_find_the_first_extreme(dtype, rng):
    # lanes along a strided axis are read four side by side, in blocks of rows
    # (kernels.reduce._lanes4_extreme): ties, NaN, a block's border, a lane left
    # over, and runs that restart along a second reduced axis; four adjacent lanes
    # ((n, 4) along axis 0) a vector of rows at a time, and the rows left over
    for shape, axis in [((1000, 4), 0), ((1003, 4), 0), ((600, 9), 0), ((3, 700, 6), (0, 1)),
                        ((5, 520), 1)]:
        x = rng.integers(-3, 4, shape).astype(dtype)  # many ties
        if x.dtype.kind == "f":
            flat = x.reshape(-1)
            flat[rng.choice(flat.size, 7, replace=False)] = np.nan
            flat[min(flat.size - 1, 257 * shape[-1] + 1)] = np.inf  # a later block wins
        xt = np.ascontiguousarray(x.swapaxes(0, -1)).swapaxes(0, -1) if axis == 1 else x
        for arr in (x, xt):
            for op in ARG_OPS + EXTREME_OPS:
                got = getattr(axisops, op)(arr, axis=axis)
                if isinstance(axis, tuple):
                    moved = arr.reshape(-1, arr.shape[-1])
                    want = getattr(np, op)(moved, axis=0)
                else:
                    want = getattr(np, op)(arr, axis=axis)
                assert got.dtype == want.dtype and got.shape == want.shape, (op, shape)
                np.testing.assert_array_equal(got, want, err_msg=f"{op} {shape} {axis}")

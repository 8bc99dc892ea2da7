"""Accuracy of float sums and means, and finiteness of float products.

Sums and means are held to an error bound against an exact reference on every
layout (1-D, contiguous rows, strided columns, transposed views, a middle axis,
tuple axes, long axes) and to the error of NumPy and PyTorch on the same data.
Errors are measured in units of the dtype's epsilon times ``sum(|x|)`` of each
output (the scale every summation error is proportional to), the worst output
counting. A sequential sum of the same data errs by hundreds or thousands of
those units (NumPy along a strided axis: up to 32000 here).

Products along rows in memory (runs of 1024 elements or more) are scaled: the
exact product rounded once, finite wherever the exact one is in range, and held
to it here (a Fraction reference); shorter and strided runs are NumPy's
sequential product bit for bit. Neither has a partial product that overflows or
underflows on its own.
"""
from __future__ import annotations

import math
from decimal import Context, Decimal
from fractions import Fraction

import numpy as np
import pytest

import axisops
from axisops import grad

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

try:
    import torch
except ImportError:  # the PyTorch comparison runs where PyTorch is installed
    torch = None

#: The worst error allowed, in eps * sum(|x|) of an output: the sums below reach
#: about 1.5 (1-D, rows, columns alike); a sequential float32 sum of 100K
#: elements reaches hundreds.
BOUND_EPS = 4.0
#: Slack over the best of NumPy and PyTorch, in the same unit: the rounding of
#: the result itself (half an eps of the result, on either side).
SLACK_EPS = 1.0

DATA = {
    "constant 1e-3": lambda rng, shape, dtype: np.full(shape, 1e-3, dtype),
    "uniform [0, 1)": lambda rng, shape, dtype: rng.random(shape).astype(dtype),
    "lognormal": lambda rng, shape, dtype: rng.lognormal(0.0, 2.0, shape).astype(dtype),
    "0.1 + small": lambda rng, shape, dtype: (0.1 + 1e-3 * rng.random(shape)).astype(dtype),
    "signed normal": lambda rng, shape, dtype: rng.standard_normal(shape).astype(dtype),
}

#: (name, shape, axis, transposed): the array is made with *shape* and
#: transposed before the sum when *transposed*.
LAYOUTS = [
    ("1-D", (1 << 20,), None, False),
    ("contiguous rows", (32, 100_000), 1, False),
    ("strided columns", (100_000, 32), 0, False),
    ("transposed view", (100_000, 32), 1, True),
    ("middle axis", (8, 65_536, 8), 1, False),
    ("tuple axes", (32, 64, 512), (0, 2), False),
    ("short rows", (1 << 18, 4), 1, False),
    ("reversed rows", (64, 20_000), 1, False),
    ("mid-size rows", (100, 1000), 1, False),
]


def _errors(result, x, axis):
    """Worst |result - exact| / sum(|x|) over the outputs, in eps of x's dtype.

    The exact sums of float32 and float16 data are float64 sums (their error is
    a billion times smaller); float64 data is summed exactly with math.fsum.
    """
    x64 = x.astype(np.float64)
    if x.dtype == np.float64:
        axes = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis))
        moved = np.moveaxis(x64, axes, tuple(range(-len(axes), 0)))
        rows = moved.reshape(-1, math.prod(moved.shape[moved.ndim - len(axes):]))
        exact = np.array([math.fsum(row) for row in rows]).reshape(np.shape(result))
    else:
        exact = np.sum(x64, axis=axis)
    scale = np.sum(np.abs(x64), axis=axis)
    scale = np.where(scale == 0, 1.0, scale)
    return float(np.max(np.abs(np.asarray(result, np.float64) - exact) / scale)) / np.finfo(x.dtype).eps


def _peer_errors(x, axis):
    errors = {"numpy": _errors(np.sum(x, axis=axis), x, axis)}
    if torch is not None:
        # PyTorch takes no negative strides: a reversed view becomes a copy
        t = torch.from_numpy(np.ascontiguousarray(x) if min(x.strides) < 0 else x)
        s = torch.sum(t) if axis is None else torch.sum(t, dim=axis)
        errors["torch"] = _errors(s.numpy(), x, axis)
    return errors


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("layout", LAYOUTS, ids=[lay[0] for lay in LAYOUTS])
def test_float32_sum_error_bounded_and_at_most_the_best_peer(layout, data, rng):
    name, shape, axis, transposed = layout
    x = DATA[data](rng, shape, np.float32)
    if transposed:
        x = x.T
    if name == "reversed rows":
        x = x[:, ::-1]
    result = axisops.sum(x, axis=axis)
    expected_shape = np.sum(x, axis=axis).shape
    assert np.shape(result) == expected_shape
    assert np.asarray(result).dtype == np.float32
    mine = _errors(result, x, axis)
    peers = _peer_errors(x, axis)
    assert mine <= BOUND_EPS, f"{name}, {data}: error {mine:.2f} eps (peers: {peers})"
    assert mine <= min(peers.values()) + SLACK_EPS, f"{name}, {data}: {mine:.2f} eps, peers {peers}"


@pytest.mark.parametrize("layout", LAYOUTS[:5], ids=[lay[0] for lay in LAYOUTS[:5]])
def test_float32_mean_inherits_the_sum_accuracy(layout, rng):
    _, shape, axis, transposed = layout
    x = DATA["0.1 + small"](rng, shape, np.float32)
    if transposed:
        x = x.T
    result = axisops.mean(x, axis=axis)
    count = x.size // np.size(result)
    assert np.asarray(result).dtype == np.float32
    assert np.shape(result) == np.mean(x, axis=axis).shape
    mine = _errors(np.asarray(result, np.float64) * count, x, axis)
    assert mine <= BOUND_EPS + 1  # + the division's rounding


@pytest.mark.parametrize("layout", [LAYOUTS[0], LAYOUTS[2], LAYOUTS[4]],
                         ids=["1-D", "strided columns", "middle axis"])
def test_float64_sum_against_an_exact_sum(layout, rng):
    _, shape, axis, _ = layout
    shape = tuple(max(1, s // 8) if i == (0 if axis is None else axis) else s for i, s in enumerate(shape))
    x = DATA["0.1 + small"](rng, shape, np.float64)
    result = axisops.sum(x, axis=axis)
    assert np.asarray(result).dtype == np.float64
    assert _errors(result, x, axis) <= BOUND_EPS
    assert _errors(result, x, axis) <= _errors(np.sum(x, axis=axis), x, axis) + SLACK_EPS


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_float16_sums_accumulate_in_float32(axis, rng):
    x = (0.1 + 1e-3 * rng.random((4096, 64))).astype(np.float16)
    result = axisops.sum(x, axis=axis)
    assert np.asarray(result).dtype == np.float16
    # the float32 accumulation errs by a few float32 eps; then one float16 rounding
    exact = np.sum(x.astype(np.float64), axis=axis)
    assert np.all(np.abs(np.asarray(result, np.float64) - exact) <= np.abs(exact) * np.finfo(np.float16).eps)


def test_sum_bits_do_not_depend_on_threads(num_threads, rng):
    x = rng.standard_normal((300_000, 8)).astype(np.float32)
    cases = [(x, 0), (x, 1), (x.T, 1), (x.reshape(-1), None), (x[:, :3], 0)]
    results = {}
    for n in num_threads.counts:
        num_threads.set(n)
        results[n] = [axisops.sum(a, axis=ax) for a, ax in cases]
    first = results[num_threads.counts[0]]
    for got in results.values():
        for a, b in zip(first, got):
            np.testing.assert_array_equal(a, b, strict=True)


# ------------------------------------------------------------------------ products


def test_alternating_huge_and_tiny_products():
    x = np.tile([2.0 ** 100, 2.0 ** -100], 100_000)
    assert axisops.prod(x) == 1.0 and np.prod(x) == 1.0
    y = np.tile(np.float32([1000, 0.001]), 300_000)
    # the exact product of those float32 values, where NumPy's float32 steps round
    # each to 1.0: a long row is the exact product rounded once
    pair = Decimal(float(np.float32(1000))) * Decimal(float(np.float32(0.001)))
    exact = np.float32(float(Context(prec=40).power(pair, 300_000)))
    assert exact == np.float32(1.0143512) and np.prod(y) == 1.0
    got = axisops.prod(y)
    assert got == exact and got.dtype == np.float32
    rows = np.tile(np.float32([1000, 0.001]), (3, 300_000))
    np.testing.assert_array_equal(axisops.prod(rows, axis=1), np.full(3, exact), strict=True)
    np.testing.assert_array_equal(axisops.prod(rows.T, axis=0), np.full(3, exact), strict=True)
    # along an axis that is not a row in memory the product runs in index order, as NumPy's
    cols = np.ascontiguousarray(rows.T)
    np.testing.assert_array_equal(axisops.prod(cols, axis=0), np.prod(cols, axis=0), strict=True)


def test_long_cumprod_is_not_split_where_a_chunk_underflows_alone():
    # A long 1-D scan used to run in chunks of 65536 from carries: the second
    # chunk's own product (from 1) underflowed to 0, where the running product,
    # from 2**100, stays 2**20 or more; every later element came out 0.
    x = np.ones(1 << 20, np.float32)
    x[0] = 2.0 ** 100
    x[65536:65540] = [2.0 ** -80, 2.0 ** -80, 2.0 ** 80, 2.0 ** 80]
    got = axisops.cumprod(x)
    np.testing.assert_array_equal(got, np.cumprod(x), strict=True)
    assert got[-1] == np.float32(2.0 ** 100)


@st.composite
def extreme_arrays(draw):
    """Floats whose running products leave the float range: powers of two with
    wide exponents, random signs and mantissas, in a few layouts."""
    dtype = np.dtype(draw(st.sampled_from([np.float16, np.float32, np.float64])))
    top = {2: 15, 4: 120, 8: 1000}[dtype.itemsize]
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=40))
    exps = draw(hnp.arrays(np.int64, shape, elements=st.integers(-top, top)))
    mant = draw(hnp.arrays(np.float64, shape, elements=st.floats(0.5, 1.0, exclude_max=True)))
    sign = draw(hnp.arrays(np.int8, shape, elements=st.sampled_from([-1, 1])))
    x = np.ldexp(mant * sign, exps).astype(dtype)
    if x.ndim >= 2 and draw(st.booleans()):
        x = np.ascontiguousarray(np.swapaxes(x, 0, -1)).swapaxes(0, -1)
    if draw(st.booleans()):
        x = x[(slice(None, None, -1),) * x.ndim]
    axis = draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    return x, axis


@given(extreme_arrays())
@settings(max_examples=200, deadline=None)
def test_short_products_are_numpys_sequential_product(case):
    x, axis = case  # at most 40 ** 3 elements: a run of 1024 or more only for axis=None
    if axis is None and x.size >= 1024:
        axis = 0 if x.ndim == 1 else -1
    # float16 accumulates in float32 (the contract), where NumPy rounds each step
    # to float16 along some axes: the same sequential product, rounded once
    wide = x.astype(np.float32) if x.dtype == np.float16 else x
    np.testing.assert_array_equal(axisops.prod(x, axis=axis), np.prod(wide, axis=axis).astype(x.dtype)[()],
                                  strict=True)
    if axis is not None:
        expected = np.cumprod(wide, axis=axis).astype(x.dtype)
        np.testing.assert_array_equal(axisops.cumprod(x, axis=axis), expected, strict=True)


def _exact_rows(rows):
    """The exact product of each row, as Fractions."""
    out = []
    for row in rows:
        p = Fraction(1)
        for v in row.astype(np.float64).tolist():
            p *= Fraction(v)
        out.append(p)
    return out


def _rounded(exact, dtype):
    """A Fraction rounded to *dtype* (through float64: a float32 result may be an ulp
    off by the double rounding), inf or 0 beyond its range, with its sign."""
    if exact == 0:
        return dtype.type(0.0)
    sign = 1 if exact > 0 else -1
    magnitude = abs(exact)
    if magnitude > Fraction(2) ** 1100:
        return dtype.type(sign * np.inf)
    if magnitude < Fraction(2) ** -1100:
        return dtype.type(sign * 0.0)
    with np.errstate(over="ignore", under="ignore"):
        return dtype.type(sign * float(magnitude))


# with NaN skipped float32 only by default (each dtype compiles the nanprod kernels)
@pytest.mark.parametrize("dtype, skip_nan", [
    (np.float16, False), (np.float32, False), (np.float64, False), (np.float32, True),
    pytest.param(np.float16, True, marks=pytest.mark.exhaustive),
    pytest.param(np.float64, True, marks=pytest.mark.exhaustive)])
def test_long_rows_are_the_exact_product_rounded_once(dtype, skip_nan):
    # wide exponents, random signs and mantissas: NumPy's sequential product
    # overflows or underflows along the way in many of these rows
    rng = np.random.default_rng(7)
    dtype = np.dtype(dtype)
    top = {2: 6, 4: 60, 8: 500}[dtype.itemsize]
    n = 2500 if dtype.itemsize < 8 else 2000  # a Fraction of 2000 float64 factors: ~1 s
    half = rng.integers(-top, top + 1, (8, n // 2))
    exps = rng.permuted(np.concatenate([half, -half], axis=1), axis=1)  # each row's sum is 0
    mantissas = 2.0 ** rng.uniform(-0.5, 0.5, (8, n))  # in [2**-0.5, 2**0.5), their logs centred
    rows = np.ldexp(mantissas * rng.choice([-1, 1], (8, n)), exps)
    shift = {0: 0.75, 1: -0.75, 2: 1.2, 3: -1.2}  # near the top, near the bottom, beyond both
    for r, f in shift.items():
        edge = np.finfo(dtype).maxexp if f > 0 else -np.finfo(dtype).minexp
        rows[r] *= 2.0 ** (f * edge / n)
    rows = rows.astype(dtype)
    if skip_nan:
        rows[:, ::97] = np.nan
    op = axisops.nanprod if skip_nan else axisops.prod
    got = op(rows, axis=1)
    assert got.dtype == dtype and got.shape == (8,)
    values = np.where(np.isnan(rows), dtype.type(1), rows)
    exact = _exact_rows(values)
    eps = float(np.finfo(dtype).eps)
    # float16 and float32 are multiplied in float64: one rounding of the result
    # (two through float64); float64 rounds as often as a sequential product
    tolerance = 1.01 * eps if dtype.itemsize < 8 else 2 * n * eps
    for g, e in zip(got, exact):
        want = _rounded(e, dtype)
        if not np.isfinite(want) or want == 0 or abs(float(want)) < np.finfo(dtype).smallest_normal:
            assert g == want, (g, want)  # beyond the range: inf or 0 (or a subnormal) as exact
        else:
            assert abs(Fraction(float(g)) - e) <= Fraction(tolerance) * abs(e), (g, float(e))
    # the same bits for every thread count, and along a C row as along an F column
    threads = axisops.thread_limit()
    try:
        axisops.thread_limit(1)
        np.testing.assert_array_equal(op(rows, axis=1), got, strict=True)
    finally:
        axisops.thread_limit(threads)
    np.testing.assert_array_equal(op(np.asfortranarray(rows.T), axis=0), got, strict=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_rows_with_zeros_infinities_and_nan(dtype):
    n = 3000
    rows = np.ones((7, n), dtype)
    rows[:, ::3] = dtype(1.5)
    rows[0, 1000] = 0.0
    rows[1, 1000] = -0.0
    rows[2, 5] = -np.inf
    rows[3, [5, 2999]] = [np.inf, 0.0]
    rows[4, 17] = np.nan
    rows[5, 2999] = -np.inf
    rows[6] = 1.0
    rows[6, 10:110] = 2.0
    rows[6, 500] = np.finfo(dtype).smallest_subnormal
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.prod(rows.astype(np.float64), axis=1)  # the exact rules of signs and specials
    got = axisops.prod(rows, axis=1)
    assert got.dtype == np.dtype(dtype) and got.shape == (7,)
    np.testing.assert_array_equal(got[:6], want[:6].astype(dtype))
    assert np.signbit(got[1]) and not np.signbit(got[0])
    # a subnormal element times 2**100: exact
    assert got[6] == dtype(2.0 ** 100 * float(np.finfo(dtype).smallest_subnormal))


def _exact_others(x):
    """Exact product of the other elements of a 1-D array, as Fractions."""
    values = [Fraction(float(v)) for v in x]
    out = []
    for k in range(len(values)):
        p = Fraction(1)
        for j, v in enumerate(values):
            if j != k:
                p *= v
        out.append(p)
    return out


@given(extreme_arrays())
@settings(max_examples=100, deadline=None)
def test_grad_prod_is_finite_wherever_the_true_gradient_is(case):
    x, _ = case
    x = x.reshape(-1)[:12]
    dtype = x.dtype
    got = grad.prod(np.ones((), dtype), x)
    assert got.dtype == dtype and got.shape == x.shape
    _assert_finite_where_exact_is(got, _exact_others(x), dtype, x.size)


def test_grad_prod_of_huge_and_tiny_factors():
    x = np.float32([1e30, 1e30, 1e-30, 1e-30])
    got = grad.prod(np.float32(1), x)
    np.testing.assert_allclose(got, np.float32([1e-30, 1e-30, 1e30, 1e30]), rtol=1e-6)
    assert got.dtype == np.float32
    # zeros stay exact: one zero gives the others' product to that element only
    np.testing.assert_array_equal(grad.prod(np.array(1.), np.array([2., 0., 5.])), [0., 10., 0.])
    np.testing.assert_array_equal(grad.prod(np.array(1.), np.array([2., 0., 0.])), [0., 0., 0.])


def _exact_cumprod_grad(x):
    """Exact gradient of sum(cumprod(x)) (g = 1), as Fractions."""
    values = [Fraction(float(v)) for v in x]
    out = []
    for k in range(len(values)):
        total = Fraction(0)
        for j in range(k, len(values)):
            p = Fraction(1)
            for i in range(j + 1):
                if i != k:
                    p *= values[i]
            total += p
        out.append(total)
    return out


def _assert_finite_where_exact_is(got, exact, dtype, size):
    top = Fraction(float(np.finfo(dtype).max))
    tiny = Fraction(float(np.finfo(dtype).smallest_normal))
    tolerance = 16 * max(float(np.finfo(dtype).eps), size * 2.0 ** -23)
    for g, e in zip(got, exact):
        g = float(g)
        if abs(e) > 2 * top:
            assert g == (math.inf if e > 0 else -math.inf), (g, e)
            continue
        if abs(e) < top / 2:
            assert math.isfinite(g), (g, float(e))
        if tiny <= abs(e) < top / 2:
            assert abs(g - float(e)) <= abs(float(e)) * tolerance, (g, float(e))


@given(extreme_arrays())
@settings(max_examples=100, deadline=None)
def test_grad_cumprod_is_finite_wherever_the_true_gradient_is(case):
    x, _ = case
    x = x.reshape(-1)[:10]
    # same-sign values: a sum of terms of mixed signs may cancel below any bound
    x = np.abs(x)
    got = grad.cumprod(np.ones(x.shape, x.dtype), x)
    assert got.dtype == x.dtype and got.shape == x.shape
    _assert_finite_where_exact_is(got, _exact_cumprod_grad(x), x.dtype, x.size)


def test_grad_cumprod_of_huge_and_tiny_factors():
    x = np.float32([1e-30, 1e-30, 1e30, 1e30])
    got = grad.cumprod(np.ones(4, np.float32), x)
    np.testing.assert_allclose(got, np.float32([1e30, 1e30, 1e-30, 1e-30]), rtol=1e-5)
    # the same lane among ordinary ones, along axis 0 of a 2-D array
    x2 = np.stack([x, np.float32([1, 2, 3, 4])], axis=1)
    got2 = grad.cumprod(np.ones((4, 2), np.float32), x2, axis=0)
    np.testing.assert_allclose(got2[:, 0], got, rtol=1e-6)
    np.testing.assert_allclose(got2[:, 1], np.float32([33, 16, 10, 6]), rtol=1e-6)

"""The missing-value operators (``axisops.missing``) against their NumPy twins,
``axisops.reference.missing``: values, dtypes and shapes over float, integer, bool
and complex inputs, every kind of axis, strided views, slices that are all NaN,
chunked and folded reductions, the thread count, and the errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import AxisError, same_bits

import axisops
from axisops import reference as ref

FLOATS = (np.float16, np.float32, np.float64)
AXES = (None, 0, -1, (0, 2), ())
SUM_OPS = ("nansum", "nanprod", "nanmean", "count")
VAR_OPS = ("var", "std", "nanvar", "nanstd")
EXTREMES = ("nanmax", "nanmin")
ARGS = ("nanargmax", "nanargmin")
SCANS = ("nancumsum", "nancumprod")
#: Relative tolerance of float sums, per result dtype (reassociation only).
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12,
        np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-12}


def with_nans(rng, shape, dtype, *, fraction=0.1, all_nan=True, near_one=False):
    """Values of *dtype* with a *fraction* of NaN and (*all_nan*) one slice
    ``[0, :, 1, ...]`` all NaN; near 1 for products."""
    x = rng.standard_normal(shape)
    if near_one:
        x = 1 + 0.05 * x
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(dtype)
    if np.dtype(dtype).kind in "fc":
        x[rng.random(shape) < fraction] = np.nan
        if np.dtype(dtype).kind == "c":  # a NaN in the imaginary part only
            x.flat[3] = complex(1.0, np.nan)
        if all_nan and x.ndim >= 2:
            x[0, :, ...] = np.nan
    return x


def views(x):
    """*x* as it is, transposed (a copy seen transposed) and with negative strides."""
    yield x
    yield np.ascontiguousarray(x.T).T
    yield np.concatenate([x, x], axis=0)[::-2][::-1]


def check_close(got, want, op, x):
    got_a, want_a = np.asarray(got), np.asarray(want)
    assert got_a.shape == want_a.shape, (op, got_a.shape, want_a.shape)
    assert got_a.dtype == want_a.dtype, (op, got_a.dtype, want_a.dtype)
    assert type(got) is type(want) or got_a.ndim, (op, type(got), type(want))
    if got_a.dtype.kind in "fc":
        rtol = RTOL[got_a.dtype]
        scale = np.nanmax(np.abs(want_a)) if want_a.size and not np.isnan(want_a).all() else 1
        np.testing.assert_allclose(got_a, want_a, rtol=rtol, atol=rtol * scale, equal_nan=True,
                                   err_msg=f"{op} of {x.dtype}{x.shape}")
    else:
        np.testing.assert_array_equal(got_a, want_a, err_msg=op)


def outcome(func, *args, **kwargs):
    """(result, the RuntimeWarnings' messages) of one call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = func(*args, **kwargs)
    return res, sorted({str(w.message) for w in caught if w.category is RuntimeWarning})


@pytest.mark.parametrize("dtype", [*FLOATS, np.complex64, np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", SUM_OPS)
def test_sums_products_means_and_counts_skip_nan(op, dtype):
    rng = np.random.default_rng(1)
    for x in views(with_nans(rng, (5, 7, 3), dtype, near_one=op == "nanprod")):
        for axis in AXES:
            for keepdims in (False, True):
                got, got_warned = outcome(getattr(axisops, op), x, axis, keepdims=keepdims)
                want, want_warned = outcome(getattr(ref, op), x, axis, keepdims=keepdims)
                check_close(got, want, f"{op}(axis={axis}, keepdims={keepdims})", x)
                assert got_warned == want_warned, (op, axis, got_warned, want_warned)


@pytest.mark.parametrize("dtype", [*FLOATS, np.complex128, np.int16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", VAR_OPS)
def test_variances_and_standard_deviations(op, dtype):
    rng = np.random.default_rng(2)
    for x in views(with_nans(rng, (6, 5, 4), dtype)):
        if not op.startswith("nan") and x.dtype.kind in "fc":
            x = np.where(np.isnan(x), 0.5, x).astype(x.dtype)
        for axis in AXES:
            for ddof in (0, 1):
                got, got_warned = outcome(getattr(axisops, op), x, axis, ddof=ddof)
                want, want_warned = outcome(getattr(ref, op), x, axis, ddof=ddof)
                check_close(got, want, f"{op}(axis={axis}, ddof={ddof})", x)
                assert got_warned == want_warned, (op, axis, ddof, got_warned, want_warned)


def test_variance_is_accurate_far_from_zero():
    # a sum of squares minus the square of the sum would lose every digit here
    rng = np.random.default_rng(3)
    x = 1e9 + rng.integers(-5, 6, 100001).astype(np.float64)
    exact = np.var(x - 1e9)
    assert abs(axisops.var(x) - exact) <= 1e-9 * exact
    x32 = (1000 + rng.integers(-5, 6, 20001)).astype(np.float32)
    exact32 = np.var(x32.astype(np.float64) - 1000)
    assert abs(float(axisops.var(x32)) - exact32) <= 1e-4 * exact32
    assert axisops.var(x32).dtype == np.float32
    x[::7] = np.nan
    assert abs(axisops.nanvar(x) - np.nanvar(x - 1e9)) <= 1e-9 * exact


def test_ddof_at_or_above_the_count_gives_nan_with_a_warning():
    x = np.array([[1.0, 2.0], [np.nan, 3.0]])
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = axisops.nanvar(x, axis=1, ddof=1)
    np.testing.assert_array_equal(got, [0.5, np.nan])
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        assert np.isnan(axisops.std(np.ones(2), ddof=2))


@pytest.mark.parametrize("dtype", [*FLOATS, np.int8, np.uint16, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", EXTREMES)
def test_extremes_skip_nan_bit_for_bit(op, dtype):
    rng = np.random.default_rng(4)
    x0 = with_nans(rng, (5, 6, 4), dtype)
    if x0.dtype.kind == "f":
        x0[1, 2, 3], x0[2, 0, 0], x0[3, 1, 1] = np.inf, -np.inf, -0.0
    for x in views(x0):
        for axis in AXES:
            for keepdims in (False, True):
                got, got_warned = outcome(getattr(axisops, op), x, axis, keepdims=keepdims)
                want, want_warned = outcome(getattr(ref, op), x, axis, keepdims=keepdims)
                assert np.asarray(got).dtype == x.dtype and np.shape(got) == np.shape(want)
                np.testing.assert_array_equal(got, want, err_msg=f"{op}(axis={axis})")
                assert got_warned == want_warned, (op, axis, got_warned, want_warned)


@pytest.mark.parametrize("dtype", [*FLOATS, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ARGS)
def test_arg_extremes_skip_nan(op, dtype):
    rng = np.random.default_rng(5)
    x0 = with_nans(rng, (5, 6, 4), dtype, all_nan=False)
    if x0.dtype.kind == "f":
        x0 = np.round(x0 * 2) / 2  # ties
        x0[1, 2, 3], x0[2, 0, 0] = -np.inf, np.inf
        x0[4, :, 2] = -np.inf  # a slice of -inf and NaN: the first -inf (not a NaN)
        x0[4, 0, 2] = np.nan
    for x in views(x0):
        for axis in AXES:
            for options in ({}, {"select_last_index": True}, {"index_dtype": np.int32},
                            {"keepdims": True}):
                options["all_nan_index"] = -1  # axis=() makes each NaN a slice of its own
                got = getattr(axisops, op)(x, axis, **options)
                want = getattr(ref, op)(x, axis, **options)
                assert np.asarray(got).dtype == np.asarray(want).dtype, (op, options)
                assert np.shape(got) == np.shape(want)
                np.testing.assert_array_equal(got, want, err_msg=f"{op}(axis={axis}, {options})")


@pytest.mark.parametrize("op", ARGS)
def test_all_nan_slices_raise_or_give_all_nan_index(op):
    x = with_nans(np.random.default_rng(6), (4, 5, 3), np.float32)  # x[0] all NaN
    with pytest.raises(ValueError, match=rf"{op}: All-NaN slice encountered.*\(0, 0\)"):
        getattr(axisops, op)(x, axis=1)
    for fill in (-1, 99):
        for options in ({}, {"select_last_index": True}, {"index_dtype": np.int32}):
            got = getattr(axisops, op)(x, axis=1, all_nan_index=fill, **options)
            want = getattr(ref, op)(x, axis=1, all_nan_index=fill, **options)
            assert got.dtype == want.dtype and got.shape == want.shape == (4, 3)
            np.testing.assert_array_equal(got, want)
            assert (got[0] == fill).all()
    assert getattr(axisops, op)(np.full(3, np.nan), all_nan_index=-1) == -1
    with pytest.raises(TypeError, match="all_nan_index"):
        getattr(axisops, op)(x, axis=1, all_nan_index=1.5)


@pytest.mark.parametrize("dtype", [*FLOATS, np.complex64, np.int32],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", SCANS)
def test_scans_carry_over_nan(op, dtype):
    rng = np.random.default_rng(7)
    for x in views(with_nans(rng, (4, 9, 3), dtype, near_one=op == "nancumprod")):
        for axis in (None, 0, 1, -1):
            for options in ({}, {"exclusive": True}, {"reverse": True},
                            {"exclusive": True, "reverse": True}):
                got = getattr(axisops, op)(x, axis, **options)
                want = getattr(ref, op)(x, axis, **options)
                check_close(got, want, f"{op}(axis={axis}, {options})", x)


def test_long_and_folded_reductions_and_the_thread_count():
    # chunked outputs (more than 2 * 32768 reduced elements), a folded tall sum,
    # a scan long enough to split: the same bits on one thread and on two
    rng = np.random.default_rng(8)
    wide = with_nans(rng, (3, 140000), np.float32, fraction=0.3, all_nan=False)
    wide[1] = np.nan
    wide[0, 777] = wide[2, 100000] = 50.0
    tall = with_nans(rng, (70000, 4), np.float32)
    calls = [(op, wide, 1) for op in ("nansum", "nanmean", "count", "nanmax", "nanmin", "nanvar")]
    calls += [(op, tall, 0) for op in ("nansum", "nanmean", "count", "nanmax")]
    calls += [("nancumsum", wide, 1), ("nancumprod", tall, 0)]
    before = axisops.thread_limit()
    try:
        results = []
        for threads in (1, 2):
            axisops.thread_limit(threads)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                results.append([getattr(axisops, op)(x, axis) for op, x, axis in calls])
                results[-1].append(axisops.nanargmax(wide, 1, all_nan_index=-1))
    finally:
        axisops.thread_limit(before)
    for (op, x, axis), one, two in zip(calls, *results):
        assert same_bits(one, two) is None, op
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            check_close(one, getattr(ref, op)(x, axis), op, x)
    np.testing.assert_array_equal(results[0][-1], [777, -1, 100000])


def test_dtype_requests_as_numpy():
    x = np.array([[1.5, np.nan, 2.5], [np.nan, np.nan, 4.0]], np.float32)
    got = axisops.nansum(x, axis=1, dtype=np.int64)  # NaN as 0, then each element truncated
    assert got.dtype == np.int64 and got.tolist() == np.nansum(x, axis=1, dtype=np.int64).tolist()
    got = axisops.nansum(x, axis=1, dtype=np.float64)
    assert got.dtype == np.float64 and got.tolist() == [4.0, 4.0]
    got = axisops.nancumsum(x, axis=1, dtype=np.int32)
    assert got.dtype == np.int32 and got.tolist() == np.nancumsum(x, axis=1, dtype=np.int32).tolist()
    got = axisops.nanmean(x.astype(np.float16), axis=1)
    assert got.dtype == np.float16 and got.tolist() == [2.0, 4.0]
    assert axisops.count(x).dtype == np.int64 and axisops.count(x) == 3


@pytest.mark.parametrize("op", SUM_OPS + VAR_OPS + EXTREMES + ARGS + SCANS)
def test_integers_are_their_plain_twins(op):
    x = np.random.default_rng(9).integers(-50, 50, (6, 7)).astype(np.int16)
    plain = {"nanmean": "mean", "nanvar": "var", "nanstd": "std", "count": None, "var": "var",
             "std": "std"}.get(op, op[3:])
    got = getattr(axisops, op)(x, 1)
    if plain is None:
        want = np.full(6, 7, np.int64)
    elif plain in ("var", "std"):
        want = getattr(np, plain)(x, 1)
    else:
        want = getattr(axisops, plain)(x, 1)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("op", SUM_OPS + VAR_OPS + EXTREMES + ARGS + SCANS)
def test_bad_input_raises_naming_the_operator(op):
    func = getattr(axisops, op)
    with pytest.raises(TypeError, match=op):
        func(np.array(["a", "b"]))
    with pytest.raises(AxisError):
        func(np.ones((2, 3)), 2)
    if op in EXTREMES + ARGS:
        with pytest.raises(TypeError, match=op):
            func(np.ones(3, np.complex64))
        with pytest.raises(ValueError):
            func(np.ones((0, 3)), 0)
    if op in VAR_OPS:
        with pytest.raises(TypeError, match="ddof"):
            func(np.ones(3), ddof="1")


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_long_contiguous_runs_skip_nan_block_by_block(dtype):
    # rows of 3000 (several 1024-element blocks): blocks of NaN only, the extreme in a
    # later block, ties across blocks, signed zeros and infinities as the extreme
    rng = np.random.default_rng(10)
    x = np.round(rng.standard_normal((8, 3000)) * 4).astype(dtype)
    x[:, :1100] = np.nan                    # the first block(s) all NaN
    x[0, 2500] = x[0, 1500] = 99            # a tie across blocks
    x[1] = np.where(np.isnan(x[1]), np.nan, -np.abs(x[1]) - 1)
    x[1, 2000], x[1, 2999] = -0.0, 0.0      # the maximum is a zero of either sign
    x[2, 1200], x[2, 2200] = np.inf, -np.inf
    x[3, 1100:] = -np.inf                   # only -inf besides NaN
    x[4] = np.nan                           # all NaN
    x[5, 1500:] = np.nan
    x[5, 1400] = -0.0
    for op in EXTREMES + ARGS:
        kwargs = {"all_nan_index": -1} if op in ARGS else {}
        for options in ({}, {"select_last_index": True}) if op in ARGS else ({},):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                got = getattr(axisops, op)(x, 1, **kwargs, **options)
                want = getattr(ref, op)(x, 1, **kwargs, **options)
            assert got.dtype == want.dtype and got.shape == want.shape
            if op in ARGS:
                assert same_bits(got, want) is None, (op, options, got, want)
            else:  # a zero extreme is +0.0 whatever the sign of the zeros (as max)
                np.testing.assert_array_equal(got, want, err_msg=op)


# ------------------------------------------------- the fused mean and variance path

def _fused_layouts(rng, dtype):
    """(name, x, axis): every way ``axisops._moments`` reads or copies its runs."""
    base = with_nans(rng, (40, 70), dtype, fraction=0.2)
    base[3] = np.nan                                    # an all-NaN output
    big = with_nans(rng, (300, 260), dtype, fraction=0.1, all_nan=False)
    return [
        ("contiguous rows", base, 1),
        ("strided runs", base[:, ::3], 1),               # n_stride 3: leaves gathered
        ("negative strides", base[::-1, ::-2], 1),
        ("transposed (outputs adjacent, small: copied)", base, 0),
        ("tuple axes (small: copied)", base.reshape(8, 5, 70), (0, 2)),
        ("axis None", base, None),
        ("kept order restored", np.transpose(base.reshape(4, 10, 70), (1, 0, 2)), 2),
        ("large, outputs adjacent (composed path)", big, 0),
        ("long rows (several leaves)", big.reshape(3, -1), 1),
        ("keepdims", base, (1,)),
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_mean_and_variance_match_numpy_on_every_layout(dtype):
    rng = np.random.default_rng(21)
    for name, x, axis in _fused_layouts(rng, dtype):
        for op in ("nanmean", *VAR_OPS):
            for options in ({}, {"ddof": 1}, {"keepdims": True}) if op != "nanmean" else ({},):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    got = getattr(axisops, op)(x, axis, **options)
                    want = getattr(ref, op)(x, axis, **options)
                check_close(got, want, f"{op} {name} {options}", x)


def test_fused_variance_is_accurate_far_from_zero():
    # a mean of 1e8 and deviations of 1: a difference of large sums would lose
    # every digit in float32 and most in float64
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        x = (1e4 if dtype == np.float32 else 1e8) + rng.standard_normal((3, 5000))
        x = x.astype(dtype)
        x[:, ::7] = np.nan
        exact = np.array([np.var(row[~np.isnan(row)].astype(np.longdouble)) for row in x])
        got = axisops.nanvar(x, axis=1)
        assert got.dtype == dtype and got.shape == (3,)
        np.testing.assert_allclose(got, exact.astype(np.float64), rtol=1e-3 if dtype == np.float32
                                   else 1e-9)


def test_fused_path_gives_the_same_bits_on_one_and_two_threads():
    # one long row (its leaves are the tasks on two threads), and many rows
    rng = np.random.default_rng(9)
    long = with_nans(rng, (1 << 19,), np.float64, all_nan=False)
    rows = with_nans(rng, (600, 1000), np.float32, all_nan=False)
    calls = [(op, x, axis) for op in ("nanmean", *VAR_OPS) for x, axis in
             ((long, None), (long[::2], 0), (rows, 1))]
    before = axisops.thread_limit()
    try:
        results = []
        for threads in (1, 2):
            axisops.thread_limit(threads)
            results.append([getattr(axisops, op)(x, axis) for op, x, axis in calls])
    finally:
        axisops.thread_limit(before)
    for (op, x, axis), one, two in zip(calls, *results):
        assert same_bits(np.array(one), np.array(two)) is None, (op, x.shape, axis)
        check_close(one, getattr(ref, op)(x, axis), op, x)


def test_fused_all_nan_and_ddof_warnings():
    x = np.array([[np.nan, np.nan], [1.0, 3.0]])
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = axisops.nanmean(x, axis=1)
    assert np.isnan(got[0]) and got[1] == 2.0 and got.dtype == np.float64
    with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0"):
        got = axisops.nanvar(x, axis=1, ddof=2)
    assert np.isnan(got).all() and got.shape == (2,)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0"):
        scalar = axisops.nanstd(np.array([np.nan, 1.0], np.float32), ddof=1)
    assert np.isnan(scalar) and type(scalar) is np.float32
    assert type(axisops.nanvar(np.array([1.0, 3.0]))) is np.float64

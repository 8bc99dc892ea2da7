"""The moving-window reductions (``axisops.moving``) against their NumPy twins,
``axisops.reference.moving``, and against bottleneck's ``move_*`` (and numbagg's
where it has them): values, dtypes and shapes over every dtype class, strided
views and axes, windows of 1, 2, 5 and longer than the axis, ``min_count``, NaN
patterns with all-NaN runs, infinities, ties, a long axis (the re-anchored sums
against a longdouble reference), the thread count, and the errors."""
from __future__ import annotations

import numpy as np
import pytest
from cases import AxisError

import axisops
from axisops import reference as ref

SUMS = ("moving_sum", "moving_mean")
VARS = ("moving_var", "moving_std")
EXTREMES = ("moving_max", "moving_min")
ARGS = ("moving_argmax", "moving_argmin")
OPS = SUMS + VARS + EXTREMES + ARGS
DTYPES = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64)
#: Relative tolerance of the sums and variances per result dtype (both sides round
#: once from float64; float64 differs by the order of the additions only).
RTOL = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-11}


def data(rng, shape, dtype, *, nan=0.15, ties=False):
    """Values of *dtype*: small integers (with ties) or normals, a *nan* fraction of
    NaN and an all-NaN run of 7 along the last axis for floats."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu" or ties:
        x = rng.integers(0, 6, shape).astype(dtype)
    else:
        x = rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "f":
        x[rng.random(shape) < nan] = np.nan
        if shape[-1] >= 10:
            x[..., 2:9] = np.nan
    return x


def check(op, got, want, atol=None):
    """Same shape and dtype; indices and extremes exact (NaN where NaN), the sums and
    variances to rounding (and *atol*, relative to the largest value, if given)."""
    got, want = np.asarray(got), np.asarray(want)
    assert type(got) is np.ndarray and got.flags.c_contiguous, op
    assert got.shape == want.shape, (op, got.shape, want.shape)
    assert got.dtype == want.dtype, (op, got.dtype, want.dtype)
    if got.dtype.kind == "i" or op.split("(")[0] in EXTREMES + ("move_max", "move_min"):
        np.testing.assert_array_equal(got, want, err_msg=op)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=op)
    scale = np.nanmax(np.abs(want)) if not np.isnan(want).all() else 1.0
    np.testing.assert_allclose(got, want, rtol=RTOL[got.dtype],
                               atol=(atol or RTOL[got.dtype]) * max(float(scale), 1.0),
                               err_msg=op)


def call(op, x, window, axis=-1, **kwargs):
    return getattr(axisops, op)(x, window, axis, **kwargs), getattr(ref, op)(x, window, axis,
                                                                             **kwargs)


#: int16, uint16 and uint32 under the exhaustive switch: the kernels of int8, int32 and
#: uint8 for the same class, each dtype compiling every moving kernel anew in CI
_EVERY_DTYPE = [pytest.param(d, marks=pytest.mark.exhaustive)
                if d in (np.int16, np.uint16, np.uint32) else d for d in DTYPES]


@pytest.mark.parametrize("dtype", _EVERY_DTYPE, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_every_dtype_window_and_min_count_against_the_reference(op, dtype):
    rng = np.random.default_rng(1)
    x = data(rng, (3, 23), dtype)
    for window in (1, 2, 5, 23, 40):
        for min_count in (None, 1, (window + 1) // 2):
            got, want = call(op, x, window, min_count=min_count)
            check(f"{op}(window={window}, min_count={min_count})", got, want)


@pytest.mark.parametrize("op", OPS)
def test_views_and_axes(op):
    rng = np.random.default_rng(2)
    base = data(rng, (6, 9, 14), np.float64)
    views = (base, base.transpose(2, 0, 1), base[::-1, :, ::-2], base[:, 1:8:3, :],
             np.broadcast_to(base[:1], (4, 9, 14)), base.astype(np.float32)[:, ::-1])
    for x in views:
        for axis in range(-x.ndim, x.ndim):
            for window in (1, 3, 20):
                got, want = call(op, x, window, axis, min_count=1)
                check(f"{op}(axis={axis}, window={window}, strides={x.strides})", got, want)


@pytest.mark.parametrize("op", OPS)
def test_ddof_and_inputs_unchanged(op):
    rng = np.random.default_rng(3)
    x = data(rng, (4, 30), np.float64)
    x.flags.writeable = False
    before = x.copy()
    kwargs = [{"ddof": d} for d in (0, 1, 2.5, 5)] if op in VARS else [{}]
    for kw in kwargs:
        for min_count in (1, 3, 5):
            got, want = call(op, x, 5, min_count=min_count, **kw)
            check(f"{op}({kw}, min_count={min_count})", got, want)
    np.testing.assert_array_equal(x, before)


def test_against_bottleneck_and_numbagg():
    bn = pytest.importorskip("bottleneck")
    numbagg = pytest.importorskip("numbagg")
    rng = np.random.default_rng(4)
    for dtype in (np.float64, np.float32, np.int64):
        x = data(rng, (5, 300), dtype, nan=0.2)
        if dtype == np.float64:
            x[1, 100:160] = np.nan  # a run longer than the windows
            x[2] = np.round(x[2])    # ties
        for window in (1, 2, 5, 60, 300):
            for min_count in (None, 1, max(1, window // 3)):
                kw = {"min_count": min_count}
                for name in ("sum", "mean", "max", "min"):
                    got = getattr(axisops, f"moving_{name}")(x, window, **kw)
                    want = getattr(bn, f"move_{name}")(x, window, **kw)
                    check(f"move_{name}", got, want.astype(got.dtype))
                for name in ("var", "std"):
                    for ddof in (0, 1):
                        got = getattr(axisops, f"moving_{name}")(x, window, ddof=ddof, **kw)
                        want = getattr(bn, f"move_{name}")(x, window, ddof=ddof, **kw)
                        # bottleneck gives inf for some count - ddof == 0 (its residue
                        # over 0); the contract says NaN (no inf in this data)
                        want[np.isinf(want)] = np.nan
                        # bottleneck's one-pass residue on windows of equal values (ours
                        # are exactly 0): eps in a variance, sqrt(eps) in its root
                        atol = 1e-7 if got.dtype == np.float64 else 2e-3
                        check(f"move_{name}", got, want.astype(got.dtype), atol=atol)
                for name in ("argmax", "argmin"):  # bottleneck counts back from the end
                    got = getattr(axisops, f"moving_{name}")(x, window, **kw)
                    rel = getattr(bn, f"move_{name}")(x, window, **kw)
                    want = np.where(np.isnan(rel), -1, np.arange(x.shape[1]) - np.nan_to_num(rel))
                    check(f"move_{name}", got, want.astype(np.int64))
                if dtype != np.int64:
                    for name in ("sum", "mean"):
                        got = getattr(axisops, f"moving_{name}")(x, window, **kw)
                        want = getattr(numbagg, f"move_{name}")(
                            x, window=window, min_count=min_count or window)
                        check(f"numbagg.move_{name}", got, want.astype(got.dtype))


def test_argmax_is_where_the_max_is_and_ties_go_to_the_latest():
    x = np.array([[1, 3, 3, 2, 3, 0, 0, 0, 5], [0, 0, 0, 0, 0, 0, 0, 0, 0]], np.int16)
    got = axisops.moving_argmax(x, 3, min_count=1)
    np.testing.assert_array_equal(got[0], [0, 1, 2, 2, 4, 4, 4, 7, 8])
    np.testing.assert_array_equal(got[1], np.arange(9))
    np.testing.assert_array_equal(axisops.moving_argmin(x, 3, min_count=1)[0],
                                  [0, 0, 0, 3, 3, 5, 6, 7, 7])
    rng = np.random.default_rng(5)
    for dtype in (np.float64, np.float16, np.uint8):
        y = data(rng, (4, 50), dtype, ties=True)
        for op, arg in (("moving_max", "moving_argmax"), ("moving_min", "moving_argmin")):
            i = getattr(axisops, arg)(y, 4, 0, min_count=2)
            v = getattr(axisops, op)(y, 4, 0, min_count=2)
            taken = np.take_along_axis(y, np.maximum(i, 0), 0).astype(v.dtype)
            np.testing.assert_array_equal(np.where(i >= 0, taken, np.nan), v)


def test_signed_zeros_and_infinities():
    x = np.array([0.0, -0.0, 1.0, np.inf, 2.0, 3.0, -np.inf, np.inf, 4.0, 5.0, 6.0])
    np.testing.assert_array_equal(np.signbit(axisops.moving_max(x[:2], 2, min_count=1)),
                                  [False, True])  # the latest of the tied zeros
    s = axisops.moving_sum(x, 2, min_count=1)
    np.testing.assert_array_equal(s, [0, 0, 1, np.inf, np.inf, 5, -np.inf, np.nan, np.inf, 9, 11])
    v = axisops.moving_var(x, 2, min_count=1)
    np.testing.assert_array_equal(np.isnan(v), [0, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0])
    np.testing.assert_array_equal(v[-2:], [0.25, 0.25])
    np.testing.assert_array_equal(axisops.moving_max(x, 3), [np.nan, np.nan, 1, np.inf, np.inf,
                                                              np.inf, 3, np.inf, np.inf, np.inf, 6])


def test_windows_longer_than_the_axis_and_empty_arrays():
    x = np.arange(4.0)
    assert np.isnan(axisops.moving_mean(x, 10)).all()
    np.testing.assert_array_equal(axisops.moving_mean(x, 10, min_count=2), [np.nan, .5, 1, 1.5])
    np.testing.assert_array_equal(axisops.moving_argmin(x, 10, min_count=1), [0, 0, 0, 0])
    for op in OPS:
        for shape, axis in (((0, 5), -1), ((3, 0), -1), ((0, 5), 0)):
            got = getattr(axisops, op)(np.zeros(shape, np.float32), 3, axis)
            want_dtype = np.int64 if op in ARGS else np.float32
            assert got.shape == shape and got.dtype == want_dtype, op
    assert axisops.moving_sum([1, 2, 3], 2).dtype == np.float64  # a list, ints


def test_long_axis_sums_are_re_anchored():
    """A huge value entering and leaving leaves a plain running sum off for the rest
    of the axis (bottleneck's); the re-anchored sum is exact again after a block."""
    rng = np.random.default_rng(6)
    n, window = 1_000_000, 100
    x = 1000 + rng.standard_normal(n)
    x[10:20] = 1e15
    # the reference: windows after the huge values, from a longdouble cumsum that
    # starts after them (1e9 in a 64-bit mantissa: 5e-11 absolute)
    start = 1000
    c = np.concatenate([[0], np.cumsum(x[start:].astype(np.longdouble))])
    want = (c[window:] - c[:-window]).astype(np.float64)  # the windows ending at start + w - 1 ...
    got = axisops.moving_sum(x, window)[start + window - 1:]
    np.testing.assert_allclose(got[:20], want[:20], rtol=1e-4)  # off by 1e15 * eps at first
    late = 2 * max(1 << 14, 8 * window)  # past the next anchor: exact again
    np.testing.assert_allclose(got[late:], want[late:], rtol=1e-13)
    mean = axisops.moving_mean(x, window)[start + window - 1:]
    np.testing.assert_allclose(mean[late:], want[late:] / window, rtol=1e-13)
    # the variance stays exact over a large offset (no sum of squares)
    y = 1e9 + rng.standard_normal(20_000)
    from numpy.lib.stride_tricks import sliding_window_view
    want_var = np.var(sliding_window_view(y, 50), axis=-1, ddof=1)
    got_var = axisops.moving_var(y, 50, ddof=1)[49:]
    np.testing.assert_allclose(got_var, want_var, rtol=1e-6)
    assert abs(np.mean(got_var) - 1) < 0.1


@pytest.mark.parametrize("op", OPS)
def test_same_bits_on_one_and_two_threads(op):
    rng = np.random.default_rng(7)
    cases = (data(rng, (1, 400_000), np.float64)[0], data(rng, (300, 700), np.float32),
             data(rng, (80, 30, 40), np.float64).transpose(1, 2, 0))
    for x in cases:
        for window in (3, 1000):
            old = axisops.thread_limit(1)
            try:
                one = getattr(axisops, op)(x, window, 0, min_count=1)
                axisops.thread_limit(2)
                two = getattr(axisops, op)(x, window, 0, min_count=1)
            finally:
                axisops.thread_limit(old)
            assert one.tobytes() == two.tobytes(), (op, x.shape, window)


@pytest.mark.parametrize("op", OPS)
def test_errors(op):
    f = getattr(axisops, op)
    x = np.ones((3, 4))
    for window, error in ((0, ValueError), (-2, ValueError), (2.0, TypeError),
                          (True, TypeError), ("3", TypeError), (None, TypeError)):
        with pytest.raises(error, match=f"{op}: window"):
            f(x, window)
    for min_count, error in ((0, ValueError), (4, ValueError), (1.5, TypeError),
                             (False, TypeError)):
        with pytest.raises(error, match=f"{op}: min_count"):
            f(x, 3, min_count=min_count)
    with pytest.raises(AxisError):
        f(x, 2, 2)
    with pytest.raises(AxisError):
        f(np.float64(1.0), 1)
    for axis in (None, (0,), 1.0):
        with pytest.raises(TypeError, match=op):
            f(x, 2, axis)
    for bad in (x.astype(complex), x.astype(object), np.zeros(3, "datetime64[s]"),
                np.zeros(3, np.longdouble), np.array(["a", "b"])):
        if bad.dtype == np.longdouble and np.dtype(np.longdouble) == np.float64:
            continue
        with pytest.raises(TypeError, match=f"{op}: unsupported dtype"):
            f(bad, 2)
    if op in VARS:
        with pytest.raises(TypeError, match=f"{op}: ddof"):
            f(x, 2, ddof="1")
    # the reference twin refuses alike
    with pytest.raises(ValueError):
        getattr(ref, op)(x, 0)
    with pytest.raises(TypeError):
        getattr(ref, op)(x.astype(complex), 2)


def test_plans_do_not_confuse_equal_options():
    x = np.arange(6.0)
    np.testing.assert_array_equal(axisops.moving_sum(x, 1), x)
    with pytest.raises(TypeError):
        axisops.moving_sum(x, True)
    np.testing.assert_array_equal(axisops.moving_sum(x, np.int64(2), min_count=np.int8(1)),
                                  [0, 1, 3, 5, 7, 9])
    a = axisops.moving_var(x, 3, ddof=1)
    b = axisops.moving_var(x, 3, ddof=0)
    assert not np.array_equal(a[2:], b[2:])


@pytest.mark.parametrize("op", OPS)
def test_every_path_has_the_same_bits(op):
    """The loops (row order over contiguous inner lanes, interleaved finite lanes or
    blocks, a lane with NaN or infinities on its own, strided lanes) give the bits
    of one another, on one and two threads, and the reference's values."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 300, 45))
    x[0, :, 3] = np.nan            # a lane of NaN among finite ones
    x[1, 100:110, 7] = np.inf      # infinities in some lanes only
    x[1, 300:305, 8] = -np.inf
    x[2, ::17, 9] = np.nan
    x[2, 200:260, 10] = 2.5        # a run of equal values
    kwargs = {"ddof": 1} if op in VARS else {}
    f = getattr(axisops, op)
    for dtype in (np.float64, np.float32, np.int32):
        y = x.astype(dtype) if dtype != np.int32 else np.nan_to_num(x * 4, posinf=9,
                                                                      neginf=-9).astype(dtype)
        lanes = np.ascontiguousarray(np.moveaxis(y, 1, -1))       # lane order, contiguous
        strided = np.moveaxis(np.asfortranarray(y), 1, -1)        # lane order, strided
        for window in (1, 4, 33, 300):
            for min_count in (None, max(1, window // 2)):
                kw = dict(kwargs, min_count=min_count)
                want = np.ascontiguousarray(np.moveaxis(f(lanes, window, -1, **kw), -1, 1))
                if window < 300:  # (infinities as NaN: check's tolerance scales by the max)
                    fin = (lambda r: np.where(np.isinf(r), np.nan, r)) if op not in ARGS else \
                        (lambda r: r)
                    check(op, fin(want), fin(getattr(ref, op)(y, window, 1, **kw)))
                for threads in (1, 2):
                    old = axisops.thread_limit(threads)
                    try:
                        rows = f(y, window, 1, **kw)
                        other = np.moveaxis(f(strided, window, -1, **kw), -1, 1)
                    finally:
                        axisops.thread_limit(old)
                    assert rows.tobytes() == want.tobytes(), (op, window)
                    assert other.tobytes() == rows.tobytes(), (op, window)


@pytest.mark.parametrize("op", OPS)
def test_long_lanes_interleaved_blocks_have_the_same_bits(op):
    """A long axis cut into blocks walked four at a time where they are finite, and
    one by one where not: the bits of the lanes walked apart (one lane per call)."""
    rng = np.random.default_rng(9)
    n = 5 * (1 << 14) + 123
    x = rng.standard_normal((3, n))
    x[1, 40_000] = np.nan
    x[2, 70_000] = np.inf
    kwargs = {"ddof": 1} if op in VARS else {}
    f = getattr(axisops, op)
    for window in (3, 2500):
        whole = f(x, window, min_count=1, **kwargs)
        for r in range(3):
            assert f(x[r], window, min_count=1, **kwargs).tobytes() == whole[r].tobytes()
            assert f(x[r, ::-1][::-1], window, min_count=1, **kwargs).tobytes() == \
                whole[r].tobytes()


@pytest.mark.parametrize("op", EXTREMES + ARGS)
def test_ties_and_signed_zeros_across_blocks_against_the_reference(op):
    """The extremes' blocks of ``window`` positions (suffixes joined to prefixes):
    windows inside one block and across two, ties (the latest wins, its bits: -0.0
    and 0.0 apart), lanes without NaN (the chains with no check for none) and with
    NaN runs, on a long lane of several re-anchored blocks too."""
    rng = np.random.default_rng(11)
    x = rng.choice(np.array([-1.0, -0.0, 0.0, 1.0]), (6, 257))
    x[3:, 40:60] = np.nan
    x[4, ::3] = np.nan
    f = getattr(axisops, op)
    for window in (1, 2, 3, 16, 100, 256, 257, 300):
        for min_count in (None, 1, window // 2 + 1):
            got = f(x, window, min_count=min_count)
            want = getattr(ref, op)(x, window, min_count=min_count)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes(), (op, window, min_count)
    long = rng.choice(np.array([-2.0, -0.0, 0.0, 3.0]), 40_000)
    long[20_000:20_100] = np.nan
    for window in (5, 700):
        got = f(long, window, min_count=1)
        want = getattr(ref, op)(long, window, min_count=1)
        assert got.tobytes() == want.tobytes(), (op, window)


def test_a_huge_value_leaving_the_window_leaves_no_residue():
    # the running M2 is computed afresh when one step dwarfs what is left; before,
    # moving_std of this int32 lane gave 22.6 where 1.0 is right (bottleneck and
    # pandas share the flaw)
    x = np.array([1, 2**31 - 1, 3, 1, 2, 3, 1, 2], np.int32)
    got = axisops.moving_std(x, 3, ddof=1)
    want = [np.nan, np.nan] + [np.std(x[i - 2:i + 1].astype(np.float64), ddof=1)
                               for i in range(2, 8)]
    assert got.dtype == np.float64 and got.shape == (8,)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    y = np.array([1e15, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, np.nan, 7.0, 1e-300])
    got = axisops.moving_var(y, 3, min_count=2)
    want = ref.moving_var(y, 3, min_count=2)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)

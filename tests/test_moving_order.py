"""The moving order statistics (``axisops.moving_order``: moving_median,
moving_quantile, moving_rank) and their gradients against the NumPy twins
(``axisops.reference.moving_order``), bottleneck's ``move_median``/``move_rank`` and
pandas' ``rolling().quantile``: every dtype class, shapes with zero-size and 3-D
arrays along every axis, transposed and negative-stride views, windows of 1, 2,
5, 100 and longer than the axis, ``min_count``, NaN runs, ties, signed zeros and
infinities, chunk and block borders, the thread count, and the errors."""
from __future__ import annotations

import numpy as np
import pytest
from cases import EXHAUSTIVE, AxisError, finite_difference

import axisops
from axisops import moving_order as mo
from axisops.grad import moving_order as gmo
from axisops.reference import moving_order as ref

OPS = ("moving_median", "moving_quantile", "moving_rank")
DTYPES = (np.bool_, np.int32, np.int64, np.uint8, np.float16, np.float32, np.float64)
if EXHAUSTIVE:
    DTYPES += (np.int8, np.int16, np.uint16, np.uint32, np.uint64)
QS = (0.0, 0.25, 0.5, 0.9, 1.0)


def data(rng, shape, dtype, *, nan=0.15, ties=False):
    """Values of *dtype*: small integers (ties) or normals, a *nan* fraction of NaN
    and an all-NaN run of 7 along the last axis for floats."""
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


def both(op, x, window, axis=-1, q=0.3, **kw):
    if op == "moving_quantile":
        return (mo.moving_quantile(x, window, q, axis, **kw),
                ref.moving_quantile(x, window, q, axis, **kw))
    return getattr(mo, op)(x, window, axis, **kw), getattr(ref, op)(x, window, axis, **kw)


def same(got, want, what):
    """Same shape, dtype and values, NaN where NaN; a C-contiguous ndarray. Selections
    are exact; interpolations and ranks are computed alike (float64, rounded once)."""
    assert type(got) is np.ndarray and got.flags.c_contiguous, what
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want, err_msg=str(what))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_every_dtype_window_and_min_count_against_the_twin(op, dtype):
    rng = np.random.default_rng(1)
    x = data(rng, (3, 41), dtype)
    for window in (1, 2, 5, 41, 100):
        for min_count in (None, 1, (window + 1) // 2):
            for q in (QS if op == "moving_quantile" else (None,)):
                got, want = both(op, x, window, q=q, min_count=min_count)
                same(got, want, (op, window, min_count, q))


@pytest.mark.parametrize("op", OPS)
def test_views_axes_and_shapes(op):
    rng = np.random.default_rng(2)
    base = data(rng, (5, 7, 12), np.float64)
    views = (base, base.transpose(2, 0, 1), base[::-1, :, ::-2], base[:, 1:7:3, :],
             np.broadcast_to(base[:1], (3, 7, 12)), base.astype(np.float32)[:, ::-1])
    for x in views:
        for axis in range(-x.ndim, x.ndim):
            for window in (1, 3, 20):
                got, want = both(op, x, window, axis, min_count=1)
                same(got, want, (op, axis, window, x.strides))
    for shape, axis in (((0, 5), -1), ((3, 0), -1), ((0, 5), 0), ((0,), 0)):
        got = both(op, np.zeros(shape, np.float32), 3, axis)[0]
        assert got.shape == shape and got.dtype == np.float32
    got = both(op, [1, 2, 3], 2, min_count=1)[0]  # a list of ints
    assert got.dtype == np.float64 and got.shape == (3,)


def test_against_bottleneck_and_pandas():
    bn = pytest.importorskip("bottleneck")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    x = data(rng, (4, 700), np.float64, nan=0.1)
    x[1, 100:260] = np.nan           # a run longer than some windows
    x[2] = np.round(x[2] * 2)        # ties
    x[3, ::11] = np.inf
    x[3, 5::13] = -np.inf
    for window in (1, 2, 5, 100, 700):
        for min_count in (None, 1, max(1, window // 3)):
            got = mo.moving_median(x, window, min_count=min_count)
            np.testing.assert_array_equal(got, bn.move_median(x, window, min_count=min_count))
            got = mo.moving_rank(x, window, min_count=min_count)
            np.testing.assert_array_equal(got, bn.move_rank(x, window, min_count=min_count))
            for q in QS:
                got = mo.moving_quantile(x, window, q, min_count=min_count)
                for r in range(3):  # pandas reads infinities as missing (row 3 has them)
                    want = pd.Series(x[r]).rolling(window, min_periods=min_count).quantile(q)
                    np.testing.assert_array_equal(got[r], want.to_numpy(), err_msg=str(q))


def test_long_lanes_cross_chunk_and_block_borders():
    """Windows over many chunks and several blocks of one task each (the anchor
    re-read), NaN runs across borders, ties: the twin's values and bottleneck's."""
    bn = pytest.importorskip("bottleneck")
    rng = np.random.default_rng(4)
    n = 40_000
    x = np.round(rng.standard_normal(n) * 20)
    x[16_000:16_500] = np.nan
    x[rng.random(n) < 0.05] = np.nan
    for window in (3, 64, 65, 300, 2100):
        for min_count in (1, window):
            np.testing.assert_array_equal(mo.moving_median(x, window, min_count=min_count),
                                          bn.move_median(x, window, min_count=min_count))
            np.testing.assert_array_equal(mo.moving_rank(x, window, min_count=min_count),
                                          bn.move_rank(x, window, min_count=min_count))
    short = x[15_500:17_200]
    for window in (5, 700):
        got, want = both("moving_quantile", short, window, q=0.37, min_count=2)
        same(got, want, window)


def test_keys_that_share_their_top_bits():
    """Values a span's wide range sorts by the prefix of their keys alone (huge
    outliers, clusters apart only in their last bits): the runs of equal prefixes
    put in order of the full keys, ties among them, and clusters so large that
    the full keys are sorted instead."""
    rng = np.random.default_rng(11)
    n = 6000
    tiny = 1.0 + rng.integers(0, 2**20, n) * np.finfo(np.float64).eps  # last bits only
    few = 1.0 + rng.integers(0, 40, n) * np.finfo(np.float64).eps  # and ties
    for base in (tiny, few):
        for sparse in (True, False):
            x = base.copy()
            if sparse:  # small runs of equal prefixes among spread values
                spread = rng.random(n) < 0.9
                x[spread] = rng.standard_normal(spread.sum())
            x[rng.random(n) < 0.01] = 1e300
            x[rng.random(n) < 0.01] = -1e300
            x[rng.random(n) < 0.03] = np.nan
            for window in (5, 100, 700):
                for op in OPS:
                    got, want = both(op, x, window, q=0.37, min_count=1)
                    same(got, want, (op, window, sparse))
    big = np.where(rng.random(n) < 0.5, 2**62 + rng.integers(0, 2**20, n), 0).astype(np.int64)
    for op in OPS:
        got, want = both(op, big, 100, min_count=1)
        same(got, want, (op, "int64"))


def test_select_in_a_word():
    """The k-th bit set of a word, by the portable select and by the one this CPU
    compiles (``pdep`` where it is fast), against NumPy."""
    from numba import njit

    from axisops.kernels import moving_order as K

    @njit
    def places(select, words, ks):
        out = np.empty(words.size, np.int64)
        for i in range(words.size):
            out[i] = select(words[i], ks[i])
        return out

    rng = np.random.default_rng(5)
    bits = rng.random((3000, 64)) < rng.choice([0.02, 0.3, 0.9, 1.0], (3000, 1))
    bits[:, 63] |= ~bits.any(axis=1)
    words = np.packbits(bits, axis=1, bitorder="little").view("<u8").ravel()
    ks = (rng.random(3000) * bits.sum(axis=1)).astype(np.int64)
    want = np.array([np.flatnonzero(b)[k] for b, k in zip(bits, ks)])
    for select in (K._select_swar, K._select):
        np.testing.assert_array_equal(places(select, words, ks), want)


def test_signed_zeros_ties_and_infinities():
    x = np.array([0.0, -0.0, 1.0, np.inf, 2.0, -0.0, -np.inf, np.inf, 0.0, np.nan, 5.0])
    for window in (1, 2, 3, 4, 11, 20):
        for op in OPS:
            for q in (0.0, 0.5, 0.75, 1.0):
                got, want = both(op, x, window, q=q, min_count=1)
                same(got, want, (op, window, q))
                assert got.tobytes() == want.tobytes(), (op, window, q)  # -0.0 or 0.0
    # the median of an odd count is that element's bits: the lower index of tied zeros
    assert np.signbit(mo.moving_median(np.array([0.0, -0.0, 0.0]), 3))[-1]
    assert not np.signbit(mo.moving_median(np.array([-0.0, 0.0, 0.0]), 3))[-1]
    # inf + -inf in a mean or an interpolation: NaN, as bottleneck and pandas
    assert np.isnan(mo.moving_median(np.array([-np.inf, np.inf]), 2))[-1]
    np.testing.assert_array_equal(mo.moving_rank(np.array([2.0, 2.0, 2.0, 1.0]), 3,
                                                 min_count=1), [0, 0, 0, -1])


def test_integers_are_compared_exactly():
    big = np.array([2**62 + 1, 2**62, 2**62 + 3, 2**62 + 2], np.int64)
    np.testing.assert_array_equal(mo.moving_rank(big, 4, min_count=1), [0, -1, 1, 2 * (2 / 3 - 0.5)])
    u = np.array([2**64 - 1, 2**64 - 2, 1, 2**63], np.uint64)
    same(mo.moving_median(u, 3, min_count=1), ref.moving_median(u, 3, min_count=1), "uint64")
    same(mo.moving_rank(u, 3, min_count=1), ref.moving_rank(u, 3, min_count=1), "uint64")
    i8 = np.array([-128, 127, -1, 0, 127], np.int8)
    same(mo.moving_quantile(i8, 4, 0.6, min_count=1),
         ref.moving_quantile(i8, 4, 0.6, min_count=1), "int8")


@pytest.mark.parametrize("op", OPS)
def test_same_bits_on_one_and_two_threads(op):
    rng = np.random.default_rng(5)
    cases = (data(rng, (1, 100_000), np.float64)[0], data(rng, (300, 200), np.float32),
             data(rng, (40, 30, 50), np.float64, ties=True).transpose(1, 2, 0))
    for x in cases:
        for window in (3, 500):
            old = axisops.thread_limit(1)
            try:
                one = _forward(op, x, window, 0)
                axisops.thread_limit(2)
                two = _forward(op, x, window, 0)
            finally:
                axisops.thread_limit(old)
            assert one.tobytes() == two.tobytes(), (op, x.shape, window)


def _forward(op, x, window, axis):
    if op == "moving_quantile":
        return mo.moving_quantile(x, window, 0.3, axis, min_count=1)
    return getattr(mo, op)(x, window, axis, min_count=1)


@pytest.mark.parametrize("op", OPS)
def test_errors(op):
    f = getattr(mo, op)
    call = (lambda x, *a, **k: f(x, a[0], 0.5, *a[1:], **k)) if op == "moving_quantile" \
        else f
    x = np.ones((3, 4))
    for window, error in ((0, ValueError), (-2, ValueError), (2.0, TypeError),
                          (True, TypeError), ("3", TypeError), (None, TypeError)):
        with pytest.raises(error, match=f"{op}: window"):
            call(x, window)
    for min_count, error in ((0, ValueError), (4, ValueError), (1.5, TypeError),
                             (False, TypeError)):
        with pytest.raises(error, match=f"{op}: min_count"):
            call(x, 3, min_count=min_count)
    with pytest.raises(AxisError):
        call(x, 2, 2)
    with pytest.raises(AxisError):
        call(np.float64(1.0), 1)
    for axis in (None, (0,), 1.0):
        with pytest.raises(TypeError, match=op):
            call(x, 2, axis)
    for bad in (x.astype(complex), x.astype(object), np.zeros(3, "datetime64[s]"),
                np.array(["a", "b"])):
        with pytest.raises(TypeError, match=f"{op}: unsupported dtype"):
            call(bad, 2)
    with pytest.raises(ValueError):
        getattr(ref, op)(x, 0, *((0.5,) if op == "moving_quantile" else ()))


def test_quantile_q():
    x = np.arange(10.0)
    for q in (0, 1, 0.5, np.float32(0.25), np.float64(0.75), np.int64(1), np.array(0.5)):
        same(mo.moving_quantile(x, 4, q), ref.moving_quantile(x, 4, float(q)), q)
    for q in (-0.1, 1.5, np.nan, np.inf):
        with pytest.raises(ValueError, match="moving_quantile: q"):
            mo.moving_quantile(x, 4, q)
    for q in ("0.5", None, True, 0.5j, [0.5], np.array([0.5, 0.6])):
        with pytest.raises(TypeError, match="moving_quantile: q"):
            mo.moving_quantile(x, 4, q)
    with pytest.raises(ValueError, match=r"grad\.moving_quantile: q"):
        gmo.moving_quantile(x, x, 4, 2.0)


def test_median_is_quantile_half_for_odd_counts():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 60))
    np.testing.assert_array_equal(mo.moving_median(x, 7), mo.moving_quantile(x, 7, 0.5))


# ---------------------------------------------------------------------- gradients


@pytest.mark.parametrize("dtype", (np.float64, np.float32, np.float16, np.int32, np.bool_),
                         ids=lambda d: np.dtype(d).name)
def test_gradients_against_the_twins(dtype):
    rng = np.random.default_rng(7)
    x = data(rng, (3, 30), dtype, ties=True)
    g = rng.standard_normal(x.shape)
    for window in (1, 2, 5, 30, 40):
        for min_count in (None, 1, (window + 1) // 2):
            got = gmo.moving_median(g, x, window, min_count=min_count)
            want = ref.grad_moving_median(g, x, window, min_count=min_count)
            assert got.dtype == want.dtype and got.shape == x.shape
            np.testing.assert_allclose(got, want, rtol=1e-12 if got.dtype == np.float64
                                       else 1e-3, atol=1e-12)
            for q in QS:
                got = gmo.moving_quantile(g, x, window, q, min_count=min_count)
                want = ref.grad_moving_quantile(g, x, window, q, min_count=min_count)
                assert got.dtype == want.dtype and got.shape == x.shape
                np.testing.assert_allclose(got, want, rtol=1e-12 if got.dtype == np.float64
                                           else 1e-3, atol=1e-12)
    y = data(rng, (4, 5, 6), np.float64).transpose(2, 0, 1)[::-1]
    h = rng.standard_normal(y.shape)
    for axis in range(3):
        np.testing.assert_allclose(gmo.moving_quantile(h, y, 3, 0.3, axis, min_count=1),
                                   ref.grad_moving_quantile(h, y, 3, 0.3, axis, min_count=1),
                                   rtol=1e-12, atol=1e-12)
    assert gmo.moving_median(np.zeros((0, 3)), np.zeros((0, 3)), 2).shape == (0, 3)


def test_gradients_by_finite_differences():
    rng = np.random.default_rng(8)
    x = rng.permutation(40).reshape(2, 20) * 0.37 + rng.random((2, 20)) * 0.01  # distinct
    x[1, 4] = np.nan
    w = rng.standard_normal(x.shape)
    for window in (4, 5):
        f = lambda y: np.nan_to_num(mo.moving_median(y, window, min_count=2))  # noqa: E731
        np.testing.assert_allclose(gmo.moving_median(w, x, window, min_count=2),
                                   np.nan_to_num(finite_difference(f, x, w)), atol=1e-6)
        for q in (0.1, 0.5, 0.83):
            f = lambda y: np.nan_to_num(mo.moving_quantile(y, window, q, min_count=2))  # noqa
            np.testing.assert_allclose(gmo.moving_quantile(w, x, window, q, min_count=2),
                                       np.nan_to_num(finite_difference(f, x, w)), atol=1e-6)


def test_gradient_errors():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match=r"grad\.moving_median: g"):
        gmo.moving_median(np.ones(3), x, 2)
    with pytest.raises(ValueError, match=r"grad\.moving_median: window"):
        gmo.moving_median(x, x, 0)
    with pytest.raises(TypeError, match=r"grad\.moving_quantile: unsupported dtype"):
        gmo.moving_quantile(x, x.astype(complex), 2, 0.5)
    with pytest.raises(AxisError):
        gmo.moving_median(x, x, 2, 3)


@pytest.mark.skipif(not EXHAUSTIVE, reason="exhaustive only (AXISOPS_TEST_EXHAUSTIVE=1)")
@pytest.mark.parametrize("op", OPS)
def test_exhaustive_sweep(op):
    rng = np.random.default_rng(9)
    for dtype in (np.float64, np.float32, np.int64, np.uint64, np.int8):
        for n in (1, 7, 63, 64, 65, 129, 1000):
            x = data(rng, (2, n), dtype, ties=bool(n % 2))
            for window in (1, 2, 3, 63, 64, 65, 200, 1001):
                for min_count in (1, max(1, window // 2), window):
                    for q in ((0.1, 0.5, 0.99) if op == "moving_quantile" else (None,)):
                        got, want = both(op, x, window, q=q, min_count=min_count)
                        same(got, want, (op, dtype, n, window, min_count, q))

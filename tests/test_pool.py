"""Pooling (``axisops.pool``) and its gradients against PyTorch's ``max_poolNd`` /
``avg_poolNd`` and their autograd: values, indices, dtypes and shapes in 1, 2 and 3
spatial dimensions, batched or not, channels last, every option, strided views,
NaN, ties, and the errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import axisops
from axisops import grad
from axisops import pool as P

torch = pytest.importorskip("torch")
F = torch.nn.functional

SPATIAL = {1: (13,), 2: (9, 11), 3: (5, 6, 7)}
#: (kernel, stride, dilation, padding, ceil_mode)
OPTIONS = [(2, None, 1, 0, False), (3, 2, 1, 1, True), (3, 1, 2, 1, False), (2, 3, 1, 1, True),
           (1, 1, 1, 0, False)]


def _torch_max(x, d, k, s, dil, p, ceil):
    v, i = getattr(F, f"max_pool{d}d")(torch.from_numpy(x), (k,) * d, stride=s, padding=p,
                                       dilation=dil, ceil_mode=ceil, return_indices=True)
    return v.numpy(), i.numpy()


def _last(a, channels_last):
    return np.moveaxis(a, 1, -1) if channels_last else a


def _first(a, channels_last):
    return np.moveaxis(a, -1, 1) if channels_last else a


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("channels_last", [False, True])
def test_max_pool_is_torchs(d, channels_last):
    rng = np.random.default_rng(d)
    x = rng.integers(-3, 4, (2, 3) + SPATIAL[d]).astype(np.float32)   # ties everywhere
    for k, s, dil, p, ceil in OPTIONS:
        want, want_i = _torch_max(x, d, k, s, dil, p, ceil)
        got, got_i = P.max_pool(_last(x, channels_last), (k,) * d, stride=s, dilation=dil,
                                padding=p, ceil_mode=ceil, channels_last=channels_last,
                                return_indices=True)
        got, got_i = _first(got, channels_last), _first(got_i, channels_last)
        assert got.dtype == np.float32 and got_i.dtype == np.int64
        assert got.shape == want.shape == got_i.shape
        assert np.array_equal(got, want) and np.array_equal(got_i, want_i), (k, s, dil, p, ceil)
        alone = P.max_pool(_last(x, channels_last), (k,) * d, stride=s, dilation=dil, padding=p,
                           ceil_mode=ceil, channels_last=channels_last)
        assert np.array_equal(_first(alone, channels_last), want)


@pytest.mark.parametrize("width", [16, 33])
def test_stride_2_rows_split_in_even_and_odd_elements(width):
    # channels first, stride 2, dilation 1: each row is split into its even and odd
    # elements first (kernels.pool._deinterleave), every kernel width from 1 to 5
    # and padding up to half of it; ties everywhere, values and indices torch's
    rng = np.random.default_rng(width)
    # planes that do not lie in a row: the row kernel (not max_pool_planes)
    x = rng.integers(-3, 4, (2, 3, 6, width + 1)).astype(np.float32)[..., :width]
    assert not axisops.pool._planes_in_a_row(
        axisops.pool.PoolGeometry("max_pool", x.shape, 3, 1, 1, 0, False, False),
        axisops.pool.PoolGeometry("max_pool", x.shape, 3, 1, 1, 0, False, False).strides(x)[1])
    for k, p in [(1, 0), (2, 1), (3, 0), (3, 1), (4, 2), (5, 2)]:
        got, got_i = P.max_pool(x, (3, k), stride=(1, 2), padding=(1, p), return_indices=True)
        want, want_i = _torch_max_2d(x, (3, k), (1, 2), (1, p))
        assert got.dtype == np.float32 and got.shape == want.shape
        assert np.array_equal(got, want) and np.array_equal(got_i, want_i), (k, p)
        assert np.array_equal(P.max_pool(x, (3, k), stride=(1, 2), padding=(1, p)), want)


# each dtype compiles the kernel (~15 s): float32 and float16 (its table) in CI
_SMALL_PLANE_DTYPES = [np.float32, np.float16] + [
    pytest.param(d, marks=pytest.mark.exhaustive) for d in (np.float64, np.int32, np.uint8)]


@pytest.mark.parametrize("dtype", _SMALL_PLANE_DTYPES)
@pytest.mark.parametrize("shape", [(1, 5, 4, 4), (2, 35, 5, 7), (3, 40, 9, 3)])
def test_small_planes_pooled_side_by_side(dtype, shape):
    # C-contiguous small planes: blocks of up to 64 planes transposed into one
    # channels-last image (kernels.pool.max_pool_planes), whole 16 x 16 tiles and
    # the planes and positions past them; values and indices torch's, ties and NaNs
    rng = np.random.default_rng(len(shape) + shape[1])
    x = rng.integers(-3, 4, shape).astype(np.float64)
    if np.dtype(dtype).kind == "f":
        x[rng.random(shape) < 0.05] = np.nan
    x = x.astype(dtype) if dtype != np.uint8 else (x + 3).astype(dtype)
    pg = axisops.pool.PoolGeometry("max_pool", x.shape, 3, 2, 1, 1, False, False)
    assert axisops.pool._planes_in_a_row(pg, pg.strides(x)[1])
    t = torch.from_numpy(x.astype(np.float64))
    for k, s, p in [(3, 2, 1), (2, 1, 0), (3, 1, 1), ((1, 3), (1, 2), (0, 1))]:
        got, got_i = P.max_pool(x, k, stride=s, padding=p, return_indices=True)
        want, want_i = F.max_pool2d(t, k, stride=s, padding=p, return_indices=True)
        assert got.dtype == x.dtype and got.shape == tuple(want.shape)
        np.testing.assert_array_equal(got.astype(np.float64), want.numpy())
        nan = np.isnan(want.numpy())  # torch's index of a window's NaN is its last one
        assert np.array_equal(got_i[~nan], want_i.numpy()[~nan]), (k, s, p)
        assert np.array_equal(P.max_pool(x, k, stride=s, padding=p), got, equal_nan=True)


@pytest.mark.parametrize("dtype", _SMALL_PLANE_DTYPES[:-1])
@pytest.mark.parametrize("shape", [(2, 35, 5, 7), (3, 40, 2, 2)])
def test_small_planes_averaged_side_by_side(dtype, shape):
    # avg_pool of C-contiguous small planes (kernels.pool.avg_pool_small_planes):
    # torch's means, within a float's rounding (float16 sums in float32)
    x = np.random.default_rng(shape[1]).integers(-20, 20, shape).astype(dtype)
    t = torch.from_numpy(x.astype(np.float64))
    for k, s, p, include in [(2, 2, 0, True), (3, 1, 1, True), (3, 1, 1, False), (2, 1, 1, False)]:
        got = P.avg_pool(x, k, stride=s, padding=p, count_include_pad=include)
        want = F.avg_pool2d(t, k, stride=s, padding=p, count_include_pad=include).numpy()
        assert got.dtype == (x.dtype if x.dtype.kind == "f" else np.float64)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.astype(np.float64), want,
                                   rtol=1e-3 if dtype == np.float16 else 1e-6)


def test_small_planes_split_between_threads_match_one_thread(num_threads):
    x = np.random.default_rng(5).random((3, 100, 6, 6)).astype(np.float32)
    num_threads.set(1)
    serial = P.max_pool(x, 3, stride=2, padding=1, return_indices=True)
    num_threads.set(2)  # 300 planes: 5 blocks of 64, split between the threads
    split = P.max_pool(x, 3, stride=2, padding=1, return_indices=True)
    assert split[0].shape == (3, 100, 3, 3) and split[1].dtype == np.int64
    assert np.array_equal(split[0], serial[0]) and np.array_equal(split[1], serial[1])
    num_threads.set(1)
    serial = P.avg_pool(x, 2, count_include_pad=False)
    num_threads.set(2)
    assert np.array_equal(P.avg_pool(x, 2, count_include_pad=False), serial)


def _torch_max_2d(x, k, s, p):
    v, i = F.max_pool2d(torch.from_numpy(x), k, stride=s, padding=p, return_indices=True)
    return v.numpy(), i.numpy()


def test_a_nan_wins_the_max_and_the_first_nan_is_its_index():
    x = np.array([[[1.0, np.nan, 3.0, np.nan, np.nan, 0.0]]])
    v, i = axisops.max_pool(x, (3,), stride=3, return_indices=True)
    assert np.isnan(v).all() and i.tolist() == [[[1, 3]]]
    want, want_i = _torch_max(x, 1, 3, 3, 1, 0, False)
    assert np.isnan(want).all() and want_i[0, 0, 0] == 1   # torch keeps the last NaN: 4 for [1]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16,
                                   np.float64])
def test_max_pool_dtypes_keep_their_dtype(dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2 if dtype == np.bool_ else 50, (2, 3, 7, 8)).astype(dtype)
    got, idx = axisops.max_pool(x, 3, stride=2, padding=1, return_indices=True)
    assert got.dtype == dtype and got.shape == (2, 3, 4, 4)
    want, want_i = _torch_max(x.astype(np.float64), 2, 3, 2, 1, 1, False)
    assert np.array_equal(got.astype(np.float64), want) and np.array_equal(idx, want_i)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("channels_last", [False, True])
def test_avg_pool_is_torchs(d, channels_last):
    rng = np.random.default_rng(10 + d)
    x = rng.standard_normal((2, 3) + SPATIAL[d])
    for (k, s, dil, p, ceil), include in itertools.product(OPTIONS, (True, False)):
        if dil != 1:
            continue
        want = getattr(F, f"avg_pool{d}d")(torch.from_numpy(x), (k,) * d, stride=s, padding=p,
                                           ceil_mode=ceil, count_include_pad=include).numpy()
        got = P.avg_pool(_last(x, channels_last), (k,) * d, stride=s, padding=p, ceil_mode=ceil,
                         channels_last=channels_last, count_include_pad=include)
        got = _first(got, channels_last)
        assert got.dtype == np.float64 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


def test_avg_pool_dtypes():
    x = np.arange(2 * 6 * 6).reshape(2, 6, 6)   # unbatched (C, H, W)
    got = axisops.avg_pool(x, 2)
    assert got.dtype == np.float64 and got.shape == (2, 3, 3)
    assert np.array_equal(got, x.reshape(2, 3, 2, 3, 2).mean(axis=(2, 4)))
    half = axisops.avg_pool(x.astype(np.float16), 2)
    assert half.dtype == np.float16
    assert np.array_equal(half, got.astype(np.float32).astype(np.float16))
    b = axisops.avg_pool(x % 3 == 0, 2)
    assert b.dtype == np.float64 and b.shape == (2, 3, 3)


def test_strided_views_are_read_in_place():
    rng = np.random.default_rng(4)
    base = rng.standard_normal((4, 6, 20, 18))
    for view in (base[::2, ::-1, 1::2, ::3], np.transpose(base, (1, 0, 3, 2)), base[..., ::-1]):
        want, want_i = _torch_max(np.ascontiguousarray(view), 2, 3, 2, 1, 1, True)
        got, got_i = axisops.max_pool(view, 3, stride=2, padding=1, ceil_mode=True,
                                      return_indices=True)
        assert np.array_equal(got, want) and np.array_equal(got_i, want_i)
        mean = axisops.avg_pool(view, 3, stride=2, padding=1)
        np.testing.assert_allclose(mean, axisops.avg_pool(np.ascontiguousarray(view), 3,
                                                          stride=2, padding=1), rtol=0)


def test_onnx_pairs_pad_each_side_apart():
    x = np.arange(10.0).reshape(1, 1, 10)
    got = axisops.max_pool(x, (3,), stride=2, padding=((2, 0),))
    assert got.tolist() == [[[0.0, 2.0, 4.0, 6.0, 8.0]]]
    mean = axisops.avg_pool(x, (3,), stride=2, padding=((2, 0),), count_include_pad=False)
    assert mean.tolist() == [[[0.0, 1.0, 3.0, 5.0, 7.0]]]


def test_same_bits_on_one_and_two_threads():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 16, 64, 64)).astype(np.float32)
    before = axisops.thread_limit()
    try:
        runs = []
        for threads in (1, 2):
            axisops.thread_limit(threads)
            runs.append([axisops.max_pool(x, 3, stride=2, return_indices=True)[1],
                         axisops.avg_pool(x, 3, stride=1, padding=1),
                         axisops.avg_pool(np.moveaxis(x, 1, -1), 2, channels_last=True),
                         grad.avg_pool(np.ones((8, 16, 64, 64), np.float32), x.shape, 3,
                                       stride=1, padding=1)])
    finally:
        axisops.thread_limit(before)
    for one, two in zip(*runs):
        assert one.dtype == two.dtype and np.array_equal(one.view(np.uint8), two.view(np.uint8))


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("channels_last", [False, True])
def test_gradients_are_torchs(d, channels_last):
    rng = np.random.default_rng(20 + d)
    x = rng.standard_normal((2, 3) + SPATIAL[d])
    for k, s, dil, p, ceil in OPTIONS:
        xt = torch.from_numpy(x).requires_grad_()
        out = getattr(F, f"max_pool{d}d")(xt, (k,) * d, stride=s, padding=p, dilation=dil,
                                          ceil_mode=ceil)
        g = rng.standard_normal(out.shape)
        out.backward(torch.from_numpy(g))
        _, idx = P.max_pool(_last(x, channels_last), (k,) * d, stride=s, dilation=dil, padding=p,
                            ceil_mode=ceil, channels_last=channels_last, return_indices=True)
        got = grad.max_pool(_last(g, channels_last), idx, _last(x, channels_last).shape, (k,) * d,
                            stride=s, dilation=dil, padding=p, ceil_mode=ceil,
                            channels_last=channels_last)
        assert got.dtype == np.float64 and got.shape == _last(x, channels_last).shape
        np.testing.assert_allclose(_first(got, channels_last), xt.grad.numpy(), atol=1e-13)
        if dil != 1:
            continue
        for include in (True, False):
            xt = torch.from_numpy(x).requires_grad_()
            out = getattr(F, f"avg_pool{d}d")(xt, (k,) * d, stride=s, padding=p, ceil_mode=ceil,
                                              count_include_pad=include)
            g = rng.standard_normal(out.shape)
            out.backward(torch.from_numpy(g))
            got = grad.avg_pool(_last(g, channels_last), _last(x, channels_last).shape, (k,) * d,
                                stride=s, padding=p, ceil_mode=ceil, channels_last=channels_last,
                                count_include_pad=include)
            np.testing.assert_allclose(_first(got, channels_last), xt.grad.numpy(), atol=1e-13)


def test_max_unpool_is_the_gradient_of_the_values():
    x = np.array([[[1., 5., 2., 0.], [3., 4., 9., 9.]]])
    v, i = axisops.max_pool(x, 2, return_indices=True)
    unpooled = grad.max_pool(v, i, x.shape, 2)
    want = torch.nn.functional.max_unpool2d(torch.from_numpy(v), torch.from_numpy(i), 2,
                                            output_size=x.shape[-2:]).numpy()
    assert np.array_equal(unpooled, want)


def test_errors():
    x = np.zeros((1, 1, 4, 4))
    with pytest.raises(ValueError, match="expected x of shape"):
        axisops.max_pool(x[0, 0], 2)
    with pytest.raises(ValueError, match="larger than the padded input"):
        axisops.avg_pool(x, 5)
    with pytest.raises(ValueError, match="wholly in the padding"):
        axisops.max_pool(x, 2, padding=2)
    with pytest.raises(ValueError, match="stride"):
        axisops.max_pool(x, 2, stride=0)
    with pytest.raises(TypeError, match="complex"):
        axisops.max_pool(x.astype(np.complex64), 2)
    with pytest.raises(TypeError, match="kernel_size"):
        axisops.avg_pool(x, "2")
    v, i = axisops.max_pool(x, 2, return_indices=True)
    with pytest.raises(ValueError, match="pooled shape"):
        grad.max_pool(v[..., :1], i[..., :1], x.shape, 2)
    with pytest.raises(IndexError, match="out of range"):
        grad.max_pool(v, i + 16, x.shape, 2)
    with pytest.raises(TypeError, match="float"):
        grad.avg_pool(np.ones((1, 1, 2, 2), np.int64), x.shape, 2)


def test_a_window_between_the_elements_is_refused():
    # dilation 4 over 3 elements with 2 of padding each side: window 1 reads
    # positions -1 and 3, both padding
    with pytest.raises(ValueError, match="window 1 lies wholly in the padding"):
        axisops.max_pool(np.zeros((1, 1, 3)), (2,), dilation=4, padding=((2, 2),), stride=1)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int64])
def test_negative_integers_pool_as_themselves(dtype):
    # int8 ran as uint8 (a dtype table keyed by the character 'b', int8's, meant for
    # bool): avg_pool of [-5, -3] gave 252
    x = np.array([[[-5, -3, -7, -1, 1, -1]]], dtype)
    got = axisops.max_pool(x, (2,))
    assert got.dtype == dtype and got.tolist() == [[[-3, -1, 1]]]
    mean = axisops.avg_pool(x, (2,))
    assert mean.dtype == np.float64 and mean.tolist() == [[[-4.0, -4.0, 0.0]]]


@pytest.mark.parametrize("channels_last", [False, True])
def test_max_pool_reads_any_layout_and_stride_alike(channels_last):
    # the separable kernel's paths: strides 1, 2 and 3 along the last dimension,
    # channels not contiguous (a channels-last view of an NCHW array), reversed
    # rows, 3-D windows of nine rows, float16 read through its table; ties and
    # NaN everywhere, and large enough to be split between threads
    rng = np.random.default_rng(6)
    x = rng.integers(-2, 3, (2, 8, 6, 20, 22)).astype(np.float32)
    x[rng.random(x.shape) < 0.02] = np.nan
    views = [x, x[..., ::-1], x.astype(np.float16)]
    for view, (k, s, p) in itertools.product(views, [(3, 1, 1), (3, 2, 1), (2, 3, 0)]):
        want, want_i = _torch_max(np.ascontiguousarray(view, dtype=np.float32), 3, k, s, 1,
                                  p, False)
        moved = np.moveaxis(view, 1, -1) if channels_last else view   # a view, not a copy
        for xin in (moved, np.ascontiguousarray(moved)):
            got, got_i = P.max_pool(xin, (k,) * 3, stride=s, padding=p,
                                    channels_last=channels_last, return_indices=True)
            got, got_i = _first(got, channels_last), _first(got_i, channels_last)
            nan = np.isnan(want)
            assert got.dtype == view.dtype
            assert np.array_equal(np.isnan(got), nan)
            assert np.array_equal(got[~nan], want[~nan].astype(view.dtype))
            # torch keeps the last NaN of a window, axisops the first: compared elsewhere
            assert np.array_equal(got_i[~nan], want_i[~nan]), (view.dtype, k, s, p)


@pytest.mark.parametrize("channels_last", [False, True])
def test_avg_pool_of_float16_adds_in_float32_and_rounds_once(channels_last):
    # float16 read in place through its table: the same bits as the float32 mean
    # of the float32 copy rounded to float16, on every path of both kernels (2x2
    # straight into the outputs, four elements per loop and one, channels not
    # contiguous, reversed rows); NaN, infinities, subnormals, -0.0 and the
    # largest float16 (whose sums overflow float16, not float32)
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 1 << 16, (2, 8, 9, 14)).astype(np.uint16)
    x = (rng.standard_normal((2, 8, 9, 14)) * 100).astype(np.float16)
    pick = rng.random(x.shape)
    x[pick < 0.05] = bits.view(np.float16)[pick < 0.05]   # any pattern, NaN payloads too
    x[(pick > 0.5) & (pick < 0.52)] = np.float16(65504)
    x[(pick > 0.6) & (pick < 0.61)] = np.float16(6e-8)
    x[(pick > 0.7) & (pick < 0.71)] = -0.0
    moved = np.moveaxis(x, 1, -1) if channels_last else x   # a view, not a copy
    for xin in (moved, np.ascontiguousarray(moved), np.ascontiguousarray(moved)[..., ::-1, :]):
        for k, s, p, include in [(2, None, 0, True), (3, 2, 1, True), (3, 1, 1, False),
                                 ((1, 3), 1, (0, 1), True)]:
            got = axisops.avg_pool(xin, k, stride=s, padding=p, channels_last=channels_last,
                                   count_include_pad=include)
            want = axisops.avg_pool(xin.astype(np.float32), k, stride=s, padding=p,
                                    channels_last=channels_last, count_include_pad=include)
            assert got.dtype == np.float16
            assert np.array_equal(got.view(np.uint16), want.astype(np.float16).view(np.uint16))


# the integers under the exhaustive switch: one native copy for every dtype, and each
# integer dtype compiles the pooling kernels anew (22 s in CI)
@pytest.mark.parametrize("dtype", [np.float16, np.float32,
                                   pytest.param(np.int16, marks=pytest.mark.exhaustive),
                                   pytest.param(np.uint64, marks=pytest.mark.exhaustive)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_a_foreign_byte_order_pools_as_native(dtype, channels_last):
    # the kernels read a native copy (max_pool of any swapped dtype, and avg_pool
    # of swapped float16, were Numba errors); the result is in x's dtype
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((2, 6, 9, 8)) * 50).astype(dtype)
    swapped = x.astype(x.dtype.newbyteorder())
    for y in (swapped, swapped[:, ::2, ::-1]):
        native = y.astype(x.dtype)
        got, got_i = axisops.max_pool(y, 3, stride=2, padding=1, channels_last=channels_last,
                                      return_indices=True)
        want, want_i = axisops.max_pool(native, 3, stride=2, padding=1,
                                        channels_last=channels_last, return_indices=True)
        assert got.dtype == y.dtype and np.array_equal(got, want)
        assert np.array_equal(got_i, want_i)
        mean = axisops.avg_pool(y, 3, stride=2, padding=1, channels_last=channels_last)
        want = axisops.avg_pool(native, 3, stride=2, padding=1, channels_last=channels_last)
        assert mean.dtype == (y.dtype if x.dtype.kind == "f" else np.float64)
        assert np.array_equal(mean, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_avg_pool_channels_last_2x2_bits(dtype):
    """2x2 stride 2 with channels last: the rows of windows inside the input in one
    loop (kernels.pool._mean4_run), each window summed in window order and scaled
    by 1/4 in the sums' dtype, bit for bit; padded windows at the borders."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 6, 9, 5)).astype(dtype)
    w = x.astype(np.float32)[:, :, :8]
    a, b, c, d = w[:, 0::2, 0::2], w[:, 0::2, 1::2], w[:, 1::2, 0::2], w[:, 1::2, 1::2]
    want = ((((np.float32(0) + a) + b) + c) + d) * np.float32(0.25)
    got = axisops.avg_pool(x, 2, stride=2, channels_last=True)
    assert got.dtype == dtype and got.shape == (2, 3, 4, 5)
    np.testing.assert_array_equal(got, want.astype(dtype))
    padded = axisops.avg_pool(x, 2, stride=2, padding=1, channels_last=True)
    want = F.avg_pool2d(torch.from_numpy(x.astype(np.float64).transpose(0, 3, 1, 2)), 2, stride=2,
                        padding=1).numpy().transpose(0, 2, 3, 1)
    assert padded.dtype == dtype and padded.shape == want.shape
    np.testing.assert_allclose(padded.astype(np.float64), want, rtol=1e-3 if dtype == np.float16 else 1e-6)

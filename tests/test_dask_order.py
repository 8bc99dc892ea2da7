"""The order statistics and their gradients on dask arrays: lazy, the NumPy path's
bits (values, indices, dtypes, signs of zeros) for chunks of any sizes (uneven, of
size one, one chunk), every axis, tuple axes and None for the quantiles; the
sorts need the axis in one chunk (a ValueError naming the rechunk); the NumPy
path's errors while the graph is built, and no kernel run then."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import EXHAUSTIVE
from dask_support import chunk_params, forbid_kernels, scheduler  # noqa: F401

import axisops
from axisops.dask import order as dorder

da = pytest.importorskip("dask.array")

N = 23
#: chunks of the last axis of a (3, N) array
CHUNKINGS = {
    "uneven": (1, 3, 1, 3, 1, 6, 2, 1, 5),
    "size one": 1,
    "one chunk": -1,
    "even": 5,
}
METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest")
DISCRETE = {"inverted_cdf", "closest_observation", "lower", "higher", "nearest"}


def _data(shape=(3, N), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)  # ties
    a = np.round(rng.standard_normal(shape) * 3, 1)  # ties
    flat = a.reshape(-1)
    flat[::7] = -0.0
    flat[3::11] = 0.0
    if a.ndim == 2 and a.shape == (3, N):
        a[0, 4] = np.nan                 # plain: NaN lanes
        a[1, 2] = np.inf
        a[1, 9] = -np.inf
        a[2, :] = np.abs(a[2, :])
        a[2, 5:12] = -0.0                # many signed zeros in the middle of the lane
        a[2, 12:20] = 0.0
    return a.astype(dtype)


def _same(got, want):
    """Bit for bit: dtype, shape, values (NaN where NaN, the signs of zeros)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), (got, want)
    if want.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want))


def _dask(a, chunking, axis=-1):
    chunks = [-1] * a.ndim
    chunks[axis] = CHUNKINGS[chunking] if isinstance(chunking, str) else chunking
    return da.from_array(a, chunks=tuple(chunks))


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = func(*args, **kwargs)
        return out.compute() if isinstance(out, da.Array) else out


# --------------------------------------------------------------------- forward


@pytest.mark.parametrize("chunking", chunk_params(CHUNKINGS))
def test_medians_and_quantiles(chunking):
    a = _data()
    x = _dask(a, chunking)
    for axis in (None, 0, 1, -1, (0, 1), (1, 0)):
        for keepdims in (False, True):
            for op in ("median", "nanmedian"):
                lazy = getattr(axisops, op)(x, axis=axis, keepdims=keepdims)
                assert isinstance(lazy, da.Array)
                _same(_quiet(lambda: lazy.compute()),
                      _quiet(getattr(axisops, op), a, axis=axis, keepdims=keepdims))
    if EXHAUSTIVE:
        methods: tuple = METHODS
    elif chunking == "uneven":
        methods = ("linear", "inverted_cdf", "hazen", "midpoint", "nearest")
    else:
        methods = ("linear", "lower")
    for op in ("quantile", "nanquantile"):
        for method in methods:
            for q in (0.37, np.array([0.0, 0.5, 0.9, 1.0]), np.float32(0.25)):
                for axis in ((None, 1, (0, 1)) if EXHAUSTIVE or isinstance(q, float) else (1,)):
                    lazy = getattr(axisops, op)(x, q, axis=axis, method=method)
                    assert isinstance(lazy, da.Array)
                    want = _quiet(getattr(axisops, op), a, q, axis=axis, method=method)
                    _same(_quiet(lambda: lazy.compute()), want)


def test_the_lanes_chunk_rows_too():
    a = _data((7, 10), seed=4)
    a[2, 3] = np.nan
    a[5, :] = np.nan
    x = da.from_array(a, chunks=(3, 4))
    for axis in (0, 1, None, (1, 0)):
        _same(_quiet(axisops.nanmedian, x, axis=axis), _quiet(axisops.nanmedian, a, axis=axis))
        _same(_quiet(axisops.quantile, x, [0.2, 0.5], axis=axis, keepdims=True),
              _quiet(axisops.quantile, a, [0.2, 0.5], axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16,
                                   np.int64])
def test_dtypes(dtype):
    a = _data((2, 19), dtype, seed=2)
    x = da.from_array(a, chunks=(1, 4))
    for op in ("median", "nanmedian"):
        lazy = getattr(axisops, op)(x, axis=1)
        want = getattr(axisops, op)(a, axis=1)
        assert lazy.dtype == want.dtype
        _same(lazy.compute(), want)
    methods = DISCRETE if dtype == np.bool_ else ("linear", "nearest", "weibull")
    for method in methods:
        for q in (0.3, [0.1, 0.75]):
            lazy = axisops.nanquantile(x, q, axis=1, method=method)
            want = axisops.nanquantile(a, q, axis=1, method=method)
            assert lazy.dtype == want.dtype
            _same(lazy.compute(), want)
    if dtype == np.bool_:
        with pytest.raises(TypeError, match="interpolated"):
            axisops.quantile(x, 0.5, axis=1)


def test_integer_q_and_zero_size():
    a = _data((3, 9), np.int32)
    x = da.from_array(a, chunks=2)
    for q in (0, 1, np.array([0, 1])):
        _same(axisops.quantile(x, q, axis=1).compute(), axisops.quantile(a, q, axis=1))
    f = _data((3, 9))
    xf = da.from_array(f, chunks=2)
    _same(_quiet(axisops.quantile, xf, 1, axis=0), _quiet(axisops.quantile, f, 1, axis=0))
    e = np.empty((3, 0))
    _same(_quiet(axisops.median, da.from_array(e), axis=1), _quiet(axisops.median, e, axis=1))
    _same(_quiet(axisops.quantile, da.from_array(e), 0.5, axis=0),
          _quiet(axisops.quantile, e, 0.5, axis=0))


def test_zero_signs():
    """A selected zero is the element at that place of the stable order: -0.0 or
    +0.0 as it comes in the lane."""
    for lane in ([-0.0, 0.0, 0.0], [0.0, -0.0, -0.0, 1.0], [-0.0, -0.0, 0.0, 0.0, 2.0]):
        a = np.array(lane * 5)
        for chunks in (1, 4):
            x = da.from_array(a, chunks=chunks)
            _same(axisops.median(x).compute(), axisops.median(a))
            for k in range(1, a.size + 1, 4):
                v, i = axisops.kthvalue(x, k)
                w = axisops.kthvalue(a, k)
                _same(v.compute(), w.values)
                _same(i.compute(), w.indices)


@pytest.mark.parametrize("chunking", chunk_params(CHUNKINGS))
def test_top_k_and_kthvalue(chunking):
    a = _data()
    a[1, 15:] = np.nan                       # NaN last both ways, several per lane
    x = _dask(a, chunking)
    for k in (0, 1, 4, 9, N):
        for mode in ("largest", "smallest"):
            for sorted_ in (True, False):
                v, i = axisops.top_k(x, k, mode=mode, sorted=sorted_, index_dtype=np.int32)
                assert isinstance(v, da.Array) and isinstance(i, da.Array)
                w = axisops.top_k(a, k, mode=mode, sorted=sorted_, index_dtype=np.int32)
                _same(v.compute(), w.values)
                _same(i.compute(), w.indices)
    for k in (1, 2, 11, N):
        for keepdims in (False, True):
            v, i = axisops.kthvalue(x, k, keepdims=keepdims)
            w = axisops.kthvalue(a, k, keepdims=keepdims)
            _same(v.compute(), w.values)
            _same(i.compute(), w.indices)


def test_top_k_long_lanes_unsorted():
    """sorted=False: the NumPy path lists the k in lane order (lanes longer than the
    kernel's insertion sort too)."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 9, (2, 130)).astype(np.float32)
    a[0, 7] = np.nan
    x = da.from_array(a, chunks=(1, 17))
    for axis in (1, 0, None):
        for sorted_ in (True, False):
            v, i = axisops.top_k(x, 20 if axis != 0 else 2, axis, sorted=sorted_)
            w = axisops.top_k(a, 20 if axis != 0 else 2, axis, sorted=sorted_)
            _same(v.compute(), w.values)
            _same(i.compute(), w.indices)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_axes(axis):
    a = _data((4, 5, 6), seed=1)
    a[1, 2, 3] = np.nan
    x = da.from_array(a, chunks=(3, 2, 4))
    for k in (1, 3):
        v, i = axisops.top_k(x, k, axis)
        w = axisops.top_k(a, k, axis)
        _same(v.compute(), w.values)
        _same(i.compute(), w.indices)
        v, i = axisops.kthvalue(x, k + 1, axis)
        w = axisops.kthvalue(a, k + 1, axis)
        _same(v.compute(), w.values)
        _same(i.compute(), w.indices)
    _same(_quiet(axisops.nanquantile, x, [0.3, 0.6], axis=axis),
          _quiet(axisops.nanquantile, a, [0.3, 0.6], axis=axis))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_,
                                   "datetime64[s]"])
def test_selections_dtypes(dtype):
    if dtype == "datetime64[s]":
        a = _data((2, 15), np.int64, seed=6).astype(dtype)
        a[0, 3] = np.datetime64("NaT")
    else:
        a = _data((2, 15), dtype, seed=6)
    x = da.from_array(a, chunks=(2, 4))
    for k in (1, 6, 15):
        v, i = axisops.kthvalue(x, k)
        w = axisops.kthvalue(a, k)
        assert v.dtype == w.values.dtype
        np.testing.assert_array_equal(v.compute(), w.values)
        _same(i.compute(), w.indices)
        v, i = axisops.top_k(x, min(k, 7), mode="smallest")
        w = axisops.top_k(a, min(k, 7), mode="smallest")
        np.testing.assert_array_equal(v.compute(), w.values)
        _same(i.compute(), w.indices)


@pytest.mark.parametrize("op", ["sort", "argsort", "partition", "argpartition", "rank"])
def test_one_chunk_operators(op):
    a = _data((4, 9), seed=3)
    x = da.from_array(a, chunks=(1, -1))
    args = (3,) if "partition" in op else ()
    for axis in (1, -1):
        lazy = getattr(axisops, op)(x, *args, axis)
        assert isinstance(lazy, da.Array) and lazy.chunks == x.chunks
        _same(lazy.compute(), getattr(axisops, op)(a, *args, axis))
    one = da.from_array(a, chunks=-1)
    _same(getattr(axisops, op)(one, *args, None).compute(), getattr(axisops, op)(a, *args, None))
    with pytest.raises(ValueError, match=r"x\.rechunk\(\{0: -1\}\)"):
        getattr(axisops, op)(x, *args, 0)
    with pytest.raises(ValueError, match=r"x\.rechunk\(-1\)"):
        getattr(axisops, op)(x, *args, None)


# ----------------------------------------------------------------------- gradients


def test_gradients_of_selections():
    rng = np.random.default_rng(7)
    a = _data()
    x = _dask(a, "uneven")
    for op in ("median", "nanmedian"):
        for axis in (1, 0, None, (0, 1)):
            want_shape = np.shape(_quiet(getattr(axisops, op), a, axis=axis, keepdims=True))
            g = rng.standard_normal(want_shape)
            got = getattr(axisops.grad, op)(da.from_array(g), x, axis=axis, keepdims=True)
            assert isinstance(got, da.Array)
            _same(got.compute(), getattr(axisops.grad, op)(g, a, axis=axis, keepdims=True))
    for op in ("quantile", "nanquantile"):
        for method in ("linear", "nearest", "midpoint", "weibull"):
            for q in (0.4, np.array([0.05, 0.5, 1.0])):
                for axis in (1, None):
                    want_shape = np.shape(_quiet(getattr(axisops, op), a, q, axis=axis,
                                                 method=method))
                    g = rng.standard_normal(want_shape).astype(np.float32)
                    got = getattr(axisops.grad, op)(da.from_array(g), x, q, axis=axis,
                                                    method=method)
                    _same(got.compute(), getattr(axisops.grad, op)(g, a, q, axis=axis,
                                                                    method=method))


def test_gradients_of_sorts_and_indices():
    rng = np.random.default_rng(8)
    a = _data()
    x1 = da.from_array(a, chunks=(1, -1))
    g = rng.standard_normal(a.shape)
    _same(axisops.grad.sort(da.from_array(g, chunks=2), x1, descending=True).compute(),
          axisops.grad.sort(g, a, descending=True))
    _same(axisops.grad.partition(da.from_array(g), x1, [2, 5]).compute(),
          axisops.grad.partition(g, a, [2, 5]))
    gf = rng.standard_normal(a.size)
    xa = da.from_array(a, chunks=-1)
    _same(axisops.grad.sort(da.from_array(gf), xa, None).compute(),
          axisops.grad.sort(gf, a, None))
    with pytest.raises(ValueError, match="rechunk"):
        axisops.grad.sort(da.from_array(g), _dask(a, "uneven"))
    x = _dask(a, "uneven")
    for axis in (1, 0, None):
        v, i = axisops.top_k(x, 3, axis)
        gv = rng.standard_normal(v.shape)
        _same(axisops.grad.top_k(da.from_array(gv, chunks=1), i, a.shape, axis).compute(),
              axisops.grad.top_k(gv, i.compute(), a.shape, axis))
        v, i = axisops.kthvalue(x, 2, axis)
        gv = rng.standard_normal(v.shape)
        _same(axisops.grad.kthvalue(da.from_array(gv), i, a.shape, axis).compute(),
              axisops.grad.kthvalue(gv, i.compute(), a.shape, axis))
    idx = da.from_array(np.array([[0, 0, 5]] * 3))   # repeated indices add up
    gv = rng.standard_normal((3, 3))
    _same(axisops.grad.top_k(da.from_array(gv), idx, a.shape).compute(),
          axisops.grad.top_k(gv, idx.compute(), a.shape))
    bad = da.from_array(np.array([[0, 99, 5]] * 3))
    with pytest.raises(IndexError, match="out of range"):
        axisops.grad.top_k(da.from_array(gv), bad, a.shape).compute()


# ------------------------------------------------------------------ moving windows


@pytest.mark.parametrize("chunking", chunk_params(CHUNKINGS))
def test_moving(chunking):
    a = _data()
    a[0, 10:14] = np.nan
    x = _dask(a, chunking)
    g = np.random.default_rng(9).standard_normal(a.shape)
    gd = _dask(g, chunking)
    for window, min_count in ((1, None), (3, 1), (7, 2), (30, 1)):
        for op, extra in (("moving_median", ()), ("moving_quantile", (0.3,)),
                          ("moving_rank", ())):
            lazy = getattr(axisops, op)(x, window, *extra, min_count=min_count)
            assert isinstance(lazy, da.Array) and lazy.chunks == x.chunks
            _same(lazy.compute(), getattr(axisops, op)(a, window, *extra, min_count=min_count))
            if op != "moving_rank":
                got = getattr(axisops.grad, op)(gd, x, window, *extra, min_count=min_count)
                assert got.chunks == x.chunks
                _same(got.compute(), getattr(axisops.grad, op)(g, a, window, *extra,
                                                               min_count=min_count))


# ------------------------------------------------------------------------- the graph


def test_no_kernel_while_building(monkeypatch):
    a = _data()
    x = _dask(a, "uneven")
    x1 = da.from_array(a, chunks=(1, -1))
    forbid_kernels(monkeypatch)
    g = da.ones((3,), chunks=1)
    outs = [axisops.median(x, axis=1), axisops.nanquantile(x, [0.2, 0.5], axis=(0, 1)),
            axisops.quantile(x, 0.3, axis=1, method="nearest"), *axisops.kthvalue(x, 3),
            *axisops.top_k(x, 3), axisops.sort(x1), axisops.rank(x1),
            axisops.argpartition(x1, 2), axisops.moving_median(x, 4),
            axisops.moving_rank(x, 4), axisops.grad.median(g, x, axis=1),
            axisops.grad.quantile(g, x, 0.4, axis=1),
            axisops.grad.moving_quantile(x, x, 3, 0.5),
            axisops.grad.sort(da.ones_like(x1), x1)]
    assert all(isinstance(o, da.Array) for o in outs)
    with pytest.raises(AssertionError, match="kernel"):
        outs[7].compute()   # sort's blocks run the NumPy path's kernels
    # the selection by counting runs NumPy only (no kernel even when computed)
    monkeypatch.undo()
    _same(_quiet(lambda: outs[0].compute()), _quiet(axisops.median, a, axis=1))


ERRORS = [
    ("median", (), {"axis": 2}),
    ("median", (), {"axis": (1, 1)}),
    ("quantile", (1.5,), {"axis": 1}),
    ("quantile", ([[0.5]],), {}),
    ("quantile", (0.5,), {"method": "nope"}),
    ("top_k", (99,), {}),
    ("top_k", (2,), {"mode": "middle"}),
    ("top_k", (2.0,), {}),
    ("top_k", (2,), {"axis": (0, 1)}),
    ("kthvalue", (0,), {}),
    ("kthvalue", (2,), {"index_dtype": np.float32}),
    ("rank", (), {"method": "nope"}),
    ("partition", (99,), {}),
    ("sort", (), {"axis": 5}),
]


@pytest.mark.parametrize("op, args, kwargs", ERRORS)
def test_errors_while_building(op, args, kwargs, monkeypatch):
    a = _data()
    x = da.from_array(a, chunks=(3, -1))
    c = da.from_array(np.ones((2, 3), complex))
    forbid_kernels(monkeypatch)
    with pytest.raises(Exception) as want:
        getattr(axisops, op)(a, *args, **kwargs)
    with pytest.raises(want.type, match=str(want.value).replace("(", r"\(")
                       .replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        getattr(axisops, op)(x, *args, **kwargs)
    with pytest.raises(TypeError, match="complex"):
        getattr(axisops, op)(c, *(args if op not in ("top_k", "kthvalue", "partition")
                                  else (1,)))


def test_digits_and_keys():
    assert dorder._digits(64, 16) == [(48, 16), (32, 16), (16, 16), (0, 16)]
    assert dorder._digits(8, 16) == [(0, 8)]
    assert dorder._digits(5, 2) == [(3, 2), (1, 2), (0, 1)]
    v = np.array([-np.inf, -1.5, -0.0, 0.0, 2.0, np.inf, np.nan], np.float32)
    k = dorder.order_keys(v)
    assert k[2] == k[3] and np.all(np.diff(k.astype(np.int64)[[0, 1, 3, 4, 5, 6]]) > 0)
    back = dorder.key_bits(k[:-1], v.dtype)
    _same(back, np.array([-np.inf, -1.5, 0.0, 0.0, 2.0, np.inf], np.float32))
    i = np.array([-128, -1, 0, 5, 127], np.int8)
    assert np.all(np.diff(dorder.order_keys(i).astype(np.int64)) > 0)
    _same(dorder.key_bits(dorder.order_keys(i), i.dtype), i)


def test_each_pass_reads_x_anew():
    """The passes of a selection do not share x's keys: each pass reads x again
    (a copy of its graph that waits for the previous pass), so x's chunks are not
    held from the first pass to the last; a persisted x's copies are its chunks."""
    a = _data((6, 10), seed=6)
    x = da.from_array(a, chunks=(6, 5))
    y = x + 1
    r = axisops.median(y, axis=1)
    passes = [layer for layer in r.dask.layers if layer.startswith("axisops-select-h")]
    # float64: 15-bit digits here (64 bits in 5 passes), one of positions (lanes of 10)
    assert len(passes) == 6, passes
    adds = [layer for layer in r.dask.layers if layer.startswith("add-")]
    assert len(adds) == 7, adds                   # one per pass, and the fetch's
    _same(r.compute(), axisops.median(a + 1, axis=1))
    p = y.persist()
    _same(axisops.median(p, axis=1).compute(), axisops.median(a + 1, axis=1))

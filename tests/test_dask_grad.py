"""Gradients of reductions and scans on dask arrays: lazy, any chunking, the NumPy
path's values (bit for bit for max, min, cummax, cummin; to rounding for the
products and logcumsumexp), its dtypes and its errors."""
from __future__ import annotations

import numpy as np
import pytest
from dask_support import chunk_params, forbid_kernels, scheduler  # noqa: F401

import axisops

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

CHUNKINGS = {
    "even": (3, 4, 5),
    "uneven": ((1, 4, 2), (2, 2, 5), (5,)),
    "size one": (1, 1, 1),
    "one chunk": (-1, -1, -1),
}
SHAPE = (7, 9, 5)


def _sized(a, chunks, rows, cols, depth):
    """*a*, or for the size-one chunking (a task per element) the sub-array of the
    listed rows, columns and depths, which keep its special values: 36 to 80 chunks
    instead of 315, still several levels of trees and carry chains."""
    return a[np.ix_(rows, cols, depth)] if chunks == "size one" else a


def _data(dtype=np.float64, nan=True, chunks=None):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, SHAPE).astype(dtype)  # many ties, across chunk borders
    if nan and np.dtype(dtype).kind == "f":
        a[2, 3, 1] = a[3, 4, 1] = a[5, 0, 4] = np.nan  # NaNs on both sides of borders
    return _sized(a, chunks, [1, 2, 3, 5], [0, 2, 3, 4], [0, 1, 4])


def _factors(dtype=np.float64, chunks=None):
    """Values near 1 (long products stay in range) with one zero in some slices and
    several in others, on both sides of chunk borders."""
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 1.5, SHAPE) * rng.choice([-1, 1], SHAPE)
    a[1, 3, 2] = 0                                  # one zero
    a[4, 1, 0] = a[4, 5, 0] = a[2, 5, 0] = 0        # several
    a[:, 8, 4] = 0                                  # a whole lane
    return _sized(a.astype(dtype), chunks, [0, 1, 2, 4], [1, 3, 5, 8], [0, 2, 4])


def _same(got, want, exact):
    _all_same([(got, want)], exact)


def _all_same(pairs, exact):
    """Each lazy result (computed together: they share their inputs' tasks) equals
    the NumPy path's in dtype, shape and values."""
    assert all(isinstance(got, da.Array) for got, _ in pairs)
    results = dask.compute(*(got for got, _ in pairs))
    for got, (_, want) in zip(results, pairs):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        if exact:
            assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, equal_nan=True)


def _g(shape, dtype=np.float64, seed=2):
    return (np.random.default_rng(seed).standard_normal(shape) * 4).astype(dtype)


def _scan_g(a, axis, chunks, dtype=np.float64):
    """A gradient for a scan's result, chunked as its forward's input (flat for None)."""
    g = _g((a.size,) if axis is None else a.shape, dtype)
    return g, da.from_array(g, chunks=3 if axis is None else chunks)


# ------------------------------------------------------------------ max, min, prod


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_min_bit_for_bit(chunks, axis, keepdims):
    dtypes = [(np.float64, np.float64)]
    if chunks == "uneven":
        dtypes += [(np.float64, np.float32), (np.int16, np.int32), (np.float16, np.float16),
                   (np.bool_, np.int64)]
    pairs = []
    for x_dtype, g_dtype in dtypes:
        a = _data(x_dtype, chunks=chunks)
        x = da.from_array(a, chunks=CHUNKINGS[chunks])
        for op in ("max", "min"):
            shape = np.shape(getattr(axisops, op)(a, axis=axis, keepdims=keepdims))
            g = _g(shape, g_dtype)
            got = getattr(axisops.grad, op)(da.from_array(g, chunks=2), x, axis, keepdims)
            pairs.append((got, getattr(axisops.grad, op)(g, a, axis, keepdims)))
    _all_same(pairs, exact=True)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()])
def test_prod_with_zeros(chunks, axis):
    a = _factors(chunks=chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    pairs = []
    for keepdims in (False, True):
        shape = np.shape(axisops.prod(a, axis=axis, keepdims=keepdims))
        g = _g(shape)
        got = axisops.grad.prod(da.from_array(g, chunks=3), x, axis, keepdims)
        pairs.append((got, axisops.grad.prod(g, a, axis, keepdims)))
    _all_same(pairs, exact=False)


@pytest.mark.parametrize("x_dtype, g_dtype", [(np.int16, np.int8), (np.float16, np.float64),
                                              (np.float32, np.float16), (np.bool_, np.float32),
                                              (np.complex128, np.float64),
                                              (np.float32, np.complex64)])
def test_prod_dtypes(x_dtype, g_dtype):
    a = _factors() * 3
    a = (a + 1j * a[::-1]) if np.dtype(x_dtype).kind == "c" else a
    a = a.astype(x_dtype)
    x = da.from_array(a, chunks=(3, 4, 2))
    g = _g(SHAPE[1:]) if np.dtype(g_dtype).kind != "c" else _g(SHAPE[1:]) * (1 - 2j)
    g = g.astype(g_dtype)
    want = axisops.grad.prod(g, a, 0)
    got = axisops.grad.prod(da.from_array(g, chunks=2), x, 0)
    if want.dtype.itemsize <= 4 or want.dtype == np.complex64:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.compute(), want, rtol=1e-5)
    else:
        _same(got, want, exact=False)


def test_products_stay_finite_where_the_gradient_is():
    a = np.array([1e30, 1e30, 1e-30, 1e-30], np.float32)  # partial products overflow
    got = axisops.grad.prod(da.ones((), dtype=np.float32), da.from_array(a, chunks=1))
    _same(got, axisops.grad.prod(np.float32(1), a), exact=False)
    assert np.isfinite(got.compute()).all()
    b = np.array([1e-30, 1e-30, 1e30, 1e30, 0.5], np.float32)
    for exclusive in (False, True):
        for reverse in (False, True):
            g = np.ones(5, np.float32)
            got = axisops.grad.cumprod(da.from_array(g, chunks=1), da.from_array(b, chunks=1),
                                       exclusive=exclusive, reverse=reverse)
            want = axisops.grad.cumprod(g, b, exclusive=exclusive, reverse=reverse)
            np.testing.assert_allclose(got.compute(), want, rtol=1e-6)


# ------------------------------------------------------------------ cumprod, logcumsumexp


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_cumprod_with_zeros(chunks, axis):
    a = _factors(chunks=chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    g, gd = _scan_g(a, axis, CHUNKINGS[chunks])
    pairs = []
    for exclusive in (False, True):
        for reverse in (False, True):
            got = axisops.grad.cumprod(gd, x, axis, exclusive=exclusive, reverse=reverse)
            want = axisops.grad.cumprod(g, a, axis, exclusive=exclusive, reverse=reverse)
            pairs.append((got, want))
    _all_same(pairs, exact=False)


def test_cumprod_dtypes_and_complex():
    a = _factors()
    z = a + 1j * a[::-1]
    x = da.from_array(z, chunks=(3, 4, 2))
    for g in (_g(SHAPE) * (1 + 0.5j), _g(SHAPE)):
        for exclusive, reverse in ((False, False), (True, True)):
            got = axisops.grad.cumprod(da.from_array(g, chunks=(2, 3, 5)), x, 1,
                                       exclusive=exclusive, reverse=reverse)
            _same(got, axisops.grad.cumprod(g, z, 1, exclusive=exclusive, reverse=reverse),
                  exact=False)
    ints = (_data(np.int8, nan=False) - 1)
    g = _g(SHAPE, np.int32)
    _same(axisops.grad.cumprod(da.from_array(g, chunks=2), ints, 0),  # NumPy x, dask g
          axisops.grad.cumprod(g, ints, 0), exact=False)
    half = (a * 2).astype(np.float16)
    g = _g(SHAPE, np.float16)
    got = axisops.grad.cumprod(da.from_array(g, chunks=2), da.from_array(half, chunks=3), 2)
    want = axisops.grad.cumprod(g, half, 2)
    assert got.dtype == want.dtype == np.float16
    np.testing.assert_allclose(got.compute().astype(float), want.astype(float), rtol=2e-3)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_logcumsumexp(chunks, axis):
    a = np.random.default_rng(3).standard_normal(SHAPE) * 3
    a[2, 3, 1] = a[0, :4, 2] = -np.inf  # a -inf prefix passes g through
    a[5, 2, 3] = np.inf
    a[6, 7, 0] = np.nan
    keep = [0, 2, 5, 6], [0, 1, 2, 3, 7], [0, 1, 2, 3]  # the special values, under size one
    a = _sized(a, chunks, *keep)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    g, gd = _scan_g(a, axis, CHUNKINGS[chunks])
    ints = _sized(_data(np.int8, nan=False), chunks, *keep)
    _all_same([(axisops.grad.logcumsumexp(gd, x, axis), axisops.grad.logcumsumexp(g, a, axis)),
               (axisops.grad.logcumsumexp(gd.astype(np.float32), da.from_array(ints, chunks=2),
                                          axis),
                axisops.grad.logcumsumexp(g.astype(np.float32), ints, axis))], exact=False)
    half = a.astype(np.float16)
    got = axisops.grad.logcumsumexp(gd, half, axis)
    want = axisops.grad.logcumsumexp(g, half, axis)
    assert got.dtype == want.dtype == np.float16
    np.testing.assert_allclose(got.compute().astype(float), want.astype(float), rtol=2e-3,
                               atol=2e-3)


# ------------------------------------------------------------------ cummax, cummin


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cummax_cummin_bit_for_bit(chunks, axis):
    a = _data(chunks=chunks)  # ties and NaN across chunk borders: long runs cross several chunks
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    dtypes = [np.float64] + ([np.float16, np.int32, np.bool_] if chunks == "uneven" else [])
    pairs = []
    for op in ("cummax", "cummin"):
        indices = getattr(axisops, op)(x, axis=axis).indices  # lazy, chunked as x
        want_indices = getattr(axisops, op)(a, axis=axis).indices
        for dtype in dtypes:
            g, gd = _scan_g(a, axis, CHUNKINGS[chunks], dtype)
            got = getattr(axisops.grad, op)(gd, indices, a.shape, axis)
            pairs.append((got, getattr(axisops.grad, op)(g, want_indices, a.shape, axis)))
    _all_same(pairs, exact=True)


def test_cummax_runs_spanning_many_chunks():
    a = np.zeros((3, 40))
    a[0, 0] = 5            # one run over the whole lane
    a[1, ::7] = np.arange(6)  # runs of 7 across chunks of 3
    a[2] = np.arange(40)   # runs of 1
    g = _g(a.shape)
    indices = axisops.cummax(a, axis=1).indices
    for chunks in (1, 3, (3, (2, 30, 8))):
        got = axisops.grad.cummax(da.from_array(g, chunks=chunks), indices, a.shape, 1)
        _same(got, axisops.grad.cummax(g, indices, a.shape, 1), exact=True)
    flat = axisops.cummax(a).indices  # axis=None: the flattened lanes, one run
    got = axisops.grad.cummax(da.from_array(g.reshape(-1), chunks=7), flat, (3, 40))
    _same(got, axisops.grad.cummax(g.reshape(-1), flat, (3, 40)), exact=True)


def test_cummax_indices_checked_when_computed():
    g = da.ones(6, chunks=2)
    with pytest.raises(IndexError, match="out of range"):
        axisops.grad.cummax(g, np.array([0, 1, 2, 3, 4, 6]), (6,)).compute()
    with pytest.raises(ValueError, match="not the forward's"):  # a chunk border to cross
        axisops.grad.cummin(g, np.array([0, 0, 0, 5, 0, 0]), (6,)).compute()
    scattered = np.array([3, 0, 3, 5, 1, 1])  # one chunk: any indices, as NumPy
    _same(axisops.grad.cummax(g.rechunk(-1), scattered, (6,)),
          axisops.grad.cummax(np.ones(6), scattered, (6,)), exact=True)


# ------------------------------------------------------------------ shapes, errors, laziness


def test_zero_d_and_empty():
    for op in ("prod", "max", "min"):
        _same(getattr(axisops.grad, op)(da.from_array(np.array(2.)), np.array(3.)),
              getattr(axisops.grad, op)(np.array(2.), np.array(3.)), exact=True)
    for exclusive in (False, True):
        _same(axisops.grad.cumprod(da.from_array(np.array(2.)), np.array(3.),
                                   exclusive=exclusive),
              axisops.grad.cumprod(np.array(2.), np.array(3.), exclusive=exclusive), exact=True)
    _same(axisops.grad.logcumsumexp(da.from_array(np.array(2.)), np.array(3.)),
          axisops.grad.logcumsumexp(np.array(2.), np.array(3.)), exact=True)
    _same(axisops.grad.cummin(da.from_array(np.array(2.)), np.array(0), ()),
          axisops.grad.cummin(np.array(2.), np.array(0), ()), exact=True)
    e = np.zeros((3, 0))
    _same(axisops.grad.prod(da.ones(3, chunks=2), e, axis=1),
          axisops.grad.prod(np.ones(3), e, axis=1), exact=True)
    _same(axisops.grad.max(da.ones(0, chunks=2, dtype=np.float32), e, axis=0),
          axisops.grad.max(np.ones(0, np.float32), e, axis=0), exact=True)
    _same(axisops.grad.cumprod(da.from_array(e), e, 1), axisops.grad.cumprod(e, e, 1), True)
    _same(axisops.grad.logcumsumexp(da.from_array(e), e, 0),
          axisops.grad.logcumsumexp(e, e, 0), exact=True)
    _same(axisops.grad.cummax(da.from_array(e), np.zeros((3, 0), int), (3, 0), 1),
          axisops.grad.cummax(e, np.zeros((3, 0), int), (3, 0), 1), exact=True)
    chunks_with_zero = da.from_array(_factors(), chunks=((3, 0, 4), 9, 5))  # a chunk of length 0
    a = _factors()
    _same(axisops.grad.cumprod(chunks_with_zero, a, 0), axisops.grad.cumprod(a, a, 0), False)
    _same(axisops.grad.prod(da.ones(45, chunks=45).reshape(9, 5), chunks_with_zero, 0),
          axisops.grad.prod(np.ones((9, 5)), a, 0), exact=False)


def _errors(lazy):
    """(exception type, call) pairs; *lazy* makes the arrays dask arrays or leaves them."""
    a = _data()
    x = lazy(a)
    g, flat = lazy(np.ones(SHAPE[0])), lazy(np.ones(a.size))
    grad = axisops.grad
    return [
        (ValueError, lambda: grad.prod(g, x, axis=0)),                    # g's shape
        (np.exceptions.AxisError, lambda: grad.max(g, x, axis=3)),
        (ValueError, lambda: grad.min(g, x, axis=(1, 1))),
        (TypeError, lambda: grad.max(g, lazy(a + 1j), axis=(1, 2))),
        (ValueError, lambda: grad.max(lazy(np.ones((7, 5))), lazy(a[:, :0]), axis=1)),  # empty
        (TypeError, lambda: grad.prod(g, lazy(a.astype("M8[s]")), axis=(1, 2))),
        (TypeError, lambda: grad.prod(g, lazy(a.astype(np.clongdouble)), axis=(1, 2))),
        (ValueError, lambda: grad.cumprod(flat, x, axis=0)),              # flat g, axis 0
        (np.exceptions.AxisError, lambda: grad.cumprod(lazy(a), x, axis=3)),
        (TypeError, lambda: grad.cumprod(lazy(a), x, axis=(0,))),
        (TypeError, lambda: grad.logcumsumexp(flat, lazy(a + 1j))),
        (ValueError, lambda: grad.logcumsumexp(lazy(np.ones(3)), x)),
        (TypeError, lambda: grad.cummax(flat, flat, SHAPE)),              # float indices
        (ValueError, lambda: grad.cummin(flat, lazy(np.zeros(3, int)), SHAPE)),
        (np.exceptions.AxisError, lambda: grad.cummax(x, lazy(np.zeros(SHAPE, int)), SHAPE, -4)),
    ]


def test_errors_are_the_numpy_paths_while_building():
    lazy = _errors(lambda a: da.from_array(a, chunks=3))
    eager = _errors(lambda a: a)
    for (kind, build), (_, numpy_call) in zip(lazy, eager):
        with pytest.raises(kind):
            numpy_call()
        with pytest.raises(kind):
            assert isinstance(build(), da.Array)  # not reached: raised while building


def test_building_a_graph_runs_no_kernel(monkeypatch):
    a = _factors()
    x = da.from_array(a, chunks=3)
    indices = axisops.cummax(x, axis=1).indices

    forbid_kernels(monkeypatch)
    g2 = da.ones(SHAPE[1:], chunks=2)
    g3 = da.ones(SHAPE, chunks=2)
    graphs = [axisops.grad.max(g2, x, axis=0), axisops.grad.min(da.ones(()), x),
              axisops.grad.prod(g2, x, axis=0), axisops.grad.prod(da.ones(()), a),
              axisops.grad.cumprod(g3, x, 1, exclusive=True, reverse=True),
              axisops.grad.logcumsumexp(g3, x, 2), axisops.grad.cummax(g3, indices, SHAPE, 1),
              axisops.grad.cummin(da.ones(a.size, chunks=7), np.zeros(a.size, int), SHAPE)]
    assert all(isinstance(graph, da.Array) for graph in graphs)

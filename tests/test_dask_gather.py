"""take, take_along_axis, gather_nd and scatter on dask arrays: lazy, chunked
indices routed to the chunks of x they hit, the NumPy path's values bit for bit,
on the threaded scheduler and on a cluster of worker processes."""
from __future__ import annotations

import numpy as np
import pytest
from dask_support import chunk_params, forbid_kernels, scheduler  # noqa: F401

import axisops

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

X_CHUNKS = {
    "even": (3, 4, 5),
    "uneven": ((1, 4, 2), (2, 2, 5), (5,)),
    "size one": (1, 1, 1),
    "one chunk": (-1, -1, -1),
}
SHAPE = (7, 9, 5)
#: x's shape under the size-one chunking: a task per element (and per pair of chunks
#: for a gather), so a smaller x, whose 60 chunks still make every tree and route
#: several levels deep
SIZE_ONE_SHAPE = (4, 5, 3)


def _shape(chunks: str) -> tuple:
    return SIZE_ONE_SHAPE if chunks == "size one" else SHAPE


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")


def _data(dtype=np.float64, shape=SHAPE):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(SHAPE)[:shape[0], :shape[1], :shape[2]] * 10
    if np.dtype(dtype).kind == "c":
        return (a + 1j * a[::-1]).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[2, 3, 1] = np.nan
    return a.astype(dtype)


@pytest.mark.parametrize("chunks", chunk_params(X_CHUNKS))
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip", "fill"])
def test_take_along_axis_matches_the_numpy_path(chunks, axis, mode):
    rng = np.random.default_rng(axis)
    x_shape = _shape(chunks)
    n = x_shape[axis]
    shape = list(x_shape)
    shape[axis] = 11
    low, high = (-n, n) if mode == "raise" else (-2 * n, 2 * n)
    idx = rng.integers(low, high, shape)
    dtypes = (np.float64, np.int16, np.float16, np.bool_) if chunks == "uneven" else (np.float32,)
    for dtype in dtypes:
        a = _data(dtype, x_shape)
        x = da.from_array(a, chunks=X_CHUNKS[chunks])
        # size-one index chunks (a task per index) route the same whatever the dtype
        for index_chunks in ((4, 3, 2), 1) if chunks == "uneven" and dtype == dtypes[0] \
                else ((4, 3, 2),):
            got = axisops.take_along_axis(x, da.from_array(idx, chunks=index_chunks), axis,
                                          mode=mode, fill_value=1)
            assert isinstance(got, da.Array)
            _same(got.compute(), axisops.take_along_axis(a, idx, axis, mode=mode, fill_value=1))


@pytest.mark.parametrize("chunks", chunk_params(X_CHUNKS))
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip", "fill"])
def test_take_with_numpy_and_dask_indices(chunks, axis, mode):
    a = _data(shape=_shape(chunks))
    x = da.from_array(a, chunks=X_CHUNKS[chunks])
    n = a.size if axis is None else a.shape[axis]
    low, high = (-n, n) if mode == "raise" else (-2 * n, 2 * n)
    rng = np.random.default_rng(1)
    for idx in (rng.integers(low, high, 13), rng.integers(low, high, (3, 4)),
                np.array(n - 1), np.zeros(0, np.int64), rng.integers(0, n, 25).astype(np.uint16)):
        want = axisops.take(a, idx, axis, mode=mode, fill_value=-3.5)
        _same(axisops.take(x, idx, axis, mode=mode, fill_value=-3.5).compute(), want)
        lazy = da.from_array(idx, chunks=2 if idx.ndim == 1 else -1)
        _same(axisops.take(x, lazy, axis, mode=mode, fill_value=-3.5).compute(), want)


def test_take_of_numpy_indices_touches_only_the_chunks_hit():
    a = np.arange(80.0).reshape(20, 4)
    x = da.from_array(a, chunks=(5, 4))  # four chunks along axis 0
    got = axisops.take(x, [1, 3, 2], axis=0)  # all in the first chunk
    assert got.chunks == ((3,), (4,))
    deps = {key[0] for key in got.__dask_graph__() if isinstance(key, tuple)}
    picks = [k for k in got.__dask_graph__() if isinstance(k, tuple) and k[0].startswith("pick-")]
    assert len(picks) == 1 and len(deps) >= 2
    _same(got.compute(), a[[1, 3, 2]])


@pytest.mark.parametrize("chunks", chunk_params(X_CHUNKS))
@pytest.mark.parametrize("batch_dims,q", [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (2, 1)])
def test_gather_nd_matches_the_numpy_path(chunks, batch_dims, q):
    rng = np.random.default_rng(q)
    x_shape = _shape(chunks)
    for dtype in (np.float64, np.int8, np.complex128):
        a = _data(dtype, x_shape)
        x = da.from_array(a, chunks=X_CHUNKS[chunks])
        dims = x_shape[batch_dims:batch_dims + q]
        idx = np.stack([rng.integers(-d, d, x_shape[:batch_dims] + (6,)) for d in dims], -1)
        want = axisops.gather_nd(a, idx, batch_dims=batch_dims)
        _same(axisops.gather_nd(x, idx, batch_dims=batch_dims).compute(), want)
        lazy = da.from_array(idx, chunks=(2,) * (idx.ndim - 1) + (1,))
        got = axisops.gather_nd(x, lazy, batch_dims=batch_dims)
        assert got.chunks[batch_dims] == (2, 2, 2)
        _same(got.compute(), want)


UPDATE_DTYPES = {np.float64: np.float64, np.float32: np.float64, np.float16: np.float16,
                 np.int8: np.int8, np.uint64: np.uint64, np.bool_: np.bool_,
                 np.complex128: np.complex64}


@pytest.mark.parametrize("chunks", chunk_params(X_CHUNKS))
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("reduce", [None, "add", "mul", "max", "min"])
def test_scatter_matches_the_numpy_path_bit_for_bit(chunks, axis, reduce):
    rng = np.random.default_rng(axis)
    x_shape = _shape(chunks)
    n = x_shape[axis]
    shape = list(x_shape)
    shape[axis] = 12  # more updates than positions: every destination is hit repeatedly
    shape[(axis + 1) % 3] -= 2  # indices smaller than x outside the axis
    idx = rng.integers(-n, n, shape)
    dtypes = UPDATE_DTYPES if chunks == "uneven" else {np.float16: np.float16}
    for dtype, u_dtype in dtypes.items():
        if np.dtype(dtype).kind == "c" and reduce in ("max", "min"):
            continue
        a = _data(dtype, x_shape)
        if dtype == np.uint64:
            a = (a.view(np.uint64) >> np.uint64(1)) | np.uint64(1 << 63)  # both halves
        upd = _data(u_dtype, shape) if shape[axis] <= x_shape[axis] \
            else (rng.standard_normal(shape) * 3).astype(u_dtype)
        if dtype == np.float16 and reduce == "add":
            upd = (np.abs(upd) + 1000).astype(u_dtype)  # float16 sums round: float32 work shows
        x = da.from_array(a, chunks=X_CHUNKS[chunks])
        want = axisops.scatter(a, idx, upd, axis, reduce=reduce)
        # size-one index chunks (a task per index, a partial per update) once per
        # reduce; every dtype meets several index chunks per destination in (4, 3, 2)
        for index_chunks in ((4, 3, 2), 1) if chunks == "uneven" and dtype == np.float64 \
                else ((4, 3, 2),):
            got = axisops.scatter(x, da.from_array(idx, chunks=index_chunks),
                                  da.from_array(upd, chunks=3), axis, reduce=reduce)
            assert isinstance(got, da.Array) and got.chunks == x.chunks
            _same(got.compute(), want)


def test_scatter_updates_numpy_scalars_broadcast_leading_part():
    a = _data()
    x = da.from_array(a, chunks=(3, 4, 2))
    idx = np.random.default_rng(2).integers(0, 9, (7, 5, 5))
    for updates in (2.5, np.arange(5.0), np.ones((7, 9, 5)), np.arange(175.0).reshape(7, 5, 5)):
        for reduce in (None, "add"):
            want = axisops.scatter(a, idx, updates, 1, reduce=reduce)
            _same(axisops.scatter(x, idx, updates, 1, reduce=reduce).compute(), want)
            _same(axisops.scatter(x, da.from_array(idx, chunks=2), da.asarray(updates), 1,
                                  reduce=reduce).compute(), want)
    u8 = np.arange(63, dtype=np.uint8).reshape(7, 9)
    _same(axisops.scatter(da.from_array(u8, chunks=4), [[1, 1]], 200, 1, reduce="add").compute(),
          axisops.scatter(u8, [[1, 1]], 200, 1, reduce="add"))


def test_errors_are_the_numpy_paths():
    x = da.from_array(_data(), chunks=3)
    idx = da.from_array(np.zeros((7, 9, 5), np.int64), chunks=3)
    with pytest.raises(ValueError, match="reduce"):
        axisops.scatter(x, idx, 1.0, 0, reduce="sub")
    with pytest.raises(TypeError, match="cannot cast"):
        axisops.scatter(x.astype(np.int32), idx, 1.5, 0)
    with pytest.raises(TypeError, match="cannot cast"):
        axisops.scatter(x, idx, da.ones((7, 9, 5), chunks=3, dtype=np.complex128), 0)
    with pytest.raises(ValueError, match="larger than x"):
        axisops.scatter(x, da.zeros((7, 10, 5), chunks=3, dtype=int), 1.0, 0)
    with pytest.raises(np.exceptions.AxisError):
        axisops.scatter(x, idx, 1.0, 3)
    with pytest.raises(TypeError, match="integer"):
        axisops.gather_nd(x, da.zeros((2, 2), chunks=1))
    with pytest.raises(ValueError, match="batch"):
        axisops.gather_nd(x, np.zeros((6, 1), int), batch_dims=1)
    with pytest.raises(TypeError, match=r"scatter.*complex|complex.*order"):
        axisops.scatter(x.astype(np.complex128), idx, 1.0, 0, reduce="max")
    with pytest.raises(IndexError, match=r"take: index 9 at position \(1,\) of indices"):
        axisops.take(x, [0, 9, 10], axis=2)  # NumPy indices: while building
    bad = np.zeros((7, 9, 5), np.int64)
    bad[5, 7, 3] = 9  # in the chunk starting at (3, 6, 3): the position is global
    for run in (lambda i: axisops.take_along_axis(x, i, 1),
                lambda i: axisops.scatter(x, i, 1.0, 1)):
        with pytest.raises(IndexError, match=r"index 9 at position \(5, 7, 3\) of indices is out "
                                             r"of range \[-9, 9\)"):
            run(da.from_array(bad, chunks=3)).compute()
    with pytest.raises(IndexError, match=r"take: index -10 at position \(1, 0\) of indices"):
        axisops.take(x, da.from_array(np.array([[0, 1], [-10, 0]]), chunks=1), axis=1).compute()
    nd = np.zeros((4, 2), np.int64)
    nd[3, 1] = 9
    with pytest.raises(IndexError, match=r"gather_nd: index 9 at position \(3, 1\) of indices is "
                                         r"out of range \[-9, 9\)"):
        axisops.gather_nd(x, da.from_array(nd, chunks=(2, 2))).compute()


def test_building_a_graph_runs_no_kernel(monkeypatch):
    x = da.from_array(_data(), chunks=3)
    idx = da.from_array(np.ones((7, 9, 5), np.int64), chunks=3)

    forbid_kernels(monkeypatch)
    graphs = [axisops.take_along_axis(x, idx, 1), axisops.take(x, [1, 2], axis=0),
              axisops.take(x, idx[0, 0], axis=1), axisops.gather_nd(x, idx[..., :2]),
              axisops.scatter(x, idx, x, 2, reduce="add")]
    assert all(isinstance(g, da.Array) for g in graphs)


def test_no_task_holds_a_whole_axis():
    x = da.ones((64, 64), chunks=8)
    idx = da.zeros((64, 64), chunks=8, dtype=np.int64)
    for out in (axisops.take_along_axis(x, idx, 0), axisops.scatter(x, idx, x, 0, reduce="add")):
        assert out.chunks == ((8,) * 8, (8,) * 8)
        graph = dict(out.__dask_graph__())
        # no task reads all eight chunks of x along the axis
        for task in graph.values():
            deps = {d for d in getattr(task, "dependencies", ()) if d[0] == x.name}
            assert len(deps) <= 1


def test_on_a_distributed_cluster_of_worker_processes():
    distributed = pytest.importorskip("distributed")
    a = _data()
    x = da.from_array(a, chunks=(2, 3, 5))
    idx = np.random.default_rng(3).integers(-9, 9, (7, 12, 5))
    nd = np.random.default_rng(4).integers(0, 7, (5, 1))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="1GiB") as cluster, \
            distributed.Client(cluster) as client:
        lazy = da.from_array(idx, chunks=4)
        results = client.compute([axisops.take_along_axis(x, lazy, 1),
                                  axisops.scatter(x, lazy, 1.0, 1, reduce="add"),
                                  axisops.take(x, lazy[0, :, 0], axis=1),
                                  axisops.gather_nd(x, nd)], sync=True)
    _same(results[0], axisops.take_along_axis(a, idx, 1))
    _same(results[1], axisops.scatter(a, idx, 1.0, 1, reduce="add"))
    _same(results[2], axisops.take(a, idx[0, :, 0], axis=1))
    _same(results[3], axisops.gather_nd(a, nd))


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip", "fill"])
def test_gradients_of_take_are_scatter_adds_bit_for_bit(axis, mode):
    rng = np.random.default_rng(6)
    n = 315 if axis is None else SHAPE[axis]
    low, high = (-n, n) if mode == "raise" else (-2 * n, 2 * n)
    for idx in (rng.integers(low, high, 17), rng.integers(low, high, (3, 4))):
        for dtype in (np.float64, np.float16, np.int32):
            g_np = axisops.take(rng.standard_normal(SHAPE) * 100, idx, axis,
                                mode="wrap").astype(dtype)
            g = da.from_array(g_np, chunks=3)
            want = axisops.grad.take(g_np, idx, SHAPE, axis, mode)
            for i in (idx, da.from_array(idx, chunks=2)):
                got = axisops.grad.take(g, i, SHAPE, axis, mode)
                assert isinstance(got, da.Array)
                _same(got.compute(), want)


@pytest.mark.parametrize("chunks", [3, (4, 2, 5), -1])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gradient_of_take_along_axis(chunks, axis):
    rng = np.random.default_rng(7)
    n = SHAPE[axis]
    shape = list(SHAPE)
    shape[axis] = 11
    idx = rng.integers(-n, n, shape)
    g_np = rng.standard_normal(shape)
    for mode in ("raise", "fill"):
        want = axisops.grad.take_along_axis(g_np, idx, SHAPE, axis, mode)
        got = axisops.grad.take_along_axis(da.from_array(g_np, chunks=chunks),
                                           da.from_array(idx, chunks=4), SHAPE, axis, mode)
        _same(got.compute(), want)
    # x broadcast (a 1 in x's shape: summed) and x's leading part (the rest gets 0)
    other = (axis + 1) % 3
    x_shape = list(SHAPE)
    x_shape[other] = 1
    small = idx.take(range(4), axis=(axis + 2) % 3)
    g_b = rng.standard_normal(small.shape)
    want = axisops.grad.take_along_axis(g_b, small, tuple(x_shape), axis)
    got = axisops.grad.take_along_axis(da.from_array(g_b, chunks=3), small, tuple(x_shape), axis)
    _close(got.compute(), want)


@pytest.mark.parametrize("batch_dims,q", [(0, 1), (0, 2), (1, 1), (1, 2)])
def test_gradient_of_gather_nd(batch_dims, q):
    rng = np.random.default_rng(q)
    dims = SHAPE[batch_dims:batch_dims + q]
    idx = np.stack([rng.integers(-d, d, SHAPE[:batch_dims] + (6,)) for d in dims], -1)
    g_np = axisops.gather_nd(_data(), idx, batch_dims=batch_dims)
    for dtype in (np.float64, np.float32, np.complex128):
        g_t = g_np.astype(dtype) if dtype != np.complex128 else g_np + 2j * g_np
        want = axisops.grad.gather_nd(g_t, idx, SHAPE, batch_dims)
        got = axisops.grad.gather_nd(da.from_array(g_t, chunks=2), da.from_array(idx, chunks=2),
                                     SHAPE, batch_dims)
        _same(got.compute(), want)
    bad = idx.copy()
    bad[..., 1, 0] = 99
    with pytest.raises(IndexError, match=r"grad\.gather_nd: index 99 at position"):
        axisops.grad.gather_nd(da.from_array(g_np, chunks=2), da.from_array(bad, chunks=2),
                               SHAPE, batch_dims).compute()


@pytest.mark.parametrize("reduce", [None, "add", "mul", "max", "min"])
@pytest.mark.parametrize("axis", [0, 2])
def test_gradient_of_scatter(reduce, axis):
    rng = np.random.default_rng(8)
    n = SHAPE[axis]
    shape = list(SHAPE)
    shape[axis] = 10
    shape[1] = 6  # indices smaller than x outside the axis
    idx = rng.integers(-n, n, shape)
    a = rng.integers(-3, 4, SHAPE).astype(np.float64)  # ties for max and min
    upd = rng.integers(-3, 4, shape).astype(np.float64)
    upd[0, 0, 0] = 0.0  # a zero factor for mul
    g_np = rng.standard_normal(SHAPE)
    want = axisops.grad.scatter(g_np, a, idx, upd, axis, reduce)
    x = da.from_array(a, chunks=(3, 4, 2))
    got = axisops.grad.scatter(da.from_array(g_np, chunks=(3, 4, 2)), x,
                               da.from_array(idx, chunks=(4, 3, 4)),
                               da.from_array(upd, chunks=3), axis, reduce)
    assert len(got) == 2 and all(isinstance(p, da.Array) for p in got)
    for part, w in zip(dask.compute(*got), want):
        _same(part, w) if reduce in (None, "add", "mul") else _close(part, w)
    # updates broadcast from a smaller shape: their gradient is summed back
    want = axisops.grad.scatter(g_np, a, idx, upd[:1], axis, reduce)
    got = axisops.grad.scatter(da.from_array(g_np, chunks=3), x, idx, upd[:1], axis, reduce)
    for part, w in zip(dask.compute(*got), want):
        _close(part, w)


@pytest.mark.parametrize("reduce", [None, "add", "mul"])
def test_gradient_of_complex_scatter(reduce):
    rng = np.random.default_rng(9)
    idx = rng.integers(0, 9, (7, 12, 5))
    z = _data(np.complex128)
    upd = rng.standard_normal((7, 12, 5)) + 1j * rng.standard_normal((7, 12, 5))
    g = rng.standard_normal(SHAPE) - 1j * rng.standard_normal(SHAPE)
    want = axisops.grad.scatter(g, z, idx, upd, 1, reduce)
    got = axisops.grad.scatter(da.from_array(g, chunks=3), da.from_array(z, chunks=3),
                               da.from_array(idx, chunks=4), da.from_array(upd, chunks=4), 1,
                               reduce)
    for part, w in zip(dask.compute(*got), want):
        _close(part, w)
    with pytest.raises(TypeError):
        axisops.grad.scatter(da.from_array(g, chunks=3), da.from_array(z, chunks=3), idx, upd, 1,
                             "max")

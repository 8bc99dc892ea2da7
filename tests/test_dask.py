"""Reductions, arg-reductions and scans on dask arrays: lazy, any chunking, the
NumPy path's values (bit for bit where the contract promises bits), on the threaded
scheduler and on a distributed cluster of worker processes."""
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


def _data(dtype=np.float64, nan=True, chunks=None):
    """(7, 9, 5) of 0, 1, 2 (with NaN); its (4, 5, 3) corner for the size-one chunking
    (a task per element: 60 chunks still make trees and carry chains several deep)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, (7, 9, 5)).astype(dtype)  # many ties, across chunk borders
    if nan and np.dtype(dtype).kind == "f":
        a[2, 3, 1] = a[3, 4, 1] = a[5, 0, 4] = np.nan  # NaNs on both sides of borders
    return _sized(a, chunks)


def _sized(a, chunks):
    return a[:4, :5, :3] if chunks == "size one" else a


def _same(got, want, exact):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if exact:
        assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (1, 2)])
def test_reductions_match_the_numpy_path(chunks, axis):
    a = _data(chunks=chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    for op in ("sum", "mean", "prod", "max", "min"):
        got = getattr(axisops, op)(x, axis=axis)
        assert isinstance(got, da.Array)
        _same(got.compute(), getattr(axisops, op)(a, axis=axis), exact=op in ("max", "min"))
    ints = _data(np.int64, chunks=chunks)
    xi = da.from_array(ints, chunks=CHUNKINGS[chunks])
    _same(axisops.sum(xi, axis=axis, keepdims=True).compute(),
          axisops.sum(ints, axis=axis, keepdims=True), exact=True)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), (0, 1, 2), (2, 1)])
@pytest.mark.parametrize("select_last_index", [False, True])
def test_arg_reductions_are_global_and_chunking_independent(chunks, axis, select_last_index):
    # the chunks' (value, index) pairs combine the same way whatever the dtype: size-one
    # chunks (315 of them, a deep tree) on float64 with NaN, every dtype otherwise
    for dtype in (np.float64,) if chunks == "size one" else (np.float64, np.int16, np.float16):
        a = _data(dtype, chunks=chunks)
        x = da.from_array(a, chunks=CHUNKINGS[chunks])
        for op in ("argmax", "argmin"):
            got = getattr(axisops, op)(x, axis=axis, select_last_index=select_last_index)
            want = getattr(axisops, op)(a, axis=axis, select_last_index=select_last_index)
            _same(got.compute(), want, exact=True)


def test_arg_reduction_tree_and_index_dtype():
    a = _data()
    x = da.from_array(a, chunks=1)  # 315 chunks: a deep tree
    got = axisops.argmax(x, axis=(0, 1), keepdims=True, index_dtype=np.int32)
    _same(got.compute(), axisops.argmax(a, axis=(0, 1), keepdims=True, index_dtype=np.int32),
          exact=True)
    picked = a.reshape(63, 5)[got.compute()[0, 0], np.arange(5)]  # the maximum, NaN first
    _same(picked, axisops.max(a, axis=(0, 1)), exact=True)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, 1, 2])
def test_scans_match_the_numpy_path(chunks, axis):
    a = _data(chunks=chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    for op in ("cumsum", "cumprod"):
        for exclusive in (False, True):
            for reverse in (False, True):
                got = getattr(axisops, op)(x, axis=axis, exclusive=exclusive, reverse=reverse)
                want = getattr(axisops, op)(a, axis=axis, exclusive=exclusive, reverse=reverse)
                assert got.shape == want.shape
                _same(got.compute(), want, exact=False)
    for op in ("cummax", "cummin"):
        values, indices = getattr(axisops, op)(x, axis=axis)
        want = getattr(axisops, op)(a, axis=axis)
        _same(values.compute(), want.values, exact=True)
        _same(indices.compute(), want.indices, exact=True)  # ties and NaN: PyTorch's rule
    ints = _data(np.int8, chunks=chunks)
    xi = da.from_array(ints, chunks=CHUNKINGS[chunks])
    _same(axisops.cumsum(xi, axis=axis).compute(), axisops.cumsum(ints, axis=axis), exact=True)


def test_the_kernel_guard_stops_every_family(monkeypatch):
    # what test_building_a_graph_runs_no_kernel relies on (here and in the other
    # dask files): a small call of each family, planned before, is stopped
    a = _data()
    calls = [lambda: axisops.sum(a, axis=1), lambda: axisops.max(a, axis=0),
             lambda: axisops.cumsum(a, axis=2), lambda: axisops.cummax(a, axis=0),
             lambda: axisops.take(a, [0, 2], axis=1), lambda: axisops.take_along_axis(
                 a, np.zeros((7, 1, 5), np.int64), axis=1),
             lambda: axisops.unfold(a[None], 2), lambda: axisops.scatter(a, [[[0]]], 1.0, 1)]
    for call in calls:
        call()  # planned and run once, its compiled entry point bound
    forbid_kernels(monkeypatch)
    for call in calls:
        with pytest.raises(AssertionError, match="a kernel ran"):
            call()


def test_building_a_graph_runs_no_kernel(monkeypatch):
    x = da.from_array(_data(), chunks=3)

    forbid_kernels(monkeypatch)
    graphs = [axisops.sum(x, axis=1), axisops.mean(x), axisops.argmax(x, axis=(0, 2)),
              axisops.cumsum(x, axis=0, reverse=True), axisops.cummax(x, axis=1).indices,
              axisops.max(x, axis=2)]
    assert all(isinstance(g, da.Array) for g in graphs)


def test_errors_are_raised_while_building():
    x = da.from_array(_data(), chunks=3)
    with pytest.raises(np.exceptions.AxisError):
        axisops.sum(x, axis=3)
    with pytest.raises(ValueError, match=r"repeated|duplicate"):
        axisops.argmax(x, axis=(0, 0))
    with pytest.raises(ValueError):
        axisops.argmax(x[:0], axis=0)
    with pytest.raises(ValueError):
        axisops.max(x[:, :0], axis=1)
    with pytest.raises(TypeError, match=r"argmax.*complex"):
        axisops.argmax(x.astype(np.complex128))
    with pytest.raises(OverflowError):
        axisops.argmax(da.zeros(2**31 + 2, chunks=2**30, dtype=np.int8), index_dtype=np.int32)


def test_complex_sums_and_scans():
    z = _data() + 1j * _data()[::-1]
    x = da.from_array(z, chunks=(3, 4, 2))
    _same(axisops.sum(x, axis=(0, 2)).compute(), axisops.sum(z, axis=(0, 2)), exact=False)
    _same(axisops.cumsum(x, axis=1).compute(), axisops.cumsum(z, axis=1), exact=False)


def test_on_a_distributed_cluster_of_worker_processes():
    distributed = pytest.importorskip("distributed")
    a = _data()
    x = da.from_array(a, chunks=(2, 3, 5))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="1GiB") as cluster, \
            distributed.Client(cluster) as client:
        results = client.compute([axisops.argmax(x, axis=(0, 1)), axisops.sum(x, axis=2),
                                  axisops.cummax(x, axis=0).indices,
                                  axisops.cumsum(x, axis=1, exclusive=True)], sync=True)
        # the nanny's OMP_NUM_THREADS=1: a worker's calls stay on its one thread
        assert set(client.run(axisops.thread_limit).values()) == {1}
    _same(results[0], axisops.argmax(a, axis=(0, 1)), exact=True)
    _same(results[1], axisops.sum(a, axis=2), exact=False)
    _same(results[2], axisops.cummax(a, axis=0).indices, exact=True)
    _same(results[3], axisops.cumsum(a, axis=1, exclusive=True), exact=False)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", [None, 0, 2])
def test_logcumsumexp_and_unravel(chunks, axis):
    a = np.random.default_rng(3).standard_normal((7, 9, 5))
    a[2, 3, 1] = -np.inf
    a = _sized(a, chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    _same(axisops.logcumsumexp(x, axis=axis).compute(), axisops.logcumsumexp(a, axis=axis),
          exact=False)
    ints = _data(np.int8, chunks=chunks)
    _same(axisops.logcumsumexp(da.from_array(ints, chunks=CHUNKINGS[chunks]), axis=axis).compute(),
          axisops.logcumsumexp(ints, axis=axis), exact=False)
    i = axisops.argmax(x, axis=(0, 2))
    got = axisops.unravel(i, x.shape, (0, 2))
    want = axisops.unravel(axisops.argmax(a, axis=(0, 2)), a.shape, (0, 2))
    assert len(got) == 2 and all(isinstance(g, da.Array) for g in got)
    for g, w in zip(got, want):
        _same(g.compute(), w, exact=True)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip", "fill"])
@pytest.mark.parametrize("index_chunks", [(2, 3, 2), (1, 1, 1), -1])
def test_take_along_axis_with_chunked_indices(axis, mode, index_chunks):
    rng = np.random.default_rng(axis)
    a = _data()
    x = da.from_array(a, chunks=CHUNKINGS["uneven"])
    n = a.shape[axis]
    shape = list(a.shape)
    shape[axis] = 6
    low, high = (-n, n) if mode == "raise" else (-2 * n, 2 * n)
    idx = rng.integers(low, high, shape)
    got = axisops.take_along_axis(x, da.from_array(idx, chunks=index_chunks), axis, mode=mode,
                                  fill_value=-7.0)
    want = axisops.take_along_axis(a, idx, axis, mode=mode, fill_value=-7.0)
    assert isinstance(got, da.Array) and got.chunks[axis] == da.from_array(
        idx, chunks=index_chunks).chunks[axis]
    _same(got.compute(), want, exact=True)  # moves: bit for bit


def test_take_broadcasting_leading_part_and_errors():
    a = _data()
    x = da.from_array(a, chunks=(3, 4, 2))
    idx = np.random.default_rng(5).integers(0, 9, (4, 3, 1))  # leading part, broadcast
    _same(axisops.take_along_axis(x, idx, 1).compute(), axisops.take_along_axis(a, idx, 1), True)
    for axis in (None, 0, 2):
        for mode in ("wrap", "clip", "fill"):
            got = axisops.take(x, [[3, -1], [0, 40]], axis=axis, mode=mode, fill_value=2.5)
            want = axisops.take(a, [[3, -1], [0, 40]], axis=axis, mode=mode, fill_value=2.5)
            _same(got.compute(), want, exact=True)
    bad = da.from_array(np.full((7, 2, 5), 9), chunks=2)
    with pytest.raises(IndexError, match=r"index 9 at position \(\d, \d, \d\) of indices is out"):
        axisops.take_along_axis(x, bad, 1).compute()
    with pytest.raises(TypeError, match="integer"):
        axisops.take_along_axis(x, bad.astype(float), 1)
    with pytest.raises(ValueError, match="mode"):
        axisops.take(x, [0], axis=0, mode="nearest")
    z = a + 1j
    _same(axisops.take(da.from_array(z, chunks=3), [2, 0], axis=1).compute(),
          axisops.take(z, [2, 0], axis=1), exact=True)


def test_gradients_built_from_lazy_operators():
    a = _data()
    g2 = np.arange(1.0, 8.0)
    g = da.from_array(g2, chunks=3)
    for op in ("sum", "mean"):
        got = getattr(axisops.grad, op)(g, (7, 9, 5), axis=(1, 2))
        assert isinstance(got, da.Array)
        _same(got.compute(), getattr(axisops.grad, op)(g2, (7, 9, 5), axis=(1, 2)), exact=True)
    x = da.from_array(a, chunks=(3, 4, 2))
    for axis in (None, 0, 2):
        gx = x.reshape(-1) if axis is None else x
        gn = a.reshape(-1) if axis is None else a
        got = axisops.grad.cumsum(gx, a.shape, axis, exclusive=True, reverse=False)
        _same(got.compute(), axisops.grad.cumsum(gn, a.shape, axis, exclusive=True), exact=False)
    with pytest.raises(ValueError, match="g has shape"):
        axisops.grad.sum(g, (7, 9, 5), axis=0)


def _bench_workloads(shape, chunks, image_chunks):
    from axisops.bench import chunked

    rng = np.random.default_rng(0)
    x = da.from_array(rng.standard_normal(shape).astype(np.float32), chunks=chunks)
    along = da.from_array(rng.integers(0, shape[0], shape), chunks=chunks)
    image = da.from_array(rng.standard_normal((2, 2, 8, 8)).astype(np.float32),
                          chunks=image_chunks)
    holes = rng.standard_normal(shape).astype(np.float32)
    holes[rng.random(shape) < 0.1] = np.nan
    return chunked.workloads(x, along, image, np.arange(5), da.from_array(holes, chunks=chunks))


def test_dask_bench_reports_every_workload(monkeypatch, tmp_path):
    pytest.importorskip("distributed")
    from axisops.bench import chunked

    # the kernels compiled here first, into Numba's disk cache: the cluster's two
    # worker processes then load them instead of both compiling them from a cold cache
    dask.compute([w.ours() for w in _bench_workloads((64, 48), (16, 24), (1, 2, 4, 8)).values()],
                 scheduler="sync")
    monkeypatch.setattr(chunked, "QUICK", {"shape": (64, 48), "chunks": (16, 24),
                                           "image": (2, 2, 8, 8), "image_chunks": (1, 2, 4, 8)})
    monkeypatch.setattr(chunked, "TINY_TASKS", 200)  # 2000 took 20 s of the test's 60
    # the cluster's workers as threads of this process, which has the kernels loaded:
    # worker processes start and load them for ~20 s, and the test checks the report
    # (test_on_a_distributed_cluster_of_worker_processes runs processes)
    from dask import distributed as dask_distributed

    local_cluster = dask_distributed.LocalCluster
    monkeypatch.setattr(dask_distributed, "LocalCluster",
                        lambda **kw: local_cluster(**{**kw, "processes": False}))
    data = chunked.run(quick=True, repeat=1)
    names = [r["workload"] for r in data["rows"]]
    assert names[:4] == ["argmax axis=0", "sum axis=0", "max axis=0", "cumsum axis=0"]
    assert names[8:13] == ["nanmean axis=0, 10% NaN", "nanmean axis=1, 10% NaN",
                           "nanstd axis=1, 10% NaN", "nanargmax axis=0, 10% NaN",
                           "nanmax axis=1, 10% NaN"]
    assert names[13:] == ["take 1000 axis=0", "take_along_axis axis=0", "scatter add axis=0",
                         "cummax axis=0", "argmax axis=(0, 1)", "unfold 3x3 (rows chunked)"]
    assert all(r["axisops_s"] > 0 and r["axisops_tasks_per_chunk"] > 0 and r["bytes"] > 0
               for r in data["rows"])
    assert data["meta"]["chunk_count"] == 8 and data["meta"]["per_task_ms"] > 0
    assert "| take_along_axis axis=0 |" in chunked.format_table(data)
    report = tmp_path / "dask.md"
    chunked.write_markdown(data, str(report), "axisops bench --dask")
    text = report.read_text()
    assert text.startswith("# axisops on dask arrays") and "| unfold 3x3 (rows chunked) |" in text


def test_dask_bench_workarounds_compute_what_axisops_computes():
    for name, w in _bench_workloads((32, 24), (8, 12), (1, 2, 4, 8)).items():
        ours, theirs = dask.compute(w.ours(), w.peer())
        if name.startswith(("argmax", "max", "take", "cummax", "unfold", "nanargmax", "nanmax")):
            assert np.array_equal(ours, theirs), name
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4, err_msg=name)

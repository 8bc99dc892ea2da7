"""max_pool, avg_pool and their gradients on dask arrays: lazy, across chunk borders
with chunks of any sizes (a window larger than a chunk included), the NumPy path's
values, indices and sums bit for bit, tasks that read a few chunks, the NumPy
path's errors while the graph is built."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from dask_support import chunk_params, forbid_kernels, scheduler  # noqa: F401

import axisops

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

#: (spatial shape, kernel_size, options of both poolings, options of max_pool only)
CASES = {
    "1d": ((11,), (3,), {}, {}),
    "1d-ceil-past-the-end": ((7,), (3,), {"stride": 2, "padding": [(1, 0)], "ceil_mode": True},
                             {}),
    "1d-overlapping-dilated": ((13,), (3,), {"stride": 1, "padding": [(1, 2)]},
                               {"dilation": 2}),
    "2d": ((7, 6), 2, {"padding": 1, "stride": 1}, {}),
    "2d-ceil-pairs": ((8, 9), (3, 2), {"stride": (2, 3), "padding": ((0, 1), (1, 1)),
                                       "ceil_mode": True}, {"dilation": (2, 1)}),
    "3d": ((5, 4, 6), (2, 3, 2), {"stride": (2, 1, 2), "padding": (1, 0, 1)}, {}),
}

#: Chunks of the spatial axes (batch and channel axes get their own below).
CHUNKINGS = {
    "even": 3,
    "uneven": "uneven",
    "size one": 1,
    "one chunk": -1,
    "smaller than the window": 2,
}


def _chunks(shape, chunking):
    if chunking != "uneven":
        return (chunking,) * len(shape)
    out = []
    for n in shape:  # 1, 3, 1, 3, ... and the rest
        sizes, left, k = [], n, 0
        while left:
            sizes.append(min(left, 1 if k % 2 == 0 else 3))
            left -= sizes[-1]
            k += 1
        out.append(tuple(sizes))
    return tuple(out)


def _x_shape(spatial, channels_last, batch=2, channels=3):
    return (batch, *spatial, channels) if channels_last else (batch, channels, *spatial)


def _data(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 9, shape).astype(dtype)  # ties
    return (rng.standard_normal(shape) * 20).astype(dtype)


def _same(got, want):
    """Bit for bit: dtype, shape, values (NaN where NaN, the signs of zeros)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
    if want.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want))


def _layer(result):
    """The tasks of the last layer of *result*'s graph, and the whole graph."""
    graph = result.__dask_graph__()
    return graph.layers[result.name], dict(graph)


@pytest.mark.parametrize("chunking", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("channels_last", [False, True], ids=["channels-first", "channels-last"])
def test_pooling_and_gradients_match_the_numpy_path(case, chunking, channels_last):
    spatial, kernel, options, max_only = CASES[case]
    shape = _x_shape(spatial, channels_last)
    a = _data(shape)
    a[(0,) * a.ndim] = np.nan  # a NaN wins its windows
    space = _chunks(spatial, CHUNKINGS[chunking])
    chunks = (1, *space, 2) if channels_last else (1, 2, *space)
    x = da.from_array(a, chunks=chunks)
    common = {"channels_last": channels_last, **options}

    values, idx = axisops.max_pool(x, kernel, return_indices=True, **common, **max_only)
    assert isinstance(values, da.Array) and isinstance(idx, da.Array)
    want, want_idx = axisops.max_pool(a, kernel, return_indices=True, **common, **max_only)
    _same(values.compute(), want)
    _same(idx.compute(), want_idx)
    _same(axisops.max_pool(x, kernel, **common, **max_only).compute(), want)
    assert values.chunks[0] == (1, 1)  # batch and channel chunks kept
    assert values.chunks[-1 if channels_last else 1] == (2, 1)

    g = _data(want.shape, seed=1)
    dg = da.from_array(g, chunks=values.chunks)
    got = axisops.grad.max_pool(dg, idx, shape, kernel, **common, **max_only)
    assert isinstance(got, da.Array)
    _same(got.compute(), axisops.grad.max_pool(g, want_idx, shape, kernel, **common, **max_only))

    for include in (True, False):
        mean = axisops.avg_pool(x, kernel, count_include_pad=include, **common)
        want = axisops.avg_pool(a, kernel, count_include_pad=include, **common)
        _same(mean.compute(), want)
        g = _data(want.shape, seed=2)
        got = axisops.grad.avg_pool(da.from_array(g, chunks=mean.chunks), shape, kernel,
                                    count_include_pad=include, **common)
        _same(got.compute(), axisops.grad.avg_pool(g, shape, kernel, count_include_pad=include,
                                                   **common))


# the integer types under the exhaustive switch: each compiles the pooling kernels
# anew (25-30 s in CI on Zen 4; int8 96 s on an AMD EPYC Zen 3)
@pytest.mark.parametrize("dtype", [np.float16, np.float32,
                                   pytest.param(np.int8, marks=pytest.mark.exhaustive),
                                   pytest.param(np.uint16, marks=pytest.mark.exhaustive),
                                   pytest.param(np.int64, marks=pytest.mark.exhaustive),
                                   np.bool_])
def test_dtypes(dtype):
    spatial, kernel, options, max_only = CASES["2d-ceil-pairs"]
    a = _data(_x_shape(spatial, False), dtype)
    x = da.from_array(a, chunks=(1, 2, 3, 2))
    values, idx = axisops.max_pool(x, kernel, return_indices=True, **options, **max_only)
    want, want_idx = axisops.max_pool(a, kernel, return_indices=True, **options, **max_only)
    _same(values.compute(), want)  # the dtype kept, ties to the first in window order
    _same(idx.compute(), want_idx)
    mean = axisops.avg_pool(x, kernel, **options)
    assert mean.dtype == axisops.avg_pool(a, kernel, **options).dtype
    _same(mean.compute(), axisops.avg_pool(a, kernel, **options))
    if a.dtype.kind == "f":  # float16: sums in float32, rounded once, as the NumPy path
        g = _data(want.shape, dtype, seed=2)
        dg = da.from_array(g, chunks=2)
        _same(axisops.grad.max_pool(dg, idx, a.shape, kernel, **options, **max_only).compute(),
              axisops.grad.max_pool(g, want_idx, a.shape, kernel, **options, **max_only))
        g = _data(mean.shape, dtype, seed=3)
        dg = da.from_array(g, chunks=2)
        _same(axisops.grad.avg_pool(dg, a.shape, kernel, **options).compute(),
              axisops.grad.avg_pool(g, a.shape, kernel, **options))


def test_unbatched_chunked_channels_and_chunks_that_follow_the_input():
    a = _data((5, 12, 8))  # (C, H, W)
    x = da.from_array(a, chunks=(2, 4, 3))
    v, i = axisops.max_pool(x, 2, return_indices=True)
    assert v.chunks == ((2, 2, 1), (2, 2, 2), (2, 1, 1))  # x's chunks through the stride
    want, want_i = axisops.max_pool(a, 2, return_indices=True)
    _same(v.compute(), want)
    _same(i.compute(), want_i)
    back = axisops.grad.max_pool(v, i, a.shape, 2)
    assert back.chunks == ((2, 2, 1), (4, 4, 4), (4, 2, 2))  # g's chunks back through it
    _same(back.compute(), axisops.grad.max_pool(want, want_i, a.shape, 2))
    mean = axisops.avg_pool(x, 2)
    assert axisops.grad.avg_pool(mean, a.shape, 2).chunks[1] == (4, 4, 4)

    last = np.moveaxis(a, 0, -1)  # (H, W, C)
    xl = da.from_array(last, chunks=(5, 3, 2))
    v, i = axisops.max_pool(xl, (3, 2), stride=(2, 1), padding=1, ceil_mode=True,
                            channels_last=True, return_indices=True)
    want, want_i = axisops.max_pool(last, (3, 2), stride=(2, 1), padding=1, ceil_mode=True,
                                    channels_last=True, return_indices=True)
    assert v.chunks[-1] == (2, 2, 1)
    _same(v.compute(), want)
    _same(i.compute(), want_i)
    g = _data(want.shape, seed=3)
    _same(axisops.grad.max_pool(da.from_array(g, chunks=(2, 3, 1)), i, last.shape, (3, 2),
                                stride=(2, 1), padding=1, ceil_mode=True, channels_last=True)
          .compute(),
          axisops.grad.max_pool(g, want_i, last.shape, (3, 2), stride=(2, 1), padding=1,
                                ceil_mode=True, channels_last=True))


def test_a_kernel_larger_than_the_chunks_and_nan_across_their_borders():
    a = np.arange(40.0).reshape(1, 1, 40) % 7
    a[0, 0, [5, 9, 10]] = np.nan
    x = da.from_array(a, chunks=(1, 1, 2))
    for kernel, stride, dilation in (((9,), 1, 1), ((5,), 3, 2), ((12,), 12, 1)):
        v, i = axisops.max_pool(x, kernel, stride=stride, dilation=dilation, padding=4,
                                return_indices=True)
        want, want_i = axisops.max_pool(a, kernel, stride=stride, dilation=dilation, padding=4,
                                        return_indices=True)
        _same(v.compute(), want)  # the first NaN of a window, wherever its chunk
        _same(i.compute(), want_i)
        _same(axisops.avg_pool(x, kernel, stride=stride, padding=4).compute(),
              axisops.avg_pool(a, kernel, stride=stride, padding=4))


def test_gradients_are_deterministic_and_the_numpy_paths_bits():
    # values of very different sizes, an element winning many overlapping windows:
    # any other order of the additions shows
    rng = np.random.default_rng(5)
    a = rng.integers(0, 3, (2, 2, 9, 9)).astype(np.float64)
    g_shape = axisops.max_pool(a, 4, stride=1, padding=2).shape
    g = rng.standard_normal(g_shape) * 10.0 ** rng.integers(-8, 8, g_shape)
    _, want_i = axisops.max_pool(a, 4, stride=1, padding=2, return_indices=True)
    want = axisops.grad.max_pool(g, want_i, a.shape, 4, stride=1, padding=2)
    want_mean = axisops.grad.avg_pool(g, a.shape, 4, stride=1, padding=2,
                                      count_include_pad=False)
    for chunks in ((1, 2, 3, 5), (2, 2, 1, 1), (2, 2, 9, 9), (1, 1, 8, 2)):
        x = da.from_array(a, chunks=chunks)
        _, idx = axisops.max_pool(x, 4, stride=1, padding=2, return_indices=True)
        dg = da.from_array(g, chunks=idx.chunks)
        first = axisops.grad.max_pool(dg, idx, a.shape, 4, stride=1, padding=2).compute()
        _same(first, want)
        _same(axisops.grad.max_pool(dg, want_i.astype(np.uint32), a.shape, 4, stride=1,
                                    padding=2).compute(), first)  # NumPy indices, as g
        _same(axisops.grad.max_pool(dg, idx.rechunk(5), a.shape, 4, stride=1, padding=2)
              .compute(), first)
        _same(axisops.grad.avg_pool(dg, a.shape, 4, stride=1, padding=2,
                                    count_include_pad=False).compute(), want_mean)


def test_empty():
    for shape in ((0, 3, 4, 4), (2, 0, 4, 4)):
        a = np.zeros(shape)
        x = da.from_array(a, chunks=2)
        v, i = axisops.max_pool(x, 2, padding=1, return_indices=True)
        want, want_i = axisops.max_pool(a, 2, padding=1, return_indices=True)
        _same(v.compute(), want)
        _same(i.compute(), want_i)
        _same(axisops.avg_pool(x, 2).compute(), axisops.avg_pool(a, 2))
        _same(axisops.grad.max_pool(v, i, shape, 2, padding=1).compute(),
              axisops.grad.max_pool(want, want_i, shape, 2, padding=1))
        _same(axisops.grad.avg_pool(v, shape, 2, padding=1).compute(),
              axisops.grad.avg_pool(want, shape, 2, padding=1))


def test_building_a_graph_runs_no_kernel(monkeypatch):
    a = _data((2, 3, 9, 8))
    x = da.from_array(a, chunks=(1, 2, 3, 3))
    g = da.from_array(_data((2, 3, 5, 5), seed=1), chunks=2)

    forbid_kernels(monkeypatch)
    v, i = axisops.max_pool(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    graphs = [v, i, axisops.max_pool(x, (2, 3), dilation=2),
              axisops.avg_pool(x, 3, stride=2, padding=1, ceil_mode=True),
              axisops.avg_pool(x.transpose(0, 2, 3, 1), (2, 2), channels_last=True),
              axisops.grad.max_pool(v, i, a.shape, 3, stride=2, padding=1, ceil_mode=True),
              axisops.grad.max_pool(g, np.zeros(g.shape, np.int64), a.shape, 3, stride=2,
                                    padding=1, ceil_mode=True),
              axisops.grad.avg_pool(g, a.shape, 3, stride=2, padding=1, ceil_mode=True)]
    assert all(isinstance(r, da.Array) for r in graphs)


def test_errors_are_the_numpy_paths_while_building():
    a, g = _data((1, 2, 6, 6)), np.ones((1, 2, 3, 3))
    calls = [
        lambda x, g: axisops.max_pool(x, 2, padding=3),  # a window wholly in padding
        lambda x, g: axisops.max_pool(x[0, 0], 2),
        lambda x, g: axisops.avg_pool(x, 7),
        lambda x, g: axisops.max_pool(x, 2, stride=0),
        lambda x, g: axisops.avg_pool(x, "2"),
        lambda x, g: axisops.max_pool(x.astype(np.complex64), 2),
        lambda x, g: axisops.avg_pool(x, (2, 2), padding=((0, 5), (0, 0))),
        lambda x, g: axisops.grad.avg_pool(g.astype(np.int64), a.shape, 2),
        lambda x, g: axisops.grad.avg_pool(g[..., :2], a.shape, 2),
        lambda x, g: axisops.grad.max_pool(g, np.zeros(g.shape), a.shape, 2),
        lambda x, g: axisops.grad.max_pool(g, np.zeros((1, 2, 3, 2), int), a.shape, 2),
        lambda x, g: axisops.grad.max_pool(g, np.zeros(g.shape, int), (2, 6, 6), 2),
        lambda x, g: axisops.grad.max_pool(g, np.zeros(g.shape, int), a.shape, 2, padding=3),
    ]
    for call in calls:
        with pytest.raises(Exception) as expected:
            call(a, g)
        with pytest.raises(type(expected.value)) as got:
            call(da.from_array(a, chunks=2), da.from_array(g, chunks=2))
        assert str(got.value) == str(expected.value)


def test_index_errors_when_the_graph_runs():
    a = _data((1, 1, 6, 6))
    x = da.from_array(a, chunks=2)
    v, i = axisops.max_pool(x, 2, return_indices=True)
    with pytest.raises(IndexError, match="out of range for a plane of 36"):
        axisops.grad.max_pool(v, i + 36, a.shape, 2).compute()
    # an index outside its own window: the NumPy path adds it there; lazily a ValueError
    with pytest.raises(ValueError, match="not in its output's window"):
        axisops.grad.max_pool(v, da.zeros_like(i), a.shape, 2).compute()


def test_a_window_wholly_in_padding_between_others_is_refused():
    # dilation 4: windows 1 and 2 fall between the two elements; the NumPy path checks
    # the first and last windows only (and gives the plane's first element there)
    a = np.array([[[1.0, 2.0]]])
    with pytest.raises(ValueError, match="window 1 lies wholly in the padding"):
        axisops.max_pool(da.from_array(a, chunks=1), (2,), stride=1, dilation=4, padding=3)
    with pytest.raises(ValueError, match="window 1 lies wholly in the padding"):
        axisops.grad.max_pool(da.ones((1, 1, 4), chunks=1), da.zeros((1, 1, 4), int,
                                                                      chunks=1),
                              a.shape, (2,), stride=1, dilation=4, padding=3)


def test_tasks_read_a_few_chunks_never_a_whole_spatial_axis():
    a = _data((1, 2, 24, 24))
    x = da.from_array(a, chunks=(1, 2, 4, 4))
    v, i = axisops.max_pool(x, 3, stride=2, padding=1, return_indices=True)
    layer, graph = _layer(v)
    for key in layer:
        chunks = [k for k in _inputs(graph, key) if k[0] == x.name]
        assert 1 <= len(chunks) <= 4  # its chunk and the halo of its neighbours
    mean = axisops.avg_pool(x, 9, stride=1)  # a window over three chunks a side
    layer, graph = _layer(mean)
    assert max(mean.chunks[2]) <= 4
    for key in layer:
        assert len(dask.core.get_dependencies(graph, key)) <= 4 * 4
    back = axisops.grad.avg_pool(mean, a.shape, 9, stride=1)
    layer, graph = _layer(back)
    assert back.chunks[2:] == x.chunks[2:]  # g's chunks back through the stride
    for key in layer:
        assert len(dask.core.get_dependencies(graph, key)) <= 4 * 4
    _same(back.compute(), axisops.grad.avg_pool(axisops.avg_pool(a, 9, stride=1), a.shape, 9,
                                                stride=1))
    grads = axisops.grad.max_pool(v, i, a.shape, 3, stride=2, padding=1)
    pickle.dumps(dict(grads.__dask_graph__()))  # tasks travel to worker processes


def _inputs(graph, key):
    """The keys of the array chunks a task reads, through the getitem of a pair."""
    out = set()
    for dep in dask.core.get_dependencies(graph, key):
        if "pairs" in dep[0]:
            out |= _inputs(graph, dep)
        else:
            out.add(dep)
    return out

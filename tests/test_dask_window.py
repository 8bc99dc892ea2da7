"""unfold, fold and their gradients on dask arrays: lazy, across chunk borders with
chunks of any sizes, the NumPy path's bits (fold's sums included), tasks that read a
few chunks, never a whole spatial axis."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from dask_support import chunk_params, forbid_kernels, scheduler  # noqa: F401

import axisops

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

#: (spatial shape, kernel_size, options): 1-D, 2-D and 3-D, dilation, stride and
#: (asymmetric, wider than the kernel) padding.
CASES = {
    "1d": ((11,), (3,), {}),
    "1d-dilated-strided": ((13,), (3,), {"dilation": 2, "stride": 2, "padding": [(1, 4)]}),
    "2d": ((7, 6), 2, {"padding": 1}),
    "2d-mixed": ((8, 9), (3, 2), {"dilation": (2, 1), "stride": (1, 3),
                                  "padding": ((0, 2), (3, 1))}),
    "2d-wide-padding": ((5, 4), (2, 2), {"padding": ((4, 3), (0, 5)), "stride": 2}),
    "3d": ((5, 4, 6), (2, 3, 2), {"stride": (2, 1, 2), "padding": (1, 0, 1)}),
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
    if np.dtype(dtype).kind == "c":
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return (rng.standard_normal(shape) * 20).astype(dtype)


def _same(got, want):
    """Bit for bit: dtype, shape, values (and the signs of zeros)."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    if want.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want))


def _layer(result):
    """The tasks of the last layer of *result*'s graph, and the whole graph."""
    graph = result.__dask_graph__()
    return graph.layers[result.name], dict(graph)


@pytest.mark.parametrize("chunking", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("channels_last", [False, True], ids=["channels-first", "channels-last"])
def test_unfold_and_fold_match_the_numpy_path(case, chunking, channels_last):
    spatial, kernel, options = CASES[case]
    shape = _x_shape(spatial, channels_last)
    a = _data(shape)
    space = _chunks(spatial, CHUNKINGS[chunking])
    chunks = (1, *space, 2) if channels_last else (1, 2, *space)
    x = da.from_array(a, chunks=chunks)
    cols = axisops.unfold(x, kernel, channels_last=channels_last, **options)
    assert isinstance(cols, da.Array)
    want = axisops.unfold(a, kernel, channels_last=channels_last, **options)
    _same(cols.compute(), want)  # moves: bit for bit
    assert cols.chunks[0] == (1, 1)  # batch chunks kept

    c = _data(want.shape, seed=1)
    folded = axisops.fold(c, spatial, kernel, channels_last=channels_last, **options)
    for col_chunks in (cols.chunks, 4):  # runs of unfold; others, rechunked to runs
        got = axisops.fold(da.from_array(c, chunks=col_chunks), spatial, kernel,
                           channels_last=channels_last, **options)
        assert isinstance(got, da.Array)
        _same(got.compute(), folded)  # the same sums in the same order: the same bits


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8,
                                   np.int64, np.bool_, np.complex128, np.complex64])
@pytest.mark.parametrize("channels_last", [False, True], ids=["channels-first", "channels-last"])
def test_dtypes(dtype, channels_last):
    spatial, kernel, options = CASES["2d-mixed"]
    a = _data(_x_shape(spatial, channels_last), dtype)
    x = da.from_array(a, chunks=(2, 2, 3, 2))
    cols = axisops.unfold(x, kernel, channels_last=channels_last, **options)
    _same(cols.compute(), axisops.unfold(a, kernel, channels_last=channels_last, **options))
    c = _data(cols.shape, dtype, seed=2)
    got = axisops.fold(da.from_array(c, chunks=cols.chunks), spatial, kernel,
                       channels_last=channels_last, **options)
    _same(got.compute(), axisops.fold(c, spatial, kernel, channels_last=channels_last, **options))


def test_unbatched_chunked_channels_and_round_trip():
    a = _data((5, 9, 8))  # (C, H, W)
    x = da.from_array(a, chunks=(2, 4, 3))
    cols = axisops.unfold(x, (3, 3), padding=1)
    assert cols.chunks[0] == (18, 18, 9)  # K rows a channel: the channel chunks kept
    _same(cols.compute(), axisops.unfold(a, (3, 3), padding=1))
    back = axisops.fold(cols, (9, 8), (3, 3), padding=1)
    assert back.chunks[0] == (2, 2, 1)
    _same(back.compute(), axisops.fold(axisops.unfold(a, (3, 3), padding=1), (9, 8), (3, 3),
                                       padding=1))

    last = np.moveaxis(a, 0, -1)  # (H, W, C), channels chunked: one chunk per kernel offset
    xl = da.from_array(last, chunks=(4, 3, 2))
    cols = axisops.unfold(xl, (2, 3), stride=(1, 2), channels_last=True)
    assert cols.chunks[1] == (2, 2, 1) * 6
    want = axisops.unfold(last, (2, 3), stride=(1, 2), channels_last=True)
    _same(cols.compute(), want)
    got = axisops.fold(cols, (9, 8), (2, 3), stride=(1, 2), channels_last=True)
    assert got.chunks[-1] == (2, 2, 1)
    _same(got.compute(), axisops.fold(want, (9, 8), (2, 3), stride=(1, 2), channels_last=True))


def test_fold_is_deterministic_and_the_numpy_paths_bits():
    # values of very different sizes: any other order of the additions shows
    rng = np.random.default_rng(5)
    c = rng.standard_normal((2, 2 * 9, 64)) * 10.0 ** rng.integers(-8, 8, (2, 18, 64))
    want = axisops.fold(c, (8, 8), 3, padding=1, stride=1)
    for chunks in ((1, 9, 8), (2, 5, 7), (1, 18, 1), (2, 18, 64)):
        x = da.from_array(c, chunks=chunks)
        first = axisops.fold(x, (8, 8), 3, padding=1).compute()
        _same(first, want)
        _same(axisops.fold(x, (8, 8), 3, padding=1).compute(), first)


def test_gradients():
    spatial, kernel, options = CASES["2d-mixed"]
    for channels_last in (False, True):
        shape = _x_shape(spatial, channels_last)
        a = _data(shape)
        x = da.from_array(a, chunks=2)
        cols = axisops.unfold(a, kernel, channels_last=channels_last, **options)
        for dtype in (np.float32, np.float16, np.int16, np.complex128):
            g = _data(cols.shape, dtype, seed=3)
            dg = da.from_array(g, chunks=(1, 5, 3))
            got = axisops.grad.unfold(dg, shape, kernel, channels_last=channels_last, **options)
            assert isinstance(got, da.Array)
            _same(got.compute(), axisops.grad.unfold(g, shape, kernel,
                                                     channels_last=channels_last, **options))
            gx = _data(shape, dtype, seed=4)
            got = axisops.grad.fold(da.from_array(gx, chunks=2), kernel,
                                    channels_last=channels_last, **options)
            assert isinstance(got, da.Array)
            _same(got.compute(), axisops.grad.fold(gx, kernel, channels_last=channels_last,
                                                   **options))
        # the gradient of unfold is the fold of g: adjoint to unfold
        g = _data(cols.shape, seed=6)
        lhs = np.vdot(axisops.unfold(x, kernel, channels_last=channels_last, **options)
                      .compute(), g)
        rhs = np.vdot(a, axisops.grad.unfold(da.from_array(g, chunks=3), shape, kernel,
                                             channels_last=channels_last, **options).compute())
        np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


def test_empty_and_all_padding():
    for shape, chunks in (((0, 3, 4, 4), 2), ((2, 0, 4, 4), 2), ((2, 3, 0, 4), 2)):
        a = np.zeros(shape)
        got = axisops.unfold(da.from_array(a, chunks=chunks), 2, padding=2)
        _same(got.compute(), axisops.unfold(a, 2, padding=2))
    a = _data((1, 2, 3))  # windows that read padding only, at both ends
    x = da.from_array(a, chunks=1)
    got = axisops.unfold(x, (2,), padding=[(5, 6)])
    _same(got.compute(), axisops.unfold(a, (2,), padding=[(5, 6)]))
    c = _data(got.shape, seed=1)
    _same(axisops.fold(da.from_array(c, chunks=(1, 1, 3)), (3,), (2,), padding=[(5, 6)])
          .compute(), axisops.fold(c, (3,), (2,), padding=[(5, 6)]))
    c = np.ones((1, 4, 12))
    _same(axisops.fold(da.from_array(c, chunks=2), (0, 1), 2, padding=2).compute(),
          axisops.fold(c, (0, 1), 2, padding=2))


def test_building_a_graph_runs_no_kernel(monkeypatch):
    a = _data((2, 3, 9, 8))
    x = da.from_array(a, chunks=(1, 2, 3, 3))

    forbid_kernels(monkeypatch)
    cols = axisops.unfold(x, 3, padding=1, stride=2)
    graphs = [cols, axisops.fold(cols, (9, 8), 3, padding=1, stride=2),
              axisops.fold(cols.rechunk((1, 9, 7)), (9, 8), 3, padding=1, stride=2),
              axisops.unfold(x.transpose(0, 2, 3, 1), (2, 2), channels_last=True),
              axisops.grad.unfold(cols, a.shape, 3, padding=1, stride=2),
              axisops.grad.fold(x, (2, 3), dilation=2)]
    assert all(isinstance(g, da.Array) for g in graphs)


def test_errors_are_raised_while_building():
    x = da.from_array(_data((2, 3, 6, 6)), chunks=2)
    with pytest.raises(TypeError, match="kernel_size"):
        axisops.unfold(x, 2.0)
    with pytest.raises(ValueError, match="larger than the padded"):
        axisops.unfold(x, 7)
    with pytest.raises(ValueError, match="padding"):
        axisops.unfold(x, 2, padding=-1)
    with pytest.raises(ValueError, match="dimensions"):
        axisops.unfold(x, (2,))
    with pytest.raises(TypeError, match="unsupported dtype"):
        axisops.unfold(da.from_array(np.array([[1, "b"]] * 2, dtype=object), chunks=1), (1, 1))
    cols = axisops.unfold(x, 2)
    with pytest.raises(ValueError, match="expected cols of shape"):
        axisops.fold(cols, (6, 7), 2)
    with pytest.raises(ValueError, match="expected cols of shape"):
        axisops.fold(cols[:, :5], (6, 6), 2)
    with pytest.raises(ValueError, match="output_size"):
        axisops.fold(cols, (6, -1), 2)
    with pytest.raises(ValueError, match="g has shape"):
        axisops.grad.unfold(cols[:, :, 1:], x.shape, 2)
    with pytest.raises(ValueError, match="dimensions"):
        axisops.grad.unfold(cols, (6, 6), 2)
    with pytest.raises(TypeError, match=r"grad\.fold: unsupported dtype"):
        axisops.grad.fold(x.astype("U1"), 2)
    with pytest.raises(ValueError, match=r"grad\.fold"):
        axisops.grad.fold(x, 9)


def test_tasks_read_a_few_chunks_never_a_whole_spatial_axis():
    a = _data((1, 2, 12, 12))
    x = da.from_array(a, chunks=(1, 2, 4, 4))
    cols = axisops.unfold(x, 3, padding=1)
    layer, graph = _layer(cols)
    assert cols.chunks[2][:3] == (5, 4, 3)  # a row of each chunk (+ the padding)
    assert len(layer) > x.npartitions  # more than one task per chunk of x
    for key in layer:
        deps = dask.core.get_dependencies(graph, key)
        assert 1 <= len(deps) <= 4  # a chunk and its neighbours' halo
    folded = axisops.fold(cols, (12, 12), 3, padding=1)
    layer, graph = _layer(folded)
    assert max(folded.chunks[2]) < 12 and max(folded.chunks[3]) < 12
    for key in layer:
        assert len(dask.core.get_dependencies(graph, key)) <= 2 * 3  # windows over a block
    _same(folded.compute(), axisops.fold(axisops.unfold(a, 3, padding=1), (12, 12), 3,
                                         padding=1))
    strips = axisops.unfold(da.from_array(a, chunks=(1, 2, 4, 12)), 3, padding=1)
    assert strips.chunks[2] == (60, 48, 36)  # strips of x: one L chunk each
    assert axisops.fold(strips, (12, 12), 3, padding=1).chunks[2:] == ((4, 4, 4), (12,))
    pickle.dumps(dict(folded.__dask_graph__()))  # tasks travel to worker processes

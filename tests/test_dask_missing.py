"""The missing-value operators on dask arrays: lazy (no kernel while the graph is
built), any chunking -- all-NaN chunks next to full ones, all-NaN slices across
chunks -- and the NumPy path's values, indices and warnings."""
from __future__ import annotations

import warnings

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
AXES = [None, 0, 1, -1, (0, 2)]


def _data(chunks, dtype=np.float64):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, (7, 9, 5)).astype(dtype)  # ties across chunk borders
    a[rng.random(a.shape) < 0.25] = np.nan
    a[0:3, 0:4, :] = np.nan     # whole chunks of NaN next to full ones
    a[4, :, 2] = np.nan         # an all-NaN slice along axis 1, across chunks
    return a[:4, :5, :3] if chunks == "size one" else a


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func(*args, **kwargs)
        if isinstance(out, da.Array):
            out = out.compute()
    return out, sorted({str(w.message) for w in caught if w.category is RuntimeWarning})


def _same(got, want, exact):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if exact:
        assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", AXES)
def test_reductions_match_the_numpy_path(chunks, axis):
    a = _data(chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    ops = {"nansum": True, "nanprod": False, "nanmean": False, "count": True, "nanmax": True,
           "nanmin": True, "var": False, "std": False, "nanvar": False, "nanstd": False}
    lazy = {op: getattr(axisops, op)(x, axis=axis) for op in ops}
    for op, exact in ops.items():
        assert isinstance(lazy[op], da.Array), op
        got, got_warned = _quiet(lambda op=op: lazy[op])
        want, want_warned = _quiet(getattr(axisops, op), a, axis=axis)
        _same(got, want, exact and op != "nansum")
        if dask.config.get("scheduler", None) == "sync":  # a worker thread's warning is
            # not reliably recorded by the main thread's catch_warnings
            assert got_warned == want_warned, (op, got_warned, want_warned)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("axis", AXES)
def test_arg_extremes_give_global_indices(chunks, axis):
    a = _data(chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    for op in ("nanargmax", "nanargmin"):
        for options in ({}, {"select_last_index": True}, {"index_dtype": np.int32}):
            got = getattr(axisops, op)(x, axis=axis, all_nan_index=-1, **options).compute()
            want = getattr(axisops, op)(a, axis=axis, all_nan_index=-1, **options)
            _same(got, want, exact=True)
    if axis == 1:
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            axisops.nanargmax(x, axis=1).compute()


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
def test_scans_carry_over_nan_chunks(chunks):
    a = _data(chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    for op in ("nancumsum", "nancumprod"):
        for axis in (None, 0, 1):
            for options in ({}, {"exclusive": True, "reverse": True}):
                got = getattr(axisops, op)(x, axis=axis, **options)
                assert isinstance(got, da.Array)
                _same(got.compute(), getattr(axisops, op)(a, axis=axis, **options), exact=False)


def test_building_a_graph_runs_no_kernel(monkeypatch):
    x = da.from_array(_data("even"), chunks=3)
    forbid_kernels(monkeypatch)
    graphs = [getattr(axisops, op)(x, axis=1) for op in (
        "nansum", "nanprod", "nanmean", "count", "nanmax", "nanmin", "nanargmax", "nanargmin",
        "var", "std", "nanvar", "nanstd", "nancumsum", "nancumprod")]
    assert all(isinstance(g, da.Array) for g in graphs)


def test_integers_and_errors():
    ints = np.arange(12).reshape(3, 4) % 5
    x = da.from_array(ints, chunks=2)
    for op in ("nansum", "nanmean", "nanmax", "nanargmin", "count", "nanvar", "nancumsum"):
        _same(getattr(axisops, op)(x, axis=1).compute(), getattr(axisops, op)(ints, axis=1),
              exact=op != "nanvar")
    with pytest.raises(TypeError, match="nanmax"):
        axisops.nanmax(da.from_array(np.ones(3, np.complex64)))
    with pytest.raises(TypeError, match="ddof"):
        axisops.nanvar(da.from_array(np.ones(3)), ddof="1")


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
def test_gradients_are_lazy_and_the_numpy_paths(chunks, monkeypatch):
    a = _data(chunks)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    rng = np.random.default_rng(3)
    cases = []
    for op in ("nansum", "nanmean", "nanprod", "nanmax", "nanmin", "var", "std", "nanvar",
               "nanstd"):
        for axis in (None, 1, (0, 2)):
            shape = np.shape(_quiet(getattr(axisops, op), a, axis=axis)[0])
            cases.append((op, np.asarray(rng.standard_normal(shape)), (axis,)))
    for op in ("nancumsum", "nancumprod"):
        for axis in (None, 0, 2):
            shape = getattr(axisops, op)(a, axis).shape
            cases.append((op, rng.standard_normal(shape), (axis,)))
    with monkeypatch.context() as m:
        forbid_kernels(m)  # building the graphs runs no kernel
        lazy = [getattr(axisops.grad, op)(da.from_array(g), x, *args) for op, g, args in cases]
    for (op, g, args), graph in zip(cases, lazy):
        assert isinstance(graph, da.Array), op
        got = _quiet(lambda graph=graph: graph)[0]
        want = _quiet(getattr(axisops.grad, op), g, a, *args)[0]
        _same(got, want, exact=False)

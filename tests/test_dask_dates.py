"""Dates and times on dask arrays (``axisops.dask.dates``): lazy, any chunking, the
NumPy path's values, dtypes, indices, warnings and errors -- NaT as NaN, all-NaT
slices and chunks next to full ones."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from dask_support import chunk_params, forbid_kernels, scheduler  # noqa: F401

import axisops

da = pytest.importorskip("dask.array")

CHUNKINGS = {"even": (2, 3), "uneven": ((1, 3, 2), (4, 1, 2)), "one chunk": (-1, -1)}
ORDERINGS = ["max", "min", "argmax", "argmin", "nanmax", "nanmin", "nanargmax", "nanargmin",
             "count"]
SUMS = ["sum", "mean", "nansum", "nanmean"]
SCANS = ["cummax", "cummin", "cumsum", "nancumsum"]


def _data(kind: str) -> np.ndarray:
    rng = np.random.default_rng(1)
    dtype = "datetime64[D]" if kind == "M" else "timedelta64[h]"
    a = rng.integers(-4, 4, (6, 7)).astype(dtype)   # ties across chunk borders
    nat = np.array("NaT", dtype)
    a[rng.random(a.shape) < 0.25] = nat
    a[0:2, 0:3] = nat           # a whole chunk of NaT next to full ones
    a[4, :] = nat               # an all-NaT slice along axis 1, across chunks
    return a


def _run(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func(*args, **kwargs)
        out = tuple(o.compute() if isinstance(o, da.Array) else o for o in out) if isinstance(
            out, tuple) else (out.compute() if isinstance(out, da.Array) else out)
    return out, sorted({str(w.message) for w in caught if w.category is RuntimeWarning})


def _same(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        bits = np.int64 if w.dtype.kind in "mM" else w.dtype
        assert np.array_equal(g.view(bits), w.view(bits)), (g, w)


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("kind", ["M", "m"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_reductions_match_the_numpy_path(kind, chunks, axis):
    a = _data(kind)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    for op in ORDERINGS + (SUMS if kind == "m" else []):
        options = {"all_nan_index": -1} if op in ("nanargmax", "nanargmin") else {}
        want, warned = _run(getattr(axisops, op), a, axis=axis, **options)
        lazy = getattr(axisops, op)(x, axis=axis, **options)
        assert isinstance(lazy, da.Array), op
        got, got_warned = _run(lambda: lazy)
        _same(got, want)
        assert got_warned == warned, op


@pytest.mark.parametrize("chunks", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("kind", ["M", "m"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_scans_match_the_numpy_path(kind, chunks, axis):
    a = _data(kind)
    x = da.from_array(a, chunks=CHUNKINGS[chunks])
    for op in SCANS if kind == "m" else SCANS[:2]:
        want, _ = _run(getattr(axisops, op), a, axis)
        lazy = getattr(axisops, op)(x, axis)
        assert all(isinstance(part, da.Array) for part in (
            lazy if isinstance(lazy, tuple) else (lazy,))), op
        got, _ = _run(lambda: lazy)
        _same(got, want)


def test_all_nat_slices_raise_or_give_all_nan_index():
    a = _data("M")
    x = da.from_array(a, chunks=(2, 3))
    with pytest.raises(ValueError, match=r"nanargmax: All-NaN slice encountered \(at output "
                                         r"position \(4,\)\)") as lazy_error:
        axisops.nanargmax(x, axis=1).compute()
    with pytest.raises(ValueError) as numpy_error:
        axisops.nanargmax(a, axis=1)
    assert str(lazy_error.value) == str(numpy_error.value)
    got = axisops.nanargmin(x, axis=1, all_nan_index=-7, index_dtype=np.int32).compute()
    want = axisops.nanargmin(a, axis=1, all_nan_index=-7, index_dtype=np.int32)
    _same(got, want)
    assert got[4] == -7


def test_float_all_nan_error_names_the_global_position():
    a = np.ones((5, 4))
    a[3] = np.nan
    with pytest.raises(ValueError, match=r"at output position \(3,\)"):
        axisops.nanargmax(da.from_array(a, chunks=(2, 2)), axis=1).compute()


def test_building_a_graph_runs_no_kernel(monkeypatch):
    x = da.from_array(_data("m"), chunks=(2, 3))
    forbid_kernels(monkeypatch)
    for op in ORDERINGS + SUMS:
        getattr(axisops, op)(x, axis=1)
    for op in SCANS:
        getattr(axisops, op)(x, 0)


def test_other_operators_of_dates_are_refused():
    x = da.from_array(_data("M"), chunks=(2, 3))
    for op in ("sum", "mean", "prod", "cumsum", "var", "nanstd", "nancumprod"):
        with pytest.raises(TypeError, match=op):
            getattr(axisops, op)(x, axis=0)
    t = da.from_array(_data("m"), chunks=(2, 3))
    with pytest.raises(TypeError, match="prod"):
        axisops.prod(t, axis=0)

"""The ``.axisops`` accessor of xarray objects (``axisops.xarray``): dimension names,
``skipna`` as xarray, coordinates kept, dask-backed data lazy, ``idxmax`` with
``fill_value`` -- against xarray's own methods."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
import axisops.xarray  # registers the accessor

da = pytest.importorskip("dask.array")


def field(chunks=None):
    """A (time, lat, lon) temperature field with a land mask (NaN) and gaps."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((12, 5, 6)) * 10 + 15
    data[:, 1, 2] = np.nan          # land: all NaN along time
    data[rng.random(data.shape) < 0.1] = np.nan
    arr = xr.DataArray(
        data, dims=("time", "lat", "lon"), name="t2m", attrs={"units": "C"},
        coords={"time": np.arange("2020-01", "2021-01", dtype="datetime64[M]"),
                "lat": np.linspace(-20, 20, 5), "lon": np.linspace(0, 50, 6),
                "station": ("lon", list("abcdef"))})
    return arr.chunk(chunks) if chunks else arr


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = f(*args, **kwargs)
        return out.compute() if hasattr(out, "compute") else out


@pytest.mark.parametrize("chunks", [None, {"time": 5, "lat": 2}], ids=["numpy", "dask"])
@pytest.mark.parametrize("dim", ["time", ("lat", "lon"), None])
def test_reductions_match_xarray(chunks, dim):
    arr = field(chunks)
    for op in ("sum", "mean", "max", "min", "std", "var", "count"):
        for skipna in ((None, False) if op != "count" else (None,)):
            kwargs = {} if op == "count" else {"skipna": skipna}
            got = quiet(getattr(arr.axisops, op), dim=dim, **kwargs)
            want = quiet(getattr(arr, op), dim=dim, **kwargs)
            xr.testing.assert_allclose(got, want)
            assert got.dims == want.dims and got.name == want.name and got.attrs == {}
            assert set(got.coords) == set(want.coords), (op, set(got.coords), set(want.coords))
    if chunks:
        assert isinstance(arr.axisops.mean(dim=dim).data, da.Array)  # still lazy


@pytest.mark.parametrize("chunks", [None, {"time": 5}], ids=["numpy", "dask"])
def test_arg_and_idx_extremes(chunks):
    arr = field(chunks)
    got = quiet(arr.axisops.idxmax, dim="time")
    want = quiet(arr.idxmax, dim="time")
    xr.testing.assert_identical(got.drop_vars(list(got.coords)), want.drop_vars(list(want.coords)))
    assert np.isnat(got.values[1, 2])  # the land point: NaT, as xarray's fill
    got = quiet(arr.axisops.idxmin, dim="lat", fill_value=-999.0)
    assert got.values[0, 0] == arr.lat.values[int(np.nanargmin(arr.values[0, :, 0]))]
    idx = quiet(arr.axisops.argmax, dim="time", all_nan_index=-1)
    assert idx.dtype == np.int64 and idx.values[1, 2] == -1
    with pytest.raises(ValueError, match="All-NaN slice"):
        quiet(arr.axisops.argmax, dim="time")


def test_scans_keep_every_coordinate():
    arr = field()
    got = arr.axisops.cumsum(dim="time")
    xr.testing.assert_allclose(got, arr.cumsum(dim="time").transpose(*got.dims))
    values, indices = arr.axisops.cummax(dim="lon")
    assert values.dims == arr.dims and indices.dtype == np.int64
    np.testing.assert_array_equal(values.values, axisops.cummax(arr.values, axis=2).values)


def test_datasets_and_errors():
    ds = xr.Dataset({"t": field(), "label": ("lon", list("uvwxyz"))})
    out = quiet(ds.axisops.mean, dim="time")
    xr.testing.assert_allclose(out["t"], quiet(ds["t"].mean, dim="time"))
    assert (out["label"] == ds["label"]).all()
    with pytest.raises(ValueError, match="not a dimension"):
        field().axisops.sum(dim="depth")
    with pytest.raises(ValueError, match="one dimension"):
        field().axisops.idxmax(dim=("lat", "lon"))


@pytest.mark.parametrize("op, rolling", [("moving_sum", "sum"), ("moving_mean", "mean"),
                                         ("moving_std", "std"), ("moving_max", "max"),
                                         ("moving_min", "min")])
def test_moving_windows_are_rollings(op, rolling):
    arr = field()
    got = getattr(arr.axisops, op)("time", 4, min_count=2)
    want = getattr(arr.rolling(time=4, min_periods=2), rolling)()
    assert got.dims == arr.dims and got.dtype == want.dtype and got.shape == arr.shape
    assert got.coords.to_dataset().identical(arr.coords.to_dataset())
    np.testing.assert_allclose(got.values, want.values, rtol=1e-10, atol=1e-10)
    ds = xr.Dataset({"t2m": arr, "label": ("lat", list("vwxyz"))})
    assert np.array_equal(getattr(ds.axisops, op)("time", 4, min_count=2)["t2m"].values,
                          got.values, equal_nan=True)


def test_moving_argmax_indexes_along_the_dimension():
    arr = field()
    index = arr.axisops.moving_argmax("time", 3)
    assert index.dtype == np.int64 and index.dims == arr.dims
    ok = index.values >= 0
    picked = np.take_along_axis(arr.values, np.where(ok, index.values, 0), 0)
    assert np.array_equal(picked[ok], arr.axisops.moving_max("time", 3).values[ok])
    with pytest.raises(ValueError, match="not a dimension"):
        arr.axisops.moving_mean("depth", 3)


@pytest.mark.parametrize("chunks", [None, {"time": 5, "lat": 2}], ids=["numpy", "dask"])
@pytest.mark.parametrize("dim", ["time", ("lat", "lon"), None])
def test_medians_and_quantiles_match_xarray(chunks, dim):
    """Along a chunked dimension too, where xarray's own quantile refuses dask data."""
    arr = field(chunks)
    plain = field()
    for skipna in (None, False):
        got = quiet(arr.axisops.median, dim=dim, skipna=skipna)
        same(got, quiet(plain.median, dim=dim, skipna=skipna))
        for q in (0.3, [0.1, 0.5, 0.9]):
            for method in ("linear", "nearest", "hazen"):
                got = quiet(arr.axisops.quantile, q, dim=dim, method=method, skipna=skipna)
                want = quiet(plain.quantile, q, dim=dim, method=method, skipna=skipna)
                same(got, want)


def same(got, want):
    """Names, dimensions, coordinates and attributes as xarray's; values to rounding
    (xarray's quantile moves the axis last and runs NumPy's on that copy: its
    interpolations may round once differently from NumPy's on the array itself)."""
    xr.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert got.dims == want.dims and got.name == want.name and got.attrs == want.attrs
    assert set(got.coords) == set(want.coords)


def test_sorts_ranks_and_moving_order_statistics():
    arr = field()
    ranks = arr.axisops.rank("time")
    xr.testing.assert_identical(ranks, arr.rank("time"))
    values, indices = arr.axisops.top_k(3, "time")
    assert values.dims == arr.dims and values.sizes["time"] == 3 and "time" not in values.coords
    np.testing.assert_array_equal(values.values, axisops.top_k(arr.values, 3, 0).values)
    np.testing.assert_array_equal(indices.values, axisops.top_k(arr.values, 3, 0).indices)
    kth, where = arr.axisops.kthvalue(2, "lat")
    assert kth.dims == ("time", "lon") and where.dtype == np.int64
    ordered = arr.axisops.sort("lon", descending=True)
    np.testing.assert_array_equal(ordered.values, axisops.sort(arr.values, 2, descending=True))
    assert "station" not in ordered.coords and "time" in ordered.coords
    rolled = arr.axisops.moving_median("time", 3, min_count=1)
    want = arr.rolling(time=3, min_periods=1).median()
    np.testing.assert_allclose(rolled.values, want.values, equal_nan=True)
    assert rolled.dims == arr.dims and set(rolled.coords) == set(arr.coords)
    q = arr.axisops.moving_quantile("time", 4, 0.25, min_count=2)
    np.testing.assert_array_equal(q.values, axisops.moving_quantile(arr.values, 4, 0.25, 0,
                                                                    min_count=2))
    assert q.dims == arr.dims

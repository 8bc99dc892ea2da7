"""The missing-value workloads: the nan operators on float32 data with 10 % NaN,
against NumPy's nan-functions, bottleneck and numbagg (and PyTorch's nansum and
nanmean, the ones it has)."""
from __future__ import annotations

import numpy as np

from .systems import _bottleneck, _numbagg, _torch
from .workload import Workload, _axisops_fn, float32_sum_check

#: The fraction of NaN in the data.
NAN_FRACTION = 0.1
#: numbagg's name where it differs.
_NUMBAGG_NAMES = {"count": "nancount"}
#: NumPy's spelling of each operator (count: the elements that are not NaN).
_NUMPY = {"count": lambda x, axis: np.sum(~np.isnan(x), axis=axis)}


def random_float32_with_nan(shape: tuple[int, ...], rng: np.random.Generator):
    """Uniform [0, 1) float32 with a tenth of the elements NaN (no slice all NaN at
    the bench's sizes: NumPy's nanargmax would raise)."""
    x = rng.random(shape, dtype=np.float32)
    x[rng.random(shape, dtype=np.float32) < NAN_FRACTION] = np.nan
    return (x,)


def nan_workload(op: str, axis) -> Workload:
    """``op(x, axis)`` of a nan operator (or ``count``) with every system that has it."""
    def axisops_factory(x):
        fn = _axisops_fn(op)
        return lambda: fn(x, axis)

    def numpy_factory(x):
        fn = _NUMPY.get(op) or getattr(np, op)
        return lambda: fn(x, axis=axis)

    def torch_factory(x):
        if op not in ("nansum", "nanmean"):
            raise NotImplementedError(f"torch has no {op}")
        torch = _torch()
        fn, t = getattr(torch, op), torch.from_numpy(x)
        return lambda: fn(t, axis)

    def bottleneck_factory(x):
        fn = getattr(_bottleneck(), op, None)
        if fn is None:
            raise NotImplementedError(f"bottleneck has no {op}")
        return lambda: fn(x, axis=axis)

    def numbagg_factory(x):
        fn = getattr(_numbagg(), _NUMBAGG_NAMES.get(op, op), None)
        if fn is None:
            raise NotImplementedError(f"numbagg has no {op}")
        if op in ("nanvar", "nanstd"):  # numbagg's default is ddof=1
            return lambda: fn(x, axis=axis, ddof=0)
        return lambda: fn(x, axis=axis)

    return Workload(
        name=f"{op} axis={axis}, 10% NaN",
        op=op,
        setup=random_float32_with_nan,
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory,
                 "bottleneck": bottleneck_factory, "numbagg": numbagg_factory},
        check=_nan_check,
    )


def _nan_check(result, expected) -> bool:
    """Indices and counts exactly, values to float32 rounding (NaN where NaN)."""
    result, expected = np.asarray(result), np.asarray(expected)
    if result.dtype.kind in "iu" or expected.dtype.kind in "iu":
        return result.shape == expected.shape and bool(np.array_equal(result, expected))
    return float32_sum_check(result, expected)


# ------------------------------------------------------------------------- xarray

#: The xarray workloads' dimension names, for the bench's 3-D shape.
XARRAY_DIMS = ("time", "lat", "lon")


def _data_array(shape: tuple[int, ...], rng: np.random.Generator):
    """A float32 ``xarray.DataArray`` (time, lat, lon) with 10 % NaN and a daily
    ``datetime64`` time coordinate."""
    import xarray as xr

    (x,) = random_float32_with_nan(shape, rng)
    dims = XARRAY_DIMS[-x.ndim:]
    coords = {dims[0]: np.arange(x.shape[0]).astype("datetime64[D]")}
    return (xr.DataArray(x, dims=dims, coords=coords),)


def xarray_workload(method: str, dim: str) -> Workload:
    """``arr.<method>(dim=dim)`` of a DataArray with missing values: axisops'
    accessor (``arr.axisops.<method>``) against xarray's own method with its default
    engine (``skipna``: numbagg or bottleneck where installed, else NumPy's
    nan-functions), NumPy's nan-function on the values as the reference."""
    def axisops_factory(arr):
        import axisops.xarray  # noqa: F401  (registers the accessor)

        fn = getattr(arr.axisops, method)
        return lambda: fn(dim=dim).values

    def xarray_factory(arr):
        fn = getattr(arr, method)
        return lambda: fn(dim=dim).values

    def numpy_factory(arr):
        axis = arr.dims.index(dim)
        values = arr.values
        if method in ("idxmax", "idxmin"):
            labels = arr[dim].values
            arg = np.nanargmax if method == "idxmax" else np.nanargmin
            return lambda: labels[arg(values, axis=axis)]
        fn = getattr(np, "nan" + method)
        return lambda: fn(values, axis=axis)

    return Workload(
        name=f"xarray {method} dim={dim}, 10% NaN",
        op="xarray",
        setup=_data_array,
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "xarray": xarray_factory},
        check=_xarray_check,
        note="a DataArray (time, lat, lon) with a datetime64 time coordinate; skipna as "
             "xarray's default; results as NumPy arrays (.values)",
    )


def _xarray_check(result, expected) -> bool:
    result, expected = np.asarray(result), np.asarray(expected)
    if expected.dtype.kind == "M":  # idxmax: the coordinate labels, exactly
        return result.shape == expected.shape and bool(np.array_equal(result, expected))
    return _nan_check(result, expected)

"""The ``.axisops`` accessor of ``xarray.DataArray`` and ``xarray.Dataset``.

``import axisops.xarray`` registers it (the ``axisops[xarray]`` extra installs
xarray). Every reduction, arg-reduction, scan and moving window of axisops is a method taking
dimension names (``dim``: a name, a sequence of names, or None for every
dimension) instead of axes::

    temperature.axisops.idxmax(dim="time")      # the times of the maxima
    temperature.axisops.mean(dim=("lat", "lon"))

``skipna=None`` follows xarray: the ``nan`` operators for float, complex and
datetime data, the plain ones otherwise; ``skipna=False`` propagates NaN.
Coordinates along the dimensions that remain are kept, attributes dropped and the
name kept (xarray's defaults for reductions); a scan keeps every coordinate.
NumPy-backed data runs on the CPU kernels, dask-backed data stays lazy
(:mod:`axisops.dask`).

Decisions (the contract leaves them to xarray's habits):

* ``argmax``/``argmin`` return int64 index DataArrays; an all-NaN slice raises as
  NumPy does unless ``all_nan_index`` is an int (-1 is the usual choice);
* ``idxmax``/``idxmin`` return the labels of ``dim``'s coordinate (one dimension),
  with ``fill_value`` (default NaN, NaT for dates) for all-NaN slices, named after
  the coordinate and with the array's attributes, as xarray's;
* ``cummax``/``cummin`` return ``(values, indices)``, two DataArrays;
* on a Dataset, each data variable holding the dimensions is reduced; the others
  are kept as they are, as xarray does;
* ``median``/``quantile`` skip NaN by default for floats (``skipna``) and, with
  ``rank``, keep the attributes, as xarray's; ``sort``, ``argsort`` and ``top_k`` drop the coordinates along their
  dimension (its positions no longer hold their labels);
* the moving windows keep every coordinate (a window's result sits at its last
  position, as ``rolling``'s default ``center=False``); there is no ``skipna``:
  a moving window always skips NaN, and ``min_count`` (default ``window``) is
  ``rolling``'s ``min_periods``. Pooling has no accessor method: its
  ``(N, C, *spatial)`` layout is not one of dimension names.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np
import xarray as xr

import axisops

__all__ = ["AxisopsDataArrayAccessor", "AxisopsDatasetAccessor"]

Dims = Hashable | Iterable[Hashable] | None


def _dims(obj: xr.DataArray | xr.Dataset, dim: Dims) -> tuple[Hashable, ...]:
    if dim is None:
        return tuple(obj.dims)
    if isinstance(dim, str) or not isinstance(dim, Iterable):
        return (dim,)
    return tuple(dim)


def _axes(obj: xr.DataArray, dims: tuple[Hashable, ...]) -> tuple[int, ...]:
    missing = [d for d in dims if d not in obj.dims]
    if missing:
        raise ValueError(f"axisops: {missing[0]!r} is not a dimension of the array; its "
                         f"dimensions are {tuple(obj.dims)}")
    return tuple(sorted(obj.get_axis_num(d) for d in dims))


def _skips(obj: xr.DataArray, skipna: bool | None) -> bool:
    return obj.dtype.kind in "fcmM" if skipna is None else bool(skipna)


def _reduced(obj: xr.DataArray, data: Any, dims: tuple[Hashable, ...], keepdims: bool = False):
    """*data* as the DataArray of *obj* reduced over *dims*: the remaining
    dimensions and their coordinates, *obj*'s name, no attributes."""
    kept = [d for d in obj.dims if d not in dims] if not keepdims else list(obj.dims)
    coords = {name: c for name, c in obj.coords.items()
              if all(d in kept for d in c.dims) and (not keepdims or not set(c.dims) & set(dims))}
    return xr.DataArray(data, dims=kept, coords=coords, name=obj.name)


def _scanned(obj: xr.DataArray, data: Any):
    return xr.DataArray(data, dims=obj.dims, coords=obj.coords, name=obj.name, attrs={})


_VALUE = {"sum": "nansum", "prod": "nanprod", "mean": "nanmean", "var": "nanvar",
          "std": "nanstd", "max": "nanmax", "min": "nanmin"}
_SCAN = {"cumsum": "nancumsum", "cumprod": "nancumprod"}


class AxisopsDataArrayAccessor:
    """``DataArray.axisops``: axisops' operators by dimension name (see the module).

    Methods: ``sum``, ``prod``, ``mean``, ``var``, ``std``, ``max``, ``min``
    (``dim``, ``skipna``, ``keepdims``; ``dtype`` or ``ddof`` as the operator),
    ``count``, ``argmax``/``argmin`` (``all_nan_index``), ``idxmax``/``idxmin``
    (one ``dim``, ``fill_value``), ``cumsum``/``cumprod`` (one ``dim``,
    ``exclusive``, ``reverse``), ``cummax``/``cummin`` (``(values, indices)``),
    and the trailing moving windows ``moving_sum``, ``moving_mean``,
    ``moving_var``, ``moving_std``, ``moving_max``, ``moving_min``,
    ``moving_argmax``, ``moving_argmin`` (one ``dim``, ``window``, ``min_count``;
    NaN skipped, as xarray's ``rolling``); the order statistics ``median``,
    ``quantile`` (xarray's: a ``quantile`` coordinate), ``sort``, ``argsort``,
    ``top_k``, ``kthvalue``, ``rank``, ``moving_median``, ``moving_quantile``,
    ``moving_rank``. Each returns a DataArray (two for ``cummax``/``cummin``,
    ``top_k`` and ``kthvalue``).

    Parameters
    ----------
    obj : xarray.DataArray
        The array the accessor belongs to (xarray passes it).

    Examples
    --------
    >>> import numpy as np, xarray as xr, axisops.xarray
    >>> a = xr.DataArray([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]],
    ...                  dims=("site", "time"), coords={"time": [10, 20, 30]})
    >>> a.axisops.mean(dim="time").values
    array([ 2., nan])
    >>> a.axisops.idxmax(dim="time").values
    array([30., nan])
    """

    def __init__(self, obj: xr.DataArray):
        self._obj = obj

    # ---------------------------------------------------------------- reductions
    def _value(self, op: str, dim: Dims, skipna: bool | None, keepdims: bool, **options):
        obj = self._obj
        dims = _dims(obj, dim)
        name = _VALUE[op] if _skips(obj, skipna) and op in _VALUE else op
        data = getattr(axisops, name)(obj.data, axis=_axes(obj, dims), keepdims=keepdims,
                                      **options)
        return _reduced(obj, data, dims, keepdims)

    def sum(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False,
            dtype=None):
        """Sum over *dim* (NaN skipped by default for floats)."""
        return self._value("sum", dim, skipna, keepdims, dtype=dtype)

    def prod(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False,
             dtype=None):
        """Product over *dim*."""
        return self._value("prod", dim, skipna, keepdims, dtype=dtype)

    def mean(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False,
             dtype=None):
        """Mean over *dim*."""
        return self._value("mean", dim, skipna, keepdims, dtype=dtype)

    def var(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False,
            ddof: float = 0):
        """Variance over *dim* (two-pass)."""
        return self._value("var", dim, skipna, keepdims, ddof=ddof)

    def std(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False,
            ddof: float = 0):
        """Standard deviation over *dim*."""
        return self._value("std", dim, skipna, keepdims, ddof=ddof)

    def max(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False):
        """Maximum over *dim*."""
        return self._value("max", dim, skipna, keepdims)

    def min(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False):
        """Minimum over *dim*."""
        return self._value("min", dim, skipna, keepdims)

    def count(self, dim: Dims = None, *, keepdims: bool = False):
        """Elements that are not NaN (NaT) over *dim*."""
        return self._value("count", dim, False, keepdims)

    # ------------------------------------------------------------ arg-reductions
    def _arg(self, op: str, dim: Dims, skipna, keepdims, all_nan_index):
        obj = self._obj
        dims = _dims(obj, dim)
        options: dict[str, Any] = {"keepdims": keepdims}
        if _skips(obj, skipna):
            op = "nan" + op
            options["all_nan_index"] = all_nan_index
        data = getattr(axisops, op)(obj.data, axis=_axes(obj, dims), **options)
        return _reduced(obj, data, dims, keepdims)

    def argmax(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False,
               all_nan_index: int | None = None):
        """Index of the maximum over *dim* (into the C-ordered block of several)."""
        return self._arg("argmax", dim, skipna, keepdims, all_nan_index)

    def argmin(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False,
               all_nan_index: int | None = None):
        """Index of the minimum over *dim*."""
        return self._arg("argmin", dim, skipna, keepdims, all_nan_index)

    def _idx(self, op: str, dim: Hashable, skipna, fill_value):
        obj = self._obj
        if dim is None or (not isinstance(dim, str) and isinstance(dim, Iterable)):
            raise ValueError(f"axisops: {op} takes one dimension, got {dim!r}")
        index = self._arg("arg" + op[3:], dim, skipna, False, -1)
        labels = obj[dim].values  # the coordinate (or 0, 1, ... without one)
        if fill_value is None:
            fill_value = np.datetime64("NaT") if labels.dtype.kind == "M" else (
                np.timedelta64("NaT") if labels.dtype.kind == "m" else np.nan)
        out_dtype = np.result_type(labels.dtype, np.asarray(fill_value).dtype) \
            if labels.dtype.kind not in "mM" else labels.dtype
        table = np.concatenate([labels.astype(out_dtype), np.asarray([fill_value], out_dtype)])
        # -1 (all NaN) picks the fill value at the end of the table
        data = index.data
        if hasattr(data, "map_blocks"):
            picked = data.map_blocks(lambda i: table[i], dtype=out_dtype)
        else:
            picked = table[np.asarray(data)]
        out = _reduced(obj, picked, (dim,)).rename(dim)  # as xarray names it
        out.attrs = dict(obj.attrs)  # and keeps the attributes (idxmax only)
        return out

    def idxmax(self, dim: Hashable, *, skipna: bool | None = None, fill_value: Any = None):
        """The labels of *dim*'s coordinate at the maxima; *fill_value* where a slice is
        all NaN (NaN, or NaT for dates, by default)."""
        return self._idx("idxmax", dim, skipna, fill_value)

    def idxmin(self, dim: Hashable, *, skipna: bool | None = None, fill_value: Any = None):
        """The labels of *dim*'s coordinate at the minima."""
        return self._idx("idxmin", dim, skipna, fill_value)

    # --------------------------------------------------------------------- scans
    def _scan(self, op: str, dim: Hashable, skipna, **options):
        obj = self._obj
        (axis,) = _axes(obj, (dim,))
        name = _SCAN.get(op, op) if _skips(obj, skipna) else op
        return _scanned(obj, getattr(axisops, name)(obj.data, axis=axis, **options))

    def cumsum(self, dim: Hashable, *, skipna: bool | None = None, exclusive: bool = False,
               reverse: bool = False):
        """Cumulative sum along *dim* (NaN skipped by default for floats)."""
        return self._scan("cumsum", dim, skipna, exclusive=exclusive, reverse=reverse)

    def cumprod(self, dim: Hashable, *, skipna: bool | None = None, exclusive: bool = False,
                reverse: bool = False):
        """Cumulative product along *dim*."""
        return self._scan("cumprod", dim, skipna, exclusive=exclusive, reverse=reverse)

    def cummax(self, dim: Hashable):
        """``(values, indices)`` of the running maximum along *dim* (NaN propagates)."""
        obj = self._obj
        (axis,) = _axes(obj, (dim,))
        values, indices = axisops.cummax(obj.data, axis=axis)
        return _scanned(obj, values), _scanned(obj, indices)

    def cummin(self, dim: Hashable):
        """``(values, indices)`` of the running minimum along *dim*."""
        obj = self._obj
        (axis,) = _axes(obj, (dim,))
        values, indices = axisops.cummin(obj.data, axis=axis)
        return _scanned(obj, values), _scanned(obj, indices)


    # ------------------------------------------------------------ moving windows
    def _moving(self, op: str, dim: Hashable, window: int, min_count, **options):
        obj = self._obj
        (axis,) = _axes(obj, (dim,))
        return _scanned(obj, getattr(axisops, op)(obj.data, window, axis, min_count=min_count,
                                                  **options))

    def moving_sum(self, dim: Hashable, window: int, *, min_count: int | None = None):
        """Sum of the trailing *window* elements along *dim*, NaN skipped (xarray's
        ``rolling(dim=window, min_periods=min_count).sum()``)."""
        return self._moving("moving_sum", dim, window, min_count)

    def moving_mean(self, dim: Hashable, window: int, *, min_count: int | None = None):
        """Mean of the trailing *window* elements along *dim*, NaN skipped."""
        return self._moving("moving_mean", dim, window, min_count)

    def moving_var(self, dim: Hashable, window: int, *, min_count: int | None = None,
                   ddof: float = 0):
        """Variance of the trailing *window* elements along *dim*, NaN skipped."""
        return self._moving("moving_var", dim, window, min_count, ddof=ddof)

    def moving_std(self, dim: Hashable, window: int, *, min_count: int | None = None,
                   ddof: float = 0):
        """Standard deviation of the trailing *window* elements along *dim*."""
        return self._moving("moving_std", dim, window, min_count, ddof=ddof)

    def moving_max(self, dim: Hashable, window: int, *, min_count: int | None = None):
        """Maximum of the trailing *window* elements along *dim*, NaN skipped."""
        return self._moving("moving_max", dim, window, min_count)

    def moving_min(self, dim: Hashable, window: int, *, min_count: int | None = None):
        """Minimum of the trailing *window* elements along *dim*, NaN skipped."""
        return self._moving("moving_min", dim, window, min_count)

    def moving_argmax(self, dim: Hashable, window: int, *, min_count: int | None = None):
        """Index along *dim* (int64, -1 where too few values) of each trailing
        window's maximum, the latest of ties."""
        return self._moving("moving_argmax", dim, window, min_count)

    def moving_argmin(self, dim: Hashable, window: int, *, min_count: int | None = None):
        """Index along *dim* of each trailing window's minimum."""
        return self._moving("moving_argmin", dim, window, min_count)


    # ----------------------------------------------------------- order statistics
    def median(self, dim: Dims = None, *, skipna: bool | None = None, keepdims: bool = False):
        """Median over *dim* (NaN skipped by default for floats, as xarray's)."""
        obj = self._obj
        dims = _dims(obj, dim)
        op = axisops.nanmedian if _skips(obj, skipna) else axisops.median
        out = _reduced(obj, op(obj.data, axis=_axes(obj, dims), keepdims=keepdims), dims,
                       keepdims)
        return out.assign_attrs(obj.attrs)  # as xarray's median

    def quantile(self, q, dim: Dims = None, *, method: str = "linear",
                 skipna: bool | None = None, keepdims: bool = False):
        """Quantiles over *dim*, exact on dask-backed data too, as xarray's
        ``quantile``: a scalar *q* gives a scalar ``quantile`` coordinate, a 1-D one a
        leading ``quantile`` dimension with *q* as its coordinate."""
        obj = self._obj
        dims = _dims(obj, dim)
        op = axisops.nanquantile if _skips(obj, skipna) else axisops.quantile
        data = op(obj.data, q, axis=_axes(obj, dims), method=method, keepdims=keepdims)
        qs = np.asarray(q, dtype=np.float64)
        if qs.ndim == 0:
            out = _reduced(obj, data, dims, keepdims).assign_coords(quantile=float(qs))
            return out.assign_attrs(obj.attrs)
        inner = _reduced(obj, data[0], dims, keepdims)
        return xr.DataArray(data, dims=("quantile", *inner.dims),
                            coords={**inner.coords, "quantile": qs}, name=obj.name,
                            attrs=obj.attrs)

    def _lane(self, dim: Hashable, data: Any):
        """*data* with *obj*'s dimensions, the coordinates along *dim* dropped (its
        positions no longer hold their elements)."""
        obj = self._obj
        coords = {n: c for n, c in obj.coords.items() if dim not in c.dims}
        return xr.DataArray(data, dims=obj.dims, coords=coords, name=obj.name)

    def sort(self, dim: Hashable, *, descending: bool = False):
        """The values sorted along *dim* (stable, NaN last)."""
        (axis,) = _axes(self._obj, (dim,))
        return self._lane(dim, axisops.sort(self._obj.data, axis, descending=descending))

    def argsort(self, dim: Hashable, *, descending: bool = False):
        """The positions along *dim* that sort the values."""
        (axis,) = _axes(self._obj, (dim,))
        return self._lane(dim, axisops.argsort(self._obj.data, axis, descending=descending))

    def top_k(self, k: int, dim: Hashable, *, mode: str = "largest", sorted: bool = True):
        """``(values, indices)`` of the *k* largest (or smallest) along *dim*."""
        (axis,) = _axes(self._obj, (dim,))
        values, indices = axisops.top_k(self._obj.data, k, axis, mode=mode, sorted=sorted)
        return self._lane(dim, values), self._lane(dim, indices)

    def kthvalue(self, k: int, dim: Hashable):
        """``(values, indices)`` of the *k*-th smallest along *dim* (from 1)."""
        obj = self._obj
        (axis,) = _axes(obj, (dim,))
        values, indices = axisops.kthvalue(obj.data, k, axis)
        return _reduced(obj, values, (dim,)), _reduced(obj, indices, (dim,))

    def rank(self, dim: Hashable, *, method: str = "average"):
        """Ranks from 1 along *dim*, NaN given NaN (xarray's ``rank``)."""
        (axis,) = _axes(self._obj, (dim,))
        out = _scanned(self._obj, axisops.rank(self._obj.data, axis, method=method))
        return out.assign_attrs(self._obj.attrs)  # as xarray's rank

    def moving_median(self, dim: Hashable, window: int, *, min_count: int | None = None):
        """Median of the trailing *window* elements along *dim*, NaN skipped."""
        return self._moving("moving_median", dim, window, min_count)

    def moving_quantile(self, dim: Hashable, window: int, q: float, *,
                        min_count: int | None = None):
        """Quantile *q* (linear, as ``rolling().quantile``) of each trailing window."""
        obj = self._obj
        (axis,) = _axes(obj, (dim,))
        return _scanned(obj, axisops.moving_quantile(obj.data, window, q, axis,
                                                     min_count=min_count))

    def moving_rank(self, dim: Hashable, window: int, *, min_count: int | None = None):
        """Rank of each element in its trailing window, scaled to [-1, 1]."""
        return self._moving("moving_rank", dim, window, min_count)


class AxisopsDatasetAccessor:
    """``Dataset.axisops``: each method of the DataArray accessor on every data
    variable that holds the dimensions; the others are kept as they are.

    Parameters
    ----------
    obj : xarray.Dataset
        The dataset the accessor belongs to (xarray passes it).

    Examples
    --------
    >>> import numpy as np, xarray as xr, axisops.xarray
    >>> ds = xr.Dataset({"t": (("x", "time"), [[1.0, 5.0], [np.nan, 2.0]]),
    ...                  "label": ("x", ["a", "b"])})
    >>> ds.axisops.max(dim="time")["t"].values
    array([5., 2.])
    """

    def __init__(self, obj: xr.Dataset):
        self._obj = obj

    def __getattr__(self, name: str):
        if name.startswith("_") or not hasattr(AxisopsDataArrayAccessor, name):
            raise AttributeError(name)

        def method(dim: Dims = None, *args, **options):  # args: a moving window's size
            dims = _dims(self._obj, dim) if dim is not None else tuple(self._obj.dims)
            out = {}
            for key, var in self._obj.data_vars.items():
                if all(d in var.dims for d in dims):
                    out[key] = getattr(var.axisops, name)(dim if dim is not None else dims,
                                                          *args, **options)
                else:
                    out[key] = var
            return xr.Dataset(out)

        return method


xr.register_dataarray_accessor("axisops")(AxisopsDataArrayAccessor)
xr.register_dataset_accessor("axisops")(AxisopsDatasetAccessor)

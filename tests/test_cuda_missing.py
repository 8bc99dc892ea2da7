"""The missing-value operators and their gradients on CUDA arrays against the NumPy
path, under Numba's CUDA simulator (see ``tests/test_cuda.py``).

The arrays are small and NaN-heavy: NaN scattered, all-NaN slices next to full
ones, ties, -0.0, integer-valued floats (so that sums are exact in any order),
strided views, 0-d and empty arrays, and rows long enough that the simulator's
planners cut them into chunks and tiles. Results must be device arrays with the
NumPy path's dtype, shape and values: bit for bit for the extremes, their
indices, counts and integer results; within a float bound for the sums, means,
products, variances and their gradients. Warnings (all-NaN slices, ``ddof`` at
or above the count) and errors must be the NumPy path's.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from cases import mismatch, same_bits
from cuda_support import (  # noqa: F401
    axes_of,
    dtype_params,
    float_bound,
    host,
    on_device,
    outcome,
    quick_thread_switches,
)

import axisops
import axisops.cuda

G = axisops.grad
#: The default run: float32 and float16, complex64 and an integer dtype (plain
#: twins); float64 and complex128 compile as float32 and complex64 do (exhaustive).
DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.complex128, np.int32]


def _nan_array(shape, dtype, seed, frac=0.3):
    """Integer values in [-3, 3] (ties, zeros of both signs), NaN at about *frac*
    of the places (in the real or the imaginary part, for complex dtypes)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype(np.float64)
    a[a == 0] = np.where(rng.random(np.count_nonzero(a == 0)) < 0.5, -0.0, 0.0)
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        return a.astype(dtype)
    nan = rng.random(shape) < frac
    if dtype.kind == "c":
        z = a + 1j * rng.integers(-2, 3, shape)
        imag = rng.random(shape) < 0.5
        z.real[nan & ~imag] = np.nan
        z.imag[nan & imag] = np.nan
        return z.astype(dtype)
    a[nan] = np.nan
    return a.astype(dtype)


def arrays(dtype):
    """(name, array) of the cases: all-NaN slices next to full ones, views, 0-d,
    empty, long rows (chunked reductions)."""
    dtype = np.dtype(dtype)
    floats = dtype.kind in "fc"
    mixed = _nan_array((4, 6), dtype, 1)
    if floats:
        mixed[1] = np.nan  # an all-NaN row
        mixed[2] = _nan_array((6,), dtype, 9, frac=0)  # a full one
        mixed[:, 5] = np.nan  # an all-NaN column
    yield "mixed", mixed
    cube = _nan_array((2, 3, 5), dtype, 2)
    if floats:
        cube[1, 2] = np.nan
    yield "cube", cube
    yield "reversed view", mixed[::-1, ::-2]
    yield "transposed cube", cube.transpose(2, 0, 1)
    long = _nan_array((2, 70), dtype, 3, frac=0.2)
    if floats:
        long[1, :] = np.nan
        long[1, 41] = 1  # one element among NaN, in a later chunk
    yield "long", long
    yield "long rows", np.ascontiguousarray(long.T)
    yield "0-d", np.array(np.nan if floats else 2, dtype)
    yield "empty", np.zeros((0, 4), dtype)


def reductions(a):
    out = list(axes_of(a))
    if a.ndim == 3:
        out.append((0, 2))
    return out


def check(fn, a, exact, problems, label, **kwargs):
    """``cuda_support.check`` with a bound that an all-NaN output leaves finite: the
    terms' size is the operator on |x| (in float64) with NaN read as 0."""
    scale = None
    if not exact:
        b = np.abs(a).astype(np.float64)
        want, err = outcome(fn, b, **kwargs) if fn.__name__ != "count" else (None, True)
        scale = None if err is not None else np.nan_to_num(np.abs(np.asarray(want)))
    _compare(fn, (a,), problems, label, exact=exact, scale=scale, **kwargs)


def _problems_of(fn, dtype, exact, extra=None):
    problems: list[str] = []
    for name, a in arrays(dtype):
        for axis in reductions(a):
            check(fn, a, exact, problems, f"{name} axis={axis}", axis=axis)
        if a.ndim >= 2:
            check(fn, a, exact, problems, f"{name} keepdims", axis=0, keepdims=True)
        for label, kwargs in (extra or {}).items():
            check(fn, a, exact, problems, f"{name} {label}", axis=-1 if a.ndim else None,
                  **kwargs)
    return problems


# ------------------------------------------------------------------- forwards


@pytest.mark.parametrize("op", ["nansum", "nanprod", "nanmean", "count"])
@pytest.mark.parametrize("dtype", dtype_params(DTYPES))
def test_nan_sums_products_means_and_counts_match_the_numpy_path(op, dtype):
    exact = op == "count" or (np.dtype(dtype).kind in "iu" and op != "nanmean")
    extra = {"dtype float64": {"dtype": np.float64}} if op == "nansum" and \
        np.dtype(dtype).kind == "f" else None
    problems = _problems_of(getattr(axisops, op), dtype, exact, extra)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", dtype_params(DTYPES))
def test_variances_match_the_numpy_path(op, dtype):
    extra = {"ddof=1": {"ddof": 1}, "ddof=5": {"ddof": 5}}
    problems = _problems_of(getattr(axisops, op), dtype, False, extra)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["nanmax", "nanmin", "nanargmax", "nanargmin"])
@pytest.mark.parametrize("dtype", dtype_params([np.float32, np.float64, np.float16, np.int32]))
def test_nan_extremes_are_the_numpy_paths_bits(op, dtype):
    fn = getattr(axisops, op)
    extra = None
    if op.startswith("nanarg"):
        extra = {"all_nan_index=-1": {"all_nan_index": -1},
                 "last int32": {"select_last_index": True, "index_dtype": np.int32,
                                "all_nan_index": 7}}
    problems = _problems_of(fn, dtype, True, extra)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", dtype_params(DTYPES))
def test_nan_scans_match_the_numpy_path(op, dtype):
    fn = getattr(axisops, op)
    exact = np.dtype(dtype).kind in "iu"
    problems: list[str] = []
    for name, a in arrays(dtype):
        if op == "nancumprod" and a.size > 24:
            a = a[..., :3] if a.ndim else a  # long float products underflow
        for axis in [None, 0, -1] if a.ndim >= 2 else [None, -1] if a.ndim else [None]:
            check(fn, a, exact, problems, f"{name} axis={axis}", axis=axis)
            if axis == -1:
                check(fn, a, exact, problems, f"{name} exclusive reverse", axis=axis,
                      exclusive=True, reverse=True)
    assert not problems, "\n".join(problems)


def test_long_nan_scans_are_tiled_and_bool_scans_skip_nan():
    a = _nan_array((300,), np.float64, 5)
    problems: list[str] = []
    check(axisops.nancumsum, a, False, problems, "tiled nancumsum")
    check(axisops.nancumsum, a, True, problems, "nancumsum dtype=bool", dtype=bool)
    check(axisops.nancumprod, a, True, problems, "nancumprod dtype=bool", dtype=bool)
    check(axisops.nancumsum, a.reshape(3, 100), False, problems, "rows", axis=1, reverse=True)
    b = a[:12].reshape(3, 4) * 1.5  # NaN the identity, then each element converted
    for fn in (axisops.nancumsum, axisops.nancumprod, axisops.nansum, axisops.nanprod):
        check(fn, b, True, problems, f"{fn.__name__} dtype=int32", axis=1, dtype=np.int32)
        check(fn, b, True, problems, f"{fn.__name__} dtype=uint8", axis=0, dtype=np.uint8)
    assert not problems, "\n".join(problems)


def _warnings_of(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            fn(*args, **kwargs)
        except ValueError:
            pass
    return sorted(f"{w.category.__name__}: {w.message}" for w in seen)


@pytest.mark.parametrize("op, kwargs", [
    ("nanmean", {}), ("nanvar", {}), ("nanstd", {"ddof": 1}), ("nanmax", {}), ("nanmin", {}),
    ("var", {"ddof": 6}), ("std", {"ddof": 2.5}), ("nansum", {}), ("nanargmax", {}),
    ("count", {})])
def test_warnings_are_the_numpy_paths(op, kwargs):
    fn = getattr(axisops, op)
    a = _nan_array((4, 6), np.float32, 1)
    a[1] = np.nan
    full = np.ascontiguousarray(a[[0, 2, 3]][:, :2])
    full[np.isnan(full)] = 1
    for x in (a, full):
        want = _warnings_of(fn, x, axis=1, **kwargs)
        assert _warnings_of(fn, on_device(x), axis=1, **kwargs) == want, (op, x)


def test_errors_are_the_numpy_paths():
    a = _nan_array((3, 4), np.float32, 4)
    a[1] = np.nan
    problems: list[str] = []
    calls = [
        ("nanargmax all-NaN", axisops.nanargmax, a, {"axis": 1}),
        ("nanargmin all-NaN keepdims", axisops.nanargmin, a, {"axis": 1, "keepdims": True}),
        ("nanargmax all-NaN axis=None", axisops.nanargmax, np.full(3, np.nan, np.float32), {}),
        ("all_nan_index float", axisops.nanargmax, a, {"axis": 1, "all_nan_index": 1.5}),
        ("all_nan_index bool", axisops.nanargmin, a, {"all_nan_index": True}),
        ("ddof str", axisops.nanvar, a, {"ddof": "1"}),
        ("ddof bool", axisops.std, a, {"ddof": True}),
        ("complex nanmax", axisops.nanmax, a.astype(np.complex64), {"axis": 0}),
        ("empty nanargmax", axisops.nanargmax, np.zeros((3, 0), np.float32), {"axis": 1}),
        ("empty nanmax", axisops.nanmax, np.zeros((3, 0), np.float32), {"axis": 1}),
        ("bad axis", axisops.nanmean, a, {"axis": 2}),
        ("bad index_dtype", axisops.nanargmax, a, {"index_dtype": np.float32}),
    ]
    for label, fn, x, kwargs in calls:
        check(fn, x, True, problems, label, **kwargs)
    assert not problems, "\n".join(problems)
    with pytest.raises(ValueError, match=r"nanargmax: All-NaN slice encountered \(at output "
                                         r"position \(1,\)\)"):
        axisops.nanargmax(on_device(a), axis=1)


def test_results_are_device_arrays_every_run_the_same():
    a = _nan_array((2, 70), np.float32, 6)
    d = on_device(a)
    for fn in (axisops.nansum, axisops.nanmean, axisops.nanvar, axisops.count):
        first = host(fn(d, axis=1))
        assert np.array_equal(first, host(fn(d, axis=1)), equal_nan=True)
    r = axisops.nanmax(d)
    assert axisops.cuda.is_cuda_array(r) and host(r).shape == ()


# ------------------------------------------------------------------ gradients


def _compare(fn, args, problems, label, *, exact, scale=None, **kwargs):
    """*fn* of the host arrays *args* on the host and on the device (device copies):
    the same error, or results equal in bits (*exact*) or within a float bound of
    the terms' size *scale* (the result's by default)."""
    want, werr = outcome(fn, *args, **kwargs)
    got, gerr = outcome(fn, *map(on_device, args), **kwargs)
    if werr is not None or gerr is not None:
        if type(werr) is not type(gerr) or str(werr) != str(gerr):
            problems.append(f"{label}: NumPy raised {werr!r}, device {gerr!r}")
        return
    want = np.asarray(want)
    got = host(got)
    if exact:
        msg = same_bits(got, want) if want.dtype.kind != "c" else (
            mismatch(got, want) or same_bits(*(np.ascontiguousarray(v).reshape(-1).view(
                v.real.dtype) for v in (got, want))))
    else:
        terms = np.nan_to_num(np.abs(want)) if scale is None else scale
        size = max(2, max(math.prod(np.shape(a)) for a in args))
        if want.dtype.kind == "c":
            msg = mismatch(got, want) if got.dtype != want.dtype or got.shape != want.shape \
                else next((m for part in (np.real, np.imag) if (m := mismatch(
                    part(got), part(want), float_bound(part(want), terms, size)))), None)
        else:
            msg = mismatch(got, want, float_bound(want, terms, size))
    if msg:
        problems.append(f"{label}: {msg}")


def _g(x, axis, keepdims, dtype, seed=7):
    shape = np.shape(np.sum(np.zeros(x.shape), axis=axis, keepdims=keepdims))
    g = np.random.default_rng(seed).integers(1, 5, shape).astype(dtype)
    return g


def _grad_cases(dtype):
    for name, x in arrays(dtype):
        if name in ("long", "long rows"):
            x = x[:, :9] if name == "long" else x[:9]
        yield name, x


@pytest.mark.parametrize("op", ["nansum", "nanmean", "nanprod", "nanmax", "nanmin"])
@pytest.mark.parametrize("dtype", dtype_params([np.float32, np.float64, np.float16, np.complex64,
                                                np.int32]))
def test_reduction_gradients_match_the_numpy_path(op, dtype):
    fn = getattr(G, op)
    if op in ("nanmax", "nanmin") and np.dtype(dtype).kind == "c":  # no order: both refuse
        x = np.ones((2, 3), dtype)
        g = np.ones(2, dtype)
        _, want = outcome(fn, g, x, axis=1)
        _, got = outcome(fn, on_device(g), on_device(x), axis=1)
        assert isinstance(want, TypeError) and type(got) is type(want), (want, got)
        assert str(got) == str(want)
        return
    g_dtype = np.dtype(dtype) if np.dtype(dtype).kind in "fc" else np.dtype(np.float32)
    # nansum, nanmax, nanmin: the NumPy path's bits; nanmean divides (complex: by
    # another algorithm); nanprod multiplies in another order
    exact = op in ("nansum", "nanmax", "nanmin") or (op == "nanmean" and g_dtype.kind == "f")
    problems: list[str] = []
    for name, x in _grad_cases(dtype):
        if op == "nanprod" and x.size > 24:
            x = x[..., :3]
        for axis in reductions(x):
            _compare(fn, (_g(x, axis, False, g_dtype), x), problems, f"{name} axis={axis}",
                     exact=exact, axis=axis)
        if x.ndim >= 2:
            _compare(fn, (_g(x, 0, True, g_dtype), x), problems, f"{name} keepdims", exact=exact,
                     axis=0, keepdims=True)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", dtype_params([np.float32, np.float64, np.complex64, np.int32]))
def test_scan_gradients_match_the_numpy_path(op, dtype):
    fn = getattr(G, op)
    g_dtype = np.dtype(dtype) if np.dtype(dtype).kind in "fc" else np.dtype(np.float32)
    problems: list[str] = []
    for name, x in _grad_cases(dtype):
        x = x[..., :4] if x.ndim else x
        for axis in [None, 0, -1] if x.ndim >= 2 else [None, -1] if x.ndim else [None]:
            shape = (x.size,) if axis is None and x.ndim else x.shape
            g = np.random.default_rng(3).integers(1, 4, shape).astype(g_dtype)
            _compare(fn, (g, x), problems, f"{name} axis={axis}", exact=False, axis=axis)
            if axis == -1:
                _compare(fn, (g, x), problems, f"{name} exclusive reverse", exact=False,
                         axis=axis, exclusive=True, reverse=True)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", dtype_params([np.float32, np.float64, np.float16, np.complex64,
                                                np.int32]))
def test_variance_gradients_match_the_numpy_path(op, dtype):
    fn = getattr(G, op)
    g_dtype = np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)
    problems: list[str] = []
    for name, x in _grad_cases(dtype):
        finite = np.abs(x[~np.isnan(x)]) if x.dtype.kind in "fc" else np.abs(x)
        big = float(finite.max()) if finite.size else 1.0
        for axis in reductions(x):
            for ddof in (0, 1):
                g = _g(x, axis, False, g_dtype)
                # the mean differs in its last bits: a deviation's error is the mean's
                scale = 4 * float(np.abs(g).max(initial=1)) * (big + 1)
                _compare(fn, (g, x), problems, f"{name} axis={axis} ddof={ddof}", exact=False,
                         scale=scale, axis=axis, ddof=ddof)
    assert not problems, "\n".join(problems)


def test_gradient_errors_and_host_x_are_the_numpy_paths():
    x = _nan_array((3, 4), np.float32, 8)
    x[2] = np.nan
    g = np.ones(3, np.float32)
    problems: list[str] = []
    for op in ("nansum", "nanmean", "nanmax", "nanvar"):
        _compare(getattr(G, op), (np.ones(4, np.float32), x), problems, f"{op} bad g shape",
                 exact=True, axis=1)
    _compare(G.nanmax, (g, np.zeros((3, 0), np.float32)), problems, "empty reduction",
             exact=True, axis=1)
    _compare(G.nanstd, (g, x), problems, "bad ddof", exact=True, axis=1, ddof="x")
    assert not problems, "\n".join(problems)
    got = G.nanmean(on_device(g), x, axis=1)  # x on the host: uploaded
    assert axisops.cuda.is_cuda_array(got)
    assert np.array_equal(host(got), G.nanmean(g, x, axis=1))

"""The gradients of the reductions and scans on CUDA arrays against the NumPy path,
under Numba's CUDA simulator (see ``tests/test_cuda.py``).

``g`` (and ``x`` or ``indices``) are device arrays of the edge cases' shapes and
layouts (strided views, tiny, up to 3-D); results must be device arrays with the
NumPy path's dtype, shape and values: bit for bit for sum, mean, max, min,
cummax, cummin and integer or bool cumsum (complex: both parts' bits), within a
float rounding bound for cumsum, prod, cumprod and logcumsumexp; and the same
exception type and message for bad input.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from cases import mismatch, same_bits, values
from cuda_support import (  # noqa: F401
    LAYOUT_DTYPES,
    VALUE_CASES,
    device_cases,
    dtype_params,
    float_bound,
    host,
    on_device,
    outcome,
    quick_thread_switches,
)

import axisops
import axisops.cuda
from axisops._axes import normalize_axes, reduced_shape

G = axisops.grad
RNG = np.random.default_rng(11)
# the edge cases overflow on purpose (inf * 0, products past the range)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def shapes_of(dtype=np.float32):
    """The edge cases of one dtype (values and layouts; zero-size ones included)."""
    return list(device_cases([dtype]))


def strided(a: np.ndarray, k: int) -> np.ndarray:
    """*a*'s values in another layout, chosen by k: C order, Fortran order, or a
    reversed (negative-stride) view."""
    if a.ndim == 0 or k % 3 == 0:
        return a
    if k % 3 == 1:
        out = np.empty(a.shape[::-1], a.dtype).T
    else:
        out = np.empty(a.shape, a.dtype)[(slice(None, None, -1),) * a.ndim]
    out[...] = a
    return out


def scan_axes(a):
    return [None, 0, -1] if a.ndim >= 2 else [None, -1] if a.ndim else [None]


def bits(got: np.ndarray, want: np.ndarray):
    """same_bits, complex arrays compared part by part."""
    if want.dtype.kind == "c":
        if got.dtype != want.dtype or got.shape != want.shape:
            return mismatch(got, want)
        part = np.dtype(want.dtype.char.lower())
        return same_bits(np.ascontiguousarray(got).reshape(-1).view(part),
                         np.ascontiguousarray(want).reshape(-1).view(part))
    return same_bits(got, want)


def compare(fn, g, problems, label, *, exact, scale=None, **kwargs):
    """*fn* with ``g`` (and device keyword arrays) on the host and on the device: the
    same error, or results equal in bits (*exact*) or within a float bound of the
    terms' size (*scale*: the same gradient of |g| and |x|; the result by default)."""
    on_host = {k: host(v) if axisops.cuda.is_cuda_array(v) else v for k, v in kwargs.items()}
    want, werr = outcome(fn, g, **on_host)
    got, gerr = outcome(fn, on_device(g), **kwargs)
    if werr is not None or gerr is not None:
        if type(werr) is not type(gerr) or str(werr) != str(gerr):
            problems.append(f"{label}: NumPy raised {werr!r}, device {gerr!r}")
        return
    want = np.asarray(want)
    got = host(got)
    if exact:
        msg = bits(got, want)
    else:
        size = math.prod(want.shape)
        terms = np.abs(np.asarray(scale if scale is not None else want))
        if want.dtype.kind == "c":
            msg = (mismatch(got, want) if got.dtype != want.dtype or got.shape != want.shape
                   else next((m for part in (np.real, np.imag) if (m := mismatch(
                       part(got), part(want), float_bound(part(want), terms, size)))), None))
        else:
            msg = mismatch(got, want, float_bound(want, terms, size))
    if msg:
        problems.append(f"{label}: {msg}")


def forward_shape(shape, axis, keepdims):
    return reduced_shape(shape, normalize_axes(axis, len(shape), "t"), keepdims)


def reduction_axes(a):
    out = [(None, False), (-1, False), ((), False)] if a.ndim else [(None, False), (None, True)]
    if a.ndim >= 2:
        out += [(0, True), ((0, a.ndim - 1), False)]
    return out


# ------------------------------------------------------------------- reductions


@pytest.mark.parametrize("dtype", dtype_params([np.bool_, np.int8, np.uint64, np.float16, np.float32, np.float64, np.complex64]))
def test_sum_and_mean_broadcast_g_with_the_numpy_paths_bits(dtype, exhaustive):
    problems: list[str] = []
    # the cases are shapes only (g's layout is strided's): the shapes, axes and
    # layouts are read alike for every dtype of g, which only its copy and mean's
    # division see. By default the dtypes outside LAYOUT_DTYPES take the plain
    # and empty shapes (0-D to 3-D; g in C order, Fortran order or reversed), the
    # others every one
    every_shape = exhaustive or np.dtype(dtype) in LAYOUT_DTYPES
    for k, (name, a) in enumerate(shapes_of()):
        if "view" in name and k % 2:
            continue
        if not every_shape and ("view" in name or any(v in name for v in VALUE_CASES)):
            continue
        for axis, keepdims in reduction_axes(a):
            g = strided(values(dtype, forward_shape(a.shape, axis, keepdims), RNG), k)
            for fn in (G.sum, G.mean):
                compare(fn, g, problems, f"{fn.__name__} {name} axis={axis} kd={keepdims}",
                        exact=True, x_shape=a.shape, axis=axis, keepdims=keepdims)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", dtype_params([np.bool_, np.int8, np.uint64, np.float16, np.float32, np.float64]))
def test_max_min_split_ties_with_the_numpy_paths_bits(op, dtype, exhaustive):
    # ties, NaN slices and -0.0 against +0.0 come from the cases; g of several dtypes
    problems: list[str] = []
    fn = getattr(G, op)
    g_dtypes = [np.float32, np.float16, np.int32, np.float64, np.uint8, np.complex64]
    for k, (name, a) in enumerate(shapes_of(dtype)):
        if op == "min" and not exhaustive and not any(v in name for v in VALUE_CASES):
            # grad.min is grad.max's kernels after the forward min: by default min
            # takes the value cases (its own ties, NaN and -0.0), max every case
            continue
        for j, (axis, keepdims) in enumerate(reduction_axes(a)):
            g_dtype = g_dtypes[(k + j) % len(g_dtypes)]
            g = strided(values(g_dtype, forward_shape(a.shape, axis, keepdims), RNG), k + j)
            x = on_device(a) if (k + j) % 4 else a  # a host x is uploaded
            compare(fn, g, problems, f"{name} axis={axis} kd={keepdims} g {g.dtype}",
                    exact=True, x=x, axis=axis, keepdims=keepdims)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dtype", dtype_params([np.int8, np.float16, np.float32, np.float64, np.complex64]))
def test_prod_matches_the_numpy_path(dtype):
    # zeros (one, or two in a slice), infinities and NaN from the cases
    problems: list[str] = []
    for k, (name, a) in enumerate(shapes_of(dtype)):
        if "view" in name and k % 2:
            continue
        for axis, keepdims in reduction_axes(a):
            g = strided(values(np.float32 if k % 2 else dtype,
                               forward_shape(a.shape, axis, keepdims), RNG), k)
            kwargs = {"axis": axis, "keepdims": keepdims}
            scale = _outcome_value(G.prod, np.abs(g), x=np.abs(a), **kwargs)
            compare(G.prod, g, problems, f"{name} axis={axis} kd={keepdims}", exact=False,
                    scale=scale, x=on_device(a), **kwargs)
    assert not problems, "\n".join(problems)


def test_prod_where_a_running_product_leaves_the_floats():
    # before/after products overflow or underflow on their own: the exponent-apart pass
    problems: list[str] = []
    x32 = np.array([[1e30, 1e30, 1e-30, 1e-30], [3e-39, 2.0, 1e38, -0.5]], np.float32)
    x64 = np.array([[1e300, 1e300, 1e-300, 1e-300, 7.0], [5e-320, 1e308, 4.0, 0.0, 2.0]])
    for x in (x32, x64, x64[:, ::-1].T):
        for axis in (None, 0, -1):
            g = values(x.dtype, forward_shape(x.shape, axis, False), RNG) + 1
            compare(G.prod, g, problems, f"{x.dtype} axis={axis}", exact=False,
                    x=on_device(x), axis=axis)
    got = host(G.prod(on_device(np.ones((), np.float32)), on_device(x32[0])))
    assert np.all(np.isfinite(got)) and np.allclose(got, [1e-30, 1e-30, 1e30, 1e30], rtol=1e-6)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------ scans


@pytest.mark.parametrize("dtype", dtype_params([np.bool_, np.int8, np.uint64, np.float16, np.float32, np.float64, np.complex64]))
def test_cumsum_sums_g_the_other_way(dtype, exhaustive):
    problems: list[str] = []
    exact = np.dtype(dtype).kind in "biu"
    # as in test_sum_and_mean_broadcast_g_with_the_numpy_paths_bits: the cases are
    # shapes; the dtypes outside LAYOUT_DTYPES take the plain and empty ones
    every_shape = exhaustive or np.dtype(dtype) in LAYOUT_DTYPES
    for k, (name, a) in enumerate(shapes_of()):
        if "view" in name and k % 2:
            continue
        if not every_shape and ("view" in name or any(v in name for v in VALUE_CASES)):
            continue
        for j, axis in enumerate(scan_axes(a)):
            shape = a.shape if axis is not None else ((a.size,) if a.ndim else ())
            g = strided(values(dtype, shape, RNG), k + j)
            options = [{}, {"exclusive": True, "reverse": True}, {"reverse": True},
                       {"exclusive": True}][(k + j) % 4]
            scale = _outcome_value(G.cumsum, np.abs(g.astype(np.complex128 if g.dtype.kind ==
                                                                "c" else np.float64)),
                                   x_shape=a.shape, axis=axis, **options)
            compare(G.cumsum, g, problems, f"{name} axis={axis} {options}", exact=exact,
                    scale=scale, x_shape=a.shape, axis=axis, **options)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dtype", dtype_params([np.int8, np.float16, np.float32, np.float64, np.complex64]))
def test_cumprod_matches_the_numpy_path(dtype):
    problems: list[str] = []
    for k, (name, a) in enumerate(shapes_of(dtype)):
        if "view" in name and k % 2:
            continue
        for j, axis in enumerate(scan_axes(a)):
            shape = a.shape if axis is not None else ((a.size,) if a.ndim else ())
            g = strided(values(np.float32 if j % 2 else dtype, shape, RNG), k + j)
            for options in ({}, {"exclusive": True, "reverse": True})[: 1 + (k + j) % 2]:
                kwargs = {"axis": axis, **options}
                scale = _outcome_value(G.cumprod, np.abs(g), x=np.abs(a), **kwargs)
                compare(G.cumprod, g, problems, f"{name} axis={axis} {options}", exact=False,
                        scale=scale, x=on_device(a), **kwargs)
    assert not problems, "\n".join(problems)


def test_cumprod_where_a_running_product_leaves_the_floats():
    problems: list[str] = []
    x = np.array([[1e-30, 1e-30, 1e30, 1e30, 3.0], [2e-39, 1e38, 1e38, 0.0, 4.0]], np.float32)
    g = np.array([[1.0, -2.0, 3e-20, 1e20, 1.0], [1e30, 1.0, 1e-30, 5.0, 1.0]], np.float32)
    for options in ({}, {"exclusive": True}, {"reverse": True},
                    {"exclusive": True, "reverse": True}):
        for axis in (1, 0):
            compare(G.cumprod, g, problems, f"{options} axis={axis}", exact=False,
                    x=on_device(x), axis=axis, **options)
        compare(G.cumprod, g.astype(np.float64) * 1e280, problems, f"float64 {options}",
                exact=False, x=on_device(x.astype(np.float64) ** 9), axis=1, **options)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dtype", dtype_params([np.int8, np.float16, np.float32, np.float64]))
def test_logcumsumexp_matches_the_numpy_path(dtype):
    # -inf prefixes pass g through, NaN lanes are NaN, +inf ties (the special cases)
    problems: list[str] = []
    for k, (name, a) in enumerate(shapes_of(dtype)):
        if "view" in name and k % 2:
            continue
        for j, axis in enumerate(scan_axes(a)):
            shape = a.shape if axis is not None else ((a.size,) if a.ndim else ())
            g = strided(values([np.float32, np.float64, np.int8][(k + j) % 3], shape, RNG), k + j)
            scale = _outcome_value(G.logcumsumexp, np.abs(g), x=a, axis=axis)
            compare(G.logcumsumexp, g, problems, f"{name} axis={axis} g {g.dtype}", exact=False,
                    scale=scale, x=on_device(a), axis=axis)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", dtype_params([np.bool_, np.int8, np.float16, np.float32, np.float64, np.complex64]))
def test_cummax_cummin_add_g_at_the_indices_with_the_numpy_paths_bits(op, dtype, exhaustive):
    # the forward's indices of the cases (ties, NaN), device or host, several dtypes
    problems: list[str] = []
    index_dtypes = [np.int64, np.int32, np.uint64, np.uint8]
    for k, (name, a) in enumerate(shapes_of(np.float32)):
        if "view" in name and (k % 2 or (op == "cummin" and not exhaustive)):
            continue  # cummin is cummax's code: by default the shapes of views run with cummax
        for j, axis in enumerate(scan_axes(a)):
            indices = getattr(axisops, op)(a, axis=axis).indices
            g = strided(values(dtype, indices.shape, RNG), k + j)
            i = strided(indices.astype(index_dtypes[(k + j) % 4]), k + j + 1)
            compare(getattr(G, op), g, problems, f"{name} axis={axis} {i.dtype}", exact=True,
                    indices=on_device(i) if (k + j) % 3 else i, x_shape=a.shape, axis=axis)
    assert not problems, "\n".join(problems)


def test_cummax_sums_any_indices_in_index_order():
    # repeated indices out of run order: the sum at each place is taken in index order
    g = np.array([[1e8, 1.0, -1e8, 1.0, 0.5], [3.0, -0.0, 2.0, 1e-8, -3.0]], np.float32)
    idx = np.array([[0, 4, 0, 0, 4], [1, 1, 3, 1, 3]])
    problems: list[str] = []
    for dt in (np.float32, np.float16, np.int8, np.complex64):
        compare(G.cummax, g.astype(dt), problems, f"{dt}", exact=True, indices=on_device(idx),
                x_shape=(2, 5), axis=1)
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------- errors


def test_bad_input_raises_the_numpy_paths_errors():
    problems: list[str] = []
    g2, g3 = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    x = np.arange(6.0).reshape(2, 3)
    calls = [  # (label, function, g, keyword arguments)
        ("sum g shape", G.sum, g2, {"x_shape": (2, 3), "axis": 0}),
        ("sum axis", G.sum, g3, {"x_shape": (2, 3), "axis": 2}),
        ("mean repeated axis", G.mean, g3, {"x_shape": (2, 3), "axis": (0, 0)}),
        ("mean axis type", G.mean, g3, {"x_shape": (2, 3), "axis": 0.5}),
        ("max g shape", G.max, g2, {"x": on_device(x), "axis": 1}),
        ("max complex x", G.max, g3, {"x": on_device(x.astype(np.complex64)), "axis": 0}),
        ("min empty set", G.min, np.ones(2, np.float32), {"x": on_device(x[:, :0]), "axis": 1}),
        ("min empty x", G.min, np.ones((0,), np.float32), {"x": x[:0], "axis": 1}),
        ("prod g shape", G.prod, g2, {"x": x, "axis": 0}),
        ("prod x dtype", G.prod, g3, {"x": np.array(["a", "b"]), "axis": 0}),
        ("prod host list", G.prod, np.ones(2, np.float32), {"x": [[1, 2], [3, 0]], "axis": 1}),
        ("cumsum g shape", G.cumsum, g2, {"x_shape": (2, 3)}),
        ("cumsum axis", G.cumsum, g2, {"x_shape": (2, 3), "axis": (0, 1)}),
        ("cumprod g shape", G.cumprod, g3, {"x": on_device(x), "axis": 0}),
        ("cumprod axis", G.cumprod, g2, {"x": on_device(x), "axis": -3}),
        ("logcumsumexp g shape", G.logcumsumexp, g3, {"x": x}),
        ("logcumsumexp complex x", G.logcumsumexp, g2, {"x": x.astype(np.complex64), "axis": 0}),
        ("cummax float indices", G.cummax, g2, {"indices": on_device(x), "x_shape": (2, 3),
                                                "axis": 1}),
        ("cummax indices shape", G.cummax, g2, {"indices": np.zeros((3, 2), np.int64),
                                                "x_shape": (2, 3), "axis": 1}),
        ("cummin g shape", G.cummin, g3, {"indices": np.zeros(3, np.int64), "x_shape": (2, 3),
                                          "axis": 1}),
    ]
    bad = np.array([[0, 1, 3], [0, -1, 5]])  # 3 is the first outside [0, 3) in C order
    for dt in (np.int64, np.int16, np.int8):
        calls.append((f"cummax {np.dtype(dt)} out of range", G.cummax, g2,
                      {"indices": on_device(bad.astype(dt)), "x_shape": (2, 3), "axis": 1}))
    calls.append(("cummin negative", G.cummin, g2,
                  {"indices": on_device(np.array([[0, 1, 2], [0, -1, 2]], np.int32)),
                   "x_shape": (2, 3), "axis": 1}))
    calls.append(("cummin host out of range", G.cummin, g3,
                  {"indices": np.array([0, 6, 9]), "x_shape": (3, 2), "axis": None}))
    calls.append(("cummax uint64 past int64", G.cummax, g3,
                  {"indices": on_device(np.array([0, 2**63 + 1, 1], np.uint64)),
                   "x_shape": (3,), "axis": 0}))
    for label, fn, g, kwargs in calls:
        compare(fn, g, problems, label, exact=True, **kwargs)
    assert not problems, "\n".join(problems)
    with pytest.raises(IndexError, match=r"index 3 at position \(0, 2\)"):
        G.cummax(on_device(g2), on_device(bad), (2, 3), axis=1)


def test_a_complex_g_for_logcumsumexp_warns_and_takes_its_real_part():
    g = np.array([1 + 2j, -3j, 0.5], np.complex64)
    x = np.array([0.0, 1.0, -1.0], np.float32)
    with pytest.warns(np.exceptions.ComplexWarning):
        want = G.logcumsumexp(g, x)
    with pytest.warns(np.exceptions.ComplexWarning):
        got = host(G.logcumsumexp(on_device(g), on_device(x)))
    assert got.dtype == want.dtype and np.allclose(got, want, rtol=1e-6)


def test_a_complex_g_with_a_real_x_takes_the_complex_path():
    problems: list[str] = []
    x = np.array([[2.0, 0.0, -1.5], [0.5, 3.0, 0.0]], np.float16)
    g = (values(np.float32, (2, 3), RNG) + 1j * values(np.float32, (2, 3), RNG)).astype(
        np.complex64)
    compare(G.prod, g[:, 0], problems, "prod", exact=False, x=on_device(x), axis=1)
    compare(G.prod, g[0], problems, "prod float64 x", exact=False, x=x.astype(np.float64),
            axis=0)
    for options in ({}, {"exclusive": True, "reverse": True}):
        compare(G.cumprod, g, problems, f"cumprod {options}", exact=False, x=on_device(x),
                axis=1, **options)
    compare(G.max, g[:, 0], problems, "max", exact=True, x=on_device(x), axis=1)
    compare(G.cummin, g[0, :1].reshape(()), problems, "cummin host 0-d indices", exact=True,
            indices=np.array(0), x_shape=())
    assert not problems, "\n".join(problems)


def test_results_are_device_arrays_of_gs_device():
    g = on_device(np.array(2.0, np.float32))
    x = on_device(np.array([[1.0, 3.0], [3.0, 2.0]], np.float32))
    for r in (G.max(g, x), G.sum(g, (2, 2)), G.prod(g, x), G.mean(g, ()),
              G.cumsum(on_device(np.ones(4, np.float32)), (2, 2)),
              G.cummin(g, on_device(np.array(0)), ())):
        assert axisops.cuda.is_cuda_array(r)
    assert host(G.max(g, x)).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert host(G.mean(g, ())).shape == ()


def _outcome_value(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value, error = outcome(fn, *args, **kwargs)
    return None if error is not None else value

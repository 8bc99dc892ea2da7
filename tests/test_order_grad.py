"""Gradients of the order statistics (``axisops.grad.sort``, ``top_k``, ``kthvalue``,
``partition``, ``median``, ``nanmedian``, ``quantile``, ``nanquantile``) against their
twins in ``axisops.reference.order`` (``grad_*``), against central finite differences
(values without ties) and against PyTorch's autograd; ``partition``'s gradient goes
through the library's own ``argpartition``. The functions are looked up when a test
runs: one that is missing fails its test."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import EXHAUSTIVE, distinct_values, finite_difference

from axisops import order as O
from axisops.reference import order as R

METHODS = tuple(R.QUANTILE_METHODS)
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


def G(name):
    """``axisops.grad.<name>``, looked up now (AttributeError: the test fails)."""
    import axisops.grad

    return getattr(axisops.grad, name)


def data(rng, shape, dtype=np.float64, *, nan=0.0, ties=True):
    """Values with ties (and a fraction *nan* of NaN), as *dtype*."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if ties:
        x = rng.integers(-3, 4, shape).astype(dtype)
    else:
        x = distinct_values(rng, shape).astype(dtype)
    if dtype.kind == "f":
        x[rng.random(shape) < nan] = np.nan
    return x


def inputs(dtype, seed):
    rng = np.random.default_rng(seed)
    nan = 0.2 if np.dtype(dtype).kind == "f" else 0.0
    yield data(rng, (7,), dtype, nan=nan)
    yield data(rng, (4, 9), dtype, nan=nan)
    yield data(rng, (3, 4, 5), dtype, nan=nan).transpose(2, 0, 1)
    yield data(rng, (6, 10), dtype, nan=nan)[::-1, ::3]
    yield data(rng, (0, 3), dtype)
    yield data(rng, (), dtype)


def axes_of(x):
    return [None] + list(range(x.ndim))


def close(got, want, label):
    assert type(got) is np.ndarray, f"{label}: returned a {type(got).__name__}"
    assert got.shape == want.shape, f"{label}: shape {got.shape}, expected {want.shape}"
    assert got.dtype == want.dtype, f"{label}: dtype {got.dtype}, expected {want.dtype}"
    rtol = RTOL.get(want.dtype, 0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=label)


def g_like(rng, out, dtype=np.float64):
    return rng.standard_normal(np.shape(out)).astype(dtype)


# ----------------------------------------------------------------------------- scatters

GDTYPES = [(np.float64, np.float64), (np.float32, np.float32), (np.float16, np.float32),
           (np.int32, np.float64), (np.bool_, np.float32)]
if EXHAUSTIVE:
    GDTYPES += [(np.uint8, np.float16), (np.float32, np.float64), (np.int64, np.int64)]


@pytest.mark.parametrize("xdt,gdt", GDTYPES, ids=lambda d: np.dtype(d).name)
def test_sort(xdt, gdt):
    rng = np.random.default_rng(1)
    for x in inputs(xdt, 2):
        for axis in axes_of(x):
            for desc in (False, True):
                g = g_like(rng, R.sort(x, axis, descending=desc), gdt)
                got = G("sort")(g, x, axis, descending=desc)
                want = R.grad_sort(g, x, axis, descending=desc)
                close(got, want, f"grad.sort(x{x.shape}, axis={axis}, descending={desc})")


@pytest.mark.parametrize("xdt,gdt", GDTYPES[:3], ids=lambda d: np.dtype(d).name)
def test_top_k_and_kthvalue(xdt, gdt):
    rng = np.random.default_rng(3)
    for x in inputs(xdt, 4):
        for axis in axes_of(x):
            n = x.size if axis is None else x.shape[axis]
            for k in sorted(k for k in {0, 1, n // 2, n} if k <= n):
                for mode in ("largest", "smallest"):
                    v, i = O.top_k(x, k, axis, mode=mode)
                    g = g_like(rng, v, gdt)
                    got = G("top_k")(g, i, x.shape, axis)
                    want = R.grad_top_k(g, i, x.shape, axis)
                    close(got, want, f"grad.top_k(x{x.shape}, k={k}, axis={axis}, {mode})")
                    v2, i2 = O.top_k(x, k, axis, mode=mode, sorted=False)
                    got2 = G("top_k")(np.ones(v2.shape, gdt), i2, x.shape, axis)
                    want2 = R.grad_top_k(np.ones(v.shape, gdt), i, x.shape, axis)
                    close(got2, want2, f"grad.top_k unsorted (x{x.shape}, k={k}, axis={axis})")
                if k >= 1:
                    for keepdims in (False, True):
                        v, i = O.kthvalue(x, k, axis, keepdims=keepdims)
                        g = g_like(rng, v, gdt)
                        got = G("kthvalue")(g, i, x.shape, axis, keepdims)
                        want = R.grad_kthvalue(g, i, x.shape, axis, keepdims)
                        close(got, want,
                              f"grad.kthvalue(x{x.shape}, k={k}, axis={axis}, keepdims={keepdims})")


def test_top_k_scatter_adds_repeated_indices():
    g = np.array([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]])
    idx = np.array([[0, 0, 3], [2, 1, 2]])
    want = np.array([[3.0, 0, 0, 4.0], [0, 16.0, 40.0, 0]])
    np.testing.assert_array_equal(R.grad_top_k(g, idx, (2, 4), 1), want)
    np.testing.assert_array_equal(G("top_k")(g, idx, (2, 4), 1), want)
    np.testing.assert_array_equal(G("top_k")(g.T, idx.T, (4, 2), 0), want.T)


@pytest.mark.parametrize("xdt", [np.float64, np.float32, np.int16], ids=lambda d: np.dtype(d).name)
def test_partition_goes_through_argpartition(xdt):
    rng = np.random.default_rng(5)
    for x in inputs(xdt, 6):
        for axis in axes_of(x):
            n = x.size if axis is None else x.shape[axis]
            for kth in ([0, n - 1, [0, n // 2, -1]] if n else []):
                idx = O.argpartition(x, kth, axis)
                g = g_like(rng, idx)
                got = G("partition")(g, x, kth, axis)
                want = np.zeros(x.size if axis is None else x.shape, np.result_type(g, x)
                                if np.dtype(xdt).kind == "f" else g.dtype)
                np.put_along_axis(want, idx, g, axis=0 if axis is None else axis)
                close(got, want.reshape(x.shape), f"grad.partition(x{x.shape}, kth={kth}, "
                                                  f"axis={axis})")


# ----------------------------------------------------------------------------- quantiles

@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("xdt,gdt", GDTYPES[:4], ids=lambda d: np.dtype(d).name)
def test_median(op, xdt, gdt):
    rng = np.random.default_rng(7)
    fwd = getattr(R, op)
    for x in inputs(xdt, 8):
        for axis in axes_of(x) + ([(0, x.ndim - 1)] if x.ndim >= 2 else []):
            for keepdims in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = fwd(x, axis, keepdims=keepdims)
                g = g_like(rng, out, gdt)
                got = G(op)(g, x, axis, keepdims)
                want = getattr(R, f"grad_{op}")(g, x, axis, keepdims)
                close(got, want, f"grad.{op}(x{x.shape}, axis={axis}, keepdims={keepdims})")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile(op, method):
    rng = np.random.default_rng(9)
    fwd = getattr(R, op)
    dtypes = [np.float64, np.float32, np.int32] if EXHAUSTIVE else [np.float64, np.float32]
    for dtype in dtypes:
        x = data(rng, (3, 4, 6), dtype, nan=0.15 if np.dtype(dtype).kind == "f" else 0)
        x[0, 1] = np.nan if x.dtype.kind == "f" else x[0, 1]
        for axis in (None, -1, 1, (0, 2)):
            for q in (0.0, 1.0, 0.5, 0.37, [0.1, 0.5, 0.9], np.linspace(0, 1, 5)):
                for keepdims in (False, True):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        out = fwd(x, q, axis, method=method, keepdims=keepdims)
                    g = g_like(rng, out)
                    got = G(op)(g, x, q, axis, method=method, keepdims=keepdims)
                    want = getattr(R, f"grad_{op}")(g, x, q, axis, method=method,
                                                    keepdims=keepdims)
                    close(got, want, f"grad.{op}(x{x.shape} {dtype.__name__}, q={q}, "
                                     f"axis={axis}, keepdims={keepdims})")


@pytest.mark.parametrize("method", ["linear", "hazen", "weibull", "midpoint", "lower",
                                    "nearest", "inverted_cdf", "averaged_inverted_cdf"])
def test_quantile_is_the_finite_difference(method):
    """On values without ties the gradient is the derivative of NumPy's quantile."""
    rng = np.random.default_rng(10)
    x = distinct_values(rng, (3, 8))
    for axis in (None, 0, 1):
        for q in (0.5, [0.0, 0.3, 0.65, 1.0]):
            g = g_like(rng, np.quantile(x, q, axis=axis))
            got = G("quantile")(g, x, q, axis, method=method)
            want = finite_difference(lambda v: np.quantile(v, q, axis=axis, method=method), x, g)
            np.testing.assert_allclose(got, want, atol=1e-6, err_msg=f"{method} q={q} {axis}")
            gx = G("nanquantile")(g, x, q, axis, method=method)
            np.testing.assert_allclose(gx, want, atol=1e-6, err_msg=f"nan {method} q={q}")


def test_hand_written_cases():
    nan = np.nan
    one = np.float64(1.0)
    # even length: half to each middle element; ties: the lower index first
    np.testing.assert_array_equal(G("median")(one, np.array([2.0, 1.0, 1.0, 2.0])),
                                  [0.5, 0, 0.5, 0])
    np.testing.assert_array_equal(G("median")(one, np.array([3.0, 1.0, 2.0])), [0, 0, 1])
    # a NaN lane of the plain median: all of g to its first NaN
    x = np.array([[1.0, nan, 3.0, nan], [4.0, 1.0, 2.0, 3.0], [nan, nan, nan, nan]])
    g = np.array([1.0, 2.0, 4.0])
    np.testing.assert_array_equal(G("median")(g, x, 1),
                                  [[0, 1, 0, 0], [0, 0, 1, 1], [4, 0, 0, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an all-NaN lane
        np.testing.assert_array_equal(G("nanmedian")(g, x, 1),
                                      [[0.5, 0, 0.5, 0], [0, 0, 1, 1], [0, 0, 0, 0]])
        np.testing.assert_array_equal(G("nanquantile")(np.array([[1.0, 1.0, 1.0]]), x, [1.0], 1),
                                      [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    # quantile 0.25 linear of 5 values: virtual index 1.0, all to the 2nd smallest
    np.testing.assert_array_equal(G("quantile")(one, np.array([5.0, 4.0, 3.0, 2.0, 1.0]), 0.25),
                                  [0, 0, 0, 1, 0])
    # 0.3 of 3 values: virtual index 0.6 -> 0.4 and 0.6
    np.testing.assert_allclose(G("quantile")(one, np.array([30.0, 10.0, 20.0]), 0.3),
                               [0, 0.4, 0.6], rtol=1e-15)
    # q a list: the contributions add
    np.testing.assert_allclose(G("quantile")(np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0]),
                                             [0.0, 1.0]), [1, 0, 2])
    # sort descending, top_k, kthvalue
    x = np.array([1.0, 3.0, 3.0, nan, 0.0])
    np.testing.assert_array_equal(G("sort")(np.array([1.0, 2, 4, 8, 16]), x, descending=True),
                                  [4, 1, 2, 16, 8])
    _, i = O.kthvalue(x, 3)
    np.testing.assert_array_equal(G("kthvalue")(np.float64(5.0), i, x.shape), [0, 5, 0, 0, 0])


def test_dtypes_shapes_and_errors():
    x = np.arange(12.0).reshape(3, 4).astype(np.float32)
    assert G("sort")(np.ones((3, 4), np.float32), x).dtype == np.float32
    assert G("sort")(np.ones((3, 4)), x).dtype == np.float64
    assert G("sort")(np.ones(12, np.float32), x, None).shape == (3, 4)
    assert G("median")(np.float32(1), x).dtype == np.float32
    assert G("median")(np.ones(3), x.astype(np.int8), 1).dtype == np.float64
    assert G("quantile")(np.ones((2, 4), np.float32), x, [0.1, 0.2], 0).shape == (3, 4)
    _, i = O.top_k(x, 2, None)
    assert G("top_k")(np.ones(2, np.float32), i, x.shape, None).shape == (3, 4)
    _, i = O.kthvalue(x, 2, None)
    assert G("kthvalue")(np.float64(1), i, x.shape, None).reshape(-1)[i] == 1
    with pytest.raises(ValueError):
        G("sort")(np.ones((3, 5)), x)
    with pytest.raises(ValueError):
        G("median")(np.ones(4), x, 1)
    with pytest.raises(ValueError):
        G("quantile")(np.ones(4), x, 1.5, 0)
    with pytest.raises(ValueError):
        G("quantile")(np.ones(4), x, 0.5, 0, method="nope")
    with pytest.raises(TypeError, match="sort"):
        G("sort")(np.ones((3, 4)), x.astype(complex))


def test_against_torch_autograd():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    x = distinct_values(rng, (4, 9))
    for dim in (0, 1):
        t = torch.tensor(x, requires_grad=True)
        out = torch.sort(t, dim=dim, descending=True).values
        g = rng.standard_normal(out.shape)
        out.backward(torch.tensor(g))
        np.testing.assert_allclose(G("sort")(g, x, dim, descending=True), t.grad.numpy())
        for k in (1, 3):
            t = torch.tensor(x, requires_grad=True)
            out = torch.topk(t, k, dim).values
            g = rng.standard_normal(out.shape)
            out.backward(torch.tensor(g))
            i = O.top_k(x, k, dim).indices
            np.testing.assert_allclose(G("top_k")(g, i, x.shape, dim), t.grad.numpy())
        for q in (0.5, 0.3, [0.2, 0.8]):
            t = torch.tensor(x, requires_grad=True)
            out = torch.quantile(t, torch.tensor(q, dtype=torch.float64), dim=dim)
            g = rng.standard_normal(out.shape)
            out.backward(torch.tensor(g))
            np.testing.assert_allclose(G("quantile")(g, x, q, dim), t.grad.numpy(), atol=1e-12)
        t = torch.tensor(x, requires_grad=True)
        out = torch.kthvalue(t, 3, dim).values
        g = rng.standard_normal(out.shape)
        out.backward(torch.tensor(g))
        i = O.kthvalue(x, 3, dim).indices
        np.testing.assert_allclose(G("kthvalue")(g, i, x.shape, dim), t.grad.numpy())


def test_public_names():
    for name in ("sort", "top_k", "kthvalue", "partition", "median", "nanmedian", "quantile",
                 "nanquantile"):
        assert callable(G(name)), name

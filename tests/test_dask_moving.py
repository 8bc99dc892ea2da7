"""The moving windows and their gradients on dask arrays: lazy, across chunk borders
with chunks of any sizes (size one, uneven, a window larger than several chunks),
chunked as the input; the extremes, indices (absolute along the axis) and the
extremes' gradients the NumPy path's bits, the sums the NumPy path's bits on its
block grid and otherwise to rounding; the NumPy path's errors while the graph is
built, no kernel run then."""
from __future__ import annotations

import numpy as np
import pytest
from dask_support import chunk_params, forbid_kernels, scheduler  # noqa: F401

import axisops
from axisops.dask import moving as dmoving
from axisops.dask import moving_grad as dmoving_grad

da = pytest.importorskip("dask.array")

FORWARD = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min", "moving_argmax", "moving_argmin"]
GRADS = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max", "moving_min"]
#: results that are running sums: bits only on the NumPy path's block grid
RUNNING = {"moving_sum", "moving_mean", "moving_var", "moving_std"}

N = 23
#: chunks of the last axis of a (3, N) array
CHUNKINGS = {
    "even": 5,
    "uneven": (1, 3, 1, 3, 1, 6, 2, 1, 5),
    "size one": 1,
    "one chunk": -1,
    "smaller than the window": 2,
}
#: (window, min_count): 1, 3, longer than a chunk (several chunks of 1 and 2), than the axis
WINDOWS = [(1, None), (3, None), (3, 1), (7, 2), (7, None), (30, 1)]


def _data(shape=(3, N), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)  # ties
    a = rng.standard_normal(shape) * 10 + 3
    if a.ndim == 2 and a.shape[-1] == N:
        a[0, 4:12] = np.nan                # a NaN run across several chunk borders
        a[1, ::4] = np.nan
        a[2, 8:10] = a[2, 7]               # ties
        a[2, 15] = np.inf
    return a.astype(dtype)


def _same(got, want):
    """Bit for bit: dtype, shape, values (NaN where NaN, the signs of zeros)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
    if want.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want))


def _close(got, want, rtol=1e-12):
    """To rounding: dtype, shape, NaN and infinities where the NumPy path has them."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite], want[~finite], equal_nan=True)
    scale = max(1.0, float(np.max(np.abs(want[finite]), initial=0)))
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=rtol * scale)


def _finite(a):
    """*a* without its infinity: the variances' gradient at an infinite element is
    ``inf * R(h)`` with ``R(h)`` a reversed running sum of zeros, NaN or +-inf on the
    NumPy path as that sum's rounding residue says (0 or not), so it differs where
    the sum is walked from another start."""
    a = a.copy()
    a[np.isinf(a)] = 4.0
    return a


def _dask(a, chunking, axis=-1):
    chunks = [-1] * a.ndim
    chunks[axis] = CHUNKINGS[chunking] if isinstance(chunking, str) else chunking
    return da.from_array(a, chunks=tuple(chunks))


# --------------------------------------------------------------------- forward


@pytest.mark.parametrize("chunking", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("op", FORWARD)
def test_forward_as_numpy(op, chunking):
    a = _data()
    x = _dask(a, chunking)
    for window, min_count in WINDOWS:
        options = {"min_count": min_count}
        if op in ("moving_var", "moving_std"):
            options["ddof"] = 1 if window == 7 else 0
        lazy = getattr(axisops, op)(x, window, **options)
        assert isinstance(lazy, da.Array) and lazy.chunks == x.chunks
        want = getattr(axisops, op)(a, window, **options)
        assert lazy.dtype == want.dtype
        got = lazy.compute()
        if op in RUNNING and chunking != "one chunk":
            _close(got, want)
        else:
            _same(got, want)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_axes(axis):
    a = _data((6, 7, 8), seed=1)
    a[1, 2:6, 3] = np.nan
    x = da.from_array(a, chunks=(2, 3, 3))
    for op in ("moving_sum", "moving_std", "moving_argmax", "moving_min"):
        got = getattr(axisops, op)(x, 4, axis, min_count=2)
        assert got.chunks == x.chunks
        want = getattr(axisops, op)(a, 4, axis, min_count=2)
        (_close if op in RUNNING else _same)(got.compute(), want)


# one integer type by default: each compiles the moving windows' kernels anew
@pytest.mark.parametrize("dtype", [np.float32,
                                   pytest.param(np.float16, marks=pytest.mark.exhaustive),
                                   np.int32,
                                   pytest.param(np.uint8, marks=pytest.mark.exhaustive),
                                   np.bool_])
def test_dtypes(dtype):
    a = _data((2, 19), dtype, seed=2)
    x = da.from_array(a, chunks=(1, 4))
    for op in FORWARD:
        lazy = getattr(axisops, op)(x, 5, min_count=2)
        want = getattr(axisops, op)(a, 5, min_count=2)
        assert lazy.dtype == want.dtype
        got = lazy.compute()
        if op in RUNNING and np.dtype(dtype) != np.float16:
            _close(got.astype(np.float64), want.astype(np.float64),
                   rtol=1e-6 if dtype == np.float32 else 1e-12)
            assert got.dtype == want.dtype
        elif op in RUNNING:  # float16, rounded once from float64: at most one ulp apart
            assert got.dtype == want.dtype
            np.testing.assert_array_max_ulp(got, want, maxulp=1)
        else:
            _same(got, want)


def test_sums_bits_on_the_block_grid():
    """The largest chunk holds a grid block (16384 positions): every chunk reads from
    the grid block before its own, and the sums are the NumPy path's bits."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 40_000)) * 100 + 1e4
    a[0, 16_380:16_390] = np.nan
    for chunks in (17_000, (5_000, 30_000, 5_000), 33_000):
        x = da.from_array(a, chunks=(1, chunks))
        for op in sorted(RUNNING):
            for window in (5, 300):
                _same(getattr(axisops, op)(x, window, min_count=1).compute(),
                      getattr(axisops, op)(a, window, min_count=1))
    # small chunks: the halo of window - 1, to rounding (the first chunks still bits)
    x = da.from_array(a, chunks=(2, 1000))
    got = axisops.moving_var(x, 5).compute()
    want = axisops.moving_var(a, 5)
    _close(got, want)
    _same(got[:, :2000], want[:, :2000])


def test_reads():
    """Each chunk reads window - 1 before it, or from the NumPy path's block grid
    where that costs at most two chunks."""
    grid = dmoving.block_len(3)
    assert grid == 16384
    assert dmoving.reads_before((5, 5, 5), 3, exact=False) == [(0, 5), (3, 10), (8, 15)]
    assert dmoving.reads_before((1, 1, 1), 5, exact=False) == [(0, 1), (0, 2), (0, 3)]
    assert dmoving.reads_before((10,) * 5, 3, exact=True) == [(0, 10), (0, 20), (0, 30), (28, 40),
                                                              (38, 50)]
    big = dmoving.reads_before((20_000,) * 3, 3, exact=True)
    assert big == [(0, 20_000), (0, 40_000), (grid, 60_000)]
    small = dmoving.reads_before((1000,) * 40, 3, exact=True)
    assert small[1] == (0, 2000) and small[3] == (2998, 4000)
    assert dmoving_grad.reads_around((5, 5, 5), 3, exact=False) == [(0, 7), (3, 12), (8, 15)]
    assert dmoving_grad.reads_around((20_000,) * 3, 3, exact=True) == [
        (0, 60_000 - grid), (19_998, 60_000), (39_998, 60_000)]


def test_tasks_read_a_few_chunks():
    """A task depends on its own chunk and those its halo is cut from, nothing more."""
    x = da.from_array(_data(), chunks=(3, 2))
    for window, most in ((3, 2), (7, 4)):  # 7 - 1 elements: three chunks of 2 before
        out = axisops.moving_max(x, window)
        graph = out.__dask_graph__()
        deps = graph.dependencies[out.name] if hasattr(graph, "dependencies") else None
        assert deps == {x.name}
        layer = dict(graph.layers[out.name])
        assert len(layer) == len(x.chunks[1])
        for key, task in layer.items():
            blocks = task[1][0]  # the keys along the axis (one chunk along the first)
            assert 1 <= len(blocks) <= most
            assert blocks[-1] == (x.name, 0, key[2])  # its own chunk, the halo's before
            assert [k[2] for k in blocks] == list(range(key[2] - len(blocks) + 1, key[2] + 1))


def test_zero_size():
    a = np.empty((3, 0))
    x = da.from_array(a, chunks=(1, -1))
    for op in FORWARD:
        got = getattr(axisops, op)(x, 3)
        _same(got.compute(), getattr(axisops, op)(a, 3))
    for op in GRADS:
        got = getattr(axisops.grad, op)(x, x, 3)
        _same(got.compute(), getattr(axisops.grad, op)(a, a, 3))


# ------------------------------------------------------------------ gradients


@pytest.mark.parametrize("chunking", chunk_params(CHUNKINGS))
@pytest.mark.parametrize("op", GRADS)
def test_grads_as_numpy(op, chunking):
    a = _finite(_data())
    g0 = np.random.default_rng(7).standard_normal(a.shape)
    x, g = _dask(a, chunking), _dask(g0, chunking)
    for window, min_count in WINDOWS:
        options = {"min_count": min_count}
        if op in ("moving_var", "moving_std"):
            options["ddof"] = 1 if window == 7 else 0
        lazy = getattr(axisops.grad, op)(g, x, window, **options)
        assert isinstance(lazy, da.Array) and lazy.chunks == x.chunks
        want = getattr(axisops.grad, op)(g0, a, window, **options)
        got = lazy.compute()
        if op in ("moving_max", "moving_min") or chunking == "one chunk":
            _same(got, want)
        elif op in ("moving_sum", "moving_mean"):
            _close(got, want)
        else:  # the slab is taken less its own mean: a few more roundings
            _close(got, want, rtol=1e-10)


def test_grads_mixed_inputs():
    """g and x of other chunks, or NumPy arrays: the result is chunked as x."""
    a = _finite(_data())
    g0 = np.random.default_rng(8).standard_normal(a.shape).astype(np.float32)
    x = da.from_array(a, chunks=(2, 4))
    g = da.from_array(g0, chunks=(3, 5))
    for op in GRADS:
        want = getattr(axisops.grad, op)(g0, a, 4, min_count=1)
        for gg, xx, chunks in ((g, x, x.chunks), (g0, x, x.chunks), (g, a, g.chunks)):
            func = getattr(dmoving_grad, op)
            lazy = func(gg, xx, 4, min_count=1)
            assert lazy.chunks == chunks and lazy.dtype == want.dtype == np.float32
            _close(lazy.compute().astype(np.float64), want.astype(np.float64), rtol=1e-5)
    # an integer g gives float64, dispatched from a dask g
    gi = da.from_array(np.ones(a.shape, np.int64), chunks=(3, 4))
    got = axisops.grad.moving_max(gi, x, 3)
    _same(got.compute(), axisops.grad.moving_max(np.ones(a.shape, np.int64), a, 3))


def test_grad_axes():
    a = _data((5, 6, 7), seed=4)
    g0 = np.random.default_rng(5).standard_normal(a.shape)
    x, g = da.from_array(a, chunks=(2, 4, 3)), da.from_array(g0, chunks=(2, 4, 3))
    for axis in (0, 1, -1):
        for op in ("moving_mean", "moving_min", "moving_std"):
            got = getattr(axisops.grad, op)(g, x, 3, axis, min_count=2).compute()
            want = getattr(axisops.grad, op)(g0, a, 3, axis, min_count=2)
            (_same if op == "moving_min" else _close)(got, want, *(() if op == "moving_min"
                                                                    else (1e-10,)))


def test_grad_sums_bits_on_the_block_grid():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((1, 40_000))
    g0 = rng.standard_normal(a.shape)
    x, g = da.from_array(a, chunks=(1, 17_000)), da.from_array(g0, chunks=(1, 17_000))
    for op in ("moving_sum", "moving_mean"):
        _same(getattr(axisops.grad, op)(g, x, 9, min_count=3).compute(),
              getattr(axisops.grad, op)(g0, a, 9, min_count=3))


# ------------------------------------------------------------ lazy and errors


def test_lazy_no_kernel_while_building(monkeypatch):
    a = _data()
    x = da.from_array(a, chunks=(2, 3))
    forbid_kernels(monkeypatch)
    outs = [getattr(axisops, op)(x, 4, min_count=1) for op in FORWARD]
    outs += [getattr(axisops.grad, op)(x, x, 4, min_count=1) for op in GRADS]
    assert all(isinstance(o, da.Array) for o in outs)
    with pytest.raises(AssertionError, match="kernel"):
        outs[0].compute()


ERRORS = [
    ((0,), {}),
    ((1.5,), {}),
    ((True,), {}),
    ((3,), {"min_count": 0}),
    ((3,), {"min_count": 4}),
    ((3,), {"min_count": 2.0}),
    ((3, None), {}),
    ((3, (0, 1)), {}),
    ((3, 2), {}),
    ((3, -3), {}),
]


@pytest.mark.parametrize("args, kwargs", ERRORS)
def test_errors_while_building(monkeypatch, args, kwargs):
    a = _data()
    x = da.from_array(a, chunks=(2, 3))
    forbid_kernels(monkeypatch)
    for op in ("moving_sum", "moving_var", "moving_argmax"):
        with pytest.raises(Exception) as want:
            getattr(axisops, op)(a, *args, **kwargs)
        with pytest.raises(want.type, match=str(want.value).replace("(", r"\(")
                           .replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
            getattr(axisops, op)(x, *args, **kwargs)
    for op in ("moving_sum", "moving_std", "moving_max"):
        with pytest.raises(Exception) as want:
            getattr(axisops.grad, op)(a, a, *args, **kwargs)
        with pytest.raises(want.type, match=str(want.value).replace("(", r"\(")
                           .replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
            getattr(axisops.grad, op)(x, x, *args, **kwargs)


def test_dtype_shape_and_ddof_errors(monkeypatch):
    a = _data()
    forbid_kernels(monkeypatch)
    cases = [
        (axisops.moving_sum, (a.astype(complex), 3), {}),
        (axisops.moving_max, (a.astype("M8[s]") if False else a.astype(object), 3), {}),
        (axisops.moving_var, (a, 3), {"ddof": "one"}),
        (axisops.grad.moving_sum, (a[:, :5], a, 3), {}),
        (axisops.grad.moving_max, (a, a.astype(complex), 3), {}),
        (axisops.grad.moving_std, (a.astype(complex), a, 3), {}),
        (axisops.grad.moving_var, (a, a, 3), {"ddof": None}),
    ]
    for func, args, kwargs in cases:
        with pytest.raises(Exception) as want:
            func(*args, **kwargs)
        lazy_args = [da.from_array(v, chunks=2) if isinstance(v, np.ndarray) and v.dtype != object
                     else v for v in args]
        if lazy_args[0] is args[0]:  # an object array: dask takes it too
            lazy_args[0] = da.from_array(args[0], chunks=2)
        with pytest.raises(want.type) as got:
            func(*lazy_args, **kwargs)
        assert str(got.value) == str(want.value)

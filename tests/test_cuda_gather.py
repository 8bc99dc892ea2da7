"""take_along_axis, gather_nd and scatter of CUDA arrays against the NumPy path,
under Numba's CUDA simulator (see ``tests/cuda_support.py``): the same dtype, shape
and bits, and the same errors; scatter by both of its ways (a thread per lane,
and sorted by destination) with repeated destinations, NaN and ties.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from cuda_support import check, device_cases, dtype_params, host, on_device, quick_thread_switches  # noqa: F401

import axisops
import axisops.cuda.scatter as device_scatter

GATHER_DTYPES = [np.bool_, np.int8, np.uint64, np.float16, np.float32, np.complex64]


def along_indices(rng, x_shape, axis, low, high):
    """Indices for take_along_axis: x's shape, with a length-3 axis, a broadcast
    dimension and a leading part where the shape allows."""
    shape = list(x_shape)
    shape[axis] = 3
    for k in range(len(shape)):
        if k != axis and shape[k] > 2:
            shape[k] -= 1  # the leading part of x
            break
    for k in range(len(shape)):
        if k != axis and shape[k] > 1:
            shape[k] = 1  # broadcast against x
            break
    return rng.integers(low, high, shape)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip", "fill"])
@pytest.mark.parametrize("dtype", dtype_params(GATHER_DTYPES))
def test_take_along_axis_matches_the_numpy_path(mode, dtype):
    rng = np.random.default_rng(7)
    problems: list[str] = []
    # the mode is how an index resolves, whatever x's layout and values (bits are
    # moved): by default the views and the value cases run with "wrap" (negative and
    # wrapped indices), the plain and empty cases with every mode
    for name, a in device_cases([dtype], views=mode == "wrap", values=mode == "wrap"):
        if a.ndim == 0:
            continue
        for axis in {0, a.ndim - 1}:
            n = a.shape[axis]
            span = max(n, 1)
            low, high = (-span, span) if mode == "raise" else (-3 * span, 3 * span)
            idx = along_indices(rng, a.shape, axis, low, high)
            device = idx.astype(np.int32) if a.ndim % 2 else np.abs(idx).astype(np.uint64)
            for indices in (idx, on_device(device)):
                check(axisops.take_along_axis, a, True, problems, f"{name} axis={axis}",
                      indices=indices, axis=axis, mode=mode, fill_value=1)
        flat = rng.integers(-max(a.size, 1), max(a.size, 1), 4)
        check(axisops.take_along_axis, a, True, problems, f"{name} axis=None", indices=flat,
              axis=None, mode=mode)
    assert not problems, "\n".join(problems)


def test_take_along_axis_errors_are_the_numpy_paths():
    x = np.arange(12.0).reshape(3, 4)
    problems: list[str] = []
    cases = {
        "out of range": dict(indices=on_device(np.array([[0, 1], [5, -9], [4, 2]])), axis=1),
        "uint64 past int64": dict(indices=on_device(np.array([[1], [2**63 + 3], [0]],
                                                             np.uint64)), axis=1),
        "too few dims": dict(indices=np.array([0, 1]), axis=1),
        "bad shape": dict(indices=np.zeros((5, 1), np.int64), axis=1),
        "axis out of range": dict(indices=np.zeros((3, 1), np.int64), axis=2),
        "None needs 1-D": dict(indices=np.zeros((3, 1), np.int64), axis=None),
        "float indices": dict(indices=np.zeros((3, 1)), axis=1),
        "bad mode": dict(indices=np.zeros((3, 1), np.int64), axis=1, mode="near"),
        "empty result": dict(indices=np.zeros((0, 1), np.int64), axis=1),
        "empty axis": dict(indices=np.zeros((3, 1), np.int64), axis=0, mode="clip"),
    }
    for label, kwargs in cases.items():
        a = x[:0] if label == "empty axis" else x
        check(axisops.take_along_axis, a, True, problems, label, **kwargs)
    check(axisops.take_along_axis, x.astype(np.int8), True, problems, "fill too big",
          indices=np.array([[9], [0], [1]]), axis=1, mode="fill", fill_value=1000)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dtype", dtype_params(GATHER_DTYPES))
def test_gather_nd_matches_the_numpy_path(dtype):
    rng = np.random.default_rng(8)
    problems: list[str] = []
    for name, a in device_cases([dtype]):
        if a.ndim == 0 or a.size == 0:
            continue
        for batch_dims in range(a.ndim):
            for q in range(1, a.ndim - batch_dims + 1):
                dims = a.shape[batch_dims:batch_dims + q]
                tuples = np.stack([rng.integers(-d, d, a.shape[:batch_dims] + (2,))
                                   for d in dims], axis=-1)
                device = on_device(tuples.astype(np.int32))
                for indices in (tuples, device):
                    check(axisops.gather_nd, a, True, problems,
                          f"{name} batch_dims={batch_dims} q={q}", indices=indices,
                          batch_dims=batch_dims)
    assert not problems, "\n".join(problems)


def test_gather_nd_errors_are_the_numpy_paths():
    x = np.arange(24).reshape(2, 3, 4)
    problems: list[str] = []
    cases = {
        "out of range": dict(indices=on_device(np.array([[0, 1], [1, 3], [2, 0]]))),
        "second component": dict(indices=np.array([[1, -4]])),
        "uint64": dict(indices=on_device(np.array([[0, 2**63 + 1]], np.uint64))),
        "0-d": dict(indices=np.array(0)),
        "tuple too long": dict(indices=np.zeros((1, 4), np.int64)),
        "batch differs": dict(indices=np.zeros((3, 1), np.int64), batch_dims=1),
        "bad batch_dims": dict(indices=np.zeros((2, 1), np.int64), batch_dims=True),
        "empty rows": dict(indices=np.zeros((0, 2), np.int64)),
    }
    for label, kwargs in cases.items():
        check(axisops.gather_nd, x, True, problems, label, **kwargs)
    check(axisops.gather_nd, x[:, :, :0], True, problems, "empty slices, bad tuple",
          indices=np.array([[0, 7]]))
    assert not problems, "\n".join(problems)


SCATTER_DTYPES = [np.bool_, np.int8, np.uint64, np.int64, np.float16, np.float32, np.float64]


@pytest.fixture(params=["lanes", "runs"])
def scatter_way(request, monkeypatch):
    """Each scatter once a thread per lane and once sorted by destination."""
    monkeypatch.setattr(device_scatter, "enough_lanes",
                        (lambda: 1) if request.param == "lanes" else (lambda: 1 << 40))
    return request.param


@pytest.mark.parametrize("reduce", [None, "add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", dtype_params(SCATTER_DTYPES))
def test_scatter_matches_the_numpy_paths_bits(reduce, dtype, scatter_way):
    rng = np.random.default_rng(9)
    problems: list[str] = []
    # x's layout is read once, by the copy into the result, before either way: by
    # default the views run with the lanes and reduce=None. The sorted way's own
    # kernels (keys, sort, runs) see only the indices, and it combines with the lane
    # way's _apply: by default it runs every reduce of every dtype on the 1-D, 2-D
    # (with host indices and scalar updates) and 3-D cases, the lanes every case
    lanes = scatter_way == "lanes"
    for name, a in device_cases([dtype], views=lanes and reduce is None, values=lanes):
        if a.ndim == 0 or a.size == 0:
            continue
        for axis in {0, a.ndim - 1}:
            n = a.shape[axis]
            shape = list(a.shape)
            shape[axis] = 5  # more updates than destinations: repeats
            if a.ndim > 1:
                k = (axis + 1) % a.ndim
                shape[k] = max(1, shape[k] - 1)  # indices smaller than x
            idx = rng.integers(-n, n, shape)
            values = rng.standard_normal(shape) * 3
            values[rng.random(shape) < 0.2] = np.nan
            upd = values.astype(dtype) if np.dtype(dtype).kind == "f" else \
                np.nan_to_num(values).astype(np.int64).astype(dtype)
            label = f"{name} axis={axis}"
            check(axisops.scatter, a, True, problems, label, indices=on_device(idx),
                  updates=on_device(upd), axis=axis, reduce=reduce)
            if not name.endswith("-2d"):  # host indices and scalar updates: once per dtype
                continue
            check(axisops.scatter, a, True, problems, f"{label} host", indices=idx,
                  updates=upd, axis=axis, reduce=reduce)
            check(axisops.scatter, a, True, problems, f"{label} scalar", indices=idx,
                  updates=True if dtype == np.bool_ else 1, axis=axis, reduce=reduce)
    assert not problems, "\n".join(problems)


def test_float16_sums_accumulate_in_float32_and_round_once(scatter_way):
    x = np.zeros(2, np.float16)
    idx = np.zeros(40, np.int64)
    upd = np.full(40, 0.1, np.float16)  # 40 float16 additions would drift
    got = host(axisops.scatter(on_device(x), on_device(idx), on_device(upd), 0, reduce="add"))
    want = axisops.scatter(x, idx, upd, 0, reduce="add")
    assert got.dtype == np.float16 and got.shape == (2,)
    assert got.tobytes() == want.tobytes()
    assert got[0] == np.float16(np.float32(np.float16(0.1)) * 40)


def test_scatter_is_the_same_every_run_and_keeps_c_order(scatter_way):
    rng = np.random.default_rng(10)
    x = np.zeros((3, 4), np.float32)
    idx = rng.integers(0, 3, (12, 4))
    upd = (rng.standard_normal((12, 4)) * 1e4).astype(np.float32)
    want = axisops.scatter(x, idx, upd, 0, reduce="add")
    for _ in range(2):
        got = host(axisops.scatter(on_device(x), on_device(idx), on_device(upd), 0,
                                   reduce="add"))
        assert got.dtype == np.float32 and got.shape == (3, 4)
        assert got.tobytes() == want.tobytes()
    last = host(axisops.scatter(on_device(x), on_device(idx), on_device(upd), 0))
    np.testing.assert_array_equal(last, axisops.scatter(x, idx, upd, 0))


def test_scatter_of_complex_numbers(scatter_way):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    idx = rng.integers(-3, 3, (5, 4))
    upd = (rng.standard_normal((5, 4)) - 2j).astype(np.complex64)
    problems: list[str] = []
    for reduce in (None, "add"):
        check(axisops.scatter, x, True, problems, f"complex {reduce}", indices=on_device(idx),
              updates=on_device(upd), axis=0, reduce=reduce)
    check(axisops.scatter, x, True, problems, "complex max", indices=idx, updates=upd, axis=0,
          reduce="max")
    assert not problems, "\n".join(problems)


def test_scatter_updates_are_cast_broadcast_or_cut_as_on_the_cpu(scatter_way):
    x = np.zeros((3, 4), np.float32)
    idx = np.array([[2, 0, 1, 2], [0, 0, 2, 1]])
    problems: list[str] = []
    for label, upd in {"float64 on device": on_device(np.arange(8.0).reshape(2, 4)),
                       "int32 on device": on_device(np.arange(8, dtype=np.int32).reshape(2, 4)),
                       "larger": on_device(np.arange(15.0, dtype=np.float32).reshape(3, 5)),
                       "row": np.arange(4.0, dtype=np.float32), "python float": 2.5}.items():
        check(axisops.scatter, x, True, problems, label, indices=idx, updates=upd, axis=0,
              reduce="add")
    assert not problems, "\n".join(problems)


def test_scatter_errors_are_the_numpy_paths(scatter_way):
    x = np.zeros((3, 4), np.int32)
    problems: list[str] = []
    cases = {
        "out of range": dict(indices=on_device(np.array([[0, 1], [3, -4]])), updates=1, axis=0),
        "too negative": dict(indices=np.array([[0, -4]]), updates=1, axis=0),
        "uint64": dict(indices=on_device(np.array([[2**63 + 1]], np.uint64)), updates=1, axis=0),
        "bad reduce": dict(indices=np.zeros((1, 1), np.int64), updates=1, axis=0, reduce="sum"),
        "axis None": dict(indices=np.zeros((1, 1), np.int64), updates=1, axis=None),
        "too few dims": dict(indices=np.zeros(1, np.int64), updates=1, axis=0),
        "indices larger": dict(indices=np.zeros((1, 5), np.int64), updates=1, axis=0),
        "float updates": dict(indices=np.zeros((1, 1), np.int64),
                              updates=on_device(np.ones((1, 1))), axis=0),
        "bad updates shape": dict(indices=np.zeros((2, 2), np.int64),
                                  updates=on_device(np.ones((3, 1), np.int32)), axis=0),
        "int too big": dict(indices=np.zeros((1, 1), np.int64), updates=2**40, axis=0),
        "float indices": dict(indices=np.zeros((1, 1)), updates=1, axis=0),
        "empty indices": dict(indices=np.zeros((0, 4), np.int64), updates=1, axis=0),
    }
    for label, kwargs in cases.items():
        check(axisops.scatter, x, True, problems, label, **kwargs)
    check(axisops.scatter, x[:0], True, problems, "empty axis", indices=np.array([[5]]),
          updates=1, axis=0)
    assert not problems, "\n".join(problems)


# -------------------------------------------------------------------- gradients


GRAD_DTYPES = [np.int32, np.float16, np.float32, np.float64, np.complex64]


def gradient_of(a, dtype, rng):
    g = rng.standard_normal(a.shape) * 4
    if np.dtype(dtype).kind == "c":
        return (g + 1j * g[..., ::-1]).astype(dtype)
    return g.astype(dtype)


@pytest.mark.parametrize("mode", ["raise", "wrap", "fill"])
@pytest.mark.parametrize("dtype", dtype_params(GRAD_DTYPES))
def test_gather_gradients_match_the_numpy_paths_bits(mode, dtype, scatter_way, exhaustive):
    rng = np.random.default_rng(12)
    problems: list[str] = []
    for x_shape, axis in [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 1), ((6,), None)]:
        n = math.prod(x_shape) if axis is None else x_shape[axis]
        low, high = (-n, n) if mode == "raise" else (-2 * n, 2 * n)
        # take: repeats, so destinations get several additions
        idx = rng.integers(low, high, (7,) if axis is None else (2, 4))
        fwd = np.zeros(x_shape)
        g = gradient_of(axisops.take(fwd, idx, axis, mode=mode), dtype, rng)
        # take's lanes share their indices: with several lanes they are sorted once
        # whatever the way (scatter_into), so by default that runs with the lanes
        if exhaustive or scatter_way == "lanes" or math.prod(x_shape) == n:
            check(axisops.grad.take, g, True, problems, f"take {x_shape} {axis}",
                  indices=on_device(idx.astype(np.int32)), x_shape=x_shape, axis=axis,
                  mode=mode)
        # take_along_axis, with the leading part of x (indices smaller)
        along = rng.integers(low, high, (7,) if axis is None else
                             tuple(5 if k == axis else max(1, s - 1) for k, s in
                                   enumerate(x_shape)))
        g = gradient_of(axisops.take_along_axis(fwd, along, axis, mode=mode), dtype, rng)
        check(axisops.grad.take_along_axis, g, True, problems, f"along {x_shape} {axis}",
              indices=along, x_shape=x_shape, axis=axis, mode=mode)
    # gather_nd, with batch dimensions and repeated tuples; it has no mode: by
    # default it runs with "raise" only
    x_shape = (2, 3, 4)
    for batch_dims, q in [(0, 1), (0, 2), (1, 1), (1, 2)] if exhaustive or mode == "raise" \
            else []:
        dims = x_shape[batch_dims:batch_dims + q]
        tuples = np.stack([rng.integers(-d, d, x_shape[:batch_dims] + (5,)) for d in dims], -1)
        g = gradient_of(axisops.gather_nd(np.zeros(x_shape), tuples, batch_dims=batch_dims),
                        dtype, rng)
        check(axisops.grad.gather_nd, g, True, problems, f"gather_nd {batch_dims} {q}",
              indices=on_device(tuples), x_shape=x_shape, batch_dims=batch_dims)
    assert not problems, "\n".join(problems)


def test_take_along_axis_gradient_sums_broadcast_copies_to_rounding(scatter_way):
    rng = np.random.default_rng(13)
    g = rng.standard_normal((4, 6)).astype(np.float32)
    idx = rng.integers(0, 3, (4, 6))
    want = axisops.grad.take_along_axis(g, idx, (1, 3), 1)  # x was (1, 3), broadcast to 4 rows
    got = host(axisops.grad.take_along_axis(on_device(g), idx, (1, 3), 1))
    assert got.dtype == np.float32 and got.shape == (1, 3)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_gather_gradient_errors_are_the_numpy_paths(scatter_way):
    g = np.ones((2, 4))
    problems: list[str] = []
    for label, fn, kwargs in [
        ("take bad", axisops.grad.take, dict(indices=on_device(np.array([[0, 5, 1, 2]])),
                                             x_shape=(2, 3), axis=1)),
        ("take shape", axisops.grad.take, dict(indices=np.array([0, 1, 2]), x_shape=(2, 3),
                                               axis=1)),
        ("take mode", axisops.grad.take, dict(indices=np.array([0, 1, 2, 0]), x_shape=(2, 3),
                                              axis=1, mode="nope")),
        ("take axis", axisops.grad.take, dict(indices=np.array([0, 1, 2, 0]), x_shape=(2, 3),
                                              axis=3)),
        ("take empty axis", axisops.grad.take, dict(indices=np.array([0, 1, 2, 0]),
                                                    x_shape=(2, 0), axis=1)),
        ("along bad", axisops.grad.take_along_axis,
         dict(indices=np.array([[0, 1, 2, -5], [0, 0, 0, 0]]), x_shape=(2, 4), axis=1)),
        ("along dims", axisops.grad.take_along_axis, dict(indices=np.zeros(4, np.int64),
                                                          x_shape=(2, 4), axis=1)),
        ("nd bad", axisops.grad.gather_nd, dict(indices=np.array([[0, 9], [1, 1]]),
                                                x_shape=(2, 3, 4))),
        ("nd shape", axisops.grad.gather_nd, dict(indices=np.array([[0], [1]]),
                                                  x_shape=(2, 3, 4))),
        ("float indices", axisops.grad.take, dict(indices=np.zeros(4), x_shape=(2, 3), axis=1)),
    ]:
        check(fn, g, True, problems, label, **kwargs)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("reduce", [None, "add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", dtype_params([np.bool_, np.int32, np.float16, np.float32, np.float64]))
def test_scatter_gradient_matches_the_numpy_path(reduce, dtype, scatter_way, exhaustive):
    rng = np.random.default_rng(14)
    problems: list[str] = []
    for x_shape, axis, i_shape in [((5,), 0, (7,)), ((3, 4), 0, (5, 3)), ((3, 4), 1, (2, 6)),
                                   ((2, 3, 4), 2, (2, 2, 5))]:
        n = x_shape[axis]
        x = (rng.integers(-2, 3, x_shape)).astype(dtype)  # ties with the updates
        if np.dtype(dtype).kind == "f":
            x.reshape(-1)[0] = np.nan
        idx = rng.integers(-n, n, i_shape)
        upd = rng.integers(-2, 3, i_shape).astype(dtype)
        g = rng.standard_normal(x_shape).astype(np.float32 if dtype == np.bool_ else dtype)
        label = f"{x_shape} axis={axis}"
        check(axisops.grad.scatter, g, True, problems, label, x=on_device(x),
              indices=on_device(idx), updates=on_device(upd), axis=axis, reduce=reduce)
        if scatter_way == "runs" and not exhaustive:
            # what larger and broadcast updates change (their upload and C-order
            # copy, the gradient's padding and sums) comes before or after the
            # scatter, the same for both ways (whose reads of updates with stride 0
            # test_scatter_matches_the_numpy_paths_bits runs): by default with the lanes
            continue
        larger = np.concatenate([upd, upd], axis=axis) if upd.ndim else upd
        check(axisops.grad.scatter, g, True, problems, f"{label} larger updates", x=x,
              indices=idx, updates=larger, axis=axis, reduce=reduce)
        row = upd.reshape(-1)[:i_shape[-1]]  # broadcast along the leading dimensions
        check(axisops.grad.scatter, g, True, problems, f"{label} broadcast", x=on_device(x),
              indices=idx, updates=on_device(np.ascontiguousarray(row)), axis=axis,
              reduce=reduce)
    assert not problems, "\n".join(problems)


def test_scatter_gradient_errors_are_the_numpy_paths(scatter_way):
    g, x = np.ones((3, 4)), np.zeros((3, 4))
    problems: list[str] = []
    for label, kwargs in {
        "out of range": dict(x=on_device(x), indices=on_device(np.array([[0, 3]])), updates=1.0,
                             axis=0),
        "g shape": dict(x=np.zeros((3, 5)), indices=np.array([[0]]), updates=1.0, axis=0),
        "bad reduce": dict(x=x, indices=np.array([[0]]), updates=1.0, axis=0, reduce="sum"),
        "float indices": dict(x=x, indices=np.array([[0.0]]), updates=1.0, axis=0),
        "int x float updates": dict(x=x.astype(np.int32), indices=np.array([[0]]),
                                    updates=on_device(np.ones((1, 1))), axis=0),
    }.items():
        check(axisops.grad.scatter, g, True, problems, label, **kwargs)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dtype", dtype_params([np.bool_, np.int8, np.float16, np.float32, np.complex64]))
@pytest.mark.parametrize("reduce", [None, "add", "max"])
def test_scatter_of_shared_indices_sorts_them_once(dtype, reduce, monkeypatch):
    if reduce == "max" and np.dtype(dtype).kind == "c":
        return
    ran: list[str] = []
    real = device_scatter._by_shared_runs
    monkeypatch.setattr(device_scatter, "_by_shared_runs",
                        lambda *a: ran.append("shared") or real(*a))
    rng = np.random.default_rng(15)
    problems: list[str] = []
    x = rng.integers(-3, 4, (3, 5)).astype(dtype)
    for axis, pattern_shape, shape in [(0, (7, 1), (7, 5)), (1, (1, 6), (3, 6)),
                                       (0, (7, 1), (7, 4))]:
        n = x.shape[axis]
        pattern = rng.integers(-n, n, pattern_shape)
        expanded = np.broadcast_to(pattern, shape)  # strides 0 outside the axis
        upd = rng.integers(-3, 4, shape).astype(dtype)
        for indices in (expanded, on_device(expanded)):
            check(axisops.scatter, x, True, problems, f"axis={axis} {shape}", indices=indices,
                  updates=on_device(upd), axis=axis, reduce=reduce)
        bad = pattern.copy()
        bad.reshape(-1)[-1] = n + 2
        check(axisops.scatter, x, True, problems, f"axis={axis} out of range",
              indices=on_device(np.broadcast_to(bad, shape)), updates=on_device(upd), axis=axis,
              reduce=reduce)
    assert not problems, "\n".join(problems)
    assert ran, "the shared-index way did not run"


# A complex gradient scatters (scatter_into, whose way the fixture picks) only for
# None: add reads g at the destinations, mul sorts them whatever the way, max
# raises. By default those three run with the lanes only.
@pytest.mark.parametrize(("reduce", "scatter_way"), [
    pytest.param(reduce, way, id=f"{way}-{reduce}",
                 marks=[pytest.mark.exhaustive] if way == "runs" and reduce else [])
    for way in ("lanes", "runs") for reduce in (None, "add", "mul", "max")],
    indirect=["scatter_way"])
def test_complex_scatter_gradient_matches_the_numpy_path(reduce, scatter_way):
    rng = np.random.default_rng(16)
    problems: list[str] = []

    def cplx(shape, dtype=np.complex64):
        return (rng.integers(-2, 3, shape) + 1j * rng.integers(-2, 3, shape)).astype(dtype)

    for x_shape, axis, i_shape in [((4,), 0, (6,)), ((3, 4), 0, (5, 3)), ((2, 3, 4), 2, (2, 2, 5))]:
        n = x_shape[axis]
        idx = rng.integers(-n, n, i_shape)
        x, upd, g = cplx(x_shape), cplx(i_shape), cplx(x_shape)
        label = f"{x_shape} axis={axis}"
        check(axisops.grad.scatter, g, True, problems, label, x=on_device(x),
              indices=on_device(idx), updates=on_device(upd), axis=axis, reduce=reduce)
        check(axisops.grad.scatter, g.astype(np.complex128), True, problems, f"{label} c128 g",
              x=x, indices=idx, updates=upd, axis=axis, reduce=reduce)
        check(axisops.grad.scatter, g.real.copy(), True, problems, f"{label} real g", x=x,
              indices=idx, updates=on_device(upd), axis=axis, reduce=reduce)
        larger = np.concatenate([upd, upd], axis=axis)
        check(axisops.grad.scatter, g, True, problems, f"{label} larger", x=on_device(x),
              indices=idx, updates=larger, axis=axis, reduce=reduce)
        row = np.ascontiguousarray(upd.reshape(-1)[:i_shape[-1]])
        check(axisops.grad.scatter, g, True, problems, f"{label} broadcast", x=on_device(x),
              indices=idx, updates=on_device(row), axis=axis, reduce=reduce)
    bad = np.array([0, 9])
    check(axisops.grad.scatter, cplx((4,)), True, problems, "out of range", x=cplx((4,)),
          indices=on_device(bad), updates=cplx((2,)), axis=0, reduce=reduce)
    assert not problems, "\n".join(problems)

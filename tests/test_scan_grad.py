"""Gradients of the scans: against ``axisops.reference.grad``, finite differences,
the adjoint identity, and PyTorch's autograd when torch is installed.

A gradient is a vector-Jacobian product: for ``y = f(x)`` and an upstream ``g`` of
``y``'s shape (``(x.size,)`` for ``axis=None``), ``grad.f`` returns ``dL/dx`` for
``L = sum(g * f(x))``, with ``x``'s shape.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from cases import (
    FLOAT_DTYPES,
    cases,
    changed,
    compare_outcomes,
    distinct_values,
    finite_difference,
    mismatch,
    outcome,
    single_axes,
    snapshot,
)

import axisops
from axisops import reference as ref

OPS = ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp")
DIRECTIONS = ({}, {"exclusive": True}, {"reverse": True}, {"exclusive": True, "reverse": True})


def out_shape(shape, axis):
    """The forward's output shape: *shape*, or ``(size,)`` flattened (0-d stays 0-d)."""
    shape = tuple(shape)
    return (math.prod(shape),) if axis is None and shape else shape


def options(op, x, axis):
    """Keyword sets for ``call``: directions for the sums and products, the forward's
    indices (int64 and int32) for cummax/cummin."""
    if op in ("cumsum", "cumprod"):
        return DIRECTIONS
    if op == "logcumsumexp":
        return ({},)
    found = [getattr(ref, op)(x, axis, index_dtype=d).indices for d in (np.int64, np.int32)]
    return tuple({"indices": i} for i in found)


def call(module, op, g, x, axis, kwargs):
    f = getattr(module.grad, op)
    if op == "cumsum":
        return f(g, np.shape(x), axis, **kwargs)
    if op in ("cummax", "cummin"):
        return f(g, kwargs["indices"], np.shape(x), axis)
    return f(g, x, axis, **kwargs)


def bound(op, g, x, axis, kwargs, want):
    """Tolerance against the oracle: the same gradient of ``|g|`` (and ``|x|``) bounds
    every term, so reassociated sums stay within ``(n + 2) * eps_acc`` of it;
    logcumsumexp's factors also carry the error of ``y`` (``~n * eps * |y|``)."""
    want = np.asarray(want)
    x = np.asarray(x)
    n = x.size if axis is None else x.shape[axis]
    out = np.finfo(want.dtype)
    eps = float(np.finfo(np.float32 if want.dtype.itemsize <= 4 else np.float64).eps)
    ag = np.abs(np.asarray(g, np.float64))
    with np.errstate(all="ignore"):
        if op == "cumsum":
            terms = ref.grad.cumsum(ag, x.shape, axis, **kwargs)
            factor = (n + 2) * eps
        elif op == "cumprod":
            terms = ref.grad.cumprod(ag, np.abs(x.astype(np.float64)), axis, **kwargs)
            factor = 2 * (n + 2) * eps
        elif op == "logcumsumexp":
            terms = ref.grad.logcumsumexp(ag, x.astype(np.float64), axis)
            y = ref.logcumsumexp(x.astype(np.float64), axis)
            finite = np.concatenate([np.abs(v[np.isfinite(v)]).ravel() for v in (x, y)] + [[0]])
            factor = (2 * n + 4) * eps * (1 + float(finite.max()))
        else:
            terms = ref.grad.cummax(ag, kwargs["indices"], x.shape, axis)
            factor = (n + 2) * eps
        return (factor * terms + 2 * float(out.eps) * np.abs(want.astype(np.float64))
                + float(out.smallest_subnormal))


def report(failures, limit=25):
    if failures:
        more = f"\n... and {len(failures) - limit} more" if len(failures) > limit else ""
        pytest.fail(f"{len(failures)} failing calls:\n" + "\n".join(failures[:limit]) + more)


def _describe(op, x, axis, kwargs):
    kw = "".join(f", {k}={v!r}" for k, v in kwargs.items() if k != "indices")
    if "indices" in kwargs:
        kw += f", indices {np.asarray(kwargs['indices']).dtype}"
    return f"grad.{op}(g, x {np.shape(x)} {np.asarray(x).dtype}, axis={axis!r}{kw})"


# ------------------------------------------------------------------ vs reference

GRAD_CASES = [pytest.param(n, a, id=n) for n, a in cases(dtypes=FLOAT_DTYPES, max_ndim=4)
              if "-extremes" not in n]


@pytest.mark.parametrize("name,x", GRAD_CASES)
@pytest.mark.parametrize("op", OPS)
def test_matches_reference(op, name, x, rng):
    """Every float case, axis and option: value (NaN-aware), dtype and shape."""
    failures = []
    before = snapshot(x)
    for axis in single_axes(x.ndim):
        for kwargs in options(op, x, axis):
            g = np.round(rng.standard_normal(out_shape(x.shape, axis)), 2).astype(x.dtype)
            want = outcome(call, ref, op, g, x, axis, kwargs)
            got = outcome(call, axisops, op, g, x, axis, kwargs)
            msg = compare_outcomes(got, want)
            if msg is None and want[0] == "ok":
                if type(got[1]) is not np.ndarray:
                    msg = f"returned a {type(got[1]).__name__}, expected a numpy.ndarray"
                else:
                    msg = mismatch(got[1], want[1], bound(op, g, x, axis, kwargs, want[1]))
                    if msg is None and got[1].shape != x.shape:
                        msg = f"shape {got[1].shape}, expected x's {x.shape}"
            if msg:
                failures.append(f"{_describe(op, x, axis, kwargs)}: {msg}")
    if msg := changed(x, before):
        failures.append(msg)
    report(failures)


@pytest.mark.parametrize("op", OPS)
def test_zero_d_and_list_shape(op):
    x = np.array(3.0)
    for kwargs in options(op, x, None):
        got = call(axisops, op, np.array(2.0), x, None, kwargs)
        want = call(ref, op, np.array(2.0), x, None, kwargs)
        assert type(got) is np.ndarray and mismatch(got, want) is None, (kwargs, got, want)
    if op in ("cumsum", "cummax", "cummin"):
        extra = (np.zeros((2, 3), np.int64),) if op != "cumsum" else ()
        got = getattr(axisops.grad, op)(np.ones((2, 3)), *extra, [2, 3], 1)
        assert got.shape == (2, 3)
        got = getattr(axisops.grad, op)(np.ones(6), *(e.reshape(-1) for e in extra), [2, 3])
        assert got.shape == (2, 3)


def _zero_indices(op, shape):
    return {"indices": np.zeros(shape, np.int64)} if op in ("cummax", "cummin") else {}


@pytest.mark.parametrize("op", OPS)
def test_bad_g_shape_is_value_error(op):
    x = np.arange(12.0).reshape(3, 4)
    failures = []
    for axis, g_shape in [(0, (4,)), (1, (4, 3)), (None, (3, 4)), (None, (1, 12)),
                          (-1, (12,)), (1, ())]:
        g = np.ones(g_shape)
        for module in (ref, axisops):
            kind, value = outcome(call, module, op, g, x, axis, _zero_indices(op, g_shape))
            if not (kind == "raised" and isinstance(value, ValueError)):
                failures.append(f"{module.__name__}.grad.{op}(g {g_shape}, x (3, 4), axis={axis}): "
                                f"{value!r}, expected ValueError")
    report(failures)


@pytest.mark.parametrize("op", OPS)
def test_bad_axis(op):
    from cases import bad_axes
    x = np.arange(12.0).reshape(3, 4)
    failures = []
    for axis, exc in list(bad_axes(2, multi=False)) + [((0,), TypeError), ((0, 1), TypeError)]:
        for module in (ref, axisops):
            kind, value = outcome(call, module, op, np.ones((3, 4)), x, axis,
                                  _zero_indices(op, (3, 4)))
            if not (kind == "raised" and isinstance(value, exc)):
                failures.append(f"{module.__name__}.grad.{op}(axis={axis!r}): {value!r}, "
                                f"expected {exc.__name__}")
    report(failures)


@pytest.mark.parametrize("op", ["logcumsumexp"])  # grad.cumprod of complex: test_complex.py
def test_complex_is_type_error(op):
    x = np.ones((2, 3), dtype=np.complex128)
    with pytest.raises(TypeError, match=op):
        getattr(axisops.grad, op)(np.ones((2, 3)), x, 1)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_bad_indices(op):
    f = getattr(axisops.grad, op)
    g = np.ones((2, 4))
    # out of range, either way: IndexError naming the index, where it is, and the range
    for bad, value, where in [(np.array([[0, 1, 2, 3], [0, 4, 1, 1]]), 4, (1, 1)),
                              (np.array([[0, 1, 2, 3], [0, 0, -1, 9]]), -1, (1, 2)),
                              (np.array([[0, 1, 7, 3], [0, 0, 1, 1]], np.uint8), 7, (0, 2))]:
        for module in (ref, axisops):
            with pytest.raises(IndexError) as err:
                getattr(module.grad, op)(g, bad, (2, 4), 1)
            msg = str(err.value)
            assert str(value) in msg and str(where) in msg and "[0, 4)" in msg, msg
    # axis=None: indices into the flattened array of 8
    with pytest.raises(IndexError, match=r"\[0, 8\)"):
        f(np.ones(8), np.array([0, 1, 2, 3, 4, 5, 6, 8]), (2, 4))
    f(np.ones(8), np.array([0, 1, 2, 3, 4, 5, 6, 7]), (2, 4))  # fine
    # not integers: TypeError; not g's shape: ValueError
    for module in (ref, axisops):
        for bad_dtype in (np.float64, np.bool_, np.float32):
            with pytest.raises(TypeError):
                getattr(module.grad, op)(g, np.zeros((2, 4), bad_dtype), (2, 4), 1)
        with pytest.raises(ValueError):
            getattr(module.grad, op)(g, np.zeros((2, 3), np.int64), (2, 4), 1)
        with pytest.raises(ValueError):
            getattr(module.grad, op)(g, np.zeros(8, np.int64), (2, 4), 1)


# --------------------------------------------------------- zeros, ties and NaN

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cumprod_with_zeros_is_exact(dtype):
    x = np.array([[2.0, 0.0, 3.0, 4.0],     # one zero
                  [0.0, 5.0, 0.0, 7.0],     # two zeros
                  [1.5, -2.0, 3.0, 0.5],    # none
                  [0.0, 0.0, 0.0, 0.0],
                  [3.0, 2.0, 0.0, 0.0]], dtype=dtype)
    g = np.ones_like(x)
    # by hand, forward inclusive: dx_k = sum_{j >= k} prod_{i <= j, i != k} x_i
    want = np.array([[1, 2 + 6 + 24, 0, 0],
                     [1 + 5, 0, 0, 0],
                     [1 - 2 - 6 - 3, 1.5 + 4.5 + 2.25, -3 - 1.5, -9],
                     [1, 0, 0, 0],
                     [1 + 2, 3, 6, 0]], dtype=dtype)
    failures = []
    for module in (ref, axisops):
        got = module.grad.cumprod(g, x, 1)
        if got.dtype != dtype or not np.array_equal(got, want):
            failures.append(f"{module.__name__}: got\n{got}\nexpected\n{want}")
        got = module.grad.cumprod(g.T, x.T, 0)
        if not np.array_equal(got, want.T):
            failures.append(f"{module.__name__} transposed: got\n{got}\nexpected\n{want.T}")
    # every direction against the oracle, exactly (small integers: no rounding anywhere)
    r = np.random.default_rng(1)
    gi = r.integers(-3, 4, size=x.shape).astype(dtype)
    for kwargs in DIRECTIONS:
        for axis in (0, 1, -1, None):
            gg = gi.reshape(out_shape(x.shape, axis))
            got, want2 = axisops.grad.cumprod(gg, x, axis, **kwargs), ref.grad.cumprod(gg, x, axis, **kwargs)
            if msg := mismatch(got, want2):
                failures.append(f"grad.cumprod(axis={axis}, {kwargs}): {msg}")
    report(failures)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_scatter_of_ties_and_nan(op):
    x = np.array([[1.0, 1.0, 0.5, 1.0],     # ties take over: all of g lands on 0, 1, 3
                  [np.nan, 2.0, np.nan, 0.0],
                  [2.0, 2.0, 2.0, 2.0]])
    if op == "cummin":
        x = -x
    g = np.array([[1.0, 10.0, 100.0, 1000.0]] * 3)
    _, i = getattr(axisops, op)(x, 1)
    want = np.array([[1.0, 110.0, 0.0, 1000.0],
                     [11.0, 0.0, 1100.0, 0.0],   # a NaN holds the index until the next NaN
                     [1.0, 10.0, 100.0, 1000.0]])
    got = getattr(axisops.grad, op)(g, i, x.shape, 1)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(getattr(ref.grad, op)(g, i, x.shape, 1), want)
    # float16 sums in float32 and rounds once: 2048 + 1 + 1 ... is not stuck at 2048
    g16 = np.ones(5000, np.float16)
    got = getattr(axisops.grad, op)(g16, np.zeros(5000, np.int64), (5000,))
    assert got.dtype == np.float16 and got[0] == 5000 and np.all(got[1:] == 0)


# ------------------------------------------------------------ finite differences

FD_SHAPES = [(5,), (3, 4), (2, 3, 2)]


def _forward(op, axis, kwargs):
    if op in ("cummax", "cummin"):
        return lambda v: getattr(ref, op)(v, axis).values
    kw = {k: v for k, v in kwargs.items() if k != "indices"}
    return lambda v: getattr(ref, op)(v, axis, **kw)


@pytest.mark.parametrize("shape", FD_SHAPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_finite_differences(op, shape, rng):
    x = distinct_values(rng, shape)
    if op == "cumprod":
        x = 0.5 + rng.random(shape)
        x.reshape(-1)[1] = 0.0       # a zero, where dividing by x would fail
    failures = []
    for axis in single_axes(len(shape)):
        for kwargs in options(op, x, axis):
            w = rng.standard_normal(out_shape(shape, axis))
            fd = finite_difference(_forward(op, axis, kwargs), x, w)
            got = call(axisops, op, w, x, axis, kwargs)
            if not np.allclose(got, fd, rtol=1e-6, atol=1e-6):
                failures.append(f"{_describe(op, x, axis, kwargs)}: got\n{got}\n"
                                f"finite differences\n{fd}")
    assert not failures, "\n".join(failures[:5])


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
def test_cumsum_adjoint_identity(axis, rng):
    """<cumsum(x), g> == <x, grad.cumsum(g)> for every direction."""
    x = rng.standard_normal((3, 4, 5))
    failures = []
    for kwargs in DIRECTIONS:
        g = rng.standard_normal(out_shape(x.shape, axis))
        lhs = np.sum(axisops.cumsum(x, axis, **kwargs) * g)
        rhs = np.sum(x * axisops.grad.cumsum(g, x.shape, axis, **kwargs))
        if not np.isclose(lhs, rhs, rtol=1e-12, atol=1e-12):
            failures.append(f"axis={axis}, {kwargs}: {lhs} != {rhs}")
        # integers: exact
        xi = rng.integers(-9, 10, size=x.shape)
        gi = rng.integers(-9, 10, size=g.shape)
        if np.sum(axisops.cumsum(xi, axis, **kwargs) * gi) != np.sum(
                xi * axisops.grad.cumsum(gi, x.shape, axis, **kwargs)):
            failures.append(f"axis={axis}, {kwargs}: integer adjoint differs")
    assert not failures, failures


# ------------------------------------------------------------------ vs PyTorch

def _torch_forward(torch, op, t, axis, kwargs):
    """The forward in torch, with axis=None, exclusive and reverse built from flips/shifts."""
    if axis is None:
        t, axis = t.reshape(-1), 0
    if kwargs.get("reverse"):
        t = t.flip(axis)
    if op in ("cummax", "cummin"):
        y = getattr(torch, op)(t, dim=axis)
    else:
        y = getattr(torch, op)(t, dim=axis)
    if kwargs.get("exclusive"):
        first = torch.zeros_like if op == "cumsum" else torch.ones_like
        y = torch.cat([first(y.narrow(axis, 0, 1)), y.narrow(axis, 0, y.shape[axis] - 1)], axis)
    if kwargs.get("reverse"):
        y = y.flip(axis)
    return y


def _torch_inputs(op, rng):
    shape = (3, 4, 5)
    yield "random", rng.standard_normal(shape)
    if op == "cumprod":
        x = rng.standard_normal(shape)
        x[0, 1, 0] = 0.0                       # one zero in some lanes
        x[1, 0, 1] = x[1, 2, 1] = 0.0          # two in another
        x[2, :, 2] = 0.0
        x[2, 1, :] = 0.0
        yield "zeros", x
    if op in ("cummax", "cummin"):
        yield "ties", rng.integers(0, 3, size=shape).astype(np.float64)
        x = np.where(rng.random(shape) < 0.2, np.nan, rng.integers(0, 3, size=shape) * 1.0)
        yield "nan", x
    if op == "logcumsumexp":
        yield "large", rng.standard_normal(shape) * 300


@pytest.mark.parametrize("op", OPS)
def test_matches_torch_autograd(op, rng):
    torch = pytest.importorskip("torch")
    failures = []
    directions = DIRECTIONS if op in ("cumsum", "cumprod") else ({},)
    for label, x in _torch_inputs(op, rng):
        for axis in (None, 0, 1, 2, -1):
            for kwargs in directions:
                w = rng.standard_normal(out_shape(x.shape, axis))
                t = torch.tensor(x, requires_grad=True)
                y = _torch_forward(torch, op, t, axis, kwargs)
                if op in ("cummax", "cummin"):
                    y.values.backward(torch.tensor(w))
                    idx = getattr(axisops, op)(x, axis).indices
                    assert np.array_equal(idx, y.indices.numpy()), (label, op, axis)
                    got = getattr(axisops.grad, op)(w, idx, x.shape, axis)
                else:
                    y.backward(torch.tensor(w))
                    got = call(axisops, op, w, x, axis, kwargs)
                want = t.grad.numpy()
                if not np.allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True):
                    failures.append(f"{label}: grad.{op}(w, x, axis={axis!r}, {kwargs}):\n"
                                    f"got\n{got}\ntorch\n{want}")
    assert not failures, "\n".join(failures[:3])


# ------------------------------------------------------------------ long axes

LONG = [((600_000,), 0, np.float64), ((3, 200_003), 1, np.float32), ((200_003, 3), 0, np.float64)]


def _long_oracle(op, g, x, axis):
    """O(n) float64 oracles for long lanes (the reference's double loops are O(n^2)):
    cumprod of nonzero x: ``dx_k = (sum_{j>=k} g_j y_j) / x_k``; logcumsumexp of
    moderate x: ``dx_k = exp(x_k) * sum_{j>=k} g_j exp(-y_j)``."""
    x = x.astype(np.float64)
    g = g.astype(np.float64)
    if op == "cumprod":
        y = np.cumprod(x, axis)
        return np.flip(np.cumsum(np.flip(g * y, axis), axis), axis) / x
    y = np.logaddexp.accumulate(x, axis)
    return np.exp(x) * np.flip(np.cumsum(np.flip(g * np.exp(-y), axis), axis), axis)


@pytest.mark.parametrize("shape,axis,dtype", LONG, ids=[f"{'x'.join(map(str, s))}-{np.dtype(d).name}"
                                                         for s, _, d in LONG])
def test_long_axes(shape, axis, dtype):
    r = np.random.default_rng(8)
    failures = []
    g = r.standard_normal(shape).astype(dtype)
    n = shape[axis]
    eps = float(np.finfo(dtype).eps)
    # cumsum and cummax/cummin: the reference is O(n)
    x = r.integers(0, 3, size=shape).astype(dtype)
    for kwargs in DIRECTIONS:
        got = axisops.grad.cumsum(g, shape, axis, **kwargs)
        want = ref.grad.cumsum(g, shape, axis, **kwargs)
        if msg := mismatch(got, want, bound("cumsum", g, x, axis, kwargs, want)):
            failures.append(f"grad.cumsum {kwargs}: {msg}")
    for op in ("cummax", "cummin"):
        idx = getattr(ref, op)(x, axis).indices
        got = getattr(axisops.grad, op)(g, idx, shape, axis)
        want = getattr(ref.grad, op)(g, idx, shape, axis)
        if msg := mismatch(got, want, bound(op, g, x, axis, {"indices": idx}, want)):
            failures.append(f"grad.{op}: {msg}")
    # cumprod of factors near 1 (no zero), logcumsumexp of values in [-1, 1]
    xp = (1 + (r.random(shape) - 0.5) * 2e-3).astype(dtype)
    got = axisops.grad.cumprod(g, xp, axis)
    want = _long_oracle("cumprod", g, xp, axis)
    scale = _long_oracle("cumprod", np.abs(g), xp, axis)
    if msg := mismatch(got.astype(np.float64), want, 4 * (n + 2) * eps * scale):
        failures.append(f"grad.cumprod: {msg}")
    xl = (r.random(shape) * 2 - 1).astype(dtype)
    got = axisops.grad.logcumsumexp(g, xl, axis)
    want = _long_oracle("logcumsumexp", g, xl, axis)
    scale = _long_oracle("logcumsumexp", np.abs(g), xl, axis)
    if msg := mismatch(got.astype(np.float64), want, 4 * (n + 2) * eps * 16 * scale):
        failures.append(f"grad.logcumsumexp: {msg}")
    report(failures)


@pytest.mark.parametrize("shape,axis,dtype", LONG, ids=[f"{'x'.join(map(str, s))}-{np.dtype(d).name}"
                                                         for s, _, d in LONG])
def test_thread_count_does_not_change_bits(shape, axis, dtype, num_threads):
    if len(num_threads.counts) < 2:
        pytest.skip("Numba has a single thread here")
    r = np.random.default_rng(9)
    g = r.standard_normal(shape).astype(dtype)
    x = (r.standard_normal(shape) * np.exp2(r.integers(-8, 8, size=shape))).astype(dtype)
    xp = (1 + (r.random(shape) - 0.5) * 2e-3).astype(dtype)
    idx = ref.cummax(r.integers(0, 3, size=shape), axis).indices
    calls = [("cumsum", lambda: axisops.grad.cumsum(g, shape, axis)),
             ("cumsum exclusive reverse",
              lambda: axisops.grad.cumsum(g, shape, axis, exclusive=True, reverse=True)),
             ("cumsum axis=None", lambda: axisops.grad.cumsum(g.reshape(-1), shape)),
             ("cumprod", lambda: axisops.grad.cumprod(g, xp, axis)),
             ("cumprod reverse", lambda: axisops.grad.cumprod(g, xp, axis, reverse=True)),
             ("cummax", lambda: axisops.grad.cummax(g, idx, shape, axis)),
             ("cummin", lambda: axisops.grad.cummin(g, idx, shape, axis)),
             ("logcumsumexp", lambda: axisops.grad.logcumsumexp(g, x, axis))]
    results = {}
    for count in num_threads.counts:
        num_threads.set(count)
        results[count] = [f() for _, f in calls]
    failures = []
    base = num_threads.counts[0]
    for count in num_threads.counts[1:]:
        for (label, _), p, q in zip(calls, results[base], results[count]):
            if p.dtype != q.dtype or p.shape != q.shape or p.tobytes() != q.tobytes():
                failures.append(f"grad.{label} on {shape} {np.dtype(dtype).name}: "
                                f"{base} and {count} threads differ")
    report(failures)

"""Gradients of the gathers and scatter: against ``axisops.reference.grad``, finite
differences, and PyTorch's autograd when torch is installed.

``grad.take``, ``grad.take_along_axis`` and ``grad.gather_nd`` scatter-add the
upstream ``g`` back to where the forward read (wrapped and clipped indices
resolved, filled positions adding nothing, broadcast ``x`` summed);
``grad.scatter`` returns ``(grad_x, grad_updates)`` by ``torch.scatter_reduce``'s
rules with ``include_self=True`` (and the true derivative of last-wins for
``reduce=None``). Each result is checked for value, dtype and shape.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from cases import (
    FLOAT_DTYPES,
    AxisError,
    cases,
    changed,
    compare_outcomes,
    distinct_values,
    finite_difference,
    mismatch,
    outcome,
    single_axes,
    snapshot,
    values,
)

import axisops
from axisops import reference as ref

MODES = ("raise", "wrap", "clip", "fill")
REDUCES = (None, "add", "mul", "max", "min")
# The views (layouts) with float32 by default: the gradients read x, g and the
# updates through one layout path whatever their dtype; float16 and float64 take
# the plain, empty and value cases, and the views under the exhaustive switch.
GRAD_CASES = [pytest.param(n, a, id=n, marks=[pytest.mark.exhaustive]
                           if "-view-" in n and a.dtype != np.float32 else [])
              for n, a in cases(dtypes=FLOAT_DTYPES, max_ndim=4) if "-extremes" not in n]


def report(failures, limit=25):
    if failures:
        more = f"\n... and {len(failures) - limit} more" if len(failures) > limit else ""
        pytest.fail(f"{len(failures)} failing calls:\n" + "\n".join(failures[:limit]) + more)


def _acc_eps(dtype):
    return float(np.finfo(np.float32 if np.dtype(dtype).itemsize <= 4 else np.float64).eps)


def bound(terms, count, want):
    """Tolerance for a gradient whose entries are sums (or products) of up to *count*
    terms bounded by *terms* (the same gradient of ``|g|``): the order of the sums is
    not part of the contract. Plus 2 ulps of the result and one subnormal."""
    want = np.asarray(want)
    out = np.finfo(want.dtype)
    with np.errstate(all="ignore"):
        return ((count + 2) * _acc_eps(want.dtype) * np.abs(np.asarray(terms, np.float64))
                + 2 * float(out.eps) * np.abs(want.astype(np.float64))
                + float(out.smallest_subnormal))


def _check_array(got, want, tol, what):
    if type(got) is not np.ndarray:
        return f"{what}: returned a {type(got).__name__}, expected a numpy.ndarray"
    return mismatch(got, want, tol)


def check_gather_grad(op, g, indices, x_shape, *args, **kwargs):
    """Compare ``axisops.grad.<op>`` with the reference, within :func:`bound`."""
    fa, fr = getattr(axisops.grad, op), getattr(ref.grad, op)
    before = [snapshot(a) for a in (g, indices)]
    want = outcome(fr, g, indices, x_shape, *args, **kwargs)
    got = outcome(fa, g, indices, x_shape, *args, **kwargs)
    msg = compare_outcomes(got, want)
    if msg is None and want[0] == "ok":
        terms = fr(np.abs(g), indices, x_shape, *args, **kwargs)
        msg = _check_array(got[1], want[1], bound(terms, np.size(indices), want[1]), "result")
        if msg is None and got[1].shape != tuple(x_shape):
            msg = f"shape {got[1].shape}, expected x's {tuple(x_shape)}"
    for a, b in zip((g, indices), before):
        msg = msg or changed(a, b)
    if msg is None:
        return None
    extra = "".join(f", {a!r}" for a in args) + "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return (f"grad.{op}(g {g.dtype} {g.shape}, indices {indices.dtype} {indices.shape}, "
            f"{tuple(x_shape)}{extra}): {msg}")


def check_scatter_grad(g, x, indices, updates, axis, reduce):
    before = [snapshot(a) for a in (g, x, indices, updates)]
    args = (g, x, indices, updates, axis)
    want = outcome(ref.grad.scatter, *args, reduce=reduce)
    got = outcome(axisops.grad.scatter, *args, reduce=reduce)
    msg = compare_outcomes(got, want)
    if msg is None and want[0] == "ok":
        if not (isinstance(got[1], tuple) and len(got[1]) == 2):
            msg = f"returned {type(got[1]).__name__}, expected a (grad_x, grad_updates) tuple"
        else:
            with np.errstate(all="ignore"):
                if reduce == "mul":  # products: the same rule on magnitudes bounds them
                    terms = ref.grad.scatter(np.abs(g), np.abs(x), indices, np.abs(updates),
                                             axis, reduce="mul")
                else:
                    terms = ref.grad.scatter(np.abs(g), x, indices, updates, axis, reduce=reduce)
            count = np.size(indices) + 1
            # (that both are ndarrays, not NumPy scalars, is test_shapes_of_the_results')
            for what, gv, wv, t, shape in zip(("grad_x", "grad_updates"), got[1], want[1], terms,
                                              (x.shape, np.shape(updates))):
                msg = msg or mismatch(gv, wv, bound(t, count, wv))
                if msg is None and np.shape(gv) != shape:
                    msg = f"{what} has shape {gv.shape}, expected {shape}"
    for a, b in zip((g, x, indices, updates), before):
        msg = msg or changed(a, b)
    if msg is None:
        return None
    return (f"grad.scatter(g {g.dtype}, x {x.dtype} {x.shape}, indices {indices.shape}, "
            f"updates {np.asarray(updates).dtype} {np.shape(updates)}, axis={axis}, "
            f"reduce={reduce!r}): {msg}")


def upstream(rng, shape, dtype):
    return np.round(rng.standard_normal(shape) * 3, 2).astype(dtype)


# ------------------------------------------------------------------ vs reference

@pytest.mark.parametrize("name,x", GRAD_CASES)
def test_gather_grads_match_reference(name, x, rng):
    """Every float case and axis: take (every mode, indices repeated, negative, out of
    range, 0-d, empty), take_along_axis (broadcast both ways, leading part) and gather_nd."""
    failures = []
    dt = x.dtype
    for axis in single_axes(x.ndim):
        n = x.size if axis is None else x.shape[axis]
        src = (x.size,) if axis is None else x.shape
        ax = 0 if axis is None else axis % x.ndim
        r = max(n, 1)
        for indices in (rng.integers(-r, r, size=(3, 2)), np.array(-1 % r),
                        rng.integers(-3 * r, 3 * r, size=7), np.zeros((0, 2), np.int64)):
            for mode in MODES:
                shape = src[:ax] + indices.shape + src[ax + 1:]
                if msg := check_gather_grad("take", upstream(rng, shape, dt), indices, x.shape,
                                            axis, mode=mode):
                    failures.append(msg)
        if axis is None:
            along = [rng.integers(-r, r, size=5), rng.integers(-3 * r, 3 * r, size=4)]
        else:
            ones = tuple(1 if d != ax else 4 for d in range(x.ndim))
            leading = tuple(s - 1 if s >= 3 and d != ax else s for d, s in enumerate(x.shape))
            x_ones = tuple(3 if s == 1 and d != ax else s for d, s in enumerate(x.shape))
            along = [rng.integers(-r, r, size=x.shape[:ax] + (2 * n + 1,) + x.shape[ax + 1:]),
                     rng.integers(-3 * r, 3 * r, size=ones), rng.integers(-r, r, size=leading),
                     rng.integers(-r, r, size=x_ones)]
        for indices in along:
            for mode in MODES:
                shape = ref.take_along_axis(np.zeros(x.shape), indices, axis, mode="fill").shape
                if msg := check_gather_grad("take_along_axis", upstream(rng, shape, dt), indices,
                                            x.shape, axis, mode=mode):
                    failures.append(msg)
    for b in range(min(2, x.ndim)):
        for q in range(1, x.ndim - b + 1):
            for extra in ((4,), (2, 3)):
                lead = x.shape[:b] + extra
                dims = x.shape[b:b + q]
                if 0 in dims and 0 not in lead:
                    continue
                indices = np.stack([rng.integers(-max(d, 1), max(d, 1), size=lead) for d in dims],
                                   axis=-1)
                shape = lead + x.shape[b + q:]
                if msg := check_gather_grad("gather_nd", upstream(rng, shape, dt), indices,
                                            x.shape, batch_dims=b):
                    failures.append(msg)
    report(failures)


@pytest.mark.parametrize("name,x", GRAD_CASES)
def test_scatter_grad_matches_reference(name, x, rng):
    """Every float case, axis and reduce, with heavily repeated indices, NaN, ±inf and
    ±0.0 in the updates (special), ties, larger and broadcast updates."""
    if x.ndim == 0:
        return
    failures = []
    for ax in range(x.ndim):
        axis = -1 if ax == x.ndim - 1 else ax  # the last axis by its negative name
        n = x.shape[ax]
        shapes = [x.shape, x.shape[:ax] + (2 * n + 1 if n else 0,) + x.shape[ax + 1:],
                  tuple(s - 1 if s >= 2 and d != ax else s for d, s in enumerate(x.shape))]
        for shape in shapes:
            indices = rng.integers(-n, n, size=shape) if n else np.zeros(shape, np.int64)
            for kind in ("random", "ties", "special"):
                same = values(x.dtype, shape, rng, kind)
                for updates in (same, values(x.dtype, tuple(s + 1 for s in shape), rng, kind),
                                values(x.dtype, (), rng, kind)):
                    for reduce in REDUCES:
                        g = upstream(rng, x.shape, x.dtype)
                        if msg := check_scatter_grad(g, x, indices, updates, axis, reduce):
                            failures.append(msg)
    report(failures)


@pytest.mark.parametrize("x_dtype", [np.int8, np.uint16, np.int64, np.bool_])
def test_scatter_grad_of_integer_x(x_dtype, rng):
    """x and updates of integer or bool dtype: the gradients are in g's float dtype."""
    x = values(x_dtype, (3, 4), rng, "ties")
    indices = rng.integers(-3, 3, size=(5, 4))
    updates = values(x_dtype, (5, 4), rng, "ties")
    failures = []
    for reduce in REDUCES:
        for gdt in (np.float32, np.float64):
            if msg := check_scatter_grad(upstream(rng, x.shape, gdt), x, indices, updates, 0,
                                         reduce):
                failures.append(msg)
    report(failures)


# ----------------------------------------------------------- dtypes and shapes

@pytest.mark.parametrize("g_dtype,want", [(np.float16, np.float16), (np.float32, np.float32),
                                          (np.float64, np.float64), (np.int32, np.float64),
                                          (np.uint8, np.float64), (np.bool_, np.float64)])
def test_gradient_dtypes(g_dtype, want):
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = np.array([[2, 0, 2, 1]])
    g = np.ones((1, 4, 4), g_dtype)
    got = axisops.grad.take(g, idx, x.shape, 0, mode="wrap")
    assert got.dtype == want and got.shape == (3, 4)
    assert np.array_equal(got, ref.grad.take(g, idx, x.shape, 0, mode="wrap"))
    g2 = np.ones((1, 4), g_dtype)
    got = axisops.grad.take_along_axis(g2, idx, x.shape, 0)
    assert got.dtype == want and got.shape == (3, 4)
    got = axisops.grad.gather_nd(np.ones((1, 4), g_dtype), np.array([[1]]), x.shape)
    assert got.dtype == want and got.shape == (3, 4)
    for reduce in REDUCES:
        gx, gu = axisops.grad.scatter(np.ones((3, 4), g_dtype), x, idx, np.ones((1, 4), np.float32),
                                      0, reduce=reduce)
        assert gx.dtype == gu.dtype == want and gx.shape == (3, 4) and gu.shape == (1, 4)


def test_float16_accumulates_in_float32():
    """5000 gradients of 1 onto one element: 5000 (float16 accumulation stalls at 2048)."""
    g = np.ones(5000, np.float16)
    got = axisops.grad.take(g, np.zeros(5000, np.int64), (3,))
    assert got.dtype == np.float16 and got.tolist() == [5000.0, 0.0, 0.0]
    got = axisops.grad.take_along_axis(g, np.full(5000, -3), (3,), 0)
    assert got.tolist() == [5000.0, 0.0, 0.0]
    got = axisops.grad.gather_nd(g, np.full((5000, 1), 2), (3,))
    assert got.tolist() == [0.0, 0.0, 5000.0]
    _, gu = axisops.grad.scatter(np.ones(3, np.float16), np.zeros(3, np.float16),
                                 np.zeros(5000, np.int64), np.float16(1), 0, reduce="add")
    assert gu.dtype == np.float16 and gu.shape == () and float(gu) == 5000.0


def test_shapes_of_the_results():
    """x's shape (also for axis=None and a list x_shape); updates' own shape, summed over
    broadcast dimensions and zero outside the leading part used."""
    got = axisops.grad.take(np.ones(3), np.array([0, 5, 5]), [2, 3])
    assert type(got) is np.ndarray and got.shape == (2, 3) and got.tolist() == [[1, 0, 0],
                                                                                 [0, 0, 2]]
    got = axisops.grad.take(np.array(2.0), np.array(-1), (2, 2))
    assert got.tolist() == [[0, 0], [0, 2]]
    got = axisops.grad.take_along_axis(np.ones(4), np.array([3, 3, 0, 1]), [2, 2], None)
    assert got.shape == (2, 2) and got.tolist() == [[1, 1], [0, 2]]
    got = axisops.grad.take(np.ones(()), np.array(0), ())
    assert type(got) is np.ndarray and got.shape == () and got == 1.0
    x = np.zeros((2, 3))
    idx = np.array([[0, 2], [1, 1]])
    for updates, want_u in [(np.float64(1.0), 4.0), (np.array([1.0, 2.0]), [2.0, 2.0]),
                            (np.ones((2, 1)), [[2.0], [2.0]]),
                            (np.ones((3, 4)), [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]]),
                            (np.ones((1, 2)), [[2.0, 2.0]])]:
        gx, gu = axisops.grad.scatter(np.ones((2, 3)), x, idx, updates, 1, reduce="add")
        assert type(gu) is np.ndarray, type(gu)
        assert gu.shape == np.shape(updates) and np.array_equal(gu, want_u), (updates, gu)
        rx, ru = ref.grad.scatter(np.ones((2, 3)), x, idx, updates, 1, reduce="add")
        assert np.array_equal(gx, rx) and np.array_equal(gu, ru)


# ------------------------------------------------------------- scatter's rules

def test_scatter_grad_rules_by_hand():
    x = np.array([2.0, 3.0, 5.0, 7.0])
    idx = np.array([0, 0, 1, 0])
    u = np.array([10.0, 20.0, 30.0, 40.0])
    g = np.array([1.0, 2.0, 4.0, 8.0])
    cases_ = {
        # last write wins: u[3] into 0 and u[2] into 1 get g; overwritten u[0], u[1] get 0
        None: ([0, 0, 4, 8], [0, 0, 2, 1]),
        "add": ([1, 2, 4, 8], [1, 1, 2, 1]),
        # x[0] * 10 * 20 * 40 and x[1] * 30
        "mul": ([1 * 8000, 2 * 30, 4, 8], [1 * 2 * 800, 1 * 2 * 400, 2 * 3, 1 * 2 * 200]),
        "max": ([0, 0, 4, 8], [0, 0, 2, 1]),
        "min": ([1, 2, 4, 8], [0, 0, 0, 0]),
    }
    failures = []
    for module in (ref, axisops):
        for reduce, (wx, wu) in cases_.items():
            gx, gu = module.grad.scatter(g, x, idx, u, 0, reduce=reduce)
            if not (np.array_equal(gx, wx) and np.array_equal(gu, wu)):
                failures.append(f"{module.__name__} {reduce}: got {gx}, {gu}; expected {wx}, {wu}")
    report(failures)


def test_scatter_grad_mul_with_zeros_is_exact():
    """No division: a zero update or a zero in x gives the exact product of the others."""
    x = np.array([0.0, 3.0, 2.0])
    idx = np.array([0, 1, 1, 2, 2])
    u = np.array([5.0, 0.0, 4.0, 0.0, 0.0])
    g = np.array([1.0, 1.0, 1.0])
    want_x = [5.0, 0.0, 0.0]
    want_u = [0.0, 12.0, 0.0, 0.0, 0.0]
    for module in (ref, axisops):
        gx, gu = module.grad.scatter(g, x, idx, u, 0, reduce="mul")
        assert gx.tolist() == want_x and gu.tolist() == want_u, (module.__name__, gx, gu)


def test_scatter_grad_ties_split_evenly():
    """max/min: g split evenly between x and every update equal to the result; NaN
    equals NaN here; -0.0 and 0.0 tie."""
    x = np.array([3.0, np.nan, 0.0, 1.0])
    idx = np.array([0, 0, 1, 1, 2, 3, 3])
    u = np.array([3.0, 3.0, np.nan, 5.0, -0.0, 4.0, 4.0])
    g = np.array([6.0, 6.0, 6.0, 6.0])
    want_x = [2.0, 3.0, 3.0, 0.0]
    want_u = [2.0, 2.0, 3.0, 0.0, 3.0, 3.0, 3.0]
    for module in (ref, axisops):
        gx, gu = module.grad.scatter(g, x, idx, u, 0, reduce="max")
        assert np.array_equal(gx, want_x) and np.array_equal(gu, want_u), (module.__name__, gx, gu)
        gx, gu = module.grad.scatter(g, -x, idx, -u, 0, reduce="min")
        assert np.array_equal(gx, want_x) and np.array_equal(gu, want_u), (module.__name__, gx, gu)


# ------------------------------------------------------------------------ errors

def test_errors():
    x_shape = (3, 4)
    idx = np.array([[0, 1]])
    failures = []
    calls = [
        (ValueError, "take", (np.ones(3), idx, x_shape, 1)),             # g not (3, 1, 2)
        (ValueError, "take", (np.ones((1, 2)), idx, x_shape, None, "bogus")),
        (TypeError, "take", (np.ones((1, 2)), idx.astype(float), x_shape)),
        (TypeError, "take", (np.ones((1, 2)), idx > 0, x_shape)),
        (IndexError, "take", (np.ones((1, 2)), np.array([[0, 12]]), x_shape)),
        (IndexError, "take", (np.ones((3, 1, 2)), np.array([[0, -5]]), x_shape, 1)),
        (IndexError, "take", (np.ones((3, 1, 2)), np.array([[0, 1]]), (3, 0), 1, "wrap")),
        (AxisError, "take", (np.ones((3, 1, 2)), idx, x_shape, 2)),
        (TypeError, "take", (np.ones((1, 2), "U1"), idx, x_shape)),
        (ValueError, "take_along_axis", (np.ones((1, 3)), idx, x_shape, 1)),
        (ValueError, "take_along_axis", (np.ones((1, 2)), idx[0], x_shape, 1)),   # rank
        (ValueError, "take_along_axis", (np.ones((5, 2)), np.zeros((5, 2), int), x_shape, 1)),
        (IndexError, "take_along_axis", (np.ones((3, 2)), np.array([[0, 4]]), x_shape, 1)),
        (AxisError, "take_along_axis", (np.ones((1, 2)), idx, x_shape, -3)),
        (ValueError, "gather_nd", (np.ones(4), idx, x_shape)),
        (ValueError, "gather_nd", (np.ones(1), np.zeros((1, 3), int), x_shape)),
        (IndexError, "gather_nd", (np.ones((1, 4)), np.array([[3]]), x_shape)),
        (TypeError, "gather_nd", (np.ones((1, 4)), np.array([[1.0]]), x_shape)),
    ]
    for exc, op, args in calls:
        for module in (ref, axisops):
            kind, value = outcome(getattr(module.grad, op), *args)
            if not (kind == "raised" and isinstance(value, exc)):
                failures.append(f"{module.__name__}.grad.{op}{tuple(np.shape(a) for a in args[:2])}"
                                f" {args[2:]}: {value!r}, expected {exc.__name__}")
    x = np.zeros(x_shape)
    scatter_calls = [
        (ValueError, (np.ones((4, 3)), x, idx, np.ones((1, 2)), 1)),      # g not x's shape
        (ValueError, (np.ones(x_shape), x, idx, np.ones((1, 2)), 1, "sum")),
        (TypeError, (np.ones(x_shape), x, idx, np.ones((1, 2)), None)),
        (AxisError, (np.ones(x_shape), x, idx, np.ones((1, 2)), 2)),
        (IndexError, (np.ones(x_shape), x, np.array([[0, 4]]), np.ones((1, 2)), 1)),
        (TypeError, (np.ones(x_shape), x, idx.astype(float), np.ones((1, 2)), 1)),
        (ValueError, (np.ones(x_shape), x, idx[0], np.ones(2), 1)),
        (ValueError, (np.ones(x_shape), x, idx, np.ones(3), 1)),
        (TypeError, (np.ones(x_shape), x.astype(np.int32), idx, np.ones((1, 2)), 1)),
    ]
    for exc, args in scatter_calls:
        for module in (ref, axisops):
            kind, value = outcome(module.grad.scatter, *args)
            if not (kind == "raised" and isinstance(value, exc)):
                failures.append(f"{module.__name__}.grad.scatter{args[4:]}: {value!r}, "
                                f"expected {exc.__name__}")
    report(failures)


def test_index_error_names_the_first_bad_index():
    for module in (ref, axisops):
        with pytest.raises(IndexError, match=r"grad.take: index 7 at position \(1, 0\) of indices "
                                             r"is out of range \[-3, 3\)"):
            module.grad.take(np.ones((2, 2, 2)), np.array([[0, 1], [7, -9]]), (3, 2), 0)
        with pytest.raises(IndexError, match=r"index 9 at position \(0, 1\) of indices is out "
                                             r"of range \[-4, 4\)"):
            module.grad.scatter(np.ones((3, 4)), np.zeros((3, 4)), np.array([[0, 9]]),
                                np.ones((1, 2)), 1)


# ------------------------------------------------------------ finite differences

FD_SHAPES = [(5,), (3, 4), (2, 3, 2)]


@pytest.mark.parametrize("shape", FD_SHAPES, ids=str)
def test_finite_differences_of_gathers(shape, rng):
    x = distinct_values(rng, shape)
    failures = []
    for axis in single_axes(len(shape)):
        n = x.size if axis is None else shape[axis]
        ax = 0 if axis is None else axis % len(shape)
        for mode in MODES:
            idx = rng.integers(-2 * n, 2 * n, size=(2, 3)) if mode != "raise" else \
                rng.integers(-n, n, size=(2, 3))
            f = lambda v: ref.take(v, idx, axis, mode=mode)  # noqa: E731
            w = rng.standard_normal(f(x).shape)
            fd = finite_difference(f, x, w)
            got = axisops.grad.take(w, idx, shape, axis, mode=mode)
            if not np.allclose(got, fd, rtol=1e-6, atol=1e-6):
                failures.append(f"take axis={axis} {mode}: got\n{got}\nfd\n{fd}")
            if axis is None:
                aidx = idx.reshape(-1)
            else:
                ishape = tuple(3 if d == ax else rng.choice([s, 1]) for d, s in enumerate(shape))
                aidx = rng.integers(-n, n, size=ishape) if mode == "raise" else \
                    rng.integers(-2 * n, 2 * n, size=ishape)
            f = lambda v: ref.take_along_axis(v, aidx, axis, mode=mode)  # noqa: E731
            w = rng.standard_normal(f(x).shape)
            fd = finite_difference(f, x, w)
            got = axisops.grad.take_along_axis(w, aidx, shape, axis, mode=mode)
            if not np.allclose(got, fd, rtol=1e-6, atol=1e-6):
                failures.append(f"take_along_axis axis={axis} {mode}: got\n{got}\nfd\n{fd}")
    for b in range(min(2, len(shape))):
        for q in range(1, len(shape) - b + 1):
            lead = shape[:b] + (4,)
            idx = np.stack([rng.integers(-d, d, size=lead) for d in shape[b:b + q]], axis=-1)
            f = lambda v: ref.gather_nd(v, idx, batch_dims=b)  # noqa: E731
            w = rng.standard_normal(f(x).shape)
            fd = finite_difference(f, x, w)
            got = axisops.grad.gather_nd(w, idx, shape, batch_dims=b)
            if not np.allclose(got, fd, rtol=1e-6, atol=1e-6):
                failures.append(f"gather_nd b={b} q={q}: got\n{got}\nfd\n{fd}")
    report(failures)


@pytest.mark.parametrize("shape", FD_SHAPES, ids=str)
@pytest.mark.parametrize("reduce", REDUCES, ids=str)
def test_finite_differences_of_scatter(shape, reduce, rng):
    """With respect to x and to the updates (indices' shape, larger, and a broadcast
    scalar), on distinct values so that max/min are differentiable."""
    failures = []
    for axis in range(len(shape)):
        n = shape[axis]
        ishape = tuple(2 * n if d == axis else s for d, s in enumerate(shape))
        idx = rng.integers(-n, n, size=ishape)
        both = distinct_values(rng, (math.prod(shape) + math.prod(ishape) + 1,))
        if reduce == "mul":
            both = 0.5 + rng.random(both.shape)
        x = both[:math.prod(shape)].reshape(shape)
        u_same = both[math.prod(shape):-1].reshape(ishape)
        for updates in (u_same, np.pad(u_same, 1)[tuple(slice(1, None) for _ in shape)],
                        np.array(both[-1])):
            w = rng.standard_normal(shape)
            fx = finite_difference(lambda v: ref.scatter(v, idx, updates, axis, reduce=reduce),
                                   x, w)
            fu = finite_difference(lambda v: ref.scatter(x, idx, v, axis, reduce=reduce),
                                   np.array(updates), w)
            gx, gu = axisops.grad.scatter(w, x, idx, updates, axis, reduce=reduce)
            if not (np.allclose(gx, fx, rtol=1e-6, atol=1e-6)
                    and np.allclose(gu, fu, rtol=1e-6, atol=1e-6)):
                failures.append(f"axis={axis} updates {np.shape(updates)}: got\n{gx}\n{gu}\n"
                                f"fd\n{fx}\n{fu}")
    report(failures)


# ------------------------------------------------------------------- vs PyTorch

def test_take_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(21)
    x = rng.standard_normal((3, 4, 5))
    failures = []
    for axis in (0, 1, 2, -1):
        n = x.shape[axis]
        idx = rng.integers(-n, n, size=7)
        t = torch.tensor(x, requires_grad=True)
        y = torch.index_select(t, axis % 3, torch.from_numpy(idx % n))
        w = rng.standard_normal(tuple(y.shape))
        y.backward(torch.from_numpy(w))
        got = axisops.grad.take(w, idx, x.shape, axis)
        if not np.allclose(got, t.grad.numpy(), rtol=1e-12, atol=1e-12):
            failures.append(f"index_select axis={axis}")
    idx = rng.integers(-x.size, x.size, size=(4, 6))
    t = torch.tensor(x, requires_grad=True)
    y = torch.take(t, torch.from_numpy(idx))        # torch.take counts negatives from the end
    w = rng.standard_normal(idx.shape)
    y.backward(torch.from_numpy(w))
    if not np.allclose(axisops.grad.take(w, idx, x.shape), t.grad.numpy(), rtol=1e-12, atol=1e-12):
        failures.append("torch.take")
    report(failures)


def test_take_along_axis_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(22)
    x = rng.standard_normal((4, 5, 6))
    failures = []
    for axis in (0, 1, 2, -1):
        ax = axis % 3
        n = x.shape[ax]
        # same sizes, or smaller ones (not 1): torch.gather reads the leading part
        for ishape in (x.shape[:ax] + (9,) + x.shape[ax + 1:],
                       tuple(7 if d == ax else s - 2 for d, s in enumerate(x.shape))):
            idx = rng.integers(-n, n, size=ishape)
            t = torch.tensor(x, requires_grad=True)
            y = torch.gather(t, ax, torch.from_numpy(idx % n))
            w = rng.standard_normal(ishape)
            y.backward(torch.from_numpy(w))
            got = axisops.grad.take_along_axis(w, idx, x.shape, axis)
            if not np.allclose(got, t.grad.numpy(), rtol=1e-12, atol=1e-12):
                failures.append(f"gather axis={axis} indices {ishape}")
            if ishape[:ax] + ishape[ax + 1:] == x.shape[:ax] + x.shape[ax + 1:]:
                t = torch.tensor(x, requires_grad=True)
                y = torch.take_along_dim(t, torch.from_numpy(idx % n), ax)
                y.backward(torch.from_numpy(w))
                if not np.allclose(got, t.grad.numpy(), rtol=1e-12, atol=1e-12):
                    failures.append(f"take_along_dim axis={axis}")
        # broadcast (NumPy's and torch.take_along_dim's rule for a size-1 index dimension)
        ishape = tuple(3 if d == ax else 1 for d in range(3))
        idx = rng.integers(0, n, size=ishape)
        t = torch.tensor(x, requires_grad=True)
        y = torch.take_along_dim(t, torch.from_numpy(idx), ax)
        w = rng.standard_normal(tuple(y.shape))
        y.backward(torch.from_numpy(w))
        got = axisops.grad.take_along_axis(w, idx, x.shape, axis)
        if not np.allclose(got, t.grad.numpy(), rtol=1e-12, atol=1e-12):
            failures.append(f"take_along_dim broadcast axis={axis}")
    report(failures)


def test_gather_nd_matches_torch_indexing():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(23)
    x = rng.standard_normal((3, 4, 5))
    failures = []
    for q in (1, 2, 3):
        idx = np.stack([rng.integers(-d, d, size=(2, 6)) for d in x.shape[:q]], axis=-1)
        t = torch.tensor(x, requires_grad=True)
        y = t[tuple(torch.from_numpy(idx[..., k]) for k in range(q))]
        w = rng.standard_normal(tuple(y.shape))
        y.backward(torch.from_numpy(w))
        got = axisops.grad.gather_nd(w, idx, x.shape)
        if not np.allclose(got, t.grad.numpy(), rtol=1e-12, atol=1e-12):
            failures.append(f"q={q}")
    # batch_dims=1: one index tuple per batch row
    idx = np.stack([rng.integers(0, d, size=(3, 7)) for d in x.shape[1:]], axis=-1)
    t = torch.tensor(x, requires_grad=True)
    rows = torch.arange(3)[:, None]
    y = t[rows, torch.from_numpy(idx[..., 0]), torch.from_numpy(idx[..., 1])]
    w = rng.standard_normal(tuple(y.shape))
    y.backward(torch.from_numpy(w))
    if not np.allclose(axisops.grad.gather_nd(w, idx, x.shape, batch_dims=1), t.grad.numpy(),
                       rtol=1e-12, atol=1e-12):
        failures.append("batch_dims=1")
    report(failures)


@pytest.mark.parametrize("reduce,torch_reduce", [("add", "sum"), ("mul", "prod"),
                                                 ("max", "amax"), ("min", "amin")])
def test_scatter_matches_torch_scatter_reduce(reduce, torch_reduce):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(24)
    failures = []
    for shape, ishape, axis in [((6,), (15,), 0), ((4, 5), (9, 5), 0), ((4, 5), (3, 11), 1),
                                ((3, 4, 5), (2, 4, 9), 2), ((3, 4, 5), (3, 8, 4), 1)]:
        n = shape[axis]
        idx = rng.integers(-n, n, size=ishape)
        vals = distinct_values(rng, (math.prod(shape) + math.prod(ishape),))
        if reduce == "mul":
            vals = (0.5 + rng.random(vals.shape)) * rng.choice([-1, 1], size=vals.shape)
        x = vals[:math.prod(shape)].reshape(shape)
        u = vals[math.prod(shape):].reshape(ishape)
        tx = torch.tensor(x, requires_grad=True)
        tu = torch.tensor(u, requires_grad=True)
        y = torch.scatter_reduce(tx, axis, torch.from_numpy(idx % n), tu, torch_reduce,
                                 include_self=True)
        w = rng.standard_normal(shape)
        y.backward(torch.from_numpy(w))
        out = axisops.scatter(x, idx, u, axis, reduce=reduce)
        gx, gu = axisops.grad.scatter(w, x, idx, u, axis, reduce=reduce)
        if not np.allclose(out, y.detach().numpy(), rtol=1e-12, atol=0):
            failures.append(f"{shape} axis={axis}: forward differs from torch")
        if not (np.allclose(gx, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
                and np.allclose(gu, tu.grad.numpy(), rtol=1e-10, atol=1e-12)):
            failures.append(f"{shape} axis={axis}: got\n{gx}\n{gu}\ntorch\n{tx.grad}\n{tu.grad}")
    report(failures)


def test_scatter_ties_match_torch():
    """max/min with ties between x and updates: split evenly, as torch does."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(25)
    x = rng.integers(0, 3, size=(4, 6)).astype(np.float64)
    u = rng.integers(0, 3, size=(10, 6)).astype(np.float64)
    idx = rng.integers(0, 4, size=(10, 6))
    w = rng.standard_normal((4, 6))
    for reduce, torch_reduce in (("max", "amax"), ("min", "amin")):
        tx, tu = torch.tensor(x, requires_grad=True), torch.tensor(u, requires_grad=True)
        y = torch.scatter_reduce(tx, 0, torch.from_numpy(idx), tu, torch_reduce, include_self=True)
        y.backward(torch.from_numpy(w))
        gx, gu = axisops.grad.scatter(w, x, idx, u, 0, reduce=reduce)
        np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(gu, tu.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_scatter_none_matches_torch_scatter_where_indices_are_unique():
    """reduce=None: torch.scatter's backward (g at each destination for every update,
    g zeroed where written in x) equals ours when no destination is written twice."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(26)
    x = rng.standard_normal((5, 4))
    idx = np.stack([rng.permutation(5)[:3] for _ in range(4)], axis=1)   # (3, 4), unique per column
    u = rng.standard_normal((3, 4))
    tx, tu = torch.tensor(x, requires_grad=True), torch.tensor(u, requires_grad=True)
    y = torch.scatter(tx, 0, torch.from_numpy(idx), tu)
    w = rng.standard_normal((5, 4))
    y.backward(torch.from_numpy(w))
    gx, gu = axisops.grad.scatter(w, x, idx, u, 0)
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=0, atol=0)
    np.testing.assert_allclose(gu, tu.grad.numpy(), rtol=0, atol=0)
    assert np.array_equal(axisops.scatter(x, idx, u, 0), y.detach().numpy())


# --------------------------------------------------------------------- threads

def test_grads_do_not_depend_on_threads(num_threads):
    rng = np.random.default_rng(27)
    g1 = rng.standard_normal((300, 4000)).astype(np.float32)
    i1 = rng.integers(-50, 50, size=4000)
    i2 = rng.integers(0, 50, size=(300, 4000))
    g3 = rng.standard_normal((200_000,)).astype(np.float64)
    i3 = rng.integers(0, 3, size=(200_000, 1))
    x = rng.standard_normal((50, 4000)).astype(np.float32)
    u = rng.standard_normal((300, 4000)).astype(np.float32)
    gs = rng.standard_normal((50, 4000)).astype(np.float32)
    calls = [("take", lambda: axisops.grad.take(g1, i1, (300, 50), 1)),
             ("take_along_axis", lambda: axisops.grad.take_along_axis(g1, i2, (50, 4000), 0)),
             ("gather_nd", lambda: axisops.grad.gather_nd(g3, i3, (3,)))]
    calls += [(f"scatter {r}", lambda r=r: axisops.grad.scatter(gs, x, i2, u, 0, reduce=r))
              for r in REDUCES]
    results = {}
    for count in num_threads.counts:
        num_threads.set(count)
        results[count] = [f() for _, f in calls]
    failures = []
    base = num_threads.counts[0]
    for count in num_threads.counts[1:]:
        for (label, _), p, q in zip(calls, results[base], results[count]):
            pairs = zip(p, q) if isinstance(p, tuple) else [(p, q)]
            for a, b in pairs:
                if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                    failures.append(f"grad.{label}: {base} and {count} threads differ")
    report(failures)

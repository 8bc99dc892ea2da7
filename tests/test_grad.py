"""Gradients of the reductions: against ``axisops.reference.grad``, finite
differences, and PyTorch's autograd when torch is installed.

A gradient here is a vector-Jacobian product: for a forward ``y = f(x)`` and an
upstream gradient ``g`` of ``y``'s shape, ``grad.f`` returns ``dL/dx`` for
``L = sum(g * f(x))``, with ``x``'s shape.
"""
from __future__ import annotations

import numpy as np
import pytest
from cases import (
    FLOAT_DTYPES,
    axes,
    cases,
    changed,
    compare_outcomes,
    distinct_values,
    finite_difference,
    mismatch,
    outcome,
    snapshot,
)

import axisops
from axisops import reference as ref

SHAPE_OPS = ("sum", "mean")      # grad takes x_shape
VALUE_OPS = ("prod", "max", "min")  # grad takes x
GRAD_OPS = SHAPE_OPS + VALUE_OPS


def _norm(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    a = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(i % ndim for i in a))


def _out_shape(shape, axis, keepdims):
    red = _norm(axis, len(shape))
    if keepdims:
        return tuple(1 if d in red else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in red)


def _call(module, op, g, x, axis, keepdims):
    f = getattr(module.grad, op)
    return f(g, x.shape if op in SHAPE_OPS else x, axis, keepdims)


def _bound(op, x, want):
    """Tolerance against the reference: a few ulps per element, more for long products."""
    want = np.asarray(want)
    eps = float(np.finfo(want.dtype).eps) if want.dtype.kind == "f" else 0.0
    n = max(x.size, 1)
    factor = 4 + (2 * n if op == "prod" else 0)
    with np.errstate(all="ignore"):
        return factor * eps * np.abs(want.astype(np.float64))


# ------------------------------------------------------------------ vs reference

GRAD_CASES = [pytest.param(n, a, id=n) for n, a in cases(dtypes=FLOAT_DTYPES, max_ndim=4)
              if "-extremes" not in n]


@pytest.mark.parametrize("name,x", GRAD_CASES)
@pytest.mark.parametrize("op", GRAD_OPS)
def test_matches_reference(op, name, x, rng):
    """Every float case and axis: value (NaN-aware), dtype and shape, or the same error."""
    failures = []
    before = snapshot(x)
    for axis in axes(x.ndim):
        for keepdims in (False, True):
            g = np.round(rng.standard_normal(_out_shape(x.shape, axis, keepdims)), 2)
            g = np.asarray(g, dtype=x.dtype)
            want = outcome(_call, ref, op, g, x, axis, keepdims)
            got = outcome(_call, axisops, op, g, x, axis, keepdims)
            msg = compare_outcomes(got, want)
            if msg is None and want[0] == "ok":
                msg = mismatch(got[1], want[1], _bound(op, x, want[1]))
                if msg is None and np.shape(got[1]) != x.shape:
                    msg = f"shape {np.shape(got[1])}, expected x's {x.shape}"
            if msg:
                failures.append(f"grad.{op}(g, x, axis={axis!r}, keepdims={keepdims}): {msg}")
    if msg := changed(x, before):
        failures.append(msg)
    if failures:
        pytest.fail(f"{len(failures)} failing calls:\n" + "\n".join(failures[:25]))


@pytest.mark.parametrize("op", GRAD_OPS)
def test_bad_g_shape_is_value_error(op):
    x = np.arange(12.0).reshape(3, 4)
    for axis, keepdims, g_shape in [(0, False, (3,)), (0, True, (4,)), (None, False, (1,)),
                                    (1, False, (3, 1)), ((0, 1), True, ())]:
        g = np.ones(g_shape)
        for module in (ref, axisops):
            with pytest.raises(ValueError):
                _call(module, op, g, x, axis, keepdims)


@pytest.mark.parametrize("op", GRAD_OPS)
def test_bad_axis(op):
    x = np.arange(12.0).reshape(3, 4)
    from cases import bad_axes
    for axis, exc in bad_axes(2):
        for module in (ref, axisops):
            with pytest.raises(exc):
                _call(module, op, np.ones(3), x, axis, False)


@pytest.mark.parametrize("op", ["max", "min"])  # grad.prod of complex: test_complex.py
def test_complex_is_type_error(op):
    x = np.ones((2, 3), dtype=np.complex128)
    with pytest.raises(TypeError, match=op):
        getattr(axisops.grad, op)(np.ones(2), x, 1)


@pytest.mark.parametrize("op", SHAPE_OPS)
def test_x_shape_as_list_and_zero_d(op):
    got = getattr(axisops.grad, op)(np.ones(2), [2, 3], 1)
    assert got.shape == (2, 3)
    got = getattr(axisops.grad, op)(np.float64(2.0), (), None)
    assert np.shape(got) == () and float(got) == 2.0


# --------------------------------------------------------- zeros, ties and NaN

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_prod_with_zeros_is_exact(dtype):
    x = np.array([[2.0, 0.0, 3.0, 4.0],     # one zero: only it gets a gradient, 24
                  [0.0, 5.0, 0.0, 7.0],     # two zeros: all zero
                  [1.5, -2.0, 3.0, 0.5],    # no zero
                  [0.0, 0.0, 0.0, 0.0]], dtype=dtype)
    g = np.array([1.0, 1.0, 2.0, 1.0], dtype=dtype)
    want = np.array([[0, 24, 0, 0],
                     [0, 0, 0, 0],
                     [2 * -3.0, 2 * 2.25, 2 * -1.5, 2 * -9.0],
                     [0, 0, 0, 0]], dtype=dtype)
    got = axisops.grad.prod(g, x, axis=1)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == dtype
    np.testing.assert_array_equal(ref.grad.prod(g, x, axis=1), want)
    # the same along axis 0 and over both axes
    np.testing.assert_array_equal(axisops.grad.prod(g, x.T, axis=0), want.T)
    assert np.all(axisops.grad.prod(np.array(1.0, dtype), x) == 0)
    one_zero = x[:1]
    np.testing.assert_array_equal(axisops.grad.prod(np.array(1.0, dtype), one_zero), want[:1])


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ties_share_the_gradient(op, dtype):
    sign = 1 if op == "max" else -1
    x = sign * np.array([[3.0, 1.0, 3.0, 3.0],
                         [2.0, 2.0, -1.0, 0.0],
                         [-0.0, 0.0, -5.0, -5.0],
                         [7.0, 7.0, 7.0, 7.0]], dtype=dtype)
    x = x.astype(dtype)
    g = np.array([3.0, 1.0, 2.0, 4.0], dtype=dtype)
    want = np.array([[1, 0, 1, 1],
                     [0.5, 0.5, 0, 0],
                     [1, 1, 0, 0],
                     [1, 1, 1, 1]], dtype=dtype)
    got = getattr(axisops.grad, op)(g, x, axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(getattr(ref.grad, op)(g, x, axis=1), want, rtol=1e-6)


@pytest.mark.parametrize("op", ["max", "min"])
def test_nan_extreme_gives_nan_slice(op):
    """As torch.amax's backward: (g / count) * (x == max), and NaN == NaN is False."""
    x = np.array([[1.0, np.nan, 3.0], [1.0, 4.0, -2.0]])
    got = getattr(axisops.grad, op)(np.array([1.0, 1.0]), x, axis=1)
    assert np.all(np.isnan(got[0]))
    assert not np.any(np.isnan(got[1]))


# ------------------------------------------------------------ finite differences

FD_SHAPES = [(5,), (3, 4), (2, 3, 2)]


def _fd_axes(ndim):
    return [a for a in axes(ndim) if a != ()] + [()]


@pytest.mark.parametrize("shape", FD_SHAPES, ids=str)
@pytest.mark.parametrize("op", GRAD_OPS)
def test_finite_differences(op, shape, rng):
    x = distinct_values(rng, shape)
    if op == "prod":
        x = 0.5 + rng.random(shape)
        x.reshape(-1)[0] = 0.0       # a zero, where dividing by x would fail
    failures = []
    for axis in _fd_axes(len(shape)):
        for keepdims in (False, True):
            w = rng.standard_normal(_out_shape(shape, axis, keepdims))
            fd = finite_difference(
                lambda v: getattr(np, op)(v, axis=axis, keepdims=keepdims), x, w)
            got = _call(axisops, op, w, x, axis, keepdims)
            if not np.allclose(got, fd, rtol=1e-6, atol=1e-6):
                failures.append(f"grad.{op}(w, x, axis={axis!r}, keepdims={keepdims}): "
                                f"got\n{got}\nfinite differences\n{fd}")
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------ vs PyTorch

def _torch_forward(torch, op, t, axis, keepdims):
    ndim = t.dim()
    red = _norm(axis, ndim)
    if op == "prod":  # torch.prod takes one dim: move the reduced axes last and flatten
        kept = [d for d in range(ndim) if d not in red]
        moved = t.permute(*kept, *red).reshape(*[t.shape[d] for d in kept], -1)
        y = torch.prod(moved, dim=-1)
        if keepdims:
            y = y.reshape(_out_shape(tuple(t.shape), axis, True))
        return y
    f = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[op]
    return f(t, dim=red, keepdim=keepdims)


def _torch_inputs(op, rng):
    yield "random", rng.standard_normal((3, 4, 2))
    if op in ("max", "min"):
        yield "ties", rng.integers(0, 2, size=(3, 4, 2)).astype(np.float64)
        yield "nan", np.where(rng.random((3, 4, 2)) < 0.15, np.nan, rng.standard_normal((3, 4, 2)))
    if op == "prod":
        x = rng.standard_normal((3, 4, 2))
        x[0, 1, 0] = 0.0                     # one zero in some slices
        x[1, 0, 1] = x[1, 2, 1] = 0.0        # two zeros in another
        yield "zeros", x


@pytest.mark.parametrize("op", GRAD_OPS)
def test_matches_torch_autograd(op, rng):
    torch = pytest.importorskip("torch")
    failures = []
    for label, x in _torch_inputs(op, rng):
        for axis in [a for a in axes(3) if a != ()]:   # torch reads dim=() as "all"
            for keepdims in (False, True):
                w = rng.standard_normal(_out_shape(x.shape, axis, keepdims))
                t = torch.tensor(x, requires_grad=True)
                y = _torch_forward(torch, op, t, axis, keepdims)
                y.backward(torch.tensor(w))
                want = t.grad.numpy()
                got = _call(axisops, op, w, x, axis, keepdims)
                if not np.allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True):
                    failures.append(f"{label}: grad.{op}(w, x, axis={axis!r}, "
                                    f"keepdims={keepdims}):\ngot\n{got}\ntorch\n{want}")
    assert not failures, "\n".join(failures[:5])

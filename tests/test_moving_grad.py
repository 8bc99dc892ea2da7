"""Gradients of the moving windows (``axisops.grad.moving_*``): central finite
differences through the forward (NaN kept in place, NaN outputs read as 0), zeros at
the skipped NaN, the scatter-add at the arg-extremum, and PyTorch's autograd of the
same windows written with ``unfold`` (float64)."""
from __future__ import annotations

import numpy as np
import pytest
from cases import AxisError, finite_difference

import axisops

OPS = ("moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max", "moving_min")


def data(seed, shape=(3, 11), nan=True):
    rng = np.random.default_rng(seed)
    x = rng.permutation(np.linspace(0.5, 3.5, int(np.prod(shape)))).reshape(shape)  # no ties
    if nan:
        x[rng.random(shape) < 0.2] = np.nan
        x[0, 3:7] = np.nan
    return x


@pytest.mark.parametrize("op", OPS)
def test_gradients_are_finite_differences_and_zero_at_nan(op):
    x = data(1)
    nan = np.isnan(x)
    rng = np.random.default_rng(2)
    forward = getattr(axisops, op)
    for axis in (0, 1, -1):
        for window, min_count in ((1, None), (2, 1), (3, 2), (5, None), (15, 1)):
            kw = {"min_count": min_count}
            if op in ("moving_var", "moving_std"):
                kw["ddof"] = 1 if window > 2 else 0
            g = rng.standard_normal(x.shape)
            got = getattr(axisops.grad, op)(g, x, window, axis, **kw)
            assert got.shape == x.shape and got.dtype == np.float64, op
            assert (got[nan] == 0).all(), op

            def f(v, axis=axis, window=window, kw=kw):
                return np.nan_to_num(forward(np.where(nan, np.nan, v), window, axis, **kw))

            want = finite_difference(f, np.where(nan, 1.0, x), g)
            want[nan] = 0
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{op}(axis={axis}, window={window}, {kw})")


def test_extremes_scatter_g_at_the_latest_arg_extremum():
    x = np.array([[1.0, 3.0, 3.0, 2.0, np.nan, 0.0]])
    g = np.array([[1.0, 2.0, 4.0, 8.0, 16.0, 32.0]])
    np.testing.assert_array_equal(axisops.grad.moving_max(g, x, 3, min_count=1),
                                  [[1, 2, 4 + 8 + 16, 32, 0, 0]])
    np.testing.assert_array_equal(axisops.grad.moving_min(g, x, 2, min_count=2),
                                  [[2, 0, 4, 8, 0, 0]])


def test_dtypes_shapes_and_errors():
    x = data(3, nan=False).astype(np.float32)
    g = np.ones(x.shape, np.float32)
    for op in OPS:
        got = getattr(axisops.grad, op)(g, x, 3)
        assert got.dtype == np.float32 and got.shape == x.shape, op
        assert getattr(axisops.grad, op)(np.ones(x.shape, int), x, 3).dtype == np.float64
        assert getattr(axisops.grad, op)(np.ones((0, 4)), np.ones((0, 4)), 2).shape == (0, 4)
        with pytest.raises(ValueError, match=op):
            getattr(axisops.grad, op)(g[:, :2], x, 3)
        with pytest.raises(ValueError, match="window"):
            getattr(axisops.grad, op)(g, x, 0)
        with pytest.raises(AxisError):
            getattr(axisops.grad, op)(g, x, 2, 2)
        with pytest.raises(TypeError, match=op):
            getattr(axisops.grad, op)(g, x.astype(complex), 2)


def _torch_forward(torch, op, t, window, min_count, ddof):
    """The moving window of a 2-D tensor along axis 1 with unfold (NaN padded in
    front, skipped with a mask), for autograd."""
    pad = torch.full((t.shape[0], window - 1), float("nan"), dtype=t.dtype)
    w = torch.cat([pad, t], dim=1).unfold(1, window, 1)
    ok = ~torch.isnan(w)
    count = ok.sum(-1)
    bad = (count < min_count) | ((count - ddof) <= 0 if op in ("moving_var",
                                                                  "moving_std") else False)
    # safe denominators, so that no inf or NaN reaches the backward (0 * inf)
    safe = torch.where(bad, torch.ones_like(count), count)
    zeroed = torch.where(ok, w, torch.zeros_like(w))
    if op in ("moving_sum", "moving_mean"):
        out = zeroed.sum(-1)
        out = out / safe if op == "moving_mean" else out
    elif op in ("moving_max", "moving_min"):
        fill = float("-inf") if op == "moving_max" else float("inf")
        filled = torch.where(ok, w, torch.full_like(w, fill))
        out = filled.amax(-1) if op == "moving_max" else filled.amin(-1)
    else:
        mean = zeroed.sum(-1, keepdim=True) / safe.unsqueeze(-1)
        dev = torch.where(ok, zeroed - mean, torch.zeros_like(w))
        out = (dev * dev).sum(-1) / torch.where(bad, torch.ones_like(count), count - ddof)
        if op == "moving_std":
            out = torch.where(out > 0, out, torch.ones_like(out)).sqrt() * (out > 0)
    return torch.where(bad, torch.zeros_like(out), out)


@pytest.mark.parametrize("op", OPS)
def test_against_torch_autograd(op):
    torch = pytest.importorskip("torch")
    x = data(4, shape=(4, 40))
    rng = np.random.default_rng(5)
    for window, min_count in ((4, 2), (7, 7), (60, 3)):
        ddof = 1 if op in ("moving_var", "moving_std") else 0
        kw = {"min_count": min_count}
        if ddof:
            kw["ddof"] = ddof
        g = rng.standard_normal(x.shape)
        t = torch.tensor(np.where(np.isnan(x), np.nan, x), requires_grad=True)
        out = _torch_forward(torch, op, t, window, min_count, ddof)
        (out * torch.tensor(g)).sum().backward()
        want = np.nan_to_num(t.grad.numpy())
        got = getattr(axisops.grad, op)(g, x, window, **kw)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=f"{op} {window}")


def test_variance_gradient_at_an_infinite_element_is_zero():
    # every window holding the infinity has a NaN variance, which gives nothing back
    x = np.array([1.0, 2.0, np.inf, 4.0, 5.0, 6.0, 7.0, 8.0])
    for op in ("moving_var", "moving_std"):
        got = getattr(axisops.grad, op)(np.ones(8), x, 3, min_count=2)
        assert got.dtype == np.float64 and got.shape == (8,)
        assert got[2] == 0.0 and np.isfinite(got).all()
    got = axisops.grad.moving_var(np.ones(8), x, 3, min_count=2)
    np.testing.assert_allclose(got[3], 2 * (4.0 - 5.0) / 3)  # only the window [4, 5, 6]

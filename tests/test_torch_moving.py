"""The moving windows on torch tensors: registered operators with autograd
(gradcheck against the NumPy path's gradients) and ``torch.compile``."""
from __future__ import annotations

import numpy as np
import pytest

import axisops

torch = pytest.importorskip("torch")

OPS = ["moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max", "moving_min"]


@pytest.mark.parametrize("name", OPS)
def test_values_and_gradients(name):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 40))
    a[1, 7] = np.nan
    x = torch.tensor(a, requires_grad=True)
    f = getattr(axisops, name)
    options = {"ddof": 1} if name in ("moving_var", "moving_std") else {}
    y = f(x, 5, -1, min_count=3, **options)
    want = f(a, 5, -1, min_count=3, **options)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float64 and y.requires_grad
    assert np.array_equal(y.detach().numpy(), want, equal_nan=True)
    g = rng.standard_normal(a.shape)
    (dx,) = torch.autograd.grad(y, x, torch.tensor(g))
    grad = getattr(axisops.grad, name)(g, a, 5, -1, min_count=3, **options)
    assert np.array_equal(dx.numpy(), grad, equal_nan=True)
    clean = torch.tensor(rng.standard_normal((2, 12)), requires_grad=True)
    assert torch.autograd.gradcheck(  # the first positions are NaN (min_count)
        lambda t: torch.nan_to_num(f(t, 4, 1, min_count=2, **options)), (clean,))


def test_arg_extremes_and_compile():
    x = torch.tensor([[3.0, 1.0, 3.0, 2.0, 5.0]])
    assert axisops.moving_argmax(x, 3).tolist() == [[-1, -1, 2, 2, 4]]
    assert axisops.moving_argmin(x, 2, min_count=1).dtype == torch.int64
    f = torch.compile(lambda t: axisops.moving_mean(t, 2, min_count=1) * 2, fullgraph=True)
    assert torch.equal(f(x), axisops.moving_mean(x, 2, min_count=1) * 2)

"""Pooling on torch tensors: the registered operators (``axisops.torch``) against
``torch.nn.functional``'s pooling, with autograd (gradcheck, double backward of
the average) and ``torch.compile``."""
from __future__ import annotations

import pytest

import axisops
from axisops import torch as T

torch = pytest.importorskip("torch")
F = torch.nn.functional


def test_values_indices_and_gradients_are_torchs():
    x = torch.randn(2, 3, 9, 10, dtype=torch.float64, requires_grad=True)
    v, i = axisops.max_pool(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    tv, ti = F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    assert isinstance(v, torch.Tensor) and v.dtype == torch.float64 and i.dtype == torch.int64
    assert torch.equal(v, tv) and torch.equal(i, ti) and v.requires_grad
    g = torch.randn_like(v)
    (ours,) = torch.autograd.grad(v, x, g)
    (theirs,) = torch.autograd.grad(tv, x, g)
    assert torch.allclose(ours, theirs, rtol=0, atol=1e-14)
    m = axisops.avg_pool(x, (2, 3), stride=(1, 2), padding=1, count_include_pad=False)
    tm = F.avg_pool2d(x, (2, 3), stride=(1, 2), padding=1, count_include_pad=False)
    assert torch.allclose(m, tm, rtol=1e-13)
    (ours,) = torch.autograd.grad(m, x, torch.ones_like(m))
    (theirs,) = torch.autograd.grad(tm, x, torch.ones_like(tm))
    assert torch.allclose(ours, theirs, rtol=1e-13)


def test_gradcheck_and_double_backward():
    x = torch.randn(1, 2, 5, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: axisops.max_pool(t, 2, stride=1), (x,))
    assert torch.autograd.gradcheck(
        lambda t: axisops.avg_pool(t, 3, stride=2, padding=1, ceil_mode=True), (x,))
    assert torch.autograd.gradgradcheck(lambda t: axisops.avg_pool(t, 2, stride=1), (x,))


def test_compile_traces_through_pooling():
    x = torch.randn(2, 3, 8, 8)
    f = torch.compile(lambda t: axisops.max_pool(t, 2) + axisops.avg_pool(t, 2), fullgraph=True)
    out = f(x)
    assert out.shape == (2, 3, 4, 4)
    assert torch.equal(out, axisops.max_pool(x, 2) + axisops.avg_pool(x, 2))


def test_channels_last_and_plain_results():
    x = torch.randn(2, 8, 8, 3)
    v = axisops.max_pool(x, 2, channels_last=True)
    assert isinstance(v, torch.Tensor) and v.shape == (2, 4, 4, 3)
    assert torch.equal(v, F.max_pool2d(x.permute(0, 3, 1, 2), 2).permute(0, 2, 3, 1))
    assert {"max_pool", "grad_avg_pool"} <= set(T.OPERATORS)

"""PyTorch CUDA tensors through autograd: the registered operators' CUDA kernel.

No GPU runs here, and PyTorch's CPU build makes no CUDA tensors. What can be
checked without one is checked: every operator has a CUDA kernel; a CUDA call
that autograd must see is routed to the registered operator; and the CUDA kernel
(``axisops.torch._run_cuda``) maps the schema's arguments to the device
implementation as the CPU kernel maps them to the NumPy path. For the last, the
CUDA kernel is registered for CPU tensors inside a scoped library, and the device
runner (``axisops.cuda.run``) is replaced by one that records the call and runs
the NumPy path: gradcheck and gradgradcheck then run every forward and backward
through ``_run_cuda``. On a GPU, ``tests/test_cuda*.py`` with
``AXISOPS_TEST_REAL_CUDA=1`` run the device implementations themselves.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from test_torch import GRAD_CASES, LINEAR

import axisops
import axisops.cuda
import axisops.torch as T
from axisops._dispatch import numpy_function


def test_every_operator_has_a_cuda_kernel():
    for name in T.OPERATORS:
        assert torch._C._dispatch_has_kernel_for_dispatch_key(f"axisops::{name}", "CUDA"), name


@pytest.fixture
def cuda_kernel_on_cpu(monkeypatch):
    """The CUDA kernel registered for CPU tensors, on a device runner that runs the
    NumPy path; yields the names of the functions it ran."""
    ran: list[str] = []

    def run(func, args, kwargs):
        ran.append(numpy_function(func).__qualname__.split(".")[0])
        on_host = {k: v.detach().numpy() if isinstance(v, torch.Tensor) else v
                   for k, v in kwargs.items()}
        result = numpy_function(func)(*args, **on_host)
        if isinstance(result, tuple):
            return tuple(torch.from_numpy(np.array(r)) for r in result)
        return torch.from_numpy(np.array(result))

    monkeypatch.setattr(axisops.cuda, "run", run)
    with torch.library._scoped_library("axisops", "IMPL") as lib:
        for name in T.OPERATORS:
            lib.impl(name, lambda *args, _name=name: T._run_cuda(_name, *args), "CPU")
        yield ran


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_autograd_through_the_cuda_kernel(name, cuda_kernel_on_cpu):
    f, *inputs = GRAD_CASES[name]
    assert torch.autograd.gradcheck(f, tuple(inputs))
    assert cuda_kernel_on_cpu, "the CUDA kernel did not run"
    assert any(r.startswith(name.split()[0]) for r in cuda_kernel_on_cpu)
    if name in LINEAR:
        assert torch.autograd.gradgradcheck(f, tuple(inputs))


def test_values_through_the_cuda_kernel_are_the_cpu_kernels(cuda_kernel_on_cpu):
    x = torch.linspace(-2, 2, 12, dtype=torch.float64).reshape(3, 4).requires_grad_()
    values, indices = axisops.cummax(x, axis=1)
    values.backward(torch.ones_like(values))
    assert indices.dtype == torch.int64
    want = axisops.grad.cummax(np.ones((3, 4)), indices.numpy(), (3, 4), 1)
    assert x.grad.dtype == torch.float64 and x.grad.shape == (3, 4)
    assert np.array_equal(x.grad.numpy(), want)
    assert "cummax" in cuda_kernel_on_cpu


def test_a_cuda_call_that_autograd_must_see_goes_to_the_registered_operator(monkeypatch):
    calls: list[str] = []
    real = T.call
    monkeypatch.setattr(T, "call", lambda f, a, k: calls.append("torch") or real(f, a, k))
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    out = axisops.cuda.call(axisops.take, (x, torch.tensor([2, 0]), 1), {})
    assert calls == ["torch"] and out.requires_grad
    assert np.array_equal(out.detach().numpy(), [[2.0, 0.0], [5.0, 3.0]])
    with torch.no_grad():  # nothing to record: straight to the device runner
        monkeypatch.setattr(axisops.cuda, "run", lambda f, a, k: "device")
        assert axisops.cuda.call(axisops.take, (x, torch.tensor([2, 0]), 1), {}) == "device"


def test_every_operator_has_a_device_implementation_taking_its_schemas_names():
    # the CUDA kernel passes every schema argument by name to the device function
    import inspect

    pytest.importorskip("numba.cuda")
    table = axisops.cuda._operators()
    for name, spec in T._SPECS.items():
        f = numpy_function(spec.func)
        device = table.get((f.__module__, f.__name__))
        if name in T.NO_CUDA_KERNEL:  # not yet: its CUDA kernel raises NotImplementedError
            assert device is None, f"{name} has a device implementation: drop it from the set"
            continue
        assert device is not None, name
        missing = set(T._TYPES[name]) - set(inspect.signature(device).parameters)
        assert not missing, (name, missing)


# ------------------------------------------ on a real GPU (AXISOPS_TEST_REAL_CUDA=1)

_REAL_GPU = torch.cuda.is_available()
_needs_gpu = pytest.mark.skipif(not _REAL_GPU, reason="needs PyTorch with a CUDA GPU")


@_needs_gpu
@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_real_cuda_tensors_through_autograd(name):
    # forward and backward on the GPU equal the CPU's (to rounding), and gradcheck
    # holds on the device
    from test_torch import _grad_cases

    f, *on_cpu = _grad_cases("cpu")[name]
    g, *on_gpu = _grad_cases("cuda")[name]
    want = f(*on_cpu)
    got = g(*on_gpu)
    assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want)
    weights = torch.linspace(-1, 1, want.numel(), dtype=want.dtype).reshape(want.shape)
    want_grads = torch.autograd.grad((want * weights).sum(), on_cpu)
    got_grads = torch.autograd.grad((got * weights.cuda()).sum(), on_gpu)
    for a, b in zip(got_grads, want_grads):
        assert a.device.type == "cuda" and a.dtype == b.dtype and a.shape == b.shape
        torch.testing.assert_close(a.cpu(), b)
    assert torch.autograd.gradcheck(g, tuple(on_gpu))

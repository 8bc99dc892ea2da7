"""The missing-value operators on torch.Tensor: PyTorch's ``nansum``, ``nanmean``,
``var`` and ``std`` as the reference, the NumPy path for the others, autograd
(gradcheck) through the registered operators, the fake implementations, and that
every one has a CUDA kernel (``axisops.cuda.missing``, ``missing_grad``)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import axisops
from axisops import torch as T
from axisops._dispatch import numpy_function


def _with_nans(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    x[torch.rand(shape, generator=g) < 0.2] = float("nan")
    return x


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_against_torchs_own(axis, keepdims):
    x = _with_nans((3, 4, 5))
    for name, peer in (("nansum", torch.nansum), ("nanmean", torch.nanmean)):
        got = getattr(axisops, name)(x, axis=axis, keepdims=keepdims)
        want = peer(x, dim=axis, keepdim=keepdims)
        assert isinstance(got, torch.Tensor) and got.dtype == want.dtype
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, equal_nan=True)
    full = torch.nan_to_num(x, 0.5)
    for name in ("var", "std"):
        for ddof in (0, 1):
            got = getattr(axisops, name)(full, axis=axis, keepdims=keepdims, ddof=ddof)
            want = getattr(torch, name)(full, dim=axis, keepdim=keepdims, correction=ddof)
            assert got.dtype == want.dtype and got.shape == want.shape
            torch.testing.assert_close(got, want)


def test_every_missing_value_operator_gives_the_numpy_paths_result_as_a_tensor():
    x = _with_nans((4, 6), seed=1)
    x[2] = float("nan")
    a = x.numpy()
    calls = {
        "nansum": (1,), "nanprod": (0,), "nanmean": (1,), "count": (1,), "var": (0,),
        "std": (0,), "nanvar": (1,), "nanstd": (1,), "nanmax": (1,), "nanmin": (0,),
        "nancumsum": (1,), "nancumprod": (0,),
    }
    for name, args in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = getattr(axisops, name)(x, *args)
            want = getattr(axisops, name)(a, *args)
        assert isinstance(got, torch.Tensor), name
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
        assert got.numpy().dtype == want.dtype, name
    got = axisops.nanargmax(x, 1, all_nan_index=-1)
    assert got.dtype == torch.int64 and got.tolist() == [*np.nanargmax(a[:2], 1), -1,
                                                         np.nanargmax(a[3])]
    with pytest.raises(ValueError, match="All-NaN slice"):
        axisops.nanargmin(x, 1)


CASES = {
    "nansum": (lambda a: axisops.nansum(a, axis=1),),
    "nanmean": (lambda a: axisops.nanmean(a, axis=(0, 1), keepdims=True),),
    "nanprod": (lambda a: axisops.nanprod(a, axis=0),),
    "nanmax": (lambda a: axisops.nanmax(a, axis=1),),
    "nanmin": (lambda a: axisops.nanmin(a, axis=None),),
    "var": (lambda a: axisops.var(torch.nan_to_num(a, 0.5), axis=1, ddof=1),),
    "std": (lambda a: axisops.std(torch.nan_to_num(a, 0.5), axis=0),),
    "nanvar": (lambda a: axisops.nanvar(a, axis=1),),
    "nanstd": (lambda a: axisops.nanstd(a, axis=0, ddof=1),),
    "nancumsum": (lambda a: axisops.nancumsum(a, axis=1, reverse=True),),
    "nancumprod": (lambda a: axisops.nancumprod(a, axis=0, exclusive=True),),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    # NaN at fixed places: the gradient there is 0 and the others are numbers
    x = torch.linspace(0.5, 1.5, 24, dtype=torch.float64).reshape(4, 6)[:, torch.randperm(6)]
    x[0, 1] = x[2, 4] = float("nan")
    x = x.requires_grad_()
    (f,) = CASES[name]

    def on_the_numbers(a):
        return torch.nan_to_num(f(a), 0.0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y = f(x)
        assert y.requires_grad
        (g,) = torch.autograd.grad(torch.nan_to_num(y, 0.0).sum(), x)
        if name.startswith("nan"):
            assert g[0, 1] == 0 and g[2, 4] == 0
        # gradcheck perturbs every element, the NaN too (a NaN plus h stays NaN)
        assert torch.autograd.gradcheck(on_the_numbers, (x,), atol=1e-6)


def test_fake_implementations_and_the_schema():
    from torch._subclasses.fake_tensor import FakeTensorMode

    x = _with_nans((3, 4))
    calls = {
        "nanvar": (x, [1], True, None, 1.0),
        "nanargmax": (x, [0, 1], False, False, torch.int32, -1),
        "nancumsum": (x, 1, None, True, False),
        "count": (x, None, False),
        "grad_nanstd": (torch.ones(3), x, [1], False, 0.0),
    }
    for name, args in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            real = T.OPERATORS[name](*args)
            with FakeTensorMode(allow_non_fake_inputs=True) as mode:
                fake_args = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a
                             for a in args]
                fake = T.OPERATORS[name](*fake_args)
        assert (real.shape, real.dtype) == (fake.shape, fake.dtype), name
    torch.library.opcheck(torch.ops.axisops.nansum.default, (x.requires_grad_(), [1], False, None))


def test_torch_compile_traces_through():
    def step(x):
        return axisops.nanmean(x, axis=1) + axisops.nanstd(x, axis=1)

    x = _with_nans((3, 8), seed=2)
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
    torch.testing.assert_close(compiled(xc), step(xe))
    step(xe).sum().backward()
    compiled(xc).sum().backward()
    torch.testing.assert_close(xc.grad, xe.grad)


def test_every_missing_value_operator_has_a_cuda_kernel():
    import axisops.cuda

    assert not {n.removeprefix('grad_') for n in T.NO_CUDA_KERNEL} & set(axisops.missing.__all__)
    table = axisops.cuda._operators()
    for name in ("nansum", "grad_nanvar", "count", "nanargmax", "nancumprod", "grad_nanmax"):
        f = numpy_function(T._SPECS[name].func)
        assert (f.__module__, f.__name__) in table, name

"""Gradients of the missing-value operators (``axisops.grad.nansum`` ...): finite
differences through the forward, zeros at the skipped NaN, the plain twins' gradients
on NaN-free input, and PyTorch's autograd (``torch.nansum``, ``torch.nanmean``,
``torch.var``, ``torch.std``) when torch is installed."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import finite_difference

import axisops

REDUCTIONS = ("nansum", "nanmean", "nanprod", "nanmax", "nanmin", "var", "std", "nanvar",
              "nanstd")
SCANS = ("nancumsum", "nancumprod")
AXES = (None, 0, 1, (0, 2))


def data(seed, shape=(3, 4, 5), nan=True):
    rng = np.random.default_rng(seed)
    x = rng.permutation(np.linspace(0.5, 1.5, np.prod(shape))).reshape(shape)  # no ties
    if nan:
        x[rng.random(shape) < 0.2] = np.nan
        x[0, 1, :] = np.nan
    return x


def forward_without_warnings(op, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(axisops, op)(*args, **kwargs)


@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduction_gradients_are_finite_differences_and_zero_at_nan(op):
    x = data(1)
    nan = np.isnan(x)
    rng = np.random.default_rng(2)
    for axis in AXES:
        for keepdims in (False, True):
            kwargs = {"ddof": 1} if op.endswith(("var", "std")) else {}
            y = forward_without_warnings(op, x, axis, keepdims=keepdims, **kwargs)
            w = rng.standard_normal(np.shape(y))
            got = getattr(axisops.grad, op)(w, x, axis, keepdims, **kwargs)
            assert got.shape == x.shape and got.dtype == np.float64, (op, axis)
            if op in ("var", "std"):  # NaN propagates (checked without NaN below)
                continue
            assert (got[nan] == 0).all(), (op, axis)
            # compare where the forward is a number (ddof can leave a slice NaN)
            y_kept = forward_without_warnings(op, x, axis, keepdims=True, **kwargs)
            skip = nan | np.isnan(np.broadcast_to(y_kept, x.shape))

            def f(v, axis=axis, keepdims=keepdims):
                filled = np.where(nan, np.nan, v)  # the NaN stay NaN under the differences
                out = forward_without_warnings(op, filled, axis, keepdims=keepdims, **kwargs)
                return np.nan_to_num(out, nan=0.0)

            want = finite_difference(f, np.where(nan, 1.0, x), w)
            np.testing.assert_allclose(np.where(skip, 0, got), np.where(skip, 0, want),
                                       rtol=1e-5, atol=1e-6, err_msg=f"{op}(axis={axis})")


@pytest.mark.parametrize("op", REDUCTIONS + SCANS)
def test_without_nan_each_is_its_plain_twins_gradient(op):
    x = data(3, nan=False)
    plain = {"nanvar": "var", "nanstd": "std"}.get(op, op[3:] if op.startswith("nan") else op)
    for axis in ((None, 0, 2) if op in SCANS else AXES):
        if op in SCANS:
            y = getattr(axisops, op)(x, axis)
            g = np.random.default_rng(4).standard_normal(y.shape)
            got = getattr(axisops.grad, op)(g, x, axis)
            twin = getattr(axisops.grad, plain)
            want = twin(g, x.shape, axis) if plain == "cumsum" else twin(g, x, axis)
        else:
            y = getattr(axisops, op)(x, axis)
            g = np.random.default_rng(4).standard_normal(np.shape(y))
            got = getattr(axisops.grad, op)(g, x, axis)
            twin = getattr(axisops.grad, plain)
            want = twin(g, x.shape, axis) if plain in ("sum", "mean") else twin(g, x, axis)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=f"{op}({axis})")


@pytest.mark.parametrize("op", SCANS)
def test_scan_gradients_are_finite_differences_and_zero_at_nan(op):
    x = data(5)
    nan = np.isnan(x)
    for axis in (None, 0, 2):
        for options in ({}, {"exclusive": True}, {"reverse": True}):
            y = getattr(axisops, op)(x, axis, **options)
            w = np.random.default_rng(6).standard_normal(y.shape)
            got = getattr(axisops.grad, op)(w, x, axis, **options)
            assert got.shape == x.shape and got.dtype == np.float64
            assert (got[nan] == 0).all()

            def f(v, axis=axis, options=options):
                return getattr(axisops, op)(np.where(nan, np.nan, v), axis, **options)

            want = finite_difference(f, np.where(nan, 1.0, x), w)
            np.testing.assert_allclose(np.where(nan, 0, got), np.where(nan, 0, want), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{op}(axis={axis}, {options})")


def test_all_nan_slices_and_ties():
    x = np.array([[2.0, np.nan, 2.0, 1.0], [np.nan] * 4])
    np.testing.assert_array_equal(axisops.grad.nanmax(np.ones(2), x, 1),
                                  [[0.5, 0, 0.5, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(axisops.grad.nanmin(np.ones(2), x, 1), [[0, 0, 0, 1], [0] * 4])
    np.testing.assert_array_equal(axisops.grad.nanmean(np.ones(2), x, 1),
                                  [[1 / 3, 0, 1 / 3, 1 / 3], [0] * 4])
    np.testing.assert_array_equal(axisops.grad.nansum(np.ones(2), x, 1), [[1, 0, 1, 1], [0] * 4])
    with pytest.raises(ValueError, match=r"grad\.nanmean: g has shape"):
        axisops.grad.nanmean(np.ones(3), x, 1)
    g32 = axisops.grad.nanmean(np.ones(2, np.float32), x.astype(np.float32), 1)
    assert g32.dtype == np.float32


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("op", ("nansum", "nanmean", "var", "std", "nanvar", "nanstd"))
def test_gradients_match_torch_autograd(op):
    x = data(7)
    if op in ("var", "std"):
        x = np.nan_to_num(x, nan=0.25)
    for axis in AXES:
        for correction in (0, 1):
            t = torch.tensor(x, requires_grad=True)
            dims = None if axis is None else axis
            if op in ("nansum", "nanmean"):
                if correction:
                    continue
                y = getattr(torch, op)(t, dim=dims)
                kwargs = {}
            elif op.startswith("nan"):  # torch has no nanvar: the masked formula
                every = tuple(range(x.ndim)) if dims is None else dims
                mask = ~torch.isnan(t)
                filled = torch.where(mask, t, 0)  # no NaN reaches a derivative
                n = mask.sum(dim=every, keepdim=True)
                mean = filled.sum(dim=every, keepdim=True) / n
                sq = torch.where(mask, (filled - mean) ** 2, 0).sum(dim=every, keepdim=True)
                y = sq / (n - correction)
                y = y.sqrt() if op == "nanstd" else y
                y = y.reshape(np.shape(forward_without_warnings(op, x, axis, ddof=correction)))
                kwargs = {"ddof": correction}
            else:
                y = getattr(torch, op)(t, dim=dims, correction=correction)
                kwargs = {"ddof": correction}
            w = torch.tensor(np.random.default_rng(8).standard_normal(tuple(y.shape)))
            (y * w).sum().backward()
            got = getattr(axisops.grad, op)(w.numpy(), x, axis, **kwargs)
            # where the forward is NaN (all NaN, or ddof at the count) both give NaN or
            # inf in their own ways: compared elsewhere
            y_kept = forward_without_warnings(op, x, axis, keepdims=True, **kwargs)
            skip = np.isnan(x) | np.isnan(np.broadcast_to(y_kept, x.shape))
            np.testing.assert_allclose(np.where(skip, 0, got), np.where(skip, 0, t.grad.numpy()),
                                       rtol=1e-10, atol=1e-12, err_msg=f"{op}(axis={axis})")
            if op.startswith("nan"):
                assert (got[np.isnan(x)] == 0).all()

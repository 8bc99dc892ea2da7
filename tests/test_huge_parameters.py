"""Huge sizes in the parameters are answered or refused in the contract's words, on
every array type: a window, kernel size, stride, dilation, padding, output size,
``ddof``, ``all_nan_index`` or index beyond what an int64 holds never reaches a
kernel or a schema as an int that overflows (Numba's ``ValueError: Int value is
too large``, ``OverflowError: Python int too large to convert to C long``, torch's
``Expected a value of type 'int'``).

What the contract answers: a moving window longer than the axis (any length) is
the axis's window; a stride longer than the padded input is one window; the
dilation of a one-element kernel changes nothing. What it refuses: a kernel
longer than the padded input, a padded size or result of more than 2**62 elements
(``ValueError``); an index beyond int64 (``IndexError``, out of range of any axis);
an ``all_nan_index`` that does not fit ``index_dtype`` (``OverflowError``).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import axisops
from axisops import grad

HUGE = [2 ** 62, 2 ** 63, 2 ** 70]


def _kinds():
    """(name, to the array type, back to NumPy) of every array type installed."""
    kinds = [("numpy", lambda a: a, np.asarray)]
    try:
        import torch
        kinds.append(("torch", torch.from_numpy, lambda t: t.detach().numpy()))
        kinds.append(("torch autograd", lambda a: torch.from_numpy(a).requires_grad_(),
                      lambda t: t.detach().numpy()))
    except ImportError:  # pragma: no cover - the test extra has torch
        pass
    try:
        import dask.array as da
        kinds.append(("dask", lambda a: da.from_array(a, chunks=2), lambda r: r.compute()))
    except ImportError:  # pragma: no cover
        pass
    try:
        from cuda_support import host, on_device
        kinds.append(("cuda", on_device, host))
    except Exception:  # pragma: no cover - no numba-cuda
        pass
    return kinds


KINDS = _kinds()
KIND_IDS = [k[0] for k in KINDS]


@pytest.fixture(params=KINDS, ids=KIND_IDS)
def kind(request):
    return request.param


def _first(r):
    return r[0] if isinstance(r, tuple) else r


@pytest.mark.parametrize("huge", HUGE, ids=["2**62", "2**63", "2**70"])
def test_moving_windows_longer_than_any_axis(kind, huge):
    name, to, back = kind
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 7))
    x[0, 2] = np.nan
    for op in ("moving_sum", "moving_std", "moving_max", "moving_argmin"):
        f = getattr(axisops, op)
        # the default min_count (the window) is more than any axis holds: all NaN (-1)
        got = back(f(to(x), huge))
        want = np.full(x.shape, -1) if "arg" in op else np.full(x.shape, np.nan)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {op}")
        assert got.dtype == (np.int64 if "arg" in op else np.float64)
        # a min_count the axis holds: the window of the whole axis
        got = back(f(to(x), huge, min_count=2))
        want = f(x, 7, min_count=2)
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{name} {op}")


def test_gradients_of_moving_windows_longer_than_any_axis():
    x = np.random.default_rng(1).standard_normal((2, 5))
    g = np.ones_like(x)
    for op in ("moving_mean", "moving_var", "moving_max"):
        f = getattr(grad, op)
        np.testing.assert_array_equal(f(g, x, 2 ** 70, min_count=3), f(g, x, 5, min_count=3))
        np.testing.assert_array_equal(f(g, x, 2 ** 63), np.zeros_like(x))  # no result: no grad


@pytest.mark.parametrize("huge", HUGE, ids=["2**62", "2**63", "2**70"])
def test_window_geometry(kind, huge):
    name, to, back = kind
    x = np.arange(2 * 3 * 8 * 8, dtype=np.float64).reshape(2, 3, 8, 8)
    # answered: a stride longer than the input is one window; a one-element kernel's
    # dilation changes nothing
    np.testing.assert_array_equal(back(axisops.unfold(to(x), (2, 2), stride=huge)),
                                  axisops.unfold(x, (2, 2), stride=8), err_msg=name)
    np.testing.assert_array_equal(back(axisops.avg_pool(to(x), 2, stride=huge)),
                                  axisops.avg_pool(x, 2, stride=8), err_msg=name)
    np.testing.assert_array_equal(back(_first(axisops.max_pool(to(x), 1, dilation=huge))),
                                  x, err_msg=name)
    cols = axisops.unfold(x, (2, 2), stride=8)
    np.testing.assert_array_equal(back(axisops.fold(to(cols), (3, 3), (2, 2), stride=huge)),
                                  axisops.fold(cols, (3, 3), (2, 2), stride=3), err_msg=name)
    # refused with the NumPy path's ValueError
    refused = [
        (lambda a: axisops.unfold(a, (huge, 2)), "the kernel spans"),
        (lambda a: axisops.unfold(a, (2, 2), dilation=huge), "the kernel spans"),
        (lambda a: axisops.unfold(a, (2, 2), padding=huge), "padded size"),
        (lambda a: axisops.max_pool(a, huge), "the kernel spans"),
        (lambda a: axisops.max_pool(a, 2, padding=huge), "padded size"),
        (lambda a: axisops.avg_pool(a, 2, padding=[(0, huge), (0, 0)]), "padded size"),
        (lambda a: axisops.fold(a, (huge, 3), (2, 2)), "fold"),
    ]
    for call, words in refused:
        with pytest.raises(ValueError, match=words):
            call(to(cols if "fold" in words else x))


def test_padding_whose_result_no_array_can_hold():
    x = np.zeros((1, 1, 4, 4))
    with pytest.raises(ValueError, match="more than any array can hold"):
        axisops.unfold(x, (2, 2), padding=2 ** 40)
    # pooling refuses it sooner: its windows would lie wholly in the padding
    with pytest.raises(ValueError, match="wholly in the padding"):
        axisops.max_pool(x, 2, padding=2 ** 40)
    # a dilation larger than the input: windows between its elements are found
    with pytest.raises(ValueError, match="window 1 lies wholly in the padding"):
        axisops.max_pool(np.zeros((1, 1, 1, 3)), (1, 2), stride=1, dilation=(1, 5),
                         padding=(0, 3))


def test_indices_beyond_int64(kind):
    _, to, back = kind
    x = np.arange(12.0).reshape(3, 4)
    for indices in (2 ** 64, -2 ** 64, [1, 2 ** 70]):
        with pytest.raises(IndexError, match="beyond int64"):
            back(axisops.take(to(x), indices, 1))
    with pytest.raises(IndexError, match=r"index 1180591620717411303424 at position \(0, 0\)"):
        back(axisops.take_along_axis(to(x), [[2 ** 70] * 4], 0))


@pytest.mark.parametrize("value, index_dtype", [(2 ** 70, np.int64), (2 ** 40, np.int32)])
def test_an_all_nan_index_that_does_not_fit(kind, value, index_dtype):
    _, to, back = kind
    x = np.ones((3, 4))
    x[0] = np.nan
    with pytest.raises(OverflowError, match=f"nanargmax: all_nan_index {value} does not fit"):
        back(axisops.nanargmax(to(x), 1, all_nan_index=value, index_dtype=index_dtype))
    got = back(axisops.nanargmax(to(x), 1, all_nan_index=np.iinfo(index_dtype).min,
                                 index_dtype=index_dtype))
    np.testing.assert_array_equal(got, [np.iinfo(index_dtype).min, 0, 0])
    assert got.dtype == index_dtype


def test_ddof_beyond_int64():
    x = np.arange(12.0).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # degrees of freedom <= 0
        got = axisops.var(x, 1, ddof=2 ** 70)
        assert np.isnan(got).all() and got.dtype == np.float64 and got.shape == (3,)
        np.testing.assert_array_equal(axisops.moving_std(x, 2, ddof=2 ** 64), np.full(x.shape,
                                                                                      np.nan))
        tiny = axisops.nanstd(x, 1, ddof=-2 ** 70)  # a huge divisor
        np.testing.assert_allclose(tiny, np.std(x, 1) * np.sqrt(4 / (4 + 2.0 ** 70)))
        assert np.isfinite(grad.var(np.ones(3), x, 1, ddof=2 ** 70)).all()

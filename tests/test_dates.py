"""datetime64 and timedelta64 (``axisops._dates``): orderings with NaT as NaN, sums of
durations, and the moves, against NumPy where NumPy follows the contract and against
the NaT-masked values where the contract's nan operators skip NaT (NumPy's
``nanargmax``, ``nanmean`` and ``nancumsum`` of dates do not)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import axisops


def dates(unit="D", seed=0, shape=(5, 7)):
    rng = np.random.default_rng(seed)
    d = rng.integers(-3000, 30000, shape).astype(f"datetime64[{unit}]")
    d[rng.random(shape) < 0.2] = np.datetime64("NaT")
    d[1, 2] = d[1, 5]  # a tie
    d[3, :] = np.datetime64("NaT")  # all NaT
    return d


def durations(seed=1, shape=(5, 7)):
    return dates("s", seed, shape) - np.datetime64(0, "s")


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def masked_extreme(x, axis, greatest):
    """The extreme of the values that are not NaT (NaT for an all-NaT slice)."""
    b = x.view(np.int64)
    nat = np.isnat(x)
    info = np.iinfo(np.int64)
    filled = np.where(nat, info.min if greatest else info.max, b)
    v = filled.max(axis=axis) if greatest else filled.min(axis=axis)
    v = np.where(nat.all(axis=axis), info.min, v)
    return v.view(x.dtype)


@pytest.mark.parametrize("make", [dates, durations], ids=["datetime64", "timedelta64"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_orderings_with_nat_as_nan(make, axis):
    x = make()
    for view in (x, x.T.copy().T, x[::-1, ::2]):
        for op in ("max", "min", "argmax", "argmin"):  # NaT propagates, as NumPy
            same(getattr(axisops, op)(view, axis), getattr(np, op)(view, axis))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            same(axisops.nanmax(view, axis), masked_extreme(view, axis, True))
            same(axisops.nanmin(view, axis), masked_extreme(view, axis, False))
        b = view.view(np.int64)
        nat = np.isnat(view)
        for op, fill in (("nanargmax", np.iinfo(np.int64).min), ("nanargmin", np.iinfo(np.int64).max)):
            got = getattr(axisops, op)(view, axis, all_nan_index=-1)
            keys = np.where(nat, fill, b)
            want = np.argmax(keys, axis) if op == "nanargmax" else np.argmin(keys, axis)
            want = np.where(nat.all(axis=axis), -1, want)
            same(got, want)


def test_all_nat_slices_warn_and_raise():
    x = dates()
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        assert np.isnat(axisops.nanmax(x, 1)[3])
    with pytest.raises(ValueError, match=r"nanargmin: All-NaN slice encountered.*\(3,\)"):
        axisops.nanargmin(x, 1)


@pytest.mark.parametrize("make", [dates, durations], ids=["datetime64", "timedelta64"])
def test_cummax_and_cummin(make):
    x = make()
    for axis in (None, 0, 1):
        for op, ufunc in (("cummax", np.maximum), ("cummin", np.minimum)):
            values, indices = getattr(axisops, op)(x, axis)
            flat = x.reshape(-1) if axis is None else x
            same(values, ufunc.accumulate(flat, axis=0 if axis is None else axis))
            assert indices.dtype == np.int64 and indices.shape == values.shape
            # each index points at the value taken
            a = 0 if axis is None else axis
            same(np.take_along_axis(flat, indices, a), values)


def test_sums_of_durations():
    t = durations()
    for axis in (None, 0, 1):
        same(axisops.sum(t, axis), np.sum(t, axis))
        same(axisops.mean(t, axis), np.mean(t, axis))
        same(axisops.cumsum(t, axis), np.cumsum(t, axis))
        nat = np.isnat(t)
        zeroed = np.where(nat, np.timedelta64(0, "s"), t)
        same(axisops.nansum(t, axis), np.sum(zeroed, axis))
        same(axisops.nancumsum(t, axis), np.cumsum(zeroed, axis))
        same(axisops.count(t, axis), np.sum(~nat, axis=axis))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            n = np.sum(~nat, axis=axis)
            want = np.where(n > 0, np.sum(zeroed, axis) / np.maximum(n, 1), np.timedelta64("NaT"))
            same(axisops.nanmean(t, axis), np.asarray(want).astype(t.dtype))
    same(axisops.count(dates(), 1), np.sum(~np.isnat(dates()), axis=1))
    with pytest.raises(TypeError, match="sum"):
        axisops.sum(dates())
    with pytest.raises(TypeError, match="prod"):
        axisops.prod(durations())


@pytest.mark.parametrize("make", [dates, durations], ids=["datetime64", "timedelta64"])
def test_moves_move_the_bits(make):
    x = make()
    same(axisops.take(x, [4, 0, -1], 1), np.take(x, [4, 0, -1], 1))
    idx = np.array([[0, 6, 2]] * 5)
    same(axisops.take_along_axis(x, idx, 1), np.take_along_axis(x, idx, 1))
    same(axisops.gather_nd(x, [[1, 2], [4, 0]]), x[[1, 4], [2, 0]])
    nat = np.array(["NaT"], x.dtype)[0]
    filled = axisops.take(x, [0, 9], 1, mode="fill", fill_value=nat)
    assert np.isnat(filled[:, 1]).all() and (filled[:, 0] == x[:, 0])[~np.isnat(x[:, 0])].all()
    with pytest.raises(TypeError, match="fill_value"):
        axisops.take(x, [0, 9], 1, mode="fill", fill_value=1.5)
    got = axisops.scatter(x, np.zeros((1, 7), np.int64), x[2:3], 0)  # row 2 onto row 0
    same(got[0], x[2])
    same(got[1:], x[1:])

"""The SIMD exp and log of ``axisops.kernels.vmath`` against NumPy's (the C
library's), in units in the last place, over the ranges logcumsumexp's blocks
use them on: exp of [-708, 0] and -inf, log of sums in [e**-600, 65] and 0."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from axisops.kernels.vmath import EXP_MIN, exp_block, log_block


@njit(cache=True)
def _exp(x):
    out = np.empty_like(x)
    exp_block(x, out, np.empty_like(x), x.size)
    return out


@njit(cache=True)
def _log(x):
    out = np.empty_like(x)
    log_block(x, out, np.empty_like(x), np.empty_like(x), x.size)
    return out


def _ulps(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want) / np.spacing(np.abs(want))))


def test_exp_within_an_ulp(rng):
    x = np.concatenate([-rng.random(20000) * -EXP_MIN, -rng.random(20000),
                        -rng.random(1000) * 1e-12, [0.0, -0.0, EXP_MIN, -1.0, -0.5 * np.log(2)]])
    got = _exp(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert _ulps(got, np.exp(x)) <= 1.0
    assert got[-5] == 1.0 and got[-4] == 1.0


def test_exp_flushes_below_its_range_to_zero():
    x = np.array([-np.inf, -709.0, -1e300, -np.finfo(np.float64).max])
    np.testing.assert_array_equal(_exp(x), np.zeros(4))


def test_log_within_an_ulp(rng):
    x = np.concatenate([np.exp(-rng.random(20000) * 600), 1 + rng.random(20000) * 64,
                        1 + rng.random(1000) * 1e-9, [1.0, 2.0, 0.5, 65.0, np.sqrt(2.0),
                                                       np.sqrt(0.5), np.finfo(np.float64).tiny]])
    got = _log(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    nonzero = x != 1.0
    assert _ulps(got[nonzero], np.log(x[nonzero])) <= 2.0
    assert np.all(got[~nonzero] == 0.0)


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_log_of_zero_is_minus_infinity(zero):
    got = _log(np.array([zero, 1.0]))
    assert got[0] == -np.inf and got[1] == 0.0

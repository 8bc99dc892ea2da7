"""numpy.ma.MaskedArray inputs: refused with a TypeError naming the operator and the
way to skip the masked elements (``.filled(np.nan)`` and the nan operators), never
silently unmasked (``sum([1, --, 3])`` would otherwise be 6) -- in any argument
that takes an array, on every public function and gradient."""
from __future__ import annotations

import numpy as np
import pytest

import axisops

M = np.ma.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], mask=[[0, 1, 0], [0, 0, 0]])
X = M.data
I2 = np.array([[0, 2, 1], [1, 0, 0]])

CALLS = {
    **{name: (getattr(axisops, name), (M, 1)) for name in (
        "sum", "prod", "mean", "max", "min", "argmax", "argmin", "cumsum", "cumprod", "cummax",
        "cummin", "logcumsumexp", "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax",
        "nanmin", "nanargmax", "nanargmin", "nancumsum", "nancumprod", "count", "var", "std")},
    "take": (axisops.take, (M, [0, 1], 1)),
    "take indices": (axisops.take, (X, np.ma.array([0, 1], mask=[0, 1]), 1)),
    "take_along_axis": (axisops.take_along_axis, (M, I2, 1)),
    "gather_nd": (axisops.gather_nd, (M, [[0, 1]])),
    "scatter updates": (axisops.scatter, (X, I2, np.ma.array(X, mask=M.mask), 1)),
    "unfold": (axisops.unfold, (M[None, None], 2)),
    "grad.sum": (axisops.grad.sum, (np.ma.array([1.0, 2.0], mask=[1, 0]), (2, 3), 1)),
    "grad.max x": (axisops.grad.max, (np.ones(2), M, 1)),
    "grad.nanmean x": (axisops.grad.nanmean, (np.ones(2), M, 1)),
    "grad.take_along_axis": (axisops.grad.take_along_axis,
                             (np.ma.array(X, mask=M.mask), I2, (2, 3), 1)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_masked_arrays_are_refused_by_name(name):
    func, args = CALLS[name]
    op = name.split()[0]
    with pytest.raises(TypeError, match=rf"^{op}: numpy.ma.MaskedArray is not supported.*"
                                        r"filled\(np.nan\).*nan operators"):
        func(*args)


def test_the_data_of_a_masked_array_is_taken_when_asked():
    assert axisops.sum(M.data) == 21.0
    assert axisops.nansum(M.filled(np.nan)) == 19.0

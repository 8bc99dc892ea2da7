"""The moving windows and their gradients on CUDA arrays against the NumPy path,
under Numba's CUDA simulator (see ``tests/test_cuda.py``).

Every result must be a device array with the NumPy path's dtype and shape. The
extremes, their indices and grad.moving_max/min must be its bits (the window
walked in index order, ties to the latest; the gradient's terms added in output
order from +0.0). The sums, means, variances and their gradients are computed
per window in float64 on the device (two passes for the variances), the CPU's
with running sums: equal to rounding, checked with a float64-tight tolerance
(:data:`RTOL`), NaN and infinities at the same places. Windows of 1, 3, longer
than the axis; min_count; NaN runs, ties, infinities, -0.0; the axis first,
middle and last, strided views; the errors the NumPy path's. The arrays are
small (the simulator runs a Python thread per element).
"""
from __future__ import annotations

import numpy as np
import pytest
from cases import same_bits
from cuda_support import (  # noqa: F401
    dtype_params,
    host,
    on_device,
    outcome,
    quick_thread_switches,
)

import axisops

SUMS = ("moving_sum", "moving_mean")
VARS = ("moving_var", "moving_std")
EXACT = ("moving_max", "moving_min", "moving_argmax", "moving_argmin")
OPS = SUMS + VARS + EXACT
GRADS = ("moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max", "moving_min")

#: One dtype of each class runs by default (float64 first: its tolerance is the
#: tight one), the rest under the exhaustive switch; of the forwards, the bool,
#: uint64 and float16 classes too (41, 38 and 29 s of a loaded CI run: the same
#: kernel source under the simulator; their typing is compiled for a real GPU by
#: test_cuda_compile, and the GPU check runs them all).
DTYPES = [np.float64, np.float16, np.int32, np.bool_, np.uint64, np.float32, np.int8,
          np.uint8, np.int64]
G_DTYPES = [np.float64, np.float16, np.float32]
#: classes whose forwards run under the exhaustive switch only (see DTYPES)
FORWARDS_ELSEWHERE = (np.bool_, np.uint64, np.float16)
#: Relative tolerance per result dtype of what is equal to rounding (both sides
#: round once from float64, which differs by the order of its roundings only),
#: also times the largest result as an absolute one.
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-11}


def values(dtype, shape, rng, big: bool = False) -> np.ndarray:
    """Small integers (ties; with *big* the dtype's largest too) and fractions; for
    floats a NaN run, scattered NaN, +-inf and -0.0 along the last axis.

    The extremes and variances take *big* (the CPU's running variance computes a
    window afresh where a huge value leaving it would leave its rounding error
    behind: before, a moving std of 22.6 for 1.0 after 2**31 - 1 in an int32 lane,
    which the device's per-window passes never had); the sums do not (a running
    sum keeps the residue of a huge value, a fraction of an ulp of it, as
    bottleneck's and pandas' do)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        x = rng.integers(0, 5, shape).astype(dtype)
        if big:
            x.reshape(-1)[1] = np.iinfo(dtype).max
        return x
    x = rng.integers(-3, 4, shape).astype(np.float64)
    frac = rng.random(shape) < 0.5
    x[frac] = rng.standard_normal(frac.sum()) * 10
    x = x.astype(dtype)
    x[..., 2:6] = np.nan
    flat = x.reshape(-1)
    for i, special in enumerate((np.nan, -0.0, np.inf, -np.inf, np.nan, 0.0)):
        flat[(7 * i + 9) % flat.size] = special
    return x


def compare(fn, a, exact: bool, problems: list, label: str, ignore=None, **kwargs):
    """*fn* on the host against *fn* on the device (*a* copied there; device keyword
    arrays copied back for the host): the same error, or the same dtype and shape
    and bits (*exact*) or values to :data:`RTOL` (NaN and infinities in place),
    except where *ignore* is set."""
    on_host = {k: v.copy_to_host() if axisops.cuda.is_cuda_array(v) else v
               for k, v in kwargs.items()}
    want, werr = outcome(fn, a, **on_host)
    got, gerr = outcome(fn, on_device(a), **kwargs)
    if werr is not None or gerr is not None:
        if type(werr) is not type(gerr) or str(werr) != str(gerr):
            problems.append(f"{label}: NumPy raised {werr!r}, device {gerr!r}")
        return
    got = host(got)
    want = np.asarray(want)
    if exact:
        msg = same_bits(got, want)
        if msg:
            problems.append(f"{label}: {msg}")
        return
    if got.dtype != want.dtype or got.shape != want.shape:
        problems.append(f"{label}: {got.dtype}{got.shape}, expected {want.dtype}{want.shape}")
        return
    keep = np.ones(want.shape, bool) if ignore is None else ~np.asarray(ignore)
    g, w = got[keep].astype(np.float64), want[keep].astype(np.float64)
    finite = np.isfinite(w)
    if not np.array_equal(np.isfinite(g), finite) or \
            not np.array_equal(g[~finite], w[~finite], equal_nan=True):
        problems.append(f"{label}: NaN/inf differ:\n{got}\n{want}")
        return
    rtol = RTOL[want.dtype]
    scale = max(1.0, float(np.abs(w[finite]).max())) if finite.any() else 1.0
    if not np.allclose(g[finite], w[finite], rtol=rtol, atol=rtol * scale):
        worst = np.abs(g[finite] - w[finite]).max()
        problems.append(f"{label}: differs by {worst:g} (scale {scale:g}):\n{got}\n{want}")


def report(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:20])


#: (axis, window, min_count) of the forward tests: window 1, a partial 3, a window
#: longer than the axis (12 > 9 and > 4).
SETTINGS = [(-1, 1, None), (-1, 3, None), (0, 3, 1), (-1, 12, 2), (0, 12, None)]


# -------------------------------------------------------------------- forwards


@pytest.mark.parametrize("dtype", dtype_params(DTYPES, covered=FORWARDS_ELSEWHERE))
def test_forwards_match_the_numpy_path(dtype, exhaustive):
    rng = np.random.default_rng(np.dtype(dtype).num)
    x = values(dtype, (4, 9), rng)
    x_big = values(dtype, (4, 9), rng, big=True)
    every = exhaustive  # by default each dtype half of the pairs, float64 and int32 the two halves
    problems: list[str] = []
    for s, (axis, window, min_count) in enumerate(SETTINGS):
        for k, op in enumerate(OPS):
            if not every and (s + k + (np.dtype(dtype) == np.float64)) % 2:
                continue
            kw = {"ddof": 1} if op in VARS and s % 2 else {}
            compare(getattr(axisops, op), x if op in SUMS else x_big, op in EXACT, problems,
                    f"{op} axis={axis} window={window} min_count={min_count} {kw}",
                    window=window, axis=axis, min_count=min_count, **kw)
    report(problems)


def test_middle_axis_and_strided_views():
    rng = np.random.default_rng(3)
    base = values(np.float64, (3, 8, 5), rng)
    views = {"middle": base, "transposed": base.transpose(2, 1, 0)[:, ::-1],
             "stepped": base[::2, ::-1, 1::2]}
    problems: list[str] = []
    for name, v in views.items():
        for op in OPS:
            compare(getattr(axisops, op), v, op in EXACT, problems, f"{op} {name}", window=4,
                    axis=1, min_count=2)
    report(problems)


def test_ties_zeros_and_infinities():
    """Ties go to the latest element, -0.0 and +0.0 included (the value is that
    element's bits); infinities are extremes and count apart in sums (+inf, -inf,
    NaN with both); a variance with an infinity is NaN; equal values give a
    variance of exactly 0."""
    x = np.array([[2.0, 2.0, -0.0, 0.0, -0.0, np.inf, 1.0, -np.inf, 3.0, np.nan, 3.0, 3.0,
                   3.0, 0.1, 0.1, 0.1, 0.1]])
    problems: list[str] = []
    for op in OPS:
        for window, min_count in ((2, 1), (3, None), (4, 2)):
            compare(getattr(axisops, op), x, op in EXACT, problems, f"{op} {window}",
                    window=window, min_count=min_count)
    got = host(axisops.moving_std(on_device(x), 3))
    assert got[0, 12] == 0.0 and got[0, 15] == 0.0 and got[0, 16] == 0.0
    report(problems)


def test_empty_and_zero_d():
    problems: list[str] = []
    for shape, axis in (((0, 4), -1), ((3, 0), 0), ((), -1), ((5,), 1)):
        x = np.zeros(shape, np.float32)
        for op in ("moving_sum", "moving_var", "moving_argmax"):
            compare(getattr(axisops, op), x, True, problems, f"{op} {shape}", window=2,
                    axis=axis)
        g = np.zeros(shape, np.float32)
        compare(axisops.grad.moving_max, g, True, problems, f"grad {shape}", x=on_device(x),
                window=2, axis=axis)
    report(problems)


# ------------------------------------------------------------------- gradients


@pytest.mark.parametrize("dtype", dtype_params(G_DTYPES))
def test_gradients_match_the_numpy_path(dtype, exhaustive):
    rng = np.random.default_rng(40 + np.dtype(dtype).num)
    x = values(np.float64, (4, 9), rng)
    x[1] = np.round(x[1])  # more ties for the extremes
    g = values(np.float64, x.shape, rng)
    g = np.where(np.isfinite(g), g, 1.5).astype(dtype)
    every = exhaustive  # by default each dtype half of the pairs, float64 and int32 the two halves
    problems: list[str] = []
    for s, (axis, window, min_count) in enumerate(SETTINGS):
        for k, op in enumerate(GRADS):
            if not every and (s + k) % 2:
                continue
            kw = {"ddof": 1} if op in VARS and s % 2 else {}
            exact = op in ("moving_max", "moving_min")
            # at an infinite x the device gives 0 (test_variance_gradient_at_an_
            # infinity); the CPU gave inf times its reversed sum's residue (+-inf
            # or NaN) until it chose 0 as well
            ignore = ~np.isfinite(x) & ~np.isnan(x) if op in VARS else None
            compare(getattr(axisops.grad, op), g, exact, problems,
                    f"grad.{op} axis={axis} window={window} min_count={min_count} {kw}",
                    ignore=ignore, x=on_device(x), window=window, axis=axis,
                    min_count=min_count, **kw)
    report(problems)


def test_gradients_of_other_inputs():
    """Integer g (float64 results), integer and bool x, a host x, NaN in g, strided
    g, the middle axis; the max gradient's ties added in output order."""
    rng = np.random.default_rng(5)
    problems: list[str] = []
    xi = rng.integers(0, 3, (3, 7)).astype(np.int32)
    gi = rng.integers(-4, 5, (3, 7)).astype(np.int64)
    for op in GRADS:
        compare(getattr(axisops.grad, op), gi, op in ("moving_max", "moving_min"), problems,
                f"grad.{op} int", x=on_device(xi), window=3, min_count=1)
    xb = rng.random((6, 2)) < 0.5
    gf = rng.standard_normal((6, 2)).astype(np.float32)
    gf[2, 1] = np.nan
    compare(axisops.grad.moving_mean, gf, False, problems, "grad.moving_mean bool host x",
            x=xb, window=4, axis=0, min_count=2)
    compare(axisops.grad.moving_max, gf, True, problems, "grad.moving_max bool NaN g",
            x=on_device(xb), window=4, axis=0, min_count=2)
    x3 = values(np.float64, (2, 6, 3), rng)
    g3 = rng.standard_normal((3, 6, 2)).transpose(2, 1, 0)
    for op in GRADS:
        compare(getattr(axisops.grad, op), g3, op in ("moving_max", "moving_min"), problems,
                f"grad.{op} middle", ignore=~np.isfinite(x3) & ~np.isnan(x3),
                x=on_device(x3), window=3, axis=1, min_count=1)
    # overlapping windows share a maximum: 1 + tiny terms whose order shows
    x = np.zeros((1, 9))
    x[0, 4] = 1.0
    g = np.full((1, 9), 2.0 ** -53)
    g[0, 4] = 1.0
    compare(axisops.grad.moving_max, g, True, problems, "order", x=on_device(x), window=5)
    report(problems)


def test_variance_gradient_at_an_infinity():
    """Every window holding an infinity has a NaN variance, which gives nothing back:
    the infinite element gets 0, a NaN one too, the others their live windows'."""
    x = np.array([1.0, 2.0, np.inf, 3.0, 5.0, np.nan, 4.0, 6.0])
    g = np.ones_like(x)
    for op in VARS:
        got = host(getattr(axisops.grad, op)(on_device(g), x, 2, min_count=1))
        assert got[2] == 0.0 and got[5] == 0.0, (op, got)
        assert np.all(np.isfinite(got)), (op, got)
        want = getattr(axisops.grad, op)(g, x, 2, min_count=1)
        keep = np.isfinite(x)
        np.testing.assert_allclose(got[keep], want[keep], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------- errors


_X = np.zeros((3, 4))
#: (function, array, keyword arguments): each must raise as on the NumPy path.
ERRORS = [
    (axisops.moving_sum, _X, {"window": 0}),
    (axisops.moving_mean, _X, {"window": 2.0}),
    (axisops.moving_max, _X, {"window": True}),
    (axisops.moving_min, _X, {"window": 3, "min_count": 4}),
    (axisops.moving_argmax, _X, {"window": 3, "min_count": 0}),
    (axisops.moving_var, _X, {"window": 3, "ddof": "1"}),
    (axisops.moving_std, _X.astype(np.complex64), {"window": 2}),
    (axisops.moving_argmin, _X, {"window": 2, "axis": None}),
    (axisops.moving_sum, _X, {"window": 2, "axis": (0, 1)}),
    (axisops.moving_sum, _X, {"window": 2, "axis": 2}),
    (axisops.moving_max, np.zeros(()), {"window": 1}),
    (axisops.grad.moving_sum, _X, {"x": _X, "window": 0}),
    (axisops.grad.moving_var, _X, {"x": _X, "window": 2, "ddof": None}),
    (axisops.grad.moving_mean, _X[:2], {"x": _X, "window": 2}),
    (axisops.grad.moving_max, _X.astype(np.complex128), {"x": _X, "window": 2}),
    (axisops.grad.moving_std, _X, {"x": _X.astype(np.complex64), "window": 2}),
    (axisops.grad.moving_min, _X, {"x": _X, "window": 2, "axis": None}),
    (axisops.grad.moving_sum, _X, {"x": _X, "window": 2, "axis": -3}),
]


def test_errors_are_the_numpy_paths():
    problems: list[str] = []
    for fn, a, kw in ERRORS:
        label = f"{fn.__module__}.{fn.__name__} {a.dtype} {a.shape} {kw}"
        compare(fn, a, True, problems, label, **kw)
        if "x" in kw:  # x on the device too
            compare(fn, a, True, problems, label + " device x",
                    **dict(kw, x=on_device(kw["x"])))
    report(problems)


def test_bad_calls_do_raise():
    # compare() also passes when both sides return: make sure these do raise
    with pytest.raises(ValueError, match="min_count must be"):
        axisops.moving_sum(on_device(_X), 2, min_count=3)
    with pytest.raises(TypeError, match="complex"):
        axisops.moving_max(on_device(_X.astype(np.complex64)), 2)
    with pytest.raises(ValueError, match="g has shape"):
        axisops.grad.moving_std(on_device(_X[:2]), _X, 2)

"""max_pool, avg_pool and their gradients on CUDA arrays against the NumPy path,
under Numba's CUDA simulator (see ``tests/test_cuda.py``).

Every result must be a device array with the NumPy path's dtype, shape and bits
(``check(..., exact=True)``): each output walks its window in the CPU's window
order, and the gradients gather, for each input element, the terms the CPU adds
into it, in its output order. The setups are 1-D, 2-D and 3-D with stride,
dilation, ONNX padding pairs and ceil_mode, batched and not, channels first and
last, on values with ties and NaN; the errors must be the NumPy path's. The
arrays are small (the simulator runs a Python thread per element).
"""
from __future__ import annotations

import numpy as np
import pytest
from cuda_support import (  # noqa: F401
    check,
    dtype_params,
    host,
    on_device,
    quick_thread_switches,
)

import axisops

#: The dtypes of the forward tests: one of each class runs by default (float16 as
#: float32 on the CPU), the rest under the exhaustive switch; bool and uint64 too
#: (29 and 31 s of a CI run: the same kernel source under the simulator; their
#: typing is compiled for a real GPU by test_cuda_compile, and the GPU check runs
#: them all).
DTYPES = [np.float32, np.float16, np.int32, np.bool_, np.uint64, np.float64, np.int8,
          np.uint16, np.int64]
#: classes whose forwards run under the exhaustive switch only (see DTYPES)
FORWARDS_ELSEWHERE = (np.bool_, np.uint64)
#: The gradients' dtypes (g is a float).
G_DTYPES = [np.float32, np.float16, np.float64]

#: (x shape (N, C, *spatial), kernel_size, max_pool's options, avg_pool's options).
SETUPS = [
    ((2, 3, 9), (3,), {"stride": 2, "dilation": 2, "padding": [(2, 1)], "ceil_mode": True},
     {"stride": 2, "padding": [(1, 1)], "ceil_mode": True}),
    ((2, 2, 7, 6), 3, {"stride": 2, "dilation": (1, 2), "padding": ((1, 0), (1, 1)),
                       "ceil_mode": True},
     {"stride": (2, 1), "padding": 1, "ceil_mode": True}),
    ((1, 2, 4, 5, 3), (2, 2, 2), {"stride": (1, 2, 1), "padding": ((1, 0), (0, 1), (1, 1))},
     {"stride": (2, 2, 1), "padding": ((1, 0), (0, 1), (1, 1)), "ceil_mode": True}),
]
#: (batched, channels_last).
VARIANTS = [(True, False), (False, True), (True, True), (False, False)]


def setups_and_variants(dtype, exhaustive: bool):
    """Every setup with every variant for float32 (and under the exhaustive switch);
    for the other dtypes every setup once, the variants in turn."""
    every = exhaustive or np.dtype(dtype) == np.float32
    for i, setup in enumerate(SETUPS):
        for j, variant in enumerate(VARIANTS):
            if every or j == i % len(VARIANTS):
                yield setup, variant


def values(dtype, shape, rng) -> np.ndarray:
    """Values with ties (small integers), and for floats fractions (the order of a
    mean's additions shows in the bits), NaN, -0.0 and infinities."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.4
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -3
        out = rng.integers(low, 4, shape).astype(dtype)
        out.reshape(-1)[0] = np.iinfo(dtype).max
        return out
    out = rng.integers(-3, 4, shape).astype(dtype)
    frac = rng.random(shape) < 0.5
    out[frac] = (rng.standard_normal(frac.sum()) * 1e3).astype(dtype)
    flat = out.reshape(-1)
    for special in (np.nan, -0.0, np.inf, -np.inf, np.nan):
        flat[rng.integers(flat.size)] = special
    return out


def layout(x: np.ndarray, batched: bool, channels_last: bool) -> np.ndarray:
    if channels_last:
        x = np.moveaxis(x, 1, -1)
    return x if batched else x[0]


def report(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:20])


# -------------------------------------------------------------------- forward


@pytest.mark.parametrize("dtype", dtype_params(DTYPES, covered=FORWARDS_ELSEWHERE))
def test_pooling_matches_the_numpy_path(dtype, exhaustive):
    rng = np.random.default_rng(np.dtype(dtype).num)
    problems: list[str] = []
    for (shape, kernel, max_kw, avg_kw), (batched, last) in setups_and_variants(dtype,
                                                                                 exhaustive):
        x = layout(values(dtype, shape, rng), batched, last)
        label = f"{len(shape) - 2}-D batched={batched} channels_last={last}"
        check(axisops.max_pool, x, True, problems, f"max_pool {label}", kernel_size=kernel,
              channels_last=last, return_indices=True, **max_kw)
        for include in (True, False):
            check(axisops.avg_pool, x, True, problems, f"avg_pool {label} {include}",
                  kernel_size=kernel, channels_last=last, count_include_pad=include, **avg_kw)
    report(problems)


def test_max_pool_without_indices_and_strided_views():
    rng = np.random.default_rng(2)
    problems: list[str] = []
    x = values(np.float32, (2, 3, 8, 10), rng)
    views = {"step": x[:, :, ::2, ::-2], "transposed": x.transpose(0, 1, 3, 2),
             "channels_swapped": x.transpose(1, 0, 2, 3)}
    for name, v in views.items():
        check(axisops.max_pool, v, True, problems, f"max_pool {name}", kernel_size=2,
              stride=1, padding=((0, 1), (1, 0)))
        check(axisops.avg_pool, v, True, problems, f"avg_pool {name}", kernel_size=(2, 3),
              stride=(1, 2), padding=1, count_include_pad=False)
    report(problems)


def test_nan_and_ties_are_the_cpus():
    """The first NaN of a window wins and is its index; ties go to the first in
    window order; a window's sum is added in window order (float32 terms whose
    order shows in the bits); float16 means are the CPU's two roundings."""
    problems: list[str] = []
    x = np.array([[[1.0, np.nan, 3.0, np.nan, np.nan, 0.0, 2.0, 2.0, -0.0, 0.0]]])
    for last in (False, True):
        xi = np.moveaxis(x, 1, -1) if last else x
        check(axisops.max_pool, xi, True, problems, f"nan {last}", kernel_size=(3,), stride=1,
              padding=1, channels_last=last, return_indices=True)
    small = np.array([[[1.0] + [2.0 ** -25] * 3 + [2.0 ** -25] * 3 + [1.0]]], np.float32)
    for last in (False, True):
        xi = np.ascontiguousarray(np.moveaxis(small, 1, -1)) if last else small
        check(axisops.avg_pool, xi, True, problems, f"order float32 {last}", kernel_size=(4,),
              stride=1, channels_last=last)
        check(axisops.avg_pool, xi.astype(np.float16), True, problems, f"order float16 {last}",
              kernel_size=(3,), stride=1, padding=1, channels_last=last)
    report(problems)


def test_empty_inputs():
    problems: list[str] = []
    for shape, kw in [((0, 3, 4, 5), {}), ((2, 0, 4, 4), {}),
                      ((2, 4, 4, 0), {"channels_last": True})]:
        x = np.zeros(shape, np.float32)
        check(axisops.max_pool, x, True, problems, f"max {shape}", kernel_size=2,
              return_indices=True, **kw)
        check(axisops.avg_pool, x.astype(np.int32), True, problems, f"avg {shape}",
              kernel_size=2, **kw)
        out = axisops.max_pool(x, 2, **kw)
        check(axisops.grad.avg_pool, out, True, problems, f"grad.avg {shape}", x_shape=shape,
              kernel_size=2, **kw)
        check(axisops.grad.max_pool, out, True, problems, f"grad.max {shape}",
              indices=on_device(np.zeros(out.shape, np.int64)), x_shape=shape, kernel_size=2,
              **kw)
    report(problems)


# ------------------------------------------------------------------ gradients


@pytest.mark.parametrize("dtype", dtype_params(G_DTYPES))
def test_gradients_match_the_numpy_path(dtype, exhaustive):
    rng = np.random.default_rng(30 + np.dtype(dtype).num)
    problems: list[str] = []
    for (shape, kernel, max_kw, avg_kw), (batched, last) in setups_and_variants(dtype,
                                                                                 exhaustive):
        x = layout(values(np.float32, shape, rng), batched, last)
        label = f"{len(shape) - 2}-D batched={batched} channels_last={last}"
        v, i = axisops.max_pool(x, kernel, channels_last=last, return_indices=True, **max_kw)
        g = values(dtype, v.shape, rng)
        g = g if batched else np.ascontiguousarray(g[..., ::-1])[..., ::-1]  # strided g
        check(axisops.grad.max_pool, g, True, problems, f"grad.max_pool {label}",
              indices=on_device(i), x_shape=x.shape, kernel_size=kernel, channels_last=last,
              **max_kw)
        out_shape = axisops.avg_pool(x, kernel, channels_last=last, **avg_kw).shape
        ga = values(dtype, out_shape, rng)
        for include in (True, False):
            check(axisops.grad.avg_pool, ga, True, problems,
                  f"grad.avg_pool {label} {include}", x_shape=x.shape, kernel_size=kernel,
                  channels_last=last, count_include_pad=include, **avg_kw)
    report(problems)


def test_max_pool_gradient_adds_in_output_order():
    """Overlapping windows share a maximum: its terms add in output order (small
    terms first or last by position); MaxUnpool's indices from elsewhere (not in
    their windows, repeated) take the scatter-add, in the same order; host and
    narrow integer indices too."""
    problems: list[str] = []
    x = np.zeros((1, 1, 9), np.float32)
    x[0, 0, 4] = 1
    v, i = axisops.max_pool(x, (5,), stride=1, padding=2, return_indices=True)
    g = np.full(v.shape, 2.0 ** -24, np.float32)
    for first in (0, v.shape[-1] - 1):
        g2 = g.copy()
        g2[..., first] = 1
        check(axisops.grad.max_pool, g2, True, problems, f"order {first}",
              indices=on_device(i), x_shape=x.shape, kernel_size=(5,), stride=1, padding=2)
    rng = np.random.default_rng(7)
    for last in (False, True):
        shape = (2, 5, 6, 3) if last else (2, 3, 5, 6)
        out_shape = (2, 2, 3, 3) if last else (2, 3, 2, 3)
        foreign = rng.integers(0, 30, out_shape)
        foreign.reshape(-1)[:4] = 7
        gf = values(np.float16, out_shape, rng)
        check(axisops.grad.max_pool, gf, True, problems, f"foreign {last}",
              indices=on_device(foreign), x_shape=shape, kernel_size=2, channels_last=last)
    got = axisops.grad.max_pool(on_device(g), i.astype(np.int32), x.shape, (5,), stride=1,
                                padding=2)
    want = axisops.grad.max_pool(g, i, x.shape, (5,), stride=1, padding=2)
    assert np.array_equal(host(got), want)
    report(problems)


# --------------------------------------------------------------------- errors


def _x(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


_I = np.zeros((1, 1, 2, 2), np.int64)

#: (function, array, keyword arguments): each must raise as on the NumPy path.
ERRORS = [
    (axisops.max_pool, _x(5, 6), {"kernel_size": 2, "padding": 0}),          # dimensions
    (axisops.max_pool, _x(1, 4, 4, dtype=np.complex64), {"kernel_size": 2}),
    (axisops.max_pool, _x(1, 4, 4), {"kernel_size": (2, 2.0)}),
    (axisops.max_pool, _x(1, 4, 4), {"kernel_size": 5}),                      # too large
    (axisops.max_pool, _x(1, 4, 4), {"kernel_size": 2, "stride": 0}),
    (axisops.avg_pool, _x(1, 1, 4, 4), {"kernel_size": 2, "padding": ((0, 3), (0, 0))}),
    (axisops.avg_pool, _x(1, 4, 4, dtype=np.complex128), {"kernel_size": 2}),
    (axisops.grad.max_pool, _x(1, 1, 2, 2, dtype=np.int32),
     {"indices": _I, "x_shape": (1, 1, 4, 4), "kernel_size": 2}),             # g's dtype
    (axisops.grad.max_pool, _x(1, 1, 2, 3), {"indices": _I, "x_shape": (1, 1, 4, 4),
                                              "kernel_size": 2}),             # g's shape
    (axisops.grad.max_pool, _x(1, 1, 2, 2), {"indices": _I.astype(np.float32),
                                              "x_shape": (1, 1, 4, 4), "kernel_size": 2}),
    (axisops.grad.max_pool, _x(1, 1, 2, 2), {"indices": _I[..., :1], "x_shape": (1, 1, 4, 4),
                                              "kernel_size": 2}),
    (axisops.grad.max_pool, _x(1, 1, 2, 2), {"indices": _I - 1, "x_shape": (1, 1, 4, 4),
                                              "kernel_size": 2}),             # IndexError
    (axisops.grad.max_pool, _x(1, 1, 2, 2), {"indices": _I + 16, "x_shape": (1, 1, 4, 4),
                                              "kernel_size": 2}),
    (axisops.grad.max_pool, _x(1, 1, 2, 2), {"indices": _I.astype(np.uint64) + np.uint64(2**63 + 5),
                                              "x_shape": (1, 1, 4, 4), "kernel_size": 2}),
    (axisops.grad.avg_pool, _x(1, 1, 2, 2), {"x_shape": (1, 1, 4, 4), "kernel_size": 3}),
    (axisops.grad.avg_pool, _x(1, 1, 2, 2), {"x_shape": (1, 4, 4), "kernel_size": (2,)}),
    (axisops.grad.avg_pool, _x(1, 1, 2, 2, dtype=np.int8), {"x_shape": (1, 1, 4, 4),
                                                             "kernel_size": 2}),
]


def test_errors_are_the_numpy_paths():
    problems: list[str] = []
    for fn, a, kw in ERRORS:
        name = f"{fn.__module__}.{fn.__name__} {a.dtype} {a.shape} {kw}"
        check(fn, a, True, problems, name, **kw)
        if "indices" in kw:  # device indices too
            check(fn, a, True, problems, name + " device indices",
                  **dict(kw, indices=on_device(kw["indices"])))
    report(problems)


def test_bad_calls_do_raise():
    # check() also passes when both sides return: make sure these do raise
    with pytest.raises(ValueError, match="larger than the padded input"):
        axisops.max_pool(on_device(_x(1, 1, 2, 2)), 3)
    with pytest.raises(TypeError, match="complex"):
        axisops.avg_pool(on_device(_x(1, 4, 4, dtype=np.complex64)), 2)
    with pytest.raises(IndexError, match="index 16 is out of range"):
        axisops.grad.max_pool(on_device(_x(1, 1, 2, 2)), on_device(_I + 16), (1, 1, 4, 4), 2)
    with pytest.raises(ValueError, match="g has shape"):
        axisops.grad.avg_pool(on_device(_x(1, 1, 2, 3)), (1, 1, 4, 4), 2)

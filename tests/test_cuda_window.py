"""unfold, fold and their gradients on CUDA arrays against the NumPy path, under
Numba's CUDA simulator (see ``tests/test_cuda.py``).

Every result must be a device array with the NumPy path's dtype, shape and bits:
unfold moves elements, and fold adds in the CPU path's order (increasing kernel
index, from 0; float16 in float32, integers wrapping, bool or-ed), so floats are
exact too (``check(..., exact=True)``). The setups are 1-D, 2-D and 3-D with
dilation, asymmetric (ONNX) padding and a stride larger than the kernel, each
batched and unbatched, channels first and last, read through strided, transposed
and reversed device views; the errors must be the NumPy path's. The arrays are
small (the simulator runs a Python thread per element).
"""
from __future__ import annotations

import numpy as np
import pytest
from cases import same_bits
from cuda_support import (  # noqa: F401
    check,
    dtype_params,
    host,
    on_device,
    outcome,
    quick_thread_switches,
)

import axisops

#: The dtypes of the forward tests: bool, integers (uint64 wrapping as int64 bits),
#: the floats (float16 adding in float32) and complex (its two parts).
DTYPES = [np.bool_, np.int8, np.uint64, np.int32, np.float16, np.float32, np.float64,
          np.complex64]
#: The other widths and signs, on fewer setups (complex128 moves as two int64).
OTHER_DTYPES = [np.uint8, np.int16, np.uint16, np.uint32, np.int64, np.complex128]

#: (x shape (N, C, *spatial), kernel_size, options): 1-D to 3-D.
SETUPS = [
    ((2, 3, 7), (3,), {"dilation": 2, "padding": [(2, 1)]}),
    ((1, 2, 5, 4), (2, 3), {"dilation": (1, 2), "padding": ((1, 0), (2, 1)),
                            "stride": (2, 1)}),
    ((2, 1, 6, 5), 2, {"stride": 3, "padding": 1}),          # stride > kernel: gaps
    ((1, 2, 3, 4, 3), (2, 2, 1), {"dilation": (1, 2, 1), "stride": (1, 1, 2),
                                  "padding": ((1, 0), (0, 1), (1, 1))}),
]
#: (batched, channels_last): every one for each setup.
VARIANTS = [(True, False), (False, True), (True, True), (False, False)]


def setups_and_variants(dtype, exhaustive: bool):
    """(setup index, setup, variant): by default every setup with every variant
    for float32, and for the other dtypes every setup once, with the variants in
    turn (each dtype still runs every setup and every variant); every pair for
    every dtype under the exhaustive switch. A setup is the geometry, batched the
    host's planning and channels_last a kernel constant, the same for each dtype;
    what the dtype changes (the width its bits move as, how fold adds: float16 in
    float32, integers wrapping, bool or-ed, complex parts) is the same whatever
    the setup and variant."""
    every = exhaustive or np.dtype(dtype) == np.float32
    for i, setup in enumerate(SETUPS):
        for j, variant in enumerate(VARIANTS):
            if every or j == i % len(VARIANTS):
                yield i, setup, variant


def values(dtype, shape, rng) -> np.ndarray:
    """C-contiguous values of *dtype*: the ends of integer ranges (fold wraps), floats
    of mixed sizes with -0.0, NaN and infinities (fold's order shows in the bits)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.3
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, info.max - 1, 0, 1, 7], dtype)
        return rng.choice(pool, shape)
    if dtype.kind == "c":
        part = np.dtype(dtype.char.lower())
        out = np.empty(shape, dtype)
        out.real, out.imag = values(part, shape, rng), values(part, shape, rng)
        return out
    out = (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 1e3], shape)).astype(dtype)
    flat = out.reshape(-1)
    for special in (-0.0, np.nan, np.inf, -0.0):
        flat[rng.integers(flat.size)] = special
    return out


def layout(x: np.ndarray, batched: bool, channels_last: bool) -> np.ndarray:
    """*x* (N, C, *spatial) as the forward's input: channels moved last (a transposed
    view), unbatched (the first sample, a view)."""
    if channels_last:
        x = np.moveaxis(x, 1, -1)
    return x if batched else x[0]


def strided(a: np.ndarray, rng) -> np.ndarray:
    """*a*'s values in a view that is not C-contiguous: every other element of a
    larger array, or reversed along the last axis."""
    if rng.random() < 0.5:
        wide = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), a.dtype)
        wide[..., ::2] = a
        return wide[..., ::2]
    return np.ascontiguousarray(a[..., ::-1])[..., ::-1]


def spatial_of(x: np.ndarray, d: int, channels_last: bool) -> tuple[int, ...]:
    return x.shape[-d - 1:-1] if channels_last else x.shape[-d:]


def dims(kernel) -> int:
    return 2 if isinstance(kernel, int) else len(kernel)


def exact(fn, a, problems: list[str], label: str, **kwargs) -> None:
    """``check(..., exact=True)``; complex results are compared as their real parts'
    bits (a NaN in one part would make two equal complex numbers unequal)."""
    if np.dtype(a.dtype).kind != "c":
        check(fn, a, True, problems, label, **kwargs)
        return
    want, werr = outcome(fn, a, **kwargs)
    got, gerr = outcome(fn, on_device(a), **kwargs)
    if werr is not None or gerr is not None:
        if type(werr) is not type(gerr) or str(werr) != str(gerr):
            problems.append(f"{label}: NumPy raised {werr!r}, device {gerr!r}")
        return
    g, w = host(got), np.asarray(want)
    part = np.dtype(w.dtype.char.lower())
    msg = (f"dtype {g.dtype}, expected {w.dtype}" if g.dtype != w.dtype
           else f"shape {g.shape}, expected {w.shape}" if g.shape != w.shape
           else same_bits(g.view(part), w.view(part)))
    if msg:
        problems.append(f"{label}: {msg}")


def report(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:20])


# -------------------------------------------------------------------- forward

@pytest.mark.parametrize("dtype", dtype_params(DTYPES))
def test_unfold_and_fold_match_the_numpy_path(dtype, exhaustive):
    rng = np.random.default_rng(np.dtype(dtype).num)
    problems: list[str] = []
    for _, (shape, kernel, kw), (batched, last) in setups_and_variants(dtype, exhaustive):
        x = layout(values(dtype, shape, rng), batched, last)
        label = f"{len(shape) - 2}-D batched={batched} channels_last={last}"
        opts = dict(kw, channels_last=last)
        exact(axisops.unfold, x, problems, f"unfold {label}", kernel_size=kernel,
              **opts)
        # fresh columns, read through a strided view
        want = axisops.unfold(x, kernel, **opts)
        cols = strided(values(dtype, want.shape, rng), rng)
        exact(axisops.fold, cols, problems, f"fold {label}",
              output_size=spatial_of(x, dims(kernel), last), kernel_size=kernel, **opts)
    report(problems)


@pytest.mark.parametrize("dtype", dtype_params(OTHER_DTYPES, covered=DTYPES))
def test_other_dtypes_match_the_numpy_path(dtype):
    rng = np.random.default_rng(20 + np.dtype(dtype).num)
    problems: list[str] = []
    for i, (shape, kernel, kw) in enumerate(SETUPS[:2]):
        batched, last = VARIANTS[i + 1]
        x = strided(layout(values(dtype, shape, rng), batched, last), rng)
        opts = dict(kw, channels_last=last)
        exact(axisops.unfold, x, problems, f"unfold {i}", kernel_size=kernel, **opts)
        cols = values(dtype, axisops.unfold(x, kernel, **opts).shape, rng)
        exact(axisops.fold, cols, problems, f"fold {i}",
              output_size=spatial_of(x, dims(kernel), last), kernel_size=kernel, **opts)
        exact(axisops.grad.fold, x, problems, f"grad.fold {i}", kernel_size=kernel, **opts)
        exact(axisops.grad.unfold, cols, problems, f"grad.unfold {i}", x_shape=x.shape,
              kernel_size=kernel, **opts)
    report(problems)


def test_strided_reversed_and_transposed_inputs():
    rng = np.random.default_rng(3)
    problems: list[str] = []
    x = values(np.float32, (2, 3, 6, 8), rng)
    views = {"step": x[:, :, ::2, ::-2], "transposed": x.transpose(0, 1, 3, 2),
             "channels_swapped": x.transpose(1, 0, 2, 3)}
    for name, v in views.items():
        check(axisops.unfold, v, True, problems, f"unfold {name}", kernel_size=(2, 2),
              padding=((0, 1), (1, 0)), stride=(1, 2))
    cols = values(np.int8, (2, 8, 12), rng)
    for name, v in {"transposed": np.ascontiguousarray(cols.transpose(0, 2, 1)).transpose(0, 2, 1),
                    "reversed": np.ascontiguousarray(cols[:, ::-1])[:, ::-1],
                    "channels_last": np.ascontiguousarray(cols.transpose(0, 2, 1))}.items():
        last = name == "channels_last"
        check(axisops.fold, v, True, problems, f"fold {name}", output_size=(4, 5),
              kernel_size=(2, 2), dilation=(2, 1), channels_last=last)
    report(problems)


def test_fold_adds_in_the_cpu_order_every_run():
    """float16 in float32 rounded once, the small float32 terms first or last by
    kernel index, integers wrapping, bool or-ed: the NumPy path's bits, twice."""
    problems: list[str] = []
    cols = np.ones((16, 31), np.float16)
    cols[0] = 2048                     # k = 0 first: 2048 + 15 ones, one rounding
    exact(axisops.fold, cols, problems, "float16", output_size=16, kernel_size=(16,),
          padding=15)
    c32 = np.full((16, 31), 2.0 ** -24, np.float32)
    c32[0] = 1                         # the small terms are each lost after the 1 ...
    check(axisops.fold, c32, True, problems, "float32 1 first", output_size=16,
          kernel_size=(16,), padding=15)
    c32[0], c32[15] = 2.0 ** -24, 1    # ... or add up before it
    check(axisops.fold, c32, True, problems, "float32 1 last", output_size=16,
          kernel_size=(16,), padding=15)
    d = on_device(c32)
    first = host(axisops.fold(d, 16, (16,), padding=15))
    assert first[0, 0] == np.float32(15 * 2.0 ** -24) + np.float32(1)
    assert all(np.array_equal(first, host(axisops.fold(d, 16, (16,), padding=15)))
               for _ in range(2))
    check(axisops.fold, np.full((4, 9), 100, np.uint8), True, problems, "uint8 wraps",
          output_size=4, kernel_size=2)
    check(axisops.fold, np.full((2, 3), 2**31 - 1, np.int32), True, problems, "int32 wraps",
          output_size=2, kernel_size=(2,), padding=1)
    check(axisops.fold, np.full((2, 3), 2**64 - 1, np.uint64), True, problems,
          "uint64 wraps", output_size=2, kernel_size=(2,), padding=1)
    bits = np.zeros((2, 3), bool)
    bits[1, 0] = True
    check(axisops.fold, bits, True, problems, "bool or", output_size=2, kernel_size=(2,),
          padding=1)
    report(problems)


def test_empty_and_all_padding_results():
    problems: list[str] = []
    for shape, kernel, kw in [((0, 3, 4, 5), 2, {}), ((2, 0, 4), (2,), {}),
                              ((2, 3, 0), (1,), {"channels_last": True}),
                              ((2, 1, 0), (1,), {"padding": 1}),     # zeros from nothing
                              ((1, 2, 0, 3), (2, 2), {"padding": 1})]:
        for dtype in (np.float32, np.complex64, np.int64):
            x = np.zeros(shape, dtype)
            exact(axisops.unfold, x, problems, f"unfold {shape} {kw}", kernel_size=kernel,
                  **kw)
            cols = axisops.unfold(x, kernel, **kw)
            size = spatial_of(x, dims(kernel), kw.get("channels_last", False))
            exact(axisops.fold, cols, problems, f"fold {shape} {kw}", output_size=size,
                  kernel_size=kernel, **kw)
    report(problems)


# --------------------------------------------------------------------- errors

def _x(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


#: (function, array, keyword arguments): each must raise as on the NumPy path.
ERRORS = [
    (axisops.unfold, _x(5, 6), {"kernel_size": 2}),                      # dimensions
    (axisops.unfold, _x(1, 4, 4), {"kernel_size": 0}),
    (axisops.unfold, _x(1, 4, 4), {"kernel_size": (2, 2.0)}),             # TypeError
    (axisops.unfold, _x(1, 4, 4), {"kernel_size": "22"}),
    (axisops.unfold, _x(1, 1, 4, 4, 4, 4), {"kernel_size": (2, 2, 2, 2)}),
    (axisops.unfold, _x(1, 4, 4), {"kernel_size": 2, "dilation": (1, 2, 1)}),
    (axisops.unfold, _x(1, 4, 4), {"kernel_size": 2, "padding": (1, (0, 1))}),
    (axisops.unfold, _x(1, 4, 4), {"kernel_size": 2, "stride": 0}),
    (axisops.unfold, _x(1, 1, 5, 8), {"kernel_size": (4, 3), "dilation": (3, 1),
                                      "padding": ((1, 1), (0, 0))}),  # kernel > input
    (axisops.unfold, _x(1, 3, 3, dtype=np.complex128), {"kernel_size": 4}),
    (axisops.fold, _x(1, 12, 10), {"output_size": (4, 5), "kernel_size": (2, 3)}),
    (axisops.fold, _x(1, 13, 9), {"output_size": (4, 5), "kernel_size": (2, 3)}),
    (axisops.fold, _x(1, 10, 12), {"output_size": (4, 5), "kernel_size": (2, 3),
                                   "channels_last": True}),
    (axisops.fold, _x(108), {"output_size": (4, 5), "kernel_size": (2, 3)}),
    (axisops.fold, _x(1, 1, 12, 9), {"output_size": (4, 5), "kernel_size": (2, 3)}),
    (axisops.fold, _x(1, 12, 9), {"output_size": (4, -5), "kernel_size": (2, 3)}),
    (axisops.fold, _x(1, 12, 9), {"output_size": 4.5, "kernel_size": (2, 3)}),
    (axisops.fold, _x(1, 12, 9), {"output_size": (4, 5), "kernel_size": (2, 3.0)}),
    (axisops.fold, _x(1, 4, 1), {"output_size": (2, 2), "kernel_size": 3}),  # kernel > output
    (axisops.fold, _x(1, 12, 9, dtype=np.complex64), {"output_size": (4, 5),
                                                      "kernel_size": (2, 2)}),
    (axisops.grad.unfold, _x(1, 4, 8), {"x_shape": (1, 1, 4, 4), "kernel_size": 2}),
    (axisops.grad.unfold, _x(1, 4, 9), {"x_shape": (1, 1, 4, 4), "kernel_size": 2}),  # fine
    (axisops.grad.unfold, _x(1, 4, 9), {"x_shape": (1, 4, 4), "kernel_size": (2,)}),
    (axisops.grad.unfold, _x(1, 4, 9, dtype=np.complex64),
     {"x_shape": (1, 1, 3, 3), "kernel_size": 2}),
    (axisops.grad.unfold, _x(1, 4, 9), {"x_shape": (1, 1, 4, 4), "kernel_size": 5}),
    (axisops.grad.fold, _x(1, 4, 4), {"kernel_size": 5}),
    (axisops.grad.fold, _x(4, 4), {"kernel_size": (2, 2, 2)}),
    (axisops.grad.fold, _x(1, 4, 4, dtype=np.int8), {"kernel_size": (2, 0)}),
]


def test_errors_are_the_numpy_paths():
    problems: list[str] = []
    for fn, a, kw in ERRORS:
        exact(fn, a, problems, f"{fn.__name__} {a.dtype} {a.shape} {kw}", **kw)
    report(problems)


def test_bad_calls_do_raise():
    # check() also passes when both sides return: make sure these do raise
    with pytest.raises(ValueError, match="expected cols of shape"):
        axisops.fold(on_device(_x(1, 13, 9)), (4, 5), (2, 3))
    with pytest.raises(TypeError, match="kernel_size"):
        axisops.unfold(on_device(_x(1, 4, 4)), (2, 2.0))
    with pytest.raises(ValueError, match="larger than the padded input"):
        axisops.unfold(on_device(_x(1, 1, 2, 2)), 3)
    with pytest.raises(ValueError, match="g has shape"):
        axisops.grad.unfold(on_device(_x(1, 4, 8)), (1, 1, 4, 4), 2)


# ------------------------------------------------------------------ gradients

@pytest.mark.parametrize("dtype", dtype_params(DTYPES))
def test_grads_match_the_numpy_path(dtype, exhaustive):
    rng = np.random.default_rng(10 + np.dtype(dtype).num)
    problems: list[str] = []
    for i, (shape, kernel, kw), (batched, last) in setups_and_variants(dtype, exhaustive):
        x_shape = layout(np.zeros(shape), batched, last).shape
        opts = dict(kw, channels_last=last)
        out_shape = axisops.unfold(np.zeros(x_shape), kernel, **opts).shape
        label = f"{len(shape) - 2}-D batched={batched} channels_last={last}"
        g = strided(values(dtype, out_shape, rng), rng)
        exact(axisops.grad.unfold, g, problems, f"grad.unfold {label}", x_shape=x_shape,
              kernel_size=kernel, **opts)
        gx = values(dtype, x_shape, rng)
        exact(axisops.grad.fold, gx if i % 2 else strided(gx, rng), problems,
              f"grad.fold {label}", kernel_size=kernel, **opts)
    report(problems)


def test_grads_positional_and_empty():
    problems: list[str] = []
    g = values(np.float64, (1, 8, 6), np.random.default_rng(1))
    got = axisops.grad.unfold(on_device(g), (1, 2, 3, 4), 2, 1, 0, 1, False)
    np.testing.assert_array_equal(host(got), axisops.grad.unfold(g, (1, 2, 3, 4), 2, 1, 0, 1))
    x = np.zeros((0, 2, 3, 4), np.int32)
    check(axisops.grad.fold, x, True, problems, "grad.fold empty", kernel_size=2)
    check(axisops.grad.unfold, np.zeros((0, 8, 6), np.int32), True, problems,
          "grad.unfold empty", x_shape=(0, 2, 3, 4), kernel_size=2)
    report(problems)

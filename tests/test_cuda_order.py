"""The order statistics and their gradients on CUDA arrays against the NumPy path,
under Numba's CUDA simulator (see ``tests/test_cuda.py``).

Every result must be a device array with the NumPy path's dtype, shape and bits
(``same_bits``: -0.0 is not 0.0), and every error the NumPy path's. Under the
simulator ``axisops.cuda.order_kernels.SHARED_MAX`` is 32, so lanes of 9 run the
shared-memory sort and lanes of 70 the long-lane kernels (tiles and merge
passes, radix select). NaN, ties, -0.0/+0.0, infinities; the axis last, first
and None; strided views. The simulator runs a Python thread per CUDA thread, so
the arrays are small and the default run takes one dtype of each class through
the operators along the last axis (float32 along every axis); the rest runs
under the exhaustive switch.
"""
from __future__ import annotations

import numpy as np
import pytest
from cases import EXHAUSTIVE, same_bits
from cuda_support import dtype_params, host, on_device, outcome, quick_thread_switches  # noqa: F401

import axisops
import axisops.cuda
from axisops.cuda import order_kernels as OK

DTYPES = [np.float32, np.int32, np.bool_, np.float16, np.float64, np.uint8]


def values(dtype, shape, rng) -> np.ndarray:
    """Small integers (ties) and, for floats, NaN, -0.0, +0.0 and infinities."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    x = rng.integers(-3, 4, shape).astype(np.float64)
    if dtype.kind == "u":
        x = x + 3
    x = x.astype(dtype)
    if dtype.kind == "f":
        flat = x.reshape(-1)
        for i, special in enumerate((np.nan, -0.0, np.inf, -np.inf, np.nan, 0.0, -0.0)):
            flat[(5 * i + 2) % flat.size] = special
    return x


def compare(fn, a, problems: list, label: str, *args, error: bool = False, **kwargs):
    """*fn* on the host against *fn* on the device: the same error (expected with
    *error*), or the same dtype, shape and bits (each of a tuple's results)."""
    want, werr = outcome(fn, a, *args, **kwargs)
    got, gerr = outcome(fn, on_device(a), *args, **kwargs)
    if werr is not None or gerr is not None:
        if type(werr) is not type(gerr) or str(werr) != str(gerr):
            problems.append(f"{label}: NumPy raised {werr!r}, device {gerr!r}")
        elif not error:
            problems.append(f"{label}: raised {werr!r} on both")
        return
    if error:
        problems.append(f"{label}: expected an error")
        return
    pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        msg = same_bits(host(g), np.asarray(w))
        if msg:
            problems.append(f"{label}: {msg}")


def report(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:20])


def forwards(x, axis, problems, label):
    """Every forward of the family on *x* along *axis*."""
    n = x.size if axis is None else x.shape[axis]
    floats = x.dtype != np.bool_
    calls = [
        ("sort", axisops.sort, (), {}),
        ("sort descending", axisops.sort, (), {"descending": True}),
        ("argsort descending", axisops.argsort, (), {"descending": True}),
        ("argsort int32", axisops.argsort, (), {"index_dtype": np.int32}),
        ("top_k", axisops.top_k, (3,), {}),
        ("top_k smallest unsorted", axisops.top_k, (4,), {"mode": "smallest", "sorted": False}),
        ("top_k all unsorted", axisops.top_k, (n,), {"sorted": False}),
        ("kthvalue", axisops.kthvalue, (2,), {"keepdims": True}),
        ("partition", axisops.partition, (n // 2,), {}),
        ("argpartition several", axisops.argpartition, ([1, -2],), {}),
        ("rank", axisops.rank, (), {}),
        ("rank dense", axisops.rank, (), {"method": "dense"}),
        ("median", axisops.median, (), {}),
        ("nanmedian", axisops.nanmedian, (), {}),
    ]
    if floats:
        calls += [("quantile", axisops.quantile, (np.array([0.1, 0.5, 0.9]),), {}),
                  ("nanquantile hazen", axisops.nanquantile, (0.3,), {"method": "hazen"}),
                  ("quantile nearest", axisops.quantile, (0.7,), {"method": "nearest"})]
    if axis is not None:
        calls += [("moving_median", axisops.moving_median, (3,), {"min_count": 1}),
                  ("moving_quantile", axisops.moving_quantile, (4, 0.3), {"min_count": 2}),
                  ("moving_rank", axisops.moving_rank, (3,), {"min_count": 1})]
    for name, fn, args, kw in calls:
        compare(fn, x, problems, f"{label} {name}", *args, axis=axis, **kw)


# -------------------------------------------------------------------- forwards


# bool and float16 under the exhaustive switch (41 and 64 s of a loaded CI run:
# the same kernel source under the simulator; test_cuda_compile compiles their
# typing for a real GPU, and the GPU check runs them)
@pytest.mark.parametrize("dtype", dtype_params(DTYPES, covered=(np.bool_, np.float16)))
def test_forwards_match_the_numpy_path(dtype, exhaustive):
    rng = np.random.default_rng(np.dtype(dtype).num)
    x = values(dtype, (3, 9), rng)
    problems: list[str] = []
    forwards(x, -1, problems, "axis -1")
    if exhaustive or np.dtype(dtype) == np.float32:
        forwards(values(dtype, (9, 2), rng), 0, problems, "axis 0")
        forwards(values(dtype, (2, 5), rng), None, problems, "axis None")
    report(problems)


def test_long_lanes():
    """Lanes longer than the shared-memory sort: tiles and merge passes, radix
    select, the partition of a selection."""
    rng = np.random.default_rng(7)
    assert OK.SHARED_MAX < 70 or not axisops.cuda._device.simulated()
    x = values(np.float32, (2, 70), rng)
    problems: list[str] = []
    compare(axisops.sort, x, problems, "sort")
    compare(axisops.argsort, x, problems, "argsort descending", descending=True)
    compare(axisops.top_k, x, problems, "top_k 5", 5)
    compare(axisops.top_k, x, problems, "top_k 40", 40)
    compare(axisops.top_k, x, problems, "top_k unsorted", 6, sorted=False)
    compare(axisops.kthvalue, x, problems, "kthvalue", 33)
    compare(axisops.partition, x, problems, "partition", 20)
    compare(axisops.rank, x, problems, "rank")
    compare(axisops.median, x, problems, "median", axis=-1)
    compare(axisops.nanquantile, x, problems, "nanquantile", [0.25, 0.75], axis=-1)
    if EXHAUSTIVE:
        for dtype in (np.float64, np.int32, np.uint8, np.bool_, np.float16):
            y = values(dtype, (70, 2), rng)
            for op in (axisops.sort, axisops.argsort, axisops.rank):
                compare(op, y, problems, f"{op.__name__} {np.dtype(dtype)}", axis=0)
            compare(axisops.top_k, y, problems, f"top_k {np.dtype(dtype)}", 9, axis=0)
            compare(axisops.nanmedian, y, problems, f"nanmedian {np.dtype(dtype)}", axis=0)
        big = values(np.float32, (3000,), rng)
        for op in (axisops.sort, axisops.median):
            compare(op, big, problems, f"{op.__name__} 3000")
    report(problems)


def test_ties_zeros_and_infinities():
    """-0.0 and +0.0 tie (stable: the lower index first, its own bits back), NaN
    last in both directions, ranks by the CPU's tie rules, NaN ranked NaN."""
    x = np.array([[0.0, -0.0, np.inf, np.nan, -np.inf, -0.0, 2.0, 2.0, np.nan, 0.0]])
    problems: list[str] = []
    for descending in (False, True):
        compare(axisops.sort, x, problems, f"sort {descending}", descending=descending)
        compare(axisops.argsort, x, problems, f"argsort {descending}", descending=descending)
    for method in ("average", "min", "max", "dense", "ordinal"):
        compare(axisops.rank, x, problems, f"rank {method}", method=method)
    compare(axisops.kthvalue, x, problems, "kthvalue", 2)
    compare(axisops.median, x[:, [0, 1, 5, 9, 6]], problems, "median of zeros", axis=-1)
    compare(axisops.moving_median, x, problems, "moving_median", 3, min_count=1)
    report(problems)


def test_views_and_several_axes():
    rng = np.random.default_rng(11)
    base = values(np.float64, (3, 6, 4), rng)
    problems: list[str] = []
    view = base.transpose(2, 1, 0)[:, ::-1]
    compare(axisops.sort, view, problems, "sort middle", axis=1)
    compare(axisops.argpartition, view, problems, "argpartition middle", 2, axis=1)
    compare(axisops.median, base, problems, "median (0, 2)", axis=(0, 2))
    compare(axisops.nanquantile, base, problems, "nanquantile (2, 0)", [0.2, 0.6], axis=(2, 0),
            keepdims=True)
    compare(axisops.median, base, problems, "median all")
    compare(axisops.moving_quantile, view, problems, "moving_quantile", 4, 0.6, axis=1,
            min_count=1)
    report(problems)


def test_errors_are_the_numpy_paths():
    x = values(np.float32, (2, 5), np.random.default_rng(0))
    problems: list[str] = []
    compare(axisops.sort, x, problems, "axis out of range", axis=2, error=True)
    compare(axisops.sort, x, problems, "tuple axis", axis=(0, 1), error=True)
    compare(axisops.top_k, x, problems, "k out of range", 6, error=True)
    compare(axisops.top_k, x, problems, "mode", 2, mode="middle", error=True)
    compare(axisops.kthvalue, x, problems, "k bool", True, error=True)
    compare(axisops.partition, x, problems, "kth out of range", 5, error=True)
    compare(axisops.argsort, x, problems, "index dtype", index_dtype=np.int16, error=True)
    compare(axisops.rank, x, problems, "rank method", method="first", error=True)
    compare(axisops.quantile, x, problems, "q out of range", 1.5, error=True)
    compare(axisops.quantile, x, problems, "method", 0.5, method="middle", error=True)
    compare(axisops.median, x, problems, "repeated axis", axis=(0, 0), error=True)
    compare(axisops.moving_quantile, x, problems, "moving q", 2, 2.0, error=True)
    compare(axisops.moving_median, x, problems, "window", 0, error=True)
    compare(axisops.sort, x.astype(np.complex64), problems, "complex", error=True)
    report(problems)


def test_empty_and_integer_q():
    problems: list[str] = []
    for shape in ((0, 4), (3, 0)):
        x = np.zeros(shape, np.float32)
        compare(axisops.sort, x, problems, f"sort {shape}")
        compare(axisops.rank, x, problems, f"rank {shape}", axis=0)
        compare(axisops.moving_median, x, problems, f"moving_median {shape}", 2)
        compare(axisops.nanmedian, x, problems, f"nanmedian {shape}", axis=1)
    x = values(np.int32, (2, 5), np.random.default_rng(2))
    compare(axisops.quantile, x, problems, "integer q", 1, axis=-1)
    report(problems)


# ------------------------------------------------------------------- gradients


def test_gradients_match_the_numpy_path(exhaustive):
    rng = np.random.default_rng(21)
    problems: list[str] = []
    shapes = [((3, 9), -1), ((2, 70), -1)] + ([((9, 3), 0), ((2, 5), None)] if exhaustive else [])
    for shape, axis in shapes:
        x = values(np.float32, shape, rng)
        out_shape = (x.size,) if axis is None else shape
        g = rng.standard_normal(out_shape)
        label = f"{shape} axis={axis}"
        compare(axisops.grad.sort, g, problems, f"sort {label}", on_device(x), axis,
                descending=True)
        compare(axisops.grad.partition, g, problems, f"partition {label}", on_device(x), 3,
                axis)
        _, idx = axisops.top_k(x, 3, axis)
        compare(axisops.grad.top_k, np.ones(idx.shape, np.float32), problems, f"top_k {label}",
                on_device(idx), x.shape, axis)
        _, idx = axisops.kthvalue(x, 2, axis)
        compare(axisops.grad.kthvalue, np.ones(idx.shape, np.float16), problems,
                f"kthvalue {label}", on_device(idx), x.shape, axis)
        if axis is not None:
            q = np.array([0.2, 0.5])
            gq = np.ones((2,) + shape[:axis % 2] + shape[axis % 2 + 1:])
            compare(axisops.grad.quantile, gq, problems, f"quantile {label}", on_device(x), q,
                    axis)
            gm = np.ones(shape[:axis % 2] + shape[axis % 2 + 1:], np.float32)
            compare(axisops.grad.nanmedian, gm, problems, f"nanmedian {label}", on_device(x),
                    axis)
            gmov = rng.standard_normal(shape).astype(np.float32)
            compare(axisops.grad.moving_median, gmov, problems, f"moving_median {label}",
                    on_device(x), 4, axis, min_count=1)
            compare(axisops.grad.moving_quantile, gmov, problems, f"moving_quantile {label}",
                    on_device(x), 3, 0.7, axis, min_count=2)
    bad = np.array([[0, 9]])
    compare(axisops.grad.top_k, np.ones((1, 2)), problems, "index out of range",
            on_device(bad), (1, 5), -1, error=True)
    report(problems)


def test_every_order_function_has_a_device_implementation():
    import axisops.grad.order as grad_order
    import axisops.moving_order as moving_order
    import axisops.order as order

    table = axisops.cuda._operators()
    for module in (order, moving_order):
        for name in module.__all__:
            assert (module.__name__, name) in table, name
    for name in ("quantile_of_list", "nanquantile_of_list"):
        assert ("axisops.order", name) in table and ("axisops.grad.order", name) in table
    for name in grad_order.__all__ + ["moving_median", "moving_quantile"]:
        assert ("axisops.grad", name) in table, name

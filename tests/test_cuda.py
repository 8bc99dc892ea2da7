"""The CUDA path against the NumPy path, under Numba's CUDA simulator.

CI has no GPU: the root ``conftest.py`` turns the simulator on (``NUMBA_ENABLE_CUDASIM=1``)
before Numba loads, unless ``AXISOPS_TEST_REAL_CUDA=1`` asks for a real GPU. The
simulator runs every thread of a block as a Python thread, so the arrays are the
small edge cases of ``tests/cases.py`` (every layout, NaN, ties, -0.0, integer
extremes), and the planners cut reductions into chunks and scans into tiles at
small sizes there, so that every kernel path runs. Results must be device arrays
of the input's type with the NumPy path's dtype, shape and values: bit for bit for
max/min, the arg-operators, integers and cummax/cummin; within a bound for
float and complex sums, means, products and logcumsumexp.

That every kernel also compiles for a real GPU is ``tests/test_cuda_compile.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
from cases import order_sensitive
from cuda_support import (  # noqa: F401
    DTYPES,
    SIM,
    axes_of,
    check,
    cuda,
    device_cases,
    dtype_params,
    host,
    on_device,
    quick_thread_switches,
)

import axisops
import axisops.cuda

# ------------------------------------------------------------------- reductions

@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("dtype", dtype_params(DTYPES))
def test_extremes_are_the_numpy_paths_bits(op, dtype):
    problems: list[str] = []
    fn = getattr(axisops, op)
    # min and argmin are max and argmax's kernels with the comparison turned: by
    # default the views (whose reads the planner lays out alike for all four) run
    # with max and argmax, the plain, empty and value cases with all four
    for name, a in device_cases([dtype], views=op in ("max", "argmax")):
        for axis in axes_of(a):
            check(fn, a, True, problems, f"{name} axis={axis}", axis=axis)
        if op.startswith("arg") and "ties" in name:
            check(fn, a, True, problems, f"{name} last", axis=0, select_last_index=True,
                  index_dtype=np.int32)
        if a.ndim == 3:
            check(fn, a, True, problems, f"{name} keepdims", axis=(0, 2), keepdims=True)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["sum", "prod", "mean"])
@pytest.mark.parametrize("dtype", dtype_params([*DTYPES, np.complex64, np.complex128]))
def test_sums_products_means_match_the_numpy_path(op, dtype):
    problems: list[str] = []
    fn = getattr(axisops, op)
    # one value kernel for the three (the op a constant, mean a division at the
    # end): by default the views run with sum, the other cases with every op
    for name, a in device_cases([dtype], views=op == "sum"):
        if order_sensitive(name) or (op == "prod" and a.dtype.kind in "fc" and a.size > 24):
            continue  # overflow depends on the order; long float products underflow
        exact = np.dtype(dtype).kind in "biu" and op != "mean"
        for axis in axes_of(a):
            check(fn, a, exact, problems, f"{name} axis={axis}", axis=axis)
        if a.ndim == 3:
            check(fn, a, exact, problems, f"{name} keepdims", axis=(0, 2), keepdims=True)
    assert not problems, "\n".join(problems)


def test_reduction_options_and_errors():
    a = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    d = on_device(a)
    problems: list[str] = []
    check(axisops.sum, a, False, problems, "dtype float64", axis=1, dtype=np.float64)
    check(axisops.sum, a.astype(np.int8), True, problems, "int8 as int8", axis=0, dtype=np.int8)
    check(axisops.mean, a.astype(np.int64), False, problems, "mean of ints", axis=0)
    check(axisops.argmax, a, True, problems, "int32 indices", axis=None, index_dtype=np.int32)
    assert not problems, "\n".join(problems)
    with pytest.raises(np.exceptions.AxisError):
        axisops.sum(d, axis=2)
    with pytest.raises(ValueError, match="empty sequence"):
        axisops.argmax(on_device(np.zeros((3, 0), np.float32)), axis=1)
    with pytest.raises(TypeError, match="index_dtype"):
        axisops.argmax(d, axis=0, index_dtype=np.float32)
    for op in ("max", "argmin", "cummax", "logcumsumexp"):  # no order: the NumPy path's TypeError
        check(getattr(axisops, op), a.astype(np.complex64), True, problems, f"complex {op}", axis=0)
    assert not problems, "\n".join(problems)


def test_unravel_is_the_numpy_paths():
    problems: list[str] = []
    x = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(np.float32)
    for axis in [None, (0, 2), 1, (1, 2), ()]:
        idx = axisops.argmax(x, axis=axis)
        for dtype in (np.int64, np.int32, np.uint8):
            check(axisops.unravel, np.asarray(idx).astype(dtype), True, problems,
                  f"axis={axis} {np.dtype(dtype).name}", shape=x.shape, axis=axis)
    for label, idx in {"out of range": np.array([3, 60, -1]), "negative": np.array([-2]),
                       "floats": np.array([1.0])}.items():
        check(axisops.unravel, idx, True, problems, label, shape=x.shape, axis=None)
    assert not problems, "\n".join(problems)


def test_zero_dimensional_results_are_device_arrays():
    a = np.array([[3.0, -0.0], [np.nan, 1.0]], np.float32)
    got = axisops.max(on_device(a))
    assert host(got).shape == () and np.isnan(host(got))
    s = axisops.sum(on_device(np.arange(5, dtype=np.int16)))
    assert host(s).dtype == np.int64 and host(s)[()] == 10


def test_long_reductions_are_chunked_and_the_same_every_run():
    # 4000 elements along the reduced axis: several chunks (the simulator's sizes)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 4000)).astype(np.float32)
    a[1, 3333] = np.nan
    d = on_device(a)
    first = host(axisops.sum(d, axis=1))
    assert all(np.array_equal(first, host(axisops.sum(d, axis=1)), equal_nan=True)
               for _ in range(2))
    problems: list[str] = []
    check(axisops.sum, a, False, problems, "sum", axis=1)
    check(axisops.argmax, a, True, problems, "argmax", axis=1)
    check(axisops.argmin, a.T, True, problems, "argmin rows", axis=0)
    check(axisops.sum, a.T, False, problems, "sum rows", axis=0)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------ scans

@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", dtype_params(DTYPES))
def test_cummax_cummin_are_the_numpy_paths_bits(op, dtype):
    problems: list[str] = []
    fn = getattr(axisops, op)
    # one kernel, the comparison a constant: by default the views run with cummax
    for name, a in device_cases([dtype], views=op == "cummax"):
        for axis in [None, 0, -1] if a.ndim >= 2 else [None, -1] if a.ndim else [None]:
            check(fn, a, True, problems, f"{name} axis={axis}", axis=axis)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp"])
@pytest.mark.parametrize("dtype", dtype_params([np.bool_, np.int8, np.uint64, np.int64, np.float16, np.float32, np.float64, np.complex64]))
def test_sum_product_and_log_scans_match_the_numpy_path(op, dtype):
    problems: list[str] = []
    fn = getattr(axisops, op)
    # cumsum and cumprod are one kernel (the op a constant): by default the views
    # run with cumsum and with logcumsumexp (its own kernel)
    for name, a in device_cases([dtype], views=op != "cumprod"):
        if order_sensitive(name) or (op == "cumprod" and a.dtype.kind in "fc" and a.size > 24):
            continue
        if op == "logcumsumexp" and a.dtype.kind == "c":
            check(fn, a, True, problems, f"{name} raises")  # TypeError on both paths
            continue
        exact = np.dtype(dtype).kind in "biu" and op != "logcumsumexp"
        for axis in [None, 0, -1] if a.ndim >= 2 else [None, -1] if a.ndim else [None]:
            check(fn, a, exact, problems, f"{name} axis={axis}", axis=axis)
            if op != "logcumsumexp" and axis == -1:
                check(fn, a, exact, problems, f"{name} exclusive reverse", axis=axis,
                      exclusive=True, reverse=True)
    assert not problems, "\n".join(problems)


def test_long_scans_are_tiled():
    # one long row: tiles with carries (cummax's ties and NaN cross tile borders)
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 300).astype(np.float64)
    a[150] = np.nan
    a[200] = np.nan
    problems: list[str] = []
    check(axisops.cummax, a, True, problems, "cummax")
    check(axisops.cummin, a[:140], True, problems, "cummin")
    check(axisops.cumsum, a[:140], False, problems, "cumsum")
    check(axisops.cumsum, a[:140].astype(np.int32), True, problems, "cumsum exclusive",
          exclusive=True)
    check(axisops.cumsum, a[:140].astype(np.int32), True, problems, "cumsum reverse",
          reverse=True)
    check(axisops.logcumsumexp, a[:140], False, problems, "logcumsumexp")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_logical_scans_are_the_numpy_paths_bits(op, exhaustive):
    # x's dtype and layout are read once, by the truth kernel, into C-ordered int64
    # counts, which the int64 scan takes with exclusive and reverse: by default
    # those run on the plain, empty and value cases of bool, the views and the
    # other dtypes without them
    problems: list[str] = []
    for name, a in device_cases([np.bool_, np.int8, np.float32, np.complex64]):
        options = [(False, False), (True, False), (False, True)]
        if ("-view-" in name or a.dtype != np.bool_) and not exhaustive:
            options = options[:1]
        for axis in [None, -1] + ([0] if a.ndim >= 2 else []):
            for exclusive, reverse in options:
                check(getattr(axisops, op), a, True, problems,
                      f"{name} axis={axis} exclusive={exclusive} reverse={reverse}", axis=axis,
                      dtype=np.bool_, exclusive=exclusive, reverse=reverse)
    assert not problems, "\n".join(problems)


def test_scan_errors_are_the_numpy_paths():
    d = on_device(np.zeros((3, 4), np.float32))
    with pytest.raises(np.exceptions.AxisError):
        axisops.cumsum(d, axis=3)
    with pytest.raises(TypeError):
        axisops.cummax(d, axis=0, index_dtype=np.int16)
    with pytest.raises(TypeError):
        axisops.cumsum(d, axis=(0, 1))


def test_a_dlpack_only_cuda_array_without_torch_cuda_says_what_it_needs():
    # A JAX GPU array is known by DLPack only; here torch has no CUDA
    import torch

    if torch.cuda.is_available():
        pytest.skip("PyTorch has CUDA: the array would be read")

    class GpuArray:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kwargs):
            raise AssertionError("not to be read")

    with pytest.raises(TypeError, match=r"on a CUDA device.*needs PyTorch with CUDA"):
        axisops.sum(GpuArray(), axis=0)


def test_multiply_shift_division_is_exact_over_63_bits():
    # every division in the kernels is _divmod by a divisor record
    from axisops.cuda import _device
    from axisops.cuda.kernels import _divmod

    @cuda.jit
    def divide(ns, geo, out):
        k = cuda.grid(1)
        if k < ns.size:
            q, r = _divmod(ns[k], geo, 0)
            out[k, 0] = q
            out[k, 1] = r

    rng = np.random.default_rng(4)
    for d in [1, 2, 3, 5, 7, 255, 4096, 12345, 2**31 - 1, 2**31, 2**32 + 5, 2**40 + 3,
              2**62 - 1, 2**62 + 1]:
        ns = np.concatenate([rng.integers(0, 2**63 - 1, 60, dtype=np.int64),
                             np.array([0, 1, d - 1, d, d + 1, 2**63 - 2, 2**63 - 1], np.int64)])
        out = cuda.device_array((ns.size, 2), np.int64)
        divide[4, 32](cuda.to_device(ns), cuda.to_device(np.array(_device.divisor(d), np.int64)),
                      out)
        got = out.copy_to_host()
        want = np.array([divmod(int(n), d) for n in ns], dtype=np.int64)
        assert np.array_equal(got, want), d


def test_contiguous_rows_are_scanned_a_block_per_row():
    # along the contiguous axis a block scans each row (Hillis-Steele in shared memory,
    # the running value carried from one piece of blockDim elements to the next)
    from axisops.cuda import _device, scan

    rng = np.random.default_rng(5)
    row = 4 * _device.threads_per_block() + 5  # pieces of blockDim, the last one partial
    ints = rng.integers(-3, 4, (5, row)).astype(np.int32)
    floats = rng.integers(0, 4, (5, row)).astype(np.float64)
    floats[1, 9] = np.nan
    floats[3, row - 7] = np.nan
    plan = scan._plan(_device.device_array(on_device(ints)), 1, False, True)
    assert plan.blocked
    problems: list[str] = []
    for kwargs in ({}, {"exclusive": True}, {"reverse": True},
                   {"exclusive": True, "reverse": True}):
        check(axisops.cumsum, ints, True, problems, f"cumsum {kwargs}", axis=1, **kwargs)
        check(axisops.cumprod, ints % 2 + 1, True, problems, f"cumprod {kwargs}", axis=1,
              **kwargs)
    check(axisops.cumsum, floats, False, problems, "float cumsum", axis=-1)
    finite = np.nan_to_num(floats)  # the complex bound is from |x|, which a NaN spoils
    check(axisops.cumsum, (finite + 1j * finite[::-1]).astype(np.complex128), False, problems,
          "complex cumsum", axis=-1)
    for op in ("cummax", "cummin"):
        check(getattr(axisops, op), floats, True, problems, op, axis=1)
        check(getattr(axisops, op), ints, True, problems, f"{op} ints", axis=1)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------- gathers

@pytest.mark.parametrize("mode", ["raise", "wrap", "clip", "fill"])
@pytest.mark.parametrize("dtype", dtype_params([np.bool_, np.int8, np.uint64, np.float16, np.float32, np.float64, np.complex64]))
def test_take_matches_the_numpy_path(mode, dtype):
    rng = np.random.default_rng(6)
    problems: list[str] = []
    # the mode is how an index resolves, whatever x's layout and values (bits are
    # moved): by default the views and the value cases run with "wrap" (negative and
    # wrapped indices), the plain and empty cases with every mode
    for name, a in device_cases([dtype], views=mode == "wrap", values=mode == "wrap"):
        for axis in [None, 0, -1] if a.ndim >= 2 else [None, -1] if a.ndim else [None]:
            n = a.size if axis is None else a.shape[axis]
            span = max(n, 1)
            low, high = (-span, span) if mode == "raise" else (-3 * span, 3 * span)
            idx = rng.integers(low, high, (2, 3))
            # host int64 indices (uploaded), and device int32 or uint64 ones
            device = idx.astype(np.int32) if a.ndim % 2 else np.abs(idx).astype(np.uint64)
            for indices in (idx, on_device(device)):
                check(axisops.take, a, True, problems, f"{name} axis={axis}", indices=indices,
                      axis=axis, mode=mode, fill_value=1)
    assert not problems, "\n".join(problems)


def test_take_raises_on_the_device_as_on_the_cpu():
    x = np.arange(12.0).reshape(3, 4)
    problems: list[str] = []
    bad = np.array([[0, 1], [5, -9], [4, 2]])  # 5 is the first out of [-4, 4) in C order
    check(axisops.take, x, True, problems, "raise", indices=on_device(bad), axis=1)
    huge = np.array([1, 2**63 + 3], np.uint64)  # past int64: out of range, not negative
    check(axisops.take, x, True, problems, "uint64", indices=on_device(huge), axis=1)
    check(axisops.take, x, True, problems, "wrap uint64", indices=on_device(huge), axis=1,
          mode="wrap")
    check(axisops.take, x, True, problems, "empty axis", indices=np.array([0]),
          axis=1)  # fine: 4 columns
    check(axisops.take, x[:, :0], True, problems, "from empty", indices=np.array([0]), axis=1)
    check(axisops.take, x[:, :0], True, problems, "fill from empty", indices=np.array([0]),
          axis=1, mode="fill", fill_value=7)
    check(axisops.take, x, True, problems, "float indices", indices=np.array([0.5]), axis=1)
    check(axisops.take, x, True, problems, "bad mode", indices=np.array([0]), axis=1,
          mode="nearest")
    check(axisops.take, x.astype(np.int8), True, problems, "fill too big",
          indices=np.array([9]), axis=1, mode="fill", fill_value=1000)
    assert not problems, "\n".join(problems)


def test_reads_back_wait_for_the_inputs_stream():
    # a copy on a stream is asynchronous on a GPU (the simulator's is not): the
    # host reads only after the stream is waited for
    from axisops.cuda import _device as D

    events: list[str] = []

    class Stream:
        def synchronize(self):
            events.append("synchronize")

    class Array:
        def copy_to_host(self, stream=0):
            events.append("copy on the input's stream" if stream is d.stream else "copy")
            return np.array([1])

    d = D.DeviceArray(None, (1,), (8,), np.dtype(np.int64), "numba", None, Stream())
    assert D.is_set(Array(), d)
    assert events == ["copy on the input's stream", "synchronize"]


# ------------------------------------------------- found on the first real GPU (H100)

def test_a_kernel_numba_cuda_cannot_cache_is_used_uncached():
    # numba-cuda cannot pickle a kernel that links files (float16's shims): the
    # save raised from the launch that compiled it, so every float16 kernel failed
    from types import SimpleNamespace

    from axisops.cuda._jit import tolerate_uncachable

    saved = []

    def save_overload(sig, data):
        if data == "links files":
            raise RuntimeError("Cannot pickle CUDACodeLibrary with linking files")
        if data == "broken":
            raise RuntimeError("something else")
        saved.append((sig, data))

    dispatcher = SimpleNamespace(_cache=SimpleNamespace(save_overload=save_overload))
    assert tolerate_uncachable(dispatcher) is dispatcher
    dispatcher._cache.save_overload("sig", "links files")  # compiled, kept uncached
    dispatcher._cache.save_overload("sig", "plain")
    assert saved == [("sig", "plain")]
    with pytest.raises(RuntimeError, match="something else"):
        dispatcher._cache.save_overload("sig", "broken")


def test_the_flat_base_of_an_empty_array_is_one_dimensional():
    # kernels index the base with one index: an empty 2-D base failed to type on a
    # GPU (take_along_axis, mode="fill", of an empty axis)
    from axisops.cuda import _device as D

    for shape in [(3, 0), (0, 4, 2)]:
        base, offset = D.flat_base(D.device_array(on_device(np.zeros(shape, np.float32))))
        assert base.shape == (0,) and base.dtype == np.float32 and offset == 0
    x = on_device(np.zeros((3, 0), np.float32))
    got = host(axisops.take_along_axis(x, on_device(np.zeros((3, 2), np.int64)), 1,
                                       mode="fill", fill_value=7))
    assert got.dtype == np.float32 and got.shape == (3, 2) and (got == 7).all()


def test_zero_dimensional_device_inputs_stay_zero_dimensional():
    # the tests' on_device made 0-d arrays 1-d on a real GPU (np.ascontiguousarray)
    a = on_device(np.array(2.5))
    assert a.shape == ()
    assert host(axisops.cumsum(a)).shape == axisops.cumsum(np.array(2.5)).shape
    r = axisops.sum(a)
    assert host(r).shape == () and host(r)[()] == 2.5


def test_a_flat_base_keeps_its_memory_alive():
    # the kernels read views made from raw pointers (flat bases, complex parts, zero
    # views); on an H100 such a view outlived an upload, whose memory the next
    # allocation reused while a kernel read it (scatter's host updates, the complex
    # gradients' zero imaginary parts)
    import gc

    from axisops.cuda import _device as D

    a = on_device(np.arange(6.0))
    base, offset = D.flat_base(D.device_array(a))
    part = D.complex_part(D.device_array(on_device(np.arange(3.0) + 1j)), imaginary=True)
    del a
    gc.collect()
    if not SIM:
        cuda.current_context().deallocations.clear()  # free what is pending now
    others = [on_device(np.full(6, -1.0)) for _ in range(8)]  # noqa: F841
    assert offset == 0 and np.array_equal(base.copy_to_host(), np.arange(6.0))
    assert np.array_equal(part.array.copy_to_host(), np.ones(3))


def _runs_without_the_simulator(code: str) -> None:
    """*code* prints "ok" in a subprocess with numba-cuda's real driver layer (no GPU
    needed for what it builds)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_a_zero_dimensional_view_is_made_without_numba_cudas_view():
    # numba-cuda's DeviceNDArray.view fails on 0-d arrays: every bool 0-d input
    # failed on an H100. Shown without a GPU or the simulator, in a subprocess.
    code = """
import numpy as np
from numba.cuda.cudadrv.devicearray import DeviceNDArray
from axisops.cuda._device import view_as
class Memory: pass
a = DeviceNDArray(shape=(), strides=(), dtype=np.bool_, gpu_data=Memory(), stream=0)
b = view_as(a, np.uint8)
assert b.shape == () and b.dtype == np.uint8 and b.gpu_data is a.gpu_data
c = DeviceNDArray(shape=(3,), strides=(1,), dtype=np.bool_, gpu_data=Memory(), stream=0)
assert view_as(c, np.uint8).shape == (3,)
print("ok")
"""
    _runs_without_the_simulator(code)


def test_a_broadcast_numba_array_keeps_its_zero_strides():
    # numba-cuda's __cuda_array_interface__ reports a stride-0 array as contiguous
    # (strides None); re-wrapped through it, a zero view read past its element (on an
    # H100: garbage imaginary parts from grad.scatter of a complex x and a real g).
    # Shown without a GPU or the simulator, in a subprocess.
    code = """
import numpy as np
from numba.cuda.cudadrv.devicearray import DeviceNDArray
from axisops.cuda._device import device_array
class Memory:
    class device_ctypes_pointer:
        value = None
a = DeviceNDArray(shape=(3, 4), strides=(0, 4), dtype=np.float32, gpu_data=Memory(), stream=1)
d = device_array(a)
assert d.strides == (0, 4) and d.array is a and d.shape == (3, 4)
print("ok")
"""
    _runs_without_the_simulator(code)


@pytest.mark.skipif(not SIM, reason="the simulator's block runner")
def test_the_simulator_runs_threads_in_turn_only_where_blocks_never_synchronise():
    # tests/simulator_blocks.py: a kernel with shared memory and syncthreads keeps
    # a thread per CUDA thread (and its barrier works: a tree reduction in shared
    # memory); an element-wise kernel runs its threads in turn
    import simulator_blocks
    from numba import int64

    from axisops.cuda import gather_kernels as GK
    from axisops.cuda import kernels as K

    assert simulator_blocks.synchronises(K.value_lanes.fn)
    assert simulator_blocks.synchronises(GK.sort_tiles.fn)
    assert not simulator_blocks.synchronises(K.copy_c.fn)
    assert not simulator_blocks.synchronises(K.cast.fn)

    @cuda.jit
    def block_sums(a, out):
        tile = cuda.shared.array(8, int64)
        i = cuda.threadIdx.x
        tile[i] = a[cuda.grid(1)]
        cuda.syncthreads()
        step = 4
        while step:
            if i < step:
                tile[i] += tile[i + step]
            cuda.syncthreads()
            step //= 2
        if i == 0:
            out[cuda.blockIdx.x] = tile[0]

    a = np.arange(24, dtype=np.int64)
    out = np.zeros(3, np.int64)
    block_sums[3, 8](a, out)
    assert out.dtype == np.int64 and out.tolist() == [28, 92, 156]

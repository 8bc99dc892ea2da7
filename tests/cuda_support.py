"""What the CUDA tests share: device copies of host arrays, the edge cases a
device array can be, and :func:`check`, which runs an operator on the host and on
the device and collects every difference in dtype, shape, bits (or a float bound)
and raised error.

Under the simulator (the root ``conftest.py``) a device array wraps the host array
with its strides; on a real GPU (``AXISOPS_TEST_REAL_CUDA=1``) a C-contiguous copy
is uploaded.
"""
from __future__ import annotations

import math
import os
import sys
import warnings

import numpy as np
import pytest
from cases import cases, mismatch, same_bits

import axisops
import axisops.cuda

cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")
SIM = bool(getattr(__import__("numba").config, "ENABLE_CUDASIM", False))
if not SIM and not cuda.is_available():
    pytest.skip("no CUDA GPU and the simulator is off", allow_module_level=True)
if SIM:  # blocks that never synchronise run without a Python thread per CUDA thread
    import simulator_blocks

    simulator_blocks.install()

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.uint64, np.int64, np.float16, np.float32,
          np.float64]


def dtype_params(dtypes, covered=()) -> list:
    """pytest params of *dtypes*: the first of each dtype class runs by default, the
    others of its class are marked ``exhaustive`` (the same kernel source with the
    same typing: ``axisops.cuda._signatures.DTYPE_CLASSES``), as are the classes of
    *covered* (dtypes another parametrization of the test already runs)."""
    from axisops.cuda._signatures import DTYPE_CLASSES

    seen = {DTYPE_CLASSES[np.dtype(d).name] for d in covered}
    params = []
    for d in dtypes:
        name = np.dtype(d).name
        cls = DTYPE_CLASSES[name]
        params.append(pytest.param(d, id=name, marks=[pytest.mark.exhaustive] if cls in seen
                                   else []))
        seen.add(cls)
    return params


@pytest.fixture(autouse=True, scope="module")
def quick_thread_switches():
    # The simulator's block runner polls its threads; a short switch interval
    # made a test's calls 3.6x faster.
    old = sys.getswitchinterval()
    sys.setswitchinterval(5e-4)
    yield
    sys.setswitchinterval(old)


def on_device(a: np.ndarray):
    """*a* as a device array with the same strides (the simulator's wraps it)."""
    if SIM:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return FakeCUDAArray(a)
    # reshape: np.ascontiguousarray makes a 0-d array 1-d
    return cuda.to_device(np.ascontiguousarray(a).reshape(a.shape))


def host(r) -> np.ndarray:
    assert axisops.cuda.is_cuda_array(r), f"expected a device array, got {type(r)}"
    return r.copy_to_host()


#: The dtypes whose edge cases include every layout (the ``view-*`` cases): one of
#: each element size and kind that the device code offsets differently (1, 4 bytes;
#: complex, on split parts). The other dtypes run the plain, empty and value cases
#: (ties, extremes, NaN): the kernels' stride and offset code is the same source
#: for every dtype, the simulator types nothing (the PTX check types every
#: kernel), and views of every dtype took the simulator files' time twice over.
#: Every dtype runs every layout under the exhaustive switch.
LAYOUT_DTYPES = (np.dtype(np.float32), np.dtype(np.bool_), np.dtype(np.complex64))


#: The cases whose point is their values (ties, integer extremes, NaN, infinities,
#: -0.0), in shapes the plain cases have.
VALUE_CASES = ("-ties", "-extremes", "-special")


def device_cases(dtypes, views: bool = True, values: bool = True):
    """The edge cases a device array can be: up to 3-D, all but unaligned views
    (views only of :data:`LAYOUT_DTYPES` unless ``AXISOPS_TEST_EXHAUSTIVE`` is set).

    Unless ``AXISOPS_TEST_EXHAUSTIVE`` is set, *views* False leaves out the views
    too, and *values* False the value cases (:data:`VALUE_CASES`): for the
    parameters of a test that change neither how the device reads a layout nor
    what it does with the values (an index mode of a gather, a scatter way, one of
    two operators of one kernel), which run them once, with another parameter."""
    every_case = bool(os.environ.get("AXISOPS_TEST_EXHAUSTIVE"))
    for name, a in cases(dtypes=dtypes, max_ndim=3):
        if "unaligned" in name:
            continue
        if "-view-" in name and not every_case and (not views or a.dtype not in LAYOUT_DTYPES):
            continue
        if not (values or every_case) and any(v in name for v in VALUE_CASES):
            continue
        yield name, a


def axes_of(a: np.ndarray):
    out: list = [None, -1]
    if a.ndim >= 2:
        out += [0, (0, a.ndim - 1)]
    return out[: 2 + 2 * (a.ndim >= 2)] if a.ndim else [None]


def float_bound(want: np.ndarray, scale: np.ndarray, count: int) -> np.ndarray:
    """Reassociation may move a float sum by a few roundings of its terms' size."""
    eps = np.finfo(want.dtype).eps
    return 4 * eps * (np.abs(scale).astype(np.float64) + np.abs(want).astype(np.float64)) \
        * max(1, math.ceil(math.log2(max(count, 2))))


def outcome(fn, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args, **kwargs), None
    except Exception as e:
        return None, e


def check(fn, a, exact: bool, collect: list, label: str, **kwargs):
    """*fn* on the host (device keyword arrays copied back) against *fn* on the device."""
    on_host = {k: v.copy_to_host() if axisops.cuda.is_cuda_array(v) else v
               for k, v in kwargs.items()}
    want, werr = outcome(fn, a, **on_host)
    got, gerr = outcome(fn, on_device(a), **kwargs)
    if werr is not None or gerr is not None:
        if type(werr) is not type(gerr) or str(werr) != str(gerr):
            collect.append(f"{label}: NumPy raised {werr!r}, device {gerr!r}")
        return
    pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        w = np.asarray(w)
        g = host(g)
        if exact:
            msg = same_bits(g, w)
        elif w.dtype.kind == "c":  # each part within its bound
            msg = (f"dtype {g.dtype}, expected {w.dtype}" if g.dtype != w.dtype else None) or \
                next((m for part in (np.real, np.imag) if (m := mismatch(
                    part(g), part(w), float_bound(part(w), np.abs(_scale(fn, a, on_host)),
                                                  a.size)))), None)
        else:
            bound = float_bound(w, _scale(fn, a, on_host), a.size) if w.dtype.kind == "f" \
                else None
            msg = mismatch(g, w, bound)
        if msg:
            collect.append(f"{label}: {msg}")


def _scale(fn, a, kwargs):
    """The size of the terms: the same operator on |x| (sums), or the result."""
    name = fn.__name__
    if a.dtype.kind == "c":
        return np.abs(np.asarray(fn(np.abs(a), **kwargs)))
    if a.dtype.kind != "f" or name in ("prod", "cumprod", "logcumsumexp"):
        return np.abs(np.asarray(fn(a, **kwargs), dtype=np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fn(np.abs(a.astype(np.float64)), **kwargs))

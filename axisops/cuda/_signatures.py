"""Every CUDA kernel with the argument types the launchers give it, for compiling
them without a GPU (``numba.cuda.compile_ptx``): CI has no GPU and the simulator
runs kernels as Python, so only a real compile catches typing errors (a float16
conversion, an int64/uint64 mix) before a user's GPU does.

>>> sigs = list(signatures())
>>> len(sigs) > 100 and all(callable(f) for _, f, _ in sigs)
True
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import _dtypes

#: Further kernel modules; each has a ``signatures()`` generator of the same form.
KERNEL_MODULES: tuple[str, ...] = ("gather_kernels", "window_kernels", "grad_kernels",
                                   "missing_kernels", "pool_kernels", "moving_kernels",
                                   "order_kernels")

#: The contract's real dtypes (bool is read as uint8 by the kernels).
DTYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64]


def signatures() -> Iterator[tuple[str, Any, tuple]]:
    """(name, Python function, argument types) of every kernel specialisation the
    launchers make for the default dtype options, float64 accumulators included."""
    from numba import from_dtype, types

    from . import kernels as K

    def arr(dtype, ndim=1):
        return types.Array(from_dtype(np.dtype(dtype)), ndim, "C")

    def scalar(dtype):
        return from_dtype(np.dtype(dtype))

    i64, boolean = types.int64, types.boolean
    geo = arr(np.int64)
    for dt in DTYPES:
        name = np.dtype(dt).name
        x = arr(dt)
        for op in ("sum", "mean"):
            res, acc = (_dtypes.mean_dtypes(np.dtype(dt), None) if op == "mean"
                        else _dtypes.sum_dtypes(np.dtype(dt), None, op))
            for a in {acc, np.dtype(np.float64)}:
                a_t = scalar(a)
                args = (x, geo, i64, i64, a_t, a_t, arr(a, 2))
                yield f"value_rows {name}->{a}", K.value_rows.py_func, args
                yield f"value_lanes {name}->{a}", K.value_lanes.py_func, args
            yield (f"value_finish {acc}->{res}", K.value_finish.py_func,
                   (arr(acc, 2), i64, scalar(acc), boolean, geo, arr(res)))
            if op == "sum":
                for kern in (K.scan_values, K.scan_values_block):
                    yield (f"{kern.py_func.__name__} {name}->{acc}", kern.py_func,
                           (x, geo, i64, i64, i64, boolean, boolean, scalar(acc), scalar(acc),
                            arr(acc, 2), arr(res)))
        log_out = np.float32 if np.dtype(dt) == np.float16 else (
            np.dtype(dt) if np.dtype(dt).kind == "f" else np.float64)
        yield (f"scan_logaddexp {name}", K.scan_logaddexp.py_func,
               (x, geo, i64, i64, i64, boolean, boolean, types.float64, types.float64,
                arr(np.float64, 2), arr(log_out)))
        v = scalar(dt)
        extreme = (x, geo, i64, boolean, boolean, boolean, arr(dt, 2), arr(np.int64, 2))
        yield f"extreme_rows {name}", K.extreme_rows.py_func, extreme
        yield f"extreme_lanes {name}", K.extreme_lanes.py_func, extreme
        for out in (dt, np.int64, np.int32):
            yield (f"extreme_finish {name}->{np.dtype(out)}", K.extreme_finish.py_func,
                   (arr(dt, 2), arr(np.int64, 2), boolean, boolean, boolean, boolean, v, i64, geo,
                    arr(np.int64), arr(out)))
        for index in (np.int64, np.int32):
            for kern in (K.scan_extreme, K.scan_extreme_block):
                yield (f"{kern.py_func.__name__} {name} {np.dtype(index)}", kern.py_func,
                       (x, geo, i64, i64, boolean, arr(dt, 2), arr(np.int64, 2), x, arr(index)))
        yield f"copy_c {name}", K.copy_c.py_func, (x, geo, x)
        yield f"truth_c {name}", K.truth_c.py_func, (x, geo, boolean, boolean, arr(np.int64))
        yield f"valid_c {name}", K.valid_c.py_func, (x, geo, arr(np.int8))
    for dt in [*DTYPES, np.complex64, np.complex128]:  # take
        # the index dtypes convert to int64 alike: one signed and one unsigned narrow
        # dtype stand for the others (uint64 goes through unsigned_positions)
        for index in (np.int64, np.int32, np.uint32):
            yield (f"take_elements {np.dtype(dt).name} {np.dtype(index).name}",
                   K.take_elements.py_func,
                   (arr(dt), geo, arr(index), i64, i64, scalar(dt), arr(np.int64), arr(dt)))
    yield ("unsigned_positions", K.unsigned_positions.py_func,
           (arr(np.uint64), i64, boolean, arr(np.int64)))
    for dt in (np.complex64, np.complex128):  # sums, products, means and their scans
        name, x, c = np.dtype(dt).name, arr(dt), scalar(dt)
        args = (x, geo, i64, i64, c, c, arr(dt, 2))
        yield f"value_rows {name}", K.value_rows.py_func, args
        yield f"value_lanes {name}", K.value_lanes.py_func, args
        yield f"value_finish {name}", K.value_finish.py_func, (arr(dt, 2), i64, c, boolean,
                                                              geo, x)
        for kern in (K.scan_values, K.scan_values_block):
            yield (f"{kern.py_func.__name__} {name}", kern.py_func,
                   (x, geo, i64, i64, i64, boolean, boolean, c, c, arr(dt, 2), x))
    yield "cast float32->float16", K.cast.py_func, (arr(np.float32), arr(np.float16))
    yield "test_c", K.test_c.py_func, (arr(np.int64), boolean, arr(np.uint8))
    for index in (np.int64, np.int32, np.uint64, np.uint8):
        yield (f"unravel_c {np.dtype(index).name}", K.unravel_c.py_func,
               (arr(index), geo, i64, arr(np.int64), arr(np.int64, 2)))
    for dt in (np.complex64, np.complex128):
        yield (f"truth_c {np.dtype(dt).name}", K.truth_c.py_func,
               (arr(dt), geo, boolean, boolean, arr(np.int64)))
        yield f"valid_c {np.dtype(dt).name}", K.valid_c.py_func, (arr(dt), geo, arr(np.int8))
        yield f"copy_c {np.dtype(dt).name}", K.copy_c.py_func, (arr(dt), geo, arr(dt))
    for short in KERNEL_MODULES:
        yield from importlib.import_module(f"axisops.cuda.{short}").signatures()


#: The dtype classes whose kernels type alike: one signature per kernel and class
#: compiles in the default check (``representative``). uint64 is its own class
#: (uint64 with int64 is where Numba's typing differs), as are float16 (converted
#: through float32) and bool.
DTYPE_CLASSES = {"bool": "bool", "uint64": "uint64", "float16": "float16",
                 "float32": "float", "float64": "float", "complex64": "complex",
                 "complex128": "complex",
                 **dict.fromkeys(["int8", "int16", "int32", "int64", "uint8", "uint16",
                                  "uint32"], "int")}


def _type_class(t) -> Any:
    from numba import types

    if isinstance(t, types.Array):
        return ("array", DTYPE_CLASSES.get(str(t.dtype), str(t.dtype)), t.ndim, t.layout)
    return DTYPE_CLASSES.get(str(t), str(t))


#: The dtype classes whose kernels type and compile differently from the others:
#: float16 arithmetic links NVVM shims (files the simulator never sees), complex
#: runs on split real and imaginary parts.
SPECIAL_CLASSES = ("float16", "complex")


def distinct(exhaustive: bool = True) -> list[tuple[str, Any, tuple]]:
    """The signatures to compile, each once: every distinct one, or (not
    *exhaustive*) the first of each kernel and, where the kernel has them, its
    first of each class of :data:`SPECIAL_CLASSES` (131 of 936 when this was
    written; bool, the ints and uint64 compile as the first does)."""
    seen: set = set()
    out = []
    for name, func, args in signatures():
        if exhaustive:
            keys = [(func, args)]
        else:
            classes = {c[1] for c in map(_type_class, args) if isinstance(c, tuple)}
            keys = [(func,)] + [(func, c) for c in SPECIAL_CLASSES if c in classes]
        if any(key not in seen for key in keys):
            seen.update(keys)
            out.append((name, func, args))
    return out


def compile_all(cc=(8, 0), part: int = 0, parts: int = 1, exhaustive: bool = True) -> list[str]:
    """Compile the signatures of :func:`distinct` (with *parts*, every *parts*-th
    from *part*, for processes working side by side) to PTX for compute capability
    *cc*; the names that failed, with their errors (empty when all compile)."""
    from numba import cuda

    failed = []
    for name, func, args in distinct(exhaustive)[part::parts]:
        try:
            cuda.compile_ptx(func, args, cc=cc)
        except Exception as e:
            failed.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
    return failed

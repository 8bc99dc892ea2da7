"""Benchmarks of axisops against NumPy, PyTorch and ONNX Runtime.

This module is the machinery behind ``axisops bench`` and ``benchmarks/run.py``.
It is imported only by those two; ``import axisops`` never imports it, and it
imports PyTorch, ONNX Runtime and matplotlib only when a run asks for them.

A *workload* is data: a name, the axisops operator it measures, a ``setup``
function that makes the inputs from a shape and a random generator, and one
*factory* per system.  A factory takes the inputs and returns a runner, a
callable of no arguments that computes the result once.  Everything that is not
the operation itself (``torch.from_numpy``, building the ONNX model, creating the
``InferenceSession``) happens in the factory, outside the timing.  To benchmark a
new operator, append a :class:`Workload` to :data:`WORKLOADS` (the helpers
:func:`reduction_workload` and :func:`onnx_runner` cover the common shapes).

How a run measures, and why:

* All systems run in one process on the same input array.
* Each runner is called once before timing (the warm-up: numba compilation or
  loading from its on-disk cache, ORT's first-run allocations), and that first
  call is recorded separately as ``first_call_ms``.
* The timed calls go round-robin over the systems, at least ``repeat`` rounds
  and more until every system has spent ``min_time`` seconds in timed calls,
  and each system keeps its best time.  On a shared, noisy machine a burst of load then
  hits every system alike instead of ruining one system's whole series.
* PyTorch and ONNX Runtime are given as many threads as the process has cores,
  as is numba (its default); NumPy's reductions and scans are single-threaded.
* GB/s counts bytes read plus bytes written: the inputs' ``nbytes`` (index
  arrays included) plus the result's ``nbytes``.  A workload that reads only
  part of an input says what it reads instead (``bytes_read``: ``take`` reads
  the rows its indices pick, not all of ``x``).
* The sliding-window workloads (unfold, fold) take 4-D images of their own
  (:func:`window_image_shape`: (8, 64, 56, 56) in the full bench, (2, 32, 28,
  28) with ``--quick``), not the 3-D ``shape``; the table's header says so.
* Every system's result is checked against the reference system's (NumPy), so a
  fast wrong answer shows up as ``MISMATCH`` in the table.  Where a system
  returns more than NumPy does (``cummax``: values and indices, NumPy's
  ``maximum.accumulate`` only values), the check compares the part NumPy has,
  and the whole result against a workload's ``full_reference`` system (PyTorch)
  when that one ran.  GB/s counts what each system actually writes, so such a
  system moves more bytes than NumPy; the workload's ``note`` says so in the
  table.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "Workload",
    "WORKLOADS",
    "FULL_SHAPE",
    "QUICK_SHAPE",
    "SYSTEMS",
    "available_systems",
    "run",
    "format_table",
    "write_json",
    "write_markdown",
    "plot",
    "machine_info",
]

#: Shape of the benchmark arrays: float32, 64 * 512 * 1024 * 4 bytes = 128 MiB.
FULL_SHAPE = (64, 512, 1024)
#: Shape used by ``--quick``: 16 * 256 * 512 * 4 bytes = 8 MiB.
QUICK_SHAPE = (16, 256, 512)
FULL_REPEAT = 5
QUICK_REPEAT = 3
#: Keep taking rounds until each system has spent this long in timed calls (or
#: MAX_ROUNDS calls): on a shared machine a threaded system is often slowed 10x by a
#: neighbour holding a core, and more tries give it a fair chance of a quiet one.
FULL_MIN_TIME = 1.0
QUICK_MIN_TIME = 0.25
MAX_ROUNDS = 100

#: Every system a workload may name, in the order the table lists them.
SYSTEMS = ("axisops", "numpy", "torch", "onnxruntime")
#: Seconds to wait (untimed) after a system's call before the next call: ONNX
#: Runtime's worker threads spin after each run (measured here: 42 ms of CPU in
#: the 200 ms after one GatherElements run on 2 cores), which would take a core
#: from whichever system is timed next (take_along_axis: 82 ms right after an
#: ORT run, 52 ms after a 50 ms pause; ORT itself 65 and 57 ms). axisops' pool
#: workers sleep as soon as a call returns (tests/test_call_path.py), so it
#: needs no pause.
SETTLE_S = {"onnxruntime": 0.05}
#: The system whose result every other system's result is checked against.
REFERENCE = "numpy"

Inputs = Tuple[Any, ...]
Runner = Callable[[], Any]
Factory = Callable[..., Runner]


# --------------------------------------------------------------------------
# Threads and optional peers


def core_count() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _torch():
    import torch

    if torch.get_num_threads() != core_count():
        torch.set_num_threads(core_count())
    return torch


def _onnx():
    import onnx
    import onnx.helper

    return onnx


def _ort():
    import onnxruntime

    return onnxruntime


_PEER_MODULES = {"torch": ("torch",), "onnxruntime": ("onnxruntime", "onnx")}


def available_systems() -> Dict[str, Optional[str]]:
    """Map each system to ``None`` when usable, or to the reason it is not."""
    import importlib

    status: Dict[str, Optional[str]] = {"axisops": None, "numpy": None}
    for system, modules in _PEER_MODULES.items():
        status[system] = None
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception as exc:  # ImportError, or a broken install
                status[system] = f"{module} is not importable ({type(exc).__name__}: {exc})"
                break
    return status


def thread_counts(systems: Sequence[str]) -> Dict[str, Any]:
    """How many threads each system computes with, as used by :func:`run`."""
    out: Dict[str, Any] = {}
    for system in systems:
        if system == "axisops":
            try:
                import numba

                out[system] = numba.get_num_threads()
            except Exception:  # pragma: no cover
                out[system] = None
        elif system == "numpy":
            out[system] = "1 (NumPy reductions and scans are single-threaded)"
        elif system == "torch":
            out[system] = _torch().get_num_threads()
        elif system == "onnxruntime":
            out[system] = core_count()
    return out


# --------------------------------------------------------------------------
# ONNX Runtime runners

ONNX_IR_VERSION = 10  # ONNX 1.16's; every onnxruntime this library supports reads it


def onnx_runner(
    op_type: str,
    x: np.ndarray,
    *,
    out_dtype: Any,
    out_rank: int,
    attributes: Optional[Dict[str, Any]] = None,
    constants: Sequence[Optional[np.ndarray]] = (),
    feeds: Sequence[np.ndarray] = (),
    opset: int = 18,
) -> Runner:
    """An ONNX Runtime session computing ``op_type(x, *feeds, *constants)``, as a runner.

    ``out_rank`` is the number of dimensions of the result (its sizes are
    left symbolic).  ``feeds`` are more graph inputs, passed on every run as
    ``x`` is (the indices and updates of a gather or scatter: data, not part of
    the model).  ``constants`` become initializers (so ORT sees them as constant
    inputs, as ``axes`` of ReduceSum are in a real model); ``None`` leaves an
    optional input out.  The session runs on the CPU with
    ``intra_op_num_threads`` set to the core count.
    """
    onnx = _onnx()
    ort = _ort()
    helper = onnx.helper
    x_elem = helper.np_dtype_to_tensor_dtype(np.dtype(x.dtype))
    y_elem = helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype))
    inputs = ["x"]
    graph_inputs = [helper.make_tensor_value_info("x", x_elem, list(x.shape))]
    feed = {"x": np.ascontiguousarray(x)}
    for i, value in enumerate(feeds, 1):
        name = f"x{i}"
        value = np.ascontiguousarray(value)
        inputs.append(name)
        graph_inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)))
        feed[name] = value
    initializers = []
    for i, value in enumerate(constants):
        if value is None:
            inputs.append("")
            continue
        name = f"c{i}"
        inputs.append(name)
        initializers.append(onnx.numpy_helper.from_array(np.asarray(value), name))
    node = helper.make_node(op_type, inputs, ["y"], **(attributes or {}))
    graph = helper.make_graph(
        [node],
        f"axisops_bench_{op_type}",
        graph_inputs,
        [helper.make_tensor_value_info("y", y_elem, [f"y{i}" for i in range(out_rank)])],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ONNX_IR_VERSION
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = core_count()
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return lambda: session.run(["y"], feed)[0]


# --------------------------------------------------------------------------
# Workloads


@dataclass
class Workload:
    """One benchmark: an operator on inputs, computed by several systems.

    Parameters
    ----------
    name : str
        Row label, e.g. ``"argmax axis=0"``.
    op : str
        The axisops operator measured (what ``--ops`` filters on).
    setup : callable
        ``setup(shape, rng) -> tuple of inputs``.
    systems : dict
        System name -> factory; ``factory(*inputs)`` returns a runner (a
        callable of no arguments).  Only the runner is timed.
    check : callable, optional
        ``check(result, expected) -> bool``; the default (:func:`default_check`)
        compares integers exactly and floats with a tolerance fit for float32
        sums, and a tuple result against a non-tuple reference by its first
        element.
    note : str, optional
        A sentence printed under the workload's verdict (e.g. that the systems
        do not compute the same outputs).
    full_reference : str, optional
        A system whose whole (tuple) result every other system's tuple result is
        also checked against, for workloads where the reference system (NumPy)
        computes only part of the result: ``"torch"`` for ``cummax``, whose
        indices NumPy does not give.
    bytes_read : callable, optional
        ``bytes_read(inputs) -> int``, the bytes an operator reads, for
        workloads that do not read all of their inputs (``take``: the rows of
        ``x`` that the indices pick, and the indices).  Default: every input's
        ``nbytes``.
    """

    name: str
    op: str
    setup: Callable[[Tuple[int, ...], np.random.Generator], Inputs]
    systems: Dict[str, Factory]
    check: Optional[Callable[[Any, Any], bool]] = None
    note: str = ""
    full_reference: str = ""
    bytes_read: Optional[Callable[[Inputs], int]] = None


def random_float32(shape: Tuple[int, ...], rng: np.random.Generator) -> Inputs:
    """One C-contiguous float32 array of uniform [0, 1) values."""
    return (rng.random(shape, dtype=np.float32),)


def _axisops_fn(op: str) -> Callable:
    import axisops

    return getattr(axisops, op)


def _onnx_axes(axis) -> np.ndarray:
    return np.asarray(axis if isinstance(axis, tuple) else (axis,), dtype=np.int64)


# How each reduction is spelled by each peer: numpy function, torch function,
# and the ONNX node (op_type, result dtype of a float32 input or None for "same",
# whether axes is an input (True) or an attribute, the opset that allows that).
_REDUCTIONS = {
    "argmax": ("argmax", "argmax", ("ArgMax", np.int64, "attribute", 13)),
    "argmin": ("argmin", "argmin", ("ArgMin", np.int64, "attribute", 13)),
    "sum": ("sum", "sum", ("ReduceSum", None, "input", 13)),
    "max": ("max", "amax", ("ReduceMax", None, "input", 18)),
    "min": ("min", "amin", ("ReduceMin", None, "input", 18)),
    "prod": ("prod", "prod", ("ReduceProd", None, "input", 18)),
    "mean": ("mean", "mean", ("ReduceMean", None, "input", 18)),
}


def reduction_workload(op: str, axis, setup=random_float32) -> Workload:
    """A reduction ``op(x, axis)`` workload with all four systems."""
    np_name, torch_name, (onnx_op, onnx_out, axes_as, opset) = _REDUCTIONS[op]
    np_fn = getattr(np, np_name)

    def axisops_factory(x):
        fn = _axisops_fn(op)
        return lambda: fn(x, axis)

    def numpy_factory(x):
        return lambda: np_fn(x, axis=axis)

    def torch_factory(x):
        torch = _torch()
        fn = getattr(torch, torch_name)
        t = torch.from_numpy(x)
        if isinstance(axis, tuple) and torch_name in ("argmax", "argmin", "prod"):
            raise NotImplementedError(f"torch.{torch_name} takes one dim")
        return lambda: fn(t, axis)

    def onnx_factory(x):
        out_dtype = x.dtype if onnx_out is None else onnx_out
        out_rank = x.ndim - (len(axis) if isinstance(axis, tuple) else 1)
        if axes_as == "attribute":
            if isinstance(axis, tuple):
                raise NotImplementedError(f"ONNX {onnx_op} takes one axis")
            return onnx_runner(
                onnx_op, x, out_dtype=out_dtype, out_rank=out_rank,
                attributes={"axis": axis, "keepdims": 0}, opset=opset,
            )
        return onnx_runner(
            onnx_op, x, out_dtype=out_dtype, out_rank=out_rank, attributes={"keepdims": 0},
            constants=[_onnx_axes(axis)], opset=opset,
        )

    axis_text = "(" + ", ".join(map(str, axis)) + ")" if isinstance(axis, tuple) else str(axis)
    return Workload(
        name=f"{op} axis={axis_text}",
        op=op,
        setup=setup,
        systems={
            "axisops": axisops_factory,
            "numpy": numpy_factory,
            "torch": torch_factory,
            "onnxruntime": onnx_factory,
        },
    )


# How each scan is spelled by each peer: the numpy function, the torch function,
# the ONNX op_type (None: ONNX has no such operator), and a note for the table.
_SCANS = {
    "cumsum": (np.cumsum, "cumsum", "CumSum", ""),
    "cummax": (
        np.maximum.accumulate, "cummax", None,
        "NumPy (np.maximum.accumulate) computes the values only; axisops and torch also "
        "write the int64 indices, so they move 16 bytes per element to NumPy's 8 "
        "(their indices are checked against each other)",
    ),
}


def scan_workload(op: str, axis: int, setup=random_float32) -> Workload:
    """A scan ``op(x, axis)`` workload: axisops, NumPy, torch, and ONNX Runtime if
    ONNX has the operator (CumSum: the axis is a constant int64 input)."""
    np_fn, torch_name, onnx_op, note = _SCANS[op]

    def axisops_factory(x):
        fn = _axisops_fn(op)
        return lambda: fn(x, axis)

    def numpy_factory(x):
        return lambda: np_fn(x, axis=axis)

    def torch_factory(x):
        torch = _torch()
        fn = getattr(torch, torch_name)
        t = torch.from_numpy(x)
        return lambda: fn(t, axis)

    def onnx_factory(x):
        return onnx_runner(
            onnx_op, x, out_dtype=x.dtype, out_rank=x.ndim,
            constants=[np.array(axis, dtype=np.int64)],
        )

    systems = {"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory}
    if onnx_op is not None:
        systems["onnxruntime"] = onnx_factory
    return Workload(
        name=f"{op} axis={axis}",
        op=op,
        setup=setup,
        systems=systems,
        note=note,
        # A tuple result (values, indices): torch's is the one with indices.
        full_reference="torch" if op in ("cummax", "cummin") else "",
    )


# Gather and scatter.  The index arrays (int64) are made once by ``setup``, from
# their own generator with a fixed seed, so they are the same whichever
# workloads run; only the operation is timed.

INDEX_SEED = 4
#: Number of indices of the ``take`` workload (into an axis of 512 on the full shape).
TAKE_COUNT = 256


def _index_rng() -> np.random.Generator:
    return np.random.default_rng(INDEX_SEED)


def exact_check(result: Any, expected: Any) -> bool:
    """Same shape and the same values exactly (a gather moves values, it computes none)."""
    result, expected = np.asarray(result), np.asarray(expected)
    return result.shape == expected.shape and bool(np.array_equal(result, expected))


def float32_sum_check(result: Any, expected: Any) -> bool:
    """Same shape; values equal up to float32 rounding of sums added in another order.

    ``rtol`` 1e-5 and an ``atol`` of 1e-5 times the largest ``|expected|``: a sum of
    a few float32 terms taken in a different order differs from NumPy's in the
    last bits, and the absolute part covers sums that cancel to near zero.
    """
    result, expected = np.asarray(result), np.asarray(expected)
    if result.shape != expected.shape:
        return False
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    return bool(np.allclose(result, expected, rtol=1e-5, atol=1e-5 * scale, equal_nan=True))


def take_workload(axis: int = 1, count: int = TAKE_COUNT) -> Workload:
    """``take(x, indices, axis)``: ``count`` random int64 indices in ``[0, x.shape[axis])``.

    Peers: ``np.take``, ``torch.index_select``, ONNX Runtime's Gather (the
    indices are a graph input, fed on every run).  GB/s counts the rows the
    indices read (the result's size), the indices, and the result.
    """

    def bytes_read(inputs):
        x, indices = inputs
        rows = x.size // x.shape[axis] * indices.size  # elements the indices pick
        return rows * x.itemsize + indices.nbytes

    return _gather_workload(
        "take", axis, lambda shape: count, np.take, "index_select", "Gather",
        note=(f"{count} int64 indices along axis {axis} (torch: index_select); GB/s counts "
              "the rows of x they read, not all of x"),
        bytes_read=bytes_read)


def take_along_axis_workload(axis: int = 1) -> Workload:
    """``take_along_axis(x, indices, axis)`` with int64 indices of ``x``'s shape.

    Peers: ``np.take_along_axis``, ``torch.gather``, ONNX Runtime's GatherElements.
    """
    return _gather_workload(
        "take_along_axis", axis, lambda shape: shape, np.take_along_axis, "gather",
        "GatherElements", note="int64 indices of x's shape (torch: gather; ONNX: GatherElements)")


def _gather_workload(op, axis, index_shape, numpy_fn, torch_name, onnx_op, note,
                     bytes_read=None) -> Workload:
    """A gather of random float32 ``x`` at int64 indices of ``index_shape(x.shape)``,
    random in ``[0, x.shape[axis])``: ``fn(x, indices, axis)`` in every system."""

    def setup(shape, rng):
        x = rng.random(shape, dtype=np.float32)
        indices = _index_rng().integers(0, shape[axis], index_shape(shape), dtype=np.int64)
        return x, indices

    def axisops_factory(x, indices):
        fn = _axisops_fn(op)
        return lambda: fn(x, indices, axis)

    def numpy_factory(x, indices):
        return lambda: numpy_fn(x, indices, axis=axis)

    def torch_factory(x, indices):
        torch = _torch()
        fn, t, ti = getattr(torch, torch_name), torch.from_numpy(x), torch.from_numpy(indices)
        return lambda: fn(t, axis, ti)

    def onnx_factory(x, indices):
        return onnx_runner(onnx_op, x, out_dtype=x.dtype, out_rank=x.ndim,
                           attributes={"axis": axis}, feeds=[indices], opset=13)

    return Workload(
        name=f"{op} axis={axis}",
        op=op,
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 "torch": torch_factory, "onnxruntime": onnx_factory},
        check=exact_check,
        note=note,
        bytes_read=bytes_read,
    )


def scatter_add_workload(axis: int = 1) -> Workload:
    """``scatter(zeros, indices, updates, axis, reduce="add")``: a scatter-add into zeros.

    ``indices`` (int64, the full shape) are random in ``[0, shape[axis])``, so
    about as many updates land on each destination as the axis is long.
    Peers: ``np.add.at`` on a copy of the zeros (the copy is timed: every
    system returns a new array), ``torch.scatter_add``, ONNX Runtime's
    ScatterElements with ``reduction="add"``.  The sums come out in each
    system's own order, so they are checked to a float32 tolerance
    (:func:`float32_sum_check`).
    """

    def setup(shape, rng):
        updates = rng.random(shape, dtype=np.float32)
        indices = _index_rng().integers(0, shape[axis], shape, dtype=np.int64)
        return np.zeros(shape, dtype=np.float32), indices, updates

    def axisops_factory(x, indices, updates):
        fn = _axisops_fn("scatter")
        return lambda: fn(x, indices, updates, axis, reduce="add")

    def numpy_factory(x, indices, updates):
        # np.add.at with one index array per dimension, broadcast against indices.
        where = tuple(
            indices if d == axis
            else np.arange(n).reshape([-1 if k == d else 1 for k in range(x.ndim)])
            for d, n in enumerate(indices.shape)
        )

        def run():
            out = x.copy()
            np.add.at(out, where, updates)
            return out

        return run

    def torch_factory(x, indices, updates):
        torch = _torch()
        t, ti, tu = torch.from_numpy(x), torch.from_numpy(indices), torch.from_numpy(updates)
        return lambda: torch.scatter_add(t, axis, ti, tu)

    def onnx_factory(x, indices, updates):
        return onnx_runner("ScatterElements", x, out_dtype=x.dtype, out_rank=x.ndim,
                           attributes={"axis": axis, "reduction": "add"},
                           feeds=[indices, updates], opset=18)

    return Workload(
        name=f"scatter add axis={axis}",
        op="scatter",
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 "torch": torch_factory, "onnxruntime": onnx_factory},
        check=float32_sum_check,
        note=("into zeros, int64 indices and float32 updates of x's shape (NumPy: np.add.at "
              "on a copy, the copy timed; torch: scatter_add); sums in each system's own order, "
              "checked to rtol 1e-5"),
    )


# Sliding windows.  A convolution's im2col and col2im: float32 images with
# 3x3 windows, padding 1, stride 1, so there are as many windows as pixels.  These
# workloads have their own 4-D shapes, not the bench's 3-D ``shape``:
# :func:`window_image_shape` maps the full and the --quick shape to a typical
# feature map, and any other shape (tests, --shape) to a small image.

#: The image ``(N, C, H, W)`` of the window workloads in the full bench: a ResNet
#: stage-2 feature map (6.1 MiB float32; 9 times that unfolded).
WINDOW_FULL_SHAPE = (8, 64, 56, 56)
#: The image with ``--quick``.
WINDOW_QUICK_SHAPE = (2, 32, 28, 28)
#: The window: kernel, padding, stride.
WINDOW_KERNEL, WINDOW_PADDING = 3, 1

_WINDOW_SHAPES_TEXT = (f"float32 x of {WINDOW_FULL_SHAPE} in the full bench, "
                       f"{WINDOW_QUICK_SHAPE} with --quick")


def window_image_shape(shape: Tuple[int, ...]) -> Tuple[int, int, int, int]:
    """The image ``(N, C, H, W)`` that the window workloads use for the bench's ``shape``.

    :data:`FULL_SHAPE` gives :data:`WINDOW_FULL_SHAPE`, :data:`QUICK_SHAPE` gives
    :data:`WINDOW_QUICK_SHAPE`, and any other ``(a, b, c)`` (tests, ``--shape``)
    gives ``(a, b, c, c)``.
    """
    shape = tuple(shape)
    if shape == FULL_SHAPE:
        return WINDOW_FULL_SHAPE
    if shape == QUICK_SHAPE:
        return WINDOW_QUICK_SHAPE
    n, c, h = shape[:3]
    return (n, c, h, h)


def numpy_unfold(x: np.ndarray, k: int, p: int, channels_last: bool = False) -> np.ndarray:
    """im2col in NumPy (stride 1): ``np.pad``, ``sliding_window_view`` and one copy.

    ``x`` ``(N, C, H, W)`` gives ``(N, C*k*k, L)`` in PyTorch's order (row
    ``c*k*k + kernel offset``); ``channels_last`` takes ``(N, H, W, C)`` and gives
    ``(N, L, k*k*C)`` (column ``kernel offset*C + c``).
    """
    from numpy.lib.stride_tricks import sliding_window_view

    if channels_last:
        n, c = x.shape[0], x.shape[3]
        padded = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
        windows = sliding_window_view(padded, (k, k), axis=(1, 2))  # (N, Ho, Wo, C, k, k)
        ho, wo = windows.shape[1:3]
        return windows.transpose(0, 1, 2, 4, 5, 3).reshape(n, ho * wo, k * k * c)
    n, c = x.shape[:2]
    padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    windows = sliding_window_view(padded, (k, k), axis=(2, 3))  # (N, C, Ho, Wo, k, k)
    ho, wo = windows.shape[2:4]
    return windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * k * k, ho * wo)


def numpy_fold(cols: np.ndarray, size: Tuple[int, int], k: int, p: int) -> np.ndarray:
    """col2im in NumPy (stride 1): one vectorised add of a shifted slice per kernel offset.

    ``cols`` ``(N, C*k*k, L)`` is summed into a zero-padded ``(N, C, H+2p, W+2p)``
    buffer in increasing kernel offset, and the inside copied out.
    """
    h, w = size
    ho, wo = h + 2 * p - k + 1, w + 2 * p - k + 1
    n = cols.shape[0]
    c = cols.shape[1] // (k * k)
    blocks = cols.reshape(n, c, k, k, ho, wo)
    padded = np.zeros((n, c, h + 2 * p, w + 2 * p), dtype=cols.dtype)
    for i in range(k):
        for j in range(k):
            padded[:, :, i:i + ho, j:j + wo] += blocks[:, :, i, j]
    return np.ascontiguousarray(padded[:, :, p:p + h, p:p + w])


def unfold_workload(channels_last: bool = False) -> Workload:
    """``unfold(x, 3, padding=1)``: 3x3 im2col of a float32 image (see :func:`window_image_shape`).

    Peers: NumPy (:func:`numpy_unfold`: ``np.pad``, ``sliding_window_view``, a
    reshape that copies) and ``torch.nn.functional.unfold``; ONNX has no unfold
    operator.  ``channels_last``: ``x`` is ``(N, H, W, C)`` and the result
    ``(N, L, 9*C)``; torch unfolds the permuted ``(N, C, H, W)`` view and
    permutes its result into that layout (a copy, timed).
    """
    k, p = WINDOW_KERNEL, WINDOW_PADDING

    def setup(shape, rng):
        n, c, h, w = window_image_shape(shape)
        return (rng.random((n, h, w, c) if channels_last else (n, c, h, w), dtype=np.float32),)

    def axisops_factory(x):
        fn = _axisops_fn("unfold")
        return lambda: fn(x, (k, k), padding=p, channels_last=channels_last)

    def numpy_factory(x):
        return lambda: numpy_unfold(x, k, p, channels_last)

    def torch_factory(x):
        torch = _torch()
        unfold = torch.nn.functional.unfold
        t = torch.from_numpy(x)
        if not channels_last:
            return lambda: unfold(t, k, padding=p)
        n, h, w, c = x.shape
        nchw = t.permute(0, 3, 1, 2)  # a view: (N, C, H, W) in channels_last memory

        def run():
            cols = unfold(nchw, k, padding=p)  # (N, C*k*k, L)
            return cols.reshape(n, c, k * k, -1).permute(0, 3, 2, 1).reshape(n, -1, k * k * c)

        return run

    if channels_last:
        note = (f"{_WINDOW_SHAPES_TEXT}, in (N, H, W, C) layout; result (N, L, 9*C); "
                "NumPy: np.pad + sliding_window_view + a copying reshape; torch: "
                "F.unfold of the permuted view, then permute + contiguous (timed); "
                "ONNX has no unfold")
    else:
        note = (f"{_WINDOW_SHAPES_TEXT}; result (N, 9*C, L); NumPy: np.pad + "
                "sliding_window_view + a copying reshape; torch: F.unfold; ONNX has no unfold")
    return Workload(
        name="unfold 3x3 channels_last" if channels_last else "unfold 3x3",
        op="unfold",
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory},
        check=exact_check,
        note=note,
    )


def fold_workload() -> Workload:
    """``fold(cols, (H, W), 3, padding=1)``: 3x3 col2im back to a float32 image.

    ``cols`` is the unfold of a random image (:func:`numpy_unfold`, in setup:
    ``(8, 576, 3136)`` in the full bench).  Peers: NumPy (:func:`numpy_fold`),
    ``torch.nn.functional.fold``, ONNX Runtime's Col2Im (``cols`` fed on every
    run; ``image_shape`` and ``block_shape`` constants).  Each pixel sums up to 9
    terms, in each system's own order: checked to a float32 tolerance
    (:func:`float32_sum_check`).
    """
    k, p = WINDOW_KERNEL, WINDOW_PADDING

    def setup(shape, rng):
        n, c, h, w = window_image_shape(shape)
        cols = numpy_unfold(rng.random((n, c, h, w), dtype=np.float32), k, p)
        return cols, np.array([h, w], dtype=np.int64)

    def axisops_factory(cols, size):
        fn = _axisops_fn("fold")
        size = tuple(int(s) for s in size)
        return lambda: fn(cols, size, (k, k), padding=p)

    def numpy_factory(cols, size):
        size = tuple(int(s) for s in size)
        return lambda: numpy_fold(cols, size, k, p)

    def torch_factory(cols, size):
        torch = _torch()
        fold = torch.nn.functional.fold
        t, size = torch.from_numpy(cols), tuple(int(s) for s in size)
        return lambda: fold(t, size, k, padding=p)

    def onnx_factory(cols, size):
        return onnx_runner("Col2Im", cols, out_dtype=cols.dtype, out_rank=4,
                           attributes={"pads": [p] * 4},
                           constants=[size, np.array([k, k], dtype=np.int64)], opset=18)

    n, c, h, w = WINDOW_FULL_SHAPE
    return Workload(
        name="fold 3x3",
        bytes_read=lambda inputs: inputs[0].nbytes,  # cols (the size is two int64s)
        op="fold",
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 "torch": torch_factory, "onnxruntime": onnx_factory},
        check=float32_sum_check,
        note=(f"cols = the 3x3 unfold of a float32 image of {WINDOW_FULL_SHAPE} "
              f"(cols {n}x{c * k * k}x{h * w}) in the full bench, {WINDOW_QUICK_SHAPE} with "
              "--quick; result (N, C, H, W); NumPy: 9 shifted-slice adds into a padded buffer; "
              "torch: F.fold; ONNX Runtime: Col2Im; sums in each system's own order, checked "
              "to rtol 1e-5"),
    )


#: The benchmark workloads, in table order.
WORKLOADS: List[Workload] = [
    reduction_workload("argmax", 0),
    reduction_workload("argmax", 1),
    reduction_workload("argmax", -1),
    reduction_workload("sum", 1),
    reduction_workload("sum", (0, 2)),
    reduction_workload("max", -1),
    scan_workload("cummax", 1),
    scan_workload("cummax", -1),
    scan_workload("cumsum", 1),
    take_workload(1),
    take_along_axis_workload(1),
    scatter_add_workload(1),
    unfold_workload(),
    unfold_workload(channels_last=True),
    fold_workload(),
]


def operator_names() -> List[str]:
    """The operator names that ``--ops`` accepts, in table order."""
    return list(dict.fromkeys(w.op for w in WORKLOADS))


def select(ops: Optional[Sequence[str]] = None) -> List[Workload]:
    """The workloads of the operators ``ops`` (all when ``None``).

    Raises ``ValueError`` naming an operator that has no workload.
    """
    if not ops:
        return list(WORKLOADS)
    known = operator_names()
    unknown = [op for op in ops if op not in known]
    if unknown:
        raise ValueError(
            f"no benchmark workload for operator(s) {', '.join(unknown)}; "
            f"expected some of: {', '.join(known)}"
        )
    return [w for w in WORKLOADS if w.op in ops]


# --------------------------------------------------------------------------
# Running


def _to_numpy(result: Any) -> Any:
    if isinstance(result, (tuple, list)):
        return tuple(_to_numpy(r) for r in result)
    if hasattr(result, "detach") and hasattr(result, "numpy"):  # a torch tensor
        return result.detach().cpu().numpy()
    return np.asarray(result)


def default_check(result: Any, expected: Any) -> bool:
    """Integers and bools exactly; floats to a float32-sum tolerance.

    Tuples element by element.  A tuple result against a non-tuple reference
    (``(values, indices)`` against NumPy's values) compares its first element.
    """
    if isinstance(result, tuple) and not isinstance(expected, tuple):
        return bool(result) and default_check(result[0], expected)
    if isinstance(expected, tuple):
        return (
            isinstance(result, tuple)
            and len(result) == len(expected)
            and all(default_check(r, e) for r, e in zip(result, expected))
        )
    result = np.asarray(result)
    expected = np.asarray(expected)
    if result.shape != expected.shape:
        return False
    if expected.dtype.kind in "fc":
        return bool(np.allclose(result, expected, rtol=1e-3, atol=1e-3, equal_nan=True))
    return bool(np.array_equal(result, expected))


def _nbytes(value: Any) -> int:
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return int(np.asarray(value).nbytes)


def _log(stream, text: str) -> None:
    if stream is not None:
        print(text, file=stream, flush=True)


def run(
    workloads: Sequence[Workload],
    *,
    shape: Tuple[int, ...] = FULL_SHAPE,
    repeat: int = FULL_REPEAT,
    min_time: float = 0.0,
    systems: Optional[Sequence[str]] = None,
    seed: int = 0,
    progress=sys.stderr,
) -> Dict[str, Any]:
    """Time every workload on every available system; return the raw results.

    Each system gets ``repeat`` timed calls, and more while it has spent less
    than ``min_time`` seconds in timed calls (at most :data:`MAX_ROUNDS` calls);
    the calls go round-robin over the systems that still need some, and the
    best call counts.

    The result is a dict with ``meta`` (machine, versions, threads, shape,
    repeat, date, skipped systems) and ``results``, one row per
    (workload, system) that ran: ``workload``, ``op``, ``system``,
    ``times_ms`` (every timed call), ``best_ms``, ``median_ms``, ``first_call_ms`` (the
    untimed warm-up call, with the runner's setup), ``bytes``, ``gb_per_s``,
    ``ratio_to_best_peer`` (best_ms / the fastest other system's best_ms),
    ``check`` (``"ok"``, ``"MISMATCH"`` or ``"reference"``), ``checked_against``
    (the systems whose results it was compared with: the reference, and the
    workload's ``full_reference`` where that one ran), plus rows with
    ``error`` for a system that could not run a workload.  ``meta["notes"]``
    maps a workload's name to its ``note``.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    status = available_systems()
    wanted = list(SYSTEMS) if systems is None else list(systems)
    unknown = [s for s in wanted if s not in SYSTEMS]
    if unknown:
        raise ValueError(
            f"unknown system(s) {', '.join(unknown)}; expected some of: {', '.join(SYSTEMS)}"
        )
    skipped = {s: status[s] for s in wanted if status[s] is not None}
    usable = [s for s in SYSTEMS if s in wanted and status[s] is None]
    for system, reason in skipped.items():
        _log(progress, f"skipping {system}: {reason}")
    threads = thread_counts(usable)
    load_before = _load()
    _log(
        progress,
        "threads: " + ", ".join(f"{s}={threads[s]}" for s in usable)
        + f"; shape {shape} float32, best of >= {repeat} calls"
        + (f" (and >= {min_time:g} s)" if min_time > 0 else "")
        + (f"; load average {load_before:.2f}" if load_before is not None else ""),
    )
    if load_before is not None and load_before > 0.5:
        _log(progress, f"warning: the machine is busy (load average {load_before:.2f} on "
                       f"{core_count()} cores); threaded timings will be noisy")

    rng = np.random.default_rng(seed)
    rows: List[Dict[str, Any]] = []
    total = len(workloads)
    for k, workload in enumerate(workloads, 1):
        inputs = workload.setup(tuple(shape), rng)
        if workload.bytes_read is not None:
            in_bytes = int(workload.bytes_read(inputs))
        else:
            in_bytes = sum(_nbytes(a) for a in inputs)
        runners: Dict[str, Runner] = {}
        wl_rows: Dict[str, Dict[str, Any]] = {}
        results: Dict[str, Any] = {}
        for system in usable:
            factory = workload.systems.get(system)
            if factory is None:
                continue
            row = {"workload": workload.name, "op": workload.op, "system": system}
            wl_rows[system] = row
            t0 = time.perf_counter()
            try:
                runner = factory(*inputs)
                results[system] = _to_numpy(runner())
            except NotImplementedError as exc:
                del wl_rows[system]
                _log(progress, f"[{k}/{total}] {workload.name:<18} {system:<12} n/a: {exc}")
                continue
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"
                _log(progress, f"[{k}/{total}] {workload.name:<18} {system:<12} FAILED: {row['error']}")
                continue
            row["first_call_ms"] = (time.perf_counter() - t0) * 1e3
            time.sleep(SETTLE_S.get(system, 0.0))
            row["times_ms"] = []
            runners[system] = runner
            _log(
                progress,
                f"[{k}/{total}] {workload.name:<18} {system:<12} warm-up {row['first_call_ms']:9.1f} ms",
            )

        # Timed calls, round-robin over the systems.
        # A system drops out of the rounds once it has its calls and its time.
        active = list(runners)
        rounds = 0
        while active:
            # Each round starts one system later, so no system always follows
            # another's pause (a core wakes up slower after one).
            shift = rounds % len(active)
            rounds += 1
            for system in active[shift:] + active[:shift]:
                t0 = time.perf_counter()
                runners[system]()
                wl_rows[system]["times_ms"].append((time.perf_counter() - t0) * 1e3)
                time.sleep(SETTLE_S.get(system, 0.0))
            active = [
                s for s in active
                if len(wl_rows[s]["times_ms"]) < repeat
                or (len(wl_rows[s]["times_ms"]) < MAX_ROUNDS
                    and sum(wl_rows[s]["times_ms"]) < min_time * 1e3)
            ]

        reference = results.get(REFERENCE)
        check = workload.check or default_check
        timed = {s: r for s, r in wl_rows.items() if s in runners}
        for system, row in timed.items():
            row["best_ms"] = min(row["times_ms"])
            row["median_ms"] = float(np.median(row["times_ms"]))
            out_bytes = _nbytes(results[system])
            row["bytes"] = in_bytes + out_bytes
            row["gb_per_s"] = row["bytes"] / (row["best_ms"] * 1e-3) / 1e9
            if system == REFERENCE:
                row["check"] = "reference"
                continue
            against = {}
            if reference is not None:
                against[REFERENCE] = reference
            full = results.get(workload.full_reference)
            if system != workload.full_reference and isinstance(full, tuple) \
                    and isinstance(results[system], tuple):
                against[workload.full_reference] = full
            if not against:
                row["check"] = "unchecked"
                continue
            row["checked_against"] = list(against)
            ok = all(check(results[system], expected) for expected in against.values())
            row["check"] = "ok" if ok else "MISMATCH"
        for system, row in timed.items():
            peers = [r["best_ms"] for s, r in timed.items() if s != system]
            row["ratio_to_best_peer"] = row["best_ms"] / min(peers) if peers else None
            _log(
                progress,
                f"[{k}/{total}] {workload.name:<18} {system:<12} best {_ms(row['best_ms']):>9} ms"
                f"  {row['gb_per_s']:6.2f} GB/s  {row['check']}",
            )
        rows.extend(wl_rows[s] for s in usable if s in wl_rows)
        del inputs, runners, results

    return {
        "meta": dict(
            machine_info(),
            versions=versions(),
            threads=threads,
            shape=list(shape),
            dtype="float32",
            repeat=repeat,
            min_time_s=min_time,
            seed=seed,
            load_average_before=load_before,
            load_average_after=_load(),
            systems=usable,
            skipped_systems=skipped,
            notes={w.name: w.note for w in workloads if w.note},
            date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        ),
        "results": rows,
    }


# --------------------------------------------------------------------------
# Machine and versions


def _load() -> Optional[float]:
    """The one-minute load average, or None where the OS has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover
        return None


def machine_info() -> Dict[str, Any]:
    """CPU model (from /proc/cpuinfo), core counts, OS."""
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu or platform.processor() or platform.machine(),
        "cores": core_count(),
        "logical_cpus": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
    }


def versions() -> Dict[str, Optional[str]]:
    """Versions of Python and every system that can be imported."""
    import importlib

    out: Dict[str, Optional[str]] = {"python": platform.python_version()}
    for name in ("axisops", "numpy", "numba", "torch", "onnxruntime", "onnx"):
        try:
            out[name] = getattr(importlib.import_module(name), "__version__", "unknown")
        except Exception:
            out[name] = None
    return out


# --------------------------------------------------------------------------
# Reporting


def _verdicts(data: Dict[str, Any]) -> Dict[str, str]:
    """Per workload, one sentence saying whether axisops is fastest."""
    out: Dict[str, str] = {}
    by_workload: Dict[str, List[Dict[str, Any]]] = {}
    for row in data["results"]:
        if "best_ms" in row:
            by_workload.setdefault(row["workload"], []).append(row)
    for name, rows in by_workload.items():
        mine = [r for r in rows if r["system"] == "axisops"]
        peers = [r for r in rows if r["system"] != "axisops"]
        if not mine:
            out[name] = "axisops did not run"
            continue
        if not peers:
            out[name] = "no peer ran"
            continue
        best = min(peers, key=lambda r: r["best_ms"])
        ratio = mine[0]["best_ms"] / best["best_ms"]
        wrong = " (but its result is a MISMATCH)" if mine[0]["check"] == "MISMATCH" else ""
        if ratio <= 1:
            out[name] = (
                f"axisops is fastest{wrong}: {ratio:.2f}x the time of the best peer "
                f"({best['system']}, {1 / ratio:.2f}x faster)"
            )
        else:
            out[name] = (
                f"axisops is NOT fastest{wrong}: {ratio:.2f}x the time of {best['system']}"
            )
    return out


_HEADER = ("workload", "system", "ms", "GB/s", "vs best peer", "check")


def _ms(ms: float) -> str:
    """Milliseconds with about four significant digits."""
    for limit, digits in ((100, 0), (10, 1), (1, 2), (0.1, 3)):
        if ms >= limit:
            return f"{ms:.{digits}f}"
    return f"{ms:.4f}"


def _table_rows(data: Dict[str, Any]) -> List[Tuple[str, ...]]:
    rows = []
    for row in data["results"]:
        if "best_ms" not in row:
            rows.append((row["workload"], row["system"], "-", "-", "-", row.get("error", "")))
            continue
        ratio = row.get("ratio_to_best_peer")
        rows.append(
            (
                row["workload"],
                row["system"],
                _ms(row["best_ms"]),
                f"{row['gb_per_s']:.2f}",
                "-" if ratio is None else f"{ratio:.2f}x",
                row["check"],
            )
        )
    return rows


def _timing_text(meta: Dict[str, Any]) -> str:
    text = f"best of >= {meta['repeat']} calls"
    if meta.get("min_time_s"):
        text += f" and >= {meta['min_time_s']:g} s per system"
    return text + " (round-robin over the systems)"


def _load_text(meta: Dict[str, Any]) -> str:
    a, b = meta.get("load_average_before"), meta.get("load_average_after")
    if a is None or b is None:
        return ""
    return f"; load average {a:.2f} before, {b:.2f} after"


def _window_text(data: Dict[str, Any]) -> str:
    """What the window workloads ran on, if any ran ("" otherwise)."""
    if not any(r["op"] in ("unfold", "fold") for r in data["results"]):
        return ""
    shape = window_image_shape(tuple(data["meta"]["shape"]))
    return f"unfold and fold: a {data['meta']['dtype']} image (N, C, H, W) = {shape} instead"


def _threads_line(meta: Dict[str, Any]) -> str:
    return "threads: " + ", ".join(f"{s} {n}" for s, n in meta["threads"].items())


def format_table(data: Dict[str, Any]) -> str:
    """The results as a plain-text table with a verdict line per workload.

    ``vs best peer`` is the row's time over the fastest *other* system's time:
    on an axisops row, below 1 means axisops is the fastest.
    """
    meta = data["meta"]
    rows = _table_rows(data)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(_HEADER)]
    right = {2, 3, 4}

    def fmt(cells):
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    shape = "x".join(map(str, meta["shape"]))
    lines = [
        f"axisops bench: {meta['dtype']} {shape}, {_timing_text(meta)}, "
        f"on {meta['cpu']} ({meta['cores']} cores)",
        _threads_line(meta) + _load_text(meta),
        *([_window_text(data)] if _window_text(data) else []),
        "",
        fmt(_HEADER),
        fmt(["-" * w for w in widths]),
    ]
    verdicts = _verdicts(data)
    notes = meta.get("notes", {})

    def verdict(name):
        lines.append(f"  -> {verdicts.get(name, '')}")
        if name in notes:
            lines.append(f"     (note: {notes[name]})")

    previous = None
    for cells in rows:
        if previous is not None and cells[0] != previous:
            verdict(previous)
        label = cells[0] if cells[0] != previous else ""
        lines.append(fmt((label,) + tuple(cells[1:])))
        previous = cells[0]
    if previous is not None:
        verdict(previous)
    for system, reason in meta.get("skipped_systems", {}).items():
        lines.append(f"(skipped {system}: {reason})")
    return "\n".join(lines)


def write_json(data: Dict[str, Any], path: str) -> None:
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def write_markdown(data: Dict[str, Any], path: str, command: str = "axisops bench --markdown BENCHMARKS.md") -> None:
    """Write the results as a Markdown page (``BENCHMARKS.md``)."""
    meta = data["meta"]
    v = meta["versions"]
    shape = " x ".join(map(str, meta["shape"]))
    size_mib = np.prod(meta["shape"]) * np.dtype(meta["dtype"]).itemsize / 2**20
    lines = [
        "# Benchmarks",
        "",
        "<!-- Written by the benchmark (`python benchmarks/run.py`, i.e. "
        "`axisops bench --markdown BENCHMARKS.md`); do not edit by hand. -->",
        "",
        f"Written by `{command}` on {meta['date']}.",
        "",
        f"* Machine: {meta['cpu']}, {meta['cores']} cores ({meta['os']})",
        "* Versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val is not None),
        f"* Input: one C-contiguous {meta['dtype']} array of shape {shape} ({size_mib:.0f} MiB), "
        "uniform random values" + (f"; {_window_text(data)}" if _window_text(data) else ""),
        f"* Timing: all systems in one process; one untimed warm-up call each (numba compilation or "
        f"cache load, ONNX Runtime session creation); then the {_timing_text(meta)}; "
        "an untimed pause of 50 ms after each ONNX Runtime call, whose "
        "worker threads spin on a core after a run; each round starts with the next system",
        "* Threads: " + ", ".join(f"{s} {n}" for s, n in meta["threads"].items())
        + _load_text(meta),
        "* GB/s = (bytes read + bytes written) / time. *vs best peer* = this system's time / the "
        "fastest other system's time; on an axisops row, below 1 means axisops is the fastest.",
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|" + "|".join(["---", "---", "---:", "---:", "---:", "---"]) + "|",
    ]
    for cells in _table_rows(data):
        bold = cells[1] == "axisops"
        shown = [f"**{c}**" if bold and i in (1, 4) and c not in ("-", "") else c for i, c in enumerate(cells)]
        lines.append("| " + " | ".join(shown) + " |")
    lines += ["", "## Verdicts", ""]
    notes = meta.get("notes", {})
    lines += [
        f"* **{name}**: {text}" + (f". *Note: {notes[name]}.*" if name in notes else "")
        for name, text in _verdicts(data).items()
    ]
    for system, reason in meta.get("skipped_systems", {}).items():
        lines.append(f"* skipped {system}: {reason}")
    lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def plot(data: Dict[str, Any], path: str) -> None:
    """Bar chart of axisops time / peer time, per workload and peer.

    Raises ``ImportError`` with an explanation when matplotlib is missing.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "--plot needs matplotlib, which is not installed "
            "(pip install matplotlib, or pip install 'axisops[bench]')"
        ) from exc

    best: Dict[Tuple[str, str], float] = {}
    for row in data["results"]:
        if "best_ms" in row:
            best[(row["workload"], row["system"])] = row["best_ms"]
    workloads = list(dict.fromkeys(w for w, _ in best))
    peers = [s for s in data["meta"]["systems"] if s != "axisops"]
    meta = data["meta"]

    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(workloads) + 2), 4.5))
    width = 0.8 / max(1, len(peers))
    xs = np.arange(len(workloads))
    for j, peer in enumerate(peers):
        ratios = [
            best[(w, "axisops")] / best[(w, peer)]
            if (w, "axisops") in best and (w, peer) in best
            else np.nan
            for w in workloads
        ]
        bars = ax.bar(xs + (j - (len(peers) - 1) / 2) * width, ratios, width, label=f"vs {peer}")
        for bar, r in zip(bars, ratios):
            if np.isfinite(r):
                ax.annotate(f"{r:.2f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(xs)
    ax.set_xticklabels(workloads, rotation=20, ha="right")
    ax.set_ylabel("axisops time / peer time  (< 1: axisops faster)")
    shape = "x".join(map(str, meta["shape"]))
    ax.set_title(f"axisops vs peers, {meta['dtype']} {shape}, {meta['cpu']} ({meta['cores']} cores)",
                 fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

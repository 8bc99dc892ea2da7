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
# The package: one module per family's workloads (reduce, scan, gather, window),
# what a workload is (workload), their table order (workloads), the systems and
# the machine (systems), ONNX Runtime sessions (onnx), the runner (runner) and the
# reports (report). Everything a user or the CLI names is re-exported here.
from __future__ import annotations

from .gather import (
                     INDEX_SEED,
                     TAKE_COUNT,
                     scatter_add_workload,
                     take_along_axis_workload,
                     take_workload,
)
from .onnx import ONNX_IR_VERSION, onnx_runner
from .pool import moving_workload, numpy_moving, numpy_pool, pool_workload
from .reduce import reduction_workload
from .report import format_table, plot, write_json, write_markdown
from .runner import default_check, run
from .scan import scan_workload
from .systems import (
                     FULL_MIN_TIME,
                     FULL_REPEAT,
                     FULL_SHAPE,
                     MAX_ROUNDS,
                     QUICK_MIN_TIME,
                     QUICK_REPEAT,
                     QUICK_SHAPE,
                     REFERENCE,
                     SETTLE_S,
                     SYSTEMS,
                     Factory,
                     Inputs,
                     Runner,
                     available_systems,
                     core_count,
                     machine_info,
                     thread_counts,
                     versions,
)
from .window import (
                     WINDOW_FULL_SHAPE,
                     WINDOW_QUICK_SHAPE,
                     fold_workload,
                     numpy_fold,
                     numpy_unfold,
                     unfold_workload,
                     window_image_shape,
)
from .workload import Workload, exact_check, float32_sum_check, random_float32
from .workloads import WORKLOADS, operator_names, select

__all__ = [
    # what a user or the CLI names
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
    # the parts, for tests and for new workloads
    "INDEX_SEED",
    "TAKE_COUNT",
    "scatter_add_workload",
    "take_along_axis_workload",
    "take_workload",
    "ONNX_IR_VERSION",
    "onnx_runner",
    "reduction_workload",
    "default_check",
    "scan_workload",
    "FULL_MIN_TIME",
    "FULL_REPEAT",
    "MAX_ROUNDS",
    "QUICK_MIN_TIME",
    "QUICK_REPEAT",
    "REFERENCE",
    "SETTLE_S",
    "Factory",
    "Inputs",
    "Runner",
    "core_count",
    "thread_counts",
    "versions",
    "WINDOW_FULL_SHAPE",
    "WINDOW_QUICK_SHAPE",
    "fold_workload",
    "numpy_fold",
    "numpy_moving",
    "numpy_pool",
    "numpy_unfold",
    "moving_workload",
    "pool_workload",
    "unfold_workload",
    "window_image_shape",
    "exact_check",
    "float32_sum_check",
    "random_float32",
    "operator_names",
    "select",
]

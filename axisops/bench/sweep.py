"""A size sweep of every operator: ``axisops bench --sweep``.

The fixed benchmark (:mod:`axisops.bench`) times a few workloads on one large
array.  The sweep asks a different question: *at which sizes, dtypes and
layouts is axisops slower than NumPy, PyTorch, bottleneck or numbagg?*  It times
each operator (:data:`OPS`: the reductions, scans, gathers, scatter, unfold,
fold, the pooling, the moving windows and three order statistics) from about a thousand to a hundred
million elements (1K, 8K, 64K, 1M, 8M and 100M; ``--quick``: 1K, 64K and 1M),
in float32, float64 and int32, on C-ordered and transposed inputs of several
shapes (a *layout*: 1-D, tall ``(N/4, 4)`` along either axis, wide ``(4, N/4)``
along its rows, the middle axis of ``(8, N/64, 8)``, and the transposed
``(N/4, 4).T``; images ``(N, C, H, W)`` for unfold, fold and the pooling, and
``(N, H, W, C)`` with ``channels_last`` for the pooling), and reports, per
operator, the axisops time over the best peer's time at about 1K elements, from
64K elements up, and at its best.

The pooling (max_pool 3x3 stride 2 padding 1, avg_pool 2x2 stride 2, the fixed
bench's) runs against NumPy (``sliding_window_view``) and PyTorch's
``max_pool2d``/``avg_pool2d``, NCHW and channels last; the moving windows
(moving_mean, moving_max, moving_std with ddof=1; trailing windows of 20 along
the reductions' layouts but the axis of 4, and moving_mean's window of 1000 along
long rows from 64K) against NumPy, bottleneck's and numbagg's ``move_*`` (n/a
where the library lacks the function or refuses a window longer than the axis).
Each runs in two dtypes at most (float32 and one other; moving_std float64
only, so not with ``--quick``) and stops at 8M elements: the five add 171
points and about 3 minutes to the sweep (about 190 s on 2 busy cores).

The order statistics (sort, median, top_k with k=10) run along the 1-D, tall
(axis 0), wide (axis 1) and transposed layouts, in two dtypes each (sort and
top_k float32 and int32, median float32 and float64), up to 8M elements, against
NumPy (``np.sort``, ``np.median``, ``np.partition`` + a sort of the k),
PyTorch (``torch.sort(stable=True)``, ``torch.quantile(0.5)``: ``torch.median``
takes the lower middle element, ``torch.topk``), and bottleneck's ``median`` and
numbagg's ``nanmedian`` for the median: 120 points.

This module is imported only by ``axisops bench --sweep`` and
``benchmarks/run.py --sweep``; ``import axisops`` never imports it.  It reuses
the machine, version and thread helpers of :mod:`axisops.bench`.

How a point (operator, layout, dtype, size) is measured, and why:

* All systems run in one process on the same input arrays (PyTorch on
  ``torch.from_numpy`` views made outside the timing); PyTorch uses as many
  threads as the process has cores, as Numba does.
* Each system's first call is untimed (the warm-up: Numba compiles the kernel or
  loads it from its disk cache, PyTorch allocates its pools) and its result is
  checked against NumPy's (or, where NumPy computes less, as for the indices of
  ``cummax``, axisops' against PyTorch's).  axisops is then called, untimed,
  until its thread pool has taken its verdicts (:func:`settle_threads`): the
  first calls of a kernel at a new size class alternate serial and split runs
  to measure which pays, and a median of a few samples taken then counted the
  serial ones (logcumsumexp of (4, 262144) float32: 18.8 ms, where every later
  call takes 9.7).  The inputs are chosen so that every
  system must give the same numbers in any order of summation (integer values in
  floats, products of +-1), so a check fails only on a real difference;
  float tolerances cover the last bits of a mean or of logcumsumexp.
* A *sample* is a batch of back-to-back calls lasting about :data:`SAMPLE_S`
  (one call from 5 ms up; the number of calls is calibrated on untimed
  batches), timed with one pair of ``perf_counter`` reads, so that a
  microsecond call is not lost in the timer's own cost; its time per call is the
  sample's time over its number of calls.  Repeated calls on the same small
  input find it in cache, as repeated calls in a program do.
* Samples go round-robin over the systems, each round starting one system
  later, at least ``min_samples`` per system and more until each system has
  spent ``min_time`` seconds in samples, so a burst of load on this shared
  machine hits all systems alike.  After each sample the sweep pauses untimed
  as :data:`axisops.bench.SETTLE_S` says for that system (worker threads that
  spin after a parallel region would slow the next system).
* The *median* time per call counts (not the best): a sweep of more than a
  thousand points has to be robust rather than lucky.
* A peer whose single call would take more than ``slow_call_s`` seconds
  (predicted from its time at the previous size of the same case) is skipped at
  that size and marked ``too slow``; a system whose first timed call takes that
  long is timed only once (marked ``1 call``).  Dtypes other than float32 stop
  at 8M elements, 100M runs only four layouts per operator (:data:`TOP_LAYOUTS`),
  unfold/fold stop at 8M-element images (their columns are nine times
  larger), and so do the pooling and the moving windows, each in its spec's
  dtypes (:attr:`OpSpec.dtypes`).  Only one value buffer and one index array
  are kept between points (:class:`InputCache`).  This bounds the time (about 20-28 minutes on 2 idle
  cores with compiled kernels; ``axisops warmup`` first) and the memory (6 GB at
  the peak, a 100M-element scatter).

Time per element (the plot) is the median call time over the point's number of
elements: ``x.size`` for the reductions, scans and gathers (every gather picks as
many elements as ``x`` has) and the moving windows, the image's size for
unfold, fold and the pooling.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import bench
from .pool import AVG_KERNEL, MAX_KERNEL, MAX_PADDING, MAX_STRIDE, numpy_pool
from .report import _ms
from .runner import _to_numpy
from .systems import (
    _bottleneck,
    _load,
    _numbagg,
    _torch,
    available_systems,
    core_count,
    cpu_text,
    machine_info,
    thread_counts,
    versions,
)

__all__ = [
    "OPS",
    "SYSTEMS",
    "FULL_SIZES",
    "QUICK_SIZES",
    "Point",
    "plan",
    "run",
    "summarize",
    "format_table",
    "markdown_section",
    "replace_section",
    "write_markdown_section",
    "read_section",
    "write_json",
    "plot",
    "cli",
]

# --------------------------------------------------------------------------
# What the sweep covers

#: The systems the sweep compares (ONNX Runtime is left to the fixed bench);
#: bottleneck and numbagg time their NaN-skipping reductions (nansum, nanmax,
#: nanargmax, ...), which on the sweep's NaN-free data compute what axisops'
#: plain ones do, and are "n/a" for every other operator.
SYSTEMS = ("axisops", "numpy", "torch", "bottleneck", "numbagg")
#: Warm-up order: the systems whose results others are checked against come first.
CHECK_ORDER = ("numpy", "torch", "bottleneck", "numbagg", "axisops")
#: The operators, in table order: every public operator of the plain families
#: (the nan* twins, var/std and the moving windows' min and arg twins run the
#: same kernels as operators swept here, and are left out).
OPS = ("sum", "prod", "mean", "max", "min", "argmax", "argmin",
       "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
       "take", "take_along_axis", "gather_nd", "scatter", "unfold", "fold",
       "max_pool", "avg_pool", "moving_mean", "moving_max", "moving_std",
       "sort", "median", "top_k")

#: Sizes (elements) of the full sweep: 1K, 8K, 64K, 1M, 8M, 100M.
FULL_SIZES = (1 << 10, 1 << 13, 1 << 16, 1 << 20, 1 << 23, 100_000_000)
#: Sizes of ``--quick``: 1K, 64K, 1M.
QUICK_SIZES = (1 << 10, 1 << 16, 1 << 20)
FULL_DTYPES = ("float32", "float64", "int32")
QUICK_DTYPES = ("float32",)
#: Above this size only float32 runs (a 100M float64 array is 800 MB, and the
#: sweep must stay within about 30 minutes).
ALL_DTYPES_MAX_SIZE = 1 << 23
#: unfold and fold stop at this image size (the columns are 9 times larger), and
#: so do the pooling and the moving windows (to keep the sweep's time).
WINDOW_MAX_SIZE = 1 << 23
#: Above ALL_DTYPES_MAX_SIZE only these layouts run (each point there takes
#: seconds): 1-D, the representative and the transposed layout, and tall along axis 0.
TOP_LAYOUTS = ("1d", "tall-0", "wide-1", "wideT-1", "rows64", "rows4T")
#: The "about 1K" column of the summary takes sizes up to this.
SMALL_MAX = 2048
#: The "from 64K" column takes sizes from this up.
LARGE_MIN = 60_000

#: A sample is a batch of calls lasting at least this long (seconds).
SAMPLE_S = 0.005
FULL_MIN_TIME = 0.03
QUICK_MIN_TIME = 0.02
MIN_SAMPLES = 3
MAX_SAMPLES = 15
#: A sample has at most this many calls (a call of a few hundred nanoseconds).
MAX_CALLS_PER_SAMPLE = 100_000
#: Skip a peer whose single call is predicted to take longer (seconds).
SLOW_CALL_S = 2.0
#: How many worst cases the summary lists.
WORST_COUNT = 10

#: Every element count is rounded down to a multiple of this, so that one flat
#: buffer can be viewed in every layout.
ELEMENT_MULTIPLE = 64
WINDOW_KERNEL, WINDOW_PADDING, WINDOW_CHANNELS = 3, 1, 16
#: The pooling: (kernel, stride, padding) of each operator, the fixed bench's
#: (axisops.bench.pool): the ResNet stem's 3x3 max pooling with stride 2 and
#: padding 1, and a 2x2 average pooling with stride 2.
POOL_GEOMETRY = {"max_pool": (MAX_KERNEL, MAX_STRIDE, MAX_PADDING),
                 "avg_pool": (AVG_KERNEL, AVG_KERNEL, 0)}
#: The moving windows' trailing window, and the long window of moving_mean's
#: ``wide-1-w1000`` layout (from 64K elements).
MOVING_WINDOW, MOVING_LONG_WINDOW = 20, 1000
#: Pixels per image plane at most; larger sizes add images to the batch.
WINDOW_MAX_PLANE = 256 * 256
INDEX_SEED = 4

Runner = Callable[[], Any]


def size_label(n: int) -> str:
    """A short size: 1000 and 1024 -> "1K", 65536 -> "64K", 1048576 -> "1M",
    100000000 -> "100M" (decimal or binary units, whichever divides exactly)."""
    for unit, decimal, binary in (("G", 10**9, 1 << 30), ("M", 10**6, 1 << 20), ("K", 10**3, 1 << 10)):
        if n >= decimal:
            for scale in (decimal, binary):
                if n % scale == 0:
                    return f"{n // scale}{unit}"
            value = n / binary
            return f"{value:.0f}{unit}" if value >= 10 else f"{value:.1f}{unit}"
    return str(n)


@dataclass(frozen=True)
class Layout:
    """How a flat buffer of ``n`` elements is viewed, and along which axis (with
    the moving windows' window, and the smallest size the layout runs at)."""

    name: str
    text: str
    view: Callable[[np.ndarray], np.ndarray]
    axis: int | None
    window: int | None = None
    min_size: int = 0


def _layouts(*layouts: Layout) -> dict[str, Layout]:
    """Layouts by name, in the order given."""
    return {layout.name: layout for layout in layouts}


#: Layouts of the reductions, scans, take_along_axis and scatter.
AXIS_LAYOUTS = _layouts(
    Layout("1d", "(N,) axis 0", lambda f: f, 0),
    Layout("tall-0", "(N/4, 4) axis 0", lambda f: f.reshape(-1, 4), 0),
    Layout("tall-1", "(N/4, 4) axis 1", lambda f: f.reshape(-1, 4), 1),
    Layout("wide-1", "(4, N/4) axis 1", lambda f: f.reshape(4, -1), 1),
    Layout("mid-1", "(8, N/64, 8) axis 1", lambda f: f.reshape(8, -1, 8), 1),
    Layout("wideT-1", "(N/4, 4).T axis 1 (transposed)", lambda f: f.reshape(-1, 4).T, 1),
)
#: take along an axis of 4 picks 4 indices: left out.
TAKE_LAYOUTS = {k: v for k, v in AXIS_LAYOUTS.items() if k != "tall-1"}
#: gather_nd with (k, 1) indices: k rows of a 2-D array.
GATHER_ND_LAYOUTS = _layouts(
    Layout("rows4", "(N/4, 4), (N/4, 1) indices", lambda f: f.reshape(-1, 4), None),
    Layout("rows64", "(N/64, 64), (N/64, 1) indices", lambda f: f.reshape(-1, 64), None),
    Layout("rows4T", "(4, N/4).T, (N/4, 1) indices (transposed)",
           lambda f: f.reshape(4, -1).T, None),
)
#: unfold: an (N, C, H, W) image in C order, or an NCHW view of NHWC memory.
#: fold: columns (N, 9C, L) in C order, or a view of (N, L, 9C) memory.
WINDOW_LAYOUTS = _layouts(
    Layout("nchw", "(N, 16, H, W) C-ordered, 3x3, padding 1", lambda a: a, None),
    Layout("nhwcT", "(N, 16, H, W) view of NHWC memory (transposed), 3x3, padding 1",
           lambda a: a, None),
)
#: max_pool and avg_pool: an (N, C, H, W) image in C order, or (N, H, W, C) in C
#: order with ``channels_last=True`` (torch: an NCHW view of it, the
#: channels_last memory format, so that torch runs its NHWC kernel).
POOL_LAYOUTS = _layouts(
    Layout("nchw", "(N, 16, H, W) C-ordered", lambda a: a, None),
    Layout("nhwc", "(N, H, W, 16) C-ordered, channels_last=True (torch: its channels_last "
           "memory format)", lambda a: a, None),
)


def _moving_layout(name: str, window: int, new_name: str | None = None,
                   min_size: int = 0) -> Layout:
    """A layout of the reductions with a moving window along its axis."""
    layout = AXIS_LAYOUTS[name]
    text = f"{layout.text}, window {window}" + (
        f", from {size_label(min_size)}" if min_size else "")
    return replace(layout, name=new_name or name, text=text, window=window, min_size=min_size)


#: The moving windows: the reductions' layouts (but an axis of 4) with a window of
#: 20 along the axis (the middle axis of (8, N/64, 8) is shorter than that at 1K).
MOVING_LAYOUTS = _layouts(*(_moving_layout(name, MOVING_WINDOW)
                            for name in ("1d", "tall-0", "wide-1", "mid-1", "wideT-1")))
#: The order statistics (sort, median, top_k): the reductions' layouts but the axis
#: of 4 and the middle axis (top_k's k is 10).
ORDER_LAYOUTS = {name: AXIS_LAYOUTS[name] for name in ("1d", "tall-0", "wide-1", "wideT-1")}
#: top_k's k.
TOP_K = 10
#: moving_mean also has a long window along long rows, from 64K elements.
MOVING_MEAN_LAYOUTS = dict(MOVING_LAYOUTS, **_layouts(
    _moving_layout("wide-1", MOVING_LONG_WINDOW, "wide-1-w1000", 1 << 16)))


@dataclass(frozen=True)
class OpSpec:
    """One operator: its family, the values it is fed, its layouts and its tolerance.

    ``values`` names the input values (:func:`make_values`): integers in floats
    for sums (exact in any order), +-1 for products (no overflow, no
    subnormals), uniform random values otherwise.  ``rtol`` is the relative
    tolerance of float results by dtype (integers are compared exactly).
    ``dtypes`` (``None``: all) and ``max_size`` (``None``: none) restrict where
    the operator runs.
    """

    name: str
    family: str
    values: str
    layouts: dict[str, Layout]
    plot_layout: str
    quick_layouts: tuple[str, ...]
    rtol: tuple[float, float] = (1e-6, 1e-12)  # float32, float64
    note: str = ""
    dtypes: tuple[str, ...] | None = None
    max_size: int | None = None


#: The families on images (sizes up to WINDOW_MAX_SIZE), and those with windows.
IMAGE_FAMILIES = ("unfold", "fold", "pool")
LIMITED_FAMILIES = IMAGE_FAMILIES + ("moving", "order")


def _spec(name: str, family: str, values: str, note: str = "",
          rtol: tuple[float, float] = (1e-6, 1e-12), *,
          layouts: dict[str, Layout] | None = None,
          dtypes: tuple[str, ...] | None = None) -> OpSpec:
    """An operator's spec, with the layouts (unless given), plot layout, quick
    layouts and size limit of its family."""
    if layouts is None:
        layouts = {"take": TAKE_LAYOUTS, "gather_nd": GATHER_ND_LAYOUTS,
                   "unfold": WINDOW_LAYOUTS, "fold": WINDOW_LAYOUTS, "pool": POOL_LAYOUTS,
                   "moving": MOVING_LAYOUTS, "order": ORDER_LAYOUTS}.get(family, AXIS_LAYOUTS)
    plot_layout = "rows64" if family == "gather_nd" else (
        "nchw" if family in IMAGE_FAMILIES else "wide-1")
    # the transposed variant (channels last for the pooling, which takes NHWC itself)
    variant = next(k for k in layouts if k.endswith(("T", "T-1", "nhwc")))
    max_size = WINDOW_MAX_SIZE if family in LIMITED_FAMILIES else None
    return OpSpec(name, family, values, layouts, plot_layout, (plot_layout, variant), rtol, note,
                  dtypes, max_size)


_MOVING_PEERS = ("bottleneck move_{0} and numbagg move_{0}(a, window=, axis=) (n/a where the "
                 "window is longer than the axis: they refuse it; axisops and NumPy give NaN); "
                 "torch: n/a")


SPECS: dict[str, OpSpec] = {s.name: s for s in (
    _spec("sum", "reduce", "small_ints"),
    _spec("prod", "reduce", "signs"),
    _spec("mean", "reduce", "small_ints", "torch: dtype=float64 for int32 (NumPy's result dtype)"),
    _spec("max", "reduce", "random"),
    _spec("min", "reduce", "random"),
    _spec("argmax", "reduce", "random"),
    _spec("argmin", "reduce", "random"),
    _spec("cumsum", "scan", "small_ints"),
    _spec("cumprod", "scan", "signs"),
    _spec("cummax", "scan", "random",
          "NumPy: np.maximum.accumulate, values only (axisops and torch also write int64 "
          "indices, checked against each other)"),
    _spec("cummin", "scan", "random",
          "NumPy: np.minimum.accumulate, values only (axisops and torch also write int64 "
          "indices, checked against each other)"),
    _spec("logcumsumexp", "scan", "decaying",
          "NumPy: np.logaddexp.accumulate; int32 input gives float64 (torch: n/a); values "
          "-2 log(1 + position along the axis) + noise in [-1, 0], a convergent sum, so "
          "float32 results agree whatever precision a system computes in (with values of "
          "one scale a float32 running log-sum-exp stops growing after some 2**24 terms: "
          "NumPy's float32 result on 100M standard normal values is 11% below the float64 one)",
          rtol=(1e-3, 1e-9)),
    _spec("take", "take", "random",
          "as many random int64 indices as the axis is long (NumPy: np.take; torch: index_select)"),
    _spec("take_along_axis", "along", "random",
          "random int64 indices of x's shape (torch: gather)"),
    _spec("gather_nd", "gather_nd", "random",
          "random (k, 1) int64 row indices (NumPy and torch: x[tuple(indices.T)])"),
    _spec("scatter", "scatter", "small_ints",
          "reduce='add' into zeros, int64 indices and updates of x's shape (NumPy: "
          "np.add.at on a copy, the copy timed; torch: scatter_add)"),
    _spec("unfold", "unfold", "random",
          "3x3, padding 1, 16 channels; NumPy: np.pad + sliding_window_view + a copying "
          "reshape; torch: F.unfold (n/a for int32)"),
    _spec("fold", "fold", "small_ints",
          "the columns of a 3x3, padding 1 unfold; NumPy: 9 shifted-slice adds; torch: F.fold "
          "(n/a for int32)"),
    _spec("max_pool", "pool", "random",
          "3x3, stride 2, padding 1, 16 channels; NumPy: np.pad (-inf, or the int32 minimum) "
          "+ sliding_window_view + max; torch: F.max_pool2d (channels last: on an NCHW view "
          "of the NHWC array, result permuted back)", dtypes=("float32", "int32")),
    _spec("avg_pool", "pool", "small_ints",
          "2x2, stride 2, 16 channels; NumPy: sliding_window_view + mean; torch: F.avg_pool2d "
          "(channels last as for max_pool)", dtypes=("float32", "float64")),
    _spec("moving_mean", "moving", "small_ints",
          "trailing windows of 20 (wide-1-w1000: 1000) along the axis, the first window - 1 "
          "positions NaN; NumPy: differences of a float64 cumsum over the window (exact on "
          "these integer values); " + _MOVING_PEERS.format("mean"),
          layouts=MOVING_MEAN_LAYOUTS, dtypes=("float32", "float64")),
    _spec("moving_max", "moving", "random",
          "trailing windows of 20 along the axis; NumPy: sliding_window_view + max (int32: "
          "float64 results, as axisops and bottleneck); bottleneck move_max; numbagg: n/a (no "
          "move_max); n/a for bottleneck where the window is longer than the axis; torch: n/a",
          dtypes=("float32", "int32")),
    _spec("moving_std", "moving", "small_ints",
          "ddof=1, trailing windows of 20 along the axis; NumPy: sliding_window_view + "
          "std(ddof=1); " + _MOVING_PEERS.format("std") + " (numbagg's move_std is ddof=1); "
          "float64 only: bottleneck's float32 move_std runs its sums in float32 (4e-4 off "
          "at 8M along an axis), a MISMATCH, and is not the same computation",
          rtol=(1e-5, 1e-9), dtypes=("float64",)),
    _spec("sort", "order", "random",
          "along the axis; NumPy: np.sort; torch: torch.sort(stable=True), which writes the "
          "int64 indices too (its values checked)", dtypes=("float32", "int32")),
    _spec("median", "order", "random",
          "along the axis; NumPy: np.median; bottleneck median and numbagg nanmedian (its float64 "
          "result of float32 cast back, a few elements); torch: "
          "torch.quantile(0.5) (torch.median gives the lower middle element of an even "
          "count)", dtypes=("float32", "float64")),
    _spec("top_k", "order", "random",
          f"k={TOP_K} largest along the axis, values and int64 indices; NumPy: np.partition + "
          "a sort of the k, values only; torch: torch.topk, its values (tied values may "
          "come from other positions)", dtypes=("float32", "int32")),
)}


#: Every layout name, in the order the sweep visits them within a (size, dtype).
LAYOUT_NAMES = tuple(dict.fromkeys(name for spec in SPECS.values() for name in spec.layouts))


@dataclass(frozen=True)
class Point:
    """One measurement: an operator on one layout, dtype and size."""

    op: str
    layout: str
    dtype: str
    size: int

    @property
    def case(self) -> str:
        """The point without its size, e.g. ``"float32 wide-1"``."""
        return f"{self.dtype} {self.layout}"


def _kind_order(values: str) -> int:
    """Where the operators taking ``values`` come within a layout."""
    return VALUE_KINDS.index("noise01" if values == "decaying" else values)


def plan(
    ops: Sequence[str] = OPS,
    sizes: Sequence[int] = FULL_SIZES,
    dtypes: Sequence[str] = FULL_DTYPES,
    layouts: Sequence[str] | None = None,
    quick: bool = False,
) -> list[Point]:
    """The points to measure, sizes ascending (a size predicts the next one's time).

    Within a size the points go dtype by dtype, layout by layout, and within a
    layout by the kind of values the operators take, so that one value buffer
    (and one index array) at a time serves consecutive points (:class:`InputCache`).
    ``layouts`` keeps only the layouts of those names; ``quick`` keeps each
    operator's representative layout and its transposed variant.  An operator
    runs only in its spec's dtypes, up to its ``max_size``, and a layout from its
    ``min_size``.
    """
    points = []
    for size in sorted(set(sizes)):
        for dtype in dtypes:
            top = size > ALL_DTYPES_MAX_SIZE
            if top and dtype != "float32":
                continue
            cases = []
            for op in ops:
                spec = SPECS[op]
                if spec.max_size is not None and size > spec.max_size:
                    continue
                if spec.dtypes is not None and dtype not in spec.dtypes:
                    continue
                names = spec.quick_layouts if quick else tuple(spec.layouts)
                for name in names:
                    if ((layouts is None or name in layouts) and (not top or name in TOP_LAYOUTS)
                            and size >= spec.layouts[name].min_size):
                        cases.append((LAYOUT_NAMES.index(name), _kind_order(spec.values),
                                      OPS.index(op), name, op))
            for *_, name, op in sorted(cases):
                points.append(Point(op, name, dtype, size))
    return points


# --------------------------------------------------------------------------
# Inputs


@dataclass
class Inputs:
    """The arrays of one point: ``x`` (or the columns of fold) and what goes with it."""

    x: np.ndarray
    axis: int | None = None
    indices: np.ndarray | None = None
    updates: np.ndarray | None = None
    image_size: tuple[int, int] | None = None
    elements: int = 0
    window: int | None = None
    channels_last: bool = False


#: The kinds of input values of :func:`make_values` (an operator's ``values`` may
#: also be "decaying": :func:`decaying_values` of "noise01", made per layout).
VALUE_KINDS = ("small_ints", "signs", "random", "noise01")


def make_values(kind: str, n: int, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """``n`` values of ``dtype``, of a kind every system computes with identically.

    ``small_ints``: integers in [-8, 8] (every partial sum exact in float32 up
    to 2**24, so any order of summation gives the same bits); ``signs``: +-1
    (products that neither overflow nor become subnormal); ``noise01``:
    uniform [0, 1) floats, or integers 0 and 1; ``random``: uniform [0, 1)
    floats, or int32 over its whole range.
    """
    dt = np.dtype(dtype)
    if kind == "small_ints":
        return rng.integers(-8, 9, n, dtype=np.int8).astype(dt)
    if kind == "signs":
        return (rng.integers(0, 2, n, dtype=np.int8) * 2 - 1).astype(dt)
    if kind == "noise01" and dt.kind != "f":
        return rng.integers(0, 2, n, dtype=np.int8).astype(dt)
    if kind == "random" or kind == "noise01":
        if dt.kind == "f":
            return rng.random(n, dtype=dt)
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    raise ValueError(f"unknown kind of values {kind!r}")


def decaying_values(noise: np.ndarray, axis: int) -> np.ndarray:
    """``noise - 1 - 2 log(1 + position along axis)``, laid out in memory as ``noise``.

    The terms of ``exp(x)`` fall like ``1 / position**2``, so a running
    log-sum-exp along the axis converges, and its float32 value is the same
    whichever precision a system sums in.  ``noise`` holds values in [0, 1]
    (``"noise01"`` of :func:`make_values`); int32 gives integers.
    """
    out = np.empty_like(noise)  # keeps noise's strides: a transposed layout stays transposed
    shape = [1] * noise.ndim
    shape[axis] = -1
    decay = -2.0 * np.log1p(np.arange(noise.shape[axis], dtype=np.float64)).reshape(shape)
    if out.dtype.kind != "f":
        decay = np.round(decay)
    np.subtract(noise, 1, out=out)
    out += decay.astype(out.dtype)
    return out


def window_shape(size: int) -> tuple[int, int, int, int]:
    """The image ``(N, C, H, W)`` of about ``size`` elements: 16 channels, planes of at
    most 256x256 pixels, more images in the batch beyond that."""
    pixels = max(1, size // WINDOW_CHANNELS)
    batch = max(1, pixels // WINDOW_MAX_PLANE)
    plane = max(1, pixels // batch)
    if plane & (plane - 1) == 0:  # a power of two: H and W powers of two too
        h = 1 << ((plane.bit_length() - 1) // 2)
    else:
        h = math.isqrt(plane)
    return batch, WINDOW_CHANNELS, h, plane // h


class InputCache:
    """The last flat value buffer and the last index array made, for the current
    (size, dtype).

    The buffer is viewed in every layout, and :func:`plan` orders the points so
    that consecutive ones share the buffer and the index array: the random
    numbers of a 100M-element point are drawn about once per layout, not once per
    operator, and only one buffer (400 MB at 100M float32) and one index array
    (800 MB) are kept.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.key: tuple[int, str] | None = None
        self.values: dict[str, np.ndarray] = {}
        self.indices: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}

    def reset(self, size: int, dtype: str) -> None:
        """Drop the buffers when the size or dtype changes."""
        if self.key != (size, dtype):
            self.values.clear()
            self.indices.clear()
            self.key = (size, dtype)

    def flat(self, kind: str, n: int, dtype: str) -> np.ndarray:
        """``n`` values of ``kind`` (:func:`make_values`), made once while the kind lasts."""
        if kind not in self.values:
            self.values.clear()
            rng = np.random.default_rng([self.seed, n, VALUE_KINDS.index(kind)])
            self.values[kind] = make_values(kind, n, dtype, rng)
        return self.values[kind]

    def random_indices(self, high: int, shape: tuple[int, ...]) -> np.ndarray:
        """int64 indices in ``[0, high)`` of ``shape``, made once while the key lasts."""
        key = (high, tuple(shape))
        if key not in self.indices:
            self.indices.clear()  # keep one (800 MB at 100M); consecutive points share it
            rng = np.random.default_rng([INDEX_SEED, high, *shape])
            self.indices[key] = rng.integers(0, high, shape, dtype=np.int64)
        return self.indices[key]


def make_inputs(point: Point, cache: InputCache) -> Inputs:
    """The arrays of ``point``, views of the cache's buffers where possible."""
    spec = SPECS[point.op]
    layout = spec.layouts[point.layout]
    cache.reset(point.size, point.dtype)
    if spec.family in IMAGE_FAMILIES:
        return _window_inputs(point, cache)
    n = max(ELEMENT_MULTIPLE, point.size // ELEMENT_MULTIPLE * ELEMENT_MULTIPLE)
    flat = cache.flat("noise01" if spec.values == "decaying" else spec.values, n, point.dtype)
    if spec.family == "scatter":
        x = layout.view(np.zeros(n, dtype=point.dtype))
        axis = layout.axis
        indices = cache.random_indices(x.shape[axis], x.shape)
        return Inputs(x, axis, indices, flat.reshape(x.shape), elements=n)
    x = layout.view(flat)
    if spec.values == "decaying":
        x = decaying_values(x, layout.axis)
    if spec.family == "gather_nd":
        rows = x.shape[0]
        return Inputs(x, None, cache.random_indices(rows, (rows, 1)), elements=n)
    axis = layout.axis
    if spec.family == "moving":
        return Inputs(x, axis, window=layout.window, elements=n)
    if spec.family == "take":
        return Inputs(x, axis, cache.random_indices(x.shape[axis], (x.shape[axis],)), elements=n)
    if spec.family == "along":
        return Inputs(x, axis, cache.random_indices(x.shape[axis], x.shape), elements=n)
    return Inputs(x, axis, elements=n)


def _window_inputs(point: Point, cache: InputCache) -> Inputs:
    """unfold and the pooling: the image; fold: the columns of the image's unfold
    (all as laid out)."""
    k, p = WINDOW_KERNEL, WINDOW_PADDING
    n, c, h, w = window_shape(point.size)
    elements = n * c * h * w
    flat = make_values(SPECS[point.op].values, elements, point.dtype,
                       np.random.default_rng([cache.seed, elements, 99]))
    if SPECS[point.op].family == "pool":
        if point.layout == "nhwc":
            return Inputs(flat.reshape(n, h, w, c), elements=elements, channels_last=True)
        return Inputs(flat.reshape(n, c, h, w), elements=elements)
    transposed = point.layout == "nhwcT"
    if point.op == "unfold":
        if transposed:
            x = flat.reshape(n, h, w, c).transpose(0, 3, 1, 2)
        else:
            x = flat.reshape(n, c, h, w)
        return Inputs(x, elements=elements)
    cols = bench.numpy_unfold(flat.reshape(n, c, h, w), k, p)  # (N, 9C, L)
    if transposed:
        cols = np.ascontiguousarray(cols.transpose(0, 2, 1)).transpose(0, 2, 1)
    return Inputs(cols, image_size=(h, w), elements=elements)


# --------------------------------------------------------------------------
# Runners: one per system, each a closure over the inputs computing the result once

_NUMPY_REDUCE = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max,
                 "min": np.min, "argmax": np.argmax, "argmin": np.argmin}
_NUMPY_SCAN = {"cumsum": np.cumsum, "cumprod": np.cumprod,
               "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}
_TORCH_NAMES = {"max": "amax", "min": "amin"}


def axisops_runner(op: str, inp: Inputs) -> Runner:
    """``axisops.<op>`` on the inputs."""
    import axisops

    fn = getattr(axisops, op)
    k, p = WINDOW_KERNEL, WINDOW_PADDING
    x, axis = inp.x, inp.axis
    family = SPECS[op].family
    if family in ("reduce", "scan"):
        return lambda: fn(x, axis)
    if family in ("take", "along"):
        return lambda: fn(x, inp.indices, axis)
    if family == "gather_nd":
        return lambda: fn(x, inp.indices)
    if family == "scatter":
        return lambda: fn(x, inp.indices, inp.updates, axis, reduce="add")
    if family == "unfold":
        return lambda: fn(x, (k, k), padding=p)
    if family == "pool":
        k, s, p = POOL_GEOMETRY[op]
        cl = inp.channels_last
        return lambda: fn(x, k, stride=s, padding=p, channels_last=cl)
    if family == "moving":
        w = inp.window
        if op == "moving_std":
            return lambda: fn(x, w, axis, ddof=1)
        return lambda: fn(x, w, axis)
    if family == "order":
        if op == "top_k":
            return lambda: fn(x, TOP_K, axis)
        return lambda: fn(x, axis)
    return lambda: fn(x, inp.image_size, (k, k), padding=p)


def numpy_runner(op: str, inp: Inputs) -> Runner:
    """NumPy's spelling of the operator (see each operator's note)."""
    k, p = WINDOW_KERNEL, WINDOW_PADDING
    x, axis, indices = inp.x, inp.axis, inp.indices
    family = SPECS[op].family
    if family == "reduce":
        fn = _NUMPY_REDUCE[op]
        return lambda: fn(x, axis=axis)
    if op == "logcumsumexp":
        dtype = None if x.dtype.kind == "f" else np.float64
        return lambda: np.logaddexp.accumulate(x, axis=axis, dtype=dtype)
    if family == "scan":
        fn = _NUMPY_SCAN[op]
        return lambda: fn(x, axis=axis)
    if family == "take":
        return lambda: np.take(x, indices, axis=axis)
    if family == "along":
        return lambda: np.take_along_axis(x, indices, axis=axis)
    if family == "gather_nd":
        where = tuple(indices.T)
        return lambda: x[where]
    if family == "scatter":
        return _numpy_scatter_add(x, indices, inp.updates, axis)
    if family == "unfold":
        return lambda: bench.numpy_unfold(x, k, p)
    if family == "pool":
        return _numpy_pool(op, x, inp.channels_last)
    if family == "moving":
        w = inp.window
        return lambda: numpy_moving(x, op, w, axis)
    if family == "order":
        return _numpy_order(op, x, axis)
    return lambda: bench.numpy_fold(x, inp.image_size, k, p)


def _numpy_order(op: str, x: np.ndarray, axis: int | None) -> Runner:
    """``np.sort``, ``np.median``, or top_k's values: ``np.partition`` at ``n - k``,
    the last ``k`` along the axis sorted and reversed."""
    if op == "sort":
        return lambda: np.sort(x, axis=axis)
    if op == "median":
        return lambda: np.median(x, axis=axis)
    assert axis is not None
    n = x.shape[axis]
    last = np.arange(n - TOP_K, n)

    def top_k() -> np.ndarray:
        top = np.take(np.partition(x, n - TOP_K, axis=axis), last, axis=axis)
        return np.flip(np.sort(top, axis=axis), axis=axis)

    return top_k


def _numpy_pool(op: str, x: np.ndarray, channels_last: bool) -> Runner:
    """``numpy_pool`` of :mod:`axisops.bench.pool`; integers are padded with
    their dtype's minimum here (it pads with -inf)."""
    k, s, p = POOL_GEOMETRY[op]
    reduce = np.max if op == "max_pool" else np.mean
    if not p or x.dtype.kind == "f":
        return lambda: numpy_pool(x, reduce, k, s, p, channels_last)
    pads = [(0, 0)] * 4
    for a in ((1, 2) if channels_last else (2, 3)):
        pads[a] = (p, p)
    fill = np.iinfo(x.dtype).min if reduce is np.max else 0
    return lambda: numpy_pool(np.pad(x, pads, constant_values=fill), reduce, k, s, 0,
                              channels_last)


def numpy_moving(x: np.ndarray, op: str, window: int, axis: int) -> np.ndarray:
    """The trailing moving window along ``axis`` in NumPy: the first ``window - 1``
    positions NaN (all of them when the window is longer than the axis), float64
    for integers.  moving_mean and moving_sum: the differences of a float64
    cumsum over the window (O(n), exact on the sweep's integer values);
    moving_max and moving_std (ddof=1): a ``sliding_window_view`` reduction."""
    from numpy.lib.stride_tricks import sliding_window_view

    out = np.full(x.shape, np.nan, x.dtype if x.dtype.kind == "f" else np.float64)
    length = x.shape[axis]
    if window > length:
        return out

    def along(part: slice) -> tuple[slice, ...]:
        where = [slice(None)] * x.ndim
        where[axis] = part
        return tuple(where)

    if op in ("moving_mean", "moving_sum"):
        total = np.cumsum(x, axis=axis, dtype=np.float64)
        sums = total[along(slice(window - 1, None))].copy()
        sums[along(slice(1, None))] -= total[along(slice(None, length - window))]
        reduced = sums / window if op == "moving_mean" else sums
    else:
        windows = sliding_window_view(x, window, axis=axis)
        reduced = (np.max(windows, axis=-1) if op == "moving_max"
                   else np.std(windows, axis=-1, ddof=1))
    out[along(slice(window - 1, None))] = reduced
    return out


def _numpy_scatter_add(x: np.ndarray, indices: np.ndarray, updates: np.ndarray,
                       axis: int) -> Runner:
    """``np.add.at`` on a copy of ``x``, with one index array per dimension."""
    if x.ndim == 1:
        where: Any = indices
    else:
        where = tuple(
            indices if d == axis
            else np.arange(n).reshape([-1 if j == d else 1 for j in range(x.ndim)])
            for d, n in enumerate(indices.shape)
        )

    def run() -> np.ndarray:
        out = x.copy()
        np.add.at(out, where, updates)
        return out

    return run


def torch_runner(op: str, inp: Inputs) -> Runner:
    """PyTorch's spelling of the operator, on ``torch.from_numpy`` views."""
    torch = _torch()
    k, p = WINDOW_KERNEL, WINDOW_PADDING
    t = torch.from_numpy(inp.x)
    axis = inp.axis
    family = SPECS[op].family
    ti = None if inp.indices is None else torch.from_numpy(inp.indices)
    if op == "mean" and not t.dtype.is_floating_point:
        return lambda: torch.mean(t, axis, dtype=torch.float64)
    if family in ("reduce", "scan"):
        fn = getattr(torch, _TORCH_NAMES.get(op, op))
        return lambda: fn(t, axis)
    if family == "take":
        return lambda: torch.index_select(t, axis, ti)
    if family == "along":
        return lambda: torch.gather(t, axis, ti)
    if family == "gather_nd":
        where = tuple(ti.T)
        return lambda: t[where]
    if family == "scatter":
        tu = torch.from_numpy(inp.updates)
        return lambda: torch.scatter_add(t, axis, ti, tu)
    if family == "unfold":
        return lambda: torch.nn.functional.unfold(t, k, padding=p)
    if family == "pool":
        return _torch_pool(op, t, inp.channels_last)
    if family == "moving":
        raise NotImplementedError(f"torch has no {op}")
    if family == "order":
        return _torch_order(op, t, axis)
    return lambda: torch.nn.functional.fold(t, inp.image_size, k, padding=p)


def _torch_order(op: str, t: Any, axis: int | None) -> Runner:
    """``torch.sort(stable=True)``, ``torch.quantile(0.5)`` (NumPy's median; n/a above
    2**24 elements, which torch refuses), ``torch.topk``'s values."""
    torch = _torch()
    if op == "sort":
        return lambda: torch.sort(t, dim=axis, stable=True)
    if op == "median":
        if t.numel() > 1 << 24:
            raise NotImplementedError("torch.quantile refuses more than 2**24 elements")
        half = torch.tensor(0.5, dtype=t.dtype)
        return lambda: torch.quantile(t, half, dim=axis)
    return lambda: torch.topk(t, TOP_K, dim=axis).values


def _torch_pool(op: str, t: Any, channels_last: bool) -> Runner:
    """``F.max_pool2d``/``F.avg_pool2d``; channels last on the NCHW view of the NHWC
    tensor (torch's channels_last memory format: its NHWC kernel), result
    permuted back to NHWC (a view).  int32 average pooling: torch's
    NotImplementedError (n/a)."""
    functional = _torch().nn.functional
    fn = functional.max_pool2d if op == "max_pool" else functional.avg_pool2d
    k, s, p = POOL_GEOMETRY[op]
    if not channels_last:
        return lambda: fn(t, k, stride=s, padding=p)
    nchw = t.permute(0, 3, 1, 2)
    return lambda: fn(nchw, k, stride=s, padding=p).permute(0, 2, 3, 1)


def _nan_peer_runner(library: str) -> Callable[[str, Inputs], Runner]:
    """bottleneck's or numbagg's NaN-skipping reduction (``axisops.bench.reduce``)
    or moving window (:func:`moving_peer`), NotImplementedError (reported as n/a)
    for the operators they do not have."""
    from .reduce import nan_peer_factories

    def runner(op: str, inp: Inputs) -> Runner:
        family = SPECS[op].family
        if family == "moving":
            return moving_peer(library, op, inp)
        if op == "median":
            fn = _bottleneck().median if library == "bottleneck" else getattr(
                _numbagg(), "nanmedian", None)
            if fn is None:
                raise NotImplementedError(f"{library} has no nanmedian")
            x, axis = inp.x, inp.axis
            if library == "numbagg":  # float64 results of float32: checked as float32
                return lambda: np.asarray(fn(x, axis=axis)).astype(x.dtype, copy=False)
            return lambda: fn(x, axis=axis)
        if family != "reduce":
            raise NotImplementedError(f"{library} has no {op}")
        return nan_peer_factories(op, inp.axis)[library](inp.x)

    runner.__name__ = f"{library}_runner"
    return runner


def moving_peer(library: str, op: str, inp: Inputs) -> Runner:
    """bottleneck's ``move_*(a, window, axis=)`` or numbagg's ``move_*(a,
    window=, axis=)`` (moving_std: ddof=1, numbagg's only one);
    NotImplementedError where the library has no such function or the window is
    longer than the axis (both refuse it)."""
    x, axis, window = inp.x, inp.axis, inp.window
    assert axis is not None and window is not None
    name = "move_" + op.removeprefix("moving_")
    fn = getattr(_bottleneck() if library == "bottleneck" else _numbagg(), name, None)
    if fn is None:
        raise NotImplementedError(f"{library} has no {name}")
    if window > x.shape[axis]:
        raise NotImplementedError(f"{library} refuses a window longer than the axis "
                                  f"({window} > {x.shape[axis]})")
    if library == "bottleneck":
        ddof = {"ddof": 1} if op == "moving_std" else {}
        return lambda: fn(x, window, axis=axis, **ddof)
    return lambda: fn(x, window=window, axis=axis)


RUNNERS: dict[str, Callable[[str, Inputs], Runner]] = {
    "axisops": axisops_runner, "numpy": numpy_runner, "torch": torch_runner,
    "bottleneck": _nan_peer_runner("bottleneck"), "numbagg": _nan_peer_runner("numbagg"),
}


# --------------------------------------------------------------------------
# Checks


def results_match(result: Any, expected: Any, rtol: float) -> bool:
    """Same shape and values: integers exactly, floats to ``rtol`` (relative, and
    absolute in units of the largest ``|expected|``), NaN equal to NaN.

    A tuple ``(values, indices)`` against a plain array (NumPy's
    ``maximum.accumulate``) compares its values.
    """
    if isinstance(result, tuple) and not isinstance(expected, tuple):
        return bool(result) and results_match(result[0], expected, rtol)
    if isinstance(expected, tuple):
        return (isinstance(result, tuple) and len(result) == len(expected)
                and all(results_match(r, e, rtol) for r, e in zip(result, expected)))
    result, expected = np.asarray(result), np.asarray(expected)
    if result.shape != expected.shape:
        return False
    if expected.dtype.kind in "fc" or result.dtype.kind in "fc":
        finite = np.abs(expected[np.isfinite(expected)])
        scale = float(finite.max()) if finite.size else 0.0
        return bool(np.allclose(result, expected, rtol=rtol, atol=rtol * scale, equal_nan=True))
    return bool(np.array_equal(result, expected))


def _tolerance(point: Point, result: Any) -> float:
    """The point's float tolerance: by the result's float dtype (float64 for
    logcumsumexp of int32), the input's otherwise."""
    spec = SPECS[point.op]
    first = result[0] if isinstance(result, tuple) else result
    dtype = np.asarray(first).dtype
    if dtype.kind != "f":
        dtype = np.dtype(point.dtype)
    return spec.rtol[1] if dtype == np.float64 else spec.rtol[0]


def check_result(point: Point, system: str, result: Any, refs: dict[str, Any]) -> tuple[str, list[str]]:
    """``("ok" | "MISMATCH" | "reference" | "unchecked", systems compared with)``.

    Compared with NumPy's result where NumPy ran; a tuple result (cummax's
    values and indices) also with PyTorch's whole tuple; axisops with PyTorch
    when NumPy did not run.
    """
    if system == "numpy":
        return "reference", []
    against = {}
    if "numpy" in refs:
        against["numpy"] = refs["numpy"]
    if system != "torch" and "torch" in refs and (isinstance(result, tuple) or not against):
        against["torch"] = refs["torch"]
    if not against:
        return "unchecked", []
    rtol = _tolerance(point, result)
    ok = all(results_match(result, expected, rtol) for expected in against.values())
    return ("ok" if ok else "MISMATCH"), list(against)


# --------------------------------------------------------------------------
# Timing


def settle_threads(runner: Runner, most: int = 8) -> int:
    """Call *runner* (axisops) until no verdict of the thread pool is open (see
    ``axisops._jit.run``), at most *most* times; returns the number of calls."""
    from .. import _jit

    calls = 0
    while calls < most and None in _jit.split_verdicts().values():
        runner()
        calls += 1
    return calls


def _batch(runner: Runner, number: int) -> float:
    """Seconds for ``number`` back-to-back calls (results dropped at once)."""
    t0 = time.perf_counter()
    for _ in range(number):
        runner()
    return time.perf_counter() - t0


def calibrate(runner: Runner, sample_s: float = SAMPLE_S) -> tuple[int, float | None]:
    """Calls per sample, and the single call's time if it serves as the first sample.

    One call is timed: if it lasts ``sample_s`` or more, a sample is one call and
    that call is the first sample.  Otherwise batches of 10, 100, ... calls are
    timed (untimed as far as the results go) until one lasts a tenth of
    ``sample_s``, and a sample is as many calls as fill ``sample_s`` at that
    batch's rate (one call alone is a poor guide: the first call after the
    warm-up is often several times slower than the next).
    """
    t = _batch(runner, 1)
    if t >= sample_s:
        return 1, t
    number = 1
    while t < sample_s / 10 and number < MAX_CALLS_PER_SAMPLE:
        number *= 10
        t = _batch(runner, number)
    per_call = max(t / number, 1e-9)
    return max(1, min(MAX_CALLS_PER_SAMPLE, math.ceil(sample_s / per_call))), None


def _needs_more(seconds: list[float], number: int, min_samples: int, min_time: float,
                slow_call_s: float) -> bool:
    """Whether a system needs another sample."""
    if not seconds:
        return True
    if number == 1 and seconds[0] > slow_call_s:
        return False  # one slow call is enough
    if len(seconds) < min_samples:
        return True
    return len(seconds) < MAX_SAMPLES and sum(seconds) * number < min_time


def time_round_robin(runners: dict[str, Runner], *, min_samples: int, min_time: float,
                     slow_call_s: float, sample_s: float = SAMPLE_S) -> dict[str, dict[str, Any]]:
    """Median seconds per call of each runner, from samples taken round-robin.

    Returns per system: ``number`` (calls per sample), ``per_call_s`` (one entry
    per sample: its seconds over ``number``), ``median_s``, ``best_s``.
    """
    number: dict[str, int] = {}
    seconds: dict[str, list[float]] = {}
    for system, runner in runners.items():
        number[system], first = calibrate(runner, sample_s)
        seconds[system] = [] if first is None else [first]
        time.sleep(bench.SETTLE_S.get(system, 0.0))
    active = [s for s in runners
              if _needs_more(seconds[s], number[s], min_samples, min_time, slow_call_s)]
    rounds = 0
    while active:
        shift = rounds % len(active)
        rounds += 1
        for system in active[shift:] + active[:shift]:
            seconds[system].append(_batch(runners[system], number[system]) / number[system])
            time.sleep(bench.SETTLE_S.get(system, 0.0))
        active = [s for s in active
                  if _needs_more(seconds[s], number[s], min_samples, min_time, slow_call_s)]
    return {
        s: {"number": number[s], "per_call_s": seconds[s],
            "median_s": float(np.median(seconds[s])), "best_s": min(seconds[s])}
        for s in runners
    }


def measure(point: Point, inputs: Inputs, systems: Sequence[str], *, min_samples: int,
            min_time: float, slow_call_s: float,
            predicted_s: dict[str, float]) -> list[dict[str, Any]]:
    """All systems' rows for one point: warm-up and check, then the timed samples.

    ``predicted_s`` maps a system to its predicted seconds per call (from the
    previous size); a peer predicted slower than ``slow_call_s`` is skipped.
    """
    base = {"op": point.op, "layout": point.layout, "dtype": point.dtype,
            "size": point.size, "elements": inputs.elements,
            "shape": list(inputs.x.shape)}
    rows: dict[str, dict[str, Any]] = {}
    runners: dict[str, Runner] = {}
    refs: dict[str, Any] = {}
    for system in [s for s in CHECK_ORDER if s in systems]:
        row = dict(base, system=system)
        rows[system] = row
        guess = predicted_s.get(system)
        if system != "axisops" and guess is not None and guess > slow_call_s:
            row["skipped"] = f"too slow: about {guess:.1f} s per call predicted"
            continue
        t0 = time.perf_counter()
        try:
            runner = RUNNERS[system](point.op, inputs)
            result = _to_numpy(runner())
        except NotImplementedError as exc:
            row["skipped"] = f"n/a: {str(exc).splitlines()[0][:120]}"
            continue
        except Exception as exc:  # a failure is a result: reported, not raised
            row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            continue
        row["first_call_ms"] = (time.perf_counter() - t0) * 1e3
        if system == "axisops":
            settle_threads(runner)
        row["check"], row["checked_against"] = check_result(point, system, result, refs)
        if system in ("numpy", "torch"):
            refs[system] = result
        del result
        runners[system] = runner
        time.sleep(bench.SETTLE_S.get(system, 0.0))
    refs.clear()
    timings = time_round_robin(runners, min_samples=min_samples, min_time=min_time,
                               slow_call_s=slow_call_s)
    for system, timing in timings.items():
        row = rows[system]
        row["number"] = timing["number"]
        row["samples"] = len(timing["per_call_s"])
        row["times_ms"] = [t * 1e3 for t in timing["per_call_s"]]
        row["median_ms"] = timing["median_s"] * 1e3
        row["best_ms"] = timing["best_s"] * 1e3
        row["ns_per_element"] = timing["median_s"] * 1e9 / inputs.elements
    mine = rows.get("axisops", {})
    peers = {s: r["median_ms"] for s, r in rows.items() if s != "axisops" and "median_ms" in r}
    if "median_ms" in mine and peers:
        best_peer = min(peers, key=peers.get)
        mine["best_peer"] = best_peer
        mine["ratio_to_best_peer"] = mine["median_ms"] / peers[best_peer]
    return [rows[s] for s in SYSTEMS if s in rows]


def _log(stream, text: str) -> None:
    """A progress line to ``stream`` (nothing when it is ``None``)."""
    if stream is not None:
        print(text, file=stream, flush=True)


def _point_line(k: int, total: int, point: Point, rows: list[dict[str, Any]], elapsed: float) -> str:
    """One progress line: the point, each system's median, the ratio."""
    parts = []
    for row in rows:
        if "median_ms" in row:
            text = f"{row['system']} {_ms(row['median_ms'])} ms"
            if row.get("check") == "MISMATCH":
                text += " MISMATCH"
        elif "skipped" in row:
            text = f"{row['system']} {row['skipped'].split(':')[0]}"
        else:
            text = f"{row['system']} FAILED"
        parts.append(text)
    ratio = next((r["ratio_to_best_peer"] for r in rows if "ratio_to_best_peer" in r), None)
    tail = f"  -> {ratio:.2f}x" if ratio is not None else ""
    return (f"[{k}/{total} {elapsed:6.0f}s] {point.op} {point.case} {size_label(point.size)}: "
            + ", ".join(parts) + tail)


def run(
    points: Sequence[Point],
    *,
    systems: Sequence[str] | None = None,
    min_time: float = FULL_MIN_TIME,
    min_samples: int = MIN_SAMPLES,
    slow_call_s: float = SLOW_CALL_S,
    seed: int = 0,
    progress=sys.stderr,
) -> dict[str, Any]:
    """Measure every point on every available system; return the raw results.

    The result has ``meta`` (machine, versions, threads, load average, date, the
    sweep's sizes, dtypes and timing rules, per-operator notes) and
    ``results``: one row per (point, system) with ``op``, ``layout``,
    ``dtype``, ``size``, ``elements``, ``shape``, ``system`` and either
    ``median_ms``, ``best_ms``, ``times_ms`` (per call, one per sample),
    ``number`` (calls per sample), ``samples``, ``first_call_ms``,
    ``ns_per_element``, ``check`` (and on axisops rows ``ratio_to_best_peer``
    and ``best_peer``), or ``skipped`` (too slow, or n/a) or ``error``.
    """
    status = available_systems()
    wanted = list(SYSTEMS) if systems is None else list(systems)
    unknown = [s for s in wanted if s not in SYSTEMS]
    if unknown:
        raise ValueError(f"the sweep runs {', '.join(SYSTEMS)}; not {', '.join(unknown)}")
    skipped = {s: status[s] for s in wanted if status.get(s) is not None}
    usable = [s for s in SYSTEMS if s in wanted and status.get(s) is None]
    threads = thread_counts(usable)
    load_before = _load()
    for system, reason in skipped.items():
        _log(progress, f"skipping {system}: {reason}")
    _log(progress, f"sweep: {len(points)} points on {', '.join(usable)}; threads "
                   + ", ".join(f"{s}={threads[s]}" for s in usable)
                   + (f"; load average {load_before:.2f}" if load_before is not None else ""))
    if load_before is not None and load_before > 0.5:
        _log(progress, f"warning: the machine is busy (load average {load_before:.2f} on "
                       f"{core_count()} cores); threaded timings (axisops, torch) will be noisy: "
                       "a parallel region waits for a core")

    cache = InputCache(seed)
    last: dict[tuple[str, str, str, str], tuple[int, float]] = {}
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    for k, point in enumerate(points, 1):
        inputs = make_inputs(point, cache)
        predicted = {}
        for system in usable:
            seen = last.get((point.op, point.layout, point.dtype, system))
            if seen is not None:
                predicted[system] = seen[1] * inputs.elements / seen[0]
        point_rows = measure(point, inputs, usable, min_samples=min_samples, min_time=min_time,
                             slow_call_s=slow_call_s, predicted_s=predicted)
        del inputs
        for row in point_rows:
            if "median_ms" in row:
                last[(point.op, point.layout, point.dtype, row["system"])] = (
                    row["elements"], row["median_ms"] / 1e3)
        rows.extend(point_rows)
        _log(progress, _point_line(k, len(points), point, point_rows, time.perf_counter() - start))
    cache.reset(-1, "")

    sizes = sorted({p.size for p in points})
    ran = {p.op for p in points}
    ops = [op for op in OPS if op in ran]  # the table's order
    return {
        "meta": dict(
            machine_info(),
            versions=versions(),
            threads=threads,
            systems=usable,
            skipped_systems=skipped,
            sizes=sizes,
            dtypes=list(dict.fromkeys(p.dtype for p in points)),
            ops=ops,
            layouts={op: {name: SPECS[op].layouts[name].text
                          for name in dict.fromkeys(p.layout for p in points if p.op == op)}
                     for op in ops},
            notes={op: SPECS[op].note for op in ops if SPECS[op].note},
            coverage=coverage(points),
            min_time_s=min_time,
            min_samples=min_samples,
            sample_s=SAMPLE_S,
            slow_call_s=slow_call_s,
            seed=seed,
            load_average_before=load_before,
            load_average_after=_load(),
            date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        ),
        "results": rows,
    }


def coverage(points: Sequence[Point]) -> dict[str, dict[str, Any]]:
    """Per operator (in :data:`OPS` order), the sizes and dtypes its points have."""
    ran = {p.op for p in points}
    out: dict[str, dict[str, Any]] = {op: {"sizes": [], "dtypes": []} for op in OPS if op in ran}
    for p in points:
        entry = out[p.op]
        if p.size not in entry["sizes"]:
            entry["sizes"].append(p.size)
        if p.dtype not in entry["dtypes"]:
            entry["dtypes"].append(p.dtype)
    for entry in out.values():
        entry["sizes"].sort()
    return out


def coverage_text(meta: dict[str, Any]) -> str | None:
    """The operators whose sizes or dtypes are fewer than the run's, grouped, e.g.
    ``"max_pool: up to 8M, float32, int32"`` (``None`` where every operator ran
    everywhere, or for results written before the coverage was recorded)."""
    groups: dict[str, list[str]] = {}
    for op, entry in meta.get("coverage", {}).items():
        parts = []
        if entry["sizes"] != meta["sizes"]:
            low, high = entry["sizes"][0], entry["sizes"][-1]
            parts.append(f"up to {size_label(high)}" if low == meta["sizes"][0]
                         else f"{size_label(low)} to {size_label(high)}")
        if entry["dtypes"] != meta["dtypes"]:
            parts.append(" and ".join(entry["dtypes"]) + " only")
        if parts:
            groups.setdefault(", ".join(parts), []).append(op)
    if not groups:
        return None
    return "; ".join(f"{', '.join(ops)}: {text}" for text, ops in groups.items())


# --------------------------------------------------------------------------
# Summary


def ratios(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The axisops rows that have a ratio to the best peer."""
    return [r for r in data["results"]
            if r["system"] == "axisops" and r.get("ratio_to_best_peer") is not None]


def case_text(row: dict[str, Any]) -> str:
    """A row's case, e.g. ``"float64 tall-0 @1K vs numpy"``."""
    text = f"{row['dtype']} {row['layout']} @{size_label(row['size'])}"
    return text + (f" vs {row['best_peer']}" if row.get("best_peer") else "")


def summarize(data: dict[str, Any]) -> dict[str, dict[str, dict[str, Any] | None]]:
    """Per operator, the axisops rows with the worst ratio at about 1K elements
    (sizes up to :data:`SMALL_MAX`), the worst from 64K up (sizes from
    :data:`LARGE_MIN`), and the best anywhere (``None`` where no row qualifies)."""
    out: dict[str, dict[str, dict[str, Any] | None]] = {}
    rows = ratios(data)
    for op in data["meta"]["ops"]:
        mine = [r for r in rows if r["op"] == op]
        small = [r for r in mine if r["size"] <= SMALL_MAX]
        large = [r for r in mine if r["size"] >= LARGE_MIN]

        def pick(candidates, worst=True):
            if not candidates:
                return None
            key = lambda row: row["ratio_to_best_peer"]  # noqa: E731
            return max(candidates, key=key) if worst else min(candidates, key=key)

        out[op] = {"small_worst": pick(small), "large_worst": pick(large),
                   "best": pick(mine, worst=False)}
    return out


def worst_cases(data: dict[str, Any], count: int = WORST_COUNT) -> list[dict[str, Any]]:
    """The ``count`` axisops rows with the highest ratio to the best peer."""
    return sorted(ratios(data), key=lambda r: -r["ratio_to_best_peer"])[:count]


def problems(data: dict[str, Any]) -> list[str]:
    """One line per mismatch, failure, or peer skipped as too slow."""
    lines = []
    for r in data["results"]:
        where = f"{r['op']} {r['dtype']} {r['layout']} @{size_label(r['size'])}"
        if r.get("check") == "MISMATCH":
            lines.append(f"MISMATCH: {r['system']} on {where} "
                         f"(against {', '.join(r.get('checked_against', []))})")
        elif "error" in r:
            lines.append(f"FAILED: {r['system']} on {where}: {r['error']}")
        elif r.get("skipped", "").startswith("too slow"):
            lines.append(f"skipped {r['system']} on {where} ({r['skipped']})")
        elif r.get("samples") == 1:
            lines.append(f"{r['system']} on {where}: 1 call only ({_ms(r['median_ms'])} ms)")
    return lines


def _ratio(row: dict[str, Any] | None) -> str:
    """A summary cell: the row's ratio, or "-"."""
    return "-" if row is None else f"{row['ratio_to_best_peer']:.2f}x"


def _case(row: dict[str, Any] | None) -> str:
    """A summary cell: the row's case, or nothing."""
    return "" if row is None else case_text(row)


def header_lines(data: dict[str, Any]) -> list[str]:
    """What ran where: sizes, dtypes, timing, machine, versions, date, threads, load."""
    meta = data["meta"]
    sizes = ", ".join(size_label(s) for s in meta["sizes"])
    load = ""
    if meta.get("load_average_before") is not None and meta.get("load_average_after") is not None:
        load = (f"; load average {meta['load_average_before']:.2f} before, "
                f"{meta['load_average_after']:.2f} after")
    limits = coverage_text(meta)
    top = [s for s in meta["sizes"] if s > ALL_DTYPES_MAX_SIZE]
    if top:
        limits = (f"above {size_label(ALL_DTYPES_MAX_SIZE)} elements only "
                  + ("float32 and " if len(meta["dtypes"]) > 1 else "")
                  + f"the layouts {', '.join(TOP_LAYOUTS)}" + (f"; {limits}" if limits else ""))
    return [
        f"sizes {sizes} elements; dtypes {', '.join(meta['dtypes'])}; systems "
        f"{', '.join(meta['systems'])}",
    ] + ([f"coverage: {limits}"] if limits else []) + [
        f"timing: median per call of >= {meta['min_samples']} samples and >= "
        f"{meta['min_time_s']:g} s per system (a sample: back-to-back calls lasting about "
        f"{meta['sample_s'] * 1e3:g} ms), round-robin, after one untimed warm-up call; "
        f"peers slower than {meta['slow_call_s']:g} s per call skipped",
        f"machine: {cpu_text(meta)} ({meta['os']})",
        "versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items() if v),
        f"date: {meta['date']}" + (f"; took {meta['wall_s']:.0f} s" if meta.get("wall_s") else ""),
        "threads: " + ", ".join(f"{s} {n}" for s, n in meta["threads"].items()) + load,
    ]


_COLUMNS = ("operator", "~1K worst", "case", ">=64K worst", "case", "best", "case")


def summary_rows(data: dict[str, Any]) -> list[tuple[str, ...]]:
    """The summary table's cells, one row per operator."""
    rows = []
    for op, picks in summarize(data).items():
        rows.append((op, _ratio(picks["small_worst"]), _case(picks["small_worst"]),
                     _ratio(picks["large_worst"]), _case(picks["large_worst"]),
                     _ratio(picks["best"]), _case(picks["best"])))
    return rows


def format_table(data: dict[str, Any], worst: int = WORST_COUNT) -> str:
    """The summary as plain text: header, per-operator table, worst cases, problems, notes.

    A ratio is axisops' median time over the fastest peer's median time for the
    same point: below 1, axisops is faster.
    """
    rows = summary_rows(data)
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(_COLUMNS)]
    right = {1, 3, 5}

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    lines = ["axisops bench --sweep: axisops time / best peer time (median; < 1: axisops faster)"]
    lines += header_lines(data) + ["", fmt(_COLUMNS), fmt(["-" * w for w in widths])]
    lines += [fmt(r) for r in rows]
    lines += ["", f"worst {worst} cases overall:"]
    for r in worst_cases(data, worst):
        lines.append(f"  {r['ratio_to_best_peer']:6.2f}x  {r['op']} {case_text(r)} "
                     f"({_ms(r['median_ms'])} ms)")
    found = problems(data)
    if found:
        lines += ["", "problems and skips:"] + [f"  {line}" for line in found]
    lines += ["", "notes:"] + [f"  {op}: {note}" for op, note in data["meta"]["notes"].items()]
    for system, reason in data["meta"].get("skipped_systems", {}).items():
        lines.append(f"(skipped {system}: {reason})")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Markdown

START, END = "<!-- sweep:start -->", "<!-- sweep:end -->"


def markdown_section(data: dict[str, Any], *, image: str | None = None,
                     command: str = "python benchmarks/run.py --sweep",
                     worst: int = WORST_COUNT) -> str:
    """The sweep as a Markdown section between the sweep markers (markers included)."""
    meta = data["meta"]
    lines = [
        START,
        "## Size sweep",
        "",
        f"<!-- Written by `{command}` (`axisops bench --sweep`); do not edit by hand. -->",
        "",
        "Per operator: axisops' median time over the fastest peer's median time on the same "
        "point (operator, layout, dtype, size); below 1 means axisops is faster. *~1K worst*: "
        "the worst ratio at about 1K elements over all dtypes and layouts; *>=64K worst*: the "
        "worst from 64K elements up; *best*: the best anywhere.",
        "",
    ]
    lines += [f"* {line[0].upper()}{line[1:]}" for line in header_lines(data)]
    lines += ["* Layouts: " + "; ".join(
        f"{op}: " + ", ".join(f"`{k}` {v}" for k, v in layouts.items())
        for op, layouts in _distinct_layouts(meta).items())]
    lines += ["", "| " + " | ".join(_COLUMNS) + " |", "|---|---:|---|---:|---|---:|---|"]
    for cells in summary_rows(data):
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Worst {worst} cases overall:", ""]
    for r in worst_cases(data, worst):
        lines.append(f"1. {r['ratio_to_best_peer']:.2f}x: {r['op']} {case_text(r)} "
                     f"({_ms(r['median_ms'])} ms)")
    found = problems(data)
    if found:
        lines += ["", "Problems and skips:", ""] + [f"* {line}" for line in found]
    lines += ["", "Notes:", ""] + [f"* {op}: {note}" for op, note in meta["notes"].items()]
    if image:
        lines += ["", f"![Time per element against size, per operator]({image})"]
    lines.append(END)
    return "\n".join(lines)


def _distinct_layouts(meta: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Each distinct set of layouts once, labelled with the operators that use it."""
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for op, layouts in meta["layouts"].items():
        groups.setdefault(tuple(layouts.items()), []).append(op)
    return {", ".join(ops): dict(items) for items, ops in groups.items()}


def replace_section(text: str, section: str) -> str:
    """``text`` with the part between the sweep markers replaced by ``section``
    (which carries its own markers), or with ``section`` appended if the markers
    are missing.  Everything outside the markers is kept as it is."""
    if START in text and END in text.split(START, 1)[1]:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1]
        return head + section + tail
    return text.rstrip("\n") + "\n\n" + section + "\n"


def read_section(path: str) -> str | None:
    """The sweep section of the file at ``path`` (markers included), or ``None``."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    if START not in text or END not in text.split(START, 1)[1]:
        return None
    return START + text.split(START, 1)[1].split(END, 1)[0] + END


def write_markdown_section(data: dict[str, Any], path: str, *, image: str | None = None,
                           command: str = "python benchmarks/run.py --sweep") -> None:
    """Put the sweep section into the Markdown file at ``path`` (created if missing)."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    section = markdown_section(data, image=image, command=command)
    with open(path, "w") as f:
        f.write(replace_section(text, section) if text else section + "\n")


def write_json(data: dict[str, Any], path: str) -> None:
    """Write the raw results (``--json``)."""
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


# --------------------------------------------------------------------------
# Plot

COLORS = {"axisops": "#d62728", "numpy": "#1f77b4", "torch": "#ff7f0e", "bottleneck": "#2ca02c",
          "numbagg": "#9467bd"}


def _series(data: dict[str, Any], op: str, layout: str, dtype: str,
            system: str) -> tuple[list[int], list[float]]:
    """(elements, ns per element) of one case and system, sizes ascending."""
    points = sorted((r["elements"], r["ns_per_element"]) for r in data["results"]
                    if r["op"] == op and r["layout"] == layout and r["dtype"] == dtype
                    and r["system"] == system and "ns_per_element" in r)
    return [p[0] for p in points], [p[1] for p in points]


def plot(data: dict[str, Any], path: str, dtype: str = "float32") -> None:
    """Time per element against size, log-log: one panel per operator, one line per
    system for the operator's representative layout (thick), thin lines for its
    other layouts, all in ``dtype`` (the first dtype of the run if it lacks it).

    Raises ``ImportError`` with an explanation when matplotlib is missing.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError as exc:
        raise ImportError("--plot needs matplotlib, which is not installed "
                          "(pip install matplotlib, or pip install 'axisops[bench]')") from exc

    meta = data["meta"]
    if dtype not in meta["dtypes"]:
        dtype = meta["dtypes"][0]
    ops = meta["ops"]
    cols = min(6, len(ops))
    nrows = math.ceil(len(ops) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 3.0 * nrows + 1.2), squeeze=False)
    for ax, op in zip(axes.flat, ops):
        spec = SPECS[op]
        layouts = list(meta["layouts"].get(op, {}))
        main = spec.plot_layout if spec.plot_layout in layouts else (layouts[0] if layouts else "")
        for system in meta["systems"]:
            for layout in layouts:
                xs, ys = _series(data, op, layout, dtype, system)
                if not xs:
                    continue
                if layout == main:
                    ax.plot(xs, ys, color=COLORS[system], marker="o", markersize=3.5,
                            linewidth=2.2 if system == "axisops" else 1.6, zorder=3)
                else:
                    ax.plot(xs, ys, color=COLORS[system], linewidth=0.8, alpha=0.35, zorder=2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{op}   ({main})", fontsize=10)
        ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(ops):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("elements", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("ns / element", fontsize=8)
    handles = [Line2D([], [], color=COLORS[s], marker="o", linewidth=2, label=s)
               for s in meta["systems"]]
    handles.append(Line2D([], [], color="grey", linewidth=0.8, alpha=0.5,
                          label=f"thin: other layouts ({dtype})"))
    fig.legend(handles=handles, loc="upper right", ncol=len(handles), fontsize=10, frameon=False)
    fig.suptitle(f"axisops bench --sweep: median time per element, {dtype}, thick line = layout "
                 f"in brackets; {meta['cpu']} ({meta['cores']} cores), {meta['date'][:10]}",
                 x=0.01, ha="left", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / (3.0 * nrows + 1.2)))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------
# Command line (called by axisops.cli for ``axisops bench --sweep``)


def parse_sizes(names: Sequence[str]) -> list[int]:
    """``["1e3", "65536", "64K"]`` -> ``[1000, 65536, 65536]``; ``ValueError`` if one is bad."""
    sizes = []
    for name in names:
        text = name.strip().upper()
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        if scale > 1:
            text = text[:-1]
        try:
            value = float(text) * scale
        except ValueError:
            raise ValueError(f"expected sizes like 1e3,64K,1e6, got {name!r}") from None
        if not value >= ELEMENT_MULTIPLE or value != int(value):
            raise ValueError(f"a size must be a whole number >= {ELEMENT_MULTIPLE}, got {name!r}")
        sizes.append(int(value))
    return sizes


def _choose(given: Sequence[str] | None, known: Sequence[str], what: str) -> list[str] | None:
    """``given`` checked against ``known`` (``ValueError`` naming the unknown ones)."""
    if not given:
        return None
    unknown = [g for g in given if g not in known]
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(unknown)}; expected some of: {', '.join(known)}")
    return list(given)


def cli(args, parser, argv: Sequence[str]) -> int:
    """``axisops bench --sweep [--quick] [--ops] [--systems] [--json] [--plot] [--markdown]``."""
    import importlib.util

    if args.plot and importlib.util.find_spec("matplotlib") is None:
        parser.exit(1, "axisops bench: --plot needs matplotlib, which is not installed "
                       "(pip install matplotlib)\n")
    try:
        ops = _choose(args.ops, OPS, "operator(s)") or list(OPS)
        systems = _choose(args.systems, SYSTEMS, "system(s) for the sweep")
        dtypes = _choose(args.sweep_dtypes, ("float32", "float64", "int32"), "dtype(s)")
        layouts = _choose(args.sweep_layouts, LAYOUT_NAMES, "layout(s)")
        sizes = parse_sizes(args.sweep_sizes) if args.sweep_sizes else None
    except ValueError as exc:
        parser.exit(2, f"axisops bench --sweep: {exc}\n")
    quick = bool(args.quick)
    points = plan(ops, sizes or (QUICK_SIZES if quick else FULL_SIZES),
                  dtypes or (QUICK_DTYPES if quick else FULL_DTYPES), layouts, quick=quick)
    min_time = args.min_time
    if min_time is None:
        min_time = QUICK_MIN_TIME if quick else FULL_MIN_TIME

    start = time.perf_counter()
    data = run(points, systems=systems, min_time=min_time, min_samples=args.repeat or MIN_SAMPLES,
               seed=args.seed, progress=sys.stderr)
    data["meta"]["wall_s"] = round(time.perf_counter() - start, 2)
    data["meta"]["command"] = "axisops " + " ".join(argv)
    print(format_table(data), flush=True)
    print(f"(took {data['meta']['wall_s']:.1f} s)", flush=True)
    if args.json:
        write_json(data, args.json)
        print(f"wrote {args.json}")
    if args.plot:
        plot(data, args.plot)
        print(f"wrote {args.plot}")
    if args.markdown:
        image = None
        if args.plot:
            where = os.path.dirname(os.path.abspath(args.markdown))
            image = os.path.relpath(os.path.abspath(args.plot), where).replace(os.sep, "/")
        write_markdown_section(data, args.markdown, image=image, command=data["meta"]["command"])
        print(f"wrote the sweep section of {args.markdown}")
    failed = [r for r in data["results"] if "error" in r or r.get("check") == "MISMATCH"]
    return 1 if failed else 0

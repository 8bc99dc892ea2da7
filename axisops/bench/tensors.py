"""``axisops bench --torch``: axisops on PyTorch tensors against PyTorch's own operators.

Two tables:

* **Forward and forward+backward** on large float32 CPU tensors: cummax, take_along_axis
  (``torch.gather``), scatter add (``Tensor.scatter_add``), unfold and fold
  (``torch.nn.functional``), and a convolution written as ``unfold`` and a matrix
  product, whose backward is a ``fold``. Each system's time is the median of its
  timed calls, taken round-robin after one untimed warm-up call; *ratio* is
  axisops' time over PyTorch's (below 1: axisops is faster). The forward+backward
  time is one forward and one ``backward`` with a fixed upstream gradient.
* **Per-call overhead on small tensors**: the same call on a (16, 64) float32
  tensor through the tensor path (``axisops.<op>(tensor)``: dispatch and zero-copy
  views; through the registered operator and autograd when the tensor requires
  grad), on the NumPy array of the same memory (``axisops.<op>(array)``), and
  PyTorch's own operator. *overhead* is the tensor path's time minus the NumPy
  path's.

GB/s counts each forward's bytes read and written once. The machine, versions and
thread counts head the Markdown report (``--markdown FILE``; ``python
benchmarks/run.py --torch`` writes ``benchmarks/torch.md``, which the performance
page includes).
"""
from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .systems import core_count, machine_info, report_preamble, versions

#: Shapes of the large workloads: full run and --quick.
FULL = {"array": (64, 512, 1024), "image": (8, 64, 56, 56)}
QUICK = {"array": (16, 256, 512), "image": (2, 32, 28, 28)}
SMALL = (16, 64)


@dataclass
class Pair:
    """One workload: a forward for each system, and the bytes one forward moves."""

    name: str
    axisops: Callable[..., Any]
    torch: Callable[..., Any]
    inputs: Callable[[], tuple]
    nbytes: int


def _workloads(shapes: dict) -> list[Pair]:
    import torch
    import torch.nn.functional as F

    import axisops

    gen = torch.Generator().manual_seed(0)
    shape = shapes["array"]
    n = shape[1]
    x = torch.randn(shape, generator=gen)
    idx = torch.randint(0, n, shape, generator=gen)
    img = torch.randn(shapes["image"], generator=gen)
    c = shapes["image"][1]
    w = torch.randn(c, c * 9, generator=gen) / (c * 9) ** 0.5
    size = x.numel() * 4
    cols_bytes = img.numel() * 4 * 10
    spatial = shapes["image"][2:]

    def conv(unfold):
        def run(a, weights):
            cols = unfold(a)
            return (weights @ cols).reshape(a.shape)
        return run

    ours_unfold = conv(lambda a: axisops.unfold(a, 3, padding=1))
    torch_unfold = conv(lambda a: F.unfold(a, 3, padding=1))
    cols = F.unfold(img, 3, padding=1)
    return [
        Pair("cummax axis=1", lambda a: axisops.cummax(a, 1).values,
             lambda a: torch.cummax(a, 1).values, lambda: (x,), 2 * size + size * 2),
        Pair("take_along_axis axis=1", lambda a: axisops.take_along_axis(a, idx, 1),
             lambda a: torch.gather(a, 1, idx), lambda: (x,), 2 * size + size * 2),
        Pair("scatter add axis=1", lambda a, s: axisops.scatter(a, idx, s, 1, reduce="add"),
             lambda a, s: a.scatter_add(1, idx, s), lambda: (x, x.flip(0).contiguous()),
             3 * size + size * 2),
        Pair("unfold 3x3", lambda a: axisops.unfold(a, 3, padding=1),
             lambda a: F.unfold(a, 3, padding=1), lambda: (img,), cols_bytes),
        Pair("fold 3x3", lambda a: axisops.fold(a, spatial, 3, padding=1),
             lambda a: F.fold(a, spatial, 3, padding=1), lambda: (cols,), cols_bytes),
        Pair("conv 3x3 (unfold + matmul)", ours_unfold, torch_unfold, lambda: (img, w),
             cols_bytes),
    ]


def _time(calls: dict[str, Callable[[], Any]], repeat: int, min_time: float) -> dict[str, float]:
    """Median seconds per call of each system, round-robin after a warm-up call each."""
    for call in calls.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    start = time.perf_counter()
    while (min(len(t) for t in times.values()) < repeat
           or (time.perf_counter() - start < min_time and min(map(len, times.values())) < 200)):
        for name, call in calls.items():
            t0 = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def _forward_backward(fn, inputs):
    """A call running fn forward and backward (upstream gradient fixed) on copies of
    the float inputs that require grad."""
    import torch

    leaves = [a.detach().clone().requires_grad_(a.is_floating_point()) for a in inputs]
    g = torch.randn_like(fn(*[a.detach() for a in inputs]))

    def run():
        for a in leaves:
            a.grad = None
        fn(*leaves).backward(g)

    return run


def run(quick: bool = False, repeat: int | None = None, min_time: float | None = None,
        progress=None) -> dict[str, Any]:
    """Both tables' rows, and the metadata of the machine."""
    import torch

    import axisops

    torch.set_num_threads(core_count())
    repeat = repeat or (3 if quick else 7)
    min_time = (0.2 if quick else 1.0) if min_time is None else min_time
    rows = []
    for pair in _workloads(QUICK if quick else FULL):
        inputs = pair.inputs()
        for mode in ("forward", "forward+backward"):
            calls: dict[str, Callable[[], Any]]
            if mode == "forward":
                calls = {"axisops": functools.partial(pair.axisops, *inputs),
                         "torch": functools.partial(pair.torch, *inputs)}
            else:
                calls = {"axisops": _forward_backward(pair.axisops, inputs),
                         "torch": _forward_backward(pair.torch, inputs)}
            medians = _time(calls, repeat, min_time)
            rows.append({"workload": pair.name, "mode": mode,
                         "axisops_ms": medians["axisops"] * 1e3,
                         "torch_ms": medians["torch"] * 1e3,
                         "ratio": medians["axisops"] / medians["torch"],
                         "axisops_gb_s": pair.nbytes / medians["axisops"] / 1e9
                         if mode == "forward" else None})
            if progress:
                print(f"{pair.name:<28} {mode:<17} axisops {rows[-1]['axisops_ms']:8.3f} ms  "
                      f"torch {rows[-1]['torch_ms']:8.3f} ms", file=progress, flush=True)

    small = torch.randn(SMALL, generator=torch.Generator().manual_seed(1))
    array = small.numpy()
    small_idx = torch.randint(0, SMALL[1], SMALL, generator=torch.Generator().manual_seed(2))
    idx_array = small_idx.numpy()
    small_grad = small.clone().requires_grad_()
    overhead_calls = {
        "sum axis=1, requires grad": (lambda: axisops.sum(small_grad, axis=1),
                                      lambda: axisops.sum(array, axis=1),
                                      lambda: torch.sum(small_grad, 1)),
        "sum axis=1": (lambda: axisops.sum(small, axis=1), lambda: axisops.sum(array, axis=1),
                       lambda: torch.sum(small, 1)),
        "cummax axis=1": (lambda: axisops.cummax(small, 1), lambda: axisops.cummax(array, 1),
                          lambda: torch.cummax(small, 1)),
        "take_along_axis axis=1": (lambda: axisops.take_along_axis(small, small_idx, 1),
                                   lambda: axisops.take_along_axis(array, idx_array, 1),
                                   lambda: torch.gather(small, 1, small_idx)),
    }
    overhead = []
    for name, (tensor_path, numpy_path, peer) in overhead_calls.items():
        medians = _time({"tensor": tensor_path, "numpy": numpy_path, "torch": peer},
                        repeat=200 if not quick else 50, min_time=min_time)
        overhead.append({"call": name, "tensor_us": medians["tensor"] * 1e6,
                         "numpy_us": medians["numpy"] * 1e6, "torch_us": medians["torch"] * 1e6,
                         "overhead_us": (medians["tensor"] - medians["numpy"]) * 1e6})
    return {"meta": {"machine": machine_info(), "versions": versions(),
                     "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     "threads": torch.get_num_threads(), "quick": quick,
                     "shapes": QUICK if quick else FULL},
            "rows": rows, "overhead": overhead}


def format_tables(data: dict[str, Any]) -> str:
    """Both tables as Markdown."""
    lines = ["| workload | mode | axisops ms | torch ms | axisops / torch | axisops GB/s |",
             "|---|---|---:|---:|---:|---:|"]
    for r in data["rows"]:
        gb = "" if r["axisops_gb_s"] is None else f"{r['axisops_gb_s']:.2f}"
        lines.append(f"| {r['workload']} | {r['mode']} | {r['axisops_ms']:.3g} | "
                     f"{r['torch_ms']:.3g} | {r['ratio']:.2f}x | {gb} |")
    lines += ["", f"Per call on a {SMALL[0]} x {SMALL[1]} float32 tensor (median):", "",
              "| call | tensor path us | NumPy path us | overhead us | torch us |",
              "|---|---:|---:|---:|---:|"]
    for r in data["overhead"]:
        lines.append(f"| {r['call']} | {r['tensor_us']:.1f} | {r['numpy_us']:.1f} | "
                     f"{r['overhead_us']:.1f} | {r['torch_us']:.1f} |")
    return "\n".join(lines)


def write_markdown(data: dict[str, Any], path: str, command: str) -> None:
    meta = data["meta"]
    text = [
        *report_preamble("axisops on PyTorch tensors", command, meta),
        f"* Threads: torch {meta['threads']}, axisops {meta['threads']}",
        f"* Shapes (float32): arrays {meta['shapes']['array']}, images {meta['shapes']['image']}"
        " (unfold, fold and the convolution: 3x3 windows, padding 1)",
        "* Time: median of the timed calls, round-robin after one warm-up call per system; "
        "forward+backward runs one forward and one backward with a fixed upstream gradient",
        "",
        format_tables(data),
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(text))

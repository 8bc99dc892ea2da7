"""``axisops bench --device cuda``: axisops on CUDA tensors against PyTorch CUDA
(and CuPy when it is installed), with GB/s and the fraction of the GPU's measured
copy bandwidth.

Inputs are PyTorch CUDA tensors (axisops gives tensors back on the same stream);
CuPy gets a zero-copy view of the same memory. Each system's times are medians
of ``--repeat`` timed calls, after one untimed warm-up call, round-robin in
alternating order: the device's (CUDA events around the call) and the host's (the
wall clock of the call and a synchronisation: a warm call as its caller waits
for it, Python, launches and allocations included; issue 40's "host time").
Bytes are those read once plus those written (indices included); the fractions
are of the measured device-to-device copy rate (:func:`copy_bandwidth`, what a
kernel that reads and writes once can reach), beside the device's peak (memory
clock x bus width x 2, from Numba's device attributes).

Workloads (float32): sum, max and argmax along the strided axis 0 and the
contiguous axis 1 of a 256 MiB (16384, 4096) matrix and of a small (64, 512)
one; mean along axis 1; cumsum along axis 0 and 1; cummax along axis 0 (a
non-last axis), along one long row of 64M elements, and cumsum along dim 0 of a
(1M, 2) tensor (pytorch#122170); take of rows and of columns, take_along_axis along
both axes (int64 indices), scatter add of (64K, 1K) updates into (4K, 1K) with
shared row indices (embedding style) and with indices per element, against
PyTorch's atomic ``scatter_add`` and its deterministic mode; unfold and fold 3x3
of a (16, 64, 64, 64) batch, and a 3x3 convolution's backward written with them,
against PyTorch's unfold/fold and cuDNN. ``--quick`` divides the large sizes by 16; ``--dry`` makes tiny ones on the CPU.

>>> rows = [{"workload": "sum axis=0", "shape": (4, 8), "bytes": 160, "axisops_s": 1e-6,
...          "axisops_host_s": 9e-6, "peers": {"torch": 2e-6}, "peers_host": {"torch": 8e-6}}]
>>> meta = {"gpu": "X", "bandwidth": 3e12, "copy_bandwidth": 1e12}
>>> print(format_table({"meta": meta, "rows": rows}).splitlines()[2])
| sum axis=0 | (4, 8) | 1.0 | 9.0 | 0.16 | 0.0% | torch 2.0 / 8.0 us (0.50x) |
"""
from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from .systems import machine_info, report_preamble, versions


class NoGPU(RuntimeError):
    """No CUDA GPU, or no PyTorch with CUDA, to run the device bench on."""


def _check_gpu():
    try:
        import torch
    except ImportError as e:
        raise NoGPU("the CUDA bench needs PyTorch with CUDA (pip install torch with CUDA)") from e
    if not torch.cuda.is_available():
        raise NoGPU("no CUDA GPU is available to PyTorch (torch.cuda.is_available() is False)")
    from numba import config, cuda

    if getattr(config, "ENABLE_CUDASIM", False) or not cuda.is_available():
        raise NoGPU("Numba sees no CUDA GPU (or NUMBA_ENABLE_CUDASIM is set)")
    return torch


def peak_bandwidth() -> float:
    """The current device's peak memory bandwidth in bytes per second."""
    from numba import cuda

    dev = cuda.get_current_device()
    return 2.0 * dev.MEMORY_CLOCK_RATE * 1e3 * dev.GLOBAL_MEMORY_BUS_WIDTH / 8


def _reduce_scan_workloads(torch, quick: bool, device: str = "cuda", tiny: bool = False):
    import axisops

    big = (16384 // (4 if quick else 1), 4096 // (4 if quick else 1))
    long_row = (1, (1 << 26) // (16 if quick else 1))
    tall = ((1 << 20) // (16 if quick else 1), 2)
    if tiny:
        big, long_row, tall = (256, 64), (1, 4096), (1024, 2)
    gen = torch.Generator(device=device).manual_seed(0)

    def data(shape):
        return torch.randn(shape, device=device, generator=gen, dtype=torch.float32)

    out: list[dict[str, Any]] = []

    def add(name, shape, ours, theirs, cupy_fn=None, out_bytes=None):
        x = data(shape)
        written = out_bytes(x) if out_bytes else 0
        peers = {"torch": (lambda f, x=x: (lambda: f(x)))(theirs)}
        cupy_call = _cupy_call(cupy_fn, x)
        if cupy_call is not None:
            peers["cupy"] = cupy_call
        out.append(_row(name, shape, x.numel() * 4 + written,
                        (lambda f, x=x: (lambda: f(x)))(ours), peers))

    for shape in (big, (64, 512)):
        for axis in (0, 1):
            out_elems = shape[1 - axis]
            add(f"sum axis={axis}", shape, lambda x, a=axis: axisops.sum(x, axis=a),
                lambda x, a=axis: torch.sum(x, dim=a), ("sum", axis),
                lambda x, n=out_elems: n * 4)
            add(f"max axis={axis}", shape, lambda x, a=axis: axisops.max(x, axis=a),
                lambda x, a=axis: torch.amax(x, dim=a), ("max", axis),
                lambda x, n=out_elems: n * 4)
            add(f"argmax axis={axis}", shape, lambda x, a=axis: axisops.argmax(x, axis=a),
                lambda x, a=axis: torch.argmax(x, dim=a), ("argmax", axis),
                lambda x, n=out_elems: n * 8)
    add("mean axis=1", big, lambda x: axisops.mean(x, axis=1), lambda x: torch.mean(x, dim=1),
        ("mean", 1), lambda x: x.shape[0] * 4)
    for axis in (0, 1):
        add(f"cumsum axis={axis}", big, lambda x, a=axis: axisops.cumsum(x, axis=a),
            lambda x, a=axis: torch.cumsum(x, dim=a), ("cumsum", axis), lambda x: x.numel() * 4)
    add("cummax axis=0", big, lambda x: axisops.cummax(x, axis=0),
        lambda x: torch.cummax(x, dim=0), None, lambda x: x.numel() * 12)
    add("cummax one long row", long_row, lambda x: axisops.cummax(x, axis=1),
        lambda x: torch.cummax(x, dim=1), None, lambda x: x.numel() * 12)
    add("cumsum axis=0 of (N, 2)", tall, lambda x: axisops.cumsum(x, axis=0),
        lambda x: torch.cumsum(x, dim=0), ("cumsum", 0), lambda x: x.numel() * 4)
    return out


def _gather_workloads(torch, quick: bool, device: str = "cuda", tiny: bool = False):
    """take, take_along_axis and scatter add at 256 MiB (``--quick``: 16 MiB), each
    made when the bench reaches it."""
    import axisops

    rows, cols = (16384 // 4, 4096 // 4) if quick else (16384, 4096)
    if tiny:
        rows, cols = 256, 64
    gen = torch.Generator(device=device).manual_seed(1)
    x = torch.randn((rows, cols), device=device, generator=gen)

    def ints(high, shape):
        return torch.randint(0, high, shape, device=device, generator=gen)

    for axis in (0, 1):
        idx = ints(x.shape[axis], (x.shape[axis] // 2,))
        moved = idx.numel() * x.numel() // x.shape[axis]
        yield _row(f"take {'rows' if axis == 0 else 'columns'} (axis={axis})", (rows, cols),
                   moved * 8 + idx.numel() * 8,
                   lambda a=axis, i=idx: axisops.take(x, i, axis=a),
                   {"torch": lambda a=axis, i=idx: torch.index_select(x, a, i),
                    **_cupy("take", x, idx, axis)})
    for axis in (1, 0):
        idx = ints(x.shape[axis], x.shape)
        yield _row(f"take_along_axis axis={axis}", (rows, cols), x.numel() * (4 + 8 + 4),
                   lambda a=axis, i=idx: axisops.take_along_axis(x, i, axis=a),
                   {"torch": lambda a=axis, i=idx: torch.gather(x, a, i),
                    **_cupy("take_along_axis", x, idx, axis)})
    # scatter add of (N, D) updates into (V, D): embedding-style shared row indices
    # (an expanded (N, 1) tensor), then independent indices per element
    n, d, v = (rows * 4, cols // 4, rows // 4)
    upd = torch.randn((n, d), device=device, generator=gen)
    target = torch.zeros((v, d), device=device)
    for label, index in (("shared rows", ints(v, (n, 1)).expand(n, d)),
                         ("per element", ints(v, (n, d)))):
        bytes_ = upd.numel() * 4 + (index.numel() if label == "per element" else n) * 8 \
            + target.numel() * 8
        yield _row(f"scatter add, {label}", (n, d), bytes_,
                   lambda i=index: axisops.scatter(target, i, upd, 0, reduce="add"), {
                       "torch": lambda i=index: target.scatter_add(0, i, upd),
                       "torch deterministic": _deterministic(
                           torch, lambda i=index: target.scatter_add(0, i, upd))})


def _window_workloads(torch, quick: bool, device: str = "cuda", tiny: bool = False):
    """unfold and fold 3x3 (padding 1) of a (16, 64, 64, 64) float32 batch, and a
    3x3 convolution's backward (weight and input gradients) written with them,
    against PyTorch's unfold/fold and its cuDNN backward."""
    import torch.nn.functional as F

    import axisops

    batch = 4 if quick else 16
    c, side = 64, 64  # channels, image side
    if tiny:
        batch, c, side = 1, 8, 16
    gen = torch.Generator(device=device).manual_seed(2)
    shape = (batch, c, side, side)
    x = torch.randn(shape, device=device, generator=gen)
    cols = torch.randn((batch, c * 9, side * side), device=device, generator=gen)
    yield _row("unfold 3x3", shape, x.numel() * 4 + cols.numel() * 4,
               lambda: axisops.unfold(x, 3, padding=1),
               {"torch": lambda: F.unfold(x, 3, padding=1)})
    yield _row("fold 3x3", tuple(cols.shape), x.numel() * 4 + cols.numel() * 4,
               lambda: axisops.fold(cols, (side, side), 3, padding=1),
               {"torch": lambda: F.fold(cols, (side, side), 3, padding=1)})
    weight = torch.randn((c, c, 3, 3), device=device, generator=gen)
    g = torch.randn(shape, device=device, generator=gen)

    def backward(unfold, fold):  # im2col: dx = fold(W^T . g), dW = g . cols^T
        gm = g.reshape(batch, c, -1)
        grad_x = fold(torch.matmul(weight.reshape(c, -1).t(), gm))
        grad_w = torch.matmul(gm, unfold(x).transpose(1, 2)).sum(0).reshape(weight.shape)
        return grad_x, grad_w

    def cudnn():  # (dx, dW), as convolution_backward orders them
        return torch.ops.aten.convolution_backward(g, x, weight, None, [1, 1], [1, 1], [1, 1],
                                                   False, [0, 0], 1, [True, True, False])[:2]

    yield _row("conv 3x3 backward (dx, dW)", shape, 3 * x.numel() * 4 + weight.numel() * 4,
               lambda: backward(lambda a: axisops.unfold(a, 3, padding=1),
                                lambda k: axisops.fold(k, (side, side), 3, padding=1)),
               {"torch unfold/fold": lambda: backward(lambda a: F.unfold(a, 3, padding=1),
                                                      lambda k: F.fold(k, (side, side), 3,
                                                                       padding=1)),
                "torch cuDNN": cudnn})


def _order_workloads(torch, quick: bool, device: str = "cuda", tiny: bool = False):
    """The order statistics against ``torch.sort``, ``torch.topk``, ``torch.kthvalue``,
    ``torch.median`` and ``torch.quantile`` (the contract's peers on the GPU)."""
    import axisops

    rows = (4096 // (4 if quick else 1), 4096 // (4 if quick else 1))
    vector = ((1 << 23) // (16 if quick else 1),)  # torch.quantile stops at 2^24
    if tiny:
        rows, vector = (64, 128), (4096,)
    gen = torch.Generator(device=device).manual_seed(0)
    out: list[dict[str, Any]] = []

    def add(name, shape, ours, theirs, written):
        x = torch.randn(shape, device=device, generator=gen, dtype=torch.float32)
        out.append(_row(name, shape, x.numel() * 4 + written(x),
                        (lambda f, x=x: (lambda: f(x)))(ours),
                        {"torch": (lambda f, x=x: (lambda: f(x)))(theirs)}))

    add("sort axis=1", rows, lambda x: axisops.sort(x, axis=1),
        lambda x: torch.sort(x, dim=1, stable=True).values, lambda x: x.numel() * 4)
    add("argsort axis=1", rows, lambda x: axisops.argsort(x, axis=1),
        lambda x: torch.argsort(x, dim=1, stable=True), lambda x: x.numel() * 8)
    add("top_k k=16 axis=1", rows, lambda x: axisops.top_k(x, 16, axis=1),
        lambda x: torch.topk(x, 16, dim=1), lambda x: x.shape[0] * 16 * 12)
    add("kthvalue k=100 axis=1", rows, lambda x: axisops.kthvalue(x, 100, axis=1),
        lambda x: torch.kthvalue(x, 100, dim=1), lambda x: x.shape[0] * 12)
    add("median axis=1", rows, lambda x: axisops.median(x, axis=1),
        lambda x: torch.quantile(x, 0.5, dim=1), lambda x: x.shape[0] * 4)
    add("quantile q=0.9 axis=0", rows, lambda x: axisops.quantile(x, 0.9, axis=0),
        lambda x: torch.quantile(x, 0.9, dim=0), lambda x: x.shape[1] * 4)
    add("top_k k=16 of a vector", vector, lambda x: axisops.top_k(x, 16),
        lambda x: torch.topk(x, 16), lambda x: 16 * 12)
    add("median of a vector", vector, lambda x: axisops.median(x),
        lambda x: torch.quantile(x, 0.5), lambda x: 4)  # torch.median: the lower middle
    return out


def workloads(torch, quick: bool, device: str = "cuda", tiny: bool = False):
    """Every workload, made one at a time on *device* (``"cpu"`` in the tests and the
    dry run, which call each at *tiny* sizes: the bench's own code is checked without
    a GPU)."""
    return itertools.chain(_reduce_scan_workloads(torch, quick, device, tiny),
                           _gather_workloads(torch, quick, device, tiny),
                           _window_workloads(torch, quick, device, tiny),
                           _order_workloads(torch, quick, device, tiny))


def _row(name, shape, bytes_, ours, peers) -> dict[str, Any]:
    return {"workload": name, "shape": shape, "bytes": bytes_, "axisops": ours,
            "peers": {k: f for k, f in peers.items() if f is not None}}


def _cupy(name: str, x, indices, axis: int) -> dict[str, Callable[[], Any]]:
    """{"cupy": CuPy's *name* on zero-copy views of the tensors} when CuPy is
    installed, else {}."""
    try:
        import cupy
    except ImportError:
        return {}
    fn, c, i = getattr(cupy, name), cupy.asarray(x), cupy.asarray(indices)
    return {"cupy": lambda: fn(c, i, axis=axis)}


def _deterministic(torch, f):
    """*f* under ``torch.use_deterministic_algorithms(True)``; None when PyTorch has
    no deterministic version of it (it raises)."""
    def call():
        was = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            return f()
        finally:
            torch.use_deterministic_algorithms(was)

    try:
        call()
    except RuntimeError:
        return None
    return call


def _cupy_call(spec, x) -> Callable[[], Any] | None:
    if spec is None:
        return None
    try:
        import cupy
    except ImportError:
        return None
    name, axis = spec
    c = cupy.asarray(x)
    fn = getattr(cupy, name)
    return lambda: fn(c, axis=axis)


def _round_robin(calls: dict[str, Callable[[], Any]], repeat: int,
                 seconds: Callable[[Callable[[], Any]], tuple[float, float]]
                 ) -> dict[str, tuple[float, float]]:
    """Each call's medians of *repeat* timings ``seconds(call) -> (device, host)``,
    taken round-robin in alternating order after one untimed warm-up call each."""
    for f in calls.values():
        f()
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in calls}
    names = list(calls)
    for r in range(repeat):
        for name in names if r % 2 == 0 else names[::-1]:
            times[name].append(seconds(calls[name]))
    return {k: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v))
            for k, v in times.items()}


def _time(torch, calls: dict[str, Callable[[], Any]], repeat: int
          ) -> dict[str, tuple[float, float]]:
    """:func:`_round_robin` of (the device's time between CUDA events around the
    call, the host's wall-clock time of the call and a synchronisation): the second
    is what a caller waits for a warm call, launches and Python included."""
    import time

    def seconds(call):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        begin = time.perf_counter()
        start.record()
        call()
        stop.record()
        stop.synchronize()
        host = time.perf_counter() - begin
        return start.elapsed_time(stop) / 1e3, host

    return _round_robin(calls, repeat, seconds)


def _time_on_cpu(torch, calls: dict[str, Callable[[], Any]], repeat: int
                 ) -> dict[str, tuple[float, float]]:
    """:func:`_round_robin` with the wall clock for both (the dry run's CPU calls)."""
    import time

    def seconds(call):
        start = time.perf_counter()
        call()
        t = time.perf_counter() - start
        return t, t

    return _round_robin(calls, repeat, seconds)


def copy_bandwidth(torch, quick: bool = False, repeat: int = 10) -> float:
    """The device's measured device-to-device copy rate, bytes read and written per
    second (``dst.copy_(src)`` of 256 MiB, 16 MiB with *quick*; median of *repeat*):
    the bandwidth a kernel that reads and writes once can reach, against which the
    table's fractions are taken (the peak from the memory clock is not reachable)."""
    n = (1 << 22 if quick else 1 << 26)
    src = torch.empty(n, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    medians = _time(torch, {"copy": lambda: dst.copy_(src)}, repeat)
    return 2 * 4 * n / medians["copy"][0]


def run(quick: bool = False, repeat: int | None = None, progress=None,
        dry: bool = False) -> dict[str, Any]:
    """Every workload's median times on the current CUDA device.

    *dry* makes the workloads at tiny sizes on the CPU instead and times them there
    (median of 3): the bench's own code, table and report checked without
    a GPU (``benchmarks/gpu_check.sh`` with ``GPU_CHECK_DRY=1``, which CI runs)."""
    if dry:
        import torch

        quick, device, timer = True, "cpu", _time_on_cpu
        repeat = repeat or 3
    else:
        torch = _check_gpu()
        device, timer = "cuda", _time
        repeat = repeat or (5 if quick else 20)
    rows = []
    for w in workloads(torch, quick, device, tiny=dry):
        calls = {"axisops": w["axisops"], **w["peers"]}
        try:
            medians = timer(torch, calls, repeat)
        except Exception as exc:  # one failing workload must not lose the others' rows
            rows.append({"workload": w["workload"], "shape": w["shape"], "bytes": w["bytes"],
                         "error": f"{type(exc).__name__}: {exc}"})
            if progress:
                print(f"{w['workload']:<26} {w['shape']}  ERROR {rows[-1]['error']}",
                      file=progress, flush=True)
            continue
        ours = medians.pop("axisops")
        rows.append({"workload": w["workload"], "shape": w["shape"], "bytes": w["bytes"],
                     "axisops_s": ours[0], "axisops_host_s": ours[1],
                     "peers": {k: v[0] for k, v in medians.items()},
                     "peers_host": {k: v[1] for k, v in medians.items()}})
        if progress:
            print(f"{w['workload']:<26} {w['shape']}  axisops {ours[0] * 1e6:9.1f} us "
                  f"(host {ours[1] * 1e6:.1f})  "
                  + "  ".join(f"{k} {v[0] * 1e6:9.1f} us (host {v[1] * 1e6:.1f})"
                              for k, v in medians.items()),
                  file=progress, flush=True)
    if dry:
        gpu, bandwidth, copy, cuda_version = "dry run (CPU tensors, no GPU)", None, None, None
    else:
        gpu = torch.cuda.get_device_properties(0).name
        bandwidth, cuda_version = peak_bandwidth(), torch.version.cuda
        copy = copy_bandwidth(torch, quick)
    return {"meta": {"gpu": gpu, "bandwidth": bandwidth, "copy_bandwidth": copy,
                     "repeat": repeat,
                     "quick": quick, "dry": dry, "machine": machine_info(),
                     "versions": versions(), "torch_cuda": cuda_version,
                     "date": datetime.now(timezone.utc).isoformat(timespec="seconds")},
            "rows": rows}


def format_table(data: dict[str, Any]) -> str:
    """The bench's table: axisops's device time (CUDA events) and host time (a warm
    call and a synchronisation), its rate and the fraction of the measured copy
    bandwidth (of the peak where no copy was measured), and each peer's times."""
    meta = data["meta"]
    copy = meta.get("copy_bandwidth")
    reference = copy or meta.get("bandwidth")
    of = "of copy" if copy else "of peak"
    lines = [f"| workload | shape | axisops us | host us | axisops GB/s | {of} | "
             "peers (device us, host us, axisops/peer) |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in data["rows"]:
        if "error" in r:
            lines.append(f"| {r['workload']} | {tuple(r['shape'])} | error | | | | {r['error']} |")
            continue
        rate = r["bytes"] / r["axisops_s"]
        host = r.get("axisops_host_s")
        peers_host = r.get("peers_host", {})
        peers = ", ".join(
            f"{k} {v * 1e6:.1f}" + (f" / {peers_host[k] * 1e6:.1f}" if k in peers_host else "")
            + f" us ({r['axisops_s'] / v:.2f}x)" for k, v in r["peers"].items())
        fraction = f"{100 * rate / reference:.1f}%" if reference else "n/a"
        lines.append(f"| {r['workload']} | {tuple(r['shape'])} | {r['axisops_s'] * 1e6:.1f} | "
                     f"{'' if host is None else f'{host * 1e6:.1f}'} | {rate / 1e9:.2f} | "
                     f"{fraction} | {peers} |")
    return "\n".join(lines)


def write_markdown(data: dict[str, Any], path: str, command: str) -> None:
    meta = data["meta"]
    copy = meta.get("copy_bandwidth")
    gpu_line = (f"* GPU: {meta['gpu']}, peak memory bandwidth {meta['bandwidth'] / 1e12:.2f} "
                f"TB/s" + (f", measured device-to-device copy {copy / 1e12:.2f} TB/s (the "
                           "fractions below)" if copy else "")
                + f"; CUDA {meta['torch_cuda']} (PyTorch)" if meta.get("bandwidth") else
                f"* {meta['gpu']}: the workloads at tiny sizes on the CPU, to check the "
                "bench; these times say nothing of a GPU")
    text = [*report_preamble(f"axisops on CUDA: {meta['gpu']}", command, meta), gpu_line,
            f"* Time: median of {meta['repeat']} calls per system, round-robin after one "
            "warm-up call: the device's time between CUDA events around the call, and the "
            "host's (the call and a synchronisation, what a caller waits for); "
            "axisops/peer (device times) below 1 means axisops is faster", "",
            format_table(data), ""]
    with open(path, "w") as f:
        f.write("\n".join(text))

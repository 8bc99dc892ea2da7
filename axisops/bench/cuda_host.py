"""The host path of a CUDA call, measured on any machine: under Numba's CUDA
simulator with every launch replaced by nothing, a warm call's time is the Python
that axisops runs around its kernels (checks, plans, geometry, allocations,
launch set-up), and its launches, read-backs and uploads can be counted.

    NUMBA_ENABLE_CUDASIM=1 python -m axisops.bench.cuda_host      # a table (us, counts)

On a GPU the call also pays numba-cuda's argument typing per launch, the
``__cuda_array_interface__`` conversions and the allocator; what is measured here
is the part that no GPU makes faster (issue 40: at most 15 us per warm call).
``tests/test_cuda_call_path.py`` holds each family to its launch and read-back
budget with :func:`stubbed`.

The simulator must be chosen before Numba loads (``NUMBA_ENABLE_CUDASIM=1`` in the
environment); :func:`stubbed` refuses to run otherwise.
"""
from __future__ import annotations

import contextlib
import dataclasses
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


@dataclasses.dataclass
class Counts:
    """What the calls inside :func:`stubbed` asked of the device."""

    launches: int = 0       # kernels launched (not run)
    read_backs: int = 0     # device-to-host copies (each a synchronisation on a GPU)
    uploads: int = 0        # host-to-device copies (geometry constants excluded when cached)
    allocations: int = 0    # device arrays allocated through numba (not the input library's)
    kernels: list = dataclasses.field(default_factory=list)  # launched kernels' names

    def reset(self) -> None:
        self.launches = self.read_backs = self.uploads = self.allocations = 0
        self.kernels.clear()


@contextlib.contextmanager
def stubbed(run_kernels: bool = False) -> Iterator[Counts]:
    """Count every launch, read-back, upload and allocation on the simulator; with
    *run_kernels* False (the default) launches, their configuration
    (``kernel[grid, block, stream]``) included, do nothing (results are garbage,
    device flags keep their cleared values, so no error is raised)."""
    from numba import config

    if not getattr(config, "ENABLE_CUDASIM", False):
        raise RuntimeError("axisops.bench.cuda_host needs NUMBA_ENABLE_CUDASIM=1 set before "
                           "Numba is imported")
    from numba import cuda
    from numba.cuda import simulator
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator.cudadrv import devicearray as sim_array

    counts = Counts()
    kernel_call = sim_kernel.FakeCUDAKernel.__call__
    configure_kernel = sim_kernel.FakeCUDAKernel.__getitem__
    copy_to_host = sim_array.FakeCUDAArray.copy_to_host
    copy_to_device = sim_array.FakeCUDAArray.copy_to_device
    to_device = sim_array.to_device
    device_array = sim_array.device_array

    def call(self, *args):
        if self._device or sim_kernel._kernel_context:  # a device function: as it is
            return kernel_call(self, *args)
        counts.launches += 1
        counts.kernels.append(getattr(self.fn, "__name__", "?"))
        return kernel_call(self, *args) if run_kernels else None

    def stubbed_launch(kern):
        def launch(*args):
            counts.launches += 1
            counts.kernels.append(getattr(kern.fn, "__name__", "?"))
        return launch

    def configure(self, configuration):
        # replaced by nothing, its configuration included: the simulator checks
        # and stores the grid on the kernel object, which no GPU launch pays
        return configure_kernel(self, configuration) if run_kernels else stubbed_launch(self)

    def host_copy(self, *args, **kwargs):
        counts.read_backs += 1
        return copy_to_host(self, *args, **kwargs)

    def device_copy(self, *args, **kwargs):
        counts.uploads += 1
        return copy_to_device(self, *args, **kwargs)

    def upload(*args, **kwargs):
        counts.uploads += 1
        return to_device(*args, **kwargs)

    def allocate(*args, **kwargs):
        counts.allocations += 1
        return device_array(*args, **kwargs)

    patches = [(sim_kernel.FakeCUDAKernel, "__call__", call),
               (sim_kernel.FakeCUDAKernel, "__getitem__", configure),
               (sim_array.FakeCUDAArray, "copy_to_host", host_copy),
               (sim_array.FakeCUDAArray, "copy_to_device", device_copy),
               *((module, "to_device", upload) for module in (sim_array, simulator, cuda)),
               *((module, "device_array", allocate) for module in (sim_array, simulator, cuda))]
    saved = [(owner, name, owner.__dict__[name] if isinstance(owner, type)
              else getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        yield counts
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


@dataclasses.dataclass
class Workload:
    """One warm call: its name and a function of the device inputs."""

    name: str
    call: Callable[[dict], Any]


def inputs(rows: int = 64, cols: int = 512, image=(4, 16, 32, 32), host: bool = False) -> dict:
    """The simulator's device arrays the workloads read (NumPy arrays with *host*):
    a (rows, cols) float32 matrix, row indices, per-element indices and an image
    batch."""
    rng = np.random.default_rng(0)
    arrays = {
        "x": rng.standard_normal((rows, cols)).astype(np.float32),
        "rows": rng.integers(0, rows, 16).astype(np.int64),
        "along": rng.integers(0, cols, (rows, cols)).astype(np.int64),
        "image": rng.standard_normal(image).astype(np.float32),
    }
    if host:
        return arrays
    from numba import cuda

    return {name: cuda.to_device(a) for name, a in arrays.items()}


def workloads() -> list[Workload]:
    """The warm calls of issue 40's target (a (64, 512) float32 input), and one of
    each other family."""
    import axisops

    return [
        Workload("sum axis=1", lambda d: axisops.sum(d["x"], 1)),
        Workload("max axis=0", lambda d: axisops.max(d["x"], 0)),
        Workload("argmax axis=1", lambda d: axisops.argmax(d["x"], 1)),
        Workload("mean axis=None", lambda d: axisops.mean(d["x"])),
        Workload("cumsum axis=1", lambda d: axisops.cumsum(d["x"], 1)),
        Workload("cummax axis=1", lambda d: axisops.cummax(d["x"], 1)),
        Workload("take rows", lambda d: axisops.take(d["x"], d["rows"], 0)),
        Workload("take_along_axis axis=1",
                 lambda d: axisops.take_along_axis(d["x"], d["along"], 1)),
        Workload("scatter add", lambda d: axisops.scatter(d["x"], d["along"], d["x"], 1,
                                                          reduce="add")),
        Workload("unfold 3x3", lambda d: axisops.unfold(d["image"], (3, 3))),
        Workload("max_pool 2x2", lambda d: axisops.max_pool(d["image"], 2)),
        Workload("avg_pool 3x3/2", lambda d: axisops.avg_pool(d["image"], 3, stride=2)),
        Workload("moving_mean 8", lambda d: axisops.moving_mean(d["x"], 8)),
        Workload("nansum axis=1", lambda d: axisops.nansum(d["x"], 1)),
        Workload("nanargmax axis=1", lambda d: axisops.nanargmax(d["x"], 1)),
    ]


@dataclasses.dataclass
class Row:
    workload: str
    us: float               # median host time of a warm call, launches stubbed
    launches: int
    read_backs: int
    uploads: int
    allocations: int


def measure(repeat: int = 7, number: int = 200,
            selected: list[Workload] | None = None) -> list[Row]:
    """Each workload's warm call: median over *repeat* runs of *number* calls (the
    first call, which compiles nothing under the simulator but builds plans, is
    excluded), and the counts of one warm call."""
    data = inputs()
    rows = []
    for w in selected or workloads():
        with stubbed() as counts:
            w.call(data)  # warm: plans, constants
            counts.reset()
            w.call(data)
            one = dataclasses.replace(counts, kernels=list(counts.kernels))
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(number):
                    w.call(data)
                times.append((time.perf_counter() - start) / number)
        rows.append(Row(w.name, statistics.median(times) * 1e6, one.launches, one.read_backs,
                        one.uploads, one.allocations))
    return rows


def format_rows(rows: list[Row]) -> str:
    lines = ["| workload | host us | launches | read-backs | uploads | numba allocations |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.workload} | {r.us:.1f} | {r.launches} | {r.read_backs} | "
                     f"{r.uploads} | {r.allocations} |")
    return "\n".join(lines)


def main() -> None:
    from .systems import machine_info

    print(f"host path of a warm CUDA call, launches stubbed (simulator); "
          f"{machine_info().get('cpu', '?')}\n")
    print(format_rows(measure()))


if __name__ == "__main__":
    main()

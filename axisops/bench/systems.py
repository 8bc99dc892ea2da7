"""The systems a bench compares (axisops and its optional peers), their threads, and the machine."""
from __future__ import annotations

import os
import platform
from collections.abc import Callable, Sequence
from typing import Any

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
SYSTEMS = ("axisops", "numpy", "torch", "onnxruntime", "bottleneck", "numbagg", "pandas",
           "xarray", "scipy")
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

Inputs = tuple[Any, ...]
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


_PEER_MODULES = {"torch": ("torch",), "onnxruntime": ("onnxruntime", "onnx"),
                 "bottleneck": ("bottleneck",), "numbagg": ("numbagg",), "pandas": ("pandas",),
                 "xarray": ("xarray",), "scipy": ("scipy.stats",)}


def _bottleneck():
    import bottleneck

    return bottleneck


def _numbagg():
    import numbagg

    return numbagg


def available_systems() -> dict[str, str | None]:
    """Map each system to ``None`` when usable, or to the reason it is not."""
    import importlib

    status: dict[str, str | None] = {"axisops": None, "numpy": None}
    for system, modules in _PEER_MODULES.items():
        status[system] = None
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception as exc:  # ImportError, or a broken install
                status[system] = f"{module} is not importable ({type(exc).__name__}: {exc})"
                break
    return status


def thread_counts(systems: Sequence[str]) -> dict[str, Any]:
    """How many threads each system computes with, as used by :func:`run`."""
    out: dict[str, Any] = {}
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
        elif system == "bottleneck":
            out[system] = "1 (bottleneck's C loops are single-threaded)"
        elif system == "numbagg":
            out[system] = "numba's threading layer: parallel above its size thresholds"
        elif system == "pandas":
            out[system] = "1 (rolling's Cython loops are single-threaded)"
        elif system == "xarray":
            out[system] = "its default engine's (numbagg, else bottleneck, else NumPy)"
        elif system == "scipy":
            out[system] = "1 (scipy.stats.rankdata is single-threaded)"
    return out


# --------------------------------------------------------------------------
# Machine and versions


def _load() -> float | None:
    """The one-minute load average, or None where the OS has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover
        return None


#: The widest vector instructions a CPU flag list names, widest first.
_VECTOR_WIDTHS = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sse4_2", "SSE4.2"),
                  ("asimd", "NEON"))


def vector_width(flags: set[str]) -> str:
    """The widest SIMD extension among a CPU's *flags* (/proc/cpuinfo's names).

    >>> vector_width({"sse4_2", "avx", "avx2", "fma"})
    'AVX2'
    """
    return next((name for flag, name in _VECTOR_WIDTHS if flag in flags), "unknown")


def machine_info() -> dict[str, Any]:
    """CPU model and vector width (from /proc/cpuinfo), core counts, OS."""
    cpu = None
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                name = line.split(":", 1)[0].strip().lower()
                if name == "model name" and cpu is None:
                    cpu = line.split(":", 1)[1].strip()
                elif name in ("flags", "features") and not flags:
                    flags = set(line.split(":", 1)[1].split())
                if cpu is not None and flags:
                    break
    except OSError:
        pass
    return {
        "cpu": cpu or platform.processor() or platform.machine(),
        "vector": vector_width(flags),
        "cores": core_count(),
        "logical_cpus": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
    }


def cpu_text(machine: dict[str, Any]) -> str:
    """``"<CPU model> (<vector width>), <cores> cores"`` of :func:`machine_info`'s dict."""
    return (f"{machine.get('cpu', '?')} ({machine.get('vector', '?')}), "
            f"{machine.get('cores', '?')} cores")


def versions() -> dict[str, str | None]:
    """Versions of Python and every system that can be imported."""
    import importlib

    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in ("axisops", "numpy", "numba", "torch", "onnxruntime", "onnx", "bottleneck",
                 "numbagg", "pandas", "xarray", "scipy"):
        try:
            out[name] = getattr(importlib.import_module(name), "__version__", "unknown")
        except Exception:
            out[name] = None
    return out


def report_preamble(title: str, command: str, meta: dict[str, Any]) -> list[str]:
    """The first lines of a Markdown report: title, who wrote it and when, the
    machine and the versions (``meta`` has ``date``, ``machine``, ``versions``)."""
    machine = meta["machine"]
    return [
        f"# {title}",
        "",
        f"<!-- Written by `{command}`; do not edit by hand. -->",
        "",
        f"Written on {meta['date']}.",
        "",
        f"* Machine: {cpu_text(machine)}",
        "* Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items() if v),
    ]

"""Peak resident memory of Dask worker processes, for the out-of-core benchmark
(``benchmarks/out_of_core.py``) and its test (``tests/test_dask_out_of_core.py``).

Run through ``client.run``: :func:`start_peak` resets the process's high-water
mark (``VmHWM``, through ``/proc/self/clear_refs``, where Linux has it) and starts a
thread sampling the RSS every 2 ms; :func:`stop_peak` stops it and returns the
larger of the two. The sampler catches peaks on kernels that do not reset VmHWM.
Needs psutil (a dependency of distributed).
"""
from __future__ import annotations

import contextlib
import threading

__all__ = ["rss", "vm_hwm", "start_peak", "stop_peak"]


def rss() -> int:
    """This process's resident memory, in bytes."""
    import psutil

    return psutil.Process().memory_info().rss


def vm_hwm() -> int | None:
    """This process's high-water mark of resident memory (Linux), or None."""
    with contextlib.suppress(OSError):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    return None


def start_peak(dask_worker) -> int:
    """Reset this worker process's peak memory and start sampling it; return the RSS
    now. The sampler's state lives on the worker object."""
    import gc

    stop_peak(dask_worker)
    gc.collect()
    with contextlib.suppress(OSError):
        with open("/proc/self/clear_refs", "w") as f:  # resets VmHWM to the RSS now
            f.write("5")
    now = rss()
    stop = threading.Event()
    state: dict = {"peak": now, "stop": stop}

    def loop():
        while not stop.wait(0.002):
            state["peak"] = max(state["peak"], rss())

    thread = threading.Thread(target=loop, daemon=True, name="peak-rss")
    state["thread"] = thread
    thread.start()
    dask_worker._axisops_peak = state
    return now


def stop_peak(dask_worker) -> int | None:
    """Stop sampling; return the peak since :func:`start_peak` (None if not started)."""
    state = getattr(dask_worker, "_axisops_peak", None)
    if state is None:
        return None
    state["stop"].set()
    state["thread"].join()
    del dask_worker._axisops_peak
    return max(state["peak"], rss(), vm_hwm() or 0)

"""``axisops bench --dask``: axisops on dask arrays against dask's own operators.

One local cluster of worker processes (``dask.distributed.LocalCluster``, one
thread per worker, a worker per core) runs every workload; each system's time is
the median of its timed ``compute()`` calls, taken round-robin after one untimed
warm-up call (which also loads the kernels in the workers). Workloads, on a
float32 array chunked along both axes:

* ``argmax``, ``sum``, ``max``, ``cumsum`` along the chunked axis 0 and along
  axis 1 — against ``dask.array``'s own;
* ``take`` of 1000 NumPy indices along axis 0 — against ``dask.array.take``;
* ``take_along_axis`` along axis 0 with chunked indices — dask has none, so against
  the usual workaround: rechunk the axis into one chunk and map NumPy's
  ``take_along_axis`` over the blocks.

For every workload the report gives the tasks in the graph per input chunk (its
size), and the per-task overhead of the cluster is measured on a graph of tiny
tasks.
"""
from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .systems import core_count

FULL = {"shape": (8192, 8192), "chunks": (1024, 2048)}  # 256 MiB, 32 chunks
QUICK = {"shape": (2048, 2048), "chunks": (512, 1024)}


def _median_compute(graphs: dict[str, Any], client, repeat: int) -> dict[str, float]:
    for g in graphs.values():
        client.compute(g, sync=True)
    times: dict[str, list[float]] = {name: [] for name in graphs}
    for _ in range(repeat):
        for name, g in graphs.items():
            t0 = time.perf_counter()
            client.compute(g, sync=True)
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def _tasks(graph) -> int:
    return len(graph.__dask_graph__())


def run(quick: bool = False, repeat: int | None = None, progress=None) -> dict[str, Any]:
    """Every workload's medians, task counts, and the cluster's per-task overhead."""
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    import axisops

    sizes = QUICK if quick else FULL
    repeat = repeat or (3 if quick else 5)
    workers = core_count()
    rows = []
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        x = da.random.default_rng(0).standard_normal(sizes["shape"], chunks=sizes["chunks"],
                                                    dtype=np.float32).persist()
        n = x.shape[0]
        idx_np = np.random.default_rng(1).integers(0, n, 1000)
        along = da.random.default_rng(2).integers(0, n, x.shape, chunks=sizes["chunks"]).persist()
        chunk_count = x.npartitions

        def rechunk_workaround():
            whole = x.rechunk({0: -1})
            return da.map_blocks(lambda a, i: np.take_along_axis(a, i, 0), whole,
                                 along.rechunk({0: -1}), dtype=x.dtype)

        workloads: dict[str, tuple[Callable[[], Any], Callable[[], Any], str]] = {}
        for axis in (0, 1):
            for op in ("argmax", "sum", "max", "cumsum"):
                workloads[f"{op} axis={axis}"] = (
                    functools.partial(getattr(axisops, op), x, axis=axis),
                    functools.partial(getattr(da, op), x, axis=axis), "dask")
        workloads["take 1000 axis=0"] = (lambda: axisops.take(x, idx_np, axis=0),
                                         lambda: da.take(x, idx_np, axis=0), "dask")
        workloads["take_along_axis axis=0"] = (
            lambda: axisops.take_along_axis(x, along, 0), rechunk_workaround, "rechunk workaround")
        for name, (ours, theirs, peer) in workloads.items():
            g_ours, g_theirs = ours(), theirs()
            medians = _median_compute({"axisops": g_ours, "peer": g_theirs}, client, repeat)
            rows.append({"workload": name, "peer": peer, "axisops_s": medians["axisops"],
                         "peer_s": medians["peer"], "ratio": medians["axisops"] / medians["peer"],
                         "axisops_tasks_per_chunk": _tasks(g_ours) / chunk_count,
                         "peer_tasks_per_chunk": _tasks(g_theirs) / chunk_count})
            if progress:
                r = rows[-1]
                print(f"{name:<24} axisops {r['axisops_s'] * 1e3:8.1f} ms  {peer} "
                      f"{r['peer_s'] * 1e3:8.1f} ms", file=progress, flush=True)
        tiny = da.ones(2000, chunks=1).sum()
        per_task = _median_compute({"tiny": tiny}, client, repeat)["tiny"] / _tasks(tiny)
    return {"meta": {"shape": sizes["shape"], "chunks": sizes["chunks"], "workers": workers,
                     "chunk_count": chunk_count, "per_task_ms": per_task * 1e3},
            "rows": rows}


def format_table(data: dict[str, Any]) -> str:
    meta = data["meta"]
    lines = [f"float32 {meta['shape']} in chunks of {meta['chunks']} ({meta['chunk_count']} "
             f"chunks), LocalCluster: {meta['workers']} worker processes x 1 thread; "
             f"per-task overhead {meta['per_task_ms']:.2f} ms", "",
             "| workload | axisops ms | peer | peer ms | axisops / peer | tasks per chunk "
             "(axisops / peer) |", "|---|---:|---|---:|---:|---:|"]
    for r in data["rows"]:
        lines.append(f"| {r['workload']} | {r['axisops_s'] * 1e3:.1f} | {r['peer']} | "
                     f"{r['peer_s'] * 1e3:.1f} | {r['ratio']:.2f}x | "
                     f"{r['axisops_tasks_per_chunk']:.1f} / {r['peer_tasks_per_chunk']:.1f} |")
    return "\n".join(lines)

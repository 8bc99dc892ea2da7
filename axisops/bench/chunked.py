"""``axisops bench --dask``: axisops on dask arrays against dask's own operators.

One local cluster of worker processes (``dask.distributed.LocalCluster``, one
thread per worker, a worker per core) runs every workload; each system's time is
the median of its timed runs (``persist`` and wait: the result stays in the
workers), taken round-robin in alternating order after one untimed warm-up run
(which also loads the kernels in the workers). Workloads, on a float32 array
chunked along both axes:

* ``argmax``, ``sum``, ``max``, ``cumsum`` along the chunked axis 0 and along
  axis 1, and ``take`` of 1000 NumPy indices along axis 0 — against
  ``dask.array``'s own;
* the nan-functions ``nanmean`` (both axes), ``nanstd``, ``nanargmax`` and
  ``nanmax`` of the array with a tenth of its elements NaN, against
  ``dask.array``'s ``nanmean``, ``nanstd``, ``nanargmax``, ``nanmax``;
* what dask lacks, against the usual workaround (rechunk the axis into one chunk
  and map NumPy over the blocks): ``take_along_axis`` and ``scatter`` add along
  axis 0 with chunked indices, ``cummax`` along axis 0 (NumPy's
  ``maximum.accumulate``: values only), ``argmax`` over both axes (the array
  reshaped to 1-D for dask's ``argmax``), and ``unfold`` of an image batch chunked
  along its rows (3x3 windows; the workaround rechunks the rows and maps
  axisops' NumPy path).

For every workload the report gives GB/s (the input bytes read once, indices
included, over the time), the tasks that run (the graph after dask's
optimisation) per input chunk, and the
cluster's per-task overhead measured on a graph of tiny tasks.
"""
from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, NamedTuple

import numpy as np

from .systems import core_count, machine_info, report_preamble, versions

FULL: dict[str, Any] = {"shape": (8192, 8192), "chunks": (1024, 2048), "image": (16, 16, 256, 256),
                       "image_chunks": (4, 16, 64, 256)}  # 256 MiB in 32 chunks; 64 MiB in 16 chunks
QUICK: dict[str, Any] = {"shape": (2048, 2048), "chunks": (512, 1024), "image": (4, 4, 64, 64),
                         "image_chunks": (2, 4, 16, 64)}
#: chunks of the graph of tiny tasks that measures the cluster's per-task overhead
TINY_TASKS = 2000


class Workload(NamedTuple):
    ours: Callable[[], Any]
    peer: Callable[[], Any]
    peer_name: str
    nbytes: int
    chunks: int  # the input chunks the task counts are per


def _run_on(client, graph) -> float:
    """Seconds to compute *graph* on the cluster, its result kept there: the time
    is the operator's, not that of gathering a 256 MiB result into the client (one
    worker concatenating it took 30-490 ms from run to run). Returns once the
    scheduler has forgotten the result, so the next run computes it again."""
    from dask.distributed import futures_of, wait

    t0 = time.perf_counter()
    futures = futures_of(client.persist(graph))
    wait(futures)
    elapsed = time.perf_counter() - t0
    keys = [f.key for f in futures]
    del futures
    while client.run_on_scheduler(_still_known, keys=keys):
        time.sleep(0.01)
    return elapsed


def _still_known(keys, dask_scheduler=None) -> bool:
    return any(k in dask_scheduler.tasks for k in keys)


def _median_times(graphs: dict[str, Any], client, repeat: int) -> dict[str, float]:
    for g in graphs.values():
        _run_on(client, g)
    times: dict[str, list[float]] = {name: [] for name in graphs}
    names = list(graphs)
    for r in range(repeat):
        for name in names if r % 2 == 0 else names[::-1]:  # neither always runs first
            times[name].append(_run_on(client, graphs[name]))
    return {name: statistics.median(t) for name, t in times.items()}


def _tasks(graph) -> int:
    """Tasks that run: after dask's optimisation, which fuses chains of blockwise
    layers (a persisted input's chunks are not tasks)."""
    import dask

    (optimized,) = dask.optimize(graph)
    return len(optimized.__dask_graph__())


def _scatter_add_block(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.add.at(out, (i, np.arange(x.shape[1])[None, :]), u)
    return out


def _unfold_block(x: np.ndarray) -> np.ndarray:
    import axisops
    from axisops._dispatch import numpy_function

    return numpy_function(axisops.unfold)(x, 3, padding=1)


def workloads(x, along, image, idx_np, missing=None) -> dict[str, Workload]:
    """Every workload of the bench on the persisted inputs (*missing*: *x* with a
    tenth of its elements NaN, for the nan-functions)."""
    import dask.array as da

    import axisops

    n_chunks, i_chunks = x.npartitions, image.npartitions
    out: dict[str, Workload] = {}
    for axis in (0, 1):
        for op in ("argmax", "sum", "max", "cumsum"):
            out[f"{op} axis={axis}"] = Workload(
                functools.partial(getattr(axisops, op), x, axis=axis),
                functools.partial(getattr(da, op), x, axis=axis), "dask", x.nbytes, n_chunks)
    if missing is not None:  # dask's own nan-functions
        for op, axis in (("nanmean", 0), ("nanmean", 1), ("nanstd", 1), ("nanargmax", 0),
                         ("nanmax", 1)):
            out[f"{op} axis={axis}, 10% NaN"] = Workload(
                functools.partial(getattr(axisops, op), missing, axis=axis),
                functools.partial(getattr(da, op), missing, axis=axis), "dask",
                missing.nbytes, n_chunks)
    out["take 1000 axis=0"] = Workload(lambda: axisops.take(x, idx_np, axis=0),
                                       lambda: da.take(x, idx_np, axis=0), "dask",
                                       x.nbytes, n_chunks)

    def whole(a):
        return a.rechunk({0: -1})

    out["take_along_axis axis=0"] = Workload(
        lambda: axisops.take_along_axis(x, along, 0),
        lambda: da.map_blocks(lambda a, i: np.take_along_axis(a, i, 0), whole(x), whole(along),
                              dtype=x.dtype),
        "rechunk workaround", x.nbytes + along.nbytes, n_chunks)
    out["scatter add axis=0"] = Workload(
        lambda: axisops.scatter(x, along, x, 0, reduce="add"),
        lambda: da.map_blocks(_scatter_add_block, whole(x), whole(along), whole(x),
                              dtype=x.dtype),
        "rechunk workaround", 2 * x.nbytes + along.nbytes, n_chunks)
    out["cummax axis=0"] = Workload(
        lambda: axisops.cummax(x, axis=0).values,
        lambda: da.map_blocks(np.maximum.accumulate, whole(x), axis=0, dtype=x.dtype),
        "rechunk workaround", x.nbytes, n_chunks)
    out["argmax axis=(0, 1)"] = Workload(lambda: axisops.argmax(x, axis=(0, 1)),
                                         lambda: da.argmax(x.reshape(-1)),
                                         "dask on a reshape", x.nbytes, n_chunks)
    rows = image.ndim - 2
    out["unfold 3x3 (rows chunked)"] = Workload(
        lambda: axisops.unfold(image, 3, padding=1),
        lambda: da.map_blocks(_unfold_block, image.rechunk({rows: -1}), dtype=image.dtype,
                              chunks=(image.chunks[0], (image.shape[1] * 9,),
                                      (image.shape[2] * image.shape[3],)), drop_axis=3),
        "rechunk workaround", image.nbytes, i_chunks)
    return out


def run(quick: bool = False, repeat: int | None = None, progress=None,
        only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Every workload's medians, task counts, and the cluster's per-task overhead."""
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    sizes = QUICK if quick else FULL
    repeat = repeat or (3 if quick else 9)
    workers = core_count()
    rows: list[dict[str, Any]] = []
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        rng = da.random.default_rng(0)
        x = rng.standard_normal(sizes["shape"], chunks=sizes["chunks"], dtype=np.float32)
        along = da.random.default_rng(2).integers(0, x.shape[0], x.shape, chunks=sizes["chunks"])
        image = da.random.default_rng(3).standard_normal(
            sizes["image"], chunks=sizes["image_chunks"], dtype=np.float32)
        nan = da.random.default_rng(4).random(sizes["shape"], chunks=sizes["chunks"]) < 0.1
        missing = da.where(nan, np.float32(np.nan), x)
        x, along, image, missing = client.persist([x, along, image, missing])
        idx_np = np.random.default_rng(1).integers(0, x.shape[0], 1000)
        for name, w in workloads(x, along, image, idx_np, missing).items():
            if only and name not in only:
                continue
            g_ours, g_theirs = w.ours(), w.peer()
            medians = _median_times({"axisops": g_ours, "peer": g_theirs}, client, repeat)
            rows.append({"workload": name, "peer": w.peer_name, "axisops_s": medians["axisops"],
                         "peer_s": medians["peer"], "ratio": medians["axisops"] / medians["peer"],
                         "bytes": w.nbytes,
                         "axisops_tasks_per_chunk": _tasks(g_ours) / w.chunks,
                         "peer_tasks_per_chunk": _tasks(g_theirs) / w.chunks})
            if progress:
                r = rows[-1]
                print(f"{name:<28} axisops {r['axisops_s'] * 1e3:8.1f} ms  {w.peer_name} "
                      f"{r['peer_s'] * 1e3:8.1f} ms", file=progress, flush=True)
        tiny = da.ones(TINY_TASKS, chunks=1).sum()
        per_task = _median_times({"tiny": tiny}, client, repeat)["tiny"] / _tasks(tiny)
    return {"meta": {"shape": sizes["shape"], "chunks": sizes["chunks"], "image": sizes["image"],
                     "image_chunks": sizes["image_chunks"], "workers": workers,
                     "chunk_count": int(np.prod([-(-s // c) for s, c in
                                                 zip(sizes["shape"], sizes["chunks"])])),
                     "per_task_ms": per_task * 1e3, "repeat": repeat,
                     "machine": machine_info(), "versions": versions(),
                     "date": datetime.now(timezone.utc).isoformat(timespec="seconds")},
            "rows": rows}


def format_table(data: dict[str, Any]) -> str:
    meta = data["meta"]
    lines = [f"float32 {meta['shape']} in chunks of {meta['chunks']} ({meta['chunk_count']} "
             f"chunks); images {meta['image']} in chunks of {meta['image_chunks']}. "
             f"LocalCluster: {meta['workers']} worker processes x 1 thread; per-task overhead "
             f"{meta['per_task_ms']:.2f} ms. axisops / peer below 1 means axisops is faster.", "",
             "| workload | axisops ms | axisops GB/s | peer | peer ms | peer GB/s | axisops / peer "
             "| tasks per chunk (axisops / peer) |", "|---|---:|---:|---|---:|---:|---:|---:|"]
    for r in data["rows"]:
        lines.append(f"| {r['workload']} | {r['axisops_s'] * 1e3:.1f} | "
                     f"{r['bytes'] / r['axisops_s'] / 1e9:.2f} | {r['peer']} | "
                     f"{r['peer_s'] * 1e3:.1f} | {r['bytes'] / r['peer_s'] / 1e9:.2f} | "
                     f"{r['ratio']:.2f}x | {r['axisops_tasks_per_chunk']:.1f} / "
                     f"{r['peer_tasks_per_chunk']:.1f} |")
    return "\n".join(lines)


def write_markdown(data: dict[str, Any], path: str, command: str) -> None:
    meta = data["meta"]
    text = [
        *report_preamble("axisops on dask arrays", command, meta),
        f"* Time: median of {meta['repeat']} timed runs per system (`persist` and wait: the "
        "result stays in the workers), round-robin in alternating order after one warm-up "
        "run, on one `LocalCluster` of worker processes",
        "",
        format_table(data),
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(text))

"""Out of core: axisops on dask arrays many times larger than the workers' memory.

    python benchmarks/out_of_core.py                       # 32 GiB, 2 workers of 1 GiB
    python benchmarks/out_of_core.py --gib 4 --memory-limit 512MiB --chunk-mib 8
    python benchmarks/out_of_core.py --markdown benchmarks/out_of_core.md

A ``dask.distributed.LocalCluster`` of worker processes (one thread each) with a
memory limit per worker runs these workloads on float32 data ``x`` of shape
(A, 256, 512) that the workers generate chunk by chunk, so it never exists whole
anywhere (chunks of about ``--chunk-mib``):

* ``axisops.sum(x, axis=0)``: a tree reduction over axis 0 in many chunks;
* ``axisops.argmax(x, axis=(0, 1))``: a tuple axis, global indices;
* ``axisops.sum(axisops.cumsum(x, axis=0), axis=0, dtype=float64)`` with axis 0 in 4
  chunks (axis 1 cut instead): a scan with its carry chain, then a reduction;
* ``axisops.sum(axisops.take_along_axis(x, idx, axis=0), axis=0)``: random int32
  indices of A / 8 rows, a dask array in 2 chunks along the axis, x in 4, so every
  index chunk hits every chunk of x of its columns;
* ``axisops.quantile(x, [0.25, 0.75], axis=0)`` with axis 0 in 16 chunks (axis 1
  cut instead): exact, a selection by counting whose passes each read x anew;
* the scan again with axis 0 in many chunks (``--no-long-scan`` leaves it out): each
  chunk is read by its summary and by its own scan, which waits for the carry
  chain; the distributed scheduler generates chunks faster than the chain reaches
  them, so with large chunks (32 MiB, 1 GiB workers) they pile up and a worker is
  killed (dask's own cumsum too); with 8 MiB chunks and 640 MiB workers the test
  suite's run of 683 chunks stays bounded. It is reported as it ends.

The data is ``x[i, j, k] = P[i, k] + Q[j, k]`` with small random integer tables
``P`` (two planted maxima per column) and ``Q``, so every result is known exactly
from ``P`` and ``Q`` (integers: float32 sums are exact; the scan's sum is float64)
and is checked; the gather's reference is NumPy's ``take_along_axis`` of ``P`` per
index chunk, computed in the cluster.

Spilling to disk and pausing are switched off (``distributed.worker.memory.target``,
``spill``, ``pause``: False; a worker over 95% of its limit is still killed, and
``allowed-failures`` is 0, so the graph fails at once), so a graph has to run
within the limit from memory. Each worker's peak resident memory is measured per
run: the kernel's high-water mark (``VmHWM``, reset through ``/proc/self/clear_refs``)
where Linux has it, and a thread sampling the RSS every 2 ms. *Peak* is the
largest over the workers, baseline included (an idle worker with its kernels
loaded, in brackets). Times are wall-clock for the whole graph, data generation
included, after an untimed warm-up on a part of the data (kernels compiled or
loaded); after a failure the cluster is restarted and warmed up again.

The dask-native columns run the same data through dask's own operators where dask
has one (``da.sum``; ``da.argmax`` of ``x.reshape(A * 256, 512)``, which needs axis 1
in one chunk, as here; ``da.cumsum`` then ``da.sum``). Dask has no
``take_along_axis``: the usual stand-in maps ``np.take_along_axis`` over both arrays
rechunked to one chunk along the axis (a chunk 4 times x's); it is run, and fails
where that chunk does not fit.

This is a script, not part of the package: ``import axisops`` never imports it.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import axisops  # noqa: E402
from axisops.bench.memory import start_peak, stop_peak  # noqa: E402
from axisops.bench.systems import machine_info  # noqa: E402

B, C = 256, 512            # x is (A, B, C) float32: a row of axis 0 is 512 KiB
PLANT = 100                # the planted maxima of P (P and Q are in [-8, 8) otherwise)
MiB = 1 << 20


# --------------------------------------------------------------------------
# Peak memory of a worker process (functions run in the workers by client.run)

# --------------------------------------------------------------------------
# The data: x[i, j, k] = P[i, k] + Q[j, k], generated in the workers


def tables(A: int, seed: int = 0):
    """Lazy int8 tables P (A, C), two planted maxima per column, and Q (B, C)."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    P = rng.integers(-8, 8, size=(A, C), chunks=(min(A, 4096), C), dtype=np.int8)
    plants = np.random.default_rng(seed + 1).integers(0, A, size=(2, C))
    rows = da.arange(A, chunks=min(A, 4096))[:, None]
    P = da.where((rows == plants[0]) | (rows == plants[1]), np.int8(PLANT), P)
    Q = rng.integers(-8, 8, size=(B, C), chunks=(B, C), dtype=np.int8)
    return P, Q


def data(P, Q, chunks):
    """x = P[:, None, :] + Q[None, :, :] as float32, chunked as *chunks*."""
    a, b, c = chunks
    return (P.rechunk((a, c))[:, None, :].astype(np.float32)
            + Q.rechunk((b, c))[None, :, :].astype(np.float32))


def indices(A: int, A2: int, chunks, seed: int = 2):
    import dask.array as da

    return da.random.default_rng(seed).integers(0, A, size=(A2, B, C), chunks=chunks,
                                                dtype=np.int32)


def _gathered_rows(idx_block, p_block):
    """Reference: x's P part picked by NumPy, summed over the chunk's rows (int64)."""
    return np.take_along_axis(p_block[:, None, :].astype(np.int64), idx_block, axis=0).sum(
        axis=0, keepdims=True)


def gather_reference(P, idx):
    """sum over axis 0 of P[idx[a, j, k], k] (int64, (B, C)), by NumPy per index chunk."""
    import dask.array as da

    column = P.rechunk((P.shape[0], idx.chunks[2]))
    rows = da.blockwise(_gathered_rows, "ajk", idx, "ajk", column, "ik", concatenate=True,
                        dtype=np.int64, adjust_chunks={"a": 1})
    return rows.sum(axis=0)


def _take_whole_axis(x_block, idx_block):
    return np.take_along_axis(x_block, idx_block, axis=0)


# --------------------------------------------------------------------------
# Workloads


class Workload:
    def __init__(self, name, chunks, build, native, check, note=""):
        self.name, self.chunks, self.build, self.native = name, chunks, build, native
        self.check, self.note = check, note


class Layout:
    """The chunks of each workload for x of shape (A, B, C) and chunks of about
    *chunk_bytes*: ``long`` has all of axes 1 and 2 in a chunk, so axis 0 has many
    chunks; ``short`` has axis 0 in *along* chunks and cuts axis 1 instead; the
    gather's x is as ``short`` with axis 2 cut to 64, its indices (A / 8 rows) in
    *idx_along* chunks of axis 0, so that every index chunk hits every chunk of x
    of its columns."""

    def __init__(self, A: int, chunk_bytes: int, along: int = 4, idx_along: int = 2):
        self.A, self.along = A, along
        elements = max(1, chunk_bytes // 4)
        rows = A // along
        self.long = (max(1, min(A, elements // (B * C))), B, C)
        self.short = (rows, max(1, min(B, elements // (rows * C))), C)
        self.take_x = (rows, max(1, min(B, elements // (rows * 64))), 64)
        self.quant = (max(1, A // 16), max(1, min(B, elements // (max(1, A // 16) * C))), C)
        self.A2 = max(idx_along, A // 8)
        self.take_idx = (self.A2 // idx_along, self.take_x[1], 64)


def workloads(layout: Layout, seed: int = 0, long_scan: bool = True, warm: bool = False):
    """The workloads on x of shape (A, B, C) with the chunks of *layout*; with *warm*,
    on a small part of x only (two chunks, or one group of chunks along axis 0)."""
    import dask.array as da

    A, A2 = layout.A, layout.A2
    P, Q = tables(A, seed)
    p, q = (t.astype(np.int64) for t in da.compute(P, Q))
    out = []

    def x(chunks):
        whole = data(P, Q, chunks)
        if not warm:
            return whole
        rows = 2 * chunks[0] if chunks in (layout.long, layout.quant) else A
        return whole[:rows, :chunks[1], :chunks[2]]

    sum_expected = p.sum(axis=0)[None, :] + A * q
    out.append(Workload(
        "sum axis=0", layout.long,
        lambda: axisops.sum(x(layout.long), axis=0),
        lambda: da.sum(x(layout.long), axis=0),
        lambda r: _exact(r, sum_expected)))

    argmax_expected = np.argmax(p, axis=0) * B + np.argmax(q, axis=0)  # first maxima
    out.append(Workload(
        "argmax axis=(0, 1)", layout.long,
        lambda: axisops.argmax(x(layout.long), axis=(0, 1)),
        lambda: da.argmax(x(layout.long).reshape(A * B, C), axis=0),
        lambda r: _exact(r, argmax_expected)))

    weights = (A - np.arange(A, dtype=np.int64))[:, None]   # row i is in A - i prefix sums
    scan_expected = (weights * p).sum(axis=0)[None, :] + (A * (A + 1) // 2) * q

    def scan(chunks, name):
        return Workload(
            name, chunks,
            lambda: axisops.sum(axisops.cumsum(x(chunks), axis=0), axis=0, dtype=np.float64),
            lambda: da.sum(da.cumsum(x(chunks), axis=0), axis=0, dtype=np.float64),
            lambda r: _exact(r, scan_expected))

    out.append(scan(layout.short, f"cumsum axis=0 ({layout.along} chunks) + sum"))

    idx = indices(A, A2, layout.take_idx)
    if warm:
        idx = idx[:, :layout.take_idx[1], :layout.take_idx[2]]
    reference = {}

    def take_check(r):
        if "p" not in reference:
            reference["p"] = gather_reference(P, idx).compute()
        return _exact(r, reference["p"] + A2 * q)

    out.append(Workload(
        f"take_along_axis axis=0 ({layout.along} chunks) + sum", (layout.take_x, layout.take_idx),
        lambda: axisops.sum(axisops.take_along_axis(x(layout.take_x), idx, axis=0), axis=0),
        lambda: axisops.sum(da.map_blocks(_take_whole_axis, x(layout.take_x).rechunk({0: -1}),
                                          idx.rechunk({0: -1}), dtype=np.float32), axis=0),
        take_check,
        "dask-native: np.take_along_axis on x and indices rechunked to one chunk along axis 0"))

    qs = [0.25, 0.75]  # virtual indices (A - 1) / 4 and 3 (A - 1) / 4: quarters, exact
    out.append(Workload(
        "quantile [0.25, 0.75] axis=0 (16 chunks)", layout.quant,
        lambda: axisops.quantile(x(layout.quant), qs, axis=0),
        None,
        lambda r: _exact(r, np.quantile(p.astype(np.float64), qs, axis=0)[:, None, :]
                         + q[None]),
        "dask-native: none (da.percentile is 1-D and approximate)"))

    if long_scan:
        out.append(scan(layout.long, f"cumsum axis=0 ({A // layout.long[0]} chunks) + sum"))
    return out


def _exact(result, expected) -> str:
    result = np.asarray(result)
    if result.shape != expected.shape:
        return f"WRONG shape {result.shape}"
    bad = int(np.count_nonzero(result != expected))
    return "exact" if bad == 0 else f"WRONG ({bad} of {expected.size} differ)"


# --------------------------------------------------------------------------
# Running


def memory_config() -> dict:
    """No spilling, no pausing: a graph must run from memory within the limit."""
    return {"distributed.worker.memory.target": False,
            "distributed.worker.memory.spill": False,
            "distributed.worker.memory.pause": False,
            "distributed.worker.memory.terminate": 0.95,
            "distributed.scheduler.allowed-failures": 0}


def _pool_bytes(dask_worker) -> int:
    from axisops import _alloc

    return sum(b.nbytes for b in _alloc._buffers)


def measure(client, build, check, workers: int) -> dict:
    """Run one graph: its check (or the error), seconds, the workers' peak, idle and
    axisops-pool bytes, and its number of tasks."""
    graph = build()
    out = {"tasks": len(graph.__dask_graph__())}
    before = set(client.scheduler_info()["workers"])
    out["idle"] = max(client.run(start_peak).values())
    t0 = time.perf_counter()
    try:
        result = client.compute(graph).result()
        error = None
    except Exception as e:  # a killed worker
        error = f"FAILED: {type(e).__name__}"
    out["s"] = time.perf_counter() - t0
    if error is None and set(client.scheduler_info()["workers"]) != before:
        error = "FAILED: a worker died"
    client.wait_for_workers(workers, timeout=120)  # a killed worker is restarted
    peaks = [p for p in client.run(stop_peak).values() if p is not None]
    out["peak"] = max(peaks) if peaks else 0
    out["pool"] = max(client.run(_pool_bytes).values())
    out["check"] = error if error else check(result)
    return out


def warm_up(client, layout: Layout):
    """Load or compile the kernels in every worker (chunks of the run's sizes, so
    the same kernels): each workload on a small part of x, untimed."""
    for w in workloads(layout, long_scan=False, warm=True):
        client.compute(w.build()).result()


def _bytes(text: str) -> int:
    from dask.utils import parse_bytes

    return parse_bytes(text)


def run(gib: float, chunk_mib: float, memory_limit: str, workers: int, names, native: bool,
        long_scan: bool = True, progress=sys.stderr):
    import dask
    from distributed import Client, LocalCluster

    limit = _bytes(memory_limit)
    A = int(gib * 2**30 // (B * C * 4)) // 64 * 64
    layout = Layout(A, int(chunk_mib * MiB))
    rows = []
    with dask.config.set(memory_config()), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                         dashboard_address=None, memory_limit=memory_limit,
                         silence_logs=50) as cluster, Client(cluster) as client:

        def warm():
            t0 = time.perf_counter()
            warm_up(client, layout)
            print(f"warm-up {time.perf_counter() - t0:.1f} s", file=progress, flush=True)

        warm()
        for w in workloads(layout, long_scan=long_scan):
            if names and not any(n in w.name for n in names):
                continue
            row = {"workload": w.name, "chunks": w.chunks, "A": A, "A2": layout.A2,
                   "note": w.note}
            row["axisops"] = m = measure(client, w.build, w.check, workers)
            print(f"{w.name:<40} axisops {m['s']:7.1f} s  peak {m['peak'] / MiB:6.0f} MiB  "
                  f"(idle {m['idle'] / MiB:.0f}, pool {m['pool'] / MiB:.0f})  {m['tasks']} tasks"
                  f"  {m['check']}", file=progress, flush=True)
            if m["check"].startswith("FAILED"):
                client.restart()
                warm()
            if native and w.native is not None:
                row["native"] = m = measure(client, w.native, w.check, workers)
                print(f"{'':<40} dask    {m['s']:7.1f} s  peak {m['peak'] / MiB:6.0f} MiB  "
                      f"{m['check']}", file=progress, flush=True)
                if m["check"].startswith("FAILED"):
                    client.restart()
                    warm()
            rows.append(row)
    return rows, limit


# --------------------------------------------------------------------------
# Reporting

_HEADER = ("workload", "data", "chunks", "limit/worker", "peak/worker (idle)", "time",
           "check", "dask-native peak", "dask-native time", "dask-native check")


def _mib(n) -> str:
    return f"{n / MiB:.0f} MiB"


def _chunk_text(chunks) -> str:
    if isinstance(chunks[0], tuple):
        x, i = chunks
        return f"x {x} ({_mib(np.prod(x) * 4)}), idx {i} ({_mib(np.prod(i) * 4)})"
    return f"{chunks} ({_mib(np.prod(chunks) * 4)})"


def _data_text(row) -> str:
    A, A2 = row["A"], row["A2"]
    text = f"{A * B * C * 4 / 2**30:.1f} GiB float32 ({A}, {B}, {C})"
    if row["workload"].startswith("take"):
        text += f" + idx {A2 * B * C * 4 / 2**30:.1f} GiB int32 ({A2}, {B}, {C})"
    return text


def _outcome(m, limit) -> tuple:
    if m is None:
        return ("-", "-", "not run")
    if m["check"].startswith("FAILED"):  # the sampler died with the worker
        return (f"> {_mib(0.95 * limit)} (killed)", f"{m['s']:.1f} s until", m["check"])
    return (_mib(m["peak"]), f"{m['s']:.1f} s", m["check"])


def _cells(row, limit) -> tuple:
    m = row["axisops"]
    peak, seconds, check = _outcome(m, limit)
    if not m["check"].startswith("FAILED"):
        peak += f" ({_mib(m['idle'])})"
    return (row["workload"], _data_text(row), _chunk_text(row["chunks"]), _mib(limit),
            peak, seconds, check, *_outcome(row.get("native"), limit))


def _machine() -> str:
    import psutil

    return (f"{machine_info()['cpu']}, {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB; "
            f"{platform.system()} {platform.release()}")


def _versions() -> str:
    import dask
    import distributed
    import numba

    return (f"python {platform.python_version()}, axisops {axisops.__version__}, "
            f"numpy {np.__version__}, numba {numba.__version__}, dask {dask.__version__}, "
            f"distributed {distributed.__version__}")


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):  # pragma: no cover
        return "?"


def markdown(rows, limit, workers, command, loads=("?", "?")) -> str:
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    lines = [
        "# Out of core: axisops on dask arrays larger than the workers' memory",
        "",
        f"Written by `{command}` on {date}.",
        "",
        f"* Machine: {_machine()}",
        f"* Versions: {_versions()}",
        f"* Load average {loads[0]} before, {loads[1]} after (other processes share the cores)",
        f"* Cluster: `LocalCluster`, {workers} worker processes of 1 thread, memory limit "
        f"{_mib(limit)} each ({_mib(limit * workers)} in all); spilling and pausing off, "
        "so every graph runs from memory.",
        "* Data: generated chunk by chunk in the workers, never whole anywhere; "
        "`x[i, j, k] = P[i, k] + Q[j, k]` (small integers), so results are checked exactly.",
        "* *peak/worker*: the largest peak resident memory of a worker process during the "
        "run (Linux VmHWM and a 2 ms RSS sampler), idle baseline of a worker with its "
        "kernels loaded in brackets; *time*: wall-clock of the whole graph, generation "
        "included, after a warm-up.",
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|" + "|".join(["---"] * 3 + ["---:"] * 3 + ["---"] + ["---:"] * 2 + ["---"]) + "|",
    ]
    lines += ["| " + " | ".join(_cells(r, limit)) + " |" for r in rows]
    notes = sorted({r["note"] for r in rows if r["note"]})
    if notes:
        lines += [""] + [f"* {n}" for n in notes]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Run axisops' dask operators on data many times the workers' memory "
                    "limit and report peak worker memory and time.")
    parser.add_argument("--gib", type=float, default=32, help="size of x in GiB (default 32)")
    parser.add_argument("--chunk-mib", type=float, default=32,
                        help="size of a chunk of x in MiB (default 32)")
    parser.add_argument("--memory-limit", default="1GiB", help="per worker (default 1GiB)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--only", default="",
                        help="comma-separated parts of workload names to run (default all)")
    parser.add_argument("--no-native", action="store_true", help="leave dask's operators out")
    parser.add_argument("--no-long-scan", action="store_true",
                        help="leave out the scan along many chunks (memory not bounded)")
    parser.add_argument("--markdown", metavar="PATH", help="also write the table to PATH")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    load_before = _load()
    rows, limit = run(args.gib, args.chunk_mib, args.memory_limit, args.workers, names,
                      not args.no_native, not args.no_long_scan)
    command = "python benchmarks/out_of_core.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    text = markdown(rows, limit, args.workers, command.strip(), (load_before, _load()))
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
        print(f"written to {args.markdown}")
    bad = [r for r in rows if r["axisops"]["check"].startswith("WRONG")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

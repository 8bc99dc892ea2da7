"""Time one long scan: does the second core help a 1-D cumsum and cummax?

    python benchmarks/long_scan.py                      # 100 million float32 values
    python benchmarks/long_scan.py --size 10_000_000 --repeat 9
    python benchmarks/long_scan.py --markdown BENCH.md  # also append the table as Markdown

A scan along the only axis of a 1-D array has no independent rows to share out,
so a threaded kernel must split the array itself (each thread scans a block, the
block totals are scanned, then each block is offset) and pays for it with more
memory traffic. This script measures whether that pays on this machine:
``axisops.cumsum`` and ``axisops.cummax`` (values and int64 indices) with Numba's
thread count set to 1 and to 2 (``numba.set_num_threads``), next to NumPy
(``np.cumsum``, ``np.maximum.accumulate``: one thread, and values only for the
maximum) and PyTorch (``torch.cumsum``, ``torch.cummax``) when it is importable.

How it measures: one process, one input array of uniform [0, 1) float32 values;
one untimed warm-up call per row (compilation or cache load); then ``--repeat``
rounds, each calling every row once in turn, so that a burst of load from a
neighbour hits all rows alike. Best and median milliseconds per row; GB/s is
(bytes read + bytes written) / best time, with the bytes each system actually
writes (cummax: 4 + 8 per element for axisops and torch, 4 for NumPy).
"2nd core" is the 1-thread time over the 2-thread time.

The check column: cumsum results are compared with a float64 cumsum (the error
is the largest absolute difference over the final sum, so it shows how far a
float32 running sum drifts), cummax values with NumPy's exactly and indices
with torch's; axisops' results must also be bit-identical at 1 and 2 threads.

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
from axisops.bench.systems import core_count, machine_info  # noqa: E402


def _size(text: str) -> int:
    try:
        n = int(text.replace("_", ""))
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Time cumsum and cummax over one long 1-D float32 array, axisops with "
                    "1 and 2 Numba threads against NumPy and PyTorch.")
    parser.add_argument("--size", type=_size, default=100_000_000,
                        help="number of float32 elements (default 100_000_000: 400 MB)")
    parser.add_argument("--repeat", type=_size, default=5,
                        help="timed rounds; best and median are reported (default 5)")
    parser.add_argument("--ops", default="cumsum,cummax",
                        help="comma-separated, some of cumsum,cummax (default both)")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    parser.add_argument("--markdown", metavar="PATH",
                        help="append the table as Markdown to PATH (created if missing)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


# --------------------------------------------------------------------------
# Rows: (system, threads, runner factory). A runner computes the result once.


def _torch(skip: bool):
    if skip:
        return None
    try:
        import torch
    except Exception:
        return None
    torch.set_num_threads(core_count())
    return torch


def _axisops_threads():
    """The Numba thread counts to compare: 1 and 2, as far as Numba allows."""
    import numba

    return [t for t in (1, 2) if t <= numba.config.NUMBA_NUM_THREADS]


def rows_for(op: str, x: np.ndarray, torch):
    """``(system, threads, runner)`` for every system that computes ``op``."""
    import numba

    fn = getattr(axisops, op)
    rows = []
    for threads in _axisops_threads():
        def run(threads=threads):
            numba.set_num_threads(threads)
            return fn(x)
        rows.append(("axisops", threads, run))
    np_fn = np.cumsum if op == "cumsum" else np.maximum.accumulate
    rows.append(("numpy", 1, lambda: np_fn(x)))
    if torch is not None:
        t = torch.from_numpy(x)
        torch_fn = getattr(torch, op)
        rows.append(("torch", torch.get_num_threads(), lambda: torch_fn(t, 0)))
    return rows


def _to_numpy(result):
    if isinstance(result, tuple):
        return tuple(_to_numpy(r) for r in result)
    if hasattr(result, "numpy"):
        return result.numpy()
    return np.asarray(result)


def _nbytes(result) -> int:
    return sum(_nbytes(r) for r in result) if isinstance(result, tuple) else int(result.nbytes)


# --------------------------------------------------------------------------
# Checks


def _check_cumsum(results, x):
    exact = np.cumsum(x, dtype=np.float64)
    scale = abs(exact[-1]) or 1.0
    out = {}
    for key, y in results.items():
        err = float(np.max(np.abs(y - exact))) / scale
        out[key] = f"err {err:.1e}"
    del exact
    return out


def _check_cummax(results, x):
    values = results.get(("numpy", 1))
    indices = next((r[1] for (s, _), r in results.items() if s == "torch"), None)
    out = {}
    for key, y in results.items():
        if not isinstance(y, tuple):
            out[key] = "reference"
            continue
        ok = values is None or np.array_equal(y[0], values)
        text = "values ok" if ok else "values MISMATCH"
        if indices is not None and key[0] != "torch":
            text += ", indices = torch" if np.array_equal(y[1], indices) else ", indices MISMATCH"
        out[key] = text
    return out


def _same_bits(a, b) -> bool:
    if isinstance(a, tuple):
        return all(_same_bits(p, q) for p, q in zip(a, b))
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# --------------------------------------------------------------------------
# Timing


def measure(op: str, x: np.ndarray, repeat: int, torch, progress=sys.stderr):
    """Time every row of ``op``; return a list of result dicts."""
    rows = rows_for(op, x, torch)
    results = {}
    first = {}
    for system, threads, run in rows:
        t0 = time.perf_counter()
        results[(system, threads)] = _to_numpy(run())
        first[(system, threads)] = (time.perf_counter() - t0) * 1e3
        print(f"{op:<7} {system:<8} {threads} thread(s): warm-up "
              f"{first[(system, threads)]:9.1f} ms", file=progress, flush=True)

    # The results are kept to be checked, so the timed calls allocate their
    # output afresh (as a user's call does), not into freed pages of the last.
    times = {key: [] for key in results}
    for _ in range(repeat):
        for system, threads, run in rows:
            t0 = time.perf_counter()
            run()
            times[(system, threads)].append((time.perf_counter() - t0) * 1e3)

    checks = (_check_cumsum if op == "cumsum" else _check_cummax)(results, x)
    axisops_keys = [k for k in results if k[0] == "axisops"]
    if len(axisops_keys) > 1:
        same = all(_same_bits(results[axisops_keys[0]], results[k]) for k in axisops_keys[1:])
        for k in axisops_keys:
            checks[k] += "; same bits at 1 and 2 threads" if same else "; DIFFERS between thread counts"

    out = []
    one_thread = min(times[("axisops", 1)]) if ("axisops", 1) in times else None
    for (system, threads), ts in times.items():
        best = min(ts)
        nbytes = x.nbytes + _nbytes(results[(system, threads)])
        row = {
            "op": op, "system": system, "threads": threads,
            "best_ms": best, "median_ms": float(np.median(ts)), "first_call_ms": first[(system, threads)],
            "gb_per_s": nbytes / (best * 1e-3) / 1e9,
            "speedup": (one_thread / best if system == "axisops" and threads == 2
                        and one_thread is not None else None),
            "check": checks[(system, threads)],
        }
        out.append(row)
        print(f"{op:<7} {system:<8} {threads} thread(s): best {best:9.1f} ms  "
              f"median {row['median_ms']:9.1f} ms  {row['gb_per_s']:6.2f} GB/s  {row['check']}",
              file=progress, flush=True)
    del results
    return out


# --------------------------------------------------------------------------
# Reporting

_HEADER = ("op", "system", "threads", "best ms", "median ms", "GB/s", "2nd core", "check")


def _cells(row):
    return (
        row["op"], row["system"], str(row["threads"]),
        f"{row['best_ms']:.1f}", f"{row['median_ms']:.1f}", f"{row['gb_per_s']:.2f}",
        "-" if row["speedup"] is None else f"{row['speedup']:.2f}x",
        row["check"],
    )


def _versions(torch) -> str:
    import numba

    text = f"axisops {axisops.__version__}, numpy {np.__version__}, numba {numba.__version__}"
    return text + (f", torch {torch.__version__}" if torch is not None else "")


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):  # pragma: no cover
        return "?"


def header_line(size: int, repeat: int) -> str:
    return (f"float32[{size:,}] ({size * 4 / 1e6:.0f} MB), best and median of {repeat} "
            f"round-robin calls, on {machine_info()['cpu']} ({core_count()} cores)")


def format_table(rows, size, repeat, torch, load_before, load_after) -> str:
    table = [_HEADER] + [_cells(r) for r in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(_HEADER))]
    right = {2, 3, 4, 5, 6}

    def fmt(cells):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    lines = [
        "long scan: " + header_line(size, repeat),
        f"{_versions(torch)}; load average {load_before} before, {load_after} after",
        "",
        fmt(_HEADER),
        fmt(["-" * w for w in widths]),
    ]
    lines += [fmt(c) for c in table[1:]]
    return "\n".join(lines)


def append_markdown(path, rows, size, repeat, torch, load_before, load_after, command) -> None:
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    lines = [
        f"## Long scans: one 1-D float32 array of {size:,} elements",
        "",
        f"Written by `{command}` on {date}.",
        "",
        f"* {header_line(size, repeat)}; {platform.system()} {platform.release()}",
        f"* Versions: python {platform.python_version()}, {_versions(torch)}",
        f"* Load average {load_before} before, {load_after} after",
        "* GB/s = (bytes read + bytes written) / best time; cummax writes values and int64 "
        "indices (axisops, torch) or values only (NumPy). *2nd core* = the 1-thread time / "
        "the 2-thread time.",
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|" + "|".join(["---", "---", "---:", "---:", "---:", "---:", "---:", "---"]) + "|",
    ]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    lines.append("")
    exists = os.path.exists(path) and os.path.getsize(path) > 0
    with open(path, "a") as f:
        if exists:
            f.write("\n")
        f.write("\n".join(lines) + "\n")


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    ops = [op.strip() for op in args.ops.split(",") if op.strip()]
    unknown = [op for op in ops if op not in ("cumsum", "cummax")]
    if unknown:
        build_parser().error(f"unknown op(s) {', '.join(unknown)}; expected cumsum, cummax")
    torch = _torch(args.no_torch)
    import numba

    threads_before = numba.get_num_threads()
    load_before = _load()
    print("long scan: " + header_line(args.size, args.repeat), file=sys.stderr, flush=True)
    x = np.random.default_rng(args.seed).random(args.size, dtype=np.float32)
    rows = []
    try:
        for op in ops:
            rows += measure(op, x, args.repeat, torch)
    finally:
        numba.set_num_threads(threads_before)
    load_after = _load()
    print(format_table(rows, args.size, args.repeat, torch, load_before, load_after))
    if args.markdown:
        command = "python benchmarks/long_scan.py " + " ".join(
            sys.argv[1:] if argv is None else argv)
        append_markdown(args.markdown, rows, args.size, args.repeat, torch,
                        load_before, load_after, command.strip())
        print(f"appended to {args.markdown}")
    bad = [r for r in rows if "MISMATCH" in r["check"] or "DIFFERS" in r["check"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

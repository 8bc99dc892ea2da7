"""Running the workloads: warm-up, round-robin timing and result checks."""
from __future__ import annotations

import datetime
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .report import _ms
from .systems import (
    FULL_REPEAT,
    FULL_SHAPE,
    MAX_ROUNDS,
    REFERENCE,
    SETTLE_S,
    SYSTEMS,
    Runner,
    _load,
    available_systems,
    core_count,
    machine_info,
    thread_counts,
    versions,
)
from .workload import Workload

# --------------------------------------------------------------------------
# Running


def _to_numpy(result: Any) -> Any:
    if isinstance(result, (tuple, list)):
        return tuple(_to_numpy(r) for r in result)
    if hasattr(result, "detach") and hasattr(result, "numpy"):  # a torch tensor
        return result.detach().cpu().numpy()
    return np.asarray(result)


def default_check(result: Any, expected: Any) -> bool:
    """Integers and bools exactly; floats to a float32-sum tolerance.

    Tuples element by element.  A tuple result against a non-tuple reference
    (``(values, indices)`` against NumPy's values) compares its first element.
    """
    if isinstance(result, tuple) and not isinstance(expected, tuple):
        return bool(result) and default_check(result[0], expected)
    if isinstance(expected, tuple):
        return (
            isinstance(result, tuple)
            and len(result) == len(expected)
            and all(default_check(r, e) for r, e in zip(result, expected))
        )
    result = np.asarray(result)
    expected = np.asarray(expected)
    if result.shape != expected.shape:
        return False
    if expected.dtype.kind in "fc":
        return bool(np.allclose(result, expected, rtol=1e-3, atol=1e-3, equal_nan=True))
    return bool(np.array_equal(result, expected))


def _nbytes(value: Any) -> int:
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return int(np.asarray(value).nbytes)


def _log(stream, text: str) -> None:
    if stream is not None:
        print(text, file=stream, flush=True)


def run(
    workloads: Sequence[Workload],
    *,
    shape: tuple[int, ...] = FULL_SHAPE,
    repeat: int = FULL_REPEAT,
    min_time: float = 0.0,
    systems: Sequence[str] | None = None,
    seed: int = 0,
    progress=sys.stderr,
) -> dict[str, Any]:
    """Time every workload on every available system; return the raw results.

    Each system gets ``repeat`` timed calls, and more while it has spent less
    than ``min_time`` seconds in timed calls (at most :data:`MAX_ROUNDS` calls);
    the calls go round-robin over the systems that still need some, and the
    best call counts.

    The result is a dict with ``meta`` (machine, versions, threads, shape,
    repeat, date, skipped systems) and ``results``, one row per
    (workload, system) that ran: ``workload``, ``op``, ``system``,
    ``times_ms`` (every timed call), ``best_ms``, ``median_ms``, ``first_call_ms`` (the
    untimed warm-up call, with the runner's setup), ``bytes``, ``gb_per_s``,
    ``ratio_to_best_peer`` (best_ms / the fastest other system's best_ms),
    ``check`` (``"ok"``, ``"MISMATCH"`` or ``"reference"``), ``checked_against``
    (the systems whose results it was compared with: the reference, and the
    workload's ``full_reference`` where that one ran), plus rows with
    ``error`` for a system that could not run a workload.  ``meta["notes"]``
    maps a workload's name to its ``note``.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    status = available_systems()
    wanted = list(SYSTEMS) if systems is None else list(systems)
    unknown = [s for s in wanted if s not in SYSTEMS]
    if unknown:
        raise ValueError(
            f"unknown system(s) {', '.join(unknown)}; expected some of: {', '.join(SYSTEMS)}"
        )
    skipped = {s: status[s] for s in wanted if status[s] is not None}
    usable = [s for s in SYSTEMS if s in wanted and status[s] is None]
    for system, reason in skipped.items():
        _log(progress, f"skipping {system}: {reason}")
    threads = thread_counts(usable)
    load_before = _load()
    _log(
        progress,
        "threads: " + ", ".join(f"{s}={threads[s]}" for s in usable)
        + f"; shape {shape} float32, best of >= {repeat} calls"
        + (f" (and >= {min_time:g} s)" if min_time > 0 else "")
        + (f"; load average {load_before:.2f}" if load_before is not None else ""),
    )
    if load_before is not None and load_before > 0.5:
        _log(progress, f"warning: the machine is busy (load average {load_before:.2f} on "
                       f"{core_count()} cores); threaded timings will be noisy")

    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    total = len(workloads)
    for k, workload in enumerate(workloads, 1):
        inputs = workload.setup(tuple(shape), rng)
        if workload.bytes_read is not None:
            in_bytes = int(workload.bytes_read(inputs))
        else:
            in_bytes = sum(_nbytes(a) for a in inputs)
        runners: dict[str, Runner] = {}
        wl_rows: dict[str, dict[str, Any]] = {}
        results: dict[str, Any] = {}
        for system in usable:
            factory = workload.systems.get(system)
            if factory is None:
                continue
            row: dict[str, Any] = {"workload": workload.name, "op": workload.op, "system": system}
            wl_rows[system] = row
            t0 = time.perf_counter()
            try:
                runner = factory(*inputs)
                results[system] = _to_numpy(runner())
            except NotImplementedError as exc:
                del wl_rows[system]
                _log(progress, f"[{k}/{total}] {workload.name:<18} {system:<12} n/a: {exc}")
                continue
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"
                _log(progress, f"[{k}/{total}] {workload.name:<18} {system:<12} FAILED: {row['error']}")
                continue
            row["first_call_ms"] = (time.perf_counter() - t0) * 1e3
            time.sleep(SETTLE_S.get(system, 0.0))
            row["times_ms"] = []
            runners[system] = runner
            _log(
                progress,
                f"[{k}/{total}] {workload.name:<18} {system:<12} warm-up {row['first_call_ms']:9.1f} ms",
            )

        # Timed calls, round-robin over the systems.
        # A system drops out of the rounds once it has its calls and its time.
        active = list(runners)
        rounds = 0
        while active:
            # Each round starts one system later, so no system always follows
            # another's pause (a core wakes up slower after one).
            shift = rounds % len(active)
            rounds += 1
            for system in active[shift:] + active[:shift]:
                t0 = time.perf_counter()
                runners[system]()
                wl_rows[system]["times_ms"].append((time.perf_counter() - t0) * 1e3)
                time.sleep(SETTLE_S.get(system, 0.0))
            active = [
                s for s in active
                if len(wl_rows[s]["times_ms"]) < repeat
                or (len(wl_rows[s]["times_ms"]) < MAX_ROUNDS
                    and sum(wl_rows[s]["times_ms"]) < min_time * 1e3)
            ]

        reference = results.get(REFERENCE)
        check = workload.check or default_check
        timed = {s: r for s, r in wl_rows.items() if s in runners}
        for system, row in timed.items():
            row["best_ms"] = min(row["times_ms"])
            row["median_ms"] = float(np.median(row["times_ms"]))
            out_bytes = _nbytes(results[system])
            row["bytes"] = in_bytes + out_bytes
            row["gb_per_s"] = row["bytes"] / (row["best_ms"] * 1e-3) / 1e9
            if system == REFERENCE:
                row["check"] = "reference"
                continue
            against = {}
            if reference is not None:
                against[REFERENCE] = reference
            full = results.get(workload.full_reference)
            if system != workload.full_reference and isinstance(full, tuple) \
                    and isinstance(results[system], tuple):
                against[workload.full_reference] = full
            if not against:
                row["check"] = "unchecked"
                continue
            row["checked_against"] = list(against)
            ok = all(check(results[system], expected) for expected in against.values())
            row["check"] = "ok" if ok else "MISMATCH"
        for system, row in timed.items():
            peers = [r["best_ms"] for s, r in timed.items() if s != system]
            row["ratio_to_best_peer"] = row["best_ms"] / min(peers) if peers else None
            _log(
                progress,
                f"[{k}/{total}] {workload.name:<18} {system:<12} best {_ms(row['best_ms']):>9} ms"
                f"  {row['gb_per_s']:6.2f} GB/s  {row['check']}",
            )
        rows.extend(wl_rows[s] for s in usable if s in wl_rows)
        del inputs, runners, results

    return {
        "meta": dict(
            machine_info(),
            versions=versions(),
            threads=threads,
            shape=list(shape),
            dtype="float32",
            repeat=repeat,
            min_time_s=min_time,
            seed=seed,
            load_average_before=load_before,
            load_average_after=_load(),
            systems=usable,
            skipped_systems=skipped,
            notes={w.name: w.note for w in workloads if w.note},
            date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        ),
        "results": rows,
    }

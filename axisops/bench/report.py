"""Reports of a bench run: the text table, JSON, Markdown and the bar chart."""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from .systems import cpu_text
from .window import window_image_shape

# --------------------------------------------------------------------------
# Reporting


def _verdicts(data: dict[str, Any]) -> dict[str, str]:
    """Per workload, one sentence saying whether axisops is fastest."""
    out: dict[str, str] = {}
    by_workload: dict[str, list[dict[str, Any]]] = {}
    for row in data["results"]:
        if "best_ms" in row:
            by_workload.setdefault(row["workload"], []).append(row)
    for name, rows in by_workload.items():
        mine = [r for r in rows if r["system"] == "axisops"]
        peers = [r for r in rows if r["system"] != "axisops"]
        if not mine:
            out[name] = "axisops did not run"
            continue
        if not peers:
            out[name] = "no peer ran"
            continue
        best = min(peers, key=lambda r: r["best_ms"])
        ratio = mine[0]["best_ms"] / best["best_ms"]
        wrong = " (but its result is a MISMATCH)" if mine[0]["check"] == "MISMATCH" else ""
        if ratio <= 1:
            out[name] = (
                f"axisops is fastest{wrong}: {ratio:.2f}x the time of the best peer "
                f"({best['system']}, {1 / ratio:.2f}x faster)"
            )
        else:
            out[name] = (
                f"axisops is NOT fastest{wrong}: {ratio:.2f}x the time of {best['system']}"
            )
    return out


_HEADER = ("workload", "system", "ms", "GB/s", "vs best peer", "check")


def _ms(ms: float) -> str:
    """Milliseconds with about four significant digits."""
    for limit, digits in ((100, 0), (10, 1), (1, 2), (0.1, 3)):
        if ms >= limit:
            return f"{ms:.{digits}f}"
    return f"{ms:.4f}"


def _table_rows(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    rows = []
    for row in data["results"]:
        if "best_ms" not in row:
            rows.append((row["workload"], row["system"], "-", "-", "-", row.get("error", "")))
            continue
        ratio = row.get("ratio_to_best_peer")
        rows.append(
            (
                row["workload"],
                row["system"],
                _ms(row["best_ms"]),
                f"{row['gb_per_s']:.2f}",
                "-" if ratio is None else f"{ratio:.2f}x",
                row["check"],
            )
        )
    return rows


def _timing_text(meta: dict[str, Any]) -> str:
    text = f"best of >= {meta['repeat']} calls"
    if meta.get("min_time_s"):
        text += f" and >= {meta['min_time_s']:g} s per system"
    return text + " (round-robin over the systems)"


def _load_text(meta: dict[str, Any]) -> str:
    a, b = meta.get("load_average_before"), meta.get("load_average_after")
    if a is None or b is None:
        return ""
    return f"; load average {a:.2f} before, {b:.2f} after"


def _window_text(data: dict[str, Any]) -> str:
    """What the window workloads ran on, if any ran ("" otherwise)."""
    if not any(r["op"] in ("unfold", "fold") for r in data["results"]):
        return ""
    shape = window_image_shape(tuple(data["meta"]["shape"]))
    return f"unfold and fold: a {data['meta']['dtype']} image (N, C, H, W) = {shape} instead"


def _threads_line(meta: dict[str, Any]) -> str:
    return "threads: " + ", ".join(f"{s} {n}" for s, n in meta["threads"].items())


def format_table(data: dict[str, Any]) -> str:
    """The results as a plain-text table with a verdict line per workload.

    ``vs best peer`` is the row's time over the fastest *other* system's time:
    on an axisops row, below 1 means axisops is the fastest.
    """
    meta = data["meta"]
    rows = _table_rows(data)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(_HEADER)]
    right = {2, 3, 4}

    def fmt(cells):
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    shape = "x".join(map(str, meta["shape"]))
    lines = [
        f"axisops bench: {meta['dtype']} {shape}, {_timing_text(meta)}, "
        f"on {meta['cpu']} ({meta['cores']} cores)",
        _threads_line(meta) + _load_text(meta),
        *([_window_text(data)] if _window_text(data) else []),
        "",
        fmt(_HEADER),
        fmt(["-" * w for w in widths]),
    ]
    verdicts = _verdicts(data)
    notes = meta.get("notes", {})

    def verdict(name):
        lines.append(f"  -> {verdicts.get(name, '')}")
        if name in notes:
            lines.append(f"     (note: {notes[name]})")

    previous = None
    for cells in rows:
        if previous is not None and cells[0] != previous:
            verdict(previous)
        label = cells[0] if cells[0] != previous else ""
        lines.append(fmt((label,) + tuple(cells[1:])))
        previous = cells[0]
    if previous is not None:
        verdict(previous)
    for system, reason in meta.get("skipped_systems", {}).items():
        lines.append(f"(skipped {system}: {reason})")
    return "\n".join(lines)


def write_json(data: dict[str, Any], path: str) -> None:
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def write_markdown(data: dict[str, Any], path: str, command: str = "axisops bench --markdown BENCHMARKS.md") -> None:
    """Write the results as a Markdown page (``BENCHMARKS.md``)."""
    meta = data["meta"]
    v = meta["versions"]
    shape = " x ".join(map(str, meta["shape"]))
    size_mib = np.prod(meta["shape"]) * np.dtype(meta["dtype"]).itemsize / 2**20
    lines = [
        "# Benchmarks",
        "",
        "<!-- Written by the benchmark (`python benchmarks/run.py`, i.e. "
        "`axisops bench --markdown BENCHMARKS.md`); do not edit by hand. -->",
        "",
        f"Written by `{command}` on {meta['date']}.",
        "",
        f"* Machine: {cpu_text(meta)} ({meta['os']})",
        "* Versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val is not None),
        f"* Input: one C-contiguous {meta['dtype']} array of shape {shape} ({size_mib:.0f} MiB), "
        "uniform random values" + (f"; {_window_text(data)}" if _window_text(data) else ""),
        f"* Timing: all systems in one process; one untimed warm-up call each (numba compilation or "
        f"cache load, ONNX Runtime session creation); then the {_timing_text(meta)}; "
        "an untimed pause of 50 ms after each ONNX Runtime call, whose "
        "worker threads spin on a core after a run; each round starts with the next system",
        "* Threads: " + ", ".join(f"{s} {n}" for s, n in meta["threads"].items())
        + _load_text(meta),
        "* GB/s = (bytes read + bytes written) / time. *vs best peer* = this system's time / the "
        "fastest other system's time; on an axisops row, below 1 means axisops is the fastest.",
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|" + "|".join(["---", "---", "---:", "---:", "---:", "---"]) + "|",
    ]
    for cells in _table_rows(data):
        bold = cells[1] == "axisops"
        shown = [f"**{c}**" if bold and i in (1, 4) and c not in ("-", "") else c for i, c in enumerate(cells)]
        lines.append("| " + " | ".join(shown) + " |")
    lines += ["", "## Verdicts", ""]
    notes = meta.get("notes", {})
    lines += [
        f"* **{name}**: {text}" + (f". *Note: {notes[name]}.*" if name in notes else "")
        for name, text in _verdicts(data).items()
    ]
    for system, reason in meta.get("skipped_systems", {}).items():
        lines.append(f"* skipped {system}: {reason}")
    lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def plot(data: dict[str, Any], path: str) -> None:
    """Bar chart of axisops time / peer time, per workload and peer.

    Raises ``ImportError`` with an explanation when matplotlib is missing.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "--plot needs matplotlib, which is not installed "
            "(pip install matplotlib, or pip install 'axisops[bench]')"
        ) from exc

    best: dict[tuple[str, str], float] = {}
    for row in data["results"]:
        if "best_ms" in row:
            best[(row["workload"], row["system"])] = row["best_ms"]
    workloads = list(dict.fromkeys(w for w, _ in best))
    peers = [s for s in data["meta"]["systems"] if s != "axisops"]
    meta = data["meta"]

    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(workloads) + 2), 4.5))
    width = 0.8 / max(1, len(peers))
    xs = np.arange(len(workloads))
    for j, peer in enumerate(peers):
        ratios = [
            best[(w, "axisops")] / best[(w, peer)]
            if (w, "axisops") in best and (w, peer) in best
            else np.nan
            for w in workloads
        ]
        bars = ax.bar(xs + (j - (len(peers) - 1) / 2) * width, ratios, width, label=f"vs {peer}")
        for bar, r in zip(bars, ratios):
            if np.isfinite(r):
                ax.annotate(f"{r:.2f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(xs)
    ax.set_xticklabels(workloads, rotation=20, ha="right")
    ax.set_ylabel("axisops time / peer time  (< 1: axisops faster)")
    shape = "x".join(map(str, meta["shape"]))
    ax.set_title(f"axisops vs peers, {meta['dtype']} {shape}, {meta['cpu']} ({meta['cores']} cores)",
                 fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

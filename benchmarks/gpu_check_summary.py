"""One line per operator family from the GPU check's results (``benchmarks/gpu_check.sh``).

Reads ``tests.xml`` (pytest's JUnit report) and ``bench_*.json`` (``axisops bench
--device cuda --json``) in the folder given, and prints Markdown: per family, the
tests passed, failed and skipped, and the bench's median fraction of the peak memory
bandwidth and its worst axisops/peer time ratio.

    python benchmarks/gpu_check_summary.py gpu_check_out > gpu_check_out/summary.md
"""
from __future__ import annotations

import json
import statistics
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

#: The family of each CUDA test file (by its name) and of each bench workload (by its
#: first word).
TEST_FAMILIES = {"test_cuda": "reductions and scans", "test_cuda_gather": "gather and scatter",
                 "test_cuda_grad": "gradients", "test_cuda_window": "windows",
                 "test_torch_cuda": "PyTorch CUDA tensors", "test_cuda_compile": "PTX compile check"}
BENCH_FAMILIES = {"sum": "reductions", "mean": "reductions", "max": "reductions",
                  "argmax": "reductions", "cumsum": "scans", "cummax": "scans",
                  "take": "gather and scatter", "take_along_axis": "gather and scatter",
                  "scatter": "gather and scatter", "unfold": "windows", "fold": "windows",
                  "conv": "windows"}


def test_lines(xml_path: Path) -> list[str]:
    if not xml_path.exists():
        return ["* tests: no report (the test phase did not finish; see tests.txt)"]
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    failed: dict[str, list[str]] = defaultdict(list)
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        module = next((p for p in parts if p in TEST_FAMILIES), parts[-1] or "other")
        family = TEST_FAMILIES.get(module, module)
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                failed[family].append(case.get("name", "?"))
            elif child.tag == "skipped":
                outcome = "skipped"
        counts[family][outcome] += 1
    lines = []
    for family, c in sorted(counts.items()):
        line = (f"* tests, {family}: {c['passed']} passed, {c['failed']} failed, "
                f"{c['skipped']} skipped")
        if failed[family]:
            shown = ", ".join(failed[family][:6])
            more = len(failed[family]) - 6
            line += f" (failed: {shown}{f', and {more} more' if more > 0 else ''})"
        lines.append(line)
    return lines or ["* tests: the report holds no test cases"]


def bench_lines(json_path: Path) -> list[str]:
    if not json_path.exists():
        return [f"* bench ({json_path.stem}): no results"]
    data = json.loads(json_path.read_text())
    peak = data["meta"].get("copy_bandwidth") or data["meta"]["bandwidth"]
    of = "copy" if data["meta"].get("copy_bandwidth") else "peak"
    by_family: dict[str, list[dict]] = defaultdict(list)
    for row in data["rows"]:
        by_family[BENCH_FAMILIES.get(row["workload"].split()[0], "other")].append(row)
    lines = []
    for family, rows in by_family.items():
        timed = [r for r in rows if "error" not in r]
        errors = len(rows) - len(timed)
        if not timed:
            lines.append(f"* {json_path.stem}, {family}: every workload failed ({errors})")
            continue
        rate = statistics.median(r["bytes"] / r["axisops_s"] for r in timed)
        speed = (f"median {100 * rate / peak:.1f}% of {of} bandwidth" if peak else
                 f"median {rate / 1e9:.2f} GB/s (no peak: a dry run)")
        worst = max(timed, key=lambda r: max((r["axisops_s"] / t for t in r["peers"].values()),
                                             default=0.0))
        ratios = {k: worst["axisops_s"] / t for k, t in worst["peers"].items()}
        worst_text = (", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()) or "no peer")
        hosts = [r["axisops_host_s"] for r in timed if "axisops_host_s" in r]
        if hosts:
            speed += f", host time median {statistics.median(hosts) * 1e6:.0f} us"
        lines.append(f"* {json_path.stem}, {family}: {len(timed)} workloads, {speed}; "
                     "slowest against a peer: "
                     f"{worst['workload']} {tuple(worst['shape'])} ({worst_text})"
                     + (f"; {errors} failed" if errors else ""))
    return lines


def gpu_from_log(log: Path) -> str:
    """The GPU that the versions phase saw (its ``device NAME cc ...`` line), for a
    run without a bench; the simulator where the log says the run was dry."""
    text = log.read_text() if log.exists() else ""
    if "mode: real GPU" in text:
        for line in text.splitlines():
            if line.startswith("device ") and " cc " in line:
                return line[len("device "):line.index(" cc ")]
        return "a real GPU (name not logged)"
    return "the CUDA simulator"


def main(folder: str) -> int:
    out = Path(folder)
    gpu = gpu_from_log(out / "log.txt")
    for name in ("bench_full.json", "bench_quick.json"):
        if (out / name).exists():
            gpu = json.loads((out / name).read_text())["meta"]["gpu"]
            break
    print(f"# GPU check: {gpu}\n")
    print("\n".join(test_lines(out / "tests.xml")))
    for name in ("bench_quick.json", "bench_full.json"):
        print("\n".join(bench_lines(out / name)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "gpu_check_out"))

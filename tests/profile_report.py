"""Sum a profiled test run per file: ``python tests/profile_report.py DIR``.

DIR is what ``AXISOPS_TEST_PROFILE=DIR python -m pytest`` wrote (one JSON line per
test and process, see tests/conftest.py). Prints a Markdown table, the slowest
files first: tests, wall seconds, seconds compiling, and the slowest tests.
"""
from __future__ import annotations

import collections
import json
import pathlib
import sys


def main(directory: str, slowest: int = 15) -> None:
    rows = [json.loads(line) for path in sorted(pathlib.Path(directory).glob("*.jsonl"))
            for line in path.read_text().splitlines() if line]
    per_file: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        entry = per_file[row["file"]]
        entry[0] += 1
        entry[1] += row["wall"]
        entry[2] += row["compile"]
    print("| file | tests | s | s compiling |\n|---|---:|---:|---:|")
    for name, (count, wall, compile_s) in sorted(per_file.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {count} | {wall:.0f} | {compile_s:.0f} |")
    total = [sum(v[i] for v in per_file.values()) for i in range(3)]
    print(f"| all | {total[0]} | {total[1]:.0f} | {total[2]:.0f} |\n")
    print(f"the {slowest} slowest tests (s, s compiling):")
    for row in sorted(rows, key=lambda r: -r["wall"])[:slowest]:
        print(f"  {row['wall']:7.1f} {row['compile']:7.1f}  {row['test']}")


if __name__ == "__main__":
    main(sys.argv[1])

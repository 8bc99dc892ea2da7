"""Run the benchmarks and update BENCHMARKS.md at the repository root.

    python benchmarks/run.py            # full run: prints the table, rewrites BENCHMARKS.md
    python benchmarks/run.py --quick    # any `axisops bench` option; prints only

This is `axisops bench --markdown BENCHMARKS.md` run from the repository root;
the machinery lives in axisops/bench.py. BENCHMARKS.md is written only by a full
run (no --quick, --shape, --ops or --systems), so it always holds the complete
table on the full-size arrays.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from axisops.cli import main  # noqa: E402

PARTIAL = ("--quick", "--shape", "--ops", "--systems", "--markdown")

if __name__ == "__main__":
    os.chdir(ROOT)
    args = sys.argv[1:]
    partial = any(a == p or a.startswith(p + "=") for a in args for p in PARTIAL)
    sys.exit(main(["bench", *args] if partial else ["bench", "--markdown", "BENCHMARKS.md", *args]))

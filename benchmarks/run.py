"""Run the benchmarks and update BENCHMARKS.md at the repository root.

    python benchmarks/run.py            # full run: prints the table, rewrites BENCHMARKS.md
    python benchmarks/run.py --quick    # any `axisops bench` option; prints only

This is `axisops bench --markdown BENCHMARKS.md` run from the repository root;
the machinery lives in axisops/bench.py. BENCHMARKS.md is written only by a full
run (no --quick, --shape, --ops or --systems), so it always holds the complete
table on the full-size arrays; a full run also copies that table into README.md.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from axisops.cli import main  # noqa: E402

PARTIAL = ("--quick", "--shape", "--ops", "--systems", "--markdown")

START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def copy_table_to_readme(benchmarks: str = "BENCHMARKS.md", readme: str = "README.md") -> None:
    """Put the table of *benchmarks* between README's bench markers."""
    with open(benchmarks) as f:
        table = "\n".join(line for line in f.read().splitlines() if line.startswith("|"))
    with open(readme) as f:
        text = f.read()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as f:
        f.write(f"{head}{START}\n{table}\n{END}{tail}")


if __name__ == "__main__":
    os.chdir(ROOT)
    args = sys.argv[1:]
    partial = any(a == p or a.startswith(p + "=") for a in args for p in PARTIAL)
    status = main(["bench", *args] if partial else ["bench", "--markdown", "BENCHMARKS.md", *args])
    if not partial:
        copy_table_to_readme()
    sys.exit(status)

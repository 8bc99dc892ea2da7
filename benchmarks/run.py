"""Run the benchmarks and update BENCHMARKS.md at the repository root.

    python benchmarks/run.py                  # full run: prints the table, rewrites BENCHMARKS.md
    python benchmarks/run.py --quick          # any `axisops bench` option; prints only
    python benchmarks/run.py --sweep          # the size sweep (~30 min): prints its summary,
                                              # rewrites BENCHMARKS.md's sweep section and
                                              # benchmarks/sweep.png
    python benchmarks/run.py --sweep --quick  # a quick sweep (~1 min); prints only
    python benchmarks/run.py --torch          # axisops on PyTorch tensors against PyTorch:
                                              # rewrites benchmarks/torch.md
    python benchmarks/run.py --dask           # axisops on dask arrays against dask, on a
                                              # local cluster: rewrites benchmarks/dask.md

This is `axisops bench --markdown BENCHMARKS.md` (or `axisops bench --sweep --markdown
BENCHMARKS.md --plot benchmarks/sweep.png`) run from the repository root; the machinery
lives in the package axisops/bench (the sweep in axisops/bench/sweep.py). BENCHMARKS.md is written only by a full
run (no --quick, --shape, --ops, --systems or the sweep's hidden --sweep-* options), so
it always holds the complete table on the full-size arrays; a full bench run also copies
that table into README.md. The bench and the sweep each rewrite only their own part of
BENCHMARKS.md: the sweep its section between `<!-- sweep:start -->` and
`<!-- sweep:end -->` (appended at the end if missing), the bench everything else (it
keeps the sweep section as it was).
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from axisops.cli import main  # noqa: E402

PARTIAL = ("--quick", "--shape", "--ops", "--systems", "--markdown",
           "--sweep-sizes", "--sweep-dtypes", "--sweep-layouts")

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
BENCHMARKS = "BENCHMARKS.md"
SWEEP_PLOT = os.path.join("benchmarks", "sweep.png")
TORCH_REPORT = os.path.join("benchmarks", "torch.md")
DASK_REPORT = os.path.join("benchmarks", "dask.md")


def copy_table_to_readme(benchmarks: str = BENCHMARKS, readme: str = "README.md") -> None:
    """Put the table of *benchmarks* between README's bench markers (the bench's
    table only: the sweep section's rows are left out)."""
    from axisops.bench import sweep

    with open(benchmarks) as f:
        text = f.read()
    section = sweep.read_section(benchmarks)
    if section is not None:
        text = text.replace(section, "")
    table = "\n".join(line for line in text.splitlines() if line.startswith("|"))
    with open(readme) as f:
        text = f.read()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as f:
        f.write(f"{head}{START}\n{table}\n{END}{tail}")


def run_bench(args: list) -> int:
    """The fixed bench; a full run rewrites BENCHMARKS.md but keeps its sweep section."""
    from axisops.bench import sweep

    partial = any(a == p or a.startswith(p + "=") for a in args for p in PARTIAL)
    if partial:
        return main(["bench", *args])
    section = sweep.read_section(BENCHMARKS)
    status = main(["bench", "--markdown", BENCHMARKS, *args])
    if section is not None:
        with open(BENCHMARKS) as f:
            text = f.read()
        with open(BENCHMARKS, "w") as f:
            f.write(sweep.replace_section(text, section))
    copy_table_to_readme()
    return status


def run_sweep(args: list) -> int:
    """The size sweep; a full run rewrites BENCHMARKS.md's sweep section and the plot."""
    partial = any(a == p or a.startswith(p + "=") for a in args for p in PARTIAL)
    if partial:
        return main(["bench", *args])
    return main(["bench", "--markdown", BENCHMARKS, "--plot", SWEEP_PLOT, *args])


def run_report(args: list, report: str) -> int:
    """``axisops bench --torch`` or ``--dask``; a full run rewrites *report*."""
    partial = any(a == p or a.startswith(p + "=") for a in args for p in PARTIAL)
    if partial:
        return main(["bench", *args])
    return main(["bench", "--markdown", report, *args])


if __name__ == "__main__":
    os.chdir(ROOT)
    argv = sys.argv[1:]
    if "--torch" in argv:
        sys.exit(run_report(argv, TORCH_REPORT))
    if "--dask" in argv:
        sys.exit(run_report(argv, DASK_REPORT))
    sys.exit(run_sweep(argv) if "--sweep" in argv else run_bench(argv))

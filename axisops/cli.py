"""The ``axisops`` command line: ``axisops bench`` and ``axisops warmup``.

``axisops bench`` times each benchmark workload against NumPy, PyTorch and ONNX
Runtime (see :mod:`axisops.bench`); ``axisops warmup`` compiles every kernel for the
common dtypes and layouts into Numba's on-disk cache, so that a user's first call
is fast.

This module imports only the standard library at import time; NumPy, the
operators, PyTorch, ONNX Runtime and matplotlib are imported by the command that
needs them.
"""

from __future__ import annotations

import argparse
import sys
import time

__all__ = ["main", "build_parser"]

#: The dtypes ``axisops warmup`` compiles for (the contract's dtypes).
WARMUP_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
)


def _version() -> str:
    try:
        import axisops

        version = getattr(axisops, "__version__", None)
    except Exception:  # a half-built package must still answer --version
        version = None
    if version is None:
        try:
            from importlib.metadata import version as dist_version

            version = dist_version("axisops")
        except Exception:
            version = "unknown"
    return f"axisops {version}"


class _VersionAction(argparse.Action):
    """``--version`` that imports the package only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit()


def _names(text: str) -> list:
    return [name.strip() for name in text.split(",") if name.strip()]


def _shape(text: str) -> tuple:
    try:
        shape = tuple(int(n) for n in text.replace("x", ",").split(",") if n.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a shape like 4,8,16, got {text!r}") from None
    if len(shape) != 3 or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"expected three positive sizes like 4,8,16, got {text!r}")
    return shape


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def _seconds(text: str) -> float:
    try:
        t = float(text)
    except ValueError:
        t = -1.0
    if not t >= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return t


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="axisops",
        description="Fast tensor axis operators: benchmarks and kernel warm-up.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    bench = commands.add_parser(
        "bench",
        help="time the operators against NumPy, PyTorch and ONNX Runtime",
        description=(
            "Time each workload (float32 (64, 512, 1024), 128 MiB; the window workloads "
            "an (8, 64, 56, 56) image) with axisops, NumPy, "
            "and PyTorch and ONNX Runtime when they are importable: one process, one "
            "untimed warm-up call per system, then the best of --repeat calls taken "
            "round-robin. PyTorch and ONNX Runtime use as many threads as there are "
            "cores. Progress goes to stderr, the table to stdout. The canonical "
            "BENCHMARKS.md is written by `python benchmarks/run.py`, which is "
            "`axisops bench --markdown BENCHMARKS.md`."
        ),
    )
    bench.add_argument("--quick", action="store_true",
                       help="smaller arrays ((16, 256, 512); images (2, 32, 28, 28)) and 3 runs: "
                            "about a minute at most")
    bench.add_argument("--ops", type=_names, metavar="NAMES",
                       help="only these operators, comma-separated (e.g. argmax,sum)")
    bench.add_argument("--systems", type=_names, metavar="NAMES",
                       help="only these systems, comma-separated "
                            "(axisops,numpy,torch,onnxruntime; default: all importable)")
    bench.add_argument("--repeat", type=_positive, metavar="N",
                       help="timed calls per system; the best counts (default 5, 3 with --quick)")
    bench.add_argument("--min-time", type=_seconds, metavar="SECONDS",
                       help="and keep timing until each system has spent this long in timed "
                            "calls, up to 100 calls (default 1, 0.25 with --quick; 0 turns it off)")
    bench.add_argument("--json", metavar="FILE", help="write all raw results as JSON")
    bench.add_argument("--plot", metavar="FILE.png",
                       help="draw the axisops/peer time ratios as a bar chart; with --sweep, "
                            "time per element against size, one panel per operator "
                            "(needs matplotlib)")
    bench.add_argument("--markdown", metavar="FILE",
                       help="write the table, machine, versions and date as Markdown "
                            "(BENCHMARKS.md is written this way only)")
    bench.add_argument("--sweep", action="store_true",
                       help="instead, a size sweep: every operator from 1K to 100M elements, "
                            "float32/float64/int32, C-ordered and transposed layouts, against "
                            "NumPy and PyTorch, and bottleneck and numbagg for the reductions they have; "
                            "prints per operator the axisops/best-peer time "
                            "ratio at ~1K and from 64K up (20-30 minutes on 2 cores; with --quick sizes "
                            "up to 1M, float32, two layouts: about a minute). --repeat and "
                            "--min-time set its samples per point; --markdown FILE puts its "
                            "section into FILE (see axisops/bench/sweep.py)")
    bench.add_argument("--dask", action="store_true",
                       help="instead, axisops on dask arrays against dask's own operators "
                            "(and the rechunk workaround where dask has none) on a local "
                            "cluster of worker processes, with tasks per chunk and the "
                            "per-task overhead (see axisops/bench/chunked.py)")
    bench.add_argument("--torch", action="store_true",
                       help="instead, axisops on PyTorch tensors against PyTorch's own operators: "
                            "forward and forward+backward (cummax, take_along_axis, scatter add, "
                            "unfold, fold, a convolution), and the per-call overhead of the "
                            "tensor path on small tensors (needs torch; see "
                            "axisops/bench/tensors.py)")
    bench.add_argument("--device", choices=["cuda"],
                       help="instead, axisops on PyTorch CUDA tensors against PyTorch CUDA (and "
                            "CuPy when installed): reductions and scans with GB/s and the "
                            "fraction of the GPU's memory bandwidth (needs a CUDA GPU; see "
                            "axisops/bench/device.py)")
    bench.add_argument("--dry", action="store_true",
                       help="with --device cuda: make the workloads on the CPU at tiny sizes "
                            "and time them there, to check the bench and its report "
                            "without a GPU (the GPU check's dry run)")
    # For tests and experiments: any 3-D shape (hidden from --help).
    bench.add_argument("--shape", type=_shape, help=argparse.SUPPRESS)
    bench.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    # For tests and experiments with --sweep: sizes (e.g. 1e3,64K), dtypes, layouts.
    bench.add_argument("--sweep-sizes", type=_names, help=argparse.SUPPRESS)
    bench.add_argument("--sweep-dtypes", type=_names, help=argparse.SUPPRESS)
    bench.add_argument("--sweep-layouts", type=_names, help=argparse.SUPPRESS)

    warmup = commands.add_parser(
        "warmup",
        help="compile every kernel for the common dtypes into Numba's on-disk cache",
        description=(
            "Call each public operator on tiny arrays of every dtype the contract allows, "
            "in the layouts that select the different kernel paths (last, middle and first "
            "axis, several axes, all axes, a transposed input), so that Numba compiles and "
            "caches each kernel now rather than on a user's first call."
        ),
    )
    warmup.add_argument("--ops", type=_names, metavar="NAMES",
                        help="only these operators, comma-separated (default: all)")
    warmup.add_argument("--dtypes", type=_names, metavar="NAMES",
                        help="only these dtypes, comma-separated (default: " + ",".join(WARMUP_DTYPES) + ")")
    warmup.add_argument("-j", "--jobs", type=_positive, metavar="N",
                        help="compile in N processes at once (default: one per core)")
    warmup.add_argument("-v", "--verbose", action="store_true", help="print every call and its time")
    return parser


def main(argv=None) -> int:
    """Run the ``axisops`` command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "bench":
        return _bench(args, parser, list(sys.argv[1:] if argv is None else argv))
    if args.command == "warmup":
        return _warmup(args, parser)
    parser.print_help()
    return 2


# --------------------------------------------------------------------------
# axisops bench


def _bench(args, parser, argv) -> int:
    if args.dry and args.device != "cuda":
        parser.error("--dry goes with --device cuda")
    if args.device == "cuda":
        return _bench_cuda(args, parser, argv)
    if args.torch:
        return _bench_torch(args, parser, argv)
    if args.dask:
        from axisops.bench import chunked

        data = chunked.run(quick=args.quick, repeat=args.repeat, progress=sys.stderr)
        print(chunked.format_table(data), flush=True)
        if args.markdown:
            chunked.write_markdown(data, args.markdown, "axisops " + " ".join(argv))
            print(f"wrote {args.markdown}")
        return 0
    if args.sweep:
        from axisops.bench import sweep

        return sweep.cli(args, parser, argv)

    import importlib.util

    from axisops import bench

    if args.plot and importlib.util.find_spec("matplotlib") is None:
        parser.exit(1, "axisops bench: --plot needs matplotlib, which is not installed "
                       "(pip install matplotlib)\n")
    try:
        workloads = bench.select(args.ops, quick=args.quick)
    except ValueError as exc:
        parser.exit(2, f"axisops bench: {exc}\n")
    if args.systems:
        unknown = [s for s in args.systems if s not in bench.SYSTEMS]
        if unknown:
            parser.exit(2, f"axisops bench: unknown system(s) {', '.join(unknown)}; "
                           f"expected some of: {', '.join(bench.SYSTEMS)}\n")
    shape = args.shape or (bench.QUICK_SHAPE if args.quick else bench.FULL_SHAPE)
    repeat = args.repeat or (bench.QUICK_REPEAT if args.quick else bench.FULL_REPEAT)
    min_time = args.min_time
    if min_time is None:
        min_time = bench.QUICK_MIN_TIME if args.quick else bench.FULL_MIN_TIME

    start = time.perf_counter()
    data = bench.run(workloads, shape=shape, repeat=repeat, min_time=min_time, systems=args.systems,
                     seed=args.seed, progress=sys.stderr)
    data["meta"]["wall_s"] = round(time.perf_counter() - start, 2)
    data["meta"]["command"] = "axisops " + " ".join(argv)
    print(bench.format_table(data), flush=True)
    print(f"(took {data['meta']['wall_s']:.1f} s)", flush=True)

    if args.json:
        bench.write_json(data, args.json)
        print(f"wrote {args.json}")
    if args.markdown:
        bench.write_markdown(data, args.markdown, command=data["meta"]["command"])
        print(f"wrote {args.markdown}")
    if args.plot:
        bench.plot(data, args.plot)
        print(f"wrote {args.plot}")
    failed = [r for r in data["results"] if "error" in r or r.get("check") == "MISMATCH"]
    return 1 if failed else 0


def _bench_cuda(args, parser, argv) -> int:
    from axisops.bench import device

    try:
        data = device.run(quick=args.quick, repeat=args.repeat, progress=sys.stderr,
                          dry=args.dry)
    except device.NoGPU as exc:
        parser.exit(1, f"axisops bench --device cuda: {exc}\n")
    peak = data["meta"]["bandwidth"]
    print(f"{data['meta']['gpu']}: peak {peak / 1e12:.2f} TB/s" if peak else data["meta"]["gpu"])
    print(device.format_table(data), flush=True)
    if args.markdown:
        device.write_markdown(data, args.markdown, "axisops " + " ".join(argv))
        print(f"wrote {args.markdown}")
    if args.json:
        from axisops.bench.report import write_json

        write_json(data, args.json)
        print(f"wrote {args.json}")
    return 1 if any("error" in r for r in data["rows"]) else 0


def _bench_torch(args, parser, argv) -> int:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        parser.exit(1, "axisops bench --torch: needs torch (pip install torch)\n")
    from axisops.bench import tensors

    data = tensors.run(quick=args.quick, repeat=args.repeat, min_time=args.min_time,
                       progress=sys.stderr)
    print(tensors.format_tables(data), flush=True)
    if args.markdown:
        tensors.write_markdown(data, args.markdown, "axisops " + " ".join(argv))
        print(f"wrote {args.markdown}")
    return 0


# --------------------------------------------------------------------------
# axisops warmup
#
# Each entry: operator name -> (how to call it, the layouts it takes, dtype rule).
# A call function takes (op, x, axis, np) and calls the operator once.  Layouts
# are built from one small 3-D array; each picks a different kernel path of the
# canonical (outer, n, inner) view:
#
#   last       axis -1 of a C-contiguous array      inner == 1, unit stride along n
#   middle     axis 1                               outer > 1 and inner > 1
#   first      axis 0                               outer == 1, parallel over inner
#   axes       axes (0, 2)                          several axes at once
#   all        axis None                            the flattened array
#   transposed axis -1 of x.transpose(2, 1, 0)      a strided axis, non-contiguous input
#
# The arrays are small (a few hundred elements) so the calls themselves cost
# nothing; all the time goes into compiling (or loading) the kernels.

_WARMUP_SHAPE = (6, 10, 12)
_ONE_AXIS = ("last", "middle", "first", "all", "transposed")
_ALL_LAYOUTS = ("last", "middle", "first", "axes", "all", "transposed")


def _layout(base, name):
    return {
        "last": (base, -1),
        "middle": (base, 1),
        "first": (base, 0),
        "axes": (base, (0, 2)),
        "all": (base, None),
        "transposed": (base.transpose(2, 1, 0), -1),
    }[name]


def _reduce_call(op, x, axis, np):
    op(x, axis)
    _flattened_calls(op, x, axis)


def _flattened_calls(op, x, axis):
    """The call on 1-D and 2-D views of C-contiguous *x* too: the compiled entries
    of the common reductions and scans (``axisops._fast``) are compiled per number of
    dimensions, and users' arrays are mostly 1-D and 2-D."""
    if x.flags.c_contiguous and (axis is None or axis in (0, -1)):
        op(x.reshape(-1), axis)
        op(x.reshape(-1, x.shape[-1]), axis)


def _arg_call(op, x, axis, np):
    op(x, axis)
    _flattened_calls(op, x, axis)
    op(x, axis, index_dtype=np.int32)
    op(x, axis, select_last_index=True)


def _scan_index_call(op, x, axis, np):
    op(x, axis)
    _flattened_calls(op, x, axis)
    op(x, axis, index_dtype=np.int32)


def _take_call(op, x, axis, np):
    n = x.size if axis is None else x.shape[axis]
    op(x, np.array([0, n - 1, 1], dtype=np.int64), axis)
    op(x, np.array([0, n - 1, 1], dtype=np.int32), axis)


def _take_along_call(op, x, axis, np):
    if axis is None:
        return
    idx = np.zeros(x.shape, dtype=np.int64)
    op(x, idx, axis)


def _scatter_call(op, x, axis, np):
    if axis is None:
        return
    idx = np.zeros(x.shape, dtype=np.int64)
    for reduce in (None, "add"):
        op(x, idx, x, axis, reduce=reduce)


def _gather_nd_call(op, x, axis, np):
    op(x, np.zeros((2, 1), dtype=np.int64))


def _unfold_call(op, x, axis, np):
    flat = x.reshape(-1)
    op(flat[:120].reshape(2, 3, 20), (2,))                      # 1-D windows
    op(flat[:120].reshape(2, 3, 4, 5), (2, 2))                  # 2-D
    op(flat[:120].reshape(2, 4, 5, 3), (2, 2), channels_last=True)
    op(flat[:120].reshape(2, 1, 3, 4, 5), (2, 2, 2))            # 3-D


def _fold_call(op, x, axis, np):
    flat = x.reshape(-1)
    op(flat[:2 * 12 * 20].reshape(2, 12, 20), (5, 6), (2, 2))
    op(flat[:2 * 20 * 12].reshape(2, 20, 12), (5, 6), (2, 2), channels_last=True)


def _nan_arg_call(op, x, axis, np):
    # all_nan_index: no slice of the warm-up arrays is all NaN, but the option's path
    # is the one data with NaN takes
    op(x, axis)
    _flattened_calls(op, x, axis)
    op(x, axis, index_dtype=np.int32, all_nan_index=-1)
    op(x, axis, select_last_index=True)


def _pool_call(op, x, axis, np):
    flat = x.reshape(-1)
    image = flat[:120].reshape(2, 3, 4, 5)
    op(flat[:120].reshape(2, 3, 20), (3,))                        # 1-D
    op(image, 2)                                                  # 2-D, stride = kernel
    op(image, (3, 3), stride=1, padding=1)                        # overlapping, padded
    op(flat[:120].reshape(2, 4, 5, 3), 2, channels_last=True)
    op(flat[:120].reshape(1, 2, 3, 4, 5), (2, 2, 2))             # 3-D
    if op.__name__ == "max_pool":
        op(image, 2, return_indices=True)


def _moving_call(op, x, axis, np):
    op(x, 3, axis)
    op(x, 3, axis, min_count=1)
    if x.flags.c_contiguous and axis in (0, -1):  # the compiled entry, per number of dimensions
        op(x.reshape(-1), 3, -1)
        op(x.reshape(-1, x.shape[-1]), 3, -1)


def _order_call(op, x, axis, np):
    """An order statistic along *axis*: lanes sorted whole, 16 at a time by a
    network, and (the flattened array) one long lane by radix."""
    name = op.__name__
    for a in (axis, None):
        if name in ("top_k", "kthvalue"):
            op(x, 2, a)
        elif name in ("partition", "argpartition"):
            op(x, 1, a)
        elif name in ("quantile", "nanquantile"):
            op(x, 0.3, a) if x.dtype != np.bool_ else op(x, 0.3, a, method="lower")
        elif name.startswith("moving_"):
            if a is not None:
                op(x, 3, a) if name != "moving_quantile" else op(x, 3, 0.5, a)
        else:
            op(x, a)


_FLOATS = ("float16", "float32", "float64")
#: The layouts of operators whose axis is one int, never None (the moving windows).
_ONE_AXIS_ONLY = ("last", "middle", "first", "transposed")

WARMUP_OPS = {
    "argmax": (_arg_call, _ALL_LAYOUTS, None),
    "argmin": (_arg_call, _ALL_LAYOUTS, None),
    "max": (_reduce_call, _ALL_LAYOUTS, None),
    "min": (_reduce_call, _ALL_LAYOUTS, None),
    "sum": (_reduce_call, _ALL_LAYOUTS, None),
    "prod": (_reduce_call, _ALL_LAYOUTS, None),
    "mean": (_reduce_call, _ALL_LAYOUTS, None),
    "cumsum": (_reduce_call, _ONE_AXIS, None),
    "cumprod": (_reduce_call, _ONE_AXIS, None),
    "cummax": (_scan_index_call, _ONE_AXIS, None),
    "cummin": (_scan_index_call, _ONE_AXIS, None),
    "logcumsumexp": (_reduce_call, _ONE_AXIS, _FLOATS),
    "take": (_take_call, _ONE_AXIS, None),
    "take_along_axis": (_take_along_call, ("last", "middle", "first", "transposed"), None),
    "scatter": (_scatter_call, ("last", "middle", "first", "transposed"), None),
    "gather_nd": (_gather_nd_call, ("last",), None),
    "unfold": (_unfold_call, ("last",), None),
    "fold": (_fold_call, ("last",), None),
    # missing values (axisops.missing)
    **{name: (_reduce_call, _ALL_LAYOUTS, None)
       for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
                    "count", "var", "std")},
    "nanargmax": (_nan_arg_call, _ALL_LAYOUTS, None),
    "nanargmin": (_nan_arg_call, _ALL_LAYOUTS, None),
    "nancumsum": (_reduce_call, _ONE_AXIS, None),
    "nancumprod": (_reduce_call, _ONE_AXIS, None),
    # window reductions (axisops.pool, axisops.moving)
    "max_pool": (_pool_call, ("last",), None),
    "avg_pool": (_pool_call, ("last",), None),
    **{name: (_moving_call, _ONE_AXIS_ONLY, None)
       for name in ("moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
                    "moving_min", "moving_argmax", "moving_argmin")},
    # order statistics (axisops.order, axisops.moving_order)
    **{name: (_order_call, ("last", "first"), None)
       for name in ("sort", "argsort", "top_k", "partition", "argpartition", "kthvalue",
                    "median", "nanmedian", "quantile", "nanquantile", "rank", "moving_median",
                    "moving_quantile", "moving_rank")},
}


def _warmup_array(np, dtype, rng):
    # Zeros and ones: valid in every dtype, and no sum or product can overflow
    # (the values do not matter to the compiler, only the dtype and layout).
    return rng.integers(0, 2, _WARMUP_SHAPE).astype(dtype)


def _warmup_groups(dtypes) -> list:
    """The dtypes split into groups of one element width, widest first.

    Kernels that move or compare bits are compiled per width (int32, uint32 and
    float32 share them), so one process per width compiles each of them once.
    """
    import numpy as np

    widths: dict = {}
    for d in dtypes:
        widths.setdefault(np.dtype(d).itemsize, []).append(d)
    return [widths[w] for w in sorted(widths, reverse=True)]


def _warmup_calls(ops, dtypes, verbose=False) -> list:
    """Run the warm-up calls of *ops* on *dtypes* in this process.

    Returns one ``(op, dtype, layout, seconds, error)`` row per call (error None
    when it worked); prints each call with *verbose*.
    """
    import numpy as np

    import axisops

    rng = np.random.default_rng(0)
    rows = []
    for dtype in dtypes:
        array = _warmup_array(np, dtype, rng)
        for name in ops:
            fn = getattr(axisops, name, None)
            call, layouts, allowed = WARMUP_OPS[name]
            if fn is None or (allowed is not None and dtype not in allowed):
                continue
            for layout in layouts:
                x, axis = _layout(array, layout)
                t0 = time.perf_counter()
                try:
                    call(fn, x, axis, np)
                    error = None
                except Exception as exc:
                    error = f"{type(exc).__name__}: {exc}"
                dt = time.perf_counter() - t0
                rows.append((name, dtype, layout, dt, error))
                if verbose:
                    print(f"  {name:<16} {dtype:<8} {layout:<10} {dt * 1e3:9.1f} ms", flush=True)
    return rows


def _warmup(args, parser) -> int:
    start = time.perf_counter()
    import concurrent.futures
    import multiprocessing
    import os

    import axisops

    ops = args.ops or list(WARMUP_OPS)
    unknown = [op for op in ops if op not in WARMUP_OPS]
    if unknown:
        parser.exit(2, f"axisops warmup: unknown operator(s) {', '.join(unknown)}; "
                       f"expected some of: {', '.join(WARMUP_OPS)}\n")
    dtypes = args.dtypes or list(WARMUP_DTYPES)
    unknown = [d for d in dtypes if d not in WARMUP_DTYPES]
    if unknown:
        parser.exit(2, f"axisops warmup: unknown dtype(s) {', '.join(unknown)}; "
                       f"expected some of: {', '.join(WARMUP_DTYPES)}\n")
    missing = [name for name in ops if getattr(axisops, name, None) is None]

    try:
        import numba

        cache = getattr(numba.config, "CACHE_DIR", None) or "__pycache__ folders next to the axisops sources"
    except Exception:  # pragma: no cover
        cache = "?"
    groups = _warmup_groups(dtypes)
    jobs = max(1, min(args.jobs or len(os.sched_getaffinity(0)), len(groups)))
    print(f"axisops warmup: {len(ops)} operators x {len(dtypes)} dtypes in {jobs} "
          f"process{'es' if jobs > 1 else ''} (cache: {cache})", flush=True)

    # Every process compiles into the same on-disk cache (Numba writes its files
    # atomically); one dtype width per task, so no kernel is compiled twice.
    if jobs == 1:
        rows = [row for group in groups for row in _warmup_calls(ops, group, args.verbose)]
    else:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with concurrent.futures.ProcessPoolExecutor(
                jobs, mp_context=multiprocessing.get_context(method)) as pool:
            parts = pool.map(_warmup_calls, [ops] * len(groups), groups, [args.verbose] * len(groups))
            rows = [row for part in parts for row in part]

    failures = [f"{name}({dtype}, {layout}): {error}" for name, dtype, layout, _, error in rows if error]
    total_calls = 0
    for name in ops:
        mine = [r for r in rows if r[0] == name and r[4] is None]
        if not mine:
            continue
        total_calls += len(mine)
        slowest = max(mine, key=lambda r: r[3])
        print(f"  {name:<16} {len(mine):4d} calls  {sum(r[3] for r in mine):7.2f} s"
              f"  (slowest: {slowest[1]}/{slowest[2]}, {slowest[3]:.2f} s)", flush=True)
    if missing:
        print(f"  not in this version of axisops (skipped): {', '.join(missing)}")
    for failure in failures:
        print(f"  FAILED {failure}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    print(f"warmed {total_calls} calls in {elapsed:.1f} s"
          + (f"; {len(failures)} failed" if failures else ""), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":  # python -m axisops.cli
    sys.exit(main())

"""The `axisops` command line: help, version, a tiny bench, warmup.

Runs `axisops.cli.main` in-process on tiny arrays so the whole file takes seconds.
Speed itself is never asserted here; only that the machinery measures and reports.
"""
import importlib.util
import json
import sys

import numpy as np
import pytest

import axisops
from axisops import bench, cli

TINY = "4,8,16"


def test_import_axisops_cli_is_cheap():
    # The CLI module must not pull in the heavy optional peers at import.
    import subprocess

    code = (
        "import sys, axisops.cli; "
        "print(','.join(m for m in ('torch', 'onnxruntime', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "bench" in out and "warmup" in out and "--version" in out


def test_bench_help_lists_options(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for option in ("--quick", "--ops", "--json", "--plot", "--repeat", "--markdown"):
        assert option in out
    assert "--shape" not in out  # a hidden test option


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"axisops {axisops.__version__}"


def test_no_command_prints_usage(capsys):
    assert cli.main([]) == 2
    assert "usage: axisops" in capsys.readouterr().out


def _available_systems():
    return [s for s, reason in bench.available_systems().items() if reason is None]


#: The systems of the gather, scan and window workloads (bottleneck and numbagg
#: have reductions only).
TENSOR_SYSTEMS = ("axisops", "numpy", "torch", "onnxruntime")


def _tensor_systems():
    return [s for s in _available_systems() if s in TENSOR_SYSTEMS]


#: The operators of the tiny bench's default run: one of each kind of row the
#: report has (a peer missing for an axis tuple, a NaN workload, ONNX without
#: channels_last, numbagg without moving_max, NumPy's values-only cummax). Every
#: workload runs in CI's main command (``axisops bench --quick``, which fails on an
#: error or a mismatch) and here under the exhaustive switch: compiling them all
#: took this test 86-240 s of the CI's time.
TINY_OPS = "argmax,sum,cummax,nansum,max_pool,moving_max,take"


def test_bench_tiny_json(tmp_path, capsys, exhaustive):
    path = tmp_path / "bench.json"
    ops = [] if exhaustive else ["--ops", TINY_OPS]
    rc = cli.main(["bench", "--shape", TINY, "--repeat", "2", "--min-time", "0", "--json",
                   str(path), *ops])
    captured = capsys.readouterr()
    workloads = bench.select(None if exhaustive else TINY_OPS.split(","))
    assert rc == 0, captured.out + captured.err
    data = json.loads(path.read_text())

    systems = _available_systems()
    assert data["meta"]["shape"] == [4, 8, 16]
    assert data["meta"]["systems"] == systems
    assert data["meta"]["cores"] >= 1 and data["meta"]["versions"]["numpy"]
    rows = {(r["workload"], r["system"]): r for r in data["results"]}
    assert {r["system"] for r in data["results"]} == \
        set(systems) & {s for w in workloads for s in w.systems}
    for workload in workloads:
        for system in systems:
            if system not in workload.systems:  # e.g. ONNX has no cummax
                assert (workload.name, system) not in rows
                continue
            if (workload.name, system) not in rows:  # n/a: bottleneck sums one axis only,
                # and the peers lack some nan operators (torch all but nansum and nanmean)
                assert (system == "bottleneck" and "axis=(" in workload.name) or (
                    "10% NaN" in workload.name and system in ("torch", "bottleneck", "numbagg")) \
                    or (system == "onnxruntime" and "channels_last" in workload.name) \
                    or (system == "numbagg" and workload.name.startswith("moving_max"))
                continue
            row = rows[(workload.name, system)]
            assert "error" not in row
            assert len(row["times_ms"]) == 2 and all(t > 0 for t in row["times_ms"])
            assert row["best_ms"] == min(row["times_ms"])
            assert row["gb_per_s"] > 0 and row["bytes"] > 4 * 8 * 16 * 4
            assert row["check"] in ("ok", "reference")
            assert row["ratio_to_best_peer"] > 0
    # The table on stdout, one progress line per workload/system on stderr.
    assert "argmax axis=0" in captured.out and "vs best peer" in captured.out
    assert captured.out.count("-> axisops is") == len(workloads)
    for workload in workloads:
        for system in systems:
            if (workload.name, system) in rows:
                assert f"{workload.name:<18} {system:<12} best" in captured.err
    assert "(note: NumPy (np.maximum.accumulate) computes the values only" in captured.out


def test_bench_ops_filter_and_markdown(tmp_path, capsys):
    md = tmp_path / "BENCH.md"
    path = tmp_path / "bench.json"
    rc = cli.main(["bench", "--shape", TINY, "--repeat", "1", "--min-time", "0", "--ops", "sum",
                   "--systems", "axisops,numpy", "--json", str(path), "--markdown", str(md)])
    assert rc == 0
    data = json.loads(path.read_text())
    assert {r["op"] for r in data["results"]} == {"sum"}
    assert {r["system"] for r in data["results"]} == {"axisops", "numpy"}
    text = md.read_text()
    assert text.startswith("# Benchmarks")
    assert "do not edit by hand" in text
    assert "| sum axis=1 | **axisops** |" in text and "| sum axis=(0, 2) | numpy |" in text
    assert f"axisops {axisops.__version__}" in text and "numba" in text
    assert data["meta"]["cpu"] in text
    assert data["meta"]["vector"] in ("AVX-512", "AVX2", "AVX", "SSE4.2", "NEON", "unknown")
    assert f"({data['meta']['vector']})" in text  # the vector width beside the CPU
    assert "unfold and fold" not in text  # no window workload ran


def test_bench_workloads_and_operator_names():
    names = [w.name for w in bench.WORKLOADS]
    assert len(set(names)) == len(names)
    for name in ("argmax axis=0", "sum axis=(0, 2)", "max axis=-1",
                 "cummax axis=1", "cummax axis=-1", "cumsum axis=1",
                 "take axis=1", "take_along_axis axis=1", "scatter add axis=1",
                 "unfold 3x3", "unfold 3x3 channels_last", "fold 3x3"):
        assert name in names
    assert bench.operator_names() == ["argmax", "sum", "max", "cummax", "cumsum",
                                      "take", "take_along_axis", "scatter", "unfold", "fold",
                                      "nansum", "nanmean", "nanstd", "nanmax", "nanargmax",
                                      "count", "nancumsum", "max_pool", "avg_pool",
                                      "moving_mean", "moving_max", "moving_std", "xarray",
                                      "sort", "argsort", "median", "nanmedian", "quantile",
                                      "top_k", "kthvalue", "rank", "moving_median",
                                      "moving_rank", "moving_quantile"]
    xarray = bench.select(["xarray"])  # the accessor on a DataArray against xarray's own
    assert [w.name for w in xarray] == ["xarray mean dim=time, 10% NaN",
                                        "xarray std dim=lon, 10% NaN",
                                        "xarray idxmax dim=time, 10% NaN"]
    assert all(set(w.systems) == {"axisops", "numpy", "xarray"} and w.note for w in xarray)
    (nanargmax,) = bench.select(["nanargmax"])  # on data with NaN, every peer's nan-function
    assert nanargmax.name == "nanargmax axis=1, 10% NaN"
    assert set(nanargmax.systems) == {"axisops", "numpy", "torch", "bottleneck", "numbagg"}
    tensor_systems = set(TENSOR_SYSTEMS)
    for op in ("take", "take_along_axis", "scatter"):
        (workload,) = bench.select([op])
        assert set(workload.systems) == tensor_systems and workload.note
    # bottleneck and numbagg: the reductions (their nan-functions on NaN-free data)
    assert all(set(w.systems) == set(bench.SYSTEMS) - {"xarray", "pandas", "scipy"}
               for w in bench.select(["argmax", "sum"]))
    cummax = bench.select(["cummax"])
    assert [w.name for w in cummax] == ["cummax axis=1", "cummax axis=-1"]
    assert set(cummax[0].systems) == {"axisops", "numpy", "torch"}  # no ONNX operator
    assert cummax[0].full_reference == "torch" and "values only" in cummax[0].note
    assert set(bench.select(["cumsum"])[0].systems) == tensor_systems
    unfolds = bench.select(["unfold"])  # ONNX has no unfold operator
    assert [w.name for w in unfolds] == ["unfold 3x3", "unfold 3x3 channels_last"]
    assert all(set(w.systems) == {"axisops", "numpy", "torch"} and w.note for w in unfolds)
    (fold,) = bench.select(["fold"])
    assert set(fold.systems) == tensor_systems and "Col2Im" in fold.note
    assert fold.check is bench.float32_sum_check


def test_bench_scan_workloads_run_tiny():
    data = bench.run(bench.select(["cummax", "cumsum"]), shape=(2, 3, 4), repeat=1,
                     systems=["axisops", "numpy"], progress=None)
    rows = {(r["workload"], r["system"]): r for r in data["results"]}
    assert set(rows) == {(name, system)
                         for name in ("cummax axis=1", "cummax axis=-1", "cumsum axis=1")
                         for system in ("axisops", "numpy")}
    for (_, system), row in rows.items():
        assert "error" not in row, row
        assert row["check"] == ("reference" if system == "numpy" else "ok"), row
    # Bytes moved count what each system writes: values and int64 indices for
    # axisops' cummax, values only for NumPy's maximum.accumulate.
    n = 2 * 3 * 4
    assert rows[("cummax axis=1", "axisops")]["bytes"] == n * (4 + 4 + 8)
    assert rows[("cummax axis=1", "numpy")]["bytes"] == n * (4 + 4)
    assert rows[("cumsum axis=1", "axisops")]["bytes"] == n * (4 + 4)
    assert set(data["meta"]["notes"]) == {"cummax axis=1", "cummax axis=-1"}


def test_bench_cli_scan_ops(tmp_path, capsys):
    path = tmp_path / "bench.json"
    rc = cli.main(["bench", "--shape", TINY, "--repeat", "1", "--min-time", "0",
                   "--ops", "cummax,cumsum", "--json", str(path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out + captured.err
    data = json.loads(path.read_text())
    assert {r["op"] for r in data["results"]} == {"cummax", "cumsum"}
    assert all(r["check"] in ("ok", "reference") for r in data["results"])
    if "torch" in _available_systems():  # axisops' indices were checked against torch's
        row = next(r for r in data["results"]
                   if r["workload"] == "cummax axis=-1" and r["system"] == "axisops")
        assert row["checked_against"] == ["numpy", "torch"]


GATHER_OPS = ["take", "take_along_axis", "scatter"]


def test_bench_gather_workloads_run_tiny():
    systems = _tensor_systems()
    data = bench.run(bench.select(GATHER_OPS), shape=(2, 3, 4), repeat=1, systems=systems,
                     progress=None)
    rows = {(r["workload"], r["system"]): r for r in data["results"]}
    names = ("take axis=1", "take_along_axis axis=1", "scatter add axis=1")
    assert set(rows) == {(name, system) for name in names for system in systems}
    for (_, system), row in rows.items():
        assert "error" not in row, row
        assert row["check"] == ("reference" if system == "numpy" else "ok"), row
    # Bytes: take reads the rows its 256 int64 indices pick (not all of x) and
    # writes as many; take_along_axis reads x and int64 indices of x's shape;
    # scatter reads the zeros, the indices and the updates.
    n = 2 * 3 * 4
    picked = 2 * 256 * 4
    for system in systems:
        assert rows[("take axis=1", system)]["bytes"] == 256 * 8 + picked * 4 + picked * 4
        assert rows[("take_along_axis axis=1", system)]["bytes"] == n * (4 + 8 + 4)
        assert rows[("scatter add axis=1", system)]["bytes"] == n * (4 + 8 + 4 + 4)
    assert set(names) <= set(data["meta"]["notes"])


@pytest.mark.parametrize("op", GATHER_OPS)
def test_bench_gather_setup_indices(op):
    # int64, in range, the same whichever generator makes the values (fixed seed).
    (workload,) = bench.select([op])
    shape = (3, 5, 7)
    first = workload.setup(shape, np.random.default_rng(1))
    second = workload.setup(shape, np.random.default_rng(2))
    indices = first[1]
    assert indices.dtype == np.int64
    assert indices.shape == ((256,) if op == "take" else shape)
    assert indices.min() >= 0 and indices.max() < shape[1]
    np.testing.assert_array_equal(indices, second[1])
    assert first[0].dtype == np.float32 and first[0].shape == shape
    if op == "scatter":  # zeros, indices, updates
        assert not first[0].any() and first[2].dtype == np.float32 and first[2].shape == shape


def test_bench_cli_gather_ops(tmp_path, capsys):
    path = tmp_path / "bench.json"
    rc = cli.main(["bench", "--shape", TINY, "--repeat", "1", "--min-time", "0",
                   "--ops", "take,take_along_axis,scatter", "--json", str(path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out + captured.err
    data = json.loads(path.read_text())
    assert {r["op"] for r in data["results"]} == set(GATHER_OPS)
    assert all(r["check"] in ("ok", "reference") for r in data["results"])
    assert "scatter add axis=1" in captured.out and "np.add.at" in captured.out


WINDOW_OPS = ["unfold", "fold"]
WINDOW_NAMES = ("unfold 3x3", "unfold 3x3 channels_last", "fold 3x3")


def test_bench_window_shapes():
    # The window workloads use their own 4-D images, not the bench's 3-D shape.
    assert bench.window_image_shape(bench.FULL_SHAPE) == (8, 64, 56, 56)
    assert bench.window_image_shape(bench.QUICK_SHAPE) == (2, 32, 28, 28)
    assert bench.window_image_shape((4, 8, 16)) == (4, 8, 16, 16)
    unfold, unfold_last, fold = bench.select(WINDOW_OPS)
    rng = np.random.default_rng(0)
    (x,) = unfold.setup((2, 3, 5), rng)
    assert x.shape == (2, 3, 5, 5) and x.dtype == np.float32
    (x,) = unfold_last.setup((2, 3, 5), rng)
    assert x.shape == (2, 5, 5, 3)
    cols, size = fold.setup((2, 3, 5), rng)
    assert cols.shape == (2, 27, 25) and cols.dtype == np.float32
    assert size.tolist() == [5, 5]
    for workload in (unfold, fold):
        assert "(8, 64, 56, 56)" in workload.note and "in the full bench" in workload.note
        assert "(2, 32, 28, 28) with --quick" in workload.note
    assert "8x576x3136" in fold.note


def test_bench_order_workloads_and_quick_selection():
    from axisops.bench import order

    names = [w.name for w in order.ORDER_WORKLOADS]
    for name in ("sort of a vector", "sort axis=0 float64", "argsort axis=1",
                 "median of the whole vector", "nanmedian axis=0, 10% NaN",
                 "quantile q=[0.1, 0.5, 0.9] axis=-1", "top_k k=1000 of a vector",
                 "top_k k=10 along rows", "kthvalue k=100 axis=-1", "rank axis=-1, 10% NaN",
                 "moving_median window=100", "moving_quantile window=100 q=0.9"):
        assert name in names
    # --quick runs every other family's workloads and a few of this one's
    quick = bench.select(quick=True)
    assert [w.name for w in quick if w in order.ORDER_WORKLOADS] == [
        n for n in names if n in order.QUICK_NAMES]
    assert len(order.QUICK_NAMES) <= 4 and order.QUICK_NAMES <= set(names)
    assert [w for w in bench.WORKLOADS if w not in order.ORDER_WORKLOADS] == [
        w for w in quick if w not in order.ORDER_WORKLOADS]
    # naming an operator runs all of its workloads, --quick or not
    assert len(bench.select(["median"], quick=True)) == 3
    # the family's arrays: the full bench's, --quick's, and a test shape's
    assert order.order_shapes(bench.FULL_SHAPE)["matrix"] == (1024, 1024)
    assert order.order_shapes(bench.QUICK_SHAPE)["vector"] == (1 << 16,)
    assert order.order_shapes((4, 8, 16)) == {"vector": (512,), "matrix": (32, 16),
                                             "rows": (32, 16), "moving": (32, 16)}
    (top,) = [w for w in order.ORDER_WORKLOADS if w.name == "top_k k=1000 of a vector"]
    (x,) = top.setup((4, 8, 16), np.random.default_rng(0))
    assert x.shape == (4000,) and x.dtype == np.float32  # k <= n at every shape
    x = np.random.default_rng(1).random((3, 50))
    x[0, 3] = np.nan
    assert np.allclose(order.numpy_rank(x), axisops.rank(x), equal_nan=True)


def _loop_unfold(x, k, p):
    """im2col by its definition: out[n, c*k*k + i*k + j, y*W + x] = padded x at (y+i, x+j)."""
    n, c, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    ho, wo = h + 2 * p - k + 1, w + 2 * p - k + 1
    out = np.empty((n, c * k * k, ho * wo), dtype=x.dtype)
    for ci in range(c):
        for i in range(k):
            for j in range(k):
                row = ci * k * k + i * k + j
                for y in range(ho):
                    out[:, row, y * wo:(y + 1) * wo] = padded[:, ci, y + i, j:j + wo]
    return out


def test_bench_numpy_window_peers_are_right():
    # NumPy is the reference every system is checked against: check it by definition.
    rng = np.random.default_rng(3)
    x = rng.random((2, 3, 5, 6), dtype=np.float32)
    expected = _loop_unfold(x, 3, 1)
    np.testing.assert_array_equal(bench.numpy_unfold(x, 3, 1), expected)
    # channels_last: (N, H, W, C) in, (N, L, k*k*C) out with column kernel offset * C + c.
    last = bench.numpy_unfold(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), 3, 1, True)
    np.testing.assert_array_equal(last, expected.reshape(2, 3, 9, 30).transpose(0, 3, 2, 1)
                                  .reshape(2, 30, 27))
    # fold is the adjoint of unfold: <unfold(x), g> == <x, fold(g)>.
    g = rng.random(expected.shape)
    folded = bench.numpy_fold(g, (5, 6), 3, 1)
    assert folded.shape == x.shape
    np.testing.assert_allclose(np.vdot(expected.astype(np.float64), g),
                               np.vdot(x.astype(np.float64), folded), rtol=1e-12)
    ones = bench.numpy_fold(np.ones((1, 9, 4), dtype=np.float32), (2, 2), 3, 1)
    assert ones.tolist() == [[[[4.0, 4.0], [4.0, 4.0]]]]  # every window covers a 2x2 image


def test_bench_window_workloads_run_tiny():
    systems = _tensor_systems()
    data = bench.run(bench.select(WINDOW_OPS), shape=(2, 3, 5), repeat=1, systems=systems,
                     progress=None)
    rows = {(r["workload"], r["system"]): r for r in data["results"]}
    expected = {(name, s) for name in WINDOW_NAMES for s in systems
                if s != "onnxruntime" or name == "fold 3x3"}  # ONNX has no unfold
    assert set(rows) == expected
    for (_, system), row in rows.items():
        assert "error" not in row, row
        assert row["check"] == ("reference" if system == "numpy" else "ok"), row
    # Bytes: the image (2, 3, 5, 5) and its 3x3 unfold (2, 27, 25), float32, each way.
    image, cols = 2 * 3 * 5 * 5 * 4, 2 * 27 * 25 * 4
    for system in systems:
        if system != "onnxruntime":
            assert rows[("unfold 3x3", system)]["bytes"] == image + cols
            assert rows[("unfold 3x3 channels_last", system)]["bytes"] == image + cols
        assert rows[("fold 3x3", system)]["bytes"] == cols + image
    assert set(WINDOW_NAMES) <= set(data["meta"]["notes"])


def test_bench_window_wrong_layout_is_a_mismatch():
    # channels_last results in the other column order (c*9 + k) are a MISMATCH.
    (workload,) = [w for w in bench.select(["unfold"]) if w.name.endswith("channels_last")]
    right = workload.systems["numpy"]

    def wrong(x):
        run = right(x)
        n, c = x.shape[0], x.shape[3]
        return lambda: run().reshape(n, -1, 9, c).transpose(0, 1, 3, 2).reshape(n, -1, 9 * c)

    fake = bench.Workload(name="fake unfold", op="fake", setup=workload.setup,
                          systems={"axisops": wrong, "numpy": right}, check=workload.check)
    data = bench.run([fake], shape=(2, 3, 4), repeat=1, systems=["axisops", "numpy"],
                     progress=None)
    assert {r["system"]: r["check"] for r in data["results"]} == {"axisops": "MISMATCH",
                                                                  "numpy": "reference"}


def test_bench_cli_window_ops(tmp_path, capsys):
    path = tmp_path / "bench.json"
    rc = cli.main(["bench", "--shape", TINY, "--repeat", "1", "--min-time", "0",
                   "--ops", "unfold,fold", "--json", str(path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out + captured.err
    data = json.loads(path.read_text())
    assert {r["op"] for r in data["results"]} == set(WINDOW_OPS)
    assert all(r["check"] in ("ok", "reference") for r in data["results"])
    for name in WINDOW_NAMES:
        assert name in captured.out
    assert "ONNX has no unfold" in captured.out and "Col2Im" in captured.out
    # The header says which image the window workloads used (TINY 4,8,16: (4, 8, 16, 16)).
    assert "unfold and fold: a float32 image (N, C, H, W) = (4, 8, 16, 16) instead" in captured.out


def test_float32_sum_check():
    expected = np.array([[1.0, 1e4, -3.0], [0.0, 2.5, 7.0]], dtype=np.float32)
    reordered = expected * np.float32(1 + 2e-7)  # the last bits of another summation order
    assert bench.float32_sum_check(reordered, expected)
    near_zero = expected.copy()
    near_zero[1, 0] = 1e-2  # within 1e-5 * max|expected| of a sum that cancelled to 0
    assert bench.float32_sum_check(near_zero, expected)
    wrong = expected.copy()
    wrong[0, 1] += 1  # 1e4 + 1: 1e-4 off, ten times the tolerance
    assert not bench.float32_sum_check(wrong, expected)
    wrong = expected.copy()
    wrong[1, 0] = 0.5  # far above the absolute tolerance of 0.1
    assert not bench.float32_sum_check(wrong, expected)
    assert not bench.float32_sum_check(expected[:1], expected)


def test_exact_check():
    x = np.array([[0.25, 0.5]], dtype=np.float32)
    assert bench.exact_check(x.copy(), x)
    assert not bench.exact_check(x + np.float32(1e-7), x)
    assert not bench.exact_check(x.T, x)


def test_bench_scatter_wrong_sum_is_a_mismatch():
    # A sum off by more than float32 rounding is a MISMATCH under the scatter check.
    (scatter,) = bench.select(["scatter"])
    right = scatter.systems["numpy"]

    def off(*inputs):
        run = right(*inputs)
        return lambda: run() * np.float32(1.001)

    workload = bench.Workload(name="fake scatter", op="fake", setup=scatter.setup,
                              systems={"axisops": off, "numpy": right},
                              check=scatter.check)
    data = bench.run([workload], shape=(2, 3, 4), repeat=1, systems=["axisops", "numpy"],
                     progress=None)
    assert {r["system"]: r["check"] for r in data["results"]} == {"axisops": "MISMATCH",
                                                                  "numpy": "reference"}


def test_default_check_tuple_against_values():
    values = np.array([[1.0, 3.0, 3.0]], dtype=np.float32)
    indices = np.array([[0, 1, 2]])
    assert bench.default_check((values, indices), values)
    assert not bench.default_check((values + 1, indices), values)
    assert bench.default_check((values, indices), (values, indices))
    assert not bench.default_check((values, indices + 1), (values, indices))
    assert not bench.default_check((), values)


def test_bench_full_reference_catches_wrong_indices():
    # A system whose values are right but whose indices differ from the full
    # reference's is a MISMATCH, although NumPy (values only) agrees with it.
    peer = next((s for s in ("torch", "onnxruntime") if s in _available_systems()), None)
    if peer is None:
        pytest.skip("needs torch or onnxruntime to be importable")

    def cummax(x):
        values = np.maximum.accumulate(x, axis=-1)
        indices = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
        return values, indices

    workload = bench.Workload(
        name="fake cummax", op="fake", setup=bench.random_float32,
        systems={"axisops": lambda x: lambda: (cummax(x)[0], cummax(x)[1] * 0),
                 "numpy": lambda x: lambda: cummax(x)[0],
                 peer: lambda x: lambda: cummax(x)},
        full_reference=peer,
    )
    data = bench.run([workload], shape=(2, 3, 4), repeat=1,
                     systems=["axisops", "numpy", peer], progress=None)
    checks = {r["system"]: r["check"] for r in data["results"]}
    assert checks == {"axisops": "MISMATCH", "numpy": "reference", peer: "ok"}


def test_bench_unknown_op_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--shape", TINY, "--ops", "argmax,nosuchop"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "nosuchop" in err and "argmax" in err


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="matplotlib is not installed (it is not a test dependency)")
def test_bench_plot_writes_png(tmp_path, capsys):
    png = tmp_path / "ratios.png"
    rc = cli.main(["bench", "--shape", TINY, "--repeat", "1", "--min-time", "0", "--ops", "argmax",
                   "--systems", "axisops,numpy", "--plot", str(png)])
    assert rc == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 5000


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_warmup_runs(capsys, jobs):
    rc = cli.main(["warmup", "--ops", "argmax,sum", "--dtypes", "float32,uint16,bool", "--jobs", jobs])
    out = capsys.readouterr().out
    assert f"in {jobs} process" in out
    assert rc == 0, out
    assert "argmax" in out and "sum" in out
    # argmax: 3 dtypes x 6 layouts; sum: 3 dtypes x 6 layouts.
    assert "  argmax             18 calls" in out
    assert "  sum                18 calls" in out
    assert "warmed 36 calls in" in out


def test_warmup_groups_dtypes_by_width():
    assert cli._warmup_groups(["bool", "float32", "int16", "uint32", "float16"]) == [
        ["float32", "uint32"], ["int16", "float16"], ["bool"]]


def test_warmup_unknown_dtype_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["warmup", "--dtypes", "complex64"])
    assert exc.value.code == 2
    assert "complex64" in capsys.readouterr().err


def test_bench_device_cuda_says_when_there_is_no_gpu(capsys):
    # CI has no GPU (the CUDA simulator is on): a clear message and status 1
    from axisops.bench import device

    try:
        device._check_gpu()
    except device.NoGPU:
        pass
    else:
        pytest.skip("a CUDA GPU is present: the bench would run")
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--device", "cuda", "--quick"])
    assert exc.value.code == 1
    assert "axisops bench --device cuda:" in capsys.readouterr().err


def test_bench_device_table_and_report(tmp_path):
    from axisops.bench import device

    data = {"meta": {"gpu": "Test GPU", "bandwidth": 2e12, "repeat": 3, "quick": True,
                     "machine": {"cpu": "cpu", "cores": 2}, "versions": {"axisops": "0"},
                     "torch_cuda": "13.0", "date": "2026-01-01T00:00:00+00:00"},
            "rows": [{"workload": "cummax axis=0", "shape": (1024, 256), "bytes": 3 << 20,
                      "axisops_s": 2e-5, "axisops_host_s": 3e-5,
                      "peers": {"torch": 1e-4, "cupy": 4e-5},
                      "peers_host": {"torch": 1.2e-4, "cupy": 5e-5}}]}
    table = device.format_table(data)
    # no copy bandwidth measured: the fraction of the peak
    assert "| axisops GB/s | of peak |" in table
    assert "| cummax axis=0 | (1024, 256) | 20.0 | 30.0 | 157.29 | 7.9% |" in table
    assert "torch 100.0 / 120.0 us (0.20x), cupy 40.0 / 50.0 us (0.50x)" in table
    path = tmp_path / "cuda.md"
    device.write_markdown(data, str(path), "axisops bench --device cuda")
    text = path.read_text()
    assert text.startswith("# axisops on CUDA: Test GPU") and "2.00 TB/s" in text and table in text


def test_bench_device_workloads_run_and_agree_on_the_cpu():
    # the CUDA bench's workloads, made on the CPU: every call runs once, and
    # axisops' result matches each peer's (the bench's own code, without a GPU)
    import torch

    from axisops.bench import device

    names = []
    for w in device.workloads(torch, quick=True, device="cpu", tiny=True):
        ours = w["axisops"]()
        for call in w["peers"].values():
            theirs = call()
            if "cummax" in w["workload"]:  # (values, indices): the values
                pairs = [(ours[0], theirs.values)]
            elif isinstance(ours, tuple):  # the convolution's (dx, dW)
                pairs = list(zip(ours, theirs))
            else:
                pairs = [(ours, theirs)]
            for a, b in pairs:  # float sums may be associated otherwise: scaled bounds
                scale = float(b.abs().max()) if b.is_floating_point() and b.numel() else 1.0
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5 * max(1.0, scale))
        assert w["bytes"] > 0
        names.append(w["workload"])
    assert {"take rows (axis=0)", "take_along_axis axis=0", "scatter add, shared rows",
            "scatter add, per element", "unfold 3x3", "fold 3x3",
            "conv 3x3 backward (dx, dW)"} <= set(names)


def test_bench_window_reductions_run_tiny():
    # pooling against torch and ONNX Runtime, the moving windows against bottleneck,
    # numbagg and pandas: every system that is installed runs and agrees with NumPy
    from axisops.bench.systems import available_systems

    usable = [s for s, why in available_systems().items() if why is None]
    ops = ["max_pool", "avg_pool", "moving_mean", "moving_max", "moving_std"]
    data = bench.run(bench.select(ops), shape=(2, 3, 1100), repeat=1, systems=usable,
                     progress=None)
    rows = {(r["workload"], r["system"]): r for r in data["results"]}
    names = {w.name for w in bench.select(ops)}
    assert {name for name, _ in rows} == names
    assert "max_pool 3x3 channels_last" in names and "moving_mean window=1000" in names
    for row in rows.values():
        assert "error" not in row, row
        assert row["check"] in ("reference", "ok"), row
    for name in names:
        assert (name, "axisops") in rows and (name, "numpy") in rows
        if name.startswith("moving") and "pandas" in usable:
            assert (name, "pandas") in rows
    assert bench.numpy_pool(np.arange(16.0).reshape(1, 1, 4, 4), np.max, 3, 2, 1,
                            False).tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]

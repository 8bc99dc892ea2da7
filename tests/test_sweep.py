"""`axisops bench --sweep`: the size sweep's plan, inputs, checks, runner and reports.

The sweep itself runs here only on a tiny plan (two operators, sizes 1e3 and 1e4,
float32, two layouts, axisops and NumPy), so the file takes seconds.  Speed is
never asserted; only that the machinery measures, checks and reports.
"""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from axisops import cli
from axisops.bench import sweep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY_OPS = ["sum", "take"]
TINY_SIZES = [1000, 10_000]
TINY_LAYOUTS = ["1d", "wide-1"]
SYSTEMS = ["axisops", "numpy"]


@pytest.fixture(scope="module")
def tiny():
    """One tiny sweep, shared by the tests that read its results."""
    points = sweep.plan(TINY_OPS, TINY_SIZES, ["float32"], TINY_LAYOUTS)
    return sweep.run(points, systems=SYSTEMS, min_time=0.0, min_samples=2, progress=None)


# --------------------------------------------------------------------------
# The plan


def test_every_public_operator_is_swept():
    import axisops

    assert set(sweep.OPS) == set(sweep.SPECS)
    public = {"sum", "prod", "mean", "max", "min", "argmax", "argmin", "cumsum", "cumprod",
              "cummax", "cummin", "logcumsumexp", "take", "take_along_axis", "gather_nd",
              "scatter", "unfold", "fold", "max_pool", "avg_pool", "moving_mean", "moving_max",
              "moving_std", "sort", "median", "top_k"}
    assert set(sweep.OPS) == public
    for op in sweep.OPS:
        spec = sweep.SPECS[op]
        assert callable(getattr(axisops, op))
        assert spec.plot_layout in spec.layouts
        assert len(spec.quick_layouts) == 2 and set(spec.quick_layouts) <= set(spec.layouts)


def test_plan_full_sizes_dtypes_and_limits():
    points = sweep.plan()
    sizes = [p.size for p in points]
    assert sizes == sorted(sizes)  # a size predicts the next one's time
    assert min(sizes) <= sweep.SMALL_MAX and max(sizes) >= 10**8
    assert any(p.size == 65536 for p in points)
    assert {p.dtype for p in points} == {"float32", "float64", "int32"}
    top = [p for p in points if p.size > sweep.ALL_DTYPES_MAX_SIZE]
    assert top and {p.dtype for p in top} == {"float32"}
    assert {p.layout for p in top} <= set(sweep.TOP_LAYOUTS)
    assert all(p.size <= sweep.WINDOW_MAX_SIZE for p in points if p.op in ("unfold", "fold"))
    assert {p.op for p in points} == set(sweep.OPS)
    assert len(set(points)) == len(points)


def test_plan_quick_and_filters():
    quick = sweep.plan(sizes=sweep.QUICK_SIZES, dtypes=sweep.QUICK_DTYPES, quick=True)
    assert max(p.size for p in quick) <= 1 << 20
    float32 = [op for op in sweep.OPS if "float32" in (sweep.SPECS[op].dtypes or ("float32",))]
    assert set(sweep.OPS) - set(float32) == {"moving_std"}  # float64 only
    assert not [p for p in quick if p.layout == "wide-1-w1000"]  # not a quick layout
    assert len(quick) == len(float32) * 2 * len(sweep.QUICK_SIZES)
    few = sweep.plan(["sum", "gather_nd"], [1024], ["int32"], ["1d", "rows64"])
    assert [(p.op, p.layout) for p in few] == [("sum", "1d"), ("gather_nd", "rows64")]


POOL_OPS = ["max_pool", "avg_pool"]
MOVING_OPS = ["moving_mean", "moving_max", "moving_std"]


def test_plan_pooling_and_moving_windows():
    points = sweep.plan(POOL_OPS + MOVING_OPS)
    assert {p.op for p in points} == set(POOL_OPS + MOVING_OPS)
    assert max(p.size for p in points) == sweep.WINDOW_MAX_SIZE  # no 100M
    for op in POOL_OPS + MOVING_OPS:
        mine = [p for p in points if p.op == op]
        spec = sweep.SPECS[op]
        assert {p.dtype for p in mine} == set(spec.dtypes)
        assert ("float32" in spec.dtypes) == (op != "moving_std")
        assert len(spec.dtypes) <= 2  # the sweep's time: few dtypes, few layouts
        assert {p.size for p in mine} == {s for s in sweep.FULL_SIZES if s <= sweep.WINDOW_MAX_SIZE}
    for op in POOL_OPS:
        assert {p.layout for p in points if p.op == op} == {"nchw", "nhwc"}
        assert sweep.SPECS[op].quick_layouts == ("nchw", "nhwc")
    for op in MOVING_OPS:
        layouts = sweep.SPECS[op].layouts
        assert "tall-1" not in layouts  # an axis of 4: every window longer than it
        assert sweep.SPECS[op].quick_layouts == ("wide-1", "wideT-1")
        assert {layouts[p.layout].window for p in points if p.op == op} == (
            {20, 1000} if op == "moving_mean" else {20})
    long_window = [p for p in points if p.layout == "wide-1-w1000"]
    assert long_window and {p.op for p in long_window} == {"moving_mean"}
    assert min(p.size for p in long_window) == 1 << 16  # a window of 1000 from 64K
    # a few minutes at most: the five add less than a tenth of the sweep's points
    assert len(points) < 0.12 * len(sweep.plan())


ORDER_OPS = ["sort", "median", "top_k"]


def test_plan_order_statistics():
    points = sweep.plan(ORDER_OPS)
    assert {p.op for p in points} == set(ORDER_OPS)
    assert max(p.size for p in points) == sweep.WINDOW_MAX_SIZE  # no 100M
    for op in ORDER_OPS:
        spec = sweep.SPECS[op]
        assert spec.family == "order" and len(spec.dtypes) == 2 and "float32" in spec.dtypes
        assert set(spec.layouts) == {"1d", "tall-0", "wide-1", "wideT-1"}  # axes >= k
        assert spec.quick_layouts == ("wide-1", "wideT-1")
    assert len(points) < 0.08 * len(sweep.plan())  # the sweep's time


def test_order_statistics_run_and_agree():
    systems = [s for s in ("axisops", "numpy", "torch", "bottleneck", "numbagg")
               if sweep.available_systems()[s] is None]
    points = sweep.plan(ORDER_OPS, [4096], ["float32", "float64", "int32"])
    data = sweep.run(points, systems=systems, min_time=0.0, min_samples=1, progress=None)
    rows = data["results"]
    assert {(r["op"], r["layout"], r["dtype"]) for r in rows} == {
        (p.op, p.layout, p.dtype) for p in points}
    for row in rows:
        assert "error" not in row, row
        assert row.get("check") in ("ok", "reference", None), row
    ran = {(r["op"], r["system"]) for r in rows if "median_ms" in r}
    assert ("median", "bottleneck") in ran or "bottleneck" not in systems
    assert ("sort", "bottleneck") not in ran  # n/a: bottleneck has no sort


def test_coverage_in_the_header():
    points = sweep.plan(["sum", "unfold", "max_pool", "moving_mean"])
    meta = {"sizes": sorted({p.size for p in points}), "dtypes": list(sweep.FULL_DTYPES),
            "coverage": sweep.coverage(points)}
    text = sweep.coverage_text(meta)
    assert "unfold: up to 8M" in text and "sum" not in text
    assert "max_pool: up to 8M, float32 and int32 only" in text
    assert "moving_mean: up to 8M, float32 and float64 only" in text
    assert sweep.coverage_text({"sizes": [1024], "dtypes": ["float32"]}) is None  # old results


def test_size_labels_and_parse_sizes():
    assert [sweep.size_label(n) for n in (1000, 1024, 65536, 1 << 20, 10**8)] == \
        ["1K", "1K", "64K", "1M", "100M"]
    assert sweep.parse_sizes(["1e3", "64K", "1M", "4096"]) == [1000, 65536, 1 << 20, 4096]
    for bad in ("x", "10", "100.5"):
        with pytest.raises(ValueError):
            sweep.parse_sizes([bad])


# --------------------------------------------------------------------------
# Inputs and checks


@pytest.mark.parametrize("op", sweep.OPS)
def test_inputs_of_every_operator(op):
    spec = sweep.SPECS[op]
    cache = sweep.InputCache(0)
    for layout in spec.layouts:
        point = sweep.Point(op, layout, "float32", 4096)
        inputs = sweep.make_inputs(point, cache)
        assert inputs.x.dtype == np.float32 and inputs.elements > 0
        if layout.endswith("T") or layout.endswith("T-1"):
            assert not inputs.x.flags.c_contiguous  # the transposed variant
        if spec.family in ("take", "along", "scatter", "gather_nd"):
            assert inputs.indices.dtype == np.int64
            high = inputs.x.shape[0 if inputs.axis is None else inputs.axis]
            assert inputs.indices.min() >= 0 and inputs.indices.max() < high
        if spec.family in ("along", "scatter"):
            assert inputs.indices.shape == inputs.x.shape
        if spec.family == "fold":
            n, c, h, w = sweep.window_shape(4096)
            assert inputs.x.shape == (n, 9 * c, h * w) and inputs.image_size == (h, w)
        if spec.family == "pool":
            n, c, h, w = sweep.window_shape(4096)
            assert inputs.channels_last == (layout == "nhwc")
            assert inputs.x.shape == ((n, h, w, c) if layout == "nhwc" else (n, c, h, w))
            assert inputs.x.flags.c_contiguous and inputs.elements == inputs.x.size
        if spec.family == "moving":
            assert inputs.window == spec.layouts[layout].window and inputs.axis is not None
            assert inputs.elements == inputs.x.size


def test_input_values_make_every_order_agree():
    rng = np.random.default_rng(0)
    ints = sweep.make_values("small_ints", 1 << 16, "float32", rng)
    assert ints.min() >= -8 and ints.max() <= 8 and np.all(ints == np.round(ints))
    assert set(np.unique(sweep.make_values("signs", 1000, "int32", rng))) == {-1, 1}
    # logcumsumexp's values: a convergent running log-sum-exp, transposed layouts kept
    noise = sweep.make_values("noise01", 4096, "float32", rng).reshape(-1, 4).T
    x = sweep.decaying_values(noise, 1)
    assert x.strides == noise.strides and x.dtype == np.float32
    lse32 = np.logaddexp.accumulate(x, axis=1)
    lse64 = np.logaddexp.accumulate(x.astype(np.float64), axis=1)
    assert np.allclose(lse32, lse64, rtol=1e-4, atol=1e-4)


def _moving_loop(x, op, window, axis):
    """The trailing windows one by one."""
    x = np.moveaxis(x.astype(np.float64), axis, -1)
    out = np.full(x.shape, np.nan)
    for i in range(window - 1, x.shape[-1]):
        part = x[..., i - window + 1:i + 1]
        out[..., i] = {"moving_mean": lambda a: a.mean(-1), "moving_sum": lambda a: a.sum(-1),
                       "moving_max": lambda a: a.max(-1),
                       "moving_std": lambda a: a.std(-1, ddof=1)}[op](part)
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("op", ["moving_mean", "moving_sum", "moving_max", "moving_std"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_numpy_moving_along_any_axis(op, dtype):
    rng = np.random.default_rng(1)
    x = sweep.make_values("small_ints", 6 * 40 * 5, dtype, rng).reshape(6, 40, 5)
    cases = ((0, 3), (1, 7), (2, 5), (1, 40)) + (() if op == "moving_std" else ((1, 1),))
    for axis, window in cases:  # (a std of one value with ddof=1 warns)
        got = sweep.numpy_moving(x, op, window, axis)
        assert got.shape == x.shape
        assert got.dtype == (x.dtype if dtype != "int32" else np.float64)
        np.testing.assert_allclose(got, _moving_loop(x, op, window, axis), rtol=1e-6)
    # a window longer than the axis: every position NaN (with the default min_count)
    assert np.isnan(sweep.numpy_moving(x, op, 6, 2)).all()


def test_numpy_pool_of_integers_and_channels_last():
    """NumPy's max pooling of int32 pads with the int32 minimum (numpy_pool pads
    with -inf, which int32 cannot hold); channels last gives NHWC."""
    import axisops

    rng = np.random.default_rng(2)
    x = sweep.make_values("random", 2 * 16 * 7 * 9, "int32", rng).reshape(2, 16, 7, 9)
    x.flat[0] = np.iinfo(np.int32).min  # a window whose real values are all the minimum
    for op in POOL_OPS:
        k, s, p = sweep.POOL_GEOMETRY[op]
        for channels_last, image in ((False, x), (True, np.ascontiguousarray(x.transpose(0, 2, 3, 1)))):
            got = sweep._numpy_pool(op, image, channels_last)()
            fn = getattr(axisops, op)
            expected = fn(image, k, stride=s, padding=p, channels_last=channels_last)
            assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_results_match_rules():
    a = np.array([1.0, 2.0, np.nan])
    assert sweep.results_match(a, a.copy(), 1e-6)
    assert not sweep.results_match(a, a + 1e-3, 1e-6)
    assert not sweep.results_match(a[:2], a, 1e-6)
    assert not sweep.results_match(np.array([1, 2]), np.array([1, 3]), 1.0)  # ints: exact
    values, indices = np.array([1.0, 3.0]), np.array([0, 1])
    assert sweep.results_match((values, indices), values, 1e-6)  # NumPy: values only
    assert not sweep.results_match((values, indices), (values, indices[::-1]), 1e-6)


def test_check_result_against_numpy_then_torch():
    point = sweep.Point("cummax", "1d", "float32", 1024)
    values, indices = np.array([1.0, 3.0]), np.array([0, 1])
    refs = {"numpy": values, "torch": (values, indices)}
    assert sweep.check_result(point, "numpy", values, refs) == ("reference", [])
    assert sweep.check_result(point, "axisops", (values, indices), refs) == ("ok", ["numpy", "torch"])
    bad = sweep.check_result(point, "axisops", (values, indices[::-1]), refs)
    assert bad == ("MISMATCH", ["numpy", "torch"])
    assert sweep.check_result(point, "axisops", values, {"torch": values})[0] == "ok"
    assert sweep.check_result(point, "axisops", values, {})[0] == "unchecked"


# --------------------------------------------------------------------------
# A tiny run and its reports


def test_tiny_run_rows(tiny):
    rows = tiny["results"]
    expected = len(TINY_OPS) * len(TINY_SIZES) * len(TINY_LAYOUTS) * len(SYSTEMS)
    assert len(rows) == expected
    for row in rows:
        assert row["system"] in SYSTEMS and "error" not in row, row
        assert row["median_ms"] > 0 and row["best_ms"] <= row["median_ms"]
        assert row["samples"] >= 2 and row["number"] >= 1
        assert len(row["times_ms"]) == row["samples"]
        assert row["ns_per_element"] == pytest.approx(row["median_ms"] * 1e6 / row["elements"])
        assert row["first_call_ms"] > 0
        assert row["elements"] <= row["size"] and row["elements"] % sweep.ELEMENT_MULTIPLE == 0
        if row["system"] == "numpy":
            assert row["check"] == "reference"
        else:
            assert row["check"] == "ok" and row["checked_against"] == ["numpy"]
            assert row["best_peer"] == "numpy"
            assert row["ratio_to_best_peer"] > 0
    meta = tiny["meta"]
    assert meta["sizes"] == TINY_SIZES and meta["dtypes"] == ["float32"]
    assert meta["ops"] == TINY_OPS and meta["systems"] == SYSTEMS
    for key in ("cpu", "cores", "versions", "threads", "date", "load_average_before"):
        assert key in meta
    json.dumps(tiny)  # the raw results are JSON as they are


def test_summary_and_table(tiny):
    summary = sweep.summarize(tiny)
    assert list(summary) == TINY_OPS
    for picks in summary.values():
        assert picks["small_worst"]["size"] == 1000  # ~1K
        assert picks["large_worst"] is None  # nothing from 64K up in this run
        assert picks["best"]["ratio_to_best_peer"] <= picks["small_worst"]["ratio_to_best_peer"]
    text = sweep.format_table(tiny)
    for needle in ("~1K worst", ">=64K worst", "best", "worst 10 cases overall", "machine:",
                   "versions:", "date:", "threads:", "load average", "take: "):
        assert needle in text
    for op in TINY_OPS:
        assert any(line.startswith(op + " ") for line in text.splitlines())
    worst = sweep.worst_cases(tiny, 3)
    assert len(worst) == 3
    assert [r["ratio_to_best_peer"] for r in worst] == sorted(
        (r["ratio_to_best_peer"] for r in worst), reverse=True)


def test_markdown_section_written_and_replaced(tiny, tmp_path):
    path = tmp_path / "BENCHMARKS.md"
    bench_part = "# Benchmarks\n\n| workload | system |\n|---|---|\n| sum | axisops |\n"
    path.write_text(bench_part)
    sweep.write_markdown_section(tiny, str(path), image="benchmarks/sweep.png")
    text = path.read_text()
    assert text.startswith(bench_part)  # the bench's part is untouched
    assert text.count(sweep.START) == 1 and text.count(sweep.END) == 1
    assert "## Size sweep" in text and "![" in text and "(benchmarks/sweep.png)" in text
    assert "| sum |" in text and "| take |" in text
    section = sweep.read_section(str(path))
    assert section.startswith(sweep.START) and section.endswith(sweep.END)

    # A second write replaces the section in place, keeping text after it too.
    path.write_text(text + "\ntrailing text\n")
    changed = dict(tiny, meta=dict(tiny["meta"], date="2000-01-01T00:00:00+00:00"))
    sweep.write_markdown_section(changed, str(path))
    again = path.read_text()
    assert again.count(sweep.START) == 1 and again.count(sweep.END) == 1
    assert again.startswith(bench_part) and again.endswith("\ntrailing text\n")
    assert "2000-01-01" in again and "![" not in again

    new = tmp_path / "new.md"
    sweep.write_markdown_section(tiny, str(new))
    assert new.read_text().startswith(sweep.START)
    assert sweep.read_section(str(tmp_path / "missing.md")) is None


def test_plot_writes_png(tiny, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "sweep.png"
    sweep.plot(tiny, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_system_has_a_colour():
    # the first full sweep with bottleneck and numbagg lost its plot to a KeyError
    assert set(sweep.SYSTEMS) <= set(sweep.COLORS)


def _tiny_window_run(systems):
    points = sweep.plan(POOL_OPS + MOVING_OPS, [1024], ["float32", "float64", "int32"])
    return sweep.run(points, systems=systems, min_time=0.0, min_samples=1, progress=None)


def _by_point(data):
    rows = {}
    for r in data["results"]:
        rows.setdefault((r["op"], r["layout"], r["dtype"]), {})[r["system"]] = r
    return rows


def test_tiny_run_of_pooling_and_moving_windows_against_numpy():
    data = _tiny_window_run(["axisops", "numpy"])
    rows = _by_point(data)
    expected = {(p.op, p.layout, p.dtype) for p in sweep.plan(POOL_OPS + MOVING_OPS, [1024])}
    assert set(rows) == expected
    for (op, layout, _dtype), systems in rows.items():
        mine = systems["axisops"]
        assert mine["check"] == "ok" and mine["checked_against"] == ["numpy"], mine
        assert mine["ratio_to_best_peer"] > 0 and systems["numpy"]["check"] == "reference"
        n, c, h, w = sweep.window_shape(1024)
        if op in POOL_OPS:
            assert mine["elements"] == n * c * h * w
            assert mine["shape"] == ([n, h, w, c] if layout == "nhwc" else [n, c, h, w])
        else:
            assert mine["elements"] == 1024
    assert ("max_pool", "nhwc", "int32") in rows and ("moving_std", "mid-1", "float64") in rows
    text = sweep.format_table(data)
    for op in POOL_OPS + MOVING_OPS:
        assert any(line.startswith(op + " ") for line in text.splitlines())
    assert "coverage: max_pool, moving_max: float32 and int32 only; avg_pool, moving_mean: " \
        "float32 and float64 only; moving_std: float64 only" in text  # in OPS order
    assert list(data["meta"]["coverage"]) == data["meta"]["ops"] == POOL_OPS + MOVING_OPS
    section = sweep.markdown_section(data)
    assert "`nhwc` (N, H, W, 16) C-ordered, channels_last=True" in section
    assert "`mid-1` (8, N/64, 8) axis 1, window 20" in section


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None
                        for m in ("torch", "bottleneck", "numbagg")),
                    reason="needs torch, bottleneck and numbagg")
def test_tiny_run_peers_and_na():
    data = _tiny_window_run(list(sweep.SYSTEMS))
    rows = _by_point(data)
    for (op, layout, dtype), systems in rows.items():
        assert set(systems) == set(sweep.SYSTEMS)
        assert systems["axisops"]["check"] == "ok", systems["axisops"]
        for row in systems.values():
            assert "error" not in row and row.get("check") != "MISMATCH", row
        if op in POOL_OPS:
            for library in ("bottleneck", "numbagg"):
                assert systems[library]["skipped"] == f"n/a: {library} has no {op}"
            if op == "avg_pool" and dtype == "int32":
                assert systems["torch"]["skipped"].startswith("n/a")
            else:
                assert systems["torch"]["check"] == "ok"
            continue
        assert systems["torch"]["skipped"] == f"n/a: torch has no {op}"
        # at 1K the middle axis of (8, 16, 8) is shorter than the window of 20
        refused = "refuses a window longer than the axis (20 > 16)"
        if op == "moving_max":
            assert systems["numbagg"]["skipped"] == "n/a: numbagg has no move_max"
        elif layout == "mid-1":
            assert systems["numbagg"]["skipped"] == f"n/a: numbagg {refused}"
        else:
            assert systems["numbagg"]["check"] == "ok"
        if layout == "mid-1":
            assert systems["bottleneck"]["skipped"] == f"n/a: bottleneck {refused}"
            assert systems["axisops"]["best_peer"] == "numpy"
        else:
            assert systems["bottleneck"]["check"] == "ok"
    assert sweep.problems(data) == [r for r in sweep.problems(data) if "1 call only" in r]


# --------------------------------------------------------------------------
# Command line


def test_cli_sweep(tmp_path, capsys):
    json_path, md_path = tmp_path / "sweep.json", tmp_path / "B.md"
    argv = ["bench", "--sweep", "--ops", "sum", "--systems", "axisops,numpy",
            "--sweep-sizes", "1e3,1e4", "--sweep-dtypes", "float32", "--sweep-layouts", "wide-1",
            "--min-time", "0", "--repeat", "1", "--json", str(json_path),
            "--markdown", str(md_path)]
    plot_path = tmp_path / "plots" / "sweep.png"
    if importlib.util.find_spec("matplotlib") is not None:
        plot_path.parent.mkdir()
        argv += ["--plot", str(plot_path)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "axisops bench --sweep" in out and "~1K worst" in out
    data = json.loads(json_path.read_text())
    assert {(r["size"], r["system"]) for r in data["results"]} == {
        (1000, "axisops"), (1000, "numpy"), (10_000, "axisops"), (10_000, "numpy")}
    assert data["meta"]["command"].startswith("axisops bench --sweep")
    text = md_path.read_text()
    assert sweep.START in text and "| sum |" in text
    if plot_path.parent.exists():
        assert plot_path.exists() and "(plots/sweep.png)" in text


@pytest.mark.parametrize("extra", [["--ops", "nope"], ["--systems", "onnxruntime"],
                                   ["--sweep-sizes", "tiny"], ["--sweep-dtypes", "float16"],
                                   ["--sweep-layouts", "diagonal"]])
def test_cli_sweep_rejects_bad_options(extra, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--sweep", *extra])
    assert exc.value.code == 2
    assert "axisops bench --sweep" in capsys.readouterr().err


def test_cli_sweep_new_operators(tmp_path, capsys):
    json_path = tmp_path / "sweep.json"
    argv = ["bench", "--sweep", "--ops", "max_pool,moving_mean", "--systems", "axisops,numpy",
            "--sweep-sizes", "1K", "--sweep-layouts", "nhwc,wide-1", "--min-time", "0",
            "--repeat", "1", "--json", str(json_path)]
    assert cli.main(argv) == 0
    data = json.loads(json_path.read_text())
    assert {(r["op"], r["layout"], r["dtype"]) for r in data["results"]} == {
        ("max_pool", "nhwc", "float32"), ("max_pool", "nhwc", "int32"),
        ("moving_mean", "wide-1", "float32"), ("moving_mean", "wide-1", "float64")}
    assert all(r.get("check") in ("ok", "reference") for r in data["results"])
    out = capsys.readouterr().out
    assert "coverage: " in out and "max_pool: float32 and int32 only" in out
    assert "moving_mean: float32 and float64 only" in out


def test_help_shows_sweep_but_not_its_test_options(capsys):
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    out = capsys.readouterr().out
    assert "--sweep" in out and "--sweep-sizes" not in out and "--sweep-layouts" not in out


def test_import_axisops_does_not_import_the_sweep():
    code = "import sys, axisops, axisops.cli; print('axisops.bench.sweep' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------
# benchmarks/run.py: each run rewrites only its own part of BENCHMARKS.md


def _load_run_script():
    spec = importlib.util.spec_from_file_location("benchmarks_run",
                                                  os.path.join(ROOT, "benchmarks", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_run_script_keeps_each_part(tmp_path, monkeypatch):
    run_script = _load_run_script()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("intro\n<!-- bench:start -->\nold\n<!-- bench:end -->\nend\n")
    section = f"{sweep.START}\n## Size sweep\n\n| sweep | row |\n{sweep.END}"
    (tmp_path / "BENCHMARKS.md").write_text(f"# Benchmarks\n\n| old | table |\n\n{section}\n")
    calls = []

    def fake_main(argv):  # the bench rewrites the whole file, as bench.write_markdown does
        calls.append(argv)
        if "--sweep" not in argv:
            (tmp_path / "BENCHMARKS.md").write_text("# Benchmarks\n\n| new | table |\n")
        return 0

    monkeypatch.setattr(run_script, "main", fake_main)
    assert run_script.run_bench([]) == 0
    text = (tmp_path / "BENCHMARKS.md").read_text()
    assert "| new | table |" in text and text.count(sweep.START) == 1 and "| sweep | row |" in text
    readme = (tmp_path / "README.md").read_text()
    assert "| new | table |" in readme and "| sweep | row |" not in readme

    assert run_script.run_sweep(["--sweep"]) == 0
    assert calls[-1] == ["bench", "--markdown", "BENCHMARKS.md", "--plot",
                         os.path.join("benchmarks", "sweep.png"), "--sweep"]
    assert run_script.run_sweep(["--sweep", "--quick"]) == 0
    assert calls[-1] == ["bench", "--sweep", "--quick"]  # partial: prints only

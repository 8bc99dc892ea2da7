"""The GPU check's summary (``benchmarks/gpu_check_summary.py``): one line per
family from pytest's JUnit report and the CUDA bench's JSON. The script itself
runs in CI as ``GPU_CHECK_DRY=1 benchmarks/gpu_check.sh`` (``.ci/run``)."""
from __future__ import annotations

import json
import runpy
from pathlib import Path

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "gpu_check_summary.py"


def test_the_summary_counts_tests_and_bench_rows_per_family(tmp_path, capsys):
    (tmp_path / "tests.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_cuda" name="test_a[float32]" time="1"/>'
        '<testcase classname="tests.test_cuda" name="test_b[bool]" time="1">'
        '<failure message="boom">trace</failure></testcase>'
        '<testcase classname="tests.test_cuda_gather" name="test_c" time="1">'
        '<skipped message="no"/></testcase>'
        '</testsuite></testsuites>')
    rows = [{"workload": "sum axis=0", "shape": [4, 8], "bytes": 2e9, "axisops_s": 1e-3,
             "peers": {"torch": 5e-4}},
            {"workload": "max axis=1", "shape": [4, 8], "bytes": 1e9, "axisops_s": 1e-3,
             "peers": {"torch": 2e-3}},
            {"workload": "take rows (axis=0)", "shape": [4, 8], "bytes": 1, "error": "X: y"}]
    (tmp_path / "bench_quick.json").write_text(json.dumps(
        {"meta": {"gpu": "Test GPU", "bandwidth": 4e12}, "rows": rows}))
    module = runpy.run_path(str(SCRIPT))
    assert module["main"](str(tmp_path)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "# GPU check: Test GPU"
    assert ("* tests, reductions and scans: 1 passed, 1 failed, 0 skipped "
            "(failed: test_b[bool])") in lines
    assert "* tests, gather and scatter: 0 passed, 0 failed, 1 skipped" in lines
    assert ("* bench_quick, reductions: 2 workloads, median 37.5% of peak bandwidth; "
            "slowest against a peer: sum axis=0 (4, 8) (torch 2.00x)") in lines
    assert "* bench_quick, gather and scatter: every workload failed (1)" in lines
    assert "* bench (bench_full): no results" in lines


def test_a_missing_report_is_said_so(tmp_path, capsys):
    module = runpy.run_path(str(SCRIPT))
    module["main"](str(tmp_path))
    out = capsys.readouterr().out
    assert "# GPU check: the CUDA simulator" in out
    assert "* tests: no report (the test phase did not finish; see tests.txt)" in out


def test_a_run_without_a_bench_names_the_gpu_from_its_log(tmp_path, capsys):
    # a tests-only rerun (GPU_CHECK_QUICK_BUDGET=0 GPU_CHECK_FULL_BENCH=0) once called
    # the H100 "the CUDA simulator": the name came only from the bench's JSON
    (tmp_path / "log.txt").write_text(
        "mode: real GPU\nnumba sees a GPU: True\n"
        "device NVIDIA H100 80GB HBM3 cc ComputeCapability(major=9, minor=0) SMs 132\n")
    module = runpy.run_path(str(SCRIPT))
    module["main"](str(tmp_path))
    assert capsys.readouterr().out.splitlines()[0] == "# GPU check: NVIDIA H100 80GB HBM3"
    (tmp_path / "log.txt").write_text("mode: dry (CUDA simulator)\n")
    module["main"](str(tmp_path))
    assert capsys.readouterr().out.splitlines()[0] == "# GPU check: the CUDA simulator"


def test_the_summary_takes_the_copy_bandwidth_and_the_host_times(tmp_path, capsys):
    rows = [{"workload": "sum axis=1", "shape": [4, 8], "bytes": 1e9, "axisops_s": 1e-3,
             "axisops_host_s": 3e-5, "peers": {"torch": 1e-3}, "peers_host": {"torch": 2e-5}},
            {"workload": "max axis=1", "shape": [4, 8], "bytes": 1e9, "axisops_s": 1e-3,
             "axisops_host_s": 5e-5, "peers": {"torch": 1e-3}, "peers_host": {"torch": 2e-5}}]
    (tmp_path / "bench_quick.json").write_text(json.dumps(
        {"meta": {"gpu": "Test GPU", "bandwidth": 4e12, "copy_bandwidth": 2e12},
         "rows": rows}))
    module = runpy.run_path(str(SCRIPT))
    module["main"](str(tmp_path))
    lines = capsys.readouterr().out.splitlines()
    assert ("* bench_quick, reductions: 2 workloads, median 50.0% of copy bandwidth, host "
            "time median 40 us; slowest against a peer: sum axis=1 (4, 8) (torch 1.00x)") in lines


def test_the_device_table_gives_host_times_and_the_copy_fraction():
    from axisops.bench.device import format_table

    rows = [{"workload": "take rows", "shape": (4, 8), "bytes": 2e6, "axisops_s": 1e-3,
             "axisops_host_s": 1.1e-3, "peers": {"torch": 5e-4, "cupy": 1e-3},
             "peers_host": {"torch": 6e-4}},
            {"workload": "fold", "shape": (4, 8), "bytes": 1, "error": "ValueError: no"}]
    table = format_table({"meta": {"gpu": "X", "bandwidth": 4e12, "copy_bandwidth": 1e10},
                          "rows": rows}).splitlines()
    assert table[0].startswith("| workload | shape | axisops us | host us | axisops GB/s | of copy")
    assert table[2] == ("| take rows | (4, 8) | 1000.0 | 1100.0 | 2.00 | 20.0% | torch 500.0 / "
                        "600.0 us (2.00x), cupy 1000.0 us (1.00x) |")
    assert table[3] == "| fold | (4, 8) | error | | | | ValueError: no |"

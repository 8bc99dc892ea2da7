#!/usr/bin/env bash
# The GPU check: every CUDA test on the real GPU, then the CUDA bench, in one call of
# the device machine (see docs/contributing.md, "When a GPU is lent").
#
#   PYTHONPATH=. benchmarks/gpu_check.sh            # on the GPU machine, from the repo root
#   GPU_CHECK_DRY=1 benchmarks/gpu_check.sh         # rehearsal: the CUDA simulator, tiny sizes
#
# Results go to $OUT (default ./gpu_check_out), at most 8 files, one folder deep:
#   log.txt       the GPU, driver, CUDA and package versions, each phase's times, the bench's progress
#   tests.txt     pytest's report (every failure in full), tests.xml its JUnit form
#   bench_quick.md / bench_quick.json, bench_full.md / bench_full.json   the CUDA bench
#   summary.md    one line per family: tests passed/failed, bench GB/s against the peers,
#                 host times; then the host path of a warm call (launches stubbed)
#
# Each phase has its own budget (seconds; override with the variables below), so a
# phase that hangs costs only its share and the later phases still report. The whole
# stays under GPU_CHECK_BUDGET (480 s), so it fits twice into a 15-minute lease.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD"
OUT="${OUT:-$PWD/gpu_check_out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
START=$(date +%s)
TOTAL="${GPU_CHECK_BUDGET:-480}"
TEST_BUDGET="${GPU_CHECK_TEST_BUDGET:-300}"
QUICK_BUDGET="${GPU_CHECK_QUICK_BUDGET:-80}"
PER_TEST="${GPU_CHECK_PER_TEST:-120}"
left() { echo $(( TOTAL - ($(date +%s) - START) )); }
LOG="$OUT/log.txt"
: > "$LOG"
phase() { echo "=== $1 ($(( $(date +%s) - START )) s elapsed, $(left) s left)" | tee -a "$LOG" >&2; }

# The CUDA tests; test_torch_cuda routes PyTorch CUDA tensors through autograd.
# GPU_CHECK_TESTS (space-separated files or node ids) runs others instead.
read -r -a TESTS <<< "${GPU_CHECK_TESTS:-tests/test_cuda.py tests/test_cuda_gather.py \
tests/test_cuda_grad.py tests/test_cuda_window.py tests/test_cuda_missing.py tests/test_cuda_pool.py \
tests/test_cuda_moving.py tests/test_torch_cuda.py tests/test_cuda_compile.py}"
BENCH_ARGS=()
if [[ -n "${GPU_CHECK_DRY:-}" ]]; then
    # The same phases under Numba's CUDA simulator, on one test of each family (the
    # CI suite runs them all) and the bench's workloads at tiny sizes on the CPU.
    export NUMBA_ENABLE_CUDASIM=1
    unset AXISOPS_TEST_REAL_CUDA
    read -r -a TESTS <<< "${GPU_CHECK_TESTS:-\
tests/test_cuda.py::test_extremes_are_the_numpy_paths_bits[float32-argmax] \
tests/test_cuda.py::test_sum_product_and_log_scans_match_the_numpy_path[float32-cumsum] \
tests/test_cuda.py::test_take_matches_the_numpy_path[float32-fill] \
tests/test_cuda_gather.py::test_scatter_matches_the_numpy_paths_bits[runs-float32-add] \
tests/test_cuda_grad.py::test_sum_and_mean_broadcast_g_with_the_numpy_paths_bits[float32] \
tests/test_cuda_window.py::test_unfold_and_fold_match_the_numpy_path[float32] \
tests/test_cuda_missing.py::test_errors_are_the_numpy_paths \
tests/test_cuda_pool.py::test_nan_and_ties_are_the_cpus \
tests/test_torch_cuda.py::test_every_operator_has_a_cuda_kernel}"
    BENCH_ARGS=(--dry)
    WORKERS="${GPU_CHECK_WORKERS:-0}"
else
    export AXISOPS_TEST_REAL_CUDA=1
    export AXISOPS_TEST_EXHAUSTIVE="${AXISOPS_TEST_EXHAUSTIVE:-1}"  # every dtype, every signature
    WORKERS="${GPU_CHECK_WORKERS:-auto}"
fi
export AXISOPS_TEST_NO_PRECOMPILE=1   # the CPU kernels' warm-up process is for the CPU suite

phase "versions"
{
    echo "date: $(date -u +%FT%TZ)"; echo "host: $(hostname)"; echo "mode: $([[ -n "${GPU_CHECK_DRY:-}" ]] && echo "dry (CUDA simulator)" || echo "real GPU")"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv 2>&1 || echo "nvidia-smi: not found"
    timeout 60 "$PY" - <<'PYEOF' 2>&1
import importlib, platform, os
print("python", platform.python_version(), "cpus", os.cpu_count())
for name in ("numpy", "numba", "numba_cuda", "torch", "cupy", "pytest", "xdist", "hypothesis"):
    try:
        m = importlib.import_module(name)
        print(name, getattr(m, "__version__", "?"))
    except Exception as e:
        print(name, "not importable:", type(e).__name__, e)
try:
    import torch
    print("torch cuda", torch.version.cuda, "available", torch.cuda.is_available(),
          torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
except Exception as e:
    print("torch cuda: ", e)
try:
    from numba import cuda
    print("numba sees a GPU:", cuda.is_available())
    if cuda.is_available():
        d = cuda.get_current_device()
        print("device", d.name, "cc", d.compute_capability, "SMs", d.MULTIPROCESSOR_COUNT)
        print("runtime", cuda.runtime.get_version(), "driver", cuda.driver.driver.get_version())
except Exception as e:
    print("numba cuda:", type(e).__name__, e)
PYEOF
} > "$OUT/versions.tmp"
cat "$OUT/versions.tmp" | tee -a "$LOG" >&2
rm -f "$OUT/versions.tmp"

phase "tests"
XDIST=()
# --dist load: test by test over every core (the suite's default, a file per worker,
# would leave most of a 16-core machine idle with six CUDA test files)
if [[ "$WORKERS" != 0 ]] && "$PY" -c "import xdist" 2>/dev/null; then XDIST=(-n "$WORKERS" --dist load); fi
budget=$(( TEST_BUDGET < $(left) ? TEST_BUDGET : $(left) ))
# SIGINT at the budget: pytest stops as on Ctrl-C and still writes its report.
AXISOPS_TEST_TIMEOUT="$PER_TEST" timeout -s INT -k 20 "$budget" "$PY" -m pytest "${TESTS[@]}" \
    "${XDIST[@]}" -q -rfE --tb=short -p no:cacheprovider --junitxml="$OUT/tests.xml" \
    -o faulthandler_timeout="$PER_TEST" > "$OUT/tests.txt" 2>&1
TESTS_STATUS=$?
echo "pytest exit status $TESTS_STATUS (2 or 124: stopped at its ${budget} s budget)" >> "$OUT/tests.txt"
tail -n 15 "$OUT/tests.txt" | tee -a "$LOG" >&2

# The Python of a warm call, on this machine's CPU: the simulator with launches
# stubbed (axisops.bench.cuda_host); its table joins the summary.
phase "host path"
NUMBA_ENABLE_CUDASIM=1 timeout -k 5 60 "$PY" -m axisops.bench.cuda_host \
    > "$OUT/host_path.md" 2>> "$LOG" || echo "host path bench exit status $?" | tee -a "$LOG" >&2

phase "bench, quick"
budget=$(( QUICK_BUDGET < $(left) ? QUICK_BUDGET : $(left) ))
if (( budget >= 10 )); then
timeout -k 5 "$budget" "$PY" -m axisops.cli bench --device cuda --quick "${BENCH_ARGS[@]}" \
    --markdown "$OUT/bench_quick.md" --json "$OUT/bench_quick.json" >> "$LOG" 2>&1
BENCH_STATUS=$?
echo "quick bench exit status $BENCH_STATUS" | tee -a "$LOG" >&2
else
    BENCH_STATUS=0
    echo "quick bench skipped: ${budget} s left for it" | tee -a "$LOG" >&2
fi

if (( $(left) > 30 )) && [[ -z "${GPU_CHECK_DRY:-}" && "${GPU_CHECK_FULL_BENCH:-1}" != 0 ]]; then
    phase "bench, full"
    timeout -k 5 $(( $(left) - 15 )) "$PY" -m axisops.cli bench --device cuda \
        --markdown "$OUT/bench_full.md" --json "$OUT/bench_full.json" >> "$LOG" 2>&1
    echo "full bench exit status $?" | tee -a "$LOG" >&2
fi

phase "summary"
{ "$PY" benchmarks/gpu_check_summary.py "$OUT"; echo; cat "$OUT/host_path.md" 2>/dev/null; } \
    > "$OUT/summary.md"
rm -f "$OUT/host_path.md"  # (in the summary: at most 8 files come back from a GPU run)
cat "$OUT/summary.md" >&2
phase "done"
# non-zero when a test failed or the quick bench did (every file is written anyway)
(( TESTS_STATUS == 0 && BENCH_STATUS == 0 ))

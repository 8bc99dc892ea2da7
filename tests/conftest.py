"""Fixtures shared by the test suite.

The edge-case generator and the comparison helpers live in ``tests/cases.py``
(import them with ``from cases import ...``; pytest puts ``tests/`` on the path).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

#: Compiled by a second process while the suite starts (see pytest_sessionstart).
_PRECOMPILED_OPS = ("cumsum,cumprod,cummax,cummin,logcumsumexp,argmax,argmin,sum,prod,mean,max,min,"
                   "take,take_along_axis,scatter,gather_nd,unfold,fold")
_precompiler = None


def pytest_sessionstart(session):
    """Compile kernels into Numba's disk cache in a second process, on the second core.

    From a cold cache most of the suite's time is compilation, which runs on one
    core. ``axisops warmup --jobs 1`` in a background process compiles the common kernels
    while the tests start on the others; a test that needs a kernel first loads
    it from the disk cache if it is there, or compiles it itself (both are
    correct: Numba writes its cache files atomically). Set
    ``AXISOPS_TEST_NO_PRECOMPILE=1`` to leave it out.
    """
    global _precompiler
    if os.environ.get("AXISOPS_TEST_NO_PRECOMPILE") or (os.cpu_count() or 1) < 2:
        return
    if _xdist_workers(session.config):  # the workers use every core: they compile as they go
        return
    code = ("import sys; from axisops.cli import main; "
            f"sys.exit(main(['warmup', '--jobs', '1', '--ops', {_PRECOMPILED_OPS!r}]))")
    _precompiler = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)


def _xdist_workers(config) -> int:
    """The number of pytest-xdist workers of this run (0 without xdist), in the
    controller and in each worker."""
    if hasattr(config, "workerinput"):
        return int(config.workerinput.get("workercount", 1))
    n = getattr(config.option, "numprocesses", None)
    return int(n or 0) if not isinstance(n, str) else (os.cpu_count() or 1)


# ------------------------------------------------------------ how xdist shares the files

#: Files whose kernels are the same: one worker runs them in turn, so each kernel
#: compiles once from a cold cache (two workers compiling the same kernels at the
#: same time was a third of test_onnx.py's time).
_SHARED_KERNELS = {
    "reductions": ("tests/test_reduce.py", "tests/test_onnx.py", "tests/test_accuracy.py",
                   "tests/test_properties.py"),
    "scans": ("tests/test_scan.py", "tests/test_scan_grad.py", "tests/test_scan_properties.py"),
    "gathers": ("tests/test_gather.py", "tests/test_gather_grad.py",
                "tests/test_gather_properties.py"),
}
_GROUP_OF = {path: group for group, paths in _SHARED_KERNELS.items() for path in paths}
#: Started first, the longest first, so that no long file is left for the end
#: while the other worker idles (docs/contributing.md, "Where the time goes").
_LONG_FIRST = ("tests/test_cuda_compile.py", "tests/test_dask_out_of_core.py",
               "tests/test_reduce.py")


def _scope(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return _GROUP_OF.get(path, path)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: no error where xdist is absent
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadfile`` (the default), a worker takes a file at a time, or
    a group of files that share their kernels (:data:`_SHARED_KERNELS`), in the
    order of :func:`pytest_collection_modifyitems` (long ones first)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class KernelGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    config.option.loadscopereorder = False  # keep the collection's order
    return KernelGroupScheduling(config, log)


def _long_first(items) -> None:
    """Sort *items* by scope: the scopes of :data:`_LONG_FIRST` first, then the
    others in the order they were collected."""
    rank = {path: i for i, path in enumerate(_LONG_FIRST)}
    key: dict[str, tuple[int, int]] = {}
    for position, item in enumerate(items):
        scope = _scope(item.nodeid)
        r = rank.get(item.nodeid.split("::", 1)[0], len(rank))
        old = key.get(scope, (len(rank), position))
        key[scope] = (min(old[0], r), min(old[1], position))
    items.sort(key=lambda it: key[_scope(it.nodeid)])


def pytest_sessionfinish(session, exitstatus):
    if _precompiler is not None and _precompiler.poll() is None:
        _precompiler.terminate()
        _precompiler.wait()


# ------------------------------------------------------------ the exhaustive switch

def exhaustive_run(config) -> bool:
    """Whether this run includes the exhaustive variants: ``AXISOPS_TEST_EXHAUSTIVE=1``
    or a ``-m`` expression that names ``exhaustive``."""
    return bool(os.environ.get("AXISOPS_TEST_EXHAUSTIVE")) or \
        "exhaustive" in (config.option.markexpr or "")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "exhaustive: a variant that repeats what another test covers (another "
        "dtype of the same class, another specialisation, a larger shape); run before a "
        "release and by the GPU check: AXISOPS_TEST_EXHAUSTIVE=1 or pytest -m exhaustive")
    config.addinivalue_line(
        "markers", "threads: a dask test whose graphs run on the threaded scheduler (the "
        "others run on the synchronous one: tests/dask_support.py)")
    config.addinivalue_line(
        "markers", "time_limit(seconds): this test's own AXISOPS_TEST_TIMEOUT when that is "
        "set and lower (a test whose work is one long batch, such as the PTX compile check)")


def pytest_collection_modifyitems(config, items):
    """Deselect (never skip) the exhaustive variants unless the run asks for them;
    put the long files first (:data:`_LONG_FIRST`) and the files of a kernel group
    together."""
    _long_first(items)
    if exhaustive_run(config):
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker("exhaustive") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def exhaustive(request) -> bool:
    """True in a run with the exhaustive variants (for a test that scales itself)."""
    return exhaustive_run(request.config)


def thread_counts():
    """Thread counts worth comparing: 1, 2, 3 (more than the parts divide evenly)
    and every core the process may use."""
    import axisops

    top = axisops.thread_limit()
    return sorted({1, 2, 3, top})


@pytest.fixture
def num_threads():
    """``set(n)`` sets axisops' thread count; the original count is restored afterwards.

    Setting it also lowers the size above which a call uses the pool to 0 and
    turns off the measuring of whether the pool pays (``_jit.CALIBRATE``), so that
    the small arrays of the tests really are split between threads.
    """
    import axisops
    from axisops import _jit

    original = axisops.thread_limit()
    threshold, calibrate = _jit.PARALLEL_MIN_WORK, _jit.CALIBRATE

    class Threads:
        counts = thread_counts()

        @staticmethod
        def set(n):
            axisops.thread_limit(n)
            _jit.PARALLEL_MIN_WORK = 0
            _jit.CALIBRATE = False

    try:
        yield Threads
    finally:
        axisops.thread_limit(original)
        _jit.PARALLEL_MIN_WORK, _jit.CALIBRATE = threshold, calibrate


@pytest.fixture
def rng():
    """A NumPy generator with a fixed seed, fresh for each test."""
    return np.random.default_rng(20240601)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """``AXISOPS_TEST_TIMEOUT=S`` fails a test that runs longer than S seconds.

    The GPU check (``benchmarks/gpu_check.sh``) sets it: its machine has pytest but
    no pytest-timeout, and one hung kernel must not cost the whole run. SIGALRM
    interrupts Python code (a call blocked inside a driver returns first); each
    xdist worker is its own process, so each has its own alarm.
    """
    limit = float(os.environ.get("AXISOPS_TEST_TIMEOUT") or 0)
    own = item.get_closest_marker("time_limit")
    if limit > 0 and own is not None:
        limit = max(limit, float(own.args[0]))
    if limit <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"{item.nodeid} ran past AXISOPS_TEST_TIMEOUT={limit:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------ where the time goes

class _CompileClock:
    """Seconds spent in Numba compilations (outermost ones only: a kernel's
    callees compile inside it) since the last ``take()``, and which: one
    ``"module.function(arg types)"`` and its seconds per outermost compilation."""

    def __init__(self):
        import threading
        import time

        from numba.core import event

        self._time = time.perf_counter
        self._local = threading.local()
        self._lock = threading.Lock()
        self.seconds = 0.0
        self.compiled: list[tuple[str, float]] = []
        clock = self

        class Listener(event.Listener):
            def on_start(self, ev):
                depth = getattr(clock._local, "depth", 0)
                if depth == 0:
                    clock._local.start = clock._time()
                clock._local.depth = depth + 1

            def on_end(self, ev):
                clock._local.depth -= 1
                if clock._local.depth == 0:
                    seconds = clock._time() - clock._local.start
                    with clock._lock:
                        clock.seconds += seconds
                        clock.compiled.append((_compiled_name(ev.data), round(seconds, 3)))

        event.register("numba:compile", Listener())

    def take(self) -> tuple[float, list[tuple[str, float]]]:
        with self._lock:
            taken = self.seconds, self.compiled
            self.seconds, self.compiled = 0.0, []
        return taken


def _compiled_name(data) -> str:
    """``module.function[factory constants](arg types)`` of a Numba compile event's
    data; the constants are those a kernel factory closed over (``value_kernel``'s
    loop order and way to combine compile different kernels of one name)."""
    try:
        py_func = data["dispatcher"].py_func
        constants = [c.cell_contents for c in py_func.__closure__ or ()
                     if isinstance(c.cell_contents, (bool, int, str))]
        name = f"{py_func.__module__}.{py_func.__qualname__}"
        if constants:
            name += f"[{', '.join(map(str, constants))}]"
        return f"{name}({', '.join(str(a) for a in data['args'])})"
    except Exception:  # pragma: no cover - an event of another shape
        return "?"


_profile = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """``AXISOPS_TEST_PROFILE=DIR`` writes, per process, one JSON line per test:
    its file, wall seconds (setup, call and teardown), the seconds of them
    spent compiling kernels and what was compiled. ``python tests/profile_report.py DIR`` sums them per
    file (docs/contributing.md, "Where the time goes")."""
    global _profile
    directory = os.environ.get("AXISOPS_TEST_PROFILE")
    if not directory:
        yield
        return
    import json
    import time

    if _profile is None:
        os.makedirs(directory, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _profile = (_CompileClock(), open(os.path.join(directory, f"{worker}.jsonl"), "a"))
    clock, out = _profile
    clock.take()
    start = time.perf_counter()
    yield
    wall = time.perf_counter() - start
    compile_seconds, compiled = clock.take()
    out.write(json.dumps({"file": item.location[0], "test": item.nodeid, "wall": wall,
                          "compile": compile_seconds, "compiled": compiled}) + "\n")
    out.flush()

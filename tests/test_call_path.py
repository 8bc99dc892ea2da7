"""The call path: plans, the serial/parallel split, threads, fork and spin.

Every kernel runs either on the calling thread or split between the calling
thread and the pool (``axisops._jit``); these tests force both and check that
the bits agree, that many threads may call at once, that a child forked after
the pool was used computes correctly (in parallel too), that no thread burns CPU
after a call returns, and that plans never let a call skip its validation.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import resource
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from cases import same_bits

import axisops
from axisops import _jit, reference
from axisops import scan as scan_module
from axisops._axes import AxisError


@pytest.fixture
def parallel_everything():
    """Every call uses the pool, with two threads (restored afterwards)."""
    threads, threshold = axisops.thread_limit(), _jit.PARALLEL_MIN_WORK
    calibrate = _jit.CALIBRATE
    axisops.thread_limit(2)
    _jit.PARALLEL_MIN_WORK = 0
    _jit.CALIBRATE = False  # split every call, whether or not it pays
    try:
        yield
    finally:
        axisops.thread_limit(threads)
        _jit.PARALLEL_MIN_WORK, _jit.CALIBRATE = threshold, calibrate


def _workload(seed: int):
    """One call of every kernel family on arrays made from *seed*: a list of results."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((6, 40, 33)).astype(np.float32)
    x[1, 3, 4] = np.nan
    ints = rng.integers(-50, 50, (40, 33))  # int64: a dtype class the other files compile too
    idx = rng.integers(0, 40, (6, 40, 33))
    image = rng.standard_normal((2, 3, 9, 9))
    g = rng.standard_normal((6, 33))
    return [
        axisops.sum(x, axis=1), axisops.mean(x.T, axis=(0, 2)), axisops.prod(ints, axis=0),
        axisops.max(x, axis=-1), axisops.argmax(x, axis=(0, 2)), axisops.argmin(ints, axis=None),
        axisops.cumsum(x, axis=1), axisops.cumprod(ints[:, :5], axis=0),
        *axisops.cummax(x, axis=2), *axisops.cummin(x.reshape(-1)), axisops.logcumsumexp(x, axis=0),
        axisops.take(x, [0, 39, 7], axis=1), axisops.take_along_axis(x, idx, axis=1),
        axisops.gather_nd(x, idx[:2, :2, :1] % 6), axisops.scatter(x, idx, x, 1, reduce="add"),
        axisops.unfold(image, (3, 3), padding=1), axisops.fold(axisops.unfold(image, (3, 3)), (9, 9), (3, 3)),
        axisops.grad.max(g, x, axis=1), axisops.grad.cumprod(x, x, axis=1),
    ]


def _same(a, b) -> bool:
    return len(a) == len(b) and all(same_bits(np.asarray(p), np.asarray(q)) is None for p, q in zip(a, b))


def test_parallel_split_gives_the_serial_bits(parallel_everything):
    parallel = _workload(1)
    for threads in (3, 4):
        axisops.thread_limit(threads)
        assert _same(_workload(1), parallel)
    axisops.thread_limit(1)
    assert _same(_workload(1), parallel)


def test_many_threads_at_once_get_the_serial_results(parallel_everything):
    expected = {seed: _workload(seed) for seed in range(4)}
    errors = []

    def call(seed):
        for _ in range(5):
            if not _same(_workload(seed), expected[seed]):
                errors.append(seed)

    threads = [threading.Thread(target=call, args=(k % 4,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert errors == []


def _child_results(seed):
    # In the child: once serially, once split between threads (the pool is new here).
    axisops.thread_limit(1)
    serial = _workload(seed)
    axisops.thread_limit(2)
    _jit.PARALLEL_MIN_WORK = 0
    _jit.CALIBRATE = False
    return serial, _workload(seed)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork here")
def test_forked_children_compute_after_the_parent_used_the_pool(parallel_everything):
    expected = {seed: _workload(seed) for seed in range(3)}  # the pool's workers are running now
    assert _jit._pool.workers, "the parent did not use the pool"
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map_async(_child_results, range(3)).get(timeout=300)
    for seed, (serial, parallel) in zip(range(3), results):
        assert _same(serial, expected[seed]) and _same(parallel, expected[seed])
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
        for seed, (serial, parallel) in zip(range(3), ex.map(_child_results, range(3), timeout=300)):
            assert _same(serial, expected[seed]) and _same(parallel, expected[seed])


def test_no_cpu_is_burnt_after_a_call_returns(parallel_everything):
    x = np.random.default_rng(0).random((64, 512, 64)).astype(np.float32)
    for _ in range(3):
        axisops.sum(x, axis=1)  # the pool's workers ran
    assert _jit._pool.workers
    before = resource.getrusage(resource.RUSAGE_SELF)
    time.sleep(0.2)
    after = resource.getrusage(resource.RUSAGE_SELF)
    burnt = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert burnt < 0.02, f"{burnt * 1e3:.1f} ms of CPU in the 200 ms after a call"


def test_a_busy_pool_lets_other_callers_run_on_their_own_thread(parallel_everything):
    # Hold the pool as a concurrent caller would; a call must not wait for it.
    assert _jit._pool.busy.acquire(blocking=False)
    try:
        x = np.arange(1000.0).reshape(10, 100)
        np.testing.assert_array_equal(axisops.cumsum(x, axis=1), np.cumsum(x, axis=1))
    finally:
        _jit._pool.busy.release()


def test_thread_limit_checks_its_argument():
    old = axisops.thread_limit()
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="thread_limit"):
            axisops.thread_limit(bad)
    assert axisops.thread_limit() == old


@pytest.mark.parametrize("omp, expected", [("1", 1), (" 1,4 ", 1), ("0", None), ("many", None),
                                           ("", None), ("100000", None)])
def test_default_thread_limit_obeys_omp_num_threads_when_fewer(omp, expected, monkeypatch):
    # Dask's nanny sets OMP_NUM_THREADS=1 in its workers; unset, zero, junk or
    # more than the cores leaves the cores the process may run on.
    import os

    cores = len(os.sched_getaffinity(0))
    monkeypatch.setenv("OMP_NUM_THREADS", omp)
    assert _jit._default_threads() == (cores if expected is None else expected)


# ------------------------------------------------------------------------ plans


def test_a_plan_never_skips_validation():
    x = np.arange(12.0).reshape(3, 4)
    assert axisops.sum(x, axis=1).tolist() == [6.0, 22.0, 38.0]  # the plan for axis=1 exists
    with pytest.raises(TypeError):
        axisops.sum(x, axis=1.0)  # equal to 1 and hashed alike, but not an axis
    with pytest.raises(TypeError):
        axisops.argmax(x, axis=(1.0,))
    with pytest.raises(AxisError):
        axisops.cumsum(x, axis=2)
    np.testing.assert_array_equal(axisops.sum(x, axis=np.int64(1)), [6.0, 22.0, 38.0])
    np.testing.assert_array_equal(axisops.sum(x, axis=[1]), [6.0, 22.0, 38.0])
    i = np.array([0, 3])
    np.testing.assert_array_equal(axisops.take(x, i, axis=1), x[:, [0, 3]])
    with pytest.raises(IndexError):
        axisops.take(x, np.array([0, 4]), axis=1)  # same shapes as the planned call: checked again


def test_plans_follow_the_values_of_each_call():
    rng = np.random.default_rng(3)
    for _ in range(3):  # same shapes every time: the plan is reused on new memory
        x = rng.standard_normal((5, 7)).astype(np.float32)
        np.testing.assert_array_equal(axisops.argmax(x, axis=0), np.argmax(x, axis=0))
        np.testing.assert_array_equal(axisops.max(x.T, axis=1), np.max(x.T, axis=1))
        v, i = axisops.cummax(x[::-1], axis=1)
        np.testing.assert_array_equal(v, np.maximum.accumulate(x[::-1], axis=1))
        assert i.dtype == np.int64 and i.shape == x.shape


def test_plan_cache_is_bounded():
    from axisops._plan import PlanCache

    cache = PlanCache(size=4)
    for k in range(10):
        cache.put(("k", k), k)
    assert len(cache) == 4 and cache.get(("k", 9)) == 9 and cache.get(("k", 0)) is None
    assert cache.get(("unhashable", [1])) is None
    assert cache.put(("unhashable", [1]), 5) == 5 and len(cache) == 4


# ------------------------------------------------------------------ Dask workers


def _chunk_results(block):
    # What a Dask task would run on its chunk: every family once.
    return np.array([axisops.sum(block, axis=1).sum(), float(axisops.argmax(block)),
                     axisops.cummax(block, axis=0).values.sum(),
                     axisops.take(block, [0, -1], axis=1).sum()])[None, :]


def _dask_check(scheduler_kwargs):
    da = pytest.importorskip("dask.array")
    x = np.random.default_rng(5).standard_normal((64, 300))
    arr = da.from_array(x, chunks=(16, 300))
    lazy = arr.map_blocks(_chunk_results, chunks=(1, 4), dtype=np.float64)
    got = lazy.compute(**scheduler_kwargs)
    want = np.concatenate([_chunk_results(x[k:k + 16]) for k in range(0, 64, 16)])
    np.testing.assert_array_equal(got, want)


def test_inside_dask_threaded_workers(parallel_everything):
    _dask_check(dict(scheduler="threads", num_workers=4))


def test_inside_dask_distributed_workers():
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                      silence_logs=50) as cluster, Client(cluster) as client:
        _dask_check(dict(scheduler=client))


@pytest.mark.parametrize("threads", [1, 2])
def test_few_lanes_long_axis_scans_chunked(threads, parallel_everything):
    # (n, 3) along axis 0: three lanes each scanned on its own, the axis cut into
    # chunks (totals, carries, scan) - checked exactly on integer-valued floats.
    axisops.thread_limit(threads)
    x = np.random.default_rng(7).integers(-3, 4, (70001, 3)).astype(np.float64)
    x[5000, 1] = np.nan
    np.testing.assert_array_equal(axisops.cumsum(x, axis=0), np.cumsum(x, axis=0))
    np.testing.assert_array_equal(axisops.cumsum(x[::-1], axis=0, reverse=True),
                                  np.cumsum(x, axis=0)[::-1])
    values, indices = axisops.cummax(x, axis=0)
    want_values, want_indices = reference.cummax(x, axis=0)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)


def test_many_short_rows_scan_in_one_loop():
    # Rows of 2 to 15 along the last axis run in one loop over the rows
    # (kernels.scan._short_lanes_scan / _short_lanes_extreme): a coalesced last
    # axis without a division per row, and any other layout through _lane_start.
    rng = np.random.default_rng(8)
    x = rng.integers(-3, 4, (30000, 3)).astype(np.float32)
    x[7, 2] = np.nan
    cube = rng.standard_normal((40, 30, 4))
    cases = ((x, 1), (x, -1), (rng.standard_normal((20000, 5, 1)), 1),
             (x[::-2, ::-1], 1),  # negative strides, one outer dimension
             (cube[:, :15], 2),  # two outer dimensions that do not coalesce
             (rng.integers(-5, 6, (3000, 6)).astype(np.int16), 1),
             (x.astype(np.float16), 1))
    for arr, axis in cases:
        for op in ("cumsum", "cumprod"):
            for kwargs in ({}, {"exclusive": True}, {"reverse": True}):
                got = getattr(axisops, op)(arr, axis=axis, **kwargs)
                want = getattr(reference, op)(arr, axis=axis, **kwargs)
                assert got.flags.c_contiguous and got.shape == arr.shape and got.dtype == want.dtype
                assert same_bits(got, want) is None, (arr.shape, arr.strides, op, kwargs)
        for op in ("cummax", "cummin"):
            values, indices = getattr(axisops, op)(arr, axis=axis)
            want_values, want_indices = getattr(reference, op)(arr, axis=axis)
            assert values.dtype == arr.dtype and indices.dtype == np.int64
            assert same_bits(values, want_values) is None and same_bits(indices, want_indices) is None
        if arr.dtype.kind == "f":
            np.testing.assert_allclose(axisops.logcumsumexp(arr, axis=axis),
                                       reference.logcumsumexp(arr, axis=axis), rtol=1e-3)


def test_plans_tell_aligned_from_misaligned_arrays():
    # Same shape, strides and dtype, but one misaligned (copied before a kernel
    # reads it): each must get its own plan, in either order.
    def strided(aligned: bool):
        raw = np.zeros(8 * 2000 + 1, np.uint8)
        start = 0 if aligned else 1
        a = np.ndarray((1000,), np.float64, raw.data, start, (16,))
        a[...] = np.arange(1000.0)
        return a

    for first in (True, False):
        for aligned in (first, not first):
            a = strided(aligned)
            assert a.flags.aligned == aligned
            assert axisops.sum(a) == 499500.0
            np.testing.assert_array_equal(axisops.cumsum(a), np.cumsum(np.arange(1000.0)))
            assert int(axisops.argmax(a)) == 999
            np.testing.assert_array_equal(axisops.take(a, [3, 999]), [3.0, 999.0])
        from axisops import reduce as R
        from axisops import scan as S
        R._PLANS.clear(), S._PLANS.clear()


@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_many_short_rows_gather_and_scatter_through_the_moved_arrays(dtype):
    # (m, 3) along axis 1 (and (m, 3, 1)): run on the moved arrays and copied back.
    rng = np.random.default_rng(9)
    for shape in ((600, 3), (300, 5, 1)):
        x = rng.integers(-5, 6, shape).astype(dtype)
        idx = rng.integers(-shape[1], shape[1], shape)
        upd = rng.integers(-5, 6, shape).astype(dtype)
        for mode in ("raise", "wrap", "clip", "fill"):
            got = axisops.take_along_axis(x, idx, 1, mode=mode, fill_value=7)
            assert got.flags.c_contiguous
            assert same_bits(got, reference.take_along_axis(x, idx, 1, mode=mode, fill_value=7)) is None
        for reduce in (None, "add", "mul", "max", "min"):
            got = axisops.scatter(x, idx, upd, 1, reduce=reduce)
            assert got.flags.c_contiguous
            assert same_bits(got, reference.scatter(x, idx, upd, 1, reduce=reduce)) is None
        bad = idx.copy()
        bad[7, 1], bad[200, 0] = shape[1], -shape[1] - 1  # the first in C order is at (7, 1)
        want = rf"index {shape[1]} at position \(7, 1"
        with pytest.raises(IndexError, match=want):
            axisops.take_along_axis(x, bad, 1)
        with pytest.raises(IndexError, match=want):
            axisops.scatter(x, bad, upd, 1)


def test_kernels_release_every_array_they_use():
    """Kernels and helpers run without Numba's reference counting unless they
    allocate (``_jit``'s note): every array Numba's runtime allocates or wraps
    during a batch of calls of every family is released by its end."""
    from numba.core.runtime import _nrt_python, rtsys

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    x[3, 5] = np.nan
    image = x[None, None]

    def batch():
        for axis in (0, 1, None):
            for op in ("sum", "max", "argmax", "nanmean", "nanvar", "nanargmin", "prod"):
                getattr(axisops, op)(x, axis=axis)
        axisops.cumsum(x, axis=1)
        axisops.cummax(x, axis=0)
        axisops.logcumsumexp(x, axis=1)
        for op in ("moving_mean", "moving_max", "moving_std"):
            getattr(axisops, op)(x, 5, axis=1)
        axisops.take(x, np.array([1, 2, 3]), axis=0)
        axisops.take_along_axis(x, np.zeros((64, 2), np.int64), axis=1)
        axisops.scatter(np.zeros_like(x), np.zeros((64, 2), np.int64), x[:, :2], axis=1,
                        reduce="add")
        axisops.max_pool(image, 3)
        axisops.avg_pool(image, 2)
        axisops.fold(axisops.unfold(image, 3), image.shape[2:], 3)

    batch()  # compiled (or loaded) first
    was_on = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(3):
            batch()
        after = rtsys.get_allocation_stats()
    finally:
        if not was_on:
            _nrt_python.memsys_disable_stats()
    assert after.mi_alloc - before.mi_alloc > 0  # the runtime did wrap and allocate
    assert after.alloc - before.alloc == after.free - before.free
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free


def test_a_helper_without_reference_counting_may_not_return_an_array():
    """Its caller would release the view once more than it was counted (Numba
    refuses a returned array itself, ``_jit`` an array inside a tuple)."""
    from numba import njit

    @_jit.helper
    def first_half(a):
        return a[:a.size // 2], a.size

    @njit
    def caller(a):
        return first_half(a)[0].sum()

    with pytest.raises(Exception, match="must not return an array"):
        caller(np.arange(4.0))

    @_jit.helper(nrt=True)
    def first_half_counted(a):
        return a[:a.size // 2]

    @njit
    def counted_caller(a):
        return first_half_counted(a).sum()

    assert counted_caller(np.arange(4.0)) == 1.0


def test_the_pool_is_used_where_it_was_measured_to_pay(monkeypatch):
    """``_jit.run`` times its first calls of a kernel at a size class each way and
    then keeps to the faster: here two stand-in kernels whose serial run is 20x
    slower, and 10x faster, than a part on the pool."""
    monkeypatch.setattr(_jit, "_SPLIT_PAYS", {})
    monkeypatch.setattr(_jit, "_RECHECK", {})
    monkeypatch.setattr(_jit, "CALIBRATE", True)
    threads = axisops.thread_limit()
    axisops.thread_limit(2)
    calls: dict = {"serial_is_slow": [], "split_is_slow": []}

    def serial_is_slow(part, parts):
        calls["serial_is_slow"].append(parts)
        time.sleep(0.02 if parts == 1 else 0.001)

    def split_is_slow(part, parts):
        calls["split_is_slow"].append(parts)
        time.sleep(0.001 if parts == 1 else 0.01)

    work = 3 * _jit.PARALLEL_MIN_WORK
    try:
        for _ in range(2 * _jit.CALIBRATION_SAMPLES):
            _jit.run(serial_is_slow, work)
            _jit.run(split_is_slow, work)
        verdicts = _jit.split_verdicts()
        assert verdicts[("serial_is_slow", work.bit_length())] is True
        assert verdicts[("split_is_slow", work.bit_length())] is False
        for kern in (serial_is_slow, split_is_slow):
            calls[kern.__name__].clear()
            _jit.run(kern, work)
        assert calls["split_is_slow"] == [1]  # serially, once
        assert len(calls["serial_is_slow"]) == 2 * _jit.PARTS_PER_THREAD  # split in parts
        _jit.run(split_is_slow, 4 * work)  # another size class: measured afresh
        assert _jit.split_verdicts()[("split_is_slow", (4 * work).bit_length())] is None
    finally:
        axisops.thread_limit(threads)


def test_openmp_splits_are_timed_back_to_back(monkeypatch):
    """The calibration of a split between OpenMP's threads (``_jit._omp_call``)
    times the serial calls first and then splits back to back, the first of which
    only wakes the threads: here a stand-in whose first split after a serial call
    is slow (asleep) and whose next ones are fast is found to pay, as a decided
    split (which runs serially where the threads sleep) would."""
    monkeypatch.setattr(_jit, "_SPLIT_PAYS", {})
    monkeypatch.setattr(_jit, "_RECHECK", {})
    ways: list = []

    def kern(part, parts):
        ways.append("serial")
        time.sleep(0.01)

    def split_call():
        waking = not ways or ways[-1] == "serial"
        ways.append("split")
        time.sleep(0.03 if waking else 0.001)
        return True

    key = (kern, 20, -2, 0)
    for _ in range(2 * _jit.CALIBRATION_SAMPLES + 1):
        _jit._calibrating(key, _jit._SPLIT_PAYS.get(key), kern, 1 << 19, (), 2, split_call)
    assert ways == ["serial"] * _jit.CALIBRATION_SAMPLES + ["split"] * (_jit.CALIBRATION_SAMPLES + 1)
    assert _jit._SPLIT_PAYS[key] is True


def test_splits_are_weighed_against_the_callers_serial_call(monkeypatch):
    """A plan's split may walk the data in another order than its serial call (a
    tall table's columns in blocks of columns, not row by row): the calibration
    times the serial call the plan would make (``serial=``), not the split's
    kernel on one thread. Here the split's layout takes 20 ms on one thread and
    4 ms a part on the pool, the plan's own serial call 2 ms: serial pays, and
    the decided calls make the plan's serial call, never the split's layout."""
    monkeypatch.setattr(_jit, "_SPLIT_PAYS", {})
    monkeypatch.setattr(_jit, "_RECHECK", {})
    monkeypatch.setattr(_jit, "CALIBRATE", True)
    threads = axisops.thread_limit()
    axisops.thread_limit(2)
    ways: list = []

    def split_layout(part, parts):
        ways.append("split layout")
        time.sleep(0.02 if parts == 1 else 0.004)

    def whole_call():
        ways.append("whole")
        time.sleep(0.002)

    work = 3 * _jit.PARALLEL_MIN_WORK
    try:
        for _ in range(2 * _jit.CALIBRATION_SAMPLES):
            _jit.run(split_layout, work, site=7, serial=whole_call)
        assert ways.count("whole") == _jit.CALIBRATION_SAMPLES
        assert [v for key, v in _jit._SPLIT_PAYS.items() if key[3] == 7] == [False]
        ways.clear()
        _jit.run(split_layout, work, site=7, serial=whole_call)
        assert ways == ["whole"]
    finally:
        axisops.thread_limit(threads)


def test_each_site_of_a_kernel_has_its_own_verdict(monkeypatch):
    """Two plans of one kernel (here two sites of a stand-in whose split pays at
    one and not at the other, as a split pays for rows and not for four lanes side
    by side) keep a verdict each."""
    monkeypatch.setattr(_jit, "_SPLIT_PAYS", {})
    monkeypatch.setattr(_jit, "_RECHECK", {})
    monkeypatch.setattr(_jit, "CALIBRATE", True)
    threads = axisops.thread_limit()
    axisops.thread_limit(2)
    serial_is_slow = {1: True, 2: False}
    now = {"site": 1}

    def two_layouts(part, parts):
        time.sleep(0.02 if (parts == 1) == serial_is_slow[now["site"]] else 0.001)

    work = 3 * _jit.PARALLEL_MIN_WORK
    try:
        for _ in range(2 * _jit.CALIBRATION_SAMPLES):
            for site in (1, 2):
                now["site"] = site
                _jit.run(two_layouts, work, site=site)
        verdicts = {key[3]: v for key, v in _jit._SPLIT_PAYS.items()}
        assert verdicts == {1: True, 2: False}
    finally:
        axisops.thread_limit(threads)


def test_a_verdict_is_measured_again_after_its_interval(monkeypatch):
    """A verdict taken from noisy first calls is not kept for good: after
    ``RECHECK_FIRST`` calls it is opened and measured afresh (here the stand-in's
    costs swap meanwhile, and the new verdict follows them), the next interval
    twice as long."""
    monkeypatch.setattr(_jit, "_SPLIT_PAYS", {})
    monkeypatch.setattr(_jit, "_RECHECK", {})
    monkeypatch.setattr(_jit, "CALIBRATE", True)
    monkeypatch.setattr(_jit, "RECHECK_FIRST", 4)
    monkeypatch.setattr(_jit, "RECHECK_CLEAR", 4)
    threads = axisops.thread_limit()
    axisops.thread_limit(2)
    costs = {"serial_is_slow": False}

    def swapping(part, parts):
        time.sleep(0.01 if (parts == 1) == costs["serial_is_slow"] else 0.001)

    work = 3 * _jit.PARALLEL_MIN_WORK
    key = ("swapping", work.bit_length())
    try:
        for _ in range(2 * _jit.CALIBRATION_SAMPLES):
            _jit.run(swapping, work)
        assert _jit.split_verdicts()[key] is False
        costs["serial_is_slow"] = True
        for _ in range(3):
            _jit.run(swapping, work)
        assert _jit.split_verdicts()[key] is False  # within the interval
        _jit.run(swapping, work)
        assert key not in _jit.split_verdicts()  # opened: the next calls measure
        for _ in range(2 * _jit.CALIBRATION_SAMPLES):
            _jit.run(swapping, work)
        assert _jit.split_verdicts()[key] is True
        assert list(_jit._RECHECK.values()) == [[8, 8]]
    finally:
        axisops.thread_limit(threads)


def _force_openmp(monkeypatch):
    """Every planned call from one unit of work split between OpenMP's threads once
    calibrated (a split always 'pays')."""
    monkeypatch.setattr(_jit, "_SPLIT_PAYS", {})
    monkeypatch.setattr(_jit, "_RECHECK", {})
    monkeypatch.setattr(_jit, "CALIBRATE", True)
    monkeypatch.setattr(_jit, "OMP_MIN_WORK", 1)
    monkeypatch.setattr(_jit, "SPLIT_MARGIN", float("inf"))
    from axisops import _omp
    monkeypatch.setattr(_omp, "LOOP_GAP", float("inf"))  # split even after a pause
    # where another test loaded the system's libgomp first (numbagg, a parfor
    # kernel), the bounded polling could not be set and OpenMP is off: on here
    monkeypatch.setattr(_omp, "enabled", True)


def _planned_calls():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((6, 5000)).astype(np.float32)
    x[2, 7] = np.nan
    idx = rng.integers(0, 5000, (6, 5000))
    image = rng.standard_normal((2, 8, 12, 12))
    return [lambda: axisops.sum(x, axis=1, keepdims=True),
            lambda: axisops.argmax(x, axis=0, keepdims=True),
            lambda: axisops.take_along_axis(x, idx, axis=1),
            lambda: axisops.max_pool(image, 3, stride=2, padding=1, return_indices=True),
            lambda: axisops.moving_mean(x[:, ::2], 7, axis=1),
            lambda: axisops.scatter(x, idx, x, 1, reduce="add")]


def test_planned_calls_split_between_openmp_threads_give_one_threads_bits(monkeypatch):
    """A planned call whose split the calibration chose runs its kernel's parts on
    OpenMP's threads (``axisops._omp``); forced here for every family's planned
    path: the results are one thread's, bit for bit."""
    _force_openmp(monkeypatch)
    threads = axisops.thread_limit()
    calls = _planned_calls()
    try:
        axisops.thread_limit(1)
        want = [f() for f in calls]
        axisops.thread_limit(2)
        for _ in range(2 * _jit.CALIBRATION_SAMPLES + 2):
            for f, w in zip(calls, want):
                for got, ref in zip(*(v if isinstance(v, tuple) else (v,) for v in (f(), w))):
                    assert got.dtype == ref.dtype and got.shape == ref.shape
                    assert same_bits(got, ref) is None
        split = {key[0] for key, v in _jit.split_verdicts().items()
                 if key[-1] == "openmp" and v is True}
        assert {"reduce_values", "reduce_arg", "pool", "moving_sum_kernel",
                "take_along", "scatter_lanes"} <= split, split
    finally:
        axisops.thread_limit(threads)


def _child_sum(x, queue):
    axisops.thread_limit(2)
    queue.put(axisops.sum(x, axis=1, keepdims=True))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: POSIX only")
def test_a_child_forked_after_openmp_was_used_runs_without_it(monkeypatch):
    """GNU OpenMP aborts a forked child of a process that used it: the child's
    planned calls keep to the pool of Python threads."""
    _force_openmp(monkeypatch)
    threads = axisops.thread_limit()
    x = np.random.default_rng(3).standard_normal((4, 20000)).astype(np.float32)
    try:
        axisops.thread_limit(2)
        for _ in range(2 * _jit.CALIBRATION_SAMPLES + 1):
            want = axisops.sum(x, axis=1, keepdims=True)
        assert _jit.split_verdicts()[("reduce_values", (x.size // 8).bit_length(), "openmp")]
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        child = ctx.Process(target=_child_sum, args=(x, queue))
        child.start()
        got = queue.get(timeout=120)
        child.join(timeout=60)
        assert child.exitcode == 0
        assert got.shape == want.shape and same_bits(got, want) is None
    finally:
        axisops.thread_limit(threads)


def test_openmp_is_loaded_at_import_and_used_after_torch_was_imported():
    """``import axisops`` loads Numba's OpenMP layer (a library launching it first,
    as numbagg's parallel functions do, would keep axisops off OpenMP). PyTorch's
    wheel bundles a libgomp.so.1 of its own, which Numba's layer does not share
    (it loads the system's beside it, with the bounded polling): OpenMP stays on in
    a process that imported torch first, and its threads stop polling soon after a
    call (no more CPU than a few milliseconds in the next 200 ms)."""
    pytest.importorskip("torch")
    code = (
        "import torch, time, numba, numpy as np, axisops\n"
        "from axisops import _omp\n"
        "numba.threading_layer()  # raises where no layer was launched\n"
        "x = np.ones((4, 1 << 18), np.float32)\n"
        "for _ in range(20): axisops.sum(x, axis=1)\n"
        "c = time.process_time(); time.sleep(0.2); c = time.process_time() - c\n"
        "print(_omp.enabled, round(c, 4))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    enabled, cpu = out.stdout.split()
    assert enabled == "True"
    assert float(cpu) < 0.05, f"{cpu} s of CPU in the 200 ms after the calls"


def test_a_serial_openmp_verdict_leaves_large_calls_to_the_pool(monkeypatch):
    """Where OpenMP's split was measured not to pay, a planned call (a reduction,
    each phase of a chunked scan) goes on to the pool's own calibrated run instead
    of running serially at once; the bits are one thread's."""
    _force_openmp(monkeypatch)
    omp_verdicts = {}

    def serial_verdict(kern, work, address, args, phase=-1, site=0, serial=None):
        omp_verdicts[phase] = False
        return False

    monkeypatch.setattr(_jit, "_omp_call", serial_verdict)
    pooled = []
    real_run = _jit.run

    def recorded_run(kern, work, *args, site=0, serial=None):
        pooled.append(getattr(kern, "__name__", ""))
        real_run(kern, work, *args, site=site, serial=serial)

    monkeypatch.setattr(_jit, "run", recorded_run)
    monkeypatch.setattr(scan_module, "run", recorded_run)
    threads = axisops.thread_limit()
    x = np.random.default_rng(9).standard_normal((4, 1 << 20)).astype(np.float32)
    try:
        axisops.thread_limit(1)
        want_sum, want_scan = axisops.sum(x, axis=1), axisops.cumsum(x.reshape(-1))
        axisops.thread_limit(2)
        pooled.clear()
        got_sum, got_scan = axisops.sum(x, axis=1), axisops.cumsum(x.reshape(-1))
    finally:
        axisops.thread_limit(threads)
    assert "reduce_values" in pooled and pooled.count("scan_values") >= 2
    assert omp_verdicts  # OpenMP was asked first
    assert same_bits(got_sum, want_sum) is None and same_bits(got_scan, want_scan) is None


def test_the_phases_of_a_scan_are_measured_apart(monkeypatch):
    """A chunked scan's totals and scan phases run (on OpenMP's threads, or through
    ``_jit.run``) with the same kernel and work: each has its own verdict (timed together, the faster phase's
    samples made the slower one look serial), and the results are the serial ones."""
    monkeypatch.setattr(_jit, "_SPLIT_PAYS", {})
    monkeypatch.setattr(_jit, "_RECHECK", {})
    monkeypatch.setattr(_jit, "CALIBRATE", True)
    threads = axisops.thread_limit()
    x = np.random.default_rng(5).standard_normal((4, 1 << 18)).astype(np.float32)
    try:
        axisops.thread_limit(1)
        want = axisops.cumsum(x, axis=1)
        axisops.thread_limit(2)
        for _ in range(2 * _jit.CALIBRATION_SAMPLES + 1):
            assert same_bits(axisops.cumsum(x, axis=1), want) is None
        phases = {key[2] for key in _jit.split_verdicts() if key[0] == "scan_values"}
        assert phases == {0, 2}  # PHASE_TOTALS and PHASE_SCAN (PHASE_CARRIES: no work)
    finally:
        axisops.thread_limit(threads)

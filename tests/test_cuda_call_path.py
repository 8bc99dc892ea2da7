"""The host path of a warm CUDA call stays short: each family's launches,
read-backs (each a synchronisation on a GPU) and uploads per warm call, counted
under the simulator with the launches stubbed (``axisops.bench.cuda_host``).

A read-back is allowed only where an error can be found on the device (an index
out of range, an all-NaN slice of nanargmax); a warm call uploads nothing (its
geometry constants are cached per shape, and a flag read back cleared is kept for
the next call). Speed itself is never
asserted here: ``python -m axisops.bench.cuda_host`` measures it.
"""
from __future__ import annotations

import pytest

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")
from numba import config

if not getattr(config, "ENABLE_CUDASIM", False):  # pragma: no cover - a real GPU
    pytest.skip("counts launches under the simulator only", allow_module_level=True)

from axisops.bench import cuda_host

#: workload -> (launches, read-backs, uploads) of one warm call, at most.
BUDGET = {
    "sum axis=1": (1, 0, 0),               # one chunk: the kernel writes the result
    "max axis=0": (2, 0, 0),               # float values: the finish normalises NaN, -0.0
    "argmax axis=1": (1, 0, 0),
    "mean axis=None": (2, 0, 0),
    "cumsum axis=1": (1, 0, 0),
    "cummax axis=1": (1, 0, 0),
    "take rows": (1, 1, 0),                # mode="raise": the index flag (kept)
    "take_along_axis axis=1": (1, 1, 0),   # the same
    "scatter add": (2, 1, 0),              # the same
    "unfold 3x3": (1, 0, 0),
    "max_pool 2x2": (1, 0, 0),
    "avg_pool 3x3/2": (1, 0, 0),
    "moving_mean 8": (1, 0, 0),
    "nansum axis=1": (1, 0, 0),
    "nanargmax axis=1": (2, 1, 0),         # an all-NaN slice raises: its flag
}


@pytest.fixture(scope="module")
def data():
    return cuda_host.inputs()  # the bench's (64, 512): nothing runs, so size costs nothing


@pytest.mark.parametrize("workload", cuda_host.workloads(), ids=lambda w: w.name)
def test_a_warm_call_stays_within_its_budget(workload, data):
    launches, read_backs, uploads = BUDGET[workload.name]
    with cuda_host.stubbed() as counts:
        workload.call(data)  # the first call makes the plan and uploads its constants
        counts.reset()
        workload.call(data)
    assert counts.launches >= 1, "the stub saw no launch: the count would prove nothing"
    assert (counts.launches <= launches and counts.read_backs <= read_backs
            and counts.uploads <= uploads), (
        f"{workload.name}: {counts.launches} launches ({', '.join(counts.kernels)}), "
        f"{counts.read_backs} read-backs, {counts.uploads} uploads; budget {BUDGET[workload.name]}")


def test_every_workload_has_a_budget():
    assert {w.name for w in cuda_host.workloads()} == set(BUDGET)


def test_the_stub_counts_and_restores():
    import numpy as np
    from numba import cuda

    from axisops.cuda import kernels as K  # noqa: F401 - any kernel module loads the simulator

    a = cuda.to_device(np.arange(4.0))
    with cuda_host.stubbed() as counts:
        a.copy_to_host()
        cuda.to_device(np.zeros(2))
        cuda.device_array(3)
    assert (counts.read_backs, counts.uploads, counts.allocations) == (1, 1, 1)
    with cuda_host.stubbed(run_kernels=True) as counts:
        import axisops

        np.testing.assert_array_equal(axisops.sum(a).copy_to_host(), 6.0)
    assert counts.launches == 1 and counts.read_backs == 1  # one chunk: no finishing launch
    assert type(cuda.to_device).__name__ == "function" and cuda.to_device.__name__ == "to_device"


@pytest.mark.parametrize("workload", cuda_host.workloads(), ids=lambda w: w.name)
def test_a_warm_call_gives_the_cold_calls_result(workload):
    """The kept plans (and scatter's kept checks) give the NumPy path's result on the
    second call as on the first: kernels run, small inputs."""
    import numpy as np

    shape = dict(rows=6, cols=10, image=(1, 2, 6, 6))
    device, host = cuda_host.inputs(**shape), cuda_host.inputs(**shape, host=True)
    want = workload.call(host)
    for _ in range(2):  # cold, then warm
        got = workload.call(device)
        parts = got if isinstance(got, tuple) else (got,)
        wanted = want if isinstance(want, tuple) else (want,)
        for g, w in zip(parts, wanted):
            g = g.copy_to_host()
            assert g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=workload.name)


def test_a_warm_scatter_of_shared_indices_reads_their_pattern():
    """Indices every lane shares (stride 0 outside the axis: an expanded tensor):
    the kept check says to read their 1-D pattern, as the cold call did."""
    import numpy as np
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    import axisops

    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    pattern = np.array([[2], [0], [2], [4], [1]])
    idx = np.broadcast_to(pattern, (5, 3))  # along axis 0, shared by the 3 lanes
    upd = rng.standard_normal((5, 3)).astype(np.float32)
    want = axisops.scatter(x, idx, upd, 0, reduce="add")
    for _ in range(2):  # cold, then warm
        got = axisops.scatter(FakeCUDAArray(x.copy()), FakeCUDAArray(idx),
                              FakeCUDAArray(upd), 0, reduce="add").copy_to_host()
        np.testing.assert_array_equal(got, want)


def test_a_kept_flag_found_set_is_not_used_again():
    """The error flags are kept between calls (no upload per call): one that a bad
    index set is dropped, so the next good call does not raise, and the next bad one
    still does (take's flag, take_along_axis's, nanargmax's all-NaN flag)."""
    import numpy as np
    from numba import cuda

    import axisops

    x = cuda.to_device(np.arange(12.0).reshape(3, 4))
    good, bad = cuda.to_device(np.array([0, 2])), cuda.to_device(np.array([0, 3]))
    along_good = cuda.to_device(np.zeros((3, 4), np.int64))
    along_bad = cuda.to_device(np.full((3, 4), 4, np.int64))
    nan_row = cuda.to_device(np.array([[1.0, 2.0], [np.nan, np.nan]]))
    fine = cuda.to_device(np.array([[1.0, 2.0], [3.0, np.nan]]))
    for _ in range(2):
        with pytest.raises(IndexError):
            axisops.take(x, bad, 0)
        got = axisops.take(x, good, 0).copy_to_host()
        np.testing.assert_array_equal(got, np.arange(12.0).reshape(3, 4)[[0, 2]])
        with pytest.raises(IndexError):
            axisops.take_along_axis(x, along_bad, 1)
        got = axisops.take_along_axis(x, along_good, 1).copy_to_host()
        np.testing.assert_array_equal(got, np.arange(12.0).reshape(3, 4)[:, [0, 0, 0, 0]])
        with pytest.raises(ValueError, match="All-NaN"):
            axisops.nanargmax(nan_row, 1)
        got = axisops.nanargmax(fine, 1).copy_to_host()
        assert got.dtype == np.int64 and got.shape == (2,)
        np.testing.assert_array_equal(got, [1, 0])

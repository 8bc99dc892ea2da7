"""The gather and scatter workloads (take, take_along_axis, scatter add)."""
from __future__ import annotations

import numpy as np

from .onnx import onnx_runner
from .systems import _torch
from .workload import Workload, _axisops_fn, exact_check, float32_sum_check

# Gather and scatter.  The index arrays (int64) are made once by ``setup``, from
# their own generator with a fixed seed, so they are the same whichever
# workloads run; only the operation is timed.

INDEX_SEED = 4
#: Number of indices of the ``take`` workload (into an axis of 512 on the full shape).
TAKE_COUNT = 256


def _index_rng() -> np.random.Generator:
    return np.random.default_rng(INDEX_SEED)


def take_workload(axis: int = 1, count: int = TAKE_COUNT) -> Workload:
    """``take(x, indices, axis)``: ``count`` random int64 indices in ``[0, x.shape[axis])``.

    Peers: ``np.take``, ``torch.index_select``, ONNX Runtime's Gather (the
    indices are a graph input, fed on every run).  GB/s counts the rows the
    indices read (the result's size), the indices, and the result.
    """

    def bytes_read(inputs):
        x, indices = inputs
        rows = x.size // x.shape[axis] * indices.size  # elements the indices pick
        return rows * x.itemsize + indices.nbytes

    return _gather_workload(
        "take", axis, lambda shape: count, np.take, "index_select", "Gather",
        note=(f"{count} int64 indices along axis {axis} (torch: index_select); GB/s counts "
              "the rows of x they read, not all of x"),
        bytes_read=bytes_read)


def take_along_axis_workload(axis: int = 1) -> Workload:
    """``take_along_axis(x, indices, axis)`` with int64 indices of ``x``'s shape.

    Peers: ``np.take_along_axis``, ``torch.gather``, ONNX Runtime's GatherElements.
    """
    return _gather_workload(
        "take_along_axis", axis, lambda shape: shape, np.take_along_axis, "gather",
        "GatherElements", note="int64 indices of x's shape (torch: gather; ONNX: GatherElements)")


def _gather_workload(op, axis, index_shape, numpy_fn, torch_name, onnx_op, note,
                     bytes_read=None) -> Workload:
    """A gather of random float32 ``x`` at int64 indices of ``index_shape(x.shape)``,
    random in ``[0, x.shape[axis])``: ``fn(x, indices, axis)`` in every system."""

    def setup(shape, rng):
        x = rng.random(shape, dtype=np.float32)
        indices = _index_rng().integers(0, shape[axis], index_shape(shape), dtype=np.int64)
        return x, indices

    def axisops_factory(x, indices):
        fn = _axisops_fn(op)
        return lambda: fn(x, indices, axis)

    def numpy_factory(x, indices):
        return lambda: numpy_fn(x, indices, axis=axis)

    def torch_factory(x, indices):
        torch = _torch()
        fn, t, ti = getattr(torch, torch_name), torch.from_numpy(x), torch.from_numpy(indices)
        return lambda: fn(t, axis, ti)

    def onnx_factory(x, indices):
        return onnx_runner(onnx_op, x, out_dtype=x.dtype, out_rank=x.ndim,
                           attributes={"axis": axis}, feeds=[indices], opset=13)

    return Workload(
        name=f"{op} axis={axis}",
        op=op,
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 "torch": torch_factory, "onnxruntime": onnx_factory},
        check=exact_check,
        note=note,
        bytes_read=bytes_read,
    )


def scatter_add_workload(axis: int = 1) -> Workload:
    """``scatter(zeros, indices, updates, axis, reduce="add")``: a scatter-add into zeros.

    ``indices`` (int64, the full shape) are random in ``[0, shape[axis])``, so
    about as many updates land on each destination as the axis is long.
    Peers: ``np.add.at`` on a copy of the zeros (the copy is timed: every
    system returns a new array), ``torch.scatter_add``, ONNX Runtime's
    ScatterElements with ``reduction="add"``.  The sums come out in each
    system's own order, so they are checked to a float32 tolerance
    (:func:`float32_sum_check`).
    """

    def setup(shape, rng):
        updates = rng.random(shape, dtype=np.float32)
        indices = _index_rng().integers(0, shape[axis], shape, dtype=np.int64)
        return np.zeros(shape, dtype=np.float32), indices, updates

    def axisops_factory(x, indices, updates):
        fn = _axisops_fn("scatter")
        return lambda: fn(x, indices, updates, axis, reduce="add")

    def numpy_factory(x, indices, updates):
        # np.add.at with one index array per dimension, broadcast against indices.
        where = tuple(
            indices if d == axis
            else np.arange(n).reshape([-1 if k == d else 1 for k in range(x.ndim)])
            for d, n in enumerate(indices.shape)
        )

        def run():
            out = x.copy()
            np.add.at(out, where, updates)
            return out

        return run

    def torch_factory(x, indices, updates):
        torch = _torch()
        t, ti, tu = torch.from_numpy(x), torch.from_numpy(indices), torch.from_numpy(updates)
        return lambda: torch.scatter_add(t, axis, ti, tu)

    def onnx_factory(x, indices, updates):
        return onnx_runner("ScatterElements", x, out_dtype=x.dtype, out_rank=x.ndim,
                           attributes={"axis": axis, "reduction": "add"},
                           feeds=[indices, updates], opset=18)

    return Workload(
        name=f"scatter add axis={axis}",
        op="scatter",
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 "torch": torch_factory, "onnxruntime": onnx_factory},
        check=float32_sum_check,
        note=("into zeros, int64 indices and float32 updates of x's shape (NumPy: np.add.at "
              "on a copy, the copy timed; torch: scatter_add); sums in each system's own order, "
              "checked to rtol 1e-5"),
    )

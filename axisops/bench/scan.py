"""The scan workloads (cummax, cumsum, ...)."""
from __future__ import annotations

import numpy as np

from .onnx import onnx_runner
from .systems import _torch
from .workload import Workload, _axisops_fn, random_float32

# How each scan is spelled by each peer: the numpy function, the torch function,
# the ONNX op_type (None: ONNX has no such operator), and a note for the table.
_SCANS = {
    "cumsum": (np.cumsum, "cumsum", "CumSum", ""),
    "cummax": (
        np.maximum.accumulate, "cummax", None,
        "NumPy (np.maximum.accumulate) computes the values only; axisops and torch also "
        "write the int64 indices, so they move 16 bytes per element to NumPy's 8 "
        "(their indices are checked against each other)",
    ),
}


def scan_workload(op: str, axis: int, setup=random_float32) -> Workload:
    """A scan ``op(x, axis)`` workload: axisops, NumPy, torch, and ONNX Runtime if
    ONNX has the operator (CumSum: the axis is a constant int64 input)."""
    np_fn, torch_name, onnx_op, note = _SCANS[op]

    def axisops_factory(x):
        fn = _axisops_fn(op)
        return lambda: fn(x, axis)

    def numpy_factory(x):
        return lambda: np_fn(x, axis=axis)

    def torch_factory(x):
        torch = _torch()
        fn = getattr(torch, torch_name)
        t = torch.from_numpy(x)
        return lambda: fn(t, axis)

    def onnx_factory(x):
        return onnx_runner(
            onnx_op, x, out_dtype=x.dtype, out_rank=x.ndim,
            constants=[np.array(axis, dtype=np.int64)],
        )

    systems = {"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory}
    if onnx_op is not None:
        systems["onnxruntime"] = onnx_factory
    return Workload(
        name=f"{op} axis={axis}",
        op=op,
        setup=setup,
        systems=systems,
        note=note,
        # A tuple result (values, indices): torch's is the one with indices.
        full_reference="torch" if op in ("cummax", "cummin") else "",
    )

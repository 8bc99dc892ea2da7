"""The reduction workloads (sum, max, argmax, ...)."""
from __future__ import annotations

import numpy as np

from .onnx import onnx_runner
from .systems import _torch
from .workload import Workload, _axisops_fn, _onnx_axes, random_float32

# How each reduction is spelled by each peer: numpy function, torch function,
# and the ONNX node (op_type, result dtype of a float32 input or None for "same",
# whether axes is an input (True) or an attribute, the opset that allows that).
_REDUCTIONS = {
    "argmax": ("argmax", "argmax", ("ArgMax", np.int64, "attribute", 13)),
    "argmin": ("argmin", "argmin", ("ArgMin", np.int64, "attribute", 13)),
    "sum": ("sum", "sum", ("ReduceSum", None, "input", 13)),
    "max": ("max", "amax", ("ReduceMax", None, "input", 18)),
    "min": ("min", "amin", ("ReduceMin", None, "input", 18)),
    "prod": ("prod", "prod", ("ReduceProd", None, "input", 18)),
    "mean": ("mean", "mean", ("ReduceMean", None, "input", 18)),
}


def reduction_workload(op: str, axis, setup=random_float32) -> Workload:
    """A reduction ``op(x, axis)`` workload with all four systems."""
    np_name, torch_name, (onnx_op, onnx_out, axes_as, opset) = _REDUCTIONS[op]
    np_fn = getattr(np, np_name)

    def axisops_factory(x):
        fn = _axisops_fn(op)
        return lambda: fn(x, axis)

    def numpy_factory(x):
        return lambda: np_fn(x, axis=axis)

    def torch_factory(x):
        torch = _torch()
        fn = getattr(torch, torch_name)
        t = torch.from_numpy(x)
        if isinstance(axis, tuple) and torch_name in ("argmax", "argmin", "prod"):
            raise NotImplementedError(f"torch.{torch_name} takes one dim")
        return lambda: fn(t, axis)

    def onnx_factory(x):
        out_dtype = x.dtype if onnx_out is None else onnx_out
        out_rank = x.ndim - (len(axis) if isinstance(axis, tuple) else 1)
        if axes_as == "attribute":
            if isinstance(axis, tuple):
                raise NotImplementedError(f"ONNX {onnx_op} takes one axis")
            return onnx_runner(
                onnx_op, x, out_dtype=out_dtype, out_rank=out_rank,
                attributes={"axis": axis, "keepdims": 0}, opset=opset,
            )
        return onnx_runner(
            onnx_op, x, out_dtype=out_dtype, out_rank=out_rank, attributes={"keepdims": 0},
            constants=[_onnx_axes(axis)], opset=opset,
        )

    axis_text = "(" + ", ".join(map(str, axis)) + ")" if isinstance(axis, tuple) else str(axis)
    return Workload(
        name=f"{op} axis={axis_text}",
        op=op,
        setup=setup,
        systems={
            "axisops": axisops_factory,
            "numpy": numpy_factory,
            "torch": torch_factory,
            "onnxruntime": onnx_factory,
        },
    )

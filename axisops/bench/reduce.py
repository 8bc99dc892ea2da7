"""The reduction workloads (sum, max, argmax, ...)."""
from __future__ import annotations

import numpy as np

from .onnx import onnx_runner
from .systems import _bottleneck, _numbagg, _torch
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


#: bottleneck's and numbagg's names: their NaN-skipping functions, which on the
#: NaN-free data of the bench compute what axisops' plain operators compute (the
#: reductions NumPy users reach for when np.nanargmax and friends are slow).
_NAN_PEERS = {"argmax": "nanargmax", "argmin": "nanargmin", "sum": "nansum", "max": "nanmax",
              "min": "nanmin", "mean": "nanmean"}


def nan_peer_factories(op: str, axis) -> dict:
    """``{"bottleneck": factory, "numbagg": factory}`` for *op* along *axis*, each
    raising NotImplementedError where that library has no such function or takes
    no such axis (bottleneck: one axis or None; numbagg's arg-reductions: one axis)."""
    name = _NAN_PEERS.get(op)

    def bottleneck_factory(x):
        if name is None or isinstance(axis, tuple):
            raise NotImplementedError(f"bottleneck has no {op} over several axes"
                                      if name else f"bottleneck has no {op}")
        fn = getattr(_bottleneck(), name)
        return lambda: fn(x, axis=axis)

    def numbagg_factory(x):
        fn = getattr(_numbagg(), name, None) if name else None
        if fn is None:
            raise NotImplementedError(f"numbagg has no {op}")
        if isinstance(axis, tuple) and op in ("argmax", "argmin"):
            raise NotImplementedError(f"numbagg's {name} takes one axis")
        return lambda: fn(x, axis=axis)

    return {"bottleneck": bottleneck_factory, "numbagg": numbagg_factory}


def reduction_workload(op: str, axis, setup=random_float32) -> Workload:
    """A reduction ``op(x, axis)`` workload with every system."""
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
            **nan_peer_factories(op, axis),
        },
    )

"""ONNX Runtime runners: one session per workload, built from a single ONNX node."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .systems import Runner, _onnx, _ort, core_count

# --------------------------------------------------------------------------
# ONNX Runtime runners

ONNX_IR_VERSION = 10  # ONNX 1.16's; every onnxruntime this library supports reads it


def onnx_runner(
    op_type: str,
    x: np.ndarray,
    *,
    out_dtype: Any,
    out_rank: int,
    attributes: dict[str, Any] | None = None,
    constants: Sequence[np.ndarray | None] = (),
    feeds: Sequence[np.ndarray] = (),
    opset: int = 18,
) -> Runner:
    """An ONNX Runtime session computing ``op_type(x, *feeds, *constants)``, as a runner.

    ``out_rank`` is the number of dimensions of the result (its sizes are
    left symbolic).  ``feeds`` are more graph inputs, passed on every run as
    ``x`` is (the indices and updates of a gather or scatter: data, not part of
    the model).  ``constants`` become initializers (so ORT sees them as constant
    inputs, as ``axes`` of ReduceSum are in a real model); ``None`` leaves an
    optional input out.  The session runs on the CPU with
    ``intra_op_num_threads`` set to the core count.
    """
    onnx = _onnx()
    ort = _ort()
    helper = onnx.helper
    x_elem = helper.np_dtype_to_tensor_dtype(np.dtype(x.dtype))
    y_elem = helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype))
    inputs = ["x"]
    graph_inputs = [helper.make_tensor_value_info("x", x_elem, list(x.shape))]
    feed = {"x": np.ascontiguousarray(x)}
    for i, value in enumerate(feeds, 1):
        name = f"x{i}"
        value = np.ascontiguousarray(value)
        inputs.append(name)
        graph_inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)))
        feed[name] = value
    initializers = []
    for i, value in enumerate(constants):
        if value is None:
            inputs.append("")
            continue
        name = f"c{i}"
        inputs.append(name)
        initializers.append(onnx.numpy_helper.from_array(np.asarray(value), name))
    node = helper.make_node(op_type, inputs, ["y"], **(attributes or {}))
    graph = helper.make_graph(
        [node],
        f"axisops_bench_{op_type}",
        graph_inputs,
        [helper.make_tensor_value_info("y", y_elem, [f"y{i}" for i in range(out_rank)])],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ONNX_IR_VERSION
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = core_count()
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return lambda: session.run(["y"], feed)[0]

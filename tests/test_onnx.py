"""axisops.onnx: ONNX ArgMax/ArgMin/Reduce*/CumSum/CumProd/Gather*/ScatterElements/Col2Im
nodes run on axisops.

Every ONNX backend node test case whose graph uses one of these operators runs
through ``ReferenceEvaluator(model, new_ops=axisops.onnx.OPS)``; direct tests for
opsets 11, 13 and 18 (and 14 and 26 for the scans) compare with ONNX's own
reference implementation, and with ONNX Runtime where ONNX's reference cannot
run a valid model (GatherElements on a leading part of the data, Col2Im with
an empty batch) and for the gathers, the scatter and Col2Im as a second peer.
"""
from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from cases import dtype_params

pytest.importorskip("onnx")

import onnx.backend.test.case.node as onnx_node_cases
from onnx import AttributeProto, TensorProto, helper
from onnx.reference import ReferenceEvaluator

import axisops.onnx as aonnx

OP_TYPES = {cls.__name__ for cls in aonnx.OPS}


#: ONNX's case modules whose generators cost seconds (pure-Python references) and
#: whose models have no node of axisops.onnx's, by the op they test: not imported
#: while that op is not one of ours (9.1 of the 9.8 s that importing every module
#: took, at each worker's collection, were modules without a case for us)
_COSTLY_UNRELATED = {"lppool": "LpPool", "affinegrid": "AffineGrid"}


def _backend_cases():
    """ONNX's node test cases with a node of ours (``collect_testcases`` less the
    modules of :data:`_COSTLY_UNRELATED`)."""
    import importlib
    import pkgutil

    with warnings.catch_warnings():  # the case generators divide by zero on purpose
        warnings.simplefilter("ignore")
        for _, name, is_package in pkgutil.iter_modules(onnx_node_cases.__path__):
            if is_package or (name in _COSTLY_UNRELATED
                              and _COSTLY_UNRELATED[name] not in OP_TYPES):
                continue  # the packages hold ONNX-ML's cases (not ours)
            importlib.import_module(f"{onnx_node_cases.__name__}.{name}")
    return [
        case
        for case in onnx_node_cases._NodeTestCases
        if any(node.op_type in OP_TYPES for node in case.model.graph.node)
    ]


BACKEND_CASES = _backend_cases()


@pytest.fixture
def calls(monkeypatch):
    """Record the op type of every axisops.onnx node that runs."""
    seen = []
    bases = {c for cls in aonnx.OPS for c in cls.__mro__
             if "_run" in vars(c) and c.__module__ == aonnx.__name__}
    for base in bases:
        run = base._run

        def counted(self, *args, _run=run, **kwargs):
            seen.append(type(self).__name__)
            return _run(self, *args, **kwargs)

        monkeypatch.setattr(base, "_run", counted)
    return seen


def _assert_same(got, expected, rtol=1e-5, atol=0.0):
    """Same dtype and shape; equal values (floats to rtol, NaN equals NaN)."""
    got = np.asarray(got)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if np.issubdtype(expected.dtype, np.floating):
        if expected.dtype == np.float16:
            rtol = max(rtol, 1e-3)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, expected)


def _assert_ran_axisops(sess, calls):
    ours = [n for n in sess.rt_nodes_ if n.onnx_node.op_type in OP_TYPES]
    assert ours, "the model has no node for axisops.onnx"
    for node in ours:
        assert type(node) in aonnx.OPS, type(node)
    assert {type(n).__name__ for n in ours} <= set(calls)


# ------------------------------------------------------------ backend cases


def test_backend_cases_found():
    names = {case.name for case in BACKEND_CASES}
    assert len(names) == len(BACKEND_CASES)
    for op in ("argmax", "argmin", "reduce_sum", "reduce_max", "reduce_min",
               "reduce_mean", "reduce_prod", "cumsum", "cumprod", "gather",
               "gather_elements", "gathernd", "scatter_elements", "col2im", "top_k"):
        assert any(name.startswith(f"test_{op}_") for name in names), op
    scans = {name for name in names if name.startswith(("test_cumsum_", "test_cumprod_"))}
    assert len(scans) >= 18, sorted(scans)  # 9 each in onnx 1.19-1.23
    # One-node cases of the gathers and ScatterElements (onnx 1.23: 4, 3, 3, 7),
    # and graphs that use them inside (attention, NLLLoss, rotary embedding, ...).
    single = {case.model.graph.node[0].op_type for case in BACKEND_CASES
              if len(case.model.graph.node) == 1}
    assert {"Gather", "GatherElements", "GatherND", "ScatterElements"} <= single
    gathers = {name for name in names if name.startswith(
        ("test_gather_", "test_gathernd_", "test_scatter_elements_"))}
    assert len(gathers) >= 17, sorted(gathers)
    assert any(name.startswith("test_nllloss_") for name in names)  # GatherElements inside
    # Col2Im (onnx 1.23: 5 one-node cases: 2-D, strides, pads, dilations, 3-D).
    assert len({name for name in names if name.startswith("test_col2im")}) >= 5
    # The pooling operators (onnx 1.23: 23 MaxPool, 19 AveragePool, 2 + 2 global).
    pools = {name for name in names if name.startswith(("test_maxpool", "test_averagepool",
                                                         "test_globalmaxpool",
                                                         "test_globalaveragepool"))}
    assert len(pools) >= 40, sorted(pools)
    assert any("with_argmax" in name for name in pools)  # MaxPool's Indices output


@pytest.mark.parametrize("case", BACKEND_CASES, ids=lambda case: case.name)
def test_backend_case(case, calls):
    sess = ReferenceEvaluator(case.model, new_ops=aonnx.OPS)
    single = len(case.model.graph.node) == 1
    # a window's mean in float32 added in window order, where the case's outputs come
    # from NumPy's pairwise mean (or are printed to 4 digits): the case's tolerance
    averaged = case.model.graph.node[0].op_type in ("AveragePool", "GlobalAveragePool")
    for inputs, outputs in case.data_sets:
        feeds = dict(zip(sess.input_names, inputs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # e.g. a mean of nothing
            got = sess.run(None, feeds)
        assert len(got) == len(outputs)
        for g, e in zip(got, outputs):
            if single and not averaged:  # our node alone: tight
                _assert_same(g, e)
            else:  # our node inside an expanded function: the case's tolerance
                _assert_same(g, e, rtol=case.rtol, atol=case.atol)
    _assert_ran_axisops(sess, calls)


# ------------------------------------------------------------ direct tests

_ONNX_TYPES = {
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.uint32): TensorProto.UINT32,
    np.dtype(np.uint64): TensorProto.UINT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}

# opset from which ``axes`` is an input rather than an attribute
_AXES_INPUT_SINCE = {"ReduceSum": 13, "ReduceMax": 18, "ReduceMin": 18,
                     "ReduceMean": 18, "ReduceProd": 18}


def _model(op, opset, dtype, axes=None, **attrs):
    """One-node model. ``axes`` goes where this opset wants it (None: absent)."""
    inputs, axes_attr = ["x"], []
    graph_inputs = [helper.make_tensor_value_info("x", _ONNX_TYPES[np.dtype(dtype)], None)]
    if axes is not None and op in _AXES_INPUT_SINCE:
        if opset >= _AXES_INPUT_SINCE[op]:
            inputs.append("axes")
            graph_inputs.append(helper.make_tensor_value_info("axes", TensorProto.INT64, None))
        else:
            axes_attr = [helper.make_attribute("axes", list(axes), attr_type=AttributeProto.INTS)]
    out_type = TensorProto.INT64 if op.startswith("Arg") else _ONNX_TYPES[np.dtype(dtype)]
    node = helper.make_node(op, inputs, ["y"], **attrs)
    node.attribute.extend(axes_attr)  # also an empty list, which make_node cannot type
    graph = helper.make_graph(
        [node], op, graph_inputs, [helper.make_tensor_value_info("y", out_type, None)]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, x, axes=None, calls=None):
    """Run ``model`` with and without axisops.onnx; results must agree."""
    feeds = {"x": x}
    if len(model.graph.input) == 2:
        feeds["axes"] = np.asarray(axes, dtype=np.int64)
    ref = ReferenceEvaluator(model)
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        (expected,) = ref.run(None, feeds)
        (got,) = ours.run(None, feeds)
    _assert_same(got, expected)
    if calls is not None:
        _assert_ran_axisops(ours, calls)
    return got


REDUCE_OPS = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd"]
SCAN_OPS = ["CumSum", "CumProd"]
GATHER_OPS = ["Gather", "GatherElements", "GatherND", "ScatterElements"]


POOL_OPS = ["MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"]


@pytest.mark.parametrize("opset", range(11, 19))
@pytest.mark.parametrize("op", sorted(OP_TYPES - set(SCAN_OPS) - set(GATHER_OPS) - set(POOL_OPS)
                                      - {"Col2Im", "TopK"}))
def test_our_class_runs_for_every_opset(op, opset, calls):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    model = _model(op, opset, x.dtype, axes=[1] if op.startswith("Reduce") else None)
    _check(model, x, axes=[1], calls=calls)


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("axes", [[0], [-1], [0, 2], [2, 0, 1], None])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_axes(op, opset, axes, keepdims, calls):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    _check(_model(op, opset, x.dtype, axes, keepdims=keepdims), x, axes, calls)


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("dtype", dtype_params([np.float16, np.float64, np.int8, np.uint8, np.int32,
                                                np.int64]))
def test_reduce_keeps_input_dtype(op, dtype, calls):
    # ONNX has no type promotion: ReduceSum(int8) is int8 (wrapping), unlike np.sum;
    # an integer ReduceMean truncates as np.mean(x, dtype=int) does.
    x = (np.arange(24) % 7 + 1).astype(dtype).reshape(2, 3, 4)
    got = _check(_model(op, 18, dtype, [1], keepdims=0), x, [1], calls)
    assert got.dtype == dtype


def test_reduce_sum_int8_wraps_as_onnx():
    x = np.full((4, 100), 3, dtype=np.int8)
    got = _check(_model("ReduceSum", 13, np.int8, [1], keepdims=0), x, [1])
    assert got.dtype == np.int8 and got[0] == np.int8(300 - 256)


@pytest.mark.parametrize(("op", "opset"), [  # the opsets where axes is an input
    (op, opset) for op in REDUCE_OPS for opset in (13, 18) if opset >= _AXES_INPUT_SINCE[op]])
@pytest.mark.parametrize("noop", [0, 1])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_empty_axes_input(op, opset, noop, keepdims, calls):
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    model = _model(op, opset, x.dtype, [], keepdims=keepdims, noop_with_empty_axes=noop)
    got = _check(model, x, [], calls)
    if noop:
        np.testing.assert_array_equal(got, x)


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("noop", [0, 1])
def test_absent_axes_input(op, noop, calls):
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    model = _model(op, 18, x.dtype, None, keepdims=0, noop_with_empty_axes=noop)
    got = _check(model, x, calls=calls)
    assert got.shape == (x.shape if noop else ())


@pytest.mark.parametrize("op", REDUCE_OPS)
def test_empty_axes_attribute_reduces_all(op):
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    got = _check(_model(op, 11, x.dtype, [], keepdims=1), x, [])
    assert got.shape == (1, 1)


@pytest.mark.parametrize(("op", "dtype"), [  # an integer mean of nothing is undefined
    (op, dtype) for op in REDUCE_OPS for dtype in (np.float32, np.float16, np.int32, np.uint8)
    if not (op == "ReduceMean" and np.issubdtype(dtype, np.integer))])
@pytest.mark.parametrize("opset", [11, 18])
@pytest.mark.parametrize(("shape", "axes"), [
    ((2, 0, 4), [1]),  # empty reduction: a constant
    ((2, 0, 4), [0, 2]),  # empty result
    ((0, 3), [1]),
    ((0,), None),
    ((3, 0), None),
])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_empty_set(op, opset, dtype, shape, axes, keepdims):
    x = np.zeros(shape, dtype=dtype)
    got = _check(_model(op, opset, dtype, axes, keepdims=keepdims), x, axes)
    if got.size:
        expected = {
            "ReduceSum": 0,
            "ReduceProd": 1,
            "ReduceMean": np.nan,
            "ReduceMax": -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min,
            "ReduceMin": np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).max,
        }[op]
        np.testing.assert_array_equal(got, np.full(got.shape, expected, dtype=dtype))


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("shape", [(2, 0), (0,)])
def test_empty_set_bool(op, shape):
    x = np.zeros(shape, dtype=np.bool_)
    got = _check(_model(op, 18, np.bool_, [-1], keepdims=1), x, [-1])
    assert got.dtype == np.bool_
    assert np.all(got == (op == "ReduceMin"))


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_bool_inputs(op):
    x = np.array([[True, True], [True, False], [False, False]])
    _check(_model(op, 18, np.bool_, [1], keepdims=0), x, [1])


@pytest.mark.parametrize("op", REDUCE_OPS)
def test_nan_propagates(op):
    x = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, 5.0]], dtype=np.float32)
    got = _check(_model(op, 18, x.dtype, [1], keepdims=0), x, [1])
    assert np.isnan(got[0]) and not np.isnan(got[1])


@pytest.mark.parametrize("op", REDUCE_OPS + ["ArgMax", "ArgMin"])
def test_strided_input(op, calls):
    base = np.random.default_rng(1).normal(size=(5, 8, 6)).astype(np.float64)
    x = base[::-2, :, 1::2].transpose(2, 0, 1)  # negative and non-unit strides
    model = (_model(op, 18, x.dtype, axis=-1, keepdims=0) if op.startswith("Arg")
             else _model(op, 18, x.dtype, [0, 2], keepdims=0))
    _check(model, x, [0, 2], calls)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean"])
def test_repeated_axes_rejected(op):
    x = np.ones((2, 3), dtype=np.float32)
    sess = ReferenceEvaluator(_model(op, 18, x.dtype, [1, -1]), new_ops=aonnx.OPS)
    with pytest.raises(ValueError):
        sess.run(None, {"x": x, "axes": np.array([1, -1], dtype=np.int64)})


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin", "ReduceSum", "ArgMax", "ArgMin"])
def test_bfloat16(op, calls):
    # bfloat16 (ml_dtypes) is no axisops dtype: axisops.onnx runs it in float32.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    _ONNX_TYPES.setdefault(bf16, TensorProto.BFLOAT16)
    x = (np.arange(12) * 3 % 5 - 2).astype(bf16).reshape(3, 4)  # small ints: exact sums
    model = (_model(op, 18, bf16, axis=1, keepdims=0) if op.startswith("Arg")
             else _model(op, 18, bf16, [1], keepdims=0))
    got = _check(model, x, [1], calls)
    assert got.dtype == (np.int64 if op.startswith("Arg") else bf16)


# ------------------------------------------------------------ ArgMax / ArgMin

_TIES = np.array([[2, 2, 1, 2], [0, 3, 3, 0], [5, 5, 5, 5]], dtype=np.float32)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("axis", [0, 1, -1, -2, None])
@pytest.mark.parametrize("keepdims", [0, 1, None])
def test_arg_defaults_and_ties(op, opset, axis, keepdims, calls):
    attrs = {k: v for k, v in {"axis": axis, "keepdims": keepdims}.items() if v is not None}
    got = _check(_model(op, opset, _TIES.dtype, **attrs), _TIES, calls=calls)
    assert got.dtype == np.int64
    if axis in (None, 0) and keepdims in (None, 1):
        assert got.shape == (1, 4)  # default axis 0, default keepdims 1


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("opset", [12, 13, 18])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_select_last_index(op, opset, axis, keepdims, last, calls):
    model = _model(op, opset, _TIES.dtype, axis=axis, keepdims=keepdims, select_last_index=last)
    got = _check(model, _TIES, calls=calls)
    if axis != 0:
        first = {"ArgMax": [0, 1, 0], "ArgMin": [2, 0, 0]}[op]
        lasts = {"ArgMax": [3, 2, 3], "ArgMin": [2, 3, 3]}[op]
        assert got.ravel().tolist() == (lasts if last else first)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("dtype", dtype_params([np.float16, np.float64, np.int8, np.uint8, np.int64,
                                                np.bool_]))
@pytest.mark.parametrize("last", [0, 1])
def test_arg_dtypes(op, dtype, last):
    x = (np.arange(60) * 7 % 5).astype(dtype).reshape(3, 4, 5)
    _check(_model(op, 18, dtype, axis=1, keepdims=0, select_last_index=last), x)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_nan_wins(op, last):
    x = np.array([[1.0, np.nan, 7.0, np.nan, -1.0]], dtype=np.float32)
    got = _check(_model(op, 18, x.dtype, axis=1, keepdims=0, select_last_index=last), x)
    assert got.tolist() == [3 if last else 1]


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_empty_non_reduced_axis(op):
    x = np.zeros((0, 3), dtype=np.float32)
    got = _check(_model(op, 18, x.dtype, axis=1, keepdims=1), x)
    assert got.shape == (0, 1)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_empty_reduced_axis_raises(op):
    # ONNX's reference raises as well (np.argmax of an empty sequence).
    x = np.zeros((2, 0), dtype=np.float32)
    sess = ReferenceEvaluator(_model(op, 18, x.dtype, axis=1), new_ops=aonnx.OPS)
    with pytest.raises(ValueError):
        sess.run(None, {"x": x})


# ------------------------------------------------------------ CumSum / CumProd

# The first opset of each operator (CumProd is new in opset 26).
_SCAN_SINCE = {"CumSum": 11, "CumProd": 26}


def _scan_model(op, dtype, opset=None, axis_type=TensorProto.INT64, **attrs):
    """One-node CumSum/CumProd model with inputs ``x`` and ``axis``."""
    opset = opset or max(_SCAN_SINCE[op], 14)
    elem = _ONNX_TYPES[np.dtype(dtype)]
    node = helper.make_node(op, ["x", "axis"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], op,
        [helper.make_tensor_value_info("x", elem, None),
         helper.make_tensor_value_info("axis", axis_type, None)],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check_scan(model, x, axis, calls=None, rtol=1e-5):
    """Run ``model`` with and without axisops.onnx; results must agree.

    ``axis`` is fed to axisops.onnx as given and to ONNX's reference as a 0-D
    tensor (the reference takes no other shape).
    """
    axis = np.asarray(axis)
    ref = ReferenceEvaluator(model)
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    (expected,) = ref.run(None, {"x": x, "axis": axis.reshape(())})
    (got,) = ours.run(None, {"x": x, "axis": axis})
    _assert_same(got, expected, rtol=rtol)
    if calls is not None:
        _assert_ran_axisops(ours, calls)
    return got


def _scan_input(op, dtype, shape, rng):
    """Values whose sums and products are exact in ``dtype`` (floats: random)."""
    if np.dtype(dtype) in (np.float32, np.float64):
        low, high = (0.5, 1.5) if op == "CumProd" else (-1.0, 1.0)
        return rng.uniform(low, high, shape).astype(dtype)
    if op == "CumProd":  # 1, 2, 3: a product of a few stays small
        return rng.integers(1, 4, shape).astype(dtype)
    return rng.integers(0, 10, shape).astype(dtype)  # unsigned types too


_SCAN_DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64]


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("dtype", dtype_params(_SCAN_DTYPES))
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
def test_scan_dtypes(op, dtype, exclusive, reverse, rng, calls):
    x = _scan_input(op, dtype, (2, 4, 3), rng)
    model = _scan_model(op, dtype, exclusive=exclusive, reverse=reverse)
    got = _check_scan(model, x, np.int64(1), calls)
    assert got.dtype == dtype  # no promotion: not np.cumsum's int64/uint64


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("axis_dtype", [np.int32, np.int64])
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_scan_axes(op, axis, axis_dtype, exclusive, reverse, rng, calls):
    x = _scan_input(op, np.float32, (3, 4, 5), rng)
    axis_type = _ONNX_TYPES[np.dtype(axis_dtype)]
    model = _scan_model(op, x.dtype, axis_type=axis_type, exclusive=exclusive, reverse=reverse)
    _check_scan(model, x, np.array(axis, dtype=axis_dtype), calls)


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_scan_1d_exact(op, axis, exclusive, reverse, calls):
    # The example of ONNX's CumSum specification, and its product analogue.
    x = np.array([1, 2, 3, 4], dtype=np.float64)
    got = _check_scan(_scan_model(op, x.dtype, exclusive=exclusive, reverse=reverse),
                      x, np.int32(axis), calls)
    expected = {
        ("CumSum", 0, 0): [1, 3, 6, 10], ("CumSum", 1, 0): [0, 1, 3, 6],
        ("CumSum", 0, 1): [10, 9, 7, 4], ("CumSum", 1, 1): [9, 7, 4, 0],
        ("CumProd", 0, 0): [1, 2, 6, 24], ("CumProd", 1, 0): [1, 1, 2, 6],
        ("CumProd", 0, 1): [24, 24, 12, 4], ("CumProd", 1, 1): [24, 12, 4, 1],
    }[(op, exclusive, reverse)]
    assert got.tolist() == expected


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("axis_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("axis", [1, -1])
def test_scan_axis_as_one_element_tensor(op, axis_dtype, axis, rng, calls):
    # ONNX Runtime accepts a 1-D axis of one element; so does axisops.onnx
    # (ONNX's reference raises ValueError, so it is fed the same axis as 0-D).
    x = _scan_input(op, np.float32, (2, 3, 4), rng)
    axis = np.array([axis], dtype=axis_dtype)
    model = _scan_model(op, x.dtype, axis_type=_ONNX_TYPES[np.dtype(axis_dtype)], reverse=1)
    _check_scan(model, x, axis, calls)


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("axis", [np.array([0, 1]), np.array([[1]]), np.array([], dtype=np.int64)])
def test_scan_axis_of_wrong_shape_raises(op, axis):
    x = np.ones((2, 3), dtype=np.float32)
    sess = ReferenceEvaluator(_scan_model(op, x.dtype), new_ops=aonnx.OPS)
    with pytest.raises(ValueError, match="axis must be a 0-D tensor"):
        sess.run(None, {"x": x, "axis": axis.astype(np.int64)})


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("axis", [np.float32(1.0), np.float64(0.0), np.bool_(True),
                                  np.array([1.0], dtype=np.float32)])
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 1)])
def test_scan_non_integer_axis_raises_as_onnx(op, axis, exclusive, reverse):
    # ONNX's reference raises TypeError for a float or bool axis (the evaluator
    # re-raises the operator's TypeError as its own); so does axisops.onnx.
    x = np.ones((2, 3), dtype=np.float32)
    model = _scan_model(op, x.dtype, axis_type=TensorProto.FLOAT,
                        exclusive=exclusive, reverse=reverse)
    axis = np.asarray(axis)
    with pytest.raises(TypeError):
        ReferenceEvaluator(model).run(None, {"x": x, "axis": axis.reshape(())})
    with pytest.raises(TypeError) as info:
        ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, {"x": x, "axis": axis})
    text = str(info.value) + str(info.value.__cause__)
    assert "axis must be an int32 or int64 tensor" in text


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("axis", [2, -3, 100])
@pytest.mark.parametrize("reverse", [0, 1])
def test_scan_axis_out_of_range_raises(op, axis, reverse):
    # ONNX's reference raises numpy's AxisError or an IndexError; both are IndexErrors.
    x = np.ones((2, 3), dtype=np.float32)
    model = _scan_model(op, x.dtype, reverse=reverse)
    feeds = {"x": x, "axis": np.int64(axis)}
    with pytest.raises(IndexError):
        ReferenceEvaluator(model).run(None, feeds)
    with pytest.raises(IndexError):
        ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, feeds)


@pytest.mark.parametrize(("op", "opset"), [("CumSum", 11), ("CumSum", 14), ("CumSum", 18),
                                           ("CumSum", 26), ("CumProd", 26)])
def test_scan_our_class_runs_for_every_opset(op, opset, calls):
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    _check_scan(_scan_model(op, x.dtype, opset=opset, exclusive=1), x, np.int64(1), calls)


@pytest.mark.parametrize("dtype", dtype_params([np.int32, np.uint32, np.int64, np.uint64]))
def test_cumsum_wraps_in_input_dtype_as_onnx(dtype, calls):
    # np.cumsum would promote 32 bits to 64; ONNX's CumSum stays in the input type, and
    # wraps there (by default on the 64-bit class dtypes, the 32-bit under the switch)
    x = np.full((2, 5), np.iinfo(dtype).max // 3 + 1, dtype=dtype)
    got = _check_scan(_scan_model("CumSum", dtype), x, np.int64(1), calls)
    assert got.dtype == dtype
    assert got[0, 3] == np.array([x[0, 0]] * 4).astype(dtype).sum(dtype=dtype)  # wrapped


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize(("shape", "axis"), [((2, 0, 3), 1), ((2, 0, 3), 0), ((0,), 0), ((4, 1), 1)])
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (1, 1)])
def test_scan_empty_and_length_one(op, shape, axis, exclusive, reverse):
    x = np.full(shape, 3, dtype=np.float32)
    got = _check_scan(_scan_model(op, x.dtype, exclusive=exclusive, reverse=reverse),
                      x, np.int64(axis))
    assert got.shape == shape


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 1)])
def test_scan_strided_input(op, axis, exclusive, reverse, calls):
    base = np.random.default_rng(1).uniform(0.5, 1.5, (5, 8, 6))
    x = base[::-2, :, 1::2].transpose(2, 0, 1)  # negative and non-unit strides
    model = _scan_model(op, x.dtype, exclusive=exclusive, reverse=reverse)
    _check_scan(model, x, np.int64(axis), calls)


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 1)])
def test_scan_large_input(op, axis, exclusive, reverse, rng, calls):
    # Large enough for the threaded kernels (more than 2**17 elements). ONNX's
    # reference rounds every partial sum to float32 in order; so the values are
    # positive (no cancellation) and the tolerance is loose.
    shape = (4, 40_000) if axis else (40_000, 4)
    if op == "CumSum":
        x = rng.random(shape, dtype=np.float32)
    else:  # products stay near 1
        x = rng.uniform(1 - 1e-4, 1 + 1e-4, shape).astype(np.float32)
    model = _scan_model(op, x.dtype, exclusive=exclusive, reverse=reverse)
    _check_scan(model, x, np.int64(axis), calls, rtol=1e-3)


@pytest.mark.parametrize("op", SCAN_OPS)
def test_scan_nan_propagates(op):
    x = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, 5.0]], dtype=np.float32)
    got = _check_scan(_scan_model(op, x.dtype), x, np.int64(1))
    assert np.isnan(got[0, 1:]).all() and not np.isnan(got[0, 0]) and not np.isnan(got[1]).any()


@pytest.mark.parametrize("op", SCAN_OPS)
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 1)])
def test_scan_bfloat16(op, exclusive, reverse, calls):
    # bfloat16 (ml_dtypes) is no axisops dtype: axisops.onnx runs it in float32.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    _ONNX_TYPES.setdefault(bf16, TensorProto.BFLOAT16)
    x = (np.arange(12) % 3 + 1).astype(bf16).reshape(3, 4)  # small ints: exact
    model = _scan_model(op, bf16, exclusive=exclusive, reverse=reverse)
    got = _check_scan(model, x, np.int64(1), calls)
    assert got.dtype == bf16


def test_cumsum_agrees_with_onnxruntime_on_a_one_element_axis():
    # The reason a 1-D axis of one element is accepted: ONNX Runtime takes it.
    ort = pytest.importorskip("onnxruntime")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    model = _scan_model("CumSum", x.dtype, exclusive=1, reverse=1)
    model.ir_version = 10
    feeds = {"x": x, "axis": np.array([-1], dtype=np.int64)}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, feeds)
    (got,) = ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, feeds)
    _assert_same(got, expected)


# ------------------------------------------------------------ Gather, GatherElements, GatherND, ScatterElements

_ONNX_TYPES.update({np.dtype(np.int16): TensorProto.INT16, np.dtype(np.uint16): TensorProto.UINT16})

_INDEX_DTYPES = [np.int32, np.int64]
_MOVE_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int16, np.uint16,
                np.int32, np.int64, np.uint32, np.uint64, np.bool_]


def _index_model(op, dtype, opset=18, index_dtype=np.int64, **attrs):
    """One-node model: inputs ``x``, ``indices`` (and ``updates`` for ScatterElements)."""
    elem = _ONNX_TYPES[np.dtype(dtype)]
    names = ["x", "indices", "updates"] if op == "ScatterElements" else ["x", "indices"]
    types = [elem, _ONNX_TYPES[np.dtype(index_dtype)], elem]
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], op,
        [helper.make_tensor_value_info(n, t, None) for n, t in zip(names, types)],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run_ours(model, *inputs):
    feeds = dict(zip(["x", "indices", "updates"], inputs))
    (got,) = ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, feeds)
    return got


def _run_ort(model, *inputs):
    ort = pytest.importorskip("onnxruntime")
    model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = dict(zip(["x", "indices", "updates"], (np.ascontiguousarray(a) for a in inputs)))
    return session.run(None, feeds)[0]


def _check_index(model, *inputs, calls=None, rtol=1e-5, expected=None):
    """Run ``model`` with axisops.onnx and compare with ONNX's reference (or ``expected``).

    The inputs must come back unchanged.
    """
    before = [np.array(a, copy=True) for a in inputs]
    feeds = dict(zip(["x", "indices", "updates"], inputs))
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # integer wrap-around in ONNX's reference
        (got,) = ours.run(None, feeds)
        if expected is None:
            (expected,) = ReferenceEvaluator(model).run(None, feeds)
    _assert_same(got, expected, rtol=rtol)
    for a, b in zip(inputs, before):
        np.testing.assert_array_equal(a, b)
    if calls is not None:
        _assert_ran_axisops(ours, calls)
    return got


def _values(dtype, shape, rng):
    """Random values over the whole range of ``dtype`` (floats: normal)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _indices(shape, n, rng, dtype=np.int64):
    """Random indices in ``[-n, n)``: negative ones count from the end."""
    return rng.integers(-n, n, shape).astype(dtype)


def _raises_from_ours(exc_type, model, *inputs, match=None):
    """``exc_type`` (the evaluator may re-raise it as its cause) with ``match`` in its text."""
    with pytest.raises(exc_type) as info:
        _run_ours(model, *inputs)
    if match is not None:
        text = str(info.value) + str(info.value.__cause__)
        assert match in text, text


# Gather


@pytest.mark.parametrize("dtype", _MOVE_DTYPES)
@pytest.mark.parametrize("index_dtype", _INDEX_DTYPES)
def test_gather_dtypes(dtype, index_dtype, rng, calls):
    x = _values(dtype, (3, 4, 5), rng)
    indices = np.array([[0, -1], [3, -4], [2, 2]], dtype=index_dtype)
    model = _index_model("Gather", dtype, opset=13, index_dtype=index_dtype, axis=1)
    got = _check_index(model, x, indices, calls=calls)
    assert got.shape == (3, 3, 2, 5)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3, None])
@pytest.mark.parametrize("index_shape", [(), (1,), (6,), (2, 3), (0,), (2, 0, 3)])
def test_gather_axes_and_index_shapes(axis, index_shape, rng, calls):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    n = x.shape[0 if axis is None else axis]
    attrs = {} if axis is None else {"axis": axis}  # absent: axis 0
    got = _check_index(_index_model("Gather", x.dtype, **attrs), x,
                       _indices(index_shape, n, rng), calls=calls)
    a = 0 if axis is None else axis % 3
    assert got.shape == x.shape[:a] + index_shape + x.shape[a + 1:]


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_gather_opsets(opset, calls):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = _check_index(_index_model("Gather", x.dtype, opset=opset, axis=-1), x,
                       np.array([[-1, 0], [1, -2]]), calls=calls)
    assert got[:, 0].tolist() == [[3.0, 0.0], [7.0, 4.0], [11.0, 8.0]]


def test_gather_strided_inputs(rng, calls):
    base = rng.standard_normal((6, 8, 10))
    x = base[::-2, 1::2].transpose(2, 0, 1)  # (10, 3, 4): negative and non-unit strides
    indices = _indices((4, 5), 3, rng)[::-1, ::2].T  # (3, 4), transposed
    _check_index(_index_model("Gather", x.dtype, axis=1), x, indices, calls=calls)
    broadcast = np.broadcast_to(np.arange(4.0), (3, 4))  # a stride-0 view
    _check_index(_index_model("Gather", broadcast.dtype, axis=0), broadcast,
                 np.array([2, -3, 0]), calls=calls)


def test_gather_empty_data(calls):
    x = np.zeros((2, 0, 3), dtype=np.float32)
    got = _check_index(_index_model("Gather", x.dtype, axis=2), x, np.array([0, -1]), calls=calls)
    assert got.shape == (2, 0, 2)


@pytest.mark.parametrize("bad", [4, -5, 100])
def test_gather_out_of_range_raises(bad):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    model = _index_model("Gather", x.dtype, axis=1)
    _raises_from_ours(IndexError, model, x, np.array([[0, 1], [bad, 2]]),
                      match=f"take: index {bad} at position (1, 0) of indices is out of range [-4, 4)")
    with pytest.raises(Exception):  # ONNX Runtime rejects it too
        _run_ort(model, x, np.array([[0, 1], [bad, 2]]))


def test_gather_bad_axis_raises():
    x = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(IndexError):  # numpy's AxisError is an IndexError (and a ValueError)
        _run_ours(_index_model("Gather", x.dtype, axis=2), x, np.array([0]))


# GatherElements


@pytest.mark.parametrize("dtype", _MOVE_DTYPES)
@pytest.mark.parametrize("index_dtype", _INDEX_DTYPES)
def test_gather_elements_dtypes(dtype, index_dtype, rng, calls):
    x = _values(dtype, (3, 4, 5), rng)
    indices = _indices((3, 6, 5), 4, rng, index_dtype)
    model = _index_model("GatherElements", dtype, opset=13, index_dtype=index_dtype, axis=1)
    got = _check_index(model, x, indices, calls=calls)
    assert got.shape == indices.shape


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_gather_elements_axes(axis, k, rng, calls):
    x = rng.standard_normal((3, 4, 5))
    shape = list(x.shape)
    shape[axis] = k  # any size along the axis
    indices = _indices(tuple(shape), x.shape[axis], rng)
    # ONNX's reference mishandles a negative axis (it compares indices.shape[:axis]
    # with data's), so it runs the same axis counted from the front.
    (expected,) = ReferenceEvaluator(_index_model("GatherElements", x.dtype, axis=axis % 3)).run(
        None, {"x": x, "indices": indices})
    _check_index(_index_model("GatherElements", x.dtype, axis=axis), x, indices, calls=calls,
                 expected=expected)


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_gather_elements_opsets(opset, calls):
    # The example of ONNX's specification (axis 1), with a negative index.
    x = np.array([[1, 2], [3, 4]], dtype=np.float32)
    got = _check_index(_index_model("GatherElements", x.dtype, opset=opset, axis=1), x,
                       np.array([[0, 0], [-1, 0]]), calls=calls)
    assert got.tolist() == [[1, 1], [4, 3]]


def test_gather_elements_default_axis_is_0(calls):
    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=np.int32)
    got = _check_index(_index_model("GatherElements", x.dtype), x,
                       np.array([[1, 2, 0], [2, 0, 0]]), calls=calls)
    assert got.tolist() == [[4, 8, 3], [7, 2, 3]]


@pytest.mark.parametrize(("index_shape", "axis"), [((2, 7, 3), 1), ((1, 3, 1), 1),
                                                   ((4, 1, 6), 0), ((1, 1, 9), -1)])
def test_gather_elements_leading_part_as_onnxruntime(index_shape, axis, rng, calls):
    # A non-axis dimension of indices smaller than data's uses the leading part of
    # data; a 1 is not broadcast (the result has indices' shape), as in ONNX Runtime.
    # ONNX's reference cannot run these valid models (it wants equal dimensions).
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    indices = _indices(index_shape, x.shape[axis], rng)
    model = _index_model("GatherElements", x.dtype, axis=axis)
    expected = _run_ort(model, x, indices)
    got = _check_index(model, x, indices, calls=calls, expected=expected)
    assert got.shape == index_shape
    part = x[tuple(slice(None) if d == axis % 3 else slice(0, n)
                   for d, n in enumerate(index_shape))]
    np.testing.assert_array_equal(got, np.take_along_axis(part, indices % x.shape[axis], axis))


@pytest.mark.parametrize("index_shape", [(5, 2, 6), (4, 2, 7), (1, 2, 9)])
def test_gather_elements_indices_larger_than_data_raise(index_shape):
    x = np.zeros((4, 5, 6), dtype=np.float32)
    model = _index_model("GatherElements", x.dtype, axis=1)
    indices = np.zeros(index_shape, dtype=np.int64)
    _raises_from_ours(ValueError, model, x, indices, match="larger than data's")
    with pytest.raises(Exception):  # ONNX Runtime rejects it too
        _run_ort(model, x, indices)


def test_gather_elements_broadcast_data_dimension_raises():
    # take_along_axis would broadcast a data dimension of 1; ONNX has no broadcasting here.
    x = np.zeros((1, 5), dtype=np.float32)
    model = _index_model("GatherElements", x.dtype, axis=1)
    _raises_from_ours(ValueError, model, x, np.zeros((3, 2), dtype=np.int64),
                      match="indices dimension 0 has size 3, larger than data's 1")


def test_gather_elements_rank_mismatch_raises():
    x = np.zeros((3, 4), dtype=np.float32)
    _raises_from_ours(ValueError, _index_model("GatherElements", x.dtype, axis=1), x,
                      np.zeros((3,), dtype=np.int64), match="rank of data")


@pytest.mark.parametrize("bad", [4, -5])
def test_gather_elements_out_of_range_raises(bad):
    x = np.zeros((2, 4), dtype=np.float32)
    model = _index_model("GatherElements", x.dtype, axis=1)
    _raises_from_ours(IndexError, model, x, np.array([[0, 1], [3, bad]]),
                      match=f"take_along_axis: index {bad} at position (1, 1) of indices "
                            "is out of range [-4, 4)")


def test_gather_elements_strided_inputs(rng, calls):
    base = rng.standard_normal((6, 8, 10)).astype(np.float32)
    x = base[::-1, ::2, 1::3]  # (6, 4, 3)
    indices = _indices((3, 4, 12), 6, rng).transpose(2, 1, 0)[:, :, ::-1]  # (12, 4, 3)
    _check_index(_index_model("GatherElements", x.dtype, axis=0), x, indices, calls=calls)


def test_gather_elements_empty(calls):
    x = np.zeros((3, 4), dtype=np.float32)
    got = _check_index(_index_model("GatherElements", x.dtype, axis=1), x,
                       np.zeros((3, 0), dtype=np.int64), calls=calls)
    assert got.shape == (3, 0)


# GatherND


_GATHER_ND_CASES = [  # (data shape, indices shape, batch_dims)
    ((4, 5, 6), (3, 1), 0),
    ((4, 5, 6), (3, 2), 0),
    ((4, 5, 6), (2, 3, 3), 0),
    ((4, 5, 6), (3,), 0),
    ((4, 5, 6), (1,), 0),
    ((4, 5, 6), (4, 2), 1),
    ((4, 5, 6), (4, 3, 1), 1),
    ((4, 5, 6), (4, 5, 1), 2),
    ((3, 4, 5, 2), (3, 4, 6, 2), 2),
    ((3, 4, 5, 2), (3, 2, 2, 3), 1),
    ((4, 5, 6), (0, 2), 0),
]


@pytest.mark.parametrize(("x_shape", "index_shape", "batch_dims"), _GATHER_ND_CASES)
def test_gathernd_shapes(x_shape, index_shape, batch_dims, rng, calls):
    x = rng.standard_normal(x_shape).astype(np.float32)
    q = index_shape[-1]
    sizes = np.array(x_shape[batch_dims:batch_dims + q])
    indices = (rng.integers(-sizes, sizes, index_shape) if index_shape[0]
               else np.zeros(index_shape, dtype=np.int64)).astype(np.int64)
    attrs = {"batch_dims": batch_dims} if batch_dims else {}
    got = _check_index(_index_model("GatherND", x.dtype, opset=13, **attrs), x, indices,
                       calls=calls)
    assert got.shape == index_shape[:-1] + x_shape[batch_dims + q:]


@pytest.mark.parametrize("dtype", _MOVE_DTYPES)
@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gathernd_dtypes(dtype, batch_dims, rng, calls):
    x = _values(dtype, (3, 4, 5), rng)
    indices = np.array([[[0, -1], [2, 3]], [[-2, 0], [1, 1]], [[2, 2], [0, -4]]])
    model = _index_model("GatherND", dtype, opset=13, batch_dims=batch_dims)
    _check_index(model, x, indices, calls=calls)


@pytest.mark.parametrize("opset", [11, 12, 13, 18])
def test_gathernd_opsets(opset, calls):
    # The examples of ONNX's specification (batch_dims from opset 12).
    x = np.array([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], dtype=np.int32)
    got = _check_index(_index_model("GatherND", x.dtype, opset=opset), x,
                       np.array([[0, 1], [1, 0]]), calls=calls)
    assert got.tolist() == [[2, 3], [4, 5]]
    if opset >= 12:
        got = _check_index(_index_model("GatherND", x.dtype, opset=opset, batch_dims=1), x,
                           np.array([[1], [0]]), calls=calls)
        assert got.tolist() == [[2, 3], [4, 5]]


def test_gathernd_strided_inputs(rng, calls):
    x = rng.standard_normal((5, 6, 7))[::-1, 1::2].transpose(1, 0, 2)  # (3, 5, 7)
    indices = np.stack([rng.integers(-3, 3, (4, 6)), rng.integers(-5, 5, (4, 6))], -1)[:, ::2]
    _check_index(_index_model("GatherND", x.dtype), x, indices, calls=calls)


@pytest.mark.parametrize(("indices", "message"), [
    ([[0, 5]], "gather_nd: index 5 at position (0, 1) of indices is out of range [-5, 5)"),
    ([[1, 0], [-4, 0]], "gather_nd: index -4 at position (1, 0) of indices is out of range [-3, 3)"),
])
def test_gathernd_out_of_range_raises(indices, message):
    x = np.zeros((3, 5), dtype=np.float32)
    _raises_from_ours(IndexError, _index_model("GatherND", x.dtype), x,
                      np.array(indices, dtype=np.int64), match=message)


@pytest.mark.parametrize(("index_shape", "batch_dims"), [
    ((2, 3), 0),  # more components than data's rank
    ((3, 1), 1),  # batch dimensions differ
    ((2, 1), 2),  # batch_dims >= data's rank
    ((2, 0), 0),  # no components
])
def test_gathernd_bad_shapes_raise(index_shape, batch_dims):
    x = np.zeros((2, 3), dtype=np.float32)
    model = _index_model("GatherND", x.dtype, batch_dims=batch_dims)
    _raises_from_ours(ValueError, model, x, np.zeros(index_shape, dtype=np.int64))


# ScatterElements

_REDUCTIONS = ["none", "add", "mul", "max", "min"]
# The first opset of each reduction.
_REDUCTION_SINCE = {"none": 11, "add": 16, "mul": 16, "max": 18, "min": 18}


def _distinct_indices(shape, axis, n, rng, dtype=np.int64):
    """Indices of ``shape`` with no repeat along ``axis`` (``shape[axis] <= n``), half negative."""
    full = list(shape)
    full[axis] = n
    perm = np.argsort(rng.random(full), axis=axis)
    indices = np.take(perm, np.arange(shape[axis]), axis=axis)
    indices = indices[tuple(slice(0, s) for s in shape)]
    negative = rng.integers(0, 2, indices.shape).astype(bool)
    return np.where(negative, indices - n, indices).astype(dtype)


def _scatter_values(dtype, shape, rng, reduction):
    """Values whose products stay finite and exact enough (mul: near 1 or small ints)."""
    dtype = np.dtype(dtype)
    if reduction == "mul" and dtype.kind == "f":
        return rng.uniform(0.5, 1.5, shape).astype(dtype)
    if reduction == "mul" and dtype.kind in "iu":
        return rng.integers(0, 4, shape).astype(dtype)
    return _values(dtype, shape, rng)


@pytest.mark.parametrize("reduction", _REDUCTIONS)
@pytest.mark.parametrize("dtype", _MOVE_DTYPES)
def test_scatter_elements_distinct_indices(reduction, dtype, rng, calls):
    x = _scatter_values(dtype, (3, 5, 4), rng, reduction)
    indices = _distinct_indices((3, 4, 4), 1, 5, rng)
    updates = _scatter_values(dtype, indices.shape, rng, reduction)
    model = _index_model("ScatterElements", dtype, axis=1, reduction=reduction)
    _check_index(model, x, indices, updates, calls=calls)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.uint8,
                                   np.int32, np.int64, np.uint64, np.bool_])
def test_scatter_elements_repeated_indices(reduction, dtype, rng, calls):
    # Updates into one place are combined in C order of indices, as in ONNX's reference:
    # the same bits, integers wrapping in their own type. float16 add/mul accumulate
    # in float32 (ONNX's reference: in float16), hence its looser tolerance.
    x = _scatter_values(dtype, (3, 4, 5), rng, reduction)
    indices = _indices((3, 9, 5), 4, rng)
    updates = _scatter_values(dtype, indices.shape, rng, reduction)
    model = _index_model("ScatterElements", dtype, axis=-2, reduction=reduction)
    rtol = 1e-2 if dtype == np.float16 and reduction in ("add", "mul") else 1e-5
    got = _check_index(model, x, indices, updates, calls=calls, rtol=rtol)
    if dtype in (np.float32, np.float64) and reduction == "add":
        expected = x.copy()
        np.add.at(expected, (np.arange(3)[:, None, None], indices % 4, np.arange(5)), updates)
        assert np.array_equal(got, expected)  # bit for bit


def test_scatter_elements_float16_add_rounds_once(calls):
    # 2048 + 1 + 1: float16 steps stay at 2048 (ONNX's reference); float32 gives 2050.
    x = np.array([2048.0], dtype=np.float16)
    model = _index_model("ScatterElements", x.dtype, reduction="add")
    got = _run_ours(model, x, np.array([0, 0]), np.array([1.0, 1.0], dtype=np.float16))
    assert got.dtype == np.float16 and got.tolist() == [2050.0]


def test_scatter_elements_none_last_update_wins(calls):
    # ONNX leaves repeated indices without a reduction unspecified; axisops: the last
    # update in C order of indices wins.
    x = np.zeros((2, 4), dtype=np.float32)
    indices = np.array([[1, 1, 2, -3], [0, 3, -1, 0]])
    updates = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32)
    got = _run_ours(_index_model("ScatterElements", x.dtype, axis=1), x, indices, updates)
    assert got.tolist() == [[0, 4, 3, 0], [8, 0, 0, 7]]
    got = _run_ours(_index_model("ScatterElements", x.dtype, axis=0), x,
                    np.array([[1, 0, 0, 0], [1, 0, 0, 0]]), updates)
    assert got.tolist() == [[0, 6, 7, 8], [5, 0, 0, 0]]


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("reduction", _REDUCTIONS)
def test_scatter_elements_axes_and_smaller_indices(axis, reduction, rng, calls):
    # Indices may be smaller than data in every dimension; only their part is written.
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    shape = [3, 4, 5]
    shape[axis] = 3
    indices = _distinct_indices(tuple(shape), axis, x.shape[axis], rng)
    updates = rng.standard_normal(indices.shape).astype(np.float32)
    model = _index_model("ScatterElements", x.dtype, axis=axis, reduction=reduction)
    got = _check_index(model, x, indices, updates, calls=calls)
    if reduction != "mul":
        np.testing.assert_array_equal(got, _run_ort(model, x, indices, updates))


@pytest.mark.parametrize(("reduction", "opset"), [
    (None, 11), (None, 13), ("none", 16), ("add", 16), ("mul", 16), ("max", 18), ("min", 18),
    ("add", 18)])
def test_scatter_elements_opsets(reduction, opset, calls):
    # The examples of ONNX's specification.
    x = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]], dtype=np.float32)
    indices = np.array([[1, 3]])
    updates = np.array([[1.1, 2.1]], dtype=np.float32)
    attrs = {} if reduction is None else {"reduction": reduction}
    model = _index_model("ScatterElements", x.dtype, opset=opset, axis=1, **attrs)
    got = _check_index(model, x, indices, updates, calls=calls)
    expected = {None: [1, 1.1, 3, 2.1, 5], "none": [1, 1.1, 3, 2.1, 5],
                "add": [1, 3.1, 3, 6.1, 5], "mul": [1, 2 * 1.1, 3, 4 * 2.1, 5],
                "max": [1, 2, 3, 4, 5], "min": [1, 1.1, 3, 2.1, 5]}[reduction]
    np.testing.assert_allclose(got[0], expected, rtol=1e-6)


def test_scatter_elements_default_axis_is_0(calls):
    x = np.zeros((3, 3), dtype=np.float32)
    indices = np.array([[1, 0, 2], [0, 2, 1]])
    updates = np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], dtype=np.float32)
    got = _check_index(_index_model("ScatterElements", x.dtype), x, indices, updates, calls=calls)
    assert got.tolist() == np.array([[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]],
                                    dtype=np.float32).tolist()


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_scatter_elements_nan_propagates(reduction):
    # A NaN in data or in an update gives NaN (ONNX's reference keeps data's value
    # when the update is NaN: Python's max/min).
    x = np.array([[1.0, np.nan, 3.0]], dtype=np.float32)
    updates = np.array([[np.nan, 0.0, 5.0]], dtype=np.float32)
    model = _index_model("ScatterElements", x.dtype, axis=1, reduction=reduction)
    got = _run_ours(model, x, np.array([[0, 1, 2]]), updates)
    assert np.isnan(got[0, 0]) and np.isnan(got[0, 1])
    assert got[0, 2] == (5.0 if reduction == "max" else 3.0)


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_scatter_elements_ties_keep_data(reduction, calls):
    # On a tie the value already there stays: -0.0 against 0.0 keeps the first.
    x = np.array([[-0.0, 0.0]], dtype=np.float32)
    updates = np.array([[0.0, -0.0]], dtype=np.float32)
    model = _index_model("ScatterElements", x.dtype, axis=1, reduction=reduction)
    got = _check_index(model, x, np.array([[0, 1]]), updates, calls=calls)
    assert np.signbit(got).tolist() == [[True, False]]


def test_scatter_elements_strided_inputs(rng, calls):
    base = rng.standard_normal((8, 6, 10)).astype(np.float32)
    x = base[::-2, :, 1::2].transpose(1, 0, 2)  # (6, 4, 5)
    indices = _distinct_indices((5, 4, 6), 2, 6, rng).transpose(2, 1, 0)  # (6, 4, 5), axis 0
    updates = rng.standard_normal((5, 4, 6)).astype(np.float32).transpose(2, 1, 0)
    for reduction in _REDUCTIONS:
        model = _index_model("ScatterElements", x.dtype, axis=0, reduction=reduction)
        _check_index(model, x, indices, updates, calls=calls)


@pytest.mark.parametrize("updates_shape", [(2, 3), (2, 1), (1,), ()])
def test_scatter_elements_updates_of_another_shape_raise(updates_shape):
    # axisops.scatter takes larger or broadcastable updates; ONNX wants indices' shape.
    x = np.zeros((2, 4), dtype=np.float32)
    model = _index_model("ScatterElements", x.dtype, axis=1)
    _raises_from_ours(ValueError, model, x, np.zeros((2, 2), dtype=np.int64),
                      np.zeros(updates_shape, dtype=np.float32),
                      match="updates must have the shape of indices")


@pytest.mark.parametrize("reduction", _REDUCTIONS)
@pytest.mark.parametrize("bad", [4, -5])
def test_scatter_elements_out_of_range_raises(reduction, bad):
    x = np.zeros((2, 4), dtype=np.float32)
    model = _index_model("ScatterElements", x.dtype, axis=1, reduction=reduction)
    _raises_from_ours(IndexError, model, x, np.array([[0, 1], [bad, 2]]),
                      np.ones((2, 2), dtype=np.float32),
                      match=f"scatter: index {bad} at position (1, 0) of indices "
                            "is out of range [-4, 4)")


def test_scatter_elements_indices_larger_than_data_raise():
    x = np.zeros((2, 4), dtype=np.float32)
    model = _index_model("ScatterElements", x.dtype, axis=1)
    _raises_from_ours(ValueError, model, x, np.zeros((3, 2), dtype=np.int64),
                      np.zeros((3, 2), dtype=np.float32))


def test_scatter_elements_unknown_reduction_raises():
    x = np.zeros((2, 4), dtype=np.float32)
    model = _index_model("ScatterElements", x.dtype, axis=1, reduction="mean")
    _raises_from_ours(ValueError, model, x, np.zeros((2, 2), dtype=np.int64),
                      np.zeros((2, 2), dtype=np.float32))


# Element types that NumPy lacks, strings and complex


def _exotic_inputs(op, dtype, rng):
    x = np.arange(24).reshape(2, 3, 4) - 11
    if op == "Gather":
        return x, _indices((2, 2), 3, rng)
    if op == "GatherElements":
        return x, _indices((2, 5, 4), 3, rng)
    if op == "GatherND":
        return x, np.array([[0, -1], [1, 2]])
    return x, _distinct_indices((2, 3, 4), 1, 3, rng), np.arange(24).reshape(2, 3, 4) % 7


@pytest.mark.parametrize("op", GATHER_OPS)
@pytest.mark.parametrize(("type_name", "elem"), [("bfloat16", TensorProto.BFLOAT16),
                                                 ("float8_e4m3fn", TensorProto.FLOAT8E4M3FN),
                                                 ("float8_e5m2", TensorProto.FLOAT8E5M2)])
def test_gather_ops_ml_dtypes(op, type_name, elem, rng, calls):
    # bfloat16 and float8 (ml_dtypes) are no axisops dtypes: their bits are moved.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    dtype = np.dtype(getattr(ml_dtypes, type_name))
    _ONNX_TYPES.setdefault(dtype, elem)
    inputs = list(_exotic_inputs(op, dtype, rng))
    inputs[0] = inputs[0].astype(dtype)
    if op == "ScatterElements":
        inputs[2] = inputs[2].astype(dtype)
    attrs = {"axis": 1} if op in ("Gather", "GatherElements", "ScatterElements") else {}
    got = _check_index(_index_model(op, dtype, **attrs), *inputs, calls=calls)
    assert got.dtype == dtype


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_elements_bfloat16_reductions(reduction, rng, calls):
    # Small integers: exact in bfloat16, so float32 arithmetic gives the same values.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    _ONNX_TYPES.setdefault(bf16, TensorProto.BFLOAT16)
    x = (np.arange(12) % 5 - 2).reshape(3, 4).astype(bf16)
    indices = _indices((3, 6), 4, rng)
    updates = (np.arange(18) % 3 + 1).reshape(3, 6).astype(bf16)
    model = _index_model("ScatterElements", bf16, axis=1, reduction=reduction)
    got = _check_index(model, x, indices, updates, calls=calls)
    assert got.dtype == bf16


@pytest.mark.parametrize("op", GATHER_OPS)
@pytest.mark.parametrize("kind", ["string", "complex64", "complex128"])
def test_gather_ops_strings_and_complex(op, kind, rng, calls):
    # Moved by position (strings, complex128) or as 8-byte integers (complex64).
    inputs = list(_exotic_inputs(op, None, rng))
    if kind == "string":
        elem = TensorProto.STRING

        def convert(a):
            return np.array([f"s{v}" for v in a.ravel()], dtype=object).reshape(a.shape)
    else:
        elem = getattr(TensorProto, kind.upper())

        def convert(a):
            return (a + 1j * a[..., ::-1]).astype(kind)
    inputs[0] = convert(inputs[0])
    if op == "ScatterElements":
        inputs[2] = convert(inputs[2])
    names = ["x", "indices", "updates"][:len(inputs)]
    types = [elem, TensorProto.INT64, elem]
    attrs = {"axis": 1} if op in ("Gather", "GatherElements", "ScatterElements") else {}
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], op, [helper.make_tensor_value_info(n, t, None) for n, t in zip(names, types)],
        [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feeds = dict(zip(names, inputs))
    (expected,) = ReferenceEvaluator(model).run(None, feeds)
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    (got,) = ours.run(None, feeds)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tolist() == expected.tolist()
    _assert_ran_axisops(ours, calls)


def test_gather_agrees_with_onnxruntime(rng, calls):
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    for op, inputs, attrs in [
        ("Gather", (x, _indices((3, 2), 6, rng)), {"axis": 1}),
        ("GatherElements", (x, _indices((4, 8, 5), 5, rng)), {"axis": 1}),
        ("GatherND", (x, np.stack([rng.integers(-6, 6, (4, 3))], -1)), {"batch_dims": 1}),
        ("ScatterElements", (x, _indices((4, 8, 5), 6, rng), rng.random((4, 8, 5), np.float32)),
         {"axis": 1, "reduction": "add"}),
    ]:
        model = _index_model(op, x.dtype, **attrs)
        got = _check_index(model, *inputs, calls=calls)
        np.testing.assert_allclose(got, _run_ort(model, *inputs), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------ Col2Im


def _col2im_model(dtype, opset=18, **attrs):
    """One-node Col2Im model: inputs ``x``, ``image_shape``, ``block_shape``."""
    elem = _ONNX_TYPES[np.dtype(dtype)]
    node = helper.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "col2im",
        [helper.make_tensor_value_info("x", elem, None),
         helper.make_tensor_value_info("image_shape", TensorProto.INT64, None),
         helper.make_tensor_value_info("block_shape", TensorProto.INT64, None)],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _col2im_feeds(x, image, block):
    return {"x": x, "image_shape": np.array(image, dtype=np.int64),
            "block_shape": np.array(block, dtype=np.int64)}


def _col2im_length(image, block, dilations=None, pads=None, strides=None):
    """L, the number of window positions, for ONNX's attributes (None: the default)."""
    d = len(image)
    dilations, strides = dilations or [1] * d, strides or [1] * d
    pads = pads or [0] * (2 * d)
    return int(np.prod([
        (image[i] + pads[i] + pads[i + d] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
        for i in range(d)]))


def _col2im_ort(model, feeds):
    ort = pytest.importorskip("onnxruntime")
    model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {k: np.ascontiguousarray(v) for k, v in feeds.items()})[0]


def _ort_col2im_is_right(image, attrs):
    """ONNX Runtime's Col2Im is float32 only, and its N-d path (1-D, 3-D) is wrong with a
    dilation > 1 and more than one channel (onnxruntime 1.32; microsoft/onnxruntime#18156:
    it counts the window positions without the dilation); its 2-D path is right."""
    return len(image) == 2 or all(v == 1 for v in attrs.get("dilations", [1]))


_COL2IM_CASES = [  # image_shape, block_shape, attributes (pads: every begin, then every end)
    pytest.param((11,), (3,), {}, id="1d"),
    pytest.param((10,), (4,), {"pads": [2, 0], "strides": [3]}, id="1d-asym-pads-stride"),
    pytest.param((12,), (3,), {"dilations": [2], "pads": [1, 2], "strides": [2]},
                 id="1d-dilation"),
    pytest.param((5, 6), (2, 3), {}, id="2d"),
    pytest.param((6, 7), (3, 3), {"pads": [1, 1, 1, 1]}, id="2d-pads"),
    pytest.param((6, 7), (3, 2), {"pads": [0, 2, 1, 0]}, id="2d-asym-pads"),
    pytest.param((7, 8), (2, 3), {"dilations": [2, 1], "pads": [1, 0, 1, 2], "strides": [1, 2]},
                 id="2d-dilation-stride"),
    pytest.param((7, 9), (2, 2), {"strides": [3, 4]}, id="2d-stride-gaps"),
    pytest.param((4, 5), (2, 2), {"pads": [3, 0, 3, 1]}, id="2d-windows-in-padding"),
    pytest.param((3, 4, 5), (2, 2, 3), {}, id="3d"),
    pytest.param((4, 5, 6), (2, 3, 2),
                 {"dilations": [1, 1, 2], "pads": [0, 1, 1, 1, 0, 2], "strides": [2, 1, 1]},
                 id="3d-dilation-asym-pads-stride"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("image", "block", "attrs"), _COL2IM_CASES)
def test_col2im_geometries(image, block, attrs, dtype, rng, calls):
    # ONNX's reference adds each element's terms in increasing kernel index, as
    # axisops.fold does: the same bits. ONNX Runtime (float32) to rounding.
    x = rng.standard_normal((2, 3 * int(np.prod(block)),
                             _col2im_length(image, block, **attrs))).astype(dtype)
    model = _col2im_model(dtype, **attrs)
    feeds = _col2im_feeds(x, image, block)
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    (got,) = ours.run(None, feeds)
    (expected,) = ReferenceEvaluator(model).run(None, feeds)
    assert got.dtype == dtype and got.shape == (2, 3, *image)
    np.testing.assert_array_equal(got, expected)
    _assert_ran_axisops(ours, calls)
    if dtype == np.float32 and _ort_col2im_is_right(image, attrs):
        np.testing.assert_allclose(got, _col2im_ort(model, feeds), rtol=1e-6, atol=1e-6)


def test_col2im_pads_become_begin_end_pairs(monkeypatch):
    # ONNX's pads [b1, b2, e1, e2] are fold's ((b1, e1), (b2, e2)).
    seen = {}
    fold = aonnx.axisops.fold

    def spy(*args, **kwargs):
        seen.update(kwargs, args=args[1:])
        return fold(*args, **kwargs)

    monkeypatch.setattr(aonnx.axisops, "fold", spy)
    image, block = (5, 6), (2, 3)
    attrs = {"dilations": [1, 2], "pads": [1, 0, 0, 2], "strides": [2, 1]}
    x = np.ones((1, 6, _col2im_length(image, block, **attrs)), dtype=np.float32)
    model = _col2im_model(x.dtype, **attrs)
    (got,) = ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, _col2im_feeds(x, image, block))
    assert seen == {"args": ((5, 6), (2, 3)), "dilation": (1, 2),
                    "padding": ((1, 0), (0, 2)), "stride": (2, 1)}
    (expected,) = ReferenceEvaluator(model).run(None, _col2im_feeds(x, image, block))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("opset", [18, 23])
def test_col2im_opsets(opset, calls):
    # The one Col2Im (opset 18) serves the later opsets too. ONNX's first example.
    x = (np.arange(25, dtype=np.float32) + 1).reshape(1, 5, 5).transpose(0, 2, 1)
    model = _col2im_model(x.dtype, opset=opset)
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    (got,) = ours.run(None, _col2im_feeds(x, (5, 5), (1, 5)))
    np.testing.assert_array_equal(got, np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5))
    _assert_ran_axisops(ours, calls)


@pytest.mark.parametrize(("shape", "image", "block", "attrs"), [
    ((2, 64 * 9, 40 * 40), (40, 40), (3, 3), {"pads": [1, 1, 1, 1]}),
    ((2, 8 * 27, 6 * 7 * 8), (6, 7, 8), (3, 3, 3), {"pads": [1, 0, 1, 1, 2, 1],
                                                    "strides": [1, 1, 1]}),
], ids=["2d", "3d"])
def test_col2im_large_agrees_with_onnxruntime(shape, image, block, attrs, rng, calls):
    # Large enough for the threaded kernels; ONNX's reference would take minutes.
    assert shape[2] == _col2im_length(image, block, **attrs)
    x = rng.standard_normal(shape).astype(np.float32)
    model = _col2im_model(x.dtype, **attrs)
    feeds = _col2im_feeds(x, image, block)
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    (got,) = ours.run(None, feeds)
    assert got.shape == (shape[0], shape[1] // int(np.prod(block)), *image)
    np.testing.assert_allclose(got, _col2im_ort(model, feeds), rtol=1e-5, atol=1e-5)
    _assert_ran_axisops(ours, calls)


def test_col2im_empty_batch(calls):
    # ONNX allows N = 0; ONNX's reference returns nothing then, ONNX Runtime an empty image.
    x = np.zeros((0, 6, 16), dtype=np.float32)
    model = _col2im_model(x.dtype)
    feeds = _col2im_feeds(x, (5, 6), (2, 3))
    (got,) = ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, feeds)
    _assert_same(got, _col2im_ort(model, feeds))
    assert got.shape == (0, 1, 5, 6)


def test_col2im_strided_input(rng, calls):
    base = rng.standard_normal((16, 2, 18)).astype(np.float64)
    x = base[::-2].transpose(1, 0, 2)  # (2, 8, 18): negative and non-unit strides
    image, block, attrs = (5, 6), (2, 2), {"pads": [0, 1, 1, 0], "strides": [2, 1]}
    assert x.shape[2] == _col2im_length(image, block, **attrs)
    model = _col2im_model(x.dtype, **attrs)
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    (got,) = ours.run(None, _col2im_feeds(x, image, block))
    (expected,) = ReferenceEvaluator(model).run(None, _col2im_feeds(x.copy(), image, block))
    np.testing.assert_array_equal(got, expected)
    _assert_ran_axisops(ours, calls)


@pytest.mark.parametrize(("shape", "image", "block", "attrs", "match"), [
    ((1, 6, 15), (5, 6), (2, 3), {}, None),  # L is 16
    ((1, 7, 16), (5, 6), (2, 3), {}, None),  # 7 channels, 6 kernel offsets
    ((1, 9, 1), (2, 2), (3, 3), {}, None),  # the kernel is larger than the image
    ((6, 16), (5, 6), (2, 3), {}, "input must be 3-D"),  # ONNX Runtime: the same
    ((1, 6, 16), (5, 6, 1), (2, 3), {}, "must have the same length"),
    ((1, 6, 20), (5, 6), (2, 3), {"pads": [1, 1]}, "pads must have 4 entries"),
    ((1, 1, 16), (2, 2, 2, 2), (1, 1, 1, 1), {}, "1, 2 or 3 spatial dimensions"),
], ids=["length", "channels", "kernel-too-large", "2d-input", "shape-lengths", "pads-length",
        "4d"])
def test_col2im_bad_inputs_raise(shape, image, block, attrs, match):
    model = _col2im_model(np.float32, **attrs)
    feeds = _col2im_feeds(np.zeros(shape, dtype=np.float32), image, block)
    with pytest.raises(ValueError) as info:
        ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, feeds)
    if match is not None:
        text = str(info.value) + str(info.value.__cause__)
        assert match in text, text


# ------------------------------------------------------------ packaging


def test_ops_are_opruns_named_as_onnx_ops():
    from onnx.reference.op_run import OpRun

    assert OP_TYPES == {"ArgMax", "ArgMin", "ReduceSum", "ReduceMax", "ReduceMin",
                        "ReduceMean", "ReduceProd", "CumSum", "CumProd", "Gather",
                        "GatherElements", "GatherND", "ScatterElements", "Col2Im", "MaxPool",
                        "AveragePool", "GlobalMaxPool", "GlobalAveragePool", "TopK"}
    for cls in aonnx.OPS:
        assert issubclass(cls, OpRun) and cls.op_domain == ""


def test_core_package_does_not_import_onnx():
    import axisops

    root = Path(axisops.__file__).resolve().parents[1]
    code = "import sys, axisops; assert 'onnx' not in sys.modules, 'onnx imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


# ------------------------------------------------------------------- pooling

def _pool_model(op, opset, shape, outputs=1, **attrs):
    names = ["y", "indices"][:outputs]
    node = helper.make_node(op, ["x"], names, **attrs)
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if outputs == 2:
        outs.append(helper.make_tensor_value_info("indices", TensorProto.INT64, None))
    graph = helper.make_graph([node], op.lower(),
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [11, 12, 18, 22])
@pytest.mark.parametrize("op", POOL_OPS)
def test_pool_classes_run_for_every_opset(op, opset, calls):
    x = np.random.default_rng(opset).standard_normal((2, 3, 7, 6)).astype(np.float32)
    attrs = {} if op.startswith("Global") else {"kernel_shape": [3, 2], "strides": [2, 1],
                                                "pads": [1, 0, 1, 1]}
    model = _pool_model(op, opset, x.shape, **attrs)
    ours = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    theirs = ReferenceEvaluator(model)
    _assert_same(ours.run(None, {"x": x})[0], theirs.run(None, {"x": x})[0])
    _assert_ran_axisops(ours, calls)


@pytest.mark.parametrize("storage_order", [0, 1])
def test_maxpool_indices_are_over_the_whole_input(storage_order, calls):
    rng = np.random.default_rng(0)
    x = rng.permutation(2 * 3 * 6 * 5).reshape(2, 3, 6, 5).astype(np.float32)  # no ties
    model = _pool_model("MaxPool", 12, x.shape, outputs=2, kernel_shape=[2, 2], strides=[2, 2],
                        storage_order=storage_order)
    values, indices = ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, {"x": x})
    want_v, want_i = ReferenceEvaluator(model).run(None, {"x": x})
    _assert_same(values, want_v)
    _assert_same(indices, want_i)
    flat = x.reshape(-1) if not storage_order else None
    if flat is not None:
        assert np.array_equal(flat[indices], values)


def test_pool_auto_pad_and_errors():
    x = np.arange(2 * 7 * 7, dtype=np.float32).reshape(1, 2, 7, 7)
    for auto_pad in ("SAME_UPPER", "SAME_LOWER", "VALID"):
        model = _pool_model("AveragePool", 18, x.shape, kernel_shape=[3, 3], strides=[2, 2],
                            auto_pad=auto_pad)
        _assert_same(ReferenceEvaluator(model, new_ops=aonnx.OPS).run(None, {"x": x})[0],
                     ReferenceEvaluator(model).run(None, {"x": x})[0])
    bad = _pool_model("MaxPool", 12, x.shape, kernel_shape=[3])
    with pytest.raises(ValueError, match="spatial dimensions"):
        ReferenceEvaluator(bad, new_ops=aonnx.OPS).run(None, {"x": x})


# ----------------------------------------------------------------------- TopK


def _top_k_model(opset, dtype, **attributes):
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], **attributes)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        [node], "top_k",
        [helper.make_tensor_value_info("x", elem, None),
         helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("values", elem, None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [11, 18])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("axis", [0, -1])
def test_top_k_matches_onnx(opset, dtype, largest, axis, calls):
    """Against ONNX's reference, with ties (the lower index first in both)."""
    x = np.random.default_rng(3).integers(0, 5, (6, 7)).astype(dtype)
    model = _top_k_model(opset, dtype, axis=axis, largest=largest)
    feeds = {"x": x, "k": np.array([3], np.int64)}
    ref = ReferenceEvaluator(model).run(None, feeds)
    sess = ReferenceEvaluator(model, new_ops=aonnx.OPS)
    got = sess.run(None, feeds)
    for g, r in zip(got, ref):
        _assert_same(g, r)
    _assert_ran_axisops(sess, calls)


def test_top_k_nan_last_and_unsorted():
    x = np.array([[1.0, np.nan, 3.0, 2.0]], np.float32)
    sess = ReferenceEvaluator(_top_k_model(11, np.float32, largest=1, sorted=0),
                              new_ops=aonnx.OPS)
    values, indices = sess.run(None, {"x": x, "k": np.array([3], np.int64)})
    np.testing.assert_array_equal(indices, [[0, 2, 3]])  # the three numbers, in position order
    assert values.dtype == np.float32
    sess = ReferenceEvaluator(_top_k_model(11, np.float32), new_ops=aonnx.OPS)
    values, indices = sess.run(None, {"x": x, "k": np.array([4], np.int64)})
    np.testing.assert_array_equal(indices, [[2, 3, 0, 1]])  # NaN last
    with pytest.raises(ValueError, match="k must be in"):
        sess.run(None, {"x": x, "k": np.array([5], np.int64)})

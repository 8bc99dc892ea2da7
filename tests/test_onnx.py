"""axisops.onnx: ONNX ArgMax/ArgMin/Reduce*/CumSum/CumProd nodes run on axisops.

Every ONNX backend node test case whose graph uses one of these operators runs
through ``ReferenceEvaluator(model, new_ops=axisops.onnx.OPS)``; direct tests for
opsets 11, 13 and 18 (and 14 and 26 for the scans) compare with ONNX's own
reference implementation.
"""
from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import AttributeProto, TensorProto, helper  # noqa: E402
from onnx.backend.test.case.node import collect_testcases  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import axisops.onnx as aonnx  # noqa: E402

OP_TYPES = {cls.__name__ for cls in aonnx.OPS}


def _backend_cases():
    with warnings.catch_warnings():  # the case generators divide by zero on purpose
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    return [
        case
        for case in cases
        if any(node.op_type in OP_TYPES for node in case.model.graph.node)
    ]


BACKEND_CASES = _backend_cases()


@pytest.fixture
def calls(monkeypatch):
    """Record the op type of every axisops.onnx node that runs."""
    seen = []
    for base in (aonnx._Reduce, aonnx._ArgReduce, aonnx._Scan):
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
               "reduce_mean", "reduce_prod", "cumsum", "cumprod"):
        assert any(name.startswith(f"test_{op}_") for name in names), op
    scans = {name for name in names if name.startswith(("test_cumsum_", "test_cumprod_"))}
    assert len(scans) >= 18, sorted(scans)  # 9 each in onnx 1.19-1.23


@pytest.mark.parametrize("case", BACKEND_CASES, ids=lambda case: case.name)
def test_backend_case(case, calls):
    sess = ReferenceEvaluator(case.model, new_ops=aonnx.OPS)
    single = len(case.model.graph.node) == 1
    for inputs, outputs in case.data_sets:
        feeds = dict(zip(sess.input_names, inputs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # e.g. a mean of nothing
            got = sess.run(None, feeds)
        assert len(got) == len(outputs)
        for g, e in zip(got, outputs):
            if single:  # our node alone: tight
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


@pytest.mark.parametrize("opset", range(11, 19))
@pytest.mark.parametrize("op", sorted(OP_TYPES - set(SCAN_OPS)))
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
@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.uint8, np.int32, np.int64])
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
@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.uint8, np.int64, np.bool_])
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
@pytest.mark.parametrize("dtype", _SCAN_DTYPES)
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


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_cumsum_wraps_in_input_dtype_as_onnx(dtype, calls):
    # np.cumsum would promote to 64 bits; ONNX's CumSum stays in the input type.
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


# ------------------------------------------------------------ packaging


def test_ops_are_opruns_named_as_onnx_ops():
    from onnx.reference.op_run import OpRun

    assert OP_TYPES == {"ArgMax", "ArgMin", "ReduceSum", "ReduceMax", "ReduceMin",
                        "ReduceMean", "ReduceProd", "CumSum", "CumProd"}
    for cls in aonnx.OPS:
        assert issubclass(cls, OpRun) and cls.op_domain == ""


def test_core_package_does_not_import_onnx():
    import axisops

    root = Path(axisops.__file__).resolve().parents[1]
    code = "import sys, axisops; assert 'onnx' not in sys.modules, 'onnx imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)

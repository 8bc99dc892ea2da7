"""ONNX reduction, scan, gather, scatter and Col2Im operators that run on axisops, for
``onnx.reference``.

``OPS`` lists :class:`onnx.reference.op_run.OpRun` subclasses, one per ONNX
operator: ArgMax, ArgMin, ReduceSum, ReduceMax, ReduceMin, ReduceMean,
ReduceProd, CumSum, CumProd, Gather, GatherElements, GatherND,
ScatterElements, Col2Im, MaxPool (with its Indices output), AveragePool,
GlobalMaxPool, GlobalAveragePool and TopK. Pass it as ``new_ops`` and
:class:`onnx.reference.ReferenceEvaluator` runs those nodes on axisops instead
of its own NumPy code:

>>> import numpy as np
>>> from onnx import TensorProto, helper
>>> from onnx.reference import ReferenceEvaluator
>>> import axisops.onnx
>>> node = helper.make_node("ArgMax", ["x"], ["y"], axis=1, select_last_index=1)
>>> graph = helper.make_graph(
...     [node], "argmax",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
...     [helper.make_tensor_value_info("y", TensorProto.INT64, [2, 1])])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> sess = ReferenceEvaluator(model, new_ops=axisops.onnx.OPS)
>>> x = np.array([[1, 3, 3], [2, 0, 2]], dtype=np.float32)
>>> sess.run(None, {"x": x})[0].tolist()
[[2], [2]]

CumSum takes its axis as a second input, a 0-D integer tensor:

>>> node = helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=1)
>>> graph = helper.make_graph(
...     [node], "cumsum",
...     [helper.make_tensor_value_info("x", TensorProto.INT32, [2, 3]),
...      helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
...     [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 3])])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
>>> sess = ReferenceEvaluator(model, new_ops=axisops.onnx.OPS)
>>> y = sess.run(None, {"x": np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32),
...                     "axis": np.array(1)})[0]
>>> y.tolist(), y.dtype
([[0, 1, 3], [0, 4, 9]], dtype('int32'))

ONNX semantics, for every opset from 11 on (the evaluator matches ``new_ops`` by
domain and class name, whatever the model's opset, so one class serves every
version of an operator):

* ``axes`` is an attribute (ReduceSum before opset 13, the others before 18) or
  the optional second input (an int64 tensor). When it is absent or empty, the
  node reduces over every axis, or returns its input unchanged if
  ``noop_with_empty_axes=1``.
* ``keepdims`` defaults to 1. The result has the input's element type (ONNX has
  no type promotion: a ReduceSum of int32 is int32, as ``dtype=x.dtype``).
* An empty reduction gives what the ONNX reference implementation gives: 0 for
  ReduceSum, 1 for ReduceProd, NaN for ReduceMean, and for ReduceMax/ReduceMin
  the lowest/highest value of the type (-inf/+inf for floats, the integer limits,
  False/True for bool), where ``axisops.max``/``min`` raise as NumPy does.
* ArgMax/ArgMin: ``axis`` (default 0), ``keepdims`` (default 1) and
  ``select_last_index`` (default 0: ties give the first index); int64 result.
  An empty reduced axis raises ``ValueError``, as in ONNX's reference.
* CumSum (opset 11, 14) and CumProd (opset 26): the second input ``axis`` is an
  integer tensor (int32 or int64 in a valid model), 0-D as the specification
  says, or 1-D with one element as ONNX Runtime also accepts (ONNX's reference
  raises ``ValueError`` for that; any other shape raises ``ValueError`` here).
  A float or bool ``axis`` raises ``TypeError``, as in ONNX's reference; one out
  of range raises ``numpy.exceptions.AxisError``. ``exclusive=1`` starts from
  the identity (0 or 1) and leaves the element itself out; ``reverse=1`` scans
  from the end; both default to 0 and combine. The result has the input's
  element type (``dtype=x.dtype``: an int32 CumSum wraps in int32, where
  ``np.cumsum`` would give int64); float16 accumulates in float32, where ONNX's
  reference accumulates in float16, so long float16 scans can differ from it
  in the last bits.
* Gather (``axisops.take``), GatherElements (``axisops.take_along_axis``),
  GatherND (``axisops.gather_nd``, ``batch_dims``) and ScatterElements
  (``axisops.scatter``): ``axis`` defaults to 0; indices may be negative, in
  ``[-n, n)``, and one out of range raises ``IndexError`` (``mode="raise"``:
  ONNX makes it an error, and ONNX Runtime fails; ONNX's reference
  GatherElements wraps it instead). GatherElements' result has the shape of
  ``indices``: a dimension other than ``axis`` smaller than ``x``'s uses the
  leading part of ``x``, and none may be larger (``ValueError``), as in ONNX
  Runtime (``take_along_axis`` alone would broadcast a 1 as NumPy does).
  ScatterElements' ``reduction`` is ``none`` (repeated indices: the update
  last in C order of ``indices`` wins), ``add``, ``mul``, ``max`` or ``min``
  (a NaN propagates, where ONNX's reference keeps ``x`` when the update is
  NaN); ``updates`` must have the shape of ``indices`` (``ValueError``), and
  float16 ``add``/``mul`` accumulate in float32 per destination, rounded once.

  A first example:

  >>> node = helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)
  >>> graph = helper.make_graph(
  ...     [node], "gather_elements",
  ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
  ...      helper.make_tensor_value_info("i", TensorProto.INT64, [2, 2])],
  ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
  >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
  >>> sess = ReferenceEvaluator(model, new_ops=axisops.onnx.OPS)
  >>> x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
  >>> sess.run(None, {"x": x, "i": np.array([[2, 0], [-1, 1]])})[0].tolist()
  [[3.0, 1.0], [6.0, 5.0]]

* Col2Im (opset 18, ``axisops.fold``): ``input`` is ``(N, C*prod(block_shape), L)``
  (3-D, as ONNX Runtime requires; ``N`` may be 0), ``image_shape`` and
  ``block_shape`` are 1-D integer tensors of the same length ``d``, the number
  of spatial dimensions: 1, 2 or 3 (``axisops.fold``'s; more raise
  ``ValueError``). ``dilations`` and ``strides`` (``d`` ints, default 1) and
  ``pads`` (``2*d`` ints in ONNX order, every begin then every end, default 0)
  go to ``fold`` as ``dilation``, ``stride`` and one ``(begin, end)`` pair per
  dimension. The result is ``(N, C, *image_shape)`` in the input's element
  type; each element sums the entries whose window covers it in increasing
  kernel index, as ONNX's reference adds them (the same bits for float32 and
  float64). float16 accumulates in float32, rounded once; integers wrap; bool
  sums are a logical or. A length ``L`` that does not match the geometry, or
  a channel dimension not divisible by ``prod(block_shape)``, raises
  ``ValueError``.

  >>> node = helper.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"],
  ...                         pads=[0, 1, 0, 1])  # dim 0: (0, 0); dim 1: (1, 1)
  >>> graph = helper.make_graph(
  ...     [node], "col2im",
  ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6]),
  ...      helper.make_tensor_value_info("image_shape", TensorProto.INT64, [2]),
  ...      helper.make_tensor_value_info("block_shape", TensorProto.INT64, [2])],
  ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 2])])
  >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
  >>> sess = ReferenceEvaluator(model, new_ops=axisops.onnx.OPS)
  >>> cols = np.arange(12, dtype=np.float32).reshape(1, 2, 6)
  >>> sess.run(None, {"x": cols, "image_shape": np.array([2, 2]),
  ...                 "block_shape": np.array([1, 2])})[0].tolist()
  [[[[7.0, 9.0], [13.0, 15.0]]]]

* MaxPool, AveragePool (``axisops.max_pool``/``avg_pool``; every opset: ``auto_pad``
  NOTSET/SAME_UPPER/SAME_LOWER/VALID resolved as ONNX's reference does,
  ``ceil_mode``, ``dilations``, ``pads`` in ONNX order, ``strides``;
  AveragePool's ``count_include_pad`` defaults to 0 and counts the window's
  elements inside the padded input), GlobalMaxPool and GlobalAveragePool
  (``axisops.max``/``mean`` over every spatial axis, kept). MaxPool's optional
  Indices output is ONNX's: flat over the whole input, ``(n * C + c) * plane``
  plus the position in the plane (row-major, or column-major with
  ``storage_order=1``). A NaN wins MaxPool's window (ONNX's reference skips it).
  AveragePool adds a window in float32 in window order, so it differs from the
  reference's NumPy mean in the last bits. The 43 pooling cases of onnx 1.23's
  backend tests pass (within their tolerance for the averages).

* TopK (opsets 1 to 11 and on; ``axisops.top_k``): ``K`` the second input, one
  integer; ``axis`` (default -1), ``largest`` and ``sorted`` (default 1). Ties give
  the lower index first, as ONNX specifies; NaN is last in both directions (the
  contract's order; ONNX leaves it open). Values keep the input's element type,
  indices are int64. ``sorted=0`` gives the same elements in the order of their
  positions.

* ONNX's extra element types that NumPy lacks (bfloat16, float8: ``ml_dtypes``,
  which axisops does not take) run in float32 and come back in their own type.
  The gathers, and ScatterElements without a reduction, only move elements:
  they move such elements as unsigned integers of the same size (their bits
  unchanged), and elements of any other type (strings, complex) by position.
  Col2Im adds them in float32 and rounds each sum once to their type; complex
  and strings raise ``TypeError``, as ``axisops.fold`` does.

Importing this module needs the ``onnx`` package; the rest of axisops never
imports it.
"""
from __future__ import annotations

import math

import numpy as np
from onnx.reference.op_run import OpRun

import axisops
from axisops import pool as _pool
from axisops._axes import normalize_axis

__all__ = ["OPS"]


def _widen(x):
    """``x``, or ``x`` as float32 if its dtype is not NumPy's own (bfloat16, ...)."""
    return x if x.dtype.kind in "biuf" else x.astype(np.float32)


class _Reduce(OpRun):
    """Reduce*: normalises ``axes`` and calls ``axisops.<func>``."""

    func = ""  # name of the axisops function
    keeps_dtype = True  # pass dtype=x.dtype (sum, prod, mean)

    def empty_value(self, dtype):
        """The value of a reduction over an empty set, or None to ask axisops."""
        return None

    def _run(self, data, axes=None, keepdims=1, noop_with_empty_axes=0):
        # axes: a list (attribute), an int64 tensor (input) or None (absent).
        axes = () if axes is None else tuple(int(a) for a in np.ravel(axes))
        if not axes and not noop_with_empty_axes:
            axes = None  # every axis
        keepdims = bool(keepdims)
        x = _widen(data)
        fill = self.empty_value(data.dtype) if data.size == 0 else None
        if fill is not None:
            shape = axisops.sum(x, axes, keepdims=keepdims).shape
            return (np.full(shape, fill, dtype=data.dtype),)
        kwargs = {"dtype": x.dtype} if self.keeps_dtype else {}
        res = getattr(axisops, self.func)(x, axes, keepdims=keepdims, **kwargs)
        return (np.asarray(res).astype(data.dtype, copy=False),)


class ReduceSum(_Reduce):
    func = "sum"


class ReduceProd(_Reduce):
    func = "prod"


class ReduceMean(_Reduce):
    func = "mean"


class ReduceMax(_Reduce):
    func = "max"
    keeps_dtype = False

    def empty_value(self, dtype):
        if dtype == np.bool_:
            return False
        if np.issubdtype(dtype, np.integer):
            return np.iinfo(dtype).min
        return -np.inf


class ReduceMin(_Reduce):
    func = "min"
    keeps_dtype = False

    def empty_value(self, dtype):
        if dtype == np.bool_:
            return True
        if np.issubdtype(dtype, np.integer):
            return np.iinfo(dtype).max
        return np.inf


class _ArgReduce(OpRun):
    """ArgMax/ArgMin: one ``axis``, ``keepdims``, ``select_last_index``."""

    func = ""

    def _run(self, data, axis=0, keepdims=1, select_last_index=0):
        res = getattr(axisops, self.func)(
            _widen(data),
            int(axis),
            keepdims=bool(keepdims),
            select_last_index=bool(select_last_index),
            index_dtype=np.int64,
        )
        return (np.asarray(res),)


class ArgMax(_ArgReduce):
    func = "argmax"


class ArgMin(_ArgReduce):
    func = "argmin"


class _Scan(OpRun):
    """CumSum/CumProd: ``x``, the ``axis`` input, ``exclusive`` and ``reverse``."""

    func = ""

    def _run(self, x, axis, exclusive=0, reverse=0):
        wide = _widen(x)
        res = getattr(axisops, self.func)(
            wide,
            _scan_axis(type(self).__name__, axis),
            dtype=wide.dtype,
            exclusive=bool(exclusive),
            reverse=bool(reverse),
        )
        return (np.asarray(res).astype(x.dtype, copy=False),)


def _scan_axis(op, axis):
    """The ``axis`` input of CumSum/CumProd as an int (a 0-D or one-element tensor)."""
    axis = np.asarray(axis)
    if axis.dtype.kind not in "iu":
        raise TypeError(f"{op}: axis must be an int32 or int64 tensor, got {axis.dtype}")
    if axis.ndim > 1 or axis.size != 1:
        raise ValueError(
            f"{op}: axis must be a 0-D tensor (or a 1-D tensor of one element), "
            f"got shape {axis.shape}"
        )
    return int(axis.reshape(()))


class CumSum(_Scan):
    func = "cumsum"


class CumProd(_Scan):
    func = "cumprod"


# ------------------------------------------------------------ gather and scatter

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _moved(move, *arrays):
    """``move(*arrays)`` for operators that only move elements; in ``arrays[0]``'s dtype.

    ``move`` takes arrays of one axisops dtype (the data, and for a scatter the
    updates) and returns the moved elements. NumPy's own dtypes go as they are;
    other element types of 1, 2, 4 or 8 bytes (bfloat16, float8, complex64) as
    unsigned integers with their bits; any other (strings, complex128) as their
    positions in the concatenation of the flattened arrays.
    """
    dtype = arrays[0].dtype
    if dtype.kind in "biuf":
        return move(*arrays)
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    if dtype.kind != "O" and dtype.itemsize in _UNSIGNED:
        bits = _UNSIGNED[dtype.itemsize]
        return move(*(np.ascontiguousarray(a).view(bits) for a in arrays)).view(dtype)
    flat = np.concatenate([a.reshape(-1) for a in arrays])
    starts = np.cumsum([0] + [a.size for a in arrays[:-1]])
    positions = [np.arange(s, s + a.size, dtype=np.int64).reshape(a.shape)
                 for s, a in zip(starts, arrays)]
    return flat[move(*positions)]


class Gather(OpRun):
    """Gather: ``axisops.take(x, indices, axis)`` (``axis`` defaults to 0)."""

    def _run(self, x, indices, axis=0):
        axis = int(axis)
        res = _moved(lambda a: axisops.take(a, indices, axis, mode="raise"), x)
        return (np.asarray(res),)


class GatherElements(OpRun):
    """GatherElements: ``axisops.take_along_axis``; the result has ``indices``' shape."""

    def _run(self, data, indices, axis=0):
        axis = int(axis)
        indices = np.asarray(indices)
        if indices.ndim != data.ndim:
            raise ValueError(f"GatherElements: indices must have the rank of data ({data.ndim}), "
                             f"got shape {indices.shape}")
        axis = normalize_axis(axis, data.ndim, "GatherElements")
        part = []  # the leading part of data that indices reach, outside the axis
        for d, (xi, ii) in enumerate(zip(data.shape, indices.shape)):
            if d != axis and ii > xi:
                raise ValueError(f"GatherElements: indices dimension {d} has size {ii}, "
                                 f"larger than data's {xi}")
            part.append(slice(None) if d == axis else slice(0, ii))
        data = data[tuple(part)]
        res = _moved(lambda a: axisops.take_along_axis(a, indices, axis, mode="raise"), data)
        return (np.asarray(res),)


class GatherND(OpRun):
    """GatherND: ``axisops.gather_nd(x, indices, batch_dims=batch_dims)``."""

    def _run(self, data, indices, batch_dims=0):
        batch_dims = int(batch_dims)
        res = _moved(lambda a: axisops.gather_nd(a, indices, batch_dims=batch_dims), data)
        return (np.asarray(res),)


class ScatterElements(OpRun):
    """ScatterElements: ``axisops.scatter(data, indices, updates, axis, reduce=...)``."""

    def _run(self, data, indices, updates, axis=0, reduction="none"):
        axis = int(axis)
        if isinstance(reduction, bytes):
            reduction = reduction.decode()
        reduce = None if reduction in (None, "none") else reduction
        indices, updates = np.asarray(indices), np.asarray(updates)
        if updates.shape != indices.shape:
            raise ValueError(f"ScatterElements: updates must have the shape of indices "
                             f"{indices.shape}, got {updates.shape}")

        def scatter(x, u):
            return axisops.scatter(x, indices, u, axis, reduce=reduce)

        if reduce is None:
            res = _moved(scatter, data, updates)
        else:  # arithmetic: ml_dtypes element types in float32
            wide = _widen(data)
            res = scatter(wide, updates.astype(wide.dtype, copy=False))
        return (np.asarray(res).astype(data.dtype, copy=False),)


# ------------------------------------------------------------ sliding windows


def _shape_input(op, name, value):
    """A 1-D integer tensor input (``image_shape``, ``block_shape``) as a tuple of ints."""
    value = np.asarray(value)
    if value.dtype.kind not in "iu" or value.ndim != 1:
        raise ValueError(f"{op}: {name} must be a 1-D integer tensor, "
                         f"got {value.dtype} of shape {value.shape}")
    return tuple(int(v) for v in value)


def _ints_attribute(op, name, value, length, default):
    """An ints attribute of ``length`` entries (``default`` each when absent)."""
    if value is None:
        return (default,) * length
    value = tuple(int(v) for v in value)
    if len(value) != length:
        raise ValueError(f"{op}: {name} must have {length} entries, got {list(value)}")
    return value


class Col2Im(OpRun):
    """Col2Im: ``axisops.fold(input, image_shape, block_shape, ...)``.

    ``pads`` in ONNX order ``[b_1, ..., b_d, e_1, ..., e_d]`` becomes fold's
    per-dimension pairs ``((b_1, e_1), ..., (b_d, e_d))``.
    """

    def _run(self, data, image_shape, block_shape, dilations=None, pads=None, strides=None):
        image_shape = _shape_input("Col2Im", "image_shape", image_shape)
        block_shape = _shape_input("Col2Im", "block_shape", block_shape)
        d = len(block_shape)
        if len(image_shape) != d:
            raise ValueError(f"Col2Im: image_shape {list(image_shape)} and block_shape "
                             f"{list(block_shape)} must have the same length")
        if not 1 <= d <= 3:
            raise ValueError(f"Col2Im: axisops folds 1, 2 or 3 spatial dimensions, "
                             f"got block_shape {list(block_shape)}")
        dilations = _ints_attribute("Col2Im", "dilations", dilations, d, 1)
        strides = _ints_attribute("Col2Im", "strides", strides, d, 1)
        pads = _ints_attribute("Col2Im", "pads", pads, 2 * d, 0)
        data = np.asarray(data)
        if data.ndim != 3:
            raise ValueError(f"Col2Im: input must be 3-D (N, C*prod(block_shape), L), "
                             f"got shape {data.shape}")
        # bfloat16 and float8 (ml_dtypes: kind "V") are summed in float32.
        x = data.astype(np.float32) if data.dtype.kind == "V" else data
        res = axisops.fold(x, image_shape, block_shape, dilation=dilations,
                           padding=tuple(zip(pads[:d], pads[d:])), stride=strides)
        return (np.asarray(res).astype(data.dtype, copy=False),)


def _pool_options(op, x, auto_pad, kernel_shape, strides, dilations, pads):
    """(kernel, strides, dilations, (begin, end) pads) of a pooling node, ``auto_pad``
    resolved as ONNX's reference resolves it (SAME_*: ``ceil(size / stride)``
    windows, the padding ``(out - 1) * stride + kernel - size`` split with the odd
    one at the end for SAME_UPPER, at the beginning for SAME_LOWER)."""
    if kernel_shape is None:
        raise ValueError(f"{op}: kernel_shape is required")
    kernel = tuple(int(k) for k in kernel_shape)
    d = len(kernel)
    if x.ndim != d + 2:
        raise ValueError(f"{op}: input must be (N, C, *spatial) with {d} spatial dimensions "
                         f"(kernel_shape {list(kernel)}), got shape {x.shape}")
    strides = _ints_attribute(op, "strides", strides, d, 1)
    dilations = _ints_attribute(op, "dilations", dilations, d, 1)
    pads = _ints_attribute(op, "pads", pads, 2 * d, 0)
    mode = auto_pad.decode() if isinstance(auto_pad, bytes) else (auto_pad or "NOTSET")
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        pairs = []
        for size, k, t in zip(x.shape[2:], kernel, strides):
            total = max(0, (-(-size // t) - 1) * t + k - size)
            half = total // 2 if mode == "SAME_UPPER" else total - total // 2
            pairs.append((half, total - half))
        return kernel, strides, dilations, tuple(pairs)
    if mode == "VALID":
        return kernel, strides, dilations, ((0, 0),) * d
    if mode != "NOTSET":
        raise ValueError(f"{op}: auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, "
                         f"got {mode!r}")
    return kernel, strides, dilations, tuple(zip(pads[:d], pads[d:]))


def _as_computed(x):
    """bfloat16 and float8 (ml_dtypes: kind "V") pooled as float32."""
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype.kind == "V" else x


class MaxPool(OpRun):
    """MaxPool: ``axisops.max_pool`` with ``return_indices``; the optional Indices
    output is ONNX's, a flat index over the whole input (``(n * C + c) * plane``
    plus the position in the plane, row-major, or column-major with
    ``storage_order=1``)."""

    def _run(self, x, auto_pad=None, ceil_mode=None, dilations=None, kernel_shape=None, pads=None,
             storage_order=None, strides=None):
        data = np.asarray(x)
        kernel, strides, dilations, pads = _pool_options("MaxPool", data, auto_pad, kernel_shape,
                                                         strides, dilations, pads)
        values, where = axisops.max_pool(_as_computed(data), kernel, stride=strides,
                                         dilation=dilations, padding=pads,
                                         ceil_mode=bool(ceil_mode), return_indices=True)
        values = np.asarray(values).astype(data.dtype, copy=False)
        if len(self.output) < 2:
            return (values,)
        spatial = data.shape[2:]
        if storage_order:  # the position in the plane, column-major
            where = np.ravel_multi_index(np.unravel_index(where, spatial), spatial, order="F")
        planes = np.arange(data.shape[0] * data.shape[1]).reshape(data.shape[:2])
        offset = planes.reshape(planes.shape + (1,) * len(spatial)) * math.prod(spatial)
        return values, (np.asarray(where) + offset).astype(np.int64)


class AveragePool(OpRun):
    """AveragePool: ``axisops.avg_pool`` (with ``dilations``, which opset 19 added,
    through the same kernel); ``count_include_pad`` defaults to 0 as in ONNX."""

    def _run(self, x, auto_pad=None, ceil_mode=None, count_include_pad=None, dilations=None,
             kernel_shape=None, pads=None, strides=None):
        data = np.asarray(x)
        kernel, strides, dilations, pads = _pool_options("AveragePool", data, auto_pad,
                                                         kernel_shape, strides, dilations, pads)
        res = _pool._pool("avg_pool", _as_computed(data), kernel, strides, dilations, pads,
                          bool(ceil_mode), False, bool(count_include_pad), False)
        return (np.asarray(res).astype(data.dtype, copy=False),)


class _GlobalPool(OpRun):
    op_name = ""

    def _run(self, x):
        data = np.asarray(x)
        if data.ndim < 3:
            raise ValueError(f"{type(self).__name__}: input must be (N, C, *spatial), got "
                             f"shape {data.shape}")
        axes = tuple(range(2, data.ndim))
        reduce = axisops.max if self.op_name == "max" else axisops.mean
        res = reduce(_as_computed(data), axis=axes, keepdims=True)
        return (np.asarray(res).astype(data.dtype, copy=False),)


class GlobalMaxPool(_GlobalPool):
    """GlobalMaxPool: ``axisops.max`` over every spatial axis, kept (NaN propagates)."""

    op_name = "max"


class GlobalAveragePool(_GlobalPool):
    """GlobalAveragePool: ``axisops.mean`` over every spatial axis, kept."""

    op_name = "mean"


class TopK(OpRun):
    """TopK: ``axisops.top_k`` with ``K`` a 1-D int64 tensor of one element."""

    def _run(self, x, k, axis=-1, largest=1, sorted=1):
        k = np.asarray(k)
        if k.size != 1 or k.dtype.kind not in "iu":
            raise ValueError(f"TopK: K must be one integer, got {k!r}")
        values, indices = axisops.top_k(_widen(np.asarray(x)), int(k.reshape(-1)[0]), int(axis),
                                        mode="largest" if largest else "smallest",
                                        sorted=bool(sorted), index_dtype=np.int64)
        return (values.astype(x.dtype, copy=False), indices)


OPS = [ArgMax, ArgMin, ReduceSum, ReduceMax, ReduceMin, ReduceMean, ReduceProd, CumSum, CumProd,
       Gather, GatherElements, GatherND, ScatterElements, Col2Im, MaxPool, AveragePool,
       GlobalMaxPool, GlobalAveragePool, TopK]

"""axisops on ``torch.Tensor``: registered operators with autograd and ``torch.compile``.

Every public function and gradient is a ``torch.library`` custom operator in the
namespace ``axisops`` (``torch.ops.axisops.cummax``, ``torch.ops.axisops.grad_take``,
...). Calling ``axisops.cummax(tensor)`` reaches it through ``axisops._dispatch``:

* **The kernels are the NumPy path's.** The operator's implementation views each
  CPU tensor as a NumPy array (``Tensor.numpy()``: zero-copy, any strides), runs
  the NumPy-path function and wraps its results with ``torch.from_numpy`` (no
  copy either). Values, dtypes, errors and determinism are therefore exactly the
  NumPy path's; index results are ``torch.int64`` (or ``index_dtype``).
* **Autograd.** Each differentiable operator has the ``axisops.grad`` function of
  the same name as its backward, itself a registered operator. Where that
  gradient is linear in ``g`` (sum, mean, cumsum, cummax/cummin, the gathers,
  unfold, fold, scatter with ``reduce="add"``) its own backward is registered
  too, so double backward works; the gradients of prod, max/min, cumprod,
  logcumsumexp and of scatter with another ``reduce`` are not differentiable
  again (a ``RuntimeError`` when a second derivative reaches them).
* **torch.compile.** Each operator has a fake (meta) implementation giving the
  result's shape and dtype, so ``torch.compile(..., fullgraph=True)`` traces
  through calls. It runs the NumPy path on zero-stride stand-ins of the inputs
  (one element of memory each, index stand-ins all zero), which applies every
  shape and dtype rule of the real call by construction; it costs about one call
  at trace time, never at run time. Symbolic sizes are specialised to their
  values.

Arguments that are not tensors are normalised before the operator is called
(axes to a list, dtypes to ``torch.dtype``, window sizes to one int per spatial
dimension), so bad arguments raise the NumPy path's exceptions before anything
is traced.

CUDA tensors are run on their device by :mod:`axisops.cuda`; those that autograd
or ``torch.compile`` must see come here, to the same registered operators, whose
CUDA kernel (``register_kernel("cuda")``) is the device implementation: the
backward of a CUDA tensor is the device gradient, on its device.

>>> import torch, axisops
>>> x = torch.tensor([[1., 3., 2.], [4., 0., 5.]], requires_grad=True)
>>> values, indices = axisops.cummax(x, axis=1)
>>> indices
tensor([[0, 1, 1],
        [0, 0, 2]])
>>> values.sum().backward()
>>> x.grad
tensor([[1., 2., 0.],
        [2., 0., 1.]])
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from . import _axes, _dispatch, _dtypes, _indices
from . import gather as _gather
from . import grad as _grad
from . import missing as _missing
from . import moving as _moving
from . import moving_order as _moving_order
from . import order as _order
from . import pool as _pool
from . import reduce as _reduce
from . import scan as _scan
from . import window as _window
from .grad import order as _grad_order

__all__ = ["call", "OPERATORS"]

_LIB = "axisops"


# ------------------------------------------------------------------ operator table

@dataclass(frozen=True)
class _Spec:
    """One registered operator: the NumPy-path function, its schema's parameters
    (named as the function's) and its results."""

    func: Callable[..., Any]
    params: str
    returns: str = "Tensor"
    #: keyword arguments the operator always passes (max_pool: its indices, which
    #: the backward needs; the call drops them where the user did not ask)
    fixed: tuple[tuple[str, Any], ...] = ()


def _g(name: str) -> Callable[..., Any]:
    return getattr(_grad, name)


_REDUCE = "Tensor x, int[]? axis, bool keepdims"
_WINDOW = "int[] kernel_size, int[] dilation, int[] padding, int[] stride, bool channels_last"

_SPECS: dict[str, _Spec] = {
    "sum": _Spec(_reduce.sum, f"{_REDUCE}, ScalarType? dtype"),
    "prod": _Spec(_reduce.prod, f"{_REDUCE}, ScalarType? dtype"),
    "mean": _Spec(_reduce.mean, f"{_REDUCE}, ScalarType? dtype"),
    "max": _Spec(_reduce.max, _REDUCE),
    "min": _Spec(_reduce.min, _REDUCE),
    "argmax": _Spec(_reduce.argmax, f"{_REDUCE}, bool select_last_index, ScalarType index_dtype"),
    "argmin": _Spec(_reduce.argmin, f"{_REDUCE}, bool select_last_index, ScalarType index_dtype"),
    "unravel": _Spec(_reduce.unravel, "Tensor idx, int[] shape, int[]? axis", "Tensor[]"),
    "cumsum": _Spec(_scan.cumsum, "Tensor x, int? axis, ScalarType? dtype, bool exclusive, "
                                  "bool reverse"),
    "cumprod": _Spec(_scan.cumprod, "Tensor x, int? axis, ScalarType? dtype, bool exclusive, "
                                    "bool reverse"),
    "cummax": _Spec(_scan.cummax, "Tensor x, int? axis, ScalarType index_dtype",
                    "(Tensor, Tensor)"),
    "cummin": _Spec(_scan.cummin, "Tensor x, int? axis, ScalarType index_dtype",
                    "(Tensor, Tensor)"),
    "logcumsumexp": _Spec(_scan.logcumsumexp, "Tensor x, int? axis"),
    "take": _Spec(_gather.take, "Tensor x, Tensor indices, int? axis, str mode, Scalar fill_value"),
    "take_along_axis": _Spec(_gather.take_along_axis,
                             "Tensor x, Tensor indices, int? axis, str mode, Scalar fill_value"),
    "gather_nd": _Spec(_gather.gather_nd, "Tensor x, Tensor indices, int batch_dims"),
    "scatter": _Spec(_gather.scatter, "Tensor x, Tensor indices, Tensor updates, int axis, "
                                      "str? reduce"),
    "unfold": _Spec(_window.unfold, f"Tensor x, {_WINDOW}"),
    "fold": _Spec(_window.fold, f"Tensor cols, int[] output_size, {_WINDOW}"),
    "grad_sum": _Spec(_g("sum"), "Tensor g, int[] x_shape, int[]? axis, bool keepdims"),
    "grad_mean": _Spec(_g("mean"), "Tensor g, int[] x_shape, int[]? axis, bool keepdims"),
    "grad_prod": _Spec(_g("prod"), "Tensor g, Tensor x, int[]? axis, bool keepdims"),
    "grad_max": _Spec(_g("max"), "Tensor g, Tensor x, int[]? axis, bool keepdims"),
    "grad_min": _Spec(_g("min"), "Tensor g, Tensor x, int[]? axis, bool keepdims"),
    "grad_cumsum": _Spec(_g("cumsum"), "Tensor g, int[] x_shape, int? axis, bool exclusive, "
                                       "bool reverse"),
    "grad_cumprod": _Spec(_g("cumprod"), "Tensor g, Tensor x, int? axis, bool exclusive, "
                                         "bool reverse"),
    "grad_cummax": _Spec(_g("cummax"), "Tensor g, Tensor indices, int[] x_shape, int? axis"),
    "grad_cummin": _Spec(_g("cummin"), "Tensor g, Tensor indices, int[] x_shape, int? axis"),
    "grad_logcumsumexp": _Spec(_g("logcumsumexp"), "Tensor g, Tensor x, int? axis"),
    "grad_take": _Spec(_g("take"), "Tensor g, Tensor indices, int[] x_shape, int? axis, str mode"),
    "grad_take_along_axis": _Spec(_g("take_along_axis"),
                                  "Tensor g, Tensor indices, int[] x_shape, int? axis, str mode"),
    "grad_gather_nd": _Spec(_g("gather_nd"),
                            "Tensor g, Tensor indices, int[] x_shape, int batch_dims"),
    "grad_scatter": _Spec(_g("scatter"), "Tensor g, Tensor x, Tensor indices, Tensor updates, "
                                         "int axis, str? reduce", "(Tensor, Tensor)"),
    "grad_unfold": _Spec(_g("unfold"), f"Tensor g, int[] x_shape, {_WINDOW}"),
    "grad_fold": _Spec(_g("fold"), f"Tensor g, {_WINDOW}"),
}

# Pooling (axisops.pool) and its gradients.
_POOL = "int[] kernel_size, int[]? stride"
_POOLED = "int[] padding, bool ceil_mode, bool channels_last"
_SPECS.update({
    "max_pool": _Spec(_pool.max_pool, f"Tensor x, {_POOL}, int[] dilation, {_POOLED}",
                      "(Tensor, Tensor)", (("return_indices", True),)),
    "avg_pool": _Spec(_pool.avg_pool, f"Tensor x, {_POOL}, {_POOLED}, bool count_include_pad"),
    "grad_max_pool": _Spec(_g("max_pool"), f"Tensor g, Tensor indices, int[] x_shape, {_POOL}, "
                                           f"int[] dilation, {_POOLED}"),
    "grad_avg_pool": _Spec(_g("avg_pool"), f"Tensor g, int[] x_shape, {_POOL}, {_POOLED}, "
                                           "bool count_include_pad"),
})

# The moving windows (axisops.moving) and their gradients.
_MOVING = "int window, int axis, int? min_count"
_SPECS.update({
    **{name: _Spec(getattr(_moving, name), f"Tensor x, {_MOVING}")
       for name in ("moving_sum", "moving_mean", "moving_max", "moving_min", "moving_argmax",
                    "moving_argmin")},
    **{name: _Spec(getattr(_moving, name), f"Tensor x, {_MOVING}, float ddof")
       for name in ("moving_var", "moving_std")},
    **{f"grad_{name}": _Spec(_g(name), f"Tensor g, Tensor x, {_MOVING}")
       for name in ("moving_sum", "moving_mean", "moving_max", "moving_min")},
    **{f"grad_{name}": _Spec(_g(name), f"Tensor g, Tensor x, {_MOVING}, float ddof")
       for name in ("moving_var", "moving_std")},
})

# The missing-value operators (axisops.missing) and their gradients.
_NAN_ARG = f"{_REDUCE}, bool select_last_index, ScalarType index_dtype, int? all_nan_index"
_NAN_SCAN = "Tensor x, int? axis, ScalarType? dtype, bool exclusive, bool reverse"
_SPECS.update({
    **{name: _Spec(getattr(_missing, name), f"{_REDUCE}, ScalarType? dtype")
       for name in ("nansum", "nanprod", "nanmean")},
    **{name: _Spec(getattr(_missing, name), f"{_REDUCE}, ScalarType? dtype, float ddof")
       for name in ("var", "std", "nanvar", "nanstd")},
    **{name: _Spec(getattr(_missing, name), _REDUCE) for name in ("nanmax", "nanmin", "count")},
    **{name: _Spec(getattr(_missing, name), _NAN_ARG) for name in ("nanargmax", "nanargmin")},
    **{name: _Spec(getattr(_missing, name), _NAN_SCAN) for name in ("nancumsum", "nancumprod")},
    **{f"grad_{name}": _Spec(_g(name), "Tensor g, Tensor x, int[]? axis, bool keepdims")
       for name in ("nansum", "nanmean", "nanprod", "nanmax", "nanmin")},
    **{f"grad_{name}": _Spec(_g(name), "Tensor g, Tensor x, int[]? axis, bool keepdims, "
                                       "float ddof")
       for name in ("var", "std", "nanvar", "nanstd")},
    **{f"grad_{name}": _Spec(_g(name), "Tensor g, Tensor x, int? axis, bool exclusive, "
                                       "bool reverse")
       for name in ("nancumsum", "nancumprod")},
})
# The order statistics (axisops.order, axisops.moving_order) and their gradients. A
# quantile's q goes through the schema as a list and whether it was a Python number
# (NumPy's weak q: a float32 input keeps float32), the operator's function puts it back.
_ORDER_INDEX = "ScalarType index_dtype"
_QUANTILE = "float[] q, bool scalar_q, int[]? axis, str method, bool keepdims"
_SPECS.update({
    "sort": _Spec(_order.sort, "Tensor x, int? axis, bool descending"),
    "argsort": _Spec(_order.argsort, f"Tensor x, int? axis, bool descending, {_ORDER_INDEX}"),
    "top_k": _Spec(_order.top_k, f"Tensor x, int k, int? axis, str mode, bool sorted, "
                                 f"{_ORDER_INDEX}", "(Tensor, Tensor)"),
    "partition": _Spec(_order.partition, "Tensor x, int[] kth, int? axis"),
    "argpartition": _Spec(_order.argpartition, f"Tensor x, int[] kth, int? axis, {_ORDER_INDEX}"),
    "kthvalue": _Spec(_order.kthvalue, f"Tensor x, int k, int? axis, bool keepdims, "
                                       f"{_ORDER_INDEX}", "(Tensor, Tensor)"),
    "median": _Spec(_order.median, _REDUCE),
    "nanmedian": _Spec(_order.nanmedian, _REDUCE),
    "quantile": _Spec(_order.quantile_of_list, f"Tensor x, {_QUANTILE}"),
    "nanquantile": _Spec(_order.nanquantile_of_list, f"Tensor x, {_QUANTILE}"),
    "rank": _Spec(_order.rank, "Tensor x, int? axis, str method"),
    "moving_median": _Spec(_moving_order.moving_median, f"Tensor x, {_MOVING}"),
    "moving_quantile": _Spec(_moving_order.moving_quantile,
                             "Tensor x, int window, float q, int axis, int? min_count"),
    "moving_rank": _Spec(_moving_order.moving_rank, f"Tensor x, {_MOVING}"),
    "grad_sort": _Spec(_g("sort"), "Tensor g, Tensor x, int? axis, bool descending"),
    "grad_top_k": _Spec(_g("top_k"), "Tensor g, Tensor indices, int[] x_shape, int? axis"),
    "grad_kthvalue": _Spec(_g("kthvalue"), "Tensor g, Tensor indices, int[] x_shape, int? axis, "
                                           "bool keepdims"),
    "grad_partition": _Spec(_g("partition"), "Tensor g, Tensor x, int[] kth, int? axis"),
    "grad_median": _Spec(_g("median"), "Tensor g, Tensor x, int[]? axis, bool keepdims"),
    "grad_nanmedian": _Spec(_g("nanmedian"), "Tensor g, Tensor x, int[]? axis, bool keepdims"),
    "grad_quantile": _Spec(_grad_order.quantile_of_list, f"Tensor g, Tensor x, {_QUANTILE}"),
    "grad_nanquantile": _Spec(_grad_order.nanquantile_of_list, f"Tensor g, Tensor x, {_QUANTILE}"),
    "grad_moving_median": _Spec(_g("moving_median"), f"Tensor g, Tensor x, {_MOVING}"),
    "grad_moving_quantile": _Spec(_g("moving_quantile"), "Tensor g, Tensor x, int window, "
                                                         "float q, int axis, int? min_count"),
})
#: Operators with no CUDA kernel yet (on CUDA tensors their registered CUDA kernel
#: raises NotImplementedError, ``axisops.cuda.run``, naming the way to the CPU):
#: none now (the order statistics have theirs, ``axisops.cuda.order``).
NO_CUDA_KERNEL: frozenset[str] = frozenset()


def _param_types(spec: _Spec) -> dict[str, str]:
    return {p.split()[-1]: p.split()[0] for p in spec.params.split(", ")}


#: Each operator's schema parameters, name -> type, in order.
_TYPES = {name: _param_types(spec) for name, spec in _SPECS.items()}


# ------------------------------------------------- tensors <-> NumPy, in the operator

#: torch dtype -> NumPy dtype, built at import (never inside a fake-tensor trace,
#: where every new tensor is fake and cannot be viewed as an array).
_NUMPY_OF: dict[torch.dtype, np.dtype] = {
    t: torch.empty(0, dtype=t).numpy().dtype
    for t in (torch.bool, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
              torch.uint16, torch.uint32, torch.uint64, torch.float16, torch.float32,
              torch.float64, torch.complex64, torch.complex128)}
_TORCH_OF: dict[np.dtype, torch.dtype] = {n: t for t, n in _NUMPY_OF.items()}


def _numpy_dtype(dtype: torch.dtype) -> np.dtype:
    try:
        return _NUMPY_OF[dtype]
    except KeyError:
        raise TypeError(f"axisops: unsupported dtype {dtype}") from None


def _torch_dtype(dtype) -> torch.dtype:
    """A NumPy dtype (anything ``numpy.dtype`` takes) or a ``torch.dtype`` as ``torch.dtype``."""
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        return _TORCH_OF[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"axisops: dtype {np.dtype(dtype)} has no torch equivalent") from None


def _numpy_call(name: str, args: tuple, array: Callable[[torch.Tensor], Any],
                run: Callable[..., Any] | None = None) -> Any:
    """The NumPy-path function of operator *name* on its arguments, each tensor
    turned into an array by *array* (or, with *run*, ``run(function, kwargs)``)."""
    spec = _SPECS[name]
    kwargs: dict[str, Any] = {}
    for (n, kind), value in zip(_TYPES[name].items(), args):
        if value is None:
            kwargs[n] = None
        elif kind == "Tensor":
            kwargs[n] = array(value)
        elif kind == "ScalarType":
            kwargs[n] = _numpy_dtype(value)
        elif kind in ("int[]", "int[]?"):
            kwargs[n] = tuple(int(v) for v in value)
        else:
            kwargs[n] = value
    if "padding" in kwargs:  # (begin, end) pairs, flattened for the schema
        flat = kwargs["padding"]
        kwargs["padding"] = tuple(zip(flat[::2], flat[1::2]))
    kwargs.update(spec.fixed)
    return spec.func(**kwargs) if run is None else run(spec.func, kwargs)


def _results(name: str, result: Any, convert: Callable[[Any], Any]) -> Any:
    returns = _SPECS[name].returns
    if returns == "Tensor":
        return convert(result)
    converted = [convert(r) for r in result]
    return converted if returns == "Tensor[]" else tuple(converted)


def _run(name: str, *args):
    """The implementation of operator *name*: the NumPy path on tensor views. A
    result that may share memory with an input is copied (a registered operator's
    results never alias its inputs); the others are wrapped without a copy."""
    inputs: list[np.ndarray] = []

    def view(t: torch.Tensor) -> np.ndarray:
        inputs.append(_array(t))
        return inputs[-1]

    return _results(name, _numpy_call(name, args, view), lambda r: _tensor_of(r, inputs))


def _run_cuda(name: str, *args):
    """The CUDA kernel of operator *name*: the device implementation
    (:func:`axisops.cuda.run`) on the CUDA tensors themselves; its results are new
    tensors on their device (never views of an input)."""
    from . import cuda as _cuda

    def view(t: torch.Tensor) -> torch.Tensor:
        return t.resolve_conj().resolve_neg() if t.is_conj() or t.is_neg() else t

    result = _numpy_call(name, args, view, lambda func, kwargs: _cuda.run(func, (), kwargs))
    return _results(name, result, lambda r: r)


def _array(t: torch.Tensor) -> np.ndarray:
    """A CPU tensor's memory as an array (conjugate and negative views resolved)."""
    try:
        return t.numpy()  # refuses a tensor with its conjugate or negative bit set
    except RuntimeError:
        if not (t.is_conj() or t.is_neg()):
            raise
    return t.resolve_conj().resolve_neg().numpy()


def _tensor_of(value: Any, inputs: list[np.ndarray]) -> torch.Tensor:
    """A NumPy result as a tensor without a copy, unless it may share memory with an
    input (a registered operator's results never alias its inputs)."""
    if type(value) is np.ndarray and value.base is None:  # the common result: its own memory
        return torch.from_numpy(value)
    array = np.asarray(value)
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    # memory an array of the call owns (its root's base is None) is no input's: an
    # input's array is based on its tensor
    if root.base is not None and any(np.may_share_memory(array, a) for a in inputs):
        array = array.copy()
    return torch.from_numpy(array)


def _fake(name: str, *args):
    """Shapes and dtypes of operator *name*'s results: the NumPy path on
    zero-stride stand-ins of the inputs (see the module docstring)."""
    like = next(a for a in args if isinstance(a, torch.Tensor))

    def stand_in(t: torch.Tensor) -> np.ndarray:
        shape = tuple(int(s) for s in t.shape)
        return np.lib.stride_tricks.as_strided(np.zeros(1, _numpy_dtype(t.dtype)), shape,
                                               (0,) * len(shape), writeable=False)

    def empty(value: Any) -> torch.Tensor:
        array = np.asarray(value)
        return like.new_empty(array.shape, dtype=_torch_dtype(array.dtype))

    return _results(name, _numpy_call(name, args, stand_in), empty)


def _define(name: str) -> Any:
    spec = _SPECS[name]
    schema = f"({spec.params}) -> {spec.returns}"
    op = torch.library.custom_op(f"{_LIB}::{name}", functools.partial(_run, name),
                                 mutates_args=(), schema=schema)
    op.register_fake(functools.partial(_fake, name))
    op.register_kernel("cuda", functools.partial(_run_cuda, name))
    return op


#: The registered operators, by name (``torch.ops.axisops.<name>`` too).
OPERATORS: dict[str, Any] = {name: _define(name) for name in _SPECS}


def _op(name: str):
    return getattr(torch.ops.axisops, name)


# ------------------------------------------------------------------------ autograd

_SAVED = object()  # marks a tensor argument kept by save_for_backward


def _setup_context(ctx, inputs, output) -> None:
    """Keep what the backward needs: the tensor inputs and cummax/cummin's indices
    through ``save_for_backward`` (a result kept as a plain attribute would make a
    reference cycle through its ``grad_fn``: freed only by the garbage collector,
    so every call would write fresh memory, 25x slower for large results here), the
    other arguments as they are."""
    ctx.arguments = [_SAVED if isinstance(a, torch.Tensor) else a for a in inputs]
    tensors = [a for a in inputs if isinstance(a, torch.Tensor)]
    ctx.indices = isinstance(output, tuple) and len(output) == 2 and not output[1].is_floating_point() \
        and not output[1].is_complex()
    ctx.save_for_backward(*tensors, *([output[1]] if ctx.indices else []))


def _saved(ctx) -> tuple[list, Any]:
    """(the operator's arguments, the saved indices result or None)."""
    saved = list(ctx.saved_tensors)
    indices = saved.pop() if ctx.indices else None
    saved.reverse()
    return [saved.pop() if a is _SAVED else a for a in ctx.arguments], indices


def _grads(name: str, ctx, *grads):
    """The gradient of every input of operator *name* (None for non-tensors)."""
    inputs, saved_indices = _saved(ctx)
    args = dict(zip(_TYPES[name], inputs))
    out = {n: None for n in args}
    if name in ("sum", "mean"):
        out["x"] = _op(f"grad_{name}")(grads[0], list(args["x"].shape), args["axis"],
                                       args["keepdims"])
    elif name in ("prod", "max", "min", "nansum", "nanmean", "nanprod", "nanmax", "nanmin"):
        out["x"] = _op(f"grad_{name}")(grads[0], args["x"], args["axis"], args["keepdims"])
    elif name in ("var", "std", "nanvar", "nanstd"):
        out["x"] = _op(f"grad_{name}")(grads[0], args["x"], args["axis"], args["keepdims"],
                                       args["ddof"])
    elif name in ("nancumsum", "nancumprod"):
        out["x"] = _op(f"grad_{name}")(grads[0], args["x"], args["axis"], args["exclusive"],
                                       args["reverse"])
    elif name == "cumsum":
        out["x"] = _op("grad_cumsum")(grads[0], list(args["x"].shape), args["axis"],
                                      args["exclusive"], args["reverse"])
    elif name == "cumprod":
        out["x"] = _op("grad_cumprod")(grads[0], args["x"], args["axis"], args["exclusive"],
                                       args["reverse"])
    elif name in ("cummax", "cummin"):
        out["x"] = _op(f"grad_{name}")(grads[0], saved_indices, list(args["x"].shape),
                                       args["axis"])
    elif name == "logcumsumexp":
        out["x"] = _op("grad_logcumsumexp")(grads[0], args["x"], args["axis"])
    elif name in ("take", "take_along_axis"):
        out["x"] = _op(f"grad_{name}")(grads[0], args["indices"], list(args["x"].shape),
                                       args["axis"], args["mode"])
    elif name == "gather_nd":
        out["x"] = _op("grad_gather_nd")(grads[0], args["indices"], list(args["x"].shape),
                                         args["batch_dims"])
    elif name == "scatter":
        out["x"], out["updates"] = _op("grad_scatter")(
            grads[0], args["x"], args["indices"], args["updates"], args["axis"], args["reduce"])
    elif name == "unfold":
        out["x"] = _op("grad_unfold")(grads[0], list(args["x"].shape), *_window_args(args))
    elif name == "fold":
        out["cols"] = _op("grad_fold")(grads[0], *_window_args(args))
    elif name == "max_pool":
        out["x"] = _op("grad_max_pool")(grads[0], saved_indices, list(args["x"].shape),
                                        *_pool_args(args))
    elif name == "avg_pool":
        out["x"] = _op("grad_avg_pool")(grads[0], list(args["x"].shape), *_pool_args(args))
    elif name in ("moving_sum", "moving_mean", "moving_max", "moving_min"):
        out["x"] = _op(f"grad_{name}")(grads[0], args["x"], args["window"], args["axis"],
                                       args["min_count"])
    elif name in ("moving_var", "moving_std"):
        out["x"] = _op(f"grad_{name}")(grads[0], args["x"], args["window"], args["axis"],
                                       args["min_count"], args["ddof"])
    elif name == "sort":
        out["x"] = _op("grad_sort")(grads[0], args["x"], args["axis"], args["descending"])
    elif name == "partition":
        out["x"] = _op("grad_partition")(grads[0], args["x"], args["kth"], args["axis"])
    elif name == "top_k":
        out["x"] = _op("grad_top_k")(grads[0], saved_indices, list(args["x"].shape),
                                     args["axis"])
    elif name == "kthvalue":
        out["x"] = _op("grad_kthvalue")(grads[0], saved_indices, list(args["x"].shape),
                                        args["axis"], args["keepdims"])
    elif name in ("median", "nanmedian"):
        out["x"] = _op(f"grad_{name}")(grads[0], args["x"], args["axis"], args["keepdims"])
    elif name in ("quantile", "nanquantile"):
        out["x"] = _op(f"grad_{name}")(grads[0], args["x"], args["q"], args["scalar_q"],
                                       args["axis"], args["method"], args["keepdims"])
    elif name == "moving_median":
        out["x"] = _op("grad_moving_median")(grads[0], args["x"], args["window"], args["axis"],
                                             args["min_count"])
    elif name == "moving_quantile":
        out["x"] = _op("grad_moving_quantile")(grads[0], args["x"], args["window"], args["q"],
                                               args["axis"], args["min_count"])
    elif name == "grad_avg_pool":  # linear in g: its gradient is the pooling of gg
        out["g"] = _op("avg_pool")(grads[0], *_pool_args(args))
    # the gradients that are linear in g: their own gradient is the forward operator
    elif name in ("grad_sum", "grad_mean"):
        out["g"] = _op(name[5:])(grads[0], args["axis"], args["keepdims"], None)
    elif name == "grad_cumsum":
        out["g"] = _op("cumsum")(grads[0], args["axis"], None, args["exclusive"], args["reverse"])
    elif name in ("grad_cummax", "grad_cummin"):
        gg = grads[0] if args["axis"] is not None else grads[0].reshape(-1)
        out["g"] = _op("take_along_axis")(gg, args["indices"],
                                          0 if args["axis"] is None else args["axis"], "raise", 0)
    elif name in ("grad_take", "grad_take_along_axis"):  # "fill" positions get 0
        out["g"] = _op(name[5:])(grads[0], args["indices"], args["axis"], args["mode"], 0)
    elif name == "grad_gather_nd":
        out["g"] = _op("gather_nd")(grads[0], args["indices"], args["batch_dims"])
    elif name == "grad_scatter":  # (g, g at the destinations) for reduce="add"
        if args["reduce"] != "add":
            raise RuntimeError(f"axisops: the gradient of scatter with reduce="
                               f"{args['reduce']!r} is not differentiable again")
        ggx = grads[0] if grads[0] is not None else torch.zeros_like(args["g"])
        ggu = grads[1] if grads[1] is not None else torch.zeros_like(args["updates"])
        out["g"] = _op("scatter")(ggx, args["indices"], ggu, args["axis"], "add")
    elif name == "grad_unfold":
        out["g"] = _op("unfold")(grads[0], *_window_args(args))
    elif name == "grad_fold":
        spatial = len(args["kernel_size"])
        size = list(args["g"].shape[-spatial - 1:-1] if args["channels_last"]
                    else args["g"].shape[-spatial:])
        out["g"] = _op("fold")(grads[0], size, *_window_args(args))
    return tuple(out.values())


def _pool_args(args: dict) -> tuple:
    """The pooling options of *args* in the schema's order (dilation for max only)."""
    names = ["kernel_size", "stride", "dilation", "padding", "ceil_mode", "channels_last",
             "count_include_pad"]
    return tuple(args[n] for n in names if n in args)


def _window_args(args: dict) -> tuple:
    return (args["kernel_size"], args["dilation"], args["padding"], args["stride"],
            args["channels_last"])


#: Operators whose gradient is registered (the others have no gradient: integer
#: results, or a gradient that is not differentiable again).
DIFFERENTIABLE = ("sum", "mean", "prod", "max", "min", "cumsum", "cumprod", "cummax", "cummin",
                  "logcumsumexp", "take", "take_along_axis", "gather_nd", "scatter", "unfold",
                  "fold", "grad_sum", "grad_mean", "grad_cumsum", "grad_cummax", "grad_cummin",
                  "grad_take", "grad_take_along_axis", "grad_gather_nd", "grad_scatter",
                  "grad_unfold", "grad_fold", "nansum", "nanmean", "nanprod", "nanmax", "nanmin",
                  "var", "std", "nanvar", "nanstd", "nancumsum", "nancumprod", "max_pool",
                  "avg_pool", "grad_avg_pool", "moving_sum", "moving_mean", "moving_var",
                  "moving_std", "moving_max", "moving_min", "sort", "partition", "top_k",
                  "kthvalue", "median", "nanmedian", "quantile", "nanquantile", "moving_median",
                  "moving_quantile")

for _name in DIFFERENTIABLE:
    OPERATORS[_name].register_autograd(functools.partial(_grads, _name),
                                       setup_context=_setup_context)


# ---------------------------------------------------- the call: user args -> operator

_NAMES = {_dispatch.numpy_function(s.func): n for n, s in _SPECS.items()}
# the quantiles' operators run a wrapper taking q as a list (see _QUANTILE)
_NAMES.update({_dispatch.numpy_function(f): n for n, f in (
    ("quantile", _order.quantile), ("nanquantile", _order.nanquantile),
    ("grad_quantile", _grad.quantile), ("grad_nanquantile", _grad.nanquantile))})


_SIGNATURES = {func: inspect.signature(func) for func in _NAMES}


def call(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` with tensors: the registered operator of *func*.

    Where neither autograd nor a compiler needs to see the call (no input requires
    grad, or grad mode is off; not tracing; plain tensors), the operator's
    implementation runs directly on the user's arguments: the same NumPy path and
    the same results, without the dispatcher's ~8 us and the argument
    normalisation's ~6 us on every call.
    """
    func = _dispatch.numpy_function(func)
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if kwargs:
        tensors += [v for v in kwargs.values() if isinstance(v, torch.Tensor)]
    plain, on_cuda, needs_grad = True, False, False
    for t in tensors:  # attribute tests only: t.device builds an object (0.25 us)
        if t.is_cuda:
            on_cuda = True
        elif not t.is_cpu:
            raise TypeError(f"{_NAMES[func]}: tensors on {t.device.type} are not supported "
                            "yet (only CPU and CUDA tensors)")
        if t.dtype not in _NUMPY_OF:
            raise TypeError(f"{_NAMES[func].replace('grad_', 'grad.')}: unsupported dtype "
                            f"{t.dtype}")
        plain = plain and type(t) is torch.Tensor
        needs_grad = needs_grad or t.requires_grad
    if plain and not (needs_grad and torch.is_grad_enabled()) and not torch.compiler.is_compiling():
        if on_cuda:
            from . import cuda as _cuda

            return _cuda.run(func, args, kwargs)
        return _eager(func, args, kwargs)
    name = _NAMES[func]
    bound = _SIGNATURES[func].bind(*args, **kwargs)
    bound.apply_defaults()
    given = dict(bound.arguments)
    types = _TYPES[name]
    first = next(iter(types))
    like = given[first] if isinstance(given[first], torch.Tensor) else tensors[0]
    op_args = _normalise(name, given, types, like)
    result = _op(name)(*op_args)
    if name in ("cummax", "cummin", "top_k", "kthvalue"):
        return _scan.ValuesIndices(*result)
    if name == "unravel":
        return tuple(result)
    if name == "max_pool" and not given["return_indices"]:
        return result[0]
    return result


_PLAIN_OPTIONS = (type(None), bool, int, float, str)


def call_cpu(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """:func:`call` for a plain CPU tensor as the first argument (the dispatch
    wrappers tested its type and device): when every tensor among the arguments
    is a plain CPU one (strided, of a NumPy dtype, needing no gradient), no other
    ``torch`` object is and nothing is being traced, the NumPy path on their
    arrays, checked in as few steps as possible (a (16, 64) sum: 5.0 -> 3.9 us
    here, of which the NumPy path takes 1.4; a take of its columns at an index
    tensor 12.8 -> 5.0, AMD EPYC Zen 4); else :func:`call`."""
    x = args[0]
    if (x.requires_grad and torch.is_grad_enabled()) or x.dtype not in _NUMPY_OF \
            or torch.compiler.is_compiling():
        return call(func, args, kwargs)
    tensors = False
    for value in (*args[1:], *kwargs.values()) if kwargs else args[1:]:
        kind = type(value)
        if kind in _PLAIN_OPTIONS or kind is type:  # (a type: a NumPy dtype's, index_dtype)
            continue
        if kind is torch.Tensor:
            if not (value.is_cpu and value.layout is torch.strided and value.dtype in _NUMPY_OF
                    and not (value.requires_grad and torch.is_grad_enabled())):
                return call(func, args, kwargs)
            tensors = True
        elif not (kind is tuple and all(type(v) is int for v in value)) and not (
                isinstance(value, (type, np.dtype))):  # axes; NumPy dtypes (index_dtype)
            return call(func, args, kwargs)
    array = _array(x)
    if tensors:  # the other tensors as arrays too
        inputs = [array]
        rest = [_eager_argument(v, inputs) if type(v) is torch.Tensor else v for v in args[1:]]
        options = {k: _eager_argument(v, inputs) if type(v) is torch.Tensor else v
                   for k, v in kwargs.items()}
        return _finished(func(array, *rest, **options), inputs)
    result = func(array, *args[1:], **kwargs)
    if type(result) is np.ndarray or isinstance(result, np.generic):
        return _tensor_of(result, [array])
    return _finished(result, [array])


def _eager(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """The NumPy path on the arguments, tensors viewed as arrays and ``torch.dtype``
    arguments as NumPy dtypes; every array of the result as a tensor. (Loops and
    ``type`` tests first: this is most of a small tensor call's own time.)"""
    inputs: list[np.ndarray] = []
    arrays = list(args)
    for i, value in enumerate(arrays):
        if type(value) is torch.Tensor or isinstance(value, (torch.Tensor, torch.dtype)):
            arrays[i] = _eager_argument(value, inputs)
    options = kwargs
    for k, value in kwargs.items():
        if value is not None and type(value) is not bool and isinstance(
                value, (torch.Tensor, torch.dtype)):
            if options is kwargs:
                options = dict(kwargs)
            options[k] = _eager_argument(value, inputs)
    return _finished(func(*arrays, **options), inputs)


def _finished(result: Any, inputs: list[np.ndarray]) -> Any:
    """The NumPy path's *result* as tensors (see :func:`_tensor_of`)."""
    if type(result) is np.ndarray or isinstance(result, np.generic):
        return _tensor_of(result, inputs)
    if isinstance(result, _scan.ValuesIndices):
        return _scan.ValuesIndices(_tensor_of(result[0], inputs),  # type: ignore[arg-type]
                                   _tensor_of(result[1], inputs))  # type: ignore[arg-type]
    if isinstance(result, tuple):
        return tuple(_tensor_of(r, inputs) for r in result)
    return _tensor_of(result, inputs)


def _eager_argument(value: torch.Tensor | torch.dtype, inputs: list[np.ndarray]) -> Any:
    if isinstance(value, torch.dtype):
        return _numpy_dtype(value)
    inputs.append(_array(value))
    return inputs[-1]


def _normalise(name: str, given: dict, types: dict[str, str], like: torch.Tensor) -> list:
    """The operator's arguments from the user's (checked where the schema cannot
    carry what the NumPy path would reject)."""
    op = name.replace("grad_", "grad.")
    values: dict[str, Any] = {}
    for n, kind in types.items():
        v = given.get(n)
        if kind == "Tensor":
            if n == "indices" and not isinstance(v, torch.Tensor):  # the NumPy path's errors
                v = _indices.as_index_array(v, op)
            values[n] = _tensor(v, op)
        elif n == "axis" and kind == "int[]?":
            ndim = _ndim_for_axes(name, given, like)
            values[n] = None if v is None else list(_axes.normalize_axes(v, ndim, op))
        elif n == "axis" and kind == "int?":
            values[n] = None if v is None else _int_axis(v, op)
        elif n == "axis":
            values[n] = _int_axis(v, op)
        elif kind == "ScalarType":
            values[n] = None if v is None else _torch_dtype(v)
        elif n in ("x_shape", "shape"):
            values[n] = [int(s) for s in _window._ints(op, n, v, TypeError)]
        else:
            values[n] = v
    if "window" in types:  # the NumPy path's checks; a huge window as the int64 it means
        values["window"], values["min_count"] = _moving.check_window(
            op, given["window"], given["min_count"])
    if "scalar_q" in types:  # a quantile's q: a list, and whether it was a Python number
        q = given["q"]
        values["scalar_q"] = type(q) in (int, float)
        q = q.detach().cpu().numpy() if isinstance(q, torch.Tensor) else np.asarray(q)
        values["q"] = [float(v) for v in q.reshape(-1)] if q.ndim <= 1 else q.tolist()
    if "kth" in types:  # an int or ints (the NumPy path's TypeError for anything else)
        values["kth"] = _order.kth_list(given["kth"], op)
    if "all_nan_index" in types:  # one that does not fit: the NumPy path's OverflowError
        index_dtype = given["index_dtype"]
        if isinstance(index_dtype, torch.dtype):
            index_dtype = _numpy_dtype(index_dtype)
        _dtypes.check_all_nan_index(given["all_nan_index"], op,
                                    _dtypes.check_index_dtype(index_dtype, op))
    if name in _SHAPED:  # the NumPy path's geometry checks, before the schema's int64s
        _SHAPED[name](op, like.shape, given)
    if "kernel_size" in types:
        stride = given["stride"]  # pooling: None means kernel_size
        geo = _window._geometry(op, given["kernel_size"], given.get("dilation", 1),
                                given["padding"], given["kernel_size"] if stride is None
                                else stride)
        values["kernel_size"] = list(geo.kernel)
        if "dilation" in types:
            values["dilation"] = list(geo.dilation)
        values["stride"] = None if stride is None else list(geo.stride)
        values["padding"] = [p for pair in geo.padding for p in pair]
        if "output_size" in types:
            size = given["output_size"]
            values["output_size"] = [int(size)] * len(geo.kernel) if _window._is_int(size) \
                else [int(s) for s in size]
    return [values[n] for n in types]


def _pool_shape(op: str, shape, given: dict) -> None:
    _pool.PoolGeometry(op, shape, given["kernel_size"], given["stride"], given.get("dilation", 1),
                       given["padding"], given["ceil_mode"], given["channels_last"])


def _unfold_shape(op: str, shape, given: dict) -> None:
    _window.unfold_shape(shape, given["kernel_size"], given["dilation"], given["padding"],
                         given["stride"], given["channels_last"], op)


def _fold_shape(op: str, shape, given: dict) -> None:
    geo = _window._geometry(op, given["kernel_size"], given["dilation"], given["padding"],
                            given["stride"])
    geo.positions(op, _window._per_dim(op, "output_size", given["output_size"], geo.d, low=0))


#: The forward window operators whose geometry is checked against the input's shape
#: before the call: a huge padding, kernel or output size is the NumPy path's
#: ValueError, not the schema's refusal of an int beyond int64.
_SHAPED = {"max_pool": _pool_shape, "avg_pool": _pool_shape, "unfold": _unfold_shape,
           "fold": _fold_shape}


def _ndim_for_axes(name: str, given: dict, like: torch.Tensor) -> int:
    if name == "unravel":
        return len(given["shape"])
    if name in ("grad_sum", "grad_mean"):
        return len(given["x_shape"])
    return _tensor(given["x"], name).dim()


def _int_axis(axis, op: str) -> int:
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, (bool, np.bool_)):
        return int(axis)
    raise TypeError(f"{op}: axis must be an int or None, got {axis!r}")


def _tensor(value, op: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        if value.dtype in (torch.bfloat16, torch.complex32) or (value.dtype.is_floating_point \
                and value.dtype.itemsize == 1):
            raise TypeError(f"{op}: unsupported dtype {value.dtype}")
        return value
    return torch.from_numpy(np.asarray(value))

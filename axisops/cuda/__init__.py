"""axisops on CUDA arrays: numba-cuda kernels on the input's device and stream.

``axisops._dispatch`` sends a call whose first array lives on a CUDA device here
(PyTorch CUDA tensors, CuPy arrays, anything with ``__cuda_array_interface__``;
under ``NUMBA_ENABLE_CUDASIM=1``, the simulator's device arrays). The device layer
(:mod:`axisops.cuda._device`) reads the input zero-copy, launches on its stream,
and allocates results of its own type on its device.

* Reductions (:mod:`axisops.cuda.reduce`): sum, prod, mean, max, min, argmax,
  argmin over any axes, keepdims, select_last_index, the NumPy path's dtypes
  (bool, integers, float16/32/64). The loop order follows the layout: a thread
  per output when outputs are adjacent in memory, a block per output (a tree in
  shared memory) when the reduced elements are; long reductions are cut into
  chunks finished by a second kernel in chunk order, so every run gives the same
  bits. max/min and the arg-operators are the CPU path's bits.
* Scans (:mod:`axisops.cuda.scan`): cumsum, cumprod (exclusive, reverse),
  cummax/cummin with indices (PyTorch's rule), logcumsumexp; a thread per lane
  along a strided axis, a block per row along the contiguous one, and an axis
  long against the number of lanes is tiled (tile totals, a scan of them, each
  tile from its carry-in), so cummax along a long single row uses the whole GPU.

* Gathers (:mod:`axisops.cuda.gather`): ``take``, ``take_along_axis``,
  ``gather_nd``, a thread per output element, every mode, ``mode="raise"``
  checked on the device with the CPU path's error.
* ``scatter`` (:mod:`axisops.cuda.scatter`): deterministic without atomics, each
  destination's updates applied in C order of the indices (the CPU path's bits):
  shared indices sorted once, a thread per lane, or a device merge sort by
  destination and a thread per run, by shape.
* ``unfold``, ``fold`` (:mod:`axisops.cuda.window`): gathers, a thread per
  output element; fold adds in increasing kernel index without atomics.
* ``max_pool``, ``avg_pool`` (:mod:`axisops.cuda.pool`): a thread per output
  element walks its window in the CPU's window order (the CPU's values, indices
  and mean bits).
* The moving windows (:mod:`axisops.cuda.moving`): moving_sum, moving_mean,
  moving_var, moving_std, moving_max, moving_min, moving_argmax,
  moving_argmin, a thread per output element walks its trailing window: the
  extremes and their indices the CPU's bits (ties to the latest); sums and
  means per window in float64, variances two passes per window in float64,
  equal to the CPU's running sums to rounding.
* The missing-value operators (:mod:`axisops.cuda.missing`): nansum, nanprod,
  nancumsum, nancumprod by the same value and scan kernels, a NaN read as the
  identity in the same pass; nanmax, nanmin, nanargmax, nanargmin by the extreme
  kernels with NaN as no candidate (an all-NaN output flagged on the device: NaN
  with NumPy's warning, ``all_nan_index``, or the NumPy path's ValueError);
  count, nanmean (the skipping sum over the count, divided once in float64), and
  var, std, nanvar, nanstd in two passes (the mean, then the squared deviations).
* Every gradient of :mod:`axisops.grad` (:mod:`axisops.cuda.reduce_grad`,
  :mod:`axisops.cuda.scan_grad`, :mod:`axisops.cuda.gather_grad`,
  :mod:`axisops.cuda.window_grad`, :mod:`axisops.cuda.pool_grad`,
  :mod:`axisops.cuda.moving_grad`): sum/mean
  broadcasts and the max/min tie split (the CPU path's bits, from the device max
  and sum), prod/cumprod/logcumsumexp a thread per row or lane in index order
  without division (the CPU's kernels), cumsum by the device scan, cummax/cummin
  and the gathers' gradients a deterministic scatter-add, scatter's from its
  destinations, pooling's gathers per input element in the CPU's output order,
  the moving windows' gathers per input element in output order (max/min the
  CPU's bits, the others to rounding);
  the missing-value operators' (:mod:`axisops.cuda.missing_grad`) from their
  plain twins' and the device forwards, zero at each NaN.
* The order statistics (:mod:`axisops.cuda.order`, :mod:`axisops.cuda.moving_order`,
  gradients :mod:`axisops.cuda.order_grad`): the CPU's order keys, ties by
  position (the stable order), the CPU's bits: lanes up to 2048 sorted in one
  block's shared memory (bitonic), longer ones as such tiles then merge passes;
  kthvalue and the places of the medians and quantiles by radix select on long
  lanes (their NumPy arithmetic then on the host, on the selected elements);
  partition and top_k by a selection and a block per lane writing in lane order;
  the moving ones a thread per output counting ranks in its window
  (O(window**2)); gradients from the device positions, put or added in the CPU's
  order without atomics.

PyTorch tensors that autograd or ``torch.compile`` must see go through the
registered operators of :mod:`axisops.torch`, whose CUDA kernel is :func:`run`.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as _np

# numba-cuda 0.30 registers an overload of np.row_stack when its target first
# compiles (numba_cuda/numba/cuda/np/arrayobj.py), unguarded; NumPy 2.5 removed that
# alias of np.vstack, so every kernel failed with AttributeError on the first real GPU
# run (numba itself guards it). Until numba-cuda guards it too, the alias is put back.
if not hasattr(_np, "row_stack"):
    _np.row_stack = _np.vstack

from .. import _dispatch
from ._device import device_index as _device_index
from ._device import is_cuda_array

__all__ = ["is_cuda_array", "call", "OPERATORS"]


#: The modules of device operators. Each stands in for the NumPy-path module its
#: ``NUMPY_MODULE`` names (``axisops.cuda.reduce`` for ``axisops.reduce`` when it
#: names none), with the functions in its ``__all__``.
_MODULES = ("reduce", "scan", "gather", "scatter", "gather_grad", "window", "window_grad",
            "reduce_grad", "scan_grad", "missing", "missing_grad", "pool", "pool_grad", "moving",
            "moving_grad", "order", "moving_order", "order_grad", "order_grad_lists")


def _operators() -> dict[tuple[str, str], Callable[..., Any]]:
    import importlib

    table = {}
    for short in _MODULES:
        m = importlib.import_module(f"{__name__}.{short}")
        numpy_module = getattr(m, "NUMPY_MODULE", f"axisops.{short}")
        table.update({(numpy_module, name): getattr(m, name) for name in m.__all__})
    return table


#: The device implementation of each NumPy-path function, by (module, name);
#: filled on the first CUDA call (numba-cuda is imported then, not before).
OPERATORS: dict[tuple[str, str], Callable[..., Any]] = {}


def call(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` with a CUDA array first: on its device.

    PyTorch tensors that autograd must see (one requires grad and grad mode is
    on), and calls that ``torch.compile`` traces, go through the registered
    operator (:mod:`axisops.torch`), whose CUDA kernel comes back to :func:`run`."""
    if _needs_torch_operator(args, kwargs):
        from .. import torch as _torch

        return _torch.call(func, args, kwargs)
    return run(func, args, kwargs)


def run(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """The device implementation of *func* on these arguments, on the device of the
    first CUDA array among them."""
    device = _BY_FUNCTION.get(func)
    if device is None:
        device = _BY_FUNCTION[func] = device_operator(func)
    first = args[0] if args and is_cuda_array(args[0]) else next(
        (a for a in (*args, *kwargs.values()) if is_cuda_array(a)), None)
    index = None if first is None else _device_index(first)
    if index is None:
        return device(*args, **kwargs)
    from numba import cuda

    with cuda.gpus[index]:  # launch where the data is, not on the current device
        return device(*args, **kwargs)


def device_operator(func: Callable[..., Any]) -> Callable[..., Any]:
    """The device implementation of the public (or NumPy-path) function *func*."""
    if not OPERATORS:
        OPERATORS.update(_operators())
    numpy_func = _dispatch.numpy_function(func)
    device = OPERATORS.get((numpy_func.__module__, numpy_func.__name__))
    if device is None:
        raise NotImplementedError(
            f"axisops.{numpy_func.__name__} does not run on CUDA arrays yet; copy the "
            "arrays to the host (for example .cpu() or .get()) to use the CPU path")
    return device


#: :func:`device_operator` by function: a warm call looks its operator up once.
_BY_FUNCTION: dict[Callable[..., Any], Callable[..., Any]] = {}


def _needs_torch_operator(args: tuple, kwargs: dict) -> bool:
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
    if not tensors:
        return False
    if torch.compiler.is_compiling() or any(type(t) is not torch.Tensor for t in tensors):
        return True
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)

"""Which array type came in, and the way back to it.

Every public function (and every gradient) is wrapped by :func:`dispatched`. A
NumPy array as the first argument goes straight to the NumPy path: one ``type(x) is``
test, no import, no attribute look-up (the small-array call path stays what it
was). Anything else is sorted here:

* a ``torch.Tensor`` among the arguments: the call goes to :mod:`axisops.torch`,
  which runs the same NumPy path on zero-copy views of the tensors as a
  registered ``torch.library`` operator (autograd and ``torch.compile`` included)
  and gives tensors back;
* another object with ``__dlpack__`` (a JAX array, ...): read zero-copy with
  ``numpy.from_dlpack`` (on a CUDA device: as a PyTorch CUDA tensor, on the
  device), and each array of the result handed back through the ``from_dlpack``
  of the input's own library (its Array API namespace's);
* a ``dask.array.Array`` first: :mod:`axisops.dask`, which builds a lazy graph
  (operators without a dask version yet take the NumPy path, which computes it);
* a CUDA array first (a PyTorch CUDA tensor, a CuPy array, anything with
  ``__cuda_array_interface__``, the CUDA simulator's device arrays):
  :mod:`axisops.cuda`, on its device and stream;
* anything else (lists, scalars, NumPy subclasses): the NumPy path, which calls
  ``numpy.asarray``.

Torch is never imported here: a tensor can only exist once the program imported
torch, so ``sys.modules`` tells.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any, TypeVar, overload

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])


#: Parameters that take arrays after the first (checked for masks: see _refuse_masked).
_ARRAY_PARAMETERS = frozenset({"x", "indices", "updates", "idx", "cols"})


@overload
def dispatched(func: F) -> F: ...


@overload
def dispatched(func: None = None, *, scalar: Any = None,
               moving: dict | None = None) -> Callable[[F], F]: ...


def dispatched(func: F | None = None, *, scalar: Any = None, moving: dict | None = None) -> Any:
    """*func* (whose first parameter is its main array) for every array type.

    The wrapper is generated with *func*'s own parameters, so a NumPy call costs
    one type test and one plain call: about 0.05 us on a 2.4 us ``sum`` of a
    (16, 64) array, where a ``*args, **kwargs`` wrapper cost 0.25 us.

    With *scalar* (an ``axisops._fast.ScalarCall``, as ``@dispatched(scalar=...)``)
    the wrapper first offers a 1-D NumPy array reduced to one scalar to its
    compiled entry, in the wrapper's own frame: each Python frame between the
    call and the compiled loop cost ~0.1 us of a 0.5 us call.

    With *moving* (a dict of ``axisops._fast.MOVING_CALLS``, as
    ``@dispatched(moving=...)``: ``id(dtype)`` -> [1-D call, 2-D call, result
    dtype]) a moving window's wrapper first offers a 1-D or 2-D NumPy array, with
    *window*, *axis* and *min_count* ints in the ranges those calls take, and a new
    result array to its compiled call, which answers False for a call it does not
    take.
    """
    if func is None:
        return functools.partial(dispatched, scalar=scalar, moving=moving)
    params = list(inspect.signature(func).parameters.values())
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        raise TypeError(f"dispatched: {func.__name__} has *args, **kwargs or positional-only "
                        "parameters")
    first = params[0].name
    head: list[str] = []
    positional: list[str] = []
    keywords: list[str] = []
    for p in params:
        if p.kind is p.KEYWORD_ONLY:
            if not keywords:
                head.append("*")
            keywords.append(p.name)
        else:
            positional.append(p.name)
        head.append(p.name if p.default is p.empty else f"{p.name}=None")
    call = ", ".join(positional + [f"{k}={k}" for k in keywords])
    # the other array arguments are checked for masks on the NumPy path too
    masked = "".join(f" and not isinstance({n}, masked)" for n in positional[1:]
                     if n in _ARRAY_PARAMETERS)
    packed = (f"({''.join(n + ', ' for n in positional)}), "
              f"{{{', '.join(f'{k!r}: {k}' for k in keywords)}}}")
    fast = ""
    if scalar is not None:  # see the docstring; an entry answers None/False where it does not take x
        boxed = (f"positions[r] if r < {len(scalar.positions)} else int64(r)"
                 if scalar.positions else "f[1](r)")  # a NumPy scalar, as the function gives
        fast = (f"        if {scalar.condition}:\n"
                f"            ndim = {first}.ndim\n"
                f"            if ndim == 1 and (axis is None or (type(axis) is int and -1 <= axis <= 0)):\n"
                f"                f = scalar_entries.get(id({first}.dtype))\n"
                f"                if f is not None:\n"
                f"                    r = f[0]({first}, jit.PARALLEL_MIN_WORK{scalar.arguments})\n"
                f"                    if r is not None:\n"
                f"                        return {boxed}\n"
                f"            elif ndim == 2 and type(axis) is int and -2 <= axis < 2:\n"
                f"                f = lane_entries.get(id({first}.dtype))\n"
                f"                if f is not None:\n"
                f"                    out = empty({first}.shape[(axis & 1) ^ 1], f[1])\n"
                f"                    if f[0]({first}, axis, out, jit.PARALLEL_MIN_WORK"
                f"{scalar.lane_arguments}):\n"
                f"                        return out\n")
    if moving is not None:  # see the docstring
        fast = (f"        if type(window) is int and type(axis) is int and 1 <= window <= {1 << 62}"
                f" and -64 <= axis < 64 and (min_count is None or (type(min_count) is int"
                f" and 1 <= min_count <= window)):\n"
                f"            f = moving_calls.get(id({first}.dtype))\n"
                f"            if f is not None:\n"
                f"                ndim = {first}.ndim\n"
                f"                if 0 < ndim < 3:\n"
                f"                    g = f[ndim - 1]\n"
                # (a large array is not taken: no result made for nothing, whose free
                # and a second one's first touch cost a (1024, 4096) moving_mean 1.5 ms)
                f"                    if g is not None and {first}.size * moving_work < "
                f"jit.PARALLEL_MIN_WORK:\n"
                f"                        out = empty({first}.shape, f[2])\n"
                f"                        if g({first}, window, axis, min_count, "
                f"jit.PARALLEL_MIN_WORK, out):\n"
                f"                            return out\n")
    source = (f"def {func.__name__}({', '.join(head)}):\n"
              f"    if type({first}) is ndarray{masked}:\n"
              f"{fast}"
              f"        return func({call})\n"
              f"    if type({first}) is seen.tensor{masked} and {first}.is_cpu:\n"
              # with entries, the tensor's array comes back here to take them
              f"        return seen.torch_call("
              f"{func.__name__ if scalar or moving is not None else 'func'}, {packed})\n"
              f"    return foreign(func, {first}, {packed})\n")
    namespace: dict[str, Any] = {"ndarray": np.ndarray, "func": func, "foreign": _foreign,
                                 "masked": np.ma.MaskedArray, "seen": _seen}
    if scalar is not None:
        from . import _jit

        namespace.update(scalar_entries=scalar.entries, lane_entries=scalar.lanes, jit=_jit,
                         int64=np.int64, empty=np.empty, positions=scalar.positions)
    if moving is not None:
        from . import _jit
        from .kernels.moving_entry import WORK_PER_ELEMENT

        namespace.update(moving_calls=moving, jit=_jit, empty=np.empty,
                         moving_work=WORK_PER_ELEMENT)
    exec(source, namespace)  # the source is built above from a signature
    wrapper = namespace[func.__name__]
    wrapper.__defaults__ = func.__defaults__  # the real defaults replace the None above
    wrapper.__kwdefaults__ = func.__kwdefaults__
    functools.update_wrapper(wrapper, func)
    # the NumPy path is reachable as <wrapper>.__wrapped__: named so, it pickles by
    # reference (a dask task that calls it ships a name, not the function's code)
    func.__qualname__ = f"{func.__qualname__}.__wrapped__"
    return wrapper


class _Seen:
    """What the wrappers test before :func:`_foreign`: ``tensor`` is ``torch.Tensor``
    once a tensor has been seen (a class nothing is an instance of before), so that a
    plain CPU tensor goes straight to ``axisops.torch.call``: the look-ups of
    :func:`_foreign` (masks, dask, CUDA) cost 1.4 us of an 8.6 us (16, 64) sum."""

    tensor: type = type("NotYetATensor", (), {})  # no object is one of these
    torch_call: Callable[..., Any] | None = None
    #: Numba's and CuPy's device array classes once one has been seen, and
    #: ``axisops.cuda.call``: such an input skips the look-ups for dask and the
    #: CUDA interface (a warm call on the device is a few microseconds of Python)
    cuda_call: Callable[..., Any] | None = None

    def __init__(self) -> None:
        self.cuda_types: set[type] = set()


_seen = _Seen()


def numpy_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """The NumPy path under a :func:`dispatched` function."""
    return getattr(func, "__wrapped__", func)


def is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _foreign(func, x, args, kwargs):
    for v in args:
        if isinstance(v, _MASKED):
            _refuse_masked(func)
    for v in kwargs.values():
        if isinstance(v, _MASKED):
            _refuse_masked(func)
    if type(x) in _seen.cuda_types:  # a Numba or CuPy device array, as before
        return _seen.cuda_call(func, args, kwargs)
    dask_array = sys.modules.get("dask.array")
    if dask_array is not None and isinstance(x, dask_array.Array):
        from . import dask as _dask

        return _dask.call(func, args, kwargs)
    if _on_cuda(x):
        from . import cuda as _cuda

        if type(x).__module__.split(".")[0] in ("numba", "numba_cuda", "cupy"):
            _seen.cuda_types.add(type(x))
            _seen.cuda_call = _cuda.call
        return _cuda.call(func, args, kwargs)
    if "torch" in sys.modules and (any(map(is_tensor, args))
                                   or any(map(is_tensor, kwargs.values()))):
        from . import torch as _torch

        _seen.torch_call = _torch.call_cpu
        _seen.tensor = sys.modules["torch"].Tensor
        return _torch.call(func, args, kwargs)
    if _dlpack_on_cuda(x):
        return _cuda_through_dlpack(func, x, args, kwargs)
    if hasattr(x, "__dlpack__") and not isinstance(x, (np.ndarray, np.generic)):
        return _through_dlpack(func, x, args, kwargs)
    return func(*args, **kwargs)


_MASKED = np.ma.MaskedArray


def _refuse_masked(func) -> None:
    """A masked array's mask would be dropped by ``numpy.asarray``: a silently wrong
    answer (``sum`` of ``[1, --, 3]`` would be 6). Refused, naming the way to skip
    the masked elements (the contract's choice for operators that do not honour
    masks; none does yet)."""
    name = getattr(func, "__qualname__", getattr(func, "__name__", "axisops")).split(".")[0]
    module = getattr(func, "__module__", "axisops")
    op = f"grad.{name}" if module == "axisops.grad" else name
    raise TypeError(
        f"{op}: numpy.ma.MaskedArray is not supported: its mask would be ignored. Fill the "
        "masked elements with NaN (x.filled(np.nan), in a float dtype) and use the nan "
        "operators (axisops.nansum, nanmean, nanmax, nanargmax, ...), or pass x.data to "
        "use every element")


def _on_cuda(x) -> bool:
    """Whether *x* is a CUDA array (numba-cuda is not imported to find out)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return bool(x.is_cuda)
    if "numba.cuda" not in sys.modules and not hasattr(x, "__cuda_array_interface__"):
        return False
    from .cuda._device import is_cuda_array

    return is_cuda_array(x)


#: DLPack's device types of CUDA memory (kDLCUDA, kDLCUDAHost is not; kDLCUDAManaged).
_DLPACK_CUDA = (2, 13)


def _dlpack_on_cuda(x) -> bool:
    device = getattr(x, "__dlpack_device__", None)
    if device is None or isinstance(x, (np.ndarray, np.generic)):
        return False
    try:
        return int(device()[0]) in _DLPACK_CUDA
    except Exception:
        return False


def _cuda_through_dlpack(func, x, args, kwargs):
    """A CUDA array known only by DLPack (a JAX GPU array, ...): read zero-copy as a
    PyTorch CUDA tensor, run on the device, and each array of the result handed
    back through the input library's ``from_dlpack``."""
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            torch = None
    if torch is None or not torch.cuda.is_available():
        raise TypeError(f"axisops: {type(x).__name__} is on a CUDA device (DLPack), and "
                        "reading it needs PyTorch with CUDA; pass a torch tensor or a CuPy "
                        "array, or copy it to the host")
    from . import cuda as _cuda

    back = _from_dlpack_of(x)

    def tensor(v):
        return torch.from_dlpack(v) if _dlpack_on_cuda(v) else v

    result = _cuda.call(func, tuple(map(tensor, args)), {k: tensor(v) for k, v in kwargs.items()})
    return _map_device_arrays(result, back, torch)


def _map_device_arrays(result, back, torch):
    if isinstance(result, tuple):
        mapped = [_map_device_arrays(r, back, torch) for r in result]
        return type(result)(*mapped) if hasattr(result, "_fields") else tuple(mapped)
    return back(result) if isinstance(result, torch.Tensor) else result


def _through_dlpack(func, x, args, kwargs):
    back = _from_dlpack_of(x)
    args = tuple(_numpy_view(a) for a in args)
    kwargs = {k: _numpy_view(v) for k, v in kwargs.items()}
    return _map_arrays(func(*args, **kwargs), back)


def _numpy_view(value):
    if hasattr(value, "__dlpack__") and not isinstance(value, (np.ndarray, np.generic)):
        return np.from_dlpack(value)
    return value


def _from_dlpack_of(x) -> Callable[[Any], Any]:
    """The ``from_dlpack`` of *x*'s library: its Array API namespace's
    (``x.__array_namespace__()``: JAX, ...), else ``lib.from_dlpack`` of the module
    that defines its type."""
    namespace = getattr(x, "__array_namespace__", None)
    if namespace is not None and callable(getattr(namespace(), "from_dlpack", None)):
        return namespace().from_dlpack
    root = type(x).__module__.split(".")[0]
    back = getattr(importlib.import_module(root), "from_dlpack", None)
    if callable(back):
        return back
    raise TypeError(f"axisops: {type(x).__name__} has __dlpack__, but neither an Array API "
                    f"namespace nor its library {root!r} has from_dlpack to give the result back")


def _map_arrays(result, back):
    if isinstance(result, tuple):
        mapped = [_map_arrays(r, back) for r in result]
        return type(result)(*mapped) if hasattr(result, "_fields") else tuple(mapped)
    if isinstance(result, (np.ndarray, np.generic)):
        return back(np.asarray(result))
    return result

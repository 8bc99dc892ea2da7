"""The device layer: CUDA arrays in, kernels launched on their device and stream,
results back as the input's own type.

An input is any object with ``__cuda_array_interface__`` (PyTorch CUDA tensors,
CuPy arrays, Numba device arrays), or, under Numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``), the simulator's device arrays. Each becomes a
:class:`DeviceArray`: the Numba device array the kernels take, with its shape,
byte strides and dtype, the stream to launch on and the way to allocate results
of the input's type:

* a PyTorch tensor: its device's current stream; results are ``torch.empty`` on
  that device (PyTorch's caching allocator), handed to the kernels zero-copy;
* a CuPy array: CuPy's current stream; results ``cupy.empty``;
* a Numba device array: its own stream (the default stream otherwise); results
  ``numba.cuda.device_array``.

Kernels see the input as a flat 1-D *base* from the lowest address its elements
occupy, an element offset and element strides (:func:`flat_base`), as the CPU
kernels do (``axisops._layout``); the geometry is computed on the host from a
NumPy stand-in with the same shape and strides, whose memory is never read.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided


def simulated() -> bool:
    """Whether Numba's CUDA simulator stands in for the GPU (read once: Numba reads
    ``NUMBA_ENABLE_CUDASIM`` when it loads, and a call asks several times)."""
    global _SIMULATED
    if _SIMULATED is None:
        from numba import config

        _SIMULATED = bool(getattr(config, "ENABLE_CUDASIM", False))
    return _SIMULATED


_SIMULATED: bool | None = None


def is_cuda_array(x: Any) -> bool:
    """Whether *x* lives on a CUDA device (or on the simulator's)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return bool(x.is_cuda)
    if isinstance(x, (np.ndarray, np.generic)):
        return False
    fake = _fake_array_type()
    if fake is not None and isinstance(x, fake):
        return True
    try:
        return hasattr(x, "__cuda_array_interface__")
    except Exception:  # some objects raise something other than AttributeError
        return False


def device_index(x: Any) -> int | None:
    """The CUDA device *x* lives on, where its library says (PyTorch, CuPy); None
    for the current device (Numba arrays, the simulator)."""
    if simulated():
        return None
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return int(x.device.index or 0)
    if type(x).__module__.split(".")[0] == "cupy":
        return int(x.device.id)
    return None


def _fake_array_type():
    """The simulator's device array class, once it is loaded (None on a GPU)."""
    global _FAKE_ARRAY
    if _FAKE_ARRAY is None and simulated():
        module = sys.modules.get("numba.cuda.simulator.cudadrv.devicearray")
        _FAKE_ARRAY = getattr(module, "FakeCUDAArray", None)
    return _FAKE_ARRAY


_FAKE_ARRAY: type | None = None


def _numba_array_types() -> tuple[type, ...]:
    """The classes of Numba's own device arrays (the simulator's, under it)."""
    global _NUMBA_ARRAYS
    if _NUMBA_ARRAYS is None:
        if simulated():
            fake = _fake_array_type()
            if fake is None:  # not loaded yet: nothing is one of its arrays yet
                return ()
            _NUMBA_ARRAYS = (fake,)
        else:
            from numba.cuda.cudadrv.devicearray import DeviceNDArray

            _NUMBA_ARRAYS = (DeviceNDArray,)
    return _NUMBA_ARRAYS


_NUMBA_ARRAYS: tuple[type, ...] | None = None


def _cuda():
    """``numba.cuda`` (imported once: a warm call asks for it several times, and an
    import statement in a function costs a look-up each time)."""
    global _CUDA
    if _CUDA is None:
        from numba import cuda

        _CUDA = cuda
    return _CUDA


_CUDA: Any = None


@dataclass(slots=True)
class DeviceArray:
    """A CUDA input as the launchers see it."""

    array: Any            # the Numba device array (or the simulator's)
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in bytes
    dtype: np.dtype
    kind: str             # "torch", "cupy" or "numba": what results are made of
    owner: Any            # the input itself (its device, for allocation)
    stream: Any           # the Numba stream kernels are launched on
    size: int = field(init=False)  # elements (asked many times per call)

    def __post_init__(self) -> None:
        self.size = math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def stand_in(self) -> np.ndarray:
        """A NumPy array with this shape, dtype and strides whose memory must never
        be read: for the host-side geometry only."""
        return as_strided(np.zeros(1, self.dtype), self.shape, self.strides)

    def host_zeros(self) -> np.ndarray:
        """A host array of this shape and dtype whose memory is one zero
        (:func:`zeros_stand_in`): for the NumPy path's checks, which may read it."""
        return zeros_stand_in(self.shape, self.dtype)

    def empty(self, shape, dtype) -> tuple[Any, Any]:
        """(result of the input's type, its Numba device array), uninitialised and
        C-contiguous, on the input's device."""
        shape, dtype = tuple(map(int, shape)), np.dtype(dtype)
        if self.kind == "torch":
            import torch

            t = torch.empty(shape, dtype=_torch_dtype(dtype), device=self.owner.device)
            return t, _numba_view(t)
        if self.kind == "cupy":
            import cupy

            with cupy.cuda.Device(self.owner.device.id):
                c = cupy.empty(shape, dtype)
            return c, _numba_view(c)
        d = _cuda().device_array(shape, dtype, stream=self.stream)
        return d, d

    def scratch(self, shape, dtype) -> Any:
        """A Numba device array for intermediate results (never returned)."""
        return self.empty(shape, dtype)[1]


def device_array(x: Any) -> DeviceArray:
    """*x* (see :func:`is_cuda_array`) as a :class:`DeviceArray`.

    Raises ``TypeError`` for strides that are not whole elements, which no CUDA
    array library makes and the kernels cannot address."""
    cuda = _cuda()
    numba_types: tuple[type, ...] = _NUMBA_ARRAYS or _numba_array_types()
    if isinstance(x, numba_types):
        # a Numba array is read as it is: through __cuda_array_interface__ numba-cuda
        # reports a broadcast (stride 0) array as contiguous, without its strides
        # (devicearray.is_contiguous ignores broadcast dimensions), and the copy read
        # past its one element (on an H100: the zero imaginary parts of grad.scatter)
        numba_array: Any = x  # (isinstance narrowed x to a bare type)
        return _described(numba_array, numba_array.dtype, "numba", x,
                          numba_array.stream or _default_stream())
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        kind = "torch"
        dtype = np.dtype(str(x.dtype).replace("torch.", ""))
        stream = cuda.external_stream(torch.cuda.current_stream(x.device).cuda_stream)
        array: Any = _numba_view(x.detach())
    elif type(x).__module__.split(".")[0] == "cupy":
        import cupy

        kind = "cupy"
        dtype = x.dtype
        stream = cuda.external_stream(cupy.cuda.get_current_stream().ptr)
        array = _numba_view(x)
    else:
        kind = "numba"
        array = cuda.as_cuda_array(x)
        dtype = array.dtype
        stream = getattr(array, "stream", 0) or _default_stream()
    return _described(array, dtype, kind, x, stream)


def _described(array, dtype, kind: str, owner, stream) -> DeviceArray:
    """The :class:`DeviceArray` of a Numba device array (Numba's arrays and the
    simulator's keep their shape and strides as tuples of ints)."""
    dtype = np.dtype(dtype)
    shape = tuple(array.shape)
    strides = tuple(array.strides)
    item = dtype.itemsize
    if item > 1 and any(s % item for s in strides):
        raise TypeError(f"axisops: a CUDA array with strides {strides} that are not multiples of "
                        f"its item size {item} cannot be read")
    return DeviceArray(array, shape, strides, dtype, kind, owner, stream)


def _default_stream():
    """Numba's default stream (handle 0: the legacy default stream of whichever
    context is current when a kernel launches), made once: ``cuda.default_stream()``
    asks the driver for the current context each time."""
    global _DEFAULT_STREAM
    if _DEFAULT_STREAM is None:
        _DEFAULT_STREAM = _cuda().default_stream()
    return _DEFAULT_STREAM


_DEFAULT_STREAM: Any = None


def bool_as_bytes(d: DeviceArray) -> DeviceArray:
    """*d* with bool seen as uint8 (the kernels compare, add and move bytes)."""
    if d.dtype != np.bool_:
        return d
    return DeviceArray(view_as(d.array, np.uint8), d.shape, d.strides, np.dtype(np.uint8),
                       d.kind, d.owner, d.stream)


def view_as(array, dtype) -> Any:
    """``array.view(dtype)`` of a Numba device array, for a dtype of the same size.

    numba-cuda 0.30's ``view`` fails on a 0-d array (``TypeError: unhashable type:
    'list'``: its empty stride list is never made a tuple); on an H100 every bool
    0-d input failed so. A 0-d view is made directly, on the same memory."""
    if getattr(array, "ndim", 1) or simulated():
        return array.view(dtype)
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    return DeviceNDArray(shape=(), strides=(), dtype=np.dtype(dtype), stream=array.stream,
                         gpu_data=array.gpu_data)


def in_c_order(d: DeviceArray) -> DeviceArray:
    """*d* itself when it is C-contiguous (size-1 dimensions aside), else a
    C-contiguous copy on its device and stream (:func:`converted` to its own
    dtype: ``kernels.copy_c``, a thread per element; bool moved as bytes)."""
    if d.size <= 1 or _c_ordered(d):
        return d
    src = operand(d)
    c = converted(d, src, d.shape, src.dtype, c_order=True)
    if c is src:
        return d
    array = (c.base.view(d.dtype) if src.dtype != d.dtype else c.base).reshape(d.shape)
    return DeviceArray(array, d.shape, tuple(int(s) for s in array.strides), d.dtype, d.kind,
                       d.owner, d.stream)


def call_key(op: str, d: DeviceArray, *options) -> tuple:
    """The key under which a front end keeps its plan of a call: *op*, *d*'s shape,
    strides and dtype, the call's *options* (plain values) and the current device."""
    return (op, d.shape, d.strides, d.dtype, *options, current_device())


def base_offset(d: DeviceArray) -> int:
    """The element offset of ``d[0, ..., 0]`` in :func:`flat_base`'s base: a function
    of the shape and strides alone, so plans keep it."""
    item = d.dtype.itemsize
    return sum((n - 1) * -(s // item) for n, s in zip(d.shape, d.strides) if n > 1 and s < 0)


def c_strides_of(d: DeviceArray) -> tuple[int, ...]:
    """The byte strides of a C-contiguous array of *d*'s shape and dtype (size-1
    dimensions included: Numba's ``reshape`` reads its own flags, which want them)."""
    item = d.dtype.itemsize
    return tuple(s * item for s in _c_strides(d.shape))


def _c_ordered(d: DeviceArray) -> bool:
    """Whether *d*'s strides are C order's (those of size-1 dimensions aside)."""
    step = d.dtype.itemsize
    for n, s in zip(reversed(d.shape), reversed(d.strides)):
        if n != 1:
            if s != step:
                return False
            step *= n
    return True


def flat_base(d: DeviceArray) -> tuple[Any, int]:
    """(base, offset): a flat 1-D device array of *d*'s memory from the lowest
    address its elements occupy, and the element offset of ``d[0, ..., 0]`` in it
    (``axisops._layout.strided_base`` on the device)."""
    itemsize = d.dtype.itemsize
    strides = [s // itemsize if n > 1 else 0 for s, n in zip(d.strides, d.shape)]
    if d.size == 0:  # flat whatever d's shape: a kernel indexes base with one index
        return d.scratch((0,), d.dtype), 0
    if d.strides == c_strides_of(d):  # the common case: a view of the array itself
        return (d.array if len(d.shape) == 1 else d.array.reshape(d.size)), 0
    offset = base_offset(d)
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(d.shape, strides))
    if simulated():
        host = d.array._ary  # the simulator's device array wraps a NumPy array
        flip = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)
        low = host[flip]
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return FakeCUDAArray(as_strided(low, shape=(span,), strides=(itemsize,))), offset
    pointer = d.array.__cuda_array_interface__["data"][0] - offset * itemsize
    return _cuda().as_cuda_array(_Interface(pointer, span, d.dtype, owner=d.array),
                              sync=False), offset


class _Interface:
    """Device memory described by ``__cuda_array_interface__``: a raw span of *size*
    elements, or *shape* with byte *strides*, of memory that *owner* holds.

    Numba keeps this object as the owner of the array made from it, so the array
    keeps *owner* alive. Without it a view outlived its memory on a real GPU: an
    upload freed when its function returned was reused by the next allocation while
    a kernel still read it through the view (the simulator's views hold their
    NumPy bases, so only an H100 showed it)."""

    def __init__(self, pointer: int, size: int, dtype: np.dtype, shape=None, strides=None,
                 owner: Any = None):
        self.owner = owner
        self.__cuda_array_interface__ = {"shape": (size,) if shape is None else tuple(shape),
                                         "strides": None if strides is None else tuple(strides),
                                         "typestr": dtype.str, "data": (pointer, True),
                                         "version": 3, "stream": None}


def complex_part(d: DeviceArray, imaginary: bool) -> DeviceArray:
    """The real (imaginary) part of a complex *d*: a view of its memory with *d*'s
    strides and the parts' dtype."""
    part = np.dtype(d.dtype.char.lower())
    if simulated():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        host = d.array._ary
        array = FakeCUDAArray(host.imag if imaginary else host.real)
    else:
        from numba import cuda

        pointer = d.array.__cuda_array_interface__["data"][0] + (part.itemsize if imaginary else 0)
        array = cuda.as_cuda_array(_Interface(pointer, 0, part, d.shape, d.strides, d.array),
                                   sync=False)
    return DeviceArray(array, d.shape, d.strides, part, "numba", array, d.stream)


def zeros_view(d: DeviceArray, shape, dtype) -> Any:
    """A read-only-by-convention device array of zeros of *shape* and *dtype* on *d*'s
    device: one element, every stride 0."""
    dtype = np.dtype(dtype)
    one = d.scratch((1,), dtype)
    one.copy_to_device(np.zeros(1, dtype), stream=d.stream)
    shape = tuple(int(s) for s in shape)
    if simulated():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return FakeCUDAArray(np.broadcast_to(one._ary, shape) if shape else one._ary[0:1]
                             .reshape(()))
    from numba import cuda

    pointer = one.__cuda_array_interface__["data"][0]
    return cuda.as_cuda_array(_Interface(pointer, 0, dtype, shape, (0,) * len(shape), one),
                              sync=False)


def _numba_view(x) -> Any:
    return _cuda().as_cuda_array(x, sync=False)


def _torch_dtype(dtype: np.dtype):
    import torch

    return getattr(torch, "bool" if dtype == np.bool_ else dtype.name)


def grid(work: int, block: int) -> int:
    """Blocks of *block* threads covering *work* items (at least one)."""
    return max(1, -(-int(work) // block))


def threads_per_block() -> int:
    """Threads per block: 256 on a GPU; 8 under the simulator, which runs each
    thread of a block as a Python thread."""
    return 8 if simulated() else 256


def resident_threads() -> int:
    """About how many threads keep the device busy (the work a launch should be
    split into before splitting a long axis pays): 2048 per multiprocessor."""
    if simulated():
        return 64
    from numba import cuda

    return 2048 * cuda.get_current_device().MULTIPROCESSOR_COUNT


def divisor(d: int) -> list[int]:
    """``[d, magic, shift]``: the record with which :func:`axisops.cuda.kernels._divmod`
    divides by *d* with a multiply and a shift (Granlund and Montgomery's division
    by invariant integers, ONNX Runtime's ``fast_divmod``, in 64 bits): for every
    ``0 <= n < 2**63``, ``n // d == (mulhi(n, magic) + n) >> shift`` with
    ``shift = ceil(log2(d))`` and ``magic = 2**64 * (2**shift - d) // d + 1``. The
    magic is stored as the int64 with its bits.

    >>> d, magic, shift = divisor(7)
    >>> n = 10**18
    >>> ((n * (magic % 2**64) >> 64) + n) >> shift == n // 7
    True
    """
    d = int(d)
    if d < 1:
        raise ValueError(f"divisor: {d} is not a positive divisor")
    shift = (d - 1).bit_length()
    magic = (((1 << 64) * ((1 << shift) - d)) // d + 1) % (1 << 64)
    return [d, magic - (1 << 64) if magic >= 1 << 63 else magic, shift]


def dims(shape, strides) -> list[int]:
    """``[size, stride, magic, shift]`` per dimension (see :func:`divisor`), the
    records :func:`axisops.cuda.kernels._unravel` walks."""
    out: list[int] = []
    for n, s in zip(shape, strides):
        out += [int(n), int(s), *divisor(n)[1:]]
    return out


def flag(d: DeviceArray, clear: int = 0) -> Any:
    """A one-element int64 device flag holding *clear* (0: cleared), on *d*'s device
    (a kernel that meets a bad index sets it, or lowers it to a position).

    Flags are kept: :func:`flag_value` (and :func:`is_set`) with ``release=True``
    puts a flag it read back still holding *clear* into a small pool, from which
    the next call takes it, so a warm call that checks its indices allocates and uploads nothing
    before its one read-back. A flag in use is out of the pool (no other call, thread
    or stream can take it), and one found set, or never read, is dropped."""
    pool = _FLAGS.get((current_device(), clear))
    if pool:
        try:
            return pool.pop()
        except IndexError:  # another thread took the last one
            pass
    bad = d.scratch((1,), np.int64)
    bad.copy_to_device(np.full(1, clear, np.int64), stream=d.stream)
    return bad


def flag_value(bad, d: DeviceArray, clear: int = 0, release: bool = False) -> int:
    """The value of the *bad* flag made by :func:`flag` with *clear* (reading it waits
    for the kernels before it on *d*'s stream). With *release* (the caller's last use
    of it) the flag goes back to the pool when it still holds *clear*; a caller that
    reads a flag before more kernels use it (``scatter.destinations``) keeps it."""
    value = int(to_host(bad, d)[0])
    if release and value == clear:
        pool = _FLAGS.setdefault((current_device(), clear), [])
        if len(pool) < _FLAGS_KEPT:
            pool.append(bad)
    return value


def is_set(bad, d: DeviceArray, release: bool = False) -> bool:
    """Whether a kernel set the *bad* flag (made by :func:`flag` with 0; *release*
    as :func:`flag_value`'s)."""
    return flag_value(bad, d, 0, release) != 0


#: Cleared flags ready for use, by (device, cleared value); a few each (calls that
#: run at once on several threads take one each).
_FLAGS: dict[tuple[int, int], list[Any]] = {}
_FLAGS_KEPT = 4


def to_host(array, d: DeviceArray) -> np.ndarray:
    """*array* (a Numba device array) copied to the host on *d*'s stream, after the
    work queued there: a copy on a stream is asynchronous, so the stream is
    waited for (a copy on the default stream would not wait for a non-blocking
    stream, such as PyTorch's side streams)."""
    host = array.copy_to_host(stream=d.stream)
    d.stream.synchronize()
    return host


def to_device_constants(values) -> Any:
    """A small int64 device array of *values* (kernel geometry), read-only.

    Geometries depend only on shapes, strides and options, so each is uploaded
    once per device and kept (``_CONSTANTS``, the most recent 4096): a repeated
    call of a small operator launches without a host-to-device copy. The upload
    is synchronous, so the array is complete before any stream reads it."""
    from numba import cuda

    key = (tuple(int(v) for v in values), current_device())
    array = _CONSTANTS.pop(key, None)
    if array is None:
        array = cuda.to_device(np.ascontiguousarray(key[0], dtype=np.int64))
        if len(_CONSTANTS) >= _MAX_CONSTANTS:
            del _CONSTANTS[next(iter(_CONSTANTS))]  # the least recently used
    _CONSTANTS[key] = array
    return array


def kept_constants(key: tuple, make) -> Any:
    """:func:`to_device_constants` of ``make()``, kept under *key* (plain values that
    determine them) and the current device: a warm call neither recomputes a
    geometry (coalescing, divisors) nor converts its values for the look-up."""
    key = (key, current_device())
    array = _KEPT.get(key)
    if array is None:
        array = to_device_constants(make())
        if len(_KEPT) >= _MAX_CONSTANTS:
            _KEPT.pop(next(iter(_KEPT)), None)
        _KEPT[key] = array
    return array


#: kept_constants' geometries by (key, device), oldest first.
_KEPT: dict[tuple, Any] = {}

#: Uploaded geometries by (values, device), least recently used first.
_CONSTANTS: dict[tuple, Any] = {}
_MAX_CONSTANTS = 4096


def current_device() -> int:
    """The current CUDA device's id (0 under the simulator): part of the key of
    everything kept per device."""
    if simulated():
        return 0
    from numba import cuda

    return int(cuda.get_current_device().id)


# ------------------------------------------------- what the launchers share


def zeros_stand_in(shape, dtype) -> np.ndarray:
    """A host array of *shape* and *dtype* whose memory is one zero: the NumPy path's
    checks read shapes and dtypes (and, harmlessly, zeros) from it, never device
    memory."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape))


@dataclass
class Operand:
    """A strided array as a kernel reads it."""

    base: Any             # flat 1-D device array (bool seen as uint8)
    offset: int           # element offset of the first element in base
    strides: list[int]    # element strides, one per dimension (0 where its size is 1)
    dtype: np.dtype       # base's dtype


def operand(d: DeviceArray) -> Operand:
    """*d* as a kernel reads it: its flat base (bool as bytes), offset and element
    strides."""
    seen = bool_as_bytes(d)
    base, offset = flat_base(seen)
    item = d.dtype.itemsize
    return Operand(base, offset, [s // item if n > 1 else 0 for s, n in zip(d.strides, d.shape)],
                   seen.dtype)


def converted(d: DeviceArray, src: Operand, shape, dtype, c_order: bool = False) -> Operand:
    """*src* (of *shape*) in *dtype*: itself, or a C-ordered copy converted as NumPy's
    ``astype`` converts, in one pass (``kernels.copy_c``); with *c_order*,
    C-ordered in any case."""
    from . import kernels as K

    dtype = np.dtype(dtype)
    shape = tuple(shape)
    size = math.prod(shape)
    c = [s if n > 1 else 0 for s, n in zip(_c_strides(shape), shape)]
    if src.dtype == dtype and (not c_order or src.strides == c):
        return src
    out = d.scratch((max(size, 1),), dtype)
    if size:
        geo = [src.offset, len(shape), *dims(shape, src.strides)]
        launch(K.copy_c, d, size, src.base, to_device_constants(geo), out)
    return Operand(out, 0, c, dtype)


def _c_strides(shape) -> list[int]:
    from .._layout import c_strides

    return c_strides(shape)


def upload(d: DeviceArray, host: np.ndarray) -> DeviceArray:
    """A host array copied to *d*'s device on its stream (C-contiguous)."""
    from numba import cuda

    array = cuda.to_device(np.ascontiguousarray(host).reshape(host.shape), stream=d.stream)
    return DeviceArray(array, host.shape, tuple(int(s) for s in array.strides), host.dtype,
                       "numba", array, d.stream)


def as_bytes(flat):
    """A bool result's flat device array seen as uint8 (what the kernels store)."""
    return flat.view(np.uint8) if flat.dtype == np.bool_ else flat


def launch(kernel, d: DeviceArray, threads: int, *args) -> None:
    """*kernel* with a thread per item of *threads*, on *d*'s stream."""
    block = threads_per_block()
    kernel[grid(threads, block), block, d.stream](*args)

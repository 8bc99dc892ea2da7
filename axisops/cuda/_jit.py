"""The decorator of every CUDA kernel: ``cuda.jit(cache=True)``, where a
specialisation that numba-cuda cannot write to its disk cache is compiled and
used uncached instead of failing.

numba-cuda refuses to pickle a kernel that links extra files
(``RuntimeError: Cannot pickle CUDACodeLibrary with linking files``, from
``CUDACodeLibrary._reduce_states``) and raises from the launch that compiled it,
after compiling: on an H100 every float16 kernel (which links the ``cuda_fp16``
shims) failed so, and was compiled again at every call. Such a kernel is now kept
in memory (compiled once per process); every other one is cached on disk.
"""
from __future__ import annotations

from typing import Any

from numba import cuda

_UNCACHABLE = "Cannot pickle CUDACodeLibrary with linking files"


def kernel(py_func) -> Any:
    """``cuda.jit(cache=True)(py_func)``, tolerating specialisations that cannot be
    cached (see the module's note)."""
    return tolerate_uncachable(cuda.jit(cache=True)(py_func))


def tolerate_uncachable(dispatcher) -> Any:
    """Make *dispatcher*'s disk cache skip what numba-cuda cannot pickle (a kernel
    that links files) instead of raising; other errors pass. The simulator's kernels
    have no disk cache and are returned as they are."""
    cache: Any = getattr(dispatcher, "_cache", None)
    save = getattr(cache, "save_overload", None)
    if save is None:
        return dispatcher

    def save_overload(sig, data):
        try:
            save(sig, data)
        except RuntimeError as exc:
            if _UNCACHABLE not in str(exc):
                raise

    cache.save_overload = save_overload
    return dispatcher

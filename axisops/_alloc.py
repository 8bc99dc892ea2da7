"""Result arrays, with the memory of large ones recycled.

A fresh large NumPy array costs more than its contents suggest: the operating
system maps its pages on first touch and zeroes each one, which here takes about
9 ms per 128 MiB, as long as a scan of the same 128 MiB takes by itself. ONNX
Runtime avoids it with its arena. axisops keeps the buffers of its large results
(``MIN_POOLED`` bytes and more) after the caller has dropped them, and hands the
same memory out again for the next result of the same size.

A buffer is reused only when nothing refers to it any more: every array made from
it (the result, and any view of the result, whose ``base`` is the buffer) holds a
reference, so the buffer is free exactly when its reference count is back to the
pool's own. At most :func:`pool_limit` bytes of free buffers are kept (least
recently used are dropped first); ``pool_limit(0)`` turns the pool off and frees
them all.

>>> import numpy as np
>>> limit = pool_limit(0)                         # start from an empty pool
>>> _ = pool_limit(limit)
>>> a = empty((4, 1 << 20), np.float32)          # 16 MiB: from the pool
>>> a.base is not None and a.flags.c_contiguous
True
>>> address = a.ctypes.data
>>> del a
>>> empty((4 << 20,), np.int32).ctypes.data == address   # the same memory again
True
"""
from __future__ import annotations

import math
import os
import sys
import threading

import numpy as np

__all__ = ["empty", "empty_function", "pool_limit"]

#: Results smaller than this come from ``numpy.empty`` (malloc recycles them anyway).
MIN_POOLED = 8 << 20


def _default_limit() -> int:
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        ram = 8 << 30
    return min(1 << 30, ram // 16)


_lock = threading.Lock()
_limit = _default_limit()
_buffers: list[np.ndarray] = []  # uint8 buffers, least recently handed out first


def _refs(k: int) -> int:
    return sys.getrefcount(_buffers[k])


def _calibrate() -> int:
    """The reference count :func:`_refs` sees for a buffer nothing else refers to."""
    _buffers.append(np.empty(1, np.uint8))
    try:
        return _refs(len(_buffers) - 1)
    finally:
        _buffers.pop()


_UNUSED = _calibrate()


def empty(shape, dtype, min_pooled: int = MIN_POOLED) -> np.ndarray:
    """An uninitialised C-contiguous array, like ``numpy.empty``; large ones (*min_pooled*
    bytes and more) come from the pool. A kernel's scratch may be pooled from a
    smaller size: glibc hands blocks of a few hundred KiB back to the system when
    they are freed, and each call then faults their pages in again."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < min_pooled or _limit == 0:
        return np.empty(shape, dtype)
    with _lock:
        for k in range(len(_buffers)):
            if _buffers[k].nbytes == nbytes and _refs(k) == _UNUSED:
                buf = _buffers.pop(k)
                break
        else:
            _trim(_limit)
            buf = np.empty(nbytes, np.uint8)
        _buffers.append(buf)
        return buf.view(dtype).reshape(shape)


def empty_function(shape, dtype):
    """The function that gives results of this shape and dtype: ``numpy.empty``
    for small ones (skipping the pool's bookkeeping), :func:`empty` otherwise.
    Call it as ``f(shape, dtype)``; plans choose it once."""
    return np.empty if math.prod(shape) * np.dtype(dtype).itemsize < MIN_POOLED else empty


def pool_limit(nbytes: int | None = None) -> int:
    """The most bytes of unused result buffers kept for reuse; with *nbytes*, set it.

    axisops keeps the buffers of its large results (8 MiB and more) after the
    caller has dropped them, and hands the same memory out again for the next
    result of the same size; past the limit, the least recently used are dropped
    first. ``pool_limit(0)`` frees every unused buffer and makes every later result
    a plain ``numpy.empty``. Results never depend on it.

    Parameters
    ----------
    nbytes : int or None, optional
        The new limit in bytes, >= 0; unused buffers beyond it are freed at once.
        Default None: only read the limit.

    Returns
    -------
    int
        The limit in force before the call.

    Raises
    ------
    ValueError
        If ``nbytes`` is negative.

    See Also
    --------
    thread_limit : The threads a large call may use, the other process-wide setting.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> old = axisops.pool_limit(0)   # free the unused buffers and stop keeping them
    >>> axisops.pool_limit(old)
    0
    """
    global _limit
    old = _limit
    if nbytes is not None:
        if nbytes < 0:
            raise ValueError(f"pool_limit: expected a number of bytes >= 0, got {nbytes}")
        with _lock:
            _limit = int(nbytes)
            _trim(_limit)
    return old


def _trim(limit: int) -> None:
    """Drop unused buffers, least recently used first, until at most *limit* bytes are unused."""
    unused = [k for k in range(len(_buffers)) if _refs(k) == _UNUSED]
    spare = sum(_buffers[k].nbytes for k in unused)
    drop = []
    for k in unused:  # oldest first
        if spare <= limit:
            break
        spare -= _buffers[k].nbytes
        drop.append(k)
    for k in reversed(drop):  # from the end, so the other indices stay valid
        del _buffers[k]

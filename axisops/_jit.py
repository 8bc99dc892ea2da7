"""The one place that compiles kernels.

Every kernel is an ``@kernel`` (parallel) or ``@serial_kernel`` function. Options are
fixed here and never read from the environment: Numba's on-disk cache key ignores
compiler flags, so flags that changed between runs would load stale machine code.

Kernels that differ only by a compile-time constant (an operator code, an
accumulator type) are made by small factories (see ``kernels/reduce.py``); Numba
caches each closure separately because its cache key includes the closure's values.
"""
from __future__ import annotations

import functools
import threading

from numba import njit

#: ``reassoc`` lets LLVM vectorise float sums and products (a fixed lane order per
#: compiled kernel, so results stay the same on every run and for every thread
#: count); NaN and inf semantics are untouched (no ``nnan``/``ninf``).
_FASTMATH_SUM = frozenset({"reassoc"})


def kernel(fn=None, *, reassociate: bool = False):
    """Compile *fn* lazily as a parallel, disk-cached Numba kernel."""
    def wrap(f):
        return njit(parallel=True, cache=True, nogil=True,
                    fastmath=set(_FASTMATH_SUM) if reassociate else False)(f)
    return wrap(fn) if fn is not None else wrap


def helper(fn):
    """A small function inlined into kernels (no parallelism of its own)."""
    return njit(inline="always", cache=True)(fn)


def factory(fn):
    """Memoise a kernel factory so each constant combination is compiled once."""
    return functools.lru_cache(maxsize=None)(fn)


def initialise_in_background() -> None:
    """Start Numba's one-time compiler set-up in a daemon thread.

    The first kernel a process runs, even one loaded from the disk cache, waits
    for Numba to build its typing and target contexts (about 0.2 s here). Doing it
    at import would put that on every ``import axisops``; doing it in a thread lets
    it overlap with whatever the program does between the import and its first
    call. The thread holds Numba's global compiler lock, so a kernel called early
    simply waits for it.
    """
    def run():
        try:
            from numba.core.compiler_lock import global_compiler_lock
            from numba.core.registry import cpu_target
            with global_compiler_lock:
                cpu_target.typing_context.refresh()
                cpu_target.target_context.refresh()
        except Exception:  # pragma: no cover - the first call does it anyway
            pass

    threading.Thread(target=run, name="axisops-numba-init", daemon=True).start()


#: Below this many elements a kernel runs on the calling thread only: waking the
#: other workers costs more than the work (milliseconds when another process
#: holds a core). Results do not depend on the thread count, so this changes
#: only the time.
SERIAL_BELOW = 1 << 17


def run(kern, work: int, *args):
    """Call *kern* with *args*, on one thread when *work* (elements) is small."""
    if work >= SERIAL_BELOW:
        return kern(*args)
    import numba

    threads = numba.get_num_threads()
    if threads == 1:
        return kern(*args)
    numba.set_num_threads(1)
    try:
        return kern(*args)
    finally:
        numba.set_num_threads(threads)

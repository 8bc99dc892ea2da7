"""A planned call's parts on Numba's OpenMP threads: waking them costs ~1.5 us.

The pool of :mod:`axisops._jit` hands a call's parts to Python threads, and a
sleeping thread is woken through the kernel: 30-50 us on these virtual machines,
and a woken worker then waits as long again for the GIL, which the caller
holds while it starts its own part (measured: a float32 sum of (4, 262144)
split in two took 113 us, each half 30-40 us, the worker's half starting 44 us
after the call). OpenMP's threads spin for a while after each parallel region,
as PyTorch's do, so a call a few microseconds after the last one finds them
awake, and they never touch the GIL. Here a parallel loop
(:func:`_run_parts`) runs the serial kernel's parts, each calling the kernel's
machine code at its address (``kernels.entry.call_kernel``: no Numba dispatch,
no copy of the kernel compiled into the loop, which would take seconds per
kernel), so the loop is compiled once per tuple of argument types.

It is used for planned calls (whose argument types are fixed: the address is
found once per plan), where the calibration of ``_jit.run`` finds it pays,
and not in a process forked from one that used it (GNU OpenMP is not
fork-safe), nor where Numba's only threading layer is its workqueue (which
two threads must not call at once).

The contract says that no thread keeps spinning on a core after a call
returns. libgomp's threads poll 300,000 times before they sleep: here that
kept a core busy for milliseconds after each call, 7.7 ms of CPU in the 200 ms
after a sum of (4, 262144) float32. So Numba's threading layer is loaded with
``GOMP_SPINCOUNT`` = :data:`SPIN_COUNT` (unless the user set it or
``OMP_WAIT_POLICY``): 0.3 ms of CPU in those 200 ms, and still awake for the
next call of a loop (3000 spins were too few: the split no longer paid).
Threads asleep are not worth waking on these virtual machines (a sum of 1M
float32 10 ms after the last call took 0.67 ms split, 0.22 serially): a call
that comes more than :data:`LOOP_GAP` seconds after the previous planned call
runs serially (:func:`awake`). The variable is removed again at once,
so that an OpenMP runtime loaded later (PyTorch's own copy) keeps its default.
Where a GNU OpenMP runtime Numba would share is already loaded, the setting
could not apply: OpenMP is then not used. So ``import axisops`` loads the layer
(about 20 ms of a 570 ms import; no thread starts before the first parallel
loop): a library that launched it first (numbagg's parallel functions, in the
bench's sweep) had kept every planned call of the process off OpenMP.
"""
from __future__ import annotations

import os
import time

import numba
import numpy as np
from numba import njit, prange

from .kernels.entry import call_kernel

#: libgomp's busy-wait count for Numba's OpenMP threads (see above).
SPIN_COUNT = "10000"


def _shared_libgomp_loaded() -> bool:
    """Whether the system's GNU OpenMP runtime (the one Numba's ``omppool`` links)
    is already mapped into the process: then it read its settings already.

    A copy that a wheel bundles (PyTorch's ``torch/lib/libgomp.so.1``) is not
    shared: Numba's layer loads the system's beside it (measured: both mapped,
    Numba's threads spinning as :data:`SPIN_COUNT` says). Counting it turned
    OpenMP off in every process that imported torch first: 1M-element sums ran
    serially there, 1.5x slower."""
    try:
        with open("/proc/self/maps") as maps:
            return any(line.rstrip().endswith(("/libgomp.so.1", "/libgomp.so.1.0.0"))
                       and "-packages/" not in line for line in maps)
    except OSError:  # pragma: no cover - not Linux: nothing to read
        return False


def _load_layer() -> bool:
    """Load Numba's threading layer with a bounded spin; whether it may be used."""
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        numba.np.ufunc.parallel._launch_threads()  # the user's own choice
        return True
    if _shared_libgomp_loaded():
        return False
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    try:
        numba.np.ufunc.parallel._launch_threads()
    finally:
        del os.environ["GOMP_SPINCOUNT"]
    return True


#: Seconds between planned calls within which OpenMP's threads are taken to be
#: still polling (see above).
LOOP_GAP = 200e-6
_last_call = 0.0


def awake() -> bool:
    """Whether the previous planned call that could split ended less than
    :data:`LOOP_GAP` ago (OpenMP's threads still polling); notes this one."""
    global _last_call
    now = time.perf_counter()
    recent = now - _last_call < LOOP_GAP
    _last_call = now
    return recent


def called() -> None:
    """Note the end of a planned call that could split (see :func:`awake`)."""
    global _last_call
    _last_call = time.perf_counter()


#: Whether planned calls may use OpenMP's threads (False in a forked child, where
#: the layer Numba chose is its workqueue, or where a shared libgomp was loaded
#: before Numba's layer).
enabled = _load_layer()


@njit(parallel=True, nogil=True, cache=True)
def _run_parts(address, parts, args):
    for p in prange(parts):
        call_kernel(address, (np.int64(p), np.int64(parts)) + args)


def prepare(kern, args: tuple) -> int:
    """The address of *kern*'s machine code for the Numba types of *args* (``part,
    parts`` first), compiled (or loaded) first, with :func:`_run_parts` compiled
    for the rest of them; 0 where that loop cannot take them (Numba's parallel
    loops refuse some tuples among the arguments, such as a NaN-skipping sum's
    ``(None, 0.0)``): such a plan keeps to the pool."""
    types = tuple(numba.typeof(a) for a in args)
    kern.compile(types)
    compiled = kern.overloads[types]
    address = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
    try:
        _run_parts.compile((numba.types.int64, numba.types.int64, numba.types.Tuple(types[2:])))
    except Exception:  # a compile error: numba's own classes vary between versions
        return 0
    return address


def run_parts(address: int, parts: int, args: tuple) -> None:
    """Run parts ``0..parts-1`` of the kernel at *address* on *args*, on OpenMP's
    threads (the calling thread among them)."""
    global _layer_checked, enabled
    _run_parts(address, parts, args)
    if not _layer_checked:
        _layer_checked = True
        if numba.threading_layer() == "workqueue":  # pragma: no cover - no OpenMP nor TBB
            enabled = False


_layer_checked = False

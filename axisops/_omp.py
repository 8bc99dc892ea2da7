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
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .kernels.entry import call_kernel

#: Whether planned calls may use OpenMP's threads (False in a forked child, or
#: where the layer Numba chose is its workqueue).
enabled = True


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

"""Numba's CUDA simulator, faster where nothing is lost: a block whose kernel never
synchronises its threads runs them one after another in the calling thread.

The simulator starts a Python thread for every CUDA thread of a block and polls
them until all finish. Starting threads is most of what a small launch costs (on
some machines most of the CUDA tests' time: ``docs/contributing.md``). A kernel
that never calls ``syncthreads`` (or a warp or cooperative-group primitive, or
uses shared memory) cannot observe the order of its threads within a block: the
GIL already serialises them, and the simulator promises no interleaving. For
those kernels (the element-wise ones, most launches), each thread's body runs in
turn with its ``threadIdx``/``blockIdx`` seen as the simulator's own threads see
them. Kernels that synchronise (the tree reductions, block scans, tile sorts)
keep a Python thread per CUDA thread (a stack to wait in ``syncthreads`` with),
with the simulator's semantics (``syncthreads`` releases the block when every
live thread waits in it), but the threads run one at a time, in order: each until
it waits in ``syncthreads`` or ends, then it hands over to the next (a schedule
CUDA allows: nothing orders a block's threads between barriers; a missing
barrier shows as a thread reading what a later one has not written yet; every
other block runs its threads last to first, so either direction shows). Eight
runnable threads contending for the GIL made such a block cost ten times its
Python (a thread pool reused across launches spares starting them too); the
simulator itself polls ``Thread.is_alive`` for most of such a launch.

The simulator's ``cuda.shared.array`` finds a block's array by the caller's
line with a check-then-set that two threads can both pass, each then writing its
own array: threads of one block no longer share memory, and a tree reduction or
a tile sort gives a wrong answer now and then (seen as rare failures of the
scatter and mean tests). ``install()`` makes that look-up atomic.

``install()`` is called once by ``tests/cuda_support.py`` under the simulator;
``AXISOPS_TEST_THREADED_SIMULATOR=1`` keeps the simulator's threads for every
kernel (to compare, or to chase a suspected ordering bug).
"""
from __future__ import annotations

import collections
import os
import threading
import types

import numpy as np

#: Names whose presence in a kernel (or a device function it calls) means its
#: threads interact within a block.
BLOCK_LEVEL = frozenset({
    "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp",
    "shared", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "all_sync",
    "any_sync", "eq_sync", "ballot_sync", "match_any_sync", "match_all_sync", "activemask",
    "lanemask_lt", "cg", "this_grid", "threadfence_block",
})

_ABORTED = "another thread of the block failed"
_local = threading.local()
_synchronising: dict[int, bool] = {}
_installed = False


class _SequentialThread:
    """What the simulator's ``cuda`` module reads from the current thread."""

    def __init__(self, block_dim, block_point, thread_point):
        from numba.cuda.simulator.kernelapi import Dim3

        self.blockIdx = Dim3(*block_point)
        self.threadIdx = Dim3(*thread_point)
        bx, by, _ = (tuple(block_dim) + (1, 1))[:3]
        t = self.threadIdx
        self.thread_id = t.x + bx * (t.y + by * t.z)

    def syncthreads(self):  # BLOCK_LEVEL keeps such kernels off this path
        raise RuntimeError("a kernel run sequentially synchronised its threads")


class _Threading(types.ModuleType):
    """``threading`` as the simulator's kernel API sees it: the current thread is the
    sequential one while a block runs sequentially."""

    def __getattr__(self, name):
        return getattr(threading, name)

    @staticmethod
    def current_thread():
        return getattr(_local, "thread", None) or threading.current_thread()


class _Block:
    """The state a block's threads share. One thread runs at a time: *ready* are
    the threads to run before the barrier can open (in order), *arrived* those
    waiting in ``syncthreads``; when no thread is ready, every live thread waits
    in the barrier and *arrived* become the ready ones."""

    def __init__(self, f, args, block_dim, threads: list[_BlockThread]):
        self.f, self.args = f, args
        self.ready: collections.deque[_BlockThread] = collections.deque(threads)
        self.arrived: list[_BlockThread] = []
        self.abort = False
        self.finished = threading.Semaphore(0)  # released when the last thread ends
        self.state = np.zeros(block_dim, dtype=np.bool_)

    def run_next(self) -> None:
        """Hand the block to its next thread, or to the launcher when all have ended
        (called by the thread that stops running, or by the launcher to begin)."""
        while True:
            if not self.ready:
                self.ready.extend(self.arrived)  # every live thread waits: the barrier opens
                self.arrived.clear()
            if not self.ready:
                self.finished.release()
                return
            t = self.ready.popleft()
            if t.started:
                t.turn.release()
                return
            if not self.abort:  # a thread that never ran has nothing to end after a failure
                t.started = True
                _Worker.take().start_thread(t)
                return


class _BlockThread:
    """A CUDA thread of a block that synchronises (the attributes and methods the
    simulator's kernel API reads from ``threading.current_thread()``), run by a
    :class:`_Worker` and waiting on *turn* while another thread of its block runs."""

    def __init__(self, block_dim, block_point, thread_point):
        seq = _SequentialThread(block_dim, block_point, thread_point)
        self.blockIdx, self.threadIdx, self.thread_id = seq.blockIdx, seq.threadIdx, \
            seq.thread_id
        self.block: _Block
        self.turn = threading.Semaphore(0)
        self.started = False
        self.exception: BaseException | None = None

    def run(self) -> None:
        b = self.block
        try:
            b.f(*b.args)
        except BaseException as e:
            t, c = self.threadIdx, self.blockIdx
            self.exception = e
            e.add_note(f"in simulated thread tid=[{t.x}, {t.y}, {t.z}] "
                       f"ctaid=[{c.x}, {c.y}, {c.z}]")
            b.abort = True

    def syncthreads(self):
        b = self.block
        if b.abort:
            raise RuntimeError(_ABORTED)
        b.arrived.append(self)
        b.run_next()
        self.turn.acquire()
        if b.abort:
            raise RuntimeError(_ABORTED)

    def _vote(self, value, combine):
        t = self.threadIdx
        self.block.state[(t.x, t.y, t.z)[:self.block.state.ndim]] = value
        self.syncthreads()
        result = combine(self.block.state)
        self.syncthreads()
        return result

    def syncthreads_count(self, value):
        return self._vote(value, np.count_nonzero)

    def syncthreads_and(self, value):
        return self._vote(value, lambda s: 1 if np.all(s) else 0)

    def syncthreads_or(self, value):
        return self._vote(value, lambda s: 1 if np.any(s) else 0)


class _Worker(threading.Thread):
    """A Python thread that runs simulated CUDA threads, one after another; idle
    ones wait in a pool for the next block (starting threads was most of what a
    small block cost)."""

    def __init__(self):
        super().__init__(daemon=True, name="simulated CUDA thread")
        self.go = threading.Semaphore(0)
        self.thread: _BlockThread | None = None

    @classmethod
    def take(cls) -> _Worker:
        with _pool_lock:
            if _idle_workers:
                return _idle_workers.pop()
        worker = cls()
        worker.start()
        return worker

    def start_thread(self, t: _BlockThread) -> None:
        self.thread = t
        self.go.release()

    def run(self):
        while True:
            self.go.acquire()
            t = self.thread
            assert t is not None
            _local.thread = t
            try:
                t.run()
            finally:
                _local.thread = None
                self.thread = None
                with _pool_lock:
                    _idle_workers.append(self)
                t.block.run_next()


_idle_workers: list[_Worker] = []
_pool_lock = threading.Lock()


#: blocks that synchronise run so far: every other one runs its threads last to
#: first, so that a missing barrier shows whichever way the data flows between
#: threads (a reader before its writer in one order is after it in the other)
_blocks_run = 0


def _run_threaded(f, args, block_dim, grid_point) -> None:
    global _blocks_run
    threads = [_BlockThread(block_dim, grid_point, p) for p in np.ndindex(*block_dim)]
    _blocks_run += 1
    if _blocks_run % 2:
        threads.reverse()
    block = _Block(f, args, block_dim, threads)
    for t in threads:
        t.block = block
    block.run_next()
    block.finished.acquire()
    errors = [t.exception for t in threads if t.exception is not None]
    first = [e for e in errors if _ABORTED not in str(e)]
    if first or errors:
        raise (first or errors)[0]


def _code_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def synchronises(fn, _seen=None) -> bool:
    """Whether kernel *fn* (or a device function it calls) uses block-level code."""
    key = id(fn)
    if key in _synchronising:
        return _synchronising[key]
    seen = _seen if _seen is not None else set()
    if key in seen:
        return False
    seen.add(key)
    names = _code_names(fn.__code__)
    result = bool(names & BLOCK_LEVEL)
    if not result:
        for name in names:
            callee = fn.__globals__.get(name)
            inner = getattr(callee, "fn", None) or getattr(callee, "py_func", None)
            if isinstance(inner, types.FunctionType) and synchronises(inner, seen):
                result = True
                break
    if _seen is None:
        _synchronising[key] = result
    return result


_shared_lock = threading.Lock()


def _shared_array(self, shape, dtype, alignment=None):
    """``FakeCUDAShared.array`` with an atomic look-up (the simulator's own: one
    array per calling line of the kernel, dynamic shared memory for size 0)."""
    import sys

    from numba.cuda import types as nb_types
    from numba.cuda.np import numpy_support

    if alignment is not None:
        raise RuntimeError("Array alignment is not supported in cudasim")
    if isinstance(dtype, nb_types.Type):
        dtype = numpy_support.as_dtype(dtype)
    if shape == 0:
        count = self._dynshared_size // dtype.itemsize
        return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
    frame = sys._getframe(1)
    caller = (frame.f_code.co_filename, frame.f_lineno)
    with _shared_lock:
        array = self._allocations.get(caller)
        if array is None:
            array = self._allocations[caller] = np.empty(shape, dtype)
    return array


def install() -> None:
    """Patch the simulator (once per process); nothing when threads are asked for."""
    global _installed
    if _installed or os.environ.get("AXISOPS_TEST_THREADED_SIMULATOR"):
        return
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator import kernelapi

    kernelapi.threading = _Threading("threading")
    kernelapi.FakeCUDAShared.array = _shared_array
    def run(self, grid_point, *args):
        if synchronises(self._f):
            _run_threaded(self._f, args, self._block_dim, grid_point)
            return None
        try:
            for thread_point in np.ndindex(*self._block_dim):
                _local.thread = _SequentialThread(self._block_dim, grid_point, thread_point)
                self._f(*args)
        finally:
            _local.thread = None
        return None

    sim_kernel.BlockManager.run = run
    _installed = True

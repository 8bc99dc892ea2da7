"""The one place that compiles kernels and runs them.

DESIGN NOTE: how a kernel runs on several cores, and why not Numba's ``parallel=True``.

Every kernel is a *serial* ``nogil`` Numba function whose work is a list of tasks;
its first two arguments ``part, parts`` say which contiguous share of the tasks it
runs (:func:`part_range`). :func:`run` calls it once on the calling thread for
small inputs (``part, parts = 0, 1``), or splits the tasks into parts that the
calling thread and the workers of a small pool of our own take in turn. The
result never depends on the split: each task writes its own outputs.

Measured on these machines (2 cores) before choosing:

* Numba's OpenMP layer (``parallel=True``) spins its workers after every
  parallel region: 9 ms of CPU in the 200 ms after a call, taken from whatever
  runs next. ``OMP_WAIT_POLICY=passive`` stops the spin but costs 50 us per call
  (waking a sleeping thread takes that long on these virtual machines), and it
  must be set before libgomp loads, which PyTorch may already have done with
  its own copy. A child forked after a parallel region dies ("fork() called from
  a process already using GNU OpenMP"). TBB is fork-safe but was 15-50% slower.
* Compiling with ``parallel=True`` is most of a kernel's first-call time: the
  first argmax along a middle axis took 16.6 s parallel, 6.0 s serial, and
  2.8 s serial without Numba-level ``inline="always"`` helpers (sum 7.0 -> 1.3 s,
  cummax 5.4 -> 1.5 s).
* A pool of Python threads over serial ``nogil`` kernels costs the same ~50 us
  wake-up as passive OpenMP and nothing else: the workers block on a lock
  between calls (no CPU after a call returns), a forked child simply starts a
  new pool (``os.register_at_fork``), and any number of threads may call at once
  (a caller that finds the pool busy runs its kernel on its own thread, which
  with Dask's threaded scheduler is what every worker should do anyway).

So inputs below :data:`PARALLEL_MIN_WORK` elements run serially on the calling
thread, with no thread machinery at all, and larger ones use the pool.

Later measured (stop 56): a pool worker woken for a call then also waits for the
GIL, which the caller holds while it starts its own part, 30 us more. A planned
call (argument types fixed, so its kernel's machine code has one address) now
splits from :data:`OMP_MIN_WORK` on OpenMP's threads through one small
``parallel=True`` loop that calls that address (:mod:`axisops._omp`): ~1.5 us to
start, no GIL, nothing of the kernel recompiled; where the calibration says it
pays, and never in a child forked from a process that used it.

Options are fixed here and never read from the environment: Numba's on-disk
cache key ignores compiler flags, so flags that changed between runs would load
stale machine code.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import os
import pickle
import threading
import time
import warnings

from numba import njit
from numba.core.errors import NumbaPerformanceWarning

from . import _cache_stamp

# before any function of the package is decorated: its cache files are stamped
# with the modules it imports too
_cache_stamp.install()

# Reference counting. Kernels and helpers are compiled without Numba's reference
# counting (its runtime, NRT) unless they allocate (``nrt=True``). With it, every
# array view a loop makes (a slice, a reshape) and hands to a helper that LLVM
# does not inline costs an atomic increment and decrement of the array's shared
# count: 55 % of an argmax of a (256, 512) float32 array along its rows, 23 % of
# a max of 1M elements (perf, AMD EPYC Zen 5). Without it a view is just its pointer and strides. That is
# safe because a kernel's views never outlive its call (the caller's arrays own
# the memory) and a helper without it never returns an array, which a caller
# with reference counting would release once too often.


# ------------------------------------------------------------------ disk cache of factory closures


def _stable(value):
    """*value* described by what it is, not by its identity: a compiled function
    by its module, name, code and (recursively) its closure's contents. Numba
    keys a cached closure by the pickle of its closure's contents, and a
    dispatcher pickles with an id drawn anew in every process."""
    from numba.core import types
    from numba.core.dispatcher import Dispatcher

    if isinstance(value, Dispatcher):
        f = value.py_func
        cells = tuple(_stable(c.cell_contents) for c in f.__closure__ or ())
        return ("compiled", f.__module__, f.__qualname__, _code(f.__code__), cells)
    if isinstance(value, types.Type):  # its pickle holds a code numbered per process
        return ("numba type", str(value))
    if isinstance(value, tuple):
        return tuple(_stable(v) for v in value)
    return value


def _code(code) -> tuple:
    """A code object by its instructions, names and constants (``marshal.dumps``
    marks objects referred to more than once, which compiling a function changes)."""
    consts = tuple(_code(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_freevars, consts)


def stable_cache(dispatcher):
    """Give *dispatcher* (``njit(cache=True)`` of a factory's closure that calls
    other compiled closures, not yet compiled) an on-disk cache keyed by
    :func:`_stable` contents: with Numba's own key, such a function missed the
    cache in every new process and compiled again (1.5-2.8 s for a whole-array
    ``max`` or a 2-D ``argmax``), adding a file each time. Returns it."""
    from numba.core import serialize
    from numba.core.caching import FunctionCache

    class StableCache(FunctionCache):
        def _index_key(self, sig, codegen):
            f = self._py_func
            cells = tuple(_stable(c.cell_contents) for c in f.__closure__ or ())
            try:
                described = pickle.dumps(cells)
            except Exception:  # a function or other object pickle refuses: Numba's way
                described = serialize.dumps(cells)
            digest = hashlib.sha256(pickle.dumps(_code(f.__code__)) + described).hexdigest()
            return (sig, codegen.magic_tuple(), digest)

    dispatcher._cache = StableCache(dispatcher.py_func)
    return dispatcher


def compiled(signature, **options):
    """Decorator: ``njit(signature, cache=True, **options)`` with :func:`stable_cache`,
    compiled for *signature* only (calls of other types raise TypeError)."""
    def wrap(fn):
        dispatcher = stable_cache(njit(cache=True, **options)(fn))
        dispatcher.compile(signature)
        dispatcher.disable_compile()
        return dispatcher
    return wrap


def direct(dispatcher):
    """The one compiled function of a :func:`compiled` *dispatcher*, to call
    without Numba's dispatch (typing each argument and matching it to the
    signature: 0.19 of a 0.67 us lanes entry of a (4, 256) float32 sum, AMD EPYC
    Zen 4). Unchecked: it unboxes its arguments as the signature's types, so its
    caller passes exactly those (an array of the signature's dtype and
    dimensions, a Python int within int64)."""
    (found,) = dispatcher.overloads.values()
    return found.entry_point


def kernel(fn=None, *, parfor_passes: bool = False, variant: str | None = None,
           nrt: bool = False):
    """Compile *fn* lazily as a serial, ``nogil``, disk-cached kernel.

    *fn* takes ``part, parts`` first and runs its share of the tasks (see
    :func:`part_range`); :func:`run` calls it. No fast-math flags: a kernel's
    float arithmetic runs in the order written (reassociated products overflowed
    and underflowed where the sequential product is finite); a sum loop that
    may be reordered is a :func:`helper` with ``reassociate``.

    ``parfor_passes`` compiles with Numba's ``parallel=True`` although the kernel
    has no ``prange``, so no thread is ever started (Numba's threading layer is
    not even loaded). Measured on one thread (CPU time, medians): with their
    helpers inlined, the window kernels ran 2.3x faster this way (unfold of an
    (8, 64, 56, 56) image 7.8 -> 3.4 ms, channels-last 9.7 -> 6.3, fold 3.1 ->
    2.7), while reductions and scans got 2.5-4x slower (argmax along axis 0 9.6
    -> 26 ms, cummax 10.4 -> 43): so it is chosen per kernel.

    ``variant`` names the constants of a kernel that a :func:`factory` makes
    (letters, digits and ``_``); it is added to the kernel's qualified name, which
    Numba's name of its machine code is made of, with the types of the arguments
    and a counter of the process. Without it every variant of a factory's kernel
    had one name, and two processes' counters agree often enough that a kernel
    loaded from the disk cache could carry the name of another variant compiled
    here: a look-up of the machine code by name (``kernels.entry.kernel_address``)
    then found the other one (the row-order sum for the lane-order one, in CI).

    ``nrt`` keeps Numba's reference counting (its runtime, NRT), which a kernel
    that allocates scratch arrays needs; the others are compiled without it (see
    the note above).
    """
    def wrap(f):
        if variant is not None:
            f.__qualname__ = f"{f.__qualname__}_{variant}"
        options = {"parallel": True} if parfor_passes else {}
        dispatcher = stable_cache(njit(cache=True, nogil=True, _nrt=nrt, **options)(f))
        if parfor_passes:
            _compile_quietly(dispatcher)
        return dispatcher
    return wrap(fn) if fn is not None else wrap


def _compile_quietly(dispatcher) -> None:
    """Compile *dispatcher* without Numba's note that ``parallel=True`` found no
    loop to run in parallel: for ``parfor_passes`` kernels that is by design."""
    compile_signature = dispatcher.compile

    def compile_quietly(sig):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaPerformanceWarning)
            return compile_signature(sig)

    dispatcher.compile = compile_quietly


def helper(fn=None, *, inline: bool = False, reassociate: bool = False, nrt: bool = False,
           unchecked_division: bool = False):
    """A small compiled function called from kernels.

    LLVM inlines small callees on its own; Numba-level ``inline="always"``
    multiplies compile time and is used only where a measurement shows it pays.

    ``reassociate`` lets LLVM reorder this function's float additions (``reassoc``
    only: NaN and inf semantics are untouched), so that a sum loop vectorises. A
    helper like that is never Numba-inlined: its body would be compiled with the
    caller's flags; LLVM inlines it with the flags on its own instructions only.
    Never for a product: partial products overflow and underflow on their own.

    ``nrt`` keeps reference counting for a helper that allocates; the others are
    compiled without it (see the note above :func:`kernel`) and must not return an
    array, which :func:`_no_array_results` checks as each signature compiles. (A Numba-inlined
    helper takes its caller's flags.)

    ``unchecked_division`` compiles a float division without Python's test of a
    zero divisor (Numba's ``error_model="numpy"``: x / 0 is inf or NaN), which
    keeps a loop that divides from vectorising; only for a divisor that cannot be 0.
    """
    if inline and reassociate:
        raise ValueError("a reassociating helper must not be inlined by Numba")

    def wrap(f):
        options = {"cache": True, "_nrt": nrt}
        if unchecked_division:
            options["error_model"] = "numpy"
        if reassociate:
            options["fastmath"] = {"reassoc"}
        elif inline:
            options["inline"] = "always"
        dispatcher = stable_cache(njit(**options)(f))
        if not nrt:
            _no_array_results(dispatcher)
        return dispatcher
    return wrap(fn) if fn is not None else wrap


def _no_array_results(dispatcher) -> None:
    """Refuse, as each signature of *dispatcher* compiles, a result type that
    holds an array (see the note above :func:`kernel`)."""
    from numba.core import types

    compile_signature = dispatcher.compile

    def holds_array(t) -> bool:
        if isinstance(t, types.Array):
            return True
        parts = getattr(t, "types", ()) if isinstance(t, types.BaseTuple) else ()
        return any(holds_array(u) for u in parts)

    def compile_checked(sig):
        entry = compile_signature(sig)
        for compiled in dispatcher.overloads.values():
            result = compiled.signature.return_type
            if holds_array(result):
                raise TypeError(f"{dispatcher.py_func.__qualname__} returns {result}: a "
                                "helper compiled without reference counting must not return "
                                "an array (give it nrt=True)")
        return entry

    dispatcher.compile = compile_checked


@helper
def part_range(tasks, part, parts):
    """The tasks ``[lo, hi)`` of share *part* of *parts* (contiguous, in order)."""
    return part * tasks // parts, (part + 1) * tasks // parts


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
    def init():
        try:
            from numba.core.compiler_lock import global_compiler_lock
            from numba.core.registry import cpu_target
            with global_compiler_lock:
                cpu_target.typing_context.refresh()
                cpu_target.target_context.refresh()
        except Exception:  # pragma: no cover - the first call does it anyway
            pass

    threading.Thread(target=init, name="axisops-numba-init", daemon=True).start()


# ------------------------------------------------------------------ the thread pool

#: Below this many elements of work a kernel runs on the calling thread only.
#: Waking a pool worker costs about 50 us here, so the second core pays only for
#: work of a few hundred microseconds (measured with the size sweep). A caller
#: whose elements cost less than a scan's counts fewer units of work per element
#: (the reductions count an eighth: ``reduce._ELEMENTS_PER_WORK``).
PARALLEL_MIN_WORK = 1 << 18
#: Parts per thread: more parts than threads balance the load when a core is
#: slowed by another process (each part is taken by whichever thread is free).
PARTS_PER_THREAD = 4


def _default_threads() -> int:
    """The cores the process may run on, or fewer where ``OMP_NUM_THREADS`` says so.

    ``OMP_NUM_THREADS`` is how a parent tells its workers that it runs one per
    core: Dask's nanny sets it to 1 in every worker process, as do job schedulers,
    and NumPy's BLAS and PyTorch obey it. Two distributed workers on two cores
    each splitting their calls over both cores ran sum along a chunked axis 20%
    slower than with serial calls (dask's own sum is serial).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    omp = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if omp.isdigit() and int(omp) >= 1:  # OpenMP's list form gives the outer level first
        return min(cores, int(omp))
    return cores


_threads = _default_threads()


def thread_limit(n: int | None = None) -> int:
    """The number of threads a large call may use; with *n*, set it.

    The default is the number of cores the process may run on, or
    ``OMP_NUM_THREADS`` when that is set to fewer (Dask's distributed workers set
    it to 1: their tasks already run one per core); ``thread_limit(1)`` keeps
    every call on the calling thread. Results never depend on it.

    Parameters
    ----------
    n : int or None, optional
        The new number of threads, >= 1. Default None: only read the number.

    Returns
    -------
    int
        The number in force before the call.

    Raises
    ------
    ValueError
        If ``n`` is not a Python int >= 1 (a bool, a NumPy integer or a float
        included).

    See Also
    --------
    pool_limit : The memory kept for reuse, the other process-wide setting.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> old = axisops.thread_limit(1)
    >>> axisops.thread_limit(old)
    1
    """
    global _threads
    old = _threads
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"thread_limit: expected a number of threads >= 1, got {n!r}")
        _threads = n
    return old


class _Job:
    """One parallel call: the kernel, its arguments and the parts still to take.

    Whoever is free takes the next part (the caller first of all), and the caller
    waits only for parts that were taken: a worker that wakes up late, because
    its core was busy with another process, finds nothing left and goes back to
    sleep, and the call has not waited for it.
    """

    __slots__ = ("kern", "args", "parts", "next", "completed", "lock", "finished", "error")

    def __init__(self, kern, args, parts):
        self.kern = kern
        self.args = args
        self.parts = parts
        self.next = 0
        self.completed = 0
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.error = None

    def work(self) -> None:
        """Run parts until none is left to take."""
        while True:
            with self.lock:
                part = self.next
                self.next += 1
            if part >= self.parts:
                return
            try:
                self.kern(part, self.parts, *self.args)
            except BaseException as exc:  # pragma: no cover - kernels trust their arguments
                self.error = exc
            with self.lock:
                self.completed += 1
                if self.completed == self.parts:
                    self.finished.set()


class _Worker:
    """A daemon thread that sleeps on a lock until it is handed a job.

    ``idle`` is held while the worker has a job: a caller hands jobs only to
    workers it can take ``idle`` from, so a worker that has not yet woken up
    for the previous job is simply left out of the next one.
    """

    def __init__(self, name: str):
        self.wake = threading.Lock()
        self.wake.acquire()
        self.idle = threading.Lock()
        self.job: _Job | None = None
        threading.Thread(target=self._loop, name=name, daemon=True).start()

    def _loop(self) -> None:
        while True:
            self.wake.acquire()
            try:
                assert self.job is not None  # set before wake is released
                self.job.work()
            finally:
                self.job = None
                self.idle.release()


class _Pool:
    """Workers for :func:`run`; one call at a time uses them (``busy``)."""

    def __init__(self) -> None:
        self.busy = threading.Lock()
        self.workers: list[_Worker] = []

    def run(self, kern, args, threads: int) -> None:
        while len(self.workers) < threads - 1:
            self.workers.append(_Worker(f"axisops-worker-{len(self.workers) + 1}"))
        job = _Job(kern, args, threads * PARTS_PER_THREAD)
        for w in self.workers[:threads - 1]:
            if w.idle.acquire(blocking=False):
                w.job = job
                w.wake.release()
        job.work()
        job.finished.wait()
        if job.error is not None:  # pragma: no cover
            raise job.error


_pool = _Pool()


def _after_fork_in_child() -> None:
    # The parent's workers do not exist in a child, and a lock another thread
    # held at the fork would never be released: start afresh.
    global _pool
    _pool = _Pool()


def _hold_compiler_lock() -> None:
    # A fork while another thread compiles would leave Numba's compiler lock held
    # forever in the child; wait for the compile to finish instead.
    try:
        from numba.core.compiler_lock import global_compiler_lock
        global_compiler_lock.acquire()
    except Exception:  # pragma: no cover
        pass


def _release_compiler_lock() -> None:
    try:
        from numba.core.compiler_lock import global_compiler_lock
        global_compiler_lock.release()
    except Exception:  # pragma: no cover
        pass


def _child_after_fork() -> None:
    _release_compiler_lock()
    _after_fork_in_child()
    import sys
    omp = sys.modules.get("axisops._omp")
    if omp is not None:  # GNU OpenMP dies in a child of a process that used it
        omp.enabled = False  # type: ignore[attr-defined]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_hold_compiler_lock, after_in_parent=_release_compiler_lock,
                        after_in_child=_child_after_fork)


def runs_in_parallel(work: int) -> bool:
    """Whether :func:`run` would split *work* elements between threads (when the
    pool is free): for callers whose results are the same either way and who can
    do less work on one thread."""
    return work >= PARALLEL_MIN_WORK and _threads >= 2


#: Work (as :func:`run` counts it) from which a planned call may split between
#: OpenMP's threads (:mod:`axisops._omp`), whose wake-up costs ~1.5 us instead of
#: the pool's 30-50: about 15 us of a sum's work. Calibrated per kernel and size
#: class as :func:`run` is.
OMP_MIN_WORK = 1 << 15


def _omp_split(work: int) -> bool:
    """Whether a planned call of *work* may go to OpenMP's threads."""
    return CALIBRATE and _threads >= 2 and OMP_MIN_WORK <= work and _omp_module().enabled


def split_from() -> int:
    """The work from which a planned call may split between threads: where OpenMP's
    threads may take it, :data:`OMP_MIN_WORK`, else :data:`PARALLEL_MIN_WORK`. A
    compiled entry that runs serially leaves larger calls to the plan."""
    if CALIBRATE and _threads >= 2 and _omp_module().enabled:
        return OMP_MIN_WORK
    return PARALLEL_MIN_WORK


@functools.cache
def _omp_module():
    from . import _omp
    return _omp


def _omp_call(kern, work: int, address: int, args: tuple, phase: int = -1,
              site: int = 0, serial=None) -> bool:
    """*kern* on *args* (``part, parts`` left out), on OpenMP's threads where the
    calibration of its size class (and of a scan's *phase*, timed apart; of the
    plan *site*, see :func:`run`) says that
    pays; False, having run nothing, where it found they do not: the caller goes on
    to the pool (:func:`run`), whose own calibration may still find a split that pays
    (a (64, 512, 1024) float32 sum along its rows: OpenMP's verdict serial, 4.1 ms;
    the pool's split 2.3). *serial* is the caller's own serial call, where it is
    not *kern* on *args* on one thread (a plan's, see :func:`planned_run`): the
    split is weighed against it."""
    omp = _omp_module()
    key = (kern, work.bit_length(), -2 if phase < 0 else -3 - phase, site)
    verdict = _SPLIT_PAYS.get(key)
    parts = min(_threads, _omp_threads())
    if verdict is True:
        _taken(key)
        if omp.awake():  # threads asleep cost more to wake than the split gains
            omp.run_parts(address, parts, args)
        elif serial is not None:
            serial()
        else:
            kern(0, 1, *args)
        omp.called()
        return True
    if verdict is False:
        _taken(key)
        return False
    _calibrating(key, verdict, kern, work, args, parts,
                 split_call=lambda: omp.run_parts(address, parts, args) or True,
                 serial=serial)
    return True


@functools.cache
def _omp_threads() -> int:
    from numba.core import config
    return int(config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]  # set at import


def planned_run(kern):
    """:func:`run` for a plan, whose key fixes the type of every argument it passes.

    The returned ``call(work, base, split, whole, *rest)`` runs *kern* on
    ``(base, *split, *rest)`` through :func:`run` when the work is large enough to
    split, else on ``(base, *whole, *rest)`` on the calling thread through the
    kernel's compiled function for those argument types, found once at the first
    such call: no Numba dispatch (typing every argument and choosing an overload:
    0.95 -> 0.54 us for a sum's kernel here). Only for arguments whose Numba types
    are the same on every call, as a plan's are.
    """
    entry = None
    address = None
    site = next(_SITES)

    def serial(base, whole, rest):
        nonlocal entry
        if entry is None:
            entry = entry_point(kern, (0, 1, base, *whole, *rest))
        entry(0, 1, base, *whole, *rest)

    def call(work, base, split, whole, *rest):
        nonlocal address
        if _omp_split(work) or runs_in_parallel(work):
            # the split's tasks may walk the data in another order than the
            # serial call's (a tall table's columns: by column blocks, not by
            # rows): the split is weighed against the serial call itself (a
            # (10000, 100) float32 sum along axis 0: 140 us serially; its split
            # layout on one thread 500, on two 400)
            whole_call = functools.partial(serial, base, whole, rest)
            if _omp_split(work):
                if address is None:
                    address = _omp_module().prepare(kern, (0, 1, base, *split, *rest))
                if address and _omp_call(kern, work, address, (base, *split, *rest),
                                         site=site, serial=whole_call):
                    return
            if runs_in_parallel(work):
                run(kern, work, base, *split, *rest, site=site, serial=whole_call)
                return
        serial(base, whole, rest)

    return call


def planned_call(kern):
    """:func:`run` of *kern* for a plan whose key fixes the Numba type of every
    argument: ``call(work, *args)`` splits large work between threads as :func:`run`
    does, and runs small work on the calling thread through the kernel's compiled
    function for those types (found at the first such call), without Numba's
    dispatch. A read-only flag the key does not fix changes no argument's data
    model (the kernels read their inputs only)."""
    entry = None
    address = None
    site = next(_SITES)

    def call(work, *args):
        nonlocal entry, address
        if _omp_split(work):
            if address is None:
                address = _omp_module().prepare(kern, (0, 1, *args))
            if address and _omp_call(kern, work, address, args, site=site):
                return
        if runs_in_parallel(work):
            run(kern, work, *args, site=site)
            return
        if entry is None:
            entry = entry_point(kern, (0, 1, *args))
        entry(0, 1, *args)

    return call


def entry_point(kern, args: tuple, readonly: tuple = ()):
    """*kern*'s compiled function for the Numba types of *args* (compiled or loaded
    from the cache first if needed): a call to it skips Numba's dispatch. Only for
    calls whose arguments have those types every time (a plan's; an entry's whose
    caller checked dtype, dimensions, layout and alignment, and ints within int64):
    it unboxes them unchecked. The arrays at the positions *readonly* are typed
    read-only, so that one function serves read-only and writeable arrays alike
    (the unboxing does not look at the flag)."""
    from numba import typeof

    types = [typeof(a) for a in args]
    for k in readonly:
        types[k] = types[k].copy(readonly=True)
    return kern.compile(tuple(types))


def run(kern, work: int, *args, site: int = 0, serial=None) -> None:
    """Call *kern* with *args* for all its tasks: serially when *work* (elements)
    is small, else on the pool too, where that was measured to pay for this
    kernel at this size (:data:`CALIBRATE`), from this *site*: a plan's own
    number (:data:`_SITES`), so that the layouts one kernel serves are measured
    apart (a cummax of (262144, 4) float32 along axis 0 took the split that paid
    for rows of the same size: 2.0 ms, serial 0.84), or 0 for a caller's own.

    A call that finds the pool busy (another thread is using it) runs on its own
    thread: concurrent callers never wait for each other. *serial*, where given,
    is the caller's call on one thread in place of *kern* on *args* (a plan's,
    see :func:`planned_run`).
    """
    threads = _threads
    if serial is None:
        serial = functools.partial(kern, 0, 1, *args)
    if work < PARALLEL_MIN_WORK or threads < 2:
        serial()
        return
    if CALIBRATE:
        # a scan's phases (its first argument, an int) are timed apart
        key = (kern, work.bit_length(), args[0] if args and type(args[0]) is int else -1, site)
        verdict = _SPLIT_PAYS.get(key)
        if verdict is False:
            _taken(key)
            serial()
            return
        if verdict is not True:
            _calibrating(key, verdict, kern, work, args, threads, serial=serial)
            return
        _taken(key)
    _on_pool(kern, args, threads, serial)


#: Whether :func:`run` measures, per kernel (a family's variant: its loop order
#: and dtype class) and per size class (powers of two of the work), whether the
#: pool pays, instead of trusting :data:`PARALLEL_MIN_WORK` alone. Waking a
#: worker costs 10-50 us on these machines; a kernel whose work in that class is
#: cache-bound or short gains nothing from a second core, one that streams
#: memory gains up to 2x. The first :data:`CALIBRATION_SAMPLES` calls of a class
#: each way alternate, serial first (a call that compiled the kernel is not a
#: sample); the pool is chosen for the next calls if its time per unit of work
#: is below :data:`SPLIT_MARGIN` of the serial one, and measured again after
#: :data:`RECHECK_FIRST` calls, then after twice as many each time. Results never
#: depend on it: a kernel's tasks depend on the shape only.
#: Tests that split every kernel turn it off.
CALIBRATE = True
CALIBRATION_SAMPLES = 2
SPLIT_MARGIN = 0.9
#: (kernel, size class, phase, site) -> True (split), False (serial) or the timings
#: so far; the oldest dropped beyond :data:`MOST_VERDICTS` (measured again if needed)
_SPLIT_PAYS: dict = {}
MOST_VERDICTS = 4096
#: Numbers of the plans' call sites (see :func:`run`)
_SITES = itertools.count(1)
#: Calls a verdict decides before it is measured again (then twice as many, up to
#: :data:`RECHECK_MOST`): :data:`RECHECK_FIRST` where one way was less than twice
#: as fast as the other, else :data:`RECHECK_CLEAR`. The first samples of a
#: process are taken while the other core may be busy and OpenMP's threads
#: asleep, and a noisy machine can tip them either way: a sum of (4, 262144)
#: float32 along axis 1 kept a serial verdict from its first calls in one run
#: (67 us a call) where the split takes 43 (AMD EPYC Zen 4, 2 vCPUs). A recheck
#: costs its two calls the other way (a split cummax of (262144, 4) float32 along
#: axis 0: 2.5 ms against 0.84: a clear verdict, rechecked rarely).
RECHECK_FIRST = 16
RECHECK_CLEAR = 256
RECHECK_MOST = 1 << 16
#: (kernel, size class, phase, site) -> [calls left before the recheck, the interval]
_RECHECK: dict = {}


def _taken(key) -> None:
    """Count one call decided by *key*'s verdict; at the end of its interval the
    verdict is opened again, and the next calls measure it afresh."""
    left = _RECHECK.get(key)
    if left is None:
        _RECHECK[key] = [RECHECK_FIRST - 1, RECHECK_FIRST]
        return
    left[0] -= 1
    if left[0] <= 0:
        left[1] = min(2 * left[1], RECHECK_MOST)
        left[0] = left[1]
        _SPLIT_PAYS.pop(key, None)


def _calibrating(key, samples, kern, work: int, args: tuple, threads: int,
                 split_call=None, serial=None) -> None:
    """One call of :func:`run` while *key*'s verdict is open: timed, serial (by
    *serial* where given, else *kern* on *args* on this thread) or on the pool (or
    by *split_call*, which returns whether it split) in turn, and the verdict taken
    once both ways have their samples."""
    if serial is None:
        serial = functools.partial(kern, 0, 1, *args)
    if samples is None:
        while len(_SPLIT_PAYS) >= MOST_VERDICTS:  # the oldest first (dicts keep order)
            oldest = next(iter(_SPLIT_PAYS))
            del _SPLIT_PAYS[oldest]
            _RECHECK.pop(oldest, None)
        samples = _SPLIT_PAYS[key] = ([], [], [False])
    serial_times: list[float] = samples[0]
    split_times: list[float] = samples[1]
    if split_call is None:  # the pool: the two ways in turn
        on_pool = len(split_times) < len(serial_times)
    else:
        # OpenMP's threads: the serial samples first, then splits back to back,
        # the first of which is not a sample: it wakes the threads, which a
        # decided split never does (it runs serially where they sleep, see
        # _omp.awake). Taken in turn, every split sample of a (4, 262144)
        # float32 sum woke them: 343-374 us against 91-121 serially, and the
        # verdict stayed serial where back-to-back splits take 78-100 (AMD EPYC Zen 3).
        on_pool = len(serial_times) >= CALIBRATION_SAMPLES
    warm = samples[2][0]
    samples[2][0] = on_pool
    compiled = len(getattr(kern, "signatures", ()))
    start = time.perf_counter()
    if on_pool:
        if not (split_call() if split_call is not None
                else _on_pool(kern, args, threads, serial)):
            return  # the pool was busy: it ran serially, which says nothing of the pool
    else:
        serial()
    if len(getattr(kern, "signatures", ())) != compiled:
        return  # it compiled (or loaded) the kernel first: not a sample
    if on_pool and split_call is not None and not warm:
        return  # the threads' wake-up
    (split_times if on_pool else serial_times).append((time.perf_counter() - start) / work)
    if len(serial_times) >= CALIBRATION_SAMPLES and len(split_times) >= CALIBRATION_SAMPLES:
        ratio = min(split_times) / max(min(serial_times), 1e-30)
        _SPLIT_PAYS[key] = ratio < SPLIT_MARGIN
        interval = RECHECK_FIRST if 0.5 < ratio < 2 else RECHECK_CLEAR
        previous = _RECHECK.get(key)
        if previous is not None:  # a recheck: the interval grows
            interval = max(interval, previous[1])
        _RECHECK[key] = [interval, interval]


def split_verdicts() -> dict:
    """What :func:`run` has measured so far: ``{(kernel name, size class): True
    (split) / False (serial) / None (being measured)}``, with a scan's phase
    after the size class, and ``"openmp"`` last for a planned call's split between
    OpenMP's threads (:mod:`axisops._omp`)."""
    return {(getattr(k, "__name__", str(k)), c,
             *(("openmp",) if phase == -2 else (-3 - phase, "openmp") if phase <= -3
               else (phase,) if phase >= 0 else ())):
            v if isinstance(v, bool) else None
            for (k, c, phase, _site), v in list(_SPLIT_PAYS.items())}


def _on_pool(kern, args: tuple, threads: int, serial=None) -> bool:
    """Run *kern* split between the calling thread and the pool; serially (by
    *serial* where given) when another thread is using the pool (then False)."""
    pool = _pool
    if not pool.busy.acquire(blocking=False):
        if serial is not None:
            serial()
        else:
            kern(0, 1, *args)
        return False
    try:
        pool.run(kern, args, threads)
    finally:
        pool.busy.release()
    return True


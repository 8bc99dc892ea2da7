"""Where the time of a small call goes: the per-step cost (us) of one call of each
operator family on a (16, 64) float32 array, beside NumPy, PyTorch and bottleneck,
and the 1-D calls of 1000 float64 that bottleneck is best at.

    python benchmarks/call_floor.py > benchmarks/call_floor.md

Steps: *total* is the public call; *key + look-up* a plan key of the same kind;
*kernel* the compiled entry points the call reaches, called alone with the same
arguments (recorded by a spy on ``_jit.entry_point`` / ``gather.run``);
*np.empty* the result's allocation; *rest* what is left: the Python of the public
function, the dispatch and the plan. Best of 7 repeats of 20000 calls (CPU time
is noisy on shared machines: compare within one run).
"""
from __future__ import annotations

import gc
import platform
import timeit
import warnings

import numpy as np

import axisops
from axisops import _jit
from axisops import gather as _gather
from axisops import scan as _scan
from axisops._plan import PlanCache, array_key, axis_key

_recorded: list = []
_entry_point, _gather_run = _jit.entry_point, _gather.run


def _spy_entry(kern, args):
    entry = _entry_point(kern, args)

    def wrapped(*a):
        _recorded.append((entry, a))
        return entry(*a)
    return wrapped


def _spy_run(kern, work, *args):
    _recorded.append((kern, (0, 1) + args))
    return _gather_run(kern, work, *args)


def _clear_plans() -> None:
    with warnings.catch_warnings():  # isinstance on some of torch's objects warns
        warnings.simplefilter("ignore")
        caches = [obj for obj in gc.get_objects() if isinstance(obj, PlanCache)]
    for cache in caches:
        cache.clear()


def compiled_calls(f) -> list:
    """The compiled calls (entry, arguments) one call of *f* makes, from fresh plans."""
    _recorded.clear()
    _jit.entry_point = _scan.entry_point = _spy_entry
    _gather.run = _spy_run
    _clear_plans()
    try:
        f()
    finally:
        _jit.entry_point = _scan.entry_point = _entry_point
        _gather.run = _gather_run
        _clear_plans()
    return list(_recorded)


def best_us(f, number: int = 20000) -> float:
    f()
    return min(timeit.repeat(f, number=number, repeat=7)) / number * 1e6


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    import bottleneck as bn
    import torch
    torch.set_num_threads(1)
    axisops.thread_limit(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    rows = np.array([3, 0, 15, 7])
    idx = rng.integers(0, 64, (16, 64))
    upd = rng.standard_normal((16, 64)).astype(np.float32)
    tx, trows, tidx, tupd = (torch.from_numpy(a) for a in (x, rows, idx, upd))

    def np_scatter():
        out = x.copy()
        np.add.at(out, (np.arange(16)[:, None], idx), upd)
        return out

    cases = {
        "sum": (lambda: axisops.sum(x, 1), (16,), lambda: np.sum(x, 1), lambda: torch.sum(tx, 1),
                lambda: bn.nansum(x, 1)),
        "max": (lambda: axisops.max(x, 1), (16,), lambda: np.max(x, 1), lambda: torch.amax(tx, 1),
                lambda: bn.nanmax(x, 1)),
        "argmax": (lambda: axisops.argmax(x, 1), (16,), lambda: np.argmax(x, 1),
                   lambda: torch.argmax(tx, 1), lambda: bn.nanargmax(x, 1)),
        "cumsum": (lambda: axisops.cumsum(x, 1), x.shape, lambda: np.cumsum(x, 1),
                   lambda: torch.cumsum(tx, 1), None),
        "cummax": (lambda: axisops.cummax(x, 1), x.shape, lambda: np.maximum.accumulate(x, 1),
                   lambda: torch.cummax(tx, 1), None),
        "take": (lambda: axisops.take(x, rows, 0), (4, 64), lambda: np.take(x, rows, 0),
                 lambda: torch.index_select(tx, 0, trows), None),
        "scatter": (lambda: axisops.scatter(x, idx, upd, 1, reduce="add"), x.shape, np_scatter,
                    lambda: torch.scatter_add(tx, 1, tidx, tupd), None),
    }
    print(f"CPU: {cpu_name()}, one thread (axisops and PyTorch); numpy {np.__version__}, "
          f"torch {torch.__version__}, bottleneck {bn.__version__}\n")
    print("## A (16, 64) float32 call, step by step (us)\n")
    print("| op | total | key + look-up | kernel alone | np.empty | rest (Python) "
          "| NumPy | PyTorch | bottleneck |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for op, (f, out_shape, f_np, f_torch, f_bn) in cases.items():
        calls = compiled_calls(f)
        total = best_us(f)
        key = best_us(lambda op=op: (op, *array_key(x), axis_key(1), False, None))
        kern = sum(best_us(lambda e=e, a=a: e(*a)) for e, a in calls)
        alloc = best_us(lambda shape=out_shape: np.empty(shape, np.float32))
        rest = total - key - kern - alloc
        peers = [best_us(f_np), best_us(f_torch), best_us(f_bn) if f_bn else float("nan")]
        print(f"| {op} | {total:.2f} | {key:.2f} | {kern:.2f} ({len(calls)}) | {alloc:.2f} "
              f"| {rest:.2f} | " + " | ".join(f"{p:.2f}" for p in peers) + " |", flush=True)
    print("\n## 1000 float64 elements, 1-D (us; ratio to bottleneck)\n")
    print("| op | axisops | NumPy | bottleneck | axisops / bottleneck |")
    print("|---|---:|---:|---:|---:|")
    v = rng.standard_normal(1000)
    for op, ours, f_np, f_bn in (("sum", axisops.sum, np.sum, bn.nansum),
                                 ("mean", axisops.mean, np.mean, bn.nanmean),
                                 ("max", axisops.max, np.max, bn.nanmax),
                                 ("argmax", axisops.argmax, np.argmax, bn.nanargmax)):
        a, n, b = (best_us(lambda f=f: f(v)) for f in (ours, f_np, f_bn))
        print(f"| {op} | {a:.2f} | {n:.2f} | {b:.2f} | {a / b:.1f}x |", flush=True)


if __name__ == "__main__":
    main()

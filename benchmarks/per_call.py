"""The cost of one small call: axisops beside bottleneck, NumPy and PyTorch.

    python benchmarks/per_call.py > benchmarks/per_call.md

Issue 41's per-call cases: one call on 1000 float64 elements (sum, mean, max,
argmax, nanmean, nanstd) against the best of bottleneck and NumPy, a (16, 64)
float32 array along axis 1, and a (16, 64) CPU tensor against torch's own
operator, and the moving windows, gathers and pooling on a (16, 64) array. *planned* is the same call with the compiled entries switched off
(``axisops._fast`` answering None: the planned path), in the same process, so
the two columns compare. Medians of 7 repeats; microseconds; one thread.
"""
from __future__ import annotations

import platform
import statistics
import subprocess
import timeit
from contextlib import contextmanager

import numpy as np

import axisops
from axisops import _fast


def _cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines()
                    if line.startswith("Model name"))
    except Exception:  # pragma: no cover
        return platform.processor() or "?"


def _time(f, number: int = 5000) -> float:
    f()
    return statistics.median(timeit.repeat(f, number=number, repeat=7)) / number * 1e6


#: The entries of ``axisops._fast`` (each answers None to switch itself off).
_ENTRIES = ("value", "arg", "moments", "scan", "cum_extreme", "moving", "moving_rows", "take",
            "take_along")


@contextmanager
def _planned_only():
    saved = {name: getattr(_fast, name) for name in _ENTRIES}
    scalar = {op: (dict(call.entries), dict(call.lanes))
              for op, call in _fast.SCALAR_CALLS.items()}
    for name in _ENTRIES:
        setattr(_fast, name, lambda *a: None)
    for call in _fast.SCALAR_CALLS.values():  # the wrappers' entries
        call.entries.clear()
        call.lanes.clear()
    try:
        yield
    finally:
        for name, entry in saved.items():
            setattr(_fast, name, entry)
        for op, (entries, lanes) in scalar.items():
            _fast.SCALAR_CALLS[op].entries.update(entries)
            _fast.SCALAR_CALLS[op].lanes.update(lanes)


def _row(name, ours, peers: dict) -> str:
    with _planned_only():
        planned = _time(ours)
    mine = _time(ours)
    times = {k: _time(v) for k, v in peers.items() if v is not None}
    best = min(times.values()) if times else float("nan")
    cells = " | ".join(f"{times[k]:.2f}" if k in times else "-" for k in peers)
    return f"| {name} | {planned:.2f} | {mine:.2f} | {cells} | {mine / best:.2f}x |"


def main() -> None:
    axisops.thread_limit(1)
    try:
        import bottleneck as bn
    except ImportError:  # pragma: no cover
        bn = None
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        torch = None
    print(f"CPU: {_cpu()}; numpy {np.__version__}"
          + (f", torch {torch.__version__}" if torch else "")
          + (f", bottleneck {bn.__version__}" if bn else "") + "\n")
    x = np.random.default_rng(0).standard_normal(1000)
    print("## One call on 1000 float64 elements (us)\n")
    print("| op | axisops planned | axisops | bottleneck | NumPy | axisops / best |")
    print("|---|---:|---:|---:|---:|---:|")
    for op, bn_op in [("sum", "nansum"), ("mean", "nanmean"), ("max", "nanmax"),
                      ("argmax", "nanargmax"), ("nanmean", "nanmean"), ("nanstd", "nanstd")]:
        ours = getattr(axisops, op)
        peer_bn = getattr(bn, bn_op) if bn else None
        peer_np = getattr(np, op)
        print(_row(op, lambda f=ours: f(x), {
            "bottleneck": (lambda f=peer_bn: f(x)) if bn else None,
            "numpy": lambda f=peer_np: f(x)}))
    a = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)
    print("\n## A (16, 64) float32 array along axis 1 (us)\n")
    print("| op | axisops planned | axisops | NumPy | PyTorch | axisops / best |")
    print("|---|---:|---:|---:|---:|---:|")
    t = torch.from_numpy(a) if torch else None
    for op in ("sum", "mean", "max", "argmax", "nansum", "nanargmax", "cumsum"):
        ours = getattr(axisops, op)
        peer_np = getattr(np, op)
        peer_t = getattr(torch, op, None) if torch else None
        print(_row(op, lambda f=ours: f(a, axis=1), {
            "numpy": lambda f=peer_np: f(a, axis=1),
            "torch": (lambda f=peer_t: f(t, 1)) if peer_t else None}))
    print("\n## The size sweep's 1K layouts: (4, 256) float32 and (256, 4).T along axis 1 (us)\n")
    print("| op | layout | axisops planned | axisops | bottleneck | NumPy | PyTorch | axisops / best |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    wide = np.random.default_rng(3).standard_normal((4, 256)).astype(np.float32)
    layouts = {"wide-1": wide, "wideT-1": np.ascontiguousarray(wide.T).T}
    for op, bn_op in [("sum", "nansum"), ("mean", "nanmean"), ("max", "nanmax"),
                      ("argmax", "nanargmax"), ("cumsum", None)]:
        for name, w in layouts.items():
            ours = getattr(axisops, op)
            tw = torch.from_numpy(w) if torch else None
            peer_t = getattr(torch, op, None) if torch else None
            peer_bn = getattr(bn, bn_op) if bn and bn_op else None
            peer_np = getattr(np, op)
            peers = {"bottleneck": (lambda f=peer_bn, w=w: f(w, axis=1)) if peer_bn else None,
                     "numpy": lambda f=peer_np, w=w: f(w, axis=1),
                     "torch": (lambda f=peer_t, tw=tw: f(tw, 1)) if peer_t else None}
            print(_row(f"{op} | {name}", lambda f=ours, w=w: f(w, axis=1), peers))
    print("\n## Moving windows, gathers and pooling on (16, 64) float32 (us)\n")
    print("| op | axisops planned | axisops | bottleneck | NumPy | PyTorch | axisops / best |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(2)
    cols = rng.integers(0, 64, 16)
    along = rng.integers(0, 64, (16, 64))
    img = rng.standard_normal((1, 16, 8, 8)).astype(np.float32)
    timg = torch.from_numpy(img) if torch else None
    cases = [
        ("moving_mean, window 8", lambda: axisops.moving_mean(a, 8, 1),
         {"bottleneck": (lambda: bn.move_mean(a, 8, axis=1)) if bn else None, "numpy": None,
          "torch": None}),
        ("moving_max, window 8", lambda: axisops.moving_max(a, 8, 1),
         {"bottleneck": (lambda: bn.move_max(a, 8, axis=1)) if bn else None, "numpy": None,
          "torch": None}),
        ("take 16 columns", lambda: axisops.take(a, cols, 1),
         {"bottleneck": None, "numpy": lambda: np.take(a, cols, 1),
          "torch": (lambda: torch.index_select(t, 1, torch.from_numpy(cols))) if torch else None}),
        ("take_along_axis", lambda: axisops.take_along_axis(a, along, 1),
         {"bottleneck": None, "numpy": lambda: np.take_along_axis(a, along, 1),
          "torch": (lambda: torch.gather(t, 1, torch.from_numpy(along))) if torch else None}),
        ("max_pool (1, 16, 8, 8) 3x3/2", lambda: axisops.max_pool(img, 3, stride=2, padding=1),
         {"bottleneck": None, "numpy": None,
          "torch": (lambda: torch.nn.functional.max_pool2d(timg, 3, 2, 1)) if torch else None}),
    ]
    for name, ours, peers in cases:
        print(_row(name, ours, peers))
    if torch:
        print("\n## A (16, 64) float32 CPU tensor along axis 1 (us)\n")
        print("| op | axisops planned | axisops | PyTorch | axisops / torch |")
        print("|---|---:|---:|---:|---:|")
        for op in ("sum", "argmax", "max", "cumsum"):
            ours = getattr(axisops, op)
            peer = getattr(torch, op)
            print(_row(op, lambda f=ours: f(t, axis=1), {"torch": lambda f=peer: f(t, 1)}))


if __name__ == "__main__":
    main()

"""What the CPU at hand makes of the hot kernels: vector registers in their machine
code and their speed against NumPy and PyTorch on a few layouts.

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/vector_probe.py [--out FILE.md]

Run it with a fresh ``NUMBA_CACHE_DIR``: code loaded from Numba's cache cannot be
inspected. It names the CPU and its vector extensions; for each kernel it counts
the instructions on ``zmm`` (AVX-512), ``ymm`` (AVX2) and ``xmm`` registers, then
times each case (median of 7 batches, one and two threads; PyTorch with the same
number of threads). The kernel notes in ``axisops/kernels/reduce.py`` say which
loop formulations vectorise; this is how to check them on another CPU (the
issue-27 question: does LLVM use 512-bit vectors on an AVX-512 Xeon?).
"""
from __future__ import annotations

import argparse
import platform
import re
import timeit
from functools import partial

import numpy as np


def cpu() -> tuple[str, str]:
    """(model name, the vector extensions it reports)."""
    model, flags = platform.processor() or "?", ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        model = re.search(r"model name\s*:\s*(.*)", text).group(1)
        flags = re.search(r"flags\s*:\s*(.*)", text).group(1)
    except (OSError, AttributeError):
        pass
    wanted = ("avx2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16")
    return model, " ".join(f for f in wanted if f in flags.split())


def register_counts(dispatcher) -> dict[str, int]:
    """Instructions on zmm, ymm and xmm registers, over every compiled signature."""
    counts = {"zmm": 0, "ymm": 0, "xmm": 0}
    for sig in dispatcher.signatures:
        asm = dispatcher.inspect_asm(sig)
        for reg in counts:
            counts[reg] += sum(1 for line in asm.splitlines() if reg in line)
    return counts


def timed(fn, number: int) -> float:
    fn()
    return float(np.median([timeit.timeit(fn, number=number) / number for _ in range(7)])) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the report to this Markdown file")
    args = parser.parse_args()
    import axisops
    from axisops.kernels import gather as KG
    from axisops.kernels import pool as KP
    from axisops.kernels import reduce as KR
    from axisops.kernels import scan as KS

    try:
        import torch
    except ImportError:  # pragma: no cover
        torch = None
    rng = np.random.default_rng(0)
    f32 = rng.standard_normal(1 << 20).astype(np.float32)
    cases = [
        ("argmax", "float32 (1M,)", f32, 0),
        ("argmax", "float64 (1M,)", f32.astype(np.float64), 0),
        ("argmax", "int32 (1M,)", (f32 * 1000).astype(np.int32), 0),
        ("max", "float32 (1M,)", f32, 0),
        ("max", "float32 (4, 256K) axis 1", f32.reshape(4, -1), 1),
        ("max", "float32 (1024, 1024) axis 0", f32.reshape(1024, 1024), 0),
        ("sum", "float32 (1M,)", f32, 0),
        ("sum", "float32 (256K, 4) axis 0", f32.reshape(-1, 4), 0),
        ("sum", "float32 (10K, 100) axis 0", f32[:1_000_000].reshape(10_000, 100), 0),
        ("sum", "float64 (1024, 1024) axis 0", f32.astype(np.float64).reshape(1024, 1024), 0),
        ("cumsum", "float32 (1024, 1024) axis 1", f32.reshape(1024, 1024), 1),
        ("cummax", "float32 (1024, 1024) axis 0", f32.reshape(1024, 1024), 0),
        ("sum", "float32 (16, 64) axis 1", f32[:1024].reshape(16, 64), 1),
        ("argmax", "float32 (16, 64) axis 1", f32[:1024].reshape(16, 64), 1),
        ("logcumsumexp", "float32 (4, 256K) axis 1", f32.reshape(4, -1), 1),
        ("logcumsumexp", "float64 (4096, 256) axis 0", f32.astype(np.float64).reshape(4096, 256), 0),
    ]
    torch_names = {"max": "amax", "cummax": "cummax"}
    numpy_fns = {"cummax": np.maximum.accumulate, "logcumsumexp": np.logaddexp.accumulate}
    image = f32[:64 * 56 * 56].reshape(1, 64, 56, 56)
    model, ext = cpu()
    lines = [f"# Vector probe: {model}", "", f"* Vector extensions: {ext or 'none of AVX2/AVX-512'}",
             f"* numpy {np.__version__}, numba {__import__('numba').__version__}"
             + (f", torch {torch.__version__}" if torch else ""), "",
             "| case | threads | axisops us | numpy us | torch us | axisops/best |",
             "|---|---:|---:|---:|---:|---:|"]
    for threads in (1, 2):
        axisops.thread_limit(threads)
        if torch is not None:
            torch.set_num_threads(threads)
        for op, label, x, axis in cases:
            number = max(3, int(2e6 / x.size))
            mine = timed(partial(getattr(axisops, op), x, axis=axis), number)
            peer_np = timed(partial(numpy_fns[op] if op in numpy_fns else getattr(np, op), x, axis=axis), number)
            peer_t = float("nan")
            if torch is not None:
                tfn = getattr(torch, torch_names.get(op, op))
                peer_t = timed(partial(tfn, torch.from_numpy(x), axis), number)
            best = np.nanmin([peer_np, peer_t])
            lines.append(f"| {op} {label} | {threads} | {mine:.1f} | {peer_np:.1f} | {peer_t:.1f} "
                         f"| {mine / best:.2f}x |")
        # pooling: no NumPy peer (a sliding window view is 20x off)
        mine = timed(partial(axisops.max_pool, image, 3, stride=2, padding=1), 20)
        peer_t = float("nan")
        if torch is not None:
            peer_t = timed(partial(torch.nn.functional.max_pool2d, torch.from_numpy(image), 3,
                                   stride=2, padding=1), 20)
        lines.append(f"| max_pool 3x3 stride 2 float32 (1, 64, 56, 56) | {threads} | {mine:.1f} "
                     f"| - | {peer_t:.1f} | {mine / peer_t:.2f}x |")
    lines += ["", "| kernel | signatures | zmm | ymm | xmm |", "|---|---:|---:|---:|---:|"]
    for name, disp in [("reduce.arg_kernel(float32 keys, lane order)", KR.arg_kernel("<i4", True, False, False)),
                       ("reduce.arg_kernel(float32 keys, row order)", KR.arg_kernel("<i4", True, True, False)),
                       ("reduce.arg_kernel(int32, lane order)", KR.arg_kernel("<i4", False, False, False)),
                       ("reduce.value_kernel(row order, cascade)", KR.value_kernel(True, KR.COMBINE_CASCADE)),
                       ("reduce.value_kernel(lane order, cascade)", KR.value_kernel(False, KR.COMBINE_CASCADE)),
                       ("scan.scan_values", KS.scan_values), ("gather.take_rows", KG.take_rows),
                       ("scan.scan_logaddexp (vmath's exp and log inlined)", KS.scan_logaddexp),
                       ("pool.max_pool_rows(channels first)", KP.max_pool_rows(False, False))]:
        if not disp.signatures:
            continue
        c = register_counts(disp)
        lines.append(f"| {name} | {len(disp.signatures)} | {c['zmm']} | {c['ymm']} | {c['xmm']} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

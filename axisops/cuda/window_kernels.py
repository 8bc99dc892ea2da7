"""CUDA kernels of the sliding windows: unfold (im2col) and fold (col2im) as gathers.

As on the CPU (``axisops.kernels.window``) every problem is lifted to three spatial
dimensions (1-D and 2-D get leading dimensions of size 1); window position ``l``
and kernel offset ``k`` read input position ``i = l*T - P + k*D`` (stride ``T``,
padding before ``P``, dilation ``D``); a position outside ``[0, S)`` is padding.
The geometry is a small int64 device array (layouts below); every division by a
runtime size is a multiply and a shift by a divisor record ``(d, magic, shift)``
(``axisops.cuda.kernels._divmod``), offsets are int64.

* ``unfold_elements``: a thread per output element. Its flat position is unravelled
  (innermost first) into ``(n, c, k1, k2, k3, l1, l2, l3)`` — in the output's order,
  ``(N, C, K1, K2, K3, L1, L2, L3)``, or ``(N, L1, L2, L3, K1, K2, K3, C)`` with
  channels last — and it writes the input element there or *fill* for padding, so
  neighbouring threads write neighbouring outputs. Moves are of bits (the launcher
  passes same-width integer views) unless the output's dtype differs (the gradient
  of fold converts integers to float64 on the way).
* ``fold_values`` / ``fold_integers``: fold as a gather, a thread per element of
  the image ``(n, c, i1, i2, i3)`` (channels last: ``(n, i1, i2, i3, c)``). It walks
  the kernel offsets in increasing kernel index — the CPU's order — and for each
  finds the window position that reads it, if any (``i + P - k*D`` must be a
  multiple of ``T`` below ``L``: a divisor record per dimension), adding those
  column entries in that order into an accumulator that starts at zero. No two
  threads write one element and no atomics are used (OneFlow's fold, seed 001,
  scatters with atomic adds, whose order varies from run to run): every run gives
  the CPU path's bits. Floats accumulate in the accumulator's dtype (*zero*'s:
  float32 for float16, rounded once on the store); integers in int64, wrapped
  into the result's width by a mask and a sign bit (explicitly, so that the
  simulator, which stores NumPy scalars, wraps as the GPU's truncation does); bool
  is the logical or of the sum (``logical``). Numba types every branch, hence two
  kernels: ``&`` has no float version.

Complex arrays travel as pairs of real parts (``part_shift`` 1: a thread per part,
element ``o >> 1``, part ``o & 1``; the base and the output are real views of twice
the length), so complex sums are the two real sums of the CPU path's
``_complex.componentwise``, in the same order.

Geometry of ``unfold_elements`` (``U_*``): offset; element strides of x as ``(n, c,
s1, s2, s3)``; S, T, D, P per lifted dimension; seven divisor records of the output's
dimensions, innermost first (n is the last quotient). Of the folds (``F_*``):
offset; element strides of the columns (``(n, row, l)``, or ``(n, l, column)`` with
channels last); K (kernel elements) and C; L, k, D, P per dimension; divisor
records of the three strides; four divisor records of the image's dimensions,
innermost first.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numba import cuda

from ._jit import kernel
from .kernels import _divmod

__all__ = ["unfold_elements", "fold_values", "fold_integers", "signatures"]

# unfold's geometry: offset, strides (n, c, s1, s2, s3), then S, T, D, P (3 each), records
U_OFFSET, U_STRIDES, U_SIZE, U_STRIDE, U_DILATION, U_PAD, U_OUT = 0, 1, 6, 9, 12, 15, 18
#: Length of unfold's geometry: seven output records follow U_OUT.
U_LEN = U_OUT + 7 * 3
# fold's geometry: offset, column strides (3), K, C, then L, k, D, P (3 each), the
# strides' records (3 of 3), the image's records (4 of 3)
F_OFFSET, F_STRIDES, F_KCOUNT, F_CHANNELS = 0, 1, 4, 5
F_POSITIONS, F_KERNEL, F_DILATION, F_PAD, F_STEP, F_OUT = 6, 9, 12, 15, 18, 27
#: Length of fold's geometry.
F_LEN = F_OUT + 4 * 3


# ----------------------------------------------------------------------- unfold


@kernel
def unfold_elements(base, geo, part_shift, channels_last, fill, out):
    """im2col: ``out`` (flat, C order; ``(N, C*K, L)`` or ``(N, L, K*C)``) gets, a
    thread per element, the element of ``base`` its window reads, or *fill*."""
    o = cuda.grid(1)
    if o >= out.size:
        return
    e = o >> part_shift
    part = o - (e << part_shift)
    q, a0 = _divmod(e, geo, U_OUT)
    q, a1 = _divmod(q, geo, U_OUT + 3)
    q, a2 = _divmod(q, geo, U_OUT + 6)
    q, a3 = _divmod(q, geo, U_OUT + 9)
    q, a4 = _divmod(q, geo, U_OUT + 12)
    q, a5 = _divmod(q, geo, U_OUT + 15)
    n, a6 = _divmod(q, geo, U_OUT + 18)
    if channels_last:  # (N, L1, L2, L3, K1, K2, K3, C)
        c, k3, k2, k1, l3, l2, l1 = a0, a1, a2, a3, a4, a5, a6
    else:              # (N, C, K1, K2, K3, L1, L2, L3)
        l3, l2, l1, k3, k2, k1, c = a0, a1, a2, a3, a4, a5, a6
    i1 = l1 * geo[U_STRIDE] - geo[U_PAD] + k1 * geo[U_DILATION]
    i2 = l2 * geo[U_STRIDE + 1] - geo[U_PAD + 1] + k2 * geo[U_DILATION + 1]
    i3 = l3 * geo[U_STRIDE + 2] - geo[U_PAD + 2] + k3 * geo[U_DILATION + 2]
    if (0 <= i1 < geo[U_SIZE] and 0 <= i2 < geo[U_SIZE + 1]
            and 0 <= i3 < geo[U_SIZE + 2]):
        src = (geo[U_OFFSET] + n * geo[U_STRIDES] + c * geo[U_STRIDES + 1]
               + i1 * geo[U_STRIDES + 2] + i2 * geo[U_STRIDES + 3] + i3 * geo[U_STRIDES + 4])
        out[o] = base[(src << part_shift) + part]
    else:
        out[o] = fill


# ------------------------------------------------------------------------- fold


@cuda.jit(device=True, inline=True)
def _fold_sum(cols, geo, o, part_shift, channels_last, zero):
    """The sum, from *zero* in its dtype, of the column entries that cover image
    element ``o >> part_shift`` (part ``o & 1`` of a complex one), in increasing
    kernel index."""
    e = o >> part_shift
    part = o - (e << part_shift)
    q, a0 = _divmod(e, geo, F_OUT)
    q, a1 = _divmod(q, geo, F_OUT + 3)
    q, a2 = _divmod(q, geo, F_OUT + 6)
    n, a3 = _divmod(q, geo, F_OUT + 9)
    if channels_last:  # (N, S1, S2, S3, C)
        c, i3, i2, i1 = a0, a1, a2, a3
    else:              # (N, C, S1, S2, S3)
        i3, i2, i1, c = a0, a1, a2, a3
    count = geo[F_KCOUNT]
    channels = geo[F_CHANNELS]
    l1n, l2n, l3n = geo[F_POSITIONS], geo[F_POSITIONS + 1], geo[F_POSITIONS + 2]
    k1n, k2n, k3n = geo[F_KERNEL], geo[F_KERNEL + 1], geo[F_KERNEL + 2]
    d1, d2, d3 = geo[F_DILATION], geo[F_DILATION + 1], geo[F_DILATION + 2]
    step_n, step_a, step_b = geo[F_STRIDES], geo[F_STRIDES + 1], geo[F_STRIDES + 2]
    start = geo[F_OFFSET] + n * step_n
    acc = zero
    # i + P - k*D falls as k grows: once negative, no later offset reads i
    for k1 in range(k1n):
        num1 = i1 + geo[F_PAD] - k1 * d1
        if num1 < 0:
            break
        l1, r1 = _divmod(num1, geo, F_STEP)
        if r1 != 0 or l1 >= l1n:
            continue
        for k2 in range(k2n):
            num2 = i2 + geo[F_PAD + 1] - k2 * d2
            if num2 < 0:
                break
            l2, r2 = _divmod(num2, geo, F_STEP + 3)
            if r2 != 0 or l2 >= l2n:
                continue
            for k3 in range(k3n):
                num3 = i3 + geo[F_PAD + 2] - k3 * d3
                if num3 < 0:
                    break
                l3, r3 = _divmod(num3, geo, F_STEP + 6)
                if r3 != 0 or l3 >= l3n:
                    continue
                kk = (k1 * k2n + k2) * k3n + k3
                ll = (l1 * l2n + l2) * l3n + l3
                if channels_last:  # cols[n, l, k*C + c]
                    src = start + ll * step_a + (kk * channels + c) * step_b
                else:              # cols[n, c*K + k, l]
                    src = start + (c * count + kk) * step_a + ll * step_b
                acc += cols[(src << part_shift) + part] + zero
    return acc


@kernel
def fold_values(cols, geo, part_shift, channels_last, zero, out):
    """col2im into a float ``out`` (flat, C order), a thread per element (or part):
    the sum in *zero*'s dtype, stored once (float32 to float16: one rounding)."""
    o = cuda.grid(1)
    if o < out.size:
        out[o] = _fold_sum(cols, geo, o, part_shift, channels_last, zero)


@kernel
def fold_integers(cols, geo, channels_last, zero, mask, half, logical, out):
    """col2im into an integer or bool ``out`` (flat, C order), a thread per element:
    the int64 sum wrapped to the result's width (``(sum & mask ^ half) - half``;
    *half* is the sign bit of a signed width, else 0), or with *logical* whether
    it is nonzero (bool, summed as bytes)."""
    o = cuda.grid(1)
    if o < out.size:
        acc = _fold_sum(cols, geo, o, 0, channels_last, zero)
        if logical:
            out[o] = acc != 0
        else:
            out[o] = ((acc & mask) ^ half) - half


# ------------------------------------------------------------------- signatures

#: Bits moved by unfold (every dtype travels as the integer of its width; complex128
#: as two int64).
MOVE_DTYPES = [np.int8, np.int16, np.int32, np.int64]
#: The dtypes fold adds as integers (bool as uint8, uint64 as int64).
INTEGER_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64]
#: Non-float dtypes the gradients read as they are, converting to float64.
CONVERTED_DTYPES = [*INTEGER_DTYPES, np.uint64]


def signatures() -> Iterator[tuple[str, Any, tuple]]:
    """(name, Python function, argument types) of every specialisation the launchers
    of :mod:`axisops.cuda.window` and :mod:`axisops.cuda.window_grad` make."""
    from numba import from_dtype, types

    def arr(dtype):
        return types.Array(from_dtype(np.dtype(dtype)), 1, "C")

    def scalar(dtype):
        return from_dtype(np.dtype(dtype))

    i64, boolean = types.int64, types.boolean
    geo = arr(np.int64)
    for dt in MOVE_DTYPES:  # unfold, grad.fold of floats and complex
        name = np.dtype(dt).name
        yield (f"unfold_elements {name}", unfold_elements.py_func,
               (arr(dt), geo, i64, boolean, scalar(dt), arr(dt)))
    for dt in CONVERTED_DTYPES:  # grad.fold of bool and integers: to float64
        name = np.dtype(dt).name
        yield (f"unfold_elements {name}->float64", unfold_elements.py_func,
               (arr(dt), geo, i64, boolean, scalar(np.float64), arr(np.float64)))
    floats: list[tuple[Any, Any, Any]] = [
        (np.float16, np.float32, np.float16), (np.float32, np.float32, np.float32),
        (np.float64, np.float64, np.float64)]
    floats += [(dt, np.float64, np.float64) for dt in CONVERTED_DTYPES]  # grad.unfold
    for src, acc, res in floats:
        yield (f"fold_values {np.dtype(src).name}->{np.dtype(acc).name}->{np.dtype(res).name}",
               fold_values.py_func, (arr(src), geo, i64, boolean, scalar(acc), arr(res)))
    for dt in INTEGER_DTYPES:
        yield (f"fold_integers {np.dtype(dt).name}", fold_integers.py_func,
               (arr(dt), geo, boolean, i64, i64, i64, boolean, arr(dt)))

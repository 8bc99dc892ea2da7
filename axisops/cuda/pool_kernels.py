"""CUDA kernels of pooling: max and mean over windows (a thread per output
element) and their gradients as gathers (a thread per input element), without
atomics.

The geometry is the CPU kernels' (``axisops.kernels.pool``): every problem lifted
to three spatial dimensions; window position ``l`` and kernel offset ``k`` read
input position ``i = l*T - P + k*D``; a position outside ``[0, S)`` is padding.
The kernels reuse the CPU's ``_span`` (the offsets of a window inside the input)
and ``_padded_count`` (a window's size clipped to the padded input), compiled
for the device, so each window and each divisor is the CPU's.

* ``max_pool_elements``: a thread per output ``(n, c, l1, l2, l3)`` (channels last
  ``(n, l1, l2, l3, c)``, its flat position unravelled innermost first) walks its
  window in window order, as the CPU does: the first element, then any greater
  one or the first NaN over a number; its index is ``(i1 * S2 + i2) * S3 + i3``.
  Values and indices are the CPU's bits.
* ``avg_pool_elements``: the same walk adds the window's elements into an
  accumulator that starts at *zero* (its dtype is the CPU kernel's: see
  :mod:`axisops.cuda.pool`), then divides once by the count, in float64 as
  Numba divides a float by an int64 on the CPU, and stores into ``out`` of the
  CPU's out dtype (one rounding; float16 results are cast afterwards, as the CPU
  casts its float32 out).
* ``max_pool_check``: a thread per output index checks that it is in its plane
  (``bad[0]``) and that it is a position its own window reads (``bad[1]``): the
  gather below finds only those.
* ``max_pool_grad``: a thread per input element ``(n, c, i1, i2, i3)`` walks the
  windows that read it in output order (``l1``, ``l2``, ``l3`` increasing: the
  order the CPU's scatter-add runs in each plane) and adds ``g`` of those whose
  index is its position, from +0.0 in *zero*'s dtype (float16 in float32,
  rounded once on the store): the CPU's bits whenever every index lies in its
  window (``max_pool_check``), the launcher's other way otherwise.
* ``avg_pool_grad``: the same walk over the windows that read the element adds
  each one's ``g / count`` (in float64, as the CPU's share) into ``out[e]`` of
  the accumulator's dtype, rounding after each addition as the CPU's ``out[q] +=
  share`` into its float32 (float64) array does.

Geometry (``G_*``, one int64 array for every kernel): offset; five element
strides ``(n, c, s1, s2, s3)`` of what the kernel reads (x for the forwards, the
C-contiguous ``g`` and indices, as ``(n, c, l1, l2, l3)``, for the gradients);
S, L, k, D, T, P and the end padding per lifted dimension; four divisor records
of the thread's elements, innermost first (n is the last quotient); divisor
records of T, of D, and of S3 and S2 (a plane position's coordinates).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numba import cuda

from ..kernels import pool as _cpu_pool
from ._jit import kernel
from .kernels import _divmod

__all__ = ["max_pool_elements", "avg_pool_elements", "max_pool_check", "max_pool_grad",
           "avg_pool_grad", "signatures"]

G_OFFSET, G_STRIDES, G_SIZE, G_POS, G_KERNEL, G_DIL, G_STEP, G_PAD, G_PAD_END = (
    0, 1, 6, 9, 12, 15, 18, 21, 24)
#: Divisor records: the thread's elements (4), T (3), D (3), S3 and S2.
G_OUT, G_STEP_REC, G_DIL_REC, G_PLANE_REC = 27, 39, 48, 57
#: Length of the geometry.
G_LEN = G_PLANE_REC + 2 * 3

#: The CPU kernels' window span (the kernel offsets inside the input), compiled
#: for the device.
_span = cuda.jit(device=True, inline=True)(_cpu_pool._span.py_func)


@cuda.jit(device=True, inline=True)
def _padded_count(l, stride, pad, pad_end, size, kernel, dilation):
    """The window's elements inside the padded input (``count_include_pad``; its
    first element always is): the CPU's ``_padded_count``, kept here so that the
    device code does not follow that helper's signature (the tests compare the
    bits)."""
    start = l * stride - pad
    return min(kernel, (size + pad_end - 1 - start) // dilation + 1)


@cuda.jit(device=True, inline=True)
def _coordinates(e, geo, channels_last):
    """(n, c, a1, a2, a3) of flat element *e* over the records at ``G_OUT``: the
    spatial coordinates of ``(N, C, A1, A2, A3)`` or ``(N, A1, A2, A3, C)``."""
    q, b0 = _divmod(e, geo, G_OUT)
    q, b1 = _divmod(q, geo, G_OUT + 3)
    q, b2 = _divmod(q, geo, G_OUT + 6)
    n, b3 = _divmod(q, geo, G_OUT + 9)
    if channels_last:
        return n, b0, b3, b2, b1
    return n, b3, b2, b1, b0


@cuda.jit(device=True, inline=True)
def _windows(i, d, geo):
    """(first, end) of the window positions along lifted dimension *d* whose window
    can read input position *i*: ``l*T <= i + P`` and ``l*T - P + (k-1)*D >= i``,
    within ``[0, L)``."""
    top = i + geo[G_PAD + d]
    low = top - (geo[G_KERNEL + d] - 1) * geo[G_DIL + d]
    first = 0
    if low > 0:
        first, r = _divmod(low, geo, G_STEP_REC + 3 * d)
        if r != 0:
            first += 1
    last, _ = _divmod(top, geo, G_STEP_REC + 3 * d)
    return first, min(last + 1, geo[G_POS + d])


@cuda.jit(device=True, inline=True)
def _reads(i, l, d, geo):
    """Whether window *l* along lifted dimension *d* reads input position *i*
    (``i + P - l*T`` a multiple of D below k*D; ``l`` from :func:`_windows`)."""
    r = i + geo[G_PAD + d] - l * geo[G_STEP + d]
    if r < 0:
        return False
    k, rem = _divmod(r, geo, G_DIL_REC + 3 * d)
    return rem == 0 and k < geo[G_KERNEL + d]


@cuda.jit(device=True, inline=True)
def _count(l1, l2, l3, geo, include_pad):
    """The divisor of window (l1, l2, l3) of a mean: its elements inside the padded
    input, or inside the input; the CPU's."""
    s1, s2, s3 = geo[G_SIZE], geo[G_SIZE + 1], geo[G_SIZE + 2]
    k1n, k2n, k3n = geo[G_KERNEL], geo[G_KERNEL + 1], geo[G_KERNEL + 2]
    t1, t2, t3 = geo[G_STEP], geo[G_STEP + 1], geo[G_STEP + 2]
    p1, p2, p3 = geo[G_PAD], geo[G_PAD + 1], geo[G_PAD + 2]
    d1, d2, d3 = geo[G_DIL], geo[G_DIL + 1], geo[G_DIL + 2]
    if include_pad:
        return (_padded_count(l1, t1, p1, geo[G_PAD_END], s1, k1n, d1)
                * _padded_count(l2, t2, p2, geo[G_PAD_END + 1], s2, k2n, d2)
                * _padded_count(l3, t3, p3, geo[G_PAD_END + 2], s3, k3n, d3))
    a1, b1 = _span(l1, t1, p1, s1, k1n, d1)
    a2, b2 = _span(l2, t2, p2, s2, k2n, d2)
    a3, b3 = _span(l3, t3, p3, s3, k3n, d3)
    return (b1 - a1) * (b2 - a2) * (b3 - a3)


# ---------------------------------------------------------------------- forward


@kernel
def max_pool_elements(base, geo, channels_last, want_index, out, idx):
    """Max pooling: ``out`` (flat, C order of the pooled shape) gets each window's
    maximum (the first NaN wins, ties go to the first in window order) and, with
    *want_index*, ``idx`` its flat position in the (n, c) plane."""
    o = cuda.grid(1)
    if o >= out.size:
        return
    n, c, l1, l2, l3 = _coordinates(o, geo, channels_last)
    s1, s2, s3 = geo[G_SIZE], geo[G_SIZE + 1], geo[G_SIZE + 2]
    t1, t2, t3 = geo[G_STEP], geo[G_STEP + 1], geo[G_STEP + 2]
    p1, p2, p3 = geo[G_PAD], geo[G_PAD + 1], geo[G_PAD + 2]
    d1, d2, d3 = geo[G_DIL], geo[G_DIL + 1], geo[G_DIL + 2]
    xs2, xs3, xs4 = geo[G_STRIDES + 2], geo[G_STRIDES + 3], geo[G_STRIDES + 4]
    a1, b1 = _span(l1, t1, p1, s1, geo[G_KERNEL], d1)
    a2, b2 = _span(l2, t2, p2, s2, geo[G_KERNEL + 1], d2)
    a3, b3 = _span(l3, t3, p3, s3, geo[G_KERNEL + 2], d3)
    xo = geo[G_OFFSET] + n * geo[G_STRIDES] + c * geo[G_STRIDES + 1]
    best = base[xo]
    at = -1
    for k1 in range(a1, b1):
        i1 = l1 * t1 - p1 + k1 * d1
        for k2 in range(a2, b2):
            i2 = l2 * t2 - p2 + k2 * d2
            q = xo + i1 * xs2 + i2 * xs3
            for k3 in range(a3, b3):
                i3 = l3 * t3 - p3 + k3 * d3
                v = base[q + i3 * xs4]
                if at < 0 or v > best or (v != v and best == best):
                    best = v
                    at = (i1 * s2 + i2) * s3 + i3
    out[o] = best
    if want_index:
        idx[o] = at


@kernel
def avg_pool_elements(base, geo, channels_last, include_pad, zero, out):
    """Mean pooling: ``out`` (flat, C order of the pooled shape) gets each window's
    sum, added in window order from *zero*, divided once by its count."""
    o = cuda.grid(1)
    if o >= out.size:
        return
    n, c, l1, l2, l3 = _coordinates(o, geo, channels_last)
    s1, s2, s3 = geo[G_SIZE], geo[G_SIZE + 1], geo[G_SIZE + 2]
    t1, t2, t3 = geo[G_STEP], geo[G_STEP + 1], geo[G_STEP + 2]
    p1, p2, p3 = geo[G_PAD], geo[G_PAD + 1], geo[G_PAD + 2]
    d1, d2, d3 = geo[G_DIL], geo[G_DIL + 1], geo[G_DIL + 2]
    xs2, xs3, xs4 = geo[G_STRIDES + 2], geo[G_STRIDES + 3], geo[G_STRIDES + 4]
    a1, b1 = _span(l1, t1, p1, s1, geo[G_KERNEL], d1)
    a2, b2 = _span(l2, t2, p2, s2, geo[G_KERNEL + 1], d2)
    a3, b3 = _span(l3, t3, p3, s3, geo[G_KERNEL + 2], d3)
    xo = geo[G_OFFSET] + n * geo[G_STRIDES] + c * geo[G_STRIDES + 1]
    s = zero
    for k1 in range(a1, b1):
        q1 = xo + (l1 * t1 - p1 + k1 * d1) * xs2
        for k2 in range(a2, b2):
            q2 = q1 + (l2 * t2 - p2 + k2 * d2) * xs3
            for k3 in range(a3, b3):
                s += base[q2 + (l3 * t3 - p3 + k3 * d3) * xs4]
    out[o] = s / _count(l1, l2, l3, geo, include_pad)


# -------------------------------------------------------------------- gradients


@kernel
def max_pool_check(idx, geo, channels_last, bad):
    """A thread per index (flat, C order of the pooled shape): ``bad[0] = 1`` when
    it is outside its plane, ``bad[1] = 1`` when its own window does not read it."""
    o = cuda.grid(1)
    if o >= idx.size:
        return
    _, _, l1, l2, l3 = _coordinates(o, geo, channels_last)
    p = idx[o]
    if p < 0 or p >= geo[G_SIZE] * geo[G_SIZE + 1] * geo[G_SIZE + 2]:
        bad[0] = 1
        return
    q, i3 = _divmod(p, geo, G_PLANE_REC)
    i1, i2 = _divmod(q, geo, G_PLANE_REC + 3)
    if not (_reads(i1, l1, 0, geo) and _reads(i2, l2, 1, geo) and _reads(i3, l3, 2, geo)):
        bad[1] = 1


@kernel
def max_pool_grad(g, idx, geo, channels_last, zero, out):
    """``out`` (flat, C order of x's shape): each element the sum, from *zero* in
    its dtype, of ``g`` over the outputs whose window reads it and whose index is
    its position, in output order. ``g`` and ``idx`` are read with the strides at
    ``G_STRIDES``."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    n, c, i1, i2, i3 = _coordinates(e, geo, channels_last)
    here = (i1 * geo[G_SIZE + 1] + i2) * geo[G_SIZE + 2] + i3
    f1, e1 = _windows(i1, 0, geo)
    f2, e2 = _windows(i2, 1, geo)
    f3, e3 = _windows(i3, 2, geo)
    go = n * geo[G_STRIDES] + c * geo[G_STRIDES + 1]
    gs2, gs3, gs4 = geo[G_STRIDES + 2], geo[G_STRIDES + 3], geo[G_STRIDES + 4]
    acc = zero
    for l1 in range(f1, e1):
        if not _reads(i1, l1, 0, geo):
            continue
        for l2 in range(f2, e2):
            if not _reads(i2, l2, 1, geo):
                continue
            q = go + l1 * gs2 + l2 * gs3
            for l3 in range(f3, e3):
                if not _reads(i3, l3, 2, geo):
                    continue
                at = q + l3 * gs4
                if idx[at] == here:
                    acc += g[at] + zero
    out[e] = acc


@kernel
def avg_pool_grad(g, geo, channels_last, include_pad, zero, out):
    """``out`` (flat, C order of x's shape, the accumulator's dtype): each element
    the sum of ``g / count`` over the windows that read it, in output order, each
    addition rounded to ``out``'s dtype (the CPU's fold). ``g`` is read with the
    strides at ``G_STRIDES``; *zero* is a float64 0 (the share is a float64)."""
    e = cuda.grid(1)
    if e >= out.size:
        return
    n, c, i1, i2, i3 = _coordinates(e, geo, channels_last)
    f1, e1 = _windows(i1, 0, geo)
    f2, e2 = _windows(i2, 1, geo)
    f3, e3 = _windows(i3, 2, geo)
    go = n * geo[G_STRIDES] + c * geo[G_STRIDES + 1]
    gs2, gs3, gs4 = geo[G_STRIDES + 2], geo[G_STRIDES + 3], geo[G_STRIDES + 4]
    out[e] = 0
    for l1 in range(f1, e1):
        if not _reads(i1, l1, 0, geo):
            continue
        q1 = go + l1 * gs2
        for l2 in range(f2, e2):
            if not _reads(i2, l2, 1, geo):
                continue
            q2 = q1 + l2 * gs3
            for l3 in range(f3, e3):
                if not _reads(i3, l3, 2, geo):
                    continue
                share = (g[q2 + l3 * gs4] + zero) / _count(l1, l2, l3, geo, include_pad)
                out[e] += share


# ------------------------------------------------------------------- signatures

#: The dtypes max pooling reads and writes as they are (bool as uint8).
MAX_DTYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
              np.uint64, np.float16, np.float32, np.float64]


def mean_dtypes(dtype: np.dtype, channels_last: bool) -> tuple[np.dtype, np.dtype]:
    """(accumulator, out) dtypes of a mean of *dtype* (bool as uint8): the CPU
    kernels', in either layout: float32 for float16 and float32, else float64."""
    dtype = np.dtype(dtype)
    out = np.dtype(np.float32) if dtype.kind == "f" and dtype.itemsize <= 4 \
        else np.dtype(np.float64)
    return out, out


def grad_dtype(dtype: np.dtype) -> np.dtype:
    """The gradients' accumulator for a float ``g``: float64 for float64, else
    float32 (the CPU's ``_accumulator``)."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def signatures() -> Iterator[tuple[str, Any, tuple]]:
    """(name, Python function, argument types) of every specialisation the launchers
    of :mod:`axisops.cuda.pool` and :mod:`axisops.cuda.pool_grad` make."""
    from numba import from_dtype, types

    def arr(dtype):
        return types.Array(from_dtype(np.dtype(dtype)), 1, "C")

    def scalar(dtype):
        return from_dtype(np.dtype(dtype))

    boolean = types.boolean
    geo = arr(np.int64)
    for dt in MAX_DTYPES:
        name = np.dtype(dt).name
        yield (f"max_pool_elements {name}", max_pool_elements.py_func,
               (arr(dt), geo, boolean, boolean, arr(dt), arr(np.int64)))
        pairs = {mean_dtypes(np.dtype(dt), last) for last in (False, True)}
        for acc, out in sorted(pairs, key=str):
            yield (f"avg_pool_elements {name}->{acc.name}->{out.name}",
                   avg_pool_elements.py_func,
                   (arr(dt), geo, boolean, boolean, scalar(acc), arr(out)))
    yield ("max_pool_check", max_pool_check.py_func,
           (arr(np.int64), geo, boolean, arr(np.int64)))
    for dt in (np.float16, np.float32, np.float64):
        name, acc = np.dtype(dt).name, grad_dtype(np.dtype(dt))
        yield (f"max_pool_grad {name}", max_pool_grad.py_func,
               (arr(dt), arr(np.int64), geo, boolean, scalar(acc), arr(dt)))
        yield (f"avg_pool_grad {name}", avg_pool_grad.py_func,
               (arr(dt), geo, boolean, boolean, types.float64, arr(acc)))

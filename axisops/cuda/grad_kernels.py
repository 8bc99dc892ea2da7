"""CUDA kernels of the gradients of the reductions and scans (numba-cuda).

What the device reductions and scans (:mod:`axisops.cuda.kernels`) do not already
compute: the max/min tie split, the products' and the log-sum-exp's gradients, and
cummax/cummin's scatter-add. Each follows the CPU kernel of
:mod:`axisops.kernels.scan` (or the NumPy expression of :mod:`axisops.grad`) step
by step, with the same helpers compiled for the device (``_normalized``,
``_scaled_sum``, ``_exp_diff``, ``_log_add_exp``: one definition each), so the
operations and their order are the CPU path's.

Geometry. A kernel reads up to three strided operands ``a, b, c`` (flat bases with
element offsets, see ``axisops.cuda._device.flat_base``) and walks dimension
records ``(size, magic, shift, stride_a, stride_b, stride_c)``: one walk of the
multiply-shift divisions (``kernels._divmod``) gives the three offsets at once.

* elementwise, a thread per element of a C-ordered result:
  ``[off_a, off_b, off_c, ndim, records]`` (:data:`ELEM_DIMS`);
* a thread per lane of a scan along an axis of length n:
  ``[n, axis stride a, b, c, off_a, off_b, off_c, ndim, records of the other
  dimensions]`` (:data:`LANE_DIMS`);
* a thread per row of a product over the reduced axes:
  ``[count, off_a, off_b, off_c, nk, kept records, nr, reduced records]``, the
  row's elements in C order of the reduced axes (the CPU path's order).

The products run a lane (row) in one thread, in index order, as on the CPU (a
float product's rounding, overflow and underflow depend on the order). Where a
running product leaves the normal floats on its own, the lane is computed again
with mantissas and exponents apart, as the CPU does; the exponents of the
forward pass are not stored but recovered backwards from the stored mantissas
(each step's renormalisation is recomputed from them exactly), so the fallback
needs no memory beyond the result. Complex products multiply parts by NumPy's
formula ``(ac - bd, ad + bc)`` in NumPy's order (a GPU may fuse a multiply and an
add: a rounding, within the promised bound).
"""
from __future__ import annotations

import math
import types as _pytypes

from numba import cuda, float64, int32, int64

from ..kernels import scan as _cpu_scan
from ._device import simulated
from ._jit import kernel
from .kernels import _divmod, _log_add_exp, _unravel

#: Where the dimension records start in an elementwise and in a lane geometry.
ELEM_DIMS, LANE_DIMS = 4, 8
#: Where a product's kept records start (its reduced ones follow them).
ROW_DIMS = 5
#: The constants of a real work dtype, in a small device array: one, half, the
#: smallest normal, the largest finite, infinity.
C_ONE, C_HALF, C_TINY, C_HUGE, C_INF = 0, 1, 2, 3, 4
#: ``2**e`` overflows for ``e`` above this in the work dtype's frexp exponent
#: (float32: 128, float64: 1024); far below, every value rounds to zero.
EXP_FLOOR = -1100


def _device_version(fn, **callees):
    """A CPU helper (its Python function) compiled for the device, the helpers it
    calls replaced by their device versions."""
    f = fn.py_func
    scope = dict(f.__globals__)
    scope.update(callees)
    return cuda.jit(device=True, inline=True)(
        _pytypes.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__))


_normalized = _device_version(_cpu_scan._normalized)
_scaled_sum = _device_version(_cpu_scan._scaled_sum, _normalized=_normalized)
_exp_diff = _device_version(_cpu_scan._exp_diff)

# ----------------------------------------------------------------- device helpers


@cuda.jit(device=True, inline=True)
def _walk(k, geo, start, count):
    """The offsets in operands a, b, c of flat index *k* (C order) over *count*
    records ``(size, magic, shift, sa, sb, sc)`` from ``geo[start]``."""
    a = int64(0)
    b = int64(0)
    c = int64(0)
    for e in range(count):
        rec = start + 6 * (count - 1 - e)
        q, r = _divmod(k, geo, rec)
        a += r * geo[rec + 3]
        b += r * geo[rec + 4]
        c += r * geo[rec + 5]
        k = q
    return a, b, c


@cuda.jit(device=True, inline=True)
def _elem(k, geo):
    a, b, c = _walk(k, geo, ELEM_DIMS, geo[3])
    return a + geo[0], b + geo[1], c + geo[2]


@cuda.jit(device=True, inline=True)
def _lane_start(lane, geo):
    a, b, c = _walk(lane, geo, LANE_DIMS, geo[7])
    return a + geo[4], b + geo[5], c + geo[6]


@cuda.jit(device=True, inline=True)
def _at(j, n, reverse):
    """Position of scan step j along an axis of length n."""
    return n - 1 - j if reverse else j


@cuda.jit(device=True, inline=True)
def _frexp(v, one):
    """math.frexp with the mantissa in v's dtype (the simulator's is a Python float)."""
    m, e = math.frexp(v)
    return m * one, e


if simulated():
    def _exponent(e):
        """An exponent for math.ldexp: the simulator's is Python's, which takes an int."""
        return int(e)
else:
    @cuda.jit(device=True, inline=True)
    def _exponent(e):
        """An exponent for math.ldexp: int32 on the device (libdevice's ldexp)."""
        return int32(e)


@cuda.jit(device=True, inline=True)
def _ldexp(v, e, consts, max_exp):
    """``v * 2**e`` rounded once, as ``numpy.ldexp`` (inf past the range, a signed
    zero below it, 0, inf and NaN as they are), for any int64 e."""
    if v == 0 or v != v or v - v != 0:
        return v * consts[C_ONE]
    f = math.frexp(v)[1] + e
    if f > max_exp:
        return v * consts[C_INF]
    if f < EXP_FLOOR:
        return v * (consts[C_ONE] - consts[C_ONE])
    return math.ldexp(v, _exponent(e))


@cuda.jit(device=True, inline=True)
def _normal(v, consts):
    a = abs(v)
    return a >= consts[C_TINY] and a <= consts[C_HUGE]


@cuda.jit(device=True, inline=True)
def _cmul(ar, ai, br, bi):
    """(a * b) by parts, NumPy's formula."""
    return ar * br - ai * bi, ar * bi + ai * br


# ------------------------------------------------------------------ elementwise


@kernel
def divide_c(base, geo, count, out):
    """``out`` (flat, C order) = the strided array of *geo* (``kernels.copy_c``'s
    ``[offset, ndim, dims]``, zero strides broadcasting ``g``) divided by *count*
    (a scalar of the division's dtype: float32 for float16, as NumPy divides)."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = base[geo[0] + _unravel(k, geo, 2, geo[1])] / count


@kernel
def divide_parts_c(base, geo, count, out):
    """:func:`divide_c` of a complex array, each part divided by the real *count*
    (``grad.mean`` divides the parts apart)."""
    k = cuda.grid(1)
    if k < out.size:
        v = base[geo[0] + _unravel(k, geo, 2, geo[1])]
        out[k] = complex(v.real / count, v.imag / count)


@kernel
def mark_equal(geo, size, x, extreme, hit):
    """``hit[k] = x[k] == extreme[k]`` (1 or 0), the extreme broadcast over the
    reduced axes; NaN equals nothing, -0.0 equals +0.0."""
    k = cuda.grid(1)
    if k < size:
        a, b, _ = _elem(k, geo)
        hit[k] = 1 if x[a] == extreme[b] else 0


@kernel
def split_ties(geo, size, g, count, hit, masked, out):
    """max/min's gradient: ``(g / count) * hit`` in float64, rounded once to out's
    dtype (NumPy divides by an int64 count in float64). *masked* (nanmax/nanmin):
    ``g / max(count, 1)`` where hit, else 0 (an all-NaN slice: zeros)."""
    k = cuda.grid(1)
    if k < size:
        a, b, _ = _elem(k, geo)
        c = count[b]
        if masked:
            if hit[k] == 0:
                out[k] = 0
                return
            c = max(c, 1)
        out[k] = (float64(g[a]) / float64(c)) * float64(hit[k])


@kernel
def split_ties_complex(geo, size, g, count, hit, masked, out):
    """:func:`split_ties` of complex ``g``: NumPy's complex128 division by
    ``count + 0j`` (Smith's: a reciprocal when count > 0, the parts divided by
    +0.0 otherwise) and its complex product with ``hit + 0j``, by parts; *masked*
    as :func:`split_ties`'s (the quotient itself where hit)."""
    k = cuda.grid(1)
    if k < size:
        a, b, _ = _elem(k, geo)
        if masked and hit[k] == 0:
            out[k] = 0
            return
        v = g[a]
        ar = float64(v.real)
        ai = float64(v.imag)
        c = float64(max(count[b], 1) if masked else count[b])
        h = float64(hit[k])
        zero = c - c
        if c == 0:
            qr = ar / c
            qi = ai / c
        else:
            scale = 1.0 / c
            qr = (ar + ai * zero) * scale
            qi = (ai - ar * zero) * scale
        if masked:
            out[k] = complex(qr, qi)
        else:
            out[k] = complex(qr * h - qi * zero, qr * zero + qi * h)


@kernel
def nonzero_c(src, out):
    """``out[k] = src[k] != 0`` as bytes (a bool cumsum: a count, then any)."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = 1 if src[k] != 0 else 0


# ---------------------------------------------------------------------- products


@kernel
def prod_rows(geo, rows, x, g, consts, max_exp, out):
    """``grad.prod`` of a real work dtype, a thread per row (output of the forward):
    ``out = g * (before * after)``, the products of the elements before and after
    each one in index order; a row where one of them is not a normal float is
    computed again with exponents apart (``scaled_exclusive_products``) and
    rounded once. x (a), g (b, broadcast) and out (c) are of the work dtype."""
    row = cuda.grid(1)
    if row >= rows:
        return
    count = geo[0]
    nk = geo[4]
    red = ROW_DIMS + 6 * nk
    nr = geo[red]
    xa, ga, oa = _walk(row, geo, ROW_DIMS, nk)
    xa += geo[1]
    oa += geo[3]
    gv = g[ga + geo[2]]
    one = consts[C_ONE]
    normal = True
    p = one
    for t in range(count):
        xo, _, oo = _walk(t, geo, red + 1, nr)
        out[oa + oo] = p
        normal = normal and _normal(p, consts)
        p = p * x[xa + xo]
    p = one
    for s in range(count):
        xo, _, oo = _walk(count - 1 - s, geo, red + 1, nr)
        normal = normal and _normal(p, consts)
        out[oa + oo] = gv * (out[oa + oo] * p)
        p = p * x[xa + xo]
    if normal:
        return
    half = consts[C_HALF]
    m = one
    e = int64(0)
    for t in range(count):  # before: mantissas stored, the exponent carried
        xo, _, oo = _walk(t, geo, red + 1, nr)
        xm, xe = _frexp(x[xa + xo], one)
        out[oa + oo] = m
        m, e = _normalized(m * xm, e + xe, half)
    am = one
    ae = int64(0)
    for s in range(count):  # after, and before's exponents recovered
        xo, _, oo = _walk(count - 1 - s, geo, red + 1, nr)
        xm, xe = _frexp(x[xa + xo], one)
        bm = out[oa + oo]
        step = _normalized(bm * xm, int64(0), half)[1]
        e = e - xe - step
        out[oa + oo] = _ldexp(gv * (bm * am), e + ae, consts, max_exp)
        am, ae = _normalized(am * xm, ae + xe, half)


@kernel
def prod_rows_complex(geo, rows, x, g, one, out):
    """``grad.prod`` of complex numbers, a thread per row: ``conj(before * after) * g``
    with the exclusive products as NumPy's ``cumprod`` makes them (the first
    element itself, then running products)."""
    row = cuda.grid(1)
    if row >= rows:
        return
    count = geo[0]
    nk = geo[4]
    red = ROW_DIMS + 6 * nk
    nr = geo[red]
    xa, ga, oa = _walk(row, geo, ROW_DIMS, nk)
    xa += geo[1]
    oa += geo[3]
    gv = g[ga + geo[2]]
    gr = gv.real
    gi = gv.imag
    pr = one.real
    pi = one.imag
    for t in range(count):
        xo, _, oo = _walk(t, geo, red + 1, nr)
        out[oa + oo] = complex(pr, pi)
        v = x[xa + xo]
        if t == 0:
            pr = v.real
            pi = v.imag
        else:
            pr, pi = _cmul(pr, pi, v.real, v.imag)
    pr = one.real
    pi = one.imag
    for s in range(count):
        t = count - 1 - s
        xo, _, oo = _walk(t, geo, red + 1, nr)
        b = out[oa + oo]
        o_r, o_i = _cmul(b.real, b.imag, pr, pi)
        rr, ri = _cmul(o_r, -o_i, gr, gi)
        out[oa + oo] = complex(rr, ri)
        v = x[xa + xo]
        if s == 0:
            pr = v.real
            pi = v.imag
        else:
            pr, pi = _cmul(pr, pi, v.real, v.imag)


# ------------------------------------------------------------------------- scans


@kernel
def cumprod_lanes(geo, lanes, x, g, exclusive, reverse, consts, max_exp, pow2, out):
    """``grad.cumprod`` of a real work dtype, a thread per lane: the CPU's
    ``cumprod_vjp`` (``dx_k = P_k * S_k``, P the product before step k, S a
    backward recurrence), and ``cumprod_vjp_scaled`` again for a lane whose result
    is not all normal floats or whose P or S went subnormal on the way. x (a), g
    (b) and out (c) are of the work dtype."""
    lane = cuda.grid(1)
    if lane >= lanes:
        return
    n = geo[0]
    sx = geo[1]
    sg = geo[2]
    so = geo[3]
    xa, ga, oa = _lane_start(lane, geo)
    one = consts[C_ONE]
    zero = one - one
    tiny = consts[C_TINY]
    p = one
    # as the CPU's cumprod_vjp: a lane whose P or S passes through a subnormal
    # (nonzero, below tiny) is computed again below, even where its result is normal
    normal = True
    for j in range(n):
        q = _at(j, n, reverse)
        out[oa + q * so] = p
        normal = normal and (p == zero or abs(p) >= tiny)
        p = p * x[xa + q * sx]
    s = zero
    for i in range(n):
        j = n - 1 - i
        q = _at(j, n, reverse)
        if j == n - 1:  # S = g_{n-1}; T = 0, the empty sum
            s = zero if exclusive else g[ga + q * sg]
        elif exclusive and j == n - 2:  # x_{n-1} is in no exclusive output
            s = g[ga + _at(j + 1, n, reverse) * sg]
        else:
            qn = _at(j + 1, n, reverse)
            h = g[ga + qn * sg] if exclusive else g[ga + q * sg]
            s = h + x[xa + qn * sx] * s
        v = out[oa + q * so] * s
        out[oa + q * so] = v
        normal = normal and _normal(v, consts) and (s == zero or abs(s) >= tiny)
    if normal:
        return
    half = consts[C_HALF]
    m = one
    e = int64(0)
    for j in range(n):  # P: mantissas stored; the last exponent carried
        q = _at(j, n, reverse)
        out[oa + q * so] = m
        if j < n - 1:
            xm, xe = _frexp(x[xa + q * sx], one)
            m, e = _normalized(m * xm, e + xe, half)
    sm = zero
    se = int64(0)
    for i in range(n):  # S, P's exponents recovered, and P * S
        j = n - 1 - i
        q = _at(j, n, reverse)
        if j == n - 1:
            if exclusive:
                sm = zero
                se = int64(0)
            else:
                sm, se = _frexp(g[ga + q * sg], one)
        elif exclusive and j == n - 2:
            sm, se = _frexp(g[ga + _at(j + 1, n, reverse) * sg], one)
        else:
            qn = _at(j + 1, n, reverse)
            xm, xe = _frexp(x[xa + qn * sx], one)
            tm, te = _normalized(xm * sm, xe + se, half)
            gm, ge = _frexp(g[ga + qn * sg] if exclusive else g[ga + q * sg], one)
            sm, se = _scaled_sum(gm, ge, tm, te, pow2, half)
        pm = out[oa + q * so]
        if j < n - 1:  # P_{j+1} = normalized(P_j * x_j): undo that step's exponent
            xm, xe = _frexp(x[xa + q * sx], one)
            e = e - xe - _normalized(pm * xm, int64(0), half)[1]
        rm, re = _normalized(pm * sm, e + se, half)
        out[oa + q * so] = _ldexp(rm, re, consts, max_exp)


@kernel
def cumprod_lanes_complex(geo, lanes, x, g, exclusive, reverse, one, out):
    """``grad.cumprod`` of complex numbers, a thread per lane: ``conj(P_k) * S_k``
    with ``S_k = h_k + conj(x_{k+1}) * S_{k+1}`` (``h_k = g_k``; exclusive:
    ``g_{k+1}``), the CPU's loop by parts."""
    lane = cuda.grid(1)
    if lane >= lanes:
        return
    n = geo[0]
    sx = geo[1]
    sg = geo[2]
    so = geo[3]
    xa, ga, oa = _lane_start(lane, geo)
    pr = one.real
    pi = one.imag
    zero = pr - pr
    for j in range(n):
        q = _at(j, n, reverse)
        out[oa + q * so] = complex(pr, pi)
        v = x[xa + q * sx]
        if j == 0:
            pr = v.real
            pi = v.imag
        else:
            pr, pi = _cmul(pr, pi, v.real, v.imag)
    sr = zero
    si = zero
    for i in range(n):
        j = n - 1 - i
        q = _at(j, n, reverse)
        hr = zero
        hi = zero
        if not exclusive:
            h = g[ga + q * sg]
            hr = h.real
            hi = h.imag
        elif j < n - 1:
            h = g[ga + _at(j + 1, n, reverse) * sg]
            hr = h.real
            hi = h.imag
        if j == n - 1:
            sr = hr + zero
            si = hi + zero
        else:
            v = x[xa + _at(j + 1, n, reverse) * sx]
            tr, ti = _cmul(v.real, -v.imag, sr, si)
            sr = hr + tr
            si = hi + ti
        b = out[oa + q * so]
        rr, ri = _cmul(b.real, -b.imag, sr, si)
        out[oa + q * so] = complex(rr, ri)


@kernel
def logcumsumexp_lanes(geo, lanes, x, g, out):
    """``grad.logcumsumexp``, a thread per lane: y = logcumsumexp(x) forwards (float64
    accumulation, each output rounded once to the work dtype, into out), then the
    CPU's ``logcumsumexp_vjp`` backwards: ``dx_k = exp(x_k - y_k) * Q_k``,
    ``Q_k = g_k + exp(y_k - y_{k+1}) * Q_{k+1}``, Q rounded to the work dtype at
    each step (through out). x (a), g (b) and out (c) are of the work dtype."""
    lane = cuda.grid(1)
    if lane >= lanes:
        return
    n = geo[0]
    sx = geo[1]
    sg = geo[2]
    so = geo[3]
    xa, ga, oa = _lane_start(lane, geo)
    acc = -math.inf
    for j in range(n):
        acc = _log_add_exp(acc, float64(x[xa + j * sx]))
        out[oa + j * so] = acc
    y_next = out[oa]
    q = out[oa]
    for i in range(n):
        j = n - 1 - i
        k = oa + j * so
        y = out[k]
        if j == n - 1:
            q = g[ga + j * sg]
        else:
            out[k] = g[ga + j * sg] + _exp_diff(y, y_next) * q
            q = out[k]
        out[k] = _exp_diff(x[xa + j * sx], y) * q
        y_next = y


@kernel
def scatter_lanes(geo, lanes, index, g, bad, out):
    """cummax/cummin's gradient, a thread per lane: the lane of out zeroed, then
    ``out[index[j]] += g[j]`` for j in increasing order (the CPU's
    ``scatter_add_lanes``). index (a, C order: its offset is its position), g (b),
    out (c). An index outside ``[0, n)`` adds nothing and lowers ``bad[0]`` to its
    position (``atomic.min``: the first in C order)."""
    lane = cuda.grid(1)
    if lane >= lanes:
        return
    n = geo[0]
    si = geo[1]
    sg = geo[2]
    so = geo[3]
    ia, ga, oa = _lane_start(lane, geo)
    for j in range(n):
        out[oa + j * so] = 0
    for j in range(n):
        r = int64(index[ia + j * si])
        if r < 0 or r >= n:
            cuda.atomic.min(bad, 0, ia + j * si)
        else:
            out[oa + r * so] += g[ga + j * sg]


# ------------------------------------------------------------------ compile check


def signatures():
    """(name, Python function, argument types) of every specialisation the
    launchers of :mod:`axisops.cuda.reduce_grad` and :mod:`axisops.cuda.scan_grad`
    make (see :mod:`axisops.cuda._signatures`)."""
    import numpy as np
    from numba import from_dtype, types

    from . import kernels as K
    from ._signatures import DTYPES

    def arr(dtype):
        return types.Array(from_dtype(np.dtype(dtype)), 1, "C")

    def scalar(dtype):
        return from_dtype(np.dtype(dtype))

    def name(dtype):
        return np.dtype(dtype).name

    i64, boolean, geo = types.int64, types.boolean, arr(np.int64)
    reals = (np.float32, np.float64)
    complexes = (np.complex64, np.complex128)
    for c in complexes:  # sum's broadcast copy (the real dtypes are kernels' own)
        yield f"copy_c {name(c)}", K.copy_c.py_func, (arr(c), geo, arr(c))
    # conversions to a work dtype (kernels.copy_c converts as it stores)
    for src in [*DTYPES, *complexes]:
        for dst in (*reals, *complexes):
            kinds = np.dtype(src).kind + np.dtype(dst).kind
            if src != dst and kinds != "cf" and (src, dst) != (np.complex128, np.complex64):
                yield (f"copy_c {name(src)}->{name(dst)}", K.copy_c.py_func,
                       (arr(src), geo, arr(dst)))
    for dt, count in ((np.float16, np.float32), (np.float32, np.float32),
                      (np.float64, np.float64)):
        yield f"divide_c {name(dt)}", divide_c.py_func, (arr(dt), geo, scalar(count), arr(dt))
    for c, part in zip(complexes, reals):
        yield (f"divide_parts_c {name(c)}", divide_parts_c.py_func,
               (arr(c), geo, scalar(part), arr(c)))
    for dt in DTYPES:
        yield f"mark_equal {name(dt)}", mark_equal.py_func, (geo, i64, arr(dt), arr(dt),
                                                              arr(np.int8))
    for g, out in ((np.float16, np.float16), (np.float32, np.float32), (np.float64, np.float64),
                   (np.float64, np.float16), (np.float64, np.float32)):
        yield (f"split_ties {name(g)}->{name(out)}", split_ties.py_func,
               (geo, i64, arr(g), arr(np.int64), arr(np.int8), boolean, arr(out)))
    for g, out in ((np.complex64, np.complex64), (np.complex64, np.complex128),
                   (np.complex128, np.complex128)):
        yield (f"split_ties_complex {name(g)}->{name(out)}", split_ties_complex.py_func,
               (geo, i64, arr(g), arr(np.int64), arr(np.int8), boolean, arr(out)))
    yield "nonzero_c", nonzero_c.py_func, (arr(np.int64), arr(np.uint8))
    for w in reals:
        a = arr(w)
        yield f"prod_rows {name(w)}", prod_rows.py_func, (geo, i64, a, a, a, i64, a)
        yield (f"cumprod_lanes {name(w)}", cumprod_lanes.py_func,
               (geo, i64, a, a, boolean, boolean, a, i64, a, a))
        yield f"logcumsumexp_lanes {name(w)}", logcumsumexp_lanes.py_func, (geo, i64, a, a, a)
    for c in complexes:
        a = arr(c)
        yield f"prod_rows_complex {name(c)}", prod_rows_complex.py_func, (geo, i64, a, a,
                                                                           scalar(c), a)
        yield (f"cumprod_lanes_complex {name(c)}", cumprod_lanes_complex.py_func,
               (geo, i64, a, a, boolean, boolean, scalar(c), a))
    # cummax/cummin: g as it is into its work dtype (float16: float32; bool, seen as
    # uint8: int64); the index dtypes convert to int64 alike (take's three stand for all)
    pairs = [(dt, np.float32 if dt == np.float16 else dt) for dt in [*DTYPES, *complexes]]
    for g, out in [*pairs, (np.uint8, np.int64)]:
        for index in (np.int64, np.int32, np.uint32):
            yield (f"scatter_lanes {name(g)}->{name(out)} {name(index)}", scatter_lanes.py_func,
                   (geo, i64, arr(index), arr(g), arr(np.int64), arr(out)))

"""CUDA kernels of the missing-value operators beyond the reductions' and scans'
own (which skip NaN in the same pass: ``kernels.OP_NANSUM``, ``OP_NANPROD``, the
arg-reductions' *skip*): the divisions by counts (nanmean, the variances), the
squared deviations of the variances' second pass, and the elementwise steps of
the gradients (NaN positions zeroed or read as 1, the variances' gradient).

Elementwise kernels take a C-ordered result and either ``kernels.copy_c``'s
geometry ``[offset, ndim, dims]`` (one strided operand) or ``grad_kernels``'
``[off_a, off_b, off_c, ndim, records]`` (up to three). A NaN is ``v != v``:
either part of a complex number.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64

from ._jit import kernel
from .grad_kernels import _elem
from .kernels import _unravel


@kernel
def ratio_c(total, counts, per_output, whole, ddof, bad, out):
    """``out[k] = total[k] / (n - ddof)``, divided in float64 (complex128) and rounded
    once to out's dtype, as NumPy's nan-functions divide; ``n`` is ``counts[k]``
    (*per_output*) or *whole*. Where ``n - ddof <= 0``: NaN, and ``bad[0] = 1``
    (the caller's RuntimeWarning)."""
    k = cuda.grid(1)
    if k >= out.size:
        return
    n = counts[k] if per_output else whole
    c = float64(n) - ddof
    if c <= 0:
        out[k] = math.nan
        bad[0] = 1
    else:
        out[k] = total[k] / c


@kernel
def root_c(out, zero):
    """``out[k] = sqrt(out[k])`` in the dtype of *zero* (float32 for float16, as
    NumPy's square root), rounded once to out's dtype."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = math.sqrt(out[k] + zero)


@kernel
def squared_deviation(geo, size, x, mean, out):
    """The variances' second pass: ``out[k] = |x - mean|**2`` (``re**2 + im**2`` for
    complex numbers, in their part dtype), the mean broadcast over the reduced
    axes (operand b); a NaN stays NaN."""
    k = cuda.grid(1)
    if k < size:
        a, b, _ = _elem(k, geo)
        dev = x[a] - mean[b]
        out[k] = dev.real * dev.real + dev.imag * dev.imag


@kernel
def zero_at_nan(base, geo, out):
    """``out[k] = 0`` where the strided array of *geo* (``[offset, ndim, dims]``, the
    forward's ``x``) is NaN: the nan operators' gradients."""
    k = cuda.grid(1)
    if k < out.size:
        v = base[geo[0] + _unravel(k, geo, 2, geo[1])]
        if v != v:
            out[k] = 0


@kernel
def nan_to_fill(base, geo, fill, out):
    """``out`` (flat, C order, converted to its dtype) = the strided array of *geo*
    with each NaN read as *fill*: 1 for nanprod's and nancumprod's gradients, the
    identity before an integer ``dtype=`` (as the NumPy path converts)."""
    k = cuda.grid(1)
    if k < out.size:
        v = base[geo[0] + _unravel(k, geo, 2, geo[1])]
        if v != v:
            out[k] = fill
        else:
            out[k] = v


@kernel
def nanmean_share(geo, size, x, count, g, skip, zero, out):
    """grad.nanmean: ``out[k] = g / count`` in the dtype of *zero* (x is operand a,
    the count, converted to that dtype as NumPy converts it, b, ``g`` c, both
    broadcast), 0 where x is NaN (with *skip*)."""
    k = cuda.grid(1)
    if k < size:
        a, b, c = _elem(k, geo)
        v = x[a]
        if skip and v != v:
            out[k] = 0
        else:
            out[k] = (g[c] + zero) / (count[b] + zero)


@kernel
def deviation_grad(geo, size, x, mean, std, counts, g, per_output, whole, ddof, root, skip,
                   zero, out):
    """grad.var/std/nanvar/nanstd, as ``grad.missing``: ``scale = g / (n - ddof)``,
    then ``2 scale (x - mean)`` (var) or ``scale (x - mean) / std`` (std), in the
    work dtype of *zero* (float64, complex128), rounded once to out's; 0 at a NaN
    with *skip*. x is operand a, the per-output values b (the mean in the work
    dtype, the forward's std, ``counts`` the non-NaN counts when *per_output*,
    else *whole*), ``g`` c."""
    k = cuda.grid(1)
    if k < size:
        a, b, c = _elem(k, geo)
        v = x[a]
        if skip and v != v:
            out[k] = 0
            return
        n = counts[b] if per_output else whole
        scale = (g[c] + zero) / (float64(n) - ddof)
        dev = (v + zero) - mean[b]
        if root:
            out[k] = scale * dev / std[b]
        else:
            out[k] = 2 * scale * dev


def signatures():
    """(name, Python function, argument types) of this module's kernels, as
    :func:`axisops.cuda._signatures.signatures` lists them."""
    from numba import from_dtype, types

    def arr(dtype, ndim=1):
        return types.Array(from_dtype(np.dtype(dtype)), ndim, "C")

    i64, boolean, f64 = types.int64, types.boolean, types.float64
    geo = arr(np.int64)
    reals = [np.float16, np.float32, np.float64]
    for dt in [*reals, np.complex64, np.complex128]:
        name = np.dtype(dt).name
        yield (f"ratio_c {name}", ratio_c.py_func,
               (arr(dt), arr(np.int64), boolean, i64, f64, arr(np.int64), arr(dt)))
        part = np.dtype(dt).char.lower() if np.dtype(dt).kind == "c" else dt
        yield (f"squared_deviation {name}", squared_deviation.py_func,
               (geo, i64, arr(dt), arr(dt), arr(part)))
        for x in (dt, np.uint8, np.int64):
            yield (f"squared_deviation {np.dtype(x).name}->{name}", squared_deviation.py_func,
                   (geo, i64, arr(x), arr(dt), arr(part)))
        yield f"zero_at_nan {name}", zero_at_nan.py_func, (arr(dt), geo, arr(dt))
        yield f"zero_at_nan {name}->uint8", zero_at_nan.py_func, (arr(dt), geo, arr(np.uint8))
        yield f"nan_to_fill {name}", nan_to_fill.py_func, (arr(dt), geo, i64, arr(dt))
        if np.dtype(dt).kind == "f":
            for to in (np.int64, np.uint64):
                yield (f"nan_to_fill {name}->{np.dtype(to).name}", nan_to_fill.py_func,
                       (arr(dt), geo, i64, arr(to)))
        work = np.float32 if dt == np.float16 else dt
        for g in (dt, np.int64):
            yield (f"nanmean_share {name} g {np.dtype(g).name}", nanmean_share.py_func,
                   (geo, i64, arr(dt), arr(work), arr(g), boolean, from_dtype(np.dtype(work)),
                    arr(dt)))
        wide = np.complex128 if np.dtype(dt).kind == "c" else np.float64
        std = np.dtype(part) if np.dtype(dt).kind == "c" else np.dtype(dt)
        for x in (dt, np.int64):
            for s in (std, wide):  # std's, and var's (which passes the mean there)
                yield (f"deviation_grad {np.dtype(x).name}->{name} {np.dtype(s).name}",
                       deviation_grad.py_func,
                       (geo, i64, arr(x), arr(wide), arr(s), arr(np.int64), arr(dt), boolean,
                        i64, f64, boolean, boolean, from_dtype(np.dtype(wide)), arr(dt)))
    for dt in reals:
        zero = np.float64 if dt == np.float64 else np.float32
        yield (f"root_c {np.dtype(dt).name}", root_c.py_func,
               (arr(dt), from_dtype(np.dtype(zero))))

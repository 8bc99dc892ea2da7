"""exp and log of a block of float64 values, in loops LLVM vectorises.

Numba's ``math.exp`` and ``math.log`` call the C library once per element (no
SVML here), 8-12 ns each on an AMD EPYC Zen 4: a logcumsumexp that needs one of
each per element spent 18-25 ns an element on them. These run the classic
algorithms as plain arithmetic over a block, so each loop compiles to SIMD code
(8 doubles a step with AVX-512), about 1 ns an element for both:

* exp: ``x = k ln2 + r`` with ``k = round(x / ln2)`` (the 1.5 * 2**52 rounding
  trick), ``ln2`` in two parts (fdlibm's ``ln2_hi`` has trailing zeros, so
  ``k ln2_hi`` is exact), ``|r| <= ln2 / 2``, exp(r) by its Taylor series to the
  13th power (truncation below 2e-16 relative), times ``2**k`` built in the
  exponent bits.
* log: ``x = 2**k m`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` from the bits,
  ``log m = 2 atanh(s)``, ``s = (m - 1) / (m + 1)``, ``|s| <= 0.172``, by its
  series to the 23rd power (truncation below 1e-17), plus ``k ln2`` in two parts.

Both are within a few units in the last place of the correctly rounded result
(``tests/test_vmath.py`` measures them against NumPy's on every range they are
used on), not the bits of the C library's functions. The integer steps run on an
``int64`` view of the float scratch, in loops of their own: a bit cast of one
value is not something Numba compiles to SIMD code, a view of a block is.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import helper

_LOG2E = 1.4426950408889634
_ROUND = 6755399441055744.0  # 1.5 * 2**52: x + _ROUND - _ROUND rounds x to an integer
_LN2_HI = 6.93147180369123816490e-01  # fdlibm: 0x3fe62e42fee00000
_LN2_LO = 1.90821492927058770002e-10
_ONE_BITS = 0x3FF0000000000000  # the bits of 1.0: a biased exponent of 0
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # the bits of sqrt(1/2)
#: 2**52 + 1024 as bits' worth of an integer: ``k + _INT_BITS`` viewed as float64
#: is ``2**52 + 1024 + k`` for ``|k| < 1024``, a conversion without ``cvtqq2pd``
_INT_BITS = 0x4330000000000000 + 1024
_INT_OFFSET = 4503599627370496.0 + 1024.0
#: exp flushes below this to 0 (the blocks that use it pass -inf or >= -600)
EXP_MIN = -708.0

#: exp(r) = sum r**j / j!, j = 13 .. 0, in Horner order
_EXP_TERMS = tuple(1.0 / math.factorial(j) for j in range(13, -1, -1))
#: atanh(s) / s = sum z**j / (2 j + 1), z = s**2, j = 11 .. 1, in Horner order
_ATANH_TERMS = tuple(1.0 / (2 * j + 1) for j in range(11, 0, -1))


@helper(inline=True)
def _horner(terms, r):
    """The polynomial of coefficients *terms* (highest power first) at *r*; a loop
    over a tuple of constants, unrolled by the compiler."""
    p = 0.0
    for c in terms:
        p = p * r + c
    return p


@helper
def exp_block(x, out, scratch, count):
    """``out[k] = exp(x[k])`` for ``k < count``, each ``x[k]`` in ``[EXP_MIN, 0]`` or
    below it (then 0: ``-inf`` included). *scratch* is float64 like *out*, at least
    *count* long. Three distinct arrays: with *x* as *out*, LLVM's test of overlap
    at run time sent the loops to their scalar copies (8 ns an element)."""
    bits = scratch.view(np.int64)
    for k in range(count):
        v = x[k]
        v = v if v >= EXP_MIN else 0.0
        t = v * _LOG2E + _ROUND
        kd = t - _ROUND
        r = (v - kd * _LN2_HI) - kd * _LN2_LO
        p = _horner(_EXP_TERMS, r)
        scratch[k] = t
        out[k] = p if x[k] >= EXP_MIN else 0.0
    for k in range(count):  # 2**k: the low bits of t hold k (two's complement)
        bits[k] = (bits[k] << 52) + _ONE_BITS
    for k in range(count):
        out[k] *= scratch[k]


@helper(unchecked_division=True)  # 2 + f >= 1.7
def log_block(x, out, scratch, powers, count):
    """``out[k] = log(x[k])`` for ``k < count``, each ``x[k]`` a normal positive
    float64 or 0 (then ``-inf``). *scratch* and *powers* are float64, at least
    *count* long; all four arrays distinct (as for :func:`exp_block`)."""
    bits = scratch.view(np.int64)
    ebits = powers.view(np.int64)
    xbits = x.view(np.int64)
    for k in range(count):  # x = 2**e m, m in [sqrt(1/2), sqrt(2))
        b = xbits[k]
        e = (b - _SQRT_HALF_BITS) >> 52
        bits[k] = b - (e << 52)
        ebits[k] = e + _INT_BITS
    for k in range(count):
        m = scratch[k]
        f = m - 1.0
        s = f / (2.0 + f)
        z = s * s
        q = _horner(_ATANH_TERMS, z)
        ed = powers[k] - _INT_OFFSET
        logm = 2.0 * s + 2.0 * s * (z * q)
        y = ed * _LN2_HI + (ed * _LN2_LO + logm)
        out[k] = y if x[k] > 0.0 else -np.inf

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

# 1/j! for j = 13 .. 2, Horner order
_E13 = 1.0 / 6227020800.0
_E12 = 1.0 / 479001600.0
_E11 = 1.0 / 39916800.0
_E10 = 1.0 / 3628800.0
_E9 = 1.0 / 362880.0
_E8 = 1.0 / 40320.0
_E7 = 1.0 / 5040.0
_E6 = 1.0 / 720.0
_E5 = 1.0 / 120.0
_E4 = 1.0 / 24.0
_E3 = 1.0 / 6.0
_E2 = 0.5

# 1/(2j + 1) for j = 11 .. 1, Horner order in s**2
_L11 = 1.0 / 23.0
_L10 = 1.0 / 21.0
_L9 = 1.0 / 19.0
_L8 = 1.0 / 17.0
_L7 = 1.0 / 15.0
_L6 = 1.0 / 13.0
_L5 = 1.0 / 11.0
_L4 = 1.0 / 9.0
_L3 = 1.0 / 7.0
_L2 = 1.0 / 5.0
_L1 = 1.0 / 3.0


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
        p = _E13
        p = p * r + _E12
        p = p * r + _E11
        p = p * r + _E10
        p = p * r + _E9
        p = p * r + _E8
        p = p * r + _E7
        p = p * r + _E6
        p = p * r + _E5
        p = p * r + _E4
        p = p * r + _E3
        p = p * r + _E2
        p = p * r + 1.0
        p = p * r + 1.0
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
        q = _L11
        q = q * z + _L10
        q = q * z + _L9
        q = q * z + _L8
        q = q * z + _L7
        q = q * z + _L6
        q = q * z + _L5
        q = q * z + _L4
        q = q * z + _L3
        q = q * z + _L2
        q = q * z + _L1
        ed = powers[k] - _INT_OFFSET
        logm = 2.0 * s + 2.0 * s * (z * q)
        y = ed * _LN2_HI + (ed * _LN2_LO + logm)
        out[k] = y if x[k] > 0.0 else -np.inf

"""Compiled entries of the extremes of a whole array: ``max``, ``min``, ``argmax``,
``argmin`` and their NaN-skipping twins of a C-contiguous float32, float64, int32
or int64 array reduced over every element (``axisops._fast.arg``).

The planned kernel serves any layout and is reached through its address with the
geometry of a ``ReductionView``: about 0.5 us of a call whatever the size. A
whole array needs none of it: one loop over the elements' bits as signed integers
of their width, turned into keys that order as the values do (a negative
float's magnitude bits flipped), takes the greatest (or least) key and whether a
NaN was seen; it vectorises (``vpmaxsq`` on AVX-512) where a float ``v > m``
without fast-math does not. The arg-reductions then find the first element equal
to the extreme (``==`` on the values: -0.0 equals +0.0, as NumPy's first maximum)
or the first NaN. Results are the planned path's: a float extreme that is zero
is +0.0, a NaN the default NaN.

One twin body serves a maximum and a minimum (``LEAST``): the minimum is the
maximum of the keys' complement.
"""
from __future__ import annotations

import numpy as np
from numba import from_dtype, njit
from numba.cpython.unsafe.numbers import viewer

from .._jit import factory, stable_cache
from .reduce import _float_run_extreme, _float_run_nanextreme, _int_run_extreme, key_bits


@factory
def extreme_loops(dtype_str: str, least: bool, skip_nan: bool):
    """``(extreme_of, position_of, columns_of, column_value, column_key)``: the loops of
    :func:`extreme_entries` on the elements' bits as signed integers of their
    width, and of the columns of a 2-D array, Numba-inlined into their callers
    (these and ``kernels.scalar_entry``'s: a compiled callee of a cached function
    must have a name of its own, see ``kernels.entry``)."""
    dtype = np.dtype(dtype_str)
    floating = dtype.kind == "f"
    width = 8 * dtype.itemsize
    SIGNED = np.dtype(f"i{dtype.itemsize}").type
    MAG = SIGNED((1 << (width - 1)) - 1)                   # all bits but the sign
    INF = SIGNED(0x7F800000 if width == 32 else 0x7FF0000000000000)  # +inf's bits
    LOWEST = SIGNED(-(1 << (width - 1)))
    FLOATING = floating
    LEAST = least
    SKIP = skip_nan and floating
    NAN = np.nan
    DT = dtype.type
    NUMBA_TYPE = from_dtype(dtype)
    BLOCK = 256
    # a run of floats from LONG elements: the planned kernel's blocked pass
    # (``reduce._float_run_extreme``), three integer reductions of the raw bits
    # per element where :func:`greatest` makes each element's key and NaN test:
    # on AVX2 a float32 max of 65536 elements 8.3 -> 5.4 us (NumPy's 5.8), argmax
    # 9.9 -> 5.5 (5.4); rows of 1024 float32 take half the time, a max of 1000
    # 2.0 -> 1.1 us. 64-bit keys have no integer max on AVX2: below 2048 float64
    # the simpler loop wins (1000 elements 1.0 against 1.6 us; AMD EPYC Zen 3).
    LONG = 256 if dtype.itemsize == 4 else 2048
    # a run's first extreme: below POSITION_LONG elements two whole passes without
    # a branch (:func:`short_position`); from it the blocked pass, whose search
    # reads one block. Argmax along rows of (512, 128) float32 44 -> 13 us (NumPy
    # 11), (256, 512) 59 -> 18-25 (20), (4096, 8) 77 -> 39 (99); AMD EPYC Zen 3.
    POSITION_LONG = 1024
    UNSIGNED = np.dtype(f"u{dtype.itemsize}").type
    NEG_INF = UNSIGNED(0xFF800000 if width == 32 else 0xFFF0000000000000)  # -inf's bits
    TOP = SIGNED((1 << (width - 1)) - 1)  # above every number's key: a NaN's, plainly
    XMASK = SIGNED(-1 if least else 0)
    UZERO = np.dtype(f"u{dtype.itemsize}").type(0)  # the unsigned type of the width
    ROW_BLOCK = 4096  # elements per block of rows of :func:`columns_of` with positions

    @njit(inline="always")
    def key(b):
        """The order key of bits *b* (floats: a negative one's magnitude flipped and
        moved up by one, so that -0.0 and +0.0 share key 0, as they compare equal),
        complemented for a minimum, so that the wanted extreme is the greatest."""
        # (each step cast back to the width: Numba computes int32 in int64, which
        # halved the lanes of the vectorised loops of 32-bit keys)
        if FLOATING:
            sign = SIGNED(b >> (width - 1))  # -1 for a negative float, else 0
            k = SIGNED(SIGNED(b ^ SIGNED(sign & MAG)) - sign)
        else:
            k = b
        return SIGNED(~k) if LEAST else k

    @njit(inline="always")
    def is_nan(b):
        return (b & MAG) > INF

    @njit(inline="always")
    def greatest(bits, lo, hi, skip):
        """(the greatest key of ``bits[lo:hi]``, whether a NaN was seen); with *skip*
        a NaN's key is ``LOWEST``, which only a NaN has. Integer masks, no branch: a
        loop LLVM vectorises (a select on a compared bool stayed scalar for 64-bit
        keys)."""
        best = LOWEST
        nan = SIGNED(0)
        for i in range(np.uint64(lo), np.uint64(hi)):  # unsigned: no wrap-around test,
            b = bits[i]                                 # which kept the loop scalar
            k = key(b)
            if FLOATING:
                number = SIGNED(SIGNED(SIGNED(b & MAG) - (INF + 1)) >> (width - 1))  # -1; 0: NaN
                nan = SIGNED(nan | SIGNED(~number))
                if skip:
                    k = SIGNED(SIGNED(k & number) | SIGNED(LOWEST & SIGNED(~number)))
            best = max(best, k)
        return best, nan != 0

    @njit(inline="always")
    def scan(bits, lo, hi):
        """(the greatest key of ``bits[lo:hi]`` among the elements that count,
        whether a NaN was seen, whether an element counted). The NaN-skipping pass
        runs only where a NaN was seen (with 64-bit keys LLVM leaves its loop
        scalar: 0.9 against 0.3 us for 1000 elements)."""
        best, nan = greatest(bits, lo, hi, False)
        if SKIP and nan:
            best, nan = greatest(bits, lo, hi, True)
            return best, nan, best != LOWEST
        return best, nan, True

    @njit(inline="always")
    def first(bits, lo, hi, k):
        """The first position in ``bits[lo:hi]`` of key *k* (a NaN's, ``LOWEST``:
        of a NaN), *hi* if none: a least position taken over the block, a loop LLVM
        vectorises where a search that stops does not."""
        end = np.uint64(hi)
        at = end
        for i in range(np.uint64(lo), end):
            b = bits[i]
            hit = is_nan(b) if FLOATING and k == LOWEST else key(b) == k
            at = min(at, i if hit else end)
        return np.int64(at)

    @njit(inline="always")
    def value_of(k):
        b = ~k if LEAST else k
        if FLOATING:
            b = b + (b >> (width - 1))  # the negative keys back down by one
            v = viewer(SIGNED(b ^ ((b >> (width - 1)) & MAG)), NUMBA_TYPE)
            return DT(0.0) if v == 0 else v  # a zero: +0.0
        return DT(b)

    @njit(inline="always")
    def blocked(bits, with_index):
        """(``order_key`` of the extreme, its first position) of a long float run
        by the planned kernel's blocked pass; a NaN's key is ``TOP`` plainly, and
        ``LOWEST`` comes back with NaN skipped where every element is NaN."""
        if SKIP:
            return _float_run_nanextreme(bits, MAG, XMASK, INF, LOWEST, TOP, with_index)
        return _float_run_extreme(bits, UZERO, MAG, XMASK, INF, TOP, with_index)

    @njit(inline="always")
    def extreme_of(bits):
        """The extreme of the keys' elements *bits* (see :func:`extreme_entries`)."""
        if FLOATING and bits.size >= LONG:
            k = blocked(bits, False)[0]
            if k == TOP or (SKIP and k == LOWEST):
                return DT(NAN)
            return viewer(key_bits(k, MAG, XMASK, TOP, INF), NUMBA_TYPE)
        best, nan, counted = scan(bits, 0, bits.size)
        if FLOATING and ((nan and not SKIP) or not counted):
            return DT(NAN)
        return value_of(best)

    @njit(inline="always")
    def first_where(bits, mode, value):
        """The first position in *bits* where (mode 0) a NaN is, (1) the bits are
        *value*, (2) a zero of either sign is; the size if none. The least
        position of a match, kept in the bits' own width, without a branch: a loop
        LLVM vectorises in the lanes of the data."""
        end = SIGNED(bits.size)
        at = end
        if mode == 0:
            for i in range(np.uint64(bits.size)):
                at = min(at, SIGNED(i) if is_nan(bits[i]) else end)
        elif mode == 1:
            for i in range(np.uint64(bits.size)):
                at = min(at, SIGNED(i) if bits[i] == value else end)
        else:
            for i in range(np.uint64(bits.size)):
                at = min(at, SIGNED(i) if SIGNED(bits[i] & MAG) == 0 else end)
        return np.int64(at)

    @njit(inline="always")
    def short_position(bits):
        """The first position of the extreme of a run of fewer than
        ``POSITION_LONG`` elements (-2 where NaN are skipped and one is seen), in
        two passes without a branch: the extreme's bits from integer reductions
        of the raw bits (for floats the signed greatest and least and the
        unsigned greatest, as ``reduce._block_range_bits`` reads them), then the
        least position of those bits (:func:`first_where`)."""
        if FLOATING:
            smax = bits[0]
            smin = smax
            umax = UNSIGNED(smax)
            for i in range(np.uint64(bits.size)):
                b = bits[i]
                smax = max(smax, b)
                smin = min(smin, b)
                umax = max(umax, UNSIGNED(b))
            if smax > INF or umax > NEG_INF:  # a NaN: the first one (skipped: -2)
                return -2 if SKIP else first_where(bits, 0, smax)
            if LEAST:  # the negative of the greatest magnitude, else the least
                target = SIGNED(umax) if smin < 0 else smin
            else:  # the greatest positive, else the negative of the least magnitude
                target = smax if smax >= 0 else smin
            if SIGNED(target & MAG) == 0:  # -0.0 and +0.0 compare equal
                return first_where(bits, 2, target)
            return first_where(bits, 1, target)
        best = LOWEST
        for i in range(np.uint64(bits.size)):
            best = max(best, SIGNED(bits[i] ^ XMASK))
        return first_where(bits, 1, SIGNED(best ^ XMASK))

    @njit(inline="always")
    def position_of(bits):
        """The first position of the extreme: :func:`short_position` below
        ``POSITION_LONG`` elements (NaN skipped: where none is seen), else the
        blocked pass (integers: ``reduce._int_run_extreme``). Otherwise blocks
        of ``BLOCK`` keys: the greatest of each (and whether it holds a NaN) in
        one vectorised pass, then the first position of the greatest in the
        first block that holds it (plainly, of the first NaN in the first block
        with one)."""
        n = bits.size
        if 0 < n < POSITION_LONG:
            at = short_position(bits)
            if at != -2:
                return at
        elif not FLOATING and width == 32:  # (64-bit: the loop below, see _find_bits)
            return _int_run_extreme(bits, XMASK, LOWEST, True)[1]
        if FLOATING and n >= LONG:
            k, where = blocked(bits, True)
            return -1 if SKIP and k == LOWEST else where
        best = LOWEST
        at = -1
        for lo in range(0, n, BLOCK):
            hi = min(n, lo + BLOCK)
            k, nan, counted = scan(bits, lo, hi)
            if FLOATING and nan and not SKIP:
                return first(bits, lo, hi, LOWEST)
            if counted and (at < 0 or k > best):
                best = k
                at = lo
        if at < 0:
            return -1  # every element a NaN (skipped)
        return first(bits, at, min(n, at + BLOCK), best)

    @njit(inline="always")
    def column_key(b):
        """:func:`key`, a NaN's ``TOP`` plainly (it wins, the first one kept) and
        ``LOWEST`` skipped (it never wins; a column of NaN only keeps it)."""
        if FLOATING and is_nan(b):
            return LOWEST if SKIP else TOP
        return key(b)

    @njit(inline="always")
    def column_maxima(bits, r0, r1, keys):
        """The greatest key of each column of ``bits[r0:r1]`` into *keys*: a row at a
        time, the columns side by side (a loop that vectorises along the row)."""
        first_row = bits[r0]
        for i in range(np.uint64(bits.shape[1])):
            keys[i] = column_key(first_row[i])
        for j in range(r0 + 1, r1):
            row = bits[j]
            for i in range(np.uint64(bits.shape[1])):
                keys[i] = max(keys[i], column_key(row[i]))

    @njit(inline="always")
    def columns_of(bits, keys, at):
        """The greatest key of each column of the C-contiguous 2-D *bits* into *keys*
        (``TOP``: a NaN; ``LOWEST`` with NaN skipped: none but NaN) and, where *at*
        has a slot per column, the row of its first occurrence.

        With positions, in blocks of rows: each block's greatest keys (the loop of
        keys alone, which vectorises), the block where a column's greatest first
        rose remembered, and the first row of it looked for in that block only (a
        position kept per element, ``at[i] = j if better``, mixed 64-bit positions
        into the 32-bit keys' loop: argmax of (16384, 4) float32 along axis 0
        53-80 -> 14-23 us, AMD EPYC Zen 3)."""
        rows, cols = bits.shape
        if at.size == 0:
            column_maxima(bits, 0, rows, keys)
            return
        span = max(16, ROW_BLOCK // max(cols, 1))  # rows per block
        block_keys = np.empty(cols, SIGNED)
        rose = np.zeros(cols, np.int64)  # the first row of the block of each greatest
        column_maxima(bits, 0, min(span, rows), keys)
        for r0 in range(span, rows, span):
            column_maxima(bits, r0, min(r0 + span, rows), block_keys)
            for i in range(cols):
                if block_keys[i] > keys[i]:
                    keys[i] = block_keys[i]
                    rose[i] = r0
        for i in range(cols):
            k = keys[i]
            j = rose[i]
            while column_key(bits[j, i]) != k:
                j += 1
            at[i] = j

    @njit(inline="always")
    def column_value(k):
        """The element of column key *k* (a NaN for ``TOP``)."""
        if FLOATING and k == TOP:
            return DT(NAN)
        return value_of(k)

    return extreme_of, position_of, columns_of, column_value, column_key


@factory
def extreme_entries(dtype_str: str, least: bool, skip_nan: bool):
    """``(extreme, position)`` for *dtype_str*: ``extreme(x)`` is the greatest (with
    *least*, the least) element of the C-contiguous *x* (a plain one: NaN where a
    NaN is seen; with *skip_nan* the NaN are skipped, and NaN comes back where
    every element is NaN: the caller's planned path warns); ``position(x)`` the
    flat position of its first occurrence (of the first NaN, plainly, where there
    is one; -1 with *skip_nan* where every element is NaN)."""
    extreme_of, position_of = extreme_loops(dtype_str, least, skip_nan)[:2]
    SIGNED = np.dtype(f"i{np.dtype(dtype_str).itemsize}").type

    def extreme(x):
        return extreme_of(x.reshape(-1).view(SIGNED))

    def position(x):
        return position_of(x.reshape(-1).view(SIGNED))

    # (closures over compiled loops: cached by what the loops are, see _jit)
    return (stable_cache(njit(cache=True, nogil=True)(extreme)),
            stable_cache(njit(cache=True, nogil=True)(position)))

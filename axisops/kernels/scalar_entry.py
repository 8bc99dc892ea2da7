"""Compiled entries of a 1-D array reduced to one scalar, called by the public
functions' wrappers before any Python of their own (``axisops._dispatch``,
``axisops._fast.ScalarCall``).

One call of ``sum(x)`` on 1000 float64 elements spent 0.3 us in the compiled
work and 0.8 us in Python: the wrapper, the public function, the reduction's
switch, the entry's look-up and its checks of the layout (``x.flags``), each
Python frame about 0.1 us on these machines. Here the checks move into the
compiled function: it is compiled for the most general 1-D array type (any
strides, read-only, unaligned: every NumPy array of the dtype converts to it in
Numba's dispatch at no cost) and reads the strides, the alignment and the size
itself, answering None for an array it does not take, so that the wrapper falls
through to the public function, which plans (and raises every error or warning).
A call that gets an answer costs one Numba dispatch (~0.2 us) and the work.

The work is the planned path's, so the bits are its bits (``tests/test_fast_path.py``
compares them): float sums and means and the moments run the plan's own kernels
by their addresses (``kernels.entry._sums``, ``_moments``): the same leaf loops
compiled into another function need not vectorise alike, and did not (a float32
mean of 9000 elements came out one ulp off); integer sums are exact in any
order; extremes and their positions are ``kernels.flat_entry``'s loops, integer
keys and exact.
"""
from __future__ import annotations

import numpy as np
from numba import from_dtype, njit, types

from .._jit import compiled, factory
from . import entry as E
from . import flat_entry as FE
from . import reduce as K
from .common import deinterleave
from .entry import c_view as _contiguous


@njit(inline="always")
def _taken(x, limit, largest):
    """Whether the entries take 1-D *x*: 1 to *largest* elements (fewer than the
    thread pool's *limit*: the planned path splits larger ones), contiguous and
    aligned as the kernels are compiled for."""
    n = x.size
    return 0 < n <= largest and n < limit and (n == 1 or x.strides[0] == x.itemsize) \
        and x.ctypes.data % x.itemsize == 0


def _signature(result: np.dtype, dtype: np.dtype, extra: int = 0):
    """The one signature of an entry: the most general 1-D array of *dtype*, the
    pool's limit (and *extra* more int64 arguments), an optional *result*."""
    arr = types.Array(from_dtype(dtype), 1, "A", readonly=True, aligned=False)
    return types.Optional(from_dtype(result))(arr, types.int64, *([types.int64] * extra))


@factory
def total_entry(dtype_str: str, acc_str: str, skip_nan: bool, mean: bool, largest: int,
                product: bool = False):
    """``entry(x, limit, address)``: the sum (with *mean*, the mean; with *product*,
    the product) of 1-D *x* of *dtype_str* in the accumulator *acc_str*, a NaN read
    as the identity with *skip_nan*: a float accumulator's by
    ``reduce._value_plan``'s lane-order kernel at *address* (``_fast._Value.lane``),
    an integer one's in int64 here; None where x is not taken."""
    dtype, acc = np.dtype(dtype_str), np.dtype(acc_str)
    ACC = acc.type
    OP = K.OP_PROD if product else K.OP_SUM
    TABLE = (None, 1.0 if product else 0.0) if skip_nan else None
    PRODUCT = product
    FLOAT = acc.kind == "f"  # an integer sum or product is exact in any order
    MEAN = mean
    LARGEST = largest

    @compiled(_signature(acc, dtype, extra=1), nogil=True)
    def entry(x, limit, address):
        if not _taken(x, limit, LARGEST):
            return None
        seg = _contiguous(x)
        if FLOAT:
            out = np.empty(1, ACC)
            E._sums(seg, -1, out, OP, TABLE, MEAN, address, address)
            return out[0]
        if PRODUCT:
            p = ACC(1)
            for i in range(seg.size):
                p *= ACC(seg[i])
            return p
        s = ACC(0)
        for i in range(seg.size):
            s += ACC(seg[i])
        return s / ACC(seg.size) if MEAN else s

    return entry


@factory
def extreme_entry(dtype_str: str, least: bool, skip_nan: bool, index: bool, largest: int):
    """``entry(x, limit)``: the greatest (*least*: the least) element of 1-D *x*,
    or with *index* the position of its first occurrence, as
    ``kernels.flat_entry`` finds them; None where x is not taken or, with
    *skip_nan*, where every element is NaN (the planned path warns or raises)."""
    dtype = np.dtype(dtype_str)
    extreme_of, position_of = FE.extreme_loops(dtype_str, least, skip_nan)[:2]
    SIGNED = np.dtype(f"i{dtype.itemsize}").type
    INDEX = index
    SKIP = skip_nan and dtype.kind == "f"
    LARGEST = largest

    @compiled(_signature(np.dtype(np.int64) if index else dtype, dtype), nogil=True)
    def entry(x, limit):
        if not _taken(x, limit, LARGEST):
            return None
        bits = _contiguous(x).view(SIGNED)
        if INDEX:
            at = position_of(bits)
            return at if at >= 0 else None
        v = extreme_of(bits)
        if SKIP and v != v:
            return None
        return v

    return entry


@factory
def moments_entry(dtype_str: str, variance: bool, root: bool, largest: int):
    """``entry(x, limit, address, ddof)``: the mean (*variance* False), variance or
    with *root* standard deviation of 1-D float *x* by ``_moments.plan``'s kernel
    at *address* (``_fast._Moments.address``: NaN skipped or not), finished as
    ``kernels.entry._moments`` finishes; None where x is not taken or the count
    less *ddof* is not positive (the planned path warns as NumPy does)."""
    dtype = np.dtype(dtype_str)
    VARIANCE = variance
    ROOT = root
    LARGEST = largest

    @compiled(_signature(dtype, dtype, extra=2), nogil=True)
    def entry(x, limit, address, ddof):
        if not _taken(x, limit, LARGEST):
            return None
        out = np.empty(1, x.dtype)
        if not E._moments(_contiguous(x), -1, ddof, VARIANCE, ROOT, out, address):
            return None
        return out[0]

    return entry


@njit(inline="always")
def _order(x, limit, largest):
    """1 where 2-D *x* is C-contiguous, 2 where F-contiguous (and not C), 0 where
    the entries do not take it (see :func:`_taken`)."""
    n = x.size
    if not (0 < n <= largest and n < limit) or x.ctypes.data % x.itemsize != 0:
        return 0
    rows, cols = x.shape
    item = x.itemsize
    if (cols == 1 or x.strides[1] == item) and (rows == 1 or x.strides[0] == cols * item):
        return 1
    if (rows == 1 or x.strides[0] == item) and (cols == 1 or x.strides[1] == rows * item):
        return 2
    return 0


@factory
def extreme_lanes_entry(dtype_str: str, least: bool, skip_nan: bool, index: bool,
                        largest: int):
    """``entry(x, axis, out, limit)``: :func:`extreme_entry` of each lane of 2-D *x*
    (C- or F-contiguous) along *axis* into *out* (the kept axis' length; int64
    positions with *index*, else x's dtype); False, having written nothing
    meaningful, where x is not taken, *axis* is out of range or, with
    *skip_nan*, a lane is all NaN (the planned path raises or warns). Lanes
    contiguous in memory run ``kernels.flat_entry``'s loops one by one; lanes side
    by side, a row of every lane at a time (a few lanes: several rows at a time,
    folded after). Exact either way: keys are integers."""
    dtype = np.dtype(dtype_str)
    extreme_of, position_of, columns_of, column_value, column_key = FE.extreme_loops(
        dtype_str, least, skip_nan)
    SIGNED = np.dtype(f"i{dtype.itemsize}").type
    LOWEST = SIGNED(-(1 << (8 * dtype.itemsize - 1)))
    INDEX = index
    SKIP = skip_nan and dtype.kind == "f"
    LARGEST = largest
    NARROW = 16  # fewer lanes side by side than a vector's: folded (below)
    SLOTS = 64  # the least width of a folded row (a loop of fewer kept scalar)
    result = types.Array(types.int64 if index else from_dtype(dtype), 1, "C")
    arr = types.Array(from_dtype(dtype), 2, "A", readonly=True, aligned=False)

    @njit(inline="always")
    def folded(bits, out):
        """A few lanes side by side (the columns of C-contiguous *bits*, fewer than
        ``NARROW``): *k* rows at a time read as one row of ``k * cols`` >= ``SLOTS``
        slots, so that ``columns_of`` walks full vectors; each lane's *k* slots are
        then folded (the greater key, on a tie the earlier row) and the rows left
        after the last multiple of *k* read one by one. False where a lane has no
        element that counts (NaN skipped)."""
        rows, cols = bits.shape
        k = -(-SLOTS // cols)
        width = k * cols
        steps = rows // k
        keys = np.empty(width, SIGNED)
        at = np.empty(width if INDEX else 0, np.int64)
        if steps > 0:
            columns_of(bits.reshape(rows * cols)[:steps * width].reshape((steps, width)),
                       keys, at)
        for c in range(cols):
            best = LOWEST
            row = rows  # past every row: the first candidate is taken, ties to the earlier
            for s in range(k if steps > 0 else 0):
                kk = keys[s * cols + c]
                r = at[s * cols + c] * k + s if INDEX else 0
                if kk > best or (kk == best and r < row):
                    best = kk
                    row = r
            for r in range(steps * k, rows):
                kk = column_key(bits[r, c])
                if kk > best or row == rows:
                    best = kk
                    row = r
            if SKIP and best == LOWEST:
                return False
            if INDEX:
                out[c] = row
            else:
                out[c] = column_value(best)
        return True

    @compiled(types.boolean(arr, types.int64, result, types.int64), nogil=True)
    def entry(x, axis, out, limit):
        order = _order(x, limit, LARGEST)
        if order == 0 or not -2 <= axis <= 1:
            return False
        along_rows = (axis == 1 or axis == -1) == (order == 1)  # each lane a memory row
        bits = _contiguous(x if order == 1 else x.T).view(SIGNED)
        cols = bits.shape[1]
        if not along_rows and cols < NARROW:
            return folded(bits, out)
        if not along_rows:  # many lanes side by side: a row at a time
            keys = np.empty(cols, SIGNED)
            columns_of(bits, keys, out if INDEX else out[:0].view(np.int64))
            for i in range(cols):
                if SKIP and keys[i] == LOWEST:
                    return False
                if not INDEX:
                    out[i] = column_value(keys[i])
            return True
        for i in range(bits.shape[0]):
            if INDEX:
                at = position_of(bits[i])
                if at < 0:
                    return False
                out[i] = at
            else:
                v = extreme_of(bits[i])
                if SKIP and v != v:
                    return False
                out[i] = v
        return True

    return entry


@factory
def total_lanes_entry(dtype_str: str, acc_str: str, skip_nan: bool, mean: bool, largest: int,
                      longest: int, product: bool = False, largest_rows: int = 0):
    """``entry(x, axis, out, limit, lane, row)``: :func:`total_entry` of each lane of
    2-D *x* (C- or F-contiguous; an F-ordered one as its C-ordered transpose, as
    ``_fast._transposed``) along *axis* into *out* (the kept axis' length, the
    accumulator *acc_str*), by ``reduce._value_plan``'s kernels at the addresses
    *lane* and *row* (``_fast._Value``); False where x is not taken, *axis* is out
    of range or a lane is longer than *longest*. *x* has at most *largest*
    elements, or *largest_rows* (if more) where each lane is a row in memory."""
    dtype, acc = np.dtype(dtype_str), np.dtype(acc_str)
    OP = K.OP_PROD if product else K.OP_SUM
    TABLE = (None, 1.0 if product else 0.0) if skip_nan else None
    MEAN = mean
    SUM = not product  # a product of a row in memory may be scaled: not the lanes' bits
    LARGEST = largest
    LARGEST_ROWS = max(largest, largest_rows)
    LONGEST = longest
    arr = types.Array(from_dtype(dtype), 2, "A", readonly=True, aligned=False)
    result = types.Array(from_dtype(acc), 1, "C")
    i64 = types.int64

    @compiled(types.boolean(arr, i64, result, i64, i64, i64), nogil=True)
    def entry(x, axis, out, limit, lane, row):
        order = _order(x, limit, LARGEST_ROWS)
        if order == 0 or not -2 <= axis <= 1:
            return False
        along = axis % 2 if order == 1 else 1 - axis % 2
        seg = _contiguous(x if order == 1 else x.T)
        if seg.shape[along] > LONGEST or (along == 0 and x.size > LARGEST):
            return False
        rows, cols = seg.shape
        if SUM and along == 0 and 1 < cols < E.FEW_LANES and rows > E.SHORT_RUN:
            # a few lanes side by side, each summed on its own (``reduce._row_order``):
            # the plan gathers each lane's leaves element by element; the lanes
            # deinterleaved at once into rows give its leaves, sums and bits
            lanes = np.empty((cols, rows), seg.dtype)
            deinterleave(seg, lanes)
            E._sums(lanes, 1, out, OP, TABLE, MEAN, lane, row)
            return True
        E._sums(seg, along, out, OP, TABLE, MEAN, lane, row)
        return True

    return entry

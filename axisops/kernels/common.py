"""Small inlined helpers shared by the kernels."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from .._jit import helper


@helper(inline=True)
def block_offset(k, shape, strides):
    """Element offset of the k-th element, in C order, of a strided block."""
    off = 0
    for d in range(shape.size - 1, -1, -1):
        q = k // shape[d]
        off += (k - q * shape[d]) * strides[d]
        k = q
    return off


@helper(inline=True)
def block_size(shape):
    """Number of elements of a block of the given shape."""
    count = 1
    for d in range(shape.size):
        count *= shape[d]
    return count


@helper(inline=True)
def deinterleave(seg, lanes):
    """``lanes[i, j] = seg[j, i]``: the columns of C-contiguous *seg* into the rows
    of *lanes*. Two to four columns in one loop writing every lane, which LLVM turns
    into wide loads and shuffles (an interleaved group: the sums of (4096, 4)
    float32 along axis 0 9.2 -> 3.3 us, AMD EPYC Zen 4); more, a lane at a time."""
    rows, cols = seg.shape
    flat = seg.reshape(seg.size)
    n = np.uint64(rows)
    if cols == 2:
        a, b = lanes[0], lanes[1]
        for j in range(n):
            a[j] = flat[2 * j]
            b[j] = flat[2 * j + 1]
    elif cols == 3:
        a, b, c = lanes[0], lanes[1], lanes[2]
        for j in range(n):
            a[j] = flat[3 * j]
            b[j] = flat[3 * j + 1]
            c[j] = flat[3 * j + 2]
    elif cols == 4:
        a, b, c, d = lanes[0], lanes[1], lanes[2], lanes[3]
        for j in range(n):
            a[j] = flat[4 * j]
            b[j] = flat[4 * j + 1]
            c[j] = flat[4 * j + 2]
            d[j] = flat[4 * j + 3]
    else:
        m = np.uint64(cols)
        for i in range(m):
            lane = lanes[i]
            for j in range(n):
                lane[j] = flat[j * m + i]


def load(value, table, like):
    """An element converted to the dtype of the array *like*.

    With ``table=None`` the value converts directly; with a float32 table the value
    is a float16 bit pattern (uint16) looked up in it (Numba has no float16).

    The NaN-skipping operators wrap either in a tuple (see :func:`skip_nan` and
    :func:`count_valid`), so that every sum, product and scan kernel skips NaN
    through the same argument, compiled once more per kind of tuple:

    * ``(table, fill)``: a NaN loads as *fill* (0 for a sum, 1 for a product);
    * ``(table,)``: an element loads as 1, a NaN as 0 (the sum is the count).

    A select, not a branch: the loops stay vectorised.
    """


def skip_nan(table, fill):
    """The ``table`` argument of a kernel that reads a NaN as *fill* (see :func:`load`)."""
    return (table, fill)


def count_valid(table):
    """The ``table`` argument of a kernel that reads 1 for each element that is not
    NaN and 0 for a NaN (see :func:`load`)."""
    return (table,)


@helper
def nan_as(v, fill):
    """*v*, or *fill* where *v* is NaN (a select once LLVM inlines it)."""
    return v if v == v else fill


@helper
def one_unless_nan(v, one, zero):
    """*one*, or *zero* where *v* is NaN: the count of a value that is not NaN."""
    return one if v == v else zero


# Each form is one expression with no branch of its own: Numba inlines this
# overload's IR into the kernel, and a conditional expression inlined there left
# a phi variable that Numba's SSA check reports as out of scope (a
# NumbaIRAssumptionWarning on every NaN-skipping kernel compiled); the choice is
# made by :func:`nan_as` and :func:`one_unless_nan`, ordinary calls that LLVM
# inlines as selects.
@overload(load, inline="always")
def _load_impl(value, table, like):
    target = like.dtype
    if isinstance(table, types.BaseTuple):
        looked_up = not isinstance(table.types[0], types.NoneType)  # float16 bits
        if len(table) == 2:
            if looked_up:
                return lambda value, table, like: nan_as(
                    target(table[0][value]), target(table[1]))
            return lambda value, table, like: nan_as(target(value), target(table[1]))
        if looked_up:
            return lambda value, table, like: one_unless_nan(
                table[0][value], target(1), target(0))
        return lambda value, table, like: one_unless_nan(value, target(1), target(0))
    if isinstance(table, types.NoneType):
        return lambda value, table, like: target(value)
    return lambda value, table, like: target(table[value])


def same_type(value, like):
    """*value* converted to the scalar type of *like*.

    Numba widens small integers to int64 in arithmetic; narrowing back after each
    step lets LLVM keep int8/16/32 kernels in narrow vector lanes.
    """


@overload(same_type, inline="always")
def _same_type_impl(value, like):
    target = like
    return lambda value, like: target(value)


@helper
def order_key(b, shift, fmask, fone, xmask, expo, top):
    """Order-preserving signed key of the bit pattern b (any dtype, see below): the
    arg-reductions and cummax/cummin compare these.

    Floats (``fmask`` = all bits but the sign, ``fone`` = 1): a negative number's
    magnitude is negated, so -0.0 and +0.0 both map to 0; a NaN of either sign
    becomes ``top``, the greatest key. Integers (``fmask = fone = 0``, ``expo``
    = 0): the bits themselves. ``xmask`` then flips the sign bit (unsigned types
    and bool, viewed as signed) and/or every bit (a minimum: ``~`` reverses the
    order of two's-complement integers).
    """
    s = same_type(b >> shift, b)
    k = same_type(same_type(b ^ same_type(s & fmask, b), b) + same_type(s & fone, b), b)
    k = same_type(k ^ xmask, b)
    return top if same_type(b & fmask, b) > expo else k

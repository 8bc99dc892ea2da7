"""Small inlined helpers shared by the kernels."""
from __future__ import annotations

from .._jit import helper


@helper
def block_offset(k, shape, strides):
    """Element offset of the k-th element, in C order, of a strided block."""
    off = 0
    for d in range(shape.size - 1, -1, -1):
        q = k // shape[d]
        off += (k - q * shape[d]) * strides[d]
        k = q
    return off


@helper
def block_size(shape):
    """Number of elements of a block of the given shape."""
    count = 1
    for d in range(shape.size):
        count *= shape[d]
    return count

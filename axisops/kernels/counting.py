"""The histograms of the selection by counting (``axisops.dask.order``): one pass
over a block of lanes, no temporaries.

A block is ``(lanes, e)`` elements seen as unsigned bits of their width (any
strides); each element's order key is :func:`axisops.kernels.order.order_key`.
Counting the block in NumPy made ``e``-sized temporaries of uint64 keys, digits
and masks: several times a chunk's memory, and in Dask's worker processes (whose
glibc returns every freed block over 64 KiB to the system) a page fault per 4 KiB
of each temporary — most of an exact quantile's time on the out-of-core setup.
Counts are added to ``hist``, so a caller may count in several calls.
"""
from __future__ import annotations

import numpy as np

from .._jit import kernel
from .order import order_key


@kernel
def first_histogram(part, parts, bits, masks, shift, width, floating, hist):
    """``hist[l, d] +=`` the number of lane ``l``'s keys whose digit ``(key >> shift)
    & (2^width - 1)`` is ``d``; with *floating*, ``hist[l, 2^width] +=`` its NaN
    count (key ``top``)."""
    top = masks[0]
    low = np.uint64((1 << width) - 1)
    nan_column = 1 << width
    s = np.uint64(shift)
    for lane in range(bits.shape[0]):
        nans = 0
        for j in range(bits.shape[1]):
            k = order_key(bits[lane, j], masks, False)
            hist[lane, np.intp((np.uint64(k) >> s) & low)] += 1
            nans += k == top
        if floating:
            hist[lane, nan_column] += nans


@kernel
def next_histogram(part, parts, bits, positions, masks, shift, width, by_position, keys,
                   pos, hist):
    """``hist[l, i, d] +=`` the number of lane ``l``'s elements that match place
    ``i``'s digits found so far (those of ``keys[l, i]`` above ``shift + width``;
    by position: the key ``keys[l, i]`` itself and the digits of ``pos[l, i]`` above
    ``shift + width``) whose next digit (of the key, or of its lane position
    ``positions[j]``) is ``d``."""
    low = np.uint64((1 << width) - 1)
    s = np.uint64(shift)
    hi = shift + width
    h = np.uint64(min(hi, 63))
    whole = hi >= 64          # no digit above: every element matches
    for lane in range(bits.shape[0]):
        for j in range(bits.shape[1]):
            k = np.uint64(order_key(bits[lane, j], masks, False))
            p = np.uint64(positions[j])
            for i in range(keys.shape[1]):
                if by_position:
                    if k != keys[lane, i]:
                        continue
                    if not whole and (p >> h) != (np.uint64(pos[lane, i]) >> h):
                        continue
                    d = (p >> s) & low
                else:
                    if not whole and (k >> h) != (keys[lane, i] >> h):
                        continue
                    d = (k >> s) & low
                hist[lane, i, np.intp(d)] += 1

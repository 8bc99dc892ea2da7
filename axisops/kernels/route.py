"""Routing kernel of the dask gathers and scatter: a chunk of indices split by the
chunk of ``x`` each index falls in (see :mod:`axisops.dask._pointers`).

Two passes over the indices, no sort: the first resolves every index with the
mode and counts the hits per chunk of ``x`` (a binary search over the chunk
bounds: there are few chunks along an axis), the second resolves again and
writes each hit's position into its chunk's run, in C order (a counting sort).
With NumPy this took a resolve pass, a search, a stable sort and a split: 200 ms
for 2M indices into 8 chunks, against about 10 ms here.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .gather import _resolve

__all__ = ["route_along", "pick", "merge"]


@njit(cache=True, nogil=True)
def _chunk_of(r, bounds, scale):
    """The chunk of position *r*: k with ``bounds[k] <= r < bounds[k + 1]``.

    Guessed as ``r * scale`` (*scale* is one over the chunks' mean size, so the
    guess is right or one off for regular chunks) and walked to the right one: a
    binary search mispredicts its branches on random indices (29 ms for 2M
    indices into 8 chunks, against 3.6 ms).
    """
    last = bounds.size - 2
    k = min(int(r * scale), last)
    while bounds[k + 1] <= r:
        k += 1
    while bounds[k] > r:
        k -= 1
    return k


@njit(cache=True, nogil=True)
def route_along(indices, n, mode, bounds, scale, rows, length, post, flat, counts, chunk, pos,
                src, positions):
    """Split *indices* (C-ordered, flat, seen as ``(rows, length, post)``) by chunk of
    ``x`` along an axis of *n*.

    ``bounds`` are the chunks' offsets with *n* last, *scale* one over the mean size
    of the chunks but the last (see :func:`_chunk_of`). For every hit, in C order
    within its chunk k's run (``counts`` gets the runs' lengths), ``pos`` gets its
    flat position among the indices and ``src`` where to read it: with *flat*,
    the flat position in chunk k of ``x`` seen as ``(rows, size_k, post)``;
    otherwise its index within the chunk. ``chunk`` gets each index's chunk (-1
    for a miss); without *positions* ``pos`` is not written (:func:`merge` puts
    the picked values back by ``chunk``). Returns the flat position of the first index out of range under ``raise``
    (nothing is written then), or -1.
    """
    chunks = bounds.size - 1
    for k in range(chunks):
        counts[k] = 0
    for p in range(indices.size):
        r = _resolve(indices[p], n, mode)
        if r < 0:
            if mode == 0:
                return p
            chunk[p] = -1
            continue
        k = _chunk_of(r, bounds, scale)
        chunk[p] = k
        counts[k] += 1
    ends = np.empty(chunks, np.int64)  # the next free slot of each chunk's run
    total = 0
    for k in range(chunks):
        ends[k] = total
        total += counts[k]
    p = 0
    for o in range(rows):
        for _ in range(length):
            for q in range(post):
                k = chunk[p]
                if k >= 0:
                    slot = ends[k]
                    ends[k] = slot + 1
                    if positions:
                        pos[slot] = p
                    local = _resolve(indices[p], n, mode) - bounds[k]
                    if flat:
                        src[slot] = (o * (bounds[k + 1] - bounds[k]) + local) * post + q
                    else:
                        src[slot] = local
                p += 1
    return -1


@njit(cache=True, nogil=True)
def merge(chunk, values, starts, fill, out):
    """``out[p]`` = the next of chunk k's picked values (``values[starts[k]:]``, in
    C order), ``k = chunk[p]``; *fill* where ``k < 0`` (a miss under ``fill``)."""
    cursor = starts.copy()
    for p in range(chunk.size):
        k = chunk[p]
        if k < 0:
            out[p] = fill
        else:
            out[p] = values[cursor[k]]
            cursor[k] += 1


@njit(cache=True, nogil=True)
def pick(values, src, out):
    """``out[i] = values[src[i]]``: a chunk's hits, at positions the routing made
    (in range by construction, so unchecked)."""
    for i in range(src.size):
        out[i] = values[src[i]]

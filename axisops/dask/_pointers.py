"""The tasks of pointer gathers and scatters on dask arrays (see :mod:`axisops.dask.gather`).

A gather or scatter along an axis reads, for each chunk of indices, from (or
writes to) any chunk of ``x`` along that axis. Each chunk of indices is *routed*
once: its indices are resolved on the whole axis and split by the chunk of ``x``
they fall into, as ``(pos, local)`` pairs per chunk (``pos`` the flat position in
the index chunk, ``local`` the index within ``x``'s chunk), in C order. Then

* a gather *picks* each part from its chunk of ``x`` (axisops' kernel, only the
  hits) and *places* the picked values of all parts into the result chunk;
* a scatter *steps* through the parts that write into a chunk of ``x``, in C order
  of the indices, keeping pending updates until they are about a chunk's worth
  and then scattering them with axisops' kernel, so a task holds a chunk of ``x``
  and at most about one chunk of updates whatever the indices are.

Every function here runs inside a task; they are module-level so worker
processes can unpickle them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import gather as _np_gather
from .._dispatch import numpy_function
from ..kernels import gather as _kernels
from ..kernels import route as _route

_TAKE = numpy_function(_np_gather.take)
_SCATTER = numpy_function(_np_gather.scatter)


# ------------------------------------------------------------------ resolving


def resolved(indices: np.ndarray, n: int, mode: str, op: str,
             origin: tuple[int, ...] = (), unravel=None) -> np.ndarray:
    """Indices as int64 positions in ``[0, n)``, -1 for a miss with ``"fill"``.

    With ``"raise"`` an index outside ``[-n, n)`` raises the NumPy path's
    ``IndexError``; its position is in the whole index array (this chunk's
    *origin* added).
    """
    unsigned = indices.dtype.kind == "u"
    if mode == "wrap":
        if not n:
            return np.zeros(indices.shape, np.int64)
        return (indices % n).astype(np.int64)
    if mode == "clip":
        if unsigned:
            return np.minimum(indices, max(n - 1, 0)).astype(np.int64)
        return np.clip(indices.astype(np.int64), 0, max(n - 1, 0))
    inside = indices < n if unsigned else (indices >= -n) & (indices < n)
    if mode == "raise" and not inside.all():
        raise_out_of_range(indices, ~inside, -n, n, op, origin, unravel=unravel)
    i = indices.astype(np.int64)
    if unsigned:
        return np.where(inside, i, -1)
    return np.where(inside, np.where(i < 0, i + n, i), -1)


def raise_out_of_range(indices, bad, low: int, n: int, op: str, origin: tuple[int, ...] = (),
                       value=None, unravel=None):
    """The NumPy path's ``IndexError`` for the first *bad* index of this chunk, at
    its position in the whole index array (the chunk's *origin* added; a flat
    position unravelled in the shape *unravel*, when given)."""
    first = int(np.argmax(bad.reshape(-1)))
    where = np.unravel_index(first, bad.shape)
    where = tuple(int(w) + (origin[d] if d < len(origin) else 0) for d, w in enumerate(where))
    if unravel is not None:
        where = tuple(int(w) for w in np.unravel_index(where[0], unravel))
    if value is None:
        value = indices.reshape(-1)[first]
    raise IndexError(f"{op}: index {value} at position {where} of indices is out of range "
                     f"[{low}, {n})")


def split(where: np.ndarray, bounds: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(pos, local)`` per chunk of *bounds* (offsets, ``n`` last) for resolved
    positions *where* (flattened; -1 are dropped), each in C order."""
    where = where.reshape(-1)
    chunks = len(bounds) - 1
    if chunks == 1:
        pos = np.flatnonzero(where >= 0) if where.size and where.min() < 0 else None
        if pos is None:
            return [(np.arange(where.size, dtype=np.int64), where)]
        return [(pos, where[pos])]
    kept = where >= 0
    pos = None if kept.all() else np.flatnonzero(kept)
    hits = where if pos is None else where[pos]
    chunk = np.searchsorted(bounds, hits, side="right") - 1
    key = chunk.astype(np.min_scalar_type(chunks))  # a small key: radix sort
    order = np.argsort(key, kind="stable")
    cuts = np.cumsum(np.bincount(key, minlength=chunks))[:-1]
    sorted_pos = order if pos is None else pos[order]
    local = hits[order] - bounds[chunk[order]]
    return list(zip(np.split(sorted_pos, cuts), np.split(local, cuts), strict=True))


# --------------------------------------------------------- along an axis

def route_along(indices: np.ndarray, *, bounds, mode: str, op: str, origin, unravel=None,
                flat=False, merged=False):
    """A chunk of indices split by the chunk of ``x`` along the axis its indices
    fall in: ``(pos, src)`` per chunk, ``src`` the index within the chunk, or with
    *flat* the flat position in the chunk of ``x`` whose other dimensions are the
    index chunk's (``indices`` of ``x.ndim`` dimensions, the axis *flat* - 1).

    With *merged*, ``(chunk, [src, ...])`` instead: each index's chunk (-1 for a
    miss), which :func:`place_merged` uses to put the picked values back, so no
    positions are made or shipped."""
    n = int(bounds[-1])
    chunks = len(bounds) - 1
    if n == 0:  # nothing to hit: every index misses (or raises)
        resolved(indices, n, mode, op, origin, unravel)
        empty = np.zeros(0, np.int64)
        if merged:
            return np.full(indices.shape, -1, np.int8), [empty] * chunks
        return [(empty, empty)] * chunks
    work = _int64_indices(indices, n, mode)
    if flat:
        axis = flat - 1
        rows = int(np.prod(indices.shape[:axis], dtype=np.int64))
        length = indices.shape[axis]
        post = int(np.prod(indices.shape[axis + 1:], dtype=np.int64))
        largest = rows * int(np.diff(bounds).max()) * post
    else:
        rows, length, post = 1, indices.size, 1
        largest = int(np.diff(bounds).max())
    small = max(largest, indices.size) < 2**31
    counts = np.empty(chunks, np.int64)
    src = np.empty(indices.size, np.int32 if small else np.int64)
    pos = src[:0] if merged else np.empty(indices.size, src.dtype)
    chunk = np.empty(indices.size, np.int8 if chunks < 128 else np.int32)
    scale = (chunks - 1) / bounds[-2] if chunks > 1 and bounds[-2] > 0 else 0.0
    bad = _route.route_along(work.reshape(-1), n, _np_gather._MODES[mode], bounds, scale, rows, length,
                             post, bool(flat), counts, chunk, pos, src, not merged)
    if bad >= 0:
        mask = np.zeros(indices.size, bool)
        mask[bad] = True
        raise_out_of_range(indices, mask.reshape(indices.shape), -n, n, op, origin,
                           unravel=unravel)
    hits = int(counts.sum())
    cuts = np.cumsum(counts)[:-1]
    if merged:
        return chunk, np.split(src[:hits], cuts)
    return list(zip(np.split(pos[:hits], cuts), np.split(src[:hits], cuts), strict=True))


def pick_flat(x: np.ndarray, routed, k: int) -> np.ndarray:
    """Chunk *k* of ``x``'s values at the flat positions a merged routing (see
    :func:`route_along`) sends it (take_along_axis), by the routing's kernel: the
    positions need no check, and the NumPy path's ``take`` would make a plan for
    every new number of hits."""
    src = routed[1][k]
    x = np.ascontiguousarray(x)
    bits = _bits_of(x.dtype)
    out = np.empty(src.size, x.dtype)
    _route.pick(x.reshape(-1).view(bits), src, out.view(bits))
    return out


def _bits_of(dtype: np.dtype) -> np.dtype:
    """The dtype whose moves copy *dtype*'s bits: one kernel per width."""
    return dtype if dtype.itemsize == 16 else _np_gather._bits(dtype)


def place_merged(routed, picked, *, shape, dtype, fill) -> np.ndarray:
    """A result chunk of *shape*: each index's value from its chunk's picks, in C
    order, by the chunks of a merged routing (the routing kernel's
    :func:`axisops.kernels.route.merge`)."""
    chunk = routed[0]
    out = np.empty(shape, dtype)
    if not out.size:
        return out
    values = np.concatenate(picked) if len(picked) != 1 else picked[0]
    starts = np.concatenate(([0], np.cumsum([v.size for v in picked])[:-1])).astype(np.int64)
    dtype = np.dtype(dtype)
    bits = _bits_of(dtype)
    fill_bits = np.zeros((), dtype) if fill is None else np.asarray(fill, dtype)
    _route.merge(chunk, values.view(bits), starts, fill_bits.view(bits)[()],
                 out.reshape(-1).view(bits))
    return out


def _int64_indices(indices: np.ndarray, n: int, mode: str) -> np.ndarray:
    """*indices* as int64 for the routing kernel, resolving the same: uint64 beyond
    int64 is out of range (n stands for it) but wraps by its own value."""
    if indices.dtype == np.int64:
        return indices
    if indices.dtype == np.uint64:
        if mode == "wrap":
            return (indices % np.uint64(n)).astype(np.int64)
        return np.minimum(indices, np.uint64(n)).astype(np.int64)
    return indices.astype(np.int64)


def route_scatter(indices: np.ndarray, updates: np.ndarray, *, bounds, op, origin, axis,
                  x_shapes, dtype, mode="raise", positions=False):
    """A chunk of indices and its updates split by the chunk of ``x`` they write to,
    as (flat destination in that chunk, update in *dtype*) pairs in C order.
    *x_shapes* are the shapes of those chunks of ``x``; the index chunk is their
    leading part (outside the axis); the indices broadcast to the updates. With
    *positions*, each part also has the updates' flat positions in their chunk."""
    if indices.shape != updates.shape:
        indices = np.broadcast_to(indices, updates.shape)
    same = all(s == t for d, (s, t) in enumerate(zip(x_shapes[0], indices.shape)) if d != axis)
    routed = route_along(indices, bounds=bounds, mode=mode, op=op, origin=origin,
                         flat=axis + 1 if same else False)
    flat_updates = updates.reshape(-1)
    parts = []
    for (pos, src), x_shape in zip(routed, x_shapes, strict=True):
        if same or not pos.size:
            dest = src
        else:
            coords = list(np.unravel_index(pos, indices.shape))
            coords[axis] = src
            dest = np.ravel_multi_index(coords, x_shape)
        with np.errstate(over="ignore", invalid="ignore"):  # as the NumPy path casts
            values = flat_updates[pos].astype(dtype, copy=False)
        parts.append((dest, values, pos) if positions else (dest, values))
    return parts


def exclusive_products(parts) -> list[np.ndarray]:
    """For each update of *parts* (``(dest, values, pos)`` of the index chunks along
    the axis, in order), the product of the other updates with its destination,
    in C order without division (the gradient of scatter with ``"mul"``); one
    array per part."""
    dest = np.concatenate([p[0] for p in parts])
    values = np.concatenate([p[1] for p in parts])
    order = np.argsort(dest, kind="stable")  # per destination, C order of the indices
    ordered = dest[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1], [True])))
    others = np.empty(dest.size, values.dtype)
    if dest.size:
        _kernels.segment_exclusive_products(values[order], starts, values.dtype.type(1), others)
    out = np.empty_like(others)
    out[order] = others
    return np.split(out, np.cumsum([p[0].size for p in parts])[:-1])


def pick_slices(x: np.ndarray, part, *, axis: int) -> np.ndarray:
    """The slices of one chunk of ``x`` at an index chunk's hits (take)."""
    return _TAKE(x, part[1], axis)


def place_flat(parts, picked, *, shape, dtype) -> np.ndarray:
    """A chunk of *shape* from values per part, each part's last item its flat
    positions (``route_scatter`` with ``positions=True``)."""
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    for part, values in zip(parts, picked, strict=True):
        flat[part[-1]] = values
    return out


def place_slices(parts, picked, *, shape, dtype, fill, axis: int) -> np.ndarray:
    """A result chunk of *shape* from picked slices placed along *axis*."""
    out = np.empty(shape, dtype) if fill is None else np.full(shape, fill, dtype)
    lead = (slice(None),) * axis
    for (pos, _), values in zip(parts, picked, strict=True):
        out[lead + (pos,)] = values
    return out


def part_of(parts, k: int):
    return parts[k]


def identity(a):
    return a


# ---------------------------------------------------------------- scatter


def scatter_step(state, routed, *, k: int, reduce, work, start: bool, finish) -> Any:
    """One step of a chunk of ``x``'s scatter: part *k* of a routing (see
    :func:`route_scatter`) added to *state*, which is ``(accumulator in *work*,
    pending parts, count)``, or with *start* the chunk of ``x`` itself. Pending
    updates are scattered once they number about the chunk's size (into a new
    accumulator: nothing is changed in place). With *finish* (a dtype), the
    step gives the result chunk in that dtype instead of a state."""
    acc, pending, count = (np.asarray(state, dtype=work), (), 0) if start else state
    part = routed[k]
    if part[0].size:
        pending, count = (*pending, part), count + part[0].size
        if count >= acc.size:
            acc, pending, count = _flushed(acc, pending, reduce), (), 0
    if finish is None:
        return acc, pending, count
    acc = _flushed(acc, pending, reduce) if pending else acc
    if acc.dtype == finish:
        return acc
    with np.errstate(over="ignore"):
        return acc.astype(finish)


def _flushed(acc: np.ndarray, pending, reduce) -> np.ndarray:
    dest = np.concatenate([d for d, _ in pending])
    values = np.concatenate([v for _, v in pending]).astype(acc.dtype, copy=False)
    return _SCATTER(acc.reshape(-1), dest, values, 0, reduce=reduce).reshape(acc.shape)


# ---------------------------------------------------------------- gather_nd


def checked_tuples(indices: np.ndarray, dims, op: str, origin) -> np.ndarray:
    """A chunk of gather_nd's index tuples as int64 rows of components in ``[0, d)``;
    the NumPy path's ``IndexError`` for the first component out of range in C order."""
    tuples = indices.reshape(-1, len(dims))
    unsigned = tuples.dtype.kind == "u"
    limits = np.asarray(dims, dtype=np.uint64 if unsigned else np.int64)
    bad = tuples >= limits
    if not unsigned:
        bad |= tuples < -limits
    if bad.any():
        d = dims[int(np.argmax(bad.reshape(-1))) % len(dims)]
        raise_out_of_range(indices, bad.reshape(indices.shape), -d, d, op, origin)
    work = tuples.astype(np.int64)
    return np.where(work < 0, work + limits.astype(np.int64), work)


def route_nd(indices: np.ndarray, *, dim_bounds, batch_shape, op: str, origin):
    """A chunk of gather_nd's index tuples split by the chunk of ``x``'s indexed
    dimensions they fall in (numbered in C order over the grid of those chunks),
    as (row in the result chunk, row in the ``x`` chunk) pairs in C order.

    Rows number the result chunk's (batch, tuple) positions and the ``x`` chunk's
    (batch, indexed) positions, each with the remaining dimensions as columns.
    """
    q = indices.shape[-1]
    tuples = checked_tuples(indices, [int(b[-1]) for b in dim_bounds], op, origin)
    chunk = np.zeros(tuples.shape[0], np.int64)
    local = []
    sizes = []
    for t, bounds in enumerate(dim_bounds):
        where = tuples[:, t]
        c = np.searchsorted(bounds, where, side="right") - 1
        chunk = chunk * (len(bounds) - 1) + c
        local.append(where - bounds[c])
        sizes.append(np.diff(bounds))
    batch = int(np.prod(batch_shape, dtype=np.int64))
    per_batch = tuples.shape[0] // batch if batch else 0
    grid = int(np.prod([len(b) - 1 for b in dim_bounds], dtype=np.int64))
    key = chunk.astype(np.min_scalar_type(max(grid - 1, 0)))
    order = np.argsort(key, kind="stable")
    cuts = np.cumsum(np.bincount(key, minlength=grid))[:-1]
    parts = []
    for k, rows in enumerate(np.split(order, cuts)):
        coords = np.unravel_index(k, [len(b) - 1 for b in dim_bounds])
        shape = [int(s[c]) for s, c in zip(sizes, coords, strict=True)]
        src = rows // per_batch if per_batch else rows  # the batch position
        for t in range(q):
            src = src * shape[t] + local[t][rows]
        parts.append((rows, src))
    return parts


def pick_rows(x: np.ndarray, part, *, rows: int, columns: int) -> np.ndarray:
    """The rows of one chunk of ``x`` (seen as a table) at a part's hits."""
    return _TAKE(x.reshape(rows, columns), part[1], 0)


def place_rows(parts, picked, *, shape, rows: int, columns: int, dtype) -> np.ndarray:
    """A gather_nd result chunk of *shape* (seen as a table) from picked rows."""
    out = np.empty(shape, dtype)
    table = out.reshape(rows, columns)
    for (pos, _), values in zip(parts, picked, strict=True):
        table[pos] = values
    return out

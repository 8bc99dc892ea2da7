"""Gradients of pooling on dask arrays (see :mod:`axisops.dask`): ``grad.max_pool``
(a scatter-add of ``g`` at the forward's indices) and ``grad.avg_pool`` (a fold),
lazy, with the NumPy path's checks and bits.

**Result blocks.** The gradient has ``x_shape``; along each spatial axis it is cut
where ``g``'s chunks start: at the window start of each chunk's first position
(so the gradient of a lazy pooling is chunked about as its input was), and along
the batch and channel axes as ``g``; after the last chunk's windows start, every
``stride`` times its size (a shorter rest joins the block before). Nothing is rechunked (``indices`` are
rechunked as ``g`` where they differ).

**A task** makes one block of the result from the outputs whose windows overlap
it: ``g`` (and ``indices``) of those positions -- the block's own and a halo of
the footprint's worth before it, several chunks of ``g`` when a window spans
several -- and runs the NumPy path's gradient on the local problem of
:func:`axisops.dask.pool.local` (a slab holding those windows, the same windows,
the same divisors), then keeps the block. Each element so gets the same terms in
the same order as on the whole array (outputs in C order; ``avg_pool``'s shares
``g / count``), accumulated in the same dtype: the NumPy path's bits.

**Indices.** ``grad.max_pool`` reads only the outputs whose windows reach a block,
so each index must lie in its own output's window, as ``max_pool``'s indices do
(MaxUnpool of ``max_pool``'s results): another index is a ``ValueError`` when the
graph runs (the NumPy path adds it wherever it points). An index outside its
plane is the NumPy path's ``IndexError``, raised when the graph runs; it names a
bad index of the first block that holds one.

>>> import dask.array as da, numpy as np, axisops
>>> x = da.from_array(np.array([[[1., 5., 2., 0.], [3., 4., 9., 9.]]]), chunks=(1, 2, 2))
>>> v, i = axisops.max_pool(x, 2, return_indices=True)
>>> axisops.grad.max_pool(da.ones_like(v), i, x.shape, 2).compute()
array([[[0., 1., 0., 0.],
        [0., 0., 1., 0.]]])
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from .. import grad as _np_grad
from .._dispatch import numpy_function
from .pool import Local, axes, geometry, local, local_options
from .window import (
    Pieces,
    Range,
    _array,
    _assemble,
    _covering,
    _nested,
    _offsets,
    _pieces,
    _ranges,
    _sizes,
    _slices,
    _tokenize,
)

SERVES = "axisops.grad"
__all__ = ["max_pool", "avg_pool"]

_GRAD_MAX_POOL = numpy_function(_np_grad.max_pool)
_GRAD_AVG_POOL = numpy_function(_np_grad.avg_pool)


def _da():
    import dask.array as da

    return da


def max_pool(g, indices, x_shape, kernel_size, *, stride=None, dilation=1, padding=0,
             ceil_mode=False, channels_last=False):
    """Lazy :func:`axisops.grad.max_pool`: ``g`` added at the forward's indices."""
    op = "grad.max_pool"
    da = _da()
    pg = _checked_g(op, g, x_shape, kernel_size, stride, dilation, padding, ceil_mode,
                    channels_last)
    if not isinstance(indices, da.Array):
        indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {indices.dtype}")
    if tuple(indices.shape) != tuple(g.shape):
        raise ValueError(f"{op}: indices have shape {tuple(indices.shape)}, expected the "
                         f"pooled shape {tuple(g.shape)}")
    if not isinstance(indices, da.Array):
        indices = da.from_array(indices, chunks=g.chunks)
    elif indices.chunks != g.chunks:
        indices = indices.rechunk(g.chunks)
    return _unpooled(op, pg, g, indices, ceil_mode, None)


def avg_pool(g, x_shape, kernel_size, *, stride=None, padding=0, ceil_mode=False,
             channels_last=False, count_include_pad=True):
    """Lazy :func:`axisops.grad.avg_pool`: a fold of each output's share."""
    op = "grad.avg_pool"
    pg = _checked_g(op, g, x_shape, kernel_size, stride, 1, padding, ceil_mode, channels_last)
    return _unpooled(op, pg, g, None, ceil_mode, bool(count_include_pad))


def _checked_g(op, g, x_shape, kernel_size, stride, dilation, padding, ceil_mode,
               channels_last):
    """The NumPy path's checks of ``g`` and the options, in its order."""
    if g.dtype.kind != "f":
        raise TypeError(f"{op}: g must be of a float dtype, got {g.dtype}")
    x_shape = tuple(int(s) for s in x_shape)
    pg = geometry(op, x_shape, kernel_size, stride, dilation, padding, ceil_mode,
                  channels_last)
    if tuple(g.shape) != tuple(pg.out_shape):
        raise ValueError(f"{op}: g has shape {tuple(g.shape)}, expected the pooled shape "
                         f"{tuple(pg.out_shape)} of x_shape {x_shape}")
    return pg


def _unpooled(op, pg, g, indices, ceil_mode, include_pad):
    """The graph of either gradient: a task per block of the result (see the module's
    docstring); *indices* None for ``avg_pool``."""
    da = _da()
    x_shape = tuple(int(n) for n in (pg.batch,) * pg.batched + _layout(pg))
    if math.prod(x_shape) == 0:
        return da.zeros(x_shape, dtype=g.dtype, chunks=-1)
    geo, d = pg.geo, pg.d
    lead, c_axis, sp_axes = axes(pg)

    # the result's blocks along each spatial axis: where g's chunks' windows start,
    # and past the last one's start every stride * its size (as x's chunks were)
    regions: list[list[Range]] = []
    for i, a in enumerate(sp_axes):
        starts = _offsets(g.chunks[a])[1:-1]
        splits = {p * geo.stride[i] - geo.padding[i][0] for p in starts}
        last = max(0, (starts[-1] if starts else 0) * geo.stride[i] - geo.padding[i][0])
        step, size = geo.stride[i] * max(1, g.chunks[a][-1]), pg.spatial[i]
        splits |= set(range(last + step, size - step + 1, step))  # a short rest joins
        regions.append(_ranges(splits, pg.spatial[i]))
    covers: list[list[tuple[Range, Local] | None]] = []
    for i in range(d):
        row: list[tuple[Range, Local] | None] = []
        for region in regions[i]:
            cover = _covering(geo, i, pg.positions[i], region)
            row.append(None if cover is None else
                       ((cover[0], cover[1]), local(pg, i, (cover[0], cover[1]))))
        covers.append(row)
    chunks = list(g.chunks)
    for i, a in enumerate(sp_axes):
        chunks[a] = _sizes(regions[i])

    token = _tokenize(g, geo, pg.channels_last, op, bool(ceil_mode), include_pad, indices,
                      pg.spatial)
    name = f"axisops-{op.replace('.', '-').replace('_', '-')}-{token}"
    sources = [g] if indices is None else [g, indices]
    dsk: dict[Any, Any] = {}
    for block in itertools.product(*(range(n) for n in g.numblocks[:lead]),
                                   range(g.numblocks[c_axis]),
                                   *(range(len(r)) for r in regions)):
        b, c, box = block[:lead], block[lead], block[lead + 1:]
        lead_shape = tuple(g.chunks[0][k] for k in b)
        extent = tuple(hi - lo for lo, hi in (regions[i][box[i]] for i in range(d)))
        cc = g.chunks[c_axis][c]
        block_shape = lead_shape + (extent + (cc,) if pg.channels_last else (cc,) + extent)
        key = (name, *b, *box, c) if pg.channels_last else (name, *b, c, *box)
        here = [covers[i][box[i]] for i in range(d)]
        if any(v is None for v in here):  # no window overlaps the block
            dsk[key] = (functools.partial(np.zeros, block_shape, g.dtype),)
            continue
        locals_ = [v[1] for v in here if v is not None]
        pieces: list[Pieces] = [[(b[0], slice(None))]] if lead else []
        stops = [h[0][1] for h in here if h is not None]
        spatial = [_pieces(g.chunks[a], v[0], stop)
                   for a, v, stop in zip(sp_axes, locals_, stops)]
        channel: Pieces = [(c, slice(None))]
        pieces += spatial + [channel] if pg.channels_last else [channel] + spatial
        slab = tuple(v[2] - v[1] for v in locals_)
        local_shape = lead_shape + (slab + (cc,) if pg.channels_last else (cc,) + slab)
        # the part of the block the slab holds (outside it no window reaches)
        parts = [(max(r[0], v[1]), min(r[1], v[2])) for r, v in
                 zip((regions[i][box[i]] for i in range(d)), locals_)]
        keep = tuple(slice(p0 - v[1], p1 - v[1]) for (p0, p1), v in zip(parts, locals_))
        place = tuple(slice(p0 - regions[i][box[i]][0], p1 - regions[i][box[i]][0])
                      for i, (p0, p1) in enumerate(parts))
        task = functools.partial(
            _grad_block, slices=_slices(pieces), options=local_options(pg, locals_),
            x_shape=local_shape, first=sp_axes[0], keep=keep, place=place,
            shape=block_shape, include_pad=include_pad,
            window=None if indices is None else _window_check(pg, locals_))
        args = [_nested(pieces, lambda at, s=s: (s.name, *at)) for s in sources]
        dsk[key] = (task, *args)
    return _array_of(dsk, name, sources, tuple(chunks), g.dtype)


def _layout(pg) -> tuple[int, ...]:
    """x's shape after the batch axis."""
    return ((*pg.spatial, pg.channels) if pg.channels_last else (pg.channels, *pg.spatial))


def _window_check(pg, locals_: list[Local]) -> dict[str, Any]:
    """What a task needs to check its indices and make them the slab's."""
    geo = pg.geo
    return {"spatial": pg.spatial, "first": tuple(v[0] for v in locals_),
            "lo": tuple(v[1] for v in locals_), "slab": tuple(v[2] - v[1] for v in locals_),
            "stride": geo.stride, "dilation": geo.dilation,
            "pad": tuple(p[0] for p in geo.padding),
            "span": tuple(geo.dilation[i] * (geo.kernel[i] - 1) + 1 for i in range(pg.d))}


def _grad_block(g_blocks, idx_blocks=None, *, slices, options, x_shape, first, keep, place,
                shape, include_pad, window):
    """One block of the gradient: the NumPy path's on the slab, the block kept."""
    g = _assemble(g_blocks, slices)
    kernel = options["kernel"]
    if window is None:
        part = _GRAD_AVG_POOL(g, x_shape, kernel, stride=options["stride"],
                              padding=options["padding"], ceil_mode=True,
                              channels_last=options["channels_last"],
                              count_include_pad=include_pad)
    else:
        idx = _slab_indices(_assemble(idx_blocks, slices), first, **window)
        part = _GRAD_MAX_POOL(g, idx, x_shape, kernel, stride=options["stride"],
                              dilation=options["dilation"], padding=options["padding"],
                              ceil_mode=True, channels_last=options["channels_last"])
    part = part[(slice(None),) * first + keep]
    if part.shape == shape:
        return part.copy()  # not a view holding the slab's gradient
    out = np.zeros(shape, part.dtype)
    out[(slice(None),) * first + place] = part
    return out


def _slab_indices(idx: np.ndarray, axis: int, *, spatial, first, lo, slab, stride, dilation,
                  pad, span) -> np.ndarray:
    """Flat indices of the whole plane as the slab's, each checked to lie in its plane
    (the NumPy path's ``IndexError``) and in its own output's window."""
    plane = math.prod(spatial)
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise IndexError(f"grad.max_pool: index {bad} is out of range for a plane of {plane} "
                         "spatial positions")
    coords = np.unravel_index(idx.astype(np.int64, copy=False), spatial)
    moved = []
    for i, at in enumerate(coords):
        where = [1] * idx.ndim
        where[axis + i] = idx.shape[axis + i]
        start = ((first[i] + np.arange(idx.shape[axis + i])) * stride[i] - pad[i]).reshape(where)
        offset = at - start
        bad = (offset < 0) | (offset >= span[i]) | (offset % dilation[i] != 0)
        if bad.any():
            k = tuple(int(n) for n in np.argwhere(bad)[0])
            raise ValueError(f"grad.max_pool: index {int(idx[k])} at {k} of its block is not "
                             f"in its output's window (spatial dimension {i}); on dask arrays "
                             "the indices must be max_pool's")
        moved.append(at - lo[i])
    return np.ravel_multi_index(tuple(moved), slab).astype(np.int64, copy=False)


def _array_of(dsk: dict, name: str, sources: list, chunks, dtype):
    if len(sources) == 1:
        return _array(dsk, name, sources[0], chunks, dtype)
    from dask.highlevelgraph import HighLevelGraph

    da = _da()
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=sources)
    return da.Array(graph, name, chunks, dtype=dtype, meta=np.empty((0,) * len(chunks), dtype))

"""Pooling of dask arrays across chunk borders: ``max_pool`` and ``avg_pool``
(see :mod:`axisops.dask`; gradients in :mod:`axisops.dask.pool_grad`).

The graph is built by hand, one task per block of the result, and each task runs
the NumPy path (:mod:`axisops.pool`) on a slab cut out of the chunks its windows
read, with the padding of the whole array turned into the slab's own padding: each
output's window is reduced by the same kernel, over the same elements in the same
order, so values (and ``max_pool``'s indices) are the NumPy path's bit for bit.

**Output blocks.** Along each spatial axis a window position ``l`` starts at input
element ``l*stride - pad_begin``; the result is chunked where the windows start in
a new chunk of ``x`` (the first chunk also takes the windows that start in the
padding before it, the last those after it; a chunk where no window starts gives
no block). Batch and channel chunks are kept. So the result's chunks follow the
input's mapped through the stride, and nothing is rechunked.

**Halos.** A task reads, along each spatial axis, the input elements its windows
cover: from its first window's start to its last window's end (clipped to the
input), i.e. its chunk and a halo of the footprint ``dilation*(kernel_size-1)``
elements of the next chunks, several when a window is larger than a chunk. Its
memory is that slab and its block of the result: a few chunks, never a whole axis
unless a chunk already holds it.

**The local problem.** The slab's padding before is the distance from the first
window's start to the slab; after, the distance from the slab to the last window's
end, clipped at the end of the whole padded input, and the local call rounds its
window count up (``ceil_mode``): so every local window is the global one, and
``count_include_pad``'s divisor (the window clipped to the padded input) is the
global one. A block that is only the last window of a ``ceil_mode`` pooling which
runs past the padded end is computed with the window before it (then dropped), so
the local problem is never smaller than a kernel. ``max_pool``'s indices are the
slab's flat spatial positions, turned into those of the whole ``(n, c)`` plane.

**Windows wholly in the padding.** The NumPy path refuses a first or last window
with no element of the input. With dilation a window between them can hold none
too (the input falls between its elements), where the NumPy path gives an output
the contract leaves undefined; here any such window is the same ``ValueError``
(the module docstring of :mod:`axisops.pool` decides so), raised while building.

>>> import dask.array as da, numpy as np, axisops
>>> a = np.arange(16.).reshape(1, 1, 4, 4)
>>> x = da.from_array(a, chunks=(1, 1, 2, 3))
>>> v, i = axisops.max_pool(x, 2, stride=1, return_indices=True)
>>> v.chunks[2:]                                       # windows starting in each chunk
((2, 1), (3,))
>>> bool((v.compute() == axisops.max_pool(a, 2, stride=1)).all())
True
>>> i.compute()[0, 0]
array([[ 5,  6,  7],
       [ 9, 10, 11],
       [13, 14, 15]])
"""
from __future__ import annotations

import functools
import itertools
import math
from operator import getitem
from typing import Any

import numpy as np

from .. import pool as _np_pool
from .. import window as _np_window
from .._dispatch import numpy_function
from ..pool import PoolGeometry, _result_dtype
from .window import (
    Pieces,
    Range,
    _array,
    _assemble,
    _nested,
    _offsets,
    _pieces,
    _ranges,
    _sizes,
    _slices,
    _tokenize,
)

__all__ = ["max_pool", "avg_pool"]

_MAX_POOL = numpy_function(_np_pool.max_pool)
_AVG_POOL = numpy_function(_np_pool.avg_pool)

#: Along one spatial axis, the local problem of a block of window positions:
#: ``(first, lo, hi, (pad_begin, pad_end))`` -- the first position computed (the
#: block's, or the one before it), the input elements ``[lo, hi)`` its windows read
#: and the slab's padding.
Local = tuple[int, int, int, tuple[int, int]]


def _da():
    import dask.array as da

    return da


def max_pool(x, kernel_size, *, stride=None, dilation=1, padding=0, ceil_mode=False,
             channels_last=False, return_indices=False):
    """Lazy :func:`axisops.max_pool` of a dask array: the NumPy path's values and indices."""
    return _lazy_pool("max_pool", x, kernel_size, stride, dilation, padding, ceil_mode,
                      channels_last, bool(return_indices), True)


def avg_pool(x, kernel_size, *, stride=None, padding=0, ceil_mode=False, channels_last=False,
             count_include_pad=True):
    """Lazy :func:`axisops.avg_pool` of a dask array: the NumPy path's bits."""
    return _lazy_pool("avg_pool", x, kernel_size, stride, 1, padding, ceil_mode, channels_last,
                      bool(count_include_pad), False)


# ----------------------------------------------------------------- geometry


def geometry(op: str, x_shape, kernel_size, stride, dilation, padding, ceil_mode,
             channels_last) -> PoolGeometry:
    """The NumPy path's :class:`~axisops.pool.PoolGeometry` (its errors: every window
    holds an element of the input)."""
    return PoolGeometry(op, tuple(int(s) for s in x_shape), kernel_size, stride, dilation,
                        padding, bool(ceil_mode), bool(channels_last))


def axes(pg: PoolGeometry) -> tuple[int, int, list[int]]:
    """(lead: 1 with a batch axis, the channel axis, the spatial axes) of x (or of
    the pooled result: the same axes)."""
    lead = 1 if pg.batched else 0
    c_axis = lead + pg.d if pg.channels_last else lead
    first = lead if pg.channels_last else lead + 1
    return lead, c_axis, [first + i for i in range(pg.d)]


def local(pg: PoolGeometry, i: int, block: Range) -> Local:
    """The local problem of window positions *block* along spatial axis *i* (see the
    module's docstring): every window the global one, the same divisors."""
    geo = pg.geo
    first, stop = block
    size, (pad, pad_end) = pg.spatial[i], geo.padding[i]
    step, span = geo.stride[i], geo.dilation[i] * (geo.kernel[i] - 1) + 1
    limit = size + pad_end  # the end of the padded input
    if stop - first == 1 and first and (stop - 1) * step - pad + span > limit:
        first -= 1  # a lone window past the padded end: with the one before it
    begin, end = first * step - pad, (stop - 1) * step - pad + span
    lo, hi = max(0, begin), min(size, end)
    return first, lo, hi, (lo - begin, min(end, limit) - hi)


def local_options(pg: PoolGeometry, locals_: list[Local]) -> dict[str, Any]:
    """The keyword arguments of the NumPy path's pooling on the slab of *locals_*."""
    geo = pg.geo
    return {"kernel": geo.kernel, "stride": geo.stride, "dilation": geo.dilation,
            "padding": tuple(v[3] for v in locals_), "channels_last": pg.channels_last}


# ------------------------------------------------------------------- forward


def _lazy_pool(op, x, kernel_size, stride, dilation, padding, ceil_mode, channels_last, flag,
               is_max):
    da = _da()
    _np_window._check_number(x.dtype, op)
    pg = geometry(op, x.shape, kernel_size, stride, dilation, padding, ceil_mode,
                  channels_last)
    res = _result_dtype(x.dtype, is_max)
    with_index = is_max and flag
    shape = tuple(int(n) for n in pg.out_shape)
    if math.prod(shape) == 0:
        out = da.zeros(shape, dtype=res, chunks=-1)
        return (out, da.zeros(shape, dtype=np.int64, chunks=-1)) if with_index else out
    geo, d = pg.geo, pg.d
    lead, c_axis, sp_axes = axes(pg)

    # positions by the chunk of x their windows start in, per spatial axis
    grid: list[list[Range]] = []
    for i, a in enumerate(sp_axes):
        pad, step = geo.padding[i][0], geo.stride[i]
        splits = {min(max(-(-(b + pad) // step), 0), pg.positions[i])
                  for b in _offsets(x.chunks[a])[1:-1]}
        grid.append(_ranges(splits, pg.positions[i]))
    locals_ = [[local(pg, i, r) for r in grid[i]] for i in range(d)]
    chunks = list(x.chunks)
    for i, a in enumerate(sp_axes):
        chunks[a] = _sizes(grid[i])

    token = _tokenize(x, geo, channels_last, op, bool(ceil_mode), flag)
    stem = f"axisops-{op.replace('_', '-')}"
    name = f"{stem}-{token}"
    pairs = f"{stem}-pairs-{token}"
    indices = f"{stem}-indices-{token}"
    dsk: dict[Any, Any] = {}
    for block in itertools.product(*(range(n) for n in x.numblocks[:lead]),
                                   range(x.numblocks[c_axis]),
                                   *(range(len(g)) for g in grid)):
        b, c, box = block[:lead], block[lead], block[lead + 1:]
        here = [locals_[i][box[i]] for i in range(d)]
        pieces: list[Pieces] = [[(b[0], slice(None))]] if lead else []
        spatial = [_pieces(x.chunks[a], v[1], v[2]) for a, v in zip(sp_axes, here)]
        channel: Pieces = [(c, slice(None))]
        pieces += spatial + [channel] if channels_last else [channel] + spatial
        task = functools.partial(
            _pool_block, options=local_options(pg, here), slices=_slices(pieces),
            skip=tuple(grid[i][box[i]][0] - here[i][0] for i in range(d)),
            lo=tuple(v[1] for v in here), spatial=pg.spatial, first=sp_axes[0],
            flag=flag, is_max=is_max, with_index=with_index)
        idx = (*b, *box, c) if channels_last else (*b, c, *box)
        call = (task, _nested(pieces, lambda at: (x.name, *at)))
        key, pair = (name, *idx), (pairs, *idx)
        if with_index:
            dsk[pair] = call
            dsk[key] = (getitem, pair, 0)
            index_key = (indices, *idx)
            dsk[index_key] = (getitem, pair, 1)
        else:
            dsk[key] = call
    out = _array(dsk, name, x, tuple(chunks), res)
    if with_index:
        return out, _array(dsk, indices, x, tuple(chunks), np.dtype(np.int64))
    return out


def _pool_block(blocks, *, options, slices, skip, lo, spatial, first, flag, is_max,
                with_index):
    """The pooling of one block of the result, on the slab its windows read; the
    positions before the block dropped, indices made the whole plane's."""
    slab = _assemble(blocks, slices)
    kernel, d = options["kernel"], len(options["kernel"])
    if is_max:
        out = _MAX_POOL(slab, kernel, stride=options["stride"], dilation=options["dilation"],
                        padding=options["padding"], ceil_mode=True,
                        channels_last=options["channels_last"], return_indices=with_index)
    else:
        out = _AVG_POOL(slab, kernel, stride=options["stride"], padding=options["padding"],
                        ceil_mode=True, channels_last=options["channels_last"],
                        count_include_pad=flag)
    values, idx = out if with_index else (out, None)
    crop = (slice(None),) * first + tuple(slice(s, None) for s in skip)
    if any(skip):  # copies, not views holding the dropped position
        values = values[crop].copy()
    if idx is None:
        return values
    if any(skip):
        idx = idx[crop]
    coords = np.unravel_index(idx, slab.shape[first:first + d])
    flat = np.ravel_multi_index(tuple(c + o for c, o in zip(coords, lo)), spatial)
    return values, flat.astype(np.int64, copy=False)

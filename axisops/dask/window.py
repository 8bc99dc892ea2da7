"""Sliding windows of dask arrays across chunk borders: ``unfold`` and ``fold``
(see :mod:`axisops.dask`).

Both build their graph by hand, one task per block of the result, and each task
runs the NumPy path on a small problem cut out of the chunks it needs: the same
windows, with the padding of the whole array turned into the local problem's
padding (zeros are never materialised beyond a task's own result). Values are the
NumPy path's bit for bit, ``fold``'s sums included.

**Window positions and the flattened ``L`` axis.** A window position ``l`` along a
spatial axis starts at input element ``l*stride - pad_begin``. ``unfold`` gives
each chunk of ``x`` along a spatial axis the positions whose windows start in it
(the first chunk also those that start in the padding before it, the last those
after it); a task then reads those windows: its chunk and a halo of up to
``dilation*(kernel_size - 1)`` elements of the next chunks, which may be several
when chunks are smaller than a window. The result's ``L`` axis lists the
positions flattened in C order, so one of its chunks must be a contiguous run of
that order: a block of positions along the innermost spatial axis whose chunks
(of positions) are more than one, all positions along the axes inside it, and a
single position along the axes outside it. ``x`` chunked along its first spatial
axis only (strips) so gives one ``L`` chunk per strip; chunked along inner axes
too, one per (outer position, chunk) — more, thinner chunks, each still bounded
by a few chunks of ``x``. Along a single-position axis a task reads only the
kernel's rows (every ``dilation``-th), not the whole span.

**Channels.** Batch chunks are kept. With the channels first, row ``c*K + k`` of
the result keeps ``x``'s channel chunks (``K`` rows a channel). With
``channels_last`` column ``k*C + c`` is not contiguous in a chunk of channels, so
a chunked channel axis gives ``K`` chunks per channel chunk (one per kernel
offset, cut from one task's unfold); one channel chunk gives one chunk of
``K*C`` columns. Nothing is rechunked.

**fold.** ``fold`` reads ``cols``' ``L`` chunks as such runs (any chunking of the
form that ``unfold`` gives; another chunking of ``L`` is first rechunked to runs
of about its largest chunk, which dask does lazily in bounded memory). The result
is chunked along each spatial axis where the runs start: at the window start of a
run's first position — so ``fold(unfold(x))`` is chunked about as ``x`` where it
was cut into strips, and into rows of ``stride`` elements along the axes outside
the innermost chunked one — and along the channels where ``cols``' chunks of the
``C*K`` (``K*C``) axis start. A task sums, for its block of the result, the
columns of every window overlapping it (its runs and a halo of the runs before
them), by the NumPy path on the local problem: each element gets the same terms
in the same order (increasing kernel index) as on the whole array, so the sums
are the NumPy path's bits, on every run and for every chunking.

>>> import dask.array as da, numpy as np, axisops
>>> a = np.arange(16.).reshape(1, 1, 4, 4)
>>> x = da.from_array(a, chunks=(1, 1, 2, 4))                     # two strips of rows
>>> cols = axisops.unfold(x, 2)
>>> cols.chunks                                                   # one L chunk a strip
((1,), (4,), (6, 3))
>>> bool((cols.compute() == axisops.unfold(a, 2)).all())
True
>>> axisops.fold(cols, (4, 4), 2).compute()[0, 0]              # windows covering each
array([[ 0.,  2.,  4.,  3.],
       [ 8., 20., 24., 14.],
       [16., 36., 40., 22.],
       [12., 26., 28., 15.]])
"""
from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _complex, _dates
from .. import gather as _np_gather
from .. import window as _np_window
from .._dispatch import numpy_function
from ..window import _Geometry, _geometry, _per_dim, unfold_shape

__all__ = ["unfold", "fold"]

_UNFOLD = numpy_function(_np_window.unfold)
_FOLD = numpy_function(_np_window.fold)

#: (first, stop) of a block of window positions along one spatial axis.
Range = tuple[int, int]
#: The blocks of an axis a task reads, each with the slice of it that it needs.
Pieces = list[tuple[int, slice]]


def _da():
    import dask.array as da

    return da


# ---------------------------------------------------------------------- unfold


def unfold(x, kernel_size, *, dilation=1, padding=0, stride=1, channels_last=False):
    """Lazy :func:`axisops.unfold` of a dask array, chunked along ``L`` by window starts."""
    return lazy_unfold(x, kernel_size, dilation, padding, stride, channels_last, "unfold")


def lazy_unfold(x, kernel_size, dilation, padding, stride, channels_last: bool, op: str):
    """``unfold`` with errors naming *op* (``grad.fold`` is an unfold)."""
    da = _da()
    if _np_gather._moves_bits(x.dtype):  # moved as its bits by the NumPy path's unfold
        _np_gather.lanes(x.dtype)
    elif _complex.is_complex(x.dtype):
        _complex.check(x.dtype, op)
    else:
        _np_window._check_number(x.dtype, op)
    geo, shape = unfold_shape(x.shape, kernel_size, dilation, padding, stride, channels_last, op)
    shape = tuple(int(n) for n in shape)
    d = geo.d
    lead = x.ndim - d - 1  # 1 with a batch axis
    c_axis = x.ndim - 1 if channels_last else lead
    sp_axes = [lead + i if channels_last else lead + 1 + i for i in range(d)]
    spatial = tuple(int(x.shape[a]) for a in sp_axes)
    positions = geo.positions(op, spatial)
    if math.prod(shape) == 0:
        return da.zeros(shape, dtype=x.dtype, chunks=-1)
    count = geo.kernel_count

    # positions by the chunk of x their windows start in, per spatial axis
    starts = []
    for i, a in enumerate(sp_axes):
        pad, step = geo.padding[i][0], geo.stride[i]
        splits = {min(max(-(-(b + pad) // step), 0), positions[i])
                  for b in _offsets(x.chunks[a])[1:-1]}
        starts.append(_ranges(splits, positions[i]))
    chunked = [i for i in range(d) if len(starts[i]) > 1]
    j = chunked[-1] if chunked else 0
    grid = [[(p, p + 1) for p in range(positions[i])] if i < j else starts[i] for i in range(d)]
    reads = [[_window_rows(geo, i, spatial[i], r) for r in grid[i]] for i in range(d)]
    runs = list(itertools.product(*(range(len(g)) for g in grid)))
    run_sizes = tuple(math.prod(grid[i][r[i]][1] - grid[i][r[i]][0] for i in range(d))
                      for r in runs)

    c_chunks = x.chunks[c_axis]
    batches: list[tuple[int, ...]] = [(b,) for b in range(x.numblocks[0])] if lead else [()]
    split_channels = channels_last and len(c_chunks) > 1
    if channels_last:
        width = (tuple(c for _ in range(count) for c in c_chunks) if split_channels
                 else (count * c_chunks[0],))
        chunks = x.chunks[:lead] + (run_sizes, width)
    else:
        chunks = x.chunks[:lead] + (tuple(c * count for c in c_chunks), run_sizes)
    token = _tokenize(x, geo, channels_last, op)
    name = f"axisops-{op.replace('.', '-')}-{token}"
    inner = f"axisops-{op.replace('.', '-')}-columns-{token}"
    dsk: dict[Any, Any] = {}
    for b in batches:
        for c, cc in enumerate(c_chunks):
            for r, run in enumerate(runs):
                size = run_sizes[r]
                sel = [reads[i][run[i]] for i in range(d)]
                lead_shape = tuple(x.chunks[0][b[0]] for _ in b)
                if channels_last:
                    key = (inner, *b, r, c) if split_channels else (name, *b, r, 0)
                    block_shape = lead_shape + (size, count * cc)
                else:
                    key = (name, *b, c, r)
                    block_shape = lead_shape + (cc * count, size)
                if any(s is None for s in sel):  # every window reads padding only
                    dsk[key] = (functools.partial(np.zeros, block_shape, x.dtype),)
                else:
                    pieces: list[Pieces] = [[(b[0], slice(None))]] if lead else []
                    spatial_pieces = [_pieces(x.chunks[a], *sel[i][0]) for i, a in enumerate(sp_axes)]
                    channel_pieces: Pieces = [(c, slice(None))]
                    pieces += (spatial_pieces + [channel_pieces] if channels_last
                               else [channel_pieces] + spatial_pieces)
                    task = functools.partial(
                        _unfold_block, slices=_slices(pieces),
                        kernel=geo.kernel, dilation=tuple(s[1][0] for s in sel),
                        stride=tuple(s[1][1] for s in sel), padding=tuple(s[1][2] for s in sel),
                        channels_last=channels_last)
                    dsk[key] = (task, _nested(pieces, lambda idx: (x.name, *idx)))
                if split_channels:  # one chunk per kernel offset
                    for k in range(count):
                        column = (name, *b, r, k * len(c_chunks) + c)
                        dsk[column] = (functools.partial(_kernel_columns, k=k, width=cc), key)
    return _array(dsk, name, x, chunks, x.dtype)


def _window_rows(geo: _Geometry, i: int, size: int, block: Range):
    """What the windows of the positions in *block* read along spatial axis *i* of an
    input of *size*: ``((start, stop, step), (dilation, stride, padding))`` of the
    local problem, or None when they read padding only. A single position reads
    its kernel's rows only (dilation 1 on the strided rows)."""
    first, stop = block
    kernel, dilation, stride = geo.kernel[i], geo.dilation[i], geo.stride[i]
    begin = first * stride - geo.padding[i][0]
    if stop - first == 1:
        k_lo = max(0, -(begin // dilation))
        k_hi = min(kernel, -((begin - size) // dilation))
        if k_hi <= k_lo:
            return None
        rows = (begin + k_lo * dilation, begin + (k_hi - 1) * dilation + 1, dilation)
        return rows, (1, 1, (k_lo, kernel - k_hi))
    end = (stop - 1) * stride - geo.padding[i][0] + dilation * (kernel - 1) + 1
    lo, hi = max(0, begin), min(size, end)
    if hi <= lo:
        return None
    return (lo, hi, 1), (dilation, stride, (lo - begin, end - hi))


def _unfold_block(blocks, *, slices, kernel, dilation, stride, padding, channels_last):
    return _UNFOLD(_assemble(blocks, slices), kernel, dilation=dilation, padding=padding,
                   stride=stride, channels_last=channels_last)


def _kernel_columns(block: np.ndarray, k: int, width: int) -> np.ndarray:
    return block[..., k * width:(k + 1) * width]


# ------------------------------------------------------------------------ fold


def fold(cols, output_size, kernel_size, *, dilation=1, padding=0, stride=1,
         channels_last=False):
    """Lazy :func:`axisops.fold` of a dask array: the NumPy path's sums, bit for bit."""
    da = _da()
    if cols.dtype.kind == "m":  # as the NumPy path: NaT as 0, NaT wherever one was added
        options = dict(dilation=dilation, padding=padding, stride=stride,
                       channels_last=channels_last)
        nat = cols.map_blocks(np.isnat, dtype=bool)
        total = fold(da.where(nat, 0, cols.view(np.int64)), output_size, kernel_size, **options)
        hit = fold(nat, output_size, kernel_size, **options)
        return da.where(hit, _dates.NAT, total).view(cols.dtype)
    if _np_gather._moves_bits(cols.dtype):
        _np_window._fold_plan(np.empty((0, 0), cols.dtype), output_size, kernel_size, dilation,
                              padding, stride, channels_last)  # the NumPy path's TypeError
    if _complex.is_complex(cols.dtype):
        _complex.check(cols.dtype, "fold")
    else:
        _np_window._check_number(cols.dtype, "fold")
    geo = _geometry("fold", kernel_size, dilation, padding, stride)
    d = geo.d
    size = _per_dim("fold", "output_size", output_size, d, low=0)
    positions = geo.positions("fold", size)
    count, total = geo.kernel_count, math.prod(positions)
    want = "(N, L, K*C) or (L, K*C)" if channels_last else "(N, C*K, L) or (C*K, L)"
    if cols.ndim not in (2, 3):
        raise ValueError(f"fold: expected cols of shape {want} with K = {count} and L = {total} "
                         f"for output_size {size}, got shape {tuple(cols.shape)}")
    lead = cols.ndim - 2
    w_axis, l_axis = (lead + 1, lead) if channels_last else (lead, lead + 1)
    width, length = int(cols.shape[w_axis]), int(cols.shape[l_axis])
    if width % count or length != total:
        want = "(N, L, K*C)" if channels_last else "(N, C*K, L)"
        raise ValueError(f"fold: expected cols of shape {want} with K = {count} and L = {total} "
                         f"for output_size {size}, got shape {tuple(cols.shape)}")
    channels = width // count
    batch = tuple(int(n) for n in cols.shape[:lead])
    shape = batch + (size + (channels,) if channels_last else (channels,) + size)
    _np_window.check_result_size("fold", shape)
    if math.prod(shape) == 0:
        return da.zeros(shape, dtype=cols.dtype, chunks=-1)

    # cols' L chunks as runs of positions (rechunked to runs when they are not)
    runs = _runs(cols.chunks[l_axis], positions)
    if runs is None:
        runs = _even_runs(max(cols.chunks[l_axis]), positions)
    j, pattern = runs
    canonical = _run_chunks(j, pattern, positions)
    if canonical != tuple(cols.chunks[l_axis]):
        cols = cols.rechunk({l_axis: canonical})
    grid = [(1,) * positions[i] if i < j else _sizes(_ranges(set(pattern), positions[i]))
            if i == j else (positions[i],) for i in range(d)]
    j_blocks = len(grid[j])

    # the result's chunks: where runs start, along each spatial axis and the channels
    out_ranges = []
    for i in range(d):
        firsts = range(1, positions[i]) if i < j else pattern if i == j else ()
        splits = {p * geo.stride[i] - geo.padding[i][0] for p in firsts}
        out_ranges.append(_ranges({s for s in splits if 0 < s < size[i]}, size[i]))
    w_offsets = _offsets(cols.chunks[w_axis])[1:-1]
    c_splits = {(o % channels) if channels_last else (o // count) for o in w_offsets}
    c_ranges = _ranges({s for s in c_splits if 0 < s < channels}, channels)
    spatial_chunks = tuple(_sizes(r) for r in out_ranges)
    c_chunks = _sizes(c_ranges)
    chunks = cols.chunks[:lead] + (spatial_chunks + (c_chunks,) if channels_last
                                   else (c_chunks,) + spatial_chunks)

    def cols_key(idx: tuple[int, ...]) -> tuple:
        """The key of cols' block at (batch, W, *position blocks) or (batch, *positions, W)."""
        p = idx[lead:lead + d] if channels_last else idx[lead + 1:]
        flat = 0
        for i in range(j + 1):
            flat = flat * (positions[i] if i < j else j_blocks) + p[i]
        w = idx[-1] if channels_last else idx[lead]
        return (cols.name, *idx[:lead], flat, w) if channels_last else (cols.name, *idx[:lead], w, flat)

    token = _tokenize(cols, geo, channels_last, "fold", size)
    name = f"axisops-fold-{token}"
    leaf = functools.partial(_unflatten, axis=l_axis, j=j, inner=positions[j + 1:])
    batches: list[tuple[int, ...]] = [(b,) for b in range(cols.numblocks[0])] if lead else [()]
    dsk: dict[Any, Any] = {}
    for b in batches:
        lead_shape = tuple(cols.chunks[0][b[0]] for _ in b)
        for c, (c0, c1) in enumerate(c_ranges):
            for box in itertools.product(*(range(len(r)) for r in out_ranges)):
                region = [out_ranges[i][box[i]] for i in range(d)]
                extent = tuple(hi - lo for lo, hi in region)
                block_shape = lead_shape + (extent + (c1 - c0,) if channels_last
                                            else (c1 - c0,) + extent)
                key = (name, *b, *box, c) if channels_last else (name, *b, c, *box)
                cover = [_covering(geo, i, positions[i], region[i]) for i in range(d)]
                if any(v is None for v in cover):  # no window overlaps the block
                    dsk[key] = (functools.partial(np.zeros, block_shape, cols.dtype),)
                    continue
                if channels_last:
                    w_pieces = [p for k in range(count) for p in
                                _pieces(cols.chunks[w_axis], k * channels + c0, k * channels + c1)]
                else:
                    w_pieces = _pieces(cols.chunks[w_axis], c0 * count, c1 * count)
                p_pieces = [_pieces(grid[i], v[0], v[1]) for i, v in enumerate(cover)]
                pieces: list[Pieces] = [[(b[0], slice(None))]] if lead else []
                pieces += p_pieces + [w_pieces] if channels_last else [w_pieces] + p_pieces
                local = tuple(v[3] - v[2] for v in cover)
                offsets = tuple(v[2] - r[0] for v, r in zip(cover, region))
                task = functools.partial(
                    _fold_block, slices=_slices(pieces), leaf=leaf, lead=lead,
                    channels_last=channels_last, output_size=local, kernel=geo.kernel,
                    dilation=geo.dilation, stride=geo.stride,
                    padding=tuple(v[4] for v in cover), offsets=offsets, shape=block_shape)
                dsk[key] = (task, _nested(pieces, cols_key))
    return _array(dsk, name, cols, chunks, cols.dtype)


def _covering(geo: _Geometry, i: int, count: int, region: Range):
    """The window positions along spatial axis *i* (of *count*) that overlap the
    result's elements *region*: ``(first, stop, lo, hi, padding)`` with ``[lo, hi)``
    the part of *region* they cover and the local problem's padding; None if none."""
    a, b = region
    kernel, dilation, stride = geo.kernel[i], geo.dilation[i], geo.stride[i]
    pad, span = geo.padding[i][0], dilation * (kernel - 1) + 1
    first = max(0, -(-(a + pad - span + 1) // stride))
    stop = min(count, (b - 1 + pad) // stride + 1)
    if stop <= first:
        return None
    begin, end = first * stride - pad, (stop - 1) * stride - pad + span
    lo, hi = max(a, begin), min(b, end)
    if hi <= lo:
        return None
    return first, stop, lo, hi, (lo - begin, end - hi)


def _fold_block(blocks, *, slices, leaf, lead, channels_last, output_size, kernel, dilation,
                stride, padding, offsets, shape):
    cols = _assemble(blocks, slices, leaf)
    if channels_last:
        box = cols.shape[lead:-1]
        cols = cols.reshape(cols.shape[:lead] + (math.prod(box), cols.shape[-1]))
    else:
        box = cols.shape[lead + 1:]
        cols = cols.reshape(cols.shape[:lead + 1] + (math.prod(box),))
    part = _FOLD(cols, output_size, kernel, dilation=dilation, padding=padding, stride=stride,
                 channels_last=channels_last)
    if part.shape == shape:
        return part
    out = np.zeros(shape, part.dtype)
    first = lead if channels_last else lead + 1
    where = [slice(None)] * len(shape)
    for i, (o, n) in enumerate(zip(offsets, output_size)):
        where[first + i] = slice(o, o + n)
    out[tuple(where)] = part
    return out


def _unflatten(block: np.ndarray, axis: int, j: int, inner: tuple[int, ...]) -> np.ndarray:
    """A run of cols' L axis as positions: one along the axes before *j*, a block
    along *j*, all along the axes after it."""
    along = block.shape[axis] // math.prod(inner)
    return block.reshape(block.shape[:axis] + (1,) * j + (along,) + inner
                         + block.shape[axis + 1:])


def _runs(chunks: Sequence[int], positions: tuple[int, ...]):
    """``(j, firsts)`` when *chunks* (of the flattened positions) are runs: one
    position along the axes before ``j``, blocks starting at *firsts* (after 0)
    along ``j``, all positions along the axes after it; else None."""
    bounds = set(_offsets(chunks)[1:-1])
    for j in range(len(positions)):
        inner = math.prod(positions[j + 1:])
        if any(o % inner for o in bounds):
            continue
        rows = inner * positions[j]
        pattern = sorted({(o % rows) // inner for o in bounds} - {0})
        outer = math.prod(positions[:j])
        if len(bounds) != outer * (len(pattern) + 1) - 1:
            continue
        if bounds == {o * rows + p * inner for o in range(outer) for p in [0, *pattern]} - {0}:
            return j, pattern
    return None


def _even_runs(largest: int, positions: tuple[int, ...]) -> tuple[int, list[int]]:
    """Runs of about *largest* positions: along the outermost axis whose inner rows fit."""
    for j in range(len(positions)):
        inner = math.prod(positions[j + 1:])
        if inner <= largest:
            step = max(1, largest // inner)
            return j, list(range(step, positions[j], step))
    return len(positions) - 1, []  # not reached: the last axis' rows are single positions


def _run_chunks(j: int, pattern: list[int], positions: tuple[int, ...]) -> tuple[int, ...]:
    inner = math.prod(positions[j + 1:])
    along = tuple(n * inner for n in _sizes(_ranges(set(pattern), positions[j])))
    return along * math.prod(positions[:j])


# --------------------------------------------------------------------- helpers


def _offsets(chunks: Sequence[int]) -> list[int]:
    """Where each chunk starts, and the end: ``[0, c0, c0 + c1, ..., n]``."""
    return [0, *itertools.accumulate(int(c) for c in chunks)]


def _ranges(splits: set[int], n: int) -> list[Range]:
    """``[0, n)`` cut at *splits* (those strictly inside it)."""
    cuts = [0, *sorted(s for s in splits if 0 < s < n), n]
    return list(itertools.pairwise(cuts))


def _sizes(ranges: list[Range]) -> tuple[int, ...]:
    return tuple(hi - lo for lo, hi in ranges)


def _pieces(chunks: Sequence[int], start: int, stop: int, step: int = 1) -> Pieces:
    """The chunks that hold ``start:stop:step`` of an axis, each with its part of it."""
    out = []
    for k, (lo, hi) in enumerate(itertools.pairwise(_offsets(chunks))):
        first, last = max(start, lo), min(stop, hi)
        first = start + -(-(first - start) // step) * step  # the next selected element
        if first < last:
            out.append((k, slice(first - lo, last - lo, step)))
    return out


def _slices(pieces: list[Pieces]) -> list[list[slice]]:
    return [[s for _, s in axis] for axis in pieces]


def _nested(pieces: list[Pieces], key: Callable[[tuple[int, ...]], tuple]) -> Any:
    """Nested lists (a level per axis) of the keys of the blocks in *pieces*."""
    def level(index: tuple[int, ...]) -> Any:
        if len(index) == len(pieces):
            return key(index)
        return [level(index + (k,)) for k, _ in pieces[len(index)]]

    return level(())


def _assemble(blocks: Any, slices: list[list[slice]],
              leaf: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """The pieces of the nested *blocks* (:func:`_nested`), cut and concatenated."""
    def level(node: Any, index: tuple[int, ...]) -> np.ndarray:
        axis = len(index)
        if axis == len(slices):
            block = node if leaf is None else leaf(node)
            return block[tuple(s[i] for s, i in zip(slices, index))]
        parts = [level(child, index + (p,)) for p, child in enumerate(node)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=axis)

    return level(blocks, ())


def _tokenize(a, geo: _Geometry, channels_last: bool, op: str, *more) -> str:
    from dask.base import tokenize

    return tokenize(a, geo.kernel, geo.dilation, geo.stride, geo.padding, channels_last, op,
                    *more)


def _array(dsk: dict, name: str, source, chunks, dtype):
    from dask.highlevelgraph import HighLevelGraph

    da = _da()
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[source])
    return da.Array(graph, name, chunks, dtype=dtype,
                    meta=np.empty((0,) * len(chunks), dtype))

"""CUDA kernels of take_along_axis, gather_nd and scatter (numba-cuda).

As in :mod:`axisops.cuda.kernels`, a kernel reads its arrays as flat bases with
element offsets and an int64 *geometry* made on the host, and divides only by
multiply and shift (``_divmod``). A dimension record here carries one stride per
array walked together: ``(size, stride_0, ..., stride_k, magic, shift)``
(:func:`dims_multi`), so one unravel gives the offsets in every array at once.

Gathers (``take_along``, ``gather_tuples``) are a thread per output element: the
threads of a warp write neighbouring outputs and, along a contiguous row of
``x``, read neighbouring elements. An index out of range under ``raise`` sets a
flag; the launcher then finds the first bad index on the host and raises the
NumPy path's error (the error path copies the indices; the common path reads one
flag).

Scatter is deterministic without atomics, by two ways that give the same bits:

* *lanes* (``scatter_lanes``): a thread per lane (a position of ``indices``
  outside ``axis``) applies its updates in order along the axis. Different
  lanes never share a destination, and within one lane the order along the axis
  is the C order of ``indices``: the NumPy path's order, so float sums are its
  bits. Used when there are enough lanes to fill the GPU.
* *shared runs* (every lane reads the same indices): the indices along the axis
  sorted by destination once, then a thread per (sorted index, lane) applies
  the run it heads (``scatter_shared_runs``);
* *runs* (few, long lanes): each update's destination (``scatter_keys``), a
  stable merge sort of the positions by destination (``sort_tiles`` sorts each
  block's tile in shared memory, then ``merge_pass``: each element finds its
  place in the merged run by a binary search in the other run, ties keeping
  the left run first), then a thread per run of equal
  destinations applies them in order (``scatter_runs``).

A destination starts from ``x``'s value and combines its updates in the working
dtype (float16 in float32, rounded once by the launcher); max and min take an
update that is greater (smaller) or NaN, so NaN propagates and ties keep the
earlier value, as on the CPU.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numba import cuda, int64, uint64

from ..kernels import gather as _cpu_gather
from ._jit import kernel
from .kernels import MAX_BLOCK, _divmod, _mulhi, _resolve, _unravel
from .kernels import cast as _cast
from .kernels import copy_c as _copy_c

OP_ASSIGN, OP_ADD, OP_MUL, OP_MAX, OP_MIN = (_cpu_gather.OP_ASSIGN, _cpu_gather.OP_ADD,
                                             _cpu_gather.OP_MUL, _cpu_gather.OP_MAX,
                                             _cpu_gather.OP_MIN)


def dims_multi(shape, *strides) -> list[int]:
    """``[size, stride per array..., magic, shift]`` per dimension (see
    ``_device.divisor``): the records :func:`_unravel2` and :func:`_unravel3` walk."""
    from ._device import divisor

    out: list[int] = []
    for k, n in enumerate(shape):
        out += [int(n), *(int(s[k]) for s in strides), *divisor(n)[1:]]
    return out


@cuda.jit(device=True, inline=True)
def _unravel2(k, geo, start, count):
    """(offset in array 0, offset in array 1) of flat index *k* over ``count``
    records ``(size, s0, s1, magic, shift)`` from ``geo[start]`` (C order)."""
    a = int64(0)
    b = int64(0)
    for e in range(count):
        rec = start + 5 * (count - 1 - e)
        u = uint64(k)
        q = int64((_mulhi(u, uint64(geo[rec + 3])) + u) >> uint64(geo[rec + 4]))
        r = k - q * geo[rec]
        a += r * geo[rec + 1]
        b += r * geo[rec + 2]
        k = q
    return a, b


@cuda.jit(device=True, inline=True)
def _unravel3(k, geo, start, count):
    """As :func:`_unravel2` with three strides per record ``(size, s0, s1, s2,
    magic, shift)``."""
    a = int64(0)
    b = int64(0)
    c = int64(0)
    for e in range(count):
        rec = start + 6 * (count - 1 - e)
        u = uint64(k)
        q = int64((_mulhi(u, uint64(geo[rec + 4])) + u) >> uint64(geo[rec + 5]))
        r = k - q * geo[rec]
        a += r * geo[rec + 1]
        b += r * geo[rec + 2]
        c += r * geo[rec + 3]
        k = q
    return a, b, c


# ------------------------------------------------------------------------ gathers


@cuda.jit(device=True, inline=True)
def _position(indices, at, n, mode, bad):
    """The index at *at* resolved by *mode*, or -1 when it is out of range (under
    raise, the flag is set as well)."""
    i = _resolve(int64(indices[at]), n, mode)
    if i < 0 and mode == _cpu_gather.MODE_RAISE:
        bad[0] = 1
    return i


@kernel
def take_along(base, geo, indices, n, mode, fill, bad, out):
    """``take_along_axis``: output ``(q, j, r)`` (outer, along the axis, rest; flat in
    C order) reads ``x[q, resolve(indices[q, j, r]), r]``. *geo* is ``[x offset,
    no, nr, x axis stride, indices axis stride, (divisor of rest's size), (divisor
    of m), outer records (size, x stride, indices stride, magic, shift), rest
    records]``; broadcast dimensions have stride 0."""
    o = cuda.grid(1)
    if o >= out.size:
        return
    no = geo[1]
    nr = geo[2]
    qj, r = _divmod(o, geo, 5)
    q, j = _divmod(qj, geo, 8)
    xq, iq = _unravel2(q, geo, 11, no)
    xr, ir = _unravel2(r, geo, 11 + 5 * no, nr)
    i = _position(indices, iq + j * geo[4] + ir, n, mode, bad)
    if i < 0:
        out[o] = fill
        return
    out[o] = base[geo[0] + xq + xr + i * geo[3]]


@kernel
def gather_tuples(base, geo, indices, q, bad, out):
    """``gather_nd``: output ``(row, r)`` reads ``x[batch(row), t_0, ..., t_q-1, r]``
    where ``t`` is the tuple ``indices[row]`` (C-contiguous, q per row), each
    component resolved against its dimension. *geo* is ``[x offset, nb, nr,
    (divisor of rest's size), (divisor of m, the rows per batch), batch dims,
    rest dims (size, stride, magic, shift), then q pairs (size, stride)]``."""
    o = cuda.grid(1)
    if o >= out.size:
        return
    nb = geo[1]
    nr = geo[2]
    row, r = _divmod(o, geo, 3)
    b, _ = _divmod(row, geo, 6)
    start = 9 + 4 * (nb + nr)
    src = geo[0] + _unravel(b, geo, 9, nb) + _unravel(r, geo, 9 + 4 * nb, nr)
    for k in range(q):
        d = geo[start + 2 * k]
        i = _position(indices, row * q + k, d, _cpu_gather.MODE_RAISE, bad)
        if i < 0:
            return
        src += i * geo[start + 2 * k + 1]
    out[o] = base[src]


# ------------------------------------------------------------------------ scatter


@cuda.jit(device=True, inline=True)
def _apply(acc, v, op):
    """One update *v* combined into *acc* (the CPU kernel's rules)."""
    if op == OP_ADD:
        return acc + v
    if op == OP_MUL:
        return acc * v
    if op == OP_MAX:
        if v > acc or v != v:
            return v
        return acc
    if op == OP_MIN:
        if v < acc or v != v:
            return v
        return acc
    return v


@cuda.jit(device=True, inline=True)
def _lane_start(lane, geo):
    """(destination, index, update) offsets of scatter lane *lane* (the geometry of
    :func:`scatter_lanes`)."""
    no = geo[1]
    q, r = _divmod(lane, geo, 8)
    oq, iq, uq = _unravel3(q, geo, 11, no)
    orr, ir, ur = _unravel3(r, geo, 11 + 6 * no, geo[2])
    return oq + orr, iq + ir, geo[0] + uq + ur


@cuda.jit(device=True, inline=True)
def _heads_run(keys, s):
    """Whether sorted position *s* starts a run of equal destinations (-1: none)."""
    key = keys[s]
    return key >= 0 and (s == 0 or keys[s - 1] != key)


@kernel
def scatter_lanes(out, geo, indices, upd, n, op, mode, bad):
    """A thread per lane ``(q, r)`` of ``indices`` (outside the axis) applies the m
    updates of its lane in order along the axis to the C-contiguous *out* (the
    working dtype, holding ``x``). *geo* is ``[updates offset, no, nr, m, out axis
    stride, indices axis stride, updates axis stride, lanes, (divisor of rest's
    size), outer records (size, out, indices, updates strides, magic, shift), rest
    records]``."""
    lane = cuda.grid(1)
    if lane >= geo[7]:
        return
    dst, isrc, usrc = _lane_start(lane, geo)
    for j in range(geo[3]):
        i = _position(indices, isrc + j * geo[5], n, mode, bad)
        if i >= 0:
            d = dst + i * geo[4]
            out[d] = _apply(out[d], upd[usrc + j * geo[6]], op)


@kernel
def scatter_keys(geo, indices, n, mode, bad, keys):
    """Each update's destination in the C-contiguous output: update ``p`` (flat
    ``(q, j, r)`` over the updates' shape) goes to ``out[q, resolve(indices[q, j,
    r]), r]``, or nowhere (-1) when its index is out of range. *geo* is ``[m, out
    axis stride, indices axis stride, no, nr, (divisor of rest's size), (divisor
    of m), outer records (size, out stride, indices stride, magic, shift), rest
    records]``."""
    p = cuda.grid(1)
    if p >= keys.size:
        return
    no = geo[3]
    qj, r = _divmod(p, geo, 5)
    q, j = _divmod(qj, geo, 8)
    oq, iq = _unravel2(q, geo, 11, no)
    orr, ir = _unravel2(r, geo, 11 + 5 * no, geo[4])
    i = _position(indices, iq + j * geo[2] + ir, n, mode, bad)
    if i < 0:
        keys[p] = -1
        return
    keys[p] = oq + orr + i * geo[1]


@kernel
def sort_tiles(keys, order, keys_out, order_out):
    """The first passes of the merge sort in one: each block sorts its tile of
    ``blockDim`` keys (a power of two, at most ``MAX_BLOCK``) in shared memory, an
    element's place being the count of the tile's keys smaller than its own or
    equal and before it (stable)."""
    tile = cuda.shared.array(MAX_BLOCK, int64)
    i = cuda.threadIdx.x
    width = cuda.blockDim.x
    start = cuda.blockIdx.x * width
    t = start + i
    total = keys.size
    count = min(width, total - start)
    if i < count:
        tile[i] = keys[t]
    cuda.syncthreads()
    if i < count:
        key = tile[i]
        place = 0
        for j in range(count):
            other = tile[j]
            if other < key or (other == key and j < i):
                place += 1
        keys_out[start + place] = key
        order_out[start + place] = order[t]


@kernel
def merge_pass(keys, vals, width, keys_out, vals_out):
    """One pass of a stable merge sort by key: runs of *width* (a power of two)
    merged in pairs. Each element's place is its position in its run plus the
    count of the other run's elements before it: keys smaller than its own (from
    the right run: smaller or equal, so equal keys keep the left run first)."""
    t = cuda.grid(1)
    total = keys.size
    if t >= total:
        return
    lo = t - (t & (2 * width - 1))
    mid = min(lo + width, total)
    hi = min(lo + 2 * width, total)
    key = keys[t]
    if t < mid:  # left run: count the right run's keys < key
        a = mid
        b = hi
        while a < b:
            c = (a + b) >> 1
            if keys[c] < key:
                a = c + 1
            else:
                b = c
        place = t + (a - mid)
    else:  # right run: count the left run's keys <= key
        a = lo
        b = mid
        while a < b:
            c = (a + b) >> 1
            if keys[c] <= key:
                a = c + 1
            else:
                b = c
        place = lo + (t - mid) + (a - lo)
    keys_out[place] = key
    vals_out[place] = vals[t]


@kernel
def scatter_runs(out, geo, keys, order, upd, op):
    """A thread per run of equal destinations in the sorted *keys* applies its
    updates (``order`` gives their positions, in C order of ``indices``) to
    ``out[key]``. *geo* is ``[updates offset, nd, dims of indices' shape with the
    updates' strides (size, stride, magic, shift)]``."""
    s = cuda.grid(1)
    if s >= keys.size or not _heads_run(keys, s):
        return
    key = keys[s]
    acc = out[key]
    e = s
    while e < keys.size and keys[e] == key:
        acc = _apply(acc, upd[geo[0] + _unravel(order[e], geo, 2, geo[1])], op)
        e += 1
    out[key] = acc


@kernel
def scatter_shared_runs(out, geo, keys, order, upd, op):
    """Lanes sharing one index pattern: thread ``t = (s, lane)`` (lanes fastest)
    applies, if sorted position ``s`` heads a run of equal destinations, that
    run's updates of its lane in order to ``out[key + lane]``. *keys* are the
    destinations' offsets along the axis, *order* the sorted positions along it;
    *geo* is ``[updates offset, updates axis stride, nd, (divisor of the lanes),
    lane records (size, out stride, updates stride, magic, shift)]``."""
    s, lane = _divmod(cuda.grid(1), geo, 3)
    if s >= keys.size or not _heads_run(keys, s):
        return
    key = keys[s]
    o_lane, u_lane = _unravel2(lane, geo, 6, geo[2])
    base = geo[0] + u_lane
    acc = out[o_lane + key]
    e = s
    while e < keys.size and keys[e] == key:
        acc = _apply(acc, upd[base + order[e] * geo[1]], op)
        e += 1
    out[o_lane + key] = acc


@cuda.jit(device=True, inline=True)
def _apply_complex(acc, v, op):
    """:func:`_apply` for complex numbers (no max or min: they have no order)."""
    if op == OP_ADD:
        return acc + v
    if op == OP_MUL:
        return acc * v
    return v


@kernel
def scatter_lanes_complex(out, geo, indices, upd, n, op, mode, bad):
    """:func:`scatter_lanes` of complex numbers (Numba types every branch, and
    complex numbers have no ``>``)."""
    lane = cuda.grid(1)
    if lane >= geo[7]:
        return
    dst, isrc, usrc = _lane_start(lane, geo)
    for j in range(geo[3]):
        i = _position(indices, isrc + j * geo[5], n, mode, bad)
        if i >= 0:
            d = dst + i * geo[4]
            out[d] = _apply_complex(out[d], upd[usrc + j * geo[6]], op)


@kernel
def scatter_runs_complex(out, geo, keys, order, upd, op):
    """:func:`scatter_runs` of complex numbers."""
    s = cuda.grid(1)
    if s >= keys.size or not _heads_run(keys, s):
        return
    key = keys[s]
    acc = out[key]
    e = s
    while e < keys.size and keys[e] == key:
        acc = _apply_complex(acc, upd[geo[0] + _unravel(order[e], geo, 2, geo[1])], op)
        e += 1
    out[key] = acc


@kernel
def scatter_shared_runs_complex(out, geo, keys, order, upd, op):
    """:func:`scatter_shared_runs` of complex numbers."""
    s, lane = _divmod(cuda.grid(1), geo, 3)
    if s >= keys.size or not _heads_run(keys, s):
        return
    key = keys[s]
    o_lane, u_lane = _unravel2(lane, geo, 6, geo[2])
    base = geo[0] + u_lane
    acc = out[o_lane + key]
    e = s
    while e < keys.size and keys[e] == key:
        acc = _apply_complex(acc, upd[base + order[e] * geo[1]], op)
        e += 1
    out[o_lane + key] = acc


@kernel
def flat_tuples(indices, geo, q, bad, out):
    """``gather_nd``'s tuples as flat indices over their dimensions (C order): a
    thread per tuple; *geo* is q pairs (size, C stride). A component out of range
    sets the flag."""
    row = cuda.grid(1)
    if row >= out.size:
        return
    flat = int64(0)
    for k in range(q):
        i = _resolve(int64(indices[row * q + k]), geo[2 * k], _cpu_gather.MODE_RAISE)
        if i < 0:
            bad[0] = 1
            i = 0
        flat += i * geo[2 * k + 1]
    out[row] = flat


@kernel
def fill(out, value):
    """``out[k] = value``."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = value


@kernel
def pad_leading(src, geo, out):
    """``out`` (flat, C order over a shape) = *src* (C-contiguous over a leading part
    of that shape) where it reaches, else 0. *geo* is ``[ndim, records (size,
    src stride, magic, shift), the leading part's sizes]``."""
    k = cuda.grid(1)
    if k >= out.size:
        return
    nd = geo[0]
    off = int64(0)
    rest = k
    for e in range(nd):
        dim = nd - 1 - e
        rec = 1 + 4 * dim
        u = uint64(rest)
        q = int64((_mulhi(u, uint64(geo[rec + 2])) + u) >> uint64(geo[rec + 3]))
        c = rest - q * geo[rec]
        if c >= geo[1 + 4 * nd + dim]:
            out[k] = 0
            return
        off += c * geo[rec + 1]
        rest = q
    out[k] = src[off]


@kernel
def iota(out):
    """``out[k] = k``."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = k


# ------------------------------------------------------- the gradient of scatter
#
# ``keys[p]`` is update p's flat destination (``scatter_keys``), ``g``, ``x`` and
# the forward's result are C-contiguous and flat; each kernel is a thread per
# element of its output and computes what the NumPy path's ``grad.scatter``
# computes with NumPy, in the same order of operations.


@cuda.jit(device=True, inline=True)
def _same(a, b):
    """a == b, NaN equal to NaN."""
    return a == b or (a != a and b != b)


@kernel
def kept_x(g, last, out):
    """reduce=None: ``x``'s element keeps its gradient where no update wrote."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = g[k] if last[k] < 0 else 0


@kernel
def won_update(g, last, keys, out):
    """reduce=None: an update gets its destination's gradient if it was the last."""
    p = cuda.grid(1)
    if p < out.size:
        key = keys[p]
        out[p] = g[key] if last[key] == p else 0


@kernel
def at_keys(a, keys, out):
    """``out[p] = a[keys[p]]``: *a* read at each update's destination."""
    p = cuda.grid(1)
    if p < out.size:
        out[p] = a[keys[p]]


@kernel
def same_mask(a, b, out):
    """``out[k] = 1`` where ``a[k]`` is ``b[k]`` (NaN is NaN), else 0."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = 1 if _same(a[k], b[k]) else 0


@kernel
def same_at_keys(u, result, keys, out):
    """``out[p] = 1`` where update p is the result at its destination."""
    p = cuda.grid(1)
    if p < out.size:
        out[p] = 1 if _same(u[p], result[keys[p]]) else 0


@kernel
def shares_x(g, from_x, count, out):
    """max/min: ``g / count`` where ``x``'s element is the result, else 0."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = g[k] / count[k] if from_x[k] != 0 else 0


@kernel
def shares_updates(g, from_u, count, keys, out):
    """max/min: each update equal to the result gets its destination's share."""
    p = cuda.grid(1)
    if p < out.size:
        key = keys[p]
        out[p] = g[key] / count[key] if from_u[p] != 0 else 0


@kernel
def times(a, b, out):
    """``out[k] = a[k] * b[k]``."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = a[k] * b[k]


@kernel
def product_grads(g, x, keys, order, u, one, out):
    """reduce="mul": a thread per run of equal destinations (*keys* sorted, *order*
    the updates' positions) gives each update ``g * x * (the product of the run's
    other updates)`` at its destination: a prefix product forward and a suffix
    product backward, no division (the CPU's ``segment_exclusive_products``)."""
    s = cuda.grid(1)
    total = keys.size
    if s >= total:
        return
    if not _heads_run(keys, s):
        return
    key = keys[s]
    e = s
    acc = one
    while e < total and keys[e] == key:
        out[order[e]] = acc
        acc = acc * u[order[e]]
        e += 1
    acc = one
    scale = g[key] * x[key]
    while e > s:
        e -= 1
        p = order[e]
        out[p] = scale * (out[p] * acc)
        acc = acc * u[p]


@kernel
def complex_product_grads(g, x, keys, order, u, one, out, products):
    """Complex ``reduce="mul"``: a thread per run of equal destinations gives each
    update ``g * conj((x * before) * after)`` (``before``, ``after``: the products
    of the run's updates before and after it, each from *one* in the NumPy
    path's order) and writes the run's product to ``products[key]``."""
    s = cuda.grid(1)
    total = keys.size
    if s >= total:
        return
    if not _heads_run(keys, s):
        return
    key = keys[s]
    e = s
    acc = one
    while e < total and keys[e] == key:
        out[order[e]] = acc
        acc = acc * u[order[e]]
        e += 1
    products[key] = acc
    running = one
    while e > s:
        e -= 1
        p = order[e]
        out[p] = g[key] * ((x[key] * out[p]) * running).conjugate()
        running = running * u[p]


@kernel
def times_conj(g, products, out):
    """``out[k] = g[k] * conj(products[k])``."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = g[k] * products[k].conjugate()


@kernel
def combine_parts(re, im, out):
    """``out[k] = re[k] + 1j * im[k]``, the parts as they are."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = complex(re[k], im[k])


# ------------------------------------------------------------ compile-only check


def signatures() -> Iterator[tuple[str, Any, tuple]]:
    """(name, Python function, argument types) of every specialisation the
    launchers in :mod:`axisops.cuda.gather` and :mod:`axisops.cuda.scatter` make."""
    from numba import from_dtype, types

    from ._signatures import DTYPES

    def arr(dtype):
        return types.Array(from_dtype(np.dtype(dtype)), 1, "C")

    i64, geo = types.int64, arr(np.int64)
    values = [*DTYPES, np.complex64, np.complex128]
    for dt in values:
        name = np.dtype(dt).name
        x, v = arr(dt), from_dtype(np.dtype(dt))
        for index in (np.int64, np.int32, np.uint32):
            iname = np.dtype(index).name
            yield (f"take_along {name} {iname}", take_along.py_func,
                   (x, geo, arr(index), i64, i64, v, arr(np.int64), x))
            yield (f"gather_tuples {name} {iname}", gather_tuples.py_func,
                   (x, geo, arr(index), i64, arr(np.int64), x))
        work = np.float32 if dt == np.float16 else dt
        complex_ = np.dtype(dt).kind == "c"
        lanes_kernel = scatter_lanes_complex if complex_ else scatter_lanes
        runs_kernel = scatter_runs_complex if complex_ else scatter_runs
        for w in {work, dt}:  # float16: float32 with a reduce, moved as itself without
            for index in (np.int64, np.int32):
                yield (f"scatter_lanes {name}->{np.dtype(w).name} {np.dtype(index).name}",
                       lanes_kernel.py_func,
                       (arr(w), geo, arr(index), x, i64, i64, i64, arr(np.int64)))
            yield (f"scatter_runs {name}->{np.dtype(w).name}", runs_kernel.py_func,
                   (arr(w), geo, geo, geo, x, i64))
            shared_kernel = scatter_shared_runs_complex if complex_ else scatter_shared_runs
            yield (f"scatter_shared_runs {name}->{np.dtype(w).name}", shared_kernel.py_func,
                   (arr(w), geo, geo, geo, x, i64))
    for index in (np.int64, np.int32, np.uint32):
        yield (f"scatter_keys {np.dtype(index).name}", scatter_keys.py_func,
               (geo, arr(index), i64, i64, arr(np.int64), geo))
    yield "merge_pass", merge_pass.py_func, (geo, geo, i64, geo, geo)
    yield "sort_tiles", sort_tiles.py_func, (geo, geo, geo, geo)
    for index in (np.int64, np.int32, np.uint32):
        yield (f"flat_tuples {np.dtype(index).name}", flat_tuples.py_func,
               (arr(index), geo, i64, arr(np.int64), geo))
    for dt in values:
        yield f"fill {np.dtype(dt).name}", fill.py_func, (arr(dt), from_dtype(np.dtype(dt)))
    yield "fill int64", fill.py_func, (geo, types.int64)
    for c, p in ((np.complex64, np.float32), (np.complex128, np.float64)):  # complex scatter
        cn, ca = np.dtype(c).name, arr(c)
        yield (f"complex_product_grads {cn}", complex_product_grads.py_func,
               (ca, ca, geo, geo, ca, from_dtype(np.dtype(c)), ca, ca))
        yield f"times_conj {cn}", times_conj.py_func, (ca, ca, ca)
        yield f"combine_parts {cn}", combine_parts.py_func, (arr(p), arr(p), ca)
        yield f"pad_leading {cn}", pad_leading.py_func, (ca, geo, ca)
        yield f"cast {cn}->{cn}", _cast.py_func, (ca, ca)
    for w in (np.float32, np.float64):  # the gradient of scatter, in its working dtype
        wn, work = np.dtype(w).name, arr(w)
        yield f"cast {wn}->{wn}", _cast.py_func, (work, work)
        yield f"kept_x {wn}", kept_x.py_func, (work, geo, work)
        yield f"won_update {wn}", won_update.py_func, (work, geo, geo, work)
        yield f"at_keys {wn}", at_keys.py_func, (work, geo, work)
        yield f"shares_x {wn}", shares_x.py_func, (work, work, work, work)
        yield f"shares_updates {wn}", shares_updates.py_func, (work, work, work, geo, work)
        yield f"times {wn}", times.py_func, (work, work, work)
        yield f"pad_leading {wn}", pad_leading.py_func, (work, geo, work)
        yield (f"product_grads {wn}", product_grads.py_func,
               (work, work, geo, geo, work, from_dtype(np.dtype(w)), work))
        for dt in DTYPES:
            xa = arr(dt)
            yield f"same_mask {np.dtype(dt).name}->{wn}", same_mask.py_func, (xa, xa, work)
            yield (f"same_at_keys {np.dtype(dt).name}->{wn}", same_at_keys.py_func,
                   (xa, xa, geo, work))
    # conversions (``scatter.as_dtype``, one strided pass): updates to x's dtype,
    # g and x of the gradients to their working dtype (real or complex)
    for src in [*DTYPES, np.complex64]:
        for dst in [*DTYPES, np.complex64, np.complex128]:
            if np.can_cast(src, dst, "same_kind") and src != dst:
                yield (f"copy_c {np.dtype(src).name}->{np.dtype(dst).name}", _copy_c.py_func,
                       (arr(src), geo, arr(dst)))
    for src in DTYPES:  # contiguous values to the gradients' working dtypes (kernels.cast)
        for dst in (np.float32, np.float64):
            if src != dst:
                yield (f"cast {np.dtype(src).name}->{np.dtype(dst).name}", _cast.py_func,
                       (arr(src), arr(dst)))
    yield "iota", iota.py_func, (geo,)

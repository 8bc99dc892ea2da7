"""CUDA kernels of the reductions and scans (numba-cuda), over the CPU path's views.

A kernel reads its input as a flat base, an element offset and a *geometry*: a
small int64 device array made once per plan (one argument instead of a dozen,
and nothing to copy per call). Reductions use ``axisops._layout.ReductionView``'s:
``[offset, inner, inner_stride, n, n_stride, no, nr, (inner divisor), (n
divisor), outer dims, reduced dims]``; output ``o`` is ``(outer index o // inner,
lane o % inner)``, in the view's order, and the reduced block is walked in rows
of ``n``. Scans use ``ScanView``'s: ``[offset, inner, inner_stride, n, n_stride,
no, nm, (inner divisor), (mid divisor), (lanes divisor), outer dims, mid dims]``;
their output is C-contiguous ``(outer, n, mid, inner)``. A divisor is ``(d,
magic, shift)`` and a dimension ``(size, stride, magic, shift)``: every division
is a multiply and a shift (``_divmod``), none a 64-bit division. Offsets are
int64 throughout.

Two loop orders, by layout, as on the CPU:

* *rows* (outputs adjacent in memory, the reduced axis strided): a thread per
  output walks its elements in order, so neighbouring threads read neighbouring
  addresses;
* *lanes* (the reduced elements adjacent): a block per output, its threads
  striding over the elements and combining their values in a tree in shared
  memory (no warp shuffles: Numba's simulator, which CI runs, has none).

A long reduced axis is cut into chunks of a fixed length (a second grid
dimension); each chunk writes a partial and a *finish* kernel combines them in
chunk order. Scans cut a long axis into tiles the same way: tile totals, then a
scan of the totals per lane, then each tile scanned from its carry-in. Lengths
depend only on the shape, so every run gives the same bits. Float products keep
one chunk (index order), as on the CPU: partial products overflow and underflow
on their own.

Arg-reductions and cummax/cummin compare values directly: a NaN beats any number
(between NaNs, and between equals, the smaller index wins for reductions; in
scans the later element takes over, PyTorch's rule), and -0.0 equals +0.0.
"""
from __future__ import annotations

from numba import cuda, int64, types, uint64

from ..kernels import gather as _cpu_gather
from ..kernels import scan as _cpu_scan
from ._jit import kernel

#: Largest block of a lanes kernel (its shared memory is sized for it).
MAX_BLOCK = 256
OP_SUM, OP_PROD, OP_LOGADDEXP = 0, 1, 2
#: The NaN-skipping sum and product (nansum, nanprod, nancumsum, nancumprod): a NaN
#: element (either part, for complex numbers) reads as the identity.
OP_NANSUM, OP_NANPROD = 3, 4
#: The gathers' mode codes: the CPU kernels'.
MODE_RAISE, MODE_WRAP, MODE_CLIP, MODE_FILL = (_cpu_gather.MODE_RAISE, _cpu_gather.MODE_WRAP,
                                               _cpu_gather.MODE_CLIP, _cpu_gather.MODE_FILL)
#: Where the dimension records start in a reduction's and a scan's geometry.
RED_DIMS, SCAN_DIMS = 13, 16

# ----------------------------------------------------------------- device helpers


@cuda.jit(device=True, inline=True)
def _mulhi(a, b):
    """The high 64 bits of the uint64 product a * b, from 32-bit halves (libdevice's
    ``umul64hi`` has no simulator version)."""
    a_lo = a & uint64(0xFFFFFFFF)
    a_hi = a >> uint64(32)
    b_lo = b & uint64(0xFFFFFFFF)
    b_hi = b >> uint64(32)
    hi_lo = a_hi * b_lo
    cross = ((a_lo * b_lo) >> uint64(32)) + (hi_lo & uint64(0xFFFFFFFF)) + a_lo * b_hi
    return a_hi * b_hi + (hi_lo >> uint64(32)) + (cross >> uint64(32))


@cuda.jit(device=True, inline=True)
def _divmod(n, geo, rec):
    """(n // d, n % d) for 0 <= n < 2**63 by the divisor record ``geo[rec:rec + 3]``
    = (d, magic, shift) (``axisops.cuda._device.divisor``): a multiply and a shift,
    no 64-bit division (a long software routine on a GPU)."""
    u = uint64(n)
    q = int64((_mulhi(u, uint64(geo[rec + 1])) + u) >> uint64(geo[rec + 2]))
    return q, n - q * geo[rec]


@cuda.jit(device=True, inline=True)
def _unravel(k, geo, start, count):
    """Element offset of flat index *k* over ``count`` dimensions whose records
    ``(size, stride, magic, shift)`` start at ``geo[start]`` (C order)."""
    off = 0
    for e in range(count):
        rec = start + 4 * (count - 1 - e)
        u = uint64(k)
        q = int64((_mulhi(u, uint64(geo[rec + 2])) + u) >> uint64(geo[rec + 3]))
        off += (k - q * geo[rec]) * geo[rec + 1]
        k = q
    return off


@cuda.jit(device=True, inline=True)
def _combine(acc, v, op):
    if op == OP_PROD or op == OP_NANPROD:
        return acc * v
    return acc + v


@cuda.jit(device=True, inline=True)
def _element(v, zero, ident, op):
    """Element *v* in the accumulator's dtype (subtracting *zero* converts it and,
    unlike adding it, keeps a -0.0: a product's sign); under a NaN-skipping op a
    NaN (``v != v``: either part of a complex number) is the identity *ident*
    instead, so that it is skipped in the same pass."""
    if op >= OP_NANSUM and v != v:
        return ident
    return v - zero


#: The CPU kernel's log-add-exp (PyTorch's rule), compiled for the device: one
#: definition, so both paths treat NaN and infinities alike.
_log_add_exp = cuda.jit(device=True, inline=True)(_cpu_scan._log_add_exp.py_func)


@cuda.jit(device=True, inline=True)
def _beats(v, i, bv, bi, greater, last, skip):
    """Whether (v, i) wins over (bv, bi) in an arg-reduction: i < 0 is no candidate,
    nor is a NaN with *skip* (nanmax, nanargmax, ...); NaN first, then the greater
    (smaller) value, then the smaller index (the greater with *last*)."""
    if i < 0 or (skip and v != v):
        return False
    if bi < 0:
        return True
    v_nan = v != v
    b_nan = bv != bv
    if v_nan or b_nan:
        if v_nan and b_nan:
            return i > bi if last else i < bi
        return v_nan
    if v == bv:
        return i > bi if last else i < bi
    if greater:
        return v > bv
    return v < bv


@cuda.jit(device=True, inline=True)
def _takes_over(v, bv, greater):
    """cummax/cummin: whether element v takes the running value bv over (PyTorch's
    rule: ties and NaNs pass to the later element; only a NaN beats a NaN)."""
    if v != v:
        return True
    if bv != bv:
        return False
    if greater:
        return v >= bv
    return v <= bv


@cuda.jit(device=True, inline=True)
def _reduced_offset(o, c, geo, chunk_len):
    """(offset of output o's reduced block, first flat t, end t) of chunk c."""
    no = geo[5]
    nr = geo[6]
    q, i = _divmod(o, geo, 7)
    p = geo[0] + _unravel(q, geo, RED_DIMS, no) + i * geo[2]
    total = geo[3]
    for d in range(nr):
        total *= geo[RED_DIMS + 4 * no + 4 * d]
    t0 = c * chunk_len
    return p, t0, min(total, t0 + chunk_len)


# ----------------------------------------------------------------- reductions: rows


@kernel
def value_rows(base, geo, chunk_len, op, zero, ident, partial):
    """Sums or products (``op``; NaN skipped by OP_NANSUM, OP_NANPROD) of chunk ``blockIdx.y`` of each output, a thread per
    output, into ``partial[c, o]``; *zero* and the identity *ident* are scalars of
    the accumulator dtype (adding *zero* converts an element to it)."""
    o = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    if o >= partial.shape[1]:
        return
    p, t, t1 = _reduced_offset(o, c, geo, chunk_len)
    n = geo[3]
    step = geo[4]  # along n, read once (loads of geo could alias base)
    no = geo[5]
    nr = geo[6]
    acc = ident
    while t < t1:
        r, j = _divmod(t, geo, 10)
        q = p + _unravel(r, geo, RED_DIMS + 4 * no, nr)
        j1 = min(n, j + (t1 - t))
        for jj in range(j, j1):
            acc = _combine(acc, _element(base[q + jj * step], zero, ident, op), op)
        t += j1 - j
    partial[c, o] = acc


@kernel
def extreme_rows(base, geo, chunk_len, greater, last, skip, part_v, part_i):
    """The best (value, flat index) of chunk ``blockIdx.y`` of each output, a thread
    per output, into ``part_v[c, o]``, ``part_i[c, o]`` (-1: an empty chunk, or with
    *skip* one of NaN only)."""
    o = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    if o >= part_v.shape[1]:
        return
    p, t, t1 = _reduced_offset(o, c, geo, chunk_len)
    n = geo[3]
    step = geo[4]  # along n, read once (loads of geo could alias base)
    no = geo[5]
    nr = geo[6]
    bv = base[p]
    bi = -1
    while t < t1:
        r, j = _divmod(t, geo, 10)
        q = p + _unravel(r, geo, RED_DIMS + 4 * no, nr)
        j1 = min(n, j + (t1 - t))
        for jj in range(j, j1):
            v = base[q + jj * step]
            if _beats(v, r * n + jj, bv, bi, greater, last, skip):
                bv = v
                bi = r * n + jj
        t += j1 - j
    part_v[c, o] = bv
    part_i[c, o] = bi


# ---------------------------------------------------------------- reductions: lanes


@kernel
def value_lanes(base, geo, chunk_len, op, zero, ident, partial):
    """Sums or products as :func:`value_rows`, a block per (output, chunk): its
    threads stride over the chunk, then add up in a tree in shared memory."""
    o = cuda.blockIdx.x
    c = cuda.blockIdx.y
    tid = cuda.threadIdx.x
    size = cuda.blockDim.x
    shared = cuda.shared.array(MAX_BLOCK, partial.dtype)
    p, t0, t1 = _reduced_offset(o, c, geo, chunk_len)
    n = geo[3]
    step = geo[4]  # along n, read once (loads of geo could alias base)
    no = geo[5]
    nr = geo[6]
    acc = ident
    t = t0 + tid
    if t < t1:
        r, j = _divmod(t, geo, 10)
        q = p + _unravel(r, geo, RED_DIMS + 4 * no, nr)
        while t < t1:
            acc = _combine(acc, _element(base[q + j * step], zero, ident, op), op)
            t += size
            j += size
            if j >= n and t < t1:
                r, j = _divmod(t, geo, 10)
                q = p + _unravel(r, geo, RED_DIMS + 4 * no, nr)
    shared[tid] = acc
    cuda.syncthreads()
    half = size // 2
    while half > 0:  # size is a power of two
        if tid < half:
            shared[tid] = _combine(shared[tid], shared[tid + half], op)
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        partial[c, o] = shared[0]


@kernel
def extreme_lanes(base, geo, chunk_len, greater, last, skip, part_v, part_i):
    """Arg-reductions as :func:`extreme_rows`, a block per (output, chunk), the
    threads' winners compared in a tree in shared memory."""
    o = cuda.blockIdx.x
    c = cuda.blockIdx.y
    tid = cuda.threadIdx.x
    size = cuda.blockDim.x
    shared_v = cuda.shared.array(MAX_BLOCK, part_v.dtype)
    shared_i = cuda.shared.array(MAX_BLOCK, types.int64)
    p, t0, t1 = _reduced_offset(o, c, geo, chunk_len)
    n = geo[3]
    step = geo[4]  # along n, read once (loads of geo could alias base)
    no = geo[5]
    nr = geo[6]
    bv = base[p]
    bi = -1
    t = t0 + tid
    if t < t1:
        r, j = _divmod(t, geo, 10)
        q = p + _unravel(r, geo, RED_DIMS + 4 * no, nr)
        while t < t1:
            v = base[q + j * step]
            if _beats(v, t, bv, bi, greater, last, skip):
                bv = v
                bi = t
            t += size
            j += size
            if j >= n and t < t1:
                r, j = _divmod(t, geo, 10)
                q = p + _unravel(r, geo, RED_DIMS + 4 * no, nr)
    shared_v[tid] = bv
    shared_i[tid] = bi
    cuda.syncthreads()
    half = size // 2
    while half > 0:
        if tid < half:
            if _beats(shared_v[tid + half], shared_i[tid + half], shared_v[tid],
                      shared_i[tid], greater, last, skip):
                shared_v[tid] = shared_v[tid + half]
                shared_i[tid] = shared_i[tid + half]
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        part_v[c, o] = shared_v[0]
        part_i[c, o] = shared_i[0]



# ------------------------------------------------------------- reductions: finishing


@kernel
def value_finish(partial, op, count, mean, out_geo, out):
    """Output o: its chunks' partials combined in chunk order (divided by *count*
    for a mean), stored at its place in the C-ordered result *out* (flat)."""
    o = cuda.grid(1)
    if o >= partial.shape[1]:
        return
    acc = partial[0, o]
    for c in range(1, partial.shape[0]):
        acc = _combine(acc, partial[c, o], op)
    pos = _unravel(o, out_geo, 1, out_geo[0])
    if mean:
        out[pos] = acc / count
    else:
        out[pos] = acc


@kernel
def extreme_finish(part_v, part_i, greater, last, skip, want_index, nan, missing, out_geo,
                   bad, out):
    """Output o: the best of its chunks; its flat index, or its value with a NaN as
    *nan* and a zero as +0.0 (the CPU path's bits). With *skip* an output of NaN
    only (no candidate) gets *missing* (an index) or *nan* and lowers ``bad[0]`` to
    its position in the result (``atomic.min``: the first in C order)."""
    o = cuda.grid(1)
    if o >= part_v.shape[1]:
        return
    bv = part_v[0, o]
    bi = part_i[0, o]
    for c in range(1, part_v.shape[0]):
        if _beats(part_v[c, o], part_i[c, o], bv, bi, greater, last, skip):
            bv = part_v[c, o]
            bi = part_i[c, o]
    pos = _unravel(o, out_geo, 1, out_geo[0])
    if bi < 0:  # only NaN (skip): no candidate
        cuda.atomic.min(bad, 0, pos)
        if want_index:
            out[pos] = missing
        else:
            out[pos] = nan
    elif want_index:
        out[pos] = bi
    elif bv != bv:
        out[pos] = nan
    elif bv == 0:
        out[pos] = bv - bv  # +0.0 for a float zero of either sign; 0 for integers
    else:
        out[pos] = bv


# ------------------------------------------------------------------------- scans


@cuda.jit(device=True, inline=True)
def _lane(lane, geo):
    """(input offset of lane's first element, output offset of it, output step along
    the axis) for a ScanView geometry."""
    inner = geo[1]
    no = geo[5]
    nm = geo[6]
    mid = geo[10]
    n = geo[3]
    q, i = _divmod(lane, geo, 7)
    ou, mi = _divmod(q, geo, 10)
    src = geo[0] + _unravel(ou, geo, SCAN_DIMS, no) + _unravel(mi, geo, SCAN_DIMS + 4 * no, nm) \
        + i * geo[2]
    dst = (ou * n * mid + mi) * inner + i
    return src, dst, mid * inner


@kernel
def scan_values(base, geo, tile_len, phase, op, exclusive, reverse, zero, ident, carry, out):
    """cumsum or cumprod (``op``) of any numeric dtype, complex included, a thread
    per (lane, tile). Phase 0: tile totals into ``carry[tile, lane]``; phase 1 (a
    thread per lane): those turned into each tile's carry-in; phase 2: each tile
    scanned from its carry-in into *out* (stored in out's dtype); ``reverse``
    walks the axis backwards, ``exclusive`` stores before adding."""
    lanes = carry.shape[1]
    tiles = carry.shape[0]
    k = cuda.grid(1)
    if phase == 1:
        if k >= lanes:
            return
        acc = carry[0, k]
        for c in range(1, tiles):
            v = carry[c, k]
            carry[c, k] = acc
            acc = _combine(acc, v, op)
        return
    if k >= lanes * tiles:
        return
    c, lane = _divmod(k, geo, 13)
    if phase == 0 and c == tiles - 1:
        return
    n = geo[3]
    step = geo[4]  # along n, read once (loads of geo could alias base)
    src, dst, out_step = _lane(lane, geo)
    s0 = c * tile_len
    s1 = min(n, s0 + tile_len)
    acc = ident
    if phase == 2 and c > 0:
        acc = carry[c, lane]
    for s in range(s0, s1):
        j = n - 1 - s if reverse else s
        v = _element(base[src + j * step], zero, ident, op)
        if phase == 2 and exclusive:
            out[dst + j * out_step] = acc
        acc = _combine(acc, v, op)
        if phase == 2 and not exclusive:
            out[dst + j * out_step] = acc
    if phase == 0:
        carry[c, lane] = acc


@kernel
def scan_logaddexp(base, geo, tile_len, phase, op, exclusive, reverse, zero, ident, carry,
                   out):
    """logcumsumexp as :func:`scan_values` (floats only: a kernel of its own, since
    Numba types every branch and log-add-exp has no complex version); *op* and
    *exclusive* are unused, kept so both kernels take the same arguments."""
    lanes = carry.shape[1]
    tiles = carry.shape[0]
    k = cuda.grid(1)
    if phase == 1:
        if k >= lanes:
            return
        acc = carry[0, k]
        for c in range(1, tiles):
            v = carry[c, k]
            carry[c, k] = acc
            acc = _log_add_exp(acc, v)
        return
    if k >= lanes * tiles:
        return
    c, lane = _divmod(k, geo, 13)
    if phase == 0 and c == tiles - 1:
        return
    n = geo[3]
    step = geo[4]  # along n, read once (loads of geo could alias base)
    src, dst, out_step = _lane(lane, geo)
    s0 = c * tile_len
    s1 = min(n, s0 + tile_len)
    acc = ident
    if phase == 2 and c > 0:
        acc = carry[c, lane]
    for s in range(s0, s1):
        j = n - 1 - s if reverse else s
        v = base[src + j * step] + zero
        if phase == 2 and exclusive:
            out[dst + j * out_step] = acc
        acc = _log_add_exp(acc, v)
        if phase == 2 and not exclusive:
            out[dst + j * out_step] = acc
    if phase == 0:
        carry[c, lane] = acc


@kernel
def scan_extreme(base, geo, tile_len, phase, greater, carry_v, carry_i, values, indices):
    """cummax/cummin with indices, as :func:`scan_values` (PyTorch's rule): tile
    winners, then carry-ins per lane, then each tile from its carry-in."""
    lanes = carry_v.shape[1]
    tiles = carry_v.shape[0]
    k = cuda.grid(1)
    if phase == 1:
        if k >= lanes:
            return
        bv = carry_v[0, k]
        bi = carry_i[0, k]
        for c in range(1, tiles):
            v = carry_v[c, k]
            i = carry_i[c, k]
            carry_v[c, k] = bv
            carry_i[c, k] = bi
            if _takes_over(v, bv, greater):
                bv = v
                bi = i
        return
    if k >= lanes * tiles:
        return
    c, lane = _divmod(k, geo, 13)
    if phase == 0 and c == tiles - 1:
        return
    n = geo[3]
    step = geo[4]  # along n, read once (loads of geo could alias base)
    src, dst, out_step = _lane(lane, geo)
    s0 = c * tile_len
    s1 = min(n, s0 + tile_len)
    bv = base[src + s0 * step]  # the tile's first element takes itself over again
    bi = s0
    if phase == 2 and c > 0:
        bv = carry_v[c, lane]
        bi = carry_i[c, lane]
    for s in range(s0, s1):
        v = base[src + s * step]
        if _takes_over(v, bv, greater):
            bv = v
            bi = s
        if phase == 2:
            values[dst + s * out_step] = bv
            indices[dst + s * out_step] = bi
    if phase == 0:
        carry_v[c, lane] = bv
        carry_i[c, lane] = bi


# ------------------------------------------------- scans of contiguous rows: a block each


@cuda.jit(device=True, inline=True)
def _later(lv, li, rv, ri, greater):
    """The running (value, index) after the earlier *l* and the later *r* (index -1:
    nothing), by PyTorch's rule: cummax's combination, associative."""
    if ri < 0:
        return lv, li
    if li < 0 or _takes_over(rv, lv, greater):
        return rv, ri
    return lv, li


@kernel
def scan_values_block(base, geo, tile_len, phase, op, exclusive, reverse, zero, ident, carry,
                      out):
    """cumsum/cumprod along a contiguous axis (``inner == 1``, unit stride): a block per
    (lane, tile) reads ``blockDim`` neighbouring elements at a time, scans them in
    shared memory (Hillis and Steele) and writes them back, carrying the running
    value from one piece to the next. Phases 0 and 2 as :func:`scan_values`; its
    phase 1 (a thread per lane) serves both."""
    tiles = carry.shape[0]
    c, lane = _divmod(cuda.blockIdx.x, geo, 13)
    if phase == 0 and c == tiles - 1:
        return
    t = cuda.threadIdx.x
    size = cuda.blockDim.x
    shared = cuda.shared.array(MAX_BLOCK, carry.dtype)
    n = geo[3]
    src, dst, out_step = _lane(lane, geo)
    s0 = c * tile_len
    s1 = min(n, s0 + tile_len)
    run = ident
    if phase == 2 and c > 0:
        run = carry[c, lane]
    for piece in range(s0, s1, size):
        s = piece + t
        j = n - 1 - s if reverse else s
        v = ident
        if s < s1:
            v = _element(base[src + j * geo[4]], zero, ident, op)
        shared[t] = v
        cuda.syncthreads()
        off = 1
        while off < size:
            w = ident
            if t >= off:
                w = shared[t - off]
            cuda.syncthreads()
            if t >= off:
                shared[t] = _combine(w, shared[t], op)
            cuda.syncthreads()
            off *= 2
        if phase == 2 and s < s1:
            if not exclusive:
                out[dst + j * out_step] = _combine(run, shared[t], op)
            elif t == 0:
                out[dst + j * out_step] = run
            else:
                out[dst + j * out_step] = _combine(run, shared[t - 1], op)
        run = _combine(run, shared[min(size, s1 - piece) - 1], op)
        cuda.syncthreads()  # every thread has read the piece before the next overwrites it
    if phase == 0 and t == 0:
        carry[c, lane] = run


@kernel
def scan_extreme_block(base, geo, tile_len, phase, greater, carry_v, carry_i, values, indices):
    """cummax/cummin along a contiguous axis, a block per (lane, tile), as
    :func:`scan_values_block`; phase 1 is :func:`scan_extreme`'s."""
    tiles = carry_v.shape[0]
    c, lane = _divmod(cuda.blockIdx.x, geo, 13)
    if phase == 0 and c == tiles - 1:
        return
    t = cuda.threadIdx.x
    size = cuda.blockDim.x
    shared_v = cuda.shared.array(MAX_BLOCK, carry_v.dtype)
    shared_i = cuda.shared.array(MAX_BLOCK, types.int64)
    n = geo[3]
    src, dst, out_step = _lane(lane, geo)
    s0 = c * tile_len
    s1 = min(n, s0 + tile_len)
    bv = base[src + s0 * geo[4]]
    bi = -1
    if phase == 2 and c > 0:
        bv = carry_v[c, lane]
        bi = carry_i[c, lane]
    for piece in range(s0, s1, size):
        s = piece + t
        if s < s1:
            shared_v[t] = base[src + s * geo[4]]
            shared_i[t] = s
        else:
            shared_v[t] = bv
            shared_i[t] = -1
        cuda.syncthreads()
        off = 1
        while off < size:
            wv = bv
            wi = -1
            if t >= off:
                wv = shared_v[t - off]
                wi = shared_i[t - off]
            cuda.syncthreads()
            if t >= off:
                rv, ri = _later(wv, wi, shared_v[t], shared_i[t], greater)
                shared_v[t] = rv
                shared_i[t] = ri
            cuda.syncthreads()
            off *= 2
        if phase == 2 and s < s1:
            rv, ri = _later(bv, bi, shared_v[t], shared_i[t], greater)
            values[dst + s * out_step] = rv
            indices[dst + s * out_step] = ri
        last = min(size, s1 - piece) - 1
        bv, bi = _later(bv, bi, shared_v[last], shared_i[last], greater)
        cuda.syncthreads()
    if phase == 0 and t == 0:
        carry_v[c, lane] = bv
        carry_i[c, lane] = bi


# ------------------------------------------------------------------------- copies


@kernel
def copy_c(base, geo, out):
    """``out`` (flat, C order) = the strided array of *geo* ``[offset, ndim, dims]``,
    a thread per element."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = base[geo[0] + _unravel(k, geo, 2, geo[1])]


@kernel
def unravel_c(idx, geo, count, bad, out):
    """``unravel``: the coordinates of ``idx[k]`` in the C-ordered block of *geo*'s
    ``nd`` dimensions (``[nd, records (size, 1, magic, shift)]``), one row of *out*
    per dimension; an index outside ``[0, count)`` sets the flag."""
    k = cuda.grid(1)
    if k >= idx.size:
        return
    v = int64(idx[k])
    if idx[k] < 0 or uint64(idx[k]) >= uint64(count):
        bad[0] = 1
        return
    nd = geo[0]
    for e in range(nd):
        dim = nd - 1 - e
        rec = 1 + 4 * dim
        u = uint64(v)
        q = int64((_mulhi(u, uint64(geo[rec + 2])) + u) >> uint64(geo[rec + 3]))
        out[dim, k] = v - q * geo[rec]
        v = q


@kernel
def truth_c(base, geo, nonzero, skip, out):
    """``out`` (flat, C order, int64) = 1 where the strided array of *geo* ``[offset,
    ndim, dims]`` is nonzero (*nonzero*) or zero (not *nonzero*), else 0: the
    counts a logical scan is made of; with *skip* a NaN counts as neither (it is
    missing: nancumsum with ``dtype=bool``)."""
    k = cuda.grid(1)
    if k < out.size:
        v = base[geo[0] + _unravel(k, geo, 2, geo[1])]
        out[k] = 1 if (v != 0) == nonzero and not (skip and v != v) else 0


@kernel
def valid_c(base, geo, out):
    """``out`` (flat, C order, int8) = 1 where the strided array of *geo* is not NaN
    (neither part, for complex numbers), else 0: what ``count`` adds up."""
    k = cuda.grid(1)
    if k < out.size:
        v = base[geo[0] + _unravel(k, geo, 2, geo[1])]
        out[k] = 1 if v == v else 0


@kernel
def test_c(counts, nonzero, out):
    """``out[k]`` (bytes of bools) = ``counts[k] != 0`` (*nonzero*) or ``== 0``."""
    k = cuda.grid(1)
    if k < out.size:
        out[k] = 1 if (counts[k] != 0) == nonzero else 0


@kernel
def cast(src, dst):
    """``dst[k] = src[k]`` converted to dst's dtype (one rounding), a thread each."""
    k = cuda.grid(1)
    if k < dst.size:
        dst[k] = src[k]


# ------------------------------------------------------------------------ gathers


#: The CPU kernel's index resolution by mode, compiled for the device.
_resolve = cuda.jit(device=True, inline=True)(_cpu_gather._resolve.py_func)


@kernel
def take_elements(base, geo, indices, n, mode, fill, bad, out):
    """``take``: a thread per output element ``(outer, p, rest)`` (flat, C order) reads
    ``x[outer, resolve(indices[p]), rest]``; *geo* is ``[offset, no, nn, nr,
    (divisor of rest's size), (divisor of indices' size), outer dims, n dims, rest
    dims]`` (the n dims: the axis, or every axis of a flattened x). An index out of
    range under raise writes *fill* and lowers ``bad[0]`` to its position
    (``atomic.min``: the first in C order, whichever thread sees it)."""
    o = cuda.grid(1)
    if o >= out.size:
        return
    no = geo[1]
    nn = geo[2]
    nr = geo[3]
    qp, i = _divmod(o, geo, 4)
    q, p = _divmod(qp, geo, 7)
    r = _resolve(int64(indices[p]), n, mode)
    if r < 0:
        if mode == MODE_RAISE:
            cuda.atomic.min(bad, 0, p)
        out[o] = fill
        return
    start = 10
    src = geo[0] + _unravel(q, geo, start, no) + _unravel(r, geo, start + 4 * no, nn) \
        + _unravel(i, geo, start + 4 * (no + nn), nr)
    out[o] = base[src]


@kernel
def unsigned_positions(indices, n, wrap, out):
    """uint64 indices as int64 for :func:`take_elements`: ``i mod n`` under wrap,
    else ``min(i, n)`` (n stands for every index out of range: no uint64 value may
    turn negative)."""
    k = cuda.grid(1)
    if k < out.size:
        v = indices[k]
        if wrap:
            out[k] = int64(v % uint64(n))
        else:
            out[k] = int64(min(v, uint64(n)))

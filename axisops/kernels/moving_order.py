"""Moving order statistics over a ``ScanView``: medians, quantiles and ranks of
trailing windows (see ``axisops.moving_order`` for the contract).

Tasks are those of ``axisops.kernels.moving``: ``(lane group g = (o, m), lane i,
axis block c)``, a block a fixed run of ``block_len`` positions, fixed by the
shape and the window, never by the thread count. A task copies its *walk* (the
``window - 1`` positions before its block, then the block) into a contiguous row
in the dtype elements are compared in, and works on it alone. Every output is an
exact function of its window's values (a selection, then one fixed formula), so
the bits never depend on how the tasks are split.

The walk is cut into *chunks* of ``chunk >= window`` positions (from the walk's
first position), so that every window spans at most two neighbouring chunks:

1. ``group`` chunks at a time (a *span* of about 2048 positions, with the chunk
   before it again), the values that are not NaN are sorted once
   (:func:`_sort_span`) by order keys (:func:`_key`: -0.0 and +0.0 alike;
   integers exact in their own width): each key's top 24 bits above the span's
   least key are packed above the position into one word and LSD radix-sorted
   (8-bit digits, those every word shares skipped; stable, so ties keep the
   lower position first: at most three passes over one array, where full
   64-bit keys took seven or eight passes over two), then runs of equal
   prefixes (a few in a span of float64 or float32 values: ~2**-24 of the
   span's range of keys apart; none where keys differ in 24 bits or fewer, as
   narrow integers' do) are put in the order of their full keys by insertion,
   or, past a budget of moves, the full keys radix-sorted instead (24 bits sort
   faster than 32 and cost few insertions);
2. the span's order is distributed to the *pairs* of neighbouring chunks
   (t - 1, t), without a branch (the chunk before the span and the last chunk
   count their unused ranks in rows of their own): each pair's order is the
   span's restricted to it, so every element gets a rank in the pair of its own
   chunk (where it enters windows) and in the next chunk's (where it leaves
   them), and the rank order is the window's order restricted to the elements
   present;
3. the window slides through chunk t, one element in and one out, and the
   window is kept as a bitmap of the ranks present:

   * order statistics (median, quantile): a 64-ary hierarchy of bitmaps over
     the ranks (:func:`_bits_set`, :func:`_bits_clear`; the next and the
     previous rank present found by ``cttz``/``ctlz`` of one word per level,
     ``log64`` levels) and a *word pointer*: a word ``pw`` of the ranks' bitmap
     with ``below``, the number of ranks present in the words before it. An
     element entering or leaving under ``pw`` moves ``below`` by one; the k-th
     smallest is in the word where ``below <= k < below + popcount``, which the
     pointer reaches in steps of a word (rarely needed: k changes by at most
     one per output, and a word holds many of the window's ranks), and is
     picked in it by a branch-free select (:func:`_select`: BMI2's ``pdep``
     where it is fast, 3 cycles; else :func:`_select_swar`, the bytes'
     popcounts summed by SWAR, then a table of bytes, ~4x that). That is Suomela's
     "median filtering is sorting" (2014) with bitmaps in place of his linked
     lists;
   * ranks: the count of ranks present below the latest element's, popcounts
     of the words of the bitmap (:func:`_count_below`: 2 * window / 64 words
     at most; past 4096 ranks, counts of blocks of 4096 ranks too,
     :func:`_count_below_blocks`), and, only where the span has equal values,
     each rank's tie group (its first and last rank), so that the counts of
     values below it and equal to it are two such counts.

Per output: the sort's few passes, O(1) for the distribution and (typically)
for the pointer and the select; the ranks' counts are at most 63 popcounts
and window / 2048 block counts.
(Merge-sorting each chunk, then merging pairs, cost twice the radix sort at
window 100: its comparisons are a dependency chain; a Fenwick tree for the
ranks and a pointer stepped rank by rank cost 2-3x this: their branches are
not predictable.)

One body serves the three operations (``mode``) and, for the gradients, also
emits per output the positions of the one or two elements chosen and the
weight of the second (``want_picks``).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros, viewer
from numba.extending import intrinsic, overload

from .._jit import helper, kernel, part_range
from .common import block_size, load
from .moving import _task_lane

#: The three operations one kernel body serves.
MEDIAN, QUANTILE, RANK = 0, 1, 2
#: Chunks are at least this long (short windows: fewer, larger sorts and merges).
CHUNK_MIN = 64
#: Levels of the bitmap hierarchy kept in one array: enough for 64**11 ranks.
MAX_LEVELS = 12

#: Bits of a key's prefix radix-sorted (see :func:`_sort_span`).
PREFIX_BITS = 24

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_LOW = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)


# ------------------------------------------------------------------------ sorting


def _bits(v):
    """The bits of a float as an int64 (float32's sign-extended), an integer's value
    as an int64 (uint64 bit for bit)."""


@overload(_bits, inline="always")
def _bits_impl(v):
    if isinstance(v, types.Float):
        if v.bitwidth == 64:
            return lambda v: viewer(v, types.int64)
        return lambda v: np.int64(viewer(v, types.int32))
    return lambda v: np.int64(v)


@helper
def _key(v, mask, bias):
    """An unsigned key of the value *v* (not NaN) that orders as the values do,
    -0.0 and +0.0 alike: a float's magnitude bits flipped where it is negative
    (``mask``: the bits below the sign; 0 for integers), plus ``bias`` (the sign
    bit of the width, 0 for unsigned integers) so that keys are unsigned."""
    b = _bits(v)
    b = b ^ ((b >> 63) & mask)
    b = b if v != 0 else 0
    return np.uint64(b) + bias


@helper
def _radix_sort(keys, pos, m, nbytes, hist):
    """LSD radix sort (8-bit digits, stable) of ``keys[0, :m]`` with ``pos[0, :m]``
    carried along, ping-ponging between rows 0 and 1; returns the row holding
    the result. Digits every key shares are skipped; ``hist`` is (8, 256)."""
    for d in range(nbytes):
        for b in range(256):
            hist[d, b] = 0
    k0 = keys[0]
    for i in range(m):
        k = k0[i]
        for d in range(nbytes):
            hist[d, (k >> np.uint64(8 * d)) & np.uint64(255)] += 1
    row = 0
    for d in range(nbytes):
        h = hist[d]
        if m == 0 or h[(k0[0] >> np.uint64(8 * d)) & np.uint64(255)] == m:
            continue  # one digit for all
        total = 0
        for b in range(256):
            c = h[b]
            h[b] = total
            total += c
        sk = keys[row]
        sp = pos[row]
        dk = keys[1 - row]
        dp = pos[1 - row]
        shift = np.uint64(8 * d)
        for i in range(m):
            k = sk[i]
            b = (k >> shift) & np.uint64(255)
            o = h[b]
            h[b] = o + 1
            dk[o] = k
            dp[o] = sp[i]
        row = 1 - row
        k0 = keys[row]
    return row


@helper
def _radix_words(words, m, d0, d1, hist):
    """LSD radix sort (8-bit digits d0..d1 - 1, stable) of ``words[0, :m]``,
    ping-ponging between rows 0 and 1; returns the row holding the result.
    Digits every word shares are skipped. Each pass scatters the two halves of
    the words as two interleaved streams (the second's buckets start after the
    first's), ``hist[0]`` and ``hist[1]`` their counts: a run of words with one
    digit (a float's exponent) is then two chains of bucket increments through
    memory, not one."""
    half = m >> 1
    row = 0
    for d in range(d0, d1):
        shift = np.uint64(8 * d)
        ha = hist[0]
        hb = hist[1]
        for b in range(256):
            ha[b] = 0
            hb[b] = 0
        src = words[row]
        for i in range(half):
            ha[(src[i] >> shift) & np.uint64(255)] += 1
            hb[(src[half + i] >> shift) & np.uint64(255)] += 1
        for i in range(2 * half, m):
            hb[(src[i] >> shift) & np.uint64(255)] += 1
        first = (src[0] >> shift) & np.uint64(255)
        if m == 0 or ha[first] + hb[first] == m:
            continue  # one digit for all
        total = 0
        for b in range(256):
            ca = ha[b]
            cb = hb[b]
            ha[b] = total
            hb[b] = total + ca
            total += ca + cb
        dst = words[1 - row]
        for i in range(half):
            w = src[i]
            b = (w >> shift) & np.uint64(255)
            o = ha[b]
            ha[b] = o + 1
            dst[o] = w
            w = src[half + i]
            b = (w >> shift) & np.uint64(255)
            o = hb[b]
            hb[b] = o + 1
            dst[o] = w
        for i in range(2 * half, m):
            w = src[i]
            b = (w >> shift) & np.uint64(255)
            o = hb[b]
            hb[b] = o + 1
            dst[o] = w
        row = 1 - row
    return row


# ------------------------------------------------------------- the bitmap hierarchy


@helper
def _bits_levels(size, off):
    """Lay out a hierarchy of bitmaps over *size* ranks: level l's words are
    ``bits[off[l]:off[l + 1]]`` (a bit of level l + 1 says a word of level l is
    not zero); returns the number of levels."""
    levels = 0
    total = 0
    words = (size + 63) >> 6
    while True:
        off[levels] = total
        total += words
        levels += 1
        if words == 1:
            break
        words = (words + 63) >> 6
    off[levels] = total
    return levels


@helper
def _bits_set(bits, off, levels, r):
    """Rank r present: its bit, and the upper levels' where its word was empty."""
    w = bits[r >> 6]
    bits[r >> 6] = w | (_ONE << np.uint64(r & 63))
    if w == 0:
        _bits_up(bits, off, levels, r >> 6, True)


@helper
def _bits_clear(bits, off, levels, r):
    """Rank r absent: its bit, and the upper levels' where its word is empty."""
    w = bits[r >> 6] & ~(_ONE << np.uint64(r & 63))
    bits[r >> 6] = w
    if w == 0:
        _bits_up(bits, off, levels, r >> 6, False)


@helper
def _bits_up(bits, off, levels, pos, on):
    """The levels above 0 after word *pos* of level 0 became non-empty (*on*) or
    empty."""
    for lev in range(1, levels):
        at = off[lev] + (pos >> 6)
        w = bits[at]
        b = _ONE << np.uint64(pos & 63)
        bits[at] = w | b if on else w & ~b
        if (w != 0) if on else (w & ~b != 0):
            return
        pos >>= 6


@intrinsic
def _popcount(typingctx, word):
    """The number of bits set in an unsigned integer (LLVM's ``ctpop``)."""
    if not isinstance(word, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])
    return word(word), codegen


def _select_table():
    """``t[k * 256 + b]``: the place of the k-th (from 0) bit set in the byte b."""
    t = np.zeros(8 * 256, np.uint8)
    for b in range(256):
        k = 0
        for i in range(8):
            if b >> i & 1:
                t[k * 256 + b] = i
                k += 1
    return t


_SELECT = _select_table()
_L8 = np.uint64(0x0101010101010101)
_H8 = np.uint64(0x8080808080808080)


def _fast_pdep() -> bool:
    """Whether this CPU deposits bits (BMI2's ``pdep``) in a few cycles: not on
    AMD before Zen 3, where it is microcode, nor where Numba compiles for some
    other CPU (``NUMBA_CPU_NAME``: caches meant for other machines). Numba's
    cache keys hold the CPU's name and features, so a cache never crosses."""
    try:
        import llvmlite.binding as ll
        from numba.core import config
        if getattr(config, "CPU_NAME", None) or getattr(config, "CPU_FEATURES", None):
            return False
        return bool(ll.get_host_cpu_features().get("bmi2")) and \
            ll.get_host_cpu_name() not in ("znver1", "znver2", "bdver4")
    except Exception:  # no host features: the portable select
        return False


_PDEP = _fast_pdep()


@intrinsic
def _pdep(typingctx, src, mask):
    """BMI2's ``pdep``: the low bits of *src* deposited at the bits set in *mask*."""
    if not (src == types.uint64 and mask == types.uint64):
        return None

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.bmi.pdep.64")
        return builder.call(fn, args)
    return types.uint64(types.uint64, types.uint64), codegen


@helper
def _select_pdep(w, k):
    """The place of the k-th (from 0) bit set in the word *w* (k < its popcount):
    bit k deposited at w's bits set lands on it."""
    return np.int64(trailing_zeros(_pdep(_ONE << np.uint64(k), w)))


@helper
def _select_swar(w, k):
    """The place of the k-th (from 0) bit set in the word *w* (k < its popcount),
    without a branch: bytes' popcounts and their running sums (SWAR), the byte
    holding it (how many running sums are <= k), then a table of bytes."""
    s = w - ((w >> _ONE) & np.uint64(0x5555555555555555))
    s = (s & np.uint64(0x3333333333333333)) + ((s >> np.uint64(2)) & np.uint64(0x3333333333333333))
    s = (s + (s >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    s = s * _L8  # byte i: the bits set in bytes 0..i (<= 64: no carry)
    kk = np.uint64(k) * _L8
    place = _popcount(((kk | _H8) - s) & _H8) << np.uint64(3)  # 8 * the bytes <= k
    before = ((s << np.uint64(8)) >> place) & np.uint64(255)
    byte = (w >> place) & np.uint64(255)
    return np.int64(place) + np.int64(_SELECT[(np.uint64(k) - before) * np.uint64(256) + byte])


#: The select the kernels compile (the other is never compiled).
_select = _select_pdep if _PDEP else _select_swar


@helper
def _next_set(bits, off, levels, p):
    """The least rank present >= p, or -1."""
    pos = p
    for lev in range(levels):
        wi = pos >> 6
        if wi >= off[lev + 1] - off[lev]:
            return -1
        word = bits[off[lev] + wi] & (_ALL << np.uint64(pos & 63))
        if word != 0:
            pos = (wi << 6) + np.int64(trailing_zeros(word))
            for d in range(lev - 1, -1, -1):
                pos = (pos << 6) + np.int64(trailing_zeros(bits[off[d] + pos]))
            return pos
        pos = wi + 1
    return -1


@helper
def _prev_set(bits, off, levels, p):
    """The greatest rank present <= p, or -1."""
    pos = p
    for lev in range(levels):
        if pos < 0:
            return -1
        wi = pos >> 6
        word = bits[off[lev] + wi] & (_ALL >> np.uint64(63 - (pos & 63)))
        if word != 0:
            pos = (wi << 6) + 63 - np.int64(leading_zeros(word))
            for d in range(lev - 1, -1, -1):
                pos = (pos << 6) + 63 - np.int64(leading_zeros(bits[off[d] + pos]))
            return pos
        pos = wi - 1
    return -1


# ------------------------------------------------------------------ rank counting


@helper
def _count_below(bits, r):
    """How many ranks present are < r: popcounts of the level-0 words below r."""
    wi = r >> 6
    s = 0
    for u in range(wi):
        s += np.int64(_popcount(bits[u]))
    return s + np.int64(_popcount(bits[wi] & ((_ONE << np.uint64(r & 63)) - _ONE)))


@helper
def _count_below_blocks(bits, sup, r):
    """:func:`_count_below` of many words: the counts ``sup`` of the blocks of
    4096 ranks below r's, then popcounts of the words of r's block below r."""
    s = 0
    for u in range(r >> 12):
        s += sup[u]
    wi = r >> 6
    for u in range((r >> 12) << 6, wi):
        s += np.int64(_popcount(bits[u]))
    return s + np.int64(_popcount(bits[wi] & ((_ONE << np.uint64(r & 63)) - _ONE)))


# ------------------------------------------------------------------------- a walk


@helper
def _load_walk(base, p, stride, js, length, table, like, vals):
    """Positions [js, js + length) of a lane (first element ``base[p]``) into
    ``vals[:length]`` in the dtype they are compared in."""
    if stride == 1:
        seg = base[p + js:p + js + length]
        for k in range(length):
            vals[k] = load(seg[k], table, like)
    else:
        for k in range(length):
            vals[k] = load(base[p + (js + k) * stride], table, like)


@helper
def _sort_span(vals, p0, p1, c_lo, c_hi, chunk, mask, bias, nbytes, words, keys, kpos, fk, jof,
               hist, rank_new, rank_old, order, cnt):
    """Sort the positions [p0, p1) of the walk (chunks ``c_lo - 1`` or ``c_lo`` to
    ``c_hi``) and give each pair of chunks (c - 1, c), c in [c_lo, c_hi), its rank
    space: ``order[1 + c - c_lo, r]`` the position at rank r; ``rank_new[k - p0]``
    the rank of position k in the pair of its own chunk, ``rank_old[k - p0]`` in
    the pair of the next chunk (-1 for NaN). One stable sort of the span, then the
    order distributed to the pairs (each pair's order is the span's restricted
    to it); ``cnt[1 + c - c_lo]`` the number of ranks of pair c. Returns whether
    any two values of the span are equal (keys are equal just where values are).

    The sort: each key's top :data:`PREFIX_BITS` bits above the span's least
    key, packed above the position into one word and radix-sorted (at most
    three passes over one array: exact where keys span fewer bits, as narrow
    integers do), then runs of equal prefixes put in the order of their full
    keys by insertion (few: ~2**-24 of the span's range of keys apart), or,
    past a budget of moves, the full keys radix-sorted instead."""
    m = 0
    w0 = words[0]
    kmin = _ALL
    kmax = np.uint64(0)
    for e in range(p0 // chunk, c_hi):
        for rel in range(e * chunk - p0, min(e * chunk + chunk, p1) - p0):
            jof[rel] = e - c_lo + 1
    for rel in range(p1 - p0):  # loops of their own: vectorised
        rank_new[rel] = -1
        rank_old[rel] = -1
    for rel in range(p1 - p0):
        v = vals[p0 + rel]
        key = _key(v, mask, bias) if v == v else np.uint64(0)
        fk[rel] = key
        kmin = min(kmin, key if v == v else _ALL)
        kmax = max(kmax, key)  # a NaN's key is 0
    for rel in range(p1 - p0):
        v = vals[p0 + rel]
        w0[m] = np.uint64(rel)
        m += 1 if v == v else 0
    if m == 0:
        return False
    low = _LOW  # the position's bits in a sorted word
    if p1 - p0 > 0xFFFFFFFF:  # positions past 32 bits: no room to pack them
        ties = _sort_full(vals, p0, p1 - p0, fk, nbytes, keys, kpos, hist, w0)
        sw = w0
        low = _ALL
    else:
        ties, row = _sort_packed(vals, p0, p1 - p0, m, fk, kmin, kmax, nbytes, words, keys,
                                 kpos, hist)
        sw = words[row]
    for j in range(c_hi - c_lo + 2):
        cnt[j] = 0
    # without a branch: the chunk before the span's first pair counts its new
    # ranks in the row 0, the last chunk its old ranks in the row past the last
    for i in range(m):
        rel = np.int64(sw[i] & low)
        j = jof[rel]
        r = cnt[j]
        cnt[j] = r + 1
        rank_new[rel] = r
        order[j, r] = rel + p0
        r = cnt[j + 1]
        cnt[j + 1] = r + 1
        rank_old[rel] = r
        order[j + 1, r] = rel + p0
    return ties


@helper
def _sort_packed(vals, p0, length, m, fk, kmin, kmax, nbytes, words, keys, kpos, hist):
    """:func:`_sort_span`'s sort of the positions (< 2**32) in ``words[0, :m]``
    by their keys ``fk`` (least ``kmin``, greatest ``kmax``); returns whether two
    keys are equal, and the row of ``words`` holding the sorted words (prefix
    above position; see :func:`_sort_span`)."""
    w0 = words[0]
    width = 64 - np.int64(leading_zeros(kmax - kmin)) if kmax != kmin else 0
    shift = np.uint64(max(0, width - PREFIX_BITS))
    for i in range(m):
        rel = w0[i]
        w0[i] = (((fk[rel] - kmin) >> shift) << np.uint64(32)) | rel
    row = _radix_words(words, m, 4, 4 + (min(width, PREFIX_BITS) + 7) // 8, hist)
    sw = words[row]
    ties = False
    moves = 0
    for i in range(1, m):
        w = sw[i]
        if (w >> np.uint64(32)) != (sw[i - 1] >> np.uint64(32)):
            continue
        kw = fk[w & _LOW]
        u = i
        while u > 0 and (sw[u - 1] >> np.uint64(32)) == (w >> np.uint64(32)) and \
                fk[sw[u - 1] & _LOW] > kw:
            sw[u] = sw[u - 1]
            u -= 1
        sw[u] = w
        moves += i - u
        ties |= u > 0 and fk[sw[u - 1] & _LOW] == kw
        if moves > 8 * m:  # adversarial prefixes: sort the full keys
            ties = _sort_full(vals, p0, length, fk, nbytes, keys, kpos, hist, sw)
            break
    return ties, row


@helper
def _sort_full(vals, p0, length, fk, nbytes, keys, kpos, hist, sw):
    """The positions of ``vals[p0:p0 + length]`` that are not NaN in the order of
    their full keys ``fk`` (stable) into ``sw``; returns whether two keys are
    equal."""
    m = 0
    for rel in range(length):
        v = vals[p0 + rel]
        keys[0, m] = fk[rel]
        kpos[0, m] = rel
        m += 1 if v == v else 0
    row = _radix_sort(keys, kpos, m, nbytes, hist)
    ties = False
    for i in range(m):
        sw[i] = np.uint64(kpos[row, i])
        ties |= i > 0 and keys[row, i] == keys[row, i - 1]
    return ties


@helper
def _ties(vals, order, j, total, glo, ghi):
    """First and last rank of each rank's tie group in pair j's order."""
    prev = vals[order[j, 0]]
    glo[0] = 0
    for r in range(1, total):
        v = vals[order[j, r]]
        glo[r] = glo[r - 1] if v == prev else r
        prev = v
    ghi[total - 1] = total - 1
    for r in range(total - 2, -1, -1):
        ghi[r] = ghi[r + 1] if glo[r + 1] == glo[r] else r


@helper
def _walk(vals, length, first, window, min_count, chunk, group, mode, q, mask, bias, nbytes,
          want_picks, flat, start, step, origin, pick_a, pick_b, weight, words, keys, kpos,
          fk, jof, hist, rank_new, rank_old, order, cnt, bits, sup, off, glo, ghi):
    """The outputs of one walk (``vals[:length]``) from position ``first`` on, into
    ``flat[start + k * step]`` (and the picks, positions absolute: ``origin + k``):
    ``group`` chunks at a time, each span sorted once (with the chunk before)."""
    size = 2 * chunk
    levels = _bits_levels(size, off)
    nwords = off[levels]
    nchunks = (length + chunk - 1) // chunk
    for c_lo in range(0, nchunks, group):
        c_hi = min(c_lo + group, nchunks)
        p0 = max(c_lo - 1, 0) * chunk
        ties = _sort_span(vals, p0, min(c_hi * chunk, length), c_lo, c_hi, chunk, mask, bias,
                          nbytes, words, keys, kpos, fk, jof, hist, rank_new, rank_old,
                          order, cnt)
        for c in range(c_lo, c_hi):
            j = c - c_lo
            c0 = c * chunk
            c1 = min(c0 + chunk, length)
            total = cnt[j + 1]
            pair = order[j + 1]
            for u in range(nwords):
                bits[u] = 0
            if mode == RANK and ties and total > 0:
                _ties(vals, order, j + 1, total, glo, ghi)
            count = 0
            for k in range(max(0, c0 - window), c0):  # the window ending at c0 - 1
                r = rank_old[k - p0]
                if r >= 0:
                    count += 1
                    if mode == RANK:
                        bits[r >> 6] |= _ONE << np.uint64(r & 63)
                    else:
                        _bits_set(bits, off, levels, r)
            if mode == RANK:
                for u in range((total >> 12) + 1):  # the blocks' counts (several blocks)
                    sup[u] = 0
                    if total >= 4096:
                        for v in range(u << 6, min((u + 1) << 6, off[1])):
                            sup[u] += np.int64(_popcount(bits[v]))
                _slide_rank(c0, c1, p0, first, window, min_count, count, rank_new, rank_old,
                            total, bits, sup, ties, glo, ghi, flat, start, step)
            else:
                _slide_order(vals, c0, c1, p0, first, window, min_count, count, mode, q,
                             want_picks, rank_new, rank_old, pair, bits, off, levels, flat,
                             start, step, origin, pick_a, pick_b, weight)


@helper
def _slide_rank(c0, c1, p0, first, window, min_count, count, rank_new, rank_old, total, bits,
                sup, ties, glo, ghi, flat, start, step):
    """moving_rank over the positions [c0, c1) of a pair (its level-0 bitmap holding
    the window ending at c0 - 1, of *count* values, and ``sup``, its counts of
    blocks of 4096 ranks, kept only where there are several: an update of one
    count every output is a chain through memory); ``glo``/``ghi`` (the tie
    groups) only where the span has *ties*, else every group is one rank."""
    big = total >= 4096
    for k in range(c0, c1):
        r = rank_new[k - p0]
        if r >= 0:
            count += 1
            bits[r >> 6] |= _ONE << np.uint64(r & 63)
            if big:
                sup[r >> 12] += 1
        kw = k - window
        if kw >= 0:
            rw = rank_new[kw - p0] if kw >= c0 else rank_old[kw - p0]
            if rw >= 0:
                count -= 1
                bits[rw >> 6] &= ~(_ONE << np.uint64(rw & 63))
                if big:
                    sup[rw >> 12] -= 1
        if k < first:
            continue
        o = start + k * step
        if count < min_count or r < 0:
            flat[o] = np.nan
        elif count == 1:
            flat[o] = 0.0
        else:
            if big:  # several blocks of ranks
                less = _count_below_blocks(bits, sup, glo[r] if ties else r)
                equal = _count_below_blocks(bits, sup, ghi[r] + 1) - less if ties else 1
            elif ties:
                less = _count_below(bits, glo[r])
                equal = _count_below(bits, ghi[r] + 1) - less
            else:
                less = _count_below(bits, r)
                equal = 1
            v = 0.5 * (2.0 * less + equal - 1.0)  # bottleneck's move_rank
            v = v / (count - 1.0)
            flat[o] = 2.0 * (v - 0.5)


@helper
def _slide_order(vals, c0, c1, p0, first, window, min_count, count, mode, q, want_picks,
                 rank_new, rank_old, pair, bits, off, levels, flat, start, step, origin,
                 pick_a, pick_b, weight):
    """moving_median or moving_quantile over the positions [c0, c1) of a pair (its
    bitmaps holding the window ending at c0 - 1, of *count* values): a *word
    pointer* ``pw`` into the level-0 bitmap and ``below``, the ranks present in
    the words before it, moved to the word holding the k-th rank present (rarely:
    k changes by at most one per output, and a word holds many ranks), then the
    rank by a branch-free select in that word."""
    pw = 0
    below = 0
    for k in range(c0, c1):
        r = rank_new[k - p0]
        if r >= 0:
            count += 1
            _bits_set(bits, off, levels, r)
            below += 1 if (r >> 6) < pw else 0
        kw = k - window
        if kw >= 0:
            rw = rank_new[kw - p0] if kw >= c0 else rank_old[kw - p0]
            if rw >= 0:
                count -= 1
                _bits_clear(bits, off, levels, rw)
                below -= 1 if (rw >> 6) < pw else 0
        if k < first:
            continue
        o = start + k * step
        if count < min_count:
            flat[o] = np.nan
            if want_picks:
                pick_a[o] = -1
                pick_b[o] = -1
                weight[o] = 0.0
            continue
        if mode == MEDIAN:
            kth = (count - 1) >> 1
            frac = 0.0 if count & 1 else 0.5
        else:
            idx = q * (count - 1.0)
            kth = np.int64(idx)
            frac = idx - kth
        while below > kth:  # back to the previous word not empty
            pw = _prev_set(bits, off, levels, (pw << 6) - 1) >> 6
            below -= np.int64(_popcount(bits[pw]))
        while True:
            w = bits[pw]
            c = np.int64(_popcount(w))
            if below + c > kth:
                break
            below += c  # on to the next word not empty
            pw = _next_set(bits, off, levels, (pw + 1) << 6) >> 6
        p = (pw << 6) + _select(w, kth - below)
        at = pair[p]
        a = np.float64(vals[at])
        if frac == 0.0:
            flat[o] = a
            if want_picks:
                pick_a[o] = origin + at
                pick_b[o] = -1
                weight[o] = 0.0
            continue
        rest = (w >> np.uint64(p & 63)) >> _ONE  # the next rank present, mostly in w
        p2 = p + 1 + np.int64(trailing_zeros(rest)) if rest != 0 else \
            _next_set(bits, off, levels, p + 1)
        at2 = pair[p2]
        b = np.float64(vals[at2])
        if mode == MEDIAN:
            flat[o] = (a + b) / 2.0
        else:
            flat[o] = a + (b - a) * frac
        if want_picks:
            pick_a[o] = origin + at
            pick_b[o] = origin + at2
            weight[o] = frac


@kernel(nrt=True)
def moving_order_kernel(part, parts, base, offset, outer_shape, outer_strides, n, n_stride,
                        mid_shape, mid_strides, inner, inner_stride, window, min_count,
                        block_len, chunk, group, mode, q, mask, bias, nbytes, table, like,
                        values, want_picks, pick_a, pick_b, weight):
    """Moving medians (``mode`` MEDIAN), ``q``-quantiles (QUANTILE) or ranks (RANK)
    of a ``ScanView`` into ``values`` (outer, n, mid, inner) of float32/float64.
    With ``want_picks`` (not RANK), also ``pick_a``/``pick_b`` (int64, the same
    shape: the absolute positions along the axis of the element at the lower
    place of the window's order and of the one above it, -1 where none) and
    ``weight`` (float64: the second's share); else those are (1, 1, 1, 1)
    arrays, never written. ``like`` is a zero-size array of the dtype elements
    are compared in; ``mask``, ``bias`` (uint64) and ``nbytes`` make their sort
    keys (see :func:`_key`)."""
    mids = block_size(mid_shape)
    blocks = (n + block_len - 1) // block_len
    groups = block_size(outer_shape) * mids
    flat = values.reshape(values.size)
    flat_a = pick_a.reshape(pick_a.size)
    flat_b = pick_b.reshape(pick_b.size)
    flat_w = weight.reshape(weight.size)
    step = mids * inner
    width = min(n, block_len + window - 1)
    size = 2 * chunk
    span = min(width, (group + 1) * chunk)
    vals = np.empty(width, like.dtype)
    words = np.empty((2, span), np.uint64)
    keys = np.empty((2, span), np.uint64)
    kpos = np.empty((2, span), np.int64)
    fk = np.empty(span, np.uint64)
    jof = np.empty(span, np.int64)
    hist = np.empty((8, 256), np.int64)
    rank_new = np.empty(span, np.int64)
    rank_old = np.empty(span, np.int64)
    order = np.empty((group + 2, size), np.int64)
    cnt = np.empty(group + 2, np.int64)
    rank = mode == RANK
    # the bitmaps' levels, and a word more past the ranks (_count_below's end)
    bits = np.empty((size + 63) // 64 * 2 + MAX_LEVELS + 1, np.uint64)
    off = np.empty(MAX_LEVELS + 1, np.int64)
    sup = np.empty((size >> 12) + 1, np.int64)
    glo = np.empty(size if rank else 1, np.int64)
    ghi = np.empty(size if rank else 1, np.int64)
    lo, hi = part_range(groups * inner * blocks, part, parts)
    for task in range(lo, hi):
        p, o, m, i, j0, j1, js = _task_lane(task, inner, blocks, mids, offset, outer_shape,
                                            outer_strides, mid_shape, mid_strides,
                                            inner_stride, block_len, n, window)
        _load_walk(base, p, n_stride, js, j1 - js, table, like, vals)
        _walk(vals, j1 - js, j0 - js, window, min_count, chunk, group, mode, q, mask, bias,
              nbytes, want_picks, flat, ((o * n + js) * mids + m) * inner + i, step, js,
              flat_a, flat_b, flat_w, words, keys, kpos, fk, jof, hist, rank_new, rank_old,
              order, cnt, bits, sup, off, glo, ghi)

"""Order statistics of dask arrays (see :mod:`axisops.order`): ``sort``, ``argsort``,
``partition``, ``argpartition``, ``rank``, ``top_k``, ``kthvalue``, ``median``,
``nanmedian``, ``quantile``, ``nanquantile``; gradients in
:mod:`axisops.dask.order_grad`, the moving ones in :mod:`axisops.dask.moving_order`.

Every function builds a graph and computes nothing (no kernel is compiled, no
histogram computed) while it is built; the NumPy path's checks are made then, with
its exceptions. Every result equals the NumPy path's on the computed array, bit
for bit (values, indices, dtypes, -0.0 and NaN payloads where it returns
elements), whatever the chunking.

* ``sort``, ``argsort``, ``partition``, ``argpartition``, ``rank``: the NumPy path per
  block, the axis in one chunk (other axes chunked as they are). An axis split
  into several chunks is a ``ValueError`` naming ``x.rechunk({axis: -1})``;
  ``axis=None`` (the flattened array) needs the whole array in one chunk, else the
  same ``ValueError`` naming ``x.rechunk(-1)``.
* ``top_k``: a tree. Each chunk along the axis gives its own first ``k`` (the NumPy
  path's ``top_k``) with *global* indices; candidate sets are merged, four at a
  time, by putting them in global-index order and taking the NumPy path's stable
  ``top_k`` of that: NaN last, ties the lower global index first, exactly the
  order of the whole lane. ``axis=None`` merges every chunk's candidates with
  C-order flat indices. A task holds at most four candidate sets (``k`` per lane
  each, so ``4 k`` per lane) and one chunk.
* ``kthvalue``, ``median``, ``nanmedian``, ``quantile``, ``nanquantile``: where the
  reduced axes are each in one chunk, the NumPy path per block; else an exact
  **selection by counting** (below). ``kthvalue`` uses it too rather than a
  ``top_k`` tree: its memory stays that of a few chunks for every ``k`` (a tree
  would hold ``k`` candidates per lane, the whole axis for ``k`` near ``n``).

**The selection by counting.** The reduced axes are moved last (lazily, by
``transpose``); a *lane* is the C-ordered elements of the reduced axes at one
position of the others. Each element has an unsigned order key of its width
(:func:`order_keys`: a float's bits with negatives reversed and positives' sign bit
set, -0.0 given +0.0's key, every NaN the greatest; integers with the sign bit
flipped), and the element at place ``r`` of a lane's stable order is the
``o``-th element (in lane order) of the key ``K`` such that ``o`` = ``r`` less the
number of keys below ``K``. Both ``K`` and that element's position are found by
digits, most significant first, ``D`` bits a pass:

1. pass 1: each chunk counts, per lane, the histogram of its keys' top digit
   (and its NaN); the histograms are summed over the chunks of the lane (dask's
   tree sum). Those counts give the number of NaN per lane, so the places NumPy's
   formulas need (``axisops.order.quantile_places``; the median's
   middle places; ``k - 1``), then the bucket holding each place and the place
   left within it;
2. each further pass counts, per lane and place, the next digit of the keys that
   match the digits found so far, and narrows each place to one bucket: after
   ``ceil(W / D)`` passes (W the key's width: 8 to 64) the key is exact;
3. where the element itself is needed (its position: ``kthvalue``'s index and the
   gradients; its bits: floats, whose zero key ties -0.0 and +0.0 and whose NaN
   keep payloads), the same passes run on the lane positions of the elements
   whose key is ``K`` (``ceil(log2(n) / D)`` passes), to the ``o``-th of them: the
   element at place ``r`` of the stable order, as the NumPy path's kernel finds
   it; a last pass fetches its bits.

So a float64 median of a lane under 2^16 elements reads ``x`` 6 times (4 key
passes, 1 position pass, 1 fetch), an int32 one twice. ``D`` is 16 bits, fewer
where a chunk has many lanes: a task's histogram (``lanes x places x 2^D``
int64) is kept under ``max(2^20, the chunk's size)`` counts. The arithmetic that
follows the selection (the mean of the two middle elements, NumPy's ``_lerp``
with its weights, the NaN rules) is the NumPy path's own code on the selected
elements, per block of lanes, so results are its values and dtypes.

Everything is lazy: the passes are layers of one graph (the histograms of a
pass are inputs of the next pass's tasks), chosen over computing each pass's
histograms while the graph is built (``dask.compute`` per pass), so that results
stay lazy as the contract asks, the graph composes with others (persist,
``dask.compute`` of several results at once) and nothing is read until the user
computes. Each pass after the first reads ``x`` **anew**: a copy of ``x``'s graph
(``dask.graph_manipulation.bind``: new keys, the same tasks) that starts only once
the previous pass's result is complete, so a pass streams ``x``'s chunks and lets
them go rather than every chunk staying in memory from the first pass to the
last. ``x`` is thus computed once per pass: persist it first (its copies are then
references to the persisted chunks) when it is cheaper to hold than to recompute.

**Memory per task**: one chunk of ``x`` (counted in place by a kernel,
:mod:`axisops.kernels.counting`: no temporaries); a histogram of at most
``max(2^18, chunk size / 8)`` counts (int32 for lanes under 2^31 elements) per
place group (more where ``D`` is at its least, 4 bits: ``lanes x places x 16``
counts, for a chunk of many lanes of few elements each); the tree sums hold
``split_every`` histograms. No task holds more than a chunk of a lane, whatever
the length of the axis: the axis is never gathered. Measured (AMD EPYC, 2
threads), an exact quantile ``[0.1, 0.9]`` along the chunked axis 0 of a lazy
``da.random`` float32 array: 256 MiB in 32 MiB chunks, peak RSS +126 MiB in 3.0 s
(before the passes read ``x`` anew and the kernel counted: +750 MiB, 19 s); 1 GiB
in 64 MiB chunks, +218 MiB in 10.6 s (before: +2.9 GiB, 58 s). On the out-of-core
setup (``tests/test_dask_out_of_core.py``: 1.56 GiB, two worker processes limited
to 640 MiB) a quantile ``[0.25, 0.75]`` in (512, 8, 512) chunks of 8 MiB peaks at
~45 MiB over an idle worker, in 30 s (12 passes). In (128, 32, 512) chunks, whose
16384 lanes of 128 elements make each histogram half a chunk, it peaked at ~170
MiB here and lost a worker in CI: the distributed scheduler computes a pass's
histograms ahead of their tree sums, so the histograms' size, not the chunk's,
bounds such a pass.

Decisions where the contract is silent:

* An all-NaN lane of ``nanmedian``/``nanquantile`` warns ``All-NaN slice
  encountered`` when the graph is computed (once per block of lanes that holds
  one), not when it is built.
* NumPy's one quantile of a whole array holding NaN, with a NumPy-array ``q`` of
  a wider float type than ``x``, is a NaN of ``x``'s dtype on the NumPy path (the
  only value-dependent dtype); here the dtype is the one of every other case
  (the dtype a graph must know before it runs), the value NaN.
* ``kthvalue`` with ``axis=None`` and ``top_k`` with ``axis=None`` flatten in C
  order as the NumPy path, with any chunking.

>>> import dask.array as da, numpy as np, axisops
>>> x = da.from_array(np.array([[3., 1., -0., 7.], [2., np.nan, 5., 5.]]), chunks=(1, 2))
>>> axisops.median(x, axis=1).compute()
array([ 2., nan])
>>> axisops.nanmedian(x, axis=1).compute()
array([2., 5.])
>>> v, i = axisops.top_k(x, 2, axis=1)
>>> i.compute()
array([[3, 0],
       [2, 3]])
"""
from __future__ import annotations

import functools
import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _dtypes
from .. import order as _np_order
from .._axes import normalize_axes, normalize_axis
from .._dispatch import numpy_function
from ..kernels import counting
from ..kernels import order as K
from ..order import (
    _DISCRETE,
    _check_dtype,
    _count,
    _flag,
    _places,
    check_interpolable,
    check_quantile,
    chosen_places,
    chosen_weights,
    quantile_from_selected,
    quantile_places,
)
from ..scan import ValuesIndices

__all__ = ["sort", "argsort", "top_k", "partition", "argpartition", "kthvalue", "median",
           "nanmedian", "quantile", "nanquantile", "rank"]

_NUMPY = {name: numpy_function(getattr(_np_order, name)) for name in __all__}
_INT64 = np.dtype(np.int64)
#: Candidate sets merged at once in the ``top_k`` tree.
SPLIT_EVERY = 4
#: Bits of a digit of the selection, at most; and the fewest.
DIGIT_MAX = 16
DIGIT_MIN = 4
#: A task's histogram holds at most max(this, the chunk's size) counts.
HISTOGRAM_BUDGET = 1 << 18
#: ... or an eighth of a chunk's elements: the counts (int32 for lanes under 2^31
#: elements, else int64) of a task then take at most as much memory as a float64
#: chunk's eighth, and a tree sum holding several of them stays within a chunk or
#: two (with a whole chunk's worth of int64 counts, and x held across the passes,
#: a quantile of a 256 MiB float32 array in 32 MiB chunks peaked at 1.1 GiB).
HISTOGRAM_SHARE = 8
#: The selection's state per lane and place: the key found so far, the place left
#: within the bucket (then the occurrence among equal keys), the position found so
#: far, the lane's NaN count.
STATE = np.dtype([("key", np.uint64), ("r", np.int64), ("pos", np.int64), ("nans", np.int64)])
RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _da():
    import dask.array as da

    return da


def _meta(ndim: int, dtype) -> np.ndarray:
    return np.empty((0,) * ndim, dtype)


def _index_dtype(index_dtype, n: int, op: str) -> np.dtype:
    index_dtype = _dtypes.check_index_dtype(index_dtype, op)
    _dtypes.check_index_fits(n, index_dtype, op)
    return index_dtype


def _axis_of(x, axis, op: str, dates: bool) -> int | None:
    """The NumPy path's checks of ``x``'s dtype and one ``axis`` (None kept)."""
    _check_dtype(x.dtype, op, dates)
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be an int or None, got {axis!r}")
    return normalize_axis(axis, x.ndim, op)


def _lane_length(x, axis: int | None) -> int:
    return int(math.prod(x.shape)) if axis is None else int(x.shape[axis])


# ------------------------------------------------- the axis in one chunk: per block


def whole_axis(x, axis: int | None, op: str):
    """``(x, axis)`` with the lane in one chunk (``x`` flattened for None), else the
    contract's ``ValueError`` naming the rechunk that makes it so."""
    if axis is None:
        if any(b > 1 for b in x.numblocks):
            raise ValueError(f"{op}: axis=None needs the whole array in one chunk (it has "
                             f"{math.prod(x.numblocks)}); call x.rechunk(-1) first")
        return x.reshape(-1), 0
    if x.numblocks[axis] > 1:
        raise ValueError(f"{op}: axis {axis} is split into {x.numblocks[axis]} chunks; it "
                         f"must be in one chunk: call x.rechunk({{{axis}: -1}}) first "
                         "(top_k, kthvalue, median and the quantiles need no rechunk)")
    return x, axis


def _per_block(op: str, x, axis, dtype, **options):
    x, a = whole_axis(x, axis, op)
    func = functools.partial(_block_call, op=op, axis=a, options=tuple(options.items()))
    return x.map_blocks(func, dtype=dtype, meta=_meta(x.ndim, dtype))


def _block_call(block, *, op, axis, options):
    return _NUMPY[op](block, axis=axis, **dict(options))


def sort(x, axis=-1, *, descending=False):
    """Lazy :func:`axisops.sort`: the axis in one chunk."""
    a = _axis_of(x, axis, "sort", dates=True)
    descending = _flag(descending, "descending", "sort")
    return _per_block("sort", x, a, x.dtype, descending=descending)


def argsort(x, axis=-1, *, descending=False, index_dtype=np.int64):
    """Lazy :func:`axisops.argsort`: the axis in one chunk."""
    a = _axis_of(x, axis, "argsort", dates=True)
    descending = _flag(descending, "descending", "argsort")
    index_dtype = _index_dtype(index_dtype, _lane_length(x, a), "argsort")
    return _per_block("argsort", x, a, index_dtype, descending=descending,
                      index_dtype=index_dtype)


def partition(x, kth, axis=-1):
    """Lazy :func:`axisops.partition`: the axis in one chunk."""
    a = _axis_of(x, axis, "partition", dates=True)
    _places(kth, _lane_length(x, a), "partition")
    return _per_block("partition", x, a, x.dtype, kth=kth)


def argpartition(x, kth, axis=-1, *, index_dtype=np.int64):
    """Lazy :func:`axisops.argpartition`: the axis in one chunk."""
    a = _axis_of(x, axis, "argpartition", dates=True)
    n = _lane_length(x, a)
    _places(kth, n, "argpartition")
    index_dtype = _index_dtype(index_dtype, n, "argpartition")
    return _per_block("argpartition", x, a, index_dtype, kth=kth, index_dtype=index_dtype)


def rank(x, axis=-1, *, method="average"):
    """Lazy :func:`axisops.rank`: the axis in one chunk."""
    a = _axis_of(x, axis, "rank", dates=False)
    if method not in RANK_METHODS:
        raise ValueError(f"rank: method must be one of {', '.join(RANK_METHODS)}, "
                         f"got {method!r}")
    return _per_block("rank", x, a, np.dtype(np.float64), method=method)


# ------------------------------------------------------------------- top_k: a tree


def top_k(x, k, axis=-1, *, mode="largest", sorted=True, index_dtype=np.int64):
    """Lazy :func:`axisops.top_k`: exact along a chunked axis, by a tree of candidate
    sets with global indices (see the module)."""
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    da = _da()
    op = "top_k"
    a = _axis_of(x, axis, op, dates=True)
    n = _lane_length(x, a)
    k = _count(k, "k", 0, n, op)
    if mode not in ("largest", "smallest"):
        raise ValueError(f"top_k: mode must be 'largest' or 'smallest', got {mode!r}")
    sorted = _flag(sorted, "sorted", op)
    index_dtype = _index_dtype(index_dtype, n, op)
    if a is None:
        out_chunks: tuple = ((k,),)
    else:
        out_chunks = tuple((k,) if d == a else c for d, c in enumerate(x.chunks))
    if k == 0 or x.size == 0:
        shape = tuple(sum(c) for c in out_chunks)
        return ValuesIndices(da.from_array(np.empty(shape, x.dtype), chunks=out_chunks),
                             da.from_array(np.empty(shape, index_dtype), chunks=out_chunks))
    token = tokenize(x, op, k, a, mode, sorted, index_dtype)
    name = f"axisops-top-k-{token}"
    dsk: dict[Any, Any] = {}
    starts = [list(itertools.accumulate(c, initial=0)) for c in x.chunks]
    lane_axis = 0 if a is None else a
    combine = functools.partial(_merge, axis=lane_axis, k=k, mode=mode)
    if a is None:
        groups = {(): list(itertools.product(*(range(b) for b in x.numblocks)))}
    else:
        others = [range(b) if d != a else [0] for d, b in enumerate(x.numblocks)]
        groups = {g: [g[:a] + (j,) + g[a + 1:] for j in range(x.numblocks[a])]
                  for g in itertools.product(*others)}
    for g, blocks in groups.items():
        leaves = []
        for b in blocks:
            key = (f"{name}-leaf", *b)
            at = tuple(starts[d][i] for d, i in enumerate(b))
            dsk[key] = (functools.partial(_leaf, axis=a, k=k, mode=mode, at=at, shape=x.shape),
                        (x.name, *b))
            leaves.append(key)
        level = 0
        while len(leaves) > 1:
            merged = []
            for j in range(0, len(leaves), SPLIT_EVERY):
                key = (f"{name}-merge-{level}", *g, j)
                dsk[key] = (combine, list(leaves[j:j + SPLIT_EVERY]))
                merged.append(key)
            leaves, level = merged, level + 1
        root = (f"{name}-root", *g)
        dsk[root] = (functools.partial(_root, axis=lane_axis, sorted=sorted,
                                       index_dtype=index_dtype), leaves[0])
        for field in (0, 1):
            out_key = (f"{name}-{field}",) + (g or (0,))
            dsk[out_key] = (_field, root, field)
    arrays = []
    for field, dtype in ((0, x.dtype), (1, index_dtype)):
        out = f"{name}-{field}"
        layer = {key: task for key, task in dsk.items() if key[0] == out}
        rest = {key: task for key, task in dsk.items() if key[0] != f"{name}-0"
                and key[0] != f"{name}-1"}
        graph = HighLevelGraph.from_collections(out, {**rest, **layer}, dependencies=[x])
        arrays.append(da.Array(graph, out, out_chunks, dtype=dtype,
                               meta=_meta(len(out_chunks), dtype)))
    return ValuesIndices(arrays[0], arrays[1])


def _field(pair, k: int):
    return pair[k]


def _leaf(block, *, axis, k, mode, at, shape):
    """A chunk's first ``min(k, its length)`` with global indices (flat for None)."""
    if axis is None:
        grids = np.ix_(*(np.arange(s, s + b, dtype=np.int64) for s, b in zip(at, block.shape)))
        strides = _c_strides(shape)
        flat = sum((g * st for g, st in zip(grids, strides)), np.zeros((), np.int64))
        flat = np.broadcast_to(flat, block.shape).reshape(-1)
        values = block.reshape(-1)
        v, i = _NUMPY["top_k"](values, min(k, values.size), 0, mode=mode, sorted=True)
        return v, flat[i]
    v, i = _NUMPY["top_k"](block, min(k, block.shape[axis]), axis, mode=mode, sorted=True)
    return v, i + at[axis]


def _merge(pairs, *, axis, k, mode):
    """The first ``k`` of candidate sets: put in global-index order, then the NumPy
    path's stable ``top_k``: the order of the whole lane."""
    v = np.concatenate([p[0] for p in pairs], axis=axis)
    i = np.concatenate([p[1] for p in pairs], axis=axis)
    order = np.argsort(i, axis=axis, kind="stable")
    v = np.take_along_axis(v, order, axis)
    i = np.take_along_axis(i, order, axis)
    tv, ti = _NUMPY["top_k"](v, min(k, v.shape[axis]), axis, mode=mode, sorted=True)
    return tv, np.take_along_axis(i, ti, axis)


def _root(pair, *, axis, sorted, index_dtype):
    """The final order: ``sorted=False`` lists the ``k`` in lane order, as the NumPy
    path does."""
    v, i = pair
    if not sorted:
        order = np.argsort(i, axis=axis, kind="stable")
        v = np.take_along_axis(v, order, axis)
        i = np.take_along_axis(i, order, axis)
    return np.ascontiguousarray(v), np.ascontiguousarray(i.astype(index_dtype))


def _c_strides(shape) -> list[int]:
    out, step = [], 1
    for s in reversed(tuple(shape)):
        out.append(step)
        step *= int(s)
    return out[::-1]


# ------------------------------------------------------------- the order keys


def order_keys(values: np.ndarray) -> np.ndarray:
    """NumPy's version of ``axisops.kernels.order.order_key``: the unsigned keys (of
    the elements' width) that sort as NumPy sorts, NaN (NaT) the greatest."""
    masks = K.key_masks(values.dtype)
    top, sign, negmask, flip, mag, nonzero, expo, dshift, _, zero, _, shift = masks
    b = np.asarray(values).view(f"u{values.dtype.itemsize}")
    k = b ^ (((zero - (b >> shift)) & negmask) | flip)
    m = b & mag
    k = np.where((m | nonzero) == zero, sign, k - dshift)
    return np.where(m > expo, top, k)


def key_bits(keys: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The elements (of *dtype*) whose keys are *keys* (``kernels.order.key_bits``;
    the zero key gives +0.0, the NaN key a NaN)."""
    masks = K.key_masks(dtype)
    _, _, negmask, flip, _, _, _, dshift, _, _, one, shift = masks
    k = keys.astype(f"u{dtype.itemsize}") + dshift
    return (k ^ ((((k >> shift) - one) & negmask) | flip)).view(dtype)


# ------------------------------------------------------- the selection by counting


@dataclass(frozen=True)
class Places:
    """Which places of each lane's stable order a selection finds, and what is done
    with the elements found (the NumPy path's code, per block of lanes).

    ``kind``: "median" (``median``; ``nanmedian`` of non-floats), "nanmedian",
    "quantile", "kth" (``kthvalue``), "grad" (the gradients' lower and upper
    elements, ``axisops.order.chosen_elements``)."""

    kind: str
    n: int
    dtype: np.dtype
    skip_nan: bool = False
    method: str = "linear"
    q: Any = None            # quantile: the q given (a weak Python number kept)
    k: int = 0
    whole: bool = False      # quantile: no kept axes (one lane)

    @property
    def floating(self) -> bool:
        return self.dtype.kind == "f"

    def qf(self) -> np.ndarray:
        if self.kind == "grad" and self.q is None:
            return np.asarray(np.asanyarray(0.5), np.float64).reshape(-1)
        return np.asanyarray(self.q).reshape(-1)

    @property
    def m(self) -> int:
        if self.kind == "kth":
            return 1
        if self.kind == "median":
            return 1 if self.n % 2 else 2
        if self.kind == "nanmedian":
            return 2
        Q = self.qf().size
        if self.kind == "quantile" and self.method in _DISCRETE:
            return Q
        return 2 * Q

    def counts(self, nans: np.ndarray) -> np.ndarray:
        if self.skip_nan and self.floating:
            return self.n - nans
        return np.full(nans.shape, self.n, np.int64)

    def places(self, nans: np.ndarray) -> np.ndarray:
        """(lanes, m) places of each lane (int64)."""
        lanes = nans.shape[0]
        n = self.n
        if self.kind == "kth":
            out = np.full((lanes, 1), self.k - 1)
        elif self.kind == "median":
            out, _ = quantile_places(np.array([n]), None, "linear", False)
        elif self.kind == "nanmedian":
            out, _ = quantile_places(n - nans, None, "linear", True)
        elif self.kind == "quantile":
            out, _ = quantile_places(self.counts(nans), self.qf(), self.method,
                                     self.skip_nan and self.floating)
        else:  # grad
            out, _ = chosen_places(self.counts(nans), self.qf(), self.method)
            if self.floating and not self.skip_nan:  # all of g to the first NaN
                bad = nans > 0
                out = np.where(bad[:, None], (n - nans)[:, None], out)
        return np.ascontiguousarray(np.broadcast_to(out, (lanes, self.m)), np.int64)

    def weights(self, nans: np.ndarray) -> np.ndarray:
        """The gradients' shares (``chosen_elements``' weights), (lanes, 2Q)."""
        counts = self.counts(nans)
        _, share = chosen_places(counts, self.qf(), self.method)
        return chosen_weights(share, counts, nans, self.skip_nan, self.floating)[0]

    def finish(self, values: np.ndarray, nans: np.ndarray) -> np.ndarray:
        """The result (Q, lanes) from the selected elements (lanes, m), by the NumPy
        path's arithmetic (``axisops.order.quantile_from_selected``): its dtype
        never depends on the values (``whole=False``)."""
        if self.kind == "median":
            return quantile_from_selected(values, np.array([self.n]), nans, None, "linear",
                                          self.dtype, skip_nan=False)
        if self.kind == "nanmedian":
            return quantile_from_selected(values, self.n - nans, nans, None, "linear",
                                          self.dtype, skip_nan=True, stacklevel=2)
        return quantile_from_selected(values, self.counts(nans), nans, self.qf(), self.method,
                                      self.dtype, skip_nan=self.skip_nan and self.floating,
                                      weak_q=type(self.q) in (int, float), whole=False,
                                      stacklevel=2)

    def result_dtype(self) -> np.dtype:
        """The dtype :meth:`finish` gives (on made-up elements: no data read)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.finish(np.zeros((1, self.m), self.dtype), np.zeros(1, np.int64)).dtype


class Lanes:
    """A dask array seen as lanes: its reduced *axes* moved last (lazily)."""

    def __init__(self, x, axes: tuple[int, ...]):
        da = _da()
        self.x = x
        self.axes = axes
        self.kept = tuple(d for d in range(x.ndim) if d not in axes)
        self.perm = self.kept + axes
        self.y = x if self.perm == tuple(range(x.ndim)) else x.transpose(self.perm)
        self.nk, self.nr = len(self.kept), len(axes)
        self.red_shape = tuple(int(x.shape[d]) for d in axes)
        self.kept_shape = tuple(int(x.shape[d]) for d in self.kept)
        self.n = int(math.prod(self.red_shape))
        self.kept_ind = tuple(f"k{i}" for i in range(self.nk))
        self.red_ind = tuple(f"r{i}" for i in range(self.nr))
        self.strides = tuple(_c_strides(self.red_shape))
        self.coords = [da.arange(s, chunks=(self.y.chunks[self.nk + i],), dtype=np.int64)
                       for i, s in enumerate(self.red_shape)]
        self.one_chunk = all(x.numblocks[d] == 1 for d in axes)

    @property
    def count_dtype(self) -> np.dtype:
        """The histograms' counts: int32 where a lane's count always fits (half the
        memory of int64)."""
        return np.dtype(np.int32 if self.n < 2**31 else np.int64)

    @property
    def red_axes(self) -> tuple[int, ...]:
        return tuple(range(self.nk, self.nk + self.nr))

    def coord_args(self) -> list:
        out: list = []
        for i, c in enumerate(self.coords):
            out += [c, (self.red_ind[i],)]
        return out

    def digit_bits(self, m: int) -> int:
        lanes = math.prod(max(self.y.chunks[d]) for d in range(self.nk))
        size = lanes * math.prod(max(self.y.chunks[d]) for d in self.red_axes)
        budget = max(HISTOGRAM_BUDGET, size // HISTOGRAM_SHARE)
        bits = math.floor(math.log2(max(budget // max(lanes * m, 1), 1)))
        return min(DIGIT_MAX, max(DIGIT_MIN, bits))


def _digits(width: int, bits: int) -> list[tuple[int, int]]:
    """(shift, bits) of each digit of a *width*-bit number, the most significant first."""
    out = []
    top = width
    while top > 0:
        b = min(bits, top)
        out.append((top - b, b))
        top -= b
    return out


def _flat(block: np.ndarray, nk: int) -> np.ndarray:
    """A block (kept axes, then reduced ones) as (lanes, elements)."""
    lanes = math.prod(block.shape[:nk])
    return block.reshape(lanes, -1)


def _positions(coords, strides) -> np.ndarray:
    """The lane positions (C order of the reduced axes) of a block's elements: sorted."""
    flat = np.zeros((), np.int64)
    for i, (c, s) in enumerate(zip(coords, strides)):
        shape = [1] * len(coords)
        shape[i] = c.size
        flat = flat + c.reshape(shape) * s
    return np.asarray(flat, np.int64).reshape(-1)


def _unsigned(block: np.ndarray, nk: int) -> np.ndarray:
    """A block as (lanes, elements) of unsigned bits of its width (no copy where
    the lanes allow)."""
    return _flat(block, nk).view(f"u{block.dtype.itemsize}")


def _hist_first(block, *, nk, nr, shift, bits, floating, count):
    """Pass 1: per lane, the histogram of the keys' top digit, then its NaN count."""
    flat = _unsigned(block, nk)
    h = np.zeros((flat.shape[0], (1 << bits) + 1), count)
    counting.first_histogram(0, 1, flat, K.key_masks(block.dtype), shift, bits, floating, h)
    return h.reshape(block.shape[:nk] + (1,) * nr + (h.shape[1],))


def _init_state(h, *, nk, places: Places, shift, bits):
    kept = h.shape[:nk]
    lanes = math.prod(kept)
    h = h.reshape(lanes, -1)
    B = 1 << bits
    nans = h[:, B] if places.floating else np.zeros(lanes, np.int64)
    r = places.places(nans)
    state = np.zeros(r.shape, STATE)
    state["nans"] = nans[:, None]
    state["r"] = r
    _narrow(state, h[:, None, :B], "key", shift)
    return state.reshape(kept + (r.shape[1],))


def _narrow(state: np.ndarray, h: np.ndarray, field: str, shift: int) -> None:
    """Each place to the bucket of *h* (lanes, m or 1, B) that holds it."""
    cum = np.cumsum(h, axis=-1)
    cum = np.broadcast_to(cum, state.shape + cum.shape[-1:])
    b = np.count_nonzero(cum <= state["r"][..., None], axis=-1)
    below = np.where(b > 0, np.take_along_axis(cum, np.maximum(b - 1, 0)[..., None],
                                               -1)[..., 0], 0)
    state["r"] -= below
    if field == "key":
        state["key"] |= b.astype(np.uint64) << np.uint64(shift)
    else:
        state["pos"] |= b.astype(np.int64) << shift


def _hist_next(block, state, *coords, nk, nr, shift, bits, mode, strides, count):
    """A further pass: per lane and place, the histogram of the next digit of the
    keys (mode "key") or positions (mode "pos") that match the digits found."""
    flat = _unsigned(block, nk)
    st = state.reshape(flat.shape[0], -1)
    h = np.zeros(st.shape + (1 << bits,), count)
    counting.next_histogram(0, 1, flat, _positions(coords, strides), K.key_masks(block.dtype),
                            shift, bits, mode == "pos", np.ascontiguousarray(st["key"]),
                            np.ascontiguousarray(st["pos"]), h)
    return h.reshape(block.shape[:nk] + (1,) * nr + h.shape[1:])


def _advance(state, h, *, field, shift):
    state = state.copy()
    _narrow(state, h, field, shift)
    return state


def _fetch(block, state, *coords, nk, nr, strides):
    """The bits (as uint64) of the element at each found position; 0 elsewhere."""
    width = f"u{block.dtype.itemsize}"
    bits = _flat(block, nk).view(width) if block.dtype.itemsize else block
    lanes = bits.shape[0]
    st = state.reshape(lanes, -1)
    pos = _positions(coords, strides)
    at = np.searchsorted(pos, st["pos"])
    at = np.minimum(at, pos.size - 1)
    found = pos[at] == st["pos"]
    got = np.take_along_axis(bits, at, axis=1).astype(np.uint64)
    return np.where(found, got, np.uint64(0)).reshape(block.shape[:nk] + (1,) * nr
                                                      + (st.shape[1],))


def _reread(y, state, token: str, p: int):
    """*y* read again for pass *p*: a copy of its graph (new keys, the same tasks)
    that starts only once *state*, the previous pass's result, is complete. Each
    pass then streams ``y``'s chunks anew and lets them go, instead of the whole of
    ``y`` staying in memory from the first pass to the last (the passes would
    otherwise share its keys). A persisted ``y`` is copied as references to its
    chunks: nothing is recomputed."""
    from dask.graph_manipulation import bind

    return bind(y, state, seed=(token, p))


def select(lanes: Lanes, places: Places, *, positions: bool, fetch: bool):
    """The lazy selection (see the module): ``(state, fetched)``, dask arrays of the
    kept axes and the places (``fetched`` None unless *fetch*)."""
    da = _da()
    from dask.base import tokenize

    y, nk, nr = lanes.y, lanes.nk, lanes.nr
    kept_ind, red_ind = lanes.kept_ind, lanes.red_ind
    m = places.m
    width = 8 * y.dtype.itemsize
    bits = lanes.digit_bits(m)
    digits = _digits(width, bits)
    red_one = {r: 1 for r in red_ind}
    token = tokenize(y, places, positions, fetch)
    count = lanes.count_dtype
    shift, b = digits[0]
    h = da.blockwise(functools.partial(_hist_first, nk=nk, nr=nr, shift=shift, bits=b,
                                       floating=places.floating, count=count),
                     kept_ind + red_ind + ("d",), y, kept_ind + red_ind,
                     new_axes={"d": (1 << b) + 1}, adjust_chunks=red_one, dtype=count,
                     meta=_meta(nk + nr + 1, count), name=f"axisops-select-h0-{token}")
    h = h.sum(axis=lanes.red_axes, dtype=count)
    state = da.blockwise(functools.partial(_init_state, nk=nk, places=places, shift=shift,
                                           bits=b),
                         kept_ind + ("m",), h, kept_ind + ("d",), new_axes={"m": m},
                         concatenate=True, dtype=STATE, meta=_meta(nk + 1, STATE),
                         name=f"axisops-select-s0-{token}")
    passes = [("key", s, w) for s, w in digits[1:]]
    if positions or fetch:
        passes += [("pos", s, w) for s, w in _digits(max(1, (lanes.n - 1).bit_length()), bits)]
    for p, (mode, shift, b) in enumerate(passes, 1):
        hist = functools.partial(_hist_next, nk=nk, nr=nr, shift=shift, bits=b, mode=mode,
                                 strides=lanes.strides, count=count)
        h = da.blockwise(hist, kept_ind + red_ind + ("m", "d"), _reread(y, state, token, p),
                         kept_ind + red_ind,
                         state, kept_ind + ("m",), *lanes.coord_args(),
                         new_axes={"d": 1 << b}, adjust_chunks=red_one, dtype=count,
                         meta=_meta(nk + nr + 2, count),
                         name=f"axisops-select-h{p}-{token}")
        h = h.sum(axis=lanes.red_axes, dtype=count)
        state = da.blockwise(functools.partial(_advance, field=mode, shift=shift),
                             kept_ind + ("m",), state, kept_ind + ("m",), h,
                             kept_ind + ("m", "d"), concatenate=True, dtype=STATE,
                             meta=_meta(nk + 1, STATE), name=f"axisops-select-s{p}-{token}")
    fetched = None
    if fetch:
        f = da.blockwise(functools.partial(_fetch, nk=nk, nr=nr, strides=lanes.strides),
                         kept_ind + red_ind + ("m",), _reread(y, state, token, len(passes) + 1),
                         kept_ind + red_ind, state,
                         kept_ind + ("m",), *lanes.coord_args(), adjust_chunks=red_one,
                         dtype=np.uint64, meta=_meta(nk + nr + 1, np.uint64),
                         name=f"axisops-select-f-{token}")
        fetched = f.sum(axis=lanes.red_axes, dtype=np.uint64)
    return state, fetched


def selected_values(state: np.ndarray, fetched, dtype: np.dtype) -> np.ndarray:
    """The selected elements: fetched bits, or the keys turned back into elements."""
    if fetched is not None:
        return fetched.astype(f"u{dtype.itemsize}").view(dtype)
    return key_bits(state["key"], dtype)


# ---------------------------------------------------------- kthvalue, medians, quantiles


def _shaped(result, lanes: Lanes, q_shape: tuple, keepdims: bool):
    """A (kept..., Q) dask array as the NumPy path's result: q's axis first (or none),
    the reduced axes of size one with *keepdims*."""
    da = _da()
    if q_shape:
        result = da.moveaxis(result, -1, 0)
    else:
        result = result[..., 0]
    if keepdims:
        lead = len(q_shape)
        for d in lanes.axes:
            result = da.expand_dims(result, lead + d)
    return result


def _finish_block(state, *fetched, places: Places, nk: int, dtype):
    lanes = math.prod(state.shape[:nk])
    st = state.reshape(lanes, -1)
    values = selected_values(st, fetched[0].reshape(lanes, -1) if fetched else None,
                             places.dtype)
    result = places.finish(values, st["nans"][:, 0]).astype(dtype, copy=False)
    return np.ascontiguousarray(result.T).reshape(state.shape[:nk] + (result.shape[0],))


def _one_chunk_block(block, *, op, nk, nr, args, options):
    """The NumPy path on a block holding whole lanes, as (kept..., Q)."""
    out = np.asarray(_NUMPY[op](block, *args, axis=tuple(range(nk, nk + nr)), **options))
    kept = block.shape[:nk]
    return out.reshape(-1, math.prod(kept)).T.reshape(kept + (-1,))


def _reduced(op: str, x, axes, q_given, q_shape, places: Places, keepdims: bool, args,
             options: dict):
    da = _da()
    lanes = Lanes(x, axes)
    dtype = places.result_dtype()
    Q = math.prod(q_shape)
    if lanes.one_chunk:
        func = functools.partial(_one_chunk_block, op=op, nk=lanes.nk, nr=lanes.nr,
                                 args=args, options=options)
        result = da.blockwise(func, lanes.kept_ind + ("q",), lanes.y,
                              lanes.kept_ind + lanes.red_ind, new_axes={"q": Q},
                              concatenate=True, dtype=dtype,
                              meta=_meta(lanes.nk + 1, dtype))
        result = result.map_blocks(_astype, dtype=dtype, meta=_meta(lanes.nk + 1, dtype),
                                   to=dtype)
    else:
        fetch = places.floating
        state, fetched = select(lanes, places, positions=False, fetch=fetch)
        extra = [fetched, lanes.kept_ind + ("m",)] if fetch else []
        result = da.blockwise(functools.partial(_finish_block, places=places, nk=lanes.nk,
                                                dtype=dtype),
                              lanes.kept_ind + ("q",), state, lanes.kept_ind + ("m",), *extra,
                              new_axes={"q": Q}, concatenate=True, dtype=dtype,
                              meta=_meta(lanes.nk + 1, dtype))
    return _shaped(result, lanes, q_shape, keepdims)


def _astype(block, *, to):
    return block.astype(to, copy=False)


def _empty_reduction(numpy_func, x, *args, **kwargs):
    """NumPy's own result for a zero-size ``x`` (nothing to read), as a dask array."""
    da = _da()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = np.asarray(numpy_func(np.empty(x.shape, x.dtype), *args, **kwargs))
    return da.from_array(out, chunks=out.shape or ())


def median(x, axis=None, *, keepdims=False):
    """Lazy :func:`axisops.median`: exact along chunked axes (see the module)."""
    return _median("median", x, axis, keepdims, skip_nan=False)


def nanmedian(x, axis=None, *, keepdims=False):
    """Lazy :func:`axisops.nanmedian`: exact along chunked axes (see the module)."""
    return _median("nanmedian", x, axis, keepdims, skip_nan=True)


def _median(op, x, axis, keepdims, skip_nan):
    _check_dtype(x.dtype, op, dates=False)
    keepdims = _flag(keepdims, "keepdims", op)
    if x.size == 0:
        return _empty_reduction(np.nanmedian if skip_nan else np.median, x, axis=axis,
                                keepdims=keepdims)
    axes = normalize_axes(axis, x.ndim, op)
    n = int(math.prod(x.shape[d] for d in axes))
    kind = "nanmedian" if skip_nan and x.dtype.kind == "f" else "median"
    places = Places(kind, n, x.dtype, skip_nan=skip_nan)
    return _reduced(op, x, axes, None, (), places, keepdims, (), {})


def quantile(x, q, axis=None, *, method="linear", keepdims=False):
    """Lazy :func:`axisops.quantile`: exact along chunked axes (see the module)."""
    return _quantile("quantile", x, q, axis, method, keepdims, skip_nan=False)


def nanquantile(x, q, axis=None, *, method="linear", keepdims=False):
    """Lazy :func:`axisops.nanquantile`: exact along chunked axes (see the module)."""
    return _quantile("nanquantile", x, q, axis, method, keepdims, skip_nan=True)


def check_quantile_args(op, x, q, method):
    """The NumPy path's checks of ``q`` and ``method`` (``axisops.order.check_quantile``)."""
    return check_quantile(op, x.dtype, q, method)


def _quantile(op, x, q, axis, method, keepdims, skip_nan):
    qa = check_quantile_args(op, x, q, method)
    keepdims = _flag(keepdims, "keepdims", op)
    check_interpolable(op, x.dtype, method)
    axes = normalize_axes(axis, x.ndim, op)
    numpy_func = np.nanquantile if skip_nan else np.quantile
    if x.size == 0 or qa.size == 0:
        return _empty_reduction(numpy_func, x, q, axis=axis, method=method, keepdims=keepdims)
    n = int(math.prod(x.shape[d] for d in axes))
    q_kept = q if type(q) in (int, float) else np.asanyarray(q)
    if qa.dtype.kind != "f":
        # NumPy's own arithmetic for an integer q (0 or 1: the least or greatest
        # element) on the element selected with the same q as a float
        q_kept = qa.astype(np.float64)
    places = Places("quantile", n, x.dtype, skip_nan=skip_nan, method=method, q=q_kept,
                    whole=len(axes) == x.ndim)
    if qa.dtype.kind != "f":
        return _integer_q(op, x, q, qa, axes, places, method, keepdims, skip_nan)
    return _reduced(op, x, axes, q, qa.shape, places, keepdims, (q,), {"method": method})


def _integer_q(op, x, q, qa, axes, places, method, keepdims, skip_nan):
    """An integer ``q`` (NumPy computes in integers): NumPy's quantile of the one
    element per quantile selected with ``q`` as a float (NaN kept for the plain one)."""
    da = _da()
    lanes = Lanes(x, axes)
    numpy_func = np.nanquantile if skip_nan else np.quantile
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dtype = np.asarray(numpy_func(np.zeros(1, x.dtype), q, method=method)).dtype
    Q = qa.size
    state, fetched = select(lanes, places, positions=False, fetch=places.floating)
    extra = [fetched, lanes.kept_ind + ("m",)] if fetched is not None else []
    func = functools.partial(_integer_q_block, places=places, nk=lanes.nk, q=q,
                             method=method, skip_nan=skip_nan, dtype=dtype)
    result = da.blockwise(func, lanes.kept_ind + ("q",), state, lanes.kept_ind + ("m",),
                          *extra, new_axes={"q": Q}, concatenate=True, dtype=dtype,
                          meta=_meta(lanes.nk + 1, dtype))
    return _shaped(result, lanes, qa.shape, keepdims)


def _integer_q_block(state, *fetched, places, nk, q, method, skip_nan, dtype):
    lanes = math.prod(state.shape[:nk])
    st = state.reshape(lanes, -1)
    values = selected_values(st, fetched[0].reshape(lanes, -1) if fetched else None,
                             places.dtype)
    qa = np.asanyarray(q).reshape(-1)
    nans = st["nans"][:, 0]
    out = np.empty((lanes, qa.size), dtype)
    for j, qj in enumerate(qa):
        # the lower and upper places of q 0 or 1 are the same element
        v = values[:, j][:, None]
        if places.floating and not skip_nan:
            v = np.where(nans[:, None] > 0, np.nan, v).astype(values.dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[:, j] = (np.nanquantile if skip_nan else np.quantile)(
                v, qj.item() if isinstance(q, (int, float)) else qj, axis=1, method=method)
    return out.reshape(state.shape[:nk] + (qa.size,))


def kthvalue(x, k, axis=-1, *, keepdims=False, index_dtype=np.int64):
    """Lazy :func:`axisops.kthvalue`: exact along a chunked axis, by the selection by
    counting (see the module): the element at place ``k - 1`` of the stable order."""
    da = _da()
    op = "kthvalue"
    a = _axis_of(x, axis, op, dates=True)
    n = _lane_length(x, a)
    k = _count(k, "k", 1, n, op)
    keepdims = _flag(keepdims, "keepdims", op)
    index_dtype = _index_dtype(index_dtype, n, op)
    axes = tuple(range(x.ndim)) if a is None else (a,)
    lanes = Lanes(x, axes)
    if lanes.one_chunk:
        func = functools.partial(_kth_one_chunk, nk=lanes.nk, nr=lanes.nr, k=k,
                                 index_dtype=index_dtype)
        pair = [da.blockwise(functools.partial(_getfield, func=func, field=f),
                             lanes.kept_ind + ("q",), lanes.y, lanes.kept_ind + lanes.red_ind,
                             new_axes={"q": 1}, concatenate=True, dtype=dt,
                             meta=_meta(lanes.nk + 1, dt))
                for f, dt in ((0, x.dtype), (1, index_dtype))]
    else:
        places = Places("kth", n, x.dtype, k=k)
        state, fetched = select(lanes, places, positions=True, fetch=x.dtype.kind == "f")
        extra = [fetched, lanes.kept_ind + ("m",)] if fetched is not None else []
        pair = [da.blockwise(functools.partial(_kth_block, nk=lanes.nk, field=f, dtype=x.dtype,
                                               index_dtype=index_dtype),
                             lanes.kept_ind + ("m",), state, lanes.kept_ind + ("m",), *extra,
                             concatenate=True, dtype=dt, meta=_meta(lanes.nk + 1, dt))
                for f, dt in ((0, x.dtype), (1, index_dtype))]
    out = []
    for r in pair:
        r = r[..., 0]
        if a is None:
            if keepdims:
                r = r.reshape((1,) * x.ndim)
        elif keepdims:
            r = da.expand_dims(r, a)
        out.append(r)
    return ValuesIndices(out[0], out[1])


def _getfield(block, *, func, field):
    return func(block)[field]


def _kth_one_chunk(block, *, nk, nr, k, index_dtype):
    kept = block.shape[:nk]
    lane = block.reshape(kept + (-1,))
    v, i = _NUMPY["kthvalue"](lane, k, nk, keepdims=True, index_dtype=index_dtype)
    return v, i


def _kth_block(state, *fetched, nk, field, dtype, index_dtype):
    if field == 1:
        return state["pos"].astype(index_dtype)
    lanes = math.prod(state.shape[:nk])
    st = state.reshape(lanes, -1)
    values = selected_values(st, fetched[0].reshape(lanes, -1) if fetched else None, dtype)
    return values.reshape(state.shape)

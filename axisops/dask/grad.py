"""Gradients of dask arrays (see :mod:`axisops.dask`): lazy, any chunking; a task
holds one chunk of each operand (``x``, ``g``, the forward's indices) and carries
of one slice's size, never a whole axis. Each gradient is one layer of tasks
built directly (linear in the number of chunks, however many there are).

* ``sum``, ``mean``: ``g`` broadcast (bit for bit).
* ``max``, ``min``: the lazy maximum (minimum) of each slice, the count of its ties
  (a dask sum of ``x == extreme``), then per chunk the NumPy path's own expression
  ``g / count`` where ``x == extreme``: bit for bit, ties and NaN included.
* ``prod``: per chunk, the products of the elements before and after each one
  within the chunk (no division, so zeros are exact); per chunk its total, and two
  chains of small tasks over the chunks of the reduced axes (in C order) give each
  chunk the product of the chunks before it and of those after it. Real numbers
  are carried as (mantissa, exponent) pairs, so no partial product overflows or
  underflows on its own and the gradient is rounded once: finite wherever its true
  value is, as on the NumPy path. Equal to the NumPy path to rounding (the
  products are associated by chunk).
* ``cumsum``: the lazy scan of ``g`` the other way (to rounding).
* ``cumprod``: chunk ``c`` gets ``P_c * (local_k + others_k * V_c)``, where
  ``local`` is the chunk's own gradient (the NumPy path's kernel, and its rescue
  kernel, not rounded, on lanes that leave the float range), ``others_k`` the
  product of the chunk without ``x_k``, ``P_c`` the product of the chunks before
  it (in scan order) and ``V_c`` the weight the later chunks give its product
  (``V_c = W_{c+1} + T_{c+1} V_{c+1}``, ``T`` a chunk's product and ``W`` the sum
  of its ``g`` times its local outputs): two chains of small tasks, no division
  (zeros exact), (mantissa, exponent) pairs as for ``prod``; to rounding.
* ``logcumsumexp``: ``y`` is the lazy scan; each chunk runs the NumPy path's kernel
  with one more element appended, the next chunk's first ``y`` and its ``Q`` (the
  backward sum there), which a chain of small tasks gives
  (``Q_s = Q^local_s + exp(y_s - y_s') Q_s'``); to rounding.
* ``cummax``, ``cummin``: the forward's indices are runs (each index is its own
  position or the one before's), so ``g`` is added per run, in order, by the NumPy
  path's kernel. A run that crosses chunk borders is continued by a chain over the
  chunks, each step adding one chunk's leading part to the running sum (a chain
  of chunk-sized tasks along the axis), and its total is carried back to where the
  run starts by a chain of small tasks. The additions are the NumPy path's, in its
  order: bit for bit. Indices that are not a forward's (an index neither its own
  position nor the one before's) raise ``ValueError`` when computed where chunks
  split the axis (the NumPy path, and one chunk along the axis, take any indices
  in range); an index out of range raises ``IndexError`` when computed.

Building a graph computes nothing and compiles nothing; the checks that do not
depend on values raise the NumPy path's exceptions while it is built.

>>> import dask.array as da, numpy as np, axisops
>>> g = da.from_array(np.array([1., 2.]), chunks=1)
>>> axisops.grad.mean(g, (2, 3), axis=1).compute()
array([[0.33333333, 0.33333333, 0.33333333],
       [0.66666667, 0.66666667, 0.66666667]])
>>> x = da.from_array(np.array([2., 0., 5., 3.]), chunks=2)
>>> axisops.grad.prod(da.from_array(np.array(1.)), x).compute()
array([ 0., 30.,  0.,  0.])
>>> values, indices = axisops.cummax(x)
>>> axisops.grad.cummax(da.ones(4, chunks=2), indices, (4,)).compute()
array([2., 0., 2., 0.])
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from .. import _complex, _dtypes, _jit
from .. import grad as _np_grad
from .._axes import normalize_axes, normalize_axis, reduced_shape
from .._dispatch import numpy_function
from ..grad import _common as _grad_common
from ..grad import scan as _grad_scan
from ..kernels import scan as _scan_kernels
from . import reduce as _reduce
from . import scan as _scan

__all__ = ["sum", "mean", "prod", "max", "min",
           "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]

_NP_CUMPROD_GRAD = numpy_function(_np_grad.cumprod)
#: Exponents are clipped to this before ``ldexp`` (far outside every float range).
_EXP_LIMIT = 1 << 20
_LOW = np.iinfo(np.int64).min


def _da():
    import dask.array as da

    return da


def _meta(ndim: int, dtype) -> np.ndarray:
    return np.empty((0,) * ndim, dtype)


def _array(x):
    """A dask array as it is; anything else as a NumPy array (chunked later, like ``g``)."""
    return x if isinstance(x, _da().Array) else _dtypes.as_array(x)


def _expanded(g, x_shape, axis, keepdims: bool, op: str):
    """(x_shape, axes, g in keepdims form), checked as the NumPy path checks."""
    x_shape = tuple(int(n) for n in x_shape)
    axes = normalize_axes(axis, len(x_shape), op)
    expected = reduced_shape(x_shape, axes, keepdims)
    if tuple(g.shape) != expected:
        raise ValueError(f"{op}: g has shape {tuple(g.shape)}, expected the forward's output "
                         f"shape {expected}")
    return x_shape, axes, g.reshape(reduced_shape(x_shape, axes, True))


def _scan_g(g, x_shape, axis, op: str):
    """(x_shape, axis, g), ``g`` checked against a scan's output shape (the NumPy
    path's ``_scan_g``): 1-D (0-d for a 0-d ``x``) for ``axis=None``."""
    x_shape = tuple(int(n) for n in x_shape)
    if axis is None:
        expected = (math.prod(x_shape),) if x_shape else ()
    else:
        axis = normalize_axis(axis, len(x_shape), op)
        expected = x_shape
    if tuple(g.shape) != expected:
        raise ValueError(f"{op}: g has shape {tuple(g.shape)}, expected the forward's output "
                         f"shape {expected}")
    return x_shape, axis, g


def _nonzero_chunks(a, axis: int):
    """*a* without chunks of length 0 along *axis* (they have no first element)."""
    chunks = a.chunks[axis]
    if 0 in chunks and len(chunks) > 1 and a.shape[axis]:
        return a.rechunk({axis: tuple(c for c in chunks if c)})
    return a


def _scan_operands(g, others, axis):
    """``g`` and the other operands (NumPy or dask, of ``g``'s shape once flattened)
    as dask arrays chunked as ``g``, scanned along the returned axis: ``axis=None``
    scans the flattened arrays, a 0-d one is made 1-D. Chunks of length 0 are dropped."""
    da = _da()
    if axis is None:
        others = [o.reshape(-1) for o in others]
        axis = 0
    if g.ndim == 0:
        g = g.reshape(1)
        others = [o.reshape(1) for o in others]
    g = _nonzero_chunks(g, axis)
    others = [o.rechunk(g.chunks) if isinstance(o, da.Array) else da.from_array(o, chunks=g.chunks)
              for o in others]
    return g, others, axis


def _lazy(name: str, dsk: dict, inputs: list, chunks, dtype):
    """The dask array of the tasks *dsk* (one layer; its blocks are keyed *name*;
    keys of other names are its intermediate tasks), reading the arrays *inputs*."""
    from dask.highlevelgraph import HighLevelGraph

    graph = HighLevelGraph.from_collections(name, dsk, dependencies=inputs)
    return _da().Array(graph, name, chunks, meta=_meta(len(chunks), dtype))


def _name(op: str, *args) -> str:
    from dask.base import tokenize

    return f"{op}-{tokenize(*args)}"


def _along(block: tuple, axis: int, k: int) -> tuple:
    """The index of block *k* along *axis* in the lane of blocks of *block*."""
    return block[:axis] + (k,) + block[axis + 1:]


# ------------------------------------------------------------------ sum, mean


def sum(g, x_shape, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.sum`: ``g`` broadcast to ``x_shape``."""
    import dask.array as da

    x_shape, _, g = _expanded(g, x_shape, axis, keepdims, "grad.sum")
    return da.broadcast_to(g, x_shape)


def mean(g, x_shape, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.mean`: ``g`` divided by the count, broadcast."""
    import dask.array as da

    x_shape, axes, g = _expanded(g, x_shape, axis, keepdims, "grad.mean")
    count = math.prod(x_shape[d] for d in axes)
    if g.dtype.kind not in "fc":
        g = g.astype(np.float64)
    return da.broadcast_to(g / count if count else g, x_shape)


# ------------------------------------------------------------------ max, min


def max(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.max`: ``g`` split evenly between the tied maxima."""
    return _extreme_grad(g, x, axis, keepdims, "max")


def min(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.min`: ``g`` split evenly between the tied minima."""
    return _extreme_grad(g, x, axis, keepdims, "min")


def _reduction_operands(x, g, axes):
    """``x`` as a dask array (a NumPy one chunked as ``g`` on the kept axes, whole on
    the reduced ones) and ``g`` (keepdims form) rechunked to ``x``'s kept chunks."""
    da = _da()
    if not isinstance(x, da.Array):
        x = da.from_array(x, chunks=tuple(-1 if d in axes else c for d, c in enumerate(g.chunks)))
    g = g.rechunk(tuple((1,) if d in axes else c for d, c in enumerate(x.chunks)))
    return x, g


def _extreme_grad(g, x, axis, keepdims: bool, op: str):
    da = _da()
    name = f"grad.{op}"
    x = _array(x)
    _dtypes.check_dtype(x.dtype, name)
    x_shape, axes, g = _expanded(g, x.shape, axis, keepdims, name)
    if any(x_shape[d] == 0 for d in axes):
        raise ValueError(f"{name}: the forward reduces an empty set, so there is no gradient")
    x, g = _reduction_operands(x, g, axes)
    if x.size == 0:
        return da.zeros(x_shape, dtype=np.result_type(g.dtype, x.dtype, np.float16),
                        chunks=x.chunks)
    dtype = np.result_type(g.dtype, x.dtype, np.float16) if g.dtype.kind != "f" else g.dtype
    extreme = (_reduce.max if op == "max" else _reduce.min)(x, axes, keepdims=True)
    count = da.sum(x == extreme, axis=axes, keepdims=True)  # int64, as np.add.reduce
    return da.map_blocks(_share, x, extreme, count, g, res=dtype, dtype=dtype,
                         meta=_meta(x.ndim, dtype))


def _share(x, extreme, count, g, res):
    """The NumPy path's expression: ``g / count`` where ``x`` is the extreme (a NaN
    slice: no element equals it, 0/0 or g/0 times 0, NaN)."""
    hit = x == extreme
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray((g.astype(res) / count) * hit, dtype=res)


# ------------------------------------------------------------------ number systems
# prod and cumprod multiply chunk summaries in chains; these carry the numbers. Both
# work along axis 1 of (outer, n, inner) arrays, the layout of axisops' scan kernels.


class _Scaled:
    """Real numbers as pairs of arrays ``(m, e)`` meaning ``m * 2**e``, ``|m|`` in
    [0.5, 1) (or 0, inf, NaN): products and sums never overflow or underflow,
    ``value`` rounds once. A product of two such numbers rounds as the plain product
    would where that is a normal float (powers of two are exact), so running
    products are taken plainly and redone with exponents apart (the NumPy path's
    kernels) only on the lanes where one is not a normal float."""

    def __init__(self, work):
        self.work = np.dtype(work)

    def of(self, a):
        m, e = np.frexp(np.asarray(a, self.work))
        return m, e.astype(np.int64)

    of_g = of

    def mul(self, a, b):
        m, k = np.frexp(a[0] * b[0])
        return m, a[1] + b[1] + k

    def _scale(self, a, top):
        """a's mantissas times 2**(e - top), *top* at least every exponent of a
        finite non-zero number (0 where there is none)."""
        return np.ldexp(a[0], np.clip(a[1] - np.where(top == _LOW, 0, top), -_EXP_LIMIT, 0))

    def _top(self, a):
        return np.where(np.isfinite(a[0]) & (a[0] != 0), a[1], _LOW)

    def add(self, a, b):
        top = np.maximum(self._top(a), self._top(b))
        m, k = np.frexp(self._scale(a, top) + self._scale(b, top))
        return m, np.where(top == _LOW, 0, top) + k

    def total(self, a):
        """The sum along axis 1 (kept): each term scaled to the largest exponent (a
        term that falls below the smallest float is below the sum's last bit)."""
        top = np.max(self._top(a), axis=1, initial=_LOW, keepdims=True)
        m, k = np.frexp(self._scale(a, top).sum(axis=1, keepdims=True))
        return m, np.where(top == _LOW, 0, top) + k

    def last(self, a):
        return a[0][:, -1:], a[1][:, -1:]

    def value(self, a):
        return np.ldexp(a[0], np.clip(a[1], -_EXP_LIMIT, _EXP_LIMIT))

    def exclusive(self, x3, reverse: bool):
        """The product of the elements before each one (after, with *reverse*)."""
        x3 = np.asarray(x3, self.work)
        a = x3[:, ::-1] if reverse else x3
        plain = np.ones(a.shape, self.work)
        if a.shape[1] > 1:
            np.cumprod(a[:, :-1], axis=1, out=plain[:, 1:])
        m, e = self.of(plain[:, ::-1] if reverse else plain)
        lane_o, lane_i = np.nonzero(~np.all(_grad_common._normal(plain), axis=1))
        if lane_o.size:  # again with exponents apart (the NumPy path's kernel)
            xm, xe = np.frexp(x3[lane_o, :, lane_i])
            mant = np.empty(xm.shape, self.work)
            expo = np.empty(xm.shape, np.int64)
            _jit.run(_scan_kernels.scaled_exclusive_products, xm.size, xm, xe.astype(np.int64),
                     bool(reverse), mant, expo)
            m[lane_o, :, lane_i] = mant
            e[lane_o, :, lane_i] = expo
        return m, e

    def cumprod_grad(self, x3, g3, exclusive: bool):
        """The gradient of a cumulative product, as the NumPy path computes it (its
        kernel, and its rescue kernel on the lanes where a result is not a normal
        float), but not rounded where the rescue kernel ran."""
        x3 = np.ascontiguousarray(x3, self.work)
        g3 = np.ascontiguousarray(g3, self.work)
        plain, (lane_o, lane_i) = _grad_scan._plain_cumprod_grad(x3, g3, exclusive, False,
                                                               self.work)
        m, e = self.of(plain)
        if lane_o.size:
            xm, xe = np.frexp(x3[lane_o, :, lane_i][..., None])
            gm, ge = np.frexp(g3[lane_o, :, lane_i][..., None])
            om = np.empty(xm.shape, self.work)
            oe = np.empty(xm.shape, np.int64)
            _jit.run(_scan_kernels.cumprod_vjp_scaled, om.size, xm, xe.astype(np.int64), gm,
                     ge.astype(np.int64), _grad_scan._powers_of_half(self.work), bool(exclusive),
                     False, om, oe)
            m[lane_o, :, lane_i] = om[..., 0]
            e[lane_o, :, lane_i] = oe[..., 0]
        return m, e

    def prod_grad(self, g, others):
        return np.ldexp(g * others[0], np.clip(others[1], -_EXP_LIMIT, _EXP_LIMIT))

    def scan_grad(self, a):
        return self.value(a)


class _Plain:
    """Complex numbers as they are (the NumPy path's complex gradients do not keep
    exponents apart either); gradients are conjugated as there (PyTorch's rule)."""

    def __init__(self, work):
        self.work = np.dtype(work)

    def of(self, a):
        return np.asarray(a, self.work)

    def of_g(self, g):
        return np.conj(np.asarray(g, self.work))

    def mul(self, a, b):
        return a * b

    def add(self, a, b):
        return a + b

    def total(self, a):
        return a.sum(axis=1, keepdims=True)

    def last(self, a):
        return a[:, -1:]

    def exclusive(self, x3, reverse: bool):
        a = x3[:, ::-1] if reverse else x3
        out = np.ones(a.shape, self.work)
        if a.shape[1] > 1:
            out[:, 1:] = np.cumprod(a[:, :-1], axis=1)
        return out[:, ::-1] if reverse else out

    def cumprod_grad(self, x3, g3, exclusive: bool):
        # the NumPy path's complex gradient is conj(P) * S with conjugated factors:
        # its conjugate is the real formula with conj(g), which the chains carry
        return np.conj(_NP_CUMPROD_GRAD(g3, x3, 1, exclusive=exclusive))

    def prod_grad(self, g, others):
        return np.conj(others) * g

    def scan_grad(self, a):
        return np.conj(a)


def _arith(x_dtype, g_dtype, op: str):
    """(result dtype, number system) of prod's and cumprod's gradients, checked as
    the NumPy path checks (complex: complex64/complex128 only)."""
    if x_dtype.kind == "c" or g_dtype.kind == "c":
        dtype = np.result_type(x_dtype, g_dtype, np.complex64)
        _complex.check(dtype, op)
        return dtype, _Plain(dtype)
    dtype = np.result_type(x_dtype, g_dtype, np.float16)
    return dtype, _Scaled(np.float32 if dtype == np.float16 else dtype)


# ------------------------------------------------------------------ prod


def prod(g, x, axis=None, keepdims=False):
    """Lazy :func:`axisops.grad.prod`: ``g`` times the product of the other elements."""
    da = _da()
    op = "grad.prod"
    x = _array(x)
    if not (x.dtype.kind == "c" or g.dtype.kind == "c"):
        _dtypes.check_dtype(x.dtype, op)
    x_shape, axes, g = _expanded(g, x.shape, axis, keepdims, op)
    dtype, arith = _arith(x.dtype, g.dtype, op)
    x, g = _reduction_operands(x, g, axes)
    if x.size == 0:
        return da.zeros(x_shape, dtype=dtype, chunks=x.chunks)
    for d in axes:
        x = _nonzero_chunks(x, d)
    name = _name("grad-prod", x, g, axes)
    total, before, after = (f"{part}-{name}" for part in ("total", "before", "after"))
    grid = tuple(x.numblocks[d] for d in axes)  # the chunks of one slice, in C order
    count = math.prod(grid)

    def at(block, k):  # block k (in C order) of the slice of *block*
        index = list(block)
        for d, i in zip(axes, np.unravel_index(k, grid) if axes else ()):
            index[d] = int(i)
        return tuple(index)

    dsk = {}
    for block in np.ndindex(*x.numblocks):
        k = int(np.ravel_multi_index(tuple(block[d] for d in axes), grid)) if axes else 0
        dsk[(total,) + block] = (partial(_prod_total, axes=axes, arith=arith), (x.name,) + block)
        if k == 1:
            dsk[(before,) + block] = (total,) + at(block, 0)
        elif k > 1:
            dsk[(before,) + block] = (arith.mul, (before,) + at(block, k - 1),
                                      (total,) + at(block, k - 1))
        if k == count - 2:
            dsk[(after,) + block] = (total,) + at(block, count - 1)
        elif k < count - 2:
            dsk[(after,) + block] = (arith.mul, (total,) + at(block, k + 1),
                                     (after,) + at(block, k + 1))
        g_block = tuple(0 if d in axes else b for d, b in enumerate(block))
        dsk[(name,) + block] = (partial(_prod_piece, axes=axes, arith=arith, res=dtype),
                                (x.name,) + block, (g.name,) + g_block,
                                (before,) + block if k else None,
                                (after,) + block if k < count - 1 else None)
    return _lazy(name, dsk, [x, g], x.chunks, dtype)


def _to_rows(a, axes):
    """*a* as (kept elements, reduced elements): the reduced axes last, flattened."""
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = np.transpose(a, kept + list(axes))
    return moved.reshape(math.prod(moved.shape[:len(kept)]), -1)


def _from_rows(rows, shape, axes):
    kept = [d for d in range(len(shape)) if d not in axes]
    order = kept + list(axes)
    moved = rows.reshape(tuple(shape[d] for d in order))
    return np.transpose(moved, tuple(int(d) for d in np.argsort(order)))


def _prod_total(block, axes, arith):
    """A chunk's product over the reduced axes, per kept element: (kept, 1, 1)."""
    with np.errstate(all="ignore"):
        rows = _to_rows(block, axes)[:, :, None]  # no chunk of length 0: a last element
        return arith.mul(arith.last(arith.exclusive(rows, False)), arith.of(rows[:, -1:]))


def _prod_piece(block, g, before, after, axes, arith, res):
    """The gradient on one chunk: ``g`` times (product before) * (product after),
    each of the chunks before (after) it and of the chunk's elements before (after)."""
    with np.errstate(all="ignore"):
        rows = np.ascontiguousarray(_to_rows(block, axes), arith.work)[:, :, None]
        pre = arith.exclusive(rows, False)
        post = arith.exclusive(rows, True)
        if before is not None:
            pre = arith.mul(before, pre)
        if after is not None:
            post = arith.mul(post, after)
        g_rows = _to_rows(np.broadcast_to(g, block.shape), axes).astype(arith.work)[:, :, None]
        grad = arith.prod_grad(g_rows, arith.mul(pre, post))
        return _from_rows(grad[:, :, 0], block.shape, axes).astype(res)


# ------------------------------------------------------------------ cumsum, cumprod


def cumsum(g, x_shape, axis=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.grad.cumsum`: the scan of ``g`` the other way."""
    x_shape, axis, g = _scan_g(g, x_shape, axis, "grad.cumsum")
    out = _scan.cumsum(g, axis, dtype=g.dtype, exclusive=exclusive, reverse=not reverse)
    return out.reshape(x_shape)


def _lanes(a, axis: int, dtype=None):
    """A chunk as a C-contiguous (outer, n, inner) array, as the kernels take it."""
    a = np.ascontiguousarray(a, dtype=dtype)
    return a.reshape(math.prod(a.shape[:axis]), a.shape[axis], math.prod(a.shape[axis + 1:]))


def _scan_lanes(a, axis: int, reverse: bool, dtype=None):
    """A chunk as (outer, n, inner) lanes in scan order."""
    return _lanes(np.flip(a, axis) if reverse else a, axis, dtype)


def cumprod(g, x, axis=None, exclusive=False, reverse=False):
    """Lazy :func:`axisops.grad.cumprod`: exact with zeros (no division)."""
    da = _da()
    op = "grad.cumprod"
    x = _array(x)
    if not (x.dtype.kind == "c" or g.dtype.kind == "c"):
        _dtypes.check_dtype(x.dtype, op)
    x_shape, axis, g = _scan_g(g, x.shape, axis, op)
    dtype, arith = _arith(x.dtype, g.dtype, op)
    if math.prod(x_shape) == 0:
        return da.zeros(x_shape, dtype=dtype, chunks=g.chunks if axis is not None else "auto")
    g, (x,), axis = _scan_operands(g, [x], axis)
    exclusive, reverse = bool(exclusive), bool(reverse)
    name = _name("grad-cumprod", x, g, axis, exclusive, reverse)
    summary, before, later = (f"{part}-{name}" for part in ("summary", "before", "later"))
    count = x.numblocks[axis]
    step = -1 if reverse else 1  # the next chunk in scan order is c + step
    first, last = (count - 1, 0) if reverse else (0, count - 1)
    options = dict(axis=axis, arith=arith, exclusive=exclusive, reverse=reverse)
    dsk = {}
    for block in np.ndindex(*x.numblocks):
        c = block[axis]
        dsk[(summary,) + block] = (partial(_cumprod_summary, **options), (x.name,) + block,
                                   (g.name,) + block)
        prev, nxt = _along(block, axis, c - step), _along(block, axis, c + step)
        if c - step == first:
            dsk[(before,) + block] = (_field, (summary,) + prev, 1)
        elif c != first:
            dsk[(before,) + block] = (_total_times, (summary,) + prev, (before,) + prev, arith)
        if c + step == last:
            dsk[(later,) + block] = (_field, (summary,) + nxt, 0)
        elif c != last:
            dsk[(later,) + block] = (_weight_plus, (summary,) + nxt, (later,) + nxt, arith)
        dsk[(name,) + block] = (partial(_cumprod_piece, res=dtype, **options), (x.name,) + block,
                                (g.name,) + block,
                                (before,) + block if c != first else None,
                                (later,) + block if c != last else None)
    return _lazy(name, dsk, [x, g], x.chunks, dtype).reshape(x_shape)


def _field(values: tuple, k: int):
    return values[k]


def _total_times(summary, carry, arith):
    """The product of the chunks before the next one."""
    return arith.mul(carry, summary[1])


def _weight_plus(summary, carry, arith):
    """V before a chunk from V after it: the chunk's ``w`` plus its product times V."""
    return arith.add(summary[0], arith.mul(summary[1], carry))


def _cumprod_summary(x, g, axis, arith, exclusive, reverse):
    """A chunk's ``(w, t)`` per lane, each (outer, 1, inner): ``t`` its product, ``w``
    the sum of ``g`` times its outputs' local products (what the chunk's outputs
    weigh the product of the chunks before it)."""
    with np.errstate(all="ignore"):
        x3 = _scan_lanes(x, axis, reverse, arith.work)
        pre = arith.exclusive(x3, False)
        incl = arith.mul(pre, arith.of(x3))
        terms = arith.mul(arith.of_g(_scan_lanes(g, axis, reverse)), pre if exclusive else incl)
        return arith.total(terms), arith.last(incl)


def _cumprod_piece(x, g, before, later, axis, arith, exclusive, reverse, res):
    """``P * (local + others * V)`` on one chunk (see the module)."""
    with np.errstate(all="ignore"):
        x3 = _scan_lanes(x, axis, reverse, arith.work)
        acc = arith.cumprod_grad(x3, _scan_lanes(g, axis, reverse, arith.work), exclusive)
        if later is not None:
            others = arith.mul(arith.exclusive(x3, False), arith.exclusive(x3, True))
            acc = arith.add(acc, arith.mul(others, later))
        if before is not None:
            acc = arith.mul(before, acc)
        out = arith.scan_grad(acc).reshape(x.shape).astype(res)
        return np.flip(out, axis) if reverse else out


# ------------------------------------------------------------------ logcumsumexp


def logcumsumexp(g, x, axis=None):
    """Lazy :func:`axisops.grad.logcumsumexp`."""
    da = _da()
    op = "grad.logcumsumexp"
    x = _array(x)
    _dtypes.check_dtype(x.dtype, op)
    x_shape, axis, g = _scan_g(g, x.shape, axis, op)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    if math.prod(x_shape) == 0:
        return da.zeros(x_shape, dtype=dtype, chunks=g.chunks if axis is not None else "auto")
    g, (x,), axis = _scan_operands(g, [x], axis)
    x = x.astype(work)
    g = g.astype(work)
    y = _scan.logcumsumexp(x, axis)  # as the NumPy path: of x in the work dtype
    name = _name("grad-logcumsumexp", x, g, axis)
    head, later = f"head-{name}", f"later-{name}"
    count = x.numblocks[axis]
    dsk = {}
    for block in np.ndindex(*x.numblocks):
        c = block[axis]
        nxt = _along(block, axis, c + 1)
        dsk[(head,) + block] = (partial(_lse_head, axis=axis), (y.name,) + block, (g.name,) + block)
        if c == count - 2:
            dsk[(later,) + block] = (_field, (head,) + nxt, 0)
        elif c < count - 2:
            dsk[(later,) + block] = (_lse_carry, (head,) + nxt, (head,) + _along(block, axis, c + 2),
                                     (later,) + nxt)
        dsk[(name,) + block] = (partial(_lse_piece, axis=axis, res=dtype), (x.name,) + block,
                                (y.name,) + block, (g.name,) + block,
                                (head,) + nxt if c < count - 1 else None,
                                (later,) + block if c < count - 1 else None)
    return _lazy(name, dsk, [x, y, g], x.chunks, dtype).reshape(x_shape)


def _exp_diff(a, b):
    """exp(a - b), 1 where a == b (also for equal infinities), as the kernel's."""
    with np.errstate(all="ignore"):
        return np.where(a == b, 1, np.exp(a - b)).astype(a.dtype)


def _lse_head(y, g, axis):
    """``(Q, y)`` at a chunk's first element, each (outer, 1, inner); Q from the chunk
    alone: the kernel with ``x = y`` (every factor ``exp(x_k - y_k)`` is then 1)."""
    y3 = _lanes(y, axis)
    out = np.empty(y3.shape, y3.dtype)
    _jit.run(_scan_kernels.logcumsumexp_vjp, out.size, y3, y3, _lanes(g, axis), out)
    return out[:, :1], y3[:, :1]


def _lse_carry(head, head_next, q_next):
    """Q at a chunk's first element: its own part plus the later chunks', carried
    over the chunk by ``exp(y_first - y_next)``."""
    with np.errstate(all="ignore"):
        return head[0] + _exp_diff(head[1], head_next[1]) * q_next


def _lse_piece(x, y, g, head_next, q_next, axis, res):
    """The NumPy path's kernel on one chunk, with one more element where a chunk
    follows: its first y, and Q there as its g."""
    x3, y3, g3 = _lanes(x, axis), _lanes(y, axis), _lanes(g, axis)
    n = x3.shape[1]
    if head_next is not None:
        y_next = head_next[1]
        x3 = np.concatenate([x3, y_next], axis=1)
        y3 = np.concatenate([y3, y_next], axis=1)
        g3 = np.concatenate([g3, q_next], axis=1)
    out = np.empty(x3.shape, x3.dtype)
    _jit.run(_scan_kernels.logcumsumexp_vjp, out.size, x3, y3, g3, out)
    return out[:, :n].reshape(x.shape).astype(res)


# ------------------------------------------------------------------ cummax, cummin


def cummax(g, indices, x_shape, axis=None):
    """Lazy :func:`axisops.grad.cummax`: ``g`` added at the forward's indices, in order."""
    return _extreme_scan_grad(g, indices, x_shape, axis, "grad.cummax")


def cummin(g, indices, x_shape, axis=None):
    """Lazy :func:`axisops.grad.cummin`: ``g`` added at the forward's indices, in order."""
    return _extreme_scan_grad(g, indices, x_shape, axis, "grad.cummin")


def _extreme_scan_grad(g, indices, x_shape, axis, op: str):
    da = _da()
    x_shape, axis, g = _scan_g(g, x_shape, axis, op)
    if not isinstance(indices, da.Array):
        indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got {indices.dtype}")
    if tuple(indices.shape) != tuple(g.shape):
        raise ValueError(f"{op}: indices has shape {tuple(indices.shape)}, expected g's shape "
                         f"{tuple(g.shape)}")
    n_total = math.prod(x_shape) if axis is None else x_shape[axis]
    dtype = np.dtype(np.int64) if g.dtype == np.bool_ else g.dtype
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    if math.prod(x_shape) == 0:
        return da.zeros(x_shape, dtype=dtype, chunks=g.chunks if axis is not None else "auto")
    g, (idx,), axis = _scan_operands(g, [indices], axis)
    g = g.astype(work)
    name = _name(op.replace(".", "-"), g, idx, axis, n_total)
    state, total = f"state-{name}", f"total-{name}"
    count = g.numblocks[axis]
    starts = np.cumsum((0,) + g.chunks[axis]).tolist()
    dsk: dict = {}
    for block in np.ndindex(*g.numblocks):
        c = block[axis]
        options = dict(axis=axis, start=starts[c], n_total=n_total, op=op)
        if count > 1:  # runs may cross chunk borders
            dsk[(state,) + block] = (partial(_runs_forward, **options), (idx.name,) + block,
                                     (g.name,) + block,
                                     (state,) + _along(block, axis, c - 1) if c else None)
            nxt = _along(block, axis, c + 1)
            if c == count - 1:
                dsk[(total,) + block] = (_field, (state,) + block, 0)
            else:
                dsk[(total,) + block] = (partial(_run_total, start=starts[c + 1]),
                                         (state,) + nxt, (total,) + nxt)
        last = c == count - 1
        dsk[(name,) + block] = (partial(_runs_piece, res=dtype, **options), (idx.name,) + block,
                                (g.name,) + block,
                                None if last else (total,) + block,
                                None if last else (state,) + _along(block, axis, c + 1))
    return _lazy(name, dsk, [g, idx], g.chunks, dtype).reshape(x_shape)


def _check_range(i3, n_total: int, start: int, op: str):
    """The NumPy path's ``IndexError`` (the position is along the scanned axis)."""
    bad = (i3 < 0) | (i3 >= n_total)
    if bad.any():
        o, j, i = np.unravel_index(int(np.argmax(bad.reshape(-1))), i3.shape)
        raise IndexError(f"{op}: index {i3[o, j, i]} at position {start + int(j)} along the "
                         f"axis of indices is out of range [0, {n_total})")


def _runs_forward(idx, g, prev, axis, start, n_total, op):
    """After one chunk, per lane (each (outer, 1, inner)): the running sum of the run
    left open, the total of the run that came in open where it ends here, the
    chunk's first and last index. The incoming run is continued from *prev*,
    element by element, by the NumPy path's kernel."""
    i3, g3 = _lanes(idx, axis, np.int64), _lanes(g, axis)
    _check_range(i3, n_total, start, op)
    outer, n, inner = i3.shape
    last_before = prev[3] if prev is not None else np.full((outer, 1, inner), -1)
    before = np.concatenate([last_before, i3[:, :-1]], axis=1)
    own = start + np.arange(n).reshape(1, n, 1)
    if not np.all((i3 == own) | (i3 == before)):
        raise ValueError(f"{op}: indices are not the forward's (each index is its own "
                         "position or the one before's), which the dask version needs "
                         "where chunks split the axis")
    last = i3[:, -1:]
    acc = np.zeros((outer, 3, inner), g3.dtype)  # incoming run, run left open, the rest
    if prev is not None:
        acc[:, :1] = prev[0]
    dest = np.where(i3 < start, 0, np.where((i3 == last) & (last >= start), 1, 2))
    _jit.run(_scan_kernels.scatter_add_lanes, g3.size, np.ascontiguousarray(dest), g3, acc)
    open_sum = np.where(last < start, acc[:, :1], acc[:, 1:2])
    return open_sum, acc[:, :1], i3[:, :1], last


def _run_total(state, total_after, start):
    """The total of the run crossing the border before the chunk of *state*: where it
    spans that chunk, the one crossing the border after it; else where it ended."""
    return np.where(state[3] < start, total_after, state[1])


def _runs_piece(idx, g, total, state_next, axis, start, n_total, op, res):
    """One chunk's gradient: its own runs added in order by the NumPy path's kernel,
    the run it leaves open replaced by that run's total."""
    i3, g3 = _lanes(idx, axis, np.int64), _lanes(g, axis)
    _check_range(i3, n_total, start, op)
    outer, n, inner = i3.shape
    out = np.zeros((outer, n + 1, inner), g3.dtype)  # the last row takes the other chunks'
    dest = np.where((i3 >= start) & (i3 < start + n), i3 - start, n)
    _jit.run(_scan_kernels.scatter_add_lanes, g3.size, np.ascontiguousarray(dest), g3, out)
    if total is not None:
        last = i3[:, -1:]
        open_run = (state_next[2] == last) & (last >= start)
        at = np.where(open_run, last - start, n)
        np.put_along_axis(out, at, np.where(open_run, total, 0), axis=1)
    return out[:, :n].reshape(idx.shape).astype(res)

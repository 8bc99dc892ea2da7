"""Canonical strided views: how every kernel sees its input.

A kernel never sees an N-d NumPy array. It sees a flat, read-only, 1-D *base*
buffer, the element *offset* of the array's first element in it, and element
strides (which may be negative or zero). :func:`strided_base` builds that without
copying for any view NumPy can make: transposed, sliced, negative-stride,
broadcast (stride 0) and read-only arrays all walk the original memory.

On top of it, :func:`reduction_view` splits a reduction into the ``(outer, n,
inner)`` picture of DESIGN.md, generalised to any set of axes:

* kept dimensions are sorted by stride (the kernel may write its outputs in any
  order: the caller puts them back) and coalesced; the one with the smallest
  stride is ``inner``, the rest are ``outer`` dimensions, walked by unravelling;
* reduced dimensions are coalesced (and, where the order does not matter, sorted
  by stride); the last is ``n``, the rest are walked by unravelling.

Coalescing merges neighbours ``(n1, s1), (n2, s2)`` when ``s1 == n2 * s2``, so a
contiguous block of dimensions becomes one; size-1 dimensions are dropped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided


def needs_copy(x: np.ndarray) -> bool:
    """Whether kernels cannot read *x*'s memory as it is: a foreign byte order,
    misaligned data, or strides that are not whole elements."""
    return (not x.dtype.isnative or not x.flags.aligned
            or any(s % x.itemsize for s in x.strides))


def many_short_rows(shape, axis: int) -> bool:
    """Whether *axis* is a short last axis (2 to 15 long, only size-1 dimensions
    after it) of at least 256 elements: many short rows, each a kernel task of
    its own unless the caller moves the axis to the front and copies back (as
    ``take_along_axis`` and ``scatter`` do; the scans have a loop of their own)."""
    return (1 < shape[axis] < 16 and all(d == 1 for d in shape[axis + 1:])
            and math.prod(shape) >= 256)


def strided_base(x: np.ndarray) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """Return ``(base, offset, strides)`` in elements for the array *x*.

    ``x[idx] == base[offset + sum(idx[d] * strides[d])]`` for every index. The base
    is a read-only 1-D view of *x*'s memory starting at its lowest address; *x* is
    copied only when Numba cannot read its memory directly (non-native byte order,
    misaligned data, strides that are not a multiple of the item size).

    >>> x = np.arange(6.0).reshape(2, 3)[:, ::-1]
    >>> base, off, st = strided_base(x)
    >>> off, st, bool(base[off + 1 * st[0] + 2 * st[1]] == x[1, 2])
    (2, (3, -1), True)
    """
    if needs_copy(x):
        x = np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("="))
    itemsize = x.itemsize
    strides = tuple(s // itemsize if n > 1 else 0 for s, n in zip(x.strides, x.shape))
    if x.size == 0:  # read-only like every other base: one kernel signature, not two
        base = np.zeros(0, x.dtype)
        base.flags.writeable = False
        return base, 0, strides
    if x.flags.c_contiguous:  # the common case, without as_strided's overhead
        base = x.reshape(-1)
        base.flags.writeable = False
        return base, 0, strides
    flip = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)
    low = x[flip]  # same memory, every stride >= 0: data pointer at the lowest address
    offset = sum((n - 1) * -s for n, s in zip(x.shape, strides) if s < 0)
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(x.shape, strides))
    base = as_strided(low, shape=(span,), strides=(itemsize,), writeable=False)
    return base, offset, strides


def coalesce(shape, *strides_lists) -> tuple[list[int], list[list[int]]]:
    """Merge neighbouring dimensions that every stride list walks as one.

    Size-1 dimensions are dropped. Returns the new shape and stride lists.

    >>> coalesce((2, 3, 4), (12, 4, 1))
    ([24], [[1]])
    >>> coalesce((2, 1, 3), (3, 99, 1), (1, 5, 2))
    ([2, 3], [[3, 1], [1, 2]])
    """
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides_lists]
    for d, n in enumerate(shape):
        if n == 1:
            continue
        if out_shape and all(sl[-1] == n * st[d] for sl, st in zip(out_strides, strides_lists)):
            out_shape[-1] *= n
            for sl, st in zip(out_strides, strides_lists):
                sl[-1] = st[d]
        else:
            out_shape.append(n)
            for sl, st in zip(out_strides, strides_lists):
                sl.append(st[d])
    return out_shape, out_strides


def int64_vector(values) -> np.ndarray:
    """Shapes and strides as the 1-D int64 array a kernel takes."""
    return np.asarray(values, dtype=np.int64).reshape(-1)


def c_strides(shape) -> list[int]:
    """Element strides of a C-contiguous array of *shape*.

    >>> c_strides((2, 3, 4))
    [12, 4, 1]
    """
    return [math.prod(shape[d + 1:]) for d in range(len(shape))]


@dataclass
class ReductionView:
    """A reduction seen by a kernel (see the module docstring)."""

    base: np.ndarray
    offset: int
    outer_shape: np.ndarray    # kept dimensions walked by unravelling (C order)
    outer_strides: np.ndarray
    inner: int                 # the kept dimension with the smallest stride
    inner_stride: int
    red_shape: np.ndarray      # reduced dimensions before the last, unravelled
    red_strides: np.ndarray
    n: int                     # the last reduced dimension
    n_stride: int
    kept_order: tuple[int, ...]  # original kept axes (size > 1) in kernel output order

    @property
    def outer(self) -> int:
        return math.prod(self.outer_shape.tolist())

    @property
    def reduced_count(self) -> int:
        return math.prod(self.red_shape.tolist()) * self.n

    @property
    def row_order(self) -> bool:
        """True when ``inner`` walks memory faster than the reduced axis does.

        Then the kernel keeps one running value per ``inner`` element and sweeps
        whole rows (DESIGN.md's loop order); otherwise each output scans its
        reduced elements, which are the nearer ones in memory.
        """
        return self.inner > 1 and abs(self.inner_stride) < abs(self.n_stride)


def reduction_view(x: np.ndarray, axes: tuple[int, ...], *, keep_order: bool) -> ReductionView:
    """Split *x* into kept and reduced dimensions for a reduction over *axes*.

    With ``keep_order`` the reduced dimensions stay in axis order, so the flat
    index of an element within the reduced block is its C-order index over the
    reduced axes (what ``argmax`` with a tuple of axes returns). Without it they
    are sorted by stride, the order that walks memory forward.
    """
    base, offset, strides = strided_base(x)
    kept = [d for d in range(x.ndim) if d not in axes and x.shape[d] > 1]
    kept.sort(key=lambda d: -abs(strides[d]))  # stable: ties keep axis order
    red = [d for d in axes if x.shape[d] > 1]
    if not keep_order:
        red.sort(key=lambda d: -abs(strides[d]))
    kshape, (kstrides,) = coalesce([x.shape[d] for d in kept], [strides[d] for d in kept])
    rshape, (rstrides,) = coalesce([x.shape[d] for d in red], [strides[d] for d in red])
    inner, inner_stride = (kshape.pop(), kstrides.pop()) if kshape else (1, 0)
    n, n_stride = (rshape.pop(), rstrides.pop()) if rshape else (1, 0)
    return ReductionView(
        base=base, offset=offset,
        outer_shape=int64_vector(kshape), outer_strides=int64_vector(kstrides),
        inner=inner, inner_stride=inner_stride,
        red_shape=int64_vector(rshape), red_strides=int64_vector(rstrides),
        n=n, n_stride=n_stride, kept_order=tuple(kept),
    )


def restore_kept_order(flat: np.ndarray, x_shape, view: ReductionView, out_shape) -> np.ndarray:
    """Turn a kernel's outputs (in ``view.kept_order``) into a C-contiguous result."""
    order = view.kept_order
    res = flat.reshape([x_shape[d] for d in order])
    if list(order) != sorted(order):
        res = np.ascontiguousarray(res.transpose(np.argsort(order)))
    return res.reshape(out_shape)


@dataclass
class AxisView:
    """One axis of one or several same-shaped arrays, for scans, gathers and windows.

    ``outer`` are the dimensions before the axis and ``inner`` those after it, each
    coalesced jointly over every array (so an input and a fresh output stay in
    step); strides are in elements, one list per array.
    """

    outer_shape: list[int]
    outer_strides: list[list[int]]
    n: int
    n_strides: list[int]
    inner_shape: list[int]
    inner_strides: list[list[int]]


def axis_view(shape, strides_lists, axis: int) -> AxisView:
    """Split *shape* at *axis* into coalesced ``outer``, the axis, and ``inner``.

    >>> v = axis_view((4, 5, 6, 7), [(210, 42, 7, 1)], 1)
    >>> v.outer_shape, v.n, v.inner_shape, v.inner_strides
    ([4], 5, [42], [[1]])
    >>> axis_view((4, 5, 6), [(30, 6, 1), (1, 4, 20)], 2).outer_shape  # no common walk
    [4, 5]
    """
    before = [st[:axis] for st in strides_lists]
    after = [st[axis + 1:] for st in strides_lists]
    outer_shape, outer_strides = coalesce(shape[:axis], *before)
    inner_shape, inner_strides = coalesce(shape[axis + 1:], *after)
    return AxisView(outer_shape, outer_strides, int(shape[axis]),
                    [int(st[axis]) for st in strides_lists], inner_shape, inner_strides)


@dataclass
class ScanView:
    """A scan (or any operator that keeps the shape) along one axis, seen by a kernel.

    The input is walked as ``(outer, n, mid, inner)``: ``outer`` and ``mid`` are
    walked by unravelling (C order), ``inner`` is the last dimension after the
    axis. The dimensions are coalesced jointly with a fresh C-contiguous output of
    the same shape, so the output is simply a C-contiguous ``(outer, n, mid,
    inner)`` array and ``reshape(x.shape)`` of it is a view.
    """

    base: np.ndarray
    offset: int
    outer_shape: np.ndarray
    outer_strides: np.ndarray
    n: int
    n_stride: int
    mid_shape: np.ndarray
    mid_strides: np.ndarray
    inner: int
    inner_stride: int

    @property
    def outer(self) -> int:
        return math.prod(self.outer_shape.tolist())

    @property
    def mid(self) -> int:
        return math.prod(self.mid_shape.tolist())

    @property
    def out_shape(self) -> tuple[int, int, int, int]:
        return (self.outer, self.n, self.mid, self.inner)


def scan_view(x: np.ndarray, axis: int) -> ScanView:
    """The ``ScanView`` of *x* along *axis* (no copy; see :func:`strided_base`).

    >>> v = scan_view(np.zeros((4, 5, 6, 7)), 1)
    >>> v.out_shape, v.n_stride, v.inner_stride
    ((4, 5, 1, 42), 42, 1)
    >>> v = scan_view(np.zeros((4, 5, 6)).transpose(2, 0, 1), 1)  # shape (6, 4, 5)
    >>> v.out_shape, v.n_stride, v.inner_stride
    ((6, 4, 1, 5), 30, 6)
    """
    base, offset, strides = strided_base(x)
    v = axis_view(x.shape, [strides, c_strides(x.shape)], axis)
    inner_shape, (inner_strides, _) = v.inner_shape, v.inner_strides
    inner, inner_stride = (inner_shape[-1], inner_strides[-1]) if inner_shape else (1, 0)
    return ScanView(
        base=base, offset=offset,
        outer_shape=int64_vector(v.outer_shape), outer_strides=int64_vector(v.outer_strides[0]),
        n=v.n, n_stride=v.n_strides[0] if v.n > 1 else 0,
        mid_shape=int64_vector(inner_shape[:-1]), mid_strides=int64_vector(inner_strides[:-1]),
        inner=inner, inner_stride=inner_stride,
    )

"""Reference twins of unfold and fold (see :mod:`axisops.reference`)."""
from __future__ import annotations

import math
import operator

import numpy as np

from ._common import _as_input

# ------------------------------------------------------------------- sliding windows

def _kernel(kernel_size, op):
    """*kernel_size* as a tuple of 1 to 3 ints >= 1; an int ``k`` means ``(k, k)``.

    Bad length or values: ``ValueError``; entries that are not ints: ``TypeError``.

    >>> _kernel(3, "unfold"), _kernel([2], "unfold"), _kernel((1, 2, 3), "unfold")
    ((3, 3), (2,), (1, 2, 3))
    >>> _kernel((2, 2.0), "unfold")
    Traceback (most recent call last):
    ...
    TypeError: unfold: kernel_size must be an int or a tuple of 1 to 3 ints, got (2, 2.0)
    """
    items = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 2
    if not 1 <= len(items) <= 3:
        raise ValueError(f"{op}: kernel_size must have 1, 2 or 3 entries (one per spatial "
                         f"dimension), got {kernel_size!r}")
    out = []
    for k in items:
        try:
            k = operator.index(k)
        except TypeError:
            raise TypeError(f"{op}: kernel_size must be an int or a tuple of 1 to 3 ints, "
                            f"got {kernel_size!r}") from None
        if k < 1:
            raise ValueError(f"{op}: kernel_size entries must be >= 1, got {kernel_size!r}")
        out.append(k)
    return tuple(out)


def _per_dim(value, d, name, low, op):
    """An int (the same for all *d* dims) or *d* ints, each ``>= low``; else ``ValueError``.

    >>> _per_dim(2, 3, "stride", 1, "unfold"), _per_dim((1, 4), 2, "stride", 1, "unfold")
    ((2, 2, 2), (1, 4))
    """
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,) * d
    msg = f"{op}: {name} must be an int >= {low} or {d} such ints, got {value!r}"
    if len(items) != d:
        raise ValueError(msg)
    out = []
    for v in items:
        try:
            v = operator.index(v)
        except TypeError:
            raise ValueError(msg) from None
        if v < low:
            raise ValueError(msg)
        out.append(v)
    return tuple(out)


def _padding(padding, d, op):
    """*padding* as *d* ``(begin, end)`` pairs: from an int, *d* ints or *d* pairs, all >= 0.

    >>> _padding(1, 2, "fold"), _padding((1, 2), 2, "fold"), _padding([(0, 1)], 1, "fold")
    (((1, 1), (1, 1)), ((1, 1), (2, 2)), ((0, 1),))
    """
    if not isinstance(padding, (tuple, list)):
        (p,) = _per_dim(padding, 1, "padding", 0, op)
        return ((p, p),) * d
    if len(padding) == d and all(isinstance(p, (tuple, list)) for p in padding):
        msg = f"{op}: padding must be an int >= 0, {d} such ints or {d} (begin, end) pairs, " \
              f"got {padding!r}"
        if not all(len(p) == 2 for p in padding):
            raise ValueError(msg)
        return tuple(_per_dim(tuple(p), 2, "padding", 0, op) for p in padding)
    return tuple((p, p) for p in _per_dim(padding, d, "padding", 0, op))


def _window_args(kernel_size, dilation, padding, stride, op):
    """``(kernel, dilation, pads, stride)``: tuples of one entry per spatial dim."""
    kernel = _kernel(kernel_size, op)
    d = len(kernel)
    return (kernel, _per_dim(dilation, d, "dilation", 1, op), _padding(padding, d, op),
            _per_dim(stride, d, "stride", 1, op))


def _positions(sizes, kernel, dilation, pads, stride, op):
    """Output positions per spatial dim, ``(S + pb + pe - dil*(k-1) - 1) // stride + 1``.

    ``ValueError`` where the padded size is smaller than the dilated kernel.

    >>> _positions((5, 4), (3, 2), (1, 2), ((0, 0), (1, 0)), (2, 1), "unfold")
    (2, 3)
    """
    out = []
    for i, (s, k, dl, (pb, pe), st) in enumerate(zip(sizes, kernel, dilation, pads, stride)):
        padded, span = s + pb + pe, dl * (k - 1) + 1
        if padded < span:
            raise ValueError(f"{op}: in spatial dimension {i} the padded size {padded} is "
                             f"smaller than the dilated kernel size {span}")
        out.append((padded - span) // st + 1)
    return tuple(out)


def _windows(kernel, dilation, stride, positions):
    """Yield ``(k, l, where)``: each kernel offset (C order), each output position (C
    order), and the slice of the padded spatial dims the window reads there."""
    for k, offset in enumerate(np.ndindex(*kernel)):
        for l, pos in enumerate(np.ndindex(*positions)):
            yield k, l, tuple(p * st + o * dl for p, o, st, dl in zip(pos, offset, stride,
                                                                       dilation))


def unfold(x, kernel_size, *, dilation=1, padding=0, stride=1, channels_last=False):
    """Sliding windows of *x* as columns (im2col), as ``torch.nn.functional.unfold`` in 1-3 D.

    *x* is ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` with ``len(kernel_size)``
    spatial dims (an int *kernel_size* means 2); with *channels_last*
    ``(N, *spatial, C)`` or ``(*spatial, C)``. The result is ``(N, C*K, L)``, row
    ``c*K + k`` and column ``l`` (``K = prod(kernel_size)``, kernel offsets and the
    ``L`` output positions in C order); with *channels_last* ``(N, L, K*C)``, column
    ``k*C + c``; unbatched without ``N``. Padding reads 0 (False). A loop over kernel
    offsets and output positions, copying one ``(N, C)`` block each.

    >>> x = np.arange(9).reshape(1, 3, 3)
    >>> unfold(x, 2)
    array([[0, 1, 3, 4],
           [1, 2, 4, 5],
           [3, 4, 6, 7],
           [4, 5, 7, 8]])
    >>> unfold(np.array([[1, 2, 3]]), (2,), padding=[(1, 0)])
    array([[0, 1, 2],
           [1, 2, 3]])
    >>> unfold(np.arange(8).reshape(1, 4, 2), (2,), stride=2, channels_last=True)
    array([[[0, 1, 2, 3],
            [4, 5, 6, 7]]])
    >>> unfold(np.ones((2, 3)), (4,))
    Traceback (most recent call last):
    ...
    ValueError: unfold: in spatial dimension 0 the padded size 3 is smaller than the dilated kernel size 4
    """
    return _unfold(x, kernel_size, dilation, padding, stride, channels_last, "unfold")


def _unfold(x, kernel_size, dilation, padding, stride, channels_last, op):
    x = _as_input(x, op, complex_ok=True)
    kernel, dilation, pads, stride = _window_args(kernel_size, dilation, padding, stride, op)
    d = len(kernel)
    if x.ndim not in (d + 1, d + 2):
        layout = ("(N, *spatial, C) or (*spatial, C)" if channels_last
                  else "(N, C, *spatial) or (C, *spatial)")
        raise ValueError(f"{op}: x must have {d + 2} or {d + 1} dimensions {layout} for a "
                         f"{d}-D kernel, got shape {x.shape}")
    xb = x if x.ndim == d + 2 else x[None]
    if channels_last:
        xb = np.moveaxis(xb, -1, 1)
    n, c = xb.shape[:2]
    positions = _positions(xb.shape[2:], kernel, dilation, pads, stride, op)
    padded = np.pad(xb, ((0, 0), (0, 0)) + pads)  # zeros (False for bool)
    K, L = math.prod(kernel), math.prod(positions)
    out = np.zeros((n, c, K, L), x.dtype)
    for k, l, where in _windows(kernel, dilation, stride, positions):
        out[:, :, k, l] = padded[(slice(None), slice(None)) + where]
    out = out.transpose(0, 3, 2, 1).reshape(n, L, K * c) if channels_last else \
        out.reshape(n, c * K, L)
    return np.array(out if x.ndim == d + 2 else out[0], order="C")


def fold(cols, output_size, kernel_size, *, dilation=1, padding=0, stride=1,
         channels_last=False):
    """Sum the columns of :func:`unfold` back into ``(N, C, *output_size)`` (col2im).

    *cols* is ``(N, C*K, L)`` or unbatched ``(C*K, L)``; with *channels_last*
    ``(N, L, K*C)`` or ``(L, K*C)``, giving ``(N, *output_size, C)``. *output_size*
    is an int or one int >= 0 per spatial dim. Each element is the sum of the
    entries whose window covers it, added in increasing kernel index ``k``
    (a loop over ``k`` outside the loop over positions; for one ``k`` a position
    is covered at most once), from 0, in cols' dtype: integers wrap, float16
    accumulates in float32 and is rounded once, bool is the logical or.

    >>> fold(np.ones((4, 4)), (3, 3), 2)
    array([[[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]]])
    >>> fold(np.array([[0, 200, 1], [100, 1, 0]], np.uint8), 2, (2,), padding=1)
    array([[44,  2]], dtype=uint8)
    >>> fold(np.ones((2, 4)), 3, (2,))
    Traceback (most recent call last):
    ...
    ValueError: fold: cols must have shape (N, C*2, 2) or (C*2, 2), got (2, 4)
    """
    op = "fold"
    cols = _as_input(cols, op, complex_ok=True)
    kernel, dilation, pads, stride = _window_args(kernel_size, dilation, padding, stride, op)
    d = len(kernel)
    size = _per_dim(output_size, d, "output_size", 0, op)
    positions = _positions(size, kernel, dilation, pads, stride, op)
    K, L = math.prod(kernel), math.prod(positions)
    want = (f"(N, {L}, {K}*C) or ({L}, {K}*C)" if channels_last
            else f"(N, C*{K}, {L}) or (C*{K}, {L})")
    if cols.ndim not in (2, 3):
        raise ValueError(f"{op}: cols must have shape {want}, got {cols.shape}")
    cb = cols if cols.ndim == 3 else cols[None]
    n = cb.shape[0]
    lax, cax = (1, 2) if channels_last else (2, 1)
    if cb.shape[lax] != L or cb.shape[cax] % K:
        raise ValueError(f"{op}: cols must have shape {want}, got {cols.shape}")
    c = cb.shape[cax] // K
    c4 = cb.reshape(n, L, K, c).transpose(0, 3, 2, 1) if channels_last else \
        cb.reshape(n, c, K, L)
    acc = np.dtype(np.float32) if cols.dtype == np.float16 else cols.dtype
    padded = np.zeros((n, c) + tuple(s + pb + pe for s, (pb, pe) in zip(size, pads)), acc)
    with np.errstate(all="ignore"):  # inf - inf, float32 -> float16 overflow; ints wrap
        for k, l, where in _windows(kernel, dilation, stride, positions):
            target = (slice(None), slice(None)) + where
            if acc.kind == "b":
                padded[target] |= c4[:, :, k, l]
            else:
                padded[target] += c4[:, :, k, l].astype(acc)
        out = padded[(slice(None), slice(None)) + tuple(slice(pb, pb + s) for s, (pb, _)
                                                         in zip(size, pads))].astype(cols.dtype)
    if channels_last:
        out = np.moveaxis(out, 1, -1)
    return np.array(out if cols.ndim == 3 else out[0], order="C")

"""Pooling: max and average over sliding windows, reduced where they are read.

``max_pool`` and ``avg_pool`` are ``torch.nn.functional.max_poolNd`` /
``avg_poolNd`` and ONNX MaxPool / AveragePool in 1, 2 or 3 spatial dimensions,
on the windows of :func:`axisops.unfold` (same ``kernel_size``, ``dilation``,
``padding`` and ``channels_last`` rules), without materialising them: each output
reads its window where it lies (``axisops.kernels.pool``), float16 included (its
bit patterns read in place through a float32 table of their values, not a
float32 copy of the input). As in ``unfold``, the checks and the geometry depend
only on the input's description and the options: a *plan*, made once and reused.

Decisions the contract leaves open, written down here:

* ``stride`` defaults to ``kernel_size``. With ``ceil_mode`` the last window may
  start past the input's end, as PyTorch's rule allows only if it starts inside
  the input or its begin padding (else it is dropped); it then holds fewer
  elements.
* A window with no element of the input (all padding; PyTorch refuses such
  padding, ONNX leaves it undefined) is a ``ValueError``.
* ``max_pool`` takes bool, integers and floats; a NaN in a window wins (the first
  NaN of the window, as ``argmax``: PyTorch's CPU kernel keeps the last), ties go
  to the first in window order. ``return_indices`` gives int64 flat positions in
  each ``(n, c)`` plane's spatial positions (PyTorch's MaxUnpool indices).
* ``avg_pool`` keeps float dtypes (float16 adds in float32 and is rounded once),
  integers and bool give float64 (as ``mean``). The sum runs in window order and
  is divided once by the window's size clipped to the padded input
  (``count_include_pad=True``, PyTorch's divisor) or by its elements inside the
  input.
* Results are new C-contiguous arrays; unbatched inputs give unbatched results.
"""
from __future__ import annotations

import math
from typing import Literal, overload

import numpy as np

from . import _dtypes
from . import window as _window
from ._dispatch import dispatched
from ._jit import planned_call
from ._layout import strided_base
from ._plan import PlanCache, array_key, base_maker
from .kernels import pool as K
from .typing import Array, ArrayLike, Padding, Size

__all__ = ["max_pool", "avg_pool"]

_PLANS = PlanCache()


@overload
def max_pool(x: ArrayLike, kernel_size: Size, *, stride: Size | None = None, dilation: Size = 1,
             padding: Padding = 0, ceil_mode: bool = False, channels_last: bool = False,
             return_indices: Literal[False] = False) -> Array: ...
@overload
def max_pool(x: ArrayLike, kernel_size: Size, *, stride: Size | None = None, dilation: Size = 1,
             padding: Padding = 0, ceil_mode: bool = False, channels_last: bool = False,
             return_indices: Literal[True]) -> tuple[Array, Array]: ...
@dispatched
def max_pool(x: ArrayLike, kernel_size: Size, *, stride: Size | None = None, dilation: Size = 1,
             padding: Padding = 0, ceil_mode: bool = False, channels_last: bool = False,
             return_indices: bool = False) -> Array | tuple[Array, Array]:
    """Max pooling over sliding windows, as ``torch.nn.functional.max_pool1d/2d/3d``.

    The number of spatial dimensions is ``len(kernel_size)`` (an int means 2). No
    window is materialised; padded positions never win.

    Parameters
    ----------
    x : array_like
        ``(N, C, *spatial)`` or ``(C, *spatial)``; with ``channels_last``
        ``(N, *spatial, C)`` or ``(*spatial, C)``. A bool, integer or float dtype,
        any strides.
    kernel_size : int or tuple of ints
        Window size per spatial dimension (1, 2 or 3 of them).
    stride : int or tuple of ints, optional
        Step between windows; default ``kernel_size``.
    dilation : int or tuple of ints, optional
        Spacing of a window's elements. Default 1.
    padding : int, tuple of ints or tuple of (begin, end) pairs, optional
        Padding per spatial dimension (ONNX pairs too). Default 0.
    ceil_mode : bool, optional
        Round the number of windows up (PyTorch's rule). Default False.
    channels_last : bool, optional
        Channels are the last dimension. Default False.
    return_indices : bool, optional
        Also return where each maximum is: its flat position in its ``(n, c)``
        plane's spatial positions (int64), PyTorch's MaxUnpool indices.

    Returns
    -------
    numpy.ndarray or (numpy.ndarray, numpy.ndarray)
        The maxima in ``x``'s dtype, ``(N, C, *L)`` (channels last
        ``(N, *L, C)``), and with ``return_indices`` their indices.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype, or an option is not an
        int or tuple of ints.
    ValueError
        If ``x`` has the wrong number of dimensions, an option is out of range, a
        kernel does not fit the padded input, or a window lies wholly in the padding.

    See Also
    --------
    avg_pool : Average pooling.
    axisops.grad.max_pool : Its gradient (a scatter-add at the indices).

    Examples
    --------
    >>> import numpy as np, axisops
    >>> x = np.array([[[1., 5., 2., 0.], [3., 4., 9., 9.]]])      # (C, H, W)
    >>> axisops.max_pool(x, 2, return_indices=True)
    (array([[[5., 9.]]]), array([[[1, 6]]]))
    """
    return _pool("max_pool", x, kernel_size, stride, dilation, padding, ceil_mode, channels_last,
                 bool(return_indices), True)


@dispatched
def avg_pool(x: ArrayLike, kernel_size: Size, *, stride: Size | None = None, padding: Padding = 0,
             ceil_mode: bool = False, channels_last: bool = False,
             count_include_pad: bool = True) -> Array:
    """Average pooling over sliding windows, as ``torch.nn.functional.avg_pool1d/2d/3d``.

    The number of spatial dimensions is ``len(kernel_size)`` (an int means 2).
    Each window's elements are added in window order and divided once.

    Parameters
    ----------
    x : array_like
        ``(N, C, *spatial)`` or ``(C, *spatial)``; with ``channels_last``
        ``(N, *spatial, C)`` or ``(*spatial, C)``. A bool, integer or float dtype,
        any strides.
    kernel_size : int or tuple of ints
        Window size per spatial dimension (1, 2 or 3 of them).
    stride : int or tuple of ints, optional
        Step between windows; default ``kernel_size``.
    padding : int, tuple of ints or tuple of (begin, end) pairs, optional
        Padding per spatial dimension (ONNX pairs too). Default 0.
    ceil_mode : bool, optional
        Round the number of windows up (PyTorch's rule). Default False.
    channels_last : bool, optional
        Channels are the last dimension. Default False.
    count_include_pad : bool, optional
        Divide by the window's size clipped to the padded input (True, the
        default, PyTorch's) or by its elements inside the input.

    Returns
    -------
    numpy.ndarray
        ``(N, C, *L)`` (channels last ``(N, *L, C)``); float dtypes kept (float16
        computed in float32), float64 for integers and bool.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer or float dtype, or an option is not an
        int or tuple of ints.
    ValueError
        If ``x`` has the wrong number of dimensions, an option is out of range, a
        kernel does not fit the padded input, or a window lies wholly in the padding.

    See Also
    --------
    max_pool : Max pooling.
    axisops.grad.avg_pool : Its gradient (a fold).

    Examples
    --------
    >>> import numpy as np, axisops
    >>> axisops.avg_pool(np.arange(8.).reshape(1, 2, 4), 2)
    array([[[2.5, 4.5]]])
    >>> axisops.avg_pool(np.arange(4.).reshape(1, 1, 4), (1, 3), stride=1, padding=(0, 1))
    array([[[0.33333333, 1.        , 2.        , 1.66666667]]])
    """
    return _pool("avg_pool", x, kernel_size, stride, 1, padding, ceil_mode, channels_last,
                 bool(count_include_pad), False)


# ----------------------------------------------------------------------- planning

def _pool(op, x, kernel_size, stride, dilation, padding, ceil_mode, channels_last, flag, is_max):
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    try:
        key = (op, *array_key(x), _window._option_key(kernel_size),
               None if stride is None else _window._option_key(stride),
               _window._option_key(dilation), _window._option_key(padding),
               _window._flag_key(ceil_mode), _window._flag_key(channels_last), flag)
    except TypeError:
        key = None
    return _PLANS.plan(key, _pool_plan, op, x, kernel_size, stride, dilation, padding,
                       bool(ceil_mode), bool(channels_last), flag, is_max)(x)


class PoolGeometry:
    """Kernel, dilation, stride, (begin, end) padding and window positions of a
    pooling, checked, for an input of a given shape (also the gradients')."""

    def __init__(self, op, x_shape, kernel_size, stride, dilation, padding, ceil_mode,
                 channels_last):
        geo = _window._geometry(op, kernel_size, dilation, padding,
                                kernel_size if stride is None else stride)
        d = geo.d
        x_shape = tuple(x_shape)
        if len(x_shape) not in (d + 1, d + 2):
            layout = ("(N, *spatial, C) or (*spatial, C)" if channels_last
                      else "(N, C, *spatial) or (C, *spatial)")
            raise ValueError(f"{op}: expected x of shape {layout}, of {d + 2} or {d + 1} "
                             f"dimensions for {d} spatial dimensions, got shape {x_shape}")
        self.geo, self.d = geo, d
        self.batched = len(x_shape) == d + 2
        xb = x_shape if self.batched else (1,) + x_shape
        self.batch = xb[0]
        self.channels, self.spatial = (xb[-1], xb[1:-1]) if channels_last else (xb[1], xb[2:])
        self.channels_last = channels_last
        self.positions = _positions(op, geo, self.spatial, ceil_mode)
        lead = (self.batch,) if self.batched else ()
        self.out_shape = (lead + self.positions + (self.channels,) if channels_last
                          else lead + (self.channels,) + self.positions)

    def array(self) -> np.ndarray:
        return self.geo.array(self.spatial, self.positions)

    def pad_end(self) -> np.ndarray:
        return np.array([0] * (3 - self.d) + [p[1] for p in self.geo.padding], np.int64)

    def strides(self, x: np.ndarray) -> tuple[int, np.ndarray]:
        """(offset, element strides (n, c, s1, s2, s3)) of *x* read in place."""
        _, offset, strides = strided_base(x)
        strides = strides if self.batched else (0,) + strides
        if self.channels_last:
            strides = (strides[0], strides[-1]) + strides[1:-1]
        lift = (0,) * (3 - self.d)
        return offset, np.array(strides[:2] + lift + strides[2:], np.int64)


def _positions(op, geo, spatial, ceil_mode) -> tuple[int, ...]:
    """Window positions per dimension (PyTorch's rule with ``ceil_mode``); a
    ``ValueError`` where a kernel does not fit or a window lies wholly in padding."""
    out = []
    # the floor's count, and unfold's error where a kernel does not fit
    for i, (s, count) in enumerate(zip(spatial, geo.positions(op, spatial))):
        begin, end = geo.padding[i]
        span = geo.dilation[i] * (geo.kernel[i] - 1) + 1
        step = geo.stride[i]
        if ceil_mode:  # rounded up, less a last window that would start in the end padding
            count += 1 if (s + begin + end - span) % step else 0
            if (count - 1) * step >= s + begin:
                count -= 1
        # Windows start at (j * step - begin): the first ends before the input where
        # begin >= span, the last starts after it where its start is >= s; any
        # other window overlaps the input, and misses every element of it only with
        # a dilation larger than the input (its taps step over it). Then the windows
        # are checked, the first s * kernel + 1 at most: an element read by a tap
        # fixes the window's start, so at most s * kernel windows read any.
        last = (count - 1) * step - begin
        empty = 0 if begin >= span else count - 1 if last >= s else -1
        if empty < 0 and geo.dilation[i] > s:
            checked = min(count, s * geo.kernel[i] + 1)
            start = np.arange(checked, dtype=np.int64) * step - begin
            k0 = -(np.minimum(start, 0) // geo.dilation[i])  # its first offset at or after 0
            missed = (k0 >= geo.kernel[i]) | (start + k0 * geo.dilation[i] >= s)
            empty = int(np.argmax(missed)) if missed.any() else -1
        if empty >= 0:
            raise ValueError(f"{op}: in spatial dimension {i} window {empty} "
                             f"lies wholly in the padding {geo.padding[i]}; use less padding")
        out.append(count)
    return tuple(out)


def _planes_in_a_row(pg: PoolGeometry, xs: np.ndarray) -> bool:
    """Whether *x*'s (n, c) planes (element strides *xs*, :meth:`PoolGeometry.strides`)
    are C-contiguous and lie one after another, plane k at ``k * size`` from the
    first: the layout :func:`~axisops.kernels.pool.max_pool_planes` reads."""
    step = 1
    for size, stride in zip(reversed(pg.spatial), xs[:1:-1]):
        if size > 1 and stride != step:
            return False
        step *= size
    return ((pg.channels == 1 or xs[1] == step)
            and (pg.batch == 1 or xs[0] == step * pg.channels))


def _result_dtype(dtype: np.dtype, is_max: bool) -> np.dtype:
    if is_max or dtype.kind == "f":
        return dtype
    return np.dtype(np.float64)


def _pool_plan(op, x, kernel_size, stride, dilation, padding, ceil_mode, channels_last, flag,
               is_max):
    """The plan of max_pool / avg_pool for arrays described like *x*."""
    _window._check_number(x.dtype, op)
    pg = PoolGeometry(op, x.shape, kernel_size, stride, dilation, padding, ceil_mode,
                      channels_last)
    res = _result_dtype(x.dtype, is_max)
    out_shape = pg.out_shape
    with_index = is_max and flag
    if math.prod(out_shape) == 0:
        def empty(x):
            out = np.zeros(out_shape, res)
            return (out, np.zeros(out_shape, np.int64)) if with_index else out
        return empty
    # the kernels' elements, in native byte order (the base of an input in
    # another is a native copy; the result is in x's dtype): float16 read in
    # place as its bit patterns, each looked up in the float32 table of their
    # values (exact: the maxima are float16's, and a mean of float16 adds in
    # float32 and is rounded once), bool read as its bytes, every other dtype as
    # it is
    native = x.dtype.newbyteorder("=")
    half = native == np.float16
    bits = (np.dtype(np.uint16) if half else
            np.dtype(np.uint8) if native == np.bool_ else None)
    seen = (np.dtype(np.float32) if half else
            np.dtype(np.uint8) if native == np.bool_ else native)
    table = _dtypes.float16_table() if half else None
    if is_max:  # the element type of the kernel's maxima
        acc = np.full(1, -np.inf if seen.kind == "f" else np.iinfo(seen).min, seen)
    else:  # float32 for float16 and float32 means, else float64
        acc = np.zeros(1, np.float32 if res.kind == "f" and res.itemsize <= 4 else np.float64)
    out_dtype = seen if is_max else acc.dtype
    offset, xs = pg.strides(x)
    make_base = base_maker(x)
    planes = pg.batch * pg.channels
    small_planes = (not channels_last and planes > 1
                    and math.prod(pg.spatial) <= K.SMALL_PLANE and _planes_in_a_row(pg, xs))
    if small_planes:
        kern = K.max_pool_planes(with_index) if is_max else K.avg_pool_small_planes
    elif is_max:
        kern = K.max_pool_rows(channels_last, with_index)
    elif channels_last:
        kern = K.avg_pool_channels_last
    else:
        kern = K.avg_pool_planes
    call = planned_call(kern)
    geo, pad_end = pg.array(), pg.pad_end()
    size = math.prod(out_shape)
    no_index = np.empty(0, np.int64)
    include_pad = bool(flag) if not is_max else False
    work = size * pg.geo.kernel_count
    # the max's indices worked out in int32 where a plane's positions fit
    ilike = np.empty(0, np.int32 if math.prod(pg.spatial) < 2**31 else np.int64)

    def plan(x):
        base = make_base(x)
        if bits is not None:
            base = base.view(bits)
        out = np.empty(size, out_dtype)
        idx = np.empty(size, np.int64) if with_index else no_index
        if small_planes and is_max:
            call(work, base, offset, geo, planes, table, acc, ilike, out, idx)
        elif small_planes:
            call(work, base, offset, geo, pad_end, planes, include_pad, table, acc, out)
        elif is_max:
            call(work, base, offset, xs, geo, pg.batch, pg.channels, table, acc, ilike, out,
                 idx)
        else:
            call(work, base, offset, xs, geo, pad_end, pg.batch, pg.channels, include_pad,
                 table, acc, out)
        if out_dtype != res:
            out = out.view(np.bool_) if res == np.bool_ else out.astype(res)
        out = out.reshape(out_shape)
        return (out, idx.reshape(out_shape)) if with_index else out

    return plan

"""Sliding windows: unfold (im2col) and fold (col2im) in 1, 2 and 3 dimensions.

Both functions check their arguments, lift the problem to three spatial
dimensions, view the input in place (any strides; ``channels_last`` is only
another set of strides) and run one kernel from ``axisops.kernels.window``.
Nothing of that depends on the input's values: it is a *plan* (see
``axisops._plan``), made once per description of the input and options and
reused, so a repeated call costs the kernel and the result's allocation.

Decisions the contract leaves open, written down here:

* ``kernel_size`` as an int means 2-D; a tuple gives 1, 2 or 3 spatial dimensions.
  ``dilation`` and ``stride`` are an int or one per dimension, each >= 1;
  ``padding`` an int, one int per dimension, or one ``(begin, end)`` pair per
  dimension (ONNX pads), each >= 0.
* A kernel (dilated) larger than the padded input is a ``ValueError``, and so is a
  padded input or a result of more than 2**62 elements (:data:`MAX_EXTENT`: no
  array can be that large, and the kernels' offsets are int64). A stride longer
  than the padded input (one window) and the dilation of a kernel of one element
  change nothing and are taken whatever their size.
* ``unfold`` pads with zeros (False); it takes every fixed-width dtype: dates,
  bytes, str, void and structured values move as their bits (``gather.lanes``), and
  their padding is zero bits (1970-01-01 and a zero duration, not NaT: padding is
  bits, as for numbers). ``fold`` adds, in increasing kernel index for every
  element: float16 accumulates in float32 and is rounded once, integers wrap as in
  their dtype, bool adds as logical or, ``timedelta64`` adds as int64 with NaT
  propagating (as ``sum``); other moved dtypes (dates, bytes, ...) are a
  ``TypeError``.
* ``fold``'s ``output_size`` is an int (every dimension) or one per dimension.
* Results are new C-contiguous arrays; unbatched inputs give unbatched results.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from . import _alloc, _complex, _dates, _dtypes
from . import gather as _gather
from ._dispatch import dispatched
from ._dtypes import is_int as _is_int
from ._jit import planned_call
from ._layout import strided_base
from ._plan import PlanCache, array_key, base_maker
from .kernels import window as K
from .typing import Array, ArrayLike, Padding, Size

__all__ = ["unfold", "fold"]

#: The largest padded input, kernel span or result (in elements) a geometry may
#: describe: larger ones are a ``ValueError``, so that every offset the kernels
#: compute fits an int64 (a window's start is at most a padded size from 0).
MAX_EXTENT = 2 ** 62
#: fold works plane by plane when there are at least this many (n, c) planes.
_MIN_PLANES = 16
#: Plans of both functions (see ``axisops._plan``): everything but the kernel's run
#: depends only on the input's shape, strides and dtype and on the options.
_PLANS = PlanCache()


@dispatched
def unfold(x: ArrayLike, kernel_size: Size, *, dilation: Size = 1, padding: Padding = 0,
           stride: Size = 1, channels_last: bool = False) -> Array:
    """Extract sliding windows (im2col), as ``torch.nn.functional.unfold``, in 1-3 dimensions.

    The number of spatial dimensions is ``len(kernel_size)`` (an int means 2).
    Padding reads zeros (False for bool). The result is a new C-contiguous array.

    Parameters
    ----------
    x : array_like
        ``(N, C, *spatial)`` or unbatched ``(C, *spatial)``; with ``channels_last``
        ``(N, *spatial, C)`` or ``(*spatial, C)``. A bool, integer or float dtype,
        any strides.
    kernel_size : int or tuple of ints
        An int means ``(k, k)``; the tuple's length (1, 2 or 3) is the number of
        spatial dimensions. Each entry >= 1.
    dilation : int or tuple of ints, optional
        Spacing of the kernel's elements: an int, or one per spatial dimension,
        each >= 1. Default 1.
    padding : int, tuple of ints or tuple of (int, int) pairs, optional
        Zeros added around the spatial dimensions: an int, one int per spatial
        dimension (both sides), or one ``(begin, end)`` pair per spatial dimension
        (ONNX pads), each >= 0. Default 0.
    stride : int or tuple of ints, optional
        Step between window positions: an int, or one per spatial dimension, each
        >= 1. Default 1.
    channels_last : bool, optional
        Take ``x`` with the channels last and give ``(N, L, K*C)``. Default False.

    Returns
    -------
    numpy.ndarray
        ``(N, C*K, L)`` with row ``c*K + k`` (PyTorch's order; ``K = prod(kernel_size)``,
        ``L`` the number of window positions, both in C order), or with
        ``channels_last`` ``(N, L, K*C)``, column ``k*C + c``: the layout in which a
        convolution is one matrix product. Unbatched inputs drop ``N``.

    Raises
    ------
    TypeError
        If ``x`` is not of a bool, integer, float or complex64/complex128 dtype (object,
        strings, ...), or ``kernel_size`` is not an int or a tuple of ints (a float or
        bool included).
    ValueError
        If ``kernel_size`` has other than 1, 2 or 3 entries or one below 1;
        ``dilation``, ``stride`` or ``padding`` is not of the forms above or has
        an entry out of range (a float included); ``x`` does not have ``d + 1`` or
        ``d + 2`` dimensions for ``d`` spatial dimensions; or a (dilated) kernel
        is larger than the padded input.

    See Also
    --------
    fold : Sum the windows back into an image (col2im).
    axisops.grad.unfold : Gradient of ``unfold`` (a fold).

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> x = np.arange(9.).reshape(1, 1, 3, 3)
    >>> axisops.unfold(x, 2)                                  # 4 windows of 2x2
    array([[[0., 1., 3., 4.],
            [1., 2., 4., 5.],
            [3., 4., 6., 7.],
            [4., 5., 7., 8.]]])
    >>> axisops.unfold(np.arange(4)[None], (2,), padding=[(1, 0)])  # 1-D, unbatched, C=1
    array([[0, 0, 1, 2],
           [0, 1, 2, 3]])
    """
    return _unfold("unfold", x, kernel_size, dilation, padding, stride, channels_last)


def _unfold(op, x, kernel_size, dilation, padding, stride, channels_last):
    if type(x) is not np.ndarray:
        x = _dtypes.as_array(x)
    try:
        key = (op, *array_key(x), _option_key(kernel_size),
               _option_key(dilation), _option_key(padding), _option_key(stride),
               _flag_key(channels_last))
    except TypeError:
        key = None
    return _PLANS.plan(key, _unfold_plan, op, x, kernel_size, dilation, padding, stride,
                       channels_last)(x)


@dispatched
def fold(cols: ArrayLike, output_size: Size, kernel_size: Size, *, dilation: Size = 1,
         padding: Padding = 0, stride: Size = 1, channels_last: bool = False) -> Array:
    """Sum sliding windows back into an image (col2im), in 1-3 dimensions.

    As ``torch.nn.functional.fold`` and ONNX Col2Im. Each element of the result is
    the sum of the column entries whose windows cover it, added in increasing
    kernel index: deterministic, no atomics, the same bits for any number of
    threads. float16 accumulates in float32 and is rounded once, integers wrap as
    in their dtype, bool adds as logical or. The result is a new C-contiguous
    array.

    Parameters
    ----------
    cols : array_like
        ``(N, C*K, L)`` or ``(C*K, L)``; with ``channels_last`` ``(N, L, K*C)`` or
        ``(L, K*C)``, where ``K = prod(kernel_size)`` and ``L`` is the number of
        window positions in ``output_size``. A bool, integer or float dtype, any
        strides.
    output_size : int or tuple of ints
        The spatial shape of the result: an int (every spatial dimension) or one
        per spatial dimension, each >= 0.
    kernel_size : int or tuple of ints
        As in :func:`unfold`: an int means ``(k, k)``; the tuple's length (1, 2 or
        3) is the number of spatial dimensions.
    dilation : int or tuple of ints, optional
        As in :func:`unfold`. Default 1.
    padding : int, tuple of ints or tuple of (int, int) pairs, optional
        As in :func:`unfold`; the padded positions are dropped. Default 0.
    stride : int or tuple of ints, optional
        As in :func:`unfold`. Default 1.
    channels_last : bool, optional
        Take ``cols`` as ``(N, L, K*C)`` and give the channels last. Default False.

    Returns
    -------
    numpy.ndarray
        ``(N, C, *output_size)`` (``channels_last``: ``(N, *output_size, C)``),
        unbatched without ``N``, in ``cols``' dtype.

    Raises
    ------
    TypeError
        If ``cols`` is not of a bool, integer, float or complex64/complex128 dtype
        (object, strings, ...), or ``kernel_size`` is not an int or a tuple of ints (a
        float or bool included).
    ValueError
        If ``kernel_size`` has other than 1, 2 or 3 entries or one below 1;
        ``output_size``, ``dilation``, ``stride`` or ``padding`` is not of the
        forms above or has an entry out of range (a float included); ``cols``
        does not have the shape that ``kernel_size`` and ``output_size`` ask for;
        or a (dilated) kernel is larger than the padded output.

    See Also
    --------
    unfold : Extract the sliding windows (im2col).
    axisops.grad.fold : Gradient of ``fold`` (an unfold).

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> cols = axisops.unfold(np.ones((1, 1, 3, 3)), 2)
    >>> axisops.fold(cols, (3, 3), 2)[0, 0]                    # how many windows cover each element
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    if type(cols) is not np.ndarray:
        cols = _dtypes.as_array(cols)
    try:
        key = ("fold", *array_key(cols), _option_key(output_size), _option_key(kernel_size), _option_key(dilation),
               _option_key(padding), _option_key(stride), _flag_key(channels_last))
    except TypeError:
        key = None
    return _PLANS.plan(key, _fold_plan, cols, output_size, kernel_size, dilation, padding, stride,
                       channels_last)(cols)


# ------------------------------------------------------------------------ plans


def _option_key(value):
    """*value* when it may be part of a plan key: an int, or a tuple of ints or of
    pairs of ints. Anything else (a bool, a NumPy integer, a float equal to an int,
    a list) gets no key, so it goes the validating way every time and can never hit
    a plan made for the ints it equals."""
    if type(value) is int:
        return value
    if type(value) is tuple:
        for v in value:
            if type(v) is not int and (type(v) is not tuple
                                       or not all(type(e) is int for e in v)):
                raise TypeError
        return value
    raise TypeError


def _flag_key(flag):
    """*flag* (``channels_last``) when it is a bool, the only thing a key may hold."""
    if type(flag) is bool:
        return flag
    raise TypeError


def _unfold_plan(op, x, kernel_size, dilation, padding, stride, channels_last):
    """The plan of unfold for arrays described like *x*."""
    x = _dtypes.as_array(x)
    moved = _gather._moves_bits(x.dtype)
    if moved and x.itemsize not in (1, 2, 4, 8):
        return _lanes_unfold_plan(op, x, kernel_size, dilation, padding, stride, channels_last)
    if _complex.is_complex(x.dtype) and not moved:  # a move of elements: the two parts
        _complex.check(x.dtype, op)
        unfold_shape(x.shape, kernel_size, dilation, padding, stride, channels_last, op)
        return lambda x: _complex.componentwise(
            lambda part: _unfold(op, part, kernel_size, dilation, padding, stride,
                                 channels_last), x)
    if not moved:  # (dates, bytes, structured of 1, 2, 4 or 8 bytes: their bits below)
        _check_number(x.dtype, op)
    geo, shape = unfold_shape(x.shape, kernel_size, dilation, padding, stride, channels_last, op)
    d = geo.d
    xb = x if x.ndim == d + 2 else x[None]
    planes = np.moveaxis(xb, -1, 1) if channels_last else xb  # (N, C, *spatial), a view
    batch, channels, spatial = planes.shape[0], planes.shape[1], planes.shape[2:]
    positions = geo.positions(op, spatial)
    dtype = x.dtype
    if math.prod(shape) == 0:
        return lambda x: np.zeros(shape, dtype)
    # planes is a view of x: x's base, with x's strides in planes' order (a base that
    # strided_base had to copy is in x's order, not in planes')
    _, offset, strides = strided_base(x)
    strides = strides if x.ndim == d + 2 else (0,) + strides
    if channels_last:
        strides = (strides[0], strides[-1]) + strides[1:-1]
    xs = np.array(strides[:2] + (0,) * (3 - d) + strides[2:], np.int64)
    bits = np.dtype(f"i{x.itemsize}")
    make_base = base_maker(x)
    size = math.prod(shape)
    alloc = _alloc.empty_function((size,), bits)
    call = planned_call(K.unfold_channels_last if channels_last else K.unfold_rows)
    args = (offset, xs, geo.array(spatial, positions), batch, channels, bits.type(0))

    same = dtype == bits  # gathers move bits: the same-width integer view of x

    def plan(x):
        out = alloc((size,), bits)
        base = make_base(x)
        call(size, base if same else base.view(bits), *args, out)
        return (out if same else out.view(dtype)).reshape(shape)

    return plan


def _lanes_unfold_plan(op, x, kernel_size, dilation, padding, stride, channels_last):
    """The plan of unfold of a dtype moved as lanes of a smaller integer (an item size
    that is not 1, 2, 4 or 8 bytes; see ``gather.lanes``): a take of the lanes view
    along the spatial dimensions, walked in place as one axis, at each window
    element's flat position (zero bits, ``mode="fill"``, where it falls on padding)."""
    geo, shape = unfold_shape(x.shape, kernel_size, dilation, padding, stride, channels_last, op)
    d, dtype = geo.d, x.dtype
    batched = x.ndim == d + 2
    spatial = x.shape[-d - 1:-1] if channels_last else x.shape[-d:]
    positions = geo.positions(op, spatial)
    if math.prod(shape) == 0:
        return lambda x: np.zeros(shape, dtype)
    where = _window_positions(geo, spatial, positions)  # (K, L)
    if channels_last:
        where = np.ascontiguousarray(where.T)  # (L, K)
    start = 1 if channels_last else 2
    lane, count = _gather.lanes(dtype, x.strides)
    lanes_shape = (shape if batched else (1, *shape)) + (count,)

    def plan(x):
        view = _gather.lanes_view(x if batched else x[None], lane)
        res = _gather.take_block(op, view, where, start, start + d, "fill", lane.type(0))
        return _gather.from_lanes(res.reshape(lanes_shape), dtype).reshape(shape)

    return plan


def _window_positions(geo, spatial, positions) -> np.ndarray:
    """(K, L) int64: the flat position in the spatial dimensions (C order) that
    kernel element k of window l reads, or their size (out of range) on padding."""
    d = geo.d
    k = np.indices(geo.kernel).reshape(d, -1)[:, :, None]
    pos = np.indices(positions).reshape(d, -1)[:, None, :]
    pad = np.array([p[0] for p in geo.padding]).reshape(d, 1, 1)
    coord = (pos * np.array(geo.stride).reshape(d, 1, 1) - pad
             + k * np.array(geo.dilation).reshape(d, 1, 1))
    size = np.array(spatial).reshape(d, 1, 1)
    inside = ((coord >= 0) & (coord < size)).all(axis=0)
    flat = np.zeros(inside.shape, np.int64)
    for t in range(d):
        flat = flat * spatial[t] + coord[t]
    return np.where(inside, flat, math.prod(spatial)).astype(np.int64)


def _fold_plan(cols, output_size, kernel_size, dilation, padding, stride, channels_last):
    """The plan of fold for arrays described like *cols*."""
    cols = _dtypes.as_array(cols)
    if cols.dtype.kind == "m":
        return _timedelta_fold_plan(cols.dtype, output_size, kernel_size, dilation, padding,
                                    stride, channels_last)
    if _gather._moves_bits(cols.dtype):
        raise TypeError(f"fold: unsupported dtype {cols.dtype}: fold adds the windows (bool, "
                        "integers, float16/32/64, complex64/128 and timedelta64); "
                        f"{cols.dtype} is only moved (unfold)")
    if _complex.is_complex(cols.dtype):  # sums of moved elements: the two parts
        _complex.check(cols.dtype, "fold")
        return lambda cols: _complex.componentwise(
            lambda part: fold(part, output_size, kernel_size, dilation=dilation, padding=padding,
                              stride=stride, channels_last=channels_last), cols)
    _check_number(cols.dtype, "fold")
    geo = _geometry("fold", kernel_size, dilation, padding, stride)
    d = geo.d
    size = _per_dim("fold", "output_size", output_size, d, low=0)
    positions = geo.positions("fold", size)
    count, total = geo.kernel_count, math.prod(positions)
    if cols.ndim not in (2, 3):
        want = "(N, L, K*C) or (L, K*C)" if channels_last else "(N, C*K, L) or (C*K, L)"
        raise ValueError(f"fold: expected cols of shape {want} with K = {count} and L = {total} "
                         f"for output_size {size}, got shape {cols.shape}")
    batched = cols.ndim == 3
    cb = cols if batched else cols[None]
    width, length = (cb.shape[2], cb.shape[1]) if channels_last else (cb.shape[1], cb.shape[2])
    if width % count or length != total:
        want = "(N, L, K*C)" if channels_last else "(N, C*K, L)"
        raise ValueError(f"fold: expected cols of shape {want} with K = {count} and L = {total} "
                         f"for output_size {size}, got shape {cols.shape}")
    batch, channels = cb.shape[0], width // count
    shape = (batch, *size, channels) if channels_last else (batch, channels, *size)
    if not batched:
        shape = shape[1:]
    check_result_size("fold", shape)
    dtype, work = cols.dtype, _fold_dtype(cols.dtype)
    if math.prod(shape) == 0 or length == 0:
        return lambda cols: _finish(np.zeros(shape, work), dtype)

    def convert(cols):
        if dtype == np.uint64:
            cols = cols.view(np.int64)  # sums wrap to the same bits
        return cols.astype(work, copy=False)

    with warnings.catch_warnings(), np.errstate(all="ignore"):  # the calls report their own
        warnings.simplefilter("ignore")
        converted = convert(cols)  # looked at here only: a plan keeps no array it was made from
    _, offset, cs = strided_base(converted if batched else converted[None])
    make_base = base_maker(converted)
    elements, work_size = math.prod(shape), math.prod(shape) + cols.size
    alloc = _alloc.empty_function((elements,), work)
    args = (offset, np.array(cs, np.int64), geo.array(size, positions), batch, channels)
    planes = batch * channels
    if channels_last:
        kern = K.fold_channels_last
    else:  # whole planes read the columns front to back; rows when planes are few
        kern = K.fold_planes if planes >= _MIN_PLANES else K.fold_rows
    call = planned_call(kern)

    def plan(cols):
        out = alloc((elements,), work)
        call(work_size, make_base(convert(cols)), *args, out)
        return _finish(out.reshape(shape), dtype)

    return plan


def _timedelta_fold_plan(dtype, output_size, kernel_size, dilation, padding, stride,
                         channels_last):
    """fold of ``timedelta64``: the int64 fold of the durations with NaT read as 0,
    NaT wherever a NaT was added (the bool fold of the NaT mask: logical or), as
    ``sum`` propagates NaT. Sums wrap as int64."""
    options = dict(dilation=dilation, padding=padding, stride=stride,
                   channels_last=channels_last)
    native = dtype.newbyteorder("=")

    def plan(cols):
        cols = cols.astype(native, copy=False)
        nat = np.isnat(cols)
        total = fold(np.where(nat, 0, cols.view(np.int64)), output_size, kernel_size, **options)
        hit = fold(nat, output_size, kernel_size, **options)
        return np.where(hit, _dates.NAT, total).view(native).astype(dtype, copy=False)

    return plan


# --------------------------------------------------------------------- helpers


def unfold_shape(x_shape, kernel_size, dilation=1, padding=0, stride=1, channels_last=False,
                 op="unfold"):
    """(geometry, result shape) of ``unfold`` for an input of *x_shape*, all checked."""
    geo = _geometry(op, kernel_size, dilation, padding, stride)
    d = geo.d
    x_shape = tuple(x_shape)
    if len(x_shape) not in (d + 1, d + 2):
        layout = ("(N, *spatial, C) or (*spatial, C)" if channels_last
                  else "(N, C, *spatial) or (C, *spatial)")
        raise ValueError(f"{op}: expected x of shape {layout}, of {d + 2} or {d + 1} dimensions "
                         f"for {d} spatial dimensions, got shape {x_shape}")
    batched = len(x_shape) == d + 2
    xb = x_shape if batched else (1,) + x_shape
    channels, spatial = (xb[-1], xb[1:-1]) if channels_last else (xb[1], xb[2:])
    count, total = geo.kernel_count, math.prod(geo.positions(op, spatial))
    shape = (xb[0], total, count * channels) if channels_last else (xb[0], channels * count, total)
    check_result_size(op, shape)
    return geo, shape if batched else shape[1:]


def check_result_size(op: str, shape) -> None:
    """``ValueError`` where a result of *shape* would have more than
    :data:`MAX_EXTENT` elements (huge padding or tiny strides on a large input)."""
    size = math.prod(shape)
    if size > MAX_EXTENT:
        raise ValueError(f"{op}: the result would have shape {tuple(shape)}, {size} elements, "
                         "more than any array can hold; use less padding or larger strides")



@dataclass
class _Geometry:
    """Kernel, dilation, stride and (begin, end) padding per spatial dimension."""

    kernel: tuple[int, ...]
    dilation: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]

    @property
    def d(self) -> int:
        return len(self.kernel)

    @property
    def kernel_count(self) -> int:
        return math.prod(self.kernel)

    def positions(self, op, spatial) -> tuple[int, ...]:
        """Window positions per dimension; ``ValueError`` when a kernel does not fit."""
        out = []
        for i, s in enumerate(spatial):
            padded = s + sum(self.padding[i])
            span = self.dilation[i] * (self.kernel[i] - 1) + 1
            if padded > MAX_EXTENT:
                raise ValueError(f"{op}: in spatial dimension {i} the padded size {padded} "
                                 f"(size {s}, padding {self.padding[i]}) is larger than any "
                                 f"array can be (2**62); use less padding")
            if padded < span:
                raise ValueError(f"{op}: in spatial dimension {i} the kernel spans {span} "
                                 f"(kernel_size {self.kernel[i]}, dilation {self.dilation[i]}), "
                                 f"larger than the padded input size {padded}")
            out.append((padded - span) // self.stride[i] + 1)
        return tuple(out)

    def array(self, spatial, positions) -> np.ndarray:
        """The kernels' ``geo`` (6, 3): S, L, k, D, T, P, lifted to three dimensions."""
        lift = 3 - self.d
        rows = [spatial, positions, self.kernel, self.dilation, self.stride,
                [p[0] for p in self.padding]]
        fill = [1, 1, 1, 1, 1, 0]
        return np.array([[f] * lift + list(r) for r, f in zip(rows, fill)], np.int64)


def _geometry(op, kernel_size, dilation, padding, stride) -> _Geometry:
    if _is_int(kernel_size):
        kernel_size = (int(kernel_size),) * 2
    kernel = _ints(op, "kernel_size", kernel_size, TypeError)
    if not 1 <= len(kernel) <= 3:
        raise ValueError(f"{op}: kernel_size must have 1, 2 or 3 entries (spatial dimensions), "
                         f"got {kernel_size!r}")
    if min(kernel) < 1:
        raise ValueError(f"{op}: kernel_size entries must be >= 1, got {kernel_size!r}")
    d = len(kernel)
    dilation = _per_dim(op, "dilation", dilation, d, low=1)
    stride = _per_dim(op, "stride", stride, d, low=1)
    # Where they change nothing, huge values are taken as small ones that fit an
    # int64: a stride longer than any padded input gives one window, as does
    # MAX_EXTENT; a kernel of one element reads the same for every dilation.
    stride = tuple(min(t, MAX_EXTENT) for t in stride)
    dilation = tuple(1 if k == 1 else t for k, t in zip(kernel, dilation))
    return _Geometry(kernel, dilation, stride, _padding(op, padding, d))


def _ints(op, name, values, error=ValueError) -> tuple[int, ...]:
    """*values* as a tuple of ints; *error* (kernel_size: TypeError) for anything else."""
    try:
        items = tuple(values)
    except TypeError:
        raise error(f"{op}: {name} must be an int or a tuple of ints, got {values!r}") from None
    if not all(_is_int(v) for v in items):
        raise error(f"{op}: {name} must be an int or a tuple of ints, got {values!r}")
    return tuple(int(v) for v in items)


def _per_dim(op, name, value, d, *, low) -> tuple[int, ...]:
    """An int or d ints, each >= low."""
    if _is_int(value):
        value = (int(value),) * d
    values = _ints(op, name, value)
    if len(values) != d or min(values, default=low) < low:
        raise ValueError(f"{op}: {name} must be an int or {d} ints, each >= {low}, got {value!r}")
    return values


def _padding(op, padding, d) -> tuple[tuple[int, int], ...]:
    """An int, d ints (symmetric) or d (begin, end) pairs, each >= 0."""
    if _is_int(padding):
        padding = (int(padding),) * d
    try:
        items = list(padding)
    except TypeError:
        items = None
    pairs = None
    if items is not None and len(items) == d:
        if all(_is_int(p) for p in items):
            pairs = tuple((int(p), int(p)) for p in items)
        elif all(isinstance(p, (tuple, list)) and len(p) == 2 and _is_int(p[0]) and _is_int(p[1])
                 for p in items):
            pairs = tuple((int(b), int(e)) for b, e in items)
    if pairs is None or min(min(p) for p in pairs) < 0:
        raise ValueError(f"{op}: padding must be an int, {d} ints, or {d} (begin, end) pairs, "
                         f"each >= 0, got {padding!r}")
    return pairs


def _check_number(dtype: np.dtype, op: str) -> None:
    """bool, integers, float16/32/64, else ``TypeError`` naming *op*."""
    _dtypes.check_dtype(dtype, op)
    if dtype.kind == "f" and dtype.itemsize > 8:
        raise TypeError(f"{op}: unsupported dtype {dtype} (the floats axisops takes are "
                        "float16, float32 and float64)")


def _fold_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype fold adds in: float32/float64 (float16 in float32), else int64."""
    if dtype.kind == "f":
        return np.dtype(np.float64) if dtype.itemsize == 8 else np.dtype(np.float32)
    return np.dtype(np.int64)


def _finish(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """fold's sums in *dtype*: rounded once, wrapped, or or-ed (bool)."""
    if out.dtype == dtype:
        return out
    if dtype == np.bool_:
        return out != 0
    if dtype == np.uint64:
        return out.view(np.uint64)
    with np.errstate(over="ignore"):
        return out.astype(dtype)

"""Reference twins of take, take_along_axis, gather_nd and scatter (see :mod:`axisops.reference`)."""
from __future__ import annotations

import builtins
import math
import operator
import warnings

import numpy as np

from ._common import AxisError, _as_input

# ----------------------------------------------------------------- gather and scatter

_MODES = ("raise", "wrap", "clip", "fill")
_REDUCES = (None, "add", "mul", "max", "min")


def _gather_axis(axis, ndim, op, *, none=True):
    """One axis as a non-negative int; ``None`` stays ``None`` where *none* allows it.

    >>> _gather_axis(-1, 3, "take"), _gather_axis(None, 0, "take")
    (2, None)
    """
    if axis is None:
        if none:
            return None
        raise TypeError(f"{op}: axis must be an int, got None")
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{op}: axis must be a single int, got {axis!r}")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{op}: axis must be an int, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim)
    return a % ndim


def _as_indices(indices, op):
    """``np.asarray(indices)``, which must be of an integer dtype (``TypeError``)."""
    a = np.asarray(indices)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got {a.dtype}")
    return a


def _check_range(indices, low, high, op):
    """``IndexError`` naming the first index (C order) outside ``[low, high)``.

    The message is ``axisops._indices.check_in_range``'s, written again here.

    >>> _check_range(np.array([[0, 2], [7, -9]]), -5, 5, "take")
    Traceback (most recent call last):
    ...
    IndexError: take: index 7 at position (1, 0) of indices is out of range [-5, 5)
    """
    for pos in np.ndindex(indices.shape):
        if not low <= int(indices[pos]) < high:
            raise IndexError(f"{op}: index {indices[pos]} at position {pos} of indices "
                             f"is out of range [{low}, {high})")


def _mode(mode, op):
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {', '.join(map(repr, _MODES))}, "
                         f"got {mode!r}")
    return mode


def _fill_value(fill_value, dtype, op):
    """*fill_value* as a scalar of *dtype*: rounded for a float dtype, exact otherwise.

    For an integer or bool dtype the comparison is exact (Python numbers), so 1.5 or
    NaN is no int; for a float dtype the value is rounded (0.1 is float32's 0.1),
    but a finite value that overflows to inf is a ``ValueError``.

    >>> _fill_value(-1, np.dtype(np.int8), "take"), _fill_value(True, np.dtype(np.float16), "take")
    (np.int8(-1), np.float16(1.0))
    >>> _fill_value(300, np.dtype(np.uint8), "take")
    Traceback (most recent call last):
    ...
    ValueError: take: fill_value 300 cannot be represented in uint8
    """
    v = np.asarray(fill_value)
    if v.ndim != 0 or v.dtype.kind not in "biuf":
        raise ValueError(f"{op}: fill_value must be a real number, got {fill_value!r}")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # nan -> int, overflow
        cast = v.astype(dtype)
    a, b = cast.item(), v.item()
    if dtype.kind == "f":
        if math.isinf(a) and not math.isinf(b):
            raise ValueError(f"{op}: fill_value {fill_value!r} cannot be represented in {dtype}")
    elif a != b:
        raise ValueError(f"{op}: fill_value {fill_value!r} cannot be represented in {dtype}")
    return cast[()]


def _resolve(indices, n, mode, op):
    """Each index as a position in ``[0, n)``, and whether it is used (not filled).

    ``raise``: ``[-n, n)`` or ``IndexError``; ``wrap``: Python's ``i % n``;
    ``clip``: ``min(max(i, 0), n - 1)``; ``fill``: ``[-n, n)`` and the rest unused.
    A non-empty *indices* on an empty axis is an ``IndexError`` in every mode but
    ``fill``. Returns two arrays of *indices*' shape: int64 positions and bools.

    >>> _resolve(np.array([-1, 5, 2]), 3, "wrap", "take")
    (array([2, 2, 2]), array([ True,  True,  True]))
    >>> _resolve(np.array([-7, 5, 2], np.int8), 3, "clip", "take")[0]
    array([0, 2, 2])
    >>> _resolve(np.array([-4, -3, 3]), 3, "fill", "take")
    (array([0, 0, 0]), array([False,  True, False]))
    """
    if mode == "raise":
        _check_range(indices, -n, n, op)
    if n == 0 and indices.size and mode in ("wrap", "clip"):
        raise IndexError(f"{op}: cannot index an empty axis (mode={mode!r})")
    pos = np.zeros(indices.shape, np.int64)
    used = np.ones(indices.shape, bool)
    for p in np.ndindex(indices.shape):
        i = int(indices[p])  # a Python int: uint64 above 2**63 stays what it is
        if mode == "wrap":
            pos[p] = i % n
        elif mode == "clip":
            pos[p] = builtins.min(builtins.max(i, 0), n - 1)
        elif -n <= i < n:
            pos[p] = i % n
        else:
            used[p] = False
    return pos, used


def take(x, indices, axis=None, *, mode="raise", fill_value=0):
    """Elements of *x* at *indices* along *axis*, as ``np.take`` and ONNX Gather.

    The result has shape ``x.shape[:axis] + indices.shape + x.shape[axis+1:]``;
    ``axis=None`` takes from the C-ordered flattened array. One index at a time,
    each copying a whole ``x.shape[:axis] + x.shape[axis+1:]`` block.

    >>> x = np.array([[1, 2, 3], [4, 5, 6]])
    >>> take(x, [[2, -1], [0, 0]], axis=1)
    array([[[3, 3],
            [1, 1]],
    <BLANKLINE>
           [[6, 6],
            [4, 4]]])
    >>> take(x, 4), take(x, [7, -8], mode="wrap"), take(x, [7, -8], mode="clip")
    (array(5), array([2, 5]), array([6, 1]))
    >>> take(x, [1, 3], axis=0, mode="fill", fill_value=-1)
    array([[ 4,  5,  6],
           [-1, -1, -1]])
    >>> take(x, [0, 2], axis=0)
    Traceback (most recent call last):
    ...
    IndexError: take: index 2 at position (1,) of indices is out of range [-2, 2)
    """
    op = "take"
    x = _as_input(x, op, complex_ok=True)
    indices = _as_indices(indices, op)
    axis = _gather_axis(axis, x.ndim, op)
    mode = _mode(mode, op)
    fill = _fill_value(fill_value, x.dtype, op) if mode == "fill" else None
    src, ax = (x.reshape(-1), 0) if axis is None else (x, axis)
    pos, used = _resolve(indices, src.shape[ax], mode, op)
    lead = (slice(None),) * ax
    out = np.empty(src.shape[:ax] + indices.shape + src.shape[ax + 1:], x.dtype)
    for p in np.ndindex(indices.shape):
        out[lead + p] = src[lead + (pos[p],)] if used[p] else fill
    return out


def _along_shape(x_shape, i_shape, ax, op):
    """Result shape of :func:`take_along_axis` (``ValueError`` where the sizes cannot meet).

    Off the axis a size of *indices* equal to *x*'s, or 1, gives *x*'s; a size 1 in
    *x* gives *indices*'; a smaller size of *indices* gives its own (the leading
    part of *x*, as ``torch.gather``).

    >>> _along_shape((4, 1, 5, 6), (1, 3, 2, 9), 3, "take_along_axis")
    (4, 3, 2, 9)
    """
    shape = []
    for d, (xi, ii) in enumerate(zip(x_shape, i_shape)):
        if d == ax:
            shape.append(ii)
        elif ii == xi or ii == 1:
            shape.append(xi)
        elif xi == 1 or ii < xi:
            shape.append(ii)
        else:
            raise ValueError(f"{op}: indices have size {ii} in dimension {d}, where x has "
                             f"{xi} (expected at most {xi}, or 1 on either side)")
    return tuple(shape)


def _along_positions(x_shape, i_shape, ax, shape):
    """Yield ``(p, ip, xp)``: each result position (C order), the position of its
    index in *indices*, and of its element in *x* with the axis coordinate left 0."""
    for p in np.ndindex(*shape):
        ip = tuple(0 if d != ax and i_shape[d] == 1 else c for d, c in enumerate(p))
        xp = tuple(0 if d == ax or x_shape[d] == 1 else c for d, c in enumerate(p))
        yield p, ip, xp


def _along_args(x_shape, indices, axis, op):
    """(x's shape as taken, the axis) for take_along_axis and its gradient."""
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"{op}: with axis=None indices must be 1-D, got {indices.ndim}-D")
        return (math.prod(x_shape),), 0
    if indices.ndim != len(x_shape):
        raise ValueError(f"{op}: indices have {indices.ndim} dimensions, expected x's "
                         f"{len(x_shape)}")
    return tuple(x_shape), _gather_axis(axis, len(x_shape), op)


def take_along_axis(x, indices, axis, *, mode="raise", fill_value=0):
    """``out[p] = x[p with p[axis] = indices[p]]``: ``np.take_along_axis``, ``torch.gather``.

    *indices* has ``x.ndim`` dimensions (1 with ``axis=None``, the flattened *x*).
    Off the axis the sizes meet as NumPy broadcasts (a 1 on either side), or a
    smaller size of *indices* uses only the leading part of *x* (torch, ONNX
    GatherElements). A loop over the result's positions.

    >>> x = np.array([[10, 11, 12], [20, 21, 22]])
    >>> take_along_axis(x, np.array([[2, 0], [-1, 1]]), axis=1)
    array([[12, 10],
           [22, 21]])
    >>> take_along_axis(x, np.array([[2, 0]]), axis=1)        # one row of indices for both
    array([[12, 10],
           [22, 20]])
    >>> take_along_axis(x, np.array([[1, 0]]), axis=0)        # the leading two columns
    array([[20, 11]])
    >>> take_along_axis(x, np.array([[3, -4], [0, -1]]), axis=1, mode="fill", fill_value=-1)
    array([[-1, -1],
           [20, 22]])
    """
    op = "take_along_axis"
    x = _as_input(x, op, complex_ok=True)
    indices = _as_indices(indices, op)
    x_shape, ax = _along_args(x.shape, indices, axis, op)
    mode = _mode(mode, op)
    fill = _fill_value(fill_value, x.dtype, op) if mode == "fill" else None
    src = x.reshape(x_shape)
    shape = _along_shape(x_shape, indices.shape, ax, op)
    pos, used = _resolve(indices, x_shape[ax], mode, op)
    out = np.empty(shape, x.dtype)
    for p, ip, xp in _along_positions(x_shape, indices.shape, ax, shape):
        out[p] = src[xp[:ax] + (pos[ip],) + xp[ax + 1:]] if used[ip] else fill
    return out


def _nd_args(x_shape, indices, batch_dims, op):
    """Check gather_nd's shapes; return ``(batch_dims, q)`` and ``IndexError`` on a bad index."""
    try:
        b = operator.index(batch_dims)
    except TypeError:
        raise TypeError(f"{op}: batch_dims must be an int, got "
                        f"{type(batch_dims).__name__}") from None
    if indices.ndim < 1:
        raise ValueError(f"{op}: indices must have at least 1 dimension")
    top = builtins.min(len(x_shape), indices.ndim)
    if not 0 <= b < top:
        raise ValueError(f"{op}: batch_dims must be in [0, {top}), "
                         f"got {b}")
    if tuple(x_shape[:b]) != indices.shape[:b]:
        raise ValueError(f"{op}: the batch dimensions of x {tuple(x_shape[:b])} and of "
                         f"indices {indices.shape[:b]} differ")
    q = indices.shape[-1]
    if not 1 <= q <= len(x_shape) - b:
        raise ValueError(f"{op}: indices.shape[-1] must be in [1, {len(x_shape) - b}], got {q}")
    for pos in np.ndindex(indices.shape):
        n = x_shape[b + pos[-1]]
        if not -n <= int(indices[pos]) < n:
            raise IndexError(f"{op}: index {indices[pos]} at position {pos} of indices "
                             f"is out of range [{-n}, {n})")
    return b, q


def _nd_source(p, indices, x_shape, b, q):
    """Where the slice for ``indices[p]`` starts in *x*: the batch position and the tuple."""
    return p[:b] + tuple(int(indices[p + (t,)]) % x_shape[b + t] for t in range(q))


def gather_nd(x, indices, *, batch_dims=0):
    """Slices of *x* at the index tuples in the last dimension of *indices* (ONNX GatherND).

    The first *batch_dims* dimensions of *x* and *indices* are shared; each
    ``indices[p]`` (``q`` components) indexes the next ``q`` dimensions of
    ``x[p[:batch_dims]]``. Result shape ``indices.shape[:-1] + x.shape[batch_dims+q:]``.

    >>> x = np.arange(12).reshape(2, 3, 2)
    >>> gather_nd(x, [[1, -1], [0, 0]])
    array([[10, 11],
           [ 0,  1]])
    >>> gather_nd(x, [[[2, 1]], [[0, 0]]], batch_dims=1)
    array([[5],
           [6]])
    >>> gather_nd(x, [[0, 3]])
    Traceback (most recent call last):
    ...
    IndexError: gather_nd: index 3 at position (0, 1) of indices is out of range [-3, 3)
    """
    op = "gather_nd"
    x = _as_input(x, op, complex_ok=True)
    indices = _as_indices(indices, op)
    b, q = _nd_args(x.shape, indices, batch_dims, op)
    out = np.empty(indices.shape[:-1] + x.shape[b + q:], x.dtype)
    for p in np.ndindex(indices.shape[:-1]):
        out[p] = x[_nd_source(p, indices, x.shape, b, q)]
    return out


def _as_updates(updates, x_dtype, op):
    """``np.asarray(updates)``, except that a Python bool, int or float is weakly typed
    (NumPy 2's NEP 50): it takes x's dtype when its kind may (bool into anything, int
    into ints and floats, float into floats), an int that does not fit is a
    ``ValueError``; anything else keeps its own dtype for the ``same_kind`` check."""
    kind = {bool: "b", int: "i", float: "f"}.get(type(updates))
    if kind is None:
        return np.asarray(updates)
    if kind == "i" and x_dtype.kind in "iu":
        info = np.iinfo(x_dtype)
        if not info.min <= updates <= info.max:
            raise ValueError(f"{op}: update {updates} does not fit {x_dtype}")
    if kind == "b" or (kind == "i" and x_dtype.kind in "iuf") or (kind == "f" and x_dtype.kind == "f"):
        with np.errstate(over="ignore"):
            return np.asarray(updates, dtype=x_dtype)
    return np.asarray(updates)


def _scatter_args(x_shape, indices, updates, axis, reduce, x_dtype, op):
    """Check scatter's arguments; return ``(axis, the updates used, one per index)``."""
    axis = _gather_axis(axis, len(x_shape), op, none=False)
    if not (reduce is None or (isinstance(reduce, str) and reduce in _REDUCES)):
        raise ValueError(f"{op}: reduce must be None, 'add', 'mul', 'max' or 'min', "
                         f"got {reduce!r}")
    if indices.ndim != len(x_shape):
        raise ValueError(f"{op}: indices have {indices.ndim} dimensions, expected x's "
                         f"{len(x_shape)}")
    for d, (xi, ii) in enumerate(zip(x_shape, indices.shape)):
        if d != axis and ii > xi:
            raise ValueError(f"{op}: indices have size {ii} in dimension {d}, more than "
                             f"x's {xi}")
    if updates.shape == indices.shape:
        used = updates
    elif updates.ndim == indices.ndim and all(u >= i for u, i in zip(updates.shape,
                                                                    indices.shape)):
        used = updates[tuple(slice(0, i) for i in indices.shape)]
    else:
        try:
            used = np.broadcast_to(updates, indices.shape)
        except ValueError:
            raise ValueError(f"{op}: updates of shape {updates.shape} do not fit indices of "
                             f"shape {indices.shape}") from None
    if not np.can_cast(updates.dtype, x_dtype, "same_kind"):
        raise TypeError(f"{op}: cannot cast updates from {updates.dtype} to {x_dtype}")
    _check_range(indices, -x_shape[axis], x_shape[axis], op)
    return axis, used


def _destinations(indices, axis, n):
    """``{destination: [positions of indices]}``, each list in C order of *indices*."""
    groups = {}
    for p in np.ndindex(indices.shape):
        dest = p[:axis] + (int(indices[p]) % n,) + p[axis + 1:]
        groups.setdefault(dest, []).append(p)
    return groups


def _takes_over(reduce, cur, v):
    """Whether update *v* replaces the value *cur* (max/min: NaN sticks, ties keep *cur*)."""
    if reduce is None:
        return True
    if cur != cur:  # NaN already there
        return False
    if v != v:
        return True
    return v > cur if reduce == "max" else v < cur


def scatter(x, indices, updates, axis, *, reduce=None):
    """A copy of *x* with *updates* combined in along *axis* at *indices* (ONNX ScatterElements).

    Position ``p`` of *indices* writes ``updates[p]`` to ``p`` with ``p[axis]``
    replaced by ``indices[p]``, one position at a time in C order: ``reduce=None``
    lets the last write win; ``"add"``/``"mul"`` combine in x's dtype (integers
    wrap; float16 in float32, rounded once at the end; bool: or/and); ``"max"``/
    ``"min"`` let a NaN stick and keep the value already there on a tie (bool:
    or/and). *updates* has indices' shape, or is larger (its leading part is
    used), or broadcasts to it; it casts to x's dtype by ``same_kind``.

    >>> x = np.zeros((2, 3))
    >>> scatter(x, np.array([[2, 0, 2]]), np.array([[1.0, 2.0, 3.0]]), axis=1)
    array([[2., 0., 3.],
           [0., 0., 0.]])
    >>> scatter(x, np.array([[2, 0, 2]]), np.array([[1.0, 2.0, 3.0]]), axis=1, reduce="add")
    array([[2., 0., 4.],
           [0., 0., 0.]])
    >>> scatter(np.array([1, 5], np.int8), np.array([0, 0, 1]), np.int8(100), 0, reduce="mul")
    array([ 16, -12], dtype=int8)
    >>> scatter(np.array([0.0, 1.0]), np.array([0, 1]), [np.nan, -1.0], 0, reduce="max")
    array([nan,  1.])
    """
    op = "scatter"
    x = _as_input(x, op, complex_ok=reduce not in ("max", "min"))
    indices = _as_indices(indices, op)
    updates = _as_updates(updates, x.dtype, op)
    axis, used = _scatter_args(x.shape, indices, updates, axis, reduce, x.dtype, op)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # float64 -> float16 overflow
        used = used.astype(x.dtype)
    groups = _destinations(indices, axis, x.shape[axis])
    kind = x.dtype.kind
    if kind == "f":
        acc = np.float32 if x.dtype == np.float16 else x.dtype.type
        cur_of = lambda d: acc(x[d])  # noqa: E731
        val_of = lambda p: acc(used[p])  # noqa: E731
    else:  # Python ints (wrapped after each step) and bools
        cur_of = lambda d: x[d].item()  # noqa: E731
        val_of = lambda p: used[p].item()  # noqa: E731
    out = np.array(x, order="C")
    with np.errstate(all="ignore"):
        for d, ps in groups.items():
            cur = cur_of(d)
            for p in ps:  # sequentially, in C order of indices
                v = val_of(p)
                if kind == "b":
                    cur = {None: v, "add": cur or v, "mul": cur and v, "max": cur or v,
                           "min": cur and v}[reduce]
                elif reduce == "add":
                    cur = _wrap(cur + v, x.dtype)
                elif reduce == "mul":
                    cur = _wrap(cur * v, x.dtype)
                elif _takes_over(reduce, cur, v):
                    cur = v
            out[d] = cur
    return out


def _wrap(v, dtype):
    """An integer wrapped into *dtype*'s range (two's complement); floats as they are."""
    if dtype.kind not in "iu":
        return v
    bits = 8 * dtype.itemsize
    low = -(1 << (bits - 1)) if dtype.kind == "i" else 0
    return (v - low) % (1 << bits) + low

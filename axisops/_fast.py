"""The compiled call path of the common reduction, scan and moving window.

``reduce._value_reduction``, ``reduce._arg_reduction`` and ``missing``'s moments
ask here first. A NumPy array of float32, float64, int32 or int64 that is
C-contiguous and aligned, reduced along
every axis (``axis=None``) or one (an int), without ``keepdims``, ``dtype``,
``select_last_index``, another ``index_dtype`` or ``all_nan_index``, with at most
:data:`MAX_RUN` elements per output, is reduced by one compiled entry
(``kernels.entry``), which runs the planned path's kernel with the same
arguments: the same bits. Everything else returns None and takes the planned
path, which also raises every error and warning (an axis out of range, an empty
reduction, a slice of NaN only: the entries leave them to it).

Per call this costs a few attribute tests and dictionary look-ups, an ``empty``
for an array result, and one Numba dispatch: sum of 1000 float64 2.15 -> 1.12 us,
argmax of a (16, 64) float32 array along axis 1 3.52 -> 2.81 us (AMD EPYC, Zen 5;
``benchmarks/per_call.md``).
"""
from __future__ import annotations

import numpy as np

from . import _dtypes, _jit
from ._layout import many_short_rows
from .kernels import entry as E
from .kernels import flat_entry as FE
from .kernels import moments as M
from .kernels import moving_entry as ME
from .kernels import reduce as K
from .kernels import scalar_entry as SE
from .kernels import scan as S

#: Most elements reduced into one output: one chunk of ``reduce``'s kernels (two
#: ``_CHUNK``s), and a call small enough that the plan's threads would not start.
MAX_RUN = 1 << 16
#: Largest input of an arg-reduction: the planned path runs it on the calling
#: thread too (from ``_jit.PARALLEL_MIN_WORK`` elements, in reductions' units of
#: eight, it may split it), and its Python is a few percent of the kernel's time.
MAX_SIZE = 1 << 18
#: Largest input of a sum: below ``reduce._FOLD_MIN_SIZE``, where the plan of a
#: float sum may fold the reduced axis (another order of additions); a sum along
#: rows in memory (the last axis) is never folded and takes inputs up to MAX_SIZE.
MAX_SUM_SIZE = (1 << 16) - 1

_TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


class _Value:
    """sum, mean, prod and their NaN twins nansum, nanprod of one dtype: the
    result's dtype and scalar type, the entries and the addresses of the kernels
    they run."""

    __slots__ = ("acc", "scalar", "run", "run_all", "lane", "row", "skip", "product")

    def __init__(self, op: str, dtype: np.dtype):
        self.product = op in ("prod", "nanprod")
        if op == "mean":
            res, acc = _dtypes.mean_dtypes(dtype, None)
        else:
            res, acc = _dtypes.sum_dtypes(dtype, None, "prod" if self.product else "sum")
        assert res == acc == _dtypes.kernel_accumulator(acc)  # the plan's direct results
        self.skip = skip = op.startswith("nan") and dtype.kind == "f"
        self.acc = acc
        self.scalar = acc.type
        self.run, self.run_all = E.value_entry(acc.str, skip, op == "mean", self.product)
        if acc.kind != "f":
            combine = K.COMBINE_ANY
        elif self.product:  # scaled or in index order, as reduce._value_plan runs it
            combine = K.COMBINE_ORDERED
        else:
            combine = K.COMBINE_CASCADE
        argtypes = E.sum_kernel_types(dtype, acc, skip)
        self.lane = E.kernel_address(K.value_kernel(False, combine), argtypes)
        self.row = E.kernel_address(K.value_kernel(True, combine), argtypes)

    def scalar_entry(self, op: str, dtype: np.dtype) -> tuple:
        entry = SE.total_entry(dtype.str, self.acc.str, self.skip, op == "mean", MAX_SUM_SIZE,
                               self.product)
        return entry, self.scalar, self.lane

    def lanes_entry(self, op: str, dtype: np.dtype) -> tuple:
        entry = SE.total_lanes_entry(dtype.str, self.acc.str, self.skip, op == "mean",
                                     MAX_SUM_SIZE, MAX_RUN, self.product, MAX_SIZE)
        return entry, self.acc, self.lane, self.row


class _Arg:
    """max, min, argmax, argmin and their NaN twins of one dtype."""

    __slots__ = ("xmask", "index", "scalar", "no_values", "run", "lane", "row", "flat")

    def __init__(self, op: str, dtype: np.dtype):
        skip = op.startswith("nan") and dtype.kind == "f"
        plain = op[3:] if op.startswith("nan") else op
        bits = _dtypes.bits_view_dtype(dtype)
        self.xmask = int(_dtypes.key_masks(dtype, bits, invert=plain in ("min", "argmin"))[2])
        self.index = plain.startswith("arg")
        self.scalar = np.int64 if self.index else dtype.type
        self.no_values = np.empty(0, dtype)
        self.run = E.arg_entry(skip)
        # a whole array: one loop over its elements (kernels.flat_entry)
        extreme, position = FE.extreme_entries(dtype.str, plain in ("min", "argmin"), skip)
        self.flat = position if self.index else extreme
        argtypes = E.arg_kernel_types(dtype)
        floats = dtype.kind == "f"
        self.lane = E.kernel_address(K.arg_kernel(bits.str, floats, False, skip), argtypes)
        self.row = E.kernel_address(K.arg_kernel(bits.str, floats, True, skip), argtypes)

    def scalar_entry(self, op: str, dtype: np.dtype) -> tuple:
        plain = op[3:] if op.startswith("nan") else op
        entry = SE.extreme_entry(dtype.str, plain in ("min", "argmin"), op.startswith("nan"),
                                 self.index, MAX_RUN)
        return entry, self.scalar

    def lanes_entry(self, op: str, dtype: np.dtype) -> tuple:
        plain = op[3:] if op.startswith("nan") else op
        entry = SE.extreme_lanes_entry(dtype.str, plain in ("min", "argmin"),
                                       op.startswith("nan"), self.index, MAX_SIZE)
        return entry, np.dtype(np.int64) if self.index else dtype


class _Moments:
    """nanmean, var, std, nanvar, nanstd of float32 or float64."""

    __slots__ = ("variance", "root", "address", "scalar")

    def __init__(self, op: str, dtype: np.dtype):
        self.variance = op != "nanmean"
        self.root = op.endswith("std")
        kern = M.moments_rows(op.startswith("nan"), self.variance)
        self.address = E.kernel_address(kern, E.moments_kernel_types(dtype))
        self.scalar = dtype.type

    def scalar_entry(self, op: str, dtype: np.dtype) -> tuple:
        entry = SE.moments_entry(dtype.str, self.variance, self.root, MAX_RUN)
        return entry, self.scalar, self.address


def _table(ops) -> dict:
    return {op: {dtype: None for dtype in _TYPES} for op in ops}


#: op -> dtype -> its _Value or _Arg, made at the first call (None: not yet made)
_VALUES: dict = _table(("sum", "mean", "nansum", "prod", "nanprod"))
_ARGS: dict = _table(("max", "min", "argmax", "argmin",
                      "nanmax", "nanmin", "nanargmax", "nanargmin"))
_MOMENTS: dict = {op: {np.dtype(np.float32): None, np.dtype(np.float64): None}
                   for op in ("nanmean", "var", "std", "nanvar", "nanstd")}
_NO_INDEX = np.empty(0, np.int64)


class _Scan:
    """cumsum or cumprod of one dtype: the result's dtype, whether the kernel runs
    each lane in one piece (a float product), its operation code and address."""

    __slots__ = ("acc", "ordered", "code", "address", "floats")

    def __init__(self, op: str, dtype: np.dtype):
        res, acc = _dtypes.sum_dtypes(dtype, None, op)
        assert res == acc == _dtypes.kernel_accumulator(acc)  # the plan's direct results
        self.acc = acc
        self.ordered = op == "cumprod" and acc.kind == "f"
        self.floats = acc.kind == "f"
        self.code = S.OP_PROD if op == "cumprod" else S.OP_SUM
        self.address = E.kernel_address(S.scan_values, E.scan_kernel_types(dtype, acc))


_SCANS: dict = _table(("cumsum", "cumprod"))


class _Direct:
    """The compiled functions of a spec's entries, called without Numba's dispatch
    (:meth:`run`)."""

    __slots__ = ("runs",)

    def __init__(self):
        self.runs: dict = {}

    def run(self, entry, key, args: tuple, readonly: tuple):
        """*entry*'s compiled function for *args* (its inputs, at *readonly*, typed
        read-only), found by *key* (which fixes their types but for the read-only
        flag: the numbers of dimensions) after the first call, without Numba's
        dispatch: 0.3 of a 3 us take of (16, 64) float32 rows, 0.4 of a 3.6 us cummax
        of (4, 256) float32 (AMD EPYC Zen 4). The callers pass C-contiguous aligned
        arrays of the spec's dtype and ints within int64."""
        run = self.runs.get(key)
        if run is None:
            run = self.runs[key] = _jit.entry_point(entry, args, readonly)
        return run(*args)


class _ExtremeScan(_Direct):
    """cummax or cummin of one dtype: its key masks, the kernel's address and its
    entries' compiled functions (:meth:`_Direct.run`)."""

    __slots__ = ("masks", "address")

    def __init__(self, op: str, dtype: np.dtype):
        super().__init__()
        bits = _dtypes.bits_view_dtype(dtype)
        self.masks = tuple(_dtypes.key_masks(dtype, bits, invert=op == "cummin"))
        self.address = E.kernel_address(S.extreme_kernel(bits.str),
                                        E.extreme_scan_kernel_types(dtype))


_EXTREME_SCANS: dict = _table(("cummax", "cummin"))


class _Moving:
    """A moving window of one dtype: the kernel's kind (``entry.moving_kernel_types``),
    the result's dtype and the kernel's address."""

    __slots__ = ("kind", "invert", "res", "address")

    def __init__(self, op: str, dtype: np.dtype):
        from .kernels import moving as MK

        kind = op[len("moving_"):]
        self.invert = kind.endswith("min")
        self.kind = {"sum": "sum", "mean": "sum", "var": "var", "std": "var"}.get(
            kind, "arg" if kind.startswith("arg") else "extreme")
        self.res = np.dtype(np.int64) if self.kind == "arg" else \
            dtype if dtype.kind == "f" else np.dtype(np.float64)
        kern = {"sum": MK.moving_sum_kernel, "var": MK.moving_var_kernel}.get(
            self.kind, MK.moving_extreme_kernel)
        self.address = E.kernel_address(kern, E.moving_kernel_types(dtype, self.kind))


_MOVING: dict = _table(("moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
                        "moving_min", "moving_argmax", "moving_argmin"))
_NO_VALUES = np.empty(0, np.float64)
_NO_INDICES = np.empty(0, np.int64)


def _rows_table() -> dict:
    """op -> ``id`` of a canonical dtype -> (the row entry of ``kernels.moving_entry``,
    the result's dtype, its flag: mean or invert, and its compiled functions by
    (ndim, min_count is None)): :func:`moving_rows`' look-up."""
    table: dict = {}
    for op in ("moving_sum", "moving_mean", "moving_max", "moving_min", "moving_argmax",
               "moving_argmin"):
        kind = op[len("moving_"):]
        entry = ME.sum_rows_entry if kind in ("sum", "mean") else \
            ME.arg_rows_entry if kind.startswith("arg") else ME.extreme_rows_entry
        flag = kind == "mean" if kind in ("sum", "mean") else kind.endswith("min")
        table[op] = {id(d): (entry, np.dtype(np.int64) if kind.startswith("arg") else
                             d if d.kind == "f" else np.dtype(np.float64), flag, {})
                     for d in (np.dtype(c) for c in "fdil") if d in _TYPES}
    return table


#: see :func:`_rows_table`
MOVING_ROWS: dict = _rows_table()
#: op -> ``id`` of a canonical dtype -> [its 1-D, its 2-D ``kernels.moving_entry.row_call``
#: without Numba's dispatch, or None until made; the result's dtype]: what the public
#: functions' wrappers try first (``_dispatch.dispatched(moving=...)``), filled by
#: :func:`moving_rows`
MOVING_CALLS: dict = {op: {} for op in MOVING_ROWS}
_ROW_KINDS = {ME.sum_rows_entry: "sum", ME.extreme_rows_entry: "extreme",
              ME.arg_rows_entry: "arg"}


def _register_row_call(op: str, spec: tuple, dtype: np.dtype, ndim: int) -> None:
    """Make the wrappers' :data:`MOVING_CALLS` entry of *op* for *dtype* and *ndim*
    (1 or 2), where *dtype* is the canonical object of its type (see
    :func:`_registered`)."""
    if dtype is not np.dtype(dtype.char) or not 1 <= ndim <= 2:
        return
    calls = MOVING_CALLS[op].setdefault(id(dtype), [None, None, spec[1]])
    if calls[ndim - 1] is None:
        calls[ndim - 1] = _jit.direct(ME.row_call(_ROW_KINDS[spec[0]], dtype.str, ndim, spec[2],
                                                  GATHER_COPY_MAX))


def moving_rows(op: str, x: np.ndarray, window: int, axis: int, min_count):
    """A moving window of a C-ordered, aligned, writeable *x* (float32, float64,
    int32, int64; or a C-ordered copy of a small 2-D F-ordered one) along its last axis (an int *axis*) with an int *window* in
    [1, 2**62] and *min_count* None or an int in [1, window], on the calling thread
    by one compiled entry of ``kernels.moving_entry``; else None (:func:`moving`)."""
    spec = MOVING_ROWS.get(op, _NONE).get(id(x.dtype))
    if spec is None or not x.ndim:
        return None
    flags = x.flags
    if not flags.carray:
        # a small transposed table along its rows (strided): a C-ordered copy's rows
        if x.ndim != 2 or flags.c_contiguous or not flags.f_contiguous \
                or x.size > GATHER_COPY_MAX or (axis != 1 and axis != -1):
            return None
        x = np.ascontiguousarray(x)
    ndim = x.ndim
    if not -ndim <= axis < ndim:
        return None  # (the plan's error; and an int the entry could not unbox)
    out = np.empty(x.shape, spec[1])
    # the entry's compiled function for these types, without Numba's dispatch (0.36 of
    # a 2.5 us moving_mean of a (4, 256) float32 array): x and out are C-ordered,
    # aligned and writeable, window, axis and the count ints within int64
    key = (ndim, min_count is None)
    run = spec[3].get(key)
    if run is None:
        run = spec[3][key] = _jit.entry_point(spec[0], (x, window, axis, min_count,
                                                        _jit.PARALLEL_MIN_WORK, spec[2], out))
        _register_row_call(op, spec, x.dtype, ndim)
    if run(x, window, axis, min_count, _jit.PARALLEL_MIN_WORK, spec[2], out):
        return out
    if x.size * MOVING_WORK_PER_ELEMENT < _jit.PARALLEL_MIN_WORK:
        return None
    # a large array: the same row loops, rows split between threads (where they take it)
    count = ME.rows_count(x, window, axis, min_count)
    if not count:
        return None
    n = x.shape[-1]
    flat, flat_out = x.reshape(-1), out.reshape(-1)
    work = x.size * MOVING_WORK_PER_ELEMENT
    if spec[0] is ME.sum_rows_entry:
        _jit.run(ME.sum_rows_kernel, work, flat, n, min(window, n), count, spec[2], flat_out)
    else:
        values = spec[0] is ME.extreme_rows_entry
        _jit.run(ME.extreme_rows_kernel, work, flat, n, min(window, n), count, spec[2], values,
                 flat_out if values else _NO_VALUES, _NO_INDICES if values else flat_out)
    return out
#: ``moving._WORK_PER_ELEMENT``: the plan's units of work per element
MOVING_WORK_PER_ELEMENT = 4


def moving(op: str, x: np.ndarray, window, axis, min_count, ddof):
    """A moving window of *x* (float32, float64, int32, int64, C-contiguous) along
    an int *axis* with an int *window* (and *min_count*, and for the variances an
    int *ddof*) by a compiled entry, on the calling thread as the plan would run
    it; else None (the plan, which also raises every error)."""
    spec = _spec(_MOVING, _Moving, op, x.dtype)
    if spec is None or type(window) is not int or type(axis) is not int:
        return None
    flags = x.flags
    if not flags.c_contiguous and flags.f_contiguous:
        t, a = _f_ordered(x, axis)
        if a is None:
            return None
        if a == 0 and x.size <= GATHER_COPY_MAX:
            # along x's rows (strided): a C-ordered copy's rows are contiguous walks
            return moving(op, np.ascontiguousarray(x), window, axis, min_count, ddof)
        out = moving(op, t, window, a, min_count, ddof)  # each lane the same, then
        return None if out is None else np.ascontiguousarray(out.T)  # the promised C order
    size = x.size
    ndim = x.ndim
    if not (flags.c_contiguous and flags.aligned) or size == 0 \
            or size * MOVING_WORK_PER_ELEMENT >= _jit.PARALLEL_MIN_WORK \
            or not -ndim <= axis < ndim:
        return None
    if axis < 0:
        axis += ndim
    count = window if min_count is None else min_count
    if type(count) is not int or not 1 <= count <= window <= 1 << 62 \
            or count > x.shape[axis]:
        return None  # the plan: its errors, or every output NaN
    # (axisops.moving checks window and min_count first: as ints, within range)
    out = np.empty(x.shape, spec.res)
    n = x.shape[axis]
    if axis == ndim - 1 and n <= E.MOVING_BLOCK_MIN and spec.kind != "var":
        # contiguous rows, one block each: the row entries (kernels.moving_entry)
        if spec.kind == "sum":
            ME.moving_sum_rows(x, window, count, op == "moving_mean", out)
        elif spec.kind == "arg":
            ME.moving_extreme_rows(x, window, count, spec.invert, False, _NO_VALUES, out)
        else:
            ME.moving_extreme_rows(x, window, count, spec.invert, True, out, _NO_INDEX)
        return out
    if spec.kind == "sum":
        E.moving_sum_along(x, axis, window, count, op == "moving_mean", out, spec.address)
    elif spec.kind == "var":
        if type(ddof) is not int or not 0 <= ddof <= 1 << 53:
            return None
        E.moving_var_along(x, axis, window, count, float(ddof), op == "moving_std", out,
                           spec.address)
    elif spec.kind == "arg":
        E.moving_arg_along(x, axis, window, count, spec.invert, out, spec.address)
    else:
        E.moving_extreme_along(x, axis, window, count, spec.invert, out, spec.address)
    return out


#: op -> (its kernel's name in kernels.gather, the entry's types of its arguments)
_GATHER_KERNELS = {"take_along_axis": ("take_along", E.take_along_kernel_types),
                   "scatter": ("scatter_lanes", E.scatter_kernel_types)}


class _Gather(_Direct):
    """take, take_along_axis or scatter of one dtype: its kernel's address (None
    for take), and its entry's compiled functions by the numbers of dimensions
    (:meth:`_Direct.run`)."""

    __slots__ = ("address",)

    def __init__(self, op: str, dtype: np.dtype):
        from .kernels import gather as G

        super().__init__()
        self.address = None  # take's entry copies the runs itself: no kernel
        if op in _GATHER_KERNELS:
            name, argtypes = _GATHER_KERNELS[op]
            self.address = E.kernel_address(getattr(G, name), argtypes(dtype))


_ALONG: dict = _table(("take_along_axis",))
_ALONG_BY_ID: dict = {"take_along_axis": {}}  # id of a canonical dtype -> its entries
_INT64 = np.dtype(np.int64)


def _plain(*arrays) -> bool:
    """Whether every array is C-contiguous and aligned: what the entries read
    (each ``flags`` made once: a generator of two reads each cost 0.4 us)."""
    for a in arrays:
        flags = a.flags
        if not (flags.c_contiguous and flags.aligned):
            return False
    return True


#: The most elements of an F-ordered table that the gathers copy into C order to
#: take their entries (a copy of 1K elements costs a tenth of the planned path's
#: strided rows: take of (256, 4).T float32 along axis 1 7.2 -> ~3 us)
GATHER_COPY_MAX = 1 << 13


def _c_ordered(x: np.ndarray) -> np.ndarray:
    """*x*, or a C-ordered copy of a small 2-D F-ordered *x* (a transposed table):
    a gather's or scatter's result is the same from either."""
    if x.ndim == 2 and x.size <= GATHER_COPY_MAX:
        flags = x.flags
        if flags.f_contiguous and not flags.c_contiguous:
            return np.ascontiguousarray(x)
    return x


def _c_inputs(x: np.ndarray, indices: np.ndarray):
    """*x* (or its C-ordered copy, as :func:`_c_ordered` makes) where it and
    *indices* are what the entries read (:func:`_plain`), else None; the common
    call reads each ``flags`` once (0.4 of a 2.4 us take of (4, 256) float32 went
    to the two steps)."""
    flags = x.flags
    if not (flags.c_contiguous and flags.aligned):
        x = _c_ordered(x)
        if not _plain(x):
            return None
    flags = indices.flags
    return x if flags.c_contiguous and flags.aligned else None


def take_along(x: np.ndarray, indices, axis):
    """take_along_axis of *x* (float32, float64, int32, int64, C-contiguous) at
    C-contiguous int64 *indices* of x's shape but along an int *axis*, mode
    "raise", by a compiled entry; else None (the plan: broadcasting, other modes
    and dtypes, views, errors: an index out of range is found and left to it)."""
    if type(indices) is not np.ndarray or indices.dtype != _INT64 or type(axis) is not int:
        return None
    spec = _ALONG_BY_ID["take_along_axis"].get(id(x.dtype)) or _registered(
        _ALONG_BY_ID, _ALONG, _Gather, "take_along_axis", x.dtype)
    if spec is None:
        return None
    x = _c_inputs(x, indices)
    if x is None:
        return None
    ndim = x.ndim
    if indices.ndim != ndim or not -ndim <= axis < ndim:
        return None
    if axis < 0:
        axis += ndim
    shape = indices.shape
    if x.shape[:axis] != shape[:axis] or x.shape[axis + 1:] != shape[axis + 1:] \
            or x.shape[axis] == 0 or not 0 < indices.size < _jit.split_from():
        return None
    if shape == x.shape and many_short_rows(shape, axis):
        return None  # the plan moves the short axis to the front: one task per row here
    out = np.empty(shape, x.dtype)
    return out if spec.run(E.take_along_at, ndim, (x, indices, axis, out, spec.address),
                           (0, 1)) else None


_TAKE: dict = _table(("take",))
_TAKE_BY_ID: dict = {"take": {}}  # id of a canonical dtype -> its entries (see _registered)


def take(x: np.ndarray, indices, axis):
    """take of *x* (float32, float64, int32, int64, C-contiguous) at C-contiguous
    int64 *indices* along an int *axis* or the flattened x (None), mode "raise", by
    a compiled entry; else None (the plan: other modes and dtypes, views, errors:
    an index out of range is found and left to it)."""
    if type(indices) is not np.ndarray or indices.dtype != _INT64:
        return None
    if axis == 0 and type(axis) is int and x.ndim == 2 and indices.ndim == 1:
        return rows_at(x, indices, 1)  # rows of a table, any strides
    spec = _TAKE_BY_ID["take"].get(id(x.dtype)) or _registered(_TAKE_BY_ID, _TAKE, _Gather, "take",
                                                                x.dtype)
    if spec is None:
        return None
    x = _c_inputs(x, indices)
    if x is None:
        return None
    ndim = x.ndim
    if axis is None:
        shape = indices.shape
        x = x.reshape(-1)
        axis = 0
    elif type(axis) is not int or not -ndim <= axis < ndim:
        return None
    else:
        if axis < 0:
            axis += ndim
        shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    if x.shape[axis] == 0 or not 0 < indices.size < _jit.PARALLEL_MIN_WORK \
            or x.size // x.shape[axis] * indices.size >= _jit.PARALLEL_MIN_WORK:
        return None
    out = np.empty(shape, x.dtype)
    return out if spec.run(E.take_runs_at, (x.ndim, indices.ndim), (x, indices, axis, out),
                           (0, 1)) else None


#: ``id`` of a canonical dtype -> [its ``entry.rows_at_call`` for 1-D indices, for
#: ``(k, 1)`` ones], each without Numba's dispatch, made at the first such call
_ROWS_AT: dict = {}


def take_tuples(x: np.ndarray, indices):
    """gather_nd of *x* at tuples of one index (*indices* an array whose last
    dimension is 1, no batch dimensions) by a compiled entry, or None."""
    if x.ndim == 2 and indices.ndim == 2 and indices.dtype == _INT64:
        return rows_at(x, indices, 2)
    return take(x, indices.reshape(indices.shape[:-1]), 0)


def rows_at(x: np.ndarray, indices: np.ndarray, index_ndim: int):
    """``take(x, indices, 0)`` (*index_ndim* 1) or ``gather_nd(x, indices)`` of
    ``(k, 1)`` tuples (2) of a 2-D *x* (float32, float64, int32, int64, any
    strides) at int64 *indices* of *index_ndim* dimensions by one compiled call,
    or None (the planned path: its errors, empty arrays, large results)."""
    calls = _ROWS_AT.get(id(x.dtype))
    if calls is None:
        if x.dtype not in _TYPES or x.dtype is not np.dtype(x.dtype.char):
            return None
        calls = _ROWS_AT[id(x.dtype)] = [None, None]
    if indices.shape[0] * x.shape[1] >= _jit.PARALLEL_MIN_WORK:
        return None  # the planned path splits it (and makes no result twice)
    call = calls[index_ndim - 1]
    if call is None:
        call = calls[index_ndim - 1] = _jit.direct(E.rows_at_call(x.dtype.str, index_ndim))
    out = np.empty((indices.shape[0], x.shape[1]), x.dtype)
    return out if call(x, indices, out, _jit.PARALLEL_MIN_WORK) else None


#: float32, float64 and int64: the dtypes the scatter kernel works in as they are
_SCATTER: dict = {"scatter": {np.dtype(t): None for t in (np.float32, np.float64, np.int64)}}


def scatter(x: np.ndarray, indices, updates, axis, op: int):
    """scatter of *x* (float32, float64, int64, C-contiguous) at C-contiguous int64
    *indices* with C-contiguous *updates* of x's dtype, both x's shape but along an
    int *axis*, mode "raise", *op* the kernel's code of ``reduce``, by a compiled
    entry; else None (the plan: broadcasting, other dtypes, views, many short
    rows, errors: an index out of range is found and left to it)."""
    if type(indices) is not np.ndarray or indices.dtype != _INT64 \
            or type(updates) is not np.ndarray or updates.dtype != x.dtype or type(axis) is not int:
        return None
    spec = _spec(_SCATTER, _Gather, "scatter", x.dtype)
    if spec is None:
        return None
    x = _c_ordered(x)
    ndim = x.ndim
    shape = indices.shape
    if indices.ndim != ndim or updates.shape != shape or not -ndim <= axis < ndim \
            or not _plain(x, indices, updates):
        return None
    if axis < 0:
        axis += ndim
    if x.shape[:axis] != shape[:axis] or x.shape[axis + 1:] != shape[axis + 1:] \
            or x.shape[axis] == 0 or not 0 < indices.size < _jit.split_from() \
            or x.size >= _jit.PARALLEL_MIN_WORK:
        return None
    if shape == x.shape and many_short_rows(shape, axis):
        return None  # the plan moves the short axis to the front: one task per row here
    out = np.empty(x.shape, x.dtype)
    return out if spec.run(E.scatter_at, ndim, (x, indices, updates, axis, op, out, spec.address),
                           (0, 1, 2)) else None


def _spec(table: dict, kind, op: str, dtype):
    """The entries of *op* for *dtype* from *table* (made by *kind* at the first
    call), or None for another op, dtype or byte order."""
    try:
        spec = table[op][dtype]
    except KeyError:
        return None
    if spec is None:
        spec = table[op][dtype] = kind(op, dtype)
    return spec


def _registered(by_id: dict, table: dict, kind, op: str, dtype):
    """:func:`_spec`, kept in *by_id* under ``id(dtype)`` where *dtype* is the
    canonical object of its type (``np.dtype(char)``, which lives as long as NumPy),
    so that later calls find it without hashing a dtype (0.09 of a 0.9 us ``max``);
    its scalar entry is then kept for the public function's wrapper too
    (:class:`ScalarCall`)."""
    spec = _spec(table, kind, op, dtype)
    if spec is not None and dtype is np.dtype(dtype.char):
        by_id[op][id(dtype)] = spec
        call = SCALAR_CALLS.get(op)
        if call is not None:
            # the entries' compiled functions, without Numba's dispatch: the wrapper
            # passes the types of their one signature (ScalarCall)
            entry = spec.scalar_entry(op, dtype)
            call.entries[id(dtype)] = (_jit.direct(entry[0]), *entry[1:])
            if hasattr(spec, "lanes_entry"):
                entry = spec.lanes_entry(op, dtype)
                call.lanes[id(dtype)] = (_jit.direct(entry[0]), *entry[1:])
    return spec


class ScalarCall:
    """What the wrapper of a public function tries before the function itself
    (``_dispatch.dispatched``): a 1-D NumPy array reduced to one scalar (*axis*
    None, 0 or -1) where *condition* holds (a Python expression of the function's
    parameters: the defaults that the entry computes) goes to
    ``f = entries[id(x.dtype)]``, a tuple (compiled entry of ``kernels.scalar_entry``,
    the result's scalar type, the address of the plan's kernel it runs, if any),
    called as ``f[0](x, _jit.PARALLEL_MIN_WORK<arguments>)``; its None (a call it
    does not take) falls through to the function. Made here, filled by
    :func:`_registered` as the function's own entries are made (at its first call
    for the dtype): sum of 1000 float64 1.15 -> 0.57 us, argmax 1.36 -> 0.6 (AMD
    EPYC, Zen 5; ``benchmarks/per_call.md``)."""

    __slots__ = ("op", "condition", "arguments", "entries", "lanes", "lane_arguments",
                 "positions")

    def __init__(self, op: str, condition: str, arguments: str = ""):
        self.op = op
        self.condition = condition
        self.arguments = arguments
        self.entries: dict = {}
        #: a 2-D array along an int axis: ``id(x.dtype)`` -> (entry of
        #: ``kernels.scalar_entry``'s ``*_lanes_entry``, the result's dtype, the
        #: addresses of the kernels it runs, if any), called as
        #: ``f[0](x, axis, out, _jit.PARALLEL_MIN_WORK<lane_arguments>)``
        self.lanes: dict = {}
        self.lane_arguments = ", f[2], f[3]" if arguments.startswith(", f[2]") else ""
        # an arg-reduction's result: a premade int64 scalar for the first positions
        # (np.int64(r) costs 0.13 us, a tuple's item 0.01)
        self.positions = _POSITIONS if "arg" in op else ()


#: op -> its ScalarCall
SCALAR_CALLS: dict = {}
#: np.int64(i) for i < 4096 (160 KiB)
_POSITIONS = tuple(np.arange(1 << 12))


def scalar_call(op: str, condition: str, arguments: str = "") -> ScalarCall:
    """The :class:`ScalarCall` of *op*, for its ``@dispatched(scalar=...)``."""
    call = SCALAR_CALLS[op] = ScalarCall(op, condition, arguments)
    return call


#: op -> id of a canonical dtype -> its entries (see :func:`_registered`)
_VALUES_BY_ID: dict = {op: {} for op in _VALUES}
_ARGS_BY_ID: dict = {op: {} for op in _ARGS}
_MOMENTS_BY_ID: dict = {op: {} for op in _MOMENTS}
_NONE: dict = {}  # the look-up of an op without entries


def _axis(x: np.ndarray, axis, largest: int):
    """-1 for a reduction of every element, the axis (>= 0) for one, None when the
    call is not one the entries take (*largest*: the most elements)."""
    # (the pool's threshold is read each time: tests lower it to run every kernel split)
    size = x.size
    flags = x.flags  # aligned too: the kernels are compiled for aligned arrays
    if not (flags.c_contiguous and flags.aligned) or not 0 < size <= largest \
            or size >= _jit.PARALLEL_MIN_WORK:
        return None
    ndim = x.ndim
    if axis is None:
        if ndim == 0 or size > MAX_RUN:
            return None
        return -1
    if type(axis) is not int or not -ndim <= axis < ndim:
        return None
    if ndim == 1:
        return -1 if size <= MAX_RUN else None
    if axis < 0:
        axis += ndim
    return axis if x.shape[axis] <= MAX_RUN else None


def _transposed(x: np.ndarray, axis, largest: int):
    """(x.T, the axis of x.T that is *axis* of x) for a 2-D F-contiguous *x* reduced
    along one int axis: the same elements per output, in the same order, and the
    same 1-D result, from a C-contiguous array (a transposed input is common: a
    tall table's columns); else (x, None)."""
    t, a = _f_ordered(x, axis)
    return (x, None) if a is None else (t, _axis(t, a, largest))


def value(op: str, x: np.ndarray, axis):
    """sum, mean, prod, nansum or nanprod of *x* by a compiled entry, or None (the
    planned path)."""
    if x.size > MAX_SIZE:  # no entry takes it: nothing else to look at
        return None
    spec = _VALUES_BY_ID.get(op, _NONE).get(id(x.dtype)) or _registered(_VALUES_BY_ID, _VALUES, _Value,
                                                              op, x.dtype)
    if spec is None:
        return None
    # along the last axis the plan never folds (see MAX_SUM_SIZE): its size limit is
    # the arg-reductions' (a float32 sum of (4, 16384) 6.4 -> 3.4 us)
    last = type(axis) is int and (axis == -1 or axis == x.ndim - 1)
    a = _axis(x, axis, MAX_SIZE if last else MAX_SUM_SIZE)
    if a is None:
        t, a = _f_ordered(x, axis)
        if a is None:
            return None
        x, a = t, _axis(t, a, MAX_SIZE if a == 1 else MAX_SUM_SIZE)
        if a is None:
            return None
    if a < 0:
        return spec.scalar(spec.run_all(x, spec.lane, spec.row))
    shape = x.shape
    out = np.empty(shape[:a] + shape[a + 1:], spec.acc)
    spec.run(x, a, out, spec.lane, spec.row)
    return out


def _whole(x: np.ndarray, axis) -> bool:
    """Whether *x* reduced along *axis* is a whole C-ordered, aligned array the
    one-loop entries take (``kernels.flat_entry``)."""
    if not (axis is None or (x.ndim == 1 and (axis == 0 or axis == -1) and type(axis) is int)):
        return False
    flags = x.flags
    size = x.size
    return flags.c_contiguous and flags.aligned and 0 < size <= MAX_RUN and x.ndim > 0 \
        and size < _jit.PARALLEL_MIN_WORK


def arg(op: str, x: np.ndarray, axis):
    """max, min, argmax, argmin or a NaN twin of *x* by a compiled entry, or None."""
    if x.size > MAX_SIZE:  # no entry takes it: nothing else to look at
        return None
    spec = _ARGS_BY_ID.get(op, _NONE).get(id(x.dtype)) or _registered(_ARGS_BY_ID, _ARGS, _Arg, op,
                                                            x.dtype)
    if spec is None:
        return None
    if _whole(x, axis):
        if spec.index:
            at = spec.flat(x)
            return None if at < 0 else np.int64(at)
        value = spec.flat(x)
        return None if value != value and op[:3] == "nan" else spec.scalar(value)
    a = _axis(x, axis, MAX_SIZE)
    if a is None:
        x, a = _transposed(x, axis, MAX_SIZE)
        if a is None:
            return None
    if a < 0:  # a whole array that _whole left to the planned path's entry
        return None
    shape = x.shape
    out_shape = shape[:a] + shape[a + 1:]
    if spec.index:
        out = np.empty(out_shape, np.int64)
        if spec.run(x, a, spec.xmask, spec.no_values, out, spec.lane, spec.row):
            return None
    else:
        out = np.empty(out_shape, x.dtype)
        if spec.run(x, a, spec.xmask, out, _NO_INDEX, spec.lane, spec.row):
            return None
    return out


def moments(op: str, x: np.ndarray, axis, ddof):
    """nanmean, var, std, nanvar or nanstd of *x* (float32 or float64) along every
    axis or the last one, with an int *ddof*, by a compiled entry; else None."""
    spec = _MOMENTS_BY_ID.get(op, _NONE).get(id(x.dtype)) or _registered(_MOMENTS_BY_ID, _MOMENTS,
                                                                _Moments, op, x.dtype)
    if spec is None:
        return None
    if type(ddof) is not int or not 0 <= ddof < MAX_RUN:
        return None
    a = _axis(x, axis, MAX_SIZE)
    if a is None or (a >= 0 and a != x.ndim - 1):  # the moments run along the last axis
        return None
    if a < 0:
        value, ok = E.moments_all(x, ddof, spec.variance, spec.root, spec.address)
        return x.dtype.type(value) if ok else None
    out = np.empty(x.shape[:-1], x.dtype)
    if not E.moments_along(x, a, ddof, spec.variance, spec.root, out, spec.address):
        return None
    return out


def _scan_axis(x: np.ndarray, axis):
    """(x, the axis >= 0) of a scan the entries take, the flattened array (a
    C-contiguous view) for every element; (x, None) for one they do not."""
    a = _axis(x, axis, MAX_SIZE)
    if a is not None and a < 0:
        return x.reshape(-1), 0
    return x, a


def _f_ordered(x: np.ndarray, axis):
    """(x.T, the axis of x.T that is *axis* of x) for a 2-D F-contiguous (and not
    C-contiguous) *x* and an int *axis* in range: the entries run each lane of x.T,
    the same elements in the same order, and the caller copies the result back
    to C order, as every operator promises (a (256, 4).T table: scans and moving
    windows took the plan, 2-3x slower at 1K elements); else (x, None)."""
    if x.ndim != 2 or type(axis) is not int or not -2 <= axis < 2:
        return x, None
    flags = x.flags
    if flags.c_contiguous or not flags.f_contiguous:
        return x, None
    return x.T, 1 - axis % 2


def scan(op: str, x: np.ndarray, axis):
    """cumsum or cumprod of *x* (no ``dtype``, ``exclusive`` or ``reverse``) along an
    int *axis* or the flattened array (None) by a compiled entry, or None."""
    spec = _spec(_SCANS, _Scan, op, x.dtype)
    if spec is None:
        return None
    x, a = _scan_axis(x, axis)
    if a is None:
        t, a = _f_ordered(x, axis)
        if a == 0 and spec.floats and _axis(t, 0, MAX_SIZE) == 0:
            # along x's rows (strided, a size the entries take): four at a time
            out = np.empty(x.shape, spec.acc)
            if E.scan_columns(t, spec.code, spec.ordered, out):
                return out
        if a == 0 and x.size <= GATHER_COPY_MAX:
            # along x's rows (strided): a C-ordered copy's rows, the result in C order
            return scan(op, np.ascontiguousarray(x), axis)
        out = None if a is None else scan(op, t, a)
        return None if out is None else np.ascontiguousarray(out.T)
    out = np.empty(x.shape, spec.acc)
    if a == x.ndim - 1 and spec.floats and E.scan_rows(x, spec.code, spec.ordered, out):
        return out
    if not E.scan_along(x, a, spec.code, spec.ordered, out, spec.address):
        return None
    return out


def cum_extreme(op: str, x: np.ndarray, axis):
    """(values, int64 indices) of cummax or cummin of *x* along an int *axis* or the
    flattened array (None) by a compiled entry, or None."""
    spec = _spec(_EXTREME_SCANS, _ExtremeScan, op, x.dtype)
    if spec is None:
        return None
    x, a = _scan_axis(x, axis)
    if a is None:
        t, a = _f_ordered(x, axis)
        if a == 0 and _axis(t, 0, MAX_SIZE) == 0:
            # along x's rows (strided, a size the entries take): four at a time, the
            # results in C order ((256, 4).T float32 cummax 6.5 -> 5.5 us with a
            # C-ordered copy, 3.8 now)
            values = np.empty(x.shape, x.dtype)
            indices = np.empty(x.shape, np.int64)
            spec.run(E.cum_extreme_columns, "columns", (t, spec.masks, values, indices), (0,))
            return values, indices
        found = None if a is None else cum_extreme(op, t, a)
        return None if found is None else tuple(np.ascontiguousarray(r.T) for r in found)
    values = np.empty(x.shape, x.dtype)
    indices = np.empty(x.shape, np.int64)
    if a == x.ndim - 1:  # along rows: the plan's lane loop on each
        spec.run(E.cum_extreme_rows, x.ndim, (x, spec.masks, values, indices), (0,))
    else:
        spec.run(E.cum_extreme_along, -x.ndim, (x, a, spec.masks, values, indices, spec.address),
                 (0,))
    return values, indices

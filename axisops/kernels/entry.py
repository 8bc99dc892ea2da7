"""Compiled entries: the common reduction call in one Numba function.

A NumPy array that is C-contiguous, reduced along one axis or all of them in one
chunk (``axisops.reduce``'s ``2 * _CHUNK`` elements at most per output), runs
through one of these instead of the planned path (``axisops._fast`` decides and
allocates an array result). Each entry derives the ``ReductionView`` geometry
that ``axisops._layout.reduction_view`` gives such an array, in Numba, and calls
the planned path's own kernel with arguments of the same Numba types (the base
and the geometry read-only, as the plan passes them): the same compiled kernel,
so the same bits. ``tests/test_fast_path.py`` compares geometry and results with
the planned path's.

What it saves is the planning's Python: the plan key, its look-up, the base view
and the result's shaping (about 1.5 us of a 2.1 us sum of 1000 float64 on an
AMD EPYC), leaving the dispatch of one Numba call (0.12 us) and the kernel.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import from_dtype, njit, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload

from .._jit import compiled, factory
from . import reduce as K
from . import scan as S

#: Widest block of outputs one serial task keeps, by loop order (``axisops.reduce``'s
#: ``_INNER_BLOCK`` and ``_LANE_BLOCK``; ``tests/test_fast_path.py`` checks they agree).
ROW_BLOCK = 2048
LANE_BLOCK = 64
#: ``axisops.reduce``'s ``_SHORT_RUN`` and ``_FEW_LANES`` (see its ``_row_order``).
SHORT_RUN = 16
FEW_LANES = 8


@intrinsic
def _readonly(typingctx, arr):
    """*arr* typed as read-only (the same memory and data model): the kernels are
    compiled for the read-only arrays a plan passes, and an entry must call that
    compiled kernel, not a second one for writable arrays."""
    result = arr.copy(readonly=True)

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, result, args[0])

    return result(arr), codegen


@intrinsic
def c_view(typingctx, arr):
    """*arr* (of any layout) typed as a C-contiguous aligned array: the same data
    model; the caller has checked its strides and address."""
    result = types.Array(arr.dtype, arr.ndim, "C", readonly=not arr.mutable)

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, result, args[0])

    return result(arr), codegen


@njit(cache=True)
def axis_geometry(shape, axis, extra):
    """(geo, outer, inner, row) of a C-contiguous array of *shape* reduced along
    *axis* (-1: every axis), as ``reduce._kernel_args`` gives for one chunk on the
    calling thread; *extra* more int64 slots at the end (the arg kernels' ``xmask``).

    The view: dimensions of length 1 are dropped; the kept dimensions after the
    axis coalesce into ``inner`` (stride 1), those before it into one outer
    dimension, which becomes ``inner`` itself when nothing follows the axis.
    """
    size = 1
    for d in range(len(shape)):
        size *= shape[d]
    if axis < 0:
        before, n, after = 1, size, 1
    else:
        before, n, after = 1, shape[axis], 1
        for d in range(axis):
            before *= shape[d]
        for d in range(axis + 1, len(shape)):
            after *= shape[d]
    outer = 1
    n_stride = after if n > 1 else 0
    if n == 1:  # no reduced dimension: every kept one coalesces
        inner = before * after
    elif after > 1:
        inner = after
        outer = before
    else:
        inner = before
    if n == 1:
        inner_stride = 1 if inner > 1 else 0
    elif after > 1:
        inner_stride = 1
    else:
        inner_stride = n if inner > 1 else 0
    if inner <= 1:
        row = False
    elif n <= SHORT_RUN:
        row = True
    elif inner < FEW_LANES:
        row = False
    else:
        row = abs(inner_stride) < abs(n_stride)
    widest = ROW_BLOCK if row else LANE_BLOCK
    no = 1 if outer > 1 else 0
    geo = np.empty(9 + 2 * no + extra, np.int64)
    geo[0] = 0
    geo[1] = inner
    geo[2] = inner_stride
    geo[3] = n
    geo[4] = n_stride
    geo[5] = max(n, 1)
    geo[6] = min(inner, widest)
    geo[7] = no
    geo[8] = 0
    if no:
        geo[9] = outer
        geo[10] = n * after
    return geo, outer, inner, row


# The entries call the planned path's compiled kernels by their addresses, given
# at run time (``kernel_address``), not as compiled callees: a compiled callee is
# linked into each caller and optimised again there (0.7-3 s per entry and
# dtype and number of dimensions), and the machine code of a cached caller names
# its callees in a way two processes do not agree on (a cached entry ran the
# row-order kernel for the lane-order one). Called by address, an entry compiles
# in a tenth of a second and runs the very machine code the plan runs.

def sum_kernel_types(dtype: np.dtype, acc: np.dtype, skip_nan: bool) -> tuple:
    """The Numba types of the arguments with which ``reduce._value_plan`` calls its
    kernel (``reduce_values``) for a C-contiguous array of *dtype*, and
    :func:`_sums` calls it by address."""
    return (types.int64, types.int64, types.Array(from_dtype(dtype), 1, "C", readonly=True),
            types.Array(types.int64, 1, "C", readonly=True), types.int64,
            types.Tuple((types.none, types.float64)) if skip_nan else types.none,
            types.Array(from_dtype(acc), 3, "C"))


def arg_kernel_types(dtype: np.dtype) -> tuple:
    """The same for ``reduce._arg_plan``'s kernel (``reduce_arg``) and
    :func:`_extremes`: the elements read as signed integers of their width."""
    bits = from_dtype(np.dtype(f"i{dtype.itemsize}"))
    return (types.int64, types.int64, types.Array(bits, 1, "C", readonly=True),
            types.Array(types.int64, 1, "C", readonly=True), types.int64,
            types.Array(bits, 3, "C"), types.Array(types.int64, 3, "C"))


def kernel_address(kern, argtypes: tuple) -> int:
    """The address of *kern*'s machine code for *argtypes* (compiled, or loaded
    from the disk cache, first): what :func:`call_kernel` calls."""
    kern.compile(argtypes)
    compiled = kern.overloads[argtypes]
    return compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)


@intrinsic
def call_kernel(typingctx, address, args):
    """Call the compiled kernel at *address* (an int from :func:`kernel_address`)
    with the tuple *args*, whose types must be those it was compiled for (the
    callers build them as ``sum_kernel_types`` and ``arg_kernel_types`` say:
    ``tests/test_fast_path.py`` checks that no other kernel gets compiled)."""
    if not isinstance(address, types.Integer) or not isinstance(args, types.BaseTuple):
        raise TypingError("call_kernel(address, args): an int and a tuple")
    if any(isinstance(t, types.Literal) for t in args.types):
        raise TypingError("call_kernel: arguments of literal types (a kernel is "
                          "compiled for int64, not for constants)")
    if any(isinstance(t, types.Array) and not t.aligned for t in args.types):
        raise TypingError("call_kernel: a misaligned array (the kernels are compiled "
                          "for aligned ones; the plan copies a misaligned input)")
    argtys = list(args.types)

    def codegen(context, builder, signature, llargs):
        call_conv = context.call_conv
        values = cgutils.unpack_tuple(builder, llargs[1], len(argtys))
        fnty = call_conv.get_function_type(types.none, argtys)
        callee = builder.inttoptr(llargs[0], fnty.as_pointer())
        # as CPUCallConv.call_function does for a function it can name
        retval = cgutils.alloca_once(builder, call_conv.get_return_type(types.none).pointee)
        builder.store(cgutils.get_null_value(retval.type.pointee), retval)
        excinfo = cgutils.alloca_once(builder, ir.PointerType(fnty.args[1].pointee.pointee),
                                      name="excinfo")
        packed = list(call_conv._get_arg_packer(argtys).as_arguments(builder, values))
        code = builder.call(callee, [retval, excinfo] + packed)
        status = call_conv._get_return_status(builder, code, builder.load(excinfo))
        with cgutils.if_unlikely(builder, status.is_error):
            call_conv.return_status_propagate(builder, status)
        return context.get_dummy_value()

    return types.none(address, args), codegen


@njit(cache=True, nogil=True)
def _sums(x, axis, out, op, table, mean, lane, row_order):
    """The body of ``value_entry``'s functions: *op* ``K.OP_SUM`` or ``K.OP_PROD``,
    *table* the kernel's, *lane* and *row_order* the addresses of its two loop
    orders."""
    geo, outer, inner, row = axis_geometry(x.shape, axis, 0)
    args = (np.int64(0), np.int64(1), _readonly(x.reshape(x.size)), _readonly(geo),
            np.int64(op), table, out.reshape((outer, 1, inner)))
    call_kernel(row_order if row else lane, args)
    if mean:  # in the accumulator's dtype, as NumPy divides the sums
        flat = out.reshape(out.size)
        count = _scalar_type(out)(x.size // out.size)
        for i in range(flat.size):
            flat[i] = flat[i] / count


@factory
def value_entry(acc: str, skip_nan: bool, mean: bool, product: bool = False):
    """``(run, run_all)``: ``run(x, axis, out, lane, row)`` sums (with *product*,
    multiplies) C-contiguous *x* along *axis* into *out* (the result, C-contiguous,
    of the accumulator dtype *acc*), divided by the count for a *mean*;
    ``run_all(x, lane, row)`` returns the total of every element. *lane* and *row*
    are the addresses of ``reduce._value_plan``'s kernel for such an array in its
    two loop orders (:func:`kernel_address`, :func:`sum_kernel_types`): the cascade
    for a float sum, the scaled or index-order loop for a float product (a NaN read as the
    identity with *skip_nan*), the any-order loop for an integer one (int64)."""
    ACC = np.dtype(acc).type
    SKIP = skip_nan  # constants: Numba prunes the other branches
    MEAN = mean
    OP = K.OP_PROD if product else K.OP_SUM
    IDENTITY = 1.0 if product else 0.0

    @njit(cache=True, nogil=True)
    def run(x, axis, out, lane, row):
        if SKIP:
            _sums(x, axis, out, OP, (None, IDENTITY), MEAN, lane, row)
        else:
            _sums(x, axis, out, OP, None, MEAN, lane, row)

    @njit(cache=True, nogil=True)
    def run_all(x, lane, row):
        out = np.empty(1, ACC)
        if SKIP:
            _sums(x, -1, out, OP, (None, IDENTITY), MEAN, lane, row)
        else:
            _sums(x, -1, out, OP, None, MEAN, lane, row)
        return out[0]

    return run, run_all


@njit(cache=True, nogil=True)
def _extremes(x, axis, xmask, values, index, skip_nan, lane, row_order):
    """The body of ``arg_entry``'s functions: *skip_nan* is None or a tuple (which
    kernel *lane* and *row_order* address), *values* or *index* the results (the
    other one empty). Returns whether an output had only NaN (*skip_nan*)."""
    with_index = index.size > 0
    geo, outer, inner, row = axis_geometry(x.shape, axis, 1)
    geo[geo.size - 1] = xmask
    if with_index:
        mode = K.WITH_INDEX
        keys = np.empty(index.size, _bits_like(x))
        at = index.reshape((outer, 1, inner))
    else:
        mode = K.AS_VALUES
        keys = values.reshape(values.size).view(_bits_like(x))
        at = np.empty((outer, 1, 0), np.int64)
    args = (np.int64(0), np.int64(1), _readonly(x.reshape(x.size).view(_bits_like(x))),
            _readonly(geo), np.int64(mode), keys.reshape((outer, 1, inner)), at)
    call_kernel(row_order if row else lane, args)
    if skip_nan is not None:
        if with_index:
            lowest = _lowest(keys)  # the key of an all-NaN output (see arg_kernel)
            for k in keys:
                if k == lowest:
                    return True
        else:
            for v in values.reshape(values.size):
                if v != v:
                    return True
    return False


def _bits_like(x):
    """The signed integer type of *x*'s element width (a compile-time choice)."""


@overload(_bits_like)
def _bits_like_impl(x):
    bits = getattr(np, f"int{x.dtype.bitwidth}")
    return lambda x: bits


def _lowest(a):
    """The least value of the integer array *a*'s dtype (a compile-time constant)."""


@overload(_lowest)
def _lowest_impl(a):
    lowest = np.iinfo(str(a.dtype)).min
    scalar = np.dtype(str(a.dtype)).type(lowest)
    return lambda a: scalar


def _scalar_type(a):
    """The scalar type of the array *a*'s elements (a compile-time choice)."""


@overload(_scalar_type)
def _scalar_type_impl(a):
    scalar = np.dtype(str(a.dtype)).type
    return lambda a: scalar


@factory
def arg_entry(skip_nan: bool):
    """``run(x, axis, xmask, values, index, lane, row)`` of max/min/argmax/argmin
    (their NaN-skipping twins with *skip_nan*) by ``reduce._arg_plan``'s kernel in
    one chunk, on the elements' bits as signed integers of their width, ``xmask``
    (``_dtypes.key_masks``) choosing the direction; *lane* and *row* are the
    addresses of the kernel for *x*'s dtype in its two loop orders
    (:func:`kernel_address`, :func:`arg_kernel_types`): along *axis* of
    C-contiguous *x*, the extremes into *values* (of *x*'s dtype, the result's
    shape; or empty) or their first positions into *index* (int64, the result's
    shape; or empty). Returns whether an output had only NaN (*skip_nan*: the
    caller's planned path then warns or raises as NumPy does). A whole array
    takes ``kernels.flat_entry`` instead.
    """
    SKIP = skip_nan  # a constant: Numba prunes the other branches

    @njit(cache=True, nogil=True)
    def run(x, axis, xmask, values, index, lane, row):
        if SKIP:
            return _extremes(x, axis, xmask, values, index, (None,), lane, row)
        return _extremes(x, axis, xmask, values, index, None, lane, row)

    return run


def moments_kernel_types(dtype: np.dtype) -> tuple:
    """The Numba types of the arguments with which ``_moments.plan`` calls its
    kernel (``kernels.moments.moments_rows``) for a C-contiguous array of *dtype*,
    and :func:`_moments` calls it by address."""
    vector = types.Array(types.int64, 1, "C")
    return (types.int64, types.int64, types.Array(from_dtype(dtype), 1, "C", readonly=True),
            types.int64, vector, vector, types.int64, types.int64, types.int64, types.int64,
            vector, types.Array(from_dtype(dtype), 1, "C"))


@njit(cache=True, nogil=True)
def _moments(x, axis, ddof, variance, root, out, address):
    """nanmean, var, std, nanvar or nanstd of C-contiguous *x* along its last axis
    (*axis* = ``x.ndim - 1``) or all (-1) into *out* (x's dtype, one per output),
    by ``_moments.plan``'s kernel at *address* (the mean, or with *variance* the
    sum of squared deviations, and the count of each output), finished as the
    plan finishes: divided by ``count - ddof`` in float64 and rounded once, the
    square root of that for *root*. Returns False where an output's count (less
    *ddof*) is not positive: the plan then warns as NumPy does."""
    geo = axis_geometry(x.shape, axis, 0)[0]
    none = np.empty(0, np.int64)  # no outer dimension: the outputs are one run each
    counts = np.empty(out.size, np.int64)
    args = (np.int64(0), np.int64(1), _readonly(x.reshape(x.size)), np.int64(0), none, none,
            geo[1], geo[2], geo[3], geo[4], counts, out)
    call_kernel(address, args)
    for i in range(out.size):
        dof = counts[i] - ddof if variance else counts[i]
        if dof <= 0:
            return False
        if variance:
            v = _scalar_type(out)(np.float64(out[i]) / dof)
            out[i] = np.sqrt(v) if root else v
    return True


@njit(cache=True, nogil=True)
def moments_all(x, ddof, variance, root, address):
    """:func:`_moments` of every element of *x*: (the result, whether it is one)."""
    out = np.empty(1, x.dtype)
    ok = _moments(x, -1, ddof, variance, root, out, address)
    return out[0], ok


@njit(cache=True, nogil=True)
def moments_along(x, axis, ddof, variance, root, out, address):
    """:func:`_moments` along the last axis into *out* (the result's shape)."""
    return _moments(x, axis, ddof, variance, root, out.reshape(out.size), address)


# ------------------------------------------------------------------ scans

#: ``axisops.scan``'s ``_INNER_BLOCK``, ``_MIN_TASKS`` and ``_CHUNK`` (see its
#: ``_split``; ``tests/test_fast_path.py`` checks they agree).
SCAN_INNER_BLOCK = 2048
SCAN_MIN_TASKS = 8
SCAN_CHUNK = 1 << 16


def scan_kernel_types(dtype: np.dtype, acc: np.dtype) -> tuple:
    """The Numba types of the arguments with which ``scan._sum_or_prod_plan`` calls
    ``kernels.scan.scan_values`` for a C-contiguous array of *dtype* summed or
    multiplied in *acc* (no NaN skipping, no float16 table), and
    :func:`scan_along` calls it by address."""
    vector = types.Array(types.int64, 1, "C")
    i64 = types.int64
    return (i64, i64, i64, types.Array(from_dtype(dtype), 1, "C", readonly=True), i64,
            vector, vector, i64, i64, vector, vector, i64, i64, i64, i64, i64,
            types.boolean, types.boolean, types.none,
            types.Array(from_dtype(acc), 3, "C"), types.Array(from_dtype(acc), 4, "C"))


@njit(cache=True, nogil=True)
def scan_along(x, axis, op, ordered, out, address):
    """cumsum (``op`` = ``kernels.scan.OP_SUM``) or cumprod of C-contiguous *x* along
    *axis* into *out* (C-contiguous, x's shape, the accumulator dtype) by
    ``scan._sum_or_prod_plan``'s kernel at *address*, in one chunk per lane as
    the plan runs it on the calling thread. Returns False, having done nothing,
    where the plan would cut the axis into chunks (``scan._split``; *ordered*: a
    float product, never cut), which changes the order of a float sum.

    The view: the dimensions before the axis as one outer dimension, those after
    it as ``inner`` (stride 1), none in between: a walk of the same elements in
    the same order per lane as ``_layout.scan_view``'s (which drops dimensions of
    length 1), so the same bits."""
    before, n, after = _split_at(x.shape, axis)
    block = _scan_block(before, after)
    tasks = before * ((after + block - 1) // block)
    chunk_len = max(16, SCAN_CHUNK // block)
    if tasks < SCAN_MIN_TASKS and n >= 2 * chunk_len and not ordered:
        return False
    outer_shape, outer_strides, none = _scan_outer(before, n, after)
    carry = np.empty((before, 1, after), out.dtype)
    no = x.size < 0  # False, typed as a bool (not as the constant) like the plan's
    args = (np.int64(0), np.int64(1), np.int64(S.PHASE_SCAN), _readonly(x.reshape(x.size)), np.int64(0),
            outer_shape, outer_strides, np.int64(n), np.int64(after if n > 1 else 0), none, none,
            np.int64(after), np.int64(1 if after > 1 else 0), np.int64(max(n, 1)),
            np.int64(block), np.int64(op), no, no, None, carry,
            out.reshape((before, n, 1, after)))
    call_kernel(address, args)
    return True


@njit(cache=True, nogil=True)
def scan_rows(x, op, ordered, out):
    """:func:`scan_along` of C-contiguous float *x* along its last axis where the
    plan runs its four-lane loop on it (``scan._quad_groups_scan``: at least four
    rows of at least ``ROW_MIN_LANES``, one chunk each), that loop called here
    directly: no kernel geometry or call by address (a cumsum of a (16, 64)
    float32 array 3.5 -> 2.2 us, AMD EPYC Zen 4). Returns False, having done
    nothing, for any other call (the caller tries :func:`scan_along`)."""
    n = x.shape[-1]
    return _scan_lanes(x.reshape(x.size), x.size // max(n, 1), n, n, 1, op, ordered, out)


@njit(cache=True, nogil=True)
def scan_columns(t, op, ordered, out):
    """:func:`scan_rows` of the rows of a transposed table ``t.T`` (*t* C-contiguous,
    2-D) into *out* (C-contiguous, ``t.T``'s shape): its strided lanes read four
    at a time as the plan reads them, with no C-ordered copy first."""
    n, rows = t.shape
    return _scan_lanes(t.reshape(t.size), rows, n, 1, rows, op, ordered, out)


@njit(inline="always")
def _scan_lanes(base, rows, n, step, n_stride, op, ordered, out):
    """The body of :func:`scan_rows` and :func:`scan_columns`: *rows* lanes of *n*
    elements, ``step`` apart, elements ``n_stride`` apart."""
    if rows < 4 or n < S.ROW_MIN_LANES:
        return False
    if rows < SCAN_MIN_TASKS and n >= 2 * max(16, SCAN_CHUNK) and not ordered:
        return False  # the plan cuts the lanes into chunks (scan_along's test, a block of 1)
    carry = np.empty((rows, 1, 1), out.dtype)
    S._quad_groups_scan(0, 1, S.PHASE_SCAN, _readonly(base), 0, step, n, n_stride, n, op,
                        base.size < 0, None, carry, out.reshape((rows, n, 1, 1)))
    return True


def extreme_scan_kernel_types(dtype: np.dtype) -> tuple:
    """The same for ``scan._extreme_plan``'s kernel (``kernels.scan.extreme_kernel``)
    on a C-contiguous array of *dtype*, read as signed integers of its width, and
    :func:`cum_extreme_along`."""
    bits = from_dtype(np.dtype(f"i{dtype.itemsize}"))
    vector = types.Array(types.int64, 1, "C")
    i64 = types.int64
    return (i64, i64, i64, types.Array(bits, 1, "C", readonly=True), i64,
            vector, vector, i64, i64, vector, vector, i64, i64, i64, i64,
            bits, bits, bits, bits,
            types.Array(bits, 3, "C"), types.Array(bits, 3, "C"), types.Array(i64, 3, "C"),
            types.Array(bits, 4, "C"), types.Array(i64, 4, "C"))


@njit(cache=True, nogil=True)
def _split_at(shape, axis):
    """(elements before *axis*, its length, elements after it) of *shape*."""
    before = 1
    after = 1
    for d in range(axis):
        before *= shape[d]
    for d in range(axis + 1, len(shape)):
        after *= shape[d]
    return before, shape[axis], after


@njit(cache=True, nogil=True)
def _scan_outer(before, n, after):
    """The outer dimension of a C-contiguous scan view (one, of *before* lanes'
    groups) and its empty middle: ``outer_shape``, ``outer_strides``, ``mid``."""
    outer_shape = np.empty(1, np.int64)
    outer_shape[0] = before
    outer_strides = np.empty(1, np.int64)
    outer_strides[0] = n * after
    return outer_shape, outer_strides, np.empty(0, np.int64)


@njit(cache=True, nogil=True)
def _scan_block(before, after):
    """``scan._split``'s block of inner lanes for one lane of *before* x *after*."""
    block = 1
    if after > 1:
        block = min(after, SCAN_INNER_BLOCK)
        if before * ((after + block - 1) // block) < SCAN_MIN_TASKS:
            block = min(block, max(256, (after + SCAN_MIN_TASKS - 1) // SCAN_MIN_TASKS))
    return block


@njit(cache=True, nogil=True)
def cum_extreme_along(x, axis, masks, values, indices, address):
    """cummax or cummin (*masks*: ``_dtypes.key_masks`` of x's dtype, as a tuple of
    four, the direction among them) of C-contiguous *x* along *axis* into *values*
    (x's dtype and shape) and *indices* (int64, x's shape), by
    ``scan._extreme_plan``'s kernel at *address*, each lane in one pass as the plan
    runs it on the calling thread (an extreme is exact: no chunking changes it),
    on the view :func:`scan_along` describes."""
    before, n, after = _split_at(x.shape, axis)
    outer_shape, outer_strides, none = _scan_outer(before, n, after)
    bits = _bits_like(x)
    keys = np.empty((before, 1, after), bits)
    state_bits = np.empty((before, 1, after), bits)
    state_index = np.empty((before, 1, after), np.int64)
    fmask, fone, xmask, expo = masks
    args = (np.int64(0), np.int64(1), np.int64(S.PHASE_SCAN),
            _readonly(x.reshape(x.size).view(bits)), np.int64(0),
            outer_shape, outer_strides, np.int64(n), np.int64(after if n > 1 else 0), none, none,
            np.int64(after), np.int64(1 if after > 1 else 0), np.int64(max(n, 1)),
            np.int64(_scan_block(before, after)), fmask, fone, xmask, expo,
            keys, state_bits, state_index,
            values.reshape((before, n, 1, after)).view(bits), indices.reshape((before, n, 1, after)))
    call_kernel(address, args)


@njit(cache=True, nogil=True)
def cum_extreme_rows(x, masks, values, indices):
    """:func:`cum_extreme_along` of C-contiguous *x* along its last axis, each row
    walked by the plan's own lane loop (``scan._lane_extreme``) from the kernel's
    first state: no kernel geometry, scratch or call by address (a (16, 64)
    float32 cummax spent 2.4 of its 6.5 us in them, AMD EPYC Zen 4)."""
    n = x.shape[-1]
    _extreme_lanes(_readonly(x.reshape(x.size)), x.size // max(n, 1), n, n, 1, masks, values,
                   indices)


@njit(cache=True, nogil=True)
def cum_extreme_columns(t, masks, values, indices):
    """:func:`cum_extreme_rows` of the rows of a transposed table ``t.T`` (*t*
    C-contiguous, 2-D) into *values* and *indices* (C-contiguous, ``t.T``'s
    shape): its strided lanes four at a time, as the plan reads them
    (``scan._lanes4_extreme``), with no C-ordered copy first."""
    n, rows = t.shape
    _extreme_lanes(_readonly(t.reshape(t.size)), rows, n, 1, rows, masks, values, indices)


@njit(inline="always")
def _extreme_lanes(base, rows, n, step, n_stride, masks, values, indices):
    """The body of :func:`cum_extreme_rows` and :func:`cum_extreme_columns`: *rows*
    lanes of *n* elements of *base*, ``step`` apart, elements ``n_stride`` apart,
    into the C-ordered (rows, n) *values* and *indices*."""
    kind = _bits_like(base)
    keys = base.view(kind)
    out_bits = values.reshape(values.size).view(kind)
    out_index = indices.reshape(indices.size)
    fmask, fone, xmask, expo = masks
    shift = kind(base.itemsize * 8 - 1)
    lowest = kind(np.iinfo(kind).min)
    top = kind(np.iinfo(kind).max)
    key = np.empty(4, kind)
    state = np.empty(4, kind)
    at = np.empty(4, np.int64)
    g = 0
    if n_stride != 1:  # strided lanes: four side by side, each row of them read once
        while g + 4 <= rows:
            key[:] = lowest
            state[:] = 0
            at[:] = 0
            S._lanes4_extreme(key, state, at, out_bits, out_index, g * n, n, 1, keys, g * step,
                              step, n_stride, 0, n, shift, fmask, fone, xmask, expo, top, True)
            g += 4
    for r in range(g, rows):
        key[0] = lowest
        state[0] = 0
        at[0] = 0
        S._lane_extreme(key[:1], state[:1], at[:1], out_bits[r * n:(r + 1) * n],
                        out_index[r * n:(r + 1) * n], keys, r * step, n_stride, 0, n, shift,
                        fmask, fone, xmask, expo, top)


#: ``axisops.moving``'s ``_BLOCK_MIN`` and ``_BLOCK_WINDOWS`` (the blocks its plans
#: cut an axis into; ``tests/test_fast_path.py`` checks they agree).
MOVING_BLOCK_MIN = 1 << 14
MOVING_BLOCK_WINDOWS = 8


def moving_kernel_types(dtype: np.dtype, kind: str) -> tuple:
    """The Numba types of the arguments with which ``moving._plan`` calls its kernel
    (``kernels.moving.moving_{sum,var,extreme}_kernel`` for *kind* ``"sum"``,
    ``"var"``, ``"extreme"`` or ``"arg"``) for a C-contiguous array of *dtype*
    (float32, float64, int32, int64: no float16 table, no bool view), and the
    moving entries call it by address."""
    vector = types.Array(types.int64, 1, "C")
    i64 = types.int64
    work = from_dtype(dtype if dtype.kind == "f" else np.dtype(np.float64))
    head = (i64, i64, types.Array(from_dtype(dtype), 1, "C", readonly=True), i64, vector, vector,
            i64, i64, vector, vector, i64, i64, i64, i64, i64)
    if kind == "sum":
        return head + (types.boolean, types.none, types.Array(work, 4, "C"))
    if kind == "var":
        return head + (types.float64, types.boolean, types.none, types.Array(work, 4, "C"))
    values = types.float64 if kind == "arg" else work
    return head + (types.boolean, types.none, types.Array(from_dtype(dtype), 1, "C"),
                   types.boolean, types.Array(values, 4, "C"), types.boolean,
                   types.Array(i64, 4, "C"))


@njit(cache=True, nogil=True)
def _moving_head(x, axis, window, min_count):
    """The arguments ``moving._plan`` passes its kernel before the options, for
    C-contiguous *x* along *axis* on the calling thread (the view of
    :func:`scan_along`), and (before, n, after)."""
    before, n, after = _split_at(x.shape, axis)
    outer_shape, outer_strides, none = _scan_outer(before, n, after)
    w = min(window, n)  # moving.fitted_window
    head = (np.int64(0), np.int64(1), _readonly(x.reshape(x.size)), np.int64(0), outer_shape,
            outer_strides, np.int64(n), np.int64(after if n > 1 else 0), none, none,
            np.int64(after), np.int64(1 if after > 1 else 0), np.int64(w), np.int64(min_count),
            np.int64(max(MOVING_BLOCK_MIN, MOVING_BLOCK_WINDOWS * w)))
    return head, before, n, after


@njit(cache=True, nogil=True)
def moving_sum_along(x, axis, window, min_count, mean, out, address):
    """moving_sum or (*mean*) moving_mean of C-contiguous *x* along *axis* into
    *out* (x's shape; x's float dtype, float64 for integers) by ``moving._plan``'s
    kernel at *address*, as the plan runs it on the calling thread (its blocks
    fixed by the shape and the window: the same bits). ``min_count <= n``."""
    head, before, n, after = _moving_head(x, axis, window, min_count)
    call_kernel(address, head + (mean, None, out.reshape((before, n, 1, after))))


@njit(cache=True, nogil=True)
def moving_var_along(x, axis, window, min_count, ddof, root, out, address):
    """moving_var or (*root*) moving_std, as :func:`moving_sum_along`; *ddof* a float."""
    head, before, n, after = _moving_head(x, axis, window, min_count)
    call_kernel(address, head + (ddof, root, None, out.reshape((before, n, 1, after))))


@njit(cache=True, nogil=True)
def moving_extreme_along(x, axis, window, min_count, invert, out, address):
    """moving_max, or (*invert*) moving_min, of C-contiguous *x* into *out* (x's
    shape: x's float dtype, float64 for integers), as :func:`moving_sum_along`."""
    head, before, n, after = _moving_head(x, axis, window, min_count)
    indices = np.empty((1, 1, 1, 1), np.int64)  # unused, as the plan's
    call_kernel(address, head + (invert, None, np.empty(0, x.dtype), True,
                                 out.reshape((before, n, 1, after)), False, indices))


@njit(cache=True, nogil=True)
def moving_arg_along(x, axis, window, min_count, invert, out, address):
    """moving_argmax or (*invert*) moving_argmin into *out* (int64, x's shape)."""
    head, before, n, after = _moving_head(x, axis, window, min_count)
    values = np.empty((1, 1, 1, 1), np.float64)  # unused, as the plan's
    call_kernel(address, head + (invert, None, np.empty(0, x.dtype), False, values, True,
                                 out.reshape((before, n, 1, after))))


#: ``axisops.gather``'s ``_GATHER_BLOCK_BYTES`` (``tests/test_fast_path.py`` checks it)
GATHER_BLOCK_BYTES = 4096


def take_along_kernel_types(dtype: np.dtype) -> tuple:
    """The Numba types of the arguments with which ``gather._along_plan_direct``
    calls ``kernels.gather.take_along`` for C-contiguous x of *dtype* and int64
    indices (the elements moved as signed integers of their width), and
    :func:`take_along_at` calls it by address."""
    bits = from_dtype(np.dtype(f"i{dtype.itemsize}"))
    vector = types.Array(types.int64, 1, "C")
    i64 = types.int64
    return (i64, i64, types.Array(bits, 1, "C", readonly=True), i64, vector, vector, vector,
            i64, i64, types.Array(i64, 1, "C", readonly=True), i64, i64, i64, vector, vector,
            vector, i64, i64, i64, i64, i64, i64, bits, types.Array(types.uint8, 1, "C"),
            types.Array(bits, 1, "C"))


@njit(cache=True, nogil=True)
def take_along_at(x, indices, axis, out, address):
    """take_along_axis of C-contiguous *x* at C-contiguous int64 *indices* (x's shape
    but along *axis*, where it may have any length) into *out* (C-contiguous, the
    indices' shape, x's dtype) by ``gather._along_plan_direct``'s kernel at
    *address*, with mode "raise", one task per block of lanes as the plan runs it
    on the calling thread (a gather moves bits: any split gives the same result).
    Returns False where an index is out of range (*out* then unfinished: the
    caller goes the planned way, which raises)."""
    before, n, after = _split_at(x.shape, axis)
    m = indices.shape[axis]
    outer_shape, x_outer, none = _scan_outer(before, n, after)
    i_outer = np.empty(1, np.int64)
    i_outer[0] = m * after
    block = max(1, GATHER_BLOCK_BYTES // x.itemsize) if after > 1 else 1
    lanes = before * ((after + block - 1) // block)
    bad = np.zeros(lanes, np.uint8)
    bits = _bits_like(x)
    lane_stride = np.int64(1 if after > 1 else 0)
    args = (np.int64(0), np.int64(1), _readonly(x.reshape(x.size).view(bits)), np.int64(0),
            outer_shape, x_outer, i_outer, np.int64(n), np.int64(after if n > 1 else 0),
            _readonly(indices.reshape(indices.size)), np.int64(0), np.int64(m),
            np.int64(after if m > 1 else 0), none, none, none, np.int64(after), lane_stride,
            lane_stride, np.int64(block), np.int64(max(m, 1)), np.int64(0), bits(0), bad,
            out.reshape(out.size).view(bits))
    call_kernel(address, args)
    return not bad.any()  # an index out of range flags its task


@njit(cache=True, nogil=True)
def take_runs_at(x, indices, axis, out):
    """take of C-contiguous *x* along *axis* at C-contiguous int64 *indices* (any
    shape) into *out* (C-contiguous: x's shape with the axis replaced by the
    indices' shape, x's dtype), mode "raise", as plain copies of the elements'
    bits: for each outer row and index, the run of elements after the axis (one
    element along the last axis). Returns False, having written nothing, where an
    index is out of range (the caller goes the planned way, which raises). The
    result is the planned kernel's, which moves the same bits; a small call spent
    0.8 us of its 1.5 in that kernel's geometry and arguments."""
    before, n, after = _split_at(x.shape, axis)
    m = indices.size
    at = indices.reshape(m)
    if _outside(at, n):
        return False
    bits = _bits_like(x)
    src = x.reshape(x.size).view(bits)
    dst = out.reshape(out.size).view(bits)
    if after != 1:  # (none: a dimension of length 0 after the axis, nothing to copy)
        _copy_runs(src, dst, at, before, n, after)
        return True
    negative = 0
    for i in range(m):
        negative += at[i] < 0
    if negative:  # counted from the end: made positive once, out of the gather loop
        at = at.copy()
        for i in range(m):
            at[i] += n if at[i] < 0 else 0
    u = np.uint64  # unsigned offsets: no wrap-around test per element
    for b in range(u(0), u(before)):
        s = b * u(n)
        d = b * u(m)
        for i in range(u(0), u(m)):
            dst[d + i] = src[s + u(at[i])]
    return True


@njit(inline="always")
def _outside(at, n):
    """How many of the int64 indices *at* (1-D, any strides) lie outside [-n, n)."""
    bad = 0
    for i in range(at.size):
        bad += not -n <= at[i] < n
    return bad


@njit(inline="always")
def _copy_runs(src, dst, at, before, n, after):
    """The takes' copy of whole runs: run ``(b, i)`` of *after* elements of the flat
    *dst* is run ``(b, at[i])`` of the flat *src* (*before* rows of *n* runs; an
    index counted from the end where negative)."""
    m = at.size
    u = np.uint64  # unsigned offsets: no wrap-around test per element
    for b in range(before):
        for i in range(m):
            r = at[i]
            s = u((b * n + (r + n if r < 0 else r)) * after)
            d = u((b * m + i) * after)
            for j in range(u(0), u(after)):
                dst[d + j] = src[s + j]


def _index_column(indices):
    """1-D *indices* themselves, or the first column of 2-D ones (compiled code only)."""


@overload(_index_column, inline="always")
def _index_column_impl(indices):
    if indices.ndim == 1:
        return lambda indices: indices
    return lambda indices: indices[:, 0]


@factory
def rows_at_call(dtype_str: str, index_ndim: int):
    """``call(x, indices, out, limit)``, compiled for a 2-D x of *dtype_str* and
    int64 *indices* of *index_ndim* dimensions (1: ``take`` along axis 0; 2: the
    ``(k, 1)`` tuples of ``gather_nd``), both of any strides and read-only: the
    rows ``x[indices[i]]`` into ``out[i]`` (C-contiguous, (k, x's columns)), as
    plain copies of their bits; False, having written nothing meaningful, where
    an index is out of range, x has no rows, there are no indices or the result
    has *limit* elements or more (the caller goes the planned way). Its checks
    are its own: the Python before a compiled take of 16 rows of a (16, 64)
    float32 array cost 1.7 of its 2.2 us (AMD EPYC Zen 4)."""
    dtype = np.dtype(dtype_str)
    bits = from_dtype(np.dtype(f"i{dtype.itemsize}"))
    arr = types.Array(from_dtype(dtype), 2, "A", readonly=True, aligned=False)
    index = types.Array(types.int64, index_ndim, "A", readonly=True, aligned=False)
    result = types.Array(from_dtype(dtype), 2, "C")
    BITS = bits

    @compiled(types.boolean(arr, index, result, types.int64), nogil=True)
    def call(x, indices, out, limit):
        n, cols = x.shape
        k = indices.shape[0]
        if n == 0 or k == 0 or out.size >= limit:
            return False
        flat = _index_column(indices)
        if _outside(flat, n):
            return False
        item = x.itemsize
        if (cols == 1 or x.strides[1] == item) and (n == 1 or x.strides[0] == cols * item) \
                and x.ctypes.data % item == 0:  # C-ordered: each row a run of the flat bits
            _copy_runs(c_view(x).reshape(x.size).view(BITS), out.reshape(out.size).view(BITS),
                       flat, 1, n, cols)
            return True
        for i in range(k):
            r = flat[i]
            r = r + n if r < 0 else r
            for j in range(cols):
                out[i, j] = x[r, j]
        return True

    return call


#: ``axisops.gather``'s ``_SCATTER_BLOCK_BYTES`` (``tests/test_fast_path.py`` checks it)
SCATTER_BLOCK_BYTES = 1024


def scatter_kernel_types(dtype: np.dtype) -> tuple:
    """The Numba types of the arguments with which ``gather._scatter_plan_direct``
    calls ``kernels.gather.scatter_lanes`` for x of *dtype* (float32, float64 or
    int64: its own work dtype) and C-contiguous int64 indices and updates of x's
    dtype, and :func:`scatter_at` calls it by address."""
    work = from_dtype(dtype)
    vector = types.Array(types.int64, 1, "C")
    i64 = types.int64
    return (i64, i64, types.Array(work, 1, "C"), vector, vector, vector, vector, i64, i64,
            types.Array(i64, 1, "C", readonly=True), i64, i64, i64,
            types.Array(work, 1, "C", readonly=True), i64, i64, vector, vector, vector, vector,
            i64, i64, i64, i64, i64, i64, i64, i64, types.Array(types.uint8, 1, "C"))


@njit(cache=True, nogil=True)
def scatter_at(x, indices, updates, axis, op, out, address):
    """scatter of C-contiguous *x* at C-contiguous int64 *indices* with C-contiguous
    *updates* (x's dtype; both x's shape but along *axis*) into *out* (a fresh
    C-contiguous array of x's shape and dtype) by ``gather._scatter_plan_direct``'s
    kernel at *address* (*op*: ``kernels.gather.OP_*``), mode "raise", one
    destination part per lane as the plan runs it: each lane's updates in C order,
    the same result. Returns False where an index is out of range (the caller
    goes the planned way, which raises)."""
    flat = out.reshape(out.size)
    src = x.reshape(x.size)
    for k in range(flat.size):
        flat[k] = src[k]
    before, n, after = _split_at(x.shape, axis)
    m = indices.shape[axis]
    outer = np.empty(1, np.int64)
    outer[0] = before
    o_outer = np.empty(1, np.int64)
    o_outer[0] = n * after
    iu_outer = np.empty(1, np.int64)
    iu_outer[0] = m * after
    none = np.empty(0, np.int64)
    block = max(1, SCATTER_BLOCK_BYTES // x.itemsize) if after > 1 else 1
    lanes = before * ((after + block - 1) // block)
    bad = np.zeros(lanes, np.uint8)
    lane_stride = np.int64(1 if after > 1 else 0)
    i_m = np.int64(after if m > 1 else 0)
    args = (np.int64(0), np.int64(1), flat, outer, o_outer, iu_outer, iu_outer, np.int64(n),
            np.int64(after), _readonly(indices.reshape(indices.size)), np.int64(0), np.int64(m),
            i_m, _readonly(updates.reshape(updates.size)), np.int64(0), i_m, none, none, none,
            none, np.int64(after), lane_stride, lane_stride, lane_stride, np.int64(block),
            np.int64(1), np.int64(op), np.int64(0), bad)
    call_kernel(address, args)
    return not bad.any()  # an index out of range flags its task

"""The compiled call path of the common reduction (``axisops._fast``,
``axisops.kernels.entry``): the same results, bit for bit, as the planned path
it skips, the same errors and warnings (the entries leave those calls to it),
and no kernel compiled for it that the planned path does not use.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import EXHAUSTIVE

import axisops
from axisops import _fast, _jit
from axisops import missing as M
from axisops import reduce as R
from axisops._axes import AxisError
from axisops._layout import reduction_view
from axisops.kernels import entry as E
from axisops.kernels import moments as MK
from axisops.kernels import reduce as K

VALUE_OPS = ("sum", "mean", "nansum", "prod", "nanprod")
MOMENT_OPS = ("nanmean", "var", "std", "nanvar", "nanstd")
ARG_OPS = ("max", "min", "argmax", "argmin", "nanmax", "nanmin", "nanargmax", "nanargmin")
SHAPES = [(1,), (7,), (1000,), (16, 64), (64, 3), (3, 1, 5), (4, 5, 6), (1, 64), (16, 1),
          (2, 3, 40, 7)]
DTYPES = [np.float32, np.float64, np.int32, np.int64]


def _planned(op: str, x: np.ndarray, axis, ddof=0):
    """*op* through its plan, as the public function ran it before the entries."""
    if op == "nanmean":
        return M._nanmean_plan(op, x, axis, False, None)(x)
    if op in MOMENT_OPS:
        return M._variance_plan(op, x, axis, False, None, ddof)(x)
    if op in VALUE_OPS:
        return R._value_plan(op, x, axis, False, None)(x)
    return R._arg_plan(op, x, axis, False, False, np.int64, None)(x)


def _outcome(f, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = f(*args)
        except (ValueError, TypeError) as exc:
            result = exc
    return result, [str(w.message) for w in caught]


def _same(a, b) -> bool:
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b) and str(a) == str(b)
    if type(a) is not type(b):  # a NumPy scalar where NumPy gives one, else an array
        return False
    a, b = np.asarray(a), np.asarray(b)
    return (a.dtype == b.dtype and a.shape == b.shape
            and a.reshape(-1).view(np.uint8).tobytes() == b.reshape(-1).view(np.uint8).tobytes())


def _transposed(dtype, shapes=((3, 64, "F"),)) -> list:
    """F-ordered table shapes for the entry tests: float32's only, every dtype's
    under the exhaustive switch (each compiles strided plan variants to compare)."""
    return list(shapes) if EXHAUSTIVE or np.dtype(dtype) == np.float32 else []


def _table(shape, dtype, seed=0):
    """:func:`_data`, F-ordered for a shape (rows, cols, "F")."""
    if shape[-1] == "F":
        return np.asfortranarray(_data(shape[:2], dtype, seed))
    return _data(shape, dtype, seed)


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    if x.dtype.kind == "f" and x.size > 3:
        x.flat[::7] = np.nan  # a first element NaN; the (7,) array's only NaN
        x.flat[1::11] = -0.0
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", VALUE_OPS + ARG_OPS)
def test_entries_give_the_planned_bits_errors_and_warnings(op, dtype):
    f = getattr(axisops, op)
    for shape in SHAPES:
        x = _data(shape, dtype)
        if "prod" in op and x.dtype.kind == "f":  # products that stay finite (and round)
            x = 1 + x / 1000
        for axis in [None, *range(-len(shape), len(shape))]:
            got, got_warned = _outcome(f, x, axis)
            want, want_warned = _outcome(_planned, op, x, axis)
            assert _same(got, want), (shape, axis, got, want)
            assert got_warned == want_warned, (shape, axis)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", MOMENT_OPS)
def test_moment_entries_give_the_planned_bits_errors_and_warnings(op, dtype):
    f = getattr(axisops, op)
    for shape in SHAPES:
        for nan in (True, False):
            x = _data(shape, dtype)
            if not nan:
                x = np.nan_to_num(x)
            for axis in [None, *range(-len(shape), len(shape))]:
                for ddof in ((0, 1, 7) if op != "nanmean" else (0,)):
                    options = {"ddof": ddof} if op != "nanmean" else {}
                    got, got_warned = _outcome(lambda: f(x, axis, **options))
                    want, want_warned = _outcome(_planned, op, x, axis, ddof)
                    assert _same(got, want), (shape, axis, ddof, got, want)
                    assert got_warned == want_warned, (shape, axis, ddof)


@pytest.mark.parametrize("op", ["nanmax", "nanargmin", "nansum", "nanmean", "nanstd"])
def test_all_nan_outputs_go_the_planned_way(op):
    x = np.full((3, 4), np.nan)
    x[1, 2] = 1.0
    for axis in (None, 0, 1):
        got, got_warned = _outcome(getattr(axisops, op), x, axis)
        want, want_warned = _outcome(_planned, op, x, axis)
        assert _same(got, want) and got_warned == want_warned, axis


def test_the_entries_run_the_plans_kernels():
    """An entry calls the kernel the plan compiled (by address, with the types of
    ``entry.sum_kernel_types`` / ``arg_kernel_types``), never a second compilation
    of it; and it does take the calls it is for."""
    x = _data((16, 64), np.float32)
    kernels = [K.value_kernel(r, K.COMBINE_CASCADE) for r in (False, True)]
    kernels += [K.arg_kernel("<i4", True, r, s) for r in (False, True) for s in (False, True)]
    kernels += [MK.moments_rows(s, v) for s in (False, True) for v in (False, True)]
    for op in VALUE_OPS + ARG_OPS + MOMENT_OPS:
        for axis in (None, 0, 1):
            _planned(op, x, axis)
    before = [set(k.signatures) for k in kernels]
    for op in VALUE_OPS + ARG_OPS:
        for axis in (None, 0, 1):
            res = _fast.value(op, x, axis) if op in VALUE_OPS else _fast.arg(op, x, axis)
            assert res is not None or op.startswith("nan"), (op, axis)  # all-NaN: planned
    clean = np.nan_to_num(x)
    for op in MOMENT_OPS:
        for axis in (None, 1):  # along the last axis or all only
            assert _fast.moments(op, clean, axis, 0) is not None, (op, axis)
    assert [set(k.signatures) for k in kernels] == before


def test_kernel_variants_have_names_of_their_own():
    """The entries find a kernel's machine code by its name, which Numba makes of
    the qualified name: every variant of a factory's kernel needs its own."""
    variants = [K.value_kernel(r, c) for r in (False, True)
                for c in (K.COMBINE_CASCADE, K.COMBINE_ORDERED, K.COMBINE_ANY)]
    variants += [K.arg_kernel(b, f, r, s) for b in ("<i4", "<i8") for f in (False, True)
                 for r in (False, True) for s in (False, True) if f or not s]
    variants += [MK.moments_rows(s, v) for s in (False, True) for v in (False, True)]
    from axisops.kernels import scan as KS

    variants += [KS.extreme_kernel(b) for b in ("<i1", "<i2", "<i4", "<i8")]
    names = [k.py_func.__qualname__ for k in variants]
    assert len(set(names)) == len(names), names


@pytest.mark.parametrize("shape", [(1,), (5,), (16, 64), (64, 16), (1, 64), (16, 1), (3, 1, 5),
                                   (4, 5, 6), (2, 3, 1, 7), (1, 1, 9), (40, 20, 3), (64, 4),
                                   (40, 6, 3)])
def test_entry_geometry_is_the_views(shape):
    """``entry.axis_geometry`` mirrors ``_layout.reduction_view`` and ``reduce``'s
    choices (loop order, blocks) for C-contiguous arrays; its constants are theirs."""
    assert (E.ROW_BLOCK, E.LANE_BLOCK, E.SHORT_RUN, E.FEW_LANES) == (
        R._INNER_BLOCK, R._LANE_BLOCK, R._SHORT_RUN, R._FEW_LANES)
    x = np.zeros(shape)
    for axis in [-1, *range(len(shape))]:
        axes = tuple(range(len(shape))) if axis < 0 else (axis,)
        for keep_order in (False, True):
            view = reduction_view(x, axes, keep_order=keep_order)
            chunks, chunk_len = R._chunking(view.reduced_count)
            block = R._inner_block(view, chunks, parallel=False)
            want = R._kernel_args(view, chunk_len, block)[0]
            geo, outer, inner, row = E.axis_geometry(shape, axis, 0)
            assert geo.tolist() == want.tolist(), (axis, keep_order)
            assert (outer, inner, row) == (view.outer, view.inner, R._row_order(view))


def test_calls_the_entries_do_not_take():
    """Views, other dtypes and options, big and parallel calls: the planned path."""
    x = _data((16, 64), np.float64)
    assert _fast.value("sum", x[:, ::2], 1) is None  # not C-contiguous
    raw = np.zeros(x.nbytes + 1, np.uint8)
    misaligned = raw[1:].view(x.dtype).reshape(x.shape)  # the plan copies it first
    misaligned[...] = x
    assert not misaligned.flags.aligned and misaligned.flags.c_contiguous
    assert _fast.value("sum", misaligned, 1) is None and _fast.arg("argmax", misaligned, None) is None
    assert _fast.moments("var", misaligned, 1, 0) is None
    np.testing.assert_array_equal(axisops.sum(misaligned, axis=1), axisops.sum(x, axis=1))
    assert _fast.value("sum", x.astype(np.float16), 1) is None
    assert _fast.value("sum", x.astype(">f8"), 1) is None  # byte order
    assert _fast.value("cumsum", x, 1) is None  # not a value reduction
    assert _fast.value("sum", x, (0, 1)) is None
    assert _fast.value("sum", x, np.int64(1)) is None  # a NumPy integer: validated there
    assert _fast.value("sum", x, 2) is None  # out of range: the plan's AxisError
    assert _fast.value("sum", np.zeros((0, 3)), 1) is None
    assert _fast.arg("argmax", np.zeros(_fast.MAX_SIZE + 1), None) is None
    assert _fast.value("sum", np.zeros((2, _fast.MAX_RUN + 1), np.float32), 1) is None
    foldable = np.zeros(((_fast.MAX_SUM_SIZE + 1) // 4, 4))  # along a middle axis: folded
    assert _fast.value("sum", foldable, 0) is None
    assert _fast.value("sum", np.zeros(_fast.MAX_RUN + 1), None) is None  # more than a chunk
    # along rows in memory nothing is folded: up to MAX_SIZE elements, the plan's bits
    rows = np.random.default_rng(0).random((4, _fast.MAX_SIZE // 4 - 1)).astype(np.float32)
    taken = _fast.value("sum", rows, 1)
    assert taken is not None and taken.dtype == np.float32 and taken.shape == (4,)
    planned = axisops.sum(rows, axis=1, keepdims=True)  # keepdims: the planned path
    assert np.array_equal(taken, planned[:, 0])
    np.testing.assert_allclose(taken, rows.sum(axis=1, dtype=np.float64), rtol=1e-6)
    assert np.array_equal(_fast.value("sum", rows.T, 0), taken)  # its F-ordered twin
    threshold = _jit.PARALLEL_MIN_WORK
    _jit.PARALLEL_MIN_WORK = 0  # as the tests that split every kernel between threads
    try:
        assert _fast.value("sum", x, 1) is None
    finally:
        _jit.PARALLEL_MIN_WORK = threshold
    assert _fast.value("sum", x, 1) is not None
    assert _fast.moments("var", x, 0, 0) is None  # not the last axis
    assert _fast.moments("var", x, 1, 1.5) is None  # a float ddof
    assert _fast.moments("var", np.nan_to_num(x).astype(np.int32), 1, 0) is None
    with pytest.raises(np.exceptions.AxisError):
        axisops.sum(x, axis=2)
    with pytest.raises(ValueError, match="empty"):
        axisops.argmax(np.zeros((3, 0)), axis=1)


def _planned_scan(op: str, x: np.ndarray, axis):
    from axisops import scan as S

    return S._planned(op, S._sum_or_prod_plan, x, axis, None, False, False)


SCAN_SHAPES = SHAPES + [(40000, 3), (3, 40000), (1, 70000)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_entries_give_the_planned_bits(op, dtype):
    """cumsum and cumprod by the entry: the plan's bits, dtype and shape along every
    axis and the flattened array, NaN, -0.0 and overflow included; a long axis of
    few lanes (which the plan cuts into chunks) goes the planned way."""
    f = getattr(axisops, op)
    # (the transposed tables of 4 or more rows of 16 or more: their strided rows four at a time)
    for shape in SCAN_SHAPES + _transposed(dtype, ((3, 64, "F"), (100, 4, "F"), (8, 40, "F"),
                                                   (6, 3000, "F"))):
        x = _data(shape[:2], dtype) if shape[-1] == "F" else _data(shape, dtype)
        if op == "cumprod" and x.dtype.kind == "f":
            x = (x / 50).astype(dtype)  # products that overflow to inf, and underflow
        if shape[-1] == "F":
            x = np.asfortranarray(x)
        for axis in [None, *range(-x.ndim, x.ndim)]:
            got, want = f(x, axis=axis), _planned_scan(op, x, axis)
            assert _same(got, want) and got.flags.c_contiguous, (shape, axis)
            assert got.shape == ((x.size,) if axis is None else x.shape)
    long_lane = _data(100_000, np.float32)  # one lane of 100K: the plan chunks it
    assert _fast.scan("cumsum", long_lane, 0) is None
    few_long = _data((2, 40_000), np.float32)  # two lanes of 40K (chunks of 64K: not cut)
    assert _fast.scan("cumsum", few_long, 1) is not None


def test_scan_entries_run_the_plans_kernel_and_take_only_their_calls():
    from axisops import scan as S
    from axisops.kernels import scan as KS

    assert (E.SCAN_INNER_BLOCK, E.SCAN_MIN_TASKS, E.SCAN_CHUNK) == (
        S._INNER_BLOCK, S._MIN_TASKS, S._CHUNK)
    x = _data((16, 64), np.float32)
    for op in ("cumsum", "cumprod"):
        for axis in (None, 0, 1):
            _planned_scan(op, x, axis)
    before = set(KS.scan_values.signatures)
    for op in ("cumsum", "cumprod"):
        for axis in (None, 0, 1):
            assert _fast.scan(op, x, axis) is not None, (op, axis)
    assert set(KS.scan_values.signatures) == before
    # the calls it leaves to the plan: options, other dtypes, views, NaN twins
    assert _fast.scan("cumsum", x[:, ::2], 1) is None
    assert _fast.scan("cumsum", x.astype(np.float16), 1) is None
    assert _fast.scan("nancumsum", x, 1) is None
    np.testing.assert_array_equal(axisops.cumsum(x, axis=1, reverse=True),
                                  _planned_scan("cumsum", x[:, ::-1], 1)[:, ::-1])


def _planned_cum_extreme(op: str, x: np.ndarray, axis):
    from axisops import scan as S

    return S._planned(op, S._extreme_plan, x, axis, np.int64, op == "cummin")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_entries_give_the_planned_values_and_indices(op, dtype):
    """cummax and cummin by the entry: the plan's values (NaN, -0.0 and +0.0 as
    they are) and int64 indices along every axis and flattened; another
    index_dtype goes the planned way."""
    from axisops.kernels import scan as KS

    f = getattr(axisops, op)
    for shape in SCAN_SHAPES + _transposed(dtype, ((3, 64, "F"), (100, 4, "F"))):
        x = _data(shape[:2], dtype) if shape[-1] == "F" else _data(shape, dtype)
        if x.dtype.kind == "f" and x.size > 3:
            x.flat[2::13] = 0.0
        if shape[-1] == "F":
            x = np.asfortranarray(x)
        for axis in [None, *range(-x.ndim, x.ndim)]:
            got, want = f(x, axis=axis), _planned_cum_extreme(op, x, axis)
            assert type(got) is type(want)
            assert _same(got.values, want.values) and _same(got.indices, want.indices), (shape, axis)
            assert got.values.flags.c_contiguous and got.indices.flags.c_contiguous
    kern = KS.extreme_kernel(f"<i{np.dtype(dtype).itemsize}")
    before = set(kern.signatures)
    x = _data((16, 64), dtype)
    assert _fast.cum_extreme(op, x, 1) is not None
    assert set(kern.signatures) == before  # the plan's compiled kernel, not another
    assert _fast.cum_extreme(op, x[:, ::2], 1) is None
    got = f(x, axis=1, index_dtype=np.int32)
    assert got.indices.dtype == np.int32
    np.testing.assert_array_equal(got.indices, _planned_cum_extreme(op, x, 1).indices)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_transposed_tables_take_the_entries_with_the_planned_bits(dtype):
    """A 2-D F-contiguous array (a transposed C one) reduced along one int axis runs
    through the entry on its transpose: the plan's bits, errors and warnings."""
    for shape in [(64, 3), (3, 64), (100, 4), (4, 1000), (5, 7), (2, 600), (6, 40)]:
        x = np.asfortranarray(_data(shape, dtype))
        assert x.flags.f_contiguous and not x.flags.c_contiguous
        for op in VALUE_OPS + ARG_OPS:
            f = getattr(axisops, op)
            for axis in (0, 1, -1, -2):
                got, got_warned = _outcome(f, x, axis)
                want, want_warned = _outcome(_planned, op, x, axis)
                assert _same(got, want) and got_warned == want_warned, (shape, op, axis)
    x = np.asfortranarray(_data((64, 3), dtype))
    assert _fast.value("sum", x, 0) is not None and _fast.arg("argmin", x, -1) is not None
    assert _fast.arg("argmax", x, None) is None  # flat positions are C-ordered: the plan
    assert _fast.value("sum", np.asfortranarray(np.ones((2, 3, 4), dtype)), 1) is None


MOVING_OPS = ("moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
              "moving_min", "moving_argmax", "moving_argmin")


def _planned_moving(op: str, x: np.ndarray, window, axis, min_count, ddof):
    from axisops import moving as MV

    window, min_count = MV.check_window(op, window, min_count)
    return MV._plan(op, x, axis, window, min_count,
                    None if op not in ("moving_var", "moving_std") else float(ddof))(x)


#: float32 and int64 cover the two kinds of moving kernels (the others repeat them)
#: int64 under the exhaustive switch too (81 s of a CI run): test_moving's reference
#: twins take every class of dtype through the same entries
MOVING_DTYPES = [np.float32, pytest.param(np.int64, marks=pytest.mark.exhaustive),
                 pytest.param(np.float64, marks=pytest.mark.exhaustive),
                 pytest.param(np.int32, marks=pytest.mark.exhaustive)]


@pytest.mark.parametrize("dtype", MOVING_DTYPES, ids=lambda d: np.dtype(d).name)
def test_moving_entries_give_the_planned_bits(dtype):
    """The moving windows by their entry: the plan's bits, dtype and shape along every
    axis, windows shorter and longer than the axis, min_count, ddof, NaN and -0.0;
    what they leave to the plan (every output NaN, errors, views, float ddof)."""
    from axisops import moving as MV

    assert (E.MOVING_BLOCK_MIN, E.MOVING_BLOCK_WINDOWS, _fast.MOVING_WORK_PER_ELEMENT) == (
        MV._BLOCK_MIN, MV._BLOCK_WINDOWS, MV._WORK_PER_ELEMENT)
    for shape in [(1,), (7,), (1000,), (16, 64), (64, 3), (3, 1, 5), (2, 3, 40, 7), (3, 50, "F")]:
        x = np.asfortranarray(_data(shape[:2], dtype)) if shape[-1] == "F" else _data(shape, dtype)
        shape = x.shape
        for op in MOVING_OPS:
            f = getattr(axisops, op)
            for axis in range(-len(shape), len(shape)):
                for window, min_count, ddof in [(1, None, 0), (3, None, 1), (5, 2, 0),
                                                (2000, 1, 0)]:
                    kw = {"ddof": ddof} if op in ("moving_var", "moving_std") else {}
                    got = f(x, window, axis, min_count=min_count, **kw)
                    want = _planned_moving(op, x, window, axis % len(shape), min_count, ddof)
                    assert _same(got, want) and got.flags.c_contiguous, (op, shape, axis, window)
    x = _data((16, 64), dtype)
    assert _fast.moving("moving_mean", x, 3, 1, None, 0) is not None
    assert _fast.moving("moving_mean", x[:, ::2], 3, 1, None, 0) is None  # a view
    assert _fast.moving("moving_mean", x, 3, 1, 70, 0) is None  # min_count above the axis
    assert _fast.moving("moving_mean", x, 0, 1, None, 0) is None  # the plan's ValueError
    assert _fast.moving("moving_var", x, 3, 1, None, 0.5) is None  # a float ddof
    assert _fast.moving("moving_sum", x, 3, None, None, 0) is None  # the plan's TypeError
    assert _fast.moving("moving_sum", x.astype(np.float16), 3, 1, None, 0) is None
    with pytest.raises(ValueError, match="window"):
        axisops.moving_mean(x, 0, 1)


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.int64, marks=pytest.mark.exhaustive)],
                         ids=lambda d: np.dtype(d).name)
def test_moving_row_entries_give_the_planned_bits(dtype):
    """The row entries (``kernels.moving_entry``): rows with no NaN (four chained at a
    time, and the rest alone), rows with NaN, +-inf or -0.0 (the plan's own lane
    walk), partial windows, windows above ``SMALL_WINDOW`` and above the axis, and
    a transposed table copied to C order: the plan's bits, dtype and shape."""
    from axisops.kernels import moving_entry as ME

    x = (np.random.default_rng(3).standard_normal((11, 40)) * 100).astype(dtype)
    if x.dtype.kind == "f":
        x[1, 3] = np.nan
        x[2, 5] = np.inf
        x[6, [0, 39]] = -np.inf, np.inf
        x[0, 2] = -0.0
    for xx in (x, np.asfortranarray(x), np.ascontiguousarray(x[:7, :1])):
        for op in ("moving_sum", "moving_mean", "moving_max", "moving_argmin"):
            for window, min_count in [(1, None), (8, 3), (20, None), (50, 1)]:
                got = _fast.moving_rows(op, xx, window, -1, min_count)
                if (window if min_count is None else min_count) > xx.shape[1]:
                    assert got is None  # every output NaN: the plan
                    continue
                want = _planned_moving(op, xx, window, 1, min_count, 0)
                assert got is not None and got.flags.c_contiguous, (op, window)
                assert _same(got, want), (op, xx.shape, window, min_count)
    assert _fast.moving_rows("moving_mean", x, 3, 0, None) is None  # not the last axis
    assert _fast.moving_rows("moving_mean", x[:, ::2], 3, 1, None) is None  # a view
    assert _fast.moving_rows("moving_var", x, 3, 1, None) is None  # no row entry
    assert ME.STREAMS == 4


def test_moving_wrappers_call_the_row_calls_with_the_planned_bits_and_errors():
    """The public functions' wrappers call ``moving_entry.row_call`` first
    (``_fast.MOVING_CALLS``): 1-D and 2-D arrays, C-ordered, read-only or a
    transposed table (its rows copied), the plan's bits; anything else (a view,
    misaligned data, another axis, three dimensions, every output NaN, a window,
    min_count or axis beyond int64) goes the planned way and raises its errors."""
    x = (np.random.default_rng(5).standard_normal((6, 50)) * 100).astype(np.float32)
    x[1, 3] = np.nan
    x[2, 7] = -np.inf
    readonly = x.copy()
    readonly.flags.writeable = False
    misaligned = np.frombuffer(b"\0" + x.tobytes(), np.uint8)[1:].view(np.float32).reshape(x.shape)
    arrays = [x, x[2], np.asfortranarray(x), readonly, x[:, ::2], misaligned, x.reshape(2, 3, 50)]
    for op in ("moving_sum", "moving_mean", "moving_max", "moving_min", "moving_argmax",
               "moving_argmin"):
        f = getattr(axisops, op)
        for xx in arrays:
            for window, min_count, axis in [(1, None, -1), (8, 3, -1), (20, None, 1),
                                            (60, None, -1), (5, None, 0)]:
                if axis >= xx.ndim:
                    continue
                got = f(xx, window, axis, min_count=min_count)
                want = _planned_moving(op, np.ascontiguousarray(xx), window, axis % xx.ndim,
                                       min_count, 0)
                assert _same(got, want) and got.flags.c_contiguous, (op, xx.shape, window, axis)
        calls = _fast.MOVING_CALLS[op][id(np.dtype(np.float32))]
        assert calls[0] is not None and calls[1] is not None  # made at the first calls
        with pytest.raises(ValueError, match="window"):
            f(x, 0)
        with pytest.raises(ValueError, match="min_count"):
            f(x, 3, min_count=4)
        with pytest.raises(AxisError):
            f(x, 3, 2)
        assert _same(f(x, 2 ** 70, min_count=2), f(x, 50, min_count=2))  # the plan's clamp
        with pytest.raises(AxisError):
            f(x, 3, 2 ** 70)


def test_large_moving_rows_split_between_threads_give_the_planned_bits(monkeypatch):
    """A large C-ordered array along its rows: the row entries' loops, rows split
    between threads (``moving_entry.sum_rows_kernel``, ``extreme_rows_kernel``), on
    one thread and on two: the plan's bits, dtype and shape; rows longer than one
    block are left to the plan."""
    from axisops.kernels import moving_entry as ME

    rows = _jit.PARALLEL_MIN_WORK // (4 * 64) + 7  # just past the threads' threshold
    x = (np.random.default_rng(5).standard_normal((rows, 64)) * 100).astype(np.float32)
    x[1, 3], x[2, 5], x[-1, 0], x[-2, 63] = np.nan, np.inf, -0.0, -np.inf
    calls: list = []
    real_run = _jit.run
    monkeypatch.setattr(_jit, "run", lambda kern, *a: calls.append(kern) or real_run(kern, *a))
    limit = axisops.thread_limit()
    try:
        for threads in (1, 2):
            axisops.thread_limit(threads)
            for op in ("moving_mean", "moving_max", "moving_argmin"):
                for window, min_count in [(8, 3), (20, None)]:
                    got = _fast.moving_rows(op, x, window, -1, min_count)
                    want = _planned_moving(op, x, window, 1, min_count, 0)
                    assert got is not None and got.flags.c_contiguous, op
                    assert _same(got, want), (op, threads, window, min_count)
    finally:
        axisops.thread_limit(limit)
    assert ME.rows_count(x, 8, 1, 3) == 3 and ME.rows_count(x, 8, 0, 3) == 0
    long_rows = np.zeros((4, ME.MOVING_BLOCK_MIN + 1), np.float32)
    assert ME.rows_count(long_rows, 8, 1, None) == 0  # more than one block: the plan's
    # each call of moving_rows ran one of the two row kernels (the plan's are others)
    assert calls.count(ME.sum_rows_kernel) == 4 and calls.count(ME.extreme_rows_kernel) == 8


def test_moving_entries_run_the_plans_kernels():
    from axisops.kernels import moving as MVK

    x = _data((16, 64), np.float32)
    for op in MOVING_OPS:
        _planned_moving(op, x, 3, 1, None, 0)
    kernels = (MVK.moving_sum_kernel, MVK.moving_var_kernel, MVK.moving_extreme_kernel)
    before = [set(k.signatures) for k in kernels]
    for op in MOVING_OPS:
        assert _fast.moving(op, x, 3, 1, None, 0) is not None, op
    assert [set(k.signatures) for k in kernels] == before


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_take_along_entry_gives_the_planned_result(dtype):
    """take_along_axis by its entry: the plan's result along every axis, indices
    shorter and longer than the axis, negative ones; what it leaves to the plan
    (an index out of range, which the plan reports; broadcasting, other modes,
    other index dtypes, views, many short rows)."""
    from axisops import gather as G

    assert E.GATHER_BLOCK_BYTES == G._GATHER_BLOCK_BYTES
    rng = np.random.default_rng(3)
    for shape in [(1,), (7,), (16, 64), (64, 3), (3, 1, 5), (2, 3, 40, 7), *_transposed(dtype)]:
        x = _table(shape, dtype)  # F: a transposed table, copied into C order first
        shape = x.shape
        for axis in range(-len(shape), len(shape)):
            n = shape[axis]
            for m in (1, n, 2 * n + 1):
                ishape = list(shape)
                ishape[axis] = m
                idx = rng.integers(-n, n, ishape)
                got = axisops.take_along_axis(x, idx, axis)
                want = G._along_plan(x, idx, axis, "raise")(x, idx, 0)
                assert _same(got, want), (shape, axis, m)
    from axisops.kernels import gather as GK

    x = _data((16, 64), dtype)
    idx = rng.integers(0, 64, (16, 64))
    before = set(GK.take_along.signatures)
    assert _fast.take_along(x, idx, 1) is not None
    assert set(GK.take_along.signatures) == before  # the plan's compiled kernel
    bad = idx.copy()
    bad[3, 5] = 64
    assert _fast.take_along(x, bad, 1) is None
    with pytest.raises(IndexError, match="64"):
        axisops.take_along_axis(x, bad, 1)
    assert _fast.take_along(x, idx[:1], 1) is None  # broadcasting
    assert _fast.take_along(x, idx.astype(np.int32), 1) is None
    assert _fast.take_along(x[:, ::2], idx[:, ::2], 1) is None
    assert _fast.take_along(x, idx, None) is None
    tall = _data((300, 4), dtype)
    assert _fast.take_along(tall, np.zeros((300, 4), np.int64), 1) is None  # short rows


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_take_entry_gives_the_planned_result(dtype):
    """take by its entry: the plan's result along every axis and the flattened
    array, indices of any shape, negative ones; an index out of range, other index
    dtypes and views go the planned way."""
    from axisops import gather as G
    from axisops.kernels import gather as GK

    rng = np.random.default_rng(4)
    for shape in [(1,), (7,), (16, 64), (64, 3), (3, 1, 5), (2, 3, 40, 7), *_transposed(dtype)]:
        x = _table(shape, dtype)  # F: a transposed table, copied into C order first
        shape = x.shape
        for axis in [None, *range(-len(shape), len(shape))]:
            n = x.size if axis is None else shape[axis]
            for ishape in [(1,), (5,), (2, 3)]:
                idx = rng.integers(-n, n, ishape)
                got = axisops.take(x, idx, axis)
                want = G._take_plan("take", x, idx, axis, "raise")(x, idx, 0)
                assert _same(got, want), (shape, axis, ishape)
    x = _data((16, 64), dtype)
    idx = rng.integers(0, 64, 10)
    before = set(GK.take_rows.signatures)
    assert _fast.take(x, idx, 1) is not None
    assert set(GK.take_rows.signatures) == before  # the plan's compiled kernel
    bad = idx.copy()
    bad[4] = -65
    assert _fast.take(x, bad, 1) is None
    with pytest.raises(IndexError, match="-65"):
        axisops.take(x, bad, 1)
    assert _fast.take(x, idx.astype(np.int32), 1) is None
    assert _fast.take(x[:, ::2], idx % 32, 1) is None


@pytest.mark.parametrize("shape", [(3, 4, 0), (5, 0), (2, 6, 0, 3)])
def test_take_with_an_empty_dimension_after_the_axis(shape):
    """A take whose runs after the axis are empty writes nothing (a run copy of
    length 0 once wrote past the empty result, aborting the process), for take and
    for gather_nd of rows: an empty result of the planned shape and dtype."""
    x = np.zeros(shape, np.float32)
    idx = np.array([1, 0, 1])
    for axis in range(x.ndim):
        if x.shape[axis] == 0:
            continue
        got = axisops.take(x, idx % x.shape[axis], axis)
        want = np.take(x, idx % x.shape[axis], axis)
        assert got.shape == want.shape and got.dtype == np.float32 and got.size == 0
    got = axisops.gather_nd(x, (idx % x.shape[0])[:, None])
    assert got.shape == (3,) + shape[1:] and got.dtype == np.float32


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gather_nd_of_one_index_tuples_takes_rows_with_the_planned_result(dtype):
    """gather_nd with tuples of one index and no batch dimensions is take of rows
    through its entry: the plan's result and, for an index out of range, its error."""
    from axisops import gather as G

    rng = np.random.default_rng(5)
    for shape in [(1,), (7,), (16, 64), (64, 3), (3, 1, 5)]:
        x = _data(shape, dtype)
        for ishape in [(1,), (5, 1), (2, 3, 1)]:
            idx = rng.integers(-shape[0], shape[0], ishape)
            got = axisops.gather_nd(x, idx)
            want = G._gather_nd_plan(x, idx, 0)(x, idx)
            assert _same(got, want), (shape, ishape)
    x = _data((16, 64), dtype)
    bad = np.array([[3], [16]])
    with pytest.raises(IndexError) as got:
        axisops.gather_nd(x, bad)
    with pytest.raises(IndexError) as want:
        G._gather_nd_plan(x, bad, 0)(x, bad)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_rows_of_a_table_by_one_call_give_the_planned_result(dtype):
    """take along axis 0 and gather_nd of (k, 1) tuples of a 2-D array by
    ``entry.rows_at_call`` (``_fast.rows_at``): C-ordered, strided, transposed,
    read-only and misaligned tables, negative and strided indices, the planned
    result; empty ones, an index out of range, other index dtypes and large
    results go the planned way (and raise its errors)."""
    from axisops import gather as G

    rng = np.random.default_rng(6)
    x = _data((16, 64), dtype)
    readonly = x.copy()
    readonly.flags.writeable = False
    raw = np.zeros(x.nbytes + 1, np.uint8)
    misaligned = raw[1:].view(x.dtype).reshape(x.shape)
    misaligned[...] = x
    tables = [x, x[:, ::3], x[::2], np.asfortranarray(x), x.T, readonly, misaligned,
              x[:1], x[:, :1]]
    wide = rng.integers(-16, 16, (12, 3))
    for table in tables:
        n = table.shape[0]
        for idx in [rng.integers(-n, n, 9), wide[:, 1] % n, np.array([n - 1, -n])]:
            got = axisops.take(table, idx, axis=0)
            assert _same(got, np.take(table, idx, axis=0)) and got.flags.c_contiguous
            tuples = idx[:, None]
            got = axisops.gather_nd(table, tuples)
            assert _same(got, G._gather_nd_plan(table, tuples, 0)(table, tuples))
        strided = (wide % n)[:, 1:2]  # (k, 1) tuples, not contiguous
        assert _same(axisops.gather_nd(table, strided), table[strided[:, 0]])
    assert _fast.rows_at(x, np.zeros(0, np.int64), 1) is None  # empty: the plan
    assert _fast.rows_at(x, np.array([16]), 1) is None  # out of range: the plan raises
    assert _fast.rows_at(x.astype(np.float16), np.array([1]), 1) is None
    for bad in (np.array([16]), np.array([-17])):
        with pytest.raises(IndexError, match="out of range"):
            axisops.take(x, bad, axis=0)
        with pytest.raises(IndexError, match="out of range"):
            axisops.gather_nd(x, bad[:, None])
    threshold = _jit.PARALLEL_MIN_WORK
    _jit.PARALLEL_MIN_WORK = 64  # a result of 64 elements or more: the plan's (split) way
    try:
        assert _fast.rows_at(x, np.array([1, 2]), 1) is None
    finally:
        _jit.PARALLEL_MIN_WORK = threshold
    assert _same(axisops.take(x, np.array([1, 2], ">i8"), axis=0), x[[1, 2]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=lambda d: np.dtype(d).name)
def test_scatter_entry_gives_the_planned_result(dtype):
    """scatter by its entry: the plan's result for every reduce along every axis,
    repeated indices (the last in C order wins without a reduce), negative ones,
    indices shorter along the axis; what it leaves to the plan."""
    from axisops import gather as G
    from axisops.kernels import gather as GK

    assert E.SCATTER_BLOCK_BYTES == G._SCATTER_BLOCK_BYTES
    rng = np.random.default_rng(6)
    for shape in [(1,), (7,), (16, 64), (64, 3), (3, 1, 5), (2, 3, 40, 7), *_transposed(dtype)]:
        x = _table(shape, dtype)  # F: a transposed table, copied into C order first
        shape = x.shape
        for axis in range(-len(shape), len(shape)):
            n = shape[axis]
            for m in (1, n):
                ishape = list(shape)
                ishape[axis] = m
                idx = rng.integers(-n, n, ishape)
                upd = _data(tuple(ishape), dtype, seed=7)
                for reduce in (None, "add", "mul", "max", "min"):
                    got = axisops.scatter(x, idx, upd, axis, reduce=reduce)
                    want = G._scatter_plan(x, idx, upd, axis, reduce)(x, idx, upd)
                    assert _same(got, want), (shape, axis, m, reduce)
    x = _data((16, 64), dtype)
    idx = rng.integers(0, 64, (16, 64))
    before = set(GK.scatter_lanes.signatures)
    assert _fast.scatter(x, idx, x, 1, GK.OP_ADD) is not None
    assert set(GK.scatter_lanes.signatures) == before  # the plan's compiled kernel
    bad = idx.copy()
    bad[2, 9] = 64
    assert _fast.scatter(x, bad, x, 1, GK.OP_ADD) is None
    with pytest.raises(IndexError, match="64"):
        axisops.scatter(x, bad, x, 1, reduce="add")
    assert _fast.scatter(x, idx[:1], x[:1], 1, GK.OP_ADD) is None  # a smaller dimension
    assert _fast.scatter(x, idx, x.astype(np.float16), 1, GK.OP_ADD) is None
    with pytest.raises(ValueError, match="reduce"):
        axisops.scatter(x, idx, x, 1, reduce="sum")


@pytest.mark.parametrize("dtype", DTYPES)
def test_whole_array_extremes_give_the_planned_bits(dtype):
    """The one-loop entries of a whole array (``kernels.flat_entry``) on the cases
    its keys must get right: signed zeros alone, NaN of either sign (first or
    among values), infinities, all NaN, the extreme integers; bits, dtypes,
    warnings and errors as the plan's."""
    rng = np.random.default_rng(3)
    cases = [rng.integers(-3, 3, n).astype(dtype) for n in (1, 2, 5, 64, 1000)]
    if np.dtype(dtype).kind == "f":
        neg_nan = np.copysign(np.nan, -1)
        cases += [np.array(v, dtype) for v in (
            [-0.0], [-0.0, 0.0], [0.0, -0.0], [-0.0, -1.0], [neg_nan, 1.0], [2.0, neg_nan, np.nan],
            [np.nan], [neg_nan, neg_nan], [-np.inf, np.nan, np.inf], [-np.inf], [np.inf, 1.0])]
        for n in (256, 2048, 3000):  # runs the blocked pass takes (float32 from 256, 64-bit from 2048)
            signed = np.full(n, -5.0, dtype)
            signed[n - 1], signed[1100 % n] = 0.0, -0.0  # zeros of either sign, in other blocks
            late_nan = rng.standard_normal(n).astype(dtype)
            late_nan[n - 2] = neg_nan
            cases += [signed, -signed, late_nan, np.full(n, np.nan, dtype)]
    else:
        info = np.iinfo(dtype)
        cases += [np.array(v, dtype) for v in ([info.min], [info.max, info.min], [info.min, 0])]
    for x in cases:
        for op in ARG_OPS:
            for axis in (None, 0, -1):
                got = _outcome(getattr(axisops, op), x, axis)
                want = _outcome(_planned, op, x, axis)
                assert _same(got[0], want[0]) and got[1] == want[1], (op, x, axis, got, want)


def _taken_by_wrapper(op: str, dtype, monkeypatch) -> list:
    """Calls that reach the wrapper's compiled entry of *op* for *dtype*
    (``_fast.ScalarCall``), recorded in the returned list."""
    f = getattr(axisops, op)
    f(np.ones(3, dtype))  # the first call makes the entry
    call = _fast.SCALAR_CALLS[op]
    entry, *rest = call.entries[id(np.dtype(dtype))]
    seen: list = []

    def spy(x, *args):
        r = entry(x, *args)
        seen.append(r is not None)
        return r

    monkeypatch.setitem(call.entries, id(np.dtype(dtype)), (spy, *rest))
    return seen


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32], ids=lambda d: np.dtype(d).name)
def test_wrapper_entries_give_the_planned_bits_on_long_lanes(dtype, monkeypatch):
    """A 1-D array reduced to a scalar goes from the wrapper to its compiled entry
    (``kernels.scalar_entry``): cascades of many leaves, positions past the premade
    scalars, a -0.0 in an early block beside +0.0 in a later one, NaN in a later
    block; the planned bits, dtype and type."""
    ops = VALUE_OPS + ARG_OPS + (MOMENT_OPS if np.dtype(dtype).kind == "f" else ())
    spies = {op: _taken_by_wrapper(op, dtype, monkeypatch) for op in ops}
    rng = np.random.default_rng(5)
    for n in (513, 1025, 4099, 9000, 65535):
        x = (rng.standard_normal(n) * 100).astype(dtype)
        x[n // 2 + 1] = x.max() + 1  # a position past 4096 for the longest ones
        cases = [x]
        if x.dtype.kind == "f":
            signed = np.full(n, -5.0, dtype)
            signed[10], signed[n - 3] = -0.0, 0.0  # argmax: the first zero of either sign
            late_nan = x.copy()
            late_nan[n - 2] = np.nan
            cases += [signed, -signed, late_nan]
        for x in cases:
            for op in ops:
                got = _outcome(getattr(axisops, op), x, None)
                want = _outcome(_planned, op, x, None)
                assert _same(got[0], want[0]) and got[1] == want[1], (op, n, got, want)
    for op in ops:  # every call but the all-NaN-free nan extremes' was the entry's
        assert spies[op] and all(spies[op]), op


def test_wrapper_entries_leave_other_calls_to_the_function(monkeypatch):
    """Views, misaligned and big arrays, options, odd axes and ddof: not taken by the
    wrapper's entry (or answered None by it), and the function's results and
    errors stand."""
    seen = _taken_by_wrapper("sum", np.float64, monkeypatch)
    var_seen = _taken_by_wrapper("var", np.float64, monkeypatch)
    x = _data((1000,), np.float64)
    raw = np.zeros(x.nbytes + 1, np.uint8)
    misaligned = raw[1:].view(x.dtype)
    misaligned[...] = x
    for y in (x[::2], x[::-1], misaligned, np.broadcast_to(x[:1], (50,)),
              np.zeros(_fast.MAX_SUM_SIZE + 1)):
        assert _same(axisops.sum(y), _planned("sum", np.ascontiguousarray(y), None))
    assert seen == [False] * 5  # each answered None
    x.setflags(write=False)  # read-only: taken
    assert _same(axisops.sum(x), _planned("sum", x, None)) and seen[-1]
    del seen[:]
    assert axisops.sum(x, keepdims=True).shape == (1,)
    assert axisops.sum(x, dtype=np.float32).dtype == np.float32
    with pytest.raises(AxisError):
        axisops.sum(x, axis=1)
    with pytest.raises(TypeError):
        axisops.sum(x, axis=0.0)
    assert _same(axisops.sum(x, axis=np.int64(0)), _planned("sum", x, None))
    with pytest.raises(ValueError):
        axisops.sum(np.zeros((2, 3)), axis=(0, 0))
    assert seen == []  # none of these reached the entry
    assert _same(axisops.var(x, ddof=1.0), _planned("var", x, None, 1))
    assert _same(axisops.var(x, ddof=2), _planned("var", x, None, 2)) and var_seen == [True]
    one = np.ones(1)  # no degree of freedom left: the function warns
    got, want = _outcome(lambda: axisops.var(one, ddof=1)), _outcome(_planned, "var", one, None, 1)
    assert _same(got[0], want[0]) and got[1] == want[1] and got[1]
    assert var_seen == [True, False]
    threshold = _jit.PARALLEL_MIN_WORK
    _jit.PARALLEL_MIN_WORK = 0  # as the tests that split every kernel between threads
    try:
        assert _same(axisops.sum(x), _planned("sum", x, None)) and seen == [False]
    finally:
        _jit.PARALLEL_MIN_WORK = threshold


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.int64, marks=pytest.mark.exhaustive)],
                         ids=lambda d: np.dtype(d).name)
def test_wrapper_lane_entries_give_the_planned_bits(dtype, monkeypatch):
    """A 2-D array along an int axis goes from the wrapper to the lanes' entry of an
    extreme or a sum (``kernels.scalar_entry``'s ``*_lanes_entry``): rows, lanes
    side by side (many; or a few, several rows at a time folded, with rows left
    over), C and F order, NaN and all-NaN lanes; the planned bits, errors and
    warnings; views and tables above the entries' size are left to the function."""
    calls = {}
    for op in ARG_OPS + VALUE_OPS:
        getattr(axisops, op)(np.ones((2, 3), dtype), axis=0)  # makes the entries
        call = _fast.SCALAR_CALLS[op]
        entry, *rest = call.lanes[id(np.dtype(dtype))]
        seen = calls[op] = []

        def spy(*args, entry=entry, seen=seen):
            seen.append(entry(*args))
            return seen[-1]

        monkeypatch.setitem(call.lanes, id(np.dtype(dtype)), (spy, *rest))
    shapes = [(5, 300), (300, 5), (40, 20), (20, 40), (1, 9), (9, 1), (130, 1), (64, 4),
              (33, 15)]
    for shape in shapes:
        for order in ("C", "F"):
            x = np.asarray(_data(shape, dtype, seed=len(shape) + shape[0]), order=order)
            if x.dtype.kind == "f":
                x[:, -1] = np.nan  # a lane of NaN only along axis 0
                x[5::7, 0] = np.nan  # and NaN inside lanes
            for op in ARG_OPS + VALUE_OPS:
                for axis in (0, 1, -1, -2, 2):
                    got = _outcome(getattr(axisops, op), x, axis)
                    want = _outcome(_planned, op, x, axis)
                    assert _same(got[0], want[0]) and got[1] == want[1], (op, shape, order, axis)
    for op in ARG_OPS + VALUE_OPS:
        assert any(calls[op]), op
    del calls["argmax"][:]
    x = _data((4096, 4), dtype)
    big = _data((_fast.MAX_SIZE // 4 + 16, 4), dtype)
    for y in (x[:, ::2], x, x.T.copy(), big):  # a view, a narrow table, a wide one, a big one
        assert _same(axisops.argmax(y, axis=0), _planned("argmax", np.ascontiguousarray(y), 0))
    assert calls["argmax"] == [False, True, True, False]

"""Gathers and scatter (take, take_along_axis, gather_nd, scatter) against the NumPy oracle.

Every operator runs over every edge case of ``tests/cases.py`` (each dtype, 0-d,
zero-size, 1-D to 5-D, transposed, stepped, negative-stride, broadcast, read-only
and unaligned views) for every axis, with index arrays that are negative,
repeated, 0-d, empty, 2-D and out of range, in every mode (take, take_along_axis)
and with every reduce (scatter). Each call checks value, dtype, shape and bits
(a -0.0 for a 0.0 is a bug: these operators copy or combine elements, they never
round), or that both sides raise alike, with ``IndexError`` messages equal word
for word; and that no input was modified.

Then: every integer index dtype (uint64 beyond int64 included), the errors, the
``fill_value`` rules, scatter's reduction rules by hand, results that do not depend
on the number of threads (float ``"add"`` with 100000 updates into 3 places
included), and arrays of more than ``2**32`` elements, as stride-0 broadcast views
that the operators must walk without copying (checked under a cap on the address
space, so a copy fails with ``MemoryError`` instead of exhausting the machine).
"""
from __future__ import annotations

import contextlib
import itertools
import math
import re
import zlib

import numpy as np
import pytest
from cases import (
    INT_DTYPES,
    AxisError,
    bad_axes,
    case_params,
    cases,
    changed,
    compare_outcomes,
    mismatch,
    outcome,
    same_bits,
    single_axes,
    snapshot,
    values,
)

import axisops
from axisops import reference as ref

OPS = ("take", "take_along_axis", "gather_nd", "scatter")
MODES = ("raise", "wrap", "clip", "fill")
REDUCES = (None, "add", "mul", "max", "min")
CASES = case_params()
#: A fill value of each kind of dtype (exactly representable in every dtype of its kind).
FILL = {"b": True, "i": -3, "u": 7, "f": -2.5}
_RANGE_MESSAGE = re.compile(r"index -?\d+ at position \([\d, ]*\) of indices is out of range \[")


# ------------------------------------------------------------------- comparisons

def _describe(op, args, kwargs):
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            parts.append(f"{a.dtype} {a.shape}" + ("" if a.size > 12 or a.dtype.kind not in "iu"
                                                   else f" {a.tolist()}"))
        else:
            parts.append(repr(a))
    parts += [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{op}({', '.join(parts)})"


def check_call(op, *args, **kwargs):
    """Compare ``axisops.<op>`` with ``reference.<op>``; return a message or ``None``.

    Also that neither touched an array argument, and that an ``IndexError`` naming
    an out-of-range index has the reference's message word for word.
    """
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    before = [snapshot(a) for a in arrays]
    want = outcome(getattr(ref, op), *args, **kwargs)
    got = outcome(getattr(axisops, op), *args, **kwargs)
    msg = compare_outcomes(got, want)
    if msg is None and want[0] == "ok":
        msg = same_bits(got[1], want[1])
    elif (msg is None and isinstance(want[1], IndexError)
          and _RANGE_MESSAGE.search(str(want[1])) and str(got[1]) != str(want[1])):
        msg = f"IndexError({got[1]}), expected IndexError({want[1]})"
    for a, b in zip(arrays, before):
        msg = msg or changed(a, b)
    return None if msg is None else f"{_describe(op, args, kwargs)}: {msg}"


def report(failures, limit=25):
    if failures:
        more = f"\n... and {len(failures) - limit} more" if len(failures) > limit else ""
        pytest.fail(f"{len(failures)} failing calls:\n" + "\n".join(failures[:limit]) + more)


def rng_for(name, salt):
    return np.random.default_rng([zlib.crc32(f"{name}/{salt}".encode()), 7])


def draw(rng, shape, n, spread=1):
    """Indices of *shape*: in ``[-n, n)``, or ``spread`` times as wide (out of range too)."""
    if n == 0 and spread == 1:
        return np.zeros(shape, np.int64)
    r = n * spread + (spread > 1)
    return rng.integers(-r, r, size=shape)


_INDEX_CYCLE = itertools.cycle([np.int64, np.int32, np.int8, np.uint16, np.intp, np.int16,
                                np.uint64, np.uint8, np.uint32])


def as_index_dtype(indices):
    """*indices* in the next integer dtype of a cycle that can hold its values."""
    for _ in range(9):
        dt = np.dtype(next(_INDEX_CYCLE))
        info = np.iinfo(dt)
        if indices.size == 0 or (indices.min() >= info.min and indices.max() <= info.max):
            return indices.astype(dt)
    return indices


# ------------------------------------------------------------------------- take

def take_indices(n, rng):
    """(indices, modes) for an axis of length *n*."""
    yield np.zeros(0, np.int64), MODES
    yield np.zeros((2, 0), np.int64), ("raise", "fill")
    if n:
        yield np.array(-1), MODES                                     # 0-d
        yield np.array([0, n - 1, -1, -n]), ("raise",)
        yield rng.integers(-n, n, size=(3, 4)), ("raise",)            # repeated
    yield np.array([[0, n], [-n - 1, 2 * n + 3]]), MODES                # out of range
    yield np.array(n), MODES                                          # 0-d, out of range
    yield draw(rng, (5,), n, spread=3), MODES


@pytest.mark.parametrize("name,x", CASES)
def test_take_matches_reference(name, x):
    rng = rng_for(name, "take")
    failures = []
    for axis in single_axes(x.ndim):
        n = x.size if axis is None else x.shape[axis]
        for indices, modes in take_indices(n, rng):
            indices = as_index_dtype(indices)
            for mode in modes:
                kw = {"mode": mode}
                if mode == "fill":
                    kw["fill_value"] = FILL[x.dtype.kind]
                if msg := check_call("take", x, indices, axis, **kw):
                    failures.append(msg)
    report(failures)


# -------------------------------------------------------------- take_along_axis

def along_indices(shape, ax, rng):
    """(label, indices, modes) for take_along_axis on *shape* along *ax*."""
    nd, n = len(shape), shape[ax]

    def with_axis(dims, k):
        dims = list(dims)
        dims[ax] = k
        return tuple(dims)

    same = with_axis(shape, n)
    yield "same", draw(rng, same, n), ("raise",)
    yield "same-out", draw(rng, same, n, spread=3), MODES
    yield "repeated", draw(rng, with_axis(shape, 2 * n + 1), n), ("raise",)
    yield "axis-empty", np.zeros(with_axis(shape, 0), np.int64), ("raise", "fill")
    ones = tuple(1 if d != ax else 3 for d in range(nd))
    yield "broadcast-indices", draw(rng, ones, n, spread=2), ("raise", "wrap", "fill")
    leading = tuple(s - 1 if s >= 3 and d != ax else s for d, s in enumerate(shape))
    yield "leading", draw(rng, with_axis(leading, 2), n), ("raise",)
    if 1 in shape[:ax] + shape[ax + 1:]:
        x_ones = tuple(3 if s == 1 and d != ax else s for d, s in enumerate(shape))
        yield "broadcast-x", draw(rng, with_axis(x_ones, 2), n, spread=2), MODES
    mixed = tuple(s if d == ax else rng.choice([s, 1, max(s - 1, 2) if s > 2 else s,
                                                  3 if s == 1 else s])
                  for d, s in enumerate(shape))
    yield "mixed", draw(rng, mixed, n, spread=2), ("raise", "clip", "fill")
    big = [d for d in range(nd) if d != ax and shape[d] != 1]
    if big:
        yield "too-big", np.zeros(tuple(s + 2 if d == big[0] else s
                                        for d, s in enumerate(shape)), np.int64), ("raise",)
    yield "ndim+1", np.zeros(shape + (1,), np.int64), ("raise",)
    if nd > 1:
        yield "ndim-1", np.zeros(shape[1:], np.int64), ("raise",)


def along_flat_indices(size, rng):
    yield "flat", draw(rng, (5,), size), ("raise",)
    yield "flat-out", draw(rng, (6,), size, spread=2), MODES
    yield "flat-empty", np.zeros(0, np.int64), ("raise",)
    yield "flat-2d", np.zeros((1, 1), np.int64), ("raise",)


@pytest.mark.parametrize("name,x", CASES)
def test_take_along_axis_matches_reference(name, x):
    rng = rng_for(name, "take_along_axis")
    failures = []
    for axis in single_axes(x.ndim):
        sets = (along_flat_indices(x.size, rng) if axis is None
                else along_indices(x.shape, axis % x.ndim, rng))
        for label, indices, modes in sets:
            indices = as_index_dtype(indices)
            for mode in modes:
                kw = {"mode": mode}
                if mode == "fill":
                    kw["fill_value"] = FILL[x.dtype.kind]
                if msg := check_call("take_along_axis", x, indices, axis, **kw):
                    failures.append(f"[{label}] {msg}")
    report(failures)


# -------------------------------------------------------------------- gather_nd

def nd_indices(shape, b, q, extra, rng):
    """Index tuples for gather_nd: every component in range of its dimension."""
    lead = shape[:b] + extra
    comps = [draw(rng, lead, shape[b + t]) for t in range(q)]
    return np.stack(comps, axis=-1) if comps else np.zeros(lead + (0,), np.int64)


@pytest.mark.parametrize("name,x", CASES)
def test_gather_nd_matches_reference(name, x):
    rng = rng_for(name, "gather_nd")
    failures = []
    calls = []
    for b in range(min(2, x.ndim)):
        for q in range(1, x.ndim - b + 1):
            for extra in ((), (3,), (2, 2), (0,)):
                idx = nd_indices(x.shape, b, q, extra, rng)
                calls.append((idx, b))
                if idx.size:  # one component out of range, and one negative at the bound
                    bad = idx.copy()
                    t = int(rng.integers(q))
                    bad.reshape(-1, q)[-1, t] = x.shape[b + t] * (1 if t % 2 else -1) - (t % 2 == 0)
                    calls.append((bad, b))
        # shapes that do not fit: q = 0, q too large
        calls.append((np.zeros(x.shape[:b] + (2, 0), np.int64), b))
        calls.append((np.zeros(x.shape[:b] + (x.ndim - b + 1,), np.int64), b))
    calls += [(np.zeros((1,), np.int64), x.ndim), (np.zeros((1,), np.int64), -1),
              (np.array(0), 0)]
    if x.ndim >= 2:
        calls.append((np.zeros((x.shape[0] + 1, 1), np.int64), 1))   # batch sizes differ
    for idx, b in calls:
        if msg := check_call("gather_nd", x, as_index_dtype(idx), batch_dims=b):
            failures.append(msg)
    report(failures)


def test_gather_rows_of_a_few_strided_lanes():
    """Rows of four lanes far apart in memory ((4, n).T), gathered lane by lane over
    a chunk when every index is in range, row by row otherwise (a negative index)."""
    x = np.arange(4 * 300, dtype=np.float32).reshape(4, -1).T
    idx = np.random.default_rng(3).integers(0, 300, (500, 1))
    for i in (idx, np.where(idx == idx[7], -1, idx)):
        got = axisops.gather_nd(x, i)
        want = x[tuple(i.T)]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    got = axisops.take(x, idx[:, 0] + 300, axis=0, mode="wrap")
    np.testing.assert_array_equal(got, x[idx[:, 0]])


# ---------------------------------------------------------------------- scatter

_KINDS = itertools.cycle(["random", "ties", "special", "extremes"])


def scatter_indices(shape, ax, rng):
    """(label, indices) for scatter on *shape* along *ax*."""
    n = shape[ax]

    def with_axis(dims, k):
        dims = list(dims)
        dims[ax] = k
        return tuple(dims)

    yield "same", draw(rng, shape, n)
    yield "repeated", draw(rng, with_axis(shape, 3 * n + 2), n)
    leading = tuple(s - 1 if s >= 2 and d != ax else s for d, s in enumerate(shape))
    yield "leading", draw(rng, with_axis(leading, 2), n)
    yield "axis-empty", np.zeros(with_axis(shape, 0), np.int64)
    yield "out", draw(rng, with_axis(shape, 2), n, spread=2)


def scatter_updates(dtype, ishape, rng):
    """(label, updates, reduces): updates of indices' shape for every reduce, and
    larger, scalar and broadcast updates for None and "add"."""
    yield "same", values(dtype, ishape, rng, next(_KINDS)), REDUCES
    yield "larger", values(dtype, tuple(s + 1 for s in ishape), rng, next(_KINDS)), (None, "add")
    yield "scalar", values(dtype, (), rng, next(_KINDS)), (None, "max")
    if ishape:
        yield "row", values(dtype, (1,) + ishape[1:], rng, next(_KINDS)), ("add", "min")


@pytest.mark.parametrize("name,x", CASES)
def test_scatter_matches_reference(name, x):
    rng = rng_for(name, "scatter")
    failures = []
    for axis in single_axes(x.ndim, none=False):
        for label, indices in scatter_indices(x.shape, axis % x.ndim, rng):
            indices = as_index_dtype(indices)
            for ulabel, updates, reduces in scatter_updates(x.dtype, indices.shape, rng):
                for reduce in reduces:
                    if msg := check_call("scatter", x, indices, updates, axis, reduce=reduce):
                        failures.append(f"[{label}, {ulabel} updates] {msg}")
    if x.ndim == 0:
        for axis in (0, -1, None):
            if msg := check_call("scatter", x, np.array(0), x, axis):
                failures.append(msg)
    report(failures)


# ------------------------------------------------------------ every index dtype

BOUNDS = {dt: (int(np.iinfo(dt).min), int(np.iinfo(dt).max)) for dt in INT_DTYPES}
INDEX_X = [pytest.param(a, id=n) for n, a in cases(dtypes=(np.float64, np.int8, np.bool_))
           if n.split("-", 1)[1] in ("2d", "3d", "view-transposed", "view-negstride")]


@pytest.mark.parametrize("index_dtype", INT_DTYPES, ids=[d.name for d in INT_DTYPES])
@pytest.mark.parametrize("x", INDEX_X)
def test_every_index_dtype(x, index_dtype):
    """In-range indices of every integer dtype, and the extremes of each dtype's range
    (uint64 above 2**63 included): IndexError for raise, exact for wrap/clip/fill."""
    low, high = BOUNDS[index_dtype]
    rng = np.random.default_rng(3)
    failures = []
    for axis in (None, 0, -1):
        n = x.size if axis is None else x.shape[axis]
        ok = rng.integers(max(low, -n), min(high, n - 1) + 1, size=(2, 3)).astype(index_dtype)
        extremes = np.array([low, high, high - 1, low + 1, 0, 2**63 + 5 if high > 2**63 else high,
                             min(n, high)], dtype=object).astype(index_dtype)
        for indices in (ok, extremes, extremes.reshape(7, 1)[::-2]):
            for mode in MODES:
                if msg := check_call("take", x, indices, axis, mode=mode, fill_value=0):
                    failures.append(msg)
        ax = 0 if axis is None else axis % x.ndim
        along_x = x.reshape(-1) if axis is None else x
        shape = [1] * along_x.ndim
        shape[ax] = 7
        for mode in MODES:
            if msg := check_call("take_along_axis", x, extremes.reshape(shape), axis, mode=mode):
                failures.append(msg)
        if axis is not None:
            along = ok.reshape(-1)[:1].reshape((1,) * x.ndim)
            for indices in (along, extremes.reshape(shape)):
                for reduce in (None, "add"):
                    if msg := check_call("scatter", x, indices, x.dtype.type(1), axis,
                                         reduce=reduce):
                        failures.append(msg)
    for t in ([[0] * x.ndim], [[max(low, -1)] * x.ndim], [[high] * x.ndim], [[low] * x.ndim]):
        indices = np.array(t, dtype=object).astype(index_dtype)
        if msg := check_call("gather_nd", x, indices):
            failures.append(msg)
    report(failures)


def test_uint64_above_int64():
    """An index of 2**63 + 5 must not be read as a negative int64."""
    x = np.arange(10.0)
    big = np.array([2**63 + 5, 3], np.uint64)
    with pytest.raises(IndexError, match=r"index 9223372036854775813 at position \(0,\) "
                                         r"of indices is out of range \[-10, 10\)"):
        axisops.take(x, big)
    assert axisops.take(x, big, mode="wrap").tolist() == [float((2**63 + 5) % 10), 3.0]
    assert axisops.take(x, big, mode="clip").tolist() == [9.0, 3.0]
    assert axisops.take(x, big, mode="fill", fill_value=-1).tolist() == [-1.0, 3.0]
    top = np.array([2**64 - 1], np.uint64)
    assert axisops.take(x, top, mode="wrap").tolist() == [float((2**64 - 1) % 10)]
    assert axisops.take_along_axis(x, top, 0, mode="wrap").tolist() == [5.0]
    for f, args in ((axisops.take_along_axis, (x, big, 0)),
                    (axisops.gather_nd, (x, big[:1, None])),
                    (axisops.scatter, (x, big, np.zeros(2), 0))):
        with pytest.raises(IndexError, match="9223372036854775813"):
            f(*args)


# ---------------------------------------------------------------------- errors

BAD_INDICES = [np.array([0.0, 1.0]), np.array([1.0], np.float32), np.array([True, False]),
               np.array([0], np.float16), np.array(["0"]), np.array([1 + 0j])]


def _calls(indices):
    x = np.arange(6.0).reshape(2, 3)
    i2 = indices.reshape(1, -1)
    return [("take", (x, indices), {}), ("take", (x, indices, 1), {"mode": "wrap"}),
            ("take_along_axis", (x, i2, 1), {}), ("take_along_axis", (x, indices, None), {}),
            ("gather_nd", (x, i2), {}), ("scatter", (x, i2, np.ones_like(i2, float), 1), {}),
            ("scatter", (x, i2, 1.0, 0), {"reduce": "add"})]


@pytest.mark.parametrize("indices", BAD_INDICES, ids=lambda a: a.dtype.name)
def test_non_integer_indices_are_type_errors(indices):
    failures = []
    for op, args, kwargs in _calls(indices):
        for module in (ref, axisops):
            kind, value = outcome(getattr(module, op), *args, **kwargs)
            if not (kind == "raised" and isinstance(value, TypeError) and op in str(value)):
                failures.append(f"{module.__name__}.{op}(indices {indices.dtype}): {value!r}, "
                                f"expected a TypeError naming {op}")
    report(failures)


@pytest.mark.parametrize("x", [np.array([1, "a"], dtype=object)], ids=["object"])
def test_unsupported_dtype_is_type_error_naming_op(x):
    # (every fixed-width dtype moves as its bits: test_moves_of_any_dtype_move_bits and
    # tests/test_fixed_width.py)
    x = x.reshape(1, -1)
    idx = np.zeros((1, 1), np.int64)
    for op, args in (("take", (x, idx)), ("take_along_axis", (x, idx, 1)),
                     ("gather_nd", (x, idx)), ("scatter", (x, idx, x[:, :1], 1))):
        for module in (ref, axisops):
            with pytest.raises(TypeError, match=op):
                getattr(module, op)(*args)


@pytest.mark.parametrize("ndim", [0, 1, 3])
def test_bad_axes(ndim):
    x = np.arange(math.prod((2, 3, 4)[:ndim]), dtype=np.float32).reshape((2, 3, 4)[:ndim])
    bad = list(bad_axes(ndim, multi=False)) + [((0,), TypeError), ([0], TypeError),
                                               ((0, 1), TypeError), ("0", TypeError)]
    failures = []
    for axis, exc in bad:
        idx = np.zeros((1,) * ndim, np.int64)
        calls = [("take", (x, np.array([0]), axis)), ("take_along_axis", (x, idx, axis)),
                 ("scatter", (x, idx, np.float32(1), axis))]
        for op, args in calls:
            for module in (ref, axisops):
                kind, value = outcome(getattr(module, op), *args)
                if not (kind == "raised" and isinstance(value, exc)):
                    failures.append(f"{module.__name__}.{op}(shape {x.shape}, axis={axis!r}): "
                                    f"{value!r}, expected {exc.__name__}")
    for module in (ref, axisops):  # scatter needs an axis
        kind, value = outcome(module.scatter, np.zeros(3), np.array([0]), np.zeros(1), None)
        if not (kind == "raised" and isinstance(value, TypeError)):
            failures.append(f"{module.__name__}.scatter(axis=None): {value!r}, expected TypeError")
    report(failures)


@pytest.mark.parametrize("bad", ["nope", "RAISE", "", None, 1, "wrap "])
def test_bad_mode_is_value_error(bad):
    x = np.arange(6).reshape(2, 3)
    for module in (ref, axisops):
        with pytest.raises(ValueError):
            module.take(x, [0], 1, mode=bad)
        with pytest.raises(ValueError):
            module.take_along_axis(x, np.zeros((2, 1), np.int64), 1, mode=bad)


@pytest.mark.parametrize("bad", ["sum", "prod", "amax", "mean", "ADD", "", 0])
def test_bad_reduce_is_value_error(bad):
    x = np.arange(6).reshape(2, 3)
    for module in (ref, axisops):
        with pytest.raises(ValueError):
            module.scatter(x, np.zeros((2, 1), np.int64), 1, 1, reduce=bad)


def test_shape_errors_are_value_errors():
    """Rank mismatches, sizes that do not meet, gather_nd's q and batch_dims, and
    updates of a shape that fits neither rule: ValueError on both sides."""
    x = np.arange(24.0).reshape(2, 3, 4)
    i = np.zeros((2, 3, 4), np.int64)
    calls = [
        ("take_along_axis", (x, i[0], 1), {}),                       # rank 2 for 3
        ("take_along_axis", (x, i[..., None], 1), {}),               # rank 4 for 3
        ("take_along_axis", (x, np.zeros((2, 4, 4), np.int64), 2), {}),   # 4 > 3 in dim 1
        ("take_along_axis", (x, np.zeros((3, 3, 1), np.int64), 2), {}),   # 3 > 2 in dim 0
        ("take_along_axis", (x, i, None), {}),                       # axis=None needs 1-D
        ("take_along_axis", (x, np.array(0), None), {}),
        ("gather_nd", (x, np.array(0)), {}),                         # no tuple dimension
        ("gather_nd", (x, np.zeros((2, 0), np.int64)), {}),          # q = 0
        ("gather_nd", (x, np.zeros((2, 4), np.int64)), {}),          # q > ndim
        ("gather_nd", (x, np.zeros((2, 3), np.int64)), {"batch_dims": 1}),   # q > ndim - b
        ("gather_nd", (x, np.zeros((3, 1), np.int64)), {"batch_dims": 1}),   # batch 3 vs 2
        ("gather_nd", (x, np.zeros((2, 3, 1), np.int64)), {"batch_dims": 3}),
        ("gather_nd", (x, np.zeros((2, 1), np.int64)), {"batch_dims": 2}),   # b >= indices.ndim
        ("gather_nd", (x, np.zeros((2, 1), np.int64)), {"batch_dims": -1}),
        ("scatter", (x, i[0], i[0], 1), {}),                         # rank 2 for 3
        ("scatter", (x, np.zeros((3, 1, 1), np.int64), 0.0, 1), {}),   # 3 > 2 in dim 0
        ("scatter", (x, np.zeros((1, 1, 5), np.int64), 0.0, 1), {}),   # 5 > 4 in dim 2
        ("scatter", (x, np.zeros((1, 2, 2), np.int64), np.zeros((1, 1, 3)), 0), {}),
        ("scatter", (x, np.zeros((1, 2, 2), np.int64), np.zeros((2, 1, 2)), 0), {}),
        ("scatter", (x, np.zeros((1, 2, 2), np.int64), np.zeros((1, 3)), 0), {}),
        ("scatter", (x, np.zeros((1, 2, 2), np.int64), np.zeros((2, 2, 2, 2)), 0), {}),
    ]
    failures = []
    for op, args, kwargs in calls:
        for module in (ref, axisops):
            kind, value = outcome(getattr(module, op), *args, **kwargs)
            if not (kind == "raised" and isinstance(value, ValueError)
                    and not isinstance(value, AxisError)):
                failures.append(f"{module.__name__}.{_describe(op, args, kwargs)}: {value!r}, "
                                f"expected ValueError")
    report(failures)


def test_updates_shapes_that_fit():
    """indices' shape; larger in every dimension (the leading part); broadcastable."""
    x = np.zeros((3, 4))
    idx = np.array([[2, 0, 1], [1, 1, 0]])
    failures = []
    for updates in (np.arange(6.0).reshape(2, 3), np.arange(20.0).reshape(4, 5),
                    np.arange(3.0), np.arange(2.0).reshape(2, 1), np.float64(5), 5.0, [[1.0]],
                    np.arange(3.0).reshape(1, 3), np.arange(12.0).reshape(2, 6)):
        for reduce in (None, "add"):
            if msg := check_call("scatter", x, idx, np.asarray(updates), 0, reduce=reduce):
                failures.append(msg)
    report(failures)


@pytest.mark.parametrize("x_dtype,u_dtype,ok", [
    (np.float32, np.float64, True), (np.float16, np.float64, True), (np.float64, np.int64, True),
    (np.float32, np.bool_, True), (np.int8, np.int64, True), (np.int32, np.uint8, True),
    (np.int32, np.float64, False), (np.int64, np.float32, False), (np.uint8, np.int64, False),
    (np.bool_, np.int64, False), (np.float64, np.complex128, False), (np.uint64, np.int8, False),
])
def test_updates_cast_same_kind(x_dtype, u_dtype, ok):
    x = np.zeros((2, 3), x_dtype)
    idx = np.array([[0, 1, 1]])
    updates = np.array([[1, 2, 3]]).astype(u_dtype)
    for module in (ref, axisops):
        if ok:
            for reduce in (None, "add", "max"):
                got = module.scatter(x, idx, updates, 0, reduce=reduce)
                assert got.dtype == x.dtype and got.shape == x.shape
        else:
            with pytest.raises(TypeError, match="scatter"):
                module.scatter(x, idx, updates, 0)
    if ok:
        assert check_call("scatter", x, idx, updates, 0, reduce="add") is None


@pytest.mark.parametrize("x_dtype,update,ok", [
    (np.uint8, 5, True), (np.uint8, 255, True), (np.uint8, 256, False), (np.uint8, -1, False),
    (np.int8, -128, True), (np.bool_, True, True), (np.bool_, 1, None), (np.float16, 7, True),
    (np.float32, 0.5, True), (np.int32, 0.5, None), (np.uint64, 2**64 - 1, True),
    (np.int64, 2**63, False), (np.float64, True, True),
])
def test_python_number_updates_are_weakly_typed(x_dtype, update, ok):
    """A Python number takes x's dtype as in NumPy 2 (NEP 50): ``np.add.at(u8, i, 5)``
    works, so does ``scatter(u8, i, 5, 0)``; an int that does not fit is a ValueError,
    a kind that does not cast (float into int, int into bool) a TypeError (ok=None)."""
    x = np.arange(4).astype(x_dtype)
    idx = np.array([1, 3, 1])
    for module in (ref, axisops):
        if ok:
            got = module.scatter(x, idx, update, 0, reduce="add")
            want = x.copy()
            np.add.at(want, idx, np.asarray(update, dtype=x_dtype))
            assert got.dtype == x.dtype and got.shape == x.shape
            assert np.array_equal(got, want), (module, got, want)
            gx, gu = (axisops.grad if module is axisops else ref.grad).scatter(
                np.ones(4), x, idx, update, 0, reduce="add")
            assert gu.shape == () and isinstance(gu, np.ndarray) and float(gu) == 3.0
            assert gx.shape == x.shape and np.array_equal(gx, np.ones(4))
        else:
            with pytest.raises(ValueError if ok is False else TypeError, match="scatter"):
                module.scatter(x, idx, update, 0)


def test_updates_cast_before_combining():
    """Updates are converted to x's dtype first: 300 into int8 is 44, 1e6 into float16 is inf."""
    failures = []
    for x, updates in ((np.array([50, 0], np.int8), np.array([300, -300])),
                       (np.array([1.0, -1.0], np.float16), np.array([1e6, -1e6])),
                       (np.array([1.0, 2.0], np.float32), np.array([0.1, 1e-50]))):
        for reduce in REDUCES:
            if msg := check_call("scatter", x, np.array([0, 1]), updates, 0, reduce=reduce):
                failures.append(msg)
    report(failures)
    assert axisops.scatter(np.array([50], np.int8), [0], np.array([300]), 0,
                           reduce="max").tolist() == [50]


# ------------------------------------------------------------------- fill_value

@pytest.mark.parametrize("dtype,fill,ok", [
    (np.uint8, 300, False), (np.uint8, -1, False), (np.uint8, 255, True), (np.int8, 1.5, False),
    (np.int8, 3.0, True), (np.int8, -128, True), (np.int8, 128, False),
    (np.float32, 0.1, True), (np.float32, 0.5, True), (np.float32, np.inf, True),
    (np.float32, 1e300, False), (np.float64, 2**53 + 1, True), (np.float64, 2**53, True),
    (np.float64, np.nan, True), (np.float16, np.nan, True), (np.float16, 65504, True),
    (np.float16, 1e5, False), (np.int64, np.nan, False), (np.int32, np.inf, False),
    (np.bool_, True, True), (np.bool_, 0, True), (np.bool_, 2, False), (np.bool_, np.nan, False),
    (np.uint64, 2**64 - 1, True), (np.int64, 2**63, False), (np.float64, True, True),
    (np.float32, np.float64(1 / 3), True), (np.float32, np.float32(1 / 3), True),
    (np.float16, -1e300, False), (np.float64, -np.inf, True),
])
def test_fill_value_must_be_representable(dtype, fill, ok):
    x = np.arange(6).astype(dtype).reshape(2, 3)
    for op, args in (("take", (x, [0, 7])), ("take_along_axis", (x, np.array([[0, 7]]), 1))):
        for module in (ref, axisops):
            if ok:
                got = getattr(module, op)(*args, mode="fill", fill_value=fill)
                assert got.dtype == x.dtype
                last = got.reshape(-1)[-1]
                want = np.asarray(fill).astype(dtype)  # floats round, the rest is exact
                assert last == want or (np.isnan(last) and np.isnan(want)), (module, op, got)
            else:
                with pytest.raises(ValueError):
                    getattr(module, op)(*args, mode="fill", fill_value=fill)
            # only looked at with mode="fill"
            got = getattr(module, op)(*args, mode="clip", fill_value=fill)
            assert got.dtype == x.dtype


def test_fill_nan_and_signed_zero():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    got = axisops.take(x, [5, 0], axis=1, mode="fill", fill_value=np.nan)
    assert got.dtype == np.float32 and np.isnan(got[:, 0]).all() and got[:, 1].tolist() == [1, 3]
    got = axisops.take_along_axis(x, np.array([[-3]]), 0, mode="fill", fill_value=-0.0)
    assert np.signbit(got).all() and (got == 0).all()


# ---------------------------------------------------------- empty axes, 0-d, lists

def test_empty_axis():
    """Indices into an empty axis: IndexError, except that mode="fill" fills."""
    x = np.zeros((2, 0, 3), np.int16)
    failures = []
    for mode in MODES:
        for indices in ([0], [], np.zeros((2, 0), np.int64), -1, [[5, -5]]):
            for axis in (1, None):
                if msg := check_call("take", x, np.asarray(indices), axis, mode=mode,
                                     fill_value=4):
                    failures.append(msg)
            along = np.zeros((2, 1 if np.size(indices) else 0, 3), np.int64)
            if msg := check_call("take_along_axis", x, along, 1, mode=mode, fill_value=4):
                failures.append(msg)
    got = axisops.take(x, [0, 1], axis=1, mode="fill", fill_value=4)
    assert got.shape == (2, 2, 3) and (got == 4).all() and got.dtype == np.int16
    report(failures)


def test_out_of_range_raises_even_when_the_result_is_empty():
    """Every index is checked, also where another dimension of x is 0 and nothing is read
    (as np.take does; the decisions: the first bad index of the original indices array)."""
    x = np.zeros((0, 3))
    calls = [("take", (x, np.array([5]), 1)), ("take", (x, np.array(-4), 1)),
             ("take_along_axis", (x, np.array([[5]]), 1)),
             ("take_along_axis", (np.zeros((3, 0)), np.array([[7]]), 0)),
             ("gather_nd", (np.zeros((2, 0)), np.array([[5]])))]
    failures = []
    for op, args in calls:
        for module in (ref, axisops):
            kind, value = outcome(getattr(module, op), *args)
            if not (kind == "raised" and isinstance(value, IndexError)):
                failures.append(f"{module.__name__}.{_describe(op, args, {})}: {value!r}, "
                                f"expected IndexError")
    for module in (ref, axisops):
        kind, value = outcome(module.grad.take, np.zeros((0, 1)), np.array([5]), (0, 3), 1)
        if not (kind == "raised" and isinstance(value, IndexError)):
            failures.append(f"{module.__name__}.grad.take(g (0, 1), [5], (0, 3), 1): {value!r}, "
                            f"expected IndexError")
    report(failures)


def test_zero_d():
    failures = []
    for x in (np.float32(2.5), np.array(-3, np.int8), np.array(True), np.array(np.nan)):
        x = np.asarray(x)
        for indices in (np.array(0), np.array([0, -1, 0]), np.array([[0]]), np.array([1])):
            for mode in MODES:
                if msg := check_call("take", x, indices, None, mode=mode,
                                     fill_value=FILL[x.dtype.kind]):
                    failures.append(msg)
        for call in (("take", x, np.array(0), 0), ("take_along_axis", x, np.array([0, 0]), None),
                     ("take_along_axis", x, np.array(0), 0), ("gather_nd", x, np.array([0])),
                     ("gather_nd", x, np.array(0))):
            if msg := check_call(*call):
                failures.append(msg)
    got = axisops.take(np.array(7.0), np.array(0))
    assert type(got) is np.ndarray and got.shape == () and got == 7.0
    report(failures)


def test_python_inputs():
    failures = []
    calls = [("take", [[1, 5, 2], [7, 0, 7]], [2, -1], 1), ("take", 3, 0),
             ("take", [1.5, -2.0], [[1]]), ("take", [True, False], [1, 1, 0]),
             ("take_along_axis", [[1, 5, 2], [7, 0, 7]], [[2], [0]], 1),
             ("gather_nd", [[1, 5], [7, 0]], [[1, 0], [0, 1]]),
             ("scatter", [1, 2, 3], [0, 0], [10, 20], 0)]
    for op, *args in calls:
        if msg := check_call(op, *args):
            failures.append(msg)
    got = axisops.scatter([1, 2, 3], [2, 2], [10, 20], 0, reduce="add")
    assert got.tolist() == [1, 2, 33] and got.dtype == np.array([1]).dtype
    report(failures)


def test_index_and_update_views():
    """Transposed, negative-stride, broadcast and read-only indices and updates."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((5, 6))
    idx = rng.integers(-5, 5, size=(6, 5)).T                       # transposed
    neg = rng.integers(-6, 6, size=(5, 8))[:, ::-2]                # negative stride
    bcast = np.broadcast_to(rng.integers(0, 5, size=(1, 6)), (4, 6))
    ro = rng.integers(0, 6, size=(5, 3))
    ro.setflags(write=False)
    upd = rng.standard_normal((12, 14))[::-2, ::-2]
    failures = []
    for mode in MODES:
        for indices in (idx, neg, bcast, ro):
            for axis in (None, 0, 1):
                if msg := check_call("take", x, indices, axis, mode=mode):
                    failures.append(msg)
            if msg := check_call("take_along_axis", x, indices, 1, mode=mode):
                failures.append(msg)
    for indices, axis in ((idx, 0), (neg, 1), (bcast, 0), (ro, 1)):
        for reduce in REDUCES:
            for u in (upd, np.broadcast_to(upd[:1, :1], (5, 6)), upd.T.copy().T):
                if msg := check_call("scatter", x, indices, u, axis, reduce=reduce):
                    failures.append(msg)
    tup = np.stack([idx, idx[::-1]], axis=-1)[..., ::-1]
    if msg := check_call("gather_nd", x, tup):
        failures.append(msg)
    report(failures)


# ------------------------------------------------------------- scatter's rules

@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_scatter_add_of_many_short_rows(dtype, rng):
    # rows of 4 along axis 0: the kernel's one loop over the lane (every index in
    # range), and the per-row path it falls back to (a negative index)
    x = rng.integers(-5, 5, (300, 4)).astype(dtype)
    idx = rng.integers(0, 300, (1000, 4))
    upd = rng.integers(-5, 5, (1000, 4)).astype(dtype)
    want = x.copy()
    np.add.at(want, (idx, np.arange(4)), upd)
    got = axisops.scatter(x, idx, upd, 0, reduce="add")
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got, want)
    idx[500, 2] = -1
    want = x.copy()
    np.add.at(want, (idx, np.arange(4)), upd)
    np.testing.assert_array_equal(axisops.scatter(x, idx, upd, 0, reduce="add"), want)
    idx[500, 2] = 300
    with pytest.raises(IndexError):
        axisops.scatter(x, idx, upd, 0, reduce="add")


def test_scatter_last_write_wins_in_c_order():
    x = np.zeros((2, 3))
    idx = np.array([[1, 1, 1], [1, 0, 1]])
    upd = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    # along axis 0, C order of indices: (0,j) before (1,j), so row 1 of the updates wins
    got = axisops.scatter(x, idx, upd, 0)
    assert got.tolist() == [[0, 5, 0], [4, 2, 6]]
    # along axis 1: in each row the last position wins
    got = axisops.scatter(x, idx, upd, 1)
    assert got.tolist() == [[0, 3, 0], [5, 6, 0]]
    big = np.zeros(3, np.float32)
    i = np.array([2, 0, 2, 2, 0, 1] * 1000)
    u = np.arange(i.size, dtype=np.float32)
    got = axisops.scatter(big, i, u, 0)
    assert got.tolist() == [5998.0, 5999.0, 5997.0]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_scatter_max_min_nan_and_ties(dtype):
    x = np.array([0.0, -0.0, 1.0, np.nan, 2.0], dtype)
    idx = np.array([0, 1, 2, 3, 4, 4, 2])
    upd = np.array([-0.0, 0.0, np.nan, 5.0, 2.0, 1.0, 7.0], dtype)
    got = axisops.scatter(x, idx, upd, 0, reduce="max")
    assert same_bits(got, np.array([0.0, -0.0, np.nan, np.nan, 2.0], dtype)) is None, got
    got = axisops.scatter(x, idx, upd, 0, reduce="min")
    assert same_bits(got, np.array([0.0, -0.0, np.nan, np.nan, 1.0], dtype)) is None, got
    for reduce in REDUCES:
        assert check_call("scatter", x, idx, upd, 0, reduce=reduce) is None


def test_scatter_bool():
    x = np.array([[True, False, False, True]])
    idx = np.array([[0, 1, 2, 3], [1, 1, 2, 3]]).reshape(1, 8) % 4
    upd = np.array([[False, True, False, False, True, False, False, True]])
    want = {None: [False, False, False, True], "add": [True, True, False, True],
            "mul": [False, False, False, False], "max": [True, True, False, True],
            "min": [False, False, False, False]}
    for reduce, w in want.items():
        got = axisops.scatter(x, idx, upd, 1, reduce=reduce)
        assert got.dtype == np.bool_ and got[0].tolist() == w, (reduce, got)
        assert check_call("scatter", x, idx, upd, 1, reduce=reduce) is None


def test_scatter_integers_wrap():
    x = np.array([100, 2, 200], np.uint8)
    got = axisops.scatter(x, [0, 0, 1, 2], np.array([100, 100, 130, 7], np.uint8), 0, reduce="add")
    assert got.tolist() == [44, 132, 207]
    got = axisops.scatter(x, [1, 1, 1, 2], np.array([128, 3, 5, 2], np.uint8), 0, reduce="mul")
    assert got.tolist() == [100, 0, 144]
    i64 = np.array([2**62, -2**63], np.int64)
    got = axisops.scatter(i64, [0, 0, 1], np.array([2**62, 1, -1]), 0, reduce="add")
    assert got.tolist() == [-2**63 + 1, 2**63 - 1]
    u64 = np.array([2**64 - 1, 2**63], np.uint64)
    for reduce in REDUCES:
        upd = np.array([2**63 + 1, 1, 2**64 - 2], np.uint64)
        assert check_call("scatter", u64, np.array([1, 0, 1]), upd, 0, reduce=reduce) is None
    assert axisops.scatter(u64, [1], np.array([2**63 + 1], np.uint64), 0,
                           reduce="max").tolist() == [2**64 - 1, 2**63 + 1]


def test_scatter_float16_accumulates_in_float32():
    """5000 additions of 1 into a float16 stall at 2048 in float16; float32 reaches 5000."""
    x = np.zeros(2, np.float16)
    got = axisops.scatter(x, np.zeros(5000, np.int64), np.ones(5000, np.float16), 0, reduce="add")
    assert got.dtype == np.float16 and got.tolist() == [5000.0, 0.0]
    u = np.full(40, 1.25, np.float16)
    got = axisops.scatter(np.ones(1, np.float16), np.zeros(40, np.int64), u, 0, reduce="mul")
    want = np.float16(np.prod(np.full(40, 1.25, np.float32), dtype=np.float32))
    assert got[0] == want == ref.scatter(np.ones(1, np.float16), np.zeros(40, np.int64), u, 0,
                                         reduce="mul")[0]


# ----------------------------------------------------------- threads, determinism

def _heavy_scatter_inputs(dtype, rng):
    """100000 updates into 3 destinations; 20000 x 64 updates into 3 x 64."""
    n = 100_000
    idx1 = rng.integers(0, 3, size=n)
    u1 = (rng.standard_normal(n) * np.exp2(rng.integers(-10, 10, size=n))).astype(dtype)
    idx2 = rng.integers(-3, 3, size=(20_000, 64))
    u2 = rng.standard_normal((20_000, 64)).astype(dtype)
    x1 = rng.standard_normal(3).astype(dtype)
    x2 = rng.standard_normal((3, 64)).astype(dtype)
    return (x1, idx1, u1, 0), (x2, idx2, u2, 0)


def _add_at(x, idx, u, axis):
    """np.add.at equivalent of scatter(..., "add") along axis 0 (float16 in float32)."""
    acc = np.float32 if x.dtype == np.float16 else x.dtype
    out = x.astype(acc)
    where = [idx % x.shape[0]] + [np.broadcast_to(np.arange(s), idx.shape) for s in idx.shape[1:]]
    np.add.at(out, tuple(where), u.astype(acc))
    return out.astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_scatter_add_is_deterministic(dtype, num_threads):
    """Float "add" with heavily repeated indices: the same bits on every run and for
    every thread count, equal to np.add.at (sequential in C order of the indices)."""
    rng = np.random.default_rng(12)
    failures = []
    for x, idx, u, axis in _heavy_scatter_inputs(dtype, rng):
        want = _add_at(x, idx, u, axis)
        for count in num_threads.counts:
            num_threads.set(count)
            for run in range(2):
                got = axisops.scatter(x, idx, u, axis, reduce="add")
                if msg := same_bits(got, want):
                    failures.append(f"{x.shape} {np.dtype(dtype).name}, {count} threads, "
                                    f"run {run}: {msg}")
    report(failures)


def test_results_do_not_depend_on_threads(num_threads):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((300, 500)).astype(np.float32)
    xt = x.T
    i1 = rng.integers(-300, 300, size=4000)
    i2 = rng.integers(-500, 500, size=(300, 700))
    tup = rng.integers(0, 300, size=(5000, 1))
    si = rng.integers(0, 300, size=(2000, 500))
    su = rng.standard_normal((2000, 500)).astype(np.float32)
    calls = [("take axis 0", lambda: axisops.take(x, i1 % 300, 0)),
             ("take axis 1", lambda: axisops.take(x, i1, 1, mode="wrap")),
             ("take None", lambda: axisops.take(xt, i2, None, mode="clip")),
             ("take_along_axis 1", lambda: axisops.take_along_axis(x, i2, 1, mode="fill")),
             ("take_along_axis 0", lambda: axisops.take_along_axis(xt, i2[:, :300] % 300, 1)),
             ("gather_nd", lambda: axisops.gather_nd(x, tup))]
    calls += [(f"scatter {r}", lambda r=r: axisops.scatter(x, si, su, 0, reduce=r))
              for r in REDUCES]
    wants = {"take axis 0": np.take(x, i1 % 300, 0), "take axis 1": np.take(x, i1, 1, mode="wrap"),
             "take None": np.take(xt, i2, None, mode="clip"),
             "gather_nd": x[tup[:, 0]],
             "take_along_axis 0": np.take_along_axis(xt[:300], i2[:, :300] % 300, 1),
             "scatter add": _add_at(x, si, su, 0)}
    results = {}
    for count in num_threads.counts:
        num_threads.set(count)
        results[count] = [f() for _, f in calls]
    failures = []
    base = num_threads.counts[0]
    for (label, _), got in zip(calls, results[base]):
        if label in wants and (msg := same_bits(got, wants[label])):
            failures.append(f"{label}: {msg}")
    for count in num_threads.counts[1:]:
        for (label, _), p, q in zip(calls, results[base], results[count]):
            if p.dtype != q.dtype or p.shape != q.shape or p.tobytes() != q.tobytes():
                failures.append(f"{label}: {base} and {count} threads differ")
    report(failures)


# ------------------------------------------------- more than 2**32 elements, no copy

@contextlib.contextmanager
def address_space_cap(extra_bytes):
    """Cap this process's address space at its current size plus *extra_bytes*, so that
    copying a broadcast view of 2**32 elements raises MemoryError instead of taking
    the machine's memory. Skips where it cannot be measured."""
    resource = pytest.importorskip("resource")
    try:
        with open("/proc/self/status") as f:
            size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration):
        pytest.skip("cannot read this process's address space size")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + extra_bytes
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


ROWS = 2**20


def _huge_calls():
    """(label, call, expected) on 2**32 and 2**32 + 2**20 element broadcast views.

    ``rows[i, j] == i`` and ``cols[i, j] == j``: the flat index ``k`` of a view with
    ``w`` columns holds ``k // w`` in ``rows`` and ``k % w`` in ``cols``.
    """
    w1, w2 = 2**12, 2**12 + 1
    rows1 = np.broadcast_to(np.arange(ROWS)[:, None], (ROWS, w1))    # 2**32 elements
    rows2 = np.broadcast_to(np.arange(ROWS)[:, None], (ROWS, w2))    # 2**32 + 2**20
    cols2 = np.broadcast_to(np.arange(w2)[None, :], (ROWS, w2))
    n2 = ROWS * w2
    last = ROWS - 1
    k = 2**33 + 7
    yield ("take None", lambda: axisops.take(rows1, [2**32 - 1, 5], axis=None), [last, 0])
    yield ("take None uint64", lambda: axisops.take(rows1, np.array([2**32 - 1, 2**31 + 4096],
                                                                      np.uint64)),
           [last, 2**19 + 1])
    yield ("take None int32", lambda: axisops.take(rows1, np.array([-1, 2**31 - 1], np.int32)),
           [last, 2**19 - 1])
    yield ("take axis 0", lambda: axisops.take(rows1, [last, -1, 0, 2**19, -ROWS], axis=0),
           np.repeat(np.array([last, last, 0, 2**19, 0])[:, None], w1, axis=1))
    yield ("take axis 1", lambda: axisops.take(rows1, [0, w1 - 1, -1, -w1], axis=1),
           np.broadcast_to(np.arange(ROWS)[:, None], (ROWS, 4)))
    yield ("take axis 1 of cols", lambda: axisops.take(cols2, [w2 - 1, 0], axis=1)[-2:],
           [[w2 - 1, 0], [w2 - 1, 0]])
    yield ("take None cols", lambda: axisops.take(cols2, [n2 - 1, 2**32 + 3, 2**32 - 1]),
           [w2 - 1, (2**32 + 3) % w2, (2**32 - 1) % w2])
    yield ("take wrap", lambda: axisops.take(rows2, [k, -1, 2 * n2 + 5], mode="wrap"),
           [(k % n2) // w2, last, 5 // w2])
    yield ("take wrap uint64", lambda: axisops.take(cols2, np.array([2**63 + 5], np.uint64),
                                                    mode="wrap"),
           [((2**63 + 5) % n2) % w2])
    yield ("take wrap cols", lambda: axisops.take(cols2, [k], mode="wrap"), [(k % n2) % w2])
    yield ("take clip", lambda: axisops.take(rows2, [2**40, -5, n2 - 1], mode="clip"),
           [last, 0, last])
    yield ("take fill", lambda: axisops.take(rows2, [n2, -n2, n2 - 1, -n2 - 1], mode="fill",
                                             fill_value=-1), [-1, 0, last, -1])
    yield ("take_along_axis 1 leading", lambda: axisops.take_along_axis(
        rows1, np.array([[w1 - 1, 0], [-1, 7], [2, w1 - 2]]), axis=1), [[0, 0], [1, 1], [2, 2]])
    yield ("take_along_axis 0 leading", lambda: axisops.take_along_axis(
        rows1, np.array([[last, 0, -1], [5, 2**19, -ROWS]]), axis=0),
           [[last, 0, last], [5, 2**19, 0]])
    yield ("take_along_axis 0 cols", lambda: axisops.take_along_axis(
        cols2, np.array([[last, 0, -1]]), axis=0), [[0, 1, 2]])
    yield ("take_along_axis 1 broadcast", lambda: axisops.take_along_axis(
        rows1, np.array([[-1, 3]]), axis=1)[[0, 1, -1]], [[0, 0], [1, 1], [last, last]])
    yield ("take_along_axis None", lambda: axisops.take_along_axis(
        rows1, np.array([2**32 - 1, 2**31, 7]), None), [last, 2**19, 0])
    yield ("take_along_axis None wrap", lambda: axisops.take_along_axis(
        cols2, np.array([k, n2]), None, mode="wrap"), [(k % n2) % w2, 0])
    yield ("gather_nd", lambda: axisops.gather_nd(rows1, [[last, w1 - 1], [5, 7], [-1, -w1]]),
           [last, 5, last])
    yield ("gather_nd cols", lambda: axisops.gather_nd(cols2, [[last, w2 - 1], [-2, 9]]),
           [w2 - 1, 9])
    yield ("gather_nd rows", lambda: axisops.gather_nd(rows1, [[last], [3]])[:, [0, -1]],
           [[last, last], [3, 3]])


def test_more_than_2_32_elements_without_copying():
    small = np.broadcast_to(np.arange(4)[:, None], (4, 3))
    for f in (lambda m: axisops.take(small, [1], axis=None, mode=m),   # compile outside the cap
              lambda m: axisops.take(small, [1], axis=0, mode=m),
              lambda m: axisops.take(small, [1], axis=1, mode=m),
              lambda m: axisops.take_along_axis(small, np.array([[1]]), 1, mode=m),
              lambda m: axisops.take_along_axis(small, np.array([[1]]), 0, mode=m),
              lambda m: axisops.take_along_axis(small, np.array([1]), None, mode=m)):
        for mode in MODES:
            f(mode)
    axisops.gather_nd(small, [[1, 1]])
    axisops.gather_nd(small, [[1]])
    failures = []
    with address_space_cap(3 * 2**30):
        for label, call, want in _huge_calls():
            kind, got = outcome(call)
            if kind == "raised":
                failures.append(f"{label}: raised {type(got).__name__}: {got}")
            elif msg := mismatch(got, np.asarray(want, dtype=np.int64)):
                failures.append(f"{label}: {msg}")
            del got
        n1 = ROWS * 2**12
        rows1 = np.broadcast_to(np.arange(ROWS)[:, None], (ROWS, 2**12))
        for indices in ([n1], [-n1 - 1], np.array([n1], np.uint64)):
            kind, got = outcome(axisops.take, rows1, indices)
            want = f"of indices is out of range [-{n1}, {n1})"
            if not (kind == "raised" and isinstance(got, IndexError) and want in str(got)):
                failures.append(f"take(rows, {indices}): {got!r}, expected IndexError ... {want}")
    report(failures)


@pytest.mark.parametrize("dtype", [">f2", ">f4", ">f8", ">i4", ">u8", "<f4"])
@pytest.mark.parametrize("reduce", [None, "add", "mul", "max", "min"])
def test_scatter_on_foreign_byte_order_is_computed_natively(dtype, reduce):
    x = np.array([1, 2, 3, 4, 0], dtype)
    if x.dtype.kind == "f":
        x[4] = np.nan
    native = x.astype(x.dtype.newbyteorder("="))
    idx, upd = np.array([0, 4, 0, 2]), np.array([5, 6, 7, 8], dtype)
    got = axisops.scatter(x, idx, upd, 0, reduce=reduce)
    want = axisops.scatter(native, idx, upd.astype(native.dtype), 0, reduce=reduce)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got.astype(native.dtype), want)


@pytest.mark.parametrize("x", [
    np.array([b"ab", b"cd", b"e", b""], dtype="S2"),
    np.array(["a", "b", "c", "d"]),                                   # U1: 4 bytes
    np.array([(1, 2.5), (3, -1.0), (5, 0.0), (7, 9.0)], dtype=[("i", "i4"), ("f", "f4")]),
    np.arange(4, dtype="i8").view("V8"),
], ids=["bytes", "str", "structured", "void"])
def test_moves_of_any_dtype_move_bits(x):
    # take, take_along_axis, gather_nd and scatter(reduce=None) move the bits of any
    # dtype of 1, 2, 4 or 8 bytes, as NumPy's fancy indexing does
    x2 = np.stack([x, x[::-1]])
    for got, want in (
        (axisops.take(x, [3, 0, -1]), x[[3, 0, -1]]),
        (axisops.take(x2, [1, 2], axis=1), x2[:, [1, 2]]),
        (axisops.take_along_axis(x2, np.array([[0, 3], [2, 2]]), 1),
         np.take_along_axis(x2, np.array([[0, 3], [2, 2]]), 1)),
        (axisops.gather_nd(x2, [[1, 0], [0, 3]]), x2[[1, 0], [0, 3]]),
        (axisops.scatter(x2, np.array([[0, 0]]), x2[1:2, :2], 0)[0, :2], x2[1, :2]),
    ):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    filled = axisops.take(x, [0, 9], mode="fill", fill_value=0)
    assert filled[1:].tobytes() == bytes(x.itemsize) and filled[:1].tobytes() == x[:1].tobytes()
    with pytest.raises(TypeError, match="scatter"):
        axisops.scatter(x2, np.array([[0, 1]]), x2[1:2, :2], 0, reduce="add")

"""The order statistics (``axisops.order``) against their NumPy twins,
``axisops.reference.order``, and against NumPy, PyTorch, SciPy and bottleneck:
``sort``, ``argsort``, ``top_k``, ``partition``, ``argpartition``, ``kthvalue``,
``median``, ``nanmedian``, ``quantile``, ``nanquantile`` and ``rank`` over the dtype
classes, shapes from 0-d to 3-D and strided views, every axis and ``None``; data with
ties, NaN, +-inf and mixed signed zeros; lanes of 2000 and 70000 elements (the radix
paths); every quantile method; the order's rules (NaN last both ways, stable ties,
-0.0 == +0.0, the elements' own bits); the results' type and layout, the input left
alone; and the errors, raised as the twin raises them.

``partition``/``argpartition`` order each side as the library likes, so they are
checked by their properties, not against the twin's (fully sorted) partition.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import EXHAUSTIVE, AxisError, changed, compare_outcomes, mismatch, outcome, snapshot

import axisops
from axisops import order as O
from axisops.reference import order as R

DTYPES = [np.bool_, np.int8, np.int32, np.uint64, np.float16, np.float32, np.float64]
if EXHAUSTIVE:
    DTYPES += [np.int16, np.int64, np.uint8, np.uint16, np.uint32]
DTYPES = [np.dtype(d) for d in DTYPES]
METHODS = tuple(R.QUANTILE_METHODS)
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# ----------------------------------------------------------------------------- data

def data(rng, shape, dtype, kind="special"):
    """*dtype* values of *shape*: ``"special"`` mixes NaN, +-inf, -0.0/+0.0 and ties
    (small integers for ints, both values for bool); ``"ties"`` has only 0, 1, 2;
    ``"normal"`` is float noise (few ties)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        hi = 3 if kind == "ties" else 9
        x = rng.integers(0, hi, shape)
        if dtype.kind == "i" and kind != "ties":
            x = x - 4
        return x.astype(dtype)
    if dtype.kind in "Mm":
        x = rng.integers(0, 5, shape).astype(dtype)
        x[rng.random(shape) < 0.2] = np.array("NaT", dtype)
        return x
    if kind == "ties":
        return rng.integers(0, 3, shape).astype(dtype)
    if kind == "normal":
        return rng.standard_normal(shape).astype(dtype)
    pool = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -1.0, 2.0, 2.0, 7.25, -3.5, -0.0],
                    dtype)
    return rng.choice(pool, shape)


def arrays(dtype, seed=0):
    """``(name, array)``: 0-d to 3-D, zero-size, and views that are not C-contiguous."""
    rng = np.random.default_rng(seed)
    for shape in [(), (0,), (1,), (7,), (33,), (300,), (5, 40), (3, 4, 5), (2, 0, 3)]:
        yield str(shape), data(rng, shape, dtype)
    yield "transposed", data(rng, (3, 4, 5), dtype).transpose(2, 0, 1)
    yield "negstride", data(rng, (6, 35), dtype)[::-1, ::-2]
    yield "sliced", data(rng, (4, 9, 5), dtype)[:, 2:7, 1:]
    yield "ties", data(rng, (4, 40), dtype, "ties")


def axes_of(x):
    return [None] + list(range(x.ndim)) + ([-1] if x.ndim else [])


def lanes(a, axis):
    """*a* as ``(lanes, n)``, the axis last (``None``: the flattened array)."""
    a = np.asarray(a)
    if axis is None:
        return a.reshape(1, -1)
    m = np.moveaxis(a, axis, -1)
    return m.reshape(-1, m.shape[-1]) if m.size else m.reshape(0, m.shape[-1])


def bits(a):
    """The bit patterns of *a* (integers), NaN of any sign and payload made one."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        b = a.view(_UINT[a.itemsize]).copy()
        b[np.isnan(a)] = np.array(np.nan, a.dtype).view(_UINT[a.itemsize])
        return b
    if a.dtype.kind in "Mm":
        return a.view(np.int64)
    return a.view(_UINT[a.itemsize]) if a.dtype != np.bool_ else a.view(np.uint8)


def missing(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return np.isnan(a)
    if a.dtype.kind in "Mm":
        return np.isnat(a)
    return np.zeros(a.shape, bool)


def le(a, b):
    """``a <= b`` in the one order (NaN/NaT greatest, -0.0 == +0.0), elementwise."""
    ma, mb = missing(a), missing(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb | (~ma & (a <= b))


def problem(got, want, *, exact_bits=True):
    """``None`` if *got* is a C-contiguous ndarray like *want* (shape, dtype; values
    bit for bit with *exact_bits*, else as values with NaN == NaN), else a message."""
    if type(got) is not np.ndarray:
        return f"returned a {type(got).__name__}, expected an ndarray"
    if not got.flags.c_contiguous:
        return f"not C-contiguous (strides {got.strides})"
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"shape/dtype {got.shape} {got.dtype}, expected {want.shape} {want.dtype}"
    if exact_bits or want.dtype.kind in "Mm":
        bad = bits(got) != bits(want)
    else:
        return mismatch(got, want)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        return (f"{int(bad.sum())} of {want.size} differ; first at {first}: got {got[first]!r}, "
                f"expected {want[first]!r}")
    return None


def run(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return outcome(fn, *args, **kwargs)


def compare_calls(op, args, kwargs, label, check, errors):
    """Call ``O.op`` and ``R.op``; both raise alike, or *check* (got, want) -> message."""
    x = args[0]
    before = snapshot(x) if isinstance(x, np.ndarray) else None
    got, want = run(getattr(O, op), *args, **kwargs), run(getattr(R, op), *args, **kwargs)
    if before is not None and (msg := changed(x, before)):
        errors.append(f"{op}{label}: {msg}")
    if got[0] == "raised" or want[0] == "raised":
        if msg := compare_outcomes(got, want):
            errors.append(f"{op}{label}: {msg}")
        return
    if msg := check(got[1], want[1]):
        errors.append(f"{op}{label}: {msg}")


def report(errors):
    assert not errors, f"{len(errors)} failures:\n" + "\n".join(errors[:25])


def pair_problem(got, want, exact_values=True):
    if not isinstance(got, tuple) or len(got) != 2:
        return f"returned {type(got).__name__}, expected a (values, indices) tuple"
    if got.values is not got[0] or got.indices is not got[1]:
        return "fields values/indices are not the tuple's items"
    return (problem(got.values, want.values, exact_bits=exact_values)
            or problem(got.indices, want.indices))


# ----------------------------------------------------------------------------- sweeps

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sort_and_argsort(dtype):
    errors = []
    for name, x in arrays(dtype, 1):
        for axis in axes_of(x):
            for desc in (False, True):
                label = f"({name}, {dtype}, axis={axis}, descending={desc})"
                compare_calls("sort", (x, axis), {"descending": desc}, label, problem, errors)
                compare_calls("argsort", (x, axis), {"descending": desc}, label, problem, errors)
            compare_calls("argsort", (x, axis), {"index_dtype": np.int32}, f"{label} int32",
                          problem, errors)
    report(errors)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_top_k(dtype):
    errors = []
    for name, x in arrays(dtype, 2):
        for axis in axes_of(x):
            n = x.size if axis is None else x.shape[axis]
            for k in sorted({0, 1, n // 3, n - 1, n}):
                compare_top_k(x, k, axis, f"({name}, {dtype}, k={k}, axis={axis}", errors)
    report(errors)


def compare_top_k(x, k, axis, label, errors):
    """``top_k`` against its twin in both modes, sorted and in lane order."""
    for mode in ("largest", "smallest"):
        compare_calls("top_k", (x, k, axis), {"mode": mode}, f"{label}, mode={mode})",
                      pair_problem, errors)
        compare_calls("top_k", (x, k, axis), {"mode": mode, "sorted": False},
                      f"{label}, mode={mode}) unsorted", unsorted_problem(axis), errors)


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.float16, np.bool_,
                                   np.float64, np.int64, "datetime64[s]"],
                         ids=lambda d: np.dtype(d).name)
def test_top_k_of_many_by_numpy_partition(dtype):
    """``top_k`` of more than 32 and of more than a block share of the lane: keys of
    up to 32 bits packed above positions, NumPy's partition and sort; wider keys
    through NumPy's partition's k-th key, the first k taken in lane order and
    sorted by a stable argsort; along the last axis and others (lanes copied 16
    neighbours at a time), ties, NaN, NaT."""
    rng = np.random.default_rng(5)
    errors = []
    for shape, axis, k in [((300, 7), 0, 100), ((4, 200, 5), 1, 60), ((3, 2000), -1, 700),
                           ((2000,), 0, 1999), ((40, 50), 1, 33)]:
        x = data(rng, shape, dtype)
        compare_top_k(x, k, axis, f"({shape}, {np.dtype(dtype)}, k={k}, axis={axis}", errors)
    report(errors)


def _filter_lanes(dtype, rng):
    """Lanes that ``top_k`` filters by block minima (kernels.order.FILTER_BLOCK):
    NaN/NaT around block and chunk boundaries, whole NaN chunks and lanes, fewer
    numbers than k, ties (and -0.0 with +0.0) straddling blocks and chunks."""
    dtype = np.dtype(dtype)
    for n in (300, 1024, 1025, 2048 + 37, 5000):
        if dtype.kind == "f":
            x = rng.standard_normal((3, n)).astype(dtype)
            x[0, [0, 15, 16, 63, 64, 1023 % n, 1024 % n, n - 1]] = np.nan
            x[1, : min(n, 1030)] = np.nan  # a chunk of NaN, and a block past it
            x[1, -3:] = 7
            x[2] = np.nan  # all NaN
            x[2, [5, n - 2]] = -0.0
            x[2, [700 % n, n // 2]] = 0.0
        elif dtype.kind in "mM":
            x = rng.integers(-9, 9, (3, n)).astype(dtype)
            x[0, [0, 15, 16, 64, 1024 % n, n - 1]] = np.datetime64("NaT").astype(dtype)
            x[2] = np.datetime64("NaT").astype(dtype)
            x[2, [3, n - 5]] = x[0, 1]
        elif dtype.kind == "b":
            x = rng.random((3, n)) < 0.02
            x[2] = False
            x[2, [17, n - 1]] = True
        else:
            info = np.iinfo(dtype)
            x = rng.integers(0, 4, (3, n)).astype(dtype)  # ties everywhere
            x[1] = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
            x[1, [64, 1000 % n, n - 1]] = info.max
            x[1, [1, 65, n - 2]] = info.min
        yield f"rows n={n}", x, -1
        yield f"columns n={n}", np.ascontiguousarray(np.tile(x.T, (1, 6))[:, :17]), 0
        yield f"strided n={n}", x[:, ::-1], -1
    x = rng.standard_normal(70000).astype(dtype) if dtype.kind == "f" else (
        rng.integers(0, 100, 70000).astype(dtype))
    yield "vector", x, -1


@pytest.mark.parametrize("dtype", ["f4", "f8", "f2", "i1", "u2", "i8", "M8[s]", "?"])
def test_top_k_filtered(dtype):
    """The block-minima filter of long lanes (k up to n / (16 FILTER_RATIO)) against
    the reference twin: values bit for bit, indices, dtype and shape, both modes,
    sorted or in lane order; k = n and k past the filter's reach too."""
    rng = np.random.default_rng(42)
    errors = []
    for name, x, axis in _filter_lanes(dtype, rng):
        n = x.shape[axis]
        for k in sorted({1, 2, 4, 10, 32, 33, n // 64, n // 64 + 1, 100, n // 3, n}):
            if 0 < k <= n:
                compare_top_k(x, k, axis, f"({name}, {dtype}, k={k}, axis={axis}", errors)
    report(errors)


def unsorted_problem(axis):
    """``sorted=False``: the same k (value, index) pairs in each lane, any order."""
    def check(got, want):
        if msg := pair_problem(got, want):  # checks types, shapes and dtypes first
            if "differ" not in msg:
                return msg
        gi, wi = lanes(got.indices, axis), lanes(want.indices, axis)
        gv, wv = lanes(got.values, axis), lanes(want.values, axis)
        go, wo = np.argsort(gi, axis=-1), np.argsort(wi, axis=-1)
        if not (np.take_along_axis(gi, go, -1) == np.take_along_axis(wi, wo, -1)).all():
            return "unsorted: not the same indices"
        if (bits(np.take_along_axis(gv, go, -1)) != bits(np.take_along_axis(wv, wo, -1))).any():
            return "unsorted: not the same values"
        return None
    return check


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_kthvalue(dtype):
    errors = []
    for name, x in arrays(dtype, 3):
        for axis in axes_of(x):
            n = x.size if axis is None else x.shape[axis]
            for k in sorted({1, 2, n // 2, n, n + 1} - {0} if n else {1}):
                for keepdims in (False, True):
                    label = f"({name}, {dtype}, k={k}, axis={axis}, keepdims={keepdims})"
                    compare_calls("kthvalue", (x, k, axis), {"keepdims": keepdims}, label,
                                  pair_problem, errors)
    report(errors)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rank(dtype):
    errors = []
    for name, x in arrays(dtype, 4):
        for axis in axes_of(x):
            for method in R.RANK_METHODS:
                label = f"({name}, {dtype}, axis={axis}, method={method})"
                compare_calls("rank", (x, axis), {"method": method}, label,
                              lambda g, w: problem(g, w, exact_bits=False), errors)
    report(errors)


def partition_problem(x, kths, axis, op):
    """The properties of a partition of *x* at the places *kths* along *axis*."""
    def check(got, want):
        if type(got) is not np.ndarray or not got.flags.c_contiguous:
            return f"returned a {type(got).__name__} (C-contiguous ndarray expected)"
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"shape/dtype {got.shape} {got.dtype}, expected {want.shape} {want.dtype}"
        if op == "argpartition":
            idx = lanes(got, axis)
            n = idx.shape[-1]
            if not (np.sort(idx, axis=-1) == np.arange(n)).all():
                return "indices are not a permutation of each lane"
            vals = np.take_along_axis(lanes(x, axis), idx.astype(np.intp), -1)
            part = O.partition(x, kths, axis)
            if (bits(vals) != bits(lanes(part, axis))).any():
                return "take_along_axis(x, argpartition) != partition (same kth, axis)"
        else:
            vals = lanes(got, axis)
        xl = lanes(x, axis)
        n = xl.shape[-1]
        if (np.sort(bits(vals), -1) != np.sort(bits(xl), -1)).any():
            return "not a permutation of each lane's elements"
        ref = lanes(R.sort(x, axis), axis)
        for k in np.atleast_1d(np.asarray(kths, dtype=np.int64)).tolist():
            k %= n
            pivot, want_pivot = vals[:, k], ref[:, k]
            if not (le(pivot, want_pivot) & le(want_pivot, pivot)).all():
                return f"place {k} holds {pivot}, expected {want_pivot}"
            if not le(vals[:, :k], pivot[:, None]).all():
                return f"an element before place {k} is greater than it"
            if not le(pivot[:, None], vals[:, k + 1:]).all():
                return f"an element after place {k} is less than it"
        again = getattr(O, op)(x, kths, axis)
        if (bits(again) != bits(got)).any():
            return "not deterministic: two calls differ"
        return None
    return check


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", ["partition", "argpartition"])
def test_partition_properties(op, dtype):
    errors = []
    for name, x in arrays(dtype, 5):
        for axis in axes_of(x):
            n = x.size if axis is None else x.shape[axis]
            kth_list = [0, n - 1, n // 2, -1, [0, n // 3, -1], [n // 2, 1 % max(n, 1)], [], n,
                        -n - 1] if n else [0, []]
            for kth in kth_list:
                label = f"({name}, {dtype}, kth={kth}, axis={axis})"
                compare_calls(op, (x, kth, axis), {}, label,
                              partition_problem(x, kth, axis, op), errors)
    report(errors)


def numpy_result_problem(got, want):
    """Like NumPy's result: an ndarray where NumPy gives one (C-contiguous), else the
    same scalar type; dtype; values equal (NaN == NaN, -0.0 == +0.0)."""
    if isinstance(want, np.ndarray):
        if type(got) is not np.ndarray:
            return f"returned a {type(got).__name__}, expected an ndarray"
        if not got.flags.c_contiguous:
            return "not C-contiguous"
    elif type(got) is not type(want):
        return f"returned a {type(got).__name__}, expected {type(want).__name__}"
    return mismatch(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median(op, dtype):
    errors = []
    for name, x in arrays(dtype, 6):
        for axis in axes_of(x) + ([(0, x.ndim - 1)] if x.ndim >= 2 else []):
            for keepdims in (False, True):
                label = f"({name}, {dtype}, axis={axis}, keepdims={keepdims})"
                compare_calls(op, (x, axis), {"keepdims": keepdims}, label,
                              numpy_result_problem, errors)
    report(errors)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile_sweep(op, dtype):
    """Every shape and axis with the linear method, q a scalar and a list."""
    errors = []
    for name, x in arrays(dtype, 7):
        for axis in axes_of(x):
            for q in (0.3, [0.0, 0.5, 1.0]):
                label = f"({name}, {dtype}, q={q}, axis={axis})"
                compare_calls(op, (x, q, axis), {}, label, numpy_result_problem, errors)
    report(errors)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile_methods(op, method):
    """Every method: q scalars (0, 1, Python ints, float32), lists and arrays; keepdims;
    tuple axes; lanes of 1 to 9 values; float64, float32, float16, int16, uint8, bool."""
    rng = np.random.default_rng(8)
    errors = []
    qs = [0, 1, 0.0, 1.0, 0.25, 0.5, 0.999, np.float32(0.4), [0.1, 0.5, 0.9],
          np.linspace(0, 1, 11), np.array([0.3, 0.7], np.float32), []]
    dtypes = [np.float64, np.float32, np.float16, np.int16, np.uint8, np.bool_]
    if EXHAUSTIVE:
        dtypes += [np.int8, np.int32, np.int64, np.uint16, np.uint32, np.uint64]
    for dtype in dtypes:
        x3 = data(rng, (3, 4, 6), dtype)
        for axis in (None, -1, 1, (0, 2), (2, 0)):
            for q in qs:
                for keepdims in (False, True):
                    label = f"({dtype.__name__}, q={q}, axis={axis}, keepdims={keepdims})"
                    compare_calls(op, (x3, q, axis), {"method": method, "keepdims": keepdims},
                                  label, numpy_result_problem, errors)
        for n in range(1, 10):
            x = data(rng, (5, n), dtype)
            for q in (np.linspace(0, 1, 21), 0.5):
                compare_calls(op, (x, q, 1), {"method": method}, f"({dtype.__name__}, n={n})",
                              numpy_result_problem, errors)
    report(errors)


# ----------------------------------------------------------------------------- long lanes

LONG_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.uint8,
               np.uint64, np.bool_]


@pytest.mark.parametrize("n", [2000, 70000])
@pytest.mark.parametrize("dtype", LONG_DTYPES, ids=lambda d: np.dtype(d).name)
def test_long_lanes(dtype, n):
    """The radix paths: one lane of *n* (a strided view of twice that), two of n/2."""
    rng = np.random.default_rng(9)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = rng.standard_normal(2 * n).astype(dtype)
        tie = rng.random(2 * n) < 0.3
        x[tie] = np.round(x[tie])  # ties
        special = rng.random(2 * n)
        x[special < 0.02] = np.nan
        x[(special > 0.5) & (special < 0.52)] = -0.0
        x[(special > 0.6) & (special < 0.62)] = 0.0
        x[(special > 0.7) & (special < 0.705)] = np.inf
        x[(special > 0.8) & (special < 0.805)] = -np.inf
    elif dtype == np.bool_:
        x = rng.random(2 * n) < 0.5
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 2 * n, dtype=dtype, endpoint=True)
        x[: n // 2] = rng.integers(0, 50, n // 2).astype(dtype)  # ties
    view = x[::-2]
    two = x[: n].reshape(2, n // 2)
    errors = []
    for arr, axis in ((view, -1), (two, 1), (two.T, 0)):
        label = f"({dtype}, n={n}, strides={arr.strides}, axis={axis})"
        for desc in (False, True):
            compare_calls("sort", (arr, axis), {"descending": desc}, label, problem, errors)
            compare_calls("argsort", (arr, axis), {"descending": desc}, label, problem, errors)
        for k in (1, 10, 600):
            compare_calls("top_k", (arr, k, axis), {}, label, pair_problem, errors)
            compare_calls("top_k", (arr, k, axis), {"mode": "smallest"}, label, pair_problem,
                          errors)
        for kth in (0, 777, -1, [5, 900, -3]):
            compare_calls("partition", (arr, kth, axis), {}, label,
                          partition_problem(arr, kth, axis, "partition"), errors)
        compare_calls("kthvalue", (arr, 99, axis), {}, label, pair_problem, errors)
        compare_calls("median", (arr, axis), {}, label, numpy_result_problem, errors)
        compare_calls("nanmedian", (arr, axis), {}, label, numpy_result_problem, errors)
        for method in ("linear", "lower", "nearest", "hazen"):
            compare_calls("quantile", (arr, [0.0, 0.01, 0.5, 0.99, 1.0], axis),
                          {"method": method}, label, numpy_result_problem, errors)
            compare_calls("nanquantile", (arr, 0.37, axis), {"method": method}, label,
                          numpy_result_problem, errors)
        if n == 2000:
            compare_calls("rank", (arr, axis), {}, label,
                          lambda g, w: problem(g, w, exact_bits=False), errors)
    report(errors)


# ----------------------------------------------------------------------------- dates

@pytest.mark.parametrize("dtype", ["M8[D]", "m8[s]"])
def test_dates(dtype):
    """datetime64/timedelta64 for the sorting and selecting operators (NaT last both
    ways); the quantiles and rank refuse them."""
    rng = np.random.default_rng(10)
    x = data(rng, (4, 37), np.dtype(dtype))
    errors = []
    for axis in (None, 0, 1):
        for desc in (False, True):
            compare_calls("sort", (x, axis), {"descending": desc}, f"(axis={axis})", problem,
                          errors)
            compare_calls("argsort", (x, axis), {"descending": desc}, f"(axis={axis})",
                          problem, errors)
        compare_calls("top_k", (x, 3, axis), {}, f"(axis={axis})", pair_problem, errors)
        compare_calls("top_k", (x, 3, axis), {"mode": "smallest"}, f"(axis={axis})",
                      pair_problem, errors)
        compare_calls("kthvalue", (x, 4, axis), {}, f"(axis={axis})", pair_problem, errors)
        compare_calls("partition", (x, [1, -2], axis), {}, f"(axis={axis})",
                      partition_problem(x, [1, -2], axis, "partition"), errors)
        compare_calls("argpartition", (x, 3, axis), {}, f"(axis={axis})",
                      partition_problem(x, 3, axis, "argpartition"), errors)
    report(errors)
    for op, args in (("median", ()), ("nanmedian", ()), ("quantile", (0.5,)),
                     ("nanquantile", (0.5,)), ("rank", ())):
        with pytest.raises(TypeError, match=op):
            getattr(O, op)(x, *args)


# ----------------------------------------------------------------------------- the order

def test_the_order_nan_last_both_ways_stable_ties_and_signed_zeros():
    nan, inf = np.nan, np.inf
    x = np.array([2.0, nan, -0.0, 0.0, -inf, 2.0, inf, nan, -0.0, 1.0])
    np.testing.assert_array_equal(O.argsort(x), [4, 2, 3, 8, 9, 0, 5, 6, 1, 7])
    np.testing.assert_array_equal(O.argsort(x, descending=True), [6, 0, 5, 9, 2, 3, 8, 4, 1, 7])
    assert O.sort(x).tobytes() == x[[4, 2, 3, 8, 9, 0, 5, 6, 1, 7]].tobytes()  # -0.0 kept
    assert O.sort(np.array([0.0, -0.0])).tobytes() == np.array([0.0, -0.0]).tobytes()
    assert O.sort(np.array([-0.0, 0.0])).tobytes() == np.array([-0.0, 0.0]).tobytes()
    v, i = O.top_k(x, 4)
    np.testing.assert_array_equal(i, [6, 0, 5, 9])
    v, i = O.top_k(x, 10)
    np.testing.assert_array_equal(i[-2:], [1, 7])  # NaN last also for "largest"
    v, i = O.top_k(x, 3, mode="smallest")
    np.testing.assert_array_equal(i, [4, 2, 3])
    assert O.top_k(x, 3, mode="smallest").values.tobytes() == x[[4, 2, 3]].tobytes()
    v, i = O.kthvalue(x, 3)
    assert i == 3 and v.tobytes() == np.float64(0.0).tobytes()
    np.testing.assert_array_equal(O.rank(x, method="min"), [6, nan, 2, 2, 1, 6, 8, nan, 2, 5])
    np.testing.assert_array_equal(O.rank(x), [6.5, nan, 3, 3, 1, 6.5, 8, nan, 3, 5])
    ints = np.array([3, 1, 3, 2, 1, 3], np.uint8)
    np.testing.assert_array_equal(O.argsort(ints, descending=True), [0, 2, 5, 3, 1, 4])
    np.testing.assert_array_equal(O.argsort(ints[::-1], descending=True), [0, 3, 5, 2, 1, 4])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(O.argsort(b, descending=True), [0, 2, 1, 3])
    np.testing.assert_array_equal(O.top_k(b, 3).indices, [0, 2, 1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, "datetime64[s]", np.int16],
                         ids=lambda d: np.dtype(d).name)
def test_sorted_values_keep_each_elements_bits_in_lane_order(dtype):
    """Sorts of values order keys alone and put back what a key does not keep: the
    -0.0s among the zeros and the NaN payloads (NaT) in lane order. Short lanes go
    16 at a time, as vectors where 16 neighbours are adjacent (inner 16, 32, 48),
    else column by column (inner 17, 5, transposed); rows of 16 and more along the
    last axis by NumPy's sort, finished (a sliced 3-D view: copied first); the
    bits are those of the stable permutation (``take_along_axis`` of the twin's
    argsort), which ``argsort`` gives (keys of up to 32 bits packed with their
    positions, lanes copied 16 neighbours at a time)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(7)
    u = _UINT[dtype.itemsize]
    for shape, axis in [((40, 16), 0), ((9, 32), 0), ((300, 48), 0), ((3, 57, 17), 1),
                        ((64, 5), 0), ((16, 70), 1), ((17, 40), 1), ((20, 33), 0)]:
        x = data(rng, shape, dtype)
        if dtype.kind == "f":  # NaNs of several payloads and signs
            b = x.view(u)
            nan = np.isnan(x)
            b[nan] |= rng.integers(0, 64, nan.sum()).astype(u)
            b[nan & (rng.random(shape) < 0.5)] |= u(1) << u(8 * dtype.itemsize - 1)
        views = (x, np.swapaxes(x, 0, -1)) if x.ndim == 2 else (x, x[:, 1:40:3])
        for view in views:
            ax = axis if view is x else (1 - axis if x.ndim == 2 else -1)
            for desc in (False, True):
                got = O.sort(view, ax, descending=desc)
                order = R.argsort(view, ax, descending=desc)
                want = np.take_along_axis(view, order, ax)
                assert got.shape == want.shape and got.dtype == want.dtype
                assert got.view(u).tobytes() == np.ascontiguousarray(want).view(u).tobytes(), \
                    (shape, ax, desc)
                positions = O.argsort(view, ax, descending=desc, index_dtype=np.int32)
                assert positions.dtype == np.int32 and positions.shape == order.shape
                np.testing.assert_array_equal(positions, order, err_msg=f"{shape} {ax} {desc}")



@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64], ids=lambda d: np.dtype(d).name)
def test_argsort_of_long_rows_is_stable(dtype):
    """64-bit lanes of 256 and more (of 16 and more in larger arrays) are argsorted
    by NumPy's sort of their keys packed with their positions, without the low
    bits that do not fit (``kernels.rank``): runs of equal keys, short and long,
    NaN, -0.0 == +0.0, descending, int32 positions, long lanes, views, other axes,
    and keys apart only in the bits dropped (runs sorted again on the whole keys,
    by an insertion sort or a radix sort), with and without the lane's least key."""
    rng = np.random.default_rng(11)
    dtype = np.dtype(dtype)

    def make(shape, distinct):
        v = rng.integers(0, distinct, shape)
        if dtype.kind == "f":
            x = (v - distinct // 2).astype(dtype) * 0.5
            x[rng.random(shape) < 0.05] = np.nan
            x[rng.random(shape) < 0.05] = -0.0
            return x
        return v.astype(dtype) + (np.iinfo(dtype).max - distinct if dtype.kind == "u" else 0)

    def near(shape, steps):
        """Keys far apart (a wide span: low bits dropped) and a few steps of the
        last bit from them."""
        far = {"f": [-3.0, 5.0, 7e10], "i": [-2 ** 62, 0, 2 ** 62],
               "u": [0, 2 ** 63, 2 ** 64 - 1000]}[dtype.kind]
        u = np.array(far, dtype).view(np.uint64)[rng.integers(0, 3, shape)]
        return (u + rng.integers(0, steps, shape).astype(np.uint64)).view(dtype)

    cases = [(make((6, 300), 7), -1), (make((3, 1000), 900), -1), (make((3, 4, 600), 40), -1),
             (make((40000,), 30), -1), (make((70000,), 60000), 0), (make((5, 40, 300), 9)[:, ::3], -1),
             (make((300, 20), 9), 0), (make((40, 3, 33), 5), 0), (make((6, 100, 7), 4)[:, ::2], 1),
             (near((3, 700), 4), -1), (near((2, 3000), 400), -1), (near((64, 200), 4), -1),
             (near((300, 40), 4), 0), (near((20, 64, 16), 4), 1)]
    for x, axis in cases:
        for desc in (False, True):
            for index_dtype in (np.int64, np.int32):
                got = O.argsort(x, axis, descending=desc, index_dtype=index_dtype)
                want = R.argsort(x, axis, descending=desc, index_dtype=index_dtype)
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want, err_msg=f"{x.shape} {desc}")

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.uint64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_descending_sort_cut_is_top_k_and_ties_give_the_lower_index_first(dtype):
    rng = np.random.default_rng(11)
    for shape, kind in (((6, 50), "ties"), ((3, 400), "special"), ((2, 3000), "ties")):
        x = data(rng, shape, dtype, kind)
        for desc in (False, True):
            s, a = O.sort(x, descending=desc), O.argsort(x, descending=desc)
            np.testing.assert_array_equal(bits(np.take_along_axis(x, a, 1)), bits(s))
            sv = np.take_along_axis(x, a, 1)
            tied = ((sv[:, 1:] == sv[:, :-1]) | (np.isnan(sv[:, 1:]) & np.isnan(sv[:, :-1]))
                    if x.dtype.kind == "f" else sv[:, 1:] == sv[:, :-1])
            assert (a[:, 1:][tied] > a[:, :-1][tied]).all(), f"ties not stable, desc={desc}"
            first, then = sv[:, :-1], sv[:, 1:]
            if desc:  # numbers from the largest down, then NaN
                in_order = missing(then) | (~missing(first) & le(then, first))
            else:
                in_order = le(first, then)
            assert in_order.all(), f"not in order, desc={desc}"
            for k in (0, 1, 17, shape[1]):
                t = O.top_k(x, k, mode="largest" if desc else "smallest")
                assert bits(t.values).tobytes() == bits(np.ascontiguousarray(s[:, :k])).tobytes()
                np.testing.assert_array_equal(t.indices, a[:, :k])
            kv = O.kthvalue(x, shape[1] // 2, axis=1)
            np.testing.assert_array_equal(kv.indices, O.argsort(x)[:, shape[1] // 2 - 1])


def test_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    for dtype in (np.float64, np.float32):
        x = np.round(rng.standard_normal((4, 7, 300)), 1).astype(dtype)  # ties, no NaN
        for dim in (0, 1, 2, -1):
            n = x.shape[dim]
            for k in sorted({1, 3, n // 2, n}):
                for largest in (True, False):
                    got = O.top_k(x, k, dim, mode="largest" if largest else "smallest")
                    want = torch.topk(torch.from_numpy(x), k, dim, largest=largest).values
                    np.testing.assert_array_equal(got.values, want.numpy())
                got = O.kthvalue(x, k, dim)
                want = torch.kthvalue(torch.from_numpy(x), k, dim)
                np.testing.assert_array_equal(got.values, want.values.numpy())
                got = O.kthvalue(x, k, dim, keepdims=True)
                want = torch.kthvalue(torch.from_numpy(x), k, dim, keepdim=True)
                np.testing.assert_array_equal(got.values, want.values.numpy())
            s = torch.sort(torch.from_numpy(x), dim=dim, stable=True)
            np.testing.assert_array_equal(O.sort(x, dim), s.values.numpy())
            np.testing.assert_array_equal(O.argsort(x, dim), s.indices.numpy())


def test_rank_against_scipy_and_bottleneck():
    st = pytest.importorskip("scipy.stats")
    bn = pytest.importorskip("bottleneck")
    rng = np.random.default_rng(13)
    for dtype in (np.float64, np.float32, np.int32, np.uint8, np.bool_):
        x = data(rng, (5, 60), dtype, "ties" if dtype != np.bool_ else "special")
        if np.dtype(dtype).kind == "f":
            x[1, ::7] = np.nan
            x[3] = np.nan
        for method in R.RANK_METHODS:
            got = O.rank(x, 1, method=method)
            assert got.dtype == np.float64 and got.shape == x.shape
            for lane in range(x.shape[0]):
                ok = ~missing(x[lane])
                np.testing.assert_array_equal(got[lane][ok], st.rankdata(x[lane][ok],
                                                                       method=method))
                assert np.isnan(got[lane][~ok]).all()
            got = O.rank(x, None, method=method)
            if not missing(x).any():
                np.testing.assert_array_equal(got, st.rankdata(x, method=method, axis=None))
        if np.dtype(dtype).kind == "f":
            np.testing.assert_array_equal(O.rank(x, 1), bn.nanrankdata(x, axis=1))
            np.testing.assert_array_equal(O.rank(x.T, 0), bn.nanrankdata(x.T, axis=0))
    zeros = np.array([0.0, -0.0, 1.0, -0.0])
    np.testing.assert_array_equal(O.rank(zeros), [2, 2, 4, 2])
    np.testing.assert_array_equal(O.rank(zeros, method="ordinal"), [1, 2, 4, 3])


def rank_lanes(rng, dtype, n):
    """Lanes of *n* that the long-lane rank path (``kernels.rank``) must get right:
    few ties, many ties, keys that agree in every bit its sort keeps (1 + i * eps
    beside 1e300: sorted again on the low bits, in runs over and under
    ``INSERTION_MAX``), and for floats NaN, -0.0/+0.0, +-inf and an all-NaN lane."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return [rng.random(n) < 0.5, np.ones(n, bool)]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        full = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        near = np.full(n, info.max, dtype)
        near[::3] = info.min
        near[1::3] -= rng.integers(0, 300, len(near[1::3])).astype(dtype)
        return [full, rng.integers(0, 5, n).astype(dtype), near]
    eps = np.finfo(dtype).eps
    close = 1 + rng.integers(0, 200, n) * eps
    close[::4] = 2 + rng.integers(0, 20, len(close[::4])) * 2 * eps
    close[::5] = np.finfo(dtype).max / 4
    special = rng.standard_normal(n)
    special[::7] = np.nan
    special[1::9] = -0.0
    special[2::9] = 0.0
    special[3::11] = np.inf
    special[4::11] = -np.inf
    return [a.astype(dtype) for a in (rng.standard_normal(n), np.round(rng.standard_normal(n), 1),
                                      close, special, np.full(n, np.nan))]


@pytest.mark.parametrize("by_numpy", [True, False], ids=["numpy-sort", "radix"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.uint64,
                                   np.int32, np.int8, np.bool_], ids=str)
def test_rank_long_lanes(dtype, by_numpy, monkeypatch):
    """Long lanes (past the network's and the merge sort's lengths, about the
    digit widths' boundary) and short ones too few for the network, along the
    last axis and along the first (lanes read and written in blocks), bit for bit
    against the reference; by NumPy's sort of packed keys (where this CPU has
    it, at any size, in chunks of 3000 bytes: lanes split between chunks) and by
    our radix sort."""
    if by_numpy and not O._RANK_NUMPY:
        pytest.skip("NumPy sorts uint64 without SIMD here")
    monkeypatch.setattr(O, "_RANK_NUMPY", by_numpy)
    monkeypatch.setattr(O, "RANK_NUMPY_MIN_SIZE", 0)
    monkeypatch.setattr(O._rank_kernels, "PAIRS_MAX", 0)  # short rows sorted too
    monkeypatch.setattr(O._rank_kernels, "COLUMN_PAIRS_MAX", 0)
    monkeypatch.setattr(O, "_RANK_CHUNK_BYTES", 3000)
    rng = np.random.default_rng(5)
    errors = []
    for n in (2, 16, 32, 33, 48, 49, 256, 257, 512, 513, 1500, 1 << 14, (1 << 14) + 1):
        ls = rank_lanes(rng, dtype, n)
        rows = np.stack(ls)
        # rows with no tie (but where the dtype has too few values): whole chunks ranked at once
        with np.errstate(over="ignore"):  # float16 beyond 65504: inf (ties among them)
            distinct = rng.permutation(40 * n).reshape(40, n).astype(dtype)
        for x, axis in ((rows, 1), (rows.T.copy(), 0), (np.stack(ls * 6).T.copy(), 0),
                        (rows[0], None), (distinct, 1)):
            if n > 1500 and axis == 0:
                continue
            for method in R.RANK_METHODS:
                label = f"({dtype.__name__}, n={n}, shape={x.shape}, axis={axis}, {method})"
                compare_calls("rank", (x, axis), {"method": method}, label,
                              lambda g, w: problem(g, w, exact_bits=True), errors)
    report(errors)


@pytest.mark.parametrize("by_numpy", [True, False], ids=["numpy-sort", "radix"])
def test_rank_few_ties(by_numpy, monkeypatch):
    """Long lanes with a few ties (fewer than one value in ``FEW_TIES``): average and
    max ranks written as places, then each group of ties again
    (``kernels.rank._write_ranks``), groups at the lane's ends too, keys whole and
    float64 keys less their low bits (equal in the bits kept, told apart whole)."""
    from axisops.kernels import rank as KR
    if by_numpy and not O._RANK_NUMPY:
        pytest.skip("NumPy sorts uint64 without SIMD here")
    monkeypatch.setattr(O, "_RANK_NUMPY", by_numpy)
    rng = np.random.default_rng(21)
    errors = []
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal((3, 3000)).astype(dtype)
        x[:, 1::40] = x[:, 2::40]          # pairs
        x[:, 100:103] = x[:, 500]          # a group of four
        x[0, [0, 7]] = x[0].min()          # the least pair
        x[1, [5, -1]] = x[1].max()         # the greatest pair
        x[2, 3::97] = 1 + np.arange(len(x[2, 3::97])) % 3 * np.finfo(dtype).eps  # close keys
        x[2, ::301] = np.nan
        for method in ("average", "max", "min", "dense"):
            for v, axis in ((x, 1), (x.T.copy(), 0)):
                label = f"({dtype.__name__}, shape={v.shape}, axis={axis}, {method})"
                compare_calls("rank", (v, axis), {"method": method}, label,
                              lambda g, w: problem(g, w, exact_bits=True), errors)
    report(errors)
    assert KR.FEW_TIES * 80 < 3000  # the lanes above have few ties


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.uint64,
                                   np.int8, np.bool_], ids=str)
def test_rank_by_counting(dtype):
    """Rows of a C-contiguous array up to ``PAIRS_MAX`` long (half for 64-bit keys)
    and lanes along another axis up to ``COLUMN_PAIRS_MAX`` are ranked by counting
    the keys below and up to each (``pair_rank_kernel``: average, min, max; the
    keys before each for ordinal ranks, the distinct keys up to each for dense
    ones), over one vector of keys and over two, 1-D and 3-D too,
    in chunks of whole rows; along another axis by ``pair_rank_columns`` (
    blocks of ``LANES`` neighbours, the last one short): bit for bit against the
    reference, and split into parts."""
    from axisops.kernels import rank as KR
    rng = np.random.default_rng(9)
    errors = []
    for n in (1, 2, 17, KR.PAIRS_MAX // 2, KR.PAIRS_MAX, KR.COLUMN_PAIRS_MAX):
        rows = np.stack(rank_lanes(rng, dtype, n) * 3)
        many = np.concatenate([rows] * (KR.PAIRS_CHUNK // rows.size + 2))
        for x, axis in ((rows, -1), (rows[0], -1), (rows.reshape(-1, 1, n), -1), (many, -1),
                        (rows.T.copy(), 0), (rows.T.reshape(n, 3, -1), 0),
                        (many.T.reshape(1, n, -1)[:, :, 5:], 1)):
            for method in R.RANK_METHODS:
                label = f"({dtype.__name__}, n={n}, shape={x.shape}, axis={axis}, {method})"
                compare_calls("rank", (x, axis), {"method": method}, label,
                              lambda g, w: problem(g, w, exact_bits=True), errors)
    report(errors)
    x = many.T.copy()
    want = R.rank(x, 0, method="average")
    for parts in (1, 3):
        for part in range(parts):
            out = np.full(x.shape, -1.0)
            KR.pair_rank_columns(part, parts, *O._lane_args(x, 0), 0, out.reshape(-1))
            blocks = -(-x.shape[1] // KR.LANES)
            lo, hi = (b * KR.LANES for b in (part * blocks // parts, (part + 1) * blocks // parts))
            np.testing.assert_array_equal(out[:, lo:hi], want[:, lo:hi])
            assert (out[:, :lo] == -1).all() and (out[:, hi:] == -1).all()
    x = rows
    want = R.rank(x, -1, method="max")
    for parts in (1, 3):
        for part in range(parts):
            out = np.full(x.shape, -1.0)
            KR.pair_rank_kernel(part, parts, *O._lane_args(x, 1), 2, out.reshape(-1))
            lo, hi = part * len(x) // parts, (part + 1) * len(x) // parts
            np.testing.assert_array_equal(out[lo:hi], want[lo:hi])
            assert (out[:lo] == -1).all() and (out[hi:] == -1).all()


def test_rank_long_lanes_along_axis_0():
    """Lanes longer than ``LANES_FIRST_MIN`` along axis 0 (blocks of ``LANES``
    neighbours ranked a lane to a row of the block, written by transposed tiles;
    the last block short, the last tile of places short, NaN, ties), whole and
    with the lanes split between parts that cut a block."""
    from axisops.kernels import rank as KR
    rng = np.random.default_rng(17)
    n = KR.LANES_FIRST_MIN + 21
    x = np.round(rng.standard_normal((n, 19)), 3).astype(np.float32)
    x[::7, 3] = np.nan
    x[:, 17] = np.nan
    for method in ("dense", "average"):
        want = R.rank(x, 0, method=method)
        np.testing.assert_array_equal(O.rank(x, 0, method=method), want)
    for parts in (2, 3):  # average (method 0)
        out = np.full(x.shape, -1.0)
        for part in range(parts):
            O._rank_numpy_lanes(part, parts, 19, n, O._lane_args(x, 0), 0, out.reshape(-1))
        np.testing.assert_array_equal(out, want)


def test_rank_kernel_parts():
    """The long-lane rank kernel split into parts that start and end inside a
    block of neighbouring lanes (ranks gathered by block): each part writes its
    own lanes' ranks and nothing else."""
    from axisops.kernels import rank as KR
    rng = np.random.default_rng(8)
    x = np.round(rng.standard_normal((600, 37)), 2)
    x[::13, 5] = np.nan
    x[:, 20] = np.nan
    want = R.rank(x, 0, method="average")
    args = O._lane_args(x, 0)
    for parts in (1, 2, 3, 5):
        for part in range(parts):
            out = np.full(x.shape, -1.0)
            KR.rank_kernel(part, parts, *args, 0, out.reshape(-1), O._rank_scratch(x, 0))
            lo, hi = part * 37 // parts, (part + 1) * 37 // parts
            expected = np.full(x.shape, -1.0)
            expected[:, lo:hi] = want[:, lo:hi]
            np.testing.assert_array_equal(out, expected)


# ----------------------------------------------------------------------------- results

def test_results_are_fresh_arrays_and_named_tuples():
    x = np.arange(12.0).reshape(3, 4)[:, ::-1]
    x.flags.writeable = False
    before = snapshot(x)
    results = [O.sort(x), O.argsort(x), O.partition(x, 1), O.argpartition(x, 1), O.rank(x),
               O.sort(x, None), O.quantile(x, [0.5], 1), O.median(x, 0)]
    t, kv = O.top_k(x, 2), O.kthvalue(x, 2)
    for res in (t, kv):
        assert isinstance(res, tuple) and len(res) == 2
        values, indices = res
        assert values is res.values and indices is res.indices
        results += [values, indices]
    assert isinstance(t, axisops.ValuesIndices) and isinstance(kv, axisops.ValuesIndices)
    for r in results:
        assert type(r) is np.ndarray and r.flags.c_contiguous and r.flags.writeable
        assert not np.shares_memory(r, x)
    assert changed(x, before) is None
    v, i = O.kthvalue(np.array([3.0, 1.0, 2.0]), 2, None)
    assert type(v) is np.ndarray and v.shape == () and v == 2.0 and i.shape == () and i == 2
    v, i = O.kthvalue(np.ones((2, 3)), 1, None, keepdims=True)
    assert v.shape == (1, 1) and i.shape == (1, 1)
    assert O.sort(np.array(5.0), None).shape == (1,)
    assert O.top_k(np.array(5), 1, None).values.shape == (1,)
    assert O.rank(np.array(5.0), None).shape == (1,)
    for op in ("argsort", "argpartition"):
        for idt in (np.int32, "int32", np.dtype("int64"), "int64"):
            got = getattr(O, op)(x, 1, index_dtype=idt) if op == "argpartition" else \
                getattr(O, op)(x, index_dtype=idt)
            assert got.dtype == np.dtype(idt)
    assert O.top_k(x, 2, index_dtype=np.int32).indices.dtype == np.int32
    assert O.kthvalue(x, 2, index_dtype="int32").indices.dtype == np.int32
    assert O.top_k(x, 0).values.shape == (3, 0) and O.top_k(x, 0).indices.dtype == np.int64
    assert O.sort([3, 1, 2]).tolist() == [1, 2, 3]  # array-likes


def test_nan_variants_warn_like_numpy_on_all_nan_slices():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    for op, args in (("nanmedian", ()), ("nanquantile", (0.5,))):
        with pytest.warns(RuntimeWarning):
            got = getattr(O, op)(x, *args, axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(R, op)(x, *args, axis=1)
        assert mismatch(got, want) is None, op
    with pytest.warns(RuntimeWarning):
        assert np.isnan(O.nanmedian(np.full(3, np.nan)))


# ----------------------------------------------------------------------------- errors

def error_calls():
    """``(op, args, kwargs, exception)``: calls every operator must refuse."""
    x = np.arange(12.0).reshape(3, 4)
    c = x.astype(complex)
    yield from ((op, (c,) + a, {}, TypeError) for op, a in (
        ("sort", ()), ("argsort", ()), ("top_k", (1,)), ("partition", (1,)),
        ("argpartition", (1,)), ("kthvalue", (1,)), ("median", ()), ("nanmedian", ()),
        ("quantile", (0.5,)), ("nanquantile", (0.5,)), ("rank", ())))
    obj = np.array([1, "a", None], dtype=object)
    yield from ((op, (obj,) + a, {}, TypeError) for op, a in (
        ("sort", ()), ("top_k", (1,)), ("median", ()), ("rank", ())))
    yield "sort", (np.array(["b", "a"]),), {}, TypeError
    for op, a in (("sort", ()), ("argsort", ()), ("top_k", (1,)), ("partition", (1,)),
                  ("argpartition", (1,)), ("kthvalue", (1,)), ("rank", ())):
        for axis, exc in ((2, AxisError), (-3, AxisError), ((0, 1), TypeError),
                          ((1,), TypeError), (1.0, TypeError)):
            yield op, (x,) + a + (axis,), {}, exc
        yield op, (np.array(1.0),) + a + (0,), {}, AxisError
        yield op, (np.array(1.0),) + a + (-1,), {}, AxisError
    for op in ("median", "nanmedian"):
        yield op, (x, 2), {}, AxisError
        yield op, (x, (0, 0)), {}, ValueError
        yield op, (np.array(1.0), 0), {}, AxisError
    for op in ("quantile", "nanquantile"):
        yield op, (x, 0.5, 2), {}, AxisError
        yield op, (x, 1.5), {}, ValueError
        yield op, (x, -0.1), {}, ValueError
        yield op, (x, [0.5, 2.0]), {}, ValueError
        yield op, (x, 0.5), {"method": "nope"}, ValueError
        yield op, (x, 0.5), {"method": "linear"}, None
    for k, exc in ((5, ValueError), (-1, ValueError), (1.0, TypeError), (True, TypeError),
                   (np.int64(4), None), (0, None), (4, None)):
        yield "top_k", (x, k), {}, exc
    yield "top_k", (x, 2), {"mode": "biggest"}, ValueError
    yield "top_k", (x, 13, None), {}, ValueError
    yield "top_k", (x, 12, None), {}, None
    for k, exc in ((0, ValueError), (5, ValueError), (1.5, TypeError), (False, TypeError),
                   (np.uint8(4), None), (1, None)):
        yield "kthvalue", (x, k), {}, exc
    for op in ("partition", "argpartition"):
        for kth, exc in ((4, ValueError), (-5, ValueError), ([0, 4], ValueError), (1.0, TypeError),
                         (True, TypeError), (-4, None), ([3, -4], None)):
            yield op, (x, kth), {}, exc
        yield op, (np.zeros(0), 0), {}, ValueError
    for op, a in (("argsort", ()), ("top_k", (1,)), ("argpartition", (1,)), ("kthvalue", (1,))):
        for idt in (np.int16, np.uint64, np.float64, "float32", bool):
            yield op, (x,) + a, {"index_dtype": idt}, TypeError
    yield "rank", (x,), {"method": "first"}, ValueError
    yield "quantile", (np.zeros((2, 0)), 0.5, 1), {}, IndexError  # NumPy's
    yield "nanquantile", (np.zeros((2, 0)), 0.5, 1), {}, None
    yield "median", (np.zeros((2, 0)), 1), {}, None
    yield "kthvalue", (np.zeros((2, 0)), 1), {}, ValueError


@pytest.mark.parametrize("case", list(error_calls()),
                         ids=lambda c: f"{c[0]}-{c[3].__name__ if c[3] else 'ok'}")
def test_errors_as_the_twin(case):
    op, args, kwargs, exc = case
    want = run(getattr(R, op), *args, **kwargs)
    got = run(getattr(O, op), *args, **kwargs)
    if exc is None:
        assert want[0] == "ok", f"the twin raised {want[1]!r}"
        assert got[0] == "ok", f"{op} raised {got[1]!r}"
        return
    assert want[0] == "raised" and isinstance(want[1], exc), f"the twin gave {want}"
    assert compare_outcomes(got, want) is None, compare_outcomes(got, want)
    if exc is TypeError and np.asarray(args[0]).dtype.kind in "cOU":
        assert op in str(got[1]), f"TypeError does not name {op}: {got[1]}"


# ------------------------------------------------------- long lanes: sampled brackets

def _bracket_lanes(rng, dtype, n, kind):
    """A lane of *n* of *kind* for the sampled bracket of ``kernels.order``."""
    dtype = np.dtype(dtype)
    if kind == "ties":  # a bracket of far more keys than the sample promised
        return rng.integers(0, 3, n).astype(dtype)
    if kind == "equal":
        return np.full(n, 5, dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    x = rng.standard_normal(n).astype(dtype)
    if kind == "zeros":  # the middle and the tenth from the top: zeros of both signs
        x = np.where(np.abs(x) < 0.3, np.where(rng.random(n) < 0.5, -0.0, 0.0), x)
        x = np.where((x > 1.2) & (x < 1.35), np.where(rng.random(n) < 0.5, -0.0, 0.0),
                     x - 1.28 * (x > 1.2)).astype(dtype)
    elif kind == "nan":
        x[rng.random(n) < 0.05] = np.nan
        x[rng.random(n) < 0.01] = -np.inf
    elif kind == "mostly_nan":
        x[rng.random(n) < 0.7] = np.nan
    return x


def _selected_problem(x, axis, places, label, errors):
    """``O._select`` of *places* against a stable argsort: the values bit for bit
    (a zero's sign, a NaN's payload), the positions, the NaN counts."""
    lanes_x = lanes(x, axis)
    order = np.argsort(lanes_x, axis=1, kind="stable")
    rows = np.broadcast_to(places, (lanes_x.shape[0], places.shape[1]))
    want_pos = np.take_along_axis(order, rows, axis=1)
    want = np.take_along_axis(lanes_x, want_pos, axis=1)
    for want_positions in (False, True):
        values, positions, nans = O._select(x, axis % x.ndim, places, want_positions)
        if (values.view(_UINT[x.itemsize]) != want.view(_UINT[x.itemsize])).any():
            errors.append(f"_select{label} places {places[:1]}: values differ")
        if want_positions and (positions != want_pos).any():
            errors.append(f"_select{label} places {places[:1]}: positions differ")
        if (nans != missing(lanes_x).sum(axis=1)).any():
            errors.append(f"_select{label}: NaN counts differ")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.uint64,
                                   np.int8], ids=lambda d: np.dtype(d).name)
def test_bracketed_lanes(dtype):
    """Lanes from ``BRACKET_MIN`` on select from a sampled bracket: the elements at
    the places of the stable order, bit for bit (the sign of a selected zero
    too), for places near one another (a bracket), far apart (every key), with
    ties beyond the bracket's room, NaN, contiguous and strided lanes; and the
    medians and quantiles are NumPy's."""
    from axisops.kernels import order as K
    rng = np.random.default_rng(21)
    errors = []
    kinds = ["normal", "ties", "equal"] + (["zeros", "nan", "mostly_nan"]
                                          if np.dtype(dtype).kind == "f" else [])
    for n in (K.BRACKET_MIN, 3 * K.BRACKET_MIN + 5):
        for kind in kinds:
            lane = _bracket_lanes(rng, dtype, 2 * n, kind)
            for x, axis in ((lane[:n], 0), (lane[::-2], -1), (lane.reshape(2, n), 1),
                            (lane.reshape(n, 2), 0)):
                label = f"({np.dtype(dtype).name}, {kind}, n={n}, strides={x.strides})"
                lane_count = x.size // n
                for places in ([[n // 2 - 1, n // 2]], [[(9 * n) // 10]], [[n // 10, n - 2]],
                               [[0, 1]], [[n - 1]],
                               [[n // 3 + i, n // 3 + i + 1] for i in range(lane_count)]):
                    _selected_problem(x, axis, np.array(places, np.int64), label, errors)
                for op, args in (("median", (x, axis)), ("nanmedian", (x, axis)),
                                 ("nanquantile", (x, 0.99, axis))):
                    compare_calls(op, args, {}, label, numpy_result_problem, errors)
                for q in (0.9, [0.5, 0.5001], [0.1, 0.9]):
                    for method in ("linear", "lower", "nearest", "midpoint"):
                        compare_calls("quantile", (x, q, axis), {"method": method},
                                      f"{label} q={q}", numpy_result_problem, errors)
    report(errors)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bracket_sample_missed(dtype):
    """A lane whose sampled keys are all its greatest: the bracket cannot hold the
    median, and the lane is selected from all its keys (still NumPy's result)."""
    from axisops.kernels import order as K
    n = 4 * K.BRACKET_MIN
    x = np.random.default_rng(3).standard_normal(n).astype(dtype)
    s = K.sample_size(n)
    sampled = np.array([K.sample_position(i, n // s) for i in range(s)])
    x[sampled] = np.arange(s) + 1000.0
    for q in (0.5, 0.9):
        assert O.quantile(x, q).tobytes() == np.quantile(x, q).tobytes()
    assert O.median(x).tobytes() == np.median(x).tobytes()


# ------------------------------------------------ short lanes: selection networks

@pytest.mark.parametrize("size", [2, 4, 8, 16, 32, 64, 128, 256])
def test_selection_pairs_reach_the_wanted_places(size):
    """The comparators kept for places ``low..high`` put the same keys there as
    the whole network (random keys with ties), and fewer are kept for fewer places."""
    from axisops.kernels import order as K
    from axisops.kernels.select_network import selection_pairs
    rng = np.random.default_rng(size)
    full = K.network_pairs(size)
    keys = rng.integers(0, size // 2 + 1, (size, 200))
    for low, high in ((size // 2 - 1, size // 2), (0, 0), (size - 1, size - 1),
                      (size // 4, 3 * size // 4)):
        pairs = selection_pairs(size, max(low, 0), high)
        assert len(pairs) <= len(full)
        column = keys.copy()
        for a, b in pairs:
            column[[a, b]] = np.sort(column[[a, b]], axis=0)
        want = np.sort(keys, axis=0)
        assert (column[max(low, 0):high + 1] == want[max(low, 0):high + 1]).all()
    if size >= 16:
        assert len(selection_pairs(size, size // 2, size // 2)) < len(full)


def _short_lane_arrays(rng, dtype, n):
    """Arrays whose lanes along their axis are *n* long, with the layouts the
    selection network reads in different ways: rows (gathered), columns
    (neighbours loaded as vectors), a middle axis and reversed strides (lanes
    not evenly apart: the general reader), a partial last block."""
    rows = data(rng, (40, n), dtype)
    yield "rows", rows, 1
    yield "columns", data(rng, (n, 48), dtype), 0
    yield "middle", data(rng, (3, n, 7), dtype), 1
    yield "reversed", data(rng, (35, n), dtype)[::-1, ::-1], 1
    yield "strided columns", data(rng, (n, 70), dtype)[:, ::2], 0
    if np.dtype(dtype).kind == "f":
        nan_rows = rows.copy()
        nan_rows[::5] = np.nan  # all-NaN lanes
        yield "all-NaN lanes", nan_rows, 1
        zeros = np.where(rng.random((40, n)) < 0.5, -0.0, 0.0).astype(dtype)
        zeros[::3, 0] = 1.0
        yield "signed zeros", zeros, 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8, np.int64,
                                   np.uint16, np.bool_], ids=lambda d: np.dtype(d).name)
def test_selection_network_lanes(dtype):
    """Lanes up to ``SELECT_NETWORK_MAX`` select values by a selection network on
    keys: the elements at the places of the stable order bit for bit (the sign
    of a zero, a NaN's bits), the NaN counts, for lane lengths at the network
    sizes' boundaries and each layout; the medians and quantiles are NumPy's."""
    from axisops.kernels import order as K
    rng = np.random.default_rng(17)
    errors = []
    for n in (2, 3, 8, 9, 16, 17, 32, 33, 64, 100, K.SELECT_NETWORK_MAX):
        for name, x, axis in _short_lane_arrays(rng, dtype, n):
            label = f"({np.dtype(dtype).name}, {name}, n={n}, strides={x.strides})"
            lane_count = x.size // n
            for places in ([[(n - 1) // 2, n // 2]], [[0]], [[n - 1]], [[0, n - 1]],
                           [[(7 * i) % n, (7 * i) % n] for i in range(lane_count)]):
                _selected_problem(x, axis, np.array(places, np.int64), label, errors)
            for op in ("median", "nanmedian"):
                compare_calls(op, (x, axis), {}, label, numpy_result_problem, errors)
            if dtype != np.bool_:
                compare_calls("quantile", (x, [0.1, 0.5, 0.9], axis), {}, label,
                              numpy_result_problem, errors)
                compare_calls("nanquantile", (x, 0.3, axis), {"method": "nearest"}, label,
                              numpy_result_problem, errors)
    report(errors)


def test_top_k_of_a_transposed_table_reads_its_lanes_as_rows():
    """A few long lanes across memory (an F-ordered 2-D table along axis 1) are copied
    into rows first: the values and positions of the C-ordered table, C-ordered."""
    rng = np.random.default_rng(11)
    for shape in ((4, 1000), (3, 5000), (15, 40)):
        x = np.round(rng.standard_normal(shape), 1).astype(np.float32)
        x[0, ::7] = np.nan
        xf = np.asfortranarray(x)
        for mode in ("largest", "smallest"):
            for in_order in (True, False):
                want = axisops.top_k(x, 10, axis=1, mode=mode, sorted=in_order)
                got = axisops.top_k(xf, 10, axis=1, mode=mode, sorted=in_order)
                assert got.values.dtype == np.float32 and got.indices.dtype == np.int64
                assert got.values.shape == got.indices.shape == (shape[0], 10)
                np.testing.assert_array_equal(got.indices, want.indices)
                np.testing.assert_array_equal(got.values, want.values)
                assert got.values.flags.c_contiguous and got.indices.flags.c_contiguous

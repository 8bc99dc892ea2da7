"""Scans (cumsum, cumprod, cummax, cummin, logcumsumexp) against the NumPy oracle.

Every operator runs over every edge case of ``tests/cases.py`` for every single
axis and ``None``, with each of its options (``exclusive`` and ``reverse`` for the
sums and products, ``index_dtype`` for cummax/cummin). Each call checks value,
dtype and shape, or that both sides raise alike; cummax/cummin values are also
compared bit for bit (a -0.0 taken for a 0.0, or a NaN's payload, is a bug).
Long axes that take the blocked parallel path are checked on values whose sums
and products are exact in any order, so the result must equal the oracle's bits,
and on random values within a reassociation bound; then against the number of
threads, and cummax/cummin/logcumsumexp against PyTorch.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from cases import (
    FLOAT_DTYPES,
    bad_axes,
    case_params,
    cases,
    changed,
    compare_outcomes,
    dtype_params,
    mismatch,
    order_sensitive,
    outcome,
    single_axes,
    snapshot,
    values,
)

import axisops
from axisops import reference as ref

SUM_OPS = ("cumsum", "cumprod")
EXTREME_OPS = ("cummax", "cummin")
OPS = SUM_OPS + EXTREME_OPS + ("logcumsumexp",)

CASES = case_params()

#: Keyword sets each operator runs with, for every case and axis.
OPTIONS = {
    "cumsum": ({}, {"exclusive": True}, {"reverse": True}, {"exclusive": True, "reverse": True}),
    "cummax": ({}, {"index_dtype": np.int32}),
    "logcumsumexp": ({},),
}
OPTIONS["cumprod"] = OPTIONS["cumsum"]
OPTIONS["cummin"] = OPTIONS["cummax"]

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def scan_length(x, axis):
    x = np.asarray(x)
    return x.size if axis is None else x.shape[axis]


def value_bound(op, x, axis, kwargs, want):
    """How far a float scan may be from the oracle, elementwise (None: exactly equal).

    The implementation splits long axes into blocks, so its additions and
    multiplications are reassociated: a prefix sum differs from the serial one by
    at most ``~(n + 2) * eps_acc * cumsum(|x|)`` and a prefix product by
    ``~(n + 2) * eps_acc`` relative; logcumsumexp steps have a derivative of at
    most 1 in each argument, so each step adds at most ``~eps_acc * (1 + |y|)``.
    Every float result also gets 2 ulps of its own dtype (rounding once, and the
    accumulator's own rounding) and one smallest subnormal (underflow).
    """
    want = np.asarray(want)
    if want.dtype.kind != "f":
        return None
    x = np.asarray(x)
    n = scan_length(x, axis)
    out = np.finfo(want.dtype)
    acc = np.finfo(np.float32 if want.dtype.itemsize <= 4 else np.float64)
    w = np.abs(want.astype(np.float64))
    with np.errstate(all="ignore"):
        base = 2 * float(out.eps) * w + float(out.smallest_subnormal)
        if op == "cumsum":
            in_eps = float(out.eps) if want.dtype == np.float16 else 0.0
            s = ref.cumsum(np.abs(x.astype(np.float64)), axis,
                           exclusive=kwargs.get("exclusive", False),
                           reverse=kwargs.get("reverse", False))
            return base + ((n + 2) * float(acc.eps) + in_eps) * s
        if op == "cumprod":
            in_eps = n * float(out.eps) if kwargs.get("dtype") == np.float16 else 0.0
            return base + (2 * (n + 2) * float(acc.eps) + in_eps) * w
        # logcumsumexp
        finite = np.concatenate([np.abs(x[np.isfinite(x)]).astype(np.float64).ravel(),
                                 w[np.isfinite(w)].ravel(), [0.0]])
        return base + (n + 2) * float(acc.eps) * (1 + finite.max())


def bits(a):
    """The bit patterns of a float array (as unsigned ints); other arrays as they are."""
    a = np.asarray(a)
    return a.view(_UINT[a.itemsize]) if a.dtype.kind == "f" else a


def _check_array(a, what):
    if type(a) is not np.ndarray:
        return f"{what} is a {type(a).__name__}, expected a numpy.ndarray"
    if not a.flags.c_contiguous:
        return f"{what} is not C-contiguous (strides {a.strides})"
    return None


def compare(op, got, want, x, axis, kwargs, name=""):
    """Message for an ``axisops.<op>`` result that does not match the oracle's."""
    if op in EXTREME_OPS:
        if not isinstance(got, tuple) or len(got) != 2:
            return f"expected a (values, indices) named tuple, got {type(got).__name__}"
        if got.values is not got[0] or got.indices is not got[1]:
            return "the .values/.indices attributes are not the tuple's items"
        for part, g, w in (("values", got[0], want[0]), ("indices", got[1], want[1])):
            msg = _check_array(g, part) or mismatch(g, w)
            if msg is None and np.asarray(w).dtype.kind == "f" and not np.array_equal(
                    bits(g), bits(w)):
                first = tuple(int(i) for i in np.argwhere(bits(g) != bits(w))[0])
                msg = (f"bits differ (-0.0 for 0.0, or a NaN payload); first at {first}: "
                       f"got {g[first]!r}, expected {w[first]!r}")
            if msg:
                return f"{part}: {msg}"
        return None
    msg = _check_array(got, "result")
    if msg:
        return msg
    bound = value_bound(op, x, axis, kwargs, want)
    if bound is not None and op in SUM_OPS and order_sensitive(name):
        # overflow makes where a float sum becomes inf or NaN order-dependent
        return mismatch(np.zeros(got.shape, got.dtype), np.zeros(want.shape, want.dtype))
    return mismatch(got, want, bound)


def check_call(op, x, axis, kwargs, *, name=""):
    """Compare ``axisops.<op>`` with ``reference.<op>``; return a message or None."""
    want = outcome(getattr(ref, op), x, axis, **kwargs)
    got = outcome(getattr(axisops, op), x, axis, **kwargs)
    msg = compare_outcomes(got, want)
    if msg is None and want[0] == "ok":
        msg = compare(op, got[1], want[1], x, axis, kwargs, name)
    return _message(op, x, axis, kwargs, msg)


def _message(op, x, axis, kwargs, msg):
    if msg is None:
        return None
    x = np.asarray(x)
    kw = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return f"{op}(x {x.shape} {x.dtype}, axis={axis!r}{kw}): {msg}"


def report(failures, limit=25):
    if failures:
        more = f"\n... and {len(failures) - limit} more" if len(failures) > limit else ""
        pytest.fail(f"{len(failures)} failing calls:\n" + "\n".join(failures[:limit]) + more)


# ------------------------------------------------------------ every case, every axis

@pytest.mark.parametrize("name,x", CASES)
@pytest.mark.parametrize("op", OPS)
def test_matches_reference(op, name, x):
    """Every case, every single axis and None, every option: value, dtype, shape."""
    before = snapshot(x)
    failures = []
    for axis in single_axes(x.ndim):
        for kwargs in OPTIONS[op]:
            if msg := check_call(op, x, axis, kwargs, name=name):
                failures.append(msg)
    if msg := changed(x, before):
        failures.append(msg)
    report(failures)


# ------------------------------------------------------------------ dtype argument

DTYPE_ARGS = (None, np.int32, np.uint64, np.float16, np.float32, np.float64, np.bool_)
#: One integer and one float input: every (input, accumulator) pair is a kernel of its
#: own for Numba to compile (~10 s each, cold), so more input dtypes cost minutes.
DTYPE_INPUTS = [pytest.param(a, id=n) for n, a in cases(dtypes=(np.int8, np.float64), max_ndim=3)
                if n.split("-", 1)[1] in ("2d", "3d", "0d", "empty-2d", "ties",
                                          "view-negstride", "view-broadcast-col")]


@pytest.mark.parametrize("x", DTYPE_INPUTS)
@pytest.mark.parametrize("op", SUM_OPS)
def test_dtype_argument(op, x):
    failures = []
    for dtype in DTYPE_ARGS:
        if x.dtype.kind == "f" and dtype is not None and np.dtype(dtype).kind == "u":
            continue  # casting a negative float to an unsigned int is undefined in C
        for axis in (None, -1):
            if x.ndim == 0 and axis is not None:
                continue
            for kwargs in ({"dtype": dtype}, {"dtype": dtype, "exclusive": True, "reverse": True}):
                if msg := check_call(op, x, axis, kwargs):
                    failures.append(msg)
    report(failures)


@pytest.mark.parametrize("op", SUM_OPS)
@pytest.mark.parametrize("dtype", ["not a dtype", np.dtype("U3"), object, "datetime64[D]"])
def test_bad_dtype_argument(op, dtype):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError):
        getattr(ref, op)(x, dtype=dtype)
    with pytest.raises(TypeError):
        getattr(axisops, op)(x, axis=1, dtype=dtype)


def test_float16_accumulates_in_float32():
    """np.cumsum of float16 stalls at 2048; the contract accumulates in float32."""
    x = np.ones(5000, np.float16)
    got = axisops.cumsum(x)
    assert got.dtype == np.float16 and got.shape == (5000,)
    assert got[-1] == 5000 and got[2048] == 2049 and got[2999] == 3000
    assert axisops.cumsum(x, reverse=True)[0] == 5000
    assert axisops.cumsum(x, exclusive=True)[-1] == 4999
    assert mismatch(got, ref.cumsum(x)) is None
    y = axisops.cumsum(np.ones((2, 5000), np.float16), axis=1)
    assert y.dtype == np.float16 and np.all(y[:, -1] == 5000)


@pytest.mark.parametrize("op,want", [("cumsum", [200, 44, 144]), ("cumprod", [200, 32, 128])])
def test_integers_wrap_in_requested_dtype(op, want):
    x = np.array([200, 100, 100], dtype=np.uint8)
    got = getattr(axisops, op)(x, dtype=np.uint8)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, getattr(np, op)(x, dtype=np.uint8))
    # the default dtype is NumPy's: uint64 here, int64 for int8 and bool
    assert getattr(axisops, op)(x).dtype == np.uint64
    assert getattr(axisops, op)(x.astype(np.int8)).dtype == np.int64
    assert getattr(axisops, op)(x > 150).dtype == np.int64
    big = np.array([2**62, 2**62, 2**62, -5], dtype=np.int64)
    np.testing.assert_array_equal(getattr(axisops, op)(big), getattr(np, op)(big))


def test_exclusive_and_reverse_are_onnx_cumsum():
    """The four examples of the ONNX CumSum operator's documentation."""
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert np.array_equal(axisops.cumsum(x, 0), [1, 3, 6, 10, 15])
    assert np.array_equal(axisops.cumsum(x, 0, exclusive=True), [0, 1, 3, 6, 10])
    assert np.array_equal(axisops.cumsum(x, 0, reverse=True), [15, 14, 12, 9, 5])
    assert np.array_equal(axisops.cumsum(x, 0, exclusive=True, reverse=True), [14, 12, 9, 5, 0])
    assert np.array_equal(axisops.cumprod(x, 0, exclusive=True, reverse=True), [120, 60, 20, 5, 1])


# ------------------------------------------------------------------------- errors

@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("x", [np.ones((2, 3), np.complex64), np.ones(3, np.complex128),
                               np.array([1, "a"], dtype=object), np.array(["ab", "c"]),
                               np.array([1, 2], dtype="datetime64[D]")],
                         ids=["complex64", "complex128", "object", "str", "datetime64"])
def test_unsupported_dtype_is_type_error_naming_op(op, x):
    if x.dtype.kind == "c" and op in SUM_OPS:  # complex sums and products are in the contract
        assert axisops.cumsum(x).dtype == x.dtype
        return
    if x.dtype.kind == "M" and op in ("cummax", "cummin"):  # dates are ordered (test_dates.py)
        ufunc = np.maximum if op == "cummax" else np.minimum
        np.testing.assert_array_equal(getattr(axisops, op)(x).values, ufunc.accumulate(x))
        return
    for axis in (None, -1):
        with pytest.raises(TypeError, match=op):
            getattr(ref, op)(x, axis)
        with pytest.raises(TypeError, match=op):
            getattr(axisops, op)(x, axis)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("ndim", [0, 1, 3])
def test_bad_axes(op, ndim):
    """Out of range: AxisError (also 0 and -1 on a 0-d array); a tuple, list or float: TypeError."""
    x = np.arange(math.prod((2, 3, 4)[:ndim]), dtype=np.float32).reshape((2, 3, 4)[:ndim])
    bad = list(bad_axes(ndim, multi=False)) + [((0,), TypeError), ([0], TypeError),
                                               ((), TypeError), ("0", TypeError)]
    failures = []
    for axis, exc in bad:
        for f in (getattr(ref, op), getattr(axisops, op)):
            kind, value = outcome(f, x, axis)
            if not (kind == "raised" and isinstance(value, exc)):
                what = (f"raised {type(value).__name__}({value})" if kind == "raised"
                        else f"returned {value!r}")
                failures.append(f"{f.__module__}.{op}(shape {x.shape}, axis={axis!r}): "
                                f"{what}, expected {exc.__name__}")
    report(failures)


@pytest.mark.parametrize("op", EXTREME_OPS)
@pytest.mark.parametrize("index_dtype", [np.float64, np.int16, np.int8, np.uint32, np.uint64,
                                         bool, "int8", "nope", None, object])
def test_bad_index_dtype(op, index_dtype):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError):
        getattr(ref, op)(x, index_dtype=index_dtype)
    with pytest.raises(TypeError):
        getattr(axisops, op)(x, axis=1, index_dtype=index_dtype)


@pytest.mark.parametrize("op", EXTREME_OPS)
@pytest.mark.parametrize("index_dtype", [np.int32, "int32", np.dtype("int32"), np.int64,
                                         "int64", int])
def test_index_dtype_spellings(op, index_dtype):
    x = np.array([[3, 1, 3], [0, 5, 5]], dtype=np.int16)
    for axis in (None, 1, 0):
        got = getattr(axisops, op)(x, axis=axis, index_dtype=index_dtype)
        want = getattr(ref, op)(x, axis=axis, index_dtype=index_dtype)
        assert mismatch(got.indices, want.indices) is None, (axis, got, want)
        assert got.indices.dtype == np.dtype(index_dtype)


HUGE = 2**31 + 1  # one more element than an int32 index can address


@pytest.mark.parametrize("op", EXTREME_OPS)
@pytest.mark.parametrize("shape,axis", [((HUGE,), None), ((HUGE,), 0), ((HUGE,), -1),
                                        ((2, HUGE), 1), ((2**16, 2**15 + 1), None)])
def test_int32_index_overflow(op, shape, axis):
    """More than 2**31 elements along the scan cannot be indexed with int32.

    The arrays are stride-0 broadcasts, so nothing is allocated: the check must be
    made on the shape before any output is allocated or any element read.
    """
    x = np.broadcast_to(np.zeros(1, dtype=np.int8), shape)
    with pytest.raises(OverflowError):
        getattr(ref, op)(x, axis, index_dtype=np.int32)
    with pytest.raises(OverflowError):
        getattr(axisops, op)(x, axis, index_dtype=np.int32)


# ---------------------------------------------------------------- small contracts

@pytest.mark.parametrize("op", EXTREME_OPS)
def test_named_tuple(op):
    x = np.array([[2.0, 1.0, 3.0], [0.0, 0.0, -1.0]])
    res = getattr(axisops, op)(x, axis=1)
    values, indices = res
    assert isinstance(res, tuple) and len(res) == 2
    assert res.values is values and res.indices is indices
    assert indices.dtype == np.int64 and values.dtype == x.dtype


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_signed_zeros_and_nan(dtype):
    """The values are the elements taken, bit for bit; ties and NaNs take over the index."""
    x = np.array([-0.0, 0.0], dtype)
    v, i = axisops.cummax(x)
    assert np.array_equal(bits(v), bits(x)) and i.tolist() == [0, 1]
    v, i = axisops.cummax(x[::-1])
    assert np.array_equal(bits(v), bits(x[::-1])) and i.tolist() == [0, 1]
    v, i = axisops.cummin(np.array([0.0, -0.0, 0.0], dtype))
    assert np.array_equal(bits(v), bits(np.array([0.0, -0.0, 0.0], dtype)))
    assert i.tolist() == [0, 1, 2]
    y = np.array([1.0, np.nan, 5.0, np.nan, -np.inf, np.inf], dtype)
    for op in EXTREME_OPS:
        v, i = getattr(axisops, op)(y)
        assert i.tolist() == [0, 1, 1, 3, 3, 3], (op, i)
        assert v[0] == 1 and np.all(np.isnan(v[1:]))
    # a NaN with a payload other than NumPy's is carried, not replaced
    payload = {2: 0x7E01, 4: 0x7FC00123, 8: 0x7FF8000000000123}[np.dtype(dtype).itemsize]
    z = np.array([1, payload, 3, 2], dtype=_UINT[np.dtype(dtype).itemsize]).view(dtype)
    z[0], z[2], z[3] = 1, 3, 2
    for op in EXTREME_OPS:
        v, i = getattr(axisops, op)(z)
        assert i.tolist() == [0, 1, 1, 1]
        assert bits(v).tolist() == [bits(z)[0]] + [payload] * 3


def _torch_rule(lane, op):
    """cummax/cummin along one lane, as the contract words it (the oracle's oracle)."""
    vals, idx = [], []
    cur, at = lane[0], 0
    for j, v in enumerate(lane):
        nan_cur = cur != cur
        if v != v or (not nan_cur and (v >= cur if op == "cummax" else v <= cur)):
            cur, at = v, j
        vals.append(cur)
        idx.append(at)
    return vals, idx


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int8, np.uint64, np.bool_])
def test_reference_follows_the_torch_rule(dtype):
    """The oracle's loop-free formula equals the contract's rule, literally applied."""
    failures = []
    for name, x in cases(dtypes=[dtype], views=False, max_ndim=3):
        for axis in single_axes(x.ndim):
            if x.size == 0:
                continue
            lanes = (x.reshape(1, -1) if axis is None
                     else np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis]))
            for op in EXTREME_OPS:
                v, i = getattr(ref, op)(x, axis)
                v = (v.reshape(1, -1) if axis is None
                     else np.moveaxis(v, axis, -1).reshape(lanes.shape))
                i = (i.reshape(1, -1) if axis is None
                     else np.moveaxis(i, axis, -1).reshape(lanes.shape))
                for lane, lv, li in zip(lanes, v, i):
                    want_v, want_i = _torch_rule(list(lane), op)
                    if li.tolist() != want_i or not np.array_equal(
                            bits(lv), bits(np.array(want_v, dtype))):
                        failures.append(f"{name} {op} axis={axis}: {lane} -> {lv}, {li}; "
                                        f"the rule gives {want_v}, {want_i}")
    report(failures)


@pytest.mark.parametrize("op", OPS)
def test_zero_d(op):
    """A 0-d input is a one-element scan that stays 0-d."""
    for x in (np.float32(2.5), np.array(-3, np.int8), np.array(True), np.array(np.nan)):
        got = getattr(axisops, op)(x)
        want = getattr(ref, op)(x)
        assert compare(op, got, want, x, None, {}) is None, (op, x, got, want)
        if op in EXTREME_OPS:
            assert got.values.shape == () and got.indices.shape == () and got.indices == 0
            assert np.array_equal(bits(got.values), bits(np.asarray(x)))
        else:
            assert got.shape == ()
    if op in SUM_OPS:
        got = getattr(axisops, op)(np.float64(7.0), exclusive=True)
        assert got.shape == () and got == (0 if op == "cumsum" else 1)


@pytest.mark.parametrize("op", OPS)
def test_python_inputs(op):
    failures = []
    for x in ([[1, 5, 2], [7, 0, 7]], [1.5, -2.0], 3, 2.5, True, [[True, False]], []):
        for axis in (None, -1) if np.ndim(x) else (None,):
            if msg := check_call(op, x, axis, {}):
                failures.append(f"x={x!r}: {msg}")
    report(failures)


# ------------------------------------------------------------------- long scans

def _exact_values(dtype, shape, axis, seed, op):
    """Values whose prefix sums/products along *axis* are exact in any order.

    Sums: small integers (float32 partial sums stay far below 2**24). Products of
    integers wrap exactly in any order. Float products along a lane:
    ``x_k = ±2**(e_{k+1} - e_k)`` for random exponents ``e`` in [-5, 5], so the
    product of any run of consecutive factors is ``±2**(e_end - e_start)``: however
    a lane is cut into blocks, no partial product over- or underflows (float16
    included). One zero near the end of each lane. (Partial products of factors
    that are not consecutive, e.g. every 8th, do overflow: a kernel that forms
    those turns the true, small prefix products into NaN.)
    """
    r = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if op == "cumsum":
        return r.integers(-4 if kind != "u" else 0, 4, size=shape).astype(dtype)
    if kind != "f":
        return r.choice(np.array([1, -1, 1, 3, -2, 7]), size=shape).astype(dtype)
    lanes = (math.prod(shape) // shape[axis], shape[axis])
    e = r.integers(-5, 6, size=(lanes[0], lanes[1] + 1))
    x = np.exp2(np.diff(e, axis=1).astype(np.float64)) * r.choice([-1.0, 1.0], size=lanes)
    x[:, lanes[1] - lanes[1] // 7] = 0.0
    moved = tuple(n for d, n in enumerate(shape) if d != axis) + (shape[axis],)
    return np.moveaxis(x.reshape(moved), -1, axis).astype(dtype)


def _extreme_values(dtype, n, seed):
    """Long runs of ties and NaN: values from {0, 1, 2, nan}, some runs hundreds long."""
    r = np.random.default_rng(seed)
    run = np.repeat(r.integers(0, 4, size=n // 50 + 1), 50)[:n]
    single = r.integers(0, 4, size=n)
    v = np.where(r.random(n) < 0.5, run, single)
    if np.dtype(dtype).kind == "f":
        x = np.where(v == 3, np.nan, v).astype(dtype)
        x[: n // 3] = np.where(np.isnan(x[: n // 3]), 1.0, x[: n // 3])  # a NaN-free start
        return x
    return (v % 3).astype(dtype)


#: (shape, the long axis, dtypes): 1-D axes past the blocked threshold and 2-D/3-D
#: arrays whose long axis is the last, the first and a middle one.
LONG = [
    ((600_000,), 0, (np.float32, np.int32)),
    ((1_000_003,), 0, (np.float64, np.float16)),
    ((3, 400_003), 1, (np.float32,)),
    ((6, 100_003), 1, (np.float64,)),  # rows four at a time, two left over
    ((400_003, 3), 0, (np.float64,)),
    ((200_003, 5), 0, (np.float32,)),  # chunked lanes along axis 0, four side by side
    ((5, 300, 7), 1, (np.float32,)),
]
LONG_PARAMS = [pytest.param(s, a, d, id=f"{'x'.join(map(str, s))}-{np.dtype(d).name}")
               for s, a, ds in LONG for d in ds]


def _long_views(x, axis):
    """(label, view, axis) for the array, its reverse along the axis, and its transpose."""
    yield "plain", x, axis
    rev = [slice(None)] * x.ndim
    rev[axis] = slice(None, None, -1)
    yield "reversed", x[tuple(rev)], axis
    if x.ndim > 1:
        yield "transposed", x.T, x.ndim - 1 - axis


@pytest.mark.parametrize("shape,axis,dtype", LONG_PARAMS)
def test_long_exact(shape, axis, dtype):
    """Sums and products that are exact in any order must equal the oracle's bits,
    so a block carried to the wrong place, or added twice, cannot hide in a bound."""
    failures = []
    for op in SUM_OPS:
        x = _exact_values(dtype, shape, axis, 3, op)
        for label, v, ax in _long_views(x, axis):
            for kwargs in ({}, {"exclusive": True, "reverse": True}, {"reverse": True}):
                # (the flattened scan of a float product is exact only in 1-D)
                flat = label == "plain" and (op == "cumsum" or x.ndim == 1 or dtype == np.int32)
                for a in (ax, None) if flat else (ax,):
                    if msg := check_exact(op, v, a, kwargs):
                        failures.append(f"{label}: {msg}")
    report(failures)


def check_exact(op, x, axis, kwargs):
    want = getattr(ref, op)(x, axis, **kwargs)
    got = getattr(axisops, op)(x, axis, **kwargs)
    return _message(op, x, axis, kwargs, _check_array(got, "result") or mismatch(got, want))


@pytest.mark.parametrize("shape,axis,dtype", LONG_PARAMS)
def test_long_extremes_with_ties_and_nan(shape, axis, dtype):
    """cummax/cummin over long runs of ties and NaN: values (bits) and indices exact."""
    x = _extreme_values(dtype, math.prod(shape), 4).reshape(shape)
    failures = []
    for op in EXTREME_OPS:
        for label, v, ax in _long_views(x, axis):
            for a in (ax, None) if label == "plain" else (ax,):
                if msg := check_call(op, v, a, {}):
                    failures.append(f"{label}: {msg}")
    report(failures)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("rows", [1027, 70_001])
def test_extremes_of_four_interleaved_lanes(dtype, rows):
    """cummax/cummin of (N, 4) along axis 0 and of its transpose along axis 1: four
    lanes interleaved in memory, scanned a vector of rows at a time
    (kernels.simd_keys), with the results in either order; N leaves a tail of rows,
    and 70K rows are cut into chunks on two threads (each chunk's state first)."""
    x = _extreme_values(dtype, 4 * rows, 8).reshape(-1, 4)
    failures = [msg for op in EXTREME_OPS for v, a in ((x, 0), (x.T, 1), (x[5:], 0))
                if (msg := check_call(op, v, a, {}))]
    report(failures)


@pytest.mark.parametrize("shape,axis,dtype", LONG_PARAMS)
def test_long_random_within_bound(shape, axis, dtype):
    """Random values spread over many binades: sums within the reassociation bound,
    products of factors near 1, logcumsumexp of a rising trend (every element counts)."""
    r = np.random.default_rng(5)
    n = math.prod(shape)
    kind = np.dtype(dtype).kind
    if kind == "f":
        spread = np.exp2(r.integers(-6, 6, size=n)) if dtype != np.float16 else 1.0
        xs = (r.standard_normal(n) * spread).astype(dtype).reshape(shape)
        xp = (1 + (r.random(n) - 0.5) * 2e-3).astype(dtype).reshape(shape)
    else:
        xs = r.integers(-2**31, 2**31 - 1, size=n).astype(dtype).reshape(shape)
        xp = r.integers(-3, 4, size=n).astype(dtype).reshape(shape)
    xl = (np.arange(n) * (20.0 / n) + r.standard_normal(n)).astype(
        dtype if kind == "f" else np.float64).reshape(shape)
    failures = []
    for op, x, options in (("cumsum", xs, ({}, {"exclusive": True, "reverse": True})),
                           ("cumprod", xp, ({},)), ("logcumsumexp", xl, ({},))):
        for label, v, ax in _long_views(x, axis):
            for kwargs in options:
                if msg := check_call(op, v, ax, kwargs):
                    failures.append(f"{label}: {msg}")
    report(failures)


THREAD_CASES = [((1_000_003,), 0, np.float32), ((3, 400_003), 1, np.float64),
                ((4, 300_001), 1, np.float32),  # rows four at a time on one thread
                ((600_000,), 0, np.int32), ((5, 300, 7), 1, np.float16),
                ((200_003, 5), 0, np.float64)]


@pytest.mark.parametrize("shape,axis,dtype", THREAD_CASES,
                         ids=[f"{'x'.join(map(str, s))}-{np.dtype(d).name}"
                              for s, _, d in THREAD_CASES])
def test_thread_count_does_not_change_bits(shape, axis, dtype, num_threads):
    if len(num_threads.counts) < 2:
        pytest.skip("Numba has a single thread here")
    r = np.random.default_rng(6)
    n = math.prod(shape)
    if np.dtype(dtype).kind == "f":
        x = (r.standard_normal(n) * np.exp2(r.integers(-8, 12, size=n))).astype(dtype)
        near_one = (1 + (r.random(n) - 0.5) * 2e-3).astype(dtype)
        ties = _extreme_values(dtype, n, 7)
    else:
        x = near_one = r.integers(-50, 50, size=n).astype(dtype)
        ties = _extreme_values(dtype, n, 7)
    x, near_one, ties = (a.reshape(shape) for a in (x, near_one, ties))
    calls = []
    for a in (axis, None):
        calls += [("cumsum", x, a, {}), ("cumsum", x, a, {"exclusive": True, "reverse": True}),
                  ("cumprod", near_one, a, {}), ("cumprod", near_one, a, {"reverse": True}),
                  ("cummax", ties, a, {}), ("cummin", ties, a, {"index_dtype": np.int32}),
                  ("cummax", x, a, {}), ("logcumsumexp", x, a, {})]
    results = {}
    for count in num_threads.counts:
        num_threads.set(count)
        out = []
        for op, v, a, kw in calls:
            res = getattr(axisops, op)(v, a, **kw)
            out.append(tuple(res) if op in EXTREME_OPS else (res,))
        results[count] = out
    failures = []
    base = num_threads.counts[0]
    for count in num_threads.counts[1:]:
        for (op, _, a, kw), one, other in zip(calls, results[base], results[count]):
            for p, q in zip(one, other):
                if p.dtype != q.dtype or p.shape != q.shape or p.tobytes() != q.tobytes():
                    failures.append(f"{op}(x {shape} {np.dtype(dtype).name}, axis={a!r}, {kw}): "
                                    f"{base} and {count} threads differ")
    report(failures)


# ------------------------------------------------------------------- vs PyTorch

TORCH_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]


def _torch_inputs(dtype, rng):
    shape = (4, 9, 5)
    if np.dtype(dtype).kind == "b":
        yield "random", rng.random(shape) < 0.5
        yield "mostly-true", rng.random(shape) < 0.9
        return
    if np.dtype(dtype).kind in "iu":
        yield "random", rng.integers(0, 100, size=shape).astype(dtype)
        yield "ties", rng.integers(0, 3, size=shape).astype(dtype)
        return
    yield "random", rng.standard_normal(shape).astype(dtype)
    yield "ties", rng.integers(0, 3, size=shape).astype(dtype)
    nan_runs = values(dtype, shape, rng, "ties")
    nan_runs[rng.random(shape) < 0.25] = np.nan
    nan_runs[:, 3:6, :] = np.nan                   # runs of NaN
    yield "nan-runs", nan_runs
    zeros = rng.choice(np.array([-0.0, 0.0], dtype), size=shape)
    zeros[rng.random(shape) < 0.2] = -1
    yield "signed-zeros", zeros
    yield "special", values(dtype, shape, rng, "special")   # NaN, ±inf, ±0.0, numbers


@pytest.mark.parametrize("dtype", dtype_params(TORCH_DTYPES))
def test_cum_extremes_match_torch(dtype, rng):
    torch = pytest.importorskip("torch")
    failures = []
    for label, x in _torch_inputs(dtype, rng):
        for axis in (0, 1, 2, -1):
            t = torch.from_numpy(np.ascontiguousarray(x))
            for op in EXTREME_OPS:
                tv, ti = getattr(torch, op)(t, dim=axis)
                v, i = getattr(axisops, op)(x, axis)
                if not np.array_equal(i, ti.numpy()):
                    bad = tuple(int(k) for k in np.argwhere(i != ti.numpy())[0])
                    failures.append(f"{label}: {op}(axis={axis}) indices differ first at {bad}: "
                                    f"{i[bad]} vs torch {ti.numpy()[bad]}")
                elif v.dtype != tv.numpy().dtype or not np.array_equal(bits(v), bits(tv.numpy())):
                    failures.append(f"{label}: {op}(axis={axis}) values differ from torch's "
                                    f"(dtype {v.dtype} vs {tv.numpy().dtype})")
        # a transposed view of the same values
        t = torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)))
        for op in EXTREME_OPS:
            tv, ti = getattr(torch, op)(t, dim=1)
            v, i = getattr(axisops, op)(x.transpose(2, 0, 1), 1)
            if not (np.array_equal(i, ti.numpy()) and np.array_equal(bits(v), bits(tv.numpy()))):
                failures.append(f"{label}: {op} on a transposed view differs from torch")
    report(failures)


def test_logcumsumexp_matches_torch(rng):
    torch = pytest.importorskip("torch")
    inf, nan = np.inf, np.nan
    rows = [
        [-inf, -inf, -inf, 1.0, 2.0, -inf],        # -inf prefix, then numbers
        [1000.0, 1000.0, 999.0, -1000.0, 1001.0, 0.0],  # large: must stay finite
        [0.0, inf, 1.0, inf, -inf, 2.0],           # +inf and what follows it
        [1.0, nan, 2.0, -inf, inf, 3.0],           # NaN propagates
        [-inf, inf, -inf, nan, 0.0, 0.0],
        [-745.0, -746.0, -800.0, -744.0, 0.0, -1e300],
        [3.0, 3.0, 3.0, 3.0, 3.0, 3.0],            # equal finite values
    ]
    x = np.array(rows)
    r = rng.standard_normal((5, 6, 7)) * 10
    failures = []
    for label, a in (("special", x), ("special-T", x.T), ("random", r), ("large", r * 100)):
        for axis in range(a.ndim):
            want = torch.logcumsumexp(torch.from_numpy(np.ascontiguousarray(a)), dim=axis).numpy()
            got = axisops.logcumsumexp(a, axis)
            both = np.isfinite(want) & np.isfinite(got)
            ok = (got.dtype == np.float64 and got.shape == a.shape
                  and np.array_equal(np.isnan(got), np.isnan(want))
                  and np.array_equal(np.where(both | np.isnan(want), 0, got),
                                     np.where(both | np.isnan(want), 0, want))
                  and np.allclose(got[both], want[both], rtol=8e-16 * a.shape[axis], atol=0))
            if not ok:
                failures.append(f"{label} axis={axis}:\ngot\n{got}\ntorch\n{want}")
    assert np.all(np.isfinite(axisops.logcumsumexp(np.full(10, 1000.0))))
    report(failures)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_logcumsumexp_float32_and_16_match_torch(dtype, rng):
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal((6, 40)) * 4).astype(dtype)
    x[0, :5] = -np.inf
    x[1, 7] = np.inf
    x[2, 3] = np.nan
    got = axisops.logcumsumexp(x, 1)
    want = torch.logcumsumexp(torch.from_numpy(x.astype(np.float64)), dim=1).numpy().astype(dtype)
    eps = float(np.finfo(dtype).eps)
    assert got.dtype == dtype
    assert mismatch(got, want, 4 * eps * np.abs(want.astype(np.float64)) + 1e-6) is None


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_lanes_of_a_transposed_table_four_at_a_time(dtype, rng):
    # rows of an F-ordered table are one-lane groups side by side in memory, scanned
    # four at a time (kernels.scan._quad_groups_scan, the extreme kernel's twin);
    # a last quad of fewer than four lanes goes lane by lane. Bits and indices exact.
    failures = []
    for groups, n in [(4, 1000), (6, 7), (9, 300)]:
        x = rng.integers(-3, 4, (n, groups)).astype(dtype)  # ties
        if x.dtype.kind == "f":
            x[rng.random(x.shape) < 0.05] = np.nan
        t = x.T  # (groups, n), F-ordered
        for op, kwargs in [("cumsum", {}), ("cumsum", {"exclusive": True}),
                           ("cumprod", {}), ("cummax", {}), ("cummin", {})]:
            v = np.clip(t, -1, 1) if op == "cumprod" else t
            if msg := check_call(op, v, 1, kwargs):
                failures.append(f"{groups} lanes: {msg}")
    report(failures)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logcumsumexp_never_falls_below_its_element_nor_its_last_value(dtype, rng):
    # the blocks' exps and logs are an ulp off, and a log of an exp once put
    # 0 - 2.8e-17 after a 0 (hypothesis found it): held at or above both, as the
    # step rule max + log1p(..) is by construction. One lane and many side by side.
    x = np.zeros(75, dtype)
    x[1] = 0.203125
    y = axisops.logcumsumexp(x)
    assert y.dtype == dtype and y.shape == x.shape and y[0] == 0.0
    for _ in range(40):
        n = int(rng.integers(64, 300))
        a = (rng.choice([0.0, 0.203125, -1.5, 3.25, 1e-3], n)
             * rng.integers(0, 2, n)).astype(dtype)
        for b, axis in ((a, 0), (np.tile(a[:, None], (1, 20)), 0)):
            y = axisops.logcumsumexp(b, axis)
            assert y.dtype == dtype and y.shape == b.shape
            assert np.all(y >= b) and np.all(np.diff(y, axis=axis) >= 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logcumsumexp_of_many_lanes_side_by_side_matches_torch(dtype, rng):
    # 16 lanes or more along another axis take a step of every lane at once
    # (kernels.scan._rows_logaddexp: SIMD exp and log, the rules as selects, a step
    # whose exp would be subnormal by the C library's). Against torch in float64:
    # NaN, infinities and the subnormal steps exact, the rest within the serial
    # steps' bound.
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((300, 40)) * 30
    x[5, 0] = np.nan                  # NaN from there on
    x[7, 1] = np.inf                  # inf from there on
    x[:, 2] = np.inf                  # equal infinities
    x[:, 3] = -np.inf                 # -inf throughout
    x[:50, 4] = -np.inf               # then numbers
    x[:, 5] = 0.0
    x[1::2, 5] = -720.0               # exp(-720) is subnormal: 0 + 1.4e-313, not 0
    x[:, 6] = np.linspace(-700, 700, 300)
    x = x.astype(dtype)
    for a, axis in ((x, 0), (x[::-1], 0), (np.ascontiguousarray(x.T).T, 0)):
        got = axisops.logcumsumexp(a, axis)
        want = torch.logcumsumexp(torch.from_numpy(np.ascontiguousarray(a).astype(np.float64)),
                                  dim=axis).numpy().astype(dtype)
        assert got.dtype == dtype and got.shape == a.shape
        fin = np.isfinite(want)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
        if dtype == np.float64:
            assert np.array_equal(got[:, 5], want[:, 5])  # the subnormal steps
        scale = 1 + np.max(np.abs(a[np.isfinite(a)]).astype(np.float64))
        eps = float(np.finfo(dtype).eps)
        tol = (2 * eps * np.abs(want[fin]) + (a.shape[axis] + 2) * np.finfo(np.float64).eps * scale)
        assert np.all(np.abs(got[fin] - want[fin]) <= tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_long_logcumsumexp_lanes_in_blocks_match_torch(dtype, rng):
    # a lane of 64 steps or more goes in blocks from the block's greatest value
    # (kernels.scan._lane_logaddexp); blocks holding NaN or an infinity, or starting
    # from one, go step by step. Against torch in float64: non-finite outputs exact,
    # finite ones within the serial steps' bound.
    torch = pytest.importorskip("torch")
    n = 1000
    x = rng.standard_normal((6, n)) * 30
    x[0, :150] = -np.inf            # -inf blocks, then numbers
    x[1, 400] = np.inf              # +inf in a later block: inf from there on
    x[2, 130] = np.nan              # NaN from there on
    x[3] = np.linspace(-700, 700, n)  # rising: every block takes over
    x[4, ::2] = -float(np.finfo(dtype).max) / 10  # huge gaps
    x[5, 64:128] = -np.inf          # one whole -inf block in the middle
    x = x.astype(dtype)
    for a, axis in ((x, 1), (x.T, 0), (x[:, ::-1], 1), (x[2:4].reshape(-1), 0)):
        got = axisops.logcumsumexp(a, axis)
        want = torch.logcumsumexp(torch.from_numpy(np.ascontiguousarray(a).astype(np.float64)),
                                  dim=axis).numpy()
        assert got.dtype == dtype and got.shape == a.shape
        fin = np.isfinite(want)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
        scale = 1 + np.max(np.abs(a[np.isfinite(a)]).astype(np.float64))
        eps = float(np.finfo(dtype).eps)
        tol = (2 * eps * np.abs(want[fin]) + (a.shape[axis] + 2) * np.finfo(np.float64).eps * scale)
        assert np.all(np.abs(got[fin] - want[fin]) <= tol)

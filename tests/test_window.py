"""unfold and fold (sliding windows) against the NumPy oracle, PyTorch and the convolution.

Every edge case of ``tests/cases.py`` in float32, float64, float16, int32, uint8,
bool and int64 (the dtypes the rest of the suite already compiles) is read as an
``(N, C, *spatial)`` batch and as an unbatched ``(C, *spatial)`` input of 1, 2 or 3
spatial dims, channels first and last, with several kernels, dilations, strides and
symmetric or asymmetric paddings (also ones that do not fit: both sides must raise).
``unfold`` must equal ``reference.unfold`` bit for bit; ``fold`` of its result and of
fresh columns (also as non-contiguous views) must equal ``reference.fold``, which
adds in the same order (increasing kernel index, from 0), so floats are exact too.
No input may change.

Then: equality with ``torch.nn.functional.unfold``/``fold`` in 2-D; the convolution
identity in 1-D and 3-D (the columns times the flattened weights equal
``torch.nn.functional.conv1d``/``conv3d``, or a direct loop without torch); known
small results; float16 accumulation in float32, integer wrap-around, bool or; empty
batches and channels; every error, with ``ValueError`` messages that say what was
expected; bit-identical results for 1, 2 and all threads. Hypothesis checks
``fold(unfold(x)) == x * fold(unfold(ones))`` and fuzzes all four functions
(``grad.unfold`` and ``grad.fold`` included) against the reference.
"""
from __future__ import annotations

import itertools
import math
import re
import zlib

import numpy as np
import pytest
from cases import (
    cases,
    changed,
    compare_outcomes,
    mismatch,
    outcome,
    result_problem,
    same_bits,
    snapshot,
    values,
)

import axisops
from axisops import reference as ref

#: The dtypes these tests use (each new dtype costs the suite a compilation).
DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int32, np.uint8,
                                     np.bool_, np.int64))


# ------------------------------------------------------------------- comparisons

def same_values(got, want):
    """As :func:`same_bits`, but -0.0 equals 0.0 (a sum may start from 0 or not)."""
    return result_problem(got) or mismatch(got, want)


def _describe(op, args, kwargs):
    parts = [f"{a.dtype} {a.shape} strides={a.strides}" if isinstance(a, np.ndarray) else repr(a)
             for a in args]
    parts += [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{op}({', '.join(parts)})"


def _function(module, op):
    obj = module
    for part in op.split("."):
        obj = getattr(obj, part)
    return obj


def check_call(op, *args, exact=same_bits, **kwargs):
    """Compare ``axisops.<op>`` with ``reference.<op>`` (*op* may be ``"grad.fold"``).

    Both must raise alike, or return equal results by *exact*; no array argument may
    change. Returns ``(message or None, the reference's outcome)``.
    """
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    before = [snapshot(a) for a in arrays]
    want = outcome(_function(ref, op), *args, **kwargs)
    got = outcome(_function(axisops, op), *args, **kwargs)
    msg = compare_outcomes(got, want)
    if msg is None and want[0] == "ok":
        msg = exact(got[1], want[1])
    for a, b in zip(arrays, before):
        msg = msg or changed(a, b)
    return (None if msg is None else f"{_describe(op, args, kwargs)}: {msg}"), want


def report(failures, limit=25):
    if failures:
        more = f"\n... and {len(failures) - limit} more" if len(failures) > limit else ""
        pytest.fail(f"{len(failures)} failing calls:\n" + "\n".join(failures[:limit]) + more)


def rng_for(name, salt):
    return np.random.default_rng([zlib.crc32(f"{name}/{salt}".encode()), 11])


def window_params(d):
    """Keyword arguments for a *d*-D window: ints, tuples and lists; symmetric and
    ``(begin, end)`` padding; some do not fit small inputs (then both sides raise)."""
    yield {"kernel_size": (1,) * d}
    yield {"kernel_size": 2 if d == 2 else (2,) * d, "stride": 2, "padding": 1}
    yield {"kernel_size": (3, 2, 1)[:d], "dilation": 2, "stride": (1, 2, 3)[:d],
           "padding": ((0, 1), (2, 0), (1, 1))[:d]}
    yield {"kernel_size": [2] * d, "dilation": [1, 2, 1][:d], "padding": [1, 0, 2][:d]}


def layouts(x):
    """``(d, channels_last)`` for which *x* (``d + 2`` or ``d + 1`` dims) is an input."""
    for d in (1, 2, 3):
        if x.ndim in (d + 1, d + 2):
            for channels_last in (False, True):
                yield d, channels_last


def spatial_of(shape, d, channels_last):
    return tuple(shape[-d - 1:-1] if channels_last else shape[-d:])


def odd_views(c, rng):
    """*c* itself, a negative-stride view and a transposed view with its values; and a
    broadcast view of the same shape."""
    yield c
    if c.ndim:
        yield np.ascontiguousarray(c[..., ::-1])[..., ::-1]
        yield np.asfortranarray(c)
    if c.size:
        yield np.broadcast_to(values(c.dtype, c.shape[:-1] + (1,), rng), c.shape)


# --------------------------------------------------------------- vs the reference

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: t.name)
def test_unfold_and_fold_match_reference(dtype):
    """Every case of the generator as every layout it fits, with every window."""
    failures = []
    for name, x in cases(dtypes=[dtype]):
        rng = rng_for(name, "window")
        fitted = False
        for d, channels_last in layouts(x):
            fitted = True
            for kw in window_params(d):
                kw = dict(kw, channels_last=channels_last)
                msg, want = check_call("unfold", x, **kw)
                if msg:
                    failures.append(f"[{name}] {msg}")
                if want[0] != "ok":
                    continue
                size = spatial_of(x.shape, d, channels_last)
                fresh = values(dtype, want[1].shape, rng)
                for cols in itertools.chain([want[1]], odd_views(fresh, rng)):
                    msg, _ = check_call("fold", cols, size, exact=same_values, **kw)
                    if msg:
                        failures.append(f"[{name}] {msg}")
        if not fitted:  # 0-d and 1-D: no layout fits, both must raise
            for kw in itertools.chain(window_params(1), window_params(2)):
                msg, _ = check_call("unfold", x, **kw)
                if msg:
                    failures.append(f"[{name}] {msg}")
    report(failures)


def test_fold_views_and_odd_shapes_match_reference():
    """Columns with one row or column, unbatched and batched, 1-D to 3-D, each as a
    contiguous, negative-stride, Fortran-ordered and broadcast array."""
    rng = np.random.default_rng(3)
    failures = []
    setups = [((1,), (5,), {}), ((4, 1), (4, 3), {"stride": (1, 2)}),
              ((2, 2, 2), (3, 3, 4), {"padding": ((1, 0), (0, 1), (1, 1))}),
              ((3,), (0,), {"padding": ((2, 1),)}), ((2, 2), (1, 1), {"padding": 1}),
              ((1, 1, 1), (2, 1, 3), {"dilation": 3, "stride": (2, 1, 2)})]
    for kernel, size, kw in setups:
        for batch in ((), (2,)):
            for channels_last in (False, True):
                shape = batch + size + (3,) if channels_last else batch + (3,) + size
                cols_shape = ref.unfold(np.zeros(shape), kernel, channels_last=channels_last,
                                        **kw).shape
                for dtype in (np.float64, np.int32):
                    for cols in odd_views(values(dtype, cols_shape, rng), rng):
                        msg, _ = check_call("fold", cols, size, kernel, exact=same_values,
                                            channels_last=channels_last, **kw)
                        if msg:
                            failures.append(msg)
    report(failures)


def test_known_results():
    x = np.arange(1, 7, dtype=np.int64).reshape(1, 2, 3)      # N=1, C=2, 1-D of length 3
    got = axisops.unfold(x, (2,), padding=((1, 0),))
    np.testing.assert_array_equal(got, [[[0, 1, 2], [1, 2, 3], [0, 4, 5], [4, 5, 6]]])
    assert got.dtype == np.int64 and got.shape == (1, 4, 3)
    cl = axisops.unfold(np.moveaxis(x, 1, -1), (2,), padding=((1, 0),), channels_last=True)
    np.testing.assert_array_equal(cl, [[[0, 0, 1, 4], [1, 4, 2, 5], [2, 5, 3, 6]]])
    img = np.arange(16.0).reshape(1, 4, 4)                     # unbatched 2-D, C=1
    got = axisops.unfold(img, 2, stride=2)
    np.testing.assert_array_equal(got, [[0, 2, 8, 10], [1, 3, 9, 11], [4, 6, 12, 14],
                                        [5, 7, 13, 15]])
    np.testing.assert_array_equal(axisops.fold(got, 4, 2, stride=2), img)
    ones = axisops.fold(np.ones((4, 9)), (4, 4), (2, 2))
    np.testing.assert_array_equal(ones[0], [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2],
                                            [1, 2, 2, 1]])
    b = axisops.unfold(np.array([[True, False, True]]), (2,), padding=1)
    np.testing.assert_array_equal(b, [[False, True, False, True], [True, False, True, False]])
    assert b.dtype == np.bool_


def test_fold_accumulation_rules():
    """float16 adds in float32 and rounds once; integers wrap; bool is the logical or;
    the order is increasing kernel index."""
    # 1-D, kernel 64, padding 63: each of the 64 outputs is covered by all 64 offsets.
    cols = np.ones((64, 127), np.float16)
    cols[0] = 2048                     # k = 0 comes first: 2048 + 63 ones
    got = axisops.fold(cols, 64, (64,), padding=63)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.full((1, 64), 2112, np.float16))   # round(2111)
    # float32, k = 0 first: 1 then 63 times 2**-24, each lost (1 + 2**-24 rounds to 1).
    c32 = np.full((64, 127), 2.0 ** -24, np.float32)
    c32[0] = 1
    np.testing.assert_array_equal(axisops.fold(c32, 64, (64,), padding=63),
                                  np.full((1, 64), 1, np.float32))
    c32[0], c32[63] = 2.0 ** -24, 1    # k = 63 last: the small ones add up first
    want = np.float32(63 * 2.0 ** -24) + np.float32(1)
    np.testing.assert_array_equal(axisops.fold(c32, 64, (64,), padding=63), np.full((1, 64), want))
    assert want != 1
    u8 = axisops.fold(np.full((4, 9), 100, np.uint8), 4, 2)
    np.testing.assert_array_equal(u8[0], (np.array([[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2],
                                                    [1, 2, 2, 1]]) * 100 % 256).astype(np.uint8))
    assert u8.dtype == np.uint8
    i32 = axisops.fold(np.full((2, 3), 2**31 - 1, np.int32), 2, (2,), padding=1)
    np.testing.assert_array_equal(i32, [[-2, -2]])
    bits = np.zeros((2, 3), bool)
    bits[1, 0] = True                  # only the second offset of the first window
    got = axisops.fold(bits, 2, (2,), padding=1)
    np.testing.assert_array_equal(got, [[True, False]])
    assert got.dtype == np.bool_
    nan = axisops.fold(np.array([[0.0, np.inf, 1.0], [-np.inf, 0.0, 0.0]]), 2, (2,), padding=1)
    np.testing.assert_array_equal(nan, [[np.nan, 1.0]])


def test_zero_size_batches_and_channels():
    cases_ = [((0, 3, 4, 5), 2, {}, (0, 12, 12)), ((2, 0, 4, 5), 2, {}, (2, 0, 12)),
              ((0, 4), (3,), {}, (0, 2)), ((0, 4, 4, 3), 2, {"channels_last": True}, (0, 9, 12)),
              ((2, 3, 0), (1,), {"channels_last": True}, (2, 3, 0)),
              ((2, 1, 0), (1,), {"padding": 1}, (2, 1, 2))]
    for shape, kernel, kw, want in cases_:
        for dtype in (np.float32, np.int64):
            x = np.zeros(shape, dtype)
            got = axisops.unfold(x, kernel, **kw)
            assert got.shape == want and got.dtype == dtype, (shape, kernel, kw, got.shape)
            cl = kw.get("channels_last", False)
            size = spatial_of(shape, len(ref._kernel(kernel, "unfold")), cl)
            back = axisops.fold(got, size, kernel, **kw)
            assert back.shape == shape and back.dtype == dtype, (shape, kernel, kw, back.shape)
            np.testing.assert_array_equal(back, ref.fold(got, size, kernel, **kw))


def test_unbatched_and_channels_last_agree_with_batched_channels_first():
    rng = np.random.default_rng(5)
    failures = []
    for d in (1, 2, 3):
        x = values(np.float32, (2, 3) + (5, 4, 3)[:d], rng)
        for kw in window_params(d):
            cols = axisops.unfold(x, **kw)
            K = math.prod(ref._kernel(kw["kernel_size"], "unfold"))
            for i in range(2):
                if msg := same_bits(axisops.unfold(x[i], **kw), cols[i]):
                    failures.append(f"unbatched {d}-D {kw}: {msg}")
            cl = axisops.unfold(np.moveaxis(x, 1, -1), channels_last=True, **kw)
            want = np.ascontiguousarray(cols.reshape(2, 3, K, -1).transpose(0, 3, 2, 1)
                                        .reshape(cl.shape))
            if msg := same_bits(cl, want):
                failures.append(f"channels_last {d}-D {kw}: {msg}")
            size = x.shape[2:]
            back = axisops.fold(cols, size, **kw)
            back_cl = axisops.fold(cl, size, channels_last=True, **kw)
            if msg := same_values(back_cl, np.ascontiguousarray(np.moveaxis(back, 1, -1))):
                failures.append(f"fold channels_last {d}-D {kw}: {msg}")
            if msg := same_values(axisops.fold(cols[1], size, **kw), back[1]):
                failures.append(f"fold unbatched {d}-D {kw}: {msg}")
    report(failures)


# ------------------------------------------------------------------------ errors

def _x(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


#: (function, args, kwargs, exception, a pattern the message must match)
ERRORS = [
    # x's number of dimensions: d + 2 or d + 1
    ("unfold", (_x(5, 6), 2), {}, ValueError, r"dim|\(N"),
    ("unfold", (_x(1, 2, 3, 4, 5), (2, 2)), {}, ValueError, r"dim|\(N"),
    ("unfold", (_x(4), (2,)), {}, ValueError, r"dim|\(N"),
    ("unfold", (_x(2, 3, 4), (2,)), {"channels_last": True}, None, None),   # fine: (N, S, C)
    ("unfold", (np.zeros((1, 3, 3), np.clongdouble), 2), {}, TypeError, r"complex"),
    # kernel_size
    ("unfold", (_x(1, 4, 4), 0), {}, ValueError, r"kernel_size"),
    ("unfold", (_x(1, 4, 4), ()), {}, ValueError, r"kernel_size"),
    ("unfold", (_x(1, 1, 4, 4, 4, 4), (2, 2, 2, 2)), {}, ValueError, r"kernel_size"),
    ("unfold", (_x(1, 4, 4), (2, -1)), {}, ValueError, r"kernel_size"),
    ("unfold", (_x(1, 4, 4), (2, 2.0)), {}, TypeError, r"kernel_size"),
    ("unfold", (_x(1, 4, 4), 2.0), {}, TypeError, r"kernel_size"),
    ("unfold", (_x(1, 4, 4), None), {}, TypeError, r"kernel_size"),
    ("unfold", (_x(1, 4, 4), "22"), {}, TypeError, r"kernel_size"),
    # dilation, stride: an int or d ints >= 1
    ("unfold", (_x(1, 4, 4), 2), {"dilation": 0}, ValueError, r"dilation"),
    ("unfold", (_x(1, 4, 4), 2), {"dilation": (1, 2, 1)}, ValueError, r"dilation"),
    ("unfold", (_x(1, 4, 4), 2), {"dilation": 1.5}, ValueError, r"dilation"),
    ("unfold", (_x(1, 4, 4), 2), {"stride": 0}, ValueError, r"stride"),
    ("unfold", (_x(1, 4, 4), 2), {"stride": (1,)}, ValueError, r"stride"),
    ("unfold", (_x(1, 4, 4), 2), {"stride": (1, -1)}, ValueError, r"stride"),
    # padding: an int, d ints or d (begin, end) pairs, >= 0
    ("unfold", (_x(1, 4, 4), 2), {"padding": -1}, ValueError, r"padding"),
    ("unfold", (_x(1, 4, 4), 2), {"padding": (1, 2, 3)}, ValueError, r"padding"),
    ("unfold", (_x(1, 4, 4), 2), {"padding": ((1, 2), (3,))}, ValueError, r"padding"),
    ("unfold", (_x(1, 4, 4), 2), {"padding": ((1, 2), (3, 4, 5))}, ValueError, r"padding"),
    ("unfold", (_x(1, 4, 4), 2), {"padding": ((1, -1), (0, 0))}, ValueError, r"padding"),
    ("unfold", (_x(1, 4, 4), 2), {"padding": (1, (0, 1))}, ValueError, r"padding"),
    ("unfold", (_x(1, 4, 4), 2), {"padding": ((1, 1),)}, ValueError, r"padding"),
    ("unfold", (_x(1, 4, 4), 2), {"padding": 0.5}, ValueError, r"padding"),
    # the dilated kernel (3 * 3 + 1 = 10) is larger than the padded size (5 + 2 = 7)
    ("unfold", (_x(1, 1, 5, 8), (4, 3)), {"dilation": (3, 1), "padding": ((1, 1), (0, 0))},
     ValueError, r"(?s)(?=.*\b7\b)(?=.*\b10\b)"),
    ("unfold", (_x(8, 5, 1), (3, 4)), {"dilation": (1, 3), "padding": ((0, 0), (2, 0)),
                                       "channels_last": True}, ValueError,
     r"(?s)(?=.*\b7\b)(?=.*\b10\b)"),
    # fold: K = 6, L = 9 for a (2, 3) kernel on (4, 5)
    ("fold", (_x(1, 12, 9), (4, 5), (2, 3)), {}, None, None),
    ("fold", (_x(12, 9), (4, 5), (2, 3)), {}, None, None),
    ("fold", (_x(1, 12, 10), (4, 5), (2, 3)), {}, ValueError, r"\b9\b"),
    ("fold", (_x(12, 8), (4, 5), (2, 3)), {}, ValueError, r"\b9\b"),
    ("fold", (_x(1, 13, 9), (4, 5), (2, 3)), {}, ValueError, r"\b6\b"),
    ("fold", (_x(1, 10, 12), (4, 5), (2, 3)), {"channels_last": True}, ValueError, r"\b9\b"),
    ("fold", (_x(1, 9, 13), (4, 5), (2, 3)), {"channels_last": True}, ValueError, r"\b6\b"),
    ("fold", (_x(108), (4, 5), (2, 3)), {}, ValueError, r"\b9\b"),
    ("fold", (_x(1, 1, 12, 9), (4, 5), (2, 3)), {}, ValueError, r"\b9\b"),
    ("fold", (_x(1, 12, 9), -1, (2, 3)), {}, ValueError, r"output_size"),
    ("fold", (_x(1, 12, 9), (4,), (2, 3)), {}, ValueError, r"output_size"),
    ("fold", (_x(1, 12, 9), (4, 5, 6), (2, 3)), {}, ValueError, r"output_size"),
    ("fold", (_x(1, 12, 9), (4, -5), (2, 3)), {}, ValueError, r"output_size"),
    ("fold", (_x(1, 12, 9), 4.5, (2, 3)), {}, ValueError, r"output_size"),
    ("fold", (_x(1, 12, 9), (4, 5), (2, 3, 1, 1)), {}, ValueError, r"kernel_size"),
    ("fold", (_x(1, 12, 9), (4, 5), (2, 3.0)), {}, TypeError, r"kernel_size"),
    ("fold", (_x(1, 12, 9), (4, 5), (2, 3)), {"stride": 0}, ValueError, r"stride"),
    ("fold", (_x(1, 12, 9), (4, 5), (2, 3)), {"dilation": (1, 1, 1)}, ValueError, r"dilation"),
    ("fold", (_x(1, 12, 9), (4, 5), (2, 3)), {"padding": ((0, 0),)}, ValueError, r"padding"),
    ("fold", (_x(1, 4, 1), (2, 2), 3), {}, ValueError, r"(?s)(?=.*\b2\b)(?=.*\b3\b)"),
    ("fold", (_x(1, 6, 1), (2, 2), (2, 3)), {"padding": ((0, 0), (0, 0))}, ValueError,
     r"(?s)(?=.*\b2\b)(?=.*\b3\b)"),
    ("fold", (np.zeros((1, 12, 9), np.clongdouble), (4, 5), (2, 3)), {}, TypeError, r"complex"),
]


def test_errors():
    """Each bad argument alone raises the decided exception (the reference too), and a
    ``ValueError`` says what was expected; the neighbouring good calls return."""
    failures = []
    for op, args, kw, exc, pattern in ERRORS:
        label = _describe(op, args, kw)
        for module in (axisops, ref):
            who = "axisops" if module is axisops else "reference"
            kind, got = outcome(getattr(module, op), *args, **kw)
            if exc is None:
                if kind != "ok":
                    failures.append(f"{who} {label}: raised {type(got).__name__}({got})")
            elif kind == "ok" or type(got) is not exc:
                what = "returned" if kind == "ok" else f"raised {type(got).__name__}({got})"
                failures.append(f"{who} {label}: {what}, expected {exc.__name__}")
            elif not re.search(pattern, str(got)):
                failures.append(f"{who} {label}: message {str(got)!r} does not match {pattern!r}")
    report(failures, limit=60)


# ------------------------------------------------------------------------ threads

def test_results_do_not_depend_on_threads(num_threads):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 8, 37, 29)).astype(np.float32)
    x3 = rng.standard_normal((2, 9, 11, 10, 3)).astype(np.float32)
    kw = {"kernel_size": 3, "padding": 1}
    kw3 = {"kernel_size": (2, 3, 2), "stride": (1, 2, 1), "dilation": (2, 1, 1),
           "padding": ((1, 0), (2, 1), (0, 1)), "channels_last": True}
    cols = axisops.unfold(x, **kw)
    cols3 = ref.unfold(x3, **kw3)
    calls = [("unfold 2-D", lambda: axisops.unfold(x, **kw)),
             ("fold 2-D", lambda: axisops.fold(cols, (37, 29), **kw)),
             ("fold 2-D unbatched", lambda: axisops.fold(cols[1], (37, 29), **kw)),
             ("unfold 3-D", lambda: axisops.unfold(x3, **kw3)),
             ("fold 3-D", lambda: axisops.fold(cols3, (9, 11, 10), **kw3)),
             ("fold int64", lambda: axisops.fold(cols3.astype(np.int64), (9, 11, 10), **kw3))]
    results = {}
    for count in num_threads.counts:
        num_threads.set(count)
        results[count] = [[f() for _ in range(2)] for _, f in calls]
    failures = []
    base = num_threads.counts[0]
    wants = [ref.unfold(x, **kw), ref.fold(cols, (37, 29), **kw), None, cols3,
             ref.fold(cols3, (9, 11, 10), **kw3), None]
    for (label, _), runs, want in zip(calls, results[base], wants):
        if want is not None and (msg := same_values(runs[0], want)):
            failures.append(f"{label} vs reference: {msg}")
    for count, res in results.items():
        for (label, _), runs, base_runs in zip(calls, res, results[base]):
            for run, got in enumerate(runs):
                if got.tobytes() != base_runs[0].tobytes():
                    failures.append(f"{label}: {count} threads, run {run} differ from "
                                    f"{base} thread(s)")
    report(failures)


# ------------------------------------------------------------------ torch and conv

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda t: np.dtype(t).name)
def test_2d_equals_torch(dtype):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(9)
    failures = []
    for batch in ((2,), ()):
        x = values(dtype, batch + (3, 7, 6), rng)
        for ks, dil, pad, step in itertools.product([2, (3, 1), (1, 4)], [1, (2, 1)],
                                                  [0, (1, 2)], [1, (2, 3)]):
            kw = {"dilation": dil, "padding": pad, "stride": step}
            want = F.unfold(torch.from_numpy(x), ks, **kw).numpy()
            got = axisops.unfold(x, ks, **kw)
            if msg := same_bits(got, want):
                failures.append(f"unfold {batch + (3, 7, 6)} {ks} {kw}: {msg}")
            cols = values(dtype, want.shape, rng)
            want = F.fold(torch.from_numpy(cols), (7, 6), ks, **kw).numpy()
            if msg := same_values(axisops.fold(cols, (7, 6), ks, **kw), want):
                failures.append(f"fold {cols.shape} {ks} {kw}: {msg}")
    report(failures)


def direct_conv(x, w, stride, dilation, pads):
    """``y[n, o, *p] = sum_{c, *q} x_pad[n, c, *(p*stride + q*dilation)] * w[o, c, *q]``."""
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(pads))
    kernel = w.shape[2:]
    out_sizes = tuple((s - dl * (k - 1) - 1) // st + 1
                      for s, k, st, dl in zip(xp.shape[2:], kernel, stride, dilation))
    y = np.zeros(x.shape[:1] + w.shape[:1] + out_sizes)
    for p in np.ndindex(*out_sizes):
        for q in np.ndindex(*kernel):
            src = tuple(a * st + b * dl for a, b, st, dl in zip(p, q, stride, dilation))
            y[(slice(None), slice(None)) + p] += xp[(slice(None), slice(None)) + src] @ \
                w[(slice(None), slice(None)) + q].T
    return y


def torch_conv(x, w, stride, dilation, pads):
    torch = pytest.importorskip("torch")
    conv = {3: torch.nn.functional.conv1d, 5: torch.nn.functional.conv3d}[x.ndim]
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(pads))  # asymmetric pads: pad first
    return conv(torch.from_numpy(xp), torch.from_numpy(w), stride=stride,
                dilation=dilation).numpy()


@pytest.mark.parametrize("d", [1, 3])
def test_convolution_identity(d):
    """Columns times flattened weights is the convolution (channels first and last)."""
    try:
        import torch  # noqa: F401
        conv = torch_conv
    except ImportError:
        conv = direct_conv
    rng = np.random.default_rng(10 + d)
    failures = []
    settings_ = [((3,), (1,), (1,), ((0, 0),)), ((2,), (2,), (3,), ((2, 1),)),
                 ((3,), (1,), (2,), ((1, 1),))] if d == 1 else \
        [((2, 2, 2), (1, 1, 1), (1, 1, 1), ((0, 0),) * 3),
         ((3, 1, 2), (2, 1, 3), (1, 2, 1), ((1, 0), (0, 2), (1, 1))),
         ((2, 3, 1), (1, 2, 1), (2, 1, 1), ((1, 1), (0, 0), (2, 0)))]
    spatial = (11,) if d == 1 else (6, 5, 7)
    x = rng.standard_normal((2, 3) + spatial)
    for kernel, stride, dilation, pads in settings_:
        w = rng.standard_normal((4, 3) + kernel)
        kw = {"dilation": dilation, "stride": stride, "padding": pads}
        want = conv(x, w, stride, dilation, pads)
        cols = axisops.unfold(x, kernel, **kw)                       # (N, C*K, L)
        got = (w.reshape(4, -1) @ cols).reshape(want.shape)
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            failures.append(f"{d}-D {kernel} {kw}: max error {np.abs(got - want).max()}")
        cl = axisops.unfold(np.moveaxis(x, 1, -1), kernel, channels_last=True, **kw)  # (N, L, K*C)
        w_cl = np.moveaxis(w, 1, -1).reshape(4, -1)                   # (O, K*C)
        got = np.moveaxis((cl @ w_cl.T).reshape((2,) + want.shape[2:] + (4,)), -1, 1)
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            failures.append(f"{d}-D channels_last {kernel} {kw}: "
                            f"max error {np.abs(got - want).max()}")
    report(failures)


def test_direct_conv_is_a_convolution():
    """The fallback oracle of the identity test agrees with torch where torch exists."""
    pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    x, w = rng.standard_normal((2, 3, 9)), rng.standard_normal((4, 3, 3))
    args = ((2,), (2,), ((1, 2),))
    np.testing.assert_allclose(direct_conv(x, w, *args), torch_conv(x, w, *args), rtol=1e-12)


# ------------------------------------------------------------------- Hypothesis

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

PROPERTY = settings(max_examples=40, deadline=None)
FUZZ = settings(max_examples=80, deadline=None)


@st.composite
def windows(draw):
    """A window that fits: ``(x_shape, kwargs, spatial)``, batched or not, either layout."""
    d = draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(d))
    dilation = tuple(draw(st.integers(1, 3)) for _ in range(d))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(d))
    pads = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(d))
    smallest = [max(0, dl * (k - 1) + 1 - pb - pe) for k, dl, (pb, pe) in zip(kernel, dilation,
                                                                             pads)]
    spatial = tuple(draw(st.integers(lo, lo + 4 - d)) for lo in smallest)
    padding = pads
    if all(b == e for b, e in pads) and draw(st.booleans()):
        padding = tuple(b for b, _ in pads)                  # symmetric: one int per dim
    channels_last = draw(st.booleans())
    c = draw(st.integers(0, 3))
    batch = draw(st.sampled_from([(), (1,), (2,), (0,)]))
    shape = batch + (spatial + (c,) if channels_last else (c,) + spatial)
    kw = {"kernel_size": kernel if d != 2 or draw(st.booleans()) else list(kernel),
          "dilation": dilation, "padding": padding, "stride": stride,
          "channels_last": channels_last}
    return shape, kw, spatial


@PROPERTY
@given(windows(), st.data())
def test_fold_of_unfold_is_x_times_overlap_count(setup, data):
    shape, kw, spatial = setup
    dtype = data.draw(st.sampled_from([np.int64, np.float64]))
    x = data.draw(hnp.arrays(dtype, shape, elements=st.integers(-50, 50)))
    before = snapshot(x)
    count = axisops.fold(axisops.unfold(np.ones(shape, dtype), **kw), spatial, **kw)
    got = axisops.fold(axisops.unfold(x, **kw), spatial, **kw)
    assert changed(x, before) is None
    msg = same_values(got, x * count)
    assert msg is None, f"{shape} {kw}: {msg}"
    assert count.shape == shape and count.dtype == dtype


_INTS = st.integers(-1, 4)
_ARG = st.one_of(_INTS, st.lists(_INTS, max_size=4).map(tuple), st.lists(_INTS, max_size=4),
                 st.sampled_from([1.5, None, "2", (2, 1.5), (None,)]))
_PAD = st.one_of(_ARG, st.lists(st.lists(st.integers(-1, 2), min_size=1, max_size=3).map(tuple),
                                max_size=4).map(tuple),
                 st.sampled_from([(1, (0, 1)), ((1, 1), 0), ((0, 1), (1, None))]))


@st.composite
def any_array(draw, shape=None):
    dtype = draw(st.sampled_from(DTYPES + (np.dtype(np.complex128),)))
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4))
    x = draw(hnp.arrays(dtype, shape, elements=st.integers(-3, 3).map(
        lambda v: bool(v % 2) if dtype.kind == "b" else abs(v) if dtype.kind == "u" else v)))
    if x.ndim >= 2 and draw(st.booleans()):
        x = np.ascontiguousarray(np.swapaxes(x, 0, -1)).swapaxes(0, -1)
    return x


@st.composite
def window_arg(draw, d, low, high, pairs=False):
    """Mostly a well-formed per-dim argument for *d* dims (an int, a tuple, a list, or
    ``(begin, end)`` pairs), sometimes out of range or of another length, and one time
    in sixteen anything at all."""
    if draw(st.integers(0, 15)) == 0:
        return draw(_PAD if pairs else _ARG)
    form = draw(st.sampled_from(["int", "tuple", "list"] + ["pairs"] * pairs))
    n = d if draw(st.integers(0, 15)) else draw(st.integers(0, 4))
    ints = st.integers(low - (draw(st.integers(0, 15)) == 0), high)
    if form == "int":
        return draw(ints)
    if form == "pairs":
        return tuple((draw(ints), draw(ints)) for _ in range(n))
    items = [draw(ints) for _ in range(n)]
    return tuple(items) if form == "tuple" else items


@FUZZ
@given(st.data())
def test_fuzz_matches_reference_or_raises(data):
    """Arbitrary arguments: each function returns what the reference returns or raises
    ``TypeError``/``ValueError`` exactly where the reference raises."""
    op = data.draw(st.sampled_from(["unfold", "fold", "grad.unfold", "grad.fold"]))
    d = data.draw(st.integers(1, 3))
    kernel = data.draw(window_arg(d, 1, 3))
    if d != 2 and isinstance(kernel, int) and data.draw(st.integers(0, 3)):
        kernel = (kernel,) * d                       # an int kernel means 2-D
    kw = {"dilation": data.draw(window_arg(d, 1, 2)), "stride": data.draw(window_arg(d, 1, 3)),
          "padding": data.draw(window_arg(d, 0, 2, pairs=True))}
    kw = {k: v for k, v in kw.items() if data.draw(st.booleans())}
    channels_last = data.draw(st.booleans())
    if channels_last or data.draw(st.booleans()):
        kw["channels_last"] = channels_last
    side = st.integers(0, 5) if data.draw(st.integers(0, 3)) == 0 else st.integers(2, 6)
    size = data.draw(st.lists(side, min_size=d, max_size=d).map(tuple))
    c = data.draw(st.integers(0, 2))
    x_shape = data.draw(st.sampled_from([(), (2,)])) + (size + (c,) if channels_last
                                                         else (c,) + size)
    if data.draw(st.integers(0, 4)) == 0:  # anything: ndim 0 to 5, sides 0 to 4
        x_shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4))
    if op in ("fold", "grad.unfold"):
        probe = outcome(ref.unfold, np.zeros(x_shape), kernel, **kw)
        shape = probe[1].shape if probe[0] == "ok" else x_shape
    else:
        shape = x_shape
    a = data.draw(any_array(shape))
    if op in ("unfold", "grad.fold"):
        args = (a, kernel)
    elif op == "fold":
        output = size if data.draw(st.integers(0, 4)) else data.draw(window_arg(d, 0, 5))
        args = (a, output, kernel)
    else:
        args = (a, x_shape, kernel)
    want = outcome(_function(ref, op), *args, **kw)
    got = outcome(_function(axisops, op), *args, **kw)
    label = _describe(op, args, kw)
    hypothesis.event(f"{op}: reference {'returned' if want[0] == 'ok' else 'raised'}")
    if got[0] == "raised":
        assert isinstance(got[1], (TypeError, ValueError)), f"{label}: raised {got[1]!r}"
        assert want[0] == "raised", f"{label}: raised {got[1]!r}, reference returned"
    else:
        assert want[0] == "ok", f"{label}: returned, reference raised {want[1]!r}"
        exact = same_bits if op in ("unfold", "grad.fold") else same_values
        msg = exact(got[1], want[1])
        assert msg is None, f"{label}: {msg}"


def test_fold_planes_and_rows_give_the_same_bits(monkeypatch):
    """fold runs plane by plane (many planes) or row by row (few): same sums, same order."""
    import axisops.window as window

    rng = np.random.default_rng(7)
    for kernel, kw in (((3, 3), dict(padding=1)),
                       ((2, 3), dict(padding=[(1, 0), (2, 1)], stride=(2, 1))),
                       ((2, 2, 2), dict(dilation=(1, 2, 1), padding=1)),
                       ((4,), dict(stride=3, padding=2))):
        size = (7,) * len(kernel)
        for channels_last in (False, True):
            x = rng.standard_normal((3, 5) + size).astype(np.float32)
            if channels_last:
                x = np.moveaxis(x, 1, -1)
            cols = axisops.unfold(x, kernel, channels_last=channels_last, **kw)
            cols = cols + rng.standard_normal(cols.shape).astype(np.float32)
            results = []
            for planes in (1, 10**9):
                monkeypatch.setattr(window, "_MIN_PLANES", planes)
                results.append(axisops.fold(cols, size, kernel, channels_last=channels_last, **kw))
            assert results[0].dtype == np.float32 and results[0].shape == x.shape
            assert np.array_equal(results[0].view(np.int32), results[1].view(np.int32))
            want = ref.fold(cols, size, kernel, channels_last=channels_last, **kw)
            assert np.allclose(results[0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_unfold_of_channels_adjacent_in_memory(dtype):
    """An (N, C, H, W) view of (N, H, W, C) memory with C >= 16: blocks of 16 planes
    unfolded from tiles of positions x channels (kernels.window._unfold_tiles),
    the planes past the last block one by one; runs with padding at either end,
    a last tile that overlaps the one before, and a stride."""
    rng = np.random.default_rng(11)
    nhwc = rng.integers(-100, 100, (2, 5, 37, 19)).astype(dtype)
    x = nhwc.transpose(0, 3, 1, 2)
    for kw in ({"padding": 1}, {"padding": (0, 2), "stride": (1, 2)}, {"dilation": 2}):
        got = axisops.unfold(x, 3, **kw)
        want = ref.unfold(x, 3, **kw)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)

"""Edge-case arrays shared by every operator family's tests.

One generator, :func:`cases`, yields named ``(name, array)`` pairs that cover what
an axis operator can get wrong: every supported dtype; NaN, ±inf, -0.0 and ties;
the extremes of each integer range; 0-d and zero-size arrays; 1-D to 5-D; and
views whose strides are not C-contiguous (transposed, Fortran-ordered, stepped,
negative-stride, broadcast with stride 0, middle slices, read-only, unaligned).
Arrays are tiny so that a test can run every case for every axis.

:func:`axes` yields every kind of valid ``axis`` argument for an ``ndim``, and
:func:`bad_axes` the invalid ones with the exception each must raise.

The checks every family needs live here too: :func:`outcome` runs a call and
keeps its result or exception, :func:`compare_outcomes` says whether two calls
raised alike, :func:`mismatch` compares value (NaN-aware, optionally within a
bound), dtype and shape, and :func:`snapshot`/:func:`changed` prove an input was
left untouched. Each returns a message (or ``None``) instead of raising, so a
test can collect every failing combination of a case and report them together.

Names are ``"<dtype>-<pattern>"`` (``"float32-special"``, ``"int8-view-negstride"``).
Tests that must skip a pattern test the pattern token: for example float sums
cannot be compared on ``"extremes"`` (overflow makes the result depend on the
order of additions), so :func:`order_sensitive` says which cases those are.

Every array comes from its own generator seeded with ``seed`` and the case's
name, so adding a pattern never changes the values of the others.

>>> import numpy as np
>>> names = [n for n, _ in cases(dtypes=[np.float32])]
>>> "float32-special" in names and "float32-view-broadcast-row" in names
True
>>> all(a.ndim <= 2 for _, a in cases(dtypes=[np.int8], max_ndim=2))
True
>>> list(axes(2, every_name=True))
[None, 0, 1, -1, -2, (), (0, 1), (-1, 0), (1, 0)]
"""
from __future__ import annotations

import itertools
import os
import zlib

import numpy as np

try:  # NumPy >= 1.25
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover
    AxisError = np.AxisError

__all__ = [
    "ALL_DTYPES", "INT_DTYPES", "FLOAT_DTYPES", "cases", "values", "axes",
    "single_axes", "bad_axes", "order_sensitive", "dtype_name",
    "outcome", "compare_outcomes", "mismatch", "snapshot", "changed", "AxisError",
    "distinct_values", "finite_difference", "CLASS_DTYPES", "case_params", "dtype_params",
]

INT_DTYPES = tuple(np.dtype(t) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64))
FLOAT_DTYPES = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))
#: Every dtype of the contract: bool, the signed and unsigned ints, the floats.
ALL_DTYPES = (np.dtype(np.bool_),) + INT_DTYPES + FLOAT_DTYPES
#: One dtype per class of the CPU kernels: the same kernel source compiled for
#: another dtype of a class adds a compilation (seconds from a cold cache) and
#: nothing new to check. The classes: bool; signed ints narrower than int64 (sums
#: and products accumulate in int64); int64; unsigned ints narrower than uint64
#: (accumulate in uint64); uint64; and each float (float16 is loaded through
#: float32, float32 and float64 have their own key maps). The other dtypes run
#: under the exhaustive switch (``AXISOPS_TEST_EXHAUSTIVE=1``, tests/conftest.py).
CLASS_DTYPES = tuple(np.dtype(t) for t in (
    np.bool_, np.int8, np.int64, np.uint16, np.uint64, np.float16, np.float32, np.float64))

#: Shapes of the plain (C-contiguous, random-valued) cases, by name.
SHAPES = {
    "0d": (),
    "1d": (7,),
    "2d": (3, 5),
    "3d": (2, 3, 4),
    "4d": (2, 1, 3, 2),
    "5d": (2, 2, 1, 3, 2),
    "empty-1d": (0,),
    "empty-2d": (3, 0),
    "empty-lead": (0, 4),
    "empty-3d": (2, 0, 3),
}


def dtype_name(dtype) -> str:
    """``"float32"``, ``"bool"``, ... (NumPy's name of *dtype*)."""
    return np.dtype(dtype).name


def _rng(seed, name):
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def values(dtype, shape, rng, kind="random"):
    """A C-contiguous array of *dtype* and *shape*.

    *kind* is ``"random"`` (small values: ints in [-5, 5] or [0, 9], floats
    ``3 * normal`` rounded to 2 decimals), ``"ties"`` (values 0, 1, 2 only),
    ``"special"`` (floats: NaN, ±inf, ±0.0 and a few numbers; other dtypes fall
    back to ``"ties"``) or ``"extremes"`` (the ends of the dtype's range mixed
    with 0, ±1; for floats also the smallest normal and subnormal numbers).
    """
    return np.array(_values(dtype, shape, rng, kind), dtype=dtype)


def _values(dtype, shape, rng, kind):
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if kind == "special" and dtype.kind != "f":
        kind = "ties"
    if dtype.kind == "b":
        if kind == "extremes":
            return np.resize(np.array([True, False, True, True]), shape).astype(bool)
        return rng.random(shape) < 0.5
    if kind == "ties":
        return rng.integers(0, 3, size=shape).astype(dtype)
    if kind == "extremes":
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            pool = [info.min, info.max, info.max - 1, 0, 1]
            if dtype.kind == "i":
                pool += [info.min + 1, -1]
        else:
            info = np.finfo(dtype)
            pool = [info.max, -info.max, info.tiny, -info.tiny,
                    info.smallest_subnormal, 0.0, 1.0, -1.0, info.eps]
        pool = np.array(pool, dtype=dtype)
        return rng.choice(pool, size=shape)
    if kind == "special":
        pool = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 2.5], dtype=dtype)
        return rng.choice(pool, size=shape)
    if kind != "random":
        raise ValueError(f"unknown kind {kind!r}")
    if dtype.kind == "i":
        return rng.integers(-5, 6, size=shape).astype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, 10, size=shape).astype(dtype)
    return np.round(rng.standard_normal(shape) * 3, 2).astype(dtype)


def _special_2d(dtype):
    """A hand-written float case: a NaN row, NaN mixed with numbers, ±inf, ±0.0."""
    nan, inf = np.nan, np.inf
    return np.array([
        [1.0, nan, 3.0, nan, -2.0],      # two NaNs: first/last NaN decide arg-ops
        [inf, -1.0, -inf, 2.0, inf],     # tied infinities
        [-0.0, 0.0, -0.0, 0.0, -0.0],    # signed zeros are equal: ties
        [nan, nan, nan, nan, nan],       # all NaN
        [-inf, -inf, 5.0, nan, -inf],    # NaN after the maximum
        [2.0, 2.0, -3.0, -3.0, 2.0],     # ties at both ends
    ], dtype=dtype)


def _unaligned(a):
    """A copy of *a* whose data pointer is not aligned to its itemsize."""
    buf = np.empty(a.nbytes + 1, dtype=np.uint8)
    out = np.frombuffer(buf[1:].data, dtype=a.dtype, count=a.size).reshape(a.shape)
    out[...] = a
    return out


def _views(dtype, rng):
    """(pattern, array) pairs whose strides are not plain C-contiguous."""
    v = lambda shape, kind="random": values(dtype, shape, rng, kind)  # noqa: E731
    yield "view-transposed", v((3, 4, 5)).transpose(2, 0, 1)
    yield "view-fortran", np.asfortranarray(v((3, 4)))
    yield "view-stepped", v((6, 9))[::2, 1::3]
    yield "view-negstride", v((4, 5, 3))[::-1, :, ::-2]
    yield "view-negstride-1d", v((9,))[::-2]
    yield "view-middle", v((4, 6, 5))[:, 1:4, :]
    yield "view-broadcast-row", np.broadcast_to(v((5,)), (4, 5))
    yield "view-broadcast-col", np.broadcast_to(v((4, 1)), (4, 5))
    yield "view-broadcast-scalar", np.broadcast_to(v(()), (3, 2, 4))
    yield "view-broadcast-middle", np.broadcast_to(v((3, 1, 2), "ties"), (3, 4, 2))
    ro = v((3, 4), "ties")
    ro.setflags(write=False)
    yield "view-readonly", ro
    if dtype.itemsize > 1:
        yield "view-unaligned", _unaligned(v((3, 4)))


def cases(dtypes=ALL_DTYPES, *, max_ndim=5, seed=0, views=True, empty=True):
    """Yield ``(name, array)`` edge cases for each dtype in *dtypes*.

    Parameters
    ----------
    dtypes : iterable of dtype-likes
        Which dtypes (default: all of the contract's).
    max_ndim : int
        Leave out arrays with more dimensions.
    seed : int
        Base seed; each case also hashes its own name into its seed.
    views : bool
        Include the non-contiguous and read-only views.
    empty : bool
        Include the zero-size arrays.
    """
    for dtype in dtypes:
        dtype = np.dtype(dtype)
        dn = dtype_name(dtype)
        out = []
        for pattern, shape in SHAPES.items():
            if empty or 0 not in shape:
                out.append((pattern, lambda r, s=shape: values(dtype, s, r)))
        out.append(("ties", lambda r: values(dtype, (4, 6), r, "ties")))
        out.append(("ties-3d", lambda r: values(dtype, (3, 2, 4), r, "ties")))
        out.append(("extremes", lambda r: values(dtype, (3, 4), r, "extremes")))
        if dtype.kind == "f":
            out.append(("special", lambda r: _special_2d(dtype)))
            out.append(("special-3d", lambda r: values(dtype, (2, 3, 4), r, "special")))
        for pattern, make in out:
            name = f"{dn}-{pattern}"
            a = make(_rng(seed, name))
            if a.ndim <= max_ndim:
                yield name, a
        if views:
            for pattern, a in _views(dtype, _rng(seed, f"{dn}-views")):
                if a.ndim <= max_ndim:
                    yield f"{dn}-{pattern}", a


def _marks(dtype) -> list:
    import pytest

    return [] if np.dtype(dtype) in CLASS_DTYPES else [pytest.mark.exhaustive]


def case_params(dtypes=ALL_DTYPES, **options) -> list:
    """:func:`cases` as pytest params ``(name, array)`` with the case's name as id;
    the cases of a dtype outside :data:`CLASS_DTYPES` are marked ``exhaustive``."""
    import pytest

    return [pytest.param(name, a, id=name, marks=_marks(a.dtype))
            for name, a in cases(dtypes, **options)]


def drawn_dtypes(dtypes) -> list:
    """The dtypes a Hypothesis strategy draws from: those of *dtypes* in
    :data:`CLASS_DTYPES`, or all of them under ``AXISOPS_TEST_EXHAUSTIVE=1`` (a draw
    of another dtype of a class adds a compilation and nothing new to check)."""
    if EXHAUSTIVE:
        return [np.dtype(d) for d in dtypes]
    return [np.dtype(d) for d in dtypes if np.dtype(d) in CLASS_DTYPES]


def dtype_params(dtypes=ALL_DTYPES) -> list:
    """*dtypes* as pytest params, those outside :data:`CLASS_DTYPES` marked
    ``exhaustive``."""
    import pytest

    return [pytest.param(np.dtype(d), id=dtype_name(d), marks=_marks(d)) for d in dtypes]


def order_sensitive(name) -> bool:
    """Whether a float sum/product of this case may depend on the order of operations.

    True for the ``"extremes"`` cases: with the largest finite values, the place
    where a partial sum or product overflows (to inf, or NaN after ``inf - inf``)
    depends on the order in which elements are combined.
    """
    return "-extremes" in name


#: The exhaustive switch (tests/conftest.py) as the environment sets it: what a
#: module-level list of cases needs to know before pytest's options are read.
EXHAUSTIVE = bool(os.environ.get("AXISOPS_TEST_EXHAUSTIVE"))


def axes(ndim, *, multi=True, every_name=EXHAUSTIVE):
    """Yield every kind of valid ``axis`` argument for an array of *ndim* dimensions.

    ``None``; each axis once, the last by its negative name (-1); and with *multi*:
    ``()``, every pair (ascending), a pair with a negative member, one in
    descending order, and the tuple of all axes when there are more than two.
    With *every_name* (the exhaustive switch), each axis by both of its names: one
    function (``normalize_axes``) maps the names, so the default names each axis once.

    >>> list(axes(0))
    [None, ()]
    >>> list(axes(2, multi=False, every_name=False))
    [None, 0, -1]
    >>> list(axes(2, multi=False, every_name=True))
    [None, 0, 1, -1, -2]
    >>> list(axes(1, every_name=False))
    [None, -1, (), (0,), (-1,)]
    >>> len(list(axes(5, every_name=True)))
    25
    """
    yield None
    if every_name:
        yield from range(ndim)
        yield from range(-1, -ndim - 1, -1)
    else:
        yield from range(ndim - 1)
        if ndim:
            yield -1
    if not multi:
        return
    yield ()
    if ndim == 1:
        yield (0,)
        yield (-1,)
    yield from itertools.combinations(range(ndim), 2)
    if ndim >= 2:
        yield (-1, 0)
        yield (ndim - 1, 0)
    if ndim >= 3:
        yield tuple(range(ndim))


def single_axes(ndim, *, none=True, every_name=EXHAUSTIVE):
    """``axis`` arguments naming at most one axis: ``None`` (if *none*) and each axis
    (see :func:`axes` for *every_name*).

    >>> list(single_axes(2, every_name=False))
    [None, 0, -1]
    """
    for axis in axes(ndim, multi=False, every_name=every_name):
        if none or axis is not None:
            yield axis


def bad_axes(ndim, *, multi=True):
    """Yield ``(axis, exception type)`` pairs that every operator must reject.

    >>> [e.__name__ for _, e in bad_axes(2)]
    ['AxisError', 'AxisError', 'TypeError', 'ValueError', 'ValueError', 'AxisError']
    """
    yield ndim, AxisError
    yield -ndim - 1, AxisError
    yield 1.0, TypeError
    if multi and ndim >= 1:
        yield (0, 0), ValueError
        yield (0, -ndim), ValueError
        yield (0, ndim), AxisError


# ------------------------------------------------------------ checks shared by tests

def outcome(fn, *args, **kwargs):
    """Call *fn*; return ``("ok", result)`` or ``("raised", exception)``."""
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as exc:
        return "raised", exc


def compare_outcomes(got, want):
    """Return ``None`` if both calls raised alike, a message otherwise.

    "Alike" means *got*'s exception is an instance of *want*'s exception type (so
    an ``AxisError`` where the reference raised ``ValueError`` is fine, since
    ``AxisError`` is a ``ValueError``, but a ``TypeError`` is not). When exactly
    one side raised, the message says which and what the other returned.
    """
    (gk, gv), (wk, wv) = got, want
    if gk == wk == "raised":
        if isinstance(gv, type(wv)):
            return None
        return f"raised {type(gv).__name__}({gv}), expected {type(wv).__name__}({wv})"
    if wk == "raised":
        return f"returned {_short(gv)}, expected {type(wv).__name__}({wv})"
    if gk == "raised":
        return f"raised {type(gv).__name__}({gv}), expected {_short(wv)}"
    return None


def _short(v):
    a = np.asarray(v) if not isinstance(v, tuple) else v
    if isinstance(a, np.ndarray):
        return f"array(shape={a.shape}, dtype={a.dtype}) {np.array2string(a, threshold=12)}"
    return repr(a)


def mismatch(got, want, bound=None):
    """Return ``None`` if *got* matches *want*, else a message saying how not.

    Shape and dtype must be equal. Values must be equal, NaN matching NaN and
    -0.0 matching 0.0 (as ``numpy.testing.assert_array_equal``), unless *bound* is
    given (an array broadcastable to *want*'s shape, or a scalar): then NaN and
    infinities must sit at the same places with the same signs, and the finite
    values may differ by at most *bound*.
    """
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return f"shape {g.shape}, expected {w.shape}"
    if g.dtype != w.dtype:
        return f"dtype {g.dtype}, expected {w.dtype}"
    if bound is None:
        if w.dtype.kind == "f":
            ok = (g == w) | (np.isnan(g) & np.isnan(w))
        else:
            ok = g == w
    else:
        gf, wf = g.astype(np.float64), w.astype(np.float64)
        with np.errstate(invalid="ignore"):
            finite = np.isfinite(wf) & np.isfinite(gf)
            diff = np.where(finite, np.abs(gf - wf), 0.0)
            ok = np.where(finite, diff <= bound,
                          (np.isnan(gf) & np.isnan(wf)) | (gf == wf))
    if np.all(ok):
        return None
    bad = np.argwhere(~np.asarray(ok))
    first = tuple(int(i) for i in bad[0])
    return (f"{len(bad)} of {w.size} values differ; first at {first}: "
            f"got {g[first]!r}, expected {w[first]!r}")


def snapshot(x):
    """What :func:`changed` compares: the bytes, shape, strides and flags of *x*."""
    return (x.tobytes(), x.shape, x.strides, x.dtype,
            x.flags.writeable, x.flags.c_contiguous, x.flags.f_contiguous)


def changed(x, before):
    """``None`` if *x* still matches ``snapshot`` *before*, else what changed."""
    after = snapshot(x)
    names = ("values", "shape", "strides", "dtype", "writeable", "c_contiguous",
             "f_contiguous")
    diffs = [n for n, a, b in zip(names, after, before) if a != b]
    return f"input modified: {', '.join(diffs)}" if diffs else None


# ------------------------------------------------------- gradient checks shared by tests

def distinct_values(rng, shape):
    """Float64 values with no ties and gaps much wider than a finite-difference step."""
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n) * 0.37 - n * 0.15 + rng.random(n) * 0.01).reshape(shape)


def finite_difference(f, x, w, h=1e-6):
    """Central differences of ``sum(w * f(x))`` with respect to every element of *x*."""
    out = np.empty_like(x)
    flat, o = x.reshape(-1), out.reshape(-1)
    for i in range(flat.size):
        xp, xm = flat.copy(), flat.copy()
        xp[i] += h
        xm[i] -= h
        o[i] = (np.sum(w * f(xp.reshape(x.shape))) - np.sum(w * f(xm.reshape(x.shape)))) / (2 * h)
    return out


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def result_problem(got):
    """``None`` if *got* is a C-contiguous ndarray (what every operator returns), else a message."""
    if type(got) is not np.ndarray:
        return f"returned a {type(got).__name__}, expected a numpy.ndarray"
    if not got.flags.c_contiguous:
        return f"result is not C-contiguous (strides {got.strides})"
    return None


def same_bits(got, want):
    """``None`` if *got* is a C-contiguous ndarray equal to *want* in shape, dtype and
    bits (any NaN matching any NaN), else a message."""
    if msg := result_problem(got) or mismatch(got, want):
        return msg
    if want.dtype.kind == "f":
        g, w = got.view(_UINT[want.itemsize]), want.view(_UINT[want.itemsize])
        differ = (g != w) & ~np.isnan(want)
        if differ.any():
            first = tuple(int(i) for i in np.argwhere(differ)[0])
            return (f"bits differ (a -0.0 for a 0.0?); first at {first}: got {got[first]!r}, "
                    f"expected {want[first]!r}")
    return None

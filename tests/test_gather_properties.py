"""Properties of the gathers and scatter that must hold for any input (Hypothesis),
and a fuzz test per public function and gradient.

Properties: gathering with ``argsort`` sorts; gathering at ``argmax`` gives the
maximum; ``scatter(..., "add")`` is ``np.add.at``; each gather's gradient is its
adjoint (``<take(x), g> == <x, grad.take(g)>``, exactly on small integers, in every
mode). The fuzz tests call each function with arbitrary shapes (0-d and zero-size
included), index values of arbitrary integer dtypes (huge, negative, uint64 above
2**63), and arbitrary axis, mode, reduce and batch_dims: the call must return or
raise ``TypeError``, ``ValueError``, ``IndexError`` or ``AxisError``; it must
raise exactly when the reference raises, and what it returns must equal the
reference's result.
"""
from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from cases import ALL_DTYPES, INT_DTYPES, AxisError, mismatch, outcome
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import axisops
from axisops import reference as ref

SETTINGS = settings(max_examples=60, deadline=None)
FUZZ = settings(max_examples=80, deadline=None)
MODES = ("raise", "wrap", "clip", "fill")
REDUCES = (None, "add", "mul", "max", "min")
ALLOWED = (TypeError, ValueError, IndexError, AxisError)
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# ------------------------------------------------------------------- strategies

def _elements(dtype, small=False):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        special = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, 2.0, -3.0])
        if small:
            return special
        return st.floats(width=8 * dtype.itemsize, allow_nan=True, allow_infinity=True) | special
    if dtype.kind == "b":
        return st.booleans()
    info = np.iinfo(dtype)
    if small:
        return st.integers(max(info.min, -3), min(info.max, 3))
    return st.integers(max(info.min, -5), min(info.max, 5)) | st.integers(info.min, info.max)


@st.composite
def arrays(draw, dtypes=ALL_DTYPES, min_dims=0, max_dims=4, max_side=4, small=False,
           elements=None, shape=None):
    """An array of one of *dtypes*, sometimes a transposed or reversed view."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0,
                                      max_side=max_side))
    if elements is None:
        elements = _elements(dtype, small)
    x = draw(hnp.arrays(dtype, shape, elements=elements))
    if x.ndim >= 2 and draw(st.booleans()):
        x = np.ascontiguousarray(np.swapaxes(x, 0, -1)).swapaxes(0, -1)
    if x.ndim and draw(st.booleans()):
        x = np.ascontiguousarray(x[::-1])[::-1]
    return x


def _index_values(dtype):
    info = np.iinfo(dtype)
    edges = [v for v in (info.min, info.max, info.max - 1, info.min + 1, 2**63, 2**63 + 7,
                         2**32 + 1, -2**31 - 1, 2**31) if info.min <= v <= info.max]
    return (st.integers(max(info.min, -6), min(info.max, 6)) | st.integers(info.min, info.max)
            | st.sampled_from(edges))


@st.composite
def index_arrays(draw, shape, dtypes=INT_DTYPES, in_range=None):
    """Indices of *shape* in an arbitrary integer dtype: mostly small values, some at the
    ends of the dtype's range; with *in_range* = n, all in ``[-n, n)`` (``[0, n)`` unsigned)."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    if in_range is not None:
        low = 0 if dtype.kind == "u" else max(-in_range, int(np.iinfo(dtype).min))
        high = min(in_range - 1, int(np.iinfo(dtype).max))
        if high < low:
            return np.zeros(shape, dtype) if 0 in tuple(shape) else None
        elements = st.integers(low, high)
    else:
        elements = _index_values(dtype)
    return draw(hnp.arrays(dtype, shape, elements=elements))


def _sizes(draw, shape, skip=None, extra=(1, 3)):
    """Sizes near *shape*: each its own, 1, one less, or one of *extra*."""
    out = []
    for d, s in enumerate(shape):
        if d == skip:
            out.append(draw(st.integers(0, 5)))
        else:
            out.append(draw(st.sampled_from([s, s, max(s - 1, 0), *extra])))
    return tuple(out)


def _fuzz_axis(draw, ndim, none=True):
    strategy = st.integers(-ndim - 1, ndim)
    return draw(st.none() | strategy if none else strategy)


# ------------------------------------------------------------------- comparisons

def same_bits(got, want):
    if type(got) is not np.ndarray:
        return f"returned a {type(got).__name__}, expected a numpy.ndarray"
    if msg := mismatch(got, want):
        return msg
    if want.dtype.kind == "f":
        g, w = got.view(_UINT[want.itemsize]), want.view(_UINT[want.itemsize])
        if np.any((g != w) & ~np.isnan(want)):
            return "bits differ (a -0.0 for a 0.0?)"
    return None


def close(got, want):
    """Gradients: dtype, shape, NaN/inf where the reference has them, and the finite
    values within a few units in the last place (sums may be associated otherwise)."""
    if type(got) is not np.ndarray:
        return f"returned a {type(got).__name__}, expected a numpy.ndarray"
    eps = float(np.finfo(want.dtype).eps) if want.dtype.kind == "f" else 0.0
    with np.errstate(all="ignore"):
        bound = 8 * eps * (np.abs(want.astype(np.float64)) + 1)
    return mismatch(got, want, bound)


def _resolve(module, op):
    f = module
    for part in op.split("."):
        f = getattr(f, part)
    return f


def _short(a):
    a = np.asarray(a) if not isinstance(a, tuple) else a
    if isinstance(a, np.ndarray):
        return f"{a.dtype} {a.shape} {np.array2string(a, threshold=20)}"
    return repr(a)


def check_fuzz(op, *args, compare=same_bits, **kwargs):
    """Run ``axisops.<op>`` and ``reference.<op>``; fail unless both return equal results,
    or both raise and axisops raised one of the allowed exception types."""
    got = outcome(_resolve(axisops, op), *args, **kwargs)
    want = outcome(_resolve(ref, op), *args, **kwargs)
    call = (f"{op}({', '.join(_short(a) for a in args)}"
            f"{''.join(f', {k}={v!r}' for k, v in kwargs.items())})")
    if got[0] == "raised":
        assert isinstance(got[1], ALLOWED), f"{call} raised {type(got[1]).__name__}: {got[1]}"
        assert want[0] == "raised", (f"{call} raised {type(got[1]).__name__}({got[1]}), "
                                     f"the reference returned {_short(want[1])}")
        return
    assert want[0] == "ok", (f"{call} returned {_short(got[1])}, the reference raised "
                             f"{type(want[1]).__name__}({want[1]})")
    pairs = zip(got[1], want[1]) if isinstance(want[1], tuple) else [(got[1], want[1])]
    if isinstance(want[1], tuple):
        assert isinstance(got[1], tuple) and len(got[1]) == len(want[1]), call
    for g, w in pairs:
        msg = compare(g, w)
        assert msg is None, f"{call}: {msg}\ngot  {_short(g)}\nwant {_short(w)}"


def _forward_shape(op, *args, **kwargs):
    """The reference forward's result shape, or None where it raises."""
    kind, value = outcome(getattr(ref, op), *args, **kwargs)
    return value.shape if kind == "ok" else None


# ---------------------------------------------------------------- properties

@SETTINGS
@given(arrays(dtypes=[np.int8, np.int64, np.uint16, np.float16, np.float32, np.float64,
                      np.bool_], min_dims=1), st.data())
def test_gather_with_argsort_sorts(x, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    order = np.argsort(x, axis=axis, kind="stable")
    got = axisops.take_along_axis(x, order, axis)
    want = np.sort(x, axis=axis, kind="stable")
    assert mismatch(got, want) is None
    if axis is None:
        assert mismatch(axisops.take(x, order), want) is None


@SETTINGS
@given(arrays(dtypes=[np.int16, np.uint32, np.float32, np.float64], min_dims=1), st.data())
def test_gather_at_argmax_is_max(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    if x.shape[axis] == 0:
        return
    with np.errstate(invalid="ignore"):
        idx = axisops.argmax(x, axis, keepdims=True)
        got = axisops.take_along_axis(x, idx, axis)
        want = np.max(x, axis=axis, keepdims=True)
        assert mismatch(got, want) is None
        if x.size:
            assert mismatch(axisops.take(x, axisops.argmax(x)), np.max(x)) is None
            assert mismatch(axisops.take(x, axisops.argmin(x)), np.min(x)) is None


@st.composite
def scatter_args(draw, dtypes, small=True):
    """(x, indices in range, updates of indices' shape, axis) for a valid scatter."""
    x = draw(arrays(dtypes=dtypes, min_dims=1, small=small))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    ax = axis % x.ndim
    n = x.shape[ax]
    shape = tuple(draw(st.integers(0, 7 if n else 0)) if d == ax else draw(st.integers(0, s))
                  for d, s in enumerate(x.shape))
    indices = draw(index_arrays(shape, dtypes=[np.int64, np.int8, np.uint32], in_range=n))
    if indices is None:
        indices = np.zeros(shape, np.int64)
    updates = draw(arrays(dtypes=[x.dtype], small=small, shape=shape))
    return x, indices, updates, axis


@SETTINGS
@given(scatter_args(dtypes=[np.float64, np.int64], small=False))
def test_scatter_add_is_add_at(args):
    x, indices, updates, axis = args
    ax = axis % x.ndim
    x = np.zeros(x.shape, x.dtype)
    where = tuple(indices.astype(np.int64) % x.shape[ax] if d == ax
                  else np.broadcast_to(np.arange(s).reshape([-1 if k == d else 1
                                                             for k in range(x.ndim)]),
                                       indices.shape)
                  for d, s in enumerate(indices.shape))
    want = x.copy()
    with np.errstate(all="ignore"):
        np.add.at(want, where, updates)
        got = axisops.scatter(x, indices, updates, axis, reduce="add")
    assert same_bits(got, want) is None


_INT_FLOATS = st.integers(-20, 20).map(float)


@SETTINGS
@given(arrays(dtypes=[np.float64], max_dims=3, elements=_INT_FLOATS), st.data())
def test_grad_take_is_the_adjoint(x, data):
    """<take(x), g> == <x, grad.take(g)> exactly (small integers), in every mode."""
    axis = data.draw(st.none() | (st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()))
    mode = data.draw(st.sampled_from(MODES))
    n = x.size if axis is None else x.shape[axis]
    ishape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    spread = 2 * n + 2 if mode != "raise" else n
    indices = data.draw(hnp.arrays(np.int64, ishape, elements=st.integers(
        -spread, max(spread - 1, -spread))))
    kind, y = outcome(axisops.take, x, indices, axis, mode=mode)
    if kind == "raised":
        assert isinstance(y, IndexError)
        return
    g = data.draw(hnp.arrays(np.float64, y.shape, elements=_INT_FLOATS))
    dx = axisops.grad.take(g, indices, x.shape, axis, mode=mode)
    assert dx.shape == x.shape and dx.dtype == np.float64
    assert np.sum(y * g) == np.sum(x * dx)


@SETTINGS
@given(arrays(dtypes=[np.float64], min_dims=1, max_dims=3, elements=_INT_FLOATS), st.data())
def test_grad_take_along_axis_is_the_adjoint(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    ax = axis % x.ndim
    n = x.shape[ax]
    mode = data.draw(st.sampled_from(MODES))
    shape = tuple(data.draw(st.integers(0, 4)) if d == ax else
                  data.draw(st.sampled_from([s, 1, max(s - 1, 0), 3 if s == 1 else s]))
                  for d, s in enumerate(x.shape))
    spread = 2 * n + 2 if mode != "raise" else n
    indices = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(
        -spread, max(spread - 1, -spread))))
    kind, y = outcome(axisops.take_along_axis, x, indices, axis, mode=mode)
    if kind == "raised":
        assert isinstance(y, (IndexError, ValueError))
        return
    g = data.draw(hnp.arrays(np.float64, y.shape, elements=_INT_FLOATS))
    dx = axisops.grad.take_along_axis(g, indices, x.shape, axis, mode=mode)
    assert dx.shape == x.shape and dx.dtype == np.float64
    assert np.sum(y * g) == np.sum(x * dx)


@SETTINGS
@given(arrays(dtypes=[np.float64], min_dims=1, max_dims=4, elements=_INT_FLOATS), st.data())
def test_grad_gather_nd_is_the_adjoint(x, data):
    b = data.draw(st.integers(0, min(1, x.ndim - 1)))
    q = data.draw(st.integers(1, x.ndim - b))
    lead = x.shape[:b] + data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0,
                                                     max_side=3))
    dims = x.shape[b:b + q]
    if 0 in dims and 0 not in lead:
        return  # no valid index tuple exists
    comps = [data.draw(hnp.arrays(np.int64, lead, elements=st.integers(-d, max(d - 1, -d))))
             for d in dims]
    indices = np.stack(comps, axis=-1)
    y = axisops.gather_nd(x, indices, batch_dims=b)
    g = data.draw(hnp.arrays(np.float64, y.shape, elements=_INT_FLOATS))
    dx = axisops.grad.gather_nd(g, indices, x.shape, batch_dims=b)
    assert dx.shape == x.shape and dx.dtype == np.float64
    assert np.sum(y * g) == np.sum(x * dx)


# ------------------------------------------------------------------------ fuzz

_FILLS = [0, 1, -1, 2.5, np.nan, 300, True, -0.0, np.inf, -129]


@FUZZ
@given(arrays(), st.data())
def test_fuzz_take(x, data):
    ishape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    indices = data.draw(index_arrays(ishape))
    axis = _fuzz_axis(data.draw, x.ndim)
    mode = data.draw(st.sampled_from(MODES + ("bogus",)))
    fill = data.draw(st.sampled_from(_FILLS))
    check_fuzz("take", x, indices, axis, mode=mode, fill_value=fill)


@st.composite
def along_indices(draw, x, axis):
    """Indices for take_along_axis: usually x.ndim dimensions (1-D for axis=None) with
    sizes that meet x's; sometimes another number of dimensions or larger sizes."""
    if axis is None:
        ndim = draw(st.sampled_from([1, 1, 1, 0, 2]))
        shape = tuple(draw(st.integers(0, 6)) for _ in range(ndim))
    elif draw(st.integers(0, 9)) == 0:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    else:
        ax = axis % x.ndim if -x.ndim <= axis < x.ndim else None
        shape = _sizes(draw, x.shape, skip=ax, extra=(1, 3, 5))
    return draw(index_arrays(shape))


@FUZZ
@given(arrays(), st.data())
def test_fuzz_take_along_axis(x, data):
    axis = _fuzz_axis(data.draw, x.ndim)
    indices = data.draw(along_indices(x, axis))
    mode = data.draw(st.sampled_from(MODES + ("bogus",)))
    fill = data.draw(st.sampled_from(_FILLS))
    check_fuzz("take_along_axis", x, indices, axis, mode=mode, fill_value=fill)


@st.composite
def nd_indices(draw, x):
    """(indices, batch_dims) for gather_nd: mostly well shaped, any values."""
    b = draw(st.integers(-1, 2))
    lead = (x.shape[:b] if b > 0 and draw(st.integers(0, 5)) else
            draw(hnp.array_shapes(min_dims=0, max_dims=max(b, 0), min_side=0, max_side=3)))
    extra = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    q = draw(st.integers(0, x.ndim + 1))
    shape = tuple(lead) + extra + (q,) if draw(st.integers(0, 9)) else ()
    return draw(index_arrays(shape)), b


@FUZZ
@given(arrays(), st.data())
def test_fuzz_gather_nd(x, data):
    indices, b = data.draw(nd_indices(x))
    check_fuzz("gather_nd", x, indices, batch_dims=b)


@st.composite
def scatter_fuzz_args(draw, small=False):
    x = draw(arrays(small=small))
    axis = _fuzz_axis(draw, x.ndim)
    ax = axis % x.ndim if axis is not None and -x.ndim <= axis < x.ndim else None
    if draw(st.integers(0, 9)) == 0:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    else:
        shape = _sizes(draw, x.shape, skip=ax, extra=(1, 2))
    indices = draw(index_arrays(shape))
    pick = draw(st.integers(0, 5))
    if pick <= 2:      # indices' shape
        ushape = shape
    elif pick == 3:    # larger
        ushape = tuple(s + draw(st.integers(0, 2)) for s in shape)
    elif pick == 4:    # a scalar, or something that broadcasts (or does not)
        ushape = draw(st.sampled_from([(), (1,), shape[-1:], (1,) + shape[1:]]))
    else:
        ushape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    udtypes = [x.dtype] * 4 + ([np.float64, np.int64, np.bool_, np.uint8] if not small else [])
    updates = draw(arrays(dtypes=udtypes, shape=ushape, small=small))
    reduce = draw(st.sampled_from(REDUCES + ("bogus",) if not small else REDUCES))
    return x, indices, updates, axis, reduce


@FUZZ
@given(scatter_fuzz_args())
def test_fuzz_scatter(args):
    x, indices, updates, axis, reduce = args
    with np.errstate(all="ignore"):
        check_fuzz("scatter", x, indices, updates, axis, reduce=reduce)


def _grad_g(data, shape):
    """An upstream gradient: of *shape* (mostly) or another, float or int, small integer values."""
    if shape is None or data.draw(st.integers(0, 9)) == 0:
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.float16, np.int32]))
    return data.draw(hnp.arrays(dtype, shape, elements=st.integers(-8, 8)))


@FUZZ
@given(arrays(max_side=4), st.data())
def test_fuzz_grad_take(x, data):
    ishape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    indices = data.draw(index_arrays(ishape))
    axis = _fuzz_axis(data.draw, x.ndim)
    mode = data.draw(st.sampled_from(MODES + ("bogus",)))
    g = _grad_g(data, _forward_shape("take", x, indices, axis, mode=mode))
    check_fuzz("grad.take", g, indices, x.shape, axis, mode=mode, compare=close)


@FUZZ
@given(arrays(max_side=4), st.data())
def test_fuzz_grad_take_along_axis(x, data):
    axis = _fuzz_axis(data.draw, x.ndim)
    indices = data.draw(along_indices(x, axis))
    mode = data.draw(st.sampled_from(MODES + ("bogus",)))
    g = _grad_g(data, _forward_shape("take_along_axis", x, indices, axis, mode=mode))
    check_fuzz("grad.take_along_axis", g, indices, x.shape, axis, mode=mode, compare=close)


@FUZZ
@given(arrays(max_side=4), st.data())
def test_fuzz_grad_gather_nd(x, data):
    indices, b = data.draw(nd_indices(x))
    g = _grad_g(data, _forward_shape("gather_nd", x, indices, batch_dims=b))
    check_fuzz("grad.gather_nd", g, indices, x.shape, batch_dims=b, compare=close)


@FUZZ
@given(scatter_fuzz_args(small=True), st.data())
def test_fuzz_grad_scatter(args, data):
    x, indices, updates, axis, reduce = args
    g = _grad_g(data, x.shape)
    with np.errstate(all="ignore"):
        check_fuzz("grad.scatter", g, x, indices, updates, axis, reduce=reduce, compare=close)

"""Complex numbers: sums, products, means, their scans, every gather, scatter with
None/add/mul, unfold and fold against NumPy (and PyTorch), their gradients by
``torch.autograd.gradcheck`` (PyTorch's convention), and a clear TypeError where
the contract refuses them (orderings, logcumsumexp)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import axisops

COMPLEX = [np.complex64, np.complex128]


def _z(shape, dtype=np.complex128, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _views(dtype):
    base = _z((4, 6, 5), dtype)
    return {"contiguous": base, "transposed": base.transpose(2, 0, 1),
            "stepped": base[:, ::2], "negative": base[::-1, :, ::-2],
            "broadcast": np.broadcast_to(base[:1], (3, 6, 5))}


def _check(got, want, exact):
    assert type(got) is type(want) or (isinstance(got, np.ndarray) and isinstance(want, np.ndarray))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    if exact:
        assert np.array_equal(got, want)
    else:
        tol = 1e-5 if np.asarray(want).dtype == np.complex64 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("view", ["contiguous", "transposed", "stepped", "negative", "broadcast"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
def test_reductions_against_numpy(dtype, view, axis):
    x = _views(dtype)[view]
    for op in ("sum", "mean", "prod"):
        got = getattr(axisops, op)(x, axis=axis)
        want = getattr(np, op)(x, axis=axis)
        # sums are componentwise, products NumPy's own loop: same bits for prod
        _check(got, want, exact=op == "prod" and axis is not None and np.ndim(axis) == 0)
    _check(axisops.sum(x, axis=axis, keepdims=True), np.sum(x, axis=axis, keepdims=True), False)


def test_real_input_with_a_complex_dtype_and_the_refused_real_dtype():
    x = np.arange(6).reshape(2, 3)
    _check(axisops.sum(x, axis=1, dtype=np.complex64), np.sum(x, axis=1, dtype=np.complex64), True)
    with pytest.raises(TypeError, match="imaginary"):
        axisops.sum(_z((3,)), dtype=np.float64)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("axis", [None, 0, 1, 2])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_against_numpy(dtype, axis, exclusive, reverse):
    x = _views(dtype)["transposed"]
    flat = x.reshape(-1) if axis is None else x
    a = 0 if axis is None else axis
    for op, ident in (("cumsum", 0), ("cumprod", 1)):
        scan = getattr(np, op)
        y = np.flip(scan(np.flip(flat, a), axis=a), a) if reverse else scan(flat, axis=a)
        if exclusive:
            y = np.flip(y, a) if reverse else y
            y = np.concatenate([np.full_like(np.take(y, [0], a), ident),
                                np.take(y, np.arange(y.shape[a] - 1), a)], axis=a)
            y = np.flip(y, a) if reverse else y
        got = getattr(axisops, op)(x, axis=axis, exclusive=exclusive, reverse=reverse)
        _check(got, y, exact=op == "cumprod" and not exclusive)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scans_of_a_0d_complex_are_0d(op, exclusive):
    # as for real numbers (the contract): cumprod flattened to (1,) before
    got = getattr(axisops, op)(np.array(1 + 2j, np.complex64), exclusive=exclusive)
    want = np.complex64(1 if exclusive and op == "cumprod" else 0 if exclusive else 1 + 2j)
    assert got.shape == () and got.dtype == np.complex64 and got[()] == want


@pytest.mark.parametrize("dtype", COMPLEX)
def test_gathers_and_scatters_move_bits(dtype):
    x = _views(dtype)["negative"]
    rng = np.random.default_rng(1)
    i = rng.integers(-6, 6, (4, 2, 3))
    _check(axisops.take(x, [2, -1, 0], axis=1), np.take(x, [2, -1, 0], axis=1), True)
    _check(axisops.take(x, [99], axis=None, mode="fill", fill_value=2 - 3j),
           np.array([2 - 3j], dtype), True)
    _check(axisops.take(x, [99, -1], axis=None, mode="wrap"),
           np.take(x, [99, -1], axis=None, mode="wrap"), True)
    _check(axisops.take_along_axis(x, i, axis=1), np.take_along_axis(x, i % 6, axis=1), True)
    nd = np.array([[0, 1], [3, 2]])
    _check(axisops.gather_nd(x, nd), x[nd[:, 0], nd[:, 1]], True)
    dest = rng.integers(0, 4, (6, 3, 3))
    upd = _z((6, 3, 3), dtype, 2)
    cols = (dest, np.arange(3)[None, :, None], np.arange(3)[None, None, :])
    for reduce, ufunc in ((None, None), ("add", np.add), ("mul", np.multiply)):
        want = x.copy()
        if ufunc is None:
            for k in np.ndindex(dest.shape):  # the last write in C order wins
                want[dest[k], k[1], k[2]] = upd[k]
        else:
            ufunc.at(want, cols, upd)
        got = axisops.scatter(x, dest, upd, 0, reduce=reduce)
        _check(got, want, exact=reduce != "add" or dtype == np.complex128)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("channels_last", [False, True])
def test_windows_against_torch(dtype, channels_last):
    x = _z((2, 3, 6, 5), dtype)
    t = torch.from_numpy(x)
    want = F.unfold(t, (3, 2), padding=1, stride=(1, 2)).numpy()
    if channels_last:
        got = axisops.unfold(np.moveaxis(x, 1, -1), (3, 2), padding=1, stride=(1, 2),
                             channels_last=True)
        want = want.reshape(2, 3, 6, -1).transpose(0, 3, 2, 1).reshape(2, -1, 18)
    else:
        got = axisops.unfold(x, (3, 2), padding=1, stride=(1, 2))
    _check(got, want, True)
    cols = _z((2, 3 * 6, 18), dtype, 3)
    _check(axisops.fold(cols, (6, 5), (3, 2), padding=1, stride=(1, 2)),
           F.fold(torch.from_numpy(cols), (6, 5), (3, 2), padding=1, stride=(1, 2)).numpy(), False)


@pytest.mark.parametrize("op,args", [
    ("max", ()), ("min", ()), ("argmax", ()), ("argmin", ()), ("cummax", ()), ("cummin", ()),
    ("logcumsumexp", ()),
])
def test_orderings_and_logcumsumexp_refuse_complex(op, args):
    with pytest.raises(TypeError, match=f"{op}.*complex"):
        getattr(axisops, op)(_z((3, 4)), *args)


def test_scatter_max_min_refuse_complex_and_so_does_clongdouble():
    for reduce in ("max", "min"):
        with pytest.raises(TypeError, match="complex"):
            axisops.scatter(_z((3,)), [0], [1j], 0, reduce=reduce)
    with pytest.raises(TypeError, match="complex"):
        axisops.sum(np.ones(3, np.clongdouble))


# ------------------------------------------------------------------------ gradients

def _c(*shape):
    g = torch.Generator().manual_seed(sum(shape))
    return torch.randn(*shape, dtype=torch.complex128, generator=g).requires_grad_()


_X, _U = _c(3, 4), _c(2, 4)
_IDX = torch.tensor([[2, 0, 1, 1], [0, 0, 2, 1]])

GRADIENTS = {
    "sum": (lambda a: axisops.sum(a, axis=1), _X),
    "mean": (lambda a: axisops.mean(a, axis=0, keepdims=True), _X),
    "prod": (lambda a: axisops.prod(a, axis=(0, 1)), _X),
    "prod with a zero": (lambda a: axisops.prod(a * torch.tensor([1, 0, 1, 1]), axis=1), _X),
    "cumsum": (lambda a: axisops.cumsum(a, axis=1, reverse=True), _X),
    "cumprod": (lambda a: axisops.cumprod(a, axis=1), _X),
    "cumprod exclusive reverse": (lambda a: axisops.cumprod(a, 0, exclusive=True, reverse=True),
                                  _X),
    "cumprod flat": (lambda a: axisops.cumprod(a, axis=None), _X),
    "take": (lambda a: axisops.take(a, torch.tensor([3, 0, 3]), axis=1), _X),
    "take_along_axis": (lambda a: axisops.take_along_axis(a, _IDX, axis=0), _X),
    "gather_nd": (lambda a: axisops.gather_nd(a, torch.tensor([[1, 2], [0, 3]])), _X),
    "scatter add": (lambda a, v: axisops.scatter(a, _IDX, v, 0, reduce="add"), _X, _U),
    "scatter": (lambda a, v: axisops.scatter(a, _IDX, v, 0), _X, _U),
    "scatter mul": (lambda a, v: axisops.scatter(a, _IDX, v, 0, reduce="mul"), _X, _U),
    "unfold": (lambda a: axisops.unfold(a, (2, 2), padding=1), _c(1, 2, 3, 4)),
    "fold": (lambda a: axisops.fold(a, (3, 4), (2, 2), padding=1), _c(1, 8, 20)),
}


@pytest.mark.parametrize("name", list(GRADIENTS))
def test_gradcheck_complex(name):
    f, *inputs = GRADIENTS[name]
    assert torch.autograd.gradcheck(f, tuple(inputs))


def test_gradients_follow_pytorchs_convention():
    # conj(dy/dx) * g: against PyTorch's own autograd of the same function
    x = _c(3, 4)
    g = _c(3, 4).detach()
    for ours, theirs in ((lambda a: axisops.cumprod(a, 1), lambda a: torch.cumprod(a, 1)),
                         (lambda a: axisops.cumsum(a, 0), lambda a: torch.cumsum(a, 0))):
        (mine,) = torch.autograd.grad(ours(x), x, g)
        (want,) = torch.autograd.grad(theirs(x), x, g)
        torch.testing.assert_close(mine, want)
    gp = _c(4).detach()
    (mine,) = torch.autograd.grad(axisops.prod(x, axis=0), x, gp)
    (want,) = torch.autograd.grad(torch.prod(x, 0), x, gp)
    torch.testing.assert_close(mine, want)


def test_numpy_gradients_of_complex_arrays():
    x = _z((3, 4))
    g = _z((3,), seed=5)
    got = axisops.grad.prod(g, x, axis=1)
    others = np.prod(x, axis=1, keepdims=True) / x
    np.testing.assert_allclose(got, np.conj(others) * g[:, None], rtol=1e-12)
    assert got.dtype == np.complex128 and got.shape == x.shape
    gs = axisops.grad.take(g, [0, 0, 2], (4,), axis=0)
    _check(gs, np.array([g[0] + g[1], 0, g[2], 0]), True)


def test_gradient_of_a_complex_product_with_empty_parts():
    for x_shape, g_shape in (((0, 3), (0,)), ((3, 0), (3,))):
        x = np.zeros(x_shape, np.complex128)
        got = axisops.grad.prod(np.ones(g_shape, np.complex128), x, axis=1)
        assert got.shape == x_shape and got.dtype == np.complex128
        assert got.size == 0

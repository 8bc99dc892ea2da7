"""axisops on torch.Tensor: same type out, PyTorch's own operators as the reference,
autograd (gradcheck, double backward), torch.compile with fullgraph=True, errors.

PyTorch is a test dependency (torch==2.13.0, the CPU build), so nothing here is
skipped; the JAX round trip at the end runs where JAX is installed (the test extra
has it).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import axisops
from axisops._dispatch import numpy_function

torch.manual_seed(0)


def _t(shape, dtype=torch.float64, low=-3, high=4):
    g = torch.Generator().manual_seed(hash(shape) % 2**31)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g, dtype=dtype)
    return torch.randint(low, high, shape, generator=g, dtype=dtype)


def assert_same(got, want, *, exact=True):
    """Value, dtype and shape of a tensor result against PyTorch's."""
    assert isinstance(got, torch.Tensor), type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact:
        assert torch.equal(got, want), (got, want)
    else:
        torch.testing.assert_close(got, want)


# ------------------------------------------------------- against PyTorch's operators

REDUCTIONS = [("sum", torch.sum), ("prod", torch.prod), ("mean", torch.mean),
              ("max", torch.amax), ("min", torch.amin)]


@pytest.mark.parametrize("name,peer", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_torch(name, peer, axis, keepdims):
    x = _t((3, 4, 5))
    got = getattr(axisops, name)(x, axis=axis, keepdims=keepdims)
    if name == "prod" and isinstance(axis, tuple):  # torch.prod takes one dim
        want = torch.prod(torch.prod(x, 2, keepdim=True), 0, keepdim=True)
        want = want if keepdims else want.reshape(4)
    else:
        want = peer(x, dim=axis, keepdim=keepdims)
    assert_same(got, want, exact=name in ("max", "min"))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool])
def test_integer_sums_keep_numpys_dtype_rules(dtype):
    x = _t((4, 5), dtype, 0, 3) if dtype != torch.bool else _t((4, 5), torch.int64, 0, 2).bool()
    got = axisops.sum(x, axis=1)
    want = torch.from_numpy(np.sum(x.numpy(), axis=1))
    assert_same(got, want)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_arg_reductions_match_torch(name, axis):
    x = _t((6, 7), torch.int64, 0, 3)  # many ties: both take the first index
    got = getattr(axisops, name)(x, axis=axis)
    assert_same(got, getattr(torch, name)(x, dim=axis))
    assert got.dtype == torch.int64
    small = getattr(axisops, name)(x, axis=0, index_dtype=torch.int32)
    assert small.dtype == torch.int32


def test_tuple_axis_argmax_and_unravel_give_tensors():
    x = _t((3, 4, 5))
    i = axisops.argmax(x, axis=(0, 2))
    rows, cols = axisops.unravel(i, x.shape, (0, 2))
    assert isinstance(rows, torch.Tensor) and rows.dtype == torch.int64
    picked = x[rows, torch.arange(4), cols]
    assert_same(picked, torch.amax(x, dim=(0, 2)))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_scans_match_torch(axis):
    x = _t((3, 4, 5))
    assert_same(axisops.cumsum(x, axis), torch.cumsum(x, axis), exact=False)
    assert_same(axisops.cumprod(x, axis), torch.cumprod(x, axis), exact=False)
    assert_same(axisops.logcumsumexp(x, axis), torch.logcumsumexp(x, axis), exact=False)
    ties = _t((3, 4, 5), torch.int64, 0, 3).double()
    ties[0, 1, 1] = float("nan")
    for name in ("cummax", "cummin"):
        values, indices = getattr(axisops, name)(ties, axis)
        want = getattr(torch, name)(ties, axis)
        torch.testing.assert_close(values, want.values, equal_nan=True)
        assert_same(indices, want.indices)  # ties and NaN index for index


def test_cummax_returns_the_named_pair():
    out = axisops.cummax(torch.tensor([1.0, 3.0, 2.0]))
    assert isinstance(out, axisops.ValuesIndices)
    assert_same(out.values, torch.tensor([1.0, 3.0, 3.0]))
    assert_same(out.indices, torch.tensor([0, 1, 1]))


def test_gathers_match_torch():
    x = _t((4, 6, 5))
    idx = _t((3,), torch.int64, 0, 6)
    assert_same(axisops.take(x, idx, axis=1), torch.index_select(x, 1, idx))
    along = _t((4, 2, 5), torch.int64, 0, 6)
    assert_same(axisops.take_along_axis(x, along, axis=1), torch.gather(x, 1, along))
    nd = torch.tensor([[0, 1], [3, 5]])
    assert_same(axisops.gather_nd(x, nd), x[nd[:, 0], nd[:, 1]])


@pytest.mark.parametrize("reduce,peer", [("add", "sum"), ("mul", "prod"), ("max", "amax"),
                                         ("min", "amin")])
def test_scatter_matches_torch_scatter_reduce(reduce, peer):
    x = _t((4, 5))
    idx = _t((6, 5), torch.int64, 0, 4)
    upd = _t((6, 5)).add(1)
    want = x.scatter_reduce(0, idx, upd, peer, include_self=True)
    assert_same(axisops.scatter(x, idx, upd, 0, reduce=reduce), want, exact=reduce != "add")


@pytest.mark.parametrize("kw", [{}, {"padding": 1}, {"stride": 2, "dilation": (1, 2)}])
def test_windows_match_torch(kw):
    x = _t((2, 3, 7, 6))
    cols = axisops.unfold(x, (3, 2), **kw)
    assert_same(cols, F.unfold(x, (3, 2), **kw))
    assert_same(axisops.fold(cols, (7, 6), (3, 2), **kw), F.fold(cols, (7, 6), (3, 2), **kw),
                exact=False)


def test_plain_cpu_tensor_arguments_take_the_numpy_path(monkeypatch):
    """Every tensor a plain CPU one (no gradient, strided): the NumPy path on their
    arrays, without the registered operators; an argument that needs a gradient
    goes through them (and gets its gradient)."""
    import axisops.torch as AT

    x = _t((4, 5))
    idx = _t((6, 5), torch.int64, 0, 4)
    upd = _t((6, 5))
    want = (axisops.take(x.numpy(), idx[:, 0].numpy(), axis=0),
            axisops.take_along_axis(x.numpy(), idx[:4].numpy(), axis=0),
            axisops.scatter(x.numpy(), idx.numpy(), upd.numpy(), 0, reduce="add"))
    axisops.take(x, idx[:, 0], axis=0)  # (the first tensor a process sees goes the long way)
    registered = AT.call
    calls = []
    monkeypatch.setattr(AT, "call", lambda *a: calls.append(a) or registered(*a))
    got = (axisops.take(x, idx[:, 0], axis=0), axisops.take_along_axis(x, idx[:4], axis=0),
           axisops.scatter(x, idx, upd, 0, reduce="add"))
    assert not calls
    for g, w in zip(got, want):
        assert type(g) is torch.Tensor and g.dtype == torch.from_numpy(w).dtype
        assert np.array_equal(g.numpy(), w)
    upd.requires_grad_(True)
    axisops.scatter(x, idx, upd, 0, reduce="add").sum().backward()
    assert calls and upd.grad is not None and upd.grad.shape == upd.shape


def test_non_contiguous_tensors_are_read_in_place():
    base = _t((5, 6, 4))
    for view in (base.transpose(0, 2), base[:, ::2], base.expand(2, 5, 6, 4)[1],
                 base.permute(1, 2, 0)):
        assert not view.is_contiguous() or view.data_ptr() == base.data_ptr()
        assert_same(axisops.sum(view, axis=1), torch.sum(view.contiguous(), dim=1), exact=False)
        assert_same(axisops.cummax(view, 0).indices, torch.cummax(view.contiguous(), 0).indices)


def test_results_are_zero_copy_and_writable():
    x = _t((64, 64))
    y = axisops.cumsum(x, axis=1)
    array = y.numpy()  # the result wraps the NumPy path's array, no copy on the way out
    assert array.flags.writeable and array.flags.c_contiguous
    y.add_(1)  # users may write to it
    assert torch.equal(torch.from_numpy(array), y)


def test_numpy_and_tensor_paths_agree_bit_for_bit():
    x = _t((33, 17), torch.float32)
    for name in ("sum", "mean", "prod", "max", "argmin"):
        got = getattr(axisops, name)(x, axis=0)
        want = getattr(axisops, name)(x.numpy(), axis=0)
        assert got.dtype == torch.from_numpy(np.asarray(want)).dtype
        assert np.array_equal(got.numpy(), want)


def test_errors_are_the_numpy_paths():
    x = _t((3, 4))
    with pytest.raises(np.exceptions.AxisError):
        axisops.sum(x, axis=2)
    with pytest.raises(ValueError, match="repeated"):
        axisops.sum(x, axis=(0, 0))
    with pytest.raises(IndexError, match="out of range"):
        axisops.take(x, torch.tensor([4]), axis=1)
    with pytest.raises(TypeError, match="float"):
        axisops.take(x, torch.tensor([0.5]), axis=1)
    with pytest.raises(TypeError, match="bfloat16"):
        axisops.sum(x.bfloat16())
    with pytest.raises(TypeError, match="axis"):
        axisops.cumsum(x, axis="0")
    with pytest.raises(ValueError, match="kernel_size"):
        axisops.unfold(_t((1, 1, 4, 4)), 0)


# -------------------------------------------------------------------------- autograd

def _grad_cases(device="cpu"):
    """name: (f, *inputs); every tensor on *device* (``tests/test_torch_cuda.py`` runs
    them on a real GPU)."""
    def on(t):
        return t.to(device)

    x = on(_t((3, 4))).requires_grad_()
    x3 = on(_t((2, 3, 4))).requires_grad_()
    pos = on(_t((3, 4)).abs() + 0.5).requires_grad_()
    idx = on(torch.tensor([[2, 0, 1, 1], [0, 0, 2, 1]]))
    img = on(_t((1, 2, 5, 4))).requires_grad_()
    cols = on(_t((1, 2 * 6, 15))).requires_grad_()
    upd = on(_t((2, 4))).requires_grad_()
    return {
        "sum": (lambda a: axisops.sum(a, axis=(0, 2), keepdims=True), x3),
        "mean": (lambda a: axisops.mean(a, axis=1), x),
        "prod": (lambda a: axisops.prod(a, axis=0), pos),
        "max": (lambda a: axisops.max(a, axis=1), x),
        "min": (lambda a: axisops.min(a, axis=None), x),
        "cumsum": (lambda a: axisops.cumsum(a, axis=1, exclusive=True, reverse=True), x),
        "cumprod": (lambda a: axisops.cumprod(a, axis=0), pos),
        "cummax": (lambda a: axisops.cummax(a, axis=1).values, x),
        "cummin": (lambda a: axisops.cummin(a, axis=None).values, x),
        "logcumsumexp": (lambda a: axisops.logcumsumexp(a, axis=0), x),
        "take": (lambda a: axisops.take(a, on(torch.tensor([3, 0, 3])), axis=1), x),
        "take_along_axis": (lambda a: axisops.take_along_axis(a, idx, axis=0), x),
        "gather_nd": (lambda a: axisops.gather_nd(a, on(torch.tensor([[1, 2], [0, 3]]))), x),
        "scatter": (lambda a, u: axisops.scatter(a, idx[:2], u, 0, reduce="add"), x, upd),
        "scatter mul": (lambda a, u: axisops.scatter(a, idx[:2], u, 0, reduce="mul"), x, upd),
        "unfold": (lambda a: axisops.unfold(a, (2, 3), padding=1, stride=(2, 1)), img),
        "fold": (lambda c: axisops.fold(c, (4, 5), (2, 3), padding=(0, 1)), cols),
    }


GRAD_CASES = _grad_cases()


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradcheck(name):
    f, *inputs = GRAD_CASES[name]
    assert torch.autograd.gradcheck(f, tuple(inputs))


LINEAR = ["sum", "mean", "cumsum", "cummax", "cummin", "take", "take_along_axis", "gather_nd",
          "scatter", "unfold", "fold"]


@pytest.mark.parametrize("name", LINEAR)
def test_double_backward_of_gradients_linear_in_g(name):
    # grad.<op> is linear in g, so its own gradient is registered: gradgradcheck
    # holds (scatter: the forward is linear in updates, its gradient in g)
    f, *inputs = GRAD_CASES[name]
    assert torch.autograd.gradgradcheck(f, tuple(inputs))


@pytest.mark.parametrize("name", ["prod", "max", "cumprod", "logcumsumexp", "scatter mul"])
def test_no_double_backward_where_the_gradient_is_not_linear(name):
    f, *inputs = GRAD_CASES[name]
    grads = torch.autograd.grad(f(*inputs).sum(), inputs, create_graph=True)
    with pytest.raises(RuntimeError, match=r"axisops|autograd"):
        torch.autograd.grad(grads[0].sum(), inputs)


def test_backward_values_are_axisops_grad():
    x = _t((3, 5)).requires_grad_()
    g = _t((3, 5))
    values, indices = axisops.cummax(x, axis=1)
    values.backward(g)
    want = axisops.grad.cummax(g.numpy(), indices.numpy(), x.shape, 1)
    assert np.array_equal(x.grad.numpy(), want)


def test_integer_results_do_not_require_grad():
    x = _t((3, 4)).requires_grad_()
    assert not axisops.argmax(x, axis=1).requires_grad
    assert not axisops.cummax(x, axis=1).indices.requires_grad
    assert axisops.cummax(x, axis=1).values.requires_grad


def test_gradient_functions_take_tensors():
    g, x = _t((3,)), _t((3, 4))
    got = axisops.grad.max(g, x, axis=1)
    assert_same(got, torch.from_numpy(axisops.grad.max(g.numpy(), x.numpy(), axis=1)))


# ---------------------------------------------------------------------- torch.compile

def test_torch_compile_fullgraph_forward_and_backward():
    def step(x, w, idx):
        cols = axisops.unfold(x, 3, padding=1)                       # (N, C*9, L)
        y = (w @ cols).reshape(x.shape[0], -1, x.shape[2], x.shape[3])
        best, _ = axisops.cummax(y, axis=1)
        picked = axisops.take_along_axis(best, idx, axis=1)
        return axisops.sum(picked, axis=(1, 2, 3)) + axisops.mean(y.float(), axis=None)

    x = _t((2, 3, 6, 5), torch.float32)
    w = _t((4, 27), torch.float32)
    idx = torch.zeros((2, 1, 6, 5), dtype=torch.int64)
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    xe, we = x.clone().requires_grad_(), w.clone().requires_grad_()
    xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
    eager = step(xe, we, idx)
    traced = compiled(xc, wc, idx)
    torch.testing.assert_close(traced, eager)
    eager.sum().backward()
    traced.sum().backward()
    torch.testing.assert_close(xc.grad, xe.grad)
    torch.testing.assert_close(wc.grad, we.grad)


def test_fake_implementations_give_the_real_shapes_and_dtypes():
    from torch._subclasses.fake_tensor import FakeTensorMode

    from axisops import torch as T

    calls = {
        "sum": (_t((3, 4, 5), torch.int32), [0, 2], True, None),
        "argmax": (_t((3, 4)), [1], False, False, torch.int32),
        "cummax": (_t((3, 4)), 1, torch.int64),
        "take": (_t((3, 4)), torch.tensor([[0, 1]]), 1, "raise", 0),
        "fold": (_t((2, 12, 15)), [4, 5], [2, 3], [1, 1], [0, 0, 1, 1], [1, 1], False),
        "grad_scatter": (_t((4, 5)), _t((4, 5)), torch.zeros((2, 5), dtype=torch.int64),
                         _t((2, 5)), 0, "mul"),
    }
    for name, args in calls.items():
        real = T.OPERATORS[name](*args)
        with FakeTensorMode(allow_non_fake_inputs=True) as mode:
            fake_args = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args]
            fake = T.OPERATORS[name](*fake_args)
        for r, f in zip(real if isinstance(real, tuple) else [real],
                        fake if isinstance(fake, tuple) else [fake]):
            assert (r.shape, r.dtype) == (f.shape, f.dtype), name


def test_opcheck_of_the_registered_operators():
    # torch.library.opcheck: schema, fake implementation, autograd registration
    x = _t((3, 4)).requires_grad_()
    torch.library.opcheck(torch.ops.axisops.cumsum.default, (x, 1, None, False, True))
    torch.library.opcheck(torch.ops.axisops.take_along_axis.default,
                          (x, torch.tensor([[0], [3], [1]]), 1, "raise", 0))
    torch.library.opcheck(torch.ops.axisops.unfold.default,
                          (_t((1, 2, 4, 4)), [2, 2], [1, 1], [0, 0, 0, 0], [1, 1], False))


# --------------------------------------------------------------------- other DLPack

def test_jax_arrays_round_trip():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(12.0).reshape(3, 4)
    got = axisops.cumsum(x, axis=1)
    assert type(got) is type(x)
    assert np.array_equal(np.asarray(got), np.cumsum(np.asarray(x), axis=1))
    values, indices = axisops.cummax(x, axis=0)
    assert type(values) is type(x) and type(indices) is type(x)
    assert np.array_equal(np.asarray(axisops.take(x, jnp.array([2, 0]), axis=1)),
                          np.asarray(x)[:, [2, 0]])


def test_numpy_path_is_untouched():
    x = np.arange(6.0).reshape(2, 3)
    assert type(axisops.sum(x, axis=1)) is np.ndarray
    assert numpy_function(axisops.sum) is not axisops.sum
    assert axisops.sum.__wrapped__ is numpy_function(axisops.sum)


def test_tensor_bench_reports_both_tables(monkeypatch, tmp_path):
    from axisops.bench import tensors

    monkeypatch.setattr(tensors, "QUICK", {"array": (4, 8, 16), "image": (1, 2, 6, 6)})
    data = tensors.run(quick=True, repeat=1, min_time=0)
    names = {r["workload"] for r in data["rows"]}
    assert {"cummax axis=1", "take_along_axis axis=1", "scatter add axis=1", "unfold 3x3",
            "fold 3x3", "conv 3x3 (unfold + matmul)"} == names
    assert {r["mode"] for r in data["rows"]} == {"forward", "forward+backward"}
    assert all(r["axisops_ms"] > 0 and r["torch_ms"] > 0 for r in data["rows"])
    assert data["overhead"][0]["call"] == "sum axis=1, requires grad"
    path = tmp_path / "torch.md"
    tensors.write_markdown(data, str(path), "axisops bench --torch --quick")
    text = path.read_text()
    assert "| cummax axis=1 | forward+backward |" in text and "overhead us" in text

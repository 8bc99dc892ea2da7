"""Gradients of the sliding windows: ``grad.unfold`` (a fold) and ``grad.fold`` (an unfold).

Against ``axisops.reference.grad`` for g of float32, float64, float16, int32 and bool
(integer and bool g give float64) in 1, 2 and 3 spatial dims, batched or not,
channels first and last, with contiguous and non-contiguous g; the adjoint identities
``<unfold(x), g> == <x, grad.unfold(g, x.shape)>`` and ``<fold(c), g> == <c,
grad.fold(g)>``; shapes and dtypes; the errors; PyTorch's autograd where torch is
installed; and the README's example, a 2-D convolution's forward and backward pass
written with unfold, fold and matrix products (:func:`conv2d_forward_backward`),
checked against a direct loop.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from cases import changed, compare_outcomes, mismatch, outcome, snapshot, values

import axisops
from axisops import reference as ref

GRAD_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int32,
                                          np.bool_))
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}

#: (x_shape, kernel_size, keyword arguments): 1-D to 3-D, batched or not, both layouts.
SETUPS = [
    ((2, 3, 7), (3,), {}),
    ((3, 7), (2,), {"stride": 2, "padding": ((1, 2),)}),
    ((2, 7, 3), [3], {"dilation": 2, "padding": 1, "channels_last": True}),
    ((2, 2, 5, 6), 2, {}),
    ((2, 5, 6), (3, 2), {"stride": (2, 1), "dilation": (1, 2), "padding": (1, 0)}),
    ((1, 5, 6, 3), (2, 3), {"padding": ((0, 1), (2, 1)), "stride": 2, "channels_last": True}),
    ((6, 5, 2), 3, {"padding": 1, "channels_last": True}),
    ((2, 1, 4, 3, 5), (2, 2, 3), {"stride": (1, 2, 1), "padding": ((1, 0), (0, 1), (1, 1))}),
    ((2, 4, 3, 5), (3, 1, 2), {"dilation": (1, 1, 2)}),
    ((1, 4, 3, 5, 2), (2, 2, 2), {"stride": 2, "padding": 1, "channels_last": True}),
    ((0, 2, 4, 4), 2, {}),
    ((2, 0, 4), (2,), {}),
]


def spatial(x_shape, kernel, channels_last=False):
    d = 2 if isinstance(kernel, int) else len(kernel)
    return tuple(x_shape[-d - 1:-1] if channels_last else x_shape[-d:])


def report(failures, limit=25):
    if failures:
        more = f"\n... and {len(failures) - limit} more" if len(failures) > limit else ""
        pytest.fail(f"{len(failures)} failing calls:\n" + "\n".join(failures[:limit]) + more)


def check_grad(op, g, *args, bits=False, **kwargs):
    """``axisops.grad.<op>`` against ``reference.grad.<op>``: raise alike or return equal
    C-contiguous arrays (bit for bit where *bits*); g unchanged. A message or ``None``."""
    before = snapshot(g)
    want = outcome(getattr(ref.grad, op), g, *args, **kwargs)
    got = outcome(getattr(axisops.grad, op), g, *args, **kwargs)
    msg = compare_outcomes(got, want)
    if msg is None and want[0] == "ok":
        if type(got[1]) is not np.ndarray or not got[1].flags.c_contiguous:
            msg = f"returned {type(got[1]).__name__}, expected a C-contiguous numpy.ndarray"
        else:
            msg = mismatch(got[1], want[1])
        if msg is None and bits and want[1].dtype.kind == "f":
            u = _UINT[want[1].itemsize]
            differ = (got[1].view(u) != want[1].view(u)) & ~np.isnan(want[1])
            if differ.any():
                msg = f"bits differ at {tuple(int(i) for i in np.argwhere(differ)[0])}"
    msg = msg or changed(g, before)
    label = f"grad.{op}({g.dtype} {g.shape} strides={g.strides}, {args}, {kwargs})"
    return None if msg is None else f"{label}: {msg}"


def g_views(g, rng):
    """*g*, a negative-stride view and a transposed copy's view with the same values."""
    yield g
    if g.ndim:
        yield np.ascontiguousarray(g[..., ::-1])[..., ::-1]
        yield np.asfortranarray(g)


# --------------------------------------------------------------- vs the reference

@pytest.mark.parametrize("dtype", GRAD_DTYPES, ids=lambda t: t.name)
def test_grads_match_reference(dtype):
    rng = np.random.default_rng(21)
    failures = []
    for x_shape, kernel, kw in SETUPS:
        cols_shape = ref.unfold(np.zeros(x_shape), kernel, **kw).shape
        for g in g_views(values(dtype, cols_shape, rng), rng):
            if msg := check_grad("unfold", g, x_shape, kernel, **kw):
                failures.append(msg)
        for g in g_views(values(dtype, x_shape, rng), rng):   # fold's output shape
            if msg := check_grad("fold", g, kernel, bits=True, **kw):
                failures.append(msg)
    report(failures)


def test_grad_dtypes_and_shapes():
    rng = np.random.default_rng(22)
    x_shape, kernel, kw = (2, 3, 5, 4), (2, 3), {"padding": ((1, 0), (0, 2))}
    cols_shape = ref.unfold(np.zeros(x_shape), kernel, **kw).shape
    want = {np.float16: np.float16, np.float32: np.float32, np.float64: np.float64,
            np.int32: np.float64, np.int64: np.float64, np.uint8: np.float64,
            np.bool_: np.float64}
    for dtype, res in want.items():
        gx = axisops.grad.unfold(values(dtype, cols_shape, rng), x_shape, kernel, **kw)
        assert gx.shape == x_shape and gx.dtype == res, (dtype, gx.shape, gx.dtype)
        gc = axisops.grad.fold(values(dtype, x_shape, rng), kernel, **kw)
        assert gc.shape == cols_shape and gc.dtype == res, (dtype, gc.shape, gc.dtype)
    # float16 accumulates in float32: 2048 + 63 ones is 2111, rounded once to 2112
    g = np.ones((64, 127), np.float16)
    g[0] = 2048
    got = axisops.grad.unfold(g, (1, 64), (64,), padding=63)
    np.testing.assert_array_equal(got, np.full((1, 64), 2112, np.float16))


def test_adjoint_identities():
    """``<unfold(x), g> == <x, grad.unfold(g, x.shape)>`` and
    ``<fold(c), g> == <c, grad.fold(g)>`` in float64, for every setup."""
    rng = np.random.default_rng(23)
    failures = []
    for x_shape, kernel, kw in SETUPS:
        x = rng.standard_normal(x_shape)
        cols = axisops.unfold(x, kernel, **kw)
        g = rng.standard_normal(cols.shape)
        left, right = np.vdot(cols, g), np.vdot(x, axisops.grad.unfold(g, x_shape, kernel, **kw))
        if not np.isclose(left, right, rtol=1e-12, atol=1e-12):
            failures.append(f"unfold {x_shape} {kernel} {kw}: {left} != {right}")
        c = rng.standard_normal(cols.shape)
        h = rng.standard_normal(x_shape)
        size = spatial(x_shape, kernel, kw.get("channels_last", False))
        left = np.vdot(axisops.fold(c, size, kernel, **kw), h)
        right = np.vdot(c, axisops.grad.fold(h, kernel, **kw))
        if not np.isclose(left, right, rtol=1e-12, atol=1e-12):
            failures.append(f"fold {x_shape} {kernel} {kw}: {left} != {right}")
    report(failures)


def test_grads_equal_torch_autograd():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(24)
    failures = []
    for x_shape, kernel, kw in [((2, 3, 6, 5), (2, 3), {"stride": (2, 1), "padding": 1}),
                                ((3, 7, 7), 3, {"dilation": 2, "padding": (2, 1)})]:
        x = torch.from_numpy(rng.standard_normal(x_shape)).requires_grad_()
        cols = F.unfold(x, kernel, **kw)
        g = rng.standard_normal(tuple(cols.shape))
        cols.backward(torch.from_numpy(g))
        got = axisops.grad.unfold(g, x_shape, kernel, **kw)
        if not np.allclose(got, x.grad.numpy(), rtol=1e-12, atol=1e-12):
            failures.append(f"grad.unfold {x_shape} {kernel} {kw}")
        c = torch.from_numpy(rng.standard_normal(tuple(cols.shape))).requires_grad_()
        out = F.fold(c, x_shape[-2:], kernel, **kw)
        h = rng.standard_normal(tuple(out.shape))
        out.backward(torch.from_numpy(h))
        if (msg := mismatch(axisops.grad.fold(h, kernel, **kw), c.grad.numpy())):
            failures.append(f"grad.fold {x_shape} {kernel} {kw}: {msg}")
    report(failures)


# ------------------------------------------------------------------------ errors

def _z(*shape, dtype=np.float64):
    return np.zeros(shape, dtype)


#: (function, args, kwargs, exception, a pattern the message must match)
GRAD_ERRORS = [
    ("unfold", (_z(1, 4, 9), (1, 1, 4, 4), 2), {}, None, None),
    ("unfold", (_z(1, 4, 8), (1, 1, 4, 4), 2), {}, ValueError, r"\b9\b"),
    ("unfold", (_z(4, 9), (1, 1, 4, 4), 2), {}, ValueError, r"\b9\b"),
    ("unfold", (_z(1, 12, 9), (1, 4, 4, 3), 2), {"channels_last": True}, ValueError, r"\b9\b"),
    ("unfold", (_z(4, 9), (4, 4), 2), {}, ValueError, r"dim|\(N|x_shape"),
    ("unfold", (_z(4, 9), (1, 1, 1, 4, 4), 2), {}, ValueError, r"dim|\(N|x_shape"),
    ("unfold", (_z(1, 4, 1), (1, 1, 2, 2), 3), {}, ValueError, r"(?s)(?=.*\b2\b)(?=.*\b3\b)"),
    ("unfold", (np.zeros((1, 4, 9), "U1"), (1, 1, 4, 4), 2), {}, TypeError,
     r"dtype"),
    ("unfold", (_z(1, 4, 9), (1, 1, 4, 4), (2, 2.0)), {}, TypeError, r"kernel_size"),
    ("unfold", (_z(1, 4, 9), (1, 1, 4, 4), (2, 2, 2, 2)), {}, ValueError, r"kernel_size"),
    ("unfold", (_z(1, 4, 9), (1, 1, 4, 4), 2), {"stride": 0}, ValueError, r"stride"),
    ("unfold", (_z(1, 4, 9), (1, 1, 4, 4), 2), {"dilation": (1, 1, 1)}, ValueError,
     r"dilation"),
    ("unfold", (_z(1, 4, 9), (1, 1, 4, 4), 2), {"padding": -1}, ValueError, r"padding"),
    ("fold", (_z(1, 1, 4, 4), 2), {}, None, None),
    ("fold", (_z(4, 4), 2), {}, ValueError, r"dim|\(N"),
    ("fold", (_z(1, 1, 1, 4, 4), 2), {}, ValueError, r"dim|\(N"),
    ("fold", (_z(1, 1, 2, 2), 3), {}, ValueError, r"(?s)(?=.*\b2\b)(?=.*\b3\b)"),
    ("fold", (np.zeros((1, 1, 4, 4), "U1"), 2), {}, TypeError, r"dtype"),
    ("fold", (_z(1, 1, 4, 4), 0), {}, ValueError, r"kernel_size"),
    ("fold", (_z(1, 1, 4, 4), None), {}, TypeError, r"kernel_size"),
    ("fold", (_z(1, 1, 4, 4), 2), {"dilation": 0}, ValueError, r"dilation"),
    ("fold", (_z(1, 1, 4, 4), 2), {"padding": ((1, 1),)}, ValueError, r"padding"),
]


def test_grad_errors():
    failures = []
    for op, args, kw, exc, pattern in GRAD_ERRORS:
        label = f"grad.{op}({args[0].dtype} {args[0].shape}, {args[1:]}, {kw})"
        for who, module in (("axisops", axisops.grad), ("reference", ref.grad)):
            kind, got = outcome(getattr(module, op), *args, **kw)
            if exc is None:
                if kind != "ok":
                    failures.append(f"{who} {label}: raised {type(got).__name__}({got})")
            elif kind == "ok" or type(got) is not exc:
                what = "returned" if kind == "ok" else f"raised {type(got).__name__}({got})"
                failures.append(f"{who} {label}: {what}, expected {exc.__name__}")
            elif not re.search(pattern, str(got)):
                failures.append(f"{who} {label}: message {str(got)!r} does not match {pattern!r}")
    report(failures)


# ---------------------------------------------------------- the README's example

def conv2d_forward_backward(x, w, gy, *, stride=1, padding=0, dilation=1):
    """A 2-D convolution and its backward pass, with unfold, fold and matrix products.

    ``x`` is ``(N, C, H, W)``, ``w`` is ``(O, C, kh, kw)`` and ``gy``, the gradient
    of a loss with respect to the output, is ``(N, O, Ho, Wo)``; *stride*, *padding*
    and *dilation* are an int or a pair, as in ``torch.nn.functional.conv2d``.
    Returns ``(y, dx, dw)``: the output and the gradients of the loss with respect
    to ``x`` and ``w``.

    Forward: the columns of ``x`` are ``cols = unfold(x)``, ``(N, C*kh*kw, L)`` with
    ``L = Ho*Wo``, and the convolution is one matrix product with the flattened
    weights, ``y = w.reshape(O, -1) @ cols``. Backward: ``dw`` is ``gy @ cols.T``
    summed over the batch; ``dx`` is the matrix product ``w.reshape(O, -1).T @ gy``,
    ``(N, C*kh*kw, L)``, folded back onto ``x`` (``grad.unfold``, a ``fold``): each
    element of ``x`` gets the sum over every window that read it.
    """
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw_) = (np.broadcast_to(a, 2) for a in (stride, padding, dilation))
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw_ * (kw - 1) - 1) // sw + 1
    window = {"stride": stride, "padding": padding, "dilation": dilation}
    cols = axisops.unfold(x, (kh, kw), **window)                  # (N, C*kh*kw, L)
    w2 = w.reshape(o, c * kh * kw)                                # (O, C*kh*kw)
    y = (w2 @ cols).reshape(n, o, ho, wo)                         # forward
    g = gy.reshape(n, o, ho * wo)                                 # (N, O, L)
    dw = (g @ cols.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
    dx = axisops.grad.unfold(w2.T @ g, x.shape, (kh, kw), **window)
    return y, dx, dw


def conv2d_direct(x, w, gy, *, stride=1, padding=0, dilation=1):
    """The same three results by a loop over every output element (the oracle)."""
    (sh, sw), (ph, pw), (dh, dw_) = (np.broadcast_to(a, 2) for a in (stride, padding, dilation))
    _, _, h, wd = x.shape
    _, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    y, dxp, dw = np.zeros(gy.shape), np.zeros(xp.shape), np.zeros(w.shape)
    for b, oc, i, j in np.ndindex(*gy.shape):
        window = (b, slice(None), slice(i * sh, i * sh + dh * (kh - 1) + 1, dh),
                  slice(j * sw, j * sw + dw_ * (kw - 1) + 1, dw_))
        y[b, oc, i, j] = np.sum(xp[window] * w[oc])
        dw[oc] += gy[b, oc, i, j] * xp[window]
        dxp[window] += gy[b, oc, i, j] * w[oc]
    return y, dxp[:, :, ph:ph + h, pw:pw + wd], dw


@pytest.mark.parametrize("window", [{}, {"padding": 1}, {"stride": 2, "padding": (1, 2)},
                                    {"stride": (1, 2), "dilation": (2, 1), "padding": (2, 0)}],
                         ids=["plain", "padded", "strided", "dilated"])
def test_conv2d_forward_backward_matches_direct_loop(window):
    rng = np.random.default_rng(25)
    x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2))
    stride, padding, dilation = (np.broadcast_to(window.get(k, v), 2) for k, v in
                                 (("stride", 1), ("padding", 0), ("dilation", 1)))
    out = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                for n, k, s, p, d in zip((7, 6), (3, 2), stride, padding, dilation))
    gy = rng.standard_normal((2, 4) + out)
    got = conv2d_forward_backward(x, w, gy, **window)
    want = conv2d_direct(x, w, gy, **window)
    for name, a, b in zip(("y", "dx", "dw"), got, want):
        assert a.shape == b.shape, (name, a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=name)

"""Helpers that the gradients of several families share."""


from __future__ import annotations

import numpy as np

# PyTorch's convention for complex numbers: see axisops.grad.


def _is_complex(*values) -> bool:
    return any(np.iscomplexobj(v) for v in values)


def _exclusive_products(a: np.ndarray) -> np.ndarray:
    """Along axis 1, the product of the elements before each one (in order)."""
    out = np.ones_like(a)
    if a.shape[1] > 1:
        out[:, 1:] = np.cumprod(a[:, :-1], axis=1)
    return out


def _normal(a: np.ndarray) -> np.ndarray:
    """Where *a* is a normal float: finite, and neither 0 nor subnormal (what a
    running product that underflowed becomes)."""
    magnitude = np.abs(a)
    info = np.finfo(a.dtype)
    return (magnitude >= info.smallest_normal) & (magnitude <= info.max)


def _shape(x_shape) -> tuple[int, ...]:
    return tuple(int(s) for s in x_shape)


def _gather_g(g, expected, op):
    """(g in its working dtype, gradient dtype, working dtype), ``g`` checked against
    the forward's output shape. Non-float ``g`` becomes float64; float16 works in float32."""
    g = np.asarray(g)
    if g.shape != tuple(expected):
        raise ValueError(f"{op}: g has shape {g.shape}, expected the forward's output shape "
                         f"{tuple(expected)}")
    if g.dtype.kind not in "biuf":
        raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
    dtype = g.dtype if g.dtype.kind == "f" else np.dtype(np.float64)
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    return g.astype(work, copy=False), dtype, work

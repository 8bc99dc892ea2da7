"""Typical user code against axisops' public signatures, for the type checker.

mypy checks this file (``[tool.mypy]`` in pyproject.toml); nothing here runs. The
functions are never called: a call that mypy accepts here is one the hints allow,
and each ``type: ignore[...]`` line is a misuse that mypy must reject
(``warn_unused_ignores`` fails the check if the hint lets it through).
"""
from __future__ import annotations

import numpy as np

import axisops
from axisops.typing import Array, ArrayOrScalar, Axis


def reductions(x: Array, axis: Axis) -> list[ArrayOrScalar]:
    out = [axisops.sum(x), axisops.sum(x, axis=(0, 1), keepdims=True, dtype=np.float64),
           axisops.prod([[1, 2], [3, 4]], 1), axisops.mean(x, axis, dtype="float32"),
           axisops.max(x, -1), axisops.min(x, None, keepdims=True),
           axisops.argmax(x, axis=(0, 2), select_last_index=True, index_dtype=np.int32),
           axisops.argmin(x)]
    out.extend(axisops.unravel(axisops.argmax(x, axis=(0, 2)), x.shape, (0, 2)))
    axisops.sum(x, axis="0")  # type: ignore[arg-type]
    axisops.argmax(x, 0, False)  # type: ignore[call-arg]
    return out


def scans(x: Array) -> Array:
    values, indices = axisops.cummax(x, axis=1, index_dtype=np.int32)
    low = axisops.cummin(x).values
    total = axisops.cumsum(x, 0, dtype=np.int64, exclusive=True, reverse=True)
    axisops.cumsum(x, axis=(0, 1))  # type: ignore[arg-type]
    return values + indices + low + total + axisops.cumprod(x) + axisops.logcumsumexp(x, -1)


def gathers(x: Array, idx: Array) -> Array:
    a = axisops.take(x, [0, 2], axis=1, mode="wrap")
    b = axisops.take_along_axis(x, idx, -1, mode="fill", fill_value=np.nan)
    c = axisops.gather_nd(x, idx, batch_dims=1)
    d = axisops.scatter(x, idx, np.ones(3), 0, reduce="max")
    axisops.take(x, idx, mode="nearest")  # type: ignore[arg-type]
    axisops.scatter(x, idx, 1.0, 0, reduce="sum")  # type: ignore[arg-type]
    return a + b + c + d


def windows(image: Array) -> Array:
    cols = axisops.unfold(image, 3, dilation=(1, 2), padding=1, stride=2)
    back = axisops.fold(cols, (32, 32), (3, 3), padding=1, stride=2, channels_last=False)
    pooled, where = axisops.max_pool(image, 2, return_indices=True)
    mean: Array = axisops.avg_pool(image, (2, 2), padding=((0, 1), (1, 0)))
    alone: Array = axisops.max_pool(image, 3, stride=2, ceil_mode=True)
    return back + pooled + where + mean + alone


def gradients(g: Array, x: Array, idx: Array) -> tuple[Array, ...]:
    gx, gu = axisops.grad.scatter(g, x, idx, np.ones(3), 0, reduce="add")
    return (axisops.grad.sum(g, x.shape, axis=1), axisops.grad.prod(g, x, (0, 1)),
            axisops.grad.max(g, x), axisops.grad.cummax(g, idx, x.shape, 0),
            axisops.grad.cumsum(g, (4, 5), 1, exclusive=True),
            axisops.grad.take(g, idx, x.shape, 0, mode="clip"),
            axisops.grad.unfold(g, (1, 3, 8, 8), 3, padding=1),
            axisops.grad.fold(g, (2, 2)), gx, gu,
            axisops.grad.max_pool(g, idx, (1, 3, 8, 8), 2),
            axisops.grad.avg_pool(g, (1, 3, 8, 8), 2, count_include_pad=False))


def settings() -> int:
    return axisops.thread_limit(2) + axisops.pool_limit(1 << 20)

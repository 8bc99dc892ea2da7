"""What a benchmark workload is, and the helpers every family's workloads share."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .systems import Factory, Inputs

# --------------------------------------------------------------------------
# Workloads


@dataclass
class Workload:
    """One benchmark: an operator on inputs, computed by several systems.

    Parameters
    ----------
    name : str
        Row label, e.g. ``"argmax axis=0"``.
    op : str
        The axisops operator measured (what ``--ops`` filters on).
    setup : callable
        ``setup(shape, rng) -> tuple of inputs``.
    systems : dict
        System name -> factory; ``factory(*inputs)`` returns a runner (a
        callable of no arguments).  Only the runner is timed.
    check : callable, optional
        ``check(result, expected) -> bool``; the default (:func:`default_check`)
        compares integers exactly and floats with a tolerance fit for float32
        sums, and a tuple result against a non-tuple reference by its first
        element.
    note : str, optional
        A sentence printed under the workload's verdict (e.g. that the systems
        do not compute the same outputs).
    full_reference : str, optional
        A system whose whole (tuple) result every other system's tuple result is
        also checked against, for workloads where the reference system (NumPy)
        computes only part of the result: ``"torch"`` for ``cummax``, whose
        indices NumPy does not give.
    bytes_read : callable, optional
        ``bytes_read(inputs) -> int``, the bytes an operator reads, for
        workloads that do not read all of their inputs (``take``: the rows of
        ``x`` that the indices pick, and the indices).  Default: every input's
        ``nbytes``.
    quick : bool, optional
        Whether ``axisops bench --quick`` (the CI bench) runs it when no ``--ops``
        are named (default True); a family with many workloads runs a few there.
    """

    name: str
    op: str
    setup: Callable[[tuple[int, ...], np.random.Generator], Inputs]
    systems: dict[str, Factory]
    check: Callable[[Any, Any], bool] | None = None
    note: str = ""
    full_reference: str = ""
    bytes_read: Callable[[Inputs], int] | None = None
    quick: bool = True


def random_float32(shape: tuple[int, ...], rng: np.random.Generator) -> Inputs:
    """One C-contiguous float32 array of uniform [0, 1) values."""
    return (rng.random(shape, dtype=np.float32),)


def _axisops_fn(op: str) -> Callable:
    import axisops

    return getattr(axisops, op)


def _onnx_axes(axis) -> np.ndarray:
    return np.asarray(axis if isinstance(axis, tuple) else (axis,), dtype=np.int64)


def exact_check(result: Any, expected: Any) -> bool:
    """Same shape and the same values exactly (a gather moves values, it computes none)."""
    result, expected = np.asarray(result), np.asarray(expected)
    return result.shape == expected.shape and bool(np.array_equal(result, expected))


def float32_sum_check(result: Any, expected: Any) -> bool:
    """Same shape; values equal up to float32 rounding of sums added in another order.

    ``rtol`` 1e-5 and an ``atol`` of 1e-5 times the largest ``|expected|``: a sum of
    a few float32 terms taken in a different order differs from NumPy's in the
    last bits, and the absolute part covers sums that cancel to near zero.
    """
    result, expected = np.asarray(result), np.asarray(expected)
    if result.shape != expected.shape:
        return False
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    return bool(np.allclose(result, expected, rtol=1e-5, atol=1e-5 * scale, equal_nan=True))

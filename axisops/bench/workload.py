"""What a benchmark workload is, and the helpers every family's workloads share."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

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
    """

    name: str
    op: str
    setup: Callable[[Tuple[int, ...], np.random.Generator], Inputs]
    systems: Dict[str, Factory]
    check: Optional[Callable[[Any, Any], bool]] = None
    note: str = ""
    full_reference: str = ""
    bytes_read: Optional[Callable[[Inputs], int]] = None


def random_float32(shape: Tuple[int, ...], rng: np.random.Generator) -> Inputs:
    """One C-contiguous float32 array of uniform [0, 1) values."""
    return (rng.random(shape, dtype=np.float32),)


def _axisops_fn(op: str) -> Callable:
    import axisops

    return getattr(axisops, op)


def _onnx_axes(axis) -> np.ndarray:
    return np.asarray(axis if isinstance(axis, tuple) else (axis,), dtype=np.int64)

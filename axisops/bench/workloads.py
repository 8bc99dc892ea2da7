"""The benchmark's workloads, in table order, and how ``--ops`` selects them."""
from __future__ import annotations

from collections.abc import Sequence

from .gather import scatter_add_workload, take_along_axis_workload, take_workload
from .missing import nan_workload, xarray_workload
from .order import ORDER_WORKLOADS
from .pool import moving_workload, pool_workload
from .reduce import reduction_workload
from .scan import scan_workload
from .window import fold_workload, unfold_workload
from .workload import Workload

WORKLOADS: list[Workload] = [
    reduction_workload("argmax", 0),
    reduction_workload("argmax", 1),
    reduction_workload("argmax", -1),
    reduction_workload("sum", 1),
    reduction_workload("sum", (0, 2)),
    reduction_workload("max", -1),
    scan_workload("cummax", 1),
    scan_workload("cummax", -1),
    scan_workload("cumsum", 1),
    take_workload(1),
    take_along_axis_workload(1),
    scatter_add_workload(1),
    unfold_workload(),
    unfold_workload(channels_last=True),
    fold_workload(),
    nan_workload("nansum", 1),
    nan_workload("nanmean", -1),
    nan_workload("nanstd", 1),
    nan_workload("nanmax", -1),
    nan_workload("nanargmax", 1),
    nan_workload("count", 1),
    nan_workload("nancumsum", 1),
    pool_workload("max_pool"),
    pool_workload("max_pool", channels_last=True),
    pool_workload("avg_pool"),
    moving_workload("moving_mean", 5),
    moving_workload("moving_mean", 1000),
    moving_workload("moving_max", 50),
    moving_workload("moving_std", 20),
    xarray_workload("mean", "time"),
    xarray_workload("std", "lon"),
    xarray_workload("idxmax", "time"),
    *ORDER_WORKLOADS,
]


def operator_names() -> list[str]:
    """The operator names that ``--ops`` accepts, in table order (``xarray``: the
    DataArray workloads of the accessor)."""
    return list(dict.fromkeys(w.op for w in WORKLOADS))


def select(ops: Sequence[str] | None = None, quick: bool = False) -> list[Workload]:
    """The workloads of the operators ``ops`` (all when ``None``; with ``quick``,
    those marked for ``--quick``).

    Raises ``ValueError`` naming an operator that has no workload.
    """
    if not ops:
        return [w for w in WORKLOADS if w.quick or not quick]
    known = operator_names()
    unknown = [op for op in ops if op not in known]
    if unknown:
        raise ValueError(
            f"no benchmark workload for operator(s) {', '.join(unknown)}; "
            f"expected some of: {', '.join(known)}"
        )
    return [w for w in WORKLOADS if w.op in ops]

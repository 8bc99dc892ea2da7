"""What the dask test files share: the scheduler their graphs run on.

The graphs run on dask's synchronous scheduler by default: the same graph, the same
chunk functions and the same kernels as on the threaded scheduler, without a thread
pool's hand-offs, which took a third of these files' time (their graphs are
thousands of tiny tasks). The cases of the ``uneven`` chunking, marked ``threads``
by :func:`chunk_params`, run on the threaded scheduler, so that kernels called
from several threads at once stay tested on every family; each file also runs on a
cluster of worker processes.
"""
from __future__ import annotations

import pytest

dask = pytest.importorskip("dask")

#: the chunking whose cases run on the threaded scheduler
THREADED = "uneven"


def chunk_params(chunkings) -> list:
    """pytest params of the names of *chunkings*; the ``uneven`` one marked ``threads``."""
    return [pytest.param(name, id=name, marks=[pytest.mark.threads] if name == THREADED else [])
            for name in chunkings]


@pytest.fixture(autouse=True)
def scheduler(request):
    """dask's scheduler for the test: ``threads`` if it is so marked, else ``sync``."""
    name = "threads" if request.node.get_closest_marker("threads") else "sync"
    with dask.config.set(scheduler=name):
        yield name


def forbid_kernels(monkeypatch) -> None:
    """Make every CPU kernel call raise ``AssertionError`` for the rest of the test.

    Kernels run through ``_jit.run`` or through a compiled entry point a plan found
    with ``_jit.entry_point`` at its first call: plans are made afresh (none holds
    an entry point bound earlier), and both functions raise wherever the library's
    modules took them by name; so do the compiled entries of the common
    reductions, scans and moving windows (``axisops._fast``) and of the small
    sorts and top_k (``kernels.rows.rows_finisher``, ``rows_packer``,
    ``axisops._fast_order.sort``, ``top_k``)."""
    import sys

    from axisops import _fast, _fast_order, _jit, _plan
    from axisops.kernels import rows as kernels_rows

    def forbidden(*args, **kwargs):
        raise AssertionError("a kernel ran while the graph was built")

    gates = (_jit.run, _jit.entry_point)
    monkeypatch.setattr(_plan.PlanCache, "get", lambda self, key: None)
    monkeypatch.setattr(_plan.PlanCache, "put", lambda self, key, plan: plan)
    for entry in ("value", "arg", "moments", "scan", "cum_extreme", "moving", "take_along",
                  "take", "scatter"):
        monkeypatch.setattr(_fast, entry, forbidden)
    for call in _fast.SCALAR_CALLS.values():  # the wrappers' entries of 1-D reductions
        for table in (call.entries, call.lanes):
            for key, (_, *rest) in list(table.items()):
                monkeypatch.setitem(table, key, (forbidden, *rest))
    for factory in ("rows_finisher", "rows_packer"):  # the small sorts' compiled entries
        monkeypatch.setattr(kernels_rows, factory, lambda dtype_str: forbidden)
    # entries offered before the plan's checks: declined, so that the plan checks the
    # call (its errors) and runs its gated kernels
    monkeypatch.setattr(_fast, "moving_rows", lambda *args: None)
    for entry in ("sort", "top_k"):  # the small sort's and top_k's (a compiled finish)
        monkeypatch.setattr(_fast_order, entry, lambda *args: None)
    for name, module in list(sys.modules.items()):
        if name == "axisops" or name.startswith("axisops."):
            for attr, value in list(vars(module).items()):
                if any(value is gate for gate in gates):
                    monkeypatch.setattr(module, attr, forbidden)

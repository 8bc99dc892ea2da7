"""The order-statistics workloads: sorting, selection, quantiles, ranks and the
moving order statistics.

The arrays are the family's own, not the bench's 3-D shape (:func:`order_shapes`):
in the full bench a vector of 2**20 elements, a (1024, 1024) matrix, a (4096,
1024) matrix for ``top_k`` along rows and the moving windows' (256, 4096) matrix;
smaller ones with ``--quick``. Peers: NumPy (``np.sort``,
``np.argsort(kind="stable")``, ``np.median``, ``np.nanmedian``, ``np.quantile``,
``np.partition`` for ``top_k`` and ``kthvalue``; the moving ones as
``sliding_window_view`` reductions, NumPy's reference only), PyTorch
(``torch.sort(stable=True)``, ``torch.topk``, ``torch.kthvalue``,
``torch.quantile``), bottleneck (``median``, ``nanmedian``, ``nanrankdata``,
``move_median``, ``move_rank``), numbagg (``nanmedian``, ``nanquantile``),
SciPy (``scipy.stats.rankdata``) and pandas (``rolling().median()`` and
``.quantile()``).

Only :data:`QUICK_NAMES` run with ``--quick`` (the CI bench); ``--ops`` names
the others.
"""
from __future__ import annotations

import numpy as np

from .missing import NAN_FRACTION
from .systems import FULL_SHAPE, QUICK_SHAPE, _bottleneck, _numbagg, _torch
from .workload import Workload, _axisops_fn, exact_check

#: The family's arrays in the full bench and with ``--quick``: the vector's
#: length, the matrix, the matrix of top_k along rows, and the moving windows' matrix.
ORDER_FULL = {"vector": (1 << 20,), "matrix": (1024, 1024), "rows": (4096, 1024),
              "moving": (256, 4096)}
ORDER_QUICK = {"vector": (1 << 16,), "matrix": (256, 256), "rows": (1024, 256),
               "moving": (64, 1024)}
#: The moving order statistics' window, and the quantile of moving_quantile.
MOVING_WINDOW = 100
MOVING_Q = 0.9
#: The three quantiles of the workloads with a vector q.
Q3 = (0.1, 0.5, 0.9)


def order_shapes(shape: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """The family's arrays for the bench's *shape*: :data:`ORDER_FULL`,
    :data:`ORDER_QUICK`, else, for a test's small ``(a, b, c)``: a vector of
    ``a * b * c``, matrices ``(a * b, c)``, and the moving windows' rows
    ``(a * b, c)``."""
    shape = tuple(shape)
    if shape == FULL_SHAPE:
        return dict(ORDER_FULL)
    if shape == QUICK_SHAPE:
        return dict(ORDER_QUICK)
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    return {"vector": (rows * cols,), "matrix": (rows, cols), "rows": (rows, cols),
            "moving": (rows, cols)}


def _array(kind: str, dtype=np.float32, nan: bool = False, min_length: int = 0,
           window: int = 0):
    """A setup: uniform [0, 1) values of ``dtype`` in the array ``kind`` of
    :func:`order_shapes` (lanes of at least ``min_length``, rows of at least twice
    ``window``), with :data:`NAN_FRACTION` NaN when ``nan``."""
    def setup(shape, rng):
        dims = list(order_shapes(shape)[kind])
        dims[-1] = max(dims[-1], min_length, 2 * window)
        x = rng.random(tuple(dims), dtype=dtype)
        if nan:
            x[rng.random(x.shape, dtype=np.float32) < NAN_FRACTION] = np.nan
        return (x,)
    return setup


def _dtype_text(dtype) -> str:
    return "" if np.dtype(dtype) == np.float32 else f" {np.dtype(dtype).name}"


# ------------------------------------------------------------------ sort, argsort


def sort_workload(op: str, axis: int, dtype=np.float32, vector: bool = False) -> Workload:
    """``sort(x, axis)`` or ``argsort(x, axis)`` of a vector (axis 0) or of the
    (1024, 1024) matrix, against ``np.sort``/``np.argsort(kind="stable")`` and
    ``torch.sort(stable=True)``."""
    kind = "vector" if vector else "matrix"
    is_sort = op == "sort"

    def axisops_factory(x):
        fn = _axisops_fn(op)
        return lambda: fn(x, axis)

    def numpy_factory(x):
        if is_sort:
            return lambda: np.sort(x, axis=axis)
        return lambda: np.argsort(x, axis=axis, kind="stable")

    def torch_factory(x):
        torch = _torch()
        t = torch.from_numpy(x)
        if is_sort:
            return lambda: torch.sort(t, dim=axis, stable=True)
        return lambda: torch.argsort(t, dim=axis, stable=True)

    where = "of a vector" if vector else f"axis={axis}"
    return Workload(
        name=f"{op} {where}{_dtype_text(dtype)}",
        op=op,
        setup=_array(kind, dtype),
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory},
        check=exact_check if not is_sort else _sort_check,
        note=(f"uniform [0, 1) {np.dtype(dtype).name}, "
              + ("2**20 elements" if vector else "(1024, 1024)") + " in the full bench"
              + ("; torch.sort writes the int64 indices too (values checked)" if is_sort
                 else "; stable everywhere, so the positions are checked exactly")),
    )


def _sort_check(result, expected) -> bool:
    if isinstance(result, tuple):  # torch.sort: (values, indices)
        result = result[0]
    return exact_check(result, expected)


# ------------------------------------------------------------ median and quantiles


def _q_text(q) -> str:
    return f"q=[{', '.join(f'{v:g}' for v in q)}]" if isinstance(q, tuple) else f"q={q:g}"


def quantile_workload(op: str, axis, q=None) -> Workload:
    """``median``, ``nanmedian`` (10 % NaN) or ``quantile(x, q)`` along the last
    or first axis of the (1024, 1024) matrix, or of the whole vector (``axis=None``)."""
    nan = op.startswith("nan")
    vector = axis is None
    is_median = op.endswith("median")
    q_array = None if q is None else np.asarray(q, dtype=np.float64)

    def axisops_factory(x):
        fn = _axisops_fn(op)
        if is_median:
            return lambda: fn(x, axis)
        return lambda: fn(x, q_array, axis)

    def numpy_factory(x):
        fn = getattr(np, op)
        if is_median:
            return lambda: fn(x, axis=axis)
        return lambda: fn(x, q_array, axis=axis)

    def torch_factory(x):
        torch = _torch()
        t = torch.from_numpy(x)
        fn = torch.nanquantile if nan else torch.quantile
        qt = torch.tensor(0.5 if is_median else q, dtype=t.dtype)
        return lambda: fn(t, qt, dim=axis)

    def bottleneck_factory(x):
        fn = getattr(_bottleneck(), op)
        return lambda: fn(x, axis=axis)

    def numbagg_factory(x):
        nb = _numbagg()
        fn = getattr(nb, "nanmedian" if is_median else "nanquantile", None)
        if fn is None:
            raise NotImplementedError(f"numbagg has no {'nanmedian' if is_median else 'nanquantile'}")
        if is_median:
            return lambda: fn(x, axis=axis)
        quantiles = list(q) if isinstance(q, tuple) else q
        return lambda: fn(x, quantiles, axis=axis)

    what = "of the whole vector" if vector else f"axis={axis}"
    name = f"{op} {what}" if q is None else f"{op} {_q_text(q)} {what}"
    return Workload(
        name=name + (", 10% NaN" if nan else ""),
        op=op,
        setup=_array("vector" if vector else "matrix", nan=nan),
        # numbagg has nanmedian only, which compiles on every process's first call
        # (about 9 s): on nanmedian's workloads and the quantiles', not the plain median's
        # (bottleneck's median is there), so --quick's median stays quick
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory,
                 **({} if op == "quantile" else {"bottleneck": bottleneck_factory}),
                 **({} if op == "median" else {"numbagg": numbagg_factory})},
        check=_value_check,
        note=("float32, " + ("2**20 elements" if vector else "(1024, 1024)")
              + " in the full bench; torch: " + ("torch.nanquantile" if nan else "torch.quantile")
              + ("(0.5) (torch.median gives the lower middle element of an even count, "
                 "not NumPy's median)" if is_median else "")
              + "; torch's quantile refuses more than 2**24 elements"
              + ("; numbagg's nanquantile computes the same on NaN-free data"
                 if op == "quantile" else "")),
    )


def _value_check(result, expected) -> bool:
    """Same shape; values to float32 rounding (relative, and absolute in units of
    the largest finite ``|expected|``), NaN where NaN."""
    result, expected = np.asarray(result), np.asarray(expected)
    if result.shape != expected.shape:
        return False
    finite = np.abs(expected[np.isfinite(expected)])
    scale = float(finite.max()) if finite.size else 0.0
    return bool(np.allclose(result, expected, rtol=1e-5, atol=1e-6 * scale, equal_nan=True))


# ------------------------------------------------------------------ top_k, kthvalue


def top_k_workload(k: int, rows: bool = False) -> Workload:
    """``top_k(x, k)`` of the vector, or along the rows of the (4096, 1024) matrix,
    against ``np.partition`` + a sort of the ``k`` and ``torch.topk``."""
    kind = "rows" if rows else "vector"

    def axisops_factory(x):
        fn = _axisops_fn("top_k")
        return lambda: fn(x, k)

    def numpy_factory(x):
        n = x.shape[-1]

        def run():
            top = np.partition(x, n - k, axis=-1)[..., n - k:]
            return np.flip(np.sort(top, axis=-1), axis=-1)
        return run

    def torch_factory(x):
        torch = _torch()
        t = torch.from_numpy(x)
        return lambda: torch.topk(t, k, dim=-1)

    return Workload(
        name=f"top_k k={k} " + ("along rows" if rows else "of a vector"),
        op="top_k",
        setup=_array(kind, min_length=4 * k),
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory},
        note=("float32, " + ("(4096, 1024)" if rows else "2**20 elements")
              + " in the full bench; values and int64 indices (NumPy: np.partition and a "
              "sort of the k, values only; the values are checked: tied values may come "
              "from other positions)"),
    )


def kthvalue_workload(k: int, vector: bool = False) -> Workload:
    """``kthvalue(x, k)`` along the rows of the (1024, 1024) matrix or of the
    vector, against ``np.partition`` and ``torch.kthvalue``."""
    def axisops_factory(x):
        fn = _axisops_fn("kthvalue")
        return lambda: fn(x, k)

    def numpy_factory(x):
        return lambda: np.partition(x, k - 1, axis=-1)[..., k - 1]

    def torch_factory(x):
        torch = _torch()
        t = torch.from_numpy(x)
        return lambda: torch.kthvalue(t, k, dim=-1)

    return Workload(
        name=f"kthvalue k={k} " + ("of a vector" if vector else "axis=-1"),
        op="kthvalue",
        setup=_array("vector" if vector else "matrix", min_length=4 * k),
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory},
        note=("float32, " + ("2**20 elements" if vector else "(1024, 1024)")
              + " in the full bench; values and int64 indices (NumPy: np.partition, values "
              "only; the values are checked)"),
    )


# ------------------------------------------------------------------------- rank


def numpy_rank(x: np.ndarray) -> np.ndarray:
    """Average ranks from 1 along the last axis, NaN for NaN and not counted
    (bottleneck's ``nanrankdata``): each row sorted once, and the mean of the
    first and last place of each value found by ``np.searchsorted``."""
    out = np.full(x.shape, np.nan)
    rows, flat = x.reshape(-1, x.shape[-1]), out.reshape(-1, x.shape[-1])
    for row, dest in zip(rows, flat):
        keep = ~np.isnan(row)
        s = np.sort(row[keep])
        v = row[keep]
        dest[keep] = (np.searchsorted(s, v, "left") + np.searchsorted(s, v, "right") + 1) / 2
    return out


def rank_workload() -> Workload:
    """``rank(x)`` (average ties) along the rows of the (1024, 1024) matrix with
    10 % NaN, against bottleneck's ``nanrankdata`` and ``scipy.stats.rankdata``."""
    def axisops_factory(x):
        fn = _axisops_fn("rank")
        return lambda: fn(x, -1)

    def numpy_factory(x):
        return lambda: numpy_rank(x)

    def bottleneck_factory(x):
        fn = _bottleneck().nanrankdata
        return lambda: fn(x, axis=-1)

    def scipy_factory(x):
        from scipy.stats import rankdata

        return lambda: rankdata(x, axis=-1, nan_policy="omit")

    return Workload(
        name="rank axis=-1, 10% NaN",
        op="rank",
        setup=_array("matrix", nan=True),
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 "bottleneck": bottleneck_factory, "scipy": scipy_factory},
        check=_value_check,
        note=("average ranks from 1, float64, NaN for NaN (bottleneck nanrankdata; SciPy "
              "rankdata(nan_policy='omit')); NumPy: a sort and np.searchsorted per row, "
              "a reference"),
    )


# ------------------------------------------------------------ moving order statistics


def numpy_moving_order(x: np.ndarray, op: str, window: int, q: float = MOVING_Q) -> np.ndarray:
    """The trailing moving median, quantile or rank along the last axis in NumPy
    (no NaN in ``x``): the first ``window - 1`` positions NaN, the others a
    ``sliding_window_view`` reduction, a block of rows at a time (O(window) per
    element, a reference)."""
    from numpy.lib.stride_tricks import sliding_window_view

    out = np.full(x.shape, np.nan, x.dtype)
    block = max(1, (1 << 22) // max(1, x.shape[-1] * window))
    for start in range(0, x.shape[0], block):
        windows = sliding_window_view(x[start:start + block], window, axis=-1)
        if op == "moving_median":
            reduced = np.median(windows, axis=-1)
        elif op == "moving_quantile":
            reduced = np.quantile(windows, q, axis=-1)
        else:  # bottleneck's move_rank: the latest element's rank scaled to [-1, 1]
            last = windows[..., -1:]
            less = np.sum(windows < last, axis=-1)
            equal = np.sum(windows == last, axis=-1)
            reduced = 2 * (0.5 * (2 * less + equal - 1) / (window - 1) - 0.5)
        out[start:start + block, window - 1:] = reduced
    return out


def moving_order_workload(op: str, window: int = MOVING_WINDOW) -> Workload:
    """``moving_median``, ``moving_quantile(q=0.9)`` or ``moving_rank`` with trailing
    windows along the rows of a float32 matrix (no NaN), against bottleneck's
    ``move_median``/``move_rank`` and pandas' rolling median and quantile (bottleneck
    has no moving quantile; pandas' rolling rank is another statistic, not scaled)."""
    short = op.removeprefix("moving_")
    q = {"q": MOVING_Q} if op == "moving_quantile" else {}

    def axisops_factory(x):
        fn = _axisops_fn(op)
        if q:
            return lambda: fn(x, window, MOVING_Q)
        return lambda: fn(x, window)

    def numpy_factory(x):
        return lambda: numpy_moving_order(x, op, window)

    def bottleneck_factory(x):
        fn = getattr(_bottleneck(), f"move_{short}")
        return lambda: fn(x, window, axis=-1)

    def pandas_factory(x):
        import pandas

        frame = pandas.DataFrame(x.T)  # the rows as columns, as a time series would be
        rolling = frame.rolling(window)
        if q:
            return lambda: rolling.quantile(MOVING_Q).to_numpy().T
        return lambda: rolling.median().to_numpy().T

    return Workload(
        name=f"{op} window={window}" + (f" q={MOVING_Q:g}" if q else ""),
        op=op,
        setup=_array("moving", window=window),
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 **({} if q else {"bottleneck": bottleneck_factory}),
                 **({} if op == "moving_rank" else {"pandas": pandas_factory})},
        check=_moving_check,
        note=(f"trailing windows of {window} along the rows of a float32 matrix "
              f"{ORDER_FULL['moving']} in the full bench, {ORDER_QUICK['moving']} with "
              "--quick; pandas: rolling along the columns of a DataFrame of the transposed "
              "matrix (float64 results); NumPy: sliding_window_view + "
              + {"moving_median": "np.median", "moving_quantile": "np.quantile",
                 "moving_rank": "counts of smaller and equal values"}[op]
              + " (O(window) per element, a reference)"),
    )


def _moving_check(result, expected) -> bool:
    """NaN where NaN; values to float32 rounding."""
    result, expected = np.asarray(result), np.asarray(expected)
    if result.shape != expected.shape:
        return False
    return bool(np.allclose(result, expected, rtol=1e-5, atol=1e-6, equal_nan=True))


# ------------------------------------------------------------------ the family's list

ORDER_WORKLOADS: list[Workload] = [
    *(sort_workload(op, axis, dtype, vector)
      for op in ("sort", "argsort")
      for dtype in (np.float32, np.float64)
      for axis, vector in ((0, True), (1, False), (0, False))),
    *(quantile_workload(op, axis) for op in ("median", "nanmedian") for axis in (-1, 0, None)),
    *(quantile_workload("quantile", axis, q) for q in (0.9, Q3) for axis in (-1, 0, None)),
    top_k_workload(10),
    top_k_workload(1000),
    top_k_workload(10, rows=True),
    kthvalue_workload(100),
    kthvalue_workload(1000, vector=True),
    rank_workload(),
    moving_order_workload("moving_median"),
    moving_order_workload("moving_rank"),
    moving_order_workload("moving_quantile"),
]

#: The family's workloads that ``--quick`` runs (a few seconds in all).
QUICK_NAMES = frozenset({"sort axis=1", "median axis=-1", "top_k k=10 of a vector",
                         "moving_median window=100"})
for _workload in ORDER_WORKLOADS:
    _workload.quick = _workload.name in QUICK_NAMES

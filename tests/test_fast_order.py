"""The compiled call path of the small median and quantile (``axisops._fast_order``):
the planned path's bits (values, signs of zeros, dtypes, shapes, NumPy scalars),
NumPy's where NumPy is the contract, and a hand-back to the planned path for what
it does not take (its errors and warnings)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import axisops
from axisops import _fast_order as F
from axisops import order as O

DTYPES = (np.float64, np.float32, np.int32, np.int64)
QS = (0.0, 0.1, 0.25, 0.5, 0.9, 1.0, 1 / 3)


def _lanes(dtype, n: int, seed: int) -> np.ndarray:
    """(3, n) lanes with ties, signed zeros, NaN, infinities (or extreme integers)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        a = rng.integers(-5, 5, (3, n)).astype(dtype)
        a[0, rng.random(n) < 0.3] = np.iinfo(dtype).max    # the greatest key: not NaN
        return a
    a = np.round(rng.standard_normal((3, n)), 1).astype(dtype)
    a[rng.random(a.shape) < 0.2] = 0.0
    a[rng.random(a.shape) < 0.3] *= -1                        # -0.0 among the zeros
    a[1, rng.random(n) < 0.2] = np.nan                        # lane 1: NaN
    a[2, rng.random(n) < 0.2] = np.inf
    a[2, rng.random(n) < 0.1] = -np.inf
    return a


def _planned(monkeypatch):
    """The planned path: the entries switched off."""
    monkeypatch.setattr(F, "median", lambda *a: None)
    monkeypatch.setattr(F, "quantile", lambda *a: None)


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    if want.dtype.kind == "f":  # the signs of zeros (not of NaN: the contract leaves them)
        number = ~np.isnan(want)
        assert np.array_equal(np.signbit(got[number]), np.signbit(want[number])), (got, want)


def _calls(a):
    """Every call the entries take on *a*: (function, args, kwargs)."""
    out = []
    for axis in (None, -1, a.ndim - 1):
        for op in ("median", "nanmedian"):
            out.append((op, (), {"axis": axis}))
        if a.dtype.kind == "f":
            for op in ("quantile", "nanquantile"):
                out += [(op, (q,), {"axis": axis}) for q in QS]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 64, 101, 1000])
def test_entries_give_the_planned_paths_bits(dtype, n, monkeypatch):
    warnings.simplefilter("ignore", RuntimeWarning)
    taken = 0
    for seed in range(3):
        lanes = _lanes(dtype, n, seed)
        for a in (lanes, lanes[0], np.asfortranarray(lanes)):  # F order: copied to C first
            results = []
            for op, args, kwargs in _calls(a):
                entry = F.median if op.endswith("median") else F.quantile
                method = ("linear",) if args else ()
                taken += entry(a, *args, kwargs["axis"], *method, False,
                               op.startswith("nan")) is not None
                results.append(getattr(axisops, op)(a, *args, **kwargs))
            with monkeypatch.context() as m:
                _planned(m)
                for (op, args, kwargs), got in zip(_calls(a), results):
                    _same(got, getattr(axisops, op)(a, *args, **kwargs))
    assert taken > len(_calls(_lanes(dtype, n, 0))) * 3  # most calls take the entries


def test_numpy_values_of_signed_zeros():
    """A middle -0.0 is NumPy's mean of it: +0.0 (a sum starts at +0.0), on both paths."""
    for a in ([-0.0], [-0.0, -0.0], [-0.0, np.nan], [-0.0, -0.0, np.nan, 1.0, -1.0]):
        a = np.array(a)
        for op in ("median", "nanmedian"):
            want = getattr(np, op)(a)
            _same(getattr(axisops, op)(a), want)
            _same(getattr(axisops, op)(a[None], axis=1), getattr(np, op)(a[None], axis=1))
    _same(axisops.quantile(np.array([-0.0, -0.0]), 0.5), np.quantile(np.array([-0.0, -0.0]), 0.5))


def test_all_nan_lanes_warn_as_numpy():
    a = np.array([[np.nan, np.nan], [1.0, 2.0]])
    for op, args in (("nanmedian", ()), ("nanquantile", (0.3,))):
        with pytest.warns(RuntimeWarning, match="All-NaN"):
            got = getattr(axisops, op)(a, *args, axis=1)
        _same(got, np.array([np.nan, getattr(np, op)(a[1], *args)]))
        with pytest.warns(RuntimeWarning, match="All-NaN"):
            got = getattr(axisops, op)(a[0], *args)
        assert type(got) is np.float64 and np.isnan(got)
    # a NaN that is a result, not an empty lane: NumPy's "invalid value", not "All-NaN"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _same(axisops.nanmedian(np.array([-np.inf, np.inf, np.nan])), np.float64(np.nan))
    assert not any("All-NaN" in str(w.message) for w in seen)


@pytest.mark.parametrize("call", [
    lambda a: F.median(a, 0, False, False),                       # not the last axis
    lambda a: F.median(a, (1,), False, False),                    # a tuple
    lambda a: F.median(a, 1, True, False),                        # keepdims
    lambda a: F.median(np.asfortranarray(a.reshape(3, 2, 2)), 2, False, False),  # 3-D F order
    lambda a: F.median(a.astype(np.float16), 1, False, False),    # a dtype left out
    lambda a: F.median(np.empty((2, 0)), 1, False, False),        # empty
    lambda a: F.median(np.ones(F.MAX_SIZE + 1), None, False, False),
    lambda a: F.quantile(a, 1, 1, "linear", False, False),        # an integer q
    lambda a: F.quantile(a, np.float64(0.5), 1, "linear", False, False),  # not weak
    lambda a: F.quantile(a, 0.5, 1, "nearest", False, False),
    lambda a: F.quantile(a, 1.5, 1, "linear", False, False),      # the planned path raises
    lambda a: F.quantile(a.astype(np.int64), 0.5, 1, "linear", False, False),
])
def test_what_the_entries_hand_back(call):
    assert call(np.arange(12.0).reshape(3, 4)) is None


def test_quickselect_worst_cases():
    """Sorted, reversed, all equal and organ-pipe lanes: the heap-sort fallback
    keeps the answer (and the time) right."""
    n = 4001
    ramp = np.arange(n, dtype=np.float64)
    for a in (ramp, ramp[::-1].copy(), np.ones(n), np.concatenate([ramp[:2000], ramp[:2001][::-1]]),
              np.tile([3.0, 1.0, 2.0], 1000)):
        for q in (0.0, 0.37, 0.5, 1.0):
            _same(axisops.quantile(a, q), np.quantile(a, q))
        _same(axisops.median(a), np.median(a))
    assert O._fast_order is F


# ------------------------------------------------------------------ sort and top_k


def _planned_sorts(monkeypatch):
    """The planned path of sort and top_k: their entries switched off."""
    monkeypatch.setattr(F, "sort", lambda *a: None)
    monkeypatch.setattr(F, "top_k", lambda *a: None)


def _layouts(a):
    """*a* (2-D) as the entries take it: C rows, a transposed table (F order), a
    1-D lane."""
    return a, np.asfortranarray(a), a[0]


def _sort_and_top_k_calls(a, ks):
    out = [("sort", (), {"axis": -1, "descending": d}) for d in (False, True)]
    if a.ndim == 1:
        out.append(("sort", (), {"axis": None}))
    for k in ks:
        for mode in ("largest", "smallest"):
            for s in (True, False):
                for index in (np.int64, np.int32):
                    out.append(("top_k", (k,), {"axis": a.ndim - 1, "mode": mode, "sorted": s,
                                                "index_dtype": index}))
    return out


def _results(a, calls):
    return [getattr(axisops, op)(a, *args, **kwargs) for op, args, kwargs in calls]


def _same_parts(got, want):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _same(g, w)
        return
    _same(got, want)
    if want.dtype.kind == "f":  # bit for bit: NaN payloads, signed zeros in lane order
        assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


def _sort_lanes(dtype, lanes: int, n: int, seed: int) -> np.ndarray:
    a = _lanes(dtype, n, seed)
    a = np.concatenate([a] * ((lanes + 2) // 3))[:lanes]
    if a.dtype.kind == "f":  # a NaN payload and a negative NaN, kept in lane order
        bits = a.view(f"u{a.itemsize}")
        bits[-1, :3] |= 1
        a[-1, 3] = -np.nan
    return a


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.exhaustive),
                                   pytest.param(np.int32, marks=pytest.mark.exhaustive),
                                   pytest.param(np.int64, marks=pytest.mark.exhaustive)])
@pytest.mark.parametrize("lanes, n", [(4, 256), (5, 163), (2, 16), (3, 700)])
def test_sort_and_top_k_entries_give_the_planned_paths_bits(dtype, lanes, n, monkeypatch):
    """Lanes of ties, signed zeros, NaN (payloads), infinities; the blocks of top_k's
    filter whole and cut; k = 1, 10 and the most taken."""
    taken = 0
    ks = [k for k in (1, 10, n // 16) if k]
    for seed in range(2):
        for a in _layouts(_sort_lanes(dtype, lanes, n, seed)):
            calls = _sort_and_top_k_calls(a, ks)
            taken += sum(F.sort(a, kw["axis"], kw.get("descending", False)) is not None
                         for op, _, kw in calls if op == "sort")
            got = _results(a, calls)
            with monkeypatch.context() as m:
                _planned_sorts(m)
                for call, g in zip(calls, got):
                    _same_parts(g, getattr(axisops, call[0])(a, *call[1], **call[2]))
    assert taken


def test_top_k_entry_is_taken():
    """The sweep's shapes take the entries; NaN last, ties to the lower index."""
    a = _sort_lanes(np.float32, 4, 256, 0)
    for x in _layouts(a):
        got = F.top_k(x, 10, -1, "largest", True, np.int64)
        assert got is not None and F.sort(x, -1, False) is not None
        lanes = x.reshape(-1, x.shape[-1])
        for lane, positions in zip(lanes, got[1].reshape(lanes.shape[0], -1)):
            # NumPy's order of the descending lane: NaN last, stable
            order = np.lexsort((np.arange(lane.size), -np.nan_to_num(lane, nan=0.0),
                                np.isnan(lane)))
            _same(positions, order[:10])


@pytest.mark.parametrize("call", [
    lambda a: F.sort(a, 0, False),                                # not the last axis
    lambda a: F.sort(a, True, False),                             # a bool axis
    lambda a: F.sort(a, None, False),                             # 2-D flattened
    lambda a: F.sort(a, -1, 1),                                   # not a bool
    lambda a: F.sort(a[:, :8], -1, False),                        # lanes NumPy sorts less well
    lambda a: F.sort(a[:, ::2], -1, False),                       # strided
    lambda a: F.sort(a.astype(np.float16), -1, False),            # a dtype left out
    lambda a: F.sort(a.reshape(2, 2, -1), -1, False),             # 3-D
    lambda a: F.top_k(a, 10, 0, "largest", True, np.int64),       # not the last axis
    lambda a: F.top_k(a, 33, -1, "largest", True, np.int64),      # k > SMALL_K
    lambda a: F.top_k(a[:, :100], 10, -1, "largest", True, np.int64),  # fewer than k blocks
    lambda a: F.top_k(a, 10, -1, "middle", True, np.int64),       # the planned path raises
    lambda a: F.top_k(a, 10, -1, "largest", True, "int64"),       # a dtype spelt otherwise
    lambda a: F.top_k(a, np.int64(10), -1, "largest", True, np.int64),
    lambda a: F.top_k(np.ones(F.TOP_K_MAX + 16), 10, -1, "largest", True, np.int64),
])
def test_what_the_sort_entries_hand_back(call):
    assert call(np.arange(1024.0).reshape(4, 256)) is None

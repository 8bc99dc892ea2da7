"""The result-buffer pool (``axisops._alloc``): memory is reused only when free.

A reused buffer that something still referred to would silently overwrite a
result the caller holds, so these tests hold results and views of results in
every way NumPy allows and check that later calls leave their values alone.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

import axisops
from axisops import _alloc

BIG = (_alloc.MIN_POOLED // 4) + 1024  # float32 elements: just over the pooled size


@pytest.fixture
def pool():
    old = _alloc.pool_limit(1 << 30)
    yield _alloc
    _alloc.pool_limit(old)


def test_small_arrays_are_plain(pool):
    a = pool.empty((10,), np.float64)
    assert a.base is None and a.dtype == np.float64 and a.shape == (10,)


def test_freed_buffer_is_reused(pool):
    a = pool.empty((BIG,), np.float32)
    address = a.ctypes.data
    del a
    b = pool.empty((BIG,), np.float32)
    assert b.ctypes.data == address
    assert b.shape == (BIG,) and b.dtype == np.float32 and b.flags.c_contiguous and b.flags.writeable


def test_scratch_pooled_from_a_smaller_size(pool):
    """``min_pooled``: a kernel's scratch is pooled from a smaller size than results
    (``order._scratch``); below it, a plain array; held, never handed out again."""
    pool.pool_limit(0)  # an empty pool: no other buffer of that size to hand out
    pool.pool_limit(1 << 30)
    small = pool.empty((1024,), np.float64, min_pooled=1 << 16)
    assert small.base is None
    a = pool.empty((1 << 14,), np.float64, min_pooled=1 << 16)
    address = a.ctypes.data
    b = pool.empty((1 << 14,), np.float64, min_pooled=1 << 16)
    assert b.ctypes.data != address
    del a
    c = pool.empty((1 << 14,), np.uint64, min_pooled=1 << 16)
    assert c.ctypes.data == address and c.dtype == np.uint64 and c.shape == (1 << 14,)


@pytest.mark.parametrize("keep", ["result", "view", "slice", "memoryview", "reshaped", "tuple"])
def test_held_results_are_never_reused(pool, keep):
    first = axisops.cumsum(np.ones(BIG, np.float32))  # exact: BIG < 2**24
    want = np.arange(1, BIG + 1, dtype=np.float32)
    held = {"result": lambda r: r, "view": lambda r: r.view(np.int32),
            "slice": lambda r: r[10:20], "memoryview": memoryview,
            "reshaped": lambda r: r.reshape(2, -1) if r.size % 2 == 0 else r[None],
            "tuple": lambda r: (r[::2],)}[keep](first)
    address = first.ctypes.data
    snapshot = np.array(first)
    np.testing.assert_array_equal(snapshot, want)
    del first
    gc.collect()
    for _ in range(3):  # later results of the same size get other memory
        other = axisops.cumsum(np.full(BIG, 2, np.float32))
        assert other.ctypes.data != address
        del other
    if keep == "memoryview":
        back = np.asarray(held)
    elif keep == "tuple":
        back = held[0]
        snapshot = snapshot[::2]
    else:
        back = np.asarray(held).view(np.float32).reshape(-1)
        if keep == "slice":
            snapshot = snapshot[10:20]
    np.testing.assert_array_equal(back.reshape(-1), snapshot.reshape(-1))


def test_limit_zero_frees_and_disables(pool):
    a = pool.empty((BIG,), np.float32)
    del a
    assert pool.pool_limit(0) == 1 << 30
    assert all(pool._refs(k) != pool._UNUSED for k in range(len(pool._buffers)))
    b = pool.empty((BIG,), np.float32)
    assert b.base is None
    with pytest.raises(ValueError):
        pool.pool_limit(-1)


def test_limit_bounds_unused_bytes(pool):
    pool.pool_limit(0)
    pool.pool_limit(3 * _alloc.MIN_POOLED)
    arrays = [pool.empty((_alloc.MIN_POOLED + k * 4096,), np.uint8) for k in range(6)]
    del arrays
    pool.empty((_alloc.MIN_POOLED * 2,), np.uint8)  # an allocation trims the free buffers
    free = [b.nbytes for k, b in enumerate(pool._buffers) if pool._refs(k) == pool._UNUSED]
    assert sum(free) <= 3 * _alloc.MIN_POOLED

"""Fixtures shared by the test suite.

The edge-case generator and the comparison helpers live in ``tests/cases.py``
(import them with ``from cases import ...``; pytest puts ``tests/`` on the path).
"""
from __future__ import annotations

import numpy as np
import pytest


def thread_counts():
    """Thread counts worth comparing: 1, 2 and every core Numba may use."""
    numba = pytest.importorskip("numba")
    top = numba.config.NUMBA_NUM_THREADS
    return sorted({1, min(2, top), top})


@pytest.fixture
def num_threads():
    """``set(n)`` sets Numba's thread count; the original count is restored afterwards."""
    numba = pytest.importorskip("numba")
    original = numba.get_num_threads()

    class Threads:
        counts = thread_counts()

        @staticmethod
        def set(n):
            numba.set_num_threads(n)

    try:
        yield Threads
    finally:
        numba.set_num_threads(original)


@pytest.fixture
def rng():
    """A NumPy generator with a fixed seed, fresh for each test."""
    return np.random.default_rng(20240601)

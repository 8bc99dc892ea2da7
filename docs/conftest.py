"""The documentation's doctests: the CUDA page runs under Numba's CUDA simulator
when there is no GPU (as ``tests/conftest.py`` arranges for the test suite)."""
import os

if not os.environ.get("AXISOPS_TEST_REAL_CUDA"):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

"""Loaded by pytest before anything else, for the tests, the docstrings and the docs.

CI has no GPU: the CUDA path runs under Numba's CUDA simulator, which must be
chosen before Numba loads (``tests/test_cuda.py``, ``docs/cuda.md``).
``AXISOPS_TEST_REAL_CUDA=1`` keeps a real GPU.
"""
import os

if not os.environ.get("AXISOPS_TEST_REAL_CUDA"):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

"""Loaded by pytest before anything else, for the tests, the docstrings and the docs.

CI has no GPU: the CUDA path runs under Numba's CUDA simulator, which must be
chosen before Numba loads (``tests/test_cuda.py``, ``docs/cuda.md``).
``AXISOPS_TEST_REAL_CUDA=1`` keeps a real GPU.

Numba's pedantic warnings (an internal check of its IR) are errors in every test,
so that every kernel a test compiles from a cold cache (CI's clean clone) is held
to reaching users without one (tests/test_compile_warnings.py). The filter is
added here, not in pyproject.toml: naming a Numba class there imports Numba while
pytest reads its configuration, before the simulator is chosen above.
"""
import os

if not os.environ.get("AXISOPS_TEST_REAL_CUDA"):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"


def pytest_configure(config):
    config.addinivalue_line("filterwarnings", "error::numba.core.errors.NumbaPedanticWarning")

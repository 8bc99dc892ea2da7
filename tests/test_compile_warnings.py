"""No compiler-internal warning reaches a user: a kernel of every family compiles,
from an empty cache, with every warning an error.

Numba's pedantic checks (``NumbaIRAssumptionWarning``: "variable ... is not in
scope", once per NaN-skipping kernel that inlined a conditional expression) printed
dozens of lines in the middle of ``axisops bench --quick``. The whole suite also
runs with Numba's pedantic warnings as errors (the root conftest.py's
``filterwarnings``), so every kernel compiled by a test from a cold cache (CI's clean
clone) is held to it; this test does not depend on the cache being cold.
"""
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

#: One call per kernel family, on float64 (float16 for the looked-up loads of the
#: NaN-skipping operators); each compiles its kernels, and checks one result.
_CALLS = textwrap.dedent("""
    import numpy as np, axisops
    x = np.arange(24.0).reshape(2, 3, 4)
    x[0, 1, 1] = np.nan
    img = np.arange(2 * 3 * 6 * 6, dtype=np.float64).reshape(2, 3, 6, 6)
    checks = {
        "reductions": (axisops.sum(x[1], 1), np.sum(x[1], 1)),
        "arg-reductions": (axisops.argmax(x[1], 1), [3, 3, 3]),
        "scans": (axisops.cummax(x[1, 0], 0).indices, [0, 1, 2, 3]),
        "gathers": (axisops.take(x[1, 0], np.array([3, 0]), 0), [15.0, 12.0]),
        "sliding windows": (axisops.unfold(img, (2, 2)).shape, (2, 12, 25)),
        "pooling": (axisops.max_pool(img, 2)[0, 0, 0], [7.0, 9.0, 11.0]),
        "moving windows": (axisops.moving_mean(x[1, 0], 2), [np.nan, 12.5, 13.5, 14.5]),
        "NaN-skipping sums": (axisops.nansum(x[0], 1), np.nansum(x[0], 1)),
        "NaN-skipping arg-reductions": (axisops.nanargmax(x[0], 1), [3, 3, 3]),
        "NaN-skipping counts of float16": (axisops.count(x[0].astype(np.float16), 1), [4, 3, 4]),
    }
    for family, (got, want) in checks.items():
        np.testing.assert_array_equal(got, want, err_msg=family)
    print("compiled", len(checks), "families")
""")


# Exhaustive: CI already compiles every kernel from a cold cache (a clean clone)
# with Numba's pedantic warnings as errors, and fails where ``axisops bench --quick``
# (every family, a fresh cache too) prints any warning; this repeat took 120-170 s.
@pytest.mark.exhaustive
def test_every_kernel_family_compiles_without_a_warning(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
               AXISOPS_TEST_NO_PRECOMPILE="1")
    run = subprocess.run([sys.executable, "-W", "error", "-c", _CALLS], env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "compiled 10 families"
    assert "Warning" not in run.stderr, run.stderr[-3000:]


def test_the_suite_turns_numba_pedantic_warnings_into_errors():
    """The suite-wide filter (the root conftest.py) that holds every other test's compile
    to the same standard."""
    from numba.core.errors import NumbaIRAssumptionWarning

    with pytest.raises(NumbaIRAssumptionWarning):
        warnings.warn(NumbaIRAssumptionWarning("a stand-in"), stacklevel=1)

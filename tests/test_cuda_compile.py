"""Every CUDA kernel compiles for a real GPU (PTX for compute capability 8.0), with
the argument types its launcher gives it (``axisops.cuda._signatures``).

The simulator that runs ``tests/test_cuda.py`` executes kernels as Python and
types nothing; this compiles them with NVVM, which needs no GPU, in a process
without the simulator (the root ``conftest.py`` turns it on for this one).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")

_SCRIPT = """
import json
from axisops.cuda._signatures import compile_all, signatures
print(json.dumps({"count": len(list(signatures())), "failed": compile_all()}))
"""


def test_every_kernel_compiles_for_a_real_gpu():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    run = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, timeout=1200)
    if "NVVM" in run.stderr and ("not found" in run.stderr or "cannot" in run.stderr.lower()):
        pytest.skip("NVVM (the CUDA toolkit's compiler library) is not installed: "
                    "pip install 'numba-cuda[cu13]'")
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["count"] > 100
    assert report["failed"] == [], "\n".join(report["failed"])

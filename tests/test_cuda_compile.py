"""Every CUDA kernel compiles for a real GPU (PTX for compute capability 8.0), with
the argument types its launcher gives it (``axisops.cuda._signatures``): by
default each kernel's first signature and its float16 and complex ones, where it
has them (131 of 936: the dtype classes that type and link differently), every
distinct one under the exhaustive switch (``AXISOPS_TEST_EXHAUSTIVE=1``,
``tests/conftest.py``), which the GPU check sets.

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
import json, sys
from axisops.cuda._signatures import compile_all, distinct
part, parts, exhaustive = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
print(json.dumps({"count": len(distinct(exhaustive)),
                  "failed": compile_all(part=part, parts=parts, exhaustive=exhaustive)}))
"""


# The exhaustive check compiles 936 signatures: one batch that outlasts the GPU
# check's per-test limit (120 s killed it on the H100 machine's 16 cores, 2026-11-27).
@pytest.mark.time_limit(420)
def test_every_kernel_compiles_for_a_real_gpu(exhaustive):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    # side by side: up to 8 processes (half of the GPU machine's cores; the rest run
    # the other CUDA tests beside it)
    parts = min(8, max(2, len(os.sched_getaffinity(0)) // 2))
    flag = "1" if exhaustive else "0"
    runs = [subprocess.Popen([sys.executable, "-c", _SCRIPT, str(p), str(parts), flag], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for p in range(parts)]
    failed = []
    for proc in runs:
        out, err = proc.communicate(timeout=1200)
        if "NVVM" in err and ("not found" in err or "cannot" in err.lower()):
            pytest.skip("NVVM (the CUDA toolkit's compiler library) is not installed: "
                        "pip install 'numba-cuda[cu13]'")
        assert proc.returncode == 0, err[-3000:]
        report = json.loads(out.strip().splitlines()[-1])
        assert report["count"] > (500 if exhaustive else 80)
        failed += report["failed"]
    assert failed == [], "\n".join(failed)

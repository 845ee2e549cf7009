"""A process that ran a parallel kernel exits cleanly.

llvmlite closes its library handles when the process exits; libgomp was unmapped under
its worker threads, which OMP_WAIT_POLICY=ACTIVE keeps spinning, and the exit died with
SIGSEGV after the program's work was done (the LLVM backend now keeps a handle of its
own)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import numpy as np
    import tilelang

    mod = tilelang.parse('''
    @T.prim_func
    def scale(A: T.Buffer((256, 64), "float32"), B: T.Buffer((256, 64), "float32")):
        for i in T.parallel(256):
            for j in range(64):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
    ''')
    f = tilelang.build(mod, "llvm -num-cores=2")["scale"]
    a = np.arange(256 * 64, dtype="float32").reshape(256, 64)
    b = np.zeros_like(a)
    for _ in range(20):
        f(a, b)
    assert np.array_equal(b, a * 2)
    print("ran")
    """
)


def test_exit_after_parallel_kernels_with_spinning_openmp_threads():
    env = {**os.environ, "OMP_WAIT_POLICY": "ACTIVE", "OMP_NUM_THREADS": "2"}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.stdout.strip() == "ran", done.stderr
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stderr}"

"""Workloads of SEED_PROGRAMS.md shared by samples, tests and benchmarks (as TVM's
``meta_schedule.testing.te_workload``): one definition, so that what a sample shows is
what the tests check and the benchmarks time."""

from __future__ import annotations

import tilelang


def matmul_tir(n: int) -> str:
    """SEED §3/§6's ``n x n x n`` float32 matmul as .tir text: block ``"C"`` of the
    function ``"main"`` computes ``C = A @ B``."""
    n = int(n)
    return f"""
@T.prim_func
def main(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
         C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def matmul(n: int):
    """:func:`matmul_tir` parsed: an IRModule."""
    return tilelang.parse(matmul_tir(n))

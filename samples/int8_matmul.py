"""An int8 matmul tensorized with AVX-512 VNNI (``vpdpbusd``).

``C[i, j] = sum_k int32(A[i, k]) * int32(B[j, k])`` with A ``uint8`` (M, K) and B
``int8`` (N, K), B pre-packed in the VNNI panel layout ``Bp[N/16][K/4][16][4]``
(``pack_b``), as a quantized layer's weights are packed once. The schedule tiles
the loops to the micro-kernel's ``mr x 16*nb x kt`` shape and tensorizes the tile
with ``tilelang.intrinsics.x86.vnni_gemm``.

    python samples/int8_matmul.py          # runs 256^3 on c and llvm against NumPy
"""

from __future__ import annotations

import numpy as np

import tilelang
from tilelang.intrinsics import x86

TEMPLATE = """
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "uint8"), Bp: T.Buffer(({n16}, {k4}, 16, 4), "int8"), C: T.Buffer(({m}, {n}), "int32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(C[vi, vj], A[vi, vk], Bp[vj // 16, vk // 4, vj % 16, vk % 4])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", Bp[vj // 16, vk // 4, vj % 16, vk % 4])
"""


def workload(m: int, n: int, k: int):
    """The untensorized int8 matmul over packed B, as a PrimFunc."""
    return tilelang.parse(TEMPLATE.format(m=m, n=n, k=k, n16=n // 16, k4=k // 4))


def pack_b(b: np.ndarray) -> np.ndarray:
    """(N, K) int8 -> the VNNI panel layout (N/16, K/4, 16, 4)."""
    n, k = b.shape
    return np.ascontiguousarray(b.reshape(n // 16, 16, k // 4, 4).transpose(0, 2, 1, 3))


def tensorized(m: int, n: int, k: int, mr: int = 4, nb: int = 4, kt: int | None = None):
    """The schedule: tiles of ``mr x 16*nb x kt`` (kt: all of k up to 256) whose tile
    loops are replaced by the VNNI micro-kernel, after the zeroing of C is split off
    (decompose_reduction), as the kernel accumulates into C."""
    kt = kt or min(k, 256)
    intrin = x86.vnni_gemm(mr, nb, kt)
    sch = tilelang.Schedule(workload(m, n, k))
    i, j, r = sch.get_loops("matmul")
    i0, i1 = sch.split(i, [None, mr])
    j0, j1 = sch.split(j, [None, 16 * nb])
    r0, r1 = sch.split(r, [None, kt])
    sch.reorder(r0, j0, i0, i1, j1, r1)  # a k-slab of A stays in L2 across the j0 tiles
    sch.decompose_reduction("matmul", r0)  # the kernel accumulates; zeroing stays apart
    sch.tensorize(i1, intrin)
    return sch


def main(size: int = 256) -> None:
    try:
        x86.require(x86.VNNI_FEATURES, "vnni_gemm")
    except x86.MissingCPUFeature as error:
        print(f"skipped: {error}")
        return
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (size, size), dtype=np.uint8)
    b = rng.integers(-128, 128, (size, size), dtype=np.int8)
    expected = a.astype(np.int32) @ b.astype(np.int32).T
    sch = tensorized(size, size, size)
    for target in ("c", "llvm"):
        c = np.zeros((size, size), np.int32)
        tilelang.build(sch.mod, target=target)["main"](a, pack_b(b), c)
        np.testing.assert_array_equal(c, expected)
        print(f"{target}: {size}^3 int8 matmul with VNNI matches NumPy")


if __name__ == "__main__":
    main()

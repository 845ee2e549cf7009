"""A bfloat16 matmul into float32 tensorized with AVX-512 BF16 (``vdpbf16ps``).

``C[i, j] = sum_k float32(A[i, k]) * float32(B[j, k])`` with A ``bfloat16`` (M, K) and
B ``bfloat16`` (N, K) pre-packed in pairs of k, ``Bp[N/16][K/2][16][2]`` (``pack_b``),
as a layer's weights are packed once. The schedule tiles the loops to the
micro-kernel's ``mr x 16*nb x kt`` shape and tensorizes the tile with
``tilelang.intrinsics.x86.bf16_gemm``. Arrays are passed as their bits (``uint16``)
or as ``ml_dtypes.bfloat16``.

    python samples/bf16_matmul.py          # runs 256^3 on c and llvm against NumPy
"""

from __future__ import annotations

import numpy as np

import tilelang
from tilelang.intrinsics import x86
from tilelang.ir import bfloat16

TEMPLATE = """
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "bfloat16"), Bp: T.Buffer(({n16}, {k2}, 16, 2), "bfloat16"), C: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", Bp[vj // 16, vk // 2, vj % 16, vk % 2])
"""


def workload(m: int, n: int, k: int):
    """The untensorized bfloat16 matmul over packed B, as a PrimFunc."""
    return tilelang.parse(TEMPLATE.format(m=m, n=n, k=k, n16=n // 16, k2=k // 2))


def pack_b(b: np.ndarray) -> np.ndarray:
    """(N, K) bfloat16 (bits or ml_dtypes) -> the pair layout (N/16, K/2, 16, 2)."""
    n, k = b.shape
    return np.ascontiguousarray(b.reshape(n // 16, 16, k // 2, 2).transpose(0, 2, 1, 3))


def tensorized(m: int, n: int, k: int, mr: int = 4, nb: int = 2, kt: int | None = None):
    """The schedule: tiles of ``mr x 16*nb x kt`` (kt: all of k up to 256) replaced by
    the BF16 micro-kernel, after the zeroing of C is split off (decompose_reduction),
    as the kernel accumulates into C."""
    kt = kt or min(k, 256)
    intrin = x86.bf16_gemm(mr, nb, kt)
    sch = tilelang.Schedule(workload(m, n, k))
    i, j, r = sch.get_loops("matmul")
    i0, i1 = sch.split(i, [None, mr])
    j0, j1 = sch.split(j, [None, 16 * nb])
    r0, r1 = sch.split(r, [None, kt])
    sch.reorder(r0, j0, i0, i1, j1, r1)  # a k-slab of A stays in L2 across the j0 tiles
    sch.decompose_reduction("matmul", r0)
    sch.tensorize(i1, intrin)
    return sch


def main(size: int = 256) -> None:
    try:
        x86.require(x86.BF16_FEATURES, "bf16_gemm")
    except x86.MissingCPUFeature as error:
        print(f"skipped: {error}")
        return
    rng = np.random.default_rng(0)
    a = bfloat16.to_bits(rng.standard_normal((size, size)).astype(np.float32))
    b = bfloat16.to_bits(rng.standard_normal((size, size)).astype(np.float32))
    exact = bfloat16.from_bits(a).astype(np.float64) @ bfloat16.from_bits(b).astype(np.float64).T
    sch = tensorized(size, size, size)
    for target in ("c", "llvm"):
        c = np.zeros((size, size), np.float32)
        tilelang.build(sch.mod, target=target)["main"](a, pack_b(b), c)
        np.testing.assert_allclose(c, exact, rtol=0, atol=1e-3)
        print(f"{target}: {size}^3 bfloat16 matmul with vdpbf16ps matches NumPy")


if __name__ == "__main__":
    main()

"""A tiled matmul written as a comprehension over segments and tensor views.

C is cut into 32 x 32 tiles, K into 32-wide steps; the last tile of each axis is
ragged. With integer sizes the tile loops unroll at build time (only the element
loops remain); with symbolic sizes they become strided loops with a tail length.

Run: ``python samples/tiling_matmul.py`` (checks both forms against NumPy under the
C and Python backends).
"""

from __future__ import annotations

import sys

import numpy as np

import tilelang
from tilelang.ir import SizeVar
from tilelang.tiling import TensorView, loop, make_prim_func, segment_by_chunk, seq


def tiled_matmul(M, N, K, chunk=32):
    """``C = A @ B`` tile by tile; ``M``, ``N``, ``K`` are ints or size variables."""
    A = TensorView.root("A", (M, K))
    B = TensorView.root("B", (K, N))
    C = TensorView.root("C", (M, N))
    body = seq(
        [
            # zero the C tile ...
            (
                C_tile.store(0.0, i, j)
                for i in loop(C_tile.shape[0], "i")
                for j in loop(C_tile.shape[1], "j")
            ),
            # ... then accumulate one K step at a time, from tiles of A and B
            (
                C_tile.store(C_tile.load(i, j) + A_tile.load(i, k) * B_tile.load(k, j), i, j)
                for k_seg in segment_by_chunk(0, chunk, K, "k0")
                for A_tile, B_tile in [(A[m_seg, k_seg], B[k_seg, n_seg])]
                for i in loop(C_tile.shape[0], "i")
                for j in loop(C_tile.shape[1], "j")
                for k in loop(k_seg.length, "k")
            ),
        ]
        for m_seg in segment_by_chunk(0, chunk, M, "m0")
        for n_seg in segment_by_chunk(0, chunk, N, "n0")
        for C_tile in [C[m_seg, n_seg]]
    )
    return make_prim_func(body, [A, B, C], "matmul")


def check(func, target, m, n, k) -> bool:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = np.zeros((m, n), dtype="float32")
    tilelang.build(func, target=target)["matmul"](a, b, c)
    return bool(np.allclose(c, a @ b, rtol=1e-4, atol=1e-4))


def main() -> int:
    cases = [
        ("concrete 100x70x50", tiled_matmul(100, 70, 50), (100, 70, 50)),
        ("symbolic, run at 100x70x50", tiled_matmul(*map(SizeVar, "MNK")), (100, 70, 50)),
    ]
    failures = 0
    for label, func, sizes in cases:
        for target in ("c", "python"):
            ok = check(func, target, *sizes)
            failures += not ok
            print(f"{label:28s} {target:7s} {'ok' if ok else 'MISMATCH'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

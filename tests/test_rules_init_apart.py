"""The default CPU rules merge an init block written apart from its update (in a nest
of its own, or under the update's outer loops as SEED §8 writes it) back into the
update's T.init(), so the matmul is tiled like the one-block form instead of running
as written (512³: 167 ms before, NumPy 2.3 ms)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.schedule.rules import default_schedule

APART = """
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i, j in T.grid(64, 80):
        with T.block("init"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.float32(0)
    for i, j, k in T.grid(64, 80, 48):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""  # noqa: E501

SHARED_LOOPS = APART.replace(
    "            C[vi, vj] = T.float32(0)\n    for i, j, k in T.grid(64, 80, 48):\n"
    '        with T.block("update"):\n            vi, vj, vk',
    "            C[vi, vj] = T.float32(0)\n        for k in range(48):\n"
    '            with T.block("update"):\n                vi, vj, vk',
).replace(
    "            C[vi, vj] = C[vi, vj] + A",
    "                C[vi, vj] = C[vi, vj] + A",
)


@pytest.mark.parametrize("source", [APART, SHARED_LOOPS], ids=["own_nest", "shared_loops"])
def test_default_rules_merge_the_init_and_tile_the_matmul(source):
    mod = tilelang.parse(source)
    sch = default_schedule(mod)
    kinds = [inst.kind.name for inst in sch.trace.insts if inst.kind.name != "GetBlock"]
    assert kinds[0] == "MergeReduction"
    assert "Split" in kinds and "Vectorize" in kinds  # the tiling plan ran on the merge
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 48), dtype="float32"), rng.random((48, 80), dtype="float32")
    c = np.zeros((64, 80), "float32")
    tilelang.build(mod, "llvm")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)

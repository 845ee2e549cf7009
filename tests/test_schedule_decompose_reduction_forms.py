"""decompose_reduction as TVM: the init block drops the predicate's conditions on
the reduction loops it no longer runs under (refusing a condition that mixes them
with its own loops), keeps the block's annotations, and the update block reads what
it accumulates into."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ScheduleError, tir
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit

MATMUL = """
@T.prim_func
def main(A: T.Buffer((16, 20), "float32"), B: T.Buffer((16, 20), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 20):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.block_attr({"note": 1})
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
"""


def _realize(mod, name):
    found = []
    post_order_visit(
        mod["main"].body,
        lambda n: (
            found.append(n) if isinstance(n, S.BlockRealize) and n.block.name_hint == name else None
        ),
    )
    return found[0]


def _numbers(mod):
    rng = np.random.default_rng(0)
    a, b = rng.random((16, 20), "float32"), rng.random((16, 20), "float32")
    c = np.full((16, 16), 7.0, "float32")
    tilelang.build(mod, target="python")["main"](a, b, c)
    return c


def test_init_drops_the_reduction_loops_conditions():
    mod = tilelang.parse(MATMUL)
    sch = tir.Schedule(mod)
    i, j, k = sch.get_loops("update")
    _, ii = sch.split(i, [2, 8])
    sch.split(k, [3, 7])  # 21 > 20: the update gets T.where(k_0 * 7 + k_1 < 20)
    sch.decompose_reduction("update", ii)
    init = _realize(sch.mod, "update_init")
    update = _realize(sch.mod, "update_update")
    assert isinstance(init.predicate, tilelang.ir.expr.IntImm) and init.predicate.value
    assert not isinstance(update.predicate, tilelang.ir.expr.IntImm)
    assert init.block.annotations == update.block.annotations == {"note": 1}
    assert [r.buffer.name for r in update.block.reads] == ["C", "A", "B"]
    np.testing.assert_allclose(_numbers(sch.mod), _numbers(mod), rtol=1e-5)


def test_init_refuses_a_condition_mixing_loops():
    mod = tilelang.parse(MATMUL)
    sch = tir.Schedule(mod)
    _, j, k = sch.get_loops("update")
    k_0, _ = sch.split(k, [3, 7])  # T.where(k_0 * 7 + k_1 < 20)
    jk = sch.fuse(j, k_0)  # the condition now reads the fused (init) loop and k_1
    before = sch.mod
    with pytest.raises(ScheduleError, match="mixes reduction loops"):
        sch.decompose_reduction("update", jk)
    assert sch.mod is before

"""rfactor on the forms TVM accepts beyond the plain ``B[i] = B[i] + x``: an update
written through a let, a factored loop no iterator reads (a unit loop left by
fuse), a remainder whose reduction the factored loop carries entirely (the partial
results are plain stores); and the refusal of a scope that is not a stage pipeline.
Every accepted schedule is checked numerically against the unscheduled program."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ScheduleError, tir
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit

WITH_LET = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i, k_0, k_1 in T.grid(8, 4, 4):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce(16, k_0 * 4 + k_1)
            with T.init():
                B[vi] = T.float32(0)
            acc: T.float32 = B[vi] + A[vi, vk] * A[vi, vk]
            B[vi] = acc
"""

UNIT_LOOP = """
@T.prim_func
def main(A: T.Buffer((4, 8, 8), "float32"), B: T.Buffer((4,), "float32")):
    for b, f, u in T.grid(4, 64, 1):
        with T.block("B"):
            vb = T.axis.spatial(4, b)
            vi = T.axis.reduce(8, f // 8)
            vj = T.axis.reduce(8, f % 8)
            with T.init():
                B[vb] = T.float32(0)
            B[vb] = B[vb] + A[vb, vi, vj]
"""

NOT_PIPELINE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), D: T.Buffer((16,), "float32")):
    C = T.alloc_buffer((16,), "float32")
    for i, k in T.grid(8, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = C[vi]
"""


def _check(mod, sch, shapes):
    rng = np.random.default_rng(0)
    inputs = [rng.random(s, "float32") for s in shapes]
    want = [x.copy() for x in inputs]
    got = [x.copy() for x in inputs]
    tilelang.build(mod, target="python")["main"](*want)
    tilelang.build(sch.mod, target="python")["main"](*got)
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-5)


def _block(mod, name):
    found = []
    post_order_visit(
        mod["main"].body,
        lambda n: found.append(n) if isinstance(n, S.Block) and n.name_hint == name else None,
    )
    return found[0]


def test_rfactor_reads_the_update_through_a_let():
    mod = tilelang.parse(WITH_LET)
    sch = tir.Schedule(mod)
    _, _, k_1 = sch.get_loops("B")
    sch.rfactor(k_1, 0)
    rf = _block(sch.mod, "B_rf")
    assert isinstance(rf.body, S.BufferStore)
    _check(mod, sch, [(8, 16), (8,)])


def test_rfactor_of_a_loop_no_iterator_reads():
    mod = tilelang.parse(UNIT_LOOP)
    sch = tir.Schedule(mod)
    _, _, u = sch.get_loops("B")
    sch.rfactor(u, 0)
    rf = _block(sch.mod, "B_rf")
    kinds = [iv.iter_type for iv in rf.iter_vars]
    assert kinds == [
        S.IterVar.DataPar,
        S.IterVar.DataPar,
        S.IterVar.CommReduce,
        S.IterVar.CommReduce,
    ]
    _check(mod, sch, [(4, 8, 8), (4,)])


def test_rfactor_of_the_whole_reduction_stores_partial_results_once():
    mod = tilelang.parse(WITH_LET)
    sch = tir.Schedule(mod)
    _, k_0, k_1 = sch.get_loops("B")
    fused = sch.fuse(k_0, k_1)
    sch.rfactor(fused, 0)
    rf = _block(sch.mod, "B_rf")
    assert rf.init is None and all(iv.iter_type == S.IterVar.DataPar for iv in rf.iter_vars)
    _check(mod, sch, [(8, 16), (8,)])


def test_rfactor_refuses_a_scope_that_is_not_a_stage_pipeline():
    mod = tilelang.parse(NOT_PIPELINE)
    sch = tir.Schedule(mod)
    before = sch.mod
    _, k = sch.get_loops("C")
    with pytest.raises(ScheduleError, match="not a stage pipeline"):
        sch.rfactor(k, 0)
    assert sch.mod is before


ARGMAX = """
@T.prim_func
def main(idx: T.Buffer((8, 16), "int32"), val: T.Buffer((8, 16), "float32"), out_i: T.Buffer((8,), "int32"), out_v: T.Buffer((8,), "float32")):
    for i, k_0, k_1 in T.grid(8, 4, 4):
        with T.block("argmax"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce(16, k_0 * 4 + k_1)
            with T.init():
                {init}
            v_i: T.int32 = T.Select({cmp}, out_i[vi], idx[vi, vk])
            v_v: T.float32 = T.Select({cmp}, out_v[vi], val[vi, vk])
            {stores}
"""

_ARGMAX_PARTS = {
    "init": 'out_i[vi] = -1\n                out_v[vi] = T.min_value("float32")',
    "cmp": "out_v[vi] >= val[vi, vk]",
    "stores": "out_i[vi] = v_i\n            out_v[vi] = v_v",
}


def _argmax(**changes):
    return ARGMAX.format(**{**_ARGMAX_PARTS, **changes})


def _run_argmax(mod):
    rng = np.random.default_rng(1)
    idx = np.arange(8 * 16, dtype="int32").reshape(8, 16)
    val = rng.random((8, 16), "float32")
    out_i, out_v = np.zeros(8, "int32"), np.zeros(8, "float32")
    tilelang.build(mod, target="python")["main"](idx, val, out_i, out_v)
    return out_i, out_v


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {  # argmin, the init and the stores in the other order
            "init": 'out_v[vi] = T.max_value("float32")\n                out_i[vi] = -1',
            "cmp": "out_v[vi] <= val[vi, vk]",
            "stores": "out_v[vi] = v_v\n            out_i[vi] = v_i",
        },
    ],
)
def test_rfactor_of_an_argmax_or_argmin_over_two_buffers(changes):
    mod = tilelang.parse(_argmax(**changes))
    sch = tir.Schedule(mod)
    _, _, k_1 = sch.get_loops("argmax")
    sch.rfactor(k_1, 1)
    rf = _block(sch.mod, "argmax_rf")
    assert [w.buffer.name for w in rf.writes] == ["out_i_rf", "out_v_rf"]
    for want, got in zip(_run_argmax(mod), _run_argmax(sch.mod)):
        np.testing.assert_array_equal(got, want)


def test_rfactor_refuses_an_argmax_whose_stores_are_not_the_lets():
    # the index store recomputes from out_v instead of using the let
    stores = "out_i[vi] = T.Select(out_v[vi] >= val[vi, vk], out_i[vi], idx[vi, vk])\n"
    stores += "            out_v[vi] = v_v"
    mod = tilelang.parse(_argmax(stores=stores))
    sch = tir.Schedule(mod)
    before = sch.mod
    _, _, k_1 = sch.get_loops("argmax")
    with pytest.raises(ScheduleError, match="argmax or argmin"):
        sch.rfactor(k_1, 1)
    assert sch.mod is before

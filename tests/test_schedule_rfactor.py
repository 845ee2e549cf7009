"""rfactor: golden before/after with the trace, the same numbers as the original
program under the Python reference and C backends, replay and round trip, and
precondition errors that leave the schedule unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ScheduleError, tir
from tilelang.ir import Var, assert_structural_equal

MATMUL = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
         C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

ROW_MAX = """
@T.prim_func
def main(A: T.Buffer((8, 32), "int32"), B: T.Buffer((8,), "int32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.int32(-2147483648)
            B[vi] = T.max(B[vi], A[vi, vk])
"""

SYMBOLIC_SUM = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, 24), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i, k in T.grid(n, 24):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


def _matmul_inner(sch):
    _, _, k = sch.get_loops("C")
    _, k1 = sch.split(k, factors=[None, 4])
    sch.rfactor(k1, factor_axis=1)


def _matmul_outer_parallel(sch):
    # the usual reason for rfactor: the factored axis becomes spatial and parallel
    i, j, k = sch.get_loops("C")
    k0, _ = sch.split(k, factors=[2, None])
    sch.reorder(k0, i, j)
    sch.rfactor(k0, factor_axis=0)
    sch.parallel(k0)


def _row_max_unsplit(sch):
    _, k = sch.get_loops("B")
    sch.rfactor(k, factor_axis=-1)


def _symbolic_sum(sch):
    _, k = sch.get_loops("B")
    _, k1 = sch.split(k, factors=[None, 8])
    rf = sch.rfactor(k1, factor_axis=0)
    sch.vectorize(sch.get_loops(rf)[-1])  # 8 partial sums side by side


CASES = {
    "matmul_inner": (MATMUL, _matmul_inner, {}),
    "matmul_outer_parallel": (MATMUL, _matmul_outer_parallel, {}),
    "row_max_unsplit": (ROW_MAX, _row_max_unsplit, {}),
    "symbolic_sum": (SYMBOLIC_SUM, _symbolic_sum, {"n": 5}),
}


def _arrays(func, sizes, seed):
    rng = np.random.default_rng(seed)
    arrays = []
    for buffer in func.buffers:
        shape = tuple(sizes[s.name] if isinstance(s, Var) else int(s) for s in buffer.shape)
        if buffer.dtype.is_float():
            arrays.append(rng.standard_normal(shape).astype(str(buffer.dtype)))
        else:
            arrays.append(rng.integers(-1000, 1000, shape).astype(str(buffer.dtype)))
    return arrays


def _run(mod, target, sizes, seed=0):
    arrays = _arrays(mod["main"], sizes, seed)
    tilelang.build(mod, target=target)["main"](*arrays)
    return arrays


@pytest.mark.parametrize("case", sorted(CASES))
def test_rfactor_golden_numbers_replay(case, golden):
    text, schedule, sizes = CASES[case]
    mod = tilelang.parse(text)
    sch = tir.Schedule(mod)
    schedule(sch)
    golden(mod.script() + "\n# after:\n" + sch.mod.script() + "\n" + str(sch.trace))
    want = _run(mod, "python", sizes)
    for target in ("python", "c"):
        for expected, got in zip(want, _run(sch.mod, target, sizes)):
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    replay = tir.Schedule(mod)
    sch.trace.apply_to_schedule(replay)
    assert_structural_equal(replay.mod, sch.mod)
    assert_structural_equal(tilelang.parse(sch.mod.script()), sch.mod)


def test_rfactor_handles():
    sch = tir.Schedule(tilelang.parse(MATMUL))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    _, k1 = sch.split(k, factors=[None, 4])
    rf = sch.rfactor(k1, factor_axis=0)
    # the rfactor block keeps the original loops; the old handle names the write-back
    assert sch.get(rf).name_hint == "C_rf"
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(rf)] == ["i", "j", "k_0", "k_1"]
    assert sch.get(block).name_hint == "C"
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(block)] == ["i", "j", "k_1"]
    assert sch.get(i) is sch.get(sch.get_loops(rf)[0])  # old loop handles stay valid
    kinds = [iv.iter_type for iv in sch.get(rf).iter_vars]
    assert kinds == [0, 0, 0, 2]  # vk_1 (now spatial), vi, vj, vk_0


def test_rfactor_name_clash_picks_fresh_names():
    sch = tir.Schedule(tilelang.parse(MATMUL))
    _, _, k = sch.get_loops("C")
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.rfactor(k1, factor_axis=0)
    rf2 = sch.rfactor(sch.get_loops("C_rf")[2], factor_axis=0)
    assert sch.get(rf2).name_hint == "C_rf_rf"
    assert "C_rf_rf = T.alloc_buffer((4, 4, 16, 16)" in sch.mod.script()
    mod = tilelang.parse(MATMUL)
    for expected, got in zip(_run(mod, "python", {}), _run(sch.mod, "python", {})):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


TWO_BLOCKS = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("init"):
            vi = T.axis.remap("S", [i])
            C[vi] = T.float32(0)
        for k in range(16):
            with T.block("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + A[vi, vk]
"""

NOT_IDENTITY = MATMUL.replace("C[vi, vj] = T.float32(0)", "C[vi, vj] = T.float32(1)")
SUBTRACT = MATMUL.replace("C[vi, vj] + A[vi, vk]", "C[vi, vj] - A[vi, vk]")


def _on_loop(index, factor_axis=0, name="C"):
    def schedule(sch):
        sch.rfactor(sch.get_loops(name)[index], factor_axis)

    return schedule


def _two_blocks(sch):
    (i,) = sch.get_loops("init")
    sch.rfactor(i, 0)


def _imperfect(sch):
    _, _, k = sch.get_loops("C")
    _, k1 = sch.split(k, factors=[None, 5])
    sch.rfactor(k1, 0)


ERRORS = {
    "spatial_loop": (MATMUL, _on_loop(0), "loop i carries a spatial iterator"),
    "factor_axis": (MATMUL, _on_loop(2, 3), "factor_axis 3 is out of range"),
    "factor_axis_type": (MATMUL, _on_loop(2, "0"), "is not an int"),
    "not_identity": (NOT_IDENTITY, _on_loop(2), "identity of the combiner"),
    "combiner": (SUBTRACT, _on_loop(2), "not a \\+, \\*, T.min or T.max"),
    "two_blocks": (TWO_BLOCKS, _two_blocks, "exactly one block under the loop"),
    "no_init": (TWO_BLOCKS, _on_loop(1, 0, "update"), "has no T.init"),
    "predicate": (MATMUL, _imperfect, "T.where predicate"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_rfactor_errors_leave_the_schedule_unchanged(case):
    text, schedule, reason = ERRORS[case]
    sch = tir.Schedule(tilelang.parse(text))
    seen = {}
    rfactor = sch.rfactor

    def wrapped(*args, **kwargs):
        seen["mod"], seen["trace"] = sch.mod, str(sch.trace)
        return rfactor(*args, **kwargs)

    sch.rfactor = wrapped
    with pytest.raises(ScheduleError, match=reason) as info:
        schedule(sch)
    assert sch.mod is seen["mod"]
    assert str(sch.trace) == seen["trace"]
    assert str(info.value).startswith("rfactor(")

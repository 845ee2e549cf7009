"""The default rules' plan for reductions along a contiguous axis (rules/dot.py): what it
decides, and that what it builds computes what the program computes (NumPy, and the
python reference backend on the scheduled IR)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.schedule.rules import Machine, default_schedule
from tilelang.schedule.rules.analysis import leaf_blocks
from tilelang.schedule.rules.dot import DotPlan, plan_dot
from tilelang.testing import default_workloads as W

AVX512 = Machine(512, 32)
AVX2 = Machine(256, 16)


def _row_sum(n, k):
    return f"""
@T.prim_func
def row_sum(A: T.Buffer(({n}, {k}), "float32"), B: T.Buffer(({n},), "float32")):
    T.func_attr({{"global_symbol": "row_sum", "tir.noalias": True}})
    for i, k in T.grid({n}, {k}):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


def _two_axis_sum(n, k1, k2):
    """A sum over two reduction axes, the inner one contiguous."""
    return f"""
@T.prim_func
def sum2(A: T.Buffer(({n}, {k1}, {k2}), "float32"), B: T.Buffer(({n},), "float32")):
    T.func_attr({{"global_symbol": "sum2", "tir.noalias": True}})
    for i, r, s in T.grid({n}, {k1}, {k2}):
        with T.block("B"):
            vi, vr, vs = T.axis.remap("SRR", [i, r, s])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vr, vs] * T.float32(0.5)
"""


def _dense_j_outer(m, k):
    """A batch-1 linear layer whose loops run over the outputs first: the row tile's
    loop (j) is not the innermost spatial loop and is moved there."""
    return f"""
@T.prim_func
def dense_j(X: T.Buffer((1, {k}), "float32"), W: T.Buffer(({m}, {k}), "float32"),
            Y: T.Buffer((1, {m}), "float32")):
    T.func_attr({{"global_symbol": "dense_j", "tir.noalias": True}})
    for j, i, k in T.grid({m}, 1, {k}):
        with T.block("Y"):
            vj, vi, vk = T.axis.remap("SSR", [j, i, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
"""


def _plan(tir, machine=AVX512):
    mod = tilelang.parse(tir)
    (func,) = [f for _, f in mod.functions.items()]
    info = leaf_blocks(func)[0]
    return plan_dot(info, machine), info


def test_gemv_plan_tiles_rows_that_share_the_vector_operand():
    plan, info = _plan(W.dense(1, 128, 784).tir)
    # X (1 x 784) does not move along j: 8 rows of W share each vector of X
    assert plan.row_iter is info.spatial[1] and plan.rows == 8
    # 784 = 49 vectors of 16: with 8 rows, one chain per row (49 has no divisor 2..2)
    assert (plan.width, plan.lanes) == (16, 16)
    plan, _ = _plan(W.dense(1, 10, 128).tir)
    # 10 rows tile by 5; 16 of the 32 registers for accumulators: 3 per row at most,
    # and a whole number of the 8 vectors of k: 2 (32 partial results per row)
    assert (plan.rows, plan.width) == (5, 32)


def test_plan_sizes_follow_the_machine():
    plan, _ = _plan(_row_sum(4, 256), AVX2)
    assert plan.lanes == 8 and plan.row_iter is None  # nothing is shared across rows
    assert plan.width == 64  # 8 independent vector chains of 8 lanes, 4 steps each


@pytest.mark.parametrize(
    "tir",
    [
        W.matmul(8, 8, 8).tir,  # the output is contiguous along j: tiling's, not dot's
        _row_sum(4, 24),  # 24 is not a whole number of 16-lane vectors
        _row_sum(4, 16),  # one vector: no chain to split
    ],
    ids=["matmul", "ragged", "short"],
)
def test_plan_refuses_what_does_not_fit(tir):
    assert _plan(tir)[0] is None


def test_dense_decisions_golden(golden):
    sch = default_schedule(tilelang.parse(W.dense(1, 128, 784).tir), AVX512)
    golden(str(sch.trace))


CASES = [
    ("dense", W.dense(1, 128, 784).tir, [(1, 784), (128, 784), (1, 128)], lambda x, w: x @ w.T),
    ("dense", W.dense(3, 10, 128).tir, [(3, 128), (10, 128), (3, 10)], lambda x, w: x @ w.T),
    ("dense_j", _dense_j_outer(24, 96), [(1, 96), (24, 96), (1, 24)], lambda x, w: x @ w.T),
    ("row_sum", _row_sum(6, 512), [(6, 512), (6,)], lambda a: a.sum(axis=1)),
    ("sum2", _two_axis_sum(5, 3, 64), [(5, 3, 64), (5,)], lambda a: 0.5 * a.sum(axis=(1, 2))),
]


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}{c[2][0]}" for c in CASES])
def test_dot_schedules_compute_the_program(case, target):
    name, tir, shapes, reference = case
    lib = tilelang.build(tilelang.parse(tir), f"{target} -num-cores=2")
    assert "rfactor" in str(lib.trace), "the dot plan did not apply"
    if name == "dense_j":
        assert "reorder" in str(lib.trace)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    lib[name](*arrays)
    np.testing.assert_allclose(arrays[-1], reference(*arrays[:-1]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}{c[2][0]}" for c in CASES])
def test_dot_scheduled_ir_agrees_on_the_reference_backend(case):
    name, tir, shapes, _ = case
    mod = tilelang.parse(tir)
    scheduled = default_schedule(mod, AVX2).mod
    rng = np.random.default_rng(4)
    want = [rng.standard_normal(s).astype("float32") for s in shapes]
    got = [a.copy() for a in want]
    tilelang.build(mod, "python")[name](*want)
    tilelang.build(scheduled, "python")[name](*got)
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-5, atol=1e-5)


def test_a_refused_row_tile_falls_back_to_the_plain_plan(monkeypatch):
    from tilelang.schedule.rules import dot

    real = dot.apply_dot

    def refuse_rows(sch, func_name, info, plan: DotPlan):
        if plan.row_iter is not None:
            from tilelang.errors import ScheduleError

            raise ScheduleError("refused by the test")
        return real(sch, func_name, info, plan)

    monkeypatch.setattr(dot, "apply_dot", refuse_rows)
    sch = default_schedule(tilelang.parse(W.dense(1, 64, 256).tir), AVX512)
    assert "rfactor" in str(sch.trace) and "unroll" not in str(sch.trace)
    x, w = np.ones((1, 256), "float32"), np.arange(64 * 256, dtype="float32").reshape(64, 256)
    y = np.empty((1, 64), "float32")
    tilelang.build(sch.mod, "llvm", auto_schedule=False)["dense"](x, w, y)
    np.testing.assert_allclose(y, x @ w.T, rtol=1e-5)


def test_only_blocks_with_enough_work_run_in_parallel():
    from tilelang.schedule.rules.loops import MIN_PARALLEL_WORK

    small = W.dense(1, 128, 784)  # 100K iterations: microseconds, less than a wake-up
    large = W.dense(1, 1024, 4096)
    assert 128 * 784 < MIN_PARALLEL_WORK <= 1024 * 4096
    assert "parallel" not in str(default_schedule(tilelang.parse(small.tir), AVX512).trace)
    assert "parallel" in str(default_schedule(tilelang.parse(large.tir), AVX512).trace)

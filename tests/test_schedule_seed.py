"""The schedules of SEED_PROGRAMS §2, §3, §6 and §7: each step gives the printed
"after" form of the document (parsed and compared structurally) and the trace prints
and replays exactly."""

from __future__ import annotations

import attrs
import numpy as np
from conftest import load_sample

import tilelang
from tilelang import tir
from tilelang.analysis import get_block_read_write_region
from tilelang.ir import assert_structural_equal, structural_equal
from tilelang.ir.functor import StmtExprMutator
from tilelang.testing.workloads import matmul
from tilelang.tune import stochastic_schedule_mm

schedules = load_sample("cuda_matmul")  # §6's schedules, as the sample writes them
blocking = schedules.blocking

MM_RELU = """
@I.ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), dtype="float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                vk = T.axis.reduce(128, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""

HEADER = """
@T.prim_func
def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
            C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128), dtype="float32")
"""

AFTER_SPLIT = (
    HEADER
    + """
    for i, j_0, j_1, k in T.grid(128, 32, 4, 128):
        with T.block("Y"):
            vi = T.axis.spatial(128, i)
            vj = T.axis.spatial(128, j_0 * 4 + j_1)
            vk = T.axis.reduce(128, k)
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            vj = T.axis.spatial(128, j)
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""
)

AFTER_REVERSE_COMPUTE_AT = (
    HEADER
    + """
    for i, j_0 in T.grid(128, 32):
        for k, j_1 in T.grid(128, 4):
            with T.block("Y"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1)
                vk = T.axis.reduce(128, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""
)

AFTER_DECOMPOSE = (
    HEADER
    + """
    for i, j_0 in T.grid(128, 32):
        for j_1_init in range(4):
            with T.block("Y_init"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1_init)
                Y[vi, vj] = T.float32(0)
        for k, j_1 in T.grid(128, 4):
            with T.block("Y_update"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1)
                vk = T.axis.reduce(128, k)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""
)

SEED_TRACE = """\
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="Y", func_name="mm_relu")
  l1, l2, l3 = sch.get_loops(block=b0)
  l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l4, l3, l5)
  b6 = sch.get_block(name="C", func_name="mm_relu")
  sch.reverse_compute_at(block=b6, loop=l4, preserve_unit_loops=False, index=-1)
  b7 = sch.decompose_reduction(block=b0, loop=l3)"""  # noqa: E501


class _Regions(StmtExprMutator):
    """Every block's reads/writes recomputed, so forms written without T.reads
    compare with forms that carry them."""

    def visit_block(self, op):
        op = self.generic_visit(op)
        reads, writes = get_block_read_write_region(op)
        return attrs.evolve(op, reads=tuple(reads), writes=tuple(writes))


def normalized(func):
    return func.with_body(_Regions().visit(func.body))


def assert_same(actual, expected_text, name="mm_relu"):
    expected = tilelang.parse(expected_text)
    expected = expected[name] if name in expected else next(iter(expected.functions.values()))
    assert_structural_equal(normalized(actual), normalized(expected))


def run_seed2(sch):
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    yield "split"
    sch.reorder(j0, k, j1)
    block_C = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_C, j0)
    yield "reverse_compute_at"
    sch.decompose_reduction(block_Y, k)
    yield "decompose_reduction"


def test_seed2_each_step_and_trace():
    sch = tir.Schedule(tilelang.parse(MM_RELU))
    expected = {
        "split": AFTER_SPLIT,
        "reverse_compute_at": AFTER_REVERSE_COMPUTE_AT,
        "decompose_reduction": AFTER_DECOMPOSE,
    }
    for step in run_seed2(sch):
        assert_same(sch.mod["mm_relu"], expected[step])
    assert str(sch.trace) == SEED_TRACE


def test_seed2_trace_replays_to_the_same_ir():
    sch = tir.Schedule(tilelang.parse(MM_RELU))
    list(run_seed2(sch))
    fresh = tir.Schedule(tilelang.parse(MM_RELU))
    sch.trace.apply_to_schedule(fresh)
    assert_structural_equal(fresh.mod["mm_relu"], sch.mod["mm_relu"])
    assert str(fresh.trace) == SEED_TRACE


def test_seed2_scheduled_numbers():
    mod = tilelang.parse(MM_RELU.replace("128", "16"))
    sch = tir.Schedule(mod)
    b = sch.get_block("Y", "mm_relu")
    i, j, k = sch.get_loops(b)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C", "mm_relu"), j0)
    sch.decompose_reduction(b, k)
    rng = np.random.default_rng(0)
    a, w = rng.random((16, 16), "float32"), rng.random((16, 16), "float32")
    c = np.zeros((16, 16), "float32")
    tilelang.build(sch.mod, target="python")["mm_relu"](a, w, c)
    np.testing.assert_allclose(c, np.maximum(a @ w, 0), rtol=1e-5)


def test_seed3_stochastic_schedule_is_reproducible_and_replays():
    mod = matmul(128)
    first = stochastic_schedule_mm(tir.Schedule(mod, seed=7))
    again = stochastic_schedule_mm(tir.Schedule(mod, seed=7))
    assert str(first.trace) == str(again.trace)
    assert_structural_equal(first.mod["main"], again.mod["main"])
    lines = str(first.trace).splitlines()
    assert lines[3].startswith("  v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, ")
    assert "max_innermost_factor=16, decision=[" in lines[3]
    assert lines[4] == (
        "  l6, l7 = sch.split(loop=l2, factors=[v4, v5], preserve_unit_iters=True, "
        "disable_predication=False)"
    )
    replayed = tir.Schedule(mod)
    first.trace.apply_to_schedule(replayed)
    assert_structural_equal(replayed.mod["main"], first.mod["main"])
    seeds = {str(stochastic_schedule_mm(tir.Schedule(mod, seed=s)).trace) for s in range(12)}
    assert len(seeds) > 1  # different seeds explore different tilings


def test_seed3_forced_decision():
    mod = matmul(128)
    sch = tir.Schedule(mod)
    block_C = sch.get_block("C", "main")
    _, j, _ = sch.get_loops(block=block_C)
    v = sch.sample_perfect_tile(loop=j, n=2, decision=[8, 16])
    assert [sch.get(x) for x in v] == [8, 16]
    assert str(sch.trace).endswith("max_innermost_factor=16, decision=[8, 16])")


WINDOW_AFTER = """
@T.prim_func
def main(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
    A_shared = T.alloc_buffer((1027,), scope="shared")
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for ax0_0 in range(2):
                for ax0_1 in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(1027, i_0 * 128 + (ax0_0 * 128 + ax0_1))
                        T.where(ax0_0 * 128 + ax0_1 < 130)
                        T.reads(A[v0])
                        T.writes(A_shared[v0])
                        A_shared[v0] = A[v0]
            with T.block("C"):
                vi = T.axis.spatial(1024, i_0 * 128 + i_1)
                T.reads(A_shared[vi:vi + 3])
                T.writes(B[vi])
                B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]
"""


def _strip_attrs(func):
    return attrs.evolve(func, attrs={})


def test_seed6_window_sum_cooperative_fetching():
    sch = schedules.window_sum_shared()
    expected = tilelang.parse(WINDOW_AFTER)["main"]
    assert_structural_equal(_strip_attrs(sch.mod["main"]), _strip_attrs(expected))


BLOCKED_AFTER = """
@T.prim_func
def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
         C: T.Buffer((1024, 1024), "float32")):
    C_local = T.alloc_buffer((1024, 1024), scope="local")
    for i_0 in T.thread_binding(16, thread="blockIdx.y"):
        for j_0 in T.thread_binding(16, thread="blockIdx.x"):
            for i_1 in T.thread_binding(8, thread="threadIdx.y"):
                for j_1 in T.thread_binding(8, thread="threadIdx.x"):
                    for i_2_init, j_2_init in T.grid(8, 8):
                        with T.block("C_init"):
                            vi = T.axis.spatial(1024, i_0 * 64 + i_1 * 8 + i_2_init)
                            vj = T.axis.spatial(1024, j_0 * 64 + j_1 * 8 + j_2_init)
                            C_local[vi, vj] = T.float32(0)
                    for k_0 in range(256):
                        for k_1 in T.unroll(4):
                            for i_2, j_2 in T.grid(8, 8):
                                with T.block("C_update"):
                                    vi = T.axis.spatial(1024, i_0 * 64 + i_1 * 8 + i_2)
                                    vj = T.axis.spatial(1024, j_0 * 64 + j_1 * 8 + j_2)
                                    vk = T.axis.reduce(1024, k_0 * 4 + k_1)
                                    C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
                    for ax0, ax1 in T.grid(8, 8):
                        with T.block("C_local"):
                            v0 = T.axis.spatial(1024, i_0 * 64 + i_1 * 8 + ax0)
                            v1 = T.axis.spatial(1024, j_0 * 64 + j_1 * 8 + ax1)
                            C[v0, v1] = C_local[v0, v1]
"""


def test_seed6_blocked_matmul():
    sch = blocking(tir.Schedule(matmul(1024)), 8, 8, 8, 8, 4)
    expected = tilelang.parse(BLOCKED_AFTER)["main"]
    actual = _strip_attrs(normalized(sch.mod["main"]))
    assert_structural_equal(actual, _strip_attrs(normalized(expected)))


def test_seed6_blocked_matmul_numbers_on_a_small_size():
    """The same steps on 32x32 (tiles 2, 2, 2, 2, 4) compute the matmul."""
    sch = blocking(tir.Schedule(matmul(32)), 2, 2, 2, 2, 4)
    rng = np.random.default_rng(1)
    a, b = rng.random((32, 32), "float32"), rng.random((32, 32), "float32")
    c = np.zeros((32, 32), "float32")
    tilelang.build(sch.mod, target="python")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


TMM = """
@T.prim_func
def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
         C: T.Buffer((1024, 1024), "float32")):
    for i, j, k in T.grid(1024, 1024, 1024):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
"""

BLOCKIZED = """
@T.prim_func
def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
         C: T.Buffer((1024, 1024), "float32")):
    for i_0, j_0, k_0 in T.grid(64, 64, 64):
        with T.block("matmul_o"):
            vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
            T.reads(A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16], B[vj_o * 16:vj_o * 16 + 16, vk_o * 16:vk_o * 16 + 16])
            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])
            with T.init():
                for i_1, j_1 in T.grid(16, 16):
                    with T.block("matmul_init"):
                        vi_i_init, vj_i_init = T.axis.remap("SS", [i_1, j_1])
                        T.reads()
                        T.writes(C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init])
                        C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init] = T.float32(0)
            for i_1, j_1, k_1 in T.grid(16, 16, 16):
                with T.block("matmul"):
                    vi_i, vj_i, vk_i = T.axis.remap("SSR", [i_1, j_1, k_1])
                    T.reads(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i], A[vi_o * 16 + vi_i, vk_o * 16 + vk_i], B[vj_o * 16 + vj_i, vk_o * 16 + vk_i])
                    T.writes(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i])
                    C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] = C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] + A[vi_o * 16 + vi_i, vk_o * 16 + vk_i] * B[vj_o * 16 + vj_i, vk_o * 16 + vk_i]
"""  # noqa: E501


def _blockize(mod):
    sch = tir.Schedule(mod)
    i, j, k = sch.get_loops("matmul")
    i, ii = sch.split(i, factors=[None, 16])
    j, ji = sch.split(j, factors=[None, 16])
    k, ki = sch.split(k, factors=[None, 16])
    sch.reorder(i, j, k, ii, ji, ki)
    block_mm = sch.blockize(ii)
    return sch, block_mm


def test_seed7_blockize_gives_matmul_o():
    sch, block_mm = _blockize(tilelang.parse(TMM))
    expected = tilelang.parse(BLOCKIZED)["main"]
    assert_structural_equal(_strip_attrs(sch.mod["main"]), _strip_attrs(expected))
    assert sch.get(block_mm).name_hint == "matmul_o"


def test_seed7_blockize_numbers_on_a_small_size():
    sch, _ = _blockize(tilelang.parse(TMM.replace("1024", "32")))
    rng = np.random.default_rng(2)
    a, b = rng.random((32, 32), "float32"), rng.random((32, 32), "float32")
    c = np.zeros((32, 32), "float32")
    tilelang.build(sch.mod, target="python")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)
    assert not structural_equal(sch.mod["main"], tilelang.parse(TMM)["main"])


def test_seed3_random_search_sample(capsys):
    """samples/random_search.py searches §3's space: every sample is checked against
    NumPy inside, the best trace is printed with its decision and replays (asserted
    inside)."""
    assert load_sample("random_search").main(["--samples", "2", "--target", "llvm"]) == 0
    out = capsys.readouterr().out
    assert out.count("j split [") == 2 and "best:" in out
    assert "sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[" in out

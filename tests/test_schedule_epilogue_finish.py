"""fuse_reduction_epilogue of epilogues that go on after the sum (ReLU, clipping, any
expression of the one load of the reduced buffer): the result must be what the two
blocks computed, so the rest of the epilogue acts on the reduction's last step only
(TVM applies ReLU and clipping after every step, which computes something else).
Golden IR, numbers against NumPy on every CPU backend, including values where the
per-step form would differ, replay, and a ScheduleError per precondition."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

TEMPLATE = """
@T.prim_func
def main(A: T.Buffer((8, 6), "float32"), B: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    temp = T.alloc_buffer((8, 8), "float32")
    for i, j, k in T.grid(8, 8, 6):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                temp[vi, vj] = T.float32(0)
            temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j in T.grid(8, 8):
        with T.block("epilogue"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = EPILOGUE
"""

EPILOGUES = {
    "bias_relu": ("T.max(temp[vi, vj] + C[vi, vj], T.float32(0))", lambda s, c: np.maximum(s + c, 0)),
    "relu_bias_first": ("T.max(C[vi, vj] + temp[vi, vj], T.float32(0))", lambda s, c: np.maximum(c + s, 0)),
    "relu": ("T.max(T.float32(0), temp[vi, vj])", lambda s, c: np.maximum(s, 0)),
    "clip": ("T.min(T.max(temp[vi, vj], T.float32(-1)), T.float32(1))", lambda s, c: np.clip(s, -1, 1)),
    "clip_swapped": ("T.max(T.float32(-1), T.min(T.float32(1), temp[vi, vj]))", lambda s, c: np.clip(s, -1, 1)),
    "clip_by_bias": ("T.min(T.max(temp[vi, vj], -C[vi, vj]), C[vi, vj])", lambda s, c: np.minimum(np.maximum(s, -c), c)),
    "scaled_tanh": ("T.tanh(temp[vi, vj] * T.float32(0.5))", lambda s, c: np.tanh(s * 0.5)),
}  # fmt: skip


def program(name):
    return TEMPLATE.replace("EPILOGUE", EPILOGUES[name][0])


def fused(name):
    sch = tilelang.Schedule(tilelang.parse(program(name)))
    sch.fuse_reduction_epilogue("matmul", "epilogue")
    return sch


def test_golden_and_replay(golden):
    sch = fused("bias_relu")
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(program("bias_relu")))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
@pytest.mark.parametrize("name", sorted(EPILOGUES))
def test_computes_what_the_two_blocks_computed(target, name):
    rng = np.random.default_rng(7)
    # signed inputs whose partial sums cross the ReLU / clip bounds: a per-step
    # epilogue would give other numbers
    a, b = rng.normal(size=(8, 6)).astype(np.float32), rng.normal(size=(8, 6)).astype(np.float32)
    c = rng.uniform(0.5, 2, (8, 8)).astype(np.float32)
    d = np.zeros((8, 8), np.float32)
    tilelang.build(fused(name).mod, target=target)["main"](a, b, c, d)
    np.testing.assert_allclose(d, EPILOGUES[name][1](a @ b.T, c), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["python", "llvm"])
def test_split_and_reordered_reduction_keeps_the_last_step(target):
    sch = fused("clip")
    i, j, k = sch.get_loops("matmul")
    k0, k1 = sch.split(k, [2, 3])
    sch.reorder(k1, i, k0, j)
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=(8, 6)).astype(np.float32), rng.normal(size=(8, 6)).astype(np.float32)
    d = np.zeros((8, 8), np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, b, np.ones((8, 8), np.float32), d)
    np.testing.assert_allclose(d, np.clip(a @ b.T, -1, 1), rtol=1e-5, atol=1e-6)


def rejected(text, needle):
    sch = tilelang.Schedule(tilelang.parse(text))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.fuse_reduction_epilogue("matmul", "epilogue")
    assert sch.mod is before


def test_two_loads_of_the_sum_are_refused():
    rejected(TEMPLATE.replace("EPILOGUE", "temp[vi, vj] * temp[vi, vj]"), "one load of temp")


def test_epilogue_reading_its_output_is_refused():
    rejected(TEMPLATE.replace("EPILOGUE", "T.max(temp[vi, vj], D[vi, vj])"), "reads its output D")


def test_reduction_running_backwards_is_refused():
    backwards = program("relu").replace(
        'vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
        'vi, vj = T.axis.remap("SS", [i, j])\n            vk = T.axis.reduce(6, 5 - k)',
    )
    rejected(backwards, "its last value may not be its last step")

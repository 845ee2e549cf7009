"""merge_reduction (tilelang.schedule.merge_reduction): an init block written apart
from its update is folded back as the update's T.init(); the result is structurally
the one-block program, computes the same on the reference backend, replays from its
trace, and every merge that could change the result is refused with the schedule left
as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang import tir
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

TWO_BLOCKS = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 12), "float32"),
         D: T.Buffer((12,), "float32"), C: T.Buffer((16, 12), "float32")):
    for i, j in T.grid(16, 12):
        with T.block("init"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = {init}
        for {loops}:
            with T.block("update"):
                vi, vj = T.axis.remap("SS", [i, j])
                vk = T.axis.reduce(8, {k})
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

MERGED = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 12), "float32"),
         D: T.Buffer((12,), "float32"), C: T.Buffer((16, 12), "float32")):
    for i, j, k in T.grid(16, 12, 8):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(C[vi, vj], A[vi, vk], B[vk, vj], D[vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = D[vj] * T.float32(2)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def program(init="D[vj] * T.float32(2)", loops="k in range(8)", k="k"):
    return tilelang.parse(TWO_BLOCKS.format(init=init, loops=loops, k=k))


def run(mod):
    rng = np.random.default_rng(0)
    a, b, d = (
        rng.random((16, 8), "float32"),
        rng.random((8, 12), "float32"),
        rng.random(12, "float32"),
    )
    c = np.full((16, 12), np.nan, "float32")
    tilelang.build(mod, "python", auto_schedule=False)["main"](a, b, d, c)
    return c


def merged(mod):
    sch = tir.Schedule(mod)
    sch.merge_reduction(sch.get_block("init"), sch.get_block("update"))
    return sch


def test_the_init_becomes_the_updates_t_init():
    mod = program()
    sch = merged(mod)
    assert structural_equal(sch.mod["main"], tilelang.parse(MERGED)["main"])
    np.testing.assert_allclose(run(sch.mod), run(mod), rtol=1e-6)


def test_the_merged_block_is_a_reduction_again():
    """The one thing the two blocks could not do: bind (or parallelize) their loops."""
    mod = tilelang.parse_file(SAMPLES / "matmul_two_blocks.tir")
    sch = tir.Schedule(mod)
    with pytest.raises(ScheduleError, match="neither complete nor a reduction"):
        sch.parallel(sch.get_loops(sch.get_block("update"))[0])
    sch.merge_reduction("init", "update")
    sch.parallel(sch.get_loops(sch.get_block("update"))[0])
    sch.decompose_reduction(sch.get_block("update"), sch.get_loops(sch.get_block("update"))[2])
    rng = np.random.default_rng(1)
    a, b = rng.random((128, 128), "float32"), rng.random((128, 128), "float32")
    c = np.zeros((128, 128), "float32")
    tilelang.build(sch.mod, "c", auto_schedule=False)["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


def test_trace_replays():
    mod = program()
    sch = merged(mod)
    assert "sch.merge_reduction(init=b0, update=b1)" in str(sch.trace)
    replayed = tir.Schedule(mod)
    sch.trace.apply_to_schedule(replayed)
    assert structural_equal(replayed.mod, sch.mod)


@pytest.mark.parametrize(
    "loops, k", [("k0, k1 in T.grid(2, 4)", "k0 * 4 + k1"), ("k in range(1, 8)", "k - 1")]
)
def test_reduction_loops_whose_first_step_is_the_minimum(loops, k):
    mod = program(loops=loops, k=k)
    np.testing.assert_allclose(run(merged(mod).mod), run(mod), rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"init": "C[vi, vj] * T.float32(0)"}, "reads C"),
        ({"loops": "k, r in T.grid(8, 2)"}, "loop r does not move a reduction iterator"),
        ({"loops": "k0, k1 in T.grid(2, 4)", "k": "7 - (k0 * 4 + k1)"}, "not increasing"),
        ({"loops": "k in range(1, 8)", "k": "k"}, "not the minimum of vk"),  # never 0
    ],
)
def test_merges_that_could_change_the_result_are_refused(kwargs, message):
    mod = program(**kwargs)
    sch = tir.Schedule(mod)
    with pytest.raises(ScheduleError, match=message):
        sch.merge_reduction(sch.get_block("init"), sch.get_block("update"))
    assert structural_equal(sch.mod, mod)


def test_an_init_of_another_element_is_refused():
    transposed = tilelang.parse(
        TWO_BLOCKS.format(init="T.float32(0)", loops="k in range(8)", k="k").replace(
            'vi, vj = T.axis.remap("SS", [i, j])\n            C[vi, vj] = T.float32(0)',
            'vi, vj = T.axis.remap("SS", [i, j])\n            C[vi, 11 - vj] = T.float32(0)',
        )
    )
    sch = tir.Schedule(transposed)
    with pytest.raises(ScheduleError, match="not the element 'update' accumulates into"):
        sch.merge_reduction("init", "update")
    assert structural_equal(sch.mod, transposed)


APART = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16,), "float32")):
    for i in range({init_extent}):
        with T.block("init"):
            vi = T.axis.spatial(16, i)
            C[vi] = T.float32(0)
    for i, k in T.grid(16, 8):
        with T.block("update"):
            vi, vk = T.axis.remap("SR", [i, k])
            C[vi] = C[vi] + A[vi, vk]{more}
"""

ONE_BLOCK = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 8):
        with T.block("update"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(C[vi], A[vi, vk])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
"""


def test_an_init_in_a_nest_of_its_own_over_the_same_loops_merges():
    apart = tilelang.parse(APART.format(init_extent=16, more=""))
    sch = tir.Schedule(apart)
    sch.merge_reduction("init", "update")
    assert structural_equal(sch.mod["main"], tilelang.parse(ONE_BLOCK)["main"])
    a = np.random.default_rng(3).random((16, 8), dtype="float32")
    got, want = np.full(16, 7, "float32"), np.full(16, 7, "float32")
    tilelang.build(sch.mod, "python")["main"](a, got)
    tilelang.build(apart, "python")["main"](a, want)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "init_extent, more, message",
    [
        (8, "", "are not the outer loops"),  # initialises half of C: the rest keeps its value
        (16, " + C[(vi + 1) % 16]", "reads other elements of C"),  # reads a neighbour's init
    ],
)
def test_an_init_apart_that_could_change_the_result_is_refused(init_extent, more, message):
    apart = tilelang.parse(APART.format(init_extent=init_extent, more=more))
    sch = tir.Schedule(apart)
    with pytest.raises(ScheduleError, match=message):
        sch.merge_reduction("init", "update")
    assert structural_equal(sch.mod, apart)


def test_an_update_with_its_own_init_is_refused():
    both = tilelang.parse(
        TWO_BLOCKS.format(init="D[vj] * T.float32(2)", loops="k in range(8)", k="k").replace(
            "                vk = T.axis.reduce(8, k)\n",
            "                vk = T.axis.reduce(8, k)\n"
            "                with T.init():\n"
            "                    C[vi, vj] = T.float32(0)\n",
        )
    )
    sch = tir.Schedule(both)
    with pytest.raises(ScheduleError, match="'update' already has a T.init()"):
        sch.merge_reduction("init", "update")
    assert structural_equal(sch.mod, both)

"""Every primitive: the printed result (golden), the same numbers as the original
program (Python reference backend), and errors that leave the schedule unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ScheduleError, tir
from tilelang.ir import assert_structural_equal

CHAIN = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

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


def _split_imperfect(sch):
    (i, _) = sch.get_loops("B")
    sch.split(i, factors=[7, 3])


def _fuse(sch):
    i, j = sch.get_loops("C")
    sch.fuse(i, j)


def _reorder_kinds(sch):
    i, j = sch.get_loops("B")
    sch.reorder(j, i)
    sch.parallel(j)
    _, c_j = sch.get_loops("C")
    sch.vectorize(c_j)


def _unroll_annotate(sch):
    i, j = sch.get_loops("C")
    sch.unroll(j)
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    sch.annotate("C", "meta", "x")
    sch.unannotate("C", "meta")


def _compute_at(sch):
    i, _ = sch.get_loops("C")
    sch.compute_at(sch.get_block("B"), i)


def _reverse_compute_at(sch):
    i, _ = sch.get_loops("B")
    sch.reverse_compute_at(sch.get_block("C"), i)


def _compute_inline(sch):
    sch.compute_inline(sch.get_block("B"))


def _reverse_compute_inline(sch):
    sch.reverse_compute_inline(sch.get_block("C"))


def _cache_read(sch):
    sch.cache_read(sch.get_block("C"), 0, "shared")


def _cache_write(sch):
    sch.cache_write(sch.get_block("C"), 0, "local")


def _set_scope(sch):
    sch.set_scope(sch.get_block("B"), 0, "shared")


def _bind(sch):
    i, j = sch.get_loops("C")
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")


def _decompose(sch):
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.decompose_reduction(block, i)


def _blockize(sch):
    i, j, k = sch.get_loops("C")
    _, i1 = sch.split(i, factors=[None, 4])
    sch.reorder(i1, j, k)
    sch.blockize(i1)


CASES = {
    "split_imperfect": (CHAIN, _split_imperfect),
    "fuse": (CHAIN, _fuse),
    "reorder_parallel_vectorize": (CHAIN, _reorder_kinds),
    "unroll_annotate": (CHAIN, _unroll_annotate),
    "compute_at": (CHAIN, _compute_at),
    "reverse_compute_at": (CHAIN, _reverse_compute_at),
    "compute_inline": (CHAIN, _compute_inline),
    "reverse_compute_inline": (CHAIN, _reverse_compute_inline),
    "cache_read": (CHAIN, _cache_read),
    "cache_write": (CHAIN, _cache_write),
    "set_scope": (CHAIN, _set_scope),
    "bind": (CHAIN, _bind),
    "decompose_reduction": (MATMUL, _decompose),
    "blockize": (MATMUL, _blockize),
}


def run(mod, seed=0):
    func = mod["main"]
    rng = np.random.default_rng(seed)
    arrays = [rng.random(tuple(int(s) for s in b.shape), "float32") for b in func.buffers]
    tilelang.build(mod, target="python")["main"](*arrays)
    return arrays


@pytest.mark.parametrize("case", sorted(CASES))
def test_primitive_golden_and_numbers(case, golden):
    text, schedule = CASES[case]
    mod = tilelang.parse(text)
    sch = tir.Schedule(mod)
    schedule(sch)
    golden(sch.mod.script() + "\n" + str(sch.trace))
    for want, got in zip(run(mod), run(sch.mod)):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    replay = tir.Schedule(mod)
    sch.trace.apply_to_schedule(replay)
    assert_structural_equal(replay.mod, sch.mod)


def _bad_split(sch):
    i, _ = sch.get_loops("B")
    sch.split(i, factors=[3, 4])


def _bad_reorder(sch):
    i, _ = sch.get_loops("B")
    _, j = sch.get_loops("C")
    sch.reorder(j, i)


def _parallel_reduction(sch):
    _, _, k = sch.get_loops("C")
    sch.parallel(k)


def _inconsistent_threads(sch):
    i, j = sch.get_loops("C")
    j0, j1 = sch.split(j, factors=[2, 8])
    sch.bind(j1, "threadIdx.x")
    sch.bind(i, "threadIdx.x")


def _compute_at_wrong_loop(sch):
    i, _ = sch.get_loops("B")
    sch.compute_at(sch.get_block("C"), i)


def _stale_handle(sch):
    i, _ = sch.get_loops("B")
    sch.split(i, factors=[None, 4])
    sch.split(i, factors=[None, 2])


def _inline_reduction(sch):
    sch.compute_inline(sch.get_block("C"))


def _decompose_inside_reduction(sch):
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.reorder(k, i, j)
    sch.decompose_reduction(block, i)


ERRORS = {
    "split": (CHAIN, _bad_split, "multiply to 12, less than the extent 16"),
    "reorder": (CHAIN, _bad_reorder, "not nested in one another"),
    "parallel": (MATMUL, _parallel_reduction, "reduction iterator vk"),
    "bind": (CHAIN, _inconsistent_threads, "threadIdx.x would have extent"),
    "compute_at": (CHAIN, _compute_at_wrong_loop, "nothing under loop i uses it"),
    "stale_handle": (CHAIN, _stale_handle, "the loop no longer exists"),
    "compute_inline": (MATMUL, _inline_reduction, "a reduction block cannot be inlined"),
    "decompose_reduction": (MATMUL, _decompose_inside_reduction, "carries the reduction"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_precondition_errors_leave_the_schedule_unchanged(case):
    text, schedule, reason = ERRORS[case]
    sch = tir.Schedule(tilelang.parse(text))
    seen = {}

    def snapshot(method):
        def wrapped(*args, **kwargs):
            seen["mod"], seen["trace"] = sch.mod, str(sch.trace)
            return method(*args, **kwargs)

        return wrapped

    for name in (
        "split",
        "reorder",
        "parallel",
        "bind",
        "compute_at",
        "compute_inline",
        "decompose_reduction",
    ):
        setattr(sch, name, snapshot(getattr(sch, name)))
    with pytest.raises(ScheduleError, match=reason) as info:
        schedule(sch)
    assert sch.mod is seen["mod"]
    assert str(sch.trace) == seen["trace"]
    assert "(" in str(info.value).split(":")[0]  # "primitive(subject): reason"

"""bind of a reduction loop: allowed to threadIdx.x/y/z (a cross-thread reduction, as
TVM allows), refused to blockIdx and for parallel. The CPU backends run the bound
loop serially and compute the reduction as written; the CUDA backend lowers a
reduction over threadIdx.x to an allreduce (tests/test_lower_cross_thread_reduction.py)
and refuses other thread axes with a BuildError."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import BuildError, ScheduleError
from tilelang.ir import For
from tilelang.ir import stmt as S

ROWSUM = """
@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


def _bound():
    sch = tilelang.Schedule(tilelang.parse(ROWSUM))
    _, k = sch.get_loops("B")
    sch.bind(k, "threadIdx.x")
    return sch, k


def test_reduction_loop_binds_to_thread_idx():
    sch, k = _bound()
    loop = sch.get(k)
    assert isinstance(loop, For)
    assert loop.kind is S.ForKind.THREAD_BINDING and loop.thread_binding == "threadIdx.x"


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_cpu_backends_compute_the_reduction(target):
    sch, _ = _bound()
    a = np.random.default_rng(1).random((8, 32), np.float32)
    b = np.zeros(8, np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_cuda_build_lowers_a_cross_thread_reduction():
    sch, _ = _bound()
    sch.bind(sch.get_loops("B")[0], "blockIdx.x")
    source = tilelang.build(sch.mod, target="cuda").get_source()
    assert "tl_block_allreduce<32>(" in source


def test_cuda_build_refuses_a_reduction_over_another_thread_axis():
    sch = tilelang.Schedule(tilelang.parse(ROWSUM))
    i, k = sch.get_loops("B")
    sch.bind(i, "blockIdx.x")
    sch.bind(k, "threadIdx.y")
    with pytest.raises(BuildError, match="block 'B' reduces across threads, but only a "
                       "reduction over one loop bound to threadIdx.x is lowered"):  # fmt: skip
        tilelang.build(sch.mod, target="cuda")


@pytest.mark.parametrize("how", ["blockIdx.x", "vthread", "parallel"])
def test_other_bindings_of_a_reduction_loop_are_refused(how):
    sch = tilelang.Schedule(tilelang.parse(ROWSUM))
    before = sch.mod["main"]
    _, k = sch.get_loops("B")
    with pytest.raises(ScheduleError, match="reduction iterator vk"):
        if how == "parallel":
            sch.parallel(k)
        else:
            sch.bind(k, how)
    assert sch.mod["main"] is before

"""Software pipelining (TVM's ``software_pipeline_stage`` / ``order`` annotations).

A loop whose body fetches into a buffer, computes from it into another and writes the
result, annotated with stages and an order, computes what it computed before: every
valid stage assignment and order, on the reference backend against NumPy (also
extents shorter than the pipeline), and on the C and LLVM backends. The pipelined IR
has the prologue / steady loop / epilogue shape with double-buffered buffers, and the
asynchronous stage's marks print as ``cp.async`` groups on CUDA. Invalid annotations
are clear errors.
"""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest

import tilelang
from tilelang import tir
from tilelang.errors import BuildError

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def chain(n, extent_text=None):
    """``C = A * 2 + 1`` through an intermediate ``B``, rows of 8."""
    rows = extent_text or str(n)
    return tilelang.parse(f"""
@T.prim_func
def f(a: T.handle, c: T.handle):
    T.func_attr({{"global_symbol": "f", "tir.noalias": True}})
    {"n = T.int32()" if extent_text else ""}
    A = T.match_buffer(a, ({rows}, 8), "float32")
    C = T.match_buffer(c, ({rows}, 8), "float32")
    B = T.alloc_buffer(({rows}, 8), "float32")
    for i, j in T.grid({rows}, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid({rows}, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
""")


def pipelined(n, stages, orders, async_stages=None, extent_text=None):
    """The chain with the row loop's body [fetch A_shared, B, C] pipelined."""
    sch = tir.Schedule(chain(n, extent_text))
    loop = sch.get_loops(sch.get_block("C"))[0]
    sch.compute_at(sch.get_block("B"), loop)
    fetch = sch.cache_read(sch.get_block("B"), 0, "shared")
    sch.compute_at(fetch, loop)
    sch.annotate(loop, "software_pipeline_stage", list(stages))
    sch.annotate(loop, "software_pipeline_order", list(orders))
    if async_stages is not None:
        sch.annotate(loop, "software_pipeline_async_stages", list(async_stages))
    return sch.mod


def run(mod, n, target="python"):
    a = np.random.default_rng(n).standard_normal((n, 8)).astype("float32")
    c = np.full((n, 8), np.nan, "float32")
    tilelang.build(mod, target=target, auto_schedule=False)["f"](a, c)
    return c, a * 2 + 1


def valid_schedules():
    """Stages that never read before the write (chain: fetch -> B -> C) and every
    order that keeps writer before reader inside a stage."""
    for stages in itertools.product(range(3), repeat=3):
        if not stages[0] <= stages[1] <= stages[2]:
            continue
        for orders in itertools.permutations(range(3)):
            if all(stages[w] < stages[w + 1] or orders[w] < orders[w + 1] for w in (0, 1)):
                yield stages, orders


def test_every_valid_pipeline_computes_the_chain():
    cases = list(valid_schedules())
    assert len(cases) > 20
    for stages, orders in cases:
        got, want = run(pipelined(5, stages, orders), 5)
        np.testing.assert_allclose(got, want, err_msg=f"stages {stages}, order {orders}")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_extents_shorter_than_the_pipeline(n):
    got, want = run(pipelined(n, (0, 1, 2), (0, 1, 2)), n)
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_the_cpu_backends_run_the_pipeline(target):
    got, want = run(pipelined(7, (0, 1, 2), (2, 0, 1), async_stages=(0,)), 7, target)
    np.testing.assert_allclose(got, want)


def test_pipelined_ir_has_prologue_steady_loop_epilogue_and_versions():
    text = tilelang.lower(pipelined(6, (0, 0, 1), (0, 1, 2))).script()
    # A_shared is read in its writer's stage: one version; B is read a stage later
    # and written first in the order: two
    assert 'T.allocate([8], "float32", "shared")' in text
    assert 'T.allocate([16], "float32", "global")' in text
    assert "for i in range(1, 6):" in text
    assert "B_1[i % 2 * 8 + ax0] = A_shared_1[ax0]" in text  # steady loop: version i % 2
    assert "(i + 1) % 2 * 8" in text  # the read, one iteration behind
    assert "C_1[j + 40] = B_1[j + 8] + T.float32(1)" in text  # the epilogue: row 5
    assert "software_pipeline" not in text


def test_the_async_stage_is_marked_for_groups():
    text = tilelang.lower(pipelined(4, (0, 1, 1), (0, 1, 2), async_stages=(0,))).script()
    # one group per pipelined iteration: prologue, steady loop, (empty) epilogue
    assert text.count('T.attr(None, "async_commit_queue_scope", 0)') == 3
    # B reads the fetch one step behind, after this step's group: one may stay in flight
    assert text.count('T.attr(None, "async_wait_inflight_count", 1)') == 2
    same = tilelang.lower(pipelined(4, (0, 0, 1), (0, 1, 2), async_stages=(0,))).script()
    # B reads the fetch of its own step: none may
    assert 'T.attr(None, "async_wait_inflight_count", 0)' in same


@pytest.mark.parametrize(
    "stages, orders, async_stages, message",
    [
        ((0, 1), (0, 1), None, "one integer per statement"),
        ((0, 0, 1), (0, 0, 1), None, "permutation"),
        ((1, 0, 1), (0, 1, 2), None, "is read .* before it is written"),
        ((0, 0, 0), (1, 0, 2), None, "is read .* before it is written"),
        ((0, 1, 2), (0, 1, 2), (0, 1), "at most one asynchronous stage"),
    ],
)
def test_invalid_annotations_are_build_errors(stages, orders, async_stages, message):
    mod = pipelined(4, stages, orders, async_stages)
    with pytest.raises(BuildError, match=message):
        tilelang.lower(mod)


def test_a_buffer_the_body_does_not_allocate_stays_in_one_stage():
    """A parameter written by one stage and read by the next is refused (conservatively:
    only the body's own buffers get a version per iteration)."""
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
      C: T.Buffer((4, 8), "float32")):
    T.func_attr({"global_symbol": "f", "tir.noalias": True})
    for i in T.serial(4, annotations={"software_pipeline_stage": [0, 1],
                                      "software_pipeline_order": [0, 1]}):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
""")
    with pytest.raises(BuildError, match="does not allocate"):
        tilelang.lower(mod)


def test_a_symbolic_extent_is_a_build_error():
    mod = pipelined(4, (0, 1, 2), (0, 1, 2), extent_text="n")
    with pytest.raises(BuildError, match="extent must be a constant"):
        tilelang.lower(mod)


@needs_nvcc
def test_cuda_groups_the_async_stage_copies():
    """The tensor-core schedule's pipeline on sm_80: one cp.async group per step, the
    compute waits for all but the latest, then a barrier; sm_75 copies synchronously."""
    from test_cuda_tensor_core import hgemm, ptxas

    source = tilelang.build(hgemm(256, 256, 256), "cuda -arch=sm_80").get_source()
    steady = source[source.index("for (int32_t k_0_0 = 1;") :]
    commit = steady.index("cp.async.commit_group")
    wait = steady.index("cp.async.wait_group 1;")
    assert commit < wait < steady.index("__syncthreads();", wait) < steady.index("tl_ldmatrix")
    assert source.count("cp.async.wait_all") == 1  # only at the kernel's end
    report, ptx = ptxas(source)
    assert "cp.async.commit_group" in ptx and "cp.async.wait_group 1" in ptx
    assert [spills for _, *spills in report.values()] == [[0, 0]]
    old = tilelang.build(hgemm(256, 256, 256), "cuda -arch=sm_75").get_source()
    assert "cp.async" not in old and "for (int32_t k_0_0 = 1;" in old

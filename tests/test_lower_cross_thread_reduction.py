"""LowerCrossThreadReduction and its CUDA form (warp shuffles + shared memory).

The pass rewrites a reduction block whose reduction loop is bound to threadIdx.x
into TVM's lowered form (in-thread partial, ``tvm_thread_allreduce`` under a
``reduce_scope`` reducer, write-back by thread 0): checked against reviewed golden
text and for the blocks' structure; refusals are BuildErrors naming the block. The
CUDA build is checked with nvcc and ``ptxas -v`` for several thread counts (a partial
warp, one warp, several, 1024) and types, and its text computed by the threaded host
emulation (each thread of a block a host thread; tilelang.testing.cuda_emulation)
against NumPy; the runs on a GPU are marked ``gpu``. The CPU backends compute the
schedule before lowering, running the thread loop in turn.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import tilelang
from tilelang.errors import BuildError
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit
from tilelang.testing.cuda_emulation import HostProgram, host_compiler
from tilelang.transform.lower_cross_thread_reduction import lower_cross_thread_reduction

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def rowsum(rows, cols, threads, dtype="float32", op="sum", init=None):
    """Row reductions of an ``rows x cols`` matrix, the column loop split by
    ``threads`` (predicated when it does not divide; not split when it is ``cols``)
    and bound to threadIdx.x."""
    combine = {"sum": "B[vi] + A[vi, vk]", "max": "T.max(B[vi], A[vi, vk])",
               "min": "T.min(B[vi], A[vi, vk])", "prod": "B[vi] * A[vi, vk]"}[op]  # fmt: skip
    start = {"sum": "0", "prod": "1", "max": f'T.min_value("{dtype}")',
             "min": f'T.max_value("{dtype}")'}[op]  # fmt: skip
    start = init or (start if start.startswith("T.") else f"T.{dtype}({start})")
    mod = tilelang.parse(f"""
@T.prim_func
def main(A: T.Buffer(({rows}, {cols}), "{dtype}"), B: T.Buffer(({rows},), "{dtype}")):
    for i, k in T.grid({rows}, {cols}):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = {start}
            B[vi] = {combine}
""")
    sch = tilelang.Schedule(mod)
    i, ki = sch.get_loops("B")
    if threads != cols:
        _, ki = sch.split(ki, [None, threads])
    sch.bind(i, "blockIdx.x")
    sch.bind(ki, "threadIdx.x")
    return sch.mod


def blocks_of(func):
    found = []
    post_order_visit(
        func.body, lambda n: found.append(n) if isinstance(n, S.BlockRealize) else None
    )
    return {r.block.name_hint: r for r in reversed(found)}


# ------------------------------------------------------------------ the pass


def test_lowered_form_golden(golden):
    """The in-thread loop moves inside the thread loop; TVM's lowered form."""
    golden(lower_cross_thread_reduction(rowsum(16, 128, 32)["main"]).script())


def test_a_reduction_that_is_all_threads_allreduces_the_value_itself():
    func = lower_cross_thread_reduction(rowsum(16, 64, 64)["main"])
    blocks = blocks_of(func)
    assert set(blocks) >= {"B_cross_thread_reduction", "B_write_back"}
    assert "B_in_thread_init" not in blocks and "B_normal_reduction" not in blocks
    cross = blocks["B_cross_thread_reduction"]
    assert [iv.var.name for iv in cross.block.iter_vars] == ["vi", "vk"]
    allocs = [b.name for b in func.body.block.alloc_buffers]
    assert allocs == ["B_cross_thread"]


def test_a_predicated_split_reduces_in_thread_under_its_predicate():
    """100 columns over 32 threads: the partial sums only the columns that exist;
    the write-back is thread 0's, without the reduction's predicate."""
    func = lower_cross_thread_reduction(rowsum(8, 100, 32)["main"])
    blocks = blocks_of(func)
    normal, wb = blocks["B_normal_reduction"], blocks["B_write_back"]
    assert "< 100" in normal.predicate.script()
    assert wb.predicate.script().replace(" ", "") == "k_1==0"
    assert blocks["B_in_thread_init"].block.body.value.value == 0


def test_the_reducer_combines_and_starts_from_the_identity():
    for op, text in (("max", "T.max(x, y)"), ("min", "T.min(x, y)"), ("prod", "x * y")):
        printed = lower_cross_thread_reduction(rowsum(4, 64, 32, op=op)["main"]).script()
        assert f"T.comm_reducer(lambda x, y: {text}" in printed, op
    printed = lower_cross_thread_reduction(rowsum(4, 64, 32, op="max")["main"]).script()
    assert 'T.comm_reducer(lambda x, y: T.max(x, y), [T.float32("-inf")])' in printed


def test_functions_without_cross_thread_reductions_are_returned_as_they_are():
    func = tilelang.parse("""
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.thread_binding(64, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
""")["main"]
    assert lower_cross_thread_reduction(func) is func


@pytest.mark.parametrize(
    "init, why",
    [("T.float32(1)", "the init must store the identity")],
)
def test_a_reducer_it_cannot_combine_is_a_build_error(init, why):
    mod = rowsum(4, 64, 32, init=init)
    with pytest.raises(BuildError, match=f"block 'B' reduces across threads, but .*{why}"):
        lower_cross_thread_reduction(mod["main"], "main")


def test_two_thread_axes_are_refused():
    mod = tilelang.parse("""
@T.prim_func
def main(A: T.Buffer((4, 8, 32), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(8, thread="threadIdx.y"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SRR", [i, j, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vj, vk]
""")
    with pytest.raises(BuildError, match="one loop bound to threadIdx.x"):
        lower_cross_thread_reduction(mod["main"], "main")


@pytest.mark.parametrize("target", ["python", "c"])
def test_cpu_backends_compute_the_schedule_as_written(target):
    a = np.random.default_rng(0).random((8, 100)).astype("float32")
    b = np.zeros(8, "float32")
    tilelang.build(rowsum(8, 100, 32), target, auto_schedule=False)["main"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


# ------------------------------------------------------------------ CUDA


def ptxas_log(lib, arch="sm_90"):
    from tilelang.backends.cuda import compile_cuda, nvcc_flags

    from tilelang.target import Target

    flags = nvcc_flags(Target(f"cuda -arch={arch}"))
    log = compile_cuda(lib.get_source(), [*flags, "-Xptxas", "-v"]).log
    ptx = compile_cuda(lib.get_source(), flags, "ptx").data.decode()
    return log, ptx


CASES = [
    (8, 100, 32, "float32", "sum"),  # one warp, predicated
    (8, 100, 20, "float32", "max"),  # a partial warp
    (4, 1000, 96, "float64", "sum"),  # three warps, predicated
    (4, 100, 48, "float32", "max"),  # a warp and a half
    (4, 1024, 256, "int32", "max"),
    (2, 4096, 1024, "float32", "sum"),  # the most threads a block has
    (4, 256, 64, "int8", "min"),  # shuffled as int
    (4, 256, 64, "float16", "sum"),
]


@needs_nvcc
@pytest.mark.parametrize(
    "rows, cols, threads, dtype, op", [*CASES, (4, 256, 64, "bfloat16", "sum")]
)
def test_cuda_allreduce_builds_without_spills(rows, cols, threads, dtype, op):
    lib = tilelang.build(rowsum(rows, cols, threads, dtype, op), "cuda -arch=sm_90")
    source = lib.get_source()
    assert lib.backend_module.compile_log == ""
    assert f"tl_block_allreduce<{threads}>(" in source
    (kernel,) = lib.backend_module.source.functions["main"].kernels
    assert kernel.block == (threads, 1, 1)
    log, ptx = ptxas_log(lib)
    assert "shfl.sync" in ptx
    assert ("bar.sync" in ptx) == (threads > 32)  # one warp needs no barrier
    assert "0 bytes spill stores, 0 bytes spill loads" in log
    assert "0 bytes stack frame" in log


@needs_nvcc
def case_arrays(rows, cols, dtype, op, seed=0):
    rng = np.random.default_rng(seed)
    if dtype in ("int8", "int32"):
        a = rng.integers(-100, 100, (rows, cols)).astype(dtype)
    else:
        a = (rng.random((rows, cols)) + 0.5).astype(dtype)
    want = {"sum": np.sum, "max": np.max, "min": np.min}[op](a.astype("float64"), axis=1)
    return a, np.zeros(rows, dtype), want


@pytest.mark.skipif(host_compiler() is None, reason="needs a host C++ compiler")
def test_cuda_allreduce_computes_on_the_threaded_host_emulation(tmp_path):
    """The generated kernels, compiled by the host C++ compiler with each thread of a
    block a host thread (barriers, per-warp shuffles: tilelang.testing.cuda_emulation),
    against NumPy: partial warps, predicated splits, several warps, 1024 threads."""
    cases = [c for c in CASES if c[3] != "float16"]  # no host half type
    funcs = {
        f"case{i}": rowsum(rows, cols, threads, dtype, op)["main"].with_attr(
            "global_symbol", f"case{i}"
        )
        for i, (rows, cols, threads, dtype, op) in enumerate(cases)
    }
    program = HostProgram(tilelang.build(tilelang.IRModule(funcs), "cuda"), tmp_path)
    assert program.threaded
    for i, (rows, cols, _, dtype, op) in enumerate(cases):
        a, b, want = case_arrays(rows, cols, dtype, op)
        program.run(f"case{i}", [a, b])
        np.testing.assert_allclose(b.astype("float64"), want, rtol=1e-5, err_msg=str(cases[i]))


def test_an_allreduce_needs_the_whole_thread_block():
    """Threads along threadIdx.y would each run their own allreduce through one shared
    array: a BuildError, not a kernel that computes garbage."""
    mod = tilelang.parse("""
@T.prim_func
def main(A: T.Buffer((4, 2, 64), "float32"), B: T.Buffer((4, 2), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(2, thread="threadIdx.y"):
            for k in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        B[vi, vj] = T.float32(0)
                    B[vi, vj] = B[vi, vj] + A[vi, vj, vk]
""")
    with pytest.raises(BuildError, match="needs the whole thread block to take part"):
        tilelang.build(mod, "cuda", auto_schedule=False)


@pytest.mark.gpu
@pytest.mark.parametrize("rows, cols, threads, dtype, op", CASES)
def test_cuda_allreduce_on_the_gpu(rows, cols, threads, dtype, op):
    a, b, want = case_arrays(rows, cols, dtype, op)
    tilelang.build(rowsum(rows, cols, threads, dtype, op), "cuda")["main"](a, b)
    np.testing.assert_allclose(b.astype("float64"), want, rtol=2e-3 if dtype == "float16" else 1e-5)

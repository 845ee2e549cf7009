"""Tensor cores through WMMA, without a GPU.

A half-precision matmul is tensorized by hand with the registered ``wmma_*``
intrinsics (and by the default GPU rules): the CUDA source declares fragment arrays
and calls ``nvcuda::wmma``; nvcc compiles it for sm_80 with no warning, the PTX holds
the ``wmma.load``/``wmma.mma``/``wmma.store`` instructions, and ``ptxas -v`` reports
no spills and registers within the launch bounds. The same tensorized IR runs on the
python reference backend (which executes the fragment intrinsics on NumPy) against
NumPy, so the fragment indices, offsets and strides are checked without a GPU. The
runs on a GPU are marked ``gpu`` at the end.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import tilelang
from tilelang import tir
from tilelang.errors import BuildError, ScheduleError
from tilelang.intrinsics import cuda_wmma as W
from tilelang.schedule.rules.gpu import default_gpu_schedule
from tilelang.target import Target

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
TARGET = "cuda -arch=sm_80"
#: the default rules choose WMMA where the arch has no mma.sync m16n8k16 (sm_70, sm_75);
#: on sm_80 and later they choose ldmatrix + mma.sync (tests/test_cuda_mma.py)
WMMA_TARGET = "cuda -arch=sm_75"
REGISTERS_PER_SM = 65536


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def hgemm(m, n, k, out="float32", cast=True, b_trans=False):
    """``C = A @ B`` over float16 operands, accumulated in ``out`` (``A @ B.T`` with
    ``b_trans``: B is ``n x k``)."""
    a, b = ("A[vi, vk]", "B[vj, vk]" if b_trans else "B[vk, vj]")
    b_shape = f"({n}, {k})" if b_trans else f"({k}, {n})"
    if cast and out != "float16":
        a, b = f'T.Cast("{out}", {a})', f'T.Cast("{out}", {b})'
    zero = "T.float32(0)" if out == "float32" else f'T.Cast("{out}", T.float32(0))'
    return tilelang.parse(f"""
@T.prim_func
def hgemm(A: T.Buffer(({m}, {k}), "float16"), B: T.Buffer({b_shape}, "float16"),
          C: T.Buffer(({m}, {n}), "{out}")):
    T.func_attr({{"global_symbol": "hgemm", "tir.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = {zero}
            C[vi, vj] = C[vi, vj] + {a} * {b}
""")


WMMA_NAMES = {
    "scopes": ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"),
    "load_a": "wmma_load_16x16x16_f16_a_shared", "load_b": "wmma_load_16x16x16_f16_b_shared",
    "store": "wmma_store_16x16x16_f32_global", "fill": "wmma_fill_16x16x16_f32",
    "sync": "wmma_sync_16x16x16_f16f16f32",
}  # fmt: skip


def tensorize_by_hand(mod, warps=(2, 2), frags=(2, 2), k_frags=2, names=WMMA_NAMES):
    """The WMMA schedule written out primitive by primitive, as a user would (another
    family's scopes and intrinsic names with ``names``)."""
    scope_a, scope_b, scope_acc = names["scopes"]
    sch = tir.Schedule(mod)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i, ii = sch.split(i, [None, 16])
    j, ji = sch.split(j, [None, 16])
    k, ki = sch.split(k, [None, 16])
    i0, i1, i2 = sch.split(i, [None, warps[0], frags[0]])
    j0, j1, j2 = sch.split(j, [None, warps[1], frags[1]])
    k0, k1 = sch.split(k, [None, k_frags])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2, ii, ji, ki)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    warp = sch.fuse(i1, j1)
    sch.bind(warp, "threadIdx.y")
    acc = sch.cache_write(block, 0, scope_acc)
    sch.reverse_compute_at(acc, warp)
    a_shared = sch.cache_read(block, 0, "shared")
    a_frag = sch.cache_read(block, 0, scope_a)
    b_shared = sch.cache_read(block, 1, "shared")
    b_frag = sch.cache_read(block, 1, scope_b)
    for frag, intrin in ((a_frag, names["load_a"]), (b_frag, names["load_b"])):
        sch.compute_at(frag, k1)
        r, c = sch.get_loops(frag)[-2:]
        r0, r1 = sch.split(r, [None, 16])
        c0, c1 = sch.split(c, [None, 16])
        sch.reorder(r0, c0, r1, c1)
        sch.tensorize(r1, intrin)
    for fetch in (a_shared, b_shared):
        sch.compute_at(fetch, k0)
        fused = sch.fuse(*sch.get_loops(fetch)[-2:])
        _, ty, tx, vec = sch.split(fused, [None, warps[0] * warps[1], 32, 8])
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
        sch.vectorize(vec)
    r, c = sch.get_loops(acc)[-2:]
    r0, r1 = sch.split(r, [None, 16])
    c0, c1 = sch.split(c, [None, 16])
    sch.reorder(r0, c0, r1, c1)
    sch.tensorize(r1, names["store"])
    init = sch.decompose_reduction(block, k0)
    sch.tensorize(sch.get_loops(init)[-2], names["fill"])
    sch.tensorize(ii, names["sync"])
    return sch


def operands(m, n, k, seed=0, b_trans=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype("float16")
    b = rng.standard_normal((n, k) if b_trans else (k, n)).astype("float16")
    bt = b.T if b_trans else b
    return a, b, a.astype("float32") @ bt.astype("float32")


def run_reference(mod, m, n, k, out="float32", b_trans=False):
    a, b, want = operands(m, n, k, b_trans=b_trans)
    c = np.full((m, n), np.nan, out)
    tilelang.build(mod, target="python", auto_schedule=False)["hgemm"](a, b, c)
    return c, want


def ptxas(source, arch="sm_80"):
    """``(registers, spill stores, spill loads)`` per kernel and the PTX text."""
    from tilelang.backends.cuda import compile_cuda, nvcc_flags

    flags = nvcc_flags(Target(f"cuda -arch={arch}"))
    log = compile_cuda(source, [*flags, "-Xptxas", "-v"]).log
    report, current = {}, None
    for line in log.splitlines():
        entry = re.search(r"Compiling entry function '(\w+)'", line)
        current = entry.group(1) if entry else current
        spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if spills and current:
            report.setdefault(current, [0, 0, 0])[1:] = [int(spills[1]), int(spills[2])]
        regs = re.search(r"Used (\d+) registers", line)
        if regs and current:
            report.setdefault(current, [0, 0, 0])[0] = int(regs[1])
    return report, compile_cuda(source, flags, "ptx").data.decode()


# ------------------------------------------------------------- intrinsics


def test_the_wmma_intrinsics_are_registered_under_tvms_names():
    from tilelang.schedule.tensor_intrin import TensorIntrin

    for name in ("wmma_fill_16x16x16_f32", "wmma_load_16x16x16_f16_a_shared",
                 "wmma_load_16x16x16_f16_b_shared", "wmma_sync_16x16x16_f16f16f32",
                 "wmma_store_16x16x16_f32_global", "wmma_store_16x16x16_f32_shared"):  # fmt: skip
        intrin = TensorIntrin.get(name)
        scopes = {b.scope for b in intrin.desc_buffers()}
        assert scopes & {"wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"}
    assert W.wmma_sync(32, 8, 16) == "wmma_sync_32x8x16_f16f16f32"
    a = TensorIntrin.get(W.wmma_load(32, 8, 16, "a")).desc_buffers()[0]
    b = TensorIntrin.get(W.wmma_load(32, 8, 16, "b")).desc_buffers()[0]
    assert [x.value for x in a.shape] == [32, 16] and [x.value for x in b.shape] == [16, 8]
    with pytest.raises(ValueError, match="no 16x16x8 fragment"):
        W.wmma_sync(16, 16, 8)


def test_tensorize_by_name_needs_no_import_of_the_library():
    """As TVM's tensor_intrin: a name not registered yet loads the library first."""
    import subprocess
    import sys

    code = (
        "import tilelang\n"
        "from tilelang.schedule.tensor_intrin import registered_names, TensorIntrin\n"
        "assert 'wmma_sync_16x16x16_f16f16f32' not in registered_names()\n"
        "print(TensorIntrin.get('wmma_sync_16x16x16_f16f16f32').name)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "wmma_sync_16x16x16_f16f16f32"


def test_tensorize_refuses_a_block_that_is_not_the_intrinsic():
    """A float16 accumulation does not match the float32 mma intrinsic."""
    sch = tir.Schedule(hgemm(32, 32, 32, out="float16"))
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(k, [None, 16])
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.get_loops(sch.get_block("C"))[-2:]
    sch.reorder(i0, j0, k0, i1, j1, k1)
    before = sch.mod
    with pytest.raises(ScheduleError, match="tensorize"):
        sch.tensorize(i1, "wmma_sync_16x16x16_f16f16f32")
    assert tilelang.ir.structural_equal(sch.mod, before)


# -------------------------------------------------- by hand, without a GPU


def test_tensorized_ir_computes_the_product_on_the_reference_backend():
    got, want = run_reference(tensorize_by_hand(hgemm(128, 128, 64)).mod, 128, 128, 64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_fragments_shrink_to_one_warps_tiles():
    lowered = tilelang.lower(tensorize_by_hand(hgemm(256, 256, 256)).mod).script()
    assert 'T.allocate([1024], "float32", "wmma.accumulator")' in lowered  # 2x2 tiles
    assert 'T.allocate([512], "float16", "wmma.matrix_a")' in lowered  # 2x1 tiles
    assert 'T.allocate([2048], "float16", "shared")' in lowered  # a 64 x 32 panel


@needs_nvcc
def test_cuda_declares_fragments_and_calls_wmma():
    lib = tilelang.build(tensorize_by_hand(hgemm(256, 256, 256)).mod, TARGET, auto_schedule=False)
    source = lib.get_source()
    assert lib.backend_module.compile_log == ""  # nvcc printed no warning
    assert "#include <mma.h>" in source
    assert (
        "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> "
        "C_wmma_accumulator[4];" in source
    )
    assert (
        "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, "
        "nvcuda::wmma::row_major> A_shared_wmma_matrix_a[2];" in source
    )
    assert "nvcuda::wmma::fill_fragment(C_wmma_accumulator[" in source
    assert "nvcuda::wmma::mma_sync(C_wmma_accumulator[(i_0_2 * 2) + j_0_2]" in source
    assert ", 256, nvcuda::wmma::mem_row_major);" in source  # C's row stride
    # one barrier before each step's fetch (the last step's readers), one after it
    assert source.count("__syncthreads();") == 2


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_has_tensor_core_instructions_and_ptxas_no_spills(arch):
    mod = tensorize_by_hand(hgemm(256, 256, 256)).mod
    lib = tilelang.build(mod, f"cuda -arch={arch}", auto_schedule=False)
    report, ptx = ptxas(lib.get_source(), arch)
    instructions = set(re.findall(r"wmma\.[\w.]+", ptx))
    assert "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32" in instructions
    assert "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16" in instructions
    assert "wmma.load.b.sync.aligned.row.m16n16k16.shared.f16" in instructions
    assert "wmma.store.d.sync.aligned.row.m16n16k16.global.f32" in instructions
    ((registers, stores, loads),) = report.values()
    assert (stores, loads) == (0, 0)
    assert registers <= 255 and registers * 128 <= REGISTERS_PER_SM


@needs_nvcc
def test_a_fragment_no_intrinsic_uses_is_a_build_error():
    sch = tir.Schedule(hgemm(32, 32, 32))
    block = sch.get_block("C")
    acc = sch.cache_write(block, 0, "wmma.accumulator")
    i = sch.get_loops(block)[0]
    sch.bind(i, "blockIdx.x")
    sch.bind(sch.get_loops(acc)[0], "threadIdx.x")
    with pytest.raises(BuildError, match="never used by a fragment intrinsic"):
        tilelang.build(sch.mod, TARGET, auto_schedule=False)


# ---------------------------------------------------------- default rules


@pytest.mark.parametrize("shape", [(128, 64, 48), (64, 32, 16), (16, 16, 16)])
def test_default_rules_tensorize_half_matmuls(shape):
    sch = default_gpu_schedule(hgemm(*shape), WMMA_TARGET)
    assert "wmma_sync_16x16x16_f16f16f32" in str(sch.trace)
    got, want = run_reference(sch.mod, *shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@needs_nvcc
def test_half_accumulation_uses_half_fragments():
    mod = hgemm(64, 64, 32, out="float16")
    sch = default_gpu_schedule(mod, WMMA_TARGET)
    for name in ("wmma_fill_16x16x16_f16", "wmma_sync_16x16x16_f16f16f16",
                 "wmma_store_16x16x16_f16_global"):  # fmt: skip
        assert name in str(sch.trace)
    got, want = run_reference(sch.mod, 64, 64, 32, out="float16")
    np.testing.assert_allclose(got.astype("float32"), want, rtol=1e-2, atol=5e-2)
    report, ptx = ptxas(tilelang.build(mod, WMMA_TARGET).get_source(), "sm_75")
    assert "wmma.mma.sync.aligned.row.row.m16n16k16.f16.f16" in ptx
    assert [spills for _, *spills in report.values()] == [[0, 0]]


@needs_nvcc
def test_a_transposed_b_loads_column_major_fragments():
    """``A @ B.T`` (a linear layer): B's tiles are loaded into col_major fragments and
    multiplied by the _trans mma intrinsic."""
    mod = hgemm(128, 64, 64, b_trans=True)
    sch = default_gpu_schedule(mod, WMMA_TARGET)
    trace = str(sch.trace)
    assert "wmma_load_16x16x16_f16_b_trans_shared" in trace
    assert "wmma_sync_16x16x16_f16f16f32_trans" in trace
    got, want = run_reference(sch.mod, 128, 64, 64, b_trans=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    lib = tilelang.build(mod, WMMA_TARGET)
    source = lib.get_source()
    assert "nvcuda::wmma::col_major> B_shared_wmma_matrix_b[" in source
    report, ptx = ptxas(source, "sm_75")
    assert "wmma.load.b.sync.aligned.col.m16n16k16.shared.f16" in ptx
    assert "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32" in ptx
    assert [spills for _, *spills in report.values()] == [[0, 0]]


def test_default_rules_keep_simt_tiling_where_tensor_cores_do_not_apply():
    cases = [
        (hgemm(64, 64, 64), "cuda -arch=sm_61"),  # no tensor cores
        (hgemm(40, 40, 40), TARGET),  # no whole 16x16 tiles
    ]
    for mod, target in cases:
        trace = str(default_gpu_schedule(mod, target).trace)
        assert "wmma" not in trace and "mma_" not in trace and "threadIdx.x" in trace


@needs_nvcc
def test_default_half_matmul_builds_with_tensor_cores():
    lib = tilelang.build(hgemm(1024, 1024, 1024), WMMA_TARGET)
    source = lib.get_source()
    assert lib.backend_module.compile_log == ""
    assert "nvcuda::wmma::mma_sync" in source
    (kernel,) = lib.backend_module.source.functions["hgemm"].kernels
    assert kernel.block == (32, 8, 1)  # 8 warps, a 128 x 128 tile of C per block
    # rows padded to 40, two versions (the k loop is software-pipelined): 5120 + 5112
    assert "__shared__ __align__(16) half A_shared[10232];" in source
    report, ptx = ptxas(source, "sm_75")
    assert "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32" in ptx
    assert "cp.async" not in ptx  # sm_75 has no asynchronous copies
    ((registers, stores, loads),) = report.values()
    assert (stores, loads) == (0, 0) and registers * kernel.threads <= REGISTERS_PER_SM


# ----------------------------------------------------------- tuning space


@needs_nvcc
def test_the_cuda_space_samples_tensor_core_tilings():
    from tilelang.tune.space import apply_space
    from tilelang.tune.space_cuda import cuda_space

    mod, space = hgemm(128, 128, 64), cuda_space(Target(WMMA_TARGET))
    candidates = [apply_space(mod, space, seed) for seed in range(6)]
    tilings = set()
    for sch in candidates:
        trace = str(sch.trace)
        assert "sample_categorical" in trace and "wmma_sync_16x16x16_f16f16f32" in trace
        tilings.add(re.search(r"factors=\[None, (\d+), (\d+)\]", trace).groups())
    assert len(tilings) > 1  # the draws differ in warps / fragments per warp
    for sch in candidates[:2]:
        got, want = run_reference(sch.mod, 128, 128, 64)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    lib = tilelang.build(candidates[0].mod, WMMA_TARGET, auto_schedule=False)
    report, ptx = ptxas(lib.get_source(), "sm_75")
    assert "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32" in ptx
    assert [spills for _, *spills in report.values()] == [[0, 0]]


# ------------------------------------------------------------ on a GPU


@pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                    reason="needs a host C++ compiler")  # fmt: skip
def test_wmma_kernels_compute_on_the_threaded_host_emulation(tmp_path):
    """The default sm_75 WMMA kernels as printed (fragments, barriers, the shared
    panels double-buffered), each thread of a block a host thread and nvcuda::wmma a
    host stand-in whose lanes each hold the whole tile, against NumPy."""
    cases = [((64, 64, 64), False, "float32"), ((128, 64, 48), False, "float32"),
             ((64, 128, 64), True, "float32"), ((64, 64, 32), False, "float16")]  # fmt: skip
    source = emulate_hgemm_cases(cases, WMMA_TARGET, tmp_path)
    assert "nvcuda::wmma::mma_sync" in source


def emulate_hgemm_cases(cases, target, tmp_path) -> str:
    """Builds one module of :func:`hgemm` cases ``((m, n, k), b_trans, out dtype)`` for
    ``target`` with the default rules, runs each on the threaded host emulation and
    checks it against NumPy; returns the generated source."""
    from tilelang.testing.cuda_emulation import HostProgram

    funcs = {
        f"case{i}": hgemm(*shape, out=out, b_trans=bt)["hgemm"].with_attr(
            "global_symbol", f"case{i}"
        )
        for i, (shape, bt, out) in enumerate(cases)
    }
    lib = tilelang.build(tilelang.IRModule(funcs), target)
    program = HostProgram(lib, tmp_path)
    for i, (shape, bt, out) in enumerate(cases):
        a, b, want = operands(*shape, b_trans=bt)
        c = np.full(shape[:2], np.nan, out)
        program.run(f"case{i}", [a, b, c])
        tol = (1e-5, 1e-4) if out == "float32" else (1e-2, 5e-2)
        np.testing.assert_allclose(c.astype("float32"), want, rtol=tol[0], atol=tol[1])
    return lib.get_source()


@pytest.mark.gpu
def test_tensor_core_matmul_on_the_gpu():
    cases = [
        (tensorize_by_hand(hgemm(1024, 1024, 1024)).mod, False),
        (hgemm(1024, 1024, 1024), False),
        (hgemm(512, 256, 128, b_trans=True), True),
    ]
    for mod, b_trans in cases:
        lib = tilelang.build(mod, "cuda")
        m, n = mod["hgemm"].buffer_map[mod["hgemm"].params[2]].shape
        k = mod["hgemm"].buffer_map[mod["hgemm"].params[0]].shape[1]
        m, n, k = (x.value for x in (m, n, k))
        a, b, want = operands(m, n, k, b_trans=b_trans)
        c = np.full((m, n), np.nan, "float32")
        lib["hgemm"](a, b, c)
        np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-2)

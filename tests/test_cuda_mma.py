"""Tensor cores through ``ldmatrix`` and ``mma.sync`` (m16n8k16), without a GPU.

The ``mma_*`` intrinsics tensorize a half-precision matmul by hand and in the default
GPU rules (sm_80 and later). What can be checked here is checked: the lane layouts
the CUDA helpers use against PTX's fragment layouts (each 16x16 tile covered once, and
``ldmatrix``'s row addresses delivering to every lane the values ``mma.sync`` expects
there; the C helper computes the same table, run on the host); the tensorized IR on
the reference backend against NumPy; nvcc's build with no warning, the PTX's
``ldmatrix``/``mma.sync``/``cp.async`` instructions and ``ptxas -v`` (no spills,
registers within the launch bounds); the default kernels as printed, run by the
threaded host emulation against NumPy. The runs on a GPU are marked ``gpu``.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from test_cuda_tensor_core import (
    REGISTERS_PER_SM,
    emulate_hgemm_cases,
    hgemm,
    operands,
    ptxas,
    run_reference,
    tensorize_by_hand,
)
from tilelang.backends.cuda import mma

import tilelang
from tilelang.schedule.rules.gpu import default_gpu_schedule
from tilelang.schedule.tensor_intrin import TensorIntrin
from tilelang.testing.cuda_emulation import host_compiler

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
TARGET = "cuda -arch=sm_80"
MMA_NAMES = {
    "scopes": ("m16n8k16.matrixA", "m16n8k16.matrixB", "m16n8k16.matrixC"),
    "load_a": "mma_ldmatrix_f16_a", "load_b": "mma_ldmatrix_f16_b",
    "store": "mma_store_16x16_f32_global", "fill": "mma_fill_16x16_f32",
    "sync": "mma_f16f16f32",
}  # fmt: skip
KINDS = ("matrix_a", "matrix_b", "accumulator")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


# ---------------------------------------------------------- intrinsics


def test_the_mma_intrinsics_are_registered_under_tvms_names():
    expected = {
        "mma_ldmatrix_f16_a": {"shared", "m16n8k16.matrixA"},
        "mma_ldmatrix_f16_b": {"shared", "m16n8k16.matrixB"},
        "mma_ldmatrix_f16_b_trans": {"shared", "m16n8k16.matrixB"},
        "mma_f16f16f32": {"m16n8k16.matrixA", "m16n8k16.matrixB", "m16n8k16.matrixC"},
        "mma_f16f16f32_trans_b": {"m16n8k16.matrixA", "m16n8k16.matrixB", "m16n8k16.matrixC"},
        "mma_f16f16f16": {"m16n8k16.matrixA", "m16n8k16.matrixB", "m16n8k16.matrixC"},
        "mma_fill_16x16_f32": {"m16n8k16.matrixC"},
        "mma_store_16x16_f32_global": {"m16n8k16.matrixC", "global"},
        "mma_store_16x16_f32_shared": {"m16n8k16.matrixC", "shared"},
    }
    for name, scopes in expected.items():
        buffers = TensorIntrin.get(name).desc_buffers()
        assert {b.scope for b in buffers} == scopes, name
        assert all([x.value for x in b.shape] == [16, 16] for b in buffers)


def test_mma_fragments_are_16x16x16_only():
    from tilelang.intrinsics import cuda_wmma

    with pytest.raises(ValueError, match="16x16x16 tiles"):
        cuda_wmma.wmma_sync(32, 8, 16, family="mma", name="mma_32x8")


# ----------------------------------------------------------- lane layouts


@pytest.mark.parametrize("kind", KINDS)
def test_each_lane_layout_covers_the_tile_once(kind):
    cells = {mma.element(kind, lane, r) for lane in range(32) for r in range(8)}
    assert cells == {(i, j) for i in range(16) for j in range(16)}


def _ldmatrix_delivers(kind, col_major):
    """``{(lane, value index): tile (row, col)}`` that ``ldmatrix.x4`` (``.trans`` as
    :func:`mma.ldmatrix_trans` says) gives from the row addresses of
    :func:`mma.ldmatrix_row`, by PTX's definition: lane ``8 q + r`` addresses row ``r``
    of matrix ``q``; without ``.trans`` lane ``l`` receives that matrix's elements
    ``(l / 4, 2 (l % 4) + h)``, with ``.trans`` ``(2 (l % 4) + h, l / 4)``."""
    row_text, col_text = (t.replace("/", "//") for t in mma.ldmatrix_row(kind, col_major))
    trans = mma.ldmatrix_trans(kind, col_major)
    got = {}
    for lane in range(32):
        for q in range(4):
            for h in range(2):
                r, c = (2 * (lane % 4) + h, lane // 4) if trans else (lane // 4, 2 * (lane % 4) + h)
                source = 8 * q + r
                mem_row = eval(row_text, {"lane": source})
                mem_col = eval(col_text, {"lane": source}) + c
                tile = (mem_col, mem_row) if col_major else (mem_row, mem_col)
                got[(lane, 2 * q + h)] = tile
    return got


@pytest.mark.parametrize("kind", ["matrix_a", "matrix_b"])
@pytest.mark.parametrize("col_major", [False, True])
def test_ldmatrix_rows_deliver_the_mma_operand_layout(kind, col_major):
    want = {(lane, r): mma.element(kind, lane, r) for lane in range(32) for r in range(8)}
    assert _ldmatrix_delivers(kind, col_major) == want


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_cuda_helper_computes_the_same_layout(tmp_path):
    """``tl_mma_element`` (the text nvcc compiles) run on the host, every lane."""
    program = (
        "#include <stdio.h>\n#define __device__\n#define __forceinline__ inline\n"
        "static unsigned lane_value;\nstatic unsigned tl_lane() { return lane_value; }\n"
        + mma.helpers({"elementwise"})[1]
        + "\nint main() {\n  for (int kind = 0; kind < 3; ++kind)\n"
        "    for (lane_value = 0; lane_value < 32; ++lane_value)\n"
        "      for (int r = 0; r < 8; ++r) {\n        int row, col;\n"
        "        tl_mma_element(kind, r, &row, &col);\n"
        '        printf("%d %d\\n", row, col);\n      }\n}\n'
    )
    (tmp_path / "layout.cpp").write_text(program)
    subprocess.run(["g++", "-o", tmp_path / "layout", tmp_path / "layout.cpp"], check=True)
    out = subprocess.run([tmp_path / "layout"], capture_output=True, text=True, check=True)
    got = [tuple(map(int, line.split())) for line in out.stdout.splitlines()]
    want = [mma.element(k, lane, r) for k in KINDS for lane in range(32) for r in range(8)]
    assert got == want


# ------------------------------------------------- numbers, reference backend


def test_tensorized_by_hand_computes_the_product_on_the_reference_backend():
    sch = tensorize_by_hand(hgemm(128, 128, 64), names=MMA_NAMES)
    got, want = run_reference(sch.mod, 128, 128, 64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "shape, out, b_trans",
    [((128, 64, 48), "float32", False), ((64, 32, 16), "float32", False),
     ((128, 64, 64), "float32", True), ((64, 64, 32), "float16", False)],
)  # fmt: skip
def test_default_rules_use_mma_sync_on_sm80(shape, out, b_trans):
    sch = default_gpu_schedule(hgemm(*shape, out=out, b_trans=b_trans), TARGET)
    trace = str(sch.trace)
    suffix = "f32" if out == "float32" else "f16"
    assert f'"mma_f16f16{suffix}{"_trans_b" if b_trans else ""}"' in trace
    assert f'"mma_ldmatrix_f16_b{"_trans" if b_trans else ""}"' in trace
    assert "wmma" not in trace
    got, want = run_reference(sch.mod, *shape, out=out, b_trans=b_trans)
    tol = (1e-5, 1e-4) if out == "float32" else (1e-2, 5e-2)
    np.testing.assert_allclose(got.astype("float32"), want, rtol=tol[0], atol=tol[1])


# ------------------------------------------------------------ nvcc, ptxas


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_default_half_matmul_builds_with_ldmatrix_and_mma_sync(arch):
    lib = tilelang.build(hgemm(1024, 1024, 1024), f"cuda -arch={arch}")
    source = lib.get_source()
    assert lib.backend_module.compile_log == ""
    (kernel,) = lib.backend_module.source.functions["hgemm"].kernels
    assert kernel.block == (32, 8, 1)
    assert "__align__(16) float C_m16n8k16_matrixC[64];" in source  # 4x2 tiles per warp
    report, ptx = ptxas(source, arch)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx  # A
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx  # row-major B
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert "cp.async.cg.shared.global" in ptx
    assert "wmma" not in ptx
    ((registers, stores, loads),) = report.values()
    assert (stores, loads) == (0, 0) and registers * kernel.threads <= REGISTERS_PER_SM
    # the fragment arrays live in registers (indexed by unrolled loops), not on a stack
    from tilelang.backends.cuda import compile_cuda, nvcc_flags

    from tilelang.target import Target

    flags = [*nvcc_flags(Target(f"cuda -arch={arch}")), "-Xptxas", "-v"]
    assert "0 bytes stack frame" in compile_cuda(source, flags).log


@needs_nvcc
def test_transposed_b_and_half_accumulation_build():
    for mod, instruction in (
        (hgemm(256, 128, 128, b_trans=True), "mma.sync.aligned.m16n8k16.row.col.f32"),
        (hgemm(128, 128, 64, out="float16"), "mma.sync.aligned.m16n8k16.row.col.f16"),
    ):
        report, ptx = ptxas(tilelang.build(mod, TARGET).get_source())
        assert instruction in ptx
        assert [spills for _, *spills in report.values()] == [[0, 0]]
    # B[j, k] needs no transposing load: its rows already run along k
    _, ptx = ptxas(tilelang.build(hgemm(256, 128, 128, b_trans=True), TARGET).get_source())
    assert "ldmatrix.sync.aligned.m8n8.x4.trans" not in ptx


@needs_nvcc
def test_a_fragment_loaded_from_global_memory_goes_element_by_element():
    """ldmatrix reads shared memory only: a tile loaded straight from a global buffer
    is read per lane through the fragment layout (and computes the same)."""
    from tilelang import tir
    from tilelang.intrinsics import cuda_mma

    sch = tir.Schedule(hgemm(32, 32, 32))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 16])
    sch.reorder(i0, j0, k0, i1, j1, k1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    acc = sch.cache_write(block, 0, "m16n8k16.matrixC")
    sch.reverse_compute_at(acc, j0)
    a_shared = sch.cache_read(block, 0, "shared")  # A through shared memory (ldmatrix)
    a_frag = sch.cache_read(block, 0, "m16n8k16.matrixA")
    b_frag = sch.cache_read(block, 1, "m16n8k16.matrixB")  # B straight from global
    for frag, intrin in ((a_frag, cuda_mma.mma_ldmatrix("a")),
                         (b_frag, cuda_mma.mma_ldmatrix("b", scope="global"))):  # fmt: skip
        sch.compute_at(frag, k0)
        sch.tensorize(sch.get_loops(frag)[-2], intrin)
    sch.compute_at(a_shared, k0)
    _, lanes = sch.split(sch.fuse(*sch.get_loops(a_shared)[-2:]), [None, 32])
    sch.bind(lanes, "threadIdx.x")  # the warp: 32 lanes
    sch.tensorize(sch.get_loops(acc)[-2], "mma_store_16x16_f32_global")
    init = sch.decompose_reduction(block, k0)
    sch.tensorize(sch.get_loops(init)[-2], "mma_fill_16x16_f32")
    sch.tensorize(i1, "mma_f16f16f32")
    got, want = run_reference(sch.mod, 32, 32, 32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    source = tilelang.build(sch.mod, TARGET, auto_schedule=False).get_source()
    assert "tl_ldmatrix_x4(" in source and "tl_mma_load(1, " in source
    report, ptx = ptxas(source)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans" not in ptx  # B is not loaded by ldmatrix
    assert "mma.sync.aligned.m16n8k16" in ptx
    assert [spills for _, *spills in report.values()] == [[0, 0]]


@needs_nvcc
def test_a_kernel_without_a_whole_warp_is_a_build_error():
    from tilelang import tir
    from tilelang.errors import BuildError

    sch = tir.Schedule(hgemm(32, 16, 16))
    block = sch.get_block("C")
    i0, i1 = sch.split(sch.get_loops(block)[0], [None, 16])
    sch.bind(i0, "blockIdx.x")  # one block per 16 rows, one thread per block
    acc = sch.cache_write(block, 0, "m16n8k16.matrixC")
    sch.reverse_compute_at(acc, i0)
    a = sch.cache_read(block, 0, "m16n8k16.matrixA")
    b = sch.cache_read(block, 1, "m16n8k16.matrixB")
    for frag, intrin in ((a, "mma_ldmatrix_f16_a_global"), (b, "mma_ldmatrix_f16_b_global")):
        sch.compute_at(frag, i0)
        sch.tensorize(sch.get_loops(frag)[-2], intrin)
    init = sch.decompose_reduction(block, i1)
    sch.tensorize(sch.get_loops(init)[-2], "mma_fill_16x16_f32")
    sch.tensorize(sch.get_loops(acc)[-2], "mma_store_16x16_f32_global")
    sch.tensorize(i1, "mma_f16f16f32")
    got, want = run_reference(sch.mod, 32, 16, 16)  # the IR itself computes the product
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    with pytest.raises(BuildError, match="warp-wide: it needs threadIdx.x of extent 32"):
        tilelang.build(sch.mod, TARGET, auto_schedule=False)


@needs_nvcc
def test_the_cuda_space_samples_both_fragment_families_on_sm80():
    from tilelang.target import Target
    from tilelang.tune.space import apply_space
    from tilelang.tune.space_cuda import cuda_space

    mod, space = hgemm(128, 128, 64), cuda_space(Target(TARGET))
    traces = [str(apply_space(mod, space, seed).trace) for seed in range(12)]
    families = {"mma" if '"mma_f16f16f32"' in t else "wmma" for t in traces}
    assert families == {"mma", "wmma"}
    assert all(re.search(r'"(w?mma_)', t) for t in traces)


# ----------------------------------------------------- threaded host emulation

EMULATED = [
    ((64, 64, 64), False, "float32"),
    ((128, 64, 48), False, "float32"),  # k loop of 3 steps: past the two-stage pipeline
    ((64, 64, 16), False, "float32"),  # one step: shorter than the pipeline
    ((64, 128, 64), True, "float32"),  # B[j, k]
    ((64, 64, 32), False, "float16"),  # half accumulators
]


@pytest.mark.skipif(host_compiler() is None, reason="needs a host C++ compiler")
def test_mma_kernels_compute_on_the_threaded_host_emulation(tmp_path):
    """The default sm_80 kernels as printed — cp.async double buffering, barriers,
    ldmatrix, mma.sync — compiled by the host C++ compiler, each thread of a block a
    host thread, the PTX helpers replaced by what the instructions do
    (tilelang.testing.cuda_host_prelude), against NumPy."""
    source = emulate_hgemm_cases(EMULATED, TARGET, tmp_path)
    assert source.count("tl_ldmatrix_x4(") >= len(EMULATED)


# ------------------------------------------------------------ on a GPU


@pytest.mark.gpu
def test_mma_sync_matmul_on_the_gpu():
    cases = [
        (tensorize_by_hand(hgemm(1024, 1024, 1024), names=MMA_NAMES).mod, False, "float32"),
        (hgemm(1024, 1024, 1024), False, "float32"),
        (hgemm(512, 256, 128, b_trans=True), True, "float32"),
        (hgemm(256, 256, 128, out="float16"), False, "float16"),
        # k loops of 1 and 3 steps: shorter than / just past the two-stage pipeline
        (hgemm(64, 64, 16), False, "float32"),
        (hgemm(128, 64, 48), False, "float32"),
    ]
    for mod, b_trans, out in cases:
        lib = tilelang.build(mod, "cuda")  # the default arch, as the other GPU tests
        func = mod["hgemm"]
        m, n = (x.value for x in func.buffer_map[func.params[2]].shape)
        k = func.buffer_map[func.params[0]].shape[1].value
        a, b, want = operands(m, n, k, b_trans=b_trans)
        c = np.full((m, n), np.nan, out)
        lib["hgemm"](a, b, c)
        tol = (1e-3, 1e-2) if out == "float32" else (1e-2, 0.5)
        np.testing.assert_allclose(c.astype("float32"), want, rtol=tol[0], atol=tol[1])

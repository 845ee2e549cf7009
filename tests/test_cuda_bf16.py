"""bfloat16 on CUDA without a GPU: kernels store ``__nv_bfloat16`` and compute in
float32, rounded after each operation (the rule every backend follows); bf16 matmuls
go to the tensor cores through ``ldmatrix`` + ``mma.sync.m16n8k16.f32.bf16.bf16.f32``.

Checked here: the generated text (types, conversions, no bfloat16 arithmetic
operators), nvcc builds with no warning and ``ptxas -v`` (no spills, registers within
the launch bounds) on sm_80/sm_90, the PTX's ``ldmatrix``/``mma`` instructions; the
generated kernels compiled by the host C++ compiler (tilelang.testing.cuda_emulation)
against the python reference backend bit for bit; the tensorized bf16 IR on the
reference backend, and the default tensor-core kernels on the threaded host
emulation, against NumPy. The runs on a GPU are marked ``gpu``.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from test_cuda_tensor_core import REGISTERS_PER_SM, ptxas

import tilelang
from tilelang.errors import ScheduleError
from tilelang.schedule.rules.gpu import default_gpu_schedule
from tilelang.schedule.tensor_intrin import TensorIntrin
from tilelang.testing.cuda_emulation import HostProgram, host_compiler

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
needs_cxx = pytest.mark.skipif(host_compiler() is None, reason="needs a host C++ compiler")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer(({n},), "bfloat16"), B: T.Buffer(({n},), "bfloat16"),
         I: T.Buffer(({n},), "int32"), C: T.Buffer(({n},), "bfloat16"),
         D: T.Buffer(({n},), "float32")):
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = T.max(A[vi] * B[vi] + A[vi] / T.bfloat16(3.0),
                          T.exp(B[vi]) - T.Cast("bfloat16", I[vi]))
    for i in range({n}):
        with T.block("D"):
            vi = T.axis.remap("S", [i])
            D[vi] = T.Cast("float32", C[vi]) + T.Cast("float32", A[vi] - B[vi])
"""


def elementwise(n=1024):
    return tilelang.parse(ELEMENTWISE.format(n=n))


def elementwise_arguments(n=1024, seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 4).astype(BF16)
    b = rng.standard_normal(n).astype(BF16)
    i = rng.integers(-100, 100, n).astype("int32")
    return [a, b, i, np.zeros(n, BF16), np.zeros(n, "float32")]


def bgemm(m, n, k, b_trans=False):
    b_shape, b_index = ((n, k), "B[vj, vk]") if b_trans else ((k, n), "B[vk, vj]")
    return tilelang.parse(f"""
@T.prim_func
def bgemm(A: T.Buffer(({m}, {k}), "bfloat16"), B: T.Buffer({b_shape}, "bfloat16"),
          C: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"global_symbol": "bgemm", "tir.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", {b_index})
""")


def bgemm_operands(m, n, k, b_trans=False, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(BF16)
    b = rng.standard_normal((n, k) if b_trans else (k, n)).astype(BF16)
    bt = b.T if b_trans else b
    return a, b, a.astype("float64") @ bt.astype("float64")


# ------------------------------------------------------------- elementwise


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
def test_bf16_kernels_build_with_nv_bfloat16(arch):
    lib = tilelang.build(elementwise(), f"cuda -arch={arch}")
    source = lib.get_source()
    assert lib.backend_module.compile_log == ""
    assert "#include <cuda_bf16.h>" in source
    assert "const __nv_bfloat16* __restrict__ A" in source or "const __nv_bfloat16* A" in source
    assert "__float2bfloat16_rn(" in source and "__bfloat162float(" in source
    assert "uint16_t" not in source  # bfloat16 storage is CUDA's own type, not bits
    report, _ = ptxas(source, arch)
    assert report and all(spills == [0, 0] for _, *spills in report.values())


@needs_cxx
def test_bf16_kernel_text_computes_what_the_reference_computes(tmp_path):
    """The generated kernels, compiled on the host, against the python backend: every
    operation rounded to bfloat16 alike, so the bits agree exactly."""
    mod = elementwise()
    want = elementwise_arguments()
    tilelang.build(mod, "python")["main"](*want)
    got = elementwise_arguments()
    HostProgram(tilelang.build(mod, "cuda"), tmp_path).run("main", got)
    np.testing.assert_array_equal(got[3].view("uint16"), want[3].view("uint16"))
    np.testing.assert_array_equal(got[4], want[4])
    # and the reference against NumPy's bfloat16 (ml_dtypes), operation by operation
    a, b, i = (x.astype("float32") for x in want[:3])

    def r(x):
        return np.asarray(x, "float32").astype(BF16).astype("float32")

    left = r(r(a * b) + r(a / np.float32(3.0)))
    right = r(r(np.exp(b)) - r(i))
    np.testing.assert_allclose(want[3].astype("float32"), np.maximum(left, right), rtol=1e-2)


@needs_cxx
def test_bf16_copies_move_the_bits_unchanged(tmp_path):
    """A store of a loaded bfloat16 is a copy, with no float round trip (a NaN's
    payload and a negative zero survive)."""
    mod = tilelang.parse("""
@T.prim_func
def main(A: T.Buffer((64,), "bfloat16"), B: T.Buffer((64,), "bfloat16")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[63 - vi]
""")
    source = tilelang.build(mod, "cuda").get_source()
    assert "__float2bfloat16_rn" not in source and "__bfloat162float" not in source
    bits = np.arange(64, dtype="uint16") * 997
    bits[:3] = (0x7FC1, 0x8000, 0xFF81)  # NaN with a payload, -0, -NaN
    a, b = bits.view(BF16), np.zeros(64, BF16)
    HostProgram(tilelang.build(mod, "cuda"), tmp_path).run("main", [a, b])
    np.testing.assert_array_equal(b.view("uint16"), bits[::-1])


@needs_nvcc
def test_default_rules_schedule_bf16_softmax():
    """A bfloat16 reduction through the default rules: cross-thread partials kept in
    shared memory as __nv_bfloat16, computed in float32."""
    n, m = 16, 256
    text = f"""
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "bfloat16"), B: T.Buffer(({n},), "bfloat16")):
    for i, k in T.grid({n}, {m}):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.bfloat16(0)
            B[vi] = B[vi] + A[vi, vk]
"""
    mod = tilelang.parse(text)
    lib = tilelang.build(mod, "cuda -arch=sm_90")
    assert lib.backend_module.compile_log == "" and lib.trace.insts
    report, _ = ptxas(lib.get_source(), "sm_90")
    assert all(spills == [0, 0] for _, *spills in report.values())
    # the scheduled IR on the reference backend (its thread loop run in turn: the row
    # summed in the same order, rounded to bfloat16 after each addition) against the
    # function as written
    scheduled = default_gpu_schedule(mod, "cuda -arch=sm_90").mod
    a = np.random.default_rng(0).random((n, m)).astype(BF16)
    got, want = np.zeros(n, BF16), np.zeros(n, BF16)
    tilelang.build(scheduled, "python", auto_schedule=False)["main"](a, got)
    tilelang.build(mod, "python")["main"](a, want)
    np.testing.assert_array_equal(got.view("uint16"), want.view("uint16"))
    np.testing.assert_allclose(got.astype("float32"), a.astype("float32").sum(axis=1), rtol=0.1)


# ------------------------------------------------------------- tensor cores


def test_the_bf16_mma_intrinsics_are_registered():
    scopes = ("m16n8k16.matrixA", "m16n8k16.matrixB", "m16n8k16.matrixC")
    expected = {
        "mma_ldmatrix_bf16_a": {"shared", scopes[0]},
        "mma_ldmatrix_bf16_b": {"shared", scopes[1]},
        "mma_ldmatrix_bf16_b_trans": {"shared", scopes[1]},
        "mma_bf16bf16f32": set(scopes),
        "mma_bf16bf16f32_trans_b": set(scopes),
    }
    for name, want in expected.items():
        buffers = TensorIntrin.get(name).desc_buffers()
        assert {b.scope for b in buffers} == want, name
        inputs = [b for b in buffers if b.scope != scopes[2]]
        assert all(str(b.dtype) == "bfloat16" for b in inputs), name


def test_bf16_tensor_cores_take_float32_accumulators_and_mma_only():
    from tilelang.intrinsics import cuda_mma, cuda_wmma

    with pytest.raises(ValueError, match="float32 accumulators"):
        cuda_mma.mma_sync("float16", in_dtype="bfloat16")
    with pytest.raises(ValueError, match="mma family"):
        cuda_wmma.wmma_load(operand="a", dtype="bfloat16")


@pytest.mark.parametrize(
    "shape, b_trans", [((128, 64, 48), False), ((64, 32, 16), False), ((128, 64, 64), True)]
)
def test_default_rules_put_bf16_matmuls_on_mma_sync(shape, b_trans):
    sch = default_gpu_schedule(bgemm(*shape, b_trans=b_trans), "cuda -arch=sm_80")
    trace = str(sch.trace)
    assert f'"mma_bf16bf16f32{"_trans_b" if b_trans else ""}"' in trace
    assert f'"mma_ldmatrix_bf16_b{"_trans" if b_trans else ""}"' in trace
    assert "wmma" not in trace and "f16f16" not in trace
    a, b, want = bgemm_operands(*shape, b_trans=b_trans)
    c = np.full(shape[:2], np.nan, "float32")
    tilelang.build(sch.mod, "python", auto_schedule=False)["bgemm"](a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


def test_bf16_matmuls_before_sm80_keep_the_simt_tiling():
    """WMMA (sm_70/75) has no bfloat16 fragments: no tensor-core plan there."""
    sch = default_gpu_schedule(bgemm(128, 128, 64), "cuda -arch=sm_75")
    trace = str(sch.trace)
    assert "tensorize" not in trace and '"shared"' in trace


def test_a_bf16_fragment_cannot_take_a_half_tile():
    from tilelang import tir

    sch = tir.Schedule(bgemm(16, 16, 16))
    a = sch.cache_read(sch.get_block("C"), 0, "m16n8k16.matrixA")
    with pytest.raises(ScheduleError, match="has dtype bfloat16, description F has float16"):
        sch.tensorize(sch.get_loops(a)[0], "mma_ldmatrix_f16_a_global")


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_default_bf16_matmul_builds_with_ldmatrix_and_mma_sync(arch):
    lib = tilelang.build(bgemm(1024, 1024, 1024), f"cuda -arch={arch}")
    source = lib.get_source()
    assert lib.backend_module.compile_log == ""
    (kernel,) = lib.backend_module.source.functions["bgemm"].kernels
    assert "__nv_bfloat16 A_shared_m16n8k16_matrixA" in source
    report, ptx = ptxas(source, arch)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx
    assert "cp.async.cg.shared.global" in ptx
    ((registers, stores, loads),) = report.values()
    assert (stores, loads) == (0, 0) and registers * kernel.threads <= REGISTERS_PER_SM


@needs_cxx
def test_bf16_mma_kernels_compute_on_the_threaded_host_emulation(tmp_path):
    """The default sm_80 bf16 kernels as printed (ldmatrix, mma.sync, cp.async), each
    thread of a block a host thread and the PTX helpers replaced by what the
    instructions do, against NumPy."""
    cases = [((64, 64, 64), False), ((64, 128, 32), True)]
    funcs = {
        f"case{i}": bgemm(*shape, b_trans=bt)["bgemm"].with_attr("global_symbol", f"case{i}")
        for i, (shape, bt) in enumerate(cases)
    }
    program = HostProgram(tilelang.build(tilelang.IRModule(funcs), "cuda -arch=sm_80"), tmp_path)
    for i, (shape, bt) in enumerate(cases):
        a, b, want = bgemm_operands(*shape, b_trans=bt)
        c = np.full(shape[:2], np.nan, "float32")
        program.run(f"case{i}", [a, b, c])
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


# ------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
def test_bf16_elementwise_on_the_gpu():
    mod = elementwise()
    want, got = elementwise_arguments(), elementwise_arguments()
    tilelang.build(mod, "python")["main"](*want)
    tilelang.build(mod, "cuda")["main"](*got)
    np.testing.assert_array_equal(got[3].view("uint16"), want[3].view("uint16"))
    np.testing.assert_array_equal(got[4], want[4])


@pytest.mark.gpu
@pytest.mark.parametrize("shape, b_trans", [((1024, 1024, 1024), False), ((256, 512, 128), True)])
def test_bf16_mma_matmul_on_the_gpu(shape, b_trans):
    a, b, want = bgemm_operands(*shape, b_trans=b_trans)
    c = np.full(shape[:2], np.nan, "float32")
    tilelang.build(bgemm(*shape, b_trans=b_trans), "cuda")["bgemm"](a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-2)

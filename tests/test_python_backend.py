"""The reference Python backend: generated lnumpy source, and numbers against NumPy
(small sizes: the generated code runs element by element in Python). The numerical
tests run on every CPU backend (python, c, llvm), so all three are held to one oracle."""

from __future__ import annotations

import numpy as np
import pytest
from tilelang.backends.python import build, codegen, register_extern

import tilelang
from tilelang.errors import BuildError

MM_RELU = """
@T.prim_func
def mm_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
            C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((16, 16), "float32")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""

# SEED §2 after split/reorder/reverse_compute_at, then decompose_reduction (16x16x16)
MM_RELU_SCHEDULED = """
@T.prim_func
def mm_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
            C: T.Buffer((16, 16), "float32")):
    Y = T.alloc_buffer((16, 16))
    for i, j_0 in T.grid(16, 4):
        for k, j_1 in T.grid(16, 4):
            with T.block("Y"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + j_1)
                vk = T.axis.reduce(16, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""

MM_RELU_DECOMPOSED = """
@T.prim_func
def mm_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
            C: T.Buffer((16, 16), "float32")):
    Y = T.alloc_buffer((16, 16))
    for i, j_0 in T.grid(16, 4):
        for j_1_init in range(4):
            with T.block("Y_init"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + j_1_init)
                Y[vi, vj] = T.float32(0)
        for k, j_1 in T.grid(16, 4):
            with T.block("Y_update"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + j_1)
                vk = T.axis.reduce(16, k)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""


def compile_text(text: str):
    return build(tilelang.lower(tilelang.parse(text)))


CPU_TARGETS = ["python", "c", "llvm"]


def build_text(text: str, target: str):
    return tilelang.build(tilelang.parse(text), target=target)


def rand(*shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("target", CPU_TARGETS)
@pytest.mark.parametrize(
    "text", [MM_RELU, MM_RELU_SCHEDULED, MM_RELU_DECOMPOSED], ids=["plain", "sched", "decomp"]
)
def test_mm_relu_forms_match_numpy(text, target):
    lib = build_text(text, target)
    a, b = rand(16, 16, seed=1), rand(16, 16, seed=2)
    c = np.zeros((16, 16), "float32")
    lib["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_generated_source_is_readable_lnumpy(golden):
    golden(compile_text(MM_RELU).get_source())


def test_scheduled_form_allocates_the_compacted_tile():
    source = compile_text(MM_RELU_SCHEDULED).get_source()
    assert "Y = np.empty(4, dtype=np.float32)" in source


def test_linear0_with_symbolic_sizes_takes_sizes_last():
    lowered = tilelang.lower(tilelang.parse_file("samples/linear0.tir"))
    fn = build(lowered).functions["linear0"]
    m, n = 7, 5
    x, w, b = rand(1, m, seed=3), rand(n, m, seed=4), rand(n, seed=5)
    z = np.zeros((1, n), "float32")
    fn(x, w, b, z, m, n)  # arrays, then tl.size_vars (m, n)
    np.testing.assert_allclose(z, x @ w.T + b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_matmul_two_blocks_through_tilelang_build(target):
    text = """
@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle) -> None:
  A = T.match_buffer(a, [16, 16])
  B = T.match_buffer(b, [16, 16])
  C = T.match_buffer(c, [16, 16])
  for i, j in T.grid(16, 16):
    with T.block("init"):
      vi, vj = T.axis.remap("SS", [i, j])
      C[vi, vj] = T.float32(0)
    for k in range(16):
      with T.block("update"):
        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
"""
    lib = tilelang.build(tilelang.parse(text), target=target)
    a, b = rand(16, 16, seed=6), rand(16, 16, seed=7)
    c = np.empty((16, 16), "float32")
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_loop_kinds_sample_matches_a_numpy_reference(target):
    lib = tilelang.build(tilelang.parse_file("samples/loop_kinds.tir"), target=target)
    for n in (-3, 1, 3, 9):
        a, b = np.abs(rand(16, seed=8)), np.abs(rand(2, 4, seed=9))
        ea, eb = a.copy(), b.copy()
        ea = (np.exp(ea) + np.arange(16, dtype="float32")).astype("float32")
        eb[:, 3] += np.float32(1)
        for u in range(4):
            x = u * 2 + n
            if x < 4:
                eb[0, u] = np.sqrt(eb[0, u]) if x > 1 else np.float32(0.5)
            else:
                eb[1, u] = max(eb[1, u], np.float32(0))
        lib["loop_kinds"](a, b, n)
        np.testing.assert_allclose(a, ea, rtol=1e-6)
        np.testing.assert_allclose(b, eb, rtol=1e-6)


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_window_sum_gpu_form_runs_sequentially(target):
    lib = tilelang.build(tilelang.parse_file("samples/window_sum_gpu.tir"), target=target)
    a, b = rand(1027, seed=10), np.zeros(1024, "float32")
    lib["main"](a, b)
    np.testing.assert_allclose(b, a[:1024] + a[1:1025] + a[2:1026], rtol=1e-6)


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_strided_loops_with_lets(target):
    lib = tilelang.build(tilelang.parse_file("samples/strided_let.tir"), target=target)
    a = np.zeros(48, "int32")
    lib["strided"](a, 5, 7)
    expected = np.zeros(48, "int32")
    for n in range(0, 16, 5):
        for c in range(0, 32, 7):
            expected[n + c] = 100
    np.testing.assert_array_equal(a, expected)


SEMANTICS = """
@T.prim_func
def sem(A: T.Buffer((8,), "int32"), F: T.Buffer((4,), "float32"), I8: T.Buffer((2,), "int8"),
        a: T.int32, b: T.int32):
    A[0] = T.truncdiv(a, b)
    A[1] = T.truncmod(a, b)
    A[2] = a // b
    A[3] = a % b
    A[4] = T.Cast("int32", F[0])
    A[5] = T.if_then_else(b != 0, a // T.max(b, 1), 0)
    A[6] = T.Select(a > b, a, b)
    A[7] = A[6] * 1
    I8[0] = I8[0] + I8[1]
    F[1] = F[2] + F[3]
"""


@pytest.mark.parametrize("target", CPU_TARGETS)
@pytest.mark.parametrize("a,b", [(-7, 2), (7, -2), (-7, -2), (9, 4)])
def test_integer_and_float_semantics_follow_c(a, b, target):
    fn = build_text(SEMANTICS, target)["sem"]
    out = np.zeros(8, "int32")
    floats = np.array([-2.7, 0, 1e8, 1], "float32")
    small = np.array([100, 100], "int8")
    fn(out, floats, small, a, b)
    trunc_q = int(a / b)
    assert list(out[:4]) == [trunc_q, a - b * trunc_q, a // b, a % b]
    assert out[4] == -2  # float -> int truncates towards zero
    assert out[6] == max(a, b)
    assert small[0] == np.int8(-56)  # 200 wraps in int8
    assert floats[1] == np.float32(1e8) + np.float32(1)  # float32 rounding


def test_call_extern_uses_the_registry():
    text = """
@T.prim_func
def ext(A: T.Buffer((8,), "float32")):
    T.evaluate(T.call_extern("int32", "py_fill", A.access_ptr("w", offset=2), 3, T.float32(5)))
"""
    calls = []

    def py_fill(view, count, value):
        calls.append(count)
        view[:count] = value
        return 0

    register_extern("py_fill", py_fill, override=True)
    a = np.zeros(8, "float32")
    compile_text(text).functions["ext"](a)
    assert calls == [3] and list(a) == [0, 0, 5, 5, 5, 0, 0, 0]
    missing = text.replace("py_fill", "nowhere_fn")
    with pytest.raises(BuildError, match="nowhere_fn"):
        compile_text(missing)


def test_vector_loads_and_stores():
    text = """
@T.prim_func
def vec(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(2):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4)
"""
    mod = compile_text(text)
    assert "A_flat[i * 4:i * 4 + 4]" in mod.get_source()
    a, b = rand(8, seed=11), np.zeros(8, "float32")
    mod.functions["vec"](a, b)
    np.testing.assert_allclose(b, a * 2)


def test_codegen_is_the_emitted_text():
    lowered = tilelang.lower(tilelang.parse(MM_RELU))
    assert codegen(lowered) == build(lowered).get_source()


def test_unlowered_input_is_a_build_error():
    with pytest.raises(BuildError, match="not lowered"):
        build(tilelang.parse(MM_RELU))

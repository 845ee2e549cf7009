"""The LLVM backend on hand-lowered IR: numbers against NumPy, and the shape of the
generated code (vector instructions, OpenMP regions, attributes)."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest
from tilelang.backends.llvm import AssertionFailure, generate_ir, options_from_target

import tilelang
from tilelang.ir import (
    Allocate,
    AssertStmt,
    Buffer,
    BufferStore,
    Cast,
    DeclBuffer,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    IfThenElse,
    IntImm,
    LetStmt,
    Max,
    Min,
    Mod,
    PrimFunc,
    Var,
    While,
    decl_buffer,
    seq_stmt,
)
from tilelang.ir import Div as TruncDiv
from tilelang.ir import op as tir_op
from tilelang.target import Target


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILELANG_NUM_THREADS", raising=False)


def lowered(params, buffers, body, name="main", size_vars=(), noalias=False):
    attrs = {"global_symbol": name, "tl.size_vars": tuple(size_vars), "tl.lowered": True}
    if noalias:
        attrs["tir.noalias"] = True
    return PrimFunc(tuple(params), body, buffer_map=buffers, attrs=attrs)


def flat(buffer, size):
    return Buffer(buffer.name, buffer.data, buffer.dtype, (size,))


def vector_params(n, dtype="float32", names="AB"):
    handles = [Var(x.lower(), "handle") for x in names]
    buffers = [decl_buffer((n,), dtype, x) for x in names]
    return handles, buffers


def build(func, target="llvm -num-cores=2", **options):
    return tilelang.build(func, target, **options)


def ir_text(func, target="llvm -num-cores=2"):
    mod = tilelang.IRModule({"main": func})
    codegen, _ = generate_ir(mod, options_from_target(Target(target)))
    return str(codegen.module)


# ------------------------------------------------------------------ programs


def mm_relu(n=64, kind_i="serial"):
    params = [Var(x.lower(), "handle") for x in "ABC"]
    A, B, C = (decl_buffer((n, n), "float32", x) for x in "ABC")
    Af, Bf, Cf = (flat(x, n * n) for x in (A, B, C))
    y = Var("Y", "handle")
    Y = Buffer("Y", y, "float32", (n * n,))
    i, j, k = Var("i"), Var("j"), Var("k")
    zero = FloatImm("float32", 0.0)
    update = BufferStore(Y, Y[i * n + j] + Af[i * n + k] * Bf[k * n + j], (i * n + j,))
    compute = For(i, 0, n, kind_i, For(j, 0, n, "serial", seq_stmt(
        BufferStore(Y, zero, (i * n + j,)),
        For(k, 0, n, "serial", update),
    )))  # fmt: skip
    i2, j2 = Var("i"), Var("j")
    relu = For(i2, 0, n, "serial", For(j2, 0, n, "serial",
        BufferStore(Cf, Max(Y[i2 * n + j2], zero), (i2 * n + j2,))))  # fmt: skip
    body = Allocate(y, "float32", (n * n,), True, DeclBuffer(Y, seq_stmt(compute, relu)))
    return lowered(params, dict(zip(params, (A, B, C))), body, "mm_relu", noalias=True)


@pytest.mark.parametrize("kind", ["serial", "parallel"])
def test_mm_relu_matches_numpy(kind):
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), "float32"), rng.random((64, 64), "float32")
    c = np.zeros((64, 64), "float32")
    build(mm_relu(64, kind))["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)


def test_mm_relu_matches_the_c_backend():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 64), "float32"), rng.standard_normal((64, 64), "float32")
    outs = []
    for target in ("llvm", "c"):
        c = np.zeros((64, 64), "float32")
        tilelang.build(mm_relu(64), target)["mm_relu"](a, b, c)
        outs.append(c)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)


def test_buffer_pointers_carry_noalias_alignment_and_size():
    text = ir_text(mm_relu(64))
    assert re.search(r'define void @"mm_relu"\(ptr noalias align 4 dereferenceable\(16384\)', text)
    # the intermediate buffer is a stack slot in the entry block
    entry = text.split("entry:")[1].split("body:")[0]
    assert "alloca [4096 x float], align 64" in entry


def test_symbolic_sizes_strided_loop_and_let():
    """SEED §8's strided loop with a tail length, over a symbolic size."""
    n = Var("n")
    a = Var("a", "handle")
    A = decl_buffer((n,), "int32", "A")
    Af = flat(A, n)
    start, t, length = Var("start"), Var("t"), Var("length")
    chunk = 5
    body = For(start, 0, n, "serial", LetStmt(length, Min(IntImm("int32", chunk), n - start),
        For(t, 0, length, "serial", BufferStore(Af, length * 100 + start, (start + t,)))),
        step=IntImm("int32", chunk))  # fmt: skip
    lib = build(lowered((a,), {a: A}, body, size_vars=(n,)))
    out = np.zeros(17, "int32")
    lib["main"](out)
    expected = [min(chunk, 17 - s) * 100 + s for s in range(0, 17, chunk) for _ in range(chunk)]
    np.testing.assert_array_equal(out, expected[:17])


def test_floor_and_trunc_division_of_negatives():
    (a, b, c, d, e), (A, B, C, D, E) = vector_params(8, "int32", "ABCDE")
    i = Var("i")
    seven = IntImm("int32", 7)
    minus3 = IntImm("int32", -3)
    body = For(i, 0, 8, "serial", seq_stmt(
        BufferStore(B, FloorDiv(A[i], seven), (i,)),
        BufferStore(C, FloorMod(A[i], seven), (i,)),
        BufferStore(D, FloorDiv(A[i], minus3) + FloorMod(A[i], minus3) * 100, (i,)),
        BufferStore(E, TruncDiv(A[i], seven) * 100 + Mod(A[i], seven), (i,)),
    ))  # fmt: skip
    lib = build(lowered((a, b, c, d, e), dict(zip((a, b, c, d, e), (A, B, C, D, E))), body))
    x = np.array([-15, -14, -8, -7, -1, 0, 6, 15], "int32")
    outs = [np.zeros(8, "int32") for _ in range(4)]
    lib["main"](x, *outs)
    np.testing.assert_array_equal(outs[0], x // 7)
    np.testing.assert_array_equal(outs[1], x % 7)
    np.testing.assert_array_equal(outs[2], x // -3 + (x % -3) * 100)
    np.testing.assert_array_equal(outs[3], np.trunc(x / 7).astype("int32") * 100 + np.fmod(x, 7))


def test_vectorized_loop_becomes_vector_instructions():
    (a, b), (A, B) = vector_params(64)
    i, j = Var("i"), Var("j")
    scale = FloatImm("float32", 2.0)
    body = For(i, 0, 4, "serial", For(j, 0, 16, "vectorized",
        BufferStore(B, A[i * 16 + j] * scale + B[i * 16 + j], (i * 16 + j,))))  # fmt: skip
    func = lowered((a, b), {a: A, b: B}, body)
    text = ir_text(func)
    assert "load <16 x float>" in text and "store <16 x float>" in text
    lib = build(func)
    x, y = np.arange(64, dtype="float32"), np.ones(64, "float32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y, 2 * np.arange(64) + 1)
    assert re.search(r"\bzmm\d+\b", lib.get_source("asm"))  # AVX-512 on this host


def test_vectorized_loop_with_a_dependence_stays_serial_and_correct():
    (a,), (A,) = vector_params(17, "float32", "A")
    j = Var("j")
    body = For(j, 0, 16, "vectorized", BufferStore(A, A[j] + A[j + 1], (j + 1,)))
    func = lowered((a,), {a: A}, body)
    text = ir_text(func)
    assert "store <16 x float>" not in text and "llvm.loop.vectorize.enable" in text
    x = np.arange(17, dtype="float32")
    expected = x.copy()
    for k in range(16):
        expected[k + 1] = expected[k] + expected[k + 1]
    build(func)["main"](x)
    np.testing.assert_array_equal(x, expected)


def test_unrolled_loop_left_by_lowering_gets_an_unroll_hint():
    (a,), (A,) = vector_params(100, "int32", "A")
    i = Var("i")
    func = lowered((a,), {a: A}, For(i, 0, 100, "unroll", BufferStore(A, i * i, (i,))))
    assert "llvm.loop.unroll.enable" in ir_text(func)
    x = np.zeros(100, "int32")
    build(func)["main"](x)
    np.testing.assert_array_equal(x, np.arange(100) ** 2)


def thread_ids(n_outer, inner_kind="serial"):
    """B[i*4 + j] = the OpenMP thread that ran iteration (i, j); C[...] = its team size."""
    (b, c), (B, C) = vector_params(n_outer * 4, "int32", "BC")
    i, j = Var("i"), Var("j")
    tid = tir_op.call_extern("int32", "omp_get_thread_num")
    team = tir_op.call_extern("int32", "omp_get_num_threads")
    body = For(i, 0, n_outer, "parallel", For(j, 0, 4, inner_kind, seq_stmt(
        BufferStore(B, tid, (i * 4 + j,)), BufferStore(C, team, (i * 4 + j,)))))  # fmt: skip
    # noalias: one body (not a copy per aliasing case), so GOMP calls can be counted
    return lowered((b, c), {b: B, c: C}, body, noalias=True)


def test_parallel_loop_runs_on_num_cores_threads():
    func = thread_ids(8)
    ids, team = np.full(32, -1, "int32"), np.zeros(32, "int32")
    build(func, "llvm -num-cores=2")["main"](ids, team)
    np.testing.assert_array_equal(ids, np.repeat([0, 1], 16))  # a static schedule
    np.testing.assert_array_equal(team, 2)


def test_thread_count_from_the_environment(monkeypatch):
    monkeypatch.setenv("TILELANG_NUM_THREADS", "1")
    func = thread_ids(8)
    assert "GOMP_parallel" not in ir_text(func)  # one thread: no parallel region at all
    ids, team = np.full(32, -1, "int32"), np.zeros(32, "int32")
    build(func, "llvm -num-cores=2")["main"](ids, team)
    np.testing.assert_array_equal(ids, 0)


def test_nested_parallel_loops_do_not_oversubscribe():
    func = thread_ids(6, inner_kind="parallel")
    assert ir_text(func).count('call void @"GOMP_parallel"') == 1
    ids, team = np.full(24, -1, "int32"), np.zeros(24, "int32")
    build(func)["main"](ids, team)
    np.testing.assert_array_equal(ids, np.repeat([0, 1], 12))
    np.testing.assert_array_equal(team, 2)


@pytest.mark.parametrize(
    ("name", "reference"),
    [
        ("exp", np.exp), ("sqrt", np.sqrt), ("floor", np.floor), ("ceil", np.ceil),
        ("round", np.round), ("trunc", np.trunc), ("tanh", np.tanh), ("log", np.log),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("rsqrt", lambda x: 1 / np.sqrt(x)),
        ("erf", None), ("log1p", np.log1p), ("abs", np.abs),
    ],
)  # fmt: skip
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_intrinsics(name, reference, dtype):
    (a, b), (A, B) = vector_params(16, dtype)
    i = Var("i")
    body = For(i, 0, 16, "vectorized", BufferStore(B, tir_op.call_intrin(name, A[i]), (i,)))
    x = np.linspace(0.05, 3.7, 16).astype(dtype)
    x[3] = 2.5  # round half to even, as NumPy
    y = np.zeros(16, dtype)
    build(lowered((a, b), {a: A, b: B}, body))["main"](x, y)
    if reference is None:
        import math

        reference = np.vectorize(math.erf)
    np.testing.assert_allclose(y, reference(x), rtol=1e-6 if dtype == "float32" else 1e-12)


def test_integer_min_max_abs_and_casts():
    (a, b, c, d), (A, B, C, D) = vector_params(8, "int32", "ABCD")
    f = Var("f", "handle")
    F = decl_buffer((8,), "float32", "F")
    i = Var("i")
    three = IntImm("int32", 3)
    body = For(i, 0, 8, "serial", seq_stmt(
        BufferStore(B, Max(A[i], three) * 10 + Min(A[i], three), (i,)),
        BufferStore(C, tir_op.abs(A[i]), (i,)),
        BufferStore(D, Cast("int32", F[i]), (i,)),  # truncation towards zero, as C
    ))  # fmt: skip
    params = (a, b, c, d, f)
    lib = build(lowered(params, dict(zip(params, (A, B, C, D, F))), body))
    x = np.array([-5, -1, 0, 2, 3, 4, 9, -9], "int32")
    fl = np.array([-2.7, -0.5, 0.5, 1.99, -1.99, 3.0, 7.5, -7.5], "float32")
    outs = [np.zeros(8, "int32") for _ in range(3)]
    lib["main"](x, *outs, fl)
    np.testing.assert_array_equal(outs[0], np.maximum(x, 3) * 10 + np.minimum(x, 3))
    np.testing.assert_array_equal(outs[1], np.abs(x))
    np.testing.assert_array_equal(outs[2], np.trunc(fl).astype("int32"))


def test_if_while_and_lazy_and():
    """``i < n and A[i] > 0`` must not read A[n]; a while loop counts down."""
    n = Var("n")
    (a, b), (A, B) = vector_params(8, "int32")
    k = Var("k")
    x = decl_buffer((1,), "int32", "x", scope="local")
    count = Allocate(x.data, "int32", (1,), True, DeclBuffer(x, seq_stmt(
        x.vstore(0, IntImm("int32", 0)),
        While(tilelang.ir.And(x[0] < n, A[x[0]] > 0), x.vstore(0, x[0] + 1)),
        B.vstore(0, x[0]),
    )))  # fmt: skip
    fill = For(
        k,
        1,
        7,
        "serial",
        IfThenElse(
            FloorMod(k, IntImm("int32", 2)) == 0, BufferStore(B, k, (k,)), BufferStore(B, -k, (k,))
        ),
    )
    func = lowered((a, b, n), {a: A, b: B}, seq_stmt(count, fill))
    lib = build(func)
    out = np.zeros(8, "int32")
    lib["main"](np.array([1, 2, 3, 0, 5, 6, 7, 8], "int32"), out, 8)
    np.testing.assert_array_equal(out, [3, -1, 2, -3, 4, -5, 6, -7])
    lib["main"](np.ones(8, "int32"), out, 8)  # stops at n, never reads A[8]
    assert out[0] == 8


EXTERN_SOURCE = """
#include <stdint.h>
void add_tile(float* c, const float* a, int32_t n) {
  for (int32_t i = 0; i < n; ++i) c[i] += a[i];
}
"""


def test_call_extern_against_a_compiled_c_library(tmp_path):
    lib_path = tmp_path / "libtile.so"
    src = tmp_path / "tile.c"
    src.write_text(EXTERN_SOURCE)
    import subprocess

    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib_path), str(src)], check=True)
    a, c = Var("a", "handle"), Var("c", "handle")
    A, C = decl_buffer((16,), "float32", "A"), decl_buffer((16,), "float32", "C")
    call = tir_op.call_extern(
        "handle", "add_tile", C.access_ptr("rw", offset=8), A.access_ptr("r"), IntImm("int32", 8)
    )
    func = lowered((a, c), {a: A, c: C}, Evaluate(call))
    lib = build(func, libs=[str(lib_path)])
    x, y = np.arange(16, dtype="float32"), np.ones(16, "float32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y, np.r_[np.ones(8), 1 + np.arange(8)])
    # the same with the source compiled by the backend, as the C backend takes it
    y = np.ones(16, "float32")
    build(func, extern_sources=[EXTERN_SOURCE])["main"](x, y)
    np.testing.assert_array_equal(y, np.r_[np.ones(8), 1 + np.arange(8)])


def test_unresolved_extern_is_a_build_error_not_a_crash():
    (a,), (A,) = vector_params(4, "int32", "A")
    body = Evaluate(tir_op.call_extern("int32", "no_such_function_tl", IntImm("int32", 1)))
    with pytest.raises(tilelang.BuildError, match="no_such_function_tl"):
        build(lowered((a,), {a: A}, body))


def test_assert_failure_is_raised_after_the_call():
    n = Var("n")
    (a,), (A,) = vector_params(4, "float32", "A")
    body = AssertStmt(n < 10, "n must be below 10", A.vstore(0, FloatImm("float32", 1.0)))
    lib = build(lowered((a, n), {a: A}, body))
    out = np.zeros(4, "float32")
    lib["main"](out, 3)
    assert out[0] == 1
    with pytest.raises(RuntimeError, match="n must be below 10") as info:
        lib["main"](np.zeros(4, "float32"), 12)
    assert isinstance(info.value, AssertionFailure)
    lib["main"](out, 3)  # the error does not stick


def test_assert_inside_a_parallel_loop():
    n = Var("n")
    (a,), (A,) = vector_params(8, "int32", "A")
    i = Var("i")
    body = For(i, 0, 8, "parallel", AssertStmt(i < n, "i below n", BufferStore(A, i, (i,))))
    lib = build(lowered((a, n), {a: A}, body))
    with pytest.raises(RuntimeError, match="i below n"):
        lib["main"](np.zeros(8, "int32"), 5)
    out = np.zeros(8, "int32")
    lib["main"](out, 8)
    np.testing.assert_array_equal(out, np.arange(8))


def test_bool_buffers_and_scalars():
    (a, b), (A, B) = vector_params(6, "bool")
    flag = Var("flag", "bool")
    i = Var("i")
    body = For(i, 0, 6, "serial", BufferStore(B, tilelang.ir.Or(tilelang.ir.Not(A[i]), flag), (i,)))
    lib = build(lowered((a, b, flag), {a: A, b: B}, body))
    x = np.array([True, False, True, True, False, False])
    out = np.zeros(6, bool)
    lib["main"](x, out, False)
    np.testing.assert_array_equal(out, ~x)
    lib["main"](x, out, True)
    assert out.all()


def test_large_and_symbolic_allocations_use_the_heap():
    n = Var("n")
    (a,), (A,) = vector_params(100_000, "float32", "A")
    i = Var("i")
    big = decl_buffer((100_000,), "float32", "big")
    body = Allocate(big.data, "float32", (n,), True, DeclBuffer(big, seq_stmt(
        For(i, 0, n, "serial", BufferStore(big, Cast("float32", i), (i,))),
        For(i, 0, n, "serial", BufferStore(A, big[n - 1 - i], (i,))),
    )))  # fmt: skip
    func = lowered((a, n), {a: A}, body)
    assert '@"malloc"' in ir_text(func)
    out = np.zeros(100_000, "float32")
    build(func)["main"](out, 100_000)
    np.testing.assert_array_equal(out, np.arange(100_000)[::-1])


def test_sources_objects_and_shared_libraries(tmp_path):
    lib = build(mm_relu(16))
    assert "define void @mm_relu" in lib.get_source("ll")
    assert 'define void @"mm_relu"' in lib.get_source("ll-unopt")
    assert "mm_relu:" in lib.get_source("asm")
    obj = lib.backend_module.emit("obj")
    assert obj[:4] == b"\x7fELF"
    path = lib.export_library(tmp_path / "libmm.so")
    native = ctypes.CDLL(str(path)).mm_relu
    a = np.ones((16, 16), "float32")
    c = np.zeros((16, 16), "float32")
    native(*(x.ctypes.data_as(ctypes.c_void_p) for x in (a, a, c)))
    np.testing.assert_array_equal(c, 16)
    lib.export_library(tmp_path / "mm.o")
    assert (tmp_path / "mm.o").read_bytes() == obj


def test_objects_are_cached_by_content(tmp_path):
    build(mm_relu(16))
    cached = list((tmp_path / "cache" / "llvm").glob("*.o"))
    assert len(cached) == 1
    build(mm_relu(16))
    assert list((tmp_path / "cache" / "llvm").glob("*.o")) == cached
    build(mm_relu(16), "llvm -num-cores=2 -fast-math")  # other options, other object
    assert len(list((tmp_path / "cache" / "llvm").glob("*.o"))) == 2


def test_target_options():
    host = options_from_target(Target("llvm"))
    import llvmlite.binding as llvm

    assert host.cpu == llvm.get_host_cpu_name() and "+avx512f" in host.features
    assert host.opt_level == 3 and not host.fast_math
    narrow = options_from_target(Target({"kind": "llvm", "mattr": "-avx512f", "num-cores": 3}))
    assert "-avx512f" in narrow.features and narrow.num_threads == 3
    assert options_from_target(Target("llvm -fast-math")).fast_math
    with pytest.raises(tilelang.BuildError, match="unknown llvm target option"):
        options_from_target(Target("llvm -mcpu=native -nmu-cores=2"))


def test_fast_math_marks_float_arithmetic():
    (a, b), (A, B) = vector_params(8)
    i = Var("i")
    func = lowered((a, b), {a: A, b: B}, For(i, 0, 8, "serial", BufferStore(B, A[i] * A[i], (i,))))
    assert "fmul fast" in ir_text(func, "llvm -fast-math")
    assert "fmul fast" not in ir_text(func, "llvm")


def test_vectorized_strided_reads_selects_casts_and_bool_stores():
    (a, b), (A, B) = vector_params(16, "float32")
    m = Var("m", "handle")
    M = decl_buffer((8,), "bool", "M")
    j = Var("j")
    two = IntImm("int32", 2)
    value = A[j * two] - A[j * two + 1]  # lanes 2 apart: a gather
    body = For(j, 0, 8, "vectorized", seq_stmt(
        BufferStore(B, tilelang.ir.Select(value > FloatImm("float32", 0.0), value,
                                          Cast("float32", j)), (j,)),
        BufferStore(M, value > FloatImm("float32", 0.0), (j,)),
    ))  # fmt: skip
    func = lowered((a, b, m), {a: A, b: B, m: M}, body)
    text = ir_text(func)
    assert "store <8 x float>" in text and "store <8 x i8>" in text
    x = np.random.default_rng(5).standard_normal(16).astype("float32")
    y, mask = np.zeros(16, "float32"), np.zeros(8, bool)
    build(func)["main"](x, y, mask)
    diff = x[0::2] - x[1::2]
    np.testing.assert_array_equal(y[:8], np.where(diff > 0, diff, np.arange(8)))
    np.testing.assert_array_equal(mask, diff > 0)

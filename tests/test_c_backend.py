"""The C backend on hand-lowered IR: golden C text, and the compiled code against NumPy."""

from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest
from tilelang.backends.c import c_float_literal, c_string, sanitize

import tilelang
from tilelang.ir import (
    Allocate,
    Broadcast,
    Buffer,
    BufferStore,
    DeclBuffer,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    Max,
    PrimFunc,
    Ramp,
    SizeVar,
    Var,
    decl_buffer,
    seq_stmt,
)
from tilelang.ir import op as tir_op
from tilelang.ir.stmt import AssertStmt


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def lowered(params, buffers, body, name="main", size_vars=(), noalias=False):
    """A PrimFunc in lowered form: ``buffers`` maps each handle param to its N-D buffer."""
    attrs = {"global_symbol": name, "tl.size_vars": tuple(size_vars), "tl.lowered": True}
    if noalias:
        attrs["tir.noalias"] = True
    return PrimFunc(tuple(params), body, buffer_map=buffers, attrs=attrs)


def flat(buffer, size):
    """The flat view of a parameter buffer (same data pointer), as lowering makes it."""
    return Buffer(buffer.name, buffer.data, buffer.dtype, (size,))


def ref_func():
    """SEED §9's RefFunc: the inner loop must re-read A[i] after every store."""
    n = Var("n")
    a = Var("A", "handle")
    A = decl_buffer((n,), "int32", "A")
    i, j = Var("i"), Var("j")
    body = For(
        i,
        0,
        n,
        "serial",
        seq_stmt(
            BufferStore(A, A[i] + 1, (i,)),
            For(j, 0, 10, "serial", BufferStore(A, A[i] + j, (i,))),
        ),
    )
    return lowered((a, n), {a: A}, body, name="func_0")


def mm_relu(n=128):
    params = [Var(x, "handle") for x in "ABC"]
    A, B, C = (decl_buffer((n, n), "float32", x) for x in "ABC")
    Af, Bf, Cf = (flat(x, n * n) for x in (A, B, C))
    y = Var("Y", "handle")
    Y = Buffer("Y", y, "float32", (n * n,))
    i, j, k = Var("i"), Var("j"), Var("k")
    zero = FloatImm("float32", 0.0)
    compute = For(
        i,
        0,
        n,
        "parallel",
        For(
            j,
            0,
            n,
            "serial",
            seq_stmt(
                BufferStore(Y, zero, (i * n + j,)),
                For(
                    k,
                    0,
                    n,
                    "serial",
                    BufferStore(Y, Y[i * n + j] + Af[i * n + k] * Bf[k * n + j], (i * n + j,)),
                ),
            ),
        ),
    )
    relu = For(
        i,
        0,
        n,
        "serial",
        For(j, 0, n, "vectorized", BufferStore(Cf, Max(Y[i * n + j], zero), (i * n + j,))),
    )
    body = Allocate(
        y, "float32", (n * n,), IntImm("bool", 1), DeclBuffer(Y, seq_stmt(compute, relu))
    )
    return lowered(params, dict(zip(params, (A, B, C))), body, name="mm_relu", noalias=True)


def test_ref_func_prints_loads_in_place(golden):
    lib = tilelang.build(ref_func(), target="c")
    source = lib.get_source()
    golden(source)
    assert "(0 + " not in source and "* 1)" not in source


def test_ref_func_runs():
    lib = tilelang.build(ref_func(), target="c")
    a = np.arange(6, dtype="int32")
    lib["func_0"](a, 6)
    np.testing.assert_array_equal(a, np.arange(6) + 1 + 45)


def test_mm_relu_source(golden):
    golden(tilelang.build(mm_relu(), target="c -num-cores=2").get_source())


def test_mm_relu_matches_numpy():
    lib = tilelang.build(mm_relu(), target="c")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128), dtype="float32")
    b = rng.standard_normal((128, 128), dtype="float32")
    c = tilelang.nd.empty((128, 128), "float32")
    lib["mm_relu"](tilelang.nd.array(a), b, c)
    np.testing.assert_allclose(c.numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_symbolic_sizes_and_strided_loop():
    # B[i] = A[2 * i] over a strided loop; n is a size var bound from A's shape.
    n = SizeVar("n")
    a, b = Var("a", "handle"), Var("b", "handle")
    A = decl_buffer((n,), "float32", "A")
    B = decl_buffer(((n + 1) // 2,), "float32", "B")
    i = Var("i")
    body = For(i, 0, n, "serial", BufferStore(B, A[i], (i // 2,)), step=IntImm("int32", 2))
    lib = tilelang.build(lowered((a, b), {a: A, b: B}, body, size_vars=(n,)), "c")
    assert "i += 2" in lib.get_source()
    for size in (1, 7, 64):
        x = np.arange(size, dtype="float32")
        y = np.zeros((size + 1) // 2, "float32")
        lib["main"](x, y)
        np.testing.assert_array_equal(y, x[::2])


def test_floor_division_of_negatives():
    a, b = Var("a", "handle"), Var("b", "handle")
    A = decl_buffer((8,), "int32", "A")
    Q = decl_buffer((16,), "int32", "Q")
    i = Var("i")
    divisor = IntImm("int32", 3)
    body = For(
        i,
        0,
        8,
        "serial",
        seq_stmt(
            BufferStore(Q, FloorDiv(A[i], divisor), (i * 2,)),
            BufferStore(Q, FloorMod(A[i], divisor), (i * 2 + 1,)),
        ),
    )
    lib = tilelang.build(lowered((a, b), {a: A, b: Q}, body), "c")
    x = np.array([-7, -6, -1, 0, 1, 5, -3, 7], dtype="int32")
    q = np.zeros(16, "int32")
    lib["main"](x, q)
    np.testing.assert_array_equal(q[0::2], x // 3)
    np.testing.assert_array_equal(q[1::2], x % 3)


def test_vector_store_prints_a_lane_loop():
    a, b = Var("a", "handle"), Var("b", "handle")
    A, B = decl_buffer((16,), "float32", "A"), decl_buffer((16,), "float32", "B")
    i = Var("i")
    index = Ramp(i * 4, IntImm("int32", 1), 4)
    value = A.vload((index,)) * Broadcast(FloatImm("float32", 2.0), 4)
    body = For(i, 0, 4, "serial", BufferStore(B, value, (index,)))
    lib = tilelang.build(lowered((a, b), {a: A, b: B}, body), "c")
    assert "#pragma omp simd" in lib.get_source()
    x = np.arange(16, dtype="float32")
    y = np.zeros(16, "float32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y, 2 * x)


def test_float_literals_are_exact():
    assert c_float_literal(1.0, 32) == "1.0f"
    assert c_float_literal(0.1, 32) == "0.1f"
    assert c_float_literal(float("inf"), 32) == "INFINITY"
    assert c_float_literal(-float("inf"), 32) == "(-INFINITY)"
    assert c_float_literal(float("nan"), 32) == "NAN"
    assert c_float_literal(0.1, 64) == "0.1"
    assert c_float_literal(-2.5, 32) == "(-2.5f)"
    for value in (3.4e38, 1e-30, 1 / 3, 16777217.0):
        text = c_float_literal(value, 32).strip("()").rstrip("f")
        assert np.float32(float(text)) == np.float32(value)


def test_constants_survive_compilation():
    a = Var("a", "handle")
    A = decl_buffer((4,), "float32", "A")
    values = [float("inf"), -float("inf"), 0.1, 1e-30]
    body = seq_stmt(*(A.vstore(k, FloatImm("float32", v)) for k, v in enumerate(values)))
    lib = tilelang.build(lowered((a,), {a: A}, body), "c")
    out = np.zeros(4, "float32")
    lib["main"](out)
    np.testing.assert_array_equal(out, np.array(values, dtype="float32"))


def test_identifiers_are_sanitised():
    assert sanitize("int") == "int_"
    assert sanitize("a-b") == "a_b"
    assert sanitize("1x") == "v1x"
    assert sanitize("tl_floordiv_int32_t") == "utl_floordiv_int32_t"
    assert sanitize('x); system("rm"); (') == "x___system__rm_____"
    assert c_string('a"b\\c\n') == '"a\\"b\\\\c\\012"'
    names = ["int", "a-b", "x; abort();"]
    params = [Var(name, "handle") for name in names]
    buffers = [decl_buffer((4,), "float32", name) for name in names]
    i = Var("for")
    body = For(i, 0, 4, "serial", BufferStore(buffers[2], buffers[0][i] + buffers[1][i], (i,)))
    func = lowered(params, dict(zip(params, buffers)), body, name="my-func")
    lib = tilelang.build(func, "c")
    source = lib.get_source()
    assert "void my_func(" in source and "abort" not in source.replace("x__abort__", "")
    x, y, z = np.ones(4, "float32"), np.full(4, 2, "float32"), np.zeros(4, "float32")
    lib["my-func"](x, y, z)
    np.testing.assert_array_equal(z, 3)


def test_sibling_loops_reuse_names_nested_ones_do_not():
    a = Var("a", "handle")
    A = decl_buffer((16,), "int32", "A")
    i1, i2, i3 = Var("i"), Var("i"), Var("i")
    body = seq_stmt(
        For(
            i1, 0, 4, "serial", For(i2, 0, 4, "serial", BufferStore(A, i1 * 4 + i2, (i1 * 4 + i2,)))
        ),
        For(i3, 0, 2, "serial", BufferStore(A, A[i3] + 100, (i3,))),
    )
    lib = tilelang.build(lowered((a,), {a: A}, body), "c")
    source = lib.get_source()
    assert "int32_t i_1 = 0" in source and source.count("int32_t i = 0") == 2
    out = np.zeros(16, "int32")
    lib["main"](out)
    np.testing.assert_array_equal(out, np.arange(16) + np.r_[100, 100, np.zeros(14)])


EXTERN_SOURCE = """
#include <stdint.h>
void add_tile(float* c, const float* a, int32_t n) {
  for (int32_t i = 0; i < n; ++i) c[i] += a[i];
}
"""


def test_call_extern_links_an_extern_source():
    a, c = Var("a", "handle"), Var("c", "handle")
    A, C = decl_buffer((16,), "float32", "A"), decl_buffer((16,), "float32", "C")
    call = tir_op.call_extern(
        "handle", "add_tile", C.access_ptr("rw", offset=8), A.access_ptr("r"), IntImm("int32", 8)
    )
    lib = tilelang.build(
        lowered((a, c), {a: A, c: C}, Evaluate(call)), "c", extern_sources=[EXTERN_SOURCE]
    )
    assert "extern void add_tile(float*, float*, int32_t);" in lib.get_source()
    x, y = np.arange(16, dtype="float32"), np.ones(16, "float32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y, np.r_[np.ones(8), 1 + np.arange(8)])


def test_compile_error_shows_the_generated_line():
    a = Var("a", "handle")
    A = decl_buffer((4,), "float64", "A")
    i = Var("i")
    bad = tir_op.call_extern("float64", "sqrt", A[i], A[i])  # math.h: sqrt takes one argument
    func = lowered((a,), {a: A}, For(i, 0, 4, "serial", BufferStore(A, bad, (i,))))
    with pytest.raises(tilelang.BuildError) as info:
        tilelang.build(func, "c")
    message = str(info.value)
    assert "too many arguments" in message
    assert "generated C (module.c)" in message and "> " in message and "sqrt(A[i], A[i])" in message


def test_bad_extern_source_is_a_build_error():
    a = Var("a", "handle")
    A = decl_buffer((4,), "float32", "A")
    func = lowered(
        (a,), {a: A}, Evaluate(tir_op.call_extern("int32", "helper", IntImm("int32", 1)))
    )
    with pytest.raises(tilelang.BuildError, match="helper"):
        tilelang.build(func, "c", extern_sources=["int helper(int x) { return x +; }"])
    with pytest.raises(tilelang.BuildError, match="undefined reference to .helper"):
        tilelang.build(func, "c")


def test_assert_failure_is_raised_after_the_call():
    n = Var("n")
    a = Var("a", "handle")
    A = decl_buffer((4,), "float32", "A")
    body = AssertStmt(n < 10, "n must be below 10", A.vstore(0, FloatImm("float32", 1.0)))
    lib = tilelang.build(lowered((a, n), {a: A}, body), "c")
    out = np.zeros(4, "float32")
    lib["main"](out, 3)
    assert out[0] == 1
    with pytest.raises(RuntimeError, match="n must be below 10"):
        lib["main"](np.zeros(4, "float32"), 12)


def test_export_library_writes_library_and_header(tmp_path):
    lib = tilelang.build(mm_relu(8), "c")
    target = tmp_path / "out" / "libmm.so"
    target.parent.mkdir()
    lib.export_library(target)
    header = (tmp_path / "out" / "libmm.h").read_text()
    assert (
        "void mm_relu(const float* restrict A, const float* restrict B, float* restrict C);"
        in header
    )
    # the exported library is a real, loadable library with the function in it
    assert hasattr(ctypes.CDLL(str(target)), "mm_relu")
    # and the header compiles in a C program calling it
    main = tmp_path / "out" / "main.c"
    main.write_text(
        '#include "libmm.h"\n'
        "int main(void) { float a[64] = {0}, c[64]; mm_relu(a, a, c); return (int)c[0]; }\n"
    )

    subprocess.run(
        ["cc", "-std=c99", "-o", str(tmp_path / "m"), str(main), str(target)], check=True
    )
    assert (
        subprocess.run(
            [str(tmp_path / "m")], env={"LD_LIBRARY_PATH": str(target.parent)}
        ).returncode
        == 0
    )


def test_parallel_loops_nested_in_simd_or_parallel_loops_print_serially():
    """OpenMP rejects ``parallel for`` inside ``simd``; inner parallel loops run serially."""
    a = Var("a", "handle")
    A = decl_buffer((4, 3, 2), "int32", "A")
    Af = flat(A, 24)
    i, j, k = Var("i"), Var("j"), Var("k")
    store = BufferStore(Af, i * 100 + j * 10 + k, (i * 6 + j * 2 + k,))
    body = For(i, 0, 4, "vectorized", For(j, 0, 3, "parallel", For(k, 0, 2, "parallel", store)))
    lib = tilelang.build(lowered((a,), {a: A}, body), "c")
    assert lib.get_source().count("#pragma omp parallel") == 0
    out = np.zeros((4, 3, 2), "int32")
    lib["main"](out)
    np.testing.assert_array_equal(
        out, np.fromfunction(lambda x, y, z: x * 100 + y * 10 + z, (4, 3, 2))
    )
    nested = For(i, 0, 4, "parallel", For(j, 0, 3, "parallel", For(k, 0, 2, "serial", store)))
    source = tilelang.build(lowered((a,), {a: A}, nested), "c").get_source()
    assert source.count("#pragma omp parallel") == 1

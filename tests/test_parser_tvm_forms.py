"""TVMScript as TVM writes it: TVM 0.27 spellings beside the classic ones, the forms
TVM's printer and tests use (zero-dimensional buffers, open and stepped slices, typed
handles, limits, returns, assert kinds...), and values captured by decorated Python
functions. Each construct is checked by what it builds (structural equality with the
classic spelling, numbers from the backends) and by a print -> parse round trip."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilelang
import tilelang.script.tir as T
from tilelang.errors import BuildError, TIRSyntaxError
from tilelang.ir import Ramp, assert_structural_equal, post_order_visit, structural_equal
from tilelang.ir.stmt import Block, ForKind, SeqStmt
from tilelang.ir.stmt import Evaluate as EvaluateStmt
from tilelang.schedule import BlockRV, SBlockRV, Schedule


def parse_func(text: str):
    (func,) = tilelang.parse(text).functions.values()
    return func


def roundtrip(mod):
    """Prints ``mod``, parses the text and checks it is the same IR; returns the text."""
    text = mod.script()
    assert_structural_equal(mod, tilelang.parse(text), map_free_vars=True)
    return text


def blocks(func) -> dict:
    found = {}
    post_order_visit(
        func.body, lambda n: found.setdefault(n.name_hint, n) if isinstance(n, Block) else None
    )
    return found


# ------------------------------------------------------------ regions, list form

REGION_BODY = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            T.reads({reads})
            T.writes({writes})
            for j, k in T.grid(4, 16):
                B[vi * 4 + j, k] = A[vi * 4 + j, k]
"""


def test_list_form_of_reads_is_a_range_not_a_vector():
    bare = parse_func(
        REGION_BODY.format(reads="A[vi * 4:vi * 4 + 4, 0:16]", writes="B[vi * 4:vi * 4 + 4, 0:16]")
    )
    listed = parse_func(
        REGION_BODY.format(
            reads="[A[vi * 4:vi * 4 + 4, 0:16]]", writes="[B[vi * 4:vi * 4 + 4, 0:16]]"
        )
    )
    assert_structural_equal(bare, listed)
    (read,) = blocks(listed)["b"].reads
    assert not any(isinstance(r.min, Ramp) for r in read.region)
    assert [r.extent.value for r in read.region] == [4, 16]


def test_list_form_with_several_buffers_and_a_bare_buffer():
    func = parse_func(
        REGION_BODY.format(
            reads="[A[vi * 4:vi * 4 + 4, 0:16], B]", writes="[B[vi * 4:vi * 4 + 4, 0:16]]"
        )
    )
    a, b = blocks(func)["b"].reads
    assert a.buffer.name == "A" and [r.extent.value for r in a.region] == [4, 16]
    assert b.buffer.name == "B" and [r.extent.value for r in b.region] == [16, 16]


# ------------------------------------------------------------- TVM 0.27 spellings

CLASSIC = """
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    C = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.block_attr({"note": 1})
            t: T.float32 = A[vi, vj] * T.float32(2)
            C[vi, vj] = t
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = C[vi, vj] + T.float32(1)
"""

TVM_027 = """
from tvm.script import tirx as T

@T.prim_func(s_tir=True)
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    C = T.sblock_alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.sblock("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.sblock_attr({"note": 1})
            t: T.let[T.float32] = A[vi, vj] * T.float32(2)
            C[vi, vj] = t
    for i, j in T.grid(8, 8):
        with T.sblock("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = C[vi, vj] + T.float32(1)
"""


def test_tvm_027_spellings_build_the_classic_ir():
    classic, native = tilelang.parse(CLASSIC), tilelang.parse(TVM_027)
    assert_structural_equal(classic, native)
    # one canonical printed form: the classic spelling
    assert native.script() == classic.script()
    assert "T.block(" in native.script() and "sblock" not in native.script()


def test_get_sblock_and_sblock_rv_are_the_classic_handles():
    sch = Schedule(tilelang.parse(TVM_027))
    rv = sch.get_sblock("C")
    assert SBlockRV is BlockRV and isinstance(rv, SBlockRV)
    assert sch.get(rv).name_hint == "C"
    (i, _j) = sch.get_loops(rv)
    sch.split(i, [2, 4])
    assert sch.get(sch.get_sblock("C")).name_hint == "C"


def test_decorated_prim_func_takes_s_tir():
    @T.prim_func(s_tir=True)
    def add(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    a = np.arange(4, dtype="float32")
    tilelang.build(add, target="python")["add"](a)
    np.testing.assert_allclose(a, np.arange(4) + 1)


# ------------------------------------------------ zero-dimensional buffers, slices

RANK0 = """
@T.prim_func
def f(a: T.handle, D: T.Buffer((8,), "float32")):
    A = T.match_buffer(a, (), "float32")
    B = T.alloc_buffer((), "float32")
    with T.block("x"):
        T.reads(A[()], D[:4])
        T.writes(B[()])
        B[()] = A[()] + D[0] + D[3]
    with T.block("y"):
        T.reads(B[()])
        T.writes(D[4:])
        D[7] = B[()]
"""


def test_zero_dimensional_buffers_print_parse_and_run():
    mod = tilelang.parse(RANK0)
    text = roundtrip(mod)
    assert "A[()]" in text and "T.reads(A[()], D[0:4])" in text
    assert "T.writes(D[4:8])" in text  # an open slice ends at the extent
    a, d = np.array(2.0, "float32"), np.arange(8, dtype="float32")
    tilelang.build(mod, target="python")["f"](a, d)
    assert d[7] == 2.0 + 0.0 + 3.0


def test_stepped_slices_are_vector_indices():
    func = parse_func("""
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    A[0:8:2] = T.broadcast(T.float32(1), 4)
    A[9:10] = T.float32(3)
""")
    first, second = func.body.seq
    (index,) = first.indices
    assert isinstance(index, Ramp) and index.stride.value == 2 and index.lanes == 4
    assert not isinstance(second.indices[0], Ramp)  # one lane is the plain index
    roundtrip(tilelang.IRModule({"f": func}))


# ------------------------------------------------------------------ values, lets


def test_min_and_max_value_are_the_dtype_limits():
    func = parse_func("""
@T.prim_func
def f(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "int8"), C: T.Buffer((1,), "uint16")):
    A[0] = T.min_value("float32")
    A[1] = T.max_value("float32")
    B[0] = T.min_value("int8")
    B[1] = T.max_value("int8")
    C[0] = T.max_value("uint16")
""")
    values = [s.value.value for s in func.body.seq]
    big = float(np.finfo(np.float32).max)
    assert values == [-big, big, -128, 127, 65535]


def test_let_where_and_bind():
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((1,), "int32")):
    x = T.int32()
    y = T.bind(5)
    A[0] = T.Let(x * 2 + y, where={x: 4})
""")
    roundtrip(mod)
    a = np.zeros(1, "int32")
    tilelang.build(mod, target="python")["f"](a)
    assert a[0] == 13


def test_integer_values_stored_into_float_buffers_are_cast():
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = i * 3
""")
    roundtrip(mod)
    a = np.zeros(4, "float32")
    tilelang.build(mod, target="python")["f"](a)
    np.testing.assert_array_equal(a, [0, 3, 6, 9])


def test_alloc_buffer_as_a_statement_allocates_for_its_scope():
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        C = T.alloc_buffer((4,))
        for j in range(4):
            C[j] = A[i * 4 + j] + T.float32(1)
        for j in range(4):
            B[i * 4 + j] = C[3 - j]
""")
    roundtrip(mod)
    a, b = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    for target in ("python", "c"):
        tilelang.build(mod, target=target)["f"](a, b)
        np.testing.assert_array_equal(b, (a.reshape(4, 4)[:, ::-1] + 1).ravel())


# ------------------------------------------------------------------ handles, free vars


def test_typed_handles_and_free_variables_print_back():
    mod = tilelang.parse("""
@T.prim_func
def f(x: T.handle("int32"), y: T.handle("float32", "shared"), z: T.handle("void")):
    data_ptr = T.handle("float32")
    n = T.int32()
    A = T.decl_buffer((n,), "float32", data=data_ptr)
    p: T.let[T.handle("int32")] = x
    T.evaluate(p)
    T.evaluate(A[0])
""")
    text = roundtrip(mod)
    # the variables nothing defines are declared before their first use
    assert text.index('data_ptr = T.handle("float32")') < text.index("T.decl_buffer")
    assert 'x: T.handle("int32"), y: T.handle("float32", "shared"), z: T.handle)' in text
    assert "n = T.int32()" in text


# ------------------------------------------------------------------ math intrinsics

MATH = """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
      C: T.Buffer((8,), "int32"), D: T.Buffer((8,), "int32")):
    for i in range(8):
        B[i] = (T.asinh(A[i]) + T.acosh(A[i] + T.float32(1)) + T.atanh(A[i] * T.float32(0.5))
                + T.hypot(A[i], T.float32(2)) + T.copysign(A[i], T.float32(-1))
                + T.nextafter(A[i], T.float32(10)) + T.fabs(A[i] - T.float32(1)))
        D[i] = T.popcount(C[i])
"""


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_new_math_intrinsics_compute_on_every_cpu_backend(target):
    mod = tilelang.parse(MATH)
    roundtrip(mod)
    a = np.linspace(0.1, 0.9, 8).astype("float32")
    c = np.array([0, 1, 7, -1, 255, 1024, -8, 3], "int32")
    b, d = np.zeros(8, "float32"), np.zeros(8, "int32")
    tilelang.build(mod, target=target)["f"](a, b, c, d)
    f32 = np.float32
    expected = (
        np.arcsinh(a)
        + np.arccosh(a + 1)
        + np.arctanh(a * f32(0.5))
        + np.hypot(a, 2)
        + np.copysign(a, -1)
        + np.nextafter(a, f32(10))
        + np.abs(a - 1)
    )
    np.testing.assert_allclose(b, expected, rtol=1e-5)
    assert d.tolist() == [0, 1, 3, 32, 8, 1, 29, 2]


def test_math_intrinsics_type_their_arguments():
    assert str(T.hypot(T.float64(1), 2.0).dtype) == "float64"
    with pytest.raises(tilelang.ir.TIRTypeError, match="integer argument"):
        T.popcount(T.float32(1))


# ------------------------------------------------------------- return, asserts


def test_return_value_prints_back_and_backends_without_it_reject_it():
    mod = tilelang.parse("""
@T.prim_func
def f(x: T.int32) -> T.int32:
    return x + 1
""")
    text = roundtrip(mod)
    assert "-> T.int32" in text and "return x + 1" in text
    assert tilelang.build(mod, target="python")["f"](41) == 42  # tests/test_return_values.py
    for target in ("c", "llvm"):
        with pytest.raises(BuildError, match="returns a value"):
            tilelang.build(mod, target=target)


def test_assert_error_kinds_are_kept():
    text = """
@T.prim_func
def f(x: T.int32):
    assert x > 0, ("TypeError", ["Expected ", "Tensor"])
    with T.Assert(x < 9, ("ValueError", ["too big"])):
        T.evaluate(x)
    T.evaluate(x + 1)
"""
    mod = tilelang.parse(text)
    printed = roundtrip(mod)
    assert '("TypeError", ["Expected Tensor"])' in printed
    assert not structural_equal(mod, tilelang.parse(text.replace("TypeError", "ValueError")))
    assert mod.script(show_meta=True) == printed


# ---------------------------------------------------------------- IR conventions


def test_for_kind_compares_with_tvm_numbers():
    assert ForKind.SERIAL == 0 and ForKind.THREAD_BINDING == 4
    assert ForKind("unroll") is ForKind.UNROLLED and ForKind(1) is ForKind.PARALLEL
    assert str(ForKind.VECTORIZED) == "vectorized"


def test_nested_seq_stmt_is_flattened_and_round_trips():
    seq = SeqStmt([SeqStmt([EvaluateStmt(0), EvaluateStmt(1)]), EvaluateStmt(2)])
    assert len(seq) == 3
    func = tilelang.ir.PrimFunc([], seq, None, {}, {"global_symbol": "main"})
    roundtrip(tilelang.IRModule({"main": func}))


# ------------------------------------------------ values captured by decorated code

SCALE = 3


def test_decorated_functions_use_captured_values():
    offset = T.float32(0.5)
    combine = lambda x, y: x * SCALE + y  # noqa: E731 - a captured Python function

    @T.prim_func
    def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = combine(A[i], offset)

    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    tilelang.build(f, target="python")["f"](a, b)
    np.testing.assert_allclose(b, a * 3 + 0.5)


def test_a_failing_captured_function_is_a_located_error():
    def broken(x):
        raise ValueError("no")

    with pytest.raises(TIRSyntaxError, match="calling broken failed: ValueError: no"):

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = broken(A[1])


def test_tir_text_never_calls_python():
    text = """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    A[0] = combine(A[1], A[2])
"""
    with pytest.raises(TIRSyntaxError, match="undefined name combine"):
        tilelang.parse(text)


# ------------------------------------------------------------- located diagnostics

HEAD = '@T.prim_func\ndef f(A: T.Buffer((8,), "float32"), n: T.int32):\n'

CHECK_ERRORS = {
    "region_slice_step": HEAD
    + """\
    with T.block("b"):
        T.reads(A[0:8:2])  # check_error: a region slice has no step @ 0:8:2
        A[0] = T.float32(0)
""",
    "let_two_types": HEAD
    + """\
    x: T.let[T.int32, T.int32] = n  # check_error: T.let[...] takes one type @ T.let
    A[x] = T.float32(0)
""",
    "handle_of_a_number": HEAD
    + """\
    p = T.handle(3)  # check_error: T.handle of int 3 @ 3
""",
    "return_without_type": HEAD
    + """\
    return n + 1  # check_error: without a result type @ n + 1
""",
    "assert_bad_tuple": HEAD
    + """\
    assert n > 0, ("Bad", "x")  # check_error: an assert message is a string or @ "Bad"
""",
    "slice_step_zero": HEAD
    + """\
    A[0:4:0] = T.broadcast(T.float32(0), 4)  # check_error: a slice step is a positive integer @ 0]
""",
    "let_where_not_a_var": HEAD
    + """\
    A[0] = T.Cast("float32", T.Let(n + 1, where={3: 1}))  # check_error: T.Let binds a variable @ 3:
""",
    "min_value_of_handle": HEAD
    + """\
    A[0] = T.min_value("handle")  # check_error: handle has no limits @ "handle"
""",
}

_MARKER = re.compile(r"#\s*check_error:\s*(?P<message>.*?)\s+@\s+(?P<token>\S.*?)\s*$")


def _expected(source: str):
    for number, line in enumerate(source.splitlines(), start=1):
        match = _MARKER.search(line)
        if match:
            code = line[: line.index("# check_error")].rstrip()
            return number, code.index(match["token"]) + 1, match["message"]
    raise AssertionError("no # check_error: marker")


@pytest.mark.parametrize("name", sorted(CHECK_ERRORS))
def test_check_error(name):
    source = CHECK_ERRORS[name]
    line, column, fragment = _expected(source)
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(source, f"{name}.tir")
    error = info.value
    assert fragment in error.message, error.render()
    assert (error.line, error.column) == (line, column), error.render()
    assert "Traceback" not in error.render()

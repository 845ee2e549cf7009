"""TVM's pointer and LLVM intrinsics in TVMScript: ``T.address_of`` of a whole buffer,
``T.reinterpret`` (both argument orders) with ``T.handle("float32").ty`` as its type,
and ``T.llvm_lookup_intrinsic_id``. Each is checked by the IR it builds, by a
print -> parse round trip, by located errors for misuse (``# check_error:`` markers,
as in test_parse_errors.py) and by the backends, which cannot compute them and say so."""

from __future__ import annotations

import numpy as np
import pytest
from test_parse_errors import expected_location

import tilelang
from tilelang.errors import BuildError, TIRSyntaxError
from tilelang.ir import BufferLoad, assert_structural_equal
from tilelang.ir.expr import Call, StringImm


def roundtrip(text: str):
    mod = tilelang.parse(text)
    printed = mod.script()
    assert_structural_equal(mod, tilelang.parse(printed), map_free_vars=True)
    return mod, printed


def values(func):
    """The expressions of ``func``'s top-level statements (Evaluate or BufferStore)."""
    return [getattr(s, "value", None) for s in func.body.seq]


def test_address_of_a_buffer_is_the_address_of_its_first_element():
    mod, printed = roundtrip("""
@T.prim_func
def f(a: T.handle, x: T.int32):
    A = T.match_buffer(a, (128, 128), "float32")
    T.evaluate(T.address_of(A))
    T.evaluate(T.address_of(A[1, 2], dtype="handle"))
    T.evaluate(T.address_of(x))
""")
    whole, element, scalar = values(mod["f"])
    assert whole.op == "address_of" and str(whole.dtype) == "handle"
    load = whole.args[0]
    assert isinstance(load, BufferLoad) and load.buffer.name == "A"
    assert [i.value for i in load.indices] == [0, 0]
    assert [i.value for i in element.args[0].indices] == [1, 2]
    assert scalar.args[0].name == "x"
    assert "T.address_of(A[0, 0])" in printed and "T.address_of(A[1, 2])" in printed


def test_reinterpret_in_both_argument_orders_and_typed_handles():
    mod, printed = roundtrip("""
@T.prim_func
def f(args: T.handle, B: T.Buffer((4,), "int32"), x: T.float32):
    arg0: T.let[T.handle] = T.tvm_struct_get(args, 0, 12, dtype="handle")
    A_data: T.let[T.handle("float32")] = T.reinterpret(
        T.handle("float32").ty, T.tvm_struct_get(arg0, 0, 1, dtype="handle"))
    A = T.decl_buffer([4], dtype="float32", data=A_data)
    B[0] = T.reinterpret("int32", x)
    B[1] = T.reinterpret(x, dtype="int32")
    A[0] = T.reinterpret("float32", B[2])
""")
    assert 'B[0] = T.reinterpret(x, dtype="int32")' in printed
    assert 'A[0] = T.reinterpret(B[2], dtype="float32")' in printed
    assert 'T.reinterpret(T.tvm_struct_get(arg0, 0, 1, dtype="handle"), dtype="handle")' in printed
    assert printed.count('T.reinterpret(x, dtype="int32")') == 2  # one IR for both orders


def test_llvm_intrinsic_ids_are_kept_by_name_and_no_backend_runs_them():
    mod, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((16,), "uint8"), B: T.Buffer((16,), "uint8")):
    for i in range(16):
        B[i] = T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.ctpop.i8"), A[i], dtype="uint8")
""")
    call = mod["f"].body.body.value
    ident = call.args[0]
    assert isinstance(ident, Call) and ident.op == "llvm_lookup_intrinsic_id"
    assert str(ident.dtype) == "uint32" and len(ident.args) == 1
    assert isinstance(ident.args[0], StringImm) and ident.args[0].value == "llvm.ctpop.i8"
    assert 'T.llvm_lookup_intrinsic_id("llvm.ctpop.i8")' in printed
    for target in ("python", "c", "llvm"):
        with pytest.raises(BuildError, match="call_llvm_pure_intrin"):
            tilelang.build(mod, target=target)


def test_reinterpret_is_computed_by_the_cpu_backends():
    # (tests/test_reinterpret.py has the vector and bfloat16 cases)
    mod = tilelang.parse("""
@T.prim_func
def f(B: T.Buffer((4,), "int32"), x: T.float32):
    B[0] = T.reinterpret("int32", x)
""")
    for target in ("python", "c", "llvm"):
        b = np.zeros(4, np.int32)
        tilelang.build(mod, target=target)["f"](b, -1.5)
        assert b[0] == np.float32(-1.5).view(np.int32)


def test_warp_shuffles_are_typed_by_their_value_and_only_for_gpus():
    mod, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((32,), "float16"), B: T.Buffer((32,), "float16"), t: T.int32):
    mask: T.let[T.uint32] = T.tvm_warp_activemask()
    B[t] = T.tvm_warp_shuffle(mask, A[t], t % 4 * 8 + t // 4, 32, 32)
    B[0] = T.tvm_warp_shuffle_down(mask, B[0], 16, 32, 32) + T.tvm_warp_shuffle_up(
        mask, B[1], 1, 32, 32)
""")
    let = mod["f"].body
    assert let.value.op == "tvm_warp_activemask" and str(let.value.dtype) == "uint32"
    first = let.body.seq[0].value
    assert first.op == "tvm_warp_shuffle" and str(first.dtype) == "float16"
    assert "T.tvm_warp_shuffle(mask, A[t], t % 4 * 8 + t // 4, 32, 32)" in printed
    assert "T.tvm_warp_shuffle_down(mask, B[0], 16, 32, 32)" in printed
    for target in ("python", "c", "llvm"):
        with pytest.raises(BuildError, match="tvm_warp"):
            tilelang.build(mod, target=target)


HEAD = '@T.prim_func\ndef f(A: T.Buffer((8,), "float32"), x: T.float32):\n'

CASES = {
    "address_of_a_number": HEAD
    + """\
    T.evaluate(T.address_of(1))  # check_error: takes a buffer, a buffer element @ 1
""",
    "address_of_an_expression": HEAD
    + """\
    T.evaluate(T.address_of(A[0] + x))  # check_error: got a float32 expression @ A[0] + x
""",
    "address_of_as_a_float": HEAD
    + """\
    T.evaluate(T.address_of(A[0], dtype="float32"))  # check_error: not float32 @ "float32"
""",
    "reinterpret_of_another_width": HEAD
    + """\
    A[0] = T.reinterpret("float64", x)  # check_error: they differ in width @ "float64"
""",
    "reinterpret_without_a_type": HEAD
    + """\
    A[0] = T.reinterpret(x)  # check_error: takes a dtype and a value, got 1 @ x
""",
    "reinterpret_to_a_bad_dtype": HEAD
    + """\
    A[0] = T.reinterpret("float33", x)  # check_error: invalid dtype @ "float33"
""",
    "llvm_intrinsic_by_number": HEAD
    + """\
    T.evaluate(T.llvm_lookup_intrinsic_id(3))  # check_error: expected a string @ 3
""",
    "llvm_intrinsic_not_llvm": HEAD
    + """\
    T.evaluate(T.llvm_lookup_intrinsic_id("ctpop"))  # check_error: starts with 'llvm.' @ "ctpop"
""",
    "warp_shuffle_without_a_width": HEAD
    + """\
    A[0] = T.tvm_warp_shuffle(T.tvm_warp_activemask(), x, 0, 32)  # check_error: takes 5 arguments, got 4 @ T.tvm_warp_shuffle
""",
    "ty_of_a_value": HEAD
    + """\
    A[0] = T.reinterpret(x.ty, x)  # check_error: has no attribute 'ty' @ x.ty
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_error(name):
    source = CASES[name]
    line, column, fragment = expected_location(source)
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(source, f"{name}.tir")
    error = info.value
    assert fragment in error.message, error.render()
    assert (error.line, error.column) == (line, column), error.render()


def test_address_of_a_zero_dimensional_buffer_has_no_indices():
    mod, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((), "float32")):
    T.evaluate(T.address_of(A))
""")
    value = mod["f"].body.value
    assert isinstance(value.args[0], BufferLoad) and value.args[0].indices == ()
    assert "T.address_of(A[()])" in printed

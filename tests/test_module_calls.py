"""Calls between the functions of a module (TVM's GlobalVar calls): ``Module.f(x)``
and ``T.call_tir(Module.f, x)`` inside ``@I.ir_module class Module``, typed by the
callee's result, printed back, and checked against the callee's signature."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.ir import stmt as S
from tilelang.ir.dtype import DataType

MODULE = """
@I.ir_module
class mod:
    @T.prim_func
    def main(A: T.Buffer(2, "float32")):
        mod.fill(A.data, T.int32(16))
        A[0] = mod.square(A[0]) + mod.square(A[1])
        T.call_tir(mod.nothing)

    @T.prim_func
    def square(x: T.float32) -> T.float32:
        return x * x

    @T.prim_func
    def fill(A_data: T.handle("float32"), n: T.int32):
        T.evaluate(0)

    @T.prim_func
    def nothing():
        T.evaluate(0)
"""


def test_calls_are_typed_by_the_callee_and_round_trip():
    mod = tilelang.parse(MODULE)
    fill, store, nothing = mod["main"].body.seq
    assert isinstance(fill, S.Evaluate) and fill.value.op == "call_tir"
    assert fill.value.args[0].value == "fill" and fill.value.dtype == DataType("handle")
    square = store.value.a
    assert square.op == "call_tir" and square.dtype == DataType("float32")
    assert nothing.value.args[0].value == "nothing" and len(nothing.value.args) == 1
    printed = mod.script()
    assert "Module.fill(A.data, 16)" in printed
    assert "A[0] = Module.square(A[0]) + Module.square(A[1])" in printed
    assert_structural_equal(mod, tilelang.parse(printed))


def test_a_function_printed_alone_names_its_callee_by_string():
    main = tilelang.parse(MODULE)["main"]
    printed = main.script()
    assert 'T.call_tir("square", A[0], dtype="float32")' in printed
    assert_structural_equal(main, tilelang.parse(printed)["main"])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("mod.square(A[0], A[1])", "square takes 1 argument, got 2"),
        ("mod.cube(A[0])", "module mod has no function cube"),
        ("mod.square(x=A[0])", "positional arguments only"),
    ],
)
def test_bad_calls_are_located_errors(call, message):
    text = MODULE.replace("mod.square(A[0]) + mod.square(A[1])", call)
    with pytest.raises(TIRSyntaxError, match=message) as info:
        tilelang.parse(text)
    assert info.value.line == 7

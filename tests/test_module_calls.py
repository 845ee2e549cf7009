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


RUNNABLE = """
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i]
        Module.scale(B.data, T.float32(3), True)
        Module.scale(B.data, T.float32(2), False)

    @T.prim_func
    def scale(X: T.Buffer((4,), "float32"), s: T.float32, first: T.bool):
        for i in range(4):
            if first or i % 2 == 0:
                X[i] = X[i] * s
"""


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_void_calls_build_and_run(target):
    import numpy as np

    lib = tilelang.build(tilelang.parse(RUNNABLE), target=target)
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, a * 3 * np.array([2, 1, 2, 1], "float32"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            RUNNABLE.replace(
                "def scale(",
                "def unused(A: T.Buffer((4,), 'float32')):\n"
                "        A[0] = Module.twice(A[1])\n\n    @T.prim_func\n    def scale(",
            )
            + "\n    @T.prim_func\n    def twice(x: T.float32) -> T.float32:\n"
            "        return x * T.float32(2)\n",
            "calls 'twice': functions that return a value cannot be built",
        ),
        (
            RUNNABLE.replace(
                "Module.scale(B.data, T.float32(2), False)",
                "Module.scale(B[0], T.float32(2), False)",
            ),
            "parameter X is a buffer: pass a pointer",
        ),
        (
            RUNNABLE.replace("T.float32(3), True", "T.float64(3), True"),
            "parameter s is float32, the argument float64",
        ),
    ],
)
def test_calls_no_backend_can_make_are_build_errors(text, message):
    from tilelang.errors import BuildError

    with pytest.raises(BuildError, match=message):
        tilelang.build(tilelang.parse(text), target="c")

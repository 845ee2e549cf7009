"""Float math of an integer (TVM's ``T.exp(0)``, ``T.atan2(1, 0)``): the call is typed by
its argument, as TVM types it, so it parses and prints back; no backend computes float
math of integers, so building it is a located error that says how to convert."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.ir.dtype import DataType
from tilelang.script import tir as T

TEXT = """
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    A[0] = T.exp(A[1])
    T.evaluate(T.exp10(0))
    T.evaluate(T.atan2(1, 0))
"""


def test_float_math_of_integers_is_typed_by_the_argument_and_round_trips():
    mod = tilelang.parse(TEXT)
    printed = mod.script()
    assert "A[0] = T.exp(A[1])" in printed and "T.evaluate(T.exp10(0))" in printed
    assert_structural_equal(mod, tilelang.parse(printed))
    call = T.exp(0)
    assert call.op == "exp" and call.dtype == DataType("int32")
    assert T.exp2(T.int64(3)).dtype == DataType("int64")


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_building_float_math_of_integers_is_a_located_error(target):
    with pytest.raises(TIRSyntaxError, match="T.exp of int32 values") as info:
        tilelang.build(tilelang.parse(TEXT), target=target)
    assert (info.value.line, info.value.column) == (4, 12)


def test_converted_arguments_build_and_run():
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = T.exp(T.float32(A[i]))
""")
    a, b = np.arange(4, dtype="int32"), np.zeros(4, "float32")
    tilelang.build(mod, target="llvm")["f"](a, b)
    np.testing.assert_allclose(b, np.exp(a.astype("float32")), rtol=1e-6)

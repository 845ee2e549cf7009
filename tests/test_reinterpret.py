"""``T.reinterpret``: the bits of a value read as another type of the same width, on
the python, c and llvm backends (scalar and vectorized), against NumPy's ``view``;
TVM's bfloat16 formulas written with it agree with the bfloat16 dtype; a change of
width is a located syntax error."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import bfloat16 as bf

BACKENDS = ["python", "c", "llvm"]

BITS = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int32"),
         C: T.Buffer((16,), "float64"), D: T.Buffer((16,), "uint64")):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.reinterpret("int32", A[vi] * T.float32(-2))
            D[vi] = T.reinterpret("uint64", C[vi]) + T.uint64(1)
"""


@pytest.mark.parametrize("target", BACKENDS)
@pytest.mark.parametrize("vectorize", [False, True])
def test_bits_as_numpy_views_them(target, vectorize):
    sch = tilelang.Schedule(tilelang.parse(BITS))
    if vectorize:
        _, inner = sch.split(sch.get_loops("b")[0], [None, 4])
        sch.vectorize(inner)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(16).astype(np.float32)
    c = rng.standard_normal(16)
    b, d = np.zeros(16, np.int32), np.zeros(16, np.uint64)
    tilelang.build(sch.mod, target=target)["main"](a, b, c, d)
    assert np.array_equal(b, (a * np.float32(-2)).view(np.int32))
    assert np.array_equal(d, c.view(np.uint64) + np.uint64(1))


# TVM's bfloat16 legalisation, spelled with integer operations and reinterpret
FORMULAS = """
@T.prim_func
def main(A: T.Buffer((64,), "bfloat16"), F: T.Buffer((64,), "float32"),
         U: T.Buffer((64,), "uint16"), B: T.Buffer((64,), "bfloat16")):
    for i in range(64):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            F[vi] = T.reinterpret("float32",
                T.shift_left(T.Cast("uint32", T.reinterpret("uint16", A[vi])), T.uint32(16)))
            U[vi] = T.Cast("uint16", T.shift_right(
                T.reinterpret("uint32", F[vi] * T.float32(3))
                + (T.bitwise_and(T.shift_right(T.reinterpret("uint32", F[vi] * T.float32(3)),
                                               T.uint32(16)), T.uint32(1)) + T.uint32(32767)),
                T.uint32(16)))
            B[vi] = A[vi] * T.bfloat16(3)
"""


@pytest.mark.parametrize("target", BACKENDS)
def test_tvm_formulas_agree_with_the_dtype(target):
    a = bf.to_bits(np.random.default_rng(1).standard_normal(64).astype(np.float32))
    f, u, b = np.zeros(64, np.float32), np.zeros(64, np.uint16), np.zeros(64, np.uint16)
    tilelang.build(tilelang.parse(FORMULAS), target=target)["main"](a, f, u, b)
    assert np.array_equal(f, bf.from_bits(a))
    assert np.array_equal(u, b)
    assert np.array_equal(b, bf.to_bits(bf.from_bits(a) * np.float32(3)))


def test_a_change_of_width_is_a_located_error():
    src = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int64")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.reinterpret("int64", A[vi])
"""
    with pytest.raises(TIRSyntaxError, match="differ in width") as info:
        tilelang.parse(src)
    assert ":7:35" in str(info.value)

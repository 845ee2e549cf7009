"""One integer semantics on every backend: two's-complement machine integers of the
expression's type, equal to NumPy's array arithmetic.

C promotes 8- and 16-bit operands to int (the result must be narrowed back) and
leaves signed overflow undefined (compiled with -fwrapv); the Python reference
computes loop variables and literals as Python ints (they must wrap too); constants
never leave their type's range, in the parser or the simplifier. float16 constants
and casts round as NumPy's float16 does.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import available_targets

import tilelang
from tilelang.ir import expr as E
from tilelang.parser import parse
from tilelang.transform.simplify import Simplify

TARGETS = available_targets("python", "c", "llvm")
NARROW = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]

BINARY = """
@T.prim_func
def f(A: T.Buffer((64,), "{t}"), B: T.Buffer((64,), "{t}"), C: T.Buffer((64,), "{t}")):
    for i in range(64):
        C[i] = {expr}
"""


def _full_range(dtype, seed):
    info = np.iinfo(dtype)
    values = np.random.default_rng(seed).integers(info.min, info.max, 64, dtype=dtype,
                                                  endpoint=True)  # fmt: skip
    values[:4] = [info.min, info.max, 0, 1]
    return values


def _run(text, target, *arrays):
    lib = tilelang.build(parse(text), target=target)
    arrays = [a.copy() for a in arrays]
    lib["f"](*arrays)
    return arrays


# (TIR expression, the same on NumPy arrays a and b)
CASES = [
    ("A[i] + B[i]", lambda a, b: a + b),
    ("A[i] - B[i]", lambda a, b: a - b),
    ("A[i] * B[i]", lambda a, b: a * b),
    ("A[i] * A[i] * B[i] + A[i]", lambda a, b: a * a * b + a),
    ("T.shift_left(A[i], T.{t}({s}))", lambda a, b, s=3: a << a.dtype.type(s)),
    ("T.shift_right(A[i] * B[i], T.{t}({s}))", lambda a, b, s=3: (a * b) >> a.dtype.type(s)),
    ("T.bitwise_not(A[i]) + B[i]", lambda a, b: ~a + b),
    (
        "T.Cast('{t}', T.Cast('int8', A[i]) * T.int8(3))",
        lambda a, b: (a.astype(np.int8) * np.int8(3)).astype(a.dtype),
    ),
    ("(A[i] * B[i]) // T.{t}(7)", lambda a, b: (a * b) // a.dtype.type(7)),
    ("(A[i] + B[i]) % T.{t}(7)", lambda a, b: (a + b) % a.dtype.type(7)),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_wraps_as_numpy(target, dtype, case):
    expr, numpy_fn = CASES[case]
    text = BINARY.format(t=dtype, expr=expr.format(t=dtype, s=3))
    a, b = _full_range(dtype, 1), _full_range(dtype, 2)
    with np.errstate(all="ignore"):
        want = numpy_fn(a, b).astype(dtype)
    got = _run(text, target, a, b, np.zeros(64, dtype))[2]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", TARGETS)
def test_loop_variable_arithmetic_wraps(target):
    text = """
@T.prim_func
def f(B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    for i in range(8):
        B[i] = i * 1000000007 + 5
        C[i] = (T.shift_left(i, 30) + i * 1000000007) // 3
"""
    i = np.arange(8, dtype=np.int32)
    with np.errstate(all="ignore"):
        want_b = i * np.int32(1000000007) + np.int32(5)
        want_c = ((i << np.int32(30)) + i * np.int32(1000000007)) // np.int32(3)
    b, c = _run(text, target, np.zeros(8, "int32"), np.zeros(8, "int32"))
    np.testing.assert_array_equal(b, want_b)
    np.testing.assert_array_equal(c, want_c)


@pytest.mark.parametrize("target", TARGETS)
def test_wide_unsigned_and_64_bit_literals_keep_their_type(target):
    text = """
@T.prim_func
def f(A: T.Buffer((4,), "uint32"), B: T.Buffer((4,), "int64"), C: T.Buffer((4,), "uint32")):
    for i in range(4):
        C[i] = (A[i] * T.uint32(4294967295)) >> T.uint32(5)
        B[i] = T.shift_left(T.int64(1), B[i])
"""
    a = np.array([0, 1, 2, 4294967295], "uint32")
    b = np.array([0, 40, 62, 63], "int64")
    with np.errstate(all="ignore"):
        want_c = (a * np.uint32(4294967295)) >> np.uint32(5)
        want_b = np.int64(1) << b
    a, b, c = _run(text, target, a, b, np.zeros(4, "uint32"))
    np.testing.assert_array_equal(c, want_c)
    np.testing.assert_array_equal(b, want_b)


def test_constants_stay_in_their_types_range():
    with pytest.raises(E.TIRTypeError, match="out of the range of int8"):
        E.IntImm("int8", 200)
    with pytest.raises(E.TIRTypeError):
        E.IntImm("uint32", -1)
    assert E.IntImm("uint64", 2**64 - 1).value == 2**64 - 1
    # an implicitly typed literal takes the other operand's type, and must fit in it
    for expr in ("A[i] + 200", "A[i] * -129", "T.int8(200)"):
        with pytest.raises(tilelang.TIRSyntaxError, match="range|fit") as info:
            parse(BINARY.format(t="int8", expr=expr))
        assert info.value.line == 5


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("expr", [
    "A[i] + T.int32(-2147483648)", "A[i] - T.int32(-2147483648)",
    "B[i] * T.int32(-1) + T.int32(-2147483648)", "T.int32(-2147483648) // T.int32(-1) + A[i]",
    "(A[i] - T.int32(-2147483648)) // 2",
])  # fmt: skip
def test_simplifier_keeps_int_min_in_range(target, expr):
    text = BINARY.format(t="int32", expr=expr)
    Simplify()(parse(text))  # no out-of-range constant is made
    a, b = _full_range("int32", 3), _full_range("int32", 4)
    got = _run(text, "python", a, b, np.zeros(64, "int32"))[2]
    np.testing.assert_array_equal(_run(text, target, a, b, np.zeros(64, "int32"))[2], got)


@pytest.mark.parametrize("target", TARGETS)
def test_float16_constants_and_casts_round_as_numpy(target):
    text = """
@T.prim_func
def f(A: T.Buffer((64,), "float64"), I: T.Buffer((64,), "int64"), B: T.Buffer((64,), "float16"),
      C: T.Buffer((64,), "float16"), D: T.Buffer((64,), "float16")):
    for i in range(64):
        B[i] = T.Cast("float16", A[i])
        C[i] = T.Cast("float16", I[i])
        D[i] = T.float16(0.1) + T.float16(1000.7)
"""
    rng = np.random.default_rng(0)
    # ties of float16 (2049.5 is exactly between two float16 numbers) and the extremes
    a = np.concatenate([[2049.5, 2051.5, 65504.0, 65520.0, 1e-8, -0.0, np.inf, -1e300],
                        rng.standard_normal(56) * 1000])  # fmt: skip
    ints = np.concatenate([[2049, 2051, 65519, 65520, -70000, 0, 1, 2**62],
                           rng.integers(-5000, 5000, 56)])  # fmt: skip
    outs = _run(text, target, a, ints, *(np.zeros(64, "float16") for _ in range(3)))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(outs[2], a.astype(np.float16))
        np.testing.assert_array_equal(outs[3], ints.astype(np.float16))
    np.testing.assert_array_equal(outs[4], np.full(64, np.float16(0.1) + np.float16(1000.7)))


@pytest.mark.parametrize("target", TARGETS)
def test_small_unsigned_literals_stay_unsigned(target):
    """``~uint32(1550)`` is 4294965745: a uint32 literal below 2**31 is still unsigned in
    C (printed ``1550U``; a bare ``1550`` made the complement negative and max() 0)."""
    text = """
@T.prim_func
def f(B: T.Buffer((2,), "uint32"), C: T.Buffer((1,), "uint64")):
    for i in range(1):
        B[i] = T.max(T.bitwise_not(T.uint32(1550)), T.uint32(0) * B[i])
        B[i + 1] = T.bitwise_not(T.uint32(0)) // T.uint32(2)
        C[i] = T.bitwise_not(T.uint64(7)) // T.uint64(2)
"""
    b, c = np.zeros(2, "uint32"), np.zeros(1, "uint64")
    tilelang.build(parse(text), target=target)["f"](b, c)
    np.testing.assert_array_equal(b, [4294965745, 2147483647])
    np.testing.assert_array_equal(c, [(2**64 - 8) // 2])

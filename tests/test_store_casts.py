"""A stored value of another numeric type is cast to the buffer's, as TVM's IRBuilder
casts it: floats narrow (float64 into float32, float32 into float16) silently; a
float into an integer buffer is cast toward zero with a located TIRCastWarning (TVM's
"may lose precision"); a Python float literal into an integer buffer is the truncated
constant. Every backend computes the same numbers; non-numbers stay type errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tilelang
from tilelang.errors import TIRCastWarning, TIRTypeError

PROGRAM = """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4,), "float16"),
      D: T.Buffer((4,), "float64"), E: T.Buffer((4,), "uint8")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
            C[vi] = A[vi]
            E[vi] = 2.75
            A[vi] = D[vi]
"""


def _parse(text):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = tilelang.parse(text, "casts.tir")
    return mod, [w for w in caught if issubclass(w.category, TIRCastWarning)]


def test_casts_inserted_and_float_to_int_warned_at_the_store():
    mod, caught = _parse(PROGRAM)
    text = mod["f"].script()
    assert 'B[vi] = T.Cast("int32", A[vi] * T.float32(2))' in text
    assert 'C[vi] = T.Cast("float16", A[vi])' in text
    assert 'A[vi] = T.Cast("float32", D[vi])' in text
    assert "E[vi] = T.uint8(2)" in text
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2  # the int32 and the uint8 stores, not the float narrowing
    assert messages[0].startswith(
        "warning: a float32 value stored into buffer B of type int32 is cast and may lose"
    )
    assert " --> casts.tir:8:13" in messages[0]
    assert "B[vi] = A[vi] * T.float32(2)" in messages[0] and "^^^" in messages[0]
    assert "the float 2.75 stored into buffer E of type uint8" in messages[1]


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_cast_stores_compute_as_numpy(target):
    mod, _ = _parse(PROGRAM)
    a = np.array([1.75, -2.5, 3.25, 0.0], "float32")
    b, c, e = np.zeros(4, "int32"), np.zeros(4, "float16"), np.zeros(4, "uint8")
    d = np.array([0.1, 1e40, -2.0, 3.0], "float64")
    tilelang.build(mod, target)["f"](a, b, c, d, e)
    np.testing.assert_array_equal(b, [3, -5, 6, 0])  # toward zero
    np.testing.assert_array_equal(c, np.array([1.75, -2.5, 3.25, 0.0], "float16"))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(a, d.astype("float32"))  # 1e40 -> inf, as NumPy
    np.testing.assert_array_equal(e, [2, 2, 2, 2])


def test_a_reparsed_program_keeps_the_casts_and_warns_no_more():
    mod, _ = _parse(PROGRAM)
    again, caught = _parse(mod["f"].script())
    assert not caught
    assert tilelang.ir.structural_equal(mod["f"], again["f"])


def test_non_numbers_are_still_type_errors():
    text = PROGRAM.replace("C[vi] = A[vi]", "C[vi] = A.data")
    with pytest.raises(TIRTypeError, match="cannot store a handle value into buffer C"):
        _parse(text)


def test_bool_into_int_is_a_cast():
    text = PROGRAM.replace("E[vi] = 2.75", "E[vi] = A[vi] < T.float32(1)")
    mod, caught = _parse(text)
    assert len(caught) == 1  # only the float32 -> int32 store
    assert 'E[vi] = T.Cast("uint8", A[vi] < T.float32(1))' in mod["f"].script()

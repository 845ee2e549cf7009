"""Scalable vectors (TVM's ``T.vscale()``: Arm SVE's run-time vector length): a Ramp's
or Broadcast's lanes may be ``k * T.vscale()``, typed ``float32xvscalex4``; they parse,
print back and compare structurally; a lane count that is neither a constant nor a
multiple of vscale is a located error; no backend computes them (a BuildError)."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import BuildError, TIRSyntaxError
from tilelang.ir import DataType, assert_structural_equal
from tilelang.ir import expr as E
from tilelang.ir.dtype import DataTypeError

TEXT = """
@T.prim_func
def f(A: T.Buffer((200,), "float32")):
    x: T.float32xvscalex4 = A[T.Ramp(0, 1, T.vscale() * 4)] + A[T.Ramp(8, 1, 4 * T.vscale())]
    A[T.Ramp(11, 2, 4 * T.vscale())] = x * 2.0
    A[T.Ramp(100, 1, 4 * T.vscale())] = T.Broadcast(125, 4 * T.vscale())
"""


def test_scalable_dtype_spelling():
    dtype = DataType("float32xvscalex4")
    assert dtype.is_vector() and dtype.is_scalable_vector() and dtype.vscale_factor == 4
    assert dtype.element_of() == "float32"
    assert DataType("int32").with_lanes_of(dtype) == "int32xvscalex4"
    with pytest.raises(DataTypeError, match="scalable vector"):
        _ = dtype.lanes
    with pytest.raises(DataTypeError):
        DataType("float32xvscalex0")


def test_scalable_ramp_and_broadcast_round_trip():
    func = tilelang.parse(TEXT)["f"]
    text = func.script()
    assert (
        "A[T.Ramp(11, 2, 4 * T.vscale())] = x * T.Broadcast(T.float32(2), 4 * T.vscale())" in text
    )
    assert 'T.Cast("float32xvscalex4", T.Broadcast(125, 4 * T.vscale()))' in text
    assert_structural_equal(func, tilelang.parse(text)["f"])
    store = func.body.body.seq[0]
    assert isinstance(store.indices[0], E.Ramp) and store.indices[0].dtype == "int32xvscalex4"
    assert store.value.dtype == "float32xvscalex4"


def test_scalable_factor_is_compared():
    a = tilelang.parse(TEXT)["f"]
    with pytest.raises(TIRSyntaxError, match="vector lanes differ"):
        tilelang.parse(TEXT.replace("8, 1, 4 * T.vscale()", "8, 1, 8 * T.vscale()"))
    eight = TEXT.replace("4 * T.vscale()", "8 * T.vscale()").replace(
        "T.vscale() * 4", "T.vscale() * 8"
    )
    c = tilelang.parse(eight.replace("x4", "x8"))["f"]
    with pytest.raises(AssertionError):
        assert_structural_equal(a, c)


def test_lanes_that_are_not_a_multiple_of_vscale_are_located():
    text = TEXT.replace("T.Ramp(11, 2, 4 * T.vscale())", "T.Ramp(11, 2, 4 + T.vscale())")
    with pytest.raises(TIRSyntaxError, match=r"<string>:5:\d+") as info:
        tilelang.parse(text)
    assert "T.Ramp" in str(info.value)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_no_backend_builds_scalable_vectors(target):
    with pytest.raises(BuildError, match="no backend computes scalable vectors"):
        tilelang.build(tilelang.parse(TEXT)["f"], target=target)

"""The packed-call builtins of TVM's lowered host code (``T.tvm_call_cpacked``,
``T.tvm_call_packed_lowered``, ``T.tvm_stack_make_shape``/``_array``, ``T.isnullptr``)
parse and print back; no backend of tilelang runs TVM's packed-call ABI, so building
them is a BuildError naming the intrinsic."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import BuildError
from tilelang.ir import assert_structural_equal
from tilelang.ir.dtype import DataType

TEXT = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "int8")):
    s = B.data
    if not T.isnullptr(s, dtype="bool"):
        T.evaluate(
            T.tvm_call_cpacked(
                "tvm_test_cpacked",
                T.tvm_stack_make_array(
                    A.data,
                    T.tvm_stack_make_shape(16, dtype="handle"),
                    T.reinterpret(T.uint64(0), dtype="handle"),
                    T.uint32(1),
                    T.Cast("float32", 0),
                    0,
                    dtype="handle",
                ),
                dtype="int32",
            )
        )
        T.evaluate(T.tvm_call_packed_lowered("g", s, s, 0, 2, dtype="int32"))
"""


def test_packed_call_builtins_round_trip_with_their_types():
    mod = tilelang.parse(TEXT)
    branch = mod["f"].body.body
    assert branch.condition.a.op == "isnullptr" and branch.condition.a.dtype == DataType("bool")
    call = branch.then_case.seq[0].value
    assert call.op == "tvm_call_cpacked" and call.dtype == DataType("int32")
    assert call.args[1].op == "tvm_stack_make_array" and call.args[1].dtype.is_handle()
    printed = mod.script()
    assert 'T.tvm_stack_make_shape(16, dtype="handle")' in printed
    assert_structural_equal(mod, tilelang.parse(printed))


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_packed_call_builtins_are_not_built(target):
    with pytest.raises(BuildError, match="isnullptr|tvm_call_cpacked|tvm_stack"):
        tilelang.build(tilelang.parse(TEXT), target=target)


def test_workspace_and_error_builtins_round_trip():
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((1,), "int32"), dev_id: T.int32):
    ws: T.handle("float32") = T.TVMBackendAllocWorkspace(1, dev_id, T.uint64(64), 2, 32, dtype="handle")
    if T.isnullptr(ws, dtype="bool"):
        T.evaluate(T.tvm_throw_last_error(dtype="int32"))
    T.evaluate(T.TVMBackendFreeWorkspace(1, dev_id, ws, dtype="int32"))
""")
    printed = mod.script()
    assert 'T.TVMBackendAllocWorkspace(1, dev_id, T.uint64(64), 2, 32, dtype="handle")' in printed
    assert_structural_equal(mod, tilelang.parse(printed))

"""TVM's storage forms from before TensorIR: ``T.realize(A[region], scope)`` (a
BufferRealize under its ``realize_scope`` attribute) and ``T.attr([A, B],
"buffer_bind_scope", T.tvm_tuple(...))`` parse and print back; building them is a
located error. Also: an operation on two int32 literals prints so that the parser
keeps it (``T.int32(0) // 256``, not ``0 // 256`` which Python computes)."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.ir import stmt as S
from tilelang.ir.convert import binary
from tilelang.ir.expr import IntImm
from tilelang.ir.printer import script

TEXT = """
@T.prim_func
def f(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    packed = T.Buffer([8, 8], elem_offset=0, offset_factor=1)
    frag = T.Buffer([8], elem_offset=0, scope="local")
    T.realize(packed[0:8, 0:8], "")
    for x in range(8):
        for y in range(8):
            packed[x, y] = A[x * 8 + y]
    for i in range(8):
        with T.realize(C[i * 8:i * 8 + 8], "global", condition=i < 4):
            T.attr([frag, packed], "buffer_bind_scope", T.tvm_tuple(i, 1, 0, 8, dtype="handle"))
            C[i] = packed[i, 0] + frag[T.floordiv(frag.elem_offset, 256)]
        T.realize(C[0:1])
        C[0] = T.float32(0)
"""


def test_realize_forms_round_trip():
    mod = tilelang.parse(TEXT)
    attr = mod["f"].body
    assert isinstance(attr, S.AttrStmt) and attr.attr_key == "realize_scope"
    realize = attr.body
    assert isinstance(realize, S.BufferRealize) and realize.buffer is attr.node
    assert [(r.min.value, r.extent.value) for r in realize.bounds] == [(0, 8), (0, 8)]
    printed = mod.script()
    assert (
        'T.realize(packed_1[0:8, 0:8], "")' in printed
        or 'T.realize(packed[0:8, 0:8], "")' in printed
    )
    assert 'with T.realize(C[i * 8:i * 8 + 8], "global", condition=i < 4):' in printed
    assert "T.realize(C[0])" in printed
    assert "T.tvm_tuple(i, 1, 0, 8)" in printed
    assert_structural_equal(mod, tilelang.parse(printed), map_free_vars=True)


def test_realize_is_not_built():
    with pytest.raises(TIRSyntaxError, match="T.realize .* is not lowered") as info:
        tilelang.build(tilelang.parse(TEXT), target="c")
    assert info.value.line == 6


def test_operations_on_two_literals_survive_printing():
    expr = binary("floordiv", IntImm("int32", 0), IntImm("int32", 256))
    assert script(expr) == "T.int32(0) // 256"
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    A[0] = T.floordiv(0, 256) + T.int32(1) * 2
""")
    assert_structural_equal(mod, tilelang.parse(mod.script()))

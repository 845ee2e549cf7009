"""Buffers declared by ``T.Buffer(..., data=ptr)`` over a pointer that a statement of
the body defines (``T.allocate``, ``T.allocate_const``, a let) print where that
pointer is defined, as TVM prints them, so the text parses back; views over
parameters still print at the top of the body."""

from __future__ import annotations

import tilelang
from tilelang.ir import assert_structural_equal


def roundtrip(text: str):
    mod = tilelang.parse(text)
    printed = mod.script()
    assert_structural_equal(mod, tilelang.parse(printed), map_free_vars=True)
    return mod, printed


def _lines(printed: str) -> list[str]:
    return [line.strip() for line in printed.splitlines()]


def test_view_of_an_allocation_prints_after_it():
    _, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        tmp_data = T.allocate([2], "float32", "global")
        tmp = T.Buffer((2,), "float32", data=tmp_data)
        tmp[0] = A[i] * T.float32(2)
        tmp[1] = tmp[0] + T.float32(1)
        B[i] = tmp[1]
""")
    lines = _lines(printed)
    alloc = lines.index('tmp_data = T.allocate([2], "float32", "global")')
    assert lines[alloc + 1] == 'tmp = T.Buffer((2,), "float32", data=tmp_data)'


def test_view_of_a_constant_prints_after_it():
    _, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32")):
    B = T.alloc_buffer((4,), "int32")
    K_data = T.allocate_const([1, 2, 3, 4], "int32", [4])
    K = T.Buffer((4,), "int32", data=K_data)
    for x in range(4):
        B[x] = A[x] + K[x]
    for x in range(4):
        C[x] = B[x]
""")
    lines = _lines(printed)
    assert lines.index('K = T.Buffer((4,), "int32", data=K_data)') == (
        lines.index('K_data = T.allocate_const([1, 2, 3, 4], "int32", [4])') + 1
    )


def test_view_sized_by_a_let_prints_inside_the_let():
    _, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(2):
        m: T.int32 = n + i
        V = T.Buffer((m,), "float32", data=A.data)
        V[0] = T.float32(1)
""")
    lines = _lines(printed)
    assert lines.index('V = T.Buffer((m,), "float32", data=A.data)') == (
        lines.index("m: T.int32 = n + i") + 1
    )


def test_views_of_parameters_stay_at_the_top():
    _, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((4, 4), "float32")):
    A_flat = T.Buffer((16,), "float32", data=A.data)
    for i in range(16):
        A_flat[i] = T.float32(0)
""")
    lines = _lines(printed)
    assert lines.index('A_flat = T.Buffer((16,), "float32", data=A.data)') < lines.index(
        "for i in range(16):"
    )

"""Buffers' ``offset_factor`` with TVM's semantics: 0 means 1 (so every buffer has
one, 1 by default); a buffer declared with a factor but no ``elem_offset`` gets a
fresh offset variable, whose declaration the printer leaves to the factor
(``offset_factor=...``, uses as ``A_1.elem_offset``); the text parses back to the
same structure; a schedule's output compares equal to the same program written with
``elem_offset=0, offset_factor=1``."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import tilelang
from tilelang import tir
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer, decl_buffer
from tilelang.ir.functor import post_order_visit
from tilelang.ir.structural import assert_structural_equal, structural_equal
from tilelang.runtime.build import build


def _parse(text):
    return tilelang.parse(text)["main"]


def _match_buffers(func):
    found = []
    post_order_visit(
        func.body,
        lambda n: found.extend(m.buffer for m in n.match_buffers) if isinstance(n, S.Block) else 0,
    )
    return found


def test_zero_factor_is_one():
    buffer = decl_buffer((4,), "float32", "A")
    assert buffer.offset_factor == 1
    assert isinstance(buffer.elem_offset, E.IntImm) and buffer.elem_offset.value == 0
    assert Buffer("B", E.Var("B", "handle"), "float32", (4,), offset_factor=0).offset_factor == 1


def test_declared_factor_gives_an_offset_variable():
    A = decl_buffer((4,), "float32", "A", offset_factor=4)
    assert isinstance(A.elem_offset, E.Var) and A.elem_offset.name == "A_elem_offset"
    B = decl_buffer((E.Var("n", "int64"),), "float32", "B", offset_factor=1)
    assert B.elem_offset.dtype == "int64"  # the first extent's type, as TVM
    C = decl_buffer((4,), "float32", "C", elem_offset=0, offset_factor=4)
    assert isinstance(C.elem_offset, E.IntImm) and C.elem_offset.value == 0


FACTORS = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16,), "float32", offset_factor=4)
    B = T.match_buffer(b, (16,), "float32", elem_offset=0, offset_factor=1)
    C = T.match_buffer(c, (16,), "float32")
    for i in range(4):
        with T.block("x"):
            vi = T.axis.remap("S", [i])
            A_1 = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,), offset_factor=4)
            T.evaluate(T.call_extern("int32", "g", A_1.access_ptr("w"), A_1.elem_offset))
            C[vi] = A_1[0] + B[vi]
"""


def test_parser_and_printer():
    func = _parse(FACTORS)
    A, B, C = (func.buffer_map[p] for p in func.params)
    assert (A.offset_factor, B.offset_factor, C.offset_factor) == (4, 1, 1)
    assert isinstance(A.elem_offset, E.Var)
    assert isinstance(B.elem_offset, E.IntImm) and isinstance(C.elem_offset, E.IntImm)
    (view,) = _match_buffers(func)
    assert isinstance(view.elem_offset, E.Var) and view.offset_factor == 4
    text = func.script()
    # the factor declares the offset variable; a factor of 1 without one is the default
    assert 'A: T.Buffer((16,), "float32", offset_factor=4)' in text
    assert 'B: T.Buffer((16,), "float32")' in text
    assert 'A_1 = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,), "float32", offset_factor=4)' in text
    assert "A_1.data, A_1.elem_offset, 4, 2), A_1.elem_offset))" in text
    assert "elem_offset=" not in text and "T.int32()" not in text
    again = _parse(text)
    assert_structural_equal(func, again)
    assert again.script() == text


def test_offset_variable_used_elsewhere_is_declared():
    """An offset variable that another buffer's extent also uses is no buffer's own:
    it is declared and written out."""
    func = _parse(
        """
@T.prim_func
def main(a: T.handle, b: T.handle):
    off = T.int32()
    A = T.match_buffer(a, (16,), "float32", elem_offset=off, offset_factor=1)
    B = T.match_buffer(b, (off,), "float32")
    for i in range(16):
        with T.block("x"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
"""
    )
    text = func.script()
    assert "elem_offset=off" in text
    assert_structural_equal(func, _parse(text))


def test_offset_variable_of_a_view_used_outside_its_block():
    """A view's offset variable used outside the view's block cannot print as
    ``view.elem_offset`` there: it is declared instead."""
    func = _parse(FACTORS)
    (view,) = _match_buffers(func)
    outside = S.Evaluate(E.Call("int32", "call_extern", (E.StringImm("h"), view.elem_offset)))
    body = S.SeqStmt((func.body.block.body, outside))
    block = attrs.evolve(func.body.block, body=body)
    func = func.with_body(attrs.evolve(func.body, block=block))
    text = func.script()
    assert "A_1_elem_offset = T.int32()" in text
    assert "elem_offset=A_1_elem_offset" in text
    assert structural_equal(func, _parse(text), map_free_vars=True)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_symbolic_offset_runs(target):
    mod = tilelang.parse(
        """
@T.prim_func
def main(A: T.Buffer((16,), "float32", offset_factor=4), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("x"):
            vi = T.axis.remap("S", [i])
            A_1 = T.match_buffer(A[vi:vi + 1], (1,), offset_factor=1)
            B[vi] = A_1[0] * T.float32(2)
"""
    )
    a, b = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    build(mod, target, auto_schedule=False)["main"](a, b)
    np.testing.assert_allclose(b, a * 2)


BLOCKIZED = """
@T.prim_func
def main(A: T.Buffer((32, 4, 128), "float32"), B: T.Buffer((32, 4), "float32")):
    for i0, i2_0 in T.grid(32, 16):
        with T.block("blockized_B"):
            io, ko = T.axis.remap("SR", [i0, i2_0])
            with T.init():
                for i1 in range(4):
                    with T.block("B_init"):
                        ii_init = T.axis.spatial(4, i1)
                        B[io, ii_init] = T.float32(0)
            for i1_1, i2_1 in T.grid(4, 8):
                with T.block("B"):
                    ii = T.axis.spatial(4, i1_1)
                    k = T.axis.reduce(128, ko * 8 + i2_1)
                    B[io, ii] = B[io, ii] + A[io, ii, k]
"""

DECOMPOSED = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (32, 4, 128), "float32", elem_offset=0, offset_factor=1)
    B = T.match_buffer(b, (32, 4), "float32", elem_offset=0, offset_factor=1)
    for i0 in range(32):
        with T.block("blockized_B_init"):
            io = T.axis.spatial(32, i0)
            for i1 in range(4):
                with T.block("B_init"):
                    ii = T.axis.spatial(4, i1)
                    B[io, ii] = T.float32(0)
    for i0, i2_o in T.grid(32, 16):
        with T.block("blockized_B_update"):
            io, ko = T.axis.remap("SR", [i0, i2_o])
            for i1, i2_i in T.grid(4, 8):
                with T.block("B"):
                    ii = T.axis.spatial(4, i1)
                    k = T.axis.reduce(128, ko * 8 + i2_i)
                    B[io, ii] = B[io, ii] + A[io, ii, k]
"""


def test_decomposed_blockized_reduction_equals_explicit_defaults():
    """Buffers written without a factor and with ``elem_offset=0, offset_factor=1``
    are the same buffers (TVM's decompose_reduction of a blockized rowsum)."""
    sch = tir.Schedule(tilelang.parse(BLOCKIZED))
    i0, _ = sch.get_loops(sch.get_block("blockized_B"))
    sch.decompose_reduction(sch.get_block("blockized_B"), i0)
    assert_structural_equal(sch.mod["main"], _parse(DECOMPOSED))


def test_default_offset_has_the_default_index_type():
    """TVM's DefaultIndexType: the first extent's type, int64 for a 0-d buffer; the
    printer writes an offset only when it is not 0 of that type (or a factor would
    otherwise make it a variable on parsing)."""
    assert decl_buffer((), "float32", "S").elem_offset.dtype == "int64"
    assert decl_buffer((4,), "float32", "A").elem_offset.dtype == "int32"
    n = E.Var("n", "int64")
    assert decl_buffer((n, 4), "float32", "B").elem_offset.dtype == "int64"
    func = _parse(
        """
@T.prim_func
def main(S: T.Buffer((), "float32"), A: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,), elem_offset=T.int64(0))
    D = T.alloc_buffer((4,), elem_offset=0, offset_factor=2)
    for i in range(4):
        with T.block("x"):
            vi = T.axis.remap("S", [i])
            C[vi] = S[()]
            D[vi] = C[vi]
            A[vi] = D[vi]
"""
    )
    text = func.script()
    assert 'S: T.Buffer((), "float32")' in text
    assert 'C = T.alloc_buffer((4,), "float32", elem_offset=T.int64(0))' in text
    assert 'D = T.alloc_buffer((4,), "float32", elem_offset=0, offset_factor=2)' in text
    assert_structural_equal(func, _parse(text))


ZERO_DIM_SUM = """
@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((), "float32")):
    for k0 in range(128):
        with T.block("B"):
            k = T.axis.reduce(128, k0)
            with T.init():
                B[()] = T.float32(0)
            B[()] = B[()] + A[k]
"""


def test_rfactor_buffer_keeps_the_offset_of_the_buffer_it_factors():
    """As TVM copies the reduced buffer's type: a 0-d sum's int64 zero offset stays,
    now written out since the rfactor buffer's first extent is int32."""
    sch = tir.Schedule(tilelang.parse(ZERO_DIM_SUM))
    (k,) = sch.get_loops(sch.get_block("B"))
    sch.rfactor(k, 0)
    text = sch.mod["main"].script()
    assert 'B_rf = T.alloc_buffer((128,), "float32", elem_offset=T.int64(0))' in text
    a, b = np.arange(128, dtype="float32"), np.zeros((), "float32")
    build(sch.mod, "llvm", auto_schedule=False)["main"](a, b)
    np.testing.assert_allclose(b, a.sum())


ALLOCATIONS = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    C = T.alloc_buffer((16,), offset_factor=2)
    for i in range(16):
        with T.block("c"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            D = T.decl_buffer((1,), offset_factor=4)
            D[0] = C[vi] * T.float32(2)
            B[vi] = D[0]
"""


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_an_allocation_with_a_factor_owns_offset_zero(target):
    """Unlike a view, an allocation's memory starts at its own data pointer: a factor
    without elem_offset leaves the offset 0 (no variable nothing would bind)."""
    func = _parse(ALLOCATIONS)
    text = func.script()
    assert 'C = T.alloc_buffer((16,), "float32", elem_offset=0, offset_factor=2)' in text
    assert "elem_offset=0, offset_factor=4" in text
    assert "_elem_offset" not in text
    assert structural_equal(func, _parse(text))
    a, b = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    build(tilelang.IRModule({"main": func}), target)["main"](a, b)
    np.testing.assert_array_equal(b, (a + 1) * 2)

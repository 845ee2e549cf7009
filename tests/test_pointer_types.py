"""Typed handles (TVM's ``T.handle("float32", "shared")``): a handle variable keeps the
pointer type it is declared with (``Var.type_annotation``, ``Var.ty``); an untyped
``T.handle`` and ``T.handle("void")`` are the same void pointer; the type prints back as
TVM prints it and takes part in structural equality."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.ir.types import VOID_POINTER, PointerType, PrimType

FUNC = """
@T.prim_func
def f(out: {annotation}):
    T.evaluate(out)
"""


def parse(annotation: str):
    return tilelang.parse(FUNC.format(annotation=annotation))["f"]


@pytest.mark.parametrize(
    ("annotation", "printed", "ty"),
    [
        ("T.handle", "out: T.handle)", VOID_POINTER),
        ('T.handle("void")', "out: T.handle)", VOID_POINTER),
        ('T.handle("void", "shared")', 'out: T.handle(storage_scope="shared"))',
         PointerType(None, "shared")),
        ('T.handle(storage_scope="shared")', 'out: T.handle(storage_scope="shared"))',
         PointerType(None, "shared")),
        ('T.handle("float32")', 'out: T.handle("float32"))', PointerType(PrimType("float32"))),
        ('T.handle("int8", "local")', 'out: T.handle("int8", "local"))',
         PointerType(PrimType("int8"), "local")),
    ],
)  # fmt: skip
def test_pointer_type_is_kept_printed_and_round_trips(annotation, printed, ty):
    func = parse(annotation)
    assert func.params[0].ty == ty
    text = func.script()
    assert printed in text
    assert_structural_equal(func, tilelang.parse(text)["f"])


def test_void_pointer_spellings_are_one_type():
    assert_structural_equal(parse("T.handle"), parse('T.handle("void")'))


def test_pointer_types_differ_structurally():
    with pytest.raises(AssertionError, match="type PointerType"):
        assert_structural_equal(parse('T.handle("float32")'), parse("T.handle"))
    with pytest.raises(AssertionError):
        assert_structural_equal(
            parse('T.handle("float32")'), parse('T.handle("float32", "shared")')
        )


def test_non_handle_variables_have_prim_types():
    func = tilelang.parse(FUNC.format(annotation="T.int32"))["f"]
    assert func.params[0].ty == PrimType("int32")


def test_free_typed_pointer_prints_its_type():
    func = tilelang.parse(
        """
@T.prim_func
def f():
    ptr = T.handle("float32")
    buf = T.decl_buffer(shape=[1], dtype="float32", data=ptr)
    T.evaluate(buf[0])
"""
    )["f"]
    text = func.script()
    assert 'ptr = T.handle("float32")' in text
    assert_structural_equal(func, tilelang.parse(text)["f"], map_free_vars=True)


def test_bad_pointer_type_is_located():
    with pytest.raises(TIRSyntaxError, match=r"T.handle takes \(dtype, storage_scope\)"):
        parse('T.handle("float32", "shared", "x")')
    with pytest.raises(TIRSyntaxError, match=r'expected a dtype or "void"'):
        parse('T.handle("float77")')

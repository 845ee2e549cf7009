"""Classic TVMScript's ``with T.LetStmt(value, var=y):`` binds a variable declared
before (``y = T.int32()``) instead of a new one; it prints back in that form, and the
variable stays free outside the let."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.ir import stmt as S

TEXT = """
@T.prim_func
def func():
    y = T.int32()
    with T.LetStmt(y) as x:
        with T.LetStmt(0, var=y):
            T.evaluate(x + y)
    T.evaluate(y)
"""


def test_let_binds_the_declared_variable_and_round_trips():
    mod = tilelang.parse(TEXT)
    outer = mod["func"].body.seq[0]
    inner = outer.body
    assert isinstance(inner, S.LetStmt) and inner.var is outer.value  # the same y
    printed = mod.script()
    assert "with T.LetStmt(0, var=y):" in printed and "y = T.int32()" in printed
    assert_structural_equal(mod, tilelang.parse(printed), map_free_vars=True)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("with T.LetStmt(0, var=y) as z:", "takes no `as` name"),
        ("with T.LetStmt(0, var=3):", "expected a variable"),
        ("with T.LetStmt(T.float32(1.5), var=y):", "the value is float32, the variable int32"),
    ],
)
def test_bad_rebindings_are_located_errors(line, message):
    text = TEXT.replace("with T.LetStmt(0, var=y):", line)
    with pytest.raises(TIRSyntaxError, match=message) as info:
        tilelang.parse(text)
    assert info.value.line == 6


ANNOTATED_FIRST = """
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    packed = T.Buffer([16], "float32")
    T.attr(packed.data, "storage_scope", "global")
    with T.LetStmt(T.address_of(A[0]), var=packed.data):
        for i in range(16):
            packed[i] = A[i] + T.float32(1)
"""


def test_pointer_annotated_before_its_let_is_declared_when_printed():
    """TVM's lowered host code annotates a pointer (T.attr(B.data, ...)) ahead of the
    T.LetStmt that binds it: the printer declares the pointer first, so the text
    parses back to the same function."""
    func = tilelang.parse(ANNOTATED_FIRST)["f"]
    printed = func.script()
    lines = [line.strip() for line in printed.splitlines()]
    assert lines.index("packed = T.handle()") < lines.index(
        'with T.attr(packed, "storage_scope", "global"):'
    )
    assert_structural_equal(func, tilelang.parse(printed)["f"], map_free_vars=True)

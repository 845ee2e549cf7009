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

"""The builder's name scopes: the innermost binding wins, and closing a frame brings
back exactly what its definitions shadowed (the flat ``visible`` table must agree with
the frames)."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.parser.scope import MISSING, ScopeStack


def test_inner_definitions_shadow_and_are_undone_when_the_frame_closes():
    scopes = ScopeStack()
    scopes.define("x", 1)
    with scopes.frame():
        scopes.define("x", 2)
        scopes.define("y", 3)
        scopes.define("x", 4)  # redefined in the same frame
        assert scopes.lookup("x") == 4 and scopes.lookup("y") == 3
        with scopes.frame():
            scopes.define("y", 5)
            assert scopes.lookup("y") == 5 and scopes.names() == {"x", "y"}
        assert scopes.lookup("y") == 3
    assert scopes.lookup("x") == 1
    assert scopes.lookup("y") is MISSING
    assert scopes.names() == {"x"}


def test_a_loop_variable_is_gone_after_its_loop():
    text = """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.float32(0)
    A[i] = T.float32(1)
"""
    with pytest.raises(TIRSyntaxError, match="undefined name i") as info:
        tilelang.parse(text, "f.tir")
    assert info.value.line == 6

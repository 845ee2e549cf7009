"""String literals in TIR source mean what they mean in Python: the builder takes a
plain literal's text directly and gives every other spelling (escapes, prefixes,
triple quotes, implicit concatenation) to Python's literal reader."""

from __future__ import annotations

import ast

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError

LITERALS = [
    '"plain"',
    "'single'",
    '""',
    '"it\'s"',
    "'say \"hi\"'",
    '"tab\\there"',
    '"new\\nline"',
    '"back\\\\slash"',
    '"\\u00e9t\\u00e9"',
    '"été"',
    'r"raw\\n"',
    'u"unicode prefix"',
    '"""triple"""',
    '"con" "cat" \'ena\' "tion"',
]


@pytest.mark.parametrize("literal", LITERALS)
def test_a_string_literal_means_its_python_value(literal):
    text = f"""
@T.prim_func
def f(A: T.Buffer((1,), "float32")):
    T.func_attr({{"key": {literal}}})
    A[0] = T.float32(1)
"""
    func = tilelang.parse(text).functions["f"]
    assert func.attrs["key"] == ast.literal_eval(literal)


def test_a_block_name_is_the_literal_value():
    text = """
@T.prim_func
def f(A: T.Buffer((1,), "float32")):
    with T.block("b\\u00e9"):
        A[0] = T.float32(1)
"""
    assert "bé" in tilelang.parse(text).script()


def test_a_bytes_literal_is_a_located_error():
    text = """
@T.prim_func
def f(A: T.Buffer((1,), "float32")):
    T.func_attr({"key": b"bytes"})
    A[0] = T.float32(1)
"""
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(text)
    assert "bytes literals are not supported" in str(info.value)
    assert ":4:" in str(info.value)

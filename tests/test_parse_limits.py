"""No input hangs the parser or leaves it without a location: literal arithmetic is
bounded, every diagnostic points into the source, deep nests parse (in time linear
in their depth: measured in benchmarks/bench_parse.py, not here), and what parses
prints back to text that parses to the same function."""

from __future__ import annotations

import pytest

from tilelang.errors import TIRSyntaxError
from tilelang.ir import structural_equal
from tilelang.parser import parse

FUNC = """
@T.prim_func
def f(A: T.Buffer((4,), "int64")):
    {body}
"""


@pytest.mark.parametrize("body,message", [
    ("A[0] = 2 ** 10 ** 10", "more than 256 bits"),
    ("A[0] = 1 << 100000000", "more than 256 bits"),
    ("A[0] = (1 << 200) * (1 << 200)", "more than 256 bits"),
    ("A[0] = -(7 ** 1000)", "more than 256 bits"),
    ("A[0] = " + "9" * 5000, "5000 digits"),
    ("A[0] = 0x" + "f" * 100, "digits"),
    ("A[0] = 2.0 ** 100000", "cannot compute"),
    ("A[0] = A[1] + 2 ** 64", "out of the range of int64"),
    ("A[0] = T.Broadcast(T.int64(1), 0)[0]", "positive number of lanes"),
    ("B = T.Broadcast(T.int64(1), -2)", "positive number of lanes"),
    ("A[0:4] = T.Ramp(T.int64(0), T.int64(1), -4)", "positive number of lanes"),
])  # fmt: skip
def test_literal_and_lane_bounds_are_located_errors(body, message):
    with pytest.raises(TIRSyntaxError, match=message) as info:
        parse(FUNC.format(body=body), "p.tir")
    assert info.value.line == 4 and info.value.column is not None


def test_bounded_literal_arithmetic_still_folds():
    func = parse(FUNC.format(body="A[0] = A[1] + (2 ** 63 - 1) + (1 << 62) // 2 ** 61"))
    assert "9223372036854775807" in func.script()


@pytest.mark.parametrize("body", ["A[[]] = 1", "A[0] = True[0]", "A[0] = []"])
def test_nodes_without_tokens_still_have_a_location(body):
    with pytest.raises(TIRSyntaxError) as info:
        parse(FUNC.format(body=body), "p.tir")
    assert info.value.line == 4, str(info.value)


def test_an_indented_program_parses_and_errors_point_into_it():
    text = '    @T.prim_func\n    def f(A: T.Buffer((4,), "int64")):\n        A[0] = B\n'
    with pytest.raises(TIRSyntaxError) as info:
        parse(text, "p.tir")
    assert (info.value.line, info.value.column) == (3, 16)
    assert "        A[0] = B" in str(info.value)
    fine = parse(text.replace("= B", "= 1"))
    assert structural_equal(fine, parse(fine.script()))


def _nested(depth: int, header: str) -> str:
    lines = ["@T.prim_func", 'def f(A: T.Buffer((1,), "float32")):']
    for level in range(depth):
        lines.append("    " * (level + 1) + header.format(n=level))
    lines.append("    " * (depth + 1) + "A[0] = T.float32(1)")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("header", ['with T.block("b{n}"):', "for i{n} in range(1):",
                                    "if A[0] > T.float32({n}):"])  # fmt: skip
def test_nests_a_thousand_deep_parse_and_round_trip(header):
    func = parse(_nested(1000, header))
    assert structural_equal(func, parse(func.script()))


def test_free_scalars_and_int64_steps_round_trip():
    text = """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), n: T.int32):
    m = T.int32()
    x = T.float32()
    for i in range(n):
        A[i] = T.Cast("float32", m) + x
    for j in T.serial(T.int64(0), T.int64(8), step=T.int64(2)):
        A[j] = T.float32(1)
"""
    func = parse(text)
    printed = func.script()
    assert "m = T.int32()" in printed and "x = T.float32()" in printed
    assert structural_equal(func, parse(printed), map_free_vars=True)

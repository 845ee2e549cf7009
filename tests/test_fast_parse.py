"""The fast front end (tilelang.parser.fast_parse) builds exactly the tree Lark builds —
rule names, ``None`` placeholders, token types, values and positions — or declines and
lets Lark answer. Large inputs parse to the right IR (their speed is measured in
benchmarks/bench_parse.py, not asserted here)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from lark import Token

from tilelang.errors import TIRSyntaxError
from tilelang.ir import structural_equal
from tilelang.parser import fast_parse, parse
from tilelang.parser.fast_lexer import Bail
from tilelang.parser.grammar_loader import get_parser

ROOT = Path(__file__).resolve().parent.parent
#: TILELANG_FUZZ_SCALE=20 for release checks (README, "Developing")
SCALE = int(os.environ.get("TILELANG_FUZZ_SCALE", "1"))
TIR_FILES = sorted(p for folder in ("samples", "tests") for p in (ROOT / folder).rglob("*.tir"))

EVERY_FORM = '''from tvm.script import ir as I
from tvm.script import tir as T
import tvm.script.tir as TT, numpy
from tvm.script import (tir as T2, relax,)
from tvm import *
# a comment
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def f(A: T.Buffer((1,), "float32"), n: T.int32 = 4,) -> T.int32:
        T.func_attr({"global_symbol": "f", "tir.noalias": True,})
        x, y = 1, 2,
        a.b[1, 2:3, ::2, :, 4:, :5:, ()] = -x ** not y and "a" 'b' r"c"
        x: T.int32
        z: T.int32 = x  # trailing comment
        x += 1; pass;
        x //= 2
        assert x, "m"
        return
        if a: pass
        elif b:
            pass
        elif c: pass
        else:
            return x
        if a:

            # blank and comment lines inside a suite
            pass
        while x < 3 and not y: x = x + 1
        for i, j, in T.grid(1, 2): pass
        while True:
            if x: break
            continue; break
        for (i) in range(3):
            with T.block("x") as b: pass
            with T.block(): pass
        T.f(lambda: 1, lambda x, y: x, k=1,)
        () ; (a,) ; (a, b) ; (a, b,) ; [] ; [a,] ; {} ; {a: b,}; x[()]; f(); True; None
        0x1F; 1.5e3; .5; 1.; 1_000; 0; 1e-3; ~x; +x; - - x; x.y.z(1)(2)[3]
        s = """triple
    quoted""" + \\
            "continued"
        call(a,  # a comment inside brackets
             b,
        )
        A[0] = (a + b) * (c - (d // e) % f) << 2 >> 1 | g ^ h & i
        A[0] = a < b <= c > d >= e == f != g or h

@T.prim_func
def g():
    T.evaluate(0)
'''


def _fields(token: Token) -> tuple:
    return tuple(getattr(token, name) for name in Token.__slots__)


def assert_same_tree(expected, got, path="start"):
    """Lark's tree ``expected`` and ``got`` are equal, down to every token's position."""
    if isinstance(expected, Token) or isinstance(got, Token):
        assert isinstance(expected, Token) and isinstance(got, Token), path
        assert _fields(expected) == _fields(got), path
        return
    if expected is None or got is None:
        assert expected is got, path
        return
    assert (expected.data, len(expected.children)) == (got.data, len(got.children)), path
    for index, (a, b) in enumerate(zip(expected.children, got.children)):
        assert_same_tree(a, b, f"{path}/{expected.data}[{index}]")


def lark_or_none(text: str):
    try:
        return get_parser().parse(text)
    except Exception:
        return None


def padded(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def test_the_grammar_is_the_one_the_fast_parser_mirrors():
    # If this fails, grammar/tir.lark changed: update fast_parse.py's rules to match
    # and then its GRAMMAR_SHA256 (until then every parse goes through Lark).
    assert fast_parse.grammar_matches()


@pytest.mark.parametrize(
    "text",
    [EVERY_FORM, EVERY_FORM.replace("\n", "\r\n"), EVERY_FORM.replace("        ", "\t\t")],
    ids=["lf", "crlf", "tabs"],
)
def test_every_form_gives_larks_tree(text):
    text = padded(text)
    assert_same_tree(get_parser().parse(text), fast_parse.parse_tree(text))


@pytest.mark.parametrize("path", TIR_FILES, ids=lambda p: p.name)
def test_files_give_larks_tree(path):
    text = padded(path.read_text())
    assert_same_tree(get_parser().parse(text), fast_parse.parse_tree(text))


def test_mutants_give_larks_tree_or_are_declined():
    """Random edits of real programs: the fast parser accepts only what Lark accepts,
    with Lark's tree."""
    rng = random.Random(20)
    pieces = ["(", ")", "[", "]", ",", ":", "\n", "    ", " ", "=", "-", "not ", "in",
              "as", "#", '"', "\\\n", "1", ".", "lambda", "*", "@", "'''", "\t"]  # fmt: skip
    sources = [padded(p.read_text()) for p in TIR_FILES[:6]] + [padded(EVERY_FORM)]
    accepted = 0
    for _ in range(300 * SCALE):
        text = rng.choice(sources)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text))
            cut = rng.choice([0, 0, 1, 2, 5])
            text = text[:at] + rng.choice(pieces + [""]) + text[at + cut :]
        text = padded(text)
        expected = lark_or_none(text)
        try:
            got = fast_parse.parse_tree(text)
        except Bail:
            continue
        assert expected is not None, repr(text)
        assert_same_tree(expected, got)
        accepted += 1
    assert accepted > 30 * SCALE  # the property was exercised, not only declined


def _declined(text):
    raise Bail


@pytest.mark.parametrize(
    "text",
    [
        "@T.prim_func\ndef f(A: T.Buffer((1,), 'float32')):\n    A[0] = = 1\n",
        "@T.prim_func\ndef f(A: T.Buffer((1,), 'float32')):\n    A[0] = 1\n  A[0] = 2\n",
        "@T.prim_func\ndef f(A: T.Buffer((1,), 'float32')):\n    A[0] = (1\n",
        "@T.prim_func\ndef f(A: T.Buffer((1,), 'float32')):\n    A[0] = 1 $ 2\n",
        "@T.prim_func\ndef f(A: T.Buffer((1,), 'float32')):\n    A[0] = B\n",
    ],
)
def test_diagnostics_are_those_of_the_lark_front_end(text, monkeypatch):
    with pytest.raises(TIRSyntaxError) as fast_error:
        parse(text, "p.tir")
    monkeypatch.setattr(fast_parse, "parse_tree", _declined)
    with pytest.raises(TIRSyntaxError) as lark_error:
        parse(text, "p.tir")
    assert str(fast_error.value) == str(lark_error.value)
    assert fast_error.value.line is not None


def _large_program(units: int) -> str:
    lines = [
        "@T.prim_func",
        'def big(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):',
    ]
    for n in range(units):
        lines += [
            f'    Y{n} = T.alloc_buffer((64, 64), "float32")',
            "    for i, j, k in T.grid(64, 64, 64):",
            f'        with T.block("Y{n}"):',
            '            vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
            "            with T.init():",
            f"                Y{n}[vi, vj] = T.float32(0)",
            f"            Y{n}[vi, vj] = Y{n}[vi, vj] + A[vi, vk] * A[vk, vj] * T.float32({n})",
            "    for i, j in T.grid(64, 64):",
            f'        with T.block("C{n}"):',
            "            vi, vj = T.axis.remap('SS', [i, j])",
            f"            C[vi, vj] = T.max(Y{n}[vi, vj], T.float32(0))  # unit {n}",
        ]
    return "\n".join(lines) + "\n"


def test_a_large_program_parses_to_the_right_ir():
    units = 400  # ~4,400 lines, ~200 kB
    text = _large_program(units)
    assert_same_tree(get_parser().parse(text), fast_parse.parse_tree(text))
    func = parse(text, "big.tir")
    script = func.script()
    for n in (0, units // 2, units - 1):
        assert f'T.block("Y{n}")' in script and f'T.block("C{n}")' in script
        assert f"T.float32({n})" in script or f"T.float32({n}.0)" in script
    assert script.count("T.block(") == 2 * units
    assert structural_equal(func, parse(script))


def test_a_large_program_reports_errors_at_the_right_line():
    lines = _large_program(300).splitlines()
    lines[2500] = lines[2500].replace("T.grid", "T.gird")
    with pytest.raises(TIRSyntaxError) as info:
        parse("\n".join(lines) + "\n", "big.tir")
    assert info.value.line == 2501


@pytest.mark.parametrize(
    "text",
    [
        'x = "é" + ü\n',
        "ünï = f(a, b)  # ç\ny = ünï\n",
        "x = 'a\\'b'\n",
        "x = b'x' r'y'\n",
        "if x:\n\ty = 1\n        z = 2\n",
        "x = (1 +\n  2)\n",
        "x = [\n]\n",
        "x = 1 \\\n  + 2\n",
        "\n\n# only a comment\n\nx = 1\n",
    ],
)
def test_odd_spellings_give_larks_tree(text):
    assert_same_tree(get_parser().parse(text), fast_parse.parse_tree(text))

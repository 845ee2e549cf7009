"""The printed IR and every source span of parsed programs, against reviewed golden
text (tests/golden/test_parser_golden_spans/).

The parser's speed work (the fast lexer's token offsets and bisected line numbers,
statement trees let go as soon as they are built, the flat scope table) must not move
a position or change a result; these goldens were written by the parser before that
work and pin both. The programs: samples of every statement kind, a file written with
odd spellings (continued lines, brackets over lines, multi-line strings, comments, a
docstring, ``;``), and blocks nested deeply.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

import tilelang
from tilelang.parser import fast_parse

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = {
    "mm_relu": ROOT / "samples" / "mm_relu.tir",
    "loop_kinds": ROOT / "samples" / "loop_kinds.tir",
    "strided_let": ROOT / "samples" / "strided_let.tir",
    "window_sum_gpu": ROOT / "samples" / "window_sum_gpu.tir",
    "matmul_blockized": ROOT / "samples" / "matmul_blockized.tir",
    "tmm16_intrin": ROOT / "samples" / "tmm16_intrin.tir",
    "mlp": ROOT / "samples" / "mlp.tir",
    "odd_spellings": ROOT / "tests" / "data" / "odd_spellings.tir",
}


def _nested(depth: int) -> str:
    lines = ["@T.prim_func", 'def nested(A: T.Buffer((1,), "float32")):']
    for level in range(depth):
        lines.append("    " * (level + 1) + f'with T.block("b{level}"):')
    lines.append("    " * (depth + 1) + "A[0] = T.float32(1)")
    return "\n".join(lines) + "\n"


def span_listing(node) -> str:
    """One line per node that has a span, in a fixed depth-first order of the attrs
    fields (each node once): its class and ``line:column-end_line:end_column``."""
    lines, seen, stack = [], set(), [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
            continue
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
            continue
        if not attrs.has(type(item)) or id(item) in seen:
            continue
        seen.add(id(item))
        span = getattr(item, "span", None)
        if span is not None:
            lines.append(
                f"{type(item).__name__} {span.line}:{span.column}-{span.end_line}:{span.end_column}"
            )
        fields = [f.name for f in attrs.fields(type(item)) if f.name != "span"]
        stack.extend(getattr(item, name) for name in reversed(fields))
    return "\n".join(lines)


def _text(name: str) -> str:
    return _nested(40) if name == "nested" else PROGRAMS[name].read_text()


@pytest.mark.parametrize("name", [*PROGRAMS, "nested"])
def test_printed_ir_and_spans_are_the_reviewed_ones(name, golden):
    text = _text(name)
    fast_parse.parse_tree(text if text.endswith("\n") else text + "\n")  # not declined
    module = tilelang.parse(text, f"{name}.tir")
    golden(module.script() + "\n# spans\n" + span_listing(module), name)

"""Every node the parser builds from source knows where it came from.

Lark's ``propagate_positions`` is off for speed (positions are read from tokens on
demand); these tests walk whole parsed programs and check that every statement and
every expression carries a span inside the source. The one exception is ``IntImm``:
an integer literal stays a Python number until an operation gives it a type (TVM's
literal typing), and the constant made then has no position of its own; the
expression it is part of has one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tilelang
from tilelang.ir import (
    Block,
    BlockRealize,
    BufferLoad,
    BufferStore,
    IntImm,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Stmt,
    Var,
    post_order_visit,
)

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.tir"))


def _nodes(func: PrimFunc) -> list:
    found = []
    post_order_visit(func.body, found.append)
    return found


def _inside(span, lines: list[str]) -> bool:
    return 1 <= span.line <= len(lines) and 1 <= span.column <= len(lines[span.line - 1]) + 1


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_every_parsed_node_has_a_span(path):
    lines = path.read_text().splitlines()
    mod = tilelang.parse_file(path)
    funcs = [f for f in mod.functions.values() if isinstance(f, PrimFunc)]
    assert funcs
    for func in funcs:
        nodes = _nodes(func)
        missing = [
            n
            for n in nodes
            if isinstance(n, (Stmt, PrimExpr)) and not isinstance(n, IntImm) and n.span is None
        ]
        assert missing == [], f"{len(missing)} nodes without a span, first: {missing[0]!r}"
        for node in nodes:
            span = getattr(node, "span", None)
            if span is not None:
                assert span.source == str(path)
                assert _inside(span, lines), (node, span)
        # named explicitly: statements, loads and variable uses
        for node in nodes:
            if isinstance(node, (Stmt, BufferLoad, Var)):
                assert node.span is not None


def test_statement_spans_point_at_their_source_lines():
    source = (
        "@T.prim_func\n"
        'def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):\n'
        "    for i in range(8):\n"
        "        with T.block('b'):\n"
        "            vi = T.axis.spatial(8, i)\n"
        "            B[vi] = A[vi] * T.float32(2)\n"
        '    with T.allocate([4], "float32", "local") as t:\n'
        "        B[0] = B[0] + T.float32(1)\n"
        "    B[1] = T.float32(0)\n"
    )
    func = tilelang.parse(source)["f"]
    root = func.body
    # the implicit root block is located at the function it stands for
    assert isinstance(root, BlockRealize) and root.block.name_hint == "root"
    assert root.span.line == 1 or root.span.line == 2
    assert isinstance(root.block.body, SeqStmt)
    seq = root.block.body
    assert (seq.span.line, seq.span.end_line) == (3, 9)
    loop, allocate, last = seq.seq
    assert (loop.span.line, loop.span.column) == (3, 5)
    assert (allocate.span.line, allocate.span.column) == (7, 5)
    assert (last.span.line, last.span.column) == (9, 5)
    realize = loop.body
    assert isinstance(realize.block, Block) and realize.span.line == 4
    store = realize.block.body
    assert isinstance(store, BufferStore) and (store.span.line, store.span.column) == (6, 13)
    load = store.value.a
    assert isinstance(load, BufferLoad) and (load.span.line, load.span.column) == (6, 21)
    # a variable use is the defining Var object: it carries its definition's span
    assert load.indices[0].span.line == 5
    # regions the parser infers are located at their block
    (read,) = realize.block.reads
    assert read.region[0].min.span is not None


def test_with_statements_start_at_the_keyword():
    source = (
        "@T.prim_func\n"
        'def f(A: T.Buffer((8,), "float32")):\n'
        "    with T.let(x, 2):\n"
        "        A[x] = T.float32(1)\n"
        '    with T.Assert(A[0] < T.float32(1), "small"):\n'
        "        A[1] = T.float32(1)\n"
        '    with T.decl_buffer((4,), "float32") as B:\n'
        "        B[0] = A[0]\n"
        "    A[2] = T.float32(0)\n"
    )
    let, assertion, allocate, _ = tilelang.parse(source)["f"].body.seq
    for stmt, line in ((let, 3), (assertion, 5), (allocate, 7)):
        assert (stmt.span.line, stmt.span.column) == (line, 5)

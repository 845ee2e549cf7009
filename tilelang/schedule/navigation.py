"""Queries that hand out handles (loops of a block, child blocks, producers and
consumers) and annotations on blocks or loops."""

from __future__ import annotations

import attrs

from tilelang.analysis import get_block_access_region
from tilelang.arith import const_value
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.schedule.common import block_subject, find_block, find_loop, loop_subject
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.loop_transformation import annotate_loop, unannotate_loop
from tilelang.schedule.state import Tree, rewrite, stmt_children

__all__ = [
    "find_block",
    "find_loop",
    "get_loops",
    "get_child_blocks",
    "get_producers",
    "get_consumers",
    "annotate",
    "unannotate",
    "loop_extent",
    "block_buffers",
]


def get_loops(func, name: str) -> list[E.Var]:
    """Loop variables above block ``name`` up to its enclosing block, outermost first."""
    tree = Tree(func)
    realize = find_block(tree, name, "get_loops")
    return [loop.loop_var for loop in tree.loops_above(realize)]


def get_child_blocks(func, target) -> list[str]:
    """Names of the blocks directly under a block (by name) or a loop (by variable)."""
    tree = Tree(func)
    if isinstance(target, E.Var):
        start = find_loop(tree, target, "get_child_blocks").body
    else:
        start = find_block(tree, target, "get_child_blocks").block.body
    names, stack = [], [start]
    while stack:
        node = stack.pop()
        if isinstance(node, S.BlockRealize):
            names.append(node.block.name_hint)
            continue
        stack.extend(reversed(stmt_children(node)))
    return names


def block_buffers(block: S.Block) -> tuple[set, set]:
    """The buffers a block reads and writes (by identity)."""
    reads, writes = get_block_access_region(block)
    return {r.buffer for r in reads}, {w.buffer for w in writes}


def _siblings(tree: Tree, realize):
    scope = tree.scope_realize(realize)
    return [r for r in tree.order if r is not realize and tree.scope_realize(r) is scope]


def get_producers(func, name: str) -> list[str]:
    """Blocks of the same scope, before ``name``, writing a buffer it reads."""
    tree = Tree(func)
    realize = find_block(tree, name, "get_producers")
    reads, _ = block_buffers(realize.block)
    position = tree.order.index(realize)
    return [
        r.block.name_hint
        for r in _siblings(tree, realize)
        if tree.order.index(r) < position and block_buffers(r.block)[1] & reads
    ]


def get_consumers(func, name: str) -> list[str]:
    """Blocks of the same scope, after ``name``, reading a buffer it writes."""
    tree = Tree(func)
    realize = find_block(tree, name, "get_consumers")
    _, writes = block_buffers(realize.block)
    position = tree.order.index(realize)
    return [
        r.block.name_hint
        for r in _siblings(tree, realize)
        if tree.order.index(r) > position and block_buffers(r.block)[0] & writes
    ]


def _check_annotation(primitive, subject, key, value):
    if not isinstance(key, str):
        raise schedule_error(primitive, subject, f"the annotation key {key!r} is not a string")
    if not _annotation_value(value):
        raise schedule_error(
            primitive,
            subject,
            "annotation values are numbers, strings, or lists and string-keyed dicts of "
            f"them, not {value!r}",
        )


def _annotation_value(value) -> bool:
    """Whether ``value`` is what TVM keeps in an annotation map (and TVMScript prints):
    a number, a string, or a list / string-keyed dict of such values."""
    if isinstance(value, (int, float, str, bool)):
        return True
    if isinstance(value, (list, tuple)):  # lists were always taken as they come
        return True
    if isinstance(value, dict):
        return all(isinstance(k, str) and _annotation_value(v) for k, v in value.items())
    return False


def annotate(func, target, key: str, value):
    """A block (by name) or loop (by variable) with ``annotations[key] = value``."""
    if isinstance(target, E.Var):
        _check_annotation("annotate", f"loop {target.name}", key, value)
        return annotate_loop(func, target, key, value)
    tree = Tree(func)
    realize = find_block(tree, target, "annotate")
    _check_annotation("annotate", block_subject(realize), key, value)
    block = attrs.evolve(realize.block, annotations={**realize.block.annotations, key: value})
    return rewrite(func, {id(realize.block): block})


def unannotate(func, target, key: str):
    """A block or loop without its annotation ``key``."""
    if isinstance(target, E.Var):
        return unannotate_loop(func, target, key)
    tree = Tree(func)
    realize = find_block(tree, target, "unannotate")
    if key not in realize.block.annotations:
        raise schedule_error("unannotate", block_subject(realize), f"has no annotation {key!r}")
    kept = {k: v for k, v in realize.block.annotations.items() if k != key}
    return rewrite(func, {id(realize.block): attrs.evolve(realize.block, annotations=kept)})


def loop_extent(func, var, primitive: str) -> int:
    """The constant extent of a loop, or a ScheduleError."""
    loop = find_loop(Tree(func), var, primitive)
    extent = const_value(loop.extent)
    if extent is None:
        raise schedule_error(primitive, loop_subject(loop), "needs a constant loop extent", loop)
    return extent

"""add_unit_loop and unsafe_hide_buffer_access: two small rewrites of one statement.

``add_unit_loop`` puts a loop of extent 1 (variable ``u``) right above a block or a
loop, e.g. so that a block outside any loop gets one to compute_at into::

    with T.block("C"): ...            for u in range(1):
                                          with T.block("C"): ...

``unsafe_hide_buffer_access`` drops regions from a block's reads or writes (not from
its body), e.g. an index buffer a sparse kernel reads, which would otherwise stop
tensorize from matching. Later dependence analysis no longer sees the hidden
accesses: the caller takes responsibility, hence the name.
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.schedule.common import block_subject, find_block, find_loop
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree, rewrite, root_block_realize


def add_unit_loop(func, target):
    """Returns ``(new_func, new loop variable)``; ``target`` is a block name or a loop
    variable."""
    tree = Tree(func)
    if isinstance(target, E.Var):
        node = find_loop(tree, target, "add_unit_loop")
    else:
        node = find_block(tree, target, "add_unit_loop")
        if node is root_block_realize(func):
            raise schedule_error(
                "add_unit_loop", block_subject(node), "cannot add a loop above the root block"
            )
    var = E.Var("u", "int32")
    loop = S.For(var, E.IntImm("int32", 0), E.IntImm("int32", 1), S.ForKind.SERIAL, node)
    return rewrite(func, {id(node): loop}), var


def unsafe_hide_buffer_access(func, name, buf_type, buf_index_array):
    """Returns the new function without the listed read (or write) regions."""
    tree = Tree(func)
    realize = find_block(tree, name, "unsafe_hide_buffer_access")
    block, subject = realize.block, block_subject(realize)
    if buf_type not in ("read", "write"):
        raise schedule_error(
            "unsafe_hide_buffer_access", subject,
            f'buf_type must be "read" or "write", not {buf_type!r}',
        )  # fmt: skip
    regions = block.reads if buf_type == "read" else block.writes
    hidden = set()
    for index in buf_index_array:
        if not isinstance(index, int) or not 0 <= index < len(regions):
            raise schedule_error(
                "unsafe_hide_buffer_access", subject,
                f"{buf_type} buffer index {index!r} is out of range; the block {buf_type}s "
                f"{[r.buffer.name for r in regions]}",
            )  # fmt: skip
        hidden.add(index)
    kept = tuple(r for i, r in enumerate(regions) if i not in hidden)
    new_block = attrs.evolve(block, **{"reads" if buf_type == "read" else "writes": kept})
    return rewrite(func, {id(block): new_block})

"""``break`` and ``continue``: TVM's ``T.break_loop()`` / ``T.continue_loop()`` calls,
evaluated as statements, leave or restart the innermost enclosing loop. A loop they
target is *irregular*: splitting, fusing, reordering or running it other than serially
would change what they leave, so such loops are kept as written."""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir import stmt as S

JUMP_OPS = ("break_loop", "continue_loop")


def is_jump(stmt) -> bool:
    """``stmt`` is a ``break`` or ``continue``."""
    return (
        isinstance(stmt, S.Evaluate)
        and isinstance(stmt.value, E.Call)
        and stmt.value.op in JUMP_OPS
    )


def is_irregular(loop) -> bool:
    """A ``break`` or ``continue`` of ``loop``'s body targets ``loop`` itself (one not
    inside a nested loop or block)."""
    pending = [loop.body]
    while pending:
        node = pending.pop()
        if is_jump(node):
            return True
        if isinstance(node, (S.For, S.While, S.Block, S.BlockRealize)) or not isinstance(
            node, S.Stmt
        ):
            continue
        for value in _child_stmts(node):
            pending.append(value)
    return False


def _child_stmts(node):
    for name in ("seq", "body", "then_case", "else_case"):
        value = getattr(node, name, None)
        if isinstance(value, tuple):
            yield from value
        elif isinstance(value, S.Stmt):
            yield value

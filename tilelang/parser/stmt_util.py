"""Small shape tests on parse trees shared by the statement builders."""

from __future__ import annotations

from lark import Tree


def is_tuple_target(tree) -> bool:
    """``a, b`` / ``(a, b)`` / ``[a, b]`` as an assignment or loop target."""
    return isinstance(tree, Tree) and (
        tree.data in ("tuple", "list", "exprlist")
        or (tree.data == "testlist" and len(tree.children) > 1)
    )

"""Source positions of parse-tree nodes, found on demand.

Lark's ``propagate_positions=True`` stores a position on every tree node as it is
built; on this grammar that triples the parse time (measured: 1.8 s instead of 0.6 s
for a 4,000-line file). Positions are only needed for the nodes that get a span or an
error, so they are read here from the node's first and last tokens instead.
"""

from __future__ import annotations

from lark import Token, Tree

_UNSET = object()
#: walks longer than this memoise their answer on the nodes they passed
_MEMO_DEPTH = 16


def _edge_token(node, order, memo: str) -> Token | None:
    """The token reached from ``node`` by always stepping into the first child that
    ``order(children)`` yields (skipping absent optional children), or None.

    A long walk memoises its answer on every tree node of its path (attribute
    ``memo``): the end of a statement is the end of its innermost body, so without it
    a nest of depth d would walk d nodes for each of its d statements."""
    path = []
    while isinstance(node, Tree):
        known = getattr(node, memo, _UNSET)
        if known is not _UNSET:
            node = known
            break
        path.append(node)
        for child in order(node.children):
            if child is not None:
                node = child
                break
        else:
            node = None
            break
    found = node if isinstance(node, Token) else None
    if len(path) > _MEMO_DEPTH:  # short walks stay cheap, and trees keep no __dict__
        for tree in path:
            setattr(tree, memo, found)
    return found


def first_token(node) -> Token | None:
    """The leftmost token under ``node`` (a Tree or a Token), or None."""
    # most walks are a few steps: taken directly, without the memo's bookkeeping
    walked = node
    for _ in range(_MEMO_DEPTH):
        if type(walked) is not Tree:
            return walked if isinstance(walked, Token) else None
        for child in walked.children:
            if child is not None:
                walked = child
                break
        else:
            return None
    return _edge_token(node, iter, "_tl_first_token")


def last_token(node) -> Token | None:
    """The rightmost token under ``node``, or None."""
    walked = node
    for _ in range(_MEMO_DEPTH):
        if type(walked) is not Tree:
            return walked if isinstance(walked, Token) else None
        for child in reversed(walked.children):
            if child is not None:
                walked = child
                break
        else:
            return None
    return _edge_token(node, reversed, "_tl_last_token")


def bounds(node) -> tuple | None:
    """``(line, column, end_line, end_column)`` of ``node`` (1-based, end exclusive)."""
    if type(node) is Token:  # a name, a literal: asked for very often
        if node.line is None:
            return None
        return node.line, node.column, node.end_line, node.end_column
    # first_token and last_token, inlined for the usual short walks (spans are made
    # for most nodes the builder creates); the edge child is usually present
    first = node
    steps = 0
    while type(first) is Tree:
        if steps == _MEMO_DEPTH:
            first = _edge_token(node, iter, "_tl_first_token")
            break
        steps += 1
        children = first.children
        child = children[0] if children else None
        if child is None:
            for child in children:
                if child is not None:
                    break
            else:
                return None
        first = child
    if not isinstance(first, Token) or first.line is None:
        return None
    last = node
    steps = 0
    while type(last) is Tree:
        if steps == _MEMO_DEPTH:
            last = _edge_token(node, reversed, "_tl_last_token")
            break
        steps += 1
        children = last.children
        child = children[-1] if children else None
        if child is None:
            for child in reversed(children):
                if child is not None:
                    break
            else:
                child = None
        last = child
    if not isinstance(last, Token) or last.end_line is None:
        last = first
    return first.line, first.column, last.end_line, last.end_column


def bounds_between(first_node, last_node) -> tuple | None:
    """The bounds from the start of ``first_node`` to the end of ``last_node``."""
    start, end = bounds(first_node), bounds(last_node)
    if start is None:
        return None
    if end is None:
        return start
    return start[0], start[1], end[2], end[3]


def compact(node) -> None:
    """Lets a built statement's tree go, keeping its bounds: its children become its
    first and last tokens, so positions found later through it (the span of the
    statement around it, an error's fallback location) are what they were, while the
    rest of its subtree is freed as the build goes (the tree of a 10 MB file is a
    gigabyte; the IR it becomes can reuse that memory)."""
    if type(node) is not Tree:
        return
    first, last = first_token(node), last_token(node)
    if first is None or last is None:
        return
    node.children = [first] if last is first else [first, last]

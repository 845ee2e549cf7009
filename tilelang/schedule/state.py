"""Handles and navigation: the random variables a schedule hands out, and a view of
one function's statement tree with parent links.

A handle never holds an IR node. A :class:`BlockRV` resolves to a block *name* and a
:class:`LoopRV` to a loop *variable*, both looked up again in the current IR each
time, so handles stay valid across primitives (a primitive that renames a block
updates the name its handle resolves to).
"""

from __future__ import annotations

import itertools

import attrs

from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator
from tilelang.ir.node import child_fields

_ids = itertools.count()


class _RV:
    """Base of the random variables (handles) a schedule hands out."""

    __slots__ = ("uid",)
    prefix = "v"

    def __init__(self):
        self.uid = next(_ids)

    def __repr__(self) -> str:
        return f"{type(self).__name__}#{self.uid}"

    def same_as(self, other) -> bool:
        """Identity, as TVM spells it."""
        return self is other


class BlockRV(_RV):
    """A handle to a block (TVM's ``BlockRV``)."""

    __slots__ = ()
    prefix = "b"


#: TVM 0.27 calls blocks ``SBlock``; the handle is the same
SBlockRV = BlockRV


class LoopRV(_RV):
    """A handle to a loop (TVM's ``LoopRV``)."""

    __slots__ = ()
    prefix = "l"


class ExprRV(_RV):
    """A sampled integer (TVM's ``ExprRV``); ``sch.get(rv)`` gives its value."""

    __slots__ = ()
    prefix = "v"


def stmt_children(node) -> list:
    """The statements directly under ``node`` (bodies, sequences, a block's init)."""
    out = []
    for name in child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, S.Stmt):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, S.Stmt))
    return out


class Tree:
    """Parent links over a function's statements (keyed by node identity)."""

    def __init__(self, func):
        self.func = func
        self.parent: dict[int, S.Stmt] = {}
        self.realizes: dict[str, list] = {}
        self.loops: dict[int, S.For] = {}
        self.order: list = []  # every BlockRealize in program order
        stack = [func.body]
        while stack:
            node = stack.pop()
            if isinstance(node, S.BlockRealize):
                self.realizes.setdefault(node.block.name_hint, []).append(node)
                self.order.append(node)
            elif isinstance(node, S.For):
                self.loops[id(node.loop_var)] = node
            children = stmt_children(node)
            for kid in children:
                self.parent[id(kid)] = node
            stack.extend(reversed(children))

    def parent_of(self, node):
        return self.parent.get(id(node))

    def ancestors(self, node) -> list:
        """Ancestors of ``node``, outermost first."""
        out = []
        node = self.parent_of(node)
        while node is not None:
            out.append(node)
            node = self.parent_of(node)
        out.reverse()
        return out

    def scope_realize(self, node):
        """The BlockRealize of the innermost block enclosing ``node`` (None at top)."""
        for anc in reversed(self.ancestors(node)):
            if isinstance(anc, S.BlockRealize):
                return anc
        return None

    def loops_above(self, node) -> list:
        """The loops between the enclosing block and ``node``, outermost first."""
        out = []
        for anc in reversed(self.ancestors(node)):
            if isinstance(anc, (S.BlockRealize, S.Block)):
                break
            if isinstance(anc, S.For):
                out.append(anc)
        out.reverse()
        return out

    def is_ancestor(self, outer, inner) -> bool:
        return any(a is outer for a in self.ancestors(inner))

    def blocks_under(self, node) -> list:
        """BlockRealizes inside ``node`` (any depth), in program order."""
        return [r for r in self.order if r is node or self.is_ancestor(node, r)]

    def removable_root(self, node):
        """The outermost statement that holds only ``node`` (its private loops)."""
        top = node
        parent = self.parent_of(top)
        while isinstance(parent, S.For):
            top = parent
            parent = self.parent_of(top)
        return top


#: marks a statement for removal in :func:`rewrite`
REMOVE = object()


class _Rewrite(StmtExprMutator):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit(self, node):
        if not isinstance(node, S.Stmt):
            return node  # expressions and regions are never the target of a rewrite
        new = self.mapping.get(id(node))
        if new is not None:
            return new
        result = super().visit(node)
        if isinstance(result, S.SeqStmt) and any(s is REMOVE for s in result.seq):
            return S.seq_stmt(*(s for s in result.seq if s is not REMOVE))
        return result


def rewrite(func, mapping: dict):
    """``func`` with statements replaced: ``mapping[id(old)] = new`` (or :data:`REMOVE`).

    A removed statement that is not inside a sequence becomes ``T.evaluate(0)``.
    """
    body = _Rewrite(mapping).visit(func.body)
    if body is REMOVE:
        body = S.seq_stmt()
    body = _drop_marks(body)
    return func.with_body(body)


class _DropMarks(StmtExprMutator):
    def visit(self, node):
        return node if not isinstance(node, S.Stmt) else super().visit(node)

    def generic_visit(self, node):
        node = super().generic_visit(node)
        changes = {}
        for name in child_fields(type(node)):
            if getattr(node, name) is REMOVE:
                changes[name] = S.seq_stmt()
        return attrs.evolve(node, **changes) if changes else node


def _drop_marks(body):
    return _DropMarks().visit(body)


def with_body(node, body):
    """``node`` (a For or Block) with a new body, sharing it when unchanged."""
    return node if node.body is body else attrs.evolve(node, body=body)


def root_block_realize(func):
    """The function's root BlockRealize, or None when its body has none."""
    body = func.body
    if isinstance(body, S.BlockRealize) and body.block.name_hint == "root":
        return body
    return None

"""Functors, visitors and mutators over the IR.

``visit(node)`` dispatches on the node's class to ``visit_<name>`` (``visit_add``,
``visit_for``, ``visit_buffer_load``...; the name is the class name in snake case),
through a table built once per functor class. A missing method falls back to the
method of the node's base class (``visit_binary_op`` handles every arithmetic node a
subclass does not handle itself), then to ``generic_visit``.

The default traversal is derived from the node's fields (see :mod:`tilelang.ir.node`):
visitors walk ``child`` fields; mutators rebuild a node only when a child changed, and
otherwise return **the very same node**, so ``new is old`` means "nothing changed".
Buffers met in ``ref`` fields go through ``visit_buffer_ref`` and buffers or variables
in ``define`` fields through ``visit_buffer_def`` / ``visit_var_def``, so one override
remaps a buffer everywhere it is used.

Example: a pass that doubles every constant::

    class Double(StmtExprMutator):
        def visit_int_imm(self, op):
            return IntImm(op.dtype, op.value * 2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tilelang.ir.buffer import Buffer
from tilelang.ir.expr import Var
from tilelang.ir.node import TRAVERSAL_DEPTH, Node, deep_recursion, node_fields
from tilelang.ir.stmt import SeqStmt, seq_stmt


def _walk_fields(cls: type) -> tuple[tuple[str, str], ...]:
    cached = _WALK_FIELDS.get(cls)  # asked for every node of every walk: made once per class
    if cached is None:
        cached = _WALK_FIELDS[cls] = tuple(
            (name, role) for name, role in node_fields(cls) if role in ("child", "ref", "define")
        )
    return cached


_WALK_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


class NodeFunctor:
    """Dispatch on node class to ``visit_<name>`` methods."""

    _tables: dict[type, dict[type, Callable]] = {}

    def visit(self, node: Node) -> Any:
        """Handle ``node`` with the method for its class."""
        table = NodeFunctor._tables.get(type(self))
        if table is None:
            table = NodeFunctor._tables[type(self)] = {}
        method = table.get(type(node))
        if method is None:
            method = table[type(node)] = self._resolve(type(node))
        if TRAVERSAL_DEPTH[0]:  # in_deep_traversal(), inlined: every node passes here
            return method(self, node)
        with deep_recursion():
            return method(self, node)

    # TVM's spellings of the same entry point
    def visit_expr(self, expr):
        return self.visit(expr)

    def visit_stmt(self, stmt):
        return self.visit(stmt)

    def __call__(self, node):
        return self.visit(node)

    @classmethod
    def _resolve(cls, node_cls: type) -> Callable:
        if not isinstance(node_cls, type) or not issubclass(node_cls, Node):
            raise TypeError(f"{cls.__name__} cannot visit a {node_cls.__name__}")
        for klass in node_cls.__mro__:
            if klass.__dict__.get("is_root") or not issubclass(klass, Node):
                break  # visit_expr / visit_stmt are entry points, not fallbacks
            method = getattr(cls, "visit_" + klass.visit_name, None)
            if method is not None:
                return method
        return cls.generic_visit

    def generic_visit(self, node: Node) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} has no visit_{type(node).visit_name} for {type(node).__name__}"
        )


# Functors that only say which node kinds they are meant for; dispatch is the same.
ExprFunctor = NodeFunctor
StmtFunctor = NodeFunctor


class StmtExprVisitor(NodeFunctor):
    """Walks every child of every node once, in field order."""

    def generic_visit(self, node: Node) -> None:
        for name, role in _walk_fields(type(node)):
            item = getattr(node, name)
            if role == "child":
                self._visit_children(item)
            elif role == "ref":
                self.visit_buffer_ref(item)
            else:
                self._visit_defs(item)

    def _visit_children(self, item) -> None:
        if isinstance(item, Node):
            self.visit(item)
        elif isinstance(item, (tuple, list)):
            for element in item:
                self._visit_children(element)
        elif isinstance(item, dict):
            for element in item.values():
                self._visit_children(element)

    def _visit_defs(self, item) -> None:
        if isinstance(item, Buffer):
            self.visit_buffer_def(item)
        elif isinstance(item, Var):
            self.visit_var_def(item)
        elif isinstance(item, (tuple, list)):
            for element in item:
                self._visit_defs(element)
        elif isinstance(item, dict):
            for element in item.values():
                self._visit_defs(element)

    def visit_buffer_ref(self, buffer: Buffer) -> None:
        """Called for each buffer use (loads, stores, regions); does nothing by default."""

    def visit_buffer_def(self, buffer: Buffer) -> None:
        """Called where a buffer is defined; does nothing by default."""

    def visit_var_def(self, var: Var) -> None:
        """Called where a variable is defined (loop variables, lets); nothing by default."""


ExprVisitor = StmtExprVisitor
StmtVisitor = StmtExprVisitor


class StmtExprMutator(NodeFunctor):
    """Rebuilds nodes whose children changed and returns unchanged nodes as they are."""

    def generic_visit(self, node: Node) -> Node:
        changes = None
        for name, role in _walk_fields(type(node)):
            old = getattr(node, name)
            if role == "child":
                new = self._mutate_children(old)
            elif role == "ref":
                new = self.visit_buffer_ref(old)
            else:
                new = self._mutate_defs(old)
            if new is not old:
                if changes is None:
                    changes = {}
                changes[name] = new
        return node if changes is None else attrs.evolve(node, **changes)

    def _mutate_children(self, item):
        if isinstance(item, Node):
            return self.visit(item)
        if isinstance(item, tuple):
            return _same_or_new(item, tuple(self._mutate_children(x) for x in item))
        if isinstance(item, dict):
            new = {key: self._mutate_children(x) for key, x in item.items()}
            return item if all(new[k] is item[k] for k in item) else new
        return item

    def _mutate_defs(self, item):
        if isinstance(item, Buffer):
            return self.visit_buffer_def(item)
        if isinstance(item, Var):
            return self.visit_var_def(item)
        if isinstance(item, tuple):
            return _same_or_new(item, tuple(self._mutate_defs(x) for x in item))
        if isinstance(item, dict):
            new = {self._mutate_defs(k): self._mutate_defs(x) for k, x in item.items()}
            same = len(new) == len(item) and all(
                a is b and new[b] is item[a] for a, b in zip(item, new)
            )
            return item if same else new
        return item

    def visit_seq_stmt(self, op: SeqStmt):
        """Mutates each statement; nested sequences in the result are flattened."""
        new = self.generic_visit(op)
        if new is op:
            return op
        return seq_stmt(*new.seq, span=op.span)

    def visit_buffer_ref(self, buffer: Buffer) -> Buffer:
        """Maps a buffer use; identity by default. Override to remap buffers."""
        return buffer

    def visit_buffer_def(self, buffer: Buffer) -> Buffer:
        """Maps a buffer definition; identity by default."""
        return buffer

    def visit_var_def(self, var: Var) -> Var:
        """Maps a variable definition; identity by default."""
        return var


ExprMutator = StmtExprMutator
StmtMutator = StmtExprMutator


def _same_or_new(old: tuple, new: tuple) -> tuple:
    return old if all(a is b for a, b in zip(old, new)) else new


class _PostOrder(StmtExprVisitor):
    def __init__(self, callback):
        self.callback = callback

    def visit(self, node):
        super().visit(node)
        self.callback(node)


def post_order_visit(node: Node, callback: Callable[[Node], None]) -> None:
    """Calls ``callback`` on every node under ``node`` (children before parents)."""
    _PostOrder(callback).visit(node)


class _Substitute(StmtExprMutator):
    def __init__(self, lookup):
        self.lookup = lookup

    def visit_var(self, var):
        replacement = self.lookup(var)
        return var if replacement is None else replacement


def substitute(node: Node, vmap) -> Node:
    """``node`` with variables replaced: ``vmap`` maps Var -> expression, or is a
    function returning the replacement (or None to keep the variable)."""
    lookup = vmap if callable(vmap) else vmap.get
    return _Substitute(lookup).visit(node)

"""Variable usage over the IR: the variables a node uses, whether it uses some, and
its free (undefined) variables. Pure IR: no arithmetic, so :mod:`tilelang.arith`
may use it."""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir.buffer import Buffer
from tilelang.ir.functor import StmtExprVisitor
from tilelang.ir.node import Node

__all__ = ["collect_vars", "uses_var", "uses_any_var", "undefined_vars"]


class _VarCollector(StmtExprVisitor):
    def __init__(self, stop_at=()):
        self.found: list[E.Var] = []
        self.seen: set[int] = set()
        self.stop_at = {id(v) for v in stop_at}

    def visit_var(self, var: E.Var):
        if id(var) not in self.seen:
            self.seen.add(id(var))
            self.found.append(var)
            if id(var) in self.stop_at:
                raise _Found

    def visit_buffer_ref(self, buffer: Buffer):
        # A buffer access uses the buffer's data pointer.
        self.visit_var(buffer.data)


class _Found(Exception):
    pass


def collect_vars(node: Node) -> list[E.Var]:
    """The variables ``node`` uses (not those it only defines), each once, in order of
    first use. A buffer access counts as a use of the buffer's ``data`` variable."""
    collector = _VarCollector()
    collector.visit(node)
    return collector.found


def uses_var(node: Node, var: E.Var) -> bool:
    """True when ``node`` uses ``var`` (stops at the first use)."""
    return uses_any_var(node, (var,))


def uses_any_var(node: Node, variables) -> bool:
    """True when ``node`` uses one of ``variables`` (compared by identity; stops at the
    first use)."""
    if not variables:
        return False
    try:
        _VarCollector(stop_at=variables).visit(node)
    except _Found:
        return True
    return False


class _Undefined(StmtExprVisitor):
    def __init__(self):
        self.defined: set[int] = set()
        self.undefined: list[E.Var] = []
        self.seen: set[int] = set()

    def use(self, var: E.Var):
        if id(var) not in self.defined and id(var) not in self.seen:
            self.seen.add(id(var))
            self.undefined.append(var)

    def visit_var(self, var):
        self.use(var)

    def visit_var_def(self, var):
        self.defined.add(id(var))

    def visit_buffer_def(self, buffer):
        self.defined.add(id(buffer.data))
        self.defined.add(id(buffer))
        for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            self.visit(part)

    def visit_buffer_ref(self, buffer):
        if id(buffer) in self.defined:
            return
        self.use(buffer.data)
        for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            self.visit(part)

    def visit_prim_func(self, func):
        # A function defines its parameters and the symbolic sizes its buffers match.
        for param in func.params:
            self.defined.add(id(param))
        for buffer in func.buffer_map.values():
            self.defined.add(id(buffer.data))
            self.defined.add(id(buffer))
            for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
                if isinstance(part, E.Var):
                    self.defined.add(id(part))
        for buffer in func.buffer_map.values():
            for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
                self.visit(part)
        self.visit(func.body)


def undefined_vars(node: Node) -> list[E.Var]:
    """Variables used in ``node`` but not defined inside it (free variables), in order
    of first use; a function's parameters and buffer-shape variables count as defined."""
    visitor = _Undefined()
    visitor.visit(node)
    return visitor.undefined

"""Which buffers' element offsets print implicitly, as TVM prints them.

A buffer declared with an ``offset_factor`` and no ``elem_offset`` gets a fresh
offset variable (TVM's script builder; :func:`tilelang.ir.buffer.decl_buffer`). TVM's
printer gives such a variable no declaration of its own: the buffer's declaration
defines it (``A_1 = T.match_buffer(A[vi, 0:16], (16,), offset_factor=1)``, always with
the factor) and every use prints as ``A_1.elem_offset``. The text parses back to a
buffer with a fresh offset variable in the same places.

That is only right where the declaration does define it: the variable is no
parameter, no statement binds it, no other buffer's shape, strides or offset
mentions it, it has the type the parser gives a fresh one, no function attribute
names it (attributes print first), and every use lies in the scope of the
declaring buffer (the function for parameters and root allocations, the block for
a block's buffers, the body of a ``T.decl_buffer``).
"""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir.buffer import Buffer
from tilelang.ir.dtype import INT32
from tilelang.ir.functor import StmtExprVisitor
from tilelang.ir.var_usage import collect_vars


def _fresh_offset_dtype(buffer: Buffer):
    """The type the parser gives a fresh offset variable: the first extent's."""
    return buffer.shape[0].dtype if buffer.shape else INT32


class _Declarations(StmtExprVisitor):
    """Declared buffers with the scope (a node id, None for the whole function)
    their declaration covers, the buffers used, and the variables statements bind."""

    def __init__(self):
        self.declared: list[tuple[Buffer, int | None]] = []
        self.referenced: list[Buffer] = []
        self.bound: set[int] = set()

    def visit_var_def(self, var):
        self.bound.add(id(var))

    def visit_buffer_ref(self, buffer):
        self.referenced.append(buffer)

    def visit_block(self, block):
        for buffer in (*block.alloc_buffers, *(m.buffer for m in block.match_buffers)):
            self.declared.append((buffer, id(block)))
        self.generic_visit(block)

    def visit_decl_buffer(self, stmt):
        self.declared.append((stmt.buffer, id(stmt)))
        self.generic_visit(stmt)


class _Escapes(StmtExprVisitor):
    """The candidate variables used outside the scope their buffer declares."""

    def __init__(self, scopes: dict):
        self.scopes = scopes  # variable id -> the id of the node whose scope defines it
        self.open: set[int] = set()
        self.escaped: set[int] = set()

    def visit_var(self, var):
        scope = self.scopes.get(id(var))
        if scope is not None and scope not in self.open:
            self.escaped.add(id(var))

    def _scoped(self, node):
        self.open.add(id(node))
        self.generic_visit(node)
        self.open.discard(id(node))

    visit_block = visit_decl_buffer = _scoped


def _attr_vars(value) -> list:
    """The variables in a function attribute's value (lists and dicts included)."""
    if isinstance(value, E.PrimExpr):
        return collect_vars(value)
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _attr_vars(item)]
    return []


def implicit_offsets(func) -> set[int]:
    """Ids of the offset variables of ``func``'s buffers that their declaration
    defines in the printed text (see the module's docstring)."""
    decls = _Declarations()
    decls.visit(func.body)
    declared = [(b, None) for b in func.buffer_map.values()] + decls.declared
    if not any(type(b.elem_offset) is E.Var for b, _ in declared):
        return set()  # the common case: no offset variables at all
    mentions: dict[int, int] = {}  # in how many buffer fields each variable appears
    buffers = {id(b): b for b, _ in declared}
    buffers.update((id(b), b) for b in decls.referenced)
    for buffer in buffers.values():
        for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            for var in collect_vars(part):
                mentions[id(var)] = mentions.get(id(var), 0) + 1
    excluded = {id(p) for p in func.params} | decls.bound
    excluded.update(id(v) for v in _attr_vars(func.attrs))  # printed before any buffer
    candidates, scoped = set(), {}
    for buffer, scope in declared:
        var = buffer.elem_offset
        if (
            type(var) is E.Var
            and var.dtype == _fresh_offset_dtype(buffer)
            and mentions.get(id(var)) == 1
            and id(var) not in excluded
        ):
            candidates.add(id(var))
            if scope is not None:
                scoped[id(var)] = scope
    if scoped:
        escapes = _Escapes(scoped)
        escapes.visit(func.body)
        candidates -= escapes.escaped
    return candidates

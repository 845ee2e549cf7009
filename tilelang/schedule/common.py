"""Helpers shared by the primitive families: looking up targets with clear errors,
binding substitution, and block access regions."""

from __future__ import annotations

import attrs

from tilelang.arith import simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator, post_order_visit, substitute
from tilelang.ir.var_usage import uses_any_var
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree, rewrite


def find_loop(tree: Tree, var: E.Var, primitive: str) -> S.For:
    loop = tree.loops.get(id(var))
    if loop is None:
        raise schedule_error(
            primitive,
            f"loop {var.name}",
            "the loop no longer exists (an earlier primitive such as split or fuse "
            "replaced it); get fresh handles with get_loops",
        )
    return loop


def find_block(tree: Tree, name: str, primitive: str) -> S.BlockRealize:
    found = tree.realizes.get(name, [])
    if not found:
        raise schedule_error(
            primitive,
            f"block {name!r}",
            f"Cannot find a block with the name: {name}",
            fast="Cannot find a block with the specified name",
        )
    if len(found) > 1:
        raise schedule_error(
            primitive,
            f"block {name!r}",
            f"{len(found)} blocks share this name; names must be unique",
        )
    return found[0]


def loop_subject(loop: S.For) -> str:
    return f"loop {loop.loop_var.name}"


def block_subject(realize: S.BlockRealize) -> str:
    return f"block {realize.block.name_hint!r}"


def fresh_name(taken: set, base: str) -> str:
    """``base``, or ``base_1``, ``base_2``... when already taken."""
    if base not in taken:
        return base
    n = 1
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def substitute_bindings(stmt: S.Stmt, vmap: dict, simplify_changed: bool) -> S.Stmt:
    """``stmt`` with loop variables replaced in every expression; bindings that
    use a replaced variable are brought to linear canonical form when
    ``simplify_changed``."""
    new = substitute(stmt, vmap)
    if not simplify_changed:
        return new
    new_vars = set()
    for value in vmap.values():
        post_order_visit(value, lambda n: new_vars.add(n) if isinstance(n, E.Var) else None)
    return map_realizes(new, lambda r: simplify_bindings(r, list(new_vars)))


def simplify_bindings(realize: S.BlockRealize, variables) -> S.BlockRealize:
    """``realize`` with the bindings that use ``variables`` simplified."""
    values = tuple(simplify(v) if uses_any_var(v, variables) else v for v in realize.iter_values)
    if all(a is b for a, b in zip(values, realize.iter_values)):
        return realize
    return attrs.evolve(realize, iter_values=values)


class _RealizeMap(StmtExprMutator):
    def __init__(self, fn):
        self.fn = fn

    def visit(self, node):
        return node if not isinstance(node, S.Stmt) else super().visit(node)

    def visit_block_realize(self, op):
        return self.fn(self.generic_visit(op))


def map_realizes(stmt: S.Stmt, fn) -> S.Stmt:
    """``stmt`` with ``fn`` applied to every BlockRealize (innermost first)."""
    return _RealizeMap(fn).visit(stmt)


def copy_loops(body: S.Stmt, loops, loop_map: dict) -> S.Stmt:
    """``body`` wrapped in copies of ``loops`` (outermost first), each iterating its new
    variable ``loop_map[loop.loop_var]`` over the same range, with the same kind and
    thread binding (how decompose_reduction and blockize give an init its own loops)."""
    for lp in reversed(loops):
        body = S.For(
            loop_map[lp.loop_var],
            lp.min,
            lp.extent,
            lp.kind,
            body,
            thread_binding=lp.thread_binding,
        )
    return body


def and_predicate(old: E.PrimExpr, extra: E.PrimExpr) -> E.PrimExpr:
    """``old and extra`` without a redundant ``True and``."""
    if isinstance(old, E.IntImm) and old.value:
        return extra
    if isinstance(extra, E.IntImm) and extra.value:
        return old
    return E.And(old, extra)


def is_reduction_binding(realize: S.BlockRealize, var: E.Var):
    """The first non-spatial iterator whose binding uses ``var``, or None."""
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if iv.iter_type != S.IterVar.DataPar and uses_any_var(value, [var]):
            return iv
    return None


def replace_scope_body(func, scope, items, allocs):
    """``func`` with the body of the block ``scope`` (a BlockRealize, or None for a
    function without a root block, which then gets one) made of ``items`` and the
    buffers ``allocs`` allocated there after its own."""
    if scope is None:
        root = S.Block((), (), (), "root", S.seq_stmt(*items), alloc_buffers=tuple(allocs))
        return func.with_body(S.BlockRealize((), E.IntImm("bool", 1), root))
    block = attrs.evolve(
        scope.block, body=S.seq_stmt(*items), alloc_buffers=(*scope.block.alloc_buffers, *allocs)
    )
    return rewrite(func, {id(scope.block): block})


def taken_names(tree) -> set:
    """Names a new block or buffer must not take: every block's, every allocated
    buffer's and every parameter buffer's."""
    names = set(tree.realizes)
    for realizes in tree.realizes.values():
        for r in realizes:
            names.update(b.name for b in r.block.alloc_buffers)
    names.update(b.name for b in tree.func.buffer_map.values())
    return names


def scope_items(tree, realize):
    """The realize of ``realize``'s scope block (None at a function without a root
    block) and the top-level statements of its body, between which the staging
    primitives insert their new blocks (:func:`replace_scope_body` writes them back)."""
    scope = tree.scope_realize(realize)
    body = tree.func.body if scope is None else scope.block.body
    return scope, list(body.seq) if isinstance(body, S.SeqStmt) else [body]


def top_index(tree, items, node) -> int:
    """The index of the statement of ``items`` that is ``node`` or holds it."""
    return next(i for i, it in enumerate(items) if it is node or tree.is_ancestor(it, node))


def conjuncts(cond) -> list:
    """The terms of the conjunction ``cond`` (``a and b and ...``), left to right, without
    constant true terms (a block predicate ``T.where(True)`` has none)."""
    if isinstance(cond, E.And):
        return conjuncts(cond.a) + conjuncts(cond.b)
    if isinstance(cond, E.IntImm) and cond.value:
        return []
    return [cond]

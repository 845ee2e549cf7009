"""loop_partition: a loop is cut into consecutive ranges, each a copy of the loop with
its own copy of the body, inside TVM's block structure::

    for i in range(128):                 with T.block("B_i_common"):
        with T.block("B"):                   with T.block("B_i0_partition"):
            vi = T.axis.spatial(128, i)          for i0 in range(2):
            ...                                      with T.block("B_i0"):
                                                         vi = T.axis.spatial(range(0, 2), i0)
                                             with T.block("B_i1_partition"):
                                                 for i1 in range(2, 128):
                                                     with T.block("B_i1"): ...

``factors`` are the lengths of the ranges (one may be None: what is left); when
they do not reach the loop's extent, the rest is one more range. In each copy, the
blocks are renamed ``<name>_<loop><k>``; an iterator bound to the loop variable gets
the range as its domain, and a region indexed by plain iterators is that product of
domains (TVM's rule). Every loop and iterator of a copy is a new variable.
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_value
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range
from tilelang.ir.functor import StmtExprMutator, post_order_visit, substitute
from tilelang.schedule.common import find_loop, loop_subject
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree, rewrite

P = "loop_partition"


def _ends(subject, loop, factors) -> list[int]:
    """The exclusive end of each range."""
    extent = const_value(loop.extent)
    if extent is None or const_value(loop.min) is None:
        raise schedule_error(P, subject, "the loop's min and extent must be constants", loop)
    if const_value(loop.min) != 0:
        raise schedule_error(P, subject, f"the loop starts at {loop.min}, not 0", loop)
    values, missing = [], [k for k, f in enumerate(factors) if f is None]
    if len(missing) > 1:
        raise schedule_error(P, subject, "at most one factor may be None")
    for k, factor in enumerate(factors):
        value = None if factor is None else const_value(factor)
        if factor is not None and value is None:
            raise schedule_error(P, subject, f"factor {k} ({factor}) is not a constant")
        if value is not None and value <= 0:
            raise schedule_error(P, subject, f"factor {k} is {value}; factors must be positive")
        values.append(value)
    given = sum(v for v in values if v is not None)
    if given >= extent:
        raise schedule_error(
            P, subject, f"the factors add up to {given}, not less than the extent {extent}", loop
        )
    if missing:
        values[missing[0]] = extent - given
    ends, total = [], 0
    for value in values:
        total += value
        ends.append(total)
    if not missing:
        ends.append(extent)
    return ends


def _accessed_names(body) -> dict:
    """Buffer name -> the names of its first all-variable index list (TVM's map)."""
    found: dict = {}

    def visit(node):
        if isinstance(node, (E.BufferLoad, S.BufferStore)) and node.buffer.name not in found:
            if all(isinstance(x, E.Var) for x in node.indices):
                found[node.buffer.name] = [x.name for x in node.indices]

    post_order_visit(body, visit)
    return found


class _Copy(StmtExprMutator):
    """One partition's copy of the body: fresh loops and iterators, blocks renamed,
    the iterator bound to the partition loop restricted to ``[lo, hi)``."""

    def __init__(self, var, lo, hi):
        self.var, self.lo, self.hi = var, lo, hi

    def visit_for(self, op):
        new = self.generic_visit(op)
        fresh = E.Var(op.loop_var.name, op.loop_var.dtype)
        return attrs.evolve(new, loop_var=fresh, body=substitute(new.body, {op.loop_var: fresh}))

    def visit_block_realize(self, op):
        new = self.generic_visit(op)
        index = next((k for k, v in enumerate(new.iter_values) if v is self.var), None)
        block = new.block
        name = f"{block.name_hint}_{self.var.name}"
        if not block.iter_vars or index is None:
            return attrs.evolve(new, block=attrs.evolve(block, name_hint=name))
        ivs, vmap = [], {}
        for k, iv in enumerate(block.iter_vars):
            var = E.Var(iv.var.name, iv.var.dtype)
            dom = iv.dom
            if k == index:
                dom = Range(E.IntImm(var.dtype, self.lo), E.IntImm(var.dtype, self.hi - self.lo))
            ivs.append(attrs.evolve(iv, var=var, dom=dom))
            vmap[iv.var] = var
        doms = {iv.var.name: iv.dom for iv in ivs}
        names = _accessed_names(block.body)
        block = attrs.evolve(
            block,
            name_hint=name,
            iter_vars=tuple(ivs),
            reads=tuple(_region(r, names, doms) for r in block.reads),
            writes=tuple(_region(r, names, doms) for r in block.writes),
        )
        body_and_regions = substitute(attrs.evolve(block, iter_vars=()), vmap)
        return attrs.evolve(new, block=attrs.evolve(body_and_regions, iter_vars=tuple(ivs)))


def _region(region, names, doms):
    indices = names.get(region.buffer.name)
    if indices is None or not all(n in doms for n in indices):
        return region
    return BufferRegion(region.buffer, tuple(doms[n] for n in indices))


def _first_block_name(tree, loop):
    blocks = tree.blocks_under(loop)
    return blocks[0].block.name_hint if blocks else "loop"


def loop_partition(func, loop_var, factors):
    """Returns ``(new_func, [partition loop variables])``; see the module docstring."""
    tree = Tree(func)
    loop = find_loop(tree, loop_var, P)
    subject = loop_subject(loop)
    if loop.annotations or loop.thread_binding or loop.kind is S.ForKind.THREAD_BINDING:
        raise schedule_error(P, subject, "the loop has annotations or a thread binding", loop)
    ends = _ends(subject, loop, list(factors))
    base = f"{_first_block_name(tree, loop)}_{loop_var.name}"
    parts, variables, lo = [], [], 0
    for k, hi in enumerate(ends):
        var = E.Var(f"{loop_var.name}{k}", loop_var.dtype)
        body = _Copy(var, lo, hi).visit(substitute(loop.body, {loop_var: var}))
        stmt = S.For(
            var, E.IntImm(var.dtype, lo), E.IntImm(var.dtype, hi - lo), S.ForKind.SERIAL, body
        )
        block = S.Block((), (), (), f"{base}{k}_partition", stmt)
        parts.append(S.BlockRealize((), E.IntImm("bool", 1), block))
        variables.append(var)
        lo = hi
    common = S.Block((), (), (), f"{base}_common", S.seq_stmt(*parts))
    return rewrite(func, {id(loop): S.BlockRealize((), E.IntImm("bool", 1), common)}), variables

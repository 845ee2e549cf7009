"""transform_block_layout: a block's iteration space is remapped by an index map; the
block gets one iterator per output of the map, each under a new loop, and its body
reads the old iterators back through the inverse map.

Before / after ``transform_block_layout(B, lambda i, j: (i * 8 + j,))``::

    for i, j in T.grid(4, 8):                    for ax0 in range(32):
        with T.block("B"):                           with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])          v0 = T.axis.spatial(32, ax0)
            B[vi, vj] = A[vi, vj] * 2.0                  B[v0 // 8, v0 % 8] = A[v0 // 8, v0 % 8] * 2

As TVM requires: the loops above the block (up to its scope) start at 0 and each holds
only the next one, the block's bindings are exactly those loops in order, the map is a
bijection of the iteration space (an affine fuse/split/reorder that
:func:`~tilelang.arith.iter_map.inverse_map` can invert) onto ranges starting at 0,
and each new iterator mixes only spatial or only reduction iterators.
"""

from __future__ import annotations

import math

import attrs

from tilelang.arith import Analyzer, ConstBound, const_value, eval_interval, simplify
from tilelang.arith.iter_inverse import inverse_map
from tilelang.arith.linear import scale_ordered
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.functor import StmtExprMutator, post_order_visit, substitute
from tilelang.schedule.common import block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.index_map import IndexMap
from tilelang.schedule.state import Tree, rewrite

P = "transform_block_layout"


def transform_block_layout(func, name, index_map):
    """Returns the new function; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, P)
    subject = block_subject(realize)
    block = realize.block
    loops = tree.loops_above(realize)
    _check_nest(subject, realize, loops)
    ivs = list(block.iter_vars)
    try:
        imap = IndexMap.from_func(index_map, len(ivs), ivs[0].var.dtype if ivs else "int32")
        outputs = imap.map_indices([iv.var for iv in ivs])
    except Exception as error:  # the user's function: say that it failed, and how
        raise schedule_error(P, subject, f"the index map does not apply: {error}") from None
    doms = {iv.var: iv.dom for iv in ivs}
    extents = []
    for out in outputs:
        lo, hi = eval_interval(out, doms)
        lo = None if lo is None else const_value(simplify(lo))
        extent = None if hi is None else simplify(hi + 1)
        if lo != 0 or extent is None:
            raise schedule_error(
                P, subject, f"the new iterator {out} does not range from 0 to a bound"
            )
        extents.append(extent)
    new_vars = [E.Var(f"v{d}", out.dtype) for d, out in enumerate(outputs)]
    inverse = inverse_map(outputs, doms, new_vars)
    # inverse_map builds TVM's unsimplified expressions; the rewritten IR wants them simplified
    inverse = (
        None if inverse is None else {k: scale_ordered(simplify(v)) for k, v in inverse.items()}
    )
    if inverse is None or not _same_size([iv.dom.extent for iv in ivs], extents):
        raise schedule_error(
            P, subject, f"the index map {imap} is not a bijection of the block's iterations"
        )
    kinds = {iv.var: iv.iter_type for iv in ivs}
    new_ivs = tuple(
        S.IterVar(Range(E.IntImm(var.dtype, 0), extent), var, _kind(subject, out, kinds, extent))
        for var, out, extent in zip(new_vars, outputs, extents)
    )
    analyzer = Analyzer()
    for var, extent in zip(new_vars, extents):
        hi = const_value(extent)
        analyzer.var_bounds[var] = ConstBound(0, None if hi is None else hi - 1)
    new_block = _Simplify(analyzer).visit(substitute(block, inverse))
    new_block = attrs.evolve(new_block, iter_vars=new_ivs)
    axes = [E.Var(f"ax{d}", var.dtype) for d, var in enumerate(new_vars)]
    stmt = attrs.evolve(realize, iter_values=tuple(axes), block=new_block)
    for ax, extent in reversed(list(zip(axes, extents))):
        stmt = S.For(ax, E.IntImm(ax.dtype, 0), extent, S.ForKind.SERIAL, stmt)
    return rewrite(func, {id(loops[0]): stmt})


def _check_nest(subject, realize, loops):
    if not loops:
        raise schedule_error(P, subject, "has no loops to transform")
    for outer, inner in zip(loops, [*loops[1:], realize]):
        if outer.body is not inner:
            raise schedule_error(
                P, subject, f"loop {outer.loop_var.name} must hold only the block's loop nest"
            )
    for lp in loops:
        if const_value(lp.min) != 0:
            raise schedule_error(P, subject, f"loop {lp.loop_var.name} does not start at 0")
    trivial = len(realize.iter_values) == len(loops) and all(
        v is lp.loop_var for v, lp in zip(realize.iter_values, loops)
    )
    if not trivial:
        raise schedule_error(
            P, subject, "its bindings must be its loops' variables, one each, in order"
        )
    if not (isinstance(realize.predicate, E.IntImm) and realize.predicate.value):
        raise schedule_error(P, subject, "has a T.where predicate")
    for iv in realize.block.iter_vars:
        if const_value(iv.dom.min) != 0:
            raise schedule_error(P, subject, f"iterator {iv.var.name} does not start at 0")


def _same_size(old, new) -> bool:
    a = [const_value(x) for x in old]
    b = [const_value(x) for x in new]
    if None in a or None in b:
        return True  # symbolic: the bijective inverse is the proof
    return math.prod(a) == math.prod(b)


def _kind(subject, expr, kinds, extent):
    """Spatial, or reduction, as the old iterators the new one is made of."""
    if const_value(extent) == 1:
        return S.IterVar.DataPar
    used = set()
    post_order_visit(
        expr, lambda n: used.add(kinds[n]) if isinstance(n, E.Var) and n in kinds else None
    )
    if len(used) != 1:
        raise schedule_error(
            P, subject,
            f"the new iterator {expr} mixes spatial and reduction iterators (or uses none)",
        )  # fmt: skip
    return used.pop()


class _Simplify(StmtExprMutator):
    """Buffer indices and regions simplified with the new iterators' bounds (so that
    ``(v0 * 8 + v1) // 8`` reads ``v0``)."""

    def __init__(self, analyzer):
        self.analyzer = analyzer

    def visit_buffer_load(self, op):
        op = self.generic_visit(op)
        return attrs.evolve(op, indices=tuple(self.analyzer.simplify(x) for x in op.indices))

    def visit_buffer_store(self, op):
        op = self.generic_visit(op)
        return attrs.evolve(op, indices=tuple(self.analyzer.simplify(x) for x in op.indices))

    def visit_buffer_region(self, op):
        op = self.generic_visit(op)
        region = tuple(Range(self.analyzer.simplify(r.min), r.extent) for r in op.region)
        return attrs.evolve(op, region=region)

"""decompose_padding: a padding block ``y[v] = if_then_else(cond(v), x[...], pad)`` is
split into a block filling the whole buffer with ``pad`` and a block copying only
where ``cond`` holds (TVM's DecomposePadding).

Before / after ``decompose_padding(block, i)``::

    for i in range(140):                         for i in range(140):
        with T.block("block"):                       with T.block("block_pad_const"):
            vi = T.axis.spatial(140, i)                  vi = T.axis.spatial(140, i)
            y[vi] = T.if_then_else(                      y[vi] = 0
                6 <= vi and vi < 134,            for i in range(128):
                x[vi - 6], 0)                        with T.block("block"):
                                                         vi = T.axis.spatial(128, i)
                                                         y[vi + 6] = x[vi]

``cond`` must be a conjunction of bounds on single iterators (``lo <= v``, ``v < hi``
and the like). Each bounded iterator is rebased to ``[0, hi - lo)``. A loop at or
below ``loop`` that alone binds it shrinks to the new extent; otherwise the binding
is shifted by ``lo`` and the block gets a predicate keeping ``lo <= binding < hi``.
The fill block is a copy of the loops from ``loop`` down to the block (only that
path), placed right before ``loop``.
"""

from __future__ import annotations

import attrs

from tilelang.arith import Analyzer, ConstBound, const_value, linear_form
from tilelang.arith.simplifier import Simplifier
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import get_block_read_write_region, uses_any_var
from tilelang.ir.buffer import Range
from tilelang.ir.convert import binary
from tilelang.ir.functor import StmtExprMutator, post_order_visit, substitute
from tilelang.schedule.common import and_predicate, block_subject, find_block, find_loop
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree, rewrite

_COMPARISONS = (E.LT, E.LE, E.GT, E.GE)


def _padding_store(subject, realize):
    body = realize.block.body
    value = body.value if isinstance(body, S.BufferStore) else None
    if not (isinstance(value, E.Call) and value.op == "if_then_else"):
        raise schedule_error(
            "decompose_padding", subject,
            "the block is not a padding block: its body must be one store of "
            "T.if_then_else(condition, value, pad_value)",
            realize,
        )  # fmt: skip
    cond, inside, pad = value.args
    loads = []
    post_order_visit(pad, lambda n: loads.append(n) if isinstance(n, E.BufferLoad) else None)
    if loads or uses_any_var(pad, [iv.var for iv in realize.block.iter_vars]):
        raise schedule_error(
            "decompose_padding", subject,
            f"the pad value {pad} must not depend on buffers or the block's iterators",
            realize,
        )  # fmt: skip
    return body, cond, inside, pad


def _conjuncts(cond) -> list:
    out, stack = [], [cond]
    while stack:
        node = stack.pop()
        if isinstance(node, E.And):
            stack += [node.b, node.a]
        else:
            out.append(node)
    return out


def _bounds(subject, realize, cond) -> dict:
    """``{iter var: (lo, hi)}``: where ``cond`` holds, intersected with the domain."""
    ivs = {iv.var: iv for iv in realize.block.iter_vars}
    bounds = {}
    for term in _conjuncts(cond):
        parsed = _one_bound(term, ivs) if isinstance(term, _COMPARISONS) else None
        if parsed is None:
            raise schedule_error(
                "decompose_padding", subject,
                f"cannot decompose the padding condition {term}: each part must bound one "
                "iterator by constants",
                realize,
            )  # fmt: skip
        var, lo, hi = parsed
        iv = ivs[var]
        dom_lo, dom_hi = (
            const_value(iv.dom.min),
            const_value(iv.dom.min) + const_value(iv.dom.extent),
        )
        old_lo, old_hi = bounds.get(var, (dom_lo, dom_hi))
        bounds[var] = (max(old_lo, lo if lo is not None else old_lo),
                       min(old_hi, hi if hi is not None else old_hi))  # fmt: skip
    trivial = all(
        (lo, hi)
        == (
            const_value(ivs[v].dom.min),
            const_value(ivs[v].dom.min) + const_value(ivs[v].dom.extent),
        )
        for v, (lo, hi) in bounds.items()
    )
    if trivial:
        raise schedule_error(
            "decompose_padding", subject,
            f"the padding condition {cond} holds everywhere: there is no padding to split off",
            realize,
        )  # fmt: skip
    for var, (lo, hi) in bounds.items():
        if lo >= hi:
            raise schedule_error(
                "decompose_padding", subject,
                f"the padding condition leaves no value of {var.name}: nothing to copy",
                realize,
            )  # fmt: skip
    return bounds


def _one_bound(term, ivs):
    """``(var, lo, hi)`` (one side None) for ``term`` comparing one iterator (plus a
    constant) with a constant; None otherwise."""
    form = linear_form(binary("sub", term.a, term.b))
    terms = form.live_terms()
    if len(terms) != 1 or terms[0][0] not in ivs or abs(terms[0][1]) != 1:
        return None
    var, coeff = terms[0]
    if const_value(ivs[var].dom.extent) is None or const_value(ivs[var].dom.min) is None:
        return None
    c = form.const
    # term is  coeff * var + c  OP  0
    strict = isinstance(term, (E.LT, E.GT))
    upper = isinstance(term, (E.LT, E.LE)) == (coeff == 1)
    limit = -c if coeff == 1 else c
    if upper:  # var < limit (or <=)
        return var, None, limit if strict else limit + 1
    return var, (limit + 1 if strict else limit), None


def _path_loops(tree, loop, realize):
    """The loops from ``loop`` down to ``realize``, outermost first."""
    loops = tree.loops_above(realize)
    index = next((k for k, lp in enumerate(loops) if lp is loop), None)
    return None if index is None else loops[index:]


def decompose_padding(func, name, loop_var):
    """Returns ``(new_func, fill_block_name)``; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, "decompose_padding")
    subject = block_subject(realize)
    loop = find_loop(tree, loop_var, "decompose_padding")
    path = _path_loops(tree, loop, realize)
    if path is None:
        raise schedule_error(
            "decompose_padding", subject, f"loop {loop_var.name} is not above the block", loop
        )
    store, cond, inside, pad = _padding_store(subject, realize)
    bounds = _bounds(subject, realize, cond)
    block = realize.block
    taken = set(tree.realizes)
    fill_name = f"{block.name_hint}_pad_const"
    if fill_name in taken:
        raise schedule_error("decompose_padding", subject, f"a block {fill_name!r} exists")
    # the fill block: same iterators, bindings and predicate; stores pad everywhere
    fill_block = attrs.evolve(
        block, name_hint=fill_name, body=attrs.evolve(store, value=pad), init=None
    )
    reads, writes = get_block_read_write_region(fill_block)
    fill = attrs.evolve(realize, block=attrs.evolve(fill_block, reads=(), writes=tuple(writes)))
    # the copy block: bounded iterators rebased, loops shrunk or predicates added
    in_path = {lp.loop_var: lp for lp in path}  # loops that may shrink
    new_ivs, new_values, vmap, shrink = [], [], {}, {}
    predicate = E.IntImm("bool", 1)
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.var not in bounds:
            new_ivs.append(iv)
            new_values.append(value)
            continue
        lo, hi = bounds[iv.var]
        dom_lo = const_value(iv.dom.min)
        if lo == dom_lo and hi == dom_lo + const_value(iv.dom.extent):
            new_ivs.append(iv)
            new_values.append(value)
            continue
        var = E.Var(iv.var.name, iv.var.dtype)
        new_ivs.append(
            attrs.evolve(
                iv, var=var, dom=Range(E.IntImm(var.dtype, 0), E.IntImm(var.dtype, hi - lo))
            )
        )
        vmap[iv.var] = binary("add", var, E.IntImm(var.dtype, lo)) if lo else var
        lp = in_path.get(value) if isinstance(value, E.Var) else None
        if (
            lp is not None
            and const_value(lp.min) == 0 == dom_lo
            and const_value(lp.extent) == const_value(iv.dom.extent)
            and tree.blocks_under(lp) == [realize]
        ):
            shrink[lp.loop_var] = hi - lo  # the loop runs over the rebased iterator
            new_values.append(value)
            continue
        new_values.append(binary("sub", value, E.IntImm(value.dtype, lo)) if lo else value)
        if lo > dom_lo:
            predicate = and_predicate(predicate, E.LE(E.IntImm(value.dtype, lo), value))
        if hi < dom_lo + const_value(iv.dom.extent):
            predicate = and_predicate(predicate, E.LT(value, E.IntImm(value.dtype, hi)))
    simplify = Simplifier(Analyzer())
    body = simplify.visit(substitute(attrs.evolve(store, value=inside), vmap))
    copy_block = attrs.evolve(block, iter_vars=tuple(new_ivs), body=body, init=None)
    reads, writes = get_block_read_write_region(copy_block)
    copy_block = attrs.evolve(copy_block, reads=tuple(reads), writes=tuple(writes))
    # TVM's in-bound predicate: one left-nested conjunction, the bounds first
    predicate = conjunction(predicate, realize.predicate)
    copy = S.BlockRealize(tuple(new_values), predicate, copy_block)
    loop_bounds = Analyzer()  # loops above ``loop`` (those below are kept as they are)
    for lp in tree.loops_above(realize)[: -len(path)]:
        lo, extent = const_value(lp.min), const_value(lp.extent)
        if lo is not None and extent is not None:
            loop_bounds.var_bounds[lp.loop_var] = ConstBound(lo, lo + extent - 1)
    fill = _simplified_bindings(fill, loop_bounds)
    copy = _simplified_bindings(copy, loop_bounds)
    fill_nest = _fresh_fill(fill, path)
    func = rewrite(func, {id(realize): copy})
    func = func.with_body(_Shrink(shrink).visit(func.body))
    loop = find_loop(Tree(func), loop_var, "decompose_padding")
    return rewrite(func, {id(loop): S.seq_stmt(fill_nest, loop)}), fill_name


def conjunction(*conds):
    """The conjuncts of ``conds`` (``and`` trees flattened, ``True`` dropped) joined as
    one left-nested ``a and b and c``."""
    atoms, stack = [], list(reversed(conds))
    while stack:
        cond = stack.pop()
        if isinstance(cond, E.And):
            stack += [cond.b, cond.a]
        elif not (isinstance(cond, E.IntImm) and cond.value):
            atoms.append(cond)
    out = E.IntImm("bool", 1)
    for atom in atoms:
        out = and_predicate(out, atom)
    return out


def _simplified_bindings(realize, analyzer):
    """Bindings simplified under the outer loops' ranges (a unit loop's variable is 0)."""
    values = []
    for value in realize.iter_values:
        bound = analyzer.const_bound(value)
        if bound.lo is not None and bound.lo == bound.hi:
            values.append(E.IntImm(value.dtype, bound.lo))
        else:
            values.append(analyzer.simplify(value))
    return attrs.evolve(realize, iter_values=tuple(values))


def _fresh_fill(fill, path):
    """The fill block under copies of ``path`` (only the way down to the block), with
    its own loop variables and iterators (a variable is defined once)."""
    block = fill.block
    ivs = [attrs.evolve(iv, var=E.Var(iv.var.name, iv.var.dtype)) for iv in block.iter_vars]
    inner = {old.var: new.var for old, new in zip(block.iter_vars, ivs)}
    block = attrs.evolve(substitute(block, inner), iter_vars=tuple(ivs))
    loops = {lp.loop_var: E.Var(lp.loop_var.name, lp.loop_var.dtype) for lp in path}
    stmt = S.BlockRealize(
        tuple(substitute(v, loops) for v in fill.iter_values),
        substitute(fill.predicate, loops),
        block,
    )
    for lp in reversed(path):
        stmt = attrs.evolve(
            lp, loop_var=loops[lp.loop_var], min=substitute(lp.min, loops),
            extent=substitute(lp.extent, loops), body=stmt,
        )  # fmt: skip
    return stmt


class _Shrink(StmtExprMutator):
    def __init__(self, extents):
        self.extents = extents  # loop variable -> new extent

    def visit_for(self, op):
        new = self.generic_visit(op)
        extent = self.extents.get(op.loop_var)
        if extent is None:
            return new
        return attrs.evolve(new, extent=E.IntImm(op.extent.dtype, extent))


def can_decompose_padding(func, name, loop_var) -> bool:
    """Whether :func:`decompose_padding` would succeed."""
    from tilelang.errors import ScheduleError

    try:
        decompose_padding(func, name, loop_var)
    except ScheduleError:
        return False
    return True

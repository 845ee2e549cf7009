"""blockize: the subtree under a loop becomes one block over tensor regions
(the shape ``tensorize`` matches)."""

from __future__ import annotations

import attrs

from tilelang.arith import LinearForm, const_value, eval_interval, linear_form, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.functor import substitute
from tilelang.ir.var_usage import uses_any_var
from tilelang.schedule.common import copy_loops, find_loop, fresh_name, loop_subject
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import _with_regions
from tilelang.schedule.state import Tree, rewrite


def blockize(func, loop_var, preserve_unit_iters=True):
    """Wraps the loops from ``loop`` down to the single block under it into an
    outer block ``<name>_o`` whose iterators cover the outer part of each binding.

    Before / after ``blockize(i_1)`` (SEED §7)::

        for i_0, j_0, k_0, i_1, j_1, k_1 in T.grid(64, 64, 64, 16, 16, 16):
            with T.block("matmul"):
                vi = T.axis.spatial(1024, i_0 * 16 + i_1)  ...

        for i_0, j_0, k_0 in T.grid(64, 64, 64):
            with T.block("matmul_o"):
                vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
                with T.init():
                    for i_1, j_1 in T.grid(16, 16):
                        with T.block("matmul_init"): ...
                for i_1, j_1, k_1 in T.grid(16, 16, 16):
                    with T.block("matmul"):
                        vi_i, vj_i, vk_i = T.axis.remap("SSR", [i_1, j_1, k_1])
                        C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] = ...

    Returns ``(new_func, outer_block_name)``.
    """
    tree = Tree(func)
    loop = find_loop(tree, loop_var, "blockize")
    subject = loop_subject(loop)
    chain = [loop]
    while isinstance(chain[-1].body, S.For):
        chain.append(chain[-1].body)
    realize = chain[-1].body
    if not isinstance(realize, S.BlockRealize):
        raise schedule_error(
            "blockize", subject, "the loops under it must end in exactly one block", loop
        )
    block = realize.block
    inner_vars = [lp.loop_var for lp in chain]
    dom = {lp.loop_var: Range(lp.min, lp.extent) for lp in chain}
    if uses_any_var(realize.predicate, [v for v in _free_loop_vars(tree, realize) if v not in dom]):
        raise schedule_error("blockize", subject, "the block's predicate uses outer loops", realize)
    outer_ivs, outer_values, inner_ivs, inner_values, body_map = [], [], [], [], {}
    # without preserve_unit_iters the outer bindings see unit loops as their value
    # (TVM's SubspaceDivide simplifies trivial iterators)
    units = (
        {}
        if preserve_unit_iters
        else {
            lp.loop_var: lp.min
            for lp in tree.loops_above(realize)
            if lp.loop_var not in dom and const_value(lp.extent) == 1
        }
    )
    for iv, value in zip(block.iter_vars, realize.iter_values):
        inner_part, outer_part = _split_binding(subject, value, inner_vars)
        name, dtype = iv.var.name, iv.var.dtype
        if inner_part is None:
            vo = E.Var(f"{name}_o", dtype)
            outer_ivs.append(attrs.evolve(iv, var=vo))
            outer_values.append(_outer_value(value, units))
            unit = const_value(iv.dom.extent) == 1 and not preserve_unit_iters
            body_map[iv.var] = E.IntImm(dtype, 0) if unit else vo
            continue
        lo, hi = eval_interval(inner_part.to_expr(), dom)
        inner_extent = None if hi is None else const_value(hi)
        if lo is None or const_value(lo) != 0 or inner_extent is None:
            raise schedule_error(
                "blockize", subject, f"the binding of {name} is not an affine tile", realize
            )
        inner_extent += 1
        vi = E.Var(f"{name}_i", dtype)
        if outer_part.is_const() and outer_part.const == 0:
            inner_ivs.append(attrs.evolve(iv, var=vi))
            inner_values.append(inner_part.to_expr())
            body_map[iv.var] = vi
            if preserve_unit_iters:  # TVM keeps a unit outer iterator per iterator
                unit = S.IterVar(
                    Range(E.IntImm(dtype, 0), E.IntImm(dtype, 1)),
                    E.Var(f"{name}_o", dtype),
                    iv.iter_type,
                )
                outer_ivs.append(unit)
                outer_values.append(E.IntImm(dtype, 0))
            continue
        dom_extent = const_value(iv.dom.extent)
        divisible = all(c % inner_extent == 0 for _, c in outer_part.live_terms())
        if (
            not divisible
            or outer_part.const % inner_extent
            or dom_extent is None
            or (dom_extent % inner_extent)
        ):
            raise schedule_error(
                "blockize",
                subject,
                f"the binding of {name} does not tile by {inner_extent}",
                realize,
            )
        vo = E.Var(f"{name}_o", dtype)
        outer_ivs.append(
            S.IterVar(
                Range(E.IntImm(dtype, 0), E.IntImm(dtype, dom_extent // inner_extent)),
                vo,
                iv.iter_type,
            )
        )
        outer_values.append(_outer_value(_divide(outer_part, inner_extent).to_expr(), units))
        inner_ivs.append(
            S.IterVar(Range(E.IntImm(dtype, 0), E.IntImm(dtype, inner_extent)), vi, iv.iter_type)
        )
        inner_values.append(inner_part.to_expr())
        # TVM: a unit outer iterator leaves no term in the body
        unit_outer = dom_extent == inner_extent
        body_map[iv.var] = vi if unit_outer else vo * inner_extent + vi
    inner_block = _with_regions(
        attrs.evolve(
            block, iter_vars=tuple(inner_ivs), body=substitute(block.body, body_map), init=None
        )
    )
    nest = S.BlockRealize(tuple(inner_values), realize.predicate, inner_block)
    for lp in reversed(chain):
        nest = attrs.evolve(lp, body=nest)
    init = None
    taken = set(tree.realizes)
    if block.init is not None:
        init = _init_nest(block, chain, inner_ivs, inner_values, body_map, taken)
    outer_name = fresh_name(taken, f"{block.name_hint}_o")
    outer = _with_regions(S.Block(tuple(outer_ivs), (), (), outer_name, nest, init=init))
    outer_realize = S.BlockRealize(tuple(outer_values), E.IntImm("bool", 1), outer)
    return rewrite(func, {id(loop): outer_realize}), outer_name


def _outer_value(value, units):
    return simplify(substitute(value, units)) if units else value


def _free_loop_vars(tree, realize):
    return [lp.loop_var for lp in tree.loops_above(realize)]


def _split_binding(subject, value, inner_vars):
    """``(inner, outer)`` linear parts of a binding (inner None when it has none)."""
    form = linear_form(simplify(value))
    inner, outer = LinearForm(form.dtype), LinearForm(form.dtype)
    outer.const = form.const
    for atom, coeff in form.live_terms():
        is_inner = isinstance(atom, E.Var) and any(atom is v for v in inner_vars)
        if not is_inner and uses_any_var(atom, inner_vars):
            raise schedule_error("blockize", subject, f"the binding {value!r} is not affine")
        (inner if is_inner else outer).add_atom(atom, coeff)
    return (None if inner.is_const() else inner), outer


def _divide(form: LinearForm, factor: int) -> LinearForm:
    out = LinearForm(form.dtype)
    for atom, coeff in form.live_terms():
        out.add_atom(atom, coeff // factor)
    out.const = form.const // factor
    return out


def _init_nest(block, chain, inner_ivs, inner_values, body_map, taken):
    """The outer block's init: the spatial inner loops around a ``<name>_init`` block."""
    spatial = [
        (iv, v) for iv, v in zip(inner_ivs, inner_values) if iv.iter_type == S.IterVar.DataPar
    ]
    loops = [lp for lp in chain if any(uses_any_var(v, [lp.loop_var]) for _, v in spatial)]
    loop_map = {lp.loop_var: E.Var(lp.loop_var.name, lp.loop_var.dtype) for lp in loops}
    iv_map = {iv.var: E.Var(f"{iv.var.name}_init", iv.var.dtype) for iv, _ in spatial}
    init_body = substitute(substitute(block.init, body_map), iv_map)
    init_block = _with_regions(
        S.Block(
            tuple(attrs.evolve(iv, var=iv_map[iv.var]) for iv, _ in spatial),
            (),
            (),
            fresh_name(taken, f"{block.name_hint}_init"),
            init_body,
        )
    )
    stmt = S.BlockRealize(
        tuple(substitute(v, loop_map) for _, v in spatial), E.IntImm("bool", 1), init_block
    )
    return copy_loops(stmt, loops, loop_map)

"""Reductions: decompose_reduction (the init becomes its own block)."""

from __future__ import annotations

import attrs

from tilelang.arith import const_value, detect_iter_map
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.functor import substitute
from tilelang.ir.var_usage import uses_any_var
from tilelang.schedule.common import (
    block_subject,
    conjuncts,
    copy_loops,
    find_block,
    find_loop,
    fresh_name,
    is_reduction_binding,
)
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import _with_regions
from tilelang.schedule.state import Tree, rewrite


def decompose_reduction(func, name, loop_var):
    """Moves the init of reduction block ``name`` into a block ``<name>_init`` placed
    right before ``loop``; the block becomes ``<name>_update``.

    Before / after ``decompose_reduction(Y, k)`` (SEED §2)::

        for i, j_0 in T.grid(128, 32):           for i, j_0 in T.grid(128, 32):
            for k, j_1 in T.grid(128, 4):            for j_1_init in range(4):
                with T.block("Y"):                       with T.block("Y_init"):
                    ...                                      Y[vi, vj] = T.float32(0)
                    with T.init():                   for k, j_1 in T.grid(128, 4):
                        Y[vi, vj] = T.float32(0)         with T.block("Y_update"):
                    Y[vi, vj] = Y[vi, vj] + ...              Y[vi, vj] = Y[vi, vj] + ...

    Returns ``(new_func, init_name, update_name)``.
    """
    tree = Tree(func)
    realize = find_block(tree, name, "decompose_reduction")
    loop = find_loop(tree, loop_var, "decompose_reduction")
    subject = block_subject(realize)
    block = realize.block
    if block.init is None:
        raise schedule_error(
            "decompose_reduction", subject, "has no T.init(); not a reduction", realize
        )
    loops = tree.loops_above(realize)
    if not any(lp is loop for lp in loops):
        raise schedule_error(
            "decompose_reduction",
            subject,
            f"loop {loop.loop_var.name} is not one of the block's loops",
            loop,
        )
    position = next(i for i, lp in enumerate(loops) if lp is loop)
    for outer in loops[:position]:
        iv = is_reduction_binding(realize, outer.loop_var)
        if iv is not None:
            raise schedule_error(
                "decompose_reduction",
                subject,
                f"loop {outer.loop_var.name} outside the decomposition point carries the "
                f"reduction iterator {iv.var.name}; decompose at that loop or above",
                loop,
            )
    spatial = [
        (iv, v)
        for iv, v in zip(block.iter_vars, realize.iter_values)
        if iv.iter_type == S.IterVar.DataPar
    ]
    inner = loops[position:]
    _check_each_instance_once(subject, realize, loops[:position], inner, loop)
    init_loops = [lp for lp in inner if any(uses_any_var(v, [lp.loop_var]) for _, v in spatial)]
    loop_map = {
        lp.loop_var: E.Var(f"{lp.loop_var.name}_init", lp.loop_var.dtype) for lp in init_loops
    }
    dropped = [lp.loop_var for lp in inner if lp.loop_var not in loop_map]
    init_predicate = _init_predicate(subject, realize, dropped, [*loops[:position], *init_loops])
    iv_map = {iv.var: E.Var(iv.var.name, iv.var.dtype) for iv, _ in spatial}
    init_ivs = tuple(attrs.evolve(iv, var=iv_map[iv.var]) for iv, _ in spatial)
    taken = set(tree.realizes)
    init_name = fresh_name(taken, f"{name}_init")
    update_name = fresh_name(taken | {init_name}, f"{name}_update")
    init_block = _with_regions(
        S.Block(
            init_ivs,
            (),
            (),
            init_name,
            substitute(block.init, iv_map),
            annotations=block.annotations,  # TVM: the init block keeps them too
        )
    )
    init_stmt = S.BlockRealize(
        tuple(substitute(v, loop_map) for _, v in spatial),
        substitute(init_predicate, loop_map),
        init_block,
    )
    init_stmt = copy_loops(init_stmt, init_loops, loop_map)
    update = _update_block(block, update_name)
    func = rewrite(func, {id(block): update})
    loop = Tree(func).loops[id(loop_var)]
    return rewrite(func, {id(loop): S.seq_stmt(init_stmt, loop)}), init_name, update_name


def _check_each_instance_once(subject, realize, outer, inner, loop) -> None:
    """The init runs once per run of ``loop``, so within it every block instance (an
    element and a reduction step) must come once: loops that recompute an element
    (compute_at over overlapping regions, ``vi = i + ax0``) or repeat the block (a
    loop its bindings do not use) would accumulate into it twice. Loops of
    non-constant range are not analysed."""
    iters, shift = {}, {lp.loop_var: E.IntImm(lp.loop_var.dtype, 0) for lp in outer}
    for lp in inner:
        low, extent = const_value(lp.min), const_value(lp.extent)
        if low is None or extent is None:
            return
        var = lp.loop_var
        if extent == 1:
            shift[var] = E.IntImm(var.dtype, low)
            continue
        iters[var] = Range(E.IntImm(var.dtype, 0), E.IntImm(var.dtype, extent))
        if low:
            shift[var] = var + E.IntImm(var.dtype, low)
    values = [substitute(v, shift) for v in realize.iter_values]
    repeating = [v for v in iters if not any(uses_any_var(x, [v]) for x in values)]
    if repeating or detect_iter_map(values, iters, bijective=True).indices is None:
        why = (
            f"loop {repeating[0].name} repeats it"
            if repeating
            else "the loops from there recompute some elements (their bindings overlap)"
        )
        raise schedule_error(
            "decompose_reduction",
            subject,
            f"an init before loop {loop.loop_var.name} would run once for instances that "
            f"accumulate more than once: {why}",
            loop,
        )


def _init_predicate(subject, realize, dropped, kept_loops):
    """The predicate of the init block: the block's conjuncts without those on the
    reduction loops it no longer runs under (TVM's ``RemakePredicate``). A conjunct
    mixing such loops with the init's own loops cannot be split and is refused."""
    kept_vars = [lp.loop_var for lp in kept_loops]
    out = E.IntImm("bool", 1)
    for cond in conjuncts(realize.predicate):
        if not uses_any_var(cond, dropped):
            out = cond if isinstance(out, E.IntImm) else E.And(out, cond)
        elif uses_any_var(cond, kept_vars):
            raise schedule_error(
                "decompose_reduction",
                subject,
                f"its predicate {cond!r} mixes reduction loops with the init's loops",
                realize,
            )
    return out


def _update_block(block, name):
    """The block without its init. As TVM, its reads are its writes (to buffers it
    did not list as read: the update reads what it accumulates into) followed by its
    reads."""
    update = attrs.evolve(block, init=None, name_hint=name)
    if not block.reads and not block.writes:
        return _with_regions(update)
    read_buffers = {r.buffer for r in block.reads}
    extra = tuple(w for w in block.writes if w.buffer not in read_buffers)
    return attrs.evolve(update, reads=extra + tuple(block.reads))

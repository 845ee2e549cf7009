"""merge_reduction: an init block folded into the update block after it, as its
``T.init()`` (the inverse of ``decompose_reduction``; not one of TVM's primitives).

A program may write a reduction's initialisation and its update as two blocks under
the same loops (SEED §8). TVM's primitives refuse to bind, parallelize or vectorize a
loop over such an update: it is neither a complete block (it reads what it writes) nor
a reduction block (it has no init). Merged, it is a reduction block again::

    for i, j in T.grid(128, 128):                for i, j in T.grid(128, 128):
        with T.block("init"):                        for k in range(128):
            vi, vj = T.axis.remap("SS", [i, j])          with T.block("update"):
            C[vi, vj] = T.float32(0)                         vi, vj, vk = T.axis.remap(...)
        for k in range(128):                 ->              with T.init():
            with T.block("update"):                              C[vi, vj] = T.float32(0)
                vi, vj, vk = T.axis.remap(...)               C[vi, vj] = C[vi, vj] + ...
                C[vi, vj] = C[vi, vj] + ...

The init may also run in a loop nest of its own right before the update's, whose
loops are the update's outer loops (same starts and extents): every element then holds
its initial value before the first update, so the update may read no other element of
its accumulator.

The merge keeps what the program computes when: the init block (or its own nest) comes
right before the loop nest of the update in the same sequence (nothing runs between
them); its
iterators are all spatial, bound as some of the update's spatial iterators are (so it
writes the element the update accumulates into); its body is one store whose value
reads nothing the update writes; neither block has a predicate; and the update's
loops under that point all feed its reduction iterators, with constant positive
extents and non-negative steps, so that the iteration where every reduction iterator
is at its minimum -- where ``T.init()`` runs -- is the first of each nest, once.
"""

from __future__ import annotations

import attrs

from tilelang.arith import Analyzer, linear_form
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import post_order_visit, substitute
from tilelang.ir.var_usage import uses_any_var
from tilelang.schedule.common import find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree, rewrite

PRIMITIVE = "merge_reduction"


def merge_reduction(func, init_name: str, update_name: str):
    """Returns the function with block ``init_name`` merged into ``update_name`` as its
    ``T.init()`` (see the module docstring); ScheduleError names what prevents it."""
    tree = Tree(func)
    init = find_block(tree, init_name, PRIMITIVE)
    update = find_block(tree, update_name, PRIMITIVE)
    subject = f"blocks {init_name!r} and {update_name!r}"

    def refuse(reason, node=None):
        return schedule_error(PRIMITIVE, subject, reason, node)

    _check_blocks(init, update, refuse)
    init, inner = _placement(tree, init, update, refuse)
    _check_reduction_loops(update, inner, refuse)
    mapping = _iterator_map(init, update, refuse)
    store, target = init.block.body, update.block.body
    for mine, theirs in zip(store.indices, target.indices):
        if not _same(substitute(mine, mapping), theirs):
            indices = ", ".join(map(str, store.indices))
            raise refuse(
                f"{init_name!r} writes {store.buffer.name}[{indices}], not the element "
                f"{update_name!r} accumulates into",
                init,
            )
    new_init = S.BufferStore(target.buffer, substitute(store.value, mapping), target.indices)
    # the update's regions (it reads what it accumulates into, as TVM's reduction
    # blocks do), and what the init's value reads
    known = {r.buffer for r in update.block.reads}
    extra = tuple(substitute(r, mapping) for r in init.block.reads if r.buffer not in known)
    merged = attrs.evolve(update.block, init=new_init, reads=(*update.block.reads, *extra))
    func = rewrite(func, {id(update.block): merged})
    tree = Tree(func)
    head, _ = _own_loops(tree, tree.realizes[init_name][0])
    seq = tree.parent_of(head)
    return rewrite(func, {id(seq): S.seq_stmt(*[s for s in seq.seq if s is not head])})


def _same(a, b) -> bool:
    return _is_zero(Analyzer().simplify(binary("sub", a, b)))


def _is_zero(expr) -> bool:
    return const_int_value(expr) == 0


def _check_blocks(init, update, refuse) -> None:
    ib, ub = init.block, update.block
    if ub.init is not None:
        raise refuse(f"{ub.name_hint!r} already has a T.init()", update)
    if not any(iv.iter_type == S.IterVar.CommReduce for iv in ub.iter_vars):
        raise refuse(f"{ub.name_hint!r} has no reduction iterator", update)
    if any(iv.iter_type != S.IterVar.DataPar for iv in ib.iter_vars):
        raise refuse(f"{ib.name_hint!r} has iterators that are not spatial", init)
    for realize in (init, update):
        block = realize.block
        if not isinstance(block.body, S.BufferStore) or block.body.predicate is not None:
            raise refuse(
                f"the body of {block.name_hint!r} is not a single (unmasked) store", realize
            )
        if block.alloc_buffers or block.match_buffers or const_int_value(realize.predicate) != 1:
            raise refuse(
                f"{block.name_hint!r} allocates, matches buffers or has a predicate", realize
            )
    if ib.init is not None:
        raise refuse(f"{ib.name_hint!r} has a T.init() of its own", init)
    buffer = ub.body.buffer
    if ib.body.buffer is not buffer:
        raise refuse(f"{ib.name_hint!r} writes {ib.body.buffer.name}, not {buffer.name}", init)
    reads = []
    post_order_visit(
        ib.body.value,
        lambda n: reads.append(n) if isinstance(n, E.BufferLoad) and n.buffer is buffer else None,
    )
    if reads:
        raise refuse(f"the value {ib.name_hint!r} stores reads {buffer.name}", init)


def _own_loops(tree, init):
    """The statement holding the init alone -- the init itself, or the outermost of the
    loops whose only statement it is -- and those loops, outermost first."""
    head, own = init, []
    parent = tree.parent_of(head)
    while isinstance(parent, S.For):
        own.insert(0, parent)
        head, parent = parent, tree.parent_of(parent)
    return head, own


def _placement(tree, init, update, refuse):
    """The init (its loops, when it has its own, renamed to the update's) and the
    update's loops under the point the init runs at (a perfect nest). The init comes
    right before the update's loop nest, under the same loops (SEED §8) or in a nest
    of its own whose loops are the update's outer loops (same starts and extents)."""
    head, own = _own_loops(tree, init)
    seq = tree.parent_of(head)
    if not isinstance(seq, S.SeqStmt):
        raise refuse(f"{init.block.name_hint!r} is not followed by the update's loops", init)
    position = next(i for i, s in enumerate(seq.seq) if s is head)
    if position + 1 >= len(seq.seq):
        raise refuse(f"nothing follows {init.block.name_hint!r}", init)
    node, nest = seq.seq[position + 1], []
    while isinstance(node, S.For):
        nest.append(node)
        node = node.body
    if node is not update:
        raise refuse(
            f"{update.block.name_hint!r} is not the only statement of the loop nest right "
            f"after {init.block.name_hint!r}",
            update,
        )
    if not own:
        return init, nest
    if len(nest) < len(own) or not all(
        _same(mine.min, theirs.min)
        and _same(mine.extent, theirs.extent)
        and mine.step is None
        and theirs.step is None
        for mine, theirs in zip(own, nest)
    ):
        raise refuse(
            f"the loops of {init.block.name_hint!r} are not the outer loops of "
            f"{update.block.name_hint!r}'s nest",
            init,
        )
    _check_reads_own_element(update, refuse)
    rename = {mine.loop_var: theirs.loop_var for mine, theirs in zip(own, nest)}
    values = tuple(substitute(v, rename) for v in init.iter_values)
    return attrs.evolve(init, iter_values=values), nest[len(own) :]


def _check_reads_own_element(update, refuse) -> None:
    """Initialised in a nest of its own, every element holds its initial value before
    the first update; merged, only the element being reduced does: the update may read
    no other element of its accumulator."""
    store = update.block.body
    loads = []
    post_order_visit(
        store.value,
        lambda n: (
            loads.append(n) if isinstance(n, E.BufferLoad) and n.buffer is store.buffer else None
        ),
    )
    for load in loads:
        if not all(_same(a, b) for a, b in zip(load.indices, store.indices)):
            raise refuse(
                f"{update.block.name_hint!r} reads other elements of {store.buffer.name} "
                "than the one it accumulates into",
                update,
            )


def _check_reduction_loops(update, inner, refuse) -> None:
    block = update.block
    spatial = [v for iv, v in zip(block.iter_vars, update.iter_values)
               if iv.iter_type == S.IterVar.DataPar]  # fmt: skip
    reduce = [(iv, v) for iv, v in zip(block.iter_vars, update.iter_values)
              if iv.iter_type == S.IterVar.CommReduce]  # fmt: skip
    loop_vars = [lp.loop_var for lp in inner]
    for loop in inner:
        extent, start = const_int_value(loop.extent), const_int_value(loop.min)
        if extent is None or extent < 1 or start is None or loop.step is not None:
            raise refuse(
                f"loop {loop.loop_var.name} has no constant positive extent; the first "
                "reduction step could not be told",
                loop,
            )
        if any(uses_any_var(v, [loop.loop_var]) for v in spatial):
            raise refuse(f"loop {loop.loop_var.name} carries a spatial iterator", loop)
        if not any(uses_any_var(v, [loop.loop_var]) for _, v in reduce):
            raise refuse(
                f"loop {loop.loop_var.name} does not move a reduction iterator (the init "
                "would run on each of its iterations)",
                loop,
            )
    starts = {lp.loop_var: lp.min for lp in inner}
    for iv, value in reduce:
        if not uses_any_var(value, loop_vars):
            raise refuse(f"the reduction iterator {iv.var.name} is bound outside the nest", update)
        form = linear_form(value)
        for atom, coeff in form.live_terms():
            if not (isinstance(atom, E.Var) and atom in starts and coeff > 0):
                raise refuse(
                    f"the binding of {iv.var.name} is not increasing in the nest's loops", update
                )
        first = const_int_value(Analyzer().simplify(substitute(value, starts)))
        if first != const_int_value(iv.dom.min):
            raise refuse(f"the first step of the nest is not the minimum of {iv.var.name}", update)


def _iterator_map(init, update, refuse) -> dict:
    """Each init iterator -> the update's spatial iterator bound to the same value."""
    spatial = [(iv, v) for iv, v in zip(update.block.iter_vars, update.iter_values)
               if iv.iter_type == S.IterVar.DataPar]  # fmt: skip
    mapping = {}
    for iv, value in zip(init.block.iter_vars, init.iter_values):
        match = next((u for u, v in spatial if _same(value, v)), None)
        if match is None:
            raise refuse(
                f"{init.block.name_hint!r}'s iterator {iv.var.name} is bound to {value}, "
                f"which no spatial iterator of {update.block.name_hint!r} is",
                init,
            )
        mapping[iv.var] = match.var
    return mapping


__all__ = ["merge_reduction"]

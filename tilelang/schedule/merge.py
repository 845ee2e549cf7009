"""merge: loop nests of the same shape, side by side in one scope, become one nest
whose body runs each original body in turn.

Before / after ``merge(i_c, i_d)`` (two loops of extent 8 whose chains up to their
common parent have the same extents)::

    for i_c in range(8):                     for i_c_m in range(8):
        for j in range(16):                      for j in range(16):
            with T.block("C"): ...                   with T.block("C"): ...   # i_c -> i_c_m
    for i_d in range(8):                         for j in range(8):
        for j in range(8):                           with T.block("D"): ...   # i_d -> i_c_m
            with T.block("D"): ...

Each given loop is taken with the loops above it up to the loops' lowest common
ancestor; those chains must have the same depth and extents, start at 0, carry no
annotation or thread binding, and each loop of a chain must be the only child of
the one above. The merged nest (variables ``<first chain's names>_m``) stands where
the last chain stood. As merging interleaves the nests' iterations and moves the
earlier ones past what lies between, the nests must not depend on each other nor on
the statements they move past.
"""

from __future__ import annotations

from tilelang.arith import const_value
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import substitute
from tilelang.schedule.common import find_loop, loop_subject
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.regions import conflicts
from tilelang.schedule.state import REMOVE, Tree, rewrite


def _chain(tree, loop, lca, subject):
    """The loops from ``loop`` up to (not including) ``lca``, innermost first."""
    chain, node = [loop], tree.parent_of(loop)
    while node is not lca:
        if isinstance(node, (S.Block, S.BlockRealize)):
            raise schedule_error("merge", subject, "the loops are not under the same block scope")
        if isinstance(node, S.For):
            chain.append(node)
        node = tree.parent_of(node)
    for inner, outer in zip(chain, chain[1:]):
        if outer.body is not inner:
            raise schedule_error(
                "merge", subject,
                f"loop {inner.loop_var.name} is not the only child of loop {outer.loop_var.name}",
                outer,
            )  # fmt: skip
    for lp in chain:
        if lp.annotations or lp.thread_binding or lp.kind is not S.ForKind.SERIAL:
            raise schedule_error(
                "merge", subject,
                f"loop {lp.loop_var.name} is not a plain serial loop (it has a kind, "
                "annotations or a thread binding)",
                lp,
            )  # fmt: skip
        if const_value(lp.min) != 0:
            raise schedule_error(
                "merge", subject, f"loop {lp.loop_var.name} starts at {lp.min}, not 0", lp
            )
    return chain


def _lca(tree, loops):
    paths = [tree.ancestors(lp) for lp in loops]
    common = None
    for nodes in zip(*paths):
        if all(n is nodes[0] for n in nodes):
            common = nodes[0]
        else:
            break
    return common


def merge(func, loop_vars):
    """Returns ``(new_func, merged loop variable)``: the one standing for the given
    loops (the innermost of the merged nest)."""
    tree = Tree(func)
    loops = [find_loop(tree, var, "merge") for var in loop_vars]
    subject = ", ".join(loop_subject(lp) for lp in loops)
    if len(loops) < 2 or len({id(lp) for lp in loops}) != len(loops):
        raise schedule_error("merge", subject, "needs two or more distinct loops")
    for lp in loops:
        if any(tree.is_ancestor(lp, other) for other in loops):
            raise schedule_error("merge", subject, f"loop {lp.loop_var.name} contains another")
    lca = _lca(tree, loops)
    chains = [_chain(tree, lp, lca, subject) for lp in loops]
    first = chains[0]
    for chain in chains[1:]:
        if len(chain) != len(first):
            raise schedule_error(
                "merge", subject,
                f"the loops are at different depths below their common parent ({len(first)} "
                f"and {len(chain)} loops)",
            )  # fmt: skip
        for a, b in zip(first, chain):
            if const_value(a.extent) is None or const_value(a.extent) != const_value(b.extent):
                raise schedule_error(
                    "merge", subject,
                    f"loops {a.loop_var.name} and {b.loop_var.name} have different extents "
                    f"({a.extent} and {b.extent})",
                )  # fmt: skip
    _check_independent(tree, lca, chains, subject)
    new_vars = [E.Var(f"{lp.loop_var.name}_m", lp.loop_var.dtype) for lp in first]
    bodies = []
    for chain in chains:
        vmap = {lp.loop_var: var for lp, var in zip(chain, new_vars)}
        bodies.append(substitute(chain[0].body, vmap))
    nest = S.seq_stmt(*bodies)
    for lp, var in zip(first, new_vars):
        nest = S.For(var, E.IntImm(var.dtype, 0), lp.extent, S.ForKind.SERIAL, nest)
    mapping = {id(chain[-1]): REMOVE for chain in chains[:-1]}
    mapping[id(chains[-1][-1])] = nest
    return rewrite(func, mapping), new_vars[0]


def _check_independent(tree, lca, chains, subject):
    groups = [tree.blocks_under(chain[-1]) for chain in chains]
    for i, group in enumerate(groups):
        for other in groups[i + 1 :]:
            for a in group:
                for b in other:
                    shared = conflicts(a, b)
                    if shared:
                        raise schedule_error(
                            "merge", subject,
                            f"blocks {a.block.name_hint!r} and {b.block.name_hint!r} depend on "
                            f"each other through {sorted(x.name for x in shared)}",
                        )  # fmt: skip
    items = lca.seq if isinstance(lca, S.SeqStmt) else []
    tops = [next((k for k, it in enumerate(items) if it is chain[-1]), None) for chain in chains]
    if None in tops:
        return
    last = tops[-1]
    for k in range(min(tops), last):
        if k in tops:
            continue
        for between in tree.blocks_under(items[k]):
            for group, top in zip(groups, tops):
                if top >= last:
                    continue
                for a in group:
                    shared = conflicts(a, between) if top < k else set()
                    if shared:
                        raise schedule_error(
                            "merge", subject,
                            f"block {a.block.name_hint!r} would move past "
                            f"{between.block.name_hint!r}, which shares "
                            f"{sorted(x.name for x in shared)}",
                        )  # fmt: skip

"""Loop primitives: split, fuse, reorder, and the loop kinds (parallel, vectorize,
unroll, bind).

Each function takes a PrimFunc and resolved targets (loop variables) and returns the
new PrimFunc; it raises :class:`~tilelang.ScheduleError` before building anything
when a precondition fails.
"""

from __future__ import annotations

from contextlib import ExitStack

import attrs
import numpy as np

from tilelang.analysis import get_block_access_region
from tilelang.arith import Analyzer, const_value, simplify
from tilelang.arith.iter_map import (
    detect_iter_map,
    iter_map_simplify,
    normal_form,
    product,
    split_expr,
)
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.var_usage import uses_any_var
from tilelang.schedule.common import (
    and_predicate,
    find_loop,
    is_reduction_binding,
    loop_subject,
    map_realizes,
    substitute_bindings,
)
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.regions import buffers_of
from tilelang.schedule.state import Tree, rewrite


def _check_plain_loop(primitive: str, loop: S.For) -> None:
    if const_value(loop.min) != 0:
        raise schedule_error(primitive, loop_subject(loop), "the loop must start at 0", loop)
    if loop.step is not None:
        raise schedule_error(primitive, loop_subject(loop), "strided loops are not supported", loop)
    # As TVM: the kind or annotations of a loop would be lost (or wrongly copied)
    # when it is split or fused.
    if loop.kind is not S.ForKind.SERIAL:
        raise schedule_error(
            primitive, loop_subject(loop), f"the loop is {loop.kind.tag}, not serial", loop
        )
    if loop.annotations:
        raise schedule_error(
            primitive,
            loop_subject(loop),
            f"the loop has annotations {sorted(loop.annotations)}",
            loop,
        )


def split(func, var, factors, preserve_unit_iters=True, disable_predication=False):
    """Split a loop into ``len(factors)`` nested loops (one factor may be None).

    Before / after ``split(j, factors=[None, 4])`` of a 128-loop::

        for i, j in T.grid(128, 128):            for i, j_0, j_1 in T.grid(128, 32, 4):
            with T.block("C"):                       with T.block("C"):
                vj = T.axis.spatial(128, j)              vj = T.axis.spatial(128, j_0 * 4 + j_1)

    When the factors do not divide the extent the block gets a predicate,
    e.g. 16 by ``[7, 10]`` adds ``T.where(i_0 * 10 + i_1 < 16)``.

    Returns ``(new_func, new_loop_vars)``.
    """
    tree = Tree(func)
    loop = find_loop(tree, var, "split")
    _check_plain_loop("split", loop)
    subject = loop_subject(loop)
    if len(factors) < 2:
        raise schedule_error("split", subject, "needs at least two factors", loop)
    # T.int64(10) and NumPy integers are factors too; the new loops take the
    # loop's type (TVM's int64 splits).
    factors = [_int_factor(f) for f in factors]
    holes = [i for i, f in enumerate(factors) if f is None]
    if len(holes) > 1:
        raise schedule_error("split", subject, "at most one factor may be None", loop)
    for f in factors:
        if f is not None and (not isinstance(f, int) or isinstance(f, bool) or f <= 0):
            raise schedule_error("split", subject, f"factor {f!r} is not a positive integer", loop)
    dtype = loop.loop_var.dtype
    extent = const_value(loop.extent)
    known = 1
    for f in factors:
        known *= f if f is not None else 1
    factor_exprs = []
    for f in factors:
        if f is not None:
            factor_exprs.append(E.IntImm(dtype, f))
        elif extent is not None:
            factor_exprs.append(E.IntImm(dtype, -(-extent // known)))
        else:
            # simplified as TVM does: ``(n * 32 + 31) // 32`` is ``n``
            factor_exprs.append(
                simplify(E.FloorDiv(loop.extent + (known - 1), E.IntImm(dtype, known)))
            )
    if not holes and extent is not None and known < extent:
        raise schedule_error(
            "split",
            subject,
            f"the factors {list(factors)} multiply to {known}, less than the extent {extent}",
            loop,
        )
    new_vars = [E.Var(f"{loop.loop_var.name}_{i}", dtype) for i in range(len(factors))]
    value = None
    for new_var, f, fe in zip(new_vars, factors, factor_exprs):
        term = new_var if (preserve_unit_iters or f != 1) else E.IntImm(dtype, 0)
        value = term if value is None else value * fe + term
    total = None
    for fe in factor_exprs:
        total = fe if total is None else total * fe
    perfect = _always_less(value, loop.extent, zip(new_vars, factor_exprs)) or (
        const_value(simplify(total - loop.extent)) == 0
    )
    body = substitute_bindings(loop.body, {loop.loop_var: value}, simplify_changed=perfect)
    if not perfect and not disable_predication:
        guard = value < loop.extent
        body = map_realizes(
            body, lambda r: attrs.evolve(r, predicate=and_predicate(r.predicate, guard))
        )
    for new_var, fe in reversed(list(zip(new_vars, factor_exprs))):
        body = S.For(new_var, E.IntImm(dtype, 0), fe, S.ForKind.SERIAL, body)
    new_func = rewrite(func, {id(loop): body})
    if not perfect:
        new_func = _affine_bindings(new_func, body, new_vars)
    return new_func, new_vars


def _affine_bindings(func, top, new_vars):
    """The bindings of the blocks under loop ``top`` that use ``new_vars`` in the
    iterator map's normal form (``(i_0 * 2 + i_1) * 3 + i_2`` becomes
    ``i_0 * 6 + i_1 * 3 + i_2``) where, with the block's predicate, they form one, as
    TVM's split simplifies them; left as substituted otherwise."""
    tree = Tree(func)
    mapping = {}
    for realize in tree.blocks_under(top):
        if not any(uses_any_var(v, new_vars) for v in realize.iter_values):
            continue
        iters = {lp.loop_var: Range(lp.min, lp.extent) for lp in tree.loops_above(realize)}
        result = detect_iter_map(realize.iter_values, iters, realize.predicate)
        if result.indices is None:
            continue
        values = tuple(normal_form(s) for s in result.indices)
        mapping[id(realize)] = attrs.evolve(realize, iter_values=values)
    return rewrite(func, mapping) if mapping else func


def _int_factor(f):
    if isinstance(f, E.IntImm) and f.dtype.is_integer() and f.dtype.lanes == 1:
        return f.value
    if isinstance(f, np.integer):
        return int(f)
    return f


def _always_less(value, bound, loops) -> bool:
    """True when ``value < bound`` while each ``(var, extent)`` of ``loops`` runs over
    ``range(extent)``."""
    analyzer = Analyzer()
    with ExitStack() as scope:
        for var, extent in loops:
            scope.enter_context(analyzer.bind_range(var, E.IntImm(var.dtype, 0), extent))
        return analyzer.can_prove(value < bound)


def _chain(tree: Tree, loops: list, primitive: str) -> list:
    """``loops`` ordered outermost first; they must lie on one ancestor path."""
    ordered = sorted(loops, key=lambda lp: len(tree.ancestors(lp)))
    for outer, inner in zip(ordered, ordered[1:]):
        if not tree.is_ancestor(outer, inner):
            raise schedule_error(
                primitive,
                f"loops {outer.loop_var.name} and {inner.loop_var.name}",
                "the loops are not nested in one another (they must form one chain)",
                tree.func.body,
            )
    return ordered


def fuse(func, variables, preserve_unit_iters=True):
    """Fuse directly nested loops into one loop named ``i_j_fused``.

    Before / after ``fuse(i, j)``::

        for i, j in T.grid(4, 8):                for i_j_fused in range(32):
            with T.block("C"):                       with T.block("C"):
                vi = T.axis.spatial(4, i)                vi = T.axis.spatial(4, i_j_fused // 8)
                vj = T.axis.spatial(8, j)                vj = T.axis.spatial(8, i_j_fused % 8)

    Returns ``(new_func, fused_loop_var)``.
    """
    tree = Tree(func)
    if len(variables) < 2:
        raise schedule_error("fuse", "loops", "needs at least two loops")
    if len({id(v) for v in variables}) != len(variables):
        raise schedule_error("fuse", "loops", "a loop is given twice")
    loops = [find_loop(tree, v, "fuse") for v in variables]
    for outer, inner in zip(loops, loops[1:]):
        if outer.body is not inner:
            raise schedule_error(
                "fuse",
                loop_subject(inner),
                f"is not the only statement directly inside loop {outer.loop_var.name}; "
                "fuse needs consecutive, perfectly nested loops given outermost first",
                outer,
            )
    for loop in loops:
        _check_plain_loop("fuse", loop)
        if uses_any_var(loop.extent, [lp.loop_var for lp in loops]):
            raise schedule_error("fuse", loop_subject(loop), "its extent depends on a fused loop")
    dtype = loops[0].loop_var.dtype
    if any(lp.loop_var.dtype != dtype for lp in loops):
        raise schedule_error("fuse", loop_subject(loops[0]), "the loop variables differ in type")
    fused = E.Var("_".join(lp.loop_var.name for lp in loops) + "_fused", dtype)
    # Each loop is a slice of the fused iterator, in TVM's normal form
    # (``f // 16384``, ``f % 16384 // 128``, ``f % 128``; ``f % (n * 128) // n``).
    extents = [lp.extent for lp in loops]
    total = product(extents, dtype)
    vmap = {}
    for k, loop in enumerate(loops):
        value = split_expr(fused, product(extents[k + 1 :], dtype), loop.extent, total)
        if not preserve_unit_iters and const_value(loop.extent) == 1:
            value = E.IntImm(dtype, 0)
        vmap[loop.loop_var] = value
    slices = {id(v) for v in vmap.values()}

    def normalise(realize):
        values = tuple(
            v
            if id(v) in slices or not uses_any_var(v, [fused])
            else _fused_binding(v, fused, total)
            for v in realize.iter_values
        )
        if all(a is b for a, b in zip(values, realize.iter_values)):
            return realize
        return attrs.evolve(realize, iter_values=values)

    body = map_realizes(substitute_bindings(loops[-1].body, vmap, False), normalise)
    # the extent simplified, as TVM's fuse does (``(min(31, e) + 1) * 128`` is
    # ``min(31, e) * 128 + 128``)
    extent = total if const_value(total) is not None else simplify(total)
    new_loop = S.For(fused, E.IntImm(dtype, 0), extent, S.ForKind.SERIAL, body)
    return rewrite(func, {id(loops[0]): new_loop}), fused


def _fused_binding(value, fused, total):
    """A binding over the fused loop in the iterator map's normal form when it is
    one, else simplified."""
    if const_value(total) is None:
        return simplify(value)
    (out,) = iter_map_simplify([value], {fused: Range(E.IntImm(total.dtype, 0), total)})
    return out


def reorder(func, variables):
    """Reorder loops of one perfectly nested chain; loops not named keep their places.

    Before / after ``reorder(j_0, k, j_1)``::

        for i, j_0, j_1, k in T.grid(128, 32, 4, 128):
        for i, j_0, k, j_1 in T.grid(128, 32, 128, 4):
    """
    tree = Tree(func)
    if len({id(v) for v in variables}) != len(variables):
        raise schedule_error("reorder", "loops", "a loop is given twice")
    loops = [find_loop(tree, v, "reorder") for v in variables]
    ordered = _chain(tree, loops, "reorder")
    top, bottom = ordered[0], ordered[-1]
    chain = [top]
    while chain[-1] is not bottom:
        body = chain[-1].body
        if not isinstance(body, S.For):
            raise schedule_error(
                "reorder",
                loop_subject(chain[-1]),
                "its body is not a single loop, so the loops to reorder are not one "
                "perfectly nested chain",
                chain[-1],
            )
        chain.append(body)
    picked = {id(lp) for lp in loops}
    queue = iter(loops)
    new_chain = [next(queue) if id(lp) in picked else lp for lp in chain]
    for i, loop in enumerate(new_chain):
        inner_vars = [lp.loop_var for lp in new_chain[:i]]
        outer_vars = [lp.loop_var for lp in new_chain[i + 1 :]]
        for bound in (loop.min, loop.extent):
            if uses_any_var(bound, outer_vars) and not uses_any_var(bound, inner_vars):
                raise schedule_error(
                    "reorder",
                    loop_subject(loop),
                    "its range depends on a loop that would move inside it",
                    top,
                )
    _check_affine_blocks(tree, top, bottom)
    body = bottom.body
    for loop in reversed(new_chain):
        body = attrs.evolve(loop, body=body)
    return rewrite(func, {id(top): body})


def _check_affine_blocks(tree, top, bottom):
    """As TVM's reorder: every block under the loops has only spatial and reduction
    iterators, bound affinely (an iterator map, predicate included) to the loops
    from ``top`` down; loops outside ``top`` count as constants."""
    for realize in tree.blocks_under(bottom):
        subject = f"block {realize.block.name_hint!r}"
        for iv in realize.block.iter_vars:
            if iv.iter_type not in (S.IterVar.DataPar, S.IterVar.CommReduce):
                raise schedule_error(
                    "reorder",
                    subject,
                    f"iterator {iv.var.name} is neither spatial nor reduction",
                    realize,
                )
        loops = [lp for lp in tree.ancestors(realize) if isinstance(lp, S.For)]
        loops = [lp for lp in loops if lp is top or tree.is_ancestor(top, lp)]
        iters = {lp.loop_var: Range(lp.min, lp.extent) for lp in loops}
        result = detect_iter_map(realize.iter_values, iters, realize.predicate)
        if result.indices is None:
            raise schedule_error(
                "reorder",
                subject,
                f"its bindings are not affine in the loops: {result.errors[0]}",
                realize,
            )


THREAD_AXES = (
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "vthread",
    "vthread.x",
    "vthread.y",
    "vthread.z",
)


def set_loop_kind(func, var, kind: S.ForKind, primitive: str, thread: str | None = None):
    """``parallel`` / ``vectorize`` / ``unroll`` / ``bind``: change a loop's kind.

    Before / after ``parallel(i)``::

        for i in range(128):                     for i in T.parallel(128):

    ``bind(i, "threadIdx.x")`` gives ``for i in T.thread_binding(128, thread="threadIdx.x")``.
    Parallel, vectorized and bound loops may not carry a reduction iterator, except a
    loop bound to ``threadIdx.x/y/z`` (a cross-thread reduction, as TVM allows).
    """
    tree = Tree(func)
    loop = find_loop(tree, var, primitive)
    subject = loop_subject(loop)
    # a reduction loop may be bound to threadIdx: a cross-thread reduction (TVM)
    cross_thread = kind is S.ForKind.THREAD_BINDING and str(thread).startswith("threadIdx.")
    if kind is not S.ForKind.UNROLLED:
        for realize in tree.blocks_under(loop):
            iv = is_reduction_binding(realize, loop.loop_var)
            if iv is not None and not cross_thread:
                raise schedule_error(
                    primitive,
                    subject,
                    f"the loop is bound to the reduction iterator {iv.var.name} of block "
                    f"{realize.block.name_hint!r}; only spatial loops can be {kind.tag}",
                    loop,
                )
        if loop.step is not None:
            raise schedule_error(primitive, subject, "strided loops are not supported", loop)
        _check_compact_dataflow(tree, loop, primitive, subject)
    if kind is S.ForKind.VECTORIZED and const_value(loop.extent) is None:
        raise schedule_error(primitive, subject, "a vectorized loop needs a constant extent", loop)
    if kind is S.ForKind.THREAD_BINDING:
        if thread not in THREAD_AXES:
            raise schedule_error(
                primitive, subject, f"unknown thread axis {thread!r}; use one of {THREAD_AXES}"
            )
    new_loop = attrs.evolve(loop, kind=kind, thread_binding=thread)
    new_func = rewrite(func, {id(loop): new_loop})
    if kind is S.ForKind.THREAD_BINDING:
        _check_thread_extents(new_func, primitive, subject)
    return new_func


def _check_compact_dataflow(tree, loop, primitive, subject):
    """TVM's compact data flow: each block directly under the loop is *complete*
    (spatial iterators only, reads none of what it writes) or a *reduction* (an
    init, affine bindings, writes indexed by spatial iterators only)."""
    scope = tree.scope_realize(loop)
    for realize in tree.blocks_under(loop):
        if tree.scope_realize(realize) is not scope:
            continue  # a nested block: its enclosing block is checked instead
        block = realize.block
        why = None
        kinds = {iv.iter_type for iv in block.iter_vars}
        reads, writes = buffers_of(realize)
        if not kinds <= {S.IterVar.DataPar, S.IterVar.CommReduce}:
            why = "it has iterators that are neither spatial nor reduction"
        elif block.init is None:
            if S.IterVar.CommReduce in kinds or reads & writes:
                why = "it is neither complete nor a reduction (it reads what it writes)"
        else:
            why = _reduction_problem(tree, realize)
        if why is not None:
            raise schedule_error(
                primitive, subject, f"block {block.name_hint!r} under it: {why}", realize
            )


def _reduction_problem(tree, realize):
    block = realize.block
    iters = {lp.loop_var: Range(lp.min, lp.extent) for lp in tree.loops_above(realize)}
    result = detect_iter_map(realize.iter_values, iters, realize.predicate)
    if result.indices is None:
        return f"its bindings are not quasi-affine ({result.errors[0]})"
    reduce_vars = [iv.var for iv in block.iter_vars if iv.iter_type == S.IterVar.CommReduce]
    for region in get_block_access_region(block)[1]:
        if any(uses_any_var(r.min, reduce_vars) for r in region.region):
            return f"it writes {region.buffer.name} at an index of a reduction iterator"
    return None


def _check_thread_extents(func, primitive: str, subject: str) -> None:
    """Within one kernel (a top-level loop nest) each thread axis has one extent."""
    tree = Tree(func)
    kernels: dict[int, dict] = {}
    for loop in tree.loops.values():
        if loop.kind is not S.ForKind.THREAD_BINDING:
            continue
        kernel = next((a for a in tree.ancestors(loop) if isinstance(a, S.For)), loop)
        seen = kernels.setdefault(id(kernel), {})
        extent = const_value(loop.extent)
        previous = seen.setdefault(loop.thread_binding, (extent, loop))
        if previous[0] != extent:
            raise schedule_error(
                primitive,
                subject,
                f"{loop.thread_binding} would have extent {extent} at loop "
                f"{loop.loop_var.name} but {previous[0]} at loop "
                f"{previous[1].loop_var.name} in the same kernel",
                kernel,
            )


def annotate_loop(func, var, key: str, value, primitive="annotate"):
    """A loop with ``annotations[key] = value`` (printed ``annotations={...}``)."""
    tree = Tree(func)
    loop = find_loop(tree, var, primitive)
    return rewrite(
        func, {id(loop): attrs.evolve(loop, annotations={**loop.annotations, key: value})}
    )


def unannotate_loop(func, var, key: str):
    tree = Tree(func)
    loop = find_loop(tree, var, "unannotate")
    if key not in loop.annotations:
        raise schedule_error("unannotate", loop_subject(loop), f"has no annotation {key!r}", loop)
    kept = {k: v for k, v in loop.annotations.items() if k != key}
    return rewrite(func, {id(loop): attrs.evolve(loop, annotations=kept)})

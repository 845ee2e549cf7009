"""rfactor: a reduction split into independent partial reductions over a new
spatial axis, and a block that combines them.

Before / after ``rfactor(k_1, 0)`` on ``C[vi] += A[vi, vk]`` with ``k`` split by 4::

    for i, k_0, k_1 in T.grid(8, 4, 4):      C_rf = T.alloc_buffer((4, 8))
        with T.block("C"):                   for i, k_0, k_1 in T.grid(8, 4, 4):
            vi = T.axis.spatial(8, i)            with T.block("C_rf"):
            vk = T.axis.reduce(16, ...)              vk_1, vi, vk_0 = T.axis.remap("SSR", ...)
            with T.init():                           with T.init():
                C[vi] = T.float32(0)                     C_rf[vk_1, vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]                C_rf[vk_1, vi] = C_rf[vk_1, vi] + A[...]
                                             for i, k_1 in T.grid(8, 4):
                                                 with T.block("C"):
                                                     vk_1, vi = T.axis.remap("RS", [k_1, i])
                                                     with T.init():
                                                         C[vi] = T.float32(0)
                                                     C[vi] = C[vi] + C_rf[vk_1, vi]

The partial results live in ``<buffer>_rf``: the written buffer's shape with the
factored loop's extent inserted at ``factor_axis``. Since the factored axis is
spatial in ``<block>_rf``, its loop can then be parallelised or vectorised.
"""

from __future__ import annotations

import attrs

from tilelang.analysis import get_block_access_region
from tilelang.arith import const_value, detect_iter_map
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range, decl_buffer
from tilelang.ir.functor import substitute
from tilelang.ir.var_usage import uses_any_var
from tilelang.schedule.cache import rewrite_stmt
from tilelang.schedule.common import block_subject, find_loop, fresh_name, loop_subject
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import _with_regions
from tilelang.schedule.rfactor_reducer import match_reduction
from tilelang.schedule.state import Tree, rewrite


def rfactor(func, loop_var, factor_axis: int):
    """Factors the reduction of the single block under loop ``loop_var`` along that
    loop (see the module docstring). Returns ``(new_func, rf_block_name)``; the
    original block name now names the write-back block."""
    tree = Tree(func)
    loop = find_loop(tree, loop_var, "rfactor")
    realize = _single_block(tree, loop)
    subject = block_subject(realize)
    block = realize.block
    red = match_reduction(subject, realize)
    loops = tree.loops_above(realize)
    _check_loops(subject, realize, loops, loop)
    first = red.buffers[0]
    ndim = len(first.shape)
    if not isinstance(factor_axis, int) or isinstance(factor_axis, bool):
        raise schedule_error("rfactor", subject, f"factor_axis {factor_axis!r} is not an int")
    if not -(ndim + 1) <= factor_axis <= ndim:
        raise schedule_error(
            "rfactor",
            subject,
            f"factor_axis {factor_axis} is out of range for the {ndim + 1}-d buffer "
            f"{first.name}_rf",
        )
    axis = factor_axis % (ndim + 1)

    rf_name = fresh_name(set(tree.realizes), f"{block.name_hint}_rf")
    taken = _buffer_names(tree)
    rf_buffers = []
    for buffer in red.buffers:
        shape = list(buffer.shape)
        shape.insert(axis, loop.extent)
        name = fresh_name(taken, f"{buffer.name}_rf")
        taken.add(name)
        # TVM copies the buffer's type: a constant offset (its type too) carries over
        offset = buffer.elem_offset if isinstance(buffer.elem_offset, E.IntImm) else None
        rf_buffers.append(
            decl_buffer(tuple(shape), buffer.dtype, name, elem_offset=offset, scope=buffer.scope)
        )

    rf_realize, rf_var = _rf_block(rf_name, realize, loops, loop, red, rf_buffers, axis)
    own = next(k for k, lp in enumerate(loops) if _only(tree.blocks_under(lp), realize))
    _check_shared_loops(subject, realize, loops[:own])
    wb_nest = _write_back(realize, loops[own:], loop, red, rf_buffers, rf_var, axis)
    if own > 0 and _hoistable(tree, realize, loops[0]):
        # As TVM: the partial reductions run first, in a copy of the whole loop nest,
        # and the write-back takes the block's place, before any consumer there.
        rf_nest = _copy_chain(loops, rf_realize)
        top = loops[0]
        new_top = rewrite_stmt(top, {id(loops[own]): wb_nest})
        func = rewrite(func, {id(top): S.seq_stmt(rf_nest, new_top)})
    else:
        # The write-back goes right after the outermost loop holding only this block:
        # a consumer sharing an outer loop then reads the combined result.
        top = loops[own]
        rf_nest = rewrite_stmt(top, {id(realize): rf_realize})
        func = rewrite(func, {id(top): S.seq_stmt(rf_nest, wb_nest)})
    for rf_buffer in rf_buffers:
        func = _allocate(func, tree.scope_realize(realize), rf_buffer)
    return func, rf_name


def _hoistable(tree, realize, top) -> bool:
    """Whether the partial reductions may run before the whole nest ``top``: no other
    block in it writes what the block reads."""
    reads = {r.buffer for r in get_block_access_region(realize.block)[0]}
    for other in tree.blocks_under(top):
        if other is realize or tree.is_ancestor(realize, other):
            continue
        if {w.buffer for w in get_block_access_region(other.block)[1]} & reads:
            return False
    return True


def _copy_chain(loops, body):
    """The loops of ``loops`` (outermost first) around ``body`` alone, with fresh
    loop variables."""
    fresh = {lp.loop_var: E.Var(lp.loop_var.name, lp.loop_var.dtype) for lp in loops}
    body = substitute(body, fresh)
    for lp in reversed(loops):
        body = attrs.evolve(
            lp,
            loop_var=fresh[lp.loop_var],
            min=substitute(lp.min, fresh),
            extent=substitute(lp.extent, fresh),
            body=body,
        )
    return body


def _buffer_names(tree) -> set:
    """Names of the function's buffers (blocks have their own namespace, so the
    block ``C_rf`` and the buffer ``C_rf`` may coexist, as in TVM)."""
    names = {b.name for b in tree.func.buffer_map.values()}
    for realizes in tree.realizes.values():
        for r in realizes:
            names.update(b.name for b in r.block.alloc_buffers)
    return names


def _single_block(tree, loop):
    under = tree.blocks_under(loop)
    if len(under) != 1:
        names = ", ".join(repr(r.block.name_hint) for r in under) or "none"
        raise schedule_error(
            "rfactor",
            loop_subject(loop),
            f"needs exactly one block under the loop; found {names}",
            loop,
        )
    return under[0]


def _check_loops(subject, realize, loops, loop):
    """The factored loop carries only reduction iterators, no loop carries both kinds,
    and the nest is simple enough to copy for the write-back block."""
    block = realize.block
    spatial = [
        v
        for iv, v in zip(block.iter_vars, realize.iter_values)
        if iv.iter_type == S.IterVar.DataPar
    ]
    reduce = [
        v
        for iv, v in zip(block.iter_vars, realize.iter_values)
        if iv.iter_type != S.IterVar.DataPar
    ]
    name = loop.loop_var.name
    # as TVM, a loop no iterator reads (a unit loop left by fuse/split) may be
    # factored too: each of its iterations then holds a whole partial result
    if any(uses_any_var(v, [loop.loop_var]) for v in spatial):
        raise schedule_error(
            "rfactor", subject, f"loop {name} carries a spatial iterator of the block", loop
        )
    for lp in loops:
        if any(uses_any_var(v, [lp.loop_var]) for v in spatial) and any(
            uses_any_var(v, [lp.loop_var]) for v in reduce
        ):
            raise schedule_error(
                "rfactor",
                subject,
                f"loop {lp.loop_var.name} carries both spatial and reduction iterators",
                realize,
            )
    if not isinstance(realize.predicate, E.IntImm) or not realize.predicate.value:
        raise schedule_error(
            "rfactor", subject, "blocks with a T.where predicate are not supported", realize
        )
    for lp in loops:
        if lp.kind is not S.ForKind.SERIAL and any(uses_any_var(v, [lp.loop_var]) for v in reduce):
            raise schedule_error(
                "rfactor",
                subject,
                f"reduction loop {lp.loop_var.name} is {lp.kind.tag}, not serial",
                lp,
            )
    iters = {lp.loop_var: Range(lp.min, lp.extent) for lp in loops}
    found = detect_iter_map(realize.iter_values, iters, realize.predicate)
    if found.indices is None:
        raise schedule_error(
            "rfactor",
            subject,
            f"its bindings are not quasi-affine ({found.errors[0]})",
            realize,
        )
    if const_value(loop.min) != 0 or loop.step is not None:
        raise schedule_error(
            "rfactor", subject, f"loop {name} must start at 0 with unit step", loop
        )


def _only(realizes, realize) -> bool:
    return len(realizes) == 1 and realizes[0] is realize


def _check_shared_loops(subject, realize, shared):
    """Loops the block shares with other blocks are kept around both new blocks, so
    they must not carry the reduction."""
    reduce = [
        v
        for iv, v in zip(realize.block.iter_vars, realize.iter_values)
        if iv.iter_type != S.IterVar.DataPar
    ]
    for lp in shared:
        if any(uses_any_var(v, [lp.loop_var]) for v in reduce):
            raise schedule_error(
                "rfactor",
                subject,
                f"loop {lp.loop_var.name} carries the reduction and also holds other blocks",
                lp,
            )


def _rf_block(rf_name, realize, loops, loop, red, rf_buffers, axis):
    """The block computing partial results into ``rf_buffers``, and its new spatial
    iterator for the factored loop."""
    block = realize.block
    rf_loop = loop.loop_var
    rf_iv = S.IterVar(
        Range(E.IntImm(loop.extent.dtype, 0), loop.extent),
        E.Var(f"v{rf_loop.name}", rf_loop.dtype),
        S.IterVar.DataPar,
    )
    ivs, values, vmap = [rf_iv], [rf_loop], {}
    spatial, reduce, loop_iters = [], [], {id(rf_loop): rf_iv.var}
    for iv, binding in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type == S.IterVar.DataPar or not uses_any_var(binding, [rf_loop]):
            new = attrs.evolve(iv, var=E.Var(iv.var.name, iv.var.dtype))
            vmap[iv.var] = new.var
            (spatial if iv.iter_type == S.IterVar.DataPar else reduce).append((new, binding))
            continue
        # an iterator the factored loop feeds is replaced by its binding, with one
        # iterator per loop it reads (the factored one spatial, the others reduce)
        for lp in loops:
            if (
                lp is not loop
                and uses_any_var(binding, [lp.loop_var])
                and id(lp.loop_var) not in loop_iters
            ):
                new_iv = S.IterVar(
                    Range(lp.min, lp.extent),
                    E.Var(f"v{lp.loop_var.name}", lp.loop_var.dtype),
                    S.IterVar.CommReduce,
                )
                loop_iters[id(lp.loop_var)] = new_iv.var
                reduce.append((new_iv, lp.loop_var))
        vmap[iv.var] = substitute(binding, lambda v: loop_iters.get(id(v)))
    for new, binding in spatial + reduce:
        ivs.append(new)
        values.append(binding)
    rf_indices = list(substitute(i, vmap) for i in red.indices)
    rf_indices.insert(axis, rf_iv.var)
    incoming = [substitute(value, vmap) for value in red.values]
    if reduce:
        body = red.update(rf_buffers, rf_indices, incoming)
        init = red.init(rf_buffers, rf_indices)
    else:
        # every reduction iterator came from the factored loop: each partial result
        # is one value, stored once (TVM's rfactor of a spatial-only remainder)
        body = red.plain(rf_buffers, rf_indices, incoming)
        init = None
    rf = attrs.evolve(
        block, iter_vars=tuple(ivs), name_hint=rf_name, body=body, init=init, reads=(), writes=()
    )
    if len(rf_buffers) > 1:
        # as TVM: the block's own reads, and the points of the partial results
        reads = tuple(_substituted(r, vmap) for r in block.reads)
        rf = attrs.evolve(rf, reads=reads, writes=_points(rf_buffers, rf_indices))
    else:
        rf = _with_regions(rf)
    return S.BlockRealize(tuple(values), realize.predicate, rf), rf_iv.var


def _write_back(realize, loops, loop, red, rf_buffers, rf_var, axis):
    """The block (under copies of the spatial loops and the factored loop) that
    combines the partial results into the original buffers."""
    block = realize.block
    spatial = [
        (iv, v)
        for iv, v in zip(block.iter_vars, realize.iter_values)
        if iv.iter_type == S.IterVar.DataPar
    ]
    reduce = [
        v
        for iv, v in zip(block.iter_vars, realize.iter_values)
        if iv.iter_type != S.IterVar.DataPar
    ]
    # as TVM: every loop but those carrying the reduction (the factored one aside)
    kept = [
        lp for lp in loops if lp is loop or not any(uses_any_var(v, [lp.loop_var]) for v in reduce)
    ]
    loop_map = {lp.loop_var: E.Var(lp.loop_var.name, lp.loop_var.dtype) for lp in kept}
    ivs, values, vmap = [], [], {}
    for iv, binding in spatial:
        new = attrs.evolve(iv, var=E.Var(iv.var.name, iv.var.dtype))
        vmap[iv.var] = new.var
        ivs.append(new)
        values.append(substitute(binding, loop_map))
    rf_iv = S.IterVar(
        Range(E.IntImm(loop.extent.dtype, 0), loop.extent),
        E.Var(rf_var.name, rf_var.dtype),
        S.IterVar.CommReduce,
    )
    # TVM's write-back lists the factored (reduction) iterator first
    ivs.insert(0, rf_iv)
    values.insert(0, loop_map[loop.loop_var])
    indices = tuple(substitute(i, vmap) for i in red.indices)
    rf_indices = list(indices)
    rf_indices.insert(axis, rf_iv.var)
    partial = [E.BufferLoad(b, tuple(rf_indices)) for b in rf_buffers]
    wb = attrs.evolve(
        block,
        iter_vars=tuple(ivs),
        body=red.update(red.buffers, indices, partial),
        init=red.init(red.buffers, indices),
        reads=(),
        writes=(),
    )
    if len(rf_buffers) > 1:
        # as TVM: the points of the partial results in, the block's writes out
        writes = tuple(_substituted(w, vmap) for w in block.writes)
        wb = attrs.evolve(wb, reads=_points(rf_buffers, rf_indices), writes=writes)
    else:
        wb = _with_regions(wb)
    stmt = S.BlockRealize(tuple(values), E.IntImm("bool", 1), wb)
    for lp in reversed(kept):
        # the factored loop now carries a reduction: it must run serially
        serial = lp is loop
        stmt = attrs.evolve(
            lp,
            loop_var=loop_map[lp.loop_var],
            body=stmt,
            kind=S.ForKind.SERIAL if serial else lp.kind,
            thread_binding=None if serial else lp.thread_binding,
            annotations={},
        )
    return stmt


def _substituted(region, vmap):
    ranges = tuple(
        Range(substitute(r.min, vmap), substitute(r.extent, vmap)) for r in region.region
    )
    return BufferRegion(region.buffer, ranges)


def _points(buffers, indices) -> tuple:
    one = [E.IntImm(i.dtype, 1) for i in indices]
    return tuple(BufferRegion(b, tuple(Range(i, e) for i, e in zip(indices, one))) for b in buffers)


def _allocate(func, scope, buffer):
    """``func`` with ``buffer`` allocated in the scope block (a new root if none)."""
    if scope is None:
        root = S.Block((), (), (), "root", func.body, alloc_buffers=(buffer,))
        return func.with_body(S.BlockRealize((), E.IntImm("bool", 1), root))
    scope = Tree(func).realizes[scope.block.name_hint][0]
    block = attrs.evolve(scope.block, alloc_buffers=(*scope.block.alloc_buffers, buffer))
    return rewrite(func, {id(scope.block): block})

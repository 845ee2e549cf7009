"""read_at / write_at: stage, per iteration of a loop, the region of a buffer the
blocks under the loop read (write) through a copy in another storage scope.

Before / after ``read_at(k0, C, 1, "shared")``::

                                                 A_shared = T.alloc_buffer((64, 64), scope="shared")
    for i0, k0 in T.grid(4, 8):                  for i0, k0 in T.grid(4, 8):
                                                     with T.block("A_shared"):
                                                         v0, v1 = T.axis.remap("SS", [i0, k0])
                                                         T.block_attr({"auto_copy": True})
                                                         for ax0, ax1 in T.grid(16, 8):
                                                             A_shared[...] = A[...]
        for i1, j, k1 in T.grid(16, 64, 8):          for i1, j, k1 in T.grid(16, 64, 8):
            with T.block("C"):                           with T.block("C"):
                ... A[vi, vk] ...                            ... A_shared[vi, vk] ...

The copy buffer has the shape of the buffer (as TVM's). The region is what the blocks
under the loop touch per iteration, with the loops inside it and the thread loops
whose threads share memory of the new scope swept. The copy block is a block of its
own (named ``<buffer>_<scope>``, annotated ``auto_copy``) over the loops around it.

read_at puts the copy before the first child of the loop that reads the buffer, and
those children from there on read the copy; nothing may write the buffer there.
write_at puts the copy back after the last child that writes the buffer, and the
children up to there use the copy; nothing may read the buffer after that. Beyond
TVM's checks, the region must stay inside the buffer, and for write_at: the writes
must cover the region densely (the whole region is copied back), and a block that
reads the buffer before the copy back must be a reduction that starts from its init
within each iteration of the loop (nothing else could read what the copy holds).
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_value, eval_interval, linear_form, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range, decl_buffer
from tilelang.ir.convert import binary
from tilelang.ir.functor import post_order_visit, substitute
from tilelang.ir.var_usage import uses_any_var
from tilelang.schedule.cache import _check_scope, _pick, _regions, swap_buffer
from tilelang.schedule.common import block_subject, find_block, find_loop, fresh_name, taken_names
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.regions import buffers_of, covered_region, relaxed_loops
from tilelang.schedule.state import Tree, rewrite


def read_at(func, loop_var, name, read_buffer_index, storage_scope):
    """Returns ``(new function, copy block name)``; see the module docstring."""
    return _stage("read_at", func, loop_var, name, read_buffer_index, storage_scope, True)


def write_at(func, loop_var, name, write_buffer_index, storage_scope):
    """Returns ``(new function, copy block name)``; see the module docstring."""
    return _stage("write_at", func, loop_var, name, write_buffer_index, storage_scope, False)


def _stage(primitive, func, loop_var, name, index, storage_scope, is_read):
    tree = Tree(func)
    loop = find_loop(tree, loop_var, primitive)
    realize = find_block(tree, name, primitive)
    subject = block_subject(realize)
    _check_scope(primitive, subject, storage_scope)
    reads, writes = _regions(realize.block)
    kind = "read" if is_read else "write"
    src = _pick(primitive, realize, index, reads if is_read else writes, kind)
    if not tree.is_ancestor(loop, realize):
        raise schedule_error(primitive, subject, f"is not under loop {loop_var.name}")
    children = list(loop.body.seq) if isinstance(loop.body, S.SeqStmt) else [loop.body]
    scope_realize = tree.scope_realize(loop)
    blocks = [
        [r for r in tree.blocks_under(child) if tree.scope_realize(r) is scope_realize]
        for child in children
    ]
    r_pos = [i for i, bs in enumerate(blocks) if any(src in buffers_of(r)[0] for r in bs)]
    w_pos = [i for i, bs in enumerate(blocks) if any(src in buffers_of(r)[1] for r in bs)]
    if is_read:
        if w_pos and w_pos[-1] >= r_pos[0]:
            raise schedule_error(
                primitive, subject,
                f"a block under loop {loop_var.name} writes {src.name} at or after its first "
                "read there, so a copy made before the reads would be stale",
            )  # fmt: skip
        start, stop, insert = r_pos[0], len(children), r_pos[0]
    else:
        if r_pos and r_pos[-1] > w_pos[-1]:
            raise schedule_error(
                primitive, subject,
                f"a block under loop {loop_var.name} reads {src.name} after its last write "
                "there, before the copy back",
            )  # fmt: skip
        start, stop, insert = 0, w_pos[-1] + 1, w_pos[-1] + 1
    targets = [r for bs in blocks for r in bs if src in buffers_of(r)[0 if is_read else 1]]
    region = covered_region(
        primitive, subject, tree, targets, src, loop, not is_read, scope=storage_scope
    )
    outer = _outer_loops(tree, loop)
    _check_inside(primitive, subject, src, region, outer)
    if not is_read:
        _check_writes(primitive, subject, tree, loop, blocks[:stop], src, storage_scope)
    copy_name = fresh_name(taken_names(tree), f"{src.name}_{storage_scope}")
    dst = decl_buffer(src.shape, src.dtype, copy_name, scope=storage_scope)
    copy = _copy_block(copy_name, src, dst, region, outer, is_read)
    new_children = [
        swap_buffer(child, src, dst) if start <= i < stop else child
        for i, child in enumerate(children)
    ]
    new_children.insert(insert, copy)
    new_loop = attrs.evolve(loop, body=S.seq_stmt(*new_children))
    func = rewrite(func, {id(loop): new_loop})
    return _allocate(func, loop_var, dst), copy_name


def _outer_loops(tree, loop) -> list:
    """The loop and those around it up to the enclosing block, outermost first."""
    return [*tree.loops_above(loop), loop]


def _check_inside(primitive, subject, src, region, outer):
    ranges = {lp.loop_var: Range(lp.min, lp.extent) for lp in outer}
    for dim, ((lo, hi), extent) in enumerate(zip(region, src.shape)):
        low = eval_interval(lo, ranges)[0]
        high = eval_interval(hi, ranges)[1]
        below = None if low is None else const_value(simplify(low))
        above = None if high is None else const_value(simplify(extent - 1 - high))
        if below is None or above is None or below < 0 or above < 0:
            raise schedule_error(
                primitive, subject,
                f"the region [{lo}, {hi}] of {src.name} in dimension {dim} may leave the "
                "buffer; the copy would access it out of bounds",
            )  # fmt: skip


def _check_writes(primitive, subject, tree, loop, blocks, src, scope):
    """What write_at copies back must all have been written in the iteration."""
    writers = [r for bs in blocks for r in bs if src in buffers_of(r)[1]]
    boxes = []
    for r in writers:
        boxes.append(covered_region(primitive, subject, tree, [r], src, loop, True, scope=scope))
        if not _dense(tree, r, src, loop, scope):
            raise schedule_error(
                primitive, subject,
                f"block {r.block.name_hint!r} does not write every element of its region of "
                f"{src.name}, and the whole region is copied back",
            )  # fmt: skip
    for box in boxes[1:]:
        for (a_lo, a_hi), (b_lo, b_hi) in zip(boxes[0], box):
            if const_value(simplify(a_lo - b_lo)) != 0 or const_value(simplify(a_hi - b_hi)) != 0:
                raise schedule_error(
                    primitive, subject,
                    f"the blocks writing {src.name} write different regions; the whole "
                    "region is copied back",
                )  # fmt: skip
    outer_vars = [lp.loop_var for lp in _outer_loops(tree, loop)]
    for r in (r for bs in blocks for r in bs if src in buffers_of(r)[0]):
        block = r.block
        bindings = dict(zip((iv.var for iv in block.iter_vars), r.iter_values))
        reduce_bound_outside = any(
            iv.iter_type != S.IterVar.DataPar and uses_any_var(bindings[iv.var], outer_vars)
            for iv in block.iter_vars
        )
        reads = [x for x in _regions(block)[0] if x.buffer is src]
        writes = [x for x in _regions(block)[1] if x.buffer is src]
        own = bool(writes) and all(_same_region(x, writes[0]) for x in reads)
        if block.init is None or reduce_bound_outside or not own:
            raise schedule_error(
                primitive, subject,
                f"block {block.name_hint!r} reads {src.name} before the copy back; only a "
                "reduction that starts from its init in each iteration of the loop may",
            )  # fmt: skip


def _same_region(a, b) -> bool:
    return all(
        const_value(simplify(x.min - y.min)) == 0
        and const_value(simplify(x.extent - y.extent)) == 0
        for x, y in zip(a.region, b.region)
    )


def _dense(tree, realize, src, loop, scope) -> bool:
    """Whether the block writes every point of the box its writes span per iteration
    of ``loop``: no predicate, and along each dimension the swept loops form a mixed
    radix (coefficients 1, e1, e1 * e2, ...), each loop in one dimension only."""
    if not (isinstance(realize.predicate, E.IntImm) and realize.predicate.value):
        return False
    swept = relaxed_loops(tree, realize, loop, scope)
    bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    used = set()
    for region in _regions(realize.block)[1]:
        if region.buffer is not src:
            continue
        for rng in region.region:
            if const_value(rng.extent) != 1:
                return False
            form = linear_form(simplify(substitute(rng.min, bindings)))
            terms = []
            for atom, coeff in form.live_terms():
                if isinstance(atom, E.Var) and atom in swept:
                    if id(atom) in used:
                        return False
                    used.add(id(atom))
                    terms.append((abs(coeff), const_value(swept[atom].extent)))
                elif uses_any_var(atom, list(swept)):
                    return False
            expected = 1
            for coeff, extent in sorted(terms):
                if extent is None or coeff != expected:
                    return False
                expected *= extent
    return True


def _copy_block(name, src, dst, region, outer, is_read):
    """``with T.block(name)`` copying the region, with iterators for the loops the
    region depends on, and loops ``ax0, ax1...`` over it."""
    iter_vars, values, vmap = [], [], {}
    loops = {id(lp.loop_var): lp for lp in outer}
    seen = []  # the loop variables in the order the region mentions them (as TVM)
    for lo, hi in region:
        for x in (lo, hi):
            post_order_visit(x, lambda n: seen.append(n) if id(n) in loops else None)
    for var in seen:
        lp = loops[id(var)]
        if lp.loop_var not in vmap:
            new = E.Var(f"v{len(iter_vars)}", lp.loop_var.dtype)
            vmap[lp.loop_var] = new
            iter_vars.append(S.IterVar(Range(lp.min, lp.extent), new, S.IterVar.DataPar))
            values.append(lp.loop_var)
    ranges = [
        Range(substitute(lo, vmap), simplify(hi - lo + 1)) for lo, hi in region
    ]  # fmt: skip
    axes = [E.Var(f"ax{d}", rng.min.dtype) for d, rng in enumerate(ranges)]
    indices = tuple(
        binary("add", rng.min, ax) if const_value(rng.min) != 0 else ax
        for rng, ax in zip(ranges, axes)
    )
    copy_from, copy_to = (src, dst) if is_read else (dst, src)
    body = S.BufferStore(copy_to, E.BufferLoad(copy_from, indices), indices)
    for ax, rng in reversed(list(zip(axes, ranges))):
        body = S.For(ax, E.IntImm(ax.dtype, 0), rng.extent, S.ForKind.SERIAL, body)
    block = S.Block(
        tuple(iter_vars),
        (BufferRegion(copy_from, tuple(ranges)),),
        (BufferRegion(copy_to, tuple(ranges)),),
        name,
        body,
        annotations={"auto_copy": True},
    )
    return S.BlockRealize(tuple(values), E.IntImm("bool", 1), block)


def _allocate(func, loop_var, dst):
    """``func`` with ``dst`` allocated in the block that holds the loop."""
    tree = Tree(func)
    scope = tree.scope_realize(tree.loops[id(loop_var)])
    if scope is None:
        root = S.Block((), (), (), "root", func.body, alloc_buffers=(dst,))
        return func.with_body(S.BlockRealize((), E.IntImm("bool", 1), root))
    block = attrs.evolve(scope.block, alloc_buffers=(*scope.block.alloc_buffers, dst))
    return rewrite(func, {id(scope.block): block})

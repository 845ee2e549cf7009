"""The flags a schedule state keeps per block (TVM's ``BlockInfo`` / ``CachedFlags``).

- ``affine_binding``: the block's iterator bindings are quasi-affine in the loops
  above it (sums of loop variables scaled by constants, split with ``//`` and ``%``
  by constants), and no loop variable feeds two bindings whole. (An approximation of
  TVM's iterator-map check; the root block has it when it has no iterators.)
- ``region_cover``: for a consumer, every region it reads is covered by what its
  producers in the same scope write, compared at their lowest common loop: the
  producers' writes relaxed over the loops below that loop (and over the thread
  loops that share the buffer's storage scope) must contain the consumer's reads,
  relaxed the same way. A producer under a predicate is taken to cover nothing
  (its region is not known exactly), so the flag is only ever set when it holds.
- ``stage_pipeline``: for a scope block, no child block overwrites what an earlier
  one reads (WAR) and every consumer among the children has ``region_cover``.
"""

from __future__ import annotations

from typing import NamedTuple

from tilelang.arith import simplify
from tilelang.arith.bound import ConstBound, const_bound
from tilelang.arith.int_set import const_difference, eval_interval, fold_max, fold_min
from tilelang.arith.linear import linear_form
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.functor import substitute
from tilelang.schedule.block_scope import BlockScope, DepKind, child_blocks
from tilelang.schedule.state import Tree


class CachedFlags(NamedTuple):
    """The three flags of a block (TVM's ``CachedFlags``)."""

    affine_binding: bool
    region_cover: bool
    stage_pipeline: bool


def block_flags(state, func) -> dict:
    """``id(block) -> CachedFlags`` for every block of ``func`` (a function of
    ``state``'s module)."""
    tree = Tree(func)
    realize_of = {id(r.block): r for r in tree.order}
    bounds = {}
    for loop in tree.loops.values():
        lo, extent = const_bound(loop.min), const_bound(loop.extent)
        if lo.is_const() and extent.is_const():
            bounds[loop.loop_var] = ConstBound(lo.lo, lo.lo + extent.lo - 1)
    affine, cover, pipeline = {}, {}, {}
    for realize in tree.order:
        block = realize.block
        cover[id(block)] = True
        if tree.scope_realize(realize) is None:
            affine[id(block)] = not block.iter_vars
        else:
            affine[id(block)] = _is_affine(realize, tree.loops_above(realize))
    for realize in tree.order:
        scope_block = realize.block
        scope = BlockScope(state, state.get_sref(scope_block))
        ok = True
        for child in child_blocks(scope_block):
            deps = scope.get_deps_by_dst(state.get_sref(child))
            if any(d.kind in (DepKind.WAR, DepKind.OPAQUE) for d in deps):
                ok = False
            producers = [d.src.stmt for d in deps if d.kind == DepKind.RAW]
            if producers:
                cover[id(child)] = _covered(tree, realize_of, realize, child, producers, bounds)
                ok = ok and cover[id(child)]
        pipeline[id(scope_block)] = ok
    return {key: CachedFlags(affine[key], cover[key], pipeline[key]) for key in affine}


# ----------------------------------------------------------------- affine


def _is_affine(realize, loops) -> bool:
    loop_vars = {id(f.loop_var) for f in loops}
    whole_uses: dict[int, int] = {}
    for value in realize.iter_values:
        used = _quasi_affine_vars(value, loop_vars)
        if used is None:
            return False
        for var_id in used:
            whole_uses[var_id] = whole_uses.get(var_id, 0) + 1
    return all(n <= 1 for n in whole_uses.values())


def _quasi_affine_vars(expr, loop_vars):
    """The loop variables ``expr`` uses outside ``//``/``%`` when it is quasi-affine
    in them; None when it is not."""
    if isinstance(expr, E.IntImm):
        return set()
    if isinstance(expr, E.Var):
        return {id(expr)} if id(expr) in loop_vars else None
    if isinstance(expr, (E.Add, E.Sub)):
        a, b = _quasi_affine_vars(expr.a, loop_vars), _quasi_affine_vars(expr.b, loop_vars)
        return None if a is None or b is None or a & b else a | b
    if isinstance(expr, E.Mul):
        for x, c in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(c, E.IntImm):
                return _quasi_affine_vars(x, loop_vars)
        return None
    if isinstance(expr, (E.FloorDiv, E.FloorMod)) and isinstance(expr.b, E.IntImm):
        return set() if _quasi_affine_vars(expr.a, loop_vars) is not None else None
    return None


# ------------------------------------------------------------- region cover


#: thread tags whose loops share a buffer of each storage scope
_SHARED_BY = {
    "global": ("blockIdx", "threadIdx", "vthread"),
    "shared": ("threadIdx",),
    "warp": ("threadIdx.x",),
}


def _relaxed(tree, realize, lca, scope_realize, buffer):
    """``{loop var: Range}``: the loops between ``realize`` and ``lca``, plus the
    thread loops up to the scope that share ``buffer``'s storage scope."""
    tags = _SHARED_BY.get(buffer.scope.split(".")[0], ())
    ranges, below = {}, True
    for anc in reversed(tree.ancestors(realize)):
        if anc is lca:
            below = False
        if scope_realize is not None and anc is scope_realize.block:
            break
        if isinstance(anc, S.For) and (
            below or (anc.thread_binding or "").startswith(tags) and tags
        ):
            ranges[anc.loop_var] = Range(anc.min, anc.extent)
    return ranges


def _box(region, bindings, ranges):
    """Inclusive per-dimension bounds of ``region`` (of a block bound by
    ``bindings``) while ``ranges`` vary; None where unbounded."""
    out = []
    for r in region.region:
        lo, _ = eval_interval(substitute(r.min, bindings), ranges)
        last = substitute(r.min + r.extent - 1, bindings)
        _, hi = eval_interval(last, ranges)
        out.append((lo, hi))
    return out


def _le(a, b, bounds) -> bool:
    """``a <= b`` is known: by a constant difference, or by ``bounds``, the constant
    ranges of the function's loop variables."""
    if a is None or b is None:
        return False
    diff = const_difference(b, a)
    if diff is not None:
        return diff >= 0
    lo = const_bound(simplify(b - a), bounds).lo
    return lo is not None and lo >= 0


def _union(boxes, bounds):
    """Per dimension, the union of intervals that overlap or touch (None where they
    leave a gap or cannot be compared)."""
    out = []
    for dim in zip(*boxes):
        if any(lo is None or hi is None for lo, hi in dim):
            out.append((None, None))
            continue
        dim = sorted(dim, key=lambda iv: const_difference(iv[0], dim[0][0]) or 0)
        lo, hi = dim[0]
        for nlo, nhi in dim[1:]:
            if hi is None or nlo is None or not _le(nlo, hi + 1, bounds):
                lo = hi = None
                break
            hi = nhi if _le(hi, nhi, bounds) else hi
        out.append((lo, hi))
    return out


def _covered(tree, realize_of, scope_realize, consumer, producers, bounds) -> bool:
    c_realize = realize_of[id(consumer)]
    path = [c_realize.block] + [
        a for a in reversed(tree.ancestors(c_realize)) if isinstance(a, S.For)
    ]
    path = [p for p in path if p is c_realize.block or tree.is_ancestor(scope_realize.block, p)] + [
        scope_realize.block
    ]
    at = {}
    for producer in producers:
        p_realize = realize_of[id(producer)]
        ancestors = set(map(id, tree.ancestors(p_realize)))
        lca = next(p for p in path if id(p) in ancestors)
        at.setdefault(id(lca), (lca, []))[1].append(p_realize)
    c_bind = dict(zip((iv.var for iv in consumer.iter_vars), c_realize.iter_values))
    for lca, p_realizes in at.values():
        for read in consumer.reads:
            written = []
            for p in p_realizes:
                for write in p.block.writes:
                    if write.buffer is read.buffer:
                        bind = dict(zip((iv.var for iv in p.block.iter_vars), p.iter_values))
                        ranges = _relaxed(tree, p, lca, scope_realize, read.buffer)
                        box = _box(write, bind, ranges)
                        if not (isinstance(p.predicate, E.IntImm) and p.predicate.value):
                            box = _clipped(box, p.predicate, write, bind, ranges)
                            if box is None:
                                return False  # the predicated region is not known
                        written.append(box)
            if not written:
                continue
            produced = _union(written, bounds)
            ranges = _relaxed(tree, c_realize, lca, scope_realize, read.buffer)
            consumed = _box(read, c_bind, ranges)
            for (plo, phi), (clo, chi), extent in zip(produced, consumed, read.buffer.shape):
                # only the part inside the buffer has to be produced
                zero, top = (
                    E.IntImm(clo.dtype, 0) if clo is not None else None,
                    simplify(extent - 1),
                )
                if clo is not None and not _le(zero, clo, bounds):
                    clo = fold_max(clo, zero)
                if chi is not None and not _le(chi, top, bounds):
                    chi = fold_min(chi, top)
                if not (_le(plo, clo, bounds) and _le(chi, phi, bounds)):
                    return False
    return True


_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _clipped(box, predicate, write, bind, ranges):
    """``box`` cut by a producer's predicate, when every conjunct bounds one write
    index (``index + k < c`` and the like) and each index runs densely over one relaxed
    loop of its own (so the cut box is still fully written); None otherwise."""
    indices = [simplify(substitute(r.min, bind)) for r in write.region]
    owners = []
    for index in indices:
        relaxed = [
            (atom, c)
            for atom, c in linear_form(index).live_terms()
            if isinstance(atom, E.Var) and atom in ranges
        ]
        if len(relaxed) > 1 or any(abs(c) != 1 for _, c in relaxed):
            return None
        owners.append(id(relaxed[0][0]) if relaxed else None)
    if len({o for o in owners if o is not None}) != len([o for o in owners if o is not None]):
        return None
    box = list(box)
    stack = [predicate]
    while stack:
        cond = stack.pop()
        if isinstance(cond, E.And):
            stack += [cond.a, cond.b]
            continue
        op = type(cond).__name__.lower()
        if op not in _FLIP:
            return None
        for lhs, rhs, how in ((cond.a, cond.b, op), (cond.b, cond.a, _FLIP[op])):
            if not isinstance(rhs, E.IntImm):
                continue
            dim = next(
                (d for d, index in enumerate(indices) if const_difference(lhs, index) is not None),
                None,
            )
            if dim is None:
                continue
            k, c = const_difference(lhs, index := indices[dim]), rhs.value
            lo, hi = box[dim]
            if lo is None or hi is None:
                return None
            if how in ("lt", "le"):  # index <= c - k (- 1)
                box[dim] = (lo, fold_min(hi, E.IntImm(hi.dtype, c - k - (how == "lt"))))
            else:  # index >= c - k (+ 1)
                box[dim] = (fold_max(lo, E.IntImm(lo.dtype, c - k + (how == "gt"))), hi)
            break
        else:
            return None
    return box

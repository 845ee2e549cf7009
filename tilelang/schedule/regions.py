"""Region reasoning for moving blocks: which blocks touch which buffers, the region
a set of blocks covers under a loop, and whether moving a block past others is safe.

Per-block regions come from :func:`tilelang.analysis.get_block_access_region`;
this module only substitutes bindings and relaxes loops.
"""

from __future__ import annotations

from tilelang.analysis import get_block_access_region
from tilelang.arith import const_value, eval_interval, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.functor import substitute
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree


def buffers_of(realize) -> tuple[set, set]:
    reads, writes = get_block_access_region(realize.block)
    return {r.buffer for r in reads}, {w.buffer for w in writes}


def siblings(tree: Tree, realize) -> list:
    """Blocks of the same scope as ``realize`` (not itself), in program order."""
    scope = tree.scope_realize(realize)
    return [r for r in tree.order if r is not realize and tree.scope_realize(r) is scope]


def conflicts(a, b) -> set:
    """Buffers through which blocks ``a`` and ``b`` depend on each other."""
    ra, wa = buffers_of(a)
    rb, wb = buffers_of(b)
    return (wa & (rb | wb)) | (ra & wb)


def check_move(primitive, subject, tree: Tree, realize, between) -> None:
    """Moving ``realize`` past the blocks ``between`` must not reorder dependences."""
    for other in between:
        shared = conflicts(realize, other)
        if shared:
            names = ", ".join(sorted(b.name for b in shared))
            raise schedule_error(
                primitive,
                subject,
                f"moving it past block {other.block.name_hint!r} would reorder their "
                f"accesses to {names}",
                tree.func.body,
            )


_RELAXED_THREADS = {
    "shared": ("threadIdx", "vthread"),
    "global": ("threadIdx", "vthread", "blockIdx"),
}


def relaxed_loops(tree: Tree, realize, loop: S.For, scope: str) -> dict:
    """Loops whose variable sweeps its range when computing the region ``realize``
    touches per iteration of ``loop``: those inside ``loop``, and thread-bound loops
    whose threads share memory of ``scope``."""
    threads = _RELAXED_THREADS.get(scope.split(".")[0], ())
    dom = {}
    inside = False
    for anc in tree.ancestors(realize):
        if anc is loop:
            inside = True
        if not isinstance(anc, S.For):
            continue
        bound_thread = anc.kind is S.ForKind.THREAD_BINDING and (
            anc.thread_binding or ""
        ).startswith(threads or ("\0",))
        if (inside and anc is not loop) or bound_thread:
            dom[anc.loop_var] = Range(anc.min, anc.extent)
    return dom


def access_regions(block) -> tuple[list, list]:
    """``(reads, writes)`` of ``block`` as inferred from its body, except the regions
    its ``explicit_read_region`` / ``explicit_write_region`` annotations name (by
    position in ``T.reads`` / ``T.writes``, as annotate_buffer_access declares
    them), which are taken as declared."""
    inferred = get_block_access_region(block)
    out = []
    for found, declared, key in zip(
        inferred, (block.reads, block.writes), ("explicit_read_region", "explicit_write_region")
    ):
        indices = [
            k.value if isinstance(k, E.IntImm) else int(k) for k in block.annotations.get(key, ())
        ]
        picked = [declared[k] for k in indices if 0 <= k < len(declared)]
        named = {r.buffer for r in picked}
        out.append([r for r in found if r.buffer not in named] + picked)
    return out[0], out[1]


def covered_region(
    primitive, subject, tree, realizes, buffer, loop, use_writes, scope=None
) -> list:
    """Per dimension ``(lo, hi)`` (inclusive) of ``buffer`` touched by ``realizes``
    during one iteration of ``loop``, over all of them. Thread loops are swept as
    memory of ``scope`` (the buffer's own scope when None) is shared."""
    total = None
    for realize in realizes:
        reads, writes = access_regions(realize.block)
        bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
        dom = relaxed_loops(tree, realize, loop, scope or buffer.scope)
        for region in writes if use_writes else reads:
            if region.buffer is not buffer:
                continue
            dims = []
            for rng, extent in zip(region.region, buffer.shape):
                low = substitute(rng.min, bindings)
                high = substitute(simplify(rng.min + rng.extent - 1), bindings)
                lo, hi = eval_interval(low, dom)[0], eval_interval(high, dom)[1]
                if lo is None or hi is None:  # an index it cannot bound: the whole axis
                    lo, hi = E.IntImm(extent.dtype, 0), simplify(extent - 1)
                dims.append((simplify(lo), simplify(hi)))
            total = (
                dims
                if total is None
                else [_union(primitive, subject, a, b) for a, b in zip(total, dims)]
            )
    return total


def _union(primitive, subject, a, b):
    lo = _pick(a[0], b[0], min)
    hi = _pick(a[1], b[1], max)
    if lo is None or hi is None:
        raise schedule_error(primitive, subject, "the regions of the blocks are not comparable")
    return lo, hi


def _pick(x, y, choose):
    diff = const_value(simplify(x - y))
    if diff is None:
        return None
    return x if choose(diff, 0) == diff else y


def provided_region(realize, buffer, use_writes) -> list:
    """Per dimension ``(lo, hi)`` (inclusive, in the block's own iterators) of
    ``buffer`` that one instance of ``realize`` accesses: its writes for a producer,
    its reads for a consumer, the union when it has several."""
    reads, writes = get_block_access_region(realize.block)
    total = None
    for region in writes if use_writes else reads:
        if region.buffer is not buffer:
            continue
        dims = [(rng.min, simplify(rng.min + rng.extent - 1)) for rng in region.region]
        total = dims if total is None else [_hull(a, b) for a, b in zip(total, dims)]
    return total


def _hull(a, b):
    lo, hi = _pick(a[0], b[0], min), _pick(a[1], b[1], max)
    return (
        simplify(E.Min(a[0], b[0])) if lo is None else lo,
        simplify(E.Max(a[1], b[1])) if hi is None else hi,
    )

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
from tilelang.ir.var_usage import uses_var
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


def covered_region(
    primitive, subject, tree, realizes, buffer, loop, use_writes, scope=None
) -> list:
    """Per dimension ``(lo, hi)`` (inclusive) of ``buffer`` touched by ``realizes``
    during one iteration of ``loop``, over all of them. Thread loops are swept as
    memory of ``scope`` (the buffer's own scope when None) is shared."""
    total = None
    for realize in realizes:
        reads, writes = get_block_access_region(realize.block)
        bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
        dom = relaxed_loops(tree, realize, loop, scope or buffer.scope)
        for region in writes if use_writes else reads:
            if region.buffer is not buffer:
                continue
            dims = []
            for rng in region.region:
                low = substitute(rng.min, bindings)
                high = substitute(simplify(rng.min + rng.extent - 1), bindings)
                lo, hi = eval_interval(low, dom)[0], eval_interval(high, dom)[1]
                if lo is None or hi is None:
                    unbounded = low if lo is None else high
                    raise schedule_error(
                        primitive, subject, f"cannot bound the region: cannot bound {unbounded!r}"
                    )
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


def point_axes(primitive, subject, realize, buffer, use_writes) -> list:
    """For a block accessing ``buffer`` at single points, per dimension an
    :class:`Axis` saying which iterator indexes it and how (``v + c``, ``c - v``,
    ``v // f``, ``v % f``), or None for an index free of iterators."""
    reads, writes = get_block_access_region(realize.block)
    regions = [r for r in (writes if use_writes else reads) if r.buffer is buffer]
    block_vars = [iv.var for iv in realize.block.iter_vars]
    axes = []
    for rng in regions[0].region:
        if const_value(rng.extent) != 1:
            raise schedule_error(
                primitive,
                subject,
                f"it accesses a range of {buffer.name} per iteration, not a single element",
                realize,
            )
        form = simplify(rng.min)
        if const_value(form) is not None or not any(uses_var(form, v) for v in block_vars):
            axes.append(None)
            continue
        axis = _axis(form, block_vars)
        if axis is None:
            raise schedule_error(
                primitive,
                subject,
                f"the index {rng.min!r} of {buffer.name} is not an iterator plus a "
                "constant, a constant minus one, or one divided or taken modulo a constant",
                realize,
            )
        axes.append(axis)
    return axes


class Axis:
    """How one buffer index depends on one block iterator ``var``."""

    def __init__(self, var, kind, param):
        self.var, self.kind, self.param = var, kind, param

    def solve(self, lo, hi, dim):
        """``(vlo, vhi, valid_lo, valid_hi)``: the iterator range that covers the index
        range ``[lo, hi]``, and the iterator values keeping the index inside a buffer
        dimension of extent ``dim``; None when the index does not constrain it."""
        c = self.param
        last = simplify(dim - 1)
        zero = E.IntImm(lo.dtype, 0)
        if self.kind == "offset":
            return simplify(lo - c), simplify(hi - c), simplify(zero - c), simplify(last - c)
        if self.kind == "neg":
            return simplify(c - hi), simplify(c - lo), simplify(c - last), simplify(c - zero)
        if self.kind == "div":
            return simplify(lo * c), simplify(hi * c + (c - 1)), zero, simplify(last * c + (c - 1))
        return None  # modulo: every iterator value lands inside


def _axis(expr, block_vars):
    def var_of(x):
        return x if isinstance(x, E.Var) and any(x is v for v in block_vars) else None

    if var_of(expr) is not None:
        return Axis(expr, "offset", 0)
    if isinstance(expr, (E.Add, E.Sub)):
        a, b = var_of(expr.a), const_value(expr.b)
        if a is not None and b is not None:
            return Axis(a, "offset", b if isinstance(expr, E.Add) else -b)
        if isinstance(expr, E.Sub) and var_of(expr.b) is not None:
            c = const_value(expr.a)
            if c is not None:
                return Axis(expr.b, "neg", c)
    if isinstance(expr, (E.FloorDiv, E.FloorMod)) and var_of(expr.a) is not None:
        c = const_value(expr.b)
        if c is not None and c > 0:
            return Axis(expr.a, "div" if isinstance(expr, E.FloorDiv) else "mod", c)
    return None

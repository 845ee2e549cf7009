"""The iteration domain a moved block needs (TVM's ``CalculateBlockVarDomain``).

compute_at / reverse_compute_at move a block under a loop. Per iteration of that
loop, the block must cover a *required* region of each buffer it shares with the
blocks already there (what consumers read, or what producers write). One instance
of the block *provides* its own access region, written in its iterators. This module
inverts provided -> required into a range per block iterator:

* affine: when every provided index is a single point and together they form a
  bijective iterator map (:func:`tilelang.arith.iter_map.detect_iter_map`), the
  required box's corners are mapped back through the map's inverse
  (``(v1 * 8 + v4) // 16`` and ``(v1 * 8 + v4) % 16`` give ``v1`` and ``v4``);
* dimension-wise otherwise: each index alone is solved, peeling ``v * e``,
  ``x // f`` and ``x % f`` down to an iterator (``v2 % 4 // 2``).

Each iterator also gets a *bound*: the values that keep its indices inside the
buffer and its own domain. :meth:`DomainInfo.settle` keeps the bound only where
the swept range may leave it; the caller turns a kept bound into the block's
predicate (``T.where(j + ax0 < 16)``).

Intervals are inclusive ``(lo, hi)`` pairs of expressions; ``None`` on a side means
unbounded, and a :class:`DomainInfo` field of ``None`` is the empty set.
"""

from __future__ import annotations

import attrs

from tilelang.arith import Analyzer, ConstBound, const_value, eval_interval
from tilelang.arith.iter_inverse import inverse_map
from tilelang.arith.iter_map import detect_iter_map
from tilelang.ir import expr as E
from tilelang.ir.buffer import Range
from tilelang.ir.convert import binary, match_types
from tilelang.ir.functor import substitute


class NoSolution(Exception):
    """An index of the block could not be inverted; the message says which."""


class ScopeAnalyzer:
    """An :class:`Analyzer` that also replaces variables of unit range by their only
    value, as TVM's ``Analyzer.Bind`` does for a range of extent 1 (a unit loop's
    variable simplifies to its minimum)."""

    def __init__(self):
        self.ana = Analyzer()
        self.fixed: dict = {}
        self.ranges: dict = {}

    def bind(self, var: E.Var, min_value: E.PrimExpr, extent: E.PrimExpr) -> None:
        """``var`` runs over ``[min_value, min_value + extent)``."""
        if const_value(extent) == 1:
            self.fixed[var] = self.simplify(min_value)
        self.ranges[var] = Range(min_value, extent)
        lo = self.ana.const_bound(self.simplify(min_value))
        ext = self.ana.const_bound(self.simplify(extent))
        hi = None if lo.hi is None or ext.hi is None else lo.hi + ext.hi - 1
        self.ana.var_bounds[var] = ConstBound(lo.lo, hi)

    def simplify(self, expr: E.PrimExpr) -> E.PrimExpr:
        if self.fixed:
            expr = substitute(expr, self.fixed)
        return self.ana.simplify(expr)

    def can_prove(self, cond: E.PrimExpr) -> bool:
        result = self.simplify(cond)
        return isinstance(result, E.IntImm) and bool(result.value)

    def can_prove_bounded(self, cond: E.PrimExpr) -> bool:
        """``can_prove``, and failing that, a comparison ``a < b`` / ``a <= b`` proved
        from the symbolic interval of ``a - b`` over the bound variables (TVM's
        ``ProofStrength::kSymbolicBound``: ``k_0 * 32 + ax0 < n * 32`` for
        ``k_0 < n``, ``ax0 < 32``)."""
        if self.can_prove(cond):
            return True
        if not isinstance(cond, (E.LT, E.LE)):
            return False
        diff = self.simplify(E.Sub(*_same_type(cond.a, cond.b)))
        hi = eval_interval(diff, self.ranges)[1]
        limit = const_value(self.simplify(hi)) if hi is not None else None
        return limit is not None and limit <= (-1 if isinstance(cond, E.LT) else 0)

    def equal(self, a, b) -> bool:
        if a is None or b is None:
            return a is None and b is None
        return self.can_prove(E.EQ(*_same_type(a, b)))

    def pick(self, a, b, cls):
        """``min``/``max`` (``cls``) of two bounds, folded where the analyzer can;
        an unbounded side (None) absorbs for a union and yields for an intersection."""
        if a is None or b is None:
            return None
        return self.simplify(cls(*_same_type(a, b)))


def _same_type(a, b) -> tuple:
    """``a`` and ``b`` of one integer type: a constant takes the other's type (an
    int32 buffer extent against int64 loops), otherwise the narrower is cast."""
    if a.dtype == b.dtype:
        return a, b
    if isinstance(a, E.IntImm):
        return E.IntImm(b.dtype, a.value), b
    if isinstance(b, E.IntImm):
        return a, E.IntImm(a.dtype, b.value)
    return match_types(a, b)


def _union(ana: ScopeAnalyzer, a, b):
    if a is None:
        return b
    if b is None:
        return a
    return ana.pick(a[0], b[0], E.Min), ana.pick(a[1], b[1], E.Max)


def _intersect(ana: ScopeAnalyzer, a, b):
    lo = a[0] if b[0] is None else b[0] if a[0] is None else ana.pick(a[0], b[0], E.Max)
    hi = a[1] if b[1] is None else b[1] if a[1] is None else ana.pick(a[1], b[1], E.Min)
    return lo, hi


@attrs.define
class DomainInfo:
    """The range an iterator must sweep (``dom``) and the range it must stay in
    (``bound``), as TVM's ``BlockVarDomainInfo``."""

    dom: tuple | None = None
    bound: tuple | None = None

    def union(self, other: DomainInfo, ana: ScopeAnalyzer) -> None:
        # (d0 ^ b0) v (d1 ^ b1) relaxed to (d0 v d1) ^ (b0 v b1), as TVM
        self.dom = _union(ana, self.dom, other.dom)
        self.bound = _union(ana, self.bound, other.bound)

    def settle(self, ana: ScopeAnalyzer) -> None:
        """Drop the bound where the swept range provably stays inside it; sweep the
        bound instead where it lies inside the range or the two meet in a constant
        range; otherwise keep both (the caller predicates on the bound)."""

        def simplified(rng):
            return tuple(None if x is None else ana.simplify(x) for x in rng)

        if self.dom is None:
            if self.bound is not None and not _open(self.bound):
                self.dom, self.bound = simplified(self.bound), None
            return
        self.dom = simplified(self.dom)
        if self.bound is None:
            return
        self.bound = simplified(self.bound)
        meet = simplified(_intersect(ana, self.dom, self.bound))
        if ana.equal(self.dom[0], meet[0]) and ana.equal(self.dom[1], meet[1]):
            self.bound = None
        elif ana.equal(self.bound[0], meet[0]) and ana.equal(self.bound[1], meet[1]):
            self.dom, self.bound = self.bound, None
        elif const_value(meet[0]) is not None and const_value(meet[1]) is not None:
            self.dom, self.bound = meet, None

    def cover(self, iv_dom: Range, ana: ScopeAnalyzer) -> tuple:
        """``(min, extent)`` of the loop to sweep: the domain when it is bounded on
        both sides, else the iterator's whole domain."""
        if self.dom is None or _open(self.dom):
            return iv_dom.min, iv_dom.extent
        lo, hi = self.dom
        return lo, ana.simplify(hi - lo + 1)


def solve_index(provided, required, dim_max, ana: ScopeAnalyzer):
    """The iterator one provided index ``(lo, hi)`` depends on, and the range it must
    sweep so the index covers ``required`` (TVM's ``SolveBlockVarDomain``)."""
    p_lo, p_hi = ana.simplify(provided[0]), ana.simplify(provided[1])
    r_lo, r_hi = required
    r_lo = None if r_lo is None else ana.simplify(r_lo)
    r_hi = None if r_hi is None else ana.simplify(r_hi)
    if isinstance(p_lo, E.Mul) and (isinstance(p_lo.a, E.Var) or isinstance(p_lo.b, E.Var)):
        var, e = (p_lo.a, p_lo.b) if isinstance(p_lo.a, E.Var) else (p_lo.b, p_lo.a)
        dom = (_div(r_lo, e), _div(r_hi, e))
        return var, DomainInfo(dom, (_zero(e), E.FloorDiv(dim_max, e)))
    if not ana.equal(p_lo, p_hi):
        raise NoSolution(f"the region [{p_lo!r}, {p_hi!r}] is not a scaled iterator")
    if isinstance(p_lo, E.Var):
        return p_lo, DomainInfo((r_lo, r_hi), (_zero(p_lo), dim_max))
    if isinstance(p_lo, E.FloorDiv) and ana.can_prove(binary("ge", p_lo.b, 1)):
        x, f = p_lo.a, p_lo.b
        # a <= x // f <= b with f > 0  <=>  a * f <= x <= b * f + f - 1
        dom = (_mul(r_lo, f), None if r_hi is None else ana.simplify(r_hi * f + f - 1))
        if isinstance(x, E.Var):
            return x, DomainInfo(dom, (_zero(x), ana.simplify(dim_max * f + f - 1)))
        return solve_index((x, x), dom, dim_max, ana)
    if isinstance(p_lo, E.FloorMod):
        x, m = p_lo.a, p_lo.b
        if isinstance(x, E.Var):  # x % m leaves x free: no constraint
            return x, DomainInfo()
        if ana.can_prove(binary("ge", x, 1)) and ana.can_prove(binary("ge", m, 1)):
            if r_lo is not None and ana.can_prove(binary("ge", r_lo, 0)):
                return solve_index((x, x), (r_lo, None), dim_max, ana)
    raise NoSolution(f"the index {p_lo!r} is not an iterator, a scaled iterator, or one "
                     "divided or taken modulo")  # fmt: skip


def _open(interval) -> bool:
    """Whether an interval is unbounded on a side."""
    return interval[0] is None or interval[1] is None


def _div(x, e):
    return None if x is None else E.FloorDiv(x, e)


def _mul(x, e):
    return None if x is None else x * e


def _zero(like) -> E.PrimExpr:
    return E.IntImm(like.dtype, 0)


def _dim_max(extent, ana: ScopeAnalyzer) -> E.PrimExpr:
    return ana.pick(extent - 1, _zero(extent), E.Max)


def _update_dimwise(buffer, provided, required, ana, doms) -> None:
    for d, (prov, req) in enumerate(zip(provided, required)):
        lo = ana.simplify(prov[0])
        if const_value(lo) is not None and ana.equal(lo, prov[1]):
            continue  # a constant index needs nothing of any iterator
        var, info = solve_index(prov, req, _dim_max(buffer.shape[d], ana), ana)
        if var in doms:
            doms[var].union(info, ana)
        elif not (ana.equal(prov[0], req[0]) and ana.equal(prov[1], req[1])):
            raise NoSolution(f"the index {lo!r} of {buffer.name} depends on no block iterator")


def _update_affine(buffer, iter_vars, provided, required, ana, doms) -> bool:
    """Doms through the inverse of a bijective map; False when there is none."""
    if not all(ana.equal(lo, hi) for lo, hi in provided):
        return False
    if any(_open(r) for r in required):
        return False
    iters = {iv.var: iv.dom for iv in iter_vars}
    points = [lo for lo, _ in provided]
    if detect_iter_map(points, iters, bijective=True).indices is None:
        return False
    lows = inverse_map(points, iters, [r[0] for r in required])
    highs = inverse_map(points, iters, [r[1] for r in required])
    top = [_dim_max(extent, ana) for extent in buffer.shape]
    zeros = [_zero(extent) for extent in buffer.shape]
    bound_lo = inverse_map(points, iters, zeros)
    bound_hi = inverse_map(points, iters, top)
    if any(x is None for x in (lows, highs, bound_lo, bound_hi)):
        return False
    used = {id(v) for v in _vars_of(points)}
    for var in lows:
        if id(var) not in used:
            continue
        dom = (ana.pick(lows[var], highs[var], E.Min), ana.pick(lows[var], highs[var], E.Max))
        bound = (
            ana.pick(bound_lo[var], bound_hi[var], E.Min),
            ana.pick(bound_lo[var], bound_hi[var], E.Max),
        )
        doms[var].union(DomainInfo(dom, bound), ana)
    return True


def _vars_of(exprs) -> list:
    from tilelang.ir.var_usage import collect_vars

    out = []
    for x in exprs:
        out.extend(collect_vars(x))
    return out


def block_var_domains(iter_vars, provided: dict, required: dict, ana: ScopeAnalyzer) -> list:
    """One settled :class:`DomainInfo` per iterator of ``iter_vars``.

    ``provided`` maps a buffer to the block's access region of it (``(lo, hi)`` per
    dimension, in the block's iterators); ``required`` maps it to the region to cover
    (``(lo, hi)`` per dimension, free of the block's iterators). Raises
    :class:`NoSolution` when an index cannot be inverted."""
    doms = {iv.var: DomainInfo() for iv in iter_vars}
    for buffer, region in provided.items():
        need = required.get(buffer)
        if need is None:
            continue
        if not _update_affine(buffer, iter_vars, region, need, ana, doms):
            _update_dimwise(buffer, region, need, ana, doms)
    out = []
    for iv in iter_vars:
        info = doms[iv.var]
        own = (iv.dom.min, ana.simplify(iv.dom.min + iv.dom.extent - 1))
        info.bound = own if info.bound is None else _intersect(ana, info.bound, own)
        info.settle(ana)
        out.append(info)
    return out

"""Iterator maps: index expressions as sums of split and fused loop iterators (TVM's
``DetectIterMap`` / ``IterMapSimplify``).

Given loop variables with ranges (``i in [0, 128)``, ...), an index such as
``(i * 32 + j) // 128`` is rewritten into an :class:`IterSum` of
:class:`IterSplit` terms. A split ``(mark // lower_factor) % extent * scale`` takes a
slice of the digits of an :class:`IterMark`: a loop variable, or a *fused* iterator
made of several splits (``i * 32 + j`` with ``j < 32`` is one fused mark of extent
``extent(i) * 32``). Recognised: ``+``, ``-`` (negative scales, ``9 - vi``),
multiplication by constants, ``//`` and ``%`` by constants of a fused sum, and
variables that are not iterators (they stay in the sum's symbolic ``base``).

:func:`detect_iter_map` answers whether a list of indices is such a map and whether
it is *bijective* (every iterator digit used exactly once, all of them) or
*surjective* (no digit used twice, unused iterators allowed, and a sum of independent
iterators such as the sliding window ``j_0 + j_1`` accepted), optionally under a
predicate ``fused < bound`` as split makes for ragged tiles. :func:`normal_form`
prints a map back in TVM's normal form: a split of a fused iterator ``f`` is
``f % (lower_factor * extent) // lower_factor`` (``f % 16384 // 128``), shortened
to ``f // lower_factor`` when it is the top slice and ``f % extent`` when it is the
bottom one. :func:`split_expr` builds that form directly, also for symbolic extents
(``f % (n * 128) // n``), as fuse does.
"""

from __future__ import annotations

import attrs

from tilelang.arith.analyzer import const_value, simplify
from tilelang.ir import expr as E
from tilelang.ir.var_usage import uses_any_var

__all__ = [
    "IterMark", "IterSplit", "IterSum", "IterMapResult", "detect_iter_map",
    "normal_form", "iter_map_simplify", "split_expr", "product",
]  # fmt: skip


@attrs.frozen(eq=False)
class IterMark:
    """An iterator ``source`` (a loop variable or a fused :class:`IterSum`) running
    over ``[0, extent)``."""

    source: object
    extent: int


@attrs.frozen
class IterSplit:
    """``(mark // lower_factor) % extent * scale``."""

    mark: IterMark
    lower_factor: int
    extent: int
    scale: int


@attrs.frozen
class IterSum:
    """``sum(args) + base``; ``base`` is an expression free of iterators."""

    args: tuple
    base: E.PrimExpr


@attrs.frozen
class IterMapResult:
    """``indices`` (one :class:`IterSum` each) when the map was recognised, else
    None and ``errors`` says why."""

    indices: list | None
    errors: list


class _Fail(Exception):
    pass


class _Detector:
    def __init__(self, iters: dict):
        self.iters = {}
        for var, rng in iters.items():
            lo, extent = const_value(rng.min), const_value(rng.extent)
            if lo != 0 or (extent is not None and extent < 1):
                raise _Fail(f"iterator {var.name} must start at 0 and be non-empty")
            # a symbolic extent is kept as an expression: such an iterator can only
            # be used whole (no splitting or fusing arithmetic on its extent)
            self.iters[var] = IterMark(var, rng.extent if extent is None else extent)
        self.fused: dict[tuple, IterMark] = {}
        self.iter_vars = list(self.iters)
        # id(mark) -> the extent a predicate bounds it to (``i_0 * 256 + i_1 < 3136``):
        # splits of the mark then range over the bound, as TVM's DetectIterMap does
        self.limits: dict[int, int] = {}

    # ---------------------------------------------------------------- rewriting
    def to_sum(self, expr) -> IterSum:
        if not uses_any_var(expr, self.iter_vars):
            return IterSum((), expr)
        if isinstance(expr, E.Var):
            mark = self.iters[expr]
            extent = self.limits.get(id(mark), mark.extent)
            return IterSum((IterSplit(mark, 1, extent, 1),), _zero(expr))
        if isinstance(expr, E.Add):
            return _add(self.to_sum(expr.a), self.to_sum(expr.b))
        if isinstance(expr, E.Sub):
            return _add(self.to_sum(expr.a), _scale(self.to_sum(expr.b), -1))
        if isinstance(expr, E.Mul):
            for x, c in ((expr.a, expr.b), (expr.b, expr.a)):
                value = const_value(c) if not uses_any_var(c, self.iter_vars) else None
                if value is not None:
                    return _scale(self.to_sum(x), value)
            raise _Fail(f"{expr} multiplies iterators by a non-constant")
        if isinstance(expr, (E.FloorDiv, E.FloorMod)):
            c = const_value(expr.b) if not uses_any_var(expr.b, self.iter_vars) else None
            if c is None or c <= 0:
                raise _Fail(f"{expr} divides by a non-constant or non-positive value")
            split, base = self.fuse(self.to_sum(expr.a))
            offset = const_value(base)
            if offset is None or offset % c:
                raise _Fail(f"{expr} divides an iterator sum with an unaligned offset")
            if isinstance(expr, E.FloorDiv):
                return self.divide(split, c, E.IntImm(base.dtype, offset // c))
            return self.modulo(split, c, base)
        raise _Fail(f"{expr} is not an affine combination of iterators")

    def divide(self, s: IterSplit, c: int, base) -> IterSum:
        _need_int(s)
        if s.scale % c == 0:
            return IterSum((attrs.evolve(s, scale=s.scale // c),), base)
        if c % s.scale == 0 and s.extent % (c // s.scale) == 0:
            c2 = c // s.scale
            if s.extent == c2:  # the quotient is always 0
                return IterSum((), base)
            return IterSum((IterSplit(s.mark, s.lower_factor * c2, s.extent // c2, 1),), base)
        if c % s.scale == 0 and c // s.scale >= s.extent:  # below the divisor: 0
            return IterSum((), base)
        raise _Fail(f"cannot divide the iterator {_show(s)} by {c}")

    def modulo(self, s: IterSplit, c: int, base) -> IterSum:
        _need_int(s)
        zero = _zero(base)
        if s.scale % c == 0:
            return IterSum((), zero)
        if c % s.scale == 0 and s.extent % (c // s.scale) == 0:
            return IterSum((IterSplit(s.mark, s.lower_factor, c // s.scale, s.scale),), zero)
        if c % s.scale == 0 and c // s.scale >= s.extent:  # below the modulus: itself
            return IterSum((s,), zero)
        raise _Fail(f"cannot take the iterator {_show(s)} modulo {c}")

    def fuse(self, total: IterSum) -> tuple[IterSplit, E.PrimExpr]:
        """The sum as one split (of a fused mark when it has several terms)."""
        if not total.args:
            raise _Fail("a division of a constant reached the iterator map")
        if len(total.args) == 1:
            return total.args[0], total.base
        for arg in total.args:
            _need_int(arg)
        args = sorted(total.args, key=lambda a: abs(a.scale))
        unit = args[0].scale
        expected = unit
        for arg in args:
            if arg.scale != expected:
                raise _Fail("the terms do not form one fused iterator (scales are not nested)")
            expected *= arg.extent
        inner = tuple(attrs.evolve(a, scale=a.scale // unit) for a in reversed(args))
        key = tuple((id(a.mark), a.lower_factor, a.extent, a.scale) for a in inner)
        mark = self.fused.get(key)
        if mark is None:
            mark = self.fused[key] = IterMark(IterSum(inner, _zero(total.base)), expected // unit)
        return IterSplit(mark, 1, self.limits.get(id(mark), mark.extent), unit), total.base

    # ---------------------------------------------------------------- checking
    def check(self, sums, bijective: bool, bounded: dict) -> None:
        uses: dict[int, list] = {}
        marks: dict[int, IterMark] = {}
        pending = []
        for total in sums:
            if not total.args:
                continue
            try:
                split, _ = self.fuse(total)  # each index must be one dense (fused) iterator
            except _Fail:
                if bijective:
                    raise
                # surjective (TVM's level for bindings): a sum of independent iterators
                # (the sliding window ``j_0 + j_1``) reaches every value it names
                pending.extend(total.args)
                continue
            if abs(split.scale) != 1:
                raise _Fail(f"an index strides over iterator {_name(split.mark)}")
            pending.append(split)
        while pending:
            split = pending.pop()
            if id(split.mark) not in marks:
                marks[id(split.mark)] = split.mark
                if isinstance(split.mark.source, IterSum):
                    pending.extend(split.mark.source.args)
            uses.setdefault(id(split.mark), []).append(split)
        for key, splits in uses.items():
            mark = marks[key]
            if not isinstance(mark.extent, int):
                if len(splits) != 1 or splits[0].extent is not mark.extent:
                    raise _Fail(f"iterator {_name(mark)} of symbolic extent is used twice")
                continue
            splits.sort(key=lambda s: s.lower_factor)
            expected = 1
            for s in splits:
                if s.lower_factor != expected:
                    raise _Fail(f"iterator {_name(mark)} is used twice or with a gap")
                expected *= s.extent
            extent = bounded.get(key, mark.extent)
            if expected < extent and (bijective or len(splits) > 1 and key in bounded):
                raise _Fail(f"iterator {_name(mark)} is not fully used")
            if key in bounded and expected != extent:
                raise _Fail(
                    f"the splits of iterator {_name(mark)} do not cover its predicate bound"
                )
        for key in bounded:
            if key not in uses:
                raise _Fail("the predicate bounds a fused iterator no index uses")
        if bijective:
            for var, mark in self.iters.items():
                if id(mark) not in uses and not _is_one(mark.extent):
                    raise _Fail(f"iterator {var.name} is not used")

    def bounds(self, predicate) -> dict:
        """``fused < c`` conjuncts of the predicate, per fused mark."""
        out: dict[int, int] = {}
        stack = [predicate]
        while stack:
            cond = stack.pop()
            if isinstance(cond, E.And):
                stack += [cond.a, cond.b]
                continue
            if isinstance(cond, E.IntImm) and cond.value:
                continue
            if not isinstance(cond, E.LT) or uses_any_var(cond.b, self.iter_vars):
                raise _Fail(f"the predicate {cond} is not a bound on a fused iterator")
            symbolic = [v for v, m in self.iters.items() if not isinstance(m.extent, int)]
            try:
                split, base = self.fuse(self.to_sum(cond.a))
            except _Fail:
                if uses_any_var(cond.a, symbolic):
                    continue  # a ragged bound over symbolic tiles: not analysed further
                raise
            if split.lower_factor != 1 or split.scale != 1 or const_value(base) != 0:
                raise _Fail(f"the predicate {cond} is not a bound on a fused iterator")
            limit = const_value(cond.b)
            if limit is None or not isinstance(split.mark.extent, int):
                limit = split.mark.extent  # a symbolic bound (``< N``): no narrower extent
            out[id(split.mark)] = _narrower(out.get(id(split.mark)), limit)
        return out


def detect_iter_map(indices, iters: dict, predicate=None, bijective=False) -> IterMapResult:
    """Recognise ``indices`` as an iterator map over ``iters`` (``Var -> Range``,
    starting at 0 with constant extents). ``bijective`` asks for every iterator
    digit exactly once; otherwise digits may go unused but none is used twice.
    ``predicate`` may bound fused iterators (``i_0 * 5 + i_1 < 16``)."""
    try:
        _, sums = _detect(indices, iters, predicate, bijective)
    except _Fail as err:
        return IterMapResult(None, [str(err)])
    return IterMapResult(sums, [])


def _detect(indices, iters, predicate, bijective, presimplify=True):
    detector = _Detector(iters)
    # the predicate first: the iterators it bounds divide by what divides the bound
    bounded = detector.bounds(predicate) if predicate is not None else {}
    detector.limits = dict(bounded)
    sums = [detector.to_sum(simplify(ix) if presimplify else ix) for ix in indices]
    detector.check(sums, bijective, bounded)
    return detector, sums


def normal_form(total: IterSum) -> E.PrimExpr:
    """The expression of a recognised index in TVM's normal form."""
    out = None
    for s in sorted(total.args, key=lambda a: -abs(a.scale)):
        source = s.mark.source
        src = normal_form(source) if isinstance(source, IterSum) else source
        term = split_expr(src, s.lower_factor, s.extent, s.mark.extent)
        if s.scale != 1:
            term = term * E.IntImm(term.dtype, s.scale)
        out = term if out is None else out + term
    if out is None:
        return total.base
    return out if const_value(total.base) == 0 else out + total.base


def iter_map_simplify(indices, iters: dict, predicate=None) -> list:
    """``indices`` in normal form when they form an iterator map, else simplified."""
    result = detect_iter_map(indices, iters, predicate)
    if result.indices is None:
        return [simplify(ix) for ix in indices]
    return [normal_form(s) for s in result.indices]


def split_expr(src, lower_factor, extent, mark_extent) -> E.PrimExpr:
    """``(src // lower_factor) % extent`` in TVM's normal form; the arguments may be
    ints or (symbolic) expressions."""
    dtype = src.dtype
    lf, ext, total = (_expr(x, dtype) for x in (lower_factor, extent, mark_extent))
    if _equal(lf, 1) and _equal(ext, total):
        return src
    if _equal(product([lf, ext], dtype), total):
        return src if _equal(lf, 1) else E.FloorDiv(src, lf)
    if _equal(lf, 1):
        return E.FloorMod(src, ext)
    return E.FloorDiv(E.FloorMod(src, product([lf, ext], dtype)), lf)


def product(factors, dtype="int32") -> E.PrimExpr:
    """The product of ``factors`` as TVM's simplifier writes it: the symbolic factors
    in order, then one folded constant (``n * 16384``)."""
    const, symbolic = 1, None
    for f in factors:
        value = const_value(f)
        if value is not None:
            const *= value
        else:
            symbolic = f if symbolic is None else symbolic * f
    if symbolic is None:
        return E.IntImm(dtype, const)
    return symbolic if const == 1 else symbolic * E.IntImm(symbolic.dtype, const)


# ------------------------------------------------------------------ helpers


def _narrower(old, new):
    if old is None:
        return new
    if isinstance(old, int) and isinstance(new, int):
        return min(old, new)
    return old if isinstance(old, int) else new


def _is_one(x) -> bool:
    return isinstance(x, int) and x == 1


def _same(a, b) -> bool:
    return a is b or (isinstance(a, int) and isinstance(b, int) and a == b)


def _need_int(s: IterSplit) -> None:
    if not isinstance(s.extent, int) or not isinstance(s.mark.extent, int):
        raise _Fail(f"iterator {_name(s.mark)} has a symbolic extent")


def _zero(like) -> E.PrimExpr:
    return E.IntImm(like.dtype, 0)


def _add(a: IterSum, b: IterSum) -> IterSum:
    args = list(a.args)
    for s in b.args:
        for k, t in enumerate(args):
            if t.mark is s.mark and t.lower_factor == s.lower_factor and _same(t.extent, s.extent):
                args[k] = attrs.evolve(t, scale=t.scale + s.scale)
                break
        else:
            args.append(s)
    args = [s for s in args if s.scale != 0]
    return IterSum(tuple(args), simplify(a.base + b.base))


def _scale(a: IterSum, c: int) -> IterSum:
    args = tuple(attrs.evolve(s, scale=s.scale * c) for s in a.args if c != 0)
    return IterSum(args, simplify(a.base * E.IntImm(a.base.dtype, c)))


def _expr(x, dtype) -> E.PrimExpr:
    return E.IntImm(dtype, x) if isinstance(x, int) else x


def _equal(a, b) -> bool:
    b = _expr(b, a.dtype) if isinstance(b, int) else b
    return const_value(simplify(a - b)) == 0


def _name(mark: IterMark) -> str:
    return mark.source.name if isinstance(mark.source, E.Var) else str(normal_form(mark.source))


def _show(s: IterSplit) -> str:
    return f"{_name(s.mark)}[{s.lower_factor}:{s.lower_factor * s.extent}]*{s.scale}"

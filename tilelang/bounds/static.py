"""Which buffer accesses of a PrimFunc leave their buffer, found without running it.

:func:`find_out_of_bounds` walks a function (TensorIR with blocks, or lowered) and, for
every index of every ``BufferLoad``/``BufferStore``, bounds the index over the domains
of the loops around it (block iterators are replaced by their bindings, so the bounds
are those of real executions) with :func:`tilelang.arith.eval_interval`. The guards in
scope -- ``T.where`` predicates, ``if`` conditions, the condition of an
``if_then_else``/``Select`` around a load -- narrow the bounds where they constrain the
index itself (``T.where(j + ax0 < 16)`` bounds ``A[j + ax0]``) or one of its loop
variables alone (``i < 10``).

An index is *provably* out of bounds when its bounds leave ``[0, extent)`` and the
bounds are attained: every loop variable occurs once, through monotone operations, and
no guard that could exclude the offending iterations is left unused. Otherwise, when it
cannot be shown in bounds (symbolic sizes, a guard of unknown effect), it is only
*possibly* out of bounds. Checks ask for the first kind; ``--warn-bounds`` reports both.
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_difference, eval_interval, linear_form, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer, Range
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import StmtExprVisitor, substitute
from tilelang.ir.node import deep_recursion


@attrs.frozen
class BoundsIssue:
    """One index of one access that leaves (or may leave) its buffer's dimension."""

    func_name: str
    buffer: Buffer
    access: object  # the BufferLoad / BufferStore
    axis: int
    lo: E.PrimExpr | None  # inclusive bounds of the index over its loops
    hi: E.PrimExpr | None
    provable: bool
    node: object  # the nearest node with a source span (the access or a statement)

    @property
    def span(self):
        return getattr(self.node, "span", None)

    def message(self) -> str:
        buffer, index = self.buffer, self.access.indices[self.axis]
        access = f"{buffer.name}[{', '.join(map(str, self.access.indices))}]"
        trailing = "," if len(buffer.shape) == 1 else ""
        shape = "(" + ", ".join(map(str, buffer.shape)) + trailing + ")"
        lo, hi = ("?" if b is None else str(b) for b in (self.lo, self.hi))
        which = f"index {self.axis} ({index})" if len(buffer.shape) > 1 else f"index {index}"
        if self.provable:
            return (
                f"out-of-bounds access {access} in function {self.func_name!r}: {which} "
                f"takes values in [{lo}, {hi}], but {buffer.name} has shape {shape}"
            )
        return (
            f"possibly out-of-bounds access {access} in function {self.func_name!r}: {which} "
            f"ranges over [{lo}, {hi}], not shown to be inside {buffer.name}'s shape {shape}"
        )


def find_out_of_bounds(func, name: str = "main", possible: bool = False) -> list[BoundsIssue]:
    """The accesses of PrimFunc ``func`` provably outside their buffers (and, with
    ``possible=True``, also those that cannot be shown inside), in program order."""
    finder = _Finder(func.attrs.get("global_symbol", name), possible)
    with deep_recursion():
        finder.visit(func.body)
    return finder.issues


# ------------------------------------------------------------------ exactness


_MONOTONE = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.Div, E.FloorMod, E.Cast)


def _bounds_attained(expr: E.PrimExpr, ranged: dict) -> bool:
    """True when the interval bounds of ``expr`` are values it really takes: each
    ranged variable occurs once, under sums, products/divisions by constants, ``%``
    and widening casts only."""
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, E.Var):
            if node in ranged:
                if id(node) in seen or not ranged[node]:
                    return False
                seen.add(id(node))
            continue
        if isinstance(node, E.IntImm):
            continue
        if not isinstance(node, _MONOTONE):
            return False
        if isinstance(node, E.Cast):
            stack.append(node.value)
            continue
        if (
            isinstance(node, E.Mul)
            and const_int_value(node.a) is None
            and const_int_value(node.b) is None
        ):
            return False
        if (
            isinstance(node, (E.FloorDiv, E.Div, E.FloorMod))
            and (const_int_value(node.b) or 0) <= 0
        ):
            return False
        stack += [node.a, node.b]
    return True


# ------------------------------------------------------------------ guards


_FLIP = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT}


def _conjuncts(cond: E.PrimExpr) -> list[E.PrimExpr]:
    if isinstance(cond, E.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    if isinstance(cond, E.Not) and type(cond.a) in _FLIP:
        return [_FLIP[type(cond.a)](cond.a.a, cond.a.b)]
    if isinstance(cond, E.Call) and cond.op == "likely":
        return _conjuncts(cond.args[0])
    return [cond]


def _difference_bound(cond) -> tuple[E.PrimExpr, int | None, int | None] | None:
    """``cond`` as ``lo <= g <= hi`` for ``g = a - b`` (None sides unbounded)."""
    # differences of unsigned values wrap: only signed comparisons narrow an index
    if type(cond) not in (E.LT, E.LE, E.GT, E.GE, E.EQ) or not cond.a.dtype.is_int():
        return None
    g = simplify(binary("sub", cond.a, cond.b))
    bounds = {E.LT: (None, -1), E.LE: (None, 0), E.GT: (1, None), E.GE: (0, None), E.EQ: (0, 0)}
    lo, hi = bounds[type(cond)]
    return g, lo, hi


def _apply_guard(cond, index, ranges, lo, hi):
    """Narrow ``[lo, hi]`` of ``index`` (or the ``ranges`` of one of its variables) by
    one guard conjunct; returns ``(lo, hi, used)``. A guard is used only when it
    narrows something for certain."""
    found = _difference_bound(cond)
    if found is None:
        return lo, hi, False
    g, glo, ghi = found
    dtype = index.dtype
    if not dtype.is_int() or g.dtype != dtype:
        return lo, hi, False
    for sign in (1, -1):  # index = sign * g + k
        k = linear_form(simplify(binary("sub", index, binary("mul", g, sign))))
        if not k.is_const():
            continue
        shifted = [None if v is None else v * sign + k.const for v in (glo, ghi)]
        new_lo, new_hi = shifted if sign == 1 else shifted[::-1]
        lo, ok_lo = _tighter(lo, new_lo, max, dtype)
        hi, ok_hi = _tighter(hi, new_hi, min, dtype)
        return lo, hi, ok_lo and ok_hi
    form = linear_form(g)
    terms = form.live_terms()
    if len(terms) != 1 or not isinstance(terms[0][0], E.Var) or terms[0][0] not in ranges:
        return lo, hi, False
    var, coeff = terms[0]
    if coeff not in (1, -1):
        return lo, hi, False
    # coeff * var + const in [glo, ghi]
    bounds = [None if v is None else (v - form.const) * coeff for v in (glo, ghi)]
    vlo, vhi = bounds if coeff == 1 else bounds[::-1]
    rng = ranges[var]
    first = rng.min
    last = simplify(binary("sub", binary("add", rng.min, rng.extent), 1))
    first, ok_lo = _tighter(first, vlo, max, var.dtype)
    last, ok_hi = _tighter(last, vhi, min, var.dtype)
    if not (ok_lo and ok_hi):
        return lo, hi, False
    ranges[var] = Range(first, simplify(binary("add", binary("sub", last, first), 1)))
    return lo, hi, True


def _tighter(current, bound, pick, dtype):
    """``pick(current, bound)`` and whether that is certain; ``bound`` None leaves
    ``current`` as it is."""
    if bound is None:
        return current, True
    if current is None:
        return E.IntImm(dtype, bound), True
    value = const_int_value(current)
    if value is None:
        return current, False  # a symbolic bound against a constant: undecided
    return E.IntImm(current.dtype, pick(value, bound)), True


# ------------------------------------------------------------------ the walk


class _Finder(StmtExprVisitor):
    def __init__(self, func_name: str, possible: bool):
        self.func_name, self.possible = func_name, possible
        self.ranges: dict = {}  # loop var -> Range
        self.exact: dict = {}  # loop var -> bool: Range bounds are attained values
        self.values: dict = {}  # block iterator / let var -> value in loop variables
        self.guards: list[E.PrimExpr] = []
        self.located: list = []
        self.issues: list[BoundsIssue] = []

    def resolve(self, expr: E.PrimExpr) -> E.PrimExpr:
        return substitute(expr, self.values) if self.values else expr

    def visit(self, node):
        has_span = getattr(node, "span", None) is not None
        if has_span:
            self.located.append(node)
        try:
            return super().visit(node)
        finally:
            if has_span:
                self.located.pop()

    # -- scopes
    def visit_for(self, op: S.For):
        self.visit(op.min)
        self.visit(op.extent)
        lo, extent = self.resolve(op.min), self.resolve(op.extent)
        exact, step = True, op.step
        if step is not None:
            s, n = const_int_value(step), const_int_value(extent)
            if s is not None and s > 0 and n is not None:
                extent = E.IntImm(extent.dtype, (n - 1) // s * s + 1) if n > 0 else extent
            else:
                exact = False
        if _uses_ranged(lo, self.ranges) or _uses_ranged(extent, self.ranges):
            exact = False  # a triangular loop: its bounds and an outer one's are not independent
        self.ranges[op.loop_var], self.exact[op.loop_var] = Range(lo, extent), exact
        self.visit(op.body)
        del self.ranges[op.loop_var], self.exact[op.loop_var]

    def visit_block_realize(self, op: S.BlockRealize):
        for value in op.iter_values:
            self.visit(value)
        self.visit(op.predicate)
        block = op.block
        for iv, value in zip(block.iter_vars, op.iter_values):
            self.values[iv.var] = self.resolve(value)
        guarded = not (isinstance(op.predicate, E.IntImm) and op.predicate.value)
        if guarded:
            self.guards.append(self.resolve(op.predicate))
        # The declared reads/writes and match_buffer sources are regions, not accesses.
        if block.init is not None:
            self.visit(block.init)
        self.visit(block.body)
        if guarded:
            self.guards.pop()
        for iv in block.iter_vars:
            self.values.pop(iv.var, None)

    def visit_block(self, op: S.Block):  # a bare block (the root)
        if op.init is not None:
            self.visit(op.init)
        self.visit(op.body)

    def visit_let_stmt(self, op: S.LetStmt):
        self.visit(op.value)
        self.values[op.var] = self.resolve(op.value)
        self.visit(op.body)
        self.values.pop(op.var, None)

    def visit_let(self, op: E.Let):
        self.visit(op.value)
        self.values[op.var] = self.resolve(op.value)
        self.visit(op.body)
        self.values.pop(op.var, None)

    def visit_if_then_else(self, op: S.IfThenElse):
        self.visit(op.condition)
        self._guarded(self.resolve(op.condition), op.then_case)
        if op.else_case is not None:
            self._guarded(E.Not(self.resolve(op.condition)), op.else_case)

    def visit_select(self, op: E.Select):
        self.visit(op.condition)
        self._guarded(self.resolve(op.condition), op.true_value)
        self._guarded(E.Not(self.resolve(op.condition)), op.false_value)

    def visit_call(self, op: E.Call):
        if op.op == "if_then_else" and len(op.args) == 3:
            return self.visit_select(E.Select(*op.args))
        return self.generic_visit(op)

    def _guarded(self, cond, node):
        self.guards.append(cond)
        self.visit(node)
        self.guards.pop()

    # -- accesses
    def visit_buffer_load(self, op: E.BufferLoad):
        self.generic_visit(op)
        self._check(op)

    def visit_buffer_store(self, op: S.BufferStore):
        self.generic_visit(op)
        self._check(op)

    def _check(self, access) -> None:
        buffer = access.buffer
        if len(access.indices) != len(buffer.shape):
            return  # a flat access to a lowered buffer: its shape is its allocation
        if access.predicate is not None:
            return  # masked: lanes outside the buffer may be named but never touched
        for axis, (index, extent) in enumerate(zip(access.indices, buffer.shape)):
            try:
                issue = self._check_index(access, axis, index, extent)
            except E.TIRTypeError:  # arithmetic the analysis cannot type: no verdict
                issue = None
            if issue is not None:
                self.issues.append(issue)

    def _check_index(self, access, axis, index, extent):
        if isinstance(index, E.Ramp):
            last = binary("add", index.base, binary("mul", index.stride, index.lanes - 1))
            a = self._check_index(access, axis, index.base, extent)
            return a or self._check_index(access, axis, last, extent)
        if not index.dtype.is_integer() or index.dtype.lanes != 1:
            return None
        index = self.resolve(index)
        ranges = dict(self.ranges)
        lo, hi = None, None
        unused_guard = False
        pending = []
        for guard in self.guards:
            # A guard over no loop variable is the same for every iteration: it
            # decides whether the access runs at all, not which indices it takes.
            pending += [c for c in _conjuncts(guard) if _uses_ranged(c, ranges)]
        for cond in pending:  # variable ranges first, so index bounds use them
            lo, hi, used = _apply_guard(cond, index, ranges, lo, hi)
            unused_guard |= not used
        ilo, ihi = eval_interval(index, ranges)
        lo = ilo if lo is None else (lo if ilo is None else _max_known(lo, ilo))
        hi = ihi if hi is None else (hi if ihi is None else _min_known(hi, ihi))
        extent = self.resolve(extent)
        above = _sign(hi, binary("sub", extent, 1) if hi is not None else None)
        below = _sign(lo, E.IntImm(lo.dtype, 0) if lo is not None else None)
        if above != 1 and below != -1:  # not shown to leave the buffer
            if above in (-1, 0) and below in (0, 1):
                return None
            return self._issue(access, axis, lo, hi, False) if self.possible else None
        attained = _bounds_attained(index, {v: self.exact.get(v, True) for v in ranges})
        provable = attained and not unused_guard
        if not provable and not self.possible:
            return None
        return self._issue(access, axis, lo, hi, provable)

    def _issue(self, access, axis, lo, hi, provable):
        node = (
            access
            if getattr(access, "span", None) is not None
            else (self.located[-1] if self.located else access)
        )
        return BoundsIssue(self.func_name, access.buffer, access, axis, lo, hi, provable, node)


def _uses_ranged(cond, ranges) -> bool:
    from tilelang.ir.analysis import collect_vars

    return any(v in ranges for v in collect_vars(cond))


def _sign(a, b) -> int | None:
    """1 if ``a > b``, 0 if equal, -1 if less, None when unknown."""
    if a is None or b is None:
        return None
    diff = const_difference(a, b)
    if diff is None:
        return None
    return (diff > 0) - (diff < 0)


def _max_known(a, b):
    s = _sign(a, b)
    return b if s is None else (a if s >= 0 else b)


def _min_known(a, b):
    s = _sign(a, b)
    return b if s is None else (a if s <= 0 else b)

"""The structural match ``tensorize`` performs: a block of the schedule against the
description of a tensor intrinsic (TVM's ``TensorizeComparator``).

The outermost block (the *scope* block: the block being tensorized and the
description's root block) is compared by its reads and writes only: each region of
the schedule's block must have the extents of the description's region, and its
minimums become the *base* of that buffer (``C[vi_o * 16:vi_o * 16 + 16, ...]``
gives base ``(vi_o * 16, vj_o * 16)``). Below it everything is compared node by node:
loops (extent, kind, annotations), inner blocks (iterator kinds, bindings, regions),
stores and loads (each index minus the base equals the description's index) and
expressions. Variables the description defines (loop variables, block iterators)
are mapped to the schedule's as they are met. A buffer of the description maps to
one buffer of the schedule with the same dtype and scope; shapes, strides and
offsets may differ (the description's buffers are views).

A mismatch raises :class:`~tilelang.ScheduleError` naming the part that differs.
"""

from __future__ import annotations

from tilelang.arith import Analyzer, ConstBound, const_value, linear_form
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import substitute
from tilelang.ir.node import child_fields
from tilelang.schedule.errors import schedule_error


class TensorizeMismatch(Exception):
    """Raised inside the matcher; turned into a ScheduleError by :func:`match`."""


def _fail(message: str):
    raise TensorizeMismatch(message)


def _show(node) -> str:
    try:
        return node.script() if isinstance(node, S.Stmt) else str(node)
    except Exception:  # the printer must never hide the mismatch
        return f"<{type(node).__name__}>"


class Matcher:
    """Compares a schedule block (lhs) with a description root block (rhs)."""

    def __init__(self):
        self.var_map: dict = {}  # description variable -> schedule variable
        self.buffer_map: dict = {}  # description buffer -> schedule buffer
        self.bases: dict = {}  # schedule buffer -> base index per dimension
        self.path: list[str] = []
        # bounds of the schedule's loop variables and block iterators, so that
        # floordiv(vj_o * 64 + vj_i, 16) - vj_o * 4 is seen to be floordiv(vj_i, 16)
        self.analyzer = Analyzer()

    def bound(self, var, min_value, extent) -> None:
        lo, ext = const_value(min_value), const_value(extent)
        if lo is not None and ext is not None:
            self.analyzer.var_bounds[var] = ConstBound(lo, lo + ext - 1)

    # ------------------------------------------------------------ buffers

    def buffer(self, lhs, rhs) -> None:
        known = self.buffer_map.get(rhs)
        if known is not None:
            if known is not lhs:
                _fail(f"description buffer {rhs.name} stands for {known.name}, not {lhs.name}")
            return
        if lhs.dtype != rhs.dtype:
            _fail(
                f"buffer {lhs.name} has dtype {lhs.dtype}, description {rhs.name} has {rhs.dtype}"
            )
        if lhs.scope != rhs.scope:
            _fail(
                f"buffer {lhs.name} is in scope {lhs.scope!r}, description {rhs.name} "
                f"expects {rhs.scope!r}"
            )
        if lhs in self.buffer_map.values():
            _fail(f"buffer {lhs.name} would stand for two description buffers")
        self.buffer_map[rhs] = lhs

    def region(self, lhs, rhs, scope: bool) -> None:
        self.buffer(lhs.buffer, rhs.buffer)
        lead = len(lhs.region) - len(rhs.region)
        if lead < 0:
            _fail(f"region of {lhs.buffer.name} has fewer dimensions than the description's")
        for r in lhs.region[:lead]:
            if const_int_value(r.extent) != 1:
                _fail(
                    f"region of {lhs.buffer.name}: dimensions the description does not have "
                    f"must have extent 1, not {r.extent}"
                )
        for index, (lr, rr) in enumerate(zip(lhs.region[lead:], rhs.region)):
            if not self.equal_int(lr.extent, rr.extent):
                _fail(
                    f"region of {lhs.buffer.name}: extent {lr.extent} in dimension "
                    f"{lead + index}, the description has {rr.extent}"
                )
        base = self.bases.get(lhs.buffer)
        if base is None:
            if not scope:
                _fail(f"buffer {lhs.buffer.name} is not in the reads/writes of the block")
            self.bases[lhs.buffer] = tuple(r.min for r in lhs.region)
            return
        self.indices(lhs.buffer, [r.min for r in lhs.region], [r.min for r in rhs.region])

    def indices(self, buffer, lhs_indices, rhs_indices) -> None:
        base = self.bases.get(buffer)
        if base is None:
            _fail(f"buffer {buffer.name} is accessed but not in the reads/writes of the block")
        lead = len(lhs_indices) - len(rhs_indices)
        if lead < 0 or len(base) != len(lhs_indices):
            _fail(f"accesses of {buffer.name} have a different number of indices")
        for index, b in zip(lhs_indices[:lead], base[:lead]):
            if not self.equal_int(index, b):
                _fail(f"access of {buffer.name}: leading index {index} is not {b}")
        for dim, (index, b, want) in enumerate(zip(lhs_indices[lead:], base[lead:], rhs_indices)):
            relative = binary("sub", index, b)
            if not self.equal_int(relative, self.mapped(want)):
                _fail(
                    f"access of {buffer.name}: index {index} (relative to the region "
                    f"start {b}) in dimension {lead + dim} is not the description's {want}"
                )

    # -------------------------------------------------------- expressions

    def mapped(self, expr):
        return substitute(expr, self.var_map)

    def equal_int(self, a, b) -> bool:
        """``a == b`` for integer expressions, up to linear rearrangement."""
        if a.dtype.is_integer() and b.dtype.is_integer():
            difference = binary("sub", a, self.mapped(b))
            form = linear_form(difference)
            if form.is_const():
                return form.const == 0
            return const_value(self.analyzer.simplify(difference)) == 0
        return self.expr_equal(a, b)

    def define(self, lhs_var, rhs_var) -> None:
        known = self.var_map.get(rhs_var)
        if known is not None and known is not lhs_var:
            _fail(f"variable {rhs_var.name} of the description is bound twice")
        if lhs_var.dtype.code != rhs_var.dtype.code:
            _fail(f"variable {lhs_var.name} is {lhs_var.dtype}, description's {rhs_var.name} "
                  f"is {rhs_var.dtype}")  # fmt: skip
        self.var_map[rhs_var] = lhs_var

    def expr(self, lhs, rhs) -> None:
        if not self.expr_equal(lhs, rhs):
            _fail(f"expression {lhs} does not match the description's {rhs}")

    def expr_equal(self, lhs, rhs) -> bool:
        if type(lhs) is not type(rhs):
            if isinstance(lhs, E.PrimExpr) and isinstance(rhs, E.PrimExpr):
                return (
                    lhs.dtype.is_integer() and rhs.dtype.is_integer() and self.equal_int(lhs, rhs)
                )
            return False
        if isinstance(lhs, E.Var):
            return self.var_map.get(rhs, rhs) is lhs
        if isinstance(lhs, E.PrimExpr) and lhs.dtype.code != rhs.dtype.code:
            return False
        if isinstance(lhs, E.BufferLoad):
            self.buffer(lhs.buffer, rhs.buffer)
            self.indices(lhs.buffer, lhs.indices, rhs.indices)
            return True
        if isinstance(lhs, (E.IntImm, E.FloatImm)):
            return lhs.value == rhs.value
        if isinstance(lhs, E.StringImm):
            return lhs.value == rhs.value
        if isinstance(lhs, E.Call) and lhs.op != rhs.op:
            return False
        return self.fields_equal(lhs, rhs)

    def fields_equal(self, lhs, rhs) -> bool:
        for name in child_fields(type(lhs)):
            a, b = getattr(lhs, name), getattr(rhs, name)
            if isinstance(a, tuple):
                if not isinstance(b, tuple) or len(a) != len(b):
                    return False
                if not all(self.expr_equal(x, y) for x, y in zip(a, b)):
                    return False
            elif isinstance(a, E.PrimExpr) or isinstance(b, E.PrimExpr):
                if not (isinstance(a, E.PrimExpr) and isinstance(b, E.PrimExpr)):
                    return False
                if not self.expr_equal(a, b):
                    return False
            elif a != b:
                return False
        return True

    # --------------------------------------------------------- statements

    def stmt(self, lhs, rhs) -> None:
        if type(lhs) is not type(rhs):
            _fail(
                f"a {type(lhs).__name__} stands where the description has a "
                f"{type(rhs).__name__}:\n{_show(lhs)}\nvs the description's\n{_show(rhs)}"
            )
        visit = getattr(self, f"stmt_{type(lhs).__name__.lower()}", None)
        if visit is None:
            if not self.fields_equal(lhs, rhs):
                _fail(f"statement\n{_show(lhs)}\ndoes not match the description's\n{_show(rhs)}")
            return
        visit(lhs, rhs)

    def stmt_for(self, lhs: S.For, rhs: S.For) -> None:
        self.path.append(f"loop {lhs.loop_var.name}")
        self.define(lhs.loop_var, rhs.loop_var)
        self.bound(lhs.loop_var, lhs.min, lhs.extent)
        if not self.equal_int(lhs.min, rhs.min) or not self.equal_int(lhs.extent, rhs.extent):
            _fail(
                f"loop {lhs.loop_var.name} runs over [{lhs.min}, +{lhs.extent}), the "
                f"description's {rhs.loop_var.name} over [{rhs.min}, +{rhs.extent})"
            )
        if lhs.kind is not rhs.kind:
            _fail(f"loop {lhs.loop_var.name} is {lhs.kind.name.lower()}, the description's "
                  f"is {rhs.kind.name.lower()}")  # fmt: skip
        if dict(lhs.annotations) != dict(rhs.annotations):
            _fail(f"loop {lhs.loop_var.name} has annotations {dict(lhs.annotations)}, the "
                  f"description's {dict(rhs.annotations)}")  # fmt: skip
        self.stmt(lhs.body, rhs.body)
        self.path.pop()

    def stmt_seqstmt(self, lhs: S.SeqStmt, rhs: S.SeqStmt) -> None:
        if len(lhs.seq) != len(rhs.seq):
            _fail(f"a sequence of {len(lhs.seq)} statements, the description has {len(rhs.seq)}")
        for a, b in zip(lhs.seq, rhs.seq):
            self.stmt(a, b)

    def stmt_bufferstore(self, lhs: S.BufferStore, rhs: S.BufferStore) -> None:
        self.buffer(lhs.buffer, rhs.buffer)
        self.indices(lhs.buffer, lhs.indices, rhs.indices)
        self.expr(lhs.value, rhs.value)

    def stmt_evaluate(self, lhs, rhs) -> None:
        self.expr(lhs.value, rhs.value)

    def stmt_blockrealize(self, lhs: S.BlockRealize, rhs: S.BlockRealize) -> None:
        block, desc = lhs.block, rhs.block
        self.path.append(f"block {block.name_hint!r}")
        if len(block.iter_vars) != len(desc.iter_vars):
            _fail(f"block {block.name_hint!r} has {len(block.iter_vars)} iterators, the "
                  f"description's {len(desc.iter_vars)}")  # fmt: skip
        for iv, div in zip(block.iter_vars, desc.iter_vars):
            if iv.iter_type != div.iter_type:
                _fail(f"iterator {iv.var.name} of block {block.name_hint!r} is not of the "
                      f"kind of the description's {div.var.name}")  # fmt: skip
        for value, want in zip(lhs.iter_values, rhs.iter_values):
            if not self.equal_int(value, want):
                _fail(f"block {block.name_hint!r} binds {value}, the description {want}")
        for iv, div in zip(block.iter_vars, desc.iter_vars):
            self.define(iv.var, div.var)
            self.bound(iv.var, iv.dom.min, iv.dom.extent)
        self.expr(lhs.predicate, rhs.predicate)
        if block.alloc_buffers or desc.alloc_buffers or block.match_buffers:
            _fail(f"block {block.name_hint!r}: allocations or match_buffers in a matched block")
        self.regions(block, desc, scope=False)
        self.stmt(block.body, desc.body)
        self.path.pop()

    def regions(self, block, desc, scope: bool) -> None:
        for kind in ("writes", "reads"):
            mine, theirs = getattr(block, kind), getattr(desc, kind)
            if len(mine) != len(theirs):
                _fail(
                    f"block {block.name_hint!r} {kind} {len(mine)} regions "
                    f"({', '.join(r.buffer.name for r in mine)}), the description "
                    f"{len(theirs)} ({', '.join(r.buffer.name for r in theirs)})"
                )
            for a, b in zip(mine, theirs):
                self.region(a, b, scope)


def match(realize: S.BlockRealize, desc_root: S.BlockRealize, subject: str, intrin_name: str):
    """The :class:`Matcher` after matching ``realize`` with the description's root
    block realize; raises ScheduleError (tensorize) at the first difference."""
    matcher = Matcher()
    block, desc = realize.block, desc_root.block
    try:
        if desc.iter_vars:
            _fail("the description's root block must not have iterators")
        for iv in block.iter_vars:
            matcher.bound(iv.var, iv.dom.min, iv.dom.extent)
        matcher.regions(block, desc, scope=True)
        matcher.stmt(block.body, desc.body)
    except TensorizeMismatch as error:
        where = " > ".join(matcher.path)
        where = f" (at {where})" if where else ""
        raise schedule_error(
            "tensorize",
            subject,
            f"does not match the description of tensor intrinsic {intrin_name!r}{where}: {error}",
            realize,
        ) from None
    return matcher

"""Explicit vectorisation of ``T.vectorized`` loops of constant extent.

A vectorized loop ``for j in T.vectorized(16): C[i*16 + j] = C[i*16 + j] + a * B[j]``
becomes the single vector statement
``C[Ramp(i*16, 1, 16)] = C[Ramp(i*16, 1, 16)] + Broadcast(a, 16) * B[Ramp(0, 1, 16)]``,
as TVM's ``VectorizeLoop`` does, and the codegen turns Ramp indices of stride 1 into
plain vector loads and stores.

Why explicit vector IR rather than loop metadata (``llvm.loop.vectorize.width``):
LLVM fully unrolls short constant loops *before* its loop vectoriser runs, so a
16-iteration inner loop of a register tile would reach the vectoriser as 16 scalar
statements and depend on the SLP vectoriser to find them again. Emitting vectors
directly makes the width exactly the one the schedule asked for.

When the body does something this rewrite cannot express exactly (a nested
``while``, an allocation, an extern call on a vector, a store of a vector value to one
address, or a buffer that is both written and read at different indices, which a
serial loop could carry a dependence through), the loop stays a scalar loop and the
codegen marks it with ``llvm.loop.vectorize.enable`` so LLVM's legality checks decide.
"""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator, StmtExprVisitor
from tilelang.ir.structural import structural_equal

#: intrinsics that apply lane by lane to vectors
_ELEMENTWISE_CALLS = {
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "floor", "ceil",
    "round", "trunc", "nearbyint", "pow", "atan2", "fmod", "abs", "isnan", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right", "likely",
    "bf16_to_float", "float_to_bf16", "reinterpret",
}  # fmt: skip


class CannotVectorize(Exception):
    """The loop body holds something the explicit rewrite does not handle."""


def _const(x):
    return x.value if isinstance(x, E.IntImm) else None


def _add(a, b):
    ca, cb = _const(a), _const(b)
    if ca is not None and cb is not None:
        return E.IntImm(a.dtype, ca + cb)
    if ca == 0:
        return b
    if cb == 0:
        return a
    return E.Add(a, b)


def _mul(a, b):
    ca, cb = _const(a), _const(b)
    if ca is not None and cb is not None:
        return E.IntImm(a.dtype, ca * cb)
    if ca == 1:
        return b
    if cb == 1:
        return a
    return E.Mul(a, b)


def _neg(a):
    ca = _const(a)
    return E.IntImm(a.dtype, -ca) if ca is not None else E.Sub(E.IntImm(a.dtype, 0), a)


def _lanes(x) -> int:
    return x.dtype.lanes


def _broadcast(x, lanes):
    if _lanes(x) == lanes:
        return x
    if _lanes(x) != 1:
        raise CannotVectorize(f"mixing {_lanes(x)} and {lanes} lanes")
    return E.Broadcast(x, lanes)


def _scalar_part(x):
    """The scalar that a Broadcast repeats, or ``x`` itself when it is a scalar."""
    if isinstance(x, E.Broadcast):
        return x.value
    return x if _lanes(x) == 1 else None


class _Vectorizer(StmtExprMutator):
    """Rewrites a loop body with ``loop_var`` replaced by ``Ramp(min, 1, lanes)``."""

    def __init__(self, loop_var: E.Var, start: E.PrimExpr, lanes: int):
        self.loop_var = loop_var
        self.ramp = E.Ramp(start, E.IntImm(start.dtype, 1), lanes)
        self.lanes = lanes
        self.renamed: dict = {}  # scalar let variables that became vectors

    # ------------------------------------------------------------ expressions
    def visit_var(self, op):
        if op is self.loop_var:
            return self.ramp
        return self.renamed.get(op, op)

    def visit_ramp(self, op):
        raise CannotVectorize("a vector expression inside a vectorized loop")

    visit_broadcast = visit_ramp

    def visit_binary_op(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        if a is op.a and b is op.b:
            return op
        if _lanes(a) == 1 and _lanes(b) == 1:
            return type(op)(a, b)
        ramp = self._ramp_arith(op, a, b)
        if ramp is not None:
            return ramp
        return type(op)(_broadcast(a, self.lanes), _broadcast(b, self.lanes))

    def _ramp_arith(self, op, a, b):
        """Keeps ``Ramp + x``, ``Ramp - x``, ``Ramp * c`` as Ramps, so that indices stay
        recognisably contiguous."""
        if not op.dtype.element_of().is_integer():
            return None
        kind = type(op)
        if kind is E.Add or kind is E.Sub:
            sa, sb = _scalar_part(a), _scalar_part(b)
            if isinstance(a, E.Ramp) and sb is not None:
                offset = sb if kind is E.Add else _neg(sb)
                return E.Ramp(_add(a.base, offset), a.stride, self.lanes)
            if isinstance(b, E.Ramp) and sa is not None and kind is E.Add:
                return E.Ramp(_add(b.base, sa), b.stride, self.lanes)
            if isinstance(a, E.Ramp) and isinstance(b, E.Ramp):
                sign = (lambda x: x) if kind is E.Add else _neg
                return E.Ramp(
                    _add(a.base, sign(b.base)), _add(a.stride, sign(b.stride)), self.lanes
                )
        if kind is E.Mul:
            for ramp, other in ((a, b), (b, a)):
                factor = _scalar_part(other)
                if isinstance(ramp, E.Ramp) and factor is not None and _const(factor) is not None:
                    return E.Ramp(_mul(ramp.base, factor), _mul(ramp.stride, factor), self.lanes)
        return None

    def visit_not(self, op):
        a = self.visit(op.a)
        return op if a is op.a else E.Not(a)

    def visit_cast(self, op):
        value = self.visit(op.value)
        if value is op.value:
            return op
        return E.Cast(op.dtype.with_lanes(_lanes(value)) if _lanes(value) > 1 else op.dtype, value)

    def visit_select(self, op):
        c, t, f = self.visit(op.condition), self.visit(op.true_value), self.visit(op.false_value)
        if c is op.condition and t is op.true_value and f is op.false_value:
            return op
        lanes = max(_lanes(c), _lanes(t), _lanes(f))
        if lanes == 1:
            return E.Select(c, t, f)
        return E.Select(_broadcast(c, lanes), _broadcast(t, lanes), _broadcast(f, lanes))

    def visit_buffer_load(self, op):
        (index,) = op.indices
        new = self.visit(index)
        return op if new is index else E.BufferLoad(op.buffer, (new,))

    def visit_let(self, op):
        value = self.visit(op.value)
        if _lanes(value) > 1:
            var = E.Var(op.var.name, value.dtype)
            self.renamed[op.var] = var
            return E.Let(var, value, self.visit(op.body))
        body = self.visit(op.body)
        if value is op.value and body is op.body:
            return op
        return E.Let(op.var, value, body)

    def visit_call(self, op):
        args = tuple(self.visit(a) for a in op.args)
        if all(a is b for a, b in zip(args, op.args)):
            return op
        lanes = max(_lanes(a) for a in args)
        if lanes == 1:
            return E.Call(op.dtype, op.op, args)
        if op.op not in _ELEMENTWISE_CALLS:
            raise CannotVectorize(f"{op.op} on a vector")
        args = tuple(_broadcast(a, lanes) for a in args)
        return E.Call(op.dtype.with_lanes(lanes), op.op, args)

    # ------------------------------------------------------------ statements
    def visit_buffer_store(self, op):
        (index,) = op.indices
        new_index, value = self.visit(index), self.visit(op.value)
        if new_index is index and value is op.value:
            return op
        if _lanes(new_index) == 1:
            raise CannotVectorize("a vector stored to a single address")
        return S.BufferStore(op.buffer, _broadcast(value, self.lanes), (new_index,))

    def visit_let_stmt(self, op):
        value = self.visit(op.value)
        if _lanes(value) > 1:
            var = E.Var(op.var.name, value.dtype)
            self.renamed[op.var] = var
            return S.LetStmt(var, value, self.visit(op.body))
        body = self.visit(op.body)
        if value is op.value and body is op.body:
            return op
        return S.LetStmt(op.var, value, body)

    def visit_if_then_else(self, op):
        if _lanes(self.visit(op.condition)) > 1:
            raise CannotVectorize("a condition that depends on the vectorized variable")
        return self.generic_visit(op)

    def visit_for(self, op):
        for bound in (op.min, op.extent, op.step):
            if bound is not None and _lanes(self.visit(bound)) > 1:
                raise CannotVectorize("a loop bound that depends on the vectorized variable")
        return self.generic_visit(op)

    def _refuse(self, op):
        raise CannotVectorize(type(op).__name__)

    visit_while = visit_allocate = visit_evaluate = visit_assert_stmt = _refuse


class _Accesses(StmtExprVisitor):
    """Collects the indices each buffer (by data variable) is loaded and stored at."""

    def __init__(self):
        self.loads: dict = {}
        self.stores: dict = {}

    def visit_buffer_load(self, op):
        self.loads.setdefault(op.buffer.data, []).append(op.indices[0])
        self.generic_visit(op)

    def visit_buffer_store(self, op):
        self.stores.setdefault(op.buffer.data, []).append(op.indices[0])
        self.generic_visit(op)


def _check_dependences(body) -> None:
    """A buffer written in the loop must be read and written at one contiguous-or-strided
    index only; otherwise one iteration could feed another, and running the lanes at
    once would change the result."""
    seen = _Accesses()
    seen.visit(body)
    for data, stores in seen.stores.items():
        first = stores[0]
        if not isinstance(first, E.Ramp) or _const(first.stride) in (None, 0):
            raise CannotVectorize("a store whose lanes may overlap")
        for other in stores[1:] + seen.loads.get(data, []):
            if not structural_equal(other, first):
                raise CannotVectorize("a buffer written and read at different indices")


def vectorize_body(loop: S.For) -> S.Stmt | None:
    """The vector form of a ``T.vectorized`` loop's body, or None when it cannot be made."""
    lanes = _const(loop.extent)
    if lanes is None or lanes < 2 or (loop.step is not None and _const(loop.step) != 1):
        return None
    try:
        body = _Vectorizer(loop.loop_var, loop.min, lanes).visit(loop.body)
        _check_dependences(body)
    except CannotVectorize:
        return None
    return body

"""Two's-complement wrap-around for signed integer arithmetic in generated CUDA.

The C backend compiles with ``-fwrapv``, LLVM's ``add``/``mul`` wrap, and the python
reference wraps explicitly; nvcc has no ``-fwrapv``, so a signed ``int32_t``/``int64_t``
``+``, ``-``, ``*``, ``<<`` or negation that overflows is undefined behaviour there (and
the optimiser uses that: ``x + 1 > x`` becomes ``true``). This printer mixin computes
those operations on the unsigned type of the same width, where C++ defines the result
modulo 2**bits, and converts back (the conversion is modular in CUDA's compilers and
by definition since C++20)::

    ((int32_t)((uint32_t)a + (uint32_t)b))

8- and 16-bit operands are promoted to ``int`` and narrowed back by the C printer, so
their ``+ - *`` cannot overflow; their left shifts go through the unsigned type too (a
negative ``int`` shifted left is undefined). Buffer indices are left as they are: an
index that overflows is out of bounds on every backend, and native signed index
arithmetic lets nvcc fold address computations (the python reference leaves indices
unwrapped for the same reason). Arithmetic that provably stays in range prints as it
is (``ax0 * 128 + ax1 < 130`` under loops of known extents), so that the common loop
and predicate arithmetic stays readable and as nvcc would optimise it.
"""

from __future__ import annotations

from tilelang.arith.bound import ConstBound, const_bound
from tilelang.ir import expr as E
from tilelang.ir import stmt as S

_OPERATORS = {E.Add: "+", E.Sub: "-", E.Mul: "*"}


_FIELDS = ("a", "b", "value", "condition", "true_value", "false_value")


class WrappingIntegers:
    """Mixin for a :class:`~tilelang.backends.c.c_printer.CLikePrinter`: signed 32/64-bit
    arithmetic outside buffer indices wraps (see the module docstring)."""

    _index_depth = 0

    def _wraps(self, dtype, narrow_too: bool = False) -> bool:
        element = dtype.element_of()
        wide = element.bits >= 32 or narrow_too
        return self._index_depth == 0 and element.is_int() and wide

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._var_bounds: dict = {}  # constant bounds of the loop/let variables in scope

    def _in_range(self, node) -> bool:
        """Whether every ``+ - *`` in ``node`` provably stays in its type's range (so
        no wrap-around can happen and the operation prints as it is)."""
        stack, bounds = [node], self._var_bounds
        while stack:
            expr = stack.pop()
            if isinstance(expr, (E.Add, E.Sub, E.Mul)):
                bound = const_bound(expr, bounds)
                low, high = expr.dtype.element_of().value_range()
                if bound.lo is None or bound.hi is None or bound.lo < low or bound.hi > high:
                    return False
            if isinstance(expr, (E.BinaryOp, E.Cast, E.Select, E.Min, E.Max)):
                stack.extend(c for c in (getattr(expr, f, None) for f in _FIELDS) if c is not None)
        return True

    def visit_for(self, op: S.For) -> None:
        bounds = self._var_bounds
        if isinstance(op.min, E.IntImm) and isinstance(op.extent, E.IntImm):
            low = op.min.value
            bounds[op.loop_var] = ConstBound(low, low + op.extent.value - 1)
        try:
            super().visit_for(op)
        finally:
            bounds.pop(op.loop_var, None)

    def visit_let_stmt(self, op: S.LetStmt) -> None:
        bounds = self._var_bounds
        if op.var.dtype.is_integer() and self._in_range(op.value):
            bounds[op.var] = const_bound(op.value, bounds)
        try:
            super().visit_let_stmt(op)
        finally:
            bounds.pop(op.var, None)

    def _as_unsigned(self, dtype, node) -> str:
        unsigned = self.type_names[f"uint{dtype.element_of().bits}"]
        return f"({unsigned})({self._strip(self.expr(node))})"

    def visit_binary_op(self, op) -> str:
        symbol = _OPERATORS.get(type(op))
        if symbol is None or not self._wraps(op.dtype) or self._in_range(op):
            return super().visit_binary_op(op)
        a, b = self._as_unsigned(op.dtype, op.a), self._as_unsigned(op.dtype, op.b)
        return f"(({self.type_name(op.dtype)})({a} {symbol} {b}))"

    def visit_call(self, op: E.Call) -> str:
        if op.op == "shift_left" and self._wraps(op.dtype, narrow_too=True):
            # a negative operand or a result past the sign bit is undefined when signed;
            # 8/16-bit operands too, since C++ shifts them as (signed) int
            shifted = f"{self._as_unsigned(op.dtype, op.args[0])} << {self.expr(op.args[1])}"
            return f"(({self.type_name(op.dtype)})({shifted}))"
        if op.op == "abs" and not op.dtype.is_float() and self._wraps(op.dtype):
            x = self.expr(op.args[0])
            negated = (
                f"(({self.type_name(op.dtype)})(0 - {self._as_unsigned(op.dtype, op.args[0])}))"
            )
            return f"(({x} < 0) ? {negated} : {x})"
        return super().visit_call(op)

    def _element(self, buffer, index) -> str:
        self._index_depth += 1
        try:
            return super()._element(buffer, index)
        finally:
            self._index_depth -= 1

"""Printing expressions with Python precedence and minimal parentheses.

Each ``visit_*`` returns ``(text, precedence)``; an operand is parenthesised only when
its precedence is lower than its context requires. Comparisons never chain in the
output (``(a < b) == c``), because Python would read ``a < b == c`` as a chain.
"""

from __future__ import annotations

import json
import math

from tilelang.ir import expr as E
from tilelang.ir.comm_reducer import CommReducer
from tilelang.ir.dtype import INT32
from tilelang.ir.functor import NodeFunctor
from tilelang.ir.op import INTRINSICS

# Python's precedence levels, lowest first.
P_LAMBDA, P_OR, P_AND, P_NOT, P_CMP, P_ADD, P_MUL, P_UNARY, P_ATOM = range(9)

_BINARY_PREC = {
    "+": P_ADD,
    "-": P_ADD,
    "*": P_MUL,
    "/": P_MUL,
    "//": P_MUL,
    "%": P_MUL,
    "==": P_CMP,
    "!=": P_CMP,
    "<": P_CMP,
    "<=": P_CMP,
    ">": P_CMP,
    ">=": P_CMP,
    "and": P_AND,
    "or": P_OR,
}

# Binary nodes printed as ``T.fn(a, b)`` calls.
_CALL_NAMES = {"Min": "T.min", "Max": "T.max", "Mod": "T.truncmod"}


def string_literal(text: str) -> str:
    """A double-quoted Python string literal for ``text``."""
    return json.dumps(text, ensure_ascii=False)


def float_literal(value: float) -> str:
    """The number inside ``T.float32(...)``: integral values without ``.0``,
    specials as strings."""
    if math.isnan(value):
        return '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


class ExprPrinter(NodeFunctor):
    """Prints expressions; subclasses supply ``names`` (a NameTable) and ``var_name``."""

    def expr(self, node) -> str:
        """The text of an expression (or of a plain Python value in an annotation)."""
        if not isinstance(node, E.PrimExpr):
            return self.value(node)
        return self.visit(node)[0]

    def operand(self, node, min_prec: int) -> str:
        text, prec = self.visit(node)
        return text if prec >= min_prec else f"({text})"

    def value(self, obj) -> str:
        """Plain values of annotations and attributes."""
        if isinstance(obj, E.PrimExpr):
            return self.expr(obj)
        if isinstance(obj, bool) or obj is None:
            return repr(obj)
        if isinstance(obj, int):
            return str(obj)
        if isinstance(obj, float):
            return repr(obj)
        if isinstance(obj, str):
            return string_literal(obj)
        if isinstance(obj, (list, tuple)):
            return "[" + ", ".join(self.value(x) for x in obj) + "]"
        if isinstance(obj, dict):
            items = (f"{self.value(k)}: {self.value(v)}" for k, v in obj.items())
            return "{" + ", ".join(items) + "}"
        if isinstance(obj, CommReducer):
            return self.comm_reducer(obj)
        if type(obj).__name__ == "Target" and hasattr(obj, "kind"):  # tilelang.target
            return f"T.target({self.target_spec(obj)})"
        return self.node_ref(obj)

    def comm_reducer(self, reducer: CommReducer) -> str:
        """``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])``: the parameters are
        named only inside the lambda."""
        identity = ", ".join(self.expr(v) for v in reducer.identity_element)
        self.names.push()
        try:
            params = ", ".join(self.define_var(v) for v in (*reducer.lhs, *reducer.rhs))
            results = [self.expr(r) for r in reducer.result]
        finally:
            self.names.pop()
        body = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
        return f"T.comm_reducer(lambda {params}: {body}, [{identity}])"

    def target_spec(self, target) -> str:
        """A target as its string (``"cuda -arch=sm_90"``) when that reads back as the
        same target, else as a dict of its kind and options."""

        def plain(value):
            return isinstance(value, (bool, int)) or (
                isinstance(value, str) and value and not any(c in value for c in " '\"[]{}=")
            )

        if all(plain(v) for v in target.options.values()):
            return string_literal(str(target))
        spec = {"kind": target.kind, **target.options}
        if target.host is not None:
            spec["host"] = target.host  # prints as T.target(...), as TVM writes it
        return self.value(spec)

    def node_ref(self, obj) -> str:
        """A non-expression node used as a value (a buffer in ``T.attr``)."""
        raise TypeError(f"cannot print {type(obj).__name__} as a value")

    # -- leaves
    def visit_var(self, op: E.Var):
        return self.var_name(op), P_ATOM

    visit_size_var = visit_var

    def visit_int_imm(self, op: E.IntImm):
        if op.dtype.is_bool():
            return f"T.bool({bool(op.value)})", P_ATOM
        if op.dtype == INT32:
            return str(op.value), (P_UNARY if op.value < 0 else P_ATOM)
        return f"T.{op.dtype}({op.value})", P_ATOM

    def visit_float_imm(self, op: E.FloatImm):
        return f"T.{op.dtype}({float_literal(op.value)})", P_ATOM

    def visit_string_imm(self, op: E.StringImm):
        return string_literal(op.value), P_ATOM

    def visit_cast(self, op: E.Cast):
        return f'T.Cast("{op.dtype}", {self.expr(op.value)})', P_ATOM

    # -- operators
    def visit_binary_op(self, op):
        name = type(op).__name__
        if name in _CALL_NAMES:
            return f"{_CALL_NAMES[name]}({self.expr(op.a)}, {self.expr(op.b)})", P_ATOM
        symbol = op.symbol
        if name == "Div" and not op.a.dtype.element_of().is_float():
            return f"T.truncdiv({self.expr(op.a)}, {self.expr(op.b)})", P_ATOM
        prec = _BINARY_PREC[symbol]
        if prec == P_CMP:  # comparisons do not chain
            left, right = self.operand(op.a, P_CMP + 1), self.operand(op.b, P_CMP + 1)
        else:  # left-associative: the right operand binds tighter
            left, right = self.operand(op.a, prec), self.operand(op.b, prec + 1)
        if _bare_int(op.a) and _bare_int(op.b):
            # two plain literals would be computed by the parser (0 // 256 is 0): one
            # typed literal keeps the operation
            left = f"T.int32({op.a.value})"
        return f"{left} {symbol} {right}", prec

    def visit_not(self, op: E.Not):
        return f"not {self.operand(op.a, P_NOT)}", P_NOT

    def visit_select(self, op: E.Select):
        args = ", ".join(self.expr(x) for x in (op.condition, op.true_value, op.false_value))
        return f"T.Select({args})", P_ATOM

    def visit_buffer_load(self, op: E.BufferLoad):
        if op.predicate is not None:  # TVM's spelling of a masked load
            indices = ", ".join(self.expr(ix) for ix in op.indices)
            name, predicate = self.buffer_name(op.buffer), self.expr(op.predicate)
            return f"{name}.vload([{indices}], predicate={predicate})", P_ATOM
        return f"{self.buffer_name(op.buffer)}[{self.indices(op.indices)}]", P_ATOM

    def indices(self, indices) -> str:
        if not indices:
            return "()"
        return ", ".join(self.expr(ix) for ix in indices)

    def visit_ramp(self, op: E.Ramp):
        lanes = self.lanes(op.lanes)
        return f"T.Ramp({self.expr(op.base)}, {self.expr(op.stride)}, {lanes})", P_ATOM

    def visit_broadcast(self, op: E.Broadcast):
        return f"T.Broadcast({self.expr(op.value)}, {self.lanes(op.lanes)})", P_ATOM

    def lanes(self, lanes) -> str:
        """A lane count: a number, or a scalable ``4 * T.vscale()``."""
        return str(lanes) if isinstance(lanes, int) else self.expr(lanes)

    def visit_let(self, op: E.Let):
        value = self.expr(op.value)
        self.names.push()
        try:
            name = self.define_var(op.var)
            return f"T.Let({name}, {value}, {self.expr(op.body)})", P_ATOM
        finally:
            self.names.pop()

    def visit_call(self, op: E.Call):
        args = [self.expr(a) for a in op.args]
        if op.op == "call_extern":
            return f'T.call_extern("{op.dtype}", {", ".join(args)})', P_ATOM
        if op.op == "type_annotation":
            return f'T.type_annotation("{op.dtype}")', P_ATOM
        module = getattr(self, "module_alias", None)
        if op.op == "call_tir" and module and isinstance(op.args[0], E.StringImm):
            # inside a module, a call of its function reads as TVM prints it
            return f"{module}.{op.args[0].value}({', '.join(args[1:])})", P_ATOM
        info = INTRINSICS.get(op.op)
        if info is not None and info.result == "given" and op.op != "if_then_else":
            args.append(f'dtype="{op.dtype}"')  # as TVM writes T.tvm_struct_get(..., dtype=)
        return f"T.{op.op}({', '.join(args)})", P_ATOM


def _bare_int(expr) -> bool:
    """An int32 constant, which prints as a plain Python number."""
    return isinstance(expr, E.IntImm) and expr.dtype == INT32

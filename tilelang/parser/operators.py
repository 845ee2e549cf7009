"""Python's operator precedence over the flat operator lists of the grammar.

The grammar parses ``a + b * c < d and not e`` as one flat list of operands and
operator tokens (see grammar/tir.lark). This module applies Python's precedence,
associativity and chained comparisons by precedence climbing: a long chain
``a + b + c + ...`` is folded in a loop, and recursion only goes as deep as the
number of precedence levels.

Values follow TVMScript: Python numbers fold in Python (``16 * 4`` is the int 64, so
literal typing stays TVM's); anything else goes through the IR's typing rules
(:func:`tilelang.ir.convert.binary`).
"""

from __future__ import annotations

import numbers
import operator

from lark import Tree

from tilelang.ir import FloatImm, IntImm, Not
from tilelang.ir import op as ops
from tilelang.ir.convert import binary, logical, match_types

_PRECEDENCE = {
    "or": 1,
    "and": 2,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "==": 4,
    "!=": 4,
    "|": 5,
    "^": 6,
    "&": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "//": 10,
    "%": 10,
    "**": 12,
}
_NOT_PRECEDENCE, _UNARY_PRECEDENCE, _COMPARISON = 3, 11, 4

_IR_BINARY = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "div",
    "//": "floordiv",
    "%": "floormod",
    "<": "lt",
    "<=": "le",
    ">": "gt",
    ">=": "ge",
    "==": "eq",
    "!=": "ne",
}
_PY_BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "|": operator.or_,
    "^": operator.xor,
    "&": operator.and_,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_BITWISE_CALL = {"^": "bitwise_xor", "<<": "shift_left", ">>": "shift_right"}


def evaluate_binexpr(exprs, tree):
    """The value of a ``binexpr`` (or ``prefix``) tree."""
    stream = []
    for child in tree.children:
        if isinstance(child, Tree):
            while child.data == "prefix":
                stream.append(("prefix", child.children[0]))
                child = child.children[1]
            stream.append(("operand", child))
        else:
            stream.append(("op", child))
    return _Climber(exprs, stream).expression(0)[0]


class _Climber:
    def __init__(self, exprs, stream):
        self.exprs, self.ctx, self.stream, self.pos = exprs, exprs.ctx, stream, 0

    def expression(self, min_precedence):
        value, first, last = self.unary()
        stream = self.stream
        while self.pos < len(stream):
            token = stream[self.pos][1]
            op = str(token)
            precedence = _PRECEDENCE[op]
            if precedence < min_precedence:
                break
            self.pos += 1
            if precedence == _COMPARISON:
                value, last = self.comparison(value, token, first)
                continue
            # ** is right-associative; everything else is left-associative
            rhs, _, last = self.expression(precedence if op == "**" else precedence + 1)
            value = self.apply(op, value, rhs, token, first, last)
        return value, first, last

    def unary(self):
        kind, item = self.stream[self.pos]
        self.pos += 1
        if kind == "operand":
            return self.exprs.eval(item), item, item
        op = str(item)
        operand, _, last = self.expression(_NOT_PRECEDENCE if op == "not" else _UNARY_PRECEDENCE)
        return self.prefix(op, operand, item, last), item, last

    def comparison(self, lhs, token, first):
        """``a < b <= c`` is ``a < b and b <= c``."""
        result = None
        while True:
            rhs, _, last = self.expression(_COMPARISON + 1)
            part = self.apply(str(token), lhs, rhs, token, first, last)
            result = part if result is None else self.apply("and", result, part, token, first, last)
            lhs = rhs
            if self.pos < len(self.stream) and _PRECEDENCE[str(self.stream[self.pos][1])] == 4:
                token = self.stream[self.pos][1]
                self.pos += 1
                continue
            return result, last

    def span(self, first, last):
        return self.ctx.span(first, last)

    def apply(self, op, lhs, rhs, token, first, last):
        if isinstance(lhs, numbers.Number) and isinstance(rhs, numbers.Number):
            if op in ("and", "or"):
                return (lhs and rhs) if op == "and" else (lhs or rhs)
            if _too_big(op, lhs, rhs):
                raise self.ctx.error(
                    token, f"the constant {op} has a result of more than {LITERAL_BITS} bits"
                )
            try:
                value = _PY_BINARY[op](lhs, rhs)
            except (ArithmeticError, ValueError, TypeError) as exc:
                raise self.ctx.error(token, f"cannot compute {lhs!r} {op} {rhs!r}: {exc}") from None
            if isinstance(value, int) and value.bit_length() > LITERAL_BITS:
                raise self.ctx.error(
                    token, f"the constant {op} has a result of more than {LITERAL_BITS} bits"
                )
            return value
        self.exprs.check_operand(lhs, first)
        self.exprs.check_operand(rhs, last)
        if getattr(lhs, "dtype", None) == "handle" or getattr(rhs, "dtype", None) == "handle":
            raise self.ctx.error(
                token, f"no arithmetic on handles ({op})", cls=self.ctx.type_error_cls
            )
        span = self.span(first, last)
        if op in ("and", "or"):
            a, b = self.exprs.condition(lhs, first), self.exprs.condition(rhs, last)
            return self.ctx.guard(token, logical, op, a, b, span)
        if op in ("|", "&"):
            return self.ctx.guard(token, logical, "or" if op == "|" else "and", lhs, rhs, span)
        if op in _BITWISE_CALL:
            return self.ctx.guard(token, _bitwise_call, _BITWISE_CALL[op], lhs, rhs, span)
        if op == "**":
            return self.ctx.guard(token, _power, lhs, rhs, span)
        return self.ctx.guard(token, binary, _IR_BINARY[op], lhs, rhs, span)

    def prefix(self, op, value, token, last):
        if op == "not":
            if isinstance(value, numbers.Number):
                return not value
            return Not(self.exprs.condition(value, token), span=self.span(token, last))
        if (
            isinstance(value, numbers.Number)
            and not isinstance(value, bool)
            or (isinstance(value, bool) and op != "not")
        ):
            try:
                return {"-": operator.neg, "+": operator.pos, "~": operator.invert}[op](value)
            except TypeError as exc:
                raise self.ctx.error(token, f"cannot compute {op}{value!r}: {exc}") from None
        self.exprs.check_operand(value, token)
        span = self.span(token, last)
        if op == "+":
            return value
        if op == "~":
            return self.ctx.guard(token, ops.call_intrin, "bitwise_not", value)
        # fold negated constants, so that a printed negative constant reads back as one
        if isinstance(value, IntImm) and not value.dtype.is_bool():
            return IntImm(value.dtype, -value.value, span=span)
        if isinstance(value, FloatImm):
            return FloatImm(value.dtype, -value.value, span=span)
        return self.ctx.guard(token, binary, "sub", 0, value, span)


#: Python-number arithmetic in the source (``2**31 - 1``) stays within this many bits:
#: no TIR type is wider than 64, and a bound keeps ``2**10**10`` from hanging the parser
LITERAL_BITS = 256


def _too_big(op, lhs, rhs) -> bool:
    """Whether integer ``lhs op rhs`` would exceed LITERAL_BITS (checked before
    computing it: ``**`` and ``<<`` can take unbounded time and memory)."""
    if isinstance(lhs, bool) or isinstance(rhs, bool):
        return False
    if not (isinstance(lhs, int) and isinstance(rhs, int)):
        return False
    if op == "<<":
        return lhs != 0 and rhs > 0 and lhs.bit_length() + rhs > LITERAL_BITS
    if op == "**":
        return abs(lhs) > 1 and rhs > 0 and (abs(lhs).bit_length() - 1) * rhs >= LITERAL_BITS
    return False


def _bitwise_call(name, lhs, rhs, span):
    return ops.call_intrin(name, *match_types(lhs, rhs), span=span)


def _power(lhs, rhs, span):
    return ops.call_intrin("pow", *match_types(lhs, rhs), span=span)

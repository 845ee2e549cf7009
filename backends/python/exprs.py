"""Expressions as Python/NumPy source with the machine's semantics.

Values are NumPy scalars of their dtype (loads from the arrays, converted scalar
arguments, casts, ``np.float32(...)`` constants), so float32 arithmetic rounds to
float32 and integer arithmetic wraps at its width. Loop variables and integer
literals are Python ints, which NumPy treats as "weak" (they take the other operand's
type), so index arithmetic stays readable: ``A_flat[i * 16 + k]``.
"""

from __future__ import annotations

from tilelang.backends.python import fragments

from tilelang.bounds.report import BOUNDS_ERROR
from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.functor import NodeFunctor
from tilelang.ir.op import reinterpret_problem

# Python operator precedence (higher binds tighter)
_ATOM, _UNARY, _MUL, _ADD, _SHIFT, _BAND, _BXOR, _BOR, _CMP, _NOT, _AND, _OR, _IF = (
    100, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3,
)  # fmt: skip

_BINARY = {
    E.Add: ("+", _ADD),
    E.Sub: ("-", _ADD),
    E.Mul: ("*", _MUL),
    E.EQ: ("==", _CMP),
    E.NE: ("!=", _CMP),
    E.LT: ("<", _CMP),
    E.LE: ("<=", _CMP),
    E.GT: (">", _CMP),
    E.GE: (">=", _CMP),
}

_MATH = {
    "exp": "np.exp", "exp2": "np.exp2", "exp10": "_exp10", "log": "np.log",
    "log2": "np.log2", "log10": "np.log10", "log1p": "np.log1p", "sqrt": "np.sqrt",
    "rsqrt": "_rsqrt", "sin": "np.sin", "cos": "np.cos", "tan": "np.tan",
    "asin": "np.arcsin", "acos": "np.arccos", "atan": "np.arctan", "sinh": "np.sinh",
    "cosh": "np.cosh", "tanh": "np.tanh", "sigmoid": "_sigmoid", "erf": "_erf",
    "floor": "np.floor", "ceil": "np.ceil", "round": "_round", "trunc": "np.trunc",
    "nearbyint": "np.rint", "pow": "np.power", "atan2": "np.arctan2", "fmod": "np.fmod",
    "abs": "np.abs", "isnan": "np.isnan", "asinh": "np.arcsinh", "acosh": "np.arccosh",
    "atanh": "np.arctanh", "hypot": "np.hypot", "copysign": "np.copysign",
    "nextafter": "np.nextafter", "popcount": "_popcount",
}  # fmt: skip

_BITWISE = {
    "bitwise_and": ("&", _BAND),
    "bitwise_or": ("|", _BOR),
    "bitwise_xor": ("^", _BXOR),
    "shift_left": ("<<", _SHIFT),
    "shift_right": (">>", _SHIFT),
}


_RING_CALLS = {"shift_left", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"}


def _is_ring(e) -> bool:
    """An integer operation whose result modulo 2**bits depends only on its operands
    modulo 2**bits, so wrapping once after a chain of them equals wrapping each."""
    if isinstance(e, (E.Add, E.Sub, E.Mul)) or (isinstance(e, E.Call) and e.op in _RING_CALLS):
        return e.dtype.lanes == 1 and e.dtype.is_integer()
    return False


def _is_python_int(e, surely: bool = False) -> bool:
    """Whether ``e`` may evaluate to a Python int rather than a NumPy scalar (or, with
    ``surely``, always does): built from integer literals and variables only, through
    operators that keep a Python int one (a load, a cast or a NumPy operand makes the
    result NumPy, which wraps itself)."""
    if isinstance(e, (E.IntImm, E.Var)):
        return not e.dtype.is_bool()
    if e.dtype.lanes > 1:
        return False
    # these return one of their operands unchanged, whichever kind it is
    choose = all if surely else any
    if isinstance(e, E.Select):
        return choose(_is_python_int(x, surely) for x in (e.true_value, e.false_value))
    if isinstance(e, (E.Min, E.Max)):
        return choose(_is_python_int(x, surely) for x in (e.a, e.b))
    if isinstance(e, E.Call) and e.op == "if_then_else":
        return choose(_is_python_int(x, surely) for x in e.args[1:])
    if isinstance(e, E.Let):
        return _is_python_int(e.body, surely)
    # these compute: a Python int only from Python ints
    if isinstance(e, E.Call) and (e.op in _RING_CALLS or e.op == "shift_right"):
        return all(_is_python_int(x, surely) for x in e.args)
    if isinstance(e, (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod)):
        return _is_python_int(e.a, surely) and _is_python_int(e.b, surely)
    return False


def np_type(dtype) -> str:
    """``np.float32`` for ``float32`` (the scalar type of one lane)."""
    name = dtype.element_of().numpy_name()
    return "np.bool_" if name == "bool" else f"np.{name}"


class ExprPrinter(NodeFunctor):
    """Renders expressions; ``names`` gives variables (and arrays) their identifiers,
    ``externs`` collects the ``call_extern`` names met."""

    def __init__(self, names, array_name):
        self.names = names
        self.array_name = array_name  # id(data var) -> identifier of its flat array
        self.externs: list[str] = []
        self.module_symbols: dict | None = None  # function name -> its Python identifier
        self.scopes: dict = {}  # id(data var) -> scope of the allocations met
        self.fragments: dict = {}  # id(data var) -> Fragment (tensor-core tiles)
        self.in_ring = False  # rendering an operand of a Python-int chain (or an index)

    def expr(self, e: E.PrimExpr) -> str:
        return self.render(e)[0]

    def paren(self, e, prec: int, right: bool = False) -> str:
        text, p = self.render(e)
        return f"({text})" if p < prec or (right and p == prec) else text

    def render(self, e) -> tuple[str, int]:
        # Integer arithmetic on Python ints (loop variables, literals) never overflows:
        # a chain of +, -, *, << and bitwise operators on Python ints is wrapped to its
        # type once, where its value leaves the chain (wrapping commutes with these
        # operators) -- before it meets a NumPy operand, which refuses a too-big int.
        ring = _is_ring(e)
        # operands stay unwrapped only inside a chain that is all Python ints
        outer, self.in_ring = self.in_ring, ring and _is_python_int(e, surely=True)
        try:
            text, prec = self.visit(e)
        finally:
            self.in_ring = outer
        if ring and not outer and _is_python_int(e):
            dtype = e.dtype
            return f"_wrap_int({text}, {dtype.bits}, {not dtype.is_uint()})", _ATOM
        return text, prec

    def index(self, index: E.PrimExpr) -> str:
        """An index: left unwrapped (an index past the type's range is out of bounds)."""
        outer, self.in_ring = self.in_ring, True
        try:
            return self._index(index)
        finally:
            self.in_ring = outer

    def generic_visit(self, e):
        for klass, (symbol, prec) in _BINARY.items():
            if isinstance(e, klass):
                return self.binary(e, symbol, prec)
        raise BuildError(f"the python backend cannot translate {type(e).__name__}")

    def binary(self, e, symbol, prec):
        return f"{self.paren(e.a, prec)} {symbol} {self.paren(e.b, prec, right=True)}", prec

    def call(self, fn: str, *args) -> tuple[str, int]:
        texts = [a if isinstance(a, str) else self.expr(a) for a in args]
        return f"{fn}({', '.join(texts)})", _ATOM

    # -- leaves
    def visit_var(self, e):
        array = self.array_name.get(id(e))
        if array is not None:
            return array, _ATOM
        return self.names.get(e), _ATOM

    def visit_int_imm(self, e):
        if e.dtype.is_bool():
            return ("True" if e.value else "False"), _ATOM
        return str(e.value), (_ATOM if e.value >= 0 else _UNARY)

    def visit_float_imm(self, e):
        value = e.value
        text = repr(value) if value == value and abs(value) != float("inf") else f'"{value}"'
        return f"{np_type(e.dtype)}({text})", _ATOM

    def visit_string_imm(self, e):
        return repr(e.value), _ATOM

    # -- arithmetic with C semantics
    def visit_div(self, e):
        if e.dtype.element_of().is_float():
            return self.binary(e, "/", _MUL)
        return self.call("_truncdiv", e.a, e.b)

    def visit_mod(self, e):
        if e.dtype.element_of().is_float():
            return self.call("np.fmod", e.a, e.b)
        return self.call("_truncmod", e.a, e.b)

    def visit_floor_div(self, e):
        if e.dtype.element_of().is_float():
            return self.call("np.floor", f"{self.paren(e.a, _MUL)} / {self.paren(e.b, _MUL, True)}")
        return self.binary(e, "//", _MUL)

    def visit_floor_mod(self, e):
        if e.dtype.element_of().is_float():
            return self.call("_float_floormod", e.a, e.b)
        return self.binary(e, "%", _MUL)

    def visit_min(self, e):
        return self.call("np.minimum" if e.dtype.lanes > 1 else "min", e.a, e.b)

    def visit_max(self, e):
        return self.call("np.maximum" if e.dtype.lanes > 1 else "max", e.a, e.b)

    def visit_and(self, e):
        if e.dtype.lanes > 1:
            return self.call("np.logical_and", e.a, e.b)
        return self.binary(e, "and", _AND)

    def visit_or(self, e):
        if e.dtype.lanes > 1:
            return self.call("np.logical_or", e.a, e.b)
        return self.binary(e, "or", _OR)

    def visit_not(self, e):
        if e.dtype.lanes > 1:
            return self.call("np.logical_not", e.a)
        return f"not {self.paren(e.a, _NOT)}", _NOT

    def visit_select(self, e):
        return self.call("_select", e.condition, e.true_value, e.false_value)

    def visit_cast(self, e):
        target, source = e.dtype, e.value.dtype
        if target.lanes > 1:
            return f"{self.paren(e.value, _ATOM)}.astype({np_type(target)})", _ATOM
        if target.is_bool():
            return self.call("bool", e.value)
        if target.is_float() or (source.is_float() and target.is_integer()):
            return self.call(np_type(target), e.value)  # floats truncate, as in C
        return self.call("_cast", e.value, np_type(target))

    # -- memory
    def _index(self, index: E.PrimExpr) -> str:
        if isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm):
            if index.stride.value == 1:
                base = self.expr(index.base)
                return f"{base}:{self.paren(index.base, _ADD)} + {index.lanes}"
        return self.expr(index)

    def visit_buffer_load(self, e):
        array = self.array_name[id(e.buffer.data)]
        if e.predicate is not None:
            index, mask = self.expr(e.indices[0]), self.expr(e.predicate)
            return f"_masked_load({array}, {index}, {mask}, {np_type(e.dtype.element_of())})", _ATOM
        return f"{array}[{self.index(e.indices[0])}]", _ATOM

    def visit_ramp(self, e):
        return self.call("_ramp", e.base, e.stride, str(e.lanes), np_type(e.dtype))

    def visit_broadcast(self, e):
        return self.call("np.full", str(e.lanes), e.value, f"dtype={np_type(e.dtype)}")

    def visit_let(self, e):
        name = self.names.get(e.var)
        return f"(lambda {name}: {self.expr(e.body)})({self.expr(e.value)})", _ATOM

    # -- calls
    def visit_call(self, e: E.Call):
        op, args = e.op, e.args
        if op in _MATH:
            return self.call(_MATH[op], *args)
        if op in _BITWISE:
            symbol, prec = _BITWISE[op]
            a, b = args
            return f"{self.paren(a, prec)} {symbol} {self.paren(b, prec, True)}", prec
        if op == "bitwise_not":
            return f"~{self.paren(args[0], _UNARY)}", _UNARY
        if op == "likely":
            return self.render(args[0])
        if op in ("bf16_to_float", "float_to_bf16"):
            return self.call(f"_{op}", args[0])
        if op == "reinterpret":
            problem = reinterpret_problem(e)
            if problem is not None:
                raise BuildError(f"the python backend cannot compute {problem}")
            return self.call("_reinterpret", args[0], np_type(args[0].dtype), np_type(e.dtype))
        if op == "if_then_else":
            c, t, f = args
            if e.dtype.lanes > 1:
                return self.call("np.where", c, t, f)
            then, other = self.paren(t, _IF + 1), self.paren(f, _IF)
            return f"{then} if {self.paren(c, _IF + 1)} else {other}", _IF
        if op == "tvm_access_ptr":
            _, data, offset, extent, _mask = args
            return self.call("_ptr", data, offset, extent)
        if op == BOUNDS_ERROR:
            return self.call("_bounds_error", *args)
        if op in fragments.FRAGMENT_OPS:
            return fragments.render(self, e, self.scopes, self.fragments), _ATOM
        if op == "call_extern":
            name = args[0].value
            if name not in self.externs:
                self.externs.append(name)
            return self.call(f"_extern[{name!r}]", *args[1:])
        if op == "call_tir" and self.module_symbols is not None:
            # another function of the module (a pointer argument is its flat array)
            return self.call(self.module_symbols[args[0].value], *args[1:])
        raise BuildError(f"the python backend does not support the intrinsic {op!r}")

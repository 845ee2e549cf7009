"""The C-like printer shared by the C and CUDA backends.

It prints lowered IR (docs/lowered_ir.md) as structured C: expressions inline and
fully parenthesised (``A[i] = (A[i] + j);``), never cached in temporaries, so a load
is always read where the IR reads it (no stale value after an aliasing store, the
bug of naive SSA printers). What differs between C dialects lives in class
attributes: type names, the ``restrict`` keyword, loop pragmas, math function names,
thread index names and the barrier; a subclass changes those, not the traversal.

Vectors: a store whose index is a ``Ramp`` (or whose value is a vector) is printed as
a scalar loop over the lanes, marked ``#pragma omp simd``; inside it ``Ramp(b, s, n)``
prints as ``(b + lane * s)`` and ``Broadcast(x, n)`` as ``x``. The C compiler
vectorises such loops itself, and the output stays portable C99 (no GCC vector
extensions).
"""

from __future__ import annotations

import math

from tilelang.backends.c.bit_casts import BIT_CALLS, print_bit_call
from tilelang.backends.c.literals import c_comment, c_float_literal, c_string
from tilelang.backends.c.names import ScopedNames, is_identifier

from tilelang.bounds.report import BOUNDS_ERROR
from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import NodeFunctor, substitute

_FLOAT_CALLS = {
    "exp", "exp2", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "erf", "floor", "ceil", "trunc", "nearbyint",
    "pow", "atan2", "fmod", "fabs", "asinh", "acosh", "atanh", "hypot", "copysign", "nextafter",
}  # fmt: skip


class CLikePrinter(NodeFunctor):
    """Prints lowered statements and expressions as C-like text (see the module doc)."""

    #: scalar type names, by dtype
    type_names = {
        "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
        "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
        "uint64": "uint64_t", "float16": "_Float16", "float32": "float", "float64": "double",
        "handle": "void*",
    }  # fmt: skip
    restrict_keyword = "restrict"
    indent_unit = "  "
    #: the pragma before a parallel loop (None: print it as a serial loop)
    parallel_pragma: str | None = "#pragma omp parallel for"
    simd_pragma: str | None = "#pragma omp simd"
    unroll_pragma: str | None = "#pragma GCC unroll {n}"
    #: thread axis -> C expression; empty: thread-bound loops run as serial loops
    thread_index_names: dict[str, str] = {}
    barrier: str | None = None
    #: storage qualifier of an Allocate, by scope
    scope_qualifiers: dict[str, str] = {}
    #: allocations up to this many bytes live on the stack, larger ones on the heap
    max_stack_bytes = 64 * 1024
    #: float math suffix by bit width (``expf`` for float32)
    math_suffix = {32: "f", 64: ""}
    #: operators, by expression class, as format strings over operands ``a`` and ``b``
    binary_formats = {
        E.Add: "({a} + {b})", E.Sub: "({a} - {b})", E.Mul: "({a} * {b})",
        E.Div: "({a} / {b})", E.EQ: "({a} == {b})", E.NE: "({a} != {b})",
        E.LT: "({a} < {b})", E.LE: "({a} <= {b})", E.GT: "({a} > {b})",
        E.GE: "({a} >= {b})", E.And: "({a} && {b})", E.Or: "({a} || {b})",
        E.Min: "(({a} < {b}) ? {a} : {b})", E.Max: "(({a} > {b}) ? {a} : {b})",
    }  # fmt: skip
    #: intrinsics, as format strings over their arguments ``{0}``, ``{1}``...
    intrinsic_formats = {
        "bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})",
        "bitwise_xor": "({0} ^ {1})", "bitwise_not": "(~{0})",
        "shift_left": "({0} << {1})", "shift_right": "({0} >> {1})",
        "if_then_else": "({0} ? {1} : {2})", "likely": "{0}", "isnan": "isnan({0})",
    }  # fmt: skip

    def __init__(self, names: ScopedNames, num_threads: int | None = None):
        self.names = names
        self.num_threads = num_threads
        self.lines: list[str] = []
        self.level = 0
        self.lane: str | None = None  # the lane variable while printing a vector store
        self.in_parallel = False
        self.in_simd = False
        self.pointer_types: dict[int, object] = {}  # id(data var) -> element dtype
        self.helpers: set[str] = set()  # helper functions the code needs
        self.externs: dict[str, tuple] = {}  # extern name -> (return dtype, arg C types)
        self.has_asserts = False

    # ----------------------------------------------------------------- output

    def emit(self, line: str) -> None:
        self.lines.append(self.indent_unit * self.level + line if line else "")

    def open_block(self, header: str) -> None:
        """``header {`` and a new scope for the names declared inside."""
        self.names.open_scope()
        self.enter(header)

    def enter(self, header: str) -> None:
        """``header {`` in the current scope (the caller opened one already)."""
        self.emit(header + " {")
        self.level += 1

    def close_block(self, trailer: str = "}") -> None:
        self.names.close_scope()
        self.level -= 1
        self.emit(trailer)

    def type_name(self, dtype) -> str:
        name = self.type_names.get(str(dtype.element_of()))
        if name is None:
            raise BuildError(f"the {type(self).__name__} cannot print values of type {dtype}")
        return name

    def expr(self, node: E.PrimExpr) -> str:
        return self.visit(node)

    def generic_visit(self, node):
        raise BuildError(
            f"{type(self).__name__} cannot print {type(node).__name__}; is the function lowered?"
        )

    # ------------------------------------------------------------- statements

    def visit_seq_stmt(self, op: S.SeqStmt) -> None:
        for stmt in op.seq:
            self.visit(stmt)

    def visit_buffer_store(self, op: S.BufferStore) -> None:
        (index,) = op.indices  # one index: verify_lowered checked it
        lanes = max(index.dtype.lanes, op.value.dtype.lanes)
        if lanes > 1 and self.lane is None:
            self._print_lanes(lanes, lambda: self.visit_buffer_store(op))
            return
        self.emit(f"{self._element(op.buffer, index)} = {self.expr(op.value)};")

    def _print_lanes(self, lanes: int, body) -> None:
        if self.simd_pragma:
            self.emit(self.simd_pragma)
        self.names.open_scope()
        lane = self.names.define(E.Var("lane"))
        self.enter(f"for (int32_t {lane} = 0; {lane} < {lanes}; ++{lane})")
        self.lane = lane
        body()
        self.lane = None
        self.close_block()

    def visit_for(self, op: S.For) -> None:
        if op.kind is S.ForKind.THREAD_BINDING and op.thread_binding in self.thread_index_names:
            self.print_thread_binding(op)
            return
        nested_parallel, nested_simd = self.in_parallel, self.in_simd
        # OpenMP forbids a parallel region inside a simd loop, and a parallel loop inside
        # another would oversubscribe the cores: such inner loops print as serial loops.
        if (
            op.kind is S.ForKind.PARALLEL
            and self.parallel_pragma
            and not (nested_parallel or nested_simd)
        ):
            threads = f" num_threads({self.num_threads})" if self.num_threads else ""
            self.emit(self.parallel_pragma + threads)
            self.in_parallel = True
        elif op.kind is S.ForKind.VECTORIZED and self.simd_pragma:
            self.emit(self.simd_pragma)
            self.in_simd = True
        elif op.kind is S.ForKind.UNROLLED and self.unroll_pragma:
            if isinstance(op.extent, E.IntImm):
                self.emit(self.unroll_pragma.format(n=op.extent.value))
        elif op.kind is S.ForKind.THREAD_BINDING:
            self.emit(c_comment(f"{op.thread_binding} runs as a serial loop on this target"))
        start = self.expr(op.min)
        stop = self._loop_stop(op.min, op.extent)
        step = None if op.step is None else self.expr(op.step)
        self.names.open_scope()  # the loop variable lives in the loop's block
        var = self.names.define(op.loop_var)
        increment = f"++{var}" if step is None else f"{var} += {step}"
        kind = self.type_name(op.loop_var.dtype)
        self.enter(f"for ({kind} {var} = {start}; {var} < {stop}; {increment})")
        self.visit(op.body)
        self.close_block()
        self.in_parallel, self.in_simd = nested_parallel, nested_simd

    def _loop_stop(self, start: E.PrimExpr, extent: E.PrimExpr) -> str:
        if isinstance(start, E.IntImm) and start.value == 0:
            return self.expr(extent)
        if isinstance(start, E.IntImm) and isinstance(extent, E.IntImm):
            return str(start.value + extent.value)
        return self.expr(E.Add(start, extent))

    def print_thread_binding(self, op: S.For) -> None:
        """A thread-bound loop as ``int32_t tx = threadIdx.x;`` (used by GPU subclasses)."""
        var = self.names.define(op.loop_var)
        index = self.thread_index_names[op.thread_binding]
        self.emit(f"{self.type_name(op.loop_var.dtype)} {var} = {index};")
        self.visit(op.body)

    def visit_while(self, op: S.While) -> None:
        self.open_block(f"while ({self._strip(self.expr(op.condition))})")
        self.visit(op.body)
        self.close_block()

    def visit_if_then_else(self, op: S.IfThenElse) -> None:
        self.open_block(f"if ({self._strip(self.expr(op.condition))})")
        self.visit(op.then_case)
        if op.else_case is None:
            self.close_block()
            return
        self.close_block("} else {")
        self.level += 1
        self.names.open_scope()
        self.visit(op.else_case)
        self.close_block()

    def visit_let_stmt(self, op: S.LetStmt) -> None:
        value = self.expr(op.value)
        var = self.names.define(op.var)
        self.emit(f"const {self.type_name(op.var.dtype)} {var} = {value};")
        self.visit(op.body)

    def visit_attr_stmt(self, op: S.AttrStmt) -> None:
        self.visit(op.body)

    def visit_decl_buffer(self, op: S.DeclBuffer) -> None:
        self.visit(op.body)

    def visit_evaluate(self, op: S.Evaluate) -> None:
        if isinstance(op.value, (E.IntImm, E.FloatImm)):
            return  # T.evaluate(0): nothing to do
        if isinstance(op.value, E.Call) and op.value.op in ("break_loop", "continue_loop"):
            self.emit("break;" if op.value.op == "break_loop" else "continue;")
            return
        self.emit(f"{self._strip(self.expr(op.value))};")

    def visit_assert_stmt(self, op: S.AssertStmt) -> None:
        # The first failed assertion is recorded for the runtime to raise; the code it
        # guards is skipped.
        self.has_asserts = True
        self.open_block(f"if (!{self.expr(op.condition)})")
        if isinstance(op.message, E.Call) and op.message.op == BOUNDS_ERROR:
            site, *values = op.message.args
            listed = ", ".join(f"(int64_t)({self.expr(v)})" for v in values)
            self.emit(
                f"tl_set_error_values({c_string(site.value)}, {len(values)}, "
                f"(const int64_t[]){{{listed}}});"
            )
        else:
            message = (
                op.message.value if isinstance(op.message, E.StringImm) else "assertion failed"
            )
            self.emit(f"tl_set_error({c_string(message)});")
        self.close_block("} else {")
        self.level += 1
        self.names.open_scope()
        self.visit(op.body)
        self.close_block()

    def visit_allocate_const(self, op: S.AllocateConst) -> None:
        raise BuildError(f"{type(self).__name__} does not support T.allocate_const")

    def visit_allocate(self, op: S.Allocate) -> None:
        elem = self.type_name(op.dtype)
        count = self._product(op.extents)
        name = self.names.define(op.buffer_var)
        self.pointer_types[id(op.buffer_var)] = op.dtype.element_of()
        qualifier = self.scope_qualifiers.get(op.scope, "")
        qualifier = qualifier + " " if qualifier else ""
        size_bytes = count * op.dtype.bits // 8 if isinstance(count, int) else None
        if size_bytes is not None and size_bytes <= self.max_stack_bytes:
            self.emit(f"{qualifier}{elem} {name}[{count}];")
            self.visit(op.body)
            return
        self.emit(f"{elem}* {name} = ({elem}*)malloc(sizeof({elem}) * {count});")
        self.visit(op.body)
        self.emit(f"free({name});")

    def _product(self, extents):
        if all(isinstance(x, E.IntImm) for x in extents):
            return math.prod(x.value for x in extents)
        return " * ".join(f"(size_t){self.expr(x)}" for x in extents)

    # ----------------------------------------------------------- expressions

    def visit_var(self, op: E.Var) -> str:
        name = self.names.lookup(op)
        if name is None:
            raise BuildError(f"variable {op.name!r} is used but never defined")
        return name

    def visit_int_imm(self, op: E.IntImm) -> str:
        if op.dtype.is_bool():
            return "true" if op.value else "false"
        value = op.value
        # C has no negative literals: -2147483648 is the negation of a *long* 2147483648,
        # which would widen the expression; the least value is written as (-MAX - 1)
        least = value in (-(2**31), -(2**63))
        text = str(value + 1 if least else value)
        if op.dtype.is_uint() and op.dtype.bits >= 32:
            # always unsigned, at the type's own width: a bare literal is a signed int
            # (``~1550`` would be negative), a bare ULL would widen a uint32 expression
            text += "U" if op.dtype.bits == 32 else "ULL"
        elif not -(2**31) <= value < 2**31:
            text += "LL"
        if least:
            text += " - 1"
        return f"({text})" if value < 0 else text

    def visit_float_imm(self, op: E.FloatImm) -> str:
        return c_float_literal(op.value, op.dtype.bits)

    def visit_string_imm(self, op: E.StringImm) -> str:
        return c_string(op.value)

    def visit_cast(self, op: E.Cast) -> str:
        return f"(({self.type_name(op.dtype)}){self.expr(op.value)})"

    def visit_binary_op(self, op) -> str:
        fmt = self.binary_formats.get(type(op))
        if fmt is None:
            raise BuildError(f"{type(self).__name__} has no format for {type(op).__name__}")
        return self.narrow(op.dtype, fmt.format(a=self.expr(op.a), b=self.expr(op.b)))

    def narrow(self, dtype, text: str) -> str:
        """``text`` converted back to ``dtype`` when C computes it wider: C promotes
        8- and 16-bit operands to ``int``, and the result must wrap at the type's own
        width as it does on every other backend."""
        element = dtype.element_of()
        if element.is_integer() and element.bits < 32:
            return f"(({self.type_name(element)}){text})"
        return text

    def visit_mod(self, op: E.Mod) -> str:
        if op.dtype.is_float():
            return self._math("fmod", op.dtype, [op.a, op.b])
        return self.narrow(op.dtype, f"({self.expr(op.a)} % {self.expr(op.b)})")

    def visit_floor_div(self, op: E.FloorDiv) -> str:
        if op.dtype.is_float():
            return self._math("floor", op.dtype, [E.Div(op.a, op.b)])
        if op.dtype.is_uint():
            return self.narrow(op.dtype, f"({self.expr(op.a)} / {self.expr(op.b)})")
        return self._helper_call("floordiv", op)

    def visit_floor_mod(self, op: E.FloorMod) -> str:
        if op.dtype.is_float():
            a, b = self.expr(op.a), self.expr(op.b)
            return f"({a} - ({self._math('floor', op.dtype, [E.Div(op.a, op.b)])} * {b}))"
        if op.dtype.is_uint():
            return self.narrow(op.dtype, f"({self.expr(op.a)} % {self.expr(op.b)})")
        return self._helper_call("floormod", op)

    def visit_min(self, op) -> str:
        # gcc 12 folds (min(a, b) * c) of an unsigned `?:` min/max into min(a * c, b * c),
        # wrong once the products wrap: those go through an (inlined) helper instead
        if not op.dtype.is_uint():
            return self.visit_binary_op(op)
        return self._helper_call("min" if isinstance(op, E.Min) else "max", op)

    visit_max = visit_min

    def _helper_call(self, kind: str, op) -> str:
        name = f"tl_{kind}_{self.type_name(op.dtype)}"
        self.helpers.add(name)
        return f"{name}({self.expr(op.a)}, {self.expr(op.b)})"

    def visit_not(self, op: E.Not) -> str:
        return f"(!{self.expr(op.a)})"

    def visit_select(self, op: E.Select) -> str:
        cond, t, f = (self.expr(x) for x in (op.condition, op.true_value, op.false_value))
        return f"({cond} ? {t} : {f})"

    def visit_buffer_load(self, op: E.BufferLoad) -> str:
        return self._element(op.buffer, op.indices[0])

    def visit_ramp(self, op: E.Ramp) -> str:
        lane = self._require_lane(op)
        base = self.expr(op.base)
        if isinstance(op.stride, E.IntImm) and op.stride.value == 1:
            return f"({base} + {lane})"
        return f"({base} + ({lane} * {self.expr(op.stride)}))"

    def visit_broadcast(self, op: E.Broadcast) -> str:
        self._require_lane(op)
        return self.expr(op.value)

    def visit_let(self, op: E.Let) -> str:
        # C has no let-expression; the bound value is pure, so substitute it.
        return self.expr(substitute(op.body, {op.var: op.value}))

    def visit_call(self, op: E.Call) -> str:
        if op.op == "call_extern":
            return self._extern_call(op)
        if op.op == "tvm_access_ptr":
            return self._access_ptr(op)
        if op.op in BIT_CALLS:  # bfloat16 conversions and reinterpret
            return print_bit_call(self, op)
        fmt = self.intrinsic_formats.get(op.op)
        if fmt is not None:
            args = [self.expr(a) for a in op.args]
            if op.op in ("shift_left", "shift_right") and isinstance(op.args[0], E.IntImm):
                # a bare literal is an int: ``1 << 40`` must shift a 64-bit one (and
                # ``975459200 >> 57`` too: shifting an int by 57 is undefined)
                args[0] = f"(({self.type_name(op.dtype)}){args[0]})"
            return self.narrow(op.dtype, fmt.format(*args))
        if op.op == "popcount":  # set bits at the value's width (two's complement)
            unsigned = self.type_names[f"uint{op.dtype.element_of().bits}"]
            cast = f"({unsigned})({self.expr(op.args[0])})"
            return f"(({self.type_name(op.dtype)}){self.popcount_builtin}({cast}))"
        if op.op == "abs":
            if op.dtype.is_float():
                return self._math("fabs", op.dtype, op.args)
            x = self.expr(op.args[0])
            return self.narrow(op.dtype, f"(({x} < 0) ? (-{x}) : {x})")
        return self._float_intrinsic(op)

    popcount_builtin = "__builtin_popcountll"  # the compiler's 64-bit count of set bits

    def _float_intrinsic(self, op: E.Call) -> str:
        one = c_float_literal(1.0, op.dtype.bits)
        if op.op == "rsqrt":
            return f"({one} / {self._math('sqrt', op.dtype, op.args)})"
        if op.op == "sigmoid":
            exp = self.math_name("exp", op.dtype)
            return f"({one} / ({one} + {exp}(-{self.expr(op.args[0])})))"
        if op.op == "exp10":
            ten = E.FloatImm(op.dtype.element_of(), 10.0)
            return self._math("pow", op.dtype, [ten, op.args[0]])
        if op.op == "round":  # TVM's round is half-to-even, as NumPy's
            return self._math("nearbyint", op.dtype, op.args)
        if op.op in _FLOAT_CALLS:
            return self._math(op.op, op.dtype, op.args)
        raise BuildError(f"{type(self).__name__} cannot print the intrinsic {op.op}")

    def math_name(self, name: str, dtype) -> str:
        """The C function computing ``name`` on ``dtype`` (``expf`` for float32)."""
        bits = dtype.element_of().bits
        return name + self.math_suffix.get(bits, "f")

    def _math(self, name: str, dtype, args) -> str:
        return f"{self.math_name(name, dtype)}({', '.join(self.expr(a) for a in args)})"

    def _extern_call(self, op: E.Call) -> str:
        callee = op.args[0]
        if not isinstance(callee, E.StringImm) or not is_identifier(callee.value):
            raise BuildError(f"call_extern needs a C function name, got {callee!r}")
        args = op.args[1:]
        if callee.value not in self.externs:
            self.externs[callee.value] = (op.dtype, tuple(self.arg_type(a) for a in args))
        return f"{callee.value}({', '.join(self._strip(self.expr(a)) for a in args)})"

    def arg_type(self, arg: E.PrimExpr) -> str:
        """The C type of an extern call argument (for the generated prototype)."""
        if isinstance(arg, E.StringImm):
            return "const char*"
        if isinstance(arg, E.Call) and arg.op == "tvm_access_ptr":
            return self.type_name(arg.args[0].dtype) + "*"
        if isinstance(arg, E.Var) and id(arg) in self.pointer_types:
            return self.type_name(self.pointer_types[id(arg)]) + "*"
        return self.type_name(arg.dtype)

    def _access_ptr(self, op: E.Call) -> str:
        annotation, data, offset = op.args[0], op.args[1], op.args[2]
        pointer = self.expr(data)
        if self.pointer_types.get(id(data)) != annotation.dtype:
            pointer = f"(({self.type_name(annotation.dtype)}*){pointer})"
        at_start = isinstance(offset, E.IntImm) and offset.value == 0
        return pointer if at_start else f"({pointer} + {self.expr(offset)})"

    # ---------------------------------------------------------------- helpers

    def _element(self, buffer, index: E.PrimExpr) -> str:
        pointer, element = self.expr(buffer.data), buffer.dtype.element_of()
        if self.pointer_types.get(id(buffer.data), element) != element:
            pointer = f"(({self.type_name(buffer.dtype)}*){pointer})"
        return f"{pointer}[{self._strip(self.expr(index))}]"

    def _require_lane(self, op) -> str:
        if self.lane is None:
            raise BuildError(
                f"{type(op).__name__} outside a vector store: the C printer only prints "
                "vector expressions as the value or index of a store"
            )
        return self.lane

    @staticmethod
    def _strip(text: str) -> str:
        """``(a + b)`` -> ``a + b`` where the context already delimits it (indices,
        conditions, statements), when the outer parentheses enclose everything."""
        if not (text.startswith("(") and text.endswith(")")):
            return text
        depth = 0
        for position, char in enumerate(text):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and position < len(text) - 1:
                return text
        return text[1:-1]

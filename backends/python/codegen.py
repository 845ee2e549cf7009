"""Lowered PrimFuncs as readable low-level NumPy Python ("lnumpy").

Each function becomes ``def name(A, B, C, n, m):`` over the checked arguments (arrays
for buffer parameters, then scalar parameters, then the ``tl.size_vars`` values).
Buffer parameters are used through flat 1-D views (``A_flat = A.reshape(-1)``),
allocations are ``np.empty``, loops of every kind run sequentially as
``for i in range(...)``::

    def mm_relu(A, B, C):
        A_flat = A.reshape(-1)
        ...
        Y = np.empty(256, dtype=np.float32)
        for i in range(16):
            for j in range(16):
                for k in range(16):
                    if k == 0:
                        Y[i * 16 + j] = np.float32(0.0)
                    Y[i * 16 + j] = Y[i * 16 + j] + A_flat[i * 16 + k] * B_flat[k * 16 + j]
"""

from __future__ import annotations

from tilelang.backends.python.exprs import ExprPrinter, np_type
from tilelang.backends.python.names import NameTable, comment

from tilelang.analysis.fragments import collect_fragments
from tilelang.arith import simplify
from tilelang.bounds.report import BOUNDS_ERROR
from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import NodeFunctor
from tilelang.ir.node import deep_recursion

_INDENT = "    "


class FunctionWriter(NodeFunctor):
    """Writes one lowered PrimFunc as a Python function."""

    def __init__(self, func, name: str):
        self.func, self.name = func, name  # name: an identifier unique in the module
        self.names = NameTable()
        self.names.used.add(name)
        self.array_name: dict[int, str] = {}
        self.exprs = ExprPrinter(self.names, self.array_name)
        self.exprs.fragments = collect_fragments(func.body)
        self.lines: list[str] = []
        self.depth = 1

    def emit(self, text: str) -> None:
        self.lines.append(_INDENT * self.depth + text)

    def write(self) -> str:
        func = self.func
        args, prologue = [], []
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is None:
                arg = self.names.get(param)
                args.append(arg)
                prologue.append(self._scalar(arg, param.dtype))
                continue
            arg = self.names.get(param, buffer.name)
            args.append(arg)
            flat = self.names.fresh(f"{buffer.name}_flat")
            self.array_name[id(buffer.data)] = flat
            prologue.append(self._flat_view(flat, arg, buffer))
        for var in func.attrs.get("tl.size_vars", ()):
            arg = self.names.get(var)
            args.append(arg)
            prologue.append(self._scalar(arg, var.dtype))
        for line in prologue:
            self.emit(line)
        with deep_recursion():
            self.stmt(func.body)
        header = f"def {self.name}({', '.join(args)}):"
        return "\n".join([header, *self.lines])

    def _scalar(self, name: str, dtype) -> str:
        if dtype.is_handle():
            return comment(f"{name}: handle")
        return f"{name} = {np_type(dtype)}({name})"

    def _flat_view(self, flat: str, arg: str, buffer) -> str:
        offset = const_int_value(buffer.elem_offset)
        size = self._flat_size(buffer)
        if not buffer.strides or buffer.is_dense():
            view = f"{arg}.reshape(-1)"
        else:
            view = f"_flat({arg}, {size})"
        if offset not in (0, None):
            view = f"_Shifted({view}, {offset})"
        return f"{flat} = {view}"

    def _flat_size(self, buffer) -> str:
        from tilelang.transform.flatten_buffer import flat_size

        return self.exprs.expr(flat_size(buffer))

    # ------------------------------------------------------------ statements
    def stmt(self, s) -> None:
        self.visit(s)

    def generic_visit(self, s):
        raise BuildError(f"the python backend cannot translate {type(s).__name__}")

    def block(self, s) -> None:
        start = len(self.lines)
        self.depth += 1
        self.stmt(s)
        self.depth -= 1
        if len(self.lines) == start or all(
            line.strip().startswith("#") for line in self.lines[start:]
        ):
            self.lines.append(_INDENT * (self.depth + 1) + "pass")

    def visit_seq_stmt(self, s):
        for item in s.seq:
            self.stmt(item)

    def visit_buffer_store(self, s):
        array = self.array_name.get(id(s.buffer.data))
        if array is None:
            raise BuildError(f"buffer {s.buffer.name} is stored to but never allocated")
        if s.predicate is not None:
            index, mask = self.exprs.expr(s.indices[0]), self.exprs.expr(s.predicate)
            self.emit(f"_masked_store({array}, {index}, {self.exprs.expr(s.value)}, {mask})")
            return
        self.emit(f"{array}[{self.exprs.index(s.indices[0])}] = {self.exprs.expr(s.value)}")

    def visit_for(self, s):
        var = self.names.get(s.loop_var)
        lo, extent = s.min, s.extent
        if const_int_value(lo) == 0 and s.step is None:
            bounds = self.exprs.expr(extent)
        else:
            stop = self.exprs.expr(simplify(binary("add", lo, extent)))
            bounds = f"{self.exprs.expr(lo)}, {stop}"
            if s.step is not None:
                bounds += f", {self.exprs.expr(s.step)}"
        note = ""
        if s.kind != S.ForKind.SERIAL:
            note = "  " + comment(f"{s.kind.tag} {s.thread_binding or ''}".rstrip())
        self.emit(f"for {var} in range({bounds}):{note}")
        self.block(s.body)

    def visit_while(self, s):
        self.emit(f"while {self.exprs.expr(s.condition)}:")
        self.block(s.body)

    def visit_if_then_else(self, s):
        self.emit(f"if {self.exprs.expr(s.condition)}:")
        self.block(s.then_case)
        if s.else_case is not None:
            self.emit("else:")
            self.block(s.else_case)

    def visit_let_stmt(self, s):
        value = self.exprs.expr(s.value)
        if s.value.dtype.lanes > 1:
            value = f"np.array({value})"  # a vector load is a view; a let keeps a value
        self.emit(f"{self.names.get(s.var)} = {value}")
        self.stmt(s.body)

    def visit_attr_stmt(self, s):
        self.emit(comment(f"attr {s.attr_key} = {self.exprs.expr(s.value)}"))
        self.stmt(s.body)

    def visit_assert_stmt(self, s):
        message = self.exprs.expr(s.message)
        self.emit(f"if not ({self.exprs.expr(s.condition)}):")
        if isinstance(s.message, E.Call) and s.message.op == BOUNDS_ERROR:
            self.emit(f"{_INDENT}raise {message}")  # the located OutOfBoundsError
        else:
            self.emit(f"{_INDENT}raise _AssertionFailure('assertion failed: ' + str({message}))")
        self.stmt(s.body)

    def visit_allocate(self, s):
        name = self.names.get(s.buffer_var)
        self.array_name[id(s.buffer_var)] = name
        self.exprs.scopes[id(s.buffer_var)] = s.scope
        size = self.exprs.expr(s.extents[0]) if len(s.extents) == 1 else None
        if size is None:
            size = " * ".join(self.exprs.paren(x, 13) for x in s.extents)
        scope = "" if s.scope == "global" else "  " + comment(s.scope)
        self.emit(f"{name} = np.empty({size}, dtype={np_type(s.dtype)}){scope}")
        self.stmt(s.body)

    def visit_allocate_const(self, s):
        name = self.names.get(s.buffer_var)
        self.array_name[id(s.buffer_var)] = name
        self.emit(f"{name} = np.array({list(s.data)!r}, dtype={np_type(s.dtype)})")
        self.stmt(s.body)

    def visit_decl_buffer(self, s):
        data = s.buffer.data
        if id(data) not in self.array_name:
            raise BuildError(f"buffer {s.buffer.name} is declared over unallocated storage")
        self.stmt(s.body)

    def visit_evaluate(self, s):
        if isinstance(s.value, (E.IntImm, E.FloatImm, E.StringImm)):
            return
        if isinstance(s.value, E.Call) and s.value.op in _JUMPS:
            self.emit(_JUMPS[s.value.op])
            return
        if isinstance(s.value, E.Call) and s.value.op == "ret":  # `return value`
            (value,) = s.value.args
            self.emit(f"return {np_type(value.dtype)}({self.exprs.expr(value)})")
            return
        self.emit(self.exprs.expr(s.value))


_JUMPS = {"break_loop": "break", "continue_loop": "continue"}


def function_source(func, name: str, module_symbols=None) -> tuple[str, list[str]]:
    """The Python source of one lowered function, defined as ``name`` (an identifier
    from the module's NameTable), and the extern names it calls; ``module_symbols``
    names the module's functions for the calls between them."""
    writer = FunctionWriter(func, name)
    writer.exprs.module_symbols = module_symbols
    return writer.write(), writer.exprs.externs

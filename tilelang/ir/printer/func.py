"""Printing functions, modules and buffer declarations; the :class:`ScriptPrinter`."""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import (
    Buffer,
    BufferRegion,
    MatchBufferRegion,
    Range,
    default_index_dtype,
)
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.ir.printer.expr import string_literal
from tilelang.ir.printer.names import NameTable, sanitize
from tilelang.ir.printer.offsets import implicit_offsets
from tilelang.ir.printer.stmt import StmtPrinter, _is_true, _is_zero


def _buffer_vars(buffer: Buffer) -> list[E.Var]:
    from tilelang.ir.var_usage import collect_vars

    found: list[E.Var] = []
    for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
        for var in collect_vars(part):
            if not any(var is f for f in found):
                found.append(var)
    return found


def undeclared_buffers(func: PrimFunc) -> list[Buffer]:
    """Buffers the body uses that neither the parameters nor the body declare, in
    order of first use: the flat views of parameters that lowering makes. They print
    at the top of the body as ``A_1 = T.Buffer((n,), "float32", data=A.data)``, as
    TVM prints them, so that the text parses back."""
    from tilelang.ir.functor import StmtExprVisitor

    declared = {id(b): b for b in func.buffer_map.values()}
    found: list[Buffer] = []

    class _Collect(StmtExprVisitor):
        def visit_buffer_def(self, buffer):
            declared[id(buffer)] = buffer

        def visit_buffer_ref(self, buffer):
            if id(buffer) not in declared:
                declared[id(buffer)] = buffer
                found.append(buffer)

        def visit_attr_stmt(self, stmt):
            # buffers named by an attribute (T.attr([A, B], "buffer_bind_scope", ...))
            nodes = stmt.node if isinstance(stmt.node, (list, tuple)) else [stmt.node]
            for node in nodes:
                if isinstance(node, Buffer):
                    self.visit_buffer_ref(node)
            self.generic_visit(stmt)

    _Collect().visit(func.body)
    return found


def _defined_in_body(stmt) -> set[int]:
    """Ids of the variables that statements of ``stmt`` define (allocations, lets,
    loops, thread launches, block iterators)."""
    from tilelang.ir.functor import StmtExprVisitor

    found: set[int] = set()

    class _Defs(StmtExprVisitor):
        def visit_var_def(self, var):
            found.add(id(var))

        def visit_attr_stmt(self, stmt):
            if isinstance(stmt.node, S.IterVar):
                found.add(id(stmt.node.var))
            self.generic_visit(stmt)

    _Defs().visit(stmt)
    return found


def _contains_block(stmt) -> bool:
    from tilelang.ir.functor import post_order_visit

    found = []
    post_order_visit(stmt, lambda n: found.append(1) if isinstance(n, S.Block) else None)
    return bool(found)


def implicit_root(func: PrimFunc) -> S.Block | None:
    """The function's root block when it prints implicitly (TVM's rule): a block named
    ``root`` with no iterators, predicate, regions, init, views or annotations, that the
    parser recreates because the body holds blocks or the root allocates buffers."""
    realize = func.body
    if not isinstance(realize, S.BlockRealize) or realize.iter_values:
        return None
    block = realize.block
    simple = (
        block.name_hint == "root"
        and not block.iter_vars
        and _is_true(realize.predicate)
        and not block.reads
        and not block.writes
        and block.init is None
        and not block.match_buffers
        and not block.annotations
    )
    # a lone block without iterators would be taken for the root when parsed back
    lone = isinstance(block.body, S.BlockRealize) and not block.body.block.iter_vars
    if simple and (block.alloc_buffers or (_contains_block(block.body) and not lone)):
        return block
    return None


def _mentions(value, var: E.Var) -> bool:
    """``var`` occurs in an attribute value (nested lists, dicts, expressions)."""
    from tilelang.ir.var_usage import collect_vars

    if isinstance(value, E.PrimExpr):
        return any(v is var for v in collect_vars(value))
    if isinstance(value, (list, tuple)):
        return any(_mentions(x, var) for x in value)
    if isinstance(value, dict):
        return any(_mentions(x, var) for x in value.values())
    return False


def _free_vars(func: PrimFunc, declared) -> list:
    """Variables used in ``func`` that no parameter, buffer or statement defines."""
    from tilelang.ir.analysis import undefined_vars
    from tilelang.ir.functor import StmtExprVisitor

    class _Definitions(StmtExprVisitor):
        """Every variable a statement defines, wherever it is; a DeclBuffer names a
        pointer without allocating it, so its data variable is only a candidate."""

        def __init__(self):
            self.bound, self.declared_data = set(), []
            # definitions met so far, in order, and the variables an AttrStmt annotates
            # before any of them defines them (TVM's lowered host code writes
            # T.attr(B.data, ...) ahead of the T.LetStmt(..., var=B.data) binding it)
            self.so_far, self.annotated_early = set(), []

        def visit_var_def(self, var):
            self.bound.add(id(var))
            self.so_far.add(id(var))

        def visit_let_stmt(self, stmt):
            # a let may bind a variable also used outside it (TVM's T.LetStmt(v, var=y)
            # of a declared y): scoping is left to undefined_vars
            self.visit(stmt.value)
            self.so_far.add(id(stmt.var))
            self.visit(stmt.body)

        def visit_buffer_def(self, buffer):
            self.bound.add(id(buffer))
            self.so_far.add(id(buffer.data))

        def visit_decl_buffer(self, stmt):
            self.declared_data.append(stmt.buffer.data)
            self.generic_visit(stmt)

        def visit_attr_stmt(self, stmt):
            if isinstance(stmt.node, S.IterVar):  # a thread launch defines its variable
                self.bound.add(id(stmt.node.var))
                self.so_far.add(id(stmt.node.var))
            elif isinstance(stmt.node, E.Var) and id(stmt.node) not in self.so_far:
                self.annotated_early.append(stmt.node)
            self.generic_visit(stmt)

        def visit_block(self, block):
            for buffer in (*block.alloc_buffers, *(m.buffer for m in block.match_buffers)):
                self.bound.add(id(buffer.data))
                self.so_far.add(id(buffer.data))
            self.generic_visit(block)

    defs = _Definitions()
    defs.so_far.update(id(p) for p in func.params)
    defs.so_far.update(id(b.data) for b in func.buffer_map.values())
    defs.visit(func.body)
    bound = defs.bound | {id(p) for p in func.params}
    bound.update(id(b.data) for b in func.buffer_map.values())
    found = [v for v in undefined_vars(func) if id(v) not in bound]
    found += [v for v in defs.declared_data if id(v) not in bound]
    found += [v for v in defs.annotated_early if id(v) not in bound]
    result, seen = [], {id(d) for d in declared} | {id(p) for p in func.params}
    for var in found:
        if id(var) not in seen:
            seen.add(id(var))
            result.append(var)
    return result


def _relaunched_threads(func: PrimFunc) -> list:
    """``(var, thread tag)`` of the thread variables that several launches share."""
    from tilelang.ir.functor import post_order_visit

    launches: dict = {}

    def visit(node):
        if isinstance(node, S.AttrStmt) and isinstance(node.node, S.IterVar):
            entry = launches.setdefault(id(node.node.var), [node.node.var, node.node.thread_tag, 0])
            entry[2] += 1

    post_order_visit(func.body, visit)
    return [(var, tag) for var, tag, count in launches.values() if count > 1]


class ScriptPrinter(StmtPrinter):
    """Prints any IR node as TVMScript text (see docs/language.md)."""

    def __init__(self):
        self.names = NameTable()
        self.lines: list[str] = []
        self.indent = 0
        self.tail = True
        self.loop_extents: dict = {}
        self.buffers: dict = {}  # data var -> buffer, for region inference
        self.pending_buffers: list[Buffer] = []  # views waiting for their variables
        self.implicit_offsets: set[int] = set()  # offset variables their buffer defines
        self.module_alias: str | None = None  # the class name while printing a module

    # -- names
    def var_name(self, var: E.Var) -> str:
        name = self.names.lookup(var)
        # a variable used before any definition is free: it lives for the whole output
        return name if name is not None else self.names.define(var, var.name, outermost=True)

    def define_var(self, var: E.Var) -> str:
        return self.names.define(var, var.name)

    def buffer_name(self, buffer: Buffer) -> str:
        name = self.names.lookup(buffer)
        return name if name is not None else self.define_buffer(buffer, outermost=True)

    def define_buffer(self, buffer: Buffer, outermost: bool = False) -> str:
        name = self.names.define(buffer, buffer.name, outermost)
        self.names.alias(buffer.data, f"{name}.data", outermost)
        if id(buffer.elem_offset) in self.implicit_offsets:
            self.names.alias(buffer.elem_offset, f"{name}.elem_offset", outermost)
        self.buffers.setdefault(buffer.data, buffer)
        return name

    def node_ref(self, obj) -> str:
        if isinstance(obj, Buffer):
            return self.buffer_name(obj)
        if isinstance(obj, S.IterVar):
            return self.var_name(obj.var)
        raise TypeError(f"cannot print {type(obj).__name__} as a value")

    # -- buffers
    def buffer_call(self, func: str, buffer: Buffer, data=False, source=None) -> str:
        """``T.alloc_buffer((m, n), "float32", ...)`` and its relatives."""
        shape = ", ".join(self.expr(x) for x in buffer.shape)
        if len(buffer.shape) == 1:
            shape += ","
        args = [f"({shape})", f'"{buffer.dtype}"']
        if source is not None:
            args.insert(0, source)
        if data:
            args.append(f"data={self.var_name(buffer.data)}")
        if buffer.strides:
            strides = ", ".join(self.expr(s) for s in buffer.strides)
            args.append(f"strides=({strides}{',' if len(buffer.strides) == 1 else ''})")
        # an offset variable the declaration defines is implied by the factor (TVM)
        implicit = id(buffer.elem_offset) in self.implicit_offsets
        # TVM prints an offset that is not 0 of the default index type; so do we for a
        # buffer with a factor, which would otherwise parse back with an offset variable
        default = default_index_dtype(buffer.shape)
        zero = _is_zero(buffer.elem_offset) and buffer.elem_offset.dtype == default
        if not (implicit or zero and buffer.offset_factor == 1):
            args.append(f"elem_offset={self.expr(buffer.elem_offset)}")
        if buffer.scope != "global":
            args.append(f"scope={string_literal(buffer.scope)}")
        if implicit or buffer.offset_factor != 1:
            args.append(f"offset_factor={buffer.offset_factor}")
        if buffer.axis_separators:
            args.append(f"axis_separators={list(buffer.axis_separators)}")
        return f"{func}({', '.join(args)})"

    # -- functions
    def print_prim_func(self, func: PrimFunc, name: str) -> None:
        # a function without a global symbol is private (TVM prints it the same way)
        private = "global_symbol" not in func.attrs
        self.emit("@T.prim_func(private=True)" if private else "@T.prim_func")
        # an offset variable a declaration defines is free or a parameter's offset:
        # without either (most functions) there is nothing to look for
        free = _free_vars(func, ())
        params_offsets = any(type(b.elem_offset) is E.Var for b in func.buffer_map.values())
        self.implicit_offsets = implicit_offsets(func) if free or params_offsets else set()
        matched, size_vars, params = [], [], []
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is None:
                kind = param.ty.script() if param.dtype.is_handle() else f"T.{param.dtype}"
                params.append(f"{self.define_var(param)}: {kind}")
                continue
            variables = [v for v in _buffer_vars(buffer) if id(v) not in self.implicit_offsets]
            implicit = id(buffer.elem_offset) in self.implicit_offsets
            if variables or buffer.strides or not (implicit or _is_zero(buffer.elem_offset)):
                params.append(f"{self.define_var(param)}: T.handle")
                matched.append((param, buffer))
                for var in variables:
                    if not any(var is v for v in size_vars) and not any(
                        var is p for p in func.params
                    ):
                        size_vars.append(var)
            else:
                params.append(f"{self.define_buffer(buffer)}: {self.param_buffer(buffer)}")
        returns = "" if func.ret_type is None else f" -> T.{func.ret_type}"
        self.emit(f"def {sanitize(name)}({', '.join(params)}){returns}:")
        self.indent += 1
        try:
            # attributes naming size variables (a lowered function's ``tl.size_vars``)
            # come after the variables' definitions, the others first as in TVM
            attrs_late = any(_mentions(func.attrs, var) for var in size_vars)
            if func.attrs and not attrs_late:
                self.emit(f"T.func_attr({self.value(func.attrs)})")
            for var in size_vars:
                self.emit(f"{self.define_var(var)} = {self.size_var_call(var)}")
            # variables the function uses but nothing defines are declared, so that the
            # text parses back (TVM prints them the same way)
            declared = {id(v) for v in size_vars} | self.implicit_offsets
            for var in free:
                if id(var) in declared:
                    continue
                self.emit(f"{self.define_var(var)} = {self.size_var_call(var)}")
            # a thread variable launched more than once is declared once, as TVM does
            for var, tag in _relaunched_threads(func):
                self.emit(f"{self.define_var(var)} = T.env_thread({string_literal(tag)})")
            if func.attrs and attrs_late:
                self.emit(f"T.func_attr({self.value(func.attrs)})")
            for param, buffer in matched:
                call = self.buffer_call("T.match_buffer", buffer, source=self.var_name(param))
                self.emit(f"{self.define_buffer(buffer)} = {call}")
            # a view whose pointer or sizes a statement of the body defines (an
            # allocation, a let) is declared where they are all defined, as TVM does
            inner = _defined_in_body(func.body)
            for buffer in undeclared_buffers(func):
                if any(id(v) in inner for v in (buffer.data, *_buffer_vars(buffer))):
                    self.pending_buffers.append(buffer)
                else:
                    self.declare_view(buffer)
            root = implicit_root(func)
            if root is not None:
                for buffer in root.alloc_buffers:
                    call = self.buffer_call("T.alloc_buffer", buffer)
                    self.emit(f"{self.define_buffer(buffer)} = {call}")
                self.print_stmt(root.body, tail=True)
            else:  # a root written out keeps its regions (the parser infers none for it)
                self.print_stmt(func.body, tail=True)
        finally:
            self.indent -= 1

    def declare_view(self, buffer: Buffer) -> None:
        """``A_1 = T.Buffer((n,), "float32", data=A_data)``: a buffer no statement
        declares."""
        call = self.buffer_call("T.Buffer", buffer, data=True)
        self.emit(f"{self.define_buffer(buffer)} = {call}")

    def declare_ready_views(self) -> None:
        """Declares the pending views whose variables all have names by now."""
        ready = [
            b
            for b in self.pending_buffers
            if all(self.names.lookup(v) is not None for v in (b.data, *_buffer_vars(b)))
        ]
        for buffer in ready:
            self.pending_buffers.remove(buffer)
            self.declare_view(buffer)

    def size_var_call(self, var: E.Var) -> str:
        """``T.int32()``, or ``T.int32(is_size_var=True)`` for a SizeVar (as TVM), or
        a handle's pointer type (``T.handle("float32")``)."""
        if var.dtype.is_handle() and var.ty.script() != "T.handle":
            return var.ty.script()  # a typed pointer: T.handle("float32")
        flag = "is_size_var=True" if isinstance(var, E.SizeVar) else ""
        return f"T.{var.dtype}({flag})"

    def param_buffer(self, buffer: Buffer) -> str:
        return self.buffer_call("T.Buffer", buffer)

    def print_module(self, mod: IRModule) -> None:
        self.emit("@I.ir_module")
        self.emit("class Module:")
        self.indent += 1
        self.module_alias = "Module"  # calls between its functions: Module.f(...)
        try:
            if mod.attrs:
                self.emit(f"I.module_attrs({self.value(dict(mod.attrs))})")
                self.lines.append("")
            for index, (name, func) in enumerate(mod.functions.items()):
                if index:
                    self.lines.append("")
                # names are scoped per function, as in TVM
                self.names, self.loop_extents, self.buffers = NameTable(), {}, {}
                self.pending_buffers = []
                if isinstance(func, PrimFunc):
                    self.print_prim_func(func, name)
                else:  # functions of other IRs (graph functions) print themselves
                    func.print_script(self, name)
        finally:
            self.indent -= 1
            self.module_alias = None

    def name_free_buffers(self, node) -> None:
        """Names the buffers a statement or expression uses before printing it, so that
        their data pointers print as ``A.data`` wherever they appear first."""
        from tilelang.ir.functor import StmtExprVisitor

        printer = self

        class _Buffers(StmtExprVisitor):
            def visit_buffer_ref(self, buffer):
                printer.buffer_name(buffer)

        _Buffers().visit(node)

    # -- other nodes printed on their own
    def print_node(self, node) -> None:
        if isinstance(node, IRModule):
            self.print_module(node)
        elif isinstance(node, PrimFunc):
            name = node.attrs.get("global_symbol", "main")
            self.print_prim_func(node, name if isinstance(name, str) else "main")
        elif isinstance(node, (S.Stmt, E.PrimExpr)):
            self.name_free_buffers(node)
            if isinstance(node, S.Stmt):
                self.print_stmt(node, tail=True)
            else:
                self.lines.append(self.expr(node))
        elif isinstance(node, Buffer):
            self.lines.append(f"{self.buffer_name(node)} = {self.buffer_call('T.Buffer', node)}")
        elif isinstance(node, BufferRegion):
            self.lines.append(self.region(node))
        elif isinstance(node, MatchBufferRegion):
            call = self.buffer_call("T.match_buffer", node.buffer, source=self.region(node.source))
            self.lines.append(f"{self.buffer_name(node.buffer)} = {call}")
        elif isinstance(node, Range):
            self.lines.append(f"{self.expr(node.min)}:{self.stop_text(node.min, node.extent)}")
        elif isinstance(node, S.IterVar):
            kind = {0: "spatial", 2: "reduce", 3: "scan"}.get(node.iter_type, "opaque")
            self.lines.append(f"{self.var_name(node.var)} = T.axis.{kind}({self.domain(node.dom)})")
        elif hasattr(node, "print_script"):  # nodes of other IRs (tilelang.relax)
            node.print_script(self, None)
        else:
            raise TypeError(f"the printer does not know {type(node).__name__}")

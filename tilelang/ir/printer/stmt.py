"""Printing statements, loops and TensorIR blocks.

Statements append indented lines to ``self.lines``. Statements that scope over "the
rest" (``LetStmt``, ``Allocate``, ``DeclBuffer``, ``AssertStmt``) print flat, as TVM
does, when their body runs to the end of the enclosing sequence; anywhere else they
print in their ``with`` form so that the statements after them stay outside.
"""

from __future__ import annotations

from contextlib import contextmanager

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.printer.expr import ExprPrinter, string_literal

_LOOP_FUNCS = {
    S.ForKind.SERIAL: "T.serial",
    S.ForKind.PARALLEL: "T.parallel",
    S.ForKind.VECTORIZED: "T.vectorized",
    S.ForKind.UNROLLED: "T.unroll",
    S.ForKind.THREAD_BINDING: "T.thread_binding",
}

_AXIS_KINDS = {
    S.IterVar.DataPar: ("spatial", "S"),
    S.IterVar.CommReduce: ("reduce", "R"),
    S.IterVar.Ordered: ("scan", None),
    S.IterVar.Opaque: ("opaque", None),
}


_JUMPS = {"break_loop": "break", "continue_loop": "continue"}


def _is_true(expr) -> bool:
    return isinstance(expr, E.IntImm) and expr.dtype.is_bool() and expr.value == 1


def _is_zero(expr) -> bool:
    return const_int_value(expr) == 0 and isinstance(expr, E.IntImm)


class StmtPrinter(ExprPrinter):
    """Prints statements into ``self.lines``; needs ``names``/``indent`` set up."""

    # -- output
    def emit(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    @contextmanager
    def scope(self):
        """Names defined inside are free again afterwards."""
        self.names.push()
        try:
            yield
        finally:
            self.names.pop()

    def body(self, stmt) -> None:
        """Prints ``stmt`` one level deeper, in its own scope."""
        self.indent += 1
        try:
            with self.scope():
                self.print_stmt(stmt, tail=True)
        finally:
            self.indent -= 1

    def print_stmt(self, stmt, tail: bool) -> None:
        if self.pending_buffers:
            self.declare_ready_views()
        self.tail = tail
        self.visit(stmt)

    # -- plain statements
    def visit_seq_stmt(self, op: S.SeqStmt):
        last = len(op.seq) - 1
        for index, stmt in enumerate(op.seq):
            self.print_stmt(stmt, tail=index == last)

    def visit_buffer_store(self, op: S.BufferStore):
        if op.predicate is not None:  # TVM's spelling of a masked store
            indices = ", ".join(self.expr(ix) for ix in op.indices)
            value, predicate = self.expr(op.value), self.expr(op.predicate)
            name = self.buffer_name(op.buffer)
            self.emit(f"{name}.vstore([{indices}], {value}, predicate={predicate})")
            return
        target = f"{self.buffer_name(op.buffer)}[{self.indices(op.indices)}]"
        self.emit(f"{target} = {self.expr(op.value)}")

    def visit_evaluate(self, op: S.Evaluate):
        if isinstance(op.value, E.Call) and op.value.op == "ret":
            self.emit(f"return {self.expr(op.value.args[0])}")
            return
        if isinstance(op.value, E.Call) and op.value.op in _JUMPS:
            self.emit(_JUMPS[op.value.op])
            return
        if isinstance(op.value, E.Call) and op.value.op == "call_tir":
            self.emit(self.expr(op.value))  # a call as a statement, as TVM prints it
            return
        self.emit(f"T.evaluate({self.expr(op.value)})")

    def visit_if_then_else(self, op: S.IfThenElse):
        self.emit(f"if {self.expr(op.condition)}:")
        self.body(op.then_case)
        if op.else_case is not None:
            self.emit("else:")
            self.body(op.else_case)

    def visit_while(self, op: S.While):
        self.emit(f"while {self.expr(op.condition)}:")
        self.body(op.body)

    def visit_attr_stmt(self, op: S.AttrStmt):
        if isinstance(op.node, S.IterVar) and op.attr_key == "thread_extent":
            return self.launch_thread(op)
        body = op.body
        if (
            op.attr_key == "realize_scope"
            and isinstance(body, S.BufferRealize)
            and body.buffer is op.node
            and isinstance(op.value, E.StringImm)
        ):
            return self.realize(body, string_literal(op.value.value))
        node = self.value(op.node)
        self.emit(f"with T.attr({node}, {string_literal(op.attr_key)}, {self.expr(op.value)}):")
        self.body(op.body)

    def visit_buffer_realize(self, op: S.BufferRealize):
        self.realize(op, None)

    def realize(self, op: S.BufferRealize, scope: str | None):
        """``T.realize(A[0:16], "global")`` over the rest (``with`` when not last), as
        TVM prints a realize_scope attribute around its BufferRealize."""
        region = BufferRegion(op.buffer, op.bounds)
        args = [self.region(region)] + ([scope] if scope is not None else [])
        if not _is_true(op.condition):
            args.append(f"condition={self.expr(op.condition)}")
        call = f"T.realize({', '.join(args)})"
        if self.tail:
            self.emit(call)
            self.print_stmt(op.body, tail=True)
        else:
            self.emit(f"with {call}:")
            self.body(op.body)

    def launch_thread(self, op: S.AttrStmt):
        """A thread launch, as TVM prints it: ``bx = T.launch_thread("blockIdx.x", 8)``
        over the rest of the body (``with ... as bx:`` when not last); a variable launched
        again is written ``with T.launch_thread(bx, 8):``."""
        var, tag = op.node.var, string_literal(op.node.thread_tag)
        extent = self.expr(op.value)
        if self.names.lookup(var) is not None:
            if self.tail:
                self.emit(f"T.launch_thread({self.var_name(var)}, {extent})")
                self.print_stmt(op.body, tail=True)
            else:
                self.emit(f"with T.launch_thread({self.var_name(var)}, {extent}):")
                self.body(op.body)
        elif self.tail:
            self.emit(f"{self.define_var(var)} = T.launch_thread({tag}, {extent})")
            self.print_stmt(op.body, tail=True)
        else:
            with self.scope():
                self.emit(f"with T.launch_thread({tag}, {extent}) as {self.define_var(var)}:")
                self.body(op.body)

    def visit_let_stmt(self, op: S.LetStmt):
        tail = self.tail
        value = self.expr(op.value)
        if self.names.lookup(op.var) is not None:
            # a variable declared before (T.int32()) bound here, as TVM prints it
            self.emit(f"with T.LetStmt({value}, var={self.var_name(op.var)}):")
            self.body(op.body)
            return
        if tail:
            self.emit(f"{self.define_var(op.var)}: T.{op.var.dtype} = {value}")
            self.print_stmt(op.body, tail=True)
            return
        with self.scope():
            self.emit(f"with T.let({self.define_var(op.var)}, {value}):")
            self.body(op.body)

    def visit_assert_stmt(self, op: S.AssertStmt):
        cond, message = self.expr(op.condition), self.expr(op.message)
        if op.error_kind != "RuntimeError":
            message = f"({string_literal(op.error_kind)}, [{message}])"
        if self.tail:
            self.emit(f"assert {cond}, {message}")
            self.print_stmt(op.body, tail=True)
        else:
            self.emit(f"with T.Assert({cond}, {message}):")
            self.body(op.body)

    def visit_allocate(self, op: S.Allocate):
        tail = self.tail
        extents = ", ".join(self.expr(x) for x in op.extents)
        args = [f"[{extents}]", f'"{op.dtype}"', string_literal(op.scope)]
        if not _is_true(op.condition):
            args.append(self.expr(op.condition))
        if op.annotations:
            args.append(f"annotations={self.value(op.annotations)}")
        call = f"T.allocate({', '.join(args)})"
        if tail:
            self.emit(f"{self.define_var(op.buffer_var)} = {call}")
            self.print_stmt(op.body, tail=True)
            return
        with self.scope():
            self.emit(f"with {call} as {self.define_var(op.buffer_var)}:")
            self.body(op.body)

    def visit_allocate_const(self, op: S.AllocateConst):
        extents = ", ".join(self.expr(x) for x in op.extents)
        values = ", ".join(self.value(v) for v in op.data)
        args = [f"[{values}]", f'"{op.dtype}"', f"[{extents}]"]
        if op.annotations:
            args.append(f"annotations={self.value(op.annotations)}")
        call = f"T.allocate_const({', '.join(args)})"
        if self.tail:
            self.emit(f"{self.define_var(op.buffer_var)} = {call}")
            self.print_stmt(op.body, tail=True)
            return
        with self.scope():
            self.emit(f"with {call} as {self.define_var(op.buffer_var)}:")
            self.body(op.body)

    def visit_decl_buffer(self, op: S.DeclBuffer):
        tail = self.tail
        call = self.buffer_call("T.decl_buffer", op.buffer, data=True)
        if tail:
            self.emit(f"{self.define_buffer(op.buffer)} = {call}")
            self.print_stmt(op.body, tail=True)
            return
        with self.scope():
            self.emit(f"with {call} as {self.define_buffer(op.buffer)}:")
            self.body(op.body)

    # -- loops
    def visit_for(self, op: S.For):
        with self.scope():
            self.print_for(op)

    def print_for(self, op: S.For):
        if self.is_grid_loop(op):
            loops = [op]
            while self.is_grid_loop(loops[-1].body) and not self.uses_any(
                loops[-1].body.extent, [lp.loop_var for lp in loops]
            ):
                loops.append(loops[-1].body)
            if len(loops) > 1:
                extents = ", ".join(self.expr(lp.extent) for lp in loops)
                names = ", ".join(self.define_loop(lp) for lp in loops)
                self.emit(f"for {names} in T.grid({extents}):")
                self.body(loops[-1].body)
                return
        self.emit(f"for {self.loop_header(op)}:")
        self.body(op.body)

    def is_grid_loop(self, op) -> bool:
        return (
            isinstance(op, S.For)
            and op.kind is S.ForKind.SERIAL
            and op.step is None
            and not op.annotations
            and _is_zero(op.min)
        )

    def uses_any(self, expr, variables) -> bool:
        from tilelang.ir.var_usage import collect_vars

        used = collect_vars(expr)
        return any(u is v for u in used for v in variables)

    def loop_header(self, op: S.For) -> str:
        min_text, extent_text = self.expr(op.min), self.expr(op.extent)
        args = (
            [extent_text]
            if _is_zero(op.min) and op.step is None
            else [
                min_text,
                self.stop_text(op.min, op.extent),
            ]
        )
        if op.step is not None:
            args.append(self.expr(op.step))
        plain = op.kind is S.ForKind.SERIAL and not op.annotations
        func = "range" if plain else _LOOP_FUNCS[op.kind]
        if op.kind is S.ForKind.THREAD_BINDING:
            args.append(f"thread={string_literal(op.thread_binding or '')}")
        if op.annotations:
            args.append(f"annotations={self.value(op.annotations)}")
        name = self.define_loop(op)
        return f"{name} in {func}({', '.join(args)})"

    def define_loop(self, op: S.For) -> str:
        self.loop_extents[op.loop_var] = op
        return self.define_var(op.loop_var)

    def stop_text(self, start, extent) -> str:
        """``start + extent`` as the stop of a slice or loop (folded when constant)."""
        lo, ext = const_int_value(start), const_int_value(extent)
        if lo is not None and ext is not None and isinstance(start, E.IntImm):
            if start.dtype == extent.dtype:
                return self.expr(E.IntImm(start.dtype, lo + ext))
        if _is_zero(start):
            return self.expr(extent)
        return self.expr(binary("add", start, extent))

    # -- blocks
    def visit_block_realize(self, op: S.BlockRealize):
        self.print_block(op.block, op.iter_values, op.predicate)

    def visit_block(self, op: S.Block):
        # A Block outside a BlockRealize: show its iterators bound to themselves.
        self.print_block(op, [iv.var for iv in op.iter_vars], E.IntImm("bool", 1))

    def print_block(self, block: S.Block, values, predicate) -> None:
        self.emit(f"with T.block({string_literal(block.name_hint)}):")
        self.indent += 1
        self.names.push()
        try:
            self.print_block_header(block, values, predicate)
            if block.init is not None:
                self.emit("with T.init():")
                self.body(block.init)
            self.print_stmt(block.body, tail=True)
        finally:
            self.names.pop()
            self.indent -= 1

    def print_block_header(self, block: S.Block, values, predicate) -> None:
        value_texts = [self.expr(v) for v in values]
        remap = self.remap_kinds(block, values)
        names = [self.define_var(iv.var) for iv in block.iter_vars]
        if remap is not None and names:
            self.emit(f'{", ".join(names)} = T.axis.remap("{remap}", [{", ".join(value_texts)}])')
        else:
            for iv, name, value in zip(block.iter_vars, names, value_texts):
                kind = _AXIS_KINDS.get(iv.iter_type, ("opaque", None))[0]
                self.emit(f"{name} = T.axis.{kind}({self.domain(iv.dom)}, {value})")
        if not _is_true(predicate):
            self.emit(f"T.where({self.expr(predicate)})")
        # the regions as they are, as TVM prints them: empty ones print as T.reads() /
        # T.writes() and parse back empty (a block without them is given inferred ones)
        reads, writes = block.reads, block.writes
        self.emit(f"T.reads({', '.join(self.region(r) for r in reads)})")
        self.emit(f"T.writes({', '.join(self.region(w) for w in writes)})")
        if block.annotations:
            self.emit(f"T.block_attr({self.value(block.annotations)})")
        for buffer in block.alloc_buffers:
            call = self.buffer_call("T.alloc_buffer", buffer)
            self.emit(f"{self.define_buffer(buffer)} = {call}")
        for match in block.match_buffers:
            source = self.region(match.source)
            call = self.buffer_call("T.match_buffer", match.buffer, source=source)
            self.emit(f"{self.define_buffer(match.buffer)} = {call}")

    def remap_kinds(self, block: S.Block, values) -> str | None:
        """The ``"SSR"`` string when every binding is a loop variable whose loop covers
        exactly the iterator's domain, else None."""
        kinds = []
        for iv, value in zip(block.iter_vars, values):
            letter = _AXIS_KINDS.get(iv.iter_type, (None, None))[1]
            loop = self.loop_extents.get(value) if isinstance(value, E.Var) else None
            if (
                letter is None
                or loop is None
                or not _is_zero(iv.dom.min)
                or not _is_zero(loop.min)
                or loop.step is not None
                or iv.var.dtype != value.dtype
                or not self.same_expr(loop.extent, iv.dom.extent)
            ):
                return None
            kinds.append(letter)
        return "".join(kinds)

    def same_expr(self, a, b) -> bool:
        from tilelang.ir.structural import structural_equal

        return a is b or structural_equal(a, b)

    def domain(self, dom) -> str:
        if _is_zero(dom.min):
            return self.expr(dom.extent)
        return f"({self.expr(dom.min)}, {self.stop_text(dom.min, dom.extent)})"

    def region(self, region: BufferRegion) -> str:
        parts = []
        for rng in region.region:
            if const_int_value(rng.extent) == 1 and isinstance(rng.extent, E.IntImm):
                parts.append(self.expr(rng.min))
            else:
                parts.append(f"{self.expr(rng.min)}:{self.stop_text(rng.min, rng.extent)}")
        # a zero-dimensional buffer's region is written A[()], as its element is
        return f"{self.buffer_name(region.buffer)}[{', '.join(parts) or '()'}]"

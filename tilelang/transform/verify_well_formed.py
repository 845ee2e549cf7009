"""VerifyWellFormed: the IR means something before it is lowered.

Checks, with the first violation reported as a :class:`WellFormedError` (a
:class:`~tilelang.errors.TIRSyntaxError`, located at the offending node's source
position when the parser recorded one):

* every variable used is defined (a parameter, a size in a parameter buffer's shape,
  a loop, a let, a block iterator, an allocation) and in scope;
* every buffer accessed is defined (a parameter buffer, an ``alloc_buffer``, a
  ``match_buffer`` or a ``DeclBuffer``) and in scope;
* a block's iterators are used only inside that block (not in its bindings, its
  predicate or after it);
* loop bounds are integers;
* no ``T.realize`` (TVM's BufferRealize, parsed and printed but not lowered);
* float math (``T.exp``, ``T.atan2``...) has float arguments (TVM's ``T.exp(0)`` is an
  int32 call that no backend computes);
* ``break``/``continue`` (``T.break_loop()``/``T.continue_loop()``) sit in a serial or
  ``while`` loop of the same block (TVM refuses them in other loop kinds too).
"""

from __future__ import annotations

from tilelang.errors import TIRSyntaxError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprVisitor
from tilelang.ir.op import INTRINSICS
from tilelang.transform.pass_infra import prim_func_pass


class WellFormedError(TIRSyntaxError):
    """IR that is not well formed (an undefined variable, a block iterator used
    outside its block...)."""


def _error(message: str, node) -> WellFormedError:
    span = getattr(node, "span", None)
    if span is None:
        return WellFormedError(message)
    return WellFormedError(message, span.source, span.line, span.column)


class _Checker(StmtExprVisitor):
    def __init__(self, func_name: str):
        self.func_name = func_name
        self.defined: set[int] = set()
        self.buffers: set[int] = set()
        self.block_of_var: dict[int, str] = {}
        self.node_stack: list = []
        self.jump_targets: list = []  # enclosing loops (None for a block), innermost last

    def _where(self):
        for node in reversed(self.node_stack):
            if getattr(node, "span", None) is not None:
                return node
        return None

    # -- scoping helpers
    def define_var(self, var):
        self.defined.add(id(var))

    def undefine_var(self, var):
        self.defined.discard(id(var))

    def define_buffer(self, buffer):
        self.buffers.add(id(buffer))
        self.defined.add(id(buffer.data))

    def undefine_buffer(self, buffer):
        self.buffers.discard(id(buffer))

    def visit(self, node):
        self.node_stack.append(node)
        try:
            return super().visit(node)
        finally:
            self.node_stack.pop()

    # -- uses
    def visit_var(self, var):
        if id(var) in self.defined:
            return
        block = self.block_of_var.get(id(var))
        if block is not None:
            raise _error(
                f"block iterator {var.name} of block {block!r} is used outside its block "
                f"in function {self.func_name!r}",
                var if var.span is not None else self._where(),
            )
        raise _error(
            f"variable {var.name} is used but not defined in function {self.func_name!r}",
            var if var.span is not None else self._where(),
        )

    visit_size_var = visit_var

    def visit_buffer_ref(self, buffer):
        if id(buffer) not in self.buffers:
            raise _error(
                f"buffer {buffer.name} is used but not defined in function "
                f"{self.func_name!r} (declare it as a parameter, T.alloc_buffer or "
                "T.match_buffer)",
                self._where(),
            )

    # -- scopes
    def visit_for(self, op: S.For):
        self.visit(op.min)
        self.visit(op.extent)
        if op.step is not None:
            self.visit(op.step)
        for part in (op.min, op.extent):
            if not part.dtype.is_integer():
                raise _error(
                    f"loop {op.loop_var.name} has a {part.dtype} bound; loop bounds must be "
                    "integers",
                    op,
                )
        self.define_var(op.loop_var)
        self.jump_targets.append(op)
        self.visit(op.body)
        self.jump_targets.pop()
        self.undefine_var(op.loop_var)

    def visit_buffer_realize(self, op: S.BufferRealize):
        raise _error(
            f"T.realize (TVM's storage realisation before TensorIR) in function "
            f"{self.func_name!r} is not lowered by tilelang; allocate the buffer with "
            "T.alloc_buffer or T.decl_buffer instead",
            op,
        )

    def visit_while(self, op: S.While):
        self.visit(op.condition)
        self.jump_targets.append(op)
        self.visit(op.body)
        self.jump_targets.pop()

    def visit_call(self, op: E.Call):
        if op.op in ("break_loop", "continue_loop"):
            self._check_jump(op)
        info = INTRINSICS.get(op.op)
        if info is not None and info.result == "float" and not op.dtype.element_of().is_float():
            raise _error(
                f"T.{op.op} of {op.dtype} values in function {self.func_name!r}: float math "
                f"is computed on floats only; convert the argument first "
                f"(T.{op.op}(T.float32(x)))",
                op if op.span else self._where(),
            )
        self.generic_visit(op)

    def _check_jump(self, op: E.Call):
        keyword = "break" if op.op == "break_loop" else "continue"
        loop = self.jump_targets[-1] if self.jump_targets else None
        if loop is None:
            where = " of its block (a jump cannot leave a block)" if self.jump_targets else ""
            raise _error(
                f"`{keyword}` outside a loop{where} in function {self.func_name!r}",
                op if op.span else self._where(),
            )
        if isinstance(loop, S.For) and loop.kind is not S.ForKind.SERIAL:
            raise _error(
                f"`{keyword}` in the {loop.kind.tag} loop {loop.loop_var.name} of function "
                f"{self.func_name!r}: only a serial or while loop can be left early",
                op if op.span else self._where(),
            )

    def visit_let_stmt(self, op: S.LetStmt):
        self.visit(op.value)
        self.define_var(op.var)
        self.visit(op.body)
        self.undefine_var(op.var)

    def visit_let(self, op: E.Let):
        self.visit(op.value)
        self.define_var(op.var)
        self.visit(op.body)
        self.undefine_var(op.var)

    def visit_allocate(self, op: S.Allocate):
        for extent in op.extents:
            self.visit(extent)
        self.define_var(op.buffer_var)
        self.visit(op.body)
        self.undefine_var(op.buffer_var)

    def visit_decl_buffer(self, op: S.DeclBuffer):
        self._visit_buffer_shape(op.buffer)
        self.define_buffer(op.buffer)
        self.visit(op.body)
        self.undefine_buffer(op.buffer)

    def _visit_buffer_shape(self, buffer):
        for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            self.visit(part)

    def visit_block_realize(self, op: S.BlockRealize):
        for value in op.iter_values:
            self.visit(value)
        self.visit(op.predicate)
        self.visit(op.block)

    def visit_block(self, op: S.Block):
        for iv in op.iter_vars:
            self.visit(iv.dom)
        for iv in op.iter_vars:
            self.define_var(iv.var)
            self.block_of_var[id(iv.var)] = op.name_hint
        for buffer in op.alloc_buffers:
            self._visit_buffer_shape(buffer)
            self.define_buffer(buffer)
        for match in op.match_buffers:
            self.visit(match.source)
            for part in (*match.buffer.shape, *match.buffer.strides, match.buffer.elem_offset):
                if isinstance(part, E.Var):
                    self.define_var(part)  # match_buffer binds its symbolic fields
            self.define_buffer(match.buffer)
        for region in (*op.reads, *op.writes):
            self.visit(region)
        self.jump_targets.append(None)
        if op.init is not None:
            self.visit(op.init)
        self.visit(op.body)
        self.jump_targets.pop()
        for buffer in (*op.alloc_buffers, *(m.buffer for m in op.match_buffers)):
            self.undefine_buffer(buffer)
        for iv in op.iter_vars:
            self.undefine_var(iv.var)


def verify_well_formed(func, name: str = "main") -> None:
    """Raises :class:`WellFormedError` for the first problem in ``func``; see the module
    docstring for what is checked."""
    checker = _Checker(name)
    for param in func.params:
        checker.define_var(param)
    for buffer in func.buffer_map.values():
        checker.define_buffer(buffer)
        for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            if isinstance(part, E.Var):
                checker.define_var(part)
    checker.visit(func.body)


def _verify(func, mod, ctx):
    name = func.attrs.get("global_symbol") or next(
        (n for n, f in mod.functions.items() if f is func), "main"
    )
    verify_well_formed(func, name)
    return func


def VerifyWellFormed():  # noqa: N802 - TVM's pass name
    """The pass that checks every function (see :func:`verify_well_formed`) and returns
    it unchanged."""
    return prim_func_pass(_verify, opt_level=0, name="tir.VerifyWellFormed")

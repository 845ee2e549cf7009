"""Parse tree -> statements: loops, blocks, stores, lets, and the directives
(``T.where``, ``T.reads``...) that annotate the block around them.

A body is built statement by statement. Statements that scope over *the rest* of the
body (``x: T.int32 = e``, ``T.allocate``, ``T.decl_buffer``, ``assert``) start a new
segment, and the segments are folded from the back in a loop, so a long body never
recurses.
"""

from __future__ import annotations

import attrs
from lark import Token, Tree

from tilelang.ir import (
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    Buffer,
    BufferRealize,
    BufferRegion,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimExpr,
    Range,
    Span,
    StringImm,
    Var,
    While,
    const,
    seq_stmt,
)
from tilelang.ir import op as ops
from tilelang.ir.functor import StmtExprMutator
from tilelang.parser import calls
from tilelang.parser import specs as S
from tilelang.parser.assign_builder import AssignBuilderMixin
from tilelang.parser.expr_builder import describe
from tilelang.parser.frames import BlockFrame, FuncFrame, Wrapper
from tilelang.parser.positions import compact

__all__ = ["StmtBuilderMixin", "FuncFrame", "BlockFrame", "Wrapper", "statements_of"]


def realize_stmt(spec, body, span):
    """``T.realize``'s statement: BufferRealize, under its ``realize_scope`` attribute
    when a storage scope is given (as TVM builds it)."""
    region = spec.region
    stmt = BufferRealize(region.buffer, region.region, spec.condition, body, span=span)
    if spec.scope is None:
        return stmt
    return AttrStmt(region.buffer, "realize_scope", StringImm(spec.scope), stmt, span=span)


def statements_of(suite) -> list:
    """The statement trees of a suite, with ``a; b`` lines split."""
    result = []
    append = result.append
    for child in suite.children:
        if isinstance(child, Tree) and child.data == "simple_stmt":
            for small in child.children:
                if small is not None:
                    append(small)
        elif child is not None:
            append(child)
    return result


class StmtBuilderMixin(AssignBuilderMixin):
    """Statement building; mixed into the builder that owns scopes and errors."""

    # ------------------------------------------------------------------ bodies

    def build_body(self, trees: list, owner) -> object:
        """One statement for a list of statement trees; ``owner`` is the FuncFrame or
        BlockFrame whose body this is (None inside loops, ifs and other bodies)."""
        segments: list = [[None, []]]
        for tree in trees:
            self.last_tree = tree
            result = self.build_stmt(tree, owner)
            compact(tree)
            if result is None:
                continue
            if isinstance(result, Wrapper):
                segments.append([result, []])
            else:
                segments[-1][1].append(result)
        body = _located_seq(segments[-1][1])
        for index in range(len(segments) - 1, 0, -1):
            body = segments[index][0].make(body)
            body = _located_seq([*segments[index - 1][1], body])
        return body

    def build_suite(self, suite, owner=None):
        with self.scopes.frame():
            return self.build_body(statements_of(suite), owner)

    def build_stmt(self, tree, owner):
        # the method of each statement kind, found once per builder class (a file
        # has a statement every few dozen bytes)
        methods = _STMT_METHODS.get(type(self))
        if methods is None:
            methods = _STMT_METHODS[type(self)] = {}
        method = methods.get(tree.data)
        if method is None:
            method = getattr(type(self), "stmt_" + tree.data, None)
            if method is None:
                raise self.error(tree, f"{tree.data.replace('_', ' ')} is not supported in TIR")
            methods[tree.data] = method
        return method(self, tree, owner)

    # -------------------------------------------------------- simple statements

    def stmt_pass_stmt(self, tree, owner):
        return None

    def stmt_break_stmt(self, tree, owner):
        """``break`` / ``continue``: TVM's ``T.break_loop()`` / ``T.continue_loop()``,
        which leave or restart the innermost loop; it must be a serial loop or a
        ``while`` of the same block."""
        keyword = "break" if tree.data == "break_stmt" else "continue"
        target = self.jump_targets[-1] if self.jump_targets else None
        if target is None:
            where = " of its block (a jump cannot leave a block)" if self.jump_targets else ""
            raise self.error(tree, f"`{keyword}` outside a loop{where}")
        if target not in ("while", ForKind.SERIAL):
            raise self.error(
                tree,
                f"`{keyword}` in a {target.tag} loop: only a serial loop (range, T.serial) "
                "or a while loop can be left early",
            )
        call = ops.call_intrin(f"{keyword}_loop", span=self.span(tree))
        return Evaluate(call, span=self.stmt_span(tree))

    stmt_continue_stmt = stmt_break_stmt

    def jump_target(self, kind):
        """Statements built inside belong to a loop of ``kind`` (None: a block)."""
        return _JumpTarget(self.jump_targets, kind)

    def stmt_import_name(self, tree, owner):
        return None

    stmt_import_from = stmt_import_name

    def stmt_return_stmt(self, tree, owner):
        """``return`` ends the function; ``return value`` is TVM's ``T.ret(value)``, in a
        function that declares its result type (``-> T.int32``)."""
        value_tree = tree.children[0]
        value = self.exprs.eval(value_tree) if value_tree is not None else None
        if value is None:
            return None
        if self.ret_type is None:
            raise self.error(
                value_tree, "a prim_func without a result type (-> T.int32) returns nothing"
            )
        value = self.coerce(value, self.ret_type, value_tree, "the result")
        return Evaluate(
            ops.call_intrin("ret", value, span=self.span(value_tree)), span=self.stmt_span(tree)
        )

    def stmt_assert_stmt(self, tree, owner):
        condition = self.exprs.condition(self.exprs.eval(tree.children[0]), tree.children[0])
        message = self.exprs.eval(tree.children[1]) if tree.children[1] is not None else ""
        kind, message = assert_message(self, message, tree.children[1])
        span = self.stmt_span(tree)
        return Wrapper(lambda body: AssertStmt(condition, message, body, kind, span=span))

    def stmt_expr_stmt(self, tree, owner):
        value = self.exprs.eval(tree.children[0])
        if isinstance(value, S.Directive):
            return self.apply_directive(value, tree, owner)
        if isinstance(value, S.Evaluated):
            return Evaluate(value.value, span=self.span(tree))
        if isinstance(value, BufferStore):  # `A.vstore(indices, value, predicate=...)`
            return value
        if isinstance(value, PrimExpr) and not isinstance(value, StringImm):
            return Evaluate(value, span=self.span(tree))
        if isinstance(value, (str, StringImm)) or value is None:
            return None  # a docstring
        if isinstance(value, S.LaunchSpec) and not isinstance(value.thread, str):
            return self.launch_spec(value, tree)  # over the rest of the body
        if isinstance(value, S.RealizeSpec):  # over the rest of the body
            span = self.stmt_span(tree)
            return Wrapper(lambda body: realize_stmt(value, body, span))
        if isinstance(value, S.AttrSpec):  # `T.attr(...)` alone: over the rest, as TVM
            span = self.stmt_span(tree)
            return Wrapper(
                lambda body: AttrStmt(value.node, value.key, value.value, body, span=span)
            )
        raise self.error(tree, f"this statement has no effect ({describe(value)})")

    def apply_directive(self, directive: S.Directive, tree, owner):
        kind = directive.kind
        if kind == "func_attr":
            if not isinstance(owner, FuncFrame):
                raise self.error(tree, "T.func_attr must be in the function body")
            owner.attrs.update(directive.payload)
            return None
        if not isinstance(owner, BlockFrame):
            raise self.error(tree, f"T.{kind} must be directly inside a block")
        if kind == "where":
            owner.predicate = self.exprs.condition(directive.payload, tree)
        elif kind in ("reads", "writes"):
            if getattr(owner, kind) is not None:
                raise self.error(tree, f"T.{kind} is given twice in block {owner.name!r}")
            setattr(owner, kind, directive.payload)
        else:
            owner.annotations.update(directive.payload)
        return None

    # ----------------------------------------------------- compound statements

    def stmt_if_stmt(self, tree, owner):
        condition_tree, suite, *rest = tree.children
        else_clause = rest[-1]
        elifs = rest[:-1]
        else_case = self.build_suite(else_clause.children[0]) if else_clause is not None else None
        for clause in reversed(elifs):
            cond = self.exprs.condition(self.exprs.eval(clause.children[0]), clause.children[0])
            then = self.build_suite(clause.children[1])
            else_case = IfThenElse(cond, then, else_case, span=self.stmt_span(clause))
        condition = self.exprs.condition(self.exprs.eval(condition_tree), condition_tree)
        then_case = self.build_suite(suite)
        return IfThenElse(condition, then_case, else_case, span=self.stmt_span(tree))

    def stmt_while_stmt(self, tree, owner):
        condition = self.exprs.condition(self.exprs.eval(tree.children[0]), tree.children[0])
        with self.jump_target("while"):
            body = self.build_suite(tree.children[1])
        return While(condition, body, span=self.stmt_span(tree))

    def stmt_for_stmt(self, tree, owner):
        target_tree, iterable_tree, suite = tree.children
        names = []
        for target in self.targets(target_tree):
            if not (isinstance(target, Tree) and target.data == "name"):
                raise self.error(target, "a loop variable must be a name")
            names.append(target)
        spec = self.exprs.eval(iterable_tree)
        if not isinstance(spec, S.LoopSpec):
            raise self.error(
                iterable_tree,
                "a for loop iterates over T.grid, T.serial, "
                "T.parallel, T.vectorized, T.unroll, "
                f"T.thread_binding or range, not {describe(spec)}",
            )
        if len(names) != len(spec.loops):
            raise self.error(
                target_tree,
                f"{len(spec.loops)} loop"
                f"{'s' if len(spec.loops) != 1 else ''} but "
                f"{len(names)} loop variable"
                f"{'s' if len(names) != 1 else ''}",
            )
        with self.scopes.frame():
            loop_vars = []
            for name_tree, desc in zip(names, spec.loops):
                var = Var(str(name_tree.children[0]), desc.extent.dtype, span=self.span(name_tree))
                self.scopes.define(var.name, var)
                self.loop_doms[var] = Range(desc.min, desc.extent)
                loop_vars.append(var)
            with self.jump_target(ForKind(spec.loops[-1].kind)):
                body = self.build_body(statements_of(suite), None)
        span = self.stmt_span(tree)
        for var, desc in zip(reversed(loop_vars), reversed(spec.loops)):
            body = For(
                var,
                desc.min,
                desc.extent,
                desc.kind,
                body,
                desc.thread,
                desc.annotations or {},
                desc.step,
                span=span,
            )
        return body

    def stmt_with_stmt(self, tree, owner):
        context_tree, as_target, suite = tree.children
        if _is_call_of(context_tree, "let") and as_target is None:
            return self.let_scope(context_tree, suite, self.stmt_span(tree))
        value = self.exprs.eval(context_tree)
        if as_target is not None:
            return self.named_scope(value, tree, as_target, suite)
        if isinstance(value, S.BlockSpec):
            return self.build_block(value, tree, suite)
        if isinstance(value, S.InitSpec):
            if not isinstance(owner, BlockFrame):
                raise self.error(context_tree, "T.init() must be directly inside a block")
            if owner.init is not None:
                raise self.error(context_tree, f"block {owner.name!r} has two T.init()")
            owner.init = self.build_suite(suite)
            return None
        if isinstance(value, S.RealizeSpec):
            return realize_stmt(value, self.build_suite(suite), self.stmt_span(tree))
        if isinstance(value, S.LetSpec) and value.var is not None:
            body = self.build_suite(suite)
            return LetStmt(value.var, value.value, body, span=self.stmt_span(tree))
        if isinstance(value, S.AttrSpec):
            body = self.build_suite(suite)
            return AttrStmt(value.node, value.key, value.value, body, span=self.stmt_span(tree))
        if isinstance(value, S.LaunchSpec) and not isinstance(value.thread, str):
            return self.launch_spec(value, context_tree).make(self.build_suite(suite))
        if isinstance(value, S.AssertSpec):
            condition = self.exprs.condition(value.condition, context_tree)
            kind, message = assert_message(self, value.message, context_tree)
            body = self.build_suite(suite)
            return AssertStmt(condition, message, body, kind, span=self.stmt_span(tree))
        raise self.error(
            context_tree,
            f"`with` takes T.block, T.init, T.let, T.attr or T.Assert, not {describe(value)}",
        )

    def named_scope(self, value, tree, target, suite):
        """``with T.allocate(...) as x:`` / ``with T.decl_buffer(...) as B:``: the
        allocation or declaration holds for the indented body only (the printer's form
        for one that is not last in its sequence, as in TVM)."""
        context_tree = tree.children[0]
        if isinstance(value, S.LetSpec):
            if value.var is not None:
                raise self.error(context_tree, "T.LetStmt(value, var=...) takes no `as` name")
            value = value.value
        elif not isinstance(
            value, (S.AllocateSpec, S.AllocateConstSpec, S.DeclBufferSpec, S.LaunchSpec)
        ):
            raise self.error(
                context_tree,
                f"`with ... as name` takes T.allocate or T.decl_buffer, not {describe(value)}",
            )
        if not (isinstance(target, Tree) and target.data == "name"):
            raise self.error(target, "`with ... as` binds a name")
        with self.scopes.frame():
            wrapper = self.assign_one(target, value, context_tree, None)
            body = self.build_body(statements_of(suite), None)
        return attrs.evolve(wrapper.make(body), span=self.stmt_span(tree))

    def let_scope(self, call, suite, stmt_span):
        args, kwargs = calls.split_arguments(self, call.children[1])
        if len(args) != 2 or kwargs:
            raise self.error(call, "T.let takes (name, value)")
        name_tree, value_tree = args
        if not (isinstance(name_tree, Tree) and name_tree.data == "name"):
            raise self.error(name_tree, "T.let binds a new name")
        value = self.exprs.expr(value_tree)
        span = self.span(name_tree)
        var = Var(str(name_tree.children[0]), value.dtype, span=span)
        with self.scopes.frame():
            self.scopes.define(var.name, var)
            body = self.build_body(statements_of(suite), None)
        return LetStmt(var, value, body, span=stmt_span)

    def build_block(self, spec: S.BlockSpec, tree, suite):
        frame = BlockFrame(spec.name, tree)
        self.block_count += 1
        outermost = self.block_depth == 0
        self.block_depth += 1
        try:
            with self.scopes.frame(), self.jump_target(None):
                body = self.build_body(statements_of(suite), frame)
        finally:
            self.block_depth -= 1
        for iter_var in frame.iter_vars:
            self.closed_block_vars[iter_var.var.name] = spec.name
        span = self.stmt_span(tree)
        block = Block(
            frame.iter_vars,
            frame.reads or (),
            frame.writes or (),
            spec.name,
            body,
            frame.init,
            frame.alloc_buffers,
            frame.match_buffers,
            frame.annotations,
            span=span,
        )
        if frame.reads is None or frame.writes is None:
            # as TVM's parser: regions the program does not state are inferred
            from tilelang.analysis import get_block_read_write_region

            reads, writes = get_block_read_write_region(block)
            locate = _Locate(span)
            block = attrs.evolve(
                block,
                reads=frame.reads if frame.reads is not None else locate.all(reads),
                writes=frame.writes if frame.writes is not None else locate.all(writes),
            )
            if outermost:  # dropped again if it turns out to be the function's root
                self.inferred_outer[id(block)] = (frame.reads is None, frame.writes is None)
        predicate = frame.predicate if frame.predicate is not None else const(True)
        return BlockRealize(frame.iter_values, predicate, block, span=span)

    def stmt_funcdef(self, tree, owner):
        raise self.error(tree, "functions cannot be nested in a prim_func")

    stmt_classdef = stmt_decorated = stmt_funcdef


class _Locate(StmtExprMutator):
    """Gives the nodes an inferred region is made of (and lacks a source position
    for) the position of the block it was inferred for; variables keep theirs."""

    def __init__(self, span):
        self.span = span

    def all(self, regions) -> tuple:
        return tuple(self.visit(r) for r in regions)

    def visit(self, node):
        # what inferred regions are made of, rebuilt directly (a block without
        # T.reads/T.writes is common; the generic walk was a tenth of building)
        cls = type(node)
        if cls is BufferRegion:
            region = tuple(self.visit(r) for r in node.region)
            return BufferRegion(node.buffer, region, span=node.span or self.span)
        if cls is Range:
            span = node.span or self.span
            return Range(self.visit(node.min), self.visit(node.extent), span=span)
        if cls is IntImm:
            if node.span is not None:
                return node
            return IntImm(node.dtype, node.value, span=self.span)
        new = super().visit(node)
        if isinstance(new, (Var, Buffer)) or getattr(new, "span", True) is not None:
            return new
        return attrs.evolve(new, span=self.span)


#: builder class -> statement kind -> unbound ``stmt_*`` method
_STMT_METHODS: dict = {}


class _JumpTarget:
    """The context of :meth:`StmtBuilderMixin.jump_target` (a class, not a generator:
    one is entered for every loop and block)."""

    __slots__ = ("targets", "kind")

    def __init__(self, targets: list, kind):
        self.targets, self.kind = targets, kind

    def __enter__(self):
        self.targets.append(self.kind)

    def __exit__(self, *exc) -> None:
        self.targets.pop()


def _located_seq(stmts: list):
    """``seq_stmt(*stmts)`` spanning from the first statement to the last."""
    first, last = (stmts[0].span, stmts[-1].span) if stmts else (None, None)
    span = None
    if first is not None and last is not None:
        end_line = last.end_line if last.end_line is not None else last.line
        end_column = last.end_column if last.end_column is not None else last.column
        span = Span(first.source, first.line, first.column, end_line, end_column)
    return seq_stmt(*stmts, span=span)


def _is_call_of(tree, name: str) -> bool:
    """``tree`` is ``T.<name>(...)`` (checked by shape, before evaluation)."""
    if not (isinstance(tree, Tree) and tree.data == "call"):
        return False
    callee = tree.children[0]
    return (
        isinstance(callee, Tree)
        and callee.data == "getattr"
        and isinstance(callee.children[1], Token)
        and str(callee.children[1]) == name
    )


def assert_message(ctx, message, tree) -> tuple[str, object]:
    """``(error kind, message)`` of an assert: a string (or string expression), or
    TVM's ``("ValueError", ["part", ...])`` whose parts make one message."""
    if isinstance(message, (str, PrimExpr)):
        return "RuntimeError", message
    if (
        isinstance(message, tuple)
        and len(message) == 2
        and isinstance(message[0], str)
        and message[0].isidentifier()
        and isinstance(message[1], (list, tuple))
        and all(isinstance(part, str) for part in message[1])
    ):
        return message[0], "".join(message[1])
    raise ctx.error(tree, 'an assert message is a string or ("ErrorKind", ["message", ...])')

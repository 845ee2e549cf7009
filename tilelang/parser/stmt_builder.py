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
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Cast,
    DeclBuffer,
    Evaluate,
    FloatImm,
    For,
    IfThenElse,
    IntImm,
    IterVar,
    LetStmt,
    MatchBufferRegion,
    PrimExpr,
    Range,
    StringImm,
    Var,
    While,
    const,
    seq_stmt,
)
from tilelang.ir.convert import binary
from tilelang.parser import calls
from tilelang.parser import specs as S
from tilelang.parser import tir_functions as F
from tilelang.parser.expr_builder import describe

_AUG = {"+=": "add", "-=": "sub", "*=": "mul", "/=": "div", "//=": "floordiv", "%=": "floormod"}
_KIND_LETTERS = {"S": IterVar.DataPar, "R": IterVar.CommReduce}


@attrs.define
class FuncFrame:
    """What a function body collects besides statements."""

    params: list
    buffer_map: dict
    root_allocs: list = attrs.Factory(list)
    attrs: dict = attrs.Factory(dict)


@attrs.define
class BlockFrame:
    """What a block body collects besides statements."""

    name: str
    tree: object
    iter_vars: list = attrs.Factory(list)
    iter_values: list = attrs.Factory(list)
    predicate: object = None
    reads: tuple | None = None
    writes: tuple | None = None
    alloc_buffers: list = attrs.Factory(list)
    match_buffers: list = attrs.Factory(list)
    annotations: dict = attrs.Factory(dict)
    init: object = None


class Wrapper:
    """A statement that scopes over the rest of its body; ``make(body)`` builds it."""

    def __init__(self, make):
        self.make = make


def statements_of(suite) -> list:
    """The statement trees of a suite, with ``a; b`` lines split."""
    result = []
    for child in suite.children:
        if isinstance(child, Tree) and child.data == "simple_stmt":
            result.extend(c for c in child.children if c is not None)
        elif child is not None:
            result.append(child)
    return result


class StmtBuilderMixin:
    """Statement building; mixed into the builder that owns scopes and errors."""

    # ------------------------------------------------------------------ bodies

    def build_body(self, trees: list, owner) -> object:
        """One statement for a list of statement trees; ``owner`` is the FuncFrame or
        BlockFrame whose body this is (None inside loops, ifs and other bodies)."""
        segments: list = [[None, []]]
        for tree in trees:
            self.last_tree = tree
            result = self.build_stmt(tree, owner)
            if result is None:
                continue
            if isinstance(result, Wrapper):
                segments.append([result, []])
            else:
                segments[-1][1].append(result)
        body = seq_stmt(*segments[-1][1])
        for index in range(len(segments) - 1, 0, -1):
            body = segments[index][0].make(body)
            body = seq_stmt(*segments[index - 1][1], body)
        return body

    def build_suite(self, suite, owner=None):
        with self.scopes.frame():
            return self.build_body(statements_of(suite), owner)

    def build_stmt(self, tree, owner):
        method = getattr(self, "stmt_" + tree.data, None)
        if method is None:
            raise self.error(tree, f"{tree.data.replace('_', ' ')} is not supported in TIR")
        return method(tree, owner)

    # -------------------------------------------------------- simple statements

    def stmt_pass_stmt(self, tree, owner):
        return None

    def stmt_import_name(self, tree, owner):
        return None

    stmt_import_from = stmt_import_name

    def stmt_return_stmt(self, tree, owner):
        if tree.children[0] is not None and self.exprs.eval(tree.children[0]) is not None:
            raise self.error(tree, "a prim_func returns nothing: write results into buffers")
        return None

    def stmt_assert_stmt(self, tree, owner):
        condition = self.exprs.condition(self.exprs.eval(tree.children[0]), tree.children[0])
        message = self.exprs.eval(tree.children[1]) if tree.children[1] is not None else ""
        if not isinstance(message, (str, PrimExpr)):
            raise self.error(tree.children[1], "an assert message is a string")
        span = self.stmt_span(tree)
        return Wrapper(lambda body: AssertStmt(condition, message, body, span=span))

    def stmt_expr_stmt(self, tree, owner):
        value = self.exprs.eval(tree.children[0])
        if isinstance(value, S.Directive):
            return self.apply_directive(value, tree, owner)
        if isinstance(value, S.Evaluated):
            return Evaluate(value.value, span=self.span(tree))
        if isinstance(value, PrimExpr) and not isinstance(value, StringImm):
            return Evaluate(value, span=self.span(tree))
        if isinstance(value, (str, StringImm)) or value is None:
            return None  # a docstring
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

    # ------------------------------------------------------------- assignments

    def stmt_assign(self, tree, owner):
        target_tree, value_tree = tree.children
        value = self.exprs.eval(value_tree)
        targets = self.targets(target_tree)
        if len(targets) == 1 and not _is_tuple_target(target_tree):
            return self.assign_one(targets[0], value, tree, owner, value_tree)
        if isinstance(value, S.RemapSpec):
            value = self.expand_remap(value, value_tree)
        if not isinstance(value, (tuple, list)) or len(value) != len(targets):
            count = len(value) if isinstance(value, (tuple, list)) else 1
            raise self.error(
                tree,
                f"cannot assign {count} value{'s' if count != 1 else ''} to {len(targets)} names",
            )
        wrappers = []
        for target, item in zip(targets, value):
            result = self.assign_one(target, item, tree, owner)
            if result is not None:
                if not isinstance(result, Wrapper):
                    raise self.error(target, "only names can be assigned from a tuple")
                wrappers.append(result)
        if not wrappers:
            return None

        def make(body):
            for wrapper in reversed(wrappers):
                body = wrapper.make(body)
            return body

        return Wrapper(make)

    def targets(self, tree) -> list:
        if isinstance(tree, Tree) and tree.data in ("testlist", "exprlist", "tuple", "list"):
            result = []
            for child in tree.children:
                result.extend(self.targets(child) if _is_tuple_target(child) else [child])
            return result
        return [tree]

    def expand_remap(self, spec: S.RemapSpec, tree) -> list:
        axes = []
        for letter, var in zip(spec.kinds, spec.bindings):
            dom = self.loop_doms.get(var)
            if dom is None:
                raise self.error(tree, f"T.axis.remap: {var.name} is not a loop variable")
            axes.append(S.AxisSpec(_KIND_LETTERS[letter], dom, var, var.dtype))
        return axes

    def assign_one(self, target, value, tree, owner, value_tree=None):
        if isinstance(target, Tree) and target.data == "getitem":
            return self.store(target, value, tree)
        if not (isinstance(target, Tree) and target.data == "name"):
            raise self.error(target, "cannot assign to this expression")
        name = str(target.children[0])
        span = self.span(target)
        if isinstance(value, S.AxisSpec):
            if not isinstance(owner, BlockFrame):
                raise self.error(tree, "T.axis.* must be directly inside a block")
            var = Var(name, value.dtype, span=span)
            owner.iter_vars.append(IterVar(value.dom, var, value.iter_type, span=span))
            owner.iter_values.append(value.binding)
            self.scopes.define(name, var)
            return None
        if isinstance(value, S.RemapSpec):
            where = tree if value_tree is None else value_tree
            (axis,) = self.expand_remap(value, where) if len(value.kinds) == 1 else (None,)
            if axis is None:
                raise self.error(
                    tree, f"T.axis.remap with {len(value.kinds)} kinds needs as many names"
                )
            return self.assign_one(target, axis, tree, owner)
        if isinstance(value, S.SymbolicVarSpec):
            self.scopes.define(name, Var(name, value.dtype, span=span))
            return None
        if isinstance(value, S.BufferSpec):
            self.scopes.define(name, value.make(name, span))
            return None
        if isinstance(value, S.AllocBufferSpec):
            return self.alloc_buffer(name, value, tree, owner)
        if isinstance(value, S.MatchBufferSpec):
            return self.match_buffer(name, value, tree, owner)
        if isinstance(value, S.DeclBufferSpec):
            return self.decl_buffer(name, value, tree)
        if isinstance(value, S.AllocateSpec):
            var = Var(name, "handle", span=span)
            self.scopes.define(name, var)
            return Wrapper(
                lambda body: Allocate(
                    var,
                    value.dtype,
                    value.extents,
                    value.condition,
                    body,
                    scope=value.scope,
                    span=span,
                )
            )
        if isinstance(value, PrimExpr) and not isinstance(value, StringImm):
            var = Var(name, value.dtype, span=span)
            self.scopes.define(name, var)
            return Wrapper(lambda body: LetStmt(var, value, body, span=span))
        if isinstance(value, (bool, int, float, str, tuple, Buffer)) or value is None:
            self.scopes.define(name, value)
            return None
        raise self.error(tree, f"cannot assign {describe(value)} to a name")

    def alloc_buffer(self, name, spec: S.AllocBufferSpec, tree, owner):
        buffer = spec.buffer.make(name, self.span(tree))
        if isinstance(owner, FuncFrame):
            owner.root_allocs.append(buffer)
        elif isinstance(owner, BlockFrame):
            owner.alloc_buffers.append(buffer)
        else:
            raise self.error(
                tree, "T.alloc_buffer must be in the function body or directly inside a block"
            )
        self.scopes.define(name, buffer)
        return None

    def match_buffer(self, name, spec: S.MatchBufferSpec, tree, owner):
        buffer = spec.buffer.make(name, self.span(tree))
        source = spec.source
        if isinstance(source, BufferRegion):
            if not isinstance(owner, BlockFrame):
                raise self.error(tree, "T.match_buffer of a region must be inside a block")
            owner.match_buffers.append(MatchBufferRegion(buffer, source, span=self.span(tree)))
        else:
            if not isinstance(owner, FuncFrame) or not any(source is p for p in owner.params):
                raise self.error(
                    tree,
                    "T.match_buffer of a handle must be in the function "
                    "body and match a handle parameter",
                )
            if source in owner.buffer_map:
                raise self.error(tree, f"parameter {source.name} is matched twice")
            owner.buffer_map[source] = buffer
        self.scopes.define(name, buffer)
        return None

    def decl_buffer(self, name, spec: S.DeclBufferSpec, tree):
        span = self.span(tree)
        buffer = spec.buffer.make(name, span)
        self.scopes.define(name, buffer)
        if spec.buffer.data is not None:
            return Wrapper(lambda body: DeclBuffer(buffer, body, span=span))
        return Wrapper(
            lambda body: Allocate(
                buffer.data,
                buffer.dtype,
                buffer.shape,
                const(True),
                DeclBuffer(buffer, body, span=span),
                scope=buffer.scope,
                span=span,
            )
        )

    def stmt_annassign(self, tree, owner):
        target, annotation_tree, value_tree = tree.children
        if not (isinstance(target, Tree) and target.data == "name"):
            raise self.error(target, "only a name can be declared with a type")
        annotation = self.exprs.eval(annotation_tree)
        if not isinstance(annotation, F.DTypeFunction):
            raise self.error(
                annotation_tree, f"expected a type such as T.int32, got {describe(annotation)}"
            )
        if value_tree is None:
            raise self.error(tree, f"{target.children[0]} needs a value (`x: T.int32 = ...`)")
        value = self.coerce(
            self.exprs.eval(value_tree),
            annotation.dtype,
            value_tree,
            f"variable {target.children[0]}",
        )
        span = self.span(target)
        var = Var(str(target.children[0]), annotation.dtype, span=span)
        self.scopes.define(var.name, var)
        return Wrapper(lambda body: LetStmt(var, value, body, span=span))

    def stmt_augassign(self, tree, owner):
        target, op, value_tree = tree.children
        if not (isinstance(target, Tree) and target.data == "getitem"):
            raise self.error(target, f"only buffer elements can be updated with {op}")
        load = self.exprs.eval(target)
        if not isinstance(load, BufferLoad):
            raise self.error(target, f"only buffer elements can be updated with {op}")
        value = self.exprs.eval(value_tree)
        new = self.guard(tree, binary, _AUG[str(op)], load, value, self.span(tree))
        return self.store(target, new, tree, load=load)

    def store(self, target, value, tree, load=None):
        base = self.exprs.eval(target.children[0])
        if not isinstance(base, Buffer):
            raise self.error(target.children[0], f"cannot store into {describe(base)}")
        if load is not None:
            indices = load.indices
        else:
            indices = self.exprs.indices(base, target.children[1], target)
        value = self.coerce(value, base.dtype, tree, f"buffer {base.name}")
        if any(i.dtype.lanes > 1 for i in indices) and value.dtype.lanes == 1:
            lanes = max(i.dtype.lanes for i in indices)
            value = self.guard(tree, lambda: _broadcast(value, lanes))
        return BufferStore(base, value, indices, span=self.span(tree))

    def coerce(self, value, dtype, tree, what: str) -> PrimExpr:
        """``value`` as a ``dtype`` value: literals take the type; integers widen or
        narrow; integer constants become floats; anything else is a type error."""
        if isinstance(value, bool):
            value = const(value)
        if isinstance(value, (int, float)):
            if isinstance(value, float) and not dtype.element_of().is_float():
                raise self.error(
                    tree,
                    f"cannot store the float {value!r} into {what} of type {dtype}",
                    cls=self.type_error_cls,
                )
            return self.guard(tree, const, value, dtype.element_of())
        if not isinstance(value, PrimExpr) or isinstance(value, StringImm):
            raise self.error(tree, f"cannot store {describe(value)} into {what}")
        have, want = value.dtype.element_of(), dtype.element_of()
        if have == want:
            return value
        if have.is_integer() and want.is_integer():
            return Cast(want.with_lanes(value.dtype.lanes), value)
        if isinstance(value, IntImm) and want.is_float():
            return FloatImm(want, float(value.value))
        if isinstance(value, IntImm) and have.is_bool() and want.is_integer():
            return IntImm(want, value.value)
        raise self.error(
            tree,
            f"cannot store a {value.dtype} value into {what} of type "
            f'{dtype}; convert it with T.Cast("{dtype}", ...)',
            cls=self.type_error_cls,
        )

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
        return While(condition, self.build_suite(tree.children[1]), span=self.stmt_span(tree))

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
        if as_target is not None:
            raise self.error(as_target, "`with ... as name` is not used in TIR")
        if _is_call_of(context_tree, "let"):
            return self.let_scope(context_tree, suite)
        value = self.exprs.eval(context_tree)
        if isinstance(value, S.BlockSpec):
            return self.build_block(value, tree, suite)
        if isinstance(value, S.InitSpec):
            if not isinstance(owner, BlockFrame):
                raise self.error(context_tree, "T.init() must be directly inside a block")
            if owner.init is not None:
                raise self.error(context_tree, f"block {owner.name!r} has two T.init()")
            owner.init = self.build_suite(suite)
            return None
        if isinstance(value, S.AttrSpec):
            body = self.build_suite(suite)
            return AttrStmt(value.node, value.key, value.value, body, span=self.stmt_span(tree))
        raise self.error(
            context_tree, f"`with` takes T.block, T.init, T.let or T.attr, not {describe(value)}"
        )

    def let_scope(self, call, suite):
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
        return LetStmt(var, value, body, span=self.span(call))

    def build_block(self, spec: S.BlockSpec, tree, suite):
        frame = BlockFrame(spec.name, tree)
        self.block_count += 1
        with self.scopes.frame():
            body = self.build_body(statements_of(suite), frame)
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
            from tilelang.ir.analysis import get_block_read_write_region

            reads, writes = get_block_read_write_region(block)
            block = attrs.evolve(
                block,
                reads=frame.reads if frame.reads is not None else tuple(reads),
                writes=frame.writes if frame.writes is not None else tuple(writes),
            )
        predicate = frame.predicate if frame.predicate is not None else const(True)
        return BlockRealize(frame.iter_values, predicate, block, span=span)

    def stmt_funcdef(self, tree, owner):
        raise self.error(tree, "functions cannot be nested in a prim_func")

    stmt_classdef = stmt_decorated = stmt_funcdef


def _broadcast(value, lanes):
    from tilelang.ir import Broadcast

    return Broadcast(value, lanes)


def _is_tuple_target(tree) -> bool:
    return isinstance(tree, Tree) and (
        tree.data in ("tuple", "list", "exprlist")
        or (tree.data == "testlist" and len(tree.children) > 1)
    )


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

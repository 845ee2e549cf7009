"""Assignments: stores (``A[i] = v``, ``A[i] += v``), lets (``x: T.int32 = e``), and
the names that ``T.*`` calls define (iterators, buffers, symbolic sizes, allocations).
"""

from __future__ import annotations

import math
import warnings

from lark import Tree

from tilelang.errors import TIRCastWarning
from tilelang.ir import (
    Allocate,
    AllocateConst,
    AttrStmt,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Cast,
    DeclBuffer,
    FloatImm,
    IntImm,
    IterVar,
    LetStmt,
    MatchBufferRegion,
    PrimExpr,
    Range,
    SizeVar,
    StringImm,
    Var,
    const,
)
from tilelang.ir.convert import binary
from tilelang.ir.dtype import raw_lanes
from tilelang.ir.lanes import lanes_expr
from tilelang.parser import specs as S
from tilelang.parser import tir_functions as F
from tilelang.parser.expr_builder import SpecialName, describe
from tilelang.parser.frames import BlockFrame, FuncFrame, Wrapper
from tilelang.parser.stmt_util import is_tuple_target

_AUG = {"+=": "add", "-=": "sub", "*=": "mul", "/=": "div", "//=": "floordiv", "%=": "floormod"}
_KIND_LETTERS = {"S": IterVar.DataPar, "R": IterVar.CommReduce}


class AssignBuilderMixin:
    """Assignment statements; mixed into the statement builder."""

    # ------------------------------------------------------------- assignments

    def stmt_assign(self, tree, owner):
        target_tree, value_tree = tree.children
        value = self.exprs.eval(value_tree)
        targets = self.targets(target_tree)
        if self.is_meta_var(value_tree):
            return self.bind_meta(targets, value, tree)
        if len(targets) == 1 and not is_tuple_target(target_tree):
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

    def is_meta_var(self, value_tree) -> bool:
        """``x = T.meta_var(v)``: TVM names the value itself (no variable, no let)."""
        while (
            isinstance(value_tree, Tree)
            and value_tree.data == "testlist"
            and len(value_tree.children) == 1
        ):
            value_tree = value_tree.children[0]
        if not (isinstance(value_tree, Tree) and value_tree.data == "call"):
            return False
        callee_tree = value_tree.children[0]
        if type(callee_tree) is Tree and callee_tree.data == "getattr":
            # ``X.attr`` is T.meta_var only if attr is meta_var (it was evaluated, and
            # any error reported, with the value): no second evaluation
            if callee_tree.children[1] != "meta_var":
                return False
        callee = self.exprs.eval(callee_tree)
        return isinstance(callee, F.TIRFunction) and callee.name == "meta_var"

    def bind_meta(self, targets, value, tree):
        values = [value] if len(targets) == 1 else value
        if not isinstance(values, (tuple, list)) or len(values) != len(targets):
            count = len(targets)
            raise self.error(tree, f"T.meta_var: cannot assign {describe(value)} to {count} names")
        for target, item in zip(targets, values):
            if not (isinstance(target, Tree) and target.data == "name"):
                raise self.error(target, "T.meta_var binds names")
            self.scopes.define(str(target.children[0]), item)
        return None

    def targets(self, tree) -> list:
        if isinstance(tree, Tree) and tree.data in ("testlist", "exprlist", "tuple", "list"):
            result = []
            for child in tree.children:
                result.extend(self.targets(child) if is_tuple_target(child) else [child])
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
            kind = SizeVar if value.is_size_var else Var
            var = kind(name, value.dtype, type_annotation=value.pointer, span=span)
            self.scopes.define(name, var)
            return None
        if isinstance(value, S.BufferSpec):
            self.scopes.define(name, value.make(name, span))
            return None
        if isinstance(value, S.EnvThreadSpec):
            var = Var(name, "int32", span=span)
            self.env_threads[var] = value.tag
            self.scopes.define(name, var)
            return None
        if isinstance(value, S.LaunchSpec) and isinstance(value.thread, str):
            var = Var(name, "int32", span=span)
            self.scopes.define(name, var)
            return self.launch(var, value.thread, value.extent, span)
        if isinstance(value, S.AllocBufferSpec):
            return self.alloc_buffer(name, value, tree, owner)
        if isinstance(value, S.AllocateConstSpec):
            var = Var(name, "handle", span=span)
            self.scopes.define(name, var)
            return Wrapper(
                lambda body: AllocateConst(
                    var,
                    value.dtype,
                    value.extents,
                    value.data,
                    body,
                    value.annotations,
                    span=span,
                )
            )
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
                    value.annotations,
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

    def launch(self, var, tag: str, extent, span) -> Wrapper:
        """TVM's thread launch: ``AttrStmt(IterVar(var, tag), "thread_extent", extent)``
        over the rest of the body."""
        iv = IterVar(Range(const(0, var.dtype), extent), var, IterVar.ThreadIndex, tag, span=span)
        return Wrapper(lambda body: AttrStmt(iv, "thread_extent", extent, body, span=span))

    def launch_spec(self, spec: S.LaunchSpec, tree) -> Wrapper:
        """``T.launch_thread(v, extent)`` of a ``T.env_thread`` variable ``v``."""
        tag = self.env_threads.get(spec.thread)
        if tag is None:
            raise self.error(tree, f"{spec.thread.name} is not a T.env_thread variable")
        return self.launch(spec.thread, tag, spec.extent, self.stmt_span(tree))

    def alloc_buffer(self, name, spec: S.AllocBufferSpec, tree, owner):
        """Directly in the function body or a block, the block (or the root block)
        allocates the buffer; anywhere else ``T.alloc_buffer`` is TVM 0.27's statement
        (AllocBuffer): storage for the rest of the scope, as an unbacked T.decl_buffer."""
        if not isinstance(owner, (FuncFrame, BlockFrame)) or spec.annotations:
            # annotations belong to an allocation statement (TVM's AllocBuffer), which
            # holds for the rest of the scope wherever it is written
            if spec.buffer.data is not None:
                raise self.error(tree, "T.alloc_buffer allocates its own data; use T.decl_buffer")
            return self.decl_buffer(name, S.DeclBufferSpec(spec.buffer), tree, spec.annotations)
        buffer = spec.buffer.make(name, self.span(tree), allocation=True)
        if isinstance(owner, FuncFrame):
            owner.root_allocs.append(buffer)
        else:
            owner.alloc_buffers.append(buffer)
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

    def decl_buffer(self, name, spec: S.DeclBufferSpec, tree, annotations=None):
        span = self.span(tree)
        buffer = spec.buffer.make(name, span, allocation=spec.buffer.data is None)
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
                annotations or {},
                scope=buffer.scope,
                span=span,
            )
        )

    def stmt_annassign(self, tree, owner):
        target, annotation_tree, value_tree = tree.children
        if not (isinstance(target, Tree) and target.data == "name"):
            raise self.error(target, "only a name can be declared with a type")
        annotation = self.let_annotation(annotation_tree)
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

    def let_annotation(self, tree):
        """The type of ``x: ty = v``; TVM 0.27 prints lets as ``x: T.let[ty] = v``."""
        if isinstance(tree, Tree) and tree.data == "getitem":
            base = self.exprs.eval(tree.children[0])
            if isinstance(base, SpecialName) and base.name == "let":
                subscripts = tree.children[1].children
                if len(subscripts) != 1:
                    raise self.error(tree, "T.let[...] takes one type, as in T.let[T.int32]")
                tree = subscripts[0]
        annotation = self.exprs.eval(tree)
        if isinstance(annotation, S.SymbolicVarSpec) and annotation.dtype.is_handle():
            return F.DTypeFunction(annotation.dtype)  # x: T.handle("int32") = ...
        return annotation

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
        vectors = [i.dtype for i in indices if i.dtype.is_vector()]
        if vectors and not value.dtype.is_vector():
            lanes = lanes_expr(max(vectors, key=lambda d: abs(raw_lanes(d))))
            value = self.guard(tree, lambda: _broadcast(value, lanes))
        return BufferStore(base, value, indices, span=self.span(tree))

    def coerce(self, value, dtype, tree, what: str) -> PrimExpr:
        """``value`` as a ``dtype`` value, as TVM's IRBuilder converts a stored value:
        literals take the type, any other number is cast (integers widen or narrow,
        floats narrow, integers become floats). A float made an integer may lose its
        fraction: that is cast too, as TVM does, with a located warning. Anything that
        is not a number (a handle, a string) is a type error."""
        if isinstance(value, bool):
            value = const(value)
        if isinstance(value, (int, float)):
            if isinstance(value, float) and not dtype.element_of().is_float():
                if not math.isfinite(value):
                    raise self.error(
                        tree,
                        f"cannot store the float {value!r} into {what} of type {dtype}",
                        cls=self.type_error_cls,
                    )
                self._warn_lossy(tree, f"the float {value!r}", what, dtype)
                value = int(value)  # TVM's constant cast: toward zero
            return self.guard(tree, const, value, dtype.element_of())
        if not isinstance(value, PrimExpr) or isinstance(value, StringImm):
            raise self.error(tree, f"cannot store {describe(value)} into {what}")
        have, want = value.dtype.element_of(), dtype.element_of()
        if have == want:
            return value
        if isinstance(value, IntImm) and want.is_float():
            return FloatImm(want, float(value.value))
        if isinstance(value, IntImm) and have.is_bool() and want.is_integer():
            return IntImm(want, value.value)
        numbers = (have.is_integer() or have.is_bool() or have.is_float()) and (
            want.is_integer() or want.is_bool() or want.is_float()
        )
        if not numbers:
            raise self.error(
                tree,
                f"cannot store a {value.dtype} value into {what} of type {dtype}",
                cls=self.type_error_cls,
            )
        if have.is_float() and not want.is_float():
            self._warn_lossy(tree, f"a {value.dtype} value", what, dtype)
        return self.guard(tree, Cast, want.with_lanes_of(value.dtype), value)

    def _warn_lossy(self, tree, value: str, what: str, dtype) -> None:
        """TVM's "Casting in BufferStore may lose precision", located."""
        message = f"{value} stored into {what} of type {dtype} is cast and may lose precision"
        warnings.warn(TIRCastWarning(self.error(tree, message).render("warning")), stacklevel=2)


def _broadcast(value, lanes):
    from tilelang.ir import Broadcast

    return Broadcast(value, lanes)

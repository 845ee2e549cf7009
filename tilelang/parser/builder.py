"""Parse tree -> IRModule: the file level (imports, decorators, modules) and functions.

A file holds one ``@T.prim_func`` function or one ``@I.ir_module`` class of them. Each
function is built by a fresh :class:`FunctionBuilder` (scopes, frames, errors); its
statements and expressions are built by the mixin and the expression builder.

The root block follows TVM (``ScriptComplete``): when a function body contains a block
or a function-level ``T.alloc_buffer``, the body becomes
``BlockRealize((), True, Block(name_hint="root", alloc_buffers=..., body=...))``,
unless the body already is such a root block written out.
"""

from __future__ import annotations

import difflib
import re

import attrs
from lark import Tree

from tilelang.ir import (
    Block,
    BlockRealize,
    DataTypeError,
    IRModule,
    PrimFunc,
    Span,
    TIRTypeError,
    Var,
    const,
)
from tilelang.parser import calls
from tilelang.parser import specs as S
from tilelang.parser import tir_functions as F
from tilelang.parser.diagnostics import TIRLocatedTypeError, location_of
from tilelang.parser.expr_builder import ExprBuilder, Namespace, describe
from tilelang.parser.positions import bounds, bounds_between
from tilelang.parser.scope import MISSING, ScopeStack
from tilelang.parser.stmt_builder import FuncFrame, StmtBuilderMixin, statements_of

#: script modules by their last name (TVM 0.27 calls the TIR one ``tirx``)
_MODULE_KINDS = {"tir": "T", "tirx": "T", "ir": "I", "relax": "R"}


class Aliases:
    """What the short names of a file stand for (``T`` for tir, ``I`` for ir...)."""

    def __init__(self):
        self.names = {"T": "T", "I": "I", "tvm": "tvm", "tir": "T", "tirx": "T", "R": "R"}

    def record_import(self, tree) -> None:
        if tree.data == "import_from":
            for item in tree.children[1].children if len(tree.children) > 1 else ():
                if item is None or not isinstance(item, Tree):
                    continue
                name, alias = item.children
                kind = _MODULE_KINDS.get(str(name))
                if kind:
                    self.names[str(alias or name)] = kind
        else:
            for item in tree.children:
                dotted, alias = item.children
                parts = [str(p) for p in dotted.children]
                if alias is not None and parts[-1] in _MODULE_KINDS:
                    self.names[str(alias)] = _MODULE_KINDS[parts[-1]]
                elif alias is not None and parts[0] in ("tvm", "tilelang"):
                    self.names[str(alias)] = "tvm"


class FunctionBuilder(StmtBuilderMixin):
    """Builds one prim_func; owns its scopes, frames and error locations."""

    type_error_cls = TIRLocatedTypeError

    def __init__(self, source, aliases: Aliases, constants: dict | None = None):
        self.source, self.aliases = source, aliases
        self.constants = constants or {}
        self.scopes = ScopeStack()
        self.exprs = ExprBuilder(self)
        self.loop_doms: dict = {}
        self.closed_block_vars: dict[str, str] = {}
        self.block_count = 0
        self.block_depth = 0  # blocks being built around the current statement
        self.inferred_outer = {}  # id(outermost block) -> which regions were inferred
        self.last_tree = self.function_tree = None
        self._lines = None
        self.ret_type = None  # the result dtype of the function being built
        self.env_threads: dict = {}  # T.env_thread variables -> their thread tags
        self.module = None  # the ModuleRef of the @I.ir_module class being built
        # what `break`/`continue` would leave: the kind of each enclosing loop, None
        # for a block (a jump never leaves a block)
        self.jump_targets: list = []

    # ------------------------------------------------------------- utilities

    def span(self, tree, last=None) -> Span | None:
        """The span of ``tree`` (through ``last`` when given)."""
        found = bounds(tree) if last is None else bounds_between(tree, last)
        if found is None:
            return None
        line, column, end_line, end_column = found
        source = self.source
        lines, columns = source.line_offset, source.column_offset
        if not (lines or columns):  # a whole file: positions as they are
            return Span(source.path, line, column, end_line, end_column)
        return Span(
            source.path, line + lines, column + columns, end_line + lines, end_column + columns
        )

    def stmt_span(self, tree) -> Span | None:
        """The span of a statement that starts with a keyword (``for``, ``if``,
        ``with``...): keywords are not kept in the tree, and such a statement starts
        where its first line's indentation ends."""
        found = bounds(tree)
        if found is None:
            return None
        line, column, end_line, end_column = found
        text_lines = self._lines
        if text_lines is None:
            text_lines = self._lines = self.source.text.splitlines()
        source = self.source
        if 1 <= line <= len(text_lines):
            text = text_lines[line - 1]
            column = len(text) - len(text.lstrip()) + 1
        lines, columns = source.line_offset, source.column_offset
        return Span(
            source.path, line + lines, column + columns, end_line + lines, end_column + columns
        )

    def error(self, where, message: str, cls=None):
        """A located error to raise."""
        from tilelang.errors import TIRSyntaxError

        for fallback in (self.last_tree, self.function_tree):
            if location_of(where)[0] is None:
                # a node with no token of its own (``True``, ``[]``, ``return``: Lark
                # drops anonymous tokens): the statement being built, or its function
                where = fallback
        return self.source.error_at(where, message, cls or TIRSyntaxError)

    def guard(self, where, fn, *args):
        """``fn(*args)``, with IR type errors turned into located ones."""
        try:
            return fn(*args)
        except (TIRTypeError, DataTypeError) as exc:
            raise self.error(where, str(exc), cls=TIRLocatedTypeError) from None

    def call_value(self, callee, tree, arguments):
        return calls.call_value(self, callee, tree, arguments)

    def call_function(self, entry, tree, arguments=None, values=None):
        return calls.call_function(self, entry, tree, arguments, values)

    def lookup(self, token):
        name = str(token)
        value = self.scopes.visible.get(name, MISSING)  # ScopeStack.lookup, inlined (hot)
        if value is not MISSING:
            return value
        if name in self.constants:
            return self.constants[name]
        if name in calls.BUILTINS:
            return calls.BUILTINS[name]
        if self.module is not None and name == self.module.name:
            return self.module
        kind = self.aliases.names.get(name)
        if kind is not None:
            namespace = _NAMESPACES.get(kind)
            if namespace is None:  # one per kind: T, I, tvm... (nothing changes them)
                namespace = _NAMESPACES[kind] = Namespace(kind)
            return namespace
        if name in self.closed_block_vars:
            raise self.error(
                token,
                f"{name} is an iterator of block "
                f"{self.closed_block_vars[name]!r} and cannot be used "
                "outside it",
            )
        later = _later_definition(self.source.text, name, token.line)
        if later is not None:
            raise self.error(
                token,
                f"{name} is used before it is defined (line {later + self.source.line_offset})",
            )
        guess = difflib.get_close_matches(name, sorted(self.scopes.names()), n=1, cutoff=0.7)
        hint = f"; did you mean {guess[0]}?" if guess else ""
        raise self.error(token, f"undefined name {name}{hint}")

    # -------------------------------------------------------------- function

    def build_function(self, tree, private: bool = False) -> tuple[str, PrimFunc]:
        """The name and PrimFunc of a ``def``; a public function (not
        ``@T.prim_func(private=True)``) gets its name as ``global_symbol``, as in TVM."""
        name_token, parameters, returns, suite = tree.children
        self.function_tree = tree
        frame = FuncFrame([], {})
        self.ret_type = self.result_type(returns)
        with self.scopes.frame():
            for param in parameters.children if parameters is not None else ():
                if param is not None:
                    self.last_tree = param  # where an error without a token points
                    self.build_param(param, frame)
            body = self.build_body(statements_of(suite), frame)
        body = self.root_block(body, frame, self.span(tree))
        attrs = dict(frame.attrs)
        if not private:
            attrs.setdefault("global_symbol", str(name_token))
        # buffer_map in parameter order, whether a buffer came from an annotation or
        # from a T.match_buffer in the body (structural equality compares in order)
        buffer_map = {p: frame.buffer_map[p] for p in frame.params if p in frame.buffer_map}
        buffer_map.update(frame.buffer_map)
        ret_type = None if self.ret_type is None else str(self.ret_type)
        func = PrimFunc(frame.params, body, ret_type, buffer_map, attrs, span=self.span(tree))
        return str(name_token), func

    def release(self) -> None:
        """Drop the expression builder, whose back-reference makes a cycle: without
        it the builder and the parse tree it holds are freed by reference counting
        when the function is built, not by a cycle collection of the whole heap
        (measured: a second of the 10 MB parse)."""
        self.exprs = None

    def result_type(self, tree):
        """The dtype of ``-> T.int32`` (None for no annotation or ``-> None``)."""
        if tree is None:
            return None
        value = self.exprs.eval(tree)
        if value is None:
            return None
        if not isinstance(value, F.DTypeFunction):
            raise self.error(tree, f"a prim_func result type is a dtype, not {describe(value)}")
        return value.dtype

    def build_param(self, param, frame: FuncFrame) -> None:
        name_token, annotation_tree, default = param.children
        name = str(name_token)
        if annotation_tree is None:
            raise self.error(
                param,
                f"parameter {name} needs a type: T.handle, "
                'T.Buffer((...), "dtype") or a dtype such as T.int32',
            )
        if default is not None:
            raise self.error(default, "prim_func parameters take no default values")
        if any(p.name == name for p in frame.params):
            raise self.error(name_token, f"duplicate parameter {name}")
        annotation = self.exprs.eval(annotation_tree)
        span = self.span(param)
        if isinstance(annotation, S.BufferSpec):
            buffer = annotation.make(name, span)
            handle = Var(name, "handle", span=span)  # named as the user wrote it, as TVM does
            frame.params.append(handle)
            frame.buffer_map[handle] = buffer
            self.scopes.define(name, buffer)
        elif isinstance(annotation, F.DTypeFunction) or (
            isinstance(annotation, S.SymbolicVarSpec) and annotation.dtype.is_handle()
        ):  # T.handle("float32"): a typed pointer
            pointer = getattr(annotation, "pointer", None)
            var = Var(name, annotation.dtype, type_annotation=pointer, span=span)
            frame.params.append(var)
            self.scopes.define(name, var)
        else:
            raise self.error(
                annotation_tree,
                f"a parameter type is T.handle, T.Buffer(...) "
                f"or a dtype, not {describe(annotation)}",
            )

    def root_block(self, body, frame: FuncFrame, span):
        already_root = (
            isinstance(body, BlockRealize) and not body.block.iter_vars and not frame.root_allocs
        )
        if already_root:
            return self._without_inferred_regions(body)
        if not (self.block_count or frame.root_allocs):
            return body
        # the implicit root block is located at the function it stands for
        block = Block((), (), (), "root", body, None, tuple(frame.root_allocs), span=span)
        return BlockRealize((), const(True), block, span=span)

    def _without_inferred_regions(self, root):
        """A block written as the function's root keeps only the regions it states:
        TVM's parser infers none for the root (ScriptComplete)."""
        reads, writes = self.inferred_outer.get(id(root.block), (False, False))
        if not (reads or writes):
            return root
        block = attrs.evolve(
            root.block,
            reads=() if reads else root.block.reads,
            writes=() if writes else root.block.writes,
        )
        return attrs.evolve(root, block=block)


_NAMESPACES: dict = {}


def _later_definition(text: str, name: str, line: int) -> int | None:
    """The line of a definition of ``name`` after ``line`` (for "used before defined")."""
    pattern = re.compile(rf"^[ \t]*{re.escape(name)}\s*(:[^=\n]*)?=[^=]", re.MULTILINE)
    for match in pattern.finditer(text):
        found = text.count("\n", 0, match.start()) + 1
        if found > line:
            return found
    return None


# ------------------------------------------------------------------ file level


_PRIM_FUNC = "prim_func"
_MODULE = "ir_module"
_RELAX_FUNCTION = "relax_function"  # built by tilelang.relax.parser


def decorator_kind(builder_source, aliases: Aliases, decorator) -> str:
    """``"prim_func"``, ``"ir_module"``, or a located error for anything else."""
    dotted = decorator.children[0]
    parts = [str(p) for p in dotted.children]
    head = aliases.names.get(parts[0], parts[0])
    full = ".".join([head, *parts[1:]])
    if parts[-1] == "prim_func" and head in ("T", "tvm"):
        return _PRIM_FUNC
    if parts[-1] == "ir_module" and head in ("I", "tvm"):
        return _MODULE
    if head == "R" and parts[-1] == "function":
        return _RELAX_FUNCTION
    if head == "R":
        raise builder_source.error_at(
            decorator,
            f"Relax functions (@{'.'.join(parts)}) are "
            "not supported yet; tilelang reads TIR "
            "(@T.prim_func)",
        )
    raise builder_source.error_at(
        decorator, f"unknown decorator @{full}; expected @T.prim_func or @I.ir_module"
    )


def build_file(tree, source, constants=None, state=None, aliases=None) -> IRModule:
    """The IRModule of a whole parse tree; ``state["builder"]`` is the function
    builder at work (so a RecursionError can be located)."""
    state = {} if state is None else state
    known = aliases
    aliases = Aliases()
    aliases.names.update(known or {})
    found = []
    for stmt in tree.children:
        if stmt is None:
            continue
        for item in statements_of(Tree("suite", [stmt])):
            if item.data in ("import_name", "import_from"):
                aliases.record_import(item)
            elif item.data == "decorated":
                found.append(item)
            elif item.data == "expr_stmt" and _is_docstring(item):
                continue
            else:
                raise source.error_at(
                    item,
                    "expected a @T.prim_func function or an @I.ir_module class at the top level",
                )
    if not found:
        raise source.error(
            "no @T.prim_func function or @I.ir_module class in the file", *_end(source.text)
        )
    if len(found) > 1:
        raise source.error_at(
            found[1], "a file holds one @T.prim_func function or one @I.ir_module class"
        )
    return build_decorated(found[0], source, aliases, constants, state)


def build_decorated(item, source, aliases, constants, state) -> IRModule:
    *decorators, definition = item.children
    kinds = [decorator_kind(source, aliases, d) for d in decorators]
    if definition.data == "funcdef":
        if _RELAX_FUNCTION in kinds:
            return IRModule(dict([_build_relax(definition, source, aliases)]))
        if _PRIM_FUNC not in kinds:
            raise source.error_at(decorators[0], "a function needs @T.prim_func")
        builder = state["builder"] = FunctionBuilder(source, aliases, constants)
        name, func = builder.build_function(definition, _is_private(decorators))
        builder.release()
        return IRModule({name: func})
    if _MODULE not in kinds:
        raise source.error_at(decorators[0], "a class needs @I.ir_module")
    functions, module_attrs = {}, {}
    module = _scan_module(definition, source, aliases, constants)
    for member in statements_of(definition.children[-1]):
        if member.data == "expr_stmt" and _is_docstring(member) or member.data == "pass_stmt":
            continue
        if member.data == "expr_stmt" and _is_module_attrs(member, aliases):
            call = member.children[0].children[0]
            module_attrs.update(_module_attrs(call, source, aliases, constants))
            continue
        if member.data != "decorated" or member.children[-1].data != "funcdef":
            raise source.error_at(member, "an @I.ir_module class holds @T.prim_func functions")
        member_kinds = [decorator_kind(source, aliases, d) for d in member.children[:-1]]
        if _RELAX_FUNCTION in member_kinds:
            module_name = str(definition.children[0])
            name, func = _build_relax(member.children[-1], source, aliases, module_name)
        elif _PRIM_FUNC not in member_kinds:
            raise source.error_at(member.children[0], "a module function needs @T.prim_func")
        else:
            builder = state["builder"] = FunctionBuilder(source, aliases, constants)
            builder.module = module
            private = _is_private(member.children[:-1])
            name, func = builder.build_function(member.children[-1], private)
            builder.release()
        if name in functions:
            raise source.error_at(member.children[-1], f"function {name} is defined twice")
        functions[name] = func
    return IRModule(functions, module_attrs)


def _scan_module(definition, source, aliases, constants):
    """The module's name and its prim_funcs' signatures, for calls between them."""
    from tilelang.parser.subroutines import is_prim_funcdef, scan_module

    def is_prim_func(decorators):
        return _PRIM_FUNC in [decorator_kind(source, aliases, d) for d in decorators]

    members = [
        m.children[-1]
        for m in statements_of(definition.children[-1])
        if is_prim_funcdef(m, is_prim_func)
    ]
    reader = FunctionBuilder(source, aliases, constants)
    return scan_module(str(definition.children[0]), members, reader.result_type)


def _is_module_attrs(stmt, aliases) -> bool:
    """``I.module_attrs({...})`` as a member of an ``@I.ir_module`` class."""
    tree = stmt.children[0].children[0] if stmt.children[0].data == "testlist" else stmt.children[0]
    if not (isinstance(tree, Tree) and tree.data == "call"):
        return False
    callee = tree.children[0]
    if not (isinstance(callee, Tree) and callee.data == "getattr"):
        return False
    head = callee.children[0]
    return (
        str(callee.children[1]) == "module_attrs"
        and isinstance(head, Tree)
        and head.data == "name"
        and aliases.names.get(str(head.children[0])) == "I"
    )


def _module_attrs(call, source, aliases, constants) -> dict:
    """The dict of ``I.module_attrs({...})``, evaluated as a TIR value."""
    arguments = call.children[1]
    args = [] if arguments is None else [a for a in arguments.children if a is not None]
    if len(args) != 1 or (isinstance(args[0], Tree) and args[0].data == "kwarg"):
        raise source.error_at(call, "I.module_attrs takes one dict")
    value = FunctionBuilder(source, aliases, constants).exprs.eval(args[0])
    if not isinstance(value, dict):
        raise source.error_at(args[0], f"I.module_attrs takes a dict, not {describe(value)}")
    return value


def _is_private(decorators) -> bool:
    """``@T.prim_func(private=True)``: the literal keyword argument, read from the tree."""
    for decorator in decorators:
        arguments = decorator.children[1] if len(decorator.children) > 1 else None
        for arg in arguments.children if arguments is not None else ():
            if isinstance(arg, Tree) and arg.data == "kwarg" and str(arg.children[0]) == "private":
                return isinstance(arg.children[1], Tree) and arg.children[1].data == "true"
    return False


def _build_relax(funcdef, source, aliases, module_name=None):
    """An ``@R.function`` (graph function), built by :mod:`tilelang.relax.parser`."""
    from tilelang.relax.parser import build_relax_function

    return build_relax_function(funcdef, source, aliases, module_name)


def _is_docstring(stmt) -> bool:
    child = stmt.children[0]
    return (
        isinstance(child, Tree)
        and child.data in ("string", "testlist")
        and (
            child.data == "string"
            or (len(child.children) == 1 and child.children[0].data == "string")
        )
    )


def _end(text: str):
    lines = text.rstrip().splitlines() or [""]
    return len(lines), 1

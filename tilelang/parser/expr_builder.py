"""Parse tree -> values: expressions, and the Python values TVMScript allows around them.

An expression evaluates to a *value*: a Python number, string, tuple, list or dict (as
in TVMScript, ``128 * 4`` stays a Python int, so literal typing follows TVM: an int
literal takes the type of the expression it meets), an IR expression, a Buffer, or one
of the records of :mod:`tilelang.parser.specs` that a ``T.*`` call returns. Operators
go through :func:`tilelang.ir.convert.binary`, the IR's typing rules. Long operator
chains (``a + b + ... ``) are folded in a loop, not by recursion.
"""

from __future__ import annotations

import ast
import difflib
import numbers
import re

from lark import Token, Tree

from tilelang.ir import (
    Buffer,
    BufferLoad,
    BufferRegion,
    IntImm,
    Let,
    PrimExpr,
    Ramp,
    Range,
    Span,
    Var,
    const,
    convert,
)
from tilelang.ir.convert import as_bool, match_types
from tilelang.ir.dtype import DataType, is_valid_dtype
from tilelang.parser import operators
from tilelang.parser import specs as S
from tilelang.parser import tir_functions as F
from tilelang.parser.simplify import extent_of, region_extent
from tilelang.parser.subroutines import ModuleRef, module_member


class Namespace:
    """``T``, ``T.axis``, ``I``, ``tvm.script``...: a prefix of dotted names."""

    def __init__(self, kind: str, prefix: str = ""):
        self.kind, self.prefix = kind, prefix

    def __repr__(self):
        return f"namespace {self.kind}{'.' + self.prefix if self.prefix else ''}"


class ExprBuilder:
    """Evaluates expression trees in the builder's scope. ``ctx`` is the statement
    builder (for scopes, loop domains and error locations)."""

    def __init__(self, ctx):
        self.ctx = ctx

    # ------------------------------------------------------------------ entry

    def eval(self, tree):
        """The value of an expression tree."""
        # one dict look-up per node: building a large file evaluates millions of them
        if type(tree) is Tree:
            if tree.data == "name":  # the most common node, resolved without a call
                return self.ctx.lookup(tree.children[0])
            method = _EVALUATORS.get(tree.data)
            if method is not None:
                return method(self, tree)
        if isinstance(tree, Token):
            return self.ctx.error(tree, f"unexpected {tree!s}")
        method = getattr(self, "eval_" + tree.data, None)
        if method is None:
            raise self.ctx.error(tree, f"{tree.data.replace('_', ' ')} is not supported in TIR")
        return method(tree)

    def expr(self, tree) -> PrimExpr:
        """An IR expression for ``tree`` (Python numbers become constants)."""
        value = self.eval(tree)
        return self.to_expr(value, tree)

    def to_expr(self, value, tree) -> PrimExpr:
        if isinstance(value, PrimExpr):
            return value
        if isinstance(value, (bool, numbers.Number)):
            return self.ctx.guard(tree, convert, value)
        if isinstance(value, str):
            return convert(value)
        raise self.ctx.error(tree, f"expected an expression, got {describe(value)}")

    def span(self, tree) -> Span | None:
        return self.ctx.span(tree)

    # ---------------------------------------------------------------- leaves

    def eval_name(self, tree):
        return self.ctx.lookup(tree.children[0])

    def eval_int_lit(self, tree):
        text = str(tree.children[0]).replace("_", "")
        # checked before converting: int() of thousands of digits is slow or refused
        if len(text) > 80:
            raise self.ctx.error(
                tree, f"the integer literal has {len(text)} digits; no type holds it"
            )
        return int(text, 0)

    def eval_float_lit(self, tree):
        return float(str(tree.children[0]).replace("_", ""))

    def eval_string(self, tree):
        parts = []
        for token in tree.children:
            if _PLAIN_STRING.fullmatch(token):  # "name": its text, without ast's compile
                parts.append(token[1:-1])
                continue
            try:
                value = ast.literal_eval(str(token))
            except (ValueError, SyntaxError):
                raise self.ctx.error(token, "invalid string literal") from None
            if not isinstance(value, str):
                raise self.ctx.error(token, "bytes literals are not supported")
            parts.append(value)
        return "".join(parts)

    def eval_true(self, tree):
        return True

    def eval_false(self, tree):
        return False

    def eval_none(self, tree):
        return None

    def eval_tuple(self, tree):
        return tuple(self.eval(child) for child in tree.children)

    def eval_lambda_arg(self, tree):
        raise self.ctx.error(tree, "a lambda is allowed only as T.comm_reducer's combiner")

    def lambda_value(self, tree) -> S.LambdaSpec:
        """The lambda ``tree`` as a function of its parameters' values (evaluated in a
        scope of its own: text never runs Python)."""
        _keyword, params_tree, body = tree.children
        params = tuple(str(t) for t in params_tree.children) if params_tree is not None else ()

        def apply(values):
            with self.ctx.scopes.frame():
                for name, value in zip(params, values):
                    self.ctx.scopes.define(name, value)
                return self.eval(body)

        return S.LambdaSpec(params, apply)

    def eval_list(self, tree):
        return [self.eval(child) for child in tree.children if child is not None]

    def eval_dict(self, tree):
        result = {}
        for item in tree.children:
            if item is None:
                continue
            key = self.eval(item.children[0])
            if not isinstance(key, (str, int)):
                raise self.ctx.error(item.children[0], "dict keys must be strings or integers")
            result[key] = self.eval(item.children[1])
        return result

    def eval_testlist(self, tree):
        if len(tree.children) == 1:
            return self.eval(tree.children[0])
        values = [self.eval(child) for child in tree.children]
        return values[0] if len(values) == 1 else tuple(values)

    eval_exprlist = eval_testlist

    # ------------------------------------------------------------- operators

    def eval_binexpr(self, tree):
        return operators.evaluate_binexpr(self, tree)

    def eval_prefix(self, tree):
        return operators.evaluate_binexpr(self, Tree("binexpr", [tree], tree.meta))

    def check_operand(self, value, where):
        if not isinstance(value, (PrimExpr, numbers.Number)):
            raise self.ctx.error(where, f"cannot use {describe(value)} in arithmetic")

    def condition(self, value, tree) -> PrimExpr:
        """``value`` as a bool expression, or a located type error."""
        if isinstance(value, bool):
            return const(value)
        if not isinstance(value, PrimExpr):
            raise self.ctx.error(tree, f"expected a condition, got {describe(value)}")
        return self.ctx.guard(tree, as_bool, value)

    # ------------------------------------------------------ names and access

    def eval_getattr(self, tree):
        base_tree, name_token = tree.children
        base = self.eval(base_tree)
        name = str(name_token)
        if isinstance(base, Namespace):
            return self.namespace_member(base, name, tree)
        if isinstance(base, Buffer):
            return self.buffer_member(base, name, tree)
        if isinstance(base, ModuleRef):
            return module_member(self.ctx, base, name, tree)
        if isinstance(base, PrimExpr) and name == "dtype":
            return str(base.dtype)
        if isinstance(base, S.SymbolicVarSpec) and name == "ty":  # T.handle("float32").ty
            return F.DTypeFunction(base.dtype)
        raise self.ctx.error(tree, f"{describe(base)} has no attribute {name!r}")

    def namespace_member(self, space: Namespace, name: str, tree):
        full = f"{space.prefix}.{name}" if space.prefix else name
        if space.kind == "T":
            entry = F.TABLE.get(full)
            if entry is not None:
                return entry
            # the other T.* members (dtypes, T.axis...) are immutable values: made once
            found = _T_MEMBERS.get(full)
            if found is None:
                found = _T_MEMBERS[full] = self.t_member(space, name, full, tree)
            return found
        if space.kind in ("I", "tvm"):
            return Namespace(space.kind, full)
        raise self.ctx.error(tree, f"unknown name {space.kind}.{full}")

    def t_member(self, space: Namespace, name: str, full: str, tree):
        """``T.<full>``'s value, or a located error naming the closest known member."""
        if full == "axis":
            return Namespace("T", "axis")
        if not space.prefix and is_valid_dtype(name):
            return F.DTypeFunction(DataType(name))
        if full in ("handle", "Ptr"):
            return F.DTypeFunction(DataType("handle"))
        if full == "boolean":  # TVM's other spelling of T.bool
            return F.DTypeFunction(DataType("bool"))
        if full in ("let", "Let", "prim_func"):
            return SpecialName(full)
        known = [key for key in list(F.TABLE) + list(F.SPECIAL_NAMES)]
        known += ["int32", "int64", "float32", "float16", "float64", "bool", "handle"]
        guess = difflib.get_close_matches(full, known, n=1, cutoff=0.6)
        hint = f"; did you mean T.{guess[0]}?" if guess else ""
        raise self.ctx.error(tree, f"unknown function T.{full}{hint}")

    def buffer_member(self, buffer: Buffer, name: str, tree):
        if name == "data":
            return buffer.data
        if name == "shape":
            return tuple(buffer.shape)
        if name == "strides":
            return tuple(buffer.strides)
        if name == "elem_offset":
            return buffer.elem_offset
        if name == "dtype":
            return str(buffer.dtype)
        if name == "scope":
            return buffer.scope
        if name in ("access_ptr", "vload", "vstore"):
            return S.BufferMethod(buffer, name)
        raise self.ctx.error(tree, f"buffer {buffer.name} has no attribute {name!r}")

    def eval_getitem(self, tree):
        base_tree, subscripts = tree.children
        base = self.eval(base_tree)
        if isinstance(base, Buffer):
            return self.buffer_load(base, subscripts, tree)
        if isinstance(base, F.TIRFunction) and base.name == "Buffer":
            args = [self.eval(child) for child in subscripts.children]
            if len(args) == 1 and isinstance(args[0], tuple):
                args = list(args[0])
            return self.ctx.call_function(base, tree, values=args)
        if isinstance(base, (tuple, list)):
            index = self.eval(subscripts.children[0])
            if len(subscripts.children) != 1 or not isinstance(index, int):
                raise self.ctx.error(subscripts, "a tuple is indexed by one integer")
            if not -len(base) <= index < len(base):
                raise self.ctx.error(subscripts, f"index {index} out of range")
            return base[index]
        raise self.ctx.error(base_tree, f"{describe(base)} cannot be indexed")

    def check_arity(self, buffer: Buffer, count: int, tree):
        if count != buffer.ndim:
            raise self.ctx.error(
                tree,
                f"buffer {buffer.name} has {buffer.ndim} dimension"
                f"{'s' if buffer.ndim != 1 else ''} but {count} "
                f"ind{'ices were' if count != 1 else 'ex was'} given",
            )

    def subscript_items(self, subscripts) -> list:
        """The subscript trees of ``A[...]``; ``A[()]`` (a zero-dimensional buffer's
        element) has none."""
        items = subscripts.children
        if len(items) == 1 and isinstance(items[0], Tree) and items[0].data == "tuple":
            if not items[0].children:
                return []
        return items

    def indices(self, buffer: Buffer, subscripts, tree) -> tuple:
        """The load/store indices of ``buffer[subscripts]``; a constant-length slice
        is a vector index (a Ramp)."""
        items = self.subscript_items(subscripts)
        self.check_arity(buffer, len(items), subscripts)
        result = []
        for axis, child in enumerate(items):
            if isinstance(child, Tree) and child.data == "slice":
                result.append(self.vector_index(child, buffer, axis))
                continue
            result.append(self.index(child))
        return tuple(result)

    def vector_index(self, tree, buffer: Buffer, axis: int) -> PrimExpr:
        """``A[lo:hi:step]`` as an index: a Ramp of ``ceil((hi - lo) / step)`` lanes
        (one lane is the plain index ``lo``, as in TVM)."""
        lo, hi = self.slice_bounds(tree, buffer, axis)
        extent = extent_of(lo, hi)
        step = 1
        if tree.children[2] is not None:
            step = self.eval(tree.children[2])
            if isinstance(step, IntImm):
                step = step.value
            if isinstance(step, bool) or not isinstance(step, int) or step <= 0:
                raise self.ctx.error(tree.children[2], "a slice step is a positive integer")
        if not isinstance(extent, IntImm) or extent.value <= 0:
            raise self.ctx.error(tree, "a slice index needs a constant, positive length")
        lanes = -(-extent.value // step)
        if lanes == 1:
            return lo
        return Ramp(lo, const(step, lo.dtype), lanes)

    def index(self, tree) -> PrimExpr:
        value = self.eval(tree)
        if isinstance(value, PrimExpr):
            if value.dtype.code not in ("int", "uint"):
                raise self.ctx.error(
                    tree,
                    f"a buffer index must be an integer, got a {value.dtype} expression",
                    cls=self.ctx.type_error_cls,
                )
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.ctx.error(tree, f"a buffer index must be an integer, got {describe(value)}")
        return convert(value)

    def slice_bounds(self, tree, buffer: Buffer, axis: int):
        """``lo, hi`` of a slice of ``buffer``'s ``axis``: an open end is the axis's
        (``A[:64]`` starts at 0, ``A[8:]`` ends at the extent)."""
        lo_tree, hi_tree = tree.children[0], tree.children[1]
        lo = const(0, buffer.shape[axis].dtype) if lo_tree is None else self.index(lo_tree)
        hi = buffer.shape[axis] if hi_tree is None else self.index(hi_tree)
        if lo.dtype != hi.dtype:
            lo, hi = self.ctx.guard(tree, match_types, lo, hi)
        return lo, hi

    def buffer_load(self, buffer, subscripts, tree):
        indices = self.indices(buffer, subscripts, tree)
        return BufferLoad(buffer, indices, span=self.span(tree))

    def region(self, tree):
        """``A[vi, 0:16]`` as a BufferRegion (a plain index is a range of one); a bare
        buffer is its full region; anything else evaluates normally."""
        if isinstance(tree, Tree) and tree.data == "getitem":
            base = self.eval(tree.children[0])
            if isinstance(base, Buffer):
                subscripts = tree.children[1]
                items = self.subscript_items(subscripts)
                self.check_arity(base, len(items), subscripts)
                ranges = []
                for axis, child in enumerate(items):
                    if isinstance(child, Tree) and child.data == "slice":
                        if child.children[2] is not None:
                            raise self.ctx.error(child, "a region slice has no step")
                        lo, hi = self.slice_bounds(child, base, axis)
                        ranges.append(Range(lo, region_extent(lo, hi)))
                    else:
                        index = self.index(child)
                        ranges.append(Range(index, const(1, index.dtype)))
                return BufferRegion(base, tuple(ranges), span=self.span(tree))
        if isinstance(tree, Tree) and tree.data in ("list", "tuple"):
            # T.reads([A[lo:hi], B]): each element is a region, as in the bare form
            return [self.region(child) for child in tree.children if child is not None]
        value = self.eval(tree)
        if isinstance(value, Buffer):
            return BufferRegion.full(value)
        if isinstance(value, list):
            return [self.region_of_value(v, tree) for v in value]
        return value

    def region_of_value(self, value, tree):
        if isinstance(value, BufferLoad):
            return BufferRegion(value.buffer, tuple(Range(i, 1) for i in value.indices))
        return value

    # ------------------------------------------------------------------ calls

    def eval_call(self, tree):
        callee_tree, arguments = tree.children
        callee = self.eval(callee_tree)
        if isinstance(callee, SpecialName) and callee.name == "Let":
            return self.let_expr(tree, arguments)
        return self.ctx.call_value(callee, tree, arguments)

    def let_expr(self, tree, arguments):
        args = arguments.children if arguments is not None else []
        if len(args) == 2 and isinstance(args[1], Tree) and args[1].data == "kwarg":
            return self.let_where(tree, args[0], args[1])
        if len(args) != 3 or any(a.data == "kwarg" for a in args if isinstance(a, Tree)):
            raise self.ctx.error(tree, "T.Let takes (var, value, body)")
        name_tree, value_tree, body_tree = args
        if not (isinstance(name_tree, Tree) and name_tree.data == "name"):
            raise self.ctx.error(name_tree, "T.Let binds a new name")
        value = self.expr(value_tree)
        var = Var(str(name_tree.children[0]), value.dtype, span=self.span(name_tree))
        with self.ctx.scopes.frame():
            self.ctx.scopes.define(var.name, var)
            body = self.expr(body_tree)
        return Let(var, value, body, span=self.span(tree))

    def let_where(self, tree, body_tree, where):
        """TVM 0.27's ``T.Let(body, where={x: value})``: ``x`` is a variable declared
        before (``x = T.int32()``); the first binding is the outermost."""
        if str(where.children[0]) != "where" or where.children[1].data != "dict":
            raise self.ctx.error(where, "T.Let takes (body, where={var: value})")
        bindings = []
        for item in where.children[1].children:
            if item is None:
                continue
            var = self.eval(item.children[0])
            if not isinstance(var, Var):
                raise self.ctx.error(
                    item.children[0], f"T.Let binds a variable, not {describe(var)}"
                )
            raw = self.eval(item.children[1])
            dtype = None if isinstance(raw, PrimExpr) else var.dtype  # a literal takes its type
            value = self.ctx.guard(item, convert, raw, dtype)
            if value.dtype != var.dtype:
                raise self.ctx.error(
                    item.children[1],
                    f"{var.name} is {var.dtype} but its value is {value.dtype}",
                    cls=self.ctx.type_error_cls,
                )
            bindings.append((var, value))
        if not bindings:
            raise self.ctx.error(where, "T.Let needs at least one binding in where=")
        body = self.expr(body_tree)
        for var, value in reversed(bindings):
            body = Let(var, value, body, span=self.span(tree))
        return body


#: a string literal without prefix, escapes or inner quotes: its value is its inside
_PLAIN_STRING = re.compile(r""""[^"\\\n\r\0]*"|'[^'\\\n\r\0]*'""")

#: ``T.<member>`` values found so far, by dotted member name
_T_MEMBERS: dict = {}

#: ``eval_<rule>`` methods by rule name (subclasses and other trees take getattr)
_EVALUATORS = {
    name[len("eval_") :]: method
    for name, method in vars(ExprBuilder).items()
    if name.startswith("eval_") and callable(method)
}


class SpecialName:
    """``T.let`` / ``T.Let`` / ``T.prim_func``: names handled by their context."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"T.{self.name}"


def describe(value) -> str:
    """A short description of a value for error messages."""
    if isinstance(value, Buffer):
        return f"buffer {value.name}"
    if isinstance(value, Var):
        return f"variable {value.name}"
    if isinstance(value, PrimExpr):
        return f"a {value.dtype} expression"
    if isinstance(value, F.TIRFunction):
        return f"T.{value.name}"
    if isinstance(value, F.DTypeFunction):
        return f"T.{value.dtype}"
    if isinstance(value, (Namespace, SpecialName)):
        return repr(value)
    if isinstance(value, (bool, int, float, str)):
        return f"{type(value).__name__} {value!r}"
    if value is None:
        return "None"
    return type(value).__name__

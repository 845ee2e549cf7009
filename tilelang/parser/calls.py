"""Calling things in TIR source: ``T.*`` table functions, dtype constructors
(``T.float32(0)``, ``T.int64()``), buffer methods (``A.access_ptr("w")``) and the few
Python builtins TVMScript allows (``range``, ``min``, ``max``, ``abs``)."""

from __future__ import annotations

import math
import numbers

import attrs
from lark import Tree

from tilelang.ir import Buffer, DataType, DataTypeError, PrimExpr, TIRTypeError, const
from tilelang.ir import op as ops
from tilelang.ir.convert import binary
from tilelang.ir.dtype import is_valid_dtype
from tilelang.ir.types import pointer_type
from tilelang.parser import specs as S
from tilelang.parser import tir_functions as F
from tilelang.parser.expr_builder import SpecialName, describe
from tilelang.parser.subroutines import FunctionRef, call_subroutine


class Builtin:
    """A Python builtin usable in TIR source."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name


BUILTINS = {name: Builtin(name) for name in ("range", "min", "max", "abs")}


def split_arguments(ctx, arguments) -> tuple[list, dict]:
    """Positional and keyword argument trees of a call."""
    args, kwargs = [], {}
    for child in arguments.children if arguments is not None else ():
        if isinstance(child, Tree) and child.data == "kwarg":
            name = str(child.children[0])
            if name in kwargs:
                raise ctx.error(child, f"keyword argument {name!r} given twice")
            kwargs[name] = child.children[1]
        else:
            if kwargs:
                raise ctx.error(child, "a positional argument follows a keyword argument")
            args.append(child)
    return args, kwargs


def call_value(ctx, callee, tree, arguments):
    """The value of ``callee(arguments)``."""
    if isinstance(callee, F.TIRFunction):
        return call_function(ctx, callee, tree, arguments)
    args, kwargs = split_arguments(ctx, arguments)
    if isinstance(callee, F.DTypeFunction):
        return call_dtype(ctx, callee, tree, args, kwargs)
    if isinstance(callee, S.BufferMethod):
        return call_buffer_method(ctx, callee, tree, args, kwargs)
    if isinstance(callee, Builtin):
        if callee.name == "range":
            return call_function(ctx, F.TABLE["serial"], tree, arguments)
        if kwargs or len(args) != (1 if callee.name == "abs" else 2):
            raise ctx.error(
                tree,
                f"{callee.name}() takes {'one' if callee.name == 'abs' else 'two'}"
                " positional arguments",
            )
        values = [ctx.exprs.eval(a) for a in args]
        if all(isinstance(v, numbers.Number) for v in values):
            return {"min": min, "max": max, "abs": abs}[callee.name](*values)
        if callee.name == "abs":
            return ctx.guard(tree, ops.abs, values[0])
        return ctx.guard(tree, binary, callee.name, values[0], values[1], ctx.span(tree))
    if isinstance(callee, S.Captured):
        return call_captured(ctx, callee, tree, args, kwargs)
    if isinstance(callee, FunctionRef):
        return call_subroutine(ctx, callee, tree, args, kwargs)
    if isinstance(callee, SpecialName):
        if callee.name == "let":
            raise ctx.error(tree, "T.let is written `with T.let(x, value):`")
        raise ctx.error(tree, f"T.{callee.name} cannot be called here")
    raise ctx.error(tree.children[0], f"{describe(callee)} is not callable")


def call_captured(ctx, callee: S.Captured, tree, args, kwargs):
    """Calls a Python function captured by a decorated function (never reached from
    ``.tir`` text); its result must be a value TIR source can hold."""
    values = [ctx.exprs.eval(a) for a in args]
    named = {k: ctx.exprs.eval(v) for k, v in kwargs.items()}
    try:
        result = callee.func(*values, **named)
    except Exception as exc:  # noqa: BLE001 - any failure of user code, located
        raise ctx.error(
            tree, f"calling {callee.name} failed: {type(exc).__name__}: {exc}"
        ) from None
    if isinstance(result, (PrimExpr, bool, numbers.Number, str, tuple, list)):
        return result
    if isinstance(result, (S.BufferSpec, S.DeclBufferSpec)):  # T.decl_buffer(...)
        return result
    if callable(getattr(result, "tir_spec", None)):  # T.Buffer(...) of tilelang.script.tir
        try:
            return result.tir_spec()
        except F.ArgError as exc:
            raise ctx.error(tree, f"{callee.name}(...): T.Buffer: {exc.message}") from None
    raise ctx.error(tree, f"{callee.name}(...) returned {describe(result)}, not an expression")


def call_function(ctx, entry: F.TIRFunction, tree, arguments=None, values=None):
    """Binds the call's arguments to the entry's signature, evaluates them (regions
    where the entry asks for them) and calls it; errors point at the argument."""
    evaluated = values is not None
    if evaluated:
        arg_trees, kw_trees = list(values), {}
    else:
        arg_trees, kw_trees = split_arguments(ctx, arguments)
        count, expected = len(arg_trees), len(entry.positional)
        if not kw_trees and (
            count == expected or (count > expected and entry.var_positional is not None)
        ):
            return _call_positional(ctx, entry, tree, arg_trees)
    try:
        named, extra = entry.bind(arg_trees, kw_trees)
    except TypeError as exc:
        raise ctx.error(tree, f"T.{entry.name}: {exc}") from None
    values = {name: _argument(ctx, entry, name, given, evaluated) for name, given in named.items()}
    extra_values = [_argument(ctx, entry, entry.var_positional, t, evaluated) for t in extra]
    try:
        # a span only for the entries that keep one (finding it walks the tree)
        return entry.call(values, extra_values, ctx.span(tree) if entry.takes_span else None)
    except F.ArgError as exc:
        where = named.get(exc.param) if exc.param else None
        if where is None and exc.param == entry.var_positional and extra:
            where = extra[0]
        if evaluated or where is None:
            where = tree
        raise ctx.error(where, f"T.{entry.name}: {exc.message}") from None
    except (TIRTypeError, DataTypeError) as exc:
        raise ctx.error(tree, f"T.{entry.name}: {exc}", cls=ctx.type_error_cls) from None


def _call_positional(ctx, entry: F.TIRFunction, tree, arg_trees: list):
    """:func:`call_function` for the usual call, positional arguments only, one per
    parameter and the rest to ``*args``: the same evaluation (in order, regions where
    the entry asks for them) and the same located errors, without binding the
    arguments by name first (a call every few source lines)."""
    positional = entry.positional
    if entry.regions or entry.lambdas:
        names = positional + (entry.var_positional,) * (len(arg_trees) - len(positional))
        args = [_argument(ctx, entry, n, t, False) for n, t in zip(names, arg_trees)]
    else:
        evaluate = ctx.exprs.eval
        args = [evaluate(t) for t in arg_trees]
    try:
        if entry.takes_span:
            return entry.impl(*args, span=ctx.span(tree))
        return entry.impl(*args)
    except F.ArgError as exc:
        where = dict(zip(positional, arg_trees)).get(exc.param) if exc.param else None
        if where is None and exc.param == entry.var_positional and len(arg_trees) > len(positional):
            where = arg_trees[len(positional)]
        if where is None:
            where = tree
        raise ctx.error(where, f"T.{entry.name}: {exc.message}") from None
    except (TIRTypeError, DataTypeError) as exc:
        raise ctx.error(tree, f"T.{entry.name}: {exc}", cls=ctx.type_error_cls) from None


def _argument(ctx, entry, name, tree, evaluated: bool):
    if evaluated:  # already evaluated (T.Buffer[...] subscripts)
        return tree
    if name in entry.regions:
        return ctx.exprs.region(tree)
    if name in entry.lambdas and getattr(tree, "data", None) == "lambda_arg":
        return ctx.exprs.lambda_value(tree)
    return ctx.exprs.eval(tree)


def call_dtype(ctx, callee: F.DTypeFunction, tree, args, kwargs):
    """``T.int32()`` (a new variable), ``T.float32(0)``, ``T.float32("inf")``, or a cast."""
    dtype = callee.dtype
    if dtype.is_handle() and (args or set(kwargs) & {"dtype", "storage_scope"}):
        return typed_handle(ctx, tree, args, kwargs)
    extra = set(kwargs) - {"is_size_var"}
    if extra or len(args) > 1:
        raise ctx.error(tree, f"T.{dtype} takes at most one argument")
    if "is_size_var" in kwargs:
        flag = ctx.exprs.eval(kwargs["is_size_var"])
        if args or not isinstance(flag, bool):
            raise ctx.error(tree, f"T.{dtype}(is_size_var=True) declares a size variable")
        return S.SymbolicVarSpec(dtype, flag)
    if not args:
        return S.SymbolicVarSpec(dtype)
    value = ctx.exprs.eval(args[0])
    if isinstance(value, str) and dtype.is_float():
        try:
            number = float(value)
        except ValueError:
            raise ctx.error(
                args[0], f'T.{dtype} of {value!r}: expected "inf", "-inf", "nan" or a number'
            ) from None
        return ctx.guard(tree, const, number, dtype, ctx.span(tree))
    if isinstance(value, (bool, numbers.Number)):
        if isinstance(value, float) and not dtype.is_float() and not value.is_integer():
            raise ctx.error(
                args[0], f"T.{dtype} of the non-integer {value!r}", cls=ctx.type_error_cls
            )
        if isinstance(value, float) and math.isinf(value) and not dtype.is_float():
            raise ctx.error(args[0], f"T.{dtype} of {value!r}", cls=ctx.type_error_cls)
        if (dtype.is_integer() or dtype.is_bool()) and not _fits(int(value), dtype):
            raise ctx.error(args[0], f"{value!r} does not fit in {dtype}", cls=ctx.type_error_cls)
        return ctx.guard(tree, const, value, dtype, ctx.span(tree))
    if isinstance(value, PrimExpr):
        return ctx.guard(tree, value.astype, dtype)
    raise ctx.error(args[0], f"T.{dtype} of {describe(value)}")


def typed_handle(ctx, tree, args, kwargs):
    """``T.handle("float32")`` / ``T.handle("int32", "shared")`` /
    ``T.handle(storage_scope="shared")``: TVM's typed pointer, a handle whose
    ``type_annotation`` is the :class:`~tilelang.ir.types.PointerType` (``"void"``, or
    no dtype, is the void pointer: the same type as a bare ``T.handle``)."""
    values = [ctx.exprs.eval(a) for a in args]
    named = {k: ctx.exprs.eval(v) for k, v in kwargs.items()}
    if len(values) + len(named) > 2 or set(named) - {"dtype", "storage_scope"}:
        raise ctx.error(tree, "T.handle takes (dtype, storage_scope)")
    dtype = values[0] if values else named.get("dtype", "void")
    scope = values[1] if len(values) > 1 else named.get("storage_scope", "")
    if isinstance(dtype, F.DTypeFunction):
        dtype = str(dtype.dtype)
    if not isinstance(dtype, str) or not (dtype == "void" or is_valid_dtype(dtype)):
        raise ctx.error(args[0], f'T.handle of {describe(dtype)}: expected a dtype or "void"')
    if not isinstance(scope, str):
        raise ctx.error(tree, f"the storage scope of T.handle is a string, not {describe(scope)}")
    return S.SymbolicVarSpec(DataType("handle"), pointer=pointer_type(dtype, scope))


def _fits(value: int, dtype) -> bool:
    if dtype.is_bool():
        return value in (0, 1)
    bits = dtype.bits
    if dtype.is_uint():
        return 0 <= value < 2**bits
    return -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)


def call_buffer_method(ctx, method: S.BufferMethod, tree, args, kwargs):
    buffer: Buffer = method.buffer
    values = [ctx.exprs.eval(a) for a in args]
    named = {k: ctx.exprs.eval(v) for k, v in kwargs.items()}
    if method.name == "access_ptr":
        allowed = ("access_mask", "ptr_type", "content_lanes", "offset", "extent")
        if len(values) > 1 or set(named) - set(allowed) or not (values or "access_mask" in named):
            raise ctx.error(tree, "access_ptr takes (mode, offset=0, extent=None)")
        mode = values[0] if values else named["access_mask"]
        if not isinstance(mode, str):
            raise ctx.error(tree, 'access_ptr mode is "r", "w" or "rw"')
        call = ctx.guard(
            tree,
            ops.access_ptr,
            buffer,
            mode,
            named.get("offset", 0),
            named.get("extent"),
            ctx.span(tree),
        )
        return F.locate_arguments(call, ctx.span(tree))
    if method.name == "vstore":
        return _vstore(ctx, buffer, tree, values, named)
    if set(named) - {"predicate"}:
        raise ctx.error(tree, "vload takes (indices, predicate=None)")
    indices = values[0] if len(values) == 1 and isinstance(values[0], (list, tuple)) else values
    ctx.exprs.check_arity(buffer, len(indices), tree)
    load = ctx.guard(tree, buffer.vload, indices, named.get("predicate"))
    return attrs.evolve(load, span=ctx.span(tree))


def _vstore(ctx, buffer: Buffer, tree, values, named):
    """``A.vstore(indices, value, predicate=mask)``: a statement (TVM's spelling of a
    predicated store)."""
    if len(values) + len(named) > 3 or set(named) - {"value", "predicate"}:
        raise ctx.error(tree, "vstore takes (indices, value, predicate=None)")
    if len(values) == 2 and "value" not in named:
        values, named = values[:1], {"value": values[1], **named}
    if len(values) != 1 or "value" not in named:
        raise ctx.error(tree, "vstore takes (indices, value, predicate=None)")
    indices = values[0] if isinstance(values[0], (list, tuple)) else [values[0]]
    ctx.exprs.check_arity(buffer, len(indices), tree)
    store = ctx.guard(tree, buffer.vstore, list(indices), named["value"], named.get("predicate"))
    return attrs.evolve(store, span=ctx.span(tree))

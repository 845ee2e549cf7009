"""The registry of ``T.*`` functions and the argument converters they share.

A :class:`TIRFunction` is a plain Python function whose signature *is* the argument
check: the builder binds a call's arguments to it (a wrong number of arguments or an
unknown keyword is reported at the call, naming the function), evaluates them, and
calls it. Parameters listed in ``regions`` receive buffer regions (``A[vi, 0:16]``)
instead of loads. A function raises :class:`ArgError` naming the parameter at fault,
so the diagnostic points at that argument. The entries themselves are in
:mod:`tilelang.parser.tir_functions`.
"""

from __future__ import annotations

import inspect
import numbers

import attrs

from tilelang.ir import (
    DataType,
    DataTypeError,
    IntImm,
    PrimExpr,
    convert,
)
from tilelang.ir.expr import StringImm


class ArgError(Exception):
    """A bad argument; ``param`` names it so the error points at it."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.message, self.param = message, param


@attrs.frozen
class TIRFunction:
    """One ``T.<name>`` entry: the builder function and its parameters, read once from
    its signature (``inspect.Signature.bind`` per call would dominate parse time)."""

    name: str
    impl: object
    regions: frozenset
    lambdas: frozenset  # parameters that take a lambda (a LambdaSpec), nowhere else allowed
    positional: tuple  # names of positional-or-keyword parameters, in order
    defaults: dict  # name -> default value
    var_positional: str | None
    keyword_only: tuple
    takes_span: bool

    @staticmethod
    def of(name: str, impl, regions=(), lambdas=()) -> TIRFunction:
        params = inspect.signature(impl).parameters.values()
        kinds = inspect.Parameter
        return TIRFunction(
            name,
            impl,
            frozenset(regions),
            frozenset(lambdas),
            tuple(p.name for p in params if p.kind == kinds.POSITIONAL_OR_KEYWORD),
            {p.name: p.default for p in params if p.default is not kinds.empty},
            next((p.name for p in params if p.kind == kinds.VAR_POSITIONAL), None),
            tuple(p.name for p in params if p.kind == kinds.KEYWORD_ONLY and p.name != "span"),
            any(p.name == "span" for p in params),
        )

    def bind(self, args: list, kwargs: dict) -> tuple[dict, list]:
        """``(named, extra)``: the argument trees by parameter name, and the trees taken
        by ``*args``. Raises TypeError, worded like Python's, when they do not fit."""
        positional = self.positional
        if not kwargs and len(args) == len(positional):  # the usual call, checked at once
            return dict(zip(positional, args)), []
        named, extra = {}, []
        for index, arg in enumerate(args):
            if index < len(self.positional):
                named[self.positional[index]] = arg
            elif self.var_positional is not None:
                extra.append(arg)
            else:
                limit = len(self.positional)
                raise TypeError(
                    f"takes {limit} positional argument{'s' if limit != 1 else ''} "
                    f"but {len(args)} were given"
                )
        for key, arg in kwargs.items():
            if key in named:
                raise TypeError(f"got multiple values for argument '{key}'")
            if key not in self.positional and key not in self.keyword_only:
                raise TypeError(f"got an unexpected keyword argument '{key}'")
            named[key] = arg
        missing = [p for p in self.positional if p not in named and p not in self.defaults]
        if missing:
            raise TypeError(f"missing a required argument: '{missing[0]}'")
        return named, extra

    def call(self, values: dict, extra: list, span):
        """Calls the builder with evaluated arguments (defaults fill the gaps)."""
        args = [values.get(p, self.defaults.get(p)) for p in self.positional]
        kwargs = {k: values[k] for k in self.keyword_only if k in values}
        if self.takes_span:
            kwargs["span"] = span
        return self.impl(*args, *extra, **kwargs)


@attrs.frozen
class DTypeFunction:
    """``T.int32`` (a type in annotations) / ``T.int32(5)`` (a constant or cast) /
    ``T.int32()`` (a new symbolic variable)."""

    dtype: DataType


TABLE: dict[str, TIRFunction] = {}


def tir_function(*names, regions=(), lambdas=()):
    """Registers the decorated function under ``T.<name>`` for each name."""

    def register(impl):
        for name in names:
            TABLE[name] = TIRFunction.of(name, impl, regions, lambdas)
        return impl

    return register


# ------------------------------------------------------------------------ helpers


def as_dtype(value, param="dtype") -> DataType:
    if isinstance(value, DTypeFunction):
        return value.dtype
    if isinstance(value, StringImm):
        value = value.value
    if not isinstance(value, str):
        raise ArgError(f'expected a dtype string such as "float32", got {_kind(value)}', param)
    try:
        return DataType(value)
    except DataTypeError as exc:
        raise ArgError(str(exc), param) from None


def as_int(value, param) -> int:
    if isinstance(value, IntImm):
        return value.value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    raise ArgError(f"expected an integer constant, got {_kind(value)}", param)


def as_str(value, param) -> str:
    if isinstance(value, StringImm):
        return value.value
    if not isinstance(value, str):
        raise ArgError(f"expected a string, got {_kind(value)}", param)
    return value


def as_expr(value, param) -> PrimExpr:
    """An expression for ``value`` (Python numbers become constants)."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (numbers.Number, str)) and value is not None:
        return convert(value)
    raise ArgError(f"expected an expression, got {_kind(value)}", param)


def as_index(value, param) -> PrimExpr | int:
    """An integer expression or Python int (kept as a literal for typing)."""
    if type(value) is int:  # the usual literal, without the numbers.Integral ABC check
        return value
    if isinstance(value, bool):
        raise ArgError("expected an integer, got a bool", param)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, PrimExpr) and value.dtype.element_of().is_integer():
        return value
    raise ArgError(f"expected an integer expression, got {_kind(value)}", param)


def as_shape(value, param="shape") -> tuple:
    if isinstance(value, (list, tuple)):
        return tuple(as_expr(as_index(v, param), param) for v in value)
    return (as_expr(as_index(value, param), param),)


def as_dict(value, param) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ArgError(f"expected a dict, got {_kind(value)}", param)
    return value


def _kind(value) -> str:
    if isinstance(value, PrimExpr):
        return f"a {value.dtype} expression"
    if value is None:
        return "None"
    return f"{type(value).__name__} {value!r}"[:80]

"""Decorated Python functions and classes -> IR, through the .tir parser.

The decorator reads the object's source text (``inspect``), dedents it, and parses it
with the same grammar as a ``.tir`` file; diagnostics point into the real Python file.
Values visible where the function is defined (module globals, the defining scope's
locals, closure cells) may be used in the body: Python numbers as constants, IR
expressions and prim_funcs as themselves, and Python functions (lambdas included) as
callables evaluated while parsing (:class:`~tilelang.parser.specs.Captured`). Only
decorated Python code gets them: text given to ``tilelang.parse`` or read from a ``.tir``
file never runs Python.
"""

from __future__ import annotations

import inspect
import linecache
import numbers
import textwrap
import types

from tilelang.errors import TIRSyntaxError
from tilelang.parser.specs import Captured


def scope_values(frame, func=None) -> tuple[dict, dict]:
    """``(constants, aliases)`` visible from the defining scope: Python numbers, IR
    expressions, prim_funcs and Python functions (see :class:`Captured`), and the names
    under which ``tilelang.script.tir`` / ``ir`` (or TVM's) are imported."""
    from tilelang.ir import PrimExpr, PrimFunc

    namespaces = []
    if func is not None:
        namespaces.append(func.__globals__)
    if frame is not None:
        namespaces += [frame.f_globals, frame.f_locals]
    if func is not None and func.__closure__:
        namespaces.append(inspect.getclosurevars(func).nonlocals)
    constants, aliases = {}, {}
    for namespace in namespaces:
        for name, value in namespace.items():
            if isinstance(value, bool) or (
                isinstance(value, numbers.Number) and not isinstance(value, complex)
            ):
                constants[name] = value
            elif isinstance(value, (PrimExpr, PrimFunc)):
                constants[name] = value
            elif isinstance(value, types.FunctionType) and value is not func:
                constants[name] = Captured(name, value)
            elif isinstance(value, types.ModuleType):
                kind = _namespace_kind(value.__name__)
                if kind is not None:
                    aliases[name] = kind
    return constants, aliases


def _namespace_kind(module_name: str) -> str | None:
    """What a module stands for in the source: ``T``, ``I``, or ``tvm`` (a package
    whose ``script.ir_module`` / ``script.tir`` are reached by dotted names)."""
    if module_name.endswith(".tir") and "script" in module_name:
        return "T"
    if module_name.endswith(".ir") and "script" in module_name:
        return "I"
    if module_name.endswith(".relax") and "script" in module_name:
        return "R"
    if module_name in ("tilelang", "tvm", "tilelang.script", "tvm.script"):
        return "tvm"
    return None


def parse_object(obj, frame, func=None):
    """The IRModule of a decorated function or class."""
    from tilelang.parser import parse

    try:
        lines, first_line = inspect.getsourcelines(obj)
        path = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError) as exc:
        raise TIRSyntaxError(
            f"cannot read the source of {getattr(obj, '__qualname__', obj)!r} ({exc}); "
            "define it in a file, or parse its text with tilelang.parse"
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0
    full_text = "".join(linecache.getlines(path)) or text
    constants, aliases = scope_values(frame, func)
    return parse(
        dedented,
        path,
        constants=constants,
        aliases=aliases,
        line_offset=first_line - 1,
        column_offset=indent,
        full_text=full_text,
    )


def in_class_body(frame) -> bool:
    """True when ``frame`` is executing a class body (an ``@I.ir_module`` class)."""
    return (
        frame is not None and "__module__" in frame.f_locals and "__qualname__" in (frame.f_locals)
    )

"""``I``: the module namespace of decorated Python programs.

    from tilelang.script import ir as I, tir as T

    @I.ir_module
    class MyModule:
        @T.prim_func
        def main(A: T.Buffer((8,), "float32")): ...

``@I.ir_module`` parses the whole class source with the .tir parser and returns a
:class:`tilelang.ir.IRModule`.
"""

from __future__ import annotations

import sys

from tilelang.script.source import parse_object


def ir_module(cls=None, **_options):
    """Parse the decorated class as an IRModule of its ``@T.prim_func`` (and
    ``@R.function``) functions; ``@I.ir_module(s_tir=True)`` is TVM 0.27's spelling."""
    if cls is None:
        frame = sys._getframe(1)
        return lambda c: parse_object(c, frame)
    return parse_object(cls, sys._getframe(1))


def module_attrs(attrs: dict) -> None:
    """``I.module_attrs({...})`` in an ``@I.ir_module`` class body: the module's
    attributes. Python runs the class body, so this is called, but the parser reads the
    attributes from the source text; here the argument is only checked."""
    if not isinstance(attrs, dict):
        raise TypeError(f"I.module_attrs takes a dict, not {type(attrs).__name__}")


__all__ = ["ir_module", "module_attrs"]

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


def ir_module(cls):
    """Parse the decorated class as an IRModule of its ``@T.prim_func`` functions."""
    return parse_object(cls, sys._getframe(1))


__all__ = ["ir_module"]

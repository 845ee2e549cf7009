"""tilelang: a tensor-program compiler in Python.

Write a tensor function in TVMScript-style ``.tir`` text (or as a decorated Python
function), transform it with schedule primitives or your own passes, and compile it.
"""

from tilelang import ir
from tilelang.errors import (
    ArgumentError,
    BuildError,
    ScheduleError,
    TileLangError,
    TIRSyntaxError,
    TIRTypeError,
)  # fmt: skip
from tilelang.ir import IRModule, PrimFunc

__version__ = "0.1.0"


def parse(text: str, path: str | None = None) -> IRModule:
    """Parse ``.tir`` text into an IRModule (a bare prim_func is wrapped under its name)."""
    from tilelang.parser import parse as _parse

    return _parse(text, path)


def parse_file(path) -> IRModule:
    """Parse a ``.tir`` file into an IRModule."""
    from tilelang.parser import parse_file as _parse_file

    return _parse_file(path)


__all__ = [
    "ir", "IRModule", "PrimFunc", "parse", "parse_file", "ArgumentError", "BuildError",
    "ScheduleError", "TileLangError", "TIRSyntaxError", "TIRTypeError",
]  # fmt: skip

"""The C backend (target ``"c"``): readable C99, compiled by the system compiler.

``build(lowered_mod, target, extern_sources=(), extern_headers=(), libs=())`` returns a
:class:`CModule`. :class:`CLikePrinter` is the base of every C-like printer (the CUDA
backend subclasses it and changes class attributes).
"""

from tilelang.backends.c.build import CModule, build
from tilelang.backends.c.c_printer import CLikePrinter, c_float_literal, c_string
from tilelang.backends.c.codegen_c import CPrinter, CSource, generate_c, header_text
from tilelang.backends.c.names import ScopedNames, sanitize

__all__ = [
    "build", "CModule", "CLikePrinter", "CPrinter", "CSource", "generate_c", "header_text",
    "ScopedNames", "sanitize", "c_float_literal", "c_string",
]  # fmt: skip

"""Code that ``T.call_extern`` calls: extern C sources and libraries.

The same build options as the C backend: ``extern_sources`` (C files, objects, or C
source text) are compiled into one shared library, cached by content like every
other artifact; ``libs`` are libraries by name (``"m"``, ``"-lfoo"``) or path. Each
is loaded into the process with ``load_library_permanently`` so that MCJIT resolves
the extern symbols against it, and each is linked into exported shared libraries.
"""

from __future__ import annotations

import ctypes.util
from pathlib import Path

from tilelang.errors import BuildError
from tilelang.runtime.compiler import compile_extern_library

from .jit import load_library


def resolve_library(lib) -> str:
    """A path ``load_library_permanently`` accepts for ``"m"``, ``"-lm"`` or a path."""
    text = str(lib)
    if "/" in text or text.endswith((".so", ".dylib")):
        path = Path(text)
        if not path.exists():
            raise BuildError(f"library {text} does not exist")
        return str(path.resolve())
    name = text[2:] if text.startswith("-l") else text
    found = ctypes.util.find_library(name)
    if found is None:
        raise BuildError(f"library {text!r} not found (give its path instead)")
    return found


def load_externs(extern_sources=(), libs=()) -> list[str]:
    """Compile and load what extern calls need; returns the libraries to link."""
    loaded = []
    built = compile_extern_library(extern_sources, "llvm-extern")
    if built is not None:
        loaded.append(str(built))
    loaded.extend(resolve_library(lib) for lib in libs)
    for path in loaded:
        load_library(path)
    return loaded

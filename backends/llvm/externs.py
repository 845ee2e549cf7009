"""Code that ``T.call_extern`` calls: extern C sources and libraries.

The same build options as the C backend: ``extern_sources`` (C files, objects, or C
source text) are compiled into one shared library, cached by content like every
other artifact; ``libs`` are libraries by name (``"m"``, ``"-lfoo"``) or path. Each
is loaded into the process with ``load_library_permanently`` so that MCJIT resolves
the extern symbols against it, and each is linked into exported shared libraries.
"""

from __future__ import annotations

import ctypes.util
import tempfile
from pathlib import Path

from tilelang.errors import BuildError
from tilelang.runtime.cache import content_key, load_or_build
from tilelang.runtime.compiler import compiler_identity, run_compiler

from .jit import load_library

_FILE_SUFFIXES = (".c", ".cc", ".cpp", ".s", ".S", ".o", ".a", ".so")


def _source_inputs(extern_sources, work: Path) -> tuple[list[str], list[bytes]]:
    paths, contents = [], []
    for index, item in enumerate(extern_sources):
        is_path = isinstance(item, Path) or "\n" not in str(item)
        candidate = Path(item) if is_path else None
        if candidate is not None and candidate.suffix in _FILE_SUFFIXES and candidate.exists():
            paths.append(str(candidate.resolve()))
            contents.append(candidate.read_bytes())
            continue
        if isinstance(item, Path):
            raise BuildError(f"extern source {item} does not exist")
        path = work / f"extern_{index}.c"
        path.write_text(str(item))
        paths.append(str(path))
        contents.append(str(item).encode())
    return paths, contents


def compile_sources(extern_sources) -> Path | None:
    """The shared library built from ``extern_sources`` (None when there are none)."""
    if not extern_sources:
        return None
    flags = ["-O3", "-march=native", "-shared", "-fPIC"]
    with tempfile.TemporaryDirectory(prefix="tilelang-llvm-extern-") as work:
        paths, contents = _source_inputs(extern_sources, Path(work))
        key = content_key("llvm-extern", compiler_identity(), " ".join(flags), *contents)

        def produce(output: Path) -> None:
            run_compiler([*flags, "-o", str(output), *paths, "-lm"], "the extern sources")

        _, path, _ = load_or_build("llvm-extern", key, produce)
    return path


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
    built = compile_sources(list(extern_sources))
    if built is not None:
        loaded.append(str(built))
    loaded.extend(resolve_library(lib) for lib in libs)
    for path in loaded:
        load_library(path)
    return loaded

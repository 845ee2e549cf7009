"""Compiling generated C into a shared library and calling it (target ``"c"``).

The library is built with ``cc -O3 -march=native -fopenmp -shared -fPIC -std=c99
-fwrapv -fno-trapping-math`` and, with gcc older than 14, ``-fno-tree-loop-if-convert``
(``-O`` from the target's ``-opt-level``, default 3; the last two work around gcc
miscompiles, see :func:`tilelang.runtime.compiler.generated_c_flags`), cached by the hash of the
source, the extern sources, the compiler's identity and the flags (see
:mod:`tilelang.runtime.cache`), and loaded with ctypes.
"""

from __future__ import annotations

import ctypes
import shutil
import tempfile
from pathlib import Path

from tilelang.backends.c.codegen_c import (
    ERROR_SYMBOL,
    ERROR_VALUES_SYMBOL,
    MAX_ERROR_VALUES,
    CSource,
    generate_c,
    header_text,
)

from tilelang.bounds.report import is_bounds_payload, out_of_bounds_error
from tilelang.errors import AssertionFailure, BuildError
from tilelang.runtime.cache import atomic_write, content_key, load_or_build
from tilelang.runtime.compiler import (
    SHARED_FLAGS,
    compiler_identity,
    extern_inputs,
    generated_c_flags,
    run_compiler,
)
from tilelang.runtime.ctypes_call import make_caller
from tilelang.transform.extern_imports import collect_imports, llvm_ir_objects


class CModule:
    """A compiled C library: ``functions[name](*checked_args)``, ``get_source()``,
    ``export_library(path)``."""

    def __init__(self, lowered_mod, source: CSource, lib: ctypes.CDLL, path: Path, cached: bool):
        self.source, self.library_path, self.was_cached = source, path, cached
        self._lib = lib  # keeps the library loaded while the module lives
        after_call = _error_check(lib) if source.has_asserts else None
        self.functions = {
            name: make_caller(getattr(lib, symbol), lowered_mod[name], after_call)
            for name, symbol in source.symbols.items()
        }

    def get_source(self, fmt: str = "") -> str:
        """The C source (``fmt="h"``: the header declaring the exported functions)."""
        if fmt in ("", "c"):
            return self.source.text
        if fmt == "h":
            return header_text(self.source, self.library_path.stem)
        raise BuildError(f"the C module has sources 'c' and 'h', not {fmt!r}")

    def export_library(self, path: Path) -> None:
        """Copy the shared library to ``path`` and write ``path`` with suffix ``.h``."""
        path = Path(path)
        atomic_write(path, lambda tmp: shutil.copyfile(self.library_path, tmp))
        header = path.with_suffix(".h")
        text = header_text(self.source, path.stem)
        atomic_write(header, lambda tmp: tmp.write_text(text))


def _error_check(lib):
    last_error = getattr(lib, ERROR_SYMBOL)
    last_error.restype = ctypes.c_char_p
    last_error.argtypes = []
    last_values = getattr(lib, ERROR_VALUES_SYMBOL)
    last_values.restype = ctypes.c_int
    last_values.argtypes = [ctypes.POINTER(ctypes.c_int64)]

    def check():
        message = last_error()
        if message is None:
            return
        text = message.decode(errors="replace")
        if is_bounds_payload(text):
            values = (ctypes.c_int64 * MAX_ERROR_VALUES)()
            count = last_values(values)
            raise out_of_bounds_error(text, values[:count])
        raise AssertionFailure(f"assertion failed in compiled code: {text}")

    return check


def _lib_flags(libs) -> list[str]:
    flags = []
    for lib in libs:
        text = str(lib)
        if text.startswith("-"):
            flags.append(text)
        elif "/" in text or text.endswith((".so", ".a")):
            flags.append(str(Path(text).resolve()))
        else:
            flags.append(f"-l{text}")
    return flags


def build(lowered_mod, target, *, extern_sources=(), extern_headers=(), libs=()) -> CModule:
    """Generate C for ``lowered_mod``, compile it (or reuse the cached library), load it.

    ``extern_sources``: C files or C source strings compiled into the library (the
    bodies of ``call_extern`` functions); ``extern_headers``: headers to include (which
    then declare the extern functions instead of generated prototypes); ``libs``:
    libraries to link (``"m"``, ``"-lfoo"`` or a path).
    """
    source = generate_c(lowered_mod, target, extern_headers)
    opt_level = int(target.get("opt-level", 3))
    flags = [f"-O{opt_level}", *SHARED_FLAGS, *generated_c_flags()]
    symbols = list(source.symbols.values())
    if source.has_asserts:
        symbols += [ERROR_SYMBOL, ERROR_VALUES_SYMBOL]
    with tempfile.TemporaryDirectory(prefix="tilelang-c-") as work:
        work = Path(work)
        imports = collect_imports(lowered_mod)
        extern_paths, extern_contents = extern_inputs([*extern_sources, *imports.c_sources], work)
        extern_paths += llvm_ir_objects(imports.llvm_modules, work)
        extern_contents += [text.encode() for text in imports.llvm_modules]
        link = [*_lib_flags(libs), "-lm"]
        main = work / "module.c"
        main.write_text(source.text)
        key = content_key(source.text, compiler_identity(), " ".join(flags + link),
                          *extern_contents)  # fmt: skip

        def produce(output: Path) -> None:
            args = [*flags, "-o", str(output), str(main), *extern_paths, *link]
            run_compiler(args, "C", generated=(main.name, source.text))

        lib, path, cached = load_or_build("c", key, produce, symbols)
    return CModule(lowered_mod, source, lib, path, cached)


__all__ = ["build", "CModule"]

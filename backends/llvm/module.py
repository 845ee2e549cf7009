"""The backend module the runtime wraps: compiled functions and their code as text."""

from __future__ import annotations

import ctypes
from pathlib import Path

from tilelang.bounds.report import is_bounds_payload, out_of_bounds_error
from tilelang.errors import AssertionFailure, BuildError
from tilelang.runtime.ctypes_call import function_type, make_caller

from . import jit
from .codegen import ERROR_SLOT, ERROR_VALUES, MAX_ERROR_VALUES


class LLVMModule:
    """Native code for a lowered IRModule, linked into the process.

    ``functions[name](*checked_args)`` runs a function (see :mod:`tilelang.runtime`);
    ``get_source("ll")`` is the optimised LLVM IR, ``get_source("ll-unopt")`` the IR as
    generated, ``get_source("asm")`` the assembly; ``emit("obj")`` / ``emit("so")``
    give an object file or a shared library as bytes, and ``export_library(path)``
    writes one (by the suffix: ``.o`` or ``.so``).
    """

    def __init__(self, ir_text: str, options, funcs: dict, externs, uses_openmp: bool, libs=()):
        self.ir_text = ir_text
        self.options = options
        self.libs = tuple(libs)
        self.object_code = jit.compile_object(ir_text, options)
        jit.check_symbols(externs, uses_openmp)
        self._loaded = jit.LoadedObject(self.object_code, options)
        self._error_slot = ctypes.c_void_p.from_address(self._loaded.global_address(ERROR_SLOT))
        self._error_values = (ctypes.c_int64 * MAX_ERROR_VALUES).from_address(
            self._loaded.global_address(ERROR_VALUES)
        )
        self.functions = {}
        for name, (symbol, func) in funcs.items():
            cfunc = function_type(func)(self._loaded.address(symbol))
            self.functions[name] = make_caller(cfunc, func, after_call=self._raise_recorded_error)
        self._optimized_ir = None

    def _raise_recorded_error(self) -> None:
        address = self._error_slot.value
        if address:
            self._error_slot.value = None
            message = ctypes.string_at(address).decode(errors="replace")
            if is_bounds_payload(message):
                raise out_of_bounds_error(message, list(self._error_values))
            raise AssertionFailure(f"assertion failed in compiled code: {message}")

    def _optimized(self):
        if self._optimized_ir is None:
            self._optimized_ir = jit.optimize(
                jit.prepare_module(self.ir_text, self.options), self.options
            )
        return self._optimized_ir

    def get_source(self, fmt: str = "") -> str:
        """``"ll"`` (default): optimised LLVM IR; ``"ll-unopt"``: the generated IR;
        ``"asm"``: assembly for the target CPU."""
        if fmt in ("", "ll", "llvm"):
            return str(self._optimized())
        if fmt == "ll-unopt":
            return self.ir_text
        if fmt in ("asm", "s"):
            return jit.target_machine(self.options).emit_assembly(self._optimized())
        if fmt in ("obj", "o", "so"):
            raise BuildError(f"{fmt!r} is binary: use emit({fmt!r}) or export_library(path)")
        raise BuildError(f"unknown source format {fmt!r} for llvm; use 'll', 'll-unopt' or 'asm'")

    def emit(self, fmt: str) -> str | bytes:
        """The module as ``"ll"``/``"asm"`` text or ``"obj"``/``"so"`` bytes."""
        if fmt in ("obj", "o"):
            return self.object_code
        if fmt == "so":
            with _temporary_path(".so") as path:
                jit.link_shared(self.object_code, path, self.libs)
                return path.read_bytes()
        return self.get_source(fmt)

    def export_library(self, path: Path) -> None:
        """Write an object file (``.o``) or a shared library (anything else)."""
        path = Path(path)
        if path.suffix == ".o":
            path.write_bytes(self.object_code)
        else:
            jit.link_shared(self.object_code, path, self.libs)


class _temporary_path:
    def __init__(self, suffix):
        import tempfile

        self._dir = tempfile.TemporaryDirectory()
        self.path = Path(self._dir.name) / f"module{suffix}"

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        self._dir.cleanup()

"""The LLVM backend: lowered IR to native code through llvmlite.

``build(lowered_mod, target)`` is registered as the ``"llvm"`` target::

    lib = tilelang.build(mod, target="llvm -num-cores=2")
    lib["mm_relu"](a, b, c)
    print(lib.get_source("asm"))

Pipeline: :mod:`.codegen` writes ``llvmlite.ir`` (vector IR for ``T.vectorized``,
OpenMP outlining for ``T.parallel``, inline math kernels from :mod:`.vector_math`, a
``noalias`` copy of functions for calls whose buffers are disjoint from
:mod:`.alias_versioning`), :mod:`.jit` verifies, optimises at -O3 for the host CPU
(or ``-mcpu``/``-mattr``), emits an object (cached by content hash) and links it into
the process with MCJIT; :mod:`.module` exposes the functions with the
runtime's calling convention. Options are listed in :mod:`.options`.
"""

from __future__ import annotations

from tilelang.backends.c.names import export_symbols

from tilelang.ir.function import PrimFunc
from tilelang.transform.extern_imports import collect_imports, link_llvm_imports, parse_llvm_import
from tilelang.transform.legalize_bf16 import legalize_bf16_module
from tilelang.transform.verify_lowered import verify_lowered

from .alias_versioning import add_versioned_function
from .codegen import CodeGenLLVM, constant_extent
from .externs import load_externs
from .jit import load_library
from .module import AssertionFailure, LLVMModule
from .options import LLVMOptions, options_from_target


def generate_ir(lowered_mod, options: LLVMOptions) -> tuple[CodeGenLLVM, dict]:
    """The codegen holding ``lowered_mod`` as LLVM IR, and ``name -> (symbol, func)``."""
    verify_lowered(lowered_mod, "llvm")
    lowered_mod = legalize_bf16_module(lowered_mod)
    codegen = CodeGenLLVM(options)
    prim_funcs = [(n, f) for n, f in lowered_mod.functions.items() if isinstance(f, PrimFunc)]
    funcs = {}
    symbols = export_symbols(prim_funcs)
    codegen.subroutines = {name: (s, lowered_mod.functions[name]) for name, s in symbols.items()}
    for name, symbol in symbols.items():
        func = lowered_mod.functions[name]
        add_versioned_function(codegen, symbol, func, constant_extent)
        funcs[name] = (symbol, func)
    return codegen, funcs


def build(lowered_mod, target=None, *, extern_sources=(), libs=()) -> LLVMModule:
    """Compile a lowered IRModule for ``target`` (a Target of kind ``"llvm"``).

    As for the C backend, ``extern_sources`` are C files or C source text compiled
    into a library, and ``libs`` libraries (``"m"``, ``"-lfoo"`` or a path), holding
    the functions ``T.call_extern`` calls.
    """
    imports = collect_imports(lowered_mod)
    libs = load_externs([*extern_sources, *imports.c_sources], libs)
    options = options_from_target(target)
    codegen, funcs = generate_ir(lowered_mod, options)
    ir_text = link_llvm_imports(str(codegen.module), imports.llvm_modules)
    externs = [
        fn.name
        for fn in parse_llvm_import(ir_text).functions
        if fn.is_declaration and not fn.name.startswith("llvm.")
    ]
    return LLVMModule(ir_text, options, funcs, externs, codegen.uses_openmp, libs)


__all__ = ["build", "generate_ir", "load_library", "LLVMModule", "LLVMOptions", "AssertionFailure"]

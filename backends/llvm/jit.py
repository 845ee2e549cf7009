"""Optimising, compiling, caching and loading LLVM modules.

``compile_object(ir_text, options)`` is the whole native pipeline: parse and verify
the IR, run LLVM's new pass manager at ``-O<opt_level>`` (loop and SLP vectorisation,
unrolling) for the host CPU and its features, and emit an object file. Objects are
cached under ``<cache_dir>/llvm/<key>.o``, keyed by a hash of the IR text, the options
and the LLVM version, and written atomically; a warm build skips LLVM entirely.

``load_object(obj)`` links an object into the process with MCJIT. Code is generated
position independent, so the same object also links into a shared library
(:func:`link_shared`).
"""

from __future__ import annotations

import ctypes.util
import functools
import subprocess
import tempfile
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

from tilelang.errors import BuildError
from tilelang.runtime.cache import atomic_write, cache_dir, content_key
from tilelang.runtime.compiler import run_compiler
from tilelang.runtime.externs import declare_library

from .options import LLVMOptions


@functools.cache
def _initialise() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def target_machine(options: LLVMOptions) -> llvm.TargetMachine:
    """A new TargetMachine for ``options`` (an ExecutionEngine takes ownership of its
    TargetMachine, so each engine gets its own)."""
    _initialise()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=options.cpu,
        features=options.features,
        opt=options.opt_level,
        reloc="pic",
        codemodel="default",
    )


@functools.cache
def _shared_machine(options: LLVMOptions) -> llvm.TargetMachine:
    return target_machine(options)


def prepare_module(ir_text: str, options: LLVMOptions) -> llvm.ModuleRef:
    """``ir_text`` parsed, verified, and set to the target's triple and data layout."""
    _initialise()
    try:
        module = llvm.parse_assembly(ir_text)
        module.verify()
    except RuntimeError as exc:
        raise BuildError(f"the llvm backend produced invalid IR: {exc}") from exc
    machine = _shared_machine(options)
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    return module


def optimize(module: llvm.ModuleRef, options: LLVMOptions) -> llvm.ModuleRef:
    """Run the -O pipeline with loop and SLP vectorisation on ``module`` (in place)."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=options.opt_level)
    vectorise = options.opt_level >= 2
    tuning.loop_vectorization = vectorise
    tuning.slp_vectorization = vectorise
    tuning.loop_unrolling = options.opt_level >= 1
    tuning.loop_interleaving = vectorise
    builder = llvm.create_pass_builder(_shared_machine(options), tuning)
    builder.getModulePassManager().run(module, builder)
    return module


def cache_key(ir_text: str, options: LLVMOptions) -> str:
    """The object cache key: everything that changes the machine code."""
    version = ".".join(map(str, llvm.llvm_version_info))
    return content_key("llvm-object", ir_text, options.key(), version, llvmlite.__version__)


def compile_object(ir_text: str, options: LLVMOptions) -> bytes:
    """The object code of ``ir_text``, from the cache when it has been built before."""
    path = cache_dir() / "llvm" / f"{cache_key(ir_text, options)}.o"
    try:
        return path.read_bytes()
    except OSError:
        pass
    module = optimize(prepare_module(ir_text, options), options)
    obj = _shared_machine(options).emit_object(module)
    try:
        atomic_write(path, lambda tmp: tmp.write_bytes(obj))
    except OSError:
        pass  # a read-only cache must not stop a build
    return obj


_OPENMP_HANDLES: list = []


@functools.cache
def _load_openmp() -> None:
    path = ctypes.util.find_library("gomp")
    if path is None:
        try:
            found = subprocess.run(
                ["cc", "-print-file-name=libgomp.so"], capture_output=True, text=True, timeout=60
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            found = ""
        path = found if found and Path(found).is_absolute() else None
    if path is None:
        raise BuildError("parallel loops need libgomp (OpenMP), which was not found")
    llvm.load_library_permanently(path)
    # A handle of our own that is never closed: llvmlite dlcloses its handles when the
    # process exits, and unmapping libgomp under its still-running worker threads
    # (OMP_WAIT_POLICY=ACTIVE keeps them spinning) crashed the exit with SIGSEGV.
    _OPENMP_HANDLES.append(ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL))


def load_library(path) -> None:
    """Make the symbols of the shared library ``path`` visible to ``call_extern``."""
    try:
        llvm.load_library_permanently(str(path))
    except RuntimeError as exc:
        raise BuildError(f"cannot load the library {path}: {exc}") from exc
    declare_library(path)


def check_symbols(names, uses_openmp: bool) -> None:
    """Fail with a BuildError, not an abort inside LLVM, when an external function
    cannot be resolved."""
    if uses_openmp:
        _load_openmp()
    process = ctypes.CDLL(None)  # what MCJIT also searches: the process and RTLD_GLOBAL libraries
    missing = [n for n in names if not (llvm.address_of_symbol(n) or hasattr(process, n))]
    if missing:
        raise BuildError(
            f"external function(s) {', '.join(missing)} not found in the process; load "
            "their library first with tilelang.backends.llvm.load_library(path) "
            "(or pass libs=[...] to build)"
        )


class LoadedObject:
    """An object file linked into the process; keeps its code alive."""

    def __init__(self, obj: bytes, options: LLVMOptions):
        _initialise()
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine(options))
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def address(self, symbol: str) -> int:
        address = self.engine.get_function_address(symbol)
        if not address:
            raise BuildError(f"the compiled object has no function {symbol!r}")
        return address

    def global_address(self, symbol: str) -> int:
        return self.engine.get_global_value_address(symbol)


def link_shared(obj: bytes, path: Path, libs=()) -> None:
    """Link ``obj`` into the shared library ``path`` with the system ``cc``."""
    with tempfile.TemporaryDirectory() as tmp:
        obj_path = Path(tmp) / "module.o"
        obj_path.write_bytes(obj)

        def produce(out: Path) -> None:
            extra = [str(lib) for lib in libs]
            run_compiler(
                ["-shared", "-o", str(out), str(obj_path), *extra, "-lgomp", "-lm"],
                "the llvm object",
            )

        atomic_write(Path(path), produce)

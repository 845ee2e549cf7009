"""``tilec --emit cuda | ptx | cubin``: the CUDA backend's command-line emitters.

Each takes the parsed module and the command-line arguments (``args.target``, when the
driver has that option, else ``cuda -arch=sm_90``) and returns the CUDA source, the
PTX text, or the cubin's bytes. None of them needs a GPU.
"""

from __future__ import annotations

from tilelang.backends.cuda.codegen_cuda import generate_cuda
from tilelang.backends.cuda.nvcc import compile_cuda, nvcc_flags

from tilelang.errors import BuildError
from tilelang.target import Target

DEFAULT_TARGET = "cuda -arch=sm_90"


def _target(args) -> Target:
    spec = getattr(args, "target", None) or DEFAULT_TARGET
    target = Target(spec)
    if target.kind != "cuda":
        target = Target(DEFAULT_TARGET)  # --target names another backend: CUDA defaults
    return target


def cuda_source(module, target) -> str:
    """The CUDA source of ``module`` (lowered first)."""
    from tilelang.runtime.build import lower_module

    return generate_cuda(lower_module(module), target).text


def emit_cuda(module, args) -> str:
    """The generated CUDA C++ source."""
    return cuda_source(module, _target(args))


def emit_ptx(module, args) -> str:
    """The PTX nvcc makes of the generated source."""
    target = _target(args)
    return compile_cuda(cuda_source(module, target), nvcc_flags(target), "ptx").data.decode()


def emit_cubin(module, args) -> bytes:
    """The cubin (binary) nvcc makes of the generated source."""
    target = _target(args)
    if not getattr(args, "output", None):
        raise BuildError("--emit cubin writes a binary file: give it with -o FILE.cubin")
    return compile_cuda(cuda_source(module, target), nvcc_flags(target), "cubin").data


__all__ = ["emit_cuda", "emit_ptx", "emit_cubin", "cuda_source"]

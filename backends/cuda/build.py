"""``build`` for target ``"cuda"``: CUDA source, an nvcc-compiled cubin, a module."""

from __future__ import annotations

from tilelang.backends.cuda.codegen_cuda import generate_cuda
from tilelang.backends.cuda.module import CudaModule
from tilelang.backends.cuda.nvcc import cached_cubin, nvcc_flags


def build(lowered_mod, target) -> CudaModule:
    """Generate CUDA for ``lowered_mod``, compile it with ``nvcc -cubin`` for the
    target's ``-arch`` (default ``sm_90``; the cubin is cached by content hash) and
    return the module. No GPU is needed until a function is called."""
    source = generate_cuda(lowered_mod, target)
    path, log, cached = cached_cubin(source.text, nvcc_flags(target))
    return CudaModule(lowered_mod, source, path, log, cached)


__all__ = ["build"]

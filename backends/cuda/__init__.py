"""The CUDA backend (target ``"cuda"``, options ``-arch=sm_90``, ``-opt-level=3``,
``-fast-math``).

``build(lowered_mod, target)`` inserts barriers (:mod:`tilelang.transform.thread_sync`),
splits each function into kernels (:mod:`.split`), prints CUDA C
(:mod:`.codegen_cuda`), compiles it ahead of time with ``nvcc -cubin`` (cached by
content hash; no GPU needed) and returns a :class:`CudaModule` whose functions load the
cubin on their first call and launch the kernels through pycuda, cuda-python or CuPy
(:mod:`.launchers`).
"""

from tilelang.backends.cuda.build import build
from tilelang.backends.cuda.codegen_cuda import CUDAPrinter, CudaSource, generate_cuda
from tilelang.backends.cuda.launchers import available_launchers, get_launcher
from tilelang.backends.cuda.module import CudaFunction, CudaModule, CudaTimeEvaluator
from tilelang.backends.cuda.nvcc import compile_cuda, nvcc_flags
from tilelang.backends.cuda.split import split_host_device

__all__ = [
    "build", "CudaModule", "CudaFunction", "CudaTimeEvaluator", "CUDAPrinter", "CudaSource",
    "generate_cuda", "split_host_device", "compile_cuda", "nvcc_flags", "get_launcher",
    "available_launchers",
]  # fmt: skip

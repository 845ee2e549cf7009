"""Running generated CUDA kernels on the CPU, for tests on machines without a GPU.

The CUDA backend's source is C++ with a few CUDA words; with those words defined
(``__global__`` as nothing, ``threadIdx``/``blockIdx`` as host variables) the host C++
compiler builds it into a program (:class:`HostProgram`) that calls each kernel once
per (block, thread) index, one after another. That is faithful for kernels whose
threads do not cooperate (no barriers, no shared memory), which is what the integer
semantics tests need: the arithmetic text nvcc would compile is compiled and run, with
``-fsanitize=undefined`` so that any undefined behaviour the text still has (a signed
overflow, a shift of a negative value) stops the run instead of passing by luck.

Kernels whose threads cooperate (``__shared__`` arrays, ``__syncthreads()``, warp
shuffles: a cross-thread reduction's allreduce) run *threaded* (:data:`_THREADED`):
the thread blocks one after another, the threads of a block each a host thread.
``__shared__`` is a ``static`` array (one block runs at a time), ``__syncthreads()``
a ``std::barrier`` of the block, ``__syncwarp()`` one of the warp (the threads of a
partial warp), and ``__shfl_sync`` / ``__shfl_down_sync`` exchange values through
per-warp slots between two warp barriers, with CUDA's rule that a source lane past
``width`` gives the lane its own value. Every lane of a warp must take part in each
shuffle, as the backend's helpers do. The tensor-core helpers (inline PTX) and
``nvcuda::wmma`` get host stand-ins (:mod:`tilelang.testing.cuda_host_prelude`); any
other inline PTX is refused with a ValueError.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np

from tilelang.ir import expr as E
from tilelang.testing.cuda_host_prelude import BF16 as _BF16
from tilelang.testing.cuda_host_prelude import HALF as _HALF
from tilelang.testing.cuda_host_prelude import PRELUDE as _PRELUDE
from tilelang.testing.cuda_host_prelude import THREADED as _THREADED
from tilelang.testing.cuda_host_prelude import WMMA as _WMMA
from tilelang.testing.cuda_host_prelude import host_helpers

#: words of kernels whose threads cooperate: they run threaded
COOPERATIVE = (
    "__shared__", "__syncthreads", "__shfl", "tl_block_allreduce", "tl_mma_", "nvcuda::wmma"
)  # fmt: skip

SANITIZE = ["-fsanitize=undefined", "-fno-sanitize-recover=all"]


class HostRunError(RuntimeError):
    """The emulated kernels failed (undefined behaviour found by the sanitizer), or
    the host compiler refused their text."""


def host_compiler() -> str | None:
    """The C++ compiler used (``c++`` or ``g++`` on the PATH), or None."""
    return shutil.which("c++") or shutil.which("g++")


class HostProgram:
    """The kernels of one CUDA build compiled into a host executable; :meth:`run` runs
    one PrimFunc of it on NumPy arrays (in a child process: the sanitizer aborts)."""

    def __init__(self, cuda_module, folder, flags=("-O2",)):
        backend = getattr(cuda_module, "backend_module", cuda_module)
        source = backend.get_source()
        #: whether the threads of a block run as host threads (see the module docstring)
        self.threaded = any(word in source for word in COOPERATIVE)
        self.folder = Path(folder)
        self.functions = backend.functions
        cpp = self.folder / "kernels.cpp"
        source = source.replace("#include <cuda_bf16.h>", _BF16)
        source = source.replace("#include <cuda_fp16.h>", _HALF)
        if self.threaded:
            source = host_helpers(source).replace("#include <mma.h>", _WMMA)
        if re.search(r"\basm\b", source):
            raise ValueError("the host emulation runs no inline PTX but the tensor-core helpers'")
        prelude = _PRELUDE + (_THREADED if self.threaded else "")
        cpp.write_text(prelude + source + _main(backend.functions, self.threaded))
        self.executable = self.folder / "kernels"
        command = [host_compiler(), "-std=c++20", "-pthread", *flags, "-fno-strict-aliasing",
                   *SANITIZE, "-o", str(self.executable)]  # fmt: skip
        done = subprocess.run([*command, str(cpp)], capture_output=True, text=True)
        if done.returncode != 0:
            raise HostRunError(f"the host compiler refused {cpp}:\n{done.stderr[-4000:]}")

    def run(self, name: str, arrays: list) -> None:
        """Runs PrimFunc ``name`` on ``arrays`` (its parameters' arrays, in order),
        writing results back into them."""
        for index, array in enumerate(arrays):
            np.ascontiguousarray(array).tofile(self.folder / f"arg{index}.bin")
        done = subprocess.run(
            [str(self.executable), name, str(self.folder)], capture_output=True, text=True,
            timeout=600,  # a barrier not every thread reaches would hang
        )  # fmt: skip
        if done.returncode != 0:
            raise HostRunError(f"{name} failed on the host: {done.stderr.strip()}")
        for index, array in enumerate(arrays):
            array[...] = np.fromfile(self.folder / f"arg{index}.bin", dtype=array.dtype).reshape(
                array.shape
            )


def _main(functions, threaded: bool = False) -> str:
    """A ``main(name, folder)`` that loads the arrays, runs ``name``'s kernels over
    their grids (each block's threads as host threads when ``threaded``) and writes
    the arrays back."""
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <string.h>",
        "static char* tl_load(const char* folder, int i, long* size) {",
        '  char path[4096]; snprintf(path, sizeof path, "%s/arg%d.bin", folder, i);',
        '  FILE* f = fopen(path, "rb"); fseek(f, 0, SEEK_END); *size = ftell(f);',
        "  fseek(f, 0, SEEK_SET); char* data = (char*)malloc(*size + 1);",
        "  if (fread(data, 1, *size, f) != (size_t)*size) exit(3); fclose(f); return data;",
        "}",
        "static void tl_store(const char* folder, int i, char* data, long size) {",
        '  char path[4096]; snprintf(path, sizeof path, "%s/arg%d.bin", folder, i);',
        '  FILE* f = fopen(path, "wb"); fwrite(data, 1, size, f); fclose(f);',
        "}",
        "int main(int argc, char** argv) {",
        "  if (argc != 3) return 2;",
    ]
    for name, function in functions.items():
        count = len(function.params)
        position = {}
        for index, param in enumerate(function.params):
            buffer = function.buffer_map.get(param)
            if buffer is not None:
                position[id(buffer.data)] = (index, buffer.dtype)
        lines.append(f'  if (strcmp(argv[1], "{name}") == 0) {{')
        lines.append(f"    char* a[{count}]; long n[{count}];")
        lines.append(f"    for (int i = 0; i < {count}; ++i) a[i] = tl_load(argv[2], i, &n[i]);")
        workspaces = {}  # id(data var) -> the C name of a zeroed host allocation
        for w, space in enumerate(function.device.workspaces):
            elements = 1
            for extent in space.extents:
                if not isinstance(extent, E.IntImm):
                    raise ValueError("the host emulation needs constant workspace sizes")
                elements *= extent.value
            c_type = _C_TYPES[str(space.dtype.element_of())]
            workspaces[id(space.var)] = f"(({c_type}*)w{w})"
            lines.append(f"    char* w{w} = (char*)calloc({elements}, sizeof({c_type}));")
        for kernel in function.device.kernels:
            arguments = []
            for var in kernel.params:
                if id(var) in workspaces:
                    arguments.append(workspaces[id(var)])
                    continue
                if id(var) not in position:
                    raise ValueError(f"kernel parameter {var.name} is not a buffer of {name}")
                index, dtype = position[id(var)]
                arguments.append(f"({_C_TYPES[str(dtype.element_of())]}*)a[{index}]")
            grid = []
            for extent in kernel.grid:
                if not isinstance(extent, E.IntImm):
                    raise ValueError("the host emulation needs a constant grid")
                grid.append(extent.value)
            names = ("bz", "by", "bx") if threaded else ("bz", "by", "bx", "tz", "ty", "tx")
            for variable, extent in zip(names, (*grid[::-1], *kernel.block[::-1])):
                lines.append(
                    f"    for (unsigned {variable} = 0; {variable} < {extent}u; ++{variable})"
                )
            call = f"{kernel.name}({', '.join(arguments)});"
            if threaded:
                x, y, z = kernel.block
                lines.append(
                    f"      tl_run_block(bx, by, bz, tl_dim3{{{x}, {y}, {z}}}, [&] {{ {call} }});"
                )
            else:
                lines.append(f"    {{ tl_set_index(bx, by, bz, tx, ty, tz); {call} }}")
        lines.append(f"    for (int i = 0; i < {count}; ++i) tl_store(argv[2], i, a[i], n[i]);")
        lines.append("    return 0;")
        lines.append("  }")
    lines += ["  return 2;", "}"]
    return "\n" + "\n".join(lines) + "\n"


_C_TYPES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "float32": "float", "float64": "double",
    "bfloat16": "__nv_bfloat16", "float16": "half",
}  # fmt: skip

__all__ = ["HostProgram", "HostRunError", "host_compiler"]

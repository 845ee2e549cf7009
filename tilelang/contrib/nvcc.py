"""``compile_cuda``: CUDA source compiled by nvcc (TVM's ``tvm.contrib.nvcc``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tilelang.contrib.utils import tempdir
from tilelang.errors import BuildError


def find_nvcc(required: bool = True) -> str | None:
    """The nvcc executable (None, or a BuildError when ``required``)."""
    found = shutil.which("nvcc")
    if found is None and Path("/usr/local/cuda/bin/nvcc").exists():
        found = "/usr/local/cuda/bin/nvcc"
    if found is None and required:
        raise BuildError("nvcc was not found (install the CUDA toolkit or put nvcc on PATH)")
    return found


def compile_cuda(code: str, target_format: str = "ptx", arch=None, options=None,
                 path_target: str | None = None) -> bytes:  # fmt: skip
    """``code`` compiled by nvcc to ``target_format`` (``"ptx"``, ``"cubin"`` or
    ``"fatbin"``) for ``arch`` (``"sm_80"`` or a list of them); returns the bytes."""
    if target_format not in ("ptx", "cubin", "fatbin"):
        raise ValueError(f"target_format must be ptx, cubin or fatbin, not {target_format!r}")
    nvcc = find_nvcc()
    work = tempdir()
    source = work.relpath("kernel.cu")
    Path(source).write_text(code)
    target = path_target or work.relpath(f"kernel.{target_format}")
    archs = [arch] if isinstance(arch, str) else list(arch or [])
    command = [nvcc, f"--{target_format}", "-O3", *(f"-arch={a}" for a in archs)]
    command += [*(options or []), "-o", target, source]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"nvcc failed ({' '.join(command)}):\n{result.stderr}")
    return Path(target).read_bytes()

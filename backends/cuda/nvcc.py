"""Compiling CUDA source with nvcc: cubin and PTX, ahead of time (no GPU needed).

``nvcc -cubin -arch=sm_90 -O3 [--use_fast_math]``; the cubin is cached under
``<cache>/cuda/<key>.cubin`` by the hash of the source, nvcc's identity and the flags,
written atomically, with its SHA-256 and nvcc's messages (warnings) next to it.
A failure raises :class:`BuildError` with nvcc's message and the generated lines it
points at.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path

import attrs

from tilelang.errors import BuildError
from tilelang.runtime.cache import atomic_write, cache_dir, content_key
from tilelang.runtime.compiler import run_tool, tool_version

_ARCH = re.compile(r"(sm|compute)_\d+[af]?")


def nvcc_command() -> list[str]:
    """``$NVCC`` (may carry flags), else ``nvcc`` on the PATH or in ``$CUDA_HOME/bin``."""
    if os.environ.get("NVCC"):
        return shlex.split(os.environ["NVCC"])
    found = shutil.which("nvcc")
    if found is None:
        home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
        candidate = Path(home) / "bin" / "nvcc"
        found = str(candidate) if candidate.exists() else None
    if found is None:
        raise BuildError("nvcc was not found (set $NVCC or put the CUDA toolkit's bin on PATH)")
    return [found]


def nvcc_identity() -> str:
    """nvcc's ``--version`` text (part of every cache key)."""
    return tool_version(tuple(nvcc_command()), "nvcc")


def nvcc_flags(target) -> list[str]:
    """The flags for ``target`` (``-arch=sm_90`` by default)."""
    arch = str(target.get("arch", "sm_90"))
    if not _ARCH.fullmatch(arch):
        raise BuildError(f"target option -arch={arch} is not a CUDA architecture like sm_90")
    flags = [f"-arch={arch}", f"-O{int(target.get('opt-level', 3))}"]
    if target.get("fast-math"):
        flags.append("--use_fast_math")
    max_registers = target.get("max-registers")
    if max_registers is not None:
        flags.append(f"--maxrregcount={int(max_registers)}")
    return flags


@attrs.frozen
class Compiled:
    """nvcc's output and what it printed (warnings; empty for a clean build)."""

    data: bytes
    log: str


def compile_cuda(source: str, flags: list[str], fmt: str = "cubin") -> Compiled:
    """Run nvcc on ``source`` and return the ``fmt`` (``"cubin"`` or ``"ptx"``) output."""
    if fmt not in ("cubin", "ptx"):
        raise BuildError(f"nvcc output format must be 'cubin' or 'ptx', not {fmt!r}")
    with tempfile.TemporaryDirectory(prefix="tilelang-cuda-") as work:
        work = Path(work)
        main = work / "module.cu"
        main.write_text(source)
        output = work / f"module.{fmt}"
        command = [*nvcc_command(), f"-{fmt}", *flags, "-o", str(output), str(main)]
        log = run_tool(command, "nvcc", "CUDA", generated=(main.name, source), cwd=work)
        return Compiled(output.read_bytes(), log)


def cached_cubin(source: str, flags: list[str]) -> tuple[Path, str, bool]:
    """The cubin of ``source`` from the cache, built when missing or damaged.
    Returns ``(path, nvcc's log, was_cached)``."""
    key = content_key(source, nvcc_identity(), " ".join(flags))
    path = cache_dir() / "cuda" / f"{key}.cubin"
    digest_path = path.with_name(path.name + ".sha256")
    log_path = path.with_name(path.name + ".log")
    if path.exists() and digest_path.exists() and log_path.exists():
        if digest_path.read_text().strip() == _digest(path.read_bytes()):
            return path, log_path.read_text(), True
    compiled = compile_cuda(source, flags, "cubin")
    atomic_write(log_path, lambda tmp: tmp.write_text(compiled.log))
    atomic_write(path, lambda tmp: tmp.write_bytes(compiled.data))
    atomic_write(digest_path, lambda tmp: tmp.write_text(_digest(compiled.data)))
    return path, compiled.log, False


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


__all__ = ["compile_cuda", "cached_cubin", "nvcc_flags", "nvcc_command", "Compiled"]

"""The system C compiler: how it is called, and its identity for cache keys."""

from __future__ import annotations

import functools
import os
import platform
import shlex
import subprocess

from tilelang.errors import BuildError

#: flags of every shared library built from C (the opt level is added separately)
SHARED_FLAGS = ("-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c99", "-Wl,-z,defs")


def cc_command() -> list[str]:
    """The compiler command: ``$CC`` (may carry flags) or ``cc``."""
    return shlex.split(os.environ.get("CC") or "cc")


@functools.cache
def _identity(command: tuple[str, ...]) -> str:
    try:
        out = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"no C compiler: running {' '.join(command)} failed: {exc}") from exc
    return out.stdout.strip() + "\n" + platform.machine()


def compiler_identity() -> str:
    """The compiler's ``--version`` text and the machine (part of every cache key)."""
    return _identity(tuple(cc_command()))


def run_compiler(args: list[str], what: str) -> None:
    """Run ``cc`` with ``args``; a failure raises BuildError with the compiler's output."""
    command = [*cc_command(), *args]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"running the C compiler for {what} failed: {exc}") from exc
    if result.returncode != 0:
        raise BuildError(
            f"the C compiler failed on {what} (exit status {result.returncode}):\n"
            f"$ {shlex.join(command)}\n{result.stderr.strip() or result.stdout.strip()}"
        )


__all__ = ["SHARED_FLAGS", "cc_command", "compiler_identity", "run_compiler"]

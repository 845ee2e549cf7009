"""Calling compilers (the system C compiler, nvcc): identities for cache keys, one way
to run them and report their failures, and extern sources compiled into a library.

Every backend that shells out goes through :func:`run_tool`, so a failure always reads
the same: a :class:`BuildError` with the command, the compiler's messages and the lines
of the generated file they point at.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

from tilelang.errors import BuildError
from tilelang.runtime.cache import content_key, load_or_build

#: flags of every shared library built from C (the opt level is added separately)
#: ``-fwrapv``: signed overflow wraps (two's complement), as on the other backends
SHARED_FLAGS = (
    "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c99", "-fwrapv", "-Wl,-z,defs",
)  # fmt: skip

#: flags of the libraries built from *generated* C (the C backend), after SHARED_FLAGS.
#: ``-fno-trapping-math``: gcc 12.2 at -O3 with AVX-512 (-march=native on an AVX-512
#: CPU) miscompiles float code under conditions: loop if-conversion turns each
#: potentially trapping float op of a conditional block into a masked ``.COND_ADD``
#: (0.0 in the lanes whose condition is false), then replaces a join PHI whose value
#: scalar evolution finds loop invariant by its FIRST argument -- right only in that
#: argument's lanes, so the other paths read 0 (tests/test_gcc_float_if_conversion.py).
#: Without trapping math no float op needs masking and the PHI's argument is computed
#: on every lane. Values are unchanged (only the floating-point exception flags, which
#: nothing generated reads, may differ); of the default builds only layernorm's library
#: changes (its 1/sqrt is hoisted out of an inner loop; benchmarks/bench_c_flags.py).
GENERATED_C_FLAGS = ("-fno-trapping-math",)

#: added for gcc older than 14: ``-fno-tree-loop-if-convert``. gcc before 14 gives the
#: masked loads of if-converted code, when SLP must permute them, the first vector's
#: mask unpermuted (GCC PR 114375, fixed in 14): a padded copy under
#: ``if (2 <= i && i < 8)`` read zeros (tests/test_schedule_decompose_padding.py).
#: Correct C comes first: without if-conversion a loop whose ``?:`` gcc keeps as a
#: branch is not vectorised (C backend, one thread: mm_relu 1.3x slower, depthwise
#: 1.14x, softmax 1.08x; the llvm backend is unaffected).
OLD_GCC_FLAGS = ("-fno-tree-loop-if-convert",)


def generated_c_flags() -> tuple[str, ...]:
    """:data:`GENERATED_C_FLAGS`, and :data:`OLD_GCC_FLAGS` when the C compiler is a
    gcc older than 14 (clang and newer gcc do not need them)."""
    version = tool_version(tuple(cc_command()), "C compiler")
    first = version.splitlines()[0] if version else ""
    is_gcc = "Free Software Foundation" in version and "clang" not in version.lower()
    found = re.search(r"(\d+)\.\d+(?:\.\d+)?\s*$", first)
    if is_gcc and found and int(found.group(1)) < 14:
        return GENERATED_C_FLAGS + OLD_GCC_FLAGS
    return GENERATED_C_FLAGS


#: what an extern source may name when it is a file rather than C source text
FILE_SUFFIXES = (".c", ".cc", ".cpp", ".s", ".S", ".o", ".a", ".so")


def cc_command() -> list[str]:
    """The compiler command: ``$CC`` (may carry flags) or ``cc``."""
    return shlex.split(os.environ.get("CC") or "cc")


@functools.cache
def tool_version(command: tuple[str, ...], tool: str) -> str:
    """``command --version``'s output (once per process); BuildError naming ``tool``
    when it cannot run."""
    try:
        out = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"no {tool}: running {' '.join(command)} --version failed: {exc}") from exc
    return out.stdout.strip()


def compiler_identity() -> str:
    """The compiler's ``--version`` text and the machine (part of every cache key)."""
    return tool_version(tuple(cc_command()), "C compiler") + "\n" + platform.machine()


def run_tool(
    command: list[str],
    tool: str,
    what: str,
    *,
    generated: tuple[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """Run ``command`` (``tool`` compiling ``what``) and return its messages (warnings).

    A failure raises BuildError with the command and the messages; ``generated`` is
    ``(file name, text)`` of the generated file on the command line, whose lines the
    messages point at are quoted after them.
    """
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=cwd)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"running {tool} for {what} failed: {exc}") from exc
    log = (result.stderr + result.stdout).strip()
    if result.returncode != 0:
        message = (
            f"{tool} failed on {what} (exit status {result.returncode}):\n"
            f"$ {shlex.join(command)}\n{log}"
        )
        if generated is not None:
            message = explain(message, *generated, what)
        raise BuildError(message)
    return log


def run_compiler(args: list[str], what: str, *, generated: tuple[str, str] | None = None) -> str:
    """Run ``cc`` with ``args`` through :func:`run_tool`."""
    return run_tool([*cc_command(), *args], "the C compiler", what, generated=generated)


def explain(message: str, filename: str, text: str, language: str) -> str:
    """``message`` followed by the lines of ``text`` (written as ``filename``) that it
    points at, each between its neighbours: ``file:12:`` (gcc, clang) or ``file(12)``
    (nvcc)."""
    lines = text.splitlines()
    pattern = re.compile(re.escape(filename) + r"(?::(\d+)|\((\d+)\))")
    found = {int(m.group(1) or m.group(2)) for m in pattern.finditer(message)}
    numbers = sorted(n for n in found if 1 <= n <= len(lines))
    if not numbers:
        return message
    width = len(str(numbers[-1] + 1))
    shown = ["", f"generated {language} ({filename}):"]
    previous = 0
    for number in numbers:
        for n in range(max(number - 1, previous + 1, 1), min(number + 1, len(lines)) + 1):
            marker = ">" if n == number else " "
            shown.append(f"{marker} {n:>{width}} | {lines[n - 1]}")
            previous = n
    return message + "\n" + "\n".join(shown)


def extern_inputs(extern_sources, work: Path) -> tuple[list[str], list[bytes]]:
    """The paths to put on the compiler's command line for ``extern_sources``, and their
    contents (for cache keys). An item is a path to an existing source, object or
    library file, or C source text (written into ``work``)."""
    paths, contents = [], []
    for index, item in enumerate(extern_sources):
        candidate = Path(item) if isinstance(item, Path) or "\n" not in str(item) else None
        if candidate is not None and candidate.suffix in FILE_SUFFIXES and candidate.exists():
            paths.append(str(candidate.resolve()))
            contents.append(candidate.read_bytes())
            continue
        if isinstance(item, Path):
            raise BuildError(f"extern source {item} does not exist")
        path = work / f"extern_{index}.c"
        path.write_text(str(item))
        paths.append(str(path))
        contents.append(str(item).encode())
    return paths, contents


def compile_extern_library(extern_sources, kind: str) -> Path | None:
    """The shared library built from ``extern_sources`` (see :func:`extern_inputs`),
    cached as ``<cache>/<kind>/<key>.so`` by content; None when there are none."""
    extern_sources = list(extern_sources)
    if not extern_sources:
        return None
    flags = ["-O3", "-march=native", "-shared", "-fPIC"]
    with tempfile.TemporaryDirectory(prefix=f"tilelang-{kind}-") as work:
        paths, contents = extern_inputs(extern_sources, Path(work))
        key = content_key(kind, compiler_identity(), " ".join(flags), *contents)

        def produce(output: Path) -> None:
            run_compiler([*flags, "-o", str(output), *paths, "-lm"], "the extern sources")

        _, path, _ = load_or_build(kind, key, produce)
    return path


__all__ = [
    "SHARED_FLAGS", "GENERATED_C_FLAGS", "OLD_GCC_FLAGS", "generated_c_flags", "cc_command",
    "compiler_identity", "tool_version", "run_tool", "run_compiler", "explain",
    "extern_inputs", "compile_extern_library",
]  # fmt: skip

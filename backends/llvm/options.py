"""The llvm target's options, read from a :class:`tilelang.target.Target`.

Options (TVM's spellings)::

    llvm                          host CPU and features, -O3, all cores
    llvm -mcpu=native             the same; -mcpu=skylake-avx512 names another CPU
    llvm -mattr=+avx2,-avx512f    features added to / removed from the CPU's own
    llvm -num-cores=2             threads for parallel loops (TILELANG_NUM_THREADS wins)
    llvm -opt-level=2             optimisation level 0..3 (default 3)
    llvm -fast-math               reassociation and friends on float arithmetic (off)
"""

from __future__ import annotations

import os

import attrs
import llvmlite.binding as llvm

from tilelang.errors import BuildError

_KNOWN = {"mcpu", "mattr", "num-cores", "opt-level", "fast-math", "mtriple", "keys", "tag"}


@attrs.frozen
class LLVMOptions:
    """Everything about a target that changes the machine code (and the cache key)."""

    cpu: str
    features: str
    opt_level: int = 3
    num_threads: int = 0
    fast_math: bool = False

    def key(self) -> str:
        """A stable text of the options, part of the object cache key."""
        return (
            f"{self.cpu}|{self.features}|O{self.opt_level}|t{self.num_threads}|fm{self.fast_math}"
        )


def _host_features() -> dict[str, bool]:
    features = llvm.get_host_cpu_features()
    return {name: bool(enabled) for name, enabled in features.items()}


def _merge_features(base: dict[str, bool], mattr: str) -> str:
    merged = dict(base)
    for item in filter(None, (part.strip() for part in mattr.split(","))):
        if item[0] not in "+-":
            raise BuildError(f"-mattr entries look like +avx2 or -avx512f, not {item!r}")
        merged[item[1:]] = item[0] == "+"
    return ",".join(("+" if on else "-") + name for name, on in sorted(merged.items()))


def _threads(target) -> int:
    env = os.environ.get("TILELANG_NUM_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise BuildError(f"TILELANG_NUM_THREADS must be an integer, not {env!r}") from None
    cores = target.get("num-cores") if target is not None else None
    if cores is not None:
        if int(cores) < 1:
            raise BuildError(f"-num-cores must be at least 1, got {cores}")
        return int(cores)
    return os.cpu_count() or 1


def options_from_target(target) -> LLVMOptions:
    """The :class:`LLVMOptions` of ``target`` (None: the host defaults)."""
    get = target.get if target is not None else (lambda key, default=None: default)
    if target is not None:
        unknown = sorted(k for k in target.options if k.replace("_", "-") not in _KNOWN)
        if unknown:
            known = ", ".join(sorted(_KNOWN))
            raise BuildError(f"unknown llvm target option(s) {', '.join(unknown)}; known: {known}")
    cpu = get("mcpu", "native")
    host = cpu in ("native", True)
    cpu_name = llvm.get_host_cpu_name() if host else str(cpu)
    # The host's own feature list only describes the host CPU; another CPU brings its own.
    base = _host_features() if host else {}
    features = _merge_features(base, str(get("mattr", "") or ""))
    opt_level = int(get("opt-level", 3))
    if not 0 <= opt_level <= 3:
        raise BuildError(f"-opt-level must be 0..3, got {opt_level}")
    return LLVMOptions(
        cpu=cpu_name,
        features=features,
        opt_level=opt_level,
        num_threads=_threads(target),
        fast_math=bool(get("fast-math", False)),
    )

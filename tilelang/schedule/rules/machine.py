"""The few facts about the CPU that size the default schedules: the vector width and
the number of vector registers.

The c and llvm backends compile for the host (``-march=native`` / the host CPU), so the
host's instruction-set flags decide. Callers that need decisions independent of the
host (the golden tests) pass a :class:`Machine` of their own.
"""

from __future__ import annotations

import functools

import attrs


@attrs.frozen
class Machine:
    """``vector_bits`` wide SIMD registers, ``registers`` of them."""

    vector_bits: int
    registers: int

    def lanes(self, dtype) -> int:
        """Elements of ``dtype`` in one vector register (at least 1)."""
        return max(1, self.vector_bits // max(8, dtype.bits * dtype.lanes))


@functools.lru_cache(maxsize=1)
def _host_flags() -> frozenset:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def host_machine() -> Machine:
    """The host CPU: AVX-512 (512 bits, 32 registers), AVX2 (256, 16) or SSE/NEON
    (128, 16)."""
    flags = _host_flags()
    if "avx512f" in flags:
        return Machine(512, 32)
    if "avx2" in flags or "avx" in flags:
        return Machine(256, 16)
    return Machine(128, 16)

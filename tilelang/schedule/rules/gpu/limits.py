"""What a CUDA target allows a default schedule: threads per block, shared memory per
block, the warp size and the compute capability.

Read from the target's options when it gives them (``-max_threads_per_block=1024``,
``-max_shared_memory_per_block=49152``, ``-thread_warp_size=32``, ``-arch=sm_90``, as
TVM's cuda target and its ``nvidia/*`` tags spell them), otherwise the limits every
CUDA GPU since compute capability 3.0 has: 1024 threads, 48 KiB of static shared memory.
"""

from __future__ import annotations

import re

import attrs

DEFAULT_MAX_THREADS = 1024
DEFAULT_MAX_SHARED = 48 * 1024  # static __shared__ arrays are limited to 48 KiB
DEFAULT_WARP = 32


@attrs.frozen
class GpuLimits:
    """Per-block limits of one CUDA target."""

    max_threads_per_block: int = DEFAULT_MAX_THREADS
    max_shared_memory_per_block: int = DEFAULT_MAX_SHARED
    warp_size: int = DEFAULT_WARP
    arch: int = 0  # compute capability as 10*major + minor (90 for sm_90); 0: unknown

    def threads(self, wanted: int) -> int:
        """``wanted`` threads per block, capped by the target (a multiple of the warp)."""
        cap = max(self.warp_size, self.max_threads_per_block // self.warp_size * self.warp_size)
        return max(1, min(wanted, cap))


def _int_option(target, *names):
    for name in names:
        value = target.get(name) if target is not None else None
        if value is not None and value is not True:
            try:
                return int(value)
            except (TypeError, ValueError):
                continue
    return None


def gpu_limits(target=None) -> GpuLimits:
    """The limits of ``target`` (a cuda :class:`~tilelang.target.Target`, its spelling,
    or None for the defaults). Shared memory above 48 KiB needs dynamic allocation,
    which the CUDA backend does not emit, so the schedule budget is capped there."""
    if target is not None and not hasattr(target, "get"):
        from tilelang.target import as_target

        target = as_target(target)
    threads = _int_option(target, "max_threads_per_block", "max-threads-per-block")
    shared = _int_option(target, "max_shared_memory_per_block", "max-shared-memory-per-block")
    warp = _int_option(target, "thread_warp_size", "thread-warp-size")
    arch = 0
    text = target.get("arch") if target is not None else None
    match = re.fullmatch(r"(?:sm|compute)_(\d+)[a-z]?", str(text)) if text else None
    if match:
        arch = int(match.group(1))
    return GpuLimits(
        max_threads_per_block=threads if threads and threads > 0 else DEFAULT_MAX_THREADS,
        max_shared_memory_per_block=min(shared, DEFAULT_MAX_SHARED)
        if shared and shared > 0
        else DEFAULT_MAX_SHARED,
        warp_size=warp if warp and warp > 0 else DEFAULT_WARP,
        arch=arch,
    )

"""Default GPU schedules: the CUDA side of :mod:`tilelang.schedule.rules`.

``default_gpu_schedule(mod, target)`` binds every block of every unscheduled
function to ``blockIdx``/``threadIdx`` so that it builds for CUDA: matmul-like blocks
get SEED §6's shared-memory + register tiling, long reductions with few outputs a
cross-thread reduction through shared memory, everything else one thread per output
(vectorised along unit-stride loops). ``tilelang.build(mod, "cuda")`` and ``tilec
--target cuda`` apply it unless asked not to, exactly as for the CPU rules.

Modules: ``limits`` (threads and shared memory from the target), ``spatial``,
``reduction``, ``matmul`` (the three plans), ``apply`` (the driver).
"""

from tilelang.schedule.rules.gpu.apply import default_gpu_schedule
from tilelang.schedule.rules.gpu.limits import GpuLimits, gpu_limits

__all__ = ["default_gpu_schedule", "GpuLimits", "gpu_limits"]

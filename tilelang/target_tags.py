"""Target tags: ``Target("nvidia/tesla-p100")`` names a device and brings its parameters.

A tag expands to a target kind and the options that describe the device, in TVM's
option names: ``arch`` (the CUDA compute capability nvcc compiles for),
``max_num_threads`` (threads per block), ``thread_warp_size``,
``max_shared_memory_per_block`` (bytes of static shared memory) and
``registers_per_block``. Code that sizes thread blocks or shared-memory tiles (a
schedule, the tuner's GPU space) reads them from the Target rather than guessing.

The figures are the devices' published CUDA limits. Every NVIDIA device since compute
capability 2.0 allows 1024 threads per block, warps of 32 and 48 KiB of *static* shared
memory per block (larger shared memory needs dynamic allocation, which tilelang does not
emit), so the devices differ in architecture and register file.
"""

from __future__ import annotations

#: tag -> (compute capability, 32-bit registers per block)
_NVIDIA = {
    "nvidia/nvidia-b100": ("sm_100a", 65536),
    "nvidia/nvidia-h100": ("sm_90a", 65536),
    "nvidia/nvidia-h200": ("sm_90a", 65536),
    "nvidia/nvidia-l40s": ("sm_89", 65536),
    "nvidia/nvidia-l4": ("sm_89", 65536),
    "nvidia/geforce-rtx-4090": ("sm_89", 65536),
    "nvidia/nvidia-a100": ("sm_80", 65536),
    "nvidia/nvidia-a30": ("sm_80", 65536),
    "nvidia/nvidia-a40": ("sm_86", 65536),
    "nvidia/nvidia-a10": ("sm_86", 65536),
    "nvidia/nvidia-a10g": ("sm_86", 65536),
    "nvidia/nvidia-a2": ("sm_86", 65536),
    "nvidia/rtx-a6000": ("sm_86", 65536),
    "nvidia/geforce-rtx-3090": ("sm_86", 65536),
    "nvidia/geforce-rtx-3080": ("sm_86", 65536),
    "nvidia/nvidia-t4": ("sm_75", 65536),
    "nvidia/geforce-rtx-2080-ti": ("sm_75", 65536),
    "nvidia/quadro-rtx-8000": ("sm_75", 65536),
    "nvidia/nvidia-v100": ("sm_70", 65536),
    "nvidia/tesla-p100": ("sm_60", 65536),
    "nvidia/tesla-p40": ("sm_61", 65536),
    "nvidia/tesla-p4": ("sm_61", 65536),
    "nvidia/geforce-gtx-1080-ti": ("sm_61", 65536),
    "nvidia/tesla-m60": ("sm_52", 65536),
    "nvidia/tesla-k80": ("sm_37", 65536),
    "nvidia/tesla-k40": ("sm_35", 65536),
    "nvidia/jetson-agx-orin-64gb": ("sm_87", 65536),
    "nvidia/jetson-agx-xavier": ("sm_72", 65536),
}

#: the CUDA limits every tagged NVIDIA device shares (see the module docstring)
CUDA_DEFAULTS = {
    "max_num_threads": 1024,
    "thread_warp_size": 32,
    "max_shared_memory_per_block": 49152,
}


def tag_config(name: str) -> dict | None:
    """``{"kind": ..., options...}`` of the tag ``name``, or None when it is no tag."""
    entry = _NVIDIA.get(name)
    if entry is None:
        return None
    arch, registers = entry
    return {
        "kind": "cuda", "arch": arch, **CUDA_DEFAULTS, "registers_per_block": registers,
        "tag": name,
    }  # fmt: skip


def list_tags() -> dict[str, dict]:
    """Every tag and its configuration (TVM's ``tvm.target.list_tags``)."""
    return {name: tag_config(name) for name in sorted(_NVIDIA)}


__all__ = ["tag_config", "list_tags", "CUDA_DEFAULTS"]

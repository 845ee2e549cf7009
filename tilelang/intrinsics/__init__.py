"""A library of registered tensor intrinsics for ``Schedule.tensorize``.

- :mod:`.reference`: portable intrinsics whose micro-kernels are plain C
  (``pragma_import_c``), runnable on every CPU: ``DOT16_F32_INTRIN``.
- :mod:`.x86`: AVX-512 micro-kernels written in LLVM IR with the x86 intrinsics
  (``pragma_import_llvm``): VNNI int8 (``vpdpbusd``), fp32 FMA outer products,
  bfloat16 pairs into fp32 (``vdpbf16ps``).
  Each generator checks that the CPU has the feature it needs (:mod:`.cpu`) and
  raises a clear error otherwise.
- :mod:`.cuda_wmma`: CUDA tensor cores through WMMA fragments (fill, load, mma, store
  on ``wmma.matrix_a``/``matrix_b``/``accumulator`` buffers; fp16 inputs, fp32 or fp16
  accumulation), registered under TVM's names (``wmma_sync_16x16x16_f16f16f32``...).

Importing a module registers its fixed intrinsics; the generators register a
shape on first use and return its name.
"""

from tilelang.intrinsics.common import with_imports

__all__ = ["with_imports"]

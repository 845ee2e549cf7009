"""CUDA tensor-core tensor intrinsics through ``ldmatrix`` and ``mma.sync`` (sm_80+).

The same four warp-wide operations as :mod:`.cuda_wmma` on 16x16 tiles (fp16 inputs,
fp32 or fp16 accumulation; bf16 inputs, fp32 accumulation), but the fragments are the warp's own registers rather than
``nvcuda::wmma`` objects: a buffer in scope ``m16n8k16.matrixA`` / ``matrixB`` /
``matrixC`` holds 16x16 tiles, each spread over the 32 lanes as eight values per lane
in the register layout of PTX's ``mma.m16n8k16`` operands. The CUDA backend
(:mod:`backends.cuda.mma`) prints

- a load from shared memory as one ``ldmatrix.sync.aligned.m8n8.x4`` (``.trans`` for a
  row-major B, ``B[k, j]``; plain for ``B[j, k]``, the ``_trans`` intrinsics);
- an update as two ``mma.sync.aligned.m16n8k16.row.col`` (the two 8-column halves);
- a fill and a store as each lane's eight registers set / written to memory.

Registered under TVM's names (``mma_ldmatrix_f16_a``, ``mma_f16f16f32``,
``mma_fill_16x16_f32``, ``mma_store_16x16_f32_global``...). Unlike TVM's, whose
descriptions write a ``warp`` buffer laid out ``[32, 8]`` by lane (after a
``transform_layout``), these describe the tile in its logical ``16 x 16`` shape, as
the WMMA ones do: the lane layout is the backend's business, so the reference backend
checks the index arithmetic around the calls against NumPy as it does for WMMA.
"""

from __future__ import annotations

from tilelang.intrinsics import cuda_wmma

_OUT = {"float32": "f32", "float16": "f16"}


def mma_fill(dtype: str = "float32") -> str:
    """``mma_fill_16x16_{f32|f16}``: a 16x16 accumulator tile set to zero."""
    return cuda_wmma.wmma_fill(dtype=dtype, family="mma", name=f"mma_fill_16x16_{_OUT[dtype]}")


def mma_ldmatrix(
    operand: str = "a", trans: bool = False, scope: str = "shared", dtype: str = "float16"
) -> str:
    """``mma_ldmatrix_{f16|bf16}_{a|b}[_trans][_global]``: a 16x16 half (or bfloat16)
    tile of a row-major ``scope`` buffer into an A or B fragment; ``trans`` (B only): B
    stored as ``B[j, k]``. ``ldmatrix`` moves 16-bit elements whatever they mean, so
    both types load alike; it reads shared memory only: from ``global`` each lane
    reads its values."""
    suffix = "" if scope == "shared" else f"_{scope}"
    short = cuda_wmma.IN_DTYPES[dtype]
    name = f"mma_ldmatrix_{short}_{operand}{'_trans' if trans else ''}{suffix}"
    return cuda_wmma.wmma_load(
        operand=operand, scope=scope, trans=trans, family="mma", name=name, dtype=dtype
    )


def mma_sync(out_dtype: str = "float32", trans_b: bool = False, in_dtype: str = "float16") -> str:
    """``mma_{f16f16|bf16bf16}{f32|f16}[_trans_b]``: ``C[i, j] += A[i, k] * B[k, j]``
    (``B[j, k]`` with ``trans_b``) on 16x16x16 tiles of ``in_dtype`` inputs, products and
    sums in ``out_dtype`` (float32 only for bfloat16: ``mma...f32.bf16.bf16.f32``)."""
    short = cuda_wmma.IN_DTYPES[in_dtype]
    name = f"mma_{short}{short}{_OUT[out_dtype]}{'_trans_b' if trans_b else ''}"
    return cuda_wmma.wmma_sync(
        out_dtype=out_dtype, trans=trans_b, family="mma", name=name, in_dtype=in_dtype
    )


def mma_store(dtype: str = "float32", scope: str = "global") -> str:
    """``mma_store_16x16_{f32|f16}_{scope}``: an accumulator tile into a row-major tile
    of a ``global`` or ``shared`` buffer."""
    name = f"mma_store_16x16_{_OUT[dtype]}_{scope}"
    return cuda_wmma.wmma_store(dtype=dtype, scope=scope, family="mma", name=name)


MMA_FILL_16x16_F32_INTRIN = mma_fill("float32")
MMA_FILL_16x16_F16_INTRIN = mma_fill("float16")
LDMATRIX_F16_A_INTRIN = mma_ldmatrix("a")
LDMATRIX_F16_B_INTRIN = mma_ldmatrix("b")
LDMATRIX_F16_B_TRANS_INTRIN = mma_ldmatrix("b", trans=True)
# from global memory: no ldmatrix there (it reads shared memory), each lane reads its own
LOAD_F16_A_GLOBAL_INTRIN = mma_ldmatrix("a", scope="global")
LOAD_F16_B_GLOBAL_INTRIN = mma_ldmatrix("b", scope="global")
MMA_F16F16F32_INTRIN = mma_sync("float32")
MMA_F16F16F32_TRANS_B_INTRIN = mma_sync("float32", trans_b=True)
MMA_F16F16F16_INTRIN = mma_sync("float16")
MMA_F16F16F16_TRANS_B_INTRIN = mma_sync("float16", trans_b=True)
MMA_STORE_16x16_F32_GLOBAL_INTRIN = mma_store("float32", "global")
MMA_STORE_16x16_F32_SHARED_INTRIN = mma_store("float32", "shared")
MMA_STORE_16x16_F16_GLOBAL_INTRIN = mma_store("float16", "global")
LDMATRIX_BF16_A_INTRIN = mma_ldmatrix("a", dtype="bfloat16")
LDMATRIX_BF16_B_INTRIN = mma_ldmatrix("b", dtype="bfloat16")
LDMATRIX_BF16_B_TRANS_INTRIN = mma_ldmatrix("b", trans=True, dtype="bfloat16")
MMA_BF16BF16F32_INTRIN = mma_sync("float32", in_dtype="bfloat16")
MMA_BF16BF16F32_TRANS_B_INTRIN = mma_sync("float32", trans_b=True, in_dtype="bfloat16")

__all__ = [
    "mma_fill", "mma_ldmatrix", "mma_sync", "mma_store",
    "MMA_FILL_16x16_F32_INTRIN", "MMA_FILL_16x16_F16_INTRIN", "LDMATRIX_F16_A_INTRIN",
    "LDMATRIX_F16_B_INTRIN", "LDMATRIX_F16_B_TRANS_INTRIN", "LOAD_F16_A_GLOBAL_INTRIN",
    "LOAD_F16_B_GLOBAL_INTRIN", "MMA_F16F16F32_INTRIN",
    "MMA_F16F16F32_TRANS_B_INTRIN", "MMA_F16F16F16_INTRIN", "MMA_F16F16F16_TRANS_B_INTRIN",
    "MMA_STORE_16x16_F32_GLOBAL_INTRIN", "MMA_STORE_16x16_F32_SHARED_INTRIN",
    "MMA_STORE_16x16_F16_GLOBAL_INTRIN", "LDMATRIX_BF16_A_INTRIN", "LDMATRIX_BF16_B_INTRIN",
    "LDMATRIX_BF16_B_TRANS_INTRIN", "MMA_BF16BF16F32_INTRIN", "MMA_BF16BF16F32_TRANS_B_INTRIN",
]  # fmt: skip

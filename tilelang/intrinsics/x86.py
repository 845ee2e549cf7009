"""AVX-512 tensor intrinsics: register-blocked micro-kernels in LLVM IR
(:mod:`.x86_kernels`), registered for ``Schedule.tensorize`` on first use.

``vnni_gemm(mr, nb, kt)`` (needs ``avx512_vnni``) describes::

    C[i, j] += int32(A[i, k]) * int32(B[j // 16, k // 4, j % 16, k % 4])

over ``i < mr``, ``j < 16 * nb``, ``k < kt`` with A ``uint8``, B ``int8`` in the VNNI
panel layout ``[N / 16][K / 4][16][4]`` and C ``int32``. ``vpdpbusd`` multiplies
unsigned bytes by signed bytes, so the description fixes A as ``uint8`` and B as
``int8``: a signed A (or an unsigned B) does not match, and tensorize says so.

``fma_gemm(mr, nb, kt)`` (needs ``avx512f``) describes the fp32 outer-product tile
``C[i, j] += A[i, k] * B[k, j]`` over ``i < mr``, ``j < 16 * nb``, ``k < kt``.

``bf16_gemm(mr, nb, kt)`` (needs ``avx512_bf16``) describes::

    C[i, j] += float32(A[i, k]) * float32(B[j // 16, k // 2, j % 16, k % 2])

with A and B ``bfloat16`` (B in the panel layout ``[N / 16][K / 2][16][2]``) and C
``float32``. ``vdpbf16ps`` adds the two products of a pair in one step and flushes
denormals, so results agree with the description to float32 rounding, not bit for bit.

Each generator checks the CPU first (the host's features, or ``features`` when
given) and raises :class:`MissingCPUFeature` naming what is missing.
"""

from __future__ import annotations

import functools

from tilelang.errors import BuildError
from tilelang.intrinsics.common import register_text
from tilelang.intrinsics.x86_kernels import bf16_gemm_ir, fma_gemm_ir, vnni_gemm_ir


class MissingCPUFeature(BuildError):
    """An intrinsic needs an instruction-set extension the CPU does not have."""


@functools.cache
def host_features() -> frozenset[str]:
    """The host CPU's features as LLVM names them (``avx512vnni``, ``avx512f``, ...)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    features = llvm.get_host_cpu_features()
    return frozenset(name for name, on in features.items() if on)


def require(needed, intrinsic: str, features=None) -> None:
    """Raises MissingCPUFeature unless every feature in ``needed`` is available."""
    have = host_features() if features is None else frozenset(features)
    missing = [f for f in needed if f not in have]
    if missing:
        import llvmlite.binding as llvm

        cpu = llvm.get_host_cpu_name() if features is None else "the target CPU"
        raise MissingCPUFeature(
            f"tensor intrinsic {intrinsic} needs the CPU feature(s) {', '.join(missing)}, "
            f"which {cpu} does not have; use an untensorized schedule on this CPU"
        )


VNNI_FEATURES = ("avx512f", "avx512bw", "avx512vnni")
FMA_FEATURES = ("avx512f", "fma")
BF16_FEATURES = ("avx512f", "avx512bw", "avx512bf16")

# A dot-product tile over pair-packed B: ``p`` consecutive reduction elements of 16
# columns sit together (B[j // 16, k // p, j % 16, k % p]), as vpdpbusd (p = 4, uint8 x
# int8 -> int32) and vdpbf16ps (p = 2, bfloat16 x bfloat16 -> float32) read them.
_PACKED_DESC = """
@T.prim_func
def packed_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, ({mr}, {kt}), "{ta}", offset_factor=1)
    B = T.match_buffer(b, ({nb}, {ktp}, 16, {p}), "{tb}", offset_factor=1)
    C = T.match_buffer(c, ({mr}, {n}), "{tc}", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:{mr}, 0:{n}], A[0:{mr}, 0:{kt}], B[0:{nb}, 0:{ktp}, 0:16, 0:{p}])
        T.writes(C[0:{mr}, 0:{n}])
        for i, j, k in T.grid({mr}, {n}, {kt}):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(C[vi, vj], A[vi, vk], B[vj // 16, vk // {p}, vj % 16, vk % {p}])
                T.writes(C[vi, vj])
                C[vi, vj] = C[vi, vj] + T.Cast("{tc}", A[vi, vk]) * T.Cast("{tc}", B[vj // 16, vk // {p}, vj % 16, vk % {p}])
"""

_PACKED_IMPL = """
@T.prim_func
def packed_impl(a: T.handle, b: T.handle, c: T.handle):
    lda = T.int32()
    ldb = T.int32()
    ldc = T.int32()
    A = T.match_buffer(a, ({mr}, {kt}), "{ta}", strides=[lda, 1], offset_factor=1)
    B = T.match_buffer(b, ({nb}, {ktp}, 16, {p}), "{tb}", strides=[ldb, {row}, {p}, 1], offset_factor=1)
    C = T.match_buffer(c, ({mr}, {n}), "{tc}", strides=[ldc, 1], offset_factor=1)
    with T.block("root"):
        T.reads(C[0:{mr}, 0:{n}], A[0:{mr}, 0:{kt}], B[0:{nb}, 0:{ktp}, 0:16, 0:{p}])
        T.writes(C[0:{mr}, 0:{n}])
        T.evaluate(T.call_extern("int32", "{symbol}", C.access_ptr("rw"), A.access_ptr("r"), B.access_ptr("r"), ldc, lda, ldb))
"""


def _packed_texts(types, pack, mr, nb, kt, symbol) -> tuple[str, str]:
    """The description and implementation of a pair-packed tile (``types``: A, B, C)."""
    ta, tb, tc = types
    fields = dict(mr=mr, nb=nb, n=16 * nb, kt=kt, ktp=kt // pack, p=pack, row=16 * pack,
                  ta=ta, tb=tb, tc=tc, symbol=symbol)  # fmt: skip
    return _PACKED_DESC.format(**fields), _PACKED_IMPL.format(**fields)


_FMA_DESC = """
@T.prim_func
def fma_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, ({mr}, {kt}), "float32", offset_factor=1)
    B = T.match_buffer(b, ({kt}, {n}), "float32", offset_factor=1)
    C = T.match_buffer(c, ({mr}, {n}), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:{mr}, 0:{n}], A[0:{mr}, 0:{kt}], B[0:{kt}, 0:{n}])
        T.writes(C[0:{mr}, 0:{n}])
        for i, j, k in T.grid({mr}, {n}, {kt}):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

_FMA_IMPL = """
@T.prim_func
def fma_impl(a: T.handle, b: T.handle, c: T.handle):
    lda = T.int32()
    ldb = T.int32()
    ldc = T.int32()
    A = T.match_buffer(a, ({mr}, {kt}), "float32", strides=[lda, 1], offset_factor=1)
    B = T.match_buffer(b, ({kt}, {n}), "float32", strides=[ldb, 1], offset_factor=1)
    C = T.match_buffer(c, ({mr}, {n}), "float32", strides=[ldc, 1], offset_factor=1)
    with T.block("root"):
        T.reads(C[0:{mr}, 0:{n}], A[0:{mr}, 0:{kt}], B[0:{kt}, 0:{n}])
        T.writes(C[0:{mr}, 0:{n}])
        T.evaluate(T.call_extern("int32", "{symbol}", C.access_ptr("rw"), A.access_ptr("r"), B.access_ptr("r"), ldc, lda, ldb))
"""


def vnni_gemm(mr: int = 4, nb: int = 4, kt: int = 64, features=None) -> str:
    """The name of the registered VNNI int8 tile intrinsic ``mr x 16*nb x kt``
    (registered on first use); MissingCPUFeature without AVX-512 VNNI."""
    name = f"x86.avx512_vnni.gemm_u8s8s32_{mr}x{16 * nb}x{kt}"
    require(VNNI_FEATURES, name, features)
    if kt % 4:
        raise ValueError(f"{name}: the reduction tile must be a multiple of 4")
    symbol = f"tl_vnni_gemm_{mr}x{16 * nb}x{kt}"
    desc, impl = _packed_texts(("uint8", "int8", "int32"), 4, mr, nb, kt, symbol)
    return register_text(name, desc, impl, llvm_ir=vnni_gemm_ir(symbol, mr, nb, kt))


def fma_gemm(mr: int = 4, nb: int = 2, kt: int = 64, features=None) -> str:
    """The name of the registered AVX-512 fp32 FMA tile intrinsic ``mr x 16*nb x kt``
    (registered on first use); MissingCPUFeature without AVX-512F."""
    name = f"x86.avx512f.gemm_f32_{mr}x{16 * nb}x{kt}"
    require(FMA_FEATURES, name, features)
    symbol = f"tl_fma_gemm_{mr}x{16 * nb}x{kt}"
    fields = dict(mr=mr, n=16 * nb, kt=kt, symbol=symbol)
    return register_text(
        name, _FMA_DESC.format(**fields), _FMA_IMPL.format(**fields),
        llvm_ir=fma_gemm_ir(symbol, mr, nb, kt),
    )  # fmt: skip


def bf16_gemm(mr: int = 4, nb: int = 2, kt: int = 64, features=None) -> str:
    """The name of the registered AVX-512 BF16 tile intrinsic ``mr x 16*nb x kt``
    (registered on first use); MissingCPUFeature without AVX-512 BF16."""
    name = f"x86.avx512_bf16.gemm_bf16f32_{mr}x{16 * nb}x{kt}"
    require(BF16_FEATURES, name, features)
    if kt % 2:
        raise ValueError(f"{name}: the reduction tile must be even")
    symbol = f"tl_bf16_gemm_{mr}x{16 * nb}x{kt}"
    desc, impl = _packed_texts(("bfloat16", "bfloat16", "float32"), 2, mr, nb, kt, symbol)
    return register_text(name, desc, impl, llvm_ir=bf16_gemm_ir(symbol, mr, nb, kt))

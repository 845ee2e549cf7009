"""LLVM IR text of the AVX-512 register-blocked micro-kernels the x86 intrinsics call.

Each kernel computes a tile ``C[MR, 16 * NB] += A[MR, KT] . B`` with the ``MR * NB``
accumulators in zmm registers: it loads the C tile, runs the reduction loop over
``KT`` and stores the tile once, so one call does ``MR * NB * 16 * KT`` multiply-adds.

- :func:`vnni_gemm_ir`: int8, ``vpdpbusd`` (``@llvm.x86.avx512.vpdpbusd.512``). The
  instruction multiplies *unsigned* bytes of its first source with *signed* bytes of
  its second and adds groups of four into int32 lanes; so A is ``uint8`` (4 bytes of a
  row broadcast to every lane) and B is ``int8`` packed as ``[NB][KT/4][16][4]`` (64
  bytes per step: 4 consecutive k for each of 16 columns).
- :func:`fma_gemm_ir`: fp32, ``@llvm.fma.v16f32`` outer products (a broadcast of
  ``A[r, k]`` times the row ``B[k, 16n:16n+16]``).
- :func:`bf16_gemm_ir`: bfloat16 into float32, ``vdpbf16ps``
  (``@llvm.x86.avx512bf16.dpbf16ps.512``): each float32 lane adds the products of a
  pair of bfloat16s; A's pair ``A[r, 2k:2k+2]`` (32 bits) is broadcast to every lane
  and B is packed as ``[NB][KT/2][16][2]`` (64 bytes per step: 2 consecutive k for
  each of 16 columns). The instruction flushes denormal inputs and results to zero.

Arguments, in order: ``C``, ``A``, ``B`` pointers, then the row strides (elements)
of C and A and the stride of B (elements between consecutive ``NB`` panels for VNNI,
between rows for FMA), as ``i32``.
"""

from __future__ import annotations


def _header(name: str, features: str) -> list[str]:
    return [
        f"define i32 @{name}(ptr noalias %C, ptr noalias %A, ptr noalias %B, "
        f"i32 %ldc, i32 %lda, i32 %ldb) #0 {{",
        "entry:",
    ], f'attributes #0 = {{ nounwind "target-features"="{features}" }}'


def _row_pointer(lines, out, base, row, stride, elem_type, col=0):
    """``out = base + (row * stride + col)`` elements of ``elem_type``."""
    lines.append(f"  %{out}.off = add i32 {col}, 0")
    lines.append(f"  %{out}.r = mul i32 {row}, %{stride}")
    lines.append(f"  %{out}.i = add i32 %{out}.r, %{out}.off")
    lines.append(f"  %{out}.x = sext i32 %{out}.i to i64")
    lines.append(f"  %{out} = getelementptr inbounds {elem_type}, ptr %{base}, i64 %{out}.x")


def _kernel(name, features, mr, nb, steps, vec, elem, step_body, intrinsic_decl):
    """The shared shape: load the C tile, loop ``steps`` times over ``step_body``,
    store the tile. ``step_body(lines, k)`` returns the new accumulator names."""
    head, attributes = _header(name, features)
    lines = list(head)
    for r in range(mr):
        for n in range(nb):
            _row_pointer(lines, f"pc{r}_{n}", "C", r, "ldc", elem, 16 * n)
            lines.append(f"  %c{r}_{n}.init = load {vec}, ptr %pc{r}_{n}, align 4")
    lines += ["  br label %loop", "loop:", "  %k = phi i32 [0, %entry], [%k.next, %loop]"]
    for r in range(mr):
        for n in range(nb):
            lines.append(
                f"  %c{r}_{n} = phi {vec} [%c{r}_{n}.init, %entry], [%c{r}_{n}.next, %loop]"
            )
    step_body(lines)
    lines += [
        "  %k.next = add i32 %k, 1",
        f"  %more = icmp slt i32 %k.next, {steps}",
        "  br i1 %more, label %loop, label %done",
        "done:",
    ]
    for r in range(mr):
        for n in range(nb):
            lines.append(f"  store {vec} %c{r}_{n}.next, ptr %pc{r}_{n}, align 4")
    lines += ["  ret i32 0", "}", intrinsic_decl, attributes, ""]
    return "\n".join(lines)


def vnni_gemm_ir(name: str, mr: int, nb: int, kt: int) -> str:
    """``C[mr, 16 nb] (int32) += A[mr, kt] (uint8) . B[nb][kt/4][16][4] (int8)``."""
    if kt % 4:
        raise ValueError(f"the VNNI kernel's reduction tile must be a multiple of 4, not {kt}")

    def step(lines):
        lines.append("  %k4 = mul i32 %k, 4")
        lines.append("  %k64 = mul i32 %k, 64")
        for n in range(nb):
            _row_pointer(lines, f"pb{n}", "B", n, "ldb", "i8", "%k64")
            lines.append(f"  %b{n} = load <16 x i32>, ptr %pb{n}, align 1")
        for r in range(mr):
            _row_pointer(lines, f"pa{r}", "A", r, "lda", "i8", "%k4")
            lines.append(f"  %a{r}.s = load i32, ptr %pa{r}, align 1")
            lines.append(f"  %a{r}.v = insertelement <16 x i32> poison, i32 %a{r}.s, i32 0")
            lines.append(
                f"  %a{r} = shufflevector <16 x i32> %a{r}.v, <16 x i32> poison, "
                "<16 x i32> zeroinitializer"
            )
            for n in range(nb):
                lines.append(
                    f"  %c{r}_{n}.next = call <16 x i32> @llvm.x86.avx512.vpdpbusd.512("
                    f"<16 x i32> %c{r}_{n}, <16 x i32> %a{r}, <16 x i32> %b{n})"
                )

    decl = "declare <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32>, <16 x i32>, <16 x i32>)"
    return _kernel(name, "+avx512f,+avx512bw,+avx512vnni", mr, nb, kt // 4, "<16 x i32>",
                   "i32", step, decl)  # fmt: skip


def fma_gemm_ir(name: str, mr: int, nb: int, kt: int) -> str:
    """``C[mr, 16 nb] += A[mr, kt] . B[kt, 16 nb]`` over float32 (B rows ``ldb`` apart)."""

    def step(lines):
        for n in range(nb):
            _row_pointer(lines, f"pb{n}", "B", "%k", "ldb", "float", 16 * n)
            lines.append(f"  %b{n} = load <16 x float>, ptr %pb{n}, align 4")
        for r in range(mr):
            _row_pointer(lines, f"pa{r}", "A", r, "lda", "float", "%k")
            lines.append(f"  %a{r}.s = load float, ptr %pa{r}, align 4")
            lines.append(f"  %a{r}.v = insertelement <16 x float> poison, float %a{r}.s, i32 0")
            lines.append(
                f"  %a{r} = shufflevector <16 x float> %a{r}.v, <16 x float> poison, "
                "<16 x i32> zeroinitializer"
            )
            for n in range(nb):
                lines.append(
                    f"  %c{r}_{n}.next = call <16 x float> @llvm.fma.v16f32(<16 x float> "
                    f"%a{r}, <16 x float> %b{n}, <16 x float> %c{r}_{n})"
                )

    decl = "declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)"
    return _kernel(name, "+avx512f,+fma", mr, nb, kt, "<16 x float>", "float", step, decl)


def bf16_gemm_ir(name: str, mr: int, nb: int, kt: int) -> str:
    """``C[mr, 16 nb] (float32) += A[mr, kt] (bfloat16) . B[nb][kt/2][16][2] (bfloat16)``."""
    if kt % 2:
        raise ValueError(f"the BF16 kernel's reduction tile must be even, not {kt}")

    def step(lines):
        lines.append("  %k2 = mul i32 %k, 2")
        lines.append("  %k32 = mul i32 %k, 32")
        for n in range(nb):
            _row_pointer(lines, f"pb{n}", "B", n, "ldb", "i16", "%k32")
            lines.append(f"  %b{n} = load <32 x bfloat>, ptr %pb{n}, align 2")
        for r in range(mr):
            _row_pointer(lines, f"pa{r}", "A", r, "lda", "i16", "%k2")
            lines.append(f"  %a{r}.s = load i32, ptr %pa{r}, align 2")
            lines.append(f"  %a{r}.v = insertelement <16 x i32> poison, i32 %a{r}.s, i32 0")
            lines.append(
                f"  %a{r}.w = shufflevector <16 x i32> %a{r}.v, <16 x i32> poison, "
                "<16 x i32> zeroinitializer"
            )
            lines.append(f"  %a{r} = bitcast <16 x i32> %a{r}.w to <32 x bfloat>")
            for n in range(nb):
                lines.append(
                    f"  %c{r}_{n}.next = call <16 x float> @llvm.x86.avx512bf16.dpbf16ps.512("
                    f"<16 x float> %c{r}_{n}, <32 x bfloat> %a{r}, <32 x bfloat> %b{n})"
                )

    decl = (
        "declare <16 x float> @llvm.x86.avx512bf16.dpbf16ps.512(<16 x float>, <32 x bfloat>, "
        "<32 x bfloat>)"
    )
    return _kernel(name, "+avx512f,+avx512bw,+avx512bf16", mr, nb, kt // 2, "<16 x float>",
                   "float", step, decl)  # fmt: skip

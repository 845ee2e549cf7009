"""Portable intrinsics: plain C micro-kernels, runnable on every CPU backend.

``DOT16_F32_INTRIN``: ``C[0] += sum(A[k] * B[k] for k in range(16))`` over float32,
the shape of an inner product; its implementation calls ``tl_dot16_f32``.
"""

from __future__ import annotations

from tilelang.intrinsics.common import register_text

DOT16_F32_SOURCE = """\
int tl_dot16_f32(float *c, const float *a, const float *b) {
  float s = c[0];
  for (int k = 0; k < 16; ++k) s += a[k] * b[k];
  c[0] = s;
  return 0;
}
"""

_DESC = """
@T.prim_func
def dot16_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16,), "float32", offset_factor=1)
    B = T.match_buffer(b, (16,), "float32", offset_factor=1)
    C = T.match_buffer(c, (1,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:1], A[0:16], B[0:16])
        T.writes(C[0:1])
        for k in range(16):
            with T.block("update"):
                vk = T.axis.remap("R", [k])
                T.reads(C[0], A[vk], B[vk])
                T.writes(C[0])
                C[0] = C[0] + A[vk] * B[vk]
"""

_IMPL = """
@T.prim_func
def dot16_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16,), "float32", offset_factor=1)
    B = T.match_buffer(b, (16,), "float32", offset_factor=1)
    C = T.match_buffer(c, (1,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:1], A[0:16], B[0:16])
        T.writes(C[0:1])
        T.evaluate(T.call_extern("int32", "tl_dot16_f32", C.access_ptr("rw"), A.access_ptr("r"), B.access_ptr("r")))
"""

DOT16_F32_INTRIN = register_text("tilelang.dot16_f32", _DESC, _IMPL, c_source=DOT16_F32_SOURCE)

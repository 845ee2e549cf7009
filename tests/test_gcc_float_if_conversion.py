"""A float accumulation under integer conditions computes the same on the C backend as
on the python reference.

gcc 12.2 at -O3 on an AVX-512 CPU (-march=native) miscompiled the C generated for the
program below (found by test_differential's random programs): loop if-conversion
turned the potentially trapping float adds of each conditional path into masked
``.COND_ADD`` calls (0 in the lanes whose condition is false) and then replaced a join
PHI, whose value scalar evolution finds loop invariant, by its first argument -- the
value of one path only, so B1[0, 2] and B1[0, 3] (other paths) came out 0. The C
backend compiles generated C with ``-fno-trapping-math``
(tilelang.runtime.compiler.generated_c_flags): no float op needs masking then, and the
PHI's argument is computed on every lane. On other CPUs or compilers these tests pass
with or without the flag.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import tilelang
from tilelang.runtime.compiler import SHARED_FLAGS, generated_c_flags, run_compiler

PROGRAM = """
@T.prim_func
def main(A0: T.Buffer((2, 2), "int64"), A1: T.Buffer((4, 3), "int64"), B0: T.Buffer((2,), "int32"), B1: T.Buffer((5, 4, 1), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i1 in T.parallel(2):
        with T.block("block3"):
            v2 = T.axis.remap("S", [i1])
            T.reads(A0[T.max(T.min(v2 * 3 + 3, 1), 0), v2])
            T.writes(B0[v2])
            B0[v2] = T.Select(1 == v2, -7, T.Cast("int32", A0[T.max(T.min(v2 * 3 + 3, 1), 0), v2]))
    for i4, i5, i6, k10 in T.grid(5, 4, 1, 3):
        with T.block("block12"):
            v7, v8, v9, vk11 = T.axis.remap("SSSR", [i4, i5, i6, k10])
            T.reads(A0[0:2, 0:2], A1[v8, vk11])
            T.writes(B1[v7, v8, v9])
            with T.init():
                B1[v7, v8, v9] = T.Cast("float32", T.Cast("int32", A0[T.max(T.min(v9 * 3 + 1, 1), 0), T.max(T.min(v8, 1), 0)]))
            B1[v7, v8, v9] = B1[v7, v8, v9] + (T.Select(not T.min(T.Cast("int32", A1[v8, vk11]), v9) <= vk11, T.Cast("float32", v7), T.float32(-1)) - T.Cast("float32", T.Select(v7 >= v8, T.Cast("int32", A0[T.max(T.min(v7 * 3 + 1, 1), 0), (v7 * 2 + 3) % 2]), -8)))
"""  # noqa: E501


def _inputs(seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [
        rng.integers(-10, 10, (2, 2)).astype("int64"),
        rng.integers(-10, 10, (4, 3)).astype("int64"),
        np.zeros(2, "int32"),
        np.zeros((5, 4, 1), "float32"),
    ]


def test_the_differential_program_agrees_with_python():
    mod = tilelang.parse(PROGRAM)
    c_main = tilelang.build(mod, "c")["main"]
    reference = tilelang.build(mod, "python")["main"]
    for seed in range(8):
        want, got = _inputs(seed), _inputs(seed)
        reference(*want)
        c_main(*got)
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w, err_msg=f"inputs of seed {seed}")


# The C the backend generated for the reduction block, reduced: compiled here with the
# backend's flags, so the flags themselves are checked whatever the printer emits.
REDUCED_C = """
#include <stdint.h>
void f(const int64_t* A0, float* B1) {
  for (int32_t i4 = 0; i4 < 5; ++i4) {
    for (int32_t i5 = 0; i5 < 4; ++i5) {
      float acc = ((float)((int32_t)A0[((i5 < 1) ? i5 : 1) + 2]));
      for (int32_t k10 = 0; k10 < 3; ++k10) {
        acc = acc + ((-1.0f) - ((float)((i4 >= i5) ? ((int32_t)A0[3]) : (-8))));
      }
      B1[(i4 * 4) + i5] = acc;
    }
  }
}
"""


def _reduced_expected(a0) -> np.ndarray:
    out = np.zeros(20, "float32")
    for i4 in range(5):
        for i5 in range(4):
            acc = np.float32(int(a0[min(i5, 1) + 2]))
            for _ in range(3):
                acc = np.float32(acc + np.float32(-1.0 - (int(a0[3]) if i4 >= i5 else -8)))
            out[i4 * 4 + i5] = acc
    return out


@pytest.mark.parametrize("a0", [[7, 2, 0, -5], [1, -3, 4, 9], [0, 0, -8, 2]])
def test_reduced_c_with_the_backend_flags(tmp_path, a0):
    source = tmp_path / "reduced.c"
    source.write_text(REDUCED_C)
    library = tmp_path / "reduced.so"
    flags = ["-O3", *SHARED_FLAGS, *generated_c_flags()]
    run_compiler([*flags, "-o", str(library), str(source)], "the reduced C")
    f = ctypes.CDLL(str(library)).f
    f.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    f.restype = None
    a0 = np.array(a0, "int64")
    b1 = np.zeros(20, "float32")
    f(a0.ctypes.data, b1.ctypes.data)
    np.testing.assert_array_equal(b1, _reduced_expected(a0))

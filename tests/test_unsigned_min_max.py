"""An unsigned min/max inside a wrapping product computes the same on every backend.

gcc 12 folds ``(uint8_t)(((a < b) ? a : b) * c)`` as ``min(a * c, b * c)``, which is
wrong once the products wrap (found by test_cuda_integer_semantics' random programs:
the C backend and the host-compiled CUDA text disagreed with the python reference).
The C and CUDA printers write unsigned min/max as calls to small inline helpers.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import tilelang
from tilelang.testing.cuda_emulation import HostProgram, host_compiler

PROGRAM = """
@T.prim_func
def f(A: T.Buffer((64,), "{t}"), B: T.Buffer((64,), "{t}")):
    for i in range(64):
        with T.block("b"):
            vi = T.axis.spatial(64, i)
            B[vi] = T.{op}(A[vi] + T.Cast("{t}", 78), T.Cast("{t}", vi * 3627043)) * T.Cast("{t}", vi * 613546340)
"""

CASES = [(t, op) for t in ("uint8", "uint16", "uint32", "uint64") for op in ("min", "max")]


def _run(func, target, a):
    b = np.zeros_like(a)
    tilelang.build(func, target)["f"](a, b)
    return b


def _expected(dtype: str, op: str, a: np.ndarray) -> np.ndarray:
    """Computed in Python integers: the index products wrap as int32, the cast
    converts them to the unsigned type, the product wraps at its width."""
    mask = (1 << (np.dtype(dtype).itemsize * 8)) - 1

    def cast(i32_product: int) -> int:
        wrapped = (i32_product + 2**31) % 2**32 - 2**31
        return wrapped & mask

    pick = min if op == "min" else max
    out = [
        pick((int(x) + 78) & mask, cast(i * 3627043)) * cast(i * 613546340) & mask
        for i, x in enumerate(a)
    ]
    return np.array(out, dtype=dtype)


@pytest.mark.parametrize("dtype,op", CASES)
@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_unsigned_min_max_times_a_wrapping_factor(dtype, op, target):
    func = tilelang.parse(PROGRAM.format(t=dtype, op=op))["f"]
    a = np.full(64, 5, dtype=dtype)
    np.testing.assert_array_equal(_run(func, target, a), _expected(dtype, op, a))


def test_c_text_calls_the_helper():
    func = tilelang.parse(PROGRAM.format(t="uint8", op="min"))["f"]
    source = tilelang.build(func, "c").get_source()
    assert "static inline uint8_t tl_min_uint8_t(uint8_t a, uint8_t b)" in source
    assert source.count("tl_min_uint8_t(") == 2  # defined once, called once
    signed = tilelang.parse(PROGRAM.format(t="int32", op="min"))["f"]
    assert "tl_min_" not in tilelang.build(signed, "c").get_source()


@pytest.mark.skipif(
    shutil.which("nvcc") is None or host_compiler() is None,
    reason="needs nvcc and a host C++ compiler",
)
@pytest.mark.parametrize("dtype,op", [("uint8", "min"), ("uint32", "max")])
def test_cuda_text_computes_the_same(dtype, op, tmp_path):
    text = PROGRAM.format(t=dtype, op=op).replace(
        "for i in range(64):", 'for i in T.thread_binding(64, thread="threadIdx.x"):'
    )
    mod = tilelang.parse(text)
    cuda = tilelang.build(mod, "cuda")
    a = np.full(64, 5, dtype=dtype)
    arrays = [a, np.zeros_like(a)]
    HostProgram(cuda, tmp_path).run("f", arrays)
    np.testing.assert_array_equal(arrays[1], _expected(dtype, op, a))

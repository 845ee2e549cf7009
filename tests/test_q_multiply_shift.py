"""TVM's fixed-point multiply ``T.q_multiply_shift(x, y, q, s)`` and its per-axis form:
parsed, printed back, and computed by every CPU backend through LowerIntrinsics as
``int32(((int64(x) << max(s, 0)) * y + 2**(rs + q - 1)) >> (rs + q))``, ``rs =
max(-s, 0)`` -- checked against that formula in Python integers."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal

TEXT = """
@T.prim_func
def f(A: T.Buffer((64,), "int32"), S: T.Buffer((64,), "int32"),
      B: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    for i in T.KIND(64):
        B[i] = T.q_multiply_shift(A[i], 1457846997, 31, S[i], dtype="int32")
        C[i] = T.q_multiply_shift_per_axis(A[i], 2101000910, T.max(S[i], 0),
                                           T.max(0 - S[i], 0), 31, S[i] > 0, S[i] < 0)
"""


def reference(x: int, y: int, q: int, s: int, left_shift_required=True) -> int:
    left, right = max(s, 0), max(-s, 0)
    if not left_shift_required:
        left = 0
    return ((x << left) * y + (1 << (right + q - 1))) >> (right + q)


def test_round_trip():
    mod = tilelang.parse(TEXT.replace("KIND", "serial"))
    printed = mod.script()
    assert "T.q_multiply_shift(A[i], 1457846997, 31, S[i])" in printed
    assert_structural_equal(mod, tilelang.parse(printed))


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_fixed_point_multiply_matches_the_formula(target, kind):
    mod = tilelang.parse(TEXT.replace("KIND", kind))
    rng = np.random.default_rng(0)
    a = rng.integers(-(2**24), 2**24, 64).astype("int32")
    s = rng.integers(-6, 5, 64).astype("int32")
    expected_b = [reference(int(x), 1457846997, 31, int(k)) for x, k in zip(a, s)]
    expected_c = [reference(int(x), 2101000910, 31, int(k), k > 0) for x, k in zip(a, s)]
    b, c = np.zeros(64, "int32"), np.zeros(64, "int32")
    tilelang.build(mod, target=target)["f"](a, s, b, c)
    np.testing.assert_array_equal(b, np.array(expected_b).astype("int32"))
    np.testing.assert_array_equal(c, np.array(expected_c).astype("int32"))


def test_the_result_is_int32():
    with pytest.raises(TIRSyntaxError, match="T.q_multiply_shift is int32, not int16"):
        tilelang.parse(TEXT.replace("KIND", "serial").replace('dtype="int32"', 'dtype="int16"'))

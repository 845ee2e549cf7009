"""The hand schedules the benchmarks time still apply and compute what NumPy does
(a benchmark is not run by the suite, so a primitive that starts refusing one of
their steps would otherwise go unnoticed: vectorize after decompose_reduction did)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_conv2d  # noqa: E402
import bench_int8  # noqa: E402


@pytest.mark.parametrize("variant", bench_conv2d.VARIANTS)
def test_conv2d_hand_schedules(variant):
    rng = np.random.default_rng(0)
    i = rng.standard_normal((1, 64, 58, 58)).astype("float32")
    w = rng.standard_normal((64, 64, 3, 3)).astype("float32")
    out = np.zeros((1, 64, 56, 56), "float32")
    tilelang.build(bench_conv2d.schedule(variant), "llvm")["conv2d"](i, w, out)
    np.testing.assert_allclose(out, bench_conv2d.reference(i, w), rtol=1e-4, atol=1e-3)


def test_int8_untensorized_schedule():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (64, 64), dtype=np.uint8)
    b = rng.integers(-128, 128, (64, 64), dtype=np.int8)
    c = np.zeros((64, 64), np.int32)
    sch = bench_int8.untensorized(64, 64, 64)
    tilelang.build(sch.mod, "llvm")["main"](a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))

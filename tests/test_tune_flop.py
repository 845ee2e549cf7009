"""The FLOP estimate behind the tuner's GFLOP/s figures."""

from __future__ import annotations

import tilelang
from tilelang.testing import default_workloads
from tilelang.testing.workloads import matmul
from tilelang.tune.flop import estimate_flop


def test_flop_estimate_counts_arithmetic_on_the_data_only():
    """A convolution's index additions (``y + ry``) and its padding's selection are
    not FLOPs: the estimate is bench_default's 2 * F * H * W * C * 9."""
    conv = default_workloads.conv2d(8, 4, 6, 6)
    assert estimate_flop(tilelang.parse(conv.tir)) == conv.flops == 2 * 4 * 6 * 6 * 8 * 9
    assert estimate_flop(matmul(32)) == 2 * 32**3

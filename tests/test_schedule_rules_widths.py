"""The register tile of the default rules (rules/tiling.py, rules/loops.py): a tile
with rows is whole registers wide or fits one (never 28 floats on a 16-lane machine,
whose accumulators LLVM splits into 4-lane pieces that spill), a tile without rows
may be wider, and a tile one vector wide takes up to 16 rows. Decisions on a fixed
machine, numbers against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.schedule.rules import Machine
from tilelang.schedule.rules.analysis import leaf_blocks
from tilelang.schedule.rules.loops import vector_tile
from tilelang.schedule.rules.tiling import plan_tiling
from tilelang.testing import default_workloads as W

AVX512 = Machine(512, 32)
AVX2 = Machine(256, 16)


@pytest.mark.parametrize(
    "extent, lanes, vectors, width",
    [
        (64, 16, 2, 32),  # two whole registers
        (48, 16, 2, 16),  # one whole register (48 is no multiple of 32)
        (56, 16, 2, 28),  # no whole register divides: the widest divisor in two
        (56, 8, 2, 8),
        (12, 16, 1, 12),
        (7, 16, 2, 7),
    ],
)
def test_vector_tile(extent, lanes, vectors, width):
    assert vector_tile(extent, lanes, vectors) == width


def _plan(workload, block, machine):
    (info,) = [
        i for i in leaf_blocks(tilelang.parse(workload.tir)[workload.name]) if i.name == block
    ]
    return plan_tiling(info, machine)


def test_tile_sizes():
    conv = _plan(W.conv2d(), "conv", AVX512)  # 56 wide: 14 lanes, 16 filters
    assert (conv.vec_tile, conv.row_tile, conv.lanes) == (14, 16, 14)
    matmul = _plan(W.matmul(), "C", AVX512)  # two vectors by 8 rows
    assert (matmul.vec_tile, matmul.row_tile, matmul.lanes) == (32, 8, 16)
    narrow = _plan(W.conv2d(), "conv", AVX2)  # one vector, 12 registers: 8 rows
    assert (narrow.vec_tile, narrow.row_tile) == (8, 8)
    alone = _plan(W.depthwise_conv2d(), "dw", AVX512)  # no rows: 28 wide
    assert (alone.vec_tile, alone.row_iter) == (28, None)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_one_register_tiles_compute_numpys_result(target):
    workload = W.conv2d(16, 32, 28, 28)  # 28 wide: tiles of 14
    lib = tilelang.build(tilelang.parse(workload.tir), target)
    assert "factors=[None, 14]" in str(lib.trace) or AVX512 != _host()
    args = workload.arguments(seed=3)
    lib["conv2d"](*args)
    np.testing.assert_allclose(args[-1], workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4)


def _host():
    from tilelang.schedule.rules.machine import host_machine

    return host_machine()

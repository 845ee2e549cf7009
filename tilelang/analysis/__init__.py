"""Analyses over the IR that need integer arithmetic (a layer above
:mod:`tilelang.arith`): the buffer regions a block reads and writes."""

from tilelang.analysis.block_regions import (
    get_block_access_region,
    get_block_read_write_region,
    infer_block_regions,
)

__all__ = ["get_block_access_region", "get_block_read_write_region", "infer_block_regions"]

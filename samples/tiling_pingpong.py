"""Tiled strided load/store with a ping-pong channel split, compiled to C that calls an
accelerator's instruction library.

The input (N, C, H, W) is cut into (1, 4, 4, 5) tiles; an operation with strides
(1, 1, 2, 2) maps each input tile to an output tile (``output_by_stride``); each
channel tile is split into two halves that alternate between two scratch slots. The
instructions ``tl_load`` / ``tl_store`` are declared as externs and implemented by a
small C library below that emulates the accelerator's DMA with a scratch memory.

Run: ``python samples/tiling_pingpong.py`` (prints the instruction list of a small
concrete case, then checks the symbolic program against NumPy for several shapes).
"""

from __future__ import annotations

import sys

import numpy as np

import tilelang
from tilelang.ir import SizeVar
from tilelang.tiling import (
    TensorView,
    arith,
    instructions,
    intrinsic,
    make_prim_func,
    segment_by_chunk,
    seq,
    tensor,
)

TILE = (1, 4, 4, 5)
OP_STRIDES = (1, 1, 2, 2)

LOAD = intrinsic("tl_load", src=tensor("r", 4), slot="int32")
STORE = intrinsic("tl_store", dst=tensor("w", 4), slot="int32")

# The "accelerator": two scratch slots; load gathers a strided 4-D sub-tensor into a
# slot, store scatters a slot into a strided 4-D sub-tensor. A store whose shape differs
# from the slot's load poisons its output with NaN, and every instruction is counted
# (tl_count), so that a test sees both kinds of mistakes.
INSTRUCTION_LIBRARY = r"""
#include <math.h>
#include <stdint.h>

#define TL_SLOT_SIZE 4096
static float tl_scratch[2][TL_SLOT_SIZE];
static int32_t tl_shape[2][4];
int32_t tl_count = 0;

int32_t tl_load(const float* src, int32_t addr, int32_t d0, int32_t d1, int32_t d2,
                int32_t d3, int32_t s0, int32_t s1, int32_t s2, int32_t s3, int32_t slot) {
  float* dst = tl_scratch[slot];
  int32_t q = 0;
  ++tl_count;
  if ((int64_t)d0 * d1 * d2 * d3 > TL_SLOT_SIZE) return -1;
  for (int32_t a = 0; a < d0; ++a)
    for (int32_t b = 0; b < d1; ++b)
      for (int32_t c = 0; c < d2; ++c)
        for (int32_t d = 0; d < d3; ++d)
          dst[q++] = src[addr + a * s0 + b * s1 + c * s2 + d * s3];
  tl_shape[slot][0] = d0; tl_shape[slot][1] = d1;
  tl_shape[slot][2] = d2; tl_shape[slot][3] = d3;
  return q;
}

int32_t tl_store(float* dst, int32_t addr, int32_t d0, int32_t d1, int32_t d2,
                 int32_t d3, int32_t s0, int32_t s1, int32_t s2, int32_t s3, int32_t slot) {
  const float* src = tl_scratch[slot];
  ++tl_count;
  int same = tl_shape[slot][0] == d0 && tl_shape[slot][1] == d1 &&
             tl_shape[slot][2] == d2 && tl_shape[slot][3] == d3;
  int32_t q = 0;
  for (int32_t a = 0; a < d0; ++a)
    for (int32_t b = 0; b < d1; ++b)
      for (int32_t c = 0; c < d2; ++c)
        for (int32_t d = 0; d < d3; ++d)
          dst[addr + a * s0 + b * s1 + c * s2 + d * s3] = same ? src[q++] : NAN;
  return q;
}
"""


def pingpong_program(shape, tile=TILE, op_strides=OP_STRIDES):
    """``(input view, output view, body)``: the comprehension of load/store pairs."""
    n_, c_, h_, w_ = shape
    _, sc, sh, sw = op_strides
    assert sc == 1, "the ping-pong split is along channels, which the operation keeps"
    inp = TensorView.root("input", shape)
    out = TensorView.root("output", [arith.ceildiv(x, s) for x, s in zip(shape, op_strides)])
    body = seq(
        instruction
        for n in segment_by_chunk(0, tile[0], n_, "n")
        for c in segment_by_chunk(0, tile[1], c_, "c")
        for h in segment_by_chunk(0, tile[2], h_, "h")
        for w in segment_by_chunk(0, tile[3], w_, "w")
        for sub_input in [inp[n, c, h, w]]
        for oh, ow in [(h.output_by_stride(sh), w.output_by_stride(sw))]
        for sub_output in [out[n, c, oh, ow]]
        # the first input row/column the strided operation reads, relative to the tile
        for first_h, first_w in [(oh.scale(sh).shift(h).start, ow.scale(sw).shift(w).start)]
        for pp in c.split(tile[1] // 2, "pp")
        for ping_input in [sub_input[:, pp.shift(c), first_h::sh, first_w::sw]]
        for ping_output in [sub_output[:, pp.shift(c)]]
        for instruction in (LOAD(ping_input, pp.index), STORE(ping_output, pp.index))
    )
    return inp, out, body


def main() -> int:
    print("C prototypes the instruction library implements:")
    print("  " + LOAD.c_prototype())
    print("  " + STORE.c_prototype())

    print("\ninstructions for input (1, 10, 7, 5):")
    _, _, body = pingpong_program((1, 10, 7, 5))
    for ins in instructions(body, LOAD, STORE):
        view = ins["src"] if ins.name == "tl_load" else ins["dst"]
        print(
            f"  {ins.name:8s} slot={ins['slot']} addr={view.addr:4d} "
            f"shape={view.shape} strides={view.strides}"
        )

    shape = tuple(SizeVar(x) for x in "NCHW")
    inp, out, body = pingpong_program(shape)
    lib = tilelang.build(
        make_prim_func(body, [inp, out], "pingpong"),
        target="c",
        extern_sources=[INSTRUCTION_LIBRARY],
    )
    failures = 0
    rng = np.random.default_rng(0)
    for dims in [(1, 10, 7, 5), (2, 9, 13, 11), (1, 1, 1, 1), (3, 8, 8, 10)]:
        x = rng.standard_normal(dims).astype("float32")
        y = np.full([-(-d // s) for d, s in zip(dims, OP_STRIDES)], np.nan, dtype="float32")
        lib["pingpong"](x, y)
        ok = np.array_equal(y, x[:, :, ::2, ::2])
        failures += not ok
        print(f"symbolic program on {dims}: {'ok' if ok else 'MISMATCH'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

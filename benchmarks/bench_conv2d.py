"""A hand-scheduled conv2d on the LLVM backend and on the C backend (gcc), side by side.

    python benchmarks/bench_conv2d.py [--number N] [--repeat R] [--may-alias] [--show ll|asm|c]

NCHW input 1x64x56x56 (stored padded, 1x64x58x58), 64 filters 3x3, stride 1, output
1x64x56x56. The hand schedule (``schedule``): output channels split by 8 and columns by
8, the reduction (c, ky, kx) outside an 8x8 tile ``fi, xi``; three variants: as is
(vectorising ``xi`` left to the compilers), with the initialisation decomposed out of
the reduction, and with ``xi`` also ``T.vectorized``. ``--may-alias`` drops the
function's ``tir.noalias`` (both backends then have to allow for overlapping buffers).
One thread; medians of ``repeat`` runs on a shared machine (timings move by 30% between
runs), so read the ratios.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import median_time

import tilelang

CONV2D = """
@T.prim_func
def conv2d(I: T.Buffer((1, 64, 58, 58), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"),
           O: T.Buffer((1, 64, 56, 56), "float32")):
    T.func_attr({"tir.noalias": True})
    for n, f, y, x, c, ky, kx in T.grid(1, 64, 56, 56, 64, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vky, vkx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ky, kx])
            with T.init():
                O[vn, vf, vy, vx] = T.float32(0)
            O[vn, vf, vy, vx] = (O[vn, vf, vy, vx]
                                 + I[vn, vc, vy + vky, vx + vkx] * W[vf, vc, vky, vkx])
"""


VARIANTS = ("tiled", "tiled+decomposed", "tiled+decomposed+vectorized")


def schedule(variant: str = VARIANTS[-1], noalias: bool = True):
    """The hand schedule: ``n, fo, y, xo, c, ky, kx, fi(8), xi(8)``, then (by
    ``variant``) ``vectorize(xi)`` and ``decompose_reduction`` at ``c``."""
    source = CONV2D if noalias else CONV2D.replace('"tir.noalias": True', '"tir.noalias": False')
    sch = tilelang.Schedule(tilelang.parse(source))
    block = sch.get_block("conv")
    n, f, y, x, c, ky, kx = sch.get_loops(block)
    fo, fi = sch.split(f, [None, 8])
    xo, xi = sch.split(x, [None, 8])
    sch.reorder(n, fo, y, xo, c, ky, kx, fi, xi)
    if "vectorized" in variant:  # loop kinds first: the update alone is not a reduction
        sch.vectorize(xi)
    if "decomposed" in variant:
        sch.decompose_reduction(block, c)
    return sch.mod


def reference(i, w):
    out = np.zeros((1, 64, 56, 56), "float32")
    for ky in range(3):
        for kx in range(3):
            patch = i[0, :, ky : ky + 56, kx : kx + 56]
            out[0] += np.einsum("cyx,fc->fyx", patch, w[:, :, ky, kx])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--may-alias", action="store_true", help="without tir.noalias")
    parser.add_argument("--show", choices=["ll", "asm", "c"])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    i = rng.standard_normal((1, 64, 58, 58), dtype="float32")
    w = rng.standard_normal((64, 64, 3, 3), dtype="float32")
    expected = reference(i, w)
    flops = 2 * 64 * 56 * 56 * 64 * 9
    print(f"{'schedule':30}{'c (gcc) ms':>12}{'llvm ms':>10}{'llvm/c':>8}{'llvm GFLOP/s':>14}")
    for variant in VARIANTS:
        mod = schedule(variant, noalias=not args.may_alias)
        times = {}
        for target in ("c", "llvm -num-cores=1"):
            lib = tilelang.build(mod, target=target)
            if args.show and (args.show == "c") == (target == "c") and variant == VARIANTS[0]:
                print(lib.get_source(args.show))
            out = np.empty((1, 64, 56, 56), "float32")
            fn = lib["conv2d"]
            fn(i, w, out)
            np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)
            times[target] = median_time(
                lambda fn=fn, out=out: fn(i, w, out), args.number, args.repeat
            )
        t_c, t_llvm = times["c"], times["llvm -num-cores=1"]
        print(
            f"{variant:30}{t_c * 1e3:12.2f}{t_llvm * 1e3:10.2f}{t_llvm / t_c:8.2f}"
            f"{flops / t_llvm / 1e9:14.1f}"
        )


if __name__ == "__main__":
    main()

"""GPU schedules of SEED_PROGRAMS.md §6 for the CUDA backend, and a demo.

- :func:`window_sum_shared`: the window sum with cooperative fetching into shared memory;
- :func:`blocking`: the §6 blocked matmul (local accumulator, thread bindings);
- :func:`tiled_shared`: a shared-memory tiled matmul: each block computes a
  ``tile x tile`` tile of C with ``threads x threads`` threads, each thread an
  ``(tile/threads)^2`` micro-tile held in registers; per step of ``k_tile`` the
  block fetches the A and B panels into shared memory cooperatively (all threads,
  bound to threadIdx), synchronised by the ThreadSync pass.

Run as a script it builds all three for sm_90 (nvcc is needed, a GPU is not) and, on a
machine with a GPU, checks them against NumPy.
"""

from __future__ import annotations

import sys

import numpy as np

import tilelang
from tilelang import tir
from tilelang.testing.workloads import matmul

WINDOW = """
@T.prim_func
def main(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
    for i in T.grid(1024):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
"""


def window_sum_shared() -> tir.Schedule:
    """§6: split, bind, cache_read into shared memory, compute_at, cooperative fetch."""
    sch = tir.Schedule(tilelang.parse(WINDOW))
    block_C = sch.get_block("C")
    (i,) = sch.get_loops(block_C)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    A_shared = sch.cache_read(block_C, read_buffer_index=0, storage_scope="shared")
    sch.compute_at(A_shared, i1)
    ax = sch.get_loops(A_shared)[-1]
    _, ax1 = sch.split(ax, [None, 128])
    sch.bind(ax1, "threadIdx.x")
    return sch


def blocking(sch, tile_local_y=8, tile_local_x=8, tile_block_y=8, tile_block_x=8, tile_k=4):
    """§6 ``blocking(sch, 8, 8, 8, 8, 4)``: each thread an 8x8 tile in a local buffer."""
    block_C = sch.get_block("C", "main")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, tile_block_y, tile_local_y])
    j0, j1, j2 = sch.split(loop=j, factors=[None, tile_block_x, tile_local_x])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    sch.decompose_reduction(block_C, k0)
    return sch


def tiled_shared(sch, tile=128, threads=16, k_tile=8):
    """The shared-memory tiled matmul (see the module docstring); the micro-tile loops
    are unrolled so that the accumulator lives in registers."""
    micro = tile // threads
    block_C = sch.get_block("C", "main")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block_C)
    i0, i1, i2 = sch.split(i, [None, threads, micro])
    j0, j1, j2 = sch.split(j, [None, threads, micro])
    k0, k1 = sch.split(k, [None, k_tile])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    for index in (0, 1):  # A, then B: fetched by all threads of the block
        fetch = sch.cache_read(block_C, index, "shared")
        sch.compute_at(fetch, k0)
        fused = sch.fuse(*sch.get_loops(fetch)[-2:])
        _, ty, tx = sch.split(fused, [None, threads, threads])
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
    for loop in (k1, i2, j2):
        sch.unroll(loop)
    init = sch.decompose_reduction(block_C, k0)
    for loop in sch.get_loops(init)[-2:]:
        sch.unroll(loop)
    for loop in sch.get_loops(C_local)[-2:]:
        sch.unroll(loop)
    return sch


def main() -> int:
    programs = {
        "window sum": window_sum_shared().mod,
        "blocked matmul": blocking(tir.Schedule(matmul(1024))).mod,
        "tiled matmul": tiled_shared(tir.Schedule(matmul(1024))).mod,
    }
    libs = {}
    for name, mod in programs.items():
        libs[name] = lib = tilelang.build(mod, target="cuda -arch=sm_90")
        source = lib.get_source()
        print(f"{name}: {len(source.splitlines())} lines of CUDA, "
              f"{source.count('__syncthreads')} barrier(s)")  # fmt: skip
    from tilelang.backends.cuda import available_launchers

    if not available_launchers():
        print("no GPU (or no pycuda / cuda-python / CuPy): built only")
        return 0
    rng = np.random.default_rng(0)
    a = rng.random(1027, dtype="float32")
    b = np.zeros(1024, "float32")
    libs["window sum"]["main"](a, b)
    np.testing.assert_allclose(b, a[:1024] + a[1:1025] + a[2:1026], rtol=1e-6)
    x, y = rng.random((1024, 1024), "float32"), rng.random((1024, 1024), "float32")
    for name in ("blocked matmul", "tiled matmul"):
        z = np.zeros((1024, 1024), "float32")
        libs[name]["main"](x, y, z)
        np.testing.assert_allclose(z, x @ y, rtol=1e-4)
        seconds = libs[name].time_evaluator("main", tilelang.cuda(), number=5)(x, y, z).mean
        print(f"{name}: {2 * 1024**3 / seconds / 1e9:.0f} GFLOP/s")
    print("all results match NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())

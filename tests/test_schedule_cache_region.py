"""cache_read / cache_write inside a non-root block allocate a cache of the region
used there (TVM's form): structural equality with the expected IR, numbers on the
python backend against the unscheduled function, and the whole-buffer fallback when
a use leaves the region."""

from __future__ import annotations

import numpy as np

import tilelang
from tilelang.ir import structural_equal

TILED = """
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), Q: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main"})
    P = T.alloc_buffer((64, 64), "float32")
    for io, jo in T.grid(4, 4):
        with T.block("tile"):
            ti, tj = T.axis.remap("SS", [io, jo])
            for x, y in T.grid(16, 16):
                with T.block("P"):
                    vi = T.axis.spatial(64, ti * 16 + x)
                    vj = T.axis.spatial(64, tj * 16 + y)
                    P[vi, vj] = A[vi, vj] * T.float32(3)
            for x, y in T.grid(16, 16):
                with T.block("Q"):
                    vi = T.axis.spatial(64, ti * 16 + x)
                    vj = T.axis.spatial(64, tj * 16 + y)
                    Q[vi, vj] = P[vi, vj] + T.float32(1)
"""

# cache_read("Q", 0, "local"): a 16x16 tile of P, read back at vi - ti * 16.
TILED_READ = """
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), Q: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main"})
    P = T.alloc_buffer((64, 64), "float32")
    for io, jo in T.grid(4, 4):
        with T.block("tile"):
            ti, tj = T.axis.remap("SS", [io, jo])
            P_local = T.alloc_buffer((16, 16), "float32", scope="local")
            for x, y in T.grid(16, 16):
                with T.block("P"):
                    vi = T.axis.spatial(64, ti * 16 + x)
                    vj = T.axis.spatial(64, tj * 16 + y)
                    P[vi, vj] = A[vi, vj] * T.float32(3)
            for a, b in T.grid(16, 16):
                with T.block("P_local"):
                    u, w = T.axis.remap("SS", [a, b])
                    P_local[u, w] = P[ti * 16 + u, tj * 16 + w]
            for x, y in T.grid(16, 16):
                with T.block("Q"):
                    vi = T.axis.spatial(64, ti * 16 + x)
                    vj = T.axis.spatial(64, tj * 16 + y)
                    Q[vi, vj] = P_local[vi - ti * 16, vj - tj * 16] + T.float32(1)
"""

# cache_write("Q", 0, "local"): Q's tile is written to a 16x16 cache, then copied out.
TILED_WRITE = """
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), Q: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main"})
    P = T.alloc_buffer((64, 64), "float32")
    for io, jo in T.grid(4, 4):
        with T.block("tile"):
            ti, tj = T.axis.remap("SS", [io, jo])
            Q_local = T.alloc_buffer((16, 16), "float32", scope="local")
            for x, y in T.grid(16, 16):
                with T.block("P"):
                    vi = T.axis.spatial(64, ti * 16 + x)
                    vj = T.axis.spatial(64, tj * 16 + y)
                    P[vi, vj] = A[vi, vj] * T.float32(3)
            for x, y in T.grid(16, 16):
                with T.block("Q"):
                    vi = T.axis.spatial(64, ti * 16 + x)
                    vj = T.axis.spatial(64, tj * 16 + y)
                    Q_local[vi - ti * 16, vj - tj * 16] = P[vi, vj] + T.float32(1)
            for a, b in T.grid(16, 16):
                with T.block("Q_local"):
                    u, w = T.axis.remap("SS", [a, b])
                    Q[ti * 16 + u, tj * 16 + w] = Q_local[u, w]
"""

# A matmul blockized by hand: each outer block owns an 8x8 tile of C and all of k.
BLOCKED_MATMUL = """
@T.prim_func
def main(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 32), "float32"),
         C: T.Buffer((32, 32), "float32")):
    T.func_attr({"global_symbol": "main"})
    for io, jo in T.grid(4, 4):
        with T.block("outer"):
            bi, bj = T.axis.remap("SS", [io, jo])
            T.reads(A[bi * 8:bi * 8 + 8, 0:16], B[0:16, bj * 8:bj * 8 + 8])
            T.writes(C[bi * 8:bi * 8 + 8, bj * 8:bj * 8 + 8])
            for x, y, k in T.grid(8, 8, 16):
                with T.block("mm"):
                    vx, vy, vk = T.axis.remap("SSR", [x, y, k])
                    with T.init():
                        C[bi * 8 + vx, bj * 8 + vy] = T.float32(0)
                    C[bi * 8 + vx, bj * 8 + vy] = (
                        C[bi * 8 + vx, bj * 8 + vy] + A[bi * 8 + vx, vk] * B[vk, bj * 8 + vy]
                    )
"""

# Q also reads the first tile of P, produced by the first scope iteration: that read
# leaves this iteration's tile, so the cache must stay the whole buffer.
CROSS_TILE = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), Q: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "main"})
    P = T.alloc_buffer((64,), "float32")
    for t in range(4):
        with T.block("tile"):
            vt = T.axis.remap("S", [t])
            for x in range(16):
                with T.block("P"):
                    vi = T.axis.spatial(64, vt * 16 + x)
                    P[vi] = A[vi] * T.float32(2)
            for x in range(16):
                with T.block("Q"):
                    vx = T.axis.remap("S", [x])
                    Q[vt * 16 + vx] = P[vt * 16 + vx] + P[vx]
"""

# The last tile is cut by T.where: the relaxed region [vt * 16, vt * 16 + 15] passes
# the buffer's end at vt = 3, so a tile-sized cache would copy out of bounds.
PREDICATED = """
@T.prim_func
def main(A: T.Buffer((60,), "float32"), Q: T.Buffer((60,), "float32")):
    T.func_attr({"global_symbol": "main"})
    P = T.alloc_buffer((60,), "float32")
    for t in range(4):
        with T.block("tile"):
            vt = T.axis.remap("S", [t])
            for x in range(16):
                with T.block("P"):
                    T.where(t * 16 + x < 60)
                    vi = T.axis.spatial(60, vt * 16 + x)
                    P[vi] = A[vi] * T.float32(2)
            for x in range(16):
                with T.block("Q"):
                    T.where(t * 16 + x < 60)
                    vi = T.axis.spatial(60, vt * 16 + x)
                    Q[vi] = P[vi] + T.float32(1)
"""


def _func(mod):
    return mod["main"]


def _run(mod, *shapes):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(shape).astype("float32") for shape in shapes]
    tilelang.build(mod, target="python")["main"](*arrays)
    return arrays[-1]


def _same_numbers(before, after, *shapes):
    np.testing.assert_allclose(_run(after, *shapes), _run(before, *shapes), rtol=1e-5)


def _alloc_shapes(mod):
    out = []

    def visit(node):
        from tilelang.ir import stmt as S

        if isinstance(node, S.Block):
            out.extend(tuple(int(d.value) for d in b.shape) for b in node.alloc_buffers)

    from tilelang.ir.functor import post_order_visit

    post_order_visit(_func(mod).body, visit)
    return out


def test_cache_read_in_scope_block_is_the_tile():
    before = tilelang.parse(TILED)
    sch = tilelang.Schedule(before)
    sch.cache_read(sch.get_block("Q"), 0, "local")
    assert structural_equal(_func(sch.mod), _func(tilelang.parse(TILED_READ)))
    _same_numbers(before, sch.mod, (64, 64), (64, 64))


def test_cache_write_in_scope_block_is_the_tile():
    before = tilelang.parse(TILED)
    sch = tilelang.Schedule(before)
    sch.cache_write(sch.get_block("Q"), 0, "local")
    assert structural_equal(_func(sch.mod), _func(tilelang.parse(TILED_WRITE)))
    _same_numbers(before, sch.mod, (64, 64), (64, 64))


def test_blocked_matmul_caches_are_slices():
    before = tilelang.parse(BLOCKED_MATMUL)
    sch = tilelang.Schedule(before)
    sch.cache_read(sch.get_block("mm"), 0, "shared")  # A: the block's declared rows
    sch.cache_read(sch.get_block("mm"), 1, "shared")  # B: the block's declared columns
    sch.cache_write(sch.get_block("mm"), 0, "local")  # C: the tile
    assert sorted(_alloc_shapes(sch.mod)) == [(8, 8), (8, 16), (16, 8)]
    _same_numbers(before, sch.mod, (32, 16), (16, 32), (32, 32))


def test_root_cache_keeps_the_buffer_shape():
    before = tilelang.parse(BLOCKED_MATMUL)
    sch = tilelang.Schedule(before)
    sch.cache_read(sch.get_block("outer"), 0, "shared")
    assert _alloc_shapes(sch.mod) == [(32, 16)]
    _same_numbers(before, sch.mod, (32, 16), (16, 32), (32, 32))


def test_read_outside_the_produced_tile_keeps_the_whole_buffer():
    before = tilelang.parse(CROSS_TILE)
    sch = tilelang.Schedule(before)
    sch.cache_read(sch.get_block("Q"), 0, "local")
    assert _alloc_shapes(sch.mod) == [(64,), (64,)]
    _same_numbers(before, sch.mod, (64,), (64,))


def test_region_past_the_buffer_end_keeps_the_whole_buffer():
    for primitive in ("cache_read", "cache_write"):
        before = tilelang.parse(PREDICATED)
        sch = tilelang.Schedule(before)
        getattr(sch, primitive)(sch.get_block("Q"), 0, "local")
        assert _alloc_shapes(sch.mod) == [(60,), (60,)]
        _same_numbers(before, sch.mod, (60,), (60,))  # the build checks every index


INT64 = """
@T.prim_func
def main(A: T.Buffer((T.int64(8), T.int64(4)), "float32"),
         B: T.Buffer((T.int64(8), T.int64(4)), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j in T.grid(T.int64(8), T.int64(4)):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""


def test_int64_buffer_gets_int64_cache_iterators():
    before = tilelang.parse(INT64)
    for primitive in ("cache_read", "cache_write"):
        sch = tilelang.Schedule(before)
        copy = sch.get(getattr(sch, primitive)(sch.get_block("B"), 0, "local"))
        assert [str(iv.dom.min.dtype) for iv in copy.iter_vars] == ["int64", "int64"]
        assert [str(iv.dom.extent.dtype) for iv in copy.iter_vars] == ["int64", "int64"]
        _same_numbers(before, sch.mod, (8, 4), (8, 4))


def test_compact_caches_move_under_the_tile_loops():
    before = tilelang.parse(TILED)
    sch = tilelang.Schedule(before)
    read = sch.cache_read(sch.get_block("Q"), 0, "local")
    x = sch.get_loops(sch.get_block("Q"))[-2]
    sch.compute_at(read, x)
    write = sch.cache_write(sch.get_block("Q"), 0, "local")
    sch.reverse_compute_at(write, x)
    assert sorted(_alloc_shapes(sch.mod)) == [(16, 16), (16, 16), (64, 64)]
    _same_numbers(before, sch.mod, (64, 64), (64, 64))

    before = tilelang.parse(BLOCKED_MATMUL)
    sch = tilelang.Schedule(before)
    read = sch.cache_read(sch.get_block("mm"), 0, "shared")
    write = sch.cache_write(sch.get_block("mm"), 0, "local")
    _, y, k = sch.get_loops(sch.get_block("mm"))[-3:]
    sch.compute_at(read, k)
    sch.reverse_compute_at(write, y)
    _same_numbers(before, sch.mod, (32, 16), (16, 32), (32, 32))

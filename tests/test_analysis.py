"""Block access regions, interval bounds and variable-usage helpers (tilelang.ir.analysis)."""

from __future__ import annotations

import pytest

from tilelang.analysis import (
    get_block_access_region,
    get_block_read_write_region,
    infer_block_regions,
)
from tilelang.arith import const_difference, eval_interval, simplify
from tilelang.ir import (
    Block,
    BlockRealize,
    BufferRegion,
    Cast,
    For,
    IntImm,
    IterVar,
    LetStmt,
    MatchBufferRegion,
    PrimFunc,
    Range,
    Var,
    decl_buffer,
    op,
    seq_stmt,
    structural_equal,
)
from tilelang.ir.var_usage import collect_vars, undefined_vars, uses_var

S, R = IterVar.DataPar, IterVar.CommReduce


def _const(x):
    assert isinstance(x, IntImm), f"expected a constant, got {type(x).__name__}"
    return x.value


def _region(buffer, *dims):
    """A BufferRegion from ``(min, extent)`` pairs (a bare expression is a point)."""
    ranges = [Range(d[0], d[1]) if isinstance(d, tuple) else Range(d, 1) for d in dims]
    return BufferRegion(buffer, tuple(ranges))


def _assert_regions(actual, expected):
    assert len(actual) == len(expected), [r.buffer.name for r in actual]
    for got, want in zip(actual, expected):
        assert got.buffer is want.buffer
        assert structural_equal(got.region, want.region), (got.buffer.name, got, want)


def _mm_block():
    A, B, Y = (decl_buffer((128, 128), "float32", n) for n in "ABY")
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    block = Block(
        [IterVar(Range(0, 128), v, kind) for v, kind in ((vi, S), (vj, S), (vk, R))],
        [],
        [],
        "Y",
        Y.vstore((vi, vj), Y[vi, vj] + A[vi, vk] * B[vk, vj]),
        init=Y.vstore((vi, vj), 0.0),
    )
    return block, (A, B, Y), (vi, vj, vk)


def test_reduction_reads_and_writes_its_output():
    block, (A, B, Y), (vi, vj, vk) = _mm_block()
    reads, writes = get_block_access_region(block)
    _assert_regions(reads, [_region(Y, vi, vj), _region(A, vi, vk), _region(B, vk, vj)])
    _assert_regions(writes, [_region(Y, vi, vj)])
    # block iterators stay symbolic: the very same variables index the region
    assert reads[0].region[0].min is vi


def test_read_write_region_drops_output_of_block_with_init():
    block, (A, B, Y), (vi, vj, vk) = _mm_block()
    reads, writes = get_block_read_write_region(block)
    _assert_regions(reads, [_region(A, vi, vk), _region(B, vk, vj)])
    _assert_regions(writes, [_region(Y, vi, vj)])
    filled = infer_block_regions(block)
    assert filled is not block and len(filled.reads) == 2
    assert infer_block_regions(filled) is filled


def test_point_accesses_merge_into_a_window():
    A, B = decl_buffer((1027,), "float32", "A"), decl_buffer((1024,), "float32", "B")
    vi = Var("vi")
    body = B.vstore((vi,), A[vi] + A[vi + 1] + A[vi + 2])
    block = Block([IterVar(Range(0, 1024), vi, S)], [], [], "C", body)
    reads, writes = get_block_access_region(block)
    _assert_regions(reads, [_region(A, (vi, 3))])
    _assert_regions(writes, [_region(B, vi)])


def test_inner_loops_are_relaxed_and_allocations_excluded():
    A = decl_buffer((64, 128), "float32", "A")
    tmp = decl_buffer((16,), "float32", "tmp")
    vo, j = Var("vo"), Var("j")
    loop = For(
        j, 0, 16, "serial", seq_stmt(tmp.vstore((j,), A[vo * 16 + j, 3]), A.vstore((0, j), tmp[j]))
    )
    block = Block([IterVar(Range(0, 4), vo, S)], [], [], "X", loop, alloc_buffers=[tmp])
    reads, writes = get_block_access_region(block)
    _assert_regions(reads, [_region(A, (vo * 16, 16), 3)])
    _assert_regions(writes, [_region(A, 0, (IntImm("int32", 0), 16))])


def test_nested_block_regions_are_substituted_and_relaxed():
    """The blockize shape: an outer block over 16x16 tiles of an inner block."""
    A, C = decl_buffer((64, 64), "float32", "A"), decl_buffer((64, 64), "float32", "C")
    vo, vi_i, i1 = Var("vo"), Var("vi_i"), Var("i_1")
    inner = Block(
        [IterVar(Range(0, 16), vi_i, S)],
        [],
        [],
        "inner",
        C.vstore((vo * 16 + vi_i, 0), C[vo * 16 + vi_i, 0] + A[vo * 16 + vi_i, 1]),
    )
    nest = For(i1, 0, 16, "serial", BlockRealize([i1], True, inner))
    local = decl_buffer((4,), "float32", "local")
    inner2 = Block([], [], [], "uses_local", local.vstore((0,), 1.0), alloc_buffers=[local])
    outer = Block(
        [IterVar(Range(0, 4), vo, S)],
        [],
        [],
        "outer",
        seq_stmt(nest, BlockRealize([], True, inner2)),
    )
    reads, writes = get_block_access_region(outer)
    _assert_regions(reads, [_region(C, (vo * 16, 16), 0), _region(A, (vo * 16, 16), 1)])
    _assert_regions(writes, [_region(C, (vo * 16, 16), 0)])


def test_let_bound_index_and_match_buffer_and_access_ptr():
    A = decl_buffer((32,), "float32", "A")
    vi, t = Var("vi"), Var("t")
    view = decl_buffer((4,), "float32", "V")
    match = MatchBufferRegion(view, _region(A, (vi * 4, 4)))
    body = LetStmt(t, vi * 2, view.vstore((0,), view[1]))
    block = Block([IterVar(Range(0, 8), vi, S)], [], [], "m", body, match_buffers=[match])
    reads, writes = get_block_access_region(block)
    _assert_regions(reads, [_region(A, (vi * 4, 4))])
    _assert_regions(writes, [_region(A, (vi * 4, 4))])

    D = decl_buffer((16,), "int32", "D")
    call = op.call_extern("int32", "f", D.access_ptr("w"))
    from tilelang.ir import Evaluate

    block = Block([], [], [], "ext", Evaluate(call))
    reads, writes = get_block_access_region(block, {D.data: D})
    assert reads == [] and len(writes) == 1 and writes[0].buffer is D
    assert _const(writes[0].region[0].extent) == 16


def test_unbounded_index_falls_back_to_full_extent():
    A, Idx = decl_buffer((10, 20), "float32", "A"), decl_buffer((8,), "int32", "Idx")
    k = Var("k")
    body = For(k, 0, 8, "serial", A.vstore((Idx[k], k * k), 1.0))
    block = Block([], [], [], "scatter", body)
    _, writes = get_block_access_region(block)
    rng0, rng1 = writes[0].region
    assert _const(rng0.min) == 0 and _const(rng0.extent) == 10
    # k * k with both bounds constant: [0, 49] → clipped to nothing smaller than that
    assert _const(rng1.min) == 0 and _const(rng1.extent) == 50


# ------------------------------------------------------------------ intervals


@pytest.mark.parametrize(
    "make, lo, hi",
    [
        (lambda i, n: i * 3 + 1, 1, 46),
        (lambda i, n: 20 - i * 2, -10, 20),
        (lambda i, n: i // 4, 0, 3),
        (lambda i, n: i % 4, 0, 3),
        (lambda i, n: op.min(i, 7), 0, 7),
        (lambda i, n: op.max(i - 10, 0), 0, 5),
        (lambda i, n: (i + 16) % 16, 0, 15),
    ],
)
def test_eval_interval_constant_bounds(make, lo, hi):
    i, n = Var("i"), Var("n")
    got_lo, got_hi = eval_interval(make(i, n), {i: Range(0, 16)})
    assert (_const(got_lo), _const(got_hi)) == (lo, hi)


def test_eval_interval_symbolic_and_untouched():
    i, vo, n = Var("i"), Var("vo"), Var("n")
    lo, hi = eval_interval(vo * 16 + i, {i: Range(0, 16)})
    assert structural_equal(lo, vo * 16) and structural_equal(hi, vo * 16 + 15)
    expr = vo + 1
    assert eval_interval(expr, {i: Range(0, 16)}) == (expr, expr)
    lo, hi = eval_interval(i, {i: Range(2, n)})
    assert _const(lo) == 2 and structural_equal(hi, n + 1)
    assert eval_interval(i * n, {i: Range(0, 4)}) == (None, None)


def test_simplify_and_const_difference():
    x, y = Var("x"), Var("y")
    assert _const(simplify(x * 16 + 15 - x * 16 + 1)) == 16
    assert simplify(x + y) is not None and structural_equal(simplify(x + 0), x)
    assert const_difference(x + 3, x) == 3
    assert const_difference(x + y, x) is None


# ------------------------------------------------------------- variable usage


def test_collect_vars_uses_var_and_undefined_vars():
    A = decl_buffer((16,), "float32", "A")
    i, n, m = Var("i"), Var("n"), Var("m")
    body = For(i, 0, n, "serial", A.vstore((i,), A[i] + Cast("float32", m)))
    used = collect_vars(body)
    assert [v.name for v in used] == ["n", "A", "i", "m"]
    assert uses_var(body, m) and not uses_var(body, Var("m"))
    assert [v.name for v in undefined_vars(body)] == ["n", "A", "m"]
    a = Var("a", "handle")
    func = PrimFunc([a, n, m], body, buffer_map={a: A})
    assert undefined_vars(func) == []

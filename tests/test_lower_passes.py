"""Each lowering pass on its own, and the pipeline's output form (docs/lowered_ir.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tilelang
from tilelang.ir import (
    Allocate,
    Block,
    BlockRealize,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    IfThenElse,
    IRModule,
    SeqStmt,
    post_order_visit,
)
from tilelang.transform import (
    BindArguments,
    CompactBufferAllocation,
    ConvertBlocksToOpaque,
    FlattenBuffer,
    LowerInitBlock,
    LowerMatchBuffer,
    LowerOpaqueBlock,
    PlanAndUpdateBufferAllocationLocation,
    RemoveNoOp,
    Sequential,
    Simplify,
    UnrollLoop,
    VerifyWellFormed,
    WellFormedError,
)

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def nodes(node, cls) -> list:
    found = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


def run(mod: IRModule, *passes) -> IRModule:
    return Sequential([p() for p in passes])(mod)


def sample(name: str) -> IRModule:
    return tilelang.parse_file(SAMPLES / name)


def only_func(mod):
    (func,) = mod.functions.values()
    return func


# ------------------------------------------------------------ VerifyWellFormed


def _func_with_body(body_text: str) -> str:
    return (
        '@T.prim_func\ndef f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):\n'
        + body_text
    )


def test_verify_accepts_the_samples():
    for path in sorted(SAMPLES.glob("*.tir")):
        run(tilelang.parse_file(path), VerifyWellFormed)


def test_verify_block_iterator_outside_its_block():
    from tilelang.ir import For, Var, seq_stmt

    func = only_func(
        tilelang.parse(
            _func_with_body("""    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
""")
        )
    )
    (loop,) = nodes(func.body, For)
    (block,) = [b for b in nodes(func.body, Block) if b.name_hint == "B"]
    vi = block.iter_vars[0].var
    leak = func.buffer_map[func.params[1]].vstore((vi,), 0.0)
    bad = func.with_body(seq_stmt(loop, For(Var("j"), 0, 8, "serial", leak)))
    with pytest.raises(WellFormedError, match="block iterator vi of block 'B'"):
        run(IRModule({"f": bad}), VerifyWellFormed)


def test_verify_undefined_variable_and_buffer():
    from tilelang.ir import Var, decl_buffer

    func = only_func(tilelang.parse(_func_with_body("    B[0] = A[0]\n")))
    stray = Var("stray")
    bad = func.with_body(func.buffer_map[func.params[1]].vstore((stray,), 0.0))
    with pytest.raises(WellFormedError, match="variable stray is used but not defined"):
        run(IRModule({"f": bad}), VerifyWellFormed)
    ghost = decl_buffer((4,), "float32", "ghost")
    bad = func.with_body(ghost.vstore((0,), 1.0))
    with pytest.raises(WellFormedError, match="buffer ghost is used but not defined"):
        run(IRModule({"f": bad}), VerifyWellFormed)


def test_verify_float_loop_extent():
    from tilelang.ir import FloatImm, For, Var

    func = only_func(tilelang.parse(_func_with_body("    B[0] = A[0]\n")))
    bad = func.with_body(For(Var("i"), 0, FloatImm("float32", 4.0), "serial", func.body))
    with pytest.raises(WellFormedError, match="loop bounds must be integers"):
        run(IRModule({"f": bad}), VerifyWellFormed)


# --------------------------------------------------------------- block passes


def test_lower_init_block_guards_init_with_reduce_vars_at_their_min():
    mod = run(sample("mm_relu.tir"), LowerInitBlock)
    block = next(b for b in nodes(only_func(mod).body, Block) if b.name_hint == "Y")
    assert block.init is None
    guard = block.body.seq[0]
    assert isinstance(guard, IfThenElse)
    assert str(guard.condition) == "vk == 0"


def test_convert_blocks_to_opaque_substitutes_bindings():
    mod = run(sample("mm_relu_scheduled.tir"), LowerInitBlock, ConvertBlocksToOpaque)
    func = only_func(mod)
    for realize in nodes(func.body, BlockRealize):
        assert realize.iter_values == () and realize.block.iter_vars == ()
    y_block = next(b for b in nodes(func.body, Block) if b.name_hint == "Y")
    store = y_block.body.seq[1]
    assert str(store.indices[1]) == "j_0 * 4 + j_1"


def test_lower_opaque_block_turns_where_into_if_and_allocs_into_allocate():
    mod = run(sample("loop_kinds.tir"), LowerInitBlock, ConvertBlocksToOpaque, LowerOpaqueBlock)
    func = only_func(mod)
    assert not nodes(func.body, BlockRealize)
    guards = [s for s in nodes(func.body, IfThenElse) if "< 16" in str(s.condition)]
    assert len(guards) == 1
    mm = run(sample("mm_relu.tir"), LowerInitBlock, ConvertBlocksToOpaque, LowerOpaqueBlock)
    (alloc,) = nodes(only_func(mm).body, Allocate)
    assert isinstance(alloc.body, DeclBuffer) and alloc.body.buffer.data is alloc.buffer_var
    assert only_func(mm).body is alloc  # the root block's allocation leads the body


MATCH_SOURCE = """
@T.prim_func
def tiles(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            X = T.match_buffer(A[vi, vj * 4:vj * 4 + 4], (4,), "float32")
            Y = T.match_buffer(B[vi, vj * 4:vj * 4 + 4], (4,), "float32")
            for k in range(4):
                Y[k] = X[k] * T.float32(2)
"""


def test_lower_match_buffer_rewrites_views_to_their_source():
    mod = run(tilelang.parse(MATCH_SOURCE), ConvertBlocksToOpaque, LowerMatchBuffer)
    func = only_func(mod)
    (store,) = nodes(func.body, BufferStore)
    a, b = (func.buffer_map[p] for p in func.params)
    assert store.buffer is b and [str(x) for x in store.indices] == ["i", "j * 4 + k"]
    (load,) = nodes(store.value, BufferLoad)
    assert load.buffer is a
    assert all(not r.block.match_buffers for r in nodes(func.body, BlockRealize))


def test_lower_match_buffer_binds_symbolic_strides_and_offsets():
    text = (SAMPLES / "tmm16_intrin.tir").read_text()
    mod = tilelang.parse(text)
    lowered = tilelang.lower(mod)
    impl = lowered["tmm16_impl"]
    # offset_factor without elem_offset: each buffer's offset is a variable too (TVM)
    assert [v.name for v in impl.attrs["tl.size_vars"]] == [
        "sa", "A_elem_offset", "sb", "B_elem_offset", "sc", "C_elem_offset",
    ]  # fmt: skip


# --------------------------------------------------------------- compaction

PHASE1 = (
    LowerInitBlock,
    ConvertBlocksToOpaque,
    PlanAndUpdateBufferAllocationLocation,
    CompactBufferAllocation,
)


def test_reverse_compute_at_intermediate_compacts_to_a_1x4_tile():
    mod = run(sample("mm_relu_scheduled.tir"), *PHASE1)
    (block,) = [b for b in nodes(only_func(mod).body, Block) if b.alloc_buffers]
    (y,) = block.alloc_buffers
    assert [int(x) for x in y.shape] == [1, 4]
    stores = [s for s in nodes(block.body, BufferStore) if s.buffer is y]
    assert [str(x) for x in stores[-1].indices] == ["0", "j_1"]
    lowered = tilelang.lower(sample("mm_relu_scheduled.tir"))
    (alloc,) = nodes(only_func(lowered).body, Allocate)
    assert [int(x) for x in alloc.extents] == [4]


def test_unscheduled_intermediate_keeps_its_full_size():
    (alloc,) = nodes(only_func(tilelang.lower(sample("mm_relu.tir"))).body, Allocate)
    assert [int(x) for x in alloc.extents] == [128 * 128]


def test_gpu_local_accumulator_compacts_to_the_thread_tile():
    (alloc,) = nodes(only_func(tilelang.lower(sample("blocked_matmul_gpu.tir"))).body, Allocate)
    assert alloc.scope == "local" and [int(x) for x in alloc.extents] == [64]


def test_shared_buffer_stays_outside_thread_loops():
    func = only_func(tilelang.lower(sample("window_sum_gpu.tir")))
    (alloc,) = nodes(func.body, Allocate)
    assert alloc.scope == "shared"
    assert func.body.thread_binding == "blockIdx.x" and func.body.body is alloc
    assert int(alloc.extents[0]) < 1027  # compacted to the block's window


# ------------------------------------------------------------ flatten & co.

STRIDED = """
@T.prim_func
def strided(a: T.handle, b: T.handle):
    s = T.int32()
    off = T.int32()
    A = T.match_buffer(a, (4, 4), "float32", strides=(s, 1), elem_offset=off)
    B = T.match_buffer(b, (4, 4), "float32", elem_offset=3)
    for i, j in T.grid(4, 4):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
"""


def test_flatten_honours_strides_and_elem_offset():
    func = only_func(tilelang.lower(tilelang.parse(STRIDED)))
    (store,) = nodes(func.body, BufferStore)
    a, b = (func.buffer_map[p] for p in func.params)
    assert str(store.indices[0]) == "i * 4 + j + 3"
    (load,) = nodes(store.value, BufferLoad)
    # symbolic strides and offset: the flat index may pass int32, so it is int64
    wide = 'T.Cast("int64", i) * T.Cast("int64", s) + T.Cast("int64", j) + T.Cast("int64", off)'
    assert str(load.indices[0]) == wide
    assert store.buffer.data is b.data and load.buffer.data is a.data
    for buffer in (store.buffer, load.buffer):
        assert len(buffer.shape) == 1 and buffer.strides == () and int(buffer.elem_offset) == 0
    assert len(b.shape) == 2  # buffer_map keeps the N-D buffers
    assert [v.name for v in func.attrs["tl.size_vars"]] == ["s", "off"]


def test_simplify_removes_decided_conditions_and_splits_indices():
    text = """
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i_0, i_1 in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 16)
            A[vi // 4 * 4 + vi % 4] = T.float32(1)
"""
    func = only_func(tilelang.lower(tilelang.parse(text)))
    assert not nodes(func.body, IfThenElse)
    (store,) = nodes(func.body, BufferStore)
    assert str(store.indices[0]) == "i_0 * 4 + i_1"


def test_remove_no_op_and_unroll():
    text = """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in range(0):
        A[i] = T.float32(1)
    for j in T.unroll(3):
        T.evaluate(0)
        A[j] = T.float32(2)
    for k in T.unroll(100):
        A[k % 8] = T.float32(3)
"""
    mod = run(tilelang.parse(text), FlattenBuffer, UnrollLoop, Simplify, RemoveNoOp)
    body = only_func(mod).body
    assert isinstance(body, SeqStmt)
    stores = [s for s in body.seq if isinstance(s, BufferStore)]
    assert [str(s.indices[0]) for s in stores] == ["0", "1", "2"]
    assert len(body.seq) == 4  # three unrolled stores, then the 100-iteration loop


def test_bind_arguments_attrs():
    func = only_func(tilelang.lower(sample("linear0.tir")))
    assert func.attrs["global_symbol"] == "linear0" and func.attrs["tl.lowered"] is True
    assert [v.name for v in func.attrs["tl.size_vars"]] == ["m", "n"]
    plain = tilelang.parse('@T.prim_func\ndef g(A: T.Buffer((4,), "int32")):\n    A[0] = 1\n')
    out = run(plain, BindArguments)
    assert out["g"].attrs["tl.size_vars"] == ()


# ----------------------------------------------------------- the whole form


def _assert_lowered_form(func):
    allowed = (
        "For", "While", "IfThenElse", "LetStmt", "SeqStmt", "BufferStore", "Evaluate",
        "AssertStmt", "Allocate", "DeclBuffer", "AttrStmt",
    )  # fmt: skip
    from tilelang.ir import Stmt

    for stmt in nodes(func.body, Stmt):
        assert type(stmt).__name__ in allowed, type(stmt).__name__
    for access in nodes(func.body, (BufferLoad, BufferStore)):
        buffer = access.buffer
        assert len(access.indices) == 1
        assert len(buffer.shape) == 1 and buffer.strides == () and int(buffer.elem_offset) == 0


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.tir")), ids=lambda p: p.stem)
def test_every_sample_lowers_to_the_contract_form(path):
    for func in tilelang.lower(tilelang.parse_file(path)).functions.values():
        _assert_lowered_form(func)


def test_lowered_scheduled_mm_relu_golden(golden):
    golden(str(tilelang.lower(sample("mm_relu_scheduled.tir"))))


def test_lowered_window_sum_gpu_golden(golden):
    golden(str(tilelang.lower(sample("window_sum_gpu.tir"))))


def test_deep_tree_of_20k_statements_lowers():
    from tilelang.ir import IntImm, PrimFunc, Var, decl_buffer, seq_stmt

    a = decl_buffer((8,), "int32", "A")
    handle = Var("A", "handle")
    body = seq_stmt(*[a.vstore((i % 8,), IntImm("int32", i) * 1) for i in range(20000)])
    func = PrimFunc((handle,), body, buffer_map={handle: a})
    lowered = tilelang.lower(func, name="deep")
    assert len(lowered["deep"].body.seq) == 20000
    # nested: 1,500 ifs inside each other
    n = Var("n")
    nested = a.vstore((0,), 1)
    for i in range(1500):
        nested = IfThenElse(n - n + i >= 0, nested)
    deep = PrimFunc((handle, n), nested, buffer_map={handle: a})
    out = tilelang.lower(deep, name="nested")["nested"]
    assert isinstance(out.body, BufferStore)  # every condition was proven true

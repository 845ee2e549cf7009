"""The .tir parser: every SEED program parses, into the IR the program means.

Structure is checked against IR built by hand (structural equality) and field by field
on the canonical programs; every printed form parses back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tilelang
from tilelang.ir import (
    Add,
    Block,
    BlockRealize,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterVar,
    LetStmt,
    Max,
    PrimFunc,
    Select,
    SeqStmt,
    Var,
    assert_structural_equal,
    const,
    decl_buffer,
    structural_equal,
)

SAMPLES = sorted((Path(__file__).parent.parent / "samples").glob("*.tir"))


def only_func(mod) -> PrimFunc:
    (func,) = mod.functions.values()
    return func


def walk(node, kind):
    """Every node of class ``kind`` under ``node``, in pre-order."""
    found = []

    def visit(n):
        if isinstance(n, kind):
            found.append(n)

    from tilelang.ir import post_order_visit

    post_order_visit(node, visit)
    return found


def blocks(func) -> dict:
    return {b.name_hint: b for b in walk(func.body, Block)}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_parses_and_its_printed_form_parses_back(path):
    mod = tilelang.parse_file(path)
    assert len(mod) >= 1
    printed = mod.script()
    again = tilelang.parse(printed)
    assert sorted(again.functions) == sorted(mod.functions)
    assert again.script() == tilelang.parse(again.script()).script()


def test_samples_cover_every_tir_program_of_the_seed_document():
    names = {p.stem for p in SAMPLES}
    expected = {
        "mm_relu", "mm_relu_scheduled", "mm_relu_decomposed", "linear0", "window_sum",
        "window_sum_gpu", "blocked_matmul_gpu", "matmul_blockized", "tmm16_intrin",
        "matmul_two_blocks", "strided_let", "loop_kinds",
    }  # fmt: skip
    assert expected <= names


def test_mm_relu_structure():
    mod = tilelang.parse_file(Path(__file__).parent.parent / "samples" / "mm_relu.tir")
    func = mod["mm_relu"]
    assert func.attrs == {"global_symbol": "mm_relu", "tir.noalias": True}
    assert [p.dtype for p in func.params] == ["handle"] * 3
    buffers = func.buffers
    assert [b.name for b in buffers] == ["A", "B", "C"]
    assert all(b.dtype == "float32" and [int(s) for s in b.shape] == [128, 128] for b in buffers)
    # the implicit root block holds the function-level alloc_buffer
    root = func.body
    assert isinstance(root, BlockRealize) and root.block.name_hint == "root"
    assert root.block.iter_vars == () and root.iter_values == ()
    (Y,) = root.block.alloc_buffers
    assert Y.name == "Y" and Y.dtype == "float32"
    first, second = root.block.body.seq
    loops = [first, first.body, first.body.body]
    assert [int(loop.extent) for loop in loops] == [128, 128, 128]
    assert all(loop.kind == ForKind.SERIAL and int(loop.min) == 0 for loop in loops)
    y_block = first.body.body.body.block
    assert y_block.name_hint == "Y"
    kinds = [iv.iter_type for iv in y_block.iter_vars]
    assert kinds == [IterVar.DataPar, IterVar.DataPar, IterVar.CommReduce]
    assert all(int(iv.dom.extent) == 128 for iv in y_block.iter_vars)
    # the bindings are the loop variables, in order
    realize = first.body.body.body
    assert all(v is loop.loop_var for v, loop in zip(realize.iter_values, loops))
    assert isinstance(y_block.init, BufferStore) and y_block.init.buffer is Y
    # regions a block does not state are inferred, as TVM's parser does
    assert [r.buffer.name for r in y_block.reads] == ["A", "B"]
    assert [r.buffer for r in y_block.writes] == [Y]
    c_block = second.body.body.block
    assert isinstance(c_block.body.value, Max)
    assert c_block.init is None


def test_mm_relu_matches_hand_built_ir():
    text = """
@T.prim_func
def mm(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 4):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(C[vi], A[vi, 0:4])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
"""
    A = decl_buffer((4, 4), "float32", "A")
    C = decl_buffer((4,), "float32", "C")
    a, c = Var("a", "handle"), Var("c", "handle")
    i, k, vi, vk = Var("i"), Var("k"), Var("vi"), Var("vk")
    from tilelang.ir import BufferRegion, Range

    block = Block(
        (IterVar(Range(0, 4), vi, IterVar.DataPar), IterVar(Range(0, 4), vk, IterVar.CommReduce)),
        (BufferRegion(C, (Range(vi, 1),)), BufferRegion(A, (Range(vi, 1), Range(0, 4)))),
        (BufferRegion(C, (Range(vi, 1),)),),
        "C",
        BufferStore(C, Add(BufferLoad(C, (vi,)), BufferLoad(A, (vi, vk))), (vi,)),
        init=BufferStore(C, FloatImm("float32", 0.0), (vi,)),
    )
    realize = BlockRealize((i, k), const(True), block)
    body = For(i, 0, 4, ForKind.SERIAL, For(k, 0, 4, ForKind.SERIAL, realize))
    root = BlockRealize((), const(True), Block((), (), (), "root", body))
    expected = PrimFunc((a, c), root, None, {a: A, c: C}, {"global_symbol": "mm"})
    assert_structural_equal(only_func(tilelang.parse(text)), expected)


def test_linear0_symbolic_shapes_through_handles():
    func = tilelang.parse_file(Path(__file__).parent.parent / "samples" / "linear0.tir")["linear0"]
    assert [p.name for p in func.params] == ["x", "w", "b", "z"]
    X, W, B, Z = (func.buffer_map[p] for p in func.params)
    m, n = X.shape[1], W.shape[0]
    assert isinstance(m, Var) and m.dtype == "int64" and W.shape[1] is m
    assert B.shape[0] is n and Z.shape[1] is n
    y_block = blocks(func)["Y"]
    # remap takes each iterator's domain from the loop that binds it
    loop_j = walk(func.body, For)[1]
    assert loop_j.extent is n and loop_j.loop_var.dtype == "int64"
    assert y_block.iter_vars[1].dom.extent is n and y_block.iter_vars[2].dom.extent is m
    assert y_block.iter_vars[2].iter_type == IterVar.CommReduce
    assert [b.name for b in func.body.block.alloc_buffers] == ["Y"]


def test_match_buffer_without_dtype_is_float32_and_two_blocks_share_loops():
    path = Path(__file__).parent.parent / "samples" / "matmul_two_blocks.tir"
    func = tilelang.parse_file(path)["matmul"]
    assert all(b.dtype == "float32" for b in func.buffers)
    found = blocks(func)
    assert set(found) == {"root", "init", "update"}
    j_loop = walk(func.body, For)[1]
    assert isinstance(j_loop.body, SeqStmt) and len(j_loop.body) == 2


def test_window_sum_gpu_thread_bindings_where_and_regions():
    path = Path(__file__).parent.parent / "samples" / "window_sum_gpu.tir"
    func = tilelang.parse_file(path)["main"]
    loops = walk(func.body, For)
    bound = {loop.loop_var.name: loop.thread_binding for loop in loops}
    assert bound == {"i_0": "blockIdx.x", "i_1": "threadIdx.x", "ax0_0": None,
                     "ax0_1": "threadIdx.x"}  # fmt: skip
    (shared,) = func.body.block.alloc_buffers
    assert shared.scope == "shared" and shared.dtype == "float32"
    realizes = {r.block.name_hint: r for r in walk(func.body, BlockRealize)}
    predicate = realizes["A_shared"].predicate
    assert predicate.dtype == "bool" and not isinstance(predicate, IntImm)
    (read,) = realizes["C"].block.reads
    vi = realizes["C"].block.iter_vars[0].var
    assert read.buffer is shared and read.region[0].min is vi and int(read.region[0].extent) == 3
    (write,) = realizes["C"].block.writes
    assert int(write.region[0].extent) == 1


def test_blockized_regions_are_min_and_extent():
    path = Path(__file__).parent.parent / "samples" / "matmul_blockized.tir"
    outer = blocks(tilelang.parse_file(path)["main"])["matmul_o"]
    a_region = outer.reads[0]
    assert [int(r.extent) for r in a_region.region] == [16, 16]
    assert outer.init is not None and walk(outer.init, Block)[0].name_hint == "matmul_init"
    assert walk(outer.init, Block)[0].reads == ()  # T.reads() is an empty list


def test_tensor_intrinsic_buffers_and_extern_call():
    mod = tilelang.parse_file(Path(__file__).parent.parent / "samples" / "tmm16_intrin.tir")
    impl = mod["tmm16_impl"]
    A = impl.buffer_map[impl.params[0]]
    assert A.scope == "global.A_reg" and A.offset_factor == 16
    assert isinstance(A.strides[0], Var) and int(A.strides[1]) == 1
    (evaluate,) = walk(impl.body, Evaluate)
    call = evaluate.value
    assert call.op == "call_extern" and call.dtype == "int32" and call.args[0].value == "tmm16"
    assert [a.op for a in call.args[1:4]] == ["tvm_access_ptr"] * 3
    assert int(call.args[1].args[4]) == 2 and int(call.args[2].args[4]) == 1  # "w", "r"
    desc = blocks(mod["tmm16_desc"])
    # an explicit root block is kept as written, not wrapped again
    assert mod["tmm16_desc"].body.block.name_hint == "root" and len(desc["root"].reads) == 3
    update = desc["tmm-16x16"].body  # += is a store of the sum
    assert isinstance(update, BufferStore) and isinstance(update.value, Add)


def test_strided_loops_and_let_scopes():
    func = tilelang.parse_file(Path(__file__).parent.parent / "samples" / "strided_let.tir")
    func = func["strided"]
    outer = func.body
    assert isinstance(outer, For) and outer.step is func.params[1]
    inner = outer.body
    assert inner.step is func.params[2] and int(inner.extent) == 32
    let_n = inner.body
    assert isinstance(let_n, LetStmt) and let_n.var.name == "length_n"
    assert isinstance(let_n.value, type(tilelang.ir.op.min(1, Var("x")))) and func.body is outer
    assert isinstance(let_n.body, LetStmt)


def test_loop_kinds_let_if_select_cast_and_intrinsics():
    func = tilelang.parse_file(Path(__file__).parent.parent / "samples" / "loop_kinds.tir")
    func = func["loop_kinds"]
    loops = walk(func.body, For)
    kinds = {loop.loop_var.name: (loop.kind, int(loop.min), int(loop.extent)) for loop in loops}
    assert kinds["p"] == (ForKind.PARALLEL, 0, 2)
    assert kinds["s"] == (ForKind.SERIAL, 0, 1)
    assert kinds["v"] == (ForKind.VECTORIZED, 3, 1)  # T.vectorized(3, 4): min 3, extent 1
    assert kinds["u"][0] == ForKind.UNROLLED
    (let,) = walk(func.body, LetStmt)
    assert let.var.dtype == "int32"
    (branch,) = walk(func.body, IfThenElse)
    assert branch.else_case is not None
    assert walk(func.body, Select) and walk(func.body, Cast)
    assert any(c.op == "exp" for c in walk(func.body, Call))
    split = blocks(func)["split"]
    assert int(split.iter_vars[0].dom.extent) == 16
    assert isinstance(walk(func.body, Evaluate)[-1].value, IntImm)


SPELLINGS = {
    "bracket buffer": 'A: T.Buffer[(8,), "float32"]',
    "call buffer": 'A: T.Buffer((8,), "float32")',
    "default dtype": "A: T.Buffer((8,))",
    "scalar shape": "A: T.Buffer(8)",
}


@pytest.mark.parametrize("param", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_buffer_parameter_spellings_mean_the_same(param):
    reference = f"""
@T.prim_func
def f({SPELLINGS["call buffer"]}):
    for i in range(8):
        A[i] = T.float32(1)
"""
    text = reference.replace(SPELLINGS["call buffer"], param)
    assert structural_equal(tilelang.parse(text), tilelang.parse(reference))


def test_block_spellings_module_decorators_and_imports():
    body = """
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in T.serial(8):
            with T.{block}("B"):
                vi = T.axis.S(8, i)
                A[vi] = T.float32(0)
"""
    one = tilelang.parse("import tvm\nfrom tvm.script import tir as T\n@I.ir_module\nclass M:"
                         + body.format(block="block"))  # fmt: skip
    two = tilelang.parse("@tvm.script.ir_module\nclass Other:" + body.format(block="sblock"))
    assert structural_equal(one, two)
    renamed = tilelang.parse("from tvm.script import tir as X\n@X.prim_func\ndef f(A: X.Buffer(8)):"
                             "\n    A[0] = X.float32(2)\n")  # fmt: skip
    assert list(renamed.functions) == ["f"]


def test_literals_take_the_type_of_the_other_operand():
    func = only_func(
        tilelang.parse("""
@T.prim_func
def f(a: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "int64")
    for i in range(n):
        A[i] = i + 1
""")
    )
    store = walk(func.body, BufferStore)[0]
    assert store.value.dtype == "int64" and store.value.b.dtype == "int64"
    loop = walk(func.body, For)[0]
    assert loop.min.dtype == "int64"


def test_float_constants_special_values_and_python_arithmetic():
    func = only_func(
        tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    A[0] = T.float32("inf")
    A[1] = T.float32("-inf")
    A[2 * 2 - 2] = 1.5
    A[3] = -T.float32(2)
""")
    )
    stores = walk(func.body, BufferStore)
    values = [s.value.value for s in stores]
    assert values[0] == float("inf") and values[1] == float("-inf")
    assert values[2] == 1.5 and int(stores[2].indices[0]) == 2
    assert values[3] == -2.0


def test_function_attrs_default_global_symbol_and_scalar_params():
    func = only_func(tilelang.parse("@T.prim_func\ndef g(n: T.int32, x: T.float64):\n    pass\n"))
    assert func.attrs == {"global_symbol": "g"}
    assert [p.dtype for p in func.params] == ["int32", "float64"]
    assert func.buffer_map == {}


def test_no_root_block_without_blocks_or_allocations():
    func = only_func(tilelang.parse("@T.prim_func\ndef g(A: T.Buffer(4)):\n    A[0] = 1.0\n"))
    assert isinstance(func.body, BufferStore)


def test_decl_buffer_allocate_and_attr():
    func = only_func(
        tilelang.parse("""
@T.prim_func
def f(n: T.int32):
    A_data = T.allocate([16], "float32", "local")
    A = T.decl_buffer((16,), "float32", data=A_data)
    with T.attr(A_data, "pragma", 1):
        A[0] = T.float32(1)
    assert n > 0, "n must be positive"
""")
    )
    from tilelang.ir import Allocate, AssertStmt, AttrStmt, DeclBuffer

    alloc = func.body
    assert isinstance(alloc, Allocate) and alloc.scope == "local"
    assert isinstance(alloc.body, DeclBuffer) and alloc.body.buffer.data is alloc.buffer_var
    seq = alloc.body.body
    assert isinstance(seq, SeqStmt) and isinstance(seq[0], AttrStmt)
    assert isinstance(seq[1], AssertStmt) and seq[1].message.value == "n must be positive"


def test_spans_point_at_the_source():
    text = "@T.prim_func\ndef g(A: T.Buffer(4)):\n    for i in range(4):\n        A[i] = 1.0\n"
    func = only_func(tilelang.parse(text, "g.tir"))
    loop = func.body
    assert (loop.span.source, loop.span.line, loop.span.column) == ("g.tir", 3, 5)
    store = loop.body
    assert (store.span.line, store.span.column, store.span.end_column) == (4, 9, 19)

"""The TVMScript printer on hand-built IR: expressions, every statement, blocks, names.

Round trips through the parser live in tests/test_roundtrip*.py.
"""

from __future__ import annotations

import pytest

from tilelang.analysis import infer_block_regions
from tilelang.ir import (
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    Broadcast,
    BufferRegion,
    BufferStore,
    Cast,
    DeclBuffer,
    Evaluate,
    FloatImm,
    For,
    IfThenElse,
    IntImm,
    IRModule,
    IterVar,
    Let,
    LetStmt,
    MatchBufferRegion,
    PrimFunc,
    Ramp,
    Range,
    Select,
    SizeVar,
    StringImm,
    Var,
    While,
    decl_buffer,
    op,
    seq_stmt,
)
from tilelang.ir import expr as E
from tilelang.ir.printer import script

S, R = IterVar.DataPar, IterVar.CommReduce


def mm_relu_module() -> IRModule:
    """SEED_PROGRAMS.md §1 built by hand, with an implicit root block holding ``Y``."""
    A, B, C, Y = (decl_buffer((128, 128), "float32", n) for n in "ABCY")
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    y_block = Block(
        [IterVar(Range(0, 128), v, kind) for v, kind in ((vi, S), (vj, S), (vk, R))],
        [],
        [],
        "Y",
        Y.vstore((vi, vj), Y[vi, vj] + A[vi, vk] * B[vk, vj]),
        init=Y.vstore((vi, vj), 0.0),
    )
    # built by hand: the regions the parser infers for blocks written without them
    y_block = infer_block_regions(y_block)
    nest_y = For(i, 0, 128, "serial", For(j, 0, 128, "serial", For(
        k, 0, 128, "serial", BlockRealize([i, j, k], True, y_block))))  # fmt: skip
    i2, j2, vi2, vj2 = Var("i"), Var("j"), Var("vi"), Var("vj")
    c_block = Block(
        [IterVar(Range(0, 128), vi2, S), IterVar(Range(0, 128), vj2, S)],
        [],
        [],
        "C",
        C.vstore((vi2, vj2), op.max(Y[vi2, vj2], 0.0)),
    )
    c_block = infer_block_regions(c_block)
    nest_c = For(
        i2, 0, 128, "serial", For(j2, 0, 128, "serial", BlockRealize([i2, j2], True, c_block))
    )
    root = BlockRealize(
        [], True, Block([], [], [], "root", seq_stmt(nest_y, nest_c), alloc_buffers=[Y])
    )
    params = [Var(n, "handle") for n in "abc"]
    func = PrimFunc(
        params,
        root,
        buffer_map=dict(zip(params, (A, B, C))),
        attrs={"global_symbol": "mm_relu", "tir.noalias": True},
    )
    return IRModule({"mm_relu": func})


def test_mm_relu_module(golden):
    golden(script(mm_relu_module()))


def test_str_and_repr_use_the_printer():
    mod = mm_relu_module()
    assert str(mod) == script(mod) == mod.script()
    x = Var("x")
    assert repr(x + 1) == "x + 1"
    assert repr(mod).startswith("<IRModule:\n@I.ir_module")


# ---------------------------------------------------------------- expressions

x, y, z = Var("x"), Var("y"), Var("z")
f, g = Var("f", "float32"), Var("g", "float32")
b1, b2 = Var("p", "bool"), Var("q", "bool")


@pytest.mark.parametrize(
    "expr, text",
    [
        (lambda: (x + y) * z, "(x + y) * z"),
        (lambda: x + y * z, "x + y * z"),
        (lambda: x - (y - z), "x - (y - z)"),
        (lambda: x - y - z, "x - y - z"),
        (lambda: E.Add(x, E.Add(y, z)), "x + (y + z)"),
        (lambda: x // (y * z), "x // (y * z)"),
        (lambda: x % 4 * 2, "x % 4 * 2"),
        (lambda: x * -3, "x * -3"),
        (lambda: -3 * x, "-3 * x"),
        (lambda: E.LT(E.LT(x, y), b1), "(x < y) < p"),
        (lambda: E.EQ(x < y, b1), "(x < y) == p"),
        (lambda: (x < y) & (b1 | b2), "x < y and (p or q)"),
        (lambda: E.Or(E.And(b1, b2), b1), "p and q or p"),
        (lambda: E.Not(E.And(b1, b2)), "not (p and q)"),
        (lambda: E.And(E.Not(b1), b2), "not p and q"),
        (lambda: f / g, "f / g"),
        (lambda: op.truncdiv(x, y), "T.truncdiv(x, y)"),
        (lambda: op.truncmod(x, y), "T.truncmod(x, y)"),
        (lambda: op.min(x, y) + op.max(x, 1), "T.min(x, y) + T.max(x, 1)"),
        (lambda: Select(b1, x, y), "T.Select(p, x, y)"),
        (lambda: op.if_then_else(b1, f, 0.0), "T.if_then_else(p, f, T.float32(0))"),
        (lambda: Cast("float32", x), 'T.Cast("float32", x)'),
        (lambda: op.exp(f) + op.sqrt(g), "T.exp(f) + T.sqrt(g)"),
        (lambda: op.pow(f, g), "T.pow(f, g)"),
        (lambda: Ramp(x, 1, 4), "T.Ramp(x, 1, 4)"),
        (lambda: Broadcast(f, 8), "T.Broadcast(f, 8)"),
        (lambda: op.call_extern("int32", "tmm16", x, 3), 'T.call_extern("int32", "tmm16", x, 3)'),
    ],
)
def test_expression_text(expr, text):
    assert script(expr()) == text


@pytest.mark.parametrize(
    "value, text",
    [
        (IntImm("int32", 3), "3"),
        (IntImm("int32", -3), "-3"),
        (IntImm("int64", 3), "T.int64(3)"),
        (IntImm("int8", -7), "T.int8(-7)"),
        (IntImm("uint8", 200), "T.uint8(200)"),
        (IntImm("uint64", 2**63), f"T.uint64({2**63})"),
        (IntImm("int16", 2), "T.int16(2)"),
        (IntImm("bool", 1), "T.bool(True)"),
        (IntImm("bool", 0), "T.bool(False)"),
        (FloatImm("float32", 0.0), "T.float32(0)"),
        (FloatImm("float32", 1.5), "T.float32(1.5)"),
        (FloatImm("float64", -2.25), "T.float64(-2.25)"),
        (FloatImm("float16", 0.1), "T.float16(0.1)"),
        (FloatImm("float32", float("inf")), 'T.float32("inf")'),
        (FloatImm("float32", float("-inf")), 'T.float32("-inf")'),
        (FloatImm("float64", float("nan")), 'T.float64("nan")'),
        (FloatImm("float64", 1e20), "T.float64(1e+20)"),
        (StringImm('say "hi"\n'), '"say \\"hi\\"\\n"'),
    ],
)
def test_constants(value, text):
    assert script(value) == text


def test_let_expression_defines_a_fresh_name():
    t = Var("x")
    assert script(Let(t, x + 1, t * t) + x) == "T.Let(x_1, x + 1, x_1 * x_1) + x"


def test_access_ptr_prints_the_data_of_its_buffer():
    A = decl_buffer((16,), "float32", "A")
    a = Var("a", "handle")
    body = Evaluate(op.call_extern("int32", "f", A.access_ptr("rw")))
    text = script(PrimFunc([a], body, buffer_map={a: A}))
    assert text.splitlines()[-1] == (
        '    T.evaluate(T.call_extern("int32", "f", T.tvm_access_ptr('
        'T.type_annotation("float32"), A.data, 0, 16, 3)))'
    )
    # in a statement printed alone, a buffer it accesses names its data pointer too
    alone = seq_stmt(A.vstore((0,), 1.0), body)
    assert "A.data" in script(alone)


# ---------------------------------------------------------------- statements


def test_lowered_statements(golden):
    """Every lowered-form statement, with a LetStmt in and out of tail position."""
    n = Var("n")
    data = Var("buf_data", "handle")
    flat = decl_buffer((n,), "float32", "buf", data=data)
    A = decl_buffer((64,), "float32", "A")
    i, t, u, c = Var("i"), Var("t"), Var("u"), Var("c", "int8")
    loop = For(
        i,
        0,
        n,
        "parallel",
        seq_stmt(
            LetStmt(t, i * 2, flat.vstore((i,), A[t])),
            IfThenElse(i % 2 == 0, A.vstore((i,), 1.0), A.vstore((0,), A[i] + 2.0)),
        ),
    )
    vec = BufferStore(A, Broadcast(FloatImm("float32", 1.0), 4), (Ramp(0, 1, 4),))
    loop2 = While(A[0] < 10.0, A.vstore((0,), A[0] + 1.0))
    body = seq_stmt(
        loop,
        vec,
        AttrStmt(A, "pragma_import", StringImm("x.h"), loop2),
        LetStmt(c, IntImm("int8", 3), Evaluate(Cast("int32", c))),
    )
    body = AssertStmt(n > 0, StringImm("n must be positive"), body)
    body = Allocate(data, "float32", (n,), True, DeclBuffer(flat, body), scope="local")
    body = seq_stmt(body, LetStmt(u, n + 1, Evaluate(u)))
    a_param, n_param = Var("a", "handle"), n
    func = PrimFunc([a_param, n_param], body, buffer_map={a_param: A})
    golden(script(func))


def test_scoping_statements_out_of_tail_position(golden):
    A = decl_buffer((8,), "int32", "A")
    t, data = Var("t"), Var("tmp", "handle")
    tmp = decl_buffer((4,), "int32", "tmp", data=data)
    golden(
        script(
            seq_stmt(
                LetStmt(t, 3, A.vstore((t,), 1)),
                AssertStmt(A[0] > 0, StringImm("positive"), A.vstore((1,), 2)),
                Allocate(data, "int32", (4,), True, DeclBuffer(tmp, tmp.vstore((0,), 1))),
                DeclBuffer(tmp, tmp.vstore((1,), 1)),
                A.vstore((2,), 3),
            )
        )
    )


def test_loop_kinds(golden):
    A = decl_buffer((16, 16), "float32", "A")
    i, j, k, m, n = (Var(s) for s in "ijkmn")
    store = A.vstore((i, j), 0.0)
    body = seq_stmt(
        For(i, 0, 16, "parallel", For(j, 0, 16, "vectorized", store)),
        For(i, 2, 14, "unroll", For(j, 0, 16, "thread_binding", store, "threadIdx.x")),
        For(i, 0, 16, "serial", For(j, 0, 16, "serial", store), step=5),
        For(i, 1, 15, "serial", For(j, 0, i, "serial", store)),
        For(i, 0, 16, "serial", For(j, 0, 16, "serial", store, annotations={"pragma_unroll": 1})),
        For(
            k,
            0,
            4,
            "thread_binding",
            For(m, 0, 4, "serial", For(n, 0, 4, "serial", A.vstore((k, m), A[m, n]))),
            "blockIdx.x",
        ),  # fmt: skip
    )
    golden(script(body))


def test_names_are_unique_scoped_and_sanitised():
    A = decl_buffer((4, 4, 4), "int32", "A")
    outer, inner, sibling = Var("i"), Var("i"), Var("i")
    kw, dotted = Var("for"), Var("a.b")
    body = seq_stmt(
        For(outer, 0, 4, "parallel", For(inner, 0, 4, "parallel", A.vstore((outer, inner, 0), 1))),
        For(sibling, 0, 4, "parallel", A.vstore((sibling, kw, dotted), 2)),
    )
    assert script(body).splitlines() == [
        "for i in T.parallel(4):",
        "    for i_1 in T.parallel(4):",
        "        A[i, i_1, 0] = 1",
        "for i in T.parallel(4):",
        "    A[i, for_1, a_b] = 2",
    ]


def test_symbolic_shapes_use_handles_and_match_buffer(golden):
    m, n = SizeVar("m", "int64"), SizeVar("n", "int64")
    X = decl_buffer((1, m), "float32", "X")
    W = decl_buffer((n, m), "float32", "W")
    sa = Var("sa")
    D = decl_buffer((16, 16), "int8", "D", strides=(sa, 1), offset_factor=16, scope="global.A_reg")
    Z = decl_buffer((1,), "float32", "Z")
    params = [Var(s, "handle") for s in ("x", "w", "d", "z")]
    i, j = Var("j", "int64"), Var("k", "int64")
    body = For(i, IntImm("int64", 0), n, "serial", For(j, IntImm("int64", 0), m, "serial",
        Z.vstore((0,), Z[0] + X[IntImm("int64", 0), j] * W[i, j])))  # fmt: skip
    func = PrimFunc(params, body, buffer_map=dict(zip(params, (X, W, D, Z))))
    golden(script(func))


# -------------------------------------------------------------------- blocks


def test_block_forms(golden):
    """Axis forms that cannot remap, T.where, stored regions, attrs, views, allocations."""
    A = decl_buffer((1027,), "float32", "A")
    B = decl_buffer((1024,), "float32", "B")
    i0, i1, v0, vi = Var("i_0"), Var("i_1"), Var("v0"), Var("vi")
    shared = decl_buffer((1027,), "float32", "A_shared", scope="shared")
    copy = infer_block_regions(
        Block([IterVar(Range(0, 1027), v0, S)], [], [], "A_shared", shared.vstore((v0,), A[v0]))
    )
    copy_realize = BlockRealize([i0 * 128 + i1], i0 * 128 + i1 < 1027, copy)
    window = infer_block_regions(
        Block(
            [IterVar(Range(0, 1024), vi, S)],
            [],
            [],
            "C",
            B.vstore((vi,), shared[vi] + shared[vi + 1] + shared[vi + 2]),
            annotations={"meta": "x", "n": 2},
        )
    )
    vo, sub, k = Var("vo"), decl_buffer((16,), "float32", "sub"), Var("k")
    tile = Block(
        [IterVar(Range(2, 14), vo, S)],
        [BufferRegion(A, (Range(vo * 16, 16),))],
        [BufferRegion(B, (Range(vo, 1),))],
        "tile",
        For(k, 0, 16, "serial", B.vstore((vo,), B[vo] + sub[k])),
        match_buffers=[MatchBufferRegion(sub, BufferRegion(A, (Range(vo * 16, 16),)))],
    )
    body = For(i0, 0, 8, "thread_binding", For(i1, 0, 128, "thread_binding", seq_stmt(
        copy_realize,
        BlockRealize([i0 * 128 + i1], True, window),
        BlockRealize([i1 % 12 + 2], True, tile),
    ), "threadIdx.x"), "blockIdx.x")  # fmt: skip
    root = BlockRealize([], True, Block([], [], [], "root", body, alloc_buffers=[shared]))
    params = [Var("a", "handle"), Var("b", "handle")]
    func = PrimFunc(params, root, buffer_map=dict(zip(params, (A, B))))
    golden(script(func))


def test_root_block_prints_explicitly_when_not_implicit():
    A = decl_buffer((4,), "float32", "A")
    i = Var("i")
    body = For(i, 0, 4, "serial", A.vstore((i,), 0.0))
    root = BlockRealize([], True, Block([], [], [], "root", body))
    a = Var("a", "handle")
    text = script(PrimFunc([a], root, buffer_map={a: A}, attrs={"global_symbol": "f"}))
    assert 'with T.block("root"):' in text
    # the root's regions print as they are (TVM's parser infers none for a root)
    assert "T.reads()" in text and "T.writes()" in text


def test_unprintable_object_is_a_clear_error():
    with pytest.raises(TypeError, match="does not know"):
        script(object())

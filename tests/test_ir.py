"""Unit tests of the IR core: dtypes, operator typing, EQ and truth values, functors,
substitution, structural equality and hashing, and deep trees."""

from __future__ import annotations

import pytest

from tilelang.ir import (
    EQ,
    Add,
    Block,
    BlockRealize,
    Cast,
    DataType,
    DataTypeError,
    Evaluate,
    FloatImm,
    For,
    IntImm,
    IterVar,
    LetStmt,
    PrimFunc,
    Range,
    SeqStmt,
    StmtExprMutator,
    StmtExprVisitor,
    StructuralMismatch,
    TIRTypeError,
    Var,
    assert_structural_equal,
    decl_buffer,
    op,
    post_order_visit,
    seq_stmt,
    structural_equal,
    structural_hash,
    substitute,
)
from tilelang.ir.printer import script

# --------------------------------------------------------------------- dtypes


def test_dtype_questions_and_validation():
    t = DataType("float32x8")
    assert (t.code, t.bits, t.lanes) == ("float", 32, 8)
    assert t.element_of() == "float32" and t.is_vector()
    assert DataType("bool").bits == 1 and DataType("uint8").is_integer()
    for bad in ("float8", "int7", "floaty", "int32x1", "boolx"):
        with pytest.raises(DataTypeError):
            DataType(bad)


# -------------------------------------------------------------- typing rules


def test_literal_typing_follows_tvm():
    n64 = Var("n", "int64")
    f32, f64 = Var("f", "float32"), Var("g", "float64")
    assert (n64 + 1).dtype == "int64"
    assert (f32 + 1).dtype == "float32" and (f64 + 1.5).dtype == "float64"
    assert (Var("i") + n64).dtype == "int64"
    assert isinstance((Var("i") + n64).a, Cast)
    assert (Var("i") * f64).dtype == "float64"
    assert (Var("i") < 3).dtype == "bool"


def test_type_errors():
    h = Var("h", "handle")
    with pytest.raises(TIRTypeError):
        h + 1
    with pytest.raises(TIRTypeError):
        Add(Var("i"), Var("f", "float32"))
    # float math of an integer is typed by it, as TVM types T.exp(0) (building it is
    # refused: tests/test_math_of_integers.py); of a handle it is a type error
    assert op.exp(Var("i")).dtype == "int32"
    with pytest.raises(TIRTypeError):
        op.exp(Var("p", "handle"))
    with pytest.raises(TIRTypeError):
        IntImm("float32", 1)


def test_eq_builds_a_node_and_bool_raises():
    i, j = Var("i"), Var("j")
    cond = i == j
    assert isinstance(cond, EQ) and cond.dtype == "bool"
    with pytest.raises(TypeError, match="no truth value"):
        bool(cond)
    with pytest.raises(TypeError):
        if i + 1:
            pass
    # constants do have a truth value, and identity works as dict keys
    assert bool(IntImm("int32", 2)) and not bool(IntImm("bool", 0))
    assert {i: 1, j: 2}[j] == 2


# ----------------------------------------------------------- functors


def _small_func():
    A = decl_buffer((16,), "float32", "A")
    i = Var("i")
    body = For(i, 0, 16, "serial", A.vstore((i,), A[i] * 2.0 + 1.0))
    a = Var("a", "handle")
    return PrimFunc([a], body, buffer_map={a: A}), A, i


def test_mutator_returns_same_nodes_when_nothing_changes():
    func, _, _ = _small_func()
    assert StmtExprMutator().visit(func) is func

    class Triple(StmtExprMutator):
        def visit_float_imm(self, node):
            return FloatImm(node.dtype, node.value * 3) if node.value == 2.0 else node

    new = Triple().visit(func)
    assert new is not func
    store, old_store = new.body.body, func.body.body
    assert store.indices is old_store.indices  # untouched subtrees are shared
    assert store.value.b is old_store.value.b
    assert "A[i] * T.float32(6) + T.float32(1)" in script(new)


def test_visitor_and_post_order_visit_see_every_node():
    func, A, i = _small_func()
    kinds = []
    post_order_visit(func.body, lambda n: kinds.append(type(n).__name__))
    assert kinds[-1] == "For"
    assert kinds.count("BufferLoad") == 1 and kinds.count("FloatImm") == 2

    class Loads(StmtExprVisitor):
        def __init__(self):
            self.buffers, self.defs = [], []

        def visit_buffer_ref(self, buffer):
            self.buffers.append(buffer)

        def visit_var_def(self, var):
            self.defs.append(var)

    v = Loads()
    v.visit(func.body)
    assert v.buffers == [A, A] and v.defs == [i]


def test_substitute():
    i, j = Var("i"), Var("j")
    A = decl_buffer((8,), "int32", "A")
    stmt = A.vstore((i + 1,), A[i])
    new = substitute(stmt, {i: j * 2})
    assert script(new) == "A[j * 2 + 1] = A[j * 2]"
    assert substitute(stmt, {j: i}) is stmt
    assert substitute(stmt, lambda v: None) is stmt


# -------------------------------------------------------- structural equality


def test_alpha_equivalence_and_free_vars():
    def make():
        A = decl_buffer((16,), "float32", "A")
        i = Var("i")
        return For(i, 0, 16, "serial", A.vstore((i,), 0.0)), A

    (s1, _), (s2, _) = make(), make()
    # the loop variables are bound, but the buffers are free
    assert not structural_equal(s1, s2)
    assert structural_equal(s1, s2, map_free_vars=True)
    x, y = Var("x"), Var("y")
    assert structural_equal(x + 1, x + 1) and not structural_equal(x + 1, y + 1)
    assert structural_equal(x + 1, y + 1, map_free_vars=True)
    assert not structural_equal(x + y, x + x, map_free_vars=True)


def test_functions_with_different_names_are_equal():
    f1, _, _ = _small_func()
    f2, _, _ = _small_func()
    assert structural_equal(f1, f2)
    assert structural_hash(f1) == structural_hash(f2)


def test_mismatch_names_the_path():
    f1, _, _ = _small_func()
    A = f1.buffer_map[f1.params[0]]
    i = Var("i")
    body = For(i, 0, 16, "serial", A.vstore((i,), A[i] * 2.0 + 5.0))
    f2 = PrimFunc(f1.params, body, buffer_map=f1.buffer_map)
    with pytest.raises(StructuralMismatch) as info:
        assert_structural_equal(f1, f2)
    assert info.value.path == "root.body.body.value.b.value"
    assert "1.0 != 5.0" in str(info.value)


def test_structural_hash_consistency():
    x = Var("x")
    assert structural_hash(x + 1) == structural_hash(x + 1)
    assert structural_hash(x + 1) != structural_hash(x + 2)
    assert structural_hash(x * 2) != structural_hash(x + 2)
    b1 = _block("b")
    b2 = _block("b")
    assert structural_equal(b1, b2, map_free_vars=True)
    assert structural_hash(b1, map_free_vars=True) == structural_hash(b2, map_free_vars=True)
    assert not structural_equal(_block("b"), _block("c"), map_free_vars=True)


def _block(name):
    A = decl_buffer((4,), "int32", "A")
    vi, i = Var("vi"), Var("i")
    block = Block([IterVar(Range(0, 4), vi, IterVar.DataPar)], [], [], name, A.vstore((vi,), 1))
    return For(i, 0, 4, "serial", BlockRealize([i], True, block))


# ------------------------------------------------------------------ deep trees


def test_long_sequence_through_every_traversal():
    A = decl_buffer((4,), "int32", "A")
    stmts = [A.vstore((k % 4,), k) for k in range(20_000)]
    body = seq_stmt(*stmts)
    assert isinstance(body, SeqStmt) and len(body) == 20_000
    count = [0]
    post_order_visit(body, lambda n: count.__setitem__(0, count[0] + 1))
    assert count[0] > 20_000
    assert StmtExprMutator().visit(body) is body
    assert structural_equal(body, seq_stmt(*stmts))
    assert structural_hash(body) == structural_hash(seq_stmt(*stmts))
    text = script(body)
    assert text.count("\n") == 19_999 and text.endswith("A[3] = 19999")


def test_long_expression_chain_through_every_traversal():
    x = Var("x")
    expr = x
    for k in range(5_000):
        expr = expr + k if k % 2 else expr * 3
    stmt = Evaluate(expr)
    assert StmtExprMutator().visit(stmt) is stmt
    assert structural_equal(stmt, Evaluate(expr)) and structural_hash(stmt)
    doubled = substitute(stmt, {x: x * 2})
    assert doubled is not stmt
    text = script(expr)
    assert text.startswith("((((") and text.endswith(" + 4999")
    # a deep let chain of statements, too
    v = [Var(f"t{k}") for k in range(3_000)]
    nested = Evaluate(v[-1])
    for k in reversed(range(1, 3_000)):
        nested = LetStmt(v[k], v[k - 1] + 1, nested)
    assert script(nested).count("\n") == 2_999

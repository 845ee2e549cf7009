"""Lowered IR round-trips: ``parse(print(lower(mod)))`` is structurally equal to
``lower(mod)`` for every sample and for random programs, including the ``with`` forms
the printer uses for scoped statements that are not last in their sequence, the flat
parameter views (``A_1 = T.Buffer((n,), "float32", data=A.data)``), the function
attributes lowering adds (``tl.size_vars`` naming the size variables), and SizeVars
(``n = T.int32(is_size_var=True)``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    FloatImm,
    IntImm,
    LetStmt,
    PrimFunc,
    SeqStmt,
    SizeVar,
    StringImm,
    Var,
    assert_structural_equal,
    const,
    decl_buffer,
    seq_stmt,
    structural_equal,
)
from tilelang.ir import expr as E
from tilelang.ir.printer import script
from tilelang.ir.structural import structural_hash
from tilelang.testing.strategies import prim_funcs

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.tir"))


def _round_trip(mod) -> str:
    text = script(mod)
    back = tilelang.parse(text)
    if isinstance(mod, PrimFunc):  # a bare function parses into a module of one
        (back,) = back.functions.values()
    assert_structural_equal(back, mod)
    assert structural_hash(back) == structural_hash(mod)
    assert script(back) == text  # printing is a fixpoint too
    return text


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_lowered_sample_round_trips(path):
    _round_trip(tilelang.lower(tilelang.parse_file(path)))


def test_lowered_symbolic_function_keeps_its_size_var_attrs(golden):
    lowered = tilelang.lower(tilelang.parse_file(SAMPLES[0].with_name("linear0.tir")))
    text = _round_trip(lowered)
    golden(text)
    func = tilelang.parse(text)["linear0"]
    m, n = func.attrs["tl.size_vars"]
    # the attribute names the very variables the parameters' shapes use
    x = func.buffer_map[func.params[0]]
    w = func.buffer_map[func.params[1]]
    assert x.shape[1] is m and w.shape[0] is n
    assert func.attrs["tl.lowered"] is True


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(prim_funcs())
def test_lowered_random_programs_round_trip(func):
    _round_trip(tilelang.lower(func))


def _store(buffer, value, index=0):
    return BufferStore(buffer, FloatImm("float32", value), [IntImm("int32", index)])


def _scoped_statements_function() -> PrimFunc:
    """Every scoped statement once in a position that is not last (printed ``with``)
    and once last (printed flat)."""
    a = Var("a", "handle")
    A = decl_buffer((16,), "float32", "A")
    x, y = Var("x", "handle"), Var("y", "int32")
    X = decl_buffer((16,), "float32", "X", data=x)
    z = Var("z", "handle")
    Z = decl_buffer((8,), "int32", "Z", data=z, scope="local")
    negative = E.LT(BufferLoad(A, [IntImm("int32", 0)]), FloatImm("float32", 0.0))
    not_last = seq_stmt(
        AssertStmt(negative, StringImm("A[0] must be negative"), _store(A, 3.0)),
        LetStmt(y, IntImm("int32", 4), _store(A, 1.0, 5)),
        AttrStmt(A, "pragma_key", IntImm("int32", 1), _store(A, 5.0)),
        Allocate(
            x,
            "float32",
            [16],
            const(True),
            seq_stmt(DeclBuffer(X, _store(X, 1.0)), _store(A, 2.0, 1)),
            {"pragma_unroll": 1},
            scope="local",
        ),
        Allocate(z, "int32", [8], const(True), DeclBuffer(Z, _store(A, 7.0)), scope="local"),
        _store(A, 6.0),
    )
    last = AssertStmt(negative, StringImm("still negative"), _store(A, 8.0))
    body = seq_stmt(not_last, last)
    return PrimFunc([a], body, buffer_map={a: A}, attrs={"global_symbol": "scoped"})


def test_scoped_statements_not_last_print_as_with_and_parse_back(golden):
    text = _round_trip(_scoped_statements_function())
    golden(text)
    for form in ("with T.Assert(", "with T.let(", "with T.attr(", "with T.allocate(", " as x:"):
        assert form in text


def test_with_allocate_scopes_over_its_indented_body_only():
    func = tilelang.parse(
        """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    with T.allocate([4], "float32", "local", annotations={"k": 2}) as buf:
        with T.decl_buffer((4,), "float32", data=buf, scope="local") as B:
            B[0] = A[0]
        A[1] = T.float32(1)
    A[2] = T.float32(2)
"""
    )["f"]
    assert isinstance(func.body, SeqStmt) and len(func.body.seq) == 2
    allocate = func.body.seq[0]
    assert isinstance(allocate, Allocate) and allocate.annotations == {"k": 2}
    assert allocate.scope == "local"
    declared, after = allocate.body.seq
    assert isinstance(declared, DeclBuffer) and declared.buffer.data is allocate.buffer_var
    assert isinstance(declared.body, BufferStore) and declared.body.buffer is declared.buffer
    assert isinstance(after, BufferStore) and after.buffer.name == "A"


def test_with_decl_buffer_without_data_allocates_too():
    func = tilelang.parse(
        """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    with T.decl_buffer((4,), "float32") as B:
        B[0] = A[0]
    A[1] = T.float32(1)
"""
    )["f"]
    allocate = func.body.seq[0]
    assert isinstance(allocate, Allocate) and isinstance(allocate.body, DeclBuffer)
    assert allocate.body.buffer.data is allocate.buffer_var


@pytest.mark.parametrize(
    "line, message, column",
    [
        ('with T.block("b") as b:', "`with ... as name` takes T.allocate or T.decl_buffer", 10),
        ('with T.allocate([4], "float32") as A[0]:', "`with ... as` binds a name", 40),
        ("with T.Assert(A[0] < 1.0, 2):", "T.Assert: expected a string, got int 2", 31),
    ],
)
def test_with_forms_reject_misuse(line, message, column):
    source = f'@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    {line}\n        A[0] = 1.0\n'
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(source)
    assert message in str(info.value)
    assert f"<string>:3:{column}" in str(info.value)


def test_assert_condition_must_be_bool():
    source = """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    with T.Assert(A[0], "msg"):
        A[0] = 1.0
    A[1] = 1.0
"""
    with pytest.raises(tilelang.TIRTypeError):
        tilelang.parse(source)


# ------------------------------------------------------------------- SizeVar


def _size_var_function() -> PrimFunc:
    n, m = SizeVar("n", "int64"), Var("m", "int64")
    a = Var("a", "handle")
    A = decl_buffer((n, m), "float32", "A")
    body = BufferStore(A, FloatImm("float32", 1.0), [IntImm("int64", 0), IntImm("int64", 0)])
    return PrimFunc([a], body, buffer_map={a: A}, attrs={"global_symbol": "main"})


def test_size_var_prints_with_is_size_var_and_parses_back_as_size_var():
    func = _size_var_function()
    text = _round_trip(func)
    assert "n = T.int64(is_size_var=True)" in text
    assert "m = T.int64()" in text
    back = tilelang.parse(text)["main"]
    n, m = back.buffer_map[back.params[0]].shape
    assert type(n) is SizeVar and type(m) is Var


def test_size_var_and_var_are_not_structurally_equal():
    # what makes the round trip above meaningful: the kind of variable counts
    text = script(_size_var_function()).replace("is_size_var=True", "")
    assert not structural_equal(tilelang.parse(text)["main"], _size_var_function())


def test_te_size_vars_survive_lowering_round_trip():
    from tilelang import te

    n = te.size_var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    lowered = tilelang.lower(te.create_prim_func([A, B]))
    text = _round_trip(lowered)
    assert "n = T.int32(is_size_var=True)" in text


@pytest.mark.parametrize(
    "call, message",
    [
        ("T.int32(is_size_var=1)", "T.int32(is_size_var=True) declares a size variable"),
        ("T.int32(4, is_size_var=True)", "T.int32(is_size_var=True) declares a size variable"),
    ],
)
def test_is_size_var_misuse_is_located(call, message):
    source = f"@T.prim_func\ndef f(a: T.handle):\n    n = {call}\n"
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(source)
    assert message in str(info.value) and "<string>:3:9" in str(info.value)

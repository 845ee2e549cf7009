"""``T.comm_reducer(lambda x, y: ..., [identity])``: the lambda form is accepted only as
the reducer's combiner, builds a :class:`~tilelang.ir.comm_reducer.CommReducer` (an IR
value with variables of its own), prints back as TVM writes it and round-trips; misuse
is a located error (``# check_error:`` markers, as in test_parse_errors.py)."""

from __future__ import annotations

import pytest
from test_parse_errors import expected_location

import tilelang
from tilelang.errors import BuildError, TIRSyntaxError, TIRTypeError
from tilelang.ir import assert_structural_equal, structural_equal
from tilelang.ir.comm_reducer import CommReducer
from tilelang.ir.stmt import AttrStmt

SOURCE = """
@T.prim_func
def f(A: T.Buffer((128,), "float32"), B: T.Buffer((1,), "float32")):
    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", T.int32(0)):
        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[0], True, B.data, dtype="handle"))
    with T.attr(
        T.comm_reducer(
            lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0), T.Select(x1 >= y1, x1, y1)),
            [T.int32(-1), T.min_value("float32")],
        ),
        "reduce_scope",
        T.int32(0),
    ):
        B[0] = A[1]
"""


def reducers(mod):
    return [s.node for s in mod["f"].body.seq if isinstance(s, AttrStmt)]


def test_reducers_build_print_back_and_round_trip():
    mod = tilelang.parse(SOURCE)
    printed = mod.script()
    assert_structural_equal(mod, tilelang.parse(printed), map_free_vars=True)
    single, pair = reducers(mod)
    assert isinstance(single, CommReducer) and isinstance(pair, CommReducer)
    assert [v.name for v in single.lhs + single.rhs] == ["x", "y"]
    assert str(single.result[0].dtype) == "float32" and single.identity_element[0].value == 0
    assert [str(v.dtype) for v in pair.lhs] == ["int32", "float32"]
    assert pair.rhs[1].dtype == pair.identity_element[1].dtype
    assert "T.comm_reducer(lambda x, y: x + y, [T.float32(0)])" in printed
    assert "T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0), " in printed


def test_reducers_compare_up_to_parameter_names_only():
    mod = tilelang.parse(SOURCE)
    renamed = tilelang.parse(SOURCE.replace("lambda x, y: x + y", "lambda a, b: a + b"))
    swapped = tilelang.parse(SOURCE.replace("lambda x, y: x + y", "lambda x, y: y + x"))
    assert structural_equal(reducers(mod)[0], reducers(renamed)[0])
    assert not structural_equal(reducers(mod)[0], reducers(swapped)[0])


def test_the_reducer_checks_its_parts():
    from tilelang.ir import Var, const

    x, y = Var("x", "float32"), Var("y", "float32")
    with pytest.raises(TIRTypeError, match="needs 1 lhs and 1 rhs"):
        CommReducer([x], [], [x + y], [const(0.0, "float32")])
    with pytest.raises(TIRTypeError, match="identity is int32"):
        CommReducer([x], [y], [x + y], [const(0, "int32")])


def test_no_backend_runs_a_thread_allreduce():
    mod = tilelang.parse(SOURCE)
    for target in ("python", "c", "llvm"):
        with pytest.raises(BuildError):
            tilelang.build(mod, target=target)


HEAD = '@T.prim_func\ndef f(A: T.Buffer((8,), "float32"), x: T.float32):\n'
TAIL = '"reduce_scope", 0):\n        A[0] = x\n'

CASES = {
    "lambda_elsewhere": HEAD
    + """\
    A[0] = T.max(lambda y: y, x)  # check_error: only as T.comm_reducer's combiner @ lambda
""",
    "lambda_as_identity": HEAD
    + """\
    with T.attr(T.comm_reducer(lambda a, b: a + b, lambda: 0), """
    + TAIL.replace("):", "):  # check_error: only as T.comm_reducer's combiner @ lambda: 0"),
    "combiner_not_a_lambda": HEAD
    + """\
    with T.attr(T.comm_reducer(x, [T.float32(0)]), "reduce_scope", 0):  # check_error: expected a lambda @ x,
        A[0] = x
""",
    "too_few_parameters": HEAD
    + """\
    with T.attr(T.comm_reducer(lambda a: a, [T.float32(0)]), "reduce_scope", 0):  # check_error: 1 identity needs a lambda of 2 parameters, got 1 @ lambda
        A[0] = x
""",
    "repeated_parameter": HEAD
    + """\
    with T.attr(T.comm_reducer(lambda a, a: a, [T.float32(0)]), "reduce_scope", 0):  # check_error: parameters must be distinct @ lambda
        A[0] = x
""",
    "too_many_results": HEAD
    + """\
    with T.attr(T.comm_reducer(lambda a, b: (a, b), [T.float32(0)]), "reduce_scope", 0):  # check_error: gives 2 values for 1 identities @ lambda
        A[0] = x
""",
    "identity_not_a_list": HEAD
    + """\
    with T.attr(T.comm_reducer(lambda a, b: a + b, T.float32(0)), "reduce_scope", 0):  # check_error: expected a list of identity values @ T.float32(0)
        A[0] = x
""",
    "result_of_another_type": HEAD
    + """\
    with T.attr(T.comm_reducer(lambda a, b: a < b, [T.float32(0)]), "reduce_scope", 0):  # check_error: the combined value bool @ T.comm_reducer
        A[0] = x
""",
    "undefined_name_in_the_body": HEAD
    + """\
    with T.attr(T.comm_reducer(lambda a, b: a + c, [T.float32(0)]), "reduce_scope", 0):  # check_error: undefined name c @ c,
        A[0] = x
""",
    "parameters_do_not_leak": HEAD
    + """\
    with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope", 0):
        A[0] = a  # check_error: undefined name a @ a
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_error(name):
    source = CASES[name]
    line, column, fragment = expected_location(source)
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(source, f"{name}.tir")
    error = info.value
    assert fragment in error.message, error.render()
    assert (error.line, error.column) == (line, column), error.render()

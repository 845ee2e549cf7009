"""Located diagnostics for malformed programs, TVM ``# check_error:`` style.

Each program marks its offending line with ``# check_error: <message fragment> @ <token>``:
the test asserts that the error is reported on that line, that the message contains the
fragment, and that the column is where ``<token>`` starts on the line (``$`` means just
after the last code character, where a missing ``:`` belongs).
"""

from __future__ import annotations

import re

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError, TIRTypeError

HEAD = (
    '@T.prim_func\ndef f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32"), n: T.int32):\n'
)


def prog(body: str) -> str:
    """A prim_func over A (float32[8]), B (int32[8]) and n with ``body``."""
    return HEAD + body


CASES = {
    "unknown_function": prog("""\
    for i in range(8):
        with T.blok("Y"):  # check_error: unknown function T.blok; did you mean T.block? @ T.blok
            A[i] = 0.0
"""),
    "unknown_function_typo": prog("""\
    for i in T.gird(8):  # check_error: did you mean T.grid? @ T.gird
        A[i] = 0.0
"""),
    "undefined_name": prog("""\
    for i in range(8):
        A[i] = C[i]  # check_error: undefined name C @ C
"""),
    "undefined_name_suggestion": prog("""\
    for index in range(8):
        A[indx] = 0.0  # check_error: did you mean index? @ indx
"""),
    "too_many_indices": prog("""\
    for i in range(8):
        A[i, 0] = 1.0  # check_error: buffer A has 1 dimension but 2 indices were given @ i, 0
"""),
    "too_few_indices_in_region": """\
@T.prim_func
def f(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])  # check_error: buffer A has 2 dimensions but 1 index was given @ vi]
            A[vi, 0] = 1.0
""",
    "remap_count": prog("""\
    for i, j in T.grid(8, 8):
        with T.block("b"):
            vi, vj = T.axis.remap("S", [i, j])  # check_error: 1 kinds 'S' but 2 variables @ "S"
            A[vi] = 0.0
"""),
    "remap_letters": prog("""\
    for i in T.grid(8):
        with T.block("b"):
            vi = T.axis.remap("X", [i])  # check_error: kinds are 'S' and 'R' letters @ "X"
            A[vi] = 0.0
"""),
    "remap_not_a_loop_var": prog("""\
    for i in T.grid(8):
        with T.block("b"):
            vi = T.axis.remap("S", [n])  # check_error: n is not a loop variable @ T.axis
            A[vi] = 0.0
"""),
    "invalid_dtype": """\
@T.prim_func
def f(A: T.Buffer((8,), "float33")):  # check_error: invalid dtype 'float33' @ "float33"
    A[0] = 0.0
""",
    "invalid_dtype_alloc": prog("""\
    Y = T.alloc_buffer((8,), "int31")  # check_error: invalid dtype 'int31' @ "int31"
"""),
    "block_var_outside_block": prog("""\
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            A[vi] = 0.0
        A[vi] = 1.0  # check_error: vi is an iterator of block 'b' @ vi
"""),
    "buffer_used_before_defined": prog("""\
    for i in range(8):
        Y[i] = 1.0  # check_error: Y is used before it is defined (line 5) @ Y
    Y = T.alloc_buffer((8,))
"""),
    "store_type_mismatch": prog("""\
    for i in range(8):
        A[i] = A.data  # check_error: cannot store a handle value into buffer A @ A[i]
"""),
    "store_infinite_float_into_int": prog("""\
    for i in range(8):
        B[i] = 1e400  # check_error: cannot store the float inf into buffer B @ B[i]
"""),
    "float_index": prog("""\
    A[T.float32(1)] = 1.0  # check_error: a buffer index must be an integer @ T.float32
"""),
    "non_bool_condition": prog("""\
    for i in range(8):
        if i:  # check_error: expected a bool condition @ i:
            A[i] = 0.0
"""),
    "arithmetic_on_handles": """\
@T.prim_func
def f(a: T.handle):
    x: T.int32 = a + 1  # check_error: no arithmetic on handles @ + 1
    T.evaluate(x)
""",
    "grid_without_extents": prog("""\
    for i in T.grid():  # check_error: T.grid needs at least one extent @ T.grid
        A[i] = 0.0
"""),
    "missing_argument": prog("""\
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8)  # check_error: missing a required argument: 'binding' @ T.axis
            A[vi] = 0.0
"""),
    "too_many_arguments": prog("""\
    for i in range(8):
        with T.block("b"):
            T.where(i < 4, i < 2)  # check_error: takes 1 positional argument but 2 @ T.where
            A[i] = 0.0
"""),
    "unknown_keyword": prog("""\
    Y = T.alloc_buffer((8,), dtyp="float32")  # check_error: keyword argument 'dtyp' @ T.alloc
"""),
    "missing_colon": prog("""\
    for i in range(8)  # check_error: missing ':' at the end of the line @ $
        A[i] = 0.0
"""),
    "missing_colon_with": prog("""\
    for i in range(8):
        with T.block("b")  # check_error: missing ':' @ $
            A[i] = 0.0
"""),
    "unclosed_bracket": prog("""\
    for i in range(8):
        A[i] = T.max(A[i], T.float32(0)  # check_error: unclosed '(' @ (A[i]
    A[0] = 1.0
"""),
    "unmatched_bracket": prog("""\
    A[0] = A[1])  # check_error: unmatched ')' @ )
"""),
    "mismatched_bracket": prog("""\
    A[0] = T.max(A[1], A[2]]  # check_error: '(' is closed by ']' @ (A[1]
"""),
    "assignment_in_condition": prog("""\
    for i in range(8):
        if i = 2:  # check_error: use '==' to compare @ = 2
            A[i] = 0.0
"""),
    "missing_comma": prog("""\
    for i, j in T.grid(8 8):  # check_error: missing ',' between arguments @ 8)
        A[i] = 0.0
"""),
    "unexpected_indent": prog("""\
    A[0] = 1.0
        A[1] = 1.0  # check_error: unexpected indent @ A[1]
"""),
    "inconsistent_dedent": prog("""\
    for i in range(8):
        A[i] = 1.0
      A[0] = 2.0  # check_error: unindent does not match any outer indentation level @ A[0]
"""),
    "invalid_character": prog("""\
    A[0] = 1.0 $ 2  # check_error: invalid character '$' @ $ 2
"""),
    "init_outside_block": prog("""\
    for i in range(8):
        with T.init():  # check_error: T.init() must be directly inside a block @ T.init
            A[i] = 0.0
"""),
    "where_outside_block": prog("""\
    for i in range(8):
        T.where(i < 4)  # check_error: T.where must be directly inside a block @ T.where
"""),
    "axis_outside_block": prog("""\
    for i in range(8):
        vi = T.axis.spatial(8, i)  # check_error: T.axis.* must be directly inside a block @ vi
"""),
    "two_inits": prog("""\
    for i in range(8):
        with T.block("b"):
            vi = T.axis.reduce(8, i)
            with T.init():
                A[0] = 0.0
            with T.init():  # check_error: block 'b' has two T.init() @ T.init
                A[0] = 1.0
"""),
    "reads_twice": prog("""\
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.reads(A[vi])  # check_error: T.reads is given twice in block 'b' @ T.reads
            A[vi] = 0.0
"""),
    "for_over_number": prog("""\
    for i in 8:  # check_error: a for loop iterates over T.grid @ 8
        A[i] = 0.0
"""),
    "loop_variable_count": prog("""\
    for i, j in range(8):  # check_error: 1 loop but 2 loop variables @ i, j
        A[i] = 0.0
"""),
    "parameter_without_type": """\
@T.prim_func
def f(A):  # check_error: parameter A needs a type @ A
    pass
""",
    "unknown_decorator": """\
@T.prim_fun  # check_error: unknown decorator @T.prim_fun @ T.prim_fun
def f(A: T.Buffer((8,), "float32")):
    pass
""",
    "match_buffer_of_scalar": prog("""\
    X = T.match_buffer(n, (8,))  # check_error: T.match_buffer matches a handle or a region @ n
"""),
    "cast_to_unknown_dtype": prog("""\
    A[0] = T.Cast("flot32", B[0])  # check_error: T.Cast: invalid dtype 'flot32' @ "flot32"
"""),
    "constant_out_of_range": prog("""\
    B[0] = T.int8(300)  # check_error: 300 does not fit in int8 @ 300
"""),
    "buffer_attribute": prog("""\
    A[0] = A.size  # check_error: buffer A has no attribute 'size' @ A.size
"""),
    "let_as_expression": prog("""\
    x = T.let(y, 1)  # check_error: T.let is written `with T.let(x, value):` @ T.let
"""),
    "nested_function": prog("""\
    def g(x: T.int32):  # check_error: functions cannot be nested in a prim_func @ g
        pass
"""),
    "top_level_statement": """\
x = 1  # check_error: expected a @T.prim_func function or an @I.ir_module class @ x
""",
    "two_functions_in_a_file": """\
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    pass
@T.prim_func  # check_error: a file holds one @T.prim_func function @ T.prim_func
def g(A: T.Buffer((8,), "float32")):
    pass
""",
    "thread_binding_without_thread": prog("""\
    for i in T.thread_binding(8):  # check_error: needs thread= @ T.thread_binding
        A[i] = 0.0
"""),
    "module_member_not_prim_func": """\
@I.ir_module
class M:
    x = 1  # check_error: an @I.ir_module class holds @T.prim_func functions @ x
""",
}

_MARKER = re.compile(r"#\s*check_error:\s*(?P<message>.*?)\s+@\s+(?P<token>\S.*?)\s*$")


def expected_location(source: str) -> tuple[int, int, str]:
    """``(line, column, message fragment)`` from the ``# check_error:`` marker."""
    for number, line in enumerate(source.splitlines(), start=1):
        match = _MARKER.search(line)
        if match is None:
            continue
        code = line[: line.index("# check_error")].rstrip()
        token = match["token"]
        column = len(code) + 1 if token == "$" else code.index(token) + 1
        return number, column, match["message"]
    raise AssertionError("the program has no # check_error: marker")


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_error(name):
    source = CASES[name]
    line, column, fragment = expected_location(source)
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(source, f"{name}.tir")
    error = info.value
    assert fragment in error.message, error.render()
    assert (error.line, error.column) == (line, column), error.render()
    rendered = error.render()
    assert rendered.startswith(f"error: {error.message}\n --> {name}.tir:{line}:{column}\n")
    assert "Traceback" not in rendered


def test_there_are_at_least_thirty_malformed_programs():
    assert len(CASES) >= 30


def test_type_errors_are_both_families():
    source = CASES["store_type_mismatch"]
    with pytest.raises(TIRTypeError) as info:
        tilelang.parse(source)
    assert isinstance(info.value, TIRSyntaxError) and info.value.line == 4


def test_render_shows_the_source_line_and_a_caret_under_the_token():
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(CASES["unknown_function"], "mm.tir")
    assert info.value.render().splitlines()[2:] == [
        "  |",
        '4 |         with T.blok("Y"):  # check_error: unknown function T.blok; did you mean '
        "T.block? @ T.blok",
        "  |              ^^^^^^",
    ]


def test_absurd_nesting_is_a_located_diagnostic():
    depth = 5000
    source = prog("    A[0] = " + "(n + " * depth + "1" + ")" * depth + "\n")
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse(source)
    assert "nested too deeply" in info.value.message and info.value.line == 3


def test_deep_statement_nesting_is_a_located_diagnostic():
    depth = 3000
    lines = [HEAD.rstrip("\n")]
    for level in range(depth):
        lines.append("    " * (level + 1) + "if n > 0:")
    lines.append("    " * (depth + 1) + "A[0] = 1.0")
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse("\n".join(lines) + "\n")
    assert "nested too deeply" in info.value.message and info.value.line is not None


def test_empty_and_blank_files():
    for text in ("", "\n\n", "# only a comment\n"):
        with pytest.raises(TIRSyntaxError) as info:
            tilelang.parse(text)
        assert "no @T.prim_func function" in info.value.message


def test_non_utf8_and_missing_files(tmp_path):
    bad = tmp_path / "bad.tir"
    bad.write_bytes(b"@T.prim_func\ndef f():\n    x = '\xff'\n")
    with pytest.raises(TIRSyntaxError) as info:
        tilelang.parse_file(bad)
    assert "not UTF-8" in info.value.message and (info.value.line, info.value.column) == (3, 10)
    with pytest.raises(TIRSyntaxError, match="cannot read"):
        tilelang.parse_file(tmp_path / "missing.tir")

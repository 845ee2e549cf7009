"""TVMScript forms of lowered and annotated programs as TVM prints them: targets in
attributes, private functions, statement-level ``T.attr``, classic ``T.LetStmt``,
symbolic strides named by strings, packed-call builtins and void extern calls. Each
is checked by what it builds and by a print -> parse round trip."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.ir.stmt import AttrStmt, LetStmt
from tilelang.target import Target


def roundtrip(text: str):
    mod = tilelang.parse(text)
    printed = mod.script()
    assert_structural_equal(mod, tilelang.parse(printed), map_free_vars=True)
    return mod, printed


def test_targets_are_attribute_values():
    mod, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    T.func_attr({"target": T.target("cuda", host="llvm"),
                 "other": T.target({"kind": "c", "keys": ["cpu"], "num-cores": 4})})
    A[0] = 1
""")
    attrs = mod["f"].attrs
    assert attrs["target"] == Target("cuda", host="llvm")
    assert attrs["other"].kind == "c" and attrs["other"].num_cores == 4
    assert 'T.target("cuda -host=llvm")' in printed
    assert 'T.target({"kind": "c", "keys": ["cpu"], "num-cores": 4})' in printed


def test_an_unknown_target_is_a_located_error():
    with pytest.raises(TIRSyntaxError, match="unknown target kind 'quantum'") as info:
        tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    T.func_attr({"target": T.target("quantum")})
    A[0] = 1
""")
    assert (info.value.line, info.value.column) == (4, 37)


def test_private_functions_have_no_global_symbol():
    mod, printed = roundtrip("""
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def helper(A: T.Buffer((4,), "int32")):
        A[0] = 1

    @T.prim_func
    def main(A: T.Buffer((4,), "int32")):
        A[1] = 2
""")
    assert "global_symbol" not in mod["helper"].attrs
    assert mod["main"].attrs["global_symbol"] == "main"
    assert "@T.prim_func(private=True)\n    def helper" in printed


def test_statement_attr_holds_over_the_rest():
    mod, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    A[0] = 1
    T.attr(0, "device_id", 0)
    A[1] = 2
    A[2] = 3
""")
    first, attr = mod["f"].body.seq
    assert isinstance(attr, AttrStmt) and attr.attr_key == "device_id"
    assert len(attr.body.seq) == 2


def test_classic_let_stmt_with_as():
    mod, _ = roundtrip("""
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    with T.LetStmt(3) as x:
        A[0] = x + 1
    A[1] = 2
""")
    let = mod["f"].body.seq[0]
    assert isinstance(let, LetStmt) and let.value.value == 3


def test_string_strides_are_new_symbolic_variables():
    mod, printed = roundtrip("""
@T.prim_func
def f(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 4), strides=("A_s0", "A_s1"), buffer_type="auto")
    A[0, 0] = T.float32(1)
""")
    (buffer,) = mod["f"].buffer_map.values()
    assert [s.name for s in buffer.strides] == ["A_s0", "A_s1"]
    assert "A_s0 = T.int32()" in printed


def test_packed_call_builtins_and_void_extern_calls():
    mod, printed = roundtrip("""
@T.prim_func
def f(args: T.handle, n: T.int32):
    stack: T.let[T.handle] = T.tvm_stack_alloca("arg_value", 10)
    arg0: T.let[T.handle] = T.tvm_struct_get(args, 0, 12, dtype="handle")
    T.evaluate(T.tvm_struct_set(stack, 0, 12, T.cast(n, "int64"), dtype="int32"))
    T.evaluate(T.call_extern("copy", arg0, stack, dtype=""))
""")
    assert 'T.tvm_struct_get(args, 0, 12, dtype="handle")' in printed
    assert 'T.tvm_struct_set(stack, 0, 12, T.Cast("int64", n), dtype="int32")' in printed
    assert 'T.call_extern("handle", "copy", arg0, stack)' in printed
    with pytest.raises(tilelang.errors.BuildError):
        tilelang.build(mod, target="c")


def test_match_buffer_regions_round_trip_without_mapping_free_variables():
    """Block iterators are compared before the match_buffer sources that use them, so
    a printed nest of views equals its original exactly (no free-variable mapping)."""
    mod = tilelang.parse("""
@T.prim_func
def f(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16, 16, 16), "float32")
    B = T.match_buffer(b, (1,), "float32")
    for i, j in T.grid(16, 4):
        with T.block():
            vi, vj = T.axis.remap("SS", [i, j])
            C = T.match_buffer(A[0:16, vi, vj * 4:vj * 4 + 4], (16, 1, 4))
            for ii in range(4):
                with T.block():
                    vii = T.axis.S(4, ii)
                    D = T.match_buffer(C[vii * 4:vii * 4 + 4, 0, 0:4], (4, 1, 4))
                    for x, y in T.grid(4, 4):
                        B[0] += D[x, 0, y]
""")
    assert_structural_equal(mod, tilelang.parse(mod.script()))


MODULE_ATTRS = """
@I.ir_module
class Module:
    I.module_attrs({"attr": 10, "name": "m"})

    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        A[1] = 2
"""


def test_module_attrs_in_text():
    mod, printed = roundtrip(MODULE_ATTRS)
    assert dict(mod.attrs) == {"attr": 10, "name": "m"}
    assert printed.startswith(
        '@I.ir_module\nclass Module:\n    I.module_attrs({"attr": 10, "name": "m"})\n'
    )


def test_module_attrs_in_a_decorated_class():
    from tilelang.script import ir as I
    from tilelang.script import tir as T

    @I.ir_module(s_tir=True)
    class Module:
        I.module_attrs({"attr": 10})

        @T.prim_func(s_tir=True)
        def f(A: T.Buffer((4,), "int32")):
            A[1] = 2

    assert dict(Module.attrs) == {"attr": 10} and set(Module.functions) == {"f"}


def test_module_attrs_takes_a_dict():
    with pytest.raises(TIRSyntaxError, match="I.module_attrs takes a dict, not int 3"):
        tilelang.parse(MODULE_ATTRS.replace('{"attr": 10, "name": "m"}', "3"))


def test_thread_launches_print_as_tvm_and_builds_reject_them():
    mod, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((64, 16), "float32")):
    i0 = T.env_thread("blockIdx.x")
    with T.launch_thread(i0, 4):
        tx = T.launch_thread("threadIdx.x", 16)
        with T.launch_thread("vthread", 2) as vt:
            A[i0 * 16 + vt, tx] = T.float32(1)
        A[i0, tx] = T.float32(2)
    T.launch_thread(i0, 8)
    A[i0, 0] = T.float32(3)
""")
    first, second = mod["f"].body.seq
    assert isinstance(first, AttrStmt) and first.attr_key == "thread_extent"
    assert first.node.thread_tag == "blockIdx.x" and first.value.value == 4
    assert second.node.var is first.node.var  # one env_thread variable, launched twice
    assert 'i0 = T.env_thread("blockIdx.x")' in printed
    assert 'tx = T.launch_thread("threadIdx.x", 16)' in printed
    assert 'with T.launch_thread("vthread", 2) as vt:' in printed
    with pytest.raises(tilelang.errors.TIRSyntaxError, match="i0 is used but not defined"):
        tilelang.build(mod, target="python")


def test_launch_of_a_plain_variable_is_a_located_error():
    with pytest.raises(TIRSyntaxError, match="n is not a T.env_thread variable") as info:
        tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32"), n: T.int32):
    with T.launch_thread(n, 4):
        A[0] = T.float32(1)
""")
    assert info.value.line == 4


def test_allocate_const_runs_on_python_and_is_rejected_elsewhere():
    import numpy as np

    mod, printed = roundtrip("""
@T.prim_func
def f(A: T.Buffer((2, 2), "float32"), B: T.Buffer((2, 2), "float32")):
    K = T.allocate_const([[1.0, 2.0], [3.0, 4.0]], dtype="float32", extents=[2, 2])
    Kb = T.decl_buffer((2, 2), "float32", data=K)
    for i, j in T.grid(2, 2):
        B[i, j] = A[i, j] * Kb[i, j]
""")
    assert 'K = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [2, 2])' in printed
    a, b = np.full((2, 2), 2, "float32"), np.zeros((2, 2), "float32")
    tilelang.build(mod, target="python")["f"](a, b)
    np.testing.assert_array_equal(b, [[2, 4], [6, 8]])
    for target in ("c", "llvm"):
        with pytest.raises(tilelang.errors.BuildError, match="allocate_const"):
            tilelang.build(mod, target=target)


def test_allocate_const_checks_its_values():
    with pytest.raises(TIRSyntaxError, match="3 values for extents of 4 elements"):
        tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    K = T.allocate_const([1, 2, 3], "int32", [4])
    A[0] = 1
""")

"""Decorated Python programs: ``@T.prim_func`` and ``@I.ir_module`` go through the same
parser as ``.tir`` files, and their diagnostics point into the Python file."""

from __future__ import annotations

import inspect

import pytest

import tilelang
from tilelang.errors import TIRSyntaxError
from tilelang.ir import IRModule, PrimFunc, structural_equal
from tilelang.script import ir as I
from tilelang.script import tir as T

SIZE = 16  # a module-level constant the decorated functions may use


@T.prim_func
def add_one(A: T.Buffer((SIZE,), "float32"), B: T.Buffer((SIZE,), "float32")):
    for i in range(SIZE):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + T.float32(1)


ADD_ONE_TEXT = """
@T.prim_func
def add_one(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + T.float32(1)
"""


def test_prim_func_decorator_equals_the_parsed_text():
    assert isinstance(add_one, PrimFunc)
    assert structural_equal(add_one, tilelang.parse(ADD_ONE_TEXT)["add_one"])
    # spans point into this file
    with open(__file__) as handle:
        def_line = next(i for i, line in enumerate(handle, 1) if line.startswith("def add_one("))
    loop = add_one.body.block.body
    assert (loop.span.source, loop.span.line, loop.span.column) == (__file__, def_line + 1, 5)
    assert add_one.span.line == def_line


def test_ir_module_class_with_closure_constant():
    def make(n):
        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer((n,), "float32")):
                for i in range(n):
                    A[i] = A[i] * 2.0

            @T.prim_func
            def other(B: T.Buffer((n, 2), "int32")):
                B[0, 1] = n

        return Module

    mod = make(4)
    assert isinstance(mod, IRModule) and sorted(mod.functions) == ["main", "other"]
    assert [int(s) for s in mod["main"].buffers[0].shape] == [4]
    assert int(mod["other"].body.value) == 4


def test_decorator_with_arguments_and_tvm_spelling():
    import tilelang.script as script

    @T.prim_func(private=True)
    def f(A: T.Buffer[(4,), "float32"]):  # noqa: F821, UP037 (TVM spelling, read by the parser)
        A[0] = T.float32(0)

    @script.ir_module
    class M:
        @T.prim_func
        def g(a: T.handle):
            m = T.int64()
            A = T.match_buffer(a, (m,))
            for i in range(m):
                A[i] = T.float32(1)

    assert isinstance(f, PrimFunc) and list(M.functions) == ["g"]
    assert M["g"].buffers[0].shape[0].dtype == "int64"


def test_diagnostic_points_into_the_python_file():
    with pytest.raises(TIRSyntaxError) as info:

        @T.prim_func
        def broken(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = undefined_value  # noqa: F821

    error = info.value
    lines, first = inspect.getsourcelines(test_diagnostic_points_into_the_python_file)
    expected_line = first + next(i for i, text in enumerate(lines) if "undefined_value" in text)
    assert error.source == __file__ and error.line == expected_line
    assert error.column == lines[expected_line - first].index("undefined_value") + 1
    assert "undefined name undefined_value" in error.message
    assert "A[i] = undefined_value" in error.render()


def test_t_helpers_build_ir_like_tvm():
    from tilelang.ir import Call, FloatImm, IntImm, Max, Var

    zero = T.float32(0)
    assert isinstance(zero, FloatImm) and zero.dtype == "float32" and zero.value == 0.0
    assert isinstance(T.int64(3), IntImm) and T.int64(3).dtype == "int64"
    n = T.int32()
    assert isinstance(n, Var) and n.dtype == "int32"
    assert isinstance(T.max(n, 4), Max)
    assert isinstance(T.exp(zero), Call) and T.exp(zero).op == "exp"
    assert T.Cast("float32", n).dtype == "float32"
    assert T.float32("inf").value == float("inf")


SEED_MODULE_FILE = """
import numpy as np

import tilelang as tvm
from tilelang.script import tir as T


@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                C: T.Buffer((8, 8), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((8, 8), dtype="float32")
        for i, j, k in T.grid(8, 8, 8):
            with T.block("Y"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j)
                vk = T.axis.reduce(8, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


assert isinstance(MyModule, tvm.IRModule) and tvm.script.tir is T
rng = np.random.default_rng(0)
a, b = rng.random((8, 8), "float32"), rng.random((8, 8), "float32") - 0.5
c = np.zeros((8, 8), "float32")
tvm.build(MyModule, target="python")["mm_relu"](a, b, c)
np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)  # relu: zeros
print(MyModule.script())
"""


def test_tvm_style_module_file_with_import_tilelang_as_tvm(tmp_path):
    """SEED §1 as a user writes it: ``import tilelang as tvm``, then
    ``@tvm.script.ir_module`` (``tilelang.script`` loads on first use)."""
    import subprocess
    import sys

    path = tmp_path / "my_module.py"
    path.write_text(SEED_MODULE_FILE)
    result = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "def mm_relu(" in result.stdout and 'with T.block("Y"):' in result.stdout


def test_import_tilelang_does_not_load_the_decorators():
    import subprocess
    import sys

    code = (
        "import sys, tilelang\n"
        "assert 'tilelang.script' not in sys.modules\n"
        "assert tilelang.script.ir_module is not None\n"
        "assert 'tilelang.script' in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

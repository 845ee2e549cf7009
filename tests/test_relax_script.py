"""The @R.function language: §5 parses, prints and round-trips; te and BlockBuilder
give the modules written by hand."""

from pathlib import Path

import numpy as np
import pytest
from conftest import load_sample

import tilelang
from tilelang import relax, te
from tilelang.errors import BuildError, TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.relax import TensorStructInfo as Tensor

ROOT = Path(__file__).resolve().parents[1]
MLP_TIR = ROOT / "samples" / "mlp.tir"


def _usable(target):
    try:
        tilelang.build(load_sample("mlp").relu0(), target=target)
    except BuildError as error:
        pytest.skip(f"the {target} backend cannot build here: {error}")


def test_section5_parses_prints_and_round_trips(golden):
    mod = tilelang.parse_file(MLP_TIR)
    assert list(mod.functions) == ["linear0", "relu0", "main"]
    text = mod.script()
    golden(text)
    again = tilelang.parse(text)
    assert again.script() == text  # printing is a fixed point
    assert_structural_equal(again["main"], mod["main"])  # the graph survives unchanged
    assert_structural_equal(tilelang.parse(again.script()), again)


def test_section5_module_runs_like_numpy():
    mlp = load_sample("mlp")
    _usable("c")
    mod = tilelang.parse_file(MLP_TIR)
    data, weights = mlp.load_image(), mlp.make_weights()
    vm = relax.VirtualMachine(relax.build(mod, target="c"), tilelang.cpu())
    np.testing.assert_allclose(
        vm["main"](data, *weights.values()), mlp.numpy_mlp(data, **weights), rtol=1e-5, atol=1e-6
    )


def test_python_built_module_equals_the_text():
    # samples/mlp.py builds §5 with te + BlockBuilder; it prints and parses back equal
    mod = load_sample("mlp").mlp_module()
    assert_structural_equal(tilelang.parse(mod.script()), mod)


MM_RELU = """
@I.ir_module
class Module:
    @T.prim_func
    def te_matmul(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                  matmul: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "te_matmul", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(matmul[vi, vj])
                with T.init():
                    matmul[vi, vj] = T.float32(0)
                matmul[vi, vj] = matmul[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func
    def te_relu(A: T.Buffer((128, 128), "float32"), relu: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "te_relu", "tir.noalias": True})
        for i0, i1 in T.grid(128, 128):
            with T.block("relu"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[v0, v1])
                T.writes(relu[v0, v1])
                relu[v0, v1] = T.max(A[v0, v1], T.float32(0))

    @R.function
    def main(A: R.Tensor((128, 128), "float32"), B: R.Tensor((128, 128), "float32")):
        with R.dataflow():
            lv = R.call_tir(cls.te_matmul, (A, B), out_sinfo=R.Tensor((128, 128), "float32"))
            lv1 = R.call_tir(cls.te_relu, (lv,), out_sinfo=R.Tensor((128, 128), "float32"))
            gv = lv1
            R.output(gv)
        return gv
"""


def te_matmul(A, B):
    k = te.reduce_axis((0, A.shape[1]), "k")
    return te.compute(
        (A.shape[0], B.shape[1]), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul"
    )


def te_relu(A):
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0.0), name="relu")


def test_create_prim_func_equals_hand_written():
    expected = tilelang.parse(MM_RELU)
    A = te.placeholder((128, 128), "float32", "A")
    B = te.placeholder((128, 128), "float32", "B")
    C = te_matmul(A, B)
    assert_structural_equal(te.create_prim_func([A, B, C], name="te_matmul"), expected["te_matmul"])
    D = te_relu(A)
    assert_structural_equal(te.create_prim_func([A, D], name="te_relu"), expected["te_relu"])


def test_block_builder_gives_the_printed_module():
    A = relax.Var("x", Tensor((128, 128), "float32"))  # names differ from the text
    B = relax.Var("y", Tensor((128, 128), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            lv = bb.emit_te(te_matmul, A, B)
            lv1 = bb.emit_te(te_relu, lv)
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv, params=[A, B])
    assert_structural_equal(bb.get(), tilelang.parse(MM_RELU))


def test_relax_syntax_errors_are_located():
    bad_output = MLP_TIR.read_text().replace("            R.output(out)\n", "")
    with pytest.raises(TIRSyntaxError, match="a dataflow block ends with R.output") as info:
        tilelang.parse(bad_output)
    assert "-->" in str(info.value)
    bad_name = MLP_TIR.read_text().replace("(lv0, ), R.Tensor", "(lv9, ), R.Tensor")
    with pytest.raises(TIRSyntaxError, match="undefined name lv9"):
        tilelang.parse(bad_name)
    bad_size = MLP_TIR.read_text().replace(
        'R.Tensor((1, k), "float32")', 'R.Tensor((1, q), "float32")'
    )
    with pytest.raises(TIRSyntaxError, match="undefined size q"):
        tilelang.parse(bad_size)


def _const_module(values, dtype):
    x = relax.Var("x", Tensor((2,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(relax.const(np.array(values, dtype)))
    return bb.get()


@pytest.mark.parametrize(
    ("values", "dtype"),
    [
        ([[1.5, -2.0, 0.0], [-0.25, 3e-8, -1e20]], "float32"),
        ([float("inf"), -float("inf"), 1.0], "float64"),
        ([[-3, 7], [0, -2147483648]], "int32"),
        ([True, False], "bool"),
        (-4.5, "float32"),
    ],
)
def test_constants_print_and_parse_back(values, dtype):
    mod = _const_module(values, dtype)
    parsed = tilelang.parse(mod.script())
    assert_structural_equal(parsed, mod)
    np.testing.assert_array_equal(parsed["main"].body.body.data, np.array(values, dtype))


def test_non_literal_constant_is_a_located_error():
    text = _const_module([1.0, 2.0], "float32").script().replace("[1.0, 2.0]", "[1.0, x]")
    with pytest.raises(TIRSyntaxError, match="R.const needs literal values") as info:
        tilelang.parse(text)
    assert "-->" in str(info.value)

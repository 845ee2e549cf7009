"""Relax text as TVM prints it: ``cls = Module`` at the top of an ``@R.function``, calls
spelled ``cls.f`` or ``Module.f``, and ``@R.function`` members of a decorated
``@I.ir_module`` class (``from tilelang.script import relax as R``)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import relax
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.script import ir as I
from tilelang.script import relax as R
from tilelang.script import tir as T

# SEED_PROGRAMS.md section 5, as TVM's printer shows it
SEED_MODULE = """
# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def te_matmul(rxplaceholder: T.Buffer((T.int64(16), T.int64(16)), "float32"), rxplaceholder_1: T.Buffer((T.int64(16), T.int64(16)), "float32"), matmul: T.Buffer((T.int64(16), T.int64(16)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for i, j, k in T.grid(T.int64(16), T.int64(16), T.int64(16)):
            with T.block("matmul"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(rxplaceholder[v_i, v_k], rxplaceholder_1[v_k, v_j])
                T.writes(matmul[v_i, v_j])
                with T.init():
                    matmul[v_i, v_j] = T.float32(0)
                matmul[v_i, v_j] = matmul[v_i, v_j] + rxplaceholder[v_i, v_k] * rxplaceholder_1[v_k, v_j]

    @T.prim_func
    def te_relu(rxplaceholder: T.Buffer((T.int64(16), T.int64(16)), "float32"), relu: T.Buffer((T.int64(16), T.int64(16)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for i0, i1 in T.grid(T.int64(16), T.int64(16)):
            with T.block("relu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(rxplaceholder[v_i0, v_i1])
                T.writes(relu[v_i0, v_i1])
                relu[v_i0, v_i1] = T.max(rxplaceholder[v_i0, v_i1], T.float32(0))

    @R.function
    def main(A: R.Tensor((16, 16), dtype="float32"), B: R.Tensor((16, 16), dtype="float32")) -> R.Tensor((16, 16), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.te_matmul, (A, B), out_sinfo=R.Tensor((16, 16), dtype="float32"))
            lv1 = R.call_tir(cls.te_relu, (lv,), out_sinfo=R.Tensor((16, 16), dtype="float32"))
            gv: R.Tensor((16, 16), dtype="float32") = lv1
            R.output(gv)
        return gv
"""  # noqa: E501


def run_main(mod, *args):
    vm = relax.VirtualMachine(relax.build(mod, target="python"), tilelang.cpu())
    return vm["main"](*args).numpy()


def test_tvm_printed_module_with_cls_parses_builds_and_runs():
    mod = tilelang.parse(SEED_MODULE)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((16, 16)).astype("float32") for _ in range(2))
    np.testing.assert_allclose(run_main(mod, a, b), np.maximum(a @ b, 0), rtol=1e-5)


def test_the_printer_writes_cls_module_and_reads_it_back():
    mod = tilelang.parse(SEED_MODULE)
    text = mod.script()
    assert "        cls = Module\n" in text
    assert_structural_equal(mod, tilelang.parse(text))


def test_module_name_and_cls_spell_the_same_call():
    by_class_name = SEED_MODULE.replace("        cls = Module\n", "").replace("cls.", "Module.")
    assert_structural_equal(tilelang.parse(SEED_MODULE), tilelang.parse(by_class_name))


def test_an_unknown_module_name_is_a_located_error():
    text = SEED_MODULE.replace("cls.te_relu", "Other.te_relu")
    with pytest.raises(TIRSyntaxError, match="R.call_tir calls a prim_func of the module") as info:
        tilelang.parse(text)
    assert (
        info.value.line
        == text.splitlines().index(
            next(line for line in text.splitlines() if "Other.te_relu" in line)
        )
        + 1
    )


@I.ir_module
class Decorated:
    @T.prim_func
    def relu(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.max(A[vi], T.float32(0))

    @R.function
    def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        cls = Decorated
        with R.dataflow():
            y = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((8,), dtype="float32"))
            z = R.call_tir(Decorated.relu, (y,), out_sinfo=R.Tensor((8,), dtype="float32"))
            R.output(z)
        return z


def test_decorated_ir_module_with_relax_and_tir_members():
    assert set(Decorated.functions) == {"relu", "main"}
    x = np.linspace(-1, 1, 8).astype("float32")
    np.testing.assert_array_equal(run_main(Decorated, x), np.maximum(x, 0))

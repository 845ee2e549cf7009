"""The API details the MLC course relies on: module paths, lazy subpackages, IRModule as
TVM's, shape comparisons, relax.const with struct info, emit_func_output of a dataflow
variable, targets and tags, imported_modules of a CUDA build."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

import tilelang
from tilelang import relax, te
from tilelang.errors import ArgumentError, BuildError
from tilelang.ir import EQ, assert_structural_equal, structural_equal
from tilelang.target import Target

SOURCE = """
@I.ir_module
class Module:
    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] + T.float32(1)

    @T.prim_func
    def add_two(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] + T.float32(2)
"""


def run(mod, name):
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    tilelang.build(mod, target="c")[name](a, b)
    return b - a


# ---------------------------------------------------------------- module paths


def test_import_tilelang_is_light_and_subpackages_load_on_first_use():
    code = (
        "import sys, tilelang\n"
        "names = ['relax', 'te', 'tune', 'tiling', 'transform', 'schedule', 'runtime',\n"
        "         'topi', 'meta_schedule', 'target']\n"
        "assert not [n for n in names if 'tilelang.' + n in sys.modules], "
        "sorted(m for m in sys.modules if m.startswith('tilelang.'))\n"
        "for n in names:\n"
        "    assert getattr(tilelang, n).__name__ == 'tilelang.' + n\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        tilelang.no_such_thing  # noqa: B018


def test_ir_module_path():
    from tilelang.ir.module import IRModule

    assert IRModule is tilelang.IRModule is tilelang.ir.IRModule
    assert isinstance(tilelang.parse(SOURCE), IRModule)


# ---------------------------------------------------------------- IRModule API


def test_functions_items_have_name_hints():
    mod = tilelang.parse(SOURCE)
    names = [gv.name_hint for gv, _ in mod.functions.items()]
    assert sorted(names) == ["add_one", "add_two"]
    assert [gv.name_hint for gv, _ in mod.functions_items()] == ["add_one", "add_two"]
    assert "add_one" in mod.functions  # keys still compare as strings


def test_get_global_var_and_update_func_replace_a_function_in_place():
    mod = tilelang.parse(SOURCE)
    gv = mod.get_global_var("add_one")
    assert gv.name_hint == "add_one"
    new = mod["add_two"].with_attr("global_symbol", "add_one")
    assert mod.update_func(gv, new) is mod
    assert mod["add_one"] is new and mod[gv] is new
    np.testing.assert_array_equal(run(mod, "add_one"), np.full(8, 2, "float32"))
    with pytest.raises(KeyError, match="no function 'missing'"):
        mod.get_global_var("missing")
    with pytest.raises(KeyError, match="no function 'missing'"):
        mod.update_func("missing", new)


def test_setitem_adds_and_delitem_removes():
    mod = tilelang.parse(SOURCE)
    mod["three"] = mod["add_one"]
    assert sorted(mod.functions) == ["add_one", "add_two", "three"] and len(mod) == 3
    del mod["three"]
    assert "three" not in mod
    with pytest.raises(TypeError, match="holds functions"):
        mod["x"] = 3


def test_assignments_do_not_reach_a_schedule_made_from_the_module():
    mod = tilelang.parse(SOURCE)
    sch = tilelang.tir.Schedule(mod)
    other = sch.copy()
    mod["add_one"] = mod["add_two"]
    sch.mod["add_two"] = mod["add_one"].with_attr("global_symbol", "changed")
    assert other.mod["add_two"].attrs.get("global_symbol") != "changed"
    np.testing.assert_array_equal(run(other.mod, "add_one"), np.ones(8, "float32"))


def test_with_attr_is_a_new_module_and_takes_a_dict():
    mod = tilelang.parse(SOURCE)
    tagged = mod.with_attr("device", "cpu")
    assert tagged.attrs == {"device": "cpu"} and mod.attrs == {}
    assert tagged.with_attr({"a": 1, "b": 2}).attrs == {"device": "cpu", "a": 1, "b": 2}
    func = mod["add_one"].with_attr({"global_symbol": "renamed"})
    assert func.attrs["global_symbol"] == "renamed"
    with pytest.raises(TypeError):
        mod.with_attr({"a": 1}, 2)


def test_from_expr_names_the_function_by_its_global_symbol():
    mod = tilelang.parse(SOURCE)
    single = tilelang.IRModule.from_expr(mod["add_one"].with_attr("global_symbol", "main"))
    assert list(single.functions) == ["main"]


# ---------------------------------------------------------------- TE / Relax details


def test_constant_shape_dimensions_compare_to_a_bool():
    A = te.placeholder((128, 64), name="A")
    B = te.placeholder((64, 32), name="B")
    assert (A.shape[1] == B.shape[0]) is True
    assert (A.shape[0] == B.shape[0]) is False
    assert (A.shape[0] != 128) is False and (128 == A.shape[0]) is True
    n = te.var("n")
    C = te.placeholder((n, 64), name="C")
    symbolic = C.shape[0] == A.shape[0]
    assert isinstance(symbolic, EQ)  # a symbolic size still builds an expression
    with pytest.raises(TypeError, match="no truth value"):
        bool(symbolic)


def test_relax_const_with_struct_info():
    value = np.arange(6, dtype="float64").reshape(2, 3)
    c = relax.const(value, relax.TensorStructInfo((2, 3), "float32"))
    assert c.data.dtype == np.float32
    assert structural_equal(c.struct_info, relax.TensorStructInfo((2, 3), "float32"))
    np.testing.assert_array_equal(c.data, value.astype("float32"))
    with pytest.raises(ArgumentError, match=r"shape \(2, 3\) but the struct info says \(3, 2\)"):
        relax.const(value, relax.TensorStructInfo((3, 2), "float32"))


def _relu(x):
    return te.compute(x.shape, lambda *i: te.max(x(*i), 0), name="relu")


def test_emit_func_output_of_a_dataflow_variable():
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit_te(_relu, x)
        bb.emit_func_output(lv)
    mod = bb.get()
    text = mod.script()
    assert "R.output(" in text
    tilelang.ir.assert_structural_equal(tilelang.parse(text), mod)
    vm = relax.VirtualMachine(relax.build(mod, target="c"), tilelang.cpu())
    data = np.array([-1, 2, -3, 4], "float32")
    np.testing.assert_array_equal(vm["main"](data).numpy(), np.maximum(data, 0))


# ---------------------------------------------------------------- targets


def test_tvm_target_strings():
    assert Target("llvm -mcpu=skylake-avx512").mcpu == "skylake-avx512"
    assert Target("cuda -arch=sm_80").arch == "sm_80"
    cuda = Target("cuda")
    assert (cuda.max_num_threads, cuda.thread_warp_size) == (1024, 32)
    assert cuda.keys == ("cuda", "gpu") and Target("llvm").keys == ("cpu",)
    assert Target("llvm").max_num_threads is None
    assert Target("cuda", host="llvm").host == Target("llvm")


@pytest.mark.parametrize(
    "tag, arch",
    [("nvidia/tesla-p100", "sm_60"), ("nvidia/nvidia-a100", "sm_80"),
     ("nvidia/nvidia-t4", "sm_75"), ("nvidia/nvidia-h100", "sm_90a"),
     ("nvidia/geforce-rtx-3090", "sm_86")],
)  # fmt: skip
def test_nvidia_tags_carry_device_parameters(tag, arch):
    target = tilelang.target.Target(tag)
    assert target.kind == "cuda" and target.arch == arch
    assert target.max_num_threads == 1024
    assert target.max_shared_memory_per_block == 49152
    assert target.attrs["registers_per_block"] == 65536
    assert Target(str(target)) == target  # the printed form reads back
    assert Target({"tag": tag}) == target
    assert Target(f"{tag} -arch=sm_90").arch == "sm_90"  # later options override


def test_unknown_tag_lists_the_known_ones():
    with pytest.raises(BuildError, match="unknown target tag 'nvidia/gtx-9999'.*nvidia-a100"):
        Target("nvidia/gtx-9999")


def test_cpu_build_imports_no_device_module():
    lib = tilelang.build(tilelang.parse(SOURCE), target="c")
    assert lib.imported_modules == [] and lib.type_key == "c"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_cuda_build_imports_the_device_module_with_its_source():
    from tilelang.testing.workloads import matmul

    sch = tilelang.tir.Schedule(matmul(64))
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    rt_mod = tilelang.build(sch.mod, target=Target("nvidia/nvidia-a100"))
    (device,) = rt_mod.imported_modules
    assert device.type_key == "cuda"
    source = device.get_source()
    assert source == rt_mod.get_source() and "__global__" in source
    assert "sm_80" in source  # the tag's architecture reached nvcc's target line


# ------------------------------------------- the course's decorated graph functions

COURSE_MODULE = """
@I.ir_module
class MyModule:
    @T.prim_func
    def relu0(x: T.Buffer((1, 4), "float32"), y: T.Buffer((1, 4), "float32")):
        for i, j in T.grid(1, 4):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.max(x[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor((1, 4), "float32")):
        cls = MyModule
        with R.dataflow():
            lv0 = R.call_tir(cls.relu0, (x,), R.Tensor((1, 4), dtype="float32"))
            R.output(lv0)
        return lv0
"""


def test_course_relax_module_as_text_builds_and_runs():
    mod = tilelang.parse(COURSE_MODULE)
    vm = relax.VirtualMachine(relax.build(mod, target="c"), tilelang.cpu())
    data = np.array([[-1, 2, -3, 4]], "float32")
    np.testing.assert_array_equal(vm["main"](data).numpy(), np.maximum(data, 0))


def test_course_relax_module_as_decorated_python(tmp_path, monkeypatch):
    import importlib.util

    from tilelang.script import relax as R  # noqa: F401

    path = tmp_path / "course_module.py"
    path.write_text("from tilelang.script import ir as I, relax as R, tir as T\n" + COURSE_MODULE)
    spec = importlib.util.spec_from_file_location("course_module", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "course_module", module)  # imported as a user's module is
    spec.loader.exec_module(module)
    mod = module.MyModule
    assert_structural_equal(mod, tilelang.parse(COURSE_MODULE))

"""The MLC course's end-to-end model lesson as the course writes it (SEED_PROGRAMS §4-§5),
with only ``tvm`` replaced by ``tilelang``.

A module mixing a TensorIR function with registered library functions (PyTorch through
DLPack, ``register_func(..., override=True)``), run by the virtual machine with the
weights as arguments and bound as constants (``BindParams``); then ``linear0`` is tuned
with MetaSchedule's spelling and swapped in with ``get_global_var`` / ``update_func``.

The module is the course's decorated ``@R.function`` class verbatim.

    python samples/course/end_to_end.py
"""

# The course's own spelling is kept on purpose (%-formatting, long lines).
# ruff: noqa: UP031, E501, F821 - `cls` is TVMScript (the module itself), not Python

import tempfile

import numpy as np
import torch

import tilelang as tvm
from tilelang import meta_schedule as ms
from tilelang import relax
from tilelang.script import relax as R
from tilelang.script import tir as T


@tvm.script.ir_module
class MyModuleMixture:
    @T.prim_func
    def linear0(
        X: T.Buffer((1, 784), "float32"),
        W: T.Buffer((128, 784), "float32"),
        B: T.Buffer((128,), "float32"),
        Z: T.Buffer((1, 128), "float32"),
    ):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, 128), "float32")
        for i, j, k in T.grid(1, 128, 784):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]

        for i, j in T.grid(1, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(
        x: R.Tensor((1, 784), "float32"),
        w0: R.Tensor((128, 784), "float32"),
        b0: R.Tensor((128,), "float32"),
        w1: R.Tensor((10, 128), "float32"),
        b1: R.Tensor((10,), "float32"),
    ):
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, 10), dtype="float32"))
            R.output(out)
        return out


MyModuleMixture.show()


@tvm.register_func("env.linear", override=True)
def torch_linear(x: tvm.nd.NDArray, w: tvm.nd.NDArray, b: tvm.nd.NDArray, out: tvm.nd.NDArray):
    x_torch = torch.from_dlpack(x)
    w_torch = torch.from_dlpack(w)
    b_torch = torch.from_dlpack(b)
    out_torch = torch.from_dlpack(out)
    torch.mm(x_torch, w_torch.T, out=out_torch)
    torch.add(out_torch, b_torch, out=out_torch)


@tvm.register_func("env.relu", override=True)
def lnumpy_relu(x: tvm.nd.NDArray, out: tvm.nd.NDArray):
    x_torch = torch.from_dlpack(x)
    out_torch = torch.from_dlpack(out)
    torch.maximum(x_torch, torch.Tensor([0.0]), out=out_torch)


# the course downloads trained FashionMNIST weights; synthetic ones of the same shapes here
rng = np.random.default_rng(0)
mlp_params = {
    "w0": (rng.standard_normal((128, 784)) / 28).astype("float32"),
    "b0": (0.1 * rng.standard_normal(128)).astype("float32"),
    "w1": (rng.standard_normal((10, 128)) / 11).astype("float32"),
    "b1": (0.1 * rng.standard_normal(10)).astype("float32"),
}
img = rng.random((1, 28, 28)).astype("float32")
data_nd = tvm.nd.array(img.reshape(1, 784))
nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}


def numpy_mlp(data, w0, b0, w1, b1):
    return np.maximum(data @ w0.T + b0, 0) @ w1.T + b1


expected = numpy_mlp(img.reshape(1, 784), **mlp_params)

ex = relax.build(MyModuleMixture, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
nd_res = vm["main"](data_nd, nd_params["w0"], nd_params["b0"], nd_params["w1"], nd_params["b1"])
np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)
pred_kind = np.argmax(nd_res.numpy(), axis=1)
print("MyModuleMixture Prediction:", pred_kind[0])

# weights bound into the module as constants
MyModuleWithParams = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
ex = relax.build(MyModuleWithParams, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
nd_res = vm["main"](data_nd)
np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)

# tune linear0 and put the tuned function back into the module
mod_linear = tvm.IRModule.from_expr(MyModuleMixture["linear0"].with_attr("global_symbol", "main"))
with tempfile.TemporaryDirectory() as work_dir:
    database = ms.tune_tir(
        mod=mod_linear,
        target="llvm --num-cores=1",
        max_trials_global=2,
        num_trials_per_iter=2,
        work_dir=work_dir,
        task_name="main",
    )
    sch = ms.tir_integration.compile_tir(database, mod_linear, "llvm --num-cores=1")

MyModuleWithParams2 = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
new_func = sch.mod["main"].with_attr("global_symbol", "linear0")
gv = MyModuleWithParams2.get_global_var("linear0")
MyModuleWithParams2.update_func(gv, new_func)
ex = relax.build(MyModuleWithParams2, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
nd_res = vm["main"](data_nd)
np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)
f_timer_after = vm.time_evaluator("main", tvm.cpu())
print("MyModuleWithParams2 time-cost: %g ms" % (f_timer_after(data_nd).mean * 1000))
print("ok")

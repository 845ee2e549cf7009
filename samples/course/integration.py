"""The MLC course's "integration with machine-learning frameworks" lesson as the course
writes it (SEED_PROGRAMS §5), with only ``tvm`` replaced by ``tilelang``.

Tensor expressions and ``relax.BlockBuilder`` build a module (``emit_te``,
``emit_output``, ``emit_func_output``); the course's own ``from_fx`` translates a
PyTorch model through ``torch.fx`` with ``topi.nn.dense`` / ``topi.add`` and weights as
``relax.const(array, relax.TensorStructInfo(...))``; the model is built, run by the
virtual machine and checked against PyTorch. Finally the ``dense`` tensor function is
tuned with MetaSchedule's spelling and swapped into the module with
``get_global_var`` / ``update_func``.

    python samples/course/integration.py
"""

# The course's own spelling is kept on purpose (%-formatting, super(Class, self)).
# ruff: noqa: UP008, UP031, E501

import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch import fx

import tilelang as tvm
from tilelang import meta_schedule as ms
from tilelang import relax, te, topi


def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


A = relax.Var("A", relax.TensorStructInfo((128, 128), "float32"))
B = relax.Var("B", relax.TensorStructInfo((128, 128), "float32"))

bb = relax.BlockBuilder()
with bb.function("main"):
    with bb.dataflow():
        C = bb.emit_te(te_matmul, A, B)
        D = bb.emit_te(te_relu, C)
        R = bb.emit_output(D)
    bb.emit_func_output(R, params=[A, B])

MyModule = bb.get()
MyModule.show()


# --- from PyTorch, with the course's own translator
class MyModel(nn.Module):
    def __init__(self):
        super(MyModel, self).__init__()
        self.weight = nn.Parameter(torch.randn(128, 128))

    def forward(self, x):
        x = torch.matmul(x, self.weight)
        x = torch.relu(x)
        return x


def map_param(param: nn.Parameter):
    return relax.const(
        param.data.cpu().numpy(), relax.TensorStructInfo(param.data.shape, "float32")
    )


def fetch_attr(fx_mod, target: str):
    """Helper function to fetch an attr"""
    target_atoms = target.split(".")
    attr_itr = fx_mod
    for i, atom in enumerate(target_atoms):
        if not hasattr(attr_itr, atom):
            raise RuntimeError(f"Node referenced nonexistant target {'.'.join(target_atoms[:i])}")
        attr_itr = getattr(attr_itr, atom)
    return attr_itr


def from_fx(fx_mod, input_shapes, call_function_map, call_module_map):
    input_index = 0
    node_map = {}
    named_modules = dict(fx_mod.named_modules())

    bb = relax.BlockBuilder()

    fn_inputs = []
    fn_output = None
    with bb.function("main"):
        with bb.dataflow():
            for node in fx_mod.graph.nodes:
                if node.op == "placeholder":
                    # create input placeholder
                    shape = input_shapes[input_index]
                    input_index += 1
                    input_var = relax.Var(node.target, relax.TensorStructInfo(shape, "float32"))
                    fn_inputs.append(input_var)
                    node_map[node] = input_var
                elif node.op == "get_attr":
                    node_map[node] = map_param(fetch_attr(fx_mod, node.target))
                elif node.op == "call_function":
                    node_map[node] = call_function_map[node.target](bb, node_map, node)
                elif node.op == "call_module":
                    named_module = named_modules[node.target]
                    node_map[node] = call_module_map[type(named_module)](
                        bb, node_map, node, named_module
                    )
                elif node.op == "output":
                    output = node_map[node.args[0]]
                    assert fn_output is None
                    fn_output = bb.emit_output(output)
        # output and finalize the function
        bb.emit_func_output(output, fn_inputs)
    return bb.get()


def map_matmul(bb, node_map, node: fx.Node):
    A = node_map[node.args[0]]
    B = node_map[node.args[1]]
    return bb.emit_te(te_matmul, A, B)


def map_relu(bb, node_map, node: fx.Node):
    A = node_map[node.args[0]]
    return bb.emit_te(te_relu, A)


model = MyModel()
fx_module = fx.symbolic_trace(model)
MyModule = from_fx(
    fx_module,
    input_shapes=[(1, 128)],
    call_function_map={
        torch.matmul: map_matmul,
        torch.relu: map_relu,
    },
    call_module_map={},
)
# the weight is bound as a constant: print the tensor functions, not 16384 numbers
MyModule["te_matmul"].show()


# --- the course's MLP
class MLP(nn.Module):
    def __init__(self):
        super(MLP, self).__init__()
        self.linear0 = nn.Linear(784, 128, bias=True)
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(128, 10, bias=True)

    def forward(self, x):
        x = self.linear0(x)
        x = self.relu(x)
        x = self.linear1(x)
        return x


def map_nn_relu_op(bb, node_map, node, nn_mod):
    A = node_map[node.args[0]]
    return bb.emit_te(topi.nn.relu, A)


def map_nn_linear_op(bb, node_map, node, nn_mod):
    x = node_map[node.args[0]]
    w = map_param(nn_mod.weight)
    if nn_mod.bias is not None:
        b = map_param(nn_mod.bias)
    y = bb.emit_te(topi.nn.dense, x, w)
    return bb.emit_te(topi.add, y, b)


mlp_model = MLP()
MLPModuleHighLevel = from_fx(
    fx.symbolic_trace(mlp_model),
    input_shapes=[(1, 784)],
    call_function_map={},
    call_module_map={
        torch.nn.Linear: map_nn_linear_op,
        torch.nn.ReLU: map_nn_relu_op,
    },
)
MLPModuleHighLevel["dense"].show()

data_np = np.random.rand(1, 784).astype("float32")
data_nd = tvm.nd.array(data_np)
torch_res = mlp_model(torch.from_numpy(data_np)).detach().numpy()

ex = relax.build(MLPModuleHighLevel, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
nd_res = vm["main"](data_nd)
np.testing.assert_allclose(nd_res.numpy(), torch_res, rtol=1e-4, atol=1e-4)
print("MLP matches PyTorch:", nd_res.numpy().argmax(axis=1))

# --- tune the first dense layer and put it back into the model
for gv, func in MLPModuleHighLevel.functions.items():
    print(gv.name_hint, type(func).__name__)

mod_dense = tvm.IRModule.from_expr(MLPModuleHighLevel["dense"].with_attr("global_symbol", "main"))
with tempfile.TemporaryDirectory() as work_dir:
    database = ms.tune_tir(
        mod=mod_dense,
        target="llvm --num-cores=1",
        max_trials_global=2,
        num_trials_per_iter=2,
        work_dir=work_dir,
        task_name="main",
    )
    sch = ms.tir_integration.compile_tir(database, mod_dense, "llvm --num-cores=1")

new_func = sch.mod["main"].with_attr("global_symbol", "dense")
gv = MLPModuleHighLevel.get_global_var("dense")
MLPModuleHighLevel.update_func(gv, new_func)

ex = relax.build(MLPModuleHighLevel, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
nd_res = vm["main"](data_nd)
np.testing.assert_allclose(nd_res.numpy(), torch_res, rtol=1e-4, atol=1e-4)
print("tuned MLP matches PyTorch")
print("ok")

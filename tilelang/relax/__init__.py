"""Graph-level functions (TVM's Relax): a model as calls of tensor functions.

Build a module with :class:`BlockBuilder` (or parse ``@R.function`` text), bind
weights with :func:`bind_params`, compile it with :func:`build` and run it::

    ex = relax.build(mod, target="c")
    vm = relax.VirtualMachine(ex, tilelang.cpu())
    out = vm["main"](x, w0, b0, w1, b1).numpy()

PyTorch models come in through ``relax.frontend.from_fx`` (a ``torch.fx`` trace).
"""

from tilelang.relax import frontend
from tilelang.relax.block_builder import BlockBuilder
from tilelang.relax.expr import (
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    Expr,
    ExternFunc,
    Function,
    GlobalVar,
    SeqExpr,
    Tuple,
    Var,
    VarBinding,
    call_dps_packed,
    call_tir,
    const,
)
from tilelang.relax.struct_info import StructInfo, TensorStructInfo, TupleStructInfo
from tilelang.relax.transform import BindParams, bind_params
from tilelang.relax.vm import Executable, VirtualMachine, build

__all__ = [
    "BlockBuilder", "BindingBlock", "Call", "Constant", "DataflowBlock", "DataflowVar",
    "Expr", "ExternFunc", "Function", "GlobalVar", "SeqExpr", "Tuple", "Var", "VarBinding",
    "call_dps_packed", "call_tir", "const", "StructInfo", "TensorStructInfo",
    "TupleStructInfo", "BindParams", "bind_params", "Executable", "VirtualMachine", "build",
    "frontend",
]  # fmt: skip

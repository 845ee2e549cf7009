"""Graph-level transformations: binding parameters as constants."""

from __future__ import annotations

import attrs
import numpy as np

from tilelang.errors import ArgumentError
from tilelang.ir import IntImm, IRModule, StmtExprMutator
from tilelang.ir import Var as TirVar
from tilelang.relax.expr import Constant, Function, Var, VarBinding
from tilelang.relax.shape import ShapeEnv
from tilelang.relax.struct_info import TensorStructInfo


class _Rebind(StmtExprMutator):
    """Replaces bound parameters by constants and bound sizes by their values; every
    variable whose struct info changes is redefined, and its uses follow."""

    def __init__(self, constants: dict, sizes: dict):
        self.constants = constants  # graph Var -> Constant
        self.sizes = sizes  # TIR size Var -> IntImm
        self.renamed: dict = {}  # graph Var -> its redefinition

    def visit_var(self, var):
        if isinstance(var, TirVar):
            return self.sizes.get(var, var)
        if var in self.constants:
            return self.constants[var]
        return self.define(var)

    def define(self, var: Var) -> Var:
        new = self.renamed.get(var)
        if new is None:
            sinfo = self.visit(var.struct_info)
            new = var if sinfo is var.struct_info else attrs.evolve(var, struct_info=sinfo)
            self.renamed[var] = new
        return new

    def visit_var_binding(self, binding: VarBinding):
        var, value = self.define(binding.var), self.visit(binding.value)
        if var is binding.var and value is binding.value:
            return binding
        return VarBinding(var, value, span=binding.span)

    def visit_function(self, func: Function):
        params = tuple(self.define(p) for p in func.params if p not in self.constants)
        body = self.visit(func.body)
        ret = None if func.ret_struct_info is None else self.visit(func.ret_struct_info)
        return attrs.evolve(func, params=params, body=body, ret_struct_info=ret)


def bind_params(mod: IRModule, params: dict, func_name: str = "main") -> IRModule:
    """``mod`` with the parameters of ``func_name`` named in ``params`` (name ->
    array) replaced by constants. Symbolic sizes those arrays determine are replaced
    by their values everywhere in the function; an array that contradicts its
    parameter's annotation (or another array) is an :class:`ArgumentError`."""
    func = mod[func_name]
    if not isinstance(func, Function):
        raise ArgumentError(f"bind_params: {func_name!r} is not a graph function")
    by_name = {p.name_hint: p for p in func.params}
    unknown = sorted(set(params) - set(by_name))
    if unknown:
        raise ArgumentError(
            f"bind_params: {func_name} has no parameter(s) {', '.join(unknown)} "
            f"(it has: {', '.join(by_name)})"
        )
    env = ShapeEnv()
    constants = {}
    for name, value in params.items():
        param = by_name[name]
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        sinfo = param.struct_info
        what = f"bind_params: parameter {name}"
        if isinstance(sinfo, TensorStructInfo):
            if str(array.dtype) != str(sinfo.dtype):
                raise ArgumentError(f"{what}: dtype is {array.dtype}, expected {sinfo.dtype}")
            if sinfo.shape is not None:
                env.match(sinfo.shape, array.shape, what)
        constants[param] = Constant.from_array(array)
    sizes = {
        var: IntImm(var.dtype, value)
        for var, (value, _origin) in env.values.items()
        if isinstance(value, int)
    }
    return mod.with_function(func_name, _Rebind(constants, sizes).visit(func))


class BindParams:
    """TVM's spelling: ``BindParams("main", params)(mod)``."""

    def __init__(self, func_name: str, params: dict):
        self.func_name, self.params = func_name, params

    def __call__(self, mod: IRModule) -> IRModule:
        return bind_params(mod, self.params, self.func_name)

"""Specialising the prim_funcs a graph calls to the shapes at each call site.

A tensor function written once for symbolic sizes (the MLP's ``linear0`` over ``m``
inputs and ``n`` outputs) is called with sizes the graph already knows: bound
weights and annotated arguments fix them. :func:`specialize_calls` gives each call
whose operands decide every size of the callee's buffers a copy of the callee with
those sizes as constants (:func:`tilelang.transform.specialize.specialize`), one copy
per distinct set of sizes, named ``<callee>_<size>_<size>...``; the call is redirected
to it. Calls whose sizes stay symbolic keep the generic function. A prim_func left
with no callers is dropped from the module (nothing calls it).

Only constant shapes let the default schedule rules tile and vectorise, so
``relax.build`` runs this before compiling when the rules are on.
"""

from __future__ import annotations

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import IRModule, PrimFunc
from tilelang.relax.expr import (
    Call,
    Constant,
    ExternFunc,
    Function,
    GlobalVar,
    Tuple,
    callee_name,
)
from tilelang.relax.shape import ShapeEnv
from tilelang.relax.struct_info import TensorStructInfo
from tilelang.transform.bind_arguments import size_vars
from tilelang.transform.specialize import specialize


def _operand_shape(expr):
    if isinstance(expr, Constant):
        return tuple(expr.data.shape)
    sinfo = getattr(expr, "struct_info", None)
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
        return tuple(sinfo.shape)
    return None


def call_sizes(call: Call, func: PrimFunc) -> dict | None:
    """The value of every size variable of ``func``'s buffers at ``call``, when the
    operands' static shapes decide them all (None otherwise, or when the call does not
    fit the function: the build reports that)."""
    fields = call.args[1].fields if isinstance(call.args[1], Tuple) else call.args[1:]
    shapes = [_operand_shape(a) for a in fields] + [_operand_shape_of_output(call)]
    buffers = [func.buffer_map.get(p) for p in func.params]
    if len(buffers) != len(shapes) or None in buffers:
        return None
    env = ShapeEnv()
    try:
        for buffer, shape in zip(buffers, shapes):
            if shape is not None:
                env.match(buffer.shape, shape, buffer.name, strict=False)
    except ArgumentError:
        return None
    sizes = {}
    for var in size_vars(func):
        value = env.value_of(var)
        if not isinstance(value, int):
            return None
        sizes[var] = value
    return sizes


def _operand_shape_of_output(call: Call):
    sinfo = call.struct_info
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
        return tuple(sinfo.shape)
    return None


class _Specializer:
    def __init__(self, mod: IRModule):
        self.prim_funcs = {name: f for name, f in mod if isinstance(f, PrimFunc)}
        self.taken = {name for name, _ in mod}
        self.copies: dict = {}  # (callee, sizes) -> name
        self.new_funcs: dict = {}
        self.still_called: set = set()

    def copy_for(self, callee: str, func: PrimFunc, sizes: dict) -> str:
        key = (callee, tuple(sizes.values()))
        name = self.copies.get(key)
        if name is None:
            base = "_".join([callee, *(str(v) for v in sizes.values())])
            name, suffix = base, 1
            while name in self.taken:
                name, suffix = f"{base}_{suffix}", suffix + 1
            self.taken.add(name)
            special = specialize(func, sizes).with_attr("global_symbol", name)
            self.copies[key], self.new_funcs[name] = name, special
        return name

    def call(self, call: Call) -> Call:
        if not isinstance(call, Call) or call.op not in ("relax.call_tir", "relax.call_dps_packed"):
            return call
        callee = callee_name(call)
        func = self.prim_funcs.get(callee)
        if func is None:
            return call
        if not size_vars(func):
            self.still_called.add(callee)
            return call
        sizes = call_sizes(call, func)
        if sizes is None:
            self.still_called.add(callee)
            return call
        name = self.copy_for(callee, func, sizes)
        target = call.args[0]
        if isinstance(target, GlobalVar):
            target = attrs.evolve(target, name_hint=name)
        else:
            target = ExternFunc(name, span=target.span)
        return attrs.evolve(call, args=(target, *call.args[1:]))

    def function(self, func: Function) -> Function:
        blocks = []
        for block in func.body.blocks:
            bindings = []
            for binding in block.bindings:
                value = self.call(binding.value)
                same = value is binding.value
                bindings.append(binding if same else attrs.evolve(binding, value=value))
            blocks.append(attrs.evolve(block, bindings=tuple(bindings)))
        return attrs.evolve(func, body=attrs.evolve(func.body, blocks=tuple(blocks)))


def specialize_calls(mod: IRModule) -> IRModule:
    """``mod`` with its graph functions' calls redirected to prim_funcs specialised to
    their call sites' sizes (see the module docstring)."""
    spec = _Specializer(mod)
    called: set = set()
    functions = {}
    for name, func in mod:
        if isinstance(func, Function):
            functions[name] = spec.function(func)
            called.update(_callees(func))
        else:
            functions[name] = func
    for name in list(functions):
        replaced = name in called and name not in spec.still_called
        if isinstance(functions[name], PrimFunc) and replaced:
            del functions[name]
    functions.update(spec.new_funcs)
    return attrs.evolve(mod, functions=functions)


def _callees(func: Function) -> set:
    return {
        callee_name(b.value)
        for block in func.body.blocks
        for b in block.bindings
        if isinstance(b.value, Call) and b.value.op in ("relax.call_tir", "relax.call_dps_packed")
    }


__all__ = ["specialize_calls", "call_sizes"]

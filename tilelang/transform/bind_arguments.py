"""BindArguments: the calling convention of a lowered function (TVM's MakePackedAPI,
reduced to what a NumPy-facing runtime needs).

Sets ``attrs["global_symbol"]`` (the module's name for the function unless already
set), ``attrs["tl.size_vars"]`` (the symbolic sizes in the parameter buffers' shapes,
strides and elem_offsets that are not parameters, in order of first appearance) and
``attrs["tl.lowered"] = True``.

No argument checks are emitted into the body: the runtime checks each array against
``buffer_map[param]`` (rank, shape, dtype, strides), binds the size variables from the
arrays' shapes, checks that they agree, and passes their values as trailing scalar
arguments (see ``docs/lowered_ir.md``).
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import post_order_visit
from tilelang.transform.pass_infra import module_pass


def size_vars(func) -> tuple:
    """The symbolic size variables of ``func``'s parameter buffers, in order."""
    params = {id(p) for p in func.params}
    found, seen = [], set()

    def collect(node):
        if isinstance(node, E.Var) and id(node) not in seen and id(node) not in params:
            seen.add(id(node))
            found.append(node)

    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            continue
        for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            post_order_visit(part, collect)
    return tuple(found)


def bind_arguments(func, name: str):
    """``func`` with its calling-convention attributes set."""
    if not isinstance(func, PrimFunc):
        return func
    new_attrs = dict(func.attrs)
    new_attrs.setdefault("global_symbol", name)
    new_attrs["tl.size_vars"] = size_vars(func)
    new_attrs["tl.lowered"] = True
    return attrs.evolve(func, attrs=new_attrs)


def BindArguments():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(mod, ctx):
        functions = {name: bind_arguments(f, name) for name, f in mod.functions.items()}
        return attrs.evolve(mod, functions=functions)

    return module_pass(transform, opt_level=0, name="tir.BindArguments")

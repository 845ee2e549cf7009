"""Specialising a PrimFunc: symbolic sizes and scalar parameters replaced by values.

``specialize(func, {n: 128})`` is ``func`` with every use of ``n`` -- in loop extents,
indices, block iterator domains and the shapes, strides and offsets of every buffer
(parameters, allocations, match_buffers) -- replaced by ``128`` (TVM's
``PrimFunc.specialize`` with variable keys). A specialised scalar parameter is dropped
from the parameter list, as in TVM; a size variable of the buffers is not a parameter,
so its value simply becomes part of the shapes, and the runtime then checks arrays
against the constant shape.

Constant shapes are what the default schedule rules need to tile and vectorise, so a
graph build specialises the prim_funcs it calls to the shapes at each call site
(:mod:`tilelang.relax.specialize`).
"""

from __future__ import annotations

import numbers

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import expr as E
from tilelang.ir.buffer import Buffer
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import StmtExprMutator, post_order_visit


class _Specializer(StmtExprMutator):
    """Replaces variables everywhere, buffers' shapes included; each buffer is rebuilt
    once so its definition and all its uses stay the same object."""

    def __init__(self, values: dict):
        self.values = values
        self.buffers: dict[int, Buffer] = {}

    def visit_var(self, var):
        return self.values.get(var, var)

    def buffer(self, buffer: Buffer) -> Buffer:
        new = self.buffers.get(id(buffer))
        if new is None:
            shape = tuple(self.visit(x) for x in buffer.shape)
            strides = tuple(self.visit(x) for x in buffer.strides)
            offset = self.visit(buffer.elem_offset)
            unchanged = (
                all(a is b for a, b in zip(shape, buffer.shape))
                and all(a is b for a, b in zip(strides, buffer.strides))
                and offset is buffer.elem_offset
            )
            new = buffer if unchanged else attrs.evolve(
                buffer, shape=shape, strides=strides, elem_offset=offset
            )  # fmt: skip
            self.buffers[id(buffer)] = new
        return new

    visit_buffer_ref = buffer
    visit_buffer_def = buffer


def _free_vars(func: PrimFunc) -> dict:
    """The variables a caller may specialise: scalar parameters and the size variables
    of the parameter buffers, by identity."""
    found = {id(p): p for p in func.params if p not in func.buffer_map}

    def collect(node):
        if isinstance(node, E.Var):
            found.setdefault(id(node), node)

    for buffer in func.buffer_map.values():
        for part in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            post_order_visit(part, collect)
    return found


def _as_value(var: E.Var, value) -> E.PrimExpr:
    if isinstance(value, E.PrimExpr):
        if str(value.dtype) != str(var.dtype):
            raise ArgumentError(
                f"specialize: {var.name} is {var.dtype}, but its value has type {value.dtype}"
            )
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(
            f"specialize: the value of {var.name} must be an integer, got {value!r}"
        )
    if isinstance(var, E.SizeVar) and value < 0:
        raise ArgumentError(f"specialize: size {var.name} must be >= 0, got {value}")
    if not var.dtype.is_integer():
        raise ArgumentError(f"specialize: {var.name} is {var.dtype}, not an integer")
    return E.IntImm(var.dtype, int(value))


def specialize(func: PrimFunc, values: dict) -> PrimFunc:
    """``func`` with each variable of ``values`` (a scalar parameter or a size variable
    of a parameter buffer) replaced by its value (an int or a PrimExpr of the same
    type); see the module docstring. Unknown variables are an ArgumentError."""
    if not isinstance(func, PrimFunc):
        raise ArgumentError(f"specialize takes a PrimFunc, not {type(func).__name__}")
    free = _free_vars(func)
    mapping = {}
    for var, value in values.items():
        if not isinstance(var, E.Var) or id(var) not in free:
            names = ", ".join(sorted(v.name for v in free.values())) or "none"
            shown = var.name if isinstance(var, E.Var) else repr(var)
            raise ArgumentError(
                f"specialize: {shown} is not a scalar parameter or a buffer size of the "
                f"function (those are: {names})"
            )
        mapping[var] = _as_value(var, value)
    if not mapping:
        return func
    mutator = _Specializer(mapping)
    params = tuple(p for p in func.params if p not in mapping)
    buffer_map = {p: mutator.buffer(b) for p, b in func.buffer_map.items()}
    body = mutator.visit(func.body)
    return attrs.evolve(func, params=params, body=body, buffer_map=buffer_map)


__all__ = ["specialize"]

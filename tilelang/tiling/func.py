"""Wrapping a tiled body into a ``PrimFunc``."""

from __future__ import annotations

from tilelang.errors import ArgumentError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import StmtExprVisitor
from tilelang.tiling.view import TensorView


def make_prim_func(body: S.Stmt, params, name: str = "main", attrs=None) -> PrimFunc:
    """A ``PrimFunc`` named ``name`` running ``body`` over ``params``.

    ``params`` are, in order, root :class:`TensorView`s or ``Buffer``s (each becomes a
    ``handle`` parameter bound to its buffer) and scalar ``Var``s. Symbolic sizes in
    the buffers' shapes need no parameter: the runtime binds them from the arrays.
    Every buffer the body touches must be a parameter.
    """
    handles, buffer_map = [], {}
    for param in params:
        if isinstance(param, TensorView):
            if param.parent is not None:
                raise ArgumentError(f"parameter {param.name}: pass the root view, not a sub-view")
            param = param.buffer
        if isinstance(param, Buffer):
            handle = E.Var(param.name, "handle")
            handles.append(handle)
            buffer_map[handle] = param
        elif isinstance(param, E.Var):
            handles.append(param)
        else:
            raise ArgumentError(
                f"{name}: a parameter is a TensorView, Buffer or Var, not {param!r}"
            )
    known = {buffer.data: buffer for buffer in buffer_map.values()}
    _check_buffers(body, known, name)
    func_attrs = {"global_symbol": name, "tir.noalias": True, **(attrs or {})}
    return PrimFunc(tuple(handles), body, None, buffer_map, func_attrs)


class _BufferUses(StmtExprVisitor):
    def __init__(self):
        self.data_vars: dict[E.Var, str] = {}

    def visit_buffer_ref(self, buffer):
        self.data_vars.setdefault(buffer.data, buffer.name)

    def visit_call(self, call):
        if call.op == "tvm_access_ptr":
            self.data_vars.setdefault(call.args[1], call.args[1].name)
        self.generic_visit(call)


def _check_buffers(body, known: dict, name: str) -> None:
    uses = _BufferUses()
    uses.visit(body)
    missing = [label for data, label in uses.data_vars.items() if data not in known]
    if missing:
        raise ArgumentError(
            f"{name}: the body uses buffers that are not parameters: {', '.join(missing)}"
        )

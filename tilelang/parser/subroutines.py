"""Calls between the functions of one ``@I.ir_module`` class (TVM's GlobalVar calls).

Inside ``class Module:``, ``Module.f`` names the module's function ``f`` (so does
``cls.f`` after ``cls = Module``), and ``Module.f(x, y)`` is a call of it: the
intrinsic ``call_tir`` whose first argument is the callee's name, typed by the
callee's result (``-> T.float32``; no result is a void call, spelled ``handle``).
TVM's spelling ``T.call_tir(Module.f, x, y)`` means the same. Every function of the
class is known before any is built, so a function may call one defined after it.
"""

from __future__ import annotations

import attrs
from lark import Tree

from tilelang.ir import op as ops
from tilelang.ir.dtype import DataType


@attrs.frozen
class FunctionRef:
    """``Module.f``: a function of the module being parsed, with its result type and
    parameter count (to check calls)."""

    name: str
    ret_type: DataType | None
    num_params: int

    def __repr__(self):
        return f"function {self.name}"


@attrs.frozen
class ModuleRef:
    """The ``@I.ir_module`` class's own name, inside its functions."""

    name: str
    functions: dict  # name -> FunctionRef

    def __repr__(self):
        return f"module {self.name}"


def scan_module(name: str, members, result_type) -> ModuleRef:
    """The functions of a module class's ``@T.prim_func`` members (``funcdef`` trees);
    ``result_type(tree)`` reads a ``-> T.float32`` annotation."""
    functions = {}
    for funcdef in members:
        func_name, parameters, returns, _suite = funcdef.children
        count = sum(1 for p in (parameters.children if parameters is not None else ()) if p)
        ref = FunctionRef(str(func_name), result_type(returns), count)
        functions[ref.name] = ref
    return ModuleRef(name, functions)


def module_member(ctx, module: ModuleRef, name: str, tree):
    ref = module.functions.get(name)
    if ref is None:
        known = ", ".join(sorted(module.functions)) or "none"
        raise ctx.error(tree, f"module {module.name} has no function {name} (it has: {known})")
    return ref


def call_subroutine(ctx, ref: FunctionRef, tree, arg_trees, kwargs):
    """``Module.f(args)``: a ``call_tir`` of ``f`` with the arguments' values."""
    if kwargs:
        raise ctx.error(tree, f"a call of {ref.name} takes positional arguments only")
    if len(arg_trees) != ref.num_params:
        raise ctx.error(
            tree,
            f"{ref.name} takes {ref.num_params} argument{'s' if ref.num_params != 1 else ''}, "
            f"got {len(arg_trees)}",
        )
    args = [ctx.exprs.expr(a) for a in arg_trees]
    return ctx.guard(tree, make_call, ref, args, ctx.span(tree))


def make_call(ref: FunctionRef, args, span=None):
    dtype = ref.ret_type if ref.ret_type is not None else "handle"
    return ops.call_tir(ref.name, dtype, *args, span=span)


def is_prim_funcdef(member, is_prim_func) -> bool:
    """A class member that is a decorated ``def`` with ``@T.prim_func``."""
    return (
        isinstance(member, Tree)
        and member.data == "decorated"
        and member.children[-1].data == "funcdef"
        and is_prim_func(member.children[:-1])
    )

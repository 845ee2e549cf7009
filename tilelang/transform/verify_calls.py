"""What the backends need of calls between a module's functions (``call_tir``, TVM's
GlobalVar calls): the callee is a PrimFunc of the same module, returns nothing, takes
no size arguments of its own (symbolic buffer shapes), and gets one argument per
parameter: a pointer (``A.data``) for a buffer parameter, a value of the parameter's
type for a scalar one. Anything else is a :class:`BuildError` naming both functions.
"""

from __future__ import annotations

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import post_order_visit


def module_calls(func) -> list[E.Call]:
    """The ``call_tir`` calls in ``func``'s body, in order."""
    found = []

    def visit(node):
        if isinstance(node, E.Call) and node.op == "call_tir":
            found.append(node)

    post_order_visit(func.body, visit)
    return found


def check_module_calls(functions: dict) -> None:
    """Raise BuildError for the first call between ``functions`` (name -> function)
    that a backend cannot make."""
    for caller_name, caller in functions.items():
        if not isinstance(caller, PrimFunc):
            continue
        for call in module_calls(caller):
            _check_call(caller_name, call, functions)


def _check_call(caller_name: str, call: E.Call, functions: dict) -> None:
    name = call.args[0].value if isinstance(call.args[0], E.StringImm) else None
    callee = functions.get(name)

    def fail(reason: str):
        return BuildError(f"function {caller_name!r} calls {name!r}: {reason}")

    if not isinstance(callee, PrimFunc):
        raise fail("the module has no such PrimFunc")
    if callee.ret_type is not None:
        raise fail("functions that return a value cannot be built (only calls of void ones)")
    if callee.attrs.get("tl.size_vars"):
        raise fail("the callee has symbolic buffer sizes, which a call cannot pass")
    args = call.args[1:]
    if len(args) != len(callee.params):
        raise fail(f"{len(args)} arguments for {len(callee.params)} parameters")
    for param, arg in zip(callee.params, args):
        if param in callee.buffer_map:
            if not (isinstance(arg, E.Var) and arg.dtype.is_handle()):
                raise fail(f"parameter {param.name} is a buffer: pass a pointer such as A.data")
        elif arg.dtype != param.dtype:
            raise fail(f"parameter {param.name} is {param.dtype}, the argument {arg.dtype}")

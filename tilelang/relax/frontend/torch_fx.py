"""Importing a PyTorch model traced by ``torch.fx`` (the MLC course's ``from_fx``).

:func:`from_fx` walks the nodes of a ``torch.fx.GraphModule`` in order and builds one
graph function ``main`` with a :class:`~tilelang.relax.BlockBuilder`:

- ``placeholder`` nodes become the function's parameters, with the shapes given;
- ``get_attr`` nodes (parameters and buffers read directly) become constants;
- ``call_function`` nodes are converted by ``call_function_map[node.target]`` and
  ``call_method`` nodes by ``call_function_map[method_name]`` (a string key), both
  called as ``fn(bb, node_map, node)``;
- ``call_module`` nodes are converted by ``call_module_map[type(module)]``, called as
  ``fn(bb, node_map, node, module)``;
- ``output`` returns its value.

A converter reads its inputs as ``node_map[node.args[i]]`` (graph values of earlier
nodes) and returns the graph value of ``node``, usually ``bb.emit_te(...)`` of a
tensor-expression operator from :mod:`tilelang.relax.frontend.ops`; module weights
become constants through :func:`map_param`. The default maps
(:func:`default_call_function_map`, :func:`default_call_module_map`) cover
``nn.Linear``, ``nn.ReLU``, ``torch.relu``, ``torch.add`` / ``+``, ``torch.sub`` /
``-``, ``torch.mul`` / ``*`` and ``torch.matmul`` / ``@``; maps passed in extend and
override them.

torch is imported only when these functions run, so tilelang does not depend on it
(``pip install tilelang[torch]``).
"""

from __future__ import annotations

import operator

import numpy as np

from tilelang.errors import ArgumentError
from tilelang.ir import Var as SizeVar
from tilelang.relax.block_builder import BlockBuilder
from tilelang.relax.expr import Constant, Expr, const
from tilelang.relax.expr import Var as RVar
from tilelang.relax.frontend import ops
from tilelang.relax.struct_info import TensorStructInfo


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - exercised only without torch
        raise ArgumentError(
            "from_fx needs PyTorch: pip install torch (or tilelang[torch])"
        ) from None
    return torch


def map_param(param) -> Constant:
    """A ``torch`` tensor (an ``nn.Parameter`` or buffer) as a bound constant."""
    return const(np.ascontiguousarray(param.detach().cpu().numpy()))


def fetch_attr(fx_mod, target: str):
    """The attribute ``target`` (a dotted path such as ``"fc1.weight"``) of ``fx_mod``."""
    value = fx_mod
    for i, atom in enumerate(target.split(".")):
        if not hasattr(value, atom):
            path = ".".join(target.split(".")[:i])
            raise ArgumentError(f"from_fx: no attribute {target!r} ({path or 'module'!r})")
        value = getattr(value, atom)
    return value


def _arg(node_map: dict, value):
    """The graph value of an argument: earlier nodes map to graph values; numbers
    pass through."""
    torch = _torch()
    if isinstance(value, torch.fx.Node):
        return node_map[value]
    return value


def _reject_kwargs(node, allowed: dict) -> None:
    for key, value in node.kwargs.items():
        if key not in allowed or allowed[key] != value:
            raise ArgumentError(f"from_fx: {node.name}: keyword {key}={value!r} is not supported")


def _binary(te_op, name: str):
    def convert(bb: BlockBuilder, node_map: dict, node):
        _reject_kwargs(node, {"alpha": 1})
        a, b = (_arg(node_map, x) for x in node.args[:2])
        if not any(isinstance(x, Expr) for x in (a, b)):
            raise ArgumentError(f"from_fx: {node.name}: {name} of two numbers")
        return bb.emit_te(te_op, a, b, primfunc_name_hint=name)

    convert.__name__ = f"map_{name}"
    return convert


map_add = _binary(ops.add, "add")
map_sub = _binary(ops.subtract, "subtract")
map_mul = _binary(ops.multiply, "multiply")


def map_matmul(bb: BlockBuilder, node_map: dict, node):
    """``torch.matmul(a, b)`` / ``a @ b``."""
    a, b = (_arg(node_map, x) for x in node.args[:2])
    return bb.emit_te(ops.matmul, a, b, primfunc_name_hint="matmul")


def map_relu(bb: BlockBuilder, node_map: dict, node):
    """``torch.relu(x)`` / ``F.relu(x)`` / ``x.relu()``."""
    _reject_kwargs(node, {"inplace": False})
    return bb.emit_te(ops.relu, _arg(node_map, node.args[0]), primfunc_name_hint="relu")


def map_nn_linear(bb: BlockBuilder, node_map: dict, node, module):
    """``nn.Linear``: ``x @ weight.T + bias`` with the weights as constants."""
    x = _arg(node_map, node.args[0])
    weight = map_param(module.weight)
    if module.bias is None:
        return bb.emit_te(ops.linear, x, weight, primfunc_name_hint="linear")
    return bb.emit_te(ops.linear, x, weight, map_param(module.bias), primfunc_name_hint="linear")


def map_nn_relu(bb: BlockBuilder, node_map: dict, node, module):
    """``nn.ReLU``."""
    return bb.emit_te(ops.relu, _arg(node_map, node.args[0]), primfunc_name_hint="relu")


def default_call_function_map() -> dict:
    """Converters of ``call_function`` targets and ``call_method`` names."""
    torch = _torch()
    return {
        torch.relu: map_relu,
        torch.nn.functional.relu: map_relu,
        "relu": map_relu,
        torch.add: map_add,
        operator.add: map_add,
        "add": map_add,
        torch.sub: map_sub,
        operator.sub: map_sub,
        "sub": map_sub,
        torch.mul: map_mul,
        operator.mul: map_mul,
        "mul": map_mul,
        torch.matmul: map_matmul,
        operator.matmul: map_matmul,
        "matmul": map_matmul,
    }


def default_call_module_map() -> dict:
    """Converters of ``call_module`` nodes, by module class."""
    torch = _torch()
    return {torch.nn.Linear: map_nn_linear, torch.nn.ReLU: map_nn_relu}


def _struct_info(shape, dtype: str, sizes: dict) -> TensorStructInfo:
    """A tensor annotation; a string in ``shape`` is a symbolic size (one variable
    per name, shared by all inputs)."""
    try:
        dims = list(shape)
    except TypeError:
        raise ArgumentError(f"from_fx: an input shape is a tuple, got {shape!r}") from None
    for i, dim in enumerate(dims):
        if isinstance(dim, str):
            dims[i] = sizes.setdefault(dim, SizeVar(dim, "int64"))
        elif not isinstance(dim, int) or isinstance(dim, bool) or dim < 0:
            raise ArgumentError(f"from_fx: input size {dim!r} is no size (an int or a name)")
    return TensorStructInfo(tuple(dims), dtype)


def from_fx(
    fx_mod,
    input_shapes,
    call_function_map: dict | None = None,
    call_module_map: dict | None = None,
    dtype: str = "float32",
):
    """The IRModule of the ``torch.fx.GraphModule`` ``fx_mod``: a graph function
    ``main`` taking one tensor of ``dtype`` per placeholder, of the shapes
    ``input_shapes`` (in placeholder order), and the prim_funcs it calls. See the
    module docstring for the maps; unmapped operations are an
    :class:`~tilelang.errors.ArgumentError` naming the map to extend."""
    torch = _torch()
    if not isinstance(fx_mod, torch.fx.GraphModule):
        raise ArgumentError(
            f"from_fx takes a torch.fx.GraphModule (torch.fx.symbolic_trace(model)), "
            f"not {type(fx_mod).__name__}"
        )
    function_map = {**default_call_function_map(), **(call_function_map or {})}
    module_map = {**default_call_module_map(), **(call_module_map or {})}
    input_shapes = list(input_shapes)
    placeholders = [n for n in fx_mod.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(input_shapes):
        names = ", ".join(n.target for n in placeholders)
        raise ArgumentError(
            f"from_fx: the graph has {len(placeholders)} inputs ({names}) but "
            f"{len(input_shapes)} input shapes were given"
        )
    named_modules = dict(fx_mod.named_modules())
    node_map: dict = {}
    sizes: dict = {}
    params: list = []
    output = None
    bb = BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            for node in fx_mod.graph.nodes:
                if node.op == "placeholder":
                    sinfo = _struct_info(input_shapes[len(params)], dtype, sizes)
                    params.append(RVar(node.target, sinfo))
                    node_map[node] = params[-1]
                elif node.op == "get_attr":
                    node_map[node] = map_param(fetch_attr(fx_mod, node.target))
                elif node.op in ("call_function", "call_method"):
                    convert = function_map.get(node.target)
                    if convert is None:
                        raise ArgumentError(
                            f"from_fx: {node.op} {_describe(node.target)} (node {node.name}) "
                            f"has no converter; add it to call_function_map"
                        )
                    node_map[node] = _checked(convert(bb, node_map, node), node)
                elif node.op == "call_module":
                    module = named_modules[node.target]
                    convert = module_map.get(type(module))
                    if convert is None:
                        raise ArgumentError(
                            f"from_fx: module {node.target} ({type(module).__name__}) has no "
                            f"converter; add its class to call_module_map"
                        )
                    node_map[node] = _checked(convert(bb, node_map, node, module), node)
                elif node.op == "output":
                    value = node.args[0]
                    if not isinstance(value, torch.fx.Node):
                        raise ArgumentError(
                            f"from_fx: the model must return one tensor, not {value!r}"
                        )
                    output = bb.emit_output(node_map[value])
        bb.emit_func_output(output, params)
    return bb.get()


def _checked(value, node):
    if not isinstance(value, Expr):
        raise ArgumentError(
            f"from_fx: the converter of node {node.name} returned {value!r}, not a graph value"
        )
    return value


def _describe(target) -> str:
    if isinstance(target, str):
        return repr(target)
    module = getattr(target, "__module__", None) or ""
    return f"{module}.{getattr(target, '__name__', target)}".lstrip(".")


__all__ = [
    "from_fx", "map_param", "fetch_attr", "default_call_function_map",
    "default_call_module_map", "map_add", "map_sub", "map_mul", "map_matmul", "map_relu",
    "map_nn_linear", "map_nn_relu",
]  # fmt: skip

"""Importers of models from other frameworks into graph-level IRModules.

``from_fx(fx_module, input_shapes, call_function_map, call_module_map)`` converts a
PyTorch model traced by ``torch.fx`` (see :mod:`tilelang.relax.frontend.torch_fx`);
:mod:`tilelang.relax.frontend.ops` holds the tensor-expression operators the
converters emit. Importing this package does not import torch.
"""

from tilelang.relax.frontend import ops
from tilelang.relax.frontend.torch_fx import (
    default_call_function_map,
    default_call_module_map,
    fetch_attr,
    from_fx,
    map_param,
)

__all__ = [
    "ops", "from_fx", "map_param", "fetch_attr", "default_call_function_map",
    "default_call_module_map",
]  # fmt: skip

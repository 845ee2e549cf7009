"""Tensor operators as tensor expressions (TVM's ``topi``).

Each operator takes :class:`tilelang.te.Tensor` s and returns the ``te.Tensor`` that
computes the result, so it composes with other tensor expressions, becomes a prim_func
through ``te.create_prim_func`` and is what ``BlockBuilder.emit_te`` takes::

    from tilelang import relax, topi
    lv = bb.emit_te(topi.nn.dense, x, w)      # prim_func "dense", block "T_matmul_NT"
    out = bb.emit_te(topi.nn.relu, lv)

- :mod:`~tilelang.topi.broadcast`: ``add``, ``subtract``, ``multiply``, ``divide``,
  ``maximum``, ``minimum`` with NumPy broadcasting
- :mod:`~tilelang.topi.math`: ``exp``, ``log``, ``sqrt``, ``tanh``, ``sigmoid`` ...
- :mod:`~tilelang.topi.transform`: ``matmul``, ``transpose``, ``reshape``
- :mod:`~tilelang.topi.nn`: ``relu``, ``dense``, ``bias_add``, ``batch_matmul``,
  ``softmax``, ``log_softmax``
"""

from tilelang.topi import nn
from tilelang.topi.broadcast import add, divide, maximum, minimum, multiply, subtract
from tilelang.topi.math import abs, cast, exp, log, negative, rsqrt, sigmoid, sqrt, tanh
from tilelang.topi.transform import matmul, reshape, transpose

__all__ = [
    "nn", "add", "subtract", "multiply", "divide", "maximum", "minimum", "abs", "cast",
    "exp", "log", "negative", "rsqrt", "sigmoid", "sqrt", "tanh", "matmul", "reshape",
    "transpose",
]  # fmt: skip

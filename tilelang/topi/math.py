"""Element-wise unary operators (TVM's ``topi.exp``, ``topi.sigmoid`` ...): each maps
a ``te.Tensor`` to a tensor of the same shape and dtype."""

from __future__ import annotations

from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import op as tir_op


def _unary(intrinsic, name: str):
    def compute(x: te.Tensor) -> te.Tensor:
        if not isinstance(x, te.Tensor):
            raise ArgumentError(f"topi.{name} takes a te.Tensor, not {type(x).__name__}")
        return te.compute(x.shape, lambda *i: intrinsic(x(*i)), name="compute")

    compute.__name__ = name
    compute.__doc__ = f"``{name}`` of every element."
    return compute


exp = _unary(tir_op.exp, "exp")
log = _unary(tir_op.log, "log")
sqrt = _unary(tir_op.sqrt, "sqrt")
rsqrt = _unary(tir_op.rsqrt, "rsqrt")
tanh = _unary(tir_op.tanh, "tanh")
sigmoid = _unary(tir_op.sigmoid, "sigmoid")
abs = _unary(tir_op.abs, "abs")  # noqa: A001 - TVM's name
negative = _unary(lambda v: -v, "negative")


def cast(x: te.Tensor, dtype) -> te.Tensor:
    """Every element converted to ``dtype``."""
    return te.compute(x.shape, lambda *i: x(*i).astype(dtype), name="T_cast")


__all__ = ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "abs", "negative", "cast"]

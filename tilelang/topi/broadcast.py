"""Element-wise binary operators with NumPy broadcasting (TVM's ``topi.add`` ...).

Each takes two operands, :class:`tilelang.te.Tensor` s or Python numbers (at least one
a tensor), and returns a ``te.Tensor`` of the broadcast shape. Sizes may be symbolic;
two sizes that must agree must be equal integers or the same expression: a prim_func
whose sizes only agree at run time could read out of bounds, so such a pair is an
:class:`~tilelang.errors.ArgumentError` here.
"""

from __future__ import annotations

import numbers

from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import IntImm, const, structural_equal
from tilelang.ir import op as tir_op


def static_dim(dim):
    """The value of a constant size, else None."""
    if isinstance(dim, int):
        return dim
    if isinstance(dim, IntImm):
        return dim.value
    return None


def same_dim(a, b) -> bool:
    """Whether sizes ``a`` and ``b`` are provably equal."""
    sa, sb = static_dim(a), static_dim(b)
    if sa is not None or sb is not None:
        return sa == sb
    return structural_equal(a, b)


def check_same(what: str, a, b) -> None:
    if not same_dim(a, b):
        raise ArgumentError(f"{what}: sizes {a} and {b} differ (or are not provably equal)")


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    """The shape NumPy broadcasting gives operands of shapes ``a`` and ``b``."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if static_dim(da) == 1:
            out.append(db)
        elif static_dim(db) == 1 or same_dim(da, db):
            out.append(da)
        else:
            raise ArgumentError(f"cannot broadcast shapes {tuple(a)} and {tuple(b)}")
    return tuple(reversed(out))


def _element(operand, index: tuple, dtype):
    """``operand`` at the broadcast ``index`` (a number is the same everywhere)."""
    if not isinstance(operand, te.Tensor):
        return const(operand, dtype)
    skip = len(index) - operand.ndim
    picked = [0 if static_dim(d) == 1 else i for d, i in zip(operand.shape, index[skip:])]
    return operand(*picked)


def elementwise(combine, name: str, out_name: str):
    """The broadcasting operator ``name`` computing ``combine(a, b)``; its tensor (and
    the prim_func's block) is called ``out_name``."""

    def compute(A, B) -> te.Tensor:
        tensors = [x for x in (A, B) if isinstance(x, te.Tensor)]
        for x in (A, B):
            if not isinstance(x, (te.Tensor, numbers.Number)) or isinstance(x, bool):
                raise ArgumentError(f"{name}: operands are tensors or numbers, got {x!r}")
        if not tensors:
            raise ArgumentError(f"{name}: at least one operand must be a tensor")
        if len(tensors) == 2 and str(A.dtype) != str(B.dtype):
            raise ArgumentError(f"{name}: dtypes {A.dtype} and {B.dtype} differ")
        dtype = tensors[0].dtype
        shape = tensors[0].shape if len(tensors) == 1 else broadcast_shape(A.shape, B.shape)
        return te.compute(
            shape,
            lambda *i: combine(_element(A, i, dtype), _element(B, i, dtype)),
            name=out_name,
        )

    compute.__name__ = name
    compute.__doc__ = f"Element-wise ``{name}`` with NumPy broadcasting (numbers too)."
    return compute


add = elementwise(lambda x, y: x + y, "add", "T_add")
subtract = elementwise(lambda x, y: x - y, "subtract", "T_subtract")
multiply = elementwise(lambda x, y: x * y, "multiply", "T_multiply")
divide = elementwise(lambda x, y: x / y, "divide", "T_divide")
maximum = elementwise(tir_op.max, "maximum", "T_maximum")
minimum = elementwise(tir_op.min, "minimum", "T_minimum")

__all__ = [
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "broadcast_shape",
    "elementwise", "static_dim", "same_dim", "check_same",
]  # fmt: skip

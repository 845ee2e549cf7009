"""Tensor expressions (TVM's ``te``): describe a computation element by element and
turn it into a PrimFunc.

>>> from tilelang import te
>>> A = te.placeholder((128, 128), "float32", name="A")
>>> B = te.placeholder((128, 128), "float32", name="B")
>>> k = te.reduce_axis((0, 128), "k")
>>> C = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> func = te.create_prim_func([A, B, C])
"""

from tilelang.te.create_prim_func import create_prim_func
from tilelang.te.reduce import CommReducer, Reduce, comm_reducer, max, min, sum
from tilelang.te.tensor import (
    ComputeOp,
    PlaceholderOp,
    Tensor,
    compute,
    placeholder,
    reduce_axis,
    size_var,
    var,
)

__all__ = [
    "create_prim_func", "CommReducer", "Reduce", "comm_reducer", "max", "min", "sum",
    "ComputeOp", "PlaceholderOp", "Tensor", "compute", "placeholder", "reduce_axis",
    "size_var", "var",
]  # fmt: skip

"""Shape operators and matrix products (TVM's ``topi.matmul``, ``topi.transpose``,
``topi.reshape``)."""

from __future__ import annotations

import math

from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import IntImm
from tilelang.topi.broadcast import check_same, static_dim


def matmul(a: te.Tensor, b: te.Tensor, bias: te.Tensor | None = None, out_dtype=None,
           transpose_a: bool = False, transpose_b: bool = False) -> te.Tensor:  # fmt: skip
    """The 2-D product ``op(a) @ op(b)`` (``op`` transposes when asked), plus ``bias``
    broadcast along the rows when given. Its tensor is ``T_matmul_NN`` (``_NT`` when
    ``b`` is transposed, and so on), as TVM names it."""
    if a.ndim != 2 or b.ndim != 2:
        raise ArgumentError(f"topi.matmul takes 2-D tensors, got ranks {a.ndim} and {b.ndim}")
    n, k = (a.shape[1], a.shape[0]) if transpose_a else a.shape
    kb, m = (b.shape[1], b.shape[0]) if transpose_b else b.shape
    check_same("topi.matmul: the reduced dimension", k, kb)
    out_dtype = out_dtype or a.dtype
    r = te.reduce_axis((0, k), "k")

    def element(i, j):
        left = a[r, i] if transpose_a else a[i, r]
        right = b[j, r] if transpose_b else b[r, j]
        return te.sum(left.astype(out_dtype) * right.astype(out_dtype), axis=r)

    name = "T_matmul_" + ("T" if transpose_a else "N") + ("T" if transpose_b else "N")
    out = te.compute((n, m), element, name=name)
    if bias is None:
        return out
    if bias.ndim != 1:
        raise ArgumentError(f"topi.matmul: the bias must have rank 1, got {bias.ndim}")
    check_same("topi.matmul: the bias", bias.shape[0], m)
    return te.compute((n, m), lambda i, j: out[i, j] + bias[j].astype(out_dtype), name="T_add")


def transpose(x: te.Tensor, axes=None) -> te.Tensor:
    """``x`` with its dimensions permuted by ``axes`` (default: reversed)."""
    axes = list(range(x.ndim))[::-1] if axes is None else [a % x.ndim for a in axes]
    if sorted(axes) != list(range(x.ndim)):
        raise ArgumentError(f"topi.transpose: {axes} is no permutation of {x.ndim} axes")
    shape = tuple(x.shape[a] for a in axes)

    def element(*i):
        index = [None] * x.ndim
        for out_axis, in_axis in enumerate(axes):
            index[in_axis] = i[out_axis]
        return x(*index)

    return te.compute(shape, element, name="T_transpose")


def reshape(x: te.Tensor, newshape) -> te.Tensor:
    """``x`` with the constant shape ``newshape`` (one entry may be -1), in row-major
    order as NumPy reshapes."""
    sizes = [static_dim(d) for d in x.shape]
    if any(s is None for s in sizes):
        raise ArgumentError("topi.reshape needs a tensor of constant shape")
    total = math.prod(sizes)
    newshape = [int(d.value if isinstance(d, IntImm) else d) for d in newshape]
    if newshape.count(-1) > 1:
        raise ArgumentError("topi.reshape: at most one size may be -1")
    if -1 in newshape:
        known = math.prod(d for d in newshape if d != -1)
        newshape[newshape.index(-1)] = total // known if known else 0
    if math.prod(newshape) != total:
        raise ArgumentError(f"topi.reshape: cannot reshape {tuple(sizes)} into {tuple(newshape)}")

    def element(*i):
        flat = 0
        for index, extent in zip(i, newshape):
            flat = flat * extent + index
        index = []
        for extent in reversed(sizes):
            index.append(flat % extent)
            flat = flat // extent
        return x(*reversed(index))

    return te.compute(tuple(newshape), element, name="T_reshape")


__all__ = ["matmul", "transpose", "reshape"]

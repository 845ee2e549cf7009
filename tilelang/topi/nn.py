"""Neural-network operators (TVM's ``topi.nn``): ``relu``, ``dense``, ``bias_add``,
``batch_matmul``, ``softmax`` and ``log_softmax`` as tensor expressions, ready for
``BlockBuilder.emit_te`` or ``te.create_prim_func``."""

from __future__ import annotations

from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import const
from tilelang.ir import op as tir_op
from tilelang.topi.broadcast import check_same
from tilelang.topi.transform import matmul


def relu(x: te.Tensor) -> te.Tensor:
    """``max(x, 0)`` element-wise."""
    return te.compute(x.shape, lambda *i: tir_op.max(x(*i), const(0, x.dtype)), name="compute")


def dense(data: te.Tensor, weight: te.Tensor, bias: te.Tensor | None = None,
          out_dtype=None) -> te.Tensor:  # fmt: skip
    """``data @ weight.T (+ bias)``: ``data`` is ``(batch, in)``, ``weight``
    ``(out, in)``, ``bias`` ``(out,)`` (TVM's ``T_matmul_NT``)."""
    return matmul(data, weight, bias, out_dtype, transpose_b=True)


def bias_add(data: te.Tensor, bias: te.Tensor, axis: int = 1) -> te.Tensor:
    """``data + bias`` with the 1-D ``bias`` along ``axis`` of ``data``."""
    axis = axis % data.ndim
    if bias.ndim != 1:
        raise ArgumentError(f"topi.nn.bias_add: the bias must have rank 1, got {bias.ndim}")
    check_same("topi.nn.bias_add", bias.shape[0], data.shape[axis])
    return te.compute(data.shape, lambda *i: data(*i) + bias[i[axis]], name="T_add")


def batch_matmul(x: te.Tensor, y: te.Tensor, transpose_a: bool = False,
                 transpose_b: bool = True, out_dtype=None) -> te.Tensor:  # fmt: skip
    """Batched product of ``(b, n, k)`` and ``(b, m, k)`` (``transpose_b``, TVM's
    default) or ``(b, k, m)``."""
    if x.ndim != 3 or y.ndim != 3:
        raise ArgumentError(f"batch_matmul takes 3-D tensors, got ranks {x.ndim}, {y.ndim}")
    check_same("batch_matmul: the batch", x.shape[0], y.shape[0])
    n, k = (x.shape[2], x.shape[1]) if transpose_a else (x.shape[1], x.shape[2])
    ky, m = (y.shape[2], y.shape[1]) if transpose_b else (y.shape[1], y.shape[2])
    check_same("batch_matmul: the reduced dimension", k, ky)
    out_dtype = out_dtype or x.dtype
    r = te.reduce_axis((0, k), "k")

    def element(b, i, j):
        left = x[b, r, i] if transpose_a else x[b, i, r]
        right = y[b, j, r] if transpose_b else y[b, r, j]
        return te.sum(left.astype(out_dtype) * right.astype(out_dtype), axis=r)

    name = "T_batch_matmul_" + ("T" if transpose_a else "N") + ("T" if transpose_b else "N")
    return te.compute((x.shape[0], n, m), element, name=name)


def _reduced(x: te.Tensor, axis: int):
    """``(axis, shape without it, insert(index, k), drop(index))`` for a reduction along
    ``axis``."""
    if x.ndim < 2:
        raise ArgumentError("softmax takes a tensor of rank 2 or more")
    axis = axis % x.ndim
    shape = tuple(d for a, d in enumerate(x.shape) if a != axis)

    def insert(index, k):
        return (*index[:axis], k, *index[axis:])

    def drop(index):
        return (*index[:axis], *index[axis + 1 :])

    return axis, shape, insert, drop


def _shifted_exp(x: te.Tensor, axis: int):
    """``(exp(x - max), sum of it)`` along ``axis``, the numerically safe softmax parts."""
    axis, shape, insert, drop = _reduced(x, axis)
    k1 = te.reduce_axis((0, x.shape[axis]), "k")
    maxelem = te.compute(
        shape, lambda *i: te.max(x(*insert(i, k1)), axis=k1), name="T_softmax_maxelem"
    )
    exp = te.compute(
        x.shape, lambda *i: tir_op.exp(x(*i) - maxelem(*drop(i))), name="T_softmax_exp"
    )
    k2 = te.reduce_axis((0, x.shape[axis]), "k")
    expsum = te.compute(
        shape, lambda *i: te.sum(exp(*insert(i, k2)), axis=k2), name="T_softmax_expsum"
    )
    return exp, expsum, maxelem, drop


def softmax(x: te.Tensor, axis: int = -1) -> te.Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis`` (computed from ``x - max`` so that large
    inputs do not overflow)."""
    exp, expsum, _, drop = _shifted_exp(x, axis)
    return te.compute(x.shape, lambda *i: exp(*i) / expsum(*drop(i)), name="T_softmax_norm")


def log_softmax(x: te.Tensor, axis: int = -1) -> te.Tensor:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    _, expsum, maxelem, drop = _shifted_exp(x, axis)
    return te.compute(
        x.shape,
        lambda *i: x(*i) - maxelem(*drop(i)) - tir_op.log(expsum(*drop(i))),
        name="T_log_softmax",
    )


__all__ = ["relu", "dense", "bias_add", "batch_matmul", "softmax", "log_softmax"]

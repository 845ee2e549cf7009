"""Tensor-expression operators that imported models are built from (a small part of
TVM's ``topi``, which :mod:`tilelang.topi` provides in full): ``matmul``, ``linear``,
``relu`` and NumPy-broadcasting element-wise ``add`` / ``subtract`` / ``multiply``
(:mod:`tilelang.topi.broadcast`; here their tensors keep the name ``C``).

Each takes :class:`tilelang.te.Tensor` s (element-wise operators also Python
numbers) and returns one ``te.Tensor``, so it can be passed to
``BlockBuilder.emit_te``. Sizes may be symbolic; two sizes that must agree (the
reduced dimension of a matmul, broadcast dimensions) must be equal integers or the
same expression: a prim_func whose sizes only agree at run time could read out of
bounds, so such a pair is an :class:`~tilelang.errors.ArgumentError` here.
"""

from __future__ import annotations

from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import const
from tilelang.topi.broadcast import broadcast_shape, elementwise
from tilelang.topi.broadcast import check_same as _check_same


def matmul(A: te.Tensor, B: te.Tensor, name: str = "matmul") -> te.Tensor:
    """``A @ B`` for ``A`` of shape ``(..., n, k)`` and ``B`` of shape ``(k, m)``."""
    if A.ndim < 2 or B.ndim != 2:
        raise ArgumentError(f"matmul takes (..., n, k) @ (k, m); got ranks {A.ndim} and {B.ndim}")
    _check_same("matmul: the reduced dimension", A.shape[-1], B.shape[0])
    k = te.reduce_axis((0, A.shape[-1]), "k")
    return te.compute(
        (*A.shape[:-1], B.shape[1]),
        lambda *i: te.sum(A[(*i[:-1], k)] * B[k, i[-1]], axis=k),
        name=name,
    )


def linear(X: te.Tensor, W: te.Tensor, B: te.Tensor | None = None) -> te.Tensor:
    """``X @ W.T + B`` (``torch.nn.Linear``): ``X`` is ``(..., in)``, ``W``
    ``(out, in)``, ``B`` ``(out,)`` or None. With a bias the product is an
    intermediate tensor (an ``alloc_buffer`` of the prim_func)."""
    if X.ndim < 1 or W.ndim != 2:
        raise ArgumentError(f"linear takes (..., in) and (out, in); got ranks {X.ndim}, {W.ndim}")
    _check_same("linear: the input features", X.shape[-1], W.shape[1])
    k = te.reduce_axis((0, X.shape[-1]), "k")
    Y = te.compute(
        (*X.shape[:-1], W.shape[0]),
        lambda *i: te.sum(X[(*i[:-1], k)] * W[i[-1], k], axis=k),
        name="Y" if B is not None else "Z",
    )
    if B is None:
        return Y
    if B.ndim != 1:
        raise ArgumentError(f"linear: the bias must have rank 1, got {B.ndim}")
    _check_same("linear: the bias", B.shape[0], W.shape[0])
    return te.compute(Y.shape, lambda *i: Y(*i) + B[i[-1]], name="Z")


def relu(X: te.Tensor) -> te.Tensor:
    """``max(X, 0)`` element-wise."""
    return te.compute(X.shape, lambda *i: te.max(X(*i), const(0, X.dtype)), name="Y")


add = elementwise(lambda x, y: x + y, "add", "C")
subtract = elementwise(lambda x, y: x - y, "subtract", "C")
multiply = elementwise(lambda x, y: x * y, "multiply", "C")

__all__ = ["matmul", "linear", "relu", "broadcast_shape", "add", "subtract", "multiply"]

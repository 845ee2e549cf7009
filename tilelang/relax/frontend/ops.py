"""Tensor-expression operators that imported models are built from (a small part of
TVM's ``topi``): ``matmul``, ``linear``, ``relu`` and NumPy-broadcasting
element-wise ``add`` / ``subtract`` / ``multiply``.

Each takes :class:`tilelang.te.Tensor` s (element-wise operators also Python
numbers) and returns one ``te.Tensor``, so it can be passed to
``BlockBuilder.emit_te``. Sizes may be symbolic; two sizes that must agree (the
reduced dimension of a matmul, broadcast dimensions) must be equal integers or the
same expression: a prim_func whose sizes only agree at run time could read out of
bounds, so such a pair is an :class:`~tilelang.errors.ArgumentError` here.
"""

from __future__ import annotations

import numbers

from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import IntImm, const, structural_equal


def _static(dim):
    """The value of a constant size, else None."""
    if isinstance(dim, int):
        return dim
    if isinstance(dim, IntImm):
        return dim.value
    return None


def _same_dim(a, b) -> bool:
    sa, sb = _static(a), _static(b)
    if sa is not None or sb is not None:
        return sa == sb
    return structural_equal(a, b)


def _check_same(what: str, a, b) -> None:
    if not _same_dim(a, b):
        raise ArgumentError(f"{what}: sizes {a} and {b} differ (or are not provably equal)")


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


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    """The shape NumPy broadcasting gives operands of shapes ``a`` and ``b``."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if _static(da) == 1:
            out.append(db)
        elif _static(db) == 1 or _same_dim(da, db):
            out.append(da)
        else:
            raise ArgumentError(f"cannot broadcast shapes {tuple(a)} and {tuple(b)}")
    return tuple(reversed(out))


def _element(operand, index: tuple, dtype):
    """``operand`` at the broadcast ``index`` (a number is the same everywhere)."""
    if not isinstance(operand, te.Tensor):
        return const(operand, dtype)
    skip = len(index) - operand.ndim
    picked = [0 if _static(d) == 1 else i for d, i in zip(operand.shape, index[skip:])]
    return operand(*picked)


def _elementwise(combine, name: str):
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
            name="C",
        )

    compute.__name__ = name
    compute.__doc__ = f"Element-wise ``{name}`` with NumPy broadcasting (numbers too)."
    return compute


add = _elementwise(lambda x, y: x + y, "add")
subtract = _elementwise(lambda x, y: x - y, "subtract")
multiply = _elementwise(lambda x, y: x * y, "multiply")

__all__ = ["matmul", "linear", "relu", "broadcast_shape", "add", "subtract", "multiply"]

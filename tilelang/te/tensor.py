"""Tensors and the operations that produce them (TVM's ``te.placeholder`` /
``te.compute``).

A :class:`Tensor` is described, not computed: a placeholder is an input, a compute
tensor holds the expression of one element as a function of its indices. Each tensor
owns the :class:`~tilelang.ir.Buffer` that holds it once it becomes part of a
prim_func (see :func:`tilelang.te.create_prim_func`), and indexing a tensor
(``A[i, j]`` or ``A(i, j)``) reads that buffer.
"""

from __future__ import annotations

import inspect
from contextvars import ContextVar

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import (
    Buffer,
    BufferLoad,
    IntImm,
    IterVar,
    PrimExpr,
    Range,
    SizeVar,
    Var,
    const,
    convert,
    decl_buffer,
    post_order_visit,
)
from tilelang.ir.dtype import DataType
from tilelang.te.reduce import Reduce

# The tensors read while a compute lambda runs: te.compute records its inputs here, so
# that every load in its body can be traced back to the tensor that produces it.
_READS: ContextVar[list | None] = ContextVar("tilelang_te_reads", default=None)


def var(name: str = "v", dtype="int32") -> Var:
    """A symbolic scalar (``te.var("n")``), e.g. a size that is known at call time."""
    return Var(name, dtype)


def size_var(name: str = "n", dtype="int32") -> SizeVar:
    """A symbolic size: a variable known to be non-negative."""
    return SizeVar(name, dtype)


def reduce_axis(dom, name: str = "rv") -> IterVar:
    """A reduction iterator over ``dom`` = ``(begin, end)`` (or a Range).

    Use it as an index (``A[i, k]``) and name it in the reduction
    (``te.sum(..., axis=k)``).
    """
    if isinstance(dom, Range):
        rng = dom
    else:
        try:
            begin, end = dom
        except (TypeError, ValueError):
            raise ArgumentError(f"reduce_axis needs (begin, end), got {dom!r}") from None
        begin, end = convert(begin), convert(end)
        if begin.dtype != end.dtype and isinstance(begin, IntImm):
            begin = const(begin.value, end.dtype)  # a literal start takes the size's type
        rng = Range.from_bounds(begin, end)
    return IterVar(rng, Var(name, rng.extent.dtype), IterVar.CommReduce)


def _index(value) -> PrimExpr:
    """An index expression; an IterVar stands for its variable, as in TVM."""
    if isinstance(value, IterVar):
        return value.var
    return convert(value)


@attrs.frozen(eq=False)
class PlaceholderOp:
    """The operation of an input tensor."""

    name: str


@attrs.frozen(eq=False)
class ComputeOp:
    """``output[axis] = body`` (or a reduction over ``reduce_axis``)."""

    name: str
    axis: tuple  # IterVars of the spatial dimensions
    body: object  # a PrimExpr or a Reduce
    input_tensors: tuple  # the tensors the body reads, in first-read order

    @property
    def reduce_axis(self) -> tuple:
        return self.body.axis if isinstance(self.body, Reduce) else ()


@attrs.frozen(eq=False)
class Tensor:
    """A tensor of ``shape`` and ``dtype`` produced by ``op``."""

    shape: tuple
    dtype: DataType
    op: object
    buffer: Buffer

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices) -> BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return self(*indices)

    def __call__(self, *indices) -> BufferLoad:
        if len(indices) != len(self.shape):
            raise ArgumentError(
                f"tensor {self.name!r} has {len(self.shape)} dimensions, "
                f"indexed with {len(indices)}"
            )
        reads = _READS.get()
        if reads is not None and not any(t is self for t in reads):
            reads.append(self)
        return BufferLoad(self.buffer, tuple(_index(i) for i in indices))

    def __repr__(self) -> str:
        return f"Tensor({self.name!r}, shape={self.shape!r}, dtype={self.dtype!r})"


def _shape(shape) -> tuple:
    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    try:
        return tuple(convert(extent) for extent in shape)
    except TypeError as error:  # TIRTypeError is a TypeError
        raise ArgumentError(f"invalid tensor shape {shape!r}: {error}") from None


def placeholder(shape, dtype="float32", name: str = "placeholder") -> Tensor:
    """An input tensor: ``A = te.placeholder((m, n), "float32", name="A")``."""
    shape = _shape(shape)
    return Tensor(shape, DataType(dtype), PlaceholderOp(name), decl_buffer(shape, dtype, name))


def _axis_names(fcompute, ndim: int) -> list[str]:
    """Names for the spatial iterators, taken from the lambda's parameters
    (``lambda i, j``), or ``i0, i1, ...`` for ``lambda *i``."""
    params = list(inspect.signature(fcompute).parameters.values())
    if len(params) == 1 and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return [f"{params[0].name}{d}" for d in range(ndim)]
    positional = [p for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    if len(positional) != ndim or len(positional) != len(params):
        raise ArgumentError(
            f"te.compute: the lambda takes {len(params)} indices but the shape has {ndim} "
            "dimensions"
        )
    return [p.name for p in positional]


def compute(shape, fcompute, name: str = "compute") -> Tensor:
    """A tensor whose element at ``indices`` is ``fcompute(*indices)``.

    The body is an expression of the indices, or a reduction (``te.sum``, ``te.max``,
    ``te.min``) at the top::

        k = te.reduce_axis((0, 128), "k")
        C = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), "C")
    """
    shape = _shape(shape)
    names = _axis_names(fcompute, len(shape))
    axis = tuple(
        IterVar(Range(const(0, extent.dtype), extent), Var(n, extent.dtype), IterVar.DataPar)
        for n, extent in zip(names, shape)
    )
    reads: list = []
    token = _READS.set(reads)
    try:
        body = fcompute(*(iv.var for iv in axis))
    finally:
        _READS.reset(token)
    if not isinstance(body, Reduce):
        try:
            body = convert(body)
        except TypeError as error:
            message = f"te.compute {name!r}: the body is no expression: {error}"
            raise ArgumentError(message) from None
    _check_loads(name, body, reads)
    dtype = body.dtype
    op = ComputeOp(name, axis, body, tuple(reads))
    return Tensor(shape, dtype, op, decl_buffer(shape, dtype, name))


def _check_loads(name: str, body, reads: list) -> None:
    """Every buffer the body reads must belong to a tensor read inside the lambda."""
    known = {id(t.buffer) for t in reads}
    exprs = (body.source, body.init) if isinstance(body, Reduce) else (body,)

    def check(node):
        if isinstance(node, BufferLoad) and id(node.buffer) not in known:
            raise ArgumentError(
                f"te.compute {name!r} reads buffer {node.buffer.name!r}, which is not a "
                "tensor indexed inside its lambda"
            )

    for expr in exprs:
        if expr is not None:
            post_order_visit(expr, check)

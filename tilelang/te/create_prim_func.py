"""``te.create_prim_func``: a graph of tensors becomes an ordinary PrimFunc.

The result has the form TVM creates: one loop nest and one block per compute
tensor, in dependency order, inside the implicit root block. Block names are tensor
names, block iterators are ``T.axis.spatial`` / ``T.axis.reduce`` bound to the loop
variables, a reduction stores its initial value in ``T.init``, and tensors computed
but not passed as arguments become ``alloc_buffer``s of the root block. Reads and
writes are inferred (:func:`tilelang.analysis.infer_block_regions`), as the parser
does for printed text. So it schedules, prints and builds
like a hand-written prim_func::

    A = te.placeholder((128, 128), name="A")
    B = te.compute(A.shape, lambda i, j: te.max(A[i, j], 0), name="B")
    func = te.create_prim_func([A, B])
"""

from __future__ import annotations

from tilelang.analysis import infer_block_regions
from tilelang.errors import ArgumentError
from tilelang.ir import (
    Block,
    BlockRealize,
    BufferStore,
    For,
    ForKind,
    IterVar,
    PrimFunc,
    Var,
    const,
    seq_stmt,
    substitute,
)
from tilelang.ir.dtype import HANDLE
from tilelang.ir.op import if_then_else
from tilelang.te.reduce import Reduce
from tilelang.te.tensor import ComputeOp, PlaceholderOp, Tensor

_TRUE = const(True)


def create_prim_func(args, name: str = "main") -> PrimFunc:
    """The PrimFunc computing the compute tensors of ``args`` from its placeholders.

    ``args`` lists the function's parameters in order (inputs and outputs); every
    placeholder the computation reads must be among them.
    """
    args = list(args)
    for arg in args:
        if not isinstance(arg, Tensor):
            raise ArgumentError(f"create_prim_func takes tensors, got {type(arg).__name__}")
    order = _topological_order(args)
    intermediates = [t for t in order if not any(t is a for a in args)]
    stmts = [_loop_nest(t) for t in order]
    root = Block(
        iter_vars=(),
        reads=(),
        writes=(),
        name_hint="root",
        body=seq_stmt(*stmts),
        alloc_buffers=tuple(t.buffer for t in intermediates),
    )
    params = tuple(Var(t.name, HANDLE) for t in args)
    buffer_map = {p: t.buffer for p, t in zip(params, args)}
    return PrimFunc(
        params,
        BlockRealize((), _TRUE, root),
        buffer_map=buffer_map,
        attrs={"global_symbol": name, "tir.noalias": True},
    )


def _topological_order(args) -> list[Tensor]:
    """The compute tensors the arguments need, producers before consumers."""
    order: list[Tensor] = []
    done: set[int] = set()

    def visit(tensor: Tensor, path: tuple) -> None:
        if id(tensor) in done:
            return
        if any(t is tensor for t in path):
            raise ArgumentError(f"tensor {tensor.name!r} depends on itself")
        if isinstance(tensor.op, PlaceholderOp):
            if not any(tensor is a for a in args):
                raise ArgumentError(
                    f"placeholder {tensor.name!r} is read but is not an argument of "
                    "create_prim_func"
                )
        else:
            for source in tensor.op.input_tensors:
                visit(source, (*path, tensor))
            order.append(tensor)
        done.add(id(tensor))

    for arg in args:
        visit(arg, ())
    return order


def _loop_nest(tensor: Tensor):
    """``for`` loops over every iterator around the block that computes ``tensor``."""
    op: ComputeOp = tensor.op
    iterators = (*op.axis, *op.reduce_axis)
    loop_vars = [Var(iv.var.name, iv.var.dtype) for iv in iterators]
    block_vars = [Var("v_" + iv.var.name, iv.var.dtype) for iv in iterators]
    to_block = dict(zip((iv.var for iv in iterators), block_vars))
    spatial = tuple(to_block[iv.var] for iv in op.axis)
    iter_vars = tuple(
        IterVar(_bound(iv.dom, to_block), bv, iv.iter_type) for iv, bv in zip(iterators, block_vars)
    )

    def rebind(expr):
        return substitute(expr, to_block)

    init = None
    if isinstance(op.body, Reduce):
        reduction = op.body
        value = reduction.combine(tensor.buffer.vload(spatial))
        if reduction.where is not None:
            value = if_then_else(reduction.where, value, tensor.buffer.vload(spatial))
        body = tensor.buffer.vstore(spatial, rebind(value))
        init = BufferStore(tensor.buffer, rebind(reduction.init), spatial)
    else:
        body = tensor.buffer.vstore(spatial, rebind(op.body))
    block = Block(iter_vars=iter_vars, reads=(), writes=(), name_hint=op.name, body=body, init=init)
    block = infer_block_regions(block)  # as TVM's create_prim_func and the parser do
    stmt = BlockRealize(tuple(loop_vars), _TRUE, block)
    for iv, loop_var in reversed(list(zip(iterators, loop_vars))):
        stmt = For(loop_var, iv.dom.min, iv.dom.extent, ForKind.SERIAL, stmt)
    return stmt


def _bound(dom, to_block):
    """A domain whose bounds mention only outer sizes (never another iterator)."""
    return substitute(dom, to_block)

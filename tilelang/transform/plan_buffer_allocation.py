"""PlanAndUpdateBufferAllocationLocation: each allocation moves to where it is used.

An ``alloc_buffer`` of a block moves down to the lowest common ancestor (loop or
block) of all its accesses. When that is a loop, the loop's body is wrapped in a new
opaque block that owns the buffer. This is what lets CompactBufferAllocation shrink
the intermediate ``Y`` of a ``reverse_compute_at`` schedule to the tile one outer
iteration touches.

Buffers in a ``shared`` (or ``warp``) scope are shared by the threads of a GPU block,
so they never land directly in a ``threadIdx`` loop: when the common ancestor is one,
they stay above the thread loops (the threads' loops are then relaxed when the buffer
is compacted). When the ancestor is a serial loop nested in the thread loops (the
``k_0`` loop of a shared-memory tiled matmul), the buffer is allocated there, per
iteration, and CompactBufferAllocation relaxes the enclosing thread loops, so it
shrinks to the tile one iteration fetches.

A buffer a reduction accumulates into is never allocated inside a loop that drives
that reduction (after ``reverse_compute_at`` under a reduction loop, the consumer
shares the loop, but the partial sums must survive its iterations).
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator, StmtExprVisitor
from tilelang.ir.var_usage import uses_var
from tilelang.transform.pass_infra import prim_func_pass


def _is_shared(scope: str) -> bool:
    return scope.startswith("shared") or scope.startswith("warp")


def _is_thread_loop(node) -> bool:
    return (
        isinstance(node, S.For)
        and node.kind == S.ForKind.THREAD_BINDING
        and (node.thread_binding or "").startswith(("threadIdx", "vthread"))
    )


class _LCADetector(StmtExprVisitor):
    """For each allocated buffer, the path (outermost first) of the loops and blocks
    that contain every access."""

    def __init__(self):
        self.stack: list = []
        self.lca: dict = {}  # buffer -> list of scope nodes
        self.by_data: dict = {}  # data var -> buffer
        # buffer -> ids of loops that drive a reduction accumulating into it: the
        # buffer must outlive their iterations, so it is allocated above them
        self.reduction_loops: dict = {}

    def visit_block_realize(self, op):
        reduce_values = [
            v
            for iv, v in zip(op.block.iter_vars, op.iter_values)
            if iv.iter_type != S.IterVar.DataPar
        ]
        if reduce_values:
            loops = [
                lp
                for lp in self.stack
                if isinstance(lp, S.For) and any(uses_var(v, lp.loop_var) for v in reduce_values)
            ]
            for region in op.block.writes:
                self.reduction_loops.setdefault(region.buffer, set()).update(map(id, loops))
        self.generic_visit(op)

    def visit_for(self, op):
        self.visit(op.min)
        self.visit(op.extent)
        self.stack.append(op)
        self.visit(op.body)
        self.stack.pop()

    def visit_block(self, op):
        for buffer in op.alloc_buffers:
            self.lca[buffer] = None
            self.by_data[buffer.data] = buffer
        self.stack.append(op)
        self.generic_visit(op)
        self.stack.pop()

    def touch(self, buffer):
        if buffer not in self.lca:
            return
        known = self.lca[buffer]
        if known is None:
            self.lca[buffer] = list(self.stack)
            return
        common = 0
        for a, b in zip(known, self.stack):
            if a is not b:
                break
            common += 1
        del known[common:]

    def visit_buffer_ref(self, buffer):
        self.touch(buffer)

    def visit_var(self, var):
        buffer = self.by_data.get(var)
        if buffer is not None:
            self.touch(buffer)


class _Move(StmtExprMutator):
    def __init__(self, target_of: dict, targets: dict):
        self.target_of = target_of  # buffer -> id of the node that will allocate it
        self.targets = targets  # id(node) -> [buffers to allocate there]

    def visit_block(self, op):
        new = self.generic_visit(op)
        here = self.targets.get(id(op), [])
        keep = [b for b in op.alloc_buffers if self.target_of.get(b, id(op)) == id(op)]
        keep += [b for b in here if not any(b is a for a in keep)]
        if len(keep) == len(op.alloc_buffers) and all(
            a is b for a, b in zip(keep, op.alloc_buffers)
        ):
            return new
        return attrs.evolve(new, alloc_buffers=tuple(keep))

    def visit_for(self, op):
        new = self.generic_visit(op)
        buffers = self.targets.get(id(op))
        if not buffers:
            return new
        block = S.Block((), (), (), "", new.body, alloc_buffers=tuple(buffers))
        return attrs.evolve(new, body=S.BlockRealize((), E.IntImm("bool", 1), block))


def plan_buffer_allocation(body: S.Stmt) -> S.Stmt:
    """``body`` with every block allocation moved to its accesses' common ancestor."""
    detector = _LCADetector()
    detector.visit(body)
    target_of, targets = {}, {}
    for buffer, path in detector.lca.items():
        if path is None:
            continue  # never accessed: stays where it is
        carried = detector.reduction_loops.get(buffer, ())
        cut = next((k for k, node in enumerate(path) if id(node) in carried), None)
        if cut is not None:
            del path[cut:]
        if _is_shared(buffer.scope):
            while path and _is_thread_loop(path[-1]):
                path.pop()
        if path:
            target_of[buffer] = id(path[-1])
            targets.setdefault(id(path[-1]), []).append(buffer)
    if not targets:
        return body
    return _Move(target_of, targets).visit(body)


def PlanAndUpdateBufferAllocationLocation():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(plan_buffer_allocation(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.PlanAndUpdateBufferAllocationLocation")

"""ThreadSync: ``__syncthreads()`` wherever GPU threads read shared memory that other
threads wrote, or overwrite shared memory that other threads may still read.

Works on lowered IR (docs/lowered_ir.md) and inserts
``T.evaluate(T.tvm_storage_sync("shared"))``, TVM's barrier intrinsic, which the
CUDA printer prints as ``__syncthreads();``. Inside a kernel (an outermost thread-bound
loop), statements are scanned in program order, keeping the shared buffers written
and read since the last barrier:

- a statement that reads a buffer written since the barrier (read after write), or
  writes a buffer read since it (write after read), gets a barrier before it;
- a serial loop is scanned twice: the accesses at the end of one iteration meet the
  statements at the start of the next, so a fill at the top of the loop body waits
  for the previous iteration's readers (cooperative fetching in a ``k`` loop::

      for k_0 in range(128):
          __syncthreads()          # the previous iteration's reads are done
          fill A_shared, B_shared
          __syncthreads()          # every thread's part of the tile is there
          compute from A_shared, B_shared

Conflicts are decided per buffer (any write, then any read of the same shared buffer),
which may add a barrier that an exact index analysis would drop, never miss one.
A barrier is only placed where every thread of the block reaches it: a branch whose
condition depends on the thread index, or a loop whose extent does, is treated as one
statement, with any barrier before or after it.
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import const_int_value
from tilelang.ir.functor import StmtExprMutator, post_order_visit
from tilelang.transform.pass_infra import prim_func_pass

SYNC_OP = "tvm_storage_sync"


def make_sync() -> S.Evaluate:
    """The statement ``T.evaluate(T.tvm_storage_sync("shared"))``."""
    return S.Evaluate(E.Call("handle", SYNC_OP, (E.StringImm("shared"),)))


def is_sync(stmt) -> bool:
    """Whether ``stmt`` is a barrier made by :func:`make_sync`."""
    return (
        isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.Call) and stmt.value.op == SYNC_OP
    )


def _is_shared(scope: str) -> bool:
    return scope.startswith("shared")


@attrs.frozen
class _State:
    """Shared buffers (ids of data vars) accessed since the last barrier."""

    reads: frozenset = frozenset()
    writes: frozenset = frozenset()

    def union(self, other: _State) -> _State:
        return _State(self.reads | other.reads, self.writes | other.writes)

    def conflicts(self, reads: frozenset, writes: frozenset) -> bool:
        return bool(reads & self.writes or writes & self.reads)


_EMPTY = _State()


class _Planner:
    """Inserts barriers into one kernel body (see the module docstring)."""

    def __init__(self, shared: set, thread_vars: set):
        self.shared = shared  # ids of shared data vars
        self.thread_vars = thread_vars  # ids of thread-bound loop vars (grows as we go)

    # --------------------------------------------------------------- analysis

    def accesses(self, stmt) -> tuple[frozenset, frozenset]:
        reads, writes = set(), set()

        def visit(node):
            if isinstance(node, E.BufferLoad) and id(node.buffer.data) in self.shared:
                reads.add(id(node.buffer.data))
            elif isinstance(node, S.BufferStore) and id(node.buffer.data) in self.shared:
                writes.add(id(node.buffer.data))
            elif isinstance(node, E.Call) and node.op == "tvm_access_ptr":
                data = node.args[1]
                if id(data) in self.shared:  # a pointer escapes, as its mode says
                    mode = const_int_value(node.args[4])
                    if mode not in (1, 2, 3):  # unknown: either
                        mode = 3
                    if mode & 1:
                        reads.add(id(data))
                    if mode & 2:
                        writes.add(id(data))

        post_order_visit(stmt, visit)
        return frozenset(reads), frozenset(writes)

    def thread_dependent(self, expr) -> bool:
        found = []
        post_order_visit(
            expr, lambda n: found.append(n) if isinstance(n, E.Var) and id(n) in self.thread_vars
            else None,
        )  # fmt: skip
        return bool(found)

    # -------------------------------------------------------------- placement

    def plan(self, stmt, state: _State) -> tuple[S.Stmt, _State]:
        """``stmt`` with barriers, and the state after it, entered with ``state``."""
        if isinstance(stmt, S.SeqStmt):
            out = []
            for child in stmt.seq:
                new, state = self.plan(child, state)
                out.append(new)
            return S.SeqStmt(out), state
        if isinstance(stmt, (S.Allocate, S.DeclBuffer, S.AttrStmt)):
            body, state = self.plan(stmt.body, state)
            return attrs.evolve(stmt, body=body), state
        if isinstance(stmt, S.LetStmt):
            if self.thread_dependent(stmt.value):
                self.thread_vars.add(id(stmt.var))
            body, state = self.plan(stmt.body, state)
            return attrs.evolve(stmt, body=body), state
        if isinstance(stmt, S.For) and stmt.kind is S.ForKind.THREAD_BINDING:
            self.thread_vars.add(id(stmt.loop_var))
            body, state = self.plan(stmt.body, state)
            return attrs.evolve(stmt, body=body), state
        if isinstance(stmt, S.For) and not self._thread_dependent_loop(stmt):
            return self._plan_loop(stmt, state)
        if isinstance(stmt, S.IfThenElse) and not self.thread_dependent(stmt.condition):
            then, after_then = self.plan(stmt.then_case, state)
            if stmt.else_case is None:
                return attrs.evolve(stmt, then_case=then), after_then.union(state)
            other, after_else = self.plan(stmt.else_case, state)
            return attrs.evolve(stmt, then_case=then, else_case=other), after_then.union(after_else)
        return self._plan_leaf(stmt, state)

    def _thread_dependent_loop(self, op: S.For) -> bool:
        parts = [op.min, op.extent] + ([op.step] if op.step is not None else [])
        return any(self.thread_dependent(p) for p in parts)

    def _plan_leaf(self, stmt, state: _State) -> tuple[S.Stmt, _State]:
        reads, writes = self.accesses(stmt)
        if not reads and not writes:
            return stmt, state
        if state.conflicts(reads, writes):
            return S.SeqStmt([make_sync(), stmt]), _State(reads, writes)
        return stmt, _State(state.reads | reads, state.writes | writes)

    def _plan_loop(self, op: S.For, state: _State) -> tuple[S.Stmt, _State]:
        reads, writes = self.accesses(op.body)
        if not reads and not writes:
            return op, state
        # A conflict with what came before the loop: one barrier before the loop, not
        # one per iteration inside it.
        hoisted = state.conflicts(reads, writes)
        if hoisted:
            state = _EMPTY
        # First pass: what one iteration leaves pending; the second pass enters with it
        # too, so the top of the body sees the previous iteration's accesses.
        _, end = self.plan(op.body, state)
        body, end = self.plan(op.body, state.union(end))
        if not _runs_at_least_once(op):
            end = end.union(state)  # zero iterations leave the state as it was
        new = attrs.evolve(op, body=body)
        return (S.SeqStmt([make_sync(), new]) if hoisted else new), end


def _runs_at_least_once(op: S.For) -> bool:
    return isinstance(op.extent, E.IntImm) and op.extent.value > 0


def insert_thread_sync(body: S.Stmt) -> S.Stmt:
    """``body`` with barriers in every kernel (outermost thread-bound loop)."""
    shared: set = set()

    def collect(node):
        if isinstance(node, S.Allocate) and _is_shared(node.scope):
            shared.add(id(node.buffer_var))

    post_order_visit(body, collect)
    if not shared:
        return body
    return _Rewriter(shared).visit(body)


class _Rewriter(StmtExprMutator):
    """Finds the kernels (outermost thread-bound loops) and plans each one."""

    def __init__(self, shared: set):
        self.shared = shared

    def visit_for(self, op: S.For):
        if op.kind is not S.ForKind.THREAD_BINDING:
            return self.generic_visit(op)
        new, _ = _Planner(self.shared, set()).plan(op, _EMPTY)
        return new


def ThreadSync(storage_scope: str = "shared"):  # noqa: N802 - TVM's pass name
    """The pass (only the ``"shared"`` scope is synchronised); see the module docstring."""
    if storage_scope != "shared":
        raise ValueError(f"ThreadSync supports the 'shared' scope, not {storage_scope!r}")

    def transform(func, mod, ctx):
        return func.with_body(insert_thread_sync(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.ThreadSync")


__all__ = ["ThreadSync", "insert_thread_sync", "make_sync", "is_sync", "SYNC_OP"]

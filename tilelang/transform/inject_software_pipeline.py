"""InjectSoftwarePipeline: a loop annotated with TVM's pipeline stages runs them overlapped.

A loop whose body is a sequence of statements ``S_0 .. S_{n-1}`` (directly, or as the
body of the opaque block that allocates their buffers) and whose annotations give each
a stage and an order::

    for k in range(N, annotations={"software_pipeline_stage": [0, 0, 1],
                                   "software_pipeline_order": [0, 1, 2]}):
        fetch A_shared (k); fetch B_shared (k); compute from both (k)

runs ``S_i`` for iteration ``k - stage_i`` in pipelined iteration ``k``, the statements
of one pipelined iteration in the given order, over ``N + max(stage)`` pipelined
iterations: a prologue (only the iterations that exist), the steady loop, an epilogue.
Here the fetch of step ``k`` overlaps the compute of step ``k - 1``, which reads what
the previous pipelined iteration fetched: a buffer the body allocates that is written
in stage ``s`` and read in stage ``s' > s`` gets ``s' - s + 1`` versions (one fewer when
the reader comes first in the order), a leading dimension indexed by the iteration
modulo the versions (double buffering for ``[0, 0, 1]``). The versioned buffers are
allocated once, around the pipeline.

``software_pipeline_async_stages`` (TVM's too) lists stages whose statements copy
asynchronously (``cp.async`` on the CUDA backend, sm_80+): their statements are marked
``async_scope`` and committed as one group per pipelined iteration
(``async_commit_queue_scope``, an empty group where the epilogue has none), and each
statement reading what they wrote first waits until at most the groups committed after
the one it needs are in flight (``async_wait_queue_scope`` /
``async_wait_inflight_count``). The CPU backends run the copies in place and ignore
the marks. As TVM, this runs on opaque blocks, after LowerMatchBuffer.
"""

from __future__ import annotations

import attrs

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer, BufferRegion, Range
from tilelang.ir.convert import const_int_value
from tilelang.ir.dtype import INT32
from tilelang.ir.functor import StmtExprMutator, StmtExprVisitor, substitute
from tilelang.transform.pass_infra import prim_func_pass

STAGE, ORDER = "software_pipeline_stage", "software_pipeline_order"
ASYNC_STAGES = "software_pipeline_async_stages"
ASYNC_SCOPE, COMMIT = "async_scope", "async_commit_queue_scope"
WAIT, INFLIGHT = "async_wait_queue_scope", "async_wait_inflight_count"


class _Accesses(StmtExprVisitor):
    """The data variables (by id) a statement reads and writes."""

    def __init__(self):
        self.reads: set = set()
        self.writes: set = set()

    def visit_buffer_load(self, op):
        self.reads.add(id(op.buffer.data))
        self.generic_visit(op)

    def visit_buffer_store(self, op):
        self.writes.add(id(op.buffer.data))
        self.generic_visit(op)

    def visit_block(self, op):
        self.reads |= {id(r.buffer.data) for r in op.reads}
        self.writes |= {id(r.buffer.data) for r in op.writes}
        self.generic_visit(op)

    def visit_call(self, op):
        if op.op == "tvm_access_ptr":
            mask = const_int_value(op.args[4])
            (self.reads if mask is None or mask & 1 else set()).add(id(op.args[1]))
            (self.writes if mask is None or mask & 2 else set()).add(id(op.args[1]))
        self.generic_visit(op)


def _accesses(stmt) -> _Accesses:
    visitor = _Accesses()
    visitor.visit(stmt)
    return visitor


class _Version(StmtExprMutator):
    """Accesses of the versioned buffers given the leading ``version`` index."""

    def __init__(self, buffers: dict, version):
        self.buffers = buffers  # id(old data) -> (old buffer, new buffer)
        self.version = version

    def _new(self, buffer):
        pair = self.buffers.get(id(buffer.data))
        return None if pair is None else pair[1]

    def visit_buffer_load(self, op):
        """A load or a store of a versioned buffer indexes its version first."""
        new = self.generic_visit(op)
        buffer = self._new(new.buffer)
        if buffer is None:
            return new
        return attrs.evolve(new, buffer=buffer, indices=(self.version, *new.indices))

    visit_buffer_store = visit_buffer_load

    def visit_buffer_region(self, op):
        new = self.generic_visit(op)
        buffer = self._new(new.buffer)
        if buffer is None:
            return new
        return BufferRegion(buffer, (Range.from_min_extent(self.version, 1), *new.region))

    def visit_call(self, op):
        if op.op == "tvm_access_ptr" and self._new_by_var(op.args[1]) is not None:
            old, buffer = self.buffers[id(op.args[1])]
            args = [a if k == 1 else self.visit(a) for k, a in enumerate(op.args)]
            args[1] = buffer.data
            args[2] = self.version * _version_stride(old) + args[2]
            return attrs.evolve(op, args=tuple(args))
        return self.generic_visit(op)

    def _new_by_var(self, var):
        pair = self.buffers.get(id(var)) if isinstance(var, E.Var) else None
        return None if pair is None else pair[1]

    def visit_var(self, var):
        if id(var) in self.buffers:
            raise BuildError(
                f"software pipeline: buffer {self.buffers[id(var)][0].name} is used through "
                "its data pointer other than by access_ptr; it cannot be multi-versioned"
            )
        return var


def _version_stride(buffer: Buffer):
    """Elements between two versions of ``buffer`` (its size, padded rows included)."""
    if buffer.strides:
        rows, stride = const_int_value(buffer.shape[0]), const_int_value(buffer.strides[0])
        if rows is not None and stride is not None:  # folded: a constant size stays int32
            return E.IntImm(buffer.strides[0].dtype, rows * stride)
        return buffer.shape[0] * buffer.strides[0]
    return buffer.total_elements()


def _multi_version(buffer: Buffer, versions: int) -> Buffer:
    strides = (_version_stride(buffer), *buffer.strides) if buffer.strides else ()
    data = E.Var(buffer.data.name, buffer.data.dtype)
    return attrs.evolve(
        buffer, data=data, shape=(E.IntImm(buffer.shape[0].dtype, versions), *buffer.shape),
        strides=strides,
    )  # fmt: skip


def _ints(loop, key, count) -> list[int]:
    values = loop.annotations.get(key)
    ints = [const_int_value(v) for v in values] if isinstance(values, (list, tuple)) else None
    if ints is None or None in ints or len(ints) != count:
        raise BuildError(
            f"software pipeline on loop {loop.loop_var.name}: {key} must list one integer per "
            f"statement of the loop body ({count}), not {values!r}"
        )
    return ints


def _body(loop):
    """``(statements, buffers the body allocates)`` of a pipelined loop."""
    body = loop.body
    alloc = ()
    if isinstance(body, S.BlockRealize) and not body.block.iter_vars:
        alloc, body = body.block.alloc_buffers, body.block.body
    stmts = list(body.seq) if isinstance(body, S.SeqStmt) else [body]
    return stmts, alloc


def _versions(stmts, stages, orders, alloc, accesses) -> dict:
    """``{id(data): versions}`` of each buffer the body allocates."""
    versions = {}
    for buffer in alloc:
        key, count = id(buffer.data), 1
        for w, write in enumerate(accesses):
            if key not in write.writes:
                continue
            for r, read in enumerate(accesses):
                if r == w or key not in read.reads:
                    continue
                if (stages[r], orders[r]) < (stages[w], orders[w]):
                    raise BuildError(
                        f"software pipeline: {buffer.name} is read (stage {stages[r]}, "
                        f"order {orders[r]}) before it is written (stage {stages[w]}, "
                        f"order {orders[w]}): the reader would see another iteration's data"
                    )
                count = max(count, stages[r] - stages[w] + (orders[w] < orders[r]))
        versions[key] = count
    return versions


def _check_carried(loop, stmts, stages, orders, alloc, accesses) -> None:
    """Only buffers the body allocates (multi-versioned per iteration) may pass data
    between statements of different stages, or be reordered within a stage: another
    buffer's accesses across iterations would change order without a version each."""
    local = {id(b.data) for b in alloc}
    for w, write in enumerate(accesses):
        for r, other in enumerate(accesses):
            shared = write.writes & (other.reads | other.writes) - local
            if r == w or not shared:
                continue
            if stages[r] != stages[w] or (orders[r] < orders[w]) != (r < w):
                raise BuildError(
                    f"software pipeline on loop {loop.loop_var.name}: statements {w} and {r} "
                    "both touch a buffer the loop body does not allocate (one writes it) "
                    "but are in different stages or swapped in the order; only the body's "
                    "own buffers can carry data between stages"
                )


def _wait_counts(stages, orders, accesses, async_stages) -> dict:
    """``{statement: {async stage: groups that may still be in flight}}``."""
    waits: dict = {}
    for c, read in enumerate(accesses):
        for p, write in enumerate(accesses):
            if p == c or stages[p] not in async_stages or not (read.reads & write.writes):
                continue
            inflight = stages[c] - stages[p] - 1 + (orders[p] < orders[c])
            current = waits.setdefault(c, {}).get(stages[p])
            waits[c][stages[p]] = inflight if current is None else min(current, inflight)
    return waits


def pipeline_loop(loop: S.For) -> S.Stmt:
    """The pipelined form of one annotated loop (see the module docstring)."""
    stmts, alloc = _body(loop)
    n = len(stmts)
    stages, orders = _ints(loop, STAGE, n), _ints(loop, ORDER, n)
    if sorted(orders) != list(range(n)) or min(stages) < 0:
        raise BuildError(
            f"software pipeline on loop {loop.loop_var.name}: {ORDER} must be a permutation "
            f"of 0..{n - 1} and stages non-negative (stages {stages}, order {orders})"
        )
    listed = loop.annotations.get(ASYNC_STAGES, ())
    async_stages = set(_ints(loop, ASYNC_STAGES, len(listed))) if listed else set()
    if len(async_stages) > 1:  # one queue of groups: its wait counts are per stage
        raise BuildError(
            f"software pipeline on loop {loop.loop_var.name}: at most one asynchronous "
            f"stage, not {sorted(async_stages)}"
        )
    if loop.kind is not S.ForKind.SERIAL:
        raise BuildError(
            f"software pipeline on loop {loop.loop_var.name}: the loop must be serial, "
            f"not {loop.kind.name.lower()}"
        )
    extent = const_int_value(loop.extent)
    if extent is None:
        raise BuildError(
            f"software pipeline on loop {loop.loop_var.name}: the extent must be a constant"
        )
    accesses = [_accesses(s) for s in stmts]
    versions = _versions(stmts, stages, orders, alloc, accesses)
    _check_carried(loop, stmts, stages, orders, alloc, accesses)
    var, lo = loop.loop_var, loop.min
    versioned = {
        id(b.data): (b, _multi_version(b, versions[id(b.data)]))
        for b in alloc
        if versions[id(b.data)] > 1
    }
    if versioned:
        stmts = [_version_each(s, versioned, versions, var, lo) for s in stmts]
    order = sorted(range(n), key=lambda i: orders[i])
    waits = _wait_counts(stages, orders, accesses, async_stages)
    max_stage = max(stages)

    def iteration(t, steady_var=None):
        """The statements of pipelined iteration ``t`` (a constant) or, with
        ``steady_var``, of the steady loop's iteration ``steady_var``."""
        out, emitted_commits = [], set()
        for position, i in enumerate(order):
            index = None if steady_var is None else steady_var - stages[i]
            present = steady_var is not None or 0 <= t - stages[i] < extent
            if present:
                if index is None:
                    index = lo + (t - stages[i])
                for stage, inflight in sorted(waits.get(i, {}).items()):
                    out.append(_mark(WAIT, stage, _mark(INFLIGHT, inflight, S.Evaluate(0))))
                body = substitute(stmts[i], {var: index})
                out.append(_mark(ASYNC_SCOPE, 1, body) if stages[i] in async_stages else body)
            stage = stages[i]
            last_of_stage = all(
                stages[j] != stage for j in order[position + 1 :]
            )  # the group ends with the stage's last statement in the order
            if stage in async_stages and last_of_stage and stage not in emitted_commits:
                emitted_commits.add(stage)
                group = _take_group(out)
                out.append(_mark(COMMIT, stage, group))
        return out

    result = []
    for t in range(min(max_stage, extent + max_stage)):
        result += iteration(t)
    if extent > max_stage:
        steady = E.Var(var.name, var.dtype)
        body = S.seq_stmt(*iteration(None, steady))
        annotations = {
            k: v for k, v in loop.annotations.items() if k not in (STAGE, ORDER, ASYNC_STAGES)
        }
        steady_extent = E.IntImm(var.dtype, extent - max_stage)
        result.append(attrs.evolve(
            loop, loop_var=steady, min=lo + max_stage, extent=steady_extent, body=body,
            annotations=annotations,
        ))  # fmt: skip
    for t in range(max(extent, max_stage), extent + max_stage):
        result += iteration(t)
    buffers = tuple(versioned[id(b.data)][1] if id(b.data) in versioned else b for b in alloc)
    block = S.Block((), (), (), "", S.seq_stmt(*result), alloc_buffers=buffers)
    return S.BlockRealize((), E.IntImm("bool", 1), block)


def _take_group(out):
    """Pops from ``out`` the trailing statements of the async stage (marked
    ``async_scope``) and returns them as one statement (``T.evaluate(0)`` if none;
    ``commit_group`` commits every copy not committed yet in any case)."""
    group = []
    while out and isinstance(out[-1], S.AttrStmt) and out[-1].attr_key == ASYNC_SCOPE:
        group.insert(0, out.pop())
    return S.seq_stmt(*group) if group else S.Evaluate(0)


def _mark(key, value, body):
    return S.AttrStmt(None, key, E.IntImm(INT32, value), body)


def _version_each(stmt, versioned, versions, var, lo):
    """``stmt`` with each versioned buffer indexed by its own version count."""
    for key, pair in versioned.items():
        version = E.FloorMod(var - lo, E.IntImm(var.dtype, versions[key]))
        stmt = _Version({key: pair}, version).visit(stmt)
    return stmt


class _Inject(StmtExprMutator):
    def visit_for(self, op):
        new = self.generic_visit(op)
        if STAGE not in new.annotations and ORDER not in new.annotations:
            return new
        return pipeline_loop(new)


def InjectSoftwarePipeline():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(_Inject().visit(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.InjectSoftwarePipeline")


__all__ = ["InjectSoftwarePipeline", "pipeline_loop", "STAGE", "ORDER", "ASYNC_STAGES"]

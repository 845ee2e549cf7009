"""LowerCrossThreadReduction: reduction blocks whose reduction runs over threads.

A reduction block whose reduction iterator is bound, through its loops, to a loop
over ``threadIdx.x`` is computed by all the threads of that loop together (TVM's
``LowerCrossThreadReduction``, the same lowered form). The reduction loops are the
innermost loops of the block's loop nest that only the reduction iterators use; they
are rebuilt as::

    for tx in T.thread_binding(T, thread="threadIdx.x"):
        with T.block("B_in_thread_init"):          # each thread's own partial
            B_in_thread[0] = identity
        for ko in range(...):                      # the other reduction loops
            with T.block("B_normal_reduction"):    # the block, into the partial
                B_in_thread[0] = combine(B_in_thread[0], value)
        with T.block("B_cross_thread_reduction"):  # every thread gets the result
            T.attr(T.comm_reducer(combine, [identity]), "reduce_scope", 0)
            T.tvm_thread_allreduce(T.uint32(1), B_in_thread[0], True, B_cross[0], tx)
        with T.block("B_write_back"):              # one thread stores it
            T.where(tx == 0)
            B[vi] = B_cross[0]

Without other reduction loops and without a predicate the in-thread partial is left
out and the allreduce takes the block's value itself. ``B_in_thread`` and ``B_cross``
are ``local`` buffers of the enclosing block. The reducer is the block's (``+``,
``*``, ``T.min``, ``T.max`` of the stored element, whose init stores the identity;
the rule rfactor uses). The CUDA backend prints the allreduce as warp shuffles and one
exchange through shared memory (:mod:`tilelang.backends.cuda.allreduce`); the CPU
backends, which run thread loops one after another, compute such a block as written
and never see this form.
"""

from __future__ import annotations

import math

import attrs

from tilelang.errors import BuildError, ScheduleError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range, decl_buffer
from tilelang.ir.comm_reducer import CommReducer
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.ir.functor import StmtMutator
from tilelang.ir.var_usage import uses_any_var

__all__ = ["lower_cross_thread_reduction", "lower_cross_thread_reduction_module"]

ALLREDUCE = "tvm_thread_allreduce"


def _thread_tag(loop: S.For) -> str | None:
    if loop.kind is S.ForKind.THREAD_BINDING and str(loop.thread_binding).startswith("threadIdx."):
        return str(loop.thread_binding)
    return None


def _chain(loop: S.For):
    """``(loops, realize)``: the loops from ``loop`` down while each holds exactly one
    loop, ending at a BlockRealize; None when the nest is not such a chain."""
    loops = [loop]
    body = loop.body
    while isinstance(body, S.For):
        loops.append(body)
        body = body.body
    return (loops, body) if isinstance(body, S.BlockRealize) else None


def _reduction_suffix(loops, realize):
    """The innermost loops of ``loops`` that no spatial binding of ``realize`` uses."""
    block = realize.block
    spatial = [
        v
        for iv, v in zip(block.iter_vars, realize.iter_values)
        if iv.iter_type == S.IterVar.DataPar
    ]
    start = len(loops)
    while start > 0 and not any(uses_any_var(v, [loops[start - 1].loop_var]) for v in spatial):
        start -= 1
    return loops[start:]


def _is_cross_thread(realize, suffix) -> bool:
    threads = [lp.loop_var for lp in suffix if _thread_tag(lp)]
    return bool(threads) and any(
        iv.iter_type == S.IterVar.CommReduce and uses_any_var(v, threads)
        for iv, v in zip(realize.block.iter_vars, realize.iter_values)
    )


def _identity(kind: str, dtype) -> E.PrimExpr:
    element = dtype.element_of()
    if kind in ("zero", "one"):
        value = 0 if kind == "zero" else 1
        return E.FloatImm(element, float(value)) if element.is_float() else E.IntImm(element, value)
    if element.is_float():
        return E.FloatImm(element, -math.inf if kind == "lowest" else math.inf)
    if element.is_bool():
        return E.IntImm(element, 0 if kind == "lowest" else 1)
    if element.is_uint():
        return E.IntImm(element, 0 if kind == "lowest" else 2**element.bits - 1)
    half = 2 ** (element.bits - 1)
    return E.IntImm(element, -half if kind == "lowest" else half - 1)


def _realize(block: S.Block, values=(), predicate=True) -> S.BlockRealize:
    return S.BlockRealize(tuple(values), predicate, block)


def _is_true(expr) -> bool:
    return isinstance(expr, E.IntImm) and expr.value == 1


def _conjuncts(expr):
    if isinstance(expr, E.And):
        return [*_conjuncts(expr.a), *_conjuncts(expr.b)]
    return [expr]


class _Lowering(StmtMutator):
    def __init__(self, name: str):
        self.name = name
        self.pending: list = []  # local buffers the enclosing block must allocate

    def visit_block(self, op: S.Block):
        outer, self.pending = self.pending, []
        new = self.generic_visit(op)
        if self.pending:
            new = attrs.evolve(new, alloc_buffers=(*new.alloc_buffers, *self.pending))
        self.pending = outer
        return new

    def visit_for(self, op: S.For):
        found = _chain(op)
        if found is not None:
            loops, realize = found
            suffix = _reduction_suffix(loops, realize)
            if suffix and suffix[0] is op and _is_cross_thread(realize, suffix):
                return self._lower(suffix, realize)
        return self.generic_visit(op)

    def _refuse(self, realize, why: str):
        raise BuildError(
            f"{self.name}: block {realize.block.name_hint!r} reduces across threads, but {why}"
        )

    def _lower(self, loops, realize) -> S.Stmt:
        from tilelang.schedule.rfactor_reducer import COMBINERS, match_reduction

        block = realize.block
        threads = [lp for lp in loops if _thread_tag(lp)]
        if len(threads) != 1 or _thread_tag(threads[0]) != "threadIdx.x":
            self._refuse(realize, "only a reduction over one loop bound to threadIdx.x is lowered")
        thread = threads[0]
        try:
            reduction = match_reduction(block.name_hint, realize)
        except ScheduleError as exc:
            self._refuse(realize, f"its reducer is not one it can lower: {exc}")
        if reduction.kind not in COMBINERS:
            self._refuse(realize, "argmax/argmin reductions (two values) are not lowered")
        (out,) = reduction.buffers
        dtype = out.dtype
        combine, identity = reduction.kind, _identity(COMBINERS[reduction.kind], dtype)
        name = block.name_hint
        cross = decl_buffer((1,), dtype, f"{name}_cross_thread", scope="local")
        self.pending.append(cross)
        zero = (E.IntImm("int32", 0),)
        cell = BufferRegion(cross, (Range(0, 1),))
        parts = []
        in_thread = bool(len(loops) > 1) or not _is_true(realize.predicate)
        if in_thread:
            partial = decl_buffer((1,), dtype, f"{name}_in_thread", scope="local")
            self.pending.append(partial)
            partial_cell = BufferRegion(partial, (Range(0, 1),))
            parts.append(_realize(S.Block(
                (), (), (partial_cell,), f"{name}_in_thread_init",
                S.BufferStore(partial, identity, zero),
            )))  # fmt: skip
            update = S.BufferStore(
                partial, combine(E.BufferLoad(partial, zero), reduction.values[0]), zero
            )
            reads = tuple(r for r in block.reads if r.buffer is not out)
            normal = attrs.evolve(
                block, name_hint=f"{name}_normal_reduction", body=update, init=None,
                reads=(*reads, partial_cell), writes=(partial_cell,),
            )  # fmt: skip
            nest: S.Stmt = attrs.evolve(realize, block=normal)
            for loop in reversed([lp for lp in loops if lp is not thread]):
                nest = attrs.evolve(loop, body=nest)
            parts.append(nest)
            value, iters, values, reads = E.BufferLoad(partial, zero), (), (), (partial_cell,)
        else:
            value, iters, values = reduction.values[0], block.iter_vars, realize.iter_values
            reads = tuple(r for r in block.reads if r.buffer is not out)
        x, y = E.Var("x", dtype), E.Var("y", dtype)
        reducer = CommReducer((x,), (y,), (combine(x, y),), (identity,))
        allreduce = E.Call(
            "handle", ALLREDUCE,
            (E.IntImm("uint32", 1), value, E.IntImm("bool", 1), E.BufferLoad(cross, zero),
             thread.loop_var),
        )  # fmt: skip
        body = S.AttrStmt(reducer, "reduce_scope", E.IntImm("int32", 0), S.Evaluate(allreduce))
        parts.append(_realize(
            S.Block(iters, reads, (cell,), f"{name}_cross_thread_reduction", body), values,
        ))  # fmt: skip
        parts.append(self._write_back(realize, reduction, cross, loops, thread))
        return attrs.evolve(thread, body=S.seq_stmt(*parts))

    def _write_back(self, realize, reduction, cross, loops, thread) -> S.BlockRealize:
        """``B[idx] = B_cross[0]`` by the first thread, under the clauses of the
        block's predicate that do not involve the reduction loops."""
        block = realize.block
        kept = [
            (iv, v)
            for iv, v in zip(block.iter_vars, realize.iter_values)
            if iv.iter_type == S.IterVar.DataPar
        ]
        reduction_vars = [lp.loop_var for lp in loops]
        predicate = E.EQ(thread.loop_var, thread.min)
        if not _is_true(realize.predicate):
            for clause in _conjuncts(realize.predicate):
                if not uses_any_var(clause, reduction_vars):
                    predicate = E.And(predicate, clause)
        (out,) = reduction.buffers
        zero = (E.IntImm("int32", 0),)
        store = S.BufferStore(out, E.BufferLoad(cross, zero), reduction.indices)
        writes = tuple(w for w in block.writes if w.buffer is out)
        wb = S.Block(
            tuple(iv for iv, _ in kept), (BufferRegion(cross, (Range(0, 1),)),), writes,
            f"{block.name_hint}_write_back", store,
        )  # fmt: skip
        return _realize(wb, [v for _, v in kept], predicate)


def lower_cross_thread_reduction(func: PrimFunc, name: str = "") -> PrimFunc:
    """``func`` with each cross-thread reduction block rewritten as the module
    docstring shows (``func`` itself when it has none); a BuildError names a block
    that reduces across threads in a way this does not lower."""
    body = _Lowering(name or str(func.attrs.get("global_symbol", "?"))).visit(func.body)
    return func if body is func.body else func.with_body(body)


def lower_cross_thread_reduction_module(mod: IRModule) -> IRModule:
    """Every PrimFunc of ``mod`` through :func:`lower_cross_thread_reduction`."""
    changed = {}
    for key, func in mod.functions.items():
        if isinstance(func, PrimFunc):
            new = lower_cross_thread_reduction(func, key)
            if new is not func:
                changed[key] = new
    if not changed:
        return mod
    return attrs.evolve(mod, functions={**mod.functions, **changed})

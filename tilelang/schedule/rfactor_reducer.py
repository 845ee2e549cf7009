"""The reductions rfactor can split, as values it can rebuild (TVM's reducer
registry): a single store ``B[idx] = B[idx] <op> value`` with ``+``, ``*``, ``T.min``
or ``T.max`` (possibly through lets), and the two-buffer argmax / argmin

    v_idx = T.Select(V[i] >= val, I[i], idx)      # <= for argmin
    v_val = T.Select(V[i] >= val, V[i], val)
    I[i] = v_idx
    V[i] = v_val

whose init stores ``-1`` and the value type's lowest (highest) value. A
:class:`Reduction` rebuilds the init and the update for other buffers and values:
the partial results of ``<block>_rf`` and the write-back that combines them.
"""

from __future__ import annotations

import attrs
import numpy as np

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit, substitute
from tilelang.ir.structural import structural_equal
from tilelang.ir.var_usage import uses_any_var
from tilelang.schedule.errors import schedule_error

#: commutative, associative combiners rfactor can split: node type -> identity kind
COMBINERS = {E.Add: "zero", E.Mul: "one", E.Min: "highest", E.Max: "lowest"}


@attrs.frozen
class Reduction:
    """The written ``buffers`` (in the reducer's order) at common ``indices``, the
    incoming ``values`` (one per buffer), the ``inits`` and the reducer ``kind``: a
    combiner node type of :data:`COMBINERS`, ``"argmax"`` or ``"argmin"``."""

    buffers: tuple
    indices: tuple
    values: tuple
    inits: tuple
    kind: object

    def init(self, targets, indices) -> S.Stmt:
        """The init storing the identities into ``targets`` at ``indices``."""
        return S.seq_stmt(
            *(S.BufferStore(t, v, tuple(indices)) for t, v in zip(targets, self.inits))
        )

    def plain(self, targets, indices, values) -> S.Stmt:
        """Stores of ``values`` themselves (a reduction over one element)."""
        return S.seq_stmt(*(S.BufferStore(t, v, tuple(indices)) for t, v in zip(targets, values)))

    def update(self, targets, indices, values) -> S.Stmt:
        """The update combining ``values`` into ``targets`` at ``indices``."""
        indices = tuple(indices)
        loads = [E.BufferLoad(t, indices) for t in targets]
        if self.kind in COMBINERS:
            return S.BufferStore(targets[0], self.kind(loads[0], values[0]), indices)
        cmp = E.GE if self.kind == "argmax" else E.LE
        cond = cmp(loads[1], values[1])
        lets = [E.Var(f"v_{t.name}", t.dtype) for t in targets]
        stores = [S.BufferStore(t, v, indices) for t, v in zip(targets, lets)]
        body = S.seq_stmt(*stores)
        for var, load, value in reversed(list(zip(lets, loads, values))):
            body = S.LetStmt(var, E.Select(cond, load, value), body)
        return body


def match_reduction(subject, realize) -> Reduction:
    """The :class:`Reduction` of a reduction block, or a ScheduleError saying why it
    is none that rfactor can split."""
    block = realize.block
    if block.init is None:
        raise schedule_error("rfactor", subject, "has no T.init(); not a reduction", realize)
    if block.alloc_buffers or block.match_buffers:
        raise schedule_error(
            "rfactor", subject, "blocks that allocate or match buffers are not supported", realize
        )
    body = _inline_lets(block.body)
    if isinstance(body, S.SeqStmt) and len(body.seq) == 2:
        found = _match_arg_reduction(block.body, block.init)
        if found is None:
            raise schedule_error(
                "rfactor",
                subject,
                "a reduction into two buffers must be an argmax or argmin "
                "(T.Select on the value buffer, init -1 and the lowest/highest value)",
                realize,
            )
        _check_indices(subject, realize, found.indices)
        return found
    store, combiner, value = _match_reduction(subject, realize, body)
    _check_indices(subject, realize, store.indices)
    return Reduction((store.buffer,), store.indices, (value,), (block.init.value,), combiner)


def _check_indices(subject, realize, indices) -> None:
    block = realize.block
    reduce_vars = [iv.var for iv in block.iter_vars if iv.iter_type != S.IterVar.DataPar]
    if any(uses_any_var(index, reduce_vars) for index in indices):
        raise schedule_error(
            "rfactor", subject, "the stored index depends on a reduction iterator", realize
        )


def _match_arg_reduction(body, init):
    """argmax / argmin over an index buffer and a value buffer, either store order.
    As TVM, the update is two lets (the new values, computed from the old ones)
    then two stores of exactly those lets, and the buffers have one shape."""
    lets = []
    while isinstance(body, S.LetStmt):
        lets.append(body)
        body = body.body
    if len(lets) != 2 or not isinstance(body, S.SeqStmt) or len(body.seq) != 2:
        return None
    let_vars = [x.var for x in lets]
    if any(uses_any_var(x.value, let_vars) for x in lets):
        return None
    stores = list(body.seq)
    if not all(isinstance(x, S.BufferStore) for x in stores):
        return None
    if sorted(id(x.value) for x in stores) != sorted(id(v) for v in let_vars):
        return None
    values = {id(x.var): x.value for x in lets}
    stores = [attrs.evolve(x, value=values[id(x.value)]) for x in stores]
    if not structural_equal(tuple(stores[0].buffer.shape), tuple(stores[1].buffer.shape)):
        return None
    inits = list(init.seq) if isinstance(init, S.SeqStmt) else []
    if not all(isinstance(x, S.BufferStore) for x in inits) or len(inits) != 2:
        return None
    for first, second in ((stores[0], stores[1]), (stores[1], stores[0])):
        found = _arg_pattern(first, second)
        if found is None:
            continue
        kind, xi, xv = found
        by_buffer = {id(x.buffer): x for x in inits}
        init_i, init_v = by_buffer.get(id(first.buffer)), by_buffer.get(id(second.buffer))
        if init_i is None or init_v is None:
            return None
        if not all(_same_indices(x.indices, first.indices) for x in (init_i, init_v)):
            return None
        if not (_is_const(init_i.value, -1) and _is_identity(init_v.value, _ARG[kind])):
            return None
        return Reduction(
            (first.buffer, second.buffer), first.indices, (xi, xv),
            (init_i.value, init_v.value), kind,
        )  # fmt: skip
    return None


_ARG = {"argmax": "lowest", "argmin": "highest"}


def _arg_pattern(index_store, value_store):
    """``(kind, incoming index, incoming value)`` when the two stores are an argmax
    or argmin update of (index buffer, value buffer)."""
    if not _same_indices(index_store.indices, value_store.indices):
        return None
    ei, ev = index_store.value, value_store.value
    if not (isinstance(ei, E.Select) and isinstance(ev, E.Select)):
        return None
    if not structural_equal(ei.condition, ev.condition):
        return None
    cond = ei.condition
    kind = {E.GE: "argmax", E.LE: "argmin"}.get(type(cond))
    mine_i, mine_v = (_load_of(index_store), _load_of(value_store))
    if kind is None or not (
        structural_equal(cond.a, mine_v)
        and structural_equal(ei.true_value, mine_i)
        and structural_equal(ev.true_value, mine_v)
        and structural_equal(cond.b, ev.false_value)
    ):
        return None
    xi, xv = ei.false_value, ev.false_value
    for x in (xi, xv):
        if _reads(x, index_store.buffer) or _reads(x, value_store.buffer):
            return None
    return kind, xi, xv


def _load_of(store):
    return E.BufferLoad(store.buffer, store.indices)


def _is_const(value, want) -> bool:
    return isinstance(value, E.IntImm) and value.value == want


def _match_reduction(subject, realize, store):
    """``(store, combiner type, the value combined in)`` of a reduction block
    ``B[idx] = combiner(B[idx], value)`` whose init stores the combiner's identity."""
    block = realize.block
    if not isinstance(store, S.BufferStore) or store.predicate is not None:
        raise schedule_error(
            "rfactor",
            subject,
            "the body must be a single (unmasked) buffer store B[...] = ...",
            realize,
        )
    combiner = type(store.value)
    if combiner not in COMBINERS:
        raise schedule_error(
            "rfactor",
            subject,
            "the update is not a +, *, T.min or T.max of the stored element",
            realize,
        )
    value = _other_operand(store)
    if value is None or _reads(value, store.buffer):
        raise schedule_error(
            "rfactor",
            subject,
            f"the update must combine {store.buffer.name}[...] with a value that does not "
            f"read {store.buffer.name}",
            realize,
        )
    init = block.init
    if (
        not isinstance(init, S.BufferStore)
        or init.buffer is not store.buffer
        or not _same_indices(init.indices, store.indices)
        or not _is_identity(init.value, COMBINERS[combiner])
    ):
        raise schedule_error(
            "rfactor",
            subject,
            f"the init must store the identity of the combiner ({COMBINERS[combiner]}) "
            "to the updated element",
            realize,
        )
    reduce_vars = [iv.var for iv in block.iter_vars if iv.iter_type != S.IterVar.DataPar]
    if any(uses_any_var(index, reduce_vars) for index in store.indices):
        raise schedule_error(
            "rfactor", subject, "the stored index depends on a reduction iterator", realize
        )
    return store, combiner, value


def _inline_lets(body):
    """A body ``v = value; B[...] = f(v)`` as the single store ``B[...] = f(value)``
    (TVM's rfactor reads the update through such lets)."""
    lets = {}
    while isinstance(body, S.LetStmt):
        lets[body.var] = substitute(body.value, lets)
        body = body.body
    return substitute(body, lets) if lets else body


def _other_operand(store):
    """The operand of the update that is not a load of the stored element."""
    for mine, other in ((store.value.a, store.value.b), (store.value.b, store.value.a)):
        if (
            isinstance(mine, E.BufferLoad)
            and mine.buffer is store.buffer
            and _same_indices(mine.indices, store.indices)
        ):
            return other
    return None


def _same_indices(a, b) -> bool:
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


def _reads(expr, buffer) -> bool:
    found = []
    post_order_visit(
        expr,
        lambda n: found.append(n) if isinstance(n, E.BufferLoad) and n.buffer is buffer else None,
    )
    return bool(found)


def _is_identity(value, kind: str) -> bool:
    if not isinstance(value, (E.IntImm, E.FloatImm)):
        return False
    if kind in ("zero", "one"):
        return value.value == (0 if kind == "zero" else 1)
    dtype = np.dtype(str(value.dtype))
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    limits = {"lowest": (info.min, -np.inf), "highest": (info.max, np.inf)}[kind]
    return any(value.value == limit for limit in limits)

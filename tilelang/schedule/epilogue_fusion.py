"""fuse_reduction_epilogue: a bias addition that follows a reduction is folded into
the reduction's init, and the reduction writes the epilogue's output directly.

Before / after ``fuse_reduction_epilogue("multiply", "add")``::

    for i, j, k in T.grid(16, 16, 16):           for i, j, k in T.grid(16, 16, 16):
        with T.block("multiply"):                    with T.block("multiply"):
            with T.init():                               with T.init():
                temp[vi, vj] = 0                             D[vi, vj] = C[vi, vj]
            temp[vi, vj] = temp[vi, vj] + A * B          D[vi, vj] = D[vi, vj] + A * B
    for i, j in T.grid(16, 16):
        with T.block("add"):
            D[vi, vj] = temp[vi, vj] + C[vi, vj]

The reduction must be ``temp[x] = temp[x] + ...`` with init ``temp[x] = 0``, and
the epilogue ``D[y] = f(temp[y'] + bias)`` (or ``f(bias + temp[y'])``, or without a
bias) with one load of ``temp``, where each of the epilogue's iterators indexes
``temp`` directly, so it maps to the reduction's spatial iterators; ``temp`` must have
no other reader. The bias becomes the init (for floating point it is then added first,
a reassociation, as rfactor's). When ``f`` is more than the identity (ReLU,
clipping...) it acts on the finished sum, on the reduction's last step::

    D[vi, vj] = T.if_then_else(vk == 15, T.max(D[vi, vj] + A * B, 0), D[vi, vj] + A * B)

TVM applies ReLU and clipping after every step (``max(D + A * B, 0)`` each time),
which is not what the two blocks computed (a running maximum is not the maximum of the
sum); tilelang keeps the result. The last step is the one with every reduction
iterator at its end as long as each is bound to loops with positive coefficients (the
loops run upwards, whatever their order after reorder or split), which is checked.
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_value, linear_form, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import get_block_read_write_region, uses_any_var
from tilelang.ir.convert import binary, logical
from tilelang.ir.functor import ExprMutator, post_order_visit, substitute
from tilelang.schedule.common import block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.regions import buffers_of, siblings
from tilelang.schedule.state import REMOVE, Tree, rewrite

P = "fuse_reduction_epilogue"


def _reduction(subject, realize):
    block = realize.block
    store, init = block.body, block.init
    ok = (
        isinstance(store, S.BufferStore)
        and isinstance(init, S.BufferStore)
        and store.predicate is None
        and init.predicate is None
        and init.buffer is store.buffer
        and isinstance(store.value, E.Add)
        and isinstance(store.value.a, E.BufferLoad)
        and store.value.a.buffer is store.buffer
    )
    if not ok:
        raise schedule_error(
            P, subject,
            "is not a reduction of the form T.init(): buf[x] = 0; buf[x] = buf[x] + value",
            realize,
        )  # fmt: skip
    if const_value(init.value) != 0 and not (
        isinstance(init.value, E.FloatImm) and init.value.value == 0
    ):
        raise schedule_error(P, subject, f"its init stores {init.value}, not 0", realize)
    return store


def _epilogue(subject, realize, temp):
    """``(store, load of temp, bias or None, finish)``: the epilogue stores
    ``finish(temp[...] + bias)``, ``finish`` an expression of the placeholder
    :data:`_HOLE` (the placeholder itself when the epilogue only adds)."""
    store = realize.block.body
    value = store.value if isinstance(store, S.BufferStore) else None
    loads = [] if value is None else _temp_loads(value, temp)
    if len(loads) != 1:
        raise schedule_error(
            P, subject,
            f"the epilogue must be one store of an expression of one load of {temp.name}",
            realize,
        )  # fmt: skip
    (load,) = loads
    core, bias = load, None
    parent = _parent_of(value, load)
    if isinstance(parent, E.Add):
        other = parent.b if parent.a is load else parent.a
        if not _loads(other, temp):
            core, bias = parent, other
    hole = E.Var("finished", core.dtype)
    return store, load, bias, _Replace(core, hole).visit(value), hole


def _temp_loads(expr, buffer) -> list:
    found = []
    post_order_visit(
        expr,
        lambda n: found.append(n) if isinstance(n, E.BufferLoad) and n.buffer is buffer else None,
    )
    return found


def _parent_of(expr, node):
    found = []

    def visit(n):
        if any(kid is node for kid in _kids(n)):
            found.append(n)

    post_order_visit(expr, visit)
    return found[0] if found else None


def _kids(node) -> list:
    return [getattr(node, f) for f in ("a", "b") if isinstance(getattr(node, f, None), E.PrimExpr)]


class _Replace(ExprMutator):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit(self, node):
        return self.new if node is self.old else super().visit(node)


def _loads(expr, buffer) -> bool:
    found = []
    post_order_visit(
        expr, lambda n: found.append(isinstance(n, E.BufferLoad) and n.buffer is buffer)
    )
    return any(found)


def fuse_reduction_epilogue(func, reduction_name, epilogue_name):
    """Returns the new function; see the module docstring."""
    tree = Tree(func)
    red = find_block(tree, reduction_name, P)
    epi = find_block(tree, epilogue_name, P)
    subject = f"{block_subject(red)}, {block_subject(epi)}"
    store = _reduction(subject, red)
    temp = store.buffer
    out, load, bias, finish, hole = _epilogue(subject, epi, temp)
    readers = [r for r in siblings(tree, red) if temp in buffers_of(r)[0]]
    if readers != [epi]:
        names = [r.block.name_hint for r in readers]
        raise schedule_error(
            P, subject, f"{temp.name} must be read by the epilogue only, not {names}"
        )
    # the epilogue's iterators, as the reduction's spatial iterators
    vmap = {}
    for mine, theirs in zip(load.indices, store.indices):
        if isinstance(mine, E.Var) and mine not in vmap:
            vmap[mine] = theirs
    epi_vars = [iv.var for iv in epi.block.iter_vars]
    missing = [v.name for v in epi_vars if v not in vmap]
    if missing or len(load.indices) != len(store.indices):
        raise schedule_error(
            P, subject,
            f"the epilogue's iterators {missing} do not index {temp.name} directly, so they "
            "do not map to the reduction's iterators",
        )  # fmt: skip
    for mine, theirs in zip(load.indices, store.indices):
        if not _same(substitute(mine, vmap), theirs):
            raise schedule_error(
                P,
                subject,
                f"the epilogue reads {temp.name} at other indices than the reduction writes",
            )
    dst = out.buffer
    if _loads(finish, dst) or (bias is not None and _loads(bias, dst)):
        raise schedule_error(
            P, subject, f"the epilogue reads its output {dst.name}, which the reduction "
            "would overwrite while it runs",
        )  # fmt: skip
    reduce_ivs = [iv for iv in red.block.iter_vars if iv.iter_type != S.IterVar.DataPar]
    reduce_vars = [iv.var for iv in reduce_ivs]
    target_indices = tuple(substitute(x, vmap) for x in out.indices)
    new_bias = None if bias is None else substitute(bias, vmap)
    new_finish = substitute(finish, vmap)
    depends = (*target_indices, new_finish, *(() if new_bias is None else (new_bias,)))
    if any(uses_any_var(x, reduce_vars) for x in depends):
        raise schedule_error(P, subject, "the epilogue would depend on the reduction iterators")
    _check_between(tree, red, epi, out.buffer, subject)
    if dst.dtype != temp.dtype:
        raise schedule_error(
            P, subject,
            f"{dst.name} is {dst.dtype} but the reduction accumulates in {temp.dtype}",
        )  # fmt: skip
    first = red.block.init.value if new_bias is None else new_bias
    init = S.BufferStore(dst, first, target_indices)
    step = binary("add", E.BufferLoad(dst, target_indices), store.value.b)
    if finish is not hole:
        # the rest of the epilogue (ReLU, clipping...) acts on the finished sum: on the
        # reduction's last step only
        _check_last_step(subject, red, reduce_ivs)
        done = substitute(new_finish, {hole: step})
        step = E.Call(step.dtype, "if_then_else", (_last_step(reduce_ivs), done, step))
    update = S.BufferStore(dst, step, target_indices)
    block = attrs.evolve(red.block, body=update, init=init)
    reads, writes = get_block_read_write_region(block)
    block = attrs.evolve(block, reads=tuple(reads), writes=tuple(writes))
    top = tree.removable_root(epi)
    return rewrite(func, {id(red.block): block, id(top): REMOVE})


def _last_step(reduce_ivs):
    """Every reduction iterator at the end of its domain."""
    cond = None
    for iv in reduce_ivs:
        last = simplify(iv.dom.min + iv.dom.extent - 1)
        eq = binary("eq", iv.var, last)
        cond = eq if cond is None else logical("and", cond, eq)
    return cond


def _check_last_step(subject, realize, reduce_ivs):
    """The step with every reduction iterator at its end must come last: each is
    bound to a sum of loop variables with non-negative coefficients (the loops run
    upwards, so that step is the last one)."""
    bindings = dict(zip((iv.var for iv in realize.block.iter_vars), realize.iter_values))
    for iv in reduce_ivs:
        form = linear_form(bindings[iv.var])
        ok = all(isinstance(atom, E.Var) and coeff > 0 for atom, coeff in form.live_terms())
        if not ok:
            raise schedule_error(
                P, subject,
                f"the reduction iterator {iv.var.name} is bound to {bindings[iv.var]}, so its "
                "last value may not be its last step, where the epilogue is applied",
                realize,
            )  # fmt: skip


def _same(a, b) -> bool:
    from tilelang.arith import linear_form

    if a.dtype.is_integer() and b.dtype.is_integer():
        form = linear_form(binary("sub", a, b))
        return form.is_const() and form.const == 0
    return a is b


def _check_between(tree, red, epi, dst, subject):
    """The output is written earlier now: nothing between the two blocks may touch it,
    and the bias must not be written between them."""
    order = tree.order
    start, end = order.index(red), order.index(epi)
    bias_buffers = buffers_of(epi)[0]
    for other in order[start + 1 : end]:
        reads, writes = buffers_of(other)
        if dst in reads or dst in writes or writes & bias_buffers:
            raise schedule_error(
                P, subject,
                f"block {other.block.name_hint!r} between them uses {dst.name} or writes "
                "what the epilogue reads",
            )  # fmt: skip

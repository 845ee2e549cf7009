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
the epilogue ``D[y] = temp[y'] + bias`` (or ``bias + temp[y']``) where each of the
epilogue's iterators indexes ``temp`` directly, so it maps to the reduction's
spatial iterators; ``temp`` must have no other reader. Only an addition is folded:
TVM also folds ReLU and clipping, applying them after every reduction step, which
computes something else than the original (max(sum + c, 0) is not the running max),
so tilelang refuses those. For floating point the bias is added first instead of
last (a reassociation, as rfactor's).
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_value
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import get_block_read_write_region, uses_any_var
from tilelang.ir.convert import binary
from tilelang.ir.functor import post_order_visit, substitute
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
    store = realize.block.body
    value = store.value if isinstance(store, S.BufferStore) else None
    if not isinstance(value, E.Add):
        raise schedule_error(
            P, subject,
            "the epilogue must be one store of temp[...] + bias (only an addition can be "
            "folded into the reduction's init without changing the result)",
            realize,
        )  # fmt: skip
    for load, bias in ((value.a, value.b), (value.b, value.a)):
        if isinstance(load, E.BufferLoad) and load.buffer is temp:
            if not _loads(bias, temp):
                return store, load, bias
    raise schedule_error(
        P, subject, f"the epilogue must add a bias to one load of {temp.name}", realize
    )


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
    out, load, bias = _epilogue(subject, epi, temp)
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
    reduce_vars = [iv.var for iv in red.block.iter_vars if iv.iter_type != S.IterVar.DataPar]
    target_indices = tuple(substitute(x, vmap) for x in out.indices)
    new_bias = substitute(bias, vmap)
    if any(uses_any_var(x, reduce_vars) for x in (*target_indices, new_bias)):
        raise schedule_error(P, subject, "the epilogue would depend on the reduction iterators")
    _check_between(tree, red, epi, out.buffer, subject)
    dst = out.buffer
    init = S.BufferStore(dst, new_bias, target_indices)
    if dst.dtype != temp.dtype:
        raise schedule_error(
            P, subject,
            f"{dst.name} is {dst.dtype} but the reduction accumulates in {temp.dtype}",
        )  # fmt: skip
    update = S.BufferStore(
        dst, binary("add", E.BufferLoad(dst, target_indices), store.value.b), target_indices
    )
    block = attrs.evolve(red.block, body=update, init=init)
    reads, writes = get_block_read_write_region(block)
    block = attrs.evolve(block, reads=tuple(reads), writes=tuple(writes))
    top = tree.removable_root(epi)
    return rewrite(func, {id(red.block): block, id(top): REMOVE})


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

"""cache_index: index computations a block repeats are computed once per value of
the iterators they use, into buffers ``index_var_<k>``, by blocks ``index_<k>``
placed before the block's statement; the block then loads them.

Before / after ``cache_index(B, "global")``::

                                                 index_var_0 = T.alloc_buffer((8, 8), "int32")
                                                 for ax0, ax1 in T.grid(8, 8):
                                                     with T.block("index_0"):
                                                         v0, v1 = T.axis.remap("SS", [ax0, ax1])
                                                         index_var_0[v0, v1] = v0 // 4 + v1 // 4
    for i, j in T.grid(8, 8):                    for i, j in T.grid(8, 8):
        with T.block("B"):                           with T.block("B"):
            B[vi, vj] = A[vi // 4 + vj // 4]             B[vi, vj] = A[index_var_0[vi, vj]]

Which computations (TVM's rule): every pure sub-expression of the block's stores that is
not a leaf, counted where it is maximal (not inside a larger pure one). A computation
seen fewer than ``cse_thresh`` times hands its count on to its direct pure
sub-expressions; those seen at least ``cse_thresh`` times are cached, the largest
first, each replaced where it occurs. tilelang counts from the largest computations to
the smallest, so that a sub-expression has all its counts before it is judged, and
compares computations structurally.

Only computations of the block's own iterators qualify (a buffer holds one value per
iterator value), and none that divides by a non-constant: the cache is filled over the
iterators' whole domains, where such a division could meet a zero the block never sees.
"""

from __future__ import annotations

from tilelang.arith import const_value, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range, decl_buffer
from tilelang.ir.functor import StmtExprMutator, post_order_visit, substitute
from tilelang.ir.node import child_fields
from tilelang.ir.structural import structural_equal
from tilelang.schedule.cache import _check_scope, rewrite_stmt
from tilelang.schedule.common import (
    block_subject,
    find_block,
    fresh_name,
    replace_scope_body,
    scope_items,
    taken_names,
    top_index,
)
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree

P = "cache_index"


def cache_index(func, name, storage_scope, cse_thresh=0):
    """Returns ``(new function, names of the index blocks)``; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, P)
    subject = block_subject(realize)
    _check_scope(P, subject, storage_scope)
    if not isinstance(cse_thresh, int) or isinstance(cse_thresh, bool) or cse_thresh < 0:
        raise schedule_error(P, subject, f"cse_thresh must be an integer >= 0, not {cse_thresh!r}")
    block = realize.block
    block_vars = {id(iv.var): iv for iv in block.iter_vars}
    chosen = []
    for store in _stores(block):
        for expr in _cached(store, block_vars, cse_thresh):
            if not any(_same(expr, c) for c in chosen):
                chosen.append(expr)
    chosen.sort(key=_size, reverse=True)  # stable: ties keep their order of appearance
    if not chosen:
        return func, []
    taken = taken_names(tree)
    stages, allocs, loads, names = [], [], [], []
    for k, expr in enumerate(chosen):
        used = _vars_in_order(expr, block_vars)
        buffer_name = fresh_name(taken, f"index_var_{k}")
        block_name = fresh_name(taken | {buffer_name}, f"index_{k}")
        taken |= {buffer_name, block_name}
        ivs = [block_vars[id(v)] for v in used]
        shape = tuple(simplify(iv.dom.min + iv.dom.extent) for iv in ivs)
        # declared with its (row-major) strides, as TVM declares index buffers
        strides = [E.IntImm(dim.dtype, 1) for dim in shape[-1:]]
        for dim in reversed(shape[1:]):
            strides.insert(0, simplify(strides[0] * dim))
        buffer = decl_buffer(shape, expr.dtype, buffer_name, strides=strides, scope=storage_scope)
        stages.append(_index_stage(block_name, buffer, expr, ivs))
        allocs.append(buffer)
        loads.append((expr, E.BufferLoad(buffer, tuple(used))))
        names.append(block_name)
    new_block = _Replace(loads).visit(block)
    scope, items = scope_items(tree, realize)
    position = top_index(tree, items, realize)
    items[position] = rewrite_stmt(items[position], {id(block): new_block})
    items[position:position] = stages
    return replace_scope_body(func, scope, items, allocs), names


def _stores(block) -> list:
    """The stores of the block (body and init), not those of nested blocks."""
    found = []

    def walk(stmt):
        if isinstance(stmt, S.BufferStore):
            found.append(stmt)
        if isinstance(stmt, (S.Block, S.BlockRealize)):
            return
        for name in child_fields(type(stmt)):
            value = getattr(stmt, name)
            for kid in value if isinstance(value, tuple) else (value,):
                if isinstance(kid, S.Stmt):
                    walk(kid)

    for part in (block.init, block.body):
        if part is not None:
            walk(part)
    return found


def _size(expr) -> int:
    """TVM's expression complexity: the number of nodes."""
    count = [0]
    post_order_visit(expr, lambda _n: count.__setitem__(0, count[0] + 1))
    return count[0]


def _is_leaf(expr) -> bool:
    return isinstance(expr, (E.Var, E.IntImm, E.FloatImm, E.StringImm))


def _children(expr) -> list:
    out = []
    for name in child_fields(type(expr)):
        value = getattr(expr, name)
        for kid in value if isinstance(value, tuple) else (value,):
            if isinstance(kid, E.PrimExpr):
                out.append(kid)
    return out


def _eligible(expr, block_vars) -> bool:
    """A pure, non-leaf computation of the block's iterators, with no division by a
    non-constant."""
    if _is_leaf(expr) or isinstance(expr, (E.Ramp, E.Broadcast, E.Let)):
        return False
    ok = [True]

    def visit(node):
        if isinstance(node, E.BufferLoad) or isinstance(node, (E.Ramp, E.Broadcast, E.Let)):
            ok[0] = False
        elif isinstance(node, E.Call) and node.op not in _PURE_CALLS:
            ok[0] = False
        elif isinstance(node, E.Var) and id(node) not in block_vars:
            ok[0] = False
        elif isinstance(node, (E.Div, E.Mod, E.FloorDiv, E.FloorMod)):
            if const_value(node.b) is None and not isinstance(node.b, E.FloatImm):
                ok[0] = False

    post_order_visit(expr, visit)
    return ok[0]


#: calls without side effects whose value depends only on their arguments
_PURE_CALLS = frozenset(
    "floor ceil round trunc nearbyint fabs abs exp exp2 exp10 log log2 log10 sqrt rsqrt "
    "sin cos tan tanh sigmoid pow fmod if_then_else shift_left shift_right bitwise_and "
    "bitwise_or bitwise_xor bitwise_not min max".split()
)


def _maximal(expr, block_vars, out) -> None:
    """The largest eligible computations inside ``expr`` (``expr`` itself if it is)."""
    if _eligible(expr, block_vars):
        out.append(expr)
        return
    for kid in _children(expr):
        _maximal(kid, block_vars, out)


def _direct(expr, block_vars) -> list:
    out = []
    for kid in _children(expr):
        _maximal(kid, block_vars, out)
    return out


def _same(a, b) -> bool:
    return a is b or structural_equal(a, b)


def _cached(store, block_vars, thresh) -> list:
    found = []
    for part in (store.value, *store.indices):
        _maximal(part, block_vars, found)
    counts = []  # [expr, count] per distinct computation
    for expr in found:
        _bump(counts, expr, 1)
    done = 0
    while True:
        pending = [c for c in counts[done:]]
        if not pending:
            break
        # the largest computation not yet judged: every larger one has handed on its count
        counts[done:] = sorted(pending, key=lambda c: _size(c[0]), reverse=True)
        expr, count = counts[done]
        done += 1
        if count < thresh:
            for sub in _direct(expr, block_vars):
                _bump(counts, sub, count)
    selected = [c[0] for c in counts if c[1] >= thresh]
    order = []
    post_order_visit(
        store.value,
        lambda n: order.extend(
            e for e in selected if _same(n, e) and not any(e is o for o in order)
        ),
    )
    return order


def _bump(counts, expr, by) -> None:
    for entry in counts:
        if _same(entry[0], expr):
            entry[1] += by
            return
    counts.append([expr, by])


def _vars_in_order(expr, block_vars) -> list:
    seen = []
    post_order_visit(
        expr,
        lambda n: (
            seen.append(n)
            if isinstance(n, E.Var) and id(n) in block_vars and not any(n is s for s in seen)
            else None
        ),
    )
    return seen


def _index_stage(name, buffer, expr, ivs):
    """``for ax...: with T.block(name): buffer[v...] = expr(v...)`` over the iterators'
    domains."""
    loop_vars = [E.Var(f"ax{d}", iv.dom.extent.dtype) for d, iv in enumerate(ivs)]
    new_ivs = tuple(
        S.IterVar(iv.dom, E.Var(f"v{d}", iv.var.dtype), S.IterVar.DataPar)
        for d, iv in enumerate(ivs)
    )
    vmap = {old.var: new.var for old, new in zip(ivs, new_ivs)}
    indices = tuple(iv.var for iv in new_ivs)
    region = tuple(Range(v, E.IntImm(v.dtype, 1)) for v in indices)
    body = S.BufferStore(buffer, substitute(expr, vmap), indices)
    block = S.Block(new_ivs, (), (BufferRegion(buffer, region),), name, body)
    values = tuple(
        ax if const_value(iv.dom.min) == 0 else iv.dom.min + ax for ax, iv in zip(loop_vars, ivs)
    )
    stmt = S.BlockRealize(values, E.IntImm("bool", 1), block)
    for ax, iv in reversed(list(zip(loop_vars, ivs))):
        stmt = S.For(ax, E.IntImm(ax.dtype, 0), iv.dom.extent, S.ForKind.SERIAL, stmt)
    return stmt


class _ReplaceExpr(StmtExprMutator):
    """Each cached computation, top-down, becomes a load of its buffer."""

    def __init__(self, expr, load):
        self.expr, self.load = expr, load

    def visit(self, node):
        if isinstance(node, E.PrimExpr) and not _is_leaf(node) and _same(node, self.expr):
            return self.load
        return super().visit(node)


class _Replace(StmtExprMutator):
    def __init__(self, loads):
        self.loads = loads

    def visit_block_realize(self, op):
        return op  # nested blocks keep their own computations

    def visit_buffer_store(self, op):
        for expr, load in self.loads:
            op = _ReplaceExpr(expr, load).visit(op)
        return op

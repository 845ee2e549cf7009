"""transform_layout: a buffer is stored in a new layout given by an index map, and
every access is rewritten through the map.

Before / after ``transform_layout(B, ("write", 0), lambda i, j: (i // 4, j, i % 4))``
on a (16, 8) buffer::

    B = T.alloc_buffer((16, 8))                  B = T.alloc_buffer((4, 8, 4))
    B[vi, vj] = A[vi, vj] * 2.0                  B[vi // 4, vj, vi % 4] = A[vi, vj] * 2.0
    C[vi, vj] = B[vi, vj] + 1.0                  C[vi, vj] = B[vi // 4, vj, vi % 4] + 1.0

The map takes one index per dimension and returns the new indices. The new shape is
the range of each output over the buffer (each must start at 0). The map must be
one-to-one, checked by evaluating it over every index of the (constant-shaped)
buffer; when the new shape has more elements than the buffer (``i // 4, i % 4`` of
14 rows makes 16), the extra ones are padding: ``pad_value`` is then required, and a
block writing it into the padding runs before the buffer is first written (so padding
reads see ``pad_value``). The padding is found by inverting the map over the buffer's
axes rounded up to the map's divisors (``i`` over 16: ``i = v0 * 4 + v1``, padding
where ``i >= 14``); a map that cannot be inverted so gets the whole buffer filled
first instead. A function parameter can be re-laid out (the caller then passes the
new shape) but not padded. ``IndexMap.AXIS_SEPARATOR`` between two outputs
(``lambda i, j: (i, IndexMap.AXIS_SEPARATOR, j)``) sets the new buffer's
``axis_separators`` there, as TVM's transform_layout does.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from tilelang.arith import const_value, eval_interval, simplify
from tilelang.arith.iter_inverse import inverse_map
from tilelang.arith.linear import scale_ordered
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import get_block_read_write_region
from tilelang.ir.buffer import Range
from tilelang.ir.convert import binary, convert, logical
from tilelang.ir.functor import StmtExprMutator, post_order_visit
from tilelang.ir.var_usage import uses_var
from tilelang.schedule.common import block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.index_map import split_separators
from tilelang.schedule.inline import allocated_in
from tilelang.schedule.reindex import resolve_buffer
from tilelang.schedule.state import Tree, rewrite

P = "transform_layout"
MAX_CHECKED = 1 << 22  # elements enumerated to prove the map one-to-one

_NUMPY = {
    E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.FloorDiv: np.floor_divide,
    E.FloorMod: np.mod, E.Min: np.minimum, E.Max: np.maximum,
}  # fmt: skip


def _evaluate(expr, env):
    """``expr`` over numpy arrays of index values (``env``: Var -> array)."""
    if isinstance(expr, E.Var):
        return env[expr]
    if isinstance(expr, E.IntImm):
        return np.int64(expr.value)
    if isinstance(expr, E.Cast):
        return _evaluate(expr.value, env)
    op = _NUMPY.get(type(expr))
    if op is None:
        raise TypeError(f"cannot evaluate {type(expr).__name__} in an index map")
    return op(_evaluate(expr.a, env), _evaluate(expr.b, env))


def _apply_map(subject, index_map, buffer):
    variables = [E.Var(f"i{d}", x.dtype) for d, x in enumerate(buffer.shape)]
    try:
        outputs = index_map(*variables)
    except Exception as error:  # the user's function: say that it failed, and how
        raise schedule_error(P, subject, f"the index map failed: {error}") from None
    outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
    outputs, separators = split_separators(outputs)
    outputs = [convert(x) for x in outputs]
    ok = all(0 < x < len(outputs) for x in separators)
    if not ok or any(a >= b for a, b in zip(separators, separators[1:])):
        raise schedule_error(
            P, subject, "IndexMap.AXIS_SEPARATOR must stand between outputs, at most once there"
        )
    return variables, outputs, separators


def _new_shape(subject, buffer, variables, outputs):
    dom = {v: Range(0, extent) for v, extent in zip(variables, buffer.shape)}
    shape = []
    for out in outputs:
        lo, hi = eval_interval(out, dom)
        lo, hi = const_value(lo), const_value(hi)
        if lo is None or hi is None:
            raise schedule_error(P, subject, f"cannot bound the new index {out}")
        if lo != 0:
            raise schedule_error(P, subject, f"the new index {out} starts at {lo}, not 0")
        shape.append(hi + 1)
    return shape


def _check_one_to_one(subject, buffer, variables, outputs, shape) -> bool:
    """True when the map is a bijection, False when it is one-to-one with padding;
    raises when it sends two indices to one place."""
    extents = [const_value(x) for x in buffer.shape]
    if None in extents:
        raise schedule_error(
            P, subject, f"{buffer.name} has a symbolic shape; cannot check the map"
        )
    count = int(np.prod(extents, dtype=np.int64))
    if count > MAX_CHECKED:
        raise schedule_error(P, subject, f"{buffer.name} is too large ({count}) to check the map")
    grids = np.meshgrid(*[np.arange(n, dtype=np.int64) for n in extents], indexing="ij")
    env = dict(zip(variables, grids))
    try:
        values = [np.broadcast_to(_evaluate(out, env), grids[0].shape) for out in outputs]
    except TypeError as error:
        raise schedule_error(P, subject, str(error)) from None
    flat = np.ravel_multi_index([v.ravel() for v in values], shape) if values else np.zeros(1)
    if len(np.unique(flat)) != count:
        raise schedule_error(P, subject, "the index map sends two elements to the same place")
    return int(np.prod(shape, dtype=np.int64)) == count


class _Relayout(StmtExprMutator):
    def __init__(self, old, new, variables, outputs):
        self.old, self.new = old, new
        self.variables, self.outputs = variables, outputs

    def _map(self, indices):
        from tilelang.ir.functor import substitute

        vmap = dict(zip(self.variables, indices))
        return tuple(substitute(out, vmap) for out in self.outputs)

    def visit_buffer_load(self, op):
        new = self.generic_visit(op)
        if op.buffer is not self.old:
            return new
        return E.BufferLoad(self.new, self._map(new.indices), predicate=new.predicate, span=op.span)

    def visit_buffer_store(self, op):
        new = self.generic_visit(op)
        if op.buffer is not self.old:
            return new
        return S.BufferStore(
            self.new, new.value, self._map(new.indices), predicate=new.predicate, span=op.span
        )

    def visit_buffer_def(self, buffer):
        return self.new if buffer is self.old else buffer

    def visit_block(self, op):
        new = self.generic_visit(op)
        touched = [r for r in (*op.reads, *op.writes) if r.buffer is self.old]
        if not touched:
            return new
        reads, writes = get_block_read_write_region(attrs.evolve(new, reads=(), writes=()))
        return attrs.evolve(new, reads=tuple(reads), writes=tuple(writes))


def transform_layout(func, name, buffer_index, index_map, pad_value=None):
    """Returns the new function; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, P)
    subject = block_subject(realize)
    buffer, _ = resolve_buffer(P, realize, buffer_index)
    views = []
    post_order_visit(func.body, lambda n: views.extend(
        m for m in getattr(n, "match_buffers", ()) if m.source.buffer is buffer))  # fmt: skip
    if views:
        raise schedule_error(P, subject, f"{buffer.name} is matched by a T.match_buffer view")
    variables, outputs, separators = _apply_map(subject, index_map, buffer)
    shape = _new_shape(subject, buffer, variables, outputs)
    exact = _check_one_to_one(subject, buffer, variables, outputs, shape)
    owner = allocated_in(tree, buffer)
    if not exact and pad_value is None:
        raise schedule_error(
            P, subject,
            f"the new shape {shape} has more elements than {buffer.name}: give a pad_value "
            "for the padding",
        )  # fmt: skip
    if not exact and owner is None:
        raise schedule_error(
            P, subject, f"{buffer.name} is a function parameter: its padding cannot be filled"
        )
    dtype = buffer.shape[0].dtype if buffer.shape else "int32"
    new_shape = tuple(E.IntImm(dtype, n) for n in shape)
    new = attrs.evolve(
        buffer,
        shape=new_shape,
        strides=(),
        elem_offset=buffer.elem_offset,
        axis_separators=separators,  # a new layout has only the groups its map marks
    )
    relayout = _Relayout(buffer, new, variables, outputs)
    body = relayout.visit(func.body)
    buffer_map = {p: (new if b is buffer else b) for p, b in func.buffer_map.items()}
    func = attrs.evolve(func.with_body(body), buffer_map=buffer_map)
    if not exact:
        old_shape = [const_value(x) for x in buffer.shape]
        func = _fill_padding(func, new, pad_value, variables, outputs, old_shape)
    return func


def _fill_padding(func, buffer, pad_value, variables, outputs, old_shape):
    """A block writing ``pad_value`` into the padding of ``buffer`` (all of it when
    the padding cannot be told apart), first in the scope that allocates it."""
    tree = Tree(func)
    owner = allocated_in(tree, buffer)
    block = owner.block if isinstance(owner, S.BlockRealize) else owner
    ivs = [S.IterVar(Range(0, n), E.Var(f"v{d}", n.dtype), S.IterVar.DataPar)
           for d, n in enumerate(buffer.shape)]  # fmt: skip
    if callable(pad_value):  # a function of the new indices, as TVM allows
        pad_value = pad_value(*[iv.var for iv in ivs])
    value = convert(pad_value, buffer.dtype)
    loops = [E.Var(f"ax{d}", n.dtype) for d, n in enumerate(buffer.shape)]
    store = S.BufferStore(buffer, value, tuple(iv.var for iv in ivs))
    fill = S.Block(tuple(ivs), (), (), f"{buffer.name}_pad", store)
    reads, writes = get_block_read_write_region(fill)
    fill = attrs.evolve(fill, writes=tuple(writes))
    where = _padding_predicate(variables, outputs, old_shape, buffer.shape, loops)
    stmt = S.BlockRealize(tuple(loops), E.IntImm("bool", 1) if where is None else where, fill)
    for loop, n in reversed(list(zip(loops, buffer.shape))):
        stmt = S.For(loop, E.IntImm(n.dtype, 0), n, S.ForKind.SERIAL, stmt)
    new_block = attrs.evolve(block, body=S.seq_stmt(stmt, block.body))
    return rewrite(func, {id(block): new_block})


def _padding_predicate(variables, outputs, old_shape, new_shape, new_indices):
    """Where the new indices ``new_indices`` fall in the padding, or None when the map
    does not invert over the old axes rounded up to its divisors."""
    extended = []
    for var, extent in zip(variables, old_shape):
        step = 1
        for out in outputs:
            for divisor in _divisors_of(out, var):
                step = math.lcm(step, divisor)
        extended.append(-(-extent // step) * step)
    sizes = [const_value(x) for x in new_shape]
    if None in sizes or math.prod(extended) != math.prod(sizes):
        return None
    iters = {v: Range(0, n) for v, n in zip(variables, extended)}
    inverse = inverse_map(outputs, iters, list(new_indices))
    # inverse_map builds TVM's unsimplified expressions; the rewritten IR wants them simplified
    inverse = (
        None if inverse is None else {k: scale_ordered(simplify(v)) for k, v in inverse.items()}
    )
    if inverse is None:
        return None
    where = None
    for var, old, ext in zip(variables, old_shape, extended):
        if ext != old:
            outside = binary("le", E.IntImm(var.dtype, old), simplify(inverse[var]))
            where = outside if where is None else logical("or", where, outside)
    return where


def _divisors_of(expr, var) -> list:
    """The constant divisors and moduli applied to expressions of ``var``."""
    found = []

    def visit(node):
        if isinstance(node, (E.FloorDiv, E.FloorMod)) and uses_var(node.a, var):
            value = const_value(node.b)
            if value is not None and value > 0:
                found.append(value)

    post_order_visit(expr, visit)
    return found

"""set_axis_separator: a buffer's axes are grouped into physical axes (TVM's
``axis_separators``); only the buffer's declaration changes, every access stays.

Before / after ``set_axis_separator(B, ("write", 0), [1])``::

    B = T.alloc_buffer((128, 128))               B = T.alloc_buffer((128, 128), axis_separators=[1])

The separators are increasing axis positions strictly inside the buffer's rank. A
function parameter changes in the function's signature. A ``T.match_buffer`` view of
the buffer (and a view of that view) gets separators too, as TVM gives them: the
same ones when it has the buffer's rank, else as many zeros (a scalar view of a
2-d buffer separated at 1 gets ``axis_separators=[0]``)::

    S = T.match_buffer(B[vi, vj], ())         S = T.match_buffer(B[vi, vj], (), axis_separators=[0])

A buffer that is itself a ``match_buffer`` view is refused (its storage is another
buffer's, whose layout decides).
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.functor import StmtExprMutator, post_order_visit
from tilelang.schedule.common import block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.reindex import resolve_buffer
from tilelang.schedule.state import Tree

P = "set_axis_separator"


def set_axis_separator(func, name, buffer_index, axis_separators):
    """Returns the new function; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, P)
    subject = block_subject(realize)
    buffer, _ = resolve_buffer(P, realize, buffer_index)
    separators = _separators(subject, buffer, axis_separators)
    views = []
    post_order_visit(func.body, lambda n: views.extend(
        m.buffer for m in getattr(n, "match_buffers", ()) if m.buffer is buffer))  # fmt: skip
    if views:
        raise schedule_error(
            P, subject, f"{buffer.name} is a T.match_buffer view; set the separators of the "
            "buffer it views",
        )  # fmt: skip
    new = attrs.evolve(buffer, axis_separators=separators)
    body = _Separate(buffer, new).visit(func.body)
    buffer_map = {p: (new if b is buffer else b) for p, b in func.buffer_map.items()}
    return attrs.evolve(func.with_body(body), buffer_map=buffer_map)


class _Separate(StmtExprMutator):
    """Replaces ``old`` by ``new`` everywhere, and each view matched to a region of a
    replaced buffer by a copy with separators (transitively), as TVM's
    BufferAxisSeparatorMutator does."""

    def __init__(self, old, new):
        self.map = {old: new}

    def visit_block(self, op):
        for match in op.match_buffers:
            source = self.map.get(match.source.buffer)
            if source is not None and match.buffer not in self.map:
                count = len(source.axis_separators)
                same_rank = len(match.buffer.shape) == len(source.shape)
                separators = source.axis_separators if same_rank else (0,) * count
                self.map[match.buffer] = attrs.evolve(match.buffer, axis_separators=separators)
        return self.generic_visit(op)

    def visit_buffer_ref(self, buffer):
        return self.map.get(buffer, buffer)

    visit_buffer_def = visit_buffer_ref


def _separators(subject, buffer, values) -> tuple:
    ints = []
    for value in values if isinstance(values, (list, tuple)) else [None]:
        value = value.value if isinstance(value, E.IntImm) else value
        ints.append(value if isinstance(value, int) and not isinstance(value, bool) else None)
    ndim = len(buffer.shape)
    ok = None not in ints and all(0 < x < ndim for x in ints)
    if not ok or any(a >= b for a, b in zip(ints, ints[1:])):
        raise schedule_error(
            P, subject,
            f"axis separators must be increasing axis positions between 1 and {ndim - 1} "
            f"for {ndim}-d {buffer.name}, not {values!r}",
        )  # fmt: skip
    return tuple(ints)

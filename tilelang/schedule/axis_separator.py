"""set_axis_separator: a buffer's axes are grouped into physical axes (TVM's
``axis_separators``); only the buffer's declaration changes, every access stays.

Before / after ``set_axis_separator(B, ("write", 0), [1])``::

    B = T.alloc_buffer((128, 128))               B = T.alloc_buffer((128, 128), axis_separators=[1])

The separators are increasing axis positions strictly inside the buffer's rank. A
function parameter changes in the function's signature. A buffer that a
``T.match_buffer`` views is refused (the view would need separators of its own).
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.functor import post_order_visit
from tilelang.schedule.cache import swap_buffer
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
        m for m in getattr(n, "match_buffers", ()) if m.source.buffer is buffer))  # fmt: skip
    if views:
        raise schedule_error(
            P, subject, f"{buffer.name} is viewed by T.match_buffer {views[0].buffer.name}"
        )
    new = attrs.evolve(buffer, axis_separators=separators)
    body = swap_buffer(func.body, buffer, new)
    buffer_map = {p: (new if b is buffer else b) for p, b in func.buffer_map.items()}
    return attrs.evolve(func.with_body(body), buffer_map=buffer_map)


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

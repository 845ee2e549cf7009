"""set_scope: the storage scope of an allocated buffer, and of the ``match_buffer``
views of it, which live where it lives (TVM gives them the scope too)."""

from __future__ import annotations

import attrs

from tilelang.ir.functor import StmtExprMutator
from tilelang.schedule.cache import _check_scope, _pick, _regions
from tilelang.schedule.common import block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import allocated_in
from tilelang.schedule.state import Tree


class _Rescope(StmtExprMutator):
    """Replaces ``old`` by ``new`` everywhere, and each buffer matched to a region of
    a replaced buffer by a copy in ``scope`` (transitively)."""

    def __init__(self, old, new, scope):
        self.map, self.scope = {old: new}, scope

    def visit_block(self, op):
        for match in op.match_buffers:
            if match.source.buffer in self.map and match.buffer not in self.map:
                self.map[match.buffer] = attrs.evolve(match.buffer, scope=self.scope)
        return self.generic_visit(op)

    def visit_buffer_ref(self, buffer):
        return self.map.get(buffer, buffer)

    def visit_buffer_def(self, buffer):
        return self.map.get(buffer, buffer)


def set_scope(func, name, index, scope):
    """Changes the storage scope of buffer ``writes[index]`` of block ``name``.

    Before / after ``set_scope(B, 0, "shared")``::

        B = T.alloc_buffer((128,))               B = T.alloc_buffer((128,), scope="shared")
    """
    tree = Tree(func)
    realize = find_block(tree, name, "set_scope")
    subject = block_subject(realize)
    _check_scope("set_scope", subject, scope)
    buffer = _pick("set_scope", realize, index, _regions(realize.block)[1], "write")
    if allocated_in(tree, buffer) is None:
        raise schedule_error(
            "set_scope", subject, f"{buffer.name} is a function parameter, not an allocated buffer"
        )
    rescope = _Rescope(buffer, attrs.evolve(buffer, scope=scope), scope)
    return func.with_body(rescope.visit(func.body))

"""annotate_buffer_access: declares the region a block reads or writes of a buffer,
instead of the one inferred from its body (e.g. a halo a later compute_at must
provide, or a data-dependent gather whose inferred region is the whole buffer).

Before / after ``annotate_buffer_access(B, 0, "read", lambda vi, vj: ((vi - 1, vi + 1),
(vj - 1, vj + 1)))``::

    with T.block("B"):                       with T.block("B"):
        vi, vj = T.axis.remap("SS", ...)         vi, vj = T.axis.remap("SS", ...)
        T.reads(A[vi, vj])                       T.reads(A[vi - 1:vi - 1 + 2, vj - 1:vj - 1 + 2])
        ...                                      T.block_attr({"explicit_read_region": [0]})

The function maps the block's iterators to one ``(begin, end)`` pair (end exclusive)
per dimension of the buffer, or a bare index for a dimension accessed at one point. The
annotation ``explicit_read_region`` / ``explicit_write_region`` lists the indices whose
regions were declared, so that region inference keeps them.
"""

from __future__ import annotations

import attrs

from tilelang.arith import simplify
from tilelang.ir import expr as E
from tilelang.ir.buffer import BufferRegion, Range
from tilelang.ir.convert import binary, convert
from tilelang.schedule.common import block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree, rewrite


class RegionMap:
    """A user's index function (``lambda *iters: ((begin, end), ...)`` here, or an
    index map for transform_layout), printable in a trace as a lambda."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)

    def render(self, iter_vars) -> str:
        items = self.fn(*iter_vars)
        items = items if isinstance(items, (tuple, list)) else [items]
        body = ", ".join(
            "(" + ", ".join(map(str, x)) + ")" if isinstance(x, (tuple, list)) else str(x)
            for x in items
        )
        names = ", ".join(v.name for v in iter_vars)
        return f"lambda {names}: ({body},)"

    def __repr__(self) -> str:
        try:
            return self.render([E.Var(f"v{i}", "int32") for i in range(self._arity())])
        except Exception:  # a trace must print even when the function does not
            return "<region function>"

    def _arity(self) -> int:
        import inspect

        return len(inspect.signature(self.fn).parameters)


def annotate_buffer_access(func, name, buffer_index, buf_type, gen_new_ranges):
    """Returns the new function; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, "annotate_buffer_access")
    block, subject = realize.block, block_subject(realize)
    if buf_type not in ("read", "write"):
        raise schedule_error(
            "annotate_buffer_access",
            subject,
            f'buf_type must be "read" or "write", not {buf_type!r}',
        )
    regions = block.reads if buf_type == "read" else block.writes
    if not isinstance(buffer_index, int) or not 0 <= buffer_index < len(regions):
        raise schedule_error(
            "annotate_buffer_access", subject,
            f"{buf_type} buffer index {buffer_index!r} is out of range; the block {buf_type}s "
            f"{[r.buffer.name for r in regions]}",
        )  # fmt: skip
    buffer = regions[buffer_index].buffer
    try:
        pairs = list(gen_new_ranges(*[iv.var for iv in block.iter_vars]))
    except Exception as error:  # the user's function: say it failed, and how
        raise schedule_error(
            "annotate_buffer_access", subject, f"the region function failed: {error}"
        ) from None
    # a bare index stands for the one element it names
    pairs = [(p, binary("add", convert(p), 1)) if _is_index(p) else p for p in pairs]
    if len(pairs) != len(buffer.shape) or not all(
        isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs
    ):
        raise schedule_error(
            "annotate_buffer_access", subject,
            f"the region function must give {len(buffer.shape)} (begin, end) pairs for "
            f"{buffer.name}, not {pairs!r}",
        )  # fmt: skip
    ranges = []
    for begin, end in pairs:
        begin, end = convert(begin), convert(end)
        ranges.append(Range(begin, simplify(binary("sub", end, begin))))
    new_regions = list(regions)
    new_regions[buffer_index] = BufferRegion(buffer, tuple(ranges))
    key = f"explicit_{buf_type}_region"
    indices = [x for x in block.annotations.get(key, ()) if _int(x) != buffer_index]
    indices.append(E.IntImm("int32", buffer_index))
    changes = {"reads" if buf_type == "read" else "writes": tuple(new_regions)}
    new_block = attrs.evolve(block, annotations={**block.annotations, key: indices}, **changes)
    return rewrite(func, {id(block): new_block})


def _is_index(value) -> bool:
    return isinstance(value, (int, E.PrimExpr)) and not isinstance(value, bool)


def _int(value):
    return value.value if isinstance(value, E.IntImm) else value

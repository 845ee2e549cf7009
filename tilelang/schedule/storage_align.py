"""storage_align: asks for the strides of a buffer a block writes to be padded, so
that ``stride[axis] % factor == offset`` (written as the block annotation
``buffer_dim_align``; compaction pads the strides when lowering, see
:mod:`tilelang.transform.storage_align`).

Before / after ``storage_align(B, 0, axis=0, factor=128, offset=127)``::

    with T.block("B"):                       with T.block("B"):
        ...                                      T.block_attr({"buffer_dim_align": [[0, 0, 128, 127]]})
        B[vi, vj] = A[vi, vj] * 2.0              B[vi, vj] = A[vi, vj] * 2.0

Another request for the same buffer and axis replaces the earlier one.
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.analysis import get_block_read_write_region
from tilelang.schedule.common import block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import allocated_in
from tilelang.schedule.state import Tree, rewrite
from tilelang.transform.storage_align import ANNOTATION


def _plain_int(value):
    return value.value if isinstance(value, E.IntImm) else value


def _entries(primitive, subject, value) -> list:
    """The existing annotation as ``[[index, axis, factor, offset], ...]`` of ints."""
    entries = []
    ok = isinstance(value, (list, tuple))
    for entry in value if ok else ():
        if not isinstance(entry, (list, tuple)) or len(entry) != 4:
            ok = False
            break
        ints = [_plain_int(x) for x in entry]
        if not all(isinstance(x, int) for x in ints):
            ok = False
            break
        entries.append(ints)
    if not ok:
        raise schedule_error(
            primitive, subject,
            f"its {ANNOTATION} annotation {value!r} is not a list of "
            "[buffer_index, axis, factor, offset]",
        )  # fmt: skip
    return entries


def storage_align(func, name, buffer_index, axis, factor, offset):
    """Returns the new function; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, "storage_align")
    block, subject = realize.block, block_subject(realize)
    writes = block.writes if block.reads or block.writes else get_block_read_write_region(block)[1]
    if not isinstance(buffer_index, int) or not 0 <= buffer_index < len(writes):
        raise schedule_error(
            "storage_align", subject,
            f"write buffer index {buffer_index!r} is out of range; the block writes "
            f"{[r.buffer.name for r in writes]}",
        )  # fmt: skip
    buffer = writes[buffer_index].buffer
    ndim = len(buffer.shape)
    if not isinstance(axis, int) or not -ndim <= axis < ndim:
        raise schedule_error(
            "storage_align", subject, f"axis {axis!r} is out of range for {ndim}-d {buffer.name}"
        )
    if not isinstance(factor, int) or factor <= 0:
        raise schedule_error("storage_align", subject, f"factor must be positive, not {factor!r}")
    if not isinstance(offset, int) or offset < 0:
        raise schedule_error("storage_align", subject, f"offset must be >= 0, not {offset!r}")
    if allocated_in(tree, buffer) is None:
        raise schedule_error(
            "storage_align", subject,
            f"{buffer.name} is not allocated inside the function (a parameter's layout is "
            "fixed by the caller)",
        )  # fmt: skip
    axis = axis + ndim if axis < 0 else axis
    entries = _entries("storage_align", subject, block.annotations.get(ANNOTATION, []))
    entries = [e for e in entries if (e[0], e[1]) != (buffer_index, axis)]
    entries.append([buffer_index, axis, factor, offset])
    annotations = {**block.annotations, ANNOTATION: entries}
    return rewrite(func, {id(block): attrs.evolve(block, annotations=annotations)})

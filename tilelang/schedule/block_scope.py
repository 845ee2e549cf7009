"""Dependencies between the blocks of one scope (TVM's ``BlockScope``).

The blocks directly inside a scope block run in program order; a later block depends
on an earlier one through a buffer when it reads what the earlier one writes (RAW),
writes it too (WAW), or writes what the earlier one reads (WAR).
"""

from __future__ import annotations

import enum

from tilelang.ir import stmt as S
from tilelang.schedule.navigation import block_buffers
from tilelang.schedule.state import stmt_children


class DepKind(enum.IntEnum):
    """The kind of a dependency (TVM's ``DepKind``)."""

    RAW = 0
    WAW = 1
    WAR = 2
    OPAQUE = 3


class Dependency:
    """``dst`` depends on ``src`` (both block references) through a buffer: ``kind``."""

    __slots__ = ("src", "dst", "kind")

    def __init__(self, src, dst, kind: DepKind):
        self.src, self.dst, self.kind = src, dst, kind

    def __repr__(self) -> str:
        return f"Dependency({self.src!r} -> {self.dst!r}, {self.kind.name})"


def child_blocks(block: S.Block) -> list:
    """The blocks directly inside ``block`` (not inside its child blocks), in order."""
    out, stack = [], [block.body]
    while stack:
        node = stack.pop()
        if isinstance(node, S.BlockRealize):
            out.append(node.block)
            continue
        stack.extend(reversed(stmt_children(node)))
    return out


class BlockScope:
    """The dependencies among the child blocks of one scope block of a
    :class:`~tilelang.schedule.schedule_state.ScheduleState`."""

    def __init__(self, state, root_sref):
        self.root = root_sref
        self._by_src: dict[int, list[Dependency]] = {}
        self._by_dst: dict[int, list[Dependency]] = {}
        readers: dict[object, list] = {}
        writers: dict[object, list] = {}
        for block in child_blocks(root_sref.stmt):
            sref = state.get_sref(block)
            reads, writes = block_buffers(block)
            found = []
            for buffer in reads:
                found += [(w, DepKind.RAW) for w in writers.get(buffer, ())]
            for buffer in writes:
                found += [(w, DepKind.WAW) for w in writers.get(buffer, ())]
                found += [(r, DepKind.WAR) for r in readers.get(buffer, ())]
            seen = set()
            for src, kind in found:
                if (id(src), kind) in seen or src is sref:
                    continue
                seen.add((id(src), kind))
                dep = Dependency(src, sref, kind)
                self._by_src.setdefault(id(src), []).append(dep)
                self._by_dst.setdefault(id(sref), []).append(dep)
            for buffer in reads:
                readers.setdefault(buffer, []).append(sref)
            for buffer in writes:
                writers.setdefault(buffer, []).append(sref)

    def get_deps_by_src(self, block_sref) -> list[Dependency]:
        """The dependencies whose source is ``block_sref``."""
        return list(self._by_src.get(id(block_sref), ()))

    def get_deps_by_dst(self, block_sref) -> list[Dependency]:
        """The dependencies whose destination is ``block_sref``."""
        return list(self._by_dst.get(id(block_sref), ()))

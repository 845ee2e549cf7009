"""The schedule state (TVM's ``ScheduleState``): the IRModule a schedule works on,
stable references to its blocks and loops (:class:`StmtSRef`), and ``replace``, the
one way to change the module through the state.

tilelang's IR is immutable, so a replacement copies the path from the function's
root to the replaced statement (TVM writes in place when nothing else holds a node;
the result is the same IR, and nodes held elsewhere never change). A reference keeps
pointing at its block or loop across replacements: at the same node when it is kept,
at its copy when it lies on the copied path, at the new block named in
``block_sref_reuse`` or the new loop over the same variable, and at nothing
(``stmt is None``) when its statement was removed.
"""

from __future__ import annotations

import attrs

from tilelang.errors import ScheduleError
from tilelang.ir import stmt as S
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.ir.node import child_fields
from tilelang.schedule.state import stmt_children


class StmtSRef:
    """A reference to a block or loop of a :class:`ScheduleState`'s module that follows
    it through replacements. ``stmt`` is the current node (None once removed) and
    ``parent`` the reference of the enclosing block or loop (None at a function's root)."""

    __slots__ = ("_state", "stmt")

    def __init__(self, state, stmt):
        self._state = state
        self.stmt = stmt

    @property
    def parent(self) -> StmtSRef | None:
        if self.stmt is None:
            return None
        entry = self._state._index().get(id(self.stmt))
        if entry is None or entry[1] is None:
            return None
        return self._state._sref(entry[1])

    def same_as(self, other) -> bool:
        return self is other

    def __repr__(self) -> str:
        what = type(self.stmt).__name__ if self.stmt is not None else "removed"
        name = getattr(self.stmt, "name_hint", None) or getattr(
            getattr(self.stmt, "loop_var", None), "name", ""
        )
        return f"StmtSRef({what} {name})".replace(" )", ")")


def _is_sref_node(node) -> bool:
    return isinstance(node, (S.Block, S.For))


class ScheduleState:
    """The module a schedule works on, with references to its blocks and loops.

    ``ScheduleState(mod)`` takes an IRModule or a PrimFunc (kept as ``"main"``);
    ``debug_mask`` and ``enable_check`` are accepted for TVM compatibility (every
    check always runs).
    """

    def __init__(self, mod, debug_mask=None, enable_check=True):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise ScheduleError(
                f"ScheduleState: expects an IRModule or a PrimFunc, not {type(mod).__name__}"
            )
        self._mod = mod
        self._srefs: dict[int, StmtSRef] = {}
        self._index_cache = None  # (mod, {id(node): (node, parent block/loop, func name)})

    @property
    def mod(self) -> IRModule:
        """The current IRModule."""
        return self._mod

    # ------------------------------------------------------------- lookups

    def _index(self) -> dict:
        """``id(node) -> (node, enclosing block or loop or None, function name)`` for
        every block and loop of the module (rebuilt when the module changes)."""
        if self._index_cache is not None and self._index_cache[0] is self._mod:
            return self._index_cache[1]
        index = {}
        for func_name, func in self._mod.functions.items():
            if not isinstance(func, PrimFunc):
                continue
            stack = [(func.body, None)]
            while stack:
                node, parent = stack.pop()
                if _is_sref_node(node):
                    index[id(node)] = (node, parent, func_name)
                    parent = node
                stack.extend((kid, parent) for kid in stmt_children(node))
        self._index_cache = (self._mod, index)
        return index

    def _sref(self, node) -> StmtSRef:
        sref = self._srefs.get(id(node))
        if sref is None or sref.stmt is not node:
            sref = self._srefs[id(node)] = StmtSRef(self, node)
        return sref

    def get_sref(self, stmt) -> StmtSRef | None:
        """The reference of a block or loop of the module (the same object each time);
        None for any other statement or one that is not in the module."""
        if not _is_sref_node(stmt) or id(stmt) not in self._index():
            return None
        return self._sref(stmt)

    def function_of(self, sref: StmtSRef) -> str:
        """The name of the function holding ``sref``'s statement."""
        entry = self._index().get(id(sref.stmt)) if sref.stmt is not None else None
        if entry is None:
            raise ScheduleError(f"{sref!r} does not refer to a statement of this module")
        return entry[2]

    def get_block_scope(self, block_sref: StmtSRef):
        """The :class:`~tilelang.schedule.block_scope.BlockScope` of the blocks directly
        inside the block ``block_sref`` (their dependencies)."""
        from tilelang.schedule.block_scope import BlockScope

        if not isinstance(block_sref.stmt, S.Block):
            raise ScheduleError(f"get_block_scope: {block_sref!r} is not a block")
        return BlockScope(self, block_sref)

    #: TVM >= 0.22 spells it so (blocks became ``SBlock``), as ``T.sblock`` is accepted too
    get_sblock_scope = get_block_scope

    def _get_cached_flags(self, block_sref: StmtSRef):
        """The :class:`~tilelang.schedule.block_info.CachedFlags` of a block
        (affine_binding, region_cover, stage_pipeline), computed for the current module."""
        from tilelang.schedule.block_info import block_flags

        if not isinstance(block_sref.stmt, S.Block):
            raise ScheduleError(f"_get_cached_flags: {block_sref!r} is not a block")
        func_name = self.function_of(block_sref)
        cache = self.__dict__.setdefault("_flags_cache", {})
        func = self._mod[func_name]
        if func_name not in cache or cache[func_name][0] is not func:
            cache[func_name] = (func, block_flags(self, func))
        return cache[func_name][1][id(block_sref.stmt)]

    # ---------------------------------------------------------- replacing

    def replace(self, src_sref: StmtSRef, tgt_stmt, block_sref_reuse=None) -> None:
        """Replaces ``src_sref``'s statement by ``tgt_stmt``: a loop by a loop or a
        BlockRealize, a block by a block. ``block_sref_reuse`` maps blocks that leave
        the module to the blocks of ``tgt_stmt`` that take over their references."""
        src = src_sref.stmt
        ok = (isinstance(src, S.For) and isinstance(tgt_stmt, (S.For, S.BlockRealize))) or (
            isinstance(src, S.Block) and isinstance(tgt_stmt, S.Block)
        )
        if src is None or not ok:
            raise ScheduleError(
                f"replace: cannot replace {type(src).__name__} by {type(tgt_stmt).__name__} "
                "(a loop takes a loop or a BlockRealize, a block a block)"
            )
        func_name = self.function_of(src_sref)
        func = self._mod[func_name]
        path = _path_to(func.body, src)
        copies = {}
        new = tgt_stmt
        for old in reversed(path[:-1]):
            copy = _with_child(old, path[path.index(old) + 1], new)
            copies[id(old)] = copy
            new = copy
        reuse = {id(k): v for k, v in (block_sref_reuse or {}).items()}
        self._install(func_name, func.with_body(new), copies, reuse, loop_reuse=True)

    def set_function(self, func_name: str, func, renames=None) -> None:
        """Installs ``func`` as ``func_name`` (a primitive's result): references follow
        their blocks by name (through ``renames``, old name -> new) and their loops by
        variable."""
        self._install(func_name, func, {}, {}, loop_reuse=True, renames=renames or {}, by_name=True)

    def _install(self, func_name, func, copies, reuse, loop_reuse, renames=None, by_name=False):
        if not self._srefs:  # nothing to follow: skip indexing the module twice
            self._mod = self._mod.with_function(func_name, func)
            return
        old_index = self._index()
        self._mod = self._mod.with_function(func_name, func)
        new_index = self._index()
        blocks, loops = {}, {}
        for node, _, name in new_index.values():
            if name != func_name:
                continue
            if isinstance(node, S.Block):
                blocks.setdefault(node.name_hint, node)
            else:
                loops.setdefault(id(node.loop_var), node)
        for key, sref in list(self._srefs.items()):
            node = sref.stmt
            if node is None or id(node) in new_index:
                continue
            if old_index.get(id(node), (None, None, None))[2] != func_name:
                continue
            target = copies.get(id(node)) or reuse.get(id(node))
            if target is None and by_name and isinstance(node, S.Block):
                target = blocks.get(renames.get(node.name_hint, node.name_hint))
            if target is None and loop_reuse and isinstance(node, S.For):
                target = loops.get(id(node.loop_var))
            del self._srefs[key]
            sref.stmt = target
            if target is not None:
                self._srefs[id(target)] = sref


def _path_to(root, target) -> list:
    """The statements from ``root`` down to ``target`` (both included)."""
    stack = [(root, [root])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        stack.extend((kid, [*path, kid]) for kid in stmt_children(node))
    raise ScheduleError("replace: the statement is not in its function")


def _with_child(node, old, new):
    """``node`` with its direct child statement ``old`` (by identity) replaced by ``new``."""
    changes = {}
    for name in child_fields(type(node)):
        value = getattr(node, name)
        if value is old:
            changes[name] = new
        elif isinstance(value, tuple) and any(v is old for v in value):
            changes[name] = tuple(new if v is old else v for v in value)
    return attrs.evolve(node, **changes)

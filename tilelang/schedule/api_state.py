"""The schedule's state API (a mixin of :class:`~tilelang.schedule.Schedule`):
``state`` and ``get_sref`` (TVM's references to blocks and loops), ``work_on``,
``enter_postproc``, and two queries that hand out handles: ``get_output_blocks`` and
``sample_compute_location``."""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.module import FunctionName
from tilelang.schedule import block_placement, inline, navigation
from tilelang.schedule.common import find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.sampling import _is_int
from tilelang.schedule.state import BlockRV, LoopRV, Tree


class ComputeLocationMark:
    """Where ``sample_compute_location`` may put a block besides a loop: at the root
    (leave it where it is) or inlined. A LoopRV standing for one resolves to it."""

    def __init__(self, name: str, index: int):
        self.name, self.index = name, index

    def __repr__(self) -> str:
        return self.name


ROOT_MARK = ComputeLocationMark("root", -1)
INLINE_MARK = ComputeLocationMark("inline", -2)


def is_mark(target) -> bool:
    """Whether a loop handle's target is a compute-location mark, not a loop."""
    return isinstance(target, ComputeLocationMark)


def at_mark(func, name: str, mark: ComputeLocationMark):
    """``compute_at`` of block ``name`` at a mark, as TVM does it: at the root the
    block stays where it is; inline it is ``compute_inline``."""
    return inline.compute_inline(func, name) if mark is INLINE_MARK else func


class StatePrimitives:
    """state, get_sref, work_on, enter_postproc, get_output_blocks,
    sample_compute_location."""

    @property
    def state(self):
        """The :class:`~tilelang.schedule.schedule_state.ScheduleState` (the module and
        the references to its blocks and loops)."""
        return self._state

    def get_sref(self, rv_or_stmt):
        """The :class:`~tilelang.schedule.schedule_state.StmtSRef` of a block or loop
        handle (or of a Block/For node of the current module)."""
        if isinstance(rv_or_stmt, (BlockRV, LoopRV)):
            if isinstance(rv_or_stmt, LoopRV):
                target = self._loop(rv_or_stmt, "get_sref")[1]
                if isinstance(target, ComputeLocationMark):
                    return target
            rv_or_stmt = self.get(rv_or_stmt)
        if isinstance(rv_or_stmt, S.BlockRealize):
            rv_or_stmt = rv_or_stmt.block
        return self._state.get_sref(rv_or_stmt)

    @property
    def func_working_on(self) -> str | None:
        """The function that lookups without ``func_name`` use (set by :meth:`work_on`):
        its name, which also compares equal to the module's GlobalVar for it."""
        if self._func_working_on is None:
            return None
        return FunctionName(self._func_working_on)

    def work_on(self, func_name: str) -> None:
        """Makes ``func_name`` the function that lookups without ``func_name`` use."""
        if func_name not in self._mod.functions:
            known = ", ".join(sorted(self._mod.functions))
            raise ValueError(f"work_on: no function {func_name!r} (have {known})")
        self._func_working_on = func_name

    def enter_postproc(self) -> None:
        """Marks the start of post-processing in the trace (no change to the module);
        ``Trace.simplified(remove_postproc=True)`` cuts the trace here."""
        self._record("enter_postproc", [])

    def get_output_blocks(self, scope_block) -> list[BlockRV]:
        """The blocks inside ``scope_block`` (a handle or name, e.g. ``"root"``), at
        any depth and in program order, that write a buffer not allocated by it."""
        scope_block, func_name, name = self._block_target(scope_block, "get_output_blocks")
        realize = find_block(tree := Tree(self._mod[func_name]), name, "get_output_blocks")
        local = {id(b) for b in realize.block.alloc_buffers}
        names = []
        for inner in tree.order:
            if inner is realize or not tree.is_ancestor(realize, inner):
                continue
            _, writes = navigation.block_buffers(inner.block)
            if any(id(b) not in local for b in writes):
                names.append(inner.block.name_hint)
        return self._apply("get_output_blocks", [("block", scope_block)], func_name, blocks=names)

    def sample_compute_location(self, block, decision=None) -> LoopRV:
        """Draws where ``block`` may be computed, uniformly among TVM's candidates: the
        loops above its consumers at which ``compute_at`` succeeds (skipping unit loops,
        and stopping at the first reduction loop), plus "root" (stay) and "inline"
        (when ``compute_inline`` succeeds). Pass the result to :meth:`compute_at`.

        Parameters
        ----------
        block : BlockRV or str
            The producer block.
        decision : int or None
            The location to use instead of drawing (how a trace replays): a loop's
            position among the first consumer's loops, -1 for root, -2 for inline. One
            that is no longer a candidate falls back to the nearest candidate before it.

        Returns
        -------
        LoopRV
            The chosen loop; for root or inline a handle that ``compute_at`` reads as
            "leave the block where it is" or "inline it" (``get`` gives the mark).

        Raises
        ------
        ScheduleError
            When the block is not found.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8,), "float32")
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
                for i in range(8):
                    with T.block("C"):
                        vi = T.axis.remap("S", [i])
                        T.reads(B[vi])
                        T.writes(C[vi])
                        C[vi] = B[vi] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            # decision=0: the first loop above the consumer C
            loop = sch.sample_compute_location("B", decision=0)
            sch.compute_at("B", loop)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8,), "float32")
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
                    with T.block("C"):
                        vi = T.axis.remap("S", [i])
                        T.reads(B[vi])
                        T.writes(C[vi])
                        C[vi] = B[vi] + T.float32(1)
        """
        block, func_name, name = self._block_target(block, "sample_compute_location")
        func = self._mod[func_name]
        # the candidates are tried compute_at's: keep them while the function is the same
        cache = self.__dict__.setdefault("_compute_location_cache", {})
        cached = cache.get(name)
        if cached is None or cached[0] is not func:
            cached = cache[name] = (func, _compute_locations(func, name))
        candidates = cached[1]
        indices = [index for index, _ in candidates]
        if decision is not None:
            if not _is_int(decision):
                raise schedule_error(
                    "sample_compute_location", f"block {name!r}",
                    f"decision {decision!r} is not an int (a candidate index, -1 root, "
                    "-2 inline)",
                )  # fmt: skip
            decision = int(decision)
            earlier = [i for i in indices if i <= decision]
            decision = earlier[-1] if earlier else -1
        else:
            decision = indices[self._rng.randrange(len(indices))]
        target = dict(candidates).get(decision, ROOT_MARK)
        (rv,) = self._new_handles(LoopRV, [(func_name, target)])
        self._record("sample_compute_location", [("block", block)], [rv], decision)
        return rv


def _compute_locations(func, name) -> list:
    """``(decision, loop variable or mark)`` pairs, in increasing decision order."""
    out = []
    if _succeeds(inline.compute_inline, func, name):
        out.append((-2, INLINE_MARK))
    out.append((-1, ROOT_MARK))
    consumers = navigation.get_consumers(func, name)
    if not consumers:
        return out
    tree = Tree(func)
    realizes = [find_block(tree, c, "sample_compute_location") for c in consumers]
    common = tree.ancestors(realizes[0])
    for other in realizes[1:]:
        chain = tree.ancestors(other)
        common = [a for a, b in zip(common, chain) if a is b]
    boundary = next(
        (a for a in reversed(common) if isinstance(a, (S.For, S.Block, S.BlockRealize))), None
    )
    if not isinstance(boundary, S.For):
        return out
    loops = tree.loops_above(realizes[0])
    position = next(i for i, loop in enumerate(loops) if loop is boundary)
    kinds = [_loop_is_data_parallel(tree, loop) for loop in loops[: position + 1]]
    last_data_parallel = max((i for i, k in enumerate(kinds) if k), default=-1)
    seen_reduce = False
    for i, loop in enumerate(loops[: position + 1]):
        if isinstance(loop.extent, E.IntImm) and loop.extent.value == 1:
            continue
        if kinds[i]:
            if seen_reduce:
                break
        else:
            seen_reduce = True
            if i > last_data_parallel:
                break
        if _succeeds(block_placement.compute_at, func, name, loop.loop_var, True):
            out.append((i, loop.loop_var))
    return out


def _loop_is_data_parallel(tree, loop) -> bool:
    """Whether every block binding that uses ``loop``'s variable binds a spatial iterator."""
    from tilelang.ir.analysis import uses_any_var

    for realize in tree.blocks_under(loop):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if uses_any_var(value, [loop.loop_var]) and iv.iter_type != S.IterVar.DataPar:
                return False
    return True


def _succeeds(rewrite, *args) -> bool:
    try:
        rewrite(*args)
    except ScheduleError:
        return False
    return True

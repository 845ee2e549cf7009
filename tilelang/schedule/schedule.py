"""The :class:`Schedule`: the current IRModule, the handles it handed out, a trace
and a random state.

Every primitive is a thin wrapper: resolve the handles, call the rewrite of its
family module (which validates and raises :class:`~tilelang.ScheduleError`), and only
then replace the module, update the handles and append to the trace. A failing
primitive therefore leaves the schedule exactly as it was.
"""

from __future__ import annotations

import random

from tilelang.ir import stmt as S
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.schedule import (
    block_placement,
    blockize,
    cache,
    navigation,
    reduction,
    rfactor,
    sampling,
)
from tilelang.schedule import loop_transformation as loops
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import _RV, BlockRV, ExprRV, LoopRV, Tree
from tilelang.schedule.trace import Instruction, Trace


class Schedule:
    """TensorIR schedule over ``mod`` (an IRModule, or a PrimFunc kept as ``"main"``).

    Example (SEED §2)::

        sch = Schedule(MyModule)
        block_Y = sch.get_block("Y", func_name="mm_relu")
        i, j, k = sch.get_loops(block_Y)
        j0, j1 = sch.split(j, factors=[None, 4])
        print(sch.trace)
    """

    def __init__(self, mod, seed: int | None = None, **_tvm_options):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise schedule_error(
                "Schedule", type(mod).__name__, "expects an IRModule or a PrimFunc"
            )
        self._mod = mod
        self._symbols: dict[_RV, object] = {}
        self.trace = Trace()
        self._rng = random.Random(seed)

    # ------------------------------------------------------------- state

    @property
    def mod(self) -> IRModule:
        """The current IRModule."""
        return self._mod

    def show(self) -> None:
        """Prints the current module as TVMScript."""
        print(self._mod.script())

    def copy(self) -> Schedule:
        """An independent schedule with the same module, trace, handles and random state."""
        other = Schedule.__new__(Schedule)
        other._mod, other._symbols = self._mod, dict(self._symbols)
        other.trace = self.trace.copy()
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        return other

    def seed(self, seed: int) -> None:
        """Reseeds the random state used by the sampling primitives."""
        self._rng.seed(seed)

    def fork_seed(self) -> int:
        """A new seed drawn from this schedule's random state."""
        return self._rng.randrange(1, 2**31)

    def get(self, rv):
        """The value behind a handle: an int for a sampled ExprRV, the Block or For node
        for a block or loop handle."""
        if isinstance(rv, ExprRV):
            return self._symbols[rv]
        if isinstance(rv, BlockRV):
            func_name, name = self._block(rv, "get")
            return navigation.find_block(Tree(self._mod[func_name]), name, "get").block
        if isinstance(rv, LoopRV):
            func_name, var = self._loop(rv, "get")
            return navigation.find_loop(Tree(self._mod[func_name]), var, "get")
        return rv

    def remove_rv(self, rv) -> None:
        """Forgets a handle."""
        self._symbols.pop(rv, None)

    def _block(self, rv, primitive: str):
        if not isinstance(rv, BlockRV) or rv not in self._symbols:
            raise schedule_error(primitive, repr(rv), "expected a block handle of this schedule")
        return self._symbols[rv]

    def _loop(self, rv, primitive: str):
        if not isinstance(rv, LoopRV) or rv not in self._symbols:
            raise schedule_error(primitive, repr(rv), "expected a loop handle of this schedule")
        return self._symbols[rv]

    def _as_block(self, block, primitive: str) -> BlockRV:
        """A block handle; a block name is looked up (and traced) like ``get_block``."""
        return self.get_block(block) if isinstance(block, str) else block

    def _value(self, x):
        """Sampled handles resolved to their values, lists element-wise."""
        if isinstance(x, ExprRV):
            return self._symbols[x]
        if isinstance(x, (list, tuple)):
            return [self._value(v) for v in x]
        return x

    def _commit(self, func_name, func, new=None, renames=None):
        self._mod = self._mod.with_function(func_name, func)
        if renames:
            for rv, target in list(self._symbols.items()):
                if isinstance(rv, BlockRV) and target[0] == func_name and target[1] in renames:
                    self._symbols[rv] = (func_name, renames[target[1]])
        self._symbols.update(new or {})

    def _record(self, kind, args, outputs=(), decision=None):
        self.trace.append(Instruction(kind, tuple(args), tuple(outputs), decision))

    def _new_loops(self, func_name, variables) -> list[LoopRV]:
        rvs = [LoopRV() for _ in variables]
        self._symbols.update({rv: (func_name, v) for rv, v in zip(rvs, variables)})
        return rvs

    def _new_blocks(self, func_name, names) -> list[BlockRV]:
        rvs = [BlockRV() for _ in names]
        self._symbols.update({rv: (func_name, n) for rv, n in zip(rvs, names)})
        return rvs

    # ------------------------------------------------------------- handles

    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block called ``name`` in ``func_name`` (the only or ``"main"`` function)."""
        func_name = self._function_name(func_name)
        navigation.find_block(Tree(self._mod[func_name]), name, "get_block")
        (rv,) = self._new_blocks(func_name, [name])
        self._record("get_block", [("name", name), ("func_name", func_name)], [rv])
        return rv

    def _function_name(self, func_name):
        if func_name is None:
            names = list(self._mod.functions)
            func_name = names[0] if len(names) == 1 else "main"
        if func_name not in self._mod.functions:
            known = ", ".join(sorted(self._mod.functions))
            raise schedule_error(
                "get_block", f"function {func_name!r}", f"not found (have {known})"
            )
        return func_name

    def get_loops(self, block) -> list[LoopRV]:
        """The loops above a block, outermost first (up to the enclosing block)."""
        block = self._as_block(block, "get_loops")
        func_name, name = self._block(block, "get_loops")
        rvs = self._new_loops(func_name, navigation.get_loops(self._mod[func_name], name))
        self._record("get_loops", [("block", block)], rvs)
        return rvs

    def get_child_blocks(self, block_or_loop) -> list[BlockRV]:
        """The blocks directly inside a block or loop (not inside their child blocks)."""
        func_name, target = self._block_or_loop(block_or_loop, "get_child_blocks")
        names = navigation.get_child_blocks(self._mod[func_name], target)
        rvs = self._new_blocks(func_name, names)
        self._record("get_child_blocks", [(None, block_or_loop)], rvs)
        return rvs

    def get_producers(self, block) -> list[BlockRV]:
        """Blocks of the same scope that write what ``block`` reads, before it."""
        return self._neighbours(block, "get_producers", navigation.get_producers)

    def get_consumers(self, block) -> list[BlockRV]:
        """Blocks of the same scope that read what ``block`` writes, after it."""
        return self._neighbours(block, "get_consumers", navigation.get_consumers)

    def _neighbours(self, block, kind, find):
        block = self._as_block(block, kind)
        func_name, name = self._block(block, kind)
        rvs = self._new_blocks(func_name, find(self._mod[func_name], name))
        self._record(kind, [("block", block)], rvs)
        return rvs

    def _block_or_loop(self, rv, primitive):
        if isinstance(rv, str):
            rv = self.get_block(rv)
        if isinstance(rv, LoopRV):
            return self._loop(rv, primitive)
        func_name, name = self._block(rv, primitive)
        return func_name, name

    # ------------------------------------------------------------- loops

    def split(self, loop, factors, preserve_unit_iters=True, disable_predication=False):
        """Splits ``loop`` by ``factors`` (see :func:`loop_transformation.split`)."""
        func_name, var = self._loop(loop, "split")
        func, new_vars = loops.split(
            self._mod[func_name],
            var,
            self._value(list(factors)),
            preserve_unit_iters,
            disable_predication,
        )
        self._commit(func_name, func)
        rvs = self._new_loops(func_name, new_vars)
        self._record(
            "split",
            [
                ("loop", loop),
                ("factors", list(factors)),
                ("preserve_unit_iters", preserve_unit_iters),
                ("disable_predication", disable_predication),
            ],
            rvs,
        )
        return rvs

    def fuse(self, *loops_, preserve_unit_iters=True) -> LoopRV:
        """Fuses consecutive nested loops (see :func:`loop_transformation.fuse`)."""
        targets = [self._loop(rv, "fuse") for rv in loops_]
        func_name = targets[0][0] if targets else self._function_name(None)
        func, fused = loops.fuse(self._mod[func_name], [t[1] for t in targets], preserve_unit_iters)
        self._commit(func_name, func)
        (rv,) = self._new_loops(func_name, [fused])
        args = [(None, x) for x in loops_] + [("preserve_unit_iters", preserve_unit_iters)]
        self._record("fuse", args, [rv])
        return rv

    def reorder(self, *ordered_loops) -> None:
        """Reorders loops of one chain (see :func:`loop_transformation.reorder`)."""
        targets = [self._loop(rv, "reorder") for rv in ordered_loops]
        if not targets:
            return
        func_name = targets[0][0]
        self._commit(func_name, loops.reorder(self._mod[func_name], [t[1] for t in targets]))
        self._record("reorder", [(None, x) for x in ordered_loops])

    def _loop_kind(self, primitive, loop, kind, thread=None, extra=()):
        func_name, var = self._loop(loop, primitive)
        func = loops.set_loop_kind(self._mod[func_name], var, kind, primitive, thread)
        self._commit(func_name, func)
        self._record(primitive, [("loop", loop), *extra])

    def parallel(self, loop) -> None:
        """Makes ``loop`` a parallel loop (``T.parallel``)."""
        self._loop_kind("parallel", loop, S.ForKind.PARALLEL)

    def vectorize(self, loop) -> None:
        """Makes ``loop`` a vectorized loop (``T.vectorized``)."""
        self._loop_kind("vectorize", loop, S.ForKind.VECTORIZED)

    def unroll(self, loop) -> None:
        """Makes ``loop`` an unrolled loop (``T.unroll``)."""
        self._loop_kind("unroll", loop, S.ForKind.UNROLLED)

    def bind(self, loop, thread_axis: str) -> None:
        """Binds ``loop`` to a GPU thread axis such as ``"threadIdx.x"``."""
        self._loop_kind(
            "bind", loop, S.ForKind.THREAD_BINDING, thread_axis, [("thread_axis", thread_axis)]
        )

    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Adds the annotation ``ann_key = ann_val`` to a block or loop."""
        func_name, target = self._block_or_loop(block_or_loop, "annotate")
        value = self._value(ann_val)
        func = navigation.annotate(self._mod[func_name], target, ann_key, value)
        self._commit(func_name, func)
        self._record(
            "annotate",
            [("block_or_loop", block_or_loop), ("ann_key", ann_key), ("ann_val", ann_val)],
        )

    def unannotate(self, block_or_loop, ann_key: str) -> None:
        """Removes the annotation ``ann_key`` from a block or loop."""
        func_name, target = self._block_or_loop(block_or_loop, "unannotate")
        func = navigation.unannotate(self._mod[func_name], target, ann_key)
        self._commit(func_name, func)
        self._record("unannotate", [("block_or_loop", block_or_loop), ("ann_key", ann_key)])

    # ------------------------------------------------------------- blocks

    def compute_at(self, block, loop, preserve_unit_loops=False, index=-1) -> None:
        """Moves a producer block under ``loop`` (see :func:`block_placement.compute_at`)."""
        self._place("compute_at", block, loop, preserve_unit_loops, index)

    def reverse_compute_at(self, block, loop, preserve_unit_loops=False, index=-1) -> None:
        """Moves a consumer block under ``loop`` (see
        :func:`block_placement.reverse_compute_at`)."""
        self._place("reverse_compute_at", block, loop, preserve_unit_loops, index)

    def _place(self, primitive, block, loop, preserve_unit_loops, index):
        block = self._as_block(block, primitive)
        func_name, name = self._block(block, primitive)
        loop_func, var = self._loop(loop, primitive)
        if loop_func != func_name:
            raise schedule_error(primitive, f"block {name!r}", "the loop is in another function")
        rewrite = getattr(block_placement, primitive)
        self._commit(
            func_name, rewrite(self._mod[func_name], name, var, preserve_unit_loops, index)
        )
        self._record(
            primitive,
            [
                ("block", block),
                ("loop", loop),
                ("preserve_unit_loops", preserve_unit_loops),
                ("index", index),
            ],
        )

    def compute_inline(self, block) -> None:
        """Inlines a producer into its consumers (see :func:`block_placement.compute_inline`)."""
        self._inline("compute_inline", block)

    def reverse_compute_inline(self, block) -> None:
        """Inlines a consumer into its producer (see
        :func:`block_placement.reverse_compute_inline`)."""
        self._inline("reverse_compute_inline", block)

    def _inline(self, primitive, block):
        block = self._as_block(block, primitive)
        func_name, name = self._block(block, primitive)
        self._commit(func_name, getattr(block_placement, primitive)(self._mod[func_name], name))
        self._record(primitive, [("block", block)])

    def cache_read(self, block, read_buffer_index: int, storage_scope: str) -> BlockRV:
        """A copy of a read buffer in ``storage_scope`` (see :func:`cache.cache_read`)."""
        return self._cache("cache_read", block, read_buffer_index, storage_scope)

    def cache_write(self, block, write_buffer_index: int, storage_scope: str) -> BlockRV:
        """Writes through a buffer in ``storage_scope`` (see :func:`cache.cache_write`)."""
        return self._cache("cache_write", block, write_buffer_index, storage_scope)

    def _cache(self, primitive, block, index, scope):
        block = self._as_block(block, primitive)
        func_name, name = self._block(block, primitive)
        func, new_name = getattr(cache, primitive)(self._mod[func_name], name, index, scope)
        self._commit(func_name, func)
        (rv,) = self._new_blocks(func_name, [new_name])
        key = "read_buffer_index" if primitive == "cache_read" else "write_buffer_index"
        self._record(primitive, [("block", block), (key, index), ("storage_scope", scope)], [rv])
        return rv

    def set_scope(self, block, buffer_index: int, storage_scope: str) -> None:
        """Changes the storage scope of the buffer a block writes (see :func:`cache.set_scope`)."""
        block = self._as_block(block, "set_scope")
        func_name, name = self._block(block, "set_scope")
        self._commit(
            func_name, cache.set_scope(self._mod[func_name], name, buffer_index, storage_scope)
        )
        self._record(
            "set_scope",
            [("block", block), ("buffer_index", buffer_index), ("storage_scope", storage_scope)],
        )

    def decompose_reduction(self, block, loop) -> BlockRV:
        """Splits a reduction's init into its own block ``<name>_init`` before ``loop``;
        the block becomes ``<name>_update``. Returns the init block."""
        block = self._as_block(block, "decompose_reduction")
        func_name, name = self._block(block, "decompose_reduction")
        _, var = self._loop(loop, "decompose_reduction")
        func, init_name, update_name = reduction.decompose_reduction(
            self._mod[func_name], name, var
        )
        self._commit(func_name, func, renames={name: update_name})
        (rv,) = self._new_blocks(func_name, [init_name])
        self._record("decompose_reduction", [("block", block), ("loop", loop)], [rv])
        return rv

    def rfactor(self, loop, factor_axis: int) -> BlockRV:
        """Factors the reduction under ``loop`` into a block ``<name>_rf`` of partial
        results (the loop's axis becomes spatial dimension ``factor_axis`` of
        ``<buffer>_rf``) and a write-back block that keeps the name (see
        :mod:`tilelang.schedule.rfactor`). Returns the rfactor block."""
        func_name, var = self._loop(loop, "rfactor")
        func, rf_name = rfactor.rfactor(self._mod[func_name], var, factor_axis)
        self._commit(func_name, func)
        (rv,) = self._new_blocks(func_name, [rf_name])
        self._record("rfactor", [("loop", loop), ("factor_axis", factor_axis)], [rv])
        return rv

    def blockize(self, target, preserve_unit_iters: bool = True) -> BlockRV:
        """Turns the subtree under a loop into one outer block ``<name>_o`` (see
        :func:`blockize.blockize`)."""
        func_name, var = self._loop(target, "blockize")
        func, outer = blockize.blockize(self._mod[func_name], var, preserve_unit_iters)
        self._commit(func_name, func)
        (rv,) = self._new_blocks(func_name, [outer])
        self._record(
            "blockize", [("target", target), ("preserve_unit_iters", preserve_unit_iters)], [rv]
        )
        return rv

    # ------------------------------------------------------------- sampling

    def sample_perfect_tile(self, loop, n: int, max_innermost_factor: int = 16, decision=None):
        """``n`` factors whose product is the loop's extent, the innermost at most
        ``max_innermost_factor``; returns sampled handles for ``split``."""
        func_name, var = self._loop(loop, "sample_perfect_tile")
        extent = navigation.loop_extent(self._mod[func_name], var, "sample_perfect_tile")
        decision = sampling.sample_perfect_tile(
            self._rng, extent, n, max_innermost_factor, decision
        )
        rvs = [ExprRV() for _ in decision]
        self._symbols.update(zip(rvs, decision))
        self._record(
            "sample_perfect_tile",
            [("loop", loop), ("n", n), ("max_innermost_factor", max_innermost_factor)],
            rvs,
            list(decision),
        )
        return rvs

    def sample_categorical(self, candidates, probs, decision=None) -> ExprRV:
        """One of ``candidates``, drawn with probabilities ``probs``."""
        index = sampling.sample_categorical(self._rng, candidates, probs, decision)
        rv = ExprRV()
        self._symbols[rv] = candidates[index]
        self._record(
            "sample_categorical",
            [("candidates", list(candidates)), ("probs", list(probs))],
            [rv],
            index,
        )
        return rv

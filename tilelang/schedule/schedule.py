"""The :class:`Schedule`: the current IRModule, the handles it handed out, a trace
and a random state.

This module is the core: construction, state, handle resolution and navigation
(``get_block``, ``get_loops``, ...). The primitives come from one mixin per family
(``api_loops``, ``api_annotation``, ``api_placement``, ``api_cache``,
``api_reduction``, ``api_sampling``). Every primitive is a thin wrapper: resolve the
handles, call the rewrite of its family module (which validates and raises
:class:`~tilelang.ScheduleError`), and only then :meth:`Schedule._apply` the result
(replace the function, update the handles, append to the trace). A failing
primitive therefore leaves the schedule exactly as it was.
"""

from __future__ import annotations

import functools
import inspect
import random

from tilelang.errors import ScheduleError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.schedule import navigation
from tilelang.schedule.api_annotation import AnnotationPrimitives
from tilelang.schedule.api_block import BlockPrimitives
from tilelang.schedule.api_cache import CachePrimitives
from tilelang.schedule.api_fusion import FusionPrimitives
from tilelang.schedule.api_layout import LayoutPrimitives
from tilelang.schedule.api_loops import LoopPrimitives
from tilelang.schedule.api_nest import NestPrimitives
from tilelang.schedule.api_padding import PaddingPrimitives
from tilelang.schedule.api_placement import PlacementPrimitives
from tilelang.schedule.api_reduction import ReductionPrimitives
from tilelang.schedule.api_reindex import ReindexPrimitives
from tilelang.schedule.api_sampling import SamplingPrimitives
from tilelang.schedule.api_staging import StagingPrimitives
from tilelang.schedule.api_state import StatePrimitives
from tilelang.schedule.api_storage import StoragePrimitives
from tilelang.schedule.api_tensorize import TensorizePrimitives
from tilelang.schedule.errors import (
    RENDER_LEVELS,
    check_bounds_after,
    rendered,
    schedule_error,
    unknown_function,
    unknown_handle,
)
from tilelang.schedule.instruction import Instruction
from tilelang.schedule.schedule_state import ScheduleState
from tilelang.schedule.state import _RV, BlockRV, ExprRV, LoopRV, Tree
from tilelang.schedule.trace import Trace

# primitives that restructure the loop they are given (refused on irregular loops)
_RESTRUCTURING = frozenset({
    "split", "fuse", "reorder", "merge", "loop_partition", "blockize", "rfactor",
    "parallel", "vectorize", "unroll", "bind", "compute_at", "reverse_compute_at",
    "decompose_reduction", "decompose_padding", "tensorize",
})  # fmt: skip


class Schedule(
    LoopPrimitives,
    AnnotationPrimitives,
    PlacementPrimitives,
    CachePrimitives,
    ReductionPrimitives,
    SamplingPrimitives,
    StatePrimitives,
    ReindexPrimitives,
    TensorizePrimitives,
    LayoutPrimitives,
    BlockPrimitives,
    NestPrimitives,
    PaddingPrimitives,
    FusionPrimitives,
    StagingPrimitives,
    StoragePrimitives,
):
    """TensorIR schedule over ``mod`` (an IRModule, or a PrimFunc kept as ``"main"``).

    Example (SEED §2)::

        sch = Schedule(MyModule)
        block_Y = sch.get_block("Y", func_name="mm_relu")
        i, j, k = sch.get_loops(block_Y)
        j0, j1 = sch.split(j, factors=[None, 4])
        print(sch.trace)

    ``debug_mask="all"`` checks after every primitive that the function accesses no
    buffer provably out of bounds (a primitive whose result would is refused with a
    ScheduleError, the schedule unchanged).

    Every primitive's docstring ends with an Example of three blocks: ``Before::``
    (a function as printed), ``Schedule::`` (Python run with ``before`` bound to the
    parsed Before) and ``After::`` (what ``sch.mod["main"].script()`` prints then).
    tests/test_schedule_docstrings.py runs them all; docs/schedule.md renders them
    (``python docs/gen_schedule_doc.py``).
    """

    def __init__(
        self,
        mod,
        seed: int | None = None,
        debug_mask=None,
        error_render_level: str = "detail",
        **_tvm_options,
    ):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise schedule_error(
                "Schedule", type(mod).__name__, "expects an IRModule or a PrimFunc"
            )
        # a module's function table can be assigned to (mod["f"] = g, as in TVM): the
        # schedule keeps its own table so that later assignments do not reach it
        self._state = ScheduleState(mod.clone())
        self._symbols: dict[_RV, object] = {}
        self.trace = Trace()
        self._rng = random.Random(seed)
        # debug_mask="all" (TVM's spelling) or "bounds": after each primitive, refuse a
        # result that accesses a buffer provably out of bounds.
        self._check_bounds = debug_mask in ("all", "bounds")
        self._func_working_on = None
        # how a ScheduleError reads (TVM's levels): the whole message with the IR, the
        # short reason, or "(not rendered)"; see errors.rendered
        if error_render_level not in RENDER_LEVELS:
            raise schedule_error(
                "Schedule",
                f"error_render_level={error_render_level!r}",
                f"expects one of {list(RENDER_LEVELS)}",
            )
        self._render_level = error_render_level

    # ------------------------------------------------------------- state

    @property
    def mod(self) -> IRModule:
        """The current IRModule."""
        return self._state.mod

    @property
    def _mod(self) -> IRModule:
        return self._state.mod

    def show(self, style: str | None = None, black_format: bool = False) -> None:
        """Prints the current module as TVMScript (highlighted like ``IRModule.show``)."""
        self._mod.show(style=style, black_format=black_format)

    def copy(self) -> Schedule:
        """An independent schedule with the same module, trace, handles and random state."""
        other = Schedule.__new__(Schedule)
        other._state, other._symbols = ScheduleState(self._mod.clone()), dict(self._symbols)
        other.trace = self.trace.copy()
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        other._func_working_on = self._func_working_on
        other._check_bounds = self._check_bounds
        other._render_level = self._render_level
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
            return self._expr(rv, "get")
        if isinstance(rv, BlockRV):
            func_name, name = self._block(rv, "get")
            return navigation.find_block(Tree(self._mod[func_name]), name, "get").block
        if isinstance(rv, LoopRV):
            func_name, var = self._loop(rv, "get")
            if not isinstance(var, E.Var):
                return var  # a compute-location mark (sample_compute_location)
            return navigation.find_loop(Tree(self._mod[func_name]), var, "get")
        return rv

    def remove_rv(self, rv) -> None:
        """Forgets a handle."""
        self._symbols.pop(rv, None)

    # ------------------------------------------------- resolving handles

    def _block(self, rv, primitive: str):
        """``(function name, block name)`` of a block handle of this schedule."""
        if not isinstance(rv, BlockRV):
            raise schedule_error(primitive, repr(rv), "expected a block handle of this schedule")
        if rv not in self._symbols:
            raise unknown_handle(primitive, rv)
        return self._symbols[rv]

    def _loop(self, rv, primitive: str):
        """``(function name, loop variable)`` of a loop handle of this schedule."""
        if not isinstance(rv, LoopRV):
            raise schedule_error(primitive, repr(rv), "expected a loop handle of this schedule")
        if rv not in self._symbols:
            raise unknown_handle(primitive, rv)
        if primitive in _RESTRUCTURING:
            self._refuse_irregular(self._symbols[rv], primitive)
        return self._symbols[rv]

    def _refuse_irregular(self, symbol, primitive: str) -> None:
        """A loop left early by ``break``/``continue`` keeps its shape (TVM's irregular
        loops): restructured, the jump would leave another loop."""
        from tilelang.ir.functor import post_order_visit
        from tilelang.ir.jumps import is_irregular

        func_name, var = symbol
        func = self._mod.functions.get(func_name)
        if func is None:
            return
        found = []
        post_order_visit(
            func.body,
            lambda n: found.append(n) if isinstance(n, S.For) and n.loop_var is var else None,
        )
        if found and is_irregular(found[0]):
            raise schedule_error(
                primitive,
                f"loop {var.name}",
                "a break or continue leaves this loop early; it cannot be restructured",
            )

    def _expr(self, rv, primitive: str):
        """The value of a sampled handle of this schedule."""
        if rv not in self._symbols:
            raise unknown_handle(primitive, rv)
        return self._symbols[rv]

    def _block_target(self, block, primitive: str):
        """``(handle, function name, block name)`` of a block given by handle or by name;
        a name is looked up (and traced) like ``get_block``, so the trace replays it."""
        if isinstance(block, str):
            block = self.get_block(block)
        return (block, *self._block(block, primitive))

    def _block_or_loop(self, rv, primitive):
        """``(function name, block name or loop variable)`` of a handle or block name."""
        if isinstance(rv, str):
            rv = self.get_block(rv)
        if isinstance(rv, LoopRV):
            return self._loop(rv, primitive)
        return self._block(rv, primitive)

    def _value(self, x, primitive: str = "a primitive"):
        """Sampled handles resolved to their values, lists element-wise."""
        if isinstance(x, ExprRV):
            return self._expr(x, primitive)
        if isinstance(x, (list, tuple)):
            return [self._value(v, primitive) for v in x]
        return x

    def _function_name(self, func_name):
        if func_name is None:
            func_name = self._func_working_on
        if func_name is None:
            names = list(self._mod.functions)
            if len(names) != 1 and "main" not in names:
                raise unknown_function(names)
            func_name = names[0] if len(names) == 1 else "main"
        if func_name not in self._mod.functions:
            known = ", ".join(sorted(self._mod.functions))
            raise schedule_error(
                "get_block", f"function {func_name!r}", f"not found (have {known})"
            )
        return func_name

    # ------------------------------------------------- applying results

    def _apply(self, kind, args, func_name, func=None, *, loops=(), blocks=(), renames=None):
        """The ending every primitive and navigation method shares, reached only once its
        rewrite succeeded: installs ``func`` as ``func_name`` (when the method rewrote
        it), retargets block handles by ``renames`` (old name -> new name), hands out
        handles to the new ``loops`` (variables) and ``blocks`` (names) of ``func_name``
        and records ``kind(args)`` with those handles as outputs. Returns the handles."""
        if func is not None:
            if self._check_bounds:
                check_bounds_after(kind, func_name, self._mod[func_name], func)
            self._commit(func_name, func, renames)
        rvs = self._new_handles(LoopRV, [(func_name, var) for var in loops])
        rvs += self._new_handles(BlockRV, [(func_name, name) for name in blocks])
        self._record(kind, args, rvs)
        return rvs

    def _commit(self, func_name, func, renames=None):
        self._state.set_function(func_name, func, renames)
        if renames:
            for rv, target in list(self._symbols.items()):
                if isinstance(rv, BlockRV) and target[0] == func_name and target[1] in renames:
                    self._symbols[rv] = (func_name, renames[target[1]])

    def _record(self, kind, args, outputs=(), decision=None):
        self.trace.append(Instruction.from_call(kind, args, outputs), decision)

    def _new_handles(self, rv_type, symbols) -> list:
        """One new ``rv_type`` handle per entry of ``symbols``, standing for it: a
        ``(function name, loop variable or block name)`` pair, or a sampled value."""
        rvs = [rv_type() for _ in symbols]
        self._symbols.update(zip(rvs, symbols))
        return rvs

    # ------------------------------------------------------------- handles

    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block called ``name`` in ``func_name`` (the only or ``"main"`` function)."""
        func_name = self._function_name(func_name)
        navigation.find_block(Tree(self._mod[func_name]), name, "get_block")
        args = [("name", name), ("func_name", func_name)]
        (rv,) = self._apply("get_block", args, func_name, blocks=[name])
        return rv

    def get_sblock(self, name: str, func_name: str | None = None) -> BlockRV:
        """TVM 0.27's name for :meth:`get_block` (blocks became ``SBlock``)."""
        return self.get_block(name, func_name)

    def get_loops(self, block) -> list[LoopRV]:
        """The loops above a block, outermost first (up to the enclosing block)."""
        block, func_name, name = self._block_target(block, "get_loops")
        found = navigation.get_loops(self._mod[func_name], name)
        return self._apply("get_loops", [("block", block)], func_name, loops=found)

    def get_child_blocks(self, block_or_loop) -> list[BlockRV]:
        """The blocks directly inside a block or loop (not inside their child blocks)."""
        func_name, target = self._block_or_loop(block_or_loop, "get_child_blocks")
        names = navigation.get_child_blocks(self._mod[func_name], target)
        return self._apply("get_child_blocks", [(None, block_or_loop)], func_name, blocks=names)

    def get_producers(self, block) -> list[BlockRV]:
        """Blocks of the same scope that write what ``block`` reads, before it."""
        return self._neighbours(block, "get_producers", navigation.get_producers)

    def get_consumers(self, block) -> list[BlockRV]:
        """Blocks of the same scope that read what ``block`` writes, after it."""
        return self._neighbours(block, "get_consumers", navigation.get_consumers)

    def _neighbours(self, block, kind, find):
        block, func_name, name = self._block_target(block, kind)
        names = find(self._mod[func_name], name)
        return self._apply(kind, [("block", block)], func_name, blocks=names)


def _rendering_errors(method):
    """``method`` raising its ScheduleErrors at the schedule's render level."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except ScheduleError as exc:
            level = getattr(self, "_render_level", "detail")
            if level == "detail":
                raise
            raise rendered(exc, level) from None

    return call


# Every public method (the mixins' primitives included) reports at the render level;
# each is wrapped where it is defined, so the classes keep their order of methods.
for _cls in Schedule.__mro__[:-1]:
    for _name, _member in list(vars(_cls).items()):
        if not _name.startswith("_") and inspect.isfunction(_member):
            setattr(_cls, _name, _rendering_errors(_member))

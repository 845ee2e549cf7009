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

    Every primitive's docstring ends with an Example of three blocks: ``Before::``
    (a function as printed), ``Schedule::`` (Python run with ``before`` bound to the
    parsed Before) and ``After::`` (what ``sch.mod["main"].script()`` prints then).
    tests/test_schedule_docstrings.py runs them all; docs/schedule.md renders them
    (``python docs/gen_schedule_doc.py``).
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
        """Splits ``loop`` into nested loops whose extents are ``factors``, outermost first.

        Blocks under the loop bind its variable to ``i_0 * f_1 + i_1`` (and so on for
        more factors). When the factors do not divide the extent, those blocks get the
        predicate ``T.where(i_0 * f_1 + i_1 < extent)``.

        Parameters
        ----------
        loop : LoopRV
            The loop to split; it must start at 0 and have unit step.
        factors : list of int, ExprRV or None
            The new extents; at most one may be None (inferred from the others).
            ``ExprRV`` factors come from :meth:`sample_perfect_tile`.
        preserve_unit_iters : bool
            Whether a factor of 1 keeps its loop variable in the bindings (else 0).
        disable_predication : bool
            Whether to leave out the ``T.where`` guard of an imperfect split.

        Returns
        -------
        list of LoopRV
            The new loops, outermost first, named ``<loop>_0``, ``<loop>_1``, ...

        Raises
        ------
        ScheduleError
            When the loop starts elsewhere than 0 or is strided, fewer than two factors
            or more than one None are given, a factor is not a positive integer, or
            the factors multiply to less than the extent.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            i_0, i_1 = sch.split(i, factors=[None, 4])

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i_0, i_1 in T.grid(2, 4):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i_0 * 4 + i_1)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
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
        """Fuses consecutive, perfectly nested loops into one loop named ``i_j_fused``.

        Blocks under the loops bind each old loop variable to a ``//`` and ``%`` of the
        fused one; the fused extent is the product of the extents.

        Parameters
        ----------
        *loops : LoopRV
            At least two loops, outermost first, each the only statement of the one
            before it.
        preserve_unit_iters : bool
            Whether unit-extent loops keep their variable in the bindings (else 0).

        Returns
        -------
        LoopRV
            The fused loop.

        Raises
        ------
        ScheduleError
            When fewer than two loops or a loop twice are given, the loops are not
            consecutive and perfectly nested, a loop starts elsewhere than 0 or is
            strided, or an extent depends on another fused loop.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("B")
            i_j_fused = sch.fuse(i, j)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i_j_fused in range(32):
                    with T.block("B"):
                        vi = T.axis.spatial(4, i_j_fused // 8)
                        vj = T.axis.spatial(8, i_j_fused % 8)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
        """
        targets = [self._loop(rv, "fuse") for rv in loops_]
        func_name = targets[0][0] if targets else self._function_name(None)
        func, fused = loops.fuse(self._mod[func_name], [t[1] for t in targets], preserve_unit_iters)
        self._commit(func_name, func)
        (rv,) = self._new_loops(func_name, [fused])
        args = [(None, x) for x in loops_] + [("preserve_unit_iters", preserve_unit_iters)]
        self._record("fuse", args, [rv])
        return rv

    def reorder(self, *ordered_loops) -> None:
        """Reorders loops of one perfectly nested chain into the given order.

        The named loops take the places the chain had for them, in the order given;
        loops of the chain that are not named keep their places.

        Parameters
        ----------
        *ordered_loops : LoopRV
            The loops in their new order, outermost first.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When a loop is given twice, the loops are not nested in one another or the
            chain between them is not perfectly nested, or a loop's range depends on a
            loop that would move inside it.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("B")
            sch.reorder(j, i)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for j, i in T.grid(8, 4):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
        """
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
        """Makes ``loop`` a parallel loop (``T.parallel``): its iterations run on CPU threads.

        Parameters
        ----------
        loop : LoopRV
            A loop whose blocks bind it to spatial iterators only.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the loop carries a reduction iterator of a block under it, or is
            strided.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            sch.parallel(i)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.parallel(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        self._loop_kind("parallel", loop, S.ForKind.PARALLEL)

    def vectorize(self, loop) -> None:
        """Makes ``loop`` a vectorized loop (``T.vectorized``): its iterations become vector
        lanes.

        Parameters
        ----------
        loop : LoopRV
            A loop with a constant extent whose blocks bind it to spatial iterators only.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the loop carries a reduction iterator of a block under it, is strided,
            or its extent is not a constant.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            sch.vectorize(i)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.vectorized(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        self._loop_kind("vectorize", loop, S.ForKind.VECTORIZED)

    def unroll(self, loop) -> None:
        """Makes ``loop`` an unrolled loop (``T.unroll``): the backend repeats its body once
        per iteration.

        Parameters
        ----------
        loop : LoopRV
            Any loop, reduction loops included.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When ``loop`` is not a loop handle of this schedule.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            sch.unroll(i)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.unroll(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        self._loop_kind("unroll", loop, S.ForKind.UNROLLED)

    def bind(self, loop, thread_axis: str) -> None:
        """Binds ``loop`` to a GPU thread axis (``T.thread_binding``).

        Parameters
        ----------
        loop : LoopRV
            A loop whose blocks bind it to spatial iterators only.
        thread_axis : str
            ``"blockIdx.x/y/z"``, ``"threadIdx.x/y/z"``, ``"vthread"`` or
            ``"vthread.x/y/z"``.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the loop carries a reduction iterator or is strided, the axis is
            unknown, or the axis would get two different extents in one kernel.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            sch.bind(i, "threadIdx.x")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.thread_binding(8, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        self._loop_kind(
            "bind", loop, S.ForKind.THREAD_BINDING, thread_axis, [("thread_axis", thread_axis)]
        )

    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Adds the annotation ``ann_key = ann_val`` to a block or loop.

        A loop's annotations print as ``T.serial(..., annotations={...})``, a block's as
        ``T.block_attr({...})``. An existing value under the same key is replaced.

        Parameters
        ----------
        block_or_loop : BlockRV, LoopRV or str
            The block (a handle or its name) or loop to annotate.
        ann_key : str
            The annotation key.
        ann_val : int, float, str, bool, list or ExprRV
            The value; an ``ExprRV`` is replaced by its sampled value.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the key is not a string or the value is not a number, string or list.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            sch.annotate(i, "pragma_unroll_explicit", 1)
            sch.annotate("B", "meta_schedule.tiling_structure", "SSRSRS")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.serial(8, annotations={"pragma_unroll_explicit": 1}):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                        B[vi] = A[vi] * T.float32(2)
        """
        func_name, target = self._block_or_loop(block_or_loop, "annotate")
        value = self._value(ann_val)
        func = navigation.annotate(self._mod[func_name], target, ann_key, value)
        self._commit(func_name, func)
        self._record(
            "annotate",
            [("block_or_loop", block_or_loop), ("ann_key", ann_key), ("ann_val", ann_val)],
        )

    def unannotate(self, block_or_loop, ann_key: str) -> None:
        """Removes the annotation ``ann_key`` from a block or loop.

        Parameters
        ----------
        block_or_loop : BlockRV, LoopRV or str
            The block (a handle or its name) or loop.
        ann_key : str
            The key to remove.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block or loop has no annotation ``ann_key``.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.serial(8, annotations={"pragma_unroll_explicit": 1}):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            sch.unannotate(i, "pragma_unroll_explicit")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        func_name, target = self._block_or_loop(block_or_loop, "unannotate")
        func = navigation.unannotate(self._mod[func_name], target, ann_key)
        self._commit(func_name, func)
        self._record("unannotate", [("block_or_loop", block_or_loop), ("ann_key", ann_key)])

    # ------------------------------------------------------------- blocks

    def compute_at(self, block, loop, preserve_unit_loops=False, index=-1) -> None:
        """Moves producer ``block`` under ``loop``, computing in each iteration exactly the
        region its consumers there read.

        The block gets new loops ``ax0, ...`` over that region, placed after what writes
        its inputs and before what reads its output.

        Parameters
        ----------
        block : BlockRV or str
            A block writing one buffer; all its consumers must lie under ``loop``.
        loop : LoopRV
            A loop of the same scope, not above ``block``.
        preserve_unit_loops : bool
            Whether new loops of extent 1 are kept (else the binding is the region's
            start).
        index : int
            Where among the loop's body statements the block goes: -1 the latest legal
            position, -2 the earliest, or a position in between.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block is already under the loop or contains it, they are in
            different block scopes, the block has a predicate or writes more than one
            buffer, another block writes its buffer, a consumer is outside the loop, no
            position respects the dependences, or the region cannot be bounded.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(4, 8):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("C")
            sch.compute_at(sch.get_block("B"), i)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i in range(4):
                    for ax0 in range(8):
                        with T.block("B"):
                            vi, vj = T.axis.remap("SS", [i, ax0])
                            T.reads(A[vi, vj])
                            T.writes(B[vi, vj])
                            B[vi, vj] = A[vi, vj] * T.float32(2)
                    for j in range(8):
                        with T.block("C"):
                            vi, vj = T.axis.remap("SS", [i, j])
                            T.reads(B[vi, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = B[vi, vj] + T.float32(1)
        """
        self._place("compute_at", block, loop, preserve_unit_loops, index)

    def reverse_compute_at(self, block, loop, preserve_unit_loops=False, index=-1) -> None:
        """Moves consumer ``block`` under ``loop``, computing in each iteration exactly the
        region its producers there write.

        The block gets new loops ``ax0, ...`` over that region, placed after its
        producers and before whatever reads its output.

        Parameters
        ----------
        block : BlockRV or str
            A block reading exactly one buffer produced under ``loop``; all producers
            of that buffer must lie under ``loop``.
        loop : LoopRV
            A loop of the same scope, not above ``block``.
        preserve_unit_loops : bool
            Whether new loops of extent 1 are kept (else the binding is the region's
            start).
        index : int
            Where among the loop's body statements the block goes: -1 the latest legal
            position, -2 the earliest, or a position in between.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block is already under the loop or contains it, they are in
            different block scopes, the block has a predicate, not exactly one of its
            inputs is produced under the loop, a producer is outside the loop, no
            position respects the dependences, or the region cannot be bounded.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(4, 8):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("B")
            sch.reverse_compute_at(sch.get_block("C"), i)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i in range(4):
                    for j in range(8):
                        with T.block("B"):
                            vi, vj = T.axis.remap("SS", [i, j])
                            T.reads(A[vi, vj])
                            T.writes(B[vi, vj])
                            B[vi, vj] = A[vi, vj] * T.float32(2)
                    for ax0 in range(8):
                        with T.block("C"):
                            vi, vj = T.axis.remap("SS", [i, ax0])
                            T.reads(B[vi, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = B[vi, vj] + T.float32(1)
        """
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
        """Inlines producer ``block`` into its consumers and removes it.

        Each load of the intermediate buffer is replaced by the stored expression; a
        buffer no longer used is no longer allocated.

        Parameters
        ----------
        block : BlockRV or str
            A spatial block whose body is one store ``B[v0, ...] = expr`` to an
            intermediate (allocated) buffer, indexed by its iterators.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block is a reduction, has a predicate, allocates buffers, is not a
            single store to an intermediate buffer, another block writes that buffer,
            the block reads it itself, or a consumer reads it before it is written or
            after its inputs change.

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
            sch.compute_inline(sch.get_block("B"))

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("C"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(C[vi])
                        C[vi] = A[vi] * T.float32(2) + T.float32(1)
        """
        self._inline("compute_inline", block)

    def reverse_compute_inline(self, block) -> None:
        """Inlines consumer ``block`` into its producer and removes it.

        The producer stores the consumer's expression (of the produced value) straight
        into the consumer's output buffer.

        Parameters
        ----------
        block : BlockRV or str
            A spatial block whose body is one store reading exactly one intermediate
            buffer exactly once; that buffer has one producer and no other readers.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block is a reduction, has a predicate, is not a single store, does
            not read exactly one intermediate buffer exactly once, that buffer has
            other producers or readers, or a block between the two interferes.

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
            sch.reverse_compute_inline(sch.get_block("C"))

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(C[vi])
                        C[vi] = A[vi] * T.float32(2) + T.float32(1)
        """
        self._inline("reverse_compute_inline", block)

    def _inline(self, primitive, block):
        block = self._as_block(block, primitive)
        func_name, name = self._block(block, primitive)
        self._commit(func_name, getattr(block_placement, primitive)(self._mod[func_name], name))
        self._record(primitive, [("block", block)])

    def cache_read(self, block, read_buffer_index: int, storage_scope: str) -> BlockRV:
        """Reads buffer ``reads[read_buffer_index]`` of ``block`` through a copy in
        ``storage_scope``.

        A new block ``<buffer>_<scope>`` copies the whole buffer into the cache after its
        last writer; every block reading the buffer after the copy reads the cache.
        Move the copy with :meth:`compute_at`.

        Parameters
        ----------
        block : BlockRV or str
            The reading block.
        read_buffer_index : int
            The position of the buffer in the block's ``T.reads``.
        storage_scope : str
            The scope of the cache, e.g. ``"shared"``, ``"local"`` or ``"global.A_reg"``.

        Returns
        -------
        BlockRV
            The copy block.

        Raises
        ------
        ScheduleError
            When the index is out of range, the scope is not a valid name, the block
            also writes the buffer, or the buffer is written after the block.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            A_shared = sch.cache_read(sch.get_block("B"), 0, "shared")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                A_shared = T.alloc_buffer((8,), "float32", scope="shared")
                for ax0 in range(8):
                    with T.block("A_shared"):
                        v0 = T.axis.remap("S", [ax0])
                        T.reads(A[v0])
                        T.writes(A_shared[v0])
                        A_shared[v0] = A[v0]
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A_shared[vi])
                        T.writes(B[vi])
                        B[vi] = A_shared[vi] * T.float32(2)
        """
        return self._cache("cache_read", block, read_buffer_index, storage_scope)

    def cache_write(self, block, write_buffer_index: int, storage_scope: str) -> BlockRV:
        """Writes buffer ``writes[write_buffer_index]`` of ``block`` through a cache in
        ``storage_scope``.

        The block writes a new buffer ``<buffer>_<scope>``, and a new block of the same
        name copies it into the original buffer right after the block's loop nest.
        Move the copy with :meth:`reverse_compute_at`.

        Parameters
        ----------
        block : BlockRV or str
            The writing block.
        write_buffer_index : int
            The position of the buffer in the block's ``T.writes``.
        storage_scope : str
            The scope of the cache, e.g. ``"local"`` or ``"shared"``.

        Returns
        -------
        BlockRV
            The copy block.

        Raises
        ------
        ScheduleError
            When the index is out of range, the scope is not a valid name, another
            block of the scope writes the buffer, or a block reads it inside the same
            loop nest.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            B_local = sch.cache_write(sch.get_block("B"), 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B_local = T.alloc_buffer((8,), "float32", scope="local")
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B_local[vi])
                        B_local[vi] = A[vi] * T.float32(2)
                for ax0 in range(8):
                    with T.block("B_local"):
                        v0 = T.axis.remap("S", [ax0])
                        T.reads(B_local[v0])
                        T.writes(B[v0])
                        B[v0] = B_local[v0]
        """
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
        """Changes the storage scope of buffer ``writes[buffer_index]`` of ``block``.

        Parameters
        ----------
        block : BlockRV or str
            The writing block.
        buffer_index : int
            The position of the buffer in the block's ``T.writes``; it must be
            allocated in the function (``T.alloc_buffer``), not a parameter.
        storage_scope : str
            The new scope, e.g. ``"shared"`` or ``"local"``.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the index is out of range, the scope is not a valid name, or the
            buffer is a function parameter.

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
            sch.set_scope(sch.get_block("B"), 0, "shared")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8,), "float32", scope="shared")
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
        """
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
        """Moves the ``T.init()`` of a reduction block into its own block ``<name>_init``
        placed right before ``loop``; the block becomes ``<name>_update``.

        The init block gets copies (``<loop>_init``) of the loops between ``loop`` and
        the block that carry spatial iterators. Handles to the block now refer to
        ``<name>_update``.

        Parameters
        ----------
        block : BlockRV or str
            A reduction block (one with ``T.init()``).
        loop : LoopRV
            One of the block's loops; no loop above it may carry a reduction iterator.

        Returns
        -------
        BlockRV
            The init block.

        Raises
        ------
        ScheduleError
            When the block has no init, the loop is not above it, a loop outside it
            carries a reduction iterator, or the block's predicate depends on a
            reduction loop.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, k in T.grid(4, 8):
                    with T.block("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(A[vi, vk])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

        Schedule::

            sch = tilelang.Schedule(before)
            i, k = sch.get_loops("B")
            B_init = sch.decompose_reduction(sch.get_block("B"), k)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(4):
                    with T.block("B_init"):
                        vi = T.axis.remap("S", [i])
                        T.reads()
                        T.writes(B[vi])
                        B[vi] = T.float32(0)
                    for k in range(8):
                        with T.block("B_update"):
                            vi, vk = T.axis.remap("SR", [i, k])
                            T.reads(B[vi], A[vi, vk])
                            T.writes(B[vi])
                            B[vi] = B[vi] + A[vi, vk]
        """
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
        """Factors the reduction under ``loop`` into partial results over a new spatial axis.

        A block ``<name>_rf`` reduces into ``<buffer>_rf``, whose shape is the written
        buffer's with the loop's extent inserted at ``factor_axis``; the loop's iterator is
        spatial there, so the loop can then be parallelized or vectorized. The original
        block keeps its name and combines the partial results.

        Parameters
        ----------
        loop : LoopRV
            A reduction loop over the single block under it, starting at 0 with unit
            step; the block's update is ``+``, ``*``, ``T.min`` or ``T.max`` of the
            stored element, and its init stores that combiner's identity.
        factor_axis : int
            Where the new dimension goes in ``<buffer>_rf`` (negative counts from the
            end).

        Returns
        -------
        BlockRV
            The rfactor block ``<name>_rf``.

        Raises
        ------
        ScheduleError
            When there is not exactly one block under the loop, the loop is not one of
            its reduction loops, the block is not such a reduction (or has a predicate,
            or a loop carrying both spatial and reduction iterators), or
            ``factor_axis`` is out of range.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, k in T.grid(4, 8):
                    with T.block("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(A[vi, vk])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

        Schedule::

            sch = tilelang.Schedule(before)
            i, k = sch.get_loops("B")
            k_0, k_1 = sch.split(k, factors=[None, 4])
            B_rf = sch.rfactor(k_1, 0)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B_rf = T.alloc_buffer((4, 4), "float32")
                for i, k_0, k_1 in T.grid(4, 2, 4):
                    with T.block("B_rf"):
                        vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                        T.reads(A[vi, vk_0 * 4 + vk_1])
                        T.writes(B_rf[vk_1, vi])
                        with T.init():
                            B_rf[vk_1, vi] = T.float32(0)
                        B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
                for i, k_1 in T.grid(4, 4):
                    with T.block("B"):
                        vi, vk_1 = T.axis.remap("SR", [i, k_1])
                        T.reads(B_rf[vk_1, vi])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + B_rf[vk_1, vi]
        """
        func_name, var = self._loop(loop, "rfactor")
        func, rf_name = rfactor.rfactor(self._mod[func_name], var, factor_axis)
        self._commit(func_name, func)
        (rv,) = self._new_blocks(func_name, [rf_name])
        self._record("rfactor", [("loop", loop), ("factor_axis", factor_axis)], [rv])
        return rv

    def blockize(self, target, preserve_unit_iters: bool = True) -> BlockRV:
        """Wraps the loops from ``target`` down to the single block under them into an outer
        block ``<name>_o`` over tensor regions (the shape ``tensorize`` matches).

        Each binding splits into an outer iterator ``v_o`` of the new block and an inner
        iterator ``v_i`` of the old one; a reduction gets its init as a nested block.

        Parameters
        ----------
        target : LoopRV
            The outermost loop of the subtree; the loops under it must end in exactly
            one block whose bindings tile affinely.
        preserve_unit_iters : bool
            Accepted for TVM's signature; it does not change the result.

        Returns
        -------
        BlockRV
            The outer block.

        Raises
        ------
        ScheduleError
            When the loops under ``target`` do not end in one block, the block's
            predicate uses outer loops, or a binding is not an affine tile.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("B")
            B_o = sch.blockize(j)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(4):
                    with T.block("B_o"):
                        vi_o = T.axis.remap("S", [i])
                        T.reads(A[vi_o, 0:8])
                        T.writes(B[vi_o, 0:8])
                        for j in range(8):
                            with T.block("B"):
                                vj_i = T.axis.remap("S", [j])
                                T.reads(A[vi_o, vj_i])
                                T.writes(B[vi_o, vj_i])
                                B[vi_o, vj_i] = A[vi_o, vj_i] * T.float32(2)
        """
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
        """Draws ``n`` factors whose product is the loop's extent, the innermost at most
        ``max_innermost_factor``, uniformly among all such tilings.

        The draw is recorded in the trace; pass the handles to :meth:`split`.

        Parameters
        ----------
        loop : LoopRV
            A loop with a constant extent.
        n : int
            The number of factors.
        max_innermost_factor : int
            The largest innermost factor (0 or less: no limit).
        decision : list of int or None
            The factors to use instead of drawing (how a trace replays).

        Returns
        -------
        list of ExprRV
            The factors, outermost first.

        Raises
        ------
        ScheduleError
            When the extent is not constant, ``n`` is not a positive int, no tiling
            satisfies the limit, or the decision is not ``n`` positive factors of the
            extent.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            # decision= fixes the draw, as a replayed trace does
            factors = sch.sample_perfect_tile(i, n=2, decision=[2, 4])
            i_0, i_1 = sch.split(i, factors)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i_0, i_1 in T.grid(2, 4):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i_0 * 4 + i_1)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
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
        """Draws one of ``candidates`` with probabilities ``probs``.

        The draw is recorded in the trace; the handle can be passed where a value is
        expected, e.g. as an annotation value.

        Parameters
        ----------
        candidates : list
            The values to choose from.
        probs : list of float
            One non-negative weight per candidate (normalized; not all zero).
        decision : int or None
            The index to use instead of drawing (how a trace replays).

        Returns
        -------
        ExprRV
            The chosen value.

        Raises
        ------
        ScheduleError
            When the lists differ in length or are empty, the weights are negative or
            all zero, or the decision is not an index of ``candidates``.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            # decision= fixes the draw (an index into the candidates), as a replayed trace does
            step = sch.sample_categorical([0, 16, 64], probs=[0.25, 0.5, 0.25], decision=1)
            sch.annotate(i, "pragma_auto_unroll_max_step", step)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.serial(8, annotations={"pragma_auto_unroll_max_step": 16}):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
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

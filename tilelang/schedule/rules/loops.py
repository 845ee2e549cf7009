"""Loop-level finishing touches shared by the rules: picking tile sizes, vectorising the
innermost unit-stride loop, running outer loops in parallel.

Each helper issues ordinary schedule primitives. A primitive that refuses (a
:class:`~tilelang.ScheduleError`) leaves the schedule as it was, so the helpers that
are optional improvements swallow the refusal and report ``False``.
"""

from __future__ import annotations

from tilelang.errors import ScheduleError


def largest_divisor(n: int, cap: int) -> int:
    """The largest divisor of ``n`` that is at most ``cap`` (at least 1)."""
    for d in range(min(n, max(1, cap)), 0, -1):
        if n % d == 0:
            return d
    return 1


def vector_tile(extent: int, lanes: int, max_vectors: int) -> int:
    """The width of the vector tile along a contiguous axis of ``extent`` elements: a
    divisor of the extent (so no tail is needed), as many whole vectors as fit in
    ``max_vectors``, else the widest divisor below that."""
    for count in range(max_vectors, 0, -1):
        if extent % (count * lanes) == 0:
            return count * lanes
    return largest_divisor(extent, lanes * max_vectors)


def vectorize_innermost(sch, loop, lanes: int, extent: int, width: int | None = None) -> bool:
    """Vectorise ``loop`` (``extent`` iterations), split into vectors of ``width``
    elements first when it is longer (default: one vector of ``lanes`` when the loop is
    longer than four, else the whole loop). False when it cannot be vectorised (a
    reduction loop, a non-divisible extent too long for one vector)."""
    try:
        if width is None:
            width = vector_tile(extent, lanes, 1) if extent > 4 * lanes else extent
        if width < extent:
            if width < 2:
                return False
            loop = sch.split(loop, [None, width])[1]
        sch.vectorize(loop)
        return True
    except ScheduleError:
        return False


#: a block with fewer vector iterations (iterations over lanes) than this stays on one
#: thread: waking the others for a parallel region costs tens of microseconds on a busy
#: machine, about what such a block takes in all. Counted in vector iterations because
#: a vectorised block runs ``lanes`` iterations per instruction: mm_relu 128^3 (2^17
#: vectors of 16 floats, 31 us on one thread) took 40 us on two, depthwise 3x3 over
#: 64x56x56 (113K vectors, 80 us) 100-140 us; a 1024x4096 matrix-vector product or
#: a 4096x1024 softmax (2^18 vectors each) gain from the second thread.
MIN_PARALLEL_WORK = 1 << 18


def parallel_outer(
    sch, loops, extents, min_tasks: int = 2, work: int | None = None, lanes: int = 1
) -> bool:
    """Run the outermost loop with at least ``min_tasks`` iterations (or a symbolic
    number) in parallel; the loops above it (of one iteration) are left serial.
    ``work`` (the block's iterations, when known) over ``lanes`` (the vector width
    its innermost loop runs at, 1 when not vectorised) below MIN_PARALLEL_WORK: nothing
    is made parallel."""
    if work is not None and work // max(1, lanes) < MIN_PARALLEL_WORK:
        return False
    for loop, extent in zip(loops, extents):
        if extent is None or extent >= min_tasks:
            try:
                sch.parallel(loop)
                return True
            except ScheduleError:
                return False
    return False


def unroll_all(sch, loops) -> None:
    """Unroll each of ``loops`` that accepts it."""
    for loop in loops:
        try:
            sch.unroll(loop)
        except ScheduleError:
            pass

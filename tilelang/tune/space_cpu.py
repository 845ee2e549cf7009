"""The generic search space for CPUs (``space="auto"``), after MetaSchedule's.

For each block of the function, in order:

- an elementwise block writing an intermediate buffer is inlined into its consumers
  (``compute_inline``);
- a block with reduction iterators (matmul-like) gets multi-level tiling ``SSRSRS``:
  every spatial loop split in four (``S0 S1 S2 S3``), every reduction loop in two
  (``R0 R1``), ordered ``S0 S1 R0 S2 R1 S3``. The accumulator lives in a ``"local"``
  buffer (``cache_write`` + ``reverse_compute_at`` under ``S1``), written back once per
  tile, so the innermost ``S3`` tile stays in registers; an elementwise consumer
  (the ReLU of mm_relu) is computed at the same place and the write-back inlined into
  it. The reused operand may be packed (``cache_read`` computed at the parallel loop,
  so each panel is copied contiguously once per outer tile). The ``S0`` loops are
  fused and parallel; the innermost spatial loop of ``S3`` is vectorized, the other
  ``S3`` loops and ``R1`` may be unrolled; the reduction's init is decomposed out of
  ``R0`` and vectorized too. That reaches the hand-written BLAS form of
  samples/matmul_1024_tuned.tir: a parallel row loop, ``k`` split by 4 and unrolled,
  an 8x32 register tile with the 32 columns vectorized.
- any other spatial block: the innermost loop split and vectorized, the outer loops
  fused and parallel.

Draws that make a register tile larger than :data:`MAX_REGISTER_TILE` elements or a
local accumulator larger than :data:`MAX_LOCAL_TILE` raise ScheduleError; the
tuner then draws again (TVM's postprocessors reject candidates the same way).
"""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import post_order_visit

#: elements of the innermost (S3) tile: it is held in vector registers
MAX_REGISTER_TILE = 512
#: elements of the local accumulator (S2 x S3)
MAX_LOCAL_TILE = 8192
#: largest innermost factor of the vectorized loop (TVM's max_innermost_factor=64)
MAX_VECTOR_FACTOR = 64
MIN_VECTOR_BYTES = 32


def generic_space(sch):
    """Apply the generic CPU space to ``sch`` (see the module docstring); returns it."""
    func_name = _only_function(sch)
    placed: set[str] = set()  # consumers already computed under a reduction's tile
    for name in _block_names(sch.mod[func_name]):
        info = _block_info(sch, func_name, name)
        if info is None or name in placed:
            continue
        if info.reduction:
            _tile_reduction(sch, name, info, placed)
        elif info.writes_intermediate and _try(sch.compute_inline, name):
            continue
        else:
            _tile_spatial(sch, name)
    return sch


# ----------------------------------------------------------------- analysis


class _BlockInfo:
    def __init__(self, kinds, reduction, writes_intermediate, dtype_bytes):
        self.kinds = kinds  # per loop: "S" or "R", outermost first
        self.reduction = reduction
        self.writes_intermediate = writes_intermediate
        self.dtype_bytes = dtype_bytes


def _only_function(sch) -> str:
    names = [n for n, f in sch.mod.functions.items() if isinstance(f, PrimFunc)]
    if len(names) != 1:
        raise ScheduleError(f"the generic space tunes one prim_func, the module has {names}")
    return names[0]


def _block_names(func) -> list[str]:
    names = []

    def visit(node):
        if isinstance(node, S.Block) and node.name_hint != "root":
            names.append(node.name_hint)

    post_order_visit(func.body, visit)
    return names


def _block_info(sch, func_name, name) -> _BlockInfo | None:
    """Loop kinds of a block whose iterators are bound one-to-one to its loops (the
    form a prim_func starts in), or None for any other block (left alone)."""
    try:
        block_rv = sch.get_block(name, func_name)
    except ScheduleError:
        return None  # inlined or renamed by an earlier step
    block = sch.get(block_rv)
    loops = [sch.get(rv) for rv in sch.get_loops(block_rv)]
    realize = _realize_of(sch.mod[func_name], block)
    if realize is None or len(loops) != len(block.iter_vars) or not loops:
        return None
    kinds = []
    for loop, value, iv in zip(loops, realize.iter_values, block.iter_vars):
        if value is not loop.loop_var or not isinstance(loop.extent, E.IntImm):
            return None
        kinds.append("R" if iv.iter_type == S.IterVar.CommReduce else "S")
    func = sch.mod[func_name]
    params = {id(b) for b in func.buffer_map.values()}
    writes = [r.buffer for r in block.writes]
    intermediate = bool(writes) and all(id(b) not in params for b in writes)
    dtype_bytes = max(1, writes[0].dtype.bits // 8) if writes else 4
    return _BlockInfo(kinds, "R" in kinds, intermediate, dtype_bytes)


def _realize_of(func, block):
    found = []

    def visit(node):
        if isinstance(node, S.BlockRealize) and node.block is block:
            found.append(node)

    post_order_visit(func.body, visit)
    return found[0] if found else None


def _try(primitive, *args) -> bool:
    """Apply a primitive that may not apply; a failure leaves the schedule unchanged."""
    try:
        primitive(*args)
    except ScheduleError:
        return False
    return True


# ----------------------------------------------------------------- reductions


def _tile_reduction(sch, name, info, placed) -> None:
    block = sch.get_block(name)
    consumers = sch.get_consumers(block)
    write_back = sch.cache_write(block, 0, "local")
    loops = sch.get_loops(block)
    spatial = [i for i, k in enumerate(info.kinds) if k == "S"]
    last_spatial = spatial[-1] if spatial else None
    levels = {"S0": [], "S1": [], "S2": [], "S3": [], "R0": [], "R1": []}
    register_tile, local_tile = 1, 1
    for index, (loop, kind) in enumerate(zip(loops, info.kinds)):
        if kind == "S":
            vector = index == last_spatial
            limit = MAX_VECTOR_FACTOR if vector else 16
            factors = sch.sample_perfect_tile(loop, n=4, max_innermost_factor=limit)
            values = [sch.get(f) for f in factors]
            register_tile *= values[3]
            local_tile *= values[2] * values[3]
            if vector:
                _check_vector_width(values[3], values, info.dtype_bytes)
            for level, part in zip(("S0", "S1", "S2", "S3"), sch.split(loop, factors)):
                levels[level].append(part)
        else:
            factors = sch.sample_perfect_tile(loop, n=2, max_innermost_factor=16)
            for level, part in zip(("R0", "R1"), sch.split(loop, factors)):
                levels[level].append(part)
    if register_tile > MAX_REGISTER_TILE or local_tile > MAX_LOCAL_TILE:
        raise ScheduleError(
            f"generic space: register tile of {register_tile} / local tile of "
            f"{local_tile} elements is too large; draw again"
        )
    order = [*levels["S0"], *levels["S1"], *levels["R0"], *levels["S2"], *levels["R1"]]
    sch.reorder(*order, *levels["S3"])
    anchor = levels["S1"][-1] if levels["S1"] else None
    if anchor is not None:
        sch.reverse_compute_at(write_back, anchor)
        if _fuse_elementwise_consumers(sch, consumers, anchor, placed):
            if _try(sch.compute_inline, write_back):
                write_back = None
    outer = sch.fuse(*levels["S0"]) if len(levels["S0"]) > 1 else levels["S0"][0]
    if sch.sample_categorical([0, 1], [0.5, 0.5]) == 1:
        _pack_reused_operand(sch, block, outer)
    sch.parallel(outer)
    _annotate_inner(sch, levels, info)
    init = sch.decompose_reduction(block, levels["R0"][0]) if levels["R0"] else None
    for other in (init, write_back):
        if other is not None:
            _vectorize_innermost(sch, other)


def _check_vector_width(innermost, values, dtype_bytes) -> None:
    extent = 1
    for v in values:
        extent *= v
    if innermost * dtype_bytes < MIN_VECTOR_BYTES and innermost < extent:
        raise ScheduleError(
            f"generic space: a vector of {innermost} elements is too narrow; draw again"
        )


def _fuse_elementwise_consumers(sch, consumers, anchor, placed) -> bool:
    """Compute each consumer that can be under the tile there (the caller then folds
    the write-back copy into it: ``Y_local -> Y -> C`` becomes ``Y_local -> C``).
    True when every consumer moved."""
    moved = True
    for consumer in consumers:
        name = sch.get(consumer).name_hint
        if _try(sch.reverse_compute_at, consumer, anchor):
            placed.add(name)
            _vectorize_innermost(sch, consumer)
        else:
            moved = False
    return moved and bool(consumers)


def _pack_reused_operand(sch, block, outer) -> None:
    """Copy the operand that does not depend on the outermost spatial iterator (B of
    C = A @ B) once per parallel tile, into a buffer laid out as the tile reads it."""
    node = sch.get(block)
    spatial = [iv.var for iv in node.iter_vars if iv.iter_type == S.IterVar.DataPar]
    if not spatial:
        return
    written = {id(w.buffer) for w in node.writes}
    for index, region in enumerate(node.reads):
        if id(region.buffer) in written:
            continue
        if not _uses(region, spatial[0]):
            packed = sch.cache_read(block, index, "global")
            sch.compute_at(packed, outer)
            _vectorize_innermost(sch, packed)
            return


def _uses(region, var) -> bool:
    found = []
    for rng in region.region:
        post_order_visit(rng.min, lambda n: found.append(n) if n is var else None)
    return bool(found)


def _annotate_inner(sch, levels, info) -> None:
    """Vectorize the innermost spatial loop; maybe unroll R1 and the other S3 loops."""
    inner = levels["S3"]
    if inner:
        sch.vectorize(inner[-1])
    if sch.sample_categorical([0, 1], [0.25, 0.75]) == 1:
        for loop in [*levels["R1"], *inner[:-1]]:
            sch.unroll(loop)


def _vectorize_innermost(sch, block) -> None:
    loops = sch.get_loops(block)
    if loops:
        _try(sch.vectorize, loops[-1])


# ----------------------------------------------------------------- spatial blocks


def _tile_spatial(sch, name) -> None:
    block = sch.get_block(name)
    loops = sch.get_loops(block)
    factors = sch.sample_perfect_tile(loops[-1], n=2, max_innermost_factor=MAX_VECTOR_FACTOR)
    outer_last, inner = sch.split(loops[-1], factors)
    outer = [*loops[:-1], outer_last]
    fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    sch.parallel(fused)
    sch.vectorize(inner)

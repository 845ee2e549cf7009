"""Half-precision matmuls on tensor cores: the tensor-core schedule of a matmul-like block.

A block ``C[i, j] += float32(A[i, k]) * float32(B[k, j])`` over ``float16`` operands
(or the same in ``float16`` throughout; or over ``bfloat16`` operands into float32,
which only the ``mma`` family computes), A and C row-major, B row-major or transposed
(``B[j, k]``, loaded into column-major fragments), is tiled for the WMMA intrinsics
of :mod:`tilelang.intrinsics.cuda_wmma` or, on sm_80 and later, the ``ldmatrix`` +
``mma.sync`` ones of :mod:`tilelang.intrinsics.cuda_mma` (the plan's ``family``; same
loops, the fragments are then the warp's registers)::

    blockIdx.y, blockIdx.x     a (16 wm fm) x (16 wn fn) tile of C per thread block
      threadIdx.y              wm x wn warps, each (16 fm) x (16 fn) of the tile
        fill fm x fn accumulator fragments            (wmma_fill)
        for k_0:                                      16 kf columns of A per step
          A_shared, B_shared <- global                (all threads, vectorised)
          for k_1 in range(kf):                       (pipelined: one step behind)
            fm matrix_a, fn matrix_b fragments <- shared   (wmma_load)
            fm x fn mma_sync                          (wmma_sync)
        accumulators -> C                             (wmma_store)

The fetches are split over ``threadIdx.y`` (the warps) and ``threadIdx.x`` (32 lanes),
each thread copying ``vec`` contiguous halves (one 16-byte move for 8); the shared
rows are padded (``storage_align``) against bank conflicts of the fragment loads;
ThreadSync adds the barriers. ``k_0`` is software-pipelined (TVM's
``software_pipeline_stage``/``order`` annotations, :data:`PIPELINE_STAGES`): step k's
fetches (``cp.async`` groups on sm_80+) overlap step k - 1's compute, the shared
panels double-buffered. The plan
needs the extents to be multiples of the tiles (no partial fragments) and an arch
with tensor cores (sm_70 or later; an unknown arch is the backend's default, sm_90).
"""

from __future__ import annotations

import attrs

from tilelang.analysis.fragments import FAMILY_SCOPES
from tilelang.intrinsics import cuda_mma, cuda_wmma
from tilelang.schedule.rules.gpu.matmul import matmul_axes

FRAG = 16
#: ((warps along i, along j), (fragments per warp along i, along j)), largest first
TILINGS = (
    ((2, 4), (4, 2)), ((2, 2), (4, 2)), ((2, 2), (2, 2)), ((2, 2), (2, 1)), ((2, 2), (1, 1)),
    ((2, 1), (1, 1)), ((1, 1), (1, 1)),
)  # fmt: skip
#: shared rows padded to a stride of 8 (mod 32) halves: a fragment load's rows then
#: start in different banks (16-byte aligned, as ldm must be for half)
PAD_FACTOR, PAD_OFFSET = 32, 8
K_FRAGS = (2, 1)
#: the k_0 loop's software pipeline: the fetches of step k (stage 0, asynchronous
#: where the arch has cp.async) overlap the fragment loads and mma of step k - 1
#: (stage 1); the shared panels are double-buffered
PIPELINE_STAGES, PIPELINE_ORDER, PIPELINE_VERSIONS = (0, 0, 1), (0, 1, 2), 2
VECTORS = (8, 4, 2, 1)
OUT_DTYPES = ("float32", "float16")
IN_DTYPES = ("float16", "bfloat16")


@attrs.frozen
class WmmaPlan:
    """Loop positions of ``i``, ``j``, ``k``, the warp grid and fragments per warp."""

    i: int
    j: int
    k: int
    warps: tuple
    frags: tuple
    k_frags: int
    out_dtype: str
    a_name: str
    b_name: str
    b_trans: bool = False  # B read as B[j, k] (a linear layer's weight)
    family: str = "wmma"  # or "mma": ldmatrix + mma.sync (sm_80+)
    in_dtype: str = "float16"  # or "bfloat16" (mma family, float32 out)

    @property
    def threads(self) -> int:
        return self.warps[0] * self.warps[1] * 32


def plan_wmma(info, limits) -> WmmaPlan | None:
    """The largest plan of :func:`wmma_plans` (None when there is none)."""
    plans = wmma_plans(info, limits)
    return plans[0] if plans else None


def families(limits) -> tuple:
    """The fragment families ``limits``' arch has, preferred first: ``mma`` (ldmatrix,
    mma.sync m16n8k16) from sm_80 (an unknown arch is the backend's sm_90), ``wmma``."""
    if limits.arch and limits.arch < 70:
        return ()
    return ("wmma",) if limits.arch and limits.arch < 80 else ("mma", "wmma")


def wmma_plans(info, limits) -> list:
    """Every tiling of :data:`TILINGS` x :data:`K_FRAGS` x :func:`families` that fits
    when ``info`` is a half-precision matmul the tensor-core intrinsics can compute with
    whole fragments on ``limits``' arch, largest first, the preferred family first
    within a size (empty otherwise)."""
    if not families(limits):
        return []
    axes = matmul_axes(info)
    if axes is None or len(info.spatial) != 2:
        return []
    i, j, k, a, b = axes
    out, in_dtype = str(info.write.buffer.dtype), str(a.buffer.dtype)
    if in_dtype not in IN_DTYPES or str(b.buffer.dtype) != in_dtype:
        return []
    if out not in OUT_DTYPES or (in_dtype == "bfloat16" and out != "float32"):
        return []
    allowed = families(limits) if in_dtype == "float16" else ("mma",)
    # row-major A and C (unit steps along k and j); B row-major (along j) or
    # transposed, B[j, k] (along k)
    if a.strides.get(id(k.var)) != 1:
        return []
    b_trans = b.strides.get(id(j.var)) != 1
    if b_trans and b.strides.get(id(k.var)) != 1:
        return []
    if info.write.strides.get(id(j.var)) != 1:
        return []
    ei, ej, ek = info.extent_of(i), info.extent_of(j), info.extent_of(k)
    if None in (ei, ej, ek):
        return []
    plans = []
    for warps, frags in TILINGS:
        rows, cols = FRAG * warps[0] * frags[0], FRAG * warps[1] * frags[1]
        if ei % rows or ej % cols or warps[0] * warps[1] * 32 > limits.max_threads_per_block:
            continue
        for k_frags in K_FRAGS:
            shared = 2 * FRAG * k_frags * (rows + cols) * PIPELINE_VERSIONS
            if ek % (FRAG * k_frags) or shared > limits.max_shared_memory_per_block:
                continue
            for family in families(limits):
                if family not in allowed:
                    continue
                plans.append(WmmaPlan(
                    info.loop_of(i), info.loop_of(j), info.loop_of(k), warps, frags,
                    k_frags, out, a.buffer.name, b.buffer.name, b_trans, family, in_dtype,
                ))  # fmt: skip
    return plans


def _read_index(sch, block, name: str) -> int:
    names = [r.buffer.name for r in sch.get(block).reads]
    return names.index(name)


def _tile_2d(sch, block, intrin: str) -> None:
    """The last two loops of ``block`` split into 16 x 16 tiles, each tensorized."""
    rows, cols = sch.get_loops(block)[-2:]
    r0, r1 = sch.split(rows, [None, FRAG])
    c0, c1 = sch.split(cols, [None, FRAG])
    sch.reorder(r0, c0, r1, c1)
    sch.tensorize(r1, intrin)


def _cooperative_fetch(sch, fetch, plan: WmmaPlan, panel: int) -> None:
    """The fetch's two loops fused and spread over the warps and lanes, ``vec``
    contiguous elements per thread (the widest that divides the panel)."""
    fused = sch.fuse(*sch.get_loops(fetch)[-2:])
    vec = next(v for v in VECTORS if panel % (plan.threads * v) == 0 or v == 1)
    if panel % plan.threads:
        _, ty, tx = sch.split(fused, [None, plan.warps[0] * plan.warps[1], 32])
    else:
        _, ty, tx, lanes = sch.split(fused, [None, plan.warps[0] * plan.warps[1], 32, vec])
        sch.vectorize(lanes)
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")


def intrinsics(plan: WmmaPlan) -> tuple:
    """``(fill, sync, store, (load a, load b))``: the plan family's intrinsic names."""
    out = plan.out_dtype
    if plan.family == "mma":
        return (
            cuda_mma.mma_fill(out),
            cuda_mma.mma_sync(out, trans_b=plan.b_trans, in_dtype=plan.in_dtype),
            cuda_mma.mma_store(out, "global"),
            (cuda_mma.mma_ldmatrix("a", dtype=plan.in_dtype),
             cuda_mma.mma_ldmatrix("b", trans=plan.b_trans, dtype=plan.in_dtype)),
        )  # fmt: skip
    return (
        cuda_wmma.wmma_fill(FRAG, FRAG, FRAG, out),
        cuda_wmma.wmma_sync(FRAG, FRAG, FRAG, out, trans=plan.b_trans),
        cuda_wmma.wmma_store(FRAG, FRAG, FRAG, out, "global"),
        (cuda_wmma.wmma_load(operand="a"),
         cuda_wmma.wmma_load(operand="b", trans=plan.b_trans)),
    )  # fmt: skip


def apply_wmma(sch, block, plan: WmmaPlan) -> None:
    """The schedule of the module docstring."""
    fill, sync, store, loads = intrinsics(plan)
    scope_a, scope_b, scope_acc = FAMILY_SCOPES[plan.family]
    loops = sch.get_loops(block)
    i, ii = sch.split(loops[plan.i], [None, FRAG])
    j, ji = sch.split(loops[plan.j], [None, FRAG])
    k, ki = sch.split(loops[plan.k], [None, FRAG])
    i0, i1, i2 = sch.split(i, [None, plan.warps[0], plan.frags[0]])
    j0, j1, j2 = sch.split(j, [None, plan.warps[1], plan.frags[1]])
    k0, k1 = sch.split(k, [None, plan.k_frags])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2, ii, ji, ki)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    warp = sch.fuse(i1, j1)
    sch.bind(warp, "threadIdx.y")
    accumulator = sch.cache_write(block, 0, scope_acc)
    sch.reverse_compute_at(accumulator, warp)
    # both caches of an operand before any compute_at: each reads the stage before it
    shared, fragments = [], []
    for name, scope in ((plan.a_name, scope_a), (plan.b_name, scope_b)):
        shared.append(sch.cache_read(block, _read_index(sch, block, name), "shared"))
        cached = sch.get(shared[-1]).writes[0].buffer.name
        fragments.append(sch.cache_read(block, _read_index(sch, block, cached), scope))
    for fragment, intrin in zip(fragments, loads):
        sch.compute_at(fragment, k1)
        _tile_2d(sch, fragment, intrin)
    k_tile = FRAG * plan.k_frags
    panels = (FRAG * plan.warps[0] * plan.frags[0] * k_tile,
              k_tile * FRAG * plan.warps[1] * plan.frags[1])  # fmt: skip
    for fetch, panel in zip(shared, panels):
        sch.compute_at(fetch, k0)
        sch.storage_align(fetch, 0, axis=-2, factor=PAD_FACTOR, offset=PAD_OFFSET)
        _cooperative_fetch(sch, fetch, plan, panel)
    _tile_2d(sch, accumulator, store)
    sch.annotate(k0, "software_pipeline_stage", list(PIPELINE_STAGES))
    sch.annotate(k0, "software_pipeline_order", list(PIPELINE_ORDER))
    sch.annotate(k0, "software_pipeline_async_stages", [0])
    init = sch.decompose_reduction(block, k0)
    sch.tensorize(sch.get_loops(init)[-2], fill)
    sch.tensorize(ii, sync)


__all__ = ["WmmaPlan", "plan_wmma", "wmma_plans", "apply_wmma", "families", "intrinsics"]

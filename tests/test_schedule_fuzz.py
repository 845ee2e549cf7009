"""Schedule fuzzing: random primitive sequences on random small programs (maps,
shifts, reversed indices, windows that over-compute at the edges, row sums, reads
through fused layout indices). Each
step either succeeds and the program still computes the same numbers, or raises
ScheduleError and leaves the module exactly as it was. Nothing else may escape."""

from __future__ import annotations

import random

import numpy as np

import tilelang
from tilelang import ScheduleError, tir

PROGRAMS = 100  # random programs per run, each with up to 4 primitives


def random_program(rng: random.Random) -> str:
    """A chain of 2-3 blocks over small 2-D buffers: elementwise maps and a row sum."""
    n, m = rng.choice([4, 6, 8]), rng.choice([4, 6])
    stages = rng.randint(2, 3)
    lines = [
        "@T.prim_func",
        f'def main(A: T.Buffer(({n}, {m}), "float32"), Out: T.Buffer(({n}, {m}), "float32")):',
    ]
    names = ["A"] + [f"T{s}" for s in range(stages - 1)] + ["Out"]
    for name in names[1:-1]:
        lines.append(f'    {name} = T.alloc_buffer(({n}, {m}), "float32")')
    for s in range(stages):
        src, dst = names[s], names[s + 1]
        kind = rng.choice(["map", "map", "shift", "sum", "reverse", "window", "fused"])
        lines.append(f"    for i, j in T.grid({n}, {m}):" if kind != "sum"
                     else f"    for i, j, k in T.grid({n}, {m}, {m}):")  # fmt: skip
        lines.append(f'        with T.block("S{s}"):')
        if kind == "sum":
            lines += [
                '            vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
                "            with T.init():",
                f"                {dst}[vi, vj] = T.float32(0)",
                f"            {dst}[vi, vj] = {dst}[vi, vj] + {src}[vi, vk] * T.float32(0.5)",
            ]
        elif kind == "reverse":  # a reversed index: compute_at solves c - v
            lines += [
                '            vi, vj = T.axis.remap("SS", [i, j])',
                f"            {dst}[vi, vj] = {src}[vi, {m - 1} - vj] + T.float32(3)",
            ]
        elif kind == "window":  # reads past its point: regions over-compute at edges
            lines += [
                '            vi, vj = T.axis.remap("SS", [i, j])',
                f"            {dst}[vi, vj] = T.if_then_else(vj < {m - 1}, "
                f"{src}[vi, vj] + {src}[vi, vj + 1], {src}[vi, vj])",
            ]
        elif kind == "fused":  # layout indices: compute_at inverts the iterator map
            flat = f"(vi * {m} + vj)"
            lines += [
                '            vi, vj = T.axis.remap("SS", [i, j])',
                f"            {dst}[vi, vj] = {src}[{flat} // {m}, {flat} % {m}] + T.float32(2)",
            ]
        elif kind == "shift":
            lines += [
                '            vi, vj = T.axis.remap("SS", [i, j])',
                f"            {dst}[vi, vj] = {src}[vi, (vj + 1) % {m}] + T.float32(1)",
            ]
        else:
            lines += [
                '            vi, vj = T.axis.remap("SS", [i, j])',
                f"            {dst}[vi, vj] = {src}[vi, vj] * T.float32(2) - T.float32(1)",
            ]
    return "\n".join(lines) + "\n"


def _loop(sch, rng):
    blocks = [b for b in _blocks(sch)]
    block = rng.choice(blocks)
    loops = sch.get_loops(block)
    return rng.choice(loops) if loops else None, block, loops


def _blocks(sch):
    return [sch.get_block(name) for name in _block_names(sch)]


def _block_names(sch):
    names = []
    from tilelang.ir.functor import post_order_visit
    from tilelang.ir.stmt import Block

    post_order_visit(
        sch.mod["main"].body,
        lambda n: (
            names.append(n.name_hint) if isinstance(n, Block) and n.name_hint != "root" else None
        ),
    )
    return names


def random_step(sch, rng):
    loop, block, loops = _loop(sch, rng)
    other = rng.choice(_blocks(sch))
    choice = rng.choice(
        ["split", "fuse", "reorder", "parallel", "vectorize", "unroll", "compute_at",
         "reverse_compute_at", "compute_inline", "reverse_compute_inline", "cache_read",
         "cache_write", "decompose_reduction", "bind", "blockize", "rfactor"]
    )  # fmt: skip
    if choice == "split":
        sch.split(loop, factors=[None, rng.choice([1, 2, 3, 4, 5])])
    elif choice == "fuse":
        sch.fuse(*loops[: rng.randint(1, max(1, len(loops)))])
    elif choice == "reorder":
        sch.reorder(*rng.sample(loops, len(loops)))
    elif choice == "rfactor":
        sch.rfactor(loop, rng.randint(0, 1))
    elif choice in ("parallel", "vectorize", "unroll", "blockize"):
        getattr(sch, choice)(loop)
    elif choice == "bind":
        sch.bind(loop, rng.choice(["threadIdx.x", "blockIdx.x"]))
    elif choice in ("compute_at", "reverse_compute_at"):
        getattr(sch, choice)(other, loop)
    elif choice in ("compute_inline", "reverse_compute_inline"):
        getattr(sch, choice)(block)
    elif choice in ("cache_read", "cache_write"):
        names = _block_names(sch)
        consumers = rng.sample(names, rng.randint(0, min(2, len(names))))
        getattr(sch, choice)(
            block, rng.randint(0, 1), rng.choice(["shared", "local"]), consumers or None
        )
    else:
        sch.decompose_reduction(block, loop)


def run(mod, a):
    out = np.zeros_like(a)
    tilelang.build(mod, target="python")["main"](a, out)
    return out


def test_random_schedules_preserve_results_or_fail_cleanly():
    rng = random.Random(20240601)
    successes = failures = 0
    for _ in range(PROGRAMS):
        mod = tilelang.parse(random_program(rng))
        shape = tuple(int(s) for s in mod["main"].buffers[0].shape)
        a = np.random.default_rng(0).random(shape, "float32")
        expected = run(mod, a)
        sch = tir.Schedule(mod, seed=rng.randrange(1000))
        for _ in range(rng.randint(1, 4)):
            before, insts_before = sch.mod, list(sch.trace.insts)
            try:
                random_step(sch, rng)
            except ScheduleError:
                failures += 1
                assert sch.mod is before
                # get_block/get_loops before the failing primitive may have been traced
                kept = sch.trace.insts[: len(insts_before)]
                assert all(x is y for x, y in zip(kept, insts_before))
                assert all(
                    i.kind in ("get_block", "get_loops")
                    for i in sch.trace.insts[len(insts_before) :]
                )
                continue
            successes += 1
        np.testing.assert_allclose(run(sch.mod, a), expected, rtol=1e-5, atol=1e-6)
    assert successes > 50 and failures > 20  # both paths really exercised

"""What a parse leaves to the garbage collector: no reference cycles (the parse tree is
freed by reference counting as soon as the IR is built), and a large parse's new IR
handed to the oldest generation rather than left for the young collections to traverse
(speed figures: benchmarks/bench_parse.py)."""

from __future__ import annotations

import gc

import tilelang


def _program(units: int) -> str:
    lines = [
        "@T.prim_func",
        'def many(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):',
    ]
    for n in range(units):
        lines += [
            "    for i, j in T.grid(64, 64):",
            f'        with T.block("b{n}"):',
            '            vi, vj = T.axis.remap("SS", [i, j])',
            f"            B[vi, vj] = A[vi, vj] * T.float32({n}) + B[vi, vj]",
        ]
    return "\n".join(lines) + "\n"


def test_a_parse_leaves_no_reference_cycles():
    text = _program(50)
    tilelang.parse(text)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        module = tilelang.parse(text)
        assert gc.collect() == 0  # nothing unreachable: all freed by reference counts
        assert "many" in module.functions
    finally:
        if was_enabled:
            gc.enable()


def test_a_large_parse_hands_its_ir_to_the_oldest_generation():
    gc.collect()
    module = tilelang.parse(_program(300))
    young = gc.get_count()[0]
    assert young < 1_000, young  # not the hundreds of thousands of new IR objects
    assert len(module["many"].body.block.body.seq) == 300


def test_objects_the_caller_froze_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        tilelang.parse(_program(300))
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()

"""print -> parse round trips: every sample and seed program, hand-built IR, and 500
random programs per run. The printed form of each program is also a golden file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import tilelang
from tilelang.ir import IRModule, assert_structural_equal
from tilelang.testing.strategies import prim_funcs

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.tir"))

# Seed programs of SEED_PROGRAMS.md that have no sample file of their own.
IMPERFECT_SPLIT = """
@T.prim_func
def split(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i_0, i_1 in T.grid(2, 10):
        with T.block("B"):
            vi = T.axis.spatial(16, i_0 * 10 + i_1)
            T.where(i_0 * 10 + i_1 < 16)
            B[vi] = A[vi] * T.float32(2)
"""

IR_BUILDER = """
@T.prim_func
def ib(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        if T.truncmod(i, 2) == 0:
            A[i] = A[i] + T.float32(1)
        else:
            A[0] = A[i] + T.float32(2)
"""

INLINE = {"imperfect_split": IMPERFECT_SPLIT, "ir_builder": IR_BUILDER}


def _round_trip(mod):
    text = mod.script()
    again = tilelang.parse(text)
    assert_structural_equal(mod, again)
    assert again.script() == text  # printing is a fixpoint too
    return text


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_round_trip(path, golden):
    golden(_round_trip(tilelang.parse_file(path)), name=path.stem)


@pytest.mark.parametrize("name", sorted(INLINE))
def test_inline_seed_round_trip(name, golden):
    golden(_round_trip(tilelang.parse(INLINE[name])), name=name)


def test_hand_built_ir_round_trips():
    """The printer tests' IR (its blocks carry the regions the parser infers)."""
    import test_printer as P

    mod = P.mm_relu_module()
    assert_structural_equal(mod, tilelang.parse(mod.script()))


def test_explicitly_empty_regions_print_as_written():
    """A block written with ``T.reads()`` / ``T.writes()`` keeps empty regions, and
    prints them so (TVM); a block written without them gets inferred ones."""
    mod = tilelang.parse(
        """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    with T.block("opaque"):
        T.reads()
        T.writes()
        for i in range(8):
            with T.block("inner"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
"""
    )
    text = mod.script()
    assert "T.reads()\n" in text and "T.writes()\n" in text
    assert "T.reads(A[vi])" in text and "T.writes(B[vi])" in text
    assert_structural_equal(mod, tilelang.parse(text))


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(prim_funcs())
def test_random_programs_round_trip(func):
    mod = IRModule({"main": func})
    assert_structural_equal(mod, tilelang.parse(mod.script()))

"""cache_index: golden IR, which computations are cached (maximal ones, counts handed
on below the threshold, only the block's own iterators, no division by a variable),
numbers against NumPy on every CPU backend, trace replay and ScheduleErrors."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

GATHER = """
@T.prim_func
def main(A: T.Buffer((2, 12, 10), "float32"), B: T.Buffer((2, 24, 20), "float32")):
    T.func_attr({"global_symbol": "main"})
    for c, i, j in T.grid(2, 24, 20):
        with T.block("B"):
            vc, vi, vj = T.axis.remap("SSS", [c, i, j])
            B[vc, vi, vj] = A[vc, vi // 4 + vj // 4, vj // 2]
"""

# the same weight and the same clamped index computed again and again
LERP = """
@T.prim_func
def main(A: T.Buffer((9,), "float32"), B: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[T.min(vi // 2, 8)] * (T.float32(1) - T.Cast("float32", vi % 2) * T.float32(0.5)) + A[T.min(vi // 2 + 1, 8)] * (T.Cast("float32", vi % 2) * T.float32(0.5))
"""


def cached(text, block="B", thresh=0):
    sch = tilelang.Schedule(tilelang.parse(text))
    blocks = sch.cache_index(block, "global", thresh)
    return sch, blocks


def gather_ref(a):
    c, i, j = np.meshgrid(np.arange(2), np.arange(24), np.arange(20), indexing="ij")
    return a[c, i // 4 + j // 4, j // 2]


def lerp_ref(a):
    i = np.arange(16)
    w = (i % 2).astype(np.float32) * np.float32(0.5)
    return a[np.minimum(i // 2, 8)] * (1 - w) + a[np.minimum(i // 2 + 1, 8)] * w


def test_golden_and_replay(golden):
    sch, blocks = cached(GATHER)
    golden(sch.mod["main"].script())
    assert [sch.get(b).name_hint for b in blocks] == ["index_0", "index_1"]
    again = tilelang.Schedule(tilelang.parse(GATHER))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    assert 'sch.cache_index(block=b0, storage_scope="global", cse_thresh=0)' in str(sch.trace)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_gather_computes_the_same(target):
    a = np.random.default_rng(5).random((2, 12, 10), np.float32)
    b = np.zeros((2, 24, 20), np.float32)
    tilelang.build(cached(GATHER)[0].mod, target=target)["main"](a, b)
    np.testing.assert_array_equal(b, gather_ref(a))


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
@pytest.mark.parametrize("thresh", [0, 2, 3, 5])
def test_lerp_computes_the_same(target, thresh):
    a = np.random.default_rng(6).random(9, np.float32)
    b = np.zeros(16, np.float32)
    tilelang.build(cached(LERP, thresh=thresh)[0].mod, target=target)["main"](a, b)
    np.testing.assert_allclose(b, lerp_ref(a), rtol=1e-6)


def cached_values(text, thresh):
    sch, blocks = cached(text, thresh=thresh)
    return [sch.get(b).body.value.script() for b in blocks]


def test_threshold_hands_counts_to_parts():
    # at 0 (and 1) every maximal computation is cached, largest first; at 2 the weight
    # w (seen once bare, once handed on by 1 - w) and the halved index (handed on by
    # both clamps, seen once each) are; at 3 nothing reaches three
    every = [
        'T.float32(1) - T.Cast("float32", v0 % 2) * T.float32(0.5)',
        "T.min(v0 // 2 + 1, 8)",
        'T.Cast("float32", v0 % 2) * T.float32(0.5)',
        "T.min(v0 // 2, 8)",
    ]
    assert cached_values(LERP, 0) == every
    assert cached_values(LERP, 1) == every
    assert cached_values(LERP, 2) == ['T.Cast("float32", v0 % 2) * T.float32(0.5)', "v0 // 2"]
    assert cached_values(LERP, 3) == []


def test_only_the_blocks_iterators_and_no_division_by_a_variable():
    text = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (64,), "float32")
    B = T.match_buffer(b, (8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[(vi + n) % 8] + A[64 // (vi + 1)] + A[vi * 2 + 1]
"""
    sch, blocks = cached(text)
    # n is no iterator; 64 // (vi + 1) may divide by zero off the block's domain, so
    # only its divisor is cached
    assert [sch.get(b).body.value.script() for b in blocks] == ["v0 * 2 + 1", "v0 + 1"]


def test_nothing_to_cache_changes_nothing():
    text = GATHER.replace("A[vc, vi // 4 + vj // 4, vj // 2]", "A[vc, vi // 2, vj // 2]")
    sch = tilelang.Schedule(tilelang.parse(text))
    before = sch.mod["main"]
    assert sch.cache_index("B", "global", 3) == []
    assert structural_equal(sch.mod["main"], before)


@pytest.mark.parametrize(
    "scope, thresh, needle",
    [("fast", 0, "invalid storage scope"), ("global", -1, "cse_thresh must be an integer")],
)
def test_errors(scope, thresh, needle):
    sch = tilelang.Schedule(tilelang.parse(GATHER))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.cache_index("B", scope, thresh)
    assert sch.mod is before

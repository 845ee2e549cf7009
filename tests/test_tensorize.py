"""tensorize and TensorIntrin: SEED §7's tmm16 end to end, the matching rules and the
ScheduleErrors that say which part differs, trace replay."""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import pytest

import tilelang
from tilelang import tir
from tilelang.errors import ScheduleError
from tilelang.intrinsics.common import register_text
from tilelang.intrinsics.reference import DOT16_F32_INTRIN
from tilelang.ir import structural_equal

SAMPLES = Path(__file__).resolve().parents[1] / "samples"

TMM16_KERNEL = """
int tmm16(float *C, const float *A, const float *B, int sa, int sb, int sc) {
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      for (int k = 0; k < 16; ++k)
        C[i * sc + j] += A[i * sa + k] * B[j * sb + k];
  return 0;
}
"""

MATMUL = """
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j, k in T.grid(64, 64, 64):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] += A[vi, vk] * B[vj, vk]
"""

DOT = """
@T.prim_func
def main(A: T.Buffer((3, 16), "{dtype}"), B: T.Buffer((16,), "{dtype}"), C: T.Buffer((3,), "{dtype}")):
    T.func_attr({{"global_symbol": "main"}})
    for i, k in T.grid(3, {extent}):
        with T.block("dot"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(C[vi], A[vi, vk], B[vk])
            T.writes(C[vi])
            C[vi] = C[vi] + A[vi, vk] * B[{index}]
"""


def tmm16_intrin():
    if tir.TensorIntrin.get("tmm16", allow_missing=True) is None:
        mod = tilelang.parse_file(SAMPLES / "tmm16_intrin.tir")
        tir.TensorIntrin.register("tmm16", mod["tmm16_desc"], mod["tmm16_impl"])
    return "tmm16"


def seed7_schedule():
    """SEED §7: tile 16x16x16, stage A and B in custom scopes and C in an accumulator,
    split off the zeroing, blockize the tile, tensorize it with tmm16."""
    sch = tilelang.Schedule(tilelang.parse(MATMUL))
    block = sch.get_block("matmul")
    i, j, k = sch.get_loops(block)
    i, ii = sch.split(i, [None, 16])
    j, ji = sch.split(j, [None, 16])
    k, ki = sch.split(k, [None, 16])
    sch.reorder(i, j, k, ii, ji, ki)
    a_reg = sch.cache_read(block, 0, "global.A_reg")
    b_reg = sch.cache_read(block, 1, "global.B_reg")
    sch.compute_at(a_reg, k)
    sch.compute_at(b_reg, k)
    c_acc = sch.cache_write(block, 0, "global.accumulator")
    sch.reverse_compute_at(c_acc, j)
    sch.decompose_reduction(block, k)
    tile = sch.blockize(ii)
    sch.tensorize(tile, tmm16_intrin())
    sch.annotate(sch.get_loops(tile)[0], "pragma_import_c", TMM16_KERNEL)
    return sch


def test_seed7_tmm16_ir_after_tensorize(golden):
    golden(seed7_schedule().mod["main"].script())


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_seed7_tmm16_runs_against_numpy(target):
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    c = np.zeros((64, 64), np.float32)
    tilelang.build(seed7_schedule().mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-4)


def test_seed7_extern_call_gets_strides_and_offsets():
    lowered = tilelang.lower(seed7_schedule().mod)
    text = lowered["main"].script()
    # the compacted 16x16 stages: row stride 16, and the accumulator's tile offset
    assert 'T.call_extern("int32", "tmm16"' in text
    assert text.count(", 16, 16, 16)") == 1, text


def test_trace_replays_tensorize():
    sch = seed7_schedule()
    again = tilelang.Schedule(tilelang.parse(MATMUL))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    assert "sch.tensorize(block_or_loop=" in str(sch.trace)


def dot_schedule(dtype="float32", extent=16, index="vk"):
    sch = tilelang.Schedule(tilelang.parse(DOT.format(dtype=dtype, extent=extent, index=index)))
    return sch, sch.get_loops("dot")


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_tensorize_a_loop_with_the_reference_dot(target):
    sch, (i, k) = dot_schedule()
    sch.tensorize(k, DOT16_F32_INTRIN)
    rng = np.random.default_rng(1)
    a, b = rng.random((3, 16), np.float32), rng.random(16, np.float32)
    c = np.ones(3, np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, 1 + a @ b, rtol=1e-5)


def test_tensorize_a_block_keeps_its_handle():
    sch, (i, k) = dot_schedule()
    block = sch.blockize(k)
    sch.tensorize(block, DOT16_F32_INTRIN)
    assert sch.get(block).match_buffers
    assert "tl_dot16_f32" in sch.mod["main"].script()


def assert_mismatch(sch, target, intrin, *needles):
    before = sch.mod
    with pytest.raises(ScheduleError) as info:
        sch.tensorize(target, intrin)
    for needle in needles:
        assert needle in str(info.value), str(info.value)
    assert sch.mod is before  # the schedule is unchanged


def test_mismatched_dtype_names_the_buffer():
    sch, (i, k) = dot_schedule(dtype="float64")
    assert_mismatch(sch, k, DOT16_F32_INTRIN, "tensorize(", "dtype float64", "float32")


def test_mismatched_extent_names_the_region():
    sch, (i, k) = dot_schedule(extent=8)
    assert_mismatch(sch, k, DOT16_F32_INTRIN, "region of A: extent 8", "description has 16")


def test_mismatched_index_names_the_access():
    sch, (i, k) = dot_schedule(index="15 - vk")
    assert_mismatch(sch, k, DOT16_F32_INTRIN, "access of B", "not the description's vk")


def test_unknown_intrinsic():
    sch, (i, k) = dot_schedule()
    assert_mismatch(sch, k, "no_such_intrin", "not registered")
    assert_mismatch(sch, k, 42, "expects the name of a registered tensor intrinsic")


def test_mismatched_scope_names_both_scopes():
    sch = tilelang.Schedule(tilelang.parse(MATMUL))
    i, j, k = sch.get_loops("matmul")
    for loop in (i, j, k):
        sch.split(loop, [None, 16])
    i0, i1, j0, j1, k0, k1 = sch.get_loops("matmul")
    sch.reorder(i0, j0, k0, i1, j1, k1)
    sch.decompose_reduction("matmul", k0)
    assert_mismatch(sch, i1, tmm16_intrin(), "scope 'global'", "'global.accumulator'")


VIEW_IMPL = """
@T.prim_func
def impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16,), "float32"{a_spec})
    B = T.match_buffer(b, (16,), "float32", offset_factor=1)
    C = T.match_buffer(c, (1,), "float32"{c_spec})
    with T.block("root"):
        T.reads(C[0:1], A[0:16], B[0:16])
        T.writes(C[0:1])
        T.evaluate(T.call_extern("int32", "tl_dot16_f32", C.access_ptr("rw"), A.access_ptr("r"), B.access_ptr("r")))
"""


def dot_variant(name, a_spec=", offset_factor=1", c_spec=", offset_factor=1"):
    """The reference dot with other views in its implementation."""
    desc = tir.TensorIntrin.get(DOT16_F32_INTRIN).desc.script()
    return register_text(name, desc, VIEW_IMPL.format(a_spec=a_spec, c_spec=c_spec))


def test_offset_factor_must_divide_the_region_offset():
    # A[vi, 0:16] starts at element 16 * vi: a view aligned to 16 fits, one to 32 does not
    sch, (i, k) = dot_schedule()
    sch.tensorize(k, dot_variant("test.dot16_a16", a_spec=", offset_factor=16"))
    sch, (i, k) = dot_schedule()
    intrin = dot_variant("test.dot16_a32", a_spec=", offset_factor=32")
    assert_mismatch(sch, k, intrin, "buffer A", "needs offset_factor 32", "vi_o * 16")


def test_constant_offset_must_be_the_regions():
    sch, (i, k) = dot_schedule()
    intrin = dot_variant("test.dot16_c_at_zero", c_spec="")  # C: elem_offset 0
    assert_mismatch(sch, k, intrin, "buffer C", "element offset 0", "starts at vi_o")


def test_constant_strides_must_be_the_regions():
    sch, (i, k) = dot_schedule()
    intrin = dot_variant("test.dot16_a_strided", a_spec=", strides=[2], offset_factor=1")
    assert_mismatch(sch, k, intrin, "buffer A", "declares stride 2", "has stride 1")


def test_registry():
    with pytest.raises(ValueError, match="already registered"):
        intrin = tir.TensorIntrin.get(DOT16_F32_INTRIN)
        tir.TensorIntrin.register(DOT16_F32_INTRIN, intrin.desc, intrin.impl)
    with pytest.raises(ValueError, match="not registered"):
        tir.TensorIntrin.get("no_such_intrin")
    assert tir.TensorIntrin.get("no_such_intrin", allow_missing=True) is None
    intrin = tir.TensorIntrin.get(DOT16_F32_INTRIN)
    with pytest.raises(ValueError, match="parameters"):
        short = attrs.evolve(intrin.impl, params=intrin.impl.params[:2])
        tir.TensorIntrin.register("test.short", intrin.desc, short)

"""What the LLVM backend does so that LLVM's pipeline vectorises scheduled loops the
way a schedule means: unit-stride inner loops kept from being unrolled before the loop
vectoriser (backends/llvm/loop_hints.py), and functions without ``tir.noalias``
versioned on whether their buffers overlap (backends/llvm/alias_versioning.py).
Numbers against NumPy and the python reference backend; the IR's shape by pattern."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang

CONV = """
@T.prim_func
def conv(I: T.Buffer((1, 8, 18, 18), "float32"), W: T.Buffer((16, 8, 3, 3), "float32"),
         O: T.Buffer((1, 16, 16, 16), "float32")):
    T.func_attr({{"tir.noalias": {noalias}}})
    for n, f, y, x, c, ky, kx in T.grid(1, 16, 16, 16, 8, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vky, vkx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ky, kx])
            with T.init():
                O[vn, vf, vy, vx] = T.float32(0)
            O[vn, vf, vy, vx] = (O[vn, vf, vy, vx]
                                 + I[vn, vc, vy + vky, vx + vkx] * W[vf, vc, vky, vkx])
"""

MATMUL = """
@T.prim_func
def mm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
       C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

SHIFT = """
@T.prim_func
def shift(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for i in range(1023):
        with T.block("B"):
            vi = T.axis.spatial(1023, i)
            B[vi + 1] = A[vi] * T.float32(2)
"""


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def tiled_conv(noalias: bool):
    """The register tile of benchmarks/bench_conv2d.py, vectorisation left to LLVM."""
    sch = tilelang.Schedule(tilelang.parse(CONV.format(noalias=noalias)))
    block = sch.get_block("conv")
    n, f, y, x, c, ky, kx = sch.get_loops(block)
    fo, fi = sch.split(f, [None, 8])
    xo, xi = sch.split(x, [None, 8])
    sch.reorder(n, fo, y, xo, c, ky, kx, fi, xi)
    sch.decompose_reduction(block, c)
    return sch.mod


def conv_reference(i, w):
    out = np.zeros((1, 16, 16, 16))
    for ky in range(3):
        for kx in range(3):
            out[0] += np.einsum("cyx,fc->fyx", i[0, :, ky : ky + 16, kx : kx + 16], w[:, :, ky, kx])
    return out


@pytest.mark.parametrize("noalias", [True, False])
def test_tiled_conv_vectorises_its_unit_stride_loop(noalias):
    lib = tilelang.build(tiled_conv(noalias), target="llvm")
    unopt = lib.get_source("ll-unopt")
    # the init's and the update's xi loops (in each copy of a versioned function)
    assert '!{ !"llvm.loop.unroll.disable" }' in unopt
    assert unopt.count("distinct !{") == (2 if noalias else 4)
    optimised = lib.get_source("ll")
    assert "x float>" in optimised
    assert "x ptr>" not in optimised  # no gathers/scatters across filters
    rng = np.random.default_rng(0)
    i = rng.standard_normal((1, 8, 18, 18), dtype="float32")
    w = rng.standard_normal((16, 8, 3, 3), dtype="float32")
    out = np.empty((1, 16, 16, 16), "float32")
    lib["conv"](i, w, out)
    np.testing.assert_allclose(out, conv_reference(i, w), rtol=1e-4, atol=1e-4)


def test_reduction_and_short_loops_keep_llvm_unrolling():
    unopt = tilelang.build(tilelang.parse(MATMUL), target="llvm").get_source("ll-unopt")
    assert "llvm.loop.unroll.disable" not in unopt  # k stores to C[i, j]: not unit stride
    sch = tilelang.Schedule(tilelang.parse(MATMUL))
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(i, k, j)
    _, j_inner = sch.split(j, [None, 2])
    unopt = tilelang.build(sch.mod, target="llvm").get_source("ll-unopt")
    assert "llvm.loop.unroll.disable" not in unopt  # two iterations: LLVM decides


def test_overlapping_buffers_take_the_cautious_body():
    mod = tilelang.parse(SHIFT)
    # as written: the default schedule assumes parameters do not overlap (as TVM's noalias)
    lib = tilelang.build(mod, target="llvm", auto_schedule=False)
    reference = tilelang.build(mod, target="python")
    unopt = lib.get_source("ll-unopt")
    assert '@"shift.no_alias"(ptr noalias' in unopt and '@"shift.may_alias"(ptr' in unopt
    for start in (0, 1, 3):  # the same array in place, and overlapping views
        got, expected = np.ones(1030, "float32"), np.ones(1030, "float32")
        lib["shift"](got[:1024], got[start : start + 1024])
        reference["shift"](expected[:1024], expected[start : start + 1024])
        np.testing.assert_array_equal(got, expected)
    a, b = np.arange(1024, dtype="float32"), np.zeros(1024, "float32")
    lib["shift"](a, b)
    np.testing.assert_array_equal(b[1:], a[:-1] * 2)
    assert b[0] == 0


def test_no_versioning_when_noalias_or_symbolic():
    noalias = SHIFT.replace("):\n    for", '):\n    T.func_attr({"tir.noalias": True})\n    for')
    unopt = tilelang.build(tilelang.parse(noalias), target="llvm").get_source("ll-unopt")
    assert "no_alias" not in unopt and 'define void @"shift"(ptr noalias' in unopt
    symbolic = """
@T.prim_func
def copy(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]
"""
    assert "no_alias" not in tilelang.build(tilelang.parse(symbolic), target="llvm").get_source(
        "ll-unopt"
    )


def test_overlap_checks_cover_every_written_buffer():
    from tilelang.backends.llvm.alias_versioning import overlap_checks
    from tilelang.backends.llvm.codegen import constant_extent

    (shift,) = tilelang.parse(SHIFT).functions.values()
    assert overlap_checks(shift, constant_extent) == [(1, 0, 4096, 4096)]
    escaped = """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((4,), "int32")):
    T.evaluate(T.call_extern("int32", "fill", B.data, A[0]))
    C[0] = 1
"""
    (func,) = tilelang.parse(escaped).functions.values()
    # B escapes to a call that may write it; A is only read; C is stored
    assert overlap_checks(func, constant_extent) == [
        (1, 0, 32, 32), (1, 2, 32, 16), (2, 0, 16, 32)
    ]  # fmt: skip


def test_long_unit_stride_loops_keep_llvm_interleaving():
    relu = """
@T.prim_func
def relu(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = T.max(A[vi], T.float32(0))
"""

    def build(text):  # as written, without the default schedule
        return tilelang.build(tilelang.parse(text), "llvm", auto_schedule=False)

    unopt = build(relu).get_source("ll-unopt")
    assert "llvm.loop.unroll.disable" not in unopt  # 128 iterations: never fully unrolled
    short = relu.replace("128", "64")
    unopt = build(short).get_source("ll-unopt")
    assert "llvm.loop.unroll.disable" in unopt

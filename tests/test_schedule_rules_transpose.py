"""The default rules on transposes (tilelang/schedule/rules/apply.py, _tile_transposed):
the output's contiguous loop becomes a vector (a gather from the read), the read's
contiguous loop a run of a few cache lines; golden decisions, and numbers equal to
NumPy on the llvm and c backends for shapes that divide, that do not, of one run only,
in float64 and with a batch axis."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtVisitor
from tilelang.schedule.rules import Machine, default_schedule
from tilelang.testing import default_workloads as W

AVX512 = Machine(512, 32)  # fixed, so the golden trace does not depend on the host


def _transpose(shape, dtype="float32"):
    """B = A transposed along its last two axes (a batch axis first when 3-D)."""
    out = shape[:-2] + (shape[-1], shape[-2])
    names = ["b", "i", "j"][-len(shape) :]
    axes = ", ".join(f"v{n}" for n in names)
    src = ", ".join(f"v{n}" for n in names[:-2] + [names[-1], names[-2]])
    loops = ", ".join(names)
    extents = ", ".join(str(e) for e in out)
    return tilelang.parse(
        "@T.prim_func\n"
        f'def transpose(A: T.Buffer({shape}, "{dtype}"), B: T.Buffer({out}, "{dtype}")):\n'
        '    T.func_attr({"global_symbol": "transpose", "tir.noalias": True})\n'
        f"    for {loops} in T.grid({extents}):\n"
        '        with T.block("B"):\n'
        f'            {axes} = T.axis.remap("{"S" * len(shape)}", [{loops}])\n'
        f"            B[{axes}] = A[{src}]\n"
    )


class _Kinds(StmtVisitor):
    def __init__(self):
        self.kinds = []

    def visit_for(self, node):
        self.kinds.append((node.kind, getattr(node.extent, "value", None)))
        self.generic_visit(node)


def _loop_kinds(mod):
    kinds = _Kinds()
    kinds.visit(mod["transpose"].body)
    return kinds.kinds


def test_transpose_decisions_golden(golden):
    sch = default_schedule(tilelang.parse(W.transpose().tir), AVX512)
    golden(str(sch.trace))


def test_transpose_vectorises_the_output_row():
    mod = default_schedule(_transpose((2048, 2048)), AVX512).mod
    # 64 floats (256 bytes) of A's row per tile, 16 lanes of B's row as one vector
    assert _loop_kinds(mod) == [
        (S.ForKind.PARALLEL, 32),
        (S.ForKind.SERIAL, 128),
        (S.ForKind.SERIAL, 64),
        (S.ForKind.VECTORIZED, 16),
    ]


def test_transpose_float64_runs_are_256_bytes():
    kinds = _loop_kinds(default_schedule(_transpose((512, 512), "float64"), AVX512).mod)
    assert [extent for _, extent in kinds] == [16, 64, 32, 8]
    assert kinds[-1][0] is S.ForKind.VECTORIZED


def test_one_run_and_no_whole_vector():
    one_run = _loop_kinds(default_schedule(_transpose((48, 64)), AVX512).mod)
    assert one_run == [(S.ForKind.SERIAL, 3), (S.ForKind.SERIAL, 64), (S.ForKind.VECTORIZED, 16)]
    ragged = _loop_kinds(default_schedule(_transpose((40, 24)), AVX512).mod)
    assert S.ForKind.VECTORIZED not in [kind for kind, _ in ragged]


@pytest.mark.parametrize(
    "shape, dtype",
    [
        ((256, 128), "float32"),  # runs of 64 along A's rows
        ((48, 64), "float32"),  # B's 64 rows are one run: that loop is not split
        ((40, 24), "float32"),  # B's rows of 40 are no whole number of vectors
        ((3, 96, 80), "float32"),  # a batch axis outside
        ((96, 64), "float64"),
    ],
)
@pytest.mark.parametrize("target", ["llvm", "c"])
def test_transposes_compute_numpys_result(shape, dtype, target):
    mod = _transpose(shape, dtype)
    lib = tilelang.build(mod, target)
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    b = np.zeros(shape[:-2] + (shape[-1], shape[-2]), dtype)
    lib["transpose"](a, b)
    np.testing.assert_array_equal(b, np.swapaxes(a, -1, -2))


def test_transposed_ir_agrees_on_the_reference_backend():
    mod = _transpose((3, 96, 80))
    scheduled = default_schedule(mod, AVX512).mod
    assert any(kind is S.ForKind.VECTORIZED for kind, _ in _loop_kinds(scheduled))
    a = np.random.default_rng(1).standard_normal((3, 96, 80)).astype("float32")
    b = np.zeros((3, 80, 96), "float32")
    tilelang.build(scheduled, "python")["transpose"](a, b)
    np.testing.assert_array_equal(b, np.swapaxes(a, -1, -2))

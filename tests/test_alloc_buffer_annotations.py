"""``T.alloc_buffer(..., annotations={...})`` (TVM's AllocBuffer with annotations): an
allocation statement that keeps its annotations, holds for the rest of its scope,
prints back as ``T.allocate(..., annotations=)`` with its ``T.decl_buffer``, and runs."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.ir import assert_structural_equal
from tilelang.ir import stmt as S

TEXT = """
@T.prim_func
def f(A: T.Buffer((8,), "uint8"), B: T.Buffer((8,), "int16")):
    tmp = T.alloc_buffer((8,), "uint8", annotations={"attr1_key": "attr1_value"})
    for i in range(8):
        tmp[i] = A[i] + T.uint8(1)
    for i in range(8):
        B[i] = T.cast(tmp[i], "int16")
"""


def test_annotations_stay_on_the_allocation_and_round_trip():
    mod = tilelang.parse(TEXT)
    alloc = mod["f"].body
    assert isinstance(alloc, S.Allocate) and alloc.annotations == {"attr1_key": "attr1_value"}
    assert isinstance(alloc.body, S.DeclBuffer) and alloc.body.buffer.data is alloc.buffer_var
    printed = mod.script()
    assert 'annotations={"attr1_key": "attr1_value"}' in printed
    assert_structural_equal(mod, tilelang.parse(printed))


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_annotated_allocation_runs(target):
    a, b = np.arange(8, dtype="uint8"), np.zeros(8, "int16")
    tilelang.build(tilelang.parse(TEXT), target=target)["f"](a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_without_annotations_the_root_block_still_allocates():
    mod = tilelang.parse(TEXT.replace(', annotations={"attr1_key": "attr1_value"}', ""))
    root = mod["f"].body.block
    assert [b.name for b in root.alloc_buffers] == ["tmp"]

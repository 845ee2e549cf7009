"""A region slice ``A[lo:hi]`` in ``T.reads`` / ``T.writes`` / ``match_buffer`` has
extent ``hi - lo`` simplified, as TVM's ``Buffer.__getitem__`` writes it, so regions
a schedule primitive computes (annotate_buffer_access) equal the ones written out."""

from __future__ import annotations

import tilelang
from tilelang.ir import IntImm
from tilelang.ir import expr as E

SOURCE = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
         C: T.Buffer((16,), "float32"), n: T.int32):
    for i, j in T.grid(14, 14):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi - 1:vi + 2, vj * 2 - 3:vj * 2 + 3], C[0:n + 1 - 1])
            T.writes(B[vi:vi + 1, vj])
            B[vi, vj] = A[vi, vj]
"""


def _block(func):
    return func.body.block.body.body.body.block


def test_region_slice_extents_are_simplified():
    block = _block(tilelang.parse(SOURCE)["main"])
    first, second = block.reads
    assert [r.extent.value for r in first.region] == [3, 6]
    assert isinstance(second.region[0].extent, E.Var)  # n + 1 - 1 is n
    assert [type(r.extent) for r in block.writes[0].region] == [IntImm, IntImm]


def test_simplified_region_round_trips():
    func = tilelang.parse(SOURCE)["main"]
    again = tilelang.parse(func.script())["main"]
    tilelang.ir.assert_structural_equal(again, func)


def test_annotate_buffer_access_region_equals_the_written_one():
    text = SOURCE.replace(
        "            T.reads(A[vi - 1:vi + 2, vj * 2 - 3:vj * 2 + 3], C[0:n + 1 - 1])\n", ""
    ).replace("            T.writes(B[vi:vi + 1, vj])\n", "")
    sch = tilelang.Schedule(tilelang.parse(text))
    sch.annotate_buffer_access(
        sch.get_block("B"), 0, "read", lambda vi, vj: ((vi - 1, vi + 2), (vj * 2 - 3, vj * 2 + 3))
    )
    block = sch.get(sch.get_block("B"))
    written = _block(tilelang.parse(SOURCE)["main"]).reads[0]
    assert [r.extent.value for r in block.reads[0].region] == [3, 6]
    assert [str(r.min) for r in block.reads[0].region] == [str(r.min) for r in written.region]


ROOT = """
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    with T.block("root"):
        with T.block("inner"):
            for i in range(4):
                A[i] = T.float32(0)
"""


def test_a_written_root_block_gets_no_inferred_regions():
    """TVM's parser infers no T.reads / T.writes for the root; a nested block gets them."""
    func = tilelang.parse(ROOT)["main"]
    root = func.body.block
    assert root.reads == () and root.writes == ()
    assert [w.buffer.name for w in root.body.block.writes] == ["A"]
    again = tilelang.parse(func.script())["main"]
    tilelang.ir.assert_structural_equal(again, func)
    tilelang.ir.assert_structural_equal(tilelang.parse(again.script())["main"], func)

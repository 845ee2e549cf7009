"""cache_inplace: golden IR, numbers on every CPU backend (a per-element update, and an
extern in-place call on the whole buffer), replay, and its ScheduleErrors."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

EXTERN = """
@T.prim_func
def main(data: T.Buffer((16,), "int32")):
    T.func_attr({"global_symbol": "main"})
    for i0 in range(1):
        with T.block("ext_call"):
            T.reads(data[0:16])
            T.writes(data[0:16])
            T.evaluate(T.call_extern("int32", "negate16", data.access_ptr("rw")))
"""

NEGATE = "int negate16(int *x) { for (int i = 0; i < 16; ++i) x[i] = -x[i]; return 0; }\n"

SCALE = """
@T.prim_func
def main(data: T.Buffer((8,), "float32"), other: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i in range(8):
        with T.block("scale"):
            vi = T.axis.remap("S", [i])
            T.reads(data[vi], other[vi])
            T.writes(data[vi])
            data[vi] = data[vi] * other[vi]
"""


def staged_extern():
    sch = tilelang.Schedule(tilelang.parse(EXTERN))
    copy_in, copy_out = sch.cache_inplace("ext_call", 0, "global.staging")
    assert [sch.get(b).name_hint for b in (copy_in, copy_out)] == [
        "data_global_staging", "data_global_staging_1"]  # fmt: skip
    sch.annotate(sch.get_loops("ext_call")[0], "pragma_import_c", NEGATE)
    return sch


def test_golden_and_replay(golden):
    sch = staged_extern()
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(EXTERN))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_extern_in_place_call_on_the_cache(target):
    data = np.arange(16, dtype=np.int32)
    tilelang.build(staged_extern().mod, target=target)["main"](data)
    np.testing.assert_array_equal(data, -np.arange(16))


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_per_element_update(target):
    sch = tilelang.Schedule(tilelang.parse(SCALE))
    sch.cache_inplace("scale", 0, "local")
    data, other = np.arange(8, dtype=np.float32), np.full(8, 3, np.float32)
    tilelang.build(sch.mod, target=target)["main"](data, other)
    np.testing.assert_array_equal(data, np.arange(8) * 3)


@pytest.mark.parametrize(
    "index,scope,needle",
    [
        (2, "local", "read buffer index 2 is out of range"),
        (1, "local", "reads other but does not write it"),
        (0, "", "invalid storage scope"),
    ],
)
def test_errors(index, scope, needle):
    sch = tilelang.Schedule(tilelang.parse(SCALE))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.cache_inplace("scale", index, scope)
    assert sch.mod is before

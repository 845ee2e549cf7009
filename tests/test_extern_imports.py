"""pragma_import_c / pragma_import_llvm: extern code attached to a loop or a block is
compiled into the module by the c and llvm backends; and tilelang.contrib."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.contrib import clang, utils
from tilelang.errors import BuildError
from tilelang.transform.extern_imports import collect_imports

SCALE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i in range(8):
        with T.block("scale"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi])
            T.writes(B[vi])
            T.evaluate(T.call_extern("int32", "triple", B.access_ptr("w", offset=vi), A[vi]))
"""

TRIPLE_C = "int triple(float *out, float x) { *out = 3.0f * x; return 0; }\n"

# the same function written directly in LLVM IR (what clang.create_llvm would give)
TRIPLE_LL = """
define i32 @triple(ptr %out, float %x) {
entry:
  %y = fmul float %x, 3.0
  store float %y, ptr %out, align 4
  ret i32 0
}
"""


def annotated(key, value):
    sch = tilelang.Schedule(tilelang.parse(SCALE))
    (loop,) = sch.get_loops("scale")
    sch.annotate(loop, key, value)
    return sch


@pytest.mark.parametrize("target", ["c", "llvm"])
@pytest.mark.parametrize(
    "key,source", [("pragma_import_c", TRIPLE_C), ("pragma_import_llvm", TRIPLE_LL)]
)
def test_loop_import_is_compiled_in(target, key, source):
    sch = annotated(key, source)
    a, b = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, b)
    np.testing.assert_array_equal(b, 3 * a)


def test_block_import_survives_lowering():
    sch = tilelang.Schedule(tilelang.parse(SCALE))
    sch.annotate(sch.get_block("scale"), "pragma_import_c", TRIPLE_C)
    lowered = tilelang.lower(sch.mod)
    assert collect_imports(lowered).c_sources == (TRIPLE_C,)
    a, b = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    tilelang.build(sch.mod, target="llvm")["main"](a, b)
    np.testing.assert_array_equal(b, 3 * a)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_invalid_llvm_import_is_a_build_error(target):
    sch = annotated("pragma_import_llvm", "define i32 @triple( {")
    with pytest.raises(BuildError, match="pragma_import_llvm: the LLVM IR does not parse"):
        tilelang.build(sch.mod, target=target)


def test_non_text_import_is_a_build_error():
    sch = annotated("pragma_import_c", 3)
    with pytest.raises(BuildError, match="expects source text"):
        tilelang.build(sch.mod, target="c")


def test_extern_sources_still_work_next_to_imports():
    sch = tilelang.Schedule(tilelang.parse(SCALE.replace('"triple"', '"twice"')))
    a, b = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    twice = "int twice(float *out, float x) { *out = 2.0f * x; return 0; }\n"
    tilelang.build(sch.mod, target="c", extern_sources=[twice])["main"](a, b)
    np.testing.assert_array_equal(b, 2 * a)


def test_tempdir_relpath_and_removal():
    temp = utils.tempdir()
    path = Path(temp.relpath("x.ll"))
    path.write_text("x")
    assert temp.listdir() == ["x.ll"] and path.parent == Path(temp.temp_dir)
    temp.remove()
    assert not path.parent.exists()
    with utils.tempdir() as other:
        assert Path(other.temp_dir).is_dir()
    assert not Path(other.temp_dir).exists()


@pytest.mark.skipif(clang.find_clang(required=False) is not None, reason="clang is installed")
def test_create_llvm_without_clang_says_so():
    with pytest.raises(BuildError, match="create_llvm needs clang"):
        clang.create_llvm(TRIPLE_C)


@pytest.mark.skipif(clang.find_clang(required=False) is None, reason="needs clang")
@pytest.mark.parametrize("target", ["c", "llvm"])
def test_create_llvm_feeds_pragma_import_llvm(target):
    temp = utils.tempdir()
    ll_code = clang.create_llvm(TRIPLE_C, output=temp.relpath("temp.ll"))
    assert Path(temp.relpath("temp.ll")).read_text() == ll_code
    sch = annotated("pragma_import_llvm", ll_code)
    a, b = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, b)
    np.testing.assert_array_equal(b, 3 * a)

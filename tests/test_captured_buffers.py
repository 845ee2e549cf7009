"""Buffers made by Python helpers that a decorated function's body calls: TVM's tests
declare constant buffers through ``helper(shape, data=ptr)`` returning
``T.decl_buffer(...)`` or ``T.Buffer(...)``. The helper's result is the declaration (a
DeclBuffer) or the buffer view the same call written in the body makes."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
import tilelang.script.tir as T
from tilelang.errors import TIRSyntaxError
from tilelang.ir import assert_structural_equal

WRITTEN = """
@T.prim_func
def f(B: T.Buffer((4,), "float32")):
    ptr = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
    offset = T.{maker}([4], data=ptr)
    for i in range(4):
        B[i] = offset[i] * T.float32(2)
"""


@pytest.mark.parametrize("maker", ["decl_buffer", "Buffer"])
def test_helper_declares_the_buffer_as_written_in_the_body(maker):
    def declare(*args, **kwargs):
        return getattr(T, maker)(*args, **kwargs)

    @T.prim_func
    def f(B: T.Buffer((4,), "float32")):
        ptr = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
        offset = declare([4], data=ptr)
        for i in range(4):
            B[i] = offset[i] * T.float32(2)

    expected = tilelang.parse(WRITTEN.format(maker=maker))["f"]
    assert_structural_equal(f, expected, map_free_vars=True)


def test_helper_declared_constant_buffer_computes():
    def declare(*args, **kwargs):
        return T.decl_buffer(*args, **kwargs)

    @T.prim_func
    def f(B: T.Buffer((4,), "float32")):
        ptr = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
        offset = declare([4], data=ptr)
        for i in range(4):
            B[i] = offset[i] * T.float32(2)

    b = np.zeros(4, "float32")
    tilelang.build(f, target="python")["f"](b)
    np.testing.assert_array_equal(b, [2, 4, 6, 8])


def test_a_bad_helper_buffer_is_a_located_error():
    def declare(*args, **kwargs):
        return T.Buffer([4], "float77", **kwargs)

    with pytest.raises(TIRSyntaxError, match=r"declare\(\.\.\.\): T\.Buffer: .*float77"):

        @T.prim_func
        def f(B: T.Buffer((4,), "float32")):
            ptr = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
            offset = declare(data=ptr)
            B[0] = offset[0]

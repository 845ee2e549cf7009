"""Flat indices past int32: FlattenBuffer computes a buffer's flat index in int64 when
it may not fit int32 (tilelang.transform.flatten_buffer.index_dtype), so arrays of more
than 2**31 - 1 elements are indexed correctly on every backend instead of wrapping or
being refused. Big arrays here are sparse files (only touched pages take memory)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from conftest import available_targets

import tilelang
from tilelang.ir import Var, decl_buffer
from tilelang.transform.flatten_buffer import index_dtype

TARGETS = available_targets("python", "c", "llvm")


@pytest.mark.parametrize(
    "shape,strides,expected",
    [
        ((128, 128), (), "int32"),
        ((65536, 32768), (), "int32"),  # the last index is 2**31 - 1
        ((65536, 32769), (), "int64"),
        ((2, 65536, 65536), (), "int64"),
        (("n",), (), "int32"),  # the index is below an int32 extent
        (("n", 2), (), "int64"),  # n * 2 may pass int32
        ((4, 4), ("s", 1), "int64"),
        ((4, 4), (8, 1), "int32"),
    ],
)
def test_the_index_type_widens_where_an_index_may_pass_int32(shape, strides, expected):
    n, s = Var("n", "int32"), Var("s", "int32")
    named = {"n": n, "s": s}
    shape = tuple(named.get(x, x) for x in shape)
    strides = tuple(named.get(x, x) for x in strides)
    buffer = decl_buffer(shape, "int8", "A", strides=strides)
    assert index_dtype(buffer) == expected


def test_int64_shapes_index_in_int64():
    m = Var("m", "int64")
    assert index_dtype(decl_buffer((1, m), "float32", "X")) == "int64"


BIG_STATIC = """
@T.prim_func
def f(A: T.Buffer((65536, 32769), "int8")):
    for i, j in T.grid(2, 3):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi * 65535, vj * 16384] = A[vi * 65535, vj * 16384] + T.int8(vi * 3 + vj + 1)
"""


def _sparse(tmp_path, shape):
    path = tmp_path / "big.bin"
    with open(path, "wb") as handle:
        handle.truncate(int(np.prod(shape)))
    return np.memmap(path, dtype="int8", mode="r+", shape=shape)


@pytest.mark.parametrize("target", TARGETS)
def test_a_static_buffer_past_int32_is_written_where_it_should(tmp_path, target):
    big = _sparse(tmp_path, (65536, 32769))
    tilelang.build(tilelang.parse(BIG_STATIC), target)["f"](big)
    for i in range(2):
        for j in range(3):
            assert big[i * 65535, j * 16384] == i * 3 + j + 1
    # where int32 indices would have wrapped: 65535 * 32769 + 32768 - 2**32 < 0
    assert big[0, 1] == 0 and big[1, 0] == 0


def test_the_emitted_code_indexes_in_64_bits():
    mod = tilelang.parse(BIG_STATIC)
    c_source = tilelang.build(mod, "c").get_source()
    store = next(line for line in c_source.splitlines() if "A[" in line and "=" in line)
    assert "(int64_t)" in store, store


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_cuda_kernels_index_in_64_bits():
    text = """
@T.prim_func
def f(A: T.Buffer((65536, 32769), "int8")):
    for i in T.thread_binding(256, thread="blockIdx.x"):
        for j in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi * 256 + 255, vj + 32641] = T.int8(7)
"""
    source = tilelang.build(tilelang.parse(text), "cuda").get_source()
    store = next(line for line in source.splitlines() if "A[" in line)
    assert "(int64_t)" in store, store

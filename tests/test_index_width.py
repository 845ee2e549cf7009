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


@pytest.mark.parametrize(
    "extents,dtype,value",
    [
        ((128, 128), "int32", 16384),
        ((65536, 32768), "int64", 2**31),  # the last index 2**31 - 1 fits int32; the count not
        ((65536, 65537), "int64", 65536 * 65537),  # int32 arithmetic wrapped it to 65536
        ((2, 65536, 65536), "int64", 2**33),
        (("n",), "int32", None),  # a single extent is a value of its own type
        (("n", 2), "int64", None),  # n * 2 may pass int32
        (("m",), "int64", None),
    ],
)
def test_an_allocation_without_a_flat_buffer_is_sized_in_int64_past_int32(extents, dtype, value):
    from tilelang.arith import simplify
    from tilelang.ir import const
    from tilelang.ir.convert import const_int_value
    from tilelang.transform.flatten_buffer import allocation_size

    named = {"n": Var("n", "int32"), "m": Var("m", "int64")}
    extents = tuple(named[x] if isinstance(x, str) else const(x) for x in extents)
    size = simplify(allocation_size(extents))
    assert size.dtype == dtype
    if value is not None:
        assert const_int_value(size) == value


def test_flatten_sizes_an_undeclared_big_allocation_like_its_buffer():
    """An allocation whose flat buffer is declared further in (not right inside it)
    gets the element count of its extents: past int32, counted in int64, equal to the
    size of the flat buffer over it."""
    from tilelang.ir import Allocate, DeclBuffer
    from tilelang.ir.convert import const_int_value
    from tilelang.ir.functor import StmtExprVisitor
    from tilelang.transform.flatten_buffer import flatten_buffer

    text = """
@T.prim_func
def f(B: T.Buffer((4,), "int8")):
    data = T.allocate([65536, 65537], "int8", "global")
    for i in range(4):
        A = T.decl_buffer((65536, 65537), "int8", data=data)
        A[65535, 65530 + i] = T.int8(i + 1)
        B[i] = A[65535, 65530 + i]
"""
    flat = flatten_buffer(tilelang.parse(text).functions["f"])
    found = {}

    class Find(StmtExprVisitor):
        def visit_allocate(self, op):
            found["allocate"] = op
            self.generic_visit(op)

        def visit_decl_buffer(self, op):
            found["decl"] = op
            self.generic_visit(op)

    Find().visit(flat.body)
    allocate, decl = found["allocate"], found["decl"]
    assert isinstance(allocate, Allocate) and isinstance(decl, DeclBuffer)
    (extent,) = allocate.extents
    assert extent.dtype == "int64" and const_int_value(extent) == 65536 * 65537
    assert const_int_value(decl.buffer.shape[0]) == const_int_value(extent)


EXACTLY_2_31 = """
@T.prim_func
def f(A: T.Buffer((65536, 32768), "int8")):
    for j in range(3):
        A[65535, 32765 + j] = A[65535, 32765 + j] + T.int8(j + 1)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_buffer_of_exactly_2_31_elements_builds_and_runs(tmp_path, target):
    """Every index of a (65536, 32768) buffer fits int32 but its 2**31 elements do not:
    its flat size is counted in int64 (it was an int32 constant out of range: a crash)."""
    from tilelang.transform.flatten_buffer import index_dtype, size_dtype

    buffer = tilelang.parse(EXACTLY_2_31).functions["f"].buffer_map
    (buffer,) = buffer.values()
    assert (index_dtype(buffer), size_dtype(buffer)) == ("int32", "int64")
    big = _sparse(tmp_path, (65536, 32768))
    tilelang.build(tilelang.parse(EXACTLY_2_31), target)["f"](big)
    assert list(big[65535, 32764:]) == [0, 1, 2, 3]


def test_constant_counts_past_int32_are_int64_constants():
    """A buffer's element count and dense strides are folded constants; past int32 they
    are int64 constants (they were int32 constants out of range: an error at every use,
    such as ``access_ptr`` or ``is_dense``)."""
    from tilelang.ir.buffer import dense_strides
    from tilelang.ir.convert import const_int_value

    exact = decl_buffer((65536, 32768), "int8", "A")
    assert exact.total_elements().dtype == "int64"
    assert const_int_value(exact.total_elements()) == 2**31
    extent = exact.access_ptr("r").args[3]
    assert extent.dtype == "int64" and const_int_value(extent) == 2**31
    wide = decl_buffer((2, 65536, 65536), "int8", "B")
    strides = dense_strides(wide.shape)
    assert [const_int_value(s) for s in strides] == [2**32, 65536, 1]
    assert [str(s.dtype) for s in strides] == ["int64", "int32", "int32"]
    assert wide.is_dense()
    small = decl_buffer((128, 128), "int8", "C")
    assert small.total_elements().dtype == "int32"

"""Tensor expressions: te.compute / te.reduce_axis / reductions -> PrimFunc."""

import pytest

from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import (
    Block,
    BlockRealize,
    BufferLoad,
    FloatImm,
    For,
    IterVar,
    Max,
    SizeVar,
    structural_equal,
)


def _blocks(func):
    found = []

    def walk(stmt):
        if isinstance(stmt, BlockRealize):
            found.append(stmt.block)
            walk(stmt.block.body)
        elif isinstance(stmt, For):
            walk(stmt.body)
        elif hasattr(stmt, "seq"):
            for s in stmt.seq:
                walk(s)

    walk(func.body)
    return {b.name_hint: b for b in found}


def _mm_relu(n=128):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), "k")
    Y = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute(Y.shape, lambda *i: te.max(Y(*i), 0), name="C")
    return A, B, Y, C


def test_blocks_named_after_tensors_with_reduction_init():
    A, B, Y, C = _mm_relu()
    func = te.create_prim_func([A, B, C])
    blocks = _blocks(func)
    assert list(blocks) == ["root", "Y", "C"]
    assert blocks["root"].alloc_buffers == (Y.buffer,)
    y = blocks["Y"]
    assert [iv.iter_type for iv in y.iter_vars] == [
        IterVar.DataPar,
        IterVar.DataPar,
        IterVar.CommReduce,
    ]
    assert isinstance(y.init.value, FloatImm) and y.init.value.value == 0.0
    assert blocks["C"].init is None and isinstance(blocks["C"].body.value, Max)
    assert func.attrs == {"global_symbol": "main", "tir.noalias": True}
    assert [func.buffer_map[p] for p in func.params] == [A.buffer, B.buffer, C.buffer]


def test_max_and_min_reductions_start_from_identity():
    A = te.placeholder((4, 8), "float32", name="A")
    k = te.reduce_axis((0, 8), "k")
    M = te.compute((4,), lambda i: te.max(A[i, k], axis=k), name="M")
    N = te.compute((4,), lambda i: te.min(A[i, k], axis=k, init=5.0), name="N")
    blocks = _blocks(te.create_prim_func([A, M, N]))
    assert blocks["M"].init.value.value == float("-inf")
    assert blocks["N"].init.value.value == 5.0


def test_symbolic_shapes_stay_symbolic():
    n = te.size_var("n", "int64")
    A = te.placeholder((n, 4), "float32", name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j] * 2.0, name="B")
    func = te.create_prim_func([A, B])
    assert isinstance(func.buffer_map[func.params[0]].shape[0], SizeVar)
    loop = func.body.block.body
    assert isinstance(loop, For) and loop.extent is n and loop.loop_var.dtype == "int64"


def test_same_description_twice_is_structurally_equal():
    def make(n):
        A, B, _, C = _mm_relu(n)
        return te.create_prim_func([A, B, C])

    assert structural_equal(make(128), make(128))
    assert not structural_equal(make(128), make(64))


def test_loads_read_block_iterators_not_loop_variables():
    A, B, Y, C = _mm_relu()
    y = _blocks(te.create_prim_func([A, B, C]))["Y"]
    block_vars = [iv.var for iv in y.iter_vars]
    load = y.body.value.b.a  # Y[vi, vj] + A[vi, vk] * B[vk, vj]
    assert isinstance(load, BufferLoad) and load.indices[1] is block_vars[2]


def test_errors_are_argument_errors():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(ArgumentError, match="3 indices but the shape has 2"):
        te.compute((4, 4), lambda i, j, k: A[i, j], name="bad")
    with pytest.raises(ArgumentError, match="has 2 dimensions, indexed with 1"):
        te.compute((4,), lambda i: A[i], name="bad")
    B = te.compute((4, 4), lambda i, j: A[i, j] + 1.0, name="B")
    with pytest.raises(ArgumentError, match="placeholder 'A' is read but is not an argument"):
        te.create_prim_func([B])
    with pytest.raises(ArgumentError, match="needs an axis"):
        te.sum(A[0, 0])
    assert isinstance(_blocks(te.create_prim_func([A, B]))["B"], Block)

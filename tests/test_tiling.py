"""Segments, tensor views and seq(), without a backend.

Views are checked against NumPy: a dense root array whose element values are their
own flat positions (``np.arange``) makes NumPy report every sub-view's address
(its first value), shape and strides independently of tilelang.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilelang.errors import ArgumentError, TIRTypeError
from tilelang.ir import For, LetStmt, SizeVar, Var, structural_equal
from tilelang.ir.functor import post_order_visit
from tilelang.tiling import (
    Segment,
    TensorView,
    intrinsic,
    let,
    loop,
    make_prim_func,
    segment_by_chunk,
    seq,
    tensor,
)
from tilelang.tiling import arith as ta

# ------------------------------------------------------------------ segments


def test_segment_basics():
    seg = Segment.of(3, 10)
    assert (seg.start, seg.stop, seg.length) == (3, 10, 7)
    assert seg.shift(Segment.of(2, 20)).start == 1
    assert seg.shift(3).stop == 7
    assert (seg.scale(2).start, seg.scale(2).stop) == (6, 20)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(1, 6))
def test_output_by_stride_is_the_outputs_whose_input_lies_in_the_segment(a, b, s):
    start, stop = min(a, b), max(a, b)
    out = Segment.of(start, stop).output_by_stride(s)
    assert list(range(out.start, out.stop)) == [o for o in range(0, 41) if start <= o * s < stop]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.integers(1, 9))
def test_segment_by_chunk_covers_the_range_with_a_ragged_tail(a, b, chunk):
    start, stop = min(a, b), max(a, b)
    segs = list(segment_by_chunk(start, chunk, stop))
    covered = [i for seg in segs for i in range(seg.start, seg.stop)]
    assert covered == list(range(start, stop))
    assert all(seg.length == chunk for seg in segs[:-1])
    assert [seg.index for seg in segs] == list(range(len(segs)))
    if segs:
        assert 0 < segs[-1].length <= chunk


def test_clip_records_padding():
    # a 3-wide convolution window around output 0 with padding 1 reads input [-1, 2)
    seg = Segment.of(-1, 2).clip(0, 5)
    assert (seg.start, seg.stop, seg.pad_before, seg.pad_after) == (0, 2, 1, 0)
    assert seg.padded_length == 3
    tail = Segment.of(4, 7).clip(0, 5)
    assert (tail.length, tail.pad_before, tail.pad_after) == (1, 0, 2)


def test_bad_chunk():
    with pytest.raises(ArgumentError, match="positive chunk"):
        segment_by_chunk(0, 0, 10)


def test_symbolic_segment_arithmetic():
    n = SizeVar("n")
    seg = Segment.of(0, n)
    assert seg.length is n
    out = seg.output_by_stride(2)
    assert structural_equal(out.stop, (n + 1) // 2)
    assert out.start == 0  # 0 stays a Python int


# --------------------------------------------------------------------- views

index_item = st.one_of(
    st.tuples(st.just("seg"), st.integers(0, 6), st.integers(0, 6)),
    st.tuples(st.just("slice"), st.integers(0, 6), st.integers(0, 6), st.integers(1, 3)),
    st.tuples(st.just("int"), st.integers(0, 6)),
)


def _apply(view, arr, items):
    """Index ``view`` and ``arr`` alike; None when the index does not fit."""
    view_key, np_key = [], []
    for item, extent in zip(items, arr.shape):
        if item[0] == "int":
            if item[1] >= extent:
                return None
            view_key.append(item[1])
            np_key.append(item[1])
            continue
        lo, hi = min(item[1], extent), min(item[2], extent)
        lo, hi = min(lo, hi), max(lo, hi)
        if item[0] == "seg":
            view_key.append(Segment.of(lo, hi))
            np_key.append(slice(lo, hi))
        else:
            view_key.append(slice(lo, hi, item[3]))
            np_key.append(slice(lo, hi, item[3]))
    return view[tuple(view_key)], arr[tuple(np_key)]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=4),
    st.lists(st.lists(index_item, min_size=4, max_size=4), min_size=1, max_size=3),
)
def test_nested_views_match_numpy(shape, levels):
    view = TensorView.root("A", tuple(shape))
    arr = np.arange(int(np.prod(shape))).reshape(shape)
    for items in levels:
        if view.ndim == 0:
            break
        parent = view
        result = _apply(view, arr, items[: view.ndim])
        if result is None:
            return
        view, arr = result
        assert view.shape == arr.shape
        # NumPy's strides of axes of extent 0 or 1 carry no meaning
        for extent, stride, np_stride in zip(arr.shape, view.strides, arr.strides):
            if extent > 1:
                assert stride == np_stride // arr.itemsize
        assert view.addr == ta.add(parent.addr, view.offset)
        if arr.size:
            assert view.addr == arr.flat[0]  # arange: a value is its own address
            idx = tuple(d - 1 for d in arr.shape)
            roots = tuple(x.value for x in view.load(*idx).indices)
            assert np.ravel_multi_index(roots, shape) == arr[idx]


def test_views_with_custom_root_strides():
    # a (4, 3) view into rows of 8 elements (a padded layout)
    root = TensorView.root("A", (4, 3), strides=(8, 1))
    sub = root[Segment.of(1, 3), 1:]
    assert (sub.shape, sub.strides, sub.offset, sub.addr) == ((2, 2), (8, 1), 9, 9)
    inner = sub[1, Segment.of(1, 2)]
    assert (inner.shape, inner.offset, inner.addr) == ((1,), 9, 18)


def test_symbolic_view_addresses():
    n, m = SizeVar("n"), SizeVar("m")
    root = TensorView.root("A", (n, m))
    assert root.strides == (m, 1)
    i = Var("i")
    sub = root[Segment(i, 4), 2:]
    assert structural_equal(sub.addr, i * m + 2)
    assert structural_equal(sub.shape[1], m - 2)
    store = sub.store(1.0, 0, 1)
    assert store.indices[0] is i and store.indices[1].value == 3
    region = sub.region()
    assert structural_equal(region.region[0].min, i) and region.region[0].extent.value == 4


def test_region_of_a_strided_view():
    root = TensorView.root("A", (10, 10))
    sub = root[1, 2:9:3]  # columns 2, 5, 8
    region = sub.region()
    assert [(r.min.value, r.extent.value) for r in region.region] == [(1, 1), (2, 7)]


def test_view_errors():
    root = TensorView.root("A", (4, 5))
    with pytest.raises(ArgumentError, match="out of range for axis 1"):
        root[:, Segment.of(3, 6)]
    with pytest.raises(ArgumentError, match="2 dimensions, got 3"):
        root[0, 0, 0]
    with pytest.raises(ArgumentError, match="index 4 is out of range"):
        root[4]
    with pytest.raises(ArgumentError, match="relative to the view"):
        root[Segment.of(2, 4)][Segment.of(1, 3)]
    with pytest.raises(ArgumentError, match="positive step"):
        root[::0]


def test_ellipsis_and_trailing_axes():
    root = TensorView.root("A", (2, 3, 4))
    assert root[..., 1].shape == (2, 3)
    assert root[1].shape == (3, 4)
    assert root[1].addr == 12


# ----------------------------------------------------------------------- seq


def _loops(stmt):
    found = []
    post_order_visit(stmt, lambda node: found.append(node) if isinstance(node, For) else None)
    return found


def test_symbolic_chunk_becomes_a_strided_loop_with_a_tail():
    n = SizeVar("n")
    A = TensorView.root("A", (n,), dtype="int32")
    body = seq(A[seg].store(seg.length, 0) for seg in segment_by_chunk(0, 4, n, "s"))
    assert isinstance(body, For)
    assert body.extent is n and body.step.value == 4 and body.min.value == 0
    tail = body.body
    assert isinstance(tail, LetStmt) and tail.var.name == "s_len"
    assert structural_equal(tail.value, ta.minimum(ta.typed(4, "int32"), n - body.loop_var))
    assert tail.body.indices[0] is body.loop_var


def test_list_comprehension_over_a_symbolic_loop_is_an_error():
    n = SizeVar("n")
    A = TensorView.root("A", (n,))
    with pytest.raises(TIRTypeError, match="consumed lazily by seq"):
        seq([A.store(0.0, seg.start) for seg in segment_by_chunk(0, 4, n)])
    # the same mistake one level down, while seq() is running
    with pytest.raises(TIRTypeError, match="used outside its loop"):
        seq([A.store(0.0, i) for i in loop(seg.length)] for seg in segment_by_chunk(0, 4, n))


def test_abandoned_symbolic_loop_is_an_error():
    n = SizeVar("n")
    A = TensorView.root("A", (n,))

    def body():
        for seg in segment_by_chunk(0, 4, n):
            yield A.store(0.0, seg.start)
            break

    with pytest.raises(TIRTypeError, match="still open"):
        seq(body())


def test_statements_after_an_inner_loop_stay_in_the_outer_one():
    n = SizeVar("n")
    A = TensorView.root("A", (n, 8))

    def body():
        for seg in segment_by_chunk(0, 2, n, "r"):
            for j in loop(8, "j"):
                yield A.store(1.0, seg.start, j)
            yield A.store(2.0, seg.start, 0)

    outer = seq(body())
    let_body = outer.body.body
    assert [type(s).__name__ for s in let_body.seq] == ["For", "BufferStore"]


def test_loop_and_let():
    n = SizeVar("n")
    A = TensorView.root("A", (n,), dtype="int32")
    body = seq(A.store(x, i) for i in loop(n, "i") for x in let(i * 2, "x"))
    assert isinstance(body, For) and body.loop_var.name == "i"
    assert isinstance(body.body, LetStmt) and body.body.var.name == "x"
    assert body.body.body.value is body.body.var
    # a concrete let is just the value; a float gets a float binding
    assert list(let(3)) == [3]
    B = TensorView.root("B", (4,))
    body = seq(B.store(x, 0) for x in let(1.5, "x"))
    assert body.var.dtype == "float32" and body.value.value == 1.5


def test_concrete_seq_accepts_lists_and_none():
    A = TensorView.root("A", (4,))
    body = seq([A.store(0.0, 0), None, [A.store(1.0, 1), (A.store(2.0, i) for i in (2, 3))]])
    assert [s.indices[0].value for s in body.seq] == [0, 1, 2, 3]


def test_seq_rejects_non_statements():
    with pytest.raises(TIRTypeError, match="seq\\(\\) takes statements"):
        seq([1, 2])


# ---------------------------------------------------------------- functions


def test_make_prim_func_checks_buffers():
    A, B = TensorView.root("A", (4,)), TensorView.root("B", (4,))
    body = seq(B.store(A.load(i), i) for i in loop(4))
    func = make_prim_func(body, [A, B], "copy")
    assert func.attrs["global_symbol"] == "copy"
    assert [func.buffer_map[p] for p in func.params] == [A.buffer, B.buffer]
    with pytest.raises(ArgumentError, match="not parameters: A"):
        make_prim_func(body, [B], "copy")
    with pytest.raises(ArgumentError, match="root view"):
        make_prim_func(body, [A[1:], B], "copy")


def test_intrinsic_operand_errors():
    load = intrinsic("ld", src=tensor("r", 2), n="int32")
    A = TensorView.root("A", (4, 4))
    with pytest.raises(ArgumentError, match="2-d float32 tensor, got a 1-d"):
        load(A[0], 1)
    with pytest.raises(ArgumentError, match="missing operands n"):
        load(A)
    call = load(A[1:, 2:], n=7).value
    assert call.args[0].value == "ld" and call.args[1].op == "tvm_access_ptr"
    assert [a.value for a in call.args[2:]] == [6, 3, 2, 4, 1, 7]

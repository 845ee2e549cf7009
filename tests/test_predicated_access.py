"""Masked (predicated) vector loads and stores, TVM's ``A.vload(indices, predicate=m)``
and ``A.vstore(indices, value, predicate=m)``: the predicate is a field of
BufferLoad/BufferStore, printed back in TVM's spelling, kept through lowering and by
the schedule's rewrites, computed by the python reference (only the lanes whose mask is
true are touched) and refused by the backends without masked access. Also
``x = T.meta_var(v)``, which names the value itself (no variable)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import BuildError, ScheduleError, TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit

TAIL = """
@T.prim_func
def tail(A: T.Buffer((6,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(2):
        mask = T.meta_var(T.Ramp(i * 4, 1, 4) < 6)
        B.vstore([T.Ramp(i * 4, 1, 4)], A.vload([T.Ramp(i * 4, 1, 4)], predicate=mask) * T.Broadcast(T.float32(2), 4), predicate=mask)
"""


def _accesses(node):
    found = []
    post_order_visit(
        node, lambda n: found.append(n) if isinstance(n, (E.BufferLoad, S.BufferStore)) else None
    )
    return found


def test_masked_access_round_trips_in_tvm_spelling():
    func = tilelang.parse(TAIL)["tail"]
    load, store = _accesses(func.body)
    assert isinstance(load.predicate, E.LT) and isinstance(store.predicate, E.LT)
    text = func.script()
    assert "A.vload([T.Ramp(i * 4, 1, 4)], predicate=" in text
    assert "B.vstore([T.Ramp(i * 4, 1, 4)], " in text
    again = tilelang.parse(text)["tail"]
    assert_structural_equal(func, again)


def test_predicate_is_compared_structurally():
    with_mask = tilelang.parse(TAIL)["tail"]
    without = tilelang.parse(TAIL.replace(", predicate=mask", ""))["tail"]
    with pytest.raises(AssertionError):
        assert_structural_equal(with_mask, without)


def test_meta_var_names_the_value_without_a_let():
    func = tilelang.parse(TAIL)["tail"]
    lets = []
    post_order_visit(func.body, lambda n: lets.append(n) if isinstance(n, S.LetStmt) else None)
    assert lets == []


def test_python_reference_touches_only_unmasked_lanes():
    lib = tilelang.build(tilelang.parse(TAIL)["tail"], target="python")
    a = np.arange(6, dtype="float32")
    b = np.full(8, -1, dtype="float32")
    lib["tail"](a, b)
    np.testing.assert_array_equal(b, np.concatenate([a * 2, [-1, -1]]))


def test_lowering_keeps_the_predicate():
    lowered = tilelang.lower(tilelang.parse(TAIL)["tail"])
    load, store = _accesses(lowered["tail"].body)
    assert load.predicate is not None and store.predicate is not None


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_backends_without_masked_access_refuse(target):
    with pytest.raises(BuildError, match="masked .predicated. store to B .*no masked vector"):
        tilelang.build(tilelang.parse(TAIL)["tail"], target=target)


def test_predicate_lanes_must_match_the_access():
    text = TAIL.replace("predicate=mask)", "predicate=T.Broadcast(T.bool(True), 2))")
    with pytest.raises(TIRSyntaxError, match=r"bool vector of the access's lanes"):
        tilelang.parse(text)


def test_unknown_vstore_argument_is_located():
    text = TAIL.replace("4), predicate=mask)", "4), mask=mask)")
    with pytest.raises(TIRSyntaxError, match=r"vstore takes \(indices, value, predicate=None\)"):
        tilelang.parse(text)


def test_compute_inline_refuses_a_masked_store():
    mod = tilelang.parse(
        """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(2):
        with T.block("B"):
            vi = T.axis.spatial(2, i)
            B.vstore([T.Ramp(vi * 4, 1, 4)], A[T.Ramp(vi * 4, 1, 4)], predicate=T.Ramp(vi * 4, 1, 4) < 6)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
"""
    )
    sch = tilelang.Schedule(mod)
    before = sch.mod.script()
    with pytest.raises(ScheduleError, match="masked"):
        sch.compute_inline(sch.get_block("B"))
    assert sch.mod.script() == before


def test_reference_masked_access_never_wraps_an_index():
    from tilelang.backends.python.support import ShiftedView, masked_load, masked_store

    data = np.arange(6, dtype="float32")
    view = ShiftedView(data, 2)  # a buffer whose elem_offset is 2
    mask = np.array([True, True, True, False])
    np.testing.assert_array_equal(
        masked_load(view, np.array([2, 3, 4, 99]), mask, np.float32), [0, 1, 2, 0]
    )
    with pytest.raises(IndexError):
        masked_load(view, np.array([0, 1, 2, 3]), mask, np.float32)
    masked_store(view, np.array([6, 7, 8, 99]), np.float32(5), np.array([1, 1, 0, 0], bool))
    np.testing.assert_array_equal(data, [0, 1, 2, 3, 5, 5])

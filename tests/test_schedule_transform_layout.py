"""transform_layout: golden IR, numbers on every CPU backend (intermediate, parameter,
padded), replay, and a ScheduleError per precondition."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

STAGES = """
@T.prim_func
def main(A: T.Buffer((14, 4), "float32"), C: T.Buffer((14, 4), "float32")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((14, 4), "float32")
    for i, j in T.grid(14, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(14, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def run(mod, target, a_shape=(14, 4)):
    a = np.random.default_rng(0).random((14, 4), np.float32)
    c = np.zeros((14, 4), np.float32)
    lib = tilelang.build(mod, target=target)["main"]
    if a_shape == (14, 4):
        lib(a, c)
        return c
    lib(np.ascontiguousarray(a.T), c)  # the parameter laid out as (4, 14)
    return c


def padded():
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    sch.transform_layout("B", ("write", 0), lambda i, j: (i // 4, j, i % 4), pad_value=0.0)
    return sch


def test_golden_and_replay(golden):
    sch = padded()
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(STAGES))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_padded_intermediate_computes_the_same(target):
    expected = run(tilelang.parse(STAGES), "python")
    np.testing.assert_allclose(run(padded().mod, target), expected, rtol=1e-6)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_parameter_relayout(target):
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    sch.transform_layout("B", "A", lambda i, j: (j, i))  # A is read transposed now
    func = sch.mod["main"]
    assert [int(x) for x in func.buffer_map[func.params[0]].shape] == [4, 14]
    expected = run(tilelang.parse(STAGES), "python")
    np.testing.assert_allclose(run(sch.mod, target, a_shape=(4, 14)), expected, rtol=1e-6)


def rejected(map_, needle, buffer=("write", 0), **kwargs):
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.transform_layout("B", buffer, map_, **kwargs)
    assert sch.mod is before


def test_error_not_one_to_one():
    rejected(lambda i, j: (i // 2, j), "sends two elements to the same place")


def test_error_padding_needs_a_value():
    rejected(lambda i, j: (i // 4, j, i % 4), "give a pad_value")


def test_error_padding_a_parameter():
    rejected(lambda i, j: (i // 4, j, i % 4), "function parameter", buffer="A", pad_value=0.0)


def test_error_index_not_from_zero():
    rejected(lambda i, j: (i + 1, j), "starts at 1, not 0")


def test_error_map_fails():
    rejected(lambda i: (i,), "the index map failed")


def test_error_unknown_buffer():
    rejected(lambda i, j: (i, j), "accesses no buffer 'Z'", buffer="Z")


def fill_block(sch):
    return next(r for r in tilelang.schedule.state.Tree(sch.mod["main"]).order
                if r.block.name_hint == "B_pad")  # fmt: skip


def padding_cells(sch, index_map, old_shape):
    """The new indices the fill block's predicate selects, and those no old index maps
    to (the padding), by enumeration."""
    import itertools

    from tilelang.arith import simplify
    from tilelang.ir import expr as E
    from tilelang.ir.functor import substitute

    realize = fill_block(sch)
    new_shape = [int(x) for x in realize.block.writes[0].buffer.shape]
    selected = set()
    for point in itertools.product(*map(range, new_shape)):
        env = {v: E.IntImm(v.dtype, x) for v, x in zip(realize.iter_values, point)}
        if simplify(substitute(realize.predicate, env)).value:
            selected.add(point)
    images = {
        tuple(int(x) for x in index_map(*p)) for p in itertools.product(*map(range, old_shape))
    }
    every = set(itertools.product(*map(range, new_shape)))
    return selected, every - images


@pytest.mark.parametrize(
    "index_map, rows, cols",
    [
        (lambda i, j: (i // 4, j, i % 4), 14, 4),
        (lambda i, j: (i // 4, j // 4, i % 4, j % 4), 14, 6),
        (lambda i, j: (j, i // 8, i % 8 // 4, i % 4), 13, 3),
    ],
)
def test_fill_writes_exactly_the_padding(index_map, rows, cols):
    text = STAGES.replace("(14, 4)", f"({rows}, {cols})").replace(
        "T.grid(14, 4)", f"T.grid({rows}, {cols})"
    )
    sch = tilelang.Schedule(tilelang.parse(text))
    sch.transform_layout("B", ("write", 0), index_map, pad_value=0.0)
    selected, padding = padding_cells(sch, index_map, (rows, cols))
    assert selected == padding and padding


def test_map_that_does_not_invert_fills_everything():
    # i * 4 + j over 14 x 3 leaves every fourth cell empty: no rounding of the axes
    # makes it a bijection, so the whole buffer is filled before it is written
    text = STAGES.replace("(14, 4)", "(14, 3)").replace("T.grid(14, 4)", "T.grid(14, 3)")
    sch = tilelang.Schedule(tilelang.parse(text))
    sch.transform_layout("B", ("write", 0), lambda i, j: (i * 4 + j,), pad_value=0.0)
    assert fill_block(sch).predicate.value == 1
    a = np.random.default_rng(1).random((14, 3), np.float32)
    c = np.zeros((14, 3), np.float32)
    tilelang.build(sch.mod, target="llvm")["main"](a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)

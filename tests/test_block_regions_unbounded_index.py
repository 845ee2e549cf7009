"""Block regions of an index TVM's interval evaluator cannot bound (a call such as
``T.floor``, a float constant, a load of a float buffer): the whole dimension, as
TVM's region detector gives it, even with no loop inside the block to relax; other
indices keep their point regions. compute_at then computes the producer over the
whole dimension, and the numbers stay those of the original."""

from __future__ import annotations

import numpy as np

import tilelang
from tilelang.ir import expr as E
from tilelang.ir import structural_equal

RESIZE = """
@T.prim_func
def main(x: T.Buffer((1, 3, 20, 20), "float32"), y: T.Buffer((1, 3, 10, 10), "float32")):
    T.func_attr({"global_symbol": "main"})
    x_global = T.alloc_buffer((1, 3, 20, 20), "float32")
    for a0, a1, a2, a3 in T.grid(1, 3, 20, 20):
        with T.block("cache"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [a0, a1, a2, a3])
            x_global[v0, v1, v2, v3] = x[v0, v1, v2, v3]
    for i0, i1, i2, i3 in T.grid(1, 3, 10, 10):
        with T.block("resize"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            y[v_i0, v_i1, v_i2, v_i3] = x_global[v_i0, v_i1,
                T.Cast("int32", T.floor(T.Cast("float32", v_i2 * 2) + T.float32(0.5))), v_i3 * 2]
"""

POINTS = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), I: T.Buffer((16,), "int32"),
         F: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
         C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[I[vi]] + C[T.Cast("int32", F[vi])]
"""


def block(func, name):
    found = []

    def visit(node):
        if type(node).__name__ == "Block" and node.name_hint == name:
            found.append(node)

    tilelang.ir.post_order_visit(func.body, visit)
    return found[0]


def region_text(region):
    return str(region.buffer.name) + str([(str(r.min), str(r.extent)) for r in region.region])


def test_call_in_an_index_reads_the_whole_dimension():
    func = tilelang.parse(RESIZE)["main"]
    (read,) = block(func, "resize").reads
    text = region_text(read)
    assert "('0', '20')" in text  # the floor() axis: all of it
    assert "('v_i3 * 2', '1')" in text  # an affine index keeps its point


def test_integer_load_index_is_a_point_float_load_index_is_not():
    reads = {r.buffer.name: r for r in block(tilelang.parse(POINTS)["main"], "b").reads}
    (point,) = reads["A"].region  # A[I[vi]]: a point at an integer load
    assert isinstance(point.min, E.BufferLoad) and point.min.buffer.name == "I"
    assert str(point.extent) == "1"
    (whole,) = reads["C"].region  # C[int32(F[vi])]: F holds floats, no bound
    assert (str(whole.min), str(whole.extent)) == ("0", "16")


def test_compute_at_covers_the_whole_dimension_and_keeps_the_numbers():
    func = tilelang.parse(RESIZE)["main"]
    sch = tilelang.Schedule(func)
    h, w = sch.get_loops("resize")[-2:]
    ho, hi = sch.split(h, [5, 2])
    wo, wi = sch.split(w, [5, 2])
    sch.reorder(ho, wo, hi, wi)
    sch.compute_at(sch.get_block("cache"), wo)
    text = sch.mod["main"].script()
    # the floor() axis is produced whole (20), the affine one only as far as read (3)
    assert "T.grid(20, 3)" in text
    assert not structural_equal(sch.mod["main"], func)
    x = np.random.default_rng(0).standard_normal((1, 3, 20, 20)).astype(np.float32)
    results = []
    for mod in (func, sch.mod):
        y = np.zeros((1, 3, 10, 10), np.float32)
        tilelang.build(mod, target="python")["main"](x, y)
        results.append(y)
    expected = x[:, :, np.floor(np.arange(10) * 2 + 0.5).astype(int)][:, :, :, ::2]
    np.testing.assert_array_equal(results[0], expected)
    np.testing.assert_array_equal(results[1], expected)

"""compute_at sizes the producer from the consumer's regions: a region declared by
annotate_buffer_access (``explicit_read_region``) is taken as declared, and an index
it cannot bound (a float round trip) covers the whole axis, as TVM's region
analysis does. Numbers on the python backend against the unscheduled function."""

from __future__ import annotations

import numpy as np

import tilelang

RESIZE = """
@T.prim_func
def main(x: T.Buffer((40,), "float32"), y: T.Buffer((20,), "float32")):
    x_global = T.alloc_buffer((40,), "float32")
    for i in range(40):
        with T.block("cache"):
            v = T.axis.spatial(40, i)
            x_global[v] = x[v] * T.float32(2)
    for i in range(20):
        with T.block("resize"):
            v = T.axis.spatial(20, i)
            y[v] = x_global[T.Cast("int32", T.floor(T.Cast("float32", v * 2) + T.float32(0.5)))]
"""


def _run(mod):
    x = np.arange(40, dtype="float32")
    y = np.zeros(20, dtype="float32")
    tilelang.build(mod, target="python")["main"](x, y)
    return y


def _cache_extent(sch):
    (loop,) = [lp for lp in sch.get_loops("cache")][-1:]
    return sch.get(loop).extent.value


def test_compute_at_uses_the_annotated_region():
    before = tilelang.parse(RESIZE)
    sch = tilelang.Schedule(before)
    sch.annotate_buffer_access("resize", 0, "read", lambda v: [(v * 2 - 1, v * 2 + 2)])
    (i,) = sch.get_loops("resize")
    io, _ = sch.split(i, factors=[4, 5])
    sch.compute_at(sch.get_block("cache"), io)
    # five outputs v = 5 * io + k read [2 * v - 1, 2 * v + 1]: [10 * io - 1, 10 * io + 9]
    assert _cache_extent(sch) == 11
    np.testing.assert_array_equal(_run(sch.mod), _run(before))


def test_compute_at_of_an_unbounded_index_computes_the_whole_axis():
    before = tilelang.parse(RESIZE)
    sch = tilelang.Schedule(before)
    (i,) = sch.get_loops("resize")
    io, _ = sch.split(i, factors=[4, 5])
    sch.compute_at(sch.get_block("cache"), io)
    assert _cache_extent(sch) == 40
    np.testing.assert_array_equal(_run(sch.mod), _run(before))

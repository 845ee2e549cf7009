"""A thread-bound loop's axis answers TVM's ``For.thread_binding.thread_tag`` while
staying the plain string tilelang compares and prints."""

from __future__ import annotations

import tilelang
from tilelang.ir import assert_structural_equal


def test_thread_binding_has_a_thread_tag_and_round_trips():
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((16, 16), "float32")):
    for i in T.thread_binding(0, 16, thread="threadIdx.x"):
        for j in T.thread_binding(0, 16, thread="threadIdx.y", annotations={"k": "v"}):
            A[i, j] = T.float32(0)
""")
    outer = mod["f"].body
    assert outer.kind == 4 and outer.thread_binding == "threadIdx.x"
    assert outer.thread_binding.thread_tag == "threadIdx.x"
    assert outer.body.thread_binding.thread_tag == "threadIdx.y"
    assert isinstance(outer.thread_binding, str)
    again = tilelang.parse(mod.script())
    assert_structural_equal(mod, again)
    assert again["f"].body.body.annotations["k"] == "v"

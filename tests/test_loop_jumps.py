"""``break`` and ``continue`` (TVM's ``T.break_loop()`` / ``T.continue_loop()``): parsed,
printed back, run on every CPU backend, refused where they would leave a block or a
loop that does not run serially, and loops they leave are not restructured."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError, TIRSyntaxError
from tilelang.ir import assert_structural_equal
from tilelang.ir import stmt as S

BACKENDS = ("python", "c", "llvm")

COUNTERS = """
@T.prim_func
def f(In: T.Buffer((1,), "int32"), Out: T.Buffer((2,), "int32")):
    Out[0] = 0
    Out[1] = 0
    for i in range(1000):
        if i % 13 == 0:
            Out[1] = Out[1] + 1
            continue
        Out[0] = Out[0] + 1
        if Out[0] >= In[0]:
            break
"""


def counters_reference(limit: int) -> list[int]:
    out = [0, 0]
    for i in range(1000):
        if i % 13 == 0:
            out[1] += 1
            continue
        out[0] += 1
        if out[0] >= limit:
            break
    return out


def roundtrip(text: str):
    mod = tilelang.parse(text)
    printed = mod.script()
    assert_structural_equal(mod, tilelang.parse(printed), map_free_vars=True)
    return mod, printed


def test_jumps_are_evaluated_intrinsics_and_print_as_keywords():
    mod, printed = roundtrip(COUNTERS)
    lines = [line.strip() for line in printed.splitlines()]
    assert "continue" in lines and "break" in lines
    calls = []
    tilelang.ir.functor.post_order_visit(
        mod["f"].body,
        lambda n: calls.append(n.value.op) if isinstance(n, S.Evaluate) else None,
    )
    assert calls == ["continue_loop", "break_loop"]
    explicit = COUNTERS.replace("continue", "T.evaluate(T.continue_loop())")
    explicit = explicit.replace("break", "T.evaluate(T.break_loop())")
    assert_structural_equal(mod, tilelang.parse(explicit))


@pytest.mark.parametrize("target", BACKENDS)
@pytest.mark.parametrize("limit", [1, 50, 5000])
def test_jumps_run_like_python(target, limit):
    lib = tilelang.build(tilelang.parse(COUNTERS), target=target)
    out = np.zeros(2, "int32")
    lib["f"](np.array([limit], "int32"), out)
    assert out.tolist() == counters_reference(limit)


@pytest.mark.parametrize("target", BACKENDS)
def test_jumps_in_while_and_nested_loops(target):
    mod, _ = roundtrip("""
@T.prim_func
def g(A: T.Buffer((8, 8), "int32"), B: T.Buffer((8,), "int32")):
    for i in range(8):
        B[i] = 0
        for j in range(8):
            if A[i, j] < 0:
                break
            if A[i, j] % 2 == 1:
                continue
            B[i] = B[i] + A[i, j]
    k = T.alloc_buffer((1,), "int32")
    k[0] = 0
    while k[0] < 8:
        k[0] = k[0] + 1
        if k[0] % 3 == 0:
            continue
        B[k[0] - 1] = B[k[0] - 1] * 2
        if k[0] == 7:
            break
""")
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 10, size=(8, 8)).astype("int32")
    expected = np.zeros(8, "int64")
    for i in range(8):
        for j in range(8):
            if a[i, j] < 0:
                break
            if a[i, j] % 2 == 1:
                continue
            expected[i] += a[i, j]
    k = 0
    while k < 8:
        k += 1
        if k % 3 == 0:
            continue
        expected[k - 1] *= 2
        if k == 7:
            break
    b = np.zeros(8, "int32")
    tilelang.build(mod, target=target)["g"](a, b)
    np.testing.assert_array_equal(b, expected)


@pytest.mark.parametrize(
    ("body", "message", "line", "column"),
    [
        ("    break\n", "`break` outside a loop", 4, 5),
        (
            "    for i in T.parallel(4):\n        continue\n",
            "`continue` in a parallel loop",
            5,
            9,
        ),
        (
            '    for i in range(4):\n        with T.block("b"):\n            break\n',
            "`break` outside a loop of its block",
            6,
            13,
        ),
    ],
)
def test_misplaced_jumps_are_located_errors(body, message, line, column):
    text = '\n@T.prim_func\ndef f(A: T.Buffer((4,), "int32")):\n' + body
    with pytest.raises(TIRSyntaxError, match=message) as info:
        tilelang.parse(text)
    assert (info.value.line, info.value.column) == (line, column)


def test_an_explicit_jump_out_of_a_parallel_loop_is_refused_at_build():
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in T.parallel(4):
        T.evaluate(T.break_loop())
""")
    with pytest.raises(TIRSyntaxError, match="`break` in the parallel loop i"):
        tilelang.build(mod, target="c")


def test_loops_left_early_are_not_restructured():
    mod = tilelang.parse("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(16):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            A[vi] = T.float32(1)
        if i >= n:
            break
""")
    sch = tilelang.tir.Schedule(mod)
    (loop,) = sch.get_loops(sch.get_block("b"))
    before = sch.mod
    for primitive in (
        lambda: sch.split(loop, [4, 4]),
        lambda: sch.parallel(loop),
        lambda: sch.vectorize(loop),
        lambda: sch.unroll(loop),
    ):
        with pytest.raises(ScheduleError, match="a break or continue leaves this loop early"):
            primitive()
    assert_structural_equal(sch.mod, before)
    a = np.zeros(16, "float32")
    tilelang.build(mod, target="c")["f"](a, 5)
    np.testing.assert_array_equal(a, [1] * 6 + [0] * 10)

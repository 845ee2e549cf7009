"""CUDA computes integers as every other backend does (nvcc has no ``-fwrapv``: signed
wrap-around is written out, tilelang/backends/cuda/wrapping.py).

Without a GPU, the generated CUDA is compiled by nvcc (it must be valid CUDA) and the
same text is run on the CPU through tilelang.testing.cuda_emulation, compiled with the
undefined-behaviour sanitizer: a signed overflow left in the text aborts the run. The
results must equal the python reference's. With a GPU (tests marked ``gpu``) the
kernels run on the device and are compared the same way.
"""

from __future__ import annotations

import os
import shutil

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilelang
from tilelang.ir import stmt as S
from tilelang.testing.cuda_emulation import HostProgram, host_compiler
from tilelang.testing.int_strategies import integer_cases

needs_tools = pytest.mark.skipif(
    shutil.which("nvcc") is None or host_compiler() is None,
    reason="needs nvcc and a host C++ compiler",
)
BATCH = 25
#: TILELANG_FUZZ_SCALE=20 for release checks (README, "Developing"), as test_differential
SCALE = int(os.environ.get("TILELANG_FUZZ_SCALE", "1"))
_SETTINGS = settings(
    max_examples=2 * SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _on_threads(case):
    """The case's elementwise loop bound to threadIdx.x (one thread per element)."""
    loop = case.func.body
    assert isinstance(loop, S.For)
    bound = attrs.evolve(loop, kind=S.ForKind.THREAD_BINDING, thread_binding="threadIdx.x")
    return case.func.with_body(bound)


def _module(cases):
    funcs = {f"case_{i}": _on_threads(c) for i, c in enumerate(cases)}
    return tilelang.IRModule({n: f.with_attr("global_symbol", n) for n, f in funcs.items()})


def _reference(cases):
    mod = tilelang.IRModule(
        {f"case_{i}": c.func.with_attr("global_symbol", f"case_{i}") for i, c in enumerate(cases)}
    )
    reference = tilelang.build(mod, "python")
    results = []
    for index, case in enumerate(cases):
        arrays = case.make_arguments(seed=index)
        reference[f"case_{index}"](*arrays)
        results.append(arrays)
    return results


OVERFLOWING = """
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int64"), C: T.Buffer((4,), "int32")):
    for i in T.thread_binding(4, thread="threadIdx.x"):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi] * 3 + 2147483647 - T.shift_left(A[vi], 30) - A[vi] * A[vi]
            B[vi] = T.abs(T.Cast("int64", A[vi]) * T.int64(4611686018427387904) - T.int64(7))
"""


@needs_tools
@pytest.mark.parametrize("target", ["python", "c"])
def test_overflowing_int32_and_int64_arithmetic_matches(target, tmp_path):
    mod = tilelang.parse(OVERFLOWING)
    a = np.array([2**31 - 1, -(2**31), -7, 123456789], dtype=np.int32)
    want = [a, np.zeros(4, np.int64), np.zeros(4, np.int32)]
    tilelang.build(mod, target)["f"](*want)
    cuda = tilelang.build(mod, "cuda")  # nvcc compiles the same text for sm_90
    got = [a.copy(), np.zeros(4, np.int64), np.zeros(4, np.int32)]
    HostProgram(cuda, tmp_path).run("f", got)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])


@needs_tools
@_SETTINGS
@given(data=st.data())
def test_random_overflowing_programs_match_the_python_backend(data, tmp_path_factory):
    cases = [data.draw(integer_cases(), label=f"case {i}") for i in range(BATCH)]
    expected = _reference(cases)
    cuda = tilelang.build(_module(cases), "cuda")
    program = HostProgram(cuda, tmp_path_factory.mktemp("cuda_host"))
    for index, case in enumerate(cases):
        arrays = case.make_arguments(seed=index)
        program.run(f"case_{index}", arrays)
        np.testing.assert_array_equal(arrays[-1], expected[index][-1], err_msg=case.func.script())


@pytest.mark.gpu
@_SETTINGS
@given(data=st.data())
def test_random_overflowing_programs_match_on_the_gpu(data):
    cases = [data.draw(integer_cases(), label=f"case {i}") for i in range(BATCH)]
    expected = _reference(cases)
    cuda = tilelang.build(_module(cases), "cuda")
    for index, case in enumerate(cases):
        arrays = case.make_arguments(seed=index)
        cuda[f"case_{index}"](*arrays)
        np.testing.assert_array_equal(arrays[-1], expected[index][-1], err_msg=case.func.script())


SHIFTS = """
@T.prim_func
def f(A: T.Buffer((4,), "int8"), B: T.Buffer((4,), "int64"), C: T.Buffer((4,), "int8")):
    for i in T.thread_binding(4, thread="threadIdx.x"):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.shift_right(T.int64(975459200), T.Cast("int64", vi) + T.int64(29))
            C[vi] = T.shift_left(A[vi], T.int8(3))
"""


@needs_tools
def test_shifts_of_wide_literals_and_negative_narrow_values_are_defined(tmp_path):
    # an int64 literal below 2**31 printed bare is an int: shifting it by 29..32 was
    # undefined; int8 operands are shifted as int, so a negative one was undefined too
    mod = tilelang.parse(SHIFTS)
    a = np.array([-128, -1, 127, 5], dtype=np.int8)
    want = [a, np.zeros(4, np.int64), np.zeros(4, np.int8)]
    tilelang.build(mod, "python")["f"](*want)
    np.testing.assert_array_equal(want[1], [975459200 >> s for s in (29, 30, 31, 32)])
    got = [a.copy(), np.zeros(4, np.int64), np.zeros(4, np.int8)]
    HostProgram(tilelang.build(mod, "cuda"), tmp_path).run("f", got)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])

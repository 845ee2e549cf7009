"""Differential testing: random runnable programs give the same results under the c and
llvm backends as under the Python reference backend.

Each hypothesis example draws a batch of programs and compiles the batch as ONE module
per backend, so the per-build cost (gcc, LLVM) is paid 4 times, not 200 times:
4 examples x 50 programs = 200 programs per run and per backend.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilelang
from tilelang.testing.int_strategies import integer_cases
from tilelang.testing.strategies import program_cases

BATCH = 50
#: TILELANG_FUZZ_SCALE=20 for release checks (README, "Developing"): 20x the examples
SCALE = int(os.environ.get("TILELANG_FUZZ_SCALE", "1"))


def _named(case, index):
    name = f"case_{index}"
    return name, case.func.with_attr("global_symbol", name)


@settings(
    max_examples=4 * SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
@pytest.mark.parametrize("target", ["c", "llvm -num-cores=2"])
def test_backend_agrees_with_the_python_backend(target, data):
    cases = [data.draw(program_cases(), label=f"case {i}") for i in range(BATCH)]
    mod = tilelang.IRModule(dict(_named(case, i) for i, case in enumerate(cases)))
    reference = tilelang.build(mod, "python")
    compiled = tilelang.build(mod, target)
    for index, case in enumerate(cases):
        name = f"case_{index}"
        expected = case.make_arguments(seed=index)
        actual = [a.copy() for a in expected]
        reference[name](*expected)
        compiled[name](*actual)
        for param, want, got in zip(case.func.params, expected, actual):
            buffer = case.func.buffer_map[param]
            message = f"{name}, buffer {buffer.name}:\n{case.func.script()}"
            if buffer.dtype.is_float():
                # llvm fuses a*b + c into one FMA (one rounding instead of two)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=message)
            else:
                np.testing.assert_array_equal(got, want, err_msg=message)


@settings(
    max_examples=3 * SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
@pytest.mark.parametrize("target", ["c", "llvm"])
def test_integer_overflow_wraps_alike(target, data):
    """Narrow and unsigned types, overflow, shifts and casts: every backend wraps as
    two's-complement integers of the expression's type (tests/test_integer_semantics.py
    pins the reference itself to NumPy)."""
    cases = [data.draw(integer_cases(), label=f"case {i}") for i in range(BATCH)]
    mod = tilelang.IRModule(dict(_named(case, i) for i, case in enumerate(cases)))
    reference = tilelang.build(mod, "python")
    compiled = tilelang.build(mod, target)
    for index, case in enumerate(cases):
        name = f"case_{index}"
        expected = case.make_arguments(seed=index)
        actual = [a.copy() for a in expected]
        try:
            reference[name](*expected)
            compiled[name](*actual)
        except Exception as exc:
            raise AssertionError(f"{name} raised {exc!r}:\n{case.func.script()}") from exc
        np.testing.assert_array_equal(actual[-1], expected[-1], err_msg=case.func.script())

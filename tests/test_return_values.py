"""Functions that return a value (``-> T.float32`` with ``return x``): the python
reference returns it from the call (typed as the function's result, from any
``return`` reached); the c and llvm backends, whose functions return only a status,
refuse them with a BuildError naming the function and the return."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import BuildError

TEXT = """
@T.prim_func
def pick(A: T.Buffer((4,), "float32"), n: T.int32) -> T.float32:
    if n < 0:
        return T.float32(-1)
    return A[n] * T.float32(2)
"""


def test_python_reference_returns_the_value():
    lib = tilelang.build(tilelang.parse(TEXT), target="python")
    a = np.arange(4, dtype="float32")
    for n, expected in ((2, 4.0), (3, 6.0), (-5, -1.0)):
        result = lib["pick"](a, n)
        assert result == expected and np.asarray(result).dtype == np.float32


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_backends_returning_a_status_refuse(target):
    with pytest.raises(
        BuildError, match=r"'pick' \(<string>:5:9\) returns a value \(return float32\)"
    ):
        tilelang.build(tilelang.parse(TEXT), target=target)

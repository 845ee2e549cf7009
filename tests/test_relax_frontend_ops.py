"""The te operators of relax.frontend.ops against NumPy (no PyTorch needed)."""

import numpy as np
import pytest
from conftest import available_targets

import tilelang
from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import Var
from tilelang.relax.frontend import ops

TARGET = (available_targets("c", "llvm") or ["python"])[0]


def _run(inputs, out, arrays, out_shape, target=TARGET):
    func = te.create_prim_func([*inputs, out])
    result = np.zeros(out_shape, "float32")
    tilelang.build(func, target=target)["main"](*arrays, result)
    return result


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((2, 3), (3,), (2, 3)),
        ((4, 1, 3), (5, 1), (4, 5, 3)),
        ((1,), (2, 2), (2, 2)),
        ((), (3,), (3,)),
    ],
)
def test_broadcast_shape_follows_numpy(a, b, expected):
    assert ops.broadcast_shape(a, b) == expected == np.broadcast_shapes(a, b)


def test_broadcast_shape_symbolic_and_errors():
    n, m = Var("n", "int64"), Var("m", "int64")
    assert ops.broadcast_shape((n, 1), (1, 3)) == (n, 3)
    assert ops.broadcast_shape((n, 3), (n, 3))[0] is n
    with pytest.raises(ArgumentError, match=r"cannot broadcast shapes \(2, 3\) and \(4,\)"):
        ops.broadcast_shape((2, 3), (4,))
    with pytest.raises(ArgumentError, match="cannot broadcast"):
        ops.broadcast_shape((n,), (m,))  # equal only if n == m at run time


@pytest.mark.parametrize(
    ("op", "ref"),
    [(ops.add, np.add), (ops.subtract, np.subtract), (ops.multiply, np.multiply)],
)
def test_elementwise_broadcasts_like_numpy(op, ref):
    A = te.placeholder((4, 1, 3), "float32", "A")
    B = te.placeholder((5, 1), "float32", "B")
    a, b = _rand((4, 1, 3), 0), _rand((5, 1), 1)
    got = _run([A, B], op(A, B), [a, b], (4, 5, 3))
    np.testing.assert_allclose(got, ref(a, b), rtol=1e-6)
    # a number on either side
    got = _run([A], op(2.5, A), [a], (4, 1, 3))
    np.testing.assert_allclose(got, ref(np.float32(2.5), a), rtol=1e-6)
    got = _run([A], op(A, -1), [a], (4, 1, 3))
    np.testing.assert_allclose(got, ref(a, np.float32(-1)), rtol=1e-6)


def test_matmul_linear_relu_match_numpy():
    A = te.placeholder((2, 3, 4), "float32", "A")
    B = te.placeholder((4, 5), "float32", "B")
    a, b = _rand((2, 3, 4), 2), _rand((4, 5), 3)
    np.testing.assert_allclose(_run([A, B], ops.matmul(A, B), [a, b], (2, 3, 5)), a @ b,
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    X, W, Bias = (te.placeholder(s, "float32", n) for n, s in
                  (("X", (3, 4)), ("W", (6, 4)), ("Bias", (6,))))  # fmt: skip
    x, w, bias = _rand((3, 4), 4), _rand((6, 4), 5), _rand(6, 6)
    got = _run([X, W, Bias], ops.linear(X, W, Bias), [x, w, bias], (3, 6))
    np.testing.assert_allclose(got, x @ w.T + bias, rtol=1e-5, atol=1e-6)
    got = _run([X, W], ops.linear(X, W), [x, w], (3, 6))
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-5, atol=1e-6)
    got = _run([X], ops.relu(X), [x], (3, 4))
    np.testing.assert_array_equal(got, np.maximum(x, 0))


def test_operator_shape_errors():
    n, m = Var("n", "int64"), Var("m", "int64")
    A = te.placeholder((3, n), "float32", "A")
    B = te.placeholder((m, 2), "float32", "B")
    with pytest.raises(ArgumentError, match="matmul: the reduced dimension: sizes n and m"):
        ops.matmul(A, B)
    with pytest.raises(ArgumentError, match="matmul takes"):
        ops.matmul(A, te.placeholder((2,), "float32", "v"))
    X, W = te.placeholder((3, 4), "float32", "X"), te.placeholder((6, 5), "float32", "W")
    with pytest.raises(ArgumentError, match="linear: the input features: sizes 4 and 5"):
        ops.linear(X, W)
    W = te.placeholder((6, 4), "float32", "W")
    with pytest.raises(ArgumentError, match="linear: the bias: sizes 5 and 6"):
        ops.linear(X, W, te.placeholder((5,), "float32", "b"))
    with pytest.raises(ArgumentError, match="dtypes float32 and int32 differ"):
        ops.add(X, te.placeholder((3, 4), "int32", "I"))
    with pytest.raises(ArgumentError, match="at least one operand must be a tensor"):
        ops.add(1.0, 2.0)
    with pytest.raises(ArgumentError, match="operands are tensors or numbers"):
        ops.add(X, "x")

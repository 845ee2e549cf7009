"""tilelang.topi operators against NumPy, built with the C backend."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import relax, te, topi
from tilelang.errors import ArgumentError

RNG = np.random.default_rng(17)


def run(inputs: dict, make):
    """``make(*placeholders)`` built into a prim_func and run on ``inputs`` (name ->
    array); returns the output array."""
    tensors = [te.placeholder(a.shape, str(a.dtype), name=n) for n, a in inputs.items()]
    out = make(*tensors)
    func = te.create_prim_func([*tensors, out])
    result = np.zeros([int(d) for d in out.shape], str(out.dtype))
    tilelang.build(func, target="c")["main"](*inputs.values(), result)
    return result


def rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


@pytest.mark.parametrize(
    "op, ref",
    [(topi.add, np.add), (topi.subtract, np.subtract), (topi.multiply, np.multiply),
     (topi.divide, np.divide), (topi.maximum, np.maximum), (topi.minimum, np.minimum)],
)  # fmt: skip
def test_broadcasting_binary_operators(op, ref):
    a, b = rand(3, 4), rand(4)
    np.testing.assert_allclose(run({"a": a, "b": b}, op), ref(a, b), rtol=1e-6)
    np.testing.assert_allclose(run({"a": a}, lambda x: op(x, 2.0)), ref(a, 2.0), rtol=1e-6)


@pytest.mark.parametrize(
    "op, ref",
    [(topi.exp, np.exp), (topi.tanh, np.tanh), (topi.abs, np.abs), (topi.negative, np.negative),
     (topi.sigmoid, lambda x: 1 / (1 + np.exp(-x)))],
)  # fmt: skip
def test_unary_operators(op, ref):
    a = rand(5, 3)
    np.testing.assert_allclose(run({"a": a}, op), ref(a), rtol=1e-5, atol=1e-6)


def test_sqrt_and_log_on_positive_values():
    a = np.abs(rand(6)) + 0.5
    np.testing.assert_allclose(run({"a": a}, topi.sqrt), np.sqrt(a), rtol=1e-6)
    np.testing.assert_allclose(run({"a": a}, topi.log), np.log(a), rtol=1e-6)


@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_with_transposes(ta, tb):
    a = rand(8, 6) if ta else rand(6, 8)
    b = rand(5, 8) if tb else rand(8, 5)
    got = run({"a": a, "b": b}, lambda x, y: topi.matmul(x, y, transpose_a=ta, transpose_b=tb))
    expected = (a.T if ta else a) @ (b.T if tb else b)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_dense_relu_softmax_as_the_course_uses_them():
    x, w, b = rand(2, 16), rand(10, 16), rand(10)

    def model(x, w, b):
        return topi.nn.softmax(topi.nn.relu(topi.nn.dense(x, w, b)))

    z = np.maximum(x @ w.T + b, 0)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    got = run({"x": x, "w": w, "b": b}, model)
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_softmax_and_log_softmax_along_an_inner_axis():
    a = 30 * rand(3, 4, 5)  # large values: the max is subtracted first
    e = np.exp(a - a.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    got = run({"a": a}, lambda x: topi.nn.softmax(x, axis=1))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    got = run({"a": a}, lambda x: topi.nn.log_softmax(x, axis=1))
    shifted = a - a.max(axis=1, keepdims=True)  # finite where the softmax underflows
    log_expected = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got, log_expected, rtol=1e-5, atol=1e-5)


def test_bias_add_batch_matmul_transpose_reshape():
    a, bias = rand(2, 3, 4), rand(3)
    got = run({"a": a, "b": bias}, lambda x, y: topi.nn.bias_add(x, y, axis=1))
    np.testing.assert_allclose(got, a + bias[None, :, None], rtol=1e-6)
    x, y = rand(2, 3, 4), rand(2, 5, 4)
    got = run({"x": x, "y": y}, topi.nn.batch_matmul)
    np.testing.assert_allclose(got, x @ y.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)
    got = run({"a": a}, lambda t: topi.transpose(t, (2, 0, 1)))
    np.testing.assert_array_equal(got, a.transpose(2, 0, 1))
    got = run({"a": a}, lambda t: topi.reshape(t, (4, -1)))
    np.testing.assert_array_equal(got, a.reshape(4, -1))


def test_cast():
    a = rand(4) * 10
    got = run({"a": a}, lambda t: topi.cast(t, "int32"))
    np.testing.assert_array_equal(got, a.astype("int32"))


def test_mismatched_sizes_are_argument_errors():
    a, b = te.placeholder((4, 8), name="a"), te.placeholder((7, 5), name="b")
    with pytest.raises(ArgumentError, match="reduced dimension"):
        topi.matmul(a, b)
    with pytest.raises(ArgumentError, match="cannot broadcast"):
        topi.add(a, b)
    with pytest.raises(ArgumentError, match="cannot reshape"):
        topi.reshape(a, (5, 7))
    with pytest.raises(ArgumentError, match="no permutation"):
        topi.transpose(a, (0, 0))


def test_topi_in_emit_te_names_the_prim_funcs():
    x = relax.Var("x", relax.TensorStructInfo((1, 8), "float32"))
    w = relax.const(rand(4, 8))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit_te(topi.nn.dense, x, w)
            out = bb.emit_output(bb.emit_te(topi.nn.relu, lv))
        bb.emit_func_output(out)
    mod = bb.get()
    assert sorted(mod.functions) == ["dense", "main", "relu"]
    data = rand(1, 8)
    vm = relax.VirtualMachine(relax.build(mod, target="c"), tilelang.cpu())
    expected = np.maximum(data @ w.data.T, 0)
    np.testing.assert_allclose(vm["main"](data).numpy(), expected, rtol=1e-5, atol=1e-6)

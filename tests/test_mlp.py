"""The end-to-end MLP of SEED_PROGRAMS §5 under every CPU target that exists here."""

import numpy as np
import pytest
from conftest import available_targets, load_sample

import tilelang
from tilelang import relax, te
from tilelang.errors import ArgumentError, BuildError
from tilelang.relax import TensorStructInfo as Tensor

mlp = load_sample("mlp")


TARGETS = available_targets("python", "c", "llvm")


def _usable(target):
    """A backend that exists but cannot build yet here is skipped, not failed."""
    try:
        tilelang.build(mlp.relu0(), target=target)
    except BuildError as error:
        pytest.skip(f"the {target} backend cannot build here: {error}")


def test_shipped_image_is_the_generated_one():
    np.testing.assert_array_equal(np.load(mlp.IMAGE), mlp.make_image())
    assert mlp.load_image().shape == (1, 784)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("linear", ["linear0", "env.linear"])
def test_mlp_equals_numpy(target, linear):
    _usable(target)
    data, weights = mlp.load_image(), mlp.make_weights()
    expected = mlp.numpy_mlp(data, **weights)
    # weights passed at run time
    ex = relax.build(mlp.mlp_module(linear), target=target)
    vm = relax.VirtualMachine(ex, tilelang.cpu())
    got = vm["main"](tilelang.nd.array(data), *map(tilelang.nd.array, weights.values()))
    assert isinstance(got, tilelang.nd.NDArray) and got.shape == (1, 10)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6)
    # and bound as constants
    np.testing.assert_allclose(
        mlp.predict(mlp.mlp_module(linear), target, data, weights), expected, rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("target", TARGETS)
def test_block_builder_emit_te_mlp(target):
    _usable(target)
    x = relax.Var("x", Tensor((1, 784), "float32"))
    params = {"w0": (128, 784), "b0": (128,), "w1": (10, 128), "b1": (10,)}
    w0, b0, w1, b1 = (relax.Var(name, Tensor(shape, "float32")) for name, shape in params.items())
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w0, b0, w1, b1]):
        with bb.dataflow():
            lv0 = bb.emit_te(mlp.te_linear, x, w0, b0)
            lv1 = bb.emit_te(mlp.te_relu, lv0)
            out = bb.emit_output(bb.call_te(mlp.te_linear, lv1, w1, b1))
        bb.emit_func_output(out)
    mod = bb.get()
    # te_linear is used twice with different shapes: two prim_funcs; relu once
    assert sorted(name for name, _ in mod) == ["main", "te_linear", "te_linear_1", "te_relu"]
    data, weights = mlp.load_image(), mlp.make_weights()
    vm = relax.VirtualMachine(relax.build(mod, target=target), tilelang.cpu())
    np.testing.assert_allclose(
        vm["main"](data, *weights.values()), mlp.numpy_mlp(data, **weights), rtol=1e-5, atol=1e-6
    )


def test_wrong_output_annotation_is_caught_before_running():
    # linear0 makes (1, n) = (1, 128); annotating its output (1, k) = (1, 10) is wrong
    m, n, k = (tilelang.ir.SizeVar(s, "int64") for s in "mnk")
    x, w0, b0 = (relax.Var(a, Tensor(s, "float32")) for a, s in
                 (("x", (1, m)), ("w0", (n, m)), ("b0", (n,))))  # fmt: skip
    w1 = relax.Var("w1", Tensor((k, n), "float32"))
    bb = relax.BlockBuilder()
    bb.add_func(mlp.linear0(), "linear0")
    with bb.function("main", [x, w0, b0, w1]):
        with bb.dataflow():
            call = relax.call_dps_packed("linear0", (x, w0, b0), Tensor((1, k), "float32"))
            out = bb.emit_output(call, name_hint="out")
        bb.emit_func_output(out)
    target = TARGETS[0] if TARGETS else "c"
    _usable(target)
    vm = relax.VirtualMachine(relax.build(bb.get(), target=target), tilelang.cpu())
    data, weights = mlp.load_image(), mlp.make_weights()
    with pytest.raises(
        ArgumentError, match=r"linear0: the output out \(buffer Z\): dimension 1 is 10, but n = 128"
    ):
        vm["main"](data, weights["w0"], weights["b0"], weights["w1"])


def test_static_shape_mismatch_is_a_build_time_error():
    x = relax.Var("x", Tensor((1, 784), "float32"))
    w = relax.Var("w", Tensor((128, 700), "float32"))  # 700 columns for a 784-wide input
    b = relax.Var("b", Tensor((128,), "float32"))
    bb = relax.BlockBuilder()
    bb.add_func(mlp.linear0(), "linear0")
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            call = relax.call_dps_packed("linear0", (x, w, b), Tensor((1, 128), "float32"))
            out = bb.emit_output(call)
        bb.emit_func_output(out)
    with pytest.raises(ArgumentError, match=r"argument w \(buffer W\): dimension 1 is 700, but m"):
        relax.build(bb.get(), target="c")


def test_emit_te_rank_error():
    x = relax.Var("x", Tensor((1, 784), "float32"))
    v = relax.Var("v", Tensor((784,), "float32"))
    bb = relax.BlockBuilder()
    with pytest.raises(ArgumentError, match="has 1 dimensions, indexed with 2"):
        with bb.function("main", [x, v]):
            bb.emit_te(mlp.te_linear, x, v, v)


def test_te_matmul_relu_runs():
    target = TARGETS[0] if TARGETS else "c"
    _usable(target)
    A = te.placeholder((16, 8), "float32", "A")
    B = te.placeholder((8, 4), "float32", "B")
    k = te.reduce_axis((0, 8), "k")
    C = te.compute((16, 4), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute(C.shape, lambda *i: te.max(C(*i), 0.0), name="D")
    lib = tilelang.build(te.create_prim_func([A, B, D], name="mm_relu"), target=target)
    rng = np.random.default_rng(3)
    a, b = (
        rng.standard_normal((16, 8)).astype("float32"),
        rng.standard_normal((8, 4)).astype("float32"),
    )
    d = np.empty((16, 4), "float32")
    lib["mm_relu"](a, b, d)
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)


def test_sample_prints_the_predicted_class(capsys):
    target = TARGETS[0] if TARGETS else "c"
    _usable(target)
    mlp.main(["--target", target])
    expected = int(np.argmax(mlp.numpy_mlp(mlp.load_image(), **mlp.make_weights())))
    lines = capsys.readouterr().out.splitlines()
    label = f"predicted class: {expected} ({mlp.CLASSES[expected]})"
    assert len(lines) == 2 and all(label in line for line in lines)

"""Graph functions on the VM with registered (NumPy) library functions: shape
unification, storage reuse, bind_params, build-time errors. No compiler needed."""

import numpy as np
import pytest

import tilelang
from tilelang import relax
from tilelang.errors import ArgumentError, BuildError
from tilelang.ir import SizeVar
from tilelang.relax import TensorStructInfo as Tensor


@pytest.fixture(autouse=True, scope="module")
def library():
    def linear(x, w, b, out):
        np.add(x @ w.T, b, out=out)

    def relu(x, out):
        np.maximum(x, 0, out=out)

    tilelang.register_func("test_vm.linear", linear)
    tilelang.register_func("test_vm.relu", relu)
    yield
    for name in ("test_vm.linear", "test_vm.relu"):
        tilelang.register.remove_global_func(name)


def _mlp(out_dim=None):
    """The §5 graph with library calls; ``out_dim`` overrides the last annotation."""
    m, n, k = (SizeVar(s, "int64") for s in "mnk")
    x = relax.Var("x", Tensor((1, m), "float32"))
    w0, b0 = relax.Var("w0", Tensor((n, m), "float32")), relax.Var("b0", Tensor((n,), "float32"))
    w1, b1 = relax.Var("w1", Tensor((k, n), "float32")), relax.Var("b1", Tensor((k,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w0, b0, w1, b1]):
        with bb.dataflow():
            lv0 = bb.emit(relax.call_dps_packed("test_vm.linear", (x, w0, b0), Tensor((1, n))))
            lv1 = bb.emit(relax.call_dps_packed("test_vm.relu", (lv0,), Tensor((1, n))))
            last = Tensor((1, k if out_dim is None else out_dim))
            call = relax.call_dps_packed("test_vm.linear", (lv1, w1, b1), last)
            out = bb.emit_output(call, name_hint="out")
        bb.emit_func_output(out)
    return bb.get()


def _weights(m=784, n=128, k=10, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [(1, m), (n, m), (n,), (k, n), (k,)]
    return [rng.standard_normal(s).astype("float32") for s in arrays]


def _numpy_mlp(x, w0, b0, w1, b1):
    return np.maximum(x @ w0.T + b0, 0) @ w1.T + b1


def test_library_mlp_matches_numpy():
    vm = relax.VirtualMachine(relax.build(_mlp()), tilelang.cpu())
    args = _weights()
    np.testing.assert_allclose(vm["main"](*args), _numpy_mlp(*args), rtol=1e-5, atol=1e-5)
    # other sizes bind m, n, k afresh
    small = _weights(12, 6, 3, seed=1)
    np.testing.assert_allclose(vm["main"](*small), _numpy_mlp(*small), rtol=1e-5, atol=1e-5)


def test_wrong_width_weight_names_the_dimension_before_running():
    calls = []
    tilelang.register_func("test_vm.linear", lambda *a: calls.append(a), override=True)
    try:
        vm = relax.VirtualMachine(relax.build(_mlp()), tilelang.cpu())
        x, w0, b0, w1, b1 = _weights()
        with pytest.raises(ArgumentError, match=r"argument w0: dimension 1 is 700, but m = 784"):
            vm["main"](x, w0[:, :700].copy(), b0, w1, b1)
        with pytest.raises(ArgumentError, match=r"argument b0: expected rank 1 \(n,\), got rank 2"):
            vm["main"](x, w0, b0[None], w1, b1)
        with pytest.raises(ArgumentError, match=r"argument x: dtype is float64"):
            vm["main"](x.astype("float64"), w0, b0, w1, b1)
        with pytest.raises(ArgumentError, match=r"takes 5 arguments"):
            vm["main"](x, w0)
        assert calls == []  # nothing ran
    finally:
        tilelang.register_func("test_vm.linear", lambda x, w, b, out: np.add(x @ w.T, b, out=out),
                               override=True)  # fmt: skip


def test_undetermined_output_size_is_reported():
    out_dim = SizeVar("q", "int64")  # bound by no argument
    vm = relax.VirtualMachine(relax.build(_mlp(out_dim)), tilelang.cpu())
    with pytest.raises(ArgumentError, match=r"output out.*dimension 1 \(q\) is not determined"):
        vm["main"](*_weights())


def test_storage_is_reused_when_lifetimes_do_not_overlap():
    n = SizeVar("n", "int64")
    x = relax.Var("x", Tensor((n,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for _ in range(4):
                value = bb.emit(relax.call_dps_packed("test_vm.relu", (value,), Tensor((n,))))
            out = bb.emit_output(value)
        bb.emit_func_output(out)
    ex = relax.build(bb.get())
    stats = ex.stats("main")
    # lv0 -> lv1 -> lv2 -> lv3: each reads the previous, so two storages alternate
    assert stats["instructions"] == 4 and stats["storages"] == 2
    assert stats["storage_of"] == {"lv0": 0, "lv1": 1, "lv2": 0, "lv3": 1}
    data = np.array([-1.0, 2.0, -3.0], "float32")
    vm = relax.VirtualMachine(ex, tilelang.cpu())
    first = vm["main"](data)
    np.testing.assert_array_equal(first, [0, 2, 0])
    second = vm["main"](data)
    assert first is not second and not np.shares_memory(first, second)  # fresh per call


def test_bind_params_makes_constants_and_binds_sizes():
    x, w0, b0, w1, b1 = _weights(20, 8, 3)
    mod = relax.bind_params(_mlp(), {"w0": w0, "b0": b0, "w1": w1, "b1": b1})
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["x"]
    assert [int(d) for d in main.params[0].struct_info.shape] == [1, 20]  # m bound by w0
    vm = relax.VirtualMachine(relax.build(mod), tilelang.cpu())
    np.testing.assert_allclose(vm["main"](x), _numpy_mlp(x, w0, b0, w1, b1), rtol=1e-5)
    with pytest.raises(ArgumentError, match=r"argument x: dimension 1 is 784, expected 20"):
        vm["main"](_weights()[0])
    with pytest.raises(ArgumentError, match=r"parameter b1: dimension 0 is 4, but k = 3"):
        relax.bind_params(_mlp(), {"w1": w1, "b1": np.zeros(4, "float32")})
    with pytest.raises(ArgumentError, match=r"no parameter\(s\) w9"):
        relax.bind_params(_mlp(), {"w9": w1})


def test_unknown_packed_function_is_a_build_error():
    x = relax.Var("x", Tensor((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.call_dps_packed("no.such.func", (x,), Tensor((4,))))
        bb.emit_func_output(out)
    with pytest.raises(BuildError, match="'no.such.func' is neither a prim_func"):
        relax.build(bb.get())


def test_register_func_refuses_a_taken_name():
    with pytest.raises(ArgumentError, match="already registered"):
        tilelang.register_func("test_vm.relu", lambda x, out: None)
    assert tilelang.get_global_func("test_vm.missing", allow_missing=True) is None


def test_block_builder_misuse_is_reported():
    bb = relax.BlockBuilder()
    with pytest.raises(ArgumentError, match="inside `with bb.function"):
        bb.emit(relax.call_dps_packed("test_vm.relu", (), Tensor((4,))))
    x = relax.Var("x", Tensor((4,), "float32"))
    # a dataflow variable may be returned only from the function's last dataflow block
    # (TVM's spelling bb.emit_func_output(lv) exports it); an earlier block's is an error
    with pytest.raises(ArgumentError, match="emit_output it inside that block"):
        with bb.function("main", [x]):
            with bb.dataflow():
                lv = bb.emit(relax.call_dps_packed("test_vm.relu", (x,), Tensor((4,))))
            with bb.dataflow():
                bb.emit_output(relax.call_dps_packed("test_vm.relu", (x,), Tensor((4,))))
            bb.emit_func_output(lv)


def test_vm_takes_and_returns_nd_arrays():
    # MLC-course style: vm["main"](data_nd, *params_nd).numpy()
    args = _weights(20, 8, 3)
    vm = relax.VirtualMachine(relax.build(_mlp()), tilelang.cpu())
    result = vm["main"](*(tilelang.nd.array(a) for a in args))
    assert isinstance(result, tilelang.nd.NDArray)
    assert result.shape == (1, 3) and result.dtype == "float32"
    assert str(result.device) == "cpu(0)"
    expected = _numpy_mlp(*args)
    got = result.numpy()
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5, atol=1e-5)
    # NumPy inputs give the same kind of result; .numpy() is a copy the caller owns
    again = vm["main"](*args)
    assert isinstance(again, tilelang.nd.NDArray)
    got[...] = 0
    np.testing.assert_allclose(again.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_constant_result_is_a_fresh_nd_array():
    x = relax.Var("x", Tensor((2,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(relax.const(np.array([1.5, -2.0], "float32")))
    vm = relax.VirtualMachine(relax.build(bb.get()), tilelang.cpu())
    first = vm["main"](np.zeros(2, "float32"))
    assert isinstance(first, tilelang.nd.NDArray)
    np.testing.assert_array_equal(first.numpy(), [1.5, -2.0])
    np.asarray(first)[0] = 7.0  # writing into one result does not change the constant
    np.testing.assert_array_equal(vm["main"](np.zeros(2, "float32")).numpy(), [1.5, -2.0])

"""Whole models fast by default: prim_funcs specialised to their call sites' shapes
(PrimFunc.specialize, relax/specialize.py), elementwise calls fused into their
producers (relax/fuse.py), and the VM's unchecked calls after a first checked one.
Numbers against NumPy; the IR the build makes is read back to see what happened."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang import relax, te
from tilelang.errors import ArgumentError
from tilelang.ir import IRModule, PrimFunc, Var
from tilelang.relax import TensorStructInfo as Tensor
from tilelang.relax.fuse import fuse_elementwise_calls, is_elementwise
from tilelang.relax.specialize import specialize_calls
from tilelang.transform.bind_arguments import size_vars

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
import mlp  # noqa: E402


def _bound_mlp():
    data, weights = mlp.load_image(), mlp.make_weights()
    return data, weights, relax.bind_params(mlp.mlp_module("linear0"), weights)


def _shape(func: PrimFunc, index: int) -> tuple:
    buffer = func.buffer_map[func.params[index]]
    return tuple(int(d.value) if hasattr(d, "value") else d for d in buffer.shape)


# ------------------------------------------------------------------ PrimFunc.specialize


def test_specialize_fixes_every_buffer_and_loop():
    func = mlp.linear0()
    w = func.buffer_map[func.params[1]]
    n, m = w.shape
    special = func.specialize({n: 3, m: 5})
    assert [_shape(special, i) for i in range(4)] == [(1, 5), (3, 5), (3,), (1, 3)]
    assert size_vars(special) == ()  # no symbolic size is left
    rng = np.random.default_rng(0)
    x, wt, b = (rng.standard_normal(s).astype("float32") for s in [(1, 5), (3, 5), (3,)])
    for target in ("python", "llvm"):
        out = np.empty((1, 3), "float32")
        tilelang.build(special, target)["linear0"](x, wt, b, out)
        np.testing.assert_allclose(out, x @ wt.T + b, rtol=1e-5)
    # the array must now have the constant shape
    with pytest.raises(ArgumentError, match="expected shape"):
        tilelang.build(special, "python")["linear0"](
            np.ones((1, 6), "float32"), np.ones((3, 6), "float32"), b, out
        )


def test_specialize_a_scalar_parameter_drops_it():
    n = Var("n", "int32")
    a = te.placeholder((8,), "float32", "A")
    b = te.compute((8,), lambda i: a[i] * 2.0, name="B")
    func = te.create_prim_func([a, b], name="scale")
    # a prim_func with a scalar parameter of its own
    func = PrimFunc((*func.params, n), func.body, None, func.buffer_map, func.attrs)
    special = func.specialize({n: 4})
    assert len(special.params) == 2


def test_specialize_errors_are_clear():
    func = mlp.linear0()
    with pytest.raises(ArgumentError, match="not a scalar parameter or a buffer size"):
        func.specialize({Var("q", "int64"): 3})
    n = func.buffer_map[func.params[1]].shape[0]
    with pytest.raises(ArgumentError, match="must be an integer"):
        func.specialize({n: 2.5})


# ------------------------------------------------------------- call-site specialisation


def test_each_call_gets_a_copy_for_its_shapes():
    _, _, bound = _bound_mlp()
    mod = specialize_calls(bound)
    names = sorted(n for n, f in mod.functions.items() if isinstance(f, PrimFunc))
    assert names == ["linear0_128_10", "linear0_784_128", "relu0_128"]
    assert _shape(mod["linear0_784_128"], 1) == (128, 784)
    assert _shape(mod["linear0_128_10"], 1) == (10, 128)


def test_undecided_sizes_keep_the_generic_function():
    """Unbound weights: the graph cannot know m, n, k, so nothing is specialised."""
    mod = mlp.mlp_module("linear0")
    assert specialize_calls(mod) is not None
    names = sorted(n for n, f in specialize_calls(mod).functions.items() if isinstance(f, PrimFunc))
    assert names == ["linear0", "relu0"]
    data, weights = mlp.load_image(), mlp.make_weights()
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tilelang.cpu())
    out = vm["main"](data, *(weights[k] for k in ("w0", "b0", "w1", "b1")))
    np.testing.assert_allclose(out.numpy(), mlp.numpy_mlp(data, **weights), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- fusion


def test_relu_is_fused_into_the_first_linear():
    _, _, bound = _bound_mlp()
    mod = fuse_elementwise_calls(specialize_calls(bound))
    names = sorted(n for n, f in mod.functions.items() if isinstance(f, PrimFunc))
    assert names == ["fused_linear0_784_128_relu0_128", "linear0_128_10"]
    main = mod["main"]
    assert len(main.body.blocks[0].bindings) == 2


def test_the_built_model_matches_numpy_with_and_without_the_rules():
    data, weights, bound = _bound_mlp()
    want = mlp.numpy_mlp(data, **weights)
    for target, auto in (("llvm", True), ("c", True), ("llvm", False), ("python", True)):
        ex = relax.build(bound, target=target, auto_schedule=auto)
        fused = any(n.startswith("fused_") for n in ex.prim_funcs)
        assert fused == auto
        out = relax.VirtualMachine(ex, tilelang.cpu())["main"](data)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4)


def _elementwise(fn, n):
    a = te.placeholder((n,), "float32", "A")
    return te.create_prim_func([a, te.compute((n,), lambda i: fn(a[i]), "B")])


def _chain(ops, n=16):
    """main(x) = ops applied in turn, each a prim_func of x's shape."""
    x = relax.Var("x", Tensor((n,), "float32"))
    bb = relax.BlockBuilder()
    for name, fn in dict(ops).items():
        bb.add_func(_elementwise(fn, n), name)
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for name, _ in ops:
                value = bb.emit(relax.call_tir(relax.GlobalVar(name), (value,), Tensor((n,))))
            out = bb.emit_output(value)
        bb.emit_func_output(out)
    return bb.get()


def test_a_chain_fuses_step_by_step_and_a_function_with_itself():
    double = ("double", lambda v: v * 2.0)
    plus = ("plus", lambda v: v + 1.0)
    mod = _chain([double, plus, double])
    fused = fuse_elementwise_calls(mod)
    prims = [n for n, f in fused.functions.items() if isinstance(f, PrimFunc)]
    assert prims == ["fused_double_plus_double"]
    x = np.linspace(-2, 2, 16).astype("float32")
    for target in ("python", "llvm"):
        out = relax.VirtualMachine(relax.build(mod, target), tilelang.cpu())["main"](x)
        np.testing.assert_allclose(out.numpy(), (x * 2 + 1) * 2, rtol=1e-6)


def test_a_value_used_twice_or_a_reduction_is_not_fused():
    n = 16
    x = relax.Var("x", Tensor((n,), "float32"))
    bb = relax.BlockBuilder()
    a = te.placeholder((n,), "float32", "A")
    bb.add_func(te.create_prim_func([a, te.compute((n,), lambda i: a[i] + 1.0, "B")]), "inc")
    a2, b2 = te.placeholder((n,), "float32", "A"), te.placeholder((n,), "float32", "B")
    add = te.compute((n,), lambda i: a2[i] + b2[i], "C")
    bb.add_func(te.create_prim_func([a2, b2, add]), "add")
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.call_tir(relax.GlobalVar("inc"), (x,), Tensor((n,))))
            z = bb.emit(relax.call_tir(relax.GlobalVar("inc"), (y,), Tensor((n,))))
            w = bb.emit(relax.call_tir(relax.GlobalVar("add"), (z, y), Tensor((n,))))
            out = bb.emit_output(w)
        bb.emit_func_output(out)
    mod = bb.get()
    fused = fuse_elementwise_calls(mod)
    # y feeds two calls: the first pair stays apart; z is used once, by add: fused
    prims = sorted(n for n, f in fused.functions.items() if isinstance(f, PrimFunc))
    assert prims == ["fused_inc_add", "inc"]
    v = np.arange(n, dtype="float32")
    out = relax.VirtualMachine(relax.build(mod, "llvm"), tilelang.cpu())["main"](v)
    np.testing.assert_allclose(out.numpy(), (v + 2) + (v + 1))
    assert not is_elementwise(mlp.linear0())


def test_a_scheduled_function_is_never_fused():
    _, _, bound = _bound_mlp()
    spec = specialize_calls(bound)
    relu = spec["relu0_128"]
    from tilelang.schedule import Schedule

    sch = Schedule(IRModule({"relu0_128": relu}))
    (loop, inner) = sch.get_loops(sch.get_block("Y", func_name="relu0_128"))
    sch.vectorize(inner)
    spec = spec.with_function("relu0_128", sch.mod["relu0_128"])
    from tilelang.schedule.rules import is_user_scheduled

    fused = fuse_elementwise_calls(spec, fusable=lambda f: not is_user_scheduled(f))
    assert not any(n.startswith("fused_") for n, _ in fused.functions.items())


# ------------------------------------------------------------------- the VM's fast path


def test_repeated_calls_stay_correct_and_results_are_fresh():
    data, weights, bound = _bound_mlp()
    run = relax.VirtualMachine(relax.build(bound, "llvm"), tilelang.cpu())["main"]
    rng = np.random.default_rng(1)
    results = []
    for _ in range(4):  # the first call is checked, the others take the fast path
        x = rng.standard_normal((1, 784)).astype("float32")
        out = run(x)
        np.testing.assert_allclose(out.numpy(), mlp.numpy_mlp(x, **weights), rtol=1e-4, atol=1e-4)
        results.append((x, out))
    for x, out in results:  # no result was overwritten by a later call
        np.testing.assert_allclose(out.numpy(), mlp.numpy_mlp(x, **weights), rtol=1e-4, atol=1e-4)


def test_bad_arguments_are_still_refused_after_the_fast_path_is_set_up():
    data, _, bound = _bound_mlp()
    run = relax.VirtualMachine(relax.build(bound, "llvm"), tilelang.cpu())["main"]
    run(data)
    run(data)
    with pytest.raises(ArgumentError):
        run(np.ones((1, 783), "float32"))
    with pytest.raises(ArgumentError):
        run(data.astype("float64"))
    strided = np.ones((1, 1568), "float32")[:, ::2]
    with pytest.raises(ArgumentError, match="contiguous"):
        run(strided)
    assert run(np.ascontiguousarray(strided)).shape == (1, 10)


def test_native_steps_are_used_and_give_way_when_busy():
    data, weights, bound = _bound_mlp()
    run = relax.VirtualMachine(relax.build(bound, "llvm"), tilelang.cpu())["main"]
    run(data)  # checked
    want = mlp.numpy_mlp(data, **weights)
    np.testing.assert_allclose(run(data).numpy(), want, rtol=1e-4, atol=1e-4)
    (plan,) = run._plans.values()
    assert plan.native, "the second call did not set up native steps"
    with plan.native.lock:  # as if another thread were inside: the ordinary path runs
        np.testing.assert_allclose(run(data).numpy(), want, rtol=1e-4, atol=1e-4)


def test_threads_calling_one_function_get_their_own_results():
    from concurrent.futures import ThreadPoolExecutor

    _, weights, bound = _bound_mlp()
    run = relax.VirtualMachine(relax.build(bound, "llvm"), tilelang.cpu())["main"]
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((1, 784)).astype("float32") for _ in range(64)]
    with ThreadPoolExecutor(4) as pool:
        outputs = list(pool.map(lambda x: run(x).numpy(), inputs))
    for x, out in zip(inputs, outputs):
        np.testing.assert_allclose(out, mlp.numpy_mlp(x, **weights), rtol=1e-4, atol=1e-4)


def test_a_registered_function_in_the_graph_keeps_the_ordinary_path():
    data, weights = mlp.load_image(), mlp.make_weights()
    bound = relax.bind_params(mlp.mlp_module("env.linear"), weights)
    run = relax.VirtualMachine(relax.build(bound, "llvm"), tilelang.cpu())["main"]
    for _ in range(3):
        out = run(data)
        np.testing.assert_allclose(out.numpy(), mlp.numpy_mlp(data, **weights), rtol=1e-4)
    (plan,) = run._plans.values()
    assert plan.native is False


def test_the_same_pair_fused_at_two_places_keeps_each_argument_order():
    """sub(inc(x), y) in two graph functions and sub(y, inc(x)) in a third: one fused
    function per argument order, reused where the pair comes again."""
    n = 8
    bb = relax.BlockBuilder()
    a = te.placeholder((n,), "float32", "A")
    bb.add_func(te.create_prim_func([a, te.compute((n,), lambda i: a[i] + 1.0, "B")]), "inc")
    a2, b2 = te.placeholder((n,), "float32", "A"), te.placeholder((n,), "float32", "B")
    bb.add_func(te.create_prim_func([a2, b2, te.compute((n,), lambda i: a2[i] - b2[i])]), "sub")
    inc, sub = relax.GlobalVar("inc"), relax.GlobalVar("sub")
    for name, inc_first in (("first", True), ("second", False), ("third", True)):
        x, y = relax.Var("x", Tensor((n,), "float32")), relax.Var("y", Tensor((n,), "float32"))
        with bb.function(name, [x, y]):
            with bb.dataflow():
                p = bb.emit(relax.call_tir(inc, (x,), Tensor((n,))))
                args = (p, y) if inc_first else (y, p)
                out = bb.emit_output(relax.call_tir(sub, args, Tensor((n,))))
            bb.emit_func_output(out)
    mod = bb.get()
    fused = fuse_elementwise_calls(mod)
    prims = sorted(n for n, f in fused.functions.items() if isinstance(f, PrimFunc))
    assert prims == ["fused_inc_sub", "fused_inc_sub_1"]
    xv, yv = np.arange(n, dtype="float32"), np.full(n, 10, "float32")
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tilelang.cpu())
    np.testing.assert_allclose(vm["first"](xv, yv).numpy(), xv + 1 - yv)
    np.testing.assert_allclose(vm["second"](xv, yv).numpy(), yv - (xv + 1))
    np.testing.assert_allclose(vm["third"](xv, yv).numpy(), xv + 1 - yv)

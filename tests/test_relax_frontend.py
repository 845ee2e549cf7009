"""PyTorch import (``relax.frontend.from_fx``): traced models equal PyTorch's output."""

import operator

import numpy as np
import pytest
from conftest import available_targets, load_sample

import tilelang
from tilelang import relax, te
from tilelang.errors import ArgumentError
from tilelang.ir import structural_equal
from tilelang.relax.frontend import from_fx, map_param

torch = pytest.importorskip("torch")
fx = torch.fx
nn = torch.nn

# the course's model, 784 -> 128 -> relu -> 10, with the weights of samples/mlp.py
make_model = load_sample("mlp_from_torch").make_model


TARGETS = available_targets("c", "llvm") or ["python"]


def _run(mod, *inputs, target=TARGETS[0]):
    vm = relax.VirtualMachine(relax.build(mod, target=target), tilelang.cpu())
    return vm["main"](*(tilelang.nd.array(x) for x in inputs)).numpy()


def _torch_out(model, *inputs):
    with torch.no_grad():
        return model(*(torch.from_numpy(x) for x in inputs)).numpy()


@pytest.mark.parametrize("target", TARGETS)
def test_traced_mlp_equals_pytorch(target):
    model = make_model()
    mod = from_fx(fx.symbolic_trace(model), [(1, 784)])
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["x"]  # the weights are constants
    assert sorted(name for name, _ in mod) == ["linear", "linear_1", "main", "relu"]
    data = np.random.default_rng(1).random((1, 784), dtype=np.float32)
    got = _run(mod, data, target=target)
    assert got.shape == (1, 10) and got.dtype == np.float32
    np.testing.assert_allclose(got, _torch_out(model, data), rtol=1e-5, atol=1e-6)
    # torch tensors are accepted as they are (through DLPack)
    vm = relax.VirtualMachine(relax.build(mod, target=target), tilelang.cpu())
    np.testing.assert_array_equal(vm["main"](torch.from_numpy(data)).numpy(), got)
    with pytest.raises(ArgumentError, match="argument x cannot be read.*detach"):
        vm["main"](torch.from_numpy(data).requires_grad_())


def test_sample_imports_with_course_maps_and_default_maps(capsys):
    """samples/mlp_from_torch.py: both imports equal PyTorch (asserted inside) and
    classify the shipped image as samples/mlp.py's NumPy model does."""
    sample = load_sample("mlp_from_torch")
    assert sample.main(["--target", TARGETS[0]]) == 0
    mlp = sample.mlp
    expected = int(np.argmax(mlp.numpy_mlp(mlp.load_image(), **mlp.make_weights())))
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[0] for line in lines] == [
        f"[{TARGETS[0]}, course-style maps",
        f"[{TARGETS[0]}, default maps",
    ]
    assert all(
        line.endswith(f"predicted class: {expected} ({mlp.CLASSES[expected]})") for line in lines
    )


# --- the course's way: user maps built on te, weights read through get_attr ---------


def te_matmul(A, B):
    k = te.reduce_axis((0, A.shape[1]), "k")
    return te.compute((A.shape[0], B.shape[1]),
                      lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")  # fmt: skip


def te_relu(A):
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0.0), name="relu")


def te_bias_add(A, b):
    return te.compute(A.shape, lambda i, j: A[i, j] + b[j], name="bias_add")


def map_matmul(bb, node_map, node):
    return bb.emit_te(te_matmul, node_map[node.args[0]], node_map[node.args[1]])


def map_relu(bb, node_map, node):
    return bb.emit_te(te_relu, node_map[node.args[0]])


def map_add(bb, node_map, node):
    return bb.emit_te(te_bias_add, node_map[node.args[0]], node_map[node.args[1]])


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(128, 128))
        self.bias = nn.Parameter(torch.randn(128))

    def forward(self, x):
        x = torch.matmul(x, self.weight)
        x = torch.add(x, self.bias)
        return torch.relu(x)


def test_user_maps_and_get_attr_parameters():
    torch.manual_seed(1)
    model = MyModel()
    traced = fx.symbolic_trace(model)
    assert [n.op for n in traced.graph.nodes].count("get_attr") == 2
    mod = from_fx(
        traced,
        input_shapes=[(1, 128)],
        call_function_map={torch.matmul: map_matmul, torch.relu: map_relu, torch.add: map_add},
        call_module_map={},
    )
    # the user's converters were used (their te names), not the defaults
    assert sorted(name for name, _ in mod) == ["main", "te_bias_add", "te_matmul", "te_relu"]
    data = np.random.default_rng(2).standard_normal((1, 128)).astype("float32")
    np.testing.assert_allclose(_run(mod, data), _torch_out(model, data), rtol=1e-5, atol=1e-5)


class Mixed(nn.Module):
    """Operators, methods, broadcasting, scalars, a Linear without bias, two inputs."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 4, bias=False)
        self.scale = nn.Parameter(torch.randn(1, 4))
        self.register_buffer("mix", torch.randn(4, 3))

    def forward(self, x, y):
        h = self.proj(x) * self.scale  # (n, 4) * (1, 4)
        h = torch.nn.functional.relu(h - 0.25) + y  # y: (4,)
        h = h @ self.mix
        return torch.sub(h.relu(), 1.0) * 2.0


def test_default_maps_operators_methods_and_broadcasting():
    torch.manual_seed(2)
    model = Mixed()
    traced = fx.symbolic_trace(model)
    ops = {n.op for n in traced.graph.nodes}
    assert {"call_function", "call_method", "call_module", "get_attr"} <= ops
    mod = from_fx(traced, [("n", 6), (4,)])
    rng = np.random.default_rng(3)
    y = rng.standard_normal(4).astype("float32")
    vm = relax.VirtualMachine(relax.build(mod, target=TARGETS[0]), tilelang.cpu())
    for n in (1, 5):  # a symbolic batch size: one build, several shapes
        x = rng.standard_normal((n, 6)).astype("float32")
        got = vm["main"](x, y)
        assert isinstance(got, tilelang.nd.NDArray) and got.shape == (n, 3)
        np.testing.assert_allclose(got.numpy(), _torch_out(model, x, y), rtol=1e-5, atol=1e-6)


def test_small_model_prints_as_golden(golden):
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]]))
        model[0].bias.copy_(torch.tensor([0.25, -0.5]))
    mod = from_fx(fx.symbolic_trace(model), [("n", 3)])
    text = mod.script()
    golden(text)
    assert structural_equal(tilelang.parse(text), mod)  # the printed module parses back
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]], "float32")
    np.testing.assert_allclose(_run(mod, x), _torch_out(model, x), rtol=1e-6)


def test_map_param_is_a_constant_copy():
    param = nn.Parameter(torch.arange(6.0).reshape(2, 3))
    constant = map_param(param)
    assert isinstance(constant, relax.Constant)
    np.testing.assert_array_equal(constant.data, np.arange(6.0).reshape(2, 3))
    with torch.no_grad():
        param.add_(1.0)
    np.testing.assert_array_equal(constant.data, np.arange(6.0).reshape(2, 3))


class Sigmoid(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)


class TwoOut(nn.Module):
    def forward(self, x):
        return torch.relu(x), x


def test_import_errors_name_the_problem():
    traced = fx.symbolic_trace(make_model())
    with pytest.raises(ArgumentError, match=r"1 inputs \(x\) but 2 input shapes"):
        from_fx(traced, [(1, 784), (1, 784)])
    with pytest.raises(ArgumentError, match="takes a torch.fx.GraphModule"):
        from_fx(make_model(), [(1, 784)])
    with pytest.raises(ArgumentError, match="input size 1.5 is no size"):
        from_fx(traced, [(1.5, 784)])
    with pytest.raises(ArgumentError, match=r"torch.sigmoid \(node sigmoid\) has no converter"):
        from_fx(fx.symbolic_trace(Sigmoid()), [(2, 2)])
    with pytest.raises(ArgumentError, match=r"module 0 \(Tanh\) has no converter"):
        from_fx(fx.symbolic_trace(nn.Sequential(nn.Tanh())), [(2, 2)])
    with pytest.raises(ArgumentError, match="must return one tensor"):
        from_fx(fx.symbolic_trace(TwoOut()), [(2, 2)])
    with pytest.raises(ArgumentError, match="linear: the input features: sizes 700 and 784"):
        from_fx(traced, [(1, 700)])
    with pytest.raises(ArgumentError, match="returned None, not a graph value"):
        from_fx(traced, [(1, 784)], call_module_map={nn.ReLU: lambda bb, m, node, mod: None})
    kw = fx.symbolic_trace(lambda x: torch.add(x, x, alpha=2))
    with pytest.raises(ArgumentError, match="keyword alpha=2 is not supported"):
        from_fx(kw, [(2,)])


def test_default_add_maps_cover_operator_and_torch():
    from tilelang.relax.frontend import default_call_function_map

    defaults = default_call_function_map()
    for target in (operator.add, torch.add, torch.relu, torch.matmul, operator.matmul, "relu"):
        assert target in defaults

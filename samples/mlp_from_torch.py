"""The MLC course's "integration with machine learning frameworks": a PyTorch MLP
(784 -> 128 -> 10), traced with ``torch.fx``, imported with
``relax.frontend.from_fx``, built and run by the virtual machine.

The model gets the weights of ``samples/mlp.py`` and classifies the same image. The
import uses course-style converters written here with tensor expressions
(``map_nn_linear``, ``map_nn_relu``); the built-in default maps give the same
result. Both are checked against PyTorch's own output. Without PyTorch the sample
says so and exits successfully (``pip install torch`` or ``tilelang[torch]``).

    python samples/mlp_from_torch.py [--target c|llvm|python]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import tilelang
from tilelang import relax

try:
    import torch
    from torch import fx, nn
except ImportError:
    torch = None

import mlp  # the sibling sample: image, weights, class names, te operators


def map_nn_linear(bb: relax.BlockBuilder, node_map: dict, node, module):
    """``nn.Linear`` as the course writes it: weights become constants and the
    layer one ``call_tir`` of a te-made prim_func."""
    x = node_map[node.args[0]]
    w = relax.frontend.map_param(module.weight)
    b = relax.frontend.map_param(module.bias)
    return bb.emit_te(mlp.te_linear, x, w, b)


def map_nn_relu(bb: relax.BlockBuilder, node_map: dict, node, module):
    return bb.emit_te(mlp.te_relu, node_map[node.args[0]])


def make_model():
    """The course's PyTorch MLP, holding the weights of samples/mlp.py."""

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear0 = nn.Linear(784, 128, bias=True)
            self.relu = nn.ReLU()
            self.linear1 = nn.Linear(128, 10, bias=True)

        def forward(self, x):
            x = self.linear0(x)
            x = self.relu(x)
            return self.linear1(x)

    model = MLP()
    weights = mlp.make_weights()
    with torch.no_grad():
        for layer, index in ((model.linear0, 0), (model.linear1, 1)):
            layer.weight.copy_(torch.from_numpy(weights[f"w{index}"]))
            layer.bias.copy_(torch.from_numpy(weights[f"b{index}"]))
    return model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=None, help="c, llvm or python")
    parser.add_argument("--print", action="store_true", help="print the imported module")
    args = parser.parse_args(argv)
    if torch is None:
        print("skipped: PyTorch is not installed (pip install torch)")
        return 0
    target = args.target or mlp.default_target()
    model = make_model()
    fx_module = fx.symbolic_trace(model)
    data = mlp.load_image()
    with torch.no_grad():
        expected = model(torch.from_numpy(data)).numpy()
    imports = {
        "course-style maps": {"call_module_map": {nn.Linear: map_nn_linear, nn.ReLU: map_nn_relu}},
        "default maps": {},
    }
    for label, maps in imports.items():
        mod = relax.frontend.from_fx(fx_module, input_shapes=[(1, 784)], **maps)
        if args.print:
            print(mod.script())
        vm = relax.VirtualMachine(relax.build(mod, target=target), tilelang.cpu())
        scores = vm["main"](tilelang.nd.array(data)).numpy()
        np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-6)
        kind = int(np.argmax(scores, axis=1)[0])
        functions = ", ".join(name for name, _ in mod if name != "main")
        print(f"[{target}, {label}: {functions}] predicted class: {kind} ({mlp.CLASSES[kind]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

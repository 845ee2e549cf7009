"""The §5 MLP (784 -> 128 -> 10): per-inference time on the VM next to NumPy.

    python benchmarks/bench_mlp.py [--targets c,llvm] [--number 200]

Weights are bound as constants; each row is the best of 5 repeats of ``number``
inferences (seconds per inference, printed in microseconds). With PyTorch installed,
PyTorch's own time and the model imported from it (``relax.frontend.from_fx``, the
default te maps) are rows too.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import tilelang
from tilelang import relax
from tilelang.errors import BuildError

ROOT = Path(__file__).resolve().parents[1]


def _load_mlp():
    spec = importlib.util.spec_from_file_location("mlp_sample", ROOT / "samples" / "mlp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_time(fn, number: int, repeat: int = 5) -> float:
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _torch_rows(data, weights, args) -> list:
    """PyTorch eager, and the VM running the model imported from it."""
    try:
        import torch
    except ImportError:
        print("skip torch rows: PyTorch is not installed")
        return []
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    )
    with torch.no_grad():
        for layer, index in ((model[0], 0), (model[2], 1)):
            layer.weight.copy_(torch.from_numpy(weights[f"w{index}"]))
            layer.bias.copy_(torch.from_numpy(weights[f"b{index}"]))
    x = torch.from_numpy(data)

    def eager():
        with torch.no_grad():
            return model(x)

    rows = [("torch eager", best_time(eager, args.number))]
    mod = relax.frontend.from_fx(torch.fx.symbolic_trace(model), [data.shape])
    for target in args.targets.split(","):
        try:
            run = relax.VirtualMachine(relax.build(mod, target=target), tilelang.cpu())["main"]
        except BuildError as error:
            print(f"skip from_fx {target}: {error}")
            continue
        rows.append((f"vm[{target}, from_fx]", best_time(lambda run=run: run(data), args.number)))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="MLP per-inference time vs NumPy")
    parser.add_argument("--targets", default="c,llvm")
    parser.add_argument("--number", type=int, default=200)
    args = parser.parse_args(argv)
    mlp = _load_mlp()
    data, weights = mlp.load_image(), mlp.make_weights()
    rows = [("numpy_mlp", best_time(lambda: mlp.numpy_mlp(data, **weights), args.number))]
    for target in args.targets.split(","):
        for label, linear in (("prim_funcs", "linear0"), ("env.linear", "env.linear")):
            try:
                bound = relax.bind_params(mlp.mlp_module(linear), weights)
                vm = relax.VirtualMachine(relax.build(bound, target=target), tilelang.cpu())
            except BuildError as error:
                print(f"skip {target}: {error}")
                break
            run = vm["main"]
            seconds = best_time(lambda run=run: run(data), args.number)
            rows.append((f"vm[{target}, {label}]", seconds))
    rows += _torch_rows(data, weights, args)
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        ratio = seconds / rows[0][1]
        print(f"{name:<{width}}  {seconds * 1e6:10.1f} us/inference  ({ratio:6.2f}x numpy)")


if __name__ == "__main__":
    main()

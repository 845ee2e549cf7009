"""The §5 MLP (784 -> 128 -> 10): per-inference time on the VM next to NumPy.

    python benchmarks/bench_mlp.py [--targets c,llvm] [--number 200]

Weights are bound as constants; each row is the best of 5 repeats of ``number``
inferences (seconds per inference, printed in microseconds). With PyTorch installed,
PyTorch's own time and the model imported from it (``relax.frontend.from_fx``, the
default te maps) are rows too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import tilelang
from tilelang import relax
from tilelang.errors import BuildError

# the samples are the single definition of the model: samples/mlp.py (image, weights,
# relax module, NumPy reference) and samples/mlp_from_torch.py (the PyTorch model)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "samples"))
import mlp  # noqa: E402


def best_time(fn, number: int, repeat: int = 5) -> float:
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _torch_rows(data, args) -> list:
    """PyTorch eager, and the VM running the model imported from it."""
    try:
        import torch
    except ImportError:
        print("skip torch rows: PyTorch is not installed")
        return []
    from mlp_from_torch import make_model

    model = make_model()
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
    rows += _torch_rows(data, args)
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        ratio = seconds / rows[0][1]
        print(f"{name:<{width}}  {seconds * 1e6:10.1f} us/inference  ({ratio:6.2f}x numpy)")


if __name__ == "__main__":
    main()

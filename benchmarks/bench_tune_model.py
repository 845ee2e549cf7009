"""Whole-model tuning: SEED §5's MLP (784 -> 128 -> 10) and a small conv net, each
built by default and after ``tune_relax`` with one shared budget, timed on the VM next
to NumPy and PyTorch eager, in one run.

    python benchmarks/bench_tune_model.py [--trials 32] [--models mlp convnet]
                                          [--number 50] [--confirm 2] [--work-dir DIR]
                                          [--plot PREFIX]

The models are written with tensor expressions (``bb.emit_te``) and their weights
bound as constants, so every tensor function has constant shapes and is a task; the
conv net's two 16 -> 16 convolutions (and their ReLUs) are structurally equal, so it
has fewer tasks than calls. Prints per model the task table and, per row, seconds per
inference and the ratio to NumPy. Prints the load average: on a shared machine the
figures move with it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import median_time

import tilelang
from tilelang import relax, te, topi
from tilelang.ir.op import if_then_else
from tilelang.tune import compile_relax, extract_tasks, tune_relax

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "samples"))
import mlp  # noqa: E402  (SEED §5: image, weights, te_linear, te_relu, numpy_mlp)


def mlp_model():
    """SEED §5's MLP with static shapes; returns (module, inputs, NumPy, torch)."""
    data, w = mlp.load_image(), mlp.make_weights()
    x = relax.Var("x", relax.TensorStructInfo(data.shape, "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit_te(mlp.te_linear, x, relax.const(w["w0"]), relax.const(w["b0"]))
            h = bb.emit_te(mlp.te_relu, h)
            h = bb.emit_te(mlp.te_linear, h, relax.const(w["w1"]), relax.const(w["b1"]))
            out = bb.emit_output(h)
        bb.emit_func_output(out)

    def torch_fn(torch):
        tw = {k: torch.from_numpy(v) for k, v in w.items()}
        t = torch.from_numpy(data)
        linear = torch.nn.functional.linear
        return lambda: linear(torch.relu(linear(t, tw["w0"], tw["b0"])), tw["w1"], tw["b1"])

    return bb.get(), [data], lambda: mlp.numpy_mlp(data, **w), torch_fn


def te_conv3x3(x, w):
    """3x3 convolution, stride 1, padding 1, NCHW/OIHW."""
    n, c, h, wd = (int(d) for d in x.shape)
    f = int(w.shape[0])
    pad = te.compute(
        (n, c, h + 2, wd + 2),
        lambda b, ci, i, j: if_then_else(
            (i >= 1) & (i <= h) & (j >= 1) & (j <= wd), x[b, ci, i - 1, j - 1], 0.0
        ),
        name="pad",
    )
    rc, ry, rx = (
        te.reduce_axis((0, c), "rc"),
        te.reduce_axis((0, 3), "ry"),
        te.reduce_axis((0, 3), "rx"),
    )
    return te.compute(
        (n, f, h, wd),
        lambda b, fo, i, j: te.sum(
            pad[b, rc, i + ry.var, j + rx.var] * w[fo, rc, ry, rx], axis=[rc, ry, rx]
        ),
        name="conv",
    )


def np_conv3x3(x, w):
    """The same convolution in NumPy as im2col + one matmul (batch 1)."""
    h, wd = x.shape[2:]
    padded = np.pad(x[0], ((0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    cols = windows.transpose(0, 3, 4, 1, 2).reshape(-1, h * wd)  # (c*9, h*w)
    return (w.reshape(w.shape[0], -1) @ cols).reshape(1, -1, h, wd)


def convnet_model():
    """conv 3->16, relu, conv 16->16, relu, conv 16->16, relu, dense to 10."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((1, 3, 32, 32)).astype("float32")
    w0 = (rng.standard_normal((16, 3, 3, 3)) * 0.3).astype("float32")
    w1, w2 = ((rng.standard_normal((16, 16, 3, 3)) * 0.1).astype("float32") for _ in range(2))
    wd = (rng.standard_normal((10, 16 * 32 * 32)) * 0.01).astype("float32")
    x = relax.Var("x", relax.TensorStructInfo(data.shape, "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            h = x
            for w in (w0, w1, w2):
                h = bb.emit_te(topi.nn.relu, bb.emit_te(te_conv3x3, h, relax.const(w)))
            flat = bb.emit_te(topi.reshape, h, (1, 16 * 32 * 32))
            out = bb.emit_output(bb.emit_te(topi.nn.dense, flat, relax.const(wd)))
        bb.emit_func_output(out)

    def numpy_fn():
        h = data
        for w in (w0, w1, w2):
            h = np.maximum(np_conv3x3(h, w), 0)
        return h.reshape(1, -1) @ wd.T

    def torch_fn(torch):
        tw = [torch.from_numpy(w) for w in (w0, w1, w2)]
        t, twd = torch.from_numpy(data), torch.from_numpy(wd)
        conv = torch.nn.functional.conv2d

        def run():
            h = t
            for w in tw:
                h = torch.relu(conv(h, w, padding=1))
            return torch.flatten(h, 1) @ twd.T

        return run

    return bb.get(), [data], numpy_fn, torch_fn


MODELS = {"mlp": mlp_model, "convnet": convnet_model}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--number", type=int, default=50)
    parser.add_argument("--confirm", type=int, default=2, help="finalists re-timed per task")
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--plot", default=None, help="PNG prefix for per-task curves")
    args = parser.parse_args()
    work_root = Path(args.work_dir or tempfile.mkdtemp(prefix="bench-tune-model-"))
    print(f"load average at start: {os.getloadavg()}; {os.cpu_count()} cores")
    try:
        import torch
    except ImportError:
        torch = None
    for name in args.models:
        mod, inputs, numpy_fn, torch_fn = MODELS[name]()
        tasks = extract_tasks(mod)
        calls = sum(t.weight for t in tasks)
        print(f"\n== {name}: {len(tasks)} tasks for {calls} calls, {args.trials} trials")
        start = time.perf_counter()
        plot = f"{args.plot}_{name}.png" if args.plot else None
        result = tune_relax(mod, None, "llvm", work_root / name, args.trials,
                            plot=plot, progress=False, confirm=args.confirm)  # fmt: skip
        spent = time.perf_counter() - start
        print(result.table)
        expected = numpy_fn()
        rows = [("numpy", median_time(numpy_fn, args.number))]
        for label, ex in (("vm default build", relax.build(mod, "llvm")),
                          ("vm tuned", compile_relax(result.database, mod, "llvm"))):  # fmt: skip
            run = relax.VirtualMachine(ex, tilelang.cpu())["main"]
            got = run(*inputs).numpy()
            np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3)
            timed = median_time(lambda run=run, inputs=inputs: run(*inputs), args.number)
            rows.append((label, timed))
        if torch is not None:
            with torch.no_grad():
                rows.append(("torch eager", median_time(torch_fn(torch), args.number)))
        print(f"tuning took {spent:.0f} s; load average now: {os.getloadavg()}")
        for label, seconds in rows:
            ratio = seconds / rows[0][1]
            print(f"{label:<18} {seconds * 1e6:10.1f} us/inference  ({ratio:5.2f}x numpy)")


if __name__ == "__main__":
    main()

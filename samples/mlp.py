"""The two-layer MLP of the MLC course (784 -> 128 -> 10) as a graph of tensor functions.

The module is the one of SEED_PROGRAMS §5: prim_funcs ``linear0`` and ``relu0`` (made
here with tensor expressions) and a graph function ``main`` that calls them in
destination-passing style. It runs twice on the image in ``samples/data/image.npy``
with deterministic synthetic weights: once with every call a compiled prim_func, once
with ``linear`` replaced by a NumPy library function registered as ``env.linear``.
Both print the predicted class and agree with plain NumPy.

    python samples/mlp.py [--target c|llvm|python]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import tilelang
from tilelang import relax, te
from tilelang.errors import BuildError
from tilelang.ir import IRModule, Var
from tilelang.relax import TensorStructInfo as Tensor

IMAGE = Path(__file__).resolve().parent / "data" / "image.npy"
CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
           "Sneaker", "Bag", "Ankle boot")  # fmt: skip


def make_image() -> np.ndarray:
    """The shipped input image: a deterministic 28x28 trouser-like silhouette."""
    y, x = np.mgrid[0:28, 0:28].astype("float32")
    img = np.zeros((28, 28), "float32")
    legs = ((np.abs(x - 10) < 3.5) | (np.abs(x - 17) < 3.5)) & (y > 10) & (y < 26)
    waist = (x > 6) & (x < 21) & (y > 3) & (y <= 10)
    img[legs | waist] = 0.6 + 0.4 * (y[legs | waist] / 27.0)
    noise = np.random.default_rng(2024).standard_normal(img.shape).astype("float32")
    return np.clip(img + 0.03 * noise * (img > 0), 0, 1).astype("float32")


def load_image() -> np.ndarray:
    """The input as the model takes it: shape (1, 784), float32."""
    return np.load(IMAGE).reshape(1, 784).astype("float32")


def make_weights(seed: int = 0) -> dict:
    """Deterministic synthetic weights (scaled like a trained layer's)."""
    rng = np.random.default_rng(seed)

    def layer(rows, cols):
        w = rng.standard_normal((rows, cols)).astype("float32") / np.float32(np.sqrt(cols))
        return w, (0.1 * rng.standard_normal(rows)).astype("float32")

    w0, b0 = layer(128, 784)
    w1, b1 = layer(10, 128)
    return {"w0": w0, "b0": b0, "w1": w1, "b1": b1}


def numpy_mlp(data, w0, b0, w1, b1) -> np.ndarray:
    """The reference: the same model in NumPy."""
    return np.maximum(data @ w0.T + b0, 0) @ w1.T + b1


# ------------------------------------------------------------------ the tensor functions


def te_linear(X, W, B):
    """``Z = X @ W.T + B`` as tensor expressions (``Y`` becomes an alloc_buffer)."""
    k = te.reduce_axis((0, X.shape[1]), "k")
    Y = te.compute((X.shape[0], W.shape[0]),
                   lambda i, j: te.sum(X[i, k] * W[j, k], axis=k), name="Y")  # fmt: skip
    return te.compute(Y.shape, lambda i, j: Y[i, j] + B[j], name="Z")


def te_relu(X):
    return te.compute(X.shape, lambda *i: te.max(X(*i), 0.0), name="Y")


def linear0():
    """§5's ``linear0``: symbolic m (inputs) and n (outputs)."""
    m, n = Var("m", "int64"), Var("n", "int64")
    X = te.placeholder((1, m), "float32", "X")
    W = te.placeholder((n, m), "float32", "W")
    B = te.placeholder((n,), "float32", "B")
    return te.create_prim_func([X, W, B, te_linear(X, W, B)], name="linear0")


def relu0():
    n = Var("n", "int64")
    X = te.placeholder((1, n), "float32", "X")
    return te.create_prim_func([X, te_relu(X)], name="relu0")


def env_linear(x, w, b, out):
    """The library version of ``linear0``: NumPy, called with the output last."""
    np.add(x @ w.T, b, out=out)


tilelang.register_func("env.linear", env_linear, override=True)


# ------------------------------------------------------------------------- the graph


def mlp_module(linear: str = "linear0") -> IRModule:
    """§5's module; ``linear`` names the packed function of both linear layers
    (``"linear0"``, the prim_func, or ``"env.linear"``, the library function)."""
    m, n, k = Var("m", "int64"), Var("n", "int64"), Var("k", "int64")
    x = relax.Var("x", Tensor((1, m), "float32"))
    w0, b0 = relax.Var("w0", Tensor((n, m), "float32")), relax.Var("b0", Tensor((n,), "float32"))
    w1, b1 = relax.Var("w1", Tensor((k, n), "float32")), relax.Var("b1", Tensor((k,), "float32"))
    bb = relax.BlockBuilder()
    bb.add_func(linear0(), "linear0")
    bb.add_func(relu0(), "relu0")
    with bb.function("main", [x, w0, b0, w1, b1]):
        with bb.dataflow():
            lv0 = bb.emit(relax.call_dps_packed(linear, (x, w0, b0), Tensor((1, n), "float32")))
            lv1 = bb.emit(relax.call_dps_packed("relu0", (lv0,), Tensor((1, n), "float32")))
            call = relax.call_dps_packed(linear, (lv1, w1, b1), Tensor((1, k), "float32"))
            out = bb.emit_output(call, name_hint="out")
        bb.emit_func_output(out)
    mod = bb.get()
    if linear != "linear0":  # the library takes linear0's place
        mod = IRModule({name: f for name, f in mod if name != "linear0"})
    return mod


def default_target() -> str:
    """The first CPU target whose backend is available here."""
    from tilelang.runtime import get_backend

    for kind in ("c", "llvm", "python"):
        try:
            get_backend(kind)
        except BuildError:
            continue
        return kind
    raise BuildError("no CPU backend is available")


def predict(mod: IRModule, target: str, data: np.ndarray, weights: dict) -> np.ndarray:
    """Builds ``mod`` with the weights bound as constants and runs it on ``data``."""
    bound = relax.bind_params(mod, weights)
    vm = relax.VirtualMachine(relax.build(bound, target=target), tilelang.cpu())
    return vm["main"](tilelang.nd.array(data)).numpy()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=None, help="c, llvm or python")
    args = parser.parse_args(argv)
    target = args.target or default_target()
    data, weights = load_image(), make_weights()
    reference = numpy_mlp(data, **weights)
    for label, linear in (("prim_funcs", "linear0"), ("env.linear library", "env.linear")):
        scores = predict(mlp_module(linear), target, data, weights)
        np.testing.assert_allclose(scores, reference, rtol=1e-5, atol=1e-5)
        kind = int(np.argmax(scores, axis=1)[0])
        print(f"[{target}, {label}] predicted class: {kind} ({CLASSES[kind]})")


if __name__ == "__main__":
    main()

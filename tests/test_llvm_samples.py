"""The .tir samples under the llvm target: against the Python reference backend where
it is fast enough, against NumPy for the matrix multiplications."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.runtime.args import eval_int

SAMPLES = Path(__file__).resolve().parents[1] / "samples"

# samples small enough for the Python oracle, with the scalar arguments they take
ORACLE = {
    "loop_kinds": {"n": 1},
    "strided_let": {"chunk_n": 5, "chunk_c": 7},
    "window_sum": {},
    "window_sum_gpu": {},
    "linear0": {},
}

# sample -> NumPy meaning of (A, B) -> C
MATMULS = {
    "mm_relu": lambda a, b: np.maximum(a @ b, 0),
    "mm_relu_decomposed": lambda a, b: np.maximum(a @ b, 0),
    "mm_relu_scheduled": lambda a, b: np.maximum(a @ b, 0),
    "matmul_two_blocks": lambda a, b: a @ b.T,
    "blocked_matmul_gpu": lambda a, b: a @ b,
}


def random_arguments(func, scalars, rng):
    """Arrays for every buffer (symbolic sizes bound to small distinct values) and the
    given scalars."""
    sizes = {var: value for var, value in zip(func.attrs.get("tl.size_vars", ()), (7, 5, 3, 4))}
    args = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            args.append(scalars[param.name])
            continue
        shape = tuple(eval_int(extent, sizes) for extent in buffer.shape)
        args.append(rng.standard_normal(shape).astype(buffer.dtype))
    return args


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_sample_matches_the_python_backend(name):
    mod = tilelang.parse_file(SAMPLES / f"{name}.tir")
    ((fname, func),) = tilelang.lower(mod).functions.items()
    rng = np.random.default_rng(7)
    args = random_arguments(func, ORACLE[name], rng)
    outputs = []
    for target in ("python", "llvm -num-cores=2"):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        tilelang.build(mod, target)[fname](*copies)
        outputs.append(copies)
    for expected, actual in zip(*outputs):
        if isinstance(expected, np.ndarray):
            np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MATMULS))
def test_matmul_sample_matches_numpy(name):
    mod = tilelang.parse_file(SAMPLES / f"{name}.tir")
    ((fname, func),) = mod.functions.items()
    n = func.buffer_map[func.params[0]].shape[0].value
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((n, n), "float32"), rng.standard_normal((n, n), "float32")
    c = np.zeros((n, n), "float32")
    tilelang.build(mod, "llvm")[fname](a, b, c)
    np.testing.assert_allclose(c, MATMULS[name](a, b), rtol=1e-4, atol=1e-3)


def test_linear0_checks_inconsistent_sizes_before_running():
    lib = tilelang.build(tilelang.parse_file(SAMPLES / "linear0.tir"), "llvm")
    x, w = np.ones((1, 6), "float32"), np.ones((4, 5), "float32")
    with pytest.raises(tilelang.ArgumentError):
        lib["linear0"](x, w, np.ones(4, "float32"), np.zeros((1, 4), "float32"))

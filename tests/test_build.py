"""tilelang.build end to end: .tir text -> parse -> lower -> C -> NumPy-checked results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def test_linear0_c_source(golden):
    # the C of the program as written (the default schedule's output is tested in
    # tests/test_schedule_rules.py)
    mod = tilelang.parse_file(SAMPLES / "linear0.tir")
    golden(tilelang.build(mod, target="c", auto_schedule=False).get_source())


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_linear0_with_symbolic_shapes(target):
    lib = tilelang.build(tilelang.parse_file(SAMPLES / "linear0.tir"), target=target)
    rng = np.random.default_rng(1)
    for n, m in ((1, 1), (5, 3), (17, 64), (128, 784)):
        x = rng.standard_normal((1, m), dtype="float32")
        w = rng.standard_normal((n, m), dtype="float32")
        b = rng.standard_normal((n,), dtype="float32")
        z = np.zeros((1, n), "float32")
        lib["linear0"](x, w, b, z)
        np.testing.assert_allclose(z, x @ w.T + b, rtol=1e-4, atol=1e-4)
    with pytest.raises(tilelang.ArgumentError, match="argument 'b' \\(3rd\\)"):
        lib["linear0"](x, w, np.zeros(n + 1, "float32"), z)


@pytest.mark.parametrize("target", ["c", "llvm"])
@pytest.mark.parametrize("path", ["mm_relu.tir", "mm_relu_scheduled.tir"])
def test_mm_relu_forms_match_numpy(path, target):
    lib = tilelang.build(tilelang.parse_file(BENCHMARKS / path), target=target)
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((128, 128), dtype="float32") for _ in range(2))
    c_nd = tilelang.nd.empty((128, 128), "float32")
    lib["mm_relu"](tilelang.nd.array(a), tilelang.nd.array(b), c_nd)
    np.testing.assert_allclose(c_nd.numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    timer = lib.time_evaluator("mm_relu", tilelang.cpu(), number=2, repeat=2)
    assert timer(a, b, c_nd).mean > 0


def test_tiled_matmul_source(golden):
    golden(tilelang.build(tilelang.parse_file(BENCHMARKS / "matmul_tiled.tir"), "c").get_source())


def test_build_rejects_non_modules():
    with pytest.raises(tilelang.BuildError, match="IRModule or a PrimFunc"):
        tilelang.build("not a module", "c")


def test_argument_errors_use_the_names_written_in_the_source():
    lib = tilelang.build(tilelang.parse_file(SAMPLES / "mm_relu.tir"), target="c")
    a, c = np.zeros((128, 128), "float32"), np.zeros((128, 128), "float32")
    with pytest.raises(tilelang.ArgumentError, match=r"^argument 'B' \(2nd\): expected shape"):
        lib["mm_relu"](a, np.zeros((128, 64), "float32"), c)


def test_tilelang_build_stays_the_function_after_importing_its_module():
    import tilelang.runtime.build  # noqa: F401 - sets the package attribute to the module

    assert callable(tilelang.build) and tilelang.build.__name__ == "build"

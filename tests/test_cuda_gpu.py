"""CUDA backend on a GPU (skipped without one): SEED §6 programs and the shared-memory
tiled matmul against NumPy through every launcher installed (pycuda, cuda-python,
CuPy), device arrays used in place, and time_evaluator with CUDA events."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import load_sample

import tilelang
from tilelang import tir

schedules = load_sample("cuda_matmul")

pytestmark = pytest.mark.gpu


def _launchers() -> list[str]:
    try:
        from tilelang.backends.cuda import available_launchers

        return available_launchers() or ["none"]
    except Exception:
        return ["none"]


@pytest.fixture(params=_launchers())
def launcher(request, monkeypatch):
    """Each test runs once per launcher that works here."""
    from tilelang.backends.cuda import get_launcher

    if request.param == "none":
        pytest.skip("no CUDA launcher (pycuda, cuda-python or CuPy) works here")
    monkeypatch.setenv("TILELANG_CUDA_LAUNCHER", request.param)
    return get_launcher(request.param)


@pytest.fixture(scope="module")
def libs():
    """The three programs, built once."""
    return {
        "window": tilelang.build(schedules.window_sum_shared().mod, target="cuda"),
        "blocked": tilelang.build(
            schedules.blocking(tir.Schedule(schedules.matmul(1024))).mod, target="cuda"
        ),
        "tiled": tilelang.build(
            schedules.tiled_shared(tir.Schedule(schedules.matmul(1024))).mod, target="cuda"
        ),
    }


def _matrices(n=1024, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, n), "float32"), rng.random((n, n), "float32")


def test_window_sum(libs, launcher):
    a = np.random.default_rng(1).random(1027, dtype="float32")
    b = np.zeros(1024, "float32")
    libs["window"]["main"](a, b)
    np.testing.assert_allclose(b, a[:1024] + a[1:1025] + a[2:1026], rtol=1e-6)


@pytest.mark.parametrize("name", ["blocked", "tiled"])
def test_matmul(libs, launcher, name):
    a, b = _matrices()
    c = np.full((1024, 1024), np.nan, "float32")
    libs[name]["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


def test_symbolic_sizes_and_scalars(launcher):
    text = (Path(__file__).parent / "test_cuda_runtime.py").read_text()
    program = text.split('SYMBOLIC = """')[1].split('"""')[0]
    lib = tilelang.build(tilelang.parse(program), target="cuda")
    a = np.arange(1000, dtype="float32")
    b = np.zeros(1000, "float32")
    lib["main"](a, b, 3)
    np.testing.assert_array_equal(b, a * 3)


def test_cupy_arrays_in_place(libs, launcher):
    cupy = pytest.importorskip("cupy")
    a, b = _matrices(seed=2)
    da, db = cupy.asarray(a), cupy.asarray(b)
    dc = cupy.zeros((1024, 1024), dtype="float32")
    libs["tiled"]["main"](da, db, dc)
    cupy.cuda.runtime.deviceSynchronize()
    np.testing.assert_allclose(cupy.asnumpy(dc), a @ b, rtol=1e-4, atol=1e-3)


def test_pycuda_arrays_in_place(libs, launcher):
    pytest.importorskip("pycuda")
    import pycuda.gpuarray as gpuarray

    if launcher.name != "pycuda":
        pytest.skip("pycuda arrays live in pycuda's context")
    a, b = _matrices(seed=3)
    with launcher.activate():
        da, db = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
        dc = gpuarray.zeros((1024, 1024), np.float32)
    libs["blocked"]["main"](da, db, dc)
    with launcher.activate():
        result = dc.get()
    np.testing.assert_allclose(result, a @ b, rtol=1e-4, atol=1e-3)


def test_torch_tensors_in_place(libs, launcher):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    a, b = _matrices(seed=4)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tc = torch.zeros((1024, 1024), dtype=torch.float32, device="cuda")
    libs["tiled"]["main"](ta, tb, tc)
    torch.cuda.synchronize()
    np.testing.assert_allclose(tc.cpu().numpy(), a @ b, rtol=1e-4, atol=1e-3)


def test_time_evaluator(libs, launcher):
    a, b = _matrices(seed=5)
    c = np.zeros((1024, 1024), "float32")
    timer = libs["tiled"].time_evaluator("main", tilelang.cuda(), number=3, repeat=2)
    result = timer(a, b, c)
    assert len(result.results) == 2 and all(0 < t < 1.0 for t in result.results)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)  # results copied back
    gflops = 2 * 1024**3 / result.mean / 1e9
    assert gflops > 100  # a GPU, not a CPU fallback

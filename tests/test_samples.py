"""Every sample runs: each ``samples/*.py`` as a script, each ``samples/**/*.tir``
through ``tilec --run --check`` (new samples are picked up automatically)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
PY_SAMPLES = sorted(SAMPLES.rglob("*.py"))
TIR_SAMPLES = sorted(SAMPLES.rglob("*.tir"))


def _run(args, tmp_path):
    env = {**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=SAMPLES)


def test_samples_exist():
    assert PY_SAMPLES, f"no Python samples under {SAMPLES}"


@pytest.mark.parametrize("sample", PY_SAMPLES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_python_sample_runs(sample, tmp_path):
    result = _run([sys.executable, str(sample)], tmp_path)
    assert result.returncode == 0, f"{sample.name} failed:\n{result.stdout}\n{result.stderr}"


#: what a sample needs to run: values for its symbolic sizes and scalar parameters,
#: which function (one invocation per list)
TIR_ARGS = {
    "linear0.tir": [["--shape", "m=64,n=32"]],
    "loop_kinds.tir": [["--shape", "n=3"]],
    "strided_let.tir": [["--shape", "chunk_n=5,chunk_c=7"]],
    "mlp.tir": [
        ["--func", "linear0", "--shape", "m=64,n=32"],
        ["--func", "relu0", "--shape", "n=64"],
    ],
    "tmm16_intrin.tir": [["--func", "tmm16_desc"]],
}
#: samples that call an extern kernel no backend here provides: generated C only
EMIT_ONLY = {"tmm16_intrin.tir": [["--func", "tmm16_impl"]]}


def _invocations(sample: Path) -> list[list[str]]:
    """tilec arguments for each run of ``sample``. Programs too big for the pure-Python
    oracle (1024^3 matmuls) are built with LLVM and checked against the C backend
    instead: two independent backends agreeing; the rest are built with C and checked
    against the Python reference."""
    from tilelang.cli_run import SLOW_REFERENCE_WORK, loop_work
    from tilelang.ir import PrimFunc
    from tilelang.parser import parse_file

    module = parse_file(sample)
    runs = []
    for extra in TIR_ARGS.get(sample.name, [[]]):
        name = extra[extra.index("--func") + 1] if "--func" in extra else None
        funcs = [f for k, f in module.functions.items() if isinstance(f, PrimFunc)]
        func = module[name] if name else funcs[0]
        heavy = loop_work(func, {}) > SLOW_REFERENCE_WORK
        target = ["--target", "llvm", "--reference", "c"] if heavy else ["--target", "c"]
        runs.append([*extra, *target, "--run", "--check"])
    runs += [[*extra, "--emit", "c"] for extra in EMIT_ONLY.get(sample.name, [])]
    return runs


@pytest.mark.parametrize("sample", TIR_SAMPLES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_tir_sample_runs_and_checks(sample, tmp_path):
    for extra in _invocations(sample):
        command = [sys.executable, "-m", "tilelang.cli", str(sample), *extra]
        result = _run(command, tmp_path)
        assert result.returncode == 0, (
            f"tilec {sample.name} {' '.join(extra)} failed:\n{result.stdout}\n{result.stderr}"
        )
        if "--check" in extra:
            assert "\ncheck: " in result.stdout and "MISMATCH" not in result.stdout, result.stdout


GPU_SAMPLES = [s for s in TIR_SAMPLES if "T.thread_binding" in s.read_text()]


@pytest.mark.gpu
@pytest.mark.parametrize("sample", GPU_SAMPLES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_gpu_sample_runs_on_cuda(sample, tmp_path):
    """Thread-bound samples also run above on the CPU backends (thread loops run
    sequentially there); with a GPU they run as CUDA kernels, checked against C."""
    command = [sys.executable, "-m", "tilelang.cli", str(sample), "--target", "cuda"]
    result = _run([*command, "--run", "--check", "--reference", "c"], tmp_path)
    assert result.returncode == 0, f"{sample.name} failed:\n{result.stdout}\n{result.stderr}"

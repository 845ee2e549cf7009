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


def _cli_runs_programs() -> bool:
    try:
        from tilelang import cli
    except ImportError:
        return False
    return "--check" in cli.make_argument_parser().format_help()


def test_samples_exist():
    assert PY_SAMPLES, f"no Python samples under {SAMPLES}"


@pytest.mark.parametrize("sample", PY_SAMPLES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_python_sample_runs(sample, tmp_path):
    result = _run([sys.executable, str(sample)], tmp_path)
    assert result.returncode == 0, f"{sample.name} failed:\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("sample", TIR_SAMPLES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_tir_sample_runs_and_checks(sample, tmp_path):
    if not _cli_runs_programs():
        pytest.skip("tilec has no --run/--check yet")
    command = [
        sys.executable,
        "-m",
        "tilelang.cli",
        str(sample),
        "--target",
        "c",
        "--run",
        "--check",
    ]
    result = _run(command, tmp_path)
    assert result.returncode == 0, f"{sample.name} failed:\n{result.stdout}\n{result.stderr}"

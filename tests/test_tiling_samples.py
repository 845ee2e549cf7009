"""Every samples/tiling_*.py runs as a script and exits 0 (each checks its own results
against NumPy and exits non-zero on a mismatch)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("tiling_*.py"))


def test_the_three_tiling_samples_exist():
    names = {path.stem for path in SAMPLES}
    assert {"tiling_pingpong", "tiling_matmul", "tiling_strided"} <= names


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_sample_runs(path):
    result = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok" in result.stdout and "MISMATCH" not in result.stdout

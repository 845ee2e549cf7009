"""The machine's measured fp32 FMA peak (see fma_peak.c), int8 VNNI peak (see
vnni_peak.c) and bfloat16 peak (see bf16_peak.c), for "fraction of peak" rows.

python benchmarks/fma_peak.py          # prints the per-core and all-core figures
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("fma_peak.c")
VNNI_SOURCE = Path(__file__).with_name("vnni_peak.c")
BF16_SOURCE = Path(__file__).with_name("bf16_peak.c")


def measured_peak_gflops(cores: int | None = None) -> float:
    """GFLOP/s of ``cores`` copies of the FMA loop running at once (all cores by default)."""
    return _run_loop(SOURCE, cores)


def measured_int8_peak_gops(cores: int | None = None) -> float:
    """Giga int8 ops/s (multiply-add = 2) of ``cores`` copies of the VNNI loop; 0 when
    the CPU has no AVX-512 VNNI."""
    return _run_loop(VNNI_SOURCE, cores)


def measured_bf16_peak_gflops(cores: int | None = None) -> float:
    """GFLOP/s (product plus addition = 2) of ``cores`` copies of the vdpbf16ps loop;
    0 when the CPU has no AVX-512 BF16."""
    return _run_loop(BF16_SOURCE, cores)


def _run_loop(source: Path, cores: int | None) -> float:
    cores = cores or os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / source.stem
        subprocess.run(["cc", "-O2", "-march=native", str(source), "-o", str(binary)], check=True)
        runs = [
            subprocess.Popen([str(binary)], stdout=subprocess.PIPE, text=True) for _ in range(cores)
        ]
        return sum(float(run.communicate()[0].split()[0]) for run in runs)


if __name__ == "__main__":
    one = measured_peak_gflops(1)
    every = measured_peak_gflops()
    print(f"fp32 FMA peak: {one:.1f} GFLOP/s on one core, {every:.1f} on {os.cpu_count()} cores")
    int8 = measured_int8_peak_gops(1)
    print(f"int8 VNNI peak: {int8:.1f} GOP/s on one core" if int8 else "int8 VNNI: not available")
    bf16 = measured_bf16_peak_gflops(1)
    print(f"bf16 peak: {bf16:.1f} GFLOP/s on one core" if bf16 else "AVX-512 BF16: not available")

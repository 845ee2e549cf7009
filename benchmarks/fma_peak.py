"""The machine's measured fp32 FMA peak (see fma_peak.c), for "fraction of peak" rows.

python benchmarks/fma_peak.py          # prints the per-core and all-core figures
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("fma_peak.c")


def measured_peak_gflops(cores: int | None = None) -> float:
    """GFLOP/s of ``cores`` copies of the FMA loop running at once (all cores by default)."""
    cores = cores or os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "fma_peak"
        subprocess.run(["cc", "-O2", "-march=native", str(SOURCE), "-o", str(binary)], check=True)
        runs = [
            subprocess.Popen([str(binary)], stdout=subprocess.PIPE, text=True) for _ in range(cores)
        ]
        return sum(float(run.communicate()[0].split()[0]) for run in runs)


if __name__ == "__main__":
    one = measured_peak_gflops(1)
    every = measured_peak_gflops()
    print(f"fp32 FMA peak: {one:.1f} GFLOP/s on one core, {every:.1f} on {os.cpu_count()} cores")

"""Strided loops with a tail length, as the tiling notes wish for them.

``for n in T.serial(0, 16, 5)`` visits n = 0, 5, 10, 15; the let binding
``length = T.min(5, 16 - n)`` is the size of each chunk, 1 for the ragged tail. The
same loop is what ``segment_by_chunk`` produces for a symbolic size.

Run: ``python samples/tiling_strided.py`` (runs the .tir text on every backend it can
build and compares with the NumPy meaning).
"""

from __future__ import annotations

import sys

import numpy as np

import tilelang
from tilelang.errors import BuildError

STRIDED_TIR = """
@T.prim_func
def strided(A: T.Buffer((16,), "int32")):
    for n in T.serial(0, 16, 5):
        length: T.int32 = T.min(5, 16 - n)
        for i in range(length):
            A[n + i] = length * 100 + n
"""


def expected() -> np.ndarray:
    a = np.zeros(16, dtype="int32")
    for n in range(0, 16, 5):
        length = min(5, 16 - n)
        a[n : n + length] = length * 100 + n
    return a


def main() -> int:
    mod = tilelang.parse(STRIDED_TIR)
    failures = 0
    for target in ("python", "c", "llvm"):
        try:
            lib = tilelang.build(mod, target=target)
        except BuildError as exc:  # e.g. llvmlite missing on this machine
            print(f"{target:7s} skipped: {exc}")
            continue
        a = np.full(16, -1, dtype="int32")
        lib["strided"](a)
        ok = np.array_equal(a, expected())
        failures += not ok
        print(f"{target:7s} {a.tolist()} {'ok' if ok else 'MISMATCH'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

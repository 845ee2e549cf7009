"""Measuring candidates in the main process, one at a time, against the untransformed
program.

Every candidate runs on the same random inputs as the original program (built once
for the same target); a candidate whose buffers differ from the original's beyond a
tolerance is rejected before it is timed. Timing uses ``Module.time_evaluator``'s
loop, with the wall clock or, for one-thread code (``clock="cpu"``), the process's CPU
time: on a shared machine the wall clock adds every preemption to the candidate being
timed (trials of one run moved by 2-3x on this 2-core machine under three users' load),
the CPU time of one thread does not.
"""

from __future__ import annotations

import time

import numpy as np

import tilelang
from tilelang.errors import ArgumentError, TileLangError
from tilelang.ir import expr as E
from tilelang.ir.function import PrimFunc
from tilelang.runtime.module import TimeEvaluator

#: what ``clock`` may be: the wall clock, or the process's CPU time (one thread only)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def check_clock(clock: str, target) -> None:
    """``clock`` is ``"wall"``, or ``"cpu"`` for a CPU target of one thread (the CPU
    time of several threads adds up: it is not the latency)."""
    if clock not in CLOCKS:
        raise ArgumentError(f"clock must be 'wall' or 'cpu', not {clock!r}")
    if clock == "cpu" and (target.kind not in ("llvm", "c") or target.num_cores != 1):
        raise ArgumentError(
            f"clock='cpu' times code that runs on one thread by its CPU time; the target "
            f"'{target}' is not a one-thread CPU target (use e.g. 'llvm -num-cores=1')"
        )


def _only_prim_func(mod):
    funcs = [(n, f) for n, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if len(funcs) != 1:
        names = [n for n, _ in funcs]
        raise ArgumentError(f"tuning takes a module with one prim_func, this one has {names}")
    return funcs[0]


def random_arguments(func: PrimFunc, seed: int) -> list[np.ndarray]:
    """One random array per buffer parameter of ``func`` (constant shapes only)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            raise ArgumentError(f"tuning needs buffer parameters only; {param.name} is a scalar")
        shape = []
        for extent in buffer.shape:
            if not isinstance(extent, E.IntImm):
                raise ArgumentError(
                    f"tuning needs constant shapes; {buffer.name} has the extent {extent}"
                )
            shape.append(extent.value)
        dtype = np.dtype(str(buffer.dtype))
        if dtype.kind == "f":
            arrays.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
        elif dtype.kind == "b":
            arrays.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            arrays.append(rng.integers(-4, 5, shape).astype(dtype))
    return arrays


class Measurer:
    """Checks and times built candidates of one workload.

    ``measure(lib)`` returns ``(run_secs, None)``, or ``((), reason)`` for a candidate
    that fails or computes something else."""

    def __init__(self, mod, target, seed=0, number=1, repeat=5, min_repeat_ms=10.0,
                 rtol=1e-3, clock: str = "wall"):  # fmt: skip
        self.func_name, func = _only_prim_func(mod)
        self.target, self.clock = target, clock
        self.inputs = random_arguments(func, seed)
        self.number, self.repeat, self.min_repeat_ms, self.rtol = (
            number, repeat, min_repeat_ms, rtol,
        )  # fmt: skip
        reference = tilelang.build(mod, target=target)
        self.expected = [a.copy() for a in self.inputs]
        reference[self.func_name](*self.expected)

    def check(self, lib) -> str | None:
        """None when ``lib`` computes what the original does, else the reason."""
        arrays = [a.copy() for a in self.inputs]
        lib[self.func_name](*arrays)
        for index, (got, want) in enumerate(zip(arrays, self.expected)):
            if got.dtype.kind == "f":
                scale = float(np.max(np.abs(want))) if want.size else 0.0
                same = np.allclose(got, want, rtol=self.rtol, atol=self.rtol * max(scale, 1.0))
            else:
                same = np.array_equal(got, want)
            if not same:
                return f"wrong result: buffer argument {index} differs from the original program"
        return None

    def time(self, lib, repeat: int) -> tuple:
        """``repeat`` timings of ``lib`` (already checked) on the inputs."""
        arrays = [a.copy() for a in self.inputs]
        return tuple(self._timer(lib, repeat)(*arrays).results)

    def _timer(self, lib, repeat: int):
        if self.clock == "wall":  # the backend's own timer (CUDA times with events)
            return lib.time_evaluator(self.func_name, number=self.number, repeat=repeat,
                                      min_repeat_ms=self.min_repeat_ms)  # fmt: skip
        function = lib.get_function(self.func_name)
        return TimeEvaluator(function, self.number, repeat, self.min_repeat_ms,
                             CLOCKS[self.clock])  # fmt: skip

    def measure(self, lib) -> tuple[tuple, str | None]:
        """Check ``lib``, then time it."""
        try:
            error = self.check(lib)
            if error is not None:
                return (), error
            return self.time(lib, self.repeat), None
        except TileLangError as exc:
            return (), f"{type(exc).__name__}: {exc}"

"""The runtime Module: compiled functions behind argument checking, and timing."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import attrs

from tilelang.errors import BuildError
from tilelang.runtime.args import Signature


class Function:
    """A compiled function. Calling it checks every argument (see
    :mod:`tilelang.runtime.args`) and then runs the backend's code."""

    __slots__ = ("name", "signature", "impl")

    def __init__(self, name: str, signature: Signature, impl):
        self.name, self.signature, self.impl = name, signature, impl

    def __call__(self, *args):
        return self.impl(*self.signature.check(args))

    def __repr__(self) -> str:
        return f"<tilelang Function {self.signature.describe()}>"


@attrs.frozen
class ProfileResult:
    """Timings of :meth:`Module.time_evaluator`, in seconds per call (as TVM's)."""

    results: tuple

    @property
    def mean(self) -> float:
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        return min(self.results)

    @property
    def max(self) -> float:
        return max(self.results)

    @property
    def std(self) -> float:
        return statistics.pstdev(self.results)

    def __str__(self) -> str:
        ms = [x * 1e3 for x in (self.mean, self.median, self.max, self.min, self.std)]
        return (
            "Execution time summary:\n"
            " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)  \n"
            + "  ".join(f"{x:10.4f}" for x in ms)
        )


class TimeEvaluator:
    """Times a function the way TVM's ``time_evaluator`` does: one warm-up call, then
    ``repeat`` measurements of ``number`` back-to-back calls each; ``number`` grows
    until one measurement lasts at least ``min_repeat_ms``. Arguments are checked once,
    so the timings are of the compiled code, not of the checks. ``clock`` reads the
    seconds (``time.perf_counter``; the tuner passes ``time.process_time`` to time
    one-thread code by its CPU time, which a busy machine's preemptions do not add to)."""

    def __init__(self, function: Function, number: int, repeat: int, min_repeat_ms: float,
                 clock=time.perf_counter):  # fmt: skip
        if number < 1 or repeat < 1:
            raise ValueError("time_evaluator needs number >= 1 and repeat >= 1")
        self.function, self.number, self.repeat = function, number, repeat
        self.min_repeat_ms, self.clock = min_repeat_ms, clock

    def __call__(self, *args) -> ProfileResult:
        impl = self.function.impl
        checked = self.function.signature.check(args)
        impl(*checked)
        number, results = self.number, []
        for _ in range(self.repeat):
            while True:
                start = self.clock()
                for _ in range(number):
                    impl(*checked)
                elapsed = self.clock() - start
                if elapsed * 1e3 >= self.min_repeat_ms:
                    break
                scale = self.min_repeat_ms / max(elapsed * 1e3, 1e-3)
                number = max(number * 2, int(number * scale * 1.2))
            results.append(elapsed / number)
        return ProfileResult(tuple(results))


class Module:
    """The result of :func:`tilelang.build`.

    ``lib["name"](*arrays)`` calls a function (by its name in the module or its
    ``global_symbol``); ``lib.get_source()`` is the generated code;
    ``lib.time_evaluator("name", tilelang.cpu())`` times it; ``lib.trace`` is the
    schedule the default rules applied (a :class:`~tilelang.schedule.Trace`, empty
    when they applied nothing; None when built with ``auto_schedule=False``).
    """

    def __init__(self, backend_module, lowered_mod, target, trace=None):
        self.trace = trace
        self.backend_module = backend_module
        self.ir_module = lowered_mod
        self.target = target
        self._functions: dict[str, Function] = {}
        self._aliases = {}
        for name, func in lowered_mod.functions.items():
            symbol = getattr(func, "attrs", {}).get("global_symbol", name)
            self._aliases[symbol] = name

    @property
    def function_names(self) -> list[str]:
        return sorted(self.backend_module.functions)

    def get_function(self, name: str) -> Function:
        """The checked callable for ``name``."""
        key = name if name in self.backend_module.functions else self._aliases.get(name)
        if key is None or key not in self.backend_module.functions:
            known = ", ".join(self.function_names) or "none"
            raise KeyError(f"no function {name!r} in the built module (it has: {known})")
        function = self._functions.get(key)
        if function is None:
            # a backend may check arguments its own way (the CUDA one takes device arrays)
            signature_class = getattr(self.backend_module, "signature_class", Signature)
            signature = signature_class(self.ir_module[key], key)
            function = self._functions[key] = Function(
                key, signature, self.backend_module.functions[key]
            )
        return function

    __getitem__ = get_function

    def __contains__(self, name: str) -> bool:
        return name in self.backend_module.functions or name in self._aliases

    def get_source(self, fmt: str = "") -> str:
        """The generated source (C text for ``"c"``, LLVM IR for ``"llvm"``...)."""
        return self.backend_module.get_source(fmt)

    @property
    def imported_modules(self) -> list:
        """The device modules a host module imports, as TVM lays out a build: for a
        ``"cuda"`` build ``lib.imported_modules[0].get_source()`` is the CUDA source;
        a CPU build imports nothing (``[]``)."""
        return list(getattr(self.backend_module, "imported_modules", ()))

    @property
    def type_key(self) -> str:
        return self.target.kind

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 3,
                       min_repeat_ms: float = 0) -> TimeEvaluator:  # fmt: skip
        """A timer for ``func_name``: call it with the arguments; it returns a
        :class:`ProfileResult` (``.mean``, ``.median``, ``.results`` in seconds)."""
        # a backend may time its own way (the CUDA one with CUDA events)
        evaluator = getattr(self.backend_module, "time_evaluator_class", TimeEvaluator)
        return evaluator(self.get_function(func_name), number, repeat, min_repeat_ms)

    def export_library(self, path) -> Path:
        """Write the compiled library to ``path`` (and, for C, a header next to it)."""
        export = getattr(self.backend_module, "export_library", None)
        if export is None:
            raise BuildError(f"export_library is not supported for target '{self.target.kind}'")
        export(Path(path))
        return Path(path)

    def __repr__(self) -> str:
        return f"<tilelang Module target={self.target} functions={self.function_names}>"


__all__ = ["Module", "Function", "ProfileResult", "TimeEvaluator"]

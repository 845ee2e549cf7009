"""Pass instruments: objects a :class:`~tilelang.transform.PassContext` calls around
every pass. Any object with some of ``enter_pass_ctx``, ``exit_pass_ctx``,
``should_run``, ``run_before_pass`` and ``run_after_pass`` is an instrument."""

from __future__ import annotations

import sys
import time

from tilelang.transform.pass_infra import _short_name


class PassInstrument:
    """Base class with do-nothing hooks, for instruments that want only some."""

    def enter_pass_ctx(self) -> None:
        pass

    def exit_pass_ctx(self) -> None:
        pass

    def should_run(self, mod, info) -> bool:
        return True

    def run_before_pass(self, mod, info) -> None:
        pass

    def run_after_pass(self, mod, info) -> None:
        pass


class PrintIR(PassInstrument):
    """Prints the module (``str(mod)``) before and/or after the named passes.

    ``print_before`` / ``print_after``: pass names (``"tir.FlattenBuffer"`` or
    ``"FlattenBuffer"``); ``print_after_all`` prints after every pass. ``file``
    defaults to standard output.
    """

    def __init__(self, print_before=(), print_after=(), print_after_all=False, file=None):
        self.print_before = {_short_name(n) for n in print_before}
        self.print_after = {_short_name(n) for n in print_after}
        self.print_after_all = print_after_all
        self.file = file

    def _emit(self, when: str, mod, info) -> None:
        out = self.file or sys.stdout
        print(f"# IR {when} {info.name}", file=out)
        print(str(mod), file=out)

    def run_before_pass(self, mod, info) -> None:
        if _short_name(info.name) in self.print_before:
            self._emit("before", mod, info)

    def run_after_pass(self, mod, info) -> None:
        if self.print_after_all or _short_name(info.name) in self.print_after:
            self._emit("after", mod, info)


class PassTimingInstrument(PassInstrument):
    """Measures the wall time of every pass; :meth:`render` prints a table.

    ``timings`` lists ``(pass name, seconds)`` in the order the passes ran.
    """

    def __init__(self):
        self.timings: list[tuple[str, float]] = []
        self._started: list[float] = []

    def run_before_pass(self, mod, info) -> None:
        self._started.append(time.perf_counter())

    def run_after_pass(self, mod, info) -> None:
        self.timings.append((info.name, time.perf_counter() - self._started.pop()))

    def totals(self) -> dict[str, float]:
        """Seconds per pass name, summed over runs, in first-run order."""
        out: dict[str, float] = {}
        for name, seconds in self.timings:
            out[name] = out.get(name, 0.0) + seconds
        return out

    def render(self) -> str:
        """A table of per-pass times, the slowest first, with the total."""
        totals = self.totals()
        width = max([len(n) for n in totals] + [len("pass")])
        grand = sum(totals.values()) or 1e-12
        lines = [f"{'pass':<{width}}  {'ms':>10}  {'share':>6}"]
        for name, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
            lines.append(f"{name:<{width}}  {seconds * 1e3:>10.3f}  {seconds / grand:>6.1%}")
        lines.append(f"{'total':<{width}}  {sum(totals.values()) * 1e3:>10.3f}")
        return "\n".join(lines)

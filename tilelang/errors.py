"""The error families users meet. Each message says what, where and what to do."""

from __future__ import annotations

from tilelang.ir.expr import TIRTypeError


class TileLangError(Exception):
    """Base of the errors tilelang raises on purpose."""


class TIRSyntaxError(TileLangError):
    """A program that does not parse, or that parses but means nothing (an undefined
    name, a wrong number of indices...). ``str()`` is the rendered diagnostic:

    .. code-block:: text

        error: unknown function T.blok; did you mean T.block?
         --> mm.tir:12:14
           |
        12 |         with T.blok("Y"):
           |              ^^^^^^
    """

    def __init__(
        self,
        message: str,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        length: int = 1,
        text: str | None = None,
    ):
        self.message, self.source, self.line, self.column = message, source, line, column
        self.length, self.text = max(1, length), text
        super().__init__(self.render())

    def render(self) -> str:
        """The diagnostic as ``error:`` / ``-->`` / source line / caret."""
        lines = [f"error: {self.message}"]
        if self.line is None:
            return lines[0]
        lines.append(f" --> {self.source or '<string>'}:{self.line}:{self.column}")
        source_lines = (self.text or "").splitlines()
        if 1 <= self.line <= len(source_lines):
            number = str(self.line)
            pad = " " * len(number)
            code = source_lines[self.line - 1].expandtabs(4)
            lines += [
                f"{pad} |",
                f"{number} | {code}",
                f"{pad} | {' ' * (self.column - 1)}{'^' * self.length}",
            ]
        return "\n".join(lines)


class ScheduleError(TileLangError):
    """A schedule primitive whose preconditions do not hold; the schedule is unchanged."""


class BuildError(TileLangError):
    """Code generation or the native compiler failed."""


class ArgumentError(TileLangError, TypeError):
    """An argument that does not fit its parameter, caught before native code runs."""


class AssertionFailure(TileLangError, RuntimeError):
    """A ``T.assert`` failed during a call; every backend raises this one class."""


__all__ = [
    "TileLangError",
    "TIRSyntaxError",
    "TIRTypeError",
    "ScheduleError",
    "BuildError",
    "ArgumentError",
    "AssertionFailure",
]

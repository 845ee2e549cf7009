"""The error families users meet. Each message says what, where and what to do."""

from __future__ import annotations

import linecache

from tilelang.ir.expr import TIRTypeError


class TileLangError(Exception):
    """Base of the errors tilelang raises on purpose."""


class LocatedError(TileLangError):
    """An error about a place in the user's program. ``str()`` is the rendered
    diagnostic:

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

    def render(self, severity: str = "error") -> str:
        """The diagnostic as ``error:`` (or ``severity:``) / ``-->`` / source line / caret."""
        lines = [f"{severity}: {self.message}"]
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

    @classmethod
    def at(cls, message: str, span=None, **kwargs):
        """The error located at ``span`` (a :class:`~tilelang.ir.node.Span` or None),
        showing the source line when its file can be read."""
        if span is None or span.line is None:
            return cls(message, **kwargs)
        text = "".join(linecache.getlines(span.source)) if span.source else None
        length = 1
        if span.end_line == span.line and span.end_column:
            length = span.end_column - span.column
        return cls(message, span.source, span.line, span.column, length, text or None, **kwargs)


class TIRSyntaxError(LocatedError):
    """A program that does not parse, or that parses but means nothing (an undefined
    name, a wrong number of indices...)."""


class OutOfBoundsError(LocatedError, IndexError):
    """A buffer access outside its buffer, located at the access in the source: found
    at compile time when provable, or at run time by a bounds-checked build
    (``build(..., bounds_check=True)``) or the python reference backend."""


class ScheduleError(TileLangError):
    """A schedule primitive whose preconditions do not hold; the schedule is unchanged."""


class BuildError(TileLangError):
    """Code generation or the native compiler failed."""


class ArgumentError(TileLangError, TypeError):
    """An argument that does not fit its parameter, caught before native code runs."""


class AssertionFailure(TileLangError, RuntimeError):
    """A ``T.assert`` failed during a call; every backend raises this one class."""


class TIRCastWarning(UserWarning):
    """A value stored into a buffer of a type that may not hold it (a float into an
    integer buffer) is cast, as TVM casts it; the warning is located like an error."""


__all__ = [
    "TileLangError",
    "LocatedError",
    "TIRSyntaxError",
    "OutOfBoundsError",
    "TIRTypeError",
    "ScheduleError",
    "BuildError",
    "ArgumentError",
    "AssertionFailure",
    "TIRCastWarning",
]

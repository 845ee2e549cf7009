"""Name scopes of the builder: a stack of frames, innermost last.

A frame is opened for each function, loop, block and ``with`` body; names defined in
it (loop variables, block iterators, buffers, lets) disappear when it closes.
"""

from __future__ import annotations

MISSING = object()


class ScopeStack:
    """Names visible at the current point of the program."""

    def __init__(self):
        self.frames: list[dict] = [{}]

    def frame(self):
        """A nested frame for the duration of a ``with``."""
        return _Frame(self.frames)

    def define(self, name: str, value) -> None:
        """Binds ``name`` in the innermost frame (shadowing outer bindings)."""
        self.frames[-1][name] = value

    def lookup(self, name: str):
        """The innermost binding of ``name``, or :data:`MISSING`."""
        for frame in reversed(self.frames):
            value = frame.get(name, MISSING)
            if value is not MISSING:
                return value
        return MISSING

    def names(self) -> set[str]:
        """Every visible name (for "did you mean" suggestions)."""
        return {name for frame in self.frames for name in frame}


class _Frame:
    """The context manager of :meth:`ScopeStack.frame` (a class, not a generator:
    one is entered for every loop, block and body of a program)."""

    __slots__ = ("frames",)

    def __init__(self, frames: list):
        self.frames = frames

    def __enter__(self) -> dict:
        frame = {}
        self.frames.append(frame)
        return frame

    def __exit__(self, *exc) -> None:
        self.frames.pop()

"""Name scopes of the builder: a stack of frames, innermost last.

A frame is opened for each function, loop, block and ``with`` body; names defined in
it (loop variables, block iterators, buffers, lets) disappear when it closes.
"""

from __future__ import annotations

from contextlib import contextmanager

MISSING = object()


class ScopeStack:
    """Names visible at the current point of the program."""

    def __init__(self):
        self.frames: list[dict] = [{}]

    @contextmanager
    def frame(self):
        """A nested frame for the duration of a ``with``."""
        self.frames.append({})
        try:
            yield self.frames[-1]
        finally:
            self.frames.pop()

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

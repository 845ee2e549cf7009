"""Name scopes of the builder: a stack of frames, innermost last.

A frame is opened for each function, loop, block and ``with`` body; names defined in
it (loop variables, block iterators, buffers, lets) disappear when it closes.

Besides the frames, :attr:`ScopeStack.visible` maps every visible name to its
innermost binding, so a look-up is one dict access however deep the nesting (names
are looked up for most expression nodes); each frame remembers what its definitions
shadowed and restores it when it closes.
"""

from __future__ import annotations

MISSING = object()


class ScopeStack:
    """Names visible at the current point of the program."""

    def __init__(self):
        self.frames: list[dict] = [{}]
        #: name -> innermost binding, for every visible name
        self.visible: dict = {}
        # per frame: (name, the binding it shadowed or MISSING) of each name it defined
        self._shadowed: list[list] = [[]]

    def frame(self):
        """A nested frame for the duration of a ``with``."""
        return _Frame(self)

    def define(self, name: str, value) -> None:
        """Binds ``name`` in the innermost frame (shadowing outer bindings)."""
        frame = self.frames[-1]
        if name not in frame:
            self._shadowed[-1].append((name, self.visible.get(name, MISSING)))
        frame[name] = value
        self.visible[name] = value

    def lookup(self, name: str):
        """The innermost binding of ``name``, or :data:`MISSING`."""
        return self.visible.get(name, MISSING)

    def names(self) -> set[str]:
        """Every visible name (for "did you mean" suggestions)."""
        return set(self.visible)


class _Frame:
    """The context manager of :meth:`ScopeStack.frame` (a class, not a generator:
    one is entered for every loop, block and body of a program)."""

    __slots__ = ("scopes",)

    def __init__(self, scopes: ScopeStack):
        self.scopes = scopes

    def __enter__(self) -> dict:
        frame = {}
        self.scopes.frames.append(frame)
        self.scopes._shadowed.append([])
        return frame

    def __exit__(self, *exc) -> None:
        scopes = self.scopes
        scopes.frames.pop()
        visible = scopes.visible
        for name, shadowed in reversed(scopes._shadowed.pop()):
            if shadowed is MISSING:
                del visible[name]
            else:
                visible[name] = shadowed

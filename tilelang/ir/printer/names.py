"""Printed names: every variable and buffer gets a distinct, valid Python identifier.

Two different ``Var`` objects named ``i`` print as ``i`` and ``i_1``; names that are
keywords or not identifiers are sanitised (``for`` -> ``for_1``, ``a.b`` -> ``a_b``),
so the printed text parses back to the same structure.
"""

from __future__ import annotations

import keyword
import re

# Names the printed text itself relies on: the script namespaces and builtins.
RESERVED = frozenset({"T", "I", "range", "True", "False", "None", "tvm", "tir", "int", "float"})

_INVALID = re.compile(r"[^0-9A-Za-z_]")


def sanitize(name: str | None) -> str:
    """A valid, non-reserved identifier close to ``name``."""
    text = _INVALID.sub("_", name or "")
    if not text:
        text = "v"
    if text[0].isdigit():
        text = "v_" + text
    if keyword.iskeyword(text) or keyword.issoftkeyword(text) or text in RESERVED:
        text = text + "_1"
    return text


class NameTable:
    """Assigns each object (by identity) one printed name, unique among the names in
    scope. Scopes nest (a loop body, a block); a name is free again once the scope
    that defined it closes, so sibling loops both print as ``i``, as in TVM."""

    def __init__(self):
        self._names: dict[int, str] = {}
        self._keep: dict[int, object] = {}  # keeps named objects alive: ids stay unique
        self._used: set[str] = set()
        self._frames: list[list[int]] = [[]]

    def lookup(self, obj) -> str | None:
        return self._names.get(id(obj))

    def push(self) -> None:
        """Opens a scope."""
        self._frames.append([])

    def pop(self) -> None:
        """Closes the innermost scope and frees the names defined in it."""
        for key in self._frames.pop():
            name = self._names.pop(key, None)
            self._keep.pop(key, None)
            self._used.discard(name)

    def define(self, obj, hint: str | None, outermost: bool = False) -> str:
        """A fresh name for ``obj`` (its existing one if it is named already), in the
        innermost scope, or in the outermost one for free variables."""
        known = self._names.get(id(obj))
        if known is not None:
            return known
        base = sanitize(hint)
        name, counter = base, 0
        while name in self._used:
            counter += 1
            name = f"{base}_{counter}"
        self._record(obj, name, outermost)
        self._used.add(name)
        return name

    def alias(self, obj, text: str, outermost: bool = False) -> None:
        """Print ``obj`` as ``text`` (a buffer's data pointer prints as ``A.data``)."""
        if id(obj) not in self._names:
            self._record(obj, text, outermost)

    def _record(self, obj, name: str, outermost: bool) -> None:
        self._names[id(obj)] = name
        self._keep[id(obj)] = obj
        self._frames[0 if outermost else -1].append(id(obj))

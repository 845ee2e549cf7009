"""Everything user-controlled that reaches generated Python goes through here.

Two kinds of text come from the program: identifiers (variable, buffer and function
names) and free text shown in comments (attribute keys and values, thread tags,
scopes). Identifiers are reduced to ASCII ``[A-Za-z0-9_]`` so that Python's NFKC
normalisation of identifiers can never merge two different names, and then made
unique. Comment text is escaped to one printable ASCII line, so no newline or other
line break can end the comment and start code.
"""

from __future__ import annotations

import keyword
import re

_RESERVED = {"np", "range", "min", "max", "abs", "bool", "int", "float", "len", "print"}
_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")


def comment(text: str) -> str:
    """``# text`` as one line of printable ASCII: line breaks and non-ASCII are escaped."""
    escaped = str(text).encode("unicode_escape").decode("ascii")
    return "# " + escaped


class NameTable:
    """One identifier per variable object; two variables never share one."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()

    def fresh(self, hint: str) -> str:
        base = _NOT_IDENTIFIER.sub("_", hint or "v")
        if not base or base[0].isdigit():
            base = "v_" + base
        if keyword.iskeyword(base) or base in _RESERVED or base.startswith("_"):
            base = base.lstrip("_") + "_"
        name, n = base, 0
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name

    def get(self, var, hint: str | None = None) -> str:
        name = self.names.get(id(var))
        if name is None:
            name = self.names[id(var)] = self.fresh(hint or var.name)
        return name

"""Unique Python identifiers for variables."""

from __future__ import annotations

import keyword
import re

_RESERVED = {"np", "range", "min", "max", "abs", "bool", "int", "float", "len", "print"}


class NameTable:
    """One identifier per variable object; two variables never share one."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()

    def fresh(self, hint: str) -> str:
        base = re.sub(r"\W", "_", hint or "v")
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

"""C identifiers: sanitising user names and giving each variable a unique, readable one.

A buffer named ``int`` or ``a-b`` still compiles (``int_``, ``a_b``), and no name can
inject code: every identifier the printers emit goes through :func:`sanitize`.
"""

from __future__ import annotations

import re

C_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for
    goto if inline int long register restrict return short signed sizeof static struct
    switch typedef union unsigned void volatile while _Bool _Complex _Imaginary bool true
    false NULL INFINITY NAN main""".split()
)
#: names the generated code itself uses (types, libc functions, helpers)
RUNTIME_NAMES = frozenset(
    """int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t malloc
    free abs llabs fabs fabsf isnan printf memcpy memset""".split()
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_identifier(name: str) -> bool:
    return _IDENTIFIER.fullmatch(name) is not None


def sanitize(name: str) -> str:
    """A valid C identifier resembling ``name`` that is no keyword and does not use the
    prefixes reserved for the C implementation (``_X``, ``__``) or for tilelang (``tl_``)."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name or "v")
    if text[0].isdigit() or text.startswith("__") or re.match(r"_[A-Z]", text):
        text = "v" + text
    if text.startswith("tl_"):
        text = "u" + text
    if text in C_KEYWORDS or text in RUNTIME_NAMES:
        text += "_"
    return text


def export_symbols(named_funcs, reserved=()) -> dict:
    """``name -> exported symbol`` for ``(name, PrimFunc)`` pairs: each function's
    ``global_symbol`` (or its name) sanitised, and renamed apart (``f_x``, ``f_x_``) when
    two sanitise alike or one meets a ``reserved`` symbol. The C and LLVM backends
    both export through this, so a function has the same symbol on either."""
    symbols, used = {}, set(reserved)
    for name, func in named_funcs:
        symbol = sanitize(str(func.attrs.get("global_symbol", name)))
        while symbol in used:
            symbol += "_"
        used.add(symbol)
        symbols[name] = symbol
    return symbols


class ScopedNames:
    """Unique C names for variables, reused once the C block that declared them closes.

    Sibling loops both get ``i``; a loop over ``i`` nested in another gets ``i_1``.
    """

    def __init__(self, reserved=()):
        self.reserved = set(reserved)
        self._names: dict[int, tuple[object, str]] = {}
        self._scopes: list[list[str]] = [[]]
        self._live: set[str] = set()

    def reserve(self, name: str) -> None:
        self.reserved.add(name)

    def define(self, var, hint: str | None = None) -> str:
        """A fresh name for ``var`` in the current block."""
        base = sanitize(hint if hint is not None else var.name)
        name, suffix = base, 0
        while name in self._live or name in self.reserved:
            suffix += 1
            name = f"{base}_{suffix}"
        self._names[id(var)] = (var, name)
        self._live.add(name)
        self._scopes[-1].append(name)
        return name

    def alias(self, var, name: str) -> None:
        """Let ``var`` print as the already defined ``name`` (a buffer's data pointer)."""
        self._names[id(var)] = (var, name)

    def lookup(self, var) -> str | None:
        entry = self._names.get(id(var))
        return None if entry is None else entry[1]

    def open_scope(self) -> None:
        self._scopes.append([])

    def close_scope(self) -> None:
        for name in self._scopes.pop():
            self._live.discard(name)

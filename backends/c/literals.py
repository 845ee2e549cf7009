"""C literals for the numbers and strings of a program.

Every constant and string that reaches generated C or CUDA is printed here: numbers
exactly (shortest round-trip digits, typed as their dtype) and strings escaped so that
no text can end the literal early.
"""

from __future__ import annotations

import math
import struct

import numpy as np


def c_float_literal(value: float, bits: int) -> str:
    """An exact C literal: shortest round-trip digits, ``f`` for float32; INFINITY/NAN."""
    if bits == 16:
        # the value rounded to float16 (exact as a double), then typed as one
        return f"((_Float16){c_float_literal(half_value(value), 64)})"
    suffix = "f" if bits == 32 else ""
    if math.isnan(value):
        return "NAN" if bits == 32 else "(double)NAN"
    if math.isinf(value):
        inf = "INFINITY" if bits == 32 else "(double)INFINITY"
        return inf if value > 0 else f"(-{inf})"
    if bits == 32:
        value = struct.unpack("f", struct.pack("f", value))[0]
        text = _shortest_float32(value)
    else:
        text = repr(value)
    if "e" not in text and "." not in text and "inf" not in text:
        text += ".0"
    text += suffix
    return f"({text})" if value < 0 or text.startswith("-") else text


def half_value(value: float) -> float:
    """``value`` rounded to the nearest float16 (to nearest even; inf past the range)."""
    with np.errstate(over="ignore"):
        return float(np.float16(value))


def _shortest_float32(value: float) -> str:
    return (
        np.format_float_positional(np.float32(value), unique=True, trim="0")
        if (value == 0 or 1e-4 <= abs(value) < 1e16)
        else np.format_float_scientific(np.float32(value), unique=True, trim="0")
    )


def c_string(text: str) -> str:
    """A C string literal for ``text``: quotes, backslashes and non-printables escaped
    (as octal), so no text can end the literal early."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 32 <= byte < 127 and char != "?":
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


_COMMENT_SAFE = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,:;=+-()[]{}<>'\"#@!%&|^~"
)


def c_comment(text: str) -> str:
    """``// text`` on one line: every character outside a small printable set (line
    breaks, backslashes that would continue the comment, ``?`` of trigraphs, ``*/``'s
    ``*`` and ``/``, non-ASCII) is written as ``\\xNN``."""
    out = []
    for char in str(text):
        if char in _COMMENT_SAFE:
            out.append(char)
        else:
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8"))
    return "// " + "".join(out)


def c_header_name(text: str) -> str:
    """The operand of ``#include`` for a header the user named (``<x.h>`` or
    ``x.h``); a BuildError for names that could end the directive or the line."""
    from tilelang.errors import BuildError

    text = str(text)
    angled = text.startswith("<") and text.endswith(">")
    inner = text[1:-1] if angled else text
    if not inner or any(c in inner for c in '<>"\n\r\\') or not inner.isprintable():
        raise BuildError(f"invalid header name {text!r}")
    return f"<{inner}>" if angled else f'"{inner}"'

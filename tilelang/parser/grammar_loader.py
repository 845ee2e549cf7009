"""The Lark parser of the .tir language, built once per process.

Building the LALR tables is the most expensive part of a cold start, so Lark's
``cache=`` option keeps them on disk (in the user cache directory, keyed by Lark on the
grammar text and options). A cache that cannot be written (read-only home) only costs
time, never correctness.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from lark import Lark
from lark.indenter import Indenter


class TIRIndenter(Indenter):
    """Python-style indentation: ``_NL`` tokens become ``_INDENT``/``_DEDENT``; newlines
    inside brackets are ignored, so calls and lists may span lines."""

    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8


def _cache_path() -> str | bool:
    """Where Lark stores the parse tables (``True`` lets Lark pick a temp file)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    folder = os.path.join(base, "tilelang")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    if not os.access(folder, os.W_OK):
        return False
    return os.path.join(folder, "tir_grammar.lark.cache")


@cache
def get_parser() -> Lark:
    """The process-wide LALR parser (tables loaded from the disk cache when present)."""
    from tilelang.grammar import read_grammar

    return Lark(
        read_grammar("tir.lark"),
        parser="lalr",
        lexer="contextual",
        postlex=TIRIndenter(),
        # positions are read from tokens on demand (see tilelang.parser.positions)
        propagate_positions=False,
        maybe_placeholders=True,
        cache=_cache_path(),
    )

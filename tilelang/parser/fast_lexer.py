"""The tokens of a .tir program for :mod:`tilelang.parser.fast_parse`.

One compiled regular expression scans the text (the token patterns are those of
``grammar/tir.lark``); newlines outside brackets become ``NL`` tokens followed by
``INDENT``/``DEDENT`` exactly as :class:`~tilelang.parser.grammar_loader.TIRIndenter`
makes them. Anything this scanner is unsure of raises :class:`Bail`: the caller then
parses with Lark, whose answer (tree or located error) is the reference.

A token is a tuple ``(kind, value, start, line, column)``: ``kind`` is ``"NAME"``,
``"DEC_NUMBER"``, ``"HEX_NUMBER"``, ``"FLOAT_NUMBER"``, ``"STRING"``, ``"KW"`` (a
keyword of the grammar), ``"OP"`` (punctuation and operators), ``"NL"``, ``"INDENT"``,
``"DEDENT"`` or ``"EOF"``; lines and columns are 1-based as Lark counts them.
"""

from __future__ import annotations

import re


class Bail(Exception):
    """The fast front end declines this input; Lark decides."""


#: the words the grammar spells as literals; elsewhere a word is a NAME, as in Lark
KEYWORDS = frozenset(
    "pass break continue assert return import from as if elif else while for in with def "
    "class lambda True False None and or not".split()
)

_TAB_LEN = 8  # TIRIndenter.tab_len

_STRING = (
    r"""[rRbBuU]?(?s:\"\"\".*?(?<!\\)(?:\\\\)*?\"\"\"|'''.*?(?<!\\)(?:\\\\)*?''')"""
    r"""|[rRbBuU]?(?:"(?!"").*?(?<!\\)(?:\\\\)*?"|'(?!'').*?(?<!\\)(?:\\\\)*?')"""
)
_DIGITS = r"\d(?:_?\d)*"
_FLOAT = rf"(?:(?:{_DIGITS}\.(?:{_DIGITS})?|\.{_DIGITS})(?:[eE][+-]?\d+)?|{_DIGITS}[eE][+-]?\d+)"
# operators longest first: the augmented assignments, then two-character operators
_OPS = [
    "//=", "+=", "-=", "*=", "/=", "%=", "**", "//", "<<", ">>", ">=", "<=", "==", "!=",
    "->", "<", ">", "|", "^", "&", "+", "-", "*", "/", "%", "~", "(", ")", "[", "]",
    "{", "}", ",", ":", ";", ".", "=", "@",
]  # fmt: skip

# Blanks before a token are part of its match (one match per token, not two); the
# token starts where its group starts.
_SCANNER = re.compile(
    r"[\t ]*(?:"
    + "|".join(
        [
            # "." before a digit starts a float (.5)
            # brackets apart from the other operators: the scanner counts their depth
            r"(?P<OPEN>[(\[{])",
            r"(?P<CLOSE>[)\]}])",
            "(?P<OP>"
            + "|".join(re.escape(op) for op in _OPS if op not in ".()[]{}")
            + r"|\.(?!\d))",
            # before NAME: r"..." is a string, not the name r
            rf"(?P<STRING>{_STRING})",
            r"(?P<NAME>[^\W\d]\w*)",
            r"(?P<NL>(?:\r?\n[\t ]*|#[^\n]*)+)",
            rf"(?P<FLOAT_NUMBER>{_FLOAT})(?![\w.])",
            r"(?P<HEX_NUMBER>0[xX](?:_?[0-9a-fA-F])+)(?![\w.])",
            r"(?P<DEC_NUMBER>0|[1-9](?:_?\d)*)(?![\w.])",
            r"(?P<CONT>\\[\t ]*\r?\n)",
            r"(?P<OTHER>(?s:.))",
        ]
    )
    + ")"
)


def tokens(text: str) -> list:
    """The token tuples of ``text`` (which ends with a newline), ending with ``EOF``."""
    out = []
    append = out.append
    line, line_start, depth = 1, 0, 0
    levels = [0]
    keywords = KEYWORDS
    # the branches in order of frequency (operators, then names); the token's value
    # is its group, without the blanks the match starts with
    for match in _SCANNER.finditer(text):
        kind = match.lastgroup
        if kind == "OP":
            start = match.start(kind)
            append(("OP", match.group(kind), start, line, start - line_start + 1))
        elif kind == "NAME":
            start = match.start(kind)
            value = match.group(kind)
            append(("KW" if value in keywords else "NAME", value, start, line, start - line_start + 1))
        elif kind == "OPEN":
            start = match.start(kind)
            append(("OP", match.group(kind), start, line, start - line_start + 1))
            depth += 1
        elif kind == "CLOSE":
            start = match.start(kind)
            append(("OP", match.group(kind), start, line, start - line_start + 1))
            depth -= 1
            if depth < 0:
                raise Bail
        elif kind == "NL":
            start = match.start(kind)
            value = match.group(kind)
            last = value.rfind("\n")
            if last < 0:
                raise Bail  # a comment at the very end: parse() pads the text with a newline
            line += value.count("\n")
            line_start = start + last + 1
            if depth == 0:
                append(("NL", value, start, line, 0))
                indent_str = value[last + 1 :]
                indent = indent_str.count(" ") + indent_str.count("\t") * _TAB_LEN
                if indent > levels[-1]:
                    levels.append(indent)
                    append(("INDENT", "", start, line, 0))
                else:
                    while indent < levels[-1]:
                        levels.pop()
                        append(("DEDENT", "", start, line, 0))
                    if indent != levels[-1]:
                        raise Bail
        elif kind == "STRING":
            start = match.start(kind)
            value = match.group(kind)
            append(("STRING", value, start, line, start - line_start + 1))
            newlines = value.count("\n")
            if newlines:
                line += newlines
                line_start = start + value.rindex("\n") + 1
        elif kind == "CONT":
            line += 1
            line_start = match.end()
        elif kind == "OTHER":
            raise Bail
        else:
            start = match.start(kind)
            append((kind, match.group(kind), start, line, start - line_start + 1))
    while len(levels) > 1:
        levels.pop()
        append(("DEDENT", "", len(text), line, 0))
    append(("EOF", "", len(text), line, 0))
    return out

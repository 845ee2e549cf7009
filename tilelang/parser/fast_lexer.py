"""The tokens of a .tir program for :mod:`tilelang.parser.fast_parse`.

One compiled regular expression scans the text (the token patterns are those of
``grammar/tir.lark``); newlines outside brackets become ``NL`` tokens followed by
``INDENT``/``DEDENT`` exactly as :class:`~tilelang.parser.grammar_loader.TIRIndenter`
makes them. Anything this scanner is unsure of raises :class:`Bail`: the caller then
parses with Lark, whose answer (tree or located error) is the reference.

A token is a pair ``(kind, value)``: ``kind`` is ``"NAME"``, ``"DEC_NUMBER"``,
``"HEX_NUMBER"``, ``"FLOAT_NUMBER"``, ``"STRING"``, ``"KW"`` (a keyword of the grammar),
``"OP"`` (punctuation and operators), ``"NL"``, ``"INDENT"``, ``"DEDENT"`` or ``"EOF"``.
Equal tokens share one pair, and where each token starts is kept apart in an array of
offsets (a 10 MB file has four million tokens: a tuple and two int objects per token
were half a gigabyte, and the page faults of that memory a good part of the time).
:func:`line_starts` maps an offset to Lark's 1-based line and column.
"""

from __future__ import annotations

import re
from array import array


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


def tokens(text: str) -> tuple[list, array]:
    """``(pairs, starts)``: the tokens of ``text`` (which ends with a newline), ending
    with ``EOF``, and the offset in ``text`` where each one starts."""
    out = []
    append = out.append
    starts = array("q")
    start_at = starts.append
    depth = 0
    levels = [0]
    keywords = KEYWORDS
    # one pair per distinct token text (a text has one kind; INDENT, DEDENT and EOF
    # have no text and are made below)
    pairs: dict = {}
    # the branches in order of frequency (operators, then names); the token's value
    # is its group, without the blanks the match starts with
    for match in _SCANNER.finditer(text):
        kind = match.lastgroup
        if kind == "OP" or kind == "NAME":
            value = match.group(kind)
            start_at(match.start(kind))
            pair = pairs.get(value)
            if pair is None:
                pair = pairs[value] = ("KW" if value in keywords else kind, value)
            append(pair)
        elif kind == "OPEN" or kind == "CLOSE":
            value = match.group(kind)
            pair = pairs.get(value)
            if pair is None:
                pair = pairs[value] = ("OP", value)
            append(pair)
            start_at(match.start(kind))
            if kind == "OPEN":
                depth += 1
            else:
                depth -= 1
                if depth < 0:
                    raise Bail
        elif kind == "NL":
            start = match.start(kind)
            value = match.group(kind)
            last = value.rfind("\n")
            if last < 0:
                raise Bail  # a comment at the very end: parse() pads the text with a newline
            if depth == 0:
                pair = pairs.get(value)
                if pair is None:
                    pair = pairs[value] = ("NL", value)
                append(pair)
                start_at(start)
                indent_str = value[last + 1 :]
                indent = indent_str.count(" ") + indent_str.count("\t") * _TAB_LEN
                if indent > levels[-1]:
                    levels.append(indent)
                    append(_INDENT)
                    start_at(start)
                else:
                    while indent < levels[-1]:
                        levels.pop()
                        append(_DEDENT)
                        start_at(start)
                    if indent != levels[-1]:
                        raise Bail
        elif kind == "CONT":
            continue
        elif kind == "OTHER":
            raise Bail
        else:  # STRING and the numbers
            value = match.group(kind)
            pair = pairs.get(value)
            if pair is None:
                pair = pairs[value] = (kind, value)
            append(pair)
            start_at(match.start(kind))
    while len(levels) > 1:
        levels.pop()
        append(_DEDENT)
        start_at(len(text))
    append(_EOF)
    start_at(len(text))
    return out, starts


_INDENT, _DEDENT, _EOF = ("INDENT", ""), ("DEDENT", ""), ("EOF", "")


def line_starts(text: str) -> list:
    """The offset where each line of ``text`` starts (lines end at ``\\n``, as Lark
    counts them): the line of offset ``o`` is ``bisect_right(starts, o)``."""
    starts = [0]
    position = text.find("\n")
    while position >= 0:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts

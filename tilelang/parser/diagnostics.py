"""Located diagnostics: turning Lark errors and semantic slips into TIRSyntaxError.

Every error the front end raises carries the file, line and column of the offending
token, and renders in the format of ``TIRSyntaxError.render()``. Common syntax slips
(a missing colon, an unclosed bracket, ``=`` where ``==`` was meant) get named
messages, found with Lark's ``UnexpectedInput.match_examples`` and a bracket scan.
"""

from __future__ import annotations

from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from tilelang.errors import TIRSyntaxError, TIRTypeError
from tilelang.parser.positions import bounds


class TIRLocatedTypeError(TIRSyntaxError, TIRTypeError):
    """A type error found while parsing, with its location (catch it as either family)."""


class SourceInfo:
    """The text being parsed, its path, and where it sits in a larger file (decorated
    Python functions are parsed from an extract: errors point into the real file)."""

    def __init__(
        self, text: str, path: str | None, line_offset: int = 0, full_text=None, column_offset=0
    ):
        self.text, self.path, self.line_offset = text, path, line_offset
        self.column_offset = column_offset
        self.full_text = text if full_text is None else full_text

    def error(self, message: str, line, column, length=1, cls=TIRSyntaxError):
        """A located error of family ``cls`` (not raised)."""
        if line is None:
            return cls(message, self.path)
        line, column = line + self.line_offset, column + self.column_offset
        return cls(message, self.path, line, column, max(1, length), self.full_text)

    def error_at(self, where, message: str, cls=TIRSyntaxError):
        """A located error for a Lark tree, token or ``(line, column)`` pair."""
        line, column, length = location_of(where)
        return self.error(message, line, column, length, cls)


def location_of(where) -> tuple:
    """``(line, column, length)`` of a Lark Tree or Token (length spans one line)."""
    if where is None:
        return None, None, 1
    if isinstance(where, tuple):
        return where[0], where[1], where[2] if len(where) > 2 else 1
    found = bounds(where)
    if found is None:
        return None, None, 1
    line, column, end_line, end_column = found
    if end_line == line and end_column and end_column > column:
        return line, column, end_column - column
    return line, column, 1


# Examples for match_examples: each is a program that fails at the same parser state
# as the slip it names. Lark compares states, so a few shapes per slip suffice.
_SLIP_EXAMPLES = {
    "missing ':' at the end of the line": [
        "for i in range(10)\n    pass\n",
        "for i in T.grid(2, 3)\n    pass\n",
        "for i, j in x\n    pass\n",
        "if x\n    pass\n",
        "if x < 1\n    pass\n",
        "if f(x)\n    pass\n",
        "while x\n    pass\n",
        "with T.block('x')\n    pass\n",
        "with x\n    pass\n",
        "def f()\n    pass\n",
        "def f(a: T.handle)\n    pass\n",
        "class M\n    pass\n",
        "if x:\n    pass\nelse\n    pass\n",
    ],
    "use '==' to compare; '=' assigns": [
        "if x = 1:\n    pass\n",
        "while x = 1:\n    pass\n",
        "T.where(x = 1)\n",
    ],
    "missing ',' between arguments": [
        "f(1 2)\n",
        "f(a b)\n",
        "f(a, b c)\n",
        "T.grid(128 128)\n",
        "x = [1 2]\n",
        "x = (a b)\n",
        "A[i j] = 1\n",
    ],
}

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _bracket_slip(text: str):
    """An unclosed or unmatched bracket, as ``(message, line, column)``, or None.

    Strings and comments are skipped, so brackets inside them do not count."""
    stack: list[tuple[str, int, int]] = []
    line, column, i, n = 1, 1, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line, column, i = line + 1, 1, i + 1
            continue
        if ch == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if ch in "\"'":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else ch
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n" and len(quote) == 1:
                    break
                j += 1
            end = min(n, j + len(quote)) if j < n and text[j] != "\n" else j
            segment = text[i:end]
            if "\n" in segment:
                line += segment.count("\n")
                column = len(segment) - segment.rfind("\n")
            else:
                column += len(segment)
            i = max(end, i + 1)
            continue
        if ch in _OPENERS:
            stack.append((ch, line, column))
        elif ch in _CLOSERS:
            if not stack:
                return f"unmatched '{ch}'", line, column
            opener, oline, ocol = stack.pop()
            if opener != _CLOSERS[ch]:
                return f"'{opener}' is closed by '{ch}'", oline, ocol
        i, column = i + 1, column + 1
    if stack:
        opener, oline, ocol = stack[-1]
        return f"unclosed '{opener}'", oline, ocol
    return None


def syntax_error(exc: LarkError, source: SourceInfo, parse_fn) -> TIRSyntaxError:
    """The located TIRSyntaxError for a Lark failure, with a named message when the
    slip is a known one."""
    slip = _bracket_slip(source.text)
    if slip is not None:
        message, line, column = slip
        return source.error(message, line, column)
    if not isinstance(exc, UnexpectedInput):  # the Indenter's DedentError has no position
        found = _inconsistent_dedent(source.text)
        if found is not None:
            return source.error("unindent does not match any outer indentation level", *found)
        return source.error(f"invalid syntax: {str(exc).splitlines()[0]}", None, None)
    label = _match_slip(exc, parse_fn)
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    token = getattr(exc, "token", None)
    if getattr(token, "type", None) == "_INDENT" and token.end_line is not None:
        # the indent token is made from the newline before it: point at the line
        line, column = token.end_line, token.end_column
    if line is None or line < 0:
        line, column = _last_position(source.text)
    if label is not None:
        if label.startswith("missing ':'"):
            line, column = _end_of_previous_code(source.text, exc)
        return source.error(label, line, column)
    return source.error(_describe(exc), line, column, _token_length(exc))


def _match_slip(exc: UnexpectedInput, parse_fn) -> str | None:
    """The label of the example that fails in the same parser state on the same kind
    of token, as ``UnexpectedInput.match_examples`` does; Lark's version also compares
    the depth of the parse stack, so an example written at the top level would never
    match a slip inside a function, and the examples are compared here by state."""
    state = getattr(exc, "state", None)
    token = getattr(exc, "token", None)
    if state is None or token is None:
        return None
    return _slip_signatures(parse_fn).get((state.position, token.type))


_SIGNATURES: dict = {}


def _slip_signatures(parse_fn) -> dict:
    """``(parser state, token type) -> label`` of every example, computed once."""
    if not _SIGNATURES:
        for label, examples in _SLIP_EXAMPLES.items():
            for example in examples:
                try:
                    parse_fn(example)
                except UnexpectedInput as failure:
                    state = getattr(failure, "state", None)
                    token = getattr(failure, "token", None)
                    if state is not None and token is not None:
                        _SIGNATURES.setdefault((state.position, token.type), label)
    return _SIGNATURES


def _inconsistent_dedent(text: str):
    """``(line, column)`` of the first line indented less than its block but not as
    little as an enclosing one (lines inside brackets are continuations)."""
    levels, depth = [0], 0
    for number, line in enumerate(text.splitlines(), start=1):
        code = _code_part(line)
        if depth == 0 and code.strip():
            indent = len(code.expandtabs(8)) - len(code.expandtabs(8).lstrip())
            if indent > levels[-1]:
                levels.append(indent)
            else:
                while indent < levels[-1]:
                    levels.pop()
                if indent != levels[-1]:
                    return number, indent + 1
        depth = max(
            0, depth + sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        )
    return None


def _describe(exc: UnexpectedInput) -> str:
    if isinstance(exc, UnexpectedCharacters):
        char = exc.char if hasattr(exc, "char") else "?"
        return f"invalid character {char!r}"
    if isinstance(exc, UnexpectedEOF):
        return "unexpected end of file"
    token = getattr(exc, "token", None)
    kind = getattr(token, "type", None)
    if kind == "_INDENT":
        return "unexpected indent"
    if kind == "_DEDENT":
        return "unexpected dedent (a block needs at least one statement)"
    if kind == "_NL" or kind == "$END":
        return "unexpected end of line"
    text = str(token) if token is not None else ""
    return f"unexpected {text!r}" if text else "invalid syntax"


def _token_length(exc) -> int:
    token = getattr(exc, "token", None)
    if token is None or getattr(token, "type", "") in ("_NL", "_INDENT", "_DEDENT", "$END"):
        return 1
    return max(1, len(str(token).splitlines()[0]) if str(token) else 1)


def _end_of_previous_code(text: str, exc) -> tuple[int, int]:
    """The position just after the last code character on the line that lacks ':'."""
    token = getattr(exc, "token", None)
    line = getattr(token, "line", None) or getattr(exc, "line", None) or 1
    lines = text.splitlines() or [""]
    # a newline token starts on the line it ends
    line = min(max(1, line), len(lines))
    while line > 1 and not _code_part(lines[line - 1]).strip():
        line -= 1
    code = _code_part(lines[line - 1]).rstrip()
    return line, len(code) + 1


def _code_part(line: str) -> str:
    in_string = None
    for index, ch in enumerate(line):
        if in_string:
            if ch == in_string:
                in_string = None
        elif ch in "\"'":
            in_string = ch
        elif ch == "#":
            return line[:index]
    return line


def _last_position(text: str) -> tuple[int, int]:
    lines = text.rstrip().splitlines() or [""]
    return len(lines), len(lines[-1]) + 1

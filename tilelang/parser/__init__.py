"""The .tir front end: Lark parse tree -> IR, with located diagnostics.

``parse(text, path)`` returns an IRModule (a bare ``@T.prim_func`` is stored under its
name); every failure is a :class:`tilelang.errors.TIRSyntaxError` (type errors are also
:class:`tilelang.errors.TIRTypeError`) that renders as ``error:`` / ``-->`` / source.
"""

from __future__ import annotations

import gc
import io
import sys
import textwrap

from tilelang.errors import TIRSyntaxError

# The builder recurses once per nesting level (a few frames each). This limit is far
# beyond any real program yet low enough that Python stops before the C stack does;
# deeper input is reported as "nested too deeply".
_BUILD_RECURSION_LIMIT = 12_000


def parse(
    text: str,
    path: str | None = None,
    *,
    constants=None,
    aliases=None,
    line_offset=0,
    column_offset=0,
    full_text=None,
):
    """Parse ``.tir`` text into an :class:`tilelang.ir.IRModule`.

    ``constants`` maps names to Python numbers usable in the source, and ``aliases``
    names of the ``T``/``I`` namespaces (the decorators pass what the function's scope
    holds); ``line_offset``/``column_offset``/``full_text`` place an extract in its file
    for diagnostics and spans.
    """
    from lark.exceptions import LarkError

    from tilelang.ir.dtype import DataTypeError
    from tilelang.ir.expr import TIRTypeError
    from tilelang.parser import fast_parse
    from tilelang.parser.builder import build_file
    from tilelang.parser.diagnostics import SourceInfo, TIRLocatedTypeError, syntax_error
    from tilelang.parser.fast_lexer import Bail
    from tilelang.parser.grammar_loader import get_parser

    if not isinstance(text, str):
        raise TypeError(f"parse() takes the program text as a str, not {type(text).__name__}")
    dedented, margin = _dedent(text)
    if margin:
        # an indented program (copied from inside a class or function) reads as if
        # it started in column 1; positions still point into the text as given
        full_text = text if full_text is None else full_text
        text, column_offset = dedented, column_offset + margin
    source = SourceInfo(text, path, line_offset, full_text, column_offset)
    parser = get_parser()
    padded = text if text.endswith("\n") else text + "\n"
    # Parsing allocates many small acyclic objects; the cycle collector would rescan
    # the growing heap again and again (measured: a third of the time on 10k lines).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    old_limit = sys.getrecursionlimit()
    builder_state = {}
    try:
        sys.setrecursionlimit(max(old_limit, _BUILD_RECURSION_LIMIT))
        try:
            # the fast front end builds Lark's tree; what it declines (errors, rare
            # forms) Lark parses, so trees and diagnostics are Lark's either way
            tree = fast_parse.parse_tree(padded)
        except Bail:
            try:
                tree = parser.parse(padded)
            except LarkError as exc:
                raise syntax_error(exc, source, parser.parse) from None
        return build_file(tree, source, constants, builder_state, aliases)
    except RecursionError:
        where = getattr(builder_state.get("builder"), "last_tree", None)
        raise source.error_at(where, "the program is nested too deeply") from None
    except (TIRTypeError, DataTypeError) as exc:
        if isinstance(exc, TIRSyntaxError):
            raise
        # an IR error no builder step located: at least the statement it came from
        where = getattr(builder_state.get("builder"), "last_tree", None)
        raise source.error_at(where, str(exc), TIRLocatedTypeError) from None
    finally:
        sys.setrecursionlimit(old_limit)
        if gc_was_enabled:
            # (not when the caller froze objects: unfreeze would thaw theirs too)
            if gc.get_count()[0] > _LONG_LIVED and gc.get_freeze_count() == 0:
                _to_oldest_generation()
            gc.enable()


#: a parse that leaves more new container objects than this hands them to the oldest
#: generation (about 100 lines of source)
_LONG_LIVED = 10_000


def _to_oldest_generation() -> None:
    """Moves every tracked object to the oldest GC generation, without a traversal.

    The IR a parse returns is acyclic and long-lived; with the collector off while
    parsing, all of it sits in the youngest generation, and the first collection after
    the parse would traverse all of it (then the middle generation again) only to
    promote it: a second of a 10 MB parse. ``freeze`` + ``unfreeze`` splices the lists
    instead. Young objects of the caller are promoted too; they are still collected,
    by the next full collection."""
    gc.freeze()
    gc.unfreeze()


def _first_line(text: str) -> str:
    return next((line for line in io.StringIO(text) if line.strip()), "").rstrip("\n")


def _dedent(text: str) -> tuple[str, int]:
    """``text`` without the indentation all its lines share, and that indentation's
    width (the common case, a first line in column 1, costs one line's look)."""
    first = _first_line(text)
    if not first[:1].isspace():
        return text, 0
    dedented = textwrap.dedent(text)
    return dedented, len(first) - len(_first_line(dedented))


def parse_file(path) -> object:
    """Parse a ``.tir`` file; unreadable or non-UTF-8 files are a TIRSyntaxError."""
    path = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise TIRSyntaxError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_bytes(data, path)


def parse_bytes(data: bytes, path: str | None = None) -> object:
    """Parse ``.tir`` source given as bytes (UTF-8); other encodings are an error that
    points at the first byte that is not UTF-8."""
    try:
        text = data.decode("utf-8-sig")  # a leading BOM is not part of the program
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TIRSyntaxError(
            f"the file is not UTF-8 text (byte 0x{data[exc.start]:02x})", path, line, column
        ) from None
    return parse(text, path)


__all__ = ["parse", "parse_file", "parse_bytes"]

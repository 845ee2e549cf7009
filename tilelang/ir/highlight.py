"""``show()``: print an IR node's TVMScript, syntax-highlighted where that helps.

``mod.show()``, ``func.show()`` and ``sch.mod.show()`` print through :func:`cprint`:

- in a Jupyter notebook (``ipykernel`` loaded) with Pygments installed: highlighted HTML
  through ``IPython.display``;
- in a terminal (stdout is a tty) with Pygments installed: ANSI colours;
- otherwise (no Pygments, output piped to a file or captured): the plain text, exactly
  what ``script()`` returns, so logs and doctests stay clean.

``style`` is a Pygments style name (default: ``$TILELANG_PYGMENTIZE_STYLE``, else
``"default"`` in a notebook and ``"monokai"`` in a terminal); ``style="plain"`` never
highlights. ``black_format=True`` reformats the text with ``black`` (or ``ruff format``)
to black's line width when one of them is installed, and prints it unchanged with a
warning when neither is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings

#: the environment variable naming the default Pygments style
STYLE_ENV = "TILELANG_PYGMENTIZE_STYLE"


def cprint(printable, style: str | None = None, black_format: bool = False, file=None) -> None:
    """Print ``printable`` (an IR node, anything with ``script()``, or a string)."""
    text = as_text(printable)
    if black_format:
        text = format_code(text)
    stream = sys.stdout if file is None else file
    notebook = "ipykernel" in sys.modules
    style = _style(style, notebook, stream)
    if style is None:
        print(text, file=stream)
        return
    from pygments import highlight
    from pygments.lexers.python import Python3Lexer

    if notebook and file is None:
        from IPython import display
        from pygments.formatters import HtmlFormatter

        html = highlight(text, Python3Lexer(), HtmlFormatter(style=style, noclasses=True))
        display.display(display.HTML(html))
        return
    from pygments.formatters import Terminal256Formatter

    print(highlight(text, Python3Lexer(), Terminal256Formatter(style=style)), end="", file=stream)


def as_text(printable) -> str:
    if isinstance(printable, str):
        return printable
    script = getattr(printable, "script", None)
    if callable(script):
        return script()
    raise TypeError(f"show() prints IR nodes or strings, not {type(printable).__name__}")


def _style(style: str | None, notebook: bool, stream) -> str | None:
    """The Pygments style to highlight with, or None for plain text."""
    if style is None:
        style = os.environ.get(STYLE_ENV) or None
    if style == "plain":
        return None
    if not notebook and not _is_terminal(stream):
        return None
    try:
        import pygments.styles
    except ImportError:
        return None
    if style is None:
        return "default" if notebook else "monokai"
    try:
        pygments.styles.get_style_by_name(style)
    except Exception:  # pygments.util.ClassNotFound
        known = ", ".join(sorted(pygments.styles.get_all_styles()))
        raise ValueError(f"unknown Pygments style {style!r}; known styles: {known}") from None
    return style


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def format_code(text: str) -> str:
    """``text`` reformatted by ``black`` (or ``ruff format``); unchanged, with a warning,
    when neither is installed or the formatter rejects it."""
    try:
        import black
    except ImportError:
        black = None
    if black is not None:
        try:
            return black.format_str(text, mode=black.FileMode())
        except Exception as exc:  # black's own parse errors: keep the printer's text
            warnings.warn(f"black could not format the script ({exc}); printed as is", stacklevel=3)
            return text
    if shutil.which("ruff") is not None:
        done = subprocess.run(
            ["ruff", "format", "--stdin-filename=script.py", "-"],
            input=text, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode == 0:
            return done.stdout
    warnings.warn(
        "black_format=True needs `black` or `ruff` installed; printed as is", stacklevel=3
    )
    return text


__all__ = ["cprint", "format_code", "STYLE_ENV"]

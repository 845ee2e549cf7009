"""show() and script(show_meta=...): what the MLC course prints with, in our words."""

from __future__ import annotations

import io
import sys
import types

import pytest

import tilelang
from tilelang.ir.highlight import cprint

pygments = pytest.importorskip("pygments")

SOURCE = """
@T.prim_func
def add_one(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = A[i] + T.float32(1)
"""


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def mod():
    return tilelang.parse(SOURCE)


def test_show_prints_plain_text_when_output_is_not_a_terminal(mod, capsys):
    mod.show()
    mod["add_one"].show()
    out = capsys.readouterr().out
    assert out == mod.script() + "\n" + mod["add_one"].script() + "\n"
    assert "\x1b[" not in out  # no colour codes in pipes and logs


def test_schedule_mod_show_is_the_module_text(mod, capsys):
    sch = tilelang.tir.Schedule(mod)
    sch.mod.show()
    sch.show()
    out = capsys.readouterr().out
    assert out == 2 * (sch.mod.script() + "\n")


def test_show_highlights_in_a_terminal(mod):
    stream = FakeTerminal()
    cprint(mod, file=stream)
    text = stream.getvalue()
    assert "\x1b[" in text  # ANSI colours
    # the colours wrap the text; without them it is the script
    import re

    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert plain.rstrip("\n") == mod.script()


def test_style_plain_and_environment_style(mod, monkeypatch):
    stream = FakeTerminal()
    cprint(mod, style="plain", file=stream)
    assert stream.getvalue() == mod.script() + "\n"
    monkeypatch.setenv("TILELANG_PYGMENTIZE_STYLE", "plain")
    stream = FakeTerminal()
    cprint(mod, file=stream)
    assert stream.getvalue() == mod.script() + "\n"


def test_unknown_style_is_a_clear_error(mod):
    with pytest.raises(ValueError, match="unknown Pygments style 'no-such-style'"):
        cprint(mod, style="no-such-style", file=FakeTerminal())


def test_notebook_gets_html(mod, monkeypatch):
    shown = []
    display = types.SimpleNamespace(HTML=lambda html: ("html", html), display=shown.append)
    fake_ipython = types.ModuleType("IPython")
    fake_ipython.display = display
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setitem(sys.modules, "IPython", fake_ipython)
    mod.show()
    ((kind, html),) = shown
    assert kind == "html" and "<span" in html and "add_one" in html


def test_without_pygments_show_prints_plain_text(mod, monkeypatch):
    monkeypatch.setitem(sys.modules, "pygments", None)  # import fails
    monkeypatch.setitem(sys.modules, "pygments.styles", None)
    stream = FakeTerminal()
    cprint(mod, file=stream)
    assert stream.getvalue() == mod.script() + "\n"


def test_black_format_uses_black_when_installed(mod, monkeypatch, capsys):
    fake_black = types.ModuleType("black")
    fake_black.FileMode = lambda: "mode"
    fake_black.format_str = lambda text, mode: text.replace("    ", "  ")
    monkeypatch.setitem(sys.modules, "black", fake_black)
    mod.show(black_format=True)
    assert capsys.readouterr().out == mod.script().replace("    ", "  ") + "\n"


def test_black_format_without_a_formatter_warns_and_prints_as_is(mod, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "black", None)
    monkeypatch.setenv("PATH", "")  # no ruff either
    with pytest.warns(UserWarning, match="needs `black` or `ruff`"):
        mod.show(black_format=True)
    assert capsys.readouterr().out == mod.script() + "\n"


def test_script_is_a_plain_string_with_show_meta(mod):
    text = mod.script()
    assert type(text) is str  # IPython.display.Code(mod.script(), language="python")
    assert mod.script(show_meta=True) == text == mod.script(show_meta=False)
    # the text is complete either way: it parses back
    tilelang.ir.assert_structural_equal(tilelang.parse(mod.script(show_meta=True)), mod)
    with pytest.raises(TypeError, match="show_meta must be True or False"):
        mod.script(show_meta="yes")


def test_show_rejects_what_is_not_ir():
    with pytest.raises(TypeError, match="show\\(\\) prints IR nodes or strings"):
        cprint(42)

"""tilelang.runtime.compiler: the one way backends run compilers and report failures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tilelang.errors import BuildError
from tilelang.runtime.compiler import explain, extern_inputs, run_tool

TEXT = "line one\nline two\nline three\nline four\n"


@pytest.mark.parametrize(
    "message, filename",
    [("module.c:3:7: error: bad", "module.c"), ("module.cu(3): error: bad", "module.cu")],
    ids=["gcc", "nvcc"],
)
def test_explain_quotes_the_line_and_its_neighbours(message, filename):
    text = explain(message, filename, TEXT, "C")
    assert text.splitlines()[1:] == [
        "",
        f"generated C ({filename}):",
        "  2 | line two",
        "> 3 | line three",
        "  4 | line four",
    ]


def test_explain_ignores_other_files_and_lines_outside_the_text():
    for message in ("extern_0.c:3:1: error", "module.c:99:1: error", "module.cu(3): error"):
        assert explain(message, "module.c", TEXT, "C") == message


def test_run_tool_failure_names_the_tool_the_command_and_the_generated_line():
    command = [sys.executable, "-c", "import sys; sys.exit('module.c:2: error: no')"]
    with pytest.raises(BuildError) as info:
        run_tool(command, "the checker", "C", generated=("module.c", TEXT))
    message = str(info.value)
    assert message.startswith("the checker failed on C (exit status 1):\n$ ")
    assert "module.c:2: error: no" in message and "> 2 | line two" in message


def test_run_tool_returns_the_messages_of_a_success():
    command = [sys.executable, "-c", "import sys; print('warning: w', file=sys.stderr)"]
    assert run_tool(command, "the checker", "C") == "warning: w"


def test_run_tool_that_cannot_start_is_a_build_error(tmp_path):
    with pytest.raises(BuildError, match="running the checker for C failed"):
        run_tool([str(tmp_path / "missing")], "the checker", "C")


def test_extern_inputs_files_and_text(tmp_path):
    source = tmp_path / "lib.c"
    source.write_text("int f(void) { return 1; }\n")
    text = "int g(void) {\n  return 2;\n}\n"
    paths, contents = extern_inputs([source, str(source), text], tmp_path)
    assert paths[:2] == [str(source.resolve())] * 2
    assert Path(paths[2]).read_text() == text and contents[2] == text.encode()
    with pytest.raises(BuildError, match="extern source .*nothing.c does not exist"):
        extern_inputs([tmp_path / "nothing.c"], tmp_path)

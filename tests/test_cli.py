"""``tilec``: exit status 0 / 1 / 2, diagnostics on stderr, never a Python traceback.

Each case runs the real command in a subprocess (``python -m tilelang.cli``, the same
``main`` as the ``tilec`` console script).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tilelang

SAMPLES = Path(__file__).parent.parent / "samples"


def tilec(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelang.cli", *map(str, args)],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
        cwd=cwd,
    )


def assert_no_traceback(result):
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr


def test_emit_tir_prints_the_canonical_form():
    result = tilec(SAMPLES / "mm_relu.tir", "--emit", "tir")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    mod = tilelang.parse_file(SAMPLES / "mm_relu.tir")
    assert result.stdout == mod.script().rstrip("\n") + "\n"
    # the output is itself a program that means the same
    assert tilelang.parse(result.stdout).script() == mod.script()


def test_output_file(tmp_path):
    out = tmp_path / "out.tir"
    result = tilec(SAMPLES / "linear0.tir", "-o", out)
    assert result.returncode == 0 and result.stdout == ""
    assert "def linear0(" in out.read_text()


BAD_INPUTS = {
    "semantic error": b'@T.prim_func\ndef f(A: T.Buffer((8,), "float32")):\n    A[0] = B[0]\n',
    "syntax error": b"@T.prim_func\ndef f(A: T.Buffer(8)):\n    for i in range(8)\n        pass\n",
    "binary garbage": bytes(range(256)) * 8,
    "not utf-8": b"@T.prim_func\ndef f():\n    x = '\xe9t\xe9'\n",
    "empty file": b"",
    "deep nesting": b'@T.prim_func\ndef f(A: T.Buffer((8,), "float32")):\n    A[0] = '
    + b"(" * 5000
    + b"1.0"
    + b")" * 5000
    + b"\n",
    "deep expression": b"@T.prim_func\ndef f(n: T.int32):\n    T.evaluate("
    + b"(n + " * 5000
    + b"1"
    + b")" * 5000
    + b")\n",
}


@pytest.mark.parametrize("name", BAD_INPUTS, ids=BAD_INPUTS.keys())
def test_bad_programs_exit_1_with_a_diagnostic(tmp_path, name):
    path = tmp_path / "bad.tir"
    path.write_bytes(BAD_INPUTS[name])
    result = tilec(path, "--emit", "tir")
    assert_no_traceback(result)
    if name == "deep nesting":  # 5,000 redundant parentheses are still a valid program
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")


def test_diagnostic_format_on_stderr(tmp_path):
    path = tmp_path / "typo.tir"
    path.write_text(
        '@T.prim_func\ndef f(A: T.Buffer((8,), "float32")):\n'
        '    for i in range(8):\n        with T.blok("Y"):\n            A[i] = 0.0\n'
    )
    result = tilec(path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: unknown function T.blok; did you mean T.block?",
        f" --> {path}:4:14",
        "  |",
        '4 |         with T.blok("Y"):',
        "  |              ^^^^^^",
    ]


def test_missing_file_exits_1():
    result = tilec("no/such/file.tir")
    assert result.returncode == 1
    assert "cannot read no/such/file.tir" in result.stderr
    assert_no_traceback(result)


@pytest.mark.parametrize(
    "args",
    [(), ("--emit",), ("x.tir", "--emit", "nonsense"), ("x.tir", "--bogus")],
    ids=["no file", "emit without value", "unknown emitter", "unknown option"],
)
def test_bad_usage_exits_2(args):
    result = tilec(*args)
    assert result.returncode == 2
    assert "usage: tilec" in result.stderr
    assert_no_traceback(result)


def test_emitter_table_is_the_extension_point():
    from tilelang import cli

    assert "tir" in cli.EMITTERS
    emitter, help_text = cli.EMITTERS["tir"]
    assert callable(emitter) and help_text
    mod = tilelang.parse_file(SAMPLES / "window_sum.tir")
    assert emitter(mod, None) == mod.script()

"""Strings from a program never become code in what a backend generates.

A ``.tir`` file is untrusted input: every name and string it carries (attribute keys
and values, scopes, function symbols) must reach generated source escaped. Each case
puts a payload that would create a marker file if it ever ran, builds and runs the
function, and checks the marker is absent and the result is still right.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from conftest import available_targets

import tilelang
from tilelang.parser import parse

# Each payload tries to end a comment, string or identifier and start a statement.
PAYLOADS = [
    "k\nopen(MARKER, 'w').write('x')\n#",
    "k\r    open(MARKER, 'w').write('x')\r#",
    "k\x0bopen(MARKER, 'w')",
    "k\u2028open(MARKER, 'w')",
    "*/ int injected; /*",
    '"); open(MARKER, "w"); ("',
    "k\\\nopen(MARKER, 'w')",
]

PROGRAM = """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    T.func_attr({{"global_symbol": {symbol}}})
    B = T.alloc_buffer((4,), "float32", scope={scope})
    with T.attr(0, {key}, {value}):
        for i in range(4):
            B[i] = T.float32(i)
    for i in range(4):
        A[i] = B[i] + T.float32(1)
"""


def _literal(text: str) -> str:
    """``text`` as a TVMScript string literal."""
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def _program(marker, position: str, payload: str) -> str:
    text = payload.replace("MARKER", repr(str(marker)))
    fields = {"symbol": '"f"', "scope": '"global"', "key": '"pragma_k"', "value": '"v"'}
    fields[position] = _literal(text)
    return PROGRAM.format(**fields)


# A user scope is only ever shown by the python backend (as a comment); c and llvm
# allocate by storage class and never print it.
CASES = [
    (target, position)
    for target in available_targets("python", "c", "llvm")
    for position in ("symbol", "key", "value", "scope")
    if position != "scope" or target == "python"
]


@pytest.mark.parametrize("target,position", CASES)
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: repr(p)[1:12])
def test_payload_is_inert(tmp_path, target, position, payload):
    marker = tmp_path / "marker"
    func = parse(_program(marker, position, payload))
    lib = tilelang.build(func, target=target)
    source = lib.get_source()
    (name,) = lib.function_names
    a = np.zeros(4, "float32")
    lib[name](a)
    assert not marker.exists(), f"the payload ran:\n{source}"
    np.testing.assert_array_equal(a, np.arange(4, dtype="float32") + 1)


def test_python_comment_is_one_line():
    from tilelang.backends.python.names import comment

    for payload in PAYLOADS:
        text = comment(payload)
        assert text.startswith("# ") and text.isascii()
        assert len(text.splitlines()) == 1 and "\r" not in text and "\n" not in text


@pytest.mark.parametrize("target", available_targets("python", "c", "llvm"))
def test_function_names_sanitised_apart(target):
    """Two symbols that sanitise (or NFKC-normalise) to the same identifier stay two
    functions, and two buffers so named stay two buffers."""
    text = """
@I.ir_module
class M:
    @T.prim_func
    def a(A: T.Buffer((1,), "float32")):
        T.func_attr({"global_symbol": "f-x"})
        A[0] = T.float32(1)

    @T.prim_func
    def b(A: T.Buffer((1,), "float32")):
        T.func_attr({"global_symbol": "f+x"})
        A[0] = T.float32(2)
"""
    lib = tilelang.build(parse(text), target=target)
    for key, want in (("a", 1), ("b", 2)):
        out = np.zeros(1, "float32")
        lib[key](out)
        assert out[0] == want
    # "ﬁ" (a ligature) NFKC-normalises to "fi"; "x-y" and "x+y" sanitise alike
    two = parse("""
@T.prim_func
def g(fi: T.Buffer((1,), "float32"), \ufb01: T.Buffer((1,), "float32")):
    fi[0] = \ufb01[0] + T.float32(1)
""")
    a, b = np.zeros(1, "float32"), np.full(1, 5, "float32")
    tilelang.build(two, target=target)["g"](a, b)
    assert (a[0], b[0]) == (6, 5)


# ------------------------------------------------------------------ more positions

THREAD_PROGRAM = """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread={tag}):
        A[i] = T.float32(i) + T.float32(1)
"""


@pytest.mark.parametrize("target", available_targets("python", "c", "llvm"))
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: repr(p)[1:12])
def test_thread_tag_is_inert(tmp_path, target, payload):
    """A CPU backend runs a loop bound to an unknown thread tag serially; the tag may
    reach a comment, escaped."""
    marker = tmp_path / "marker"
    text = payload.replace("MARKER", repr(str(marker)))
    lib = tilelang.build(parse(THREAD_PROGRAM.format(tag=_literal(text))), target=target)
    a = np.zeros(4, "float32")
    lib["f"](a)
    assert not marker.exists(), lib.get_source()
    np.testing.assert_array_equal(a, np.arange(4, dtype="float32") + 1)
    if target == "c":
        assert not _code_lines_with(lib.get_source(), "int injected;")


def _code_lines_with(source: str, fragment: str) -> list[str]:
    """The lines of C-like ``source`` holding ``fragment`` outside a ``//`` comment."""
    return [line for line in source.splitlines() if fragment in line.split("//")[0]]


@pytest.mark.parametrize("target", available_targets("python", "c", "llvm"))
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: repr(p)[1:12])
def test_extern_name_is_never_code(target, payload):
    """An extern name that is no identifier is a BuildError on every backend."""
    text = f"""
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    A[0] = T.call_extern("int32", {_literal(payload)}, 1)
"""
    with pytest.raises(tilelang.BuildError):
        tilelang.build(parse(text), target=target)


def test_c_comment_and_header_names_stay_on_their_line():
    from tilelang.backends.c.literals import c_comment, c_header_name

    for payload in PAYLOADS + ["x\\", "x??/", "\u00e9\u2028"]:
        text = c_comment(payload)
        assert text.startswith("// ") and text.isascii() and len(text.splitlines()) == 1
        assert "\\\\" not in text.replace("\\x", "") and "?" not in text and "*/" not in text
    assert c_header_name("<stdio.h>") == "<stdio.h>" and c_header_name("a.h") == '"a.h"'
    for bad in ["<a>\n#define X>", 'a"b', "a\\\nb", "", "<>"]:
        with pytest.raises(tilelang.BuildError):
            c_header_name(bad)


CUDA_PROGRAM = """
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    T.func_attr({{"global_symbol": {symbol}}})
    for b in T.thread_binding(2, thread="blockIdx.x"):
        for t in T.thread_binding(32, thread="threadIdx.x"):
            with T.attr(0, {key}, {value}):
                A[b * 32 + t] = T.float32(1)
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("position", ["symbol", "key", "value", "thread"])
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: repr(p)[1:12])
def test_cuda_source_is_never_injected(tmp_path, monkeypatch, position, payload):
    """Compiled by nvcc (no GPU needed): the payload never appears as code, and a thread
    tag the backend does not know is a BuildError."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    fields = {"symbol": '"f"', "key": '"pragma_k"', "value": '"v"'}
    if position == "thread":
        text = CUDA_PROGRAM.format(**fields).replace('"threadIdx.x"', _literal(payload))
        with pytest.raises(tilelang.BuildError, match="bound to"):
            tilelang.build(parse(text), target="cuda -arch=sm_90")
        return
    fields[position] = _literal(payload)
    lib = tilelang.build(parse(CUDA_PROGRAM.format(**fields)), target="cuda -arch=sm_90")
    source = lib.get_source()
    assert payload not in source
    assert not _code_lines_with(source, "int injected;") and not _code_lines_with(source, "open(")
    assert lib.backend_module.compile_log == ""

"""Strings from a program never become code in what a backend generates.

A ``.tir`` file is untrusted input: every name and string it carries (attribute keys
and values, scopes, function symbols) must reach generated source escaped. Each case
puts a payload that would create a marker file if it ever ran, builds and runs the
function, and checks the marker is absent and the result is still right.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.parser import parse

from conftest import available_targets

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

PROGRAM = '''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    T.func_attr({{"global_symbol": {symbol}}})
    B = T.alloc_buffer((4,), "float32", scope={scope})
    with T.attr(0, {key}, {value}):
        for i in range(4):
            B[i] = T.float32(i)
    for i in range(4):
        A[i] = B[i] + T.float32(1)
'''


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


def test_python_function_names_sanitised_apart():
    """Two symbols that sanitise to the same identifier stay two functions."""
    text = '''
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
'''
    lib = tilelang.build(parse(text), target="python")
    for key, want in (("a", 1), ("b", 2)):
        out = np.zeros(1, "float32")
        lib[key](out)
        assert out[0] == want

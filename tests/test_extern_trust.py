"""Running a program runs only what it declares (tilelang/runtime/externs.py).

A ``T.call_extern`` name that would resolve to a function outside the program's extern
sources and libs, libm, the OpenMP runtime and registered libraries (libc's
``system``) is a located BuildError at build time, before anything runs, unless the
user allows it by name.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import available_targets

import tilelang
from tilelang.parser import parse

NATIVE = available_targets("c", "llvm")

CALLS = """
@T.prim_func
def f(A: T.Buffer((1,), "int32")):
    A[0] = T.call_extern("int32", "{name}")
"""


@pytest.mark.parametrize("target", NATIVE)
@pytest.mark.parametrize("name", ["system", "getpid", "abort"])
def test_libc_function_is_a_located_error(target, name):
    text = CALLS.format(name=name)
    with pytest.raises(tilelang.BuildError) as info:
        tilelang.build(parse(text, "prog.tir"), target=target)
    message = str(info.value)
    assert message.startswith("prog.tir:4:12: ") and repr(name) in message
    assert "allow_extern" in message and f"--allow-extern {name}" in message


@pytest.mark.parametrize("target", NATIVE)
def test_allowed_by_name_it_runs(target):
    lib = tilelang.build(parse(CALLS.format(name="getpid")), target=target,
                         allow_extern=("getpid",))  # fmt: skip
    out = np.zeros(1, "int32")
    lib["f"](out)
    assert out[0] == os.getpid()


@pytest.mark.parametrize("target", NATIVE)
def test_allowing_one_name_allows_no_other(target):
    with pytest.raises(tilelang.BuildError, match="'getpid'"):
        tilelang.build(parse(CALLS.format(name="getpid")), target=target,
                       allow_extern=("system",))  # fmt: skip


@pytest.mark.parametrize("target", NATIVE)
def test_libm_and_the_programs_own_sources_need_no_opt_in(target):
    text = """
@T.prim_func
def f(A: T.Buffer((2,), "float64")):
    A[0] = T.call_extern("float64", "cbrt", A[0])
    A[1] = T.call_extern("float64", "tl_twice", A[1])
"""
    source = "double tl_twice(double x) { return 2 * x; }"
    lib = tilelang.build(parse(text), target=target, extern_sources=[source])
    a = np.array([27.0, 4.0])
    lib["f"](a)
    np.testing.assert_allclose(a, [3.0, 8.0])


@pytest.mark.parametrize("target", NATIVE)
def test_a_libs_library_is_declared(target):
    """Functions of a library passed as ``libs`` may be called (here libc itself: the
    user named it)."""
    lib = tilelang.build(parse(CALLS.format(name="getpid")), target=target, libs=["c"])
    out = np.zeros(1, "int32")
    lib["f"](out)
    assert out[0] == os.getpid()


def test_python_backend_runs_only_registered_functions():
    with pytest.raises(tilelang.BuildError, match="register_extern"):
        tilelang.build(parse(CALLS.format(name="system")), target="python")


def test_tilec_refuses_then_allows(tmp_path):
    path = tmp_path / "prog.tir"
    path.write_text(CALLS.format(name="getpid"))

    def tilec(*args):
        command = [sys.executable, "-m", "tilelang.cli", str(path), "--target", "c", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=300)

    refused = tilec("--run")
    assert refused.returncode != 0 and "prog.tir:4:12" in refused.stderr
    assert "Traceback" not in refused.stderr
    allowed = tilec("--run", "--allow-extern", "getpid")
    assert allowed.returncode == 0, allowed.stderr

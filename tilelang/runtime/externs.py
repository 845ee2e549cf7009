"""Which functions a compiled program may call: the trust model of ``call_extern``.

Compiling an untrusted ``.tir`` file is safe (no string of it becomes code), and
running it runs only what it declares. A ``T.call_extern`` name may resolve to

* a function of the program's own ``extern_sources`` or ``libs`` (what the caller of
  ``build`` passed), or of a library loaded with
  ``tilelang.backends.llvm.load_library``;
* libm, or the OpenMP runtime (libgomp), which compiled code uses itself;
* nothing in the process (then it is a header's inline function, or the backend
  reports it as undefined).

A name that resolves anywhere else in the process -- ``system``, ``execve``, ``dlopen``
in libc -- is a located BuildError unless the user opts in by name:
``build(..., allow_extern=("system",))`` or ``tilec --allow-extern system``. The
Python backend has its own, stricter rule: only functions registered with
``register_extern`` exist there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from functools import cache

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.functor import post_order_visit
from tilelang.runtime.compiler import compile_extern_library

#: libraries every compiled program may call into (names for find_library)
RUNTIME_LIBRARIES = ("m", "gomp", "mvec")

#: libraries the user made visible to extern calls in this process (load_library)
_user_libraries: set[str] = set()


def declare_library(path) -> None:
    """Record ``path`` as a library whose functions programs may call."""
    _user_libraries.add(os.path.realpath(str(path)))


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p),
    ]  # fmt: skip


@cache
def _dladdr():
    libdl = ctypes.CDLL(ctypes.util.find_library("dl") or None)
    fn = libdl.dladdr
    fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    fn.restype = ctypes.c_int
    return fn


def defining_library(handle: ctypes.CDLL, name: str) -> str | None:
    """The file of the shared object that defines ``name`` as ``handle`` sees it, or
    None when ``name`` does not resolve there."""
    try:
        address = ctypes.cast(getattr(handle, name), ctypes.c_void_p).value
    except AttributeError:
        return None
    info = _DlInfo()
    if not address or not _dladdr()(address, ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode())


def extern_calls(mod) -> dict:
    """``name -> the first Call node`` for every ``call_extern`` in ``mod``."""
    calls: dict = {}

    def visit(node):
        if isinstance(node, E.Call) and node.op == "call_extern":
            callee = node.args[0] if node.args else None
            if isinstance(callee, E.StringImm):
                calls.setdefault(callee.value, node)

    for _, func in mod.functions.items():
        post_order_visit(func.body, visit)
    return calls


@cache
def _runtime_libraries() -> tuple:
    """libm and the OpenMP runtime, opened (those that exist here)."""
    opened = []
    for name in RUNTIME_LIBRARIES:
        found = ctypes.util.find_library(name)
        if found:
            try:
                opened.append(ctypes.CDLL(found))
            except OSError:
                continue
    return tuple(opened)


def _defines(handle: ctypes.CDLL, name: str) -> bool:
    """Whether the library ``handle`` itself (not a library it depends on) defines
    ``name``: libm's ``sqrt``, but not libc's ``system`` that libm can also see."""
    found = defining_library(handle, name)
    # dlopen of an object already loaded returns its handle: the same object
    return found is not None and _open(found)._handle == handle._handle


def _where(call) -> str:
    span = getattr(call, "span", None)
    if span is None or getattr(span, "line", None) is None:
        return ""
    return f"{span.source or '<string>'}:{span.line}:{span.column}: "


def check_extern_calls(mod, options, allow_extern=()) -> None:
    """Raise a BuildError for a ``call_extern`` in ``mod`` that would run a function the
    program does not declare (see the module docstring); ``options`` are the build
    options (``extern_sources``, ``libs``). Checked before the backend compiles."""
    calls = extern_calls(mod)
    process = ctypes.CDLL(None)
    suspects = {}
    for name, call in calls.items():
        if name in allow_extern or any(_defines(lib, name) for lib in _runtime_libraries()):
            continue
        found = defining_library(process, name)
        if found is not None and found not in _user_libraries:
            suspects[name] = (call, found)
    if not suspects:
        return
    declared = [*library_paths(options.get("libs", ())), *_user_libraries]
    built = compile_extern_library(options.get("extern_sources", ()), "llvm-extern")
    declared += [str(built)] if built is not None else []
    for name, (call, found) in suspects.items():
        if any(_library_defines(path, name) for path in declared):
            continue
        raise BuildError(
            f"{_where(call)}T.call_extern of {name!r} would run {found}'s {name}, which "
            "the program does not declare: a program runs only its own extern sources, "
            "libs, libm and registered functions. To allow it, pass "
            f"allow_extern=({name!r},) to build (tilec: --allow-extern {name})"
        )


def library_paths(libs) -> list[str]:
    """Loadable paths of the libraries in a ``libs`` build option (``"m"``, ``"-lfoo"``
    or a path); flags and libraries not found are left to the linker."""
    found = []
    for lib in libs:
        text = str(lib)
        if "/" in text:
            found.append(os.path.realpath(text))
        elif ".so" in text or text.endswith(".a"):
            found.append(text)  # a file name the dynamic loader searches for
        elif not text.startswith("-") or text.startswith("-l"):
            name = ctypes.util.find_library(text[2:] if text.startswith("-l") else text)
            found += [name] if name else []
    return found


def _library_defines(path: str, name: str) -> bool:
    try:
        return _defines(_open(path), name)
    except OSError:  # a static library or object: linked in, not loadable
        return False


@cache
def _open(path: str) -> ctypes.CDLL:
    return ctypes.CDLL(path)


__all__ = ["check_extern_calls", "declare_library", "defining_library", "extern_calls"]

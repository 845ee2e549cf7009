"""The reference Python backend (target ``"python"``): lowered IR as low-level NumPy.

It is the oracle the other backends are tested against, so it follows the machine's
semantics exactly: float32 arithmetic in float32, integers wrapping at their width,
C's truncating ``Div``/``Mod``, floor ``FloorDiv``/``FloorMod``, C casts,
``Select`` evaluating both sides and ``if_then_else`` only the one taken. Parallel,
vectorized and thread loops run sequentially.

``call_extern("f", ...)`` calls the Python callable registered with
:func:`register_extern` under ``"f"``; a pointer argument (``A.access_ptr(...)``)
arrives as a writable 1-D NumPy view of the buffer from that offset. Building a
module that calls an unregistered function is a :class:`~tilelang.errors.BuildError`.

Contract with the runtime (see :mod:`tilelang.runtime`): ``build(lowered_mod,
target)`` returns a :class:`PythonModule` whose ``functions[name]`` take the checked
arguments (arrays, scalars, then the ``tl.size_vars`` values).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tilelang.backends.python.codegen import function_source
from tilelang.backends.python.fragments import NAMESPACE as FRAGMENT_NAMESPACE
from tilelang.backends.python.names import NameTable
from tilelang.backends.python.support import NAMESPACE

from tilelang.errors import BuildError
from tilelang.ir import IRModule, PrimFunc
from tilelang.transform.legalize_bf16 import legalize_bf16_module
from tilelang.transform.verify_lowered import verify_lowered

# The one registry of this backend: extern name -> Python callable.
_EXTERNS: dict[str, Callable] = {}


def register_extern(name: str, fn: Callable | None = None, *, override: bool = False):
    """Register ``fn`` as the implementation of ``T.call_extern(dtype, name, ...)``.

    Usable as a decorator (``@register_extern("tmm16")``). Registering a name twice is
    an error unless ``override=True``.
    """

    def register(f: Callable) -> Callable:
        if name in _EXTERNS and not override:
            raise ValueError(f"an extern {name!r} is already registered for the python backend")
        _EXTERNS[name] = f
        return f

    return register if fn is None else register(fn)


def codegen(lowered_mod: IRModule) -> str:
    """The Python source of every PrimFunc in a lowered module (``tilec --emit python``)."""
    return _generate(lowered_mod)[0]


def _generate(lowered_mod: IRModule):
    if isinstance(lowered_mod, PrimFunc):
        lowered_mod = IRModule({lowered_mod.attrs.get("global_symbol", "main"): lowered_mod})
    verify_lowered(lowered_mod, "python")
    lowered_mod = legalize_bf16_module(lowered_mod)
    parts = ["import numpy as np", ""]
    names, externs = {}, []
    # Functions are defined and looked up by one sanitised, module-unique identifier, so
    # two symbols that sanitise alike are renamed apart, never merged.
    function_names = NameTable()
    for key, func in lowered_mod.functions.items():
        if isinstance(func, PrimFunc):
            names[key] = function_names.fresh(func.attrs.get("global_symbol", key))
    for key, symbol in names.items():
        source, used = function_source(lowered_mod.functions[key], symbol, names)
        parts += [source, "", ""]
        externs += [n for n in used if n not in externs]
    return "\n".join(parts).rstrip() + "\n", names, externs


class PythonModule:
    """Compiled Python functions: ``functions[name](*checked_args)``."""

    def __init__(self, source: str, functions: dict[str, Callable]):
        self.source = source
        self.functions = functions

    def get_source(self, fmt: str = "") -> str:
        return self.source

    def __getitem__(self, name: str) -> Callable:
        return self.functions[name]


def _wrap(fn: Callable) -> Callable:
    def call(*args):
        # Integer wrap-around and division by zero follow the machine, silently.
        with np.errstate(all="ignore"):
            return fn(*args)

    call.__name__ = fn.__name__
    call.__wrapped__ = fn
    return call


def build(lowered_mod: IRModule, target=None, **options) -> PythonModule:
    """Generate, compile and load the Python code of a lowered module."""
    source, names, externs = _generate(lowered_mod)
    missing = [n for n in externs if n not in _EXTERNS]
    if missing:
        raise BuildError(
            f"call_extern of {', '.join(map(repr, missing))} has no Python implementation; "
            "register one with tilelang.backends.python.register_extern(name, fn)"
        )
    namespace = {**NAMESPACE, **FRAGMENT_NAMESPACE, "_extern": {n: _EXTERNS[n] for n in externs}}
    try:
        code = compile(source, "<tilelang python backend>", "exec")
    except (SyntaxError, RecursionError) as exc:
        raise BuildError(f"the generated Python does not compile: {exc}") from exc
    exec(code, namespace)
    functions = {key: _wrap(namespace[symbol]) for key, symbol in names.items()}
    return PythonModule(source, functions)


__all__ = ["build", "codegen", "register_extern", "PythonModule"]

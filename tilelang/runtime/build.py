"""``tilelang.build``: lower a module and hand it to the backend of a target."""

from __future__ import annotations

import inspect

from tilelang.errors import BuildError
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.runtime.externs import check_extern_calls
from tilelang.runtime.module import Module
from tilelang.runtime.registry import get_backend
from tilelang.target import as_target
from tilelang.transform.verify_lowered import verify_lowered


def _as_module(mod_or_func) -> IRModule:
    if isinstance(mod_or_func, IRModule):
        return mod_or_func
    if isinstance(mod_or_func, PrimFunc):
        return IRModule.from_expr(mod_or_func)
    raise BuildError(f"build() takes an IRModule or a PrimFunc, not {type(mod_or_func).__name__}")


def is_lowered(mod: IRModule) -> bool:
    """True when every PrimFunc of ``mod`` is marked ``tl.lowered``."""
    funcs = [f for _, f in mod if isinstance(f, PrimFunc)]
    return bool(funcs) and all(f.attrs.get("tl.lowered") for f in funcs)


def lower_module(mod: IRModule) -> IRModule:
    """``mod`` lowered by the pipeline (unchanged if it is lowered already)."""
    if is_lowered(mod):
        return mod
    try:
        from tilelang.transform import lower
    except ImportError as exc:
        raise BuildError(f"the lowering pipeline is not available: {exc}") from exc
    return lower(mod)


def build(mod_or_func, target="llvm", **build_options) -> Module:
    """Compile an IRModule (or one PrimFunc) for ``target`` and return a :class:`Module`.

    ``target`` is a :class:`tilelang.target.Target` or its spelling (``"c"``,
    ``"llvm -num-cores=2"``, ``"python"``). ``build_options`` go to the backend; the C
    backend takes ``extern_sources`` (C files or source strings compiled in),
    ``extern_headers`` and ``libs``. ``allow_extern``: names ``T.call_extern`` may
    call although the program does not declare them (``"system"`` in libc; see
    :mod:`tilelang.runtime.externs`). Example::

        lib = tilelang.build(mod, target="c")
        lib["mm_relu"](a, b, c)
    """
    allow_extern = tuple(build_options.pop("allow_extern", ()) or ())
    target = as_target(target)
    lowered = lower_module(_as_module(mod_or_func))
    backend = get_backend(target.kind)
    # One check of docs/lowered_ir.md for every backend, so none meets IR it cannot
    # translate (e.g. with FlattenBuffer disabled).
    verify_lowered(lowered, target.kind)
    if build_options:
        accepted = inspect.signature(backend).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
        unknown = [k for k in build_options if k not in accepted and not takes_any]
        if unknown:
            raise BuildError(
                f"the '{target.kind}' backend does not take the option(s) {', '.join(unknown)}"
            )
    if target.kind in ("c", "llvm"):
        # a program runs only the functions it declares (runtime/externs.py)
        check_extern_calls(lowered, build_options, allow_extern)
    return Module(backend(lowered, target, **build_options), lowered, target)


__all__ = ["build", "lower_module", "is_lowered"]

"""The backend registry: target kind -> build function.

A build function has the signature ``build_fn(lowered_mod, target, **build_options)``
and returns a *backend module* (see :mod:`tilelang.runtime` for the contract). The
built-in backends are imported only when a target of their kind is first built; an
outside package adds one by registering it at import time or through the entry-point
group ``tilelang.backends`` (``name = "package.module:build_fn"``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib import metadata

from tilelang.errors import BuildError

ENTRY_POINT_GROUP = "tilelang.backends"

# Built-ins, as "module:attribute", imported on first use.
_BUILTIN: dict[str, str] = {
    "c": "tilelang.backends.c:build",
    "llvm": "tilelang.backends.llvm:build",
    "python": "tilelang.backends.python:build",
    "cuda": "tilelang.backends.cuda:build",
}

# The one piece of module-level mutable state: backends registered by code.
_REGISTERED: dict[str, Callable] = {}


def register_backend(kind: str, build_fn: Callable | None = None, *, override: bool = False):
    """Register ``build_fn`` as the backend for targets of ``kind``.

    Usable directly or as a decorator::

        @register_backend("mytarget")
        def build(lowered_mod, target, **options):
            return MyBackendModule(...)

    Registering a kind twice is an error unless ``override=True``.
    """

    def register(fn: Callable) -> Callable:
        if not callable(fn):
            raise TypeError(f"the backend for {kind!r} must be callable, got {fn!r}")
        if kind in _REGISTERED and not override:
            raise ValueError(f"a backend for target kind {kind!r} is already registered")
        _REGISTERED[kind] = fn
        return fn

    return register if build_fn is None else register(build_fn)


def _entry_points() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def backend_kinds() -> set[str]:
    """Every target kind that can be built: registered, built-in and entry points."""
    return set(_REGISTERED) | set(_BUILTIN) | set(_entry_points())


def get_backend(kind: str) -> Callable:
    """The build function for ``kind``, importing its module on first use."""
    fn = _REGISTERED.get(kind)
    if fn is not None:
        return fn
    if kind in _BUILTIN:
        module_name, _, attribute = _BUILTIN[kind].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise BuildError(f"the {kind!r} backend is not available: {exc}") from exc
        fn = getattr(module, attribute, None)
        if fn is None:
            raise BuildError(f"the {kind!r} backend module {module_name} has no {attribute}()")
    else:
        entry = _entry_points().get(kind)
        if entry is None:
            known = ", ".join(sorted(backend_kinds()))
            raise BuildError(f"no backend for target kind {kind!r}; known kinds: {known}")
        try:
            fn = entry.load()
        except Exception as exc:
            raise BuildError(f"loading the {kind!r} backend ({entry.value}) failed: {exc}") from exc
    _REGISTERED.setdefault(kind, fn)
    return _REGISTERED[kind]


__all__ = ["register_backend", "get_backend", "backend_kinds", "ENTRY_POINT_GROUP"]

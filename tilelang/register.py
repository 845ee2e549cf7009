"""The global function registry (TVM's ``tvm.register_func``).

A registered function is a *packed function* that graph-level code calls by name,
in destination-passing style: ``call_dps_packed("env.linear", (x, w, b), out)``
calls it with the NumPy arrays of the inputs and, last, the preallocated output,
which it fills::

    @tilelang.register_func("env.linear")
    def linear(x, w, b, out):
        np.add(x @ w.T, b, out=out)
"""

from __future__ import annotations

from collections.abc import Callable

from tilelang.errors import ArgumentError

_REGISTRY: dict[str, Callable] = {}


def register_func(func_name=None, f: Callable | None = None, override: bool = False):
    """Registers ``f`` under ``func_name``; used as ``@register_func("name")``,
    ``@register_func`` (the function's own name) or ``register_func("name", f)``.

    Registering a taken name is an error unless ``override=True``.
    """
    if callable(func_name) and f is None:
        return register_func(func_name.__name__, func_name, override)
    if not isinstance(func_name, str) or not func_name:
        raise ArgumentError(f"register_func needs a non-empty name, got {func_name!r}")

    def register(func: Callable) -> Callable:
        if not callable(func):
            raise ArgumentError(f"register_func({func_name!r}) needs a callable")
        if func_name in _REGISTRY and not override:
            raise ArgumentError(
                f"a function is already registered as {func_name!r}; pass override=True "
                "to replace it"
            )
        _REGISTRY[func_name] = func
        return func

    return register if f is None else register(f)


def get_global_func(name: str, allow_missing: bool = False) -> Callable | None:
    """The function registered as ``name`` (None if missing and ``allow_missing``)."""
    func = _REGISTRY.get(name)
    if func is None and not allow_missing:
        raise ArgumentError(f"no function is registered as {name!r}")
    return func


def remove_global_func(name: str) -> None:
    """Forgets the function registered as ``name`` (tests use it to clean up)."""
    _REGISTRY.pop(name, None)


def list_global_func_names() -> list[str]:
    """Names of every registered function, sorted."""
    return sorted(_REGISTRY)

"""IRModule: the named functions of a program (``tilelang.ir.module.IRModule``, TVM's path).

The API is TVM's::

    mod["main"]                          # by name or by GlobalVar
    mod["other"] = func                  # add or replace a function
    gv = mod.get_global_var("main")      # gv.name_hint == "main"
    mod = mod.update_func(gv, new_func)  # (returns the module itself, updated)
    for gv, func in mod.functions.items(): print(gv.name_hint)
    mod = mod.with_attr("key", value)    # a new module

Functions are keyed by name. The keys of ``mod.functions`` are :class:`FunctionName`,
a ``str`` that also answers ``name_hint``, so code written for TVM's GlobalVar keys and
code that compares keys with strings both work.

Nodes are immutable everywhere else; the function table of a module is the one
exception, because TVM programs fill a module in place (``mod["f"] = f``,
``update_func``). Every other operation (``with_attr``, ``with_function``) returns a
new module.
"""

from __future__ import annotations

import attrs

from tilelang.ir.function import BaseFunc, attr_items
from tilelang.ir.node import Node, child, plain, span_field


class FunctionName(str):
    """A function's name as a key of ``IRModule.functions``: a ``str`` with TVM
    GlobalVar's ``name_hint``."""

    __slots__ = ()

    @property
    def name_hint(self) -> str:
        return str(self)

    def __eq__(self, other):
        # a GlobalVar (anything with a string name_hint) names the same function
        if not isinstance(other, str) and isinstance(getattr(other, "name_hint", None), str):
            return str(self) == other.name_hint
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = str.__hash__


def _name_of(key) -> str:
    """The function name of ``key``: a string or anything with ``name_hint`` (a GlobalVar)."""
    if isinstance(key, str):
        return str(key)
    name = getattr(key, "name_hint", None)
    if isinstance(name, str):
        return name
    raise TypeError(
        f"a module's functions are looked up by name or GlobalVar, not {type(key).__name__}"
    )


def _functions(mapping) -> dict:
    return {FunctionName(_name_of(k)): v for k, v in dict(mapping or {}).items()}


def _dict(mapping) -> dict:
    return dict(mapping or {})


@attrs.frozen(eq=False, repr=False)
class IRModule(Node):
    """Named functions; ``mod["name"]`` gets one, ``mod["name"] = f`` sets one."""

    functions: dict = child(factory=dict, converter=_functions)
    attrs: dict = plain(factory=dict, converter=_dict)
    span: object = span_field()

    @staticmethod
    def from_expr(func: BaseFunc, name: str | None = None) -> IRModule:
        """A module holding one function under ``name`` (or its ``global_symbol``)."""
        if name is None:
            name = func.attrs.get("global_symbol", "main") if hasattr(func, "attrs") else "main"
        return IRModule({name: func})

    def __getitem__(self, key) -> BaseFunc:
        name = _name_of(key)
        try:
            return self.functions[name]
        except KeyError:
            known = ", ".join(sorted(self.functions)) or "none"
            raise KeyError(f"no function {name!r} in the module (it has: {known})") from None

    def __setitem__(self, key, func: BaseFunc) -> None:
        """Add or replace the function ``key`` (a name or a GlobalVar), in place."""
        if not isinstance(func, BaseFunc):
            raise TypeError(
                f"an IRModule holds functions (PrimFunc, relax Function), not {type(func).__name__}"
            )
        table = {**self.functions, FunctionName(_name_of(key)): func}
        object.__setattr__(self, "functions", table)

    def __delitem__(self, key) -> None:
        name = _name_of(key)
        self[name]  # a clear KeyError for an unknown name  # noqa: B018
        table = {k: v for k, v in self.functions.items() if k != name}
        object.__setattr__(self, "functions", table)

    def __contains__(self, key) -> bool:
        return _name_of(key) in self.functions

    def __iter__(self):
        return iter(self.functions.items())

    def __len__(self) -> int:
        return len(self.functions)

    def update_func(self, key, func: BaseFunc) -> IRModule:
        """Replace the existing function ``key`` (a name or GlobalVar) by ``func``, in
        place as TVM does; returns the module so that calls chain."""
        name = _name_of(key)
        self[name]  # noqa: B018  (the function must exist: update, not add)
        self[name] = func
        return self

    def update(self, other: IRModule) -> IRModule:
        """Add (or replace by) every function of ``other``, in place."""
        for name, func in other.functions.items():
            self[name] = func
        return self

    def with_function(self, name: str, func: BaseFunc) -> IRModule:
        """A new module with ``func`` under ``name``."""
        return attrs.evolve(self, functions={**self.functions, name: func})

    def get_global_var(self, name: str):
        """The GlobalVar naming function ``name`` (a KeyError names the known ones)."""
        from tilelang.relax.expr import GlobalVar

        self[name]  # noqa: B018
        return GlobalVar(str(name))

    def get_global_vars(self) -> list[str]:
        """The function names, sorted (as :class:`FunctionName`: ``.name_hint`` works)."""
        return sorted(self.functions)

    def functions_items(self) -> list:
        """``(GlobalVar, function)`` pairs sorted by name (TVM's ``functions_items``)."""
        from tilelang.relax.expr import GlobalVar

        return [(GlobalVar(str(name)), self.functions[name]) for name in sorted(self.functions)]

    def get_attr(self, key: str, default=None):
        return self.attrs.get(key, default)

    def with_attr(self, key, value=None) -> IRModule:
        """A new module with the module attribute ``key`` set to ``value`` (or with every
        attribute of the dict ``key``)."""
        return attrs.evolve(self, attrs={**self.attrs, **attr_items(key, value)})

    def without_attr(self, key: str) -> IRModule:
        return attrs.evolve(self, attrs={k: v for k, v in self.attrs.items() if k != key})

    def clone(self) -> IRModule:
        """A new module with the same functions (the functions themselves are immutable)."""
        return attrs.evolve(self)


__all__ = ["IRModule", "FunctionName"]
